//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`): one file per clone, `PREFIX_TYPE.N.log`, lines
//! `time_ms, value, ddir, bs, prio` (histogram logs: `time_ms, ddir, bs,`
//! then fio's 1856 latency bins), so fio's plotting tools read them.

use crate::job::{JobSpec, Mix};
use crate::metrics::recorder::bucket_range;
use crate::runner::series::{Interval, IoLogEntry};
use crate::runner::{RunResult, Totals};
use std::fmt::Write as _;
use std::path::PathBuf;

/// fio's latency bins: 29 groups of 64 (FIO_IO_U_PLAT_BITS = 6).
pub const FIO_PLAT_NR: usize = 29 * 64;

/// fio's `plat_val_to_idx`: the bin of a latency in ns.
pub fn fio_plat_idx(v: u64) -> usize {
    const BITS: u32 = 6;
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= BITS {
        return v as usize;
    }
    let error_bits = msb - BITS;
    let base = ((error_bits + 1) << BITS) as usize;
    let offset = ((v >> error_bits) & 63) as usize;
    (base + offset).min(FIO_PLAT_NR - 1)
}

/// The log files of a run as (path, contents); nothing is written here.
pub fn render(r: &RunResult) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for (j, job) in r.jobs.iter().enumerate() {
        let l = &job.logs;
        if l.bw.is_none() && l.lat.is_none() && l.iops.is_none() && l.hist.is_none() {
            continue;
        }
        for c in 0..job.numjobs {
            let mut t = Totals::default();
            for rep in &r.repetitions {
                for cr in rep.clones.iter().filter(|x| x.job == j && x.clone == c) {
                    t.add_sequential(&cr.totals);
                }
            }
            let n = c + 1;
            let name = |prefix: &str, kind: &str| PathBuf::from(format!("{prefix}_{kind}.{n}.log"));
            let dirs = directions(job);
            let is_async = job.queued();
            if let Some(p) = &l.bw {
                out.push((name(p, "bw"), lines(job, &t, &dirs, Value::Bw)));
            }
            if let Some(p) = &l.iops {
                out.push((name(p, "iops"), lines(job, &t, &dirs, Value::Iops)));
            }
            if let Some(p) = &l.lat {
                out.push((name(p, "lat"), lines(job, &t, &dirs, Value::Lat)));
                out.push((name(p, "clat"), lines(job, &t, &dirs, Value::Clat)));
                let slat = if is_async {
                    lines(job, &t, &dirs, Value::Slat)
                } else {
                    String::new()
                };
                out.push((name(p, "slat"), slat));
            }
            if let Some(p) = &l.hist {
                let ivs = t.hist_series.as_deref().unwrap_or(&t.series);
                out.push((name(p, "clat_hist"), hist_lines(job, ivs, &dirs)));
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Value {
    Bw,
    Iops,
    Lat,
    Clat,
    Slat,
}

fn directions(job: &JobSpec) -> Vec<usize> {
    match job.mix {
        Mix::Read => vec![0],
        Mix::Write => vec![1],
        Mix::Mixed => vec![0, 1],
    }
}

fn lines(job: &JobSpec, t: &Totals, dirs: &[usize], v: Value) -> String {
    let mut s = String::new();
    if job.logs.avg_msec == 0 {
        for e in &t.io_log {
            per_io_line(&mut s, e, v);
        }
        return s;
    }
    for iv in &t.series {
        for &d in dirs {
            let x = &iv.dirs[d];
            if x.ios == 0 {
                continue;
            }
            let secs = iv.len_ms as f64 / 1000.0;
            let val = match v {
                Value::Bw => (x.bytes as f64 / 1024.0 / secs) as u64,
                Value::Iops => (x.ios as f64 / secs) as u64,
                Value::Lat => x.mean(x.lat_sum) as u64,
                Value::Clat => {
                    let sum = if x.clat_sum > 0 {
                        x.clat_sum
                    } else {
                        x.lat_sum
                    };
                    x.mean(sum) as u64
                }
                Value::Slat => x.mean(x.slat_sum) as u64,
            };
            let _ = writeln!(s, "{}, {val}, {d}, 0, 0", iv.end_ms);
        }
    }
    s
}

fn per_io_line(s: &mut String, e: &IoLogEntry, v: Value) {
    let val = match v {
        Value::Bw => {
            if e.lat == 0 {
                0
            } else {
                (e.len as u128 * 1_000_000_000 / 1024 / e.lat as u128) as u64
            }
        }
        Value::Iops => 1,
        Value::Lat => e.lat,
        Value::Clat => e.clat,
        Value::Slat => e.slat,
    };
    let _ = writeln!(
        s,
        "{}, {val}, {}, {}, 0",
        e.t_ns / 1_000_000,
        u8::from(e.write),
        e.len
    );
}

fn hist_lines(job: &JobSpec, ivs: &[Interval], dirs: &[usize]) -> String {
    let mut s = String::new();
    let mut bins = vec![0u64; FIO_PLAT_NR];
    for iv in ivs {
        for &d in dirs {
            if iv.dirs[d].ios == 0 {
                continue;
            }
            bins.iter_mut().for_each(|b| *b = 0);
            for &(idx, c) in &iv.dirs[d].clat_buckets {
                bins[fio_plat_idx(bucket_range(idx).0)] += c as u64;
            }
            let _ = write!(s, "{}, {d}, {}", iv.end_ms, job.bs_min);
            for b in &bins {
                let _ = write!(s, ", {b}");
            }
            s.push('\n');
        }
    }
    s
}
