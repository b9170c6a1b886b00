//! `iolab exec` and `iolab compare --exec` with real programs (cat, dd,
//! rsync, sh): cold runs read from the device and miss, warm runs hit; the
//! bytes and calls are the program's; failures, Ctrl-C, storing and the
//! commands that read stored runs; flamegraphs Chromium renders.

mod common;

use common::exec::*;
use common::*;

#[test]
fn cold_cat_reads_the_device_and_misses_warm_cat_hits() {
    let _t = turn();
    let d = scratch();
    let f = data(d.path(), "big.log", 8);
    let size = 8u64 << 20;
    let pages = size / 4096;
    let on_disk = !iolab::counters::disks_of(std::slice::from_ref(&f)).is_empty();
    for (cache, cold) in [("cold", true), ("warm", false), ("cold", true)] {
        let v = exec_json(
            None,
            &["--cache", cache, "--files", s(&f), "--", "cat", s(&f)],
        );
        let r = &v["runs"][0];
        assert_eq!(r["exit_status"], 0, "{r}");
        let c = &r["cache"];
        assert_eq!(u(&c["pages"]), pages);
        let io = &r["io"];
        // cat read the whole file, and little else (the loader's and
        // locale's reads: within a page per file it opened).
        let extra = u(&io["rchar"]) - size;
        assert!(extra <= 4 * 4096, "rchar {} for {size}", io["rchar"]);
        assert_eq!(u(&io["wchar"]), size, "cat wrote it to /dev/null");
        if cold {
            assert_eq!(u(&c["before"]), 0, "{c}");
            assert_eq!(u(&c["misses"]), pages, "{c}");
            assert_eq!(u(&c["hits"]), 0, "{c}");
            // The file came from storage; a cold locale or loader file
            // cat also opened may add a page or two (CI saw +4 KiB).
            let stored = u(&io["read_bytes"]);
            assert!(
                (size..=size + 4 * 4096).contains(&stored),
                "read from storage: {io}"
            );
            if on_disk {
                assert!(dev_reads(r) > 0, "cold: device reads {r}");
            }
        } else {
            assert_eq!(u(&c["before"]), pages, "{c}");
            assert_eq!(u(&c["misses"]), 0, "{c}");
            assert_eq!(u(&c["hits"]), pages, "{c}");
            assert_eq!(u(&io["read_bytes"]), 0, "{io}");
            if on_disk {
                assert_eq!(dev_reads(r), 0, "warm: no device reads {r}");
            }
        }
        // The figures compare reads: one sample, its time the run's wall time.
        let rep = &v["summary"]["reps"][0];
        assert_eq!(
            rep["time_s"].as_f64().unwrap(),
            u(&r["wall_ns"]) as f64 / 1e9
        );
        assert_eq!(
            rep["cache_misses"].as_f64().unwrap(),
            u(&c["misses"]) as f64
        );
    }
    if !on_disk {
        eprintln!("note: scratch is on no block device: device reads not checked");
    }
}

#[test]
fn the_command_output_passes_through_or_goes_to_stderr_for_json() {
    let _t = turn();
    let (out, err) = succeed_text(bin().args(["exec", "--no-store", "--", "echo", "hello"]));
    assert!(out.starts_with("hello\n"), "{out}");
    assert!(out.contains("exec: echo hello"), "{out}");
    assert_eq!(err, "");
    let (out, err) =
        succeed_text(bin().args(["exec", "--no-store", "-f", "json", "--", "echo", "hi"]));
    assert_eq!(err, "hi\n", "the command's stdout goes to stderr");
    let v = parse_json(out.as_bytes());
    assert_eq!(v["command"][0], "echo");
    let (out, err) = succeed_text(bin().args([
        "-q",
        "exec",
        "--no-store",
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2",
    ]));
    assert!(
        !out.contains("out\n") && err.is_empty(),
        "-q discards: {out} {err}"
    );
}

