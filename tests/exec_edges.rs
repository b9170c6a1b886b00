//! `iolab exec` at its edges, as a review tried it: the command gets the
//! signals a shell would give it, a run is kept when the command removes
//! its files or is too short for a profile, `--files` named twice or
//! through links counts each file once, label pools are the same workload
//! whatever iolab's flags, a side that never succeeds is named.

mod common;

use common::exec::*;
use common::*;

#[test]
fn the_command_starts_with_sigpipe_at_its_default() {
    let _t = turn();
    let (out, err) =
        succeed_text(bin().args(["exec", "--no-store", "--", "sh", "-c", "yes | head -1"]));
    assert!(out.starts_with("y\n"), "{out}");
    assert_eq!(err, "", "no 'Broken pipe' from yes");
    let (out, _) = succeed_text(bin().args([
        "exec",
        "--no-store",
        "--",
        "grep",
        "SigIgn",
        "/proc/self/status",
    ]));
    let ign = out.lines().find_map(|l| l.strip_prefix("SigIgn:")).unwrap();
    let mask = u64::from_str_radix(ign.trim(), 16).unwrap();
    assert_eq!(
        mask & (1 << (libc::SIGPIPE - 1)),
        0,
        "SIGPIPE not ignored: {ign}"
    );
}

#[test]
fn a_run_is_kept_when_the_command_removes_its_files() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let dst = d.path().join("dst");
    std::fs::create_dir(&dst).unwrap();
    data(&dst, "a", 1);
    let out = with_db(&db)
        .args([
            "-q",
            "exec",
            "--repeat",
            "2",
            "--cache",
            "cold",
            "--files",
            s(&dst),
            "--",
        ])
        .args(["rm", "-rf", s(&dst)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("note: "),
        "the vanished files are noted: {text}"
    );
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
}

#[test]
fn files_named_twice_or_through_links_count_once_and_fifos_are_noted() {
    let _t = turn();
    let d = scratch();
    let f = data(d.path(), "f", 1);
    std::os::unix::fs::symlink(&f, d.path().join("link")).unwrap();
    std::fs::hard_link(&f, d.path().join("hard")).unwrap();
    let fifo = d.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let link = d.path().join("link");
    let hard = d.path().join("hard");
    let v = exec_json(
        None,
        &[
            "--cache",
            "cold",
            "--files",
            s(&f),
            s(&link),
            s(&hard),
            s(d.path()),
            s(&fifo),
            "--",
            "cat",
            s(&f),
        ],
    );
    let c = &v["runs"][0]["cache"];
    assert_eq!(
        (u(&c["files"]), u(&c["pages"]), u(&c["misses"])),
        (1, 256, 256),
        "{c}"
    );
    let notes = v["warnings"].to_string();
    assert!(notes.contains("a FIFO, not a file"), "{notes}");
    // Only a symlink named: followed, the file it names evicted.
    let v = exec_json(
        None,
        &[
            "--cache",
            "cold",
            "--files",
            s(&link),
            "--",
            "cat",
            s(&link),
        ],
    );
    assert_eq!(u(&v["runs"][0]["cache"]["misses"]), 256);
    // Nothing but a FIFO: nothing to make cold.
    fails_with(
        bin().args([
            "exec",
            "--no-store",
            "--cache",
            "cold",
            "--files",
            s(&fifo),
            "--",
            "true",
        ]),
        2,
        "no regular file under --files",
    );
}

#[test]
fn a_flamegraph_that_cannot_be_written_is_refused_before_the_run() {
    let _t = turn();
    let d = scratch();
    let marker = d.path().join("ran");
    let svg = d.path().join("no/such/dir/x.svg");
    fails_with(
        bin().args([
            "exec",
            "--no-store",
            "--flamegraph",
            s(&svg),
            "--",
            "touch",
            s(&marker),
        ]),
        2,
        "is no directory",
    );
    assert!(!marker.exists(), "refused before the command ran");
    fails_with(
        bin().args(["exec", "--no-store", "--flamegraph", "x.png", "--", "true"]),
        2,
        "name it .svg",
    );
}

#[test]
fn a_label_pools_one_workload_whatever_iolabs_own_flags() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let f = data(d.path(), "f", 1);
    for (label, extra) in [
        ("a", vec!["--repeat", "2"]),
        ("a", vec!["--repeat", "3"]),
        ("b", vec![]),
    ] {
        succeed(
            with_db(&db)
                .args(["-q", "exec", "--label", label])
                .args(extra)
                .args(["--", "cat", s(&f)]),
        );
    }
    let cmp = stdout_text(with_db(&db).args(["compare", "a", "b"]));
    assert!(cmp.contains("verdict"), "{cmp}");
    // A different command under the same label is another workload.
    succeed(with_db(&db).args(["-q", "exec", "--label", "a", "--", "wc", "-c", s(&f)]));
    fails_with(
        with_db(&db).args(["compare", "a", "b"]),
        2,
        "different workloads",
    );
}

