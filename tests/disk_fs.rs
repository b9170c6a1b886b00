//! `iolab disk up --layer fs --backing DIR2`: the file layer, with the real
//! binary, a real backing directory and a real FUSE mount. Needs root and
//! /dev/fuse (each test says why it skips without them). After each test,
//! /proc/mounts has nothing at DIR and the run directory is empty.

mod common;

use common::{bin, fails_with, s, stdout_json, succeed};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::Value;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// True when this machine can mount FUSE as the tests need; else says why.
fn can_mount(test: &str) -> bool {
    let why = if !nix::unistd::geteuid().is_root() {
        "not root"
    } else if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .is_err()
    {
        "no usable /dev/fuse"
    } else {
        return true;
    };
    eprintln!("SKIP {test}: {why}");
    false
}

/// A file-layer disk of one test: DIR (`mnt`) over `backing`, its own run
/// directory; taken down when dropped, even after a failed assertion.
struct Disk {
    dir: PathBuf,
    backing: PathBuf,
    run: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Disk {
    /// Makes the backing directory with `files` (name, text) and runs `up`
    /// with the rule flags `rules`; None (said) where `test` cannot mount.
    fn up(test: &str, files: &[(&str, &str)], rules: &[&str]) -> Option<Disk> {
        if !can_mount(test) {
            return None;
        }
        let tmp = tempfile::tempdir().unwrap();
        let (dir, backing, run) = (
            tmp.path().join("mnt"),
            tmp.path().join("backing"),
            tmp.path().join("run"),
        );
        std::fs::create_dir_all(&backing).unwrap();
        for (name, text) in files {
            let p = backing.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let disk = Disk {
            dir,
            backing,
            run,
            _tmp: tmp,
        };
        let mut up = disk.iolab(&["up", s(&disk.dir), "--layer", "fs", "--backing"]);
        up.arg(&disk.backing).args(rules);
        succeed(&mut up);
        Some(disk)
    }

    /// `iolab disk ARGS` with this disk's run directory.
    fn iolab(&self, args: &[&str]) -> Command {
        let mut c = bin();
        c.env("IOLAB_RUN_DIR", &self.run).arg("disk").args(args);
        c
    }

    /// DIR/`name`.
    fn at(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// This disk's entry in `status -f json`.
    fn status(&self) -> Value {
        let v = stdout_json(&mut self.iolab(&["status", s(&self.dir), "-f", "json"]));
        v["disks"][0].clone()
    }

    /// Counter `what` (`ops`, `delay_ns`, `errors`) of operation kind `op`.
    fn counter(&self, what: &str, op: usize) -> u64 {
        self.status()["counters"][what][op].as_u64().unwrap()
    }

    /// Sends `sig` to the disk's daemon (its pid from `status`); the pid.
    fn signal_daemon(&self, sig: Signal) -> Pid {
        let pid = self.status()["state"]["pid"].as_i64().unwrap();
        let pid = Pid::from_raw(pid as i32);
        nix::sys::signal::kill(pid, sig).unwrap();
        pid
    }

    /// `down`, then checks nothing is left: no mount at DIR, an empty run
    /// directory, DIR removed (up made it), the backing files kept.
    fn down_and_check(self) {
        succeed(&mut self.iolab(&["down", s(&self.dir)]));
        assert_clean(&self.dir, &self.run);
        assert!(self.backing.is_dir(), "the backing directory was removed");
    }
}

impl Drop for Disk {
    fn drop(&mut self) {
        if self.run.read_dir().is_ok_and(|mut d| d.next().is_some()) {
            let _ = self.iolab(&["down", s(&self.dir)]).output();
        }
    }
}

/// Nothing mounted at `dir`, nothing left in `run`, `dir` gone.
fn assert_clean(dir: &Path, run: &Path) {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(
        !mounts.lines().any(|l| l.split(' ').nth(1) == Some(s(dir))),
        "still mounted at {}:\n{mounts}",
        dir.display()
    );
    let left: Vec<_> = std::fs::read_dir(run).map_or(vec![], |d| d.flatten().collect());
    assert!(left.is_empty(), "left in the run directory: {left:?}");
    assert!(
        !dir.exists(),
        "{} was made by up and not removed",
        dir.display()
    );
}

fn errno_of(r: std::io::Result<impl Sized>) -> Option<i32> {
    r.err().and_then(|e| e.raw_os_error())
}

#[test]
fn files_pass_through_both_ways() {
    let Some(disk) = Disk::up(
        "files_pass_through_both_ways",
        &[("old.txt", "from the backing\n")],
        &[],
    ) else {
        return;
    };
    let b = |name: &str| disk.backing.join(name);
    // Backing -> DIR, and DIR -> backing.
    assert_eq!(
        std::fs::read_to_string(disk.at("old.txt")).unwrap(),
        "from the backing\n"
    );
    std::fs::write(disk.at("new.txt"), "through DIR\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(b("new.txt")).unwrap(),
        "through DIR\n"
    );
    std::fs::write(b("later.txt"), "made behind its back\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(disk.at("later.txt")).unwrap(),
        "made behind its back\n"
    );
    // mkdir, rename into it, then the renamed file is reachable by its new path.
    std::fs::create_dir(disk.at("d")).unwrap();
    assert!(b("d").is_dir());
    std::fs::rename(disk.at("new.txt"), disk.at("d/moved.txt")).unwrap();
    assert!(!b("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(b("d/moved.txt")).unwrap(),
        "through DIR\n"
    );
    std::fs::rename(disk.at("d"), disk.at("e")).unwrap();
    assert_eq!(
        std::fs::read_to_string(disk.at("e/moved.txt")).unwrap(),
        "through DIR\n"
    );
    // symlink, truncate, chmod, unlink, rmdir.
    std::os::unix::fs::symlink("old.txt", disk.at("link")).unwrap();
    assert_eq!(std::fs::read_link(b("link")).unwrap(), Path::new("old.txt"));
    assert_eq!(
        std::fs::read_to_string(disk.at("link")).unwrap(),
        "from the backing\n"
    );
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(disk.at("old.txt"))
        .unwrap();
    f.set_len(4).unwrap();
    drop(f);
    assert_eq!(std::fs::read_to_string(b("old.txt")).unwrap(), "from");
    std::fs::set_permissions(disk.at("old.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    let mode = std::fs::metadata(b("old.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640);
    std::fs::remove_file(disk.at("e/moved.txt")).unwrap();
    std::fs::remove_dir(disk.at("e")).unwrap();
    assert!(!b("e").exists());
    let mut names: Vec<_> = std::fs::read_dir(&disk.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["later.txt", "link", "old.txt"]);
    disk.down_and_check();
}

#[test]
fn meta_delay_slows_every_stat_and_is_counted() {
    let Some(disk) = Disk::up(
        "meta_delay_slows_every_stat_and_is_counted",
        &[("f", "x")],
        &["--delay", "meta=2ms"],
    ) else {
        return;
    };
    let (ops0, delay0) = (disk.counter("ops", 3), disk.counter("delay_ns", 3));
    let t0 = Instant::now();
    for _ in 0..50 {
        std::fs::metadata(disk.at("f")).unwrap();
    }
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(100), "50 stats took {took:?}");
    let ops = disk.counter("ops", 3) - ops0;
    let delay = disk.counter("delay_ns", 3) - delay0;
    assert!(ops >= 50, "{ops} meta operations counted for 50 stats");
    assert_eq!(delay, ops * 2_000_000, "each meta operation delayed 2 ms");
    // Reads are not metadata: no delay counted for them.
    std::fs::read(disk.at("f")).unwrap();
    assert!(disk.counter("ops", 0) >= 1);
    assert_eq!(disk.counter("delay_ns", 0), 0);
    disk.down_and_check();
}

#[test]
fn fail_rule_by_glob_fails_only_matching_reads() {
    let files = [
        ("a.log", "log\n"),
        ("logs/b.log", "log\n"),
        ("c.txt", "text\n"),
    ];
    let Some(disk) = Disk::up(
        "fail_rule_by_glob_fails_only_matching_reads",
        &files,
        &["--fail", "read=EIO@1@*.log"],
    ) else {
        return;
    };
    assert_eq!(errno_of(std::fs::read(disk.at("a.log"))), Some(libc::EIO));
    // Globs match the path relative to the backing directory.
    assert_eq!(
        errno_of(std::fs::read(disk.at("logs/b.log"))),
        Some(libc::EIO)
    );
    let cat = Command::new("cat").arg(disk.at("a.log")).output().unwrap();
    assert!(!cat.status.success());
    let err = String::from_utf8_lossy(&cat.stderr);
    assert!(err.contains("Input/output error"), "cat said: {err}");
    assert_eq!(std::fs::read_to_string(disk.at("c.txt")).unwrap(), "text\n");
    // Only reads: a .log file still opens, stats and takes writes.
    std::fs::write(disk.at("a.log"), "new\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(disk.backing.join("a.log")).unwrap(),
        "new\n"
    );
    // At least one failed read each (the kernel may try a page again).
    let (reads, failed) = (disk.counter("ops", 0), disk.counter("errors", 0));
    assert!(
        failed >= 3 && failed < reads,
        "{failed} of {reads} reads failed"
    );
    assert_eq!(disk.counter("errors", 1), 0);
    disk.down_and_check();
}

#[test]
fn enospc_after_one_mib_stops_a_two_mib_write() {
    let Some(disk) = Disk::up(
        "enospc_after_one_mib_stops_a_two_mib_write",
        &[],
        &["--fail", "write=ENOSPC@after=1MiB"],
    ) else {
        return;
    };
    let mut f = std::fs::File::create(disk.at("big")).unwrap();
    let chunk = vec![7u8; 64 << 10];
    let mut written = 0;
    let mut failed = None;
    while written < 2 << 20 {
        match f.write_all(&chunk) {
            Ok(()) => written += chunk.len(),
            Err(e) => {
                failed = e.raw_os_error();
                break;
            }
        }
    }
    drop(f);
    assert_eq!(failed, Some(libc::ENOSPC), "after {written} bytes");
    assert_eq!(written, 1 << 20);
    let len = std::fs::metadata(disk.backing.join("big")).unwrap().len();
    assert_eq!(len, 1 << 20, "the backing file has what was accepted");
    disk.down_and_check();
}

#[test]
fn crash_is_refused_on_the_file_layer() {
    let Some(disk) = Disk::up(
        "crash_is_refused_on_the_file_layer",
        &[("kept", "still here")],
        &[],
    ) else {
        return;
    };
    let mut crash = disk.iolab(&["crash", s(&disk.dir)]);
    fails_with(
        &mut crash,
        1,
        "the fs layer cannot crash (power loss is the block layer's: drop --layer fs)",
    );
    assert_eq!(
        std::fs::read_to_string(disk.at("kept")).unwrap(),
        "still here"
    );
    disk.down_and_check();
}

#[test]
fn down_cleans_up_after_the_daemon_was_killed() {
    let Some(disk) = Disk::up(
        "down_cleans_up_after_the_daemon_was_killed",
        &[("kept", "still here")],
        &[],
    ) else {
        return;
    };
    let pid = disk.signal_daemon(Signal::SIGKILL);
    common::wait_until(Duration::from_secs(5), "the daemon dies", || {
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|t| t.contains(") Z"))
    });
    assert_eq!(disk.status()["daemon"], "gone");
    disk.down_and_check();
}

#[test]
fn bad_backing_directories_are_refused_before_anything_is_made() {
    if !can_mount("bad_backing_directories_are_refused_before_anything_is_made") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, run) = (tmp.path().join("mnt"), tmp.path().join("run"));
    let up = |extra: &[&str]| {
        let mut c = bin();
        c.env("IOLAB_RUN_DIR", &run)
            .args(["disk", "up", s(&dir), "--layer", "fs"])
            .args(extra);
        c
    };
    fails_with(&mut up(&[]), 2, "--backing DIR2");
    let missing = tmp.path().join("missing");
    fails_with(
        &mut up(&["--backing", s(&missing)]),
        2,
        "an existing directory",
    );
    let file = common::write_file(tmp.path(), "file", "x");
    fails_with(&mut up(&["--backing", s(&file)]), 2, "a directory to serve");
    fails_with(&mut up(&["--backing", s(tmp.path())]), 2, "nor holding it");
    let inside = dir.join("sub");
    std::fs::create_dir_all(&inside).unwrap();
    fails_with(&mut up(&["--backing", s(&inside)]), 2, "neither inside DIR");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_clean(&dir, &run);
}

#[test]
fn a_failed_metadata_operation_is_not_done() {
    let Some(disk) = Disk::up(
        "a_failed_metadata_operation_is_not_done",
        &[("tmp/keep", "k")],
        &["--fail", "meta=EACCES@1@tmp/*"],
    ) else {
        return;
    };
    assert_eq!(
        errno_of(std::fs::create_dir(disk.at("tmp/x"))),
        Some(libc::EACCES)
    );
    assert_eq!(
        errno_of(std::fs::remove_file(disk.at("tmp/keep"))),
        Some(libc::EACCES)
    );
    assert!(!disk.backing.join("tmp/x").exists());
    assert!(disk.backing.join("tmp/keep").exists());
    // Outside the glob, the same operations are done.
    std::fs::create_dir(disk.at("other")).unwrap();
    assert!(disk.backing.join("other").is_dir());
    disk.down_and_check();
}

#[test]
fn delayed_operations_of_several_threads_overlap() {
    // 32 files, each `stat`ed by a thread of its own, each stat one or two
    // metadata operations of 1 s: one after another they take 32 s or
    // more, side by side about 2. Under 16 s (half the serial time, over
    // 8 times the overlapped one: a loaded machine does not stretch timer
    // waits of seconds that far) proves the overlap without timing it.
    let names: Vec<String> = (0..32).map(|i| format!("f{i}")).collect();
    let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    let Some(disk) = Disk::up(
        "delayed_operations_of_several_threads_overlap",
        &files,
        &["--delay", "meta=1s"],
    ) else {
        return;
    };
    let (ops0, delay0) = (disk.counter("ops", 3), disk.counter("delay_ns", 3));
    let t0 = Instant::now();
    let took: Vec<Duration> = std::thread::scope(|sc| {
        let threads: Vec<_> = (names.iter())
            .map(|name| {
                let p = disk.at(name);
                sc.spawn(move || {
                    let t = Instant::now();
                    std::fs::metadata(p).unwrap();
                    t.elapsed()
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let all = t0.elapsed();
    // Each waited out its delay (a lower bound: load only adds) ...
    assert!(
        took.iter().all(|t| *t >= Duration::from_secs(1)),
        "{took:?}"
    );
    let ops = disk.counter("ops", 3) - ops0;
    assert!(ops >= 32, "{ops} meta operations counted for 32 stats");
    assert_eq!(disk.counter("delay_ns", 3) - delay0, ops * 1_000_000_000);
    // ... side by side.
    assert!(
        all < Duration::from_secs(16),
        "32 stats of 1 s at once took {all:?}: one after another"
    );
    disk.down_and_check();
}

#[test]
fn down_answers_operations_still_delayed_at_once() {
    let Some(disk) = Disk::up(
        "down_answers_operations_still_delayed_at_once",
        &[("f", "data")],
        &["--delay", "read=60s"],
    ) else {
        return;
    };
    let reads0 = disk.counter("ops", 0);
    let p = disk.at("f");
    let reader = std::thread::spawn(move || std::fs::read_to_string(p));
    // The read reached the disk (its counter), and waits out its 60 s.
    common::wait_until(Duration::from_secs(30), "the read reaches the disk", || {
        disk.counter("ops", 0) > reads0
    });
    assert!(!reader.is_finished(), "the read was not delayed");
    let (dir, run) = (disk.dir.clone(), disk.run.clone());
    let t0 = Instant::now();
    succeed(&mut disk.iolab(&["down", s(&dir)]));
    assert_eq!(reader.join().unwrap().unwrap(), "data");
    // A liveness bound, not a timing: down takes well under a second, the
    // read's delay is 60 s.
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(20), "down took {took:?}");
    assert_clean(&dir, &run);
}

#[test]
fn sigterm_to_the_daemon_removes_the_disk() {
    let Some(disk) = Disk::up("sigterm_to_the_daemon_removes_the_disk", &[], &[]) else {
        return;
    };
    disk.signal_daemon(Signal::SIGTERM);
    common::wait_until(Duration::from_secs(5), "the daemon cleans up", || {
        disk.run.read_dir().is_ok_and(|mut d| d.next().is_none()) && !disk.dir.exists()
    });
    assert_clean(&disk.dir, &disk.run);
}

#[test]
fn iolab_runs_lay_out_their_files_on_the_file_layer() {
    let Some(disk) = Disk::up("iolab_runs_lay_out_their_files_on_the_file_layer", &[], &[]) else {
        return;
    };
    // iolab marks what it lays out with an extended attribute: passed through.
    let (f, kept) = (disk.at("data/f"), disk.backing.join("data/f"));
    let args = common::job("r", &f, "--size=1m --rw=read --bs=64k --no-store");
    let run = || succeed(bin().env("IOLAB_RUN_DIR", &disk.run).arg("run").args(&args));
    run();
    assert_eq!(std::fs::metadata(&kept).unwrap().len(), 1 << 20);
    assert!(iolab::sys::xattr::has(&kept, "user.iolab.layout"));
    // A second run finds the file as its own and reads it.
    run();
    assert!(disk.counter("ops", 3) > 0);
    disk.down_and_check();
}
