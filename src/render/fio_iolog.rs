//! fio's `write_iolog`: version 3 I/O logs, which `fio --read_iolog`
//! replays. Each clone adds its section to the job's file (fio opens it
//! for appending): the version line, `add` and `open` per file, one line
//! per I/O (`µs file read|write|trim offset length`, the time its
//! submission), `close` per file at the end.

use crate::runner::RunResult;
use crate::runner::iolog::IoLog;
use crate::runner::iolog::IoLogEntry;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::PathBuf;

/// How many logged I/Os may wait to be put back in issue order.
const REORDER_WINDOW: usize = 1 << 16;

/// A logged I/O waiting to be written, ordered by its issue time (µs) and
/// then by when it was logged.
struct Pending(Reverse<(u64, u64)>, IoLogEntry);

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// fio's first line of a version 3 iolog.
pub const VERSION_3: &str = "fio version 3 iolog";

/// One `write_iolog` file of a run: what its clones add to it.
pub struct IoLogFile<'a> {
    /// Where it goes (appended to, as fio).
    pub path: PathBuf,
    clones: Vec<CloneLog<'a>>,
}

/// One clone's files and logged I/Os, in its repetitions' order.
struct CloneLog<'a> {
    files: &'a [PathBuf],
    logs: Vec<&'a IoLog>,
}

/// The `write_iolog` files a run asked for; nothing is written here.
pub fn iolog_files(r: &RunResult) -> Vec<IoLogFile<'_>> {
    let mut out = Vec::new();
    for (j, job) in r.jobs.iter().enumerate() {
        let Some(path) = &job.logs.iolog else {
            continue;
        };
        let clones = (0..job.numjobs)
            .map(|c| CloneLog {
                files: r
                    .files
                    .get(j)
                    .and_then(|f| f.get(c as usize))
                    .map_or(&[][..], Vec::as_slice),
                logs: r
                    .repetitions
                    .iter()
                    .flat_map(|rep| &rep.clones)
                    .filter(|x| x.job == j && x.clone == c)
                    .flat_map(|x| &x.totals.io_logs)
                    .collect(),
            })
            .collect();
        out.push(IoLogFile {
            path: PathBuf::from(path),
            clones,
        });
    }
    out
}

impl IoLogFile<'_> {
    /// Writes the clones' sections to `w`.
    pub fn write_to(&self, w: &mut dyn Write) -> std::io::Result<()> {
        for c in &self.clones {
            writeln!(w, "{VERSION_3}")?;
            let names: Vec<String> = c.files.iter().map(|f| fio_name(f)).collect();
            for action in ["add", "open"] {
                for n in &names {
                    writeln!(w, "0 {n} {action}")?;
                }
            }
            let mut last_us = 0;
            // The log holds I/Os as they completed; fio's lines go in the
            // order they were issued. Completions overtake issues by at
            // most the queue and a verify backlog, so a bounded window
            // puts them back in order without holding the whole log.
            let mut window = BinaryHeap::new();
            let line = |w: &mut dyn Write, Pending(Reverse((us, _)), e): Pending| {
                let name = names.get(usize::from(e.file)).map_or("?", String::as_str);
                let dir = ["read", "write", "trim"][usize::from(e.ddir.min(2))];
                writeln!(w, "{us} {name} {dir} {} {}", e.offset, e.len)
            };
            let mut n = 0u64;
            for log in &c.logs {
                log.for_each(|e| {
                    last_us = last_us.max(e.t_ns / 1000);
                    window.push(Pending(
                        Reverse((e.t_ns.saturating_sub(e.lat) / 1000, n)),
                        *e,
                    ));
                    n += 1;
                    match window.len() > REORDER_WINDOW {
                        true => line(w, window.pop().expect("not empty")),
                        false => Ok(()),
                    }
                })?;
            }
            while let Some(p) = window.pop() {
                line(w, p)?;
            }
            for n in &names {
                writeln!(w, "{last_us} {n} close")?;
            }
        }
        Ok(())
    }
}

/// A file's name as fio writes it: as the job named it, without the `./`
/// of iolab's default directory.
fn fio_name(f: &std::path::Path) -> String {
    f.strip_prefix(".").unwrap_or(f).display().to_string()
}
