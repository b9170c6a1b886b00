//! `mpirun iolab run JOB` (cargo feature `mpi`): four ranks on this machine
//! through the system's Open MPI. Their I/Os add up, rank 0 gathers every
//! rank's histograms exactly, shows a row per rank and the start skew,
//! stores one run with a row per rank; `--stonewall-ranks` stops every rank
//! when the first is done. A build without the feature refuses to run
//! under an MPI launcher. CI builds with `--features mpi`.

mod common;

use common::ranks::rank_job;
use common::*;
#[cfg(feature = "mpi")]
use std::path::Path;
#[cfg(feature = "mpi")]
use std::process::Command;

/// `mpirun -n N iolab SUB` (as root, more ranks than CPUs allowed).
#[cfg(feature = "mpi")]
fn mpirun_iolab(n: u32, sub: &str) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-n",
        &n.to_string(),
    ])
    .arg(assert_cmd::cargo::cargo_bin("iolab"))
    .arg(sub);
    c
}

/// `mpirun -n N iolab run ARGS` storing into `db`, or `None` (with the
/// reason printed) where mpirun or the feature is missing.
#[cfg(feature = "mpi")]
fn mpirun(test: &str, n: u32, db: &Path, args: &[String]) -> Option<Command> {
    if !have("mpirun", test) {
        return None;
    }
    let mut c = mpirun_iolab(n, "run");
    c.args(args).env("IOLAB_DB", db);
    Some(c)
}

#[cfg(feature = "mpi")]
#[test]
fn four_ranks_add_up_and_merge_their_histograms_exactly() {
    use iolab::runner::RunResult;
    use std::collections::BTreeMap;
    let d = scratch();
    let (db, f) = (d.path().join("r.db"), d.path().join("f"));
    let args = rank_job(&f, &["--group_reporting", "--output-format=json"]);
    let Some(mut cmd) = mpirun("four_ranks_add_up", 4, &db, &args) else {
        return;
    };
    let (out, err) = succeed_text(&mut cmd);
    // Quiet: iolab says nothing on stderr (what the MPI library itself may
    // print about this machine's interconnects is not iolab's).
    assert!(
        !err.contains("iolab"),
        "a quiet run says nothing on stderr: {err}"
    );
    let doc = parse_json(out.as_bytes());
    // One rank reads its 512 blocks; the merged run reads 4 x 512.
    assert_eq!(doc["jobs"].as_array().unwrap().len(), 1, "group_reporting");
    assert_eq!(doc["jobs"][0]["read"]["total_ios"], 4 * 512);
    assert_eq!(doc["jobs"][0]["read"]["io_bytes"], 4 * (2 << 20));
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 4);
    for (r, h) in hosts.iter().enumerate() {
        assert_eq!(h["rank"], r, "{h}");
        assert_eq!(h["read"]["total_ios"], 512, "{h}");
        assert_eq!(h["state"], "ok");
        assert!(
            d.path().join(format!("f.{r}")).exists(),
            "rank {r}'s own file"
        );
    }
    assert!(!f.exists(), "no rank used the unranked name");
    // A liveness bound on the start skew (milliseconds here; bench/dist.py
    // times it), not a timing.
    assert!(doc["start_skew_ns"].as_u64().unwrap() < 1_000_000_000);
    // The stored run holds every rank's clone with its whole histogram: the
    // merged histogram is their sum, bucket by bucket.
    let json: String = query_one(&db, "SELECT result_json FROM runs");
    let run: RunResult = serde_json::from_str(&json).unwrap();
    let clones = &run.repetitions[0].clones;
    assert_eq!(clones.len(), 4, "one clone per rank");
    let mut sum: BTreeMap<u64, u64> = BTreeMap::new();
    for c in clones {
        assert_eq!(c.totals.read.ios(), 512);
        for (v, n) in c.totals.read.lat.bins() {
            *sum.entry(v).or_default() += n;
        }
    }
    let entries = run.entries();
    let merged: BTreeMap<u64, u64> = entries[0].total.read.lat.bins().into_iter().collect();
    assert_eq!(merged, sum, "merged = sum of the ranks, bucket by bucket");
    // A row per rank in run_hosts, with its counters and environment.
    let rows: i64 = query_one(&db, "SELECT COUNT(*) FROM run_hosts WHERE run_id = 1");
    assert_eq!(rows, 4);
    let ios: i64 = query_one(&db, "SELECT SUM(read_ios) FROM run_hosts");
    assert_eq!(ios, 4 * 512);
    let with_env: i64 = query_one(
        &db,
        "SELECT COUNT(*) FROM run_hosts WHERE json_extract(env_json, '$.hostname') IS NOT NULL
           AND json_array_length(counters_json) = 1 AND status = 'ok'",
    );
    assert_eq!(with_env, 4, "every rank's environment and counters");
    // `show` lists them again.
    let shown = String::from_utf8(succeed(with_db(&db).args(["show", "1"]))).unwrap();
    assert!(shown.contains("hosts (4 ranks)"), "{shown}");
    assert_eq!(shown.matches(" ok\n").count(), 4, "{shown}");
}

