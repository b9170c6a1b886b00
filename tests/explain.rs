//! `iolab explain`, `iolab calibrate` and `iolab run --explain` on real
//! workloads run by iolab itself: for each limit a run is made to hit
//! (an injected disk's delay and bandwidth, the page cache's copy, the cost
//! of each call, more threads than CPUs, a rate, a think time, readahead, a
//! half-cached file, fsync, errors) the stored run's explanation names that
//! rule and its figures match what the scenario set up (within 10%). Also:
//! why two runs differ (prefetch), the refusals, and the ceilings that
//! `calibrate` stores being cited. Each test has its own database; the
//! injected-disk tests need root (they print SKIP otherwise).

mod common;

use common::disk::{TestDisk, can};
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The tests one at a time: a disk's counters hold every process's
/// requests, and one test's cold reads would read as another's misses.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// `iolab run ARGS` through `cmd` (the binary, or a disk's `cmd()`),
/// storing into `db`.
fn store_run(mut cmd: Command, db: &Path, args: &[String]) {
    succeed(cmd.env("IOLAB_DB", db).arg("run").args(args));
}

/// Lays out `file` with `size` bytes, storing nothing (the database's run
/// ids stay those of the measured runs), then writes back its file system
/// (syncfs): the device counters of the measured run, which count the
/// whole disk, see none of this or earlier tests' write-back.
fn lay(mut cmd: Command, file: &Path, size: &str) {
    let args = job(
        "layout",
        file,
        &format!("--size={size} --rw=read --number_ios=1"),
    );
    succeed(cmd.args(["run", "--no-store"]).args(args));
    succeed(Command::new("sync").arg("-f").arg(file));
}

/// `iolab explain ID --json` of the runs in `db`.
fn explain(db: &Path, id: i64) -> Value {
    stdout_json(with_db(db).args(["explain", &id.to_string(), "--json"]))
}

/// The findings and evidence of an explanation, for failure messages.
fn show(v: &Value) -> String {
    let mut s = String::new();
    for f in v["findings"].as_array().into_iter().flatten() {
        s.push_str(&format!(
            "  {} (weight {:.3}): {}\n    {}\n",
            f["rule"], f["weight"], f["text"], f["figures"]
        ));
    }
    let mut e = v["evidence"].clone();
    e["modes"] = Value::Null;
    format!("rule {}, findings:\n{s}evidence: {e}", v["rule"])
}

/// Asserts `v`'s dominant rule is `rule`; the figures of its finding.
fn dominant<'a>(v: &'a Value, rule: &str) -> &'a Value {
    assert_eq!(v["rule"], rule, "{}", show(v));
    assert_eq!(v["findings"][0]["rule"], rule, "{}", show(v));
    &v["findings"][0]["figures"]
}

/// A number of `v` at `key`.
fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {key} in {v}"))
}

/// Asserts figure `name` of `figs` is within 10% of `want`.
fn near(figs: &Value, name: &str, want: f64, v: &Value) {
    let got = num(figs, name);
    assert!(
        (got - want).abs() <= 0.1 * want.abs(),
        "{name} = {got}, not within 10% of {want}\n{}",
        show(v)
    );
}

#[test]
fn injected_delay_is_device_latency_at_depth_1_and_32() {
    let _one = one_at_a_time();
    if !can("injected_delay_is_device_latency_at_depth_1_and_32") {
        return;
    }
    let (_dir, db) = scratch_db();
    let d = TestDisk::up_short(&["--size", "128M"]);
    let f = d.file("f");
    lay(d.cmd(), &f, "16m");
    d.disk("set", &["--delay", "1ms"]);
    let reads = |depth: u32, n: u32| {
        let opts = format!(
            "--size=16m --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth={depth} \
             --number_ios={n}"
        );
        store_run(d.cmd(), &db, &job("r", &f, &opts));
    };
    reads(1, 300);
    reads(32, 3000);
    for (id, depth) in [(1, 1.0), (2, 32.0)] {
        let v = explain(&db, id);
        let figs = dominant(&v, "device-latency");
        near(figs, "injected_delay_us", 1000.0, &v);
        near(figs, "depth", depth, &v);
        assert_eq!(v["evidence"]["iodepth"], depth as u32, "{}", show(&v));
        // Little's law with the device's own latency, the injected 1 ms:
        // at the depth reached the device alone allows depth / 1 ms.
        near(figs, "device_latency_us", 1000.0, &v);
        near(figs, "little_iops", num(figs, "depth") * 1000.0, &v);
        let text = v["findings"][0]["text"].as_str().unwrap();
        assert!(text.contains("injected disk added"), "{text}");
    }
    d.down();
}

