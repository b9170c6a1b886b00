//! fio's JSON objects of one direction (`read`, `write`, `trim`: bytes,
//! IOPS, `slat_ns`/`clat_ns`/`lat_ns` with percentiles and json+ bins) and
//! its latency and depth distributions, for [`super::json`].

use crate::job::groups::report::{Report, Unified};
use crate::metrics::LatencyHistogram;
use crate::metrics::histogram::FIO_PERCENTILES;
use crate::runner::series::IntervalDir;
use crate::runner::{OpStats, Totals};
use serde_json::{Map, Value, json};

/// fio's percentile key: `99.000000`.
pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

pub(super) fn lat_obj(h: &LatencyHistogram, percentiles: Option<&[f64]>, bins: bool) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(h.min()));
    m.insert("max".into(), json!(h.max()));
    m.insert("mean".into(), json!(h.mean()));
    m.insert("stddev".into(), json!(h.stddev()));
    m.insert("N".into(), json!(h.count()));
    if let Some(list) = percentiles.filter(|_| h.count() > 0) {
        let p: Map<String, Value> = (list.iter())
            .map(|&p| (percentile_key(p), json!(h.percentile(p))))
            .collect();
        m.insert("percentile".into(), Value::Object(p));
    }
    // json+ bins sit beside the percentiles, as fio's add_ddir_lat_json.
    if bins && percentiles.is_some() && h.count() > 0 {
        let b: Map<String, Value> = super::fio_logs::fio_plat_bins(h)
            .into_iter()
            .map(|(v, c)| (v.to_string(), json!(c)))
            .collect();
        m.insert("bins".into(), Value::Object(b));
    }
    Value::Object(m)
}

/// The percentiles a job's report shows (fio's `percentile_list`).
pub(super) fn percentiles(rep: &Report) -> &[f64] {
    rep.percentile_list.as_deref().unwrap_or(&FIO_PERCENTILES)
}

/// fio's object of one direction; `dir`: its indexes in the time series
/// (0 read, 1 write, 2 trim; several for `mixed`; `None`: a direction
/// without one) and the series' interval in ms.
pub(super) fn dir_obj(
    t: &Totals,
    s: &OpStats,
    dir: Option<(&[usize], u64)>,
    bins: bool,
    rep: &Report,
) -> Value {
    let list = |on: bool| on.then_some(percentiles(rep));
    let bw = t.bw_bytes(s);
    let iops = t.iops(s);
    let bw_kib = Samples::of(t, dir, |d, ms| d.bytes as f64 * 1000.0 / ms as f64 / 1024.0);
    let iops_s = Samples::of(t, dir, |d, ms| d.ios as f64 * 1000.0 / ms as f64);
    // fio's `per`: the share of the group's bandwidth (here the job's).
    let agg = if bw > 0.0 {
        (bw_kib.mean * 100.0 / (bw / 1024.0)).min(100.0)
    } else {
        0.0
    };
    // fio rounds each elapsed time up to a millisecond (backend.c).
    let runtime_ms = if s.ios() > 0 {
        (t.dir_ns(s) / 1000).div_ceil(1000)
    } else {
        0
    };
    let zero = json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    let mut v = json!({
        "io_bytes": s.bytes,
        "io_kbytes": s.bytes / 1024,
        "bw_bytes": bw as u64,
        "bw": (bw / 1024.0) as u64,
        "iops": iops,
        "runtime": runtime_ms,
        "total_ios": s.ios(),
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": if s.slat.count() > 0 { lat_obj(&s.slat, list(rep.slat_percentiles), bins) } else { zero },
        "clat_ns": lat_obj(s.clat_or_lat(), list(rep.clat_percentiles), bins),
        "lat_ns": lat_obj(&s.lat, list(rep.lat_percentiles), bins),
        "bw_min": bw_kib.min as u64,
        "bw_max": bw_kib.max as u64,
        "bw_agg": agg,
        "bw_mean": bw_kib.mean,
        "bw_dev": bw_kib.dev,
        "bw_samples": bw_kib.n,
        "iops_min": iops_s.min as u64,
        "iops_max": iops_s.max as u64,
        "iops_mean": iops_s.mean,
        "iops_stddev": iops_s.dev,
        "iops_samples": iops_s.n,
    });
    if let (Some(p), Value::Object(m)) = (prios(s, bins, rep), &mut v) {
        // fio puts them after lat_ns.
        let at = m
            .keys()
            .position(|k| k == "lat_ns")
            .map_or(m.len(), |i| i + 1);
        m.shift_insert(at, "prios".into(), p);
    }
    v
}

