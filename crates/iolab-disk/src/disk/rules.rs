//! The rules of an injected disk, as `iolab disk up/set` take them:
//!
//! - `--delay [OPS=]DELAY[@WHERE]`: `1ms`, `read=10ms`, `1ms~200us` (uniform
//!   jitter), `normal:1ms,200us`, `lognormal:1ms,500us`;
//! - `--fail [OPS=]ERRNO@WHEN[@WHERE]`: `EIO@0.01` (1% of the operations),
//!   `ENOSPC@after=100MiB` (once that many bytes were written);
//! - `--bw [OPS=]RATE` (`100MiB` a second) and `--iops [OPS=]N`.
//!
//! OPS is `read`, `write`, `flush`, `meta` or `all`, joined with `+`
//! (default `all`); WHERE is a byte range `START-END` (block layer) or a
//! path glob (file layer). [`Rules::decide`] applies them to one operation.

use super::bucket::Bucket;
use super::dist::Dist;
use crate::job::units::parse_time_us;
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The kinds of operation a rule names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Reads.
    Read = 0,
    /// Writes.
    Write = 1,
    /// Flushes and fsyncs.
    Flush = 2,
    /// Metadata: open, getattr, mkdir, unlink, rename, readdir, ...
    Meta = 3,
}

const OP_NAMES: [(&str, Op); 4] = [
    ("read", Op::Read),
    ("write", Op::Write),
    ("flush", Op::Flush),
    ("meta", Op::Meta),
];

/// Where a rule applies.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// Everywhere.
    All,
    /// Operations that touch bytes `[start, end)`.
    Bytes(u64, u64),
    /// Operations on paths that match the glob.
    Path(glob::Pattern),
}

/// When a fail rule fails an operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    /// At random, with this probability.
    Share(f64),
    /// Every operation once this many bytes were written.
    After(u64),
}

/// What a rule does.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Delays the operation.
    Delay(Dist),
    /// Fails it with this errno.
    Fail {
        /// The error number (`libc::EIO`, ...).
        errno: i32,
        /// When.
        when: When,
    },
    /// Caps bytes a second.
    Bandwidth(u64),
    /// Caps operations a second.
    Iops(u64),
}

/// One rule: the operations, where, what.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Which kinds of operation (indexed by [`Op`]).
    pub ops: [bool; 4],
    /// Where.
    pub scope: Scope,
    /// What.
    pub effect: Effect,
    /// The text it was parsed from (for `disk status`).
    pub text: String,
}

/// A rule that could not be read: the flag, the text, what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{flag} {text}: {expected}")]
pub struct RuleError {
    /// The flag (`delay`, `fail`, `bw`, `iops`).
    pub flag: &'static str,
    /// Its value.
    pub text: String,
    /// What was expected instead.
    pub expected: String,
}

/// What to do with one operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decision {
    /// Wait this long first, ns.
    pub delay_ns: u64,
    /// Then fail with this errno instead of doing it.
    pub errno: Option<i32>,
}

/// Counters per kind of operation (indexed by [`Op`]).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Operations seen.
    pub ops: [u64; 4],
    /// Delay injected, ns.
    pub delay_ns: [u64; 4],
    /// Operations failed.
    pub errors: [u64; 4],
    /// Sum of the squares of the delays, ns² (their spread: with `ops` and
    /// `delay_ns`, the standard deviation of what was injected).
    #[serde(default)]
    pub delay_sq: [f64; 4],
}

/// A disk's rules and their state (random draws, buckets, bytes written).
#[derive(Debug, Clone)]
pub struct Rules {
    rules: Vec<Rule>,
    buckets: Vec<Option<Bucket>>,
    rng: Xoshiro256PlusPlus,
    written: u64,
    /// What the rules did so far.
    pub counters: Counters,
}

