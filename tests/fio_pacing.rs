//! fio's pacing options under fio and iolab, the same job in fresh
//! directories: the bandwidth and IOPS `rate` and `rate_iops` hold (never
//! above the target), the I/Os a think time leaves in a fixed runtime,
//! `ramp_time` leaving its I/Os out, the ratio of a token flow between two
//! jobs, `rate_iops_min` failing a slow job, `latency_target`'s fields, and
//! `gtod_reduce` hiding latencies as fio. Short runs (1 s) on small cached
//! files.
//!
//! A loaded machine can slow a paced job, never speed it up: rates are
//! asserted as caps (at most the target, 10% spare) with a floor of a
//! tenth of it (the job ran at all), think times through the ratio of two
//! jobs that run side by side under the same load. How close each tool
//! comes to its target, and to the other tool, is measured by
//! bench/pacing.py, which prints each figure with its tolerance.

mod common;
use common::*;
use serde_json::Value;
use std::process::Command;

/// `tool`'s JSON for the job file `text`, run in a fresh directory holding
/// a 1 MiB file `f` written first.
fn run(tool: &str, text: &str) -> Value {
    run_in(&scratch(), tool, text)
}

/// [`run`] in the directory `d`.
fn run_in(d: &tempfile::TempDir, tool: &str, text: &str) -> Value {
    std::fs::write(d.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let job = write_file(d.path(), "job.fio", text);
    let mut cmd = if tool == "fio" {
        Command::new("fio")
    } else {
        let mut c = bin();
        c.args(["run", "--no-store", "--allow-overwrite"]);
        c
    };
    cmd.current_dir(d.path())
        .arg("--output-format=json")
        .arg(&job);
    stdout_json(&mut cmd)
}

/// Both tools' JSON for `text`.
fn both(text: &str) -> [Value; 2] {
    [run("fio", text), run("iolab", text)]
}

/// Job `name`'s object in a tool's JSON.
fn job<'a>(v: &'a Value, name: &str) -> &'a Value {
    json_item(&v["jobs"], "jobname", name)
}

/// `x` within `tol` (a fraction) of `want`.
fn near(what: &str, x: f64, want: f64, tol: f64) {
    assert!(
        (x - want).abs() <= tol * want,
        "{what}: {x} is not within {}% of {want}",
        tol * 100.0
    );
}

/// `x` paced to `cap`: at most `cap` (10% spare, as a pacer rounds), and
/// at least a tenth of it (it ran: a liveness floor no load reaches).
fn paced(what: &str, x: f64, cap: f64) {
    assert!(x <= 1.1 * cap, "{what}: {x} is over its cap {cap}");
    assert!(x >= 0.1 * cap, "{what}: {x} is under a tenth of {cap}");
}

#[test]
fn rate_and_rate_iops_hold_as_in_fio() {
    skip_unless_installed!("fio");
    let text = "[global]\nfilename=f\nrw=randread\nbs=4k\nruntime=1\ntime_based\n\
                [bw]\nrate=512k\n\
                [iops]\nioengine=libaio\niodepth=4\nrate_iops=300\n\
                [mix]\nrw=randrw\nrate=1m,256k\n";
    let [fio, iolab] = both(text);
    // In a mix each direction keeps its own rate: an I/O turns to the
    // other direction when that one is behind, as fio's rate_ddir.
    for (name, dir, key, want) in [
        ("bw", "read", "bw", 512.0),
        ("iops", "read", "iops", 300.0),
        ("mix", "read", "bw", 1024.0),
        ("mix", "write", "bw", 256.0),
    ] {
        for (tool, v) in [("fio", &fio), ("iolab", &iolab)] {
            let x = job(v, name)[dir][key].as_f64().unwrap();
            paced(&format!("{tool}'s {name} {dir} {key}"), x, want);
        }
    }
}

#[test]
fn thinktime_leaves_the_same_ios_in_a_fixed_runtime() {
    skip_unless_installed!("fio");
    // 4 I/Os, then 5 ms of thought: at most 800 I/Os a second, set by the
    // sleeps rather than the I/O; beside it, side by side under the same
    // load, 1 I/O per think time: at most 200. A loaded machine oversleeps
    // both alike, so the second does a quarter of the first's I/Os
    // whatever the load (bench/pacing.py measures the 800).
    let text = "[global]\nfilename=f\nrw=read\nbs=4k\nthinktime=5ms\nruntime=1\ntime_based\n\
                [t]\nthinktime_blocks=4\n[one]\n";
    let [fio, iolab] = both(text);
    for (tool, v) in [("fio", &fio), ("iolab", &iolab)] {
        let ios = |name| job(v, name)["read"]["total_ios"].as_f64().unwrap();
        let (four, one) = (ios("t"), ios("one"));
        paced(&format!("{tool}'s I/Os, 4 per think time"), four, 800.0);
        paced(&format!("{tool}'s I/Os, 1 per think time"), one, 200.0);
        near(&format!("{tool}'s ratio of the two"), four / one, 4.0, 0.25);
    }
}

#[test]
fn ramp_time_ios_are_not_counted() {
    skip_unless_installed!("fio");
    // 400 I/Os a second for 0.5 s of ramp and 1 s of runtime: 400 counted
    // (600 with the ramp's: the cap of 440 tells them apart whatever the
    // load), and logged; the runtime is the second after the ramp (1500
    // ms with it: under 1400 leaves 400 ms for the last I/O to end).
    let text = "[r]\nfilename=f\nrw=randread\nbs=4k\nrate_iops=400\nramp_time=500ms\n\
                runtime=1\ntime_based\nwrite_lat_log=r\n";
    for tool in ["fio", "iolab"] {
        let d = scratch();
        let v = run_in(&d, tool, text);
        let j = job(&v, "r");
        let ios = j["read"]["total_ios"].as_f64().unwrap();
        paced(&format!("{tool}'s I/Os"), ios, 400.0);
        let runtime = j["job_runtime"].as_f64().unwrap();
        assert!(
            (950.0..1400.0).contains(&runtime),
            "{tool}'s runtime: {runtime} ms"
        );
        let log = std::fs::read_to_string(d.path().join("r_lat.1.log")).unwrap();
        near(
            &format!("{tool}'s lines in r_lat.1.log"),
            log.lines().count() as f64,
            ios,
            0.02,
        );
    }
}

