//! `iolab trace export TRACE --format iolog|job`.

use iolab::render::{json::pretty, trace_pattern};
use iolab::runner::StopFlag;
use iolab::trace::{imitate, iolog, job};
use iolab::{Error, Result};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
--format iolog writes fio's iolog v3, one per traced thread: each thread's
reads and writes at a known offset (their own, or the file position followed
from the open, lseek and the bytes moved), fsync (sync), fdatasync
(datasync), and the opens and closes of those files, timed in microseconds
from the trace's start. Without -o one thread's log goes to stdout (several
need -o). With -o OUT: one thread's log at OUT, several at STEM.TID.iolog,
and STEM.fio, the job that has fio replay them all at once (STEM: OUT
without a final .iolog). fio does not lay out files to replay: the files
read must exist (the job file lists their sizes).

--format job writes a fio job file that imitates the program: a section per
thread and file (threads that did the same: numjobs) with the file's size,
rw and percentage_random from the share of calls at a random offset,
bssplit from the sizes moved, rwmixread, number_ios, thinktime or rate_iops
from the gaps between calls, fadvise_hint from fadvise calls; each option
commented with what in the trace it came from. --run DIR lays the job's
files out in DIR, runs it with iolab and prints the trace beside the run
(ops, bytes, sizes, random share per file and direction).

--dir DIR names the files DIR/NAME (their file names) instead of the
traced paths, to run on scratch copies, never the originals. Existing
output files are never replaced.

Examples:
  iolab trace export scan.trace --format job -o scan.fio
  iolab trace export scan.trace --format job --dir /scratch > scan.fio
  iolab trace export scan.trace --format job --run /scratch/imitate
  iolab trace export scan.trace --format iolog -o scan.iolog --dir /scratch
  fio scan.fio                                # replays every thread's iolog";

/// `iolab trace export ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExportArgs {
    /// The trace file (recorded with `iolab trace --events`), or the id of
    /// a stored trace (`iolab history`) whose file is read.
    pub trace: PathBuf,
    /// What to write: iolog (fio iolog v3 per thread) or job (a fio job file).
    #[arg(long, value_parser = ["iolog", "job"], value_name = "FORMAT")]
    pub format: String,
    /// Where to write (job: default stdout; iolog: the log, or the prefix
    /// of several). Never replaced.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Name the files in DIR instead of their traced paths.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// With --format job: lay the files out in DIR, run the job with iolab
    /// and show it beside the trace.
    #[arg(long, value_name = "DIR", conflicts_with = "dir")]
    pub run: Option<PathBuf>,
    /// Output format of --run's comparison: normal or json.
    #[arg(short = 'f', long, default_value = "normal",
          value_parser = ["normal", "json"], value_name = "FORMAT")]
    pub output_format: String,
    /// Where stored traces are read from.
    #[command(flatten)]
    pub db: super::db::DbArg,
}

/// Runs `iolab trace export`.
pub fn execute(a: ExportArgs) -> Result<()> {
    if a.run.is_some() && a.format != "job" {
        return Err(Error::usage("--run", "only with --format job"));
    }
    let t = super::db::trace_arg(&a.trace, &a.db)?;
    let dir = a.dir.as_deref();
    let wrote_files = t.files.iter().any(|f| {
        f.of(iolab::trace::calls::Class::Write).count > 0
            && std::fs::metadata(&f.path).is_ok_and(|m| m.is_file())
    });
    if dir.is_none() && a.run.is_none() && wrote_files {
        eprintln!(
            "iolab: note: the {} names the traced files themselves, and the program wrote: \
             give --dir DIR to point it at copies",
            if a.format == "iolog" { "iolog" } else { "job" }
        );
    }
    if a.format == "iolog" {
        return match &a.output {
            Some(out) => {
                iolog::write(&t, out, dir)?;
                Ok(())
            }
            None => match &iolog::export(&t, dir)?[..] {
                [one] => {
                    print!("{}", one.text);
                    Ok(())
                }
                [] => Err(Error::usage(
                    a.trace.display().to_string(),
                    "no thread read or wrote a known file at a known offset: nothing to replay",
                )),
                many => Err(Error::usage(
                    "--format iolog",
                    format!(
                        "{} threads did I/O: give -o PREFIX for their logs and the job that replays them",
                        many.len()
                    ),
                )),
            },
        };
    }
    let Some(run_dir) = &a.run else {
        let text = job::derive(&t, dir)?.text();
        match &a.output {
            Some(out) => iolog::write_new(out, &text)?,
            None => print!("{text}"),
        }
        return Ok(());
    };
    if let Some(out) = a.output.as_ref().filter(|o| o.exists()) {
        return Err(iolab::trace::TraceError::io(
            out,
            std::io::Error::from(std::io::ErrorKind::AlreadyExists),
        )
        .into());
    }
    let stop = StopFlag::on_signals().map_err(|e| Error::usage("signals", e.to_string()))?;
    let im = imitate::run(&t, run_dir, &stop)?;
    if let Some(out) = &a.output {
        iolog::write_new(out, &im.job.text())?;
    }
    if a.output_format == "json" {
        print!("{}", pretty(&trace_pattern::imitation_value(&im.rows)));
    } else {
        print!("{}", trace_pattern::imitation(&im.rows).text());
    }
    Ok(())
}
