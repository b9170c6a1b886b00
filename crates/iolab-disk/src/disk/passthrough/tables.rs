//! The pass-through's own state ([`Passthrough`]): the inode and handle
//! tables that map the kernel's numbers to backing paths and open files,
//! and the one place that asks the gate and answers later.

use super::attr::attr_of;
use crate::disk::gate::Gate;
use crate::disk::rules::Op;
use fuser::{Errno, FileAttr, FileType, INodeNo};
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// One entry of a directory listing taken at `opendir`.
pub(super) type DirEntry = (u64, FileType, OsString);

/// A served directory: the backing root and the gate its operations pass.
pub struct Passthrough {
    root: PathBuf,
    /// The rules and timer.
    pub(super) gate: Arc<Gate>,
    nodes: Mutex<Nodes>,
    handles: Mutex<Handles>,
}

/// What the kernel knows by inode number: the path relative to the root,
/// the backing file's (device, inode), and how many lookups it holds.
struct Node {
    path: PathBuf,
    key: (u64, u64),
    lookups: u64,
}

#[derive(Default)]
struct Nodes {
    by_ino: HashMap<u64, Node>,
    by_key: HashMap<(u64, u64), u64>,
    next: u64,
}

/// An open file or a directory listing.
#[derive(Clone)]
pub(super) enum Handle {
    File(Arc<File>),
    Dir(Arc<Vec<DirEntry>>),
}

#[derive(Default)]
struct Handles {
    open: HashMap<u64, Handle>,
    next: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The errno of an I/O error (EIO when it has none).
pub(super) fn errno_of(e: std::io::Error) -> Errno {
    Errno::from_i32(e.raw_os_error().unwrap_or(libc::EIO))
}

/// An I/O error from an errno.
pub(super) fn os_error(errno: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno)
}

impl Passthrough {
    /// Serves `root` (absolute, a directory) through `gate`.
    pub fn new(root: PathBuf, gate: Arc<Gate>) -> std::io::Result<Passthrough> {
        let md = std::fs::metadata(&root)?;
        let mut nodes = Nodes {
            next: INodeNo::ROOT.0 + 1,
            ..Nodes::default()
        };
        let key = (md.dev(), md.ino());
        nodes.by_key.insert(key, INodeNo::ROOT.0);
        nodes.by_ino.insert(
            INodeNo::ROOT.0,
            Node {
                path: PathBuf::new(),
                key,
                lookups: 1,
            },
        );
        Ok(Passthrough {
            root,
            gate,
            nodes: Mutex::new(nodes),
            handles: Mutex::default(),
        })
    }

    /// The path of `ino` relative to the root (ESTALE when forgotten).
    pub(super) fn rel(&self, ino: INodeNo) -> Result<PathBuf, Errno> {
        lock(&self.nodes)
            .by_ino
            .get(&ino.0)
            .map(|n| n.path.clone())
            .ok_or(Errno::ESTALE)
    }

    /// The path of `name` in directory `parent`, relative to the root.
    pub(super) fn child(&self, parent: INodeNo, name: &std::ffi::OsStr) -> Result<PathBuf, Errno> {
        Ok(self.rel(parent)?.join(name))
    }

    /// The backing path of a relative one.
    pub(super) fn full(&self, rel: &Path) -> PathBuf {
        match rel.as_os_str().is_empty() {
            true => self.root.clone(),
            false => self.root.join(rel),
        }
    }

    /// The kernel now knows `rel` (one more lookup): its attributes under
    /// its inode number, made when new.
    pub(super) fn remember(&self, rel: PathBuf, md: &Metadata) -> FileAttr {
        let key = (md.dev(), md.ino());
        let mut nodes = lock(&self.nodes);
        let ino = match nodes.by_key.get(&key).copied() {
            Some(ino) => ino,
            None => {
                let ino = nodes.next;
                nodes.next += 1;
                nodes.by_key.insert(key, ino);
                ino
            }
        };
        let node = nodes.by_ino.entry(ino).or_insert(Node {
            path: PathBuf::new(),
            key,
            lookups: 0,
        });
        node.path = rel;
        node.lookups += 1;
        attr_of(INodeNo(ino), md)
    }

