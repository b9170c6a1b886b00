//! A tree command's result as text (phases table, per-operation latency
//! lines and log2 histograms, counters) and as JSON.

use crate::metrics::format::bytes_iec;
use crate::render::log2;
use crate::render::table::{Table, fig};
use crate::tree::{Phase, TreeResult};
use serde_json::{Value, json};

fn dev(p: &Phase, f: fn(&crate::counters::DiskDelta) -> u64) -> String {
    if p.counters.disks.is_empty() {
        String::new()
    } else {
        p.counters.disks.iter().map(f).sum::<u64>().to_string()
    }
}

/// The phases as a table (seed 003's columns).
pub fn phases_table(t: &TreeResult) -> Table {
    let mut tab = Table::new([
        "phase",
        "ops",
        "time (s)",
        "ops/s",
        "dirs",
        "files",
        "inodes+",
        "inodes-",
        "bytes",
        "dev reads",
        "dev writes",
        "CPU %",
    ]);
    for p in &t.phases {
        let secs = p.elapsed_ns as f64 / 1e9;
        let ops = p.total_ops();
        tab.push(vec![
            p.name.clone(),
            ops.to_string(),
            fig(secs),
            if secs > 0.0 {
                fig(ops as f64 / secs)
            } else {
                "-".into()
            },
            p.dirs.to_string(),
            p.files.to_string(),
            p.inodes_created.to_string(),
            p.inodes_removed.to_string(),
            bytes_iec(p.bytes as f64),
            dev(p, |d| d.read_ios),
            dev(p, |d| d.write_ios),
            if secs > 0.0 {
                fig((p.cpu.user_us + p.cpu.sys_us) as f64 / 1e6 / secs * 100.0)
            } else {
                "-".into()
            },
        ]);
    }
    tab
}

/// Readable text.
pub fn text(t: &TreeResult) -> String {
    let mut s = format!("tree {} {}", t.command, t.dir.display());
    if let Some(d) = &t.dest {
        s.push_str(&format!(" -> {}", d.display()));
    }
    if let Some(sh) = &t.shape {
        s.push_str(&format!(
            ": dirs={} levels={} files={} size={} bs={} ({} directories, {} files), {} thread(s)",
            sh.dirs,
            sh.levels,
            sh.files,
            sh.size,
            sh.bs,
            sh.total_dirs(),
            sh.total_files(),
            t.threads
        ));
    }
    s.push_str("\n\n");
    s.push_str(&phases_table(t).text());
    if let Some(st) = t.stopped() {
        s.push_str(&format!("\nstopped early: {st}"));
        if let Some(sh) = &t.shape {
            let made_dirs: u64 = 1 + t.phases.first().map_or(0, |p| p.dirs);
            let made_files: u64 = t.phases.get(1).map_or(0, |p| p.files);
            s.push_str(&format!(
                ": made {made_dirs} of {} directories and {made_files} of {} files",
                sh.total_dirs(),
                sh.total_files()
            ));
        }
        s.push('\n');
    }
    for p in &t.phases {
        s.push_str(&format!("\n{} latency (ns):\n", p.name));
        for (op, h) in &p.ops {
            s.push_str(&format!(
                "  {op:<9} N={:<9} min={:<8} p50={:<8} p99={:<9} max={:<10} mean={:.0}\n",
                h.count(),
                h.min(),
                h.percentile(50.0),
                h.percentile(99.0),
                h.max(),
                h.mean()
            ));
        }
        for (op, h) in &p.ops {
            s.push('\n');
            s.push_str(&log2::render(&format!("  {op} latency (ns)"), h));
        }
    }
    s
}

/// JSON: the command, the shape, and per phase the figures, counters and
/// per-operation latency summaries (with the histograms when `bins`).
pub fn json(t: &TreeResult, bins: bool) -> Value {
    let phases: Vec<Value> = t
        .phases
        .iter()
        .map(|p| {
            let ops: serde_json::Map<String, Value> = p
                .ops
                .iter()
                .map(|(k, h)| {
                    let mut o = json!({
                        "N": h.count(), "min": h.min(), "max": h.max(), "mean": h.mean(),
                        "stddev": h.stddev(), "p50": h.percentile(50.0), "p99": h.percentile(99.0),
                    });
                    if bins {
                        o["histogram"] = serde_json::to_value(h).expect("serialise");
                    }
                    (k.clone(), o)
                })
                .collect();
            json!({
                "name": p.name, "elapsed_ns": p.elapsed_ns, "ops": p.total_ops(),
                "dirs": p.dirs, "files": p.files, "inodes_created": p.inodes_created,
                "inodes_removed": p.inodes_removed, "bytes": p.bytes,
                "stopped": p.stopped.as_ref().map(|s| s.to_string()),
                "cpu": p.cpu, "counters": p.counters, "latency_ns": ops,
            })
        })
        .collect();
    json!({
        "command": t.command, "dir": t.dir, "dest": t.dest, "shape": t.shape,
        "threads": t.threads, "started_unix": t.started_unix,
        "stopped": t.stopped().map(|s| s.to_string()),
        "phases": phases,
    })
}
