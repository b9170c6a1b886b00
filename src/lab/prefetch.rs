//! Seed 000: random 8 KiB reads on a cold file, with `posix_fadvise(WILLNEED)`
//! issued N reads ahead, for N = 0 and a sweep; the speed-up, and where the
//! latency went (the pread misses cluster moves to the fadvise calls).

use super::{Lab, LabCtx, Outcome, arg, us};
use crate::error::Result;
use crate::explain::{self, Explanation};
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
         quick 4000), each run with a fresh seed (a virtual disk's host caches offsets it served before: a \
         repeated order gets faster); three interleaved rounds (quick: one), the median shown. Reports IOPS, the \
         speed-up over distance 0, and the log2 histograms of pread and fadvise latency without and with the best \
         distance. With --reference, the bare loop the lab imitates (plain pread and fadvise calls over the same \
         offsets, nothing recorded) runs beside each run, first in every other round, and its speed-up is shown \
         beside iolab's.";

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

    fn takes_reference(&self) -> bool {
        true
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
        let mut tries: Vec<Vec<(Totals, Option<i64>, Explanation)>> = vec![Vec::new(); dists.len()];
        let mut refs: Vec<Vec<f64>> = vec![Vec::new(); dists.len()];
        let mut all_ids = Vec::new();
        let seed0 = fresh_seed();
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
                    arg("randseed", seed0 + (round * dists.len() + i) as u64),
                ];
                // The reference reads the same offsets; whichever goes
                // second may find them in the host's cache, so the order
                // alternates by round.
                let reference = |ctx: &mut LabCtx| -> Result<f64> {
                    ctx.evict(&file)?;
                    super::reference::bare(
                        &file,
                        &super::reference::reads(&args, size)?,
                        n as usize,
                    )
                };
                if ctx.reference && round % 2 == 1 {
                    refs[i].push(reference(ctx)?);
                }
                let (r, id) = ctx.run_job(&args)?;
                if ctx.reference && round % 2 == 0 {
                    refs[i].push(reference(ctx)?);
                }
                all_ids.extend(id);
                let why = ctx.explain(&r, id).named(format!("prefetch {n}"));
                tries[i].push((totals(&r), id, why));
            }
        }
        let mut whys = Vec::new();
        let rows: Vec<(u64, Totals, Option<i64>)> = dists
            .iter()
            .zip(tries)
            .map(|(&n, mut v)| {
                v.sort_by(|a, b| a.0.iops(&a.0.read).total_cmp(&b.0.iops(&b.0.read)));
                let (t, id, why) = v.swap_remove(v.len() / 2);
                whys.push(why);
                (n, t, id)
            })
            .collect();
        let base = rows[0].1.iops(&rows[0].1.read);
        let mut head = vec![
            "prefetch",
            "IOPS",
            "speed-up",
            "pread p50 (us)",
            "pread p99 (us)",
            "fadvise p50 (us)",
            "run",
        ];
        if ctx.reference {
            head.extend(["reference IOPS", "reference speed-up"]);
        }
        let mut t = Table::new(head);
        let ref_med: Vec<f64> = refs.iter().map(|v| median(v)).collect();
        for (k, (n, tot, id)) in rows.iter().enumerate() {
            let lat = tot.read.clat_or_lat();
            let mut row = vec![
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
            ];
            if ctx.reference {
                row.push(fig(ref_med[k]));
                row.push(format!("{:.2}x", ref_med[k] / ref_med[0]));
            }
            t.push(row);
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
            "prefetch distances {dists:?}, a fresh read order (randseed) each run, \
                 {rounds} interleaved round(s), the median shown"
        )]);
        if ctx.reference {
            o.setup.push(
                "reference: the bare loop (plain pread and fadvise(WILLNEED) calls, nothing timed per call \
                 or recorded) over the same offsets as each run, evicted first, before the run in every \
                 other round"
                    .into(),
            );
        }
        // The answer is the explanation of the best distance against none.
        let k = rows
            .iter()
            .position(|r| r.0 == *best_n)
            .expect("best is a row");
        let why = explain::diff::explain_diff(whys[0].clone(), whys[k].clone());
        o.answer = why.sentences().join(" ");
        if ctx.reference {
            let (ours, theirs) = (best.iops(&best.read) / base, ref_med[k] / ref_med[0]);
            o.answer.push_str(&format!(
                " The bare loop over the same offsets sped up {theirs:.2}x at distance {best_n} \
                 ({} -> {} IOPS): iolab's speed-up is {:+.1}% of it.",
                fig(ref_med[0]),
                fig(ref_med[k]),
                (ours / theirs - 1.0) * 100.0
            ));
        }
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

/// The median of `v` (0 when empty).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// A seed no earlier run used: the host of a virtual disk caches what it
/// served, so a read order run again gets faster.
fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (t ^ (std::process::id() as u64) << 32) % (1 << 40) + 1
}
