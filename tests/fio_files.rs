//! fio's file-set options under fio and iolab: the same job makes the same
//! files (names and sizes) and the same I/Os; the open flags and syncs are
//! the same system calls (strace).

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Names and sizes of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Runs `args` under `tool` in a fresh directory; its JSON and its files.
fn in_fresh_dir(tool: &str, args: &[&str]) -> (Value, Vec<(String, u64)>) {
    let d = scratch();
    let mut cmd = fio_or_iolab(tool);
    cmd.current_dir(d.path())
        .args(args)
        .arg("--output-format=json");
    let out = succeed(&mut cmd);
    let start = out.iter().position(|&b| b == b'{').unwrap_or(0);
    (parse_json(&out[start..]), files_in(d.path()))
}

/// (total I/Os, bytes) of each direction of the first job, and of syncs.
fn totals(v: &Value) -> [u64; 5] {
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(0);
    [
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
        n("sync", "total_ios"),
    ]
}

#[test]
fn file_sets_match_fio() {
    skip_unless_installed!("fio");
    let cases: &[&[&str]] = &[
        &["--rw=write", "--size=256k", "--nrfiles=4"],
        &["--rw=write", "--nr_files=4", "--filesize=64k"],
        &["--rw=write", "--size=1m", "--filesize=64k", "--nrfiles=4"],
        &["--rw=write", "--size=128k", "--filesize=64k", "--nrfiles=4"],
        &["--rw=randwrite", "--size=64k", "--nrfiles=2", "--numjobs=2"],
        &[
            "--rw=write",
            "--size=64k",
            "--nrfiles=3",
            "--filename_format=data.$jobnum.$filenum",
        ],
        &["--rw=write", "--size=256k", "--fsync=4"],
        &[
            "--rw=write",
            "--size=256k",
            "--fdatasync=4",
            "--end_fsync=1",
        ],
        &["--rw=write", "--size=256k", "--fsync=3", "--sync=dsync"],
        &["--rw=randrw", "--size=256k", "--nrfiles=2"],
    ];
    for case in cases {
        let mut args = vec![
            "--name=t",
            "--bs=4k",
            "--ioengine=psync",
            "--group_reporting",
        ];
        args.extend_from_slice(case);
        let (fio, fio_files) = in_fresh_dir("fio", &args);
        let (ours, our_files) = in_fresh_dir("iolab", &args);
        assert_eq!(our_files, fio_files, "files of {case:?}");
        let (a, b) = (totals(&ours), totals(&fio));
        if case.contains(&"--rw=randrw") {
            // The mix is drawn: the sums agree.
            assert_eq!(a[0] + a[2], b[0] + b[2], "I/Os of {case:?}");
        } else {
            assert_eq!(a, b, "I/Os and syncs of {case:?}");
        }
    }
}

/// The system calls of `tool` running `args` in a fresh directory.
fn syscalls(tool: &str, args: &[&str], trace: &str) -> String {
    let d = scratch();
    let log = d.path().join("strace.log");
    let mut cmd = Command::new("strace");
    cmd.current_dir(d.path())
        .args(["-f", "-qq", "-e", &format!("trace={trace}"), "-o"])
        .arg(&log);
    if tool == "fio" {
        cmd.arg("fio");
    } else {
        cmd.arg(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "--no-store"]);
    }
    succeed(cmd.args(args).arg("--output-format=json"));
    std::fs::read_to_string(&log).unwrap()
}

#[test]
fn sync_and_buffered_open_as_fio_does() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    for (opts, flag) in [
        ("--sync=1", "O_SYNC"),
        ("--sync=dsync", "O_DSYNC"),
        ("--buffered=0", "O_DIRECT"),
    ] {
        let args = ["--name=t", "--rw=write", "--bs=4k", "--size=64k", opts];
        for tool in ["fio", "iolab"] {
            let log = syscalls(tool, &args, "openat");
            let opens: Vec<&str> = log.lines().filter(|l| l.contains("t.0.0\"")).collect();
            assert!(
                opens.iter().any(|l| l.contains(flag)),
                "{tool} {opts}: no {flag} in {opens:?}"
            );
        }
    }
    // end_fsync: one fsync of the file after the writes, in both.
    let args = [
        "--name=t",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--end_fsync=1",
    ];
    for tool in ["fio", "iolab"] {
        let log = syscalls(tool, &args, "fsync,fdatasync");
        assert_eq!(log.matches("fsync(").count(), 1, "{tool}: {log}");
    }
}

#[test]
fn allow_file_create_0_refuses_a_missing_file_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--name=t",
        "--rw=read",
        "--size=64k",
        "--allow_file_create=0",
    ];
    let fio = Command::new("fio")
        .current_dir(d.path())
        .args(args)
        .output()
        .unwrap();
    assert!(!fio.status.success());
    let (code, err) = fail(
        bin()
            .current_dir(d.path())
            .args(["run", "--no-store"])
            .args(args),
    );
    assert_eq!(code, code::USAGE, "{err}");
    assert!(
        err.contains("t.0.0") && err.contains("allow_file_create=0"),
        "{err}"
    );
    assert!(files_in(d.path()).is_empty(), "nothing created");
}

