//! How fio's log files are written: fio's `log_offset`, `log_prio`,
//! `per_job_logs`, `log_compression`, `log_store_compressed`. Which logs a
//! job writes (`write_bw_log` and friends) are core options.

use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::spec::JobSpec;
use crate::job::units::parse_bool;
use serde::{Deserialize, Serialize};

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LogFormat {
    /// Each line also holds the I/O's offset (fio's `log_offset`).
    pub offset: bool,
    /// The last column is the I/O priority as fio's `0x%04x` (fio's
    /// `log_prio`); off: 1 for the realtime class, else 0.
    pub prio: bool,
    /// File names carry the job's number, `PREFIX_bw.N.log` (fio's
    /// `per_job_logs`, default on); off: every job appends to `PREFIX_bw.log`.
    pub per_job: bool,
    /// fio's `log_compression`: samples are kept in zlib streams of this
    /// many bytes of samples (0: none).
    pub compression: u64,
    /// fio's `log_store_compressed`: the files hold fio's compressed
    /// binary samples (`PREFIX_bw.N.log.fz`, read by `--inflate-log`).
    pub store_compressed: bool,
}

impl Default for LogFormat {
    fn default() -> LogFormat {
        LogFormat {
            offset: false,
            prio: false,
            per_job: true,
            compression: 0,
            store_compressed: false,
        }
    }
}

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "log_offset",
        Kind::Bool,
        "each log line also holds the I/O's offset (after the block size)",
    ),
    opt(
        "log_prio",
        Kind::Bool,
        "the last log column is the I/O priority (0x%04x: class<<13 | level); 0: 1 for the realtime class, else 0",
    ),
    opt(
        "per_job_logs",
        Kind::Bool,
        "log names carry the job number, PREFIX_bw.N.log (default 1); 0: all jobs append to PREFIX_bw.log",
    ),
    opt(
        "log_compression",
        Kind::Size(Range {
            min: 1024,
            max: 512 * 1024 * 1024,
        }),
        "keep log samples in zlib chunks of this size (the files are the same unless stored compressed)",
    ),
    opt(
        "log_store_compressed",
        Kind::Bool,
        "write fio's compressed logs, PREFIX_bw.N.log.fz (read them with --inflate-log)",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let f = &mut job.log_format;
    match def.name {
        "log_offset" => f.offset = parse_bool(v)?,
        "log_prio" => f.prio = parse_bool(v)?,
        "per_job_logs" => f.per_job = parse_bool(v)?,
        "log_compression" => f.compression = num(def, v)?,
        "log_store_compressed" => f.store_compressed = parse_bool(v)?,
        other => unreachable!("logs group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Log files",
    options: OPTIONS,
    apply,
    validate: crate::job::option_def::no_rules,
};
