//! The options of a derived job, each from a figure of the trace's
//! access pattern: rw and its mix, the random share, block sizes, think
//! time or rate, fadvise hint.

use super::{Line, line};
use crate::trace::hist::LogHist;
use crate::trace::pattern::{DirPattern, Pattern, advice};
use std::collections::BTreeMap;

/// `n` bytes as fio writes sizes: `64k`, `1m`, or bytes.
pub fn size(n: u64) -> String {
    match n {
        0 => "0".into(),
        n if n % (1 << 20) == 0 => format!("{}m", n >> 20),
        n if n % 1024 == 0 => format!("{}k", n >> 10),
        n => n.to_string(),
    }
}

/// Shares in percent of `counts`, adding up to 100 (largest remainders),
/// the sizes that get none left out; at most 64 sizes (fio's limit), the
/// most frequent.
pub fn shares(counts: &BTreeMap<u64, u64>) -> Vec<(u64, u64)> {
    let mut top: Vec<(u64, u64)> = counts.iter().map(|(&s, &n)| (s, n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(64);
    let total: u64 = top.iter().map(|t| t.1).sum();
    if total == 0 {
        return Vec::new();
    }
    let mut parts: Vec<(u64, u64, u64)> = top
        .iter()
        .map(|&(s, n)| (s, n * 100 / total, n * 100 % total))
        .collect();
    let mut left = 100 - parts.iter().map(|p| p.1).sum::<u64>();
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by(|&a, &b| parts[b].2.cmp(&parts[a].2));
    for i in order {
        if left == 0 {
            break;
        }
        parts[i].1 += 1;
        left -= 1;
    }
    let mut out: Vec<(u64, u64)> = parts
        .into_iter()
        .filter(|p| p.1 > 0)
        .map(|p| (p.0, p.1))
        .collect();
    out.sort_unstable();
    out
}

/// A direction's `bssplit` part (`4k/70:64k/30`), or its one size.
pub fn bssplit(d: &DirPattern) -> String {
    let s = shares(&d.blocks);
    match &s[..] {
        [(one, _)] => size(*one),
        _ => s
            .iter()
            .map(|(b, p)| format!("{}/{p}", size(*b)))
            .collect::<Vec<_>>()
            .join(":"),
    }
}

/// A random share as `percentage_random` takes it: ≥ 90% all, ≤ 10% none.
fn pct_random(share: f64) -> u64 {
    match share {
        s if s >= 0.9 => 100,
        s if s <= 0.1 => 0,
        s => (s * 100.0).round() as u64,
    }
}

fn us(ns: u64) -> String {
    format!("{:.1} us", ns as f64 / 1000.0)
}

/// The direction lines: rw, rwmixread, percentage_random, bs or bssplit.
pub(super) fn directions(p: &Pattern, lines: &mut Vec<Line>) {
    let (r, w) = (&p.read, &p.write);
    let (hr, hw) = (r.sizes.count() > 0, w.sizes.count() > 0);
    let present: Vec<(&str, &DirPattern)> = [("reads", r), ("writes", w)]
        .into_iter()
        .zip([hr, hw])
        .filter(|(_, h)| *h)
        .map(|(d, _)| d)
        .collect();
    let rand = present.iter().any(|(_, d)| d.random_share() > 0.1);
    let seen = present
        .iter()
        .map(|(n, d)| {
            format!(
                "{:.0}% of the {n} at an offset other than where the thread's previous one ended",
                100.0 * d.random_share()
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let rw = match (hr, hw, rand) {
        (true, false, false) => "read",
        (true, false, true) => "randread",
        (false, true, false) => "write",
        (false, true, true) => "randwrite",
        (true, true, false) => "rw",
        _ => "randrw",
    };
    lines.push(line("rw", rw, format!("{seen} (random above 10%)")));
    if hr && hw {
        let (nr, nw) = (r.sizes.count(), w.sizes.count());
        lines.push(line(
            "rwmixread",
            (100 * nr + (nr + nw) / 2) / (nr + nw),
            format!("{nr} reads and {nw} writes"),
        ));
    }
    let pcts: Vec<u64> = present
        .iter()
        .map(|(_, d)| pct_random(d.random_share()))
        .collect();
    if rand && pcts.iter().any(|&p| p < 100) {
        lines.push(line(
            "percentage_random",
            pcts.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
            "the random share, per direction (between 10% and 90%; 100 above, 0 below)",
        ));
    }
    if rand {
        lines.push(Line {
            key: "norandommap".into(),
            value: None,
            why: format!(
                "a program keeps no map of the blocks it did: offsets may repeat ({} bytes were read again, {} written again)",
                r.repeat_bytes, w.repeat_bytes
            ),
        });
    }
    let parts: Vec<String> = [(hr, r), (hw, w)]
        .iter()
        .map(|(h, d)| if *h { bssplit(d) } else { String::new() })
        .collect();
    let many = parts.iter().any(|p| p.contains('/'));
    let value = if hw && !hr {
        format!(",{}", parts[1])
    } else if hr && !hw {
        parts[0].clone()
    } else {
        parts.join(",")
    };
    lines.push(line(
        if many { "bssplit" } else { "bs" },
        value,
        "the bytes each call moved, rounded to 512 bytes, share of calls in %",
    ));
}

/// Think time (`thinktime`) or pace (`rate_iops`) of a section.
pub(super) fn pace(p: &Pattern, lines: &mut Vec<Line>) {
    let mut think = LogHist::default();
    think.merge(&p.read.think);
    think.merge(&p.write.think);
    let mut lat = p.read.lat.clone();
    lat.merge(&p.write.lat);
    let (t50, l50) = (think.percentile(50.0), lat.percentile(50.0));
    let n = think.count().max(1);
    let mean = (p.read.think_ns + p.write.think_ns) / n;
    let significant = |ns: u64| ns >= 10_000 && ns >= l50 / 4;
    if significant(t50) {
        lines.push(line(
            "thinktime",
            t50 / 1000,
            format!(
                "median time from the thread's previous call's return to each call: {} (calls took {} at the median)",
                us(t50),
                us(l50)
            ),
        ));
    } else if significant(mean) {
        let secs = (p.end_ns.saturating_sub(p.first_ns)) as f64 / 1e9;
        let rate = |d: &DirPattern| {
            if d.sizes.count() == 0 || secs <= 0.0 {
                String::new()
            } else {
                format!(
                    "{}",
                    ((d.sizes.count() as f64 / secs).round() as u64).max(1)
                )
            }
        };
        let v = match (rate(&p.read), rate(&p.write)) {
            (r, w) if w.is_empty() => r,
            (r, w) => format!("{r},{w}"),
        };
        lines.push(line(
            "rate_iops",
            v,
            format!(
                "calls per second over the {secs:.3} s the thread used the file: it paused in bursts (mean gap {}, median {})",
                us(mean),
                us(t50)
            ),
        ));
    }
}

pub(super) fn fadvise(file: &Pattern, lines: &mut Vec<Line>) {
    let pick = [
        (advice::RANDOM, "random"),
        (advice::SEQUENTIAL, "sequential"),
        (advice::NOREUSE, "noreuse"),
    ]
    .into_iter()
    .filter_map(|(a, name)| file.advice.get(&a).map(|n| (*n, name)))
    .max();
    let calls: u64 = file.advice.values().sum();
    let (v, why) = match pick {
        Some((n, name)) => (
            name,
            format!("{n} fadvise calls gave POSIX_FADV_{}", name.to_uppercase()),
        ),
        None if calls > 0 => (
            "0",
            format!(
                "{calls} fadvise calls, none that fadvise_hint gives (WILLNEED, DONTNEED, NORMAL): no hint"
            ),
        ),
        None => (
            "0",
            "no fadvise calls on this file: no hint (fio's default hints by pattern)".into(),
        ),
    };
    lines.push(line("fadvise_hint", v, why));
}

/// `fsync` or `fdatasync` every N writes, from the thread's sync calls.
pub(super) fn syncs(p: &Pattern, lines: &mut Vec<Line>) {
    let writes = p.write.sizes.count();
    for (key, n) in [("fsync", p.fsync), ("fdatasync", p.fdatasync)] {
        if n > 0 && writes > 0 {
            lines.push(line(
                key,
                ((writes as f64 / n as f64).round() as u64).max(1),
                format!("{writes} writes and {n} {key} calls by the thread on this file"),
            ));
            // fio and iolab take one of the two.
            return;
        }
    }
}
