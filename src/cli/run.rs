//! `iolab run`: fio's command line and job files, iolab's output.

use super::{Stderr, db, fio_flags, progress::Shown, write_out};
use iolab::error::RunError;
use iolab::profile::Profiler;
use iolab::render::{self, fio_iolog, fio_logs};
use iolab::runner::{self, Observer, Progress, RunOptions};
use iolab::{Error, Result, job};
use std::path::{Path, PathBuf};
use std::time::Duration;

const AFTER_HELP: &str = "\
Job options are fio's, written --key=value (each --name=NAME starts a job;
options before the first --name apply to every job) or in fio job files.
Supported options: docs/fio-compat.md. iolab's own job keys:
  --prefetch=N        posix_fadvise(WILLNEED) each read N I/Os ahead
  --cache=cold|warm|keep   page-cache state before each repetition
  --repeat=N          run N times; each repetition reported, then combined

Examples:
  iolab run --name=t --filename=/tmp/f --size=64M --rw=randread --bs=4k
  iolab run --name=q --filename=/data/f --size=1G --rw=randread --bs=4k \\
            --ioengine=io_uring --iodepth=32 --direct=1 --runtime=10s
  iolab run --flamegraph read.svg --name=c --filename=/tmp/f --size=1G --rw=read
  iolab run --name=p --filename=/data/big --size=1G --rw=randread --bs=8k \\
            --number_ios=20000 --prefetch=20 --cache=cold
  iolab run job.fio --output-format=json --output=result.json
  iolab run --name=s --filename=/tmp/f --size=3500000B --bsrange=50-300 \\
            --rw=randread --loops=100 --repeat=5 --cache=keep

fio's global flags:
  iolab run job.fio --output-format=terse,json+   terse line, then json+ (fio's order)
  iolab run job.fio --minimal                     one terse (v3) line per job
  iolab run job.fio --append-terse --terse-version=3   the terse line, then the text
  iolab run job.fio --section=reads --section=writes   only these jobs ([global] applies)
  iolab run job.fio --parse-only                  check the jobs, run nothing
  iolab run job.fio --readonly                    refuse any job that would write
  iolab run job.fio --showcmd                     the job file as one command line
  iolab run --cmdhelp=bs                          help for a job option (--cmdhelp: all)
  iolab run --enghelp=io_uring,hipri              engines, an engine's options, one option
  iolab run --inflate-log=job_bw.1.log.fz         a log stored compressed, as text
  iolab run job.fio --eta=always --eta-interval=2s    progress lines also off a terminal
  iolab run job.fio --eta-newline=5 --status-interval=10 --debug=io --alloc-size=32768
                                                  progress as a line every 5 s; the rest
                                                  accepted as fio's: iolab prints no
                                                  periodic status, no debug log
  iolab run job.fio --verbose                     also say on stderr what was stored, written

Exit codes: see `iolab --help`; an interrupted run prints its partial results.";

/// The help's last part: the examples, and the engines from the registry.
fn after_help() -> String {
    let engines = iolab::registry::names(iolab::engine::ENGINES).join(", ");
    let formats = iolab::registry::names(iolab::render::FORMATS).join(", ");
    format!(
        "{AFTER_HELP}\n\nEngines (--ioengine=NAME): {engines}; `iolab list engines` says what each needs.\nOutput formats (--output-format=F[,F...]): {formats}; `iolab list formats`."
    )
}

/// Options of `iolab run` itself (all other arguments are job options).
#[derive(Debug, clap::Args)]
#[command(after_help = after_help())]
pub struct RunArgs {
    /// Output format, or several as a comma list (`json,normal`,
    /// `terse,json+`): each is printed, in fio's order (terse, json, normal,
    /// then iolab's own). Given twice, the last one wins, as fio.
    #[arg(long, default_value = "normal", value_parser = fio_flags::output_formats,
          value_name = "FORMAT[,FORMAT...]", overrides_with_all = ["output_format", "minimal"])]
    pub output_format: String,
    /// Write the output to FILE instead of stdout (fio's -o/--output).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Allow writing to files iolab did not lay out, and to block devices.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// With cache=cold, also drop the whole page cache (needs root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Most threads to start: clones (numjobs) of all jobs together. fio's limit is 4096.
    #[arg(long, value_name = "N", default_value_t = job::MAX_JOBS,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(job::MAX_JOBS_LIMIT)))]
    pub max_jobs: u32,
    /// Sample the timed part of the run with perf and write an SVG flamegraph to FILE.
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Say on stderr what was stored and written, and the warnings (a
    /// successful run prints nothing on stderr without it).
    #[arg(long)]
    pub verbose: bool,
    /// Run the job on each of these hosts at once (comma list), one rank
    /// each, every rank on its own files (the rank ends each file name);
    /// all start at one barrier; one merged run is shown and stored.
    #[arg(long, value_name = "HOST[,HOST...]", value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// How --hosts starts a worker: words separated by spaces, {host}
    /// replaced by each host, followed by the worker command.
    #[arg(
        long,
        value_name = "CMD",
        default_value = "ssh {host}",
        requires = "hosts"
    )]
    pub launcher: String,
    /// The worker command after the launcher's words (default: this
    /// executable's own path, then `worker`).
    #[arg(long, value_name = "CMD", requires = "hosts")]
    pub worker_cmd: Option<String>,
    /// With --hosts or under MPI: stop every rank when the first one
    /// finishes (IOR's stonewalling), so all ranks measure the same
    /// interval and slow ranks do not stretch the aggregate.
    #[arg(long)]
    pub stonewall_ranks: bool,
    /// fio's global flags.
    #[command(flatten)]
    pub fio: fio_flags::FioFlags,
    /// Where the results go.
    #[command(flatten)]
    pub store: db::StoreOpts,
    /// Job files and fio job options (--name=..., --rw=..., ...).
    #[arg(value_name = "JOB", allow_hyphen_values = true)]
    pub jobs: Vec<String>,
}

