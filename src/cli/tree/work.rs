//! What a tree command does, on one machine or as one MPI rank: the work
//! ([`work`]) and how the command ends once its result is shown
//! ([`conclude`]).

use super::args::TreeCmd;
use crate::cli::Stderr;
use iolab::Result;
use iolab::error::RunError;
use iolab::runner::Progress;
use iolab::tree::options::size;
use iolab::tree::{self, Stopped};
use std::path::PathBuf;

/// Runs the tree command `cmd` on the directories `at` maps its own to
/// (themselves, or a rank's under MPI).
pub fn work(
    cmd: &TreeCmd,
    at: &dyn Fn(&std::path::Path) -> PathBuf,
    (create, time_limit): (Option<&tree::create::CreateOptions>, Option<u64>),
    stop: &iolab::runner::StopFlag,
) -> std::result::Result<tree::TreeResult, RunError> {
    let bs = |v: &str| size("bs", v).map(|b| b as usize);
    match cmd {
        TreeCmd::Create { dir, .. } => {
            tree::create::create(&at(dir), create.expect("resolved before"), stop)
        }
        TreeCmd::Walk { dir } => tree::walk::walk(&at(dir), false, 1, time_limit, stop),
        TreeCmd::Read { dir, bs: b } => tree::walk::walk(&at(dir), true, bs(b)?, time_limit, stop),
        TreeCmd::Copy { src, dst, bs: b } => {
            tree::copy::copy(&at(src), &at(dst), bs(b)?, time_limit, stop)
        }
        TreeCmd::Remove { dir, not_mine } => {
            tree::remove::remove(&at(dir), *not_mine, time_limit, stop)
        }
    }
}

/// Ends a tree command whose result `t` is shown: says where it was
/// stored (or the store's error), and why it stopped early.
pub fn conclude(
    t: &tree::TreeResult,
    stored: Result<Option<String>>,
    stop: &iolab::runner::StopFlag,
) -> Result<()> {
    let not_stored = match stored {
        Ok(Some(said)) => {
            Stderr.step(&said);
            None
        }
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let done = || not_stored.map_or(Ok(()), Err);
    match t.stopped() {
        Some(Stopped::TimeLimit) => {
            Stderr.step("stopped at the time limit; the table shows what was done");
            done()
        }
        Some(Stopped::NoSpace(p)) => {
            eprintln!("iolab: the table shows what was done before the file system filled up");
            Err(RunError::NoSpace { at: p.clone() }.into())
        }
        Some(Stopped::Interrupted) => {
            eprintln!("iolab: the table shows what was done");
            Err(iolab::Error::interrupted(stop))
        }
        None => done(),
    }
}
