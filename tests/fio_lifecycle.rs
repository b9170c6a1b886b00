//! fio's job lifecycle against fio itself: `startdelay` delays a job,
//! `exitall` cuts the other jobs short when one ends, `wait_for` orders
//! jobs, `new_group` makes reporting groups (JSON `groupid`), steady state
//! ends a steady job early with fio's JSON `steadystate` object, and
//! `--debug=parse` prints fio's steady-state lines.

mod common;

use common::{bin, fio_json, scratch};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Runs `args` under fio and under iolab, each in a folder of its own
/// under `dir`; each tool's JSON and wall time.
fn both(dir: &Path, args: &[&str]) -> [(Value, Duration); 2] {
    let with_dir = |tool: &str| {
        let d = dir.join(tool);
        std::fs::create_dir_all(&d).unwrap();
        let mut v = vec![format!("--directory={}", d.display())];
        v.extend(args.iter().map(|a| a.to_string()));
        v
    };
    let t = Instant::now();
    let f = fio_json(&with_dir("fio"));
    let fio_wall = t.elapsed();
    let t = Instant::now();
    let out = bin()
        .args(["run", "--no-store", "--output-format=json"])
        .args(with_dir("iolab"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let i = common::parse_json(&out.stdout);
    [(f, fio_wall), (i, t.elapsed())]
}

/// The entry of job `name`.
fn entry<'a>(v: &'a Value, name: &str) -> &'a Value {
    common::json_item(&v["jobs"], "jobname", name)
}

fn ios(j: &Value, dir: &str) -> u64 {
    j[dir]["total_ios"].as_u64().unwrap()
}

#[test]
fn startdelay_delays_the_job_in_both_tools() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--name=late",
        "--size=64k",
        "--rw=read",
        "--startdelay=700ms",
    ];
    for (v, wall) in both(d.path(), &args) {
        assert!(wall >= Duration::from_millis(700), "{wall:?}");
        assert_eq!(ios(entry(&v, "late"), "read"), 16);
    }
}

#[test]
fn exitall_ends_the_others_when_the_first_ends() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--exitall",
        "--name=short",
        "--size=256k",
        "--rw=read",
        "--name=long",
        "--size=1m",
        "--rw=randread",
        "--time_based",
        "--runtime=60",
    ];
    let runs = both(d.path(), &args);
    // The long job would run 60 s; cut when the short one ends, it takes
    // well under a second. Half its runtime is a liveness bound, not a
    // timing: no load stretches the cut that far.
    for (v, wall) in &runs {
        assert!(*wall < Duration::from_secs(30), "{wall:?}");
        assert_eq!(ios(entry(v, "short"), "read"), 64);
        let long = entry(v, "long");
        assert!(long["read"]["runtime"].as_u64().unwrap() < 30_000, "{long}");
    }
    // Without exitall the long job runs its 3 seconds: the cut is real.
    let args: Vec<&str> = args[1..]
        .iter()
        .map(|a| {
            if *a == "--runtime=60" {
                "--runtime=1"
            } else {
                a
            }
        })
        .collect();
    for (v, _) in both(d.path(), &args) {
        assert!(entry(&v, "long")["read"]["runtime"].as_u64().unwrap() >= 950);
    }
}

#[test]
fn wait_for_starts_a_job_after_its_waitee_ends() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--size=256k",
        "--time_based",
        "--runtime=500ms",
        "--name=a",
        "--rw=read",
        "--name=b",
        "--rw=read",
        "--wait_for=a",
    ];
    for (v, wall) in both(d.path(), &args) {
        // One after the other: twice the runtime, not once.
        assert!(wall >= Duration::from_millis(1000), "{wall:?}");
        assert!(ios(entry(&v, "b"), "read") > 0);
    }
}

#[test]
fn new_group_makes_reporting_groups_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--size=64k",
        "--group_reporting",
        "--name=a",
        "--rw=read",
        "--name=b",
        "--rw=read",
        "--numjobs=2",
        "--name=c",
        "--new_group",
        "--rw=write",
        "--name=e",
        "--rw=randread",
    ];
    let [(f, _), (i, _)] = both(d.path(), &args);
    let groups = |v: &Value| -> Vec<(String, u64, u64, u64)> {
        (v["jobs"].as_array().unwrap().iter())
            .map(|j| {
                let name = j["jobname"].as_str().unwrap().to_string();
                (
                    name,
                    j["groupid"].as_u64().unwrap(),
                    ios(j, "read"),
                    ios(j, "write"),
                )
            })
            .collect()
    };
    assert_eq!(groups(&f), groups(&i));
    assert_eq!(
        groups(&i),
        [("a".into(), 0, 48, 0), ("c".into(), 1, 16, 16)]
    );
}

