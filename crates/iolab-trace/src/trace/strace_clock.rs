//! The times of strace lines in every form strace writes them: `-ttt`
//! (seconds since the epoch), `-tt` and `-t` (the time of day, with and
//! without fractions), `-r` (seconds since the line before) and none at
//! all. A [`Clock`] turns a line's [`Stamp`] into nanoseconds on one time
//! line and says what the form cannot tell ([`Clock::notes`]).

use crate::trace::error::LineProblem;

/// The timestamp a line starts with, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    /// No timestamp (strace without `-t`, `-tt`, `-ttt` or `-r`).
    None,
    /// `1700000000.123456` (`-ttt`) or `0.000123` (`-r`), nanoseconds;
    /// the first such line tells which ([`Form`]).
    Decimal(u64),
    /// `12:34:56` (`-t`) or `12:34:56.123456` (`-tt`): nanoseconds since
    /// midnight, and whether it has a fraction.
    TimeOfDay(u64, bool),
}

/// How a whole output writes its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `-ttt`.
    Epoch,
    /// `-tt`.
    TimeOfDay,
    /// `-t`: whole seconds.
    Seconds,
    /// `-r`.
    Relative,
    /// No timestamps.
    None,
}

impl Form {
    /// The strace option that writes this form.
    pub fn option(self) -> &'static str {
        match self {
            Form::Epoch => "-ttt",
            Form::TimeOfDay => "-tt",
            Form::Seconds => "-t",
            Form::Relative => "-r",
            Form::None => "no -t/-tt/-ttt/-r",
        }
    }
}

/// A `-ttt` value below this many seconds is a `-r` difference (it would
/// be a date before 1973).
const EPOCH_FLOOR_S: u64 = 100_000_000;

/// Reads `s` as a timestamp word; `None` when it is not one.
pub fn stamp(s: &str) -> Option<Stamp> {
    if s.contains(':') {
        let (hms, frac) = match s.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (s, None),
        };
        let mut parts = hms.split(':');
        let mut secs = 0u64;
        for limit in [24, 60, 60] {
            let p = parts.next()?;
            if p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let v: u64 = p.parse().ok()?;
            if v >= limit {
                return None;
            }
            secs = secs * 60 + v;
        }
        if parts.next().is_some() {
            return None;
        }
        let frac_ns = match frac {
            Some(f) => fraction(f)?,
            None => 0,
        };
        return Some(Stamp::TimeOfDay(
            secs * 1_000_000_000 + frac_ns,
            frac.is_some(),
        ));
    }
    seconds(s).map(Stamp::Decimal)
}

/// `1700000000.123456` (any number of decimals up to 9) in nanoseconds.
pub fn seconds(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty() || !secs.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    secs.checked_mul(1_000_000_000)?
        .checked_add(fraction(frac)?)
}

/// The digits after a decimal point (1 to 9 of them) in nanoseconds.
fn fraction(f: &str) -> Option<u64> {
    if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(f.parse::<u64>().ok()? * 10u64.pow(9 - f.len() as u32))
}

const DAY_NS: u64 = 86_400 * 1_000_000_000;

/// Places the lines of one output on one time line, in nanoseconds: since
/// the epoch for `-ttt`, since the first line's midnight for `-t`/`-tt`
/// (across midnight too), the sum of the differences for `-r`, and 0
/// for output without times.
#[derive(Debug, Default)]
pub struct Clock {
    form: Option<Form>,
    now: u64,
    day: u64,
    /// The times of different processes' files cannot be placed on one
    /// line (`-ff` with `-r`): every time is 0.
    pub unplaced: bool,
}

impl Clock {
    /// The time of a line stamped `s`; an error when the output changes
    /// form midway.
    pub fn time(&mut self, s: Stamp) -> Result<u64, LineProblem> {
        let form = match s {
            Stamp::None => Form::None,
            Stamp::Decimal(ns) => match self.form {
                Some(f @ (Form::Epoch | Form::Relative)) => f,
                _ if ns < EPOCH_FLOOR_S * 1_000_000_000 => Form::Relative,
                _ => Form::Epoch,
            },
            Stamp::TimeOfDay(_, true) => Form::TimeOfDay,
            Stamp::TimeOfDay(_, false) => Form::Seconds,
        };
        let was = *self.form.get_or_insert(form);
        if was != form {
            return Err(LineProblem(format!(
                "the timestamps change form: earlier lines have {}'s, this one {}'s",
                was.option(),
                form.option()
            )));
        }
        self.now = match s {
            _ if self.unplaced => 0,
            Stamp::None => 0,
            Stamp::Decimal(ns) if form == Form::Epoch => ns,
            Stamp::Decimal(d) => self.now + d,
            Stamp::TimeOfDay(ns, _) => {
                // Back by more than an hour: midnight passed.
                if self.day + ns + 3_600_000_000_000 < self.now {
                    self.day += DAY_NS;
                }
                self.day + ns
            }
        };
        Ok(self.now)
    }

    /// The form of the times read so far (`None` before any line).
    pub fn form(&self) -> Option<Form> {
        self.form
    }

    /// Whether the times are seconds since the epoch.
    pub fn absolute(&self) -> bool {
        self.form == Some(Form::Epoch) && !self.unplaced
    }

    /// What this form of times cannot tell, one sentence each.
    pub fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.form {
            _ if self.unplaced => out.push(
                "strace -ff -r (or without timestamps) gives each process's times only \
                 relative to lines in other files: event times are unknown (0)"
                    .to_string(),
            ),
            Some(Form::None) => out.push(
                "no timestamps (record with -ttt): event times are unknown (0), the \
                 duration shown is the longest call's, the start the file's modification time"
                    .to_string(),
            ),
            Some(Form::Seconds) => out.push(
                "-t gives whole seconds: event times are rounded down to the second \
                 (record with -ttt)"
                    .to_string(),
            ),
            _ => {}
        }
        if matches!(
            self.form,
            Some(Form::Seconds | Form::TimeOfDay | Form::Relative)
        ) {
            out.push(format!(
                "{} output has no date: the start is taken from the file's modification time",
                self.form.map_or("", Form::option)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_reads() {
        assert_eq!(
            stamp("1700000000.5"),
            Some(Stamp::Decimal(1_700_000_000_500_000_000))
        );
        assert_eq!(
            stamp("12:00:01"),
            Some(Stamp::TimeOfDay(43_201_000_000_000, false))
        );
        assert_eq!(
            stamp("00:00:01.000002"),
            Some(Stamp::TimeOfDay(1_000_002_000, true))
        );
        for bad in [
            "24:00:00",
            "1:2:3",
            "12:00",
            "12:00:00.",
            "abc",
            "1.",
            ".5",
            "read(",
        ] {
            assert_eq!(stamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn relative_times_add_up_and_midnight_is_crossed() {
        let mut c = Clock::default();
        let ts: Vec<u64> = ["0.000000", "0.5", "0.25"]
            .iter()
            .map(|s| c.time(stamp(s).unwrap()).unwrap())
            .collect();
        assert_eq!(ts, [0, 500_000_000, 750_000_000]);
        assert_eq!(c.form(), Some(Form::Relative));
        assert!(c.time(stamp("12:00:00").unwrap()).is_err());
        let mut c = Clock::default();
        let a = c.time(stamp("23:59:59.5").unwrap()).unwrap();
        let b = c.time(stamp("00:00:00.5").unwrap()).unwrap();
        assert_eq!(b - a, 1_000_000_000);
        assert!(c.notes().iter().any(|n| n.contains("no date")));
    }
}
