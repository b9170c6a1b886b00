//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod browser;
pub mod disk;
pub mod exec;
pub mod process;
pub mod ranks;
pub mod svg;
pub mod tmpfs;
pub mod trace;
pub mod traced;

#[allow(unused_imports)]
pub use browser::{Loaded, chromium, keep_screenshot};

use assert_cmd::Command;
pub use iolab::error::code;
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// The iolab binary and its results database.

/// The results database the tests' runs go to (never the user's).
pub fn test_db() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("tests-results.db")
}

/// The iolab binary, storing into [`test_db`].
pub fn iolab() -> Command {
    let mut c = Command::cargo_bin("iolab").expect("iolab binary");
    c.env("IOLAB_DB", test_db());
    c
}

/// The iolab binary as a std Command, storing into [`test_db`].
pub fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"));
    c.env("IOLAB_DB", test_db());
    // Never the test runner's own stdin (a pipe under some CI runners).
    c.stdin(std::process::Stdio::null());
    c
}

/// `fio`, or `iolab run --no-store` (any other `tool`): the same fio
/// command line follows under either.
pub fn fio_or_iolab(tool: &str) -> std::process::Command {
    if tool == "fio" {
        std::process::Command::new("fio")
    } else {
        let mut c = bin();
        c.args(["run", "--no-store"]);
        c
    }
}

/// The iolab binary storing into its own database `db`.
pub fn with_db(db: &Path) -> std::process::Command {
    let mut c = bin();
    c.env("IOLAB_DB", db);
    c
}

/// Opens the SQLite database `db` directly (not through iolab) and returns
/// the single value `sql` selects.
pub fn query_one<T: rusqlite::types::FromSql>(db: &Path, sql: &str) -> T {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

// Scratch space and the files in it.

/// Path as &str.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Scratch directory on the build's disk (not tmpfs), so O_DIRECT works and
/// /proc/diskstats sees the I/O.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// A scratch directory (see [`scratch`]) and the path `f` in it, for the
/// data file the test's runs lay out. Bind the directory to a name (`_dir`,
/// not `_`): it is deleted when dropped.
pub fn scratch_file() -> (tempfile::TempDir, PathBuf) {
    let d = scratch();
    let f = d.path().join("f");
    (d, f)
}

/// A scratch directory (see [`scratch`]) and the path of a results
/// database in it, for commands made with [`with_db`].
pub fn scratch_db() -> (tempfile::TempDir, PathBuf) {
    let d = scratch();
    let db = d.path().join("results.db");
    (d, db)
}

/// Writes `text` to the file `name` in `dir`; returns its path.
pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

// Running commands and checking how they ended.

/// Runs `cmd`, asserts it succeeded (showing its output if not), returns stdout.
pub fn succeed(cmd: &mut std::process::Command) -> Vec<u8> {
    let out = cmd.output().expect("start command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `cmd`, asserts it succeeded, returns (stdout, stderr) as UTF-8 text.
pub fn succeed_text(cmd: &mut std::process::Command) -> (String, String) {
    let out = cmd.output().expect("start command");
    let stderr = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{stderr}",
        out.status
    );
    (
        String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr,
    )
}

/// Runs `cmd`, asserts it succeeded, returns its stdout as UTF-8 text.
pub fn stdout_text(cmd: &mut std::process::Command) -> String {
    String::from_utf8(succeed(cmd)).expect("stdout is UTF-8")
}

/// Parses `bytes` as JSON, showing them in the panic when they are not.
pub fn parse_json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(bytes)))
}

/// Runs `cmd`, asserts it succeeded, parses its stdout as JSON.
pub fn stdout_json(cmd: &mut std::process::Command) -> Value {
    parse_json(&succeed(cmd))
}

