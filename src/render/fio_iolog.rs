//! fio's `write_iolog`: version 3 I/O logs, which `fio --read_iolog`
//! replays. Each clone adds its section to the job's file (fio opens it
//! for appending): the version line, `add` and `open` per file, one line
//! per I/O (`µs file read|write|trim offset length`, the time its
//! submission), `close` per file at the end.

use crate::runner::RunResult;
use crate::runner::iolog::IoLog;
use std::io::Write;
use std::path::PathBuf;

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
            for log in &c.logs {
                log.for_each(|e| {
                    let us = e.t_ns.saturating_sub(e.lat) / 1000;
                    last_us = last_us.max(e.t_ns / 1000);
                    let name = names.get(usize::from(e.file)).map_or("?", String::as_str);
                    let dir = ["read", "write", "trim"][usize::from(e.ddir.min(2))];
                    writeln!(w, "{us} {name} {dir} {} {}", e.offset, e.len)
                })?;
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
