//! `iolab cache status|warm|evict|lock`: vmtouch's jobs, with JSON.

use super::Stderr;
use iolab::error::RunError;
use iolab::metrics::format::bytes_iec;
use iolab::render::cache::{evicted, not_evicted, status_json, status_text, warmed, warmed_json};
use iolab::render::json::pretty;
use iolab::runner::Progress;
use iolab::sys::pagecache;
use iolab::{Error, Result};
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
Directories are walked recursively; symlinks are not followed.
Residency comes from cachestat(2) (Linux 6.5+: also dirty, writeback and evicted
pages); without it from mincore(2), which sees only resident pages of files it
can map. The -v map is always mincore's: one cell per share of the file,
O = all pages resident, o = some, blank = none.

Examples:
  iolab cache status /var/log/app -v
  iolab cache warm data/*.log
  iolab cache warm logs/ --newest 3 --interval 10s   # keep the 3 newest resident
  iolab cache evict big.dat -f json
  iolab cache lock hot.idx                      # until Ctrl-C
  iolab cache lock hot.idx --daemon --pid-file /run/iolab-lock.pid";

/// `iolab cache ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct CacheArgs {
    /// What to do.
    #[command(subcommand)]
    pub cmd: CacheCmd,
    /// Output: normal or json.
    #[arg(
        short = 'f',
        long = "output-format",
        short_alias = 'o',
        value_enum,
        default_value = "normal",
        global = true
    )]
    pub format: CacheFormat,
}

/// Cache results come as vmtouch's text or as JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CacheFormat {
    /// vmtouch's lines.
    Normal,
    /// One JSON document.
    Json,
}

/// Cache commands.
#[derive(Debug, clap::Subcommand)]
pub enum CacheCmd {
    /// Pages of each file in the page cache, and the total.
    Status {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Per file: a residency map as vmtouch -v draws it.
        #[arg(short, long)]
        verbose: bool,
    },
    /// Read files into the page cache (again every --interval: keep them there).
    Warm {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only the N most recently modified files (walked again each round,
        /// so new files take the place of old ones).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        newest: Option<u64>,
        /// Warm again every TIME (10s, 500ms, 1m) until Ctrl-C or SIGTERM.
        #[arg(long, value_name = "TIME", value_parser = interval_ms)]
        interval: Option<u64>,
        /// With --interval: stop after N rounds.
        #[arg(long, value_name = "N", requires = "interval",
              value_parser = clap::value_parser!(u64).range(1..))]
        rounds: Option<u64>,
    },
    /// Drop files' pages from the page cache (POSIX_FADV_DONTNEED), verified.
    Evict {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// mlock files into memory and hold them until interrupted.
    Lock {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Run in the background (needs --pid-file).
        #[arg(long, requires = "pid_file")]
        daemon: bool,
        /// Write the holding process's id here; removed when it ends.
        #[arg(long, value_name = "FILE")]
        pid_file: Option<PathBuf>,
    },
}

/// Runs `iolab cache`.
pub fn execute(a: CacheArgs) -> Result<()> {
    let json = a.format == CacheFormat::Json;
    let out = match &a.cmd {
        CacheCmd::Status { paths, verbose } => {
            let s = usage_if_missing(pagecache::survey(paths, *verbose))?;
            let page = iolab::sys::machine::page_size();
            if json {
                pretty(&status_json(&s, page))
            } else {
                status_text(&s, *verbose, page)
            }
        }
        CacheCmd::Warm {
            paths,
            newest,
            interval,
            rounds,
        } => {
            let newest = newest.map(|n| n as usize);
            let Some(ms) = interval else {
                return super::write_out(
                    &warmed(&usage_if_missing(pagecache::warm_all(paths, newest))?, json),
                    None,
                );
            };
            return keep_warm(paths, newest, *ms, *rounds, json);
        }
        CacheCmd::Evict { paths } => {
            let e = usage_if_missing(pagecache::evict_all(paths))?;
            for w in not_evicted(&e) {
                Stderr.warning(&w);
            }
            evicted(&e, json)
        }
        CacheCmd::Lock {
            paths,
            daemon,
            pid_file,
        } => return lock(paths, *daemon, pid_file.as_deref()),
    };
    super::write_out(&out, None)
}

/// `cache warm --interval`: warms, then again every `ms`, one line (or one
/// JSON document) per round, until interrupted or `rounds` are done.
fn keep_warm(
    paths: &[PathBuf],
    newest: Option<usize>,
    ms: u64,
    rounds: Option<u64>,
    json: bool,
) -> Result<()> {
    let stop = super::stop_on_signals()?;
    let mut round = 0;
    loop {
        round += 1;
        let w = usage_if_missing(pagecache::warm_all(paths, newest))?;
        let line = if json {
            // JSON lines: one compact document per round.
            let mut doc = serde_json::json!({"round": round, "warmed": warmed_json(&w)});
            if newest.is_some() {
                let files = w.after.files.iter().map(|f| f.path.display().to_string());
                doc["files"] = files.collect::<Vec<_>>().into();
            }
            format!("{doc}\n")
        } else {
            format!("round {round}: {}", warmed(&w, false))
        };
        super::write_out(&line, None)?;
        if rounds.is_some_and(|n| round >= n) {
            return Ok(());
        }
        let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
        while std::time::Instant::now() < until {
            if stop.is_set() {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// `--interval`: a time (bare numbers are seconds), at least 10 ms.
fn interval_ms(v: &str) -> std::result::Result<u64, String> {
    let us = iolab::job::units::parse_time_us(v).map_err(|e| e.to_string())?;
    match us / 1000 {
        ms if ms < 10 => Err(format!("'{v}' is too short (at least 10ms)")),
        ms => Ok(ms),
    }
}

/// A path the user named that does not exist is bad usage, not a failure.
fn usage_if_missing<T>(r: iolab::sys::Result<T>) -> Result<T> {
    r.map_err(|e| match Error::from(e) {
        Error::Run(RunError::Io { context, source })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Error::usage(context, source.to_string())
        }
        other => other,
    })
}

fn lock(paths: &[PathBuf], daemon: bool, pid_file: Option<&Path>) -> Result<()> {
    // Check what can be checked while errors still reach the terminal.
    let (files, _) = usage_if_missing(pagecache::collect(paths))?;
    if let Some(p) = pid_file.filter(|p| p.exists()) {
        return Err(Error::usage(
            format!("--pid-file {}", p.display()),
            "exists (another lock running?)",
        ));
    }
    if daemon {
        // SAFETY: daemon() forks; this process has no other threads yet.
        if unsafe { libc::daemon(1, 0) } != 0 {
            return Err(Error::io("daemon", std::io::Error::last_os_error()));
        }
    }
    let stop = super::stop_on_signals()?;
    if let Some(p) = pid_file {
        iolab::sys::fs::write_atomic(p, format!("{}\n", std::process::id()).as_bytes())?;
    }
    let held = pagecache::lock_all(&files);
    let result = held.map(|held| {
        let bytes: usize = held.iter().map(|l| l.len()).sum();
        eprintln!(
            "iolab: locked {} files ({}) in memory; {} to release",
            held.len(),
            bytes_iec(bytes as f64),
            if daemon { "SIGTERM" } else { "Ctrl-C" }
        );
        while !stop.is_set() {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        drop(held);
        eprintln!("iolab: released");
    });
    if let Some(p) = pid_file {
        let _ = std::fs::remove_file(p);
    }
    Ok(result?)
}
