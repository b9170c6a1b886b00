//! The fuzz driver (`tests/fuzz_driver/`) on 20,000 inputs: job files and
//! command lines, mutated, through parse, validate and plan. Not one may
//! panic. `bench/fuzz.py` runs a million in release, in child processes.

mod fuzz_driver;
use fuzz_driver::{Corpus, Stats};

/// Inputs in the test; the seed changes what they are, not how many.
const INPUTS: u64 = 20_000;

#[test]
fn twenty_thousand_mutated_inputs_never_panic() {
    let seed = std::env::var("IOLAB_FUZZ_SEED").map_or(14, |s| s.parse().unwrap());
    let corpus = Corpus::load(Corpus::fixtures());
    assert!(
        corpus.jobs.len() > 100 && corpus.args.len() > 10,
        "corpus loaded"
    );
    fuzz_driver::quiet_panics();
    let half = INPUTS / 2;
    let parts: Vec<Stats> = std::thread::scope(|s| {
        let corpus = &corpus;
        let a = s.spawn(move || fuzz_driver::run(corpus, seed, 0..half, |_| {}));
        let b = s.spawn(move || fuzz_driver::run(corpus, seed, half..INPUTS, |_| {}));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    let mut all = Stats::default();
    for p in parts {
        all.inputs += p.inputs;
        all.panics += p.panics;
        all.refused += p.refused;
        all.jobs_planned += p.jobs_planned;
        all.times_us.extend(p.times_us);
        all.panic_examples.extend(p.panic_examples);
    }
    eprintln!(
        "fuzz seed {seed}: {} inputs, {} panics, {} refused, {} jobs planned; per input p99 {} us, max {} us (debug build)",
        all.inputs,
        all.panics,
        all.refused,
        all.jobs_planned,
        all.quantile_us(0.99),
        all.max_us()
    );
    assert_eq!(all.inputs, INPUTS);
    // Both sides are exercised: most inputs are refused, many are planned.
    assert!(
        all.refused > INPUTS / 10 && all.jobs_planned > INPUTS / 10,
        "{all:?}"
    );
    assert_eq!(
        all.panics, 0,
        "panics (input number, message; `cargo run --example fuzz -- --seed {seed} --show N` prints one): {:#?}",
        all.panic_examples
    );
}
