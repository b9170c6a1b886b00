//! The one line a comparison comes to, in hyperfine's words: "B ran
//! 1.23 ± 0.04 times faster than A", on one declared figure (the
//! headline), with that figure's own judgement: the same words, p-value
//! and samples as its row of the table, from the same [`Outcome`].
//!
//! The headline figure: the run time when both sides did a fixed amount
//! of work and the same bytes (the one that finishes sooner is faster);
//! the bandwidth when either side is `time_based` or the two moved
//! different bytes (then the time says nothing); IOPS when there is no
//! bandwidth; always the time for tree runs and for commands run by
//! `exec` (what a command reads is not the work it was asked to do).
//!
//! The ratio is the larger mean over the smaller; its ± is hyperfine's
//! error propagation for a ratio of independent means:
//! `r · sqrt((sd_a / mean_a)² + (sd_b / mean_b)²)`, unknown (and not
//! shown) when a side has one sample, and not shown when neither varies.

use super::difference::{MIN_EFFECT_PCT, Outcome, Row, pfmt};
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
    /// The ratio's standard deviation (error propagation); None when a
    /// side has one sample (its spread is unknown).
    pub ratio_sd: Option<f64>,
    /// Welch's p-value of the figure's row (None when it has no test).
    pub p: Option<f64>,
    /// Why there is no p-value, when there is none (the row's reason).
    pub no_test_reason: Option<String>,
    /// What the comparison of the figure found (the row's outcome).
    pub outcome: Outcome,
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
    /// Commands run by `exec`: the time, whatever they read.
    pub const COMMAND: &str = "commands: run time";
}

/// What the sides ran, which decides the headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Jobs (fio's workloads); `time_based` when either side is.
    Jobs {
        /// Either side ran for a set time.
        time_based: bool,
    },
    /// A tree command on either side.
    Tree,
    /// Commands run by `exec` on either side.
    Commands,
}

