//! `iolab tree create|walk|read|copy|remove`: metadata workloads, stored
//! like runs.

use super::{Stderr, db};
use iolab::Result;
use iolab::error::RunError;
use iolab::render;
use iolab::runner::Progress;
use iolab::tree::options::{CreateArgs, size, time_limit_ns};
use iolab::tree::{self, Stopped};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Examples:
  iolab tree create /data/t --dirs 10 --levels 3 --files 10 --size 4k
  iolab tree create /data/t --job trees.fio:small --time-limit 60s --label before
  iolab tree walk /data/t
  iolab tree read /data/t
  iolab tree copy /data/t /data/t2        # rsync -a equivalent
  iolab tree remove /data/t2
  iolab compare before after              # seed 003's table with % change
  mpirun -n 4 iolab tree create /lustre/t --files 1000   # a tree per rank: /lustre/t/rank.R
  mpirun -n 4 iolab tree create /lustre/t --files 1000 --shared-dir   # one shared tree

Exit codes (see `iolab --help`): 0 also when --time-limit stopped it; 3 when the
file system filled up (what was made is reported); 130/143 interrupted.";

/// Options shared by every tree command.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// Stop after this long (e.g. 30s, 5m), reporting what was done.
    #[arg(long, value_name = "TIME", global = true)]
    pub time_limit: Option<String>,
    /// Output format: normal, json or json+ (with histogram bins). No `-f`
    /// here: in `tree create`, `-f` is `--files`, as fdtree's.
    #[arg(long, short_alias = 'o', default_value = "normal", global = true,
          value_parser = super::formats(), value_name = "FORMAT")]
    pub output_format: String,
    /// Under MPI: every rank in the one tree DIR (mdtest's shared
    /// directory; each rank's files named fN.RANK, `remove` by rank 0),
    /// instead of a directory of its own, DIR/rank.R.
    #[arg(long, global = true)]
    pub shared_dir: bool,
    /// Where the results go.
    #[command(flatten)]
    pub store: db::StoreOpts,
}

/// `iolab tree ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct TreeArgs {
    /// What to do.
    #[command(subcommand)]
    pub cmd: TreeCmd,
    /// Shared options.
    #[command(flatten)]
    pub common: Common,
}

/// Tree commands.
#[derive(Debug, clap::Subcommand)]
pub enum TreeCmd {
    /// Make an fdtree-shaped tree: D dirs per level, L levels, F files of S bytes per dir.
    Create {
        /// Top directory (made if absent; must be empty if present).
        dir: PathBuf,
        /// Subdirectories per directory.
        #[arg(long, short = 'd')]
        dirs: Option<u64>,
        /// Levels below the top.
        #[arg(long, short = 'l')]
        levels: Option<u32>,
        /// Files per directory.
        #[arg(long, short = 'f')]
        files: Option<u64>,
        /// Bytes per file (4k, 1M, ...).
        #[arg(long, short = 's')]
        size: Option<String>,
        /// Bytes per write (default: the file size, at most 1M).
        #[arg(long)]
        bs: Option<String>,
        /// Worker threads.
        #[arg(long, short = 't')]
        threads: Option<u32>,
        /// fsync each file before closing it.
        #[arg(long)]
        fsync: bool,
        /// End with a timed syncfs, so the device writes are counted.
        #[arg(long)]
        sync: bool,
        /// Read the shape from a job file section: FILE or FILE:SECTION
        /// (keys dirs, levels, files, size, bs, threads, fsync, time_limit).
        #[arg(long, value_name = "FILE[:SECTION]")]
        job: Option<String>,
    },
    /// readdir every directory and lstat every entry.
    Walk {
        /// The tree.
        dir: PathBuf,
    },
    /// Walk and read every file.
    Read {
        /// The tree.
        dir: PathBuf,
        /// Bytes per read.
        #[arg(long, default_value = "128k")]
        bs: String,
    },
    /// Copy a tree like `rsync -a SRC/ DST`: data, modes, times (owners as root).
    Copy {
        /// Source tree.
        src: PathBuf,
        /// Destination (made if absent; must be empty if present).
        dst: PathBuf,
        /// Bytes per read and write.
        #[arg(long, default_value = "128k")]
        bs: String,
    },
    /// Remove a tree iolab made: files, then directories.
    Remove {
        /// The tree.
        dir: PathBuf,
        /// Remove it even though iolab did not make it.
        #[arg(long)]
        not_mine: bool,
    },
}

impl TreeCmd {
    /// The command's name, as typed.
    fn name(&self) -> &'static str {
        match self {
            TreeCmd::Create { .. } => "create",
            TreeCmd::Walk { .. } => "walk",
            TreeCmd::Read { .. } => "read",
            TreeCmd::Copy { .. } => "copy",
            TreeCmd::Remove { .. } => "remove",
        }
    }
}

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
        return super::tree_ranks::execute(&a, (create, time_limit), who);
    }
    let mut store = c.store.open()?;
    let stop = super::stop_on_signals()?;
    let label = format!("tree {}", a.cmd.name());
    let t = super::progress::sampled(&label, || {
        work(
            &a.cmd,
            &|d| d.to_path_buf(),
            (create.as_ref(), time_limit),
            &stop,
        )
    })?;
    super::write_out(&render::tree(&t, &c.output_format)?, None)?;
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

/// Runs the tree command `cmd` on the directories `at` maps its own to
/// (themselves, or a rank's under MPI).
pub(super) fn work(
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
pub(super) fn conclude(
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
