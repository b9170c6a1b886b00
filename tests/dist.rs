//! Many hosts through a launcher (`iolab run --hosts`, `iolab worker`):
//! local workers started by `env` or a shell script stand in for ssh. The
//! ranks' I/Os add up, the merged histogram is the sum of the ranks' bucket
//! by bucket, every rank has its own files, and a version mismatch or a
//! killed worker is an error naming the host with what the others measured
//! kept.

mod common;

use common::ranks::rank_job;
use common::*;
use iolab::dist::{Coordinator, Launch};
use iolab::runner::StopFlag;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn worker() -> Vec<String> {
    let exe = assert_cmd::cargo::cargo_bin("iolab");
    vec![exe.to_string_lossy().into_owned(), "worker".into()]
}

#[test]
fn ranks_add_up_and_their_histograms_merge_exactly() {
    let d = scratch();
    let f = d.path().join("f");
    let launch = Launch {
        hosts: vec!["a".into(), "b".into(), "c".into()],
        launcher: vec!["env".into(), "IOLAB_TEST_HOST={host}".into()],
        worker: worker(),
        timeout: Duration::from_secs(60),
        silence: Duration::from_secs(10),
        stonewall: false,
    };
    let args = rank_job(&f, &["--group_reporting"]);
    let (dist, failed) = Coordinator::start(launch)
        .unwrap()
        .run(&args, &StopFlag::default())
        .unwrap();
    assert!(failed.is_none(), "{failed:?}");
    // Each rank on its own file, named with its rank.
    for r in 0..3 {
        assert!(d.path().join(format!("f.{r}")).exists(), "rank {r}'s file");
    }
    assert!(!f.exists());
    // One rank reads 512 blocks; the merged run reads 3 x 512.
    let entries = dist.run.entries();
    assert_eq!(entries.len(), 1, "group_reporting: one entry");
    let all = &entries[0].total.read;
    assert_eq!(all.ios(), 3 * 512);
    assert_eq!(all.bytes, 3 * (2 << 20));
    let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
    for h in &dist.hosts {
        let t = h.totals.as_ref().expect("every rank's results");
        assert_eq!(t.read.ios(), 512, "rank {}", h.rank);
        for (v, n) in t.read.lat.bins() {
            *sum.entry(v).or_default() += n;
        }
        assert!(h.failed.is_none());
    }
    let merged: BTreeMap<u64, u64> = all.lat.bins().into_iter().collect();
    assert_eq!(
        merged, sum,
        "the merged histogram is the ranks' sum, bucket by bucket"
    );
    assert_eq!(
        all.lat.sum(),
        dist.hosts
            .iter()
            .map(|h| h.totals.as_ref().unwrap().read.lat.sum())
            .sum::<u128>()
    );
    // Every rank started after the barrier, within a second of the others
    // (a liveness bound: milliseconds here; bench/dist.py times the skew).
    assert!(dist.hosts.iter().all(|h| h.started_ns > 0));
    assert!(
        dist.start_skew_ns() < 1_000_000_000,
        "{}",
        dist.start_skew_ns()
    );
}

#[test]
fn run_hosts_shows_a_row_per_host_and_stores_one_run() {
    let d = scratch();
    let db = d.path().join("r.db");
    let f = d.path().join("f");
    let out = succeed(with_db(&db).arg("run").args(rank_job(&f, &[])).args([
        "--hosts",
        "h1,h2",
        "--launcher",
        "env IOLAB_TEST_HOST={host}",
    ]));
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("hosts (2 ranks; start skew"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("0 ") || l.trim_start().starts_with("1 "))
        .collect();
    assert!(
        rows.iter().any(|l| l.contains(" h1 ") && l.ends_with("ok")),
        "{text}"
    );
    assert!(
        rows.iter().any(|l| l.contains(" h2 ") && l.ends_with("ok")),
        "{text}"
    );
    let n: i64 = query_one(&db, "SELECT COUNT(*) FROM runs");
    assert_eq!(n, 1);
    // The stored run holds both ranks' clones: 2 x 512 reads.
    let shown = stdout_json(with_db(&db).args(["show", "1", "--output-format", "json"]));
    let ios: u64 = (shown["jobs"].as_array().unwrap().iter())
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(ios, 1024, "{shown}");
}

#[test]
fn a_worker_of_another_version_is_refused_naming_both() {
    let d = scratch();
    let fake = d.path().join("old-iolab");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '{\"msg\":\"hello\",\"body\":{\"version\":\"0.0.1\",\"host\":\"old\",\"pid\":1}}'\nread line\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let err = fails_with(
        bin()
            .arg("run")
            .args(rank_job(&d.path().join("f"), &[]))
            .args([
                "--no-store",
                "--hosts",
                "old",
                "--launcher",
                "env",
                "--worker-cmd",
                s(&fake),
            ]),
        1,
        "host old runs iolab 0.0.1",
    );
    assert!(
        err.contains(&format!("this is iolab {}", env!("CARGO_PKG_VERSION"))),
        "{err}"
    );
}

