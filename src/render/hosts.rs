//! A run over several hosts: a row per host (rank) and the start skew,
//! shown after the merged run's own output.

use super::table::Table;
use crate::dist::DistRun;

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
    let first = d
        .hosts
        .iter()
        .filter(|h| h.totals.is_some())
        .map(|h| h.started_ns)
        .min();
    for h in &d.hosts {
        let figures = match &h.totals {
            Some(t) => vec![
                format!("{:.0}", t.iops(&t.read)),
                format!("{:.1}", t.bw_bytes(&t.read) / 1048576.0),
                format!("{:.0}", t.iops(&t.write)),
                format!("{:.1}", t.bw_bytes(&t.write) / 1048576.0),
                (t.read.ios() + t.write.ios() + t.trim.ios()).to_string(),
                format!(
                    "+{:.0}",
                    (h.started_ns - first.unwrap_or(h.started_ns)) as f64 / 1e3
                ),
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
