//! Sweeps, A/B comparison and pictures: `iolab sweep`, `iolab compare`,
//! `--plot` files (PNG and SVG), and `iolab report` loaded in headless
//! Chromium.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Width and height from a PNG's IHDR chunk (after checking the signature).
fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        p.display()
    );
    assert_eq!(&b[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

/// Seed 002's workload (random 50-300 B reads over 3.5 MB) swept over
/// numjobs=1..4: four rows, every point stored, a PNG and an SVG plot.
#[test]
fn sweep_over_threads_prints_rows_and_plots() {
    let (d, db) = scratch_db();
    let pack = d.path().join("pack.dat");
    let job_text = format!(
        "[global]\nfilename={}\nsize=3500000B\nbsrange=50-300\nrw=randread\nthread\ngroup_reporting\n\
         [irmin]\nnumber_ios=5000\n",
        s(&pack)
    );
    let job_file = write_file(d.path(), "irmin.fio", &job_text);
    let png = d.path().join("iops.png");
    let (out, err) = succeed_text(with_db(&db).args([
        "sweep",
        s(&job_file),
        "--vary",
        "numjobs=1..4",
        "--plot",
        s(&png),
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "header, rule, 4 rows:\n{out}");
    assert!(
        lines[0].starts_with("numjobs") && lines[0].contains("IOPS") && lines[0].contains("p99")
    );
    for (i, l) in lines[2..].iter().enumerate() {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cells[0], (i + 1).to_string(), "{l}");
        assert!(cells[1].parse::<f64>().unwrap() > 0.0, "IOPS in {l}");
    }
    assert!(err.contains("sweep point 4/4"), "{err}");
    // Each point ran with its thread count: total I/Os grow with it.
    let rows = stdout_json(with_db(&db).args(["history", "--format", "json"]));
    let mut ops: Vec<(String, f64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["point"].as_str().unwrap().to_string(),
                r["ios"].as_f64().unwrap(),
            )
        })
        .collect();
    ops.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        ops,
        (1..=4)
            .map(|t| (format!("numjobs={t}"), 5000.0 * t as f64))
            .collect::<Vec<_>>()
    );
    let (w, h) = png_size(&png);
    assert!(w >= 600 && h >= 300, "{w}x{h}");

    // A sweep variable used as ${threads} in the job options, crossed
    // with a second key; SVG plot of p99.
    let svg = d.path().join("p99.svg");
    let (out, _) = succeed_text(with_db(&db).args([
        "sweep",
        "--vary",
        "threads=1..2",
        "--vary",
        "bs=64,256",
        "--metric",
        "p99_us",
        "--plot",
        s(&svg),
        "--name=o",
        &format!("--filename={}", s(&pack)),
        "--size=3500000B",
        "--rw=randread",
        "--number_ios=2000",
        "--numjobs=${threads}",
        "--thread",
        "--format",
        "csv",
    ]));
    let csv: Vec<&str> = out.lines().collect();
    assert_eq!(csv.len(), 5, "{out}");
    assert!(csv[0].starts_with("threads,bs,IOPS"), "{out}");
    // Each point ran its thread count: 2000 I/Os per thread.
    let ops: Vec<f64> =
        stdout_json(with_db(&db).args(["history", "--sweep", "2", "--format", "json"]))
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["ios"].as_f64().unwrap())
            .collect();
    assert_eq!(ops, [4000.0, 4000.0, 2000.0, 2000.0], "newest first");
    let body = std::fs::read_to_string(&svg).unwrap();
    for want in [
        "p99 (us) vs threads",
        ">\nthreads\n<",
        ">\np99 (us)\n<",
        "bs=64",
        "bs=256",
    ] {
        assert!(body.contains(want), "SVG lacks {want:?}");
    }
}

#[test]
fn sweep_input_errors_name_what_is_wrong() {
    let (d, f) = scratch_file();
    let base = job("e", &f, "--size=1M");
    let rejects = |extra: &[&str], want: &str| {
        let mut sweep = with_db(&d.path().join("e.db"));
        fails_with(sweep.arg("sweep").args(extra).args(&base), 2, want);
    };
    rejects(&["--vary", "numjbs=1..4"], "numjobs");
    rejects(&["--vary", "numjobs=4..1"], "below its start");
    rejects(&["--vary", "rw=read,sideways"], "sideways");
    rejects(
        &["--vary", "numjobs=1..2", "--metric", "speed"],
        "--metric 'speed'",
    );
    rejects(
        &["--vary", "numjobs=1..2", "--plot", "x.gif"],
        ".svg or .png",
    );
    assert!(!f.exists(), "nothing ran");
}

