//! The state machine that turns strace lines into a [`Trace`]: each call
//! of [`calls::CALLS`] becomes an [`Event`], its two halves
//! (`<unfinished ...>`, `<... NAME resumed>`) joined per thread, its file
//! from the fd's `<path>` (or the path opened), its offset the explicit one
//! (pread64, fadvise64) or the file position, followed per process and fd
//! from open, lseek, read and write results and shared by dup and fork.
//! Threads are told from processes by the `CLONE_THREAD` flag of the clone
//! that made them. Other calls are read for that and skipped.

use super::calls::{self, CallInfo, Class};
use super::model::{Event, Meta, Mode, Thread, Trace};
use super::strace_fds::{Desc, Fds};
use super::strace_names;
use super::strace_syntax::{self as syntax, Body, Call};
use crate::trace::error::LineProblem;
use std::collections::HashMap;

/// The parent of a thread whose clone was not seen.
const UNKNOWN: u32 = u32::MAX;

/// What has been read so far. Threads are keyed by their tid, except the
/// first thread of output without a pid column, keyed 0 (and renamed to
/// its `[pid N]` once that shows).
#[derive(Default)]
pub struct Parser {
    first_ns: Option<u64>,
    end_ns: u64,
    /// The lines that carried something.
    pub lines: usize,
    /// Calls read with a `-T` time, and without.
    timed: usize,
    untimed: usize,
    /// An fd argument with `-y`'s `<path>` was seen.
    fd_notes: bool,
    main: Option<u32>,
    alias: Option<u32>,
    tasks: HashMap<u32, usize>,
    threads: Vec<Thread>,
    pending: HashMap<u32, (u64, String)>,
    fds: Fds,
    events: Vec<Event>,
    exit_status: Option<i32>,
    command: Vec<String>,
}

impl Parser {
    /// Reads the line of thread `tid` (`None`: no pid column) at `now`
    /// that says `body`.
    pub fn feed(&mut self, tid: Option<u32>, now: u64, body: Body) -> Result<(), LineProblem> {
        self.first_ns.get_or_insert(now);
        self.end_ns = self.end_ns.max(now);
        self.lines += 1;
        let tid = self.task(tid, &body);
        match body {
            Body::Noise => {}
            Body::Exited(code) => {
                if Some(tid) == self.main {
                    self.exit_status = Some(code);
                }
            }
            Body::Abandoned => {
                self.pending.remove(&tid);
            }
            Body::Unfinished(head) => {
                self.pending.insert(tid, (now, head.to_string()));
            }
            Body::Resumed { name, rest } => {
                if let Some((t0, head)) = self.resumed(tid, name)? {
                    self.complete(tid, t0, &(head + rest))?;
                }
            }
            Body::Call(text) => self.complete(tid, now, text)?,
        }
        Ok(())
    }

    /// The first half of the call `name` thread `tid` resumes; `None` when
    /// it began before strace attached. An execve from another thread of
    /// the process resumes in the leader (`+++ superseded by execve +++`),
    /// whose own unfinished call never returns.
    fn resumed(&mut self, tid: u32, name: &str) -> Result<Option<(u64, String)>, LineProblem> {
        let call = format!("{name}(");
        let own = self.pending.get(&tid).map(|(_, h)| h.starts_with(&call));
        if own == Some(true) {
            return Ok(self.pending.remove(&tid));
        }
        let other = (self.pending.iter())
            .filter(|(_, (_, h))| h.starts_with(&call))
            .max_by_key(|(t, (at, _))| (*at, **t))
            .map(|(t, _)| *t);
        match (other, own) {
            (Some(t), _) if name.starts_with("execve") => {
                self.pending.remove(&tid);
                Ok(self.pending.remove(&t))
            }
            (_, None) => Ok(None),
            (_, Some(_)) => Err(LineProblem(format!(
                "`<... {name} resumed>`, but the unfinished call of thread {tid} is `{}`",
                self.pending[&tid].1.split('(').next().unwrap_or("")
            ))),
        }
    }

