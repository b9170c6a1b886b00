//! `iolab disk` against the real thing: a FUSE daemon, a loop device with
//! direct I/O, ext4 (and xfs), mounted; measured with iolab's own runs.
//! Every test checks that nothing is left behind (mounts, loop devices,
//! run directory). Needs root, /dev/fuse and loop devices (CI has them).

mod common;

use common::disk::{TestDisk, assert_clean, can};
use common::*;
use serde_json::Value;

/// `iolab run` of O_DIRECT 4 KiB random reads of `f` with `opts`: the
/// read object of its JSON.
fn reads(f: &std::path::Path, opts: &str) -> Value {
    let args = job(
        "r",
        f,
        &format!("--size=16m --rw=randread --bs=4k --direct=1 {opts}"),
    );
    run_json(&args)["jobs"][0]["read"].clone()
}

fn mean_us(r: &Value) -> f64 {
    r["clat_ns"]["mean"].as_f64().unwrap() / 1e3
}

/// Tries `check` up to five times: a measurement disturbed by other work
/// on the machine (a virtual CPU waking late) is only ever slower, so one
/// clean attempt is the disk's own figure. Panics with every attempt's
/// report.
fn within_tries(what: &str, mut check: impl FnMut() -> Result<(), String>) {
    let mut seen = Vec::new();
    for _ in 0..5 {
        match check() {
            Ok(()) => return,
            Err(e) => seen.push(e),
        }
    }
    panic!("{what}: {}", seen.join("; "));
}

#[test]
fn delays_land_within_5_percent_and_overlap_at_depth() {
    if !can("delays_land_within_5_percent_and_overlap_at_depth") {
        return;
    }
    let d = TestDisk::up(&["--size", "128M"]);
    let f = d.file("f");
    lay_out(&f, "16m");
    // The baseline idles as long between I/Os as the delayed run does
    // (thinktime = the delay): waking a virtual CPU that halted for a
    // millisecond costs this VM about 100 us along the chain (application,
    // loop worker, daemon), which a slow real device would cost as well. Back
    // to back, `--delay 0` reads never let the CPUs halt (25 us here), and
    // the difference would charge the host's wake-up to the injector (CI saw
    // 1055-1068 us for 1 ms, all of it that).
    for (delay, n) in [("1ms", "400"), ("10ms", "50")] {
        let want = if delay == "1ms" { 1000.0 } else { 10_000.0 };
        within_tries(&format!("--delay {delay}"), || {
            d.disk("set", &[]);
            let base = mean_us(&reads(&f, &format!("--number_ios={n} --thinktime={delay}")));
            d.disk("set", &["--delay", delay]);
            let got = mean_us(&reads(&f, &format!("--number_ios={n}"))) - base;
            match (got - want).abs() <= 0.05 * want {
                true => Ok(()),
                false => Err(format!(
                    "mean {got:.0} us over --delay 0 with as much idling ({base:.0} us), not {want} us"
                )),
            }
        });
    }
    // Depth 32 overlaps the delays as a real device does: a device that
    // served them one after another would give 1x. The test's debug build
    // reached 12-15x in a loaded CI run; the release build's 20x and more
    // is measured by bench/disk.py, not asserted here (no timed thresholds
    // in tests beyond what proves the overlap).
    within_tries("depth 32 at 1 ms", || {
        d.disk("set", &["--delay", "1ms"]);
        let qd1 = reads(&f, "--number_ios=300")["iops"].as_f64().unwrap();
        let qd32 = reads(&f, "--number_ios=4000 --ioengine=io_uring --iodepth=32")["iops"]
            .as_f64()
            .unwrap();
        match qd32 >= 8.0 * qd1 {
            true => Ok(()),
            false => Err(format!("{qd32:.0} IOPS at depth 32, {qd1:.0} at depth 1")),
        }
    });
    // At least one attempt of each: 400 reads at delay 0 and 400 at 1 ms,
    // 50 at delay 0 and 50 at 10 ms, 300 and 4000 at 1 ms.
    let c = &d.status()["counters"];
    assert!(c["ops"][0].as_u64().unwrap() >= 5200, "{c}");
    assert!(c["delay_ns"][0].as_u64().unwrap() >= 5_200_000_000, "{c}");
    d.down();
}

