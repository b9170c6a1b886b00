//! fio's verify, as fio 3.33 does it: [`block`] the verified blocks (the
//! header, checksums and data of each, and the check of one read back),
//! [`state`] fio's verify state files, [`verifier`] a clone's verification
//! while it runs (what its writes were, what it found) with the writes it
//! has yet to read back (`write_log`). The steps of the clone's loop that
//! call it are in `ctx/verify.rs`.

pub mod block;
pub mod state;
pub mod verifier;
pub(super) mod write_log;