#[test]
fn injected_bandwidth_is_device_bandwidth() {
    let _one = one_at_a_time();
    if !can("injected_bandwidth_is_device_bandwidth") {
        return;
    }
    let (_dir, db) = scratch_db();
    let d = TestDisk::up_short(&["--size", "128M"]);
    let f = d.file("f");
    lay(d.cmd(), &f, "64m");
    d.disk("set", &["--bw", "50MiB"]);
    let opts = "--size=64m --rw=read --bs=1m --direct=1 --ioengine=io_uring --iodepth=4 \
                --time_based --runtime=2";
    store_run(d.cmd(), &db, &job("seq", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "device-bandwidth");
    assert_eq!(num(figs, "ceiling_bytes_per_s"), 52428800.0, "{}", show(&v));
    near(figs, "bw_bytes_per_s", 52428800.0, &v);
    d.down();
}

#[test]
fn warm_large_reads_are_page_cache_copy() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "64m");
    let opts = "--size=64m --rw=read --bs=1m --cache=warm --loops=3";
    store_run(bin(), &db, &job("copy", &f, opts));
    let v = explain(&db, 1);
    dominant(&v, "page-cache-copy");
    let e = &v["evidence"];
    assert_eq!(e["reads"], 192, "{}", show(&v));
    // The devices read under 1% of the 192 MiB (other processes' reads of
    // the same disk count too: a bound, not zero).
    assert!(
        num(e, "dev_read_bytes") < 0.01 * num(e, "read_bytes"),
        "{}",
        show(&v)
    );
    assert!(num(e, "dev_reads") < 192.0 / 4.0, "{}", show(&v));
}

#[test]
fn tiny_cached_reads_are_per_call() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "16m");
    let opts = "--size=16m --rw=randread --bs=50 --cache=warm --number_ios=200000";
    store_run(bin(), &db, &job("tiny", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "per-call");
    assert_eq!(num(figs, "io_bytes"), 50.0, "{}", show(&v));
    assert_eq!(v["evidence"]["reads"], 200000, "{}", show(&v));
}

#[test]
fn more_threads_than_cpus_is_cpu_saturation() {
    let _one = one_at_a_time();
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "4m");
    let opts = format!(
        "--size=4m --rw=randread --bs=512 --cache=warm --numjobs={} --time_based --runtime=2",
        3 * cpus
    );
    store_run(bin(), &db, &job("busy", &f, &opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "cpu-saturation");
    assert_eq!(num(figs, "threads"), (3 * cpus) as f64, "{}", show(&v));
    assert_eq!(num(figs, "cpus"), cpus as f64, "{}", show(&v));
    assert!(num(figs, "threads") > num(figs, "cpus"));
}

#[test]
fn rate_iops_is_the_rate_limit() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "4m");
    let opts = "--size=4m --rw=randread --bs=4k --cache=warm --rate_iops=500 --time_based \
                --runtime=2";
    store_run(bin(), &db, &job("paced", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "rate-limit");
    assert_eq!(num(figs, "set"), 500.0, "{}", show(&v));
    near(figs, "achieved", 500.0, &v);
}

#[test]
fn thinktime_is_think_time() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "4m");
    let opts = "--size=4m --rw=randread --bs=4k --cache=warm --thinktime=2000 --number_ios=500";
    store_run(bin(), &db, &job("think", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "think-time");
    assert_eq!(num(figs, "thinktime_us"), 2000.0, "{}", show(&v));
    // Not within 10% of 2000 µs: each sleep overshoots (timer slack and
    // wake-up), 133-154 µs here on an idle-ish 2-CPU VM, and more under
    // load, which only adds; so a floor, and the share of the cycle.
    assert!(num(figs, "between_us") >= 2000.0 * 0.9, "{}", show(&v));
    assert!(num(figs, "share") >= 0.9, "{}", show(&v));
}

