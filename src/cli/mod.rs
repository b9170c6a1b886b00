//! The command line: clap definitions, one file per subcommand, each of
//! which only parses, calls the library and renders. The only place that
//! prints.

pub mod cache;
pub mod compare;
pub mod completions;
pub mod db;
pub mod disk;
pub mod exec;
pub mod explain;
pub mod fio_flags;
pub mod fio_front;
pub mod history;
pub mod import;
pub mod lab;
pub mod list;
pub mod man;
pub mod plot;
pub mod progress;
pub mod replay;
pub mod report;
pub mod run;
pub mod show;
pub mod suggest;
pub mod sweep;
pub mod trace;
pub mod trace_export;
pub mod trace_import;
pub mod tree;
pub mod worker;

use clap::{Parser, Subcommand};
use iolab::error::RunError;
use iolab::runner::{Progress, StopFlag};
use iolab::{Error, Result};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

const EXIT_CODES: &str = "\
Exit codes (every subcommand): 0 done, 1 failed (I/O error, tool or database
failure), 2 bad usage or job file, 3 file system full (ENOSPC), 4 refused as
unsafe (would write data iolab did not create, or remove a tree iolab did not
make), 130 SIGINT, 143 SIGTERM.";

/// iolab: a laboratory for I/O effects.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    /// Colour in tables: auto (only on a terminal, and not when NO_COLOR
    /// is set), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Live progress on stderr (fio's --eta): auto on a terminal, always
    /// also elsewhere (plain lines, at most one a second), never.
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub eta: progress::Eta,
    /// No progress and no `iolab: ...` step lines on stderr (warnings and
    /// errors still show).
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

/// The global flags that take a value (they may stand anywhere, also
/// among a job's fio options).
pub const GLOBAL_VALUED: &[&str] = &["--eta", "--color"];
/// The global flags without a value.
pub const GLOBAL_FLAGS: &[&str] = &["--quiet", "-q"];

/// When to colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always (even with `NO_COLOR`, as no-color.org asks of an explicit flag).
    Always,
    /// Never.
    Never,
}

/// Colour is on (set once from `--color` before the command runs).
static COLOR: AtomicBool = AtomicBool::new(false);

/// Decides colour from `--color`, `NO_COLOR` and whether stdout is a
/// terminal; the renderers ask [`paint`].
pub fn set_color(choice: ColorChoice) {
    let on = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    COLOR.store(on, Ordering::Relaxed);
}

/// The painter for what goes to stdout.
pub fn paint() -> iolab::render::style::Paint {
    iolab::render::style::Paint {
        on: COLOR.load(Ordering::Relaxed),
    }
}

/// The width tables fit: the terminal's when stdout is one, else
/// `$COLUMNS`, else 100.
pub fn table_width() -> u16 {
    if std::io::stdout().is_terminal()
        && let Some(w) = iolab::sys::tty_size::columns()
    {
        return w;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|w| *w >= 40)
        .unwrap_or(100)
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// The classic I/O experiments, one command each (`iolab lab list`).
    Lab(lab::LabArgs),
    /// Run fio-compatible jobs (job files and/or --name=... options), every op timed.
    Run(run::RunArgs),
    /// Run a job over the cross product of --vary values; table and plot.
    Sweep(sweep::SweepArgs),
    /// Compare two runs, labels, or job files run now (interleaved), with statistics.
    Compare(compare::CompareArgs),
    /// Say why a stored run went as it did: its dominant limit, with the figures.
    Explain(explain::ExplainArgs),
    /// Measure this machine's ceilings (device, page cache, per call) for explain.
    Calibrate(explain::CalibrateArgs),
    /// Metadata trees, fdtree-style: create, walk, read, copy (rsync -a), remove.
    Tree(tree::TreeArgs),
    /// Page cache, vmtouch-style: status, warm, evict, lock.
    Cache(cache::CacheArgs),
    /// Slow and faulty disks on demand (delays, errors, caps, power loss).
    Disk(disk::DiskArgs),
    /// Run your own program as the workload: cache state, time, counters, stored.
    Exec(exec::ExecArgs),
    /// Record what a program does (eBPF): per-call histograms, every event; export, import.
    Trace(trace::TraceArgs),
    /// Issue a trace's calls again, per thread, at its pace or as fast as possible.
    Replay(replay::ReplayArgs),
    /// What `iolab run --hosts` starts on each host (JSON lines on stdin/stdout).
    Worker(worker::WorkerArgs),
    /// List stored runs: id, when, label, job, key figures.
    History(history::HistoryArgs),
    /// Show one stored run in full (normal, json or json+).
    Show(show::ShowArgs),
    /// Export stored runs as JSON, CSV or Markdown.
    Export(show::ExportArgs),
    /// Store fio JSON results as runs, to compare them with iolab's.
    Import(import::ImportArgs),
    /// Draw one picture of a stored run (latency histogram, percentiles, time series).
    Plot(plot::PlotArgs),
    /// Write stored runs as one self-contained HTML page with plots.
    Report(report::ReportArgs),
    /// Delete stored runs.
    Rm(history::RmArgs),
    /// What iolab has: engines, output formats, labs, counter sources.
    List(list::ListArgs),
    /// Shell completion script for bash, zsh or fish, on stdout.
    Completions(completions::CompletionsArgs),
    /// The manual page (roff) on stdout, or one page per subcommand with --dir.
    Man(man::ManArgs),
}

