//! Trace files: JSON lines, written as the trace runs and read back whole.
//!
//! ```text
//! {"iolab_trace":1,"meta":{...}}                      first line
//! {"path":3,"name":"/data/db/000012.sst"}             a path, before its first use
//! [t_ns,pid,tid,"pread64",fd,file,offset,len,flags,result,lat_ns]   one event
//! {"end":{"calls":{...},"files":[...],"threads":[...],"lost":0,...}}  last line
//! ```
//!
//! An event's `file` is the number of a path line (or null), `offset` null
//! when the call has none. A file without its `end` line (the tracer was
//! killed) still reads: its figures are tallied from the events.

use super::calls::{self, Class};
use super::error::{TraceError, TraceResult};
use super::model::{Event, Meta, Trace};
use crate::trace::error::LineProblem;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The format version in the first line.
pub const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Head {
    iolab_trace: u32,
    meta: Meta,
}

#[derive(Serialize, Deserialize)]
struct PathLine {
    path: u32,
    name: String,
}

#[derive(Serialize, Deserialize)]
struct End {
    end: Trace,
}

/// Writes a trace file as the trace runs.
pub struct TraceWriter {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
    paths: usize,
    line: String,
}

impl TraceWriter {
    /// Creates `path` (refusing to replace a file that exists) and writes
    /// the first line.
    pub fn create(path: &Path, meta: &Meta) -> TraceResult<TraceWriter> {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| TraceError::io(path, e))?;
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(1 << 20, f),
            path: path.to_path_buf(),
            paths: 0,
            line: String::with_capacity(160),
        };
        let head = Head {
            iolab_trace: VERSION,
            meta: meta.clone(),
        };
        w.json(&head)?;
        Ok(w)
    }

    fn json<T: Serialize>(&mut self, v: &T) -> TraceResult<()> {
        serde_json::to_writer(&mut self.out, v)
            .map_err(|e| TraceError::io(&self.path, e.into()))?;
        self.out
            .write_all(b"\n")
            .map_err(|e| TraceError::io(&self.path, e))
    }

    /// Writes the paths of `all` not written yet (paths are only ever
    /// added at the end).
    pub fn paths(&mut self, all: &[String]) -> TraceResult<()> {
        while self.paths < all.len() {
            let l = PathLine {
                path: self.paths as u32,
                name: all[self.paths].clone(),
            };
            self.json(&l)?;
            self.paths += 1;
        }
        Ok(())
    }

    /// Writes one event.
    pub fn event(&mut self, e: &Event) -> TraceResult<()> {
        // Integers by itoa, not `fmt`: a traced program can make a million
        // calls a second, and this runs for each.
        let mut n = itoa::Buffer::new();
        let l = &mut self.line;
        l.clear();
        l.push('[');
        for v in [e.t_ns, u64::from(e.pid), u64::from(e.tid)] {
            l.push_str(n.format(v));
            l.push(',');
        }
        l.push('"');
        l.push_str(e.name());
        l.push_str("\",");
        l.push_str(n.format(e.fd));
        l.push(',');
        for v in [e.file.map(u64::from), e.offset] {
            l.push_str(v.as_ref().map_or("null", |v| n.format(*v)));
            l.push(',');
        }
        l.push_str(n.format(e.len));
        l.push(',');
        l.push_str(n.format(e.flags));
        l.push(',');
        l.push_str(n.format(e.result));
        l.push(',');
        l.push_str(n.format(e.lat_ns));
        l.push_str("]\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| TraceError::io(&self.path, e))
    }

    /// Writes out what is buffered (so a trace killed later keeps it).
    pub fn flush(&mut self) -> TraceResult<()> {
        self.out.flush().map_err(|e| TraceError::io(&self.path, e))
    }

    /// Writes the last line (the figures) and closes the file.
    pub fn finish(mut self, t: &Trace) -> TraceResult<()> {
        self.paths(&t.paths)?;
        self.json(&End { end: t.clone() })?;
        self.out
            .flush()
            .map_err(|e| TraceError::io(&self.path, e))?;
        Ok(())
    }
}

/// Writes a whole trace (an import, a conversion) to `path`.
pub fn write(path: &Path, t: &Trace) -> TraceResult<()> {
    let mut w = TraceWriter::create(path, &t.meta)?;
    w.paths(&t.paths)?;
    for e in &t.events {
        w.event(e)?;
    }
    w.finish(t)
}

