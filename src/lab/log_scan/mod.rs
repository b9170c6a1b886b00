//! Seed 004: scanning several log files sequentially with buffers from
//! 4 KiB to 1 MiB, buffered vs O_DIRECT, the first (cold) pass against a
//! later one, with iostat's view of the device. One scan is `scan`'s;
//! the same scans on injected slow disks, [`delay`], and their sentence,
//! [`verdict`].

use super::{Lab, LabCtx, Outcome, arg};
use crate::error::Result;
use crate::render::chart::{Chart, Scale, Series};
use crate::render::table::{Table, fig};

pub mod delay;
mod scan;
pub mod verdict;

use scan::{IOSTAT_COLUMNS, bw, iostat, scan_job};

/// One line for `lab list`.
pub const ABOUT: &str = "seed 004: sequential scan of several log files, 4 KiB..1 MiB buffers, buffered vs O_DIRECT, cold vs warm, iostat";

/// What the lab does, for `lab log-scan --help`.
pub const DETAILS: &str = "Lays out 4 log files (--size each, default 128 MiB, quick 16 MiB), then for each \
         buffer size (4k, 16k, 64k, 256k, 1m; quick 4k, 64k, 1m) and mode (buffered, \
         O_DIRECT) evicts them and scans them sequentially twice: the first pass cold, the \
         second with whatever the first left in the page cache. Reports MiB/s of both passes \
         and iostat's r/s, rareq-sz, r_await and %util for the cold pass. With --delay 1ms,10ms \
         (root), the same scans of 4 files of --size on an iolab disk per delay, reading ahead \
         128 KiB as seed 004's dm-delay device did, each configuration repeated (buffered and O_DIRECT in turn) until it has 3 passes and \
         1 s of cold passes (quick; else 4 s), and with the largest buffer until the standard error of \
         its mean is within 5% of it (at most 30 passes; else 40), O_DIRECT passes stopped after 0.5 s \
         (else 2 s): mean ± sd \
         over n passes, iostat's columns averaged, and a sentence that names the faster of buffered \
         and O_DIRECT only when Welch's test gives p < 0.05.";

/// The log-scan lab.
pub struct LogScan;

impl Lab for LogScan {
    fn details(&self) -> &'static str {
        DETAILS
    }

    fn run(&self, ctx: &mut LabCtx) -> Result<Outcome> {
        ctx.need_eviction()?;
        let each = ctx.size(16 << 20, 128 << 20) / 4 * 4;
        let sizes: &[&str] = if ctx.quick {
            &["4k", "64k", "1m"]
        } else {
            &["4k", "16k", "64k", "256k", "1m"]
        };
        let files: Vec<String> = (0..4)
            .map(|i| ctx.dir.join(format!("log.{i}")).display().to_string())
            .collect();
        // Lay out each log once (one job per file).
        ctx.say(&format!("log-scan: laying out 4 x {} MiB", each >> 20));
        for f in &files {
            let lay = vec![
                arg("name", "layout"),
                arg("filename", f),
                arg("size", each),
                "--number_ios=1".into(),
            ];
            ctx.run_job(&lay)?;
        }
        let mut t = Table::new([
            "bs",
            "mode",
            "cold MiB/s",
            "warm MiB/s",
            "r/s",
            "rareq-sz",
            "r_await",
            "%util",
            "run",
        ]);
        let mut rows: Vec<(String, bool, f64, f64)> = Vec::new();
        let mut whys = Vec::new();
        let mut runs = Vec::new();
        for bs in sizes {
            for direct in [false, true] {
                let mode = if direct { "O_DIRECT" } else { "buffered" };
                ctx.say(&format!("log-scan: {bs} {mode}"));
                for f in &files {
                    ctx.evict(std::path::Path::new(f))?;
                }
                let name = format!("scan-{bs}-{}", if direct { "direct" } else { "buffered" });
                let args = scan_job(name, &files, each, bs, direct);
                let (r, id) = ctx.run_job(&args)?;
                runs.extend(id);
                if *bs == sizes[0] {
                    let pass = format!("the cold {bs} {mode} pass");
                    whys.push(ctx.explain_reps(&r, id, 0..1).named(pass).headline());
                }
                let (cold, warm) = (bw(&r, 0), bw(&r, 1));
                t.push(
                    [bs.to_string(), mode.into(), fig(cold), fig(warm)]
                        .into_iter()
                        .chain(IOSTAT_COLUMNS.iter().map(|k| iostat(&r, k)))
                        .chain([id.map(|i| i.to_string()).unwrap_or_default()])
                        .collect(),
                );
                rows.push((bs.to_string(), direct, cold, warm));
            }
        }
        let pick = |bs: &str, direct: bool| {
            rows.iter()
                .find(|r| r.0 == bs && r.1 == direct)
                .expect("row")
        };
        let (small, large) = (sizes[0], sizes[sizes.len() - 1]);
        let b_large = pick(large, false);
        let d_small = pick(small, true);
        let d_large = pick(large, true);
        let mut o = Outcome::new(
            ctx.lab,
            "Scanning log files: buffer size, O_DIRECT, cold vs warm (seed 004)",
            t,
        );
        o.setup = vec![
            format!("4 log files of {} MiB in {}", each >> 20, ctx.dir.display()),
            "each configuration: files evicted, then two sequential passes (cold, then warm)"
                .into(),
        ];
        o.answer = format!(
            "Buffered {large} reads scanned the logs at {} MiB/s cold and {} MiB/s warm; O_DIRECT gets no readahead and \
             no cache: {} MiB/s with {small} buffers, {} MiB/s with {large}, the same on the second pass ({} MiB/s).",
            fig(b_large.2),
            fig(b_large.3),
            fig(d_small.2),
            fig(d_large.2),
            fig(d_large.3),
        );
        for w in &whys {
            o.answer.push(' ');
            o.answer.push_str(w);
        }
        let series = |direct: bool, warm: bool, name: &str| Series {
            name: name.into(),
            spread: None,
            points: sizes
                .iter()
                .enumerate()
                .map(|(i, bs)| {
                    let r = pick(bs, direct);
                    (i as f64, if warm { r.3 } else { r.2 })
                })
                .collect(),
        };
        o.charts.push((
            "log-scan-bw".into(),
            Chart::Lines {
                title: "Scanning logs: MiB/s vs buffer size".into(),
                x_label: "buffer size (bytes)".into(),
                y_label: "bandwidth (MiB/s, log scale)".into(),
                series: vec![
                    series(false, false, "buffered, cold"),
                    series(false, true, "buffered, warm"),
                    series(true, false, "O_DIRECT, cold"),
                    series(true, true, "O_DIRECT, warm"),
                ],
                x_names: Some(sizes.iter().map(|s| s.to_string()).collect()),
                x_scale: Scale::Linear,
                y_scale: Scale::Log,
            },
        ));
        if !ctx.delays.is_empty() {
            let inj = delay::run(ctx, sizes, each)?;
            o.setup.extend(inj.setup);
            o.text.push(format!(
                "On injected slow disks (iolab disk):\n\n{}",
                inj.table.text()
            ));
            o.answer = format!("{} {}", o.answer, inj.answer);
            runs.extend(inj.runs);
        }
        o.runs = runs;
        Ok(o)
    }

    fn takes_delays(&self) -> bool {
        true
    }
}
