//! The syntax of strace output: a line's pid column and
//! timestamp, what follows (a call, its `<unfinished ...>` half or its
//! `<... NAME resumed>` half, `+++ exited +++`, `--- SIGNAL ---`), and a
//! call split into name, arguments, result, errno and latency. Arguments
//! are read as strace writes them: strings with C escapes, fds with their
//! `<path>` (`-y`, `-yy`), flags as `O_RDONLY|O_CLOEXEC`.

use super::strace_clock::{self as clock, Stamp};
use super::strace_names;
use crate::trace::error::LineProblem;

/// One line of strace output.
#[derive(Debug, PartialEq)]
pub struct Line<'a> {
    /// The thread, from the pid column (`-f -o FILE`) or `[pid N]`
    /// (`-f` to stderr); `None` when the line has none.
    pub tid: Option<u32>,
    /// The timestamp, in whichever form strace wrote it.
    pub stamp: Stamp,
    /// What the line says.
    pub body: Body<'a>,
}

/// What a line says after its pid and timestamp.
#[derive(Debug, PartialEq)]
pub enum Body<'a> {
    /// A whole call: `read(3</f>, "...", 4096) = 4096 <0.000012>`.
    Call(&'a str),
    /// The first half of a call, without its ` <unfinished ...>`.
    Unfinished(&'a str),
    /// The second half of the call `name`: what follows `resumed>`.
    Resumed {
        /// The call.
        name: &'a str,
        /// The rest of its arguments, its result and latency.
        rest: &'a str,
    },
    /// A call that will never return (`<... read resumed> <unfinished ...>)
    /// = ?` when the thread died in it): the thread's pending call is dropped.
    Abandoned,
    /// `+++ exited with N +++`.
    Exited(i32),
    /// A signal, `+++ killed by ... +++`, a call cut by `<detached ...>`.
    Noise,
}

/// What the body of a line that is not strace's looks like.
const EXPECTED_BODY: &str = "expected a system call (`name(args) = result`), \
    `<... name resumed>`, `+++ exited with N +++` or `--- SIGNAL ---`";

/// Splits a line; `Ok(None)` for lines that carry nothing (blank lines,
/// strace's own messages, `-k`'s stack frames). The error says what was
/// expected.
pub fn line(l: &str) -> Result<Option<Line<'_>>, LineProblem> {
    let l = l.trim();
    if l.is_empty()
        || l.starts_with("strace: ")
        || l.starts_with("[ Process PID=")
        || l.starts_with("> ")
    {
        return Ok(None);
    }
    if l.starts_with("% time") {
        return Err(LineProblem(
            "this is the summary of `strace -c`, which holds no calls: record with \
             strace -f -ttt -T -y -o FILE"
                .into(),
        ));
    }
    let (tid, rest) = if let Some(r) = l.strip_prefix("[pid") {
        let end = r
            .find(']')
            .ok_or("expected `[pid N]` at the start of the line")?;
        let tid = r[..end]
            .trim()
            .parse()
            .map_err(|_| format!("expected a pid in `[pid{}]`", &r[..end]))?;
        (Some(tid), r[end + 1..].trim_start())
    } else {
        let (first, after) = word(l);
        if first.bytes().all(|b| b.is_ascii_digit()) && !after.is_empty() {
            let tid = first
                .parse()
                .map_err(|_| format!("pid {first} out of range"))?;
            (Some(tid), after)
        } else {
            (None, l)
        }
    };
    let (ts, after) = word(rest);
    let (stamp, rest) = match clock::stamp(ts) {
        Some(s) => (s, after),
        None => (Stamp::None, rest),
    };
    // `-n`'s `[  0]` and `-i`'s `[00007f...]` before the call.
    let mut rest = rest;
    while let Some((inside, after)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let inside = inside.trim();
        if inside.is_empty() || !inside.bytes().all(|b| b.is_ascii_hexdigit() || b == b'?') {
            break;
        }
        rest = after.trim_start();
    }
    let body = body(rest).map_err(|e| {
        if stamp == Stamp::None && tid.is_none() {
            let shown: String = l.chars().take(40).collect();
            LineProblem(format!(
                "expected strace output: a pid, a timestamp (-t, -tt, -ttt or -r) or \
                 a system call at the start of the line, found `{shown}` (record with \
                 strace -f -ttt -T -y -o FILE)"
            ))
        } else {
            e
        }
    })?;
    Ok(Some(Line { tid, stamp, body }))
}

/// The first whitespace-separated word of `s` and the rest, trimmed.
fn word(s: &str) -> (&str, &str) {
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim_start()),
        None => (s, ""),
    }
}

