//! Exports from the data: `export` and `history` as CSV and JSON carry
//! every digit, integer ids and counts, the named figures of
//! docs/schema.md and every run unless `--limit`; what they say equals
//! what the database holds (read here with rusqlite, and through fio's
//! JSON of `show`).

mod common;
use common::*;
use iolab::metrics::names::TOTALS;
use rusqlite::types::Value as Sql;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Stores two runs in `db`: a mixed read/write run repeated twice with a
/// label, and a one-job random read run.
fn two_runs(db: &Path, f: &Path) {
    let mixed = "--size=1M --rw=randrw --bs=4k --number_ios=300 --repeat=2 --label mixed";
    run_into(db, &job("mix", f, mixed));
    run_into(
        db,
        &job("rd", f, "--size=1M --rw=randread --bs=4k --number_ios=200"),
    );
}

/// CSV text as a header and rows of cells.
fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (head, rows)
}

/// The rows of `v_runs`, newest first, each by column name, read straight
/// from the SQLite file.
fn view_rows(db: &Path) -> Vec<BTreeMap<String, Sql>> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare("SELECT * FROM v_runs ORDER BY id DESC").unwrap();
    let names: Vec<String> = st.column_names().map(|s| s.to_string()).collect();
    st.query_map([], |r| {
        Ok(names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), r.get::<_, Sql>(i).unwrap()))
            .collect())
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// A CSV cell equals a SQL value: same type (an integer has no decimal
/// point) and the same number (SQLite's JSON reader may round the stored
/// digits' last bit differently: reals within 2 ulp).
fn same(csv: &str, sql: &Sql, what: &str) {
    match sql {
        Sql::Null => assert_eq!(csv, "", "{what}"),
        Sql::Integer(i) => assert_eq!(csv.parse::<i64>().ok(), Some(*i), "{what}: {csv}"),
        Sql::Real(x) => {
            let c = csv.parse::<f64>().unwrap();
            assert!(
                (c - x).abs() <= 2.0 * f64::EPSILON * x.abs(),
                "{what}: {csv} vs {x}"
            );
        }
        Sql::Text(t) => assert_eq!(csv, t, "{what}"),
        Sql::Blob(_) => panic!("{what}: a blob"),
    }
}

/// A JSON value equals a CSV cell: integers as JSON integers, reals with
/// the same bits, text as text, null as empty.
fn same_json(v: &Value, csv: &str, what: &str) {
    match v {
        Value::Null => assert_eq!(csv, "", "{what}"),
        Value::String(s) => assert_eq!(s, csv, "{what}"),
        Value::Number(n) if n.is_i64() => {
            assert_eq!(csv.parse::<i64>().ok(), n.as_i64(), "{what}: {csv}")
        }
        Value::Number(n) => assert_eq!(n.as_f64(), csv.parse::<f64>().ok(), "{what}: {csv}"),
        _ => panic!("{what}: {v}"),
    }
}

/// The stored key figures of run `id`, each number read from its own
/// digits in the database's JSON (Rust's exact parser, not a JSON
/// library's).
fn stored_total(db: &Path, id: i64) -> BTreeMap<String, f64> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT j.key FROM runs, json_each(runs.summary_json, '$.total') AS j WHERE runs.id = ?1")
        .unwrap();
    let keys: Vec<String> = st
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    keys.into_iter()
        .map(|k| {
            let text: String = c
                .query_row(
                    &format!("SELECT summary_json -> '$.total.{k}' FROM runs WHERE id = ?1"),
                    [id],
                    |r| r.get(0),
                )
                .unwrap();
            let v = text
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{k}: {text}: {e}"));
            (k, v)
        })
        .collect()
}