/// Two job files run 5 times each, interleaved; the difference between
/// 512 B and 1 MiB reads from the page cache is reported as significant.
#[test]
fn compare_job_files_interleaved_with_significance() {
    let (d, db) = scratch_db();
    let data = d.path().join("data");
    let job_file = |name: &str, bs: &str| {
        let text = format!(
            "[{name}]\nfilename={}\nsize=16M\nrw=read\nbs={bs}\ncache=warm\n",
            s(&data)
        );
        write_file(d.path(), &format!("{name}.fio"), &text)
    };
    let (a, b) = (job_file("A", "512"), job_file("B", "1m"));
    let svg = d.path().join("ab.svg");
    let (out, err) = succeed_text(with_db(&db).args([
        "compare",
        "--repeat",
        "5",
        s(&a),
        s(&b),
        "--format",
        "json",
        "--label",
        "ab",
        "--plot",
        s(&svg),
    ]));
    // Interleaved: A B A B ...
    let order: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("iolab: compare round "))
        .collect();
    assert_eq!(order.len(), 10, "{err}");
    for (i, l) in order.iter().enumerate() {
        let want = format!("{}/5: {}", i / 2 + 1, ["A", "B"][i % 2]);
        assert!(l.starts_with(&want), "{l} (wanted {want})");
    }
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["a"]["samples"], 5);
    assert_eq!(v["b"]["samples"], 5);
    let row = |metric: &str| json_item(&v["rows"], "metric", metric);
    // Bandwidth differs tenfold but its spread under a loaded test machine
    // is wide; the per-read latency median (0.5 us against ~100 us, robust
    // to stalls) is the difference a t-test must call significant.
    let bw = row("bw_mib_s");
    assert!(bw["b_mean"].as_f64() > bw["a_mean"].as_f64(), "{bw}");
    let p50 = row("p50_us");
    assert!(
        p50["b_mean"].as_f64().unwrap() > 10.0 * p50["a_mean"].as_f64().unwrap(),
        "{p50}"
    );
    assert!(p50["welch"]["p"].as_f64().unwrap() < 0.05, "{p50}");
    assert!(
        p50["verdict"]
            .as_str()
            .unwrap()
            .starts_with("B worse, significant"),
        "{p50}"
    );
    let ops = row("ops");
    assert_eq!(ops["a_mean"], 32768.0);
    assert_eq!(ops["b_mean"], 16.0);
    assert!((ops["change_pct"].as_f64().unwrap() + 99.951171875).abs() < 1e-9);
    // Stored with labels, alternating.
    let hist = stdout_text(with_db(&db).args(["history", "--format", "csv"]));
    let labels: Vec<&str> = hist
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    assert_eq!(labels.len(), 10);
    assert!(
        labels.iter().rev().step_by(2).all(|l| *l == "ab:A"),
        "{labels:?}"
    );
    assert!(std::fs::read_to_string(&svg).unwrap().contains("95% CI"));
    // The stored runs compare again by label, as a table.
    let (t, _) = succeed_text(with_db(&db).args(["compare", "ab:A", "ab:B"]));
    assert!(
        t.contains("verdict on ")
            && t.contains(": B ran")
            && table_row(&t, "p50 (us)").contains("B worse, significant"),
        "{t}"
    );
}

/// Two stored runs compared by id: a table with the % change.
#[test]
fn compare_two_stored_runs() {
    let (d, f) = scratch_file();
    let db = d.path().join("t.db");
    for bs in ["4k", "16k"] {
        let opts = format!("--size=2M --rw=read --bs={bs}");
        run_into(&db, &job("t", &f, &opts));
    }
    let (t, _) = succeed_text(with_db(&db).args(["compare", "1", "2"]));
    let ops = table_row(&t, "ops");
    assert!(
        ops.contains("512") && ops.contains("128") && ops.contains("-75.0%"),
        "{ops}"
    );
    assert!(
        t.contains("not tested: 1 run per side, 3 needed"),
        "one sample per side: {t}"
    );
    let (md, _) = succeed_text(with_db(&db).args(["compare", "1", "2", "--format", "markdown"]));
    assert!(md.contains("| metric |"), "{md}");
    fails_with(with_db(&db).args(["compare", "1", "nope"]), 2, "'nope'");
}