#[test]
fn cold_small_sequential_reads_are_readahead() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "64m");
    let opts = "--size=64m --rw=read --bs=4k --cache=cold";
    store_run(bin(), &db, &job("scan", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "readahead");
    assert_eq!(num(figs, "io_kib"), 4.0, "{}", show(&v));
    assert!(num(figs, "device_read_kib") >= 16.0, "{}", show(&v));
}

#[test]
fn half_cached_file_is_hits_and_misses() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "64m");
    // Exactly the first half cached: all evicted, then the first 32 MiB
    // read with readahead off (POSIX_FADV_RANDOM), so none beyond it.
    succeed(bin().args(["cache", "evict", s(&f)]));
    let first = "--size=32m --rw=read --bs=1m --cache=keep --fadvise_hint=random";
    succeed(
        bin()
            .args(["run", "--no-store"])
            .args(job("half", &f, first)),
    );
    // Random 4 KiB reads (randread's hint: no readahead), each block once.
    let opts = "--size=64m --rw=randread --bs=4k --cache=keep --number_ios=2000";
    store_run(bin(), &db, &job("bimodal", &f, opts));
    let v = explain(&db, 1);
    let before = num(&v["evidence"], "cached_before");
    assert!(
        (before - 0.5).abs() < 0.02,
        "cached before: {before}\n{}",
        show(&v)
    );
    let figs = dominant(&v, "cache-hits-misses");
    for k in ["hit_share", "miss_share"] {
        let x = num(figs, k);
        assert!((x - 0.5).abs() <= 0.1, "{k} = {x}\n{}", show(&v));
    }
}

/// True when `dir` is on a tmpfs (fsync there waits for no device).
fn on_tmpfs(dir: &Path) -> bool {
    let c = std::ffi::CString::new(s(dir)).unwrap();
    // SAFETY: a valid C string and a zeroed statfs buffer.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statfs(c.as_ptr(), &mut st) }, 0);
    st.f_type as i64 == libc::TMPFS_MAGIC
}

#[test]
fn fsync_after_every_write_is_fsync() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    if on_tmpfs(dir.path()) {
        eprintln!("SKIP fsync_after_every_write_is_fsync: the scratch directory is on tmpfs");
        return;
    }
    let f = dir.path().join("f");
    let opts = "--size=4m --rw=write --bs=4k --fsync=1";
    store_run(bin(), &db, &job("sync", &f, opts));
    let v = explain(&db, 1);
    let figs = dominant(&v, "fsync");
    // A sync after every write but the last, as fio counts them (fio 3.x
    // reports 1023 syncs for these 1024 writes: the job ends first).
    assert_eq!(v["evidence"]["writes"], 1024, "{}", show(&v));
    assert_eq!(num(figs, "fsyncs"), 1023.0, "{}", show(&v));
}

#[test]
fn failed_reads_are_errors() {
    let _one = one_at_a_time();
    if !can("failed_reads_are_errors") {
        return;
    }
    let (_dir, db) = scratch_db();
    let d = TestDisk::up_short(&["--size", "128M"]);
    let f = d.file("f");
    lay(d.cmd(), &f, "16m");
    d.disk("set", &["--fail", "read=EIO@1"]);
    let opts = "--size=16m --rw=randread --bs=4k --direct=1 --number_ios=100";
    let (code, err) = fail(
        d.cmd()
            .env("IOLAB_DB", &db)
            .arg("run")
            .args(job("eio", &f, opts)),
    );
    assert_eq!(code, code::FAILED, "{err}");
    d.disk("set", &[]);
    let v = explain(&db, 1);
    let figs = dominant(&v, "errors");
    assert!(num(figs, "errors") >= 1.0, "{}", show(&v));
    let text = v["findings"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Input/output error") || text.contains("EIO"),
        "{text}"
    );
    d.down();
}

