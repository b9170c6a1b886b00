//! fio's verify state files (`verify_state_save`, `verify_state_load`),
//! byte for byte as fio 3.33 writes them (its `verify-state.h`), so a state
//! saved by either tool loads in the other. A write job that verifies
//! saves, when it ends, `local-NAME-INDEX-verify.state` in the working
//! directory (NAME: the job's name with `/` turned into `.`; INDEX: fio's
//! thread number less one, counted over every clone of every job):
//!
//! ```text
//! header (24)  version u64 = 3 | size u64 | crc u64 (fio's crc32c of the list)
//! list (152)   no_comps u64 | depth u32 | nofiles u32 | numberio u64 |
//!              index u64 | rand: use64 u64 + 48 bytes | name [u8; 64]
//! comps        depth * nofiles of (fileno u64, offset u64)
//! ```
//!
//! all little-endian. `numberio` is the writes issued; `comps` the offsets
//! of each file's last `iodepth` completed writes, newest first. The random
//! state fio keeps there is its own generator's: iolab writes zeros (fio
//! never reads it back). A read job that loads the state stops, as fio's
//! `verify_state_should_stop`, at the first I/O of the last `depth` before
//! `numberio` whose offset is not among the completed writes.

use super::block::fio_crc32c;
use std::path::{Path, PathBuf};

/// fio's `VSTATE_HDR_VERSION`.
const VERSION: u64 = 3;
/// Bytes of fio's `struct verify_state_hdr`.
const HDR_LEN: usize = 24;
/// Bytes of fio's `struct thread_io_list` before its completions.
const LIST_LEN: usize = 152;
/// Bytes of the name field.
const NAME_LEN: usize = 64;

/// One clone's saved write state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// The job's name (at most 63 bytes, as fio keeps it).
    pub name: String,
    /// fio's thread number less one.
    pub index: u64,
    /// `iodepth`.
    pub depth: u32,
    /// Files of the job.
    pub nofiles: u32,
    /// Writes issued.
    pub numberio: u64,
    /// Completed writes: (file index, offset), newest first per file.
    pub comps: Vec<(u64, u64)>,
}

/// The state file of job `name`, clone index `index`, in `dir` (fio's
/// `--aux-path`; `None`: the working directory).
pub fn path_in(dir: Option<&Path>, name: &str, index: u64) -> PathBuf {
    match dir {
        Some(d) => d.join(file_name(name, index)),
        None => file_name(name, index),
    }
}

/// fio's name of the state file of job `name`, clone index `index`.
pub fn file_name(name: &str, index: u64) -> PathBuf {
    PathBuf::from(format!(
        "local-{}-{index}-verify.state",
        short_name(name).replace('/', ".")
    ))
}

/// The name as fio's 64-byte field keeps it.
fn short_name(name: &str) -> &str {
    let mut end = name.len().min(NAME_LEN - 1);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}

impl State {
    /// The file's bytes: header, then the list.
    pub fn to_bytes(&self) -> Vec<u8> {
        let slots = self.depth as usize * self.nofiles as usize;
        let mut list = vec![0u8; LIST_LEN + slots * 16];
        list[0..8].copy_from_slice(&(self.comps.len() as u64).to_le_bytes());
        list[8..12].copy_from_slice(&self.depth.to_le_bytes());
        list[12..16].copy_from_slice(&self.nofiles.to_le_bytes());
        list[16..24].copy_from_slice(&self.numberio.to_le_bytes());
        list[24..32].copy_from_slice(&self.index.to_le_bytes());
        let name = short_name(&self.name).as_bytes();
        list[88..88 + name.len()].copy_from_slice(name);
        for (k, (file, off)) in self.comps.iter().take(slots).enumerate() {
            let at = LIST_LEN + k * 16;
            list[at..at + 8].copy_from_slice(&file.to_le_bytes());
            list[at + 8..at + 16].copy_from_slice(&off.to_le_bytes());
        }
        let mut out = Vec::with_capacity(HDR_LEN + list.len());
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(list.len() as u64).to_le_bytes());
        out.extend_from_slice(&u64::from(fio_crc32c(&list)).to_le_bytes());
        out.extend_from_slice(&list);
        out
    }

    /// Reads a state file's bytes, checked as fio checks them.
    pub fn parse(b: &[u8]) -> Result<State, StateProblem> {
        if b.len() < HDR_LEN {
            return Err(StateProblem::ShortHeader);
        }
        let (version, size, crc) = (u64_at(b, 0), u64_at(b, 8), u64_at(b, 16));
        if version != VERSION {
            return Err(StateProblem::Version(version));
        }
        let list = b
            .get(HDR_LEN..HDR_LEN.saturating_add(size as usize))
            .filter(|l| l.len() >= LIST_LEN)
            .ok_or(StateProblem::Short)?;
        if u64::from(fio_crc32c(list)) != crc {
            return Err(StateProblem::Corrupt);
        }
        let (depth, nofiles) = (u32_at(list, 8), u32_at(list, 12));
        let room = (list.len() - LIST_LEN) / 16;
        let n = (u64_at(list, 0) as usize).min(room);
        let name = &list[88..88 + NAME_LEN];
        let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(NAME_LEN)];
        Ok(State {
            name: String::from_utf8_lossy(name).into_owned(),
            index: u64_at(list, 24),
            depth,
            nofiles,
            numberio: u64_at(list, 16),
            comps: (0..n)
                .map(|k| {
                    let at = LIST_LEN + k * 16;
                    (u64_at(list, at), u64_at(list, at + 8))
                })
                .collect(),
        })
    }

    /// Writes the state file in `dir` (`None`: the working directory),
    /// synchronously, as fio opens it with O_SYNC.
    pub fn save(&self, dir: Option<&Path>) -> std::io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .custom_flags(libc::O_SYNC)
            .open(path_in(dir, &self.name, self.index))?;
        f.write_all(&self.to_bytes())
    }

    /// Loads the state of job `name`, clone index `index`, from `dir`
    /// (`None`: the working directory).
    pub fn load(dir: Option<&Path>, name: &str, index: u64) -> Result<State, StateError> {
        let path = path_in(dir, name, index);
        let b = std::fs::read(&path).map_err(|source| StateError::Read {
            path: path.clone(),
            source,
        })?;
        State::parse(&b).map_err(|problem| StateError::Bad { path, problem })
    }

    /// fio's `verify_state_should_stop`: true when the I/O at `offset` of
    /// file `file`, issued after `done` completed reads, must not be
    /// verified (it lies in the last `depth` writes and did not complete).
    pub fn should_stop(&self, done: u64, file: u64, offset: u64) -> bool {
        let (depth, n) = (u64::from(self.depth), self.numberio);
        if (done < depth || n.wrapping_sub(done) > depth) && n > depth {
            return false;
        }
        !self.comps.contains(&(file, offset))
    }
}

