//! `filestat`: each file's first I/O is a `stat(2)` of its name, timed as
//! that I/O; no data moves (fio's engines/fileoperations.c, `stat_type=stat`).

use super::fileops::{ByName, NameOp};
use std::ffi::CStr;

/// stat(2).
#[derive(Debug, Default)]
pub struct Stat;

impl NameOp for Stat {
    const CHANGES: bool = false;

    fn on(name: &CStr) -> libc::c_int {
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: a NUL-terminated name and room for a stat on the stack.
        unsafe { libc::stat(name.as_ptr(), st.as_mut_ptr()) }
    }
}

/// stat(2) by name, once per file.
pub type FilestatEngine = ByName<Stat>;
