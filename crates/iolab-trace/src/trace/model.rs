//! What a trace holds: where it came from ([`Meta`]), per call and per
//! file figures ([`Stats`]), and in event mode every call ([`Event`]).

use super::calls::{self, Class};
use super::hist::LogHist;
use super::pattern::figures::Pattern;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the calls were recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Aggregated in the kernel: counts, sums and histograms only.
    #[default]
    Histograms,
    /// Every call kept as an [`Event`] (and the aggregates).
    Events,
}

/// Where a trace came from and what it covers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The tracer that recorded it (`ebpf`, `strace`) or `import`.
    pub source: String,
    /// Histograms only, or every event.
    pub mode: Mode,
    /// The command traced (empty when attached with `-p`).
    pub command: Vec<String>,
    /// The process traced (the command's pid, or `-p`).
    pub pid: u32,
    /// When tracing began, seconds since the epoch.
    pub started_unix: f64,
    /// How long it traced, in nanoseconds.
    pub duration_ns: u64,
    /// The command's exit status (`None` when attached, or killed).
    pub exit_status: Option<i32>,
    /// The kernel it ran on (`uname -r`).
    pub kernel: String,
    /// The host it ran on.
    pub host: String,
    /// How iolab stopped the command, when it did (`--duration`, Ctrl-C):
    /// what it sent to how many processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// What the source could not tell, one sentence each (strace output
    /// without `-T`: no latencies; lines skipped as not strace's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Meta {
    /// What was traced, on one line: the command (its newlines written as
    /// `\n`, so a job or log comment stays one line) or `pid N`.
    pub fn what(&self) -> String {
        if self.command.is_empty() {
            format!("pid {}", self.pid)
        } else {
            self.command
                .join(" ")
                .replace('\r', "\\r")
                .replace('\n', "\\n")
        }
    }
}

/// Figures of a set of calls: one call kind, or one call kind on one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Calls that returned.
    pub count: u64,
    /// Calls that returned an error (a negative result).
    pub errors: u64,
    /// Bytes moved (the sum of non-negative results of reads and writes).
    pub bytes: u64,
    /// Time spent in the calls, nanoseconds.
    pub sum_ns: u64,
    /// Calls that began where the previous call of this kind on the same
    /// file ended (reads and writes).
    #[serde(default)]
    pub sequential: u64,
    /// Latency of each call, nanoseconds.
    pub lat: LogHist,
    /// Bytes moved by each call (reads and writes).
    #[serde(default)]
    pub sizes: LogHist,
}

impl Stats {
    /// Adds one call that took `lat_ns` and returned `result`; `moved`:
    /// the result counts as bytes.
    pub fn add(&mut self, lat_ns: u64, result: i64, moved: bool) {
        self.count += 1;
        self.sum_ns += lat_ns;
        self.lat.add(lat_ns, 1);
        if result < 0 {
            self.errors += 1;
        } else if moved {
            self.bytes += result as u64;
            self.sizes.add(result as u64, 1);
        }
    }

    /// Adds the figures of `o`.
    pub fn merge(&mut self, o: &Stats) {
        self.count += o.count;
        self.errors += o.errors;
        self.bytes += o.bytes;
        self.sum_ns += o.sum_ns;
        self.sequential += o.sequential;
        self.lat.merge(&o.lat);
        self.sizes.merge(&o.sizes);
    }
}

/// One call, in event mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// When it was entered, nanoseconds since the trace began.
    pub t_ns: u64,
    /// The process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// Its id in [`calls::CALLS`].
    pub call: u16,
    /// The file descriptor it used (-1: none).
    pub fd: i32,
    /// The file it used: an index into [`Trace::paths`].
    pub file: Option<u32>,
    /// The offset it worked at: the explicit one (pread64) or the file
    /// position at entry (read, write).
    pub offset: Option<u64>,
    /// The length asked for (the iovec count of vector calls).
    pub len: u64,
    /// Flags or advice (open flags, fadvise advice, io_uring opcode).
    pub flags: u64,
    /// What it returned (negative: -errno).
    pub result: i64,
    /// Time from entry to return, nanoseconds.
    pub lat_ns: u64,
}

impl Event {
    /// The call's name.
    pub fn name(&self) -> &'static str {
        calls::by_id(self.call).map_or("?", |c| c.name)
    }

    /// What the call does.
    pub fn class(&self) -> Class {
        calls::by_id(self.call).map_or(Class::Other, |c| c.class)
    }

    /// True when its result is bytes moved: reads, writes, copies, and
    /// io_uring read and write requests.
    pub fn moves_data(&self) -> bool {
        match self.class() {
            Class::Read | Class::Write | Class::Copy => true,
            Class::Uring => self.name() == calls::URING_REQ && calls::uring_rw(self.flags),
            _ => false,
        }
    }
}

/// One thread (or process) seen in the trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    /// Its process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// Its parent process (for a child process the tracer followed).
    pub ppid: u32,
    /// Its name (`comm`).
    pub comm: String,
}

/// A file the trace saw, with its figures per call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileStats {
    /// Its path (as opened, made absolute), or `dev:ino` when unresolved.
    pub path: String,
    /// Figures per call name.
    pub calls: BTreeMap<String, Stats>,
    /// The access pattern, from the events (the pattern analysis).
    #[serde(default)]
    pub pattern: Option<Pattern>,
}

impl FileStats {
    /// The figures of the calls of `class` together.
    pub fn of(&self, class: Class) -> Stats {
        let mut s = Stats::default();
        for (name, st) in &self.calls {
            if calls::by_name(name).is_some_and(|(_, c)| c.class == class) {
                s.merge(st);
            }
        }
        s
    }
}

/// A recorded trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Where it came from.
    pub meta: Meta,
    /// Figures per call name, for the calls that were made.
    pub calls: BTreeMap<String, Stats>,
    /// Figures per file.
    pub files: Vec<FileStats>,
    /// The threads and processes seen.
    pub threads: Vec<Thread>,
    /// Events lost (the ring buffer was full), in event mode.
    pub lost: u64,
    /// The paths events refer to ([`Event::file`] indexes this).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Every call, in event mode (in the trace file, not the database).
    #[serde(skip)]
    pub events: Vec<Event>,
}

impl Trace {
    /// The figures of the calls of `class` together.
    pub fn of(&self, class: Class) -> Stats {
        let mut s = Stats::default();
        for (name, st) in &self.calls {
            if calls::by_name(name).is_some_and(|(_, c)| c.class == class) {
                s.merge(st);
            }
        }
        s
    }

    /// The path of an event's file, if known.
    pub fn path_of(&self, e: &Event) -> Option<&str> {
        e.file
            .and_then(|i| self.paths.get(i as usize))
            .map(String::as_str)
    }
}