/// True when the file's last byte is not a newline (an empty file is not
/// unfinished).
fn ends_unfinished(f: &std::fs::File) -> bool {
    use std::os::unix::fs::FileExt;
    let len = f.metadata().map_or(0, |m| m.len());
    let mut b = [0u8; 1];
    len > 0 && f.read_at(&mut b, len - 1).is_ok() && b[0] != b'\n'
}

/// Whether `path` is a file that begins as an iolab trace file does.
pub fn is_trace_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 15];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| &head == b"{\"iolab_trace\":")
}

/// Reads a trace file (one cut off in its last line: up to that line).
pub fn read(path: &Path) -> TraceResult<Trace> {
    let f = std::fs::File::open(path).map_err(|e| TraceError::io(path, e))?;
    let bad = |line: usize, problem: String| TraceError::Format {
        path: path.to_path_buf(),
        line,
        problem,
    };
    // A file that does not end with a newline was cut off (its tracer
    // killed, its disk full): its last, partial line is left out.
    let cut = ends_unfinished(&f);
    let mut t = Trace::default();
    let mut ended = false;
    let mut lines = BufReader::new(f).lines().enumerate().peekable();
    while let Some((i, l)) = lines.next() {
        let n = i + 1;
        let l = l.map_err(|e| TraceError::io(path, e))?;
        if l.is_empty() || (cut && n > 1 && lines.peek().is_none()) {
            continue;
        }
        if n == 1 {
            let h: Head = serde_json::from_str(&l).map_err(|e| {
                bad(n, format!("not an iolab trace (expected its first line {{\"iolab_trace\":{VERSION},\"meta\":...}}): {e}"))
            })?;
            if h.iolab_trace != VERSION {
                return Err(bad(
                    n,
                    format!(
                        "trace format {} (this iolab reads {VERSION})",
                        h.iolab_trace
                    ),
                ));
            }
            t.meta = h.meta;
        } else if l.starts_with('[') {
            t.events.push(event(&l).map_err(|p| bad(n, p.0))?);
        } else if l.starts_with("{\"path\"") {
            let p: PathLine = serde_json::from_str(&l).map_err(|e| bad(n, e.to_string()))?;
            if p.path as usize != t.paths.len() {
                return Err(bad(
                    n,
                    format!("path {} out of order (expected {})", p.path, t.paths.len()),
                ));
            }
            t.paths.push(p.name);
        } else {
            let e: End = serde_json::from_str(&l)
                .map_err(|e| bad(n, format!("expected an event, a path or the end line: {e}")))?;
            // The end line's meta is the whole one: the first line was
            // written before the trace had a duration or an exit status.
            let (events, paths) = (std::mem::take(&mut t.events), std::mem::take(&mut t.paths));
            t = e.end;
            t.events = events;
            t.paths = paths;
            ended = true;
        }
    }
    if t.meta.source.is_empty() && !ended && t.events.is_empty() {
        return Err(bad(1, "empty: not an iolab trace".into()));
    }
    if !ended {
        t.tally_events();
    }
    Ok(t)
}

fn event(l: &str) -> Result<Event, LineProblem> {
    let v: Vec<Value> = serde_json::from_str(l).map_err(|e| e.to_string())?;
    if v.len() != 11 {
        return Err(LineProblem(format!(
            "an event has 11 fields, this one {}",
            v.len()
        )));
    }
    let u = |i: usize| {
        v[i].as_u64()
            .ok_or_else(|| format!("field {} is not a number: {}", i + 1, v[i]))
    };
    let o = |i: usize| {
        if v[i].is_null() {
            Ok(None)
        } else {
            u(i).map(Some)
        }
    };
    let name = v[3].as_str().ok_or("field 4 is not a call name")?;
    let (call, _) = calls::by_name(name).ok_or_else(|| format!("unknown call {name}"))?;
    let offset = o(6)?;
    // A read's or write's offset is a file position (lseek's is signed:
    // -60 from the end is written as 2^64 - 60).
    let data = matches!(
        calls::by_id(call).map(|c| c.class),
        Some(Class::Read | Class::Write)
    );
    if let Some(off) = offset.filter(|&o| data && o > i64::MAX as u64) {
        return Err(LineProblem(format!(
            "offset {off} is past the largest file offset (2^63 - 1)"
        )));
    }
    Ok(Event {
        t_ns: u(0)?,
        pid: u(1)? as u32,
        tid: u(2)? as u32,
        call,
        fd: v[4].as_i64().ok_or("field 5 is not an fd")? as i32,
        file: o(5)?.map(|f| f as u32),
        offset,
        len: u(7)?,
        flags: u(8)?,
        result: v[9].as_i64().ok_or("field 10 is not a result")?,
        lat_ns: u(10)?,
    })
}
