//! Issue 35: `iolab disk` never touches what is not its own. A process that
//! took a dead daemon's PID is never signalled; disks do not nest; mount
//! points iolab did not make are refused; in-memory disks are counted
//! together against the memory there is, and discarded blocks free theirs;
//! a permission error is not a dead daemon; `down` removes the parents `up`
//! made and only those; delay distributions that cannot have the mean asked
//! for are refused. Needs root, /dev/fuse and loop devices (CI has them).

mod common;

use common::disk::{TestDisk, assert_clean, can};
use common::*;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

/// A `sleep` started with PID `pid` (through `ns_last_pid`; other
/// processes may fork meanwhile, so it is tried again), or None.
fn stranger_with_pid(pid: i32) -> Option<Child> {
    for _ in 0..200 {
        std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string()).ok()?;
        let mut c = Command::new("sleep").arg("120").spawn().unwrap();
        if c.id() as i32 == pid {
            return Some(c);
        }
        let _ = c.kill();
        let _ = c.wait();
    }
    None
}

/// `VmRSS` of `pid` in bytes.
fn rss(pid: i64) -> u64 {
    let t = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = t.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// The loop device under the file system mounted at `dir` (`loop3`).
fn loop_of(dir: &Path) -> String {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let dev = (mounts.lines())
        .find(|l| l.split(' ').nth(1) == Some(s(dir)))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .to_string();
    dev.trim_start_matches("/dev/").to_string()
}

/// `iolab disk down DIR` when dropped (a disk a failing test made).
struct DownOnDrop(Command, std::path::PathBuf);

impl Drop for DownOnDrop {
    fn drop(&mut self) {
        if std::fs::read_to_string("/proc/mounts").is_ok_and(|m| m.contains(s(&self.1))) {
            let _ = self.0.args(["disk", "down", s(&self.1)]).output();
        }
    }
}

#[test]
fn down_never_signals_a_process_that_took_the_dead_daemons_pid() {
    if !can("down_never_signals_a_process_that_took_the_dead_daemons_pid") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M"]);
    let pid = d.status()["state"]["pid"].as_i64().unwrap() as i32;
    // SAFETY: a signal to the test's own daemon.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    while Path::new(&format!("/proc/{pid}")).exists() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let Some(mut stranger) = stranger_with_pid(pid) else {
        eprintln!("SKIP down_never_signals...: could not start a process with PID {pid}");
        return;
    };
    // Status does not take the stranger for the daemon.
    assert_eq!(d.status()["daemon"], "gone");
    let said = d.disk("down", &[]);
    assert!(said.contains("cleaned up by hand"), "{said}");
    std::thread::sleep(Duration::from_millis(200));
    let alive = stranger.try_wait().unwrap().is_none();
    let _ = stranger.kill();
    let _ = stranger.wait();
    assert!(alive, "the process that took PID {pid} was killed");
    d.gone();
}

#[test]
fn disks_do_not_nest_and_foreign_mount_points_are_refused() {
    if !can("disks_do_not_nest_and_foreign_mount_points_are_refused") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M"]);
    let up = |dir: &Path| {
        let mut c = d.cmd();
        c.args(["disk", "up", s(dir), "--size", "32M"]);
        c
    };
    let inner = d.dir.join("inner");
    let _down = DownOnDrop(d.cmd(), inner.clone());
    let e = fails_with(&mut up(&inner), code::REFUSED, "disks do not nest");
    assert!(
        e.contains(&format!("is inside the iolab disk at {}", s(&d.dir))),
        "{e}"
    );
    assert!(!inner.exists(), "nothing made inside the disk");
    // Above it: the directory that holds the disk.
    let above = d.dir.parent().unwrap();
    fails_with(&mut up(above), code::REFUSED, "holds the iolab disk at");
    // The outer disk is untouched and still serving.
    assert_eq!(d.status()["daemon"], "running");
    // Mount points iolab did not make: refused as unsafe, with their type.
    fails_with(
        &mut up(Path::new("/proc")),
        code::REFUSED,
        "mount point iolab did not make (proc",
    );
    fails_with(
        &mut up(Path::new("/")),
        code::REFUSED,
        "mount point iolab did not make",
    );
    let scratch = scratch();
    let m = scratch.path().join("m");
    std::fs::create_dir(&m).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "none", s(&m)])
        .status()
        .unwrap();
    assert!(mounted.success());
    let e = fails_with(&mut up(&m), code::REFUSED, "(tmpfs from none)");
    let _ = Command::new("umount").arg(&m).status();
    assert!(!e.contains("already has an iolab disk"), "{e}");
    d.down();
}

