//! A clone's I/O buffers, placed in memory as fio places them (see
//! [`crate::job::groups::memory`] for why the place matters): one region of
//! `depth` buffers of the largest block size, end to end, from the job's
//! memory type; the first starts at a page boundary plus `iomem_align` with
//! `direct=1` or a nonzero `iomem_align`, else where fio's malloc puts it
//! ([`malloc_offset`]).

use crate::job::groups::memory::{MemType, Memory};
use std::io;
use std::sync::Arc;

/// From this many bytes of buffers on, fio 3.33's malloc'd buffers are a
/// block glibc maps on its own (its mmap threshold as it stands when fio
/// allocates them here: 452 KiB come from the heap, 456 KiB are mapped),
/// which starts 16 bytes past a page: [`MAPPED_OFFSET`].
pub const MAPPED_FROM: usize = 456 << 10;

/// Bytes past a page where a mapped block starts (glibc's chunk header).
pub const MAPPED_OFFSET: u64 = 16;

/// Bytes past a page where fio 3.33's smaller malloc'd buffers start (its
/// heap, as strace shows it on this machine).
pub const HEAP_OFFSET: u64 = 0x620;

/// Where `iomem=malloc` puts `total` bytes of buffers: where fio's malloc
/// does. The place matters: the kernel copies a page-cache page into a
/// buffer 16 bytes past a page boundary 2-3 times more slowly than into
/// any other place (4 KiB aliasing), so fio's large buffered reads pay it
/// and its small ones do not.
pub fn malloc_offset(total: usize) -> u64 {
    if total >= MAPPED_FROM {
        MAPPED_OFFSET
    } else {
        HEAP_OFFSET
    }
}

/// One I/O buffer: `len` bytes inside a region it keeps alive.
pub struct IoBuf {
    ptr: *mut u8,
    len: usize,
    _region: Arc<Region>,
}

// SAFETY: each buffer covers its own bytes of the region, which it keeps
// alive; moving it to another thread is fine.
unsafe impl Send for IoBuf {}

impl IoBuf {
    /// A zeroed, page-aligned buffer of at least `len` bytes (at least
    /// one byte), for iolab's own reads (verification read-back).
    pub fn page_aligned(len: usize) -> IoBuf {
        let size = len.max(1);
        let region = Region::mmap(size, false).expect("out of memory for an I/O buffer");
        IoBuf {
            ptr: region.ptr,
            len: size,
            _region: Arc::new(region),
        }
    }

    /// Address of the first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no bytes (never: at least one).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes of the region this buffer
        // keeps alive, no other buffer covers them, and self is borrowed
        // uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// `depth` buffers of `bs_max` bytes each (at least one byte), end to end
/// in one region of the job's memory, placed as fio places them.
pub fn clone_buffers(
    mem: &Memory,
    direct: bool,
    bs_max: usize,
    depth: usize,
) -> io::Result<Vec<IoBuf>> {
    let bs = bs_max.max(1);
    let depth = depth.max(1);
    let offset = match (mem.page_offset(direct), mem.mem) {
        (Some(a), _) => a,
        (None, MemType::Malloc) => malloc_offset(bs * depth),
        (None, _) => 0,
    } as usize;
    let size = bs
        .checked_mul(depth)
        .and_then(|s| s.checked_add(offset))
        .ok_or_else(|| io::Error::other("I/O memory too large: reduce bs or iodepth"))?;
    let region = Arc::new(match mem.mem {
        MemType::Malloc | MemType::Mmap => Region::mmap(size, false)?,
        MemType::MmapShared => Region::mmap(size, true)?,
        MemType::Shm => Region::shm(size)?,
    });
    // Every region starts at a page boundary.
    let first = region.ptr as usize + offset;
    Ok((0..depth)
        .map(|i| IoBuf {
            ptr: (first + i * bs) as *mut u8,
            len: bs,
            _region: Arc::clone(&region),
        })
        .collect())
}

/// Memory that holds a clone's buffers, freed as it was taken.
struct Region {
    ptr: *mut u8,
    size: usize,
    kind: MemType,
}

// SAFETY: the region is only freed on drop, once no buffer refers to it.
unsafe impl Send for Region {}
// SAFETY: a region itself is never written through; its buffers are.
unsafe impl Sync for Region {}

impl Region {
    /// `size` bytes of anonymous memory (zeroed by the kernel), private
    /// or shared.
    fn mmap(size: usize, shared: bool) -> io::Result<Region> {
        let flags = libc::MAP_ANONYMOUS
            | if shared {
                libc::MAP_SHARED
            } else {
                libc::MAP_PRIVATE
            };
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: an anonymous mapping at an address the kernel picks
        // touches no existing memory.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, flags, -1, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let kind = if shared {
            MemType::MmapShared
        } else {
            MemType::Mmap
        };
        Region::taken(ptr.cast(), size, kind)
    }

