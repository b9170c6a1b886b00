//! `mmap`: reads and writes are copies from and to a shared mapping of the
//! file; the kernel does the I/O on page faults (counted in `majf`/`minf`).

use super::{Attach, Engine, EngineConfig, EngineError, Queued};
use super::IoUnit;
use crate::sys::sigbus;
use std::io;
use std::os::fd::RawFd;

/// One mapping per file, made in [`Engine::attach`].
#[derive(Debug, Default)]
pub struct MmapEngine {
    maps: Vec<(*mut u8, usize)>,
}

// SAFETY: the mappings are owned by this engine and used by one thread.
unsafe impl Send for MmapEngine {}

impl Engine for MmapEngine {
    fn warnings(cfg: &EngineConfig) -> Vec<String> {
        cfg.direct
            .then(|| "direct=1 has no effect on ioengine=mmap (the mapping always goes through the page cache)".into())
            .into_iter()
            .collect()
    }

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        // fio's fio_mmapio_init: msync and O_DIRECT work on whole pages.
        let page = crate::sys::machine::page_size();
        if !cfg.bs_min.is_multiple_of(page) && (cfg.direct || cfg.syncs) {
            return Err(EngineError::new(
                "ioengine=mmap",
                format!(
                    "with fsync, fdatasync or direct=1 the block size must be a multiple of \
                     the page size ({page} bytes); the smallest here is {} (fio: \
                     \"mmap options dictate a minimum block size of {page} bytes\")",
                    cfg.bs_min
                ),
            ));
        }
        Ok(())
    }

    fn build(_: &EngineConfig) -> Result<Self, EngineError> {
        Ok(MmapEngine::default())
    }

    fn attach(&mut self, a: Attach<'_>) -> io::Result<()> {
        // A file truncated underneath raises SIGBUS on the next copy.
        sigbus::install()?;
        let prot = libc::PROT_READ | if a.writes { libc::PROT_WRITE } else { 0 };
        for (&fd, &size) in a.fds.iter().zip(a.sizes) {
            let len = size as usize;
            if len == 0 {
                self.maps.push((std::ptr::null_mut(), 0));
                continue;
            }
            // SAFETY: a new shared mapping of an open file; nothing else
            // refers to that address range.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
            if p == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            self.maps.push((p.cast(), len));
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, _tag: u32, _fd: RawFd, unit: IoUnit, buf: &mut [u8]) -> io::Result<Queued> {
        let (base, len) = self.maps[unit.file as usize];
        let n = unit.len as usize;
        let off = unit.offset as usize;
        if off + n > len {
            return Err(io::Error::from_raw_os_error(libc::ENXIO));
        }
        // SAFETY: off + n is inside the mapping (checked) and `buf` holds at
        // least n bytes; the two never overlap. A page past the file's end
        // (truncated meanwhile) is replaced by zeros and reported.
        sigbus::copy(|| unsafe {
            if unit.write {
                std::ptr::copy_nonoverlapping(buf.as_ptr(), base.add(off), n);
            } else {
                std::ptr::copy_nonoverlapping(base.add(off), buf.as_mut_ptr(), n);
                std::hint::black_box(&buf[..n]);
            }
        })?;
        Ok(Queued::Done(n))
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        for &(p, len) in &self.maps {
            if len > 0 {
                // SAFETY: mapped in attach() with this length.
                unsafe { libc::munmap(p.cast(), len) };
            }
        }
    }
}
