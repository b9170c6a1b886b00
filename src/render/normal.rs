//! The readable summary: fio's normal output ([`super::fio_text`]), each
//! job's block followed by iolab's figures: cache state, repetitions, the
//! first-run effect, what the kernel counted, and a dtrace-style log2
//! histogram per op type.

use super::Exporter;
use super::fio_text;
use super::log2;
use crate::counters::{COUNTERS, CounterDelta, DiskDelta};
use crate::job::JobSpec;
use crate::metrics::LatencyHistogram;
use crate::metrics::format::{bytes_iec, si};
use crate::runner::cache::FileCache;
use crate::runner::{ReportEntry, RunResult};
use crate::store::{StoredRun, kind};
use crate::tree::TreeResult;
use std::fmt::Write;

/// The normal (text) exporter.
pub struct Normal;

impl Exporter for Normal {
    fn run(&self, r: &RunResult, _: &super::Here) -> crate::Result<String> {
        Ok(text(r))
    }

    fn table(&self, t: &super::table::Table) -> Option<String> {
        Some(t.text())
    }

    fn tree(&self, t: &TreeResult) -> Option<String> {
        Some(super::tree::text(t))
    }

    fn trace(&self, t: &crate::trace::store::StoredTrace) -> Option<String> {
        Some(super::trace::text(t))
    }

    fn exec(&self, e: &crate::exec::ExecResult) -> Option<String> {
        Some(super::exec::text(e))
    }

    /// With the header `show` prints: id, label, command, environment.
    fn stored(&self, r: &StoredRun, here: &super::Here) -> crate::Result<Option<String>> {
        let body = if r.kind == kind::TREE {
            super::tree::text(&r.tree_result()?)
        } else if r.kind == kind::TRACE {
            super::trace::text(&crate::trace::store::load(r)?)
        } else if r.kind == kind::EXEC {
            super::exec::text(&crate::exec::store::load(r)?)
        } else if r.kind == kind::CALIBRATION {
            calibration(&r.decode::<serde_json::Value>(kind::CALIBRATION, "calibration")?)
        } else {
            text(&r.result()?)
        };
        let when = (here.when)(r.created_unix);
        Ok(Some(format!("{}\n{body}", super::stored::header(r, &when))))
    }
}

/// A stored calibration (`iolab calibrate`): its ceilings, one a line.
fn calibration(v: &serde_json::Value) -> String {
    let mut out =
        String::from("Ceilings measured by iolab calibrate (iolab explain cites them):\n");
    for (k, x) in v.as_object().into_iter().flatten() {
        out.push_str(&format!("  {k}: {x}\n"));
    }
    out
}

/// The run as text: fio's layout ([`fio_text`]: the job lines, each
/// job's block, the run status groups, the disk stats), each job's block
/// followed by iolab's own figures.
pub fn text(r: &RunResult) -> String {
    let doc = super::json::FIO_FIGURES.value(r);
    let jobs = doc["jobs"].as_array().cloned().unwrap_or_default();
    let time = doc["time"].as_str().unwrap_or("");
    let entries = r.entries();
    let mut out = String::new();
    let groups = crate::job::groups::lifecycle::groupids(&r.jobs);
    for (job, g) in r.jobs.iter().zip(&groups) {
        job_line(&mut out, job, *g);
    }
    let threads: u32 = r.jobs.iter().map(|j| j.numjobs).sum();
    let _ = writeln!(
        out,
        "iolab-{}\nStarting {threads} thread{}\n",
        env!("CARGO_PKG_VERSION"),
        if threads == 1 { "" } else { "s" }
    );
    for (e, job) in entries.iter().zip(&jobs) {
        fio_text::job_block(&mut out, job, e.members.len(), r.pid, time);
        if let Some(ss) = &e.steady {
            out.push_str(&super::steady::line(ss));
        }
        iolab_figures(&mut out, r, e);
    }
    fio_text::group_stats(&mut out, &jobs);
    fio_text::disk_stats(&mut out, &doc["disk_util"]);
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if r.interrupted {
        out.push_str("\nINTERRUPTED: the figures above cover only the part that ran.\n");
    }
    out
}

/// fio's line for a job before it starts: `NAME: (g=0): rw=randread,
/// bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, ioengine=psync,
/// iodepth=1`.
fn job_line(out: &mut String, job: &JobSpec, groupid: u32) {
    let range = |(lo, hi): (u64, u64)| {
        let n = |v| fio_text::num2str(v, 4, 1, true, fio_text::Unit::Byte);
        format!("{}-{}", n(lo), n(hi))
    };
    let [r, w] = job.access.sizes;
    let _ = writeln!(
        out,
        "{}: (g={groupid}): rw={}, bs=(R) {}, (W) {}, (T) {}, ioengine={}, iodepth={}",
        job.name,
        job.rw_name(),
        range(r),
        range(w),
        range(job.access.trim_bs.unwrap_or(r)),
        job.engine,
        job.iodepth
    );
    if job.numjobs > 1 {
        out.push_str("...\n");
    }
}

