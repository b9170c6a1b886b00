//! What rank 0 does with 1,000 ranks' results (`bench/dist.py` runs this:
//! `cargo bench --bench dist_merge`): each rank's run as it sends it (JSON),
//! read back, merged into one run, and the merged histogram made. Each rank
//! has a real run (2,000 random 4 KiB reads of a scratch file) with its own
//! latencies (the real ones plus 2,000 drawn from a log-normal spread), so
//! the histograms differ as real ranks' do.

use iolab::dist::merge;
use iolab::runner::{self, RunResult, StopFlag};
use std::time::Instant;

const RANKS: usize = 1000;

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    let args: Vec<String> = [
        "--name=r".to_string(),
        format!("--filename={}", f.display()),
        "--size=8m".into(),
        "--rw=randread".into(),
        "--bs=4k".into(),
        "--number_ios=2000".into(),
        "--group_reporting".into(),
    ]
    .into();
    let jobs = iolab::job::jobs_from_args_in(&args, 16, &[]).unwrap();
    let base = runner::run(jobs, &Default::default(), &StopFlag::new()).unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let runs: Vec<RunResult> = (0..RANKS)
        .map(|_| {
            let mut r = base.clone();
            let t = &mut r.repetitions[0].clones[0].totals.read;
            for _ in 0..2000 {
                // Log-normal around 20 us, spread over three decades.
                let z =
                    (-2.0 * next().max(1e-12).ln()).sqrt() * (std::f64::consts::TAU * next()).cos();
                let ns = (20_000.0 * (1.2 * z).exp()) as u64;
                t.lat.record(ns.max(1));
                t.clat.record(ns.max(1));
            }
            r
        })
        .collect();
    let t0 = Instant::now();
    let wire: Vec<Vec<u8>> = runs
        .iter()
        .map(|r| serde_json::to_vec(r).unwrap())
        .collect();
    let t_send = t0.elapsed();
    let bytes: usize = wire.iter().map(Vec::len).sum();
    let hist = serde_json::to_vec(&runs[0].repetitions[0].clones[0].totals.read.clat).unwrap();
    let t0 = Instant::now();
    let back: Vec<Option<RunResult>> = (wire.iter())
        .map(|b| Some(serde_json::from_slice(b).unwrap()))
        .collect();
    let t_read = t0.elapsed();
    let names: Vec<String> = (0..RANKS).map(|r| format!("host{r}")).collect();
    let t0 = Instant::now();
    let merged = merge::merge(&back, &names).unwrap();
    let t_merge = t0.elapsed();
    let t0 = Instant::now();
    let entries = merged.entries();
    let t_hist = t0.elapsed();
    let all = &entries[0].total.read;
    assert_eq!(
        all.ios(),
        (RANKS * 4000) as u64,
        "2,000 real and 2,000 drawn per rank"
    );
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!("| step ({RANKS} ranks) | time (ms) |");
    println!("|---|---|");
    println!("| each rank's run to JSON (as sent) | {:.1} |", ms(t_send));
    println!("| 1,000 results read back at rank 0 | {:.1} |", ms(t_read));
    println!(
        "| merged into one run (clones side by side) | {:.1} |",
        ms(t_merge)
    );
    println!(
        "| merged histogram and figures (report) | {:.1} |",
        ms(t_hist)
    );
    println!(
        "| total at rank 0 (read + merge + report) | {:.1} |",
        ms(t_read + t_merge + t_hist)
    );
    println!();
    println!(
        "wire: {:.1} KiB per rank's whole result, {:.1} KiB per latency histogram (JSON); {:.1} MiB for {RANKS} ranks",
        bytes as f64 / RANKS as f64 / 1024.0,
        hist.len() as f64 / 1024.0,
        bytes as f64 / 1048576.0
    );
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut z, &hist).unwrap();
    let deflated = z.finish().unwrap().len();
    let buckets = runs[0].repetitions[0].clones[0]
        .totals
        .read
        .clat
        .bins()
        .len();
    println!(
        "one rank's histogram: {buckets} buckets in use, {:.1} KiB as JSON, {:.1} KiB deflated",
        hist.len() as f64 / 1024.0,
        deflated as f64 / 1024.0
    );
    println!(
        "merged: {} reads, p50 {} ns, p99 {} ns",
        all.ios(),
        all.clat.percentile(50.0),
        all.clat.percentile(99.0)
    );
}
