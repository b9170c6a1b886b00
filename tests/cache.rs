//! cache=cold|warm|keep, checked with util-linux fincore (not iolab's code).

mod common;
use common::*;

#[test]
fn cold_leaves_the_file_uncached_and_warm_caches_it() {
    if !have(
        "fincore",
        "cold_leaves_the_file_uncached_and_warm_caches_it",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let fa = format!("--filename={}", s(&f));
    // Warm: the whole file is cached before the run and after.
    let v = run_json(&[
        "--name=w",
        &fa,
        "--size=16M",
        "--rw=randread",
        "--number_ios=1",
        "--cache=warm",
    ]);
    let st = &v["jobs"][0]["iolab"]["repetitions"][0]["cache_before"][0]["state"];
    assert_eq!(st["cached"], st["pages"]);
    assert_eq!(st["source"], "cachestat");
    assert_eq!(fincore_pages(&f), 4096);
    // Cold with a tiny read: before the run nothing is cached.
    let v = run_json(&[
        "--name=c",
        &fa,
        "--size=16M",
        "--rw=randread",
        "--number_ios=1",
        "--cache=cold",
    ]);
    let st = &v["jobs"][0]["iolab"]["repetitions"][0]["cache_before"][0]["state"];
    assert_eq!(st["cached"], 0);
    let after = &v["jobs"][0]["iolab"]["repetitions"][0]["cache_after"][0]["state"];
    assert_eq!(
        after["cached"], 1,
        "one 4k random read (FADV_RANDOM: no readahead)"
    );
    assert_eq!(fincore_pages(&f), 1, "fincore agrees");
    iolab::sys::pagecache::evict(&f).unwrap();
    assert_eq!(fincore_pages(&f), 0);
    // Keep: what is cached stays.
    // Read the first 4 MiB with readahead off, so exactly 1024 pages are cached.
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(&f).unwrap();
        // SAFETY: advice on an open descriptor.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
        let mut buf = vec![0u8; 4096];
        for i in 0..1024u64 {
            file.read_exact_at(&mut buf, i * 4096).unwrap();
        }
    }
    let cached = fincore_pages(&f);
    assert_eq!(cached, 1024);
    let v = run_json(&[
        "--name=k",
        &fa,
        "--size=16M",
        "--rw=randread",
        "--number_ios=1",
        "--cache=keep",
    ]);
    assert_eq!(
        v["jobs"][0]["iolab"]["repetitions"][0]["cache_before"][0]["state"]["cached"],
        cached
    );
}

#[test]
fn cold_run_after_write_evicts_dirty_pages() {
    if !have("fincore", "cold_run_after_write_evicts_dirty_pages") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let fa = format!("--filename={}", s(&f));
    run_json(&["--name=w", &fa, "--size=8M", "--rw=write", "--bs=64k"]);
    assert!(fincore_pages(&f) > 0, "written pages are cached");
    let v = run_json(&[
        "--name=c",
        &fa,
        "--size=8M",
        "--rw=randread",
        "--number_ios=1",
        "--cache=cold",
    ]);
    assert_eq!(
        v["jobs"][0]["iolab"]["repetitions"][0]["cache_before"][0]["state"]["cached"],
        0
    );
    assert!(
        v["iolab"]["warnings"].as_array().unwrap().is_empty(),
        "{}",
        v["iolab"]["warnings"]
    );
}
