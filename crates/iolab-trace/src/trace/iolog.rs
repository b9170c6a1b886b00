//! fio iologs (version 3) from a trace, one per thread, and the job file
//! that has fio replay them all together.
//!
//! fio 3.33 (`iolog.c`, `read_iolog`) reads, after the line
//! `fio version 3 iolog`, lines `TIME FILE add|open|close` and
//! `TIME FILE read|write|sync|datasync|trim OFFSET LENGTH`. TIME is in
//! microseconds: fio waits before each line the time since the previous
//! line's TIME, less the time the I/O in between took (the first line's
//! TIME only sets the base). A file must be added before it is opened,
//! and open when I/O names it. Names end at white space (`%256s`).
//! fio does not lay out files for a replay: a file read must exist (and
//! hold the bytes read); a file written is created.

use super::calls::Class;
use super::error::{TraceError, TraceResult};
use super::model::{Event, Mode, Trace};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The first line of a version 3 iolog.
pub const HEADER: &str = "fio version 3 iolog";

/// One thread's iolog.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadLog {
    /// The thread.
    pub tid: u32,
    /// Its name (`comm`), if the trace knows it.
    pub comm: String,
    /// The iolog.
    pub text: String,
    /// Its reads, writes and syncs (fsync and fdatasync).
    pub reads: u64,
    /// Its writes.
    pub writes: u64,
    /// Its syncs.
    pub syncs: u64,
    /// When its first line is, microseconds since the trace began.
    pub start_us: u64,
    /// The files it names, with the furthest byte it reads or writes.
    pub files: BTreeMap<String, u64>,
}

/// The name each of the trace's paths gets in what is exported: the path
/// itself, or with `dir` the file's name in `dir` (white space turned
/// into `_`; `N-` in front when two files have the same name).
pub fn names(t: &Trace, dir: Option<&Path>) -> Vec<String> {
    let Some(dir) = dir else {
        return t.paths.clone();
    };
    let mut taken: BTreeSet<String> = BTreeSet::new();
    t.paths
        .iter()
        .map(|p| {
            let base: String = Path::new(p)
                .file_name()
                .map_or("file".into(), |n| n.to_string_lossy().into_owned())
                .chars()
                .map(|c| if c.is_whitespace() { '_' } else { c })
                .collect();
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{n}-{base}");
                n += 1;
            }
            dir.join(name).to_string_lossy().into_owned()
        })
        .collect()
}

/// The trace's events, refusing a trace that has none.
pub(crate) fn events(t: &Trace) -> TraceResult<&[Event]> {
    if t.events.is_empty() {
        let problem = if t.meta.mode == Mode::Histograms {
            "it holds histograms only: record it with `iolab trace --events`"
        } else {
            "it holds no events"
        };
        return Err(TraceError::Usage {
            what: "the trace".into(),
            problem: problem.into(),
        });
    }
    Ok(&t.events)
}

