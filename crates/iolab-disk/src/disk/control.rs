//! The control socket of a serving disk: one JSON request per connection,
//! one JSON answer (`status`, `set`, `crash`, `down`).

use super::error::DiskError;
use super::rules::Counters;
use super::state::State;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// What a client asks.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum Request {
    /// Rules and counters.
    Status,
    /// New rules, as (flag, value), replacing the old ones.
    Set {
        /// The rules.
        rules: Vec<(String, String)>,
    },
    /// Power loss now.
    Crash,
    /// Unmount and remove everything.
    Down,
}

/// A disk's rules and counters, as `disk status` shows them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Status {
    /// The state file.
    pub state: State,
    /// The rules in force, as written.
    pub rules: Vec<String>,
    /// What they did so far.
    pub counters: Counters,
    /// Bytes written and not yet flushed (block layer).
    pub unflushed: Option<u64>,
    /// The file system at DIR is mounted read-only now (ext4 stops
    /// writing after a write error of its journal).
    #[serde(default)]
    pub read_only: bool,
    /// How close to their deadlines the delayed answers went out (block
    /// layer; None for the file layer).
    #[serde(default)]
    pub punctual: Option<Punctual>,
    /// Requests the daemon failed with EIO because its image handler
    /// panicked (block layer; a bug of iolab's, never an injected fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<super::fuse::Failures>,
}

/// How close to their deadlines a disk's delayed answers went out, since
/// it came up: the daemon's own precision, before the kernel and the
/// program see the answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Punctual {
    /// Answers held back by a delay.
    pub held: u64,
    /// Of which sent within 2 us of their deadline.
    pub on_time: u64,
    /// The mean lateness in ns.
    pub mean_late_ns: u64,
    /// The worst lateness in ns.
    pub max_late_ns: u64,
}

/// The daemon's answer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// For `status` and `set`.
    Status(Box<Status>),
    /// For `crash`: the bytes of unflushed writes dropped.
    Crashed {
        /// Bytes dropped.
        dropped: u64,
    },
    /// For `down`: all removed (`lazy`: DIR was busy and was detached
    /// lazily; its file system goes once the last file closes).
    Down {
        /// Detached lazily.
        #[serde(default)]
        lazy: bool,
    },
    /// The request failed.
    Failed {
        /// Why.
        message: String,
    },
}

/// Sends `req` to the daemon of the disk whose private directory is
/// `run`, waiting up to `wait` for the answer.
pub fn ask(run: &Path, req: &Request, wait: Duration) -> Result<Answer, DiskError> {
    let sock = super::state::socket(run);
    let io = |e| {
        DiskError::io(
            format!("cannot talk to the disk daemon at {}", sock.display()),
            e,
        )
    };
    let mut s = UnixStream::connect(&sock).map_err(io)?;
    s.set_read_timeout(Some(wait)).map_err(io)?;
    let mut line = serde_json::to_string(req).expect("request serializes");
    line.push('\n');
    s.write_all(line.as_bytes()).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer).map_err(io)?;
    serde_json::from_str(&answer).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("unreadable answer {answer:?}: {e}"),
        ))
    })
}

/// Reads one request from a client.
pub fn read_request(s: &UnixStream) -> std::io::Result<Request> {
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    serde_json::from_str(&line).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Writes an answer to a client.
pub fn write_answer(mut s: &UnixStream, a: &Answer) -> std::io::Result<()> {
    let mut line = serde_json::to_string(a).expect("answer serializes");
    line.push('\n');
    s.write_all(line.as_bytes())
}