/// The last `depth` completed writes of each file, as fio logs them for
/// its state (`last_write_comp`).
#[derive(Debug, Clone)]
pub struct Completions {
    depth: usize,
    /// Per file: its ring of offsets and the next slot.
    rings: Vec<(Vec<u64>, usize)>,
    /// Write blocks completed.
    blocks: u64,
}

/// The depth fio logs completions for (and writes in the state file):
/// `iodepth`, which fio's io_uring engine rounds up to a power of two
/// when it starts (`fio_ioring_init`: "ring depth must be a power-of-2").
pub fn logged_depth(engine: &str, iodepth: u32) -> u32 {
    match engine {
        "io_uring" => iodepth.max(1).next_power_of_two(),
        _ => iodepth,
    }
}

impl Completions {
    /// Rings of `depth` for `files` files.
    pub fn new(depth: u32, files: usize) -> Completions {
        let depth = depth.max(1) as usize;
        Completions {
            depth,
            rings: vec![(vec![0; depth], 0); files],
            blocks: 0,
        }
    }

    /// A write at `offset` of file `file` completed.
    pub fn push(&mut self, file: u16, offset: u64) {
        self.blocks += 1;
        if let Some((ring, next)) = self.rings.get_mut(file as usize) {
            ring[*next] = offset;
            *next = (*next + 1) % ring.len();
        }
    }

    /// The state to save (fio's `fill_file_completions`: for every file,
    /// the last min(writes completed, depth) slots of its ring, newest
    /// first).
    pub fn state(&self, name: &str, index: u64, numberio: u64) -> State {
        let per_file = (self.blocks as usize).min(self.depth);
        let mut comps = Vec::new();
        for (f, (ring, next)) in self.rings.iter().enumerate() {
            for k in 0..per_file {
                let j = (next + self.depth - 1 - k) % self.depth;
                comps.push((f as u64, ring[j]));
            }
        }
        State {
            name: name.to_string(),
            index,
            depth: self.depth as u32,
            nofiles: self.rings.len() as u32,
            numberio,
            comps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_crc() {
        let mut c = Completions::new(4, 2);
        for (f, o) in [
            (0, 0),
            (1, 4096),
            (0, 8192),
            (0, 12288),
            (0, 16384),
            (0, 20480),
        ] {
            c.push(f, o);
        }
        let s = c.state("a/b", 3, 7);
        assert_eq!(
            s.comps[..4],
            [(0, 20480), (0, 16384), (0, 12288), (0, 8192)]
        );
        assert_eq!(s.comps[4..6], [(1, 4096), (1, 0)]);
        let b = s.to_bytes();
        assert_eq!(b.len(), HDR_LEN + LIST_LEN + 4 * 2 * 16);
        assert_eq!(State::parse(&b).unwrap(), s);
        assert_eq!(
            file_name("a/b", 3),
            PathBuf::from("local-a.b-3-verify.state")
        );
        let mut bad = b.clone();
        bad[HDR_LEN + 20] ^= 1;
        assert_eq!(State::parse(&bad).unwrap_err(), StateProblem::Corrupt);
    }

    #[test]
    fn stops_as_fio() {
        let s = State {
            name: "x".into(),
            index: 0,
            depth: 2,
            nofiles: 1,
            numberio: 10,
            comps: vec![(0, 9), (0, 8)],
        };
        assert!(!s.should_stop(7, 0, 7));
        assert!(s.should_stop(8, 0, 7));
        assert!(!s.should_stop(8, 0, 8));
        assert!(!s.should_stop(11, 0, 1));
    }
}

/// What is wrong with a verify state file's bytes (fio's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateProblem {
    /// Shorter than its header.
    #[error("failed reading verify state header")]
    ShortHeader,
    /// A version fio does not write.
    #[error("unsupported ({0}) version in verify state header")]
    Version(u64),
    /// Shorter than its header says.
    #[error("failed reading verify state")]
    Short,
    /// Its checksum does not match.
    #[error("verify state is corrupt")]
    Corrupt,
}

/// A verify state file `verify_state_load` could not use.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The file could not be read.
    #[error("verify_state_load: cannot read {}: {source}", path.display())]
    Read {
        /// The state file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a state fio would load.
    #[error("verify_state_load: {}: {problem}", path.display())]
    Bad {
        /// The state file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: StateProblem,
    },
}
