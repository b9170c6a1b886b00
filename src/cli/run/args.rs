//! The command line of `iolab run`: its own options ([`RunArgs`], its
//! help), and which of the arguments are its flags and which job options.

use crate::cli::{db, fio_flags};
use iolab::job;
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
    /// After the report, say why the run went as it did (`iolab explain`):
    /// its dominant limit with the figures (normal output only).
    #[arg(long)]
    pub explain: bool,
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
    "--explain",
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
