//! fio's normal (text) output, laid out as fio 3.33's stat.c writes it
//! (`show_thread_status_normal`, `show_ddir_status`, `display_lat`,
//! `show_clat_percentiles`, `show_latencies`, `show_group_stats`,
//! `print_disk_util`), with fio's number formatting (`num2str`).
//!
//! The figures come from the document in fio's JSON schema
//! ([`super::json::JSON`]), as the terse lines do, so the three outputs
//! always agree. iolab's own figures (counters, cache state, repetitions,
//! log2 histograms) follow each job's block in [`super::normal`].

use serde_json::Value;
use std::fmt::Write;

/// fio's default `significant_figures`.
const SIG_FIGS: usize = 4;

/// What a number counts, for [`num2str`] (fio's `N2S_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A plain number.
    None,
    /// Bytes.
    Byte,
    /// Bytes per second.
    BytePerSec,
}

/// fio's `num2str`: `num` (in units of `base`) with at most `maxlen`
/// digits, scaled by 1000 (`pow2`: 1024) with fio's prefixes and its
/// rounding: `num2str(33_103_000, 4, 1, true, BytePerSec)` is `31.6MiB/s`.
pub fn num2str(num: u64, maxlen: usize, base: u64, pow2: bool, unit: Unit) -> String {
    const SI: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    const IEC: [&str; 7] = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let prefix = if pow2 { &IEC } else { &SI };
    let unit = match unit {
        Unit::None => "",
        Unit::Byte => "B",
        Unit::BytePerSec => "B/s",
    };
    let thousand: u64 = if pow2 { 1024 } else { 1000 };
    let mut num = num;
    let mut post = 0;
    let mut b = base;
    while b > 1 {
        b /= thousand;
        post += 1;
    }
    let digits = |n: u64| n.to_string().len();
    let (mut modulo, mut carry) = (None, false);
    while post < SI.len() && digits(num) > maxlen {
        let m = num % thousand;
        num /= thousand;
        carry = m >= thousand / 2;
        modulo = Some(m);
        post += 1;
    }
    if post >= SI.len() {
        post = 0;
    }
    let Some(m) = modulo else {
        return format!("{num}{}{unit}", prefix[post]);
    };
    if maxlen as i64 - digits(num) as i64 <= 1 {
        return format!("{}{}{unit}", num + u64::from(carry), prefix[post]);
    }
    let decimals = maxlen - digits(num) - 1;
    let frac = format!("{:.*}", decimals, m as f64 / thousand as f64);
    if frac.starts_with('1') {
        num += 1;
    }
    format!("{num}.{}{}{unit}", &frac[2..], prefix[post])
}

fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// fio's `display_lat`: `    clat (usec): min=…, max=…, avg=…, stdev=…`,
/// scaled to µs or ms as fio scales it.
fn display_lat(out: &mut String, name: &str, lat: &Value) {
    if u(&lat["N"]) == 0 {
        return;
    }
    let (mut min, mut max) = (u(&lat["min"]), u(&lat["max"]));
    let (mut mean, mut dev) = (f(&lat["mean"]), f(&lat["stddev"]));
    let mut base = "(nsec)";
    // fio's nsec_to_msec, then nsec_to_usec (stat.h).
    for (div, lo, hi, name) in [
        (1_000_000u64, 2_000_000, 99_999_999, "(msec)"),
        (1_000, 2000, 99_999, "(usec)"),
    ] {
        if min > lo && max > hi && dev > div as f64 {
            (min, max, mean, dev) = (min / div, max / div, mean / div as f64, dev / div as f64);
            base = name;
            break;
        }
    }
    let _ = writeln!(
        out,
        "    {name} {base}: min={}, max={}, avg={mean:5.02}, stdev={dev:5.02}",
        num2str(min, 6, 1, false, Unit::None),
        num2str(max, 6, 1, false, Unit::None)
    );
}

/// Digits after the point the percentile list needs (fio counts them as
/// written; here from the values, as a list is written without trailing
/// zeros).
fn precision(list: &[f64]) -> usize {
    list.iter()
        .map(|p| {
            let s = format!("{p:.6}");
            let s = s.trim_end_matches('0');
            s.len() - s.find('.').map_or(s.len(), |i| i + 1)
        })
        .max()
        .unwrap_or(0)
}

