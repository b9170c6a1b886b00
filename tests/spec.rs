//! Job input, fio's way: job files on disk and command lines, every quirk.

use iolab::job::{self as spec, CachePolicy, Mix, Pattern};
use std::fs;

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn seed_002_job_file_parses_like_fio() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "multiple-threads-pread.ini",
        "[global]\nrw=randread\nfilename=/tmp/x\nloops=100\ngroup_reporting\nthread\n\n[job1]\nioengine=psync\nrw=randread\nblocksize_range=50-300\nsize=350000\nnumjobs=10\n",
    );
    let jobs = spec::jobs_from_args(&args(&[&f])).unwrap();
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!(j.name, "job1");
    assert_eq!((j.bs_min, j.bs_max), (50, 300));
    assert_eq!(j.size, Some(350_000));
    assert_eq!(j.loops, 100);
    assert_eq!(j.numjobs, 10);
    assert!(j.group_reporting, "bare flag from [global] is inherited");
    assert_eq!(j.filenames, vec!["/tmp/x"]);
    assert_eq!((j.pattern, j.mix), (Pattern::Random, Mix::Read));
}

#[test]
fn globals_apply_to_later_sections_and_sections_repeat() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "j.fio",
        "; comment line\n# another\n[global]\nbs=8k ; inline comment\nsize=1M\t# inline\n[a]\nrw=read\n[a]\nrw=write\n[global]\nbs=16k\n[b]\n",
    );
    let jobs = spec::jobs_from_args(&args(&[&f])).unwrap();
    assert_eq!(jobs.len(), 3, "repeated [a] sections are two jobs");
    assert_eq!(jobs[0].bs_min, 8192);
    assert_eq!(jobs[1].mix, Mix::Write);
    assert_eq!(
        jobs[2].bs_min, 16384,
        "a later [global] applies to later jobs"
    );
    assert_eq!(jobs[0].size, Some(1 << 20));
}

#[test]
fn include_env_and_keywords() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "common.inc", "[global]\nbs=$pagesize\n");
    // SAFETY: only this test reads this variable.
    unsafe { std::env::set_var("IOLAB_SPEC_TEST_SIZE", "2M") };
    let f = write(
        d.path(),
        "j.fio",
        "include common.inc\n[j]\nsize=${IOLAB_SPEC_TEST_SIZE}\nnumjobs=$ncpus\nnumber_ios=($mb_memory*0+7)\n",
    );
    let j = &spec::jobs_from_args(&args(&[&f])).unwrap()[0];
    assert_eq!(j.bs_min, 4096);
    assert_eq!(j.size, Some(2 << 20));
    assert_eq!(
        j.numjobs as usize,
        std::thread::available_parallelism().unwrap().get()
    );
    assert_eq!(j.number_ios, Some(7));
}

#[test]
fn arithmetic_and_suffixes_in_values() {
    let cases = [
        ("--size=(3500000/10)", 350_000u64),
        ("--size=(4*1024)", 4096),
        ("--size=(1k+1k)*2", 4096),
        ("--size=(2^10)", 1024),
        ("--size=3500000B", 3_500_000),
        ("--size=4KiB", 4000),
        ("--size=1M", 1 << 20),
        ("--size=(1g/4)", 1 << 28),
    ];
    for (opt, want) in cases {
        let j = &spec::jobs_from_args(&args(&["--name=t", "--filename=x", "--bs=512", opt]))
            .unwrap()[0];
        assert_eq!(j.size, Some(want), "{opt}");
    }
    let j = &spec::jobs_from_args(&args(&[
        "--name=t",
        "--filename=x",
        "--size=(10%4*1024)",
        "--bs=(4k/2)",
    ]))
    .unwrap()[0];
    assert_eq!(j.size, Some(2048));
    assert_eq!(j.bs_min, 2048);
}

