//! A page-aligned I/O buffer (O_DIRECT needs aligned memory).

use std::alloc::{Layout, alloc_zeroed, dealloc};

/// Heap buffer aligned to 4096 bytes.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is uniquely owned; moving it to another thread is fine.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of at least `len` bytes (and at least one page).
    pub fn new(len: usize) -> AlignedBuf {
        let size = len.max(1).next_multiple_of(4096);
        let layout = Layout::from_size_align(size, 4096).expect("valid layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {size} bytes");
        AlignedBuf { ptr, layout }
    }

    /// Address of the first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes (a multiple of 4096).
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// True never: a buffer has at least one page.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The whole buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for layout.size() bytes and uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