#[test]
fn report_loads_in_headless_chromium() {
    skip_unless_installed!("chromium");
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    let rep = |opts: &str| {
        job(
            "rep",
            &f,
            &format!("--size=4M --rw=randread --bs=8k {opts}"),
        )
    };
    run_into(&db, &rep("--prefetch=8 --label cold"));
    run_into(&db, &rep("--cache=warm --label warm"));
    let page = d.path().join("report.html");
    succeed_text(with_db(&db).args(["report", "1", "warm", "-o", s(&page)]));
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch (the SVG namespace URI is a name, not a fetch).
    for fetch in ["src=\"http", "href=\"http", "<link", "url(http", "@import"] {
        assert!(!html.contains(fetch), "page would fetch: {fetch}");
    }
    let (code, _) = fail(with_db(&db).args(["report", "1", "-o", s(&page)]));
    assert_eq!(code, 2, "refuses to overwrite");

    let shot = d.path().join("report.png");
    let l = chromium(&page, &shot, (1200, 2400));
    l.assert_ran_cleanly();
    assert!(l.dom.contains("href=\"#run-1\""), "table of contents built");
    let svgs = l.dom.matches("<svg").count();
    // Overview bars + per run: log2 histogram and percentile curve.
    assert!(svgs >= 5, "{svgs} plots");
    for want in [
        "run 1: latency, log2 buckets",
        "fadvise",
        "Environment",
        "prefetch",
    ] {
        assert!(l.dom.contains(want), "page lacks {want:?}");
    }
    let (w, h) = png_size(&shot);
    assert_eq!((w, h), (1200, 2400));
    keep_screenshot(&shot, "report-screenshot.png");
}

/// The console check above can fail: a page with a script error is caught.
#[test]
fn chromium_check_catches_console_errors() {
    skip_unless_installed!("chromium");
    let d = scratch();
    let page = write_file(
        d.path(),
        "bad.html",
        "<html><body><script>console.error('boom'); nope();</script></body></html>",
    );
    let l = chromium(&page, &d.path().join("bad.png"), (800, 600));
    assert!(
        l.console.iter().any(|c| c.contains("boom")),
        "{:?}",
        l.console
    );
    assert!(
        l.console.iter().any(|c| c.contains("nope is not defined")),
        "{:?}",
        l.console
    );
}

/// `iolab plot` draws each picture of a stored run as PNG and SVG.
#[test]
fn plot_pictures_of_a_stored_run() {
    let (d, f) = scratch_file();
    let db = d.path().join("p.db");
    let opts = "--size=16M --rw=randread --bs=4k --runtime=600ms --time_based \
                --log_avg_msec=100 --prefetch=4";
    run_into(&db, &job("pl", &f, opts));
    for what in ["ccdf", "log2", "percentiles", "timeseries"] {
        let png = d.path().join(format!("{what}.png"));
        succeed_text(with_db(&db).args(["plot", "1", "--what", what, "-o", s(&png)]));
        assert_eq!(png_size(&png), (900, 520));
        let svg = d.path().join(format!("{what}.svg"));
        succeed_text(with_db(&db).args(["plot", "1", "--what", what, "-o", s(&svg)]));
        let body = std::fs::read_to_string(&svg).unwrap();
        assert!(body.starts_with("<svg"), "{what}");
        let want = match what {
            "ccdf" => ["fraction of I/Os slower than x (log scale)", "fadvise"],
            "log2" => ["operations (count, log scale)", "fadvise"],
            "percentiles" => ["latency, log scale (ns/µs/ms)", "percentile (%)"],
            _ => ["IOPS (I/Os per second)", "time (s)"],
        };
        for w in want {
            assert!(body.contains(&format!(">\n{w}\n<")), "{what} lacks {w}");
        }
    }
    // A run shorter than one interval has no time series to draw.
    run_into(
        &db,
        &job("short", &f, "--size=16M --rw=randread --number_ios=10"),
    );
    let png = d.path().join("t.png");
    let mut plot = with_db(&db);
    plot.args(["plot", "2", "--what", "timeseries", "-o", s(&png)]);
    fails_with(&mut plot, 2, "fewer than two");
}
