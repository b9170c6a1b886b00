//! The value forms of the access options, read as fio reads them: lists per
//! direction (`read,write[,trim]`), `bssplit`'s `SIZE/PERCENT:...` and
//! `random_distribution`'s models.

use crate::job::error::{JobProblem, ValueError};
use crate::job::spec::Pattern;
use crate::job::units::{parse_int, parse_size};
use serde::{Deserialize, Serialize};

/// Sizes by share (fio's `bssplit` of one direction): (size, percent).
pub type Split = Vec<(u64, u32)>;

/// fio's `random_distribution`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub enum Distribution {
    /// Uniform (fio's `random`, the default).
    #[default]
    Random,
    /// `zipf:THETA[:CENTER]`.
    Zipf {
        /// Theta (not 1).
        theta: f64,
        /// Where the hottest block lies, 0-1 of the region (`None`: random).
        center: Option<f64>,
    },
    /// `pareto:H[:CENTER]`.
    Pareto {
        /// The power, 0 < H < 1.
        h: f64,
        /// As for zipf.
        center: Option<f64>,
    },
    /// `normal:DEV[:CENTER]`: fio's Gaussian, DEV percent of the region.
    Normal {
        /// Deviation in percent, 0-100.
        dev: f64,
        /// As for zipf (`None`: the middle).
        center: Option<f64>,
    },
    /// `zoned:ACCESS/SIZE%:...` per direction: (access %, size %) of each
    /// zone, in order from the start of the region.
    Zoned([Vec<(u32, u32)>; 2]),
    /// `zoned_abs:ACCESS/SIZE:...` per direction: (access %, bytes).
    ZonedAbs([Vec<(u32, u64)>; 2]),
}

/// `zonemode=strided`: `size` bytes in a zone of `range` bytes, then the
/// next zone `skip` bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zones {
    /// Bytes of I/O in a zone before the next (fio's `zonesize`).
    pub size: u64,
    /// Size of a zone (fio's `zonerange`).
    pub range: u64,
    /// Bytes skipped between zones (fio's `zoneskip`).
    pub skip: u64,
}

/// `N%` (a share of the file, 1-100, as fio's `size=50%`), or `None` for a
/// plain value.
pub fn share_of_file(what: &str, v: &str) -> Result<Option<u32>, JobProblem> {
    let Some(n) = v.trim().strip_suffix('%') else {
        return Ok(None);
    };
    match parse_int(n) {
        Ok(p @ 1..=100) => Ok(Some(p as u32)),
        _ => Err(JobProblem::Invalid(format!(
            "{what}: '{v}' is not a percentage of the file (1% to 100%)"
        ))),
    }
}

/// fio's `rw` suffix (`read:-8k`, `randread:8`): for sequential jobs the
/// bytes added to each next offset, for random ones how many I/Os share a
/// random start. Returns (step, every).
pub fn rw_step(pattern: Pattern, step: &str) -> Result<(i64, u64), JobProblem> {
    if step.is_empty() {
        return Ok((0, 1));
    }
    if pattern == Pattern::Random {
        // fio: `atoi` into an unsigned count: `randwrite:-8k` is
        // 2^32 - 8 (a random offset that rarely comes back), 0 never.
        return Ok((0, random_every(step)));
    }
    let (neg, magnitude) = match step.trim().strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, step.trim()),
    };
    let n = parse_size(magnitude)?;
    let out_of_range = || {
        JobProblem::Invalid(format!(
            "rw: the suffix ':{step}' is out of range (a step of at most 2^63-1 bytes)"
        ))
    };
    let n = i64::try_from(n).map_err(|_| out_of_range())?;
    Ok((if neg { -n } else { n }, 1))
}

