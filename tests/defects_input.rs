//! Issue 14, hostile input: the tests of the parser's and planner's part
//! (5: numeric options and what they make the planner hold, 7: NUL in
//! names, deep nesting and inputs whose work grew without bound, 12: fio's
//! `\:`, against fio). Defects in the binary are checked on the real
//! binary; the parser's limits in-process. Several were found by the fuzz
//! driver (tests/fuzz.rs, bench/fuzz.py).

mod common;
use common::*;
use iolab::job::options::{Kind, all};
use iolab::job::{self, JobError};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs `cmd`, killing it after `limit`: its output, or a panic saying it
/// hung (a deadlock must fail the test, not hang it).
fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{cmd:?} hung for {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The error of parsing the command line `args`.
fn parse_err(args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match job::jobs_from_args(&args) {
        Ok(jobs) => panic!("{args:?} accepted: {jobs:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn defect_05_numeric_options_are_checked() {
    let (_dir, f) = scratch_file();
    for (opt, want) in [
        // Was 1 (u32 truncation).
        (
            "--numjobs=4294967297",
            "'4294967297' is out of range (1-65536)",
        ),
        // Tried to start 100,000 threads.
        ("--numjobs=100000", "'100000' is out of range (1-65536)"),
        // Was 1 past iodepth's cap.
        (
            "--iodepth=4294967297",
            "'4294967297' is out of range (1-32768)",
        ),
        // Panicked (a window of 2^63 I/Os).
        ("--prefetch=9223372036854775808", "out of range (0-65536)"),
        ("--rwmixread=101", "'101' is out of range (0-100)"),
        ("--loops=(2^32)", "'(2^32)' is out of range (1-4294967295)"),
        ("--repeat=0", "'0' is out of range (1-1000000)"),
        ("--log_avg_msec=86400001", "out of range (0-86400000)"),
        (
            "--log_hist_msec=(1000*86400*2)",
            "out of range (0-86400000)",
        ),
        ("--runtime=366d", "'366d' is out of range (0-365d)"),
        ("--fsync=-1", "'-1' is out of range (0-4294967295)"),
        (
            "--number_ios=18446744073709551616",
            "out of range (0-2^64-1)",
        ),
        ("--bs=4g", "'4g' is out of range (1-4294967295 bytes)"),
    ] {
        let key = opt[2..].split('=').next().unwrap();
        let args = job("a", &f, &format!("--size=64k --ioengine=io_uring {opt}"));
        run_rejects(&args, &[&format!("option '{key}'"), want]);
    }
    run_rejects(
        &job("a", &f, "--size=(2^63) --offset=(2^63)"),
        &["offset (9223372036854775808) + size (9223372036854775808) is past"],
    );
    // Booleans are 0/1, true/false, yes/no, on/off; an empty name is no name.
    run_rejects(
        &job("a", &f, "--size=64k --direct=2"),
        &["option 'direct'", "'2' is not a boolean"],
    );
    run_rejects(
        &["--name=", "--size=64k", &format!("--filename={}", s(&f))],
        &["option 'name'", "empty job name"],
    );
    assert!(!f.exists(), "nothing was laid out");
}

#[test]
fn defect_05_numjobs_are_capped_unless_max_jobs_says_otherwise() {
    let (dir, f) = scratch_file();
    run_rejects(
        &job("a", &f, "--size=64k --numjobs=4097"),
        &["4097 clones in all is more than 4096", "--max-jobs"],
    );
    // All jobs' clones together.
    let mut two = job("a", &f, "--size=64k --numjobs=3000");
    two.extend(job("b", &f, "--size=64k --numjobs=3000"));
    run_rejects(&two, &["6000 clones in all is more than 4096"]);
    let mut lower = vec!["--max-jobs=2".to_string()];
    lower.extend(job("a", &f, "--size=64k --numjobs=3"));
    run_rejects(&lower, &["3 clones in all is more than 2"]);
    // --max-jobs lifts the cap: the job goes on to its files (and is
    // refused there, before any thread starts).
    let missing = dir.path().join("missing");
    let mut lifted = vec!["--max-jobs".to_string(), "4097".to_string()];
    lifted.extend(job("a", &missing, "--numjobs=4097"));
    run_rejects(&lifted, &["does not exist and no size= is given"]);
    fails_with(
        bin().args(["run", "--max-jobs=65537", "--name=a"]),
        code::USAGE,
        "65537 is not in 1..=65536",
    );
}

#[test]
fn defect_05_every_numeric_option_has_its_range() {
    for def in all() {
        let Some(r) = def.kind.range() else { continue };
        let range = def.kind.range_text().unwrap();
        // Times in microseconds, the unit of their range.
        let unit = if matches!(def.kind, Kind::Time(_)) {
            "us"
        } else {
            ""
        };
        let with = |v: u128| -> Result<(), JobError> {
            let args = [
                "--name=a".to_string(),
                "--size=1g".to_string(),
                "--ioengine=io_uring".to_string(),
                format!("--{}={v}{unit}", def.name),
            ];
            job::jobs_from_args(&args).map(drop)
        };
        let out_of_range = |v: u128| {
            let e = with(v).expect_err(&format!("{}={v}{unit} accepted", def.name));
            let e = e.to_string();
            assert!(
                e.contains(&format!("option '{}'", def.name))
                    && e.contains(&format!("'{v}{unit}' is out of range ({range})")),
                "{}={v}: {e}",
                def.name
            );
        };
        out_of_range(r.max as u128 + 1);
        if r.min > 0 {
            out_of_range(r.min as u128 - 1);
        }
        // The ends themselves are read (a rule between options may still
        // refuse the job, never the range).
        for v in [r.min as u128, r.max as u128] {
            if let Err(e) = with(v) {
                assert!(!e.to_string().contains("out of range"), "{e}");
            }
        }
    }
}

#[test]
fn defect_05_random_order_tables_fit_a_budget() {
    // Each clone's random order was a table of 4 bytes a block: bs=1 over
    // 16 MiB with numjobs=40 held 2.6 GB for ten I/Os, 20 such jobs 1.3 GB
    // (4,096 clones or 1,000 file names: any machine's memory). Tables are
    // used while those of all the clones running together fit 64 MiB (one
    // full table), keyed permutations (O(1) memory) past that.
    let (dir, f) = scratch_file();
    lay_out(&f, "16m");
    let opts = "--size=16m --bs=1 --rw=randread --number_ios=10";
    let clones = job("t", &f, &format!("{opts} --numjobs=40"));
    let jobs: String = (0..20).map(|i| format!("[j{i}]\n")).collect();
    let global = "size=16m\nbs=1\nrw=randread\nnumber_ios=10";
    let text = format!("[global]\nfilename={}\n{global}\n{jobs}", s(&f));
    let many = vec![s(&write_file(dir.path(), "many.fio", &text)).to_string()];
    for args in [clones, many] {
        let run = common::process::peak_rss(bin().args(["run", "--no-store"]).args(&args));
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.peak_kib < 200 << 10,
            "{args:?}: peak {} KiB",
            run.peak_kib
        );
    }
    // One clone over 16M blocks keeps the fast table; two do not, nor do
    // sequential jobs need any.
    let fit = |opts: &str, numjobs: usize| {
        let jobs = job::jobs_from_args(&job("t", &f, opts)).unwrap();
        let regions = [iolab::plan::Region {
            start: 0,
            len: 16 << 20,
        }];
        iolab::plan::tables_fit(std::iter::repeat_n((&jobs[0], &regions[..]), numjobs))
    };
    assert!(fit(opts, 1) && !fit(opts, 2));
    assert!(fit("--size=16m --bs=1 --rw=read", 40));
}

/// A job file whose first job's name has a NUL byte, and a second job.
fn nul_job_file(dir: &Path, f: &Path, how: &str) -> std::path::PathBuf {
    let first = match how {
        "section" => "[a\0b]\n".to_string(),
        _ => "[a]\nname=a\0b\n".to_string(),
    };
    let text = format!(
        "[global]\nfilename={}\nsize=64k\nrw=read\n{first}[second]\n",
        s(f)
    );
    write_file(dir, &format!("nul-{how}.fio"), &text)
}

#[test]
fn defect_07_nul_in_a_job_name() {
    let (dir, f) = scratch_file();
    for how in ["section", "option"] {
        let jobfile = nul_job_file(dir.path(), &f, how);
        let out = output_within(
            bin().args(["run", "--no-store", s(&jobfile)]),
            Duration::from_secs(30),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code::USAGE), "{how}: {err}");
        assert_one_line(
            &err,
            &["job name 'a\\u{0}b' has a control character (U+0000)"],
        );
    }
    // File names and log prefixes: a newline cannot be in a fio job file.
    for opt in ["--filename=a\nb", "--write_bw_log=x\u{1b}[31m"] {
        let e = parse_err(&["--name=a", "--size=64k", opt]);
        assert!(e.contains("has a control character"), "{e}");
    }
    assert!(!f.exists(), "refused before any layout");
}

#[test]
fn defect_07_a_huge_name_gets_a_short_error() {
    // A megabyte of NULs in a job name was repeated in the message, each
    // as \u{0}: 6 MB of error, built one allocation per character.
    let name = format!("a{}", "\0".repeat(1 << 20));
    let e = parse_err(&["--size=64k", &format!("--name={name}")]);
    let shown = format!("job name 'a{}... (1048577 bytes)'", r"\u{0}".repeat(99));
    assert!(e.contains(&shown), "{}", &e[..e.len().min(300)]);
    assert!(e.len() < 1000, "{} bytes", e.len());
}

#[test]
fn defect_07_thread_names_cannot_panic() {
    // A library caller may name a job anything: the runner still names
    // its threads, and the run ends (it panicked, then deadlocked).
    let (_dir, f) = scratch_file();
    let args: Vec<String> = ["--size=64k", "--rw=read", "--number_ios=4"]
        .iter()
        .map(|a| a.to_string())
        .chain([format!("--filename={}", s(&f)), "--name=a".into()])
        .chain(["--name=b".into()])
        .collect();
    let mut jobs = job::jobs_from_args(&args).unwrap();
    jobs[0].name = "a\0b".into();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let stop = iolab::runner::StopFlag::new();
        let r = iolab::runner::run(jobs, &Default::default(), &stop);
        let _ = tx.send(r.map(|r| r.jobs.len()).map_err(|e| e.to_string()));
    });
    let ran = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the run ended (no panic, no deadlock)");
    assert_eq!(ran, Ok(2));
}

