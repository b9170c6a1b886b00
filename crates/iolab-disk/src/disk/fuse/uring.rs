//! The io_uring transport (FUSE over io_uring, kernel 6.14+, modelled on
//! libfuse's lib/fuse_uring.c): one ring and one thread per possible CPU,
//! queue id = CPU (the kernel queues a request on the queue of the CPU that
//! issued it). Each of the ring's entries owns a header buffer
//! ([`proto::UringReqHeader`]) and a payload buffer; REGISTER hands them to
//! the kernel, which completes the command when it has put a request in
//! them; COMMIT_AND_FETCH sends the answer left in them and waits for the
//! next request, so one submission does both. Answers due later stay in the
//! entry until their deadline.

use super::error::FuseError;
use super::files::{Body, Files, Outcome};
use super::pace::{Deadlines, Pace, TYPICAL, Tally, Wait, spin_until};
use super::proto::{self, Wire};
use super::sys::{self, KernelBuf};
use io_uring::types::{Fd, Fixed, SubmitArgs, Timespec};
use io_uring::{IoUring, cqueue, opcode, squeue};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

/// The user data of the stop eventfd's poll.
const STOP: u64 = u64::MAX;
/// Where `payload_sz` sits in `ring_ent_in_out`.
const PAYLOAD_SZ: usize = std::mem::offset_of!(proto::UringEntInOut, payload_sz);

/// One queue's settings; [`run`] is its thread.
pub(crate) struct UringQueue {
    /// The queue id, also the CPU the thread is pinned to.
    pub qid: usize,
    /// The session's /dev/fuse descriptor (the commands go to it).
    pub session: Arc<OwnedFd>,
    /// Readable once the server stops.
    pub stop: Arc<OwnedFd>,
    /// The namespace.
    pub files: Arc<Files>,
    /// Entries (requests in flight) on this queue.
    pub depth: u32,
    /// Each entry's payload buffer, at least the kernel's largest payload.
    pub payload: usize,
    /// Pin the thread to CPU `qid`.
    pub pin: bool,
    /// After an answer with nothing held, how long to watch for the next
    /// request before sleeping.
    pub idle_spin: Duration,
    /// How late the held answers went out.
    pub tally: Arc<Tally>,
}

/// What a queue thread tells the server as it starts.
pub(crate) enum Report {
    /// The ring is built (Ok: the measured wake-up cost) or not.
    Built(usize, Result<Duration, String>),
    /// Its entries are registered with the kernel, or not.
    Registered(usize, Result<(), String>),
}

struct Ent {
    header: KernelBuf,
    payload: KernelBuf,
    /// Header and payload for REGISTER; boxed, so the address holds.
    iov: Box<[libc::iovec; 2]>,
    commit_id: u64,
    last_cmd: u32,
    alive: bool,
}

/// The payload seen by the namespace: the request's variable part first,
/// then (same buffer) the answer's body.
struct Shared<'a> {
    buf: &'a mut [u8],
    input: usize,
}

impl Body for Shared<'_> {
    fn input(&self) -> &[u8] {
        &self.buf[..self.input.min(self.buf.len())]
    }
    fn output(&mut self) -> &mut [u8] {
        self.buf
    }
}

/// A queue's ring; `ring` is declared (so dropped) before the buffers the
/// kernel knows by address.
struct Queue {
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    ents: Vec<Ent>,
    cfg: UringQueue,
    held: Deadlines<usize>,
    cqes: Vec<(u64, i32)>,
    live: usize,
    /// An answer was queued since the last wait (for the idle spin).
    answered: bool,
}

enum Flow {
    Go,
    Stop,
}

/// The SQE128 `e` with its `len` field set: UringCmd80 has no setter, and
/// REGISTER reads the number of iovecs (2) there.
fn with_len(mut e: squeue::Entry128, len: u32) -> squeue::Entry128 {
    const _: () = assert!(size_of::<squeue::Entry128>() == 128);
    let p = (&raw mut e).cast::<u8>();
    // SAFETY: Entry128 is repr(C): a 64-byte io_uring_sqe, whose u32 `len`
    // sits at byte 24, then 64 more bytes; the write stays inside `e`.
    unsafe { p.add(24).cast::<u32>().write_unaligned(len) };
    e
}

/// The thread of one queue: builds the ring, reports, waits for the
/// server's word (FUSE_INIT answered), registers, reports, serves.
pub(crate) fn run(
    cfg: UringQueue,
    report: Sender<Report>,
    go: Receiver<bool>,
) -> Result<(), FuseError> {
    let qid = cfg.qid;
    if cfg.pin {
        let _ = sys::pin_to_cpu(qid);
    }
    let _ = nix::sys::prctl::set_timerslack(1);
    let mut q = match Queue::new(cfg) {
        Ok(q) => q,
        Err(e) => {
            let _ = report.send(Report::Built(qid, Err(e)));
            return Ok(());
        }
    };
    let pace = q.measure();
    let _ = report.send(Report::Built(qid, Ok(pace.wake(TYPICAL))));
    if !go.recv().unwrap_or(false) {
        return Ok(());
    }
    let registered = q.register();
    let failed = registered.is_err();
    let _ = report.send(Report::Registered(qid, registered));
    // The server waits until every thread reported or let go of its sender.
    drop(report);
    if failed {
        return Ok(());
    }
    q.serve(pace)
}

