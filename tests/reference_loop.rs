//! Issue 20: the bare reference loop of `lab prefetch --reference` reads
//! exactly the offsets iolab's run reads (checked against iolab's own
//! `write_iolog` of the same job and seed), the lab shows its speed-up
//! beside iolab's; and `gtod_reduce` runs untimed (iolab's own per-I/O cost
//! without the clock) with exact counts and working deadlines.

mod common;

use common::*;
use std::time::{Duration, Instant};

/// The job of the prefetch lab, as its runs are given.
fn prefetch_job(f: &std::path::Path, seed: u64, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=p".to_string(),
        format!("--filename={}", f.display()),
        "--size=4m".into(),
        "--rw=randread".into(),
        "--bs=8k".into(),
        "--number_ios=300".into(),
        "--prefetch=4".into(),
        format!("--randseed={seed}"),
    ]
    .into();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn the_reference_reads_the_offsets_iolab_reads() {
    let d = scratch();
    let f = d.path().join("f");
    for seed in [7, 123_456_789] {
        let log = d.path().join(format!("io.{seed}.log"));
        let args = prefetch_job(&f, seed, &[]);
        let want = iolab::lab::reference::reads(&args, 4 << 20).unwrap();
        let logged = [&args[..], &[format!("--write_iolog={}", log.display())]].concat();
        run_text(&logged);
        let got: Vec<(u64, usize)> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w.get(2) == Some(&"read")).then(|| (w[3].parse().unwrap(), w[4].parse().unwrap()))
            })
            .collect();
        assert_eq!(got.len(), 300);
        assert_eq!(
            want, got,
            "seed {seed}: the same offsets, in the same order"
        );
        // The bare loop reads them all (from a cold cache) and says how fast.
        let iops = iolab::lab::reference::bare(&f, &want, 4).unwrap();
        assert!(iops > 0.0 && iops.is_finite());
    }
}

#[test]
fn the_prefetch_lab_sets_the_reference_beside_its_runs() {
    let d = scratch();
    let out = String::from_utf8(succeed(
        bin()
            .current_dir(d.path())
            .args([
                "lab", "prefetch", "--quick", "--size", "16M", "--ops", "400",
            ])
            .args(["--reference", "--no-store", "-o"])
            .arg(d.path().join("out")),
    ))
    .unwrap();
    assert!(out.contains("reference IOPS  reference speed-up"), "{out}");
    assert!(
        out.contains("The bare loop over the same offsets sped up"),
        "{out}"
    );
    assert!(out.contains("iolab's speed-up is"), "{out}");
    // Four distances, each with a reference figure and a speed-up of 1.00x
    // at distance 0.
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip_while(|l| !l.starts_with("--"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    assert_eq!(rows[0].last(), Some(&"1.00x"), "{out}");
    for r in &rows {
        let iops: f64 = r[r.len() - 2].parse().unwrap();
        assert!(iops > 0.0, "{r:?}");
    }
}

#[test]
fn reference_is_refused_by_labs_without_one() {
    fails_with(
        bin().args(["lab", "small-reads", "--quick", "--reference", "--no-store"]),
        2,
        "lab small-reads has no reference loop (prefetch has)",
    );
}

/// `gtod_reduce=1`: no clock around each I/O (iolab's own cost alone),
/// the I/Os still counted exactly and a time limit still kept.
#[test]
fn gtod_reduce_runs_untimed_with_exact_counts_and_deadlines() {
    let d = scratch();
    let f = d.path().join("f");
    let r = run_json(&job(
        "u",
        &f,
        "--size=1m --rw=randread --bs=4k --gtod_reduce=1",
    ));
    let read = &r["jobs"][0]["read"];
    assert_eq!(read["total_ios"], 256);
    assert_eq!(read["lat_ns"]["mean"], 0.0, "no latency measured");
    let t0 = Instant::now();
    let r = run_json(&[
        "--name=n",
        "--size=64m",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=null",
        "--gtod_reduce=1",
        "--time_based",
        "--runtime=1s",
    ]);
    // The deadline held: without a clock per I/O a null job would run on
    // for ever. The bounds are liveness checks (the run ends, its runtime
    // at least its second and near it); how far past 1 s it ends with
    // gtod_reduce is timed by bench/pacing.py.
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(30),
        "the deadline held: {took:?}"
    );
    let runtime = r["jobs"][0]["read"]["runtime"].as_u64().unwrap();
    assert!((1000..5000).contains(&runtime), "runtime {runtime} ms");
    assert!(r["jobs"][0]["read"]["total_ios"].as_u64().unwrap() > 1000);
}

/// fio is the reference for `gtod_reduce=1`: the same job under both
/// reads the same number of blocks and reports no latency.
#[test]
fn gtod_reduce_matches_fio() {
    if !have("fio", "gtod_reduce_matches_fio") {
        return;
    }
    let d = scratch();
    let f = d.path().join("f");
    let args = job(
        "g",
        &f,
        "--size=2m --rw=randread --bs=4k --gtod_reduce=1 --randseed=3",
    );
    let ours = run_json(&args);
    let theirs = fio_json(&args);
    for doc in [&ours, &theirs] {
        let read = &doc["jobs"][0]["read"];
        assert_eq!(read["total_ios"], 512, "{read}");
        assert_eq!(read["io_bytes"], 2 << 20);
        assert_eq!(read["clat_ns"]["mean"].as_f64(), Some(0.0), "{read}");
    }
}
