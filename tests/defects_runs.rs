//! Issue 14's defects of a run's memory, crashes, signals and results (4,
//! 6, 7, 10, 12): one regression test per defect, named after it. Each
//! failed before the fix; docs/SAFETY.md names them beside the promises
//! they prove.

mod common;
use common::process::{peak_rss, signal_when};
use common::*;
use std::time::Duration;

/// The memory bound iolab promises for these jobs.
const BOUND_KIB: u64 = 64 << 10;

/// Defect 4: a huge `log_avg_msec` overflowed the interval ticker (2^58
/// ms is 0 ns once multiplied by 10^6): memory grew without bound and
/// SIGINT was ignored. Such a value is now refused or saturates; either
/// way memory stays bounded, a day-long interval yields one entry at the
/// end, and a signal still stops the run at once.
#[test]
fn defect_04_huge_log_intervals_stay_bounded() {
    let (d, f) = scratch_file();
    let log = d.path().join("huge");
    let job = |ms: &str, runtime: &str| {
        let opts = format!(
            "--size=4m --rw=read --time_based --runtime={runtime} --no-store \
             --write_bw_log={l} --write_hist_log={l} --log_avg_msec={ms} --log_hist_msec={ms}",
            l = s(&log)
        );
        job("huge", &f, &opts)
    };
    let end = peak_rss(bin().arg("run").args(job("288230376151711744", "1s")));
    assert!(end.peak_kib < BOUND_KIB, "peak {} KiB", end.peak_kib);
    assert!(
        end.code == 0 || (end.code == code::USAGE && end.stderr.contains("log_avg_msec")),
        "{}",
        end.stderr
    );
    let day = "86400000";
    let end = peak_rss(bin().arg("run").args(job(day, "1s")));
    assert_eq!(end.code, 0, "{}", end.stderr);
    assert!(end.peak_kib < BOUND_KIB, "peak {} KiB", end.peak_kib);
    let bw = std::fs::read_to_string(d.path().join("huge_bw.1.log")).unwrap();
    assert_eq!(bw.lines().count(), 1, "one interval, cut at the end: {bw}");
    let args: Vec<String> = ["run".to_string()]
        .into_iter()
        .chain(job(day, "60s"))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let end = signal_when(&args, "", Duration::from_millis(800), libc::SIGINT);
    assert_eq!(end.code, 130, "{}", end.stderr);
    // A liveness bound: stops take milliseconds (8-36 ms in every phase
    // here, debug build), up to 1.3 s with the test at nice 10 beside two
    // busy loops; the second docs/SAFETY.md promises is bench/limits.py's
    // to check. A signal that is not heeded leaves the 60 s run running.
    assert!(
        end.stop_took < Duration::from_secs(15),
        "{:?}",
        end.stop_took
    );
}

/// Defect 6: `repeat=1000` of a small job used 4.2 GB (a full histogram per
/// repetition), and per-I/O latency logs stayed in memory (~40 bytes per
/// I/O). Both now stay under 64 MiB: histograms keep only the buckets that
/// were hit, and per-I/O entries spill to a file beside the log.
#[test]
fn defect_06_memory_is_bounded_by_the_job_not_its_length() {
    let (d, f) = scratch_file();
    let rep = job(
        "rep",
        &f,
        "--size=64k --rw=randread --bs=4k --repeat=1000 --cache=keep",
    );
    let end = peak_rss(with_db(&d.path().join("db")).arg("run").args(&rep));
    assert_eq!(end.code, 0, "{}", end.stderr);
    assert!(
        end.peak_kib < BOUND_KIB,
        "repeat=1000: peak {} KiB",
        end.peak_kib
    );
    // 2.6 million I/Os, each logged: 100 MB in memory before the fix.
    let log = d.path().join("lat");
    let opts = format!(
        "--ioengine=null --size=64m --bs=4k --loops=160 --cache=keep --no-store --write_lat_log={}",
        s(&log)
    );
    let end = peak_rss(bin().arg("run").args(job("lat", &f, &opts)));
    assert_eq!(end.code, 0, "{}", end.stderr);
    assert!(
        end.peak_kib < BOUND_KIB,
        "2.6M logged I/Os: peak {} KiB",
        end.peak_kib
    );
    let text = std::fs::read_to_string(d.path().join("lat_lat.1.log")).unwrap();
    assert_eq!(text.lines().count(), 160 * 16384, "one line per I/O");
    let leftovers: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "spill files removed: {leftovers:?}");
}

