//! A disk served from a thread of this process, for the labs: up when
//! [`Serving::start`] returns, down (everything removed) when dropped,
//! also when the lab fails or is interrupted.

use super::client;
use super::daemon;
use super::error::DiskError;
use super::layer::Spec;
use crate::sys::stop::StopFlag;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

/// A disk served by a thread here.
pub struct Serving {
    dir: PathBuf,
    run: PathBuf,
    stop: StopFlag,
    thread: Option<JoinHandle<Result<(), DiskError>>>,
}

impl Serving {
    /// Makes the disk of `spec` (as `iolab disk up` does) and serves it.
    pub fn start(mut spec: Spec) -> Result<Serving, DiskError> {
        let run = client::prepare(&mut spec)?;
        let private = run.clone();
        let stop = StopFlag::new();
        let (tx, rx) = mpsc::channel();
        let thread = {
            let (stop, spec) = (stop.clone(), spec.clone());
            std::thread::Builder::new()
                .name("iolab-disk".into())
                .spawn(move || {
                    let mut ready = |r: Result<&_, &DiskError>| {
                        let _ = tx.send(r.is_ok());
                    };
                    daemon::serve(&spec, &run, &stop, &mut ready)
                })
                .map_err(|e| DiskError::io("cannot start the disk thread", e))?
        };
        match rx.recv() {
            Ok(true) => Ok(Serving {
                dir: spec.dir,
                run: private,
                stop,
                thread: Some(thread),
            }),
            _ => Err(thread
                .join()
                .unwrap_or(Err(DiskError::ThreadLost))
                .err()
                .unwrap_or(DiskError::ThreadLost)),
        }
    }

    /// Where its file system is mounted.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The readahead of its loop device in KiB (block layer).
    pub fn loop_read_ahead_kb(&self) -> Option<u32> {
        let n = *crate::sys::loopdev::attached_under(&self.run).first()?;
        crate::sys::loopdev::read_ahead_kb(n)
    }

    /// Replaces its rules, as (flag, value): `("delay", "1ms")`.
    pub fn set(&self, rules: Vec<(String, String)>) -> Result<(), DiskError> {
        let req = super::control::Request::Set { rules };
        match super::control::ask(&self.run, &req, std::time::Duration::from_secs(60))? {
            super::control::Answer::Status(_) => Ok(()),
            other => Err(DiskError::Daemon {
                message: format!("{other:?}"),
                log: super::state::log(&self.run),
            }),
        }
    }

    /// Unmounts and removes everything.
    pub fn stop(mut self) -> Result<(), DiskError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), DiskError> {
        self.stop.set();
        match self.thread.take() {
            Some(t) => t.join().unwrap_or(Err(DiskError::ThreadLost)),
            None => Ok(()),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}