#[test]
fn compare_exec_of_dd_block_sizes_gives_a_verdict_and_the_counters() {
    let _t = turn();
    let d = scratch();
    let f = data(d.path(), "f", 16);
    let db = d.path().join("t.db");
    let cmd = |bs: &str| format!("dd if={} of=/dev/null bs={bs}", s(&f));
    let out = stdout_text(
        with_db(&db)
            .args(["-q", "compare", "--exec", &cmd("4k"), &cmd("1M")])
            .args(["--repeat", "3", "--cache", "cold", "--files", s(&f)]),
    );
    assert!(out.contains("verdict on time (s): "), "{out}");
    assert!(
        out.contains("times faster than") || out.contains("times slower than"),
        "{out}"
    );
    // dd's calls: 4096 reads of 4 KiB against 16 of 1 MiB (and a few of
    // the loader's); the same bytes from storage, the same misses.
    for row in [
        "ops",
        "read from storage",
        "cache misses",
        "CPU sys (s)",
        "time (s)",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(row)),
            "no {row} row: {out}"
        );
    }
    let misses = out.lines().find(|l| l.starts_with("cache misses")).unwrap();
    assert!(
        misses.contains("4096") && misses.contains("same"),
        "{misses}"
    );
    // Each side is stored as one exec with three runs; compare reads them back.
    let h = stdout_json(with_db(&db).args(["history", "-f", "json"]));
    let runs = h.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{h}");
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    assert_eq!(v["command"][2], cmd("4k"));
    let again = stdout_text(with_db(&db).args(["compare", "1", "2", "--all"]));
    assert!(again.contains("cache misses"), "{again}");
}

#[test]
fn a_failed_run_is_shown_stored_and_left_out_of_the_figures() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let marker = d.path().join("m");
    // The first run fails (exit 3), the others succeed.
    let script = format!("test -e {0} || {{ touch {0}; exit 3; }}", s(&marker));
    let out = with_db(&db)
        .args(["-q", "exec", "--repeat", "3", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    // iolab exits 1, not the program's 3 (iolab's code for "no space"):
    // the program's status is in the message.
    assert_eq!(
        out.status.code(),
        Some(code::FAILED),
        "iolab's own exit code"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 of 3 runs") && err.contains("exit status 3"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("exit 3") && text.contains("of 2 successful runs"),
        "{text}"
    );
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    assert_eq!(v["runs"][0]["exit_status"], 3);
    assert_eq!(v["summary"]["reps"].as_array().unwrap().len(), 2);
    assert_eq!(v["iolab_run"]["status"], "complete");
    // A command that cannot start is an error before any run.
    fails_with(
        bin().args(["exec", "--no-store", "--", "/no/such/tool"]),
        1,
        "cannot start /no/such/tool",
    );
}

#[test]
fn ctrl_c_stops_the_command_and_keeps_the_runs_so_far() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let marker = d.path().join("m");
    // Run 1 ends at once; run 2 sleeps (in a child of the shell).
    let script = format!(
        "if [ -e {0} ]; then sleep 37.25; else touch {0}; fi",
        s(&marker)
    );
    let child = with_db(&db)
        .args(["-q", "exec", "--repeat", "5", "--", "sh", "-c", &script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Signalled once run 2's sleep runs (seen by its command line), not
    // after a guessed half second a loaded machine can outlast.
    let sleeping = || {
        let p = std::process::Command::new("pgrep")
            .args(["-f", "^sleep 37.25$"])
            .output()
            .unwrap();
        !p.stdout.is_empty()
    };
    wait_until(std::time::Duration::from_secs(60), "run 2 sleeps", sleeping);
    assert!(marker.exists());
    let t0 = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    // A liveness bound: the stop takes milliseconds, the sleep 37 s.
    assert!(t0.elapsed().as_secs() < 20, "stopped at once");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = std::process::Command::new("pgrep")
        .args(["-f", "^sleep 37.25$"])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "the shell's child was stopped too");
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{v}");
    assert_eq!(runs[0]["exit_status"], 0);
    assert_eq!(runs[1]["interrupted"], true);
    assert_eq!(v["iolab_run"]["status"], "interrupted");
    assert_eq!(v["summary"]["reps"].as_array().unwrap().len(), 1);
}

#[test]
fn rsync_of_a_tree_is_stored_and_read_back_by_history_show_report_compare() {
    skip_unless_installed!("rsync");
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let src = d.path().join("src");
    std::fs::create_dir_all(src.join("sub")).unwrap();
    for i in 0..20 {
        data(
            &src.join(if i % 2 == 0 { "." } else { "sub" }),
            &format!("f{i}"),
            1,
        );
    }
    let dst = d.path().join("dst");
    let args = |n: &str| {
        vec![
            "-q".to_string(),
            "exec".into(),
            "--label".into(),
            n.into(),
            "--cache".into(),
            "cold".into(),
            "--files".into(),
            s(&src).into(),
            "--".into(),
            "rsync".into(),
            "-a".into(),
            "--delete".into(),
            format!("{}/", s(&src)),
            format!("{}/", s(&dst)),
        ]
    };
    succeed(with_db(&db).args(args("first")));
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    let r = &v["runs"][0];
    assert_eq!(r["cache"]["files"], 20);
    assert_eq!(
        u(&r["cache"]["misses"]),
        20 * 256,
        "every page of the tree came in"
    );
    assert!(u(&r["io"]["wchar"]) >= 20 << 20, "{r}");
    assert!(dst.join("sub/f19").exists());
    succeed(with_db(&db).args(args("second")));
    let hist = stdout_text(with_db(&db).args(["history"]));
    assert!(hist.contains("exec rsync -a --delete"), "{hist}");
    let show = stdout_text(with_db(&db).args(["show", "2"]));
    assert!(
        show.contains("exec: rsync") && show.contains("cache cold on 20 files"),
        "{show}"
    );
    let page = d.path().join("r.html");
    succeed(with_db(&db).args(["report", "1", "2", "-o", s(&page)]));
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("exec: rsync")
    );
    let cmp = stdout_text(with_db(&db).args(["compare", "first", "second"]));
    assert!(cmp.contains("verdict"), "{cmp}");
}

