//! Watching an iolab process from outside: its peak memory, and how long it
//! takes to stop once signalled at a given moment.

use super::bin;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How a watched process ended.
#[derive(Debug)]
pub struct Ended {
    /// Exit code (-1 when a signal killed it).
    pub code: i32,
    /// Its stderr.
    pub stderr: String,
    /// Peak resident memory in KiB (`ru_maxrss` of `wait4`).
    pub peak_kib: u64,
    /// From the signal to the exit (zero when no signal was sent).
    pub stop_took: Duration,
}

/// Runs `cmd` (stdout discarded) to its end; its exit code, stderr and
/// peak resident memory.
pub fn peak_rss(cmd: &mut Command) -> Ended {
    watch(cmd, None)
}

/// Starts `iolab ARGS`; once a line of its stderr contains `marker` (or at
/// once for an empty marker, or after `after`), sends `signal` and
/// measures how long the process takes to exit.
pub fn signal_when(args: &[&str], marker: &str, after: Duration, signal: i32) -> Ended {
    watch(bin().args(args), Some((marker, after, signal)))
}

fn watch(cmd: &mut Command, signal: Option<(&str, Duration, i32)>) -> Ended {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the command");
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel::<String>();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    let mut sent = None;
    if let Some((marker, after, sig)) = signal {
        if !marker.is_empty() {
            let t0 = Instant::now();
            while let Ok(line) = rx.recv_timeout(Duration::from_secs(120)) {
                if line.contains(marker) || t0.elapsed() > Duration::from_secs(120) {
                    break;
                }
            }
        }
        std::thread::sleep(after);
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, sig) };
        sent = Some(Instant::now());
    }
    let (status, ru) = wait4(pid);
    let peak_kib = ru.ru_maxrss as u64;
    let stop_took = sent.map_or(Duration::ZERO, |t| t.elapsed());
    std::mem::forget(child); // reaped by wait4
    Ended {
        code: status,
        stderr: reader.join().unwrap(),
        peak_kib,
        stop_took,
    }
}

/// What a command printed and how much it read from storage.
pub struct Reads {
    /// Its exit code (-1 when a signal killed it).
    pub code: i32,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Bytes it read from storage, past the page cache (`ru_inblock` of
    /// `wait4`, 512-byte units): this process only, whatever else runs.
    pub disk_bytes: u64,
}

/// Runs `cmd` (any program: fio or iolab) to its end, stderr inherited.
pub fn disk_reads(cmd: &mut Command) -> Reads {
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("start");
    let mut stdout = Vec::new();
    std::io::Read::read_to_end(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let (code, ru) = wait4(child.id() as i32);
    std::mem::forget(child); // reaped by wait4
    Reads {
        code,
        stdout,
        disk_bytes: ru.ru_inblock as u64 * 512,
    }
}

/// Waits for `pid`; its exit code (-1 for a signal) and its resource usage.
fn wait4(pid: i32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child with valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, ru)
}