/// fio's `mixed` direction (`unified_rw_reporting`): reads, writes and
/// trims summed, the runtime the longest of theirs (stat.c
/// `sum_thread_stats` into direction 0).
pub(super) fn mixed(t: &Totals) -> OpStats {
    let mut m = t.read.clone();
    let mut busy = t.dir_ns(&t.read) * u64::from(t.read.ios() > 0);
    for s in [&t.write, &t.trim] {
        m.merge(s);
        if s.ios() > 0 {
            busy = busy.max(t.dir_ns(s));
        }
    }
    m.busy_ns = Some(busy);
    m
}

/// fio's `unified_rw_reporting`: with `mixed`, one `mixed` object where
/// `read` was and no `write`, `trim` or `sync`; with `both`, `mixed` after
/// `sync`.
pub(super) fn unify(doc: &mut Value, t: &Totals, interval: u64, bins: bool, rep: &Report) {
    let Some(o) = doc.as_object_mut() else {
        return;
    };
    let m = || dir_obj(t, &mixed(t), Some((&[0, 1, 2], interval)), bins, rep);
    match rep.unified {
        Unified::Split => {}
        Unified::Mixed => {
            let at = o.keys().position(|k| k == "read").unwrap_or(o.len());
            // fio drops `sync` too (add_ddir_status_json returns for
            // every direction but the first).
            for k in ["read", "write", "trim", "sync"] {
                o.shift_remove(k);
            }
            o.shift_insert(at, "mixed".into(), m());
        }
        Unified::Both => {
            let at = o
                .keys()
                .position(|k| k == "sync")
                .map_or(o.len(), |i| i + 1);
            o.shift_insert(at, "mixed".into(), m());
        }
    }
}

/// fio's `prios`: each I/O priority's latencies, when two or more have
/// samples (`lat_ns` with `lat_percentiles`, else `clat_ns`).
fn prios(s: &OpStats, bins: bool, rep: &Report) -> Option<Value> {
    let used: Vec<_> = s.prios.iter().filter(|p| p.lat.count() > 0).collect();
    if used.len() < 2 {
        return None;
    }
    let on = rep.clat_percentiles || rep.lat_percentiles;
    let list = on.then_some(percentiles(rep));
    let (key, lat) = match rep.lat_percentiles {
        true => ("lat_ns", true),
        false => ("clat_ns", false),
    };
    let each = used.iter().map(|p| {
        let h = match lat || p.clat.count() == 0 {
            true => &p.lat,
            false => &p.clat,
        };
        let mut o = Map::new();
        o.insert("prioclass".into(), json!(p.class()));
        o.insert("prio".into(), json!(p.level()));
        o.insert(key.into(), lat_obj(h, list, bins));
        Value::Object(o)
    });
    Some(Value::Array(each.collect()))
}

/// Statistics of per-interval figures (fio's `bw_stat`, `iops_stat`): over
/// the whole intervals of the job's time series, as fio samples every
/// `bw_avg_time` (iolab's intervals are `log_avg_msec`, 1000 ms when 0; a
/// run shorter than one interval has no samples, as in fio).
struct Samples {
    n: u64,
    min: f64,
    max: f64,
    mean: f64,
    dev: f64,
}

impl Samples {
    fn of(
        t: &Totals,
        dir: Option<(&[usize], u64)>,
        f: impl Fn(&IntervalDir, u64) -> f64,
    ) -> Samples {
        // `mixed` pools the directions' samples, as fio's sum_stat.
        let v: Vec<f64> = match dir {
            Some((dirs, full)) => (t.series.iter())
                .filter(|i| i.len_ms == full)
                .flat_map(|i| dirs.iter().map(move |&d| (i, &i.dirs[d])))
                .filter(|(_, d)| d.ios > 0)
                .map(|(i, d)| f(d, i.len_ms))
                .collect(),
            _ => Vec::new(),
        };
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n.max(1.0);
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        Samples {
            n: v.len() as u64,
            min: v.iter().copied().fold(f64::INFINITY, f64::min).min(mean),
            max: v.iter().copied().fold(0.0, f64::max),
            mean,
            dev: if v.len() > 1 { var.sqrt() } else { 0.0 },
        }
    }
}

