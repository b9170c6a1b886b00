//! Where iolab keeps each disk it made: a private directory per disk under
//! `/run/iolab/disks` (`$IOLAB_RUN_DIR` elsewhere) holding `state.json`
//! (what was asked, the daemon's pid, what was made), the control socket,
//! the daemon's log and, for the block layer, the FUSE mount point. `down`
//! finds everything to remove here, even after the daemon was killed.

use super::error::DiskError;
use super::layer::spec::Spec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The state file of one disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct State {
    /// What was asked (rules as changed by `set`).
    pub spec: Spec,
    /// The serving daemon.
    pub pid: u32,
    /// When the daemon started (clock ticks after boot, from
    /// `/proc/PID/stat`): with `pid` it names the daemon for sure; 0 in a
    /// state file from before it was recorded (then no signal is sent).
    #[serde(default)]
    pub start: u64,
    /// When it came up (RFC 3339).
    pub started: String,
    /// What the layer made: (`loop`, `/dev/loop3 (direct I/O)`), ...
    pub parts: Vec<(String, String)>,
}

/// The directory all disks' private directories are in.
pub fn root() -> PathBuf {
    std::env::var_os("IOLAB_RUN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/iolab/disks"))
}

/// The private directory of the disk at `dir` (absolute): its path with
/// `/` as `-`, and a hash so that `/a-b` and `/a/b` differ.
pub fn run_dir(dir: &Path) -> PathBuf {
    let text = dir.to_string_lossy();
    let name: String = text
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    let hash = xxhash_rust::xxh32::xxh32(text.as_bytes(), 0);
    root().join(format!("{name}.{hash:08x}"))
}

/// The state file in a private directory.
pub fn file(run: &Path) -> PathBuf {
    run.join("state.json")
}

/// The control socket in a private directory.
pub fn socket(run: &Path) -> PathBuf {
    run.join("ctl.sock")
}

/// The daemon's log in a private directory.
pub fn log(run: &Path) -> PathBuf {
    run.join("daemon.log")
}

/// Writes the state file (whole, through a rename).
pub fn save(run: &Path, state: &State) -> Result<(), DiskError> {
    let tmp = run.join("state.json.tmp");
    let text = serde_json::to_string_pretty(state).expect("state serializes");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, file(run)))
        .map_err(|e| DiskError::io(format!("cannot write {}", file(run).display()), e))
}

/// Reads a state file.
pub fn load(run: &Path) -> Option<State> {
    serde_json::from_str(&std::fs::read_to_string(file(run)).ok()?).ok()
}

/// Every disk iolab knows of: (private directory, state).
pub fn all() -> Vec<(PathBuf, State)> {
    let Ok(entries) = std::fs::read_dir(root()) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, State)> = entries
        .flatten()
        .filter_map(|e| Some((e.path(), load(&e.path())?)))
        .collect();
    found.sort_by(|a, b| a.1.spec.dir.cmp(&b.1.spec.dir));
    found
}

impl State {
    /// A pidfd of the daemon while it runs: the process with its PID and
    /// its start time, never another that took the PID after it died.
    /// A state file from before start times were kept names its daemon by
    /// its command line instead (`iolab disk serve RUN`).
    pub fn daemon(&self) -> Option<std::os::fd::OwnedFd> {
        if self.start != 0 {
            return crate::sys::pidfd::open_started(self.pid, self.start);
        }
        let run = run_dir(&self.spec.dir);
        crate::sys::pidfd::open_if(self.pid, |_| serves(self.pid, &run))
    }

    /// True while the daemon runs (see [`State::daemon`]).
    pub fn daemon_alive(&self) -> bool {
        self.daemon().is_some()
    }
}

/// True when process `pid` runs `iolab disk serve RUN` for this `run`.
fn serves(pid: u32, run: &Path) -> bool {
    let Ok(cmd) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let args: Vec<&[u8]> = cmd.split(|&b| b == 0).filter(|a| !a.is_empty()).collect();
    use std::os::unix::ffi::OsStrExt;
    args.len() == 4
        && args[1..3] == [b"disk".as_slice(), b"serve"]
        && args[3] == run.as_os_str().as_bytes()
}

/// The injected disk mounted at `mount_point`, described with its rules
/// now (`block layer, ext4: --delay 1ms`); empty when there is none.
pub fn injected_at(mount_point: &Path) -> String {
    all()
        .into_iter()
        .find(|(_, st)| st.spec.dir == mount_point && st.daemon_alive())
        .map(|(_, st)| {
            let rules = super::rules::rules_line(&st.spec.rules);
            let fs = match st.spec.layer.as_str() {
                "block" => format!(", {}", st.spec.fs),
                _ => String::new(),
            };
            format!("iolab disk, {} layer{fs}: {rules}", st.spec.layer)
        })
        .unwrap_or_default()
}
