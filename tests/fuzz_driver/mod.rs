//! iolab's fuzz driver, on stable Rust and without a fuzzing library: a
//! corpus of job files and command lines (`tests/fixtures/`, fio's
//! examples, hand-written seeds, include chains made at load), mutated by a
//! seeded random source, run through parse, validate and plan in-process
//! ([`target`]). Input `i` of seed `s` is always the same input, so a range
//! of inputs can run in another process and any one can be shown again.
//!
//! Each input runs on a thread with a fixed, modest stack ([`STACK`]): a
//! recursion that a limit should have stopped overflows it and aborts the
//! process. Panics are caught and counted, each input is timed against
//! [`LIMIT`].
//!
//! Used by `tests/fuzz.rs` (20,000 inputs) and `examples/fuzz.rs`, which
//! `bench/fuzz.py` runs in child processes (1,000,000 inputs and more; a
//! stack overflow kills the child, and is counted).
#![allow(dead_code)]

pub mod mutate;
pub mod target;

use mutate::{Donors, Rng};
use std::cell::RefCell;
use std::path::Path;
use std::time::{Duration, Instant};
pub use target::{Input, Outcome, exercise};

/// Stack of the thread the inputs run on (a spawned thread's default).
pub const STACK: usize = 2 << 20;

/// Most time one input may take: 100 ms optimised (`cargo test --release`,
/// `bench/fuzz.py`); an unoptimised build (plain `cargo test`, as CI runs
/// it) is 10-30 times slower, so there the bar only catches stalls.
pub const LIMIT: Duration = if cfg!(debug_assertions) {
    Duration::from_secs(2)
} else {
    Duration::from_millis(100)
};

/// Deepest include chain made at load: well past the limit of 16.
const CHAIN: usize = 40;

/// Includes at each level of the fan-out made at load (three levels).
const FAN: usize = 64;

/// The seeds mutations start from.
pub struct Corpus {
    /// Job-file texts.
    pub jobs: Vec<String>,
    /// Command lines.
    pub args: Vec<Vec<String>>,
    /// Files a mutation may include or name as a job file.
    pub paths: Vec<String>,
    /// Where the include chains live while the corpus does.
    _scratch: tempfile::TempDir,
}

impl Corpus {
    /// Everything under `fixtures` (`tests/fixtures`): its files as job
    /// text (lossy UTF-8, whatever they hold), the job files of `fuzz/jobs`
    /// and `fuzz/fio-examples`, the command lines of `fuzz/cmdlines.txt`;
    /// and include files made in a scratch directory ([`Corpus::paths`]).
    pub fn load(fixtures: &Path) -> Corpus {
        let files = |dir: &Path| -> Vec<std::path::PathBuf> {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
                .collect();
            files.sort();
            files
        };
        let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
        let fuzz = fixtures.join("fuzz");
        let job_files = files(&fuzz.join("jobs"));
        let mut jobs: Vec<String> = files(fixtures).iter().map(|p| read(p)).collect();
        jobs.extend(job_files.iter().map(|p| read(p)));
        jobs.extend(files(&fuzz.join("fio-examples")).iter().map(|p| read(p)));
        let lines = std::fs::read_to_string(fuzz.join("cmdlines.txt")).unwrap();
        let args = lines
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect();
        let scratch = tempfile::tempdir().unwrap();
        let mut paths = include_files(scratch.path());
        paths.extend(job_files.iter().map(|p| p.display().to_string()));
        Corpus {
            jobs,
            args,
            paths,
            _scratch: scratch,
        }
    }

    /// `tests/fixtures` of this source tree.
    pub fn fixtures() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
    }

    /// Input `i` of `seed`: a corpus entry (job file two times in three)
    /// after 1 or 2 mutations, 1 to 8 three times in sixteen, none one time
    /// in sixteen (many are refused after the first).
    pub fn input(&self, seed: u64, i: u64) -> Input {
        let mut r = Rng::new(seed ^ i.wrapping_mul(0xd6e8_feb8_6659_fd93));
        let d = Donors {
            other: r.pick::<String>(&self.jobs),
            paths: &self.paths,
        };
        let rounds = match r.below(16) {
            0 => 0,
            1..4 => 1 + r.below(8),
            _ => 1 + r.below(2),
        };
        if r.below(3) < 2 {
            let mut text = r.pick(&self.jobs).clone();
            for _ in 0..rounds {
                text = mutate::mutate_text(&text, &d, &mut r);
            }
            Input::JobFile(text)
        } else {
            let mut args = r.pick(&self.args).clone();
            for _ in 0..rounds {
                mutate::mutate_args(&mut args, &d, &mut r);
            }
            Input::Args(args)
        }
    }
}

