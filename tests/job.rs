//! Job input, fio's way: job files on disk and command lines, every quirk.

use iolab::engine::EngineFlags;
use iolab::job::options::{Kind, all};
use iolab::job::{self, CachePolicy, Mix, Pattern};
use std::fs;

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The jobs `iolab run ARGS` would run (panics on an error).
fn parse_jobs(v: &[&str]) -> Vec<job::JobSpec> {
    job::jobs_from_args(&args(v)).unwrap()
}

/// Writes `text` to the file `name` in `dir`; returns its path as a string.
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
    let jobs = parse_jobs(&[&f]);
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
    let jobs = parse_jobs(&[&f]);
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
    let j = &parse_jobs(&[&f])[0];
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
        let j = &parse_jobs(&["--name=t", "--filename=x", "--bs=512", opt])[0];
        assert_eq!(j.size, Some(want), "{opt}");
    }
    let j = &parse_jobs(&[
        "--name=t",
        "--filename=x",
        "--size=(10%4*1024)",
        "--bs=(4k/2)",
    ])[0];
    assert_eq!(j.size, Some(2048));
    assert_eq!(j.bs_min, 2048);
}

#[test]
fn command_line_globals_jobs_and_value_forms() {
    let jobs = parse_jobs(&[
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
    ]);
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
    let j = &parse_jobs(&["--name=a", "--filename=f", "--invalidate=0"])[0];
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
        let j = &parse_jobs(&["--name=a", "--filename=f", &format!("--rw={rw}")])[0];
        assert_eq!((j.pattern, j.mix), (pat, mix), "{rw}");
    }
    for e in ["psync", "sync", "null"] {
        parse_jobs(&["--name=a", "--filename=f", &format!("--ioengine={e}")]);
    }
    for h in ["0", "1", "sequential", "random", "noreuse"] {
        parse_jobs(&["--name=a", "--filename=f", &format!("--fadvise_hint={h}")]);
    }
    let j = &parse_jobs(&[
        "--name=a",
        "--filename=f:g:h",
        "--rwmixread=70",
        "--rw=randrw",
    ])[0];
    assert_eq!(j.filenames, vec!["f", "g", "h"]);
    assert_eq!(j.rwmixread, 70);
}

/// Asserts the job arguments `v` are refused with an error that contains
/// every `want`.
fn rejected(v: &[&str], want: &[&str]) {
    let e = job::jobs_from_args(&args(v)).unwrap_err().to_string();
    for w in want {
        assert!(e.contains(w), "'{w}' not in: {e}");
    }
}

#[test]
fn errors_name_what_is_wrong() {
    rejected(
        &["--name=a", "--blocksze=4k"],
        &["unknown option 'blocksze'", "did you mean 'blocksize'"],
    );
    rejected(&["--name=a", "--runtme=4"], &["did you mean 'runtime'"]);
    rejected(
        &["--name=a", "--size=12x"],
        &["option 'size'", "unknown size suffix 'x'"],
    );
    rejected(
        &["--name=a", "--size=4k", "--bs=8k"],
        &["bs (8192) is larger than size (4096)"],
    );
    rejected(&["--name=a", "--size=(4k/0)"], &["division by zero"]);
    rejected(
        &["--name=a", "--rw=sideways"],
        &["'sideways' is not one of"],
    );
    rejected(
        &["--name=a", "--direct=1", "--bs=1000"],
        &["direct=1 needs bs"],
    );
    rejected(&[], &["no job given"]);
}

