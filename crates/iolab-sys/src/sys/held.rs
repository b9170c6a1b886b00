//! Starting a command held before `exec`, so a tracer or profiler can
//! attach to its pid first and see every call, the loader's included
//! (`iolab trace`, `iolab exec --flamegraph`); and ending it measured: its
//! exit seen through a pidfd, its `/proc/PID/io` read while it is a zombie
//! (the whole tree it reaped), its rusage from `wait4`.
//!
//! The child is forked by hand: `std::process::Command::spawn` waits for
//! the `exec` itself, so a child that waits for the tracer cannot come
//! from it. Between `fork` and `execve` the child only calls
//! async-signal-safe functions (`close`, `signal`, `chdir`, `read`,
//! `dup2`, `execve`, `_exit`), and the
//! one call of it the trace sees is its wait's `read`, whose entry came
//! before the tracer attached (so it is not counted).

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A started command waiting for [`Held::release`] to `exec`.
pub struct Held {
    /// The held process.
    pub pid: u32,
    gate: Option<std::io::PipeWriter>,
    status: Option<i32>,
    pidfd: Option<OwnedFd>,
}

/// How a command ended, measured before and as it was reaped.
#[derive(Debug, Clone)]
pub struct Ended {
    /// Its exit status (128 + the signal for one killed).
    pub status: i32,
    /// `/proc/PID/io` read while it was a zombie: its own I/O and that of
    /// every child it reaped (`rchar`, `read_bytes`, `syscr`...); empty
    /// when the kernel keeps no I/O accounting.
    pub io: BTreeMap<String, u64>,
    /// `wait4`'s rusage: CPU, faults, blocks, context switches of it and
    /// the children it reaped.
    pub rusage: BTreeMap<String, u64>,
}

/// Everything the child needs, made before the fork (no allocation after).
struct Exec {
    dir: Option<CString>,
    path: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

/// The program's path: as given when it holds a `/`, else found on `$PATH`.
fn find(program: &str) -> Option<PathBuf> {
    let runnable = |p: &PathBuf| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        return Some(PathBuf::from(program)).filter(runnable);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(runnable)
}

/// Why `program` cannot be run: missing, a directory, not executable.
fn not_runnable(program: &str) -> std::io::Error {
    use std::io::{Error, ErrorKind};
    if !program.contains('/') {
        return Error::new(ErrorKind::NotFound, "no such program on $PATH");
    }
    match std::fs::metadata(program) {
        Err(e) => e,
        Ok(m) if m.is_dir() => Error::other("it is a directory"),
        Ok(_) => Error::new(
            ErrorKind::PermissionDenied,
            "not executable (no execute permission)",
        ),
    }
}

fn cstring(b: &[u8]) -> Option<CString> {
    CString::new(b).ok()
}

/// Where the command's standard output or error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    /// Where iolab's goes.
    Inherit,
    /// To iolab's standard error (iolab's JSON on stdout stays clean).
    Stderr,
    /// Nowhere (`/dev/null`).
    Null,
}

impl Out {
    /// The descriptor the child `dup2`s over its stdout or stderr, if any.
    fn fd(self) -> std::io::Result<Option<OwnedFd>> {
        match self {
            Out::Inherit => Ok(None),
            Out::Stderr => std::os::fd::AsFd::as_fd(&std::io::stderr())
                .try_clone_to_owned()
                .map(Some),
            Out::Null => std::fs::File::options()
                .write(true)
                .open("/dev/null")
                .map(|f| Some(f.into())),
        }
    }
}

/// Forks `argv` (not empty); the child waits on a pipe until released,
/// then `exec`s with its standard output and error sent to `out` and `err`.
pub fn held(argv: &[String], out: Out, err: Out) -> std::io::Result<Held> {
    held_in(argv, out, err, None)
}

/// [`held`], the command run in `dir` (iolab's own when `None`).
pub fn held_in(
    argv: &[String],
    out: Out,
    err: Out,
    dir: Option<&std::path::Path>,
) -> std::io::Result<Held> {
    let program = argv
        .first()
        .ok_or_else(|| std::io::Error::other("no command given"))?;
    // Absolute: the child may change directory before it execs.
    let path = std::path::absolute(find(program).ok_or_else(|| not_runnable(program))?)?;
    let nul = || std::io::Error::other("an argument holds a NUL byte");
    let exec = Exec {
        dir: match dir {
            Some(d) => Some(cstring(d.as_os_str().as_bytes()).ok_or_else(nul)?),
            None => None,
        },
        path: cstring(path.as_os_str().as_bytes()).ok_or_else(nul)?,
        argv: argv
            .iter()
            .map(|a| cstring(a.as_bytes()))
            .collect::<Option<_>>()
            .ok_or_else(nul)?,
        envp: std::env::vars_os()
            .map(|(k, v)| cstring(&[k.as_bytes(), b"=", v.as_bytes()].concat()))
            .collect::<Option<_>>()
            .ok_or_else(nul)?,
    };
    let (reader, writer) = std::io::pipe()?;
    let (out, err) = (out.fd()?, err.fd()?);
    let pid = fork_exec(
        &exec,
        [reader.as_raw_fd(), writer.as_raw_fd()],
        [
            out.as_ref().map(|f| f.as_raw_fd()),
            err.as_ref().map(|f| f.as_raw_fd()),
        ],
    )?;
    Ok(Held {
        pid,
        gate: Some(writer),
        status: None,
        pidfd: None,
    })
}

