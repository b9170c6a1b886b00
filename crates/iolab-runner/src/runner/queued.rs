//! The timed loop of engines with I/Os in flight (io_uring, libaio, ...): keep
//! `iodepth` I/Os queued, submit every `iodepth_batch_submit`, reap at least
//! `iodepth_batch_complete_min` and at most `iodepth_batch_complete_max` at
//! a time, a full queue down to `iodepth_low`. Each I/O is stamped when queued,
//! when its batch was submitted and when it was reaped, giving fio's slat,
//! clat and lat; each submit and reap is counted by its batch size.

use super::StopFlag;
use super::ctx::{Ctx, batch_bucket, depth_bucket};
use super::iomem::IoBuf;
use super::pace::Step;
use super::worker::Batches;
use crate::engine::{Completion, Engine, Queued};
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;
use std::collections::VecDeque;

#[derive(Clone, Copy)]
struct Slot {
    io: IoUnit,
    t_queue: u64,
    t_submit: u64,
    /// The ioprio cmdprio gave it (0: the thread's own).
    prio: u16,
}

/// The I/Os of the loop: slots, which are free, queued but not submitted,
/// in flight, holding a verify read-back, and the completions of the last
/// reap.
struct Queue {
    slots: Vec<Slot>,
    free: Vec<u32>,
    unsubmitted: Vec<u32>,
    done: Vec<Completion>,
    in_flight: usize,
    /// Slots holding a backlog read-back, each with how many I/Os went
    /// out before it and are not reaped yet. The read is done at once (a
    /// `pread`), but fio queues it as an I/O: it holds its slot until the
    /// reaps have taken the completions ahead of it, in the order issued.
    held: VecDeque<(u32, usize)>,
}

impl Queue {
    /// I/Os queued, in flight or held.
    fn busy(&self) -> usize {
        self.in_flight + self.unsubmitted.len() + self.held.len()
    }
}

