//! fio's terse output, version 3 (`--minimal`, `--output-format=terse`):
//! one `;`-separated line per job in the field order of fio's
//! `show_thread_status_terse_all` (stat.c) and HOWTO "TERSE OUTPUT":
//! version; fio version; jobname; groupid; error; read (41 fields); write
//! (41); cpu (5); IO depths (7); latency distributions in µs (10) and ms
//! (12); per-disk util (9 per disk); the description when there is one.
//!
//! The figures are those of fio's JSON schema ([`super::json::JSON`]), so
//! the two outputs always agree.

use super::Exporter;
use crate::runner::RunResult;
use serde_json::Value;
use std::fmt::Write;

/// The terse (v3) exporter.
pub struct Terse;

/// The only terse version iolab writes (fio's default).
pub const VERSION: u32 = 3;

/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile slots per direction.
const PERCENTILE_SLOTS: usize = 20;
/// Keys of `iodepth_level`, in fio's order.
const DEPTHS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// Keys of `latency_us`, in fio's order.
const LAT_US: [&str; 10] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
];
/// Keys of `latency_ms`, in fio's order.
const LAT_MS: [&str; 12] = [
    "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
];

impl Exporter for Terse {
    fn run(&self, r: &RunResult, _: &super::Here) -> crate::Result<String> {
        Ok(text(&super::json::FIO_FIGURES.value(r)))
    }
}

/// The terse lines of a document in fio's JSON schema, one per job.
pub fn text(doc: &Value) -> String {
    let disks = disk_fields(&doc["disk_util"]);
    let version = doc["fio version"].as_str().unwrap_or("");
    let mut out = String::new();
    for job in doc["jobs"].as_array().into_iter().flatten() {
        let _ = write!(
            out,
            "{VERSION};{version};{};{};{}",
            job["jobname"].as_str().unwrap_or(""),
            int(&job["groupid"]),
            int(&job["error"])
        );
        // unified_rw_reporting: `mixed` alone in the read fields, or
        // after the write fields (fio's show_mixed_ddir_status_terse).
        match job.get("read") {
            Some(read) => direction(&mut out, read),
            None => direction(&mut out, &job["mixed"]),
        }
        if !job["write"].is_null() {
            direction(&mut out, &job["write"]);
        }
        if job.get("read").is_some() && !job["mixed"].is_null() {
            direction(&mut out, &job["mixed"]);
        }
        let _ = write!(
            out,
            ";{:.6}%;{:.6}%;{};{};{}",
            float(&job["usr_cpu"]),
            float(&job["sys_cpu"]),
            int(&job["ctx"]),
            int(&job["majf"]),
            int(&job["minf"])
        );
        for k in DEPTHS {
            let _ = write!(out, ";{:3.1}%", float(&job["iodepth_level"][k]));
        }
        // fio adds the sub-microsecond share to the first µs bucket (stat.c
        // stat_calc_lat_nu), keeping the terse format unaltered.
        let ns: f64 = (job["latency_ns"].as_object().into_iter().flatten())
            .map(|(_, v)| float(v))
            .sum();
        for (i, k) in LAT_US.iter().enumerate() {
            let extra = if i == 0 { ns } else { 0.0 };
            let _ = write!(out, ";{:3.2}%", float(&job["latency_us"][k]) + extra);
        }
        for k in LAT_MS {
            let _ = write!(out, ";{:3.2}%", float(&job["latency_ms"][k]));
        }
        out.push_str(&disks);
        if let Some(desc) = job["desc"].as_str().filter(|d| !d.is_empty()) {
            let _ = write!(out, ";{desc}");
        }
        out.push('\n');
    }
    out
}

/// One direction's 41 fields: I/O, bandwidth, IOPS, runtime; slat, clat
/// (µs); 20 percentiles; lat (µs); bandwidth min, max, share, mean, dev.
fn direction(out: &mut String, d: &Value) {
    let (bytes, ios, runtime) = (
        int(&d["io_bytes"]),
        int(&d["total_ios"]),
        int(&d["runtime"]),
    );
    // fio's integer arithmetic: KiB/s and I/Os per second over the runtime in ms.
    let (bw, iops) = match runtime {
        0 => (0, 0),
        ms => (
            (1000u128 * u128::from(bytes) / u128::from(ms)) / 1024,
            1000u128 * u128::from(ios) / u128::from(ms),
        ),
    };
    let _ = write!(out, ";{};{bw};{iops};{runtime}", bytes >> 10);
    latency(out, &d["slat_ns"]);
    latency(out, &d["clat_ns"]);
    // fio shows total-latency percentiles when it has them, else clat's.
    let pct = [&d["lat_ns"]["percentile"], &d["clat_ns"]["percentile"]]
        .into_iter()
        .find_map(|p| p.as_object())
        .filter(|_| int(&d["total_ios"]) > 0);
    let mut list: Vec<(f64, u64)> = (pct.into_iter().flatten())
        .filter_map(|(k, v)| Some((k.parse().ok()?, v.as_u64()?)))
        .collect();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    for i in 0..PERCENTILE_SLOTS {
        match list.get(i) {
            Some((p, v)) => {
                let _ = write!(out, ";{p:.6}%={}", v / 1000);
            }
            None => out.push_str(";0%=0"),
        }
    }
    latency(out, &d["lat_ns"]);
    if int(&d["bw_samples"]) > 0 {
        let _ = write!(
            out,
            ";{};{};{:.6}%;{:.6};{:.6}",
            int(&d["bw_min"]),
            int(&d["bw_max"]),
            float(&d["bw_agg"]),
            float(&d["bw_mean"]),
            float(&d["bw_dev"])
        );
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
}

/// min; max (integer µs); mean; stddev (µs, 6 decimals): zeros without samples.
fn latency(out: &mut String, l: &Value) {
    if int(&l["N"]) == 0 {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    let _ = write!(
        out,
        ";{};{};{:.6};{:.6}",
        int(&l["min"]) / 1000,
        int(&l["max"]) / 1000,
        float(&l["mean"]) / 1000.0,
        float(&l["stddev"]) / 1000.0
    );
}

/// fio's terse disk fields: name; ios r;w; merges r;w; ticks r;w; in_queue; util%.
fn disk_fields(disks: &Value) -> String {
    let mut out = String::new();
    for d in disks.as_array().into_iter().flatten() {
        let _ = write!(
            out,
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d["name"].as_str().unwrap_or(""),
            int(&d["read_ios"]),
            int(&d["write_ios"]),
            int(&d["read_merges"]),
            int(&d["write_merges"]),
            int(&d["read_ticks"]),
            int(&d["write_ticks"]),
            int(&d["in_queue"]),
            float(&d["util"]).min(100.0)
        );
    }
    out
}

fn int(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

fn float(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}