#[test]
fn distributions_keep_their_mean_and_spread() {
    if !can("distributions_keep_their_mean_and_spread") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M", "--seed", "7"]);
    let f = d.file("f");
    lay_out(&f, "16m");
    // (rule, mean, standard deviation) in us; jitter is uniform in 2 ms ± 1 ms.
    let cases = [
        ("normal:2ms,500us", 2000.0, 500.0, "500"),
        ("2ms~1ms", 2000.0, 1000.0 / 3f64.sqrt(), "500"),
        ("lognormal:2ms,1ms", 2000.0, 1000.0, "1000"),
    ];
    // What the disk injected into reads since `before`: (n, mean, sd) in us.
    let injected = |before: &Value| {
        let c = &d.status()["counters"];
        let diff = |k: &str| c[k][0].as_f64().unwrap() - before[k][0].as_f64().unwrap();
        let n = diff("ops");
        let mean = diff("delay_ns") / n;
        let sd = (diff("delay_sq") / n - mean * mean).max(0.0).sqrt();
        (n, mean / 1e3, sd / 1e3)
    };
    for (rule, mean, sd, n) in cases {
        d.disk("set", &["--delay", rule]);
        let before = d.status()["counters"].clone();
        reads(&f, &format!("--number_ios={n}"));
        // The delays drawn: the distribution asked for (no timing involved).
        let (ops, got_mean, got_sd) = injected(&before);
        assert!(ops >= n.parse::<f64>().unwrap(), "{ops} reads");
        assert!(
            (got_mean - mean).abs() <= 0.1 * mean && (got_sd - sd).abs() <= 0.1 * sd,
            "{rule}: injected mean {got_mean:.0} us sd {got_sd:.0} us, not {mean:.0} and {sd:.0}"
        );
        // ... and what the program sees: its mean latency grows by the mean.
        within_tries(rule, || {
            d.disk("set", &[]);
            let b = reads(&f, "--number_ios=1000");
            d.disk("set", &["--delay", rule]);
            let got = mean_us(&reads(&f, &format!("--number_ios={n}"))) - mean_us(&b);
            match (got - mean).abs() <= 0.1 * mean {
                true => Ok(()),
                false => Err(format!("mean {got:.0} us over --delay 0, not {mean:.0}")),
            }
        });
    }
    d.down();
}

#[test]
fn bandwidth_cap_paces_reads() {
    if !can("bandwidth_cap_paces_reads") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M", "--bw", "read=20MiB"]);
    let f = d.file("f");
    lay_out(&f, "16m");
    let args = job("b", &f, "--size=16m --rw=read --bs=128k --direct=1");
    let bw = run_json(&args)["jobs"][0]["read"]["bw_bytes"]
        .as_f64()
        .unwrap()
        / 1048576.0;
    // Faster than the cap is impossible; slower only under load.
    assert!(
        (17.0..=20.6).contains(&bw),
        "{bw:.1} MiB/s under a 20 MiB/s cap"
    );
    d.down();
}

#[test]
fn eio_on_1_percent_of_reads_is_counted_with_continue_on_error() {
    if !can("eio_on_1_percent_of_reads_is_counted_with_continue_on_error") {
        return;
    }
    let d = TestDisk::up(&["--size", "64M"]);
    let f = d.file("f");
    lay_out(&f, "8m");
    d.disk("set", &["--fail", "read=EIO@0.01"]);
    let args = job(
        "e",
        &f,
        "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=2000 --continue_on_error=read",
    );
    let v = d.run_json(&args);
    let j = &v["jobs"][0];
    let errs = j["total_err"].as_u64().unwrap();
    // 1% of 2000: 20, binomial sd 4.5.
    assert!((5..=45).contains(&errs), "{errs} errors");
    assert_eq!(j["first_error"], libc::EIO);
    assert_eq!(j["read"]["total_ios"].as_u64().unwrap() + errs, 2000);
    assert_eq!(counters(&v)["injected"]["read_errors"].as_u64(), Some(errs));
    // The disk counted them too, and still serves.
    let st = d.status();
    assert_eq!(st["daemon"], "running");
    assert!(st["counters"]["errors"][0].as_u64().unwrap() >= errs);
    // fio, the reference, on the same disk and rule: the same kind of count.
    if have(
        "fio",
        "eio_on_1_percent_of_reads_is_counted_with_continue_on_error",
    ) {
        let mut fio_args = args.clone();
        fio_args[0] = "--name=fio".into();
        let fj = fio_json(&fio_args);
        let fj = &fj["jobs"][0];
        assert!(
            (5..=45).contains(&fj["total_err"].as_u64().unwrap()),
            "{fj}"
        );
        assert_eq!(fj["first_error"], j["first_error"]);
        assert_eq!(fj["error"], j["error"]);
    }
    // Without continue_on_error the first one stops the run (exit 1).
    let args = job(
        "s",
        &f,
        "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=4000",
    );
    let (code, err) = run_err(&args);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("Input/output error"), "{err}");
    d.down();
}

