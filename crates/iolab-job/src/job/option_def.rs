//! The types of the option table: one option's row ([`OptDef`], the
//! [`Kind`] of value it takes and how a value is read into its range) and
//! one group of rows ([`OptionGroup`]). The table itself is in `options`
//! (the core rows) and `groups/` (each group's rows); both build on these.

use super::error::{JobProblem, ValueError};
pub use super::range::Range;
use super::range::time_text;
use super::spec::JobSpec;
use super::units;

/// What kind of value an option takes; decides how it is parsed and whether
/// it may be written as a bare flag. Numbers carry the range they must be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text (names, paths).
    Str,
    /// A size in bytes with fio suffixes, expressions allowed.
    Size(Range),
    /// A size range `MIN-MAX`; both ends in the range.
    SizeRange(Range),
    /// A plain integer, expressions allowed.
    Int(Range),
    /// A boolean: 0/1, true/false, yes/no, on/off; may be a bare flag.
    Bool,
    /// A time in microseconds, written in seconds unless suffixed.
    Time(Range),
    /// Free text that may also be a bare flag (fio's log prefixes).
    StrOrFlag,
    /// One word out of a fixed list.
    Choice(&'static [&'static str]),
}

/// One supported option.
#[derive(Debug, Clone, Copy)]
pub struct OptDef {
    /// Canonical name (as fio spells it).
    pub name: &'static str,
    /// Other names fio accepts for it.
    pub aliases: &'static [&'static str],
    /// Value kind.
    pub kind: Kind,
    /// True for iolab's own keys that fio does not have.
    pub iolab_only: bool,
    /// One-line description.
    pub help: &'static str,
}

/// A fio option's row with no aliases.
pub(crate) const fn opt(name: &'static str, kind: Kind, help: &'static str) -> OptDef {
    OptDef {
        name,
        aliases: &[],
        kind,
        iolab_only: false,
        help,
    }
}

/// A fio option's row with other names fio accepts for it.
pub(crate) const fn aliased(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: Kind,
    help: &'static str,
) -> OptDef {
    OptDef {
        aliases,
        ..opt(name, kind, help)
    }
}

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

/// `v` read as the number of option `def`, in its range, in the type of
/// the field it goes to (the ranges fit the fields; checked all the same).
pub(crate) fn num<T: TryFrom<u64>>(def: &OptDef, v: &str) -> Result<T, ValueError> {
    let n = def.kind.number(v)?;
    T::try_from(n).map_err(|_| ValueError::TooLarge(v.to_string()))
}

/// One group of job options.
pub struct OptionGroup {
    /// Name of the group (a heading in `docs/fio-compat.md`).
    pub name: &'static str,
    /// Its rows of the option table.
    pub options: &'static [OptDef],
    /// Applies one of its options (`def` is one of `options`) with value
    /// `v` to the job, as fio reads it.
    pub apply: fn(&mut JobSpec, &OptDef, &str) -> Result<(), JobProblem>,
    /// Checks the rules between its options (and the job's others) once
    /// every option is applied.
    pub validate: fn(&JobSpec) -> Result<(), JobProblem>,
}

/// A group's `validate` for groups without rules between options.
pub fn no_rules(_: &JobSpec) -> Result<(), JobProblem> {
    Ok(())
}
