//! What an access pattern is: per direction ([`DirPattern`]) and per file
//! ([`Pattern`]) the figures the analysis fills, and the numbers they are
//! counted in ([`BLOCK`], [`advice`], [`O_DIRECT`]).

use crate::trace::calls::Class;
use crate::trace::hist::LogHist;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The block sizes of [`DirPattern::blocks`] are multiples of this.
pub const BLOCK: u64 = 512;

/// `posix_fadvise` advice numbers (Linux).
pub mod advice {
    /// POSIX_FADV_NORMAL.
    pub const NORMAL: u64 = 0;
    /// POSIX_FADV_RANDOM.
    pub const RANDOM: u64 = 1;
    /// POSIX_FADV_SEQUENTIAL.
    pub const SEQUENTIAL: u64 = 2;
    /// POSIX_FADV_WILLNEED.
    pub const WILLNEED: u64 = 3;
    /// POSIX_FADV_DONTNEED.
    pub const DONTNEED: u64 = 4;
    /// POSIX_FADV_NOREUSE.
    pub const NOREUSE: u64 = 5;
}

/// `O_DIRECT` on x86_64.
pub const O_DIRECT: u64 = 0o40000;

/// How a file was read, or written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DirPattern {
    /// Calls that returned (not an error), zero-byte ones included.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Calls that moved nothing (a read at the end of the file).
    pub empty: u64,
    /// Calls that were vector calls (readv, pwritev2, ...).
    pub vector: u64,
    /// Bytes moved by each call that moved any.
    pub sizes: LogHist,
    /// Calls per size rounded to the nearest [`BLOCK`] (at least one
    /// block): the `bssplit` of a job.
    pub blocks: BTreeMap<u64, u64>,
    /// Calls (with a known offset) that began where the same thread's
    /// previous call of this direction on this file ended, or at offset 0
    /// as its first.
    pub sequential: u64,
    /// Calls (with a known offset) that began anywhere else.
    pub random: u64,
    /// Bytes this direction had already moved earlier in the trace, by any
    /// thread: re-reads, overwrites.
    pub repeat_bytes: u64,
    /// Time from the thread's previous call's return to this call's entry,
    /// nanoseconds (calls that had a previous one).
    pub think: LogHist,
    /// The think times added up, nanoseconds.
    pub think_ns: u64,
    /// Latency of each call, nanoseconds.
    pub lat: LogHist,
}

impl DirPattern {
    /// The share (0..=1) of calls with a known offset that went to a
    /// random one (0 when none is known).
    pub fn random_share(&self) -> f64 {
        let n = self.sequential + self.random;
        if n == 0 {
            0.0
        } else {
            self.random as f64 / n as f64
        }
    }
}

/// The access pattern of one file (or of one thread on one file).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pattern {
    /// Reads.
    pub read: DirPattern,
    /// Writes.
    pub write: DirPattern,
    /// The furthest byte reached: the most offset + bytes moved.
    pub extent: u64,
    /// When the first call was entered, nanoseconds since the trace began.
    pub first_ns: u64,
    /// When the last call returned.
    pub end_ns: u64,
    /// Calls to fsync.
    pub fsync: u64,
    /// Calls to fdatasync (and sync_file_range).
    pub fdatasync: u64,
    /// fadvise calls per advice number ([`advice`]).
    pub advice: BTreeMap<u64, u64>,
    /// It was opened with O_DIRECT.
    pub direct: bool,
    /// The threads that used it.
    pub threads: Vec<u32>,
}

impl Pattern {
    /// The pattern of `class` (Read or Write).
    pub fn dir(&self, class: Class) -> &DirPattern {
        if class == Class::Write {
            &self.write
        } else {
            &self.read
        }
    }
}
