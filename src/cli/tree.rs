//! `iolab tree create|walk|read|copy|remove`: metadata workloads, stored
//! like runs.

use super::exec::stop_on_signals;
use iolab::render::tree as render;
use iolab::job::{ini, units};
use iolab::tree::{self, Shape, Stopped, TreeResult, create::CreateOptions};
use iolab::{Error, Result};
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
Examples:
  iolab tree create /data/t --dirs 10 --levels 3 --files 10 --size 4k
  iolab tree create /data/t --job trees.fio:small --time-limit 60s --label before
  iolab tree walk /data/t
  iolab tree read /data/t
  iolab tree copy /data/t /data/t2        # rsync -a equivalent
  iolab tree remove /data/t2
  iolab compare before after              # seed 003's table with % change

Exit codes: 0 done (also when --time-limit stopped it), 1 failed, 2 bad input,
3 stopped because the file system is full (ENOSPC; what was made is reported),
130 interrupted.";

/// Options shared by every tree command.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// Stop after this long (e.g. 30s, 5m), reporting what was done.
    #[arg(long, value_name = "TIME", global = true)]
    pub time_limit: Option<String>,
    /// Output format: normal or json.
    #[arg(short = 'o', long, value_enum, default_value = "normal", global = true)]
    pub output_format: Format,
    /// Where the results go.
    #[command(flatten)]
    pub store: super::db::StoreOpts,
}

/// Output formats of tree commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Table of phases, latency lines and log2 histograms.
    Normal,
    /// JSON.
    Json,
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

fn size(opt: &str, v: &str) -> std::result::Result<u64, String> {
    units::parse_size(v).map_err(|e| format!("--{opt} '{v}': {e}"))
}

/// Shape, threads, fsync and time limit from a job file section.
fn from_job(spec: &str) -> std::result::Result<Vec<(String, String)>, String> {
    let (file, section) = match spec.rsplit_once(':') {
        Some((f, s)) if !s.contains('/') => (f, Some(s)),
        _ => (spec, None),
    };
    let sections = ini::parse_file(Path::new(file))?;
    let mut out = Vec::new();
    let mut found = false;
    for s in &sections {
        let take = s.name == "global" || section.is_none_or(|want| s.name == want);
        if take {
            found |= s.name != "global";
            for e in &s.entries {
                let key = e.key.replace('-', "_");
                if ![
                    "dirs",
                    "levels",
                    "files",
                    "size",
                    "bs",
                    "threads",
                    "fsync",
                    "time_limit",
                ]
                .contains(&key.as_str())
                {
                    return Err(format!(
                        "{}: '{}' is not a tree key (dirs, levels, files, size, bs, threads, fsync, time_limit)",
                        e.origin, e.key
                    ));
                }
                out.push((key, e.value.clone().unwrap_or_else(|| "1".into())));
            }
            if section.is_none() && found {
                break;
            }
        }
    }
    if !found {
        return Err(match section {
            Some(s) => format!("{file}: no section [{s}]"),
            None => format!("{file}: no tree section"),
        });
    }
    Ok(out)
}

fn duration_ns(v: &str) -> std::result::Result<u64, String> {
    units::parse_time_us(v)
        .map(|us| us * 1000)
        .map_err(|e| format!("--time-limit '{v}': {e}"))
}