/// iolab's figures of one reported job, after fio's block: its own keys,
/// the advice calls, what the kernel counted, cache state, repetitions, the
/// first-run effect and a log2 histogram per op type.
fn iolab_figures(out: &mut String, r: &RunResult, e: &ReportEntry) {
    let job = &r.jobs[e.job];
    let t = &e.total;
    let _ = writeln!(
        out,
        "  iolab        : prefetch={}, cache={}, repeat={}",
        job.prefetch,
        job.cache.name(),
        job.repeat
    );
    if t.advise.count() > 0 {
        lat_line(out, "advise", &t.advise);
    }
    for err in &t.errors {
        let _ = writeln!(out, "  error        : {err}");
    }
    if t.ignored.count > 0 {
        let _ = writeln!(
            out,
            "  errors       : total={} passed over (continue_on_error), first: {}",
            t.ignored.count, t.ignored.first
        );
    }
    if let Some(ss) = &e.steady {
        out.push_str(&super::steady::line(ss));
    }
    let mut c = CounterDelta::default();
    for rep in r.repetitions.iter().take(job.repeat as usize) {
        c.add(&rep.counters);
    }
    counters(out, &c);
    for (i, rep) in r.repetitions.iter().enumerate().take(e.reps.len()) {
        for (b, a) in r.entry_cache(rep, e) {
            let _ = writeln!(
                out,
                "  cache #{:<5}: {} before {}, after {}",
                i + 1,
                b.path.display(),
                cache_text(b),
                cache_text(a)
            );
        }
    }
    if e.reps.len() > 1 {
        for (i, rt) in e.reps.iter().enumerate() {
            let bw = rt.io_bytes() as f64 * 1e9 / rt.runtime_ns.max(1) as f64;
            let _ = writeln!(
                out,
                "  rep #{:<7}: {}/s, {} IOPS, {:.1} ms",
                i + 1,
                bytes_iec(bw),
                si(rt.iops(&rt.read) + rt.iops(&rt.write)),
                rt.runtime_ns as f64 / 1e6
            );
        }
    }
    if let Some(f) = e.first_run {
        let _ = writeln!(
            out,
            "  first-run effect: repetition 1 ran at {}/s, the others at {}/s on average ({}/s to {}/s)",
            bytes_iec(f.first),
            bytes_iec(f.rest_mean),
            bytes_iec(f.rest_min),
            bytes_iec(f.rest_max)
        );
    }
    out.push('\n');
    for (name, h) in [
        ("read", t.read.clat_or_lat()),
        ("write", t.write.clat_or_lat()),
        ("trim", t.trim.clat_or_lat()),
        ("advise", &t.advise),
        ("fsync", &t.fsync),
    ] {
        if h.count() > 0 && !(job.pacing.disable_clat && matches!(name, "read" | "write")) {
            out.push_str(&log2::render(&format!("{name} latency (ns)"), h));
            out.push('\n');
        }
    }
}

/// What the kernel counted: iostat's columns per disk, logical vs physical
/// bytes, faults and reclaim.
fn counters(out: &mut String, c: &CounterDelta) {
    for d in &c.disks {
        let io = d.iostat();
        let via = if d.disk.via.is_empty() {
            String::new()
        } else {
            format!(" (via {})", d.disk.via.join(" -> "))
        };
        let _ = writeln!(out, "  disk {}{via} [/proc/diskstats]:", d.disk.name);
        let head: Vec<String> = DiskDelta::IOSTAT_ORDER
            .iter()
            .map(|k| format!("{k:>9}"))
            .collect();
        let vals: Vec<String> = DiskDelta::IOSTAT_ORDER
            .iter()
            .map(|k| format!("{:>9.2}", io[k]))
            .collect();
        let _ = writeln!(out, "    {}", head.join(""));
        let _ = writeln!(out, "    {}", vals.join(""));
        let _ = writeln!(
            out,
            "    reads={} writes={} (completed by the device)",
            d.read_ios, d.write_ios
        );
    }
    for e in COUNTERS {
        if let Some(line) = c.sources.get(e.name).and_then(|d| e.item.line(d)) {
            let _ = writeln!(out, "  {} [{}]: {line}", e.item.label(), e.item.source());
        }
    }
}

fn cache_text(c: &FileCache) -> String {
    match &c.state {
        Some(s) => format!(
            "{:.1}% cached ({}/{} pages, {})",
            s.percent(),
            s.cached,
            s.pages,
            s.source
        ),
        None => "unknown".into(),
    }
}

fn lat_line(out: &mut String, name: &str, h: &LatencyHistogram) {
    let _ = writeln!(
        out,
        "    {name} (nsec): min={}, max={}, avg={:.2}, stdev={:.2}, N={}",
        h.min(),
        h.max(),
        h.mean(),
        h.stddev(),
        h.count()
    );
}