/// iolab's own flags of `run` (those clap parses) that take a value;
/// everything else is a job option. fio's global flags are in
/// [`fio_flags::VALUED`] and [`fio_flags::FLAGS`].
pub const OWN_VALUED: &[&str] = &[
    "--output-format",
    "--output",
    "-o",
    "--max-jobs",
    "--flamegraph",
    "--label",
    "--db",
    "--hosts",
    "--launcher",
    "--worker-cmd",
];
/// iolab's own flags of `run` that take no value.
pub const OWN_FLAGS: &[&str] = &[
    "--allow-overwrite",
    "--drop-caches",
    "--no-store",
    "--verbose",
    "--stonewall-ranks",
    "--help",
    "-h",
];

/// Every flag of `run`, iolab's and fio's, for "did you mean".
pub fn own_flags() -> Vec<&'static str> {
    [OWN_VALUED, OWN_FLAGS, fio_flags::VALUED, fio_flags::FLAGS].concat()
}

/// Every flag of `run` that takes a value (iolab's and fio's).
pub fn valued(flag: &str) -> bool {
    OWN_VALUED.contains(&flag) || fio_flags::VALUED.contains(&flag)
}

/// Every flag of `run` that may stand alone (iolab's and fio's).
pub fn flag(arg: &str) -> bool {
    OWN_FLAGS.contains(&arg) || fio_flags::FLAGS.contains(&arg)
}

