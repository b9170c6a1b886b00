//! fio's verify state files and verification in the modes fio allows, under
//! fio and iolab: the state file a write job leaves (name, size, loadable
//! by the other tool), where a read job that loads it stops checking, a
//! corrupted block caught (or, past the saved writes, not checked) with a
//! saved state; mixed `rw` and `time_based` with verify; a job that fails
//! verification leaves the jobs after it running.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `fio` or `iolab run --no-store` in `dir` with `args`, JSON output:
/// (exit code, the jobs' JSON, stderr).
fn run(tool: &str, dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let mut cmd = if tool == "fio" {
        Command::new("fio")
    } else {
        let mut c = bin();
        c.args(["run", "--no-store"]);
        c
    };
    cmd.current_dir(dir).args(args).arg("--output-format=json");
    let out = cmd.output().unwrap();
    let text = out.stdout;
    let start = text.iter().position(|&b| b == b'{').unwrap_or(0);
    let json: Value = serde_json::from_slice(&text[start..]).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json["jobs"].clone(), err)
}

/// (read, write) I/Os of job `i`.
fn ios(jobs: &Value, i: usize) -> (u64, u64) {
    let n = |d: &str| jobs[i][d]["total_ios"].as_u64().unwrap();
    (n("read"), n("write"))
}

/// Flips the byte at `at` of `file`.
fn flip(file: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = (std::fs::OpenOptions::new().read(true).write(true))
        .open(file)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[!b[0]], at).unwrap();
}

const WRITE: &[&str] = &[
    "--name=w",
    "--filename=v.dat",
    "--size=1m",
    "--rw=randwrite",
    "--verify=crc32c",
    "--iodepth=16",
];
const READ: &[&str] = &[
    "--name=w",
    "--filename=v.dat",
    "--size=1m",
    "--rw=read",
    "--verify=crc32c",
    "--iodepth=16",
    "--verify_state_load=1",
];

/// A write job leaves fio's state file (same name and size under both
/// tools), and each tool's file loads in the other: a sequential read
/// that loads it stops checking at the same I/O under both.
#[test]
fn state_files_are_fios_and_load_in_both() {
    skip_unless_installed!("fio");
    let d = scratch();
    let state = d.path().join("local-w-0-verify.state");
    for writer in ["fio", "iolab"] {
        let _ = std::fs::remove_file(d.path().join("v.dat"));
        let (code, _, err) = run(writer, d.path(), WRITE);
        assert_eq!(code, 0, "{writer}: {err}");
        // 24-byte header, 152-byte list, 16 completions of 16 bytes.
        assert_eq!(std::fs::metadata(&state).unwrap().len(), 432, "{writer}");
        let counts: Vec<(u64, u64)> = ["fio", "iolab"]
            .iter()
            .map(|reader| {
                let (code, jobs, err) = run(reader, d.path(), READ);
                assert_eq!(code, 0, "{writer} -> {reader}: {err}");
                assert_eq!(jobs[0]["error"], 0);
                ios(&jobs, 0)
            })
            .collect();
        assert_eq!(counts[0], counts[1], "state written by {writer}");
        // The last 16 writes were random: the read stops among them.
        assert!((240..256).contains(&counts[0].0), "{counts:?}");
    }
    // Without the state, both refuse to run the loading job.
    std::fs::remove_file(&state).unwrap();
    for tool in ["fio", "iolab"] {
        let (code, _, err) = run(tool, d.path(), READ);
        assert_ne!(code, 0, "{tool}");
        assert!(err.contains("local-w-0-verify.state"), "{tool}: {err}");
    }
}

/// With a saved state, a corrupted block before the stop point fails both
/// tools (EILSEQ) at its offset; one past it is not checked by either.
#[test]
fn corrupted_block_with_a_saved_state() {
    skip_unless_installed!("fio");
    let d = scratch();
    let file = d.path().join("v.dat");
    for (block, fails) in [(3u64, true), (255, false)] {
        for tool in ["fio", "iolab"] {
            let _ = std::fs::remove_file(&file);
            let (code, _, err) = run("iolab", d.path(), WRITE);
            assert_eq!(code, 0, "{err}");
            flip(&file, block * 4096 + 100);
            let (code, jobs, err) = run(tool, d.path(), READ);
            let (reads, _) = ios(&jobs, 0);
            if fails {
                assert_eq!((code, &jobs[0]["error"]), (1, &Value::from(84)), "{tool}");
                assert!(err.contains("offset 12288, length 4096"), "{tool}: {err}");
                assert_eq!(reads, 4, "{tool}");
            } else {
                assert_eq!(
                    (code, &jobs[0]["error"]),
                    (0, &Value::from(0)),
                    "{tool}: {err}"
                );
                assert!(reads < 256, "{tool}: {reads}");
            }
        }
    }
}