/// Forks; the child closes its copy of the gate's write end (`gate[1]`),
/// blocks reading `gate[0]` (close-on-exec), points its stdout and stderr
/// at `out[0]` and `out[1]` if given, and `execve`s. When iolab closes the gate without releasing it
/// (it failed, or ended), the child reads nothing and exits unrun.
fn fork_exec(e: &Exec, gate: [i32; 2], out: [Option<i32>; 2]) -> std::io::Result<u32> {
    let mut argv: Vec<*const libc::c_char> = e.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = e.envp.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    // SAFETY: after fork the child only calls close, signal, read, dup2, chdir, execve and _exit
    // (async-signal-safe) on memory made before the fork; the parent only
    // reads the result.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: the child side, as above; it never returns.
        unsafe {
            libc::close(gate[1]);
            // iolab (a Rust program) ignores SIGPIPE; ignored signals
            // survive exec: the command gets the default back, as from a
            // shell (`yes | head -1` ends quietly).
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            // In its directory before it is released: a tracer reading
            // /proc/PID/cwd then sees the one its relative paths start at.
            if let Some(d) = &e.dir
                && libc::chdir(d.as_ptr()) != 0
            {
                libc::_exit(127);
            }
            let mut b = [0u8; 1];
            if libc::read(gate[0], b.as_mut_ptr().cast(), 1) != 1 {
                libc::_exit(127);
            }
            if let Some(fd) = out[0] {
                libc::dup2(fd, 1);
            }
            if let Some(fd) = out[1] {
                libc::dup2(fd, 2);
            }
            libc::execve(e.path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127);
        }
    }
    Ok(pid as u32)
}

impl Held {
    /// Lets the command `exec`.
    pub fn release(&mut self) {
        if let Some(mut w) = self.gate.take() {
            let _ = w.write_all(b"x");
        }
    }

    /// The exit status once the command has ended (128 + the signal for
    /// one killed), without waiting.
    pub fn try_wait(&mut self) -> Option<i32> {
        if self.status.is_none() {
            self.status = status(waitpid(
                Pid::from_raw(self.pid as i32),
                Some(WaitPidFlag::WNOHANG),
            ));
        }
        self.status
    }

    /// Sends `sig` to the command and every process under it (a shell's
    /// children too), while it runs.
    pub fn signal_tree(&self, sig: Signal) {
        if self.status.is_some() {
            return;
        }
        for fd in self.tree_fds() {
            super::pidfd::signal(&fd, sig as libc::c_int);
        }
    }

    /// pidfds of the command and every process under it, each opened only
    /// while its parent is the one it was found under: a process that ended
    /// meanwhile and whose PID another took is left out.
    fn tree_fds(&self) -> Vec<OwnedFd> {
        let mut fds: Vec<OwnedFd> = super::pidfd::open(self.pid).into_iter().collect();
        let mut parents = vec![self.pid];
        let mut i = 0;
        while i < parents.len() {
            let parent = parents[i];
            for c in children(parent) {
                if let Some(fd) = super::pidfd::open_if(c, |st| st.ppid == parent) {
                    fds.push(fd);
                    parents.push(c);
                }
            }
            i += 1;
        }
        fds
    }

    /// Stops the command as Ctrl-C does: SIGINT to it and every process
    /// under it, each named by a pidfd taken first (so a process that ends
    /// meanwhile and whose pid is reused is never signalled); whatever still
    /// runs after `grace`, the command's orphans too, gets SIGKILL. Reaps
    /// the command; its status and how many processes were signalled.
    pub fn interrupt_tree(&mut self, grace: std::time::Duration) -> (Option<i32>, usize) {
        if self.try_wait().is_some() {
            return (self.status, 0);
        }
        let fds = self.tree_fds();
        for fd in &fds {
            super::pidfd::signal(fd, libc::SIGINT);
        }
        let end = std::time::Instant::now() + grace;
        while fds.iter().any(super::pidfd::running) && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        for fd in fds.iter().filter(|fd| super::pidfd::running(fd)) {
            super::pidfd::signal(fd, libc::SIGKILL);
        }
        (self.kill(), fds.len())
    }

