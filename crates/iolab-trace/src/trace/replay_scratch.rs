//! The scratch tree a replay works on, so the originals are never touched:
//! every file the trace used, copied (or, when the original is gone or
//! unreadable, made at the size the trace needs) under a temporary
//! directory or `--target DIR`, at its absolute path without the leading
//! `/`. Files the program created in the trace are left for the replay to
//! create. Copies start written back and out of the page cache. In a
//! target directory everything iolab makes carries the
//! attribute [`REPLAY_XATTR`]; a directory holding anything without it is
//! refused, and only marked entries are removed at the end.

use super::TraceResult as Result;
use super::calls::Class;
use super::model::{Event, Trace};
use super::replay_copy::{self, Plan, written};
use crate::runner::StopFlag;
use crate::sys::xattr;
use iolab_runner::Error;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};

/// Extended attribute on what a replay makes in a `--target` directory.
pub const REPLAY_XATTR: &str = "user.iolab.replay";

/// What a path of the trace is in the replay.
#[derive(Debug, Clone, PartialEq)]
pub enum Place {
    /// This path under the scratch tree.
    At(PathBuf),
    /// Not replayed, and why.
    Not(&'static str),
}

/// What the scratch tree was made of.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Made {
    /// Files copied from their originals.
    pub copied: u64,
    /// Bytes copied.
    pub copied_bytes: u64,
    /// Files made at the size the trace needs (original gone or unreadable).
    pub filled: u64,
    /// Directories made for directories the trace used.
    pub dirs: u64,
    /// Files the program created in the trace, left for the replay to create.
    pub created_by_replay: u64,
    /// Files only named (stat, unlink), made at their size without data.
    pub named_only: u64,
}

/// The scratch tree of one replay.
#[derive(Debug)]
pub struct Scratch {
    root: PathBuf,
    temp: Option<tempfile::TempDir>,
    /// `--target DIR` did not exist and was made.
    target_made: bool,
    places: Vec<Place>,
    /// What was made.
    pub made: Made,
}

/// How the trace used one path.
#[derive(Default)]
struct Use {
    /// The first call using it (not only naming it, as stat does), and
    /// its open flags.
    first: Option<(&'static str, u64)>,
    dir: bool,
    /// Bytes a copy must hold: the furthest end of a read that got data.
    need: u64,
    /// The furthest end of a read or write: the original's data is
    /// copied up to here.
    touch: u64,
}

impl Scratch {
    /// Makes the scratch tree for `t`: in a new temporary directory, or
    /// under `target` (made if missing; refused with [`Error::Refused`]
    /// when it holds anything iolab's replay did not make).
    pub fn prepare(t: &Trace, target: Option<&Path>, stop: &StopFlag) -> Result<Scratch> {
        let (root, temp, target_made) = match target {
            None => {
                let d = tempfile::Builder::new()
                    .prefix("iolab-replay-")
                    .tempdir()
                    .map_err(|e| Error::io("cannot make a scratch directory", e))?;
                (d.path().to_path_buf(), Some(d), false)
            }
            Some(dir) => {
                let made = claim(dir)?;
                (dir.to_path_buf(), None, made)
            }
        };
        let mut s = Scratch {
            root,
            temp,
            target_made,
            places: Vec::new(),
            made: Made::default(),
        };
        match s.make(t, stop) {
            Ok(()) => Ok(s),
            Err(e) => {
                let _ = s.finish(false);
                Err(e)
            }
        }
    }

    /// The directory the tree is in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where path number `i` of the trace is in the replay.
    pub fn place(&self, i: u32) -> &Place {
        self.places
            .get(i as usize)
            .unwrap_or(&Place::Not("path not in the trace"))
    }

    /// Marks `f`, which the replay just created, as iolab's (in a target
    /// directory, so that it may be removed and the directory reused).
    pub fn mark_new(&self, f: &File) {
        if self.temp.is_none() && !xattr::has_fd(f.as_fd(), REPLAY_XATTR) {
            let _ = xattr::set_fd(f.as_fd(), REPLAY_XATTR, b"1");
        }
    }