/// Runs one subcommand.
pub fn dispatch(command: Command, job_args: &[String]) -> Result<()> {
    match command {
        Command::Run(a) => run::execute(a, job_args),
        Command::Lab(a) => lab::execute(a),
        Command::Sweep(a) => sweep::execute(a, job_args),
        Command::Compare(a) => compare::execute(a),
        Command::Explain(a) => explain::execute(a),
        Command::Calibrate(a) => explain::calibrate(a),
        Command::Tree(a) => tree::execute(a),
        Command::Cache(a) => cache::execute(a),
        Command::Disk(a) => disk::execute(a),
        Command::Exec(a) => exec::execute(a),
        Command::Trace(a) => trace::execute(a),
        Command::Replay(a) => replay::execute(a),
        Command::Worker(a) => worker::execute(a),
        Command::History(a) => history::history(a),
        Command::Show(a) => show::show(a),
        Command::Export(a) => show::export(a),
        Command::Import(a) => import::import(a),
        Command::Plot(a) => plot::execute(a),
        Command::Report(a) => report::execute(a),
        Command::Rm(a) => history::rm(a),
        Command::List(a) => list::execute(a),
        Command::Completions(a) => completions::execute(a),
        Command::Man(a) => man::execute(a),
    }
}

/// Tells whether an argument is one of a subcommand's own flags.
type IsFlag = fn(&str) -> bool;

/// Splits `iolab run ...` and `iolab sweep ...` into what clap parses
/// (iolab's own options) and the job's fio options, keeping order.
pub fn split_job_args(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let Some(i) = argv.iter().position(|a| a == "run" || a == "sweep") else {
        return (argv.to_vec(), Vec::new());
    };
    // Only global flags (and their values) may stand before the subcommand.
    let before = &argv[1..i];
    let is_value = |k: usize| k > 0 && GLOBAL_VALUED.contains(&before[k - 1].as_str());
    if !(0..before.len()).all(|k| before[k].starts_with('-') || is_value(k)) {
        return (argv.to_vec(), Vec::new());
    }
    let (valued, flags): (IsFlag, IsFlag) = if argv[i] == "run" {
        (run::valued, run::flag)
    } else {
        (
            |f| sweep::OWN_VALUED.contains(&f),
            |f| sweep::OWN_FLAGS.contains(&f),
        )
    };
    let mut own = argv[..=i].to_vec();
    let mut job = Vec::new();
    let mut k = i + 1;
    while k < argv.len() {
        let a = &argv[k];
        let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k);
        if flags(a) || GLOBAL_FLAGS.contains(&a.as_str()) {
            own.push(a.clone());
        } else if valued(key) || GLOBAL_VALUED.contains(&key) {
            own.push(a.clone());
            if !a.contains('=')
                && let Some(v) = argv.get(k + 1)
            {
                own.push(v.clone());
                k += 1;
            }
        } else {
            job.push(a.clone());
        }
        k += 1;
    }
    (own, job)
}

/// Prints an error on stderr: one line per failure, prefixed with `iolab:`.
pub fn show_error(e: &Error) {
    match e {
        Error::Run(RunError::Interrupted { .. }) => eprintln!("iolab: {e}"),
        Error::Run(RunError::RunFailed { errors }) => {
            errors.iter().for_each(|l| eprintln!("iolab: error: {l}"))
        }
        _ => eprintln!("iolab: error: {e}"),
    }
}

/// Shows `e` as a JSON object on stdout (`{"error": {...}}`) when the
/// command was asked for JSON and printed nothing yet: a script reading
/// stdout gets a document either way.
pub fn show_error_json(e: &Error, code: i32) {
    if STDOUT_USED.load(Ordering::Relaxed) {
        return;
    }
    let kind = match code {
        iolab::error::code::USAGE => "usage",
        iolab::error::code::NO_SPACE => "no_space",
        iolab::error::code::REFUSED => "refused",
        c if c > iolab::error::code::SIGNAL_BASE => "interrupted",
        _ => "failed",
    };
    let message = match e {
        Error::Run(RunError::RunFailed { errors }) => errors.join("\n"),
        _ => e.to_string(),
    };
    let doc = serde_json::json!({"error": {"message": message, "kind": kind, "exit_code": code}});
    let _ = write_out(&format!("{doc:#}\n"), None);
}

