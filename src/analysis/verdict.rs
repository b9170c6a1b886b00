//! The one line a comparison comes to, in hyperfine's words: "B ran
//! 1.23 ± 0.04 times faster than A", on the headline figure, with the
//! p-value and the samples of each side.
//!
//! The headline figure: the run time when both sides did a fixed amount
//! of work and the same bytes (the one that finishes sooner is faster);
//! the bandwidth when either side is `time_based` or the two moved
//! different bytes (then the time says nothing); IOPS when there is no
//! bandwidth, and the time for tree runs.
//!
//! The ratio is the larger mean over the smaller; its ± is hyperfine's
//! error propagation for a ratio of independent means:
//! `r · sqrt((sd_a / mean_a)² + (sd_b / mean_b)²)`.

use super::difference::{MIN_EFFECT_PCT, Row, pfmt};
use crate::metrics::figures::Better;
use serde::Serialize;

/// Which side ran faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Faster {
    /// A.
    A,
    /// B.
    B,
    /// Neither: equal means.
    Neither,
}

/// The verdict of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The headline figure's key.
    pub metric: &'static str,
    /// Its heading.
    pub label: &'static str,
    /// Why that figure.
    pub basis: &'static str,
    /// Which side ran faster.
    pub faster: Faster,
    /// How many times faster (the larger mean over the smaller; ≥ 1).
    pub ratio: f64,
    /// The ratio's standard deviation (error propagation).
    pub ratio_sd: f64,
    /// Welch's p-value, when both sides have two samples or more.
    pub p: Option<f64>,
    /// Samples of A.
    pub n_a: usize,
    /// Samples of B.
    pub n_b: usize,
    /// The difference is an effect beyond noise (see [`Row::significant`]).
    pub significant: bool,
    /// The sentence.
    pub text: String,
}

/// Why the headline figure was chosen.
pub mod basis {
    /// Fixed work, same bytes: the time.
    pub const SAME_WORK: &str = "fixed work, same bytes: run time";
    /// `time_based` or different bytes: the bandwidth.
    pub const RATE: &str = "time-based or different work: bandwidth";
    /// No bandwidth: the IOPS.
    pub const IOPS: &str = "no bandwidth: IOPS";
    /// A tree command, or nothing else measured: the time.
    pub const TIME: &str = "run time";
}

/// The headline figure of `rows` and the reason, given whether either
/// side ran `time_based` or is a tree command.
pub fn headline(rows: &[Row], time_based: bool, tree: bool) -> Option<(&Row, &'static str)> {
    let row = |k: &str| rows.iter().find(|r| r.metric == k);
    let same_bytes = row("bytes").is_some_and(|r| {
        r.change_pct
            .is_some_and(|c| c.abs() < MIN_EFFECT_PCT / 10.0)
    });
    let time = row("time_s").filter(|r| r.a_mean > 0.0 && r.b_mean > 0.0);
    let rate = |k: &str| row(k).filter(|r| r.a_mean > 0.0 && r.b_mean > 0.0);
    if tree {
        return time.map(|r| (r, basis::TIME));
    }
    if !time_based
        && same_bytes
        && let Some(t) = time
    {
        return Some((t, basis::SAME_WORK));
    }
    rate("bw_mib_s")
        .map(|r| (r, basis::RATE))
        .or_else(|| rate("iops").map(|r| (r, basis::IOPS)))
        .or_else(|| time.map(|r| (r, basis::TIME)))
}