impl Rules {
    /// The rules, drawing from `seed`.
    pub fn new(rules: Vec<Rule>, seed: u64) -> Rules {
        let buckets = rules
            .iter()
            .map(|r| match r.effect {
                Effect::Bandwidth(n) | Effect::Iops(n) => Some(Bucket::new(n)),
                _ => None,
            })
            .collect();
        Rules {
            rules,
            buckets,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            written: 0,
            counters: Counters::default(),
        }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Decides one operation of kind `op` on bytes `[offset, offset+len)`
    /// of `path` (block layer: `None`) at `now_ns`: delays add up, the
    /// first fail rule that fires fails it.
    pub fn decide(
        &mut self,
        op: Op,
        (offset, len): (u64, u64),
        path: Option<&str>,
        now_ns: u64,
    ) -> Decision {
        let i = op as usize;
        self.counters.ops[i] += 1;
        let mut d = Decision::default();
        for (k, r) in self.rules.iter().enumerate() {
            if !r.ops[i] || !r.scope.covers(offset, len, path) {
                continue;
            }
            match r.effect {
                Effect::Delay(ref dist) => d.delay_ns += dist.draw(&mut self.rng),
                Effect::Fail { errno, when } if d.errno.is_none() => {
                    let fires = match when {
                        When::Share(p) => {
                            (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
                        }
                        When::After(n) => op == Op::Write && self.written + len > n,
                    };
                    if fires {
                        d.errno = Some(errno);
                    }
                }
                Effect::Fail { .. } => {}
                Effect::Bandwidth(_) | Effect::Iops(_) => {
                    let tokens = if matches!(r.effect, Effect::Iops(_)) {
                        1
                    } else {
                        len
                    };
                    let b = self.buckets[k].as_mut().expect("a cap has its bucket");
                    d.delay_ns += b.take(tokens, now_ns + d.delay_ns);
                }
            }
        }
        if d.errno.is_some() {
            self.counters.errors[i] += 1;
        } else if op == Op::Write {
            self.written += len;
        }
        self.counters.delay_ns[i] += d.delay_ns;
        self.counters.delay_sq[i] += (d.delay_ns as f64).powi(2);
        d
    }
}

use rand_core::Rng;

impl Scope {
    fn covers(&self, offset: u64, len: u64, path: Option<&str>) -> bool {
        match self {
            Scope::All => true,
            Scope::Bytes(s, e) => offset < *e && offset.saturating_add(len.max(1)) > *s,
            Scope::Path(g) => path.is_some_and(|p| g.matches(p)),
        }
    }
}

/// Parses one rule of `--FLAG` (`delay`, `fail`, `bw`, `iops`).
pub fn parse(flag: &'static str, text: &str) -> Result<Rule, RuleError> {
    let err = |expected: &str| RuleError {
        flag,
        text: text.to_string(),
        expected: expected.to_string(),
    };
    let err: &dyn Fn(&str) -> RuleError = &err;
    let (ops, rest) = match text.split_once('=') {
        Some((o, r)) if o.split('+').all(|w| w == "all" || op_named(w).is_some()) => {
            (parse_ops(o), r)
        }
        // `red=1ms`: a word before `=` that is not a kind of operation.
        Some((o, _)) if o.chars().all(|c| c.is_ascii_alphabetic() || c == '+') => {
            let names: Vec<&str> = OP_NAMES.iter().map(|(n, _)| *n).collect();
            return Err(err(&format!(
                "OPS=... with OPS among {}, all (joined with +), not '{o}'",
                names.join(", ")
            )));
        }
        _ => ([true; 4], text),
    };
    let mut parts = rest.splitn(3, '@');
    let what = parts.next().unwrap_or_default();
    let (effect, scope) = match flag {
        "delay" => (Effect::Delay(parse_dist(what, err)?), parts.next()),
        "fail" => {
            let names: Vec<&str> = ERRNOS.iter().map(|(n, _)| *n).collect();
            let errno = errno_named(&what.to_ascii_uppercase())
                .ok_or_else(|| err(&format!("an errno name: {}", names.join(", "))))?;
            let when = parts
                .next()
                .ok_or_else(|| err("ERRNO@SHARE (EIO@0.01) or ERRNO@after=SIZE"))?;
            let when = match when.strip_prefix("after=") {
                Some(s) => When::After(parse_size(s).map_err(|e| err(&e.to_string()))?),
                None => match when.parse::<f64>() {
                    Ok(p) if (0.0..=1.0).contains(&p) => When::Share(p),
                    _ => return Err(err("a share between 0 and 1 (0.01: 1%) or after=SIZE")),
                },
            };
            (Effect::Fail { errno, when }, parts.next())
        }
        "bw" => {
            let rate = what.strip_suffix("/s").unwrap_or(what);
            let n = parse_size(rate)
                .map_err(|e| err(&format!("bytes a second (100MiB or 100MiB/s): {e}")))?;
            if n == 0 {
                return Err(err("bytes a second, more than 0 (100MiB or 100MiB/s)"));
            }
            (Effect::Bandwidth(n), parts.next())
        }
        _ => {
            let n =
                what.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                    err("a whole number of operations a second, more than 0 (500)")
                })?;
            (Effect::Iops(n), parts.next())
        }
    };
    Ok(Rule {
        ops,
        scope: parse_scope(scope, err)?,
        effect,
        text: text.to_string(),
    })
}

