//! fio's global command-line flags on `iolab run`, each against fio where
//! fio has the behaviour: a quiet stderr, `--output-format` lists, terse
//! v3 (`--minimal`), `--section`, `--parse-only`, `--readonly`,
//! `--showcmd` and the accepted ETA/debug flags (`--cmdhelp` and `--enghelp`:
//! tests/fio_cli_help.rs).

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// Runs fio with `args` in `dir`.
fn fio(dir: &Path, args: &[&str]) -> Output {
    Command::new("fio")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Runs `iolab run --no-store ARGS` in `dir`.
fn iolab_run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(["run", "--no-store"])
        .args(args)
        .output()
        .unwrap()
}

/// stdout of a run that must have succeeded with nothing on stderr.
fn quiet_ok(tool: &str, out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tool} failed: {err}");
    assert_eq!(err, "", "{tool} said something on stderr");
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The terse lines of `text` (those starting with `3;`), split at ';'.
fn terse_lines(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("3;"))
        .map(|l| l.split(';').map(String::from).collect())
        .collect()
}

/// A job file with a [global] section and three jobs a, b, c of different sizes.
const THREE: &str = "[global]\nbs=4k\nrw=read\nfilename=data\nsize=256k\n\n[a]\nsize=64k\n\n[b]\n\n[c]\nsize=128k\n";

