//! `iolab exec`: the user's own program as the workload. Before each run
//! the named files are put in the asked page-cache state (cold, warm,
//! keep) and their residency measured; the command runs held until
//! iolab has read its counters, then is timed from `exec` to exit; after
//! it, what it did is read from the kernel: its tree's `/proc/PID/io`
//! (bytes and calls), `wait4`'s rusage (CPU, faults, blocks), the named
//! files' residency again (cache hits and misses) and the devices under
//! them (iostat's columns). Runs are stored (kind `exec`) so `history`,
//! `show`, `report` and `compare` take them; `compare --exec` runs two
//! commands interleaved ([`ab`]); `--flamegraph` profiles them with perf
//! ([`flame`]).

pub mod ab;
pub mod cache;
pub mod error;
pub mod figures;
pub mod flame;
pub mod run;
pub mod store;
pub mod traced;

pub use error::ExecError;
pub use run::{ExecRequest, run};

use crate::counters::DiskDelta;
use crate::runner::result::FirstRunEffect;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One execution of the command.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExecRun {
    /// 1 for the first run.
    pub index: u32,
    /// Its exit status (128 + the signal for one killed).
    pub exit_status: i32,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// From `exec` to exit, in ns.
    pub wall_ns: u64,
    /// `wait4`'s rusage of the command and the children it reaped:
    /// `user_us`, `sys_us`, `majflt`, `minflt`, `nvcsw`, `nivcsw`,
    /// `inblock`, `oublock`; `sys_us` without `held_us`, the CPU of its
    /// start before `exec` (iolab's fork, held at the gate).
    pub rusage: BTreeMap<String, u64>,
    /// Its tree's `/proc/PID/io`: `rchar`, `wchar`, `syscr`, `syscw`,
    /// `read_bytes`, `write_bytes`, `cancelled_write_bytes`.
    pub io: BTreeMap<String, u64>,
    /// The named files' page cache before and after (none named: absent).
    pub cache: Option<cache::CacheDelta>,
    /// The devices under the named files (or the working directory).
    pub disks: Vec<DiskDelta>,
    /// Its system calls (`--trace`): per call counts, bytes and log2
    /// latency histograms, per file figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::Trace>,
}

impl ExecRun {
    /// Ended by itself with status 0.
    pub fn ok(&self) -> bool {
        self.exit_status == 0 && !self.interrupted
    }

    /// A counter of `/proc/PID/io` (0 when absent).
    pub fn io(&self, key: &str) -> u64 {
        self.io.get(key).copied().unwrap_or(0)
    }

    /// A counter of the rusage (0 when absent).
    pub fn rusage(&self, key: &str) -> u64 {
        self.rusage.get(key).copied().unwrap_or(0)
    }
}

/// Every run of one `iolab exec`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ExecResult {
    /// The command and its arguments.
    pub command: Vec<String>,
    /// Where it ran.
    pub cwd: PathBuf,
    /// Its environment variables, the values of those named like secrets
    /// (`*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*KEY*`...) replaced by
    /// `<redacted>`.
    pub env: BTreeMap<String, String>,
    /// The cache state asked before each run (`cold`, `warm`, `keep`).
    pub cache_policy: String,
    /// The files (and directories) named.
    pub files: Vec<PathBuf>,
    /// Runs asked for (`--repeat`).
    #[serde(default)]
    pub repeat: u32,
    /// The runs, in order.
    pub runs: Vec<ExecRun>,
    /// Stopped by a signal before its last run.
    pub interrupted: bool,
    /// Notes for the user (a file that stayed cached on `cold`).
    pub warnings: Vec<String>,
    /// The flamegraph written, if asked.
    pub flamegraph: Option<flame::Written>,
    /// Each successful run's profile (with `--flamegraph`; not stored).
    #[serde(skip)]
    pub profiles: Vec<flame::Profile>,
    /// The run id it is stored under (not stored itself).
    #[serde(skip)]
    pub run: Option<i64>,
}

impl ExecResult {
    /// The runs that ended with status 0 (the statistics are over these).
    pub fn ok_runs(&self) -> impl Iterator<Item = &ExecRun> {
        self.runs.iter().filter(|r| r.ok())
    }

    /// Set when the first successful run stands out from the others on
    /// wall time: further from their mean than their whole range, and by
    /// 5% or more.
    pub fn first_run(&self) -> Option<FirstRunEffect> {
        let walls: Vec<f64> = self.ok_runs().map(|r| r.wall_ns as f64).collect();
        FirstRunEffect::of("wall_ns", &walls)
            .filter(|f| (f.first - f.rest_mean).abs() >= 0.05 * f.rest_mean)
    }

    /// The runs that failed (non-zero status, killed), not interrupted.
    pub fn failed(&self) -> impl Iterator<Item = &ExecRun> {
        self.runs.iter().filter(|r| !r.ok() && !r.interrupted)
    }