#[test]
fn in_memory_disks_are_counted_together_and_discard_frees_memory() {
    if !can("in_memory_disks_are_counted_together_and_discard_frees_memory") {
        return;
    }
    // Two disks of 60% of the available memory each: the second is refused,
    // naming the first (each was checked alone before).
    let avail = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = (avail.lines())
        .find(|l| l.starts_with("MemAvailable:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    let big = format!("{}M", kb * 6 / 10 / 1024);
    let first = TestDisk::up(&["--size", &big]);
    let second = first.dir.parent().unwrap().join("second");
    // Should the second come up (it did before), it goes down with the test.
    let _down = DownOnDrop(first.cmd(), second.clone());
    let e = fails_with(
        first.cmd().args(["disk", "up", s(&second), "--size", &big]),
        code::USAGE,
        "may still take",
    );
    assert!(e.contains(s(&first.dir)), "{e}");
    first.down();

    // Discard: the loop device passes it on, and freed blocks free memory.
    let d = TestDisk::up(&["--size", "256M", "--mount-options", "commit=600"]);
    let dev = loop_of(&d.dir);
    let max = std::fs::read_to_string(format!("/sys/block/{dev}/queue/discard_max_bytes")).unwrap();
    assert_ne!(max.trim(), "0", "discard is on for {dev}");
    let pid = d.status()["state"]["pid"].as_i64().unwrap();
    let before = rss(pid);
    // 96 MiB written with O_DIRECT and not flushed: fresh blocks, so the
    // undo log keeps no copies of them (it kept 96 MiB more before).
    let f = d.file("f");
    let dd = Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", s(&f)),
            "bs=1M",
            "count=96",
        ])
        .args(["oflag=direct", "status=none"])
        .status()
        .unwrap();
    assert!(dd.success());
    let unflushed = d.status()["unflushed"].as_u64().unwrap();
    let written = rss(pid).saturating_sub(before);
    assert!(
        unflushed >= 90 << 20,
        "the writes are not flushed yet: {unflushed}"
    );
    assert!(
        written < 130 << 20,
        "96 MiB written took {} MiB of the daemon's memory",
        written >> 20
    );
    // Removed and trimmed: the memory goes back.
    std::fs::remove_file(&f).unwrap();
    assert!(Command::new("sync").status().unwrap().success());
    let trim = Command::new("fstrim").arg(&d.dir).output().unwrap();
    assert!(
        trim.status.success(),
        "{}",
        String::from_utf8_lossy(&trim.stderr)
    );
    let after = rss(pid);
    assert!(
        after < before + (24 << 20),
        "after rm and fstrim the daemon holds {} MiB more than before the writes",
        after.saturating_sub(before) >> 20
    );
    d.down();
}

#[test]
fn a_permission_error_is_not_a_dead_daemon() {
    if !can("a_permission_error_is_not_a_dead_daemon")
        || !have("setpriv", "a_permission_error_is_not_a_dead_daemon")
    {
        return;
    }
    let d = TestDisk::up(&["--size", "64M"]);
    // Let another user read the state files (the scratch directory is
    // private); the control socket stays root's.
    let mut p = d.run.clone();
    while p.pop() {
        if p == std::env::temp_dir() || p.as_os_str().is_empty() {
            break;
        }
        let _ = Command::new("chmod").args(["o+rx", s(&p)]).status();
    }
    let _ = Command::new("chmod")
        .args(["-R", "o+rX", s(&d.run)])
        .status();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("iolab"))
        .args(["disk", "status", s(&d.dir)])
        .env("IOLAB_RUN_DIR", &d.run)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("is gone"), "{text}");
    assert!(text.contains("runs but did not answer"), "{text}");
    assert!(text.to_lowercase().contains("permission denied"), "{text}");
    d.down();
}

