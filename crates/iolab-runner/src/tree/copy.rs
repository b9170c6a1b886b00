//! `tree copy SRC DST`: what `rsync -a SRC/ DST` does for a fresh DST:
//! directories, regular files (data), symlinks; modes, access and
//! modification times, and owner and group when run as root. One timed
//! phase; directory modes and times are set last, deepest first, so
//! copying into them does not disturb them.

use super::create::prepare_top;
use super::ops::{Limits, Op, Timer, is_full, measured};
use super::walk::list;
use super::{Phase, Stopped, TreeResult};
use crate::counters::disks_of;
use crate::error::{Error, Result};
use crate::metrics::clock::now_ns;
use crate::sys::stop::StopFlag;
use std::ffi::CString;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

fn ctx(what: &str, p: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let m = format!("{what} {}", p.display());
    move |e| Error::io(m, e)
}

/// Sets atime and mtime of `p` (not following a symlink) from `md`.
fn set_times(p: &Path, md: &Metadata) -> std::io::Result<()> {
    let c = CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let ts = [
        libc::timespec {
            tv_sec: md.atime(),
            tv_nsec: md.atime_nsec(),
        },
        libc::timespec {
            tv_sec: md.mtime(),
            tv_nsec: md.mtime_nsec(),
        },
    ];
    // SAFETY: valid NUL-terminated path and an array of two timespecs.
    let rc = unsafe {
        libc::utimensat(
            libc::AT_FDCWD,
            c.as_ptr(),
            ts.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Copies the contents of `src` into `dst` (new or empty; marked as iolab's).
pub fn copy(
    src: &Path,
    dst: &Path,
    bs: usize,
    time_limit_ns: Option<u64>,
    stop: &StopFlag,
) -> Result<TreeResult> {
    if !src.is_dir() {
        return Err(Error::usage(src.display().to_string(), "not a directory"));
    }
    let (sc, dc) = (
        src.canonicalize().map_err(ctx("cannot resolve", src))?,
        dst.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .canonicalize()
            .map_err(ctx("cannot resolve the parent of", dst))?,
    );
    if dc.starts_with(&sc) {
        return Err(Error::usage(
            dst.display().to_string(),
            format!("inside {}: a copy into itself never ends", src.display()),
        ));
    }
    prepare_top(dst)?;
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let disks = disks_of(&[sc.clone(), dc]);
    let limits = Limits {
        deadline_ns: time_limit_ns.map(|t| now_ns() + t),
        stop,
    };
    let root = crate::sys::machine::is_root();
    let phase = measured("copy", &disks, |p: &mut Phase| {
        let mut t = Timer::default();
        let mut buf = vec![0u8; bs.max(1)];
        let mut stack = vec![PathBuf::new()];
        let mut fixups: Vec<(PathBuf, Metadata)> = Vec::new();
        p.dirs = 1;
        'outer: while let Some(rel) = stack.pop() {
            for (name, _) in list(&src.join(&rel), &mut t)? {
                if let Some(s) = limits.check() {
                    p.stopped = Some(s);
                    break 'outer;
                }
                let rel = rel.join(&name);
                let (from, to) = (src.join(&rel), dst.join(&rel));
                let md = t
                    .time(Op::Stat, || std::fs::symlink_metadata(&from))
                    .map_err(ctx("lstat", &from))?;
                let made = if md.is_dir() {
                    let r = t.time(Op::Mkdir, || std::fs::create_dir(&to));
                    if r.is_ok() {
                        p.dirs += 1;
                        stack.push(rel.clone());
                        fixups.push((to.clone(), md.clone()));
                    }
                    r
                } else if md.file_type().is_symlink() {
                    let target = t
                        .time(Op::Readlink, || std::fs::read_link(&from))
                        .map_err(ctx("readlink", &from))?;
                    let r = t.time(Op::Symlink, || std::os::unix::fs::symlink(&target, &to));
                    if r.is_ok() {
                        p.files += 1;
                        if root {
                            t.time(Op::Chown, || {
                                std::os::unix::fs::lchown(&to, Some(md.uid()), Some(md.gid()))
                            })
                            .map_err(ctx("lchown", &to))?;
                        }
                        t.time(Op::Utime, || set_times(&to, &md))
                            .map_err(ctx("utimensat", &to))?;
                    }
                    r
                } else if md.is_file() {
                    match copy_file(&from, &to, &md, root, &mut buf, &mut t) {
                        Ok(n) => {
                            p.files += 1;
                            p.bytes += n;
                            Ok(())
                        }
                        Err(e) => Err(e),
                    }
                } else {
                    continue; // devices, fifos, sockets: not copied
                };
                match made {
                    Ok(()) => p.inodes_created += 1,
                    Err(e) if is_full(&e) => {
                        p.stopped = Some(Stopped::NoSpace(to.display().to_string()));
                        break 'outer;
                    }
                    Err(e) => {
                        return Err(Error::io(
                            format!("copy {} to {}", from.display(), to.display()),
                            e,
                        ));
                    }
                }
            }
        }
        // Directory modes and times last, deepest first.
        fixups.sort_by_key(|(d, _)| std::cmp::Reverse(d.components().count()));
        if let Ok(top_md) = std::fs::metadata(src) {
            fixups.push((dst.to_path_buf(), top_md));
        }
        for (d, md) in &fixups {
            t.time(Op::Chmod, || {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(md.mode() & 0o7777))
            })
            .map_err(ctx("chmod", d))?;
            if root {
                t.time(Op::Chown, || {
                    std::os::unix::fs::lchown(d, Some(md.uid()), Some(md.gid()))
                })
                .map_err(ctx("lchown", d))?;
            }
            t.time(Op::Utime, || set_times(d, md))
                .map_err(ctx("utimensat", d))?;
        }
        t.merge_into(&mut p.ops);
        Ok::<_, Error>(())
    })?;
    Ok(TreeResult {
        command: "copy".into(),
        dir: src.to_path_buf(),
        dest: Some(dst.to_path_buf()),
        shape: None,
        threads: 1,
        phases: vec![phase],
        started_unix,
    })
}

/// One regular file: data, mode, owner (root), times. Returns its bytes.
fn copy_file(
    from: &Path,
    to: &Path,
    md: &Metadata,
    root: bool,
    buf: &mut [u8],
    t: &mut Timer,
) -> std::io::Result<u64> {
    let mut r = t.time(Op::Open, || File::open(from))?;
    let mut w = t.time(Op::Create, || {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(to)
    })?;
    let mut total = 0;
    loop {
        let n = t.time(Op::Read, || r.read(buf))?;
        if n == 0 {
            break;
        }
        t.time(Op::Write, || w.write_all(&buf[..n]))?;
        total += n as u64;
    }
    t.time(Op::Chmod, || {
        w.set_permissions(std::fs::Permissions::from_mode(md.mode() & 0o7777))
    })?;
    if root {
        t.time(Op::Chown, || {
            std::os::unix::fs::fchown(&w, Some(md.uid()), Some(md.gid()))
        })?;
    }
    t.time(Op::Utime, || set_times(to, md))?;
    t.time(Op::Close, || {
        drop(r);
        drop(w)
    });
    Ok(total)
}