impl Verdict {
    /// The verdict on `row` (a figure with a direction: time or a rate).
    pub fn new(row: &Row, basis: &'static str, better: Better) -> Verdict {
        let (a, b) = (row.a_mean, row.b_mean);
        let ratio = a.max(b) / a.min(b);
        let rel = |sd: f64, m: f64| (sd / m).powi(2);
        let ratio_sd = ratio * (rel(row.a_sd, a) + rel(row.b_sd, b)).sqrt();
        let faster = match (a == b, (b > a) == (better == Better::Higher)) {
            (true, _) => Faster::Neither,
            (false, true) => Faster::B,
            (false, false) => Faster::A,
        };
        let p = row.welch.map(|w| w.p);
        let tail = format!(
            "({}{}; n = {} A, {} B)",
            row.label,
            p.map_or_else(
                || ", no test: needs 2+ runs per side".into(),
                |p| format!(", {}", pfmt(p))
            ),
            row.n_a,
            row.n_b
        );
        let speed = format!("{ratio:.2} ± {ratio_sd:.2} times");
        let text = match faster {
            Faster::Neither => {
                format!("B ran as fast as A: ratio {ratio:.2} ± {ratio_sd:.2} {tail}")
            }
            _ => {
                let word = if faster == Faster::B {
                    "faster"
                } else {
                    "slower"
                };
                let noise = if row.significant || p.is_none() {
                    ""
                } else {
                    ", within noise"
                };
                format!("B ran {speed} {word} than A{noise} {tail}")
            }
        };
        Verdict {
            metric: row.metric,
            label: row.label,
            basis,
            faster,
            ratio,
            ratio_sd,
            p,
            n_a: row.n_a,
            n_b: row.n_b,
            significant: row.significant,
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::figures::metric;

    #[test]
    fn headline_figure() {
        let m = |k| metric(k).unwrap();
        let rows = |bytes_b: f64| {
            vec![
                Row::new(m("time_s"), &[2.0, 2.0], &[1.0, 1.0]),
                Row::new(m("bytes"), &[100.0, 100.0], &[bytes_b, bytes_b]),
                Row::new(m("bw_mib_s"), &[50.0, 50.0], &[100.0, 100.0]),
            ]
        };
        let same = rows(100.0);
        assert_eq!(headline(&same, false, false).unwrap().0.metric, "time_s");
        assert_eq!(headline(&same, true, false).unwrap().0.metric, "bw_mib_s");
        assert_eq!(headline(&same, false, true).unwrap().0.metric, "time_s");
        let more = rows(200.0);
        let (r, why) = headline(&more, false, false).unwrap();
        assert_eq!((r.metric, why), ("bw_mib_s", basis::RATE));
        let no_bw = &more[..2];
        assert_eq!(headline(no_bw, true, false).unwrap().0.metric, "time_s");
    }

    #[test]
    fn hyperfine_ratio_and_words() {
        let time = metric("time_s").unwrap();
        // A takes 2 s, B 1 s: B ran 2 times faster.
        let r = Row::new(time, &[1.9, 2.0, 2.1], &[0.9, 1.0, 1.1]);
        let v = Verdict::new(&r, basis::SAME_WORK, time.better);
        assert_eq!(v.faster, Faster::B);
        assert!((v.ratio - 2.0).abs() < 1e-12);
        // 2 · sqrt((0.1/2)² + (0.1/1)²)
        let want = 2.0 * (0.05f64.powi(2) + 0.1f64.powi(2)).sqrt();
        assert!((v.ratio_sd - want).abs() < 1e-12, "{}", v.ratio_sd);
        assert!(
            v.text
                .starts_with("B ran 2.00 ± 0.22 times faster than A (time (s), p"),
            "{}",
            v.text
        );
        assert!(v.text.ends_with("n = 3 A, 3 B)"), "{}", v.text);
        // Bandwidth: higher is faster; B at half the rate ran slower.
        let bw = metric("bw_mib_s").unwrap();
        let r = Row::new(bw, &[100.0, 100.0], &[50.0, 50.0]);
        let v = Verdict::new(&r, basis::RATE, bw.better);
        assert_eq!(v.faster, Faster::A);
        assert!(
            v.text.starts_with("B ran 2.00 ± 0.00 times slower than A"),
            "{}",
            v.text
        );
        let r = Row::new(bw, &[100.0, 101.0, 99.0], &[100.5, 99.5, 100.3]);
        let v = Verdict::new(&r, basis::RATE, bw.better);
        assert!(
            v.text.contains("within noise") && !v.significant,
            "{}",
            v.text
        );
    }
}