impl Queue {
    fn new(cfg: UringQueue) -> Result<Queue, String> {
        let depth = cfg.depth.max(1);
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
            .setup_cqsize(2 * (depth + 1))
            .build(depth + 1)
            .map_err(|e| format!("io_uring_setup: {e}"))?;
        ring.submitter()
            .register_files(&[cfg.session.as_raw_fd()])
            .map_err(|e| format!("io_uring register_files: {e}"))?;
        let mut ents = Vec::with_capacity(depth as usize);
        for _ in 0..depth {
            let alloc = |n| KernelBuf::new(n).map_err(|e| format!("mmap: {e}"));
            let header = alloc(size_of::<proto::UringReqHeader>())?;
            let payload = alloc(cfg.payload)?;
            let iov = Box::new([
                libc::iovec {
                    iov_base: header.addr().cast(),
                    iov_len: header.len(),
                },
                libc::iovec {
                    iov_base: payload.addr().cast(),
                    iov_len: payload.len(),
                },
            ]);
            ents.push(Ent {
                header,
                payload,
                iov,
                commit_id: 0,
                last_cmd: proto::URING_CMD_REGISTER,
                alive: true,
            });
        }
        Ok(Queue {
            ring,
            live: ents.len(),
            ents,
            cfg,
            held: Deadlines::new(),
            cqes: Vec::with_capacity(2 * depth as usize),
            answered: false,
        })
    }

    /// How late this ring's timed wait wakes (nothing is in flight yet).
    fn measure(&mut self) -> Pace {
        let sub = self.ring.submitter();
        let sleep = |d| {
            let ts = Timespec::from(d);
            let _ = sub.submit_with_args(1, &SubmitArgs::new().timespec(&ts));
        };
        Pace::measure(sleep, self.cfg.idle_spin)
    }

    /// Queues entry `i`'s last command again (REGISTER or
    /// COMMIT_AND_FETCH).
    fn push(&mut self, i: usize) {
        let e = &self.ents[i];
        let req = proto::UringCmdReq {
            commit_id: e.commit_id,
            qid: self.cfg.qid as u16,
            ..Default::default()
        };
        let cmd = opcode::UringCmd80::new(Fixed(0), e.last_cmd).cmd(req.area());
        let sqe = match e.last_cmd {
            proto::URING_CMD_REGISTER => {
                let built = cmd.addr(Some(e.iov.as_ptr() as u64)).build();
                with_len(built, 2)
            }
            _ => {
                self.answered = true;
                cmd.build()
            }
        };
        self.push_sqe(sqe.user_data(i as u64));
    }

    fn push_sqe(&mut self, sqe: squeue::Entry128) {
        loop {
            // SAFETY: what an SQE points to outlives its command: the
            // entries' buffers and boxed iovecs live as long as the ring
            // (dropped first), the stop eventfd as long as the server.
            if unsafe { self.ring.submission().push(&sqe) }.is_ok() {
                return;
            }
            // Cannot happen (one SQE per entry at most, plus the stop poll),
            // but a full queue would only need a submit.
            let _ = self.ring.submit();
        }
    }

    /// Registers every entry and arms the stop poll; Err if the kernel
    /// refuses (the errno says why).
    fn register(&mut self) -> Result<(), String> {
        for i in 0..self.ents.len() {
            self.push(i);
        }
        let poll = opcode::PollAdd::new(Fd(self.cfg.stop.as_raw_fd()), libc::POLLIN as u32);
        self.push_sqe(poll.build().user_data(STOP).into());
        let want = self.ents.len() + 1;
        let n = self
            .ring
            .submit()
            .map_err(|e| format!("io_uring_enter: {e}"))?;
        if n != want {
            return Err(format!("io_uring_enter took {n} of {want} entries"));
        }
        // A refused REGISTER completes at once with its errno; an accepted
        // one stays in flight until a request comes (kept for `serve`).
        let done: Vec<(u64, i32)> = (self.ring.completion())
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (ud, res) in &done {
            if *res < 0 && *ud != STOP {
                let e = std::io::Error::from_raw_os_error(-res);
                return Err(format!("FUSE_IO_URING_CMD_REGISTER: {e}"));
            }
        }
        self.cqes = done;
        Ok(())
    }

    fn fail(&self, what: String) -> FuseError {
        FuseError::Queue {
            queue: self.cfg.qid,
            what,
        }
    }

