//! `iolab trace` at its edges, mostly with the strace tracer and `trace
//! import` (no root needed): default trace names that never collide,
//! traces of different programs not compared unasked, only the formats
//! traces have offered, a file name with a newline kept on one table row,
//! an export that would write the traced files, and (eBPF) a started
//! command's inherited files named.

mod common;

use common::traced::*;
use common::*;
use std::path::Path;

/// `iolab trace import LOG` stored in `db`, its trace file beside the log.
fn import_stored(db: &Path, log: &Path) {
    let (_, err) = succeed_text(with_db(db).args(["trace", "import"]).arg(log));
    assert_eq!(err, "");
}

#[test]
fn default_event_trace_names_never_collide() {
    skip_unless_installed!("strace");
    let dir = scratch();
    // Three traces in about a second: without -o each gets its own file.
    for _ in 0..3 {
        let (_, err) = succeed_text(
            bin()
                .current_dir(dir.path())
                .args(["trace", "--tracer", "strace", "--events", "--no-store"])
                .args(["--", "true"]),
        );
        assert_eq!(err, "");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("iolab-trace-") && n.ends_with(".trace"))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn traces_of_different_programs_or_a_trace_and_a_run_are_not_compared_unasked() {
    skip_unless_installed!("strace");
    let (dir, f) = data(64);
    let db = dir.path().join("t.db");
    let cat = strace(dir.path(), FULL, &["cat", s(&f)]);
    let cat2 = dir.path().join("cat2.log");
    std::fs::copy(&cat, &cat2).unwrap();
    import_stored(&db, &cat);
    import_stored(&db, &cat2);
    let dd_log = dir.path().join("dd.log");
    std::fs::rename(strace(dir.path(), FULL, &dd(&f, 4)), &dd_log).unwrap();
    import_stored(&db, &dd_log);
    // One program's traces compare (the same program on two kernels).
    let (cmp, _) = succeed_text(with_db(&db).args(["compare", "1", "2"]));
    assert!(cmp.contains("verdict"), "{cmp}");
    let err = fails_with(
        with_db(&db).args(["compare", "1", "3"]),
        code::USAGE,
        "not the same program's traces",
    );
    assert!(
        err.contains("trace cat (run 1) vs trace dd (run 3)"),
        "{err}"
    );
    let (cmp, _) = succeed_text(with_db(&db).args(["compare", "1", "3", "--force"]));
    assert!(cmp.contains("verdict"), "{cmp}");
    // A trace against a job run now is refused before the job runs.
    let job = format!("--name=r --filename={} --rw=read --bs=4k --size=64k", s(&f));
    let err = fails_with(
        with_db(&db).args(["compare", "1", &job]),
        code::USAGE,
        "kind trace (run 1) vs run (a run made now)",
    );
    assert!(!err.contains("round"), "{err}");
}

#[test]
fn trace_help_offers_only_the_formats_traces_have() {
    let (help, _) = succeed_text(bin().args(["trace", "--help"]));
    let option = help.split("--output-format <FORMAT>").nth(1).unwrap();
    let values = option.split("Possible values:").nth(1).unwrap();
    let offered: String = (values.lines().skip(1))
        .take_while(|l| !l.trim().is_empty())
        .collect();
    assert!(
        offered.contains("normal") && offered.contains("json"),
        "{offered}"
    );
    for missing in ["csv", "terse", "html", "svg", "markdown"] {
        assert!(
            !offered.contains(&format!("- {missing}:")),
            "{missing} in {offered}"
        );
    }
    fails_with(
        bin().args(["trace", "-f", "csv", "--", "true"]),
        code::USAGE,
        "invalid value 'csv'",
    );
}

#[test]
fn a_newline_in_a_file_name_keeps_each_table_row_on_one_line() {
    skip_unless_installed!("strace");
    let dir = scratch();
    let f = std::fs::canonicalize(dir.path()).unwrap().join("a\nb");
    std::fs::write(&f, vec![7u8; 20_000]).unwrap();
    let log = strace(dir.path(), FULL, &["cat", s(&f)]);
    let (out, _) = succeed_text(bin().args(["trace", "import", "--no-store"]).arg(&log));
    let shown = s(&f).replace('\n', "\\n");
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(&shown)).collect();
    assert_eq!(rows.len(), 3, "per-call, per-file and pattern rows:\n{out}");
    assert!(!out.lines().any(|l| l.starts_with("b ")), "{out}");
    // JSON keeps the name as it is.
    let v = stdout_json(
        bin()
            .args(["trace", "import", "--no-store", "-f", "json", "-o"])
            .arg(dir.path().join("j.trace"))
            .arg(&log),
    );
    let paths: Vec<&str> = (v["files"].as_array().unwrap().iter())
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&s(&f)), "{paths:?}");
}

