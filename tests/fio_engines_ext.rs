//! fio's engines `e4defrag` and `exec` (engines/e4defrag.c, engines/exec.c)
//! under fio and `iolab run`, compared where the results are exact.
//!
//! e4defrag needs ext4: its tests mount a 64 MiB ext4 image on a loop device
//! (root, mkfs.ext4, losetup; else skipped, saying why), unmounted and removed
//! even when they fail, and run its examples (tests/fio_examples/engines_ext/)
//! there, whole and one e4defrag job at a time. The exec tests run a script
//! that records its arguments, output and SIGTERM; no assertion is timed.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use common::*;
use diff::Tool;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

// ---- ext4 on a loop device

/// An ext4 file system on a loop device, mounted for one test; unmounted,
/// detached and deleted when dropped, even if the test fails.
struct Ext4 {
    mnt: PathBuf,
    dev: String,
    _dir: tempfile::TempDir,
}

/// `cmd ARGS`: (success, stdout, stderr), trimmed.
fn sh(cmd: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(cmd).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).trim().to_string();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

impl Ext4 {
    /// A fresh one; `None` with a SKIP line naming `test` where it cannot be made.
    fn new(test: &str) -> Option<Ext4> {
        if !iolab::sys::machine::is_root() {
            eprintln!("SKIP {test}: needs root (an ext4 image mounted on a loop device)");
            return None;
        }
        let tools = ["fio", "mkfs.ext4", "losetup", "mount", "umount", "filefrag"];
        if !tools.iter().all(|t| have(t, test)) {
            return None;
        }
        let dir = scratch();
        let img = dir.path().join("ext4.img");
        std::fs::File::create(&img)
            .and_then(|f| f.set_len(64 << 20))
            .unwrap();
        let (ok, _, err) = sh("mkfs.ext4", &["-q", "-F", s(&img)]);
        assert!(ok, "mkfs.ext4: {err}");
        let (ok, dev, err) = sh("losetup", &["--find", "--show", s(&img)]);
        if !ok {
            eprintln!("SKIP {test}: losetup failed (needs loop devices): {err}");
            return None;
        }
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let fs = Ext4 {
            mnt,
            dev,
            _dir: dir,
        };
        let (ok, _, err) = sh("mount", &[&fs.dev, s(&fs.mnt)]);
        assert!(ok, "mount {}: {err}", fs.dev);
        Some(fs)
    }

    /// A new empty directory `name` on it.
    fn dir(&self, name: &str) -> PathBuf {
        let d = self.mnt.join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        // A tool's child may hold a file a moment longer: retry, then lazily.
        let umount = || sh("umount", &[s(&self.mnt)]).0;
        let pause = || std::thread::sleep(Duration::from_millis(100));
        if !(0..50).any(|_| umount() || (pause(), false).1) {
            sh("umount", &["-l", s(&self.mnt)]);
        }
        sh("losetup", &["-d", &self.dev]);
    }
}

// ---- one tool's run and what it left

/// How a tool's run ended.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    json: Option<Value>,
}

/// fio, or `iolab run --no-store`.
fn tool_cmd(tool: Tool) -> Command {
    fio_or_iolab(["fio", "iolab"][matches!(tool, Tool::Iolab) as usize])
}

/// `cmd` with `args` in `dir`: how it ended.
fn collect(mut cmd: Command, dir: &Path, args: &[&str]) -> Run {
    cmd.current_dir(dir).args(args);
    let (code, out, stderr) = diff::run_limited(&mut cmd, diff::TIME_LIMIT);
    let json = (out.iter().position(|&b| b == b'{'))
        .and_then(|i| code.and_then(|_| diff::json_of(&out[i..])));
    let stdout = String::from_utf8_lossy(&out).into_owned();
    Run {
        code,
        stdout,
        stderr,
        json,
    }
}

/// A reported job: (name, error, [total_ios, io_bytes] of read, write, trim).
type JobStat = (String, i64, [[u64; 2]; 3]);

