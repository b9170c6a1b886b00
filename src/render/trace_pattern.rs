//! The access pattern of a trace's files (`trace::pattern`): a table per
//! file and direction, and the same as JSON.

use super::table::Table;
use crate::metrics::format::bytes_iec;
use crate::trace::imitate::{Row, Side};
use crate::trace::model::FileStats;
use crate::trace::pattern::{DirPattern, Pattern};
use serde_json::{Value, json};

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1000.0)
}

/// The files that have a pattern, with each direction they used.
fn rows(files: &[FileStats]) -> Vec<(&str, &'static str, &DirPattern)> {
    let mut out = Vec::new();
    for f in files {
        let Some(p) = &f.pattern else { continue };
        for (dir, d) in [("read", &p.read), ("write", &p.write)] {
            if d.ops > 0 {
                out.push((f.path.as_str(), dir, d));
            }
        }
    }
    out.sort_by(|a, b| b.2.bytes.cmp(&a.2.bytes).then(a.0.cmp(b.0)));
    out
}

/// Per file and direction: calls, bytes, size p50 and p90, the share at a
/// random offset, bytes moved again (re-reads, overwrites) and the median
/// think time before a call (µs). `None` when no file has a pattern.
pub fn table(files: &[FileStats]) -> Option<Table> {
    let rows = rows(files);
    if rows.is_empty() {
        return None;
    }
    let mut tab = Table::new([
        "file",
        "dir",
        "ops",
        "bytes",
        "size p50",
        "size p90",
        "random %",
        "re-read bytes",
        "think p50 us",
    ]);
    for (path, dir, d) in rows {
        tab.push(vec![
            path.to_string(),
            dir.to_string(),
            d.ops.to_string(),
            bytes_iec(d.bytes as f64),
            bytes_iec(d.sizes.percentile_low(50.0) as f64),
            bytes_iec(d.sizes.percentile_low(90.0) as f64),
            format!("{:.0}", 100.0 * d.random_share()),
            bytes_iec(d.repeat_bytes as f64),
            us(d.think.percentile(50.0)),
        ]);
    }
    Some(tab)
}

/// The table's text after a blank line, or nothing.
pub fn text(files: &[FileStats]) -> String {
    table(files).map_or(String::new(), |t| format!("\naccess pattern\n{}", t.text()))
}

fn dir_json(d: &DirPattern) -> Value {
    json!({
        "ops": d.ops,
        "bytes": d.bytes,
        "empty": d.empty,
        "vector": d.vector,
        "size_p50": d.sizes.percentile_low(50.0),
        "size_p90": d.sizes.percentile_low(90.0),
        "blocks": d.blocks.iter().map(|(b, n)| json!([b, n])).collect::<Vec<_>>(),
        "sequential": d.sequential,
        "random": d.random,
        "random_share": d.random_share(),
        "repeat_bytes": d.repeat_bytes,
        "think_p50_ns": d.think.percentile(50.0),
        "think_mean_ns": d.think_ns / d.think.count().max(1),
        "lat_p50_ns": d.lat.percentile(50.0),
    })
}

/// A file's pattern as JSON (`null` without one).
pub fn value(p: Option<&Pattern>) -> Value {
    let Some(p) = p else { return Value::Null };
    json!({
        "read": dir_json(&p.read),
        "write": dir_json(&p.write),
        "extent": p.extent,
        "first_ns": p.first_ns,
        "end_ns": p.end_ns,
        "fsync": p.fsync,
        "fdatasync": p.fdatasync,
        "advice": p.advice.iter().map(|(a, n)| json!([a, n])).collect::<Vec<_>>(),
        "direct": p.direct,
        "threads": p.threads,
    })
}

fn diff(a: f64, b: f64) -> String {
    if a == 0.0 {
        "-".into()
    } else {
        format!("{:+.1}", 100.0 * (b - a) / a)
    }
}

