//! The symbolic names strace writes for numbers: errno names in results
//! (`-1 ENOENT (...)`) and the constants of the flag and advice arguments
//! (`O_RDONLY|O_CLOEXEC`, `POSIX_FADV_WILLNEED`, `MADV_DONTNEED`), with
//! their values from libc (the kernel's values on x86_64).

/// A table of names and their values.
macro_rules! table {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), libc::$name as i64)),*]
    };
}

/// Errno names and numbers.
const ERRNOS: &[(&str, i64)] = table![
    EPERM,
    ENOENT,
    ESRCH,
    EINTR,
    EIO,
    ENXIO,
    E2BIG,
    ENOEXEC,
    EBADF,
    ECHILD,
    EAGAIN,
    ENOMEM,
    EACCES,
    EFAULT,
    ENOTBLK,
    EBUSY,
    EEXIST,
    EXDEV,
    ENODEV,
    ENOTDIR,
    EISDIR,
    EINVAL,
    ENFILE,
    EMFILE,
    ENOTTY,
    ETXTBSY,
    EFBIG,
    ENOSPC,
    ESPIPE,
    EROFS,
    EMLINK,
    EPIPE,
    EDOM,
    ERANGE,
    EDEADLK,
    ENAMETOOLONG,
    ENOLCK,
    ENOSYS,
    ENOTEMPTY,
    ELOOP,
    ENOMSG,
    EIDRM,
    ECHRNG,
    EL2NSYNC,
    EL3HLT,
    EL3RST,
    ELNRNG,
    EUNATCH,
    ENOCSI,
    EL2HLT,
    EBADE,
    EBADR,
    EXFULL,
    ENOANO,
    EBADRQC,
    EBADSLT,
    EBFONT,
    ENOSTR,
    ENODATA,
    ETIME,
    ENOSR,
    ENONET,
    ENOPKG,
    EREMOTE,
    ENOLINK,
    EADV,
    ESRMNT,
    ECOMM,
    EPROTO,
    EMULTIHOP,
    EDOTDOT,
    EBADMSG,
    EOVERFLOW,
    ENOTUNIQ,
    EBADFD,
    EREMCHG,
    ELIBACC,
    ELIBBAD,
    ELIBSCN,
    ELIBMAX,
    ELIBEXEC,
    EILSEQ,
    ERESTART,
    ESTRPIPE,
    EUSERS,
    ENOTSOCK,
    EDESTADDRREQ,
    EMSGSIZE,
    EPROTOTYPE,
    ENOPROTOOPT,
    EPROTONOSUPPORT,
    ESOCKTNOSUPPORT,
    EOPNOTSUPP,
    EPFNOSUPPORT,
    EAFNOSUPPORT,
    EADDRINUSE,
    EADDRNOTAVAIL,
    ENETDOWN,
    ENETUNREACH,
    ENETRESET,
    ECONNABORTED,
    ECONNRESET,
    ENOBUFS,
    EISCONN,
    ENOTCONN,
    ESHUTDOWN,
    ETOOMANYREFS,
    ETIMEDOUT,
    ECONNREFUSED,
    EHOSTDOWN,
    EHOSTUNREACH,
    EALREADY,
    EINPROGRESS,
    ESTALE,
    EUCLEAN,
    ENOTNAM,
    ENAVAIL,
    EISNAM,
    EREMOTEIO,
    EDQUOT,
    ENOMEDIUM,
    EMEDIUMTYPE,
    ECANCELED,
    ENOKEY,
    EKEYEXPIRED,
    EKEYREVOKED,
    EKEYREJECTED,
    EOWNERDEAD,
    ENOTRECOVERABLE,
    ERFKILL,
    EHWPOISON,
];

/// The kernel's own errnos, which strace shows but libc does not define
/// (include/linux/errno.h).
const KERNEL_ERRNOS: &[(&str, i64)] = &[
    ("ERESTARTSYS", 512),
    ("ERESTARTNOINTR", 513),
    ("ERESTARTNOHAND", 514),
    ("ENOIOCTLCMD", 515),
    ("ERESTART_RESTARTBLOCK", 516),
    ("EPROBE_DEFER", 517),
    ("EOPENSTALE", 518),
    ("ENOPARAM", 519),
    ("EBADHANDLE", 521),
    ("ENOTSYNC", 522),
    ("EBADCOOKIE", 523),
    ("ENOTSUPP", 524),
    ("ETOOSMALL", 525),
    ("ESERVERFAULT", 526),
    ("EBADTYPE", 527),
    ("EJUKEBOX", 528),
    ("EIOCBQUEUED", 529),
    ("ERECALLCONFLICT", 530),
    ("ENOGRACE", 531),
    // Other names strace may use for numbers above.
    ("EWOULDBLOCK", libc::EAGAIN as i64),
    ("EDEADLOCK", libc::EDEADLK as i64),
    ("ENOTSUP", libc::EOPNOTSUPP as i64),
];

/// Open flags (`open`, `openat`).
const OPEN_FLAGS: &[(&str, i64)] = table![
    O_RDONLY,
    O_WRONLY,
    O_RDWR,
    O_CREAT,
    O_EXCL,
    O_NOCTTY,
    O_TRUNC,
    O_APPEND,
    O_NONBLOCK,
    O_NDELAY,
    O_DSYNC,
    O_SYNC,
    O_RSYNC,
    O_DIRECT,
    O_DIRECTORY,
    O_NOFOLLOW,
    O_NOATIME,
    O_CLOEXEC,
    O_PATH,
    O_TMPFILE,
    O_ASYNC,
];

