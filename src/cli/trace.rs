//! `iolab trace`: record what a program does (`-- CMD` or `-p PID`), show
//! it like dtrace, store it; `trace export` and `trace import` turn traces
//! into fio's formats and bring strace's in.

use super::db::{self, StoreOpts};
use super::{trace_export, trace_import};
use iolab::render;
use iolab::runner::StopFlag;
use iolab::trace::{self, Mode, Request, Target};
use iolab::{Error, Result};
use std::path::PathBuf;
use std::time::Duration;

const AFTER_HELP: &str = "\
Two modes: histograms (default) aggregates in the kernel: counts, bytes, time
and latency histograms per call and per file, at near-zero cost. --events also
streams every call (time, thread, call, file, offset, length, flags, result,
latency) through a ring buffer into the trace file (-o, default
./iolab-trace-DATE.trace, -2, -3 when taken), with a count of any events lost.

Calls: read, write, pread64, pwrite64, readv, writev, preadv(2), pwritev(2),
open, openat, openat2, creat, close, fsync, fdatasync, sync_file_range,
fadvise64, readahead, madvise, mmap, munmap, lseek, the stat family, mkdir,
rmdir, unlink, rename (and their *at forms), getdents64, fallocate, ftruncate,
io_uring_enter and io_uring requests (submission to completion). Threads and
child processes are followed.

The ebpf tracer (default) needs root, a kernel with BTF
(/sys/kernel/btf/vmlinux) and tracefs; --tracer strace needs only strace and
slows the program many times over.

Examples:
  iolab trace -- ./scan /data/logs          # histograms per call and file
  iolab trace --events -o scan.trace -- ./scan /data/logs
  iolab trace -p 4242 --duration 10s        # a running process
  iolab trace -f json -- cat big.log        # figures as JSON on stdout
  iolab trace export scan.trace --format iolog -o scan.iolog
  iolab trace export scan.trace --format job -o scan.fio
  iolab trace import app.strace             # strace -f -ttt -T -y output
  iolab replay scan.trace --speed max";

/// `iolab trace ...`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, after_help = AFTER_HELP)]
pub struct TraceArgs {
    /// Export or import a trace (without one: record).
    #[command(subcommand)]
    pub sub: Option<TraceCmd>,
    /// Recording options.
    #[command(flatten)]
    pub record: RecordArgs,
}

/// `iolab trace export|import`.
#[derive(Debug, clap::Subcommand)]
pub enum TraceCmd {
    /// Write a trace as a fio iolog (v3, per thread) or a fio job file that imitates it.
    Export(trace_export::ExportArgs),
    /// Read strace output (any of its forms; best `-f -ttt -T -y`) as a trace (store it, write a trace file).
    Import(trace_import::ImportArgs),
}

/// What to record and how.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// Keep every call (event mode), not only the histograms.
    #[arg(long)]
    pub events: bool,
    /// The trace file to write (refused if it exists).
    #[arg(short, long, value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Attach to this running process instead of starting a command.
    #[arg(short, long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,
    /// Stop after this long (10s, 2m): with -p, else when the command ends.
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// How to trace: ebpf (default) or strace (`iolab list tracers`).
    #[arg(long, default_value = "ebpf", value_name = "TRACER")]
    pub tracer: String,
    /// Output format: normal or json (`iolab list formats`).
    #[arg(short = 'f', long, default_value = "normal",
          value_parser = super::trace_formats(), value_name = "FORMAT")]
    pub output_format: String,
    /// Where the trace is stored.
    #[command(flatten)]
    pub store: StoreOpts,
    /// The command to trace, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Runs `iolab trace ...`.
pub fn execute(a: TraceArgs) -> Result<()> {
    match a.sub {
        Some(TraceCmd::Export(e)) => trace_export::execute(e),
        Some(TraceCmd::Import(i)) => trace_import::execute(i),
        None => record(a.record),
    }
}

fn record(a: RecordArgs) -> Result<()> {
    let target = match (a.pid, a.command.is_empty()) {
        (Some(p), _) => Target::Pid(p),
        (None, false) => Target::Command(a.command.clone()),
        (None, true) => {
            return Err(Error::usage(
                "iolab trace",
                "nothing to trace: give a command after `--` (iolab trace -- ls) or -p PID",
            ));
        }
    };
    let duration = match &a.duration {
        None => None,
        Some(d) => Some(Duration::from_micros(
            iolab::job::units::parse_time_us(d)
                .map_err(|e| Error::usage(format!("--duration '{d}'"), e.to_string()))?,
        )),
    };
    // Refused before anything runs: a format without a form for traces.
    render::trace_check(&a.output_format)?;
    let tracer = trace::find(&a.tracer)?;
    tracer.check()?;
    let mode = if a.events {
        Mode::Events
    } else {
        Mode::Histograms
    };
    let output = a.output.clone().or_else(|| {
        (mode == Mode::Events).then(|| {
            let stem = chrono::Local::now().format("iolab-trace-%Y%m%d-%H%M%S");
            iolab::sys::fs::unused_name(&stem.to_string(), "trace")
        })
    });
    let mut store = a.store.open()?;
    let stop = StopFlag::on_signals().map_err(|e| Error::usage("signals", e.to_string()))?;
    let req = Request {
        target,
        mode,
        duration,
        output: output.as_deref(),
        stop: &stop,
        stdout_to_stderr: a.output_format != "normal",
        attached: None,
    };
    let t = tracer.record(&req)?;
    let file = output.map(|p| std::path::absolute(&p).unwrap_or(p));
    let mut stored = trace::store::StoredTrace {
        trace: t,
        file,
        run: None,
    };
    if let Some(st) = &mut store {
        let id = trace::store::save(st, &stored, &db::command_line(), a.store.label())?;
        stored.run = Some(id);
    }
    super::write_out(&render::trace(&stored, &a.output_format)?, None)?;
    match (stop.signal(), stored.trace.meta.exit_status) {
        (Some(_), _) => Err(iolab::Error::interrupted(&stop)),
        // A --duration that ended the command is no failure of it.
        (None, Some(status)) if status != 0 && a.duration.is_none() => {
            Err(trace::TraceError::CommandFailed { status }.into())
        }
        _ => Ok(()),
    }
}