#[test]
fn defect_07_deep_nesting_is_refused() {
    // 30,000 nested parentheses overflowed the stack.
    let deep = |n: usize| format!("--size={}64k{}", "(".repeat(n), ")".repeat(n));
    let e = parse_err(&["--name=a", &deep(30_000)]);
    assert!(e.contains("nested more than 64 levels deep"), "{e}");
    let ok = job::jobs_from_args(&["--name=a".into(), deep(64)]).unwrap();
    assert_eq!(ok[0].size, Some(64 << 10));
    // So did 20,000 nested includes (2,000 are enough to overflow a test
    // thread's stack); 16 levels below the job file work.
    let dir = scratch();
    let chain = |n: usize| {
        for i in 1..n {
            write_file(
                dir.path(),
                &format!("{i}.inc"),
                &format!("include {}.inc\n", i + 1),
            );
        }
        write_file(dir.path(), &format!("{n}.inc"), "bs=8k\n");
        write_file(dir.path(), "job.fio", "[a]\nsize=64k\ninclude 1.inc\n")
    };
    let jobs = job::jobs_from_args(&[s(&chain(16)).to_string()]).unwrap();
    assert_eq!(jobs[0].bs_min, 8192);
    let e = job::jobs_from_args(&[s(&chain(2_000)).to_string()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("17.inc: includes nested more than 16 levels deep"),
        "{e}"
    );
}

#[test]
fn defect_07_include_fan_out_is_bounded() {
    // Found by the fuzz driver: three levels of 64 includes of an empty
    // file read it 262,144 times (3 s; four levels took minutes), and an
    // empty file costs nothing of the 16 MiB cap. At most 1024 includes.
    let dir = scratch();
    write_file(dir.path(), "empty.inc", "");
    write_file(dir.path(), "2.inc", &"include empty.inc\n".repeat(64));
    write_file(dir.path(), "1.inc", &"include 2.inc\n".repeat(64));
    let job = |name: &str, include: &str, n: usize| {
        let text = format!(
            "[a]\nsize=64k\n{}",
            format!("include {include}\n").repeat(n)
        );
        s(&write_file(dir.path(), name, &text)).to_string()
    };
    let t0 = Instant::now();
    let e = job::jobs_from_args(&[job("fan.fio", "1.inc", 64)])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("empty.inc: more than 1024 includes in all"),
        "{e}"
    );
    // A guard against the blow-up (64^n includes), not a timing: far over
    // what a linear count takes on any machine, far under the blow-up.
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    // 15 + 15 * 64 = 975 includes are fine.
    let jobs = job::jobs_from_args(&[job("ok.fio", "2.inc", 15)]).unwrap();
    assert_eq!(jobs[0].size, Some(64 << 10));
}

