//! One fio job file under fio and under `iolab run`, each in a fresh
//! directory, and what differs between the two: job names, I/Os and bytes
//! per direction, the files left behind (names and sizes), percentiles.
//! Shared by tests/fio_compat.rs and tests/fio_examples.rs (`#[path]`).
//!
//! A job file may say what to compare in a header comment line
//! `# compare: jobs ios ios~ bytes total files names syncs percentiles reaps`
//! (`total~N`: the total within N bytes; `names`: files without sizes; default
//! `jobs ios bytes files`); `time_based` jobs never compare counts. A line
//! `# differs: TEXT` records a known difference (TEXT is part of it), so
//! the case fails when that difference goes away, until the line goes too.
// Each test file that includes this module uses only part of it.
#![allow(dead_code)]

use crate::common::scratch;
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a tool may take on one job file before it is killed.
pub const TIME_LIMIT: Duration = Duration::from_secs(120);

/// What to compare between the tools' runs of a job file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The job names in the JSON (one entry per reported job).
    Jobs,
    /// `total_ios` of each direction, summed over the jobs.
    Ios,
    /// `ios~`: as `Ios`, each direction within four standard deviations
    /// of randomly sized I/Os (`4·√n + 2`): sizes drawn with each tool's
    /// own numbers from fio's distribution.
    IosNear,
    /// `io_bytes` of each direction, summed over the jobs.
    Bytes,
    /// `io_bytes` of all directions together (mixes split at random).
    Total,
    /// `total~N`: as `Total`, within N bytes (fio's last I/O of a loop
    /// without the random map goes whole past `size`, by a size drawn at
    /// random with `bssplit`).
    TotalWithin(u64),
    /// The files left in the directory: names, and sizes except logs.
    Files,
    /// The files left in the directory, names only (`names`: sizes set
    /// by timing, like a time-based job's last random truncate).
    Names,
    /// `sync.total_ios` (fsync, fdatasync), summed over the jobs.
    Syncs,
    /// p50 and p90 of completion latency, within [`within_tolerance`].
    Percentiles,
    /// How many completions each reap took (`iodepth_complete`), each
    /// bucket within 5 points of fio's.
    Reaps,
    /// How deep the queue was at each submit (`iodepth_level`), each
    /// bucket within 5 points of fio's.
    Depths,
}

impl Check {
    fn parse(word: &str) -> Option<Check> {
        Some(match word {
            "jobs" => Check::Jobs,
            "ios" => Check::Ios,
            "ios~" => Check::IosNear,
            "bytes" => Check::Bytes,
            "total" => Check::Total,
            w if w.starts_with("total~") => Check::TotalWithin(w[6..].parse().ok()?),
            "files" => Check::Files,
            "names" => Check::Names,
            "syncs" => Check::Syncs,
            "percentiles" => Check::Percentiles,
            "reaps" => Check::Reaps,
            "depths" => Check::Depths,
            _ => return None,
        })
    }
}

/// The checks a job file asks for (its `# compare:` line, else the
/// default); counts are dropped for `time_based` jobs.
pub fn checks(text: &str) -> Vec<Check> {
    let line = text.lines().find_map(|l| {
        l.trim_start_matches(['#', ';', ' '])
            .strip_prefix("compare:")
    });
    let mut v: Vec<Check> = match line {
        Some(words) => words
            .split_whitespace()
            .take_while(|w| !w.starts_with('('))
            .map(|w| Check::parse(w).unwrap_or_else(|| panic!("unknown check '{w}'")))
            .collect(),
        None => vec![Check::Jobs, Check::Ios, Check::Bytes, Check::Files],
    };
    if text.lines().any(|l| l.trim().starts_with("time_based")) {
        v.retain(|c| {
            !matches!(
                c,
                Check::Ios | Check::Bytes | Check::Total | Check::TotalWithin(_)
            )
        });
    }
    v
}

/// The known differences a job file records (its `# differs:` lines).
pub fn known_differences(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.trim_start_matches(['#', ';', ' '])
                .strip_prefix("differs:")
        })
        .map(|d| d.trim().to_string())
        .collect()
}

