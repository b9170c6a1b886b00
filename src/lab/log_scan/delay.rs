//! Seed 004's injected-latency part of log-scan (`--delay 1ms,10ms`): the
//! same scans on an iolab disk whose every I/O waits that long (dm-delay's
//! experiment, in user space): buffer size x buffered/O_DIRECT x cold/warm
//! per delay, each configuration repeated until its spread is known, and
//! the sentence that states what a far device does from the differences
//! that are significant ([`super::verdict`]).

use super::scan::{IOSTAT_COLUMNS, bw, iostat_value, scan_job, two};
use super::verdict::{AtDelay, MIN_SAMPLES, Passes, sentence};
use crate::analysis::stats::{mean, stddev};
use crate::disk::Spec;
use crate::disk::serving::Serving;
use crate::error::Result;
use crate::lab::{LabCtx, arg};
use crate::render::table::{Table, fig};
use std::collections::BTreeMap;

/// What the injected part found: its table, its sentence, its runs.
pub struct Injected {
    /// delay x bs x mode.
    pub table: Table,
    /// The effect in one sentence.
    pub answer: String,
    /// What was done, for the lab's setup lines.
    pub setup: Vec<String>,
    /// Stored run ids.
    pub runs: Vec<i64>,
}

/// How long passes go: O_DIRECT ones at most `cap_ms` each (4 KiB reads
/// at 10 ms would take 40 s a 16 MiB file; they have no cache, so a
/// partial pass is as cold as a whole one), buffered ones to the end (a
/// warm pass after a partial cold one would be half cold). Each
/// configuration gets [`MIN_SAMPLES`] passes and `min_ms` of cold passes;
/// those the sentence compares (the largest buffer), also until the
/// standard error of their mean is within [`SE_SHARE`] of it; at most
/// `max` passes.
struct Budget {
    cap_ms: u64,
    min_ms: u64,
    max: usize,
}

/// How well the compared means must be known: their standard error within
/// this share of them (a spread of 30% needs 36 passes, one of 10% 4).
const SE_SHARE: f64 = 0.05;

/// One configuration: its passes, the cold passes' time, their iostat.
#[derive(Default)]
struct Config {
    passes: Passes,
    cold_ms: f64,
    iostat: Vec<BTreeMap<&'static str, f64>>,
}

impl Config {
    /// True when it has passes enough; `compared`: the sentence compares
    /// it, so its mean must be known within [`SE_SHARE`] too.
    fn enough(&self, b: &Budget, compared: bool) -> bool {
        let x = &self.passes.cold;
        let n = x.len();
        let known = || stddev(x) / (n as f64).sqrt() <= SE_SHARE * mean(x);
        n >= b.max
            || (n >= MIN_SAMPLES && self.cold_ms >= b.min_ms as f64 && (!compared || known()))
    }

    /// The mean of iostat's `key` over the cold passes, two decimals.
    fn iostat(&self, key: &str) -> String {
        let v: Vec<f64> = self
            .iostat
            .iter()
            .filter_map(|m| m.get(key).copied())
            .collect();
        if v.is_empty() {
            "-".into()
        } else {
            two(mean(&v))
        }
    }
}

/// The readahead of the lab's disks in KiB: seed 004's dm-delay device's
/// (and most disks'). The kernel's own choice for a loop device varies
/// between attaches (128 or 2560 on Linux 6.18) and changes buffered scans
/// several times over.
const READ_AHEAD_KB: u32 = 128;

/// Bytes of an in-memory image for 4 files of `each` bytes: ext4's
/// journal and inode tables take up to a fifth, and small ones a few MiB.
fn image_size(each: u64) -> u64 {
    (4 * each + each + (32 << 20)).max(64 << 20)
}

