//! Sizes, times and ranges written the way fio writes them.
//!
//! Sizes follow fio's default `kb_base=1024` ("compatibility mode"): `k`, `kb`
//! (any case) mean 1024, while the IEC spellings `kib`, `mib`, ... mean powers
//! of **1000**, exactly as fio 3.x does (check: `fio --size=4KiB --bs=1k`
//! transfers 3072 bytes). A trailing `b`/`B` alone means bytes.
//! Any value may be an arithmetic expression in parentheses, with suffixes
//! inside: `(3500000/10)`, `(4k*2)`.

use super::error::ValueError;
use super::expr;

/// Multiplier for a size suffix, or an error naming it.
fn size_multiplier(suffix: &str) -> Result<f64, ValueError> {
    let s = suffix.to_ascii_lowercase();
    let m: f64 = match s.as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1024.0,
        "m" | "mb" => 1024f64.powi(2),
        "g" | "gb" => 1024f64.powi(3),
        "t" | "tb" => 1024f64.powi(4),
        "p" | "pb" => 1024f64.powi(5),
        "kib" => 1e3,
        "mib" => 1e6,
        "gib" => 1e9,
        "tib" => 1e12,
        "pib" => 1e15,
        _ => return Err(ValueError::SizeSuffix(suffix.to_string())),
    };
    Ok(m)
}

fn size_atom(num: &str, suffix: &str) -> Result<f64, ValueError> {
    let n: f64 = num
        .parse()
        .map_err(|_| ValueError::NotANumber(format!("{num}{suffix}")))?;
    Ok(n * size_multiplier(suffix)?)
}

/// Microseconds per time unit; `default_us` applies when there is no suffix.
fn time_atom(num: &str, suffix: &str, default_us: f64) -> Result<f64, ValueError> {
    let n: f64 = num
        .parse()
        .map_err(|_| ValueError::NotANumber(format!("{num}{suffix}")))?;
    let m = match suffix.to_ascii_lowercase().as_str() {
        "" => default_us,
        "us" | "usec" => 1.0,
        "ms" | "msec" => 1e3,
        "s" | "sec" => 1e6,
        "m" | "min" => 60e6,
        "h" => 3600e6,
        "d" => 86400e6,
        _ => return Err(ValueError::TimeSuffix(suffix.to_string())),
    };
    Ok(n * m)
}

fn to_u64(v: f64, text: &str) -> Result<u64, ValueError> {
    if v < 0.0 {
        return Err(ValueError::Negative(text.to_string()));
    }
    if v >= u64::MAX as f64 {
        return Err(ValueError::TooLarge(text.to_string()));
    }
    Ok(v as u64)
}

/// Parses a size in bytes: `4096`, `4k`, `1M`, `3500000B`, `4KiB`, `(1g/3)`.
pub fn parse_size(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::Empty("size"));
    }
    let v = expr::eval(t, &size_atom).map_err(|e| bad("size", t, e))?;
    to_u64(v, t)
}

/// `bad size '12x': ...`.
fn bad(what: &'static str, text: &str, e: ValueError) -> ValueError {
    ValueError::Bad {
        what,
        text: text.to_string(),
        source: Box::new(e),
    }
}

/// Parses a time; a bare number is in seconds (`runtime=10`), suffixes
/// `us`, `ms`, `s`, `m`, `h`, `d` as fio. Returns microseconds.
pub fn parse_time_us(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    let v = expr::eval(t, &|n, s| time_atom(n, s, 1e6)).map_err(|e| bad("time", t, e))?;
    to_u64(v, t)
}

/// Parses a plain integer, expressions allowed: `10`, `(100/4)`.
pub fn parse_int(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    let v = expr::eval(t, &|n, s| {
        if s.is_empty() {
            n.parse::<f64>()
                .map_err(|_| ValueError::NotANumber(n.to_string()))
        } else {
            Err(ValueError::NotPlain(format!("{n}{s}")))
        }
    })
    .map_err(|e| bad("number", t, e))?;
    to_u64(v, t)
}

/// Parses a boolean: empty (bare flag), 1/0, true/false, yes/no, on/off.
pub fn parse_bool(text: &str) -> Result<bool, ValueError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        other => parse_int(other)
            .map(|v| v != 0)
            .map_err(|_| ValueError::NotBool(text.to_string())),
    }
}

/// Splits `50-300`, `4k:64k` or `(1*50)-(300)` into its two ends: the
/// separator is the first `-` or `:` outside parentheses that follows a value.
pub fn split_range(text: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '-' | ':' if depth == 0 && i > 0 => return Some((&text[..i], &text[i + 1..])),
            _ => {}
        }
    }
    None
}

/// Parses a size range `MIN-MAX` (or `MIN:MAX`); a single size means MIN=MAX.
pub fn parse_size_range(text: &str) -> Result<(u64, u64), ValueError> {
    match split_range(text.trim()) {
        Some((a, b)) => Ok((parse_size(a)?, parse_size(b)?)),
        None => {
            let v = parse_size(text)?;
            Ok((v, v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_like_fio() {
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4kb").unwrap(), 4096);
        assert_eq!(parse_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_size("3500000B").unwrap(), 3_500_000);
        assert_eq!(parse_size("4KiB").unwrap(), 4000);
        assert_eq!(parse_size("4kib").unwrap(), 4000);
        assert_eq!(parse_size("(3500000/10)").unwrap(), 350_000);
        assert_eq!(parse_size("(4*1024)").unwrap(), 4096);
        assert_eq!(parse_size("(4k*2)").unwrap(), 8192);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("0x1000").unwrap(), 4096);
        let err = |t: &str| parse_size(t).unwrap_err().to_string();
        assert!(err("4q").contains("unknown size suffix 'q'"));
        assert!(err("(1/0)").contains("division by zero"));
        assert!(err("-4k").contains("negative"));
    }

    #[test]
    fn times_and_ranges() {
        assert_eq!(parse_time_us("10").unwrap(), 10_000_000);
        assert_eq!(parse_time_us("500ms").unwrap(), 500_000);
        assert_eq!(parse_time_us("2m").unwrap(), 120_000_000);
        assert_eq!(parse_size_range("50-300").unwrap(), (50, 300));
        assert_eq!(parse_size_range("4k:64k").unwrap(), (4096, 65536));
        assert_eq!(parse_size_range("(100/2)-(600/2)").unwrap(), (50, 300));
        assert_eq!(parse_size_range("8k").unwrap(), (8192, 8192));
        assert!(parse_bool("").unwrap());
        assert!(!parse_bool("0").unwrap());
        assert!(parse_bool("maybe").is_err());
    }
}