/// Runs `cmd`, asserts it failed; returns (exit code, stderr).
pub fn fail(cmd: &mut std::process::Command) -> (i32, String) {
    let out = cmd.output().expect("start command");
    assert!(
        !out.status.success(),
        "expected failure, got success: {cmd:?}"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `cmd`, asserts it exits with `code` and its stderr contains `want`;
/// returns stderr.
pub fn fails_with(cmd: &mut std::process::Command, code: i32, want: &str) -> String {
    let (got, err) = fail(cmd);
    assert_eq!(got, code, "exit code of {cmd:?}: {err}");
    assert!(err.contains(want), "'{want}' not in: {err}");
    err
}

/// Asserts `err` is one line (after trimming) that contains every `want`.
pub fn assert_one_line(err: &str, want: &[&str]) {
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for w in want {
        assert!(err.contains(w), "'{w}' not in: {err}");
    }
}

// `iolab run` jobs.

/// The arguments of a one-job run: `--name=NAME --filename=FILE`, then
/// `opts` split at whitespace (`"--size=1M --rw=read"` is two options).
pub fn job(name: &str, file: &Path, opts: &str) -> Vec<String> {
    let mut args = vec![format!("--name={name}"), format!("--filename={}", s(file))];
    args.extend(opts.split_whitespace().map(String::from));
    args
}

/// Lays out `file` with `size` bytes (a one-I/O read run), so that a later
/// run finds it in place.
pub fn lay_out(file: &Path, size: &str) {
    run_text(&job(
        "layout",
        file,
        &format!("--size={size} --rw=read --number_ios=1"),
    ));
}

/// Runs `iolab run ARGS --output-format=json`, asserts success, parses stdout.
pub fn run_json(args: &[impl AsRef<OsStr>]) -> Value {
    stdout_json(bin().arg("run").args(args).arg("--output-format=json"))
}

/// Runs `iolab run ARGS` (normal output), asserts success, returns stdout.
pub fn run_text(args: &[impl AsRef<OsStr>]) -> String {
    stdout_text(bin().arg("run").args(args))
}

/// Runs `iolab run ARGS` storing into `db`, asserts success, returns stderr
/// (where "stored as run N" is said with `--verbose`).
pub fn run_into(db: &Path, args: &[impl AsRef<OsStr>]) -> String {
    succeed_text(with_db(db).arg("run").args(args)).1
}

/// Runs `iolab run ARGS` expecting failure; returns (exit code, stderr).
pub fn run_err(args: &[impl AsRef<OsStr>]) -> (i32, String) {
    fail(bin().arg("run").args(args))
}

/// `iolab run ARGS` is refused as bad input: exit code 2 and one stderr
/// line that contains every `want`.
pub fn run_rejects(args: &[impl AsRef<OsStr>], want: &[&str]) {
    run_fails(args, code::USAGE, want);
}

/// Runs `iolab run ARGS`, asserts it exits with `exit` and one stderr
/// line containing every `want`.
pub fn run_fails(args: &[impl AsRef<OsStr>], exit: i32, want: &[&str]) {
    let (got, err) = run_err(args);
    assert_eq!(got, exit, "{err}");
    assert_one_line(&err, want);
}

// Reading what iolab printed.

/// The first line of a table printed by iolab that starts with `label`
/// (panics showing the whole table when there is none).
pub fn table_row<'a>(table: &'a str, label: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label:?} row in:\n{table}"))
}

/// The element of the JSON array `list` whose `key` is `value` (panics
/// showing the array when there is none).
pub fn json_item<'a>(list: &'a Value, key: &str, value: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x[key] == value)
        .unwrap_or_else(|| panic!("no {key} {value:?} in {list}"))
}

/// `jobs[0].iolab.counters` of a JSON result.
pub fn counters(v: &Value) -> &Value {
    &v["jobs"][0]["iolab"]["counters"]
}

// Other tools: skipping without them, strace, fincore, Chromium.

/// A small tmpfs mounted for a test (to fill a file system), unmounted when
/// dropped, even if the test fails.
pub struct SmallFs(pub PathBuf);

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Mounts a tmpfs of `size` (`2m`) at a new directory `name` in `dir`;
/// `None`, with a SKIP line naming `test`, where mounting is not allowed.
pub fn small_tmpfs(dir: &Path, name: &str, size: &str, test: &str) -> Option<SmallFs> {
    let mnt = dir.join(name);
    std::fs::create_dir(&mnt).unwrap();
    let m = std::process::Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            &format!("size={size}"),
            "tmpfs",
            s(&mnt),
        ])
        .output()
        .unwrap();
    if !m.status.success() {
        eprintln!(
            "SKIP {test}: cannot mount a small tmpfs (needs root): {}",
            String::from_utf8_lossy(&m.stderr).trim()
        );
        return None;
    }
    Some(SmallFs(mnt))
}