#[test]
fn a_side_that_never_succeeds_is_named_with_its_status() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    let err = fails_with(
        with_db(&db).args(["-q", "compare", "--exec", "true", "exit 3", "--repeat", "2"]),
        code::FAILED,
        "2 of 2 runs of sh -c 'exit 3' failed",
    );
    assert!(err.contains("exit status 3, 3"), "{err}");
    // Both sides are kept; compare of the stored ones says why not.
    fails_with(
        with_db(&db).args(["compare", "1", "2"]),
        2,
        "has no successful repetition",
    );
}

#[test]
fn a_report_of_execs_plots_their_run_time() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    for _ in 0..2 {
        succeed(with_db(&db).args(["-q", "exec", "--", "true"]));
    }
    let page = d.path().join("r.html");
    succeed(with_db(&db).args(["report", "1", "2", "-o", s(&page)]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("run time per run"),
        "the overview plots what execs have"
    );
    fails_with(
        with_db(&db).args(["plot", "1", "-o", s(&d.path().join("p.svg"))]),
        1,
        "iolab show 1",
    );
}

#[test]
fn a_long_run_shows_its_progress_with_eta_always() {
    let _t = turn();
    let out = bin()
        .args([
            "--eta",
            "always",
            "exec",
            "--no-store",
            "--repeat",
            "2",
            "--",
            "sleep",
            "2.5",
        ])
        .output()
        .unwrap();
    // A line a second: the one at 1 s has 1.5 s to come before the command
    // ends (a liveness margin, not a cadence).
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exec run 2/2"), "a step per run: {err}");
    assert!(
        err.contains("repetition 1/2") && err.contains("elapsed 00:00:01"),
        "live lines: {err}"
    );
    // Without --eta, on no terminal: steps only, none with --quiet.
    let (_, err) =
        succeed_text(bin().args(["-q", "exec", "--no-store", "--repeat", "2", "--", "true"]));
    assert_eq!(err, "");
}

#[test]
fn ctrl_c_at_a_terminal_stops_the_run_as_interrupted_not_failed() {
    use std::os::unix::process::CommandExt;
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    // A terminal's Ctrl-C goes to the whole foreground group: iolab and
    // the command both get SIGINT, and the command may end first.
    let child = with_db(&db)
        .args(["-q", "exec", "--repeat", "3", "--", "sleep", "37.75"])
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once run 1's command is seen running (by its exact command line),
    // not after a guessed 700 ms a loaded machine's start can outlast.
    wait_until(
        std::time::Duration::from_secs(60),
        "run 1's command runs",
        || {
            let p = std::process::Command::new("pgrep")
                .args(["-f", "^sleep 37.75$"])
                .output()
                .unwrap();
            !p.stdout.is_empty()
        },
    );
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = stdout_json(with_db(&db).args(["show", "1", "-f", "json"]));
    assert_eq!(v["iolab_run"]["status"], "interrupted", "{v}");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v["runs"][0]["interrupted"], true);
}

#[test]
fn stdin_is_read_alike_by_every_run_or_refused() {
    // Issue 35: with stdin from a pipe, runs after the first read EOF
    // silently; from a file, each run now reads it from its start.
    let _t = turn();
    let d = scratch();
    let out = d.path().join("out");
    let script = format!("cat >> {}", s(&out));
    let mut c = bin();
    c.args([
        "exec",
        "--no-store",
        "--repeat",
        "2",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    c.stdin(std::process::Stdio::piped());
    let err = fails_with(&mut c, code::USAGE, "stdin is a pipe");
    assert!(err.contains("--repeat 2"), "{err}");
    assert!(!out.exists(), "refused before any run");
    let input = d.path().join("in");
    std::fs::write(&input, "abc\n").unwrap();
    let mut c = bin();
    c.args([
        "-q",
        "exec",
        "--no-store",
        "--repeat",
        "3",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    c.stdin(std::fs::File::open(&input).unwrap());
    succeed(&mut c);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "abc\n".repeat(3));
}

#[test]
fn a_password_in_a_url_is_not_stored() {
    let _t = turn();
    let d = scratch();
    let db = d.path().join("t.db");
    succeed(
        with_db(&db)
            .args(["-q", "exec", "--", "true"])
            .env(
                "DATABASE_URL",
                "postgres://app:s3cret-pw@db.example:5432/app",
            )
            .env("IOLAB_TEST_PLAIN", "kept as is"),
    );
    let v = stdout_text(with_db(&db).args(["show", "1", "-f", "json"]));
    assert!(!v.contains("s3cret-pw"), "the password was stored");
    assert!(
        v.contains("postgres://app:<redacted>@db.example:5432/app"),
        "{v}"
    );
    assert!(v.contains("kept as is"), "other variables are kept");
}