    /// `size` bytes of System V shared memory, attached here and marked
    /// for removal at once (it goes when detached, even if iolab dies).
    fn shm(size: usize) -> io::Result<Region> {
        // SAFETY: a new private segment; no memory is touched.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600) };
        if id < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: attaches the segment just made at an address the kernel
        // picks.
        let ptr = unsafe { libc::shmat(id, std::ptr::null(), 0) };
        let err = io::Error::last_os_error();
        // SAFETY: IPC_RMID on our own segment; it stays while attached.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        if ptr as isize == -1 {
            return Err(err);
        }
        Region::taken(ptr.cast(), size, MemType::Shm)
    }

    fn taken(ptr: *mut u8, size: usize, kind: MemType) -> io::Result<Region> {
        if ptr.is_null() {
            return Err(io::Error::other(format!(
                "out of memory allocating {size} bytes of I/O buffers"
            )));
        }
        Ok(Region { ptr, size, kind })
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: ptr and size are what the matching call returned, and
        // no buffer refers to the region any more (they hold the Arc).
        unsafe {
            match self.kind {
                MemType::Malloc | MemType::Mmap | MemType::MmapShared => {
                    libc::munmap(self.ptr.cast(), self.size);
                }
                MemType::Shm => {
                    libc::shmdt(self.ptr.cast());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;

    fn placed(mem: MemType, align: Option<u64>, direct: bool) -> Vec<usize> {
        let m = Memory { mem, align };
        let bufs = clone_buffers(&m, direct, 256 << 10, 4).unwrap();
        bufs.iter().map(|b| b.as_ptr() as usize).collect()
    }

    #[test]
    fn buffers_are_placed_as_fio_places_them() {
        // Where fio's malloc puts 1 MiB: 16 bytes past a page.
        let m = placed(MemType::Malloc, None, false);
        assert_eq!(m[0] % PAGE, 16, "{m:x?}");
        let small = clone_buffers(&Memory::default(), false, 4096, 1).unwrap();
        assert_eq!(small[0].as_ptr() as usize % PAGE, 0x620);
        assert_eq!(m[1] - m[0], 256 << 10, "end to end");
        assert_eq!(placed(MemType::Malloc, None, true)[0] % PAGE, 0);
        assert_eq!(placed(MemType::Malloc, Some(512), false)[0] % PAGE, 512);
        for t in [MemType::Mmap, MemType::MmapShared, MemType::Shm] {
            assert_eq!(placed(t, None, false)[0] % PAGE, 0, "{t:?}");
        }
    }

    #[test]
    fn buffers_can_be_written_end_to_end() {
        let m = Memory::default();
        let mut bufs = clone_buffers(&m, false, 4096, 3).unwrap();
        for (i, b) in bufs.iter_mut().enumerate() {
            b.as_mut_slice().fill(i as u8 + 1);
        }
        assert!(bufs[1].as_mut_slice().iter().all(|&x| x == 2));
        assert_eq!(IoBuf::page_aligned(10).as_ptr() as usize % PAGE, 0);
    }
}