    /// The kernel dropped `n` lookups of `ino`.
    pub(super) fn forget(&self, ino: INodeNo, n: u64) {
        let mut nodes = lock(&self.nodes);
        let gone = match nodes.by_ino.get_mut(&ino.0) {
            Some(node) if ino != INodeNo::ROOT => {
                node.lookups = node.lookups.saturating_sub(n);
                (node.lookups == 0).then_some(node.key)
            }
            _ => None,
        };
        if let Some(key) = gone {
            nodes.by_ino.remove(&ino.0);
            if nodes.by_key.get(&key) == Some(&ino.0) {
                nodes.by_key.remove(&key);
            }
        }
    }

    /// The name `rel` was removed (unlinked, or replaced by a rename): its
    /// node stays while the kernel holds it, but a new file that reuses
    /// the backing inode number gets a node of its own.
    pub(super) fn removed(&self, rel: &Path) {
        let mut nodes = lock(&self.nodes);
        let gone: Vec<_> = nodes
            .by_ino
            .iter()
            .filter(|(_, n)| n.path == rel)
            .map(|(ino, n)| (*ino, n.key))
            .collect();
        for (ino, key) in gone {
            if nodes.by_key.get(&key) == Some(&ino) {
                nodes.by_key.remove(&key);
            }
        }
    }

    /// `from` was renamed to `to` (exchanged with it when `exchange`):
    /// the nodes at and under them follow.
    pub(super) fn renamed(&self, from: &Path, to: &Path, exchange: bool) {
        if !exchange {
            self.removed(to);
        }
        let mut nodes = lock(&self.nodes);
        for node in nodes.by_ino.values_mut() {
            if let Ok(rest) = node.path.strip_prefix(from) {
                node.path = join(to, rest);
            } else if exchange && let Ok(rest) = node.path.strip_prefix(to) {
                node.path = join(from, rest);
            }
        }
    }

    /// Keeps `h` open; its handle number.
    pub(super) fn open_handle(&self, h: Handle) -> u64 {
        let mut hs = lock(&self.handles);
        hs.next += 1;
        let fh = hs.next;
        hs.open.insert(fh, h);
        fh
    }

    /// The open file or listing of handle `fh`.
    pub(super) fn handle(&self, fh: u64) -> Option<Handle> {
        lock(&self.handles).open.get(&fh).cloned()
    }

    /// The open file of handle `fh` (EBADF when it is none).
    pub(super) fn file(&self, fh: u64) -> std::io::Result<Arc<File>> {
        match self.handle(fh) {
            Some(Handle::File(f)) => Ok(f),
            _ => Err(os_error(libc::EBADF)),
        }
    }

    /// Closes handle `fh`.
    pub(super) fn close_handle(&self, fh: u64) {
        lock(&self.handles).open.remove(&fh);
    }

    /// Passes operation `op` on `bytes` of `rel` through the gate: a
    /// decided errno is answered instead of doing `work`; otherwise `work`
    /// runs now and `send` answers its result after the decided delay
    /// (from the timer thread, so delays overlap).
    pub(super) fn gated<T: Send + 'static>(
        &self,
        op: Op,
        bytes: (u64, u64),
        rel: &Path,
        work: impl FnOnce() -> std::io::Result<T>,
        send: impl FnOnce(Result<T, Errno>) + Send + 'static,
    ) {
        let d = self.gate.decide(op, bytes, Some(&rel.to_string_lossy()));
        let result = match d.errno {
            Some(e) => Err(Errno::from_i32(e)),
            None => work().map_err(errno_of),
        };
        self.gate.answer(d.delay_ns, Box::new(move || send(result)));
    }

    /// [`Passthrough::gated`] for a metadata operation on `rel`.
    pub(super) fn meta<T: Send + 'static>(
        &self,
        rel: &Path,
        work: impl FnOnce() -> std::io::Result<T>,
        send: impl FnOnce(Result<T, Errno>) + Send + 'static,
    ) {
        self.gated(Op::Meta, (0, 0), rel, work, send)
    }

    /// Looks `rel` up in the backing (without following a last symlink)
    /// and remembers it: what `lookup`, `mkdir`, `create`, ... answer.
    pub(super) fn entry_of(&self, rel: PathBuf) -> std::io::Result<FileAttr> {
        let md = std::fs::symlink_metadata(self.full(&rel))?;
        Ok(self.remember(rel, &md))
    }
}