/// fio's latency distribution maps (`latency_ns`, `latency_us`,
/// `latency_ms`): percent of I/Os with latency up to each bound.
pub(super) fn latency_dists(t: &Totals) -> (Value, Value, Value) {
    let mut all = t.read.clat_or_lat().clone();
    all.merge(t.write.clat_or_lat());
    all.merge(t.trim.clat_or_lat());
    let bins = all.bins();
    let total = all.count().max(1) as f64;
    let edges = [2u64, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let bucket = |lo: u64, hi: u64| -> f64 {
        let c: u64 = bins
            .iter()
            .filter(|(v, _)| *v > lo && *v <= hi)
            .map(|b| b.1)
            .sum();
        100.0 * c as f64 / total
    };
    let mk = |scale: u64, extra: bool| {
        let mut m = Map::new();
        let mut prev = if scale == 1 { 0 } else { scale };
        for &e in &edges {
            let hi = e * scale;
            m.insert(e.to_string(), json!(bucket(prev, hi)));
            prev = hi;
        }
        if extra {
            m.insert("2000".into(), json!(bucket(prev, 2000 * scale)));
            m.insert(">=2000".into(), json!(bucket(2000 * scale, u64::MAX)));
        }
        Value::Object(m)
    };
    (mk(1, false), mk(1000, false), mk(1_000_000, true))
}

pub(super) fn rep_dir(t: &Totals, s: &OpStats) -> Value {
    json!({
        "total_ios": s.ios(),
        "io_bytes": s.bytes,
        "iops": t.iops(s),
        "bw_bytes": t.bw_bytes(s),
        "clat_mean_ns": s.lat.mean(),
        "clat_p50_ns": s.lat.percentile(50.0),
        "clat_p99_ns": s.lat.percentile(99.0),
    })
}

/// fio's keys of `iodepth_submit` and `iodepth_complete` (batch sizes).
pub(super) const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// fio's depth distributions: each bucket's share of the counts, in percent.
pub(super) fn percents(counts: &[u64; 7], keys: &[&str]) -> Value {
    let total = counts.iter().sum::<u64>().max(1) as f64;
    keys.iter()
        .zip(counts)
        .map(|(k, &c)| (k.to_string(), json!(100.0 * c as f64 / total)))
        .collect::<Map<_, _>>()
        .into()
}

/// What fio leaves out of a job's JSON when it does not take those times
/// (`gtod_reduce`, `disable_lat`, `disable_clat`, `disable_slat`,
/// `disable_bw_measurement`): zeros, as fio writes them. iolab measures
/// anyway (its I/O counts come from the latency recorders).
pub(super) fn hide_disabled(doc: &mut Value, p: &crate::job::groups::pacing::Pacing) {
    let zero = json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    for dir in ["read", "write", "trim"] {
        let Some(d) = doc.get_mut(dir).and_then(Value::as_object_mut) else {
            continue;
        };
        for (off, key) in [
            (p.disable_slat, "slat_ns"),
            (p.disable_clat, "clat_ns"),
            (p.disable_lat, "lat_ns"),
        ] {
            if off {
                d.insert(key.into(), zero.clone());
            }
        }
        if p.disable_bw {
            for key in [
                "bw_min",
                "bw_max",
                "bw_samples",
                "iops_min",
                "iops_max",
                "iops_samples",
            ] {
                d.insert(key.into(), json!(0));
            }
            for key in ["bw_agg", "bw_mean", "bw_dev", "iops_mean", "iops_stddev"] {
                d.insert(key.into(), json!(0.0));
            }
        }
    }
    if p.disable_clat {
        for key in ["latency_ns", "latency_us", "latency_ms"] {
            if let Some(Value::Object(m)) = doc.get_mut(key) {
                m.values_mut().for_each(|v| *v = json!(0.0));
            }
        }
    }
}