/// Runs the scans of `sizes` over 4 files of `each` bytes (the lab's
/// `--size`) on one slow disk per delay of `ctx.delays`.
pub fn run(ctx: &mut LabCtx, sizes: &[&str], each: u64) -> Result<Injected> {
    let budget = if ctx.quick {
        Budget {
            cap_ms: 500,
            min_ms: 1000,
            max: 30,
        }
    } else {
        Budget {
            cap_ms: 2000,
            min_ms: 4000,
            max: 40,
        }
    };
    let mut headers = vec![
        "delay",
        "bs",
        "mode",
        "n",
        "cold MiB/s",
        "± sd",
        "warm MiB/s",
        "± sd",
    ];
    headers.extend(IOSTAT_COLUMNS);
    let mut t = Table::new(headers);
    let mut found: BTreeMap<(String, String, bool), Config> = BTreeMap::new();
    let mut runs = Vec::new();
    let mut whys: BTreeMap<(String, bool), String> = BTreeMap::new();
    let mut read_ahead = None;
    let delays = ctx.delays;
    for delay in delays {
        let dir = ctx.dir.join(format!("disk-{delay}"));
        ctx.say(&format!(
            "log-scan: an iolab disk with --delay {delay} at {}",
            dir.display()
        ));
        let disk = Serving::start(Spec {
            dir: dir.clone(),
            layer: "block".into(),
            size: image_size(each),
            fs: "ext4".into(),
            read_ahead_kb: Some(READ_AHEAD_KB),
            seed: 1,
            ..Spec::default()
        })?;
        read_ahead = disk.loop_read_ahead_kb().or(read_ahead);
        let files: Vec<String> = (0..4)
            .map(|i| dir.join(format!("log.{i}")).display().to_string())
            .collect();
        for f in &files {
            ctx.run_job(&[
                arg("name", "layout"),
                arg("filename", f),
                arg("size", each),
                "--number_ios=1".into(),
            ])?;
        }
        disk.set(vec![("delay".into(), delay.clone())])?;
        for bs in sizes {
            let mut sides = [Config::default(), Config::default()];
            // Buffered and O_DIRECT passes alternate: a slower moment of
            // the machine falls on both.
            let compared = *bs == sizes[sizes.len() - 1];
            while !sides.iter().all(|c| c.enough(&budget, compared)) {
                for (side, direct) in [false, true].into_iter().enumerate() {
                    let mode = if direct { "direct" } else { "buffered" };
                    ctx.say(&format!(
                        "log-scan: --delay {delay}, {bs} {mode}, pass {}",
                        sides[side].passes.cold.len() + 1
                    ));
                    for f in &files {
                        ctx.evict(std::path::Path::new(f))?;
                    }
                    let name = format!("scan-{delay}-{bs}-{mode}");
                    let mut args = scan_job(name, &files, each, bs, direct);
                    if direct {
                        args.push(arg("runtime", format!("{}ms", budget.cap_ms)));
                    }
                    let (r, id) = ctx.run_job(&args)?;
                    runs.extend(id);
                    if *bs == sizes[0] {
                        let pass = format!("with --delay {delay}, the cold {bs} {mode} pass");
                        whys.insert(
                            (delay.clone(), direct),
                            ctx.explain_reps(&r, id, 0..1).named(pass).headline(),
                        );
                    }
                    let c = &mut sides[side];
                    c.passes.cold.push(bw(&r, 0));
                    c.passes.warm.push(bw(&r, 1));
                    c.cold_ms += r.rep_totals(0).runtime_ns as f64 / 1e6;
                    c.iostat.push(
                        IOSTAT_COLUMNS
                            .iter()
                            .filter_map(|k| Some((*k, iostat_value(&r, k)?)))
                            .collect(),
                    );
                }
            }
            for (c, direct) in sides.into_iter().zip([false, true]) {
                let (cold, warm) = (&c.passes.cold, &c.passes.warm);
                let mut row = vec![
                    delay.clone(),
                    bs.to_string(),
                    if direct { "O_DIRECT" } else { "buffered" }.into(),
                    cold.len().to_string(),
                    fig(mean(cold)),
                    fig(stddev(cold)),
                    fig(mean(warm)),
                    fig(stddev(warm)),
                ];
                row.extend(IOSTAT_COLUMNS.iter().map(|k| c.iostat(k)));
                t.push(row);
                found.insert((delay.clone(), bs.to_string(), direct), c);
            }
        }
        disk.stop()?;
    }
    let (small, large) = (sizes[0], sizes[sizes.len() - 1]);
    let passes = |delay: &str, bs: &str, direct: bool| {
        &found[&(delay.to_string(), bs.to_string(), direct)].passes
    };
    let at: Vec<AtDelay> = delays
        .iter()
        .map(|d| AtDelay {
            delay: d,
            small,
            large,
            buffered: passes(d, large, false),
            direct: passes(d, large, true),
            direct_small: passes(d, small, true),
        })
        .collect();
    let ra = read_ahead.map_or_else(|| "?".into(), |kb| kb.to_string());
    let setup = vec![
        format!(
            "then the same scans of 4 logs of {} MiB on an iolab disk per delay ({}): every I/O waits that long; \
             the loop device reads ahead {ra} KiB (read_ahead_kb, as seed 004's dm device)",
            each >> 20,
            delays.join(", ")
        ),
        format!(
            "on those disks each configuration is repeated, buffered and O_DIRECT in turn, until each has \
             {MIN_SAMPLES} passes and {} ms of cold passes, and with {large} buffers until the standard \
             error of its mean is within {}% of it (at most {} passes; O_DIRECT passes stop after {} ms): \
             mean ± sd over n, iostat's columns averaged; a side is named faster only with Welch's p < 0.05",
            budget.min_ms,
            SE_SHARE * 100.0,
            budget.max,
            budget.cap_ms
        ),
    ];
    let mut answer = sentence(&at);
    for w in whys.values() {
        answer.push(' ');
        answer.push_str(w);
    }
    Ok(Injected {
        table: t,
        answer,
        setup,
        runs,
    })
}
