//! An A/B comparison shown: the header naming the sides, the table of the
//! figures that matter (every one with `--all`) with each side's spread,
//! the verdict line, the environment fields that differ between A and B,
//! and the JSON document. Each format picks its form in its
//! [`super::Exporter::comparison`]; the picture is in
//! [`super::compare_plot`].

use super::table::{Table, fig};
use crate::analysis::compare::{ALPHA, Comparison, MIN_EFFECT_PCT, MIN_RUNS, Side};

/// The comparison as a table: figure, A mean ± sd, B mean ± sd, change,
/// verdict; the rows [`Comparison::shown_rows`]. A side of one sample has
/// no known spread: its sd is `-`, never 0.
pub fn table(c: &Comparison) -> Table {
    let [a, b] = &c.sides;
    let mut t = Table::new([
        "metric".to_string(),
        format!("A: {}", a.name),
        "A ±sd".into(),
        format!("B: {}", b.name),
        "B ±sd".into(),
        "change".into(),
        "verdict".into(),
    ]);
    for r in c.shown_rows() {
        t.push(vec![
            r.label.to_string(),
            fig(r.a_mean),
            r.a_sd.map_or_else(|| "-".into(), fig),
            fig(r.b_mean),
            r.b_sd.map_or_else(|| "-".into(), fig),
            r.change_pct
                .map_or_else(|| "-".into(), |c| format!("{c:+.1}%")),
            r.verdict.clone(),
        ]);
    }
    t
}

/// The lines above the table: what A and B are and how they are compared.
pub fn header(c: &Comparison) -> String {
    let [a, b] = &c.sides;
    let runs = |s: &Side| {
        if s.runs.is_empty() {
            return String::new();
        }
        let ids: Vec<String> = s.runs.iter().map(|r| r.to_string()).collect();
        format!(", runs {}", ids.join(","))
    };
    let samples = |s: &Side| match s.samples.len() {
        1 => "1 sample, spread unknown".to_string(),
        n => format!("{n} samples"),
    };
    format!(
        "A = {} ({}{})\nB = {} ({}{})\nchange = (B - A) / A; significant: Welch's t-test p < {ALPHA} and a change of {MIN_EFFECT_PCT}% or more; \
         tested with {MIN_RUNS}+ samples a side that vary\n\n",
        a.name,
        samples(a),
        runs(a),
        b.name,
        samples(b),
        runs(b),
    )
}

/// Traces compared call by call: count and latency of each call in A and
/// B (the figures of the traces, no test).
pub fn calls_table(c: &Comparison) -> Table {
    let mut t = Table::new([
        "call", "count A", "count B", "change", "p50 us A", "p50 us B", "p99 us A", "p99 us B",
    ]);
    for r in &c.calls {
        t.push(vec![
            r.call.clone(),
            fig(r.a.count),
            fig(r.b.count),
            r.count_change_pct
                .map_or_else(|| "-".into(), |c| format!("{c:+.1}%")),
            fig(r.a.p50_ns as f64 / 1000.0),
            fig(r.b.p50_ns as f64 / 1000.0),
            fig(r.a.p99_ns as f64 / 1000.0),
            fig(r.b.p99_ns as f64 / 1000.0),
        ]);
    }
    t
}

/// The lines under the table: how many rows are hidden, the verdict, the
/// sides pooled despite different workloads, the environment diff, and
/// the traces' calls side by side (`calls`: that table, as text).
pub fn footer(c: &Comparison, calls: &str) -> String {
    let mut out = String::new();
    let hidden = c.rows.len() - c.shown_rows().count();
    if hidden > 0 {
        out += &format!(
            "({hidden} more figure{} not significant or changed under {MIN_EFFECT_PCT}%; --all shows every row)\n",
            if hidden == 1 { "" } else { "s" }
        );
    }
    if let Some(v) = &c.verdict {
        out += &format!("\n{}\n", v.line());
    }
    for (side, fields) in ["A", "B"].iter().zip(&c.pooled) {
        if !fields.is_empty() {
            let f: Vec<String> = fields.iter().map(|d| d.to_string()).collect();
            out += &format!(
                "\nnote: side {side} pools different workloads (--force): {}\n",
                f.join("; ")
            );
        }
    }
    if !c.calls.is_empty() {
        out += "\nper call (the traces' own figures; counts per trace, no test):\n";
        out += calls;
    }
    if !c.env_diff.is_empty() {
        out += "\nenvironment differs between A and B:\n";
        let width = c.env_diff.iter().map(|d| d.field.len()).max().unwrap_or(0);
        for d in &c.env_diff {
            out += &format!("  {:width$}  A: {}\n", d.field, d.a.join(" | "));
            out += &format!("  {:width$}  B: {}\n", "", d.b.join(" | "));
        }
    }
    out
}

/// The comparison as one JSON document: both sides (with any workload
/// fields their runs differ in), the verdict, the environment diff and
/// every row (each says whether it is significant and shown by default;
/// without a test, its `welch` and the verdict's `p` are null and
/// `no_test_reason` says why).
pub fn json(c: &Comparison) -> serde_json::Value {
    let [a, b] = &c.sides;
    let side = |s: &Side, pooled: &[crate::analysis::fingerprint::FieldDiff]| {
        let mixed: Vec<serde_json::Value> = pooled
            .iter()
            .map(|d| {
                serde_json::json!({
                    "field": d.field,
                    "values": d.values.iter().map(|(v, ids)| serde_json::json!({
                        "value": v, "runs": ids
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({
            "name": s.name,
            "runs": s.runs,
            "samples": s.samples.len(),
            "workload": s.members.first().map(|m| &m.fingerprint),
            "mixed_workloads": mixed,
        })
    };
    serde_json::json!({
        "a": side(a, &c.pooled[0]),
        "b": side(b, &c.pooled[1]),
        "test": "Welch's t-test, two-sided",
        "alpha": ALPHA,
        "min_effect_pct": MIN_EFFECT_PCT,
        "min_runs": MIN_RUNS,
        "verdict": c.verdict,
        "environment_diff": c.env_diff,
        "rows": c.rows,
        "calls": c.calls,
    })
}
