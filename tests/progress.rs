//! Live progress: on a terminal (a pty made by util-linux's `script`) a
//! bar with the phase, IOPS, bandwidth and ETA, redrawn while the job
//! runs; nothing off a terminal unless `--eta=always`; nothing with
//! `--quiet`; the library's phases and live figures as a `Progress` hears
//! them.

mod common;
use common::*;
use iolab::runner::{self, Live, NoObserver, Phase, Progress, RunOptions, StopFlag};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// A job of `secs` seconds reading a small cached file in `dir`.
fn timed_job(dir: &Path, secs: u32) -> Vec<String> {
    let opts = format!("--rw=read --size=8m --time_based --runtime={secs} --no-store");
    job("t", &dir.join("f"), &opts)
}

/// What a terminal shows while `iolab ARGS` runs on it (stdout to
/// `dir/out.txt`, so the terminal gets stderr alone): each chunk read from
/// the pty, with whether the results were on stdout yet when it came (they
/// are written as the run ends). Asserts iolab succeeded.
fn on_a_terminal(dir: &Path, args: &[String]) -> Vec<(bool, String)> {
    let bin = assert_cmd::cargo::cargo_bin("iolab");
    let quoted: Vec<String> = (std::iter::once(s(&bin).to_string()).chain(args.iter().cloned()))
        .map(|a| format!("'{a}'"))
        .collect();
    let out = dir.join("out.txt");
    let line = format!("{} > '{}'", quoted.join(" "), s(&out));
    let mut child = Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .current_dir(dir)
        .env("IOLAB_DB", test_db())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start script");
    let mut pty = child.stdout.take().unwrap();
    let mut chunks = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = pty.read(&mut buf) {
        let ended = std::fs::read_to_string(&out).is_ok_and(|t| t.contains("IOPS="));
        chunks.push((ended, String::from_utf8_lossy(&buf[..n]).into_owned()));
    }
    assert!(child.wait().unwrap().success(), "iolab {args:?} failed");
    chunks
}

/// The frames a bar drew: the text between carriage returns, escape
/// sequences dropped, each with its chunk's mark.
fn frames(chunks: &[(bool, String)]) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for (t, chunk) in chunks {
        for part in chunk.split('\r') {
            let mut text = String::new();
            let mut chars = part.chars();
            while let Some(c) = chars.next() {
                if c == '\x1b' {
                    // CSI: ESC [ params letter
                    chars.by_ref().find(|c| c.is_ascii_alphabetic());
                } else {
                    text.push(c);
                }
            }
            if !text.trim().is_empty() {
                out.push((*t, text.trim().to_string()));
            }
        }
    }
    out
}

/// The number after `key ` in `frame` (`ETA 3s` → 3, as seconds).
fn eta_seconds(frame: &str) -> Option<u64> {
    let rest = &frame[frame.find("ETA ")? + 4..];
    let word = rest.split_whitespace().next()?;
    word.strip_suffix('s')?.parse().ok()
}

#[test]
fn a_terminal_sees_the_bar_move_with_iops_and_eta() {
    skip_unless_installed!("script");
    let d = scratch();
    let mut args = vec!["run".to_string()];
    args.extend(timed_job(d.path(), 5));
    let shown = frames(&on_a_terminal(d.path(), &args));
    let live: Vec<&(bool, String)> = (shown.iter())
        .filter(|(_, f)| f.contains(" IOPS ") && f.contains("ETA "))
        .collect();
    // Figures about every half second (10 in 5 s; at least 3 distinct
    // ones is a liveness floor, the cadence is not timed), shown as the
    // run went: the first reached the terminal before the results reached
    // stdout (not all at its end), whatever the load.
    let mut distinct: Vec<&str> = live.iter().map(|(_, f)| f.as_str()).collect();
    distinct.dedup();
    assert!(distinct.len() >= 3, "few updates: {distinct:#?}");
    assert!(!live[0].0, "the bar came with the results: {live:#?}");
    // The phase, a rate with its unit, and an ETA that counts down to 0.
    assert!(
        shown.iter().any(|(_, f)| f.contains("layout")),
        "{shown:#?}"
    );
    assert!(live.iter().all(|(_, f)| f.contains(" run ")), "{live:#?}");
    assert!(live.iter().all(|(_, f)| f.contains("iB/s")), "{live:#?}");
    let etas: Vec<u64> = live.iter().filter_map(|(_, f)| eta_seconds(f)).collect();
    assert!(etas.windows(2).all(|w| w[0] >= w[1]), "{etas:?}");
    assert!(etas[0] >= 3 && *etas.last().unwrap() <= 1, "{etas:?}");
    // The results went to stdout whole, without a trace of the bar.
    let out = std::fs::read_to_string(d.path().join("out.txt")).unwrap();
    assert!(out.contains("read: IOPS="), "{out}");
    assert!(!out.contains('\x1b') && !out.contains("ETA"), "{out}");
}

