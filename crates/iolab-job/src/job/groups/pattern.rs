//! fio's fill patterns (`verify_pattern`, `buffer_pattern`), read as fio's
//! `parse_and_fill_pattern` reads them: hex numbers (`0xdeadbeef`, bytes in
//! the order written), decimal numbers (`-12`, `66`: little-endian, as
//! few bytes as the value needs), strings in double quotes and `%o` (the
//! I/O's offset, 8 bytes little-endian), one after the other.

use crate::job::error::JobProblem;
use serde::{Deserialize, Serialize};

/// fio's largest pattern (`MAX_PATTERN_SIZE`).
pub const MAX_PATTERN: usize = 512;

/// A pattern: its bytes, and where `%o` puts each I/O's offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FillPattern {
    /// The bytes, `%o` as 8 zero bytes.
    pub bytes: Vec<u8>,
    /// Where in `bytes` each `%o` is.
    pub offsets: Vec<usize>,
}

impl FillPattern {
    /// Reads `text` (option `what`) as fio does; `formats`: `%o` allowed.
    pub fn parse(what: &str, text: &str, formats: bool) -> Result<FillPattern, JobProblem> {
        let bad = |why: &str| {
            JobProblem::Invalid(format!(
                "{what}={text}: {why} (expected hex 0x.., decimal, \"string\"{})",
                if formats { " or %o" } else { "" }
            ))
        };
        let mut out = FillPattern {
            bytes: Vec::new(),
            offsets: Vec::new(),
        };
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(bad("empty pattern"));
        }
        while !rest.is_empty() {
            rest = match rest.as_bytes()[0] {
                b'"' => {
                    let end = rest[1..].find('"').ok_or_else(|| bad("unclosed quote"))?;
                    if end == 0 {
                        return Err(bad("empty string"));
                    }
                    out.bytes.extend_from_slice(&rest.as_bytes()[1..=end]);
                    &rest[end + 2..]
                }
                b'%' if formats && rest.starts_with("%o") => {
                    out.offsets.push(out.bytes.len());
                    out.bytes.extend_from_slice(&[0; 8]);
                    &rest[2..]
                }
                b'\'' => return Err(bad("patterns read from files are not supported by iolab")),
                _ => number(rest, &mut out.bytes).ok_or_else(|| bad("not a number"))?,
            };
            if out.bytes.len() > MAX_PATTERN {
                return Err(bad("longer than 512 bytes"));
            }
        }
        Ok(out)
    }

    /// The pattern with `offset` pasted at each `%o`.
    pub fn with_offset(&self, offset: u64) -> std::borrow::Cow<'_, [u8]> {
        if self.offsets.is_empty() {
            return std::borrow::Cow::Borrowed(&self.bytes);
        }
        let mut b = self.bytes.clone();
        for &at in &self.offsets {
            b[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        }
        std::borrow::Cow::Owned(b)
    }
}

/// One number at the start of `s` into `out`; the rest of `s`.
fn number<'a>(s: &'a str, out: &mut Vec<u8>) -> Option<&'a str> {
    let b = s.as_bytes();
    if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
        let digits = &s[2..];
        let mut n = digits.bytes().take_while(u8::is_ascii_hexdigit).count();
        // "0xff0x14": the 0 of the next "0x" is not a digit of this one.
        if n < digits.len() && (digits.as_bytes()[n] | 0x20) == b'x' {
            n -= 1;
        }
        if n == 0 {
            return None;
        }
        let hex = &digits[..n];
        // An odd count: the first digit alone is the first byte (as fio).
        let mut i = 0;
        while i < n {
            let w = if i == 0 && n % 2 == 1 { 1 } else { 2 };
            out.push(u8::from_str_radix(&hex[i..i + w], 16).ok()?);
            i += w;
        }
        return Some(&digits[n..]);
    }
    // Decimal up to the next "0x" (fio looks ahead for one).
    let stop = s.to_ascii_lowercase().find("0x").unwrap_or(s.len());
    let end = s[..stop]
        .char_indices()
        .take_while(|&(i, c)| c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+')))
        .count();
    let v: i64 = s[..end].parse().ok()?;
    if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
        return None;
    }
    let mut u = v as i32 as u32;
    if u == 0 {
        out.push(0);
    }
    while u != 0 {
        out.push(u as u8);
        u >>= 8;
    }
    Some(&s[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<u8> {
        FillPattern::parse("verify_pattern", s, true).unwrap().bytes
    }

    /// The examples of fio's `parse_and_fill_pattern` comment.
    #[test]
    fn fio_examples() {
        assert_eq!(p("\"abcd\""), b"abcd");
        assert_eq!(p("-1024"), [0x00, 0xfc, 0xff, 0xff]);
        assert_eq!(p("66"), [0x42]);
        assert_eq!(p("0xFF0X1"), [0xff, 0x01]);
        assert_eq!(p("%o"), [0; 8]);
        assert_eq!(p("\"123\"0xFFeeCC"), [0x31, 0x32, 0x33, 0xff, 0xee, 0xcc]);
        let seven = p("-100xab\"1\"%o\"2\"");
        assert_eq!(&seven[..6], [0xf6, 0xff, 0xff, 0xff, 0xab, 0x31]);
        assert_eq!(seven.len(), 15);
        assert_eq!(p("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(p("0xabc"), [0x0a, 0xbc]);
        assert!(FillPattern::parse("buffer_pattern", "%o", false).is_err());
        assert!(FillPattern::parse("buffer_pattern", "\"ab", false).is_err());
    }
}