/// Defect 7 (mmap): a file truncated under an mmap run killed iolab with
/// SIGBUS. Now the read fails with an error that says what happened.
#[test]
fn defect_07_mmap_of_a_truncated_file_is_an_error_not_a_crash() {
    let (_d, f) = scratch_file();
    lay_out(&f, "16m");
    let args = job(
        "map",
        &f,
        "--size=16m --rw=randread --ioengine=mmap --time_based --runtime=120s --cache=keep --no-store",
    );
    let mut child = bin()
        .arg("run")
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Truncated once the run has the file mapped (its maps say so), not
    // after a guessed 700 ms a loaded machine can outlast.
    let maps = format!("/proc/{}/maps", child.id());
    wait_until(Duration::from_secs(60), "the file mapped", || {
        std::fs::read_to_string(&maps).is_ok_and(|m| m.contains(s(&f)))
    });
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(0)
        .unwrap();
    let t0 = std::time::Instant::now();
    let out = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(
        out.code(),
        Some(code::FAILED),
        "not killed by SIGBUS: {out:?} {err}"
    );
    assert!(err.contains("truncated underneath (SIGBUS)"), "{err}");
    // A liveness bound: the next read faults at once; the run is 120 s.
    assert!(t0.elapsed() < Duration::from_secs(30));
}

/// Defect 7 (signals): some phases ignored SIGINT for seconds (4,000 clones
/// started one by one; the report listed every file under every clone).
/// Every phase now ends promptly on SIGINT (within a second on a quiet
/// machine: bench/limits.py), and leaves no file.
#[test]
fn defect_07_every_phase_ends_within_a_second_of_sigint() {
    let d = scratch();
    let dir = d.path();
    let big = dir.join("big");
    let many = dir.join("many");
    std::fs::create_dir(&many).unwrap();
    let tree = dir.join("tree");
    let db = dir.join("db");
    let lab_out = dir.join("out");
    let free_gib = fs_free(dir) >> 30;
    let mut phases: Vec<(&str, Vec<String>, &str, u64)> = vec![
        (
            "layout of 1000 files and job start",
            sv(&[
                "run",
                "--name=n",
                &format!("--directory={}", s(&many)),
                "--size=4k",
                "--numjobs=1000",
                "--unlink=1",
                "--no-store",
            ]),
            "",
            700,
        ),
        (
            "run",
            sv(&[
                "run",
                "--name=r",
                &format!("--filename={}", s(&dir.join("r"))),
                "--size=16m",
                "--rw=randread",
                "--time_based",
                "--runtime=60s",
                "--unlink=1",
                "--no-store",
            ]),
            "",
            1000,
        ),
        (
            "lab",
            sv(&[
                "lab",
                "prefetch",
                "--quick",
                "--size",
                "256M",
                "--ops",
                "30000",
                "--dir",
                s(dir),
                "--out",
                s(&lab_out),
                "--db",
                s(&db),
            ]),
            "distance 0",
            0,
        ),
        (
            "tree create",
            sv(&[
                "tree",
                "create",
                s(&tree),
                "-d",
                "8",
                "-l",
                "6",
                "-f",
                "4",
                "--db",
                s(&db),
            ]),
            "",
            500,
        ),
    ];
    if free_gib >= 16 {
        phases.insert(
            0,
            (
                "layout of one 8 GiB file",
                sv(&[
                    "run",
                    "--name=l",
                    &format!("--filename={}", s(&big)),
                    "--size=8g",
                    "--no-store",
                ]),
                "",
                300,
            ),
        );
    } else {
        eprintln!("SKIP phase 'layout of one 8 GiB file': {free_gib} GiB free, needs 16");
    }
    for (phase, args, marker, after_ms) in &phases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let end = signal_when(
            &args,
            marker,
            Duration::from_millis(*after_ms),
            libc::SIGINT,
        );
        eprintln!("SIGINT to exit, {phase}: {:?}", end.stop_took);
        assert_eq!(end.code, 130, "{phase}: {}", end.stderr);
        // As above: a liveness bound (bench/limits.py checks the second).
        assert!(
            end.stop_took < Duration::from_secs(15),
            "{phase}: {:?}",
            end.stop_took
        );
    }
    let names = |p: &std::path::Path| std::fs::read_dir(p).unwrap().count();
    assert_eq!(names(&many), 0, "no file of the interrupted layout is left");
    assert!(!big.exists(), "the interrupted layout removed its file");
    assert!(!dir.join("r").exists(), "unlink=1 honoured on SIGINT");
}