#[test]
fn quiet_and_never_keep_a_terminal_clean() {
    skip_unless_installed!("script");
    let d = scratch();
    for flag in ["--quiet", "-q", "--eta=never"] {
        let mut args = vec!["run".to_string(), flag.to_string()];
        args.extend(timed_job(d.path(), 2));
        let chunks = on_a_terminal(d.path(), &args);
        let all: String = chunks.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(all, "", "{flag}");
        let out = std::fs::read_to_string(d.path().join("out.txt")).unwrap();
        assert!(out.contains("read: IOPS="), "{flag}: {out}");
    }
    // A sweep's step lines go too with --quiet (before the subcommand).
    let mut args = vec![
        "-q".into(),
        "sweep".into(),
        "--vary".into(),
        "bs=4k,8k".into(),
    ];
    args.extend(timed_job(d.path(), 1));
    let all: String = (on_a_terminal(d.path(), &args).iter())
        .map(|(_, c)| c.clone())
        .collect();
    assert_eq!(all, "");
}

#[test]
fn eta_newline_prints_lines_on_a_terminal() {
    skip_unless_installed!("script");
    let d = scratch();
    let mut args = vec!["run".to_string(), "--eta-newline=1".to_string()];
    args.extend(timed_job(d.path(), 3));
    let all: String = (on_a_terminal(d.path(), &args).iter())
        .map(|(_, c)| c.clone())
        .collect();
    // fio's ETA on a new line: plain lines (the pty ends them with CR LF), no bar.
    assert!(!all.contains('\x1b'), "{all:?}");
    let live = (all.lines()).filter(|l| l.starts_with("iolab: run: ") && l.contains(" IOPS, "));
    assert!(live.count() >= 2, "{all:?}");
}

#[test]
fn nothing_on_stderr_off_a_terminal() {
    let d = scratch();
    let (out, err) = succeed_text(bin().arg("run").args(timed_job(d.path(), 2)));
    assert!(out.contains("read: IOPS="), "{out}");
    assert_eq!(err, "");
    // A sweep says its steps, but shows no live figures.
    let (_, err) = succeed_text(
        bin()
            .args(["sweep", "--vary", "bs=4k,8k"])
            .args(timed_job(d.path(), 1)),
    );
    assert!(err.contains("iolab: sweep point 2/2: bs=8k"), "{err}");
    assert!(!err.contains("IOPS") && !err.contains("ETA"), "{err}");
}

