//! Why an injected disk could not be made, changed or removed.

use std::path::PathBuf;

/// What went wrong with `iolab disk`.
#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    /// Mounting and loop devices need root.
    #[error("iolab disk needs root (mount, loop devices); run it with sudo")]
    NotRoot,
    /// A device node the layer needs is missing or cannot be opened.
    #[error("{} is missing or cannot be opened ({why}): {needed_for}", .path.display())]
    NoDevice {
        /// `/dev/fuse`, `/dev/loop-control`.
        path: PathBuf,
        /// What it is needed for.
        needed_for: &'static str,
        /// The OS error.
        why: std::io::Error,
    },
    /// An outside program (mkfs.ext4, mkfs.xfs) is missing.
    #[error("{tool} not found: install {package} to make a {fs} file system")]
    ToolMissing {
        /// The program.
        tool: String,
        /// The Debian package that has it.
        package: &'static str,
        /// The file system asked for.
        fs: String,
    },
    /// A program iolab ran failed.
    #[error("{tool} failed ({status}): {stderr}")]
    ToolFailed {
        /// The command line.
        tool: String,
        /// Its exit status.
        status: String,
        /// What it said.
        stderr: String,
    },
    /// DIR holds files: iolab mounts only over an empty directory.
    #[error("{} is not empty: iolab disk mounts only over an empty directory (nothing under it is hidden or touched)", .0.display())]
    NotEmpty(PathBuf),
    /// There is already an iolab disk at DIR.
    #[error("{} already has an iolab disk (see iolab disk status; iolab disk down removes it)", .0.display())]
    AlreadyUp(PathBuf),
    /// DIR is a mount point iolab did not make: mounting over it would
    /// hide what is there.
    #[error("{} is a mount point iolab did not make ({fstype} from {from}): iolab disk mounts only over an empty directory of its own file system", .dir.display())]
    MountPoint {
        /// The directory.
        dir: PathBuf,
        /// Its file system type (`proc`, `ext4`).
        fstype: String,
        /// What is mounted there.
        from: String,
    },
    /// DIR is inside another iolab disk, or holds one below it.
    #[error("{}", nested_text(.dir, .other, *.inside))]
    Nested {
        /// The directory asked for.
        dir: PathBuf,
        /// The other disk's directory.
        other: PathBuf,
        /// `dir` is inside `other` (else `other` is inside `dir`).
        inside: bool,
    },
    /// No iolab disk at DIR.
    #[error("no iolab disk at {} (iolab disk status lists them)", .0.display())]
    NotFound(PathBuf),
    /// A value on the command line is wrong.
    #[error("{what}: {expected}")]
    Usage {
        /// The flag and value.
        what: String,
        /// What was expected.
        expected: String,
    },
    /// A rule could not be read.
    #[error(transparent)]
    Rule(#[from] super::RuleError),
    /// The block layer's FUSE server could not start or stop.
    #[error(transparent)]
    Fuse(#[from] super::fuse::FuseError),
    /// What the layer cannot do (`crash` on the file layer).
    #[error("the {layer} layer cannot {what}")]
    Unsupported {
        /// The layer.
        layer: String,
        /// What was asked.
        what: &'static str,
    },
    /// The daemon refused or could not do what was asked (`crash` on the
    /// file layer, rules it could not read).
    #[error("{what}: {message}")]
    Refused {
        /// The request (`crash /mnt/x`).
        what: String,
        /// The daemon's reason.
        message: String,
    },
    /// The serving daemon stopped or failed; its log has the details.
    #[error("the disk daemon failed: {message} (log: {})", .log.display())]
    Daemon {
        /// Its last words.
        message: String,
        /// Its log file.
        log: PathBuf,
    },
    /// A system call failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the path.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Stopped by a signal while the disk was being made (all of it was removed).
    #[error("interrupted; everything made so far was removed")]
    Interrupted {
        /// The signal (SIGINT, SIGTERM).
        signal: i32,
    },
    /// The thread serving a disk of this process panicked.
    #[error("the disk thread stopped unexpectedly")]
    ThreadLost,
}

fn nested_text(dir: &std::path::Path, other: &std::path::Path, inside: bool) -> String {
    let (d, o) = (dir.display(), crate::metrics::format::shell_path(other));
    match inside {
        true => format!(
            "{d} is inside the iolab disk at {o}: disks do not nest (its teardown would pull the \
             inner disk's file system away); use another directory, or iolab disk down {o} first"
        ),
        false => format!(
            "{d} holds the iolab disk at {o}: disks do not nest; use another directory, or \
             iolab disk down {o} first"
        ),
    }
}

impl DiskError {
    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> DiskError {
        DiskError::Io {
            context: context.into(),
            source,
        }
    }
}
