//! Process descriptors (pidfds): a process named for sure, so a signal
//! never reaches another process that took its pid.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `pidfd_open(pid, 0)`: a descriptor that names this very process.
pub fn open(pid: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new
    // descriptor, or -1; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// `pidfd_send_signal(fd, sig, NULL, 0)`; a process already gone is no
/// error.
pub fn signal(fd: &OwnedFd, sig: libc::c_int) {
    // SAFETY: a pidfd we own, a signal number, a null siginfo (which the
    // call allows), no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
}

/// True while the process of `fd` runs (a pidfd turns readable when its
/// process exits).
pub fn running(fd: &OwnedFd) -> bool {
    let mut p = [nix::poll::PollFd::new(
        std::os::fd::AsFd::as_fd(fd),
        nix::poll::PollFlags::POLLIN,
    )];
    nix::poll::poll(&mut p, 0u16).is_ok_and(|n| n == 0)
}