#[test]
fn exports_round_trip_to_the_stored_values() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    two_runs(&db, &f);

    let (head, rows) = parse_csv(&stdout_text(
        with_db(&db).args(["export", "--format", "csv"]),
    ));
    assert_eq!(rows.len(), 2, "every run, newest first");
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {head:?}"))
    };
    for h in &head {
        assert!(
            h.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "a name of the scheme, no unit in brackets: {h}"
        );
    }

    // Every column of the database's view, value for value.
    let view = view_rows(&db);
    assert_eq!(view.len(), 2);
    for (row, v) in rows.iter().zip(&view) {
        for (name, sql) in v {
            same(&row[col(name)], sql, name);
        }
    }
    let (new, old) = (&rows[0], &rows[1]);
    assert_eq!(new[col("id")], "2", "an integer id");
    assert_eq!(old[col("label")], "mixed");
    assert_eq!(old[col("reps")], "2");
    for (c, want) in [
        ("rw", "randread"),
        ("bs_bytes", "4096"),
        ("engine", "psync"),
        ("iodepth", "1"),
    ] {
        assert_eq!(new[col(c)], want, "{c}");
    }
    assert_eq!(old[col("rw")], "randrw");

    // Against the stored JSON, bit for bit: every figure stored.
    for row in [new, old] {
        let id: i64 = row[col("id")].parse().unwrap();
        let t = stored_total(&db, id);
        let mut seen = 0;
        for (key, v) in &t {
            let (name, want) = match TOTALS.iter().find(|m| m.key == key) {
                Some(m) if m.integer => (m.name, ((v * m.scale).round() as i64).to_string()),
                Some(m) => (m.name, (v * m.scale).to_string()),
                None => (key.as_str(), v.to_string()),
            };
            let cell = &row[col(name)];
            if want.contains('.') || want.contains('e') {
                assert_eq!(
                    cell.parse::<f64>().unwrap(),
                    want.parse::<f64>().unwrap(),
                    "{name}"
                );
            } else {
                assert_eq!(cell, &want, "{name}: an integer");
            }
            seen += 1;
        }
        assert!(seen >= 15, "{t:?}");
        assert_eq!(
            row[col("bw_bytes_per_s")].parse::<f64>().unwrap(),
            t["bw_mib_s"] * 1_048_576.0
        );
    }
    assert_eq!(
        new[col("write_ios")],
        "",
        "a direction without I/O is empty"
    );
    assert!(old[col("write_ios")].parse::<i64>().unwrap() > 0);
    assert_eq!(
        old[col("read_ios")].parse::<i64>().unwrap()
            + old[col("write_ios")].parse::<i64>().unwrap(),
        old[col("ios")].parse::<i64>().unwrap(),
        "the directions add up"
    );

    // The per-direction figures are fio's (show's JSON, from the histograms).
    let fio = stdout_json(with_db(&db).args(["show", "2", "--output-format", "json"]));
    let read = &fio["jobs"][0]["read"];
    same_json(&read["total_ios"], &new[col("read_ios")], "total_ios");
    same_json(&read["io_bytes"], &new[col("read_bytes")], "io_bytes");
    same_json(
        &read["clat_ns"]["max"],
        &new[col("read_clat_max_ns")],
        "max",
    );
    same_json(
        &read["clat_ns"]["percentile"]["99.000000"],
        &new[col("read_clat_p99_ns")],
        "p99",
    );

    // show's CSV: one row per job, the same names and figures.
    let (jh, jobs) = parse_csv(&stdout_text(with_db(&db).args([
        "show",
        "2",
        "--output-format",
        "csv",
    ])));
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        &jh[..6],
        ["job", "clones", "rw", "bs_bytes", "engine", "iodepth"]
    );
    for name in [
        "read_ios",
        "read_bytes",
        "read_iops",
        "read_clat_p99_ns",
        "ios",
        "clat_p99_ns",
        "time_s",
    ] {
        let i = jh.iter().position(|h| h == name).unwrap();
        assert_eq!(jobs[0][i], new[col(name)], "{name}");
    }

    // JSON: the full documents carry the same figures, typed.
    let docs = stdout_json(with_db(&db).args(["export", "2", "1", "--format", "json"]));
    for (doc, row) in docs.as_array().unwrap().iter().zip(&rows) {
        let run = &doc["iolab_run"];
        assert!(run["id"].is_i64());
        same_json(&run["id"], &row[col("id")], "id");
        let figs = run["figures"].as_object().unwrap();
        assert_eq!(figs.len(), head.len() - 14, "every named figure");
        for (name, v) in figs {
            same_json(v, &row[col(name)], name);
        }
    }
    // history's CSV and JSON are the same records.
    let hist_csv = stdout_text(with_db(&db).args(["history", "--format", "csv"]));
    assert_eq!(parse_csv(&hist_csv), (head.clone(), rows.clone()));
    let hist = stdout_json(with_db(&db).args(["history", "--format", "json"]));
    for (rec, row) in hist.as_array().unwrap().iter().zip(&rows) {
        assert_eq!(rec.as_object().unwrap().len(), head.len());
        for (i, h) in head.iter().enumerate() {
            same_json(&rec[h], &row[i], h);
        }
    }
}

/// One stored run copied in SQL until `db` holds 64.
fn sixty_four_runs(db: &Path, f: &Path) {
    run_into(db, &job("one", f, "--size=1M --rw=read --number_ios=8"));
    let c = rusqlite::Connection::open(db).unwrap();
    for _ in 0..6 {
        c.execute_batch(
            "INSERT INTO runs (created_unix, label, kind, name, command, iolab_version,
                env_json, result_json, summary_json, status)
             SELECT created_unix, label, kind, name, command, iolab_version,
                env_json, result_json, summary_json, status FROM runs",
        )
        .unwrap();
    }
}

#[test]
fn csv_and_json_carry_every_run_unless_limited() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    sixty_four_runs(&db, &f);
    let lines = |args: &[&str]| stdout_text(with_db(&db).args(args)).lines().count();
    assert_eq!(lines(&["history", "--format", "csv"]), 1 + 64);
    assert_eq!(lines(&["export", "--format", "csv"]), 1 + 64);
    assert_eq!(
        lines(&["history", "--format", "csv", "--limit", "10"]),
        1 + 10
    );
    let ids = |args: &[&str]| -> Vec<i64> {
        stdout_json(with_db(&db).args(args))
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().expect("an integer id"))
            .collect()
    };
    assert_eq!(ids(&["history", "--format", "json"]).len(), 64);
    assert_eq!(
        ids(&["history", "--format", "json", "--limit", "3"]),
        [64, 63, 62],
        "newest first"
    );
    let (_, rows) = parse_csv(&stdout_text(
        with_db(&db).args(["export", "--format", "csv", "--limit", "5"]),
    ));
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0][0], "64");
    // The terminal table keeps its 50 and says there are more.
    let table = stdout_text(with_db(&db).arg("history"));
    assert_eq!(table.lines().count(), 2 + 50 + 1, "{table}");
    assert!(table.contains("--limit 0"), "{table}");
    let all = stdout_text(with_db(&db).args(["history", "--limit", "0"]));
    assert_eq!(all.lines().count(), 2 + 64);
}

