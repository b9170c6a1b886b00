//! The fuzz driver of `tests/fuzz_driver/` as a program, for
//! `bench/fuzz.py`: runs inputs START..START+COUNT of SEED and prints one
//! JSON line (counts, the time histogram, the slowest inputs, panics).
//!
//! usage: fuzz [--seed S] [--start I] [--count N] [--progress FILE]
//!        fuzz [--seed S] --show I      (print input I and run it once)
//!
//! With `--progress FILE` the number of each input is written to FILE
//! before it runs, so whoever started this process knows which input
//! killed it (a stack overflow cannot be caught).

#[path = "../tests/fuzz_driver/mod.rs"]
mod fuzz_driver;

use fuzz_driver::Corpus;
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;

fn main() {
    let mut opts: BTreeMap<String, String> = BTreeMap::new();
    let mut argv = std::env::args().skip(1);
    while let Some(k) = argv.next() {
        let v = argv
            .next()
            .unwrap_or_else(|| usage(&format!("{k} needs a value")));
        opts.insert(k, v);
    }
    let num = |k: &str, default: u64| {
        opts.get(k).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| usage(&format!("{k} {v}")))
        })
    };
    let (seed, start, count) = (num("--seed", 14), num("--start", 0), num("--count", 10_000));
    let corpus = Corpus::load(Corpus::fixtures());
    if let Some(i) = opts.get("--show") {
        let i = i.parse().unwrap_or_else(|_| usage("--show N"));
        let input = corpus.input(seed, i);
        println!("input {i} of seed {seed}:\n{input:#?}");
        let t0 = std::time::Instant::now();
        let outcome = fuzz_driver::exercise(&input);
        println!("{outcome:?} in {:?}", t0.elapsed());
        return;
    }
    let progress = opts.get("--progress").map(|p| {
        std::fs::File::create(p).unwrap_or_else(|e| usage(&format!("--progress {p}: {e}")))
    });
    fuzz_driver::quiet_panics();
    let st = fuzz_driver::run(&corpus, seed, start..start + count, |i| {
        if let Some(f) = &progress {
            // Fixed width, written in place: the file always holds one number.
            f.write_all_at(format!("{i:020}\n").as_bytes(), 0).unwrap();
        }
    });
    let mut hist: BTreeMap<u32, u64> = BTreeMap::new();
    for &t in &st.times_us {
        *hist.entry(t).or_default() += 1;
    }
    let mut slowest: Vec<(u64, u32)> = (start..).zip(st.times_us.iter().copied()).collect();
    slowest.sort_by_key(|&(_, t)| std::cmp::Reverse(t));
    slowest.truncate(5);
    let line = serde_json::json!({
        "seed": seed,
        "start": start,
        "inputs": st.inputs,
        "panics": st.panics,
        "refused": st.refused,
        "jobs_planned": st.jobs_planned,
        "hist_us": hist.into_iter().collect::<Vec<_>>(),
        "slowest": slowest,
        "panic_examples": st.panic_examples,
    });
    println!("{line}");
}

fn usage(why: &str) -> ! {
    eprintln!(
        "fuzz: {why}\nusage: fuzz [--seed S] [--start I] [--count N] [--progress FILE] | [--seed S] --show I"
    );
    std::process::exit(2)
}
