//! The table of job options iolab understands: fio's names (with their
//! aliases) and iolab's own keys. `docs/fio-compat.md` lists the same table
//! and a test keeps the two equal.

use super::error::{JobProblem, printable};
use super::option_def::opt;
pub use super::option_def::{Kind, OptDef, Range};
use super::range::{ANY, BLOCK, DEPTH, DEPTH_OR_0, LOG_MSEC, POSITIVE, UINT};

/// The core job options (those [`JobSpec::apply`](super::spec::JobSpec)
/// sets itself), in the order of `docs/fio-compat.md`. The option groups
/// of [`super::groups::GROUPS`] add theirs: [`all`] is every option.
pub const CORE: &[OptDef] = &[
    opt(
        "name",
        Kind::Str,
        "job name; on the command line it starts a new job",
    ),
    opt(
        "description",
        Kind::Str,
        "text describing the job, not parsed; in the JSON as `desc`, as fio",
    ),
    opt(
        "filename",
        Kind::Str,
        "file(s) to use, several separated by ':'",
    ),
    opt(
        "directory",
        Kind::Str,
        "directory for files without an absolute path",
    ),
    opt(
        "size",
        Kind::Size(POSITIVE),
        "bytes of I/O per loop (the region of the file(s)); offset+size fits in 64 bits",
    ),
    OptDef {
        aliases: &["fileoffset"],
        ..opt(
            "offset",
            Kind::Size(ANY),
            "start of the region in each file",
        )
    },
    OptDef {
        aliases: &["readwrite"],
        ..opt(
            "rw",
            Kind::Choice(&[
                "read",
                "write",
                "randread",
                "randwrite",
                "rw",
                "readwrite",
                "randrw",
                "trim",
                "randtrim",
                "trimwrite",
                "randtrimwrite",
            ]),
            "access pattern",
        )
    },
    opt(
        "rwmixread",
        Kind::Int(Range { min: 0, max: 100 }),
        "percentage of reads in rw/randrw (default 50)",
    ),
    OptDef {
        aliases: &["blocksize"],
        ..opt(
            "bs",
            Kind::Size(BLOCK),
            "block size of each I/O (default 4k)",
        )
    },
    OptDef {
        aliases: &["bsrange"],
        ..opt(
            "blocksize_range",
            Kind::SizeRange(BLOCK),
            "I/O sizes drawn uniformly from MIN-MAX",
        )
    },
    opt(
        "loops",
        Kind::Int(Range {
            min: 1,
            max: u32::MAX as u64,
        }),
        "repeat the region this many times (default 1)",
    ),
    opt(
        "number_ios",
        Kind::Int(ANY),
        "stop after this many I/Os (0: no limit)",
    ),
    OptDef {
        aliases: &["timeout"],
        ..opt(
            "runtime",
            Kind::Time(Range {
                min: 0,
                max: 365 * 86_400_000_000,
            }),
            "stop after this long (seconds unless suffixed; 0: no limit)",
        )
    },
    opt(
        "time_based",
        Kind::Bool,
        "repeat the region until runtime has passed",
    ),
    opt(
        "numjobs",
        Kind::Int(Range {
            min: 1,
            max: super::range::MAX_JOBS_LIMIT as u64,
        }),
        "clones of this job, one thread each; all jobs' together at most 4096 unless `iolab run --max-jobs N`",
    ),
    opt(
        "thread",
        Kind::Bool,
        "accepted; iolab always runs clones as threads",
    ),
    opt(
        "group_reporting",
        Kind::Bool,
        "report the clones of a job as one",
    ),
    OptDef {
        aliases: &["wait_for_previous"],
        ..opt(
            "stonewall",
            Kind::Bool,
            "start this job only once every job before it has ended",
        )
    },
    opt(
        "ioengine",
        Kind::Str,
        "how I/O is issued: an engine of `iolab list engines` (or one of its fio aliases)",
    ),
    opt(
        "iodepth",
        Kind::Int(DEPTH),
        "I/Os in flight for io_uring and libaio (default 1)",
    ),
    OptDef {
        aliases: &["iodepth_batch"],
        ..opt(
            "iodepth_batch_submit",
            Kind::Int(DEPTH),
            "submit once this many I/Os are queued (default 1)",
        )
    },
    OptDef {
        aliases: &["iodepth_batch_complete"],
        ..opt(
            "iodepth_batch_complete_min",
            Kind::Int(DEPTH),
            "wait for at least this many completions at a time (default 1)",
        )
    },
    opt(
        "iodepth_batch_complete_max",
        Kind::Int(DEPTH),
        "take at most this many completions at a time (default: iodepth_batch_complete_min)",
    ),
    opt(
        "iodepth_low",
        Kind::Int(DEPTH_OR_0),
        "once the queue is full, reap until this many I/Os are left in flight (default: iodepth)",
    ),
    opt(
        "fixedbufs",
        Kind::Bool,
        "engine option: register the I/O buffers",
    ),
    opt(
        "registerfiles",
        Kind::Bool,
        "engine option: register the files",
    ),
    opt(
        "sqthread_poll",
        Kind::Bool,
        "engine option: a kernel thread polls the submission ring",
    ),
    opt(
        "hipri",
        Kind::Bool,
        "engine option: polled completions (RWF_HIPRI; io_uring needs direct=1)",
    ),
    opt(
        "nowait",
        Kind::Bool,
        "engine option: RWF_NOWAIT, an I/O that would block fails with EAGAIN",
    ),
    opt(
        "write_bw_log",
        Kind::StrOrFlag,
        "write PREFIX_bw.N.log (KiB/s per interval or per I/O)",
    ),
    opt(
        "write_lat_log",
        Kind::StrOrFlag,
        "write PREFIX_lat/_clat/_slat.N.log (ns)",
    ),
    opt("write_iops_log", Kind::StrOrFlag, "write PREFIX_iops.N.log"),
    opt(
        "write_iolog",
        Kind::Str,
        "write fio's iolog v3 of every I/O to FILE (appended, as fio)",
    ),
    opt(
        "write_hist_log",
        Kind::StrOrFlag,
        "write PREFIX_clat_hist.N.log (fio's latency bins per interval)",
    ),
    opt(
        "log_avg_msec",
        Kind::Int(LOG_MSEC),
        "average logs and time series over this many ms, at most a day (0: logs per I/O; series 1000)",
    ),
    opt(
        "log_hist_msec",
        Kind::Int(LOG_MSEC),
        "interval of the histogram log in ms, at most a day (0: none)",
    ),
    opt("direct", Kind::Bool, "open with O_DIRECT"),
    opt(
        "invalidate",
        Kind::Bool,
        "drop the file's cached pages before the job (default 1)",
    ),
    opt(
        "fadvise_hint",
        Kind::Choice(&["0", "1", "sequential", "random", "noreuse"]),
        "posix_fadvise hint given once at open (1: by pattern)",
    ),
    opt(
        "randrepeat",
        Kind::Bool,
        "same random sequence every run (default 1)",
    ),
    opt("randseed", Kind::Int(ANY), "seed of the random sequence"),
    opt(
        "fsync",
        Kind::Int(UINT),
        "fsync after every N writes (0: never)",
    ),
    opt(
        "unlink",
        Kind::Bool,
        "remove the job's files afterwards (only files iolab laid out)",
    ),
    OptDef {
        iolab_only: true,
        ..opt(
            "prefetch",
            Kind::Int(Range { min: 0, max: 65536 }),
            "posix_fadvise(WILLNEED) each read N I/Os ahead (0: none)",
        )
    },
    OptDef {
        iolab_only: true,
        ..opt(
            "cache",
            Kind::Choice(&["cold", "warm", "keep"]),
            "page cache state before each repetition",
        )
    },
    OptDef {
        iolab_only: true,
        ..opt(
            "repeat",
            Kind::Int(Range {
                min: 1,
                max: 1_000_000,
            }),
            "run the whole job N times, report each and combined",
        )
    },
];

