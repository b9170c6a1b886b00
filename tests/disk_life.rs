//! `iolab disk`'s life: up, down and everything in between that must
//! leave nothing behind (signals, SIGKILL of the daemon, Ctrl-C during up),
//! refusals with their messages, image files, xfs. Needs root, /dev/fuse
//! and loop devices (CI has them).

mod common;

use common::disk::{TestDisk, assert_clean, can};
use common::*;
use std::time::Duration;

#[test]
fn sigkill_of_the_daemon_then_down_leaves_nothing() {
    if !can("sigkill_of_the_daemon_then_down_leaves_nothing") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M", "--delay", "1ms"]);
    std::fs::write(d.file("a"), b"data").unwrap();
    let pid = d.status()["state"]["pid"].as_i64().unwrap() as i32;
    // SAFETY: a signal to the test's own daemon.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    // Gone once the kernel has ended it (not after a guessed 200 ms).
    wait_until(Duration::from_secs(30), "the daemon dies", || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |t| t.contains(") Z"))
    });
    assert_eq!(d.status()["daemon"], "gone");
    let text = d.disk("status", &[]);
    assert!(text.contains("is gone"), "{text}");
    let said = d.disk("down", &[]);
    assert!(said.contains("cleaned up by hand"), "{said}");
    d.gone();
}

