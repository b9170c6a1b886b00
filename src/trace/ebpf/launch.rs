//! Starting the command to trace held before `exec`, so the tracer can
//! attach to its pid first and see every call, the loader's included.
//!
//! The child is forked by hand: `std::process::Command::spawn` waits for
//! the `exec` itself, so a child that waits for the tracer cannot come
//! from it. Between `fork` and `execve` the child only calls
//! async-signal-safe functions (`read`, `dup2`, `execve`, `_exit`), and the
//! one call of it the trace sees is its wait's `read`, whose entry came
//! before the tracer attached (so it is not counted).

use crate::trace::error::{TraceError, TraceResult};
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A started command waiting for [`Held::release`] to `exec`.
pub struct Held {
    /// The traced process.
    pub pid: u32,
    gate: Option<std::io::PipeWriter>,
    status: Option<i32>,
}

/// Everything the child needs, made before the fork (no allocation after).
struct Exec {
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

fn cstring(b: &[u8]) -> Option<CString> {
    CString::new(b).ok()
}

/// Forks `argv`; the child waits on a pipe until released, then `exec`s.
/// With `stdout_to_stderr` its standard output goes to iolab's standard
/// error (so iolab's JSON on stdout stays clean).
pub fn held(argv: &[String], stdout_to_stderr: bool) -> TraceResult<Held> {
    let program = argv.first().ok_or_else(|| TraceError::Usage {
        what: "iolab trace".into(),
        problem: "no command given".into(),
    })?;
    let spawn_err = |source| TraceError::Spawn {
        command: program.clone(),
        source,
    };
    let path = find(program).ok_or_else(|| {
        spawn_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such program (or not executable; names without a / are looked up on $PATH)",
        ))
    })?;
    let nul = || spawn_err(std::io::Error::other("an argument holds a NUL byte"));
    let exec = Exec {
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
    let (reader, writer) = std::io::pipe().map_err(spawn_err)?;
    let out: Option<OwnedFd> = if stdout_to_stderr {
        Some(
            std::os::fd::AsFd::as_fd(&std::io::stderr())
                .try_clone_to_owned()
                .map_err(spawn_err)?,
        )
    } else {
        None
    };
    let pid = fork_exec(
        &exec,
        [reader.as_raw_fd(), writer.as_raw_fd()],
        out.as_ref().map(|f| f.as_raw_fd()),
    )
    .map_err(spawn_err)?;
    Ok(Held {
        pid,
        gate: Some(writer),
        status: None,
    })
}

/// Forks; the child closes its copy of the gate's write end (`gate[1]`),
/// blocks reading `gate[0]` (close-on-exec), points its stdout at `out` if
/// given, and `execve`s. When iolab closes the gate without releasing it
/// (it failed, or ended), the child reads nothing and exits unrun.
fn fork_exec(e: &Exec, gate: [i32; 2], out: Option<i32>) -> std::io::Result<u32> {
    let mut argv: Vec<*const libc::c_char> = e.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = e.envp.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    // SAFETY: after fork the child only calls close, read, dup2, execve and _exit
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
            let mut b = [0u8; 1];
            if libc::read(gate[0], b.as_mut_ptr().cast(), 1) != 1 {
                libc::_exit(127);
            }
            if let Some(fd) = out {
                libc::dup2(fd, 1);
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

impl Drop for Held {
    /// A command never released (iolab failed before the trace started)
    /// is killed and reaped, never left waiting.
    fn drop(&mut self) {
        if self.gate.is_some() {
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
