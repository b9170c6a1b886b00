//! What the kernel saw, beside what iolab measured: device reads from
//! /proc/diskstats, logical vs physical bytes from /proc/self/io, cachestat,
//! ZFS ARC parsing (from a fixture of its format).

mod common;
use common::*;
use iolab::counters::arcstats;
use serde_json::Value;

#[test]
fn cold_run_reads_from_storage_warm_run_does_not() {
    let (_dir, f) = scratch_file();
    let opts = "--size=16M --rw=randread --bs=4k";
    let cold = run_json(&job("c", &f, &format!("{opts} --cache=cold")));
    let warm = run_json(&job("c", &f, &format!("{opts} --cache=warm")));
    let phys = |v: &Value| counters(v)["process_io"]["read_bytes"].as_u64().unwrap();
    let logical = |v: &Value| counters(v)["process_io"]["rchar"].as_u64().unwrap();
    eprintln!(
        "cold: physical {} logical {}; warm: physical {} logical {}",
        phys(&cold),
        logical(&cold),
        phys(&warm),
        logical(&warm)
    );
    assert_eq!(counters(&cold)["process_io"]["source"], "/proc/self/io");
    assert!(
        phys(&cold) >= 8 << 20,
        "cold run read from storage: {}",
        phys(&cold)
    );
    assert!(logical(&cold) >= 16 << 20);
    assert!(
        phys(&warm) < 256 << 10,
        "warm run read {} bytes from storage",
        phys(&warm)
    );
    assert!(logical(&warm) >= 16 << 20);
    // cachestat agrees: cold starts empty, warm starts full.
    let cs = |v: &Value, when: &str| {
        counters(v)["cachestat"]["files"][0][when]["cached"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(counters(&cold)["cachestat"]["source"], "cachestat(2)");
    assert_eq!(cs(&cold, "before"), 0);
    assert!(cs(&cold, "after") > 0);
    assert_eq!(cs(&warm, "before"), 4096);
    // vmstat and rusage are there with their sources.
    assert_eq!(counters(&cold)["vmstat"]["source"], "/proc/vmstat");
    assert!(counters(&cold)["vmstat"]["pgpgin"].as_u64().unwrap() > 0);
    assert_eq!(
        counters(&cold)["rusage"]["source"],
        "getrusage(RUSAGE_SELF)"
    );
    // Every source has its key, null where this machine lacks it.
    let arc = &counters(&cold)["zfs_arc"];
    if std::path::Path::new("/proc/spl/kstat/zfs/arcstats").exists() {
        assert!(arc["source"].is_string(), "{arc}");
    } else {
        assert!(arc.is_null(), "{arc}");
    }
    // Per repetition as well.
    let rep = &cold["jobs"][0]["iolab"]["repetitions"][0]["counters"];
    assert_eq!(
        rep["process_io"]["read_bytes"],
        counters(&cold)["process_io"]["read_bytes"]
    );
}

#[test]
fn normal_output_shows_the_counters() {
    let (_dir, f) = scratch_file();
    let text = run_text(&job("n", &f, "--size=4M --rw=randread"));
    // The labels the README shows; getrusage's figures are in the cpu line.
    assert!(
        text.contains("  process I/O [/proc/self/io]: logical read"),
        "{text}"
    );
    assert!(text.contains("  vm [/proc/vmstat]: pgpgin="), "{text}");
    assert!(!text.contains("getrusage(RUSAGE_SELF)"), "{text}");
    assert!(text.contains("physical read"), "{text}");
    if text.contains("[/proc/diskstats]") {
        assert!(text.contains("r_await") && text.contains("%util"), "{text}");
    }
}

#[test]
fn arcstats_fixture_parses_and_deltas() {
    use iolab::counters::{Counter, Snapshot};
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/arcstats");
    let a = arcstats::read(std::path::Path::new(path)).unwrap();
    assert_eq!(a["hits"], 1_048_576);
    assert_eq!(a["misses"], 4096);
    assert_eq!(a["size"], 4_000_000_000);
    let mut b = a.clone();
    *b.get_mut("hits").unwrap() += 900;
    *b.get_mut("misses").unwrap() += 100;
    // Through the registry's delta, as a run takes it.
    let at = |ns, v| Snapshot {
        at_ns: ns,
        sources: vec![("zfs_arc", v)],
        ..Snapshot::default()
    };
    let d = at(0, a).delta(&at(1_000, b));
    let arc = &d.sources["zfs_arc"];
    assert_eq!((arc["hits"], arc["misses"]), (900, 100));
    assert_eq!(arc["size"], 4_000_000_000, "sizes are levels, not deltas");
    let ratio = arcstats::Arc.derived(arc);
    assert_eq!(ratio.len(), 1);
    assert!((ratio[0].1 - 90.0).abs() < 1e-9, "{ratio:?}");
    assert_eq!(arcstats::Arc.source(), "/proc/spl/kstat/zfs/arcstats");
    assert!(arcstats::parse("x\nname type value\n").is_err());
    assert!(arcstats::parse("").is_err());
}

/// Results stored before the counter registry (one field per source) read
/// back with every source in place.
#[test]
fn counters_stored_the_old_way_read_back() {
    let old = r#"{"elapsed_ns": 5, "disks": [], "proc_io": {"rchar": 7, "read_bytes": 4096},
        "rusage": {"user_us": 1}, "vmstat": {"pgpgin": 3},
        "arc": {"source": "/proc/spl/kstat/zfs/arcstats", "hits": 9, "misses": 1, "hit_ratio": 90.0,
                "counters": {"size": 100}}}"#;
    let d: iolab::counters::CounterDelta = serde_json::from_str(old).unwrap();
    assert_eq!(d.physical_read_bytes(), 4096);
    assert_eq!(d.logical_read_bytes(), 7);
    assert_eq!(d.get("vmstat", "pgpgin"), 3);
    assert_eq!(d.get("rusage", "user_us"), 1);
    assert_eq!(
        (d.get("zfs_arc", "hits"), d.get("zfs_arc", "size")),
        (9, 100)
    );
}
