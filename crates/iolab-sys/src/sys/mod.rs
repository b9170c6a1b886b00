//! The operating system, once: page cache (status, warm, evict, lock),
//! CPU use (getrusage), extended attributes, the disks under a file, the
//! machine's environment.
//! Every `unsafe` call into libc outside the engines and the hot loop lives
//! here, each in a small function with a `# Safety` note.

pub mod blockdev;
pub mod cachestat;
pub mod environment;
pub mod fs;
pub mod held;
pub mod limits;
pub mod loopdev;
pub mod machine;
pub mod mount;
pub mod pagecache;
pub mod par;
pub mod pidfd;
pub mod rusage;
pub mod sigbus;
pub mod stop;
pub mod thread;
pub mod tty_size;
pub mod xattr;
pub use crate::error::{Error, Result};