/// The rule flags, in the order `disk status` shows them.
pub const FLAGS: [&str; 4] = ["delay", "fail", "bw", "iops"];

/// Parses (flag, value) pairs (`("delay", "1ms")`) into rules.
pub fn parse_all(list: &[(String, String)]) -> Result<Vec<Rule>, RuleError> {
    list.iter()
        .map(|(f, t)| match FLAGS.iter().find(|k| *k == f) {
            Some(flag) => parse(flag, t),
            None => Err(RuleError {
                flag: "rule",
                text: format!("{f}={t}"),
                expected: format!("one of --{}", FLAGS.join(", --")),
            }),
        })
        .collect()
}

/// Refuses rules that can never fire on `layer`: on the block layer a rule
/// for metadata operations alone (it sees only reads, writes and flushes of
/// blocks: a file system's metadata reaches it as those).
pub fn check_layer(layer: &str, rules: &[Rule]) -> Result<(), RuleError> {
    let only_meta = |r: &&Rule| r.ops == [false, false, false, true];
    match rules.iter().find(only_meta) {
        Some(r) if layer == "block" => Err(RuleError {
            flag: match r.effect {
                Effect::Delay(_) => "delay",
                Effect::Fail { .. } => "fail",
                Effect::Bandwidth(_) => "bw",
                Effect::Iops(_) => "iops",
            },
            text: r.text.clone(),
            expected: "read, write or flush: the block layer sees no metadata operations (a file \
                       system's metadata reaches it as reads and writes of blocks), so a meta rule \
                       would never fire; meta rules need --layer fs"
                .into(),
        }),
        _ => Ok(()),
    }
}