fn body(b: &str) -> Result<Body<'_>, LineProblem> {
    if let Some(r) = b.strip_prefix("+++ ") {
        if let Some(code) = r.strip_prefix("exited with ") {
            let code = word(code).0;
            return code.parse().map(Body::Exited).map_err(|_| {
                LineProblem(format!(
                    "expected an exit status in `+++ exited with {code}`"
                ))
            });
        }
        return Ok(Body::Noise);
    }
    if b.starts_with("--- ") {
        return Ok(Body::Noise);
    }
    if let Some(r) = b.strip_prefix("<... ") {
        let i = r
            .find(" resumed>")
            .ok_or("expected `<... NAME resumed>` after `<... `")?;
        let rest = &r[i + " resumed>".len()..];
        if rest.trim_start().starts_with("<unfinished ...>") {
            return Ok(Body::Abandoned);
        }
        return Ok(Body::Resumed {
            name: &r[..i],
            rest,
        });
    }
    let name_ok = b.find('(').is_some_and(|i| {
        i > 0
            && b[..i]
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'?')
    });
    if !name_ok {
        let shown: String = b.chars().take(40).collect();
        return Err(LineProblem(format!("{EXPECTED_BODY}, found `{shown}`")));
    }
    if let Some(head) = b.strip_suffix("<unfinished ...>") {
        return Ok(Body::Unfinished(head));
    }
    if b.ends_with("<detached ...>") {
        return Ok(Body::Noise);
    }
    Ok(Body::Call(b))
}

/// A whole call, split.
#[derive(Debug, PartialEq)]
pub struct Call<'a> {
    /// Its name (`pread64`).
    pub name: &'a str,
    /// Its arguments as strace wrote them, trimmed.
    pub args: Vec<&'a str>,
    /// Its result; `None` for `?` (it did not return).
    pub value: Option<i64>,
    /// The errno name after a failed result (`ENOENT`).
    pub errno: Option<&'a str>,
    /// The `<...>` after the result (the path of a returned fd).
    pub note: Option<&'a str>,
    /// The `-T` time spent in it, nanoseconds.
    pub lat_ns: Option<u64>,
}

/// Splits a call: `name(arg, ...) = result [ERRNO (text)] [<seconds>]`.
pub fn call(text: &str) -> Result<Call<'_>, LineProblem> {
    let open = text.find('(').ok_or(EXPECTED_BODY)?;
    let b = text.as_bytes();
    let (mut i, mut depth, mut start) = (open + 1, 0usize, open + 1);
    let mut args = Vec::new();
    loop {
        let Some(&c) = b.get(i) else {
            return Err(LineProblem(
                "expected `)` closing the arguments, found the end of the line".into(),
            ));
        };
        match c {
            b'"' => i = skip_string(b, i)?,
            b'<' if b[i - 1].is_ascii_alphanumeric() => i = skip_note(b, i)?,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i..]
                    .find("*/")
                    .map(|j| i + j + 2)
                    .ok_or("expected `*/` closing a comment")?;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' if depth == 0 => {
                let last = text[start..i].trim();
                if !last.is_empty() || !args.is_empty() {
                    args.push(last);
                }
                i += 1;
                break;
            }
            b')' | b']' | b'}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("unbalanced `{}` in the arguments", c as char))?;
                i += 1;
            }
            b',' if depth == 0 => {
                args.push(text[start..i].trim());
                start = i + 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    let rest = text[i..].trim_start();
    let rest = rest
        .strip_prefix('=')
        .ok_or_else(|| {
            format!(
                "expected ` = RESULT` after the arguments of {}",
                &text[..open]
            )
        })?
        .trim();
    let (rest, lat_ns) = latency(rest);
    let (value, note, rest) = result(rest).ok_or_else(|| {
        format!("expected a result after `=` (a number, 0x..., or ?), found `{rest}`")
    })?;
    let errno = Some(word(rest).0).filter(|w| {
        w.len() > 1 && w.starts_with('E') && w.bytes().all(|c| c.is_ascii_uppercase() || c == b'_')
    });
    Ok(Call {
        name: &text[..open],
        args,
        value,
        errno,
        note,
        lat_ns,
    })
}

/// Splits a trailing ` <0.000123>` off `s`.
fn latency(s: &str) -> (&str, Option<u64>) {
    if let Some(inner) = s.strip_suffix('>')
        && let Some(i) = inner.rfind('<')
        && let Some(ns) = clock::seconds(&inner[i + 1..])
    {
        return (inner[..i].trim_end(), Some(ns));
    }
    (s, None)
}

/// The result at the start of `s`: its value (`None` for `?`), the
/// `<note>` after it, and what follows.
fn result(s: &str) -> Option<(Option<i64>, Option<&str>, &str)> {
    if let Some(r) = s.strip_prefix('?') {
        return Some((None, None, r.trim_start()));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(s.len());
    let v = number(&s[..end])?;
    let r = &s[end..];
    if r.starts_with('<') {
        let close = skip_note(s.as_bytes(), end).ok()?;
        return Some((
            Some(v),
            Some(&s[end + 1..close - 1]),
            s[close..].trim_start(),
        ));
    }
    Some((Some(v), None, r.trim_start()))
}

/// The index after the string starting with `"` at `i`.
fn skip_string(b: &[u8], i: usize) -> Result<usize, LineProblem> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Ok(j + 1),
            _ => j += 1,
        }
    }
    Err(LineProblem(
        "expected `\"` closing a string, found the end of the line".into(),
    ))
}

