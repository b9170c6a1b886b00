//! Figures over time: the JSON time series adds up to the totals, and the
//! fio log files have fio's names and line format (checked against fio's own
//! logs of the same job) and the right contents.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// Parses one fio log line: comma-separated integers.
fn fields(line: &str) -> Vec<u64> {
    line.split(',')
        .map(|f| {
            f.trim()
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("not an integer: '{f}' in '{line}'"))
        })
        .collect()
}

fn log_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect()
}

#[test]
fn time_series_adds_up_to_the_totals() {
    let (_dir, f) = scratch_file();
    let opts = "--size=8M --rw=randread --cache=warm \
                --runtime=1200ms --time_based --log_avg_msec=200";
    let v = run_json(&job("t", &f, opts));
    let j = &v["jobs"][0];
    let ts = &j["iolab"]["time_series"];
    assert_eq!(ts["interval_ms"], 200);
    let ivs = ts["intervals"].as_array().unwrap();
    assert!(ivs.len() >= 6, "{} intervals", ivs.len());
    let mut prev = 0;
    let mut ios = 0;
    for iv in ivs {
        let t = iv["t_ms"].as_u64().unwrap();
        assert!(t > prev || prev == 0, "times increase");
        prev = t;
        ios += iv["read"]["ios"].as_u64().unwrap();
        if iv["read"]["ios"].as_u64().unwrap() > 0 {
            let p50 = iv["read"]["clat_p50_ns"].as_u64().unwrap();
            let p99 = iv["read"]["clat_p99_ns"].as_u64().unwrap();
            assert!(p50 > 0 && p99 >= p50, "{iv}");
            assert!(iv["read"]["iops"].as_f64().unwrap() > 0.0);
        }
    }
    assert_eq!(ios, j["read"]["total_ios"].as_u64().unwrap());
}

#[test]
fn fio_logs_have_fios_names_and_format() {
    skip_unless_installed!("fio");
    let (d, f) = scratch_file();
    let args = job(
        "t",
        &f,
        "--size=8M --rw=randread --bs=4k --invalidate=0 --runtime=1 --time_based \
         --write_bw_log=x --write_lat_log=x --write_iops_log=x --write_hist_log=x \
         --log_avg_msec=100 --log_hist_msec=100",
    );
    let fio_dir = d.path().join("fio");
    let iolab_dir = d.path().join("iolab");
    std::fs::create_dir_all(&fio_dir).unwrap();
    std::fs::create_dir_all(&iolab_dir).unwrap();
    lay_out(&f, "8M");
    succeed(
        std::process::Command::new("fio")
            .current_dir(&fio_dir)
            .args(&args),
    );
    let v = stdout_json(
        bin()
            .current_dir(&iolab_dir)
            .arg("run")
            .args(&args)
            .arg("--output-format=json"),
    );
    let total = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    assert_eq!(
        log_files(&fio_dir),
        log_files(&iolab_dir),
        "same log files as fio"
    );
    for name in log_files(&fio_dir) {
        let theirs = std::fs::read_to_string(fio_dir.join(&name)).unwrap();
        let ours = std::fs::read_to_string(iolab_dir.join(&name)).unwrap();
        assert_eq!(
            theirs.is_empty(),
            ours.is_empty(),
            "{name}: empty in one only"
        );
        let cols = |t: &str| t.lines().map(|l| fields(l).len()).collect::<BTreeSet<_>>();
        if !theirs.is_empty() {
            assert_eq!(cols(&theirs), cols(&ours), "{name}: columns per line");
        }
        let rows: Vec<Vec<u64>> = ours.lines().map(fields).collect();
        let times: Vec<u64> = rows.iter().map(|r| r[0]).collect();
        assert!(
            times.windows(2).all(|w| w[0] < w[1]),
            "{name}: times increase"
        );
        if name.contains("hist") {
            assert!(
                rows.iter()
                    .all(|r| r.len() == 3 + 1856 && r[1] == 0 && r[2] == 4096)
            );
            let binned: u64 = rows.iter().map(|r| r[3..].iter().sum::<u64>()).sum();
            assert_eq!(binned, total, "{name}: every I/O in one bin");
        } else if !rows.is_empty() {
            // A row per 100 ms interval that ended (one for each, also
            // after a stall), reads only. An interval may be empty on a
            // loaded machine (no read completed in it: a stall of 100 ms
            // or more), so only some rows are asserted to have a value.
            assert!(
                rows.len() >= 9,
                "{name}: {} rows in 1 s at 100 ms",
                rows.len()
            );
            assert!(rows.iter().all(|r| r[2] == 0), "{name}: {ours}");
            assert!(rows.iter().any(|r| r[1] > 0), "{name}: {ours}");
        }
    }
    // IOPS x interval adds up to the I/Os done (the last interval may be
    // short); each interval's I/Os are counted in it, stalls or not.
    let iops: Vec<Vec<u64>> = std::fs::read_to_string(iolab_dir.join("x_iops.1.log"))
        .unwrap()
        .lines()
        .map(fields)
        .collect();
    let approx: u64 = iops.iter().map(|r| r[1] / 10).sum();
    let diff = (approx as f64 - total as f64).abs() / total as f64;
    assert!(diff < 0.15, "iops log {approx} vs {total} I/Os");
}

#[test]
fn per_io_logs_have_one_line_per_io() {
    let (d, f) = scratch_file();
    let out = succeed(bin().current_dir(d.path()).arg("run").args(job(
        "p",
        &f,
        "--size=4M --rw=randread --bs=8k --number_ios=500 --write_lat_log=y --write_iops_log=y \
         --ioengine=io_uring --iodepth=4 --output-format=json",
    )));
    assert!(!out.is_empty());
    for (log, check) in [
        ("y_lat.1.log", 0u8),
        ("y_clat.1.log", 0),
        ("y_slat.1.log", 0),
        ("y_iops.1.log", 1),
    ] {
        let text = std::fs::read_to_string(d.path().join(log)).unwrap();
        let rows: Vec<Vec<u64>> = text.lines().map(fields).collect();
        assert_eq!(rows.len(), 500, "{log}");
        for r in &rows {
            assert_eq!(r.len(), 5);
            assert_eq!((r[2], r[3]), (0, 8192), "{log}: ddir, bs");
            if check == 1 {
                assert_eq!(r[1], 1, "{log}: one I/O per line");
            }
        }
        assert!(
            rows.windows(2).all(|w| w[0][0] <= w[1][0]),
            "{log}: time order"
        );
    }
}