#[test]
fn eta_always_prints_lines_off_a_terminal() {
    let d = scratch();
    // fio's spelling, in each place a global flag may stand.
    for flags in [
        &["run", "--eta=always"][..],
        &["run", "--eta", "always"],
        &["--eta=always", "run"],
        &["--eta", "always", "run"],
    ] {
        let (out, err) = succeed_text(bin().args(flags).args(timed_job(d.path(), 3)));
        assert!(out.contains("read: IOPS="), "{flags:?}: {out}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines[0], "iolab: layout", "{err}");
        let live: Vec<&&str> = (lines.iter())
            .filter(|l| l.starts_with("iolab: run: ") && l.contains(" IOPS, "))
            .collect();
        // At most a line a second, each with elapsed time and ETA.
        assert!((2..=4).contains(&live.len()), "{flags:?}: {err}");
        // The others name a phase, each once at most (rate-limited too:
        // evict and run come within a second of the layout and are left
        // out, unless laying out took longer, as on a loaded machine).
        let phases = ["iolab: layout", "iolab: evict", "iolab: run"];
        let other: Vec<&&str> = (lines.iter()).filter(|l| !live.contains(l)).collect();
        assert!(other.iter().all(|l| phases.contains(l)), "{err}");
        let mut once = other.clone();
        once.sort();
        once.dedup();
        assert_eq!(once.len(), other.len(), "{err}");
        assert!(
            live.iter()
                .all(|l| l.contains("elapsed 00:00:0") && l.contains("ETA 00:00:0")),
            "{err}"
        );
        assert!(!err.contains('\x1b'), "{err}");
    }
    // --eta-interval spaces the lines out (fio's flag of run): one in 3 s.
    let (_, err) = succeed_text(
        bin()
            .args(["run", "--eta=always", "--eta-interval=5s"])
            .args(timed_job(d.path(), 3)),
    );
    assert_eq!(err, "iolab: layout\n");
    // And --quiet wins.
    let (_, err) = succeed_text(
        bin()
            .args(["run", "--eta=always", "-q"])
            .args(timed_job(d.path(), 1)),
    );
    assert_eq!(err, "");
}

#[test]
fn sweeps_and_comparisons_name_their_step_in_the_progress() {
    let d = scratch();
    let (_, err) = succeed_text(
        bin()
            .args(["sweep", "--eta=always", "--vary", "bs=4k,8k"])
            .args(timed_job(d.path(), 2)),
    );
    for point in ["sweep point 1/2", "sweep point 2/2"] {
        let live = format!("iolab: {point} · run: ");
        assert!(
            err.lines()
                .any(|l| l.starts_with(&live) && l.contains(" IOPS, ")),
            "{err}"
        );
    }
    let side = |bs: &str| {
        format!("--name={bs} --filename=f --rw=read --bs={bs} --size=8m --time_based --runtime=2")
    };
    let (_, err) = succeed_text(
        bin()
            .current_dir(d.path())
            .args(["compare", "--eta=always", "--no-store", "--repeat", "1"])
            .args([side("4k"), side("8k")]),
    );
    let live = (err.lines()).filter(|l| l.starts_with("iolab: compare round 1/1 · run: "));
    assert!(live.count() >= 2, "{err}");
}

#[test]
fn a_labs_steps_show_unless_quiet() {
    let d = scratch();
    let lab = [
        "lab",
        "small-reads",
        "--quick",
        "--ops",
        "200",
        "--no-store",
    ];
    let (_, err) = succeed_text(bin().current_dir(d.path()).args(lab));
    assert!(
        err.contains("iolab: small-reads: 1 thread(s), 200 reads each"),
        "{err}"
    );
    let (out, err) = succeed_text(bin().current_dir(d.path()).arg("-q").args(lab));
    assert_eq!(err, "");
    assert!(out.contains("small-reads"), "{out}");
    // With progress asked for, it names the lab's step and the run's phase.
    let (_, err) = succeed_text(bin().current_dir(d.path()).arg("--eta=always").args(lab));
    assert!(err.contains("\niolab: small-reads · layout\n"), "{err}");
}

#[test]
fn bad_eta_values_are_refused_naming_the_choices() {
    let err = fails_with(
        bin().args(["--eta=sometimes", "history"]),
        code::USAGE,
        "sometimes",
    );
    assert!(err.contains("auto") && err.contains("always") && err.contains("never"));
}

/// Collects what a run tells its progress.
#[derive(Default)]
struct Heard {
    phases: Vec<Phase>,
    ticks: Vec<Live>,
}

impl Progress for Heard {
    fn step(&mut self, _what: &str) {}
    fn live(&self) -> bool {
        true
    }
    fn phase(&mut self, phase: Phase) {
        self.phases.push(phase);
    }
    fn tick(&mut self, live: &Live) {
        self.ticks.push(*live);
    }
}

#[test]
fn a_run_tells_its_phases_and_live_figures() {
    let d = scratch();
    let f = d.path().join("f");
    let args = job(
        "t",
        &f,
        "--rw=read --size=4m --time_based --runtime=2500ms --repeat=2",
    );
    let jobs = iolab::job::jobs_from_args(&args).unwrap();
    let mut heard = Heard::default();
    let stop = StopFlag::default();
    let r = runner::run_with(
        jobs,
        &RunOptions::default(),
        &stop,
        &mut NoObserver,
        &mut heard,
    )
    .unwrap();
    assert_eq!(r.repetitions.len(), 2);
    use iolab::job::CachePolicy::Cold;
    let run = |rep| Phase::Run { rep, reps: 2 };
    assert_eq!(
        heard.phases,
        [
            Phase::Layout,
            Phase::Cache(Cold),
            run(1),
            Phase::Cache(Cold),
            run(2),
            Phase::Done
        ]
    );
    // Twice a second per repetition (5 in each; 4 in all is a liveness
    // floor, not a cadence: the first two fall in the first 2.5 s
    // repetition); I/Os grow within a repetition; the part done grows over
    // the whole run and the ETA shrinks.
    let t = &heard.ticks;
    assert!(t.len() >= 4, "{t:#?}");
    assert!(
        t.iter().all(|l| l.running == 1 && l.eta_ns.is_some()),
        "{t:#?}"
    );
    assert!(t[1].ios > t[0].ios && t[1].bytes > t[0].bytes, "{t:#?}");
    let done: Vec<f64> = t.iter().map(|l| l.done.unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{done:?}");
    assert!(done[0] < 0.5 && *done.last().unwrap() > 0.5, "{done:?}");
    let eta: Vec<u64> = t.iter().map(|l| l.eta_ns.unwrap()).collect();
    assert!(eta.windows(2).all(|w| w[0] >= w[1]), "{eta:?}");
    let (iops, bw) = t[1].rates_since(&t[0]).unwrap();
    assert!(iops > 0.0 && bw >= iops * 4096.0 * 0.99, "{iops} {bw}");
}

#[test]
fn a_quiet_progress_hears_no_phases() {
    // Without live(), a run costs its progress nothing: no phases, no ticks.
    let d = scratch();
    let f = d.path().join("f");
    let jobs = iolab::job::jobs_from_args(&job("t", &f, "--rw=read --size=1m")).unwrap();
    let mut phases = 0;
    struct Count<'a>(&'a mut u32);
    impl Progress for Count<'_> {
        fn step(&mut self, _: &str) {}
        fn phase(&mut self, _: Phase) {
            *self.0 += 1;
        }
        fn tick(&mut self, _: &Live) {
            *self.0 += 1;
        }
    }
    let stop = StopFlag::default();
    let opts = RunOptions::default();
    runner::run_with(jobs, &opts, &stop, &mut NoObserver, &mut Count(&mut phases)).unwrap();
    assert_eq!(phases, 0);
}

