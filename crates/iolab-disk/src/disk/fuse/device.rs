//! The classic transport: a queue thread reads requests with read(2) from
//! its own clone of the /dev/fuse descriptor (non-blocking) and writes the
//! answers with write(2) on the same descriptor, each at its deadline.
//! With io_uring one such thread still takes what the kernel keeps sending
//! through /dev/fuse (forgets, interrupts).

use super::error::FuseError;
use super::files::{self, Body, Files, Outcome};
use super::pace::{Deadlines, Pace, TYPICAL, Tally, Wait, spin_until};
use super::proto::{self, Wire};
use super::sys;
use nix::errno::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

const OUT: usize = size_of::<proto::OutHeader>();

/// One queue thread's state; [`DeviceQueue::run`] is the thread.
pub(crate) struct DeviceQueue {
    /// The queue's number (for errors).
    pub qid: usize,
    /// Its descriptor: a non-blocking clone of the session's.
    pub fd: OwnedFd,
    /// Readable once the server stops.
    pub stop: Arc<OwnedFd>,
    /// The namespace.
    pub files: Arc<Files>,
    /// The largest WRITE the kernel sends.
    pub max_write: u32,
    /// After an answer with nothing held, how long to watch for the next
    /// request before sleeping.
    pub idle_spin: Duration,
    /// Where the measured wake-up cost goes.
    pub wake: mpsc::Sender<Duration>,
    /// How late the held answers went out.
    pub tally: Arc<Tally>,
}

/// An answer held until its deadline: out header and body.
struct Held {
    buf: Vec<u8>,
    len: usize,
}

enum Got {
    Request(usize),
    Nothing,
    Gone,
}

/// A request read from /dev/fuse: the variable part after the opcode's
/// header, and room for the answer after the out header.
struct Classic<'a> {
    input: &'a [u8],
    out: &'a mut [u8],
}

impl Body for Classic<'_> {
    fn input(&self) -> &[u8] {
        self.input
    }
    fn output(&mut self) -> &mut [u8] {
        self.out
    }
}

/// The first `need` bytes of a buffer from `pool`.
fn take(pool: &mut Vec<Vec<u8>>, need: usize) -> Vec<u8> {
    let mut v = pool.pop().unwrap_or_default();
    if v.len() < need {
        v.resize(need, 0);
    }
    v
}

/// Writes the out header for `outcome`'s answer to `unique` at the start of
/// `buf`; returns the answer's length.
pub(crate) fn header(buf: &mut [u8], unique: u64, errno: i32, len: usize) -> usize {
    let total = OUT + if errno == 0 { len } else { 0 };
    let h = proto::OutHeader {
        len: total as u32,
        error: -errno,
        unique,
    };
    h.write_to(buf);
    total
}

impl DeviceQueue {
    /// Serves until the connection ends or the server stops.
    pub(crate) fn run(self) -> Result<(), FuseError> {
        let _ = nix::sys::prctl::set_timerslack(1);
        let stop = self.stop.clone();
        // Measured on the stop eventfd alone: no request cuts a sleep short.
        let mut pace = Pace::measure(
            |d| {
                let _ = sys::wait_readable([stop.as_fd()], Some(d));
            },
            self.idle_spin,
        );
        let _ = self.wake.send(pace.wake(TYPICAL));
        let size = (self.max_write as usize + 4096).max(proto::MIN_READ_BUFFER);
        let mut req = vec![0u8; size];
        let mut pool: Vec<Vec<u8>> = Vec::new();
        let mut held: Deadlines<Held> = Deadlines::new();
        // An answer went out since the last wait (for the idle spin).
        let mut answered = false;
        loop {
            let now = Instant::now();
            while let Some((h, late)) = held.pop_due(now) {
                self.tally.record(late);
                if !self.send(&h.buf[..h.len])? {
                    return Ok(());
                }
                pool.push(h.buf);
                answered = true;
            }
            match self.read(&mut req)? {
                Got::Request(n) => {
                    answered |= self.handle(&req[..n], &mut pool, &mut held)?;
                    continue;
                }
                Got::Gone => return Ok(()),
                Got::Nothing => {}
            }
            let mut got = Got::Nothing;
            let mut watch = |until: Instant, req: &mut Vec<u8>| -> Result<(), FuseError> {
                let mut err = None;
                spin_until(until, || match self.read(req) {
                    Ok(Got::Nothing) => false,
                    Ok(g) => {
                        got = g;
                        true
                    }
                    Err(e) => {
                        err = Some(e);
                        true
                    }
                });
                err.map_or(Ok(()), Err)
            };
            match pace.plan(held.next(), Instant::now()) {
                Wait::Block if answered && !pace.idle_spin.is_zero() => {
                    watch(Instant::now() + pace.idle_spin, &mut req)?;
                }
                Wait::Spin(at) => watch(at, &mut req)?,
                Wait::Block => {
                    if self.sleep(None)? {
                        return Ok(());
                    }
                }
                Wait::Sleep(d) => {
                    let t = Instant::now();
                    if self.sleep(Some(d))? {
                        return Ok(());
                    }
                    pace.learn(d, t.elapsed());
                }
            }
            answered = false;
            match got {
                Got::Request(n) => answered = self.handle(&req[..n], &mut pool, &mut held)?,
                Got::Gone => return Ok(()),
                Got::Nothing => {}
            }
        }
    }

