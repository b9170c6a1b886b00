//! A fio job file that imitates a traced program (seed 002's manual step):
//! one section per thread and file it read or wrote (threads that did the
//! same to a file become one section with `numjobs`), each option with a
//! comment saying what in the trace it came from. `iolab run` and fio run
//! it.

use super::error::TraceResult;
use super::iolog;
use super::model::Trace;
use super::pattern;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

mod options;
pub use options::{bssplit, shares, size};

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

pub(super) fn line(key: &str, value: impl ToString, why: impl Into<String>) -> Line {
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
    /// (`write_iolog=DIR/NAME.iolog`): a run keeps each I/O it did.
    pub fn log_to(&mut self, dir: &Path) {
        for s in &mut self.sections {
            let p = dir.join(format!("{}.iolog", s.name));
            s.set(
                "write_iolog",
                p.display().to_string(),
                "(iolab trace export --run: what the job did, to compare with the trace)".into(),
            );
        }
    }
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
        if nonempty == 0 || !is_file(&t.paths[*f as usize]) {
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
        // The job's blocks are the traced sizes rounded to 512: a file of
        // the traced extent would end its sequential runs early (12-byte
        // journal writes become 512-byte ones), so the extent grows as much.
        let (traced, blocks) = [&whole.read, &whole.write]
            .iter()
            .fold((0, 0), |(t, b), d| {
                let rounded: u64 = d.blocks.iter().map(|(s, n)| s * n).sum();
                (t + d.bytes, b + rounded)
            });
        let scaled = if traced > 0 && blocks > traced {
            (whole.extent as u128 * blocks as u128 / traced as u128) as u64
        } else {
            whole.extent
        };
        let size = scaled.div_ceil(pattern::BLOCK).max(1) * pattern::BLOCK;
        lines.push(line(
            "size",
            size.max(biggest),
            if scaled > whole.extent {
                format!(
                    "the furthest byte any thread reached in the file, {} (offset + length), \
                     x {:.2}: the job's 512-byte-rounded blocks move {blocks} bytes where the trace moved {traced}",
                    whole.extent,
                    blocks as f64 / traced as f64
                )
            } else {
                format!(
                    "the furthest byte any thread reached in the file: {} (offset + length)",
                    whole.extent
                )
            },
        ));
        options::directions(p, &mut lines);
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
        lines.push(line(
            "io_size",
            nonempty * biggest,
            format!(
                "number_ios x the largest block ({biggest}): more than the I/Os can move, \
                 so that number_ios ends the job"
            ),
        ));
        options::syncs(p, &mut lines);
        options::pace(p, &mut lines);
        options::fadvise(whole, &mut lines);
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
    let mut sections = group(sections);
    // Sections named alike (a thread's nine `__init__.pyc`) are numbered.
    let mut taken = std::collections::BTreeSet::new();
    for s in &mut sections {
        let base = s.name.clone();
        let mut n = 2;
        while !taken.insert(s.name.clone()) {
            s.name = format!("{base}-{n}");
            n += 1;
        }
    }
    let what = t.meta.what();
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

/// Options whose values may differ between threads that did the same,
/// and by how much: in points (percentages) or relatively.
const CLOSE: &[(&str, f64, bool)] = &[
    ("rwmixread", 5.0, false),
    ("percentage_random", 5.0, false),
    ("number_ios", 0.1, true),
    ("io_size", 0.1, true),
    ("thinktime", 0.1, true),
    ("rate_iops", 0.1, true),
];

/// The numbers of a value (`70`, `70,100`).
fn numbers(v: &str) -> Option<Vec<f64>> {
    v.split(',').map(|x| x.parse().ok()).collect()
}

/// `a` and `b` the same, or (options of [`CLOSE`]) close enough.
fn alike(a: &Section, b: &Section) -> bool {
    let keys = |s: &Section| s.lines.iter().map(|l| l.key.clone()).collect::<Vec<_>>();
    if a.file != b.file || keys(a) != keys(b) {
        return false;
    }
    a.lines.iter().zip(&b.lines).all(|(x, y)| {
        let Some(&(_, tol, rel)) = CLOSE.iter().find(|c| c.0 == x.key) else {
            return x.value == y.value;
        };
        let (Some(u), Some(v)) = (
            x.value.as_deref().and_then(numbers),
            y.value.as_deref().and_then(numbers),
        ) else {
            return x.value == y.value;
        };
        u.len() == v.len()
            && u.iter().zip(&v).all(|(p, q)| {
                let limit = if rel { tol * p.max(*q) } else { tol };
                (p - q).abs() <= limit
            })
    })
}

/// Sections alike ([`alike`]) become one with `numjobs`, the options that
/// differ at their mean.
/// Whether `path` names a file a job can read or write: not a pipe, a
/// socket or an anonymous inode (`pipe:[N]`, `socket:[N]`, `anon_inode:..`).
pub(crate) fn is_file(path: &str) -> bool {
    !["pipe:[", "socket:[", "anon_inode:"]
        .iter()
        .any(|p| path.starts_with(p))
}

fn group(sections: Vec<Section>) -> Vec<Section> {
    let mut groups: Vec<Vec<Section>> = Vec::new();
    for s in sections {
        match groups.iter().position(|g| alike(&g[0], &s)) {
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
            let n = g.len();
            let tids: Vec<u32> = g.iter().flat_map(|s| s.tids.clone()).collect();
            let list = tids
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let mut out = g[0].clone();
            out.name = format!("t{}-x{n}", tids[0]);
            for l in &mut out.lines {
                if !CLOSE.iter().any(|c| c.0 == l.key) {
                    continue;
                }
                let all: Vec<Vec<f64>> = g
                    .iter()
                    .filter_map(|s| s.get(&l.key).and_then(numbers))
                    .collect();
                if all.iter().skip(1).all(|v| *v == all[0]) {
                    continue;
                }
                let mean: Vec<String> = (0..all[0].len())
                    .map(|i| {
                        let m = all.iter().map(|v| v[i]).sum::<f64>() / all.len() as f64;
                        format!("{}", m.round() as u64)
                    })
                    .collect();
                let values: Vec<String> = g
                    .iter()
                    .map(|s| s.get(&l.key).unwrap_or("").to_string())
                    .collect();
                l.value = Some(mean.join(","));
                l.why = format!(
                    "the mean over the threads ({}); thread {}: {}",
                    values.join(" "),
                    tids[0],
                    l.why
                );
            }
            out.tids = tids;
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