/// The index after the `<...>` note starting at `i`. A path's own `<` and
/// `>` are escaped by strace, so angle brackets nest (`-yy`'s
/// `</dev/null<char 1:3>>`); in other notes (`TCP:[a->b]`) square
/// brackets hide what they hold.
fn skip_note(b: &[u8], i: usize) -> Result<usize, LineProblem> {
    let path = b.get(i + 1) == Some(&b'/');
    let (mut angle, mut square, mut j) = (0usize, 0usize, i);
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'[' if !path => square += 1,
            b']' if !path => square = square.saturating_sub(1),
            b'<' if square == 0 => angle += 1,
            b'>' if square == 0 => {
                angle -= 1;
                if angle == 0 {
                    return Ok(j + 1);
                }
            }
            _ => {}
        }
        j += 1;
    }
    Err(LineProblem(
        "expected `>` closing an fd's `<path>`, found the end of the line".into(),
    ))
}

/// The file a `<note>` names: a path (up to `-yy`'s nested `<...>`,
/// unescaped, without ` (deleted)`); `None` for pipes, sockets and the like.
pub fn note_path(note: &str) -> Option<String> {
    if !note.starts_with('/') {
        return None;
    }
    let end = note.find('<').unwrap_or(note.len());
    let p = String::from_utf8_lossy(&unescape(&note.as_bytes()[..end])).into_owned();
    Some(match p.strip_suffix(" (deleted)") {
        Some(p) => p.to_string(),
        None => p,
    })
}

/// A number as strace writes one: decimal, `0x` hex, `0` octal, negative.
pub fn number(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<i64>().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// An fd argument: its number (`AT_FDCWD` too) and the `<note>` after it.
pub fn fd(arg: &str) -> Option<(i64, Option<&str>)> {
    match arg.find('<') {
        Some(i) if arg.ends_with('>') => {
            let n = &arg[..i];
            let v = number(n).or_else(|| strace_names::constant(n))?;
            Some((v, Some(&arg[i + 1..arg.len() - 1])))
        }
        _ => number(arg)
            .or_else(|| strace_names::constant(arg))
            .map(|v| (v, None)),
    }
}

/// A string argument, unescaped; `None` when `arg` is not a string (`NULL`,
/// an address).
pub fn string(arg: &str) -> Option<String> {
    let b = arg.as_bytes();
    if b.first() != Some(&b'"') {
        return None;
    }
    let end = skip_string(b, 0).ok()?;
    Some(String::from_utf8_lossy(&unescape(&b[1..end - 1])).into_owned())
}

/// The strings of an array argument (`execve`'s `["ls", "-l"]`), those
/// strace cut short (`"abc"...`) ending in `...`.
pub fn strings(arg: &str) -> Vec<String> {
    let b = arg.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < b.len() {
        if b[i] == b'"' {
            let Ok(end) = skip_string(b, i) else { break };
            let cut = arg[end..].starts_with("...");
            out.extend(string(&arg[i..end]).map(|s| if cut { s + "..." } else { s }));
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// A flags argument (`O_RDONLY|O_CLOEXEC`, `POSIX_FADV_WILLNEED`, `0x4000`)
/// as a number; names strace knows and iolab does not count as 0.
pub fn flags(arg: &str) -> u64 {
    let arg = arg.split("/*").next().unwrap_or("");
    arg.split('|')
        .filter_map(|p| {
            let p = p.trim();
            number(p).or_else(|| strace_names::constant(p))
        })
        .fold(0u64, |acc, v| acc | v as u64)
}

/// `s` with strace's C escapes (`\n`, `\"`, `\\`, `\123`, `\x7f`) undone.
pub fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        let simple = match c {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'v' => Some(0x0b),
            b'f' => Some(0x0c),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' => Some(0x1b),
            b'x' => None,
            b'0'..=b'7' => None,
            other => Some(other),
        };
        if let Some(v) = simple {
            out.push(v);
        } else if c == b'x' {
            let n = s[i..]
                .iter()
                .take(2)
                .take_while(|d| d.is_ascii_hexdigit())
                .count();
            let h = std::str::from_utf8(&s[i..i + n]).unwrap_or("0");
            out.push(u8::from_str_radix(h, 16).unwrap_or(0));
            i += n;
        } else {
            let mut v = u32::from(c - b'0');
            let mut n = 0;
            while n < 2 && i < s.len() && (b'0'..=b'7').contains(&s[i]) {
                v = v * 8 + u32::from(s[i] - b'0');
                i += 1;
                n += 1;
            }
            out.push(v as u8);
        }
    }
    out
}