    fn serve(&mut self, mut pace: Pace) -> Result<(), FuseError> {
        loop {
            if let Flow::Stop = self.reap()? {
                return Ok(());
            }
            self.push_due();
            let answered = std::mem::take(&mut self.answered);
            let entered = match pace.plan(self.held.next(), Instant::now()) {
                Wait::Block if answered && !pace.idle_spin.is_zero() => {
                    let until = Instant::now() + pace.idle_spin;
                    self.ring.submit().map(|_| self.watch(until))
                }
                Wait::Block => self.ring.submit_and_wait(1),
                Wait::Sleep(d) => {
                    let ts = Timespec::from(d);
                    let args = SubmitArgs::new().timespec(&ts);
                    let t = Instant::now();
                    let r = self.ring.submitter().submit_with_args(1, &args);
                    pace.learn(d, t.elapsed());
                    r
                }
                Wait::Spin(at) => self.ring.submit().map(|_| self.watch(at)),
            };
            match entered {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                Err(e) => return Err(self.fail(format!("io_uring_enter: {e}"))),
            }
        }
    }

    /// Queues the answers due; true if there were some.
    fn push_due(&mut self) -> bool {
        let now = Instant::now();
        let mut any = false;
        while let Some((i, late)) = self.held.pop_due(now) {
            self.cfg.tally.record(late);
            self.push(i);
            any = true;
        }
        any
    }

    /// Spins until `until` or a completion; completions arrive without a
    /// system call (the kernel's task work runs on the way back to user
    /// space after its notification).
    fn watch(&mut self, until: Instant) -> usize {
        spin_until(until, || !self.ring.completion().is_empty());
        0
    }

    /// Handles every completion.
    fn reap(&mut self) -> Result<Flow, FuseError> {
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
        let mut flow = Flow::Go;
        for &(ud, res) in &cqes {
            if ud == STOP {
                flow = Flow::Stop;
                continue;
            }
            let i = ud as usize;
            if i >= self.ents.len() {
                continue;
            }
            match -res {
                ok if ok <= 0 => {
                    self.handle(i);
                    // Within a long batch, answers falling due go out
                    // between requests, not after the batch.
                    if self.push_due() {
                        let _ = self.ring.submit();
                    }
                }
                libc::EAGAIN | libc::EINTR => self.push(i),
                // The connection ended (unmount, abort) or the ring closes.
                libc::ENOTCONN | libc::ECONNABORTED | libc::ENODEV | libc::ECANCELED => {
                    flow = Flow::Stop;
                }
                errno => {
                    // ENOENT: the kernel no longer knew the request
                    // committed; the entry is out of the kernel's hands.
                    self.ents[i].alive = false;
                    self.live -= 1;
                    if self.live == 0 {
                        let e = std::io::Error::from_raw_os_error(errno);
                        return Err(self.fail(format!("every entry failed, the last: {e}")));
                    }
                }
            }
        }
        cqes.clear();
        self.cqes = cqes;
        Ok(flow)
    }

    /// Answers the request now in entry `i`, now or at its deadline.
    fn handle(&mut self, i: usize) {
        let arrived = Instant::now();
        let e = &mut self.ents[i];
        if !e.alive {
            return;
        }
        // SAFETY: entry i's completion was just reaped: the kernel put a
        // request in its buffers and leaves them alone until the entry is
        // submitted again, after these borrows end.
        let (head, payload) = unsafe { (e.header.bytes(), e.payload.bytes()) };
        let (in_out, rest) = head.split_at_mut(128);
        let (op_in, ent) = rest.split_at_mut(128);
        let h = proto::InHeader::read_prefix(in_out);
        let ring = proto::UringEntInOut::read_prefix(ent);
        e.commit_id = ring.commit_id;
        e.last_cmd = proto::URING_CMD_COMMIT_AND_FETCH;
        let mut body = Shared {
            buf: payload,
            input: ring.payload_sz as usize,
        };
        let outcome = self.cfg.files.answer(&h, op_in, &mut body);
        // Nothing comes through the ring without an answer; a silent one
        // (never seen) still commits, to get the entry back.
        let (errno, len, delay_ns) = match outcome {
            Outcome::Reply {
                errno,
                len,
                delay_ns,
            } => (errno, len, delay_ns),
            Outcome::Silent => (0, 0, 0),
        };
        let body_len = if errno == 0 { len } else { 0 };
        super::device::header(in_out, h.unique, errno, body_len);
        ent[PAYLOAD_SZ..PAYLOAD_SZ + 4].copy_from_slice(&(body_len as u32).to_ne_bytes());
        match delay_ns {
            0 => self.push(i),
            d => self.held.push(arrived + Duration::from_nanos(d), i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte `with_len` writes is where Read's builder puts its length.
    #[test]
    fn len_is_where_read_puts_it() {
        let read: squeue::Entry128 = opcode::Read::new(Fd(3), std::ptr::null_mut(), 0x0102_0304)
            .build()
            .into();
        let cmd = with_len(opcode::UringCmd80::new(Fixed(0), 1).build(), 0x0102_0304);
        let len_of = |e: &squeue::Entry128| {
            // SAFETY: reads 4 bytes inside the 128-byte entry.
            unsafe {
                (e as *const squeue::Entry128)
                    .cast::<u8>()
                    .add(24)
                    .cast::<u32>()
                    .read_unaligned()
            }
        };
        assert_eq!(len_of(&read), 0x0102_0304);
        assert_eq!(len_of(&cmd), 0x0102_0304);
    }
}
