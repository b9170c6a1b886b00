//! The file descriptors of the processes in strace output: which file each
//! refers to and its file position, as far as the output tells. An fd
//! points to an open file description ([`Desc`]), shared by dup and fork
//! as the kernel shares it, so a read through one moves the position seen
//! through the other. Paths are numbered for [`Event::file`](super::Event).

use super::strace_syntax as syntax;
use std::collections::HashMap;

/// An open file description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Desc {
    /// The file (a number of [`Fds::paths`]); `None` for pipes, sockets
    /// and fds strace named no file for.
    pub file: Option<u32>,
    /// The file position, when known.
    pub pos: Option<u64>,
    /// Opened with O_APPEND: writes land at the end, wherever that is.
    pub append: bool,
}

/// The fds of every process, their descriptions and the paths seen.
#[derive(Debug, Default)]
pub struct Fds {
    fds: HashMap<(u32, i64), usize>,
    descs: Vec<Desc>,
    /// Every path seen, in the order first seen.
    pub paths: Vec<String>,
    path_ids: HashMap<String, u32>,
}

impl Fds {
    /// The number of path `p` (numbered when first seen).
    pub fn path_id(&mut self, p: String) -> u32 {
        if let Some(&i) = self.path_ids.get(&p) {
            return i;
        }
        let i = self.paths.len() as u32;
        self.paths.push(p.clone());
        self.path_ids.insert(p, i);
        i
    }

    /// Makes `fd` of `pid` refer to a new description `d`; its number.
    pub fn open(&mut self, pid: u32, fd: i64, d: Desc) -> usize {
        self.descs.push(d);
        self.fds.insert((pid, fd), self.descs.len() - 1);
        self.descs.len() - 1
    }

    /// Forgets `fd` of `pid`.
    pub fn close(&mut self, pid: u32, fd: i64) {
        self.fds.remove(&(pid, fd));
    }

    /// The description `d`.
    pub fn get(&mut self, d: usize) -> &mut Desc {
        &mut self.descs[d]
    }

    /// The description behind `fd` of `pid`, checked against the `<note>`
    /// strace gave: an fd opened before tracing began, or one the table
    /// lost track of, gets a new description of unknown position.
    pub fn desc(&mut self, pid: u32, fd: i64, note: Option<&str>) -> Option<usize> {
        if fd < 0 {
            return None;
        }
        let known = self.fds.get(&(pid, fd)).copied();
        let Some(note) = note else { return known };
        let file = syntax::note_path(note).map(|p| self.path_id(p));
        match known {
            Some(d) if self.descs[d].file == file => Some(d),
            _ => Some(self.open(
                pid,
                fd,
                Desc {
                    file,
                    pos: None,
                    append: false,
                },
            )),
        }
    }

    /// `new` of `pid` refers to what `old` (with its `<note>`) refers to
    /// (dup, dup2, dup3, fcntl F_DUPFD).
    pub fn dup(&mut self, pid: u32, old: i64, note: Option<&str>, new: i64) {
        if new >= 0
            && let Some(d) = self.desc(pid, old, note)
        {
            self.fds.insert((pid, new), d);
        }
    }

    /// The child process `child` starts with the fds of `parent` (fork).
    pub fn inherit(&mut self, parent: u32, child: u32) {
        let inherited: Vec<_> = (self.fds.iter())
            .filter(|((p, _), _)| *p == parent)
            .map(|((_, fd), d)| (*fd, *d))
            .collect();
        for (fd, d) in inherited {
            self.fds.insert((child, fd), d);
        }
    }
}