#[test]
fn a_tree_shows_its_operations_per_second() {
    let d = scratch();
    let top = d.path().join("t");
    let create = [
        "tree",
        "create",
        s(&top),
        "--dirs",
        "10",
        "--levels",
        "3",
        "--files",
        "50",
        "--size",
        "1k",
        "--time-limit",
        "3s",
        "--no-store",
    ];
    let (_, err) = succeed_text(bin().arg("--eta=always").args(create));
    let live: Vec<&str> = (err.lines())
        .filter(|l| l.starts_with("iolab: tree create: ") && l.contains(" ops/s, elapsed "))
        .collect();
    assert!(!live.is_empty(), "{err}");
    // Metadata counts no bytes: no bandwidth.
    assert!(!err.contains("B/s"), "{err}");
    // Off a terminal without --eta=always: none of it.
    let remove = ["tree", "remove", s(&top), "--no-store"];
    let (_, err) = succeed_text(bin().args(remove));
    assert_eq!(err, "");
}

/// The README's progress command, as written there.
#[test]
fn readme_progress_command_runs() {
    let readme = include_str!("../README.md");
    let line = (readme.lines())
        .find(|l| l.starts_with("iolab run --name=p ") && l.contains("--eta=always"))
        .expect("the README shows a run with --eta=always");
    let d = scratch();
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    let (out, err) = succeed_text(bin().current_dir(d.path()).args(&args));
    assert!(out.contains("read: IOPS="), "{out}");
    assert!(err.starts_with("iolab: layout\n"), "{err}");
    assert!(
        err.contains("iolab: run: ") && err.contains(" IOPS, "),
        "{err}"
    );
}