/// Each reported job of a run.
fn jobs(r: &Run) -> Vec<JobStat> {
    let Some(v) = &r.json else {
        panic!("no JSON: {}", r.stderr)
    };
    let list = (v["jobs"].as_array())
        .unwrap_or_else(|| panic!("{v}"))
        .iter();
    let dir =
        |j: &Value, d: &str| [&j[d]["total_ios"], &j[d]["io_bytes"]].map(|x| x.as_u64().unwrap());
    list.map(|j| {
        let name = j["jobname"].as_str().unwrap().to_string();
        let io = ["read", "write", "trim"].map(|d| dir(j, d));
        (name, j["error"].as_i64().unwrap(), io)
    })
    .collect()
}

/// The files under `dir` but `.fio` ones: (path, size, 512-byte blocks).
fn files(dir: &Path) -> Vec<FileStat> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().map(Result::unwrap) {
            let m = e.metadata().unwrap();
            let name = e.path().strip_prefix(dir).unwrap().display().to_string();
            if m.is_dir() {
                todo.push(e.path());
            } else if !name.ends_with(".fio") {
                out.push((name, m.len(), m.blocks()));
            }
        }
    }
    out.sort();
    out
}

/// The physical blocks of `file` (`filefrag -v`), sorted.
fn extents(file: &Path) -> Vec<u64> {
    let out = Command::new("filefrag").args(["-v", s(file)]).output();
    let out = out.unwrap();
    let mut blocks: Vec<u64> = (String::from_utf8(out.stdout).unwrap().lines())
        .filter_map(|l| {
            // `   0:        0..    1023:      33793..     34816:   1024: ...`
            let cols: Vec<&str> = l.split(':').map(str::trim).collect();
            cols[0].parse::<u64>().ok()?;
            let (a, b) = cols.get(2)?.split_once("..")?;
            Some(a.trim().parse().ok()?..=b.trim().parse().ok()?)
        })
        .flatten()
        .collect();
    blocks.sort();
    blocks
}

// ---- e4defrag

/// The scaled copy of fio's example `name`.
fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fio_examples/engines_ext/{name}.fio"))
}

/// Runs `example` (with `args`) under both tools on `fs`, each in a fresh
/// directory with the example's `scratch/`, deleted after; (fio's,
/// iolab's) runs and the files each left.
fn both(fs: &Ext4, tag: &str, example: &Path, args: &[&str]) -> [(Run, Vec<FileStat>); 2] {
    [Tool::Fio, Tool::Iolab].map(|tool| {
        let d = fs.dir(&format!("{tag}-{tool:?}"));
        std::fs::create_dir(d.join("scratch")).unwrap();
        std::fs::copy(example, d.join("job.fio")).unwrap();
        let args = [args, &["--output-format=json", "job.fio"]].concat();
        let r = collect(tool_cmd(tool), &d, &args);
        let left = files(&d);
        std::fs::remove_dir_all(&d).unwrap(); // room for the next run
        (r, left)
    })
}

/// Names of jobs or files.
type Names = &'static [&'static str];

/// An e4defrag example: each e4defrag job alone (`time_based`: counts not
/// compared; files its random moves fragment; files whose blocks concurrent
/// moves decide, by prefix), the jobs exact in the whole file, and the files
/// whose blocks concurrent writes then decide.
struct Example {
    name: &'static str,
    alone: &'static [(&'static str, bool, Names, Names)],
    exact: Names,
    loose: Names,
}

const E4DEFRAG: &[Example] = &[
    Example {
        name: "e4defrag",
        alone: &[
            ("isolated-e4defrag", false, &[], &[]),
            ("e4defrag", true, &[], &[]),
        ],
        exact: &["isolated-e4defrag"],
        loose: &["scratch/file"],
    },
    Example {
        name: "e4defrag2",
        alone: &[
            // Four clones share one donor.
            ("parallel-e4defrag", false, &[], &["scratch/"]),
            ("e4defrag-1", false, &[], &[]),
            ("e4defrag-2", false, &[], &[]),
            ("e4defrag-fuzzer-4k", false, &["scratch/file"], &[]),
            ("e4defrag-fuzzer-4k-bis", false, &["scratch/file3"], &[]),
        ],
        exact: &["parallel-e4defrag", "e4defrag-1", "e4defrag-fuzzer-4k"],
        loose: &["scratch/file", "scratch/parallel-e4defrag."],
    },
];

/// A file: (path, size, blocks).
type FileStat = (String, u64, u64);

