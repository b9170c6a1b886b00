//! A/B comparison over repetitions: per key figure the mean and spread of
//! each side, the change from A to B in percent, and Welch's t-test of
//! whether the difference is more than noise (seed 003's before/after
//! tables, with the statistics the seed did not have).

use crate::render::table::{Table, fig};
use crate::analysis::stats::{self, Welch};
use crate::analysis::summary::{Better, Figures, METRICS, MetricDef};
use serde::Serialize;

/// Significance level for "significant".
pub const ALPHA: f64 = 0.05;

/// One side of a comparison: its samples (one per repetition).
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// What the user called it (run id, label, job file).
    pub name: String,
    /// Stored runs it consists of.
    pub runs: Vec<i64>,
    /// Key figures of each repetition.
    pub samples: Vec<Figures>,
}

/// One key figure compared.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Key of the figure.
    pub metric: &'static str,
    /// Column heading of the figure.
    pub label: &'static str,
    /// Samples of A.
    pub n_a: usize,
    /// Mean of A.
    pub a_mean: f64,
    /// Standard deviation of A.
    pub a_sd: f64,
    /// Samples of B.
    pub n_b: usize,
    /// Mean of B.
    pub b_mean: f64,
    /// Standard deviation of B.
    pub b_sd: f64,
    /// (B - A) / A in percent (None when A is 0).
    pub change_pct: Option<f64>,
    /// Welch's test, when both sides have two samples or more.
    pub welch: Option<Welch>,
    /// Plain-words verdict.
    pub verdict: String,
}

/// Compares every key figure both sides have.
pub fn compare(a: &Side, b: &Side) -> Vec<Row> {
    METRICS
        .iter()
        .filter_map(|m| {
            let xa = samples(a, m.key);
            let xb = samples(b, m.key);
            (!xa.is_empty() && !xb.is_empty()).then(|| row(m, &xa, &xb))
        })
        .collect()
}

fn samples(s: &Side, key: &str) -> Vec<f64> {
    s.samples
        .iter()
        .filter_map(|f| f.get(key).copied())
        .collect()
}

fn row(m: &'static MetricDef, a: &[f64], b: &[f64]) -> Row {
    let (am, bm) = (stats::mean(a), stats::mean(b));
    let change = (am != 0.0).then(|| (bm - am) / am.abs() * 100.0);
    let welch = stats::welch(a, b);
    let identical = a.iter().chain(b).all(|v| *v == a[0]);
    let verdict = match welch {
        _ if identical => "same".to_string(),
        None => "no test (needs 2+ repetitions per side)".to_string(),
        Some(w) if w.p < ALPHA => {
            let dir = match (m.better, bm > am) {
                (Better::Higher, true) | (Better::Lower, false) => "B better",
                (Better::Higher, false) | (Better::Lower, true) => "B worse",
                (Better::Neutral, true) => "B higher",
                (Better::Neutral, false) => "B lower",
            };
            format!("{dir}, significant ({})", pfmt(w.p))
        }
        Some(w) => format!("not significant ({})", pfmt(w.p)),
    };
    Row {
        metric: m.key,
        label: m.label,
        n_a: a.len(),
        a_mean: am,
        a_sd: stats::stddev(a),
        n_b: b.len(),
        b_mean: bm,
        b_sd: stats::stddev(b),
        change_pct: change,
        welch,
        verdict,
    }
}

/// `p=0.012`, `p<0.001`.
fn pfmt(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, iops: &[f64]) -> Side {
        Side {
            name: name.into(),
            runs: vec![],
            samples: iops
                .iter()
                .map(|v| Figures::from([("iops".to_string(), *v), ("time_s".to_string(), 1.0)]))
                .collect(),
        }
    }

    #[test]
    fn verdicts() {
        let a = side("a", &[101.2, 99.8, 100.5, 100.9, 99.6]);
        let b = side("b", &[104.1, 103.2, 105.0, 103.8, 104.4]);
        let rows = compare(&a, &b);
        let iops = rows.iter().find(|r| r.metric == "iops").unwrap();
        assert!(
            iops.verdict.starts_with("B better, significant"),
            "{}",
            iops.verdict
        );
        assert!((iops.change_pct.unwrap() - 3.7 / 100.4 * 100.0).abs() < 1e-9);
        let time = rows.iter().find(|r| r.metric == "time_s").unwrap();
        assert_eq!(time.verdict, "same");
        let one = compare(&side("a", &[1.0]), &side("b", &[2.0]));
        let iops = one.iter().find(|r| r.metric == "iops").unwrap();
        assert!(iops.verdict.starts_with("no test"), "{}", iops.verdict);
    }
}