#[cfg(feature = "mpi")]
#[test]
fn the_normal_output_has_a_row_per_rank_and_the_start_skew() {
    let d = scratch();
    let (db, f) = (d.path().join("r.db"), d.path().join("f"));
    let Some(mut cmd) = mpirun("a_row_per_rank", 3, &db, &rank_job(&f, &[])) else {
        return;
    };
    let out = String::from_utf8(succeed(&mut cmd)).unwrap();
    assert!(out.contains("hosts (3 ranks; start skew "), "{out}");
    for r in 0..3 {
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(&format!("{r} ")) && l.ends_with(" ok")),
            "rank {r}: {out}"
        );
    }
    // Printed once (by rank 0), not once per rank.
    assert_eq!(out.matches("Run status group 0").count(), 1, "{out}");
}

#[cfg(feature = "mpi")]
#[test]
fn stonewall_stops_every_rank_when_the_first_is_done() {
    let d = scratch();
    let (db, f) = (d.path().join("r.db"), d.path().join("f"));
    if !have("mpirun", "stonewall_stops_every_rank") {
        return;
    }
    // Rank 0 reads 50 blocks; ranks 1 and 2 would read a million at 200
    // IOPS (over an hour): MPMD, one job per group of ranks.
    let fast = rank_job(
        &f,
        &[
            "--number_ios=50",
            "--stonewall-ranks",
            "--output-format=json",
        ],
    );
    let slow = rank_job(
        &f,
        &[
            "--number_ios=1000000",
            "--rate_iops=200",
            "--stonewall-ranks",
            "--output-format=json",
        ],
    );
    let mut cmd = mpmd(&db, &[(1, &fast), (2, &slow)]);
    let doc = parse_json(&succeed(&mut cmd));
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["read"]["total_ios"], 50);
    for h in &hosts[1..] {
        let n = h["read"]["total_ios"].as_u64().unwrap();
        assert!(n < 1000, "rank {} was stopped early: {n} reads", h["rank"]);
        assert_eq!(h["state"], "ok");
    }
    let status: String = query_one(&db, "SELECT status FROM runs");
    assert_eq!(status, "complete", "a planned stop is not an interruption");
}

#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_tests_need_the_feature() {
    eprintln!("SKIP tests/mpi.rs: iolab was built without --features mpi (CI builds with it)");
}

/// A build without the feature, started by mpirun, refuses instead of
/// letting every rank run the whole job on the same files.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_under_mpirun() {
    let d = scratch();
    let f = d.path().join("f");
    fails_with(
        bin()
            .arg("run")
            .args(rank_job(&f, &[]))
            .env("OMPI_COMM_WORLD_SIZE", "4"),
        2,
        "built without MPI: build it with `cargo build --release --features mpi`",
    );
    assert!(!f.exists());
}

/// `mpirun -n N1 iolab run ARGS1 : -n N2 iolab run ARGS2 ...` (MPMD: a
/// job per group of ranks) storing into `db`, ended after two minutes.
#[cfg(feature = "mpi")]
fn mpmd(db: &Path, groups: &[(u32, &Vec<String>)]) -> Command {
    let exe = assert_cmd::cargo::cargo_bin("iolab");
    let mut c = Command::new("timeout");
    c.args(["120", "mpirun", "--allow-run-as-root", "--oversubscribe"])
        .env("IOLAB_DB", db);
    for (i, (n, args)) in groups.iter().enumerate() {
        if i > 0 {
            c.arg(":");
        }
        c.args(["-n", &n.to_string()])
            .arg(&exe)
            .arg("run")
            .args(*args);
    }
    c
}

/// `mpirun -n N iolab tree ARGS --output-format=json` into `db`: its JSON.
#[cfg(feature = "mpi")]
fn mpi_tree(n: u32, db: &Path, args: &[&str]) -> serde_json::Value {
    let mut c = mpirun_iolab(n, "tree");
    c.args(args).arg("--output-format=json").env("IOLAB_DB", db);
    stdout_json(&mut c)
}