    /// Kills the command (tracing stopped early, or could not start) and
    /// reaps it; its status.
    pub fn kill(&mut self) -> Option<i32> {
        if self.status.is_none() {
            let _ = kill(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
            self.gate.take();
            self.status = status(waitpid(Pid::from_raw(self.pid as i32), None));
        }
        self.status
    }
}

impl Held {
    /// Waits up to `timeout` for the command to end (it is then a zombie,
    /// not yet reaped); true when it has.
    pub fn wait_exit(&mut self, timeout: std::time::Duration) -> std::io::Result<bool> {
        if self.status.is_some() {
            return Ok(true);
        }
        if self.pidfd.is_none() {
            self.pidfd = Some(super::pidfd::open(self.pid)?);
        }
        let fd = self.pidfd.as_ref().expect("opened above");
        let mut p = [nix::poll::PollFd::new(
            std::os::fd::AsFd::as_fd(fd),
            nix::poll::PollFlags::POLLIN,
        )];
        let ms = timeout.as_millis().min(u16::MAX as u128) as u16;
        match nix::poll::poll(&mut p, ms) {
            Ok(n) => Ok(n > 0),
            Err(nix::errno::Errno::EINTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// CPU time the process has used so far, in ns (`/proc/PID/schedstat`):
    /// held, that of its start before `exec`.
    pub fn cpu_ns(&self) -> Option<u64> {
        std::fs::read_to_string(format!("/proc/{}/schedstat", self.pid))
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }

    /// Its `/proc/PID/io` now (empty when unreadable): its own I/O and
    /// that of the children it waited for.
    pub fn io(&self) -> BTreeMap<String, u64> {
        io_of(self.pid)
    }

    /// The I/O of it and every process under it so far, added up: a
    /// child's counts move into its parent's when it is reaped, so the sum
    /// over the live tree grows smoothly while the command runs.
    pub fn io_tree(&self) -> BTreeMap<String, u64> {
        let mut sum = BTreeMap::new();
        for p in self.tree() {
            for (k, v) in io_of(p) {
                *sum.entry(k).or_insert(0) += v;
            }
        }
        sum
    }

    /// It and every process under it now.
    fn tree(&self) -> Vec<u32> {
        let mut tree = vec![self.pid];
        let mut i = 0;
        while i < tree.len() {
            tree.extend(children(tree[i]));
            i += 1;
        }
        tree
    }

    /// Once [`Held::wait_exit`] said it ended: reads its I/O counters, then
    /// reaps it with its rusage.
    pub fn reap(&mut self) -> std::io::Result<Ended> {
        let io = self.io();
        let (status, ru) = wait4(self.pid)?;
        self.status = Some(status);
        Ok(Ended {
            status,
            io,
            rusage: super::rusage::counters_of(&ru),
        })
    }
}

/// The children of every thread of `pid` (`/proc/PID/task/TID/children`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// `/proc/PID/io` of `pid` (empty when unreadable).
fn io_of(pid: u32) -> BTreeMap<String, u64> {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .map(|t| parse_io(&t))
        .unwrap_or_default()
}

/// `/proc/PID/io` as `key: value` lines.
fn parse_io(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// `wait4(pid)`: its exit status (128 + the signal for one killed) and
/// rusage, retried on EINTR.
fn wait4(pid: u32) -> std::io::Result<(i32, libc::rusage)> {
    loop {
        let mut st = 0;
        // SAFETY: wait4 writes the status and the zeroed rusage we pass.
        let (rc, ru) = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            let rc = libc::wait4(pid as libc::pid_t, &mut st, 0, &mut ru);
            (rc, ru)
        };
        if rc < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let status = if libc::WIFSIGNALED(st) {
            128 + libc::WTERMSIG(st)
        } else {
            libc::WEXITSTATUS(st)
        };
        return Ok((status, ru));
    }
}

impl Drop for Held {
    /// A command not reaped yet (iolab failed before releasing it, or
    /// while waiting for it) is killed and reaped, never left behind.
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
        }
    }
}

fn status(w: nix::Result<WaitStatus>) -> Option<i32> {
    match w {
        Ok(WaitStatus::Exited(_, c)) => Some(c),
        Ok(WaitStatus::Signaled(_, s, _)) => Some(128 + s as i32),
        _ => None,
    }
}
