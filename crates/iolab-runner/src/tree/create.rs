//! `tree create`: fdtree's shape made in two timed phases, directory create
//! (level by level, parents first) and file create (create, write in `bs`
//! pieces, optional fsync, close), spread over threads.

use super::ops::{Limits, Op, Timer, is_full, measured};
use super::{Phase, Shape, Stopped, TreeResult, mark};
use crate::counters::disks_of;
use crate::error::{Error, Result};
use crate::metrics::clock::now_ns;
use crate::sys::stop::StopFlag;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// How to make the tree.
#[derive(Debug, Clone, Copy)]
pub struct CreateOptions {
    /// The shape.
    pub shape: Shape,
    /// Worker threads.
    pub threads: u32,
    /// fsync every file before closing it.
    pub fsync: bool,
    /// Stop after this long (ns), reporting what was made.
    pub time_limit_ns: Option<u64>,
    /// End with a timed `syncfs` phase, so the device writes of the
    /// create are counted.
    pub sync: bool,
    /// One of several ranks making one shared tree (`--shared-dir` under
    /// MPI): the top was prepared by rank 0, directories another rank made
    /// first are no error, and this rank's files are named `fN.RANK`.
    pub shared_rank: Option<u32>,
}

/// What one worker did.
#[derive(Default)]
struct Work {
    timer: Timer,
    dirs: u64,
    files: u64,
    bytes: u64,
    stopped: Option<Stopped>,
    error: Option<Error>,
}

/// The top directory: made if absent, else it must be empty. Marked as
/// iolab's either way.
pub fn prepare_top(dir: &Path) -> Result<()> {
    match std::fs::read_dir(dir) {
        Ok(mut it) => {
            if it.next().is_some() {
                return Err(Error::refused(
                    dir,
                    format!(
                        "{} exists and is not empty: iolab makes trees only in a new or empty directory",
                        dir.display()
                    ),
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Missing parents are made as `mkdir -p` would; only the top
            // directory is marked as iolab's (and `tree remove` removes
            // only it).
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        }
        Err(e) => return Err(Error::io(format!("cannot read {}", dir.display()), e)),
    }
    mark::set(dir).map_err(|e| {
        Error::io(
            format!(
                "cannot mark {} as iolab's (xattr {}); the file system needs user xattrs",
                dir.display(),
                mark::TREE_XATTR
            ),
            e,
        )
    })
}

/// The directories of each level (level 0 is `top`).
pub fn levels(top: &Path, shape: &Shape) -> Vec<Vec<PathBuf>> {
    let mut out = vec![vec![top.to_path_buf()]];
    for _ in 0..shape.levels {
        let prev = out.last().expect("level 0 exists");
        let next: Vec<PathBuf> = prev
            .iter()
            .flat_map(|p| (0..shape.dirs).map(move |i| p.join(format!("d{i}"))))
            .collect();
        out.push(next);
    }
    out
}

/// Runs `f` over `items` split round-robin across `threads`; merges the work.
fn spread<T: Sync>(
    items: &[T],
    threads: u32,
    f: impl Fn(&T, &mut Work, &AtomicBool) + Sync,
    phase: &mut Phase,
) -> Result<()> {
    let halt = AtomicBool::new(false);
    let n = (threads as usize).clamp(1, items.len().max(1));
    let works: Vec<Work> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let (f, halt) = (&f, &halt);
                s.spawn(move || {
                    let mut w = Work::default();
                    for item in items.iter().skip(t).step_by(n) {
                        if halt.load(Ordering::Relaxed) {
                            break;
                        }
                        f(item, &mut w, halt);
                        if w.stopped.is_some() || w.error.is_some() {
                            halt.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                    w
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("tree worker panicked"))
            .collect()
    });
    let mut err = None;
    for w in works {
        phase.dirs += w.dirs;
        phase.files += w.files;
        phase.bytes += w.bytes;
        phase.inodes_created += w.dirs + w.files;
        if phase.stopped.is_none() {
            phase.stopped = w.stopped;
        }
        if err.is_none() {
            err = w.error;
        }
        w.timer.merge_into(&mut phase.ops);
    }
    err.map_or(Ok(()), Err)
}

/// Makes the tree under `top`.
pub fn create(top: &Path, o: &CreateOptions, stop: &StopFlag) -> Result<TreeResult> {
    if o.shared_rank.is_none() {
        prepare_top(top)?;
    }
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let disks = disks_of(&[top.to_path_buf()]);
    let limits = Limits {
        deadline_ns: o.time_limit_ns.map(|t| now_ns() + t),
        stop,
    };
    let lv = levels(top, &o.shape);
    let mut phases = Vec::new();
    let mkdirs = measured("dir create", &disks, |p| {
        for level in &lv[1..] {
            spread(
                level,
                o.threads,
                |dir, w, _| {
                    if let Some(s) = limits.check() {
                        w.stopped = Some(s);
                        return;
                    }
                    match w.timer.time(Op::Mkdir, || std::fs::create_dir(dir)) {
                        Ok(()) => w.dirs += 1,
                        Err(e)
                            if o.shared_rank.is_some()
                                && e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) if is_full(&e) => {
                            w.stopped = Some(Stopped::NoSpace(dir.display().to_string()))
                        }
                        Err(e) => w.error = Some(Error::io(format!("mkdir {}", dir.display()), e)),
                    }
                },
                p,
            )?;
            if p.stopped.is_some() {
                break;
            }
        }
        Ok::<_, Error>(())
    })?;
    let dir_stop = mkdirs.stopped.clone();
    phases.push(mkdirs);
    if dir_stop.is_none() && o.shape.files > 0 {
        let all: Vec<&PathBuf> = lv.iter().flatten().collect();
        let buf = pattern(o.shape.bs.max(1) as usize);
        let files = measured("file create", &disks, |p| {
            spread(
                &all,
                o.threads,
                |dir, w, halt| make_files(dir, o, &buf, &limits, w, halt),
                p,
            )
        })?;
        phases.push(files);
    }
    if o.sync && phases.iter().all(|p| p.stopped.is_none()) {
        let synced = measured("sync", &disks, |p| {
            let mut t = super::ops::Timer::default();
            let f = std::fs::File::open(top)
                .map_err(|e| Error::io(format!("open {}", top.display()), e))?;
            // SAFETY: syncfs on a valid descriptor.
            let rc = t.time(Op::Fsync, || unsafe {
                libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&f))
            });
            if rc != 0 {
                return Err(Error::io(
                    format!("syncfs {}", top.display()),
                    std::io::Error::last_os_error(),
                ));
            }
            t.merge_into(&mut p.ops);
            Ok(())
        })?;
        phases.push(synced);
    }
    Ok(TreeResult {
        command: "create".into(),
        dir: top.to_path_buf(),
        dest: None,
        shape: Some(o.shape),
        threads: o.threads,
        phases,
        started_unix,
    })
}

/// Random non-zero bytes (file contents that neither compress nor read as holes).
fn pattern(len: usize) -> Vec<u8> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x10_1ab);
    let mut b = vec![0u8; len];
    rng.fill_bytes(&mut b);
    for x in &mut b {
        if *x == 0 {
            *x = 1;
        }
    }
    b
}

