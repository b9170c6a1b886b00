//! The readable summary: fio-like figures per job, cache state, repetitions,
//! the first-run effect, and a dtrace-style log2 histogram per op type.

use super::Exporter;
use super::log2;
use crate::counters::{COUNTERS, CounterDelta, DiskDelta};
use crate::job::JobSpec;
use crate::metrics::LatencyHistogram;
use crate::metrics::format::{bytes_iec, bytes_si, si};
use crate::metrics::histogram::FIO_PERCENTILES;
use crate::runner::cache::FileCache;
use crate::runner::{OpStats, ReportEntry, RunResult, Totals};
use crate::store::{StoredRun, kind};
use crate::tree::TreeResult;
use std::fmt::Write;

/// The normal (text) exporter.
pub struct Normal;

impl Exporter for Normal {
    fn run(&self, r: &RunResult) -> crate::Result<String> {
        Ok(text(r))
    }

    fn table(&self, t: &super::table::Table) -> Option<String> {
        Some(t.text())
    }

    fn tree(&self, t: &TreeResult) -> Option<String> {
        Some(super::tree::text(t))
    }

    /// With the header `show` prints: id, label, command, environment.
    fn stored(&self, r: &StoredRun) -> crate::Result<Option<String>> {
        let body = if r.kind == kind::TREE {
            super::tree::text(&r.tree_result()?)
        } else {
            text(&r.result()?)
        };
        let when = crate::metrics::format::local_time(r.created_unix);
        Ok(Some(format!("{}\n{body}", super::stored::header(r, &when))))
    }
}

/// The run as text.
pub fn text(r: &RunResult) -> String {
    let mut out = String::new();
    for e in r.entries() {
        entry(&mut out, r, &e);
    }
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if r.interrupted {
        out.push_str("\nINTERRUPTED: the figures above cover only the part that ran.\n");
    }
    out
}

fn entry(out: &mut String, r: &RunResult, e: &ReportEntry) {
    let job = &r.jobs[e.job];
    let t = &e.total;
    let bs = if job.bs_min == job.bs_max {
        format!("{}", job.bs_min)
    } else {
        format!("{}-{}", job.bs_min, job.bs_max)
    };
    let _ = writeln!(
        out,
        "{}: (jobs={}): rw={}, bs={}, ioengine={}, prefetch={}, cache={}, repeat={}",
        job.name,
        e.clones.len(),
        job.rw_name(),
        bs,
        job.engine,
        job.prefetch,
        job.cache.name(),
        job.repeat
    );
    for (name, s) in [("read", &t.read), ("write", &t.write)] {
        if s.ios() > 0 {
            direction(out, name, (t, s), job);
        }
    }
    if t.advise.count() > 0 {
        lat_line(out, "advise", &t.advise);
    }
    if t.fsync.count() > 0 {
        lat_line(out, "fsync", &t.fsync);
    }
    let _ = writeln!(
        out,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
        t.usr_cpu(),
        t.sys_cpu(),
        t.cpu.ctx,
        t.cpu.majf,
        t.cpu.minf
    );
    for err in &t.errors {
        let _ = writeln!(out, "  error        : {err}");
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

/// One direction's lines; those of the times the job does not take
/// (`gtod_reduce`, `disable_*`) are left out, as fio.
fn direction(out: &mut String, name: &str, (t, s): (&Totals, &OpStats), job: &JobSpec) {
    let bw = t.bw_bytes(s);
    let p = &job.pacing;
    let _ = writeln!(
        out,
        "  {name}: IOPS={}, BW={}/s ({}/s)({}/{}msec)",
        si(t.iops(s)),
        bytes_iec(bw),
        bytes_si(bw),
        bytes_iec(s.bytes as f64),
        t.runtime_ns / 1_000_000
    );
    if s.slat.count() > 0 && !p.disable_slat {
        lat_line(out, "slat", &s.slat);
    }
    if !p.disable_clat {
        lat_line(out, "clat", s.clat_or_lat());
    }
    if s.clat.count() > 0 && !p.disable_lat {
        lat_line(out, " lat", &s.lat);
    }
    if p.disable_clat {
        return;
    }
    let _ = writeln!(out, "    clat percentiles (nsec):");
    let cells: Vec<String> = FIO_PERCENTILES
        .iter()
        .map(|&p| format!("{:5.2}th=[{:>6}]", p, s.clat_or_lat().percentile(p)))
        .collect();
    for row in cells.chunks(4) {
        let _ = writeln!(out, "     | {}", row.join(", "));
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
