//! iolab's fuzz driver, on stable Rust and without a fuzzing library: a
//! corpus of job files and command lines (`tests/fixtures/`, fio's
//! examples, hand-written seeds), mutated by a seeded random source, run
//! through parse, validate and plan in-process ([`target`]). Input `i` of
//! seed `s` is always the same input, so a range of inputs can run in
//! another process and any one can be shown again. Panics are caught and
//! counted, each input is timed.
//!
//! Used by `tests/fuzz.rs` (20,000 inputs) and `examples/fuzz.rs`, which
//! `bench/fuzz.py` runs in child processes (1,000,000 inputs and more; a
//! stack overflow kills the child, and is counted).
#![allow(dead_code)]

pub mod mutate;
pub mod target;

use mutate::Rng;
use std::cell::RefCell;
use std::path::Path;
use std::time::Instant;
pub use target::{Input, Outcome, exercise};

/// The seeds mutations start from.
pub struct Corpus {
    /// Job-file texts.
    pub jobs: Vec<String>,
    /// Command lines.
    pub args: Vec<Vec<String>>,
}

impl Corpus {
    /// Everything under `fixtures` (`tests/fixtures`): its files as job
    /// text (lossy UTF-8, whatever they hold), the job files of `fuzz/jobs`
    /// and `fuzz/fio-examples`, the command lines of `fuzz/cmdlines.txt`.
    pub fn load(fixtures: &Path) -> Corpus {
        let texts = |dir: &Path| -> Vec<String> {
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "md"))
                .collect();
            files.sort();
            let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
            files.iter().map(|p| read(p)).collect()
        };
        let fuzz = fixtures.join("fuzz");
        let mut jobs = texts(fixtures);
        jobs.extend(texts(&fuzz.join("jobs")));
        jobs.extend(texts(&fuzz.join("fio-examples")));
        let lines = std::fs::read_to_string(fuzz.join("cmdlines.txt")).unwrap();
        let args = lines
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect();
        Corpus { jobs, args }
    }

    /// `tests/fixtures` of this source tree.
    pub fn fixtures() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
    }

    /// Input `i` of `seed`: a corpus entry (job file two times in three)
    /// after 1 to 8 mutations (none one time in sixteen).
    pub fn input(&self, seed: u64, i: u64) -> Input {
        let mut r = Rng::new(seed ^ i.wrapping_mul(0xd6e8_feb8_6659_fd93));
        let other = r.pick(&self.jobs).clone();
        let rounds = if r.one_in(16) { 0 } else { 1 + r.below(8) };
        if r.below(3) < 2 {
            let mut text = r.pick(&self.jobs).clone();
            for _ in 0..rounds {
                text = mutate::mutate_text(&text, &other, &mut r);
            }
            Input::JobFile(text)
        } else {
            let mut args = r.pick(&self.args).clone();
            for _ in 0..rounds {
                mutate::mutate_args(&mut args, &other, &mut r);
            }
            Input::Args(args)
        }
    }
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
}

thread_local! {
    /// The message of the last panic on this thread (the hook keeps it
    /// instead of printing it).
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Panics keep quiet and leave their message for [`run`] (for the whole
/// process: call it only where every panic is the driver's to count).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        LAST_PANIC.with(|l| *l.borrow_mut() = Some(info.to_string()));
    }));
}

/// Runs inputs `range` of `seed`; `before(i)` is called before input `i`
/// runs (a child process says which input it is on, for a crash).
pub fn run(
    corpus: &Corpus,
    seed: u64,
    range: std::ops::Range<u64>,
    mut before: impl FnMut(u64),
) -> Stats {
    let mut st = Stats::default();
    for i in range {
        let input = corpus.input(seed, i);
        before(i);
        let t0 = Instant::now();
        let result = std::panic::catch_unwind(|| exercise(&input));
        st.times_us
            .push(t0.elapsed().as_micros().min(u32::MAX as u128) as u32);
        st.inputs += 1;
        match result {
            Ok(Outcome::Refused) => st.refused += 1,
            Ok(Outcome::Planned(n)) => st.jobs_planned += n as u64,
            Err(_) => {
                st.panics += 1;
                if st.panic_examples.len() < 10 {
                    let msg = LAST_PANIC.with(|l| l.borrow_mut().take());
                    st.panic_examples
                        .push((i, msg.unwrap_or_else(|| "(no message)".into())));
                }
            }
        }
    }
    st
}
