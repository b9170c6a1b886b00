//! strace output read as a [`Trace`] in event mode. Best recorded with
//! `strace -f -ttt -T -y -o FILE`, it is read in every form strace writes:
//! with the pid column `-f -o FILE` writes, the `[pid N]` prefix `-f`
//! writes to stderr, or neither; times as `-ttt`, `-tt`, `-t`, `-r` or
//! none ([`strace_clock`](super::strace_clock)); with or without `-T`,
//! `-y`/`-yy`, `-k`'s stack frames, `-i`/`-n`'s brackets; `-ff`'s file per
//! process ([`read_files`], merged in time order). What a form cannot
//! tell is said in [`Meta::notes`](super::model::Meta::notes); lines that are not strace's are
//! skipped and counted there too, unless most of the input is such lines.
//! The lines become events in [`strace_parser`](super::strace_parser).

use super::error::{TraceError, TraceResult};
use super::model::{Thread, Trace};
use super::strace_clock::{Clock, Form};
use super::strace_parser::Parser;
use super::strace_syntax as syntax;
use std::io::BufRead;
use std::path::{Path, PathBuf};

#[cfg(test)]
use super::model::Event;

/// How to read strace output.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Take input without a single strace line as an empty trace (the
    /// traced program made no call); by default it is refused as not
    /// strace output (`iolab trace import`).
    pub allow_empty: bool,
    /// Threads known before tracing began (those of a process strace
    /// attached to with `-p`), which no clone in the output names.
    pub threads: Vec<Thread>,
}

/// Reads the strace output in `path`.
pub fn read(path: &Path, opts: &Options) -> TraceResult<Trace> {
    read_files(&[path.to_path_buf()], opts)
}

/// Reads the strace output in `paths`: one file, or the files of
/// `strace -ff -o PREFIX` (`PREFIX.PID` each, the pid from the name). A
/// single `PREFIX` that does not exist stands for its `PREFIX.PID` files.
/// Without a `-ttt` date, the start is the last file's modification time
/// less the duration.
pub fn read_files(paths: &[PathBuf], opts: &Options) -> TraceResult<Trace> {
    let paths = per_process_files(paths)?;
    let mut sources = Vec::new();
    for (path, tid) in &paths {
        let f = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
        sources.push(Source::new(
            path,
            *tid,
            Box::new(std::io::BufReader::new(f)),
        ));
    }
    let mut t = read_sources(sources, opts)?;
    if t.meta.started_unix == 0.0 {
        let mtime = (paths.iter())
            .filter_map(|(p, _)| std::fs::metadata(p).and_then(|m| m.modified()).ok())
            .max();
        if let Some(Ok(d)) = mtime.map(|m| m.duration_since(std::time::UNIX_EPOCH)) {
            t.meta.started_unix = (d.as_secs_f64() - t.meta.duration_ns as f64 / 1e9).max(0.0);
        }
    }
    Ok(t)
}

/// Reads strace output from `input`; `path` names it in errors, which say
/// at which line what was expected.
pub fn parse<'a>(input: impl BufRead + 'a, path: &Path, opts: &Options) -> TraceResult<Trace> {
    read_sources(vec![Source::new(path, None, Box::new(input))], opts)
}

/// `paths` with the pid of each (`-ff`'s `PREFIX.PID`), or `None` for a
/// single file; a lone missing `PREFIX` becomes its `PREFIX.PID` files.
fn per_process_files(paths: &[PathBuf]) -> TraceResult<Vec<(PathBuf, Option<u32>)>> {
    let pid_of = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(|e| e.parse::<u32>().ok())
    };
    if let [one] = paths {
        if one.exists() {
            return Ok(vec![(one.clone(), None)]);
        }
        let dir = one.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new("."));
        let prefix = one.file_name().map(|n| n.to_string_lossy().into_owned());
        let mut found: Vec<(PathBuf, Option<u32>)> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| dir.join(e.file_name()))
            .filter(|p| {
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                stem == prefix && pid_of(p).is_some()
            })
            .map(|p| {
                let pid = pid_of(&p);
                (p, pid)
            })
            .collect();
        if found.is_empty() {
            let e = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(TraceError::io(one, e));
        }
        found.sort_by_key(|(_, pid)| *pid);
        return Ok(found);
    }
    let mut out = Vec::new();
    for p in paths {
        let pid = pid_of(p).ok_or_else(|| TraceError::Usage {
            what: p.display().to_string(),
            problem: "several files are read as the output of strace -ff -o PREFIX, \
                      each named PREFIX.PID"
                .into(),
        })?;
        out.push((p.clone(), Some(pid)));
    }
    out.sort_by_key(|(_, pid)| *pid);
    Ok(out)
}

/// One file of strace output being read, and its next line with a time.
struct Source<'a> {
    path: PathBuf,
    tid: Option<u32>,
    input: std::io::Split<Box<dyn BufRead + 'a>>,
    clock: Clock,
    line_no: usize,
    next: Option<Pending>,
}

