//! The differential suite: each job file in tests/fio_compat/ runs under fio
//! and under `iolab run`, each in a fresh directory, and must give the same
//! jobs, the same I/Os and bytes per direction, the same files (names and
//! sizes) and nothing on stderr; a `# compare:` header line chooses other
//! checks and `# differs:` lines record known differences
//! (tests/fio_compat/diff.rs). One file per group of options iolab
//! supports: adding a case is adding a `.fio` file there.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use diff::Tool;
use std::path::{Path, PathBuf};

/// Worker threads running cases side by side.
const THREADS: usize = 4;

/// The job files of tests/fio_compat/, sorted.
fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_compat");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    v.sort();
    v
}

/// What differs between fio and iolab on the job file `job`, beyond the
/// differences it records (empty: as recorded).
fn compare(job: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(job).unwrap();
    let fio = diff::run(Tool::Fio, job);
    if !fio.ok() {
        return vec![format!(
            "fio itself fails (fix the case): {}",
            fio.first_error()
        )];
    }
    let iolab = diff::run(Tool::Iolab, job);
    if !iolab.ok() {
        return vec![format!("iolab fails: {}", iolab.first_error())];
    }
    let diffs = diff::differences(&fio, &iolab, &diff::checks(&text));
    diff::unexpected(&diffs, &diff::known_differences(&text))
}

#[test]
fn every_case_runs_the_same_under_fio_and_iolab() {
    skip_unless_installed!("fio");
    let cases = cases();
    assert!(cases.len() >= 10, "cases in tests/fio_compat/: {cases:?}");
    let failed: Vec<String> = diff::in_parallel(&cases, THREADS, |job| {
        let diffs = compare(job);
        let name = job.file_name().unwrap().to_string_lossy();
        (!diffs.is_empty()).then(|| format!("{name}: {}", diffs.join("; ")))
    })
    .into_iter()
    .flatten()
    .collect();
    println!(
        "{} of {} cases agree with fio",
        cases.len() - failed.len(),
        cases.len()
    );
    assert!(failed.is_empty(), "differ from fio:\n{}", failed.join("\n"));
}

#[test]
fn checks_come_from_the_header() {
    use diff::Check::*;
    assert_eq!(diff::checks("[j]\nrw=read\n"), [Jobs, Ios, Bytes, Files]);
    assert_eq!(
        diff::checks("# compare: jobs total files (random mixes)\n[j]\n"),
        [Jobs, Total, Files]
    );
    assert_eq!(
        diff::checks("; compare: ios syncs percentiles\n[j]\ntime_based\n"),
        [Syncs, Percentiles]
    );
}

#[test]
fn known_differences_must_still_happen() {
    let text = "# differs: files: fio []\n[j]\n";
    let known = diff::known_differences(text);
    let diffs = vec!["files: fio [], iolab [x]".to_string()];
    assert!(diff::unexpected(&diffs, &known).is_empty());
    let more = vec![diffs[0].clone(), "jobs: fio [a], iolab [b]".to_string()];
    assert_eq!(
        diff::unexpected(&more, &known),
        ["jobs: fio [a], iolab [b]"]
    );
    let gone = diff::unexpected(&[], &known);
    assert!(gone[0].starts_with("no longer differs"), "{gone:?}");
}

#[test]
fn tolerance_catches_a_wrong_unit_not_noise() {
    assert!(diff::within_tolerance(1500.0, 400.0));
    assert!(diff::within_tolerance(20_000.0, 60_000.0));
    assert!(!diff::within_tolerance(20_000.0, 20.0));
    assert!(!diff::within_tolerance(3_000.0, 3_000_000.0));
}

#[test]
fn a_killed_run_leaves_no_process_that_left_its_group() {
    // fio's job processes call setsid(): a run killed at its time limit
    // must not leave one running (it held the output pipes, and the suite
    // waited on them for 20 minutes).
    let d = common::scratch();
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(d.path())
        .args(["-c", "setsid sleep 1000 & sleep 1000"]);
    let (code, _, _) = diff::run_limited(&mut cmd, std::time::Duration::from_millis(500));
    assert_eq!(code, None, "killed at the limit");
    let dir = d.path().canonicalize().unwrap();
    let left: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir))
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.is_empty(),
        "still running in the case's directory: {left:?}"
    );
}
