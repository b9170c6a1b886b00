//! The sentence of log-scan's injected part, written only from differences
//! that are significant: Welch's t-test of the passes of two configurations,
//! with at least [`MIN_SAMPLES`] passes a side and p < [`ALPHA`]. One pass
//! a side once ranked buffered and O_DIRECT in opposite orders in two runs
//! of the same command; a test over several passes does not.

use crate::analysis::stats::{mean, stddev, welch};
use crate::render::table::fig;

/// Fewest passes a side before a difference is named.
pub const MIN_SAMPLES: usize = 3;
/// The significance level.
pub const ALPHA: f64 = 0.05;

/// The MiB/s of the passes of one configuration (one per repetition).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Passes {
    /// First passes, after eviction.
    pub cold: Vec<f64>,
    /// Second passes, with what the first left cached.
    pub warm: Vec<f64>,
}

/// Which of two sets of passes is faster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// The first, with this p-value.
    First(f64),
    /// The second, with this p-value.
    Second(f64),
    /// Neither significantly (the p-value, when there were enough passes).
    Neither(Option<f64>),
}

/// Welch's test of `a` against `b`: a side is named faster only with
/// p < [`ALPHA`] and at least [`MIN_SAMPLES`] passes on each side.
pub fn verdict(a: &[f64], b: &[f64]) -> Verdict {
    if a.len() < MIN_SAMPLES || b.len() < MIN_SAMPLES {
        return Verdict::Neither(None);
    }
    match welch(a, b) {
        Some(w) if w.p < ALPHA && w.t > 0.0 => Verdict::First(w.p),
        Some(w) if w.p < ALPHA => Verdict::Second(w.p),
        Some(w) => Verdict::Neither(Some(w.p)),
        None => Verdict::Neither(None),
    }
}

/// `p=0.012`, `p<0.001`, or why there is none.
pub fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "p<0.001".into(),
        Some(p) => format!("p={p:.3}"),
        None => format!("fewer than {MIN_SAMPLES} passes a side: not tested"),
    }
}

/// `mean ± sd` of `x`.
pub fn spread(x: &[f64]) -> String {
    format!("{} ± {}", fig(mean(x)), fig(stddev(x)))
}

/// What one delay's sentence needs: its name, the buffer sizes compared,
/// and the passes of the three configurations it speaks of.
pub struct AtDelay<'a> {
    /// `10ms`.
    pub delay: &'a str,
    /// Smallest buffer (`4k`).
    pub small: &'a str,
    /// Largest buffer (`1m`).
    pub large: &'a str,
    /// Buffered scans with the largest buffer.
    pub buffered: &'a Passes,
    /// O_DIRECT scans with the largest buffer.
    pub direct: &'a Passes,
    /// O_DIRECT scans with the smallest buffer.
    pub direct_small: &'a Passes,
}

/// Buffered against O_DIRECT with the largest buffer at one delay; the
/// readahead explanation only when buffered is significantly faster.
fn modes(d: &AtDelay) -> String {
    let (b, o) = (&d.buffered.cold, &d.direct.cold);
    let nums = |p: Option<f64>| {
        format!(
            "buffered {}, O_DIRECT {} MiB/s cold, n={}/{}, {}",
            spread(b),
            spread(o),
            b.len(),
            o.len(),
            p_text(p)
        )
    };
    let (delay, large) = (d.delay, d.large);
    match verdict(b, o) {
        Verdict::First(p) => format!(
            "at {delay} buffered {large} scans were faster than O_DIRECT ones ({}): readahead keeps \
             requests in flight, while each O_DIRECT read waits out the delay alone",
            nums(Some(p))
        ),
        Verdict::Second(p) => format!(
            "at {delay} O_DIRECT {large} scans were faster than buffered ones ({})",
            nums(Some(p))
        ),
        Verdict::Neither(p) => format!(
            "no significant difference at {delay} between buffered and O_DIRECT {large} scans ({})",
            nums(p)
        ),
    }
}

