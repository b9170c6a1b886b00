//! `iolab trace import FILE`: strace output as a trace: the trace file
//! written, the trace stored like a run and shown.

use super::db::{self, StoreOpts};
use iolab::render;
use iolab::trace::{self, store::StoredTrace};
use iolab::{Error, Result};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Reads the output of `strace -f -ttt -T -y` (also without -f, with or without
the pid column that -o writes, and with -yy): every read, write, pread64,
open, fsync, fadvise64, mmap, stat... call becomes an event with its thread,
file, offset, length, flags, result and latency; other calls are skipped.
The trace file is written (-o, default FILE.trace; never overwritten) and the
trace is stored like a run, so `iolab show`, `compare` and `replay` take it.

Examples:
  strace -f -ttt -T -y -o app.strace ./app
  iolab trace import app.strace               # writes app.strace.trace
  iolab trace import app.strace -o app.trace --label before
  iolab trace import app.strace -f json --no-store
  iolab trace export app.strace.trace --format job";

/// `iolab trace import ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportArgs {
    /// strace output (`strace -f -ttt -T -y -o FILE CMD`).
    pub file: PathBuf,
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
        let mut name = a.file.clone().into_os_string();
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
    let t = trace::strace::read(&a.file, &Default::default())?;
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
