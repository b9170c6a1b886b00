//! One key figure compared between A and B: each side's mean and spread,
//! the change in percent, Welch's t-test, and whether the difference is
//! an effect beyond noise. "Significant" needs both p < [`ALPHA`] and a
//! change of at least [`MIN_EFFECT_PCT`]: with many quiet repetitions a
//! t-test finds a 0.05% change "significant", which no one would act on.
//!
//! The rule, for every row and the verdict alike: a p-value is given
//! only with [`MIN_RUNS`] samples or more on each side and some spread.
//! Below that the row says "not tested" and why; when neither side
//! varies (counts of calls or bytes) the values are exact and no test is
//! needed. One sample has no spread to show: its sd is unknown, not 0.

use super::stats::{self, Welch};
use crate::metrics::figures::{Better, MetricDef};
use serde::Serialize;

/// Significance level.
pub const ALPHA: f64 = 0.05;

/// The smallest change called significant, in percent of A's mean.
pub const MIN_EFFECT_PCT: f64 = 1.0;

/// The fewest samples a side for a p-value: with two, the t-test's
/// spread rests on one degree of freedom a side and its p is not worth
/// quoting.
pub const MIN_RUNS: usize = 3;

/// What comparing one figure found; the row's words and the verdict's
/// both come from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every value on both sides is the same.
    Same,
    /// Fewer than [`MIN_RUNS`] samples on a side: no test.
    NotTested,
    /// Neither side varies and the means differ: exact values, no test
    /// needed.
    Exact,
    /// p < [`ALPHA`] and a change of [`MIN_EFFECT_PCT`] or more.
    Significant,
    /// p < [`ALPHA`] but a change under [`MIN_EFFECT_PCT`].
    Small,
    /// p of [`ALPHA`] or more: within noise.
    Noise,
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
    /// Standard deviation of A (None with one sample: unknown).
    pub a_sd: Option<f64>,
    /// Samples of B.
    pub n_b: usize,
    /// Mean of B.
    pub b_mean: f64,
    /// Standard deviation of B (None with one sample: unknown).
    pub b_sd: Option<f64>,
    /// (B - A) / A in percent (None when A is 0).
    pub change_pct: Option<f64>,
    /// Welch's test: None unless both sides have [`MIN_RUNS`] samples
    /// or more and some spread ([`Row::no_test_reason`] says why not).
    pub welch: Option<Welch>,
    /// Why there is no test, when there is none.
    pub no_test_reason: Option<String>,
    /// What the comparison found.
    pub outcome: Outcome,
    /// p < [`ALPHA`] and a change of at least [`MIN_EFFECT_PCT`].
    pub significant: bool,
    /// Shown without `--all`: the verdict's figure, a significant one, or
    /// (with no test made) one that changed by [`MIN_EFFECT_PCT`] or more.
    pub shown: bool,
    /// Plain-words verdict.
    pub verdict: String,
}

impl Row {
    /// Compares the samples `a` and `b` of figure `m` (neither empty).
    pub fn new(m: &'static MetricDef, a: &[f64], b: &[f64]) -> Row {
        let (am, bm) = (stats::mean(a), stats::mean(b));
        let change = (am != 0.0).then(|| (bm - am) / am.abs() * 100.0);
        let identical = a.iter().chain(b).all(|v| *v == a[0]);
        let few = a.len() < MIN_RUNS || b.len() < MIN_RUNS;
        let welch = (!identical && !few).then(|| stats::welch(a, b)).flatten();
        let large = match change {
            Some(c) => c.abs() >= MIN_EFFECT_PCT,
            None => bm != 0.0,
        };
        let (outcome, no_test_reason) = match welch {
            _ if identical => (Outcome::Same, Some("the values are the same".into())),
            _ if few => (Outcome::NotTested, Some(too_few(a.len(), b.len()))),
            None => (
                Outcome::Exact,
                Some("no spread: the values are exact, no test needed".into()),
            ),
            Some(w) if w.p >= ALPHA => (Outcome::Noise, None),
            Some(_) if large => (Outcome::Significant, None),
            Some(_) => (Outcome::Small, None),
        };
        let dir = direction(m.better, bm > am);
        let p = welch.map_or_else(String::new, |w| pfmt(w.p));
        let verdict = match outcome {
            Outcome::Same => "same".to_string(),
            Outcome::NotTested => format!("not tested: {}", too_few(a.len(), b.len())),
            Outcome::Exact if large => format!("{dir} (exact values: no spread, no test needed)"),
            Outcome::Exact => {
                format!("under {MIN_EFFECT_PCT}% change (exact values: no spread, no test needed)")
            }
            Outcome::Significant => format!("{dir}, significant ({p})"),
            Outcome::Small => format!("under {MIN_EFFECT_PCT}% change ({p})"),
            Outcome::Noise => format!("within noise ({p})"),
        };
        let significant = outcome == Outcome::Significant;
        let untested = matches!(outcome, Outcome::NotTested | Outcome::Exact);
        let sd = |x: &[f64]| (x.len() > 1).then(|| stats::stddev(x));
        Row {
            metric: m.key,
            label: m.label,
            n_a: a.len(),
            a_mean: am,
            a_sd: sd(a),
            n_b: b.len(),
            b_mean: bm,
            b_sd: sd(b),
            change_pct: change,
            welch,
            no_test_reason,
            outcome,
            significant,
            shown: significant || (untested && large),
            verdict,
        }
    }