/// The files and directories of phase `name` of a tree result.
#[cfg(feature = "mpi")]
fn phase(doc: &serde_json::Value, name: &str) -> (u64, u64) {
    let p = (doc["phases"].as_array().unwrap().iter())
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}: {doc}"));
    (p["files"].as_u64().unwrap(), p["dirs"].as_u64().unwrap())
}

/// mdtest's two modes: a tree per rank (DIR/rank.R), and one shared tree
/// where each rank makes its own files; `remove` undoes each.
#[cfg(feature = "mpi")]
#[test]
fn tree_runs_per_rank_or_in_one_shared_directory() {
    if !have("mpirun", "tree_runs_per_rank_or_in_one_shared_directory") {
        return;
    }
    let d = scratch();
    let db = d.path().join("r.db");
    let shape = [
        "--dirs", "2", "--levels", "1", "--files", "3", "--size", "1k",
    ];
    // Unique: 3 ranks, each its own tree of 3 directories x 3 files.
    let u = d.path().join("u");
    let doc = mpi_tree(3, &db, &[&["create", s(&u)][..], &shape].concat());
    assert_eq!(phase(&doc, "file create"), (27, 0));
    assert_eq!(phase(&doc, "dir create"), (0, 6));
    for r in 0..3 {
        let top = u.join(format!("rank.{r}"));
        assert!(top.join("d0").join("f2").exists(), "rank {r}'s tree");
        assert!(top.join("d1").join("f0").exists());
    }
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    assert!(
        hosts
            .iter()
            .all(|h| h["state"] == "ok" && h["ops"].as_f64() > Some(0.0))
    );
    let walked = mpi_tree(3, &db, &["walk", s(&u)]);
    assert_eq!(phase(&walked, "walk").0, 27, "each rank walks its own tree");
    mpi_tree(3, &db, &["remove", s(&u)]);
    assert_eq!(
        std::fs::read_dir(&u).unwrap().count(),
        0,
        "every rank's tree removed"
    );
    // Shared: the same directories, each rank's files named fN.RANK.
    let sh = d.path().join("s");
    let doc = mpi_tree(
        3,
        &db,
        &[&["create", s(&sh), "--shared-dir"][..], &shape].concat(),
    );
    assert_eq!(phase(&doc, "file create").0, 27);
    assert_eq!(phase(&doc, "dir create").1, 2, "each directory made once");
    for r in 0..3 {
        for f in ["f0", "d0/f2", "d1/f1"] {
            assert!(sh.join(format!("{f}.{r}")).exists(), "{f}.{r}");
        }
    }
    assert!(!sh.join("rank.0").exists());
    let walked = mpi_tree(3, &db, &["walk", s(&sh), "--shared-dir"]);
    assert_eq!(
        phase(&walked, "walk").0,
        3 * 27,
        "each rank walks the whole tree"
    );
    mpi_tree(3, &db, &["remove", s(&sh), "--shared-dir"]);
    assert!(!sh.exists(), "rank 0 removed the shared tree");
    // Each command stored once, with a row per rank.
    let runs: i64 = query_one(&db, "SELECT COUNT(*) FROM runs WHERE kind = 'tree'");
    assert_eq!(runs, 6);
    let rows: i64 = query_one(&db, "SELECT COUNT(*) FROM run_hosts");
    assert_eq!(rows, 18);
}

/// A rank whose job fails is named; what the others measured is shown and
/// stored, marked partial.
#[cfg(feature = "mpi")]
#[test]
fn a_failed_rank_is_named_and_the_others_are_kept() {
    if !have("mpirun", "a_failed_rank_is_named") {
        return;
    }
    let d = scratch();
    let (db, f) = (d.path().join("r.db"), d.path().join("f"));
    // Rank 1 is given a file under a regular file: it cannot lay it out.
    std::fs::write(d.path().join("plain"), b"not a directory").unwrap();
    let bad = rank_job(&d.path().join("plain/f"), &[]);
    let good = rank_job(&f, &[]);
    let mut cmd = mpmd(&db, &[(1, &good), (1, &bad), (1, &good)]);
    let out = cmd.output().unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rank 1 ("), "{err}");
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("1 ") && l.contains("failed: ")),
        "{stdout}"
    );
    let ios: i64 = query_one(&db, "SELECT SUM(read_ios) FROM run_hosts");
    assert_eq!(ios, 2 * 512, "ranks 0 and 2 kept");
    let status: String = query_one(&db, "SELECT status FROM runs");
    assert_eq!(status, "interrupted", "marked partial");
}
