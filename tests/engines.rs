//! Every engine of the registry passes the same correctness checks as
//! psync: every planned I/O done once with the right bytes, writes really
//! land in the file, prefetch advice covers the same reads; each does the
//! same I/O as fio's engine of that name; and their settings are checked
//! with clear errors. A new engine is tested here without a new line.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Engine settings worth testing beyond each engine's plain run.
const VARIANTS: &[(&str, &[&str])] = &[
    ("io_uring", &["--iodepth=16", "--direct=1"]),
    (
        "io_uring",
        &[
            "--iodepth=4",
            "--fixedbufs=1",
            "--registerfiles=1",
            "--iodepth_batch_submit=4",
        ],
    ),
    ("io_uring", &["--iodepth=4", "--sqthread_poll=1"]),
    ("libaio", &["--iodepth=8", "--direct=1"]),
];

/// (engine, extra options) under test: every engine of the registry that
/// does I/O on files laid out for it (queued ones at iodepth 8), then
/// [`VARIANTS`]; psync first, the reference. (An engine that makes its
/// files, `filecreate`, is tested in fio_engines_meta.rs; one that needs
/// options of its own to write, `e4defrag`, in fio_engines_ext.rs.)
fn engines() -> Vec<(&'static str, &'static [&'static str])> {
    let plain_write = iolab::engine::EngineConfig {
        iodepth: 1,
        writes: true,
        ..Default::default()
    };
    let mut v: Vec<(&str, &[&str])> = iolab::engine::ENGINES
        .iter()
        .filter(|e| e.name != "null" && !e.item.diskless)
        .filter(|e| (e.item.check)(&plain_write).is_ok())
        .map(|e| {
            (
                e.name,
                if e.item.queued {
                    &["--iodepth=8"][..]
                } else {
                    &[][..]
                },
            )
        })
        .collect();
    v.sort_by_key(|(name, _)| *name != "psync");
    v.extend_from_slice(VARIANTS);
    v
}

/// The registry's definition of `engine`.
fn def(engine: &str) -> &'static iolab::engine::EngineDef {
    iolab::engine::find(engine)
        .expect("an engine of the registry")
        .item
}

/// True when `engine` takes jobs that read (ftruncate only writes).
fn reads(engine: &str) -> bool {
    let cfg = iolab::engine::EngineConfig {
        iodepth: 1,
        reads: true,
        ..Default::default()
    };
    (def(engine).check)(&cfg).is_ok()
}

