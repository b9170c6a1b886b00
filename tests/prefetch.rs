//! prefetch=N issues exactly the advice expected, seen by strace: one
//! posix_fadvise(WILLNEED) per read, same offsets, each N reads ahead.

mod common;
use common::*;

#[derive(Debug, PartialEq, Clone, Copy)]
enum Ev {
    Advise(u64, u64),
    Read(u64, u64),
}

/// The job's WILLNEED advice and reads, in order, as strace saw them when
/// `iolab run --no-store ARGS` ran.
fn trace(args: &[String]) -> Vec<Ev> {
    let text = strace_run("fadvise64,pread64", args);
    let mut evs = Vec::new();
    // The dynamic loader preads ELF headers at start-up: the job's events
    // begin with the first fadvise64 (the open-time hint).
    let start = text.find("fadvise64(").expect("job issued fadvise64");
    let text = &text[text[..start].rfind('\n').map_or(0, |i| i + 1)..];
    for line in text.lines() {
        if line.contains("fadvise64(") {
            if let Some((off, len)) = willneed_advice(line) {
                evs.push(Ev::Advise(off, len));
            }
        } else if line.contains("pread64(") {
            // "1234  pread64(3, "..."..., 4096, 8192) = 4096"
            let close = line.rfind(')').unwrap();
            let inner = &line[..close];
            let parts: Vec<&str> = inner.rsplitn(3, ',').map(str::trim).collect();
            let (off, len) = (parts[0].parse().unwrap(), parts[1].parse().unwrap());
            evs.push(Ev::Read(off, len));
        }
    }
    evs
}

/// Asserts prefetch=`n` advice: one WILLNEED per read, for the same
/// (offset, len) in the same order, each issued `n` reads ahead.
fn check_prefetch(evs: &[Ev], n: usize) {
    let (mut reads, mut advs) = (Vec::new(), Vec::new());
    for e in evs {
        match *e {
            Ev::Read(off, len) => reads.push((off, len)),
            Ev::Advise(off, len) => advs.push((off, len)),
        }
    }
    assert_eq!(advs.len(), reads.len(), "one advice per read");
    assert_eq!(advs, reads, "advice covers exactly the reads, in order");
    // Advice k is issued when max(0, k - N) reads have completed.
    let mut done = 0usize;
    let mut k = 0usize;
    for e in evs {
        match e {
            Ev::Read(..) => done += 1,
            Ev::Advise(..) => {
                assert_eq!(
                    done,
                    k.saturating_sub(n),
                    "advice {k} issued after {done} reads (N={n})"
                );
                k += 1;
            }
        }
    }
}

#[test]
fn prefetch_advice_count_offsets_and_distance() {
    skip_unless_installed!("strace");
    let (_dir, f) = scratch_file();
    // Lay out first so strace sees only the measured run's reads.
    lay_out(&f, "1M");
    let traced = |opts: &str| trace(&job("p", &f, &format!("--size=1M {opts} --cache=keep")));
    for (rw, n) in [("randread", 8usize), ("read", 3), ("randread", 1)] {
        let evs = traced(&format!("--rw={rw} --bs=4k --prefetch={n}"));
        let reads = evs.iter().filter(|e| matches!(e, Ev::Read(..))).count();
        assert_eq!(reads, 256, "{rw}");
        check_prefetch(&evs, n);
    }
    // Variable sizes, and fewer I/Os than the distance.
    let evs = traced("--rw=randread --bsrange=512-8k --prefetch=20 --number_ios=50");
    check_prefetch(&evs, 20);
    let evs = traced("--rw=randread --prefetch=20 --number_ios=5");
    check_prefetch(&evs, 20);
    assert_eq!(evs.len(), 10);
    // Without prefetch no WILLNEED at all.
    let evs = traced("--rw=randread");
    assert!(evs.iter().all(|e| matches!(e, Ev::Read(..))));
}

#[test]
fn prefetch_counts_in_json() {
    let (_dir, f) = scratch_file();
    let v = run_json(&job("p", &f, "--size=2M --rw=randread --prefetch=16"));
    let j = &v["jobs"][0];
    assert_eq!(j["iolab"]["advise"]["total_ios"], j["read"]["total_ios"]);
    assert_eq!(j["iolab"]["prefetch"], 16);
    assert!(
        j["iolab"]["advise"]["lat_ns"]["percentile"]["50.000000"]
            .as_u64()
            .unwrap()
            > 0
    );
}
