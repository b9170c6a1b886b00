//! Seed 000: random 8 KiB reads on a cold file, with `posix_fadvise(WILLNEED)`
//! issued N reads ahead, for N = 0 and a sweep; the speed-up, and where the
//! latency went (the pread misses cluster moves to the fadvise calls).

use super::{Lab, LabCtx, Outcome, arg, us};
use crate::error::Result;
use crate::render::chart::{self, Chart, Scale, Series};
use crate::render::log2;
use crate::render::table::{Table, fig};
use crate::runner::Totals;

/// One line for `lab list`.
pub const ABOUT: &str = "seed 000: cold random 8 KiB reads, fadvise(WILLNEED) N reads ahead vs none: speed-up and latency histograms";

/// What the lab does, for `lab prefetch --help`.
pub const DETAILS: &str = "Lays out one file (--size, default 1 GiB, quick 256 MiB; at most a quarter of the free \
         disk), then for each prefetch distance 0, 1, 2, 4, 8, 16, 32, 64 (quick: 0, 4, 16, 64) \
         evicts the file from the page cache and does --ops random 8 KiB preads (default 20000, \
         quick 4000) in the same order; three interleaved rounds (quick: one), the median shown. Reports IOPS, the speed-up over distance 0, and the \
         log2 histograms of pread and fadvise latency without and with the best distance.";

/// The prefetch lab.
pub struct Prefetch;

/// Bytes per read.
const BLOCK: u64 = 8 << 10;

fn totals(r: &crate::runner::RunResult) -> Totals {
    crate::render::run_charts::whole(r)
}