    /// Half the width of the 95% confidence interval of A's and B's mean
    /// (Student's t; 0 for a single sample, whose spread is unknown).
    pub fn ci95(&self) -> [f64; 2] {
        [
            stats::ci95_half(self.a_sd.unwrap_or(0.0), self.n_a),
            stats::ci95_half(self.b_sd.unwrap_or(0.0), self.n_b),
        ]
    }
}

/// Why `n_a` and `n_b` samples are too few for a test: "2 runs per side,
/// 3 needed".
pub fn too_few(n_a: usize, n_b: usize) -> String {
    let runs = |n: usize| format!("{n} run{}", if n == 1 { "" } else { "s" });
    if n_a == n_b {
        format!("{} per side, {MIN_RUNS} needed", runs(n_a))
    } else {
        format!(
            "{} of A and {n_b} of B, {MIN_RUNS} needed per side",
            runs(n_a)
        )
    }
}

/// How B stands against A on a figure that is better higher, lower, or
/// neither: "B better", "B worse", "B higher", "B lower".
fn direction(better: Better, b_higher: bool) -> &'static str {
    match (better, b_higher) {
        (Better::Higher, true) | (Better::Lower, false) => "B better",
        (Better::Higher, false) | (Better::Lower, true) => "B worse",
        (Better::Neutral, true) => "B higher",
        (Better::Neutral, false) => "B lower",
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
        assert_eq!(r.outcome, Outcome::Significant);
        assert!(
            r.verdict.starts_with("B better, significant (p<0.001)"),
            "{}",
            r.verdict
        );
        let r = Row::new(
            iops,
            &[1000.0, 1001.0, 999.0, 1000.0],
            &[1003.0, 1004.0, 1002.0, 1003.0],
        );
        assert_eq!(r.outcome, Outcome::Small, "{r:?}");
        assert!(
            r.verdict.starts_with("under 1% change (p="),
            "{}",
            r.verdict
        );
        assert!(!r.significant && !r.shown);
        let r = Row::new(iops, &[100.0, 130.0, 90.0], &[110.0, 95.0, 120.0]);
        assert!(r.verdict.starts_with("within noise (p="), "{}", r.verdict);
        assert_eq!((r.outcome, r.no_test_reason), (Outcome::Noise, None));
    }

    /// Below 3 samples a side: no p-value and no "significant", however
    /// clear the difference looks; one sample has no known spread.
    #[test]
    fn too_few_samples_are_not_tested() {
        let time = metric("time_s").unwrap();
        let r = Row::new(time, &[1.0, 1.1], &[2.0, 2.1]);
        assert_eq!(
            (r.outcome, r.welch, r.significant),
            (Outcome::NotTested, None, false)
        );
        assert_eq!(r.verdict, "not tested: 2 runs per side, 3 needed");
        assert_eq!(
            r.no_test_reason.as_deref(),
            Some("2 runs per side, 3 needed")
        );
        assert!(r.shown && r.a_sd.is_some());
        let r = Row::new(time, &[1.0], &[2.0, 2.1, 2.2]);
        assert_eq!(
            r.verdict,
            "not tested: 1 run of A and 3 of B, 3 needed per side"
        );
        assert_eq!((r.a_sd, r.ci95()[0]), (None, 0.0));
        let r = Row::new(time, &[1.0], &[2.0]);
        assert_eq!((r.a_sd, r.b_sd), (None, None));
        // The same value everywhere is the same, whatever the n.
        let r = Row::new(time, &[1.0], &[1.0]);
        assert_eq!((r.outcome, r.verdict.as_str()), (Outcome::Same, "same"));
    }

    /// Neither side varies (counts): exact values, no p-value, never
    /// "significant"; the change decides whether the row is shown.
    #[test]
    fn no_spread_is_exact_not_significant() {
        let ops = metric("ops").unwrap();
        let r = Row::new(ops, &[9.0, 9.0, 9.0], &[19.0, 19.0, 19.0]);
        assert_eq!(
            (r.outcome, r.welch, r.significant),
            (Outcome::Exact, None, false)
        );
        assert_eq!(
            r.verdict,
            "B higher (exact values: no spread, no test needed)"
        );
        assert!(r.shown && r.a_sd == Some(0.0));
        let iops = metric("iops").unwrap();
        let r = Row::new(iops, &[1000.0; 3], &[1000.5; 3]);
        assert_eq!(r.outcome, Outcome::Exact);
        assert!(
            r.verdict.starts_with("under 1% change (exact values"),
            "{}",
            r.verdict
        );
        assert!(!r.shown);
        let r = Row::new(iops, &[100.0; 3], &[100.0; 3]);
        assert_eq!(
            (r.outcome, r.verdict.as_str(), r.shown),
            (Outcome::Same, "same", false)
        );
    }
}