#[test]
fn an_export_that_would_write_the_traced_files_says_so() {
    skip_unless_installed!("strace");
    let (dir, f) = data(64);
    let g = dir.path().join("g");
    let log = strace(
        dir.path(),
        FULL,
        &["dd", &format!("if={}", s(&f)), &format!("of={}", s(&g))],
    );
    let _ = succeed_text(bin().args(["trace", "import", "--no-store"]).arg(&log));
    let tf = format!("{}.trace", s(&log));
    let (job, err) = succeed_text(bin().args(["trace", "export", &tf, "--format", "job"]));
    assert!(job.contains(s(&g)), "{job}");
    assert!(err.contains("give --dir DIR"), "{err}");
    let copies = dir.path().join("copies");
    let (_, err) = succeed_text(bin().args([
        "trace",
        "export",
        &tf,
        "--format",
        "job",
        "--dir",
        s(&copies),
    ]));
    assert_eq!(err, "");
}

#[test]
fn a_started_commands_inherited_files_are_named() {
    if !common::trace::can("a_started_commands_inherited_files_are_named") {
        return;
    }
    let dir = scratch();
    let err = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("stderr.txt");
    // With -f json the command's stdout is iolab's stderr: this file,
    // opened before the command started.
    let out = bin()
        .args([
            "trace",
            "--no-store",
            "-f",
            "json",
            "--",
            "sh",
            "-c",
            "echo hi",
        ])
        .stderr(std::fs::File::create(&err).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = parse_json(&out.stdout);
    let paths: Vec<&str> = (v["files"].as_array().unwrap().iter())
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&s(&err)), "{paths:?}");
}

/// A trace whose event has an offset past any file's (2^64 - 1) is refused
/// where it is read, naming the line, not exported unchanged.
#[test]
fn an_offset_past_any_file_is_refused_with_its_line() {
    let d = scratch();
    let t = d.path().join("bad.trace");
    std::fs::write(
        &t,
        "{\"iolab_trace\":1,\"meta\":{\"source\":\"test\",\"mode\":\"events\",\"command\":[\"x\"],\"pid\":1,\"started_unix\":0.0,\"duration_ns\":0,\"exit_status\":null,\"kernel\":\"\",\"host\":\"\"}}\n\
         {\"path\":0,\"name\":\"/tmp/x\"}\n\
         [10,1,1,\"pread64\",3,0,18446744073709551615,4096,0,4096,100]\n",
    )
    .unwrap();
    let (code, err) = fail(
        bin()
            .args(["trace", "export"])
            .arg(&t)
            .args(["--format", "iolog", "-o"])
            .arg(d.path().join("out.iolog")),
    );
    assert_ne!(code, 0);
    assert_one_line(
        &err,
        &[
            "bad.trace:3:",
            "offset 18446744073709551615",
            "largest file offset",
        ],
    );
    assert!(!d.path().join("out.iolog").exists());
}