/// What an event becomes in an iolog: the action and, for I/O, the
/// offset and length.
type Action = (&'static str, Option<(u64, u64)>);

/// The [`Action`] of `e` at `offset` ([`super::pattern::offsets`]), if
/// it has one.
fn action(e: &Event, offset: Option<u64>) -> Option<Action> {
    let name = e.name();
    if e.result < 0 {
        return None;
    }
    match (e.class(), name) {
        (Class::Read | Class::Write, "fallocate") => None,
        (Class::Read, _) | (Class::Write, _) => {
            let off = offset?;
            let dir = if e.class() == Class::Read {
                "read"
            } else {
                "write"
            };
            (e.result > 0).then_some((dir, Some((off, e.result as u64))))
        }
        (Class::Sync, "fsync") => Some(("sync", Some((0, 0)))),
        (Class::Sync, "fdatasync") => Some(("datasync", Some((0, 0)))),
        (Class::Open, "close") => Some(("close", None)),
        (Class::Open, _) => Some(("open", None)),
        _ => None,
    }
}

/// The iologs of the trace's threads that did any I/O (a read or write at
/// a known offset, fsync, fdatasync), each in the trace's order, with the
/// names [`names`] gives. Refused: a trace without events, a name with
/// white space (fio cannot read it; `dir` gives others).
pub fn export(t: &Trace, dir: Option<&Path>) -> TraceResult<Vec<ThreadLog>> {
    let events = events(t)?;
    let names = names(t, dir);
    let mut by_tid: BTreeMap<u32, Vec<(&Event, Action)>> = BTreeMap::new();
    let order = super::pattern::in_order(events);
    let offsets = super::pattern::offsets(events, &order);
    for i in order {
        let e = &events[i];
        let known = e.file.is_some_and(|f| (f as usize) < names.len());
        if let (true, Some((act, io))) = (known, action(e, offsets[i])) {
            by_tid.entry(e.tid).or_default().push((e, (act, io)));
        }
    }
    let mut out = Vec::new();
    for (tid, mut list) in by_tid {
        // Only the files the thread did I/O on (not directories it
        // opened, say) are added, opened and closed.
        let used: BTreeSet<Option<u32>> = list
            .iter()
            .filter(|(_, (_, io))| io.is_some())
            .map(|(e, _)| e.file)
            .collect();
        list.retain(|(e, _)| used.contains(&e.file));
        let Some(first_io) = list.iter().position(|(_, (_, io))| io.is_some()) else {
            continue;
        };
        // Opens before the first I/O of this thread's files count; the
        // log starts at the earliest of them.
        let mut files: BTreeMap<String, u64> = BTreeMap::new();
        for (e, (_, io)) in &list {
            let name = &names[e.file.unwrap_or(0) as usize];
            let end = files.entry(name.clone()).or_default();
            if let Some((off, len)) = io {
                *end = (*end).max(off + len);
            }
        }
        if let Some(bad) = files.keys().find(|n| n.contains(char::is_whitespace)) {
            return Err(TraceError::Usage {
                what: format!("file {bad}"),
                problem: "fio's iolog cannot name a file with white space in it: give --dir DIR to name the files in DIR".into(),
            });
        }
        let start = list[..=first_io]
            .iter()
            .map(|(e, _)| e.t_ns)
            .min()
            .unwrap_or(0);
        let mut log = ThreadLog {
            tid,
            comm: t
                .threads
                .iter()
                .find(|th| th.tid == tid)
                .map_or(String::new(), |th| th.comm.clone()),
            text: format!("{HEADER}\n"),
            reads: 0,
            writes: 0,
            syncs: 0,
            start_us: start / 1000,
            files: BTreeMap::new(),
        };
        for name in files.keys() {
            let _ = writeln!(log.text, "{} {name} add", start / 1000);
        }
        let mut open: HashMap<&str, u32> = HashMap::new();
        let mut last_us = start / 1000;
        for (e, (act, io)) in &list {
            let name = names[e.file.unwrap_or(0) as usize].as_str();
            let us = (e.t_ns / 1000).max(last_us);
            last_us = us;
            let n = open.entry(name).or_default();
            match (*act, io) {
                ("open", _) => {
                    *n += 1;
                    if *n == 1 {
                        let _ = writeln!(log.text, "{us} {name} open");
                    }
                }
                ("close", _) => {
                    if *n == 1 {
                        let _ = writeln!(log.text, "{us} {name} close");
                    }
                    *n = n.saturating_sub(1);
                }
                (act, Some((off, len))) => {
                    if *n == 0 {
                        // Opened before the trace began, or by another thread.
                        *n = 1;
                        let _ = writeln!(log.text, "{us} {name} open");
                    }
                    let _ = writeln!(log.text, "{us} {name} {act} {off} {len}");
                    match act {
                        "read" => log.reads += 1,
                        "write" => log.writes += 1,
                        _ => log.syncs += 1,
                    }
                }
                _ => {}
            }
        }
        let mut still: Vec<&str> = open
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(f, _)| *f)
            .collect();
        still.sort_unstable();
        for name in still {
            let _ = writeln!(log.text, "{last_us} {name} close");
        }
        log.files = files;
        out.push(log);
    }
    Ok(out)
}

/// The job file that replays `logs` (written at `paths`) with fio: one
/// job per thread, `read_iolog` its log, started as late into the run as
/// the thread's first call was into the trace.
pub fn replay_job(t: &Trace, logs: &[ThreadLog], paths: &[PathBuf]) -> String {
    let mut s = String::new();
    let what = t.meta.what();
    let _ = writeln!(
        s,
        "; fio replay of the trace of {what}: one job per traced thread, each\n\
         ; replaying its iolog at the trace's pace (fio --read_iolog).\n\
         ; fio does not lay out files for a replay: these must exist, at least this large:"
    );
    let mut sizes: BTreeMap<&str, u64> = BTreeMap::new();
    for l in logs {
        for (f, end) in &l.files {
            let e = sizes.entry(f).or_default();
            *e = (*e).max(*end);
        }
    }
    for (f, end) in &sizes {
        let _ = writeln!(s, ";   {f}  {end} bytes");
    }
    let _ = writeln!(
        s,
        "\n[global]\n; the traced reads and writes at an offset are pread and pwrite: psync's calls\nioengine=psync\nthread"
    );
    for (l, p) in logs.iter().zip(paths) {
        let comm = if l.comm.is_empty() {
            String::new()
        } else {
            format!(" ({})", l.comm)
        };
        let _ = writeln!(
            s,
            "\n; thread {}{comm}: {} reads, {} writes, {} syncs\n[thread-{}]\nread_iolog={}",
            l.tid,
            l.reads,
            l.writes,
            l.syncs,
            l.tid,
            p.display()
        );
        if l.start_us > 0 {
            let _ = writeln!(
                s,
                "; its first call was {:.6} s into the trace (an iolog's times count from its first line)\nstartdelay={}us",
                l.start_us as f64 / 1e6,
                l.start_us
            );
        }
    }
    s
}

