//! Calls `iolab trace` missed or counted without their data: io_uring
//! requests carry their file, descriptor, offset and bytes (they showed fd
//! -1 and 0 B); copies in the kernel (`copy_file_range` of `cp -r`,
//! `sendfile`, `splice`) and locks (`fcntl`, `flock`) are traced, counted
//! as strace counts them. Needs root and BTF (eBPF); fio, strace and cp
//! where used.

mod common;

use common::trace::{can, count, file_calls, record};
use common::{have, parse_json, s, scratch, succeed};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// `fio --rw=randread` of 1 MiB in 4 KiB blocks through io_uring, depth 4,
/// on `f` (laid out before).
fn fio_uring(f: &Path) -> Vec<String> {
    ["fio", "--name=u", "--size=1m", "--bs=4k", "--rw=randread"]
        .iter()
        .map(|a| a.to_string())
        .chain([
            "--ioengine=io_uring".into(),
            "--iodepth=4".into(),
            "--output=/dev/null".into(),
            format!("--filename={}", s(f)),
        ])
        .collect()
}

#[test]
fn io_uring_requests_carry_their_file_offset_and_bytes() {
    let test = "io_uring_requests_carry_their_file_offset_and_bytes";
    if !can(test) || !have("fio", test) {
        return;
    }
    let d = scratch();
    let f = d.path().canonicalize().unwrap().join("data");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    let cmd = fio_uring(&f);
    let cmd: Vec<&str> = cmd.iter().map(|a| a.as_str()).collect();
    let v = record(&[], &cmd);
    let req = &v["calls"]["io_uring_req"];
    assert_eq!(req["count"], 256, "{req}");
    assert_eq!(req["bytes"], 1 << 20, "{req}");
    let per_file = &file_calls(&v, &f)["io_uring_req"];
    assert_eq!(
        (per_file["count"].as_u64(), per_file["bytes"].as_u64()),
        (Some(256), Some(1 << 20))
    );
    // Events: each request names the file and its descriptor, and the 256
    // offsets are the file's 256 blocks.
    let trace = d.path().join("u.trace");
    succeed(
        common::bin()
            .args([
                "trace",
                "--no-store",
                "--events",
                "-q",
                "-o",
                s(&trace),
                "--",
            ])
            .args(&cmd),
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut names = Vec::new();
    let mut offsets = BTreeSet::new();
    for l in text.lines() {
        let j = parse_json(l.as_bytes());
        if let Some(name) = j.get("name").and_then(|n| n.as_str()) {
            names.push(name.to_string());
        } else if j.get(3).and_then(|c| c.as_str()) == Some("io_uring_req") {
            assert!(j[4].as_i64().unwrap() >= 0, "fd: {l}");
            assert_eq!(names[j[5].as_u64().unwrap() as usize], s(&f), "{l}");
            assert_eq!(
                (j[7].as_u64(), j[9].as_i64()),
                (Some(4096), Some(4096)),
                "{l}"
            );
            offsets.insert(j[6].as_u64().unwrap());
        }
    }
    assert_eq!(
        offsets,
        (0..256).map(|i| i * 4096).collect::<BTreeSet<u64>>()
    );
}

/// The number of calls of each of `calls` strace -f -c counts for `cmd`.
fn strace_counts(cmd: &[&str], calls: &[&str]) -> Vec<u64> {
    let out = Command::new("strace")
        .args(["-f", "-c", "-o", "/dev/stdout", "-e"])
        .arg(format!("trace={}", calls.join(",")))
        .args(cmd)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // `% time seconds usecs/call calls errors syscall`: the errors column
    // is blank for a call without errors, so the calls are the 4th field.
    calls
        .iter()
        .map(|c| {
            (text.lines())
                .find(|l| l.split_whitespace().last() == Some(*c))
                .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
                .unwrap_or(0)
        })
        .collect()
}

#[test]
fn cp_r_copies_count_the_trees_bytes() {
    let test = "cp_r_copies_count_the_trees_bytes";
    if !can(test) || !have("strace", test) {
        return;
    }
    let d = scratch();
    let src = d.path().join("t");
    std::fs::create_dir_all(src.join("a/b")).unwrap();
    let sizes = [1_000_000usize, 1_800_000, 7, 65_536];
    for (i, n) in sizes.iter().enumerate() {
        let dir = if i % 2 == 0 {
            src.join("a")
        } else {
            src.join("a/b")
        };
        std::fs::write(dir.join(format!("f{i}")), vec![i as u8 + 1; *n]).unwrap();
    }
    let v = record(&[], &["cp", "-r", s(&src), s(&d.path().join("u"))]);
    let c = &v["calls"]["copy_file_range"];
    assert_eq!(
        c["bytes"].as_u64(),
        Some(sizes.iter().sum::<usize>() as u64),
        "{c}"
    );
    let want = strace_counts(
        &["cp", "-r", s(&src), s(&d.path().join("w"))],
        &["copy_file_range"],
    );
    assert_eq!(count(&v["calls"], "copy_file_range"), want[0]);
}

/// sendfile, splice, fcntl locks and flock from Python, counted as strace
/// counts them, with the bytes sendfile and splice moved.
#[test]
fn sendfile_splice_and_locks_are_traced() {
    let test = "sendfile_splice_and_locks_are_traced";
    if !can(test) || !have("strace", test) || !have("python3", test) {
        return;
    }
    let d = scratch();
    let src = d.path().join("src");
    std::fs::write(&src, vec![3u8; 100_000]).unwrap();
    let script = format!(
        "import os, fcntl\n\
         a = os.open('{src}', os.O_RDONLY)\n\
         b = os.open('{dst}', os.O_WRONLY | os.O_CREAT | os.O_TRUNC)\n\
         assert os.sendfile(b, a, 0, 100000) == 100000\n\
         r, w = os.pipe()\n\
         os.lseek(a, 0, 0)\n\
         n = os.splice(a, w, 30000)\n\
         assert os.splice(r, b, n) == n\n\
         fcntl.flock(b, fcntl.LOCK_EX)\n\
         fcntl.flock(b, fcntl.LOCK_UN)\n\
         fcntl.lockf(b, fcntl.LOCK_EX)\n\
         fcntl.lockf(b, fcntl.LOCK_UN)\n",
        src = s(&src),
        dst = s(&d.path().join("dst")),
    );
    let cmd = ["python3", "-c", &script];
    let v = record(&[], &cmd);
    let calls = ["sendfile", "splice", "flock", "fcntl"];
    let want = strace_counts(&cmd, &calls);
    let got: Vec<u64> = calls.iter().map(|c| count(&v["calls"], c)).collect();
    assert_eq!(got, want, "{calls:?}");
    assert_eq!(v["calls"]["sendfile"]["bytes"], 100_000);
    assert_eq!(v["calls"]["splice"]["bytes"], 60_000);
}

/// A pipe is named as /proc and strace -y name it (`pipe:[N]`), not by
/// its device and inode (`0:15:N`).
#[test]
fn pipes_are_named_as_proc_names_them() {
    let test = "pipes_are_named_as_proc_names_them";
    if !can(test) {
        return;
    }
    let v = record(&[], &["sh", "-c", "echo hi | cat > /dev/null"]);
    let paths: Vec<&str> = (v["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(paths.iter().any(|p| p.starts_with("pipe:[")), "{paths:?}");
    let numbered =
        |p: &&&str| p.split(':').count() == 3 && p.split(':').all(|n| n.parse::<u64>().is_ok());
    assert!(!paths.iter().any(|p| numbered(&p)), "{paths:?}");
}
