//! What a tree command was asked: sizes and times as written, a tree
//! shape from the command line or from a section of a job file
//! (`--job trees.fio:small`), checked and turned into [`CreateOptions`].

use super::Shape;
use super::create::CreateOptions;
use crate::error::{Error, Result};
use crate::job::{ini, units};
use std::path::Path;

/// Keys a tree section of a job file may hold.
const TREE_KEYS: [&str; 8] = [
    "dirs",
    "levels",
    "files",
    "size",
    "bs",
    "threads",
    "fsync",
    "time_limit",
];

/// `tree create`'s arguments as given (absent: from the job file, else defaults).
#[derive(Debug, Clone, Default)]
pub struct CreateArgs {
    /// Subdirectories per directory.
    pub dirs: Option<u64>,
    /// Levels below the top.
    pub levels: Option<u32>,
    /// Files per directory.
    pub files: Option<u64>,
    /// Bytes per file, as written (`4k`).
    pub size: Option<String>,
    /// Bytes per write, as written.
    pub bs: Option<String>,
    /// Worker threads.
    pub threads: Option<u32>,
    /// fsync each file.
    pub fsync: bool,
    /// End with a timed syncfs.
    pub sync: bool,
    /// `FILE` or `FILE:SECTION` of a job file with the shape.
    pub job: Option<String>,
    /// `--time-limit`, as written.
    pub time_limit: Option<String>,
}

/// A size option: `--NAME VALUE` in messages.
pub fn size(opt: &str, v: &str) -> Result<u64> {
    units::parse_size(v).map_err(|e| Error::usage(format!("--{opt} '{v}'"), e.to_string()))
}

/// `--time-limit` in ns.
pub fn time_limit_ns(v: Option<&str>) -> Result<Option<u64>> {
    v.map(|v| {
        units::parse_time_us(v)
            .map(|us| us * 1000)
            .map_err(|e| Error::usage(format!("--time-limit '{v}'"), e.to_string()))
    })
    .transpose()
}

impl CreateArgs {
    /// The options of the create: the job file's section first, the
    /// command line on top, then checked.
    pub fn resolve(&self) -> Result<CreateOptions> {
        let mut o = CreateOptions {
            shared_rank: None,
            shape: Shape {
                dirs: 0,
                levels: 0,
                files: 0,
                size: 0,
                bs: 0,
            },
            threads: 1,
            fsync: self.fsync,
            time_limit_ns: time_limit_ns(self.time_limit.as_deref())?,
            sync: self.sync,
        };
        let mut bs = None;
        if let Some(j) = &self.job {
            for (k, v) in from_job(j)? {
                let n = || {
                    units::parse_int(&v)
                        .map_err(|e| Error::usage(format!("{j}: {k}={v}"), e.to_string()))
                };
                match k.as_str() {
                    "dirs" => o.shape.dirs = n()?,
                    "levels" => o.shape.levels = n()? as u32,
                    "files" => o.shape.files = n()?,
                    "size" => o.shape.size = size("size", &v)?,
                    "bs" => bs = Some(size("bs", &v)?),
                    "threads" => o.threads = n()? as u32,
                    "fsync" => {
                        o.fsync |= units::parse_bool(&v)
                            .map_err(|e| Error::usage(format!("{j}: fsync={v}"), e.to_string()))?
                    }
                    _ => o.time_limit_ns = o.time_limit_ns.or(time_limit_ns(Some(&v))?),
                }
            }
        }
        o.shape.dirs = self.dirs.unwrap_or(o.shape.dirs);
        o.shape.levels = self.levels.unwrap_or(o.shape.levels);
        o.shape.files = self.files.unwrap_or(o.shape.files);
        if let Some(s) = &self.size {
            o.shape.size = size("size", s)?;
        }
        if let Some(b) = &self.bs {
            bs = Some(size("bs", b)?);
        }
        o.threads = self.threads.unwrap_or(o.threads);
        check(o, bs)
    }
}

/// The rules of a create; fills in the write size.
fn check(mut o: CreateOptions, bs: Option<u64>) -> Result<CreateOptions> {
    if o.threads == 0 || o.threads > 1024 {
        return Err(Error::usage(
            format!("--threads {}", o.threads),
            "expected 1 to 1024",
        ));
    }
    if o.shape.dirs == 0 && o.shape.levels > 0 {
        return Err(Error::usage(
            "--dirs 0 with --levels > 0",
            "makes no directories; give --dirs",
        ));
    }
    if o.shape.total_dirs() + o.shape.total_files() > 100_000_000 {
        return Err(Error::usage(
            format!(
                "{} directories and {} files",
                o.shape.total_dirs(),
                o.shape.total_files()
            ),
            "more than 100 million inodes",
        ));
    }
    o.shape.bs = bs.unwrap_or(o.shape.size.clamp(1, 1 << 20));
    if o.shape.bs == 0 {
        return Err(Error::usage("--bs 0", "expected at least 1 byte"));
    }
    Ok(o)
}

/// The tree keys of a job file section: `FILE:SECTION`, or the first
/// section of `FILE` (with `[global]` before it).
fn from_job(spec: &str) -> Result<Vec<(String, String)>> {
    let (file, section) = match spec.rsplit_once(':') {
        Some((f, s)) if !s.contains('/') => (f, Some(s)),
        _ => (spec, None),
    };
    let sections = ini::parse_file(Path::new(file), &ini::Vars::new())?;
    let mut out = Vec::new();
    let mut found = false;
    for s in &sections {
        if s.name != "global" && section.is_some_and(|want| s.name != want) {
            continue;
        }
        found |= s.name != "global";
        for e in &s.entries {
            let key = e.key.replace('-', "_");
            if !TREE_KEYS.contains(&key.as_str()) {
                return Err(Error::usage(
                    e.origin.to_string(),
                    format!("'{}' is not a tree key ({})", e.key, TREE_KEYS.join(", ")),
                ));
            }
            out.push((key, e.value.clone().unwrap_or_else(|| "1".into())));
        }
        if section.is_none() && found {
            break;
        }
    }
    if !found {
        let what = match section {
            Some(s) => format!("no section [{s}]"),
            None => "no tree section".into(),
        };
        return Err(Error::usage(file, what));
    }
    Ok(out)
}