#[test]
fn defect_07_a_huge_unknown_option_is_refused_at_once() {
    // Found by the fuzz driver: "did you mean" compared the whole key with
    // every option name (Jaro-Winkler, length times length): a 64 KiB key
    // took 0.5 s, 128 Ki characters 2 s, so these 512 Ki would take 30 s.
    // The limit guards against that quadratic cost, not a timing: a
    // linear check takes milliseconds even on a loaded machine. The
    // suggestion is still made.
    let key = format!("--filename{}", "é".repeat(512 << 10));
    let t0 = Instant::now();
    let e = parse_err(&["--name=a", &key]);
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert!(
        e.ends_with("(did you mean 'filename'?)"),
        "{}",
        &e[e.len() - 80..]
    );
}

#[test]
fn defect_07_global_lines_cost_once_not_once_per_job() {
    // Every job applied every line of the [global]s before it again: this
    // 150 KB file (20,000 global lines, 4,096 jobs) parsed in 51 s, a
    // 16 MiB one would take hours. The globals are applied once in full,
    // then only the last line of each option (the same job).
    let dir = scratch();
    let mut text = format!(
        "[global]\nrw=read\nwrite_bw_log\n{}",
        "bs=4k\n".repeat(20_000)
    );
    text += "bsrange=1k-2k\nbs=8k\nname=x\nwrite_lat_log\nname=y\n";
    text.extend((0..4096).map(|i| format!("[j{i}]\n")));
    let f = write_file(dir.path(), "quadratic.fio", &text);
    let t0 = Instant::now();
    let jobs = job::jobs_from_args(&[s(&f).to_string()]).unwrap();
    // A guard against the quadratic cost (51 s), not a timing.
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(jobs.len(), 4096);
    let all_the_same = jobs.iter().all(|j| j.options == jobs[0].options);
    assert!(
        all_the_same,
        "{:?} / {:?}",
        jobs[0].options, jobs[4095].options
    );
    for (j, section) in [(&jobs[0], "j0"), (&jobs[4095], "j4095")] {
        // blocksize_range anywhere wins over bs (fio's bsrange alias).
        assert_eq!((j.bs_min, j.bs_max), (1024, 2048));
        // A `name=` in [global] does not rename the jobs (fio names each
        // after its section), and a bare log prefix is the job's final
        // name, as in fio.
        assert_eq!(j.name, section);
        assert_eq!(j.logs.bw.as_deref(), Some(section));
        assert_eq!(j.logs.lat.as_deref(), Some(section));
    }
}

