//! Helpers shared by the integration tests.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// The results database the tests' runs go to (never the user's).
pub fn test_db() -> std::path::PathBuf {
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
    c
}

/// The iolab binary storing into its own database `db`.
pub fn with_db(db: &Path) -> std::process::Command {
    let mut c = bin();
    c.env("IOLAB_DB", db);
    c
}

/// Runs `cmd`, asserts it succeeded (showing its stderr if not), returns stdout.
pub fn succeed(cmd: &mut std::process::Command) -> Vec<u8> {
    let out = cmd.output().expect("start command");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `iolab run ARGS --output-format=json`, asserts success, parses stdout.
pub fn run_json(args: &[&str]) -> Value {
    let mut cmd = bin();
    cmd.arg("run").args(args).arg("--output-format=json");
    let out = succeed(&mut cmd);
    serde_json::from_slice(&out).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out)
        )
    })
}

/// Runs `iolab run ARGS` (normal output), asserts success, returns stdout.
pub fn run_text(args: &[&str]) -> String {
    let mut cmd = bin();
    cmd.arg("run").args(args);
    String::from_utf8_lossy(&succeed(&mut cmd)).into_owned()
}

/// Runs iolab expecting failure; returns (exit code, stderr).
pub fn run_err(args: &[&str]) -> (i32, String) {
    let out = iolab().arg("run").args(args).output().expect("run iolab");
    assert!(!out.status.success(), "expected failure, got success");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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

/// Path as &str.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Pages of `path` in the page cache, measured by util-linux `fincore`
/// (independent of iolab's own cachestat code).
pub fn fincore_pages(path: &Path) -> u64 {
    let out = std::process::Command::new("fincore")
        .args(["--noheadings", "--raw", "--output", "PAGES", s(path)])
        .output()
        .expect("run fincore");
    assert!(
        out.status.success(),
        "fincore: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("fincore pages")
}

/// Scratch directory on the build's disk (not tmpfs), so O_DIRECT works and
/// /proc/diskstats sees the I/O.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// `jobs[0].iolab.counters` of a JSON result.
pub fn counters(v: &Value) -> &Value {
    &v["jobs"][0]["iolab"]["counters"]
}

/// What headless Chromium saw: console lines, the DOM, a screenshot.
pub struct Loaded {
    /// Console messages (one line each).
    pub console: Vec<String>,
    /// The DOM after scripts ran.
    pub dom: String,
}

pub fn chromium(page: &Path, shot: &Path, (w, h): (u32, u32)) -> Loaded {
    let url = format!("file://{}", s(page));
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let out = std::process::Command::new("chromium")
        .args(base)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    let st = std::process::Command::new("chromium")
        .args(base)
        .arg("--hide-scrollbars")
        .arg(format!("--window-size={w},{h}"))
        .arg(format!("--screenshot={}", s(shot)))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    Loaded {
        console,
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}