/// The headline figure of `rows` and the reason, given what the sides ran.
pub fn headline(rows: &[Row], work: Work) -> Option<(&Row, &'static str)> {
    let row = |k: &str| rows.iter().find(|r| r.metric == k);
    let same_bytes = row("bytes").is_some_and(|r| {
        r.change_pct
            .is_some_and(|c| c.abs() < MIN_EFFECT_PCT / 10.0)
    });
    let time = row("time_s").filter(|r| r.a_mean > 0.0 && r.b_mean > 0.0);
    let rate = |k: &str| row(k).filter(|r| r.a_mean > 0.0 && r.b_mean > 0.0);
    let time_based = match work {
        Work::Tree => return time.map(|r| (r, basis::TIME)),
        Work::Commands => return time.map(|r| (r, basis::COMMAND)),
        Work::Jobs { time_based } => time_based,
    };
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

/// `2.00 ± 0.22 times`; the ratio alone when its spread is unknown or
/// nil; a spread that rounds to 0.00 is `± <0.01`.
fn speed(ratio: f64, sd: Option<f64>) -> String {
    match sd {
        Some(sd) if sd >= 0.005 => format!("{ratio:.2} ± {sd:.2} times"),
        Some(sd) if sd > 0.0 => format!("{ratio:.2} ± <0.01 times"),
        _ => format!("{ratio:.2} times"),
    }
}

impl Verdict {
    /// The verdict on `row` (a figure with a direction: time or a rate),
    /// in the words of its outcome.
    pub fn new(row: &Row, basis: &'static str, better: Better) -> Verdict {
        let (a, b) = (row.a_mean, row.b_mean);
        let ratio = a.max(b) / a.min(b);
        let ratio_sd = match (row.a_sd, row.b_sd) {
            (Some(sa), Some(sb)) => Some(ratio * ((sa / a).powi(2) + (sb / b).powi(2)).sqrt()),
            _ => None,
        };
        let faster = match (a == b, (b > a) == (better == Better::Higher)) {
            (true, _) => Faster::Neither,
            (false, true) => Faster::B,
            (false, false) => Faster::A,
        };
        let p = row.welch.map(|w| w.p);
        // The row's judgement, then what it rests on.
        let reason = row.no_test_reason.clone().unwrap_or_default();
        let (judged, rests) = match row.outcome {
            Outcome::Significant => (", significant".to_string(), String::new()),
            Outcome::Small => (format!(", under {MIN_EFFECT_PCT}% change"), String::new()),
            Outcome::Noise => (", within noise".to_string(), String::new()),
            Outcome::NotTested => (format!(", not tested: {reason}"), String::new()),
            Outcome::Exact => (
                String::new(),
                "exact values: no spread, no test needed; ".into(),
            ),
            Outcome::Same => (String::new(), "the same values; ".into()),
        };
        let unknown = if ratio_sd.is_none() {
            "spread unknown; "
        } else {
            ""
        };
        let p_text = p.map_or_else(String::new, |p| format!("{}; ", pfmt(p)));
        let tail = format!("({rests}{unknown}{p_text}n = {} A, {} B)", row.n_a, row.n_b);
        let text = match faster {
            Faster::Neither => format!("B ran as fast as A{judged} {tail}"),
            _ => {
                let word = if faster == Faster::B {
                    "faster"
                } else {
                    "slower"
                };
                format!(
                    "B ran {} {word} than A{judged} {tail}",
                    speed(ratio, ratio_sd)
                )
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
            no_test_reason: row.no_test_reason.clone(),
            outcome: row.outcome,
            n_a: row.n_a,
            n_b: row.n_b,
            significant: row.significant,
            text,
        }
    }

    /// The line as printed: `verdict on time (s): B ran ...`, naming the
    /// figure it is on.
    pub fn line(&self) -> String {
        format!("verdict on {}: {}", self.label, self.text)
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
        let jobs = |time_based| Work::Jobs { time_based };
        let same = rows(100.0);
        assert_eq!(headline(&same, jobs(false)).unwrap().0.metric, "time_s");
        assert_eq!(headline(&same, jobs(true)).unwrap().0.metric, "bw_mib_s");
        assert_eq!(headline(&same, Work::Tree).unwrap().0.metric, "time_s");
        let more = rows(200.0);
        let (r, why) = headline(&more, jobs(false)).unwrap();
        assert_eq!((r.metric, why), ("bw_mib_s", basis::RATE));
        // Commands that read different bytes: still their time.
        let (r, why) = headline(&more, Work::Commands).unwrap();
        assert_eq!((r.metric, why), ("time_s", basis::COMMAND));
        let no_bw = &more[..2];
        assert_eq!(headline(no_bw, jobs(true)).unwrap().0.metric, "time_s");
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
        assert!((v.ratio_sd.unwrap() - want).abs() < 1e-12, "{v:?}");
        // The row: "B better, significant (p=...)"; the verdict alike.
        let p = pfmt(r.welch.unwrap().p);
        assert!(
            r.verdict.ends_with(&format!("significant ({p})")),
            "{}",
            r.verdict
        );
        assert_eq!(
            v.text,
            format!("B ran 2.00 ± 0.22 times faster than A, significant ({p}; n = 3 A, 3 B)")
        );
        assert_eq!((v.outcome, v.significant), (Outcome::Significant, true));
        assert!(
            v.line().starts_with("verdict on time (s): B ran"),
            "{}",
            v.line()
        );
        let bw = metric("bw_mib_s").unwrap();
        let r = Row::new(bw, &[100.0, 101.0, 99.0], &[100.5, 99.5, 100.3]);
        let v = Verdict::new(&r, basis::RATE, bw.better);
        assert!(
            v.text.contains(", within noise (p=") && !v.significant,
            "{}",
            v.text
        );
        assert!(r.verdict.starts_with("within noise (p="), "{}", r.verdict);
    }

    /// Bandwidth: higher is faster. Exact values: the ratio alone, no
    /// "± 0.00", no p-value.
    #[test]
    fn no_spread_no_plus_minus_zero() {
        let bw = metric("bw_mib_s").unwrap();
        let r = Row::new(bw, &[100.0; 3], &[50.0; 3]);
        let v = Verdict::new(&r, basis::RATE, bw.better);
        assert_eq!(v.faster, Faster::A);
        assert_eq!(
            v.text,
            "B ran 2.00 times slower than A (exact values: no spread, no test needed; n = 3 A, 3 B)"
        );
        assert_eq!((v.p, v.ratio_sd, v.significant), (None, Some(0.0), false));
    }

    /// Two runs a side: the ratio with its spread, no p-value, and why;
    /// one run a side: the ratio alone, its spread unknown.
    #[test]
    fn below_three_runs_no_test() {
        let time = metric("time_s").unwrap();
        let r = Row::new(time, &[0.002, 0.003], &[0.016, 0.017]);
        let v = Verdict::new(&r, basis::COMMAND, time.better);
        assert!(
            v.text.starts_with("B ran 6.60 ± ")
                && v.text.ends_with(
                    " times slower than A, not tested: 2 runs per side, 3 needed (n = 2 A, 2 B)"
                ),
            "{}",
            v.text
        );
        assert_eq!(
            v.no_test_reason.as_deref(),
            Some("2 runs per side, 3 needed")
        );
        assert_eq!((v.p, v.significant), (None, false));
        let r = Row::new(time, &[0.0046], &[0.0116]);
        let v = Verdict::new(&r, basis::COMMAND, time.better);
        assert_eq!(
            v.text,
            "B ran 2.52 times slower than A, not tested: 1 run per side, 3 needed \
             (spread unknown; n = 1 A, 1 B)"
        );
        assert_eq!(v.ratio_sd, None);
        assert_eq!(speed(1.5, Some(0.001)), "1.50 ± <0.01 times");
    }
}