/// Defect 10: on tmpfs the prefetch lab claimed "evicted … verified" and
/// reported a false speed-up. A lab that needs eviction now refuses a file
/// system that keeps files only in memory.
#[test]
fn defect_10_lab_says_when_eviction_cannot_work() {
    let d = scratch();
    let Some(fs) = small_tmpfs(d.path(), "mem", "64m", "defect_10 (tmpfs)") else {
        return;
    };
    let out = d.path().join("out");
    for lab in ["prefetch", "cached-reads", "log-scan"] {
        let err = fails_with(
            bin()
                .args(["lab", lab, "--quick", "--size", "8M", "--no-store"])
                .args(["--dir", s(&fs.0), "--out", s(&out)]),
            code::USAGE,
            "is on tmpfs",
        );
        assert!(err.contains("pages cannot be evicted"), "{lab}: {err}");
    }
}

/// Defect 10: `lab prefetch --size 1M --ops 4000` silently did 128 reads.
/// The lab now says it clamped --ops to the blocks the file has (a block
/// read twice would hit the cache), and enlarges its own file to fit.
#[test]
fn defect_10_lab_honours_or_clamps_ops() {
    let d = scratch();
    let out = d.path().join("out");
    let lab = |extra: &[&str]| {
        let mut c = bin();
        c.args(["lab", "prefetch", "--quick", "--no-store", "--dir"])
            .args([s(d.path()), "--out", s(&out)])
            .args(extra);
        succeed_text(&mut c)
    };
    let (text, err) = lab(&["--size", "1M", "--ops", "4000"]);
    assert!(text.contains("--ops 4000 clamped to 128"), "{text}");
    assert!(err.contains("clamped to 128"), "{err}");
    assert!(text.contains("128 per run"), "{text}");
    let (text, _) = lab(&["--ops", "40000"]);
    assert!(text.contains("file enlarged to 312 MiB"), "{text}");
    assert!(text.contains("40000 per run"), "{text}");
}

/// Defect 12: with `--output-format=json` a failed run printed nothing on
/// stdout. It now prints one JSON object with the error and its exit code.
#[test]
fn defect_12_failed_json_run_prints_an_error_object() {
    let (_d, f) = scratch_file();
    for (args, exit, kind) in [
        (vec!["run", "--name=x", "--size=12q"], code::USAGE, "usage"),
        (
            vec![
                "run",
                "--name=x",
                "--filename=/proc/version",
                "--rw=write",
                "--size=4k",
            ],
            code::REFUSED,
            "refused",
        ),
    ] {
        let out = bin()
            .args(&args)
            .args(["--output-format=json", "--no-store"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(exit));
        let v = parse_json(&out.stdout);
        assert_eq!(v["error"]["exit_code"], exit, "{v}");
        assert_eq!(v["error"]["kind"], kind, "{v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
    }
    // A run that printed its (partial) result adds no second document.
    let out = bin()
        .arg("run")
        .args(job("ok", &f, "--size=64k --no-store --output-format=json"))
        .output()
        .unwrap();
    assert!(parse_json(&out.stdout)["error"].is_null());
}

/// Defect 12: `iolab ... | head` panicked on the closed pipe. It now ends
/// quietly, and the run is still stored.
#[test]
fn defect_12_closed_stdout_ends_quietly() {
    let (d, f) = scratch_file();
    let db = d.path().join("db");
    let cases = [
        sv(&["lab", "list"]),
        sv(&["list", "engines"]),
        ["run".to_string()]
            .into_iter()
            .chain(job("p", &f, "--size=64k --repeat=3"))
            .collect(),
    ];
    for args in &cases {
        let mut child = with_db(&db)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    }
    let hist = stdout_text(with_db(&db).args(["history", "--format", "csv"]));
    assert_eq!(hist.lines().count(), 2, "the run was stored: {hist}");
}

fn sv(a: &[&str]) -> Vec<String> {
    a.iter().map(|x| x.to_string()).collect()
}

/// Free bytes of the file system holding `p`.
fn fs_free(p: &std::path::Path) -> u64 {
    let c = std::ffi::CString::new(s(p)).unwrap();
    // SAFETY: an all-zero statvfs is valid; statvfs fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_bavail * st.f_frsize
}