/// An `--events` trace killed with SIGKILL keeps the events it wrote while
/// it ran, up to about a second before (they stayed in a 1 MiB buffer: a
/// 0-byte file).
#[test]
fn a_killed_event_trace_keeps_what_came_before_its_last_second() {
    if !common::trace::can("a_killed_event_trace_keeps_what_came_before_its_last_second")
        || !have(
            "python3",
            "a_killed_event_trace_keeps_what_came_before_its_last_second",
        )
    {
        return;
    }
    let d = scratch();
    let data = d.path().join("data");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let pidfile = d.path().join("pid");
    // 100 small reads a second: far less than the buffer holds.
    let script = format!(
        "import os, time\nopen('{}', 'w').write(str(os.getpid()))\nfd = os.open('{}', os.O_RDONLY)\n\
         for _ in range(100000):\n    os.pread(fd, 64, 0)\n    time.sleep(0.01)\n",
        s(&pidfile),
        s(&data)
    );
    let trace = d.path().join("k.trace");
    let mut iolab = bin()
        .args(["trace", "--no-store", "--events", "-o", s(&trace), "--"])
        .args(["python3", "-c", &script])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once 50 reads are in the file, written while the trace runs
    // (the Python loop runs for 1000 s: a trace that wrote only at its end
    // never gets there in the 120 s of liveness), not after a guessed time
    // a loaded machine's slow start can outlast; how soon events reach the
    // file (within about a second) is not timed.
    let preads = || {
        std::fs::read_to_string(&trace)
            .map(|t| t.lines().filter(|l| l.contains("\"pread64\"")).count())
            .unwrap_or(0)
    };
    wait_until(
        std::time::Duration::from_secs(120),
        "50 reads in the trace",
        || preads() >= 50,
    );
    let _ = iolab.kill();
    let _ = iolab.wait();
    if let Ok(pid) = std::fs::read_to_string(&pidfile) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    let text = std::fs::read_to_string(&trace).unwrap();
    let preads = text.lines().filter(|l| l.contains("\"pread64\"")).count();
    assert!(preads >= 50, "{preads} preads kept: {:.300}", text);
}

/// A file unlinked while open (stdin here) is named by its path, without
/// the ` (deleted)` /proc adds, so its iolog exports (it was refused for
/// the space in the name).
#[test]
fn an_unlinked_files_path_has_no_deleted_suffix() {
    if !common::trace::can("an_unlinked_files_path_has_no_deleted_suffix") {
        return;
    }
    let dir = scratch();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let f = root.join("gone.dat");
    std::fs::write(&f, vec![1u8; 10_000]).unwrap();
    let input = std::fs::File::open(&f).unwrap();
    std::fs::remove_file(&f).unwrap();
    let tf = root.join("t.trace");
    let mut out = bin();
    out.args(["trace", "--no-store", "--events", "-f", "json", "-o"])
        .arg(&tf)
        .args(["--", "dd", "bs=4k", "of=/dev/null"])
        .stdin(input);
    let v = parse_json(&succeed(&mut out));
    let paths: Vec<&str> = (v["files"].as_array().unwrap().iter())
        .map(|x| x["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&s(&f)), "{paths:?}");
    assert!(
        !paths.iter().any(|p| p.ends_with(" (deleted)")),
        "{paths:?}"
    );
    let log = root.join("t.iolog");
    let (_, err) = succeed_text(
        bin()
            .args(["trace", "export", "--format", "iolog", "-o"])
            .arg(&log)
            .arg(&tf),
    );
    assert_eq!(err, "");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains(&format!("{} read 0 4096", s(&f))), "{text}");
}

/// A process is named by the program it became: `sh` that runs `cat` as
/// a child and then execs `dd` shows as `dd` with a child `cat` (both
/// kept the name `sh` they had before their execve).
#[test]
fn a_thread_is_named_after_its_exec() {
    if !common::trace::can("a_thread_is_named_after_its_exec") {
        return;
    }
    let mut out = bin();
    out.args(["trace", "--no-store", "-f", "json", "--", "sh", "-c"])
        .arg("cat /dev/null; exec dd if=/dev/zero of=/dev/null count=1 status=none");
    let v = parse_json(&succeed(&mut out));
    let main = v["meta"]["pid"].as_u64().unwrap();
    let threads = v["threads"].as_array().unwrap();
    let name = |t: &serde_json::Value| t["comm"].as_str().unwrap().to_string();
    let me = threads.iter().find(|t| t["tid"] == main).unwrap();
    assert_eq!(name(me), "dd", "{threads:?}");
    let kids: Vec<String> = (threads.iter())
        .filter(|t| t["ppid"] == main)
        .map(name)
        .collect();
    assert_eq!(kids, ["cat"], "{threads:?}");
}