#[test]
fn enospc_after_n_bytes_stops_a_write_job_and_keeps_its_run() {
    if !can("enospc_after_n_bytes_stops_a_write_job_and_keeps_its_run") {
        return;
    }
    let (_db_dir, db) = scratch_db();
    let d = TestDisk::up(&["--size", "64M"]);
    let f = d.file("f");
    lay_out(&f, "8m");
    d.disk("set", &["--fail", "write=ENOSPC@after=4MiB"]);
    let out = with_db(&db)
        .env("IOLAB_RUN_DIR", &d.run)
        .args(["run", "--name=w", &format!("--filename={}", s(&f))])
        .args([
            "--size=8m",
            "--rw=write",
            "--bs=64k",
            "--direct=1",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(code::NO_SPACE));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device"), "{err}");
    let v = parse_json(&out.stdout);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 4 << 20);
    // The run is stored, marked failed, with the bytes it wrote.
    let status: String = query_one(&db, "SELECT status FROM runs");
    assert_eq!(status, "failed");
    d.down();
}

#[test]
fn crash_keeps_exactly_what_was_fsynced() {
    if !can("crash_keeps_exactly_what_was_fsynced") {
        return;
    }
    // No periodic journal commit: only fsync makes data durable.
    let d = TestDisk::up(&["--size", "64M", "--mount-options", "commit=300"]);
    let kept: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(d.file("kept"), &kept).unwrap();
    std::fs::File::open(d.file("kept"))
        .unwrap()
        .sync_all()
        .unwrap();
    // Reaches the device (O_DIRECT) but no flush follows: not durable.
    let dd = std::process::Command::new("dd")
        .args(["if=/dev/urandom", &format!("of={}", s(&d.file("kept")))])
        .args([
            "bs=64k",
            "count=1",
            "oflag=direct",
            "conv=notrunc",
            "status=none",
        ])
        .status()
        .unwrap();
    assert!(dd.success());
    assert!(d.status()["unflushed"].as_u64().unwrap() >= 65536);
    // Never written back: in the page cache only.
    std::fs::write(d.file("lost"), vec![7u8; 1 << 20]).unwrap();
    let said = d.disk("crash", &[]);
    assert!(said.contains("mounted again"), "{said}");
    assert_eq!(std::fs::read(d.file("kept")).unwrap(), kept);
    assert!(
        !d.file("lost").exists(),
        "an unsynced file survived the crash"
    );
    // The disk goes on working after the crash.
    std::fs::write(d.file("after"), b"x").unwrap();
    d.down();
}

#[test]
fn runs_store_the_disk_rules_and_counters() {
    if !can("runs_store_the_disk_rules_and_counters") {
        return;
    }
    let (_db_dir, db) = scratch_db();
    let d = TestDisk::up(&["--size", "64M", "--delay", "read=1ms"]);
    let f = d.file("f");
    lay_out(&f, "4m");
    let args = job(
        "r",
        &f,
        "--size=4m --rw=randread --bs=4k --direct=1 --number_ios=100",
    );
    succeed(
        with_db(&db)
            .env("IOLAB_RUN_DIR", &d.run)
            .arg("run")
            .args(&args),
    );
    let shown = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    let env = &shown["iolab_run"]["environment"]["files"][0];
    assert_eq!(
        env["injected"],
        "iolab disk, block layer, ext4: --delay read=1ms"
    );
    let c = &shown["jobs"][0]["iolab"]["counters"]["injected"];
    assert_eq!(c["read_ops"], 100, "{c}");
    assert_eq!(c["read_delay_ns"], 100_000_000, "{c}");
    assert_eq!(c["read_errors"], 0, "{c}");
    // The text report says it too.
    let text = stdout_text(with_db(&db).args(["show", "1"]));
    assert!(text.contains("--delay read=1ms"), "{text}");
    d.down();
}

