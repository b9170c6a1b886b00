//! What a run did, in the fields that make two runs the same workload
//! (rw, bs, engine, iodepth, numjobs, size, direct, cache state,
//! time_based; for a tree, its command and threads). The runs pooled as
//! one side of a comparison must share it: a label holding 4 KiB and
//! 64 KiB reads is two workloads, and their mean is neither. Two sides of
//! different workloads are fine: that is what a comparison is for.

use crate::job::JobSpec;
use crate::metrics::format::bytes_iec;
use crate::store::{StoreResult, StoredRun, kind};
use crate::tree::TreeResult;
use serde::Serialize;
use std::fmt;

/// The workload of one run: (field, value) in a fixed order (a JSON
/// object of the fields).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint(pub Vec<(&'static str, String)>);

impl Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Fingerprint {
    /// An I/O run's jobs; several jobs give each field as `a,b`.
    pub fn of_jobs(jobs: &[JobSpec]) -> Fingerprint {
        let each =
            |f: &dyn Fn(&JobSpec) -> String| jobs.iter().map(f).collect::<Vec<_>>().join(",");
        Fingerprint(vec![
            ("kind", "io".into()),
            ("rw", each(&|j| j.rw_name().to_string())),
            (
                "bs",
                each(&|j| {
                    if j.bs_min == j.bs_max {
                        bytes_iec(j.bs_min as f64)
                    } else {
                        format!(
                            "{}-{}",
                            bytes_iec(j.bs_min as f64),
                            bytes_iec(j.bs_max as f64)
                        )
                    }
                }),
            ),
            ("engine", each(&|j| j.engine.clone())),
            ("iodepth", each(&|j| j.iodepth.to_string())),
            ("numjobs", each(&|j| j.numjobs.to_string())),
            (
                "size",
                each(&|j| j.size.map_or("file".into(), |s| bytes_iec(s as f64))),
            ),
            ("direct", each(&|j| u8::from(j.direct).to_string())),
            ("cache", each(&|j| j.cache.name().to_string())),
            ("time_based", each(&|j| u8::from(j.time_based).to_string())),
        ])
    }

    /// A tree command's run.
    pub fn of_tree(t: &TreeResult) -> Fingerprint {
        Fingerprint(vec![
            ("kind", "tree".into()),
            ("command", t.command.clone()),
            ("threads", t.threads.to_string()),
        ])
    }

    /// An exec's workload: the command, where it ran, the cache state and
    /// the files (not how many runs, nor iolab's own flags). Arguments are
    /// shown quoted (`'a b'`), so `["a b"]` and `["a", "b"]` differ.
    pub fn of_exec(command: &[String], cwd: &str, cache: &str, files: &[String]) -> Fingerprint {
        let quote = |a: &String| match a.contains(char::is_whitespace) || a.is_empty() {
            true => format!("'{a}'"),
            false => a.clone(),
        };
        let join = |w: &[String]| w.iter().map(quote).collect::<Vec<_>>().join(" ");
        Fingerprint(vec![
            ("kind", "exec".into()),
            ("command", join(command)),
            ("cwd", cwd.to_string()),
            ("cache", cache.to_string()),
            ("files", join(files)),
        ])
    }

    /// A stored run, from its stored result.
    pub fn of_stored(r: &StoredRun) -> StoreResult<Fingerprint> {
        if r.kind == kind::TREE {
            Ok(Fingerprint::of_tree(&r.tree_result()?))
        } else if r.kind == kind::TRACE {
            // A trace's workload is the program it traced (its name).
            Ok(Fingerprint(vec![
                ("kind", "trace".into()),
                ("command", r.name.clone()),
            ]))
        } else if r.kind == kind::EXEC {
            // An exec's workload: the command, where it ran, the cache state
            // and files (not how many runs, nor iolab's own flags). Read from
            // the stored result as plain JSON (`exec` is a layer above).
            let v: serde_json::Value = serde_json::from_str(&r.result_json).unwrap_or_default();
            let words = |k: &str| -> Vec<String> {
                match &v[k] {
                    serde_json::Value::Array(a) => a
                        .iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect(),
                    serde_json::Value::String(s) => vec![s.clone()],
                    _ => Vec::new(),
                }
            };
            let one = |k: &str| words(k).concat();
            Ok(Fingerprint::of_exec(
                &words("command"),
                &one("cwd"),
                &one("cache_policy"),
                &words("files"),
            ))
        } else {
            Ok(Fingerprint::of_jobs(&r.result()?.jobs))
        }
    }

    /// The value of `field`, if the run has it.
    pub fn get(&self, field: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.as_str())
    }
}

/// One field whose value differs between the runs of a side: each value
/// with the runs that have it (`None` for a run made now and not stored).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// The field (`bs`, `rw`, ...).
    pub field: &'static str,
    /// Each value and the runs that have it, in order of first appearance.
    pub values: Vec<(String, Vec<Option<i64>>)>,
}

