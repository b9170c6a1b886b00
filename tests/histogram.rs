//! Histogram accuracy against known distributions, and exact merging.

use iolab::metrics::LatencyHistogram;

/// Deterministic pseudo-random values spread over 6 orders of magnitude.
fn samples(n: usize, seed: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mag = x % 6;
            100 * 10u64.pow(mag as u32) + (x >> 8) % (10u64.pow(mag as u32 + 2))
        })
        .collect()
}

fn exact_percentile(sorted: &[u64], p: f64) -> u64 {
    // HDR semantics: smallest value with at least p% of samples at or below it.
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}

#[test]
fn uniform_distribution_percentiles() {
    let mut h = LatencyHistogram::new();
    for v in 1..=100_000u64 {
        h.record(v);
    }
    for (p, want) in [
        (1.0, 1000.0),
        (50.0, 50_000.0),
        (90.0, 90_000.0),
        (99.0, 99_000.0),
        (99.99, 99_990.0),
    ] {
        let got = h.percentile(p) as f64;
        assert!((got - want).abs() / want <= 0.001, "p{p}: {got} vs {want}");
    }
    assert_eq!(h.min(), 1);
    assert_eq!(h.max(), 100_000);
    assert_eq!(h.mean(), 50_000.5);
}

#[test]
fn documented_error_bound_holds() {
    let mut v = samples(200_000, 7);
    let mut h = LatencyHistogram::new();
    for &x in &v {
        h.record(x);
    }
    v.sort_unstable();
    for p in iolab::metrics::histogram::FIO_PERCENTILES {
        let want = exact_percentile(&v, p) as f64;
        let got = h.percentile(p) as f64;
        let rel = (got - want).abs() / want;
        assert!(
            rel <= 1.0 / 1024.0,
            "p{p}: got {got}, exact {want}, error {rel:.5} > 1/1024"
        );
    }
}

#[test]
fn merge_is_exact() {
    let a = samples(50_000, 1);
    let b = samples(70_000, 2);
    let (mut ha, mut hb, mut hall) = (
        LatencyHistogram::new(),
        LatencyHistogram::new(),
        LatencyHistogram::new(),
    );
    for &x in &a {
        ha.record(x);
        hall.record(x);
    }
    for &x in &b {
        hb.record(x);
        hall.record(x);
    }
    ha.merge(&hb);
    assert_eq!(ha.count(), hall.count());
    assert_eq!(ha.sum(), hall.sum());
    assert_eq!(ha.min(), hall.min());
    assert_eq!(ha.max(), hall.max());
    assert_eq!(ha.stddev(), hall.stddev());
    assert_eq!(ha.bins(), hall.bins());
    assert_eq!(ha.to_snapshot(), hall.to_snapshot());
    assert_eq!(ha.log2_buckets(), hall.log2_buckets());
}

#[test]
fn log2_buckets_count_every_sample() {
    let v = samples(10_000, 3);
    let mut h = LatencyHistogram::new();
    for &x in &v {
        h.record(x);
    }
    let b = h.log2_buckets();
    assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 10_000);
    for &x in &v[..100] {
        let bucket = 1u64 << (63 - x.leading_zeros());
        assert!(b.iter().any(|&(val, c)| val == bucket && c > 0));
    }
}

#[test]
fn hot_path_recorder_equals_direct_recording() {
    let v = samples(100_000, 11);
    let mut rec = iolab::metrics::Recorder::new();
    let mut h = LatencyHistogram::new();
    for &x in &v {
        rec.record(x);
        h.record(x);
    }
    rec.record(0);
    h.record(0);
    rec.record(u64::MAX);
    h.record(u64::MAX);
    let f = rec.finish();
    assert_eq!(f.count(), h.count());
    assert_eq!((f.min(), f.max(), f.sum()), (h.min(), h.max(), h.sum()));
    assert_eq!(
        f.bins(),
        h.bins(),
        "same buckets as recording into HDR directly"
    );
    for p in iolab::metrics::histogram::FIO_PERCENTILES {
        assert_eq!(f.percentile(p), h.percentile(p));
    }
    assert_eq!(f.to_snapshot(), h.to_snapshot());
}