/// The files of one directory.
fn make_files(
    dir: &Path,
    o: &CreateOptions,
    buf: &[u8],
    limits: &Limits,
    w: &mut Work,
    halt: &AtomicBool,
) {
    let mut path = dir.join("f0");
    for i in 0..o.shape.files {
        if halt.load(Ordering::Relaxed) {
            return;
        }
        if let Some(s) = limits.check() {
            w.stopped = Some(s);
            return;
        }
        path.set_file_name(match o.shared_rank {
            Some(r) => format!("f{i}.{r}"),
            None => format!("f{i}"),
        });
        let full = |w: &mut Work, path: &Path| {
            w.stopped = Some(Stopped::NoSpace(path.display().to_string()))
        };
        let opened = w.timer.time(Op::Create, || {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&path)
        });
        let mut f = match opened {
            Ok(f) => f,
            Err(e) if is_full(&e) => return full(w, &path),
            Err(e) => {
                w.error = Some(Error::io(format!("create {}", path.display()), e));
                return;
            }
        };
        w.files += 1;
        let mut left = o.shape.size;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            match w.timer.time(Op::Write, || f.write_all(&buf[..n])) {
                Ok(()) => {
                    w.bytes += n as u64;
                    left -= n as u64;
                }
                Err(e) if is_full(&e) => {
                    w.timer.time(Op::Close, || drop(f));
                    return full(w, &path);
                }
                Err(e) => {
                    w.error = Some(Error::io(format!("write {}", path.display()), e));
                    return;
                }
            }
        }
        if o.fsync {
            match w.timer.time(Op::Fsync, || f.sync_all()) {
                Ok(()) => {}
                Err(e) if is_full(&e) => {
                    w.timer.time(Op::Close, || drop(f));
                    return full(w, &path);
                }
                Err(e) => {
                    w.error = Some(Error::io(format!("fsync {}", path.display()), e));
                    return;
                }
            }
        }
        w.timer.time(Op::Close, || drop(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fdtree_counts() {
        let s = Shape {
            dirs: 10,
            levels: 3,
            files: 10,
            size: 4096,
            bs: 4096,
        };
        assert_eq!(s.total_dirs(), 1111);
        assert_eq!(s.total_files(), 11110);
        let lv = levels(Path::new("/t"), &s);
        assert_eq!(
            lv.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 10, 100, 1000]
        );
        assert_eq!(lv[3][999], Path::new("/t/d9/d9/d9"));
    }
}