/// The files of both runs agree: names and sizes (the donors left as fio
/// leaves them), and block counts but for files named by a `loose` prefix;
/// `fragmented` ones both runs must have fragmented (the extent tree has
/// blocks of its own: the moves happened).
fn same_files(what: &str, f: &[FileStat], i: &[FileStat], loose: &[&str], fragmented: &[&str]) {
    let sizes = |v: &[FileStat]| v.iter().map(|x| (x.0.clone(), x.1)).collect::<Vec<_>>();
    assert_eq!(sizes(f), sizes(i), "{what}: files and sizes (fio, iolab)");
    for ((name, size, fb), (_, _, ib)) in f.iter().zip(i) {
        if fragmented.contains(&name.as_str()) {
            let whole = size / 512;
            assert!(*fb > whole && *ib > whole, "{what}: {name}: {fb}, {ib}");
        } else if !loose.iter().any(|l| name.starts_with(l)) {
            assert_eq!(fb, ib, "{what}: blocks of {name} (fio, iolab)");
        }
    }
}

/// fio's e4defrag examples under fio and iolab on ext4: each e4defrag job
/// alone (exit status, I/Os and bytes, files, sizes and blocks), then each
/// example whole (its libaio jobs verify a file other jobs write, and fail
/// in both: the jobs, the e4defrag jobs' counts and the files compared).
#[test]
fn e4defrag_examples_run_as_under_fio() {
    let Some(fs) = Ext4::new("e4defrag_examples_run_as_under_fio") else {
        return;
    };
    for ex in E4DEFRAG {
        let (name, job) = (ex.name, example(ex.name));
        for (section, timed, fragmented, loose) in ex.alone {
            let what = format!("{name}.fio --section={section}");
            let only = format!("--section={section}");
            let [(f, ff), (i, fi)] = both(&fs, section, &job, &[&only]);
            assert_eq!(f.code, Some(0), "fio {what}: {}", f.stderr);
            assert_eq!(i.code, f.code, "iolab {what}: {}", i.stderr);
            let (jf, ji) = (jobs(&f), jobs(&i));
            assert_eq!(ji.len(), 1, "{what}");
            assert_eq!((&ji[0].0, ji[0].1), (&jf[0].0, 0), "{what}: job and error");
            let (a, b) = (jf[0].2, ji[0].2);
            assert!(*timed || a == b, "{what}: [ios, bytes]: {a:?}, {b:?}");
            assert!(b[1][0] > 0, "{what}: writes");
            same_files(&what, &ff, &fi, loose, fragmented);
        }
        let what = format!("{name}.fio");
        let [(f, ff), (i, fi)] = both(&fs, &what, &job, &[]);
        let (jf, ji) = (jobs(&f), jobs(&i));
        let names = |j: &[JobStat]| j.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&ji), names(&jf), "{what}: jobs");
        for e in ex.exact {
            let get = |j: &[JobStat]| j.iter().find(|x| x.0 == *e).cloned();
            assert_eq!(get(&ji), get(&jf), "{what}: {e}");
            assert_eq!(get(&jf).unwrap().1, 0, "{what}: {e}");
        }
        same_files(&what, &ff, &fi, ex.loose, &[]);
    }
}

/// A write of e4defrag moves the file's blocks, its data kept: the donor
/// ends with the file's former blocks (`inplace=0`) or empty (`inplace=1`),
/// in fio and iolab.
#[test]
fn e4defrag_moves_the_blocks_as_fio() {
    let Some(fs) = Ext4::new("e4defrag_moves_the_blocks_as_fio") else {
        return;
    };
    let data: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 + 3) as u8).collect();
    for inplace in ["0", "1"] {
        let mut seen = Vec::new();
        for tool in [Tool::Fio, Tool::Iolab] {
            let what = format!("{tool:?} inplace={inplace}");
            let d = fs.dir(&format!("moves-{inplace}-{tool:?}"));
            let file = d.join("file1");
            std::fs::write(&file, &data).unwrap();
            std::fs::File::open(&file).unwrap().sync_all().unwrap();
            let before = extents(&file);
            let opts = format!(
                "--name=j --filename=file1 --ioengine=e4defrag --donorname=file.def --inplace={inplace} --rw=write --bs=32k --filesize=1m --size=1m --output-format=json"
            );
            let iolab = matches!(tool, Tool::Iolab).then_some("--allow-overwrite");
            let args: Vec<&str> = opts.split(' ').chain(iolab).collect();
            let r = collect(tool_cmd(tool), &d, &args);
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            assert!(std::fs::read(&file).unwrap() == data, "{what}: data kept");
            let (after, donor) = (extents(&file), extents(&d.join("file.def")));
            assert_ne!(after, before, "{what}: the file's blocks moved");
            // inplace=0: the donor has the file's former blocks; 1: none.
            let want = if inplace == "0" { &before[..] } else { &[] };
            assert_eq!(donor, want, "{what}: the donor's blocks");
            let sizes: Vec<_> = files(&d).into_iter().map(|f| (f.0, f.1)).collect();
            seen.push((jobs(&r), sizes));
        }
        assert_eq!(
            seen[0], seen[1],
            "inplace={inplace}: (jobs, files) of fio, iolab"
        );
    }
}

