//! The system calls the server makes beyond what `nix` wraps, each in a
//! small function: an eventfd, CPU pinning, the /dev/fuse clone ioctl, and
//! memory the kernel writes into (io_uring entries).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::time::Duration;

/// A new eventfd (close-on-exec), counter 0.
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain integers in; a new descriptor (or -1) out.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Makes an eventfd readable for good (nobody reads it back).
pub(crate) fn signal(fd: BorrowedFd<'_>) {
    let _ = nix::unistd::write(fd, &1u64.to_ne_bytes());
}

/// Waits until one of `fds` is readable or `timeout` passes (None:
/// forever); returns which are readable, in order. EINTR counts as a
/// timeout.
pub(crate) fn wait_readable<const N: usize>(
    fds: [BorrowedFd<'_>; N],
    timeout: Option<Duration>,
) -> io::Result<[bool; N]> {
    use nix::poll::{PollFd, PollFlags, ppoll};
    let mut polls = fds.map(|fd| PollFd::new(fd, PollFlags::POLLIN));
    let ts = timeout.map(nix::sys::time::TimeSpec::from_duration);
    match ppoll(&mut polls, ts, None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    let bad = PollFlags::POLLIN | PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL;
    Ok(polls.map(|p| p.revents().is_some_and(|r| r.intersects(bad))))
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain bits (all zeros is the empty set); CPU_SET
    // stays inside it (checked above); sched_setaffinity reads
    // size_of::<cpu_set_t>() bytes of the local set; pid 0 is this thread.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A second descriptor on the connection of `session` (FUSE_DEV_IOC_CLONE),
/// with its own queue of requests being processed, non-blocking.
pub(crate) fn clone_dev(session: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let dev = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")?;
    let fd: OwnedFd = dev.into();
    let mut src: u32 = session.as_raw_fd() as u32;
    // SAFETY: FUSE_DEV_IOC_CLONE reads one u32 (the session's descriptor)
    // through the pointer, which points to a live local.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            super::proto::DEV_IOC_CLONE as _,
            &mut src as *mut u32,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    set_nonblocking(fd.as_fd())?;
    Ok(fd)
}

/// Sets O_NONBLOCK on `fd`.
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    let flags = OFlag::from_bits_truncate(fcntl(fd, FcntlArg::F_GETFL)?);
    fcntl(fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    Ok(())
}

/// The possible CPUs (`/sys/devices/system/cpu/possible`, e.g. "0-1"):
/// the kernel makes one io_uring queue for each.
pub(crate) fn possible_cpus() -> usize {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    let mut n = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
            n += b.saturating_sub(a) + 1;
        }
    }
    match n {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Anonymous memory handed to the kernel by address (an io_uring entry's
/// header or payload): the kernel reads and writes it while it owns the
/// entry, so Rust sees it only through the raw pointer or, between a
/// completion and the next submission, through [`KernelBuf::bytes`].
/// Mapped lazily: untouched pages cost nothing.
pub(crate) struct KernelBuf {
    ptr: NonNull<u8>,
    len: usize,
}

impl KernelBuf {
    /// `len` bytes of zeros, page aligned.
    pub(crate) fn new(len: usize) -> io::Result<KernelBuf> {
        // SAFETY: a new private anonymous mapping; no existing memory is
        // touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len.max(1),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave 0"))?;
        Ok(KernelBuf { ptr, len })
    }

    /// The address, for the kernel.
    pub(crate) fn addr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes.
    ///
    /// # Safety
    /// The kernel must not own the buffer now: it was never submitted, or
    /// its entry's completion was reaped and it is not submitted again
    /// while the slice lives.
    pub(crate) unsafe fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, live until drop, and (by the
        // caller's promise) nobody else writes it meanwhile.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for KernelBuf {
    fn drop(&mut self) {
        // Not munmap: a request the kernel was handing to this entry as the
        // ring closed may still be copied to this address from task work;
        // were the range reused, that copy would land in someone else's
        // memory. PROT_NONE frees the pages and keeps the range reserved,
        // so such a late copy fails with EFAULT instead.
        // SAFETY: MAP_FIXED over exactly the mapping made in `new`, which
        // nothing in Rust references any more (we are dropping it).
        unsafe {
            libc::mmap(
                self.ptr.as_ptr().cast(),
                self.len.max(1),
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                -1,
                0,
            );
        }
    }
}
