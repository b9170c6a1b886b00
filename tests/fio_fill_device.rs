//! `fill_device=1` (fio's `fill_fs`): a job writes until the file system
//! is full, under fio and `iolab run` on a small tmpfs of the same size
//! mounted for each run (root only; skipped, saying why, otherwise). Both
//! must write the same bytes: the same I/O count (the short write and the
//! ENOSPC one included, as fio counts them), bytes and file size.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use common::tmpfs::Tmpfs;
use common::*;
use diff::{Outcome, Tool};

/// What a run wrote: (exit code, write I/Os, write bytes, job error, file size).
type Wrote = (Option<i32>, u64, u64, u64, u64);

/// Runs `opts` as job `f` (file `f`) under `tool` on a fresh tmpfs of
/// `size`; `None` when no tmpfs can be had.
fn fill(tool: Tool, size: &str, opts: &[&str]) -> Option<(Wrote, u64)> {
    let fs = Tmpfs::mount("fill_device", size)?;
    let job = fs.path().join("job.fio");
    let mut text = String::from("[f]\nfilename=f\nrw=write\nfill_device=1\n");
    for o in opts {
        text.push_str(o);
        text.push('\n');
    }
    std::fs::write(&job, text).unwrap();
    let out: Outcome = diff::run_in(tool, &job, fs.path());
    let j = out.json.as_ref().map(|v| v["jobs"][0].clone());
    let n = |k: &str, f: &str| j.as_ref().map_or(0, |j| j[k][f].as_u64().unwrap_or(0));
    let err = j.as_ref().map_or(0, |j| j["error"].as_u64().unwrap_or(0));
    let file = std::fs::metadata(fs.path().join("f")).map_or(0, |m| m.len());
    let free = free_bytes(fs.path());
    Some((
        (
            out.code,
            n("write", "total_ios"),
            n("write", "io_bytes"),
            err,
            file,
        ),
        free,
    ))
}

/// Bytes an unprivileged writer may still write on the file system of `p`.
fn free_bytes(p: &std::path::Path) -> u64 {
    let st = nix_statvfs(p);
    st.0 * st.1
}

/// (f_bavail, f_frsize) of `statvfs(p)`.
///
/// # Safety
///
/// Sound: the path is a NUL-terminated copy that outlives the call, and
/// `st` a local the call fills.
fn nix_statvfs(p: &std::path::Path) -> (u64, u64) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: statvfs is plain integers; zeroes are a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` is a local, both outlive the call.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    assert_eq!(rc, 0, "statvfs: {}", std::io::Error::last_os_error());
    (st.f_bavail, st.f_frsize)
}

/// The same bytes as fio up to ENOSPC, the file system left full, for a
/// block size that fits the file system's pages exactly (64k: the last
/// write fails) and one that does not (24k: the last write is short, its
/// rest fails), buffered and direct.
#[test]
fn fill_device_writes_until_enospc_as_fio() {
    skip_unless_installed!("fio");
    for opts in [
        &["bs=64k"][..],
        &["bs=24k"],
        &["bs=64k", "direct=1"],
        &["bs=24k", "direct=1"],
    ] {
        let Some((fio, fio_free)) = fill(Tool::Fio, "8m", opts) else {
            return;
        };
        let (iolab, iolab_free) = fill(Tool::Iolab, "8m", opts).unwrap();
        println!("{opts:?}: fio {fio:?}, iolab {iolab:?}");
        assert_eq!(fio.0, Some(0), "{opts:?}: fio failed");
        assert_eq!(
            fio, iolab,
            "{opts:?}: (exit, write ios, bytes, error, file size)"
        );
        assert_eq!((fio_free, iolab_free), (0, 0), "{opts:?}: left full");
        // Every page but the job file's is the data file's.
        assert_eq!(iolab.4, (8 << 20) - 4096, "{opts:?}: file size");
    }
}

/// With `size` below the free space the job ends at its size, as any
/// write job, and leaves room.
#[test]
fn fill_device_with_a_size_ends_at_it_as_fio() {
    skip_unless_installed!("fio");
    let opts = &["bs=64k", "size=1m"];
    let Some((fio, _)) = fill(Tool::Fio, "8m", opts) else {
        return;
    };
    let (iolab, free) = fill(Tool::Iolab, "8m", opts).unwrap();
    assert_eq!(fio, iolab, "(exit, write ios, bytes, error, file size)");
    assert_eq!(iolab, (Some(0), 16, 1 << 20, 0, 1 << 20));
    assert!(free > 0);
}

/// fill_device with anything but sequential writes is refused, saying so.
#[test]
fn fill_device_other_than_sequential_writes_is_refused() {
    for rw in ["randwrite", "read", "rw"] {
        let d = scratch();
        let mut cmd = bin();
        cmd.current_dir(d.path()).args([
            "run",
            "--no-store",
            "--name=f",
            "--filename=f",
            "--size=1m",
            "--fill_fs=1",
            &format!("--rw={rw}"),
        ]);
        let (code, err) = fail(&mut cmd);
        assert_eq!(code, 2, "{rw}: {err}");
        assert!(
            err.contains("fill_device=1 is supported for sequential writes"),
            "{rw}: {err}"
        );
        assert!(!d.path().join("f").exists(), "{rw}: nothing made");
    }
}

/// A job after `fill_device` on the same file is sized when it starts; its
/// eviction warning counts the pages of the file as it is then (it said
/// "2048 of 0 pages") and names tmpfs as the reason they stay.
#[test]
fn the_eviction_warning_counts_the_filled_file() {
    let Some(fs) = Tmpfs::mount("fill_device", "8m") else {
        return;
    };
    let out = bin()
        .current_dir(fs.path())
        .args([
            "run",
            "--no-store",
            "--output-format=json",
            "--filename=f",
            "--bs=64k",
        ])
        .args(["--name=w", "--rw=write", "--fill_device=1"])
        .args(["--name=r", "--rw=read", "--stonewall"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = parse_json(&out.stdout);
    let pages = std::fs::metadata(fs.path().join("f")).unwrap().len() / 4096;
    let warnings = v["iolab"]["warnings"].to_string();
    let want = format!("{pages} of {pages} pages of f are still cached after eviction (tmpfs");
    assert!(warnings.contains(&want), "{want} in {warnings}");
}