/// `diffs` set against the `known` ones: each difference not known, and
/// each known one that no longer happens (empty: as recorded).
pub fn unexpected(diffs: &[String], known: &[String]) -> Vec<String> {
    let new = diffs
        .iter()
        .filter(|d| !known.iter().any(|k| d.contains(k.as_str())))
        .cloned();
    let gone = known
        .iter()
        .filter(|k| !diffs.iter().any(|d| d.contains(k.as_str())))
        .map(|k| format!("no longer differs (remove its '# differs:' line): {k}"));
    new.chain(gone).collect()
}

/// How one tool's run of a job file ended.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code; `None` when killed after [`TIME_LIMIT`] or by a signal.
    pub code: Option<i32>,
    /// Its stderr.
    pub stderr: String,
    /// Its JSON result, when it printed one.
    pub json: Option<Value>,
    /// Files left in its directory (relative path, size), sorted; the job
    /// file itself left out.
    pub files: Vec<(String, u64)>,
}

impl Outcome {
    /// True when the tool exited with 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// The first line of stderr (or why there is none).
    pub fn first_error(&self) -> String {
        match self.code {
            None => format!("killed after {} s", TIME_LIMIT.as_secs()),
            Some(_) => self.stderr.lines().next().unwrap_or("").to_string(),
        }
    }
}

/// The two tools.
#[derive(Debug, Clone, Copy)]
pub enum Tool {
    /// The real fio (`fio` on PATH).
    Fio,
    /// `iolab run --no-store`.
    Iolab,
}

/// Runs `job` (a job file) under `tool` with `--output-format=json` in a
/// fresh directory (its `directory=` folders made first, as a user would).
pub fn run(tool: Tool, job: &Path) -> Outcome {
    let d = scratch();
    let out = run_in(tool, job, d.path());
    if out.code.is_none() && matches!(tool, Tool::Fio) {
        // fio 3.33 itself hung once in a pacing case on a machine running
        // two suites and a release build (a job sleeping, its main process
        // killed): the reference gets one more try, named on stderr.
        eprintln!(
            "fio was killed after {} s on {job:?}: once more",
            TIME_LIMIT.as_secs()
        );
        let again = scratch();
        return run_in(tool, job, again.path());
    }
    out
}

/// As [`run`], in the empty directory `dir` (a file system of its own).
pub fn run_in(tool: Tool, job: &Path, dir: &Path) -> Outcome {
    let text = std::fs::read_to_string(job).unwrap();
    for line in text.lines() {
        if let Some(sub) = line.trim().strip_prefix("directory=") {
            std::fs::create_dir_all(dir.join(sub.trim())).unwrap();
        }
    }
    let name = job.file_name().unwrap();
    std::fs::write(dir.join(name), &text).unwrap();
    let mut cmd = match tool {
        Tool::Fio => Command::new("fio"),
        Tool::Iolab => {
            let mut c = crate::common::bin();
            c.args(["run", "--no-store"]);
            c
        }
    };
    cmd.current_dir(dir).arg("--output-format=json").arg(name);
    let (code, stdout, stderr) = run_limited(&mut cmd, TIME_LIMIT);
    let json = stdout
        .iter()
        .position(|&b| b == b'{')
        .filter(|_| code == Some(0))
        .and_then(|i| json_of(&stdout[i..]));
    let mut files = Vec::new();
    list_files(dir, "", &mut files);
    files.retain(|(f, _)| f.as_str() != name.to_str().unwrap());
    files.sort();
    Outcome {
        code,
        stderr,
        json,
        files,
    }
}

/// Parses a JSON document as fio writes it (fio writes `-nan` and `nan`
/// where its figures are undefined: read as null); `None` if it is not JSON.
pub fn json_of(bytes: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(bytes)
        .replace(": -nan", ": null")
        .replace(": nan", ": null");
    serde_json::from_str(&text).ok()
}