/// Mixed `rw` with verify: every block is either read or written and read
/// back, under both tools; the job's own reads are not checked.
#[test]
fn mixed_rw_verifies_its_writes() {
    skip_unless_installed!("fio");
    let d = scratch();
    for rw in ["rw", "randrw"] {
        for tool in ["fio", "iolab"] {
            let _ = std::fs::remove_file(d.path().join("m.dat"));
            let args = [
                "--name=m",
                "--filename=m.dat",
                "--size=512k",
                &format!("--rw={rw}"),
                "--verify=md5",
            ];
            let (code, jobs, err) = run(tool, d.path(), &args);
            assert_eq!(code, 0, "{tool} {rw}: {err}");
            let (r, w) = ios(&jobs, 0);
            assert_eq!(r, 128, "{tool} {rw}: reads and read-backs");
            assert!((40..90).contains(&w), "{tool} {rw}: {w} writes");
        }
    }
}

/// `time_based` with verify: with a queued engine a write pass, its
/// read-back, again until the runtime (reads close to writes); with a
/// synchronous one fio 3.33 never reads back, nor does iolab.
#[test]
fn time_based_verify_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    for engine in [
        &["--ioengine=io_uring", "--iodepth=4"][..],
        &["--ioengine=psync"],
    ] {
        for tool in ["fio", "iolab"] {
            let _ = std::fs::remove_file(d.path().join("t.dat"));
            let mut args = vec![
                "--name=t",
                "--filename=t.dat",
                "--size=128k",
                "--rw=randwrite",
                "--verify=crc32c",
                "--time_based",
                "--runtime=300ms",
            ];
            args.extend_from_slice(engine);
            let (code, jobs, err) = run(tool, d.path(), &args);
            assert_eq!(code, 0, "{tool} {engine:?}: {err}");
            let (r, w) = ios(&jobs, 0);
            assert!(w > 64, "{tool} {engine:?}: {w} writes");
            if engine.len() == 2 {
                // At most the last pass (32 blocks) goes unchecked, and
                // the writes in flight (iodepth 4) when the time is up.
                assert!(
                    r + 32 + 4 >= w && r <= w,
                    "{tool} {engine:?}: {r} reads, {w} writes"
                );
            } else {
                assert_eq!(r, 0, "{tool} {engine:?}");
            }
        }
    }
}

/// A job that fails verification ends alone: the stonewalled job after it
/// runs under both tools.
#[test]
fn a_failed_verify_leaves_the_next_job_running() {
    skip_unless_installed!("fio");
    let d = scratch();
    let file = d.path().join("f.dat");
    let base = [
        "--filename=f.dat",
        "--size=64k",
        "--verify=crc32c",
        "--stonewall",
    ];
    for tool in ["fio", "iolab"] {
        let _ = std::fs::remove_file(&file);
        let (code, _, err) = run(
            "iolab",
            d.path(),
            &[&["--name=a", "--rw=write"][..], &base].concat(),
        );
        assert_eq!(code, 0, "{err}");
        flip(&file, 100);
        let args = [
            &["--name=check", "--rw=read"][..],
            &base,
            &["--name=after", "--rw=write"],
            &base,
        ]
        .concat();
        let (code, jobs, err) = run(tool, d.path(), &args);
        assert_eq!(code, 1, "{tool}: {err}");
        assert_eq!(jobs[0]["error"], 84, "{tool}");
        assert_eq!(jobs[1]["error"], 0, "{tool}");
        assert_eq!(
            ios(&jobs, 1),
            (16, 16),
            "{tool}: the next job wrote and read back"
        );
    }
}

/// fio's `--aux-path DIR`: the write job's state file goes to DIR, not the
/// working directory, and a loading job finds it there only with the flag,
/// under both tools; a DIR that is no directory is refused before any I/O.
#[test]
fn aux_path_holds_the_state_files() {
    skip_unless_installed!("fio");
    let d = scratch();
    let aux = d.path().join("aux");
    std::fs::create_dir(&aux).unwrap();
    let flag = format!("--aux-path={}", aux.display());
    let with = |args: &[&'static str]| -> Vec<String> {
        std::iter::once(flag.clone())
            .chain(args.iter().map(|a| a.to_string()))
            .collect()
    };
    for tool in ["fio", "iolab"] {
        let _ = std::fs::remove_file(d.path().join("v.dat"));
        let (code, _, err) = run(tool, d.path(), &strs(&with(WRITE)));
        assert_eq!(code, 0, "{tool}: {err}");
        let state = aux.join("local-w-0-verify.state");
        assert_eq!(std::fs::metadata(&state).unwrap().len(), 432, "{tool}");
        assert!(!d.path().join("local-w-0-verify.state").exists(), "{tool}");
        let (code, jobs, err) = run(tool, d.path(), &strs(&with(READ)));
        assert_eq!(
            (code, &jobs[0]["error"]),
            (0, &Value::from(0)),
            "{tool}: {err}"
        );
        let (code, _, err) = run(tool, d.path(), READ);
        assert_ne!(code, 0, "{tool} found a state outside --aux-path");
        assert!(err.contains("local-w-0-verify.state"), "{tool}: {err}");
        std::fs::remove_file(state).unwrap();
    }
    let (code, _, err) = run("iolab", d.path(), &[&["--aux-path=v.dat"], WRITE].concat());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--aux-path") && err.contains("not a directory"),
        "{err}"
    );
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
