//! Statistics over repetitions: mean, spread, and Welch's t-test for "is
//! A different from B". Welch's test does not assume equal variances, which
//! suits I/O runs (a cold side is usually noisier than a warm one). The
//! p-value comes from statrs' Student t distribution; the tests below check
//! it against values computed with SciPy's `ttest_ind(equal_var=False)`.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Arithmetic mean (NaN for no samples).
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (n - 1); 0 for fewer than two samples.
pub fn stddev(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    (x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (x.len() - 1) as f64).sqrt()
}

/// Half the width of the 95% confidence interval of a mean of `n`
/// samples with standard deviation `sd` (Student's t with n - 1 degrees
/// of freedom); 0 for fewer than two samples.
pub fn ci95_half(sd: f64, n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).map_or(f64::NAN, |d| d.inverse_cdf(0.975));
    t * sd / (n as f64).sqrt()
}

/// Result of Welch's two-sample t-test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Welch {
    /// t statistic (positive when A's mean is larger).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// Welch's t-test of `a` against `b`, as SciPy's
/// `ttest_ind(a, b, equal_var=False)` computes it (two-sided p); `None`
/// when either side has fewer than two samples, or when neither side
/// varies (no spread to test against: SciPy's t is then infinite or NaN).
///
/// This is the arithmetic only: whether a comparison may quote the test
/// (3 samples a side) is [`super::difference`]'s rule.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (stddev(a).powi(2) / na, stddev(b).powi(2) / nb);
    let se2 = va + vb;
    if se2 == 0.0 {
        return None;
    }
    let t = (mean(a) - mean(b)) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    // The upper tail directly: 1 - cdf would lose a small p to rounding.
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    Some(Welch { t, df, p })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// Reference values: scipy.stats.ttest_ind(a, b, equal_var=False),
    /// SciPy 1.17.1.
    #[test]
    fn welch_matches_scipy() {
        // (a, b, t, df, p)
        type Case<'a> = (&'a [f64], &'a [f64], f64, f64, f64);
        let cases: [Case; 3] = [
            (
                &[
                    27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0,
                    21.7, 21.4,
                ],
                &[
                    27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9,
                    20.5, 24.4,
                ],
                -2.455356398286006,
                24.988529290231416,
                0.021378001462866992,
            ),
            (
                &[101.2, 99.8, 100.5, 100.9, 99.6],
                &[104.1, 103.2, 105.0, 103.8, 104.4],
                -8.602325267042573,
                7.994160583941605,
                2.591776620156101e-05,
            ),
            (
                &[1.0, 2.0, 3.0],
                &[1.5, 2.5, 10.0],
                -0.9719307827692594,
                2.1849312011900333,
                0.4260789987721006,
            ),
        ];
        for (a, b, t, df, p) in cases {
            let w = welch(a, b).unwrap();
            assert!(close(w.t, t, 1e-9), "t {} vs {t}", w.t);
            assert!(close(w.df, df, 1e-9), "df {} vs {df}", w.df);
            assert!(close(w.p, p, 1e-6), "p {} vs {p}", w.p);
        }
    }

    #[test]
    fn too_few_samples_or_no_spread() {
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        // Neither side varies: no test (SciPy: t NaN or infinite).
        assert!(welch(&[2.0, 2.0], &[2.0, 2.0]).is_none());
        assert!(welch(&[2.0, 2.0], &[3.0, 3.0]).is_none());
        // One side varies: a test. SciPy: ttest_ind([5, 5, 5], [4, 6, 5.5],
        // equal_var=False) = (-0.2773500981126151, 0.8075499102701245).
        let w = welch(&[5.0, 5.0, 5.0], &[4.0, 6.0, 5.5]).unwrap();
        assert!(close(w.t, -0.2773500981126151, 1e-9), "{w:?}");
        assert!(close(w.p, 0.8075499102701245, 1e-6), "{w:?}");
    }

    #[test]
    fn spread() {
        assert_eq!(mean(&[1.0, 2.0, 3.0]), 2.0);
        assert!(close(
            stddev(&[1.0, 2.0, 3.0, 4.0]),
            1.2909944487358056,
            1e-12
        ));
        assert_eq!(stddev(&[5.0]), 0.0);
        // scipy.stats.t.ppf(0.975, 4) = 2.7764451051977987
        assert!(close(
            ci95_half(2.0, 5),
            2.7764451051977987 * 2.0 / 5f64.sqrt(),
            1e-9
        ));
        assert_eq!(ci95_half(2.0, 1), 0.0);
    }
}