/// A line read ahead: its number, text and time.
struct Pending {
    line_no: usize,
    text: String,
    time: u64,
}

/// Lines that are not strace's: how many, and the first.
#[derive(Default)]
struct Skipped {
    count: usize,
    first: Option<(PathBuf, usize, String)>,
}

impl Skipped {
    fn add(&mut self, path: &Path, line: usize, problem: String) {
        self.count += 1;
        self.first
            .get_or_insert_with(|| (path.to_path_buf(), line, problem));
    }
}

impl<'a> Source<'a> {
    fn new(path: &Path, tid: Option<u32>, input: Box<dyn BufRead + 'a>) -> Source<'a> {
        Source {
            path: path.to_path_buf(),
            tid,
            input: input.split(b'\n'),
            clock: Clock::default(),
            line_no: 0,
            next: None,
        }
    }

    /// Reads ahead to the next line that carries something.
    fn advance(&mut self, skipped: &mut Skipped) -> TraceResult<()> {
        self.next = None;
        // strace writing to stderr puts its own messages in the middle of a
        // call's line: `clone(..., flags=SIGCHLDstrace: Process 7 attached`.
        let mut cut = String::new();
        for l in self.input.by_ref() {
            self.line_no += 1;
            let l = l.map_err(|e| TraceError::io(&self.path, e))?;
            cut.push_str(&String::from_utf8_lossy(&l));
            if let Some(at) = cut.find("strace: Process ").filter(|&at| at > 0)
                && (cut.ends_with(" attached") || cut.ends_with(" detached"))
            {
                cut.truncate(at);
                continue;
            }
            let time = match syntax::line(&cut) {
                Ok(None) => {
                    cut.clear();
                    continue;
                }
                Ok(Some(line)) => self.clock.time(line.stamp),
                Err(e) => Err(e),
            };
            match time {
                Ok(time) => {
                    self.next = Some(Pending {
                        line_no: self.line_no,
                        text: cut,
                        time,
                    });
                    return Ok(());
                }
                Err(problem) => skipped.add(&self.path, self.line_no, problem.0),
            }
            cut.clear();
        }
        Ok(())
    }
}

/// Reads `sources` into one trace, merging their lines in time order
/// when their times are on one line, else one file after the other.
fn read_sources(mut sources: Vec<Source<'_>>, opts: &Options) -> TraceResult<Trace> {
    let mut p = Parser::default();
    for t in &opts.threads {
        p.known(t.clone());
    }
    let mut skipped = Skipped::default();
    for s in &mut sources {
        s.advance(&mut skipped)?;
    }
    // `-ff -r` times are differences from lines in other files.
    let unplaced = sources.len() > 1
        && (sources.iter()).any(|s| matches!(s.clock.form(), Some(Form::Relative | Form::None)));
    if unplaced {
        for s in &mut sources {
            s.clock.unplaced = true;
            if let Some(n) = &mut s.next {
                n.time = 0;
            }
        }
    }
    loop {
        let pick = (sources.iter().enumerate())
            .filter_map(|(i, s)| s.next.as_ref().map(|n| (n.time, i)))
            .min();
        let Some((_, i)) = pick else { break };
        let s = &mut sources[i];
        let n = s.next.take().expect("picked a source with a line");
        let fed = match syntax::line(&n.text) {
            Ok(Some(line)) => p.feed(s.tid.or(line.tid), n.time, line.body),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        if let Err(problem) = fed {
            skipped.add(&s.path, n.line_no, problem.0);
        }
        s.advance(&mut skipped)?;
    }
    let name = sources
        .first()
        .map_or_else(PathBuf::new, |s| s.path.clone());
    if p.lines == 0 || skipped.count > p.lines {
        if let Some((path, line, problem)) = skipped.first {
            return Err(TraceError::Format {
                path,
                line,
                problem,
            });
        }
        if !opts.allow_empty {
            return Err(TraceError::Format {
                path: name,
                line: 1,
                problem: "no strace output: expected lines of `strace -f -ttt -T -y` \
                          (pid, -ttt timestamp, call)"
                    .into(),
            });
        }
    }
    let clock = &sources.first().map(|s| &s.clock);
    let mut notes = clock.map(Clock::notes).unwrap_or_default();
    notes.extend(p.lacks());
    if let Some((path, line, problem)) = &skipped.first {
        notes.push(format!(
            "skipped {} line{} that {} not strace's (the first, {}:{line}: {problem})",
            skipped.count,
            if skipped.count == 1 { "" } else { "s" },
            if skipped.count == 1 { "is" } else { "are" },
            path.display()
        ));
    }
    let absolute = clock.is_some_and(Clock::absolute);
    let mut t = p.finish();
    if !absolute {
        t.meta.started_unix = 0.0;
    }
    t.meta.notes = notes;
    Ok(t)
}

#[cfg(test)]
#[path = "strace_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "strace_forms_tests.rs"]
mod forms_tests;
