//! `tree remove`: file remove, then directory remove (deepest first, the
//! top last), each timed. Only trees iolab made, unless told otherwise.

use super::ops::{Limits, Op, Timer, measured};
use super::walk::collect;
use super::{Phase, TreeResult, mark};
use crate::counters::disks_of;
use crate::error::{Error, Result};
use crate::metrics::clock::now_ns;
use crate::sys::stop::StopFlag;
use std::path::Path;

/// Removes the tree at `top`. `foreign`: the user said it may remove a
/// directory iolab did not make.
pub fn remove(
    top: &Path,
    foreign: bool,
    time_limit_ns: Option<u64>,
    stop: &StopFlag,
) -> Result<TreeResult> {
    let md = std::fs::symlink_metadata(top).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            // A path the user named that is not there: bad usage, as for walk.
            Error::usage(top.display().to_string(), "no such directory")
        } else {
            Error::io(format!("cannot remove {}", top.display()), e)
        }
    })?;
    if !md.is_dir() {
        return Err(Error::usage(top.display().to_string(), "not a directory"));
    }
    let canon = top.canonicalize().unwrap_or_else(|_| top.to_path_buf());
    if canon.parent().is_none() {
        return Err(Error::refused("/", "refusing to remove /"));
    }
    if !foreign && !mark::is_ours(top) {
        return Err(Error::refused(
            top,
            format!(
                "{} was not made by `iolab tree create` or `tree copy` (no {} mark); \
                 add --not-mine to remove it anyway",
                top.display(),
                mark::TREE_XATTR
            ),
        ));
    }
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let disks = disks_of(std::slice::from_ref(&canon));
    let limits = Limits {
        deadline_ns: time_limit_ns.map(|t| now_ns() + t),
        stop,
    };
    let (mut dirs, others) = collect(top)?;
    let mut phases = Vec::new();
    let files = measured("file remove", &disks, |p: &mut Phase| {
        let mut t = Timer::default();
        for f in &others {
            if let Some(s) = limits.check() {
                p.stopped = Some(s);
                break;
            }
            t.time(Op::Unlink, || std::fs::remove_file(f))
                .map_err(|e| Error::io(format!("unlink {}", f.display()), e))?;
            p.files += 1;
            p.inodes_removed += 1;
        }
        t.merge_into(&mut p.ops);
        Ok::<_, Error>(())
    })?;
    let stopped = files.stopped.is_some();
    phases.push(files);
    if !stopped {
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        dirs.push(top.to_path_buf());
        let rmdirs = measured("dir remove", &disks, |p: &mut Phase| {
            let mut t = Timer::default();
            for d in &dirs {
                if let Some(s) = limits.check() {
                    p.stopped = Some(s);
                    break;
                }
                t.time(Op::Rmdir, || std::fs::remove_dir(d))
                    .map_err(|e| Error::io(format!("rmdir {}", d.display()), e))?;
                p.dirs += 1;
                p.inodes_removed += 1;
            }
            t.merge_into(&mut p.ops);
            Ok::<_, Error>(())
        })?;
        phases.push(rmdirs);
    }
    Ok(TreeResult {
        command: "remove".into(),
        dir: top.to_path_buf(),
        dest: None,
        shape: None,
        threads: 1,
        phases,
        started_unix,
    })
}
