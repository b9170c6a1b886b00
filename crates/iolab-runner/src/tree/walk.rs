//! `tree walk` (readdir every directory, lstat every entry) and `tree read`
//! (the same, and read every regular file through).

use super::ops::{Limits, Op, Timer, measured};
use super::{Phase, TreeResult};
use crate::counters::disks_of;
use crate::error::{Error, Result};
use crate::metrics::clock::now_ns;
use crate::sys::stop::StopFlag;
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One directory's entries: name and whether it is a directory.
pub type Listing = Vec<(OsString, bool)>;

/// Reads a whole directory as one timed `readdir`.
pub fn list(dir: &Path, timer: &mut Timer) -> Result<Listing> {
    timer
        .time(Op::Readdir, || {
            std::fs::read_dir(dir)?
                .map(|e| {
                    let e = e?;
                    Ok((e.file_name(), e.file_type()?.is_dir()))
                })
                .collect::<std::io::Result<Listing>>()
        })
        .map_err(|e| Error::io(format!("readdir {}", dir.display()), e))
}

/// Every path under `top` (not `top` itself), parents before children,
/// without timing: the plan of `remove` and `copy`.
pub fn collect(top: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut dirs = Vec::new();
    let mut others = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    let mut t = Timer::default();
    while let Some(d) = stack.pop() {
        for (name, is_dir) in list(&d, &mut t)? {
            let p = d.join(name);
            if is_dir {
                dirs.push(p.clone());
                stack.push(p);
            } else {
                others.push(p);
            }
        }
    }
    Ok((dirs, others))
}

/// Walks `top`; with `read`, reads every regular file in `bs` pieces.
pub fn walk(
    top: &Path,
    read: bool,
    bs: usize,
    time_limit_ns: Option<u64>,
    stop: &StopFlag,
) -> Result<TreeResult> {
    if !top.is_dir() {
        return Err(Error::usage(top.display().to_string(), "not a directory"));
    }
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let disks = disks_of(&[top.to_path_buf()]);
    let limits = Limits {
        deadline_ns: time_limit_ns.map(|t| now_ns() + t),
        stop,
    };
    let name = if read { "read" } else { "walk" };
    let phase = measured(name, &disks, |p: &mut Phase| {
        let mut t = Timer::default();
        let mut buf = vec![0u8; bs.max(1)];
        let mut stack = vec![top.to_path_buf()];
        p.dirs = 1;
        'outer: while let Some(d) = stack.pop() {
            for (name, _) in list(&d, &mut t)? {
                if let Some(s) = limits.check() {
                    p.stopped = Some(s);
                    break 'outer;
                }
                let path = d.join(&name);
                let md = t
                    .time(Op::Stat, || std::fs::symlink_metadata(&path))
                    .map_err(|e| Error::io(format!("lstat {}", path.display()), e))?;
                if md.is_dir() {
                    p.dirs += 1;
                    stack.push(path);
                    continue;
                }
                p.files += 1;
                if read && md.is_file() {
                    p.bytes += read_file(&path, &mut buf, &mut t)?;
                }
            }
        }
        t.merge_into(&mut p.ops);
        Ok::<_, Error>(())
    })?;
    Ok(TreeResult {
        command: name.into(),
        dir: top.to_path_buf(),
        dest: None,
        shape: None,
        threads: 1,
        phases: vec![phase],
        started_unix,
    })
}

/// Reads one file through; returns its bytes.
pub fn read_file(path: &Path, buf: &mut [u8], t: &mut Timer) -> Result<u64> {
    let ctx = |what: &str, e| Error::io(format!("{what} {}", path.display()), e);
    let mut f = t
        .time(Op::Open, || File::open(path))
        .map_err(|e| ctx("open", e))?;
    let mut total = 0;
    loop {
        let n = t
            .time(Op::Read, || f.read(buf))
            .map_err(|e| ctx("read", e))?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    t.time(Op::Close, || drop(f));
    Ok(total)
}
