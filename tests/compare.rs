//! `iolab compare`: the verdict line in hyperfine's words, the refusal of
//! a label pooling different workloads (and `--force`), "significant"
//! only beyond noise, the rows shown without and with `--all`, the
//! environment diff, and the plot of paired bars with intervals. Real
//! runs of small files, each test with its own database.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Stores `n` runs of `opts` on `file` under `label` in `db`.
fn store_runs(db: &Path, file: &Path, label: &str, opts: &str, n: usize) {
    for _ in 0..n {
        let mut args = job("t", file, opts);
        args.extend(["--label".to_string(), label.to_string()]);
        run_into(db, &args);
    }
}

/// Runs an SQL statement on `db` directly (to make a stored run differ).
fn sql(db: &Path, stmt: &str) {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(stmt).unwrap();
}

/// A rate-limited B (2 MiB at 2 MiB/s: 1 s a run, which no load makes
/// shorter) against the same reads at full speed (about a millisecond):
/// the verdict says B ran slower, on the run time (same work), with the
/// p-value and the n of each side; swapped, B ran faster. The margins are
/// a load's to break only by stalling A for hundreds of milliseconds: B
/// over 3 times A (about 1000 here) and Welch's p under 0.05 with 3 runs
/// a side.
#[test]
fn verdict_names_the_faster_side() {
    let (d, f) = scratch_file();
    let db = d.path().join("v.db");
    let a = job("a", &f, "--size=2M --rw=read --bs=64k --cache=warm").join(" ");
    let b = format!("{a} --rate=2m");
    let v = stdout_json(with_db(&db).args([
        "compare", "--repeat", "3", &a, &b, "--format", "json", "--label", "rl",
    ]));
    let verdict = &v["verdict"];
    assert_eq!(verdict["metric"], "time_s", "{verdict}");
    assert_eq!(verdict["faster"], "a", "{verdict}");
    assert_eq!(
        (verdict["n_a"].as_u64(), verdict["n_b"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(verdict["ratio"].as_f64().unwrap() > 3.0, "{verdict}");
    assert!(verdict["ratio_sd"].as_f64().unwrap() >= 0.0, "{verdict}");
    assert!(verdict["p"].as_f64().unwrap() < 0.05, "{verdict}");
    assert_eq!(verdict["significant"], true);
    let text = verdict["text"].as_str().unwrap();
    assert!(
        text.starts_with("B ran ") && text.contains(" times slower than A, significant (p"),
        "{text}"
    );
    assert!(text.ends_with("n = 3 A, 3 B)"), "{text}");
    // The runs stored now, compared again as text; then swapped.
    for (a, b, word) in [("rl:A", "rl:B", "slower"), ("rl:B", "rl:A", "faster")] {
        let (t, _) = succeed_text(with_db(&db).args(["compare", a, b]));
        let line = t.lines().find(|l| l.starts_with("verdict on time (s): "));
        let want = format!("times {word} than A");
        assert!(line.is_some_and(|l| l.contains(&want)), "{want}: {t}");
        // The same workload on both sides: no environment diff, no note.
        assert!(
            !t.contains("environment differs") && !t.contains("note:"),
            "{t}"
        );
    }
}

/// Time-based runs do as much work as their time allows, so the verdict
/// is on the bandwidth: a B limited to 4 MiB/s ran slower (with two runs
/// a side, untested).
#[test]
fn time_based_verdict_is_on_bandwidth() {
    let (d, f) = scratch_file();
    let db = d.path().join("t.db");
    let a = job(
        "a",
        &f,
        "--size=1M --rw=read --bs=64k --cache=warm --time_based --runtime=300ms",
    );
    let a = a.join(" ");
    let b = format!("{a} --rate=4m");
    let v =
        stdout_json(with_db(&db).args(["compare", "--repeat", "2", &a, &b, "--format", "json"]));
    let verdict = &v["verdict"];
    assert_eq!(verdict["metric"], "bw_mib_s", "{verdict}");
    assert_eq!(verdict["basis"], "time-based or different work: bandwidth");
    assert_eq!(verdict["faster"], "a", "{verdict}");
    let text = verdict["text"].as_str().unwrap();
    assert!(
        text.contains("times slower than A, not tested: 2 runs per side, 3 needed"),
        "{text}"
    );
    assert_eq!(verdict["label"], "MiB/s", "{verdict}");
    assert_eq!(verdict["p"], Value::Null, "{verdict}");
}

/// A label holding 4 KiB reads and a 64 KiB random read is refused,
/// naming the fields that differ and their values per run; `--force`
/// pools them and says so under the table.
#[test]
fn mixed_label_refused_unless_forced() {
    let (d, f) = scratch_file();
    let db = d.path().join("m.db");
    store_runs(&db, &f, "mix", "--size=1M --rw=read --bs=4k", 2);
    store_runs(&db, &f, "mix", "--size=1M --rw=randread --bs=64k", 1);
    store_runs(&db, &f, "other", "--size=1M --rw=read --bs=16k", 2);
    let err = fails_with(
        with_db(&db).args(["compare", "mix", "other"]),
        code::USAGE,
        "side A (mix) pools runs of different workloads",
    );
    assert_one_line(
        &err,
        &[
            "rw read (runs 1,2) vs randread (run 3)",
            "bs 4.0KiB (runs 1,2) vs 64.0KiB (run 3)",
            "--force",
        ],
    );
    assert!(!err.contains("size"), "size is the same: {err}");
    // B's side is checked too.
    fails_with(
        with_db(&db).args(["compare", "other", "mix"]),
        code::USAGE,
        "side B (mix)",
    );
    let (t, _) = succeed_text(with_db(&db).args(["compare", "mix", "other", "--force"]));
    assert!(
        t.contains("note: side A pools different workloads (--force): rw read (runs 1,2) vs randread (run 3); bs"),
        "{t}"
    );
    assert!(t.contains("verdict on time (s): B ran"), "{t}");
    let v =
        stdout_json(with_db(&db).args(["compare", "mix", "other", "--force", "--format", "json"]));
    let bs = json_item(&v["a"]["mixed_workloads"], "field", "bs");
    assert_eq!(bs["values"][0]["runs"], serde_json::json!([1, 2]), "{bs}");
    assert_eq!(bs["values"][1]["value"], "64.0KiB", "{bs}");
    assert_eq!(v["b"]["mixed_workloads"], serde_json::json!([]));
    // Labels of one workload each, different from each other: fine.
    succeed(with_db(&db).args(["compare", "1", "other"]));
}

/// Two labels of one workload; B's IOPS set (in the database) 0.05%
/// above A's with no spread: exact values, no test (no p-value), a
/// change under 1%: not significant and hidden without `--all`. Identical
/// runs' figures are never called significant below 1%, and `--all`
/// shows every row.
#[test]
fn significant_only_beyond_noise_and_all_rows() {
    let (d, f) = scratch_file();
    let db = d.path().join("s.db");
    let opts = "--size=1M --rw=read --bs=16k --cache=warm";
    store_runs(&db, &f, "a", opts, 3);
    store_runs(&db, &f, "b", opts, 3);
    let set = |ids: &str, v: f64| {
        let stmt = format!(
            "UPDATE runs SET summary_json = json_set(summary_json, '$.reps[0].iops', {v}) WHERE id IN ({ids});"
        );
        sql(&db, &stmt);
    };
    set("1,2,3", 1000.0);
    set("4,5,6", 1000.5);
    let v = stdout_json(with_db(&db).args(["compare", "a", "b", "--format", "json"]));
    let rows = v["rows"].as_array().unwrap();
    let iops = json_item(&v["rows"], "metric", "iops");
    assert_eq!(iops["welch"], Value::Null, "{iops}");
    assert_eq!(iops["outcome"], "exact", "{iops}");
    assert_eq!(iops["significant"], false, "{iops}");
    assert_eq!(iops["shown"], false, "{iops}");
    assert!(
        iops["verdict"]
            .as_str()
            .unwrap()
            .starts_with("under 1% change"),
        "{iops}"
    );
    for r in rows {
        let change = r["change_pct"].as_f64().unwrap_or(0.0);
        if r["significant"] == true {
            assert!(change.abs() >= 1.0, "significant below 1%: {r}");
        }
    }
    for same in ["ops", "bytes"] {
        let r = json_item(&v["rows"], "metric", same);
        assert_eq!(
            (&r["verdict"], &r["significant"]),
            (&Value::from("same"), &Value::from(false))
        );
    }
    let (t, _) = succeed_text(with_db(&db).args(["compare", "a", "b"]));
    let (all, _) = succeed_text(with_db(&db).args(["compare", "a", "b", "--all"]));
    let lines = |t: &str| t.lines().take_while(|l| !l.is_empty()).count();
    let body = |t: &str| t.split("\n\n").nth(1).map_or(0, lines);
    assert!(body(&all) > body(&t), "--all shows more rows:\n{t}\n{all}");
    assert!(!t.contains("\nIOPS "), "{t}");
    assert!(all.contains("\nIOPS ") && all.contains("\nops "), "{all}");
    assert!(t.contains("--all shows every row"), "{t}");
    assert!(!all.contains("--all shows every row"), "{all}");
    assert!(t.contains("verdict on time (s): B ran"), "{t}");
    assert!(!t.contains("environment differs"), "{t}");
}

/// B's runs stored with another kernel, mount options and iolab version
/// (edited in the database): the diff is printed under the table and in
/// the JSON; the plot has a title, units and intervals.
#[test]
fn environment_diff_and_plot() {
    let (d, f) = scratch_file();
    let db = d.path().join("e.db");
    let opts = "--size=1M --rw=read --bs=64k --cache=warm";
    store_runs(&db, &f, "a", opts, 2);
    store_runs(&db, &f, "b", opts, 2);
    sql(
        &db,
        "UPDATE runs SET iolab_version = '0.0.1-old',
            env_json = json_set(env_json, '$.kernel', 'Linux 9.9.9-test',
                '$.files[0].mount_options', 'rw,relatime,test')
         WHERE label = 'b';",
    );
    let svg = d.path().join("ab.svg");
    let png = d.path().join("ab.png");
    let (t, err) = succeed_text(with_db(&db).args(["compare", "a", "b", "--plot", s(&svg)]));
    let diff = t
        .split("environment differs between A and B:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{t}"));
    let kernel = diff
        .lines()
        .position(|l| l.trim_start().starts_with("kernel"))
        .unwrap();
    let kl: Vec<&str> = diff.lines().skip(kernel).take(2).collect();
    assert!(
        kl[0].contains("A: Linux ") && !kl[0].contains("9.9.9"),
        "{kl:?}"
    );
    assert!(
        kl[1].trim_start().starts_with("B: Linux 9.9.9-test"),
        "{kl:?}"
    );
    assert!(diff.contains("B: rw,relatime,test"), "{diff}");
    assert!(diff.contains("B: 0.0.1-old"), "{diff}");
    for same in ["host", "device", "file system"] {
        assert!(
            !diff.lines().any(|l| l.trim_start().starts_with(same)),
            "{same}: {diff}"
        );
    }
    assert!(err.contains("plot written"), "{err}");
    let v = stdout_json(with_db(&db).args(["compare", "a", "b", "--format", "json"]));
    let fields: Vec<&str> = v["environment_diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["kernel", "mount options", "iolab version"]);
    assert_eq!(v["a"]["workload"]["bs"], "64.0KiB");
    let body = std::fs::read_to_string(&svg).unwrap();
    for want in [
        ">\nA: a  vs  B: b\n<",
        "95% CI",
        "time (s)",
        "host ",
        "A: runs 1,2",
    ] {
        assert!(body.contains(want), "{want} not in the SVG");
    }
    // One A bar and one B bar per figure shown.
    let rows = v["rows"].as_array().unwrap();
    let panels = rows.iter().filter(|r| r["shown"] == true).count();
    assert!(panels >= 1);
    for color in ["fill=\"#1F77B4\"", "fill=\"#FF7F0E\""] {
        assert_eq!(body.matches(color).count(), panels, "{color}");
    }
    succeed(with_db(&db).args(["compare", "a", "b", "--all", "--plot", s(&png)]));
    let b = std::fs::read(&png).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
}
