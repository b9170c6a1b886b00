//! `iolab trace`: what a real program does, recorded at low cost, shown
//! like dtrace, and turned into experiments (docs/trace.md).
//!
//! A [`Tracer`] records a program's calls into a [`Trace`]: per call and per
//! file figures with latency and size histograms ([`hist`]), and in event
//! mode every call ([`Event`]) streamed into a trace file ([`file`]).
//! [`TRACERS`] lists the tracers: `ebpf` (tracepoints, in-kernel
//! aggregation) and `strace` (no root needed, much slower). A trace is
//! stored like a run ([`store`]); it can be exported as a fio iolog or job
//! and replayed.

pub mod calls;
pub mod ebpf;
pub mod error;
pub mod file;
pub mod hist;
pub mod imitate;
pub mod iolog;
pub mod job;
pub mod model;
pub mod pattern;
pub mod replay;
mod replay_copy;
mod replay_ops;
pub mod replay_scratch;
mod replay_sys;
pub mod sizes;
pub mod store;
pub mod strace;
pub mod strace_clock;
pub mod strace_fds;
pub mod strace_names;
pub mod strace_parser;
pub mod strace_syntax;
pub mod strace_tracer;
mod tally;

pub use error::{TraceError, TraceResult};
pub use model::{Event, FileStats, Meta, Mode, Stats, Thread, Trace};

use crate::registry::{Entry, entry};
use crate::runner::StopFlag;
use std::path::Path;
use std::time::Duration;

/// What to trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Start this command (program and arguments) and trace it, its
    /// threads and its children, until it exits.
    Command(Vec<String>),
    /// Attach to this running process (and its threads and children).
    Pid(u32),
}

/// One recording asked for.
pub struct Request<'a> {
    /// What to trace.
    pub target: Target,
    /// Histograms only, or every event too.
    pub mode: Mode,
    /// Stop after this long (attached processes; a command also stops
    /// when it exits).
    pub duration: Option<Duration>,
    /// The trace file to write as the trace runs (refused if it exists).
    pub output: Option<&'a Path>,
    /// Raised by Ctrl-C: the tracer stops and returns what it recorded.
    pub stop: &'a StopFlag,
    /// The command's standard output goes to standard error (iolab's own
    /// output on stdout is JSON).
    pub stdout_to_stderr: bool,
    /// Called once the tracer records, before it waits for the target
    /// (`iolab exec --trace` then lets its held command go).
    pub attached: Option<&'a (dyn Fn() + Sync)>,
}

/// A way of recording a program's calls.
pub trait Tracer: Sync {
    /// Checks that this machine can trace this way; the error names what
    /// is missing (root, BTF, BPF, a tool).
    fn check(&self) -> TraceResult<()>;

    /// Records `req.target` until it exits, the duration passes or
    /// `req.stop` is raised, writing the trace file as it goes. The trace
    /// returned holds the figures (and the events when no file was asked
    /// for).
    fn record(&self, req: &Request) -> TraceResult<Trace>;
}

/// The tracers (`--tracer`). The first is the default.
pub static TRACERS: &[Entry<dyn Tracer>] = &[
    entry(
        "ebpf",
        &["bpf"],
        "root, a kernel with BTF (/sys/kernel/btf/vmlinux), tracefs",
        "tracepoints on each call, aggregated in the kernel; --events through a ring buffer",
        &ebpf::Ebpf,
    ),
    entry(
        "strace",
        &[],
        "strace (Debian package strace)",
        "strace -f: no root needed, slows the program many times over",
        &strace_tracer::Strace,
    ),
];

/// The tracer called `name`.
pub fn find(name: &str) -> TraceResult<&'static dyn Tracer> {
    crate::registry::find(TRACERS, name)
        .map(|e| e.item)
        .ok_or_else(|| TraceError::Usage {
            what: format!("--tracer {name}"),
            problem: crate::registry::unknown("tracer", name, TRACERS),
        })
}
