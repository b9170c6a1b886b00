//! fio's own test scripts (tests/fio_t/t/, from fio's `t/`) run first
//! against the real fio and then against `tests/fio_t/shim/fio`, which runs
//! `iolab run`. Each case a script reports is counted: iolab passes X of the
//! Y cases fio passes. The counts are recorded below: a change either way
//! fails the test (promote a gain here and in docs/fio-compat.md).

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One of fio's scripts: how it is called, and what it passes.
struct Script {
    /// File name under tests/fio_t/t/.
    file: &'static str,
    /// How the script takes the fio to test: `-f` or a bare argument.
    fio_flag: Option<&'static str>,
    /// Arguments after the fio (`{art}` is the artifact directory, `{tools}`
    /// tests/fio_t/tools).
    args: &'static [&'static str],
    /// The quick subset CI runs (`None`: the whole script);
    /// `IOLAB_FIO_T_FULL=1` runs the whole script instead.
    quick: Option<&'static [&'static str]>,
    /// Cases fio passes (Y) in the quick subset.
    fio_passes: usize,
    /// Of those, cases iolab passes (X).
    iolab_passes: usize,
}

const SCRIPTS: &[Script] = &[
    Script {
        file: "readonly.py",
        fio_flag: Some("-f"),
        args: &["-a", "{art}"],
        quick: None,
        fio_passes: 9,
        iolab_passes: 9,
    },
    Script {
        file: "strided.py",
        fio_flag: Some("-f"),
        args: &["-a", "{art}"],
        quick: None,
        fio_passes: 21,
        iolab_passes: 21,
    },
    Script {
        file: "random_seed.py",
        fio_flag: Some("-f"),
        args: &["-a", "{art}"],
        quick: None,
        fio_passes: 13,
        iolab_passes: 13,
    },
    Script {
        file: "jsonplus2csv_test.py",
        fio_flag: Some("-f"),
        args: &["-s", "{tools}/fio_jsonplus_clat2csv"],
        quick: None,
        fio_passes: 1,
        iolab_passes: 1,
    },
    Script {
        file: "log_compression.py",
        fio_flag: Some("-f"),
        args: &[],
        quick: None,
        fio_passes: 2,
        iolab_passes: 2,
    },
    Script {
        file: "verify.py",
        fio_flag: Some("-f"),
        args: &["-a", "{art}"],
        // Test 6 (norandommap, verify_backlog, depth 32): a backlog check
        // once read a block a newer write in flight was changing.
        quick: Some(&["--csum", "crc32c", "-o", "1000", "1001", "6"]),
        fio_passes: 10,
        iolab_passes: 10,
    },
    Script {
        file: "latency_percentiles.py",
        fio_flag: Some("-f"),
        args: &["-a", "{art}"],
        // 4: json+ bins of slat and lat; 8: unified_rw_reporting; 9: the
        // null engine's fsync; 19: per-priority latencies, unified.
        quick: Some(&["-o", "1", "2", "4", "8", "9", "19"]),
        fio_passes: 6,
        iolab_passes: 6,
    },
    Script {
        file: "run-fio-tests.py",
        fio_flag: Some("-f"),
        args: &["-r", "{root}", "-a", "{art}"],
        // Not in CI: t0002 and t0006 (a 1 GiB and a 4 GiB file, a minute
        // under fio), t0009 (4 CPUs), t0010 and t0013 (io_submit_mode=
        // offload: fio 3.33 hangs), t0011, t0012 and t0014 (flows' rates
        // over 10 s, which fio itself misses on a loaded 2-CPU machine;
        // tests/fio_pacing.rs checks flows against fio).
        quick: Some(&[
            "-o", "1", "3", "4", "5", "7", "8", "15", "16", "17", "18", "19", "20", "21", "22",
            "23", "24", "25", "26", "27", "28", "29", "30", "31", "33", "34", "35", "36", "37",
        ]),
        fio_passes: 23,
        // t0023 (randtrimwrite with bsrange and bssplit) passes since the
        // random map covers only free blocks, as fio's; t0031 (read_iolog)
        // fails.
        iolab_passes: 22,
    },
    Script {
        file: "steadystate_tests.py",
        fio_flag: None,
        args: &[],
        quick: Some(&[]),
        fio_passes: 6,
        iolab_passes: 6,
    },
];

/// The longest one script may run against one tool.
const TIME_LIMIT: Duration = Duration::from_secs(900);

/// Scripts running side by side.
const THREADS: usize = 4;

fn fio_t() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_t")
}

/// The Python to run the scripts with: Debian's, where its packages
/// (python3-scipy) are, else `python3` on PATH.
fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// The iolab the shim runs: `IOLAB_FIO_T_BIN` (say, a release build for
/// the time-based cases of a full run), else this build's.
fn iolab_bin() -> std::ffi::OsString {
    std::env::var_os("IOLAB_FIO_T_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_iolab").into())
}

/// True when the whole scripts are asked for (`IOLAB_FIO_T_FULL=1`).
fn full() -> bool {
    std::env::var_os("IOLAB_FIO_T_FULL").is_some()
}

/// The result lines a script printed, in order, each PASSED or not. fio's
/// scripts print one line per case: `Test 3 PASSED ...`, `Test 3 FAILED:
/// ...`, `Test 3 SKIPPED ...` (fiotestlib), `**********Test 1 PASSED***`,
/// `Test with X PASSED`, `PASSED 'text' found ...` (steadystate).
fn results(output: &str) -> Vec<(String, bool)> {
    output
        .lines()
        .map(|l| l.trim().trim_matches('*').trim())
        .filter(|l| {
            l.starts_with("PASSED ")
                || l.starts_with("FAILED ")
                || (l.starts_with("Test ")
                    && [" PASSED", " FAILED", " SKIPPED"]
                        .iter()
                        .any(|w| l.contains(w)))
        })
        .map(|l| (l.chars().take(100).collect(), l.contains("PASSED")))
        .collect()
}

