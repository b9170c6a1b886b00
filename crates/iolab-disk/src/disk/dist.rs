//! How an injected delay is drawn: fixed, uniform jitter around a mean,
//! normal or lognormal with a mean and a spread (`1ms`, `1ms~200us`,
//! `normal:1ms,200us`, `lognormal:1ms,500us`), or a measured distribution
//! given by its quantiles (`quantiles:50=1ms,99=8ms`; `hist:RUN` takes them
//! from a stored run's latencies).

use rand_core::Rng;

/// A delay distribution, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    /// Always this long.
    Fixed(u64),
    /// Uniform in `mean ± jitter`.
    Jitter {
        /// Middle of the range.
        mean: u64,
        /// Half its width.
        jitter: u64,
    },
    /// Normal with this mean and standard deviation, cut at 0.
    Normal {
        /// Mean.
        mean: u64,
        /// Standard deviation.
        sd: u64,
    },
    /// Lognormal with this mean and standard deviation (of the delay
    /// itself, not of its logarithm): a long right tail, as real disks.
    LogNormal {
        /// Mean.
        mean: u64,
        /// Standard deviation.
        sd: u64,
    },
    /// A measured distribution: (percent, ns) points, percent rising;
    /// draws interpolate between them (below the first: its value; above
    /// the last: its value).
    Quantiles(Vec<(f64, u64)>),
}

impl Dist {
    /// The mean the user asked for, ns.
    pub fn mean(&self) -> u64 {
        match *self {
            Dist::Fixed(m) => m,
            Dist::Jitter { mean, .. }
            | Dist::Normal { mean, .. }
            | Dist::LogNormal { mean, .. } => mean,
            // The mean of the piecewise-linear inverse CDF.
            Dist::Quantiles(ref q) => {
                let mut area = q.first().map_or(0.0, |f| f.0 * f.1 as f64);
                for w in q.windows(2) {
                    area += (w[1].0 - w[0].0) * (w[0].1 + w[1].1) as f64 / 2.0;
                }
                area += q.last().map_or(0.0, |l| (100.0 - l.0) * l.1 as f64);
                (area / 100.0) as u64
            }
        }
    }

    /// Refuses a distribution whose draws cannot have the mean asked for:
    /// a jitter wider than the mean (the range is cut at 0), a normal whose
    /// cut at 0 moves its mean by more than 1%, a lognormal of mean 0 with
    /// a spread. Why, with the mean it would inject.
    pub fn check(&self) -> Result<(), Unfit> {
        match *self {
            Dist::Jitter { mean, jitter } if jitter > mean => {
                Err(Unfit::JitterBelowZero { mean, jitter })
            }
            Dist::Normal { mean, sd } if sd > 0 => {
                let (m, s) = (mean as f64, sd as f64);
                // E[max(X, 0)] for X ~ N(m, s): the mean once cut at 0.
                let n = statrs::distribution::Normal::standard();
                use statrs::distribution::{Continuous, ContinuousCDF};
                let z = m / s;
                let injected = m * n.cdf(z) + s * n.pdf(z);
                match (injected - m).abs() > 0.01 * m {
                    true => Err(Unfit::NormalCut {
                        mean,
                        sd,
                        below_pct: 100.0 * n.cdf(-z),
                        injected,
                    }),
                    false => Ok(()),
                }
            }
            Dist::LogNormal { mean: 0, sd } if sd > 0 => Err(Unfit::LogNormalZero),
            _ => Ok(()),
        }
    }

    /// One delay, ns.
    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        match *self {
            Dist::Quantiles(ref q) => quantile(q, unit(rng) * 100.0),
            Dist::Fixed(m) => m,
            Dist::Jitter { mean, jitter } => {
                let lo = mean.saturating_sub(jitter);
                let width = mean + jitter - lo;
                lo + (unit(rng) * width as f64) as u64
            }
            Dist::Normal { mean, sd } => (mean as f64 + sd as f64 * gauss(rng)).max(0.0) as u64,
            Dist::LogNormal { mean, sd } => {
                // The logarithm's parameters from the delay's mean and sd.
                let (m, s) = (mean.max(1) as f64, sd as f64);
                let sigma2 = (1.0 + (s / m).powi(2)).ln();
                let mu = m.ln() - sigma2 / 2.0;
                (mu + sigma2.sqrt() * gauss(rng)).exp() as u64
            }
        }
    }
}

/// Why a distribution cannot inject the mean it names ([`Dist::check`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unfit {
    /// A uniform jitter wider than its mean: the range is cut at 0.
    #[error(
        "{} ± {} reaches below 0: the delays would be drawn from 0 to {} and average {}, not {}; give a jitter of at most the mean, or normal:/lognormal: for a long tail",
        show(*.mean as f64), show(*.jitter as f64), show((.mean + .jitter) as f64),
        show((.mean + .jitter) as f64 / 2.0), show(*.mean as f64)
    )]
    JitterBelowZero {
        /// The mean asked for, ns.
        mean: u64,
        /// The half width, ns.
        jitter: u64,
    },
    /// A normal whose draws below 0 (injected as 0) move its mean.
    #[error(
        "a normal delay of mean {} and spread {} is below 0 in {below_pct:.1}% of draws, which are injected as 0: the mean injected would be {}, not {}; give a spread of at most a third of the mean, or lognormal: (never below 0)",
        show(*.mean as f64), show(*.sd as f64), show(*.injected), show(*.mean as f64)
    )]
    NormalCut {
        /// The mean asked for, ns.
        mean: u64,
        /// The standard deviation, ns.
        sd: u64,
        /// The share of draws below 0, percent.
        below_pct: f64,
        /// The mean those draws inject, ns.
        injected: f64,
    },
    /// A lognormal of mean 0 (it has none).
    #[error("a lognormal delay has a mean above 0 (lognormal:MEAN,SPREAD, as lognormal:1ms,500us)")]
    LogNormalZero,
}