    /// Removes the tree unless `keep`; returns whether any of it is still
    /// there and a warning for anything in a target directory it kept
    /// because iolab did not make it (a target directory that existed
    /// before stays, emptied).
    pub fn finish(self, keep: bool) -> Result<(bool, Option<String>)> {
        if keep {
            if let Some(d) = self.temp {
                let _ = d.keep();
            }
            return Ok((true, None));
        }
        if let Some(d) = self.temp {
            let p = d.path().to_path_buf();
            d.close()
                .map_err(|e| Error::io(format!("cannot remove {}", p.display()), e))?;
            return Ok((false, None));
        }
        let kept = remove_marked(&self.root);
        if self.target_made && kept == 0 {
            let _ = std::fs::remove_dir(&self.root);
        }
        let warn = (kept > 0).then(|| {
            format!(
                "kept {kept} entries in {} that iolab did not make",
                self.root.display()
            )
        });
        Ok((kept > 0, warn))
    }

    fn make(&mut self, t: &Trace, stop: &StopFlag) -> Result<()> {
        let uses = uses(t);
        // What each path becomes, and the room it all takes, before any
        // write: a trace that needs more than is free is refused.
        let plans: Vec<std::result::Result<(PathBuf, Option<Plan>), &'static str>> =
            (t.paths.iter())
                .enumerate()
                .map(|(i, p)| {
                    let to = mapped(&self.root, p)?;
                    Ok((to, uses.get(&(i as u32)).map(|u| plan(Path::new(p), u))))
                })
                .collect();
        let copies: u64 = (plans.iter().flatten())
            .filter_map(|(_, p)| p.as_ref().map(Plan::bytes))
            .sum();
        replay_copy::check_space(&self.root, copies.saturating_add(written(t)))?;
        for (p, planned) in t.paths.iter().zip(plans) {
            if stop.is_set() {
                return Err(Error::interrupted(stop).into());
            }
            let place = match planned {
                Err(why) => Place::Not(why),
                Ok((to, Some(plan))) => self.make_one(Path::new(p), &to, plan, stop)?,
                Ok((to, None)) => Place::At(to),
            };
            self.places.push(place);
        }
        Ok(())
    }

    /// Makes the scratch form of the original `orig` at `to`, as planned.
    fn make_one(&mut self, orig: &Path, to: &Path, plan: Plan, stop: &StopFlag) -> Result<Place> {
        if let Some(parent) = to.parent() {
            self.dirs(parent)?;
        }
        let (out, copied, need) = match plan {
            Plan::Made => {
                self.made.created_by_replay += 1;
                return Ok(Place::At(to.to_path_buf()));
            }
            Plan::Dir => {
                self.dirs(to)?;
                return Ok(Place::At(to.to_path_buf()));
            }
            Plan::Not(why) => return Ok(Place::Not(why)),
            Plan::Absent => return Ok(Place::At(to.to_path_buf())),
            Plan::Sized(len) => {
                let out = self.create(to)?;
                out.set_len(len)
                    .map_err(|e| Error::io(format!("cannot size {}", to.display()), e))?;
                self.made.named_only += 1;
                return Ok(Place::At(to.to_path_buf()));
            }
            Plan::Copy { len, ranges, need } => {
                let out = self.create(to)?;
                let n = match File::open(orig) {
                    Ok(src) => replay_copy::copy_ranges(&src, &out, &ranges, to, stop)?,
                    Err(_) => 0,
                };
                // Holes and what the trace did not read stay holes.
                out.set_len(len)
                    .map_err(|e| Error::io(format!("cannot size {}", to.display()), e))?;
                self.made.copied += 1;
                self.made.copied_bytes += n;
                (out, len, need)
            }
            Plan::Fill(need) => {
                self.made.filled += 1;
                (self.create(to)?, 0, need)
            }
        };
        if copied < need {
            replay_copy::fill(&out, copied, need, to, stop)?;
        }
        // As a file the program had not just written: nothing dirty for
        // its fsync to flush, nothing cached for its reads.
        crate::sys::pagecache::evict(to)
            .map_err(|e| Error::io(format!("cannot write back {}", to.display()), e))?;
        Ok(Place::At(to.to_path_buf()))
    }

