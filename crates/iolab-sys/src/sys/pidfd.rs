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

/// What `/proc/PID/stat` says of a process that names it for sure: its
/// parent and its start time (clock ticks after boot; a PID reused by
/// another process has a later one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The parent's PID.
    pub ppid: u32,
    /// Field 22, `starttime`.
    pub start: u64,
}

/// `/proc/PID/stat` of `pid`, while it exists and is not a zombie.
pub fn stat(pid: u32) -> Option<ProcStat> {
    if pid == 0 {
        return None;
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// Field 3 (state) onwards follow the last `)`: the command name may hold
/// spaces and parentheses.
fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    if rest.first()? == &"Z" || rest.first()? == &"X" {
        return None;
    }
    Some(ProcStat {
        ppid: rest.get(1)?.parse().ok()?,
        start: rest.get(19)?.parse().ok()?,
    })
}

/// The start time of this process (see [`ProcStat::start`]).
pub fn own_start() -> u64 {
    stat(std::process::id()).map_or(0, |s| s.start)
}

/// A pidfd of `pid` only when the process it names passes `is_it` (its
/// start time, its parent): read after the pidfd is taken, so the pidfd
/// cannot name a process that took the PID after the check. `None` when
/// the process is gone, a zombie, or another.
pub fn open_if(pid: u32, is_it: impl Fn(&ProcStat) -> bool) -> Option<OwnedFd> {
    let fd = open(pid).ok()?;
    let st = stat(pid)?;
    (is_it(&st) && running(&fd)).then_some(fd)
}

/// A pidfd of the process `pid` that started at `start`, if it still runs.
/// A start of 0 (not recorded) names no process for sure: `None`.
pub fn open_started(pid: u32, start: u64) -> Option<OwnedFd> {
    if start == 0 {
        return None;
    }
    open_if(pid, |st| st.start == start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_reads_past_a_name_with_parentheses() {
        let line = "42 (a) b (c)) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(
            parse_stat(line),
            Some(ProcStat {
                ppid: 7,
                start: 123456
            })
        );
        assert_eq!(parse_stat(&line.replace(" S ", " Z ")), None);
    }

    #[test]
    fn this_process_is_named_only_with_its_own_start() {
        let me = std::process::id();
        let start = own_start();
        assert!(start > 0);
        assert!(open_started(me, start).is_some());
        assert!(open_started(me, start + 1).is_none(), "another start");
        assert!(open_started(me, 0).is_none(), "start unknown");
    }
}