// ---- exec

/// The program: records its PID, arguments, a SIGTERM, and writes a line
/// to stdout and one to stderr; left alone it would end after 20 s.
const SCRIPT: &str = r#"echo $$ > pid
printf '%s\n' "$@" > args
echo to-stdout
echo to-stderr >&2
trap 'echo TERM > sig; kill $! 2>/dev/null; exit 3' TERM
sleep 20 >/dev/null 2>&1 &
wait $!
echo done > finished
"#;

/// Runs job `x` with ioengine=exec, /bin/sh and the script, `opts` added,
/// under `tool` in a fresh directory: the run and the directory.
fn exec_job(tool: Tool, opts: &[&str]) -> (Run, tempfile::TempDir) {
    let d = scratch();
    std::fs::write(d.path().join("s.sh"), SCRIPT).unwrap();
    let job = "--name=x --ioengine=exec --program=/bin/sh --runtime=1";
    let words = "--arguments=s.sh %n %r  two\"words here\"";
    let args: Vec<&str> = job
        .split(' ')
        .chain([words])
        .chain(opts.iter().copied())
        .collect();
    (collect(tool_cmd(tool), d.path(), &args), d)
}

/// True while process `pid` runs (a zombie has ended).
fn running(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.rsplit(')').next().unwrap().starts_with(" Z")
}

/// Asserts the script of the run in `dir` was stopped: not running, and
/// not at its end. With a grace time iolab always sends SIGTERM first (and
/// `sig` holds it); fio does when a call finds the runtime passed, else
/// only SIGKILL, which leaves no trace.
fn stopped(tool: Tool, dir: &Path, grace: bool) {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    let pid = read("pid").expect("the program ran");
    let pid: u32 = pid.trim().parse().unwrap();
    let ended = || !running(pid);
    wait_until(Duration::from_secs(20), "the program ends", ended);
    assert_eq!(read("finished"), None, "{tool:?}: stopped before its end");
    let (sig, sure) = (read("sig"), grace && matches!(tool, Tool::Iolab));
    let ok = sig.as_deref() == Some("TERM\n") || (!sure && sig.is_none());
    assert!(ok, "{tool:?}: {sig:?}");
}

/// fio's exec and iolab's: the same arguments (`%n`, `%r`, split at spaces
/// without quoting), the output in `x.stdout` and `x.stderr`, the program
/// stopped when the runtime has passed.
#[test]
fn exec_runs_the_program_for_the_runtime_as_fio() {
    skip_unless_installed!("fio");
    let mut seen = Vec::new();
    for tool in [Tool::Fio, Tool::Iolab] {
        let (r, d) = exec_job(tool, &["--output-format=json"]);
        assert_eq!(r.code, Some(0), "{tool:?}: {}", r.stderr);
        let j = jobs(&r);
        assert_eq!((j.len(), j[0].0.as_str(), j[0].1), (1, "x", 0), "{tool:?}");
        assert!(j[0].2[0][0] > 1, "{tool:?}: calls");
        stopped(tool, d.path(), true);
        let read = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap();
        seen.push([read("args"), read("x.stdout"), read("x.stderr")]);
    }
    assert_eq!(seen[0], seen[1], "fio, iolab: args, x.stdout, x.stderr");
    assert_eq!(
        seen[1],
        ["x\n1\ntwo\"words\nhere\"\n", "to-stdout\n", "to-stderr\n"].map(String::from)
    );
}

