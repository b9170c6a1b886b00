//! The bytes of a block-layer disk: in memory (seed 004's ramdisk) or in a
//! file (`--image`), with an undo log of every block written since the last
//! flush, so [`Image::crash`] can put back what a power loss would lose.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Mutex, RwLock};

/// The undo log's unit: a write saves each 4 KiB block it touches once.
const BLOCK: u64 = 4096;

enum Backing {
    Memory(RwLock<Vec<u8>>),
    File(File),
}

/// What a block held before its first write since the last flush.
enum Old {
    /// Only zeros (a block never written, or discarded): nothing is kept,
    /// so filling a fresh disk does not take its size twice in memory.
    Zeros(usize),
    /// These bytes.
    Data(Vec<u8>),
}

impl Old {
    fn len(&self) -> usize {
        match self {
            Old::Zeros(n) => *n,
            Old::Data(d) => d.len(),
        }
    }
}

#[derive(Default)]
struct Log {
    /// Blocks written since the last flush, with what they held before.
    undo: HashMap<u64, Old>,
    /// Bumped by a crash: writes through handles opened before it fail.
    epoch: u64,
}

/// A disk image with crash semantics.
pub struct Image {
    backing: Backing,
    len: u64,
    log: Mutex<Log>,
}

/// A write through a handle opened before the last crash.
#[derive(Debug, PartialEq, Eq)]
pub struct Stale;

impl Image {
    /// `len` bytes of zeros in memory (pages are taken when written: 2 MiB
    /// at a time where transparent huge pages are allowed, see
    /// `advise_huge`).
    pub fn memory(len: u64) -> Image {
        let bytes = vec![0u8; len as usize];
        advise_huge(&bytes);
        Image::with(Backing::Memory(RwLock::new(bytes)), len)
    }

    /// The bytes of `file` (its length).
    pub fn file(file: File) -> std::io::Result<Image> {
        let len = file.metadata()?.len();
        Ok(Image::with(Backing::File(file), len))
    }

    fn with(backing: Backing, len: u64) -> Image {
        Image {
            backing,
            len,
            log: Mutex::new(Log::default()),
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a zero-length image.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The crash epoch now (a handle keeps the one it was opened in).
    pub fn epoch(&self) -> u64 {
        self.lock().epoch
    }

    /// Up to `len` bytes at `offset` (fewer at the end).
    pub fn read(&self, offset: u64, len: u32) -> std::io::Result<Vec<u8>> {
        let end = (offset + len as u64).min(self.len);
        let start = offset.min(end);
        let mut buf = vec![0u8; (end - start) as usize];
        self.read_into(start, &mut buf)?;
        Ok(buf)
    }

    /// Reads into `buf` at `offset`, cut at the image's end: the bytes
    /// read (the transport's buffer is filled in place, no copy between).
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.len);
        let start = offset.min(end);
        let n = (end - start) as usize;
        self.read_into(start, &mut buf[..n])?;
        Ok(n)
    }

    fn read_into(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match &self.backing {
            Backing::Memory(m) => {
                let m = m.read().unwrap_or_else(|e| e.into_inner());
                let s = offset as usize;
                buf.copy_from_slice(&m[s..s + buf.len()]);
                Ok(())
            }
            Backing::File(f) => f.read_exact_at(buf, offset),
        }
    }

    fn write_raw(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match &self.backing {
            Backing::Memory(m) => {
                let mut m = m.write().unwrap_or_else(|e| e.into_inner());
                let s = offset as usize;
                m[s..s + data.len()].copy_from_slice(data);
                Ok(())
            }
            Backing::File(f) => f.write_all_at(data, offset),
        }
    }

