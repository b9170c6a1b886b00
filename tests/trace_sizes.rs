//! Sizes in a trace (issue 34, points 8 and 12): with events they are
//! exact (1000-byte reads showed as 992 B, the middle of their histogram
//! slot); the text view shows each call's sizes (they were only in the
//! JSON) and each file's syncs in their own column. Needs root and BTF
//! (eBPF) for `iolab trace`; the strace import runs anywhere with strace.

mod common;

use common::trace::{can, file_calls, record};
use common::traced::{python, strace};
use common::{bin, have, parse_json, s, scratch, succeed_text};
use std::path::Path;

/// 50 reads of 1000 bytes, 10 preads of 24, 2 writes of 3000 and 3
/// fsyncs, on the file given.
const SCRIPT: &str = "
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for i in range(50): os.read(fd, 1000)
for i in range(10): os.pread(fd, 24, 0)
for i in range(2): os.write(fd, b'x' * 3000)
for i in range(3): os.fsync(fd)
";

fn data() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = scratch();
    let f = d.path().join("data");
    std::fs::write(&f, vec![7u8; 100_000]).unwrap();
    let f = std::fs::canonicalize(&f).unwrap();
    (d, f)
}

/// The size figures of `call` on `f`: p50, max, exact.
fn sizes(v: &serde_json::Value, f: &Path, call: &str) -> (u64, u64, bool) {
    let c = &file_calls(v, f)[call];
    (
        c["size_p50"].as_u64().unwrap(),
        c["size_max"].as_u64().unwrap(),
        c["sizes_exact"].as_bool().unwrap(),
    )
}

#[test]
fn sizes_are_exact_with_events_and_shown_per_call_and_syncs_per_file() {
    let test = "sizes_are_exact_with_events_and_shown_per_call_and_syncs_per_file";
    if !can(test) {
        return;
    }
    let (d, f) = data();
    let cmd = [python(), "-c", SCRIPT, s(&f)];
    // Event traces go to files: in the scratch directory, not the checkout
    // (without -o iolab names one in the current directory).
    let events_file = d.path().join("sizes.trace");
    let v = record(&["--events", "-o", s(&events_file)], &cmd);
    assert_eq!(sizes(&v, &f, "read"), (1000, 1000, true));
    assert_eq!(sizes(&v, &f, "pread64"), (24, 24, true));
    assert_eq!(sizes(&v, &f, "write"), (3000, 3000, true));
    // Histograms alone: the slot's lowest value, said to be approximate.
    let h = record(&[], &cmd);
    let (p50, _, exact) = sizes(&h, &f, "read");
    assert!(!exact && p50 != 1000 && p50.abs_diff(1000) < 40, "{p50}");

    let (out, err) = succeed_text(
        bin()
            .current_dir(d.path())
            .args(["trace", "--no-store", "--events", "--"])
            .args(cmd),
    );
    assert_eq!(err, "");
    assert!(
        out.contains("pread64 sizes:") && out.contains("24B x10"),
        "{out}"
    );
    let header = out.lines().find(|l| l.starts_with("file ")).unwrap();
    assert!(header.trim_end().ends_with("syncs"), "{header}");
    let rows: Vec<Vec<&str>> = (out.lines())
        .filter(|l| l.starts_with(s(&f)))
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r.len() == 10)
        .collect();
    let row = |dir: &str| rows.iter().find(|r| r[1] == dir).unwrap().clone();
    assert_eq!(
        (row("read")[4], row("read")[5]),
        ("1000B", "1000B"),
        "{rows:?}"
    );
    assert_eq!(row("write")[9], "3", "the file's 3 fsyncs: {rows:?}");
    assert_eq!(row("read")[9], "-", "{rows:?}");
}

#[test]
fn imported_strace_sizes_are_exact() {
    if !have("strace", "imported_strace_sizes_are_exact") {
        return;
    }
    let (d, f) = data();
    let log = strace(
        d.path(),
        &["-f", "-ttt", "-T", "-y"],
        &[python(), "-c", SCRIPT, s(&f)],
    );
    let (out, _) = succeed_text(
        bin()
            .args(["trace", "import", "--no-store", "-f", "json"])
            .arg(&log),
    );
    let v = parse_json(out.as_bytes());
    assert_eq!(sizes(&v, &f, "read"), (1000, 1000, true));
    assert_eq!(sizes(&v, &f, "pread64"), (24, 24, true));
    assert_eq!(file_calls(&v, &f)["fsync"]["count"], 3);
}
