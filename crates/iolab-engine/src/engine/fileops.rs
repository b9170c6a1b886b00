//! What the metadata engines (`filestat`, `filedelete`, `filecreate`) share: the clone's
//! file names as C strings, made once in [`Engine::attach`], and which files
//! have had their operation. As in fio (engines/fileoperations.c), a file's
//! operation is its first I/O (timed as that I/O); its other I/Os move no
//! data and take no time worth a syscall.
//!
//! [`Engine::attach`]: super::Engine::attach

use super::{Attach, Engine, EngineConfig, EngineError, IoUnit, Queued};
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;

/// The names of a clone's files and whether each has had its operation.
#[derive(Debug, Default)]
pub struct Names {
    names: Vec<CString>,
    done: Vec<bool>,
}

impl Names {
    /// The names of the attached files.
    pub(super) fn of(a: &Attach<'_>) -> io::Result<Names> {
        let names = (a.paths.iter())
            .map(|p| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Names {
            done: vec![false; names.len()],
            names,
        })
    }

    /// The name of file `file` the first time it is asked for; `None` after.
    #[inline]
    pub(super) fn first(&mut self, file: u16) -> Option<&CStr> {
        let done = &mut self.done[file as usize];
        (!std::mem::replace(done, true)).then(|| self.names[file as usize].as_c_str())
    }
}

/// The I/O of `len` bytes as done when the operation returned `rc` (0 or -1).
#[inline]
fn done(rc: libc::c_int, len: u32) -> io::Result<Queued> {
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Queued::Done(len as usize))
}

/// The operation a metadata engine does on a file's name.
pub trait NameOp: Send + Default {
    /// It changes the file (the safety rules for writes apply).
    const CHANGES: bool;
    /// It makes the files: none is laid out or opened before the run.
    const DISKLESS: bool = false;
    /// Does it on `name`: 0, or -1 with errno set.
    fn on(name: &CStr) -> libc::c_int;
}

/// An engine doing `O` on each file's name at the file's first I/O.
#[derive(Debug, Default)]
pub struct ByName<O> {
    names: Names,
    _op: O,
}

impl<O: NameOp> Engine for ByName<O> {
    const MOVES_DATA: bool = false;
    const WRITES_ON_READ: bool = O::CHANGES;
    const DISKLESS: bool = O::DISKLESS;

    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(ByName::default())
    }

    fn attach(&mut self, a: Attach<'_>) -> io::Result<()> {
        self.names = Names::of(&a)?;
        Ok(())
    }

    #[inline]
    fn queue(
        &mut self,
        _tag: u32,
        _fd: RawFd,
        unit: IoUnit,
        _buf: &mut [u8],
    ) -> io::Result<Queued> {
        match self.names.first(unit.file) {
            Some(name) => done(O::on(name), unit.len),
            None => Ok(Queued::Done(unit.len as usize)),
        }
    }
}
