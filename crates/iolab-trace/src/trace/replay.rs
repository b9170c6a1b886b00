//! `iolab replay`: a trace's calls issued again, one OS thread per traced
//! thread, each thread's calls in their order and none before the calls
//! recorded before it in other threads were issued (calls that overlapped
//! still overlap), at the recorded pace, as fast as possible or scaled; on a scratch copy of the files the trace
//! touched (never the originals, see [`Scratch`]). The result sets the
//! replayed latencies beside the recorded ones per call, with the schedule
//! lag (how late each call was issued) and the calls that were skipped.

use super::TraceResult as Result;
use super::calls::Class;
use super::error::{TraceError, TraceResult};
use super::hist::LogHist;
use super::model::{Event, Stats, Trace};
use super::replay_ops::{self, Fds, Outcome, Worker};
pub use super::replay_scratch::{Made, REPLAY_XATTR, Scratch};
use crate::runner::StopFlag;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How fast the calls are issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Each call at its recorded time from the start.
    Original,
    /// As fast as possible: each call once its thread's previous call
    /// returned and the calls recorded before it in the other threads
    /// were issued.
    Max,
    /// The recorded times divided by this factor (2: twice as fast).
    Factor(f64),
}

impl Speed {
    /// Reads `original`, `max` or a factor (`2`, `0.5`, `2x`).
    pub fn parse(s: &str) -> TraceResult<Speed> {
        let bad = || TraceError::Usage {
            what: format!("--speed '{s}'"),
            problem: "expected original, max or a factor above 0 (2: twice as fast)".into(),
        };
        match s {
            "original" => Ok(Speed::Original),
            "max" => Ok(Speed::Max),
            n => match n.trim_end_matches('x').parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(Speed::Factor(f)),
                _ => Err(bad()),
            },
        }
    }

    /// When a call recorded `t_ns` after the first is due, nanoseconds
    /// after the start; `None`: at once.
    fn due(self, t_ns: u64) -> Option<u64> {
        match self {
            Speed::Original => Some(t_ns),
            Speed::Max => None,
            Speed::Factor(f) => Some((t_ns as f64 / f) as u64),
        }
    }
}

impl std::fmt::Display for Speed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Speed::Original => write!(f, "original"),
            Speed::Max => write!(f, "max"),
            Speed::Factor(x) => write!(f, "{x}x"),
        }
    }
}

/// How to replay.
#[derive(Debug)]
pub struct Options<'a> {
    /// The pace.
    pub speed: Speed,
    /// Make the scratch tree under this directory instead of a temporary one.
    pub target: Option<&'a Path>,
    /// Keep the scratch tree afterwards.
    pub keep: bool,
    /// Raised by Ctrl-C: the replay stops, cleans up and returns.
    pub stop: &'a StopFlag,
}

/// A stretch of calls: how many, from the first one's start to the last
/// one's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Span {
    /// Calls.
    pub ops: u64,
    /// Start of the first, nanoseconds (on the trace's or replay's clock).
    pub first_ns: u64,
    /// End of the last, nanoseconds.
    pub last_ns: u64,
}

impl Span {
    fn add(&mut self, start: u64, end: u64) {
        if self.ops == 0 || start < self.first_ns {
            self.first_ns = start;
        }
        self.last_ns = self.last_ns.max(end);
        self.ops += 1;
    }

    fn merge(&mut self, o: &Span) {
        if o.ops == 0 {
            return;
        }
        if self.ops == 0 || o.first_ns < self.first_ns {
            self.first_ns = o.first_ns;
        }
        self.last_ns = self.last_ns.max(o.last_ns);
        self.ops += o.ops;
    }

    /// Seconds from the first call's start to the last one's end.
    pub fn secs(&self) -> f64 {
        self.last_ns.saturating_sub(self.first_ns) as f64 / 1e9
    }

    /// Calls per second over [`Span::secs`] (0 when it is empty).
    pub fn iops(&self) -> f64 {
        let s = self.secs();
        if s > 0.0 { self.ops as f64 / s } else { 0.0 }
    }
}

/// One call's figures, recorded and replayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallFigures {
    /// Every call of this name in the trace.
    pub original: Stats,
    /// The replayed ones.
    pub replayed: Stats,
    /// The replayed ones as the trace recorded them (time span).
    pub original_span: Span,
    /// The replayed ones in the replay (time span).
    pub replayed_span: Span,
}

/// Calls not replayed, per call and reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The call.
    pub call: String,
    /// Why.
    pub why: String,
    /// How many.
    pub count: u64,
}

