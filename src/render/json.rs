//! fio's JSON schema (`jobs[].read.iops`, `.clat_ns.percentile["99.000000"]`,
//! ...) so fio tooling reads iolab's output, plus an `iolab` object per job
//! for what fio lacks. `json+` adds the histogram `bins` like fio's json+.

use super::Exporter;
pub use super::json_dir::percentile_key;
use super::json_dir::{
    BATCH_KEYS, dir_obj, lat_obj, latency_dists, percentiles, percents, rep_dir,
};
use crate::analysis::compare::Comparison;
use crate::counters::{COUNTERS, CounterDelta, DiskDelta};
use crate::metrics::LatencyHistogram;
use crate::metrics::histogram::FIO_PERCENTILES;
use crate::runner::cache::FileCache;
use crate::runner::{ReportEntry, RunResult, Totals};
use crate::store::{StoredRun, kind};
use crate::tree::TreeResult;
use serde_json::{Map, Value, json};

/// The JSON exporter.
pub struct Json {
    /// Include histogram bins (json+).
    pub bins: bool,
    /// Include each repetition in the `iolab` objects (off for the text
    /// and terse outputs, which read only fio's figures: 1,000
    /// repetitions would cost them tens of MB).
    pub repetitions: bool,
}

/// `json`.
pub const JSON: Json = Json {
    bins: false,
    repetitions: true,
};
/// `json+`.
pub const JSON_PLUS: Json = Json {
    bins: true,
    repetitions: true,
};

/// fio's figures for the text and terse outputs (no repetitions).
pub const FIO_FIGURES: Json = Json {
    bins: false,
    repetitions: false,
};

impl Exporter for Json {
    fn run(&self, r: &RunResult, _: &super::Here) -> crate::Result<String> {
        Ok(pretty(&self.value(r)))
    }

    fn table(&self, t: &super::table::Table) -> Option<String> {
        Some(t.json())
    }

    fn records(&self, r: &super::records::Records) -> Option<String> {
        Some(pretty(&r.json()))
    }

    fn tree(&self, t: &TreeResult) -> Option<String> {
        Some(pretty(&super::tree::json(t, self.bins)))
    }

    fn trace(&self, t: &crate::trace::store::StoredTrace) -> Option<String> {
        Some(pretty(&super::trace::value(t)))
    }

    fn exec(&self, e: &crate::exec::ExecResult) -> Option<String> {
        Some(pretty(&super::exec::value(e)))
    }

    fn comparison(&self, c: &Comparison) -> Option<String> {
        Some(pretty(&super::compare::json(c)))
    }

    fn stored(&self, r: &StoredRun, here: &super::Here) -> crate::Result<Option<String>> {
        Ok(Some(pretty(&stored_run(r, self.bins, here.when)?)))
    }

    fn stored_runs(&self, runs: &[StoredRun], here: &super::Here) -> crate::Result<Option<String>> {
        let all = runs
            .iter()
            .map(|r| stored_run(r, self.bins, here.when))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok(Some(pretty(&Value::Array(all))))
    }
}

/// Pretty JSON with a final newline.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values serialise") + "\n"
}

/// A stored run as fio-schema JSON (with histogram bins for json+) plus an
/// `iolab_run` object with what the store knows of it (`when` writes the
/// time it was stored).
pub fn stored_run(r: &StoredRun, bins: bool, when: fn(i64) -> String) -> crate::Result<Value> {
    let mut v = if r.kind == kind::TREE {
        super::tree::json(&r.tree_result()?, bins)
    } else if r.kind == kind::TRACE {
        super::trace::value(&crate::trace::store::load(r)?)
    } else if r.kind == kind::EXEC {
        super::exec::value(&crate::exec::store::load(r)?)
    } else if r.kind == kind::CALIBRATION {
        json!({ "calibration": r.decode::<Value>(kind::CALIBRATION, "calibration")? })
    } else {
        Json {
            bins,
            repetitions: true,
        }
        .value(&r.result()?)
    };
    if let Value::Object(o) = &mut v {
        o.insert(
            "iolab_run".into(),
            json!({
                "id": r.id,
                "stored": when(r.created_unix),
                "created_unix": r.created_unix,
                "label": r.label,
                "kind": r.kind,
                "status": r.status,
                "name": r.name,
                "command": r.command,
                "iolab_version": r.iolab_version,
                "sweep_id": r.sweep_id,
                "point": r.point,
                "environment": r.env,
                "summary": r.summary,
                "figures": super::records::figures_json(&r.summary.total),
            }),
        );
    }
    Ok(v)
}

fn cache_list<'a>(l: impl Iterator<Item = &'a FileCache>) -> Value {
    Value::Array(l.map(|f| json!(f)).collect())
}

