//! cache=cold|warm|keep, checked with util-linux fincore (not iolab's code).

mod common;
use common::*;
use serde_json::Value;

/// The page-cache state of the first file `when` ("cache_before" or
/// "cache_after") the first job's first repetition.
fn first_rep_cache<'a>(v: &'a Value, when: &str) -> &'a Value {
    &v["jobs"][0]["iolab"]["repetitions"][0][when][0]["state"]
}

#[test]
fn cold_leaves_the_file_uncached_and_warm_caches_it() {
    skip_unless_installed!("fincore");
    let (_dir, f) = scratch_file();
    // One random 4 KiB read of the 16 MiB file under cache=`cache`.
    let one_read = |name: &str, cache: &str| {
        let opts = format!("--size=16M --rw=randread --number_ios=1 --cache={cache}");
        run_json(&job(name, &f, &opts))
    };
    // Warm: the whole file is cached before the run and after.
    let v = one_read("w", "warm");
    let st = first_rep_cache(&v, "cache_before");
    assert_eq!(st["cached"], st["pages"]);
    assert_eq!(st["source"], "cachestat");
    assert_eq!(fincore_pages(&f), 4096);
    // Cold with a tiny read: before the run nothing is cached.
    let v = one_read("c", "cold");
    assert_eq!(first_rep_cache(&v, "cache_before")["cached"], 0);
    let after = first_rep_cache(&v, "cache_after");
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
    let v = one_read("k", "keep");
    assert_eq!(first_rep_cache(&v, "cache_before")["cached"], cached);
}

#[test]
fn cold_run_after_write_evicts_dirty_pages() {
    skip_unless_installed!("fincore");
    let (_dir, f) = scratch_file();
    run_json(&job("w", &f, "--size=8M --rw=write --bs=64k"));
    assert!(fincore_pages(&f) > 0, "written pages are cached");
    let v = run_json(&job(
        "c",
        &f,
        "--size=8M --rw=randread --number_ios=1 --cache=cold",
    ));
    assert_eq!(first_rep_cache(&v, "cache_before")["cached"], 0);
    assert!(
        v["iolab"]["warnings"].as_array().unwrap().is_empty(),
        "{}",
        v["iolab"]["warnings"]
    );
}
