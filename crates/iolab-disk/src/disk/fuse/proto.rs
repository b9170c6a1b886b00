//! The FUSE kernel ABI, as much of it as one file needs: 7.45 names and
//! layouts from the kernel's `include/uapi/linux/fuse.h` (the system's
//! header is 7.38, older than FUSE over io_uring). Every struct is
//! `repr(C)` without padding, checked by a size assertion, and moves to and
//! from bytes through [`Wire`].

/// The protocol's major version.
pub const KERNEL_VERSION: u32 = 7;
/// The newest minor version this server knows; it answers with the
/// smaller of this and the kernel's.
pub const KERNEL_MINOR: u32 = 45;
/// The root directory's node id.
pub const ROOT_ID: u64 = 1;
/// The smallest read(2) buffer /dev/fuse takes.
pub const MIN_READ_BUFFER: usize = 8192;

/// Opcodes (`enum fuse_opcode`).
pub mod op {
    #![allow(missing_docs)]
    pub const LOOKUP: u32 = 1;
    pub const FORGET: u32 = 2;
    pub const GETATTR: u32 = 3;
    pub const SETATTR: u32 = 4;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const WRITE: u32 = 16;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const FLUSH: u32 = 25;
    pub const INIT: u32 = 26;
    pub const OPENDIR: u32 = 27;
    pub const READDIR: u32 = 28;
    pub const RELEASEDIR: u32 = 29;
    pub const FSYNCDIR: u32 = 30;
    pub const ACCESS: u32 = 34;
    pub const INTERRUPT: u32 = 36;
    pub const DESTROY: u32 = 38;
    pub const BATCH_FORGET: u32 = 42;
    pub const FALLOCATE: u32 = 43;
}

/// FUSE_INIT flags (`flags | flags2 << 32`).
pub mod init {
    #![allow(missing_docs)]
    pub const ASYNC_READ: u64 = 1 << 0;
    pub const BIG_WRITES: u64 = 1 << 5;
    pub const ASYNC_DIO: u64 = 1 << 15;
    pub const PARALLEL_DIROPS: u64 = 1 << 18;
    pub const MAX_PAGES: u64 = 1 << 22;
    pub const INIT_EXT: u64 = 1 << 30;
    pub const OVER_IO_URING: u64 = 1 << 41;
}

/// `fuse_open_out.open_flags`: bypass the page cache.
pub const FOPEN_DIRECT_IO: u32 = 1 << 0;

/// `FUSE_DEV_IOC_CLONE`: `_IOR(229, 0, uint32_t)`.
pub const DEV_IOC_CLONE: u64 = (2 << 30) | (4 << 16) | (229 << 8);

/// io_uring commands (`enum fuse_uring_cmd`): hand an entry's buffers to
/// the kernel and wait for a request.
pub const URING_CMD_REGISTER: u32 = 1;
/// Send the answer held in an entry and wait for the next request.
pub const URING_CMD_COMMIT_AND_FETCH: u32 = 2;

/// Plain-old-data that crosses the kernel boundary as bytes.
///
/// # Safety
/// Implementors are `repr(C)` structs of integers (or arrays of them) with
/// no padding, so every byte pattern is a valid value and every byte of a
/// value is initialized.
pub unsafe trait Wire: Copy + Default {
    /// The value's bytes.
    fn as_bytes(&self) -> &[u8] {
        // SAFETY: by the trait's contract all size_of::<Self>() bytes are
        // initialized; the slice borrows `self`.
        unsafe { std::slice::from_raw_parts((self as *const Self).cast::<u8>(), size_of::<Self>()) }
    }

    /// The value at the start of `bytes`, bytes missing at the end read as
    /// zeros (older kernels send shorter structs).
    fn read_prefix(bytes: &[u8]) -> Self {
        let mut v = Self::default();
        let n = bytes.len().min(size_of::<Self>());
        // SAFETY: `v` is a local of size_of::<Self>() >= n bytes, any byte
        // pattern is valid for it (trait contract), the ranges are disjoint.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), (&raw mut v).cast::<u8>(), n);
        }
        v
    }

    /// The whole value at the start of `bytes`, or None when it is short.
    fn read(bytes: &[u8]) -> Option<Self> {
        (bytes.len() >= size_of::<Self>()).then(|| Self::read_prefix(bytes))
    }

    /// Writes the value at the start of `out`; returns its size (0 when
    /// `out` is too short, which leaves `out` untouched).
    fn write_to(&self, out: &mut [u8]) -> usize {
        let b = self.as_bytes();
        match out.get_mut(..b.len()) {
            Some(dst) => {
                dst.copy_from_slice(b);
                b.len()
            }
            None => 0,
        }
    }
}