#[test]
fn defect_07_fio_keywords_cost_nothing_per_line() {
    // Found by the fuzz driver: each $ncpus read the cgroup's files again
    // (50 us), so 4,096 lines of numjobs=$ncpus took 235 ms. Counted, not
    // timed (a loaded machine makes any time limit flaky): the machine's
    // files are opened once per process, not once per line.
    if !have("strace", "defect_07_fio_keywords_cost_nothing_per_line") {
        return;
    }
    let dir = scratch();
    let lines = "numjobs=$ncpus\nsize=($mb_memory*0+1m)\n".repeat(2_000);
    let f = write_file(dir.path(), "k.fio", &format!("[a]\n{lines}"));
    let log = dir.path().join("opens");
    succeed(
        std::process::Command::new("strace")
            .args(["-f", "-qq", "-e", "trace=open,openat", "-o", s(&log)])
            .arg(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "--parse-only", s(&f)]),
    );
    let opens = std::fs::read_to_string(&log).unwrap();
    let count = |what: &str| opens.lines().filter(|l| l.contains(what)).count();
    let (meminfo, cgroup) = (count("/proc/meminfo"), count("cgroup"));
    assert!(
        (1..=2).contains(&meminfo),
        "/proc/meminfo once, not per line:\n{opens}"
    );
    assert!(cgroup <= 10, "$ncpus once, not per line: {cgroup} opens");
    // The values themselves.
    let jobs = job::jobs_from_args(&[s(&f).to_string()]).unwrap();
    let ncpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(
        (jobs[0].numjobs as usize, jobs[0].size),
        (ncpus, Some(1 << 20))
    );
}