/// Runs `iolab run`.
pub fn execute(args: RunArgs, job_args: &[String]) -> Result<()> {
    let fio = &args.fio;
    super::suggest::own_flag_slip(job_args, &own_flags())?;
    if let Some(f) = job_args.iter().find(|a| *a == "-f" || a.starts_with("-f=")) {
        // Every other command takes its format as -f; run follows fio, whose -f is
        // --append-terse: the short form is refused rather than read either way.
        return Err(Error::usage(
            f.as_str(),
            "iolab run writes the format as --output-format=FORMAT, as fio does (fio's -f is --append-terse)",
        ));
    }
    if let Some(what) = &fio.cmdhelp {
        return write_out(&fio_flags::cmdhelp(what)?, None);
    }
    if let Some(what) = &fio.enghelp {
        return write_out(&fio_flags::enghelp(what)?, None);
    }
    if let Some(fz) = &fio.inflate_log {
        return write_out(&fio_flags::inflate_log(fz)?, None);
    }
    if fio.showcmd {
        let files = job::cmdline::parse(job_args)?.files;
        return write_out(&fio_flags::showcmd(&files, &fio.section)?, None);
    }
    let formats = fio_flags::formats(&args.output_format, fio)?;
    if fio_flags::debugs(fio, "parse") {
        // fio's debug log goes to stdout: `parse    PID text`.
        let pid = std::process::id();
        let lines: String = (job::parse_debug(job_args)?.iter())
            .map(|l| format!("parse    {pid:<5} {l}\n"))
            .collect();
        write_out(&lines, None)?;
    }
    let mut jobs = match job::jobs_from_args_in(job_args, args.max_jobs, &fio.section) {
        // fio parses global options alone without complaint.
        Err(e) if fio.parse_only && matches!(*e.problem, job::JobProblem::NoJob) => return Ok(()),
        jobs => jobs?,
    };
    if fio.readonly {
        runner::readonly::check(&jobs)?;
    }
    if let Some(dir) = &fio.aux_path {
        if !dir.is_dir() {
            return Err(Error::usage(
                "--aux-path",
                format!("{} is not a directory", dir.display()),
            ));
        }
        for j in &mut jobs {
            j.verify.aux_dir = Some(dir.clone());
        }
    }
    if fio.parse_only {
        return Ok(());
    }
    for (opt, out) in [
        ("--output", &args.output),
        ("--flamegraph", &args.flamegraph),
    ] {
        if let Some(out) = out {
            check_out_dir(opt, out)?;
        }
    }
    if args.stonewall_ranks && args.hosts.is_empty() && iolab::dist::mpi::launched().is_none() {
        return Err(Error::usage(
            "--stonewall-ranks",
            "stops ranks when the first is done: give --hosts, or start iolab with mpirun or srun",
        ));
    }
    if let Some(launcher) = iolab::dist::mpi::launched() {
        return super::run_hosts::under_mpi(&args, job_args, &formats, launcher);
    }
    let mut store = args.store.open()?;
    let stop = super::stop_on_signals()?;
    if !args.hosts.is_empty() {
        return super::run_hosts::execute(&args, job_args, &formats, store.as_mut(), &stop);
    }
    let opts = RunOptions {
        allow_overwrite: args.allow_overwrite,
        drop_caches: args.drop_caches,
    };
    let mut flame = Flame {
        profiler: None,
        wanted: args.flamegraph.is_some(),
    };
    let mut shown = Shown::new().lines_every(
        Duration::from_millis(fio.eta_newline.or(fio.eta_interval).unwrap_or(1000)),
        fio.eta_newline.is_some(),
    );
    let result = runner::run_with(jobs, &opts, &stop, &mut flame, &mut shown)?;
    // Without --verbose, diagnostics of a run that worked stay off stderr
    // (fio's test harness fails a run whose stderr is not empty): the
    // warnings are in the output itself. An interrupted run (exit 130)
    // still says where its partial results went.
    let loud = args.verbose || result.interrupted;
    let say = |what: &str| {
        if loud {
            Stderr.step(what);
        }
    };
    for w in &result.warnings {
        say(&format!("warning: {w}"));
    }
    let here = super::here_showing(&formats, || Ok(render::here::run_files(&result)))?;
    let text = formats
        .iter()
        .map(|f| render::run(&result, f, &here))
        .collect::<Result<String>>()?;
    write_out(&text, args.output.as_deref())?;
    let command = db::command_line();
    // A run that cannot be stored still shows its results and writes its
    // files; the failure is the command's error at the end (exit 1).
    let mut not_stored = None;
    if let Some(st) = &mut store {
        match st.insert_run(&result, &command, args.store.label(), None) {
            Ok(id) => say(&format!("stored as run {id} in {}", st.path().display())),
            Err(e) => not_stored = Some(e),
        }
    }
    if let (Some(p), Some(svg)) = (flame.profiler.take(), &args.flamegraph) {
        let n = p.finish(svg, &command)?;
        say(&format!(
            "flamegraph ({n} distinct stacks) written to {}",
            svg.display()
        ));
    }
    for log in fio_logs::logs(&result) {
        if log.append {
            append_log(&log.path, |w| log.write_to(w))?;
        } else {
            iolab::sys::fs::write_atomic_with(&log.path, |tmp| {
                let mut w = std::io::BufWriter::new(tmp.as_file());
                log.write_to(&mut w)?;
                std::io::Write::flush(&mut w)
            })?;
        }
        say(&format!("wrote {}", log.path.display()));
    }
    for log in fio_iolog::iolog_files(&result) {
        append_log(&log.path, |w| log.write_to(w))?;
        say(&format!("wrote {}", log.path.display()));
    }
    if args.fio.bandwidth_log {
        for (path, text) in fio_logs::aggregate_bw(&result) {
            iolab::sys::fs::write_atomic(&path, text.as_bytes())?;
            say(&format!("wrote {}", path.display()));
        }
    }
    if result.interrupted {
        eprintln!("iolab: the results above cover only the part that ran");
    }
    result.complete(&stop)?;
    not_stored.map_or(Ok(()), |e| Err(e.into()))
}

/// Adds a log at the end of its file (fio's `per_job_logs=0`).
fn append_log(
    path: &std::path::Path,
    write_to: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let fail = |e| Error::io(format!("cannot write {}", path.display()), e);
    let f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(fail)?;
    let mut w = std::io::BufWriter::new(f);
    write_to(&mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(fail)
}

/// Profiles the timed part of the run when --flamegraph is given.
struct Flame {
    profiler: Option<Profiler>,
    wanted: bool,
}

impl Observer for Flame {
    fn timed_start(&mut self) -> std::result::Result<(), RunError> {
        if self.wanted {
            self.profiler = Some(Profiler::start().map_err(|e| match e {
                RunError::Tool { problem, .. } => RunError::tool("--flamegraph", problem),
                other => other,
            })?);
        }
        Ok(())
    }

    fn untimed_start(&mut self) {
        if let Some(p) = &mut self.profiler {
            p.pause();
        }
    }

    fn untimed_end(&mut self) {
        if let Some(p) = &mut self.profiler {
            p.resume();
        }
    }
}

/// The directory of an output file must exist.
fn check_out_dir(opt: &str, out: &Path) -> Result<()> {
    if out.is_dir() {
        return Err(Error::usage(
            format!("{opt} {}", out.display()),
            "is a directory; name a file",
        ));
    }
    iolab::sys::fs::replaceable(out)?;
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(Error::usage(
            format!("{opt} {}", out.display()),
            format!("directory {} does not exist", dir.display()),
        )),
        _ => Ok(()),
    }
}
