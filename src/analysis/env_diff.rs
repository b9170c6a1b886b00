//! Where the two sides of a comparison ran, told apart: host, kernel,
//! file system, mount options, device, I/O scheduler, injected disk
//! (`iolab disk` rules) and iolab version
//! of each run, and the fields whose values differ between A and B. A
//! difference there may explain the result as much as the workload does.

use crate::sys::environment::Environment;
use serde::Serialize;

/// The fields of an environment a comparison tells apart, in order.
pub const FIELDS: [&str; 8] = [
    "host",
    "kernel",
    "file system",
    "mount options",
    "device",
    "scheduler",
    "injected disk",
    "iolab version",
];

/// The environment of one run as the values of [`FIELDS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EnvFacts(pub Vec<String>);

impl EnvFacts {
    /// The facts of `env`, for a run made by iolab `version`. Several
    /// files or disks give `a; b` (each distinct value once).
    pub fn of(env: &Environment, version: &str) -> EnvFacts {
        let join = |vals: Vec<String>| {
            let mut seen: Vec<String> = Vec::new();
            for v in vals.into_iter().filter(|v| !v.is_empty()) {
                if !seen.contains(&v) {
                    seen.push(v);
                }
            }
            seen.join("; ")
        };
        let disks = || env.files.iter().flat_map(|f| &f.disks);
        EnvFacts(vec![
            env.hostname.clone(),
            env.kernel.clone(),
            join(
                env.files
                    .iter()
                    .map(|f| format!("{} {} on {}", f.fs_type, f.mount_source, f.mount_point))
                    .collect(),
            ),
            join(env.files.iter().map(|f| f.mount_options.clone()).collect()),
            join(
                disks()
                    .map(|d| format!("{} ({})", d.name, d.model))
                    .collect(),
            ),
            join(disks().map(|d| d.scheduler.clone()).collect()),
            join(env.files.iter().map(|f| f.injected.clone()).collect()),
            version.to_string(),
        ])
    }
}

/// A field whose values differ between the runs of A and those of B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDiff {
    /// One of [`FIELDS`].
    pub field: &'static str,
    /// The distinct values of A's runs.
    pub a: Vec<String>,
    /// The distinct values of B's runs.
    pub b: Vec<String>,
}

/// The fields of [`FIELDS`] whose values are not the same for A's runs
/// and B's (a field either side does not know, empty, is left out).
pub fn diff(a: &[EnvFacts], b: &[EnvFacts]) -> Vec<EnvDiff> {
    let values = |runs: &[EnvFacts], i: usize| {
        let mut v: Vec<String> = runs.iter().map(|f| f.0[i].clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    FIELDS
        .iter()
        .enumerate()
        .filter_map(|(i, field)| {
            let (va, vb) = (values(a, i), values(b, i));
            let unknown = |v: &[String]| v.iter().all(String::is_empty);
            (va != vb && !unknown(&va) && !unknown(&vb)).then_some(EnvDiff {
                field,
                a: va,
                b: vb,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_fields_that_differ() {
        let mut env = Environment {
            hostname: "h".into(),
            kernel: "Linux 6.1".into(),
            ..Environment::default()
        };
        let a = EnvFacts::of(&env, "0.1.0");
        env.kernel = "Linux 6.8".into();
        let b = EnvFacts::of(&env, "0.1.0");
        let one = std::slice::from_ref(&a);
        assert!(diff(one, one).is_empty());
        let d = diff(one, &[b]);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].field, "kernel");
        assert_eq!(
            (d[0].a.clone(), d[0].b.clone()),
            (vec!["Linux 6.1".to_string()], vec!["Linux 6.8".to_string()])
        );
        // Unknown on one side (no files): not a difference.
        assert!(diff(one, &[EnvFacts(vec![String::new(); 8])]).is_empty());
    }
}