/// The files below `dir`: `path size`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let meta = e.metadata().unwrap();
        let name = e.file_name().into_string().unwrap();
        match meta.is_dir() {
            true => out.extend(files_below(&e.path()).iter().map(|f| format!("{name}/{f}"))),
            false => out.push(format!("{name} {}", meta.len())),
        }
    }
    out.sort();
    out
}

#[test]
fn defect_12_escaped_colon_in_filename() {
    // fio's HOWTO (filename=): "Each colon in the wanted path must be
    // escaped with a \ character"; directory= takes the same escape. iolab
    // split at every colon and made `a\` and `b`. The same command line
    // now makes the same files as fio.
    let made = |cmd: &mut Command, opts: &[&str]| {
        let d = scratch();
        // fio makes a missing parent directory, iolab refuses: both exist.
        std::fs::create_dir_all(d.path().join("dir/c:d")).unwrap();
        succeed(
            cmd.current_dir(d.path())
                .args(["--name=x", "--size=8k", "--rw=write"])
                .args(opts),
        );
        files_below(d.path())
    };
    let cases: [&[&str]; 2] = [
        &[r"--filename=dir/a\:b"],
        &[r"--directory=dir/c\:d", "--filename=e:f"],
    ];
    let want = [&["dir/a:b 8192"][..], &["dir/c:d/e 4096", "dir/c:d/f 4096"]];
    for (opts, want) in cases.iter().zip(want) {
        let iolab = made(bin().args(["run", "--no-store"]), opts);
        assert_eq!(iolab, want, "{opts:?}");
        if have("fio", "defect_12_escaped_colon_in_filename (fio part)") {
            assert_eq!(made(&mut Command::new("fio"), opts), iolab, "fio {opts:?}");
        }
    }
    // fio deals several directories to the clones; iolab takes one.
    let e = parse_err(&["--name=x", "--directory=p:q"]);
    assert!(
        e.contains("directory 'p:q' names 2 directories; iolab takes one"),
        "{e}"
    );
    // As fio's get_next_str: any other backslash stays; empty names go.
    let split = iolab::job::apply::split_filenames;
    assert_eq!(split(r"F\:\filename"), [r"F:\filename"]);
    assert_eq!(split(r"::a\\:b::"), [r"a\:b"]);
    assert_eq!(split(r"a\"), [r"a\"]);
}
