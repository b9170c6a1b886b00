//! `filecreate`: each file's first I/O is an `open(2)` with `O_CREAT` of its
//! name (then closed), timed as that I/O; no data moves (fio's
//! engines/fileoperations.c). As fio's `FIO_DISKLESSIO` engines, its files
//! are not laid out or opened before the run: the run creates them, empty,
//! with mode 0600 as fio does; the I/O is planned over `filesize` (or the
//! file's share of `size`) as fio plans it. An existing file is opened,
//! not changed.

use super::fileops::{ByName, NameOp};
use std::ffi::CStr;

/// open(2) with O_CREAT, then close(2).
#[derive(Debug, Default)]
pub struct Create;

impl NameOp for Create {
    const CHANGES: bool = true;
    const DISKLESS: bool = true;

    fn on(name: &CStr) -> libc::c_int {
        // SAFETY: a NUL-terminated name; the descriptor is closed at once.
        unsafe {
            let fd = libc::open(name.as_ptr(), libc::O_CREAT | libc::O_RDWR, 0o600);
            if fd < 0 {
                return -1;
            }
            libc::close(fd)
        }
    }
}

/// open(O_CREAT) by name, once per file.
pub type FilecreateEngine = ByName<Create>;
