//! Many hosts through a launcher (`iolab run --hosts`, `iolab worker`):
//! local workers started by `env` or a shell script stand in for ssh. The
//! ranks' I/Os add up, the merged histogram is the sum of the ranks' bucket
//! by bucket, every rank has its own files, and a version mismatch or a
//! killed worker is an error naming the host with what the others measured
//! kept.

mod common;

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

fn job(f: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["--name=r", "--size=2m", "--rw=randread", "--bs=4k"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push(format!("--filename={}", f.display()));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
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
    };
    let args = job(&f, &["--group_reporting"]);
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
    // Every rank started after the barrier, within a second of the others.
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
    let out = succeed(with_db(&db).arg("run").args(job(&f, &[])).args([
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
        bin().arg("run").args(job(&d.path().join("f"), &[])).args([
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
    // The launcher kills host "bad" one second into its run.
    let launcher = d.path().join("launch.sh");
    std::fs::write(
        &launcher,
        "#!/bin/sh\nh=$1; shift\nif [ \"$h\" = bad ]; then exec timeout -s KILL 1 \"$@\"; fi\nexec \"$@\"\n",
    )
    .unwrap();
    let f = d.path().join("f");
    let launch_words = format!("sh {} {{host}}", launcher.display());
    let err = fails_with(
        with_db(&db)
            .arg("run")
            .args(job(&f, &["--time_based", "--runtime=4s"]))
            .args(["--hosts", "good,bad", "--launcher", &launch_words]),
        1,
        "host bad ended before sending its results",
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