impl Command {
    /// The command's output was asked for as JSON (json or json+).
    pub fn wants_json(&self) -> bool {
        let format = match self {
            Command::Run(a) => {
                return !a.fio.minimal && a.output_format.split(',').any(|f| f.starts_with("json"));
            }
            Command::Sweep(a) => &a.format,
            Command::Compare(a) => &a.format,
            Command::Tree(a) => &a.common.output_format,
            Command::History(a) => &a.format,
            Command::Show(a) => &a.output_format,
            Command::Export(a) => &a.format,
            Command::Replay(a) => &a.output_format,
            Command::Cache(a) => return matches!(a.format, cache::CacheFormat::Json),
            _ => return false,
        };
        format.starts_with("json")
    }
}

/// Shows steps (unless `--quiet`) and warnings on stderr; no live
/// progress (see [`progress::Shown`] for that).
pub struct Stderr;

impl Progress for Stderr {
    fn step(&mut self, what: &str) {
        if !progress::ui().quiet {
            eprintln!("iolab: {what}");
        }
    }

    fn warning(&mut self, what: &str) {
        eprintln!("iolab: warning: {what}");
    }
}

/// A stop flag raised by SIGINT and SIGTERM.
pub fn stop_on_signals() -> Result<StopFlag> {
    StopFlag::on_signals().map_err(|e| Error::io("cannot install signal handlers", e))
}

/// Something was written to stdout (so an error must not add a second
/// JSON document there).
static STDOUT_USED: AtomicBool = AtomicBool::new(false);
/// Whoever reads stdout went away (`iolab ... | head`): write no more.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout, or to the file `out` (replaced atomically).
/// A reader that went away (a closed pipe) is not an error: the command
/// goes on quietly (its run is still stored, its files still removed).
pub fn write_out(text: &str, out: Option<&std::path::Path>) -> Result<()> {
    match out {
        None if STDOUT_GONE.load(Ordering::Relaxed) => Ok(()),
        None => {
            STDOUT_USED.store(true, Ordering::Relaxed);
            let mut so = std::io::stdout().lock();
            match so.write_all(text.as_bytes()).and_then(|_| so.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    STDOUT_GONE.store(true, Ordering::Relaxed);
                    Ok(())
                }
                r => r.map_err(|e| Error::io("cannot write to stdout", e)),
            }
        }
        Some(path) => Ok(iolab::sys::fs::write_atomic(path, text.as_bytes())?),
    }
}

/// The values of `--output-format`: the output formats of
/// the registry, each with its aliases and help.
pub fn formats() -> clap::builder::PossibleValuesParser {
    formats_of(iolab::render::FORMATS.iter())
}

/// The `-f` choices of the commands that show traces: only the formats
/// with a form for them, so `--help` offers nothing that is refused.
pub fn trace_formats() -> clap::builder::PossibleValuesParser {
    formats_of(iolab::render::trace_formats())
}

/// The `-f` choices of `iolab exec`: the formats with a form for execs.
pub fn exec_formats() -> clap::builder::PossibleValuesParser {
    formats_of(iolab::render::exec_formats())
}

fn formats_of<'a>(
    entries: impl Iterator<Item = &'a iolab::registry::Entry<dyn iolab::render::Exporter>>,
) -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(entries.map(|e| {
        clap::builder::PossibleValue::new(e.name)
            .aliases(e.aliases.iter().copied())
            .help(e.help)
    }))
}

/// Where and when output is made, for render: this machine (with the
/// file systems of `files`), now, times in local time.
pub fn here(files: &[std::path::PathBuf]) -> iolab::render::Here {
    iolab::render::Here::new(
        iolab::sys::environment::Environment::capture(files, iolab::disk::state::injected_at),
        std::time::SystemTime::now(),
        iolab::metrics::format::local_time,
    )
}

/// Where and when a result is shown in `formats`: [`here`], with the
/// file systems of `files()` when one of those formats shows them (only
/// then are they looked up).
pub fn here_showing(
    formats: &[&str],
    files: impl FnOnce() -> Result<Vec<std::path::PathBuf>>,
) -> Result<iolab::render::Here> {
    let mut shows = false;
    for f in formats {
        shows |= iolab::render::shows_files(f)?;
    }
    Ok(here(&if shows { files()? } else { Vec::new() }))
}

/// A picture file must be named `.svg` or `.png`.
pub fn check_picture(opt: &str, path: &std::path::Path) -> Result<()> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg" | "png") => Ok(iolab::sys::fs::replaceable(path)?),
        _ => Err(Error::usage(
            format!("{opt} {}", path.display()),
            "name must end in .svg or .png",
        )),
    }
}
