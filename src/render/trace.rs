//! A trace shown: seed 000's view (per call: counts, errors, bytes, time,
//! log2 latency histograms) and per file the access pattern; and the same
//! as JSON.

use super::log2;
use super::table::Table;
use crate::metrics::format::bytes_iec;
use crate::trace::calls::Class;
use crate::trace::model::{FileStats, Stats};
use crate::trace::store::StoredTrace;
use serde_json::{Value, json};
use std::fmt::Write;

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

/// The text view of a trace.
pub fn text(s: &StoredTrace) -> String {
    let t = &s.trace;
    let m = &t.meta;
    let mut out = String::new();
    let what = if m.command.is_empty() {
        format!("pid {}", m.pid)
    } else {
        format!("{} (pid {})", m.command.join(" "), m.pid)
    };
    let _ = writeln!(
        out,
        "trace of {what}: {:.3} s, {} tracer, {}",
        m.duration_ns as f64 / 1e9,
        m.source,
        match m.mode {
            crate::trace::Mode::Histograms => "histograms",
            crate::trace::Mode::Events => "events",
        }
    );
    let procs = {
        let mut p: Vec<u32> = t.threads.iter().map(|t| t.pid).collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    };
    let status = m
        .exit_status
        .map_or(String::new(), |c| format!("exit status {c}; "));
    if let Some(how) = &m.stopped {
        let _ = writeln!(out, "{how}");
    }
    for n in &m.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(
        out,
        "{status}{} threads in {procs} processes; {} events lost",
        t.threads.len(),
        t.lost
    );
    let (tab, calls) = calls_table(t);
    out.push('\n');
    out.push_str(&tab.text());
    for (name, st) in &calls {
        out.push('\n');
        out.push_str(&log2::buckets(
            &format!("{name} latency (ns)"),
            &st.lat.log2(),
        ));
        out.push_str(&sizes_text(name, &st.sizes));
    }
    if !t.files.is_empty() {
        out.push('\n');
        out.push_str(&files(&t.files).text());
    }
    out.push_str(&super::trace_pattern::text(&t.files));
    if let Some(f) = &s.file {
        let _ = writeln!(out, "\nevents in {}", f.display());
    }
    if let Some(id) = s.run {
        let _ = writeln!(out, "stored as run {id}");
    }
    out
}

/// Per call, the most frequent first: count, errors, bytes, total time,
/// mean, p50 and p99 latency; and the calls in that order.
pub fn calls_table(t: &crate::trace::model::Trace) -> (Table, Vec<(&String, &Stats)>) {
    let mut tab = Table::new([
        "call", "count", "errors", "bytes", "total ms", "mean us", "p50 us", "p99 us",
    ]);
    let mut calls: Vec<(&String, &Stats)> = t.calls.iter().collect();
    calls.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    for (name, st) in &calls {
        tab.push(vec![
            name.to_string(),
            st.count.to_string(),
            st.errors.to_string(),
            bytes_iec(st.bytes as f64),
            format!("{:.3}", st.sum_ns as f64 / 1e6),
            us(st.sum_ns as f64 / st.count.max(1) as f64),
            us(st.lat.percentile(50.0) as f64),
            us(st.lat.percentile(99.0) as f64),
        ]);
    }
    (tab, calls)
}

/// A call's sizes: each size and its count when they are exact and few
/// (`read sizes: 1000B x50, 24B x10`), else log2 buckets.
fn sizes_text(name: &str, h: &crate::trace::hist::LogHist) -> String {
    if h.count() == 0 {
        return String::new();
    }
    let exact = h.exact_values();
    if h.is_exact() && exact.len() <= 8 {
        let mut by: Vec<(u64, u64)> = exact;
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let each: Vec<String> = (by.iter())
            .map(|(v, n)| format!("{} x{n}", bytes_iec(*v as f64)))
            .collect();
        return format!("  {name} sizes: {}\n", each.join(", "));
    }
    format!(
        "\n{}",
        log2::buckets(&format!("{name} size (bytes)"), &h.log2())
    )
}

