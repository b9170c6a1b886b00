//! fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`): one file per clone, `PREFIX_TYPE.N.log` (N fio's
//! thread number over all jobs), or one for all with `per_job_logs=0`;
//! lines `time_ms, value, ddir, bs[, offset], prio` (histogram logs:
//! `time_ms, ddir, bs,` then fio's 1856 latency bins), so fio's plotting
//! tools read them; `.log.fz` with `log_store_compressed`
//! ([`super::fio_log_samples`]).

use super::fio_log_samples::{Columns, Sample, SampleSink, prio_value};
use crate::job::{JobSpec, Mix};
use crate::metrics::recorder::bucket_range;
use crate::runner::iolog::IoLogEntry;
use crate::runner::series::Interval;
use crate::runner::{RunResult, Totals};
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;

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

/// fio's `plat_idx_to_val`: the value of bin `idx` that fio's json+
/// writes (the middle of the bin; exact below 128 ns).
pub fn fio_plat_val(idx: usize) -> u64 {
    if idx < 128 {
        return idx as u64;
    }
    let error_bits = (idx >> 6) as u32 - 1;
    let base = 1u64 << (error_bits + 6);
    base + (((idx % 64) as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// The samples of a histogram on fio's latency grid, as its json+ `bins`
/// are: (bin value, count), sorted, so fio's json+ tools read the same
/// percentiles from iolab's output.
pub fn fio_plat_bins(h: &crate::metrics::LatencyHistogram) -> Vec<(u64, u64)> {
    let mut bins = std::collections::BTreeMap::new();
    for (low, c) in h.bins_low() {
        *bins.entry(fio_plat_idx(low)).or_insert(0) += c;
    }
    bins.into_iter()
        .map(|(i, c)| (fio_plat_val(i), c))
        .collect()
}

/// One of fio's log files of a run, its lines made as it is written (a
/// per-I/O log of millions of lines is never held in memory).
pub struct LogFile<'a> {
    /// Where it goes.
    pub path: PathBuf,
    /// Added at the end of the file, not replacing it (fio's
    /// `per_job_logs=0`: every job appends to the one file).
    pub append: bool,
    job: &'a JobSpec,
    totals: Rc<Totals>,
    what: What,
}

/// What a log file holds.
#[derive(Clone, Copy)]
enum What {
    /// One value per interval, or per I/O with `log_avg_msec=0`.
    Values(Value),
    /// Latency bins per interval.
    Hist,
    /// Nothing (fio's slat log of a synchronous engine).
    Empty,
}

impl LogFile<'_> {
    /// Writes the file's lines to `w`.
    pub fn write_to(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let dirs = directions(self.job);
        match self.what {
            What::Values(v) => {
                let f = &self.job.log_format;
                let mut sink =
                    SampleSink::new(w, columns(self.job), f.store_compressed, f.compression);
                lines(&mut sink, self.job, &self.totals, &dirs, v)?;
                sink.finish()
            }
            What::Hist => {
                let t = &self.totals;
                hist_lines(
                    w,
                    self.job,
                    t.hist_series.as_deref().unwrap_or(&t.series),
                    &dirs,
                )
            }
            What::Empty => Ok(()),
        }
    }
}

/// The log files a run asked for; nothing is written here.
pub fn logs(r: &RunResult) -> Vec<LogFile<'_>> {
    let mut out = Vec::new();
    // fio numbers a log by the clone's thread number, counted over every
    // job of the run (a second job's first clone writes `_bw.2.log`).
    let mut threads_before = 0;
    for (j, job) in r.jobs.iter().enumerate() {
        let l = &job.logs;
        let first = threads_before;
        threads_before += job.numjobs;
        if l.bw.is_none() && l.lat.is_none() && l.iops.is_none() && l.hist.is_none() {
            continue;
        }
        let f = &job.log_format;
        for c in 0..job.numjobs {
            let mut t = Totals::default();
            for rep in &r.repetitions {
                for cr in rep.clones.iter().filter(|x| x.job == j && x.clone == c) {
                    t.add_sequential(&cr.totals);
                }
            }
            let totals = Rc::new(t);
            let n = first + c + 1;
            let mut add = |prefix: &str, kind: &str, what: What| {
                let fz = if f.store_compressed && !matches!(what, What::Hist) {
                    ".fz"
                } else {
                    ""
                };
                let path = if f.per_job {
                    format!("{prefix}_{kind}.{n}.log{fz}")
                } else {
                    format!("{prefix}_{kind}.log{fz}")
                };
                out.push(LogFile {
                    path: PathBuf::from(path),
                    append: !f.per_job,
                    job,
                    totals: totals.clone(),
                    what,
                })
            };
            if let Some(p) = &l.bw {
                add(p, "bw", What::Values(Value::Bw));
            }
            if let Some(p) = &l.iops {
                add(p, "iops", What::Values(Value::Iops));
            }
            if let Some(p) = &l.lat {
                add(p, "lat", What::Values(Value::Lat));
                add(p, "clat", What::Values(Value::Clat));
                let slat = if job.queued() {
                    What::Values(Value::Slat)
                } else {
                    What::Empty
                };
                add(p, "slat", slat);
            }
            if let Some(p) = &l.hist {
                add(p, "clat_hist", What::Hist);
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
        Mix::Trim => vec![2],
        Mix::TrimWrite => vec![1, 2],
    }
}

/// The columns of the job's logs, from `log_offset` and `log_prio`.
fn columns(job: &JobSpec) -> Columns {
    Columns {
        offset: job.log_format.offset,
        prio: job.log_format.prio,
    }
}

/// The priority value of the job's I/Os, as fio logs it.
fn job_prio(job: &JobSpec) -> u16 {
    job.process.ioprio().map_or(0, |(c, l)| prio_value(c, l))
}

fn lines(
    w: &mut SampleSink,
    job: &JobSpec,
    t: &Totals,
    dirs: &[usize],
    v: Value,
) -> std::io::Result<()> {
    if job.logs.avg_msec == 0 {
        let prio = job_prio(job);
        for log in &t.io_logs {
            log.for_each(|e| w.push(&per_io_sample(e, v, prio)))?;
        }
        return Ok(());
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
            w.push(&Sample {
                time_ms: iv.end_ms,
                val,
                ddir: d as u8,
                ..Sample::default()
            })?;
        }
    }
    Ok(())
}

fn per_io_sample(e: &IoLogEntry, v: Value, prio: u16) -> Sample {
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
    Sample {
        time_ms: e.t_ns / 1_000_000,
        val,
        ddir: e.ddir,
        bs: u64::from(e.len),
        offset: e.offset,
        prio,
    }
}

fn hist_lines(
    w: &mut dyn Write,
    job: &JobSpec,
    ivs: &[Interval],
    dirs: &[usize],
) -> std::io::Result<()> {
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
            write!(w, "{}, {d}, {}", iv.end_ms, job.bs_min)?;
            for b in &bins {
                write!(w, ", {b}")?;
            }
            writeln!(w)?;
        }
    }
    Ok(())
}

