//! The fuzz driver (`tests/fuzz_driver/`) on 20,000 inputs: job files and
//! command lines, mutated, through parse, validate and plan, on threads
//! with a 2 MiB stack. Not one may panic, overflow the stack (that aborts
//! this test) or take more than 100 ms (2 s in an unoptimised build, where
//! only a stall is caught). `bench/fuzz.py` runs a million in release, in
//! child processes.

mod fuzz_driver;
use fuzz_driver::{Corpus, LIMIT, Stats};

/// Inputs in the test; the seed changes what they are, not how many.
const INPUTS: u64 = 20_000;

#[test]
fn twenty_thousand_mutated_inputs_never_panic_overflow_or_stall() {
    let seed = std::env::var("IOLAB_FUZZ_SEED").map_or(14, |s| s.parse().unwrap());
    let corpus = Corpus::load(Corpus::fixtures());
    assert!(
        corpus.jobs.len() > 100 && corpus.args.len() > 10,
        "corpus loaded"
    );
    let half = INPUTS / 2;
    let (a, b) = std::thread::scope(|s| {
        let corpus = &corpus;
        let a = s.spawn(move || fuzz_driver::run(corpus, seed, 0..half, |_| {}));
        let b = fuzz_driver::run(corpus, seed, half..INPUTS, |_| {});
        (a.join().unwrap(), b)
    });
    let mut all = Stats::default();
    all.append(a);
    all.append(b);
    eprintln!(
        "fuzz seed {seed}: {} inputs, {} panics, {} refused, {} jobs planned; per input p99 {} us, max {} us ({} timed again)",
        all.inputs,
        all.panics,
        all.refused,
        all.jobs_planned,
        all.quantile_us(0.99),
        all.max_us(),
        all.retimed,
    );
    assert_eq!(all.inputs, INPUTS);
    // Both sides are exercised: most inputs are refused, many are planned.
    let accepted = all.inputs - all.refused - all.panics;
    assert!(all.refused > INPUTS / 2, "{} refused", all.refused);
    assert!(accepted > INPUTS / 20, "{accepted} accepted");
    assert_eq!(
        all.panics, 0,
        "panics (input number, message; `cargo run --example fuzz -- --seed {seed} --show N` prints one): {:#?}",
        all.panic_examples
    );
    let slow = all.slow(0);
    assert!(
        slow.is_empty(),
        "inputs over {LIMIT:?} (input number, microseconds; --show N prints one): {slow:?}"
    );
}