#[test]
fn down_removes_the_parents_up_made_and_only_those() {
    if !can("down_removes_the_parents_up_made_and_only_those") {
        return;
    }
    let d = TestDisk::new();
    let base = d.dir.parent().unwrap().to_path_buf();
    let deep = base.join("a/b/c");
    let disk = |sub: &str, args: &[&str]| {
        succeed(d.cmd().args(["disk", sub, s(&deep)]).args(args));
    };
    // a/b/c made by up: all three go.
    disk("up", &["--size", "32M"]);
    disk("down", &[]);
    assert!(!base.join("a").exists(), "a/b/c and its parents removed");
    // Something of the user's in a/ after up: a stays with it, b goes.
    disk("up", &["--size", "32M"]);
    std::fs::write(base.join("a/mine"), b"keep").unwrap();
    disk("down", &[]);
    assert!(!base.join("a/b").exists());
    assert_eq!(std::fs::read(base.join("a/mine")).unwrap(), b"keep");
    assert_clean(&deep, &d.run);
}

#[test]
fn delays_that_cannot_have_their_mean_are_refused() {
    if !can("delays_that_cannot_have_their_mean_are_refused") {
        return;
    }
    let d = TestDisk::new();
    let up = |delay: &str| {
        let mut c = d.cmd();
        c.args(["disk", "up", s(&d.dir), "--size", "32M", "--delay", delay]);
        c
    };
    // Uniform 1ms ± 5ms was cut at 0 and injected a mean of 3 ms.
    let e = fails_with(&mut up("1ms~5ms"), code::USAGE, "average 3ms, not 1ms");
    assert!(e.contains("--delay 1ms~5ms"), "{e}");
    fails_with(
        &mut up("normal:1ms,1ms"),
        code::USAGE,
        "the mean injected would be",
    );
    fails_with(
        &mut up("lognormal:0,1ms"),
        code::USAGE,
        "a lognormal delay has a mean above 0",
    );
    assert!(!d.dir.exists(), "refused before anything was made");
}

#[test]
fn small_things_are_said_plainly() {
    if !can("small_things_are_said_plainly") {
        return;
    }
    let d = TestDisk::new();
    let up = |dir: &Path, args: &[&str]| {
        let mut c = d.cmd();
        c.args(["disk", "up", s(dir), "--size", "32M"]).args(args);
        c
    };
    // A negative delay with a space is the rule's error, not clap's.
    fails_with(
        &mut up(&d.dir, &["--delay", "-1ms"]),
        code::USAGE,
        "'-1ms' is negative",
    );
    // A rate that is no size says why, not "more than 0".
    let e = fails_with(&mut up(&d.dir, &["--bw", "1e30"]), code::USAGE, "--bw 1e30");
    assert!(!e.contains("more than 0"), "{e}");
    // Metadata rules never fire on the block layer.
    fails_with(
        &mut up(&d.dir, &["--delay", "meta=2ms"]),
        code::USAGE,
        "meta rules need --layer fs",
    );
    // A directory name with a newline: the suggested commands quote it.
    let odd = d.dir.parent().unwrap().join("a\nb");
    let out = stdout_text(&mut up(&odd, &[]));
    let q = format!("iolab disk down $'{}'", s(&odd).replace('\n', "\\n"));
    assert!(out.contains(&q), "{out}");
    // Down while a file is open under it: it says it detached lazily.
    let held = std::fs::File::create(odd.join("open")).unwrap();
    let said = stdout_text(d.cmd().args(["disk", "down", s(&odd)]));
    assert!(said.contains("detached lazily"), "{said}");
    drop(held);
    for _ in 0..100 {
        if !std::fs::read_to_string("/proc/mounts")
            .unwrap()
            .contains("a\\012b")
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_clean(&odd, &d.run);
}
