//! The one-at-a-time loop of a synchronous engine's clone: each I/O timed
//! and recorded before the next is issued ([`super::queued`] is the loop of
//! engines with I/Os in flight). Nothing here prints or allocates per I/O.

use super::StopFlag;
use super::ctx::Ctx;
use super::pace::Step;
use crate::engine::{Engine, Queued};
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;

/// How often the synchronous loop looks at the stop flag.
const STOP_POLL_NS: u64 = 5_000_000;

/// One I/O at a time: time it, record it. Returns true if stopped.
pub(super) fn sync_loop<E: Engine>(
    cx: &mut Ctx,
    engine: &mut E,
    buf: &mut [u8],
    stop: &StopFlag,
    timed: bool,
) -> bool {
    match (cx.io_log.is_some(), cx.pace.is_some(), timed) {
        (false, false, true) => sync_loop_with::<E, false, false, true>(cx, engine, buf, stop),
        (false, false, false) => sync_loop_with::<E, false, false, false>(cx, engine, buf, stop),
        (true, false, _) => sync_loop_with::<E, true, false, true>(cx, engine, buf, stop),
        (false, true, _) => sync_loop_with::<E, false, true, true>(cx, engine, buf, stop),
        (true, true, _) => sync_loop_with::<E, true, true, true>(cx, engine, buf, stop),
    }
}

/// How many I/Os an untimed loop (`gtod_reduce`) does between clock reads.
pub(super) const UNTIMED_CLOCK_EVERY: u32 = 64;

/// The loop, compiled with and without the per-I/O log and the pacing
/// step so the common case pays nothing for them. The stop flag is polled
/// with the interval events (at least every [`STOP_POLL_NS`]), not per I/O.
fn sync_loop_with<E: Engine, const LOG: bool, const PACE: bool, const TIMED: bool>(
    cx: &mut Ctx,
    engine: &mut E,
    buf: &mut [u8],
    stop: &StopFlag,
) -> bool {
    let mut poll = now_ns() + STOP_POLL_NS;
    let mut next = cx.next_event.min(poll);
    let mut io = IoUnit::default();
    // Untimed: the clock as last read, and I/Os until the next reading.
    let (mut clock, mut until_read) = (now_ns(), UNTIMED_CLOCK_EVERY);
    loop {
        if !cx.look.next_into(&cx.fds, &mut cx.advise, &mut io) {
            if cx.next_pass() {
                continue;
            }
            return false;
        }
        if cx.past_state(&io) {
            return false;
        }
        if cx.syncs.pending.is_some() && !cx.sync_due() {
            return false;
        }
        if PACE {
            match cx.pace_wait(&mut io.write, stop) {
                Step::On | Step::Reset => {}
                Step::Stopped => return true,
                Step::End => return false,
            }
        }
        let fd = cx.fds[io.file as usize];
        if io.write {
            cx.before_write(0, io, buf);
        }
        let t0 = if TIMED { now_ns() } else { clock };
        let res = engine.issue(0, fd, io, buf);
        let t1 = if TIMED {
            now_ns()
        } else {
            until_read -= 1;
            if until_read == 0 {
                (clock, until_read) = (now_ns(), UNTIMED_CLOCK_EVERY);
            }
            clock
        };
        let mut counted = io.len as u64;
        match res {
            Ok(Queued::Done(n)) if n == io.len as usize => {}
            Ok(Queued::Done(n)) if cx.fill_device && io.write && n > 0 => {
                match write_rest(cx, engine, (fd, io, buf), n, t1 - t0) {
                    Some(bytes) => counted = bytes,
                    None => return false,
                }
            }
            Err(e) if cx.fill_device && io.write && crate::error::is_no_space(&e) => {
                // fio counts the failed write as an I/O, then terminates.
                cx.recs[1].lat.record(t1 - t0);
                cx.filled = true;
                return false;
            }
            Ok(Queued::Done(n)) => {
                cx.io_error(io, Ok(n));
                return false;
            }
            Ok(Queued::Pending | Queued::Busy) => {
                unreachable!("a synchronous engine queued an I/O")
            }
            Err(e) => match cx.io_error(io, Err(e)) {
                true => continue,
                false => return false,
            },
        }
        let d = &mut cx.recs[io.ddir() as usize];
        d.lat.record(if TIMED { t1 - t0 } else { 0 });
        // fio's FIO_NOIO engines (exec, cpuio): an I/O of no bytes.
        d.bytes += if E::NO_IO { 0 } else { counted };
        let checked = if io.write {
            cx.after_write(io.file) && cx.write_done(0, io)
        } else {
            cx.after_other();
            io.trim || cx.read_done(io, buf)
        };
        if !checked {
            return false;
        }
        if LOG {
            cx.log_io(io, t1, t1 - t0, t1 - t0, 0);
        }
        if PACE {
            if let (Some(us), Some(p)) = (engine.think_us(), cx.pace.as_mut()) {
                p.set_think_us(us);
            }
            match pace_after(cx, io, t1 - t0, t1, stop) {
                Step::On | Step::Reset => {}
                Step::Stopped => return true,
                Step::End => return false,
            }
            // A think time may have passed the deadline or an interval.
            let now = now_ns();
            if now >= cx.next_event && cx.event(now) {
                return false;
            }
            next = cx.next_event.min(poll);
        }
        if t1 >= next {
            if stop.is_set() {
                return true;
            }
            if t1 >= cx.next_event && cx.event(t1) {
                return false;
            }
            poll = t1 + STOP_POLL_NS;
            next = cx.next_event.min(poll);
        }
    }
}

/// The rest of a short write of `fill_device` (`n` of its bytes written in
/// `lat` ns), issued again as fio's `io_queue_event` does until it is all
/// written; each short part counts as an I/O (fio's `total_io_u`) whose
/// bytes fio does not count. Returns the bytes of the last part, which
/// completes the write; `None` when the clone ends (ENOSPC: the file
/// system is full, without an error; another error: with it).
fn write_rest<E: Engine>(
    cx: &mut Ctx,
    engine: &mut E,
    (fd, io, buf): (std::os::fd::RawFd, IoUnit, &mut [u8]),
    mut n: usize,
    mut lat: u64,
) -> Option<u64> {
    let mut rest = io;
    let mut at = 0;
    loop {
        cx.recs[1].lat.record(lat);
        at += n;
        rest.offset += n as u64;
        rest.len -= n as u32;
        let t0 = now_ns();
        let res = engine.issue(0, fd, rest, &mut buf[at..]);
        lat = now_ns() - t0;
        match res {
            Ok(Queued::Done(m)) if m == rest.len as usize => return Some(m as u64),
            Ok(Queued::Done(m)) if m > 0 => n = m,
            Err(e) if crate::error::is_no_space(&e) => {
                cx.recs[1].lat.record(lat);
                cx.filled = true;
                return None;
            }
            other => {
                cx.io_error(
                    rest,
                    other.map(|q| match q {
                        Queued::Done(m) => m,
                        _ => 0,
                    }),
                );
                return None;
            }
        }
    }
}

/// The pacing after one synchronous I/O: rate bookkeeping, checks, and a
/// think time when one is due.
fn pace_after(cx: &mut Ctx, io: IoUnit, lat: u64, now: u64, stop: &StopFlag) -> Step {
    if let Some(p) = &mut cx.pace {
        p.issued(io.write, io.len);
    }
    let step = cx.pace_done(io, lat, now);
    if step != Step::On {
        return step;
    }
    match &mut cx.pace {
        Some(p) => {
            if p.think_due() {
                p.think(io.write, stop)
            } else {
                Step::On
            }
        }
        None => Step::On,
    }
}
