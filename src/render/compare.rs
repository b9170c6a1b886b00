//! An A/B comparison shown: the table of figures with each side's spread
//! and the verdict, the header naming the sides, the JSON document, and a
//! bar chart of B relative to A. Each format picks its form in its
//! [`super::Exporter::comparison`].

use super::chart::Chart;
use super::table::{Table, fig};
use crate::analysis::compare::{ALPHA, Comparison, Row, Side};

/// The comparison as a table: figure, A mean ± sd, B mean ± sd, change, verdict.
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
    for r in &c.rows {
        t.push(vec![
            r.label.to_string(),
            fig(r.a_mean),
            fig(r.a_sd),
            fig(r.b_mean),
            fig(r.b_sd),
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
    format!(
        "A = {} ({} samples{})\nB = {} ({} samples{})\nchange = (B - A) / A; significance by Welch's t-test over the samples (p < {ALPHA})\n\n",
        a.name,
        a.samples.len(),
        runs(a),
        b.name,
        b.samples.len(),
        runs(b),
    )
}

/// The comparison as one JSON document: both sides and every row.
pub fn json(c: &Comparison) -> serde_json::Value {
    let [a, b] = &c.sides;
    let side =
        |s: &Side| serde_json::json!({"name": s.name, "runs": s.runs, "samples": s.samples.len()});
    serde_json::json!({
        "a": side(a),
        "b": side(b),
        "test": "Welch's t-test, two-sided",
        "alpha": ALPHA,
        "rows": c.rows,
    })
}

/// B as a percentage of A per figure, with each side's spread.
pub fn chart(c: &Comparison) -> Chart {
    let rows: Vec<&Row> = c.rows.iter().filter(|r| r.a_mean != 0.0).collect();
    let rel = |m: f64, r: &Row| 100.0 * m / r.a_mean.abs();
    let [a, b] = &c.sides;
    let series = |name: String, mean: fn(&Row) -> f64, sd: fn(&Row) -> f64| {
        (
            name,
            rows.iter().map(|r| rel(mean(r), r)).collect(),
            Some(rows.iter().map(|r| rel(sd(r), r)).collect()),
        )
    };
    Chart::Bars {
        title: format!("{} relative to {} (A = 100)", b.name, a.name),
        x_label: "key figure".into(),
        y_label: "% of A".into(),
        categories: rows.iter().map(|r| r.label.to_string()).collect(),
        series: vec![
            series(format!("A: {}", a.name), |r| r.a_mean, |r| r.a_sd),
            series(format!("B: {}", b.name), |r| r.b_mean, |r| r.b_sd),
        ],
    }
}