/// fio's `show_clat_percentiles` from a `*_ns.percentile` map.
fn percentiles(out: &mut String, pre: &str, lat: &Value) {
    let Some(map) = lat["percentile"].as_object() else {
        return;
    };
    let mut list: Vec<(f64, u64)> = map
        .iter()
        .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, u(v))))
        .collect();
    if list.is_empty() {
        return;
    }
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    let minv = list.iter().map(|x| x.1).min().unwrap_or(0);
    let maxv = list.iter().map(|x| x.1).max().unwrap_or(0);
    let (scale, divisor, unit) = if minv > 2_000_000 && maxv > 99_999_999 {
        (2, 1_000_000, "msec")
    } else if minv > 2000 && maxv > 99_999 {
        (1, 1000, "usec")
    } else {
        (0, 1, "nsec")
    };
    let _ = write!(out, "    {pre} percentiles ({unit}):\n     |");
    let prec = precision(&list.iter().map(|x| x.0).collect::<Vec<_>>());
    let width = 5.max(((maxv / divisor) as f64).log10() as usize + 1);
    let per_line = (80 - 7) / (prec + 10 + width);
    for (j, &(p, v)) in list.iter().enumerate() {
        if j != 0 && j % per_line == 0 {
            out.push_str("     |");
        }
        let mut v = v;
        for _ in 0..scale {
            v = v.div_ceil(1000);
        }
        let last = j == list.len() - 1;
        let _ = write!(
            out,
            " {p:>w$.prec$}th=[{v:>width$}]{}",
            if last { '\n' } else { ',' },
            w = prec + 3
        );
        if last {
            break;
        }
        if j % per_line == per_line - 1 {
            out.push('\n');
        }
    }
}

/// fio's `show_ddir_status` for `read`, `write` or `trim`.
fn direction(out: &mut String, name: &str, d: &Value) {
    let runtime = u(&d["runtime"]);
    if u(&d["io_bytes"]) == 0 || runtime == 0 {
        return;
    }
    let bytes = u(&d["io_bytes"]);
    let bw = 1000 * bytes / runtime;
    let iops = 1000 * u(&d["total_ios"]) / runtime;
    // fio 3.33 adds its zoned-device figure to every write line.
    let post = if name == "write" {
        "; 0 zone resets"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={} ({})({}/{runtime}msec){post}",
        num2str(iops, SIG_FIGS, 1, false, Unit::None),
        num2str(bw, SIG_FIGS, 1, true, Unit::BytePerSec),
        num2str(bw, SIG_FIGS, 1, false, Unit::BytePerSec),
        num2str(bytes, SIG_FIGS, 1, true, Unit::Byte),
    );
    display_lat(out, "slat", &d["slat_ns"]);
    display_lat(out, "clat", &d["clat_ns"]);
    display_lat(out, " lat", &d["lat_ns"]);
    for (key, pre) in [("slat_ns", "slat"), ("clat_ns", "clat"), ("lat_ns", "lat")] {
        percentiles(out, pre, &d[key]);
    }
    if u(&d["bw_samples"]) > 0 {
        let (mut min, mut max) = (u(&d["bw_min"]), u(&d["bw_max"]));
        let (mut mean, mut dev) = (f(&d["bw_mean"]), f(&d["bw_dev"]));
        let mut unit = "KiB";
        if mean > 1024.0 * 1024.0 {
            (min, max, mean, dev) = (min / 1024, max / 1024, mean / 1024.0, dev / 1024.0);
            unit = "MiB";
        }
        let _ = writeln!(
            out,
            "   bw ({unit:>5}/s): min={min:5}, max={max:5}, per={:3.2}%, avg={mean:5.02}, \
             stdev={dev:5.02}, samples={}",
            f(&d["bw_agg"]),
            u(&d["bw_samples"])
        );
    }
    if u(&d["iops_samples"]) > 0 {
        let _ = writeln!(
            out,
            "   iops        : min={:5}, max={:5}, avg={:5.02}, stdev={:5.02}, samples={}",
            u(&d["iops_min"]),
            u(&d["iops_max"]),
            f(&d["iops_mean"]),
            f(&d["iops_stddev"]),
            u(&d["iops_samples"])
        );
    }
}

