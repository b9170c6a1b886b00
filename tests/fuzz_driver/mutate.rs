//! A seeded random source and the mutations the driver makes: on the text
//! of a job file (characters, tokens, numbers at their edges, lines, deep
//! nesting, huge values, includes) and on a command line (arguments).
//! Hand-written so the driver needs no fuzzing library.

use iolab::job::options::all;

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
            let o = *r.pick(&all().collect::<Vec<_>>());
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

/// A digit-run in `t` (start, end in bytes), if any.
fn number_at(t: &str, r: &mut Rng) -> Option<(usize, usize)> {
    let b = t.as_bytes();
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit()))
        .collect();
    let &s = starts.get(r.below(starts.len().max(1)))?;
    let e = (s..b.len())
        .find(|&i| !b[i].is_ascii_digit())
        .unwrap_or(b.len());
    Some((s, e))
}

/// The char boundary at or before byte `i` of `t`.
fn floor(t: &str, mut i: usize) -> usize {
    while !t.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A range of `t` (start, end in bytes, on char boundaries) of 1 to about
/// `max` bytes; `t` not empty.
fn span(t: &str, r: &mut Rng, max: usize) -> (usize, usize) {
    let s = floor(t, r.below(t.len()));
    let e = (s + 1 + r.below(max)).min(t.len());
    let e = (e..=t.len()).find(|&e| t.is_char_boundary(e)).unwrap();
    (s, e)
}

/// Inputs stop growing past this many bytes (the largest mutations make
/// about a megabyte; the job-text cap of 16 MiB is tried with /dev/zero).
const GROWTH_CAP: usize = 2 << 20;

/// What a mutation may bring in from elsewhere.
pub struct Donors<'a> {
    /// Another corpus text, to splice lines from.
    pub other: &'a str,
    /// Files an `include` or a command line may name (include chains
    /// deeper than the limit, loops, fan-outs, devices, job files).
    pub paths: &'a [String],
}

/// An option at an edge of its range (`min-1`, `min`, `max`, `max+1`, or
/// `max` with a unit), `key=value`; a random option for kinds without one.
fn at_edge(r: &mut Rng) -> String {
    let o = *r.pick(&all().collect::<Vec<_>>());
    let value = match o.kind.range() {
        Some(range) => {
            let (min, max) = (i128::from(range.min), i128::from(range.max));
            match r.below(5) {
                0 => (min - 1).to_string(),
                1 => min.to_string(),
                2 => max.to_string(),
                3 => (max + 1).to_string(),
                _ => format!("{}{}", max / 1024 + 1, r.pick(&["k", "kib", "ms", "s", ""])),
            }
        }
        None => word(r).to_string(),
    };
    format!("{}={value}", o.name)
}

/// A value nested deeper than any limit, or just inside one: parentheses,
/// unary signs or a chain of `^`.
fn deep(r: &mut Rng) -> String {
    let n = *r.pick(&[2, 63, 64, 65, 100, 1_000, 30_000]);
    match r.below(4) {
        0 => format!("{}-1", "-".repeat(n)),
        1 => format!("{}2", "2^".repeat(n)),
        _ => format!("{}4k{}", "(".repeat(n), ")".repeat(n)),
    }
}

/// A huge value: one piece repeated up to a megabyte (mostly much less).
fn huge(r: &mut Rng) -> String {
    let piece = *r.pick(&["9", "a", "(", "\\:", ":", "/", "\0", "é", "${", "[", "k"]);
    let len = if r.one_in(16) {
        1 << 20
    } else {
        1 << (4 + r.below(12))
    };
    piece.repeat(len / piece.len())
}

/// An `include` of one of the donors' paths, on a line of its own.
fn include(d: &Donors, r: &mut Rng) -> String {
    match d.paths.is_empty() {
        true => "\ninclude /dev/null\n".into(),
        false => format!("\ninclude {}\n", r.pick(d.paths)),
    }
}

/// One mutation of `text`.
pub fn mutate_text(text: &str, d: &Donors, r: &mut Rng) -> String {
    let mut t = text.to_string();
    let at = floor(&t, r.below(t.len() + 1));
    let grow = t.len() < GROWTH_CAP;
    match r.below(14) {
        0 | 1 => t.insert_str(at, &token(r)),
        2 if !t.is_empty() => {
            let (s, e) = span(&t, r, 16);
            t.replace_range(s..e, "");
        }
        3 if !t.is_empty() => {
            let (s, e) = span(&t, r, 32);
            let copy = t[s..e].to_string();
            t.insert_str(at, &copy);
        }
        4 if !t.is_empty() => {
            let (s, e) = span(&t, r, 1);
            let c = if r.one_in(4) {
                char::from_u32(r.below(0x250) as u32).unwrap_or('?')
            } else {
                (b' ' + r.below(95) as u8) as char
            };
            t.replace_range(s..e, c.encode_utf8(&mut [0; 4]));
        }
        5 => {
            if let Some((s, e)) = number_at(&t, r) {
                t.replace_range(s..e, r.pick::<&str>(NUMBERS));
            }
        }
        6 => {
            let lines: Vec<&str> = d.other.lines().collect();
            if !lines.is_empty() {
                t.insert_str(at, &format!("\n{}\n", r.pick(&lines)));
            }
        }
        7 if grow => {
            // A line repeated: long lists, many sections, many files.
            let lines: Vec<&str> = t.lines().collect();
            if !lines.is_empty() {
                let line = format!("\n{}", r.pick(&lines));
                let times = if r.one_in(8) { 4096 } else { 1 + r.below(64) };
                let times = times.min(GROWTH_CAP / line.len());
                t.insert_str(at, &line.repeat(times));
            }
        }
        8 => t.insert_str(at, &format!("\n{}\n", at_edge(r))),
        9 if grow => {
            let value = if r.one_in(2) { deep(r) } else { huge(r) };
            match number_at(&t, r) {
                Some((s, e)) => t.replace_range(s..e, &value),
                None => t.insert_str(at, &value),
            }
        }
        10 => t.insert_str(at, &include(d, r)),
        _ => {
            let mut lines: Vec<&str> = t.lines().collect();
            if lines.len() > 1 {
                let (a, b) = (r.below(lines.len()), r.below(lines.len()));
                lines.swap(a, b);
                t = lines.join("\n");
            }
        }
    }
    t
}

/// One mutation of the command line `args`.
pub fn mutate_args(args: &mut Vec<String>, d: &Donors, r: &mut Rng) {
    let at = r.below(args.len() + 1);
    match r.below(10) {
        0 | 1 if !args.is_empty() => {
            let i = r.below(args.len());
            args[i] = mutate_text(&args[i], d, r);
        }
        2 => {
            let o = *r.pick(&all().collect::<Vec<_>>());
            let value = match r.below(4) {
                0 => word(r).to_string(),
                1 => token(r),
                2 => deep(r),
                _ => huge(r),
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
        6 => args.insert(at, format!("--{}", at_edge(r))),
        7 if !d.paths.is_empty() => args.insert(at, r.pick(d.paths).clone()),
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