/// fio's count of a random `rw` suffix: `atoi` (an optional sign, then the
/// leading digits) stored in an unsigned int; 0 (or no digits) is "never".
fn random_every(step: &str) -> u64 {
    let t = step.trim();
    let (neg, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n = digits.parse::<i64>().unwrap_or(i64::MAX) as i32 as i64;
    let n = (if neg { -n } else { n }) as u32;
    if n == 0 { u64::MAX } else { u64::from(n) }
}

fn invalid(msg: String) -> JobProblem {
    JobProblem::Invalid(msg)
}

/// Splits fio's per-direction list `read[,write[,trim]]`; each non-empty
/// part is read by `one`. One part applies to reads and writes; an empty
/// part (`,8k`) leaves that direction as it was. A trim part is read and
/// dropped here (`bs` keeps it: `Access::trim_bs`).
pub fn per_direction<T: Copy>(
    what: &str,
    v: &str,
    one: impl Fn(&str) -> Result<T, ValueError>,
) -> Result<[Option<T>; 2], JobProblem> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(invalid(format!(
            "{what}: '{v}' has {} parts; fio's form is read,write,trim",
            parts.len()
        )));
    }
    let read = |t: &str| -> Result<Option<T>, JobProblem> {
        if t.is_empty() {
            Ok(None)
        } else {
            Ok(Some(one(t)?))
        }
    };
    let got: Vec<Option<T>> = parts.iter().map(|t| read(t)).collect::<Result<_, _>>()?;
    Ok(match got.as_slice() {
        [one] => [*one, *one],
        [r, w, ..] => [*r, *w],
        [] => [None, None],
    })
}

/// The `A/B:...` entries of one direction (fio's split lists), each with
/// its part after `/` when there is one.
fn pairs(v: &str) -> Vec<(&str, Option<&str>)> {
    (v.split(':'))
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once('/') {
            Some((a, b)) => (a.trim(), Some(b.trim()).filter(|b| !b.is_empty())),
            None => (p.trim(), None),
        })
        .collect()
}

/// A percentage `t` (0-100) in list `what`.
fn percent(what: &str, t: &str) -> Result<u32, JobProblem> {
    match t.trim_end_matches('%').parse::<u32>() {
        Ok(n) if n <= 100 => Ok(n),
        _ => Err(invalid(format!(
            "{what}: '{t}' is not a percentage (0-100)"
        ))),
    }
}

/// Fills the missing percentages of a list with equal parts of what the
/// others leave (fio's rule; one entry alone takes 100).
fn fill(what: &str, list: &[Option<u32>]) -> Result<Vec<u32>, JobProblem> {
    let given: u32 = list.iter().flatten().sum();
    let missing = list.iter().filter(|e| e.is_none()).count() as u32;
    if given > 100 {
        return Err(invalid(format!(
            "{what}: the percentages add to {given} (more than 100)"
        )));
    }
    let share = if missing == 1 && list.len() == 1 {
        100
    } else {
        (100 - given).checked_div(missing).unwrap_or(0)
    };
    Ok(list.iter().map(|p| p.unwrap_or(share)).collect())
}

