//! Data verification and the contents of written buffers: fio's `verify`
//! (and `do_verify`, `verify_*`) and `buffer_pattern`, `zero_buffers`,
//! `refill_buffers`, `scramble_buffers`, `buffer_compress_percentage`,
//! `buffer_compress_chunk`, `dedupe_percentage`, `dedupe_mode`. What they
//! do to the I/O is in `runner::verify` and `runner::buffer`.

use super::pattern::FillPattern;
use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::spec::JobSpec;
use crate::job::units::parse_bool;
use serde::{Deserialize, Serialize};

pub use super::verify_method::{HEADER_LEN, Method};

/// fio's `dedupe_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum DedupeMode {
    /// A deduplicable buffer repeats the last unique one (fio's default).
    #[default]
    Repeat,
    /// A deduplicable buffer repeats one drawn from a working set of
    /// `dedupe_working_set_percentage` of the job's size.
    WorkingSet,
}

/// What written buffers hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Buffers {
    /// `buffer_pattern`: every buffer holds this pattern, repeated.
    pub pattern: Option<FillPattern>,
    /// `zero_buffers`: every buffer holds zeros.
    pub zero: bool,
    /// `refill_buffers`: new random data for every write (`None`: not
    /// given; fio turns it on for `verify` and compression).
    pub refill: Option<bool>,
    /// `scramble_buffers` (fio's default on): each write's buffer gets its
    /// offset and the time in every 512-byte block, so no two writes are
    /// the same (dedupe cannot fold them).
    pub scramble: bool,
    /// `buffer_compress_percentage`: this share of each chunk is zeros.
    pub compress_percentage: u32,
    /// `buffer_compress_chunk`: the chunk (0: the write).
    pub compress_chunk: u64,
    /// `dedupe_percentage`: this share of writes repeat an earlier buffer.
    pub dedupe_percentage: u32,
    /// `dedupe_mode`.
    pub dedupe_mode: DedupeMode,
    /// `dedupe_working_set_percentage` (fio's default 5).
    pub working_set_percentage: u32,
    /// `dedupe_global`: the working set is shared by every job with it.
    pub dedupe_global: bool,
}

impl Default for Buffers {
    fn default() -> Buffers {
        Buffers {
            pattern: None,
            zero: false,
            refill: None,
            scramble: true,
            compress_percentage: 0,
            compress_chunk: 512,
            dedupe_percentage: 0,
            dedupe_mode: DedupeMode::Repeat,
            working_set_percentage: 5,
            dedupe_global: false,
        }
    }
}

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verify {
    /// `verify`.
    pub method: Method,
    /// `do_verify`: read back and check what was written, after each pass.
    pub do_verify: bool,
    /// `verify_pattern`.
    pub pattern: Option<FillPattern>,
    /// `verify_interval`: a header every N bytes (`None`: each block).
    pub interval: Option<u64>,
    /// `verify_offset`: the header is swapped with the bytes this far in.
    pub offset: u64,
    /// `verify_fatal`: stop at the first bad header of a block.
    pub fatal: bool,
    /// `verify_backlog`: check the written blocks every N writes.
    pub backlog: u64,
    /// `verify_backlog_batch`: check this many of them each time (0: N).
    pub backlog_batch: u64,
    /// `verify_only`: do not write; read and check what the job would write.
    pub only: bool,
    /// `verify_dump`: write the block read and the one expected to files.
    pub dump: bool,
    /// `verify_state_save`: a write job saves fio's state file.
    pub state_save: bool,
    /// `verify_state_load`: load it and stop verifying where it says.
    pub state_load: bool,
    /// `verify_async`: fio's verify threads (iolab checks inline).
    pub asynchronous: u32,
    /// fio's `--aux-path` (a flag of the command line, not a job option):
    /// the directory of the state and dump files (`None`: the working one).
    pub aux_dir: Option<std::path::PathBuf>,
    /// The contents of written buffers.
    pub buffers: Buffers,
}

impl Default for Verify {
    fn default() -> Verify {
        Verify {
            method: Method::None,
            do_verify: true,
            pattern: None,
            interval: None,
            offset: 0,
            fatal: false,
            backlog: 0,
            backlog_batch: 0,
            only: false,
            dump: false,
            state_save: true,
            state_load: false,
            asynchronous: 0,
            aux_dir: None,
            buffers: Buffers::default(),
        }
    }
}

