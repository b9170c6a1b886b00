//! The messages between the coordinator and `iolab worker`: one JSON
//! object per line, tagged by `msg`. The coordinator speaks first after the
//! worker's `hello`; every time is the sender's CLOCK_REALTIME in ns.
//! A line is `{"msg":"NAME","body":{...}}` (the tag first, so a large
//! body is read as it streams, not buffered).

use crate::runner::RunResult;
use crate::sys::environment::Environment;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// This build's version: coordinator and workers must agree on it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// From the coordinator to a worker.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "msg", content = "body", rename_all = "snake_case")]
pub enum ToWorker {
    /// Asks for the worker's clock (offset estimate).
    Ping,
    /// The job: fio's arguments as on `iolab run`'s command line, and the
    /// worker's rank (its files are named with it).
    Job {
        /// 0-based rank.
        rank: u32,
        /// The job arguments.
        args: Vec<String>,
    },
    /// Every worker is ready: start the timed part now.
    Start,
    /// Stop early (Ctrl-C): send what was measured.
    Stop,
    /// Stop now, as planned: another rank finished first
    /// (`--stonewall-ranks`); the results are complete, not interrupted.
    Finish,
}

/// From a worker to the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "msg", content = "body", rename_all = "snake_case")]
pub enum FromWorker {
    /// The first line: who it is.
    Hello {
        /// Its iolab version.
        version: String,
        /// Its host name.
        host: String,
        /// Its process id.
        pid: u32,
    },
    /// The answer to `ping`: its clock now.
    Pong {
        /// CLOCK_REALTIME, ns.
        t_ns: u64,
    },
    /// Files laid out: waiting at the barrier.
    Ready,
    /// The timed part started (its clock).
    Started {
        /// CLOCK_REALTIME, ns.
        t_ns: u64,
    },
    /// Still running (every second after `started`).
    Heartbeat,
    /// The run's results.
    Result {
        /// What it measured.
        run: Box<RunResult>,
        /// Where: its machine and the storage of its files.
        #[serde(default)]
        env: Option<Box<Environment>>,
    },
    /// The job failed there.
    Error {
        /// The error, as iolab would print it.
        message: String,
    },
}

/// Writes one message as a line and flushes it.
pub fn send<T: Serialize>(w: &mut (impl Write + ?Sized), m: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(m).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// Reads one message (`Ok(None)`: the other side closed the stream).
pub fn receive<T: for<'de> Deserialize<'de>>(r: &mut impl BufRead) -> std::io::Result<Option<T>> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line).map(Some).map_err(|e| {
        let start: String = line.trim_end().chars().take(120).collect();
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{e}: {start}"))
    })
}

/// CLOCK_REALTIME in ns.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