/// Starts `iolab ARGS`, sends `signal` after `after`, returns the exit code
/// and stderr; the process must stop within 10 s.
pub fn exit_after_signal(args: &[&str], after: Duration, signal: i32) -> (i32, String) {
    let child = bin()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "{args:?} stopped promptly"
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `fio ARGS --output-format=json`, asserts success, parses the JSON
/// (fio may print notes before it on stdout).
pub fn fio_json(args: &[impl AsRef<OsStr>]) -> Value {
    let out = succeed(
        std::process::Command::new("fio")
            .args(args)
            .arg("--output-format=json"),
    );
    let start = out.iter().position(|&b| b == b'{').unwrap_or(0);
    parse_json(&out[start..])
}

/// True when `tool` is on PATH; otherwise prints why the test is skipped.
pub fn have(tool: &str, test: &str) -> bool {
    let ok = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIP {test}: {tool} is not installed (.ci/run installs it)");
    }
    ok
}

/// Returns from the calling test, printing `SKIP <test>: ...`, when `tool`
/// is not on PATH (see [`have`]).
#[macro_export]
macro_rules! skip_unless_installed {
    ($tool:expr) => {{
        fn here() {}
        let path = std::any::type_name_of_val(&here);
        let test = path.trim_end_matches("::here").rsplit("::").next().unwrap();
        if !$crate::common::have($tool, test) {
            return;
        }
    }};
}

/// Runs `iolab run --no-store ARGS` under `strace -f -qq -e trace=SYSCALLS`,
/// asserts success, returns the trace.
pub fn strace_run(syscalls: &str, args: &[impl AsRef<OsStr>]) -> String {
    let iolab = assert_cmd::cargo::cargo_bin("iolab");
    // Only the job's I/O: no results-database reads in the trace.
    strace_of(
        syscalls,
        &iolab,
        &[OsStr::new("run"), OsStr::new("--no-store")],
        args,
    )
}

/// Runs `fio ARGS` under `strace -f -qq -e trace=SYSCALLS`, asserts success,
/// returns the trace.
pub fn strace_fio(syscalls: &str, args: &[impl AsRef<OsStr>]) -> String {
    strace_of(syscalls, Path::new("fio"), &[], args)
}

fn strace_of(
    syscalls: &str,
    program: &Path,
    first: &[&OsStr],
    args: &[impl AsRef<OsStr>],
) -> String {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("strace.log");
    succeed(
        std::process::Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-e",
                &format!("trace={syscalls}"),
                "-o",
                s(&log),
            ])
            .env("IOLAB_DB", test_db())
            .arg(program)
            .args(first)
            .args(args),
    );
    std::fs::read_to_string(&log).unwrap()
}

/// The (offset, len) of a strace line for posix_fadvise(..., WILLNEED);
/// `None` for any other line.
pub fn willneed_advice(line: &str) -> Option<(u64, u64)> {
    // "1234  fadvise64(3, 8192, 4096, POSIX_FADV_WILLNEED) = 0"
    let i = line.find("fadvise64(")?;
    if !line.contains("POSIX_FADV_WILLNEED") {
        return None;
    }
    let a: Vec<&str> = line[i + 10..].split(',').map(str::trim).collect();
    Some((a[1].parse().unwrap(), a[2].parse().unwrap()))
}

/// Pages of `path` in the page cache, measured by util-linux `fincore`
/// (independent of iolab's own cachestat code).
pub fn fincore_pages(path: &Path) -> u64 {
    let out = succeed(std::process::Command::new("fincore").args([
        "--noheadings",
        "--raw",
        "--output",
        "PAGES",
        s(path),
    ]));
    String::from_utf8_lossy(&out)
        .trim()
        .parse()
        .expect("fincore pages")
}

// Waiting.

/// Calls `probe` every 10 ms until it returns `Some`, and returns that
/// value; panics with `what` once `timeout` has passed.
pub fn wait_for<T>(timeout: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(t0.elapsed() < timeout, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits (as [`wait_for`]) until `cond` holds; panics with `what` on timeout.
pub fn wait_until(timeout: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    wait_for(timeout, what, || cond().then_some(()))
}

/// Runs fio (`fio`) or `iolab run --no-store` with `args` in `dir`, JSON
/// output; the parsed document.
pub fn run_in(fio: bool, dir: &Path, args: &[&str]) -> Value {
    let mut cmd = if fio {
        std::process::Command::new("fio")
    } else {
        let mut c = bin();
        c.args(["run", "--no-store"]);
        c
    };
    stdout_json(cmd.current_dir(dir).args(args).arg("--output-format=json"))
}