/// The fields that differ between `runs` (run id, its fingerprint); none
/// when they are all one workload.
pub fn differences(runs: &[(Option<i64>, &Fingerprint)]) -> Vec<FieldDiff> {
    let mut fields: Vec<&'static str> = Vec::new();
    for (_, f) in runs {
        for (k, _) in &f.0 {
            if !fields.contains(k) {
                fields.push(k);
            }
        }
    }
    fields
        .into_iter()
        .filter_map(|field| {
            let mut values: Vec<(String, Vec<Option<i64>>)> = Vec::new();
            for (id, f) in runs {
                let v = f.get(field).unwrap_or("-").to_string();
                match values.iter_mut().find(|(x, _)| *x == v) {
                    Some((_, ids)) => ids.push(*id),
                    None => values.push((v, vec![*id])),
                }
            }
            (values.len() > 1).then_some(FieldDiff { field, values })
        })
        .collect()
}

impl fmt::Display for FieldDiff {
    /// `bs 4.0KiB (runs 1,2) vs 64.0KiB (run 3)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(v, ids)| format!("{v} ({})", runs_text(ids)))
            .collect();
        write!(f, "{} {}", self.field, parts.join(" vs "))
    }
}

/// `run 3`, `runs 1,2`, `runs made now`.
pub fn runs_text(ids: &[Option<i64>]) -> String {
    let stored: Vec<String> = ids.iter().flatten().map(|i| i.to_string()).collect();
    match stored.len() {
        0 if ids.len() == 1 => "a run made now".into(),
        0 => format!("{} runs made now", ids.len()),
        1 => format!("run {}", stored[0]),
        _ => format!("runs {}", stored.join(",")),
    }
}

/// A side of a comparison whose runs are of different workloads (refused
/// unless `--force`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "side {side} ({name}) pools runs of different workloads: {}; compare one workload per side (a label per workload), or pass --force to pool them anyway",
    .fields.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")
)]
pub struct MixedWorkloads {
    /// `A` or `B`.
    pub side: &'static str,
    /// The side as the user named it (a label).
    pub name: String,
    /// The fields that differ, with their values.
    pub fields: Vec<FieldDiff>,
}

/// Two sides that cannot be compared figure by figure: a trace against a
/// run, or traces of different programs (refused unless `--force`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "A ({a}) and B ({b}) are not the same program's traces: {}; compare traces of one program (on two kernels, two versions of it), or pass --force to compare them anyway",
    .fields.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; ")
)]
pub struct UnlikeTraces {
    /// Side A as named.
    pub a: String,
    /// Side B as named.
    pub b: String,
    /// `kind` and/or `command` with the values each side has.
    pub fields: Vec<FieldDiff>,
}

/// When a trace is among `runs` (both sides together): how the sides
/// differ in what they are (`kind`) and what program they traced
/// (`command`); empty when they are one program's traces, or no trace.
pub fn unlike_traces(runs: &[(Option<i64>, &Fingerprint)]) -> Vec<FieldDiff> {
    if !runs.iter().any(|(_, f)| f.get("kind") == Some("trace")) {
        return Vec::new();
    }
    let mut unlike: Vec<FieldDiff> = differences(runs)
        .into_iter()
        .filter(|d| d.field == "kind" || d.field == "command")
        .collect();
    if let Some(kind) = unlike.iter_mut().find(|d| d.field == "kind") {
        for (v, _) in kind.values.iter_mut().filter(|(v, _)| v == "-") {
            *v = "run".into();
        }
        // A run has no command to differ in: the kinds say it all.
        unlike.retain(|d| d.field == "kind");
    }
    unlike
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(bs: &str, rw: &str) -> Fingerprint {
        Fingerprint(vec![("rw", rw.into()), ("bs", bs.into())])
    }

    #[test]
    fn traces_of_different_programs_or_against_a_run_are_unlike() {
        let tr = |cmd: &str| Fingerprint(vec![("kind", "trace".into()), ("command", cmd.into())]);
        let (cat, cat2, dd, run) = (tr("cat"), tr("cat"), tr("dd"), fp("4k", "read"));
        assert!(unlike_traces(&[(Some(1), &cat), (Some(2), &cat2)]).is_empty());
        assert!(unlike_traces(&[(Some(1), &run), (Some(2), &run)]).is_empty());
        let d = unlike_traces(&[(Some(1), &cat), (Some(2), &dd)]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "command cat (run 1) vs dd (run 2)");
        let d = unlike_traces(&[(Some(1), &cat), (Some(2), &run)]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "kind trace (run 1) vs run (run 2)");
    }

    #[test]
    fn names_the_fields_that_differ() {
        let (a, b, c) = (fp("4k", "read"), fp("4k", "read"), fp("64k", "read"));
        assert!(differences(&[(Some(1), &a), (Some(2), &b)]).is_empty());
        let d = differences(&[(Some(1), &a), (Some(2), &b), (Some(3), &c)]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "bs 4k (runs 1,2) vs 64k (run 3)");
        let e = MixedWorkloads {
            side: "A",
            name: "x".into(),
            fields: d,
        };
        assert!(e.to_string().contains("--force"), "{e}");
    }
}
