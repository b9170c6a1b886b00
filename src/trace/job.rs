//! A fio job file that imitates a traced program (seed 002's manual step):
//! one section per thread and file it read or wrote (threads that did the
//! same to a file become one section with `numjobs`), each option with a
//! comment saying what in the trace it came from. `iolab run` and fio run
//! it.

use super::error::TraceResult;
use super::iolog;
use super::model::Trace;
use super::pattern::{self, DirPattern, Pattern, advice};
use crate::trace::hist::LogHist;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One option line and why it has its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The option.
    pub key: String,
    /// Its value (`None`: a flag).
    pub value: Option<String>,
    /// What in the trace it came from.
    pub why: String,
}

fn line(key: &str, value: impl ToString, why: impl Into<String>) -> Line {
    Line {
        key: key.into(),
        value: Some(value.to_string()),
        why: why.into(),
    }
}

/// One job: what one thread (or several alike) did to one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Its name.
    pub name: String,
    /// The file as traced.
    pub path: String,
    /// The file the job uses (remapped with `--dir`).
    pub file: String,
    /// The threads it stands for.
    pub tids: Vec<u32>,
    /// Its options.
    pub lines: Vec<Line>,
}

impl Section {
    fn get(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.key == key)
            .and_then(|l| l.value.as_deref())
    }

    fn set(&mut self, key: &str, value: String, why: String) {
        match self.lines.iter_mut().find(|l| l.key == key) {
            Some(l) => {
                l.value = Some(value);
                l.why = why;
            }
            None => self.lines.push(line(key, value, why)),
        }
    }
}

/// A derived job file.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// What it imitates (the first comment lines).
    pub head: Vec<String>,
    /// `[global]` options.
    pub global: Vec<Line>,
    /// The jobs.
    pub sections: Vec<Section>,
}

fn put(s: &mut String, l: &Line) {
    for why in l.why.lines() {
        let _ = writeln!(s, "; {why}");
    }
    match &l.value {
        Some(v) => {
            let _ = writeln!(s, "{}={v}", l.key);
        }
        None => {
            let _ = writeln!(s, "{}", l.key);
        }
    }
}

