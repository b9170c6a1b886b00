//! Chart axes: linear, or logarithmic through plotters' log coordinates
//! (`(a..b).log_scale()`) with ticks at 1, 2 and 5 of each decade, and the
//! tick labels of each kind of axis.

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::{BindKeyPoints, IntoLogRange};
use std::ops::Range;

/// How an axis maps its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear, plain numbers.
    Linear,
    /// Logarithmic, ticks 1-2-5 labelled 1, 2, 5, 10, 20, 50, 100, 1k...
    Log,
    /// Logarithmic over microseconds, ticks labelled 500ns, 1µs, 2µs, 5ms...
    LogMicros,
}

impl Scale {
    /// Logarithmic (of either kind).
    pub fn is_log(self) -> bool {
        self != Scale::Linear
    }

    /// The label of tick value `v` on an axis reaching `top`: on a linear
    /// axis past 10 000 every tick from 1000 up is in k, so 5k sits under
    /// 10k (not 5000).
    pub fn label(self, v: f64, top: f64) -> String {
        match self {
            Scale::Linear if top.abs() >= 1e4 && (1e3..1e6).contains(&v.abs()) => {
                trim(format!("{:.2}", v / 1e3)) + "k"
            }
            Scale::Linear => tick(v),
            Scale::Log => log_tick(v),
            Scale::LogMicros => micros(v),
        }
    }
}

/// One axis of a chart: plotters' linear coordinates, or its log
/// coordinates with 1-2-5 key points. One type for both, so a chart is
/// built the same way whatever its scales.
pub enum Axis {
    /// Linear.
    Lin(RangedCoordf64),
    /// Logarithmic with the given ticks.
    Log(WithKeyPoints<LogCoord<f64>>),
}

impl Axis {
    /// An axis over `lo..hi` (both above zero when `scale` is logarithmic).
    pub fn new(scale: Scale, lo: f64, hi: f64) -> Axis {
        if scale.is_log() {
            Axis::Log((lo..hi).log_scale().with_key_points(log_ticks(lo, hi, 12)))
        } else {
            Axis::Lin((lo..hi).into())
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        match self {
            Axis::Lin(a) => a.map(v, limit),
            Axis::Log(a) => a.map(v, limit),
        }
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match self {
            Axis::Lin(a) => a.key_points(hint),
            Axis::Log(a) => a.key_points(hint),
        }
    }

    fn range(&self) -> Range<f64> {
        match self {
            Axis::Lin(a) => a.range(),
            Axis::Log(a) => a.range(),
        }
    }
}

/// `m`·10^`e`, written out so 2e-4 is the double nearest 0.0002.
fn decimal(m: u32, e: i32) -> f64 {
    format!("{m}e{e}").parse().unwrap_or(0.0)
}

/// Ticks for a log axis over `lo..hi`: 1, 2 and 5 of each decade; powers
/// of ten alone when that would give more than `max`; every k-th power of
/// ten over very many decades; 1..9 within a single decade.
pub fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo && lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let with = |mults: &[u32], every: i32| -> Vec<f64> {
        (e0..=e1)
            .filter(|e| (e - e0) % every == 0)
            .flat_map(|e| mults.iter().map(move |&m| decimal(m, e)))
            .filter(within)
            .collect()
    };
    let t = with(&[1, 2, 5], 1);
    if t.len() > max {
        let mut every = 1;
        loop {
            let t = with(&[1], every);
            if t.len() <= max {
                return t;
            }
            every += 1;
        }
    }
    if t.len() < 3 {
        return with(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 1);
    }
    t
}

/// A short axis number: 1.5k, 2M, 0.25.
pub fn tick(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        trim(format!("{:.3}", v / 1e9)) + "G"
    } else if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e4 {
        trim(format!("{:.1}", v / 1e3)) + "k"
    } else if a >= 10.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        // Three significant digits, so close small ticks stay distinct.
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    }
}

/// A log tick: 1, 20, 500, 1k, 20k, 5M, 0.002.
fn log_tick(v: f64) -> String {
    let a = v.abs();
    let (div, unit) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        return tick(v);
    };
    trim(format!("{:.2}", v / div)) + unit
}

/// A microsecond figure in the largest fitting unit: 500ns, 2µs, 50ms, 1s.
pub fn micros(us: f64) -> String {
    let a = us.abs();
    let (v, unit) = if a >= 1e6 {
        (us / 1e6, "s")
    } else if a >= 1e3 {
        (us / 1e3, "ms")
    } else if a >= 1.0 {
        (us, "µs")
    } else {
        (us * 1e3, "ns")
    };
    trim(format!("{v:.2}")) + unit
}

/// Drops trailing zeros (and a trailing point) of a decimal.
pub fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(lo: f64, hi: f64, s: Scale) -> Vec<String> {
        log_ticks(lo, hi, 12)
            .into_iter()
            .map(|v| s.label(v, hi))
            .collect()
    }

    #[test]
    fn log_ticks_are_one_two_five() {
        assert_eq!(
            labels(0.8, 600.0, Scale::Log),
            ["1", "2", "5", "10", "20", "50", "100", "200", "500"]
        );
        assert_eq!(
            labels(0.5, 3000.0, Scale::LogMicros),
            [
                "500ns", "1µs", "2µs", "5µs", "10µs", "20µs", "50µs", "100µs", "200µs", "500µs",
                "1ms", "2ms"
            ]
        );
        // Many decades: powers of ten only, then every other one.
        assert_eq!(
            labels(1.0, 1e9, Scale::Log),
            [
                "1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M", "1G"
            ]
        );
        assert_eq!(log_ticks(1e-6, 1e18, 12).len(), 9, "every third power");
        // Within one decade: every integer multiple.
        assert_eq!(
            labels(300.0, 800.0, Scale::Log),
            ["300", "400", "500", "600", "700", "800"]
        );
        assert_eq!(
            labels(1e-4, 1e-2, Scale::Log),
            [
                "0.0001", "0.0002", "0.0005", "0.001", "0.002", "0.005", "0.01"
            ]
        );
        assert!(log_ticks(0.0, 1.0, 12).is_empty());
    }

    #[test]
    fn short_numbers() {
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(25000.0), "25k");
        assert_eq!(tick(2_500_000.0), "2.5M");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(0.035), "0.035");
        assert_eq!(tick(0.0125), "0.0125");
        assert_eq!(tick(2.5e9), "2.5G");
        assert_eq!(micros(0.2), "200ns");
        assert_eq!(Scale::Linear.label(5000.0, 25000.0), "5k");
        assert_eq!(Scale::Linear.label(5000.0, 9000.0), "5000");
        assert_eq!(Scale::Linear.label(2e6, 3e6), "2M");
        assert_eq!(micros(1500.0), "1.5ms");
    }
}