    /// Writes `data` at `offset` (cut at the end) through a handle of
    /// `epoch`, first saving the blocks it changes; the bytes written.
    pub fn write(
        &self,
        offset: u64,
        data: &[u8],
        epoch: u64,
    ) -> std::io::Result<Result<u32, Stale>> {
        let end = (offset + data.len() as u64).min(self.len);
        let start = offset.min(end);
        let data = &data[..(end - start) as usize];
        let mut log = self.lock();
        if log.epoch != epoch {
            return Ok(Err(Stale));
        }
        let mut b = start / BLOCK * BLOCK;
        while b < end {
            if let std::collections::hash_map::Entry::Vacant(slot) = log.undo.entry(b) {
                let mut old = [0u8; BLOCK as usize];
                let old = &mut old[..(BLOCK.min(self.len - b)) as usize];
                self.read_into(b, old)?;
                slot.insert(match old.iter().all(|&x| x == 0) {
                    true => Old::Zeros(old.len()),
                    false => Old::Data(old.to_vec()),
                });
            }
            b += BLOCK;
        }
        self.write_raw(start, data)?;
        Ok(Ok(data.len() as u32))
    }

    /// Makes every write so far durable (a flush or fsync reached the disk).
    pub fn flush(&self) -> std::io::Result<()> {
        let mut log = self.lock();
        if let Backing::File(f) = &self.backing {
            f.sync_data()?;
        }
        log.undo.clear();
        Ok(())
    }

    /// Power loss: puts back every block written since the last flush and
    /// makes handles opened before stale; the bytes put back.
    pub fn crash(&self) -> std::io::Result<u64> {
        let mut log = self.lock();
        log.epoch += 1;
        let mut restored = 0;
        for (b, old) in log.undo.drain() {
            match &old {
                Old::Zeros(n) => self.write_raw(b, &vec![0u8; *n])?,
                Old::Data(d) => self.write_raw(b, d)?,
            }
            restored += old.len() as u64;
        }
        if let Backing::File(f) = &self.backing {
            f.sync_data()?;
        }
        Ok(restored)
    }

    /// Bytes written since the last flush (blocks in the undo log).
    pub fn unflushed(&self) -> u64 {
        self.lock().undo.values().map(|v| v.len() as u64).sum()
    }

    /// Bytes the undo log holds copies of (blocks that held data before
    /// their write since the last flush; fresh blocks cost nothing).
    pub fn undo_bytes(&self) -> u64 {
        (self.lock().undo.values())
            .map(|v| match v {
                Old::Zeros(_) => 0,
                Old::Data(d) => d.len() as u64,
            })
            .sum()
    }