macro_rules! wire {
    ($($name:ident = $size:expr),* $(,)?) => {$(
        // SAFETY: each is a repr(C) struct of integers whose size equals
        // the sum of its fields (asserted), hence without padding.
        unsafe impl Wire for $name {}
        const _: () = assert!(size_of::<$name>() == $size);
    )*};
}

/// `struct fuse_in_header`: precedes every request.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InHeader {
    pub len: u32,
    pub opcode: u32,
    pub unique: u64,
    pub nodeid: u64,
    pub uid: u32,
    pub gid: u32,
    pub pid: u32,
    pub total_extlen: u16,
    pub padding: u16,
}

/// `struct fuse_out_header`: precedes every answer; `error` is minus an
/// errno or 0.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct OutHeader {
    pub len: u32,
    pub error: i32,
    pub unique: u64,
}

/// `struct fuse_init_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InitIn {
    pub major: u32,
    pub minor: u32,
    pub max_readahead: u32,
    pub flags: u32,
    pub flags2: u32,
    pub unused: [u32; 11],
}

/// `struct fuse_init_out`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InitOut {
    pub major: u32,
    pub minor: u32,
    pub max_readahead: u32,
    pub flags: u32,
    pub max_background: u16,
    pub congestion_threshold: u16,
    pub max_write: u32,
    pub time_gran: u32,
    pub max_pages: u16,
    pub map_alignment: u16,
    pub flags2: u32,
    pub max_stack_depth: u32,
    pub request_timeout: u16,
    pub unused: [u16; 11],
}

/// `struct fuse_attr`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Attr {
    pub ino: u64,
    pub size: u64,
    pub blocks: u64,
    pub atime: u64,
    pub mtime: u64,
    pub ctime: u64,
    pub atimensec: u32,
    pub mtimensec: u32,
    pub ctimensec: u32,
    pub mode: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub rdev: u32,
    pub blksize: u32,
    pub flags: u32,
}

/// `struct fuse_attr_out`: the answer to GETATTR.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AttrOut {
    pub attr_valid: u64,
    pub attr_valid_nsec: u32,
    pub dummy: u32,
    pub attr: Attr,
}

/// `struct fuse_entry_out`: the answer to LOOKUP.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct EntryOut {
    pub nodeid: u64,
    pub generation: u64,
    pub entry_valid: u64,
    pub attr_valid: u64,
    pub entry_valid_nsec: u32,
    pub attr_valid_nsec: u32,
    pub attr: Attr,
}

/// `struct fuse_getattr_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct GetattrIn {
    pub getattr_flags: u32,
    pub dummy: u32,
    pub fh: u64,
}

/// `struct fuse_open_in` (OPEN and OPENDIR).
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenIn {
    pub flags: u32,
    pub open_flags: u32,
}

/// `struct fuse_open_out`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOut {
    pub fh: u64,
    pub open_flags: u32,
    pub backing_id: i32,
}

/// `struct fuse_release_in` (RELEASE and RELEASEDIR).
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ReleaseIn {
    pub fh: u64,
    pub flags: u32,
    pub release_flags: u32,
    pub lock_owner: u64,
}

/// `struct fuse_flush_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FlushIn {
    pub fh: u64,
    pub unused: u32,
    pub padding: u32,
    pub lock_owner: u64,
}

/// `struct fuse_read_in` (READ and READDIR).
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadIn {
    pub fh: u64,
    pub offset: u64,
    pub size: u32,
    pub read_flags: u32,
    pub lock_owner: u64,
    pub flags: u32,
    pub padding: u32,
}

/// `struct fuse_write_in`; the data follows it.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteIn {
    pub fh: u64,
    pub offset: u64,
    pub size: u32,
    pub write_flags: u32,
    pub lock_owner: u64,
    pub flags: u32,
    pub padding: u32,
}

/// `struct fuse_write_out`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOut {
    pub size: u32,
    pub padding: u32,
}

