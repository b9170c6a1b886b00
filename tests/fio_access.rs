//! fio's access-pattern options under fio and iolab: the offsets and sizes
//! each tool issued, fio's from its `write_iolog`, iolab's from the system
//! calls its clones made (strace). Sequential forms must give fio's offsets
//! one for one; random ones (iolab's generator is not fio's) the same
//! counts and the same shape.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One I/O: (write, offset, length).
type Io = (bool, u64, u64);

/// A job's arguments and what its directory needs first.
type Case<'a> = (&'a [&'a str], fn(&Path));

/// The I/Os fio issued for `args` in `dir`, in order (its `write_iolog`).
fn fio_ios(dir: &Path, args: &[&str]) -> Vec<Io> {
    let log = dir.join("fio.iolog");
    succeed(
        Command::new("fio")
            .current_dir(dir)
            .args(["--name=t", "--filename=data", "--ioengine=psync"])
            .args(args)
            .arg(format!("--write_iolog={}", log.display()))
            .arg("--output-format=json"),
    );
    let text = std::fs::read_to_string(&log).unwrap();
    (text.lines())
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // fio 3's iolog: TIME FILE ACTION OFFSET LENGTH.
            match f.as_slice() {
                [_, _, act @ ("read" | "write"), off, len] => {
                    Some((*act == "write", off.parse().unwrap(), len.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect()
}

/// The I/Os iolab's clones issued for `args` in `dir`, clone after clone,
/// each in order (pread64/pwrite64 of every thread but the main one, which
/// lays the files out).
fn iolab_ios(dir: &Path, args: &[&str]) -> Vec<Io> {
    let trace = dir.join("st");
    let out = Command::new("strace")
        .current_dir(dir)
        .args(["-ff", "-qq", "-e", "trace=pread64,pwrite64", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(["run", "--no-store", "--name=t", "--filename=data"])
        .args(["--ioengine=psync", "--output-format=json"])
        .args(args)
        .env("IOLAB_DB", test_db())
        .output()
        .unwrap();
    assert!(out.status.success(), "iolab {args:?} failed");
    let mut pids: Vec<u32> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_prefix("st.").and_then(|p| p.parse::<u32>().ok()))
        .collect();
    pids.sort();
    // The first thread is the main one.
    let mut threads: Vec<(u32, Vec<Io>)> = (pids.into_iter().skip(1))
        .map(|pid| {
            let text = std::fs::read_to_string(dir.join(format!("st.{pid}"))).unwrap();
            (pid, text.lines().filter_map(syscall).collect())
        })
        .collect();
    threads.sort();
    threads.into_iter().flat_map(|(_, ios)| ios).collect()
}

/// `pread64(3, "..."..., 4096, 8192) = 4096` as an I/O.
fn syscall(line: &str) -> Option<Io> {
    let write = line.starts_with("pwrite64(");
    if !write && !line.starts_with("pread64(") {
        return None;
    }
    let args = &line[..line.rfind(')')?];
    let mut tail = args.rsplitn(3, ", ");
    let off = tail.next()?.trim().parse().ok()?;
    let len = tail.next()?.trim().parse().ok()?;
    Some((write, off, len))
}

/// Both tools' I/Os for `args`, each in a fresh directory where `prepare`
/// made what the job needs first.
fn both(args: &[&str], prepare: fn(&Path)) -> (Vec<Io>, Vec<Io>) {
    let (a, b) = (scratch(), scratch());
    prepare(a.path());
    prepare(b.path());
    (fio_ios(a.path(), args), iolab_ios(b.path(), args))
}

fn nothing(_: &Path) {}

/// A 1 MiB file named `data` (for `size=N%`, `offset=N%`).
fn mib_file(dir: &Path) {
    std::fs::write(dir.join("data"), vec![7u8; 1 << 20]).unwrap();
}

#[test]
fn sequential_forms_give_fios_offsets() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let cases: &[Case] = &[
        (&["--rw=read:-8k", "--size=64k"], nothing),
        (&["--rw=write:4k", "--size=64k"], nothing),
        (&["--rw=read:-8k", "--size=64k", "--offset=16k"], nothing),
        (&["--rw=write:8k", "--size=64k", "--offset=16k"], nothing),
        (
            &["--rw=read", "--size=64k", "--io_size=32k", "--loops=3"],
            nothing,
        ),
        (&["--rw=write", "--size=64k", "--io_limit=128k"], nothing),
        (
            &["--rw=read", "--size=64k", "--number_ios=10", "--loops=2"],
            nothing,
        ),
        (
            &[
                "--rw=read",
                "--size=256k",
                "--zonemode=strided",
                "--zonesize=16k",
                "--zoneskip=16k",
            ],
            nothing,
        ),
        (
            &[
                "--rw=read",
                "--size=256k",
                "--zonemode=strided",
                "--zonesize=32k",
                "--zonerange=16k",
                "--zoneskip=16k",
            ],
            nothing,
        ),
        (&["--rw=read", "--size=50%", "--offset=10%"], mib_file),
        (&["--rw=read", "--offset=75%"], mib_file),
        (
            &[
                "--rw=read",
                "--size=64k",
                "--offset_increment=64k",
                "--numjobs=2",
            ],
            nothing,
        ),
    ];
    for (case, prepare) in cases {
        let mut args = vec!["--bs=4k"];
        args.extend_from_slice(case);
        let (fio, ours) = both(&args, *prepare);
        assert!(!fio.is_empty(), "{case:?}: fio did nothing");
        if case.contains(&"--numjobs=2") {
            // The clones run side by side: each clone's I/Os, in order.
            let split = |ios: &[Io]| {
                let mut by_region: BTreeMap<bool, Vec<Io>> = BTreeMap::new();
                for io in ios {
                    by_region.entry(io.1 >= 64 << 10).or_default().push(*io);
                }
                by_region
            };
            assert_eq!(split(&ours), split(&fio), "{case:?}");
        } else {
            assert_eq!(ours, fio, "{case:?}");
        }
    }
}

/// How many I/Os start where the one before ended.
fn continued(ios: &[Io]) -> usize {
    ios.windows(2).filter(|w| w[1].1 == w[0].1 + w[0].2).count()
}

/// How many distinct offsets.
fn distinct(ios: &[Io]) -> usize {
    ios.iter()
        .map(|io| io.1)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// Two counts agree within `tol` of `n`.
fn close(a: usize, b: usize, n: usize, tol: f64, what: &str) {
    let d = (a as f64 - b as f64).abs() / n as f64;
    assert!(d <= tol, "{what}: iolab {a}, fio {b} (of {n})");
}

#[test]
fn random_forms_have_fios_shape() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    // A random start every 4 I/Os: three of four continue the one before.
    let (fio, ours) = both(&["--rw=randread:4", "--bs=4k", "--size=256k"], nothing);
    assert_eq!(ours.len(), fio.len());
    assert!(continued(&fio) >= 48 && continued(&ours) >= 48);
    close(continued(&ours), continued(&fio), 64, 0.1, "randread:4");
    // Half of the I/Os random, the other half sequential.
    let args = [
        "--rw=randread",
        "--bs=4k",
        "--size=1m",
        "--percentage_random=50",
    ];
    let (fio, ours) = both(&args, nothing);
    assert_eq!(ours.len(), fio.len());
    close(
        continued(&ours),
        continued(&fio),
        256,
        0.12,
        "percentage_random=50",
    );
    // Without the map, offsets repeat: about 1 - 1/e of the blocks are hit.
    let args = ["--rw=randread", "--bs=4k", "--size=1m", "--norandommap"];
    let (fio, ours) = both(&args, nothing);
    assert_eq!(ours.len(), fio.len());
    assert!(distinct(&ours) < 256 && distinct(&fio) < 256);
    close(distinct(&ours), distinct(&fio), 256, 0.12, "norandommap");
    // With the map and io_size twice size, each block twice.
    let args = ["--rw=randread", "--bs=4k", "--size=64k", "--io_size=128k"];
    let (fio, ours) = both(&args, nothing);
    let twice = |ios: &[Io]| {
        let mut n: BTreeMap<u64, usize> = BTreeMap::new();
        ios.iter().for_each(|io| *n.entry(io.1).or_default() += 1);
        n.values().all(|&c| c == 2) && n.len() == 16
    };
    assert!(twice(&fio) && twice(&ours), "io_size=2*size");
    // blockalign=512: offsets off the 4k grid, about 7 in 8 of them.
    let args = ["--rw=randread", "--bs=4k", "--size=1m", "--blockalign=512"];
    let (fio, ours) = both(&args, nothing);
    let off_grid = |ios: &[Io]| ios.iter().filter(|io| io.1 % 4096 != 0).count();
    assert!(ours.iter().all(|io| io.1 % 512 == 0));
    close(off_grid(&ours), off_grid(&fio), 256, 0.1, "blockalign=512");
}

/// Per direction and size: (I/Os, bytes).
fn by_size(ios: &[Io]) -> BTreeMap<(bool, u64), usize> {
    let mut m = BTreeMap::new();
    ios.iter()
        .for_each(|io| *m.entry((io.0, io.2)).or_default() += 1);
    m
}

#[test]
fn sizes_per_direction_and_bssplit_as_fio() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    for args in [
        &["--rw=rw", "--bs=,8k", "--size=256k"][..],
        &["--rw=randrw", "--bs=4k,16k", "--size=256k", "--norandommap"][..],
    ] {
        let (fio, ours) = both(args, nothing);
        // Without the random map the last I/O may pass size, whole (fio
        // ends once its bytes are issued), in both tools.
        let bytes = |ios: &[Io]| ios.iter().map(|io| io.2).sum::<u64>();
        for b in [bytes(&fio), bytes(&ours)] {
            assert!((256 << 10..272 << 10).contains(&b), "{args:?}: {b}");
        }
        // Each direction in its own size (a last I/O may be cut short).
        let (r, w) = if args[1] == "--bs=,8k" {
            (4096, 8192)
        } else {
            (4096, 16384)
        };
        let odd = |ios: &[Io]| {
            ios.iter()
                .filter(|io| io.2 != if io.0 { w } else { r })
                .count()
        };
        assert!(odd(&ours) <= 1 && odd(&fio) <= 1, "{args:?}");
    }
    let args = [
        "--rw=randread",
        "--bssplit=4k/20:16k/80",
        "--size=4m",
        "--norandommap",
    ];
    let (fio, ours) = both(&args, nothing);
    let share = |ios: &[Io]| {
        by_size(ios).get(&(false, 16384)).copied().unwrap_or(0) as f64 / ios.len() as f64
    };
    assert!(
        (share(&ours) - share(&fio)).abs() < 0.08,
        "bssplit 16k share: iolab {}, fio {}",
        share(&ours),
        share(&fio)
    );
    // Only the split's sizes, as fio (a size that does not fit before the
    // end of the region gives way to one that does); a last I/O may be cut
    // short at the end of size.
    let other = ours.iter().filter(|io| ![4096, 16384].contains(&io.2));
    assert!(other.count() <= 1);
}

/// The share of I/Os that go to the hottest tenth of the blocks (by hits).
fn hottest_tenth(ios: &[Io], blocks: usize) -> f64 {
    let mut hits: BTreeMap<u64, usize> = BTreeMap::new();
    ios.iter()
        .for_each(|io| *hits.entry(io.1).or_default() += 1);
    let mut counts: Vec<usize> = hits.into_values().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts.iter().take(blocks / 10).sum::<usize>() as f64 / ios.len() as f64
}

/// The share of I/Os in the first `part` of a region of `size` bytes.
fn in_first(ios: &[Io], size: u64, part: f64) -> f64 {
    let limit = (size as f64 * part) as u64;
    ios.iter().filter(|io| io.1 < limit).count() as f64 / ios.len() as f64
}

#[test]
fn random_distributions_have_fios_shape() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let size = 4u64 << 20;
    for dist in ["zipf:1.2", "pareto:0.2", "normal:10", "random"] {
        let d = format!("--random_distribution={dist}");
        let args = ["--rw=randread", "--bs=4k", "--size=4m", &d];
        let (fio, ours) = both(&args, nothing);
        assert_eq!(ours.len(), fio.len(), "{dist}");
        let (a, b) = (hottest_tenth(&ours, 1024), hottest_tenth(&fio, 1024));
        assert!(
            (a - b).abs() < 0.08,
            "{dist}: hottest 10%: iolab {a}, fio {b}"
        );
    }
    for (dist, part, want) in [
        ("zoned:50/5:30/15:20/", 0.05, 0.5),
        ("zoned_abs:60/512k:40/3m", 0.125, 0.6),
    ] {
        let d = format!("--random_distribution={dist}");
        let args = ["--rw=randread", "--bs=4k", "--size=4m", &d];
        let (fio, ours) = both(&args, nothing);
        let (a, b) = (in_first(&ours, size, part), in_first(&fio, size, part));
        assert!(
            (a - want).abs() < 0.07 && (b - want).abs() < 0.07,
            "{dist}: iolab {a}, fio {b}"
        );
    }
}

#[test]
fn bad_access_values_are_named() {
    let f = "/nonexistent/iolab-access";
    let run = |opt: &str| {
        let mut c = bin();
        c.args(["run", "--no-store", "--name=t", "--size=1m"])
            .arg(format!("--filename={f}"))
            .arg(opt);
        c
    };
    for (opt, want) in [
        ("--zonemode=zbd", "zoned block device"),
        ("--random_distribution=zipf:1", "theta 1.0"),
        (
            "--random_distribution=zoned:50/10:40/20",
            "add to 90, not 100",
        ),
        ("--random_distribution=gamma:2", "not a distribution"),
        ("--bssplit=4k/60:8k/60", "add to 120"),
        ("--size=150%", "1% to 100%"),
        ("--bs=4k,8k,4k,4k", "read,write,trim"),
        ("--percentage_random=101", "0-100"),
        ("--zonesize=16k", "zonemode=strided"),
    ] {
        let err = fails_with(&mut run(opt), code::USAGE, want);
        let key = opt.trim_start_matches("--").split('=').next().unwrap();
        assert!(
            err.contains(key),
            "{opt}: the error names the option: {err}"
        );
    }
}

/// `iolab run` of `args` in a fresh directory `w` under `d`: its JSON job,
/// after checking it exited 0 with no error.
fn verified_run(d: &Path, what: &str, args: &[String]) -> serde_json::Value {
    let w = d.join("w");
    let _ = std::fs::remove_dir_all(&w);
    std::fs::create_dir(&w).unwrap();
    let out = bin()
        .current_dir(&w)
        .args(["run", "--no-store", "--name=j", "--output-format=json"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {err}");
    let job = parse_json(&out.stdout)["jobs"][0].clone();
    assert_eq!(job["error"], 0, "{what}");
    job
}

fn args(list: &[&str], seed: &str) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|a| a.to_string()).collect();
    v.push(format!("--randseed={seed}"));
    v
}

/// Random writes with sequential stretches (`percentage_random` below 100,
/// `randwrite:N`) may write a block twice in a loop: fio marks no map for
/// the stretches. The read-back checks each block against its newest write
/// (fio 3.33 checks the older one and fails on most seeds: docs/fio-compat.md,
/// the rule fio-verify-overwritten). Before, iolab failed 3 of these 8 seeds
/// with "bad header numberio 11, wanted 3".
#[test]
fn sequential_stretches_that_rewrite_a_block_verify_its_newest_write() {
    let d = scratch();
    for seed in 1..=8 {
        for shape in [
            ["--rw=randwrite", "--percentage_random=58,46"],
            ["--rw=randwrite:3", "--percentage_random=100"],
        ] {
            let common = [
                "--ioengine=psync",
                "--bs=8k",
                "--nrfiles=4",
                "--size=96k",
                "--verify=meta",
            ];
            let job = verified_run(
                d.path(),
                &format!("seed {seed} {shape:?}"),
                &args(&[&common[..], &shape[..]].concat(), &seed.to_string()),
            );
            // Every block was read back once: 12 writes, 12 or fewer reads
            // (a block written twice is read once).
            let (r, w) = (&job["read"]["total_ios"], &job["write"]["total_ios"]);
            assert_eq!(w, 12, "seed {seed} {shape:?}");
            assert!(
                r.as_u64().unwrap() >= 1 && r.as_u64() <= w.as_u64(),
                "{r} {w}"
            );
        }
    }
}

/// Strided zones that wrap around a file's end draw a zone's blocks again
/// in the same loop: each block is checked against its newest write. Before,
/// iolab failed with "bad header numberio 2, wanted 1" (fuzzer seed 46).
#[test]
fn wrapping_zones_that_rewrite_a_block_verify_its_newest_write() {
    let d = scratch();
    let zones = [
        "--ioengine=psync",
        "--rw=randwrite",
        "--bs=16k",
        "--nrfiles=3",
        "--size=192k",
        "--loops=2",
        "--io_size=48k",
        "--verify=md5",
        "--zonemode=strided",
        "--zonesize=16k",
        "--zonerange=32k",
        "--zoneskip=16k",
        "--fallocate=none",
    ];
    for seed in ["1764475062", "1", "2", "3"] {
        let job = verified_run(d.path(), &format!("seed {seed}"), &args(&zones, seed));
        assert!(
            job["read"]["total_ios"].as_u64().unwrap() > 0,
            "seed {seed}"
        );
    }
}
