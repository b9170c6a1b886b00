//! Every command the README shows runs: the lines of its ```sh blocks and
//! the `$ ` lines of its output blocks, in the README's order, in one
//! scratch directory (as `HOME`, so the default database is used), with
//! `examples/` copied there. Sizes and counts are scaled down by the
//! substitutions in `SCALE` (the same commands, small data); `cargo test`
//! is this suite itself and is not run again.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// (written in the README, run here): the README's sizes made small.
const SCALE: &[(&str, &str)] = &[
    ("cargo run --release -- ", "iolab "),
    ("lab prefetch", "lab prefetch --quick --size 16M --ops 800"),
    ("--size=1G", "--size=16M"),
    ("--size=256M", "--size=16M"),
    ("--size=64M", "--size=16M"),
    ("--size 1G", "--size 16M"),
    ("--runtime=10s", "--runtime=1s"),
    ("--loops=100", "--loops=2"),
    ("--repeat 5", "--repeat 2"),
    ("--repeat=5", "--repeat=2"),
    ("--repeat 3", "--repeat 2"),
    (
        "--dirs 10 --levels 3 --files 10",
        "--dirs 3 --levels 2 --files 3",
    ),
    ("threads=1..4", "threads=1..2"),
    ("--interval 10s", "--interval 1s"),
    ("--delay 1ms,10ms", "--delay 1ms"),
    ("/tmp/", "tmp/"),
    ("/data/", "data/"),
];

/// The same for the example job files copied into the scratch directory.
const SCALE_JOBS: &[(&str, &str)] = &[
    ("size=1G", "size=16M"),
    ("filesize=64M", "filesize=4M"),
    ("number_ios=20000", "number_ios=1000"),
    ("loops=100", "loops=2"),
];

/// The commands of the README, in order: lines of ```sh blocks (joined at
/// a trailing `\`, without comments) and `$ ` lines of other blocks.
fn commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut block: Option<bool> = None; // Some(true): a sh block
    let mut pending = String::new();
    for line in readme.lines() {
        if let Some(rest) = line.strip_prefix("```") {
            block = match block {
                None => Some(rest.trim() == "sh"),
                Some(_) => None,
            };
            continue;
        }
        let cmd = match block {
            Some(true) => line,
            Some(false) => match line.strip_prefix("$ ") {
                Some(c) => c,
                None => continue,
            },
            None => continue,
        };
        let cmd = cmd.split("  #").next().unwrap().trim();
        if cmd.is_empty() || cmd.starts_with('#') {
            continue;
        }
        match cmd.strip_suffix('\\') {
            Some(head) => pending += head,
            None => {
                out.push(format!("{pending}{cmd}"));
                pending.clear();
            }
        }
    }
    out
}

fn scaled(cmd: &str, table: &[(&str, &str)]) -> String {
    table
        .iter()
        .fold(cmd.to_string(), |c, (from, to)| c.replace(from, to))
}

/// Copies `examples/*.fio` into `dir/examples`, scaled down.
fn copy_examples(dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fio") {
            let text = std::fs::read_to_string(&p).unwrap();
            let to = dir.join("examples").join(p.file_name().unwrap());
            std::fs::write(to, scaled(&text, SCALE_JOBS)).unwrap();
        }
    }
}

#[test]
fn the_commands_are_found() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let cmds = commands(&readme);
    assert_eq!(cmds[0], "cargo run --release -- lab prefetch");
    assert!(cmds.iter().any(|c| c.starts_with("iolab run --name=s")
        && c.contains("--rw=randread --loops=100")));
    assert!(cmds.iter().all(|c| !c.contains('\\') && !c.contains("  #")));
}

#[test]
fn every_command_of_the_readme_runs() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let d = scratch();
    copy_examples(d.path());
    for sub in ["tmp", "data", ".zfunc", ".local/share/man/man1"] {
        std::fs::create_dir_all(d.path().join(sub)).unwrap();
    }
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_iolab")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let mut ran = 0;
    for cmd in commands(&readme) {
        if cmd == "cargo test" {
            continue;
        }
        if (cmd.contains("iolab disk") || cmd.contains("--delay")) && !disk::can(&cmd) {
            continue;
        }
        // The replay needs the trace the eBPF tracer wrote just before.
        let ebpf = cmd.starts_with("iolab trace -")
            || cmd.starts_with("iolab replay")
            || cmd.starts_with("iolab trace export");
        if ebpf && !common::trace::can(&cmd) {
            continue;
        }
        // mpirun needs a build with the `mpi` feature (CI's), and mpirun.
        if cmd.starts_with("mpirun") && !(cfg!(feature = "mpi") && have("mpirun", &cmd)) {
            eprintln!("SKIP `{cmd}`: needs mpirun and a build with --features mpi");
            continue;
        }
        let run = scaled(&cmd, SCALE);
        let out = Command::new("bash")
            .args(["-o", "pipefail", "-c", &run])
            .current_dir(d.path())
            .env("HOME", d.path())
            .env("PATH", &path)
            .env_remove("IOLAB_DB")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("SKIP") || (cmd.contains("--flamegraph") && err.contains("perf")) {
            eprintln!("SKIP `{cmd}`: {err}");
            continue;
        }
        assert!(
            out.status.success(),
            "README command failed: `{cmd}` (run as `{run}`): {err}"
        );
        ran += 1;
    }
    assert!(ran >= 20, "only {ran} commands ran");
}