impl Json {
    /// The whole document as a JSON value.
    pub fn value(&self, r: &RunResult) -> Value {
        let jobs: Vec<Value> = r.entries().iter().map(|e| self.job(r, e)).collect();
        let time = chrono_like(r.started_unix);
        let globals: Map<String, Value> = (r.jobs.first())
            .map_or(&[][..], |j| &j.global_options)
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let mut doc = json!({
            "fio version": format!("iolab-{}", env!("CARGO_PKG_VERSION")),
            "timestamp": r.started_unix,
            "timestamp_ms": r.started_unix * 1000,
            "time": time,
            "jobs": jobs,
            "disk_util": disk_util(r),
            "iolab": {
                "version": env!("CARGO_PKG_VERSION"),
                "interrupted": r.interrupted,
                "warnings": r.warnings,
            },
        });
        if !globals.is_empty() {
            doc["global options"] = Value::Object(globals);
        }
        doc
    }

    fn job(&self, r: &RunResult, e: &ReportEntry) -> Value {
        let job = &r.jobs[e.job];
        let t = &e.total;
        let interval = if job.logs.avg_msec > 0 {
            job.logs.avg_msec
        } else {
            1000
        };
        // As fio: the job's own options (of the entry's last job, as fio's
        // group report); those of [global] are given once.
        let last = &r.jobs[e.members.last().map_or(e.job, |m| m.0)];
        let opts: Map<String, Value> = (last.options.iter())
            .filter(|o| !last.global_options.contains(o))
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let (lns, lus, lms) = latency_dists(t);
        let reps: Vec<Value> = e
            .reps
            .iter()
            .take(if self.repetitions { usize::MAX } else { 0 })
            .enumerate()
            .map(|(i, rt)| {
                // A job takes part in repetitions 0..repeat, so entry i is repetition i.
                let rep = r.repetitions.get(i);
                json!({
                    "index": i + 1,
                    "runtime_ns": rt.runtime_ns,
                    "io_bytes": rt.io_bytes(),
                    "bw_bytes": if rt.runtime_ns > 0 { rt.io_bytes() as f64 * 1e9 / rt.runtime_ns as f64 } else { 0.0 },
                    "read": rep_dir(rt, &rt.read),
                    "write": rep_dir(rt, &rt.write),
                    "advise_ios": rt.advise.count(),
                    "usr_cpu": rt.usr_cpu(),
                    "sys_cpu": rt.sys_cpu(),
                    "cache_before": rep.map(|x| cache_list(r.entry_cache(x, e).map(|(b, _)| b))).unwrap_or(Value::Null),
                    "cache_after": rep.map(|x| cache_list(r.entry_cache(x, e).map(|(_, a)| a))).unwrap_or(Value::Null),
                    "counters": rep.map(|x| counters_obj(&x.counters, None)).unwrap_or(Value::Null),
                })
            })
            .collect();
        let log2 = |h: &LatencyHistogram| -> Value {
            h.log2_buckets()
                .into_iter()
                .map(|(v, c)| json!({"value": v, "count": c}))
                .collect()
        };
        let files: Vec<Value> = e
            .clones
            .iter()
            .flat_map(|&c| r.files[e.job][c as usize].iter())
            .map(|p| json!(p.display().to_string()))
            .collect();
        let mut doc = json!({
            "jobname": job.name,
            "groupid": e.groupid,
            // fio's EILSEQ (84) for a block that did not verify; the first
            // errno passed over under continue_on_error.
            "error": match (t.verify.failures.is_empty(), t.ignored.first_errno) {
                (false, _) => 84,
                (true, 0) => i32::from(!t.errors.is_empty()),
                (true, e) => e,
            },
            "eta": 0,
            "elapsed": t.runtime_ns.div_ceil(1_000_000_000),
            "job options": opts,
            "read": dir_obj(t, &t.read, Some((&[0], interval)), self.bins, &job.report),
            "write": dir_obj(t, &t.write, Some((&[1], interval)), self.bins, &job.report),
            "trim": dir_obj(t, &t.trim, Some((&[2], interval)), self.bins, &job.report),
            "sync": {
                // fio counts fsyncs here, not fdatasyncs (only their latencies).
                "total_ios": if job.files.fdatasync > 0 { 0 } else { t.fsync.count() },
                "lat_ns": lat_obj(&t.fsync, Some(percentiles(&job.report)), self.bins),
            },
            "job_runtime": t.runtime_ns / 1_000_000,
            "usr_cpu": t.usr_cpu(),
            "sys_cpu": t.sys_cpu(),
            "ctx": t.cpu.ctx,
            "majf": t.cpu.majf,
            "minf": t.cpu.minf,
            "iodepth_level": percents(&t.depth_counts, &["1", "2", "4", "8", "16", "32", ">=64"]),
            "iodepth_submit": percents(&t.submit_counts, &BATCH_KEYS),
            "iodepth_complete": percents(&t.complete_counts, &BATCH_KEYS),
            "latency_ns": lns,
            "latency_us": lus,
            "latency_ms": lms,
            "latency_depth": t.latency_depth.unwrap_or(job.iodepth),
            "latency_target": job.pacing.latency_target_us * 1000,
            "latency_percentile": job.pacing.latency_percentile,
            "latency_window": job.pacing.latency_window_us,
            "iolab": {
                "engine": job.engine,
                "rw": job.rw_name(),
                "clones": e.clones,
                "files": files,
                "prefetch": job.prefetch,
                "cache": job.cache.name(),
                "repeat": job.repeat,
                "seeds": e.clones.iter().map(|&c| crate::plan::clone_seed(job, c)).collect::<Vec<_>>(),
                "advise": {
                    "total_ios": t.advise.count(),
                    "lat_ns": lat_obj(&t.advise, Some(&FIO_PERCENTILES), self.bins),
                },
                "log2_ns": {
                    "read": log2(&t.read.lat),
                    "write": log2(&t.write.lat),
                    "advise": log2(&t.advise),
                    "fsync": log2(&t.fsync),
                },
                "iodepth": job.iodepth,
                "counters": counters_obj(&job_counters(r, e.job), Some(job_cache(r, e))),
                "time_series": time_series(t, job.logs.avg_msec),
                "repetitions": reps,
                "first_run_effect": e.first_run,
                "errors": t.errors,
                "verify": {
                    "method": job.verify.method.name(),
                    "verified_blocks": t.verify.verified,
                    "failures": t.verify.failures,
                },
            },
        });
        super::json_dir::hide_disabled(&mut doc, &job.pacing);
        super::json_dir::unify(&mut doc, t, interval, self.bins, &job.report);
        // fio writes `desc` only for a job that has a description.
        if let (Some(d), Some(o)) = (&job.description, doc.as_object_mut()) {
            o.insert("desc".into(), json!(d));
        }
        // ... and the errors passed over only under continue_on_error.
        if let (true, Some(o)) = (job.process.continue_on != 0, doc.as_object_mut()) {
            o.insert("total_err".into(), json!(t.ignored.count));
            o.insert("first_error".into(), json!(t.ignored.first_errno));
        }
        if let (Some(ss), Some(o)) = (&e.steady, doc.as_object_mut()) {
            o.insert("steadystate".into(), super::steady::json(ss));
        }
        doc
    }
}

