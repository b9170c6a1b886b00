//! `iolab tree create|walk|read|copy|remove`: metadata workloads, stored
//! like runs. The command line is [`args`], the work and its ending
//! [`work`], the same under MPI [`ranks`].

use crate::cli::db;
use iolab::Result;
use iolab::render;
use iolab::tree;
use iolab::tree::options::{CreateArgs, time_limit_ns};

pub mod args;
pub mod ranks;
pub mod work;

pub use args::{TreeArgs, TreeCmd};
use work::{conclude, work};

/// Runs `iolab tree`.
pub fn execute(a: TreeArgs) -> Result<()> {
    let c = &a.common;
    let time_limit = time_limit_ns(c.time_limit.as_deref())?;
    let create = match &a.cmd {
        TreeCmd::Create {
            dirs,
            levels,
            files,
            size,
            bs,
            threads,
            fsync,
            sync,
            job,
            ..
        } => Some(
            CreateArgs {
                dirs: *dirs,
                levels: *levels,
                files: *files,
                size: size.clone(),
                bs: bs.clone(),
                threads: *threads,
                fsync: *fsync,
                sync: *sync,
                job: job.clone(),
                time_limit: c.time_limit.clone(),
            }
            .resolve()?,
        ),
        _ => None,
    };
    // A format with no form for a tree result is refused before the work.
    render::tree(&tree::TreeResult::default(), &c.output_format)?;
    if let Some(who) = iolab::dist::mpi::launched() {
        return ranks::execute(&a, (create, time_limit), who);
    }
    let mut store = c.store.open()?;
    let stop = crate::cli::stop_on_signals()?;
    let label = format!("tree {}", a.cmd.name());
    let t = crate::cli::progress::sampled(&label, || {
        work(
            &a.cmd,
            &|d| d.to_path_buf(),
            (create.as_ref(), time_limit),
            &stop,
        )
    })?;
    crate::cli::write_out(&render::tree(&t, &c.output_format)?, None)?;
    // A result that cannot be stored is still shown; the failure is the
    // command's error (exit 1) unless the tree work itself failed.
    let stored = store
        .as_mut()
        .map(|st| {
            let id = st.insert_tree(&t, &db::command_line(), c.store.label())?;
            Ok(format!("stored as run {id} in {}", st.path().display()))
        })
        .transpose();
    conclude(&t, stored, &stop)
}
