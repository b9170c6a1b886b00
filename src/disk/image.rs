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

#[derive(Default)]
struct Log {
    /// Blocks written since the last flush, with what they held before.
    undo: HashMap<u64, Vec<u8>>,
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
    /// `len` bytes of zeros in memory (pages are taken when written).
    pub fn memory(len: u64) -> Image {
        Image::with(Backing::Memory(RwLock::new(vec![0u8; len as usize])), len)
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
                let mut old = vec![0u8; (BLOCK.min(self.len - b)) as usize];
                self.read_into(b, &mut old)?;
                slot.insert(old);
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
            self.write_raw(b, &old)?;
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
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
    fn reads_and_writes_stop_at_the_end() {
        let img = Image::memory(8192);
        assert_eq!(img.write(8000, &[7u8; 500], 0).unwrap(), Ok(192));
        assert_eq!(img.read(8100, 500).unwrap().len(), 92);
        assert!(img.read(9000, 10).unwrap().is_empty());
    }
}