#[test]
fn a_killed_worker_is_named_and_the_others_results_are_kept() {
    let d = scratch();
    let db = d.path().join("r.db");
    let f = d.path().join("f");
    let child = with_db(&db)
        .arg("run")
        .args(rank_job(&f, &["--time_based", "--runtime=60s"]))
        .args([
            "--hosts",
            "good,bad",
            "--launcher",
            "env IOLAB_TEST_HOST={host}",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Host "bad" is killed once both hosts are seen reading, not a guessed
    // second into its run (a loaded machine may not have started it yet).
    let pids = wait_reading(d.path(), &["good", "bad"]);
    unsafe_kill(pids[1] as u32, libc::SIGKILL);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("host bad ended before sending its results"),
        "{err}"
    );
    assert!(err.contains("kept, marked partial"), "{err}");
    // What "good" measured is stored, as an interrupted (partial) run.
    let n: i64 = query_one(&db, "SELECT COUNT(*) FROM runs");
    assert_eq!(n, 1, "{err}");
    let shown = stdout_json(with_db(&db).args(["show", "1", "--output-format", "json"]));
    let ios: u64 = (shown["jobs"].as_array().unwrap().iter())
        .map(|j| j["read"]["total_ios"].as_u64().unwrap_or(0))
        .sum();
    assert!(ios > 0, "{shown}");
}

#[test]
fn a_hung_worker_is_dead_after_its_heartbeats_stop() {
    let d = scratch();
    let launch = Launch {
        hosts: vec!["ok".into(), "hung".into()],
        launcher: vec!["env".into(), "IOLAB_TEST_HOST={host}".into()],
        worker: worker(),
        timeout: Duration::from_secs(60),
        silence: Duration::from_secs(5),
        stonewall: false,
    };
    let args = rank_job(&d.path().join("f"), &["--time_based", "--runtime=120s"]);
    let (dist, failed, took) = std::thread::scope(|sc| {
        let run = sc.spawn(|| {
            let t0 = std::time::Instant::now();
            let (dist, failed) = Coordinator::start(launch)
                .unwrap()
                .run(&args, &StopFlag::default())
                .unwrap();
            (dist, failed, t0.elapsed())
        });
        // Host "hung" is stopped (SIGSTOP) once both hosts are seen
        // reading: its stream stays open, only its heartbeats stop.
        let pids = wait_reading(d.path(), &["ok", "hung"]);
        unsafe_kill(pids[1] as u32, libc::SIGSTOP);
        let r = run.join().unwrap();
        unsafe_kill(pids[1] as u32, libc::SIGKILL);
        r
    });
    let err = failed.expect("the hung host fails the run").to_string();
    assert!(
        err.contains("host hung") && err.contains("no heartbeat"),
        "{err}"
    );
    // Found dead 5 s after its last heartbeat, long before the 120 s run
    // ends (a liveness bound; heartbeats come every second).
    assert!(took < Duration::from_secs(60), "{took:?}");
    // The other host stopped early and its results are kept.
    let ok = &dist.hosts[0];
    assert!(ok.totals.as_ref().is_some_and(|t| t.read.ios() > 0));
    assert!(dist.hosts[1].failed.is_some());
    assert!(dist.run.interrupted);
}

#[test]
fn ctrl_c_stops_every_worker_and_keeps_the_partial_run() {
    let d = scratch();
    let db = d.path().join("r.db");
    let child = with_db(&db)
        .arg("run")
        .args(rank_job(
            &d.path().join("f"),
            &["--time_based", "--runtime=30s"],
        ))
        .args(["--hosts", "a,b", "--launcher", "env IOLAB_TEST_HOST={host}"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once both ranks are seen reading (not after a guessed 2 s), SIGINT
    // to the coordinator alone: it tells the workers to stop.
    wait_reading(d.path(), &["a", "b"]);
    unsafe_kill(child.id(), libc::SIGINT);
    let t0 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    // A liveness bound: the stop takes well under a second, the run 30 s.
    assert!(t0.elapsed() < Duration::from_secs(20));
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("hosts (2 ranks"), "{text}");
    let n: i64 = query_one(&db, "SELECT COUNT(*) FROM runs");
    assert_eq!(n, 1);
    // No worker is left running: no process holds a file of this test.
    assert!(holders(d.path()).is_empty(), "{:?}", holders(d.path()));
}

/// The processes with a file under `dir` open.
fn holders(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|t| t.starts_with(dir)) {
                out.push(p.file_name().to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// The workers of `hosts` (their pids, in that order), once each is seen
/// with its rank file under `dir` open and has read 1 MiB more since it was
/// first seen (`rchar` of /proc/PID/io): every rank's run under way. Waits
/// up to 60 s (a liveness bound).
fn wait_reading(dir: &Path, hosts: &[&str]) -> Vec<i32> {
    let mut first: Vec<Option<(i32, u64)>> = vec![None; hosts.len()];
    wait_for(Duration::from_secs(60), "every rank reading", || {
        for (i, host) in hosts.iter().enumerate() {
            let Some(pid) = rank_worker(dir, host) else {
                continue;
            };
            let now = rchar(pid)?;
            match first[i] {
                Some((p, _)) if p == pid => {}
                _ => first[i] = Some((pid, now)),
            }
        }
        let done = (first.iter().enumerate()).all(|(i, f)| {
            f.is_some_and(|(pid, at)| {
                rank_worker(dir, hosts[i]) == Some(pid)
                    && rchar(pid).is_some_and(|r| r >= at + (1 << 20))
            })
        });
        done.then(|| first.iter().map(|f| f.unwrap().0).collect())
    })
}

/// The process started for `host` (IOLAB_TEST_HOST in its environment)
/// one of whose threads holds a rank file (`f.N`) under `dir` open.
fn rank_worker(dir: &Path, host: &str) -> Option<i32> {
    let want = format!("IOLAB_TEST_HOST={host}");
    for p in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let env = std::fs::read(p.path().join("environ")).unwrap_or_default();
        if !env.split(|&b| b == 0).any(|v| v == want.as_bytes()) {
            continue;
        }
        // A clone's thread holds its files in a descriptor table of its
        // own: look at every thread's.
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else {
            continue;
        };
        let holds = tasks.flatten().any(|t| {
            let fds = std::fs::read_dir(t.path().join("fd"));
            fds.into_iter().flatten().flatten().any(|fd| {
                std::fs::read_link(fd.path()).is_ok_and(|t| {
                    t.parent() == Some(dir)
                        && t.file_name()
                            .is_some_and(|n| n.to_string_lossy().starts_with("f."))
                })
            })
        });
        if holds {
            return Some(pid);
        }
    }
    None
}

/// Bytes `pid` has read (`rchar` of /proc/PID/io).
fn rchar(pid: i32) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .and_then(|v| v.trim().parse().ok())
}

fn unsafe_kill(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a child process id this test started.
    unsafe {
        libc::kill(pid as i32, sig);
    }
}

#[test]
fn stonewall_stops_every_host_when_the_first_is_done() {
    let d = scratch();
    let db = d.path().join("r.db");
    // Host "slow" is handed another job on its way: a million reads at 200
    // IOPS (over an hour) instead of 50.
    let launcher = d.path().join("launch.sh");
    std::fs::write(
        &launcher,
        "#!/bin/sh\nh=$1; shift\nif [ \"$h\" = slow ]; then\n  \
         sed -u 's/\"--number_ios=50\"/\"--number_ios=1000000\",\"--rate_iops=200\"/' | \"$@\"\n  \
         exit\nfi\nexec \"$@\"\n",
    )
    .unwrap();
    let launch_words = format!("sh {} {{host}}", launcher.display());
    let t0 = std::time::Instant::now();
    let doc = stdout_json(
        with_db(&db)
            .arg("run")
            .args(rank_job(
                &d.path().join("f"),
                &["--number_ios=50", "--output-format=json"],
            ))
            .args(["--hosts", "fast,slow", "--launcher", &launch_words])
            .arg("--stonewall-ranks"),
    );
    // Liveness bounds: the slow host's job would take over an hour (and
    // 1000 reads 5 s); it is stopped within a fraction of a second.
    assert!(t0.elapsed() < Duration::from_secs(60));
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["read"]["total_ios"], 50, "{doc}");
    let slow = hosts[1]["read"]["total_ios"].as_u64().unwrap();
    assert!(slow < 1000, "slow was stopped early: {slow} reads");
    let status: String = query_one(&db, "SELECT status FROM runs");
    assert_eq!(status, "complete", "a planned stop is not an interruption");
}

/// `--stonewall-ranks` alone (one host, no MPI) would mean nothing: refused.
#[test]
fn stonewall_without_ranks_is_refused() {
    let d = scratch();
    let f = d.path().join("f");
    fails_with(
        bin()
            .arg("run")
            .args(rank_job(&f, &[]))
            .arg("--stonewall-ranks"),
        2,
        "--stonewall-ranks: stops ranks when the first is done: give --hosts",
    );
    assert!(!f.exists(), "nothing run");
}
