//! The process's limit on open descriptors, raised once: iolab keeps
//! every file of a clone open through the run (fio's `nrfiles` can ask for
//! tens of thousands), and the soft limit (often 1024) is only a default.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft
/// limit now in force (unchanged when it cannot be read or raised).
pub fn raise_open_files() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into `lim`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 0;
    }
    if lim.rlim_cur < lim.rlim_max {
        let want = libc::rlimit {
            rlim_cur: lim.rlim_max,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit; raising the soft limit up to
        // the hard one is always allowed.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &want) } == 0 {
            return want.rlim_cur;
        }
    }
    lim.rlim_cur
}
