//! How I/O is issued: one trait, one file per engine, one line per engine
//! in the list below (its module, its variant, fio's name and aliases, what
//! it needs, its help). Parsing `ioengine=`, the job checks, `iolab list
//! engines` and the JSON labels all read that list. The runner stamps the times (queued, submitted,
//! completed) around the trait's calls; an engine only performs the
//! operations, like fio's `ioengine_ops`.
//!
//! A synchronous engine implements [`Engine::queue`] alone and returns
//! [`Queued::Done`] ("submit and complete"). An asynchronous engine sets
//! [`Engine::QUEUED`], returns [`Queued::Pending`], sends what it queued to
//! the kernel in [`Engine::commit`] and hands completions back from
//! [`Engine::reap`].

pub mod cmdprio;
mod fileops;
pub mod fio_engines;
pub mod flags;
pub mod registry;

pub use flags::EngineFlags;

pub use cpuio::{CpuMode, CpuioOptions};
pub use e4defrag::E4defragOptions;
pub use exec::ExecOptions;
pub use fio_engines::FIO_ENGINES;
pub use registry::{EngineDef, find};

// The list: one line per engine (the macro is in `registry`).
registry::engines! {
    Psync => psync::PsyncEngine, "psync", [], "", "pread(2)/pwrite(2), one syscall per I/O";
    Sync => sync::SyncEngine, "sync", [], "", "lseek(2) then read(2)/write(2), two syscalls per I/O";
    Vsync => vsync::VsyncEngine, "vsync", [], "", "lseek(2) then readv(2)/writev(2); adjacent I/Os queued together go in one call";
    Pvsync => pvsync::PvsyncEngine, "pvsync", [], "", "preadv(2)/pwritev(2) with one iovec, one syscall per I/O";
    Pvsync2 => pvsync2::Pvsync2Engine, "pvsync2", [], "Linux 4.6+ (hipri: a device with poll queues)", "preadv2(2)/pwritev2(2) with hipri (RWF_HIPRI) and nowait (RWF_NOWAIT)";
    IoUring => uring::UringEngine, "io_uring", [], "Linux 5.1+; sqthread_poll needs root before 5.11", "io_uring: iodepth I/Os in flight, batched submit and reap";
    Libaio => libaio::LibaioEngine, "libaio", ["aio", "linuxaio"], "direct=1 for real queue depth", "Linux kernel AIO (io_submit/io_getevents), iodepth I/Os in flight";
    Posixaio => posixaio::PosixaioEngine, "posixaio", [], "", "POSIX AIO of the C library (aio_read/aio_write/aio_suspend), iodepth I/Os in flight";
    Mmap => mmap::MmapEngine, "mmap", [], "", "copies from/to a shared mapping; the kernel reads on page faults";
    Falloc => falloc::FallocEngine, "falloc", [], "a file system with fallocate(2)", "no data: a read is fallocate(KEEP_SIZE), a write fallocate(0) of its range";
    E4defrag => e4defrag::E4defragEngine, "e4defrag", [], "ext4 (EXT4_IOC_MOVE_EXT); filesize= unless inplace=1", "no data: a write moves its blocks' extents from a donor file (EXT4_IOC_MOVE_EXT); reads fail (EINVAL), as in fio";
    Ftruncate => ftruncate::FtruncateEngine, "ftruncate", [], "", "no data: a write is ftruncate(2) to its offset; reads fail (EINVAL), as in fio";
    Filestat => filestat::FilestatEngine, "filestat", [], "", "no data: each file's first I/O is a stat(2) of its name, timed";
    Filedelete => filedelete::FiledeleteEngine, "filedelete", [], "", "no data: each file's first I/O is an unlink(2) of its name, timed";
    Filecreate => filecreate::FilecreateEngine, "filecreate", [], "", "no data: each file's first I/O creates it (open(2) with O_CREAT), timed; nothing laid out first";
    Exec => exec::ExecEngine, "exec", [], "program= and runtime=", "no I/O: runs program= for the job's runtime, then stops it (SIGTERM, grace_time, SIGKILL)";
    Cpuio => cpuio::CpuioEngine, "cpuio", [], "cpuload= and runtime=", "no I/O: burns CPU (spins, or sorts with cpumode=qsort) cpuload percent of the time, in chunks of cpuchunks µs";
    Null => null::NullEngine, "null", [], "", "no I/O at all: iolab's own cost per I/O";
}

use std::io;
use std::os::fd::RawFd;