#[test]
fn sigterm_to_the_daemon_and_foreground_leave_nothing() {
    if !can("sigterm_to_the_daemon_and_foreground_leave_nothing") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M"]);
    let pid = d.status()["state"]["pid"].as_i64().unwrap() as i32;
    // SAFETY: a signal to the test's own daemon.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    // Its private directory goes last, after every unmount.
    wait_until(
        Duration::from_secs(10),
        "the daemon removed its disk",
        || {
            std::fs::read_dir(&d.run)
                .map(|mut e| e.next().is_none())
                .unwrap_or(true)
        },
    );
    d.gone();

    // --foreground serves in the command itself until SIGINT (Ctrl-C).
    let d = TestDisk::new();
    let child = d
        .cmd()
        .args(["disk", "up", s(&d.dir), "--size", "64M", "--foreground"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(Duration::from_secs(10), "the foreground disk is up", || {
        std::fs::read_to_string("/proc/mounts")
            .unwrap()
            .contains(s(&d.dir))
    });
    // SAFETY: a signal to the test's own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    // Stopped by Ctrl-C (exit 130), having said what it removed.
    assert_eq!(out.status.code(), Some(130));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("serving until Ctrl-C") && said.contains("removed"),
        "{said}"
    );
    d.gone();
}

/// Sends `signal` to `iolab disk up DIR --size SIZE` alone, `after` its
/// private directory appeared (its signal handlers are in place then):
/// it must exit 128 + signal, print nothing on stdout, say on stderr that
/// it removed what it made, and leave nothing behind.
fn signal_up(test: &str, size: &str, after: Duration, signal: i32) {
    if !can(test) {
        return;
    }
    let d = TestDisk::new();
    let child = d
        .cmd()
        .args(["disk", "up", s(&d.dir), "--size", size])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(
        Duration::from_secs(10),
        "up made its private directory",
        || std::fs::read_dir(&d.run).is_ok_and(|mut e| e.next().is_some()),
    );
    std::thread::sleep(after);
    // SAFETY: a signal to the test's own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + signal), "{err}");
    assert!(
        err.contains("interrupted; everything made so far was removed"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    wait_until(
        Duration::from_secs(10),
        "the daemon removed what it made",
        || {
            std::fs::read_dir(&d.run)
                .map(|mut e| e.next().is_none())
                .unwrap_or(true)
        },
    );
    d.gone();
}

#[test]
fn ctrl_c_during_up_removes_what_was_made() {
    // A large image: mkfs takes long enough to be interrupted.
    signal_up(
        "ctrl_c_during_up",
        "4G",
        Duration::from_millis(150),
        libc::SIGINT,
    );
}

#[test]
fn refuses_with_a_clear_error() {
    if !can("refuses_with_a_clear_error") {
        return;
    }
    let d = TestDisk::new();
    let up = |args: &[&str]| {
        let mut c = d.cmd();
        c.args(["disk", "up", s(&d.dir)]).args(args);
        c
    };
    // A non-empty directory is never mounted over.
    std::fs::create_dir_all(&d.dir).unwrap();
    std::fs::write(d.dir.join("precious"), b"x").unwrap();
    fails_with(&mut up(&[]), code::REFUSED, "is not empty");
    std::fs::remove_file(d.dir.join("precious")).unwrap();
    // Bad rules and sizes are usage errors naming the flag and value.
    fails_with(&mut up(&["--delay", "fast"]), code::USAGE, "--delay fast");
    fails_with(
        &mut up(&["--fail", "EIO@2"]),
        code::USAGE,
        "a share between 0 and 1",
    );
    fails_with(&mut up(&["--size", "huge"]), code::USAGE, "--size huge");
    fails_with(&mut up(&["--layer", "nbd"]), code::USAGE, "--layer nbd");
    fails_with(&mut up(&["--fs", "btrfs"]), code::USAGE, "ext4 or xfs");
    // Without root.
    if have("setpriv", "refuses_with_a_clear_error") {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("iolab"))
            .args(["disk", "up", s(&d.dir)])
            .env("IOLAB_RUN_DIR", &d.run);
        fails_with(&mut c, 1, "needs root");
    }
    // Without /dev/fuse, then without loop devices: a /dev of our own.
    if have("unshare", "refuses_with_a_clear_error") {
        let bin = assert_cmd::cargo::cargo_bin("iolab");
        let script = format!(
            "mount -t tmpfs none /dev && {bin} disk up {dir}; \
             mknod /dev/fuse c 10 229 && {bin} disk up {dir}",
            bin = s(&bin),
            dir = s(&d.dir)
        );
        let out = std::process::Command::new("unshare")
            .args(["-m", "sh", "-c", &script])
            .env("IOLAB_RUN_DIR", &d.run)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("/dev/fuse is missing"), "{err}");
        assert!(err.contains("/dev/loop-control is missing"), "{err}");
    }
    // Commands on a place with no disk, then twice at one place.
    fails_with(
        d.cmd().args(["disk", "down", s(&d.dir)]),
        1,
        "no iolab disk at",
    );
    fails_with(
        d.cmd().args(["disk", "set", s(&d.dir), "--delay", "1ms"]),
        1,
        "no iolab disk at",
    );
    succeed(&mut up(&["--size", "64M"]));
    fails_with(&mut up(&["--size", "64M"]), 1, "already has an iolab disk");
    d.down();
}

#[test]
fn image_file_is_kept_and_reused() {
    if !can("image_file_is_kept_and_reused") {
        return;
    }
    let keep = scratch();
    let img = keep.path().join("disk.img");
    let d = TestDisk::up(&["--size", "64M", "--image", s(&img)]);
    std::fs::write(d.file("note"), b"still here").unwrap();
    let status = d.disk("status", &[]);
    assert!(status.contains(s(&img)), "{status}");
    let (dir, run) = (d.dir.clone(), d.run.clone());
    d.down();
    assert_eq!(std::fs::metadata(&img).unwrap().len(), 64 << 20);
    // Up again on the same image: no mkfs, the file is there.
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_RUN_DIR", &run)
        .args(["disk", "up", s(&dir), "--image", s(&img)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(dir.join("note")).unwrap(), b"still here");
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolab"))
        .env("IOLAB_RUN_DIR", &run)
        .args(["disk", "down", s(&dir)])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_clean(&dir, &run);
}

#[test]
fn xfs_on_the_block_layer() {
    if !can("xfs_on_the_block_layer") || !have("mkfs.xfs", "xfs_on_the_block_layer") {
        return;
    }
    let d = TestDisk::up(&["--size", "320M", "--fs", "xfs", "--delay", "write=1ms"]);
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    let line = mounts.lines().find(|l| l.contains(s(&d.dir))).unwrap();
    assert!(line.contains(" xfs "), "{line}");
    std::fs::write(d.file("x"), b"xfs").unwrap();
    d.down();
}

#[test]
fn sigterm_to_up_alone_removes_the_disk_even_once_it_is_up() {
    // As `timeout` or systemd do: the signal goes to `up` only, early.
    signal_up("sigterm_to_up_alone", "64M", Duration::ZERO, libc::SIGTERM);
}

#[test]
fn read_ahead_sets_the_loop_device() {
    if !can("read_ahead_sets_the_loop_device") {
        return;
    }
    // The kernel gives a loop device a readahead of its choosing (128 or
    // 2560 KiB on Linux 6.18): --read-ahead sets it. 0 turns it off,
    // which the reads show: one request per 4 KiB read.
    let d = TestDisk::up(&["--size", "64M", "--read-ahead", "0"]);
    let st = d.status();
    let lo = st["state"]["parts"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p[0] == "loop"))
        .unwrap_or_else(|| panic!("{st}"))[1]
        .as_str()
        .unwrap()
        .to_string();
    assert!(lo.contains("read_ahead_kb 0"), "{lo}");
    let n = lo.trim_start_matches("/dev/loop");
    let n = &n[..n.find(' ').unwrap()];
    let sysfs = std::fs::read_to_string(format!("/sys/block/loop{n}/queue/read_ahead_kb"));
    assert_eq!(sysfs.unwrap().trim(), "0");
    assert_eq!(st["state"]["spec"]["read_ahead_kb"], 0, "{st}");
    let f = d.file("f");
    lay_out(&f, "4m");
    let r = d.run_json(&job("r", &f, "--size=4m --rw=read --bs=4k --cache=cold"));
    let ops = &r["jobs"][0]["iolab"]["counters"]["injected"]["read_ops"];
    assert!(ops.as_u64().unwrap() >= 1024, "{ops} reads for 1024 pages");
    d.down();
    // A block-layer flag: the file layer refuses it, and KiB must be a number.
    let d = TestDisk::new();
    let up = |args: &[&str]| {
        let mut c = d.cmd();
        c.args(["disk", "up", s(&d.dir)]).args(args);
        c
    };
    let backing = scratch();
    fails_with(
        &mut up(&[
            "--layer",
            "fs",
            "--backing",
            s(backing.path()),
            "--read-ahead",
            "128",
        ]),
        code::USAGE,
        "--read-ahead 128",
    );
    fails_with(&mut up(&["--read-ahead", "lots"]), code::USAGE, "lots");
    fails_with(
        &mut up(&["--read-ahead", "4194304"]),
        code::USAGE,
        "at most",
    );
    assert_clean(&d.dir, &d.run);
}
