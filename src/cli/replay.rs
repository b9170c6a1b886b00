//! `iolab replay TRACE`: a trace's calls issued again, per thread, on a
//! scratch copy of the files it touched.

use iolab::render;
use iolab::runner::StopFlag;
use iolab::trace::replay::{self, Options, Speed};
use iolab::{Error, Result};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
The trace must hold events (iolab trace --events, or iolab trace import).
Each traced thread gets one thread that issues its calls in order: reads and
writes at the recorded offsets and lengths (vector calls as one call of the
bytes the original moved), open/close with the recorded flags (descriptors
mapped per process), fsync, fdatasync, fadvise64, readahead, lseek, the stat
family, mkdir, unlink, getdents64. mmap, madvise, io_uring and rename are
skipped and counted.

The originals are never touched: every file the trace used is copied (or,
when it is gone or unreadable, made at the size the trace needs) into a
temporary directory removed at the end (--keep keeps it), or under --target
DIR at its absolute path (DIR/data/db/000012.sst). DIR must be empty, missing
or made by an earlier replay (exit 4 otherwise). Files the program created
are created by the replay. Copies start written back and out of the page
cache; /proc, /sys, /dev, pipes and sockets are not replayed.

--speed original issues each call at its recorded time (the schedule lag
histogram shows how late), max as fast as possible, a factor N N times as
fast. In every mode a call waits for the calls recorded before it in other
threads to be issued (calls that overlapped still overlap). A descriptor
used after its close with no open between (a dup the trace did not see) is
its file opened again with the same flags and advice.

Examples:
  iolab replay scan.trace                   # at the recorded pace
  iolab replay scan.trace --speed max       # as fast as possible
  iolab replay scan.trace --speed 2         # twice as fast
  iolab replay scan.trace --target /mnt/nvme/replay --keep
  iolab replay scan.trace -f json | jq .iops_ratio";

/// `iolab replay ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ReplayArgs {
    /// The trace file (recorded with --events, or imported), or the id of
    /// a stored trace (`iolab history`) whose file is read.
    pub trace: PathBuf,
    /// original (default), max, or a factor (2: twice as fast).
    #[arg(long, default_value = "original", value_name = "SPEED")]
    pub speed: String,
    /// Copy the files under DIR (empty, missing, or an earlier replay's)
    /// instead of a temporary directory.
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// Keep the scratch copies afterwards.
    #[arg(long)]
    pub keep: bool,
    /// Output format: normal or json.
    #[arg(short = 'f', long, default_value = "normal",
          value_parser = ["normal", "json"], value_name = "FORMAT")]
    pub output_format: String,
    /// Where stored traces are read from.
    #[command(flatten)]
    pub db: super::db::DbArg,
}

/// Runs `iolab replay`.
pub fn execute(a: ReplayArgs) -> Result<()> {
    let speed = Speed::parse(&a.speed)?;
    let trace = super::db::trace_arg(&a.trace, &a.db)?;
    let stop = StopFlag::on_signals().map_err(|e| Error::usage("signals", e.to_string()))?;
    let opts = Options {
        speed,
        target: a.target.as_deref(),
        keep: a.keep,
        stop: &stop,
    };
    let r = replay::replay(&trace, &opts)?;
    let text = match a.output_format.as_str() {
        "json" => format!("{:#}\n", render::replay::value(&r)),
        _ => render::replay::text(&r),
    };
    super::write_out(&text, None)?;
    match r.stopped {
        Some(_) => Err(iolab::Error::interrupted(&stop)),
        None => Ok(()),
    }
}