/// Per file and direction: ops, bytes, sizes, sequential share, time;
/// the file's syncs (fsync, fdatasync, ...) in their own column, on one of
/// its rows (write, else other, else read).
fn files(files: &[FileStats]) -> Table {
    let mut tab = Table::new([
        "file", "dir", "ops", "bytes", "size p50", "size max", "seq %", "mean us", "p99 us",
        "syncs",
    ]);
    let mut rows: Vec<(&FileStats, &str, Stats)> = Vec::new();
    for f in files {
        for (dir, class) in [("read", Class::Read), ("write", Class::Write)] {
            let s = f.of(class);
            if s.count > 0 {
                rows.push((f, dir, s));
            }
        }
        let other: u64 = f.calls.values().map(|s| s.count).sum::<u64>()
            - f.of(Class::Read).count
            - f.of(Class::Write).count;
        if other > 0 {
            let mut s = Stats::default();
            for (n, st) in &f.calls {
                if !matches!(class_of(n), Class::Read | Class::Write) {
                    s.merge(st);
                }
            }
            rows.push((f, "other", s));
        }
    }
    rows.sort_by(|a, b| b.2.bytes.cmp(&a.2.bytes).then(b.2.count.cmp(&a.2.count)));
    let sync_row = |f: &FileStats| {
        let has = |dir: Class| f.of(dir).count > 0;
        if has(Class::Write) {
            "write"
        } else if f.calls.values().map(|s| s.count).sum::<u64>()
            > f.of(Class::Read).count + f.of(Class::Write).count
        {
            "other"
        } else {
            "read"
        }
    };
    for (f, dir, s) in rows {
        let moved = dir != "other";
        let syncs = if sync_row(f) == dir {
            f.of(Class::Sync).count.to_string()
        } else {
            "-".to_string()
        };
        let dash = || "-".to_string();
        tab.push(vec![
            f.path.clone(),
            dir.to_string(),
            s.count.to_string(),
            if moved {
                bytes_iec(s.bytes as f64)
            } else {
                dash()
            },
            if moved {
                bytes_iec(s.sizes.percentile_low(50.0) as f64)
            } else {
                dash()
            },
            if moved {
                bytes_iec(s.sizes.percentile_low(100.0) as f64)
            } else {
                dash()
            },
            if moved {
                format!("{:.0}", 100.0 * s.sequential as f64 / s.count.max(1) as f64)
            } else {
                dash()
            },
            us(s.sum_ns as f64 / s.count.max(1) as f64),
            us(s.lat.percentile(99.0) as f64),
            syncs,
        ]);
    }
    tab
}

fn class_of(name: &str) -> Class {
    crate::trace::calls::by_name(name).map_or(Class::Other, |(_, c)| c.class)
}

fn stats_json(s: &Stats) -> Value {
    json!({
        "count": s.count,
        "errors": s.errors,
        "bytes": s.bytes,
        "sum_ns": s.sum_ns,
        "sequential": s.sequential,
        "p50_ns": s.lat.percentile(50.0),
        "p99_ns": s.lat.percentile(99.0),
        "latency_log2_ns": s.lat.log2().iter().map(|(v, n)| json!([v, n])).collect::<Vec<_>>(),
        "size_log2_bytes": s.sizes.log2().iter().map(|(v, n)| json!([v, n])).collect::<Vec<_>>(),
        "size_p50": s.sizes.percentile_low(50.0),
        "size_max": s.sizes.percentile_low(100.0),
        "sizes_exact": s.sizes.is_exact(),
        "latency_slots": s.lat.slots().map(|(k, n)| (k.to_string(), json!(n)))
            .collect::<serde_json::Map<String, Value>>(),
    })
}

/// The JSON view of a trace: meta, per call and per file figures with
/// their histograms (log2 buckets as [lower bound, count], and the fine
/// slots of `trace::hist`).
pub fn value(s: &StoredTrace) -> Value {
    let t = &s.trace;
    let calls: serde_json::Map<String, Value> = t
        .calls
        .iter()
        .map(|(n, st)| (n.clone(), stats_json(st)))
        .collect();
    let files: Vec<Value> = t
        .files
        .iter()
        .map(|f| {
            let c: serde_json::Map<String, Value> = f
                .calls
                .iter()
                .map(|(n, st)| (n.clone(), stats_json(st)))
                .collect();
            json!({"path": f.path, "calls": c, "pattern": super::trace_pattern::value(f.pattern.as_ref())})
        })
        .collect();
    json!({
        "run": s.run,
        "file": s.file,
        "meta": t.meta,
        "lost": t.lost,
        "threads": t.threads,
        "calls": calls,
        "files": files,
    })
}
