//! `iolab sweep`: one job run over the cross product of `--vary` values,
//! every point stored, a table like seed 002's and a plot.

use super::{Stderr, check_picture, db, progress::Shown};
use iolab::Result;
use iolab::analysis::sweep::{Sweep, metric_named};
use iolab::render::chart::ImageFormat;
use iolab::render::sweep::{chart, table};
use iolab::runner::Progress;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
JOB is a fio job file and/or fio options (--name=... --rw=...), as for `iolab run`.
KEY is any job option (applied to every job), or a variable the job file uses
as ${KEY}. VALUES: 1..8 | 1..16:2 (step) | 1..64:x2 (doubling) | 4k,16k,64k.

Examples:
  iolab sweep --vary numjobs=1..8 --name=small --filename=/tmp/irmin.dat \\
      --size=3500000B --bsrange=50-300 --rw=randread --number_ios=200000 --thread
  iolab sweep job.fio --vary threads=1..16:x2 --vary bs=4k,64k --repeat 3 --plot bw.svg
  iolab sweep job.fio --vary iodepth=1..32:x2 --metric p99_us --plot p99.png

Metrics: time_s ops bytes iops bw_mib_s p50_us p99_us cpu_pct dev_reads dev_writes";

/// Options of `iolab sweep` (everything else is the job).
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct SweepArgs {
    /// KEY=VALUES to vary; repeat for a cross product (first varies slowest).
    #[arg(long, required = true, value_name = "KEY=VALUES")]
    pub vary: Vec<String>,
    /// Repetitions per point (the job's repeat=); spread shown and plotted.
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
    /// Key figure for the plot and the spread column.
    #[arg(long, default_value = "iops", value_name = "METRIC")]
    pub metric: String,
    /// Draw the metric against the first swept key (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Table format (`iolab list formats`).
    #[arg(short = 'f', long = "output-format", alias = "format", default_value = "normal", value_parser = super::formats(), value_name = "FORMAT")]
    pub format: String,
    /// Where the results go.
    #[command(flatten)]
    pub store: db::StoreOpts,
    /// Job files and fio job options.
    #[arg(value_name = "JOB", allow_hyphen_values = true)]
    pub jobs: Vec<String>,
}

/// iolab's own options of `sweep` (the rest is the job).
pub const OWN_VALUED: &[&str] = &[
    "--vary",
    "--repeat",
    "--metric",
    "--plot",
    "--label",
    "--output-format",
    "-f",
    "--format",
    "--db",
];
/// iolab's own flags of `sweep`.
pub const OWN_FLAGS: &[&str] = &["--no-store", "--help", "-h"];

/// Runs `iolab sweep`.
pub fn execute(a: SweepArgs, job_args: &[String]) -> Result<()> {
    super::suggest::own_flag_slip(job_args, &[OWN_VALUED, OWN_FLAGS].concat())?;
    let mut job_args = job_args.to_vec();
    job_args.extend(a.jobs.iter().cloned());
    let metric = metric_named("--metric", &a.metric)?;
    if let Some(p) = &a.plot {
        check_picture("--plot", p)?;
    }
    let sweep = Sweep::new(&job_args, &a.vary, a.repeat)?;
    let mut store = a.store.open()?;
    let stop = super::stop_on_signals()?;
    let command = db::command_line();
    let target = db::target(store.as_mut(), a.store.label(), &command);
    let result = sweep.run(target, &stop, &mut Shown::new())?;
    if !result.done.is_empty() {
        super::write_out(
            &iolab::render::table_painted(&table(&result, metric), &a.format, super::paint())?,
            None,
        )?;
        if let (Some(sid), None) = (result.sweep_id, &result.not_stored) {
            eprintln!(
                "iolab: stored sweep {sid} ({} points): iolab history --sweep {sid}",
                result.done.len()
            );
        }
        if let Some(path) = &a.plot {
            let note = super::here(&[]).footnote();
            let picture = chart(&result, metric).image(ImageFormat::of(path)?, &note)?;
            iolab::sys::fs::write_atomic(path, &picture)?;
            eprintln!("iolab: plot written to {}", path.display());
        }
    }
    match result.failure {
        None => result.not_stored.map_or(Ok(()), |e| Err(e.into())),
        Some(e) => {
            let e = iolab::Error::from(e);
            if e.is_interrupt() {
                eprintln!("iolab: the table shows the points that finished");
            } else {
                eprintln!(
                    "iolab: sweep point {}/{} failed",
                    result.done.len() + 1,
                    result.total
                );
            }
            if let Some(s) = &result.not_stored {
                Stderr.warning(&format!("points not stored: {s}"));
            }
            Err(e)
        }
    }
}