impl Lab for Prefetch {
    fn details(&self) -> &'static str {
        DETAILS
    }

    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome> {
        ctx.need_eviction()?;
        let mut size = ctx.size(256 << 20, 1 << 30);
        let mut ops = ctx.ops(4000, 20000);
        // Each 8 KiB block is read at most once per run (a second read
        // would hit the cache): the file must have `ops` blocks.
        let mut fitted = None;
        if ops > size / BLOCK {
            fitted = Some(if ctx.size.is_none() {
                size = ops * BLOCK;
                format!(
                    "file enlarged to {} MiB to hold --ops {ops} distinct 8 KiB blocks",
                    size >> 20
                )
            } else {
                let asked = ops;
                ops = (size / BLOCK).max(1);
                format!(
                    "--ops {asked} clamped to {ops}: a {} KiB file has {ops} blocks of 8 KiB, each read once per run",
                    size >> 10
                )
            });
        }
        if let Some(note) = &fitted {
            ctx.say(&format!("prefetch: {note}"));
        }
        let dists: &[u64] = if ctx.quick {
            &[0, 4, 16, 64]
        } else {
            &[0, 1, 2, 4, 8, 16, 32, 64]
        };
        let file = ctx.dir.join("prefetch.dat");
        // Several rounds over all distances, interleaved, so drift of the
        // device hits every distance alike; each row is the median round.
        let rounds = if ctx.quick { 1 } else { 3 };
        let mut tries: Vec<Vec<(Totals, Option<i64>)>> = vec![Vec::new(); dists.len()];
        let mut all_ids = Vec::new();
        for round in 0..rounds {
            for (i, &n) in dists.iter().enumerate() {
                ctx.say(&format!(
                    "prefetch: round {}/{rounds}, distance {n}: {ops} cold random 8 KiB reads",
                    round + 1
                ));
                let args = vec![
                    arg("name", format!("prefetch{n}")),
                    arg("filename", file.display()),
                    arg("size", size),
                    "--rw=randread".into(),
                    "--bs=8k".into(),
                    arg("number_ios", ops),
                    arg("prefetch", n),
                    "--cache=cold".into(),
                    "--randseed=4242".into(),
                ];
                let (r, id) = ctx.run_job(&args)?;
                all_ids.extend(id);
                tries[i].push((totals(&r), id));
            }
        }
        let rows: Vec<(u64, Totals, Option<i64>)> = dists
            .iter()
            .zip(tries)
            .map(|(&n, mut v)| {
                v.sort_by(|a, b| a.0.iops(&a.0.read).total_cmp(&b.0.iops(&b.0.read)));
                let (t, id) = v.swap_remove(v.len() / 2);
                (n, t, id)
            })
            .collect();
        let base = rows[0].1.iops(&rows[0].1.read);
        let mut t = Table::new([
            "prefetch",
            "IOPS",
            "speed-up",
            "pread p50 (us)",
            "pread p99 (us)",
            "fadvise p50 (us)",
            "run",
        ]);
        for (n, tot, id) in &rows {
            let lat = tot.read.clat_or_lat();
            t.push(vec![
                n.to_string(),
                fig(tot.iops(&tot.read)),
                format!("{:.2}x", tot.iops(&tot.read) / base),
                fig(us(lat.percentile(50.0))),
                fig(us(lat.percentile(99.0))),
                if tot.advise.count() > 0 {
                    fig(us(tot.advise.percentile(50.0)))
                } else {
                    "-".into()
                },
                id.map(|i| i.to_string()).unwrap_or_default(),
            ]);
        }
        let (best_n, best, _) = rows
            .iter()
            .max_by(|a, b| a.1.iops(&a.1.read).total_cmp(&b.1.iops(&b.1.read)))
            .expect("at least one distance");
        let none = &rows[0].1;
        let mut o = Outcome::new(ctx.lab, "Prefetch ahead on cold random reads (seed 000)", t);
        o.setup = vec![
            format!(
                "file {} ({} MiB), random 8 KiB preads, {ops} per run",
                file.display(),
                size >> 20
            ),
            "page cache evicted before every run (cache=cold, verified with cachestat)".into(),
        ];
        o.setup.extend(fitted);
        o.setup.extend([format!(
            "prefetch distances {dists:?}, same read order each run (randseed=4242), \
                 {rounds} interleaved round(s), the median shown"
        )]);
        o.answer = format!(
            "Prefetching {best_n} reads ahead made cold random 8 KiB reads {:.1}x faster ({} -> {} IOPS); \
             pread p50 fell from {} us to {} us as the device latency moved to the fadvise calls.",
            best.iops(&best.read) / base,
            fig(base),
            fig(best.iops(&best.read)),
            fig(us(none.read.clat_or_lat().percentile(50.0))),
            fig(us(best.read.clat_or_lat().percentile(50.0))),
        );
        o.text.push(log2::render(
            "pread latency (ns), prefetch=0",
            none.read.clat_or_lat(),
        ));
        o.text.push(log2::render(
            &format!("pread latency (ns), prefetch={best_n}"),
            best.read.clat_or_lat(),
        ));
        if best.advise.count() > 0 {
            o.text.push(log2::render(
                &format!("fadvise latency (ns), prefetch={best_n}"),
                &best.advise,
            ));
        }
        o.charts.push((
            "prefetch-iops".into(),
            Chart::Lines {
                title: "Cold random 8 KiB reads: IOPS vs prefetch distance".into(),
                x_label: "prefetch distance (reads ahead)".into(),
                y_label: "IOPS (I/Os per second)".into(),
                series: vec![Series {
                    name: "IOPS".into(),
                    spread: None,
                    points: rows
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (i as f64, r.1.iops(&r.1.read)))
                        .collect(),
                }],
                x_names: Some(rows.iter().map(|r| r.0.to_string()).collect()),
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
        ));
        let pre = format!("pread, prefetch={best_n}");
        let adv = format!("fadvise, prefetch={best_n}");
        let mut hists = vec![
            ("pread, prefetch=0", none.read.clat_or_lat()),
            (pre.as_str(), best.read.clat_or_lat()),
        ];
        if best.advise.count() > 0 {
            hists.push((adv.as_str(), &best.advise));
        }
        o.charts.push((
            "prefetch-latency".into(),
            chart::log2_histogram("Latency before and after prefetch", &hists),
        ));
        o.runs = all_ids;
        Ok(o)
    }
}
