//! The system calls `iolab trace` records: their names (as strace writes
//! them), their x86_64 numbers, what they do, and where their file
//! descriptor, offset and length are among the arguments.

use serde::{Deserialize, Serialize};

/// What a call does, for the per-direction figures and the job it becomes.
/// (Its number is the class in the BPF program, trace.bpf.c's `C_*`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Moves data from a file (read, pread64, readv, ...).
    Read,
    /// Moves data to a file.
    Write,
    /// Makes data durable (fsync, fdatasync, sync_file_range).
    Sync,
    /// Opens or closes a file.
    Open,
    /// Advice to the kernel (fadvise64, madvise, readahead).
    Advice,
    /// Names and attributes: stat family, mkdir, unlink, rename, getdents.
    Meta,
    /// Maps memory, moves the file position.
    Other,
    /// io_uring submissions and completions.
    Uring,
    /// Copies between descriptors in the kernel (copy_file_range,
    /// sendfile, splice): the bytes count once, on the source file; the
    /// destination descriptor is kept in the flags.
    Copy,
}

/// Where an argument is: the index of a syscall argument (0..6).
pub type Arg = Option<u8>;

/// One traced system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallInfo {
    /// Its name, as strace and the tracepoints write it (`pread64`).
    pub name: &'static str,
    /// Its number on x86_64 (`__NR_pread64`).
    pub nr: u32,
    /// What it does.
    pub class: Class,
    /// The argument holding the file descriptor.
    pub fd: Arg,
    /// The argument holding an explicit offset (pread64); `None` for calls
    /// at the file position (read) or without one.
    pub offset: Arg,
    /// The argument holding the length (for vector calls: the count of
    /// iovecs; the bytes moved are the result).
    pub len: Arg,
    /// The argument holding flags or advice worth keeping.
    pub flags: Arg,
    /// The argument holding a path name (open, stat, mkdir, ...).
    pub path: Arg,
}

/// A row of [`CALLS`]: the arguments are fd, offset, length, flags, path.
const fn call(name: &'static str, nr: u32, class: Class, args: [Arg; 5]) -> CallInfo {
    let [fd, offset, len, flags, path] = args;
    CallInfo {
        name,
        nr,
        class,
        fd,
        offset,
        len,
        flags,
        path,
    }
}

use Class::*;

/// Every call `iolab trace` records, in a fixed order: the index of a call
/// in this list is its id in the BPF program and in trace files.
#[rustfmt::skip]
pub const CALLS: &[CallInfo] = &[
    call("read", 0, Read, [Some(0), None, Some(2), None, None]),
    call("write", 1, Write, [Some(0), None, Some(2), None, None]),
    call("pread64", 17, Read, [Some(0), Some(3), Some(2), None, None]),
    call("pwrite64", 18, Write, [Some(0), Some(3), Some(2), None, None]),
    call("readv", 19, Read, [Some(0), None, Some(2), None, None]),
    call("writev", 20, Write, [Some(0), None, Some(2), None, None]),
    call("preadv", 295, Read, [Some(0), Some(3), Some(2), None, None]),
    call("pwritev", 296, Write, [Some(0), Some(3), Some(2), None, None]),
    call("preadv2", 327, Read, [Some(0), Some(3), Some(2), Some(5), None]),
    call("pwritev2", 328, Write, [Some(0), Some(3), Some(2), Some(5), None]),
    call("open", 2, Open, [None, None, None, Some(1), Some(0)]),
    call("openat", 257, Open, [Some(0), None, None, Some(2), Some(1)]),
    call("openat2", 437, Open, [Some(0), None, None, None, Some(1)]),
    call("creat", 85, Open, [None, None, None, Some(1), Some(0)]),
    call("close", 3, Open, [Some(0), None, None, None, None]),
    call("fsync", 74, Sync, [Some(0), None, None, None, None]),
    call("fdatasync", 75, Sync, [Some(0), None, None, None, None]),
    call("sync_file_range", 277, Sync, [Some(0), Some(1), Some(2), Some(3), None]),
    call("fadvise64", 221, Advice, [Some(0), Some(1), Some(2), Some(3), None]),
    call("readahead", 187, Advice, [Some(0), Some(1), Some(2), None, None]),
    call("madvise", 28, Advice, [None, None, Some(1), Some(2), None]),
    call("mmap", 9, Other, [Some(4), Some(5), Some(1), Some(3), None]),
    call("munmap", 11, Other, [None, None, Some(1), None, None]),
    call("lseek", 8, Other, [Some(0), Some(1), None, Some(2), None]),
    call("stat", 4, Meta, [None, None, None, None, Some(0)]),
    call("fstat", 5, Meta, [Some(0), None, None, None, None]),
    call("lstat", 6, Meta, [None, None, None, None, Some(0)]),
    call("newfstatat", 262, Meta, [Some(0), None, None, Some(3), Some(1)]),
    call("statx", 332, Meta, [Some(0), None, None, Some(2), Some(1)]),
    call("mkdir", 83, Meta, [None, None, None, None, Some(0)]),
    call("mkdirat", 258, Meta, [Some(0), None, None, None, Some(1)]),
    call("rmdir", 84, Meta, [None, None, None, None, Some(0)]),
    call("unlink", 87, Meta, [None, None, None, None, Some(0)]),
    call("unlinkat", 263, Meta, [Some(0), None, None, Some(2), Some(1)]),
    call("rename", 82, Meta, [None, None, None, None, Some(0)]),
    call("renameat", 264, Meta, [Some(0), None, None, None, Some(1)]),
    call("renameat2", 316, Meta, [Some(0), None, None, Some(4), Some(1)]),
    call("getdents64", 217, Meta, [Some(0), None, Some(2), None, None]),
    call("fallocate", 285, Write, [Some(0), Some(2), Some(3), Some(1), None]),
    call("ftruncate", 77, Meta, [Some(0), None, Some(1), None, None]),
    call("io_uring_enter", 426, Uring, [Some(0), None, Some(1), Some(3), None]),
    // Not a system call: one io_uring request from submission to completion
    // (the io_uring tracepoints), its flags the request's opcode.
    call(URING_REQ, URING_REQ_NR, Uring, [Some(0), None, None, Some(1), None]),
    // Added after io_uring requests (ids are kept by stored traces).
    // Offsets of the copies are pointers: not recorded.
    call("copy_file_range", 326, Copy, [Some(0), None, Some(4), Some(2), None]),
    call("sendfile", 40, Copy, [Some(1), None, Some(3), Some(0), None]),
    call("splice", 275, Copy, [Some(0), None, Some(4), Some(2), None]),
    call("fcntl", 72, Other, [Some(0), None, None, Some(1), None]),
    call("flock", 73, Other, [Some(0), None, None, Some(1), None]),
    call("msync", 26, Sync, [None, None, Some(1), Some(2), None]),
    call("syncfs", 306, Sync, [Some(0), None, None, None, None]),
    call("sync", 162, Sync, [None, None, None, None, None]),
    call("truncate", 76, Meta, [None, None, Some(1), None, Some(0)]),
];