/// The counters of the repetitions job `j` took part in, added up.
fn job_counters(r: &RunResult, j: usize) -> CounterDelta {
    let mut c = CounterDelta::default();
    for rep in r.repetitions.iter().take(r.jobs[j].repeat as usize) {
        c.add(&rep.counters);
    }
    c
}

/// Cache state of entry `e`'s files before its first and after its last
/// repetition.
fn job_cache(r: &RunResult, e: &ReportEntry) -> Value {
    let reps: Vec<_> = r
        .repetitions
        .iter()
        .take(r.jobs[e.job].repeat as usize)
        .collect();
    let (Some(first), Some(last)) = (reps.first(), reps.last()) else {
        return Value::Null;
    };
    let before: Vec<&FileCache> = r.entry_cache(first, e).map(|(b, _)| b).collect();
    let source = before
        .iter()
        .find_map(|f| f.state.as_ref().map(|s| s.source.as_ref()))
        .unwrap_or("cachestat");
    let files: Vec<Value> = before
        .iter()
        .zip(r.entry_cache(last, e).map(|(_, a)| a))
        .map(|(b, a)| json!({"path": b.path, "before": b.state, "after": a.state}))
        .collect();
    json!({"source": if source == "cachestat" { "cachestat(2)" } else { "mincore(2)" }, "files": files})
}

/// `iolab.counters`: every source named.
pub fn counters_obj(c: &CounterDelta, cache: Option<Value>) -> Value {
    let disks: Vec<Value> = c
        .disks
        .iter()
        .map(|d| {
            let mut v = serde_json::to_value(d).expect("serialisable");
            let io: Map<String, Value> = DiskDelta::IOSTAT_ORDER
                .iter()
                .map(|k| (k.to_string(), json!(d.iostat()[k])))
                .collect();
            v["iostat"] = Value::Object(io);
            v
        })
        .collect();
    let mut o = Map::new();
    o.insert("elapsed_ns".into(), json!(c.elapsed_ns));
    o.insert("disks".into(), json!(disks));
    // Every source has its key; `null` when this machine lacks it.
    for e in COUNTERS {
        let Some(d) = c.sources.get(e.name) else {
            o.insert(e.name.into(), Value::Null);
            continue;
        };
        let mut s = Map::new();
        s.insert("source".into(), json!(e.item.source()));
        s.extend(d.iter().map(|(k, v)| (k.clone(), json!(v))));
        s.extend(
            e.item
                .derived(d)
                .into_iter()
                .map(|(k, v)| (k.to_string(), json!(v))),
        );
        o.insert(e.name.into(), Value::Object(s));
    }
    if let Some(cache) = cache {
        o.insert("cachestat".into(), cache);
    }
    Value::Object(o)
}

