//! `--vary KEY=VALUES` parsed into value lists, and the cross
//! product of several of them as the points to run (seed 002's thread
//! sweep, done by a loop instead of by hand).
//!
//! VALUES: a list `4k,16k,64k`; a range `1..10` (step 1), `1..10:3` (step
//! 3) or `1..64:x2` (doubling); range ends may carry size suffixes
//! (`4k..1m:x4`).

use super::error::{AnalysisError as Error, AnalysisResult as Result};
use crate::job::units::parse_size;
use std::collections::BTreeMap;

/// One swept key and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    /// Job option or `${variable}` name.
    pub key: String,
    /// Values as they will be written into the job.
    pub values: Vec<String>,
}

/// Most points a sweep may have (a typo like `1..100000` is caught).
pub const MAX_POINTS: usize = 10_000;

/// Parses `KEY=VALUES`.
pub fn parse_vary(arg: &str) -> Result<Vary> {
    let (key, spec) = arg.split_once('=').ok_or_else(|| {
        Error::usage(
            format!("--vary '{arg}'"),
            "expected KEY=VALUES (e.g. numjobs=1..8 or bs=4k,16k)",
        )
    })?;
    let key = key.trim().to_ascii_lowercase();
    if key.is_empty() {
        return Err(Error::usage(format!("--vary '{arg}'"), "empty key"));
    }
    let wrap = |m: String| Error::usage(format!("--vary {key}"), m);
    let value = |text: &str| parse_size(text).map_err(|e| wrap(e.to_string()));
    let values = if let Some((lo, rest)) = spec.split_once("..") {
        let (hi, step) = match rest.split_once(':') {
            Some((h, s)) => (h, Some(s)),
            None => (rest, None),
        };
        let lo = value(lo.trim())?;
        let hi = value(hi.trim())?;
        if hi < lo {
            return Err(wrap(format!("range end {hi} is below its start {lo}")));
        }
        let mut v = Vec::new();
        match step.map(str::trim) {
            None => (lo..=hi).for_each(|x| v.push(x)),
            Some(s) if s.starts_with(['x', '*']) => {
                let f: u64 = s[1..]
                    .parse()
                    .ok()
                    .filter(|f| *f >= 2)
                    .ok_or_else(|| wrap(format!("factor '{s}': expected x2, x4, ...")))?;
                if lo == 0 {
                    return Err(wrap("a multiplying range cannot start at 0".into()));
                }
                let mut x = lo;
                while x <= hi {
                    v.push(x);
                    x = x.saturating_mul(f);
                }
            }
            Some(s) => {
                let st = value(s)?;
                if st == 0 {
                    return Err(wrap("step 0".into()));
                }
                let mut x = lo;
                while x <= hi {
                    v.push(x);
                    x += st;
                }
            }
        }
        if v.len() > MAX_POINTS {
            return Err(wrap(format!("{} values (at most {MAX_POINTS})", v.len())));
        }
        v.into_iter().map(|x| x.to_string()).collect()
    } else {
        let v: Vec<String> = spec
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if v.is_empty() {
            return Err(wrap("no values".into()));
        }
        v
    };
    Ok(Vary { key, values })
}

/// Every combination, the first key varying slowest.
pub fn points(vary: &[Vary]) -> Result<Vec<BTreeMap<String, String>>> {
    let total: usize = vary.iter().map(|v| v.values.len()).product();
    if total > MAX_POINTS {
        return Err(Error::usage(
            "--vary",
            format!("{total} sweep points (at most {MAX_POINTS})"),
        ));
    }
    let mut out = vec![BTreeMap::new()];
    for v in vary {
        let mut next = Vec::with_capacity(out.len() * v.values.len());
        for p in &out {
            for val in &v.values {
                let mut q = p.clone();
                q.insert(v.key.clone(), val.clone());
                next.push(q);
            }
        }
        out = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(s: &str) -> Vec<String> {
        parse_vary(s).unwrap().values
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(vals("numjobs=1..4"), ["1", "2", "3", "4"]);
        assert_eq!(vals("numjobs=1..10:3"), ["1", "4", "7", "10"]);
        assert_eq!(
            vals("iodepth=1..64:x2"),
            ["1", "2", "4", "8", "16", "32", "64"]
        );
        assert_eq!(vals("bs=4k..16k:x2"), ["4096", "8192", "16384"]);
        assert_eq!(vals("bs=4k, 16k,64k"), ["4k", "16k", "64k"]);
        assert_eq!(parse_vary("NumJobs=2").unwrap().key, "numjobs");
    }

    #[test]
    fn errors_name_the_key() {
        for bad in [
            "numjobs",
            "numjobs=4..1",
            "x=1..8:x1",
            "x=1..8:0",
            "x=",
            "x=0..4:x2",
        ] {
            let e = parse_vary(bad).unwrap_err().to_string();
            assert!(e.starts_with("--vary"), "{bad}: {e}");
        }
        assert!(parse_vary("x=1..20000").is_err());
    }

    #[test]
    fn cross_product_first_key_slowest() {
        let p = points(&[
            parse_vary("numjobs=1..2").unwrap(),
            parse_vary("bs=4k,8k").unwrap(),
        ])
        .unwrap();
        let flat: Vec<String> = p
            .iter()
            .map(|m| format!("{}/{}", m["numjobs"], m["bs"]))
            .collect();
        assert_eq!(flat, ["1/4k", "1/8k", "2/4k", "2/8k"]);
    }
}
