//! Seed 004's injected-latency part of log-scan (`--delay 1ms,10ms`): the
//! same scans on an iolab disk whose every I/O waits that long (dm-delay's
//! experiment, in user space): buffer size x buffered/O_DIRECT x cold/warm
//! per delay, and the sentence that states what a far device does.

use super::log_scan::{bw, iostat, scan_job};
use super::{LabCtx, arg};
use crate::disk::injector::Spec;
use crate::disk::serving::Serving;
use crate::error::Result;
use crate::render::table::{Table, fig};

/// What the injected part found: its table, its sentence, its runs.
pub struct Injected {
    /// delay x bs x mode.
    pub table: Table,
    /// The effect in one sentence.
    pub answer: String,
    /// Stored run ids.
    pub runs: Vec<i64>,
}

/// Runs the scans of `sizes` on one slow disk per delay of `ctx.delays`.
pub fn run(ctx: &mut LabCtx, sizes: &[&str]) -> Result<Injected> {
    // Each request pays the delay: 1 MiB files (the largest buffer) keep
    // 4 KiB O_DIRECT at 10 ms to 10 s a pass (256 requests per MiB).
    let each: u64 = 1 << 20;
    let mut t = Table::new([
        "delay",
        "bs",
        "mode",
        "cold MiB/s",
        "warm MiB/s",
        "r_await",
        "run",
    ]);
    let mut rows: Vec<(String, String, bool, f64, f64)> = Vec::new();
    let mut runs = Vec::new();
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
            size: 64 << 20,
            fs: "ext4".into(),
            seed: 1,
            ..Spec::default()
        })?;
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
            for direct in [false, true] {
                let mode = if direct { "O_DIRECT" } else { "buffered" };
                ctx.say(&format!("log-scan: --delay {delay}, {bs} {mode}"));
                for f in &files {
                    ctx.evict(std::path::Path::new(f))?;
                }
                let name = format!(
                    "scan-{delay}-{bs}-{}",
                    if direct { "direct" } else { "buffered" }
                );
                let args = scan_job(name, &files, each, bs, direct);
                let (r, id) = ctx.run_job(&args)?;
                runs.extend(id);
                let (cold, warm) = (bw(&r, 0), bw(&r, 1));
                let r_await = iostat(&r, "r_await");
                t.push(vec![
                    delay.clone(),
                    bs.to_string(),
                    mode.into(),
                    fig(cold),
                    fig(warm),
                    r_await,
                    id.map(|i| i.to_string()).unwrap_or_default(),
                ]);
                rows.push((delay.clone(), bs.to_string(), direct, cold, warm));
            }
        }
        disk.stop()?;
    }
    let far = delays.last().cloned().unwrap_or_default();
    let (small, large) = (sizes[0], sizes[sizes.len() - 1]);
    let pick = |bs: &str, direct: bool| {
        rows.iter()
            .find(|r| r.0 == far && r.1 == bs && r.2 == direct)
            .map_or((0.0, 0.0), |r| (r.3, r.4))
    };
    let (b_large, d_small, d_large) = (pick(large, false), pick(small, true), pick(large, true));
    let answer = format!(
        "With {far} per I/O, every O_DIRECT request pays the delay: {} MiB/s with {small} buffers, {} MiB/s with {large} \
         (buffer size is what is left to win); buffered {large} scans ran at {} MiB/s cold (readahead keeps requests in \
         flight) and {} MiB/s warm, from the page cache, untouched by the delay.",
        fig(d_small.0),
        fig(d_large.0),
        fig(b_large.0),
        fig(b_large.1),
    );
    Ok(Injected {
        table: t,
        answer,
        runs,
    })
}