fn join(base: &Path, rest: &Path) -> PathBuf {
    match rest.as_os_str().is_empty() {
        true => base.to_path_buf(),
        false => base.join(rest),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::rules::Rules;

    /// A pass-through over a temporary tree with `a/b/c`, `ab` and `x`.
    fn tree() -> (tempfile::TempDir, Passthrough) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        for f in ["a/b/c", "ab", "x"] {
            std::fs::write(tmp.path().join(f), f).unwrap();
        }
        let gate = Gate::new(Rules::new(Vec::new(), 1));
        let pt = Passthrough::new(tmp.path().to_path_buf(), gate).unwrap();
        (tmp, pt)
    }

    fn known(pt: &Passthrough, rel: &str) -> INodeNo {
        pt.entry_of(PathBuf::from(rel)).unwrap().ino
    }

    #[test]
    fn a_rename_moves_the_nodes_under_it_and_no_others() {
        let (_tmp, pt) = tree();
        let (a, c, ab) = (known(&pt, "a"), known(&pt, "a/b/c"), known(&pt, "ab"));
        pt.renamed(Path::new("a"), Path::new("z/y"), false);
        assert_eq!(pt.rel(a).unwrap(), Path::new("z/y"));
        assert_eq!(pt.rel(c).unwrap(), Path::new("z/y/b/c"));
        assert_eq!(pt.rel(ab).unwrap(), Path::new("ab"), "ab is not under a");
        assert_eq!(pt.rel(INodeNo::ROOT).unwrap(), Path::new(""));
    }

    #[test]
    fn an_exchange_swaps_both_sides() {
        let (_tmp, pt) = tree();
        let (c, x) = (known(&pt, "a/b/c"), known(&pt, "x"));
        pt.renamed(Path::new("a/b"), Path::new("x"), true);
        assert_eq!(pt.rel(c).unwrap(), Path::new("x/c"));
        assert_eq!(pt.rel(x).unwrap(), Path::new("a/b"));
    }

    #[test]
    fn a_node_lives_until_its_last_lookup_is_forgotten() {
        let (_tmp, pt) = tree();
        let x = known(&pt, "x");
        assert_eq!(known(&pt, "x"), x, "one file, one inode number");
        pt.forget(x, 1);
        assert!(pt.rel(x).is_ok());
        pt.forget(x, 1);
        assert!(pt.rel(x).is_err(), "forgotten: ESTALE");
        assert_ne!(known(&pt, "x"), x, "a new node once forgotten");
        pt.forget(INodeNo::ROOT, 5);
        assert!(pt.rel(INodeNo::ROOT).is_ok(), "the root is never forgotten");
    }

    #[test]
    fn a_removed_name_does_not_lend_its_node_to_a_reused_inode() {
        let (tmp, pt) = tree();
        let x = known(&pt, "x");
        let md = std::fs::metadata(tmp.path().join("x")).unwrap();
        pt.removed(Path::new("x"));
        // A new file with the same backing inode number (as after reuse).
        let y = pt.remember(PathBuf::from("y"), &md).ino;
        assert_ne!(y, x);
        assert_eq!(pt.rel(x).unwrap(), Path::new("x"), "kept while held");
        pt.forget(x, 1);
        let again = pt.remember(PathBuf::from("y"), &md).ino;
        assert_eq!(again, y, "forgetting x left y's node alone");
    }

    #[test]
    fn a_hard_link_is_one_node_at_its_latest_name() {
        let (tmp, pt) = tree();
        std::fs::hard_link(tmp.path().join("x"), tmp.path().join("x2")).unwrap();
        let x = known(&pt, "x");
        assert_eq!(known(&pt, "x2"), x);
        assert_eq!(pt.rel(x).unwrap(), Path::new("x2"));
    }
}
