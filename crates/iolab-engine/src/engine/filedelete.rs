//! `filedelete`: each file's first I/O is an `unlink(2)` of its name, timed
//! as that I/O; no data moves (fio's engines/fileoperations.c). It removes
//! files, so the safety rules for writes apply to its jobs.

use super::fileops::{ByName, NameOp};
use std::ffi::CStr;

/// unlink(2).
#[derive(Debug, Default)]
pub struct Unlink;

impl NameOp for Unlink {
    const CHANGES: bool = true;

    fn on(name: &CStr) -> libc::c_int {
        // SAFETY: a NUL-terminated name.
        unsafe { libc::unlink(name.as_ptr()) }
    }
}

/// unlink(2) by name, once per file.
pub type FiledeleteEngine = ByName<Unlink>;