/// What the farthest delay shows besides: buffer size under O_DIRECT,
/// and buffered re-reads against the cold pass.
fn far(d: &AtDelay) -> Vec<String> {
    let (small, large, delay) = (d.small, d.large, d.delay);
    let (dl, ds) = (&d.direct.cold, &d.direct_small.cold);
    let sizes = match verdict(dl, ds) {
        Verdict::First(p) => format!(
            "every O_DIRECT request pays the {delay}: {} MiB/s with {small} buffers, {} with {large} ({}; \
             buffer size is what is left to win)",
            spread(ds),
            spread(dl),
            p_text(Some(p))
        ),
        Verdict::Second(p) => format!(
            "O_DIRECT with {small} buffers was faster than with {large} ({} against {} MiB/s, {})",
            spread(ds),
            spread(dl),
            p_text(Some(p))
        ),
        Verdict::Neither(p) => format!(
            "O_DIRECT with {small} and {large} buffers did not differ significantly ({} against {} MiB/s, {})",
            spread(ds),
            spread(dl),
            p_text(p)
        ),
    };
    let (warm, cold) = (&d.buffered.warm, &d.buffered.cold);
    let rereads = match verdict(warm, cold) {
        Verdict::First(p) => format!(
            "buffered {large} re-reads came from the page cache at {} MiB/s, untouched by the delay ({})",
            spread(warm),
            p_text(Some(p))
        ),
        Verdict::Second(p) | Verdict::Neither(Some(p)) => format!(
            "buffered {large} re-reads were not significantly faster than the cold passes ({} against {} MiB/s, {})",
            spread(warm),
            spread(cold),
            p_text(Some(p))
        ),
        Verdict::Neither(None) => format!("buffered {large} re-reads: {}", p_text(None)),
    };
    vec![sizes, rereads]
}

/// The injected part's sentence: buffered against O_DIRECT at each delay,
/// then what the farthest (last) delay shows; every comparison names a
/// faster side only when it is significant.
pub fn sentence(delays: &[AtDelay]) -> String {
    let Some(last) = delays.last() else {
        return String::new();
    };
    let each: Vec<String> = delays.iter().map(modes).collect();
    format!(
        "On the injected disks, {}. With {} per I/O, {}.",
        each.join("; "),
        last.delay,
        far(last).join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passes(cold: &[f64], warm: &[f64]) -> Passes {
        Passes {
            cold: cold.to_vec(),
            warm: warm.to_vec(),
        }
    }

    #[test]
    fn names_the_faster_side_only_when_significant() {
        assert!(matches!(
            verdict(&[290.0, 300.0, 280.0], &[86.0, 88.0, 85.0]),
            Verdict::First(p) if p < ALPHA
        ));
        assert!(matches!(
            verdict(&[86.0, 88.0, 85.0], &[290.0, 300.0, 280.0]),
            Verdict::Second(_)
        ));
        // Issue 35's two runs, one pass a side each: nothing to test.
        assert_eq!(verdict(&[60.8], &[87.1]), Verdict::Neither(None));
        assert_eq!(
            verdict(&[60.8, 84.1], &[87.1, 59.5]),
            Verdict::Neither(None)
        );
        // Overlapping spreads: no winner.
        assert!(matches!(
            verdict(&[60.8, 84.1, 70.0], &[87.1, 59.5, 75.0]),
            Verdict::Neither(Some(p)) if p >= ALPHA
        ));
    }

    #[test]
    fn the_sentence_explains_readahead_only_when_buffered_wins() {
        let b = passes(&[290.0, 300.0, 280.0], &[1500.0, 1600.0, 1550.0]);
        let d = passes(&[86.0, 88.0, 85.0], &[86.0, 87.0, 85.0]);
        let ds = passes(&[0.37, 0.36, 0.37], &[0.37, 0.36, 0.37]);
        let at = |buffered, direct| AtDelay {
            delay: "10ms",
            small: "4k",
            large: "1m",
            buffered,
            direct,
            direct_small: &ds,
        };
        let s = sentence(&[at(&b, &d)]);
        assert!(s.contains("at 10ms buffered 1m scans were faster"), "{s}");
        assert!(s.contains("readahead keeps requests in flight"), "{s}");
        assert!(s.contains("n=3/3"), "{s}");
        assert!(s.contains("every O_DIRECT request pays the 10ms"), "{s}");
        assert!(s.contains("from the page cache"), "{s}");
        // The same numbers the other way round: O_DIRECT named, no readahead.
        let s = sentence(&[at(&d, &b)]);
        assert!(s.contains("O_DIRECT 1m scans were faster"), "{s}");
        assert!(!s.contains("readahead"), "{s}");
        // Spreads that overlap: said so, with the p-value.
        let c = passes(&[60.8, 84.1, 70.0], &[60.0, 80.0, 70.0]);
        let e = passes(&[87.1, 59.5, 75.0], &[87.0, 59.0, 75.0]);
        let s = sentence(&[at(&c, &e)]);
        assert!(
            s.contains("no significant difference at 10ms between buffered and O_DIRECT 1m scans"),
            "{s}"
        );
        assert!(s.contains("p=0."), "{s}");
        assert!(!s.contains("readahead"), "{s}");
        assert!(
            s.contains("not significantly faster than the cold passes"),
            "{s}"
        );
    }
}