/// fio's `show_lat`: the latency distribution lines, five per line.
fn lat_dist(out: &mut String, unit: &str, map: &Value) {
    let Some(m) = map.as_object() else { return };
    let cells: Vec<String> = m
        .iter()
        .filter(|(_, v)| f(v) > 0.0)
        .map(|(k, v)| format!("{k}={:3.2}%", f(v).max(0.01)))
        .collect();
    for row in cells.chunks(5) {
        let _ = writeln!(out, "  lat ({unit})   : {}", row.join(", "));
    }
}

/// A distribution line of fio's depth figures: `1=100.0%, 2=0.0%, …`.
fn depth_line(m: &Value) -> String {
    m.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let p = f(v);
                    format!("{k}={:3.1}%", if p > 0.0 && p < 0.1 { 0.1 } else { p })
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// One job's block as fio's `show_thread_status_normal` writes it:
/// `members` clones reported together, `pid` the process.
pub fn job_block(out: &mut String, job: &Value, members: usize, pid: u32, time: &str) {
    let _ = writeln!(
        out,
        "{}: (groupid={}, jobs={members}): err={:2}: pid={pid}: {time}",
        job["jobname"].as_str().unwrap_or(""),
        u(&job["groupid"]),
        u(&job["error"]),
    );
    if let Some(desc) = job["desc"].as_str().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "  Description  : [{desc}]");
    }
    // `mixed`: fio's unified_rw_reporting (alone, or after the others).
    for dir in ["read", "write", "trim", "mixed"] {
        direction(out, dir, &job[dir]);
    }
    lat_dist(out, "nsec", &job["latency_ns"]);
    lat_dist(out, "usec", &job["latency_us"]);
    lat_dist(out, "msec", &job["latency_ms"]);
    let sync = &job["sync"]["lat_ns"];
    if u(&sync["N"]) > 0 {
        out.push_str("  fsync/fdatasync/sync_file_range:\n");
        display_lat(out, "sync", sync);
        percentiles(out, "sync", sync);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:3.2}%, sys={:3.2}%, ctx={}, majf={}, minf={}",
        f(&job["usr_cpu"]),
        f(&job["sys_cpu"]),
        u(&job["ctx"]),
        u(&job["majf"]),
        u(&job["minf"])
    );
    let _ = writeln!(
        out,
        "  IO depths    : {}",
        depth_line(&job["iodepth_level"])
    );
    let _ = writeln!(
        out,
        "     submit    : {}",
        depth_line(&job["iodepth_submit"])
    );
    let _ = writeln!(
        out,
        "     complete  : {}",
        depth_line(&job["iodepth_complete"])
    );
    // With unified_rw_reporting=mixed, fio counts every I/O as a read.
    let first = if job["read"].is_null() {
        "mixed"
    } else {
        "read"
    };
    let three = |key: &str| {
        [first, "write", "trim"]
            .iter()
            .map(|d| u(&job[*d][key]).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    // The fourth count is the syncs (fio's DDIR_SYNC).
    let _ = writeln!(
        out,
        "     issued rwts: total={},{} short={},0 dropped={},0",
        three("total_ios"),
        u(&job["sync"]["total_ios"]),
        three("short_ios"),
        three("drop_ios")
    );
    if u(&job["latency_depth"]) > 0 {
        let _ = writeln!(
            out,
            "     latency   : target={}, window={}, percentile={:.2}%, depth={}",
            u(&job["latency_target"]),
            u(&job["latency_window"]),
            f(&job["latency_percentile"]),
            u(&job["latency_depth"])
        );
    }
}

/// fio's "Run status group" blocks, one per `groupid`, in order.
pub fn group_stats(out: &mut String, jobs: &[Value]) {
    let mut groups: Vec<u64> = jobs.iter().map(|j| u(&j["groupid"])).collect();
    groups.dedup();
    groups.sort_unstable();
    groups.dedup();
    for g in groups {
        let _ = writeln!(out, "\nRun status group {g} (all jobs):");
        let members: Vec<&Value> = jobs.iter().filter(|j| u(&j["groupid"]) == g).collect();
        for (dir, label) in [
            ("read", "   READ"),
            ("write", "  WRITE"),
            ("trim", "   TRIM"),
            ("mixed", "  MIXED"),
        ] {
            let runs: Vec<(u64, u64)> = members
                .iter()
                .map(|j| (u(&j[dir]["io_bytes"]), u(&j[dir]["runtime"])))
                .filter(|&(_, run)| run > 0)
                .collect();
            let Some(max_run) = runs.iter().map(|r| r.1).max() else {
                continue;
            };
            let min_run = runs.iter().map(|r| r.1).min().unwrap_or(0);
            let bytes: u64 = runs.iter().map(|r| r.0).sum();
            let bws = runs.iter().map(|&(b, run)| b * 1000 / run);
            let (min_bw, max_bw) = (bws.clone().min().unwrap_or(0), bws.max().unwrap_or(0));
            let agg = bytes * 1000 / max_run;
            let n = |v: u64, pow2: bool, unit: Unit| num2str(v, SIG_FIGS, 1, pow2, unit);
            let bps = Unit::BytePerSec;
            let _ = writeln!(
                out,
                "{label}: bw={} ({}), {}-{} ({}-{}), io={} ({}), run={min_run}-{max_run}msec",
                n(agg, true, bps),
                n(agg, false, bps),
                n(min_bw, true, bps),
                n(max_bw, true, bps),
                n(min_bw, false, bps),
                n(max_bw, false, bps),
                n(bytes, true, Unit::Byte),
                n(bytes, false, Unit::Byte),
            );
        }
    }
}

/// fio's "Disk stats (read/write)" block from `disk_util`.
pub fn disk_stats(out: &mut String, disks: &Value) {
    let Some(disks) = disks.as_array().filter(|d| !d.is_empty()) else {
        return;
    };
    out.push_str("\nDisk stats (read/write):\n");
    for d in disks {
        let _ = writeln!(
            out,
            "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:3.2}%",
            d["name"].as_str().unwrap_or("?"),
            u(&d["read_ios"]),
            u(&d["write_ios"]),
            u(&d["read_merges"]),
            u(&d["write_merges"]),
            u(&d["read_ticks"]),
            u(&d["write_ticks"]),
            u(&d["in_queue"]),
            f(&d["util"]).min(100.0)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_fio_writes_them() {
        // Values and strings from fio 3.33's output on this machine.
        assert_eq!(num2str(8071, 4, 1, false, Unit::None), "8071");
        assert_eq!(num2str(15616, 4, 1, false, Unit::None), "15.6k");
        assert_eq!(num2str(6_536_100, 6, 1, false, Unit::None), "6536.1k");
        assert_eq!(
            num2str(33_043_000, 4, 1, true, Unit::BytePerSec),
            "31.5MiB/s"
        );
        assert_eq!(
            num2str(33_043_000, 4, 1, false, Unit::BytePerSec),
            "33.0MB/s"
        );
        assert_eq!(num2str(33_128_448, 4, 1, true, Unit::Byte), "31.6MiB");
        assert_eq!(num2str(1023, 4, 1, true, Unit::Byte), "1023B");
        assert_eq!(num2str(99_999, 4, 1, false, Unit::None), "100.0k");
    }

    #[test]
    fn percentile_rows_are_laid_out_as_fio() {
        let lat = serde_json::json!({"N": 3, "percentile": {
            "1.000000": 1624, "5.000000": 1912, "10.000000": 2288, "20.000000": 2704,
            "99.950000": 5472256, "99.990000": 6520832}});
        let mut out = String::new();
        percentiles(&mut out, "clat", &lat);
        assert_eq!(
            out,
            "    clat percentiles (nsec):\n     |  1.00th=[   1624],  5.00th=[   1912], \
             10.00th=[   2288],\n     | 20.00th=[   2704], 99.95th=[5472256], \
             99.99th=[6520832]\n"
        );
    }
}