/// fio's `--bandwidth-log`: `agg-read_bw.log`, `agg-write_bw.log` and
/// `agg-trim_bw.log`, the bandwidth of every clone of the run summed per
/// interval (KiB/s), as `time_ms, KiB/s, ddir, 0, 0` lines. fio writes the
/// three files whatever the jobs did; a direction without I/O has none.
pub fn aggregate_bw(r: &RunResult) -> Vec<(PathBuf, String)> {
    let mut all = Totals::default();
    for rep in &r.repetitions {
        let mut side_by_side = Totals::default();
        rep.clones
            .iter()
            .for_each(|c| side_by_side.add_parallel(&c.totals));
        all.add_sequential(&side_by_side);
    }
    ["read", "write", "trim"]
        .iter()
        .enumerate()
        .map(|(d, name)| {
            let mut text = String::new();
            for iv in all.series.iter().filter(|iv| iv.dirs[d].ios > 0) {
                let secs = iv.len_ms.max(1) as f64 / 1000.0;
                let kib_s = (iv.dirs[d].bytes as f64 / 1024.0 / secs) as u64;
                text += &format!("{}, {kib_s}, {d}, 0, 0\n", iv.end_ms);
            }
            (PathBuf::from(format!("agg-{name}_bw.log")), text)
        })
        .collect()
}
