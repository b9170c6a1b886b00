//! This machine's ceilings (`iolab calibrate`): what its device and CPU can
//! do at best, measured once and stored with where they were measured.
//! A run is held against ceilings of the same host, kernel and CPU (and,
//! for the device ceilings, the same device); any other ceilings are never
//! used silently: the explanation says why they were left out.

use crate::store::{Filter, NewRun, Status, Store, StoreResult, StoredRun};
use crate::sys::environment::Environment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The label (and kind) calibrations are stored under.
pub const KIND: &str = crate::store::kind::CALIBRATION;

/// The ceilings measured on one machine for one directory's device.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Ceilings {
    /// The directory measured.
    pub dir: PathBuf,
    /// Random 4 KiB O_DIRECT reads at depth 1: mean latency, µs.
    pub rand_lat_d1_us: f64,
    /// ... and their IOPS.
    pub rand_iops_d1: f64,
    /// Random 4 KiB O_DIRECT reads at depth 32 (io_uring): IOPS.
    pub rand_iops_d32: f64,
    /// Sequential 1 MiB O_DIRECT reads at depth 8: bytes per second.
    pub seq_bw: f64,
    /// Cached 1 MiB reads: the page cache's copy bandwidth, bytes/s.
    pub copy_bw: f64,
    /// One cached 4 KiB read through each engine, µs (`psync`, `io_uring`...).
    pub cached_read_us: BTreeMap<String, f64>,
    /// One I/O through the null engine (iolab's own cost per I/O), µs.
    pub null_us: f64,
    /// CPUs.
    pub cpus: u32,
    /// How long the calibration took, s.
    pub took_s: f64,
}

impl Ceilings {
    /// The cost of one cached 4 KiB read through `engine` (psync's when
    /// that engine was not measured).
    pub fn per_call_us(&self, engine: &str) -> Option<f64> {
        (self.cached_read_us.get(engine))
            .or_else(|| self.cached_read_us.get("psync"))
            .copied()
    }
}

/// Ceilings found for a run, and what was left out and why.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Found {
    /// The calibration run they come from.
    pub run: Option<i64>,
    /// The ceilings (None: none usable).
    pub ceilings: Option<Ceilings>,
    /// Whether the device ceilings apply (the same device).
    pub device: bool,
    /// Why other calibrations were not used.
    pub notes: Vec<String>,
}

/// Stores `c` measured on `env`; returns the run id.
pub fn save(store: &mut Store, c: &Ceilings, env: &Environment, command: &str) -> StoreResult<i64> {
    store.insert(&NewRun {
        kind: KIND,
        label: Some(KIND),
        name: format!("calibrate {}", c.dir.display()),
        command: command.to_string(),
        env,
        result_json: crate::store::encode(c, "calibration")?,
        summary: &Default::default(),
        sweep: None,
        source_json: None,
        hosts: &[],
        status: Status::Complete,
    })
}

/// The ceilings of a stored calibration.
pub fn load(run: &StoredRun) -> StoreResult<Ceilings> {
    run.decode(KIND, "calibration")
}

/// The newest calibration that holds for a run on `env`: the same host,
/// kernel and CPU; its device ceilings only if it measured the device
/// the run's files are on.
pub fn find(store: &Store, env: &Environment) -> StoreResult<Found> {
    let runs = store.list(&Filter {
        label: Some(KIND.into()),
        ..Filter::default()
    })?;
    let mut found = Found::default();
    for r in runs.iter().filter(|r| r.kind == KIND) {
        let e = &r.env;
        let differs = [
            ("host", &e.hostname, &env.hostname),
            ("kernel", &e.kernel, &env.kernel),
            ("CPU", &e.cpu_model, &env.cpu_model),
        ]
        .into_iter()
        .find(|(_, a, b)| a != b);
        if let Some((what, a, b)) = differs {
            found.notes.push(format!(
                "calibration {} was measured on {what} {a}, this run on {b}: not used",
                r.id
            ));
            continue;
        }
        let Ok(c) = load(r) else { continue };
        found.device = same_device(e, env);
        if !found.device {
            found.notes.push(format!(
                "calibration {} measured {} on {}; this run's files are on {}: its device \
                 ceilings are not used (`iolab calibrate --dir DIR` on that device)",
                r.id,
                c.dir.display(),
                device_of(e),
                device_of(env)
            ));
        }
        found.run = Some(r.id);
        found.ceilings = Some(c);
        break;
    }
    if found.ceilings.is_none() && found.notes.is_empty() {
        found
            .notes
            .push("no calibration of this machine: `iolab calibrate` measures its ceilings".into());
    }
    Ok(found)
}

/// The device (mount source and disks) of an environment's first file.
fn device_of(env: &Environment) -> String {
    env.files.first().map_or_else(
        || "no file".into(),
        |f| {
            let disks: Vec<&str> = f.disks.iter().map(|d| d.name.as_str()).collect();
            match (f.injected.is_empty(), disks.is_empty()) {
                (false, _) => format!("an injected disk ({})", f.injected),
                (true, true) => format!("{} ({})", f.mount_source, f.fs_type),
                (true, false) => format!("{} ({})", f.mount_source, disks.join("+")),
            }
        },
    )
}

fn same_device(a: &Environment, b: &Environment) -> bool {
    match (a.files.first(), b.files.first()) {
        (Some(x), Some(y)) => {
            x.mount_source == y.mount_source && x.fs_type == y.fs_type && x.injected == y.injected
        }
        _ => false,
    }
}