/// Runs `iolab tree`.
pub fn execute(a: TreeArgs) -> i32 {
    let c = &a.common;
    let mut time_limit = match c.time_limit.as_deref().map(duration_ns).transpose() {
        Ok(t) => t,
        Err(e) => return super::fail(e, 2),
    };
    let mut store = match c.store.open() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 1),
    };
    let parse_bs = |v: &str| size("bs", v).map(|b| b as usize);
    let result: std::result::Result<Result<TreeResult>, String> = match &a.cmd {
        TreeCmd::Create {
            dir,
            dirs,
            levels,
            files,
            size: sz,
            bs,
            threads,
            fsync,
            sync,
            job,
        } => (|| {
            let mut o = CreateOptions {
                shape: Shape {
                    dirs: 0,
                    levels: 0,
                    files: 0,
                    size: 0,
                    bs: 0,
                },
                threads: 1,
                fsync: *fsync,
                time_limit_ns: None,
                sync: *sync,
            };
            let mut bs_set = None;
            if let Some(j) = job {
                for (k, v) in from_job(j)? {
                    let n = || units::parse_int(&v).map_err(|e| format!("{j}: {k}={v}: {e}"));
                    match k.as_str() {
                        "dirs" => o.shape.dirs = n()?,
                        "levels" => o.shape.levels = n()? as u32,
                        "files" => o.shape.files = n()?,
                        "size" => o.shape.size = size("size", &v)?,
                        "bs" => bs_set = Some(size("bs", &v)?),
                        "threads" => o.threads = n()? as u32,
                        "fsync" => o.fsync |= units::parse_bool(&v)?,
                        _ => time_limit = time_limit.or(Some(duration_ns(&v)?)),
                    }
                }
            }
            o.shape.dirs = dirs.unwrap_or(o.shape.dirs);
            o.shape.levels = levels.unwrap_or(o.shape.levels);
            o.shape.files = files.unwrap_or(o.shape.files);
            if let Some(s) = sz {
                o.shape.size = size("size", s)?;
            }
            if let Some(b) = bs {
                bs_set = Some(size("bs", b)?);
            }
            o.threads = threads.unwrap_or(o.threads);
            if o.threads == 0 || o.threads > 1024 {
                return Err(format!("--threads {}: expected 1 to 1024", o.threads));
            }
            if o.shape.dirs == 0 && o.shape.levels > 0 {
                return Err("--dirs 0 with --levels > 0 makes no directories; give --dirs".into());
            }
            if o.shape.total_dirs() + o.shape.total_files() > 100_000_000 {
                return Err(format!(
                    "{} directories and {} files is more than 100 million inodes",
                    o.shape.total_dirs(),
                    o.shape.total_files()
                ));
            }
            o.shape.bs = bs_set.unwrap_or(o.shape.size.clamp(1, 1 << 20));
            if o.shape.bs == 0 {
                return Err("--bs 0: expected at least 1 byte".into());
            }
            o.time_limit_ns = time_limit;
            Ok(tree::create::create(dir, &o, &stop))
        })(),
        TreeCmd::Walk { dir } => Ok(tree::walk::walk(dir, false, 1, time_limit, &stop)),
        TreeCmd::Read { dir, bs } => {
            parse_bs(bs).map(|b| tree::walk::walk(dir, true, b, time_limit, &stop))
        }
        TreeCmd::Copy { src, dst, bs } => {
            parse_bs(bs).map(|b| tree::copy::copy(src, dst, b, time_limit, &stop))
        }
        TreeCmd::Remove { dir, not_mine } => {
            Ok(tree::remove::remove(dir, *not_mine, time_limit, &stop))
        }
    };
    let t = match result {
        Err(e) => return super::fail(e, 2),
        Ok(Err(e @ (Error::Input(_) | Error::Refused(_)))) => return super::fail(e, 2),
        Ok(Err(e)) => return super::fail(e, 1),
        Ok(Ok(t)) => t,
    };
    let out = match c.output_format {
        Format::Normal => render::text(&t),
        Format::Json => {
            serde_json::to_string_pretty(&render::json(&t, false)).expect("serialise") + "\n"
        }
    };
    if let Err(e) = super::write_out(&out, None) {
        return super::fail(e, 1);
    }
    if let Some(st) = &mut store {
        match st.insert_tree(
            &t,
            &std::env::args().collect::<Vec<_>>().join(" "),
            c.store.label(),
        ) {
            Ok(id) => eprintln!("iolab: stored as run {id} in {}", st.path().display()),
            Err(e) => eprintln!("iolab: warning: result not stored: {e}"),
        }
    }
    match t.stopped() {
        Some(Stopped::TimeLimit) => {
            eprintln!("iolab: stopped at the time limit; the table shows what was done");
            0
        }
        Some(Stopped::NoSpace(p)) => {
            eprintln!(
                "iolab: stopped: file system full (ENOSPC) at {p}; the table shows what was done"
            );
            3
        }
        Some(Stopped::Interrupted) => {
            eprintln!("iolab: interrupted: partial results printed");
            130
        }
        None => 0,
    }
}