/// fio's `bssplit`: `SIZE/PERCENT:...`, per direction with `,`.
pub fn split(v: &str) -> Result<[Split; 2], JobProblem> {
    let dirs = directions(v)?;
    let one = |t: &str| -> Result<Split, JobProblem> {
        let list = pairs(t);
        if list.len() > 64 {
            return Err(invalid("bssplit: more than 64 sizes (fio's limit)".into()));
        }
        let percs = (list.iter())
            .map(|(_, p)| p.map(|p| percent("bssplit", p)).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        let percs = fill("bssplit", &percs)?;
        (list.iter().zip(percs))
            .map(|((s, _), p)| match parse_size(s)? {
                n @ 1..=0xffff_ffff => Ok((n, p)),
                _ => Err(invalid(format!(
                    "bssplit: block size '{s}' is not in 1-4294967295 bytes"
                ))),
            })
            .collect()
    };
    Ok([one(dirs[0])?, one(dirs[1])?])
}

/// `read[,write[,trim]]` of a list-valued option: one part is for both.
fn directions(v: &str) -> Result<[&str; 2], JobProblem> {
    let parts: Vec<&str> = v.split(',').collect();
    match parts.as_slice() {
        [one] => Ok([one, one]),
        [r, w] | [r, w, _] => Ok([r, w]),
        _ => Err(invalid(format!(
            "'{v}' has {} parts; fio's form is read,write,trim",
            parts.len()
        ))),
    }
}

/// fio's `random_distribution`.
pub fn distribution(v: &str) -> Result<Distribution, JobProblem> {
    let v = v.trim();
    let (model, rest) = v.split_once(':').unwrap_or((v, ""));
    let number = |t: &str, lo: f64, hi: f64, what: &str| -> Result<f64, JobProblem> {
        match t.trim().parse::<f64>() {
            Ok(x) if (lo..=hi).contains(&x) => Ok(x),
            _ => Err(invalid(format!(
                "random_distribution={model}: {what} '{t}' is not a number in {lo}-{hi}"
            ))),
        }
    };
    let with_center = |what: &str, lo: f64, hi: f64| -> Result<(f64, Option<f64>), JobProblem> {
        let mut it = rest.split(':');
        let value = match it.next() {
            Some(t) if !t.trim().is_empty() => number(t, lo, hi, what)?,
            // fio's defaults (FIO_DEF_ZIPF, FIO_DEF_PARETO; 0 for normal).
            _ => match model {
                "zipf" => 1.1,
                "pareto" => 0.2,
                _ => 0.0,
            },
        };
        let center = it
            .next()
            .map(|t| number(t, 0.0, 1.0, "center"))
            .transpose()?;
        Ok((value, center))
    };
    Ok(match model {
        "random" => Distribution::Random,
        "zipf" => {
            let (theta, center) = with_center("theta", 0.0, f64::MAX)?;
            if theta == 1.0 {
                return Err(invalid(
                    "random_distribution=zipf: theta 1.0 is not allowed (fio)".into(),
                ));
            }
            Distribution::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = with_center("power", 0.0, 1.0)?;
            if h == 0.0 || h == 1.0 {
                return Err(invalid(
                    "random_distribution=pareto: the power must be between 0 and 1".into(),
                ));
            }
            Distribution::Pareto { h, center }
        }
        "normal" => {
            let (dev, center) = with_center("deviation", 0.0, 100.0)?;
            Distribution::Normal { dev, center }
        }
        "zoned" => {
            let dirs = directions(rest)?;
            let one = |t: &str| -> Result<Vec<(u32, u32)>, JobProblem> {
                let list = pairs(t);
                let sizes = (list.iter())
                    .map(|(_, s)| s.map(|s| percent("zoned", s)).transpose())
                    .collect::<Result<Vec<_>, _>>()?;
                zoned(list.iter().map(|e| e.0), fill("zoned", &sizes)?)
            };
            Distribution::Zoned([one(dirs[0])?, one(dirs[1])?])
        }
        "zoned_abs" => {
            let dirs = directions(rest)?;
            let one = |t: &str| -> Result<Vec<(u32, u64)>, JobProblem> {
                let list = pairs(t);
                let sizes = (list.iter())
                    .map(|(a, s)| match s {
                        Some(s) => Ok(parse_size(s)?),
                        None => Err(invalid(format!(
                            "zoned_abs: '{a}' needs a size (ACCESS/SIZE)"
                        ))),
                    })
                    .collect::<Result<Vec<_>, JobProblem>>()?;
                zoned(list.iter().map(|e| e.0), sizes)
            };
            Distribution::ZonedAbs([one(dirs[0])?, one(dirs[1])?])
        }
        other => {
            return Err(invalid(format!(
                "random_distribution: '{other}' is not a distribution (fio's: random, zipf, \
                 pareto, normal, zoned, zoned_abs)"
            )));
        }
    })
}

/// The zones of one direction: each zone's access share (the part before
/// `/`) with its size; the shares must add to 100 (fio), at most 256 zones.
fn zoned<'a, T>(
    access: impl Iterator<Item = &'a str>,
    sizes: Vec<T>,
) -> Result<Vec<(u32, T)>, JobProblem> {
    let access = access
        .map(|a| percent("zoned", a))
        .collect::<Result<Vec<u32>, _>>()?;
    if access.len() > 256 {
        return Err(invalid("zoned: more than 256 zones (fio's limit)".into()));
    }
    let sum: u32 = access.iter().sum();
    if !access.is_empty() && sum != 100 {
        return Err(invalid(format!(
            "zoned: the access percentages add to {sum}, not 100"
        )));
    }
    Ok(access.into_iter().zip(sizes).collect())
}
