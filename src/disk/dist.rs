//! How an injected delay is drawn: fixed, uniform jitter around a mean,
//! normal or lognormal with a mean and a spread (`1ms`, `1ms~200us`,
//! `normal:1ms,200us`, `lognormal:1ms,500us`).

use rand_core::Rng;

/// A delay distribution, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
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
}

impl Dist {
    /// The mean the user asked for, ns.
    pub fn mean(&self) -> u64 {
        match *self {
            Dist::Fixed(m) => m,
            Dist::Jitter { mean, .. }
            | Dist::Normal { mean, .. }
            | Dist::LogNormal { mean, .. } => mean,
        }
    }

    /// One delay, ns.
    pub fn draw(&self, rng: &mut impl Rng) -> u64 {
        match *self {
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
    }
}
