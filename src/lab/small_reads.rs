//! Seed 002: the irmin-pack pattern (random 50-300 B preads over a 3.5 MB
//! file) from one thread, then from 1..N threads; bandwidth against threads
//! and the knee after which more threads stop helping.

use super::{Lab, LabCtx, Outcome, arg};
use crate::error::Result;
use crate::render::chart::{Chart, Scale, Series};
use crate::render::table::{Table, fig};

/// One line for `lab list`.
pub const ABOUT: &str = "seed 002: random 50-300 B reads over 3.5 MB (irmin-pack), 1 thread then a thread sweep: bandwidth curve and knee";

/// What the lab does, for `lab small-reads --help`.
pub const DETAILS: &str = "Lays out a 3,500,000-byte file (--size to change) and keeps it in the page cache, \
         then runs random preads of 50-300 bytes (--ops per thread, default 200000, quick \
         20000) with 1, 2, ... threads up to twice the CPU count plus one (at least 4). \
         Reports bandwidth, IOPS and p99 per thread count and the knee: the last thread \
         count that still added 10 % or more.";

/// The small-reads lab.
pub struct SmallReads;

/// Gains below this (relative) count as "no longer scaling".
const KNEE_GAIN: f64 = 0.10;

/// The last thread count whose step still gained at least [`KNEE_GAIN`].
pub fn knee(points: &[(u32, f64)]) -> Option<u32> {
    let mut k = points.first()?.0;
    for w in points.windows(2) {
        if w[1].1 >= w[0].1 * (1.0 + KNEE_GAIN) {
            k = w[1].0;
        } else {
            break;
        }
    }
    Some(k)
}

impl Lab for SmallReads {
    fn details(&self) -> &'static str {
        DETAILS
    }

    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome> {
        let size = ctx.size.unwrap_or(3_500_000);
        let ops = ctx.ops(20_000, 200_000);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let max = (2 * cpus + 1).max(4);
        let file = ctx.dir.join("pack.dat");
        let mut pts = Vec::new();
        let mut t = Table::new([
            "threads", "MiB/s", "IOPS", "p50 (us)", "p99 (us)", "CPU %", "run",
        ]);
        let mut runs = Vec::new();
        let mut whys = Vec::new();
        for n in 1..=max {
            ctx.say(&format!("small-reads: {n} thread(s), {ops} reads each"));
            let args = vec![
                arg("name", format!("irmin{n}")),
                arg("filename", file.display()),
                arg("size", format!("{size}B")),
                "--bsrange=50-300".into(),
                "--rw=randread".into(),
                arg("number_ios", ops),
                arg("numjobs", n),
                "--thread".into(),
                "--group_reporting".into(),
                "--cache=warm".into(),
            ];
            let (r, id) = ctx.run_job(&args)?;
            let threads = if n == 1 {
                "1 thread".into()
            } else {
                format!("{n} threads")
            };
            whys.push(ctx.explain(&r, id).named(threads));
            let s = r.summary();
            let bw = s.get("bw_mib_s");
            pts.push((n, bw));
            runs.extend(id);
            t.push(vec![
                n.to_string(),
                fig(bw),
                fig(s.get("iops")),
                fig(s.get("p50_us")),
                fig(s.get("p99_us")),
                fig(s.get("cpu_pct")),
                id.map(|i| i.to_string()).unwrap_or_default(),
            ]);
        }
        let k = knee(&pts).unwrap_or(1);
        let at = |n: u32| pts.iter().find(|p| p.0 == n).map_or(0.0, |p| p.1);
        let best = pts
            .iter()
            .copied()
            .fold((1, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let mut o = Outcome::new(ctx.lab, "Small random reads and threads (seed 002)", t);
        o.setup = vec![
            format!(
                "file {} ({size} bytes) kept in the page cache (cache=warm)",
                file.display()
            ),
            format!("random preads of 50-300 B, {ops} per thread, 1..{max} threads on {cpus} CPUs"),
        ];
        o.answer = format!(
            "One thread read {} MiB/s; bandwidth grew to {} MiB/s at {k} threads (the knee: later steps add under {:.0} %), \
             and peaked at {} MiB/s with {} threads on this {cpus}-CPU machine. {} {}",
            fig(at(1)),
            fig(at(k)),
            KNEE_GAIN * 100.0,
            fig(best.1),
            best.0,
            whys[0].headline(),
            whys[whys.len() - 1].headline()
        );
        o.charts.push((
            "small-reads-threads".into(),
            Chart::Lines {
                title: "Random 50-300 B reads: bandwidth vs threads".into(),
                x_label: "threads (count)".into(),
                y_label: "bandwidth (MiB/s)".into(),
                series: vec![Series {
                    name: "MiB/s".into(),
                    spread: None,
                    points: pts.iter().map(|p| (p.0 as f64, p.1)).collect(),
                }],
                x_names: None,
                x_scale: Scale::Linear,
                y_scale: Scale::Linear,
            },
        ));
        o.runs = runs;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_is_the_last_step_that_still_scaled() {
        assert_eq!(
            knee(&[(1, 100.0), (2, 190.0), (3, 200.0), (4, 260.0)]),
            Some(2)
        );
        assert_eq!(knee(&[(1, 100.0), (2, 105.0)]), Some(1));
        assert_eq!(knee(&[(1, 100.0), (2, 150.0), (3, 200.0)]), Some(3));
        assert_eq!(knee(&[]), None);
    }
}