    fn create(&self, to: &Path) -> Result<File> {
        let f = File::create_new(to)
            .map_err(|e| Error::io(format!("cannot make {}", to.display()), e))?;
        self.mark(&f, to)?;
        Ok(f)
    }

    fn mark(&self, f: &File, p: &Path) -> Result<()> {
        if self.temp.is_some() {
            return Ok(());
        }
        xattr::set_fd(f.as_fd(), REPLAY_XATTR, b"1").map_err(|e| {
            Error::io(
                format!("cannot mark {} as iolab's ({REPLAY_XATTR})", p.display()),
                e,
            )
            .into()
        })
    }

    /// Makes `dir` and its missing parents under the root, each marked.
    fn dirs(&mut self, dir: &Path) -> Result<()> {
        if dir == self.root || dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = dir.parent() {
            self.dirs(parent)?;
        }
        std::fs::create_dir(dir)
            .map_err(|e| Error::io(format!("cannot make {}", dir.display()), e))?;
        self.made.dirs += 1;
        let f = File::open(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
        self.mark(&f, dir)
    }
}

/// Where the original path `p` goes under `root`, or why it is not
/// replayed.
pub fn mapped(root: &Path, p: &str) -> std::result::Result<PathBuf, &'static str> {
    if !p.starts_with('/') {
        return Err(if p.contains(":[") || p.starts_with("anon_inode") {
            "not a file (pipe, socket, anonymous inode)"
        } else {
            "path not resolved by the tracer"
        });
    }
    let rel = Path::new(&p[1..]);
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err("path with '..' or '.'");
    }
    match rel.components().next() {
        None => Err("the root directory"),
        Some(c) if ["proc", "sys", "dev"].iter().any(|k| c.as_os_str() == *k) => {
            Err("kernel or device file (/proc, /sys, /dev)")
        }
        Some(_) => Ok(root.join(rel)),
    }
}

/// How the trace used each path, in the order of the calls.
fn uses(t: &Trace) -> BTreeMap<u32, Use> {
    let mut order: Vec<&Event> = t.events.iter().collect();
    order.sort_by_key(|e| e.t_ns);
    let mut uses: BTreeMap<u32, Use> = BTreeMap::new();
    for e in order {
        let Some(f) = e.file else { continue };
        let u = uses.entry(f).or_default();
        let name = e.name();
        let flags = match name {
            "creat" => (libc::O_CREAT | libc::O_TRUNC | libc::O_WRONLY) as u64,
            "open" | "openat" | "openat2" => e.flags,
            _ => 0,
        };
        let named = matches!(
            name,
            "stat" | "lstat" | "newfstatat" | "statx" | "unlink" | "unlinkat" | "rmdir"
        ) || name.starts_with("rename");
        if u.first.is_none() && !named {
            u.first = Some((name, flags));
        }
        u.dir |= flags & libc::O_DIRECTORY as u64 != 0
            || matches!(name, "getdents64" | "mkdir" | "mkdirat");
        if e.class() == Class::Read
            && e.result > 0
            && let Some(off) = e.offset
        {
            u.need = u.need.max(off + e.result as u64);
        }
        if matches!(e.class(), Class::Read | Class::Write)
            && e.result > 0
            && let Some(off) = e.offset
        {
            u.touch = u.touch.max(off.saturating_add(e.result as u64));
        }
    }
    uses
}