/// Writes the include files of the corpus into `dir` and returns their
/// paths with a few others (devices, a directory, a missing file): a chain
/// [`CHAIN`] deep (`chain/K.inc` is `CHAIN - K` levels from its end), a file
/// that includes itself, and a fan-out of [`FAN`] includes on each of three
/// levels ending in an empty file (262,144 reads of nothing).
fn include_files(dir: &Path) -> Vec<String> {
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let mut paths = Vec::new();
    for k in 1..=CHAIN {
        let text = match k {
            CHAIN => "bs=8k\n".to_string(),
            k => format!("include {}.inc\n", k + 1),
        };
        paths.push(write(&format!("chain/{k}.inc"), text));
    }
    paths.push(write("self.inc", "include self.inc\n".into()));
    write("fan/empty.inc", String::new());
    for (name, next) in [("2", "empty"), ("1", "2"), ("0", "1")] {
        let text = format!("include {next}.inc\n").repeat(FAN);
        paths.push(write(&format!("fan/{name}.inc"), text));
    }
    for p in [
        "/dev/null",
        "/dev/zero",
        "/",
        "/nonexistent-iolab-fuzz/x.inc",
    ] {
        paths.push(p.to_string());
    }
    paths
}

/// What a run of inputs found.
#[derive(Debug, Default)]
pub struct Stats {
    /// Inputs run.
    pub inputs: u64,
    /// Inputs that panicked.
    pub panics: u64,
    /// Inputs refused with an error.
    pub refused: u64,
    /// Jobs planned from the accepted inputs.
    pub jobs_planned: u64,
    /// Inputs over [`LIMIT`] that were timed a second time (their time is
    /// the lesser of the two: a thread the machine paused is not slow).
    pub retimed: u64,
    /// Microseconds each input took, in input order.
    pub times_us: Vec<u32>,
    /// The first panics: input number and message.
    pub panic_examples: Vec<(u64, String)>,
}

impl Stats {
    /// The `q` quantile (0..=1) of the times, in microseconds.
    pub fn quantile_us(&self, q: f64) -> u32 {
        let mut t = self.times_us.clone();
        t.sort_unstable();
        let i = ((t.len() as f64 * q).ceil() as usize).clamp(1, t.len().max(1)) - 1;
        t.get(i).copied().unwrap_or(0)
    }

    /// The slowest input, in microseconds.
    pub fn max_us(&self) -> u32 {
        self.times_us.iter().copied().max().unwrap_or(0)
    }

    /// The inputs over [`LIMIT`] (numbered from `start`, the first input
    /// of the run) and their times in microseconds.
    pub fn slow(&self, start: u64) -> Vec<(u64, u32)> {
        let limit = LIMIT.as_micros() as u32;
        (start..)
            .zip(self.times_us.iter().copied())
            .filter(|&(_, t)| t > limit)
            .collect()
    }

    /// Adds `other`, the run of the inputs after this one's.
    pub fn append(&mut self, other: Stats) {
        self.inputs += other.inputs;
        self.panics += other.panics;
        self.refused += other.refused;
        self.jobs_planned += other.jobs_planned;
        self.retimed += other.retimed;
        self.times_us.extend(other.times_us);
        self.panic_examples.extend(other.panic_examples);
    }
}

/// The name of the threads inputs run on starts so.
const THREAD: &str = "fuzz";

thread_local! {
    /// The message of the last panic on this thread (the hook keeps it
    /// instead of printing it).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics on the inputs' threads keep quiet and leave their message for
/// [`run`]; any other thread's panic is printed as before. Once per process.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| match std::thread::current().name() {
            Some(n) if n.starts_with(THREAD) => {
                LAST_PANIC.with(|l| *l.borrow_mut() = Some(info.to_string()));
            }
            _ => before(info),
        }));
    });
}

/// Runs inputs `range` of `seed` on a thread of its own with a [`STACK`]
/// stack; `before(i)` is called before input `i` runs (a child process
/// says which input it is on, for a crash).
pub fn run(
    corpus: &Corpus,
    seed: u64,
    range: std::ops::Range<u64>,
    before: impl FnMut(u64) + Send,
) -> Stats {
    quiet_panics();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name(format!("{THREAD} {}..{}", range.start, range.end))
            .stack_size(STACK)
            .spawn_scoped(s, move || run_here(corpus, seed, range, before))
            .expect("a thread for the inputs")
            .join()
            .expect("the driver does not panic outside an input")
    })
}

/// Runs `input` once: its outcome (or the panic's message) and its time.
fn timed(input: &Input) -> (Result<Outcome, String>, Duration) {
    let t0 = Instant::now();
    let result = std::panic::catch_unwind(|| exercise(input));
    let took = t0.elapsed();
    let result = result.map_err(|_| {
        let msg = LAST_PANIC.with(|l| l.borrow_mut().take());
        msg.unwrap_or_else(|| "(no message)".into())
    });
    (result, took)
}

/// [`run`] on this thread.
fn run_here(
    corpus: &Corpus,
    seed: u64,
    range: std::ops::Range<u64>,
    mut before: impl FnMut(u64),
) -> Stats {
    let mut st = Stats::default();
    for i in range {
        let input = corpus.input(seed, i);
        before(i);
        let (result, mut took) = timed(&input);
        if took > LIMIT && result.is_ok() {
            took = took.min(timed(&input).1);
            st.retimed += 1;
        }
        st.times_us
            .push(took.as_micros().min(u32::MAX as u128) as u32);
        st.inputs += 1;
        match result {
            Ok(Outcome::Refused) => st.refused += 1,
            Ok(Outcome::Planned(n)) => st.jobs_planned += n as u64,
            Err(msg) => {
                st.panics += 1;
                if st.panic_examples.len() < 10 {
                    st.panic_examples.push((i, msg));
                }
            }
        }
    }
    st
}
