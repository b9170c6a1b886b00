//! Surviving a mapped file that shrinks underneath: touching a page of a
//! shared mapping beyond the file's new end raises SIGBUS, which would kill
//! the process. While a thread copies through a guarded mapping, iolab's
//! handler maps an anonymous page over the faulting one (the copy goes on
//! with zeros) and notes the fault, so the copy can report an I/O error
//! instead. A SIGBUS anywhere else goes to the handler that was there
//! before (Rust's own, or the default: the process dies as it would have).

use std::cell::Cell;
use std::io;
use std::sync::OnceLock;

thread_local! {
    /// This thread is inside [`copy`].
    static IN_COPY: Cell<bool> = const { Cell::new(false) };
    /// A page was replaced during this thread's current copy.
    static FAULTED: Cell<bool> = const { Cell::new(false) };
}

/// The action SIGBUS had before iolab's (or the install error).
static PREVIOUS: OnceLock<Result<libc::sigaction, i32>> = OnceLock::new();

/// The mapping shrank under a copy: part of the data was not the file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncated;

impl From<Truncated> for io::Error {
    fn from(_: Truncated) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the mapped file was truncated underneath (SIGBUS); the pages past its end read as zeros",
        )
    }
}

/// Installs the handler once per process; later calls return the first
/// call's outcome.
pub fn install() -> io::Result<()> {
    // SAFETY: installs a handler that only does async-signal-safe work
    // (thread-local flags of const initialisers, mmap, sigaction).
    let prev = PREVIOUS.get_or_init(|| unsafe { set_handler() });
    prev.map(|_| ()).map_err(io::Error::from_raw_os_error)
}

/// Runs `f` (a copy to or from a shared mapping) so that a SIGBUS raised by
/// the mapping is survived and reported. Needs [`install`] first.
#[inline]
pub fn copy(f: impl FnOnce()) -> Result<(), Truncated> {
    IN_COPY.set(true);
    f();
    IN_COPY.set(false);
    if FAULTED.replace(false) {
        return Err(Truncated);
    }
    Ok(())
}

/// # Safety
/// Replaces the process-wide SIGBUS action; call once (see [`install`]).
unsafe fn set_handler() -> Result<libc::sigaction, i32> {
    // SAFETY: zeroed sigaction structs are valid; sigemptyset and sigaction
    // get pointers to them.
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigbus as *const () as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut new.sa_mask);
        if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(old)
    }
}

/// The SIGBUS handler: inside a guarded copy, put a zero page over the
/// faulting page and note it; otherwise give the signal back to the action
/// that was there before (the fault repeats on return and reaches it).
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    if IN_COPY.get() {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO.
        let addr = unsafe { (*info).si_addr() } as usize;
        // SAFETY: sysconf is async-signal-safe.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let start = addr & !(page - 1);
        // SAFETY: the page belongs to a mapping this thread is copying
        // through (IN_COPY); replacing it keeps the range mapped until the
        // engine unmaps the whole mapping.
        let p = unsafe {
            libc::mmap(
                start as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            FAULTED.set(true);
            return;
        }
    }
    restore_previous();
}

/// Puts back the SIGBUS action that was there before iolab's.
fn restore_previous() {
    // SAFETY: sigaction with the action saved by set_handler, or the
    // default action.
    unsafe {
        match PREVIOUS.get() {
            Some(Ok(old)) => libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut()),
            _ => libc::signal(libc::SIGBUS, libc::SIG_DFL) as libc::c_int,
        };
    }
}
