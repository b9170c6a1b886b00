//! fio's skewed random distributions (lib/zipf.c, lib/gauss.c): zipf,
//! pareto and normal over a file's blocks, with fio's arithmetic. Each
//! block index is scattered over the file by fio's hash (`__hash_u64`), so
//! the hot blocks are not all at the start; `CENTER` moves them.

use super::draws::Draws;
use crate::job::groups::access::Distribution;

/// fio's `GOLDEN_RATIO_64`: its `__hash_u64` multiplies by it.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio sums at most this many terms of zipf's zeta (lib/zipf.c).
const ZIPF_MAX_GEN: u64 = 10_000_000;
/// Terms of fio's Gaussian (a sum of uniform draws).
const GAUSS_ITERS: u64 = 12;

/// A distribution over `0..nranges`, with its state.
#[derive(Debug, Clone)]
pub struct Skew {
    nranges: u64,
    rand_off: u64,
    model: Model,
}

#[derive(Debug, Clone)]
enum Model {
    Zipf { theta: f64, zetan: f64, zeta2: f64 },
    Pareto { pow: f64 },
    Normal { stddev: u64 },
}

/// Terms of zeta summed one by one; the rest by Euler-Maclaurin.
const ZETA_EXACT: u64 = 10_000;

/// fio's `zetan`: the sum of `i^-theta` for i in 1..=n. The first terms
/// one by one, the tail (up to fio's 10M terms) by Euler-Maclaurin, exact
/// to about 1e-12 and 1,000 times faster for large files (a plan must not
/// take 0.2 s to start). `theta` is not 1 (the job refuses it).
fn zeta(n: u64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    let head: f64 = (1..=n.min(ZETA_EXACT)).map(|i| f(i as f64)).sum();
    if n <= ZETA_EXACT {
        return head;
    }
    let (a, b) = ((ZETA_EXACT + 1) as f64, n as f64);
    let integral = (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta);
    let df = |x: f64| -theta * x.powf(-theta - 1.0);
    head + integral + (f(a) + f(b)) / 2.0 + (df(b) - df(a)) / 12.0
}

/// A uniform draw in [0, 1] from 32 bits, as fio's `__rand / FRAND32_MAX`.
fn unit(rng: &mut Draws) -> f64 {
    (rng.next_u64() as u32) as f64 / u32::MAX as f64
}

impl Skew {
    /// The distribution `d` over `nranges` blocks (≥ 1); `None` for the
    /// uniform ones (random, zoned), which need no state.
    pub fn new(d: &Distribution, nranges: u64, rng: &mut Draws) -> Option<Skew> {
        let nranges = nranges.max(1);
        // fio: a random offset unless a center is given.
        let mut off = |center: Option<f64>, shift: f64| match center {
            Some(c) => (nranges as f64 * (c - shift)) as i64 as u64,
            None => rng.next_u64() as u32 as u64,
        };
        let (model, rand_off) = match *d {
            Distribution::Zipf { theta, center } => {
                let zetan = zeta(nranges.min(ZIPF_MAX_GEN), theta);
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                (
                    Model::Zipf {
                        theta,
                        zetan,
                        zeta2,
                    },
                    off(center, 0.0),
                )
            }
            Distribution::Pareto { h, center } => (
                Model::Pareto {
                    pow: h.ln() / (1.0 - h).ln(),
                },
                off(center, 0.0),
            ),
            Distribution::Normal { dev, center } => {
                let stddev = if dev == 0.0 {
                    0
                } else {
                    ((nranges as f64 * dev / 100.0).ceil() as u64).min(nranges / 2)
                };
                // fio: no random offset for normal; the middle unless a center.
                let rand_off = center.map_or(0, |c| off(Some(c), 0.5));
                (Model::Normal { stddev }, rand_off)
            }
            _ => return None,
        };
        Some(Skew {
            nranges,
            rand_off,
            model,
        })
    }

    /// The next block, in `0..nranges`.
    pub fn next(&self, rng: &mut Draws) -> u64 {
        let n = self.nranges;
        let val = match self.model {
            Model::Zipf {
                theta,
                zetan,
                zeta2,
            } => {
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = unit(rng);
                let z = u * zetan;
                let v = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(theta) {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                v - 1
            }
            Model::Pareto { pow } => ((n - 1) as f64 * unit(rng).powf(pow)) as u64,
            Model::Normal { stddev } => {
                let sum: u64 = (0..GAUSS_ITERS)
                    .map(|_| (rng.next_u64() as u32 as u64) % (n + 1))
                    .sum();
                let mut sum = sum.div_ceil(GAUSS_ITERS);
                if stddev > 0 {
                    let r = rng.next_u64() as u32 as f64 / (u32::MAX as f64 + 1.0);
                    let mut dev = (stddev as f64 * r) as i64 - (stddev / 2) as i64;
                    while sum.wrapping_add(dev as u64) >= n {
                        if dev == 0 {
                            // fio 3.33 loops here for ever (its gauss_next
                            // halves a zero deviation while the sum is the
                            // last range): the last range instead.
                            sum = n - 1;
                            break;
                        }
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as u64);
                }
                sum
            }
        };
        val.wrapping_mul(GOLDEN_RATIO_64)
            .wrapping_add(self.rand_off)
            % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The share of draws that fall on the hottest tenth of the blocks.
    fn hottest_tenth(d: Distribution) -> f64 {
        let n = 1000;
        let mut rng = Draws::new(3);
        let s = Skew::new(&d, n, &mut rng).unwrap();
        let mut hits = vec![0u32; n as usize];
        for _ in 0..100_000 {
            hits[s.next(&mut rng) as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits[..100].iter().sum::<u32>() as f64 / 100_000.0
    }

    #[test]
    fn zeta_tail_matches_the_sum() {
        for theta in [0.5, 1.2, 2.0] {
            for n in [10_000u64, 10_001, 123_456, 1_000_000] {
                let sum: f64 = (1..=n).map(|i| (i as f64).powf(-theta)).sum();
                let got = zeta(n, theta);
                assert!(
                    (got - sum).abs() / sum < 1e-9,
                    "theta {theta} n {n}: {got} vs {sum}"
                );
            }
        }
    }

    #[test]
    fn skewed_distributions_concentrate() {
        let zipf = hottest_tenth(Distribution::Zipf {
            theta: 1.2,
            center: None,
        });
        let pareto = hottest_tenth(Distribution::Pareto {
            h: 0.2,
            center: None,
        });
        assert!(zipf > 0.6, "zipf:1.2 {zipf}");
        assert!(pareto > 0.6, "pareto:0.2 {pareto}");
    }

    #[test]
    fn normal_over_two_ranges_ends() {
        // fio 3.33's gauss_next loops for ever when the sum is the last
        // range and the deviation halves to zero (a 64k file of 32k blocks).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut rng = Draws::new(5);
            let d = Distribution::Normal {
                dev: 5.0,
                center: None,
            };
            let s = Skew::new(&d, 2, &mut rng).unwrap();
            let max = (0..10_000).map(|_| s.next(&mut rng)).max();
            tx.send(max).unwrap();
        });
        let max = rx.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(
            max,
            Ok(Some(1)),
            "the draws never ended, or left the ranges"
        );
    }
}
