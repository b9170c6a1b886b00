//! `iolab replay` takes only the room a trace needs: a sparse original is
//! copied sparsely and only up to what the trace touched (a 4 GiB sparse
//! file with 4 KiB of data became 1.6 GB), and a trace that needs more
//! than is free is refused before anything is written (one read edited to
//! 1 TiB headed for 1 TiB of filling).

mod common;
mod replay_trace;

use common::*;
use iolab::trace::Event;
use replay_trace::*;
use std::os::unix::fs::{FileExt, MetadataExt};

const GIB: u64 = 1 << 30;

#[test]
fn a_sparse_original_is_copied_sparsely_with_its_data() {
    let d = scratch();
    let f = d.path().join("sparse");
    let file = std::fs::File::create(&f).unwrap();
    file.set_len(4 * GIB).unwrap();
    file.write_all_at(&[0x42; 4096], 2 * GIB).unwrap();
    drop(file);
    // Reads of the data and of a hole, then a write near the end.
    let evs = vec![
        open(0, 0, libc::O_RDWR, 3),
        pread(10, 3, 0, 2 * GIB, 4096),
        pread(20, 3, 0, 3 * GIB, 4096),
        Event {
            offset: Some(4 * GIB - 8192),
            len: 4096,
            result: 4096,
            ..ev(30, "pwrite64", 3, Some(0))
        },
        ev(40, "close", 3, Some(0)),
    ];
    let t = trace_file(d.path(), &[&f], evs);
    let target = d.path().join("target");
    let v = replay_json(&[s(&t), "--target", s(&target), "--keep", "--speed", "max"]);
    let r = &v["calls"]["pread64"]["replayed"];
    assert_eq!(
        (r["count"].as_u64(), r["bytes"].as_u64()),
        (Some(2), Some(8192)),
        "{v:#}"
    );
    assert!(
        v["made"]["copied_bytes"].as_u64().unwrap() < 1 << 20,
        "{v:#}"
    );
    let copy = target.join(&s(&f)[1..]);
    let m = std::fs::metadata(&copy).unwrap();
    assert_eq!(m.len(), 4 * GIB, "the copy keeps the original's length");
    assert!(
        m.blocks() * 512 < 1 << 20,
        "{} bytes allocated",
        m.blocks() * 512
    );
    let mut b = [0u8; 4096];
    let c = std::fs::File::open(&copy).unwrap();
    c.read_exact_at(&mut b, 2 * GIB).unwrap();
    assert_eq!(b, [0x42; 4096], "the data is copied");
    c.read_exact_at(&mut b, 3 * GIB).unwrap();
    assert_eq!(b, [0; 4096], "the hole stays a hole");
}

#[test]
fn a_trace_needing_more_than_is_free_is_refused_before_any_write() {
    let d = scratch();
    // The original is gone: a read at 1 TiB would need 1 TiB written.
    let gone = d.path().join("gone");
    let evs = vec![
        open(0, 0, libc::O_RDONLY, 3),
        pread(10, 3, 0, 1 << 40, 4096),
        ev(20, "close", 3, Some(0)),
    ];
    let t = trace_file(d.path(), &[&gone], evs);
    let target = d.path().join("target");
    let (code, err) = fail(bin().args(["replay", s(&t), "--target", s(&target)]));
    assert_eq!(code, code::NO_SPACE, "{err}");
    assert_one_line(
        &err,
        &[
            "not enough space",
            "bytes needed",
            "free; nothing was written",
        ],
    );
    let left: Vec<_> = std::fs::read_dir(&target)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "written: {left:?}");
}