/// `struct fuse_fsync_in` (FSYNC and FSYNCDIR).
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FsyncIn {
    pub fh: u64,
    pub fsync_flags: u32,
    pub padding: u32,
}

/// `struct fuse_fallocate_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct FallocateIn {
    pub fh: u64,
    pub offset: u64,
    pub length: u64,
    pub mode: u32,
    pub padding: u32,
}

/// `struct fuse_kstatfs`, which is all of `struct fuse_statfs_out`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct StatfsOut {
    pub blocks: u64,
    pub bfree: u64,
    pub bavail: u64,
    pub files: u64,
    pub ffree: u64,
    pub bsize: u32,
    pub namelen: u32,
    pub frsize: u32,
    pub padding: u32,
    pub spare: [u32; 6],
}

/// `struct fuse_forget_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ForgetIn {
    pub nlookup: u64,
}

/// `struct fuse_batch_forget_in`; `count` of `struct fuse_forget_one`
/// (16 bytes each) follow it.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchForgetIn {
    pub count: u32,
    pub dummy: u32,
}

/// `struct fuse_interrupt_in`.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InterruptIn {
    pub unique: u64,
}

/// `struct fuse_dirent` without its name, which follows it, padded to 8.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Dirent {
    pub ino: u64,
    pub off: u64,
    pub namelen: u32,
    pub typ: u32,
}

/// `struct fuse_uring_ent_in_out`: the kernel's commit id of the request
/// in an entry, and the payload's size both ways.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UringEntInOut {
    pub flags: u64,
    pub commit_id: u64,
    pub payload_sz: u32,
    pub padding: u32,
    pub reserved: u64,
}

/// `struct fuse_uring_req_header`: an entry's header buffer. `in_out`
/// holds the [`InHeader`] of a request and then the [`OutHeader`] of its
/// answer; `op_in` the opcode's own header (e.g. [`ReadIn`]).
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct UringReqHeader {
    pub in_out: [u8; 128],
    pub op_in: [u8; 128],
    pub ring_ent_in_out: UringEntInOut,
}

impl Default for UringReqHeader {
    fn default() -> Self {
        UringReqHeader {
            in_out: [0; 128],
            op_in: [0; 128],
            ring_ent_in_out: UringEntInOut::default(),
        }
    }
}

/// `struct fuse_uring_cmd_req`: the start of an SQE128's 80-byte command
/// area.
#[allow(missing_docs)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct UringCmdReq {
    pub flags: u64,
    pub commit_id: u64,
    pub qid: u16,
    pub padding: [u8; 6],
}

wire!(
    InHeader = 40,
    OutHeader = 16,
    InitIn = 64,
    InitOut = 64,
    Attr = 88,
    AttrOut = 104,
    EntryOut = 128,
    GetattrIn = 16,
    OpenIn = 8,
    OpenOut = 16,
    ReleaseIn = 24,
    FlushIn = 24,
    ReadIn = 40,
    WriteIn = 40,
    WriteOut = 8,
    FsyncIn = 16,
    FallocateIn = 32,
    StatfsOut = 80,
    ForgetIn = 8,
    BatchForgetIn = 8,
    InterruptIn = 8,
    Dirent = 24,
    UringEntInOut = 32,
    UringReqHeader = 288,
    UringCmdReq = 24,
);

impl UringCmdReq {
    /// The 80-byte command area of an SQE128 carrying this command.
    pub fn area(&self) -> [u8; 80] {
        let mut a = [0u8; 80];
        self.write_to(&mut a);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_match_the_kernel() {
        assert_eq!(std::mem::offset_of!(InitOut, flags2), 32);
        assert_eq!(std::mem::offset_of!(InitOut, max_pages), 28);
        assert_eq!(std::mem::offset_of!(UringReqHeader, ring_ent_in_out), 256);
        assert_eq!(std::mem::offset_of!(UringCmdReq, qid), 16);
        assert_eq!(std::mem::offset_of!(EntryOut, attr), 40);
        assert_eq!(DEV_IOC_CLONE, 0x8004_e500);
    }

    #[test]
    fn short_input_reads_as_zeros() {
        let init = InitIn::read_prefix(&[7, 0, 0, 0, 45, 0, 0, 0]);
        assert_eq!((init.major, init.minor, init.flags2), (7, 45, 0));
        assert!(ReadIn::read(&[0; 39]).is_none());
    }
}