/// Runs until the plan ends, the deadline passes, an I/O fails or `stop` is
/// set; every I/O in flight is reaped before it returns (its buffer must
/// outlive it). Returns true if stopped. Compiled with and without the
/// pacing step (`PACE`: the clone has [`Ctx::pace`]), decided once.
pub(super) fn run<E: Engine, const PACE: bool>(
    cx: &mut Ctx,
    engine: &mut E,
    bufs: &mut [IoBuf],
    batches: Batches,
    stop: &StopFlag,
) -> bool {
    let depth = bufs.len();
    let Batches {
        submit: batch_submit,
        complete_min,
        complete_max,
        low,
    } = batches;
    let empty = IoUnit {
        file: 0,
        offset: 0,
        len: 0,
        write: false,
        trim: false,
    };
    let mut q = Queue {
        slots: vec![
            Slot {
                io: empty,
                t_queue: 0,
                t_submit: 0,
                prio: 0,
            };
            depth
        ],
        free: (0..depth as u32).rev().collect(),
        unsubmitted: Vec::with_capacity(depth),
        done: Vec::with_capacity(depth),
        in_flight: 0,
        held: VecDeque::with_capacity(depth),
    };
    let mut filling = true;
    let mut interrupted = false;
    // The plan's pass ended with I/Os in flight: the next reap takes them all.
    let mut pass_end = false;
    // At the pass's end, whether a sync was due before its drain.
    let mut drained: Option<bool> = None;
    if let Some(v) = &mut cx.verifier {
        v.at_fetch = true;
    }

    loop {
        if stop.is_set() {
            interrupted = true;
            filling = false;
        }
        while filling && !q.free.is_empty() {
            if PACE
                && cx
                    .pace
                    .as_ref()
                    .and_then(|p| p.depth())
                    .is_some_and(|d| q.busy() >= d as usize)
            {
                break;
            }
            // A due backlog's read-back takes the place of the next I/O,
            // and its slot until the next reap.
            if let Some(ok) = cx.backlog_turn() {
                cx.depth_counts[depth_bucket(q.busy() + 1)] += 1;
                let ahead = q.in_flight + q.unsubmitted.len();
                q.held
                    .push_back((q.free.pop().expect("a free slot"), ahead));
                filling &= ok;
                continue;
            }
            let mut io = IoUnit::default();
            if !cx.look.next_into(&cx.fds, &mut cx.advise, &mut io) {
                // A pass ends with its I/Os complete, as fio's do_io
                // drains its queue before the next loop: reap them all,
                // then come back.
                if q.in_flight + q.unsubmitted.len() > 0 {
                    // fio decides a sync at the fetch that found no I/O,
                    // before it drains: the drain's completions make none.
                    if drained.is_none() {
                        drained = Some(cx.syncs.pending.is_some());
                    }
                    pass_end = true;
                    break;
                }
                if cx.next_pass() {
                    drained = None;
                    continue;
                }
                if drained.take() == Some(false) {
                    cx.syncs.pending = None;
                }
                filling = false;
                break;
            }
            if cx.syncs.pending.is_some() && !cx.sync_due() || cx.past_state(&io) {
                filling = false;
                break;
            }
            if PACE {
                match pace(cx, (engine, bufs, &mut q), true, &mut io.write, stop) {
                    Step::On | Step::Reset => {}
                    step => {
                        interrupted |= step == Step::Stopped;
                        filling = false;
                        break;
                    }
                }
            }
            let tag = q.free.pop().expect("a free slot");
            cx.depth_counts[depth_bucket(q.busy() + 1)] += 1;
            let t_queue = now_ns();
            q.slots[tag as usize] = Slot {
                io,
                t_queue,
                t_submit: t_queue,
                prio: 0,
            };
            let fd = cx.fds[io.file as usize];
            let buf = bufs[tag as usize].as_mut_slice();
            if io.write {
                cx.before_write(tag, io, buf);
            }
            let mut res = engine.issue(tag, fd, io, buf);
            if res.as_ref().is_ok_and(|r| *r == Queued::Busy) && !q.unsubmitted.is_empty() {
                // fio's FIO_Q_BUSY: send what is queued, then offer it again.
                if !submit(cx, engine, &mut q) {
                    q.free.push(tag);
                    filling = false;
                    break;
                }
                let t_queue = now_ns();
                let s = &mut q.slots[tag as usize];
                (s.t_queue, s.t_submit) = (t_queue, t_queue);
                res = engine.issue(tag, fd, io, buf);
            }
            if PACE && let Some(p) = &mut cx.pace {
                p.issued(io.write, io.len);
            }
            if cx.by_prio.is_some() {
                q.slots[tag as usize].prio = engine.last_prio();
            }
            if matches!(res, Ok(Queued::Pending | Queued::Done(_))) {
                cx.count_issue(&io);
            }
            match res {
                Ok(Queued::Pending) => q.unsubmitted.push(tag),
                Ok(Queued::Busy) => {
                    q.free.push(tag);
                    cx.errors
                        .push(format!("{} took no I/O with nothing queued", cx.engine));
                    filling = false;
                    break;
                }
                Ok(Queued::Done(n)) => {
                    let now = now_ns();
                    q.free.push(tag);
                    if !complete::<PACE>(cx, (tag, &q.slots[tag as usize]), n as i64, now, buf) {
                        filling = false;
                    }
                    continue;
                }
                Err(e) => {
                    q.free.push(tag);
                    if cx.io_error(io, Err(e)) {
                        continue;
                    }
                    filling = false;
                    break;
                }
            }
            if q.unsubmitted.len() >= batch_submit && !submit(cx, engine, &mut q) {
                filling = false;
            }
            if PACE && cx.pace.as_mut().is_some_and(|p| p.think_due()) {
                let step = pace(cx, (engine, bufs, &mut q), false, &mut io.write, stop);
                interrupted |= step == Step::Stopped;
                filling &= matches!(step, Step::On | Step::Reset);
            }
        }
        if !q.unsubmitted.is_empty() && !submit(cx, engine, &mut q) {
            filling = false;
        }
        if q.in_flight == 0 {
            q.free.extend(q.held.drain(..).map(|(tag, _)| tag));
            if filling {
                continue;
            }
            return interrupted;
        }
        // Reap at least complete_min (at most complete_max), or everything
        // when draining; a full queue down to `iodepth_low`, as fio's
        // wait_for_completions.
        let full = q.free.is_empty();
        let (min, max) = if filling && !std::mem::take(&mut pass_end) {
            let min = complete_min.min(q.busy());
            (min, complete_max.max(min.max(1)))
        } else {
            (q.in_flight, q.in_flight)
        };
        loop {
            match reap::<E, PACE>(cx, engine, bufs, &mut q, (min, max)) {
                None => return interrupted,
                Some(ok) => filling &= ok,
            }
            if !(filling && full && q.busy() > low && q.in_flight > 0) {
                break;
            }
        }
        let now = now_ns();
        if now >= cx.next_event && cx.event(now) {
            filling = false;
        }
    }
}

