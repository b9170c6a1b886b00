//! Where and when output is made, as render needs it: the machine, now,
//! and how the reader's clock writes a time. The caller (cli/, lab/)
//! captures them and hands them in; render reads no clock, host name,
//! time zone or file system itself.

use super::chart::Footnote;
use crate::error::Result;
use crate::runner::RunResult;
use crate::store::{StoredRun, kind};
use crate::sys::environment::Environment;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where and when output is made.
#[derive(Debug, Clone)]
pub struct Here {
    /// This machine: host name, kernel, CPU, memory; with the file
    /// systems and disks of the run's files when the format shows them
    /// ([`super::shows_files`]: see [`run_files`], [`stored_files`]).
    pub env: Environment,
    /// Now, seconds since the epoch.
    pub now_unix: i64,
    /// A time (seconds since the epoch) as the reader's clock shows it:
    /// `2026-11-24 17:05`.
    pub when: fn(i64) -> String,
}

impl Here {
    /// Here as the caller captured it: the machine `env`, the moment
    /// `now` (one before the epoch counts as the epoch), times written
    /// by `when`.
    pub fn new(env: Environment, now: SystemTime, when: fn(i64) -> String) -> Here {
        Here {
            env,
            now_unix: now
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
            when,
        }
    }

    /// The footnote of a picture made here, now, by this iolab.
    pub fn footnote(&self) -> Footnote {
        Footnote {
            host: self.env.hostname.clone(),
            date: (self.when)(self.now_unix),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// The files whose file systems a run's page shows: every clone's.
pub fn run_files(r: &RunResult) -> Vec<PathBuf> {
    r.files.iter().flatten().flatten().cloned().collect()
}

/// The files whose file systems a stored run's page shows: an I/O run's
/// (decoded from it); none for a tree, a trace or an exec, which have no
/// page form.
pub fn stored_files(r: &StoredRun) -> Result<Vec<PathBuf>> {
    if [kind::TREE, kind::TRACE, kind::EXEC].contains(&r.kind.as_str()) {
        return Ok(Vec::new());
    }
    Ok(run_files(&r.result()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footnote_names_the_host_and_now_in_the_readers_time() {
        let env = Environment {
            hostname: "h1".into(),
            ..Environment::default()
        };
        let at = |s| UNIX_EPOCH + std::time::Duration::from_millis(s);
        let here = Here::new(env.clone(), at(90_900), |t| format!("t={t}"));
        assert_eq!(here.now_unix, 90);
        let before = Here::new(env, UNIX_EPOCH - std::time::Duration::from_secs(5), |t| {
            t.to_string()
        });
        assert_eq!(before.now_unix, 0);
        let note = here.footnote();
        assert_eq!((note.host.as_str(), note.date.as_str()), ("h1", "t=90"));
        assert_eq!(note.version, env!("CARGO_PKG_VERSION"));
    }

    fn stored(kind: &str, r: &RunResult) -> StoredRun {
        StoredRun {
            id: 1,
            created_unix: 0,
            label: None,
            kind: kind.into(),
            name: "j".into(),
            command: String::new(),
            iolab_version: String::new(),
            env: Environment::default(),
            summary: Default::default(),
            sweep_id: None,
            point: None,
            result_json: serde_json::to_string(r).unwrap(),
            source_json: None,
            status: Default::default(),
        }
    }

    /// Every clone's files, in order; a stored I/O run's from its result,
    /// none of a tree's.
    #[test]
    fn a_runs_files_are_every_clones() {
        let r = RunResult {
            jobs: Vec::new(),
            files: vec![
                vec![vec!["a".into(), "b".into()], vec!["c".into()]],
                vec![vec!["d".into()]],
            ],
            repetitions: Vec::new(),
            interrupted: false,
            warnings: Vec::new(),
            started_unix: 0,
            pid: 0,
        };
        let want: Vec<PathBuf> = ["a", "b", "c", "d"].map(PathBuf::from).into();
        assert_eq!(run_files(&r), want);
        assert_eq!(stored_files(&stored(kind::RUN, &r)).unwrap(), want);
        assert!(stored_files(&stored(kind::TREE, &r)).unwrap().is_empty());
    }
}