/// The engines under test that take jobs that read.
fn readers() -> Vec<(&'static str, &'static [&'static str])> {
    engines().into_iter().filter(|(e, _)| reads(e)).collect()
}

/// Runs one job on `f` with `engine`, its `extra` settings and `opts`
/// (options split at whitespace); returns the JSON result.
/// Asserts job result `j` reports no errors (showing them if it does);
/// `what` names the run.
fn assert_no_errors(j: &Value, what: &str) {
    assert_eq!(j["error"], 0, "{what}: {}", j["iolab"]["errors"]);
}

fn run_engine(f: &Path, engine: &str, extra: &[&str], opts: &str) -> Value {
    let extra = extra.join(" ");
    run_json(&job("e", f, &format!("--ioengine={engine} {extra} {opts}")))
}

#[test]
fn every_engine_reads_every_block_once() {
    let (_dir, f) = scratch_file();
    for (engine, extra) in readers() {
        for rw in ["randread", "read"] {
            let v = run_engine(&f, engine, extra, &format!("--size=4M --rw={rw} --bs=4k"));
            let j = &v["jobs"][0];
            let what = format!("{engine} {extra:?} {rw}");
            assert_no_errors(j, &what);
            assert_eq!(j["read"]["total_ios"], 1024, "{what}");
            assert_eq!(j["read"]["io_bytes"], 4 << 20, "{what}");
            assert_eq!(j["iolab"]["engine"], engine);
            let lat = &j["read"]["lat_ns"];
            assert_eq!(lat["N"], 1024);
            if def(engine).queued {
                // Async engines split latency: lat = slat + clat for each I/O,
                // so the means add up.
                let (sl, cl, l) = (
                    j["read"]["slat_ns"]["mean"].as_f64().unwrap(),
                    j["read"]["clat_ns"]["mean"].as_f64().unwrap(),
                    lat["mean"].as_f64().unwrap(),
                );
                assert!(sl > 0.0, "{engine}: slat measured");
                assert!(
                    (sl + cl - l).abs() <= 1.0 + l * 1e-9,
                    "{engine}: {sl} + {cl} != {l}"
                );
            }
        }
    }
}

/// Writes of an engine that moves data land in the file; one that does not
/// (falloc, ftruncate) leaves the file as fio's engine of that name does.
#[test]
fn every_engine_writes_land_in_the_file() {
    let d = scratch();
    for (i, (engine, extra)) in engines().into_iter().enumerate() {
        let f = d.path().join(format!("w{i}"));
        // Lay out with random non-zero bytes, then overwrite every block once
        // with zero buffers (fio's zero_buffers): the file must end all zeros.
        lay_out(&f, "1M");
        let before = std::fs::read(&f).unwrap();
        assert!(before.iter().filter(|&&b| b == 0).count() < before.len() / 100);
        let moves_data = def(engine).moves_data;
        // Without data, the file's end state depends on the order: sequential.
        let rw = if moves_data { "randwrite" } else { "write" };
        let opts = format!("--size=1M --rw={rw} --bs=4k --zero_buffers=1");
        let v = run_engine(&f, engine, extra, &opts);
        let j = &v["jobs"][0];
        let what = format!("{engine} {extra:?}");
        assert_no_errors(j, &what);
        assert_eq!(j["write"]["total_ios"], 256, "{what}");
        if !moves_data {
            // The file as the engine left it (filedelete: gone).
            let after = std::fs::read(&f).ok();
            if have("fio", "every_engine_writes_land_in_the_file (fio part)") {
                let theirs = d.path().join(format!("fio{i}"));
                std::fs::write(&theirs, &before).unwrap();
                let fio = fio_json(&job("w", &theirs, &format!("--ioengine={engine} {opts}")));
                assert_eq!(fio["jobs"][0]["error"], 0, "fio {what}");
                let expected = std::fs::read(&theirs).ok();
                assert_eq!(
                    after.as_ref().map(Vec::len),
                    expected.as_ref().map(Vec::len),
                    "{what}: size as fio's"
                );
                assert!(
                    after == expected,
                    "{what}: not the bytes fio's engine leaves"
                );
            }
            continue;
        }
        let after = std::fs::read(&f).unwrap();
        assert_eq!(after.len(), 1 << 20);
        assert!(
            after.iter().all(|&b| b == 0),
            "{engine} {extra:?}: a block was not written"
        );
    }
}

#[test]
fn every_engine_prefetches_the_same_reads() {
    skip_unless_installed!("strace");
    let (_dir, f) = scratch_file();
    lay_out(&f, "1M");
    let advice = |engine: &str, extra: &[&str]| -> Vec<(u64, u64)> {
        let extra = extra.join(" ");
        let opts = format!(
            "--ioengine={engine} {extra} --size=1M --rw=randread --bs=4k --prefetch=8 --cache=keep"
        );
        strace_run("fadvise64", &job("p", &f, &opts))
            .lines()
            .filter_map(willneed_advice)
            .collect()
    };
    let reference = advice("psync", &[]);
    assert_eq!(reference.len(), 256);
    for (engine, extra) in readers().into_iter().skip(1) {
        assert_eq!(advice(engine, extra), reference, "{engine} {extra:?}");
    }
}

/// The same job under fio and iolab, for every engine both have: the same
/// reads, bytes and engine name.
#[test]
fn every_engine_does_the_io_fio_does() {
    skip_unless_installed!("fio");
    let (dir, f) = scratch_file();
    lay_out(&f, "4M");
    for (i, (engine, extra)) in engines().into_iter().enumerate() {
        // A writer (ftruncate) gets a file of its own, laid out afresh.
        let (f, rw, dir) = if reads(engine) {
            (f.clone(), "randread", "read")
        } else {
            let w = dir.path().join(format!("w{i}"));
            lay_out(&w, "4M");
            (w, "randwrite", "write")
        };
        // fio's vsync leaves the I/Os still queued when the job ends out of
        // its byte count unless each commit takes a full batch (a bug of its
        // accounting: 1017 of 1024 reads counted at iodepth 8); compare there.
        let batch = if engine == "vsync" {
            "--iodepth_batch_submit=8"
        } else {
            ""
        };
        let opts = format!(
            "--ioengine={engine} {} {batch} --size=4M --rw={rw} --bs=4k --invalidate=0",
            extra.join(" ")
        );
        let args = job("d", &f, &opts);
        let (ours, fio) = (run_json(&args), fio_json(&args));
        let (o, t) = (&ours["jobs"][0], &fio["jobs"][0]);
        assert_eq!(t["error"], 0, "fio {opts}");
        for k in ["total_ios", "io_bytes"] {
            assert_eq!(o[dir][k], t[dir][k], "{opts}: {dir}.{k}");
        }
        assert_eq!(o["job options"]["ioengine"], t["job options"]["ioengine"]);
    }
}

/// `nowait` acts as fio's for every engine that takes it: a read that
/// misses the page cache fails with EAGAIN (in fio as well), one from the
/// cache runs; pvsync2's flags reach preadv2 as RWF_HIPRI and RWF_NOWAIT.
#[test]
fn nowait_acts_as_fios() {
    let (_dir, f) = scratch_file();
    lay_out(&f, "4M");
    let takers: Vec<&str> = iolab::engine::ENGINES
        .iter()
        .filter(|e| e.item.options.contains(&"nowait"))
        .map(|e| e.name)
        .collect();
    assert!(
        takers.contains(&"pvsync2") && takers.contains(&"io_uring"),
        "{takers:?}"
    );
    for engine in takers {
        let nowait = format!("--size=4M --rw=randread --ioengine={engine} --nowait=1");
        let (code, err) = run_err(&job("n", &f, &format!("{nowait} --cache=cold")));
        assert_eq!(code, code::FAILED, "{engine}: {err}");
        assert!(
            err.contains("Resource temporarily unavailable"),
            "{engine}: {err}"
        );
        let warm = run_json(&job("n", &f, &format!("{nowait} --cache=warm")));
        assert_no_errors(
            &warm["jobs"][0],
            &format!("{engine}: nowait from the cache"),
        );
        assert_eq!(warm["jobs"][0]["read"]["total_ios"], 1024);
        if have("fio", "nowait_acts_as_fios (fio part)") {
            let out = std::process::Command::new("fio")
                .args(job("n", &f, &format!("{nowait} --invalidate=1")))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
            assert!(
                text.contains("err=11"),
                "fio {engine} fails the same way: {text}"
            );
        }
    }
    if have("strace", "nowait_acts_as_fios (strace part)") {
        let opts = "--size=4M --number_ios=4 --rw=randread --ioengine=pvsync2 --hipri=1 --nowait=1 --cache=warm";
        let trace = strace_run("preadv2", &job("n", &f, opts));
        let calls: Vec<&str> = trace.lines().filter(|l| l.contains("preadv2(")).collect();
        assert_eq!(calls.len(), 4, "{trace}");
        assert!(
            calls.iter().all(|l| l.contains("RWF_HIPRI|RWF_NOWAIT")),
            "{trace}"
        );
    }
}

/// fio's aliases name the same engine, reported under its own name.
#[test]
fn fio_aliases_name_the_same_engine() {
    let (_dir, f) = scratch_file();
    for alias in ["aio", "linuxaio"] {
        let v = run_engine(
            &f,
            alias,
            &["--iodepth=4", "--direct=1"],
            "--size=1M --rw=randread",
        );
        assert_eq!(v["jobs"][0]["iolab"]["engine"], "libaio", "{alias}");
        assert_eq!(v["jobs"][0]["read"]["total_ios"], 256, "{alias}");
    }
}

#[test]
fn mmap_counts_page_faults() {
    let (_dir, f) = scratch_file();
    let v = run_engine(&f, "mmap", &[], "--size=4M --rw=read --bs=64k --cache=cold");
    let j = &v["jobs"][0];
    // 1024 pages mapped and touched: each costs at least a minor fault
    // (fault-around maps up to 16 pages per fault).
    let faults = j["minf"].as_u64().unwrap() + j["majf"].as_u64().unwrap();
    assert!(
        faults >= 1024 / 16,
        "only {faults} page faults for 1024 pages"
    );
}

/// With SQPOLL the kernel thread can post a completion before it moves the
/// submission ring's head past that entry, so a slot freed by a completion
/// may still look taken; this once failed about one run in six with EBUSY.
#[test]
fn sqpoll_survives_completions_ahead_of_the_ring_head() {
    let (_dir, f) = scratch_file();
    for i in 0..30 {
        let v = run_engine(
            &f,
            "io_uring",
            &["--iodepth=4", "--sqthread_poll=1"],
            "--size=4M --rw=read --bs=4k --no-store",
        );
        let j = &v["jobs"][0];
        assert_no_errors(j, &format!("run {i}"));
        assert_eq!(j["read"]["total_ios"], 1024, "run {i}");
    }
}

#[test]
fn engine_settings_errors_and_warnings() {
    let (_dir, f) = scratch_file();
    lay_out(&f, "1M");
    for (opts, want) in [
        (
            "--ioengine=psync --sqthread_poll=1",
            "option 'sqthread_poll' applies to ioengine=io_uring only",
        ),
        (
            "--ioengine=io_uring --hipri=1",
            "option 'hipri': polled completions work only with direct=1",
        ),
        (
            "--ioengine=splice",
            "fio's ioengine 'splice' is not supported by iolab yet; iolab has: ",
        ),
        (
            "--ioengine=rdma",
            "fio's ioengine 'rdma' is not supported by iolab: it is a network engine",
        ),
        (
            "--ioengine=ftruncate --rw=randrw --rwmixread=1",
            "option 'ioengine': ftruncate only writes (fio fails every read with EINVAL); use rw=write or rw=randwrite",
        ),
        (
            "--ioengine=psyncc",
            "unknown ioengine 'psyncc'; iolab has: ",
        ),
        (
            "--ioengine=io_uring --iodepth=0",
            "option 'iodepth': '0' is out of range (1-32768)",
        ),
        (
            "--ioengine=libaio --iodepth=100000",
            "option 'iodepth': '100000' is out of range (1-32768)",
        ),
    ] {
        // The names iolab has come from the registry, in its order.
        let want = if want.ends_with("iolab has: ") {
            format!(
                "{want}{}",
                iolab::registry::names(iolab::engine::ENGINES).join(", ")
            )
        } else {
            want.to_string()
        };
        run_rejects(&job("x", &f, &format!("--size=1M {opts}")), &[&want]);
    }
    // libaio without direct runs, with a warning naming the option: in the
    // output, not on stderr (a run that works says nothing there).
    let (out, err) = succeed_text(bin().arg("run").args(job(
        "x",
        &f,
        "--size=1M --ioengine=libaio --iodepth=4",
    )));
    assert!(
        out.contains("ioengine=libaio without direct=1 is synchronous"),
        "{out}"
    );
    assert_eq!(err, "");
    // hipri on a device without poll queues fails with a named error, never hangs.
    let out = bin()
        .arg("run")
        .args(job(
            "x",
            &f,
            "--size=1M --ioengine=io_uring --direct=1 --hipri=1",
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        eprintln!("note: this device supports polled I/O (hipri ran)");
    } else {
        assert!(err.contains("io_uring") && err.contains("hipri"), "{err}");
        // The engine's hint says what the errno means for it.
        assert!(err.contains("no poll queues for polled I/O"), "{err}");
        assert!(err.lines().count() <= 3, "{err}");
    }
}

/// io_uring's system calls are fio's: every enter that submits also carries
/// GETEVENTS (under DEFER_TASKRUN only such an enter posts the completions
/// the kernel holds, so the next reap finds them in the ring), every entry
/// queued is taken, and iolab enters the kernel no more often than fio on
/// the same O_DIRECT job, submitting each read or in batches of 4.
#[test]
fn io_uring_enters_the_kernel_as_fio_does() {
    skip_unless_installed!("strace");
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    lay_out(&f, "4M");
    // (enters, enters that submit, of those the ones without GETEVENTS,
    // entries the kernel took)
    let count = |trace: &str| {
        let enters: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains("io_uring_enter(") && !l.contains("resumed>"))
            .collect();
        let submits: Vec<&&str> = (enters.iter())
            .filter(|l| l.split(", ").nth(1).is_some_and(|n| n != "0"))
            .collect();
        let bare = submits.iter().filter(|l| !l.contains("GETEVENTS")).count();
        let taken: u64 = (submits.iter())
            .filter_map(|l| l.rsplit("= ").next()?.trim().parse::<u64>().ok())
            .sum();
        (enters.len(), submits.len(), bare, taken)
    };
    for batch in ["1", "4"] {
        let opts = format!(
            "--ioengine=io_uring --iodepth=8 --iodepth_batch_submit={batch} --direct=1 \
             --size=4M --rw=randread --bs=4k"
        );
        let args = job("u", &f, &opts);
        let (o, t) = (
            count(&strace_run("io_uring_enter", &args)),
            count(&strace_fio("io_uring_enter", &args)),
        );
        eprintln!(
            "batch {batch}: io_uring_enter (all, submitting, without GETEVENTS, entries taken): \
             iolab {o:?}, fio {t:?}"
        );
        // An old strace prints the flags as a number: nothing to compare.
        if t.1 > 0 && t.2 == t.1 {
            eprintln!(
                "SKIP io_uring_enters_the_kernel_as_fio_does: this strace does not decode its flags"
            );
            return;
        }
        assert_eq!(t.2, 0, "fio's submits carry GETEVENTS (the reference)");
        assert_eq!(
            (o.2, o.3),
            (0, 1024),
            "every iolab submit carries GETEVENTS, all taken: {o:?}"
        );
        assert!(
            o.0 as f64 <= t.0 as f64 * 1.1 + 8.0,
            "batch {batch}: iolab {o:?} enters no more than fio {t:?}"
        );
    }
}