/// Every job option iolab accepts: the core table, then each group's.
pub fn all() -> impl Iterator<Item = &'static OptDef> {
    CORE.iter()
        .chain(super::groups::GROUPS.iter().flat_map(|g| g.options.iter()))
}

/// Finds an option by its name or an alias (case-insensitive, like fio).
pub fn lookup(key: &str) -> Option<&'static OptDef> {
    let k = key.to_ascii_lowercase();
    all().find(|o| o.name == k || o.aliases.contains(&k.as_str()))
}

/// The known option closest to `key`, for "did you mean" messages: only
/// one similar enough ([`crate::registry::closest`]).
pub fn closest(key: &str) -> Option<&'static str> {
    let k = key.to_ascii_lowercase();
    crate::registry::closest(
        &k,
        all().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied())),
    )
}

/// fio options iolab recognises but does not implement (yet): an error that
/// says so, instead of "unknown" or, worse, silently ignoring them.
pub const FIO_UNSUPPORTED: &[&str] = &[
    "clocksource",
    "kb_base",
    "lockmem",
    "ioscheduler",
    "opendir",
    "lockfile",
    "exec_prerun",
    "exec_postrun",
    "replay_redirect",
    "read_iolog",
    "uid",
    "gid",
    "ignore_error",
    "loop",
    "numa_cpu_nodes",
    "size_percent",
    "serialize_overlap",
    "verify_policy",
];

/// True when `key` names a fio option or alias (iolab's or not).
pub fn is_fio_option(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    super::fio_names::FIO_OPTIONS
        .binary_search(&k.as_str())
        .is_ok()
        || FIO_UNSUPPORTED.contains(&k.as_str())
}

/// The option a command-line `key` abbreviates, as fio's getopt_long
/// matches a prefix: the one option (of fio's and iolab's names) whose
/// name or alias starts with it; `None` when none or several do, or when
/// that one is a fio option iolab does not have.
pub fn by_prefix(key: &str) -> Option<&'static OptDef> {
    let k = key.to_ascii_lowercase();
    if k.is_empty() {
        return None;
    }
    let ours = all().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()));
    let mut found: Vec<&str> = (super::fio_names::FIO_OPTIONS.iter().copied())
        .chain(ours)
        .filter(|n| n.starts_with(k.as_str()))
        // An alias and its option are one option.
        .map(|n| lookup(n).map_or(n, |d| d.name))
        .collect();
    found.sort_unstable();
    found.dedup();
    match found[..] {
        [one] => lookup(one),
        _ => None,
    }
}

/// Error text for an option iolab does not know.
/// The problem of an option `key` iolab does not know, with its message.
pub fn unknown(key: &str) -> JobProblem {
    JobProblem::UnknownOption(unknown_message(&printable(key)))
}

/// What to say of an option `key` iolab does not know: the closest one, or
/// that fio has it and iolab does not support it yet.
pub fn unknown_message(key: &str) -> String {
    let k = key.to_ascii_lowercase();
    if is_fio_option(&k) {
        return format!(
            "fio option '{key}' is not supported by iolab yet (the supported ones are in docs/fio-compat.md)"
        );
    }
    match closest(key) {
        Some(n) => format!("unknown option '{key}' (did you mean '{n}'?)"),
        None => format!("unknown option '{key}' (see docs/fio-compat.md for the supported ones)"),
    }
}