/// What a replay did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    /// The command the trace recorded.
    pub command: Vec<String>,
    /// The pace.
    pub speed: Speed,
    /// Threads replayed (one per traced thread).
    pub threads: usize,
    /// The scratch tree.
    pub dir: PathBuf,
    /// Whether the copies are still there (`--keep`).
    pub kept: bool,
    /// What the scratch tree was made of.
    pub made: Made,
    /// Figures per call name.
    pub calls: BTreeMap<String, CallFigures>,
    /// Every replayed call as recorded.
    pub original: Span,
    /// Every replayed call in the replay.
    pub replayed: Span,
    /// How late each call was issued against its schedule, nanoseconds
    /// (empty at `--speed max`).
    pub lag: LogHist,
    /// Calls not replayed.
    pub skipped: Vec<Skipped>,
    /// Things worth telling (O_DIRECT refused, entries kept).
    pub notes: Vec<String>,
    /// The signal that stopped the replay early, if any.
    pub stopped: Option<i32>,
}

/// What one thread's calls gave.
#[derive(Default)]
struct Part {
    calls: BTreeMap<u16, (Stats, Span, Span)>,
    skipped: BTreeMap<(u16, &'static str), u64>,
    lag: LogHist,
}

/// Replays the events of `t` (see the module's doc). The scratch tree is
/// removed before this returns unless `opts.keep`; a Ctrl-C stops the
/// calls and returns what was replayed with [`ReplayResult::stopped`] set.
pub fn replay(t: &Trace, opts: &Options) -> Result<ReplayResult> {
    if t.events.is_empty() {
        return Err(TraceError::Usage {
            what: "the trace".into(),
            problem: "it has no events to replay (record it with iolab trace --events, or import strace output)".into(),
        });
    }
    let scratch = Scratch::prepare(t, opts.target, opts.stop)?;
    let mut threads: BTreeMap<u32, Vec<&Event>> = BTreeMap::new();
    for e in &t.events {
        threads.entry(e.tid).or_default().push(e);
    }
    for evs in threads.values_mut() {
        evs.sort_by_key(|e| e.t_ns);
    }
    let first = t.events.iter().map(|e| e.t_ns).min().unwrap_or(0);
    let fds = Fds::default();
    let at: Vec<AtomicU64> = threads
        .values()
        .map(|evs| AtomicU64::new(evs[0].t_ns))
        .collect();
    let start = Instant::now();
    let parts: Vec<Part> = std::thread::scope(|s| {
        let handles: Vec<_> = threads
            .values()
            .enumerate()
            .map(|(me, evs)| {
                let (fds, scratch, at) = (&fds, &scratch, &at[..]);
                let th = Thread {
                    me,
                    at,
                    first,
                    start,
                };
                s.spawn(move || th.run(evs, opts, Worker::new(fds, scratch)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let notes = fds.into_notes();
    let mut r = ReplayResult {
        command: t.meta.command.clone(),
        speed: opts.speed,
        threads: threads.len(),
        dir: scratch.root().to_path_buf(),
        kept: false,
        made: scratch.made.clone(),
        calls: BTreeMap::new(),
        original: Span::default(),
        replayed: Span::default(),
        lag: LogHist::default(),
        skipped: Vec::new(),
        notes,
        stopped: opts.stop.signal(),
    };
    tally(t, parts, &mut r);
    let (kept, note) = scratch.finish(opts.keep)?;
    r.kept = kept;
    r.notes.extend(note);
    Ok(r)
}

/// One replaying thread and what it shares with the others.
struct Thread<'a> {
    /// Its index in `at`.
    me: usize,
    /// Per thread: the recorded time of the next call it will issue
    /// (`u64::MAX` once done).
    at: &'a [AtomicU64],
    /// The recorded time of the trace's first call.
    first: u64,
    /// When the replay began.
    start: Instant,
}

impl Thread<'_> {
    fn run(&self, evs: &[&Event], opts: &Options, mut w: Worker) -> Part {
        let mut part = Part::default();
        if opts.speed != Speed::Max {
            super::replay_sys::fine_timers();
        }
        for (i, e) in evs.iter().enumerate() {
            let next = evs.get(i + 1).map_or(u64::MAX, |n| n.t_ns);
            if opts.stop.is_set() || !self.one(e, next, opts, &mut w, &mut part) {
                break;
            }
            self.at[self.me].store(next, Ordering::Release);
        }
        self.at[self.me].store(u64::MAX, Ordering::Release);
        part
    }

    /// Waits until the other threads have issued every call recorded
    /// before `t` (so a descriptor is not closed before a call recorded
    /// earlier uses it, and a thread begins after the call that made it):
    /// false when stopped meanwhile. Calls recorded while another was in
    /// flight still overlap: a thread moves on once its call is issued.
    fn wait_for_earlier(&self, t: u64, stop: &StopFlag) -> bool {
        let since = Instant::now();
        loop {
            let earlier = self
                .at
                .iter()
                .enumerate()
                .any(|(i, a)| i != self.me && a.load(Ordering::Acquire) < t);
            if !earlier {
                return true;
            }
            if stop.is_set() {
                return false;
            }
            if since.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    /// Issues `e` when it is due; false when stopped while waiting.
    fn one(&self, e: &Event, next: u64, opts: &Options, w: &mut Worker, part: &mut Part) -> bool {
        if let Some(why) = replay_ops::never(e) {
            *part.skipped.entry((e.call, why)).or_default() += 1;
            return true;
        }
        let due = opts
            .speed
            .due(e.t_ns - self.first)
            .map(Duration::from_nanos);
        if let Some(d) = due
            && !wait_until(self.start + d, opts.stop)
        {
            return false;
        }
        if !self.wait_for_earlier(e.t_ns, opts.stop) {
            return false;
        }
        let issued = self.start.elapsed();
        match w.issue(e, &self.at[self.me], next) {
            Outcome::Skip(why) => *part.skipped.entry((e.call, why)).or_default() += 1,
            Outcome::Done { result, lat_ns } => {
                if let Some(d) = due {
                    part.lag.add(issued.saturating_sub(d).as_nanos() as u64, 1);
                }
                let at = issued.as_nanos() as u64;
                let c = part.calls.entry(e.call).or_default();
                c.0.add(lat_ns, result, moves(e));
                c.1.add(e.t_ns, e.t_ns + e.lat_ns);
                c.2.add(at, at + lat_ns);
            }
        }
        true
    }
}

/// Waits until `when`, waking to look at `stop`; false when stopped.
/// The last [`SPIN`] are spent spinning, not asleep: a sleeping thread
/// wakes tens of microseconds late.
fn wait_until(when: Instant, stop: &StopFlag) -> bool {
    loop {
        if stop.is_set() {
            return false;
        }
        let now = Instant::now();
        if now >= when {
            return true;
        }
        let left = when - now;
        if left > SPIN {
            std::thread::sleep((left - SPIN).min(Duration::from_millis(50)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// How long before a call is due its thread stops sleeping.
const SPIN: Duration = Duration::from_micros(50);

/// Adds the threads' parts and the trace's own figures into `r`.
fn tally(t: &Trace, parts: Vec<Part>, r: &mut ReplayResult) {
    let mut skipped: BTreeMap<(u16, &'static str), u64> = BTreeMap::new();
    for p in parts {
        for (call, (st, orig, rep)) in p.calls {
            let c = r.calls.entry(name(call)).or_default();
            c.replayed.merge(&st);
            c.original_span.merge(&orig);
            c.replayed_span.merge(&rep);
            r.original.merge(&orig);
            r.replayed.merge(&rep);
        }
        for (k, n) in p.skipped {
            *skipped.entry(k).or_default() += n;
        }
        r.lag.merge(&p.lag);
    }
    for e in &t.events {
        let moved = moves(e);
        r.calls
            .entry(e.name().to_string())
            .or_default()
            .original
            .add(e.lat_ns, e.result, moved);
    }
    r.skipped = skipped
        .into_iter()
        .map(|((call, why), count)| Skipped {
            call: name(call),
            why: why.to_string(),
            count,
        })
        .collect();
}

/// True when the call's result is bytes moved.
fn moves(e: &Event) -> bool {
    matches!(e.class(), Class::Read | Class::Write) && e.name() != "fallocate"
}

fn name(call: u16) -> String {
    super::calls::by_id(call)
        .map_or("?", |c| c.name)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_parse_and_schedule() {
        assert_eq!(Speed::parse("original").unwrap(), Speed::Original);
        assert_eq!(Speed::parse("max").unwrap(), Speed::Max);
        assert_eq!(Speed::parse("2x").unwrap(), Speed::Factor(2.0));
        for bad in ["0", "-1", "fast", "inf", "NaN"] {
            assert!(Speed::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Speed::Factor(2.0).due(100), Some(50));
        assert_eq!(Speed::Original.due(100), Some(100));
        assert_eq!(Speed::Max.due(100), None);
    }

    #[test]
    fn spans_count_from_the_first_start_to_the_last_end() {
        let mut a = Span::default();
        a.add(100, 150);
        a.add(50, 60);
        let mut b = Span::default();
        b.add(1_000_000_050, 1_000_000_100);
        a.merge(&b);
        assert_eq!((a.ops, a.first_ns, a.last_ns), (3, 50, 1_000_000_100));
        assert!((a.iops() - 3.0 / 1.00000005).abs() < 1e-6);
        assert_eq!(Span::default().iops(), 0.0);
    }
}
