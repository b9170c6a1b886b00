//! `libaio`: Linux kernel AIO through the raw syscalls (`io_setup`,
//! `io_submit`, `io_getevents`). Truly asynchronous only with `direct=1`;
//! buffered AIO completes inside `io_submit`, as with fio.

use super::{Completion, Engine, EngineConfig, EngineError, Queued};
use super::IoUnit;
use std::io;
use std::os::fd::RawFd;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
/// The iocb carries a priority in `aio_reqprio`.
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// The kernel's `struct iocb` (include/uapi/linux/aio_abi.h), little-endian
/// field order.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// An AIO context of `iodepth` slots.
#[derive(Debug)]
pub struct LibaioEngine {
    ctx: libc::c_ulong,
    iocbs: Vec<Iocb>,
    pending: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Per-I/O priorities (`cmdprio_*`), when asked for.
    prio: Option<Box<super::cmdprio::Picker>>,
}

// SAFETY: the context and control blocks are owned by this engine and used
// by one thread at a time.
unsafe impl Send for LibaioEngine {}

impl Engine for LibaioEngine {
    const QUEUED: bool = true;

    fn warnings(cfg: &EngineConfig) -> Vec<String> {
        (!cfg.direct)
            .then(|| "ioengine=libaio without direct=1 is synchronous (buffered AIO completes inside io_submit); set direct=1 for real queue depth".into())
            .into_iter()
            .collect()
    }

    /// A context for `iodepth` I/Os in flight.
    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        let depth = cfg.iodepth;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes the new context id into ctx.
        let rc = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx) };
        if rc < 0 {
            return Err(EngineError::new(
                "ioengine=libaio",
                format!(
                    "io_setup({depth}) failed: {} (see /proc/sys/fs/aio-max-nr)",
                    io::Error::last_os_error()
                ),
            ));
        }
        Ok(LibaioEngine {
            ctx,
            iocbs: vec![Iocb::default(); depth as usize],
            pending: Vec::with_capacity(depth as usize),
            events: vec![IoEvent::default(); depth as usize],
            prio: super::cmdprio::Picker::of(&cfg.cmdprio).map(Box::new),
        })
    }

    fn queue(&mut self, tag: u32, fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let cb = &mut self.iocbs[tag as usize];
        *cb = Iocb {
            data: tag as u64,
            opcode: if unit.write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            fildes: fd as u32,
            buf: buf.as_mut_ptr() as u64,
            nbytes: unit.len as u64,
            offset: unit.offset as i64,
            ..Iocb::default()
        };
        if let Some(p) = &mut self.prio
            && let Some(v) = p.pick(unit.write, unit.len)
        {
            cb.reqprio = v as i16;
            cb.flags |= IOCB_FLAG_IOPRIO;
        }
        self.pending.push(cb);
        Ok(Queued::Pending)
    }

    fn last_prio(&self) -> u16 {
        self.prio.as_ref().map_or(0, |p| p.last)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let mut sent = 0;
        while sent < self.pending.len() {
            let rest = &mut self.pending[sent..];
            // SAFETY: every pointer is to an iocb of self.iocbs that lives
            // until its completion is reaped.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    rest.len() as libc::c_long,
                    rest.as_mut_ptr(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EAGAIN) {
                    continue;
                }
                self.pending.clear();
                // What went in completes normally; the runner reports the rest.
                return if sent > 0 { Ok(sent) } else { Err(e) };
            }
            sent += rc as usize;
        }
        self.pending.clear();
        Ok(sent)
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let max = max.min(self.events.len());
        loop {
            // SAFETY: events has room for `max` entries; no timeout.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    std::ptr::null_mut::<libc::timespec>(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            out.extend(self.events[..rc as usize].iter().map(|ev| Completion {
                tag: ev.data as u32,
                result: ev.res,
            }));
            return Ok(());
        }
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        // SAFETY: destroys the context made in new(); waits for I/Os in flight.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}