/// What the replay makes for the original `orig`, used as `u` says.
fn plan(orig: &Path, u: &Use) -> Plan {
    let program_makes = match u.first {
        Some((_, f)) if f & (libc::O_CREAT as u64) != 0 => {
            f & ((libc::O_EXCL | libc::O_TRUNC) as u64) != 0
        }
        Some(("mkdir" | "mkdirat", _)) => true,
        _ => false,
    };
    let meta = std::fs::metadata(orig);
    if program_makes {
        return Plan::Made;
    }
    if meta.as_ref().map_or(u.dir, |m| m.is_dir()) {
        return Plan::Dir;
    }
    match (meta, File::open(orig)) {
        (Ok(m), _) if !m.is_file() => Plan::Not("not a regular file"),
        (Err(_), _) if u.first.is_none() => Plan::Absent,
        (Ok(m), _) if u.first.is_none() => Plan::Sized(m.len()),
        (Ok(m), Ok(src)) => Plan::Copy {
            len: m.len(),
            ranges: replay_copy::data_ranges(&src, m.len(), u.need.max(u.touch)),
            need: u.need,
        },
        _ => Plan::Fill(u.need),
    }
}

/// Takes `dir` for a replay: made (true) when missing; an empty directory,
/// or one holding only what earlier replays made (removed now), is taken.
fn claim(dir: &Path) -> Result<bool> {
    let refuse = |why: String| {
        Error::refused(
            dir,
            format!(
                "--target {}: {why}; give an empty directory or one an earlier iolab replay made",
                dir.display()
            ),
        )
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot make {}", dir.display()), e))?;
            xattr::set(dir, REPLAY_XATTR, b"1").map_err(|e| {
                Error::io(format!("cannot mark {} ({REPLAY_XATTR})", dir.display()), e)
            })?;
            Ok(true)
        }
        Err(e) => Err(Error::io(dir.display().to_string(), e).into()),
        Ok(m) if !m.is_dir() => Err(refuse("not a directory".into()).into()),
        Ok(_) => {
            if let Some(foreign) = first_foreign(dir) {
                return Err(refuse(format!(
                    "{} was not made by iolab replay",
                    foreign.display()
                ))
                .into());
            }
            remove_marked(dir);
            Ok(false)
        }
    }
}

/// The first entry under `dir` (recursively, symlinks not followed) that
/// does not carry [`REPLAY_XATTR`].
fn first_foreign(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    for e in entries.flatten() {
        let p = e.path();
        let Ok(ty) = e.file_type() else {
            return Some(p);
        };
        if ty.is_symlink() || !(ty.is_dir() || ty.is_file()) || !xattr::has(&p, REPLAY_XATTR) {
            return Some(p);
        }
        if ty.is_dir()
            && let Some(f) = first_foreign(&p)
        {
            return Some(f);
        }
    }
    None
}

/// Removes the marked entries under `dir` (a directory once it is empty);
/// the count of entries kept.
fn remove_marked(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 1;
    };
    let mut kept = 0;
    for e in entries.flatten() {
        let p = e.path();
        let ty = e.file_type().ok();
        let ours = ty.is_some_and(|t| !t.is_symlink()) && xattr::has(&p, REPLAY_XATTR);
        if ty.is_some_and(|t| t.is_dir()) && ours {
            let inner = remove_marked(&p);
            if inner > 0 || std::fs::remove_dir(&p).is_err() {
                kept += inner.max(1);
            }
        } else if ours && std::fs::remove_file(&p).is_ok() {
        } else {
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_map_under_the_root_or_say_why_not() {
        let r = Path::new("/s");
        assert_eq!(
            mapped(r, "/data/db/1.sst"),
            Ok(PathBuf::from("/s/data/db/1.sst"))
        );
        assert!(mapped(r, "/data/../etc/passwd").is_err());
        assert!(mapped(r, "/proc/self/stat").unwrap_err().contains("/proc"));
        assert!(mapped(r, "/dev/null").is_err());
        assert!(mapped(r, "pipe:[42]").unwrap_err().contains("pipe"));
        assert!(mapped(r, "relative/x").is_err());
        assert!(mapped(r, "/").is_err());
        assert!(mapped(r, "/device").is_ok());
    }
}
