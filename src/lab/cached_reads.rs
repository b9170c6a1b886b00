//! Seed 001: sequential reads of a file that fits in the page cache,
//! repeated; bandwidth per run, the first run against the later ones, and a
//! flamegraph of the read path when perf works.

use super::{Lab, LabCtx, Outcome, arg};
use crate::error::Result;
use crate::explain;
use crate::render::chart::{Chart, Scale, Series};
use crate::render::table::{Table, fig};
use crate::runner::Totals;

/// One line for `lab list`.
pub const ABOUT: &str = "seed 001: sequential 1 MiB reads of a file that fits in the page cache, 5 runs: first (cold) vs later runs, flamegraph";

/// What the lab does, for `lab cached-reads --help`.
pub const DETAILS: &str = "Lays out one file (--size, default 1 GiB, quick 128 MiB; at most a quarter of the \
         available memory), evicts it, then reads it sequentially in 1 MiB reads 5 times \
         without touching the cache in between (cache=keep, repeat=5): the first run reads \
         from the disk, the later ones from the page cache. Reports each run's bandwidth and \
         points out the first-run difference; with perf available, a flamegraph of the cached \
         runs' read path (lab-cached-reads.svg).";

/// The cached-reads lab.
pub struct CachedReads;

impl Lab for CachedReads {
    fn details(&self) -> &'static str {
        DETAILS
    }

    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome> {
        ctx.need_eviction()?;
        let mut size = ctx.size(128 << 20, 1 << 30);
        let ram = crate::sys::machine::meminfo("MemAvailable");
        if ctx.size.is_none() && ram > 0 {
            size = size.min(ram / 4);
        }
        let file = ctx.dir.join("cached.dat");
        let reps = 5;
        ctx.say(&format!(
            "cached-reads: laying out {} MiB and evicting it",
            size >> 20
        ));
        let lay = vec![
            arg("name", "layout"),
            arg("filename", file.display()),
            arg("size", size),
            "--number_ios=1".into(),
        ];
        ctx.run_job(&lay)?;
        ctx.evict(&file)?;
        ctx.say(&format!(
            "cached-reads: {reps} sequential passes of 1 MiB reads"
        ));
        let args = vec![
            arg("name", "seqread"),
            arg("filename", file.display()),
            arg("size", size),
            "--rw=read".into(),
            "--bs=1m".into(),
            "--cache=keep".into(),
            arg("repeat", reps),
        ];
        let (r, id) = ctx.run_job(&args)?;
        let entry = r.entries().into_iter().next().expect("one job");
        let bw = |t: &Totals| t.bw_bytes(&t.read) / (1 << 20) as f64;
        let mut t = Table::new(["run", "MiB/s", "p50 (us)", "device reads", "note"]);
        for (i, rep) in entry.reps.iter().enumerate() {
            let dev: u64 = r.repetitions[i]
                .counters
                .disks
                .iter()
                .map(|d| d.read_ios)
                .sum();
            t.push(vec![
                (i + 1).to_string(),
                fig(bw(rep)),
                fig(rep.read.clat_or_lat().percentile(50.0) as f64 / 1000.0),
                if r.repetitions[i].counters.disks.is_empty() {
                    "-".into()
                } else {
                    dev.to_string()
                },
                if i == 0 {
                    "cold: from the disk".into()
                } else {
                    "page cache".into()
                },
            ]);
        }
        let mut o = Outcome::new(
            ctx.lab,
            "Sequential reads of a cached file, repeated (seed 001)",
            t,
        );
        o.setup = vec![
            format!(
                "file {} ({} MiB), sequential 1 MiB preads, {reps} passes",
                file.display(),
                size >> 20
            ),
            "evicted once before the first pass; the cache is left alone between passes".into(),
        ];
        // The answer is the explanation of the first pass against the rest.
        let n = r.repetitions.len();
        let first = ctx.explain_reps(&r, id, 0..1).named("the first pass");
        let rest = ctx
            .explain_reps(&r, id, 1..n)
            .named(format!("the average later pass (2-{n})"));
        o.answer = explain::diff::explain_diff(first, rest)
            .sentences()
            .join(" ");
        o.answer.push_str(match entry.first_run {
            Some(_) => " The first pass stands out from the others by more than their spread.",
            None => " The first pass does not stand out from the others' spread.",
        });
        o.charts.push((
            "cached-reads-bw".into(),
            Chart::Lines {
                title: "Sequential reads: bandwidth per run".into(),
                x_label: "run (in order, 1 = first)".into(),
                y_label: "bandwidth (MiB/s)".into(),
                series: vec![Series {
                    name: "MiB/s".into(),
                    spread: None,
                    points: entry
                        .reps
                        .iter()
                        .enumerate()
                        .map(|(i, t)| (i as f64, bw(t)))
                        .collect(),
                }],
                x_names: Some((1..=entry.reps.len()).map(|i| i.to_string()).collect()),
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
        ));
        o.runs.extend(id);
        // The read path of the cached runs, when perf works here.
        let svg = ctx.dir.join("cached-reads-flamegraph.svg");
        match crate::profile::Profiler::start() {
            Ok(p) => {
                ctx.say("cached-reads: profiling 2 more cached passes with perf");
                let prof = vec![
                    arg("name", "seqread-profiled"),
                    arg("filename", file.display()),
                    arg("size", size),
                    "--rw=read".into(),
                    "--bs=1m".into(),
                    "--cache=keep".into(),
                    "--repeat=2".into(),
                ];
                let (_, id2) = ctx.run_job(&prof)?;
                o.runs.extend(id2);
                match p.finish(
                    &svg,
                    "iolab lab cached-reads: cached sequential 1 MiB reads",
                ) {
                    Ok(_) => o
                        .files
                        .push(("flamegraph of the cached read path".into(), svg)),
                    Err(e) => o.text.push(format!("no flamegraph: {e}")),
                }
            }
            Err(e) => o.text.push(format!("no flamegraph: {e}")),
        }
        Ok(o)
    }
}
