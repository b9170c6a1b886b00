//! `iolab trace import FILE`: strace output as a trace: the trace file
//! written, the trace stored like a run and shown.

use super::db::{self, StoreOpts};
use iolab::render;
use iolab::trace::{self, store::StoredTrace};
use iolab::{Error, Result};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Reads the output of strace, best `strace -f -ttt -T -y -o FILE`: every read,
write, pread64, open, fsync, fadvise64, mmap, stat... call becomes an event
with its thread, file, offset, length, flags, result and latency; other calls
are skipped. Other forms are read too: -tt, -t, -r or no timestamps; without
-T (no latencies), without -y (fds opened earlier name no file), with -yy,
-k, -i, -n; without -f, with -f to stderr ([pid N]), and -ff's files (give
PREFIX, or the PREFIX.PID files). What a form lacks is said on stderr and
kept with the trace; lines that are not strace's are skipped and counted
(most of the input not strace's: refused at the first bad line).
The trace file is written (-o, default FILE.trace; never overwritten) and the
trace is stored like a run, so `iolab show`, `compare` and `replay` take it.

Examples:
  strace -f -ttt -T -y -o app.strace ./app
  iolab trace import app.strace               # writes app.strace.trace
  strace -ff -tt -T -o app ./app              # app.PID per process
  iolab trace import app -o app.trace         # reads every app.PID
  iolab trace import app.strace -o app.trace --label before
  iolab trace import app.strace -f json --no-store
  iolab trace export app.strace.trace --format job";

/// `iolab trace import ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportArgs {
    /// strace output (`strace -f -ttt -T -y -o FILE CMD`); several files,
    /// or the PREFIX of `strace -ff -o PREFIX`'s PREFIX.PID files.
    #[arg(required = true, num_args = 1..)]
    pub file: Vec<PathBuf>,
    /// The trace file to write (default: FILE.trace; refused if it exists).
    #[arg(short, long, value_name = "TRACE")]
    pub output: Option<PathBuf>,
    /// Output format: normal or json (`iolab list formats`).
    #[arg(short = 'f', long, default_value = "normal",
          value_parser = super::trace_formats(), value_name = "FORMAT")]
    pub output_format: String,
    /// Where the trace is stored.
    #[command(flatten)]
    pub store: StoreOpts,
}

/// Runs `iolab trace import`.
pub fn execute(a: ImportArgs) -> Result<()> {
    render::trace_check(&a.output_format)?;
    let out = a.output.clone().unwrap_or_else(|| {
        let mut name = a.file[0].clone().into_os_string();
        name.push(".trace");
        name.into()
    });
    if out.exists() {
        return Err(Error::refused(
            &out,
            format!(
                "{} exists: iolab never overwrites a trace file (remove it or give another -o)",
                out.display()
            ),
        ));
    }
    let mut store = a.store.open()?;
    let t = trace::strace::read_files(&a.file, &Default::default())?;
    if a.output_format != "normal" {
        // The normal view shows them as notes; beside JSON they go to stderr.
        for n in &t.meta.notes {
            eprintln!("iolab: warning: {n}");
        }
    }
    trace::file::write(&out, &t)?;
    let mut stored = StoredTrace {
        trace: t,
        file: Some(std::path::absolute(&out).unwrap_or(out)),
        run: None,
    };
    if let Some(st) = &mut store {
        let id = trace::store::save(st, &stored, &db::command_line(), a.store.label())?;
        stored.run = Some(id);
    }
    print!("{}", render::trace(&stored, &a.output_format)?);
    Ok(())
}
