//! The command line of `iolab tree`: the options every tree command
//! shares ([`Common`]), [`TreeArgs`] and its commands ([`TreeCmd`]).

use crate::cli::db;
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
          value_parser = crate::cli::formats(), value_name = "FORMAT")]
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
    pub(super) fn name(&self) -> &'static str {
        match self {
            TreeCmd::Create { .. } => "create",
            TreeCmd::Walk { .. } => "walk",
            TreeCmd::Read { .. } => "read",
            TreeCmd::Copy { .. } => "copy",
            TreeCmd::Remove { .. } => "remove",
        }
    }
}
