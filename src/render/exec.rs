//! An exec's runs (`iolab exec`, `show` of one): a row per run (status,
//! wall and CPU time, the bytes and calls of `/proc/PID/io`, the named
//! files' cache before and after, hits and misses), the devices' iostat
//! columns per run, and the wall time over the successful runs with the
//! first run flagged when it stands out; the same as JSON.

use super::table::{Table, fig};
use crate::counters::DiskDelta;
use crate::exec::{ExecResult, ExecRun, figures};
use crate::metrics::format::bytes_iec;
use serde_json::{Value, json};
use std::fmt::Write;

/// An exec as text.
pub fn text(e: &ExecResult) -> String {
    let mut out = String::new();
    let files = e.runs.iter().find_map(|r| r.cache.as_ref());
    let _ = writeln!(
        out,
        "exec: {}\ncache {}{}; {} run{}",
        e.command_line(),
        e.cache_policy,
        files.map_or(String::new(), |c| format!(
            " on {} file{} ({} pages)",
            c.files,
            if c.files == 1 { "" } else { "s" },
            c.pages
        )),
        e.runs.len(),
        match (e.interrupted, e.repeat) {
            (true, n) if n > 0 => format!(" of {n} (interrupted)"),
            (true, _) => " (interrupted)".into(),
            _ if e.runs.len() == 1 => String::new(),
            _ => "s".into(),
        },
    );
    out.push('\n');
    out.push_str(&runs(e).text());
    let disks = devices(&e.runs);
    if !disks.rows.is_empty() {
        out.push_str("\ndevices (iostat -x over each run)\n");
        out.push_str(&disks.text());
    }
    for r in &e.runs {
        if let Some(t) = &r.trace {
            let _ = writeln!(
                out,
                "\nsystem calls of run {} (eBPF; {} events lost)",
                r.index, t.lost
            );
            out.push_str(&super::trace::calls_table(t).0.text());
        }
    }
    out.push('\n');
    out.push_str(&verdict(e));
    for w in &e.warnings {
        let _ = writeln!(out, "note: {w}");
    }
    if let Some(f) = &e.flamegraph {
        let _ = writeln!(out, "flamegraph: {}", f.path.display());
        if let Some(d) = &f.diff {
            let _ = writeln!(out, "first run against the rest: {}", d.display());
        }
    }
    if let Some(id) = e.run {
        let _ = writeln!(out, "stored as run {id}");
    }
    out
}

/// A row per run.
fn runs(e: &ExecResult) -> Table {
    let mut t = Table::new([
        "run",
        "status",
        "wall s",
        "user s",
        "sys s",
        "read",
        "written",
        "from storage",
        "syscr",
        "syscw",
        "cached before",
        "after",
        "hits",
        "misses",
        "dev reads",
    ]);
    let first_ok = e.ok_runs().next().map(|r| r.index);
    for r in &e.runs {
        let c = r.cache.as_ref();
        let pct = |n: u64| c.map_or("-".into(), |c| percent(n, c.pages));
        let dev: u64 = r.disks.iter().map(|d| d.read_ios).sum();
        t.push(vec![
            match Some(r.index) == first_ok && e.ok_runs().count() > 1 {
                true => format!("{} (first)", r.index),
                false => r.index.to_string(),
            },
            status(r),
            format!("{:.3}", r.wall_ns as f64 / 1e9),
            format!("{:.3}", r.rusage("user_us") as f64 / 1e6),
            format!("{:.3}", r.rusage("sys_us") as f64 / 1e6),
            bytes_iec(r.io("rchar") as f64),
            bytes_iec(r.io("wchar") as f64),
            bytes_iec(r.io("read_bytes") as f64),
            r.io("syscr").to_string(),
            r.io("syscw").to_string(),
            pct(c.map_or(0, |c| c.before)),
            pct(c.map_or(0, |c| c.after)),
            c.map_or("-".into(), |c| c.hits.to_string()),
            c.map_or("-".into(), |c| c.misses.to_string()),
            if r.disks.is_empty() {
                "-".into()
            } else {
                dev.to_string()
            },
        ]);
    }
    t
}

fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}

/// `ok`, `exit 3`, `killed (signal 9)`, `interrupted`.
fn status(r: &ExecRun) -> String {
    match r.exit_status {
        _ if r.interrupted => "interrupted".into(),
        0 => "ok".into(),
        s if s > 128 => format!("killed (signal {})", s - 128),
        s => format!("exit {s}"),
    }
}

/// iostat's columns per run and device.
fn devices(runs: &[ExecRun]) -> Table {
    let cols = [
        "r/s", "rMB/s", "r_await", "rareq-sz", "w/s", "wMB/s", "w_await", "aqu-sz", "%util",
    ];
    let mut head = vec!["run", "device"];
    head.extend(cols);
    let mut t = Table::new(head);
    for r in runs {
        for d in &r.disks {
            let io = d.iostat();
            let mut row = vec![r.index.to_string(), d.disk.name.clone()];
            row.extend(cols.iter().map(|c| fig(io[c])));
            t.push(row);
        }
    }
    t
}

/// The wall time over the successful runs, the first run if it stands
/// out, the failed runs.
fn verdict(e: &ExecResult) -> String {
    let walls: Vec<f64> = e.ok_runs().map(|r| r.wall_ns as f64 / 1e9).collect();
    let mut out = String::new();
    if !walls.is_empty() {
        let mean = crate::analysis::stats::mean(&walls);
        // One run has no known spread: no "± 0.000".
        let _ = match walls.len() {
            1 => writeln!(
                out,
                "wall time {mean:.3} s (1 successful run, spread unknown)"
            ),
            n => writeln!(
                out,
                "wall time {mean:.3} ± {:.3} s (mean ± sd of {n} successful runs)",
                crate::analysis::stats::stddev(&walls)
            ),
        };
    }
    if let Some(f) = e.first_run() {
        let _ = writeln!(
            out,
            "first run stands out: {:.3} s against {:.3} s for the others ({:.3}-{:.3} s)",
            f.first / 1e9,
            f.rest_mean / 1e9,
            f.rest_min / 1e9,
            f.rest_max / 1e9
        );
    }
    let failed: Vec<String> = e
        .failed()
        .map(|r| format!("run {} {}", r.index, status(r)))
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(
            out,
            "failed, left out of the figures: {}",
            failed.join(", ")
        );
    }
    out
}

/// An exec as JSON: the result as stored, with the key figures, the
/// first-run effect and each run's iostat columns.
pub fn value(e: &ExecResult) -> Value {
    let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
    if let Some(runs) = v["runs"].as_array_mut() {
        for (rv, r) in runs.iter_mut().zip(&e.runs) {
            rv["iostat"] = r.disks.iter().map(iostat).collect();
        }
    }
    v["summary"] = serde_json::to_value(figures::summary(e)).unwrap_or(Value::Null);
    v["first_run"] = serde_json::to_value(e.first_run()).unwrap_or(Value::Null);
    v["run_id"] = json!(e.run);
    v
}

fn iostat(d: &DiskDelta) -> Value {
    let io = d.iostat();
    json!({"device": d.disk.name, "columns": io})
}