/// Issue 33 (3): the syncs of the ramp are not counted either: with
/// `fsync=1` both tools report a sync per write (iolab once kept the ramp's,
/// 10051 syncs for 6770 writes).
#[test]
fn ramp_time_syncs_are_not_counted() {
    skip_unless_installed!("fio");
    let text = "[r]\nfilename=f\nrw=randwrite\nbs=4k\nfsync=1\nrate_iops=500\n\
                ramp_time=300ms\nruntime=500ms\ntime_based\n";
    for tool in ["fio", "iolab"] {
        let v = run(tool, text);
        let j = job(&v, "r");
        let writes = j["write"]["total_ios"].as_i64().unwrap();
        let syncs = j["sync"]["total_ios"].as_i64().unwrap();
        // A floor for "it wrote": 250 at most, fewer when fsync is slow.
        assert!(writes > 20, "{tool}: {writes} writes");
        assert!(
            (writes - syncs).abs() <= 1,
            "{tool}: {writes} writes but {syncs} syncs"
        );
    }
}

#[test]
fn flow_shares_the_ios_as_fio() {
    skip_unless_installed!("fio");
    let text = "[global]\nfilename=f\nbs=4k\nruntime=1\ntime_based\nflow_sleep=100\n\
                [one]\nrw=read\nflow=1\n[three]\nrw=randread\nflow=3\n";
    let [fio, iolab] = both(text);
    let ratio = |v: &Value| {
        job(v, "three")["read"]["total_ios"].as_f64().unwrap()
            / job(v, "one")["read"]["total_ios"].as_f64().unwrap()
    };
    near("fio's ratio", ratio(&fio), 3.0, 0.1);
    near("iolab's ratio", ratio(&iolab), ratio(&fio), 0.1);
}

#[test]
fn rate_iops_min_fails_a_slow_job_as_fio() {
    skip_unless_installed!("fio");
    // 10 I/Os a second against a minimum of 50: fio checks after 2 s.
    let d = scratch();
    let args = [
        "--name=slow",
        "--filename=f",
        "--size=64k",
        "--rw=read",
        "--thinktime=100ms",
        "--rate_iops=100",
        "--rate_iops_min=50",
        "--rate_cycle=200",
        "--runtime=4",
        "--time_based",
    ];
    let (fio_code, fio_err) = fail(Command::new("fio").current_dir(d.path()).args(args));
    assert!(fio_err.contains("rate_iops_min=50 not met"), "{fio_err}");
    let (code, err) = fail(
        bin()
            .current_dir(d.path())
            .args(["run", "--no-store"])
            .args(args),
    );
    assert_eq!((fio_code, code), (1, 1), "{err}");
    assert!(err.contains("rate_iops_min=50 not met"), "{err}");
}

#[test]
fn latency_target_reports_fios_fields() {
    skip_unless_installed!("fio");
    // A synchronous engine stays at depth 1; the search ends after two
    // windows (the step up and the final one).
    let text = "[l]\nfilename=f\nrw=randread\nbs=4k\nlatency_target=10s\n\
                latency_window=200ms\nlatency_percentile=99.9\nruntime=3\ntime_based\n";
    let [fio, iolab] = both(text);
    for key in [
        "latency_depth",
        "latency_target",
        "latency_window",
        "latency_percentile",
    ] {
        assert_eq!(job(&iolab, "l")[key], job(&fio, "l")[key], "{key}");
    }
    for (tool, v) in [("fio", &fio), ("iolab", &iolab)] {
        // Figures of the final window only (200 ms at least), then the job
        // ends: long before its 3 s (the bound is ten windows, a liveness
        // check; bench/pacing.py measures how close to 200 ms it is).
        let runtime = job(v, "l")["job_runtime"].as_f64().unwrap();
        assert!(
            (190.0..2000.0).contains(&runtime),
            "{tool}'s runtime: {runtime} ms"
        );
    }
}

#[test]
fn gtod_reduce_hides_latencies_as_fio() {
    skip_unless_installed!("fio");
    let text = "[g]\nioengine=null\nsize=1m\nrw=randread\ngtod_reduce=1\n";
    let [fio, iolab] = both(text);
    let (f, i) = (&job(&fio, "g")["read"], &job(&iolab, "g")["read"]);
    assert_eq!(i["total_ios"], f["total_ios"]);
    for key in ["lat_ns", "clat_ns", "slat_ns"] {
        assert_eq!(i[key], f[key], "{key}");
    }
    for key in ["bw_samples", "iops_samples"] {
        assert_eq!(i[key], f[key], "{key}");
    }
    // The text output has no latency lines either.
    let d = scratch();
    let job = write_file(d.path(), "job.fio", text);
    for mut cmd in [Command::new("fio"), bin()] {
        if cmd.get_program() != "fio" {
            cmd.args(["run", "--no-store"]);
        }
        let out = stdout_text(cmd.current_dir(d.path()).arg(&job));
        assert!(out.contains("IOPS="), "{out}");
        assert!(
            !out.contains("lat (") && !out.contains("percentiles"),
            "{out}"
        );
    }
}
