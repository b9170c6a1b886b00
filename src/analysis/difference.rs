//! One key figure compared between A and B: each side's mean and spread,
//! the change in percent, Welch's t-test, and whether the difference is
//! an effect beyond noise. "Significant" needs both p < [`ALPHA`] and a
//! change of at least [`MIN_EFFECT_PCT`]: with many quiet repetitions a
//! t-test finds a 0.05% change "significant", which no one would act on.

use super::stats::{self, Welch};
use crate::metrics::figures::{Better, MetricDef};
use serde::Serialize;

/// Significance level.
pub const ALPHA: f64 = 0.05;

/// The smallest change called significant, in percent of A's mean.
pub const MIN_EFFECT_PCT: f64 = 1.0;

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
    /// p < [`ALPHA`] and a change of at least [`MIN_EFFECT_PCT`].
    pub significant: bool,
    /// Shown without `--all`: the verdict's figure, a significant one, or
    /// (with no test possible) one that changed by [`MIN_EFFECT_PCT`] or more.
    pub shown: bool,
    /// Plain-words verdict.
    pub verdict: String,
}

impl Row {
    /// Compares the samples `a` and `b` of figure `m` (neither empty).
    pub fn new(m: &'static MetricDef, a: &[f64], b: &[f64]) -> Row {
        let (am, bm) = (stats::mean(a), stats::mean(b));
        let change = (am != 0.0).then(|| (bm - am) / am.abs() * 100.0);
        let welch = stats::welch(a, b);
        let identical = a.iter().chain(b).all(|v| *v == a[0]);
        let large = match change {
            Some(c) => c.abs() >= MIN_EFFECT_PCT,
            None => bm != 0.0,
        };
        let significant = welch.is_some_and(|w| w.p < ALPHA) && large;
        let verdict = match welch {
            _ if identical => "same".to_string(),
            None => "no test (needs 2+ repetitions per side)".to_string(),
            Some(w) if significant => {
                let dir = match (m.better, bm > am) {
                    (Better::Higher, true) | (Better::Lower, false) => "B better",
                    (Better::Higher, false) | (Better::Lower, true) => "B worse",
                    (Better::Neutral, true) => "B higher",
                    (Better::Neutral, false) => "B lower",
                };
                format!("{dir}, significant ({})", pfmt(w.p))
            }
            Some(w) if w.p < ALPHA => format!("under {MIN_EFFECT_PCT}% change ({})", pfmt(w.p)),
            Some(w) => format!("within noise ({})", pfmt(w.p)),
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
            significant,
            shown: significant || (welch.is_none() && large && !identical),
            verdict,
        }
    }

    /// Half the width of the 95% confidence interval of A's and B's mean
    /// (Student's t; 0 for a single sample).
    pub fn ci95(&self) -> [f64; 2] {
        [
            stats::ci95_half(self.a_sd, self.n_a),
            stats::ci95_half(self.b_sd, self.n_b),
        ]
    }
}

/// `p=0.012`, `p<0.001`.
pub fn pfmt(p: f64) -> String {
    if p < 0.001 {
        "p<0.001".into()
    } else {
        format!("p={p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::figures::metric;

    #[test]
    fn significant_needs_p_and_size() {
        let iops = metric("iops").unwrap();
        let r = Row::new(
            iops,
            &[101.2, 99.8, 100.5, 100.9, 99.6],
            &[104.1, 103.2, 105.0, 103.8, 104.4],
        );
        assert!(r.significant && r.shown);
        assert!(
            r.verdict.starts_with("B better, significant"),
            "{}",
            r.verdict
        );
        // A 0.01% change without spread: p = 0, but not an effect.
        let r = Row::new(iops, &[1000.0, 1000.0], &[1000.1, 1000.1]);
        assert_eq!(r.welch.unwrap().p, 0.0);
        assert!(!r.significant && !r.shown, "{r:?}");
        assert!(r.verdict.starts_with("under 1% change"), "{}", r.verdict);
        let r = Row::new(iops, &[100.0, 130.0, 90.0], &[110.0, 95.0, 120.0]);
        assert!(r.verdict.starts_with("within noise"), "{}", r.verdict);
        let r = Row::new(iops, &[100.0], &[200.0]);
        assert!(r.verdict.starts_with("no test") && r.shown && !r.significant);
        let r = Row::new(iops, &[100.0, 100.0], &[100.0, 100.0]);
        assert_eq!(r.verdict, "same");
        assert!(!r.shown);
    }
}