    /// Sleeps until a request may be there, the timeout, or the stop;
    /// true on the stop.
    fn sleep(&self, timeout: Option<Duration>) -> Result<bool, FuseError> {
        let [_, stop] = sys::wait_readable([self.fd.as_fd(), self.stop.as_fd()], timeout)
            .map_err(|e| self.fail(format!("ppoll: {e}")))?;
        Ok(stop)
    }

    fn fail(&self, what: String) -> FuseError {
        FuseError::Queue {
            queue: self.qid,
            what,
        }
    }

    /// One request, if one is waiting.
    fn read(&self, buf: &mut [u8]) -> Result<Got, FuseError> {
        match nix::unistd::read(&self.fd, buf) {
            Ok(n) => Ok(Got::Request(n)),
            // EAGAIN: nothing; ENOENT: a request interrupted while read.
            Err(Errno::EAGAIN | Errno::EINTR | Errno::ENOENT) => Ok(Got::Nothing),
            Err(Errno::ENODEV | Errno::ENOTCONN | Errno::ECONNABORTED) => Ok(Got::Gone),
            Err(e) => Err(self.fail(format!("read /dev/fuse: {e}"))),
        }
    }

    /// Sends one answer; false when the connection is gone.
    fn send(&self, answer: &[u8]) -> Result<bool, FuseError> {
        match nix::unistd::write(&self.fd, answer) {
            // ENOENT: the request was interrupted and is gone.
            Ok(_) | Err(Errno::ENOENT | Errno::EINTR) => Ok(true),
            Err(Errno::ENODEV | Errno::ENOTCONN | Errno::ECONNABORTED) => Ok(false),
            Err(e) => Err(self.fail(format!("write /dev/fuse: {e}"))),
        }
    }

    /// Dispatches one request and sends its answer (true) or holds it.
    fn handle(
        &self,
        bytes: &[u8],
        pool: &mut Vec<Vec<u8>>,
        held: &mut Deadlines<Held>,
    ) -> Result<bool, FuseError> {
        let arrived = Instant::now();
        let Some(h) = proto::InHeader::read(bytes) else {
            return Ok(false);
        };
        let end = (h.len as usize).clamp(size_of::<proto::InHeader>(), bytes.len());
        let args = &bytes[size_of::<proto::InHeader>()..end];
        let (arg, input) = args.split_at(files::op_header_len(h.opcode, args.len()));
        let room = files::room(h.opcode, arg);
        let mut small = [0u8; OUT + files::SMALL];
        let mut big = None;
        let buf: &mut [u8] = match room <= files::SMALL {
            true => &mut small,
            false => big.insert(take(pool, OUT + room)),
        };
        let (head, out) = buf.split_at_mut(OUT);
        let mut body = Classic { input, out };
        let outcome = self.files.answer(&h, arg, &mut body);
        let Outcome::Reply {
            errno,
            len,
            delay_ns,
        } = outcome
        else {
            pool.extend(big);
            return Ok(false);
        };
        let total = header(head, h.unique, errno, len);
        if delay_ns == 0 {
            let sent = self.send(&buf[..total]);
            pool.extend(big);
            return sent.map(|_| true);
        }
        let buf = match big {
            Some(b) => b,
            None => {
                let mut b = take(pool, total);
                b[..total].copy_from_slice(&small[..total]);
                b
            }
        };
        let at = arrived + Duration::from_nanos(delay_ns);
        held.push(at, Held { buf, len: total });
        Ok(false)
    }
}