    /// The runs that failed as an error (its exit status the first
    /// failed run's); `None` when none failed.
    pub fn failure(&self) -> Option<ExecError> {
        let failed: Vec<&ExecRun> = self.failed().collect();
        let first = failed.first()?;
        Some(ExecError::RunsFailed {
            command: self.command_line(),
            failed: failed.len(),
            runs: self.runs.len(),
            statuses: failed.iter().map(|r| r.exit_status.to_string()).collect(),
            first_status: first.exit_status,
        })
    }

    /// What its environment and devices are read for: the named files, or
    /// the directory it ran in when none are named.
    pub fn watched(&self) -> Vec<PathBuf> {
        match self.files.is_empty() {
            true => vec![self.cwd.clone()],
            false => self.files.clone(),
        }
    }

    /// The command as one line (arguments with spaces quoted).
    pub fn command_line(&self) -> String {
        command_line(&self.command)
    }
}

/// `argv` as one shell line: an argument with anything but letters,
/// digits and `_@%+=:,./-` in single quotes (pasted into a shell, it runs
/// the same command).
pub fn command_line(argv: &[String]) -> String {
    (argv.iter())
        .map(|a| crate::metrics::format::shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The environment as kept: values of variables whose names suggest a
/// secret replaced by `<redacted>` (the database is shared and exported).
pub fn kept_env() -> BTreeMap<String, String> {
    std::env::vars()
        .map(|(k, v)| match secret_name(&k) {
            true => (k, "<redacted>".to_string()),
            false => (k, redact_url_password(&v)),
        })
        .collect()
}

/// `v` with the password of every URL in it replaced by `<redacted>`:
/// `postgres://app:s3cret@db/x` becomes `postgres://app:<redacted>@db/x`
/// (a `DATABASE_URL` carries its credentials whatever its name).
pub fn redact_url_password(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?' or '#' (or whitespace).
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(amp) => {
                let userinfo = &authority[..amp];
                match userinfo.split_once(':') {
                    Some((user, _)) => {
                        out.push_str(user);
                        out.push_str(":<redacted>");
                    }
                    None => out.push_str(userinfo),
                }
                out.push_str(&authority[amp..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// True for a variable name that suggests a secret: `*TOKEN*`,
/// `*SECRET*`, `*PASS*` (PGPASS, SSHPASS, PASSWORD), `*KEY*`,
/// `*CREDENTIAL*`, `*AUTH*`, `*COOKIE*`, `*SESSION*`, `*_PWD`
/// (MYSQL_PWD; not the working directory's `PWD`), `*_PAT` (GITHUB_PAT).
pub fn secret_name(name: &str) -> bool {
    const PARTS: [&str; 8] = [
        "TOKEN",
        "SECRET",
        "PASS",
        "KEY",
        "CREDENTIAL",
        "AUTH",
        "COOKIE",
        "SESSION",
    ];
    let up = name.to_ascii_uppercase();
    PARTS.iter().any(|p| up.contains(p)) || up.ends_with("_PWD") || up.ends_with("_PAT")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_told_from_plain_ones() {
        for n in [
            "GITHUB_TOKEN",
            "PGPASS",
            "SSHPASS",
            "MYSQL_PWD",
            "GITHUB_PAT",
            "AWS_SECRET_ACCESS_KEY",
            "api_key",
        ] {
            assert!(secret_name(n), "{n}");
        }
        for n in ["PWD", "OLDPWD", "PATH", "HOME", "LANG", "PATTERN"] {
            assert!(!secret_name(n), "{n}");
        }
    }

    #[test]
    fn passwords_in_urls_are_redacted() {
        assert_eq!(
            redact_url_password("postgres://app:s3cret@db:5432/x?ssl=1"),
            "postgres://app:<redacted>@db:5432/x?ssl=1"
        );
        assert_eq!(
            redact_url_password("a http://u:p@h/ b mysql://root:pw@x"),
            "a http://u:<redacted>@h/ b mysql://root:<redacted>@x"
        );
        for plain in [
            "https://example.com/a@b",
            "http://user@host/",
            "no url",
            "p:q@r",
        ] {
            assert_eq!(redact_url_password(plain), plain);
        }
    }

    #[test]
    fn a_command_line_pastes_back_into_a_shell() {
        let argv: Vec<String> = ["true", "a|b", "a;b", ">x", "a*", "it's", "plain-1.txt"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            command_line(&argv),
            "true 'a|b' 'a;b' '>x' 'a*' 'it'\\''s' plain-1.txt"
        );
        // A control character stays on the line, as bash's $'...' reads it.
        let argv = vec!["ls".to_string(), "a\nb's".to_string()];
        assert_eq!(command_line(&argv), "ls $'a\\nb\\'s'");
    }
}
