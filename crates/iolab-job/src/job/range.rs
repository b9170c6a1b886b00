//! The ranges of numeric job options ([`Range`]) and how a value is read
//! into one: each option's number is checked as it is read, so a value is
//! never truncated or wrapped, and the error names the range.

use super::error::ValueError;
use super::options::Kind;
use super::units;

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
/// A log interval: at most a day.
pub(super) const LOG_MSEC: Range = Range {
    min: 0,
    max: 86_400_000,
};

impl Kind {
    /// The range of a numeric kind.
    pub fn range(self) -> Option<Range> {
        match self {
            Kind::Size(r) | Kind::SizeRange(r) | Kind::Int(r) | Kind::Time(r) => Some(r),
            _ => None,
        }
    }

    /// The range as `docs/fio-compat.md` writes it: `1-65536`,
    /// `1-4294967295 bytes`, `0-365d`.
    pub fn range_text(self) -> Option<String> {
        let n = |v: u64| match v {
            u64::MAX => "2^64-1".to_string(),
            v => v.to_string(),
        };
        Some(match self {
            Kind::Int(r) => format!("{}-{}", n(r.min), n(r.max)),
            Kind::Size(r) | Kind::SizeRange(r) => format!("{}-{} bytes", n(r.min), n(r.max)),
            Kind::Time(r) => format!("{}-{}", time_text(r.min), time_text(r.max)),
            _ => return None,
        })
    }

    /// `text` read as this kind's number (bytes, microseconds or a count)
    /// and checked against its range; a value outside it, negative or past
    /// `u64`, is an error that names the range.
    pub fn number(self, text: &str) -> Result<u64, ValueError> {
        let (value, r) = match self {
            Kind::Int(r) => (units::parse_int(text), r),
            Kind::Size(r) | Kind::SizeRange(r) => (units::parse_size(text), r),
            Kind::Time(r) => (units::parse_time_us(text), r),
            _ => return Err(ValueError::NotANumber(text.to_string())),
        };
        match value {
            Ok(v) if (r.min..=r.max).contains(&v) => Ok(v),
            Ok(_) | Err(ValueError::TooLarge(_) | ValueError::Negative(_)) => {
                Err(ValueError::OutOfRange {
                    text: text.trim().to_string(),
                    range: self.range_text().unwrap_or_default(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// A `MIN-MAX` range (or one size for both), each end checked as
    /// [`Kind::number`] does.
    pub fn number_pair(self, text: &str) -> Result<(u64, u64), ValueError> {
        match units::split_range(text.trim()) {
            Some((a, b)) => Ok((self.number(a)?, self.number(b)?)),
            None => self.number(text).map(|v| (v, v)),
        }
    }
}

/// A time in microseconds in the largest fio unit that divides it.
fn time_text(us: u64) -> String {
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
