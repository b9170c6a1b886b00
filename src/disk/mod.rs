//! Injected disks (`iolab disk`, issue 17): the rules that delay, cap and
//! fail a disk's operations. This part is pure data and arithmetic
//! ([`rules`]: what the user asked, [`dist`]: how a delay is drawn,
//! [`bucket`]: bandwidth and IOPS caps), so the serving layers (a FUSE
//! block device under a loop device, a FUSE pass-through file system) and
//! the tests share it.

pub mod bucket;
pub mod dist;
pub mod rules;

pub use rules::{Decision, Op, RuleError, Rules};
