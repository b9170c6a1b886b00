//! A replay shown: per call the recorded and replayed latencies side by
//! side, the op counts and IOPS of both, the schedule lag as a log2
//! histogram and the calls skipped; and the same as JSON.

use super::log2;
use super::table::Table;
use crate::metrics::format::bytes_iec;
use crate::trace::model::Stats;
use crate::trace::replay::{ReplayResult, Span, Speed};
use serde_json::{Value, json};
use std::fmt::Write;

fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1000.0)
}

fn mean(s: &Stats) -> f64 {
    s.sum_ns as f64 / s.count.max(1) as f64
}

/// Replay IOPS over recorded IOPS (0 when either is 0).
fn ratio(r: &ReplayResult) -> f64 {
    let (o, p) = (r.original.iops(), r.replayed.iops());
    if o > 0.0 && p > 0.0 { p / o } else { 0.0 }
}

/// The text view of a replay.
pub fn text(r: &ReplayResult) -> String {
    let mut out = String::new();
    let what = if r.command.is_empty() {
        "an attached process".to_string()
    } else {
        r.command.join(" ")
    };
    let _ = writeln!(
        out,
        "replay of {what}: speed {}, {} threads, in {} ({})",
        r.speed,
        r.threads,
        r.dir.display(),
        if r.kept {
            "copies kept"
        } else {
            "copies removed"
        }
    );
    let m = &r.made;
    let _ = writeln!(
        out,
        "scratch tree: {} files copied ({}), {} made at the size the trace needs, {} named only, {} left for the replay to create, {} directories",
        m.copied,
        bytes_iec(m.copied_bytes as f64),
        m.filled,
        m.named_only,
        m.created_by_replay,
        m.dirs
    );
    let mut tab = Table::new([
        "call",
        "count",
        "replayed",
        "orig p50 us",
        "orig p99 us",
        "orig mean us",
        "replay p50 us",
        "replay p99 us",
        "replay mean us",
    ]);
    let mut calls: Vec<_> = r.calls.iter().collect();
    calls.sort_by(|a, b| {
        b.1.original
            .count
            .cmp(&a.1.original.count)
            .then(a.0.cmp(b.0))
    });
    for (name, c) in &calls {
        let (o, p) = (&c.original, &c.replayed);
        let mut row = vec![name.to_string(), o.count.to_string(), p.count.to_string()];
        for s in [o, p] {
            if s.count == 0 {
                row.extend([String::new(), String::new(), String::new()]);
            } else {
                row.push(us(s.lat.percentile(50.0) as f64));
                row.push(us(s.lat.percentile(99.0) as f64));
                row.push(us(mean(s)));
            }
        }
        tab.push(row);
    }
    out.push('\n');
    out.push_str(&tab.text());
    let _ = writeln!(
        out,
        "\nops: {} replayed in {:.3} s, {:.0} IOPS; original {} in {:.3} s, {:.0} IOPS; replay/original {:.3}",
        r.replayed.ops,
        r.replayed.secs(),
        r.replayed.iops(),
        r.original.ops,
        r.original.secs(),
        r.original.iops(),
        ratio(r)
    );
    if r.speed != Speed::Max && r.lag.count() > 0 {
        out.push('\n');
        out.push_str(&log2::buckets("schedule lag (ns)", &r.lag.log2()));
        let _ = writeln!(
            out,
            "  lag p50 {} us, p99 {} us",
            us(r.lag.percentile(50.0) as f64),
            us(r.lag.percentile(99.0) as f64)
        );
    }
    if !r.skipped.is_empty() {
        let mut sk = Table::new(["skipped call", "count", "why"]);
        for s in &r.skipped {
            sk.push(vec![s.call.clone(), s.count.to_string(), s.why.clone()]);
        }
        out.push('\n');
        out.push_str(&sk.text());
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn stats_json(s: &Stats, span: &Span) -> Value {
    json!({
        "count": s.count,
        "errors": s.errors,
        "bytes": s.bytes,
        "mean_ns": mean(s),
        "p50_ns": s.lat.percentile(50.0),
        "p99_ns": s.lat.percentile(99.0),
        "iops": span.iops(),
        "latency_log2_ns": s.lat.log2().iter().map(|(v, n)| json!([v, n])).collect::<Vec<_>>(),
    })
}

fn span_json(s: &Span) -> Value {
    json!({"ops": s.ops, "time_s": s.secs(), "iops": s.iops()})
}

/// The JSON view of a replay.
pub fn value(r: &ReplayResult) -> Value {
    let calls: serde_json::Map<String, Value> = r
        .calls
        .iter()
        .map(|(n, c)| {
            (
                n.clone(),
                json!({
                    "original": stats_json(&c.original, &c.original_span),
                    "replayed": stats_json(&c.replayed, &c.replayed_span),
                }),
            )
        })
        .collect();
    let lag = (r.speed != Speed::Max).then(|| {
        json!({
            "count": r.lag.count(),
            "p50_ns": r.lag.percentile(50.0),
            "p99_ns": r.lag.percentile(99.0),
            "log2_ns": r.lag.log2().iter().map(|(v, n)| json!([v, n])).collect::<Vec<_>>(),
        })
    });
    json!({
        "command": r.command,
        "speed": r.speed.to_string(),
        "threads": r.threads,
        "dir": r.dir,
        "kept": r.kept,
        "made": r.made,
        "calls": calls,
        "original": span_json(&r.original),
        "replayed": span_json(&r.replayed),
        "iops_ratio": ratio(r),
        "lag": lag,
        "skipped": r.skipped,
        "notes": r.notes,
        "stopped": r.stopped,
    })
}