impl JobFile {
    /// The job file's text.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for h in &self.head {
            let _ = writeln!(s, "; {h}");
        }
        s.push_str("\n[global]\n");
        for l in &self.global {
            put(&mut s, l);
        }
        for sec in &self.sections {
            let _ = writeln!(s, "\n[{}]", sec.name);
            for l in &sec.lines {
                put(&mut s, l);
            }
        }
        s
    }

    /// Has each job write fio's iolog of what it did into `dir`
    /// (`write_iolog=DIR/NAME.iolog`); returns the logs, per section.
    pub fn log_to(&mut self, dir: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for s in &mut self.sections {
            let p = dir.join(format!("{}.iolog", s.name));
            s.set(
                "write_iolog",
                p.display().to_string(),
                "(iolab trace export --run: what the job did, to compare with the trace)".into(),
            );
            out.push(p);
        }
        out
    }
}

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
fn directions(p: &Pattern, lines: &mut Vec<Line>) {
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
fn pace(p: &Pattern, lines: &mut Vec<Line>) {
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

fn fadvise(file: &Pattern, lines: &mut Vec<Line>) {
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

/// The job that imitates the trace; `dir` names the files in `dir`
/// instead of their traced paths ([`iolog::names`]).
pub fn derive(t: &Trace, dir: Option<&Path>) -> TraceResult<JobFile> {
    iolog::events(t)?;
    let names = iolog::names(t, dir);
    let per_file = pattern::by(t, |e| e.file);
    let per = pattern::by(t, |e| e.file.map(|f| (e.tid, f)));
    let mut files_of: BTreeMap<u32, usize> = BTreeMap::new();
    for (tid, _) in per.keys() {
        *files_of.entry(*tid).or_default() += 1;
    }
    let mut sections = Vec::new();
    let (mut data, mut vector) = (0, 0);
    for ((tid, f), p) in &per {
        let nonempty = p.read.sizes.count() + p.write.sizes.count();
        if nonempty == 0 {
            continue;
        }
        data += nonempty;
        vector += p.read.vector + p.write.vector;
        let path = t.paths[*f as usize].clone();
        let file = names[*f as usize].clone();
        let whole = &per_file[f];
        let base: String = Path::new(&path)
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let name = if files_of[tid] == 1 {
            format!("t{tid}")
        } else {
            format!("t{tid}-{base}")
        };
        let mut lines = vec![line(
            "filename",
            file.replace(':', "\\:"),
            if dir.is_some() {
                format!("the traced {path}, named in the --dir directory")
            } else {
                format!("the traced file {path}")
            },
        )];
        let biggest = [&p.read, &p.write]
            .iter()
            .flat_map(|d| d.blocks.keys().last())
            .max()
            .copied()
            .unwrap_or(pattern::BLOCK);
        let size = whole.extent.div_ceil(pattern::BLOCK).max(1) * pattern::BLOCK;
        lines.push(line(
            "size",
            size.max(biggest),
            format!(
                "the furthest byte any thread reached in the file: {} (offset + length)",
                whole.extent
            ),
        ));
        directions(p, &mut lines);
        let empty = p.read.empty + p.write.empty;
        lines.push(line(
            "number_ios",
            nonempty,
            format!(
                "the thread's {} reads and {} writes that moved data{}",
                p.read.sizes.count(),
                p.write.sizes.count(),
                if empty > 0 {
                    format!(" ({empty} that moved nothing, at the end of the file, left out)")
                } else {
                    String::new()
                }
            ),
        ));
        let bytes = p.read.bytes + p.write.bytes;
        lines.push(line(
            "io_size",
            bytes + bytes / 2,
            format!("1.5 x the {bytes} bytes the thread moved, so that number_ios ends the job"),
        ));
        pace(p, &mut lines);
        fadvise(whole, &mut lines);
        if whole.direct {
            lines.push(line("direct", 1, "the file was opened with O_DIRECT"));
        }
        sections.push(Section {
            name,
            path,
            file,
            tids: vec![*tid],
            lines,
        });
    }
    let sections = group(sections);
    let what = if t.meta.command.is_empty() {
        format!("pid {}", t.meta.pid)
    } else {
        t.meta.command.join(" ")
    };
    let head = vec![
        format!(
            "iolab trace export --format job: a job imitating {what} ({:.3} s traced, {} events)",
            t.meta.duration_ns as f64 / 1e9,
            t.events.len()
        ),
        "one section per thread and file it read or wrote; each option says what in the trace it came from".into(),
        "the page cache the program met is not in the trace: iolab's and fio's default (invalidate=1) evicts the files first".into(),
    ];
    let engine = if vector * 2 > data {
        line(
            "ioengine",
            "pvsync",
            format!("{vector} of the {data} calls were vector calls (preadv, pwritev: pvsync's)"),
        )
    } else {
        line(
            "ioengine",
            "psync",
            format!(
                "{} of the {data} calls were single-buffer calls (pread, pwrite: psync's)",
                data - vector
            ),
        )
    };
    let global = vec![
        engine,
        Line {
            key: "thread".into(),
            value: None,
            why: "the traced calls came from threads (iolab always runs threads)".into(),
        },
    ];
    Ok(JobFile {
        head,
        global,
        sections,
    })
}

/// Sections alike (the same file and options, number_ios within 10%)
/// become one with `numjobs`.
fn group(sections: Vec<Section>) -> Vec<Section> {
    let varies = ["number_ios", "io_size", "rate_iops"];
    let shape = |s: &Section| -> Vec<(String, Option<String>)> {
        s.lines
            .iter()
            .filter(|l| !varies.contains(&l.key.as_str()))
            .map(|l| (l.key.clone(), l.value.clone()))
            .collect()
    };
    let ios = |s: &Section| {
        s.get("number_ios")
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let mut groups: Vec<Vec<Section>> = Vec::new();
    for s in sections {
        let at = groups.iter().position(|g| {
            let (a, b) = (ios(&g[0]) as f64, ios(&s) as f64);
            shape(&g[0]) == shape(&s) && (a - b).abs() <= 0.1 * a.max(b)
        });
        match at {
            Some(i) => groups[i].push(s),
            None => groups.push(vec![s]),
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            if g.len() == 1 {
                return g.remove(0);
            }
            let n = g.len() as u64;
            let tids: Vec<u32> = g.iter().flat_map(|s| s.tids.clone()).collect();
            let num = |k: &str| -> Vec<u64> {
                g.iter()
                    .filter_map(|s| s.get(k).and_then(|v| v.parse().ok()))
                    .collect()
            };
            let mut out = g[0].clone();
            let list = tids
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            out.name = format!("t{}-x{n}", tids[0]);
            out.tids = tids;
            let ios = num("number_ios");
            out.set(
                "number_ios",
                (ios.iter().sum::<u64>() / n).to_string(),
                format!("the mean of the threads' I/Os that moved data: {ios:?}"),
            );
            let sizes = num("io_size");
            out.set(
                "io_size",
                sizes.iter().max().copied().unwrap_or(0).to_string(),
                "1.5 x the most bytes one of the threads moved, so that number_ios ends the job"
                    .into(),
            );
            out.lines.push(line(
                "numjobs",
                n,
                format!("threads {list} did the same to this file"),
            ));
            out
        })
        .collect()
}

#[cfg(test)]
mod tests;
