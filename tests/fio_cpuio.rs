//! fio's `cpuio` engine (engines/cpu.c) under fio and `iolab run`: a job
//! burns CPU `cpuload` percent of the time and does no I/O. The CPU a run
//! takes is measured from outside (the child's rusage from wait4(2))
//! against its wall time. The two loads compared run side by side, so
//! whatever else runs takes from both alike (a loaded 2-CPU machine slows
//! a spin, it cannot speed it up); no run is timed against a target:
//! bench/pacing.py measures how close to 80% and 10% of a CPU they come.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use common::*;
use diff::Tool;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::Instant;

/// A finished child: its exit code, CPU seconds (user + system), wall
/// seconds and stdout.
struct Measured {
    code: i32,
    cpu: f64,
    wall: f64,
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

/// Runs `cmd` to its end, measuring its CPU and wall time.
fn measure(mut cmd: Command) -> Measured {
    use std::io::Read;
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let (code, usage) = wait4(child.id());
    let wall = t0.elapsed().as_secs_f64();
    std::mem::forget(child); // reaped by wait4 above
    Measured {
        code,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
        wall,
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
    let m = measure(cmd);
    assert_eq!(m.code, 0, "{tool:?} cpuload={load}");
    m
}

/// The JSON job `burn` of a run: (read ios, read bytes, write ios).
fn calls(m: &Measured) -> (u64, u64, u64) {
    let at = m.stdout.iter().position(|&b| b == b'{').expect("JSON");
    let v: Value = diff::json_of(&m.stdout[at..]).expect("JSON");
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
    (
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
    )
}

/// Two cpuio jobs of `tool` at once, of `high` and `low` percent for
/// `secs` seconds: under the same load, whatever it is.
fn burn_side_by_side(tool: Tool, (high, low): (u32, u32), secs: u32, mode: &str) -> [Measured; 2] {
    std::thread::scope(|sc| {
        let h = sc.spawn(|| burn(tool, high, secs, mode));
        let l = sc.spawn(|| burn(tool, low, secs, mode));
        [h.join().unwrap(), l.join().unwrap()]
    })
}

/// cpuload=80 takes clearly more CPU than cpuload=10, in iolab as in fio,
/// and neither takes more than its share by much: the spin is 50 ms and
/// the think time `50 × (100 − load) / load` ms, so 80 % and 10 % of the
/// wall time are the targets. A busy machine lowers both (a spin waits
/// for a CPU), alike as they run side by side; nothing raises the second
/// but start-up.
#[test]
fn cpuio_cpu_use_follows_cpuload_as_fio() {
    let test = "cpuio_cpu_use_follows_cpuload_as_fio (fio's half)";
    let tools: &[Tool] = if have("fio", test) {
        &[Tool::Fio, Tool::Iolab]
    } else {
        &[Tool::Iolab]
    };
    for &tool in tools {
        let [high, low] = burn_side_by_side(tool, (80, 10), 2, "noop");
        let (h, l) = (high.cpu / high.wall, low.cpu / low.wall);
        println!("{tool:?}: cpuload=80 used {h:.2} of a CPU, cpuload=10 {l:.2}");
        // Eight times the spin under the same load: over twice the CPU
        // (start-up, the same for both, is all that narrows it). A job
        // that does not spin at all gives both the start-up alone.
        assert!(h > 2.0 * l, "{tool:?}: 80 %: {h:.2}, 10 %: {l:.2}");
        // No load raises the CPU a job takes over its wall time.
        assert!(l < 0.45, "{tool:?}: cpuload=10 used {l:.2} of a CPU");
        // Calls are reads of no bytes: 100 ms a call at 50 %, 62.5 ms at
        // 80 %, 500 ms at 10 % (fio's FIO_NOIO).
        let (hc, lc) = (calls(&high), calls(&low));
        assert!(hc.0 > lc.0, "{tool:?}: calls {hc:?} {lc:?}");
        assert!((1..=5).contains(&lc.0), "{tool:?}: cpuload=10 calls {lc:?}");
        assert_eq!((hc.1, hc.2, lc.1, lc.2), (0, 0, 0, 0), "{tool:?}: bytes");
    }
}

/// `cpumode=qsort` burns as well (each call sorts; the think time follows
/// the time it took): more CPU at 100 % than at 10 %.
#[test]
fn cpuio_qsort_mode_burns_as_its_load_says() {
    let [high, low] = burn_side_by_side(Tool::Iolab, (100, 10), 1, "qsort");
    let (h, l) = (high.cpu / high.wall, low.cpu / low.wall);
    println!("qsort: cpuload=100 used {h:.2} of a CPU, cpuload=10 {l:.2}");
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