/// What [`Engine::queue`] did with an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queued {
    /// Done: this many bytes were transferred.
    Done(usize),
    /// Queued; it completes through [`Engine::commit`] and [`Engine::reap`].
    Pending,
    /// Not taken (fio's `FIO_Q_BUSY`): the runner commits what is queued,
    /// then offers the same I/O again. Only a queued engine returns it, and
    /// only while it holds uncommitted I/Os.
    Busy,
}

/// One completion from [`Engine::reap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The tag given to [`Engine::queue`].
    pub tag: u32,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
}

/// The files and buffers an engine works with, known before the start.
pub struct Attach<'a> {
    /// Open descriptors, indexed by `IoUnit::file`.
    pub fds: &'a [RawFd],
    /// The files' paths, in the same order (the metadata engines work on
    /// names).
    pub paths: &'a [std::path::PathBuf],
    /// Size of each file in bytes.
    pub sizes: &'a [u64],
    /// One buffer per tag (`iodepth` of them), as (address, length); they
    /// stay allocated and in place until the engine is dropped.
    pub bufs: &'a [libc::iovec],
    /// The job writes.
    pub writes: bool,
}

/// One I/O to issue, in 16 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoUnit {
    /// Byte offset in the file.
    pub offset: u64,
    /// Length in bytes.
    pub len: u32,
    /// Index of the file in the clone's file list (at most the job layer's `MAX_FILES`).
    pub file: u16,
    /// True for a write.
    pub write: bool,
    /// True for a trim (fio's discard; `write` is then false): the engine's
    /// [`Engine::trim`], not [`Engine::queue`], issues it.
    pub trim: bool,
}

impl IoUnit {
    /// fio's number of its direction: 0 read, 1 write, 2 trim.
    #[inline]
    pub fn ddir(&self) -> u8 {
        if self.trim { 2 } else { u8::from(self.write) }
    }
}

/// What the engines with options that carry text need of a job: those
/// options and the job's settings they are read with (shared by the
/// clones, not copied).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineArgs {
    /// `donorname`, `inplace` (`e4defrag`).
    pub e4defrag: E4defragOptions,
    /// `program`, `arguments`, `grace_time`, `std_redirect` (`exec`).
    pub exec: ExecOptions,
    /// `cpuload`, `cpuchunks`, `cpumode`, `exit_on_io_done` (`cpuio`).
    pub cpuio: CpuioOptions,
    /// The job's name (`exec`'s `%n` and output files).
    pub name: String,
    /// `directory` (where `e4defrag`'s donor file is).
    pub directory: Option<std::path::PathBuf>,
    /// `offset`: where `e4defrag`'s donor space begins.
    pub offset: u64,
    /// The high end of `filesize` (fio's `file_size_high`; 0 without it).
    pub filesize_high: u64,
    /// `runtime` in microseconds (`exec`'s `%r` and end).
    pub runtime_us: Option<u64>,
}

/// What an engine needs to know of the job it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineConfig {
    /// I/Os in flight (queued engines).
    pub iodepth: u32,
    /// O_DIRECT.
    pub direct: bool,
    /// The job writes.
    pub writes: bool,
    /// The job reads.
    pub reads: bool,
    /// The job trims.
    pub trims: bool,
    /// Engine options.
    pub flags: EngineFlags,
    /// Per-I/O priorities (`cmdprio_*`; libaio and io_uring).
    pub cmdprio: cmdprio::CmdprioSpec,
    /// The smallest block size of any direction (fio's `rw_min_bs`).
    pub bs_min: u64,
    /// The job syncs every N writes (`fsync` or `fdatasync`).
    pub syncs: bool,
    /// The options that carry text, and what they need of the job.
    pub args: std::sync::Arc<EngineArgs>,
}

/// Why an engine cannot be used for a job: the option concerned and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what}: {problem}")]
pub struct EngineError {
    /// The engine or option (`sqthread_poll`, `ioengine=libaio`).
    pub what: String,
    /// What the kernel or the engine said.
    pub problem: String,
}

impl EngineError {
    /// `what`: `problem`.
    pub fn new(what: impl Into<String>, problem: impl Into<String>) -> EngineError {
        EngineError {
            what: what.into(),
            problem: problem.into(),
        }
    }
}

/// An I/O engine.
pub trait Engine: Send + Sized {
    /// True when I/Os stay in flight (`iodepth` matters); false when every
    /// I/O completes inside [`Engine::queue`] and the runner uses its
    /// one-I/O-at-a-time loop.
    const QUEUED: bool = false;

