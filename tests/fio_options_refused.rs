//! Issue 33: the fio options iolab once refused as "unknown" (or with a
//! far-fetched suggestion) on real command lines. Each now runs as fio's
//! (the same I/O counts and files as fio on the same job) or gets "fio
//! option 'X' is not supported by iolab yet", written with one dash or two.

mod common;
use common::*;
use serde_json::Value;

/// `tool` run in a fresh directory on file `f` (1 MiB, 4k blocks) with
/// `args`: (exit code, JSON, stderr).
fn run(tool: &str, args: &[&str]) -> (i32, Value, String) {
    let d = scratch();
    let mut cmd = fio_or_iolab(tool);
    cmd.current_dir(d.path())
        .args(["--name=j", "--filename=f", "--size=1m", "--bs=4k"])
        .args(args)
        .arg("--output-format=json");
    let out = cmd.output().unwrap();
    let start = out.stdout.iter().position(|&b| b == b'{').unwrap_or(0);
    let json = serde_json::from_slice(&out.stdout[start..]).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json, err)
}

/// The I/Os of each direction of the first job.
fn ios(v: &Value) -> [u64; 2] {
    ["read", "write"].map(|d| v["jobs"][0][d]["total_ios"].as_u64().unwrap_or(0))
}

/// Options fio 3.33 takes that iolab does not do yet: the message says
/// so, with `-` as with `--`.
#[test]
fn fio_options_iolab_lacks_say_not_supported_yet() {
    for opt in [
        "bwavgtime=500",
        "clocksource=clock_gettime",
        "iopsavgtime=500",
        "max_latency=10s",
        "disk_util=0",
        "unit_base=8",
        "cgroup=x",
        "write_barrier=2",
        "significant_figures=4",
        "trim_percentage=10",
        "lockmem=1m",
        "log_max_value=1",
        "exec_prerun=true",
        "exec_postrun=true",
        "ignore_error=EIO",
        "serialize_overlap=1",
        "read_iolog=x.log",
        "verify_policy=x",
    ] {
        let key = opt.split('=').next().unwrap();
        for dashes in ["--", "-"] {
            let arg = format!("{dashes}{opt}");
            let (code, _, err) = run("iolab", &[&arg]);
            assert_eq!(code, 2, "{arg}: {err}");
            let want = format!("fio option '{key}' is not supported by iolab yet");
            assert!(err.contains(&want), "{arg}: {err}");
        }
    }
}

/// Forms fio accepts that iolab now runs as fio: the same I/O counts.
#[test]
fn forms_fio_accepts_run_as_fio() {
    skip_unless_installed!("fio");
    for args in [
        // getopt_long: an unambiguous prefix is the option.
        &["--rw=read", "--group_report"][..],
        &["--rw=read", "--nrfile=2"],
        // A size suffix on a count (FIO_OPT_STR_VAL).
        &["--rw=write", "--verify=crc32c", "--verify_backlog=1m"],
        // pareto's default power (0.2), zipf's (1.1).
        &[
            "--rw=randread",
            "--random_distribution=pareto",
            "--norandommap",
        ],
        &[
            "--rw=randread",
            "--random_distribution=zipf",
            "--norandommap",
        ],
        // atoi of a random job's suffix: 2^32 - 8 sequential I/Os a start.
        &["--rw=randwrite:-8k"],
        // time_based without runtime: fio warns and ignores it.
        &["--rw=read", "--time_based"],
    ] {
        let (fc, fv, ferr) = run("fio", args);
        let (ic, iv, ierr) = run("iolab", args);
        assert_eq!((fc, ic), (0, 0), "{args:?}\nfio: {ferr}\niolab: {ierr}");
        assert_eq!(ios(&fv), ios(&iv), "{args:?}");
    }
}

/// A CPU the machine lacks is an error, as in fio.
#[test]
fn cpus_the_machine_lacks_are_refused_as_fio() {
    skip_unless_installed!("fio");
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let arg = format!("--cpus_allowed={}", n + 5);
    let (fc, _, _) = run("fio", &[&arg]);
    let (ic, _, err) = run("iolab", &[&arg]);
    assert_ne!(fc, 0, "fio took {arg}");
    assert_eq!(ic, 2, "{err}");
    assert!(err.contains("is not on this machine"), "{err}");
}

/// mmap with syncs or O_DIRECT needs page-sized blocks, as fio's
/// `fio_mmapio_init` says (iolab once ran such a job fio refuses).
#[test]
fn mmap_syncs_with_small_blocks_are_refused_as_fio() {
    skip_unless_installed!("fio");
    let page = 4096; // this machine's, as the message says
    for extra in ["--fdatasync=8", "--fsync=8", "--direct=1"] {
        let args = ["--ioengine=mmap", "--rw=write", "--bsrange=1k-16k", extra];
        let (fc, fj, ferr) = run("fio", &args);
        let (ic, _, err) = run("iolab", &args);
        assert!(
            fc != 0 && fj["jobs"][0]["error"].as_i64() != Some(0),
            "fio ran {extra}: {ferr}"
        );
        assert!(ferr.contains("minimum block size"), "{ferr}");
        assert_eq!(ic, 2, "iolab ran {extra}: {err}");
        assert!(
            err.contains(&format!("multiple of the page size ({page} bytes)")),
            "{err}"
        );
        // Page-sized blocks run under both.
        let ok = ["--ioengine=mmap", "--rw=write", "--bs=4k", extra];
        let ((fc, fj, _), (ic, ij, err)) = (run("fio", &ok), run("iolab", &ok));
        assert_eq!((fc, ic), (0, 0), "{extra}: {err}");
        assert_eq!(ios(&fj), ios(&ij), "{extra}");
    }
}
