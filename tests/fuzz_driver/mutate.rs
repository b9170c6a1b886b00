//! A seeded random source and the mutations the driver makes: on the text
//! of a job file (characters, tokens, lines) and on a command line
//! (arguments). Hand-written so the driver needs no fuzzing library.

use iolab::job::options::OPTIONS;

/// splitmix64: small, fast, and every seed gives its own sequence.
pub struct Rng(u64);

impl Rng {
    /// The sequence of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n ≥ 1).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// An element of `list`.
    pub fn pick<'a, T>(&mut self, list: &'a [T]) -> &'a T {
        &list[self.below(list.len())]
    }
}

/// Numbers at the edges of what options take.
#[rustfmt::skip] // a table, kept compact
const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "7", "64", "100", "101", "512", "4096", "4097", "32768", "32769", "65536",
    "65537", "86400000", "86400001", "4294967295", "4294967296", "4294967297", "9007199254740993",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999999", "1e308", "1.5", "0x1000", "0xffffffffffffffff",
];

/// The syntax around values, and words options take.
#[rustfmt::skip] // a table, kept compact
const SYNTAX: &[&str] = &[
    ".", "0x", "(2^64)", "(2^63)", "(1/0)", "(5%0)", "(-1)", "(2^2^2^2^2^2)", "(1g/3)", "(4k*2)",
    "k", "m", "g", "t", "p", "kib", "MiB", "b", "us", "ms", "s", "h", "d", "(", ")", "((((((((",
    "))))", "=", "==", ":", "::", "\\:", "\\", "-", "[", "]", "[global]\n", "\n[j]\n", "\n",
    "\r\n", ";", " #", " ; c", "$", "${", "}", "${HOME}", "${IOLAB_FUZZ_SIZE}", "${NOPE_NOT_SET}",
    "$pagesize", "$ncpus", "$mb_memory", ",", "\0", "\t", "\u{1b}", "\u{7f}", "\u{85}", "é",
    "\u{202e}", " ", "include ", "include /dev/null\n", "randread", "randrw", "write", "io_uring",
    "libaio", "null", "mmap", "pvsync2", "posixaio", "cold", "warm", "keep", "sequential",
    "noreuse", "true", "false", "on", "off", "yes", "no",
];

/// A number (one time in three) or a piece of syntax.
fn word(r: &mut Rng) -> &'static str {
    if r.one_in(3) {
        r.pick::<&str>(NUMBERS)
    } else {
        r.pick::<&str>(SYNTAX)
    }
}

/// A token, an option key, or a run of nested parentheses.
fn token(r: &mut Rng) -> String {
    match r.below(8) {
        0 => {
            let o = r.pick(OPTIONS);
            format!(
                "\n{}=",
                o.aliases.first().filter(|_| r.one_in(3)).unwrap_or(&o.name)
            )
        }
        1 => {
            let n = r.below(100) + 1;
            format!("{}{}{}", "(".repeat(n), word(r), ")".repeat(n))
        }
        _ => word(r).to_string(),
    }
}

/// A digit-run in `t` (start, end in chars), if any.
fn number_at(t: &[char], r: &mut Rng) -> Option<(usize, usize)> {
    let starts: Vec<usize> = (0..t.len())
        .filter(|&i| t[i].is_ascii_digit() && (i == 0 || !t[i - 1].is_ascii_digit()))
        .collect();
    let &s = starts.get(r.below(starts.len().max(1)))?;
    let e = (s..t.len())
        .find(|&i| !t[i].is_ascii_digit())
        .unwrap_or(t.len());
    Some((s, e))
}

/// A range of `t` (start, end) of 1 to `max` characters; `t` not empty.
fn span(t: &[char], r: &mut Rng, max: usize) -> (usize, usize) {
    let s = r.below(t.len());
    (s, (s + 1 + r.below(max)).min(t.len()))
}

/// One mutation of `text`; `other` is another corpus text to splice from.
pub fn mutate_text(text: &str, other: &str, r: &mut Rng) -> String {
    let mut t: Vec<char> = text.chars().collect();
    let at = r.below(t.len() + 1);
    match r.below(9) {
        0 | 1 => t.splice(at..at, token(r).chars()).for_each(drop),
        2 if !t.is_empty() => {
            let (s, e) = span(&t, r, 16);
            t.drain(s..e);
        }
        3 if !t.is_empty() => {
            let (s, e) = span(&t, r, 32);
            let copy: Vec<char> = t[s..e].to_vec();
            t.splice(at..at, copy).for_each(drop);
        }
        4 if !t.is_empty() => {
            let i = r.below(t.len());
            t[i] = if r.one_in(4) {
                char::from_u32(r.below(0x250) as u32).unwrap_or('?')
            } else {
                (b' ' + r.below(95) as u8) as char
            };
        }
        5 => {
            if let Some((s, e)) = number_at(&t, r) {
                t.splice(s..e, r.pick(NUMBERS).chars()).for_each(drop);
            }
        }
        6 => {
            let lines: Vec<&str> = other.lines().collect();
            if !lines.is_empty() {
                let line = format!("\n{}\n", r.pick(&lines));
                t.splice(at..at, line.chars()).for_each(drop);
            }
        }
        7 => {
            // A line repeated: long lists, many sections, many files.
            let s: String = t.iter().collect();
            let lines: Vec<&str> = s.lines().collect();
            if !lines.is_empty() {
                let line = format!("\n{}", r.pick(&lines)).repeat(1 + r.below(64));
                t.splice(at..at, line.chars()).for_each(drop);
            }
        }
        _ => {
            let s: String = t.iter().collect();
            let mut lines: Vec<&str> = s.lines().collect();
            if lines.len() > 1 {
                let (a, b) = (r.below(lines.len()), r.below(lines.len()));
                lines.swap(a, b);
                t = lines.join("\n").chars().collect();
            }
        }
    }
    t.into_iter().collect()
}

/// One mutation of the command line `args`.
pub fn mutate_args(args: &mut Vec<String>, other: &str, r: &mut Rng) {
    let at = r.below(args.len() + 1);
    match r.below(7) {
        0 | 1 if !args.is_empty() => {
            let i = r.below(args.len());
            args[i] = mutate_text(&args[i], other, r);
        }
        2 => {
            let o = r.pick(OPTIONS);
            let value = if r.one_in(2) {
                word(r).to_string()
            } else {
                token(r)
            };
            args.insert(at, format!("--{}={value}", o.name));
        }
        3 if !args.is_empty() => {
            args.remove(r.below(args.len()));
        }
        4 if !args.is_empty() => {
            let a = args[r.below(args.len())].clone();
            args.insert(at, a);
        }
        5 => args.insert(at, format!("--name={}", word(r))),
        _ => {
            // `--key=value` as two arguments, or a bare `--key`.
            if let Some(i) = (!args.is_empty()).then(|| r.below(args.len()))
                && let Some((k, v)) = args[i].clone().split_once('=')
            {
                args[i] = k.to_string();
                if r.one_in(2) {
                    args.insert(i + 1, v.to_string());
                }
            }
        }
    }
}