/// Advice, mmap, seek, *at, sync, fallocate, rename and preadv2 flags.
const OTHER_FLAGS: &[(&str, i64)] = table![
    POSIX_FADV_NORMAL,
    POSIX_FADV_RANDOM,
    POSIX_FADV_SEQUENTIAL,
    POSIX_FADV_WILLNEED,
    POSIX_FADV_DONTNEED,
    POSIX_FADV_NOREUSE,
    MADV_NORMAL,
    MADV_RANDOM,
    MADV_SEQUENTIAL,
    MADV_WILLNEED,
    MADV_DONTNEED,
    MADV_FREE,
    MADV_REMOVE,
    MADV_DONTFORK,
    MADV_DOFORK,
    MADV_MERGEABLE,
    MADV_UNMERGEABLE,
    MADV_HUGEPAGE,
    MADV_NOHUGEPAGE,
    MADV_DONTDUMP,
    MADV_DODUMP,
    MADV_WIPEONFORK,
    MADV_KEEPONFORK,
    MADV_COLD,
    MADV_PAGEOUT,
    MADV_HWPOISON,
    MADV_SOFT_OFFLINE,
    MADV_POPULATE_READ,
    MADV_POPULATE_WRITE,
    MADV_COLLAPSE,
    MAP_SHARED,
    MAP_PRIVATE,
    MAP_SHARED_VALIDATE,
    MAP_FIXED,
    MAP_ANONYMOUS,
    MAP_ANON,
    MAP_GROWSDOWN,
    MAP_DENYWRITE,
    MAP_EXECUTABLE,
    MAP_LOCKED,
    MAP_NORESERVE,
    MAP_POPULATE,
    MAP_NONBLOCK,
    MAP_STACK,
    MAP_HUGETLB,
    MAP_SYNC,
    MAP_FIXED_NOREPLACE,
    SEEK_SET,
    SEEK_CUR,
    SEEK_END,
    SEEK_DATA,
    SEEK_HOLE,
    AT_EMPTY_PATH,
    AT_SYMLINK_NOFOLLOW,
    AT_SYMLINK_FOLLOW,
    AT_NO_AUTOMOUNT,
    AT_REMOVEDIR,
    AT_STATX_SYNC_AS_STAT,
    AT_STATX_FORCE_SYNC,
    AT_STATX_DONT_SYNC,
    SYNC_FILE_RANGE_WAIT_BEFORE,
    SYNC_FILE_RANGE_WRITE,
    SYNC_FILE_RANGE_WAIT_AFTER,
    FALLOC_FL_KEEP_SIZE,
    FALLOC_FL_PUNCH_HOLE,
    FALLOC_FL_COLLAPSE_RANGE,
    FALLOC_FL_ZERO_RANGE,
    FALLOC_FL_INSERT_RANGE,
    FALLOC_FL_UNSHARE_RANGE,
    RENAME_NOREPLACE,
    RENAME_EXCHANGE,
    RENAME_WHITEOUT,
    RWF_HIPRI,
    RWF_DSYNC,
    RWF_SYNC,
    RWF_NOWAIT,
    RWF_APPEND,
];

/// Names libc leaves out or gives a user-space value: the kernel's values.
const KERNEL_FLAGS: &[(&str, i64)] = &[
    // glibc defines O_LARGEFILE as 0 on 64-bit; the kernel (and strace) use this bit.
    ("O_LARGEFILE", 0o100000),
    ("MADV_DONTNEED_LOCKED", 24),
    ("IORING_ENTER_GETEVENTS", 1),
    ("IORING_ENTER_SQ_WAKEUP", 2),
    ("IORING_ENTER_SQ_WAIT", 4),
    ("IORING_ENTER_EXT_ARG", 8),
    ("IORING_ENTER_REGISTERED_RING", 16),
    ("AT_FDCWD", libc::AT_FDCWD as i64),
];

fn lookup(tables: &[&[(&str, i64)]], name: &str) -> Option<i64> {
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
}

/// The number of the errno named `name` (`ENOENT` → 2).
pub fn errno(name: &str) -> Option<i64> {
    lookup(&[ERRNOS, KERNEL_ERRNOS], name)
}

/// The value of the constant named `name` (`O_DIRECT`, `POSIX_FADV_WILLNEED`).
pub fn constant(name: &str) -> Option<i64> {
    lookup(&[KERNEL_FLAGS, OPEN_FLAGS, OTHER_FLAGS], name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_have_libc_values() {
        assert_eq!(errno("ENOENT"), Some(2));
        assert_eq!(errno("ERESTARTSYS"), Some(512));
        assert_eq!(errno("EBOGUS"), None);
        assert_eq!(constant("O_DIRECT"), Some(libc::O_DIRECT as i64));
        assert_eq!(constant("POSIX_FADV_WILLNEED"), Some(3));
        assert_eq!(constant("MADV_DONTNEED"), Some(4));
        assert_eq!(constant("O_LARGEFILE"), Some(0o100000));
    }
}
