//! The fuzz driver of `tests/fuzz_driver/` as a program, for
//! `bench/fuzz.py`: runs inputs START..START+N of SEED in-process (on a
//! thread with a 2 MiB stack) and prints one JSON line on stdout (counts,
//! the time histogram, the slowest inputs, panics) and a summary on stderr.
//!
//! usage: fuzz [--seed S] [--start I] [--inputs N] [--progress FILE]
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
        if !["--seed", "--start", "--inputs", "--progress", "--show"].contains(&k.as_str()) {
            usage(&format!("unknown argument {k}"));
        }
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
    let (seed, start, count) = (
        num("--seed", 14),
        num("--start", 0),
        num("--inputs", 10_000),
    );
    let corpus = Corpus::load(Corpus::fixtures());
    if opts.contains_key("--show") {
        let i = num("--show", 0);
        let input = corpus.input(seed, i);
        println!("input {i} of seed {seed}:\n{input:#?}");
        let st = fuzz_driver::run(&corpus, seed, i..i + 1, |_| {});
        println!("{st:?}");
        return;
    }
    let progress = opts.get("--progress").map(|p| {
        std::fs::File::create(p).unwrap_or_else(|e| usage(&format!("--progress {p}: {e}")))
    });
    let t0 = std::time::Instant::now();
    let st = fuzz_driver::run(&corpus, seed, start..start + count, |i| {
        if let Some(f) = &progress {
            // Fixed width, written in place: the file always holds one number.
            f.write_all_at(format!("{i:020}\n").as_bytes(), 0).unwrap();
        }
    });
    let took = t0.elapsed();
    let mut hist: BTreeMap<u32, u64> = BTreeMap::new();
    for &t in &st.times_us {
        *hist.entry(t).or_default() += 1;
    }
    let mut slowest: Vec<(u64, u32)> = (start..).zip(st.times_us.iter().copied()).collect();
    slowest.sort_by_key(|&(_, t)| std::cmp::Reverse(t));
    slowest.truncate(10);
    let line = serde_json::json!({
        "seed": seed,
        "start": start,
        "inputs": st.inputs,
        "panics": st.panics,
        "refused": st.refused,
        "jobs_planned": st.jobs_planned,
        "retimed": st.retimed,
        "seconds": took.as_secs_f64(),
        "hist_us": hist.into_iter().collect::<Vec<_>>(),
        "slowest": slowest,
        "panic_examples": st.panic_examples,
    });
    println!("{line}");
    eprintln!(
        "fuzz seed {seed}, inputs {start}..{}: {} panics, {} refused, {} jobs planned; p99 {:.3} ms, slowest {:.3} ms (input {}); {:.1} s",
        start + count,
        st.panics,
        st.refused,
        st.jobs_planned,
        f64::from(st.quantile_us(0.99)) / 1e3,
        f64::from(st.max_us()) / 1e3,
        slowest.first().map_or(0, |s| s.0),
        took.as_secs_f64()
    );
}

fn usage(why: &str) -> ! {
    eprintln!(
        "fuzz: {why}\nusage: fuzz [--seed S] [--start I] [--inputs N] [--progress FILE] | [--seed S] --show I"
    );
    std::process::exit(2)
}
