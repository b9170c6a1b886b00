//! A run over several hosts: a row per host (rank) and the start skew,
//! shown after the merged run's own output.

use super::table::Table;
use crate::Result;
use crate::dist::DistRun;
use serde_json::{Value, json};

/// The merged run in format `name`; fio's JSON gains a `hosts` array (a
/// row per host, as in the table) and `start_skew_ns`.
pub fn run(d: &DistRun, name: &str) -> Result<String> {
    let text = super::run(&d.run, name)?;
    if !name.starts_with("json") {
        return Ok(text);
    }
    let Ok(Value::Object(mut doc)) = serde_json::from_str::<Value>(&text) else {
        return Ok(text);
    };
    let starts = crate::dist::merge::start_offsets(&d.hosts);
    let hosts: Vec<Value> = (d.hosts.iter().zip(starts))
        .map(|(h, start)| {
            let t = h.totals.as_ref();
            let dir = |s: Option<&crate::runner::OpStats>| {
                json!({
                    "io_bytes": s.map(|s| s.bytes),
                    "total_ios": s.map(|s| s.ios()),
                    "iops": t.zip(s).map(|(t, s)| t.iops(s)),
                })
            };
            json!({
                "rank": h.rank,
                "host": h.host,
                "hostname": h.hostname,
                "state": if h.failed.is_some() { "failed" } else { "ok" },
                "error": h.failed,
                "start_offset_ns": start,
                "clock_offset_ns": h.clock_offset_ns,
                "read": dir(t.map(|t| &t.read)),
                "write": dir(t.map(|t| &t.write)),
            })
        })
        .collect();
    doc.insert("start_skew_ns".into(), json!(d.start_skew_ns()));
    doc.insert("hosts".into(), Value::Array(hosts));
    let mut out = serde_json::to_string_pretty(&Value::Object(doc)).expect("JSON serialises");
    out.push('\n');
    Ok(out)
}

/// The per-host table and the start skew, as text.
pub fn hosts(d: &DistRun) -> String {
    let mut tab = Table::new([
        "rank",
        "host",
        "hostname",
        "read IOPS",
        "read MiB/s",
        "write IOPS",
        "write MiB/s",
        "ios",
        "start (us)",
        "clock offset (us)",
        "state",
    ]);
    let starts = crate::dist::merge::start_offsets(&d.hosts);
    for (h, start) in d.hosts.iter().zip(starts) {
        let figures = match &h.totals {
            Some(t) => vec![
                format!("{:.0}", t.iops(&t.read)),
                format!("{:.1}", t.bw_bytes(&t.read) / 1048576.0),
                format!("{:.0}", t.iops(&t.write)),
                format!("{:.1}", t.bw_bytes(&t.write) / 1048576.0),
                (t.read.ios() + t.write.ios() + t.trim.ios()).to_string(),
                format!("+{:.0}", start.unwrap_or(0) as f64 / 1e3),
            ],
            None => vec!["-".into(); 6],
        };
        let mut row = vec![h.rank.to_string(), h.host.clone(), h.hostname.clone()];
        row.extend(figures);
        row.push(format!("{:+.0}", h.clock_offset_ns as f64 / 1e3));
        row.push(match &h.failed {
            Some(why) => format!("failed: {why}"),
            None => "ok".into(),
        });
        tab.push(row);
    }
    format!(
        "\nhosts ({} ranks; start skew {:.0} us: the latest rank's start after the earliest's)\n{}",
        d.hosts.len(),
        d.start_skew_ns() as f64 / 1e3,
        tab.text()
    )
}
