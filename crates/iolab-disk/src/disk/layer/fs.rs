//! The file layer (`--layer fs --backing DIR2`): DIR2 served at DIR by a
//! FUSE pass-through ([`Passthrough`]) whose every operation passes the
//! gate, with path globs matched against paths relative to DIR2. For
//! metadata experiments: open, stat, mkdir, unlink, rename, ... can each be
//! delayed or failed. Nothing is cached in the daemon, so there is nothing
//! to lose in a crash: `disk crash` is the block layer's.

use super::injector::{Injector, Mounted, need_device};
use super::spec::Spec;
use crate::disk::error::DiskError;
use crate::disk::gate::Gate;
use crate::disk::passthrough::Passthrough;
use crate::sys::mount::{self, Unmounted};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The file-layer injector.
pub struct Fs;

/// How long an unmount waits for a busy DIR before detaching it.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// The backing directory of `spec`, resolved, or why it cannot serve.
fn backing_of(spec: &Spec) -> Result<PathBuf, DiskError> {
    let given = spec.backing.as_ref().ok_or_else(|| DiskError::Usage {
        what: "--layer fs".into(),
        expected: "--backing DIR2: the existing directory to serve at DIR".into(),
    })?;
    let usage = |expected: &str| DiskError::Usage {
        what: format!("--backing {}", given.display()),
        expected: expected.into(),
    };
    let backing = given
        .canonicalize()
        .map_err(|e| usage(&format!("an existing directory to serve at DIR ({e})")))?;
    if !backing.is_dir() {
        return Err(usage("a directory to serve at DIR"));
    }
    // DIR may not exist yet (up makes it): resolve what exists of it.
    let dir = spec.dir.canonicalize().unwrap_or_else(|_| spec.dir.clone());
    if dir.starts_with(&backing) || backing.starts_with(&dir) {
        return Err(usage(&format!(
            "a directory neither inside DIR ({}) nor holding it (the mount would serve itself)",
            dir.display()
        )));
    }
    Ok(backing)
}

impl Injector for Fs {
    fn check(&self, spec: &Spec) -> Result<(), DiskError> {
        need_device("/dev/fuse", "FUSE serves the backing directory at DIR")?;
        if let Some(kb) = spec.read_ahead_kb {
            return Err(DiskError::Usage {
                what: format!("--read-ahead {kb}"),
                expected:
                    "the block layer's (the readahead of its loop device): drop it or --layer fs"
                        .into(),
            });
        }
        backing_of(spec).map(drop)
    }

    fn mount(
        &self,
        spec: &Spec,
        gate: Arc<Gate>,
        _run: &Path,
    ) -> Result<Box<dyn Mounted>, DiskError> {
        let backing = backing_of(spec)?;
        let fs = Passthrough::new(backing.clone(), gate.clone())
            .map_err(|e| DiskError::io(format!("cannot read {}", backing.display()), e))?;
        let mut cfg = fuser::Config::default();
        cfg.mount_options.extend([
            // Not the backing path: a comma in it would split the options.
            fuser::MountOption::FSName("iolab-disk".into()),
            // The daemon is root: the kernel checks permissions, as the
            // backing file system would, and other users may enter.
            fuser::MountOption::DefaultPermissions,
        ]);
        cfg.acl = fuser::SessionACL::All;
        cfg.n_threads = Some(4);
        let session = fuser::spawn_mount2(fs, &spec.dir, &cfg).map_err(|e| {
            DiskError::io(format!("cannot mount FUSE at {}", spec.dir.display()), e)
        })?;
        Ok(Box::new(FsMount {
            dir: spec.dir.clone(),
            backing,
            gate,
            session: Some(session),
        }))
    }
}

/// A mounted file layer.
struct FsMount {
    dir: PathBuf,
    backing: PathBuf,
    gate: Arc<Gate>,
    session: Option<fuser::BackgroundSession>,
}

impl Mounted for FsMount {
    fn parts(&self) -> Vec<(String, String)> {
        vec![("backing".into(), self.backing.display().to_string())]
    }

    fn unflushed(&self) -> Option<u64> {
        None
    }

    fn crash(&mut self) -> Result<u64, DiskError> {
        Err(DiskError::Unsupported {
            layer: "fs".into(),
            what: "crash (power loss is the block layer's: drop --layer fs)",
        })
    }

    fn unmount(mut self: Box<Self>) -> Result<bool, DiskError> {
        // What is still queued is answered now, the rest at full speed:
        // a long delay does not hold the unmount up.
        self.gate.arm(false);
        self.gate.close();
        let r = mount::unmount(&self.dir, BUSY_WAIT)
            .map_err(|e| DiskError::io(format!("cannot unmount {}", self.dir.display()), e));
        if let Some(s) = self.session.take() {
            match &r {
                // Unmounted: the session ends (its device reads ENODEV).
                Ok(Unmounted::Clean | Unmounted::NotMounted) => {
                    let _ = s.join();
                }
                // Detached while files are open: the session would wait
                // for them; it ends with this process instead.
                _ => std::mem::forget(s),
            }
        }
        r.map(|how| how == Unmounted::Lazy)
    }
}
