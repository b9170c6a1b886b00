//! `iolab cache status|warm|evict|lock`: vmtouch's jobs, with JSON.

use super::exec::stop_on_signals;
use iolab::sys::pagecache::{self, Residency};
use iolab::render::format::bytes_iec;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

const AFTER_HELP: &str = "\
Directories are walked recursively; symlinks are not followed.
Residency comes from cachestat(2) (Linux 6.5+: also dirty, writeback and evicted
pages); without it from mincore(2), which sees only resident pages of files it
can map. The -v map is always mincore's: one cell per share of the file,
O = all pages resident, o = some, blank = none.

Examples:
  iolab cache status /var/log/app -v
  iolab cache warm data/*.log
  iolab cache evict big.dat -o json
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
        short = 'o',
        long = "output-format",
        value_enum,
        default_value = "normal",
        global = true
    )]
    pub format: super::tree::Format,
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
    /// Read files into the page cache.
    Warm {
        /// Files and directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
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

fn json_out(v: serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(&v).expect("serialise"));
}

/// Runs `iolab cache`.
pub fn execute(a: CacheArgs) -> i32 {
    let paths = match &a.cmd {
        CacheCmd::Status { paths, .. }
        | CacheCmd::Warm { paths }
        | CacheCmd::Evict { paths }
        | CacheCmd::Lock { paths, .. } => paths,
    };
    let (files, dirs) = match pagecache::collect(paths) {
        Ok(v) => v,
        Err(e) => return super::fail(e, 2),
    };
    let json = a.format == super::tree::Format::Json;
    match &a.cmd {
        CacheCmd::Status { verbose, .. } => status(&files, dirs, *verbose, json),
        CacheCmd::Warm { .. } => warm(&files, dirs, json),
        CacheCmd::Evict { .. } => evict(&files, dirs, json),
        CacheCmd::Lock {
            daemon, pid_file, ..
        } => lock(&files, *daemon, pid_file.as_ref()),
    }
}

fn measure(files: &[PathBuf], map: bool) -> Result<Vec<Residency>, String> {
    files
        .iter()
        .map(|f| pagecache::status(f, map).map_err(|e| format!("{}: {e}", f.display())))
        .collect()
}

fn totals(rs: &[Residency]) -> (u64, u64, u64) {
    let pages = rs.iter().map(|r| r.state.pages).sum();
    let cached = rs.iter().map(|r| r.state.cached).sum();
    let size = rs.iter().map(|r| r.size).sum();
    (pages, cached, size)
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn file_json(r: &Residency) -> serde_json::Value {
    json!({
        "path": r.path, "size": r.size, "pages": r.state.pages, "resident": r.state.cached,
        "percent": pct(r.state.cached, r.state.pages), "dirty": r.state.dirty,
        "writeback": r.state.writeback, "evicted": r.state.evicted,
        "recently_evicted": r.state.recently_evicted,
    })
}

fn source_note(rs: &[Residency]) -> &'static str {
    if rs.iter().any(|r| r.state.source == "mincore") {
        "mincore(2) (cachestat unavailable: resident pages only)"
    } else {
        "cachestat(2)"
    }
}

fn status(files: &[PathBuf], dirs: u64, verbose: bool, json: bool) -> i32 {
    let t0 = Instant::now();
    let rs = match measure(files, verbose) {
        Ok(r) => r,
        Err(e) => return super::fail(e, 1),
    };
    let secs = t0.elapsed().as_secs_f64();
    let (pages, cached, size) = totals(&rs);
    let ps = page_size();
    if json {
        json_out(json!({
            "files": rs.iter().map(file_json).collect::<Vec<_>>(),
            "directories": dirs,
            "total": {"files": rs.len(), "pages": pages, "resident": cached, "percent": pct(cached, pages),
                      "size": size, "resident_bytes": cached * ps},
            "source": source_note(&rs), "elapsed_s": secs,
        }));
        return 0;
    }
    if verbose {
        for r in &rs {
            let map = r.map.as_deref().unwrap_or(&[]);
            println!(
                "{}\n[{}] {}/{}",
                r.path.display(),
                pagecache::map_line(map, 60),
                r.state.cached,
                r.state.pages
            );
        }
        println!();
    }
    println!("           Files: {}", rs.len());
    println!("     Directories: {dirs}");
    println!(
        "  Resident Pages: {cached}/{pages}  {}/{}  {:.3}%",
        bytes_iec((cached * ps) as f64),
        bytes_iec(size as f64),
        pct(cached, pages)
    );
    if rs.iter().any(|r| r.state.dirty.unwrap_or(0) > 0) {
        let d: u64 = rs.iter().filter_map(|r| r.state.dirty).sum();
        println!("     Dirty Pages: {d}");
    }
    println!("         Elapsed: {secs:.4} seconds");
    println!("          Source: {}", source_note(&rs));
    0
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as u64 }
}

fn warm(files: &[PathBuf], dirs: u64, json: bool) -> i32 {
    let mut buf = vec![0u8; 1 << 20];
    let t0 = Instant::now();
    let mut bytes = 0;
    for f in files {
        match pagecache::warm(f, &mut buf) {
            Ok(n) => bytes += n,
            Err(e) => return super::fail(format!("{}: {e}", f.display()), 1),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let rs = match measure(files, false) {
        Ok(r) => r,
        Err(e) => return super::fail(e, 1),
    };
    let (pages, cached, _) = totals(&rs);
    if json {
        json_out(
            json!({"files": rs.len(), "directories": dirs, "bytes_read": bytes, "elapsed_s": secs,
            "mib_per_s": bytes as f64 / (1 << 20) as f64 / secs.max(1e-9), "pages": pages, "resident": cached}),
        );
    } else {
        println!(
            "warmed {} files ({} directories): read {} in {secs:.3} s ({}/s); resident {cached}/{pages} pages ({:.1}%)",
            rs.len(),
            dirs,
            bytes_iec(bytes as f64),
            bytes_iec(bytes as f64 / secs.max(1e-9)),
            pct(cached, pages)
        );
    }
    0
}

fn evict(files: &[PathBuf], dirs: u64, json: bool) -> i32 {
    let t0 = Instant::now();
    let mut left = Vec::new();
    let mut pages = 0;
    for f in files {
        match pagecache::evict(f) {
            Ok(s) => {
                pages += s.pages;
                if s.cached > 0 {
                    left.push((f.clone(), s.cached, s.dirty.unwrap_or(0)));
                }
            }
            Err(e) => return super::fail(format!("{}: {e}", f.display()), 1),
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let remaining: u64 = left.iter().map(|l| l.1).sum();
    if json {
        json_out(
            json!({"files": files.len(), "directories": dirs, "pages": pages, "still_resident": remaining,
            "elapsed_s": secs, "not_evicted": left.iter().map(|(p, c, d)| json!({"path": p, "resident": c, "dirty": d})).collect::<Vec<_>>()}),
        );
    } else {
        println!(
            "evicted {} files ({} directories, {pages} pages) in {secs:.4} s; still resident: {remaining} pages",
            files.len(),
            dirs
        );
    }
    for (p, c, d) in &left {
        eprintln!(
            "iolab: warning: {}: {c} pages still cached{} (dirty pages stay until written back; mapped or locked pages stay)",
            p.display(),
            if *d > 0 {
                format!(", {d} dirty")
            } else {
                String::new()
            }
        );
    }
    0
}

fn lock(files: &[PathBuf], daemon: bool, pid_file: Option<&PathBuf>) -> i32 {
    // Check what can be checked while errors still reach the terminal.
    for f in files {
        if let Err(e) = std::fs::File::open(f) {
            return super::fail(format!("{}: {e}", f.display()), 2);
        }
    }
    if let Some(p) = pid_file
        && p.exists()
    {
        return super::fail(
            format!("--pid-file {} exists (another lock running?)", p.display()),
            2,
        );
    }
    if daemon {
        // SAFETY: daemon() forks; this process has no other threads yet.
        if unsafe { libc::daemon(1, 0) } != 0 {
            return super::fail(format!("daemon: {}", std::io::Error::last_os_error()), 1);
        }
    }
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 1),
    };
    if let Some(p) = pid_file
        && let Err(e) = std::fs::write(p, format!("{}\n", std::process::id()))
    {
        return super::fail(format!("--pid-file {}: {e}", p.display()), 1);
    }
    let remove_pid = || {
        if let Some(p) = pid_file {
            let _ = std::fs::remove_file(p);
        }
    };
    let mut held = Vec::new();
    for f in files {
        match pagecache::lock(f) {
            Ok(l) => held.push(l),
            Err(e) => {
                remove_pid();
                return super::fail(
                    format!(
                        "mlock {}: {e} (RLIMIT_MEMLOCK too small? root or CAP_IPC_LOCK lifts it)",
                        f.display()
                    ),
                    1,
                );
            }
        }
    }
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
    remove_pid();
    eprintln!("iolab: released");
    0
}