/// The rules as flags (`--delay 1ms --fail EIO@0.01`), or `no rules`.
pub fn rules_line(rules: &[(String, String)]) -> String {
    match rules.is_empty() {
        true => "no rules (full speed)".into(),
        false => rules
            .iter()
            .map(|(f, t)| format!("--{f} {t}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The name of an operation kind (`read`).
pub fn op_name(op: usize) -> &'static str {
    OP_NAMES[op].0
}

fn op_named(w: &str) -> Option<Op> {
    OP_NAMES.iter().find(|(n, _)| *n == w).map(|(_, o)| *o)
}

fn parse_ops(text: &str) -> [bool; 4] {
    let mut ops = [false; 4];
    for w in text.split('+') {
        match op_named(w) {
            Some(o) => ops[o as usize] = true,
            None => ops = [true; 4],
        }
    }
    ops
}

/// `1ms`, `1ms~200us`, `normal:1ms,200us`, `lognormal:1ms,500us`.
fn parse_dist(text: &str, err: &dyn Fn(&str) -> RuleError) -> Result<Dist, RuleError> {
    let d = parse_dist_text(text, err)?;
    d.check().map_err(|why| err(&why.to_string()))?;
    Ok(d)
}

fn parse_dist_text(text: &str, err: &dyn Fn(&str) -> RuleError) -> Result<Dist, RuleError> {
    let ns = |t: &str| {
        parse_time_us(t)
            .map(|us| us * 1000)
            .map_err(|e| err(&format!("a time (1ms, 200us): {e}")))
    };
    let pair = |t: &str| -> Result<(u64, u64), RuleError> {
        let (m, s) = t
            .split_once(',')
            .ok_or_else(|| err("MEAN,SPREAD (1ms,200us)"))?;
        Ok((ns(m)?, ns(s)?))
    };
    if let Some(t) = text.strip_prefix("normal:") {
        let (mean, sd) = pair(t)?;
        return Ok(Dist::Normal { mean, sd });
    }
    if let Some(t) = text.strip_prefix("lognormal:") {
        let (mean, sd) = pair(t)?;
        return Ok(Dist::LogNormal { mean, sd });
    }
    if let Some(t) = text.strip_prefix("quantiles:") {
        let mut q = Vec::new();
        for point in t.split(',') {
            let (p, v) = point
                .split_once('=')
                .ok_or_else(|| err("quantiles:P=TIME,... (50=1ms,99=8ms)"))?;
            let p: f64 = p
                .parse()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| err("a percent 0-100 before each ="))?;
            let v = ns(v)?;
            if q.last().is_some_and(|l: &(f64, u64)| l.0 >= p || l.1 > v) {
                return Err(err(&format!(
                    "percents and times both rising, as in 50=1ms,99=8ms: {point} does not"
                )));
            }
            q.push((p, v));
        }
        return Ok(Dist::Quantiles(q));
    }
    if text.starts_with("hist:") {
        return Err(err(
            "hist:RUN is read by iolab disk up/set (a stored run's id)",
        ));
    }
    match text.split_once('~') {
        Some((m, j)) => Ok(Dist::Jitter {
            mean: ns(m)?,
            jitter: ns(j)?,
        }),
        None => Ok(Dist::Fixed(ns(text)?)),
    }
}

/// `START-END` (sizes) or a path glob; none: everywhere.
fn parse_scope(text: Option<&str>, err: &dyn Fn(&str) -> RuleError) -> Result<Scope, RuleError> {
    let Some(t) = text else {
        return Ok(Scope::All);
    };
    if let Some((s, e)) = t.split_once('-')
        && let (Ok(s), Ok(e)) = (parse_size(s), parse_size(e))
    {
        return match s < e {
            true => Ok(Scope::Bytes(s, e)),
            false => Err(err(&format!("an empty byte range {t}"))),
        };
    }
    glob::Pattern::new(t)
        .map(Scope::Path)
        .map_err(|e| err(&format!("a byte range START-END or a path glob: {e}")))
}

/// A size as people write disk sizes: `4k`, `100M`, `100MiB`, `1GiB` are
/// all powers of 1024 (fio's own parser takes `MiB` as 10^6).
pub fn parse_size(text: &str) -> Result<u64, crate::job::ValueError> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix("ib"))
        .unwrap_or(t);
    crate::job::units::parse_size(t)
}

/// The errnos a fail rule may name.
const ERRNOS: &[(&str, i32)] = &[
    ("EIO", libc::EIO),
    ("ENOSPC", libc::ENOSPC),
    ("EROFS", libc::EROFS),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EDQUOT", libc::EDQUOT),
    ("EACCES", libc::EACCES),
    ("ETIMEDOUT", libc::ETIMEDOUT),
];

fn errno_named(name: &str) -> Option<i32> {
    ERRNOS.iter().find(|(n, _)| *n == name).map(|(_, e)| *e)
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