#[test]
fn command_line_globals_jobs_and_value_forms() {
    let jobs = spec::jobs_from_args(&args(&[
        "--bs=8k",
        "--filename=f",
        "--name=a",
        "--rw",
        "randwrite",
        "--size=1M",
        "--time_based",
        "--runtime=2s",
        "--name=b",
        "--size=2M",
        "--bs=16k",
        "--prefetch=20",
        "--cache=warm",
        "--repeat=3",
    ]))
    .unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0].bs_min, 8192);
    assert_eq!(jobs[0].mix, Mix::Write);
    assert!(jobs[0].time_based);
    assert_eq!(jobs[0].runtime_us, Some(2_000_000));
    assert_eq!(jobs[1].bs_min, 16384);
    assert_eq!(jobs[1].prefetch, 20);
    assert_eq!(jobs[1].cache, CachePolicy::Warm);
    assert_eq!(jobs[1].repeat, 3);
    assert_eq!(
        jobs[0].cache,
        CachePolicy::Cold,
        "invalidate=1 (default) means cold"
    );
    let j =
        &spec::jobs_from_args(&args(&["--name=a", "--filename=f", "--invalidate=0"])).unwrap()[0];
    assert_eq!(j.cache, CachePolicy::Keep, "invalidate=0 keeps the cache");
}

#[test]
fn all_rw_modes_engines_and_hints() {
    for (rw, pat, mix) in [
        ("read", Pattern::Sequential, Mix::Read),
        ("write", Pattern::Sequential, Mix::Write),
        ("randread", Pattern::Random, Mix::Read),
        ("randwrite", Pattern::Random, Mix::Write),
        ("rw", Pattern::Sequential, Mix::Mixed),
        ("readwrite", Pattern::Sequential, Mix::Mixed),
        ("randrw", Pattern::Random, Mix::Mixed),
    ] {
        let j = &spec::jobs_from_args(&args(&["--name=a", "--filename=f", &format!("--rw={rw}")]))
            .unwrap()[0];
        assert_eq!((j.pattern, j.mix), (pat, mix), "{rw}");
    }
    for e in ["psync", "sync", "null"] {
        spec::jobs_from_args(&args(&[
            "--name=a",
            "--filename=f",
            &format!("--ioengine={e}"),
        ]))
        .unwrap();
    }
    for h in ["0", "1", "sequential", "random", "noreuse"] {
        spec::jobs_from_args(&args(&[
            "--name=a",
            "--filename=f",
            &format!("--fadvise_hint={h}"),
        ]))
        .unwrap();
    }
    let j = &spec::jobs_from_args(&args(&[
        "--name=a",
        "--filename=f:g:h",
        "--rwmixread=70",
        "--rw=randrw",
    ]))
    .unwrap()[0];
    assert_eq!(j.filenames, vec!["f", "g", "h"]);
    assert_eq!(j.rwmixread, 70);
}

fn err(v: &[&str]) -> String {
    spec::jobs_from_args(&args(v)).unwrap_err().to_string()
}

#[test]
fn errors_name_what_is_wrong() {
    let e = err(&["--name=a", "--blocksze=4k"]);
    assert!(
        e.contains("unknown option 'blocksze'") && e.contains("did you mean 'blocksize'"),
        "{e}"
    );
    let e = err(&["--name=a", "--runtme=4"]);
    assert!(e.contains("did you mean 'runtime'"), "{e}");
    let e = err(&["--name=a", "--size=12x"]);
    assert!(
        e.contains("option 'size'") && e.contains("unknown size suffix 'x'"),
        "{e}"
    );
    let e = err(&["--name=a", "--size=4k", "--bs=8k"]);
    assert!(e.contains("bs (8192) is larger than size (4096)"), "{e}");
    let e = err(&["--name=a", "--size=(4k/0)"]);
    assert!(e.contains("division by zero"), "{e}");
    let e = err(&["--name=a", "--rw=sideways"]);
    assert!(e.contains("'sideways' is not one of"), "{e}");
    let e = err(&["--name=a", "--time_based"]);
    assert!(e.contains("time_based needs a runtime"), "{e}");
    let e = err(&["--name=a", "--direct=1", "--bs=1000"]);
    assert!(e.contains("direct=1 needs bs"), "{e}");
    let e = err(&[]);
    assert!(e.contains("no job given"), "{e}");
}

