//! Traces compared and replayed by what names them (issue 34, point 10):
//! `iolab compare a.trace b.trace` (a job-parse error before) with a row
//! per call (fsync 10 → 3, with latencies), and a stored trace's id taken
//! by `replay`, `trace export` and `compare` ("No such file" before). The
//! traces are strace's, imported, so no root is needed.

mod common;

use common::traced::{python, strace};
use common::*;
use std::path::{Path, PathBuf};

/// A program writing a 4 KiB block and fsyncing it `n` times.
fn script(n: u32) -> String {
    format!(
        "import os, sys\nfd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)\n\
         for i in range({n}):\n    os.pwrite(fd, b'x' * 4096, i * 4096)\n    os.fsync(fd)\n"
    )
}

/// The program traced by strace and imported into `db` as `name`.trace;
/// the trace file and the stored run id.
fn imported(dir: &Path, db: &Path, name: &str, fsyncs: u32) -> (PathBuf, i64) {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let data = sub.join("data");
    let log = strace(
        &sub,
        &["-f", "-ttt", "-T", "-y"],
        &[python(), "-c", &script(fsyncs), s(&data)],
    );
    let tf = dir.join(format!("{name}.trace"));
    let (out, _) = succeed_text(
        bin()
            .args(["trace", "import", "--db"])
            .arg(db)
            .arg(&log)
            .arg("-o")
            .arg(&tf),
    );
    let id = out
        .lines()
        .find_map(|l| l.strip_prefix("stored as run "))
        .unwrap_or_else(|| panic!("{out}"))
        .trim()
        .parse()
        .unwrap();
    (tf, id)
}

#[test]
fn traces_compare_call_by_call_and_stored_ids_replay() {
    if !have(
        "strace",
        "traces_compare_call_by_call_and_stored_ids_replay",
    ) {
        return;
    }
    let d = scratch();
    let db = d.path().join("iolab.db");
    let (ta, ida) = imported(d.path(), &db, "a", 10);
    let (tb, idb) = imported(d.path(), &db, "b", 3);
    for (a, b) in [
        (s(&ta).to_string(), s(&tb).to_string()),
        (ida.to_string(), idb.to_string()),
        (ida.to_string(), s(&tb).to_string()),
    ] {
        let (out, _) = succeed_text(
            bin()
                .args(["compare", "--no-store", "--db"])
                .arg(&db)
                .args([&a, &b, "-f", "json"]),
        );
        let v = parse_json(out.as_bytes());
        let fsync = (v["calls"].as_array().unwrap().iter())
            .find(|r| r["call"] == "fsync")
            .unwrap_or_else(|| panic!("no fsync row: {v:#}"));
        assert_eq!(
            (fsync["a"]["count"].as_f64(), fsync["b"]["count"].as_f64()),
            (Some(10.0), Some(3.0))
        );
        assert_eq!(fsync["count_change_pct"].as_f64(), Some(-70.0));
        assert!(fsync["a"]["p50_ns"].as_u64().unwrap() > 0, "{fsync}");
    }
    let (text, _) = succeed_text(bin().args(["compare", "--no-store"]).arg(&ta).arg(&tb));
    assert!(text.contains("per call"), "{text}");
    let row = text.lines().find(|l| l.starts_with("fsync ")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[..4], ["fsync", "10", "3", "-70.0%"], "{row}");

    // A stored trace's id: replayed and exported from its file.
    let target = d.path().join("replay");
    let (out, _) = succeed_text(
        bin()
            .args(["replay", "--db"])
            .arg(&db)
            .arg(ida.to_string())
            .args(["--speed", "max", "-f", "json", "--target"])
            .arg(&target),
    );
    let v = parse_json(out.as_bytes());
    let fs = &v["calls"]["fsync"];
    assert_eq!(fs["original"]["count"], 10, "{v:#}");
    assert_eq!(fs["replayed"]["count"], 10, "{v:#}");
    let (job, _) = succeed_text(
        bin()
            .args(["trace", "export", "--format", "job", "--db"])
            .arg(&db)
            .arg(idb.to_string()),
    );
    assert!(job.contains("fsync=1"), "{job}");
    std::fs::remove_file(&ta).unwrap();
    let err = fails_with(
        bin().args(["replay", "--db"]).arg(&db).arg(ida.to_string()),
        code::USAGE,
        &format!("run {ida}: its trace file"),
    );
    assert!(err.contains("is gone"), "{err}");
}