/// `std_redirect=0`: the program writes to the tool's own stdout and
/// stderr, and no `x.stdout` or `x.stderr` is made, in both.
#[test]
fn exec_std_redirect_0_leaves_the_output_to_the_tool_as_fio() {
    skip_unless_installed!("fio");
    for tool in [Tool::Fio, Tool::Iolab] {
        let (r, d) = exec_job(tool, &["--std_redirect=0", "--grace_time=0"]);
        assert_eq!(r.code, Some(0), "{tool:?}: {}", r.stderr);
        assert!(r.stdout.contains("to-stdout\n"), "{tool:?}: {}", r.stdout);
        assert!(r.stderr.contains("to-stderr\n"), "{tool:?}: {}", r.stderr);
        assert!(!d.path().join("x.stdout").exists(), "{tool:?}");
        assert!(!d.path().join("x.stderr").exists(), "{tool:?}");
        stopped(tool, d.path(), false);
    }
}

/// The job of fio's examples/exec.fio that needs neither turbostat nor the
/// cpuio engine, `sleep` (`arguments=%r`, `grace_time=0`,
/// `std_redirect=0`, no `size`), runs `/bin/sleep 1` as in fio (strace
/// sees it started) and leaves no file.
#[test]
fn exec_example_sleep_job_runs_as_fio() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let mut seen = Vec::new();
    for tool in [Tool::Fio, Tool::Iolab] {
        let (d, t) = (scratch(), scratch());
        std::fs::copy(example("exec"), d.path().join("exec.fio")).unwrap();
        let trace = t.path().join("trace");
        let inner = tool_cmd(tool);
        let mut strace = Command::new("strace");
        strace.args(["-f", "-qq", "-e", "trace=execve", "-o", s(&trace)]);
        strace.arg(inner.get_program()).args(inner.get_args());
        strace.envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))));
        let args = ["--section=sleep", "--output-format=json", "exec.fio"];
        let r = collect(strace, d.path(), &args);
        assert_eq!(r.code, Some(0), "{tool:?}: {}", r.stderr);
        let started = std::fs::read_to_string(&trace).unwrap();
        let sleep = r#"execve("/bin/sleep", ["/bin/sleep", "1"]"#;
        assert!(started.contains(sleep), "{tool:?}: {started}");
        let j = jobs(&r);
        let names: Vec<_> = j.iter().map(|x| (x.0.clone(), x.1)).collect();
        seen.push((names, files(d.path())));
    }
    assert_eq!(seen[0], seen[1], "fio, iolab: (jobs and errors, files)");
    assert_eq!(seen[1].0, [("sleep".to_string(), 0)]);
    assert!(seen[1].1.is_empty(), "{:?}", seen[1].1);
}

/// Settings fio refuses or fails with, and what iolab says (`OPTIONS | WANT`).
const REFUSED: &[&str] = &[
    "--ioengine=exec --runtime=1 | no program is defined",
    "--ioengine=exec --program=true | give runtime=",
    "--ioengine=psync --donorname=DONOR | option 'donorname' applies to ioengine=e4defrag only",
    "--ioengine=libaio --grace_time=2 | option 'grace_time' applies to ioengine=exec only",
    "--ioengine=e4defrag --rw=write --filesize=1m | 'donorname' options required",
    "--ioengine=e4defrag --donorname=DONOR --filesize=1m | e4defrag only writes",
    "--ioengine=e4defrag --donorname=DONOR --rw=write --size=1m | give filesize= or inplace=1",
    "--ioengine=e4defrag --donorname=DONOR --rw=write --filesize=1m --inplace=2 | inplace",
];

/// What fio refuses or fails, iolab refuses before the run, saying why.
#[test]
fn e4defrag_and_exec_settings_are_refused_with_reasons() {
    let (d, f) = scratch_file();
    let donor = d.path().join("d");
    for case in REFUSED {
        let (opts, want) = case.split_once(" | ").unwrap();
        let opts = opts.replace("DONOR", s(&donor));
        let (code, err) = run_err(&job("r", &f, &opts));
        assert_eq!(code, code::USAGE, "{opts}: {err}");
        assert!(err.contains(want), "{opts}: {err}");
        assert!(!f.exists() && !donor.exists(), "{opts}: nothing made");
    }
}