/// A delay as it is written on the command line: `3ms`, `1.5ms`, `200us`.
fn show(ns: f64) -> String {
    let (v, unit) = match ns {
        n if n >= 1e6 => (n / 1e6, "ms"),
        n if n >= 1e3 => (n / 1e3, "us"),
        n => (n, "ns"),
    };
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// The value at `p` percent of the (percent, value) points `q`.
fn quantile(q: &[(f64, u64)], p: f64) -> u64 {
    let i = q.partition_point(|x| x.0 < p);
    match (i, q.get(i)) {
        (0, Some(first)) => first.1,
        (_, None) => q.last().map_or(0, |l| l.1),
        (i, Some(hi)) => {
            let lo = q[i - 1];
            let f = (p - lo.0) / (hi.0 - lo.0).max(f64::MIN_POSITIVE);
            (lo.1 as f64 + f * (hi.1 as f64 - lo.1 as f64)) as u64
        }
    }
}

/// Uniform in [0, 1).
fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal draw (Box-Muller).
fn gauss(rng: &mut impl Rng) -> f64 {
    let u1 = unit(rng).max(f64::MIN_POSITIVE);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::SeedableRng;

    #[test]
    fn distributions_that_cannot_have_their_mean_are_refused() {
        let ms = 1_000_000;
        let e = Dist::Jitter {
            mean: ms,
            jitter: 5 * ms,
        }
        .check()
        .unwrap_err()
        .to_string();
        assert!(e.contains("average 3") && e.contains("not 1"), "{e}");
        assert!(
            Dist::Jitter {
                mean: ms,
                jitter: ms
            }
            .check()
            .is_ok()
        );
        let e = Dist::Normal { mean: ms, sd: ms }
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("15.9% of draws"), "{e}");
        assert!(
            Dist::Normal {
                mean: ms,
                sd: ms / 3
            }
            .check()
            .is_ok()
        );
        assert!(Dist::Normal { mean: 0, sd: ms }.check().is_err());
        assert!(Dist::LogNormal { mean: 0, sd: ms }.check().is_err());
        assert!(
            Dist::LogNormal {
                mean: ms,
                sd: 5 * ms
            }
            .check()
            .is_ok()
        );
        // What passes injects its mean: the sample mean of the draws.
        for d in [
            Dist::Jitter {
                mean: ms,
                jitter: ms,
            },
            Dist::Normal {
                mean: ms,
                sd: ms / 3,
            },
        ] {
            let (mean, _) = stats(d.clone());
            assert!((mean / ms as f64 - 1.0).abs() < 0.01, "{d:?}: {mean}");
        }
    }

    fn stats(d: Dist) -> (f64, f64) {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let n = 200_000;
        let v: Vec<f64> = (0..n).map(|_| d.draw(&mut rng) as f64).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (mean, var.sqrt())
    }

    fn within(got: f64, want: f64, tol: f64) -> bool {
        (got - want).abs() <= tol * want
    }

    #[test]
    fn draws_have_the_asked_mean_and_spread() {
        let ms = 1_000_000;
        assert_eq!(stats(Dist::Fixed(ms)), (ms as f64, 0.0));
        let (m, sd) = stats(Dist::Jitter {
            mean: ms,
            jitter: ms / 5,
        });
        // Uniform over ±j: sd = j / sqrt(3).
        assert!(
            within(m, 1e6, 0.01) && within(sd, 2e5 / 3f64.sqrt(), 0.1),
            "{m} {sd}"
        );
        let (m, sd) = stats(Dist::Normal {
            mean: ms,
            sd: ms / 5,
        });
        assert!(within(m, 1e6, 0.01) && within(sd, 2e5, 0.1), "{m} {sd}");
        let (m, sd) = stats(Dist::LogNormal {
            mean: ms,
            sd: ms / 2,
        });
        assert!(within(m, 1e6, 0.02) && within(sd, 5e5, 0.1), "{m} {sd}");
        // Quantiles: uniform between 1 and 3 ms is its two end points.
        let q = Dist::Quantiles(vec![(0.0, ms), (100.0, 3 * ms)]);
        let (m, sd) = stats(q.clone());
        assert!(
            within(m, 2e6, 0.01) && within(sd, 2e6 / 12f64.sqrt(), 0.02),
            "{m} {sd}"
        );
        assert_eq!(q.mean(), 2 * ms);
        // Below the first point its value, above the last the last.
        let q = vec![(10.0, 5), (90.0, 9)];
        assert_eq!(
            (quantile(&q, 1.0), quantile(&q, 50.0), quantile(&q, 99.0)),
            (5, 7, 9)
        );
    }
}