/// fio's top-level `disk_util[]`: every disk over the whole run.
fn disk_util(r: &RunResult) -> Value {
    let mut c = CounterDelta::default();
    for rep in &r.repetitions {
        c.add(&rep.counters);
    }
    c.disks.iter().map(|d| d.fio_disk_util()).collect()
}

/// `iolab.time_series`: per interval IOPS, bandwidth and latency.
fn time_series(t: &Totals, avg_msec: u64) -> Value {
    let dir = |d: &crate::runner::series::IntervalDir, len_ms: u64| {
        let s = len_ms as f64 / 1000.0;
        json!({
            "ios": d.ios,
            "iops": d.ios as f64 / s,
            "bw_bytes": d.bytes as f64 / s,
            "lat_mean_ns": d.mean(d.lat_sum),
            "clat_p50_ns": d.clat_percentile(50.0),
            "clat_p99_ns": d.clat_percentile(99.0),
        })
    };
    let intervals: Vec<Value> = t
        .series
        .iter()
        .map(|iv| {
            json!({
                "t_ms": iv.end_ms,
                "len_ms": iv.len_ms,
                "read": dir(&iv.dirs[0], iv.len_ms),
                "write": dir(&iv.dirs[1], iv.len_ms),
            })
        })
        .collect();
    json!({
        "interval_ms": if avg_msec > 0 { avg_msec } else { 1000 },
        "intervals": intervals,
    })
}

/// `Sun Nov 22 12:00:00 2026`-style UTC time, like fio's `time` field:
/// what glibc's `asctime_r(gmtime_r(t))` leaves in a zeroed buffer (the
/// day padded to two places, at most 25 characters, an empty string or a
/// day 0 of January when the year does not fit C's `int`).
fn chrono_like(unix: u64) -> String {
    use chrono::{DateTime, Datelike};
    // 400 Gregorian years: the same days and weekdays again, so any time
    // is a time chrono holds plus whole cycles.
    const CYCLE: i64 = 146_097 * 86_400;
    let secs = unix as i64; // as C's time_t: the bits as a signed number
    let t = DateTime::from_timestamp(secs.rem_euclid(CYCLE), 0).expect("within 400 years");
    let year = i64::from(t.year()) + 400 * secs.div_euclid(CYCLE);
    // gmtime_r gives up on a year that does not fit `tm_year` after
    // setting it, before the month and day.
    let (tm_year, month, day) = match i32::try_from(year - 1900) {
        Ok(y) => (y, t.format("%b").to_string(), t.day()),
        Err(_) => ((year - 1900) as i32, "Jan".to_string(), 0),
    };
    if tm_year > i32::MAX - 1900 {
        return String::new();
    }
    let line = format!(
        "{} {month}{day:3} {} {}\n",
        t.format("%a"),
        t.format("%H:%M:%S"),
        1900 + tm_year
    );
    line[..line.len().min(25)].trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::chrono_like;

    /// As glibc's asctime_r(gmtime_r()) left them (checked against it
    /// over 200,000 times): the epoch, single-digit days padded with a
    /// space, a leap day, the last four-digit year and the first
    /// five-digit one, a six-digit year cut at 25 characters, a year past
    /// C's `int` (gmtime_r's half-filled time).
    #[test]
    fn time_is_asctime_of_utc() {
        for (unix, text) in [
            (0, "Thu Jan  1 00:00:00 1970"),
            (1_795_348_800, "Sun Nov 22 12:00:00 2026"),
            (1_772_694_489, "Thu Mar  5 07:08:09 2026"),
            (951_782_400, "Tue Feb 29 00:00:00 2000"),
            (253_402_300_799, "Fri Dec 31 23:59:59 9999"),
            (253_402_300_800, "Sat Jan  1 00:00:00 10000"),
            (4_793_826_735_515, "Tue Apr 27 17:38:35 15388"),
            (99_999_238_691_946_845, "Sat Jan  0 14:34:05 -1126"),
        ] {
            assert_eq!(chrono_like(unix), text, "{unix}");
        }
    }
}