    /// The engine options it takes (see [`EngineFlags`]).
    const OPTIONS: &'static [&'static str] = &[];

    /// False when an I/O moves no bytes between its buffer and the file
    /// (fio's `FIO_FAKEIO` engines: `falloc`, `ftruncate`, the metadata
    /// engines): written data cannot be read back or verified.
    const MOVES_DATA: bool = true;

    /// True when its reads need a writable file too (`falloc`: a read is
    /// `fallocate(KEEP_SIZE)`): the files are opened read-write and the
    /// safety rules for writes apply.
    const WRITES_ON_READ: bool = false;

    /// True when the transfers are done by threads of a library that use
    /// the process's descriptor table (glibc's POSIX AIO): the engine's
    /// clones keep their files there instead of a table of their own.
    const SHARED_FDS: bool = false;

    /// True when the engine lays out and opens no file before the run
    /// (fio's `FIO_DISKLESSIO`): `null` uses none, `filecreate` makes its
    /// own as its first I/Os. The I/O is planned over the job's `size` (or
    /// `filesize`), and each descriptor given is `/dev/null`'s.
    const DISKLESS: bool = false;

    /// True when its calls are I/Os of no bytes (fio's `FIO_NOIO`: `exec`,
    /// `cpuio`): each counts as an I/O, none moves a byte.
    const NO_IO: bool = false;

    /// Checks a job's settings before anything runs (a combination the
    /// engine cannot do is refused here, with the reason).
    fn check(_cfg: &EngineConfig) -> Result<(), EngineError> {
        Ok(())
    }

    /// Settings that run but do not do what they may suggest.
    fn warnings(_cfg: &EngineConfig) -> Vec<String> {
        Vec::new()
    }

    /// A hint to add to an I/O error of this engine (what a kernel errno
    /// usually means for it), or `None`.
    fn hint(_err: &io::Error, _cfg: &EngineConfig) -> Option<&'static str> {
        None
    }

    /// Sets the engine up for one clone, before the threads start, so a
    /// refusal of the kernel is an error and not a dead clone.
    fn build(cfg: &EngineConfig) -> Result<Self, EngineError>;

    /// Called once with the clone's files and buffers before the start
    /// barrier (mmap maps the files, io_uring registers them).
    fn attach(&mut self, _a: Attach<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Starts `unit` on descriptor `fd` (file index `unit.file`) with `buf`
    /// (`unit.len` bytes), remembering `tag` for its completion.
    fn queue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued>;

    /// Trims `unit` on `fd`, synchronously (fio's `do_io_u_trim`, which
    /// every engine without its own trim uses): the block layer's discard,
    /// `ioctl(BLKDISCARD)`. On a regular file that fails with ENOTTY, as
    /// in fio; `falloc` punches a hole instead, `null` does nothing.
    fn trim(&mut self, fd: RawFd, unit: IoUnit) -> io::Result<()> {
        crate::sys::fs::discard(fd, unit.offset, unit.len.into())
    }

    /// Issues `unit`: [`Engine::trim`] for a trim (done when it returns),
    /// [`Engine::queue`] otherwise. The runner calls this.
    #[inline(always)]
    fn issue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        if unit.trim {
            return self
                .trim(fd, unit)
                .map(|()| Queued::Done(unit.len as usize));
        }
        self.queue(tag, fd, unit, buf)
    }

    /// The ioprio `cmdprio_*` gave the I/O queued last (fio's
    /// `io_u->ioprio`); 0: the thread's own, or no per-I/O priorities.
    fn last_prio(&self) -> u16 {
        0
    }

    /// The think time the engine sets after its last call, in
    /// microseconds (fio's `cpuio` writes `td->o.thinktime` as it goes);
    /// `None`: the job's own `thinktime`.
    fn think_us(&self) -> Option<u64> {
        None
    }

    /// Sends the queued I/Os to the kernel; returns how many were sent.
    fn commit(&mut self) -> io::Result<usize> {
        Ok(0)
    }

    /// Waits until at least `min` I/Os have completed and appends every
    /// completion available (at most `max`) to `out`.
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<()> {
        Ok(())
    }
}

/// Something that runs with an engine of any type: the runner's timed loop,
/// compiled once per engine so the hot path has no dynamic call.
pub trait Driver {
    /// What the drive returns.
    type Output;
    /// Runs with `engine`.
    fn drive<E: Engine>(self, engine: E) -> Self::Output;
}

/// The result of a raw syscall that returns a byte count or -1.
fn check(rc: isize) -> io::Result<usize> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc as usize)
    }
}
