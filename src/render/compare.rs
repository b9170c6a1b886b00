//! An A/B comparison shown: the table of figures with each side's spread
//! and the verdict, as text (with a header naming the sides), CSV or JSON,
//! and a bar chart of B relative to A.

use super::chart::Chart;
use super::table::{Table, fig};
use crate::analysis::compare::{ALPHA, Comparison, Row, Side};

/// The comparison as a table: figure, A mean ± sd, B mean ± sd, change, verdict.
pub fn table(rows: &[Row], a: &Side, b: &Side) -> Table {
    let mut t = Table::new([
        "metric".to_string(),
        format!("A: {}", a.name),
        "A ±sd".into(),
        format!("B: {}", b.name),
        "B ±sd".into(),
        "change".into(),
        "verdict".into(),
    ]);
    for r in rows {
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

/// The whole comparison in the output format `format`: JSON a document
/// with both sides and every row, CSV the table alone, the others a header
/// naming the sides above the table.
pub fn render(c: &Comparison, format: &str) -> crate::Result<String> {
    let [a, b] = &c.sides;
    let t = table(&c.rows, a, b);
    Ok(match super::format(format)?.name {
        "json" | "json+" => {
            let side = |s: &Side| serde_json::json!({"name": s.name, "runs": s.runs, "samples": s.samples.len()});
            let v = serde_json::json!({
                "a": side(a),
                "b": side(b),
                "test": "Welch's t-test, two-sided",
                "alpha": ALPHA,
                "rows": c.rows,
            });
            super::json::pretty(&v)
        }
        "csv" => super::table(&t, format)?,
        _ => {
            let runs = |s: &Side| {
                if s.runs.is_empty() {
                    return String::new();
                }
                let ids: Vec<String> = s.runs.iter().map(|r| r.to_string()).collect();
                format!(", runs {}", ids.join(","))
            };
            let head = format!(
                "A = {} ({} samples{})\nB = {} ({} samples{})\nchange = (B - A) / A; significance by Welch's t-test over the samples (p < {ALPHA})\n\n",
                a.name,
                a.samples.len(),
                runs(a),
                b.name,
                b.samples.len(),
                runs(b),
            );
            head + &super::table(&t, format)?
        }
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
