//! The timed loop of engines with I/Os in flight (io_uring, libaio, ...): keep
//! `iodepth` I/Os queued, submit every `iodepth_batch_submit`, reap at least
//! `iodepth_batch_complete_min` at a time. Each I/O is stamped when queued,
//! when its batch was submitted and when it was reaped, giving fio's slat,
//! clat and lat; each submit and reap is counted by its batch size.

use super::ctx::{Ctx, batch_bucket, depth_bucket};
use super::iomem::IoBuf;
use super::stop::StopFlag;
use crate::engine::{Completion, Engine, Queued};
use crate::metrics::clock::now_ns;
use crate::plan::IoUnit;

#[derive(Clone, Copy)]
struct Slot {
    io: IoUnit,
    t_queue: u64,
    t_submit: u64,
}

/// Runs until the plan ends, the deadline passes, an I/O fails or `stop` is
/// set; every I/O in flight is reaped before it returns (its buffer must
/// outlive it). Returns true if stopped.
pub(super) fn run<E: Engine>(
    cx: &mut Ctx,
    engine: &mut E,
    bufs: &mut [IoBuf],
    (batch_submit, complete_min): (usize, usize),
    stop: &StopFlag,
) -> bool {
    let depth = bufs.len();
    let empty = IoUnit {
        file: 0,
        offset: 0,
        len: 0,
        write: false,
        trim: false,
    };
    let mut slots = vec![
        Slot {
            io: empty,
            t_queue: 0,
            t_submit: 0,
        };
        depth
    ];
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut unsubmitted: Vec<u32> = Vec::with_capacity(depth);
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    let mut in_flight = 0usize;
    let mut filling = true;
    let mut interrupted = false;

    loop {
        if stop.is_set() {
            interrupted = true;
            filling = false;
        }
        while filling && !free.is_empty() {
            let mut io = IoUnit::default();
            if !cx.look.next_into(&cx.fds, &mut cx.advise, &mut io) {
                // A pass read back is complete first: reap, then come back.
                if in_flight + unsubmitted.len() > 0 && cx.reads_back() {
                    break;
                }
                if cx.next_pass() {
                    continue;
                }
                filling = false;
                break;
            }
            if cx.sync_pending.is_some() && !cx.sync_due() || cx.past_state(&io) {
                filling = false;
                break;
            }
            let tag = free.pop().expect("a free slot");
            cx.depth_counts[depth_bucket(in_flight + unsubmitted.len() + 1)] += 1;
            let t_queue = now_ns();
            slots[tag as usize] = Slot {
                io,
                t_queue,
                t_submit: t_queue,
            };
            let fd = cx.fds[io.file as usize];
            let buf = bufs[tag as usize].as_mut_slice();
            if io.write {
                cx.before_write(tag, io, buf);
            }
            let mut res = engine.issue(tag, fd, io, buf);
            if res.as_ref().is_ok_and(|q| *q == Queued::Busy) && !unsubmitted.is_empty() {
                // fio's FIO_Q_BUSY: send what is queued, then offer it again.
                if !submit(cx, engine, &mut unsubmitted, &mut slots, &mut in_flight) {
                    free.push(tag);
                    filling = false;
                    break;
                }
                let t_queue = now_ns();
                (slots[tag as usize].t_queue, slots[tag as usize].t_submit) = (t_queue, t_queue);
                res = engine.issue(tag, fd, io, buf);
            }
            match res {
                Ok(Queued::Pending) => unsubmitted.push(tag),
                Ok(Queued::Busy) => {
                    free.push(tag);
                    cx.errors
                        .push(format!("{} took no I/O with nothing queued", cx.engine));
                    filling = false;
                    break;
                }
                Ok(Queued::Done(n)) => {
                    let now = now_ns();
                    free.push(tag);
                    if !complete(cx, (tag, &slots[tag as usize]), n as i64, now, buf) {
                        filling = false;
                    }
                    continue;
                }
                Err(e) => {
                    free.push(tag);
                    cx.io_error(io, Err(e));
                    filling = false;
                    break;
                }
            }
            if unsubmitted.len() >= batch_submit
                && !submit(cx, engine, &mut unsubmitted, &mut slots, &mut in_flight)
            {
                filling = false;
            }
        }
        if !unsubmitted.is_empty()
            && !submit(cx, engine, &mut unsubmitted, &mut slots, &mut in_flight)
        {
            filling = false;
        }
        if in_flight == 0 {
            if filling {
                continue;
            }
            return interrupted;
        }
        // Reap at least complete_min, or everything when draining.
        let min = if filling {
            complete_min.min(in_flight)
        } else {
            in_flight
        };
        done.clear();
        if let Err(e) = engine.reap(min.max(1), depth, &mut done) {
            cx.errors.push(format!(
                "waiting for completions ({}) failed: {e}",
                cx.engine
            ));
            // The I/Os in flight cannot be accounted for; their buffers stay
            // alive until the engine is dropped, which waits for them.
            return interrupted;
        }
        let now = now_ns();
        cx.complete_counts[batch_bucket(done.len())] += 1;
        for c in &done {
            in_flight -= 1;
            free.push(c.tag);
            let (slot, buf) = (&slots[c.tag as usize], bufs[c.tag as usize].as_mut_slice());
            if !complete(cx, (c.tag, slot), c.result, now, buf) {
                filling = false;
            }
        }
        if now >= cx.next_event && cx.event(now) {
            filling = false;
        }
    }
}

/// Submits the queued tags and stamps their submission time.
fn submit<E: Engine>(
    cx: &mut Ctx,
    engine: &mut E,
    unsubmitted: &mut Vec<u32>,
    slots: &mut [Slot],
    in_flight: &mut usize,
) -> bool {
    let res = engine.commit();
    let now = now_ns();
    let n = unsubmitted.len();
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
    for &tag in &unsubmitted[..sent] {
        slots[tag as usize].t_submit = now;
    }
    // Only what the kernel took completes; waiting for more would hang.
    *in_flight += sent;
    unsubmitted.clear();
    sent == n
}

/// Records the completion of slot `tag` (its buffer `buf`); false if it
/// failed or did not verify (the run then drains).
fn complete(cx: &mut Ctx, (tag, s): (u32, &Slot), result: i64, now: u64, buf: &mut [u8]) -> bool {
    let io = s.io;
    if result != io.len as i64 {
        let r = if result < 0 {
            Err(std::io::Error::from_raw_os_error(-result as i32))
        } else {
            Ok(result as usize)
        };
        cx.io_error(io, r);
        return false;
    }
    let (slat, clat, lat) = (s.t_submit - s.t_queue, now - s.t_submit, now - s.t_queue);
    let d = &mut cx.recs[io.ddir() as usize];
    d.lat.record(lat);
    d.clat.record(clat);
    d.slat.record(slat);
    d.bytes += io.len as u64;
    if cx.io_log.is_some() {
        cx.log_io(io, now, lat, clat, slat);
    }
    if io.write {
        cx.after_write(io.file) && cx.write_done(tag, io)
    } else {
        io.trim || cx.read_done(io, buf)
    }
}