#[test]
fn job_file_errors_carry_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    // Writes job file `name` with `text` and asserts it is refused at
    // `name:line` with an error that contains `want`.
    let refused_at = |name: &str, text: &str, line: u32, want: &str| {
        let f = write(d.path(), name, text);
        rejected(&[&f], &[&format!("{name}:{line}"), want]);
    };
    refused_at(
        "bad.fio",
        "[global]\nbs=4k\n[job\n",
        3,
        "malformed section header",
    );
    refused_at(
        "bad2.fio",
        "[j]\nsize=1M\nthis is not a line\n",
        3,
        "malformed line",
    );
    refused_at("bad3.fio", "bs=4k\n[j]\n", 1, "before any [section]");
    refused_at(
        "bad4.fio",
        "[j]\nsize=1M\nlockmem=1m\n",
        3,
        "fio option 'lockmem' is not supported",
    );
    refused_at(
        "bad5.fio",
        "[j]\nsize=${IOLAB_SURELY_UNSET_VAR}\n",
        2,
        "IOLAB_SURELY_UNSET_VAR",
    );
    let many = vec!["f"; 65_537].join(":");
    refused_at(
        "many.fio",
        &format!("[j]\nsize=1M\nfilename={many}\n"),
        3,
        "65537 files in one filename list (at most 65536)",
    );
    rejected(
        &[d.path().join("missing.fio").to_str().unwrap()],
        &["cannot read job file", "missing.fio"],
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
    let jobs = parse_jobs(&["--write_bw_log", &f, "--log_avg_msec=250"]);
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
    let jobs = parse_jobs(&["--name=a", "--write_iops_log=pfx", "--size=1M"]);
    assert_eq!(jobs[0].logs.iops.as_deref(), Some("pfx"));
    assert!(
        jobs[0].logs.per_io(),
        "log_avg_msec=0 (default): one line per I/O"
    );
    rejected(
        &["--name=a", "--size=1M", "--write_hist_log"],
        &["write_hist_log needs log_hist_msec"],
    );
}

/// A value each kind of option takes.
fn sample(kind: Kind) -> Vec<&'static str> {
    match kind {
        Kind::Str | Kind::StrOrFlag => vec!["x"],
        Kind::Size(_) => vec!["4k"],
        Kind::SizeRange(_) => vec!["4k-8k"],
        Kind::Int(_) | Kind::Bool | Kind::Time(_) => vec!["1"],
        Kind::Choice(words) => words.to_vec(),
    }
}

/// Every option in the table applies (no table row without its code, no
/// word of a choice silently read as another) and is kept as written.
#[test]
fn every_option_in_the_table_applies() {
    for def in all() {
        for value in sample(def.kind) {
            let opt = format!("--{}={value}", def.name);
            let engine = if EngineFlags::NAMES.contains(&def.name) {
                "--ioengine=io_uring"
            } else {
                "--ioengine=psync"
            };
            let jobs = job::jobs_from_args(&args(&["--name=a", "--size=1m", engine, &opt]));
            match jobs {
                // `--name` starts a job of its own: look at the last one.
                Ok(j) => assert!(
                    j.last()
                        .unwrap()
                        .options
                        .contains(&(def.name.to_string(), value.to_string())),
                    "{opt} not kept: {:?}",
                    j.last().unwrap().options
                ),
                // A rule between options may refuse the sample; the word
                // itself must have been understood.
                Err(e) => assert!(
                    !e.to_string().contains("is not one of"),
                    "{opt} refused: {e}"
                ),
            }
        }
    }
    // Each word of `rw` means what fio says.
    let words = [
        ("read", Pattern::Sequential, Mix::Read),
        ("write", Pattern::Sequential, Mix::Write),
        ("rw", Pattern::Sequential, Mix::Mixed),
        ("readwrite", Pattern::Sequential, Mix::Mixed),
        ("randread", Pattern::Random, Mix::Read),
        ("randwrite", Pattern::Random, Mix::Write),
        ("randrw", Pattern::Random, Mix::Mixed),
    ];
    for (word, pattern, mix) in words {
        let j = &parse_jobs(&["--name=a", "--size=1m", &format!("--rw={word}")])[0];
        assert_eq!((j.pattern, j.mix), (pattern, mix), "rw={word}");
    }
}
