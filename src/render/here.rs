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
pub(crate) mod tests {
    use super::*;

    /// Here with host `h1`, at 90 s past the epoch, times as `t=SECONDS`.
    pub(crate) fn here() -> Here {
        Here {
            env: Environment {
                hostname: "h1".into(),
                ..Environment::default()
            },
            now_unix: 90,
            when: |t| format!("t={t}"),
        }
    }

    /// Now in whole seconds; a moment before the epoch counts as it.
    #[test]
    fn now_in_seconds() {
        let env = Environment::default();
        let at = UNIX_EPOCH + std::time::Duration::from_millis(90_900);
        assert_eq!(Here::new(env.clone(), at, |t| t.to_string()).now_unix, 90);
        let before = UNIX_EPOCH - std::time::Duration::from_secs(5);
        assert_eq!(Here::new(env, before, |t| t.to_string()).now_unix, 0);
    }

    #[test]
    fn footnote_names_the_host_and_now_in_the_readers_time() {
        let note = here().footnote();
        assert_eq!((note.host.as_str(), note.date.as_str()), ("h1", "t=90"));
        assert_eq!(note.version, env!("CARGO_PKG_VERSION"));
    }

    /// Only the html format shows where the run's files are.
    #[test]
    fn only_html_shows_files() {
        for f in crate::render::FORMATS {
            assert_eq!(
                crate::render::shows_files(f.name).unwrap(),
                f.name == "html"
            );
        }
    }

    /// The html and svg formats say where and when from `here`: its
    /// host, its environment, its clock.
    #[test]
    fn formats_show_here() {
        let page = crate::render::run(&run(), "html", &here()).unwrap();
        assert!(page.contains("run started t=0 on host h1, made by iolab"));
        assert!(page.contains("<td>host</td><td>h1</td>"));
        let svg = crate::render::run(&run(), "svg", &here()).unwrap();
        assert!(svg.contains("host h1 · t=90 · iolab"), "{svg}");
    }

    /// A stored run of `kind` holding `r`.
    pub(crate) fn stored(kind: &str, r: &RunResult) -> StoredRun {
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

    /// A run with no jobs and the files `a b` (clone 0), `c` (clone 1) of
    /// one job and `d` of another.
    pub(crate) fn run() -> RunResult {
        RunResult {
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
        }
    }

    /// Every clone's files, in order; a stored I/O run's from its result,
    /// none of a tree's.
    #[test]
    fn a_runs_files_are_every_clones() {
        let r = run();
        let want: Vec<PathBuf> = ["a", "b", "c", "d"].map(PathBuf::from).into();
        assert_eq!(run_files(&r), want);
        assert_eq!(stored_files(&stored(kind::RUN, &r)).unwrap(), want);
        assert!(stored_files(&stored(kind::TREE, &r)).unwrap().is_empty());
    }
}