#[test]
fn history_fits_100_columns_with_rw_bs_engine_depth() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    two_runs(&db, &f);
    let long = "--size=1M --rw=read --bs=64k --number_ios=4 --ioengine=sync --iodepth=1 \
                --label a-label-long-enough-to-need-wrapping-in-its-column";
    run_into(
        &db,
        &job("a-job-name-that-is-long-too-for-one-line", &f, long),
    );
    let t = stdout_text(with_db(&db).env_remove("COLUMNS").arg("history"));
    for l in t.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} wide: {l}\n{t}",
            l.chars().count()
        );
    }
    let head: Vec<&str> = t.lines().next().unwrap().split_whitespace().collect();
    for want in [
        "id", "when", "label", "job", "rw", "bs", "engine", "depth", "IOPS", "status",
    ] {
        assert!(head.contains(&want), "{want} in {head:?}");
    }
    let row = |id: &str| {
        t.lines()
            .find(|l| l.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("run {id} in\n{t}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let one = row("1");
    for want in ["mixed", "mix", "randrw", "4k", "psync", "1", "complete"] {
        assert!(one.contains(&want), "{want} in {one:?}");
    }
    let three = row("3");
    for want in ["read", "64k", "sync"] {
        assert!(three.contains(&want), "{want} in {three:?}");
    }
    assert!(t.contains("a-label-long"), "{t}");
    assert!(
        t.lines().count() > 2 + 3,
        "the long label wraps in its cell: {t}"
    );
    assert!(!t.contains('\x1b'), "no colour on a pipe");
}

/// `iolab ARGS` on a terminal (a pty made by script(1)), with `env`.
fn on_tty(db: &Path, args: &str, env: &[(&str, &str)]) -> Option<String> {
    if !have("script", "colour_follows_color_and_no_color") {
        return None;
    }
    let cmd = format!("{} {args}", assert_cmd::cargo::cargo_bin("iolab").display());
    let mut c = std::process::Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"])
        .env("IOLAB_DB", db)
        .env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{args}: {out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn colour_follows_color_and_no_color() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    run_into(
        &db,
        &job("c", &f, "--size=1M --rw=read --number_ios=8 --label lab"),
    );
    let esc = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = with_db(&db);
        c.args(args).env_remove("NO_COLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        stdout_text(&mut c).contains("\x1b[")
    };
    assert!(esc(&["history", "--color", "always"], &[]));
    assert!(esc(&["--color=always", "history"], &[]), "a global flag");
    assert!(
        esc(&["history", "--color", "always"], &[("NO_COLOR", "1")]),
        "the flag wins"
    );
    assert!(!esc(&["history"], &[]), "auto: not on a pipe");
    assert!(!esc(&["history", "--color", "never"], &[]));
    // A global option: before or after `run`, never taken for a job option.
    for args in [
        &["--color", "always", "run", "--no-store"][..],
        &["run", "--color=never", "--no-store"],
        &["run", "--no-store", "--color", "auto"],
    ] {
        let jobs = job("c", &f, "--size=1M --rw=read --number_ios=2");
        let out = stdout_text(bin().args(args).args(&jobs));
        assert!(out.contains("c: (g=0)"), "{args:?}: {out}");
    }
    // sweep's table too: a bold heading only when asked.
    let sweep = |color: &str| {
        let jobs = job("s", &f, "--size=1M --rw=read --number_ios=2");
        let args = [
            "sweep",
            "--no-store",
            "--color",
            color,
            "--vary",
            "bs=4k,8k",
        ];
        stdout_text(bin().args(args).args(&jobs))
    };
    assert!(
        sweep("always").starts_with("\x1b[1mbs"),
        "{}",
        sweep("always")
    );
    assert!(!sweep("auto").contains('\x1b'));
    let plain = stdout_text(with_db(&db).arg("history"));
    assert!(plain.lines().next().unwrap().starts_with("id"));
    // On a terminal: colour in auto, none with NO_COLOR or never.
    let Some(tty) = on_tty(&db, "history", &[]) else {
        return;
    };
    assert!(tty.contains("\x1b[1mid\x1b[0m"), "bold headings: {tty:?}");
    let no = on_tty(&db, "history --color auto", &[("NO_COLOR", "1")]).unwrap();
    assert!(!no.contains("\x1b["), "{no:?}");
    assert!(no.contains("lab"), "{no:?}");
    let never = on_tty(&db, "history --color never", &[]).unwrap();
    assert!(!never.contains("\x1b["), "{never:?}");
}