/// The trace beside the job's run (`iolab trace export --run`): per file
/// and direction calls, bytes, size p50 and p90, random share and the
/// sizes' shares, with the run's difference in percent (random share:
/// in points).
pub fn imitation(rows: &[Row]) -> Table {
    let mut tab = Table::new(["file", "dir", "figure", "trace", "run", "diff %"]);
    for r in rows {
        let (a, b) = (&r.trace, &r.run);
        let mut push = |fig: &str, x: String, y: String, d: String| {
            tab.push(vec![r.path.clone(), r.dir.into(), fig.into(), x, y, d]);
        };
        push(
            "ops",
            a.ops.to_string(),
            b.ops.to_string(),
            diff(a.ops as f64, b.ops as f64),
        );
        push(
            "bytes",
            bytes_iec(a.bytes as f64),
            bytes_iec(b.bytes as f64),
            diff(a.bytes as f64, b.bytes as f64),
        );
        for (fig, x, y) in [
            ("size p50", a.size_p50, b.size_p50),
            ("size p90", a.size_p90, b.size_p90),
        ] {
            push(
                fig,
                bytes_iec(x as f64),
                bytes_iec(y as f64),
                diff(x as f64, y as f64),
            );
        }
        push(
            "random %",
            format!("{:.1}", 100.0 * a.random_share),
            format!("{:.1}", 100.0 * b.random_share),
            format!("{:+.1} pt", 100.0 * (b.random_share - a.random_share)),
        );
        push("sizes", a.bssplit.clone(), b.bssplit.clone(), String::new());
    }
    tab
}

fn side_json(s: &Side) -> Value {
    json!({
        "ops": s.ops,
        "bytes": s.bytes,
        "size_p50": s.size_p50,
        "size_p90": s.size_p90,
        "random_share": s.random_share,
        "bssplit": s.bssplit,
    })
}

/// [`imitation`] as JSON: a list of {path, dir, trace, run}.
pub fn imitation_value(rows: &[Row]) -> Value {
    rows.iter()
        .map(|r| json!({"path": r.path, "dir": r.dir, "trace": side_json(&r.trace), "run": side_json(&r.run)}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::model::{Event, Trace};
    use crate::trace::pattern::analyse;

    /// A call `name` of `n` bytes at `off` by `tid` on file 0.
    fn ev(t_us: u64, tid: u32, name: &str, off: u64, n: i64) -> Event {
        Event {
            t_ns: t_us * 1000,
            tid,
            call: crate::trace::calls::by_name(name).unwrap().0,
            file: Some(0),
            offset: Some(off),
            len: n.max(0) as u64,
            result: n,
            ..Event::default()
        }
    }

    #[test]
    fn a_row_per_file_and_direction_used() {
        let mut t = Trace {
            paths: vec!["/d/f".into()],
            events: vec![
                ev(0, 1, "pread64", 0, 4096),
                ev(100, 1, "pread64", 0, 4096),
                ev(200, 1, "pwrite64", 8192, 16384),
            ],
            ..Trace::default()
        };
        // Files without a pattern (no events) make no table.
        let bare = vec![crate::trace::model::FileStats {
            path: "/d/f".into(),
            ..Default::default()
        }];
        assert!(table(&bare).is_none());
        // Tallying the events analyses them too (and again changes nothing).
        t.tally_events();
        analyse(&mut t);
        let text = text(&t.files);
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("/d/f")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        // Writes moved more bytes: first; the second read re-read 4 KiB,
        // at a random offset (back to 0), 99 us after the first returned.
        let cells: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(cells[..3], ["/d/f", "read", "2"]);
        assert_eq!(cells[6..8], ["50", "4.0KiB"]);
        let think: f64 = cells[8].parse().unwrap();
        assert!((think - 99.0).abs() < 99.0 * 0.04, "{think}");
        let v = value(t.files[0].pattern.as_ref());
        assert_eq!(v["read"]["repeat_bytes"], 4096);
        assert_eq!(v["write"]["blocks"][0][0], 16384);
        // A trace's own views carry them.
        let stored = crate::trace::store::StoredTrace {
            trace: t,
            ..Default::default()
        };
        assert!(super::super::trace::text(&stored).contains(&text));
        let v = super::super::trace::value(&stored);
        assert_eq!(v["files"][0]["pattern"]["read"]["ops"], 2);
    }
}
