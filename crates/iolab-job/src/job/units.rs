//! Sizes, times and ranges written the way fio writes them.
//!
//! Sizes follow fio's default `kb_base=1024` ("compatibility mode"): `k`, `kb`
//! (any case) mean 1024, while the IEC spellings `kib`, `mib`, ... mean powers
//! of **1000**, exactly as fio 3.x does (check: `fio --size=4KiB --bs=1k`
//! transfers 3072 bytes), and a bare `Ki`, `Mi`, ... means 1024 again (fio
//! makes `--size=16Mi` a 16,777,216-byte file). A trailing `b`/`B` alone
//! means bytes.
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
        // fio reads a bare `Ki`, `Mi`, ... as powers of 1024 (unlike `KiB`).
        "ki" => 1024.0,
        "mi" => 1024f64.powi(2),
        "gi" => 1024f64.powi(3),
        "ti" => 1024f64.powi(4),
        "pi" => 1024f64.powi(5),
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

/// A plain decimal or `0x` hexadecimal integer read exactly (past 2^53,
/// where the `f64` of expressions is not); `None` for anything else.
fn exact(t: &str) -> Option<Result<u64, ValueError>> {
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (t, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(u64::from_str_radix(digits, radix).map_err(|_| ValueError::TooLarge(t.to_string())))
}

/// Parses a size in bytes: `4096`, `4k`, `1M`, `3500000B`, `4KiB`, `(1g/3)`.
pub fn parse_size(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError::Empty("size"));
    }
    if let Some(v) = exact(t) {
        return v;
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
    parse_time_in(text, 1e6)
}

/// Parses a time whose bare number is in units of `default_us`
/// microseconds (1.0 for fio's times in microseconds, `thinktime=10`);
/// suffixes as [`parse_time_us`]. Returns microseconds.
pub fn parse_time_in(text: &str, default_us: f64) -> Result<u64, ValueError> {
    let t = text.trim();
    let v = expr::eval(t, &|n, s| time_atom(n, s, default_us)).map_err(|e| bad("time", t, e))?;
    to_u64(v, t)
}

/// Parses a plain integer, expressions allowed: `10`, `(100/4)`.
pub fn parse_int(text: &str) -> Result<u64, ValueError> {
    let t = text.trim();
    if let Some(v) = exact(t) {
        return v;
    }
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
/// Nothing else: fio takes only 0 and 1 (`direct=2` is an error there too).
pub fn parse_bool(text: &str) -> Result<bool, ValueError> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ValueError::NotBool(text.to_string())),
    }
}

/// Refuses a name or path (`what`: "job name", "file name", ...) with a
/// control character: a NUL cannot reach the OS (and named threads), and
/// fio's job files cannot hold one, nor a newline.
pub fn plain_text(what: &'static str, text: &str) -> Result<(), ValueError> {
    match text.chars().find(|c| c.is_control()) {
        Some(c) => Err(ValueError::ControlCharacter {
            what,
            text: text.to_string(),
            code: format!("U+{:04X}", c as u32),
        }),
        None => Ok(()),
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
        assert_eq!(parse_size("16Mi").unwrap(), 16 << 20);
        assert_eq!(parse_size("16ki").unwrap(), 16 << 10);
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

    #[test]
    fn plain_integers_are_exact_and_booleans_strict() {
        assert_eq!(parse_int("4294967297").unwrap(), 4_294_967_297);
        assert_eq!(parse_int("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_size("0xffffffffffffffff").unwrap(), u64::MAX);
        assert_eq!(parse_int("9007199254740993").unwrap(), (1 << 53) + 1);
        assert!(matches!(
            parse_int("18446744073709551616"),
            Err(ValueError::TooLarge(_))
        ));
        for yes in ["1", "true", "YES", "on"] {
            assert!(parse_bool(yes).unwrap(), "{yes}");
        }
        for no in ["0", "false", "No", "off"] {
            assert!(!parse_bool(no).unwrap(), "{no}");
        }
        for bad in ["2", "-1", "(1)", "0x1", "1.0"] {
            assert!(parse_bool(bad).is_err(), "{bad}");
        }
        assert!(plain_text("job name", "a b-c.d").is_ok());
        let e = plain_text("job name", "a\0b").unwrap_err().to_string();
        assert!(e.contains("U+0000") && e.contains("a\\u{0}b"), "{e}");
    }
}
