//! fio's thread options under fio and iolab: each clone's thread sets the
//! same nice value, I/O priority and CPUs on itself (the same system calls,
//! seen with strace); options without an effect on the I/O are accepted.

mod common;
use common::*;
use std::process::Command;

/// The scheduling calls (nice, ioprio, affinity) `tool` makes for `args`,
/// reduced to their values: `nice 5`, `ioprio BE 3`, `cpus [0]`.
fn sched_calls(tool: &str, args: &[&str]) -> Vec<String> {
    let d = scratch();
    let log = d.path().join("strace.log");
    let mut cmd = Command::new("strace");
    cmd.current_dir(d.path())
        .args([
            "-f",
            "-qq",
            "-e",
            "trace=sched_setaffinity,setpriority,ioprio_set",
            "-o",
        ])
        .arg(&log);
    if tool == "fio" {
        cmd.arg("fio");
    } else {
        cmd.arg(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "--no-store"]);
    }
    succeed(cmd.args(args).arg("--output-format=json"));
    let text = std::fs::read_to_string(&log).unwrap();
    let mut calls: Vec<String> = text
        .lines()
        .filter_map(|l| {
            // strace -f splits a call that another thread interrupts into
            // `call(args <unfinished ...>` and `<... call resumed>) = 0`:
            // the arguments are all on the first line.
            let l = l.trim_end_matches(" <unfinished ...>");
            let call = l.split_once(' ')?.1.trim_start();
            if let Some(rest) = call.strip_prefix("setpriority(PRIO_PROCESS, ") {
                return Some(format!(
                    "nice {}",
                    rest.split(", ").nth(1)?.split(')').next()?
                ));
            }
            if call.starts_with("ioprio_set(") {
                let v = call.split("IOPRIO_PRIO_VALUE(").nth(1)?.split(')').next()?;
                return Some(format!("ioprio {v}"));
            }
            if call.starts_with("sched_setaffinity(") {
                let cpus = call.split(", ").nth(2)?.split(')').next()?;
                return Some(format!("cpus {cpus}"));
            }
            None
        })
        .collect();
    calls.sort();
    calls.dedup();
    calls
}

#[test]
fn threads_set_the_same_priorities_and_cpus_as_fio() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let two_cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    // The options, and the calls each clone's thread must make.
    let mut cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--nice=5", "--prio=3", "--prioclass=2", "--cpus_allowed=0"],
            vec!["cpus [0]", "ioprio IOPRIO_CLASS_BE, 3", "nice 5"],
        ),
        (vec!["--prio=3"], vec!["ioprio IOPRIO_CLASS_BE, 3"]),
        (
            vec!["--prioclass=3", "--cpumask=0x1"],
            vec!["cpus [0]", "ioprio IOPRIO_CLASS_IDLE, 0"],
        ),
    ];
    if two_cpus {
        cases.push((
            vec![
                "--numjobs=2",
                "--cpus_allowed=0-1",
                "--cpus_allowed_policy=split",
            ],
            vec!["cpus [0]", "cpus [1]"],
        ));
    } else {
        eprintln!("SKIP the split case: fewer than 2 CPUs");
    }
    for (opts, want) in cases {
        let mut args = vec!["--name=t", "--size=64k", "--rw=read"];
        args.extend(&opts);
        let fio = sched_calls("fio", &args);
        let ours = sched_calls("iolab", &args);
        // fio makes more (it pins its main thread, sets nice 0 when none
        // is given): what matters is that both make the job's.
        for call in want {
            assert!(
                fio.iter().any(|c| c == call),
                "{opts:?}: fio made no {call}: {fio:?}"
            );
            assert!(
                ours.iter().any(|c| c == call),
                "{opts:?}: iolab made no {call}: {ours:?}"
            );
        }
    }
}

#[test]
fn options_without_effect_are_accepted_and_others_refused_by_name() {
    let d = scratch();
    let f = d.path().join("f");
    let mut args = job(
        "t",
        &f,
        "--size=64k --threads=1 --io_submit_mode=offload --log_prio=1",
    );
    args.push("--continue_on_error=none".into());
    run_json(&args);
    args.pop();
    args.push("--continue_on_error=all".into());
    run_json(&args);
    run_rejects(
        &["--name=t", "--size=64k", "--continue_on_error=verify"],
        &["continue_on_error=verify: expected none, read, write, io or all"],
    );
    run_rejects(
        &["--name=t", "--size=64k", "--nice=40"],
        &["'40' is not a nice value"],
    );
    run_rejects(
        &["--name=t", "--size=64k", "--cpus_allowed=3-1"],
        &["not a CPU list"],
    );
}
