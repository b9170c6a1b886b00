//! An injected disk (`iolab disk up`) for a test: its own mount point and
//! private run directory, brought down when dropped, and checks that
//! nothing of it is left (no mount, no loop device, no run directory).

use super::{bin, s};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// True when this machine can make iolab disks; otherwise prints why the
/// test `test` is skipped (CI runs as root with FUSE and loop devices).
pub fn can(test: &str) -> bool {
    let why = if !nix_root() {
        "needs root"
    } else if !Path::new("/dev/fuse").exists() {
        "needs /dev/fuse"
    } else if !Path::new("/dev/loop-control").exists() {
        "needs /dev/loop-control"
    } else {
        enable_uring();
        return super::have("mkfs.ext4", test);
    };
    eprintln!("SKIP {test}: iolab disk {why}");
    false
}

/// The fuse module's switch for FUSE over io_uring.
pub const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";

/// Turns FUSE over io_uring on, so disks brought up with `--transport
/// auto` (the default) take it; tests/disk_transport.rs runs the other
/// transport by name. Prints why when this kernel cannot.
pub fn enable_uring() {
    if std::fs::read_to_string(ENABLE_URING).is_ok_and(|v| v.trim() == "Y") {
        return;
    }
    if let Err(e) = std::fs::write(ENABLE_URING, "1") {
        eprintln!(
            "note: cannot turn on FUSE over io_uring ({ENABLE_URING}: {e}): disks use /dev/fuse"
        );
    }
}

fn nix_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A disk brought up for one test.
pub struct TestDisk {
    /// Where its file system is mounted.
    pub dir: PathBuf,
    /// Its `IOLAB_RUN_DIR`.
    pub run: PathBuf,
    _scratch: tempfile::TempDir,
    up: bool,
    // Dropped last: the next test's disk waits until this one is down.
    _turn: std::sync::MutexGuard<'static, ()>,
}

/// One disk at a time: their timings would disturb each other's.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl TestDisk {
    /// `iolab disk up DIR ARGS` in a fresh scratch directory.
    pub fn up(args: &[&str]) -> TestDisk {
        TestDisk::bring_up(TestDisk::new(), args)
    }

    /// As [`TestDisk::up`], in a scratch directory under the system's
    /// temporary directory: under a target directory with a long path the
    /// disk's control socket would be over SUN_LEN (108 bytes).
    pub fn up_short(args: &[&str]) -> TestDisk {
        TestDisk::bring_up(TestDisk::new_in(tempfile::tempdir().unwrap()), args)
    }

    fn bring_up(mut d: TestDisk, args: &[&str]) -> TestDisk {
        let mut cmd = d.cmd();
        cmd.args(["disk", "up", s(&d.dir)]).args(args);
        // The whole suite on the other transport: IOLAB_TEST_DISK_TRANSPORT=dev.
        if let Ok(t) = std::env::var("IOLAB_TEST_DISK_TRANSPORT")
            && !args.contains(&"--transport")
        {
            cmd.args(["--transport", &t]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "disk up {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        d.up = true;
        d
    }

    /// A scratch directory and run directory, nothing up yet.
    pub fn new() -> TestDisk {
        TestDisk::new_in(super::scratch())
    }

    fn new_in(scratch: tempfile::TempDir) -> TestDisk {
        let dir = scratch.path().join("mnt");
        let run = scratch.path().join("run");
        TestDisk {
            dir,
            run,
            _scratch: scratch,
            up: false,
            _turn: TURN.lock().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// The iolab binary with this disk's run directory.
    pub fn cmd(&self) -> Command {
        let mut c = bin();
        c.env("IOLAB_RUN_DIR", &self.run);
        c
    }

    /// `iolab disk SUB DIR ARGS`, asserting success; stdout.
    pub fn disk(&self, sub: &str, args: &[&str]) -> String {
        super::stdout_text(self.cmd().args(["disk", sub, s(&self.dir)]).args(args))
    }

    /// `iolab disk status DIR -f json`: the disk's entry.
    pub fn status(&self) -> Value {
        let v = super::stdout_json(
            self.cmd()
                .args(["disk", "status", s(&self.dir), "-f", "json"]),
        );
        v["disks"][0].clone()
    }

    /// `iolab run ARGS --output-format=json` seeing this disk (its
    /// counters and rules go into the run); the parsed JSON.
    pub fn run_json(&self, args: &[String]) -> Value {
        super::stdout_json(self.cmd().arg("run").args(args).arg("--output-format=json"))
    }

    /// A file on the disk.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Brings it down now and checks nothing is left.
    pub fn down(mut self) {
        self.disk("down", &[]);
        self.up = false;
        assert_clean(&self.dir, &self.run);
    }

    /// Marks it as already brought down by the test.
    pub fn gone(mut self) {
        self.up = false;
        assert_clean(&self.dir, &self.run);
    }
}

impl Drop for TestDisk {
    fn drop(&mut self) {
        // Also a disk a failed test left half made (a run directory exists).
        let left = std::fs::read_dir(&self.run).is_ok_and(|mut e| e.next().is_some());
        if self.up || left {
            let _ = self.cmd().args(["disk", "down", s(&self.dir)]).output();
        }
    }
}

/// Nothing of the disk at `dir` with run directory `run` is left: no
/// mount at or under either, no loop device over a file in `run`, no
/// private directory.
pub fn assert_clean(dir: &Path, run: &Path) {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    for m in mounts.lines() {
        let point = m.split(' ').nth(1).unwrap_or_default();
        assert!(
            !point.starts_with(s(dir)) && !point.starts_with(s(run)),
            "left mounted: {m}"
        );
    }
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let loops = String::from_utf8_lossy(&loops.stdout);
    assert!(!loops.contains(s(run)), "loop device left: {loops}");
    let left: Vec<_> = std::fs::read_dir(run)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the run directory: {left:?}");
}
