//! fio's `cpuio` engine (engines/cpu.c) under fio and `iolab run`: a job
//! burns CPU `cpuload` percent of the time and does no I/O. The CPU a run
//! takes depends on what else runs; the time its job's thread wants a CPU
//! (running, or runnable and waiting: the thread's schedstat, sampled from
//! outside) does not, and is what the assertions compare. The CPU got
//! (the child's rusage from wait4(2) against its wall time) is printed;
//! bench/pacing.py measures how close to 80% and 10% of a CPU it comes.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use common::*;
use diff::Tool;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Instant;

/// A finished child: its exit code, CPU seconds (user + system), wall
/// seconds, the seconds its job's threads wanted a CPU (on one or waiting
/// for one) and stdout.
struct Measured {
    code: i32,
    cpu: f64,
    wall: f64,
    demand: f64,
    stdout: Vec<u8>,
}

/// `wait4(pid)`: the child's exit status and resource use.
///
/// # Safety
///
/// Sound: `status` and `usage` are locals the call writes into; `pid` is
/// a child of this process not yet waited for (std's `Child` is dropped
/// without waiting by the caller).
fn wait4(pid: u32) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: rusage is plain integers; zeroes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to locals that outlive the call.
    let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(
        rc,
        pid as libc::pid_t,
        "wait4: {}",
        std::io::Error::last_os_error()
    );
    (libc::WEXITSTATUS(status), usage)
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// The threads of `tool`'s job under the process `pid`, each with the
/// nanoseconds it has been runnable (on a CPU, or on a run queue waiting
/// for one: the first two fields of /proc/PID/task/TID/schedstat). iolab's
/// clone is a thread named after the job (`burn.0`); fio's job is a child
/// process.
fn job_threads(tool: Tool, pid: u32) -> Vec<(u64, u64)> {
    let tasks = |p: &str| -> Vec<std::path::PathBuf> {
        let dir = format!("/proc/{p}/task");
        (std::fs::read_dir(dir).into_iter().flatten().flatten())
            .map(|e| e.path())
            .collect()
    };
    let procs: Vec<String> = match tool {
        Tool::Iolab => vec![pid.to_string()],
        Tool::Fio => (std::fs::read_dir("/proc").into_iter().flatten().flatten())
            .filter_map(|e| {
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                let ppid = stat.rsplit_once(") ")?.1.split(' ').nth(1)?;
                (ppid == pid.to_string()).then(|| e.file_name().to_string_lossy().into_owned())
            })
            .collect(),
    };
    let mut out = Vec::new();
    for p in procs {
        for t in tasks(&p) {
            let comm = std::fs::read_to_string(t.join("comm")).unwrap_or_default();
            if matches!(tool, Tool::Iolab) && !comm.starts_with("burn") {
                continue;
            }
            let Ok(st) = std::fs::read_to_string(t.join("schedstat")) else {
                continue;
            };
            let f: Vec<u64> = st
                .split(' ')
                .filter_map(|x| x.trim().parse().ok())
                .collect();
            let tid = t
                .file_name()
                .unwrap()
                .to_string_lossy()
                .parse()
                .unwrap_or(0);
            if f.len() >= 2 {
                out.push((tid, f[0] + f[1]));
            }
        }
    }
    out
}