#[test]
fn wrong_arguments_are_refused_before_anything_runs() {
    let exec = |args: &str| -> Vec<String> {
        let mut v = vec!["exec".to_string(), "--no-store".into()];
        v.extend(args.split_whitespace().map(String::from));
        v
    };
    for (args, want) in [
        ("", "no command"),
        ("--cache cold -- true", "needs --files PATH"),
        ("--files /no/such/file -- true", "--files /no/such/file"),
        ("--repeat 0 -- true", "--repeat 0"),
        ("--flamegraph x.png -- true", "SVG"),
        ("-f csv -- true", "invalid value 'csv'"),
        ("--disk /tmp -- true", "not a mounted iolab disk"),
    ] {
        fails_with(bin().args(exec(args)), 2, want);
    }
    fails_with(
        bin().args(["compare", "1", "2", "--cache", "cold"]),
        2,
        "add --exec",
    );
}

#[test]
fn direct_reads_of_a_cached_file_are_no_hits_and_secrets_are_not_kept() {
    let _t = turn();
    let d = scratch();
    let f = data(d.path(), "f", 4);
    let v = exec_json(
        None,
        &[
            "--cache",
            "warm",
            "--files",
            s(&f),
            "--",
            "dd",
            &format!("if={}", s(&f)),
        ]
        .into_iter()
        .chain(["of=/dev/null", "bs=1M", "iflag=direct"])
        .collect::<Vec<_>>(),
    );
    let c = &v["runs"][0]["cache"];
    // O_DIRECT passes the cache: no misses, and no hits but the few pages
    // of the loader's reads (the estimate counts every read).
    assert_eq!(u(&c["misses"]), 0, "{c}");
    assert!(u(&c["hits"]) <= 4, "not its 1024 pages: {c}");
    let out = bin()
        .env("IOLAB_TEST_API_TOKEN", "hunter2")
        .env("IOLAB_TEST_PLAIN", "visible")
        .args(["-q", "exec", "--no-store", "-f", "json", "--", "true"])
        .output()
        .unwrap();
    let v = parse_json(&out.stdout);
    assert_eq!(v["env"]["IOLAB_TEST_API_TOKEN"], "<redacted>");
    assert_eq!(v["env"]["IOLAB_TEST_PLAIN"], "visible");
    let cpu = &v["runs"][0]["rusage"];
    let wall_us = u(&v["runs"][0]["wall_ns"]) / 1000;
    // Its CPU is the program's (the held start taken out): within its
    // wall time for a single-threaded `true`, up to a tick of rounding.
    assert!(
        u(&cpu["user_us"]) + u(&cpu["sys_us"]) <= wall_us + 1000,
        "{cpu} {wall_us}"
    );
}

#[test]
fn the_seed_004_example_prints_the_scan_table() {
    skip_unless_installed!("bash");
    let _t = turn();
    let d = scratch();
    let db = d.path().join("seed004.db");
    let out = std::process::Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/seed-004-scan.sh"
    ))
    .arg(&db)
    .env("IOLAB", env!("CARGO_BIN_EXE_iolab"))
    .env("SCAN_MIB", "4")
    .env("SCAN_REPEAT", "1")
    .env("SCAN_DIR", d.path())
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("| buffer | cold time (ms)"), "{text}");
    for bs in ["| 4k |", "| 64k |", "| 1m |"] {
        assert!(text.contains(bs), "no row {bs}: {text}");
    }
    let h = stdout_json(with_db(&db).args(["history", "-f", "json"]));
    assert_eq!(h.as_array().unwrap().len(), 6, "3 buffers x cold, warm");
}