/// The number [`URING_REQ`] has in trace files (no system call has it).
pub const URING_REQ_NR: u32 = 100_000;

/// The name of the entry in [`CALLS`] that io_uring's own tracepoints
/// report under: one submitted request (`io_uring_submit_req`) and its completion
/// (`io_uring_complete`) form one event of this name, its latency the
/// time from submission to completion.
pub const URING_REQ: &str = "io_uring_req";

/// True for io_uring's read and write opcodes (READV, WRITEV, READ_FIXED,
/// WRITE_FIXED, READ, WRITE, READV_FIXED, WRITEV_FIXED), whose result is
/// bytes moved (trace.bpf.c `is_rw`).
pub fn uring_rw(opcode: u64) -> bool {
    matches!(opcode, 1 | 2 | 4 | 5 | 22 | 23 | 60 | 61)
}

/// The call named `name` (strace's name; `pread` and `pwrite` are taken
/// for `pread64` and `pwrite64`, `fstatat` for `newfstatat`).
pub fn by_name(name: &str) -> Option<(u16, &'static CallInfo)> {
    let name = match name {
        "pread" => "pread64",
        "pwrite" => "pwrite64",
        "fstatat" | "fstatat64" => "newfstatat",
        "fadvise" | "posix_fadvise" => "fadvise64",
        n => n,
    };
    CALLS
        .iter()
        .enumerate()
        .find(|(_, c)| c.name == name)
        .map(|(i, c)| (i as u16, c))
}

/// The call with id `id` (its index in [`CALLS`]).
pub fn by_id(id: u16) -> Option<&'static CallInfo> {
    CALLS.get(usize::from(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_unique() {
        for (i, a) in CALLS.iter().enumerate() {
            for b in &CALLS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.nr, b.nr);
            }
        }
        assert_eq!(by_name("pread").unwrap().1.nr, 17);
        // trace.bpf.c sizes its tables for 51 calls, io_uring requests at
        // id 41, and numbers the classes as Class does.
        assert_eq!(CALLS.len(), 51);
        assert_eq!(CALLS[41].name, URING_REQ);
        assert_eq!(
            (Class::Read as u8, Class::Uring as u8, Class::Copy as u8),
            (0, 7, 8)
        );
        assert_eq!(by_id(2).unwrap().name, "pread64");
    }
}