/// Runs `script` against `fio` (a path) in a fresh directory; its result
/// lines and its whole output.
fn run_script(script: &Script, fio: &Path) -> (Vec<(String, bool)>, String) {
    let d = common::scratch();
    let art = d.path().join("artifacts");
    let tools = fio_t().join("tools");
    let mut cmd = Command::new(python());
    cmd.current_dir(d.path())
        .arg(fio_t().join("t").join(script.file))
        .env("IOLAB_BIN", iolab_bin())
        .env("IOLAB_DB", common::test_db());
    match script.fio_flag {
        Some(flag) => cmd.arg(flag).arg(fio),
        None => cmd.arg(fio),
    };
    let fill = |a: &str| {
        a.replace("{art}", common::s(&art))
            .replace("{tools}", common::s(&tools))
            .replace("{root}", common::s(&fio_t()))
    };
    cmd.args(script.args.iter().map(|a| fill(a)));
    if !full() {
        cmd.args(script.quick.unwrap_or_default());
        cmd.env("IOLAB_FIO_T_QUICK", "1");
    }
    let (_, stdout, stderr) = diff::run_limited(&mut cmd, TIME_LIMIT);
    let out = format!("{}\n{stderr}", String::from_utf8_lossy(&stdout));
    (results(&out), out)
}

/// (Y, X, the cases fio passes and iolab fails) of one script.
fn count(script: &Script) -> (usize, usize, Vec<String>) {
    let (fio, fio_out) = run_script(script, Path::new("/usr/bin/fio"));
    let (iolab, _) = run_script(script, &fio_t().join("shim/fio"));
    assert!(
        !fio.is_empty(),
        "{}: no results under fio:\n{fio_out}",
        script.file
    );
    let mut y = 0;
    let mut x = 0;
    let mut lost = Vec::new();
    for (i, (case, passed)) in fio.iter().enumerate() {
        if !passed {
            println!("  {}: fio fails: {case}", script.file);
            continue;
        }
        y += 1;
        match iolab.get(i) {
            Some((_, true)) => x += 1,
            Some((line, false)) => lost.push(line.clone()),
            None => lost.push(format!("{case}: no result under iolab")),
        }
    }
    (y, x, lost)
}

/// True when `python()` can import `module`.
fn has_module(module: &str) -> bool {
    Command::new(python())
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn fio_test_scripts_pass_as_recorded() {
    skip_unless_installed!("fio");
    if !["scipy", "six", "statsmodels"]
        .iter()
        .all(|m| has_module(m))
    {
        eprintln!(
            "SKIP fio_test_scripts_pass_as_recorded: {} lacks scipy, six or statsmodels \
             (.ci/run installs python3-scipy, python3-six and python3-statsmodels)",
            python()
        );
        return;
    }
    let counts = diff::in_parallel(SCRIPTS, THREADS, count);
    let (mut ys, mut xs) = (0, 0);
    let mut changed = Vec::new();
    for (script, (y, x, lost)) in SCRIPTS.iter().zip(&counts) {
        println!("{}: iolab passes {x} of {y} cases fio passes", script.file);
        for l in lost.iter().take(3) {
            println!("  iolab fails: {l}");
        }
        (ys, xs) = (ys + y, xs + x);
        if !full() && (*y, *x) != (script.fio_passes, script.iolab_passes) {
            changed.push(format!(
                "{}: recorded {} of {}, now {x} of {y}",
                script.file, script.iolab_passes, script.fio_passes
            ));
        }
    }
    println!("iolab passes {xs} of {ys} cases fio passes");
    assert!(
        changed.is_empty(),
        "counts changed (record them in SCRIPTS and docs/fio-compat.md):\n{}",
        changed.join("\n")
    );
}

/// The list docs/fio-compat.md keeps under "fio's test scripts".
fn doc_list() -> String {
    let (y, x) = SCRIPTS
        .iter()
        .fold((0, 0), |(y, x), s| (y + s.fio_passes, x + s.iolab_passes));
    let mut lines = vec![format!("iolab passes {x} of the {y} cases fio passes.\n")];
    for s in SCRIPTS {
        let subset = match s.quick {
            None => String::new(),
            Some([]) => " (CI: the quick subset)".to_string(),
            Some(args) => format!(" (CI: `{}`)", args.join(" ")),
        };
        lines.push(format!(
            "- `{}`: iolab passes {} of the {} cases fio passes{subset}",
            s.file, s.iolab_passes, s.fio_passes
        ));
    }
    lines.join("\n")
}

#[test]
fn doc_lists_the_scripts_as_the_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio-compat.md"))
        .unwrap();
    let want = doc_list();
    assert!(
        doc.contains(&want),
        "docs/fio-compat.md, section \"fio's test scripts\", should list:\n{want}"
    );
}

#[test]
fn result_lines_of_every_script_format_are_read() {
    let out = "fio path is x\nTest 1 PASSED 1\nTest 2 FAILED: non-zero return code, 2\n\
               Test 3 SKIPPED (4+ CPUs required) 3\n**********Test 4 PASSED**********\n\
               Test with log_store_compressed=True PASSED\n\
               PASSED 'set steady state' found with arguments\n\
               FAILED job1 no ss\n11 test(s) PASSED, 0 test(s) FAILED\n";
    let r = results(out);
    let passed: Vec<bool> = r.iter().map(|c| c.1).collect();
    assert_eq!(
        passed,
        [true, false, false, true, true, true, false],
        "{r:?}"
    );
}