#[test]
fn job_file_errors_carry_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "bad.fio", "[global]\nbs=4k\n[job\n");
    let e = err(&[&f]);
    assert!(
        e.contains("bad.fio:3") && e.contains("malformed section header"),
        "{e}"
    );
    let f = write(d.path(), "bad2.fio", "[j]\nsize=1M\nthis is not a line\n");
    let e = err(&[&f]);
    assert!(
        e.contains("bad2.fio:3") && e.contains("malformed line"),
        "{e}"
    );
    let f = write(d.path(), "bad3.fio", "bs=4k\n[j]\n");
    let e = err(&[&f]);
    assert!(
        e.contains("bad3.fio:1") && e.contains("before any [section]"),
        "{e}"
    );
    let f = write(d.path(), "bad4.fio", "[j]\nsize=1M\nstonewall\n");
    let e = err(&[&f]);
    assert!(
        e.contains("bad4.fio:3") && e.contains("fio option 'stonewall' is not supported"),
        "{e}"
    );
    let f = write(
        d.path(),
        "bad5.fio",
        "[j]\nsize=${IOLAB_SURELY_UNSET_VAR}\n",
    );
    let e = err(&[&f]);
    assert!(
        e.contains("bad5.fio:2") && e.contains("IOLAB_SURELY_UNSET_VAR"),
        "{e}"
    );
    let many = vec!["f"; 65_537].join(":");
    let f = write(
        d.path(),
        "many.fio",
        &format!("[j]\nsize=1M\nfilename={many}\n"),
    );
    let e = err(&[&f]);
    assert!(
        e.contains("many.fio:3") && e.contains("65537 files in one filename list (at most 65536)"),
        "{e}"
    );
    let e = err(&[d.path().join("missing.fio").to_str().unwrap()]);
    assert!(
        e.contains("cannot read job file") && e.contains("missing.fio"),
        "{e}"
    );
}

#[test]
fn issue_3_options_parse_like_fio() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "q.fio",
        "[global]\nioengine=io_uring\niodepth=(4*8)\niodepth_batch=4\n\n[q]\nfilename=/tmp/q\nsize=1M\nwrite_lat_log\nfixedbufs\n",
    );
    // A bare log flag on the command line does not swallow the job file.
    let jobs = spec::jobs_from_args(&args(&["--write_bw_log", &f, "--log_avg_msec=250"])).unwrap();
    let j = &jobs[0];
    assert_eq!(j.engine, "io_uring");
    assert_eq!(
        (
            j.iodepth,
            j.iodepth_batch_submit,
            j.iodepth_batch_complete_min
        ),
        (32, 4, 1)
    );
    assert!(j.flags.fixedbufs && !j.flags.registerfiles);
    assert_eq!(j.logs.bw.as_deref(), Some("q"), "bare flag: the job name");
    assert_eq!(j.logs.lat.as_deref(), Some("q"));
    assert_eq!(j.logs.avg_msec, 250);
    let jobs =
        spec::jobs_from_args(&args(&["--name=a", "--write_iops_log=pfx", "--size=1M"])).unwrap();
    assert_eq!(jobs[0].logs.iops.as_deref(), Some("pfx"));
    assert!(
        jobs[0].logs.per_io(),
        "log_avg_msec=0 (default): one line per I/O"
    );
    let e = err(&["--name=a", "--size=1M", "--write_hist_log"]);
    assert!(e.contains("write_hist_log needs log_hist_msec"), "{e}");
}