/// Runs `cmd` in its own process group; kills the group after `limit`.
/// Returns (exit code, stdout, stderr).
pub fn run_limited(cmd: &mut Command, limit: Duration) -> (Option<i32>, Vec<u8>, String) {
    use std::os::unix::process::CommandExt;
    let dir = cmd.get_current_dir().map(Path::to_path_buf);
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).ok();
        v
    });
    let err_t = std::thread::spawn(move || {
        let mut v = Vec::new();
        err.read_to_end(&mut v).ok();
        String::from_utf8_lossy(&v).into_owned()
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > limit {
            kill_group(child.id());
            child.wait().unwrap();
            // fio's job processes leave its group (backend.c: setsid), and
            // one still running holds the output pipes open.
            if let Some(dir) = &dir {
                kill_in(dir);
            }
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let code = status.and_then(|s| s.code());
    (code, out_t.join().unwrap(), err_t.join().unwrap())
}

/// Sends SIGKILL to the process group `pgid` (a child started with
/// `process_group(0)`, so the group is ours alone).
fn kill_group(pgid: u32) {
    // SAFETY: kill(2) takes plain integers; the group is our child's.
    unsafe { libc::kill(-(pgid as i32), libc::SIGKILL) };
}

/// Sends SIGKILL to every process working in `dir`: only what a case
/// started there (each case has a fresh scratch directory).
fn kill_in(dir: &Path) {
    let Ok(dir) = dir.canonicalize() else { return };
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir) {
            // SAFETY: kill(2) takes plain integers; the process works in
            // this case's own scratch directory.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn list_files(dir: &Path, prefix: &str, out: &mut Vec<(String, u64)>) {
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        let meta = e.metadata().unwrap();
        if meta.is_dir() {
            list_files(&e.path(), &format!("{name}/"), out);
        } else {
            out.push((name, meta.len()));
        }
    }
}

/// Runs `f` on each of `items` on `threads` threads; the results in the
/// order of `items`.
pub fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    done.lock().unwrap().push((i, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap();
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// The directions of fio's JSON.
pub const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// `key` of each direction, summed over the jobs of `v`.
pub fn per_direction(v: &Value, key: &str) -> [u64; 3] {
    let mut sum = [0; 3];
    for j in v["jobs"].as_array().unwrap() {
        for (i, d) in DIRECTIONS.iter().enumerate() {
            sum[i] += j[d][key].as_u64().unwrap_or(0);
        }
    }
    sum
}

/// The job names of `v`, sorted.
pub fn job_names(v: &Value) -> Vec<String> {
    let mut names: Vec<String> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    names
}

/// Two latencies (ns) agree when within a factor of 10 or both under
/// 2 µs: loose enough for a shared machine, tight enough to catch a wrong
/// unit or a wrong histogram.
pub fn within_tolerance(fio: f64, iolab: f64) -> bool {
    (fio < 2000.0 && iolab < 2000.0) || (iolab <= fio * 10.0 && fio <= iolab * 10.0)
}

/// What differs between fio's and iolab's runs, for the `checks` asked
/// (empty: they agree). Both runs must have succeeded.
pub fn differences(fio: &Outcome, iolab: &Outcome, checks: &[Check]) -> Vec<String> {
    let f = fio.json.as_ref().expect("fio's JSON");
    let Some(i) = iolab.json.as_ref() else {
        return vec!["iolab's stdout is not JSON".to_string()];
    };
    let mut diffs = Vec::new();
    if !iolab.stderr.trim().is_empty() && fio.stderr.trim().is_empty() {
        diffs.push(format!("stderr: {}", iolab.first_error()));
    }
    for c in checks {
        match c {
            Check::Jobs => {
                let (a, b) = (job_names(f), job_names(i));
                if a != b {
                    diffs.push(format!("jobs: fio {a:?}, iolab {b:?}"));
                }
            }
            Check::Ios | Check::Bytes => {
                let key = if *c == Check::Ios {
                    "total_ios"
                } else {
                    "io_bytes"
                };
                let (a, b) = (per_direction(f, key), per_direction(i, key));
                if a != b {
                    diffs.push(format!("{key} (read, write, trim): fio {a:?}, iolab {b:?}"));
                }
            }
            Check::IosNear => {
                let (a, b) = (per_direction(f, "total_ios"), per_direction(i, "total_ios"));
                let near =
                    |x: u64, y: u64| x.abs_diff(y) as f64 <= 4.0 * (x.max(y) as f64).sqrt() + 2.0;
                if a.iter().zip(&b).any(|(x, y)| !near(*x, *y)) {
                    diffs.push(format!(
                        "total_ios (read, write, trim) beyond the draws' spread: fio {a:?}, iolab {b:?}"
                    ));
                }
            }
            Check::Total | Check::TotalWithin(_) => {
                let sum = |v| per_direction(v, "io_bytes").iter().sum::<u64>();
                let within = match c {
                    Check::TotalWithin(n) => *n,
                    _ => 0,
                };
                if sum(f).abs_diff(sum(i)) > within {
                    diffs.push(format!("io_bytes in all: fio {}, iolab {}", sum(f), sum(i)));
                }
            }
            Check::Files => {
                let strip = |v: &[(String, u64)]| -> Vec<(String, Option<u64>)> {
                    v.iter()
                        .map(|(n, l)| {
                            let log = n.ends_with(".log") || n.ends_with(".log.fz");
                            (n.clone(), (!log).then_some(*l))
                        })
                        .collect()
                };
                let (a, b) = (strip(&fio.files), strip(&iolab.files));
                if a != b {
                    diffs.push(format!("files: fio {a:?}, iolab {b:?}"));
                }
            }
            Check::Names => {
                let names = |v: &[(String, u64)]| v.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
                let (a, b) = (names(&fio.files), names(&iolab.files));
                if a != b {
                    diffs.push(format!("file names: fio {a:?}, iolab {b:?}"));
                }
            }
            Check::Syncs => {
                // fio 3.33's `sync.total_ios` is always 0: the syncs are
                // the count of its sync latencies.
                let syncs = |v: &Value| -> u64 {
                    let jobs = v["jobs"].as_array().unwrap().iter();
                    jobs.map(|j| j["sync"]["lat_ns"]["N"].as_u64().unwrap_or(0))
                        .sum()
                };
                if syncs(f) != syncs(i) {
                    diffs.push(format!("syncs: fio {}, iolab {}", syncs(f), syncs(i)));
                }
            }
            Check::Percentiles => diffs.extend(percentile_differences(f, i)),
            Check::Reaps => diffs.extend(bucket_differences(f, i, "iodepth_complete", "reaps")),
            Check::Depths => diffs.extend(bucket_differences(f, i, "iodepth_level", "depths")),
        }
    }
    diffs
}

/// p50 and p90 of `clat_ns` of each direction fio did I/O in, per job.
fn percentile_differences(f: &Value, i: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let (fj, ij) = (f["jobs"].as_array().unwrap(), i["jobs"].as_array().unwrap());
    for (a, b) in fj.iter().zip(ij) {
        for d in DIRECTIONS {
            if a[d]["total_ios"].as_u64().unwrap_or(0) == 0 {
                continue;
            }
            for p in ["50.000000", "90.000000"] {
                let get = |j: &Value| j[d]["clat_ns"]["percentile"][p].as_f64();
                match (get(a), get(b)) {
                    (Some(x), Some(y)) if within_tolerance(x, y) => {}
                    (x, y) => diffs.push(format!(
                        "{} {d} clat p{}: fio {x:?} ns, iolab {y:?} ns",
                        a["jobname"],
                        &p[..2]
                    )),
                }
            }
        }
    }
    diffs
}

/// Each job's buckets of `key` (`iodepth_complete`: percent of reaps;
/// `iodepth_level`: percent of submits) more than 5 points from fio's.
fn bucket_differences(f: &Value, i: &Value, key: &str, what: &str) -> Vec<String> {
    let (fj, ij) = (f["jobs"].as_array().unwrap(), i["jobs"].as_array().unwrap());
    let mut diffs = Vec::new();
    for (a, b) in fj.iter().zip(ij) {
        let (x, y) = (&a[key], &b[key]);
        let buckets = x.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
        for k in buckets.unwrap_or_default() {
            let (p, q) = (x[&k].as_f64().unwrap_or(0.0), y[&k].as_f64().unwrap_or(0.0));
            if (p - q).abs() > 5.0 {
                diffs.push(format!(
                    "{} {what} of {k} ({key}): fio {p:.1}%, iolab {q:.1}%",
                    a["jobname"]
                ));
            }
        }
    }
    diffs
}
