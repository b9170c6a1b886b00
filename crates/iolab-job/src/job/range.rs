//! The ranges of numeric job options ([`Range`]) and the limits of a job
//! (files, clones). Each option's number is checked against its range as it
//! is read (`option_def`), so a value is never truncated or wrapped, and the
//! error names the range.

/// The values a numeric option takes, both ends included, in its unit:
/// bytes for sizes, microseconds for times, a count otherwise. fio's own
/// limits where fio has them; `docs/fio-compat.md` shows each (a test keeps
/// the two equal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// Smallest value.
    pub min: u64,
    /// Largest value.
    pub max: u64,
}

/// Any `u64`.
pub(super) const ANY: Range = Range {
    min: 0,
    max: u64::MAX,
};
/// At least 1.
pub(super) const POSITIVE: Range = Range {
    min: 1,
    max: u64::MAX,
};
/// fio's `unsigned int` options (`FIO_OPT_INT`).
pub(super) const UINT: Range = Range {
    min: 0,
    max: u32::MAX as u64,
};
/// An I/O's length is 32 bits.
pub(super) const BLOCK: Range = Range {
    min: 1,
    max: u32::MAX as u64,
};
/// The most entries an io_uring ring has (the kernel's IORING_MAX_ENTRIES).
pub(super) const DEPTH: Range = Range { min: 1, max: 32768 };
/// A depth where 0 means the default (`iodepth_low`).
pub(super) const DEPTH_OR_0: Range = Range { min: 0, max: 32768 };
/// A log interval: at most a day.
pub(super) const LOG_MSEC: Range = Range {
    min: 0,
    max: 86_400_000,
};

/// Most files one job may name: an I/O names its file by a 16-bit index
/// (the plan layer's `IoUnit::file`, above this one).
pub const MAX_FILES: usize = u16::MAX as usize + 1;

/// The most `--max-jobs` may allow, and the most clones one job may have.
pub const MAX_JOBS_LIMIT: u32 = 65536;

/// A time in microseconds in the largest fio unit that divides it.
pub(super) fn time_text(us: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (86_400_000_000, "d"),
        (3_600_000_000, "h"),
        (60_000_000, "m"),
        (1_000_000, "s"),
        (1_000, "ms"),
    ];
    match UNITS.iter().find(|(u, _)| us > 0 && us.is_multiple_of(*u)) {
        Some((u, name)) => format!("{}{name}", us / u),
        None if us == 0 => "0".into(),
        None => format!("{us}us"),
    }
}
