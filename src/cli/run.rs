//! `iolab run`: fio's command line and job files, iolab's output.

use iolab::profile::Profiler;
use iolab::render::{OutputFormat, exporter};
use iolab::runner::{self, Observer, RunOptions, StopFlag};
use iolab::{Error, job};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Job options are fio's, written --key=value (each --name=NAME starts a job;
options before the first --name apply to every job) or in fio job files.
Supported options: docs/fio-compat.md. iolab's own job keys:
  --prefetch=N        posix_fadvise(WILLNEED) each read N I/Os ahead
  --cache=cold|warm|keep   page-cache state before each repetition
  --repeat=N          run N times; each repetition reported, then combined

Examples:
  iolab run --name=t --filename=/tmp/f --size=64M --rw=randread --bs=4k
  iolab run --name=q --filename=/data/f --size=1G --rw=randread --bs=4k \
            --ioengine=io_uring --iodepth=32 --direct=1 --runtime=10s
  iolab run --flamegraph read.svg --name=c --filename=/tmp/f --size=1G --rw=read
  iolab run --name=p --filename=/data/big --size=1G --rw=randread --bs=8k \\
            --number_ios=20000 --prefetch=20 --cache=cold
  iolab run job.fio --output-format=json --output=result.json
  iolab run --name=s --filename=/tmp/f --size=3500000B --bsrange=50-300 \\
            --rw=randread --loops=100 --repeat=5 --cache=keep

Exit codes: 0 done, 1 failed (message on stderr), 2 bad input, 130 interrupted
(partial results are printed).";

/// Options of `iolab run` itself (all other arguments are job options).
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct RunArgs {
    /// Output format: normal (text with log2 histograms), json (fio's schema), json+ (with bins).
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: OutputFormat,
    /// Write the output to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Allow writing to files iolab did not lay out, and to block devices.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// With cache=cold, also drop the whole page cache (needs root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Sample the timed part of the run with perf and write an SVG flamegraph to FILE.
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Where the results go.
    #[command(flatten)]
    pub store: super::db::StoreOpts,
    /// Job files and fio job options (--name=..., --rw=..., ...).
    #[arg(value_name = "JOB", allow_hyphen_values = true)]
    pub jobs: Vec<String>,
}

/// iolab's own flags of `run` (those clap parses); everything else is a job option.
pub const OWN_VALUED: &[&str] = &[
    "--output-format",
    "--output",
    "--flamegraph",
    "--label",
    "--db",
];
pub const OWN_FLAGS: &[&str] = &[
    "--allow-overwrite",
    "--drop-caches",
    "--no-store",
    "--help",
    "-h",
];

/// Splits a subcommand's arguments into iolab's own (`valued` options and
/// `flags`) and the job's, keeping order.
pub fn split_args(args: &[String], valued: &[&str], flags: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut own = Vec::new();
    let mut job = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k);
        if flags.contains(&a.as_str()) {
            own.push(a.clone());
        } else if valued.contains(&key) {
            own.push(a.clone());
            if !a.contains('=')
                && let Some(v) = args.get(i + 1)
            {
                own.push(v.clone());
                i += 1;
            }
        } else {
            job.push(a.clone());
        }
        i += 1;
    }
    (own, job)
}

/// Runs `iolab run` and returns the process exit code.
pub fn execute(args: RunArgs, job_args: &[String]) -> i32 {
    let jobs = match job::jobs_from_args(job_args) {
        Ok(j) => j,
        Err(e) => return super::fail(e, 2),
    };
    if let Some(out) = &args.output
        && let Err(m) = check_out_dir("--output", out)
    {
        return super::fail(m, 2);
    }
    let mut store = match args.store.open() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let stop = StopFlag::new();
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(sig, stop.atomic()) {
            return super::fail(format!("cannot install signal handler: {e}"), 1);
        }
    }
    let opts = RunOptions {
        allow_overwrite: args.allow_overwrite,
        drop_caches: args.drop_caches,
    };
    if let Some(svg) = &args.flamegraph
        && let Err(m) = check_out_dir("--flamegraph", svg)
    {
        return super::fail(m, 2);
    }
    let title = format!("iolab run {}", job_args.join(" "));
    let mut flame = Flame {
        profiler: None,
        wanted: args.flamegraph.is_some(),
    };
    let result = match runner::run_observed(jobs, &opts, &stop, &mut flame) {
        Ok(r) => r,
        Err(Error::Interrupted) => {
            eprintln!("iolab: interrupted before any I/O was measured");
            return 130;
        }
        Err(e @ (Error::Input(_) | Error::Refused(_))) => return super::fail(e, 2),
        Err(e) => return super::fail(e, 1),
    };
    for w in &result.warnings {
        eprintln!("iolab: warning: {w}");
    }
    let text = exporter(args.output_format).render(&result);
    if let Err(e) = super::write_out(&text, args.output.as_deref()) {
        return super::fail(e, 1);
    }
    if let Some(st) = &mut store {
        let command = format!("iolab run {}", job_args.join(" "));
        match st.insert_run(&result, &command, args.store.label(), None) {
            Ok(id) => eprintln!("iolab: stored as run {id} in {}", st.path().display()),
            Err(e) => eprintln!("iolab: warning: run not stored: {e}"),
        }
    }
    if let (Some(p), Some(svg)) = (flame.profiler.take(), &args.flamegraph) {
        match p.finish(svg, &title) {
            Ok(n) => eprintln!(
                "iolab: flamegraph ({n} distinct stacks) written to {}",
                svg.display()
            ),
            Err(e) => return super::fail(format!("--flamegraph: {e}"), 1),
        }
    }
    for (path, body) in iolab::render::fio_logs::render(&result) {
        match std::fs::write(&path, body) {
            Ok(()) => eprintln!("iolab: wrote {}", path.display()),
            Err(e) => return super::fail(format!("cannot write log {}: {e}", path.display()), 1),
        }
    }
    let errors = result.errors();
    if result.interrupted {
        eprintln!("iolab: interrupted: partial results printed");
        return 130;
    }
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("iolab: error: {e}");
        }
        return 1;
    }
    0
}

/// Profiles the timed part of the run when --flamegraph is given.
struct Flame {
    profiler: Option<Profiler>,
    wanted: bool,
}

impl Observer for Flame {
    fn timed_start(&mut self) -> Result<(), String> {
        if self.wanted {
            self.profiler = Some(Profiler::start().map_err(|e| format!("--flamegraph: {e}"))?);
        }
        Ok(())
    }
}

/// The directory of an output file must exist.
fn check_out_dir(opt: &str, out: &std::path::Path) -> Result<(), String> {
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(format!(
            "{opt} {}: directory {} does not exist",
            out.display(),
            dir.display()
        )),
        _ => Ok(()),
    }
}
