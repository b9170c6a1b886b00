//! fio's metadata engines against fio: its example job files
//! (examples/filestat-ioengine.fio, filedelete-ioengine.fio,
//! filecreate-ioengine.fio) scaled down to 20 files a job give the same I/O
//! counts, the same number of timed operations and leave the same files;
//! filedelete unlinks each file once, as fio (strace), and is held to the
//! safety rules for writes; filecreate creates each file during the run.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// fio's example for `engine`, its directory set to `dir`, 20 files a job
/// instead of 200 (six jobs, as the example).
fn example(engine: &str, dir: &Path) -> String {
    let jobs: String = (0..6).map(|i| format!("[t{i}]\n")).collect();
    format!(
        "[global]\nioengine={engine}\nfilesize=4k\nnrfiles=20\nunlink=0\ndirectory={}\n\n{jobs}",
        s(dir)
    )
}

/// Per job: (name, reads, bytes read, timed operations).
fn per_job(v: &Value) -> Vec<(String, u64, u64, u64)> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let r = &j["read"];
            (
                j["jobname"].as_str().unwrap().to_string(),
                r["total_ios"].as_u64().unwrap(),
                r["io_bytes"].as_u64().unwrap(),
                r["clat_ns"]["N"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// Runs fio's example for `engine` under fio and iolab, each in a directory
/// of its own; returns both results and both directories' names afterwards.
fn both(engine: &str) -> (Value, Value, Vec<String>, Vec<String>) {
    let d = scratch();
    let (ours, theirs) = (d.path().join("ours"), d.path().join("theirs"));
    std::fs::create_dir(&ours).unwrap();
    std::fs::create_dir(&theirs).unwrap();
    let our_job = write_file(d.path(), "ours.fio", &example(engine, &ours));
    let their_job = write_file(d.path(), "theirs.fio", &example(engine, &theirs));
    let o = run_json(&[s(&our_job)]);
    let t = fio_json(&[s(&their_job)]);
    (o, t, names(&ours), names(&theirs))
}

#[test]
fn filestat_stats_every_file_as_fio() {
    skip_unless_installed!("fio");
    let (o, t, ours, theirs) = both("filestat");
    assert_eq!(per_job(&o), per_job(&t));
    assert_eq!(per_job(&o)[0], ("t0".into(), 20, 20 * 4096, 20));
    // The files are laid out at setup and stay.
    assert_eq!(ours.len(), 120);
    assert_eq!(ours, theirs);
}

#[test]
fn filedelete_deletes_every_file_as_fio() {
    skip_unless_installed!("fio");
    let (o, t, ours, theirs) = both("filedelete");
    assert_eq!(per_job(&o), per_job(&t));
    assert_eq!(per_job(&o)[5], ("t5".into(), 20, 20 * 4096, 20));
    assert!(ours.is_empty() && theirs.is_empty(), "{ours:?} {theirs:?}");
}

/// One unlink(2) per file, of that file, and nothing else unlinked.
#[test]
fn filedelete_unlinks_each_file_once() {
    skip_unless_installed!("strace");
    let d = scratch();
    let dir = d.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    let f = write_file(d.path(), "job.fio", &example("filedelete", &dir));
    let trace = strace_run("unlink,unlinkat", &[s(&f)]);
    let mut unlinked: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("unlink(") || l.contains("unlinkat("))
        .map(|l| l.split('"').nth(1).unwrap())
        .collect();
    unlinked.sort();
    let dir = s(&dir).to_string();
    let mut expected: Vec<String> = (0..6)
        .flat_map(|j| (0..20).map(move |n| (j, n)))
        .map(|(j, n)| format!("{dir}/t{j}.0.{n}"))
        .collect();
    expected.sort();
    assert_eq!(unlinked, expected);
}

/// filedelete removes files, so a file iolab did not lay out is refused
/// without --allow-overwrite, like a write.
#[test]
fn filedelete_keeps_the_safety_rules_of_writes() {
    let (_d, f) = scratch_file();
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    let (code, err) = run_err(&job("x", &f, "--ioengine=filedelete --size=8k"));
    assert_eq!(code, code::REFUSED, "{err}");
    assert!(err.contains("--allow-overwrite"), "{err}");
    assert!(f.exists());
}

/// filecreate lays nothing out: each file is created (empty, mode 0600)
/// by its first I/O, timed, as fio; the same files and counts as fio.
#[test]
fn filecreate_creates_every_file_as_fio() {
    skip_unless_installed!("fio");
    let (o, t, ours, theirs) = both("filecreate");
    assert_eq!(per_job(&o), per_job(&t));
    assert_eq!(per_job(&o)[0], ("t0".into(), 20, 20 * 4096, 20));
    assert_eq!(ours.len(), 120);
    assert_eq!(ours, theirs);
}

/// Each file is created by one open(2) with O_CREAT during the run, and
/// none exists before the run starts it (no layout).
#[test]
fn filecreate_opens_each_file_once_with_o_creat() {
    skip_unless_installed!("strace");
    use std::os::unix::fs::PermissionsExt;
    let d = scratch();
    let dir = d.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    let f = write_file(d.path(), "job.fio", &example("filecreate", &dir));
    let trace = strace_run("open,openat,creat", &[s(&f)]);
    let dir_s = s(&dir).to_string();
    let mut created: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains("O_CREAT") && l.contains(&dir_s))
        .map(|l| l.split('"').nth(1).unwrap())
        .collect();
    created.sort();
    let mut expected: Vec<String> = (0..6)
        .flat_map(|j| (0..20).map(move |n| (j, n)))
        .map(|(j, n)| format!("{dir_s}/t{j}.0.{n}"))
        .collect();
    expected.sort();
    assert_eq!(
        created, expected,
        "one O_CREAT open per file, nothing laid out"
    );
    let m = std::fs::metadata(dir.join("t3.0.7")).unwrap();
    assert_eq!((m.len(), m.permissions().mode() & 0o777), (0, 0o600));
}

/// Issue 33 (6): fio's filecreate example keeps `openfiles=1`; iolab's
/// clones of a file-less engine hold one descriptor each, whatever
/// `nrfiles`, so 16 jobs of 2,000 files run under a limit of 256 open
/// files (soft and hard) and make every file, as fio (which once failed
/// with EMFILE: a /dev/null descriptor per file).
#[test]
fn filecreate_needs_no_descriptor_per_file() {
    skip_unless_installed!("prlimit");
    let d = scratch();
    let jobs: String = (0..16).map(|i| format!("[t{i}]\n")).collect();
    let text = format!(
        "[global]\ncreate_on_open=1\nnrfiles=2000\nioengine=filecreate\nfallocate=none\n\
         filesize=4k\nopenfiles=1\ndirectory={}\n\n{jobs}",
        s(d.path())
    );
    let job = write_file(d.path(), "job.fio", &text);
    let mut cmd = std::process::Command::new("prlimit");
    cmd.args(["--nofile=256:256", "--"])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--no-store", "--output-format=json"])
        .arg(&job);
    let v = stdout_json(&mut cmd);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 16);
    let made = std::fs::read_dir(d.path()).unwrap().count() - 1;
    assert_eq!(made, 16 * 2000);
}
