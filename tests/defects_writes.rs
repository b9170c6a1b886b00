//! Issue 14's defects about what iolab writes and where (1, 2, 3, 8, 9):
//! one regression test per defect, named after it. Each failed before the
//! fix; docs/SAFETY.md names them beside the promises they prove.

mod common;
use common::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Defect 1: the write-safety check looked at a path and the file was then
/// opened again by name; a path swapped for a symlink to a precious file
/// in between was overwritten. Now every check is on the opened descriptor
/// and every later open must find the same inode: 200 tries, 0 victims.
#[test]
fn defect_01_check_then_open_race() {
    let (d, p) = scratch_file();
    let job = job("w", &p, "--size=64k --rw=write --no-store");
    succeed(bin().arg("run").args(&job));
    // R: a second name for iolab's marked file; V: the precious file.
    let r = d.path().join("r");
    fs::hard_link(&p, &r).unwrap();
    let victim = d.path().join("precious");
    let precious = vec![b'x'; 64 << 10];
    fs::write(&victim, &precious).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (dir, p, r, victim, stop) = (
            d.path().to_path_buf(),
            p.clone(),
            r.clone(),
            victim.clone(),
            stop.clone(),
        );
        // P alternates between iolab's file and a symlink to the victim,
        // each swap one atomic rename.
        std::thread::spawn(move || {
            let (t1, t2) = (dir.join("t1"), dir.join("t2"));
            while !stop.load(Ordering::Relaxed) {
                let _ = fs::remove_file(&t1);
                symlink(&victim, &t1).unwrap();
                fs::rename(&t1, &p).unwrap();
                let _ = fs::remove_file(&t2);
                fs::hard_link(&r, &t2).unwrap();
                fs::rename(&t2, &p).unwrap();
            }
        })
    };
    let (mut wrote, mut refused) = (0, 0);
    for _ in 0..200 {
        let out = bin().arg("run").args(&job).output().unwrap();
        match out.status.code() {
            Some(0) => wrote += 1,
            Some(c) if c == code::REFUSED => refused += 1,
            c => panic!("exit {c:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
        assert_eq!(
            fs::read(&victim).unwrap(),
            precious,
            "the precious file was written"
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!("race: {wrote} runs wrote iolab's file, {refused} were refused, 0 victims");
    assert!(wrote + refused == 200);
}

/// Defect 2: outputs followed symlinks and clobbered what they point to.
/// Now an existing output is replaced only when it is a regular file.
#[test]
fn defect_02_outputs_never_write_through_a_symlink() {
    let (d, f) = scratch_file();
    let victim = d.path().join("precious");
    fs::write(&victim, "keep me").unwrap();
    let link = d.path().join("out.json");
    symlink(&victim, &link).unwrap();
    let base = job("o", &f, "--size=64k");
    // --output FILE
    let mut args = vec![
        "run".to_string(),
        "--no-store".into(),
        "--output".into(),
        s(&link).into(),
    ];
    args.extend(base.iter().cloned());
    fails_with(
        bin().args(&args),
        code::REFUSED,
        "not a regular file (a symbolic link)",
    );
    // fio's log files: PREFIX_lat.1.log etc.
    let prefix = d.path().join("lg");
    symlink(&victim, d.path().join("lg_clat.1.log")).unwrap();
    let lat = format!("--write_lat_log={}", s(&prefix));
    fails_with(
        bin().args(["run", "--no-store"]).args(&base).arg(&lat),
        code::REFUSED,
        "lg_clat.1.log",
    );
    // plots and reports
    let png = d.path().join("p.svg");
    symlink(&victim, &png).unwrap();
    fails_with(
        bin()
            .args([
                "sweep",
                "--no-store",
                "--vary",
                "bs=4k,8k",
                "--plot",
                s(&png),
            ])
            .args(&base),
        code::REFUSED,
        "p.svg",
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
    // A regular file there is replaced, as before.
    fs::remove_file(&link).unwrap();
    fs::write(&link, "old").unwrap();
    let mut args = vec![
        "run".to_string(),
        "--output-format=json".into(),
        "--output".into(),
        s(&link).into(),
    ];
    args.extend(base.iter().cloned());
    succeed(bin().args(&args));
    assert!(fs::read_to_string(&link).unwrap().starts_with('{'));
}

/// Defect 3: --allow-overwrite wrote a block device that was mounted.
/// Now a device iolab writes is opened with O_EXCL: a mounted one is refused.
#[test]
fn defect_03_mounted_block_device_is_refused() {
    if !iolab::sys::machine::is_root()
        || !have("losetup", "defect_03")
        || !have("mkfs.ext4", "defect_03")
    {
        eprintln!(
            "SKIP defect_03_mounted_block_device_is_refused: needs root, losetup and mkfs.ext4"
        );
        return;
    }
    let d = scratch();
    let img = d.path().join("img");
    fs::write(&img, vec![0u8; 8 << 20]).unwrap();
    let out = std::process::Command::new("losetup")
        .args(["--find", "--show", s(&img)])
        .output()
        .unwrap();
    if !out.status.success() {
        eprintln!(
            "SKIP defect_03: losetup failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let dev = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let detach = Detach(dev.clone());
    let mnt = d.path().join("mnt");
    fs::create_dir(&mnt).unwrap();
    let cmd = |c: &str, a: &[&str]| std::process::Command::new(c).args(a).output().unwrap();
    assert!(cmd("mkfs.ext4", &["-q", &dev]).status.success());
    assert!(cmd("mount", &[&dev, s(&mnt)]).status.success());
    // Dropped before `detach`: a failing assertion leaves nothing mounted.
    let _unmount = Unmount(mnt.clone());
    fs::write(mnt.join("data"), "precious").unwrap();
    let write = [
        "run",
        "--no-store",
        "--allow-overwrite",
        "--name=w",
        &format!("--filename={dev}"),
        "--size=1M",
        "--rw=write",
    ];
    let err = fails_with(bin().args(write), code::REFUSED, "in use");
    assert!(err.contains("O_EXCL"), "{err}");
    assert!(cmd("umount", &[s(&mnt)]).status.success());
    // Its file system is intact; unmounted, the device may be written.
    assert!(cmd("mount", &[&dev, s(&mnt)]).status.success());
    assert_eq!(fs::read_to_string(mnt.join("data")).unwrap(), "precious");
    assert!(cmd("umount", &[s(&mnt)]).status.success());
    succeed(bin().args(write));
    drop(detach);
}

/// Unmounts a directory when dropped (if it is still mounted).
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.0)
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Detaches a loop device when dropped.
struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// Defect 8: on a full disk the run was not stored but iolab exited 0.
/// Now the results are printed and the command fails (1).
#[test]
fn defect_08_unstored_result_is_an_error() {
    let (d, f) = scratch_file();
    let Some(fs) = small_tmpfs(d.path(), "dbfs", "1m", "defect_08") else {
        return;
    };
    let db = fs.0.join("r.db");
    succeed(with_db(&db).arg("run").args(job("j", &f, "--size=64k")));
    // Fill the file system the database lives on, leaving room to open
    // it (WAL index) but not to store a run.
    let dir = fs::File::open(&fs.0).unwrap();
    let free = iolab::sys::fs::free_space(&dir).unwrap();
    fs::write(
        fs.0.join("fill"),
        vec![1u8; (free as usize).saturating_sub(40 << 10)],
    )
    .unwrap();
    let out = with_db(&db)
        .arg("run")
        .args(job("j", &f, "--size=64k"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code::FAILED), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("IOPS"),
        "results still shown"
    );
    assert!(!err.contains("stored as run"), "{err}");
}

/// Defect 9: a refused run left the files it laid out behind, and nothing
/// checked free space first. Now every file is checked before anything is
/// written, and the space is checked with statvfs.
#[test]
fn defect_09_refused_or_short_layout_writes_nothing() {
    let d = scratch();
    let new = d.path().join("new");
    let foreign = d.path().join("foreign");
    fs::write(&foreign, vec![7u8; 64 << 10]).unwrap();
    // The first job's file would be made; the second job is refused.
    let args = [
        "run",
        "--no-store",
        "--name=a",
        &format!("--filename={}", s(&new)),
        "--size=64k",
        "--name=b",
        &format!("--filename={}", s(&foreign)),
        "--size=64k",
        "--rw=write",
    ];
    fails_with(bin().args(args), code::REFUSED, "refusing to write");
    assert!(!new.exists(), "the refused run made {}", new.display());
    if let Some(fs) = small_tmpfs(d.path(), "small", "2m", "defect_09 (space)") {
        let two = [
            "run",
            "--no-store",
            "--name=a",
            &format!("--filename={}", s(&fs.0.join("a"))),
            "--size=1536k",
            "--name=b",
            &format!("--filename={}", s(&fs.0.join("b"))),
            "--size=1536k",
        ];
        // Each file fits alone; the two do not: refused before writing.
        let err = fails_with(bin().args(two), code::NO_SPACE, "3145728 bytes needed");
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(fs::read_dir(&fs.0).unwrap().count(), 0);
    }
}

/// A path that is iolab's own is not a reason to use it: `has_mark` reads
/// the mark through the descriptor, never blocks on a FIFO swapped in.
#[test]
fn defect_01_a_fifo_in_place_of_a_file_does_not_hang() {
    let d = scratch();
    let fifo = d.path().join("fifo");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo with a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    fails_with(
        bin().args([
            "run",
            "--no-store",
            "--name=f",
            &format!("--filename={}", s(&fifo)),
            "--size=4k",
        ]),
        code::USAGE,
        "it is a FIFO",
    );
}