    /// The key of thread `tid` (`None`: no pid column), made known;
    /// `body` is what its line says.
    fn task(&mut self, tid: Option<u32>, body: &Body) -> u32 {
        let t = tid.unwrap_or(0);
        if t != 0
            && self.alias.is_none()
            && self.tasks.contains_key(&0)
            && !self.tasks.contains_key(&t)
        {
            // `-f` to stderr: the first process's lines have no [pid N]
            // while it is alone. A new thread's first line is not a
            // resumed call, nor does one show while no clone is pending.
            let resumes_first = matches!(body, Body::Resumed { name, .. }
                if self.pending.get(&0).is_some_and(|(_, h)| h.starts_with(&format!("{name}("))));
            if resumes_first || self.pending_clone().is_none() {
                self.alias = Some(t);
            }
        }
        let key = if Some(t) == self.alias { 0 } else { t };
        if !self.tasks.contains_key(&key) {
            // A thread that shows before its clone returned.
            let parent = self.pending_clone();
            self.new_task(key, parent);
        }
        key
    }

    /// The thread in a clone that has not returned yet (the latest), and
    /// whether it makes a thread.
    fn pending_clone(&self) -> Option<(u32, bool)> {
        self.pending
            .iter()
            .filter(|(_, (_, h))| {
                ["clone(", "clone3(", "fork(", "vfork("]
                    .iter()
                    .any(|c| h.starts_with(c))
            })
            .max_by_key(|(tid, (t, _))| (*t, **tid))
            .map(|(tid, (_, h))| (*tid, h.contains("CLONE_THREAD")))
    }

    fn new_task(&mut self, key: u32, parent: Option<(u32, bool)>) {
        let (pid, ppid, comm) = match parent {
            Some((p, thread)) => {
                let pt = &self.threads[self.tasks[&p]];
                let pid = if thread { pt.pid } else { key };
                (pid, pt.pid, pt.comm.clone())
            }
            None => (key, UNKNOWN, String::new()),
        };
        if pid == key && ppid != UNKNOWN {
            self.fds.inherit(ppid, key);
        }
        self.main.get_or_insert(key);
        self.tasks.insert(key, self.threads.len());
        self.threads.push(Thread {
            pid,
            tid: key,
            ppid,
            comm,
        });
    }

    /// A thread known before the output begins.
    pub fn known(&mut self, t: Thread) {
        self.main.get_or_insert(t.tid);
        self.tasks.insert(t.tid, self.threads.len());
        self.threads.push(t);
    }

    fn pid_of(&self, tid: u32) -> u32 {
        self.threads[self.tasks[&tid]].pid
    }