impl Verify {
    /// True when the job's blocks carry what is checked.
    pub fn on(&self) -> bool {
        !matches!(self.method, Method::None | Method::Null)
    }
}

/// fio's names of `verify` (the sha3 ones are refused by name).
const VERIFY_WORDS: &[&str] = &[
    "0",
    "meta",
    "md5",
    "crc64",
    "crc32",
    "crc32c",
    "crc32c-intel",
    "crc16",
    "crc7",
    "sha256",
    "sha512",
    "xxhash",
    "sha1",
    "pattern",
    "null",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
];

const UINT: Range = Range {
    min: 0,
    max: u32::MAX as u64,
};

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "verify",
        Kind::Choice(VERIFY_WORDS),
        "write a header and checksum in each block and check them on read",
    ),
    opt(
        "do_verify",
        Kind::Bool,
        "read back and check what a write job wrote, after each pass (default 1)",
    ),
    opt(
        "verify_pattern",
        Kind::Str,
        "data of verified blocks: 0xhex, decimal, \"string\", %o (offset)",
    ),
    opt(
        "verify_interval",
        Kind::Size(Range {
            min: 80,
            max: u32::MAX as u64,
        }),
        "a header every N bytes of a block (default: the block size)",
    ),
    opt(
        "verify_offset",
        Kind::Size(Range {
            min: 40,
            max: u32::MAX as u64,
        }),
        "swap the header with the bytes N bytes into the block",
    ),
    opt(
        "verify_fatal",
        Kind::Bool,
        "stop checking a block at its first bad header",
    ),
    opt(
        "verify_backlog",
        Kind::Size(Range {
            min: 0,
            max: u64::MAX,
        }),
        "check the written blocks every N writes, during the run",
    ),
    opt(
        "verify_backlog_batch",
        Kind::Int(UINT),
        "blocks checked each time verify_backlog is due (default N)",
    ),
    opt(
        "verify_only",
        Kind::Bool,
        "write nothing: read and check the blocks the job would write",
    ),
    opt(
        "verify_dump",
        Kind::Bool,
        "on a failure write FILE.OFFSET.received and .expected",
    ),
    opt(
        "verify_state_save",
        Kind::Bool,
        "save fio's NAME-INDEX-verify.state when a write job ends (default 1)",
    ),
    opt(
        "verify_state_load",
        Kind::Bool,
        "load the saved state: stop verifying where the writes stopped",
    ),
    opt(
        "verify_async",
        Kind::Int(UINT),
        "accepted: iolab checks on the clone's own thread (same verdicts)",
    ),
    opt(
        "experimental_verify",
        Kind::Bool,
        "accepted: fio replays the writes to verify; iolab checks the blocks it wrote",
    ),
    opt(
        "buffer_pattern",
        Kind::Str,
        "written buffers hold this pattern: 0xhex, decimal, \"string\"",
    ),
    opt("zero_buffers", Kind::Bool, "written buffers hold zeros"),
    opt(
        "refill_buffers",
        Kind::Bool,
        "new random data for every write",
    ),
    opt(
        "scramble_buffers",
        Kind::Bool,
        "offset and time in every 512 bytes of each write (default 1)",
    ),
    opt(
        "buffer_compress_percentage",
        Kind::Int(Range { min: 0, max: 100 }),
        "this share of each chunk of a write is zeros",
    ),
    opt(
        "buffer_compress_chunk",
        Kind::Size(UINT),
        "the chunk of buffer_compress_percentage (default 512)",
    ),
    opt(
        "dedupe_percentage",
        Kind::Int(Range { min: 0, max: 100 }),
        "this share of writes repeat the last unique buffer",
    ),
    opt(
        "dedupe_mode",
        Kind::Choice(&["repeat", "working_set"]),
        "repeat: the last unique buffer; working_set: one of a set drawn at random",
    ),
    opt(
        "dedupe_working_set_percentage",
        Kind::Int(Range { min: 0, max: 100 }),
        "working_set: the set's unique buffers, in percent of size (default 5)",
    ),
    opt(
        "dedupe_global",
        Kind::Bool,
        "working_set: one set shared by every job with dedupe_global",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let c = &mut job.verify;
    match def.name {
        "verify" => {
            c.method = Method::NAMES
                .iter()
                .find(|(n, _)| *n == v)
                .map(|(_, m)| *m)
                .ok_or_else(|| {
                    JobProblem::Invalid(format!(
                        "verify={v} is not supported by iolab yet (iolab has {})",
                        Method::NAMES[1..]
                            .iter()
                            .map(|(n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?
        }
        "do_verify" => c.do_verify = parse_bool(v)?,
        "verify_pattern" => c.pattern = Some(FillPattern::parse(def.name, v, true)?),
        "verify_interval" => c.interval = Some(number(def, v)?),
        "verify_offset" => c.offset = number(def, v)?,
        "verify_fatal" => c.fatal = parse_bool(v)?,
        "verify_backlog" => c.backlog = number(def, v)?,
        "verify_backlog_batch" => c.backlog_batch = number(def, v)?,
        "verify_only" => c.only = parse_bool(v)?,
        "verify_dump" => c.dump = parse_bool(v)?,
        "verify_state_save" => c.state_save = parse_bool(v)?,
        "verify_state_load" => c.state_load = parse_bool(v)?,
        "verify_async" => c.asynchronous = number(def, v)?,
        // fio re-derives the written blocks instead of recording them; the
        // blocks checked and the verdicts are the same.
        "experimental_verify" => {
            parse_bool(v)?;
        }
        "buffer_pattern" => {
            // fio: a pattern turns scrambling and zeroing off.
            c.buffers.pattern = Some(FillPattern::parse(def.name, v, false)?);
            c.buffers.scramble = false;
            c.buffers.zero = false;
        }
        "zero_buffers" => c.buffers.zero = parse_bool(v)?,
        "refill_buffers" => c.buffers.refill = Some(parse_bool(v)?),
        "scramble_buffers" => c.buffers.scramble = parse_bool(v)?,
        "buffer_compress_percentage" => c.buffers.compress_percentage = number(def, v)?,
        "buffer_compress_chunk" => c.buffers.compress_chunk = number(def, v)?,
        "dedupe_percentage" => c.buffers.dedupe_percentage = number(def, v)?,
        "dedupe_mode" => {
            c.buffers.dedupe_mode = match v {
                "working_set" => DedupeMode::WorkingSet,
                _ => DedupeMode::Repeat,
            }
        }
        "dedupe_working_set_percentage" => c.buffers.working_set_percentage = number(def, v)?,
        "dedupe_global" => c.buffers.dedupe_global = parse_bool(v)?,
        other => unreachable!("verify group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// The rules between this group's options.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let c = &job.verify;
    let bad = |why: String| Err(JobProblem::Invalid(why));
    let b = &c.buffers;
    if b.dedupe_percentage > 0 && b.dedupe_mode == DedupeMode::WorkingSet {
        // fio's own checks (init.c).
        if job.size.is_none() {
            return bad(
                "dedupe_mode=working_set needs size (fio: the working set is made from it)".into(),
            );
        }
        if job.files.nrfiles > 1 && job.filenames.is_empty() || job.filenames.len() > 1 {
            return bad("dedupe_mode=working_set takes a single file per job, as in fio".into());
        }
        if b.working_set_percentage + b.dedupe_percentage > 100 {
            return bad(format!(
                "dedupe_percentage={} cannot be reached: dedupe_working_set_percentage={} of \
                 the size is unique pages (together at most 100, as in fio)",
                b.dedupe_percentage, b.working_set_percentage
            ));
        }
    }
    if !c.on() {
        return Ok(());
    }
    if c.method == Method::Pattern && c.pattern.is_none() {
        return bad("verify=pattern needs verify_pattern".into());
    }
    // As fio: the interval is at most the smallest block, and a block that
    // is no multiple of it ends in a short tail (checked as its own interval,
    // or carrying no header when shorter than one).
    let interval = c.interval.unwrap_or(job.bs_min).min(job.bs_min);
    let need = c.method.header_size() as u64 + c.offset;
    if need >= interval {
        return bad(format!(
            "verify={} needs blocks larger than {need} bytes (its header{}); bs or \
             verify_interval is {interval}",
            c.method.name(),
            if c.offset > 0 {
                " at verify_offset"
            } else {
                ""
            }
        ));
    }
    if c.method == Method::Sha512 && interval - need < 128 {
        return bad(format!(
            "verify=sha512 needs 128 bytes of data after its header: bs or verify_interval \
             of at least {} (fio's sha512 reads memory it never set below that)",
            need + 128
        ));
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Verification and buffer contents",
    options: OPTIONS,
    apply,
    validate,
};
