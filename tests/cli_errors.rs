//! Bad input gives one clear line naming what is wrong, and exit code 2.

mod common;
use common::*;
use std::fs;

#[test]
fn bad_input_errors() {
    let (d, f) = scratch_file();
    let a = |opts: &str| job("a", &f, opts);
    run_rejects(
        &a("--blocksiz=4k"),
        &["unknown option 'blocksiz'", "did you mean 'blocksize'"],
    );
    run_rejects(
        &a("--ioscheduler=none"),
        &["fio option 'ioscheduler' is not supported by iolab yet"],
    );
    run_rejects(&a("--size=10q"), &["size", "unknown size suffix 'q'"]);
    run_rejects(
        &a("--size=4k --bs=64k"),
        &["bs (65536) is larger than size (4096)"],
    );
    // Files smaller than a block each run empty, as fio's; only all of
    // them together smaller than a block is refused, as fio refuses it.
    let dir = format!("--directory={}", s(d.path()));
    let few = [
        "--name=few",
        &dir,
        "--nrfiles=3",
        "--size=64k",
        "--offset=4k",
    ];
    run_rejects(
        &[&few[..], &["--bs=64k", "--rw=randwrite"]].concat(),
        &["bs (65536) is larger than the job's regions (65535 bytes in all"],
    );
    run_rejects(&a("--size=(1M/(2-2))"), &["division by zero"]);
    run_rejects(&a("--rw=read"), &["does not exist", "no size="]);
    let bad = d.path().join("bad.fio");
    fs::write(&bad, "[global]\nbs=4k\n[job\n").unwrap();
    run_rejects(&[s(&bad)], &["bad.fio:3", "malformed section header"]);
    fs::write(&bad, "[job]\nsize=4k\nbs 4k\n").unwrap();
    run_rejects(&[s(&bad)], &["bad.fio:3", "malformed line"]);
    run_rejects(
        &a("--rw=nonsense"),
        &["'nonsense' is not one of read, write"],
    );
    // An output file that is a directory is refused before the run.
    let mut to_dir = vec!["--output".to_string(), s(d.path()).to_string()];
    to_dir.extend(a("--size=4k"));
    run_rejects(&to_dir, &["--output", "is a directory; name a file"]);
    assert!(!f.exists(), "nothing was created for bad input");
}

#[test]
fn unwritable_directory() {
    let d = tempfile::tempdir().unwrap();
    let ro = d.path().join("ro");
    fs::create_dir(&ro).unwrap();
    let root = iolab::sys::machine::is_root();
    let locked = if root {
        // Root ignores permission bits: make the directory immutable instead.
        std::process::Command::new("chattr")
            .args(["+i", s(&ro)])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    } else {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).is_ok()
    };
    if !locked {
        eprintln!(
            "SKIP unwritable_directory: cannot make a directory unwritable here (chattr +i failed)"
        );
        return;
    }
    let (code, err) = run_err(&job("a", &ro.join("f"), "--size=1M"));
    if root {
        std::process::Command::new("chattr")
            .args(["-i", s(&ro)])
            .status()
            .unwrap();
    }
    assert_eq!(code, 1);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // As root (chattr +i) the kernel says "not permitted", else "denied".
    let denied = err.contains("ermission denied") || err.contains("not permitted");
    assert!(
        err.contains("cannot create") && err.contains(s(&ro)) && denied,
        "{err}"
    );
}

#[test]
fn help_has_examples() {
    let out = iolab().args(["run", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("Examples:")
            && text.contains("--prefetch=N")
            && text.contains("fio-compat.md"),
        "{text}"
    );
}

#[test]
fn no_space_during_layout_leaves_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let mnt = d.path().join("small");
    fs::create_dir(&mnt).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=2m", "tmpfs", s(&mnt)])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!(
            "SKIP no_space_during_layout_leaves_nothing_behind: cannot mount a small tmpfs (needs root)"
        );
        return;
    }
    let f = mnt.join("big");
    let out = bin()
        .arg("run")
        .args(job("a", &f, "--size=8M --rw=read"))
        .output()
        .unwrap();
    let listing: Vec<_> = fs::read_dir(&mnt).unwrap().collect();
    std::process::Command::new("umount")
        .arg(s(&mnt))
        .status()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code::NO_SPACE),
        "no space has its own exit code: {err}"
    );
    // statvfs says so before anything is written.
    assert_one_line(
        &err,
        &[
            "not enough space",
            "8388608 bytes needed",
            "2097152 free",
            "nothing was written",
        ],
    );
    assert!(listing.is_empty(), "nothing was written");
}