#[test]
fn unsupported_file_service_types_are_refused_by_name() {
    run_rejects(
        &[
            "--name=t",
            "--size=64k",
            "--nrfiles=2",
            "--file_service_type=random",
        ],
        &[
            "file_service_type=random is not supported by iolab yet",
            "roundrobin",
        ],
    );
}

/// The percentile keys of each latency object of the first job's reads.
fn percentile_keys(v: &Value) -> Vec<(String, Vec<String>)> {
    ["slat_ns", "clat_ns", "lat_ns"]
        .iter()
        .map(|k| {
            let p = &v["jobs"][0]["read"][k]["percentile"];
            let keys = p
                .as_object()
                .map_or(Vec::new(), |m| m.keys().cloned().collect());
            (k.to_string(), keys)
        })
        .collect()
}

#[test]
fn percentile_options_report_what_fio_reports() {
    skip_unless_installed!("fio");
    for opts in [
        &[][..],
        &["--percentile_list=50:99.9", "--lat_percentiles=1"],
        &["--clat_percentiles=0"],
        &[
            "--percentile_list=1:25:50:75:99.99",
            "--ioengine=libaio",
            "--slat_percentiles=1",
        ],
    ] {
        let mut args = vec!["--name=t", "--rw=randread", "--size=256k"];
        args.extend_from_slice(opts);
        let (fio, _) = in_fresh_dir("fio", &args);
        let (ours, _) = in_fresh_dir("iolab", &args);
        assert_eq!(percentile_keys(&ours), percentile_keys(&fio), "{opts:?}");
    }
    run_rejects(
        &["--name=t", "--size=64k", "--percentile_list=50:101"],
        &["'101' is not a percentile"],
    );
}

#[test]
fn generated_files_are_named_after_the_section_as_fio() {
    skip_unless_installed!("fio");
    let text = "[global]\nname=g\nsize=64k\nrw=write\n[s1]\n[s2]\nname=x\nnrfiles=2\n";
    let mut got = Vec::new();
    for tool in ["fio", "iolab"] {
        let d = scratch();
        write_file(d.path(), "j.fio", text);
        let (v, files) = {
            let mut cmd = if tool == "fio" {
                Command::new("fio")
            } else {
                let mut c = bin();
                c.args(["run", "--no-store"]);
                c
            };
            let out = succeed(
                cmd.current_dir(d.path())
                    .args(["j.fio", "--output-format=json"]),
            );
            let start = out.iter().position(|&b| b == b'{').unwrap_or(0);
            (parse_json(&out[start..]), files_in(d.path()))
        };
        let names: Vec<String> = (v["jobs"].as_array().unwrap().iter())
            .map(|j| j["jobname"].as_str().unwrap().to_string())
            .collect();
        got.push((names, files));
    }
    assert_eq!(got[1], got[0], "iolab (jobnames, files) vs fio's");
}

#[test]
fn a_filename_in_missing_directories_makes_them_as_fio() {
    skip_unless_installed!("fio");
    let args = [
        "--name=t",
        "--filename=sub/dir/x",
        "--size=64k",
        "--rw=write",
    ];
    for tool in ["fio", "iolab"] {
        let d = scratch();
        let mut cmd = if tool == "fio" {
            Command::new("fio")
        } else {
            let mut c = bin();
            c.args(["run", "--no-store"]);
            c
        };
        succeed(
            cmd.current_dir(d.path())
                .args(args)
                .arg("--output-format=json"),
        );
        let len = std::fs::metadata(d.path().join("sub/dir/x")).map(|m| m.len());
        assert_eq!(len.ok(), Some(65536), "{tool}");
    }
}

/// "global options" and each job's "job options" of a JSON document.
fn option_maps(v: &Value) -> (Value, Vec<Value>) {
    let jobs = v["jobs"].as_array().unwrap();
    let own = jobs.iter().map(|j| j["job options"].clone()).collect();
    (v["global options"].clone(), own)
}

#[test]
fn global_and_job_options_are_reported_as_fio() {
    skip_unless_installed!("fio");
    let file = "[global]\nsize=64k\nbs=8k\n[a]\nbs=4k\n[b]\nrw=read\n";
    for args in [
        &["--name=t", "--size=64k"][..],
        &["--size=64k", "--rw=read", "--name=t", "--bs=8k"],
        &["j.fio"],
    ] {
        let mut got = Vec::new();
        for tool in ["fio", "iolab"] {
            let d = scratch();
            write_file(d.path(), "j.fio", file);
            let mut cmd = if tool == "fio" {
                Command::new("fio")
            } else {
                let mut c = bin();
                c.args(["run", "--no-store"]);
                c
            };
            let out = succeed(
                cmd.current_dir(d.path())
                    .args(args)
                    .arg("--output-format=json"),
            );
            let start = out.iter().position(|&b| b == b'{').unwrap_or(0);
            got.push(option_maps(&parse_json(&out[start..])));
        }
        assert_eq!(got[1], got[0], "iolab vs fio for {args:?}");
    }
}