#[test]
fn lab_log_scan_repeats_the_scans_on_slow_disks() {
    if !can("lab_log_scan_repeats_the_scans_on_slow_disks") {
        return;
    }
    // Holds the turn: the lab's own disk is timed too.
    let d = TestDisk::new();
    let scratch = scratch();
    let db = scratch.path().join("lab.db");
    let out = with_db(&db)
        .env("IOLAB_RUN_DIR", &d.run)
        .args([
            "lab", "log-scan", "--quick", "--size", "4M", "--delay", "1ms",
        ])
        .args([
            "--dir",
            s(scratch.path()),
            "-o",
            s(&scratch.path().join("out")),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("On injected slow disks (iolab disk):"),
        "{text}"
    );
    // delay bs mode n cold sd warm sd r/s rareq-sz r_await %util
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("1ms "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 6, "3 sizes x 2 modes:\n{text}");
    let row = |bs: &str, mode: &str| {
        rows.iter()
            .find(|r| r[1] == bs && r[2] == mode)
            .unwrap_or_else(|| panic!("{text}"))
    };
    let num = |c: &str| -> f64 { c.parse().unwrap_or_else(|_| panic!("{c}: {text}")) };
    for r in &rows {
        assert_eq!(r.len(), 12, "{r:?}");
        // Repeated until the spread is known: never one pass a side.
        let n: usize = r[3].parse().unwrap_or_else(|_| panic!("n: {r:?}"));
        assert!(n >= 3, "{r:?}");
        // iostat's four columns, with two decimals.
        for c in &r[8..] {
            assert_eq!(c.split_once('.').map(|(_, f)| f.len()), Some(2), "{r:?}");
        }
    }
    // 4 KiB per request of a little over 1 ms: under 4 MiB/s.
    let cold = num(row("4k", "O_DIRECT")[4]);
    assert!(cold < 4.0 && cold > 1.0, "{text}");
    // Warm buffered reads come from the page cache: far faster.
    assert!(num(row("1m", "buffered")[6]) > 50.0, "{text}");
    // The sentence names a faster side only with a significant test, and
    // the side it names is the faster one in the table.
    let said = text
        .lines()
        .find(|l| l.contains("On the injected disks, "))
        .unwrap_or_else(|| panic!("{text}"));
    let (b, o) = (num(row("1m", "buffered")[4]), num(row("1m", "O_DIRECT")[4]));
    if said.contains("at 1ms buffered 1m scans were faster than O_DIRECT") {
        assert!(b > o, "{said}");
        assert!(
            said.contains("readahead keeps requests in flight"),
            "{said}"
        );
    } else if said.contains("at 1ms O_DIRECT 1m scans were faster") {
        assert!(o > b, "{said}");
    } else {
        assert!(said.contains("no significant difference at 1ms"), "{said}");
        assert!(!said.contains("readahead"), "{said}");
    }
    assert!(said.contains("p=") || said.contains("p<0.001"), "{said}");
    // --size is the injected files' size too: every stored pass of the
    // 1m buffered scans read 4 files of 4 MiB twice, and there were several.
    let h =
        stdout_json(with_db(&db).args(["history", "--job", "scan-1ms-1m-buffered", "-f", "json"]));
    let runs = h.as_array().unwrap();
    assert!(runs.len() >= 3, "{h}");
    for r in runs {
        assert_eq!(r["read_bytes"], 2 * 4 * (4 << 20), "{r}");
    }
    // --delay on a lab that does not inject latency is refused.
    fails_with(
        d.cmd().args(["lab", "prefetch", "--delay", "1ms"]),
        code::USAGE,
        "does not inject latency",
    );
    assert_clean(&scratch.path().join("iolab-scratch"), &d.run);
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(s(scratch.path())), "{mounts}");
}

#[test]
fn hist_replays_the_latencies_of_a_stored_run() {
    if !can("hist_replays_the_latencies_of_a_stored_run") {
        return;
    }
    let (_db_dir, db) = scratch_db();
    let d = TestDisk::up(&["--size", "64M", "--delay", "read=lognormal:2ms,1ms"]);
    let f = d.file("f");
    lay_out(&f, "8m");
    let args = job(
        "r",
        &f,
        "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=400",
    );
    let mean = |v: &Value| v["jobs"][0]["read"]["lat_ns"]["mean"].as_f64().unwrap() / 1e3;
    let run = || {
        stdout_json(
            with_db(&db)
                .arg("run")
                .args(&args)
                .arg("--output-format=json"),
        )
    };
    let measured = mean(&run());
    // The stored run's latencies become the disk's delays.
    let said = d.disk("set", &["--delay", "read=hist:1", "--db", s(&db)]);
    assert!(said.contains("--delay read=quantiles:0="), "{said}");
    within_tries("hist:1", || {
        // Replayed delays add the disk's own time once more: take it off.
        d.disk("set", &[]);
        let own = mean(&run());
        d.disk("set", &["--delay", "read=hist:1", "--db", s(&db)]);
        let replayed = mean(&run()) - own;
        match (replayed - measured).abs() <= 0.1 * measured {
            true => Ok(()),
            false => Err(format!(
                "{replayed:.0} us replayed (less {own:.0} us of the disk's own), {measured:.0} us measured"
            )),
        }
    });
    let (code, err) = fail(d.cmd().args([
        "disk",
        "set",
        s(&d.dir),
        "--delay",
        "hist:99",
        "--db",
        s(&db),
    ]));
    assert_eq!(code, code::USAGE, "{err}");
    assert!(err.contains("no run 99"), "{err}");
    d.down();
}