    /// Reads one whole call of thread `tid` entered at `t0`.
    fn complete(&mut self, tid: u32, t0: u64, text: &str) -> Result<(), LineProblem> {
        let c = syntax::call(text)?;
        if c.value.is_some() {
            *(if c.lat_ns.is_some() {
                &mut self.timed
            } else {
                &mut self.untimed
            }) += 1;
        }
        let lat = c.lat_ns.unwrap_or(0);
        self.end_ns = self.end_ns.max(t0 + lat);
        let pid = self.pid_of(tid);
        let value = c.value;
        match c.name {
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Some(child) = value.filter(|&v| v > 0) {
                    self.cloned(tid, child as u32, &c);
                }
            }
            "dup" | "dup2" | "dup3" => self.dup(pid, &c),
            "fcntl" | "fcntl64" if c.args.get(1).is_some_and(|a| a.starts_with("F_DUPFD")) => {
                self.dup(pid, &c)
            }
            "execve" | "execveat" if value == Some(0) => self.exec(tid, &c),
            "sendfile" | "sendfile64" | "copy_file_range" | "splice" => {
                // They move file positions iolab does not follow.
                for a in &c.args {
                    if let Some((fd, note)) = syntax::fd(a)
                        && let Some(d) = self.fds.desc(pid, fd, note)
                    {
                        self.fds.get(d).pos = None;
                    }
                }
            }
            _ => {}
        }
        let Some((id, info)) = calls::by_name(c.name) else {
            return Ok(());
        };
        let Some(value) = value else {
            return Ok(()); // did not return
        };
        let result = match c.errno {
            Some(e) if value < 0 => -strace_names::errno(e)
                .ok_or_else(|| format!("unknown errno {e} in the result of {}", c.name))?,
            _ => value,
        };
        let mut e = Event {
            t_ns: t0.saturating_sub(self.first_ns.unwrap_or(t0)),
            pid,
            tid,
            call: id,
            result,
            lat_ns: lat,
            ..Event::default()
        };
        self.locate(&mut e, info, &c);
        self.events.push(e);
        Ok(())
    }

    fn cloned(&mut self, tid: u32, child: u32, c: &Call) {
        let thread = c.args.iter().any(|a| a.contains("CLONE_THREAD"));
        let ppid = self.pid_of(tid);
        match self.tasks.get(&child) {
            Some(&i) => {
                let t = &mut self.threads[i];
                t.pid = if thread { ppid } else { child };
                t.ppid = ppid;
            }
            None => self.new_task(child, Some((tid, thread))),
        }
    }

    fn dup(&mut self, pid: u32, c: &Call) {
        if let (Some(new), Some((old, note))) =
            (c.value, c.args.first().and_then(|a| syntax::fd(a)))
        {
            self.fds.dup(pid, old, note, new);
        }
    }

    fn exec(&mut self, tid: u32, c: &Call) {
        let file = c.args.first().and_then(|a| syntax::string(a));
        if let Some(f) = file {
            let base = f.rsplit('/').next().unwrap_or(&f);
            let comm: String = base.chars().take(15).collect();
            let i = self.tasks[&tid];
            self.threads[i].comm = comm;
        }
        if Some(tid) == self.main && self.command.is_empty() {
            self.command = c
                .args
                .get(1)
                .map(|a| syntax::strings(a))
                .unwrap_or_default();
        }
    }

    /// Fills in where the call `e` (`info`, as strace wrote it: `c`)
    /// worked: its fd, file, offset, length and flags, following the fds
    /// of `e.pid` and their positions.
    fn locate(&mut self, e: &mut Event, info: &CallInfo, c: &Call) {
        let (pid, result) = (e.pid, e.result);
        let arg = |i: Option<u8>| i.and_then(|i| c.args.get(usize::from(i)).copied());
        let num = |i: Option<u8>| arg(i).and_then(syntax::number);
        let fd_arg = arg(info.fd).and_then(syntax::fd);
        self.fd_notes |= fd_arg.is_some_and(|(_, n)| n.is_some());
        let fd = fd_arg.map_or(-1, |(v, _)| v);
        let desc = fd_arg.and_then(|(v, note)| self.fds.desc(pid, v, note));
        // strace shows preadv2's offset as one argument, the kernel as two.
        let flags_at = match info.name {
            "preadv2" | "pwritev2" => Some(4),
            _ => info.flags,
        };
        let flags = arg(flags_at).map_or(0, syntax::flags);
        let len = num(info.len).filter(|&v| v >= 0).unwrap_or(0) as u64;
        let explicit = num(info.offset);
        let mut file = desc.and_then(|d| self.fds.get(d).file);
        let mut offset = explicit.filter(|&o| o >= 0).map(|o| o as u64);
        let by_position = info.offset.is_none() || explicit == Some(-1);
        match info.class {
            Class::Open if info.name == "close" => {
                self.fds.close(pid, fd);
            }
            Class::Open => {
                let dir = fd_arg.and_then(|(_, n)| n);
                let opened = c.note.filter(|_| result >= 0).and_then(syntax::note_path);
                let named = arg(info.path).and_then(syntax::string);
                file = opened
                    .or_else(|| named.map(|p| resolve(p, dir)))
                    .map(|p| self.fds.path_id(p));
                if result >= 0 {
                    let append = info.name != "creat" && flags & libc::O_APPEND as u64 != 0;
                    let d = Desc {
                        file,
                        pos: Some(0),
                        append,
                    };
                    self.fds.open(pid, result, d);
                }
            }
            Class::Read | Class::Write if by_position => {
                if let Some(d) = desc {
                    let d = self.fds.get(d);
                    if info.class == Class::Write && d.append {
                        d.pos = None;
                    } else {
                        offset = d.pos;
                        if result >= 0 {
                            d.pos = d.pos.map(|p| p + result as u64);
                        }
                    }
                }
            }
            _ if info.name == "lseek" => {
                if let Some(d) = desc.filter(|_| result >= 0) {
                    self.fds.get(d).pos = Some(result as u64);
                }
            }
            _ => {
                let dir = fd_arg.and_then(|(_, n)| n);
                if let Some(p) = arg(info.path).and_then(syntax::string)
                    && !p.is_empty()
                {
                    file = Some(resolve(p, dir)).map(|p| self.fds.path_id(p));
                }
            }
        }
        (e.fd, e.file, e.offset, e.len, e.flags) = (fd as i32, file, offset, len, flags);
    }

    /// What the output lacked, one sentence each: `-T`'s latencies, `-y`'s
    /// paths of fds opened before strace began.
    pub fn lacks(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.untimed > 0 && self.timed == 0 {
            out.push(
                "no -T: the calls' latencies were not recorded and show as 0 (record with -T)"
                    .to_string(),
            );
        }
        let unnamed = (self.events.iter())
            .filter(|e| e.fd >= 0 && e.file.is_none())
            .count();
        if !self.fd_notes && unnamed > 0 {
            out.push(format!(
                "no -y: {unnamed} calls on fds opened before strace began name no file (record with -y)"
            ));
        }
        out
    }

    /// The trace read.
    pub fn finish(mut self) -> Trace {
        // Key 0 (no pid column) is the thread that later showed as
        // `[pid N]`, if one did.
        let real = |id: u32| if id == 0 { self.alias.unwrap_or(0) } else { id };
        let pids: HashMap<u32, u32> = (self.threads.iter())
            .map(|t| (t.tid, real(t.pid)))
            .collect();
        for e in &mut self.events {
            e.pid = pids[&e.tid];
            e.tid = real(e.tid);
        }
        self.events.sort_by_key(|e| e.t_ns);
        for t in &mut self.threads {
            t.ppid = if t.ppid == UNKNOWN { 0 } else { real(t.ppid) };
            (t.pid, t.tid) = (real(t.pid), real(t.tid));
        }
        let first = self.first_ns.unwrap_or(0);
        let pid = self.main.map_or(0, |m| pids[&m]);
        let mut t = Trace {
            meta: Meta {
                source: "strace".into(),
                mode: Mode::Events,
                command: self.command,
                pid,
                started_unix: first as f64 / 1e9,
                duration_ns: self.end_ns.saturating_sub(first),
                exit_status: self.exit_status,
                kernel: String::new(),
                host: String::new(),
                stopped: None,
                notes: Vec::new(),
            },
            threads: self.threads,
            paths: self.fds.paths,
            events: self.events,
            ..Trace::default()
        };
        t.tally_events();
        t
    }
}

/// `path` made absolute with the directory `dir_note` names (`openat`'s
/// `AT_FDCWD</cwd>`), when it is relative and the directory is known.
fn resolve(path: String, dir_note: Option<&str>) -> String {
    match dir_note.and_then(syntax::note_path) {
        Some(dir) if !path.starts_with('/') => {
            let rel = path.strip_prefix("./").unwrap_or(&path);
            format!("{}/{rel}", dir.trim_end_matches('/'))
        }
        _ => path,
    }
}