#[test]
fn steadystate_ends_a_steady_job_early_in_both_tools() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--name=steady",
        "--size=1m",
        "--rw=read",
        "--numjobs=2",
        "--group_reporting",
        "--time_based",
        "--runtime=60",
        "--ss=iops:80%",
        "--ss_dur=2",
    ];
    let [(f, fw), (i, iw)] = both(d.path(), &args);
    let keys = |o: &Value| -> Vec<String> { o.as_object().unwrap().keys().cloned().collect() };
    // Steady after 2 s or a few more, the job ends long before its 60 s:
    // half of them is a liveness bound, not a timing.
    for (v, wall) in [(&f, fw), (&i, iw)] {
        assert!(wall < Duration::from_secs(30), "{wall:?}");
        let ss = &entry(v, "steady")["steadystate"];
        assert_eq!(ss["attained"], 1, "{ss}");
        assert_eq!(ss["ss"], "iops:80.000000%");
        assert_eq!(ss["duration"], 2);
        assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 2);
        assert!(ss["data"]["iops_mean"].as_u64().unwrap() > 0);
    }
    // The same keys (serde_json keeps them sorted), in the object and its data.
    let (fs, is) = (
        &entry(&f, "steady")["steadystate"],
        &entry(&i, "steady")["steadystate"],
    );
    assert_eq!(keys(fs), keys(is));
    assert_eq!(keys(&fs["data"]), keys(&is["data"]));
}

#[test]
fn debug_parse_prints_fios_steady_state_lines() {
    skip_unless_installed!("fio");
    for ss in ["iops:10", "iops:.1%", "bw:12", "bw_slope:5%"] {
        let args = [
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            &format!("--ss={ss}"),
        ];
        let fio = std::process::Command::new("fio")
            .args(args)
            .output()
            .unwrap();
        let want = String::from_utf8_lossy(&fio.stdout)
            .lines()
            .find_map(|l| l.split_once("set steady state").map(|(_, t)| t.to_string()))
            .unwrap();
        let out = bin()
            .args(["run", "--no-store"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(&format!("set steady state{want}")),
            "{ss}: {text}"
        );
    }
}

#[test]
fn exit_what_ends_the_running_jobs_or_all_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    // fio's exitwhat.fio with time-based "fast" jobs instead of rate-limited
    // ones: short1 ends every running job (exit_what=stonewall), then short2
    // ends all (exit_what=all); each fast job would run 60 s alone, and is
    // cut within a second: the bounds (half of that) are liveness checks.
    let fast = ["--rw=randread", "--time_based", "--runtime=60"];
    let mut args = vec![
        "--size=256k",
        "--group_reporting",
        "--exitall",
        "--name=short1",
        "--rw=read",
        "--exit_what=stonewall",
        "--name=fast1",
        "--new_group",
    ];
    args.extend(fast);
    args.extend([
        "--name=short2",
        "--stonewall",
        "--rw=write",
        "--exit_what=all",
        "--name=fast2",
    ]);
    args.extend(fast);
    let [(f, fw), (i, iw)] = both(d.path(), &args);
    let names = |v: &Value| -> Vec<(String, u64)> {
        (v["jobs"].as_array().unwrap().iter())
            .map(|j| {
                (
                    j["jobname"].as_str().unwrap().into(),
                    j["groupid"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(names(&f), names(&i));
    for (v, wall) in [(&f, fw), (&i, iw)] {
        assert!(wall < Duration::from_secs(30), "{wall:?}");
        assert_eq!(ios(entry(v, "short1"), "read"), 64);
        // fast2 is in short2's group: the entry holds both.
        assert_eq!(ios(entry(v, "short2"), "write"), 64);
        assert!(entry(v, "fast1")["read"]["runtime"].as_u64().unwrap() < 30_000);
    }
}

#[test]
fn normal_output_has_fios_run_status_groups() {
    skip_unless_installed!("fio");
    let d = scratch();
    let args = [
        "--size=64k",
        "--name=w",
        "--rw=write",
        "--name=r",
        "--new_group",
        "--rw=read",
        "--name=rw",
        "--stonewall",
        "--rw=randrw",
    ];
    // The group headers and the direction of each line under them.
    let groups = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                l.starts_with("Run status group")
                    || l.starts_with("   READ:")
                    || l.starts_with("  WRITE:")
            })
            .map(|l| l.split(':').next().unwrap().trim().to_string())
            .collect()
    };
    let mut texts = Vec::new();
    for tool in ["fio", "iolab"] {
        let dir = d.path().join(tool);
        std::fs::create_dir_all(&dir).unwrap();
        let mut cmd = if tool == "fio" {
            std::process::Command::new("fio")
        } else {
            let mut c = bin();
            c.args(["run", "--no-store"]);
            c
        };
        let out = cmd
            .arg(format!("--directory={}", dir.display()))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{tool}: {out:?}");
        texts.push(groups(&String::from_utf8_lossy(&out.stdout)));
    }
    assert_eq!(texts[0], texts[1]);
    assert_eq!(texts[1].len(), 7, "{:?}", texts[1]);
}