/// Runs `cmd` (`tool`) to its end, measuring its CPU and wall time, and
/// sampling every 10 ms how long its job's threads were runnable.
fn measure(tool: Tool, mut cmd: Command) -> Measured {
    use std::io::Read;
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (stdout, runnable) = std::thread::scope(|sc| {
        let sampler = sc.spawn(|| {
            let mut seen = std::collections::HashMap::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for (tid, ns) in job_threads(tool, pid) {
                    let e = seen.entry(tid).or_insert(0);
                    *e = ns.max(*e);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            seen.values().sum::<u64>()
        });
        let mut stdout = Vec::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_end(&mut stdout)
            .unwrap();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        (stdout, sampler.join().unwrap())
    });
    let (code, usage) = wait4(pid);
    let wall = t0.elapsed().as_secs_f64();
    std::mem::forget(child); // reaped by wait4 above
    Measured {
        code,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        wall,
        demand: runnable as f64 / 1e9,
        stdout,
    }
}

/// One cpuio job of `load` percent for `secs` seconds under `tool`.
fn burn(tool: Tool, load: u32, secs: u32, mode: &str) -> Measured {
    let d = scratch();
    let mut cmd = match tool {
        Tool::Fio => Command::new("fio"),
        Tool::Iolab => {
            let mut c = bin();
            c.args(["run", "--no-store"]);
            c
        }
    };
    cmd.current_dir(d.path()).args([
        "--name=burn".to_string(),
        "--ioengine=cpuio".to_string(),
        format!("--cpuload={load}"),
        format!("--cpumode={mode}"),
        format!("--runtime={secs}"),
        "--time_based".to_string(),
        "--output-format=json".to_string(),
    ]);
    let m = measure(tool, cmd);
    assert_eq!(m.code, 0, "{tool:?} cpuload={load}");
    m
}

/// The JSON job `burn` of a run.
fn job_json(m: &Measured) -> Value {
    let at = m.stdout.iter().position(|&b| b == b'{').expect("JSON");
    let v: Value = diff::json_of(&m.stdout[at..]).expect("JSON");
    v["jobs"][0].clone()
}

/// The part of its runtime (the job's own `job_runtime`) that the job's
/// threads wanted a CPU.
fn wanted(m: &Measured) -> f64 {
    let runtime_s = job_json(m)["job_runtime"].as_f64().unwrap() / 1e3;
    m.demand / runtime_s
}

/// The JSON job `burn` of a run: (read ios, read bytes, write ios).
fn calls(m: &Measured) -> (u64, u64, u64) {
    let j = &job_json(m);
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    (
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
    )
}

/// cpuload=80 wants a CPU far more of the time than cpuload=10, in iolab
/// as in fio, and neither much more than its share: the spin is 50 ms
/// (by the clock) and the think time `50 × (100 − load) / load` ms, so
/// the job's thread is runnable 80 % and 10 % of its runtime. That is
/// counted from the thread's own schedstat (time on a CPU plus time
/// waiting for one), which no load changes: a loaded machine makes a spin
/// wait for a CPU, not stop wanting one. The CPU it got is printed only
/// (bench/pacing.py measures it against 0.8 and 0.1 on a quiet machine).
#[test]
fn cpuio_cpu_use_follows_cpuload_as_fio() {
    let test = "cpuio_cpu_use_follows_cpuload_as_fio (fio's half)";
    let tools: &[Tool] = if have("fio", test) {
        &[Tool::Fio, Tool::Iolab]
    } else {
        &[Tool::Iolab]
    };
    for &tool in tools {
        let high = burn(tool, 80, 2, "noop");
        let low = burn(tool, 10, 2, "noop");
        let (h, l) = (wanted(&high), wanted(&low));
        println!(
            "{tool:?}: cpuload=80 wanted a CPU {h:.2} of its runtime (got {:.2} of its wall \
             time), cpuload=10 {l:.2} (got {:.2})",
            high.cpu / high.wall,
            low.cpu / low.wall
        );
        // Eight times the spin: over twice the time wanting a CPU. A job
        // that does not spin at all wants almost none in either.
        assert!(h > 2.0 * l, "{tool:?}: 80 %: {h:.2}, 10 %: {l:.2}");
        assert!(
            h > 0.5,
            "{tool:?}: cpuload=80 wanted a CPU {h:.2} of the time"
        );
        assert!(
            l < 0.3,
            "{tool:?}: cpuload=10 wanted a CPU {l:.2} of the time"
        );
        // Calls are reads of no bytes: 100 ms a call at 50 %, 62.5 ms at
        // 80 %, 500 ms at 10 % (fio's FIO_NOIO).
        let (hc, lc) = (calls(&high), calls(&low));
        assert!(hc.0 > lc.0, "{tool:?}: calls {hc:?} {lc:?}");
        assert!((1..=5).contains(&lc.0), "{tool:?}: cpuload=10 calls {lc:?}");
        assert_eq!((hc.1, hc.2, lc.1, lc.2), (0, 0, 0, 0), "{tool:?}: bytes");
    }
}

/// `cpumode=qsort` burns as well (each call sorts; the think time follows
/// the time it took, and a call outlasts a 1 s runtime in a debug build):
/// runnable more of its runtime at 100 % than at 10 %.
#[test]
fn cpuio_qsort_mode_burns_as_its_load_says() {
    let high = burn(Tool::Iolab, 100, 1, "qsort");
    let low = burn(Tool::Iolab, 10, 1, "qsort");
    let (h, l) = (wanted(&high), wanted(&low));
    println!("qsort: cpuload=100 wanted a CPU {h:.2} of its runtime, cpuload=10 {l:.2}");
    assert!(h > 2.0 * l, "100 %: {h:.2}, 10 %: {l:.2}");
    let (ios, bytes, _) = calls(&high);
    assert!(ios >= 1 && bytes == 0, "{ios} calls, {bytes} bytes");
}

/// Settings fio refuses or iolab does not do, and what iolab says.
const REFUSED: &[&str] = &[
    "--runtime=1 | cpu thread needs rate (cpuload=)",
    "--runtime=1 --cpuload=0 | cpu thread needs rate",
    "--cpuload=50 | give runtime=",
    "--runtime=1 --cpuload=50 --exit_on_io_done=1 | not supported by iolab yet",
];

/// What fio refuses, iolab refuses before the run, saying why; cpuio's
/// options under another engine are refused as the other engines' are.
#[test]
fn cpuio_settings_are_refused_with_reasons() {
    let d = scratch();
    for case in REFUSED {
        let (opts, want) = case.split_once(" | ").unwrap();
        let mut cmd = bin();
        cmd.current_dir(d.path())
            .args(["run", "--no-store", "--name=c", "--ioengine=cpuio"])
            .args(opts.split(' '));
        let (code, err) = fail(&mut cmd);
        assert_eq!(code, 2, "{opts}: {err}");
        assert!(err.contains(want), "{opts}: {err}");
    }
    let mut cmd = bin();
    cmd.current_dir(d.path()).args([
        "run",
        "--no-store",
        "--name=c",
        "--ioengine=null",
        "--size=1m",
        "--cpuload=50",
    ]);
    let (code, err) = fail(&mut cmd);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("applies to ioengine=cpuio only"), "{err}");
}