#[test]
fn prefetch_moves_the_latency_to_fadvise() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    lay(bin(), &f, "64m");
    let opts = "--size=64m --rw=randread --bs=8k --cache=cold --number_ios=3000";
    store_run(bin(), &db, &job("cold", &f, opts));
    store_run(
        bin(),
        &db,
        &job("cold", &f, &format!("{opts} --prefetch=16")),
    );
    let v = stdout_json(with_db(&db).args(["explain", "1", "2", "--json"]));
    let changes = &v["changes"];
    let first = &changes[0]["what"];
    assert!(
        first == "latency-moved-to-fadvise" || first == "device-reads",
        "{changes:#}"
    );
    let moved = json_item(changes, "what", "latency-moved-to-fadvise");
    assert!(
        moved["text"].as_str().unwrap().contains("fadvise"),
        "{moved}"
    );
    assert_eq!(v["a"]["evidence"]["advises"], 0);
    assert!(
        num(&v["b"]["evidence"], "advises") >= 3000.0,
        "{}",
        show(&v["b"])
    );
    let text = stdout_text(with_db(&db).args(["explain", "1", "2"]));
    assert!(text.contains("fadvise"), "{text}");
    assert!(text.starts_with("Why the runs differ"), "{text}");
}

#[test]
fn explain_refusals_and_run_explain() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let f = dir.path().join("f");
    // Enough cached reads (80 MB) that other processes' device reads, which
    // the disk's counters hold too, stay under 1% of the bytes: a short run
    // beside other tests could be read as not cached, and get no rule.
    let opts = "--size=16m --rw=randread --bs=4k --cache=warm --number_ios=20000";
    let (code, err) = fail(
        with_db(&db)
            .arg("run")
            .args(job("r", &f, opts))
            .args(["--explain", "--output-format=json"]),
    );
    assert_eq!(code, code::USAGE, "{err}");
    assert_one_line(&err, &["--explain"]);
    // After the normal report, the stored run's explanation (run 1: the
    // refused run stored nothing); with nothing stored, the result's own.
    let run = |extra: &str| {
        let mut c = with_db(&db);
        c.arg("run").args(job("r", &f, opts)).arg("--explain");
        stdout_text(c.args(extra.split_whitespace()))
    };
    let out = run("");
    assert!(
        out.contains("Why run 1 went as it did\n  Dominant limit: "),
        "{out}"
    );
    let out = run("--no-store");
    assert!(
        out.contains("Why the run went as it did\n  Dominant limit: "),
        "{out}"
    );
    // No run 7: a clean failure, one line naming it.
    let (code, err) = fail(with_db(&db).args(["explain", "7"]));
    assert_eq!(code, code::USAGE, "{err}");
    assert_one_line(&err, &["no run 7"]);
    let (code, err) = fail(with_db(&db).args(["explain", "1", "7", "--json"]));
    assert_eq!(code, code::USAGE, "{err}");
    assert_one_line(&err, &["no run 7"]);
}

#[test]
fn calibrated_ceilings_are_cited() {
    let _one = one_at_a_time();
    let (dir, db) = scratch_db();
    let c = stdout_json(with_db(&db).args(["calibrate", "--dir", s(dir.path()), "--json"]));
    assert!(num(&c, "rand_iops_d1") > 0.0, "{c}");
    assert!(num(&c, "copy_bw") > 0.0, "{c}");
    assert!(num(&c["cached_read_us"], "psync") > 0.0, "{c}");
    // It left nothing behind in the directory.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "results.db" && !n.to_string_lossy().starts_with("results.db-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let f = dir.path().join("f");
    lay(bin(), &f, "16m");
    let opts = "--size=16m --rw=randread --bs=4k --direct=1 --number_ios=1000";
    store_run(bin(), &db, &job("d1", &f, opts));
    // The calibration itself is no run to explain.
    let (code, err) = fail(with_db(&db).args(["explain", "1"]));
    assert_eq!(code, code::USAGE, "{err}");
    assert_one_line(&err, &["run 1", "calibration"]);
    // show prints the stored ceilings; a format with no form for them says so.
    let shown = stdout_text(with_db(&db).args(["show", "1"]));
    assert!(
        shown.contains("Ceilings measured") && shown.contains("rand_iops_d1"),
        "{shown}"
    );
    let (code, err) = fail(with_db(&db).args(["show", "1", "-f", "csv"]));
    assert_eq!(code, code::USAGE, "{err}");
    let v = explain(&db, 2);
    assert_eq!(v["ceilings"]["run"], 1, "{}", v["ceilings"]);
    assert_eq!(v["ceilings"]["device"], true, "{}", v["ceilings"]);
    dominant(&v, "device-latency");
    let text = v["findings"][0]["text"].as_str().unwrap();
    assert!(text.contains("ceiling"), "{text}");
}