    /// Discards `len` bytes at `offset` (a discard or trim from the file
    /// system, a hole punched): they read back as zeros and, in memory,
    /// whole pages are given back to the system. A discard is kept across a
    /// crash (a device may drop discarded data at once); a write to those
    /// blocks since the last flush is still undone by a crash.
    pub fn punch(&self, offset: u64, len: u64, epoch: u64) -> std::io::Result<Result<(), Stale>> {
        let end = offset.saturating_add(len).min(self.len);
        let start = offset.min(end);
        let log = self.lock();
        if log.epoch != epoch {
            return Ok(Err(Stale));
        }
        match &self.backing {
            Backing::Memory(m) => {
                let mut m = m.write().unwrap_or_else(|e| e.into_inner());
                let range = &mut m[start as usize..end as usize];
                range.fill(0);
                release_pages(range);
            }
            Backing::File(f) => punch_file(f, start, end - start)?,
        }
        drop(log);
        Ok(Ok(()))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Asks for transparent huge pages (2 MiB) over the whole huge pages
/// inside `buf` (THP is `madvise` on many systems): a 4 KiB read at a
/// random offset of a large image then misses the TLB far less. With 4 KiB
/// pages the copy out of the image was the queue threads' largest cost at
/// depth 32 (its first load stalled); with huge pages the daemon's CPU
/// time per 4 KiB O_DIRECT read fell from 2.6 to 1.7 us (issue 38). With
/// THP `never` this does nothing.
fn advise_huge(buf: &[u8]) {
    const HUGE: usize = 2 << 20;
    if let Some((first, len)) = whole_units(buf.as_ptr() as usize, buf.len(), HUGE) {
        // SAFETY: [first, first + len) lies inside `buf`'s allocation
        // (anonymous memory from the allocator); MADV_HUGEPAGE only changes
        // how the kernel backs those pages, never the bytes they hold.
        unsafe {
            libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}

/// The stretch of whole `unit`-aligned units inside `len` bytes at `at`:
/// (its start, its length), None when no whole unit fits.
fn whole_units(at: usize, len: usize, unit: usize) -> Option<(usize, usize)> {
    let first = at.div_ceil(unit) * unit;
    let last = (at + len) / unit * unit;
    (last > first).then(|| (first, last - first))
}

/// Gives the whole pages inside `buf` (already zero) back to the system.
fn release_pages(buf: &mut [u8]) {
    let page = crate::sys::machine::page_size() as usize;
    if let Some((first, len)) = whole_units(buf.as_mut_ptr() as usize, buf.len(), page) {
        // SAFETY: [first, first + len) lies inside `buf`, which we borrow
        // mutably and which holds only zeros; MADV_DONTNEED on private
        // anonymous memory makes those pages read as zeros again, so the
        // bytes seen through `buf` do not change. No allocator metadata is
        // in it.
        unsafe {
            libc::madvise(first as *mut libc::c_void, len, libc::MADV_DONTNEED);
        }
    }
}

/// `fallocate(PUNCH_HOLE | KEEP_SIZE)` on an image file.
fn punch_file(f: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: a descriptor we own and integers.
    let r = unsafe { libc::fallocate(f.as_raw_fd(), mode, offset as i64, len as i64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_keeps_flushed_writes_and_drops_the_rest() {
        let img = Image::memory(64 * 1024);
        img.write(0, &[1u8; 5000], 0).unwrap().unwrap();
        img.flush().unwrap();
        img.write(100, &[2u8; 10], 0).unwrap().unwrap();
        img.write(20_000, &[3u8; 4096], 0).unwrap().unwrap();
        assert_eq!(img.unflushed(), 2 * 4096 + 4096);
        img.crash().unwrap();
        assert_eq!(img.read(0, 5000).unwrap(), vec![1u8; 5000]);
        assert_eq!(img.read(20_000, 4096).unwrap(), vec![0u8; 4096]);
        // A handle of the old epoch can no longer write.
        assert_eq!(img.write(0, &[9], 0).unwrap(), Err(Stale));
        assert_eq!(img.write(0, &[9], 1).unwrap(), Ok(1));
    }

    #[test]
    fn fresh_blocks_cost_no_undo_copy_and_punched_ones_read_zero() {
        let img = Image::memory(1 << 20);
        img.write(0, &[5u8; 65536], 0).unwrap().unwrap();
        assert_eq!((img.unflushed(), img.undo_bytes()), (65536, 0));
        img.crash().unwrap();
        assert_eq!(img.read(0, 4096).unwrap(), vec![0u8; 4096], "zeros back");
        img.write(0, &[5u8; 65536], 1).unwrap().unwrap();
        img.flush().unwrap();
        img.write(0, &[6u8; 4096], 1).unwrap().unwrap();
        assert_eq!(img.undo_bytes(), 4096, "a block with data is copied");
        img.punch(100, 20_000, 1).unwrap().unwrap();
        assert_eq!(img.read(0, 100).unwrap(), vec![6u8; 100]);
        assert_eq!(img.read(100, 20_000).unwrap(), vec![0u8; 20_000]);
        assert_eq!(img.read(20_100, 10).unwrap(), vec![5u8; 10]);
        assert_eq!(img.punch(0, 1, 0).unwrap(), Err(Stale));
    }

    #[test]
    fn reads_and_writes_stop_at_the_end() {
        let img = Image::memory(8192);
        assert_eq!(img.write(8000, &[7u8; 500], 0).unwrap(), Ok(192));
        assert_eq!(img.read(8100, 500).unwrap().len(), 92);
        assert!(img.read(9000, 10).unwrap().is_empty());
    }
}