/// Writes `text` to `path`, refusing to replace a file that exists.
pub fn write_new(path: &Path, text: &str) -> TraceResult<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| TraceError::io(path, e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| TraceError::io(path, e))
}

/// Writes the iologs of [`export`] and their replay job ([`replay_job`]):
/// one thread's log at `prefix` itself, several at `STEM.TID.iolog`, the
/// job at `STEM.fio` (STEM: `prefix` without a final `.iolog`). Refuses to
/// replace any file. Returns the files written, the job last.
pub fn write(t: &Trace, prefix: &Path, dir: Option<&Path>) -> TraceResult<Vec<PathBuf>> {
    let logs = export(t, dir)?;
    if logs.is_empty() {
        return Err(TraceError::Usage {
            what: "the trace".into(),
            problem: "no thread read or wrote a known file at a known offset: nothing to replay"
                .into(),
        });
    }
    let abs = std::path::absolute(prefix).map_err(|e| TraceError::io(prefix, e))?;
    let text = abs.to_string_lossy();
    let stem = text.strip_suffix(".iolog").unwrap_or(&text).to_string();
    let paths: Vec<PathBuf> = if logs.len() == 1 {
        vec![abs.clone()]
    } else {
        logs.iter()
            .map(|l| PathBuf::from(format!("{stem}.{}.iolog", l.tid)))
            .collect()
    };
    let job = PathBuf::from(format!("{stem}.fio"));
    for p in paths.iter().chain([&job]) {
        if p.exists() {
            return Err(TraceError::io(
                p,
                std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            ));
        }
    }
    for (l, p) in logs.iter().zip(&paths) {
        write_new(p, &l.text)?;
    }
    write_new(&job, &replay_job(t, &logs, &paths))?;
    let mut out = paths;
    out.push(job);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::pattern::tests::ev;

    fn with_file(mut e: Event, f: u32) -> Event {
        e.file = Some(f);
        e
    }

    #[test]
    fn one_log_per_thread_with_adds_opens_and_closes() {
        let mut t = Trace {
            paths: vec!["/d/a".into(), "/e/a".into(), "/e".into()],
            events: vec![
                ev(100, 1, "openat", 0, 3),
                ev(110, 1, "pread64", 0, 4096),
                ev(120, 1, "read", 4096, 0), // EOF: nothing
                ev(130, 1, "fdatasync", 0, 0),
                ev(140, 1, "close", 0, 0),
                with_file(ev(150, 2, "pwrite64", 8192, 512), 1),
                ev(160, 3, "openat", 0, 4), // opens only: no log
                with_file(ev(170, 2, "openat", 0, 5), 2), // a directory: left out
                with_file(ev(180, 2, "close", 0, 0), 2),
            ],
            ..Trace::default()
        };
        t.events[3].offset = None;
        let logs = export(&t, None).unwrap();
        assert_eq!(logs.len(), 2);
        assert_eq!(
            logs[0].text,
            "fio version 3 iolog\n100 /d/a add\n100 /d/a open\n110 /d/a read 0 4096\n\
             130 /d/a datasync 0 0\n140 /d/a close\n"
        );
        assert_eq!((logs[0].reads, logs[0].syncs), (1, 1));
        assert_eq!(
            logs[1].text,
            "fio version 3 iolog\n150 /e/a add\n150 /e/a open\n150 /e/a write 8192 512\n150 /e/a close\n"
        );
        let d = export(&t, Some(Path::new("/s"))).unwrap();
        assert!(d[1].text.contains("/s/2-a write"), "{}", d[1].text);
        assert_eq!(d[1].files, BTreeMap::from([("/s/2-a".to_string(), 8704)]));
    }

    #[test]
    fn refused_without_events_or_with_spaces() {
        let t = Trace::default();
        assert!(
            export(&t, None)
                .unwrap_err()
                .to_string()
                .contains("--events")
        );
        let t = Trace {
            paths: vec!["/d/a b".into()],
            events: vec![ev(0, 1, "pread64", 0, 10)],
            ..Trace::default()
        };
        assert!(export(&t, None).unwrap_err().to_string().contains("--dir"));
        assert!(
            export(&t, Some(Path::new("/s"))).unwrap()[0]
                .text
                .contains("/s/a_b read")
        );
    }
}