#[test]
fn a_successful_run_says_nothing_on_stderr() {
    let d = scratch();
    let db = d.path().join("r.db");
    let f = d.path().join("f");
    let args = job(
        "q",
        &f,
        "--size=256k --rw=read --iodepth=4 --write_bw_log=q --log_avg_msec=10",
    );
    let run = |extra: &[&str]| {
        with_db(&db)
            .current_dir(d.path())
            .arg("run")
            .args(&args)
            .args(extra)
            .output()
            .unwrap()
    };
    // Stored, log written, a warning: all of it said in the output only.
    let text = quiet_ok("iolab", &run(&[]));
    assert!(
        text.contains("warning: job 'q': iodepth=4 has no effect with ioengine=psync"),
        "{text}"
    );
    assert_eq!(query_one::<i64>(&db, "SELECT count(*) FROM runs"), 1);
    assert!(d.path().join("q_bw.1.log").is_file());
    let json = parse_json(&run(&["--output-format=json"]).stdout);
    assert!(
        json["iolab"]["warnings"][0]
            .as_str()
            .unwrap()
            .contains("iodepth=4"),
        "{json}"
    );
    // --verbose says it on stderr.
    let out = run(&["--verbose"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for want in [
        "iolab: warning: job 'q': iodepth=4",
        "iolab: stored as run 3 in",
        "iolab: wrote q_bw.1.log",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    // An error still goes to stderr, with its exit code.
    let (code, err) = fail(bin().args(["run", "--name=x", "--rw=nope"]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("rw"), "{err}");
}

#[test]
fn output_format_lists_print_each_format_in_fios_order() {
    skip_unless_installed!("fio");
    let d = scratch();
    let job = [
        "--name=t",
        "--filename=f",
        "--size=256k",
        "--bs=4k",
        "--rw=read",
    ];
    let both = |flags: &[&str]| {
        let args = [&job[..], flags].concat();
        [
            ("fio", quiet_ok("fio", &fio(d.path(), &args))),
            ("iolab", quiet_ok("iolab", &iolab_run(d.path(), &args))),
        ]
    };
    // normal,json: the JSON document, then the text (fio's order).
    for (tool, out) in both(&["--output-format=normal,json"]) {
        let json = out.find("\n{\n").map_or(out.find('{'), Some).unwrap();
        let text = out.find("read: IOPS=").expect(tool);
        assert!(json < text, "{tool}: JSON comes before the text:\n{out}");
        let end = out[json..].find("\n}\n").unwrap() + json + 3;
        let v = parse_json(&out.as_bytes()[json..end]);
        assert_eq!(v["jobs"][0]["read"]["io_kbytes"], 256, "{tool}");
    }
    // terse,json+: the terse line first, then JSON with the histogram bins.
    for (tool, out) in both(&["--output-format=terse,json+"]) {
        assert!(out.starts_with("3;"), "{tool}: {out}");
        let v = parse_json(&out.as_bytes()[out.find('{').unwrap()..]);
        assert!(
            v["jobs"][0]["read"]["clat_ns"]["bins"].is_object(),
            "{tool}"
        );
    }
    // Repeated: the last one wins; --minimal is terse; --append-terse adds it.
    for flags in [
        &["--output-format=json", "--output-format=terse"][..],
        &["--output-format=json", "--minimal"],
        &[
            "--minimal",
            "--output-format=json",
            "--output-format=minimal",
        ],
    ] {
        for (tool, out) in both(flags) {
            assert_eq!(out.lines().count(), 1, "{tool} {flags:?}: {out}");
            assert_eq!(terse_lines(&out).len(), 1, "{tool} {flags:?}: {out}");
        }
    }
    for (tool, out) in both(&["--minimal", "--output-format=json"]) {
        assert_eq!(
            parse_json(out.as_bytes())["jobs"][0]["jobname"],
            "t",
            "{tool}"
        );
    }
    for (tool, out) in both(&["--append-terse"]) {
        let line = |p: &dyn Fn(&str) -> bool| out.lines().position(p).expect(tool);
        let terse = line(&|l| l.starts_with("3;"));
        assert!(
            terse < line(&|l| l.contains("read: IOPS=")),
            "{tool}: terse first:\n{out}"
        );
        assert_eq!(terse_lines(&out).len(), 1, "{tool}: {out}");
    }
    // Formats fio and iolab do not have are refused, naming them.
    let (code, err) = fail(bin().args(["run", "--output-format=json,yaml", "--name=x"]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("unknown format 'yaml'"), "{err}");
}

/// `iolab run --minimal` and `fio --minimal` on the same job, split at ';'.
fn terse_both(opts: &str) -> [Vec<String>; 2] {
    let d = scratch();
    let args: Vec<&str> = opts.split_whitespace().collect();
    let args = [&args[..], &["--minimal"]].concat();
    let f = terse_lines(&quiet_ok("fio", &fio(d.path(), &args)));
    std::fs::remove_file(d.path().join("f")).unwrap();
    let i = terse_lines(&quiet_ok("iolab", &iolab_run(d.path(), &args)));
    assert_eq!((f.len(), i.len()), (1, 1));
    [f[0].clone(), i[0].clone()]
}

#[test]
fn terse_v3_has_fios_fields_in_fios_order() {
    skip_unless_installed!("fio");
    // Field numbers (from 1) of fio's HOWTO "TERSE OUTPUT".
    const READ_KB: usize = 6;
    const WRITE_KB: usize = READ_KB + 41;
    const READ_P50: usize = READ_KB + 4 + 8 + 6;
    for (rw, dir_kb, other_kb) in [("read", READ_KB, WRITE_KB), ("write", WRITE_KB, READ_KB)] {
        let [f, i] = terse_both(&format!(
            "--name=tj --filename=f --size=512k --bs=4k --rw={rw} --description=two_words"
        ));
        assert_eq!(f.len(), i.len(), "field count:\nfio   {f:?}\niolab {i:?}");
        assert_eq!((&f[0][..], &i[0][..]), ("3", "3"));
        assert!(f[1].starts_with("fio-") && i[1].starts_with("iolab-"));
        assert_eq!((&f[2][..], &i[2][..]), ("tj", "tj"), "jobname");
        assert_eq!(&i[3..5], ["0", "0"], "groupid, error");
        assert_eq!((&f[dir_kb - 1][..], &i[dir_kb - 1][..]), ("512", "512"));
        assert_eq!((&f[other_kb - 1][..], &i[other_kb - 1][..]), ("0", "0"));
        // Percentile cells, the CPU and depth fields and the disks line up.
        for (k, (a, b)) in f.iter().zip(&i).enumerate() {
            for mark in ["%=", "%"] {
                assert_eq!(
                    a.contains(mark),
                    b.contains(mark),
                    "field {}: fio {a:?}, iolab {b:?}",
                    k + 1
                );
            }
        }
        let p50 = if rw == "read" {
            READ_P50
        } else {
            READ_P50 + 41
        };
        assert!(i[p50 - 1].starts_with("50.000000%="), "{}", i[p50 - 1]);
        // 100% of the I/Os at depth 1, as fio says for psync.
        // (From the end: the description, 9 disk fields, 12 ms and 10 µs
        // latency shares, then the 7 depths.)
        let depth1 = f.len() - 1 - 9 - 12 - 10 - 7;
        assert_eq!((&f[depth1][..], &i[depth1][..]), ("100.0%", "100.0%"));
        assert_eq!(
            (&f[f.len() - 1][..], &i[i.len() - 1][..]),
            ("two_words", "two_words")
        );
        assert_eq!(f[f.len() - 10], i[i.len() - 10], "disk name");
    }
}

#[test]
fn section_runs_only_the_named_sections_with_global_applied() {
    skip_unless_installed!("fio");
    let d = scratch();
    let jobfile = write_file(d.path(), "three.fio", THREE);
    let args = ["--minimal", "--section=c", "--section=b", s(&jobfile)];
    for (tool, out) in [
        ("fio", fio(d.path(), &args)),
        ("iolab", iolab_run(d.path(), &args)),
    ] {
        let lines = terse_lines(&quiet_ok(tool, &out));
        let got: Vec<(&str, &str)> = lines.iter().map(|l| (&l[2][..], &l[5][..])).collect();
        // File order, not flag order; [global]'s size=256k applies to b.
        assert_eq!(got, [("b", "256"), ("c", "128")], "{tool}");
    }
    let out = iolab_run(d.path(), &["--section=d", s(&jobfile)]);
    assert_eq!(out.status.code(), Some(code::USAGE));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_one_line(
        &err,
        &["--section=d: no job section [d] in the jobs given; they have: a, b, c"],
    );
    let out = iolab_run(d.path(), &["--section=global", s(&jobfile)]);
    assert_eq!(out.status.code(), Some(code::USAGE));
}

#[test]
fn parse_only_checks_the_jobs_and_runs_nothing() {
    skip_unless_installed!("fio");
    let d = scratch();
    let jobfile = write_file(d.path(), "three.fio", THREE);
    for (tool, out) in [
        ("fio", fio(d.path(), &["--parse-only", s(&jobfile)])),
        ("iolab", iolab_run(d.path(), &["--parse-only", s(&jobfile)])),
    ] {
        assert_eq!(quiet_ok(tool, &out), "", "{tool}");
        assert!(!d.path().join("data").exists(), "{tool} laid out a file");
    }
    let bad = write_file(d.path(), "bad.fio", "[x]\nrw=sideways\n");
    let out = iolab_run(d.path(), &["--parse-only", s(&bad)]);
    assert_eq!(out.status.code(), Some(code::USAGE));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.fio:2"));
}

#[test]
fn readonly_refuses_every_write_and_changes_nothing() {
    skip_unless_installed!("fio");
    let d = scratch();
    let f = d.path().join("f");
    lay_out(&f, "256k");
    let before = std::fs::read(&f).unwrap();
    let mtime = || std::fs::metadata(&f).unwrap().modified().unwrap();
    let t0 = mtime();
    let file = format!("--filename={}", s(&f));
    for (opts, option) in [
        ("--rw=write", "option 'rw=write'"),
        ("--rw=randwrite", "option 'rw=randwrite'"),
        ("--rw=rw", "option 'rw=rw'"),
        ("--rw=read --unlink=1", "option 'unlink'"),
        ("--rw=read --fsync=1", "option 'fsync=1'"),
        ("--rw=read --end_fsync=1", "option 'end_fsync'"),
        (
            "--rw=read --ioengine=filedelete",
            "option 'ioengine=filedelete'",
        ),
        ("--rw=read --size=512k", "extend the file"),
    ] {
        let mut args = vec!["--readonly", "--name=ro", &file, "--size=256k"];
        args.extend(opts.split_whitespace());
        let out = iolab_run(d.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code::REFUSED), "{opts}: {err}");
        assert_one_line(&err, &["job 'ro'", option, "--readonly"]);
        if !opts.contains("sync") && !opts.contains("unlink") && !opts.contains("delete") {
            // fio refuses the same jobs (it would unlink and sync).
            let out = fio(d.path(), &args);
            assert!(!out.status.success(), "fio ran {opts}");
        }
    }
    // A missing file is not laid out, by either tool.
    for tool in ["fio", "iolab"] {
        let args = [
            "--readonly",
            "--name=ro",
            "--filename=new",
            "--size=64k",
            "--rw=read",
        ];
        let out = if tool == "fio" {
            fio(d.path(), &args)
        } else {
            iolab_run(d.path(), &args)
        };
        assert!(!out.status.success(), "{tool}");
        assert!(!d.path().join("new").exists(), "{tool} created the file");
    }
    // Reads run, and nothing was changed.
    let text = quiet_ok(
        "iolab",
        &iolab_run(
            d.path(),
            &[
                "--readonly",
                "--name=ro",
                &file,
                "--size=256k",
                "--rw=randread",
            ],
        ),
    );
    assert!(text.contains("read: IOPS="), "{text}");
    assert_eq!(std::fs::read(&f).unwrap(), before);
    assert_eq!(mtime(), t0);
}

#[test]
fn showcmd_prints_the_job_file_as_fio_does() {
    skip_unless_installed!("fio");
    let d = scratch();
    let jobfile = write_file(
        d.path(),
        "j.fio",
        "; comment\n[global]\nsize=1M\ntime_based\nruntime=1\n\n[a]\nrw=read\nfilename=/tmp/x\n[b]\nrw=randread\nbs=8k\n",
    );
    for extra in [&[][..], &["--section=b"]] {
        let args = [&["--showcmd", s(&jobfile)][..], extra].concat();
        let want = quiet_ok("fio", &fio(d.path(), &args));
        assert!(want.starts_with("fio --size=1M --time_based"), "{want}");
        assert_eq!(quiet_ok("iolab", &iolab_run(d.path(), &args)), want);
    }
}

#[test]
fn fios_other_flags_are_accepted_or_refused_clearly() {
    skip_unless_installed!("fio");
    let d = scratch();
    let flags = [
        "--eta=never",
        "--eta-newline=1",
        "--eta-interval=1s",
        "--status-interval=10",
        "--debug=io,file",
        "--alloc-size=32768",
        "--terse-version=3",
        "--max-jobs=8",
    ];
    let args = [
        &flags[..],
        &["--name=t", "--filename=f", "--size=64k", "--minimal"],
    ]
    .concat();
    // fio's debug lines go to stdout: not asked of fio.
    let fio_args: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--debug"))
        .copied()
        .collect();
    for (tool, out) in [
        ("iolab", iolab_run(d.path(), &args)),
        ("fio", fio(d.path(), &fio_args)),
    ] {
        assert_eq!(terse_lines(&quiet_ok(tool, &out)).len(), 1, "{tool}");
    }
    for (flag, want) in [
        (
            "--terse-version=2",
            "fio's terse version 2 is not supported by iolab",
        ),
        ("--terse-version=9", "'9' is not a terse version"),
        ("--eta=sometimes", "sometimes"),
        ("--eta-interval=10ms", "at least 250ms"),
        ("--debug=bogus", "unknown debug category 'bogus'"),
    ] {
        let (code, err) = fail(bin().args(["run", flag, "--name=t", "--filename=f"]));
        assert_eq!(code, code::USAGE, "{flag}");
        assert!(err.contains(want), "{flag}: {err}");
    }
    // Every flag is in the help, with an example.
    let help = stdout_text(bin().args(["run", "--help"]));
    for flag in [
        "--minimal",
        "--append-terse",
        "--terse-version",
        "--eta",
        "--eta-newline",
        "--eta-interval",
        "--status-interval",
        "--section",
        "--parse-only",
        "--readonly",
        "--debug",
        "--showcmd",
        "--cmdhelp",
        "--enghelp",
        "--alloc-size",
        "--verbose",
    ] {
        assert!(help.contains(flag), "{flag} not in run --help");
    }
}

/// The README's commands with fio's global flags, as written there.
#[test]
fn readme_global_flag_commands_run() {
    let d = scratch();
    write_file(
        d.path(),
        "baseline-reads.ini",
        "[global]\nfilename=data\nsize=128k\nbs=4k\n\n[reads]\nrw=randread\n\n[seq]\nrw=read\n",
    );
    let run = |line: &str| {
        let args: Vec<&str> = line.split_whitespace().skip(2).collect();
        quiet_ok("iolab", &iolab_run(d.path(), &args))
    };
    let out = run("iolab run baseline-reads.ini --output-format=terse,json+ --section=reads");
    let terse = terse_lines(&out);
    assert_eq!(terse.len(), 1, "{out}");
    assert_eq!(terse[0][2], "reads");
    let json = parse_json(&out.as_bytes()[out.find('{').unwrap()..]);
    assert_eq!(json["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(
        run("iolab run baseline-reads.ini --readonly --parse-only"),
        ""
    );
}

/// Issue 33: iolab started as fio — a link named `fio`, `iolab fio ARGS`,
/// and `iolab --name=x ...` without `run` — reads fio's command line and
/// does the same I/Os as `iolab run`; `fio --version` answers.
#[test]
fn iolab_started_as_fio_runs_fios_command_line() {
    let d = scratch();
    let link = d.path().join("fio");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_iolab"), &link).unwrap();
    let job = [
        "--name=x",
        "--filename=f",
        "--size=64k",
        "--bs=4k",
        "--rw=randread",
        "--output-format=json",
    ];
    let ios = |cmd: &mut std::process::Command| -> u64 {
        let v = stdout_json(
            cmd.current_dir(d.path())
                .env("IOLAB_DB", d.path().join("db")),
        );
        v["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
    };
    assert_eq!(ios(std::process::Command::new(&link).args(job)), 16);
    assert_eq!(ios(bin().arg("fio").args(job)), 16);
    assert_eq!(ios(bin().args(job)), 16);
    let out = std::process::Command::new(&link)
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("iolab "));
}
