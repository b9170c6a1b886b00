//! iolab's own FUSE server for one file, a disk image, without libfuse or
//! `fuser`: [`serve`] mounts a directory holding the image under one name
//! and answers the kernel through FUSE over io_uring (`uring`: one ring
//! and pinned thread per possible CPU, kernel 6.14+ with the fuse module's
//! `enable_uring` on) or else through read(2)/write(2) on /dev/fuse
//! (`device`: one thread per queue, each on its own clone of the
//! descriptor). [`Server::transport`] says which runs and why.
//!
//! The data path: READ, WRITE, FALLOCATE and FSYNC go to an
//! [`ImageHandler`], which does the work at once, in the transport's own
//! buffers, and says how long the answer waits ([`Answer::delay_ns`]).
//! Each queue thread keeps its held answers in its own deadline heap
//! (`pace`): no lock on the way, and 32 requests of 50 us in flight end
//! together. A thread sleeps in the kernel (until a request or its next
//! deadline less the expected oversleep) and spins the rest of the way;
//! the oversleep is measured per sleep length when the thread starts and
//! learned from every sleep after. [`Server::punctuality`] tells how close
//! to their deadlines the answers went out.
//!
//! [`proto`] is the kernel ABI; `files` the one-file namespace, `mount`
//! the mount and unmount, `server` the start and the stop.

mod device;
pub mod error;
mod files;
mod mount;
mod pace;
pub mod proto;
mod server;
mod sys;
mod uring;

pub use error::FuseError;
pub use mount::SOURCE;
pub use server::{Server, serve};

use std::time::Duration;

/// What the image does with the I/O the kernel sends. Queue threads call
/// it concurrently and at once; the delay in the [`Answer`] only holds the
/// answer back.
pub trait ImageHandler: Send + Sync + 'static {
    /// The image's size in bytes (the file's size; asked often).
    fn size(&self) -> u64;

    /// A new handle for an open of the file; later calls get it back.
    fn open(&self) -> u64;

    /// The file's last close with handle `fh` (nothing to answer).
    fn release(&self, _fh: u64) {}

    /// Reads at `offset` into `buf` (the transport's buffer, as long as the
    /// request; it may reach past [`ImageHandler::size`]): Ok(bytes filled,
    /// at most `buf.len()`, fewer at the end of the image).
    fn read(&self, fh: u64, offset: u64, buf: &mut [u8]) -> Answer;

    /// Writes `data` (the transport's buffer) at `offset`: Ok(bytes
    /// written).
    fn write(&self, fh: u64, offset: u64, data: &[u8]) -> Answer;

    /// fallocate(2) with `mode` (FALLOC_FL_* bits) over `len` bytes at
    /// `offset`: a punched hole reads back as zeros. The count is ignored.
    fn fallocate(&self, fh: u64, offset: u64, len: u64, mode: u32) -> Answer;

    /// fsync(2) or fdatasync(2). The count is ignored.
    fn fsync(&self, fh: u64) -> Answer;
}

/// A handler's answer: its result, sent `delay_ns` after the request came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// How long after the request the answer goes out (0: at once).
    pub delay_ns: u64,
    /// Ok(bytes done) or Err(errno), e.g. `Err(libc::EIO)`.
    pub result: Result<u32, i32>,
}

impl Answer {
    /// Success with `n` bytes, at once.
    pub fn ok(n: u32) -> Answer {
        Answer {
            delay_ns: 0,
            result: Ok(n),
        }
    }

    /// Failure with `errno` (positive), at once.
    pub fn err(errno: i32) -> Answer {
        Answer {
            delay_ns: 0,
            result: Err(errno),
        }
    }

    /// The same answer, `delay_ns` after the request.
    pub fn after(self, delay_ns: u64) -> Answer {
        Answer { delay_ns, ..self }
    }
}

/// Requests whose [`ImageHandler`] panicked: each was answered EIO and
/// the server went on.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Failures {
    /// How many.
    pub count: u64,
    /// The first one: its opcode and the panic's message.
    pub first: Option<String>,
}

/// Which transport to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransportChoice {
    /// io_uring when the fuse module allows it (`enable_uring`) and the
    /// kernel takes it, else /dev/fuse.
    #[default]
    Auto,
    /// io_uring or an error ([`FuseError::UringUnavailable`]).
    Uring,
    /// read(2)/write(2) on /dev/fuse.
    Device,
}

/// The transport a server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// FUSE over io_uring: one ring and thread per possible CPU.
    Uring {
        /// Rings (one per possible CPU).
        queues: usize,
        /// Entries (requests in flight) per ring.
        depth: u32,
    },
    /// read(2)/write(2) on /dev/fuse.
    Device {
        /// Threads, each with its own clone of the descriptor.
        queues: usize,
        /// Why not io_uring.
        why: String,
    },
}

impl Transport {
    /// True for io_uring.
    pub fn is_uring(&self) -> bool {
        matches!(self, Transport::Uring { .. })
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        match self {
            Transport::Uring { queues, depth } => {
                write!(f, "io_uring, {queues} queue{} of {depth}", s(*queues))
            }
            Transport::Device { queues, why } => {
                write!(
                    f,
                    "read(2) on /dev/fuse, {queues} queue{}: {why}",
                    s(*queues)
                )
            }
        }
    }
}

/// How close to their deadlines the held answers (delay > 0) went out,
/// since the mount: the server's own precision, before the kernel and the
/// application see the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Punctuality {
    /// Answers held back.
    pub held: u64,
    /// Of which sent within 2 us of their deadline.
    pub on_time: u64,
    /// The mean lateness.
    pub mean_late: Duration,
    /// The worst lateness.
    pub max_late: Duration,
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct Options {
    /// The transport.
    pub transport: TransportChoice,
    /// The image's name in the mounted directory.
    pub name: String,
    /// /dev/fuse threads for [`Transport::Device`] (0: one per possible
    /// CPU). io_uring always has one queue per possible CPU, plus one
    /// /dev/fuse thread for what still comes that way (forgets, interrupts).
    pub queues: usize,
    /// io_uring entries per queue: the requests in flight on one CPU
    /// (each holds a payload buffer of `max_write`, mapped lazily).
    pub ring_depth: u32,
    /// The largest READ or WRITE per request, 4 KiB to 1 MiB (rounded
    /// down to 4 KiB).
    pub max_write: u32,
    /// Background requests (asynchronous direct I/O) the kernel keeps in
    /// flight.
    pub max_background: u16,
    /// After sending an answer with nothing else held, how long a queue
    /// thread watches for the next request before sleeping. Off by
    /// default: on a 2-CPU VM it made io_uring much slower at depth 1 (the
    /// pinned thread spins on the CPU the next request comes from) and
    /// /dev/fuse only a little faster, at a CPU's cost.
    pub idle_spin: Duration,
    /// Pin each io_uring thread to its queue's CPU (as libfuse does).
    pub pin: bool,
    /// How long to wait for the kernel's FUSE_INIT.
    pub init_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            transport: TransportChoice::Auto,
            name: "disk.img".into(),
            queues: 0,
            ring_depth: 32,
            max_write: 1 << 20,
            max_background: 256,
            idle_spin: Duration::ZERO,
            pin: true,
            init_timeout: Duration::from_secs(10),
        }
    }
}
