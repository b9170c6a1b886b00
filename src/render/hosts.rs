//! Runs and trees over several hosts (ranks): a row per host and the start
//! skew, shown after the merged result's own output; in JSON, a `hosts`
//! array and `start_skew_ns` beside fio's keys.

use super::table::Table;
use crate::Result;
use crate::dist::merge::{HostRun, start_offsets, start_skew_ns};
use crate::dist::{DistRun, trees::DistTree};
use serde_json::{Value, json};

/// The merged run in format `name`, shown `here`, with its hosts.
pub fn run(d: &DistRun, name: &str, here: &super::Here) -> Result<String> {
    Ok(with_hosts(super::run(&d.run, name, here)?, name, &d.hosts))
}

/// The merged tree result in format `name`, with its ranks.
pub fn tree(d: &DistTree, name: &str) -> Result<String> {
    Ok(with_hosts(super::tree(&d.tree, name)?, name, &d.hosts))
}

/// `text` in format `name`: the table of `hosts` after normal text, a
/// `hosts` array in a JSON object; other formats unchanged.
fn with_hosts(text: String, name: &str, hosts: &[HostRun]) -> String {
    if name == "normal" {
        return text + &table(hosts);
    }
    if !name.starts_with("json") {
        return text;
    }
    let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(&text) else {
        return text;
    };
    doc.insert("start_skew_ns".into(), json!(start_skew_ns(hosts)));
    doc.insert("hosts".into(), Value::Array(json_rows(hosts)));
    let mut out = serde_json::to_string_pretty(&Value::Object(doc)).expect("JSON serialises");
    out.push('\n');
    out
}

fn json_rows(hosts: &[HostRun]) -> Vec<Value> {
    (hosts.iter().zip(start_offsets(hosts)))
        .map(|(h, start)| {
            let fig = |k: &str| h.figures.as_ref().and_then(|f| f.get(k).copied());
            let mut row = json!({
                "rank": h.rank,
                "host": h.host,
                "hostname": h.hostname,
                "state": if h.failed.is_some() { "failed" } else { "ok" },
                "error": h.failed,
                "start_offset_ns": start,
                "start_unix_ns": h.figures.as_ref().map(|_| h.started_ns),
                "clock_offset_ns": h.clock_offset_ns,
                "ops": fig("ops"),
                "iops": fig("iops"),
                "time_s": fig("time_s"),
            });
            if let Some(t) = &h.totals {
                let dir = |s: &crate::runner::OpStats| {
                    json!({"io_bytes": s.bytes, "total_ios": s.ios(), "iops": t.iops(s)})
                };
                row["read"] = dir(&t.read);
                row["write"] = dir(&t.write);
            }
            row
        })
        .collect()
}

/// The per-host table and the start skew, as text: read and write figures
/// for a run, operations for a tree.
fn table(hosts: &[HostRun]) -> String {
    let runs = hosts.iter().any(|h| h.totals.is_some());
    let mut head = vec!["rank", "host", "hostname"];
    head.extend(match runs {
        true => [
            "read IOPS",
            "read MiB/s",
            "write IOPS",
            "write MiB/s",
            "ios",
        ]
        .as_slice(),
        false => ["ops", "ops/s", "time (s)"].as_slice(),
    });
    head.extend(["start (us)", "clock offset (us)", "state"]);
    let mut tab = Table::new(head);
    for (h, start) in hosts.iter().zip(start_offsets(hosts)) {
        let fig = |k: &str| h.figures.as_ref().and_then(|f| f.get(k).copied());
        let figures = match (&h.totals, fig("ops")) {
            (Some(t), _) => vec![
                format!("{:.0}", t.iops(&t.read)),
                format!("{:.1}", t.bw_bytes(&t.read) / 1048576.0),
                format!("{:.0}", t.iops(&t.write)),
                format!("{:.1}", t.bw_bytes(&t.write) / 1048576.0),
                (t.read.ios() + t.write.ios() + t.trim.ios()).to_string(),
            ],
            (None, Some(ops)) if !runs => vec![
                format!("{ops:.0}"),
                format!("{:.0}", fig("iops").unwrap_or(0.0)),
                format!("{:.3}", fig("time_s").unwrap_or(0.0)),
            ],
            _ => vec!["-".into(); if runs { 5 } else { 3 }],
        };
        let mut row = vec![h.rank.to_string(), h.host.clone(), h.hostname.clone()];
        row.extend(figures);
        row.push(start.map_or("-".into(), |s| format!("+{:.0}", s as f64 / 1e3)));
        row.push(format!("{:+.0}", h.clock_offset_ns as f64 / 1e3));
        row.push(match &h.failed {
            Some(why) => format!("failed: {why}"),
            None => "ok".into(),
        });
        tab.push(row);
    }
    format!(
        "\nhosts ({} ranks; start skew {:.0} us: the latest rank's start after the earliest's)\n{}",
        hosts.len(),
        start_skew_ns(hosts) as f64 / 1e3,
        tab.text()
    )
}

/// The stored rows of a run's hosts (`iolab show`), as text.
pub fn stored(rows: &[crate::store::HostRow]) -> String {
    let mut tab = Table::new([
        "rank",
        "host",
        "hostname",
        "ops",
        "ops/s",
        "time (s)",
        "start (us)",
        "clock offset (us)",
        "state",
    ]);
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".into(), |v| format!("{v:.digits$}"));
    for h in rows {
        tab.push(vec![
            h.rank.to_string(),
            h.host.clone(),
            h.hostname.clone(),
            h.ops.map_or("-".into(), |v| v.to_string()),
            opt(h.iops, 0),
            opt(h.time_s, 3),
            h.start_offset_ns
                .map_or("-".into(), |s| format!("+{:.0}", s as f64 / 1e3)),
            format!("{:+.0}", h.clock_offset_ns as f64 / 1e3),
            match &h.error {
                Some(why) => format!("failed: {why}"),
                None => h.status.clone(),
            },
        ]);
    }
    format!("\nhosts ({} ranks)\n{}", rows.len(), tab.text())
}
