//! Stored runs as text: the header `show` prints above a result, the
//! environment in a few lines, and the summary table of `history`/`export`.

use crate::metrics::figures::METRICS;
use crate::metrics::format::bytes_iec;
use crate::render::table::{Table, fig};
use crate::store::StoredRun;
use crate::sys::environment::{DiskEnv, Environment};

/// The environment in a few readable lines.
pub fn environment(e: &Environment) -> String {
    if e.kernel.is_empty() {
        return format!("environment not recorded ({})\n", e.hostname);
    }
    let mut s = format!(
        "host {}: {}\n  {} CPUs ({}), {} memory\n",
        e.hostname,
        e.kernel,
        e.cpus,
        if e.cpu_model.is_empty() {
            "model unknown"
        } else {
            &e.cpu_model
        },
        bytes_iec(e.memory_bytes as f64)
    );
    for f in &e.files {
        let disks: Vec<String> = f.disks.iter().map(disk).collect();
        s.push_str(&format!(
            "  {}: {} {} on {} [{}]{}\n",
            f.path.display(),
            f.fs_type,
            f.mount_source,
            f.mount_point,
            f.mount_options,
            if disks.is_empty() {
                String::new()
            } else {
                format!(", disk {}", disks.join(", "))
            }
        ));
        let same = |g: &crate::sys::environment::FileEnv| g.injected == f.injected;
        if !f.injected.is_empty() && !e.files.iter().take_while(|g| g.path != f.path).any(same) {
            s.push_str(&format!("    {}\n", f.injected));
        }
    }
    s
}

/// One disk in a few words: `vda (virtio_blk, scheduler none, non-rotational)`.
pub fn disk(d: &DiskEnv) -> String {
    format!(
        "{} ({}, scheduler {}, {})",
        d.name,
        if d.model.is_empty() {
            "model unknown"
        } else {
            &d.model
        },
        d.scheduler,
        if d.rotational {
            "rotational"
        } else {
            "non-rotational"
        }
    )
}

/// The lines `show` prints above the result.
pub fn header(r: &StoredRun, when: &str) -> String {
    let mut s = format!(
        "run {}  stored {}  kind {}  {}{}\ncommand: {}\nstored by iolab {}\n",
        r.id,
        when,
        r.kind,
        r.status,
        r.label
            .as_deref()
            .map(|l| format!("  label {l}"))
            .unwrap_or_default(),
        r.command,
        r.iolab_version
    );
    if let Some(p) = &r.point {
        let kv: Vec<String> = p.iter().map(|(k, v)| format!("{k}={v}")).collect();
        s.push_str(&format!(
            "sweep {} point: {}\n",
            r.sweep_id.unwrap_or(0),
            kv.join(" ")
        ));
    }
    s.push_str(&environment(&r.env));
    s
}

/// One row per run: id, when, label, kind, status (complete or
/// interrupted), job, sweep point, repetitions and every key figure that
/// any of the runs has.
pub fn summary_table(runs: &[StoredRun], when: impl Fn(i64) -> String) -> Table {
    let metrics: Vec<_> = METRICS
        .iter()
        .filter(|m| runs.iter().any(|r| r.summary.total.contains_key(m.key)))
        .collect();
    let mut headers: Vec<String> = [
        "id", "when", "label", "kind", "status", "job", "point", "reps",
    ]
    .map(String::from)
    .to_vec();
    headers.extend(metrics.iter().map(|m| m.label.to_string()));
    let mut t = Table::new(headers);
    for r in runs {
        let point = r
            .point
            .as_ref()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default();
        let mut row = vec![
            r.id.to_string(),
            when(r.created_unix),
            r.label.clone().unwrap_or_default(),
            r.kind.clone(),
            r.status.to_string(),
            r.name.clone(),
            point,
            r.summary.reps.len().to_string(),
        ];
        row.extend(metrics.iter().map(|m| {
            r.summary
                .total
                .get(m.key)
                .map(|v| fig(*v))
                .unwrap_or_default()
        }));
        t.push(row);
    }
    t
}