/// Reaps at least `min` completions (at most `max`) and records them; `None` when the
/// engine failed to wait (the I/Os in flight cannot be accounted for:
/// their buffers stay alive until the engine is dropped, which waits for
/// them), else false when one failed or did not verify.
fn reap<E: Engine, const PACE: bool>(
    cx: &mut Ctx,
    engine: &mut E,
    bufs: &mut [IoBuf],
    q: &mut Queue,
    (min, max): (usize, usize),
) -> Option<bool> {
    q.done.clear();
    let (min, mut held, mut read_last) = (min.max(1), 0, false);
    loop {
        // Held read-backs whose turn has come are reaped in their place.
        while held + q.done.len() < max && q.held.front().is_some_and(|h| h.1 == 0) {
            q.free.extend(q.held.pop_front().map(|(tag, _)| tag));
            (held, read_last) = (held + 1, true);
        }
        let got = held + q.done.len();
        let flying = q.in_flight - q.done.len();
        if got >= max || got >= min || flying == 0 {
            break;
        }
        // Never past a held read: its completion comes first.
        let limit = (max - got).min(q.held.front().map_or(usize::MAX, |h| h.1));
        let before = q.done.len();
        if let Err(e) = engine.reap((min - got).min(limit), limit, &mut q.done) {
            cx.errors.push(format!(
                "waiting for completions ({}) failed: {e}",
                cx.engine
            ));
            return None;
        }
        let k = q.done.len() - before;
        read_last &= k == 0;
        for h in &mut q.held {
            h.1 -= k.min(h.1);
        }
    }
    // Nothing left in flight: the held reads are all that remain.
    if q.in_flight == q.done.len() {
        q.free.extend(q.held.drain(..).map(|(tag, _)| tag));
    }
    let now = now_ns();
    cx.complete_counts[batch_bucket(q.done.len() + held)] += 1;
    let mut ok = true;
    for c in &q.done {
        q.in_flight -= 1;
        q.free.push(c.tag);
        let (slot, buf) = (
            &q.slots[c.tag as usize],
            bufs[c.tag as usize].as_mut_slice(),
        );
        ok &= complete::<PACE>(cx, (c.tag, slot), c.result, now, buf);
    }
    if read_last {
        cx.completed_dir(true);
    }
    Some(ok)
}

/// Submits what is queued and reaps everything in flight (fio's
/// `io_u_quiesce`); false when that failed.
fn quiesce<E: Engine>(cx: &mut Ctx, engine: &mut E, bufs: &mut [IoBuf], q: &mut Queue) -> bool {
    if !q.unsubmitted.is_empty() && !submit(cx, engine, q) {
        return false;
    }
    while q.in_flight > 0 {
        let n = q.in_flight;
        if reap::<E, true>(cx, engine, bufs, q, (n, n)) != Some(true) {
            return false;
        }
    }
    true
}

/// A pacing step: `before` an I/O, the wait for the rate and the flow;
/// after it, a think time that is due. When it waits, the I/Os in flight
/// complete first, as fio quiesces before it sleeps.
#[cold]
fn pace<E: Engine>(
    cx: &mut Ctx,
    (engine, bufs, q): (&mut E, &mut [IoBuf], &mut Queue),
    before: bool,
    write: &mut bool,
    stop: &StopFlag,
) -> Step {
    let waits = !before || cx.pace.as_ref().is_some_and(|p| p.would_wait(*write));
    if waits && !quiesce(cx, engine, bufs, q) {
        return Step::End;
    }
    match &mut cx.pace {
        Some(_) if before => cx.pace_wait(write, stop),
        Some(p) => p.think(*write, stop),
        None => Step::On,
    }
}

/// Submits the queued tags and stamps their submission time.
fn submit<E: Engine>(cx: &mut Ctx, engine: &mut E, q: &mut Queue) -> bool {
    let res = engine.commit();
    let now = now_ns();
    let n = q.unsubmitted.len();
    let sent = match res {
        Ok(sent) => sent.min(n),
        Err(e) => {
            cx.errors
                .push(format!("submitting I/O ({}) failed: {e}", cx.engine));
            0
        }
    };
    cx.submit_counts[batch_bucket(sent)] += 1;
    if sent < n && cx.errors.is_empty() {
        cx.errors.push(format!(
            "the kernel took {sent} of {n} I/Os submitted ({})",
            cx.engine
        ));
    }
    for &tag in &q.unsubmitted[..sent] {
        q.slots[tag as usize].t_submit = now;
    }
    // Only what the kernel took completes; waiting for more would hang.
    q.in_flight += sent;
    q.unsubmitted.clear();
    sent == n
}

/// Records the completion of slot `tag` (its buffer `buf`); false if it
/// failed or did not verify (the run then drains).
fn complete<const PACE: bool>(
    cx: &mut Ctx,
    (tag, s): (u32, &Slot),
    result: i64,
    now: u64,
    buf: &mut [u8],
) -> bool {
    let io = s.io;
    if result != io.len as i64 {
        let r = if result < 0 {
            Err(std::io::Error::from_raw_os_error(-result as i32))
        } else {
            Ok(result as usize)
        };
        // Passed over (continue_on_error): the slot is free, the run goes on.
        return cx.io_error(io, r);
    }
    let (slat, clat, lat) = (s.t_submit - s.t_queue, now - s.t_submit, now - s.t_queue);
    let d = &mut cx.recs[io.ddir() as usize];
    d.lat.record(lat);
    d.clat.record(clat);
    d.slat.record(slat);
    d.bytes += io.len as u64;
    if let Some(own) = cx.by_prio {
        d.prios
            .record(if s.prio == 0 { own } else { s.prio }, lat, clat);
    }
    if cx.io_log.is_some() {
        cx.log_io(io, now, lat, clat, slat);
    }
    if PACE && cx.pace_done(io, lat, now) == Step::End {
        return false;
    }
    cx.syncs.completed();
    cx.completed_dir(!io.write && !io.trim);
    if io.write {
        cx.write_done(tag, io)
    } else {
        io.trim || cx.read_done(io, buf)
    }
}
