//! Sweeps, A/B comparison and pictures: `iolab sweep`, `iolab compare`,
//! `--plot` files (PNG and SVG), and `iolab report` loaded in headless
//! Chromium.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run_ok(c: &mut Command) -> (String, String) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

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
    let d = scratch();
    let db = d.path().join("s.db");
    let job = d.path().join("irmin.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=3500000B\nbsrange=50-300\nrw=randread\nthread\ngroup_reporting\n\
             [irmin]\nnumber_ios=5000\n",
            s(&d.path().join("pack.dat"))
        ),
    )
    .unwrap();
    let png = d.path().join("iops.png");
    let (out, err) = run_ok(with_db(&db).args([
        "sweep",
        s(&job),
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
    let hist =
        String::from_utf8(succeed(with_db(&db).args(["history", "--format", "json"]))).unwrap();
    let rows: Value = serde_json::from_str(&hist).unwrap();
    let mut ops: Vec<(String, f64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["point"].as_str().unwrap().to_string(),
                r["ops"].as_f64().unwrap(),
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
    let (out, _) = run_ok(with_db(&db).args([
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
        &format!("--filename={}", s(&d.path().join("pack.dat"))),
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
    let ops: Vec<f64> = String::from_utf8(succeed(
        with_db(&db).args(["history", "--sweep", "2", "--format", "json"]),
    ))
    .map(|t| serde_json::from_str::<Value>(&t).unwrap())
    .unwrap()
    .as_array()
    .unwrap()
    .iter()
    .map(|r| r["ops"].as_f64().unwrap())
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
    let base = [
        "--name=e".to_string(),
        format!("--filename={}", s(&f)),
        "--size=1M".into(),
    ];
    let err = |extra: &[&str]| {
        let out = with_db(&d.path().join("e.db"))
            .arg("sweep")
            .args(extra)
            .args(&base)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    assert!(err(&["--vary", "numjbs=1..4"]).contains("numjobs"));
    assert!(err(&["--vary", "numjobs=4..1"]).contains("below its start"));
    assert!(err(&["--vary", "rw=read,sideways"]).contains("sideways"));
    assert!(err(&["--vary", "numjobs=1..2", "--metric", "speed"]).contains("--metric 'speed'"));
    assert!(err(&["--vary", "numjobs=1..2", "--plot", "x.gif"]).contains(".svg or .png"));
    assert!(!f.exists(), "nothing ran");
}

/// Two job files run 5 times each, interleaved; the difference between
/// 512 B and 1 MiB reads from the page cache is reported as significant.
#[test]
fn compare_job_files_interleaved_with_significance() {
    let d = scratch();
    let db = d.path().join("c.db");
    let data = d.path().join("data");
    let job = |name: &str, bs: &str| {
        let p = d.path().join(format!("{name}.fio"));
        std::fs::write(
            &p,
            format!(
                "[{name}]\nfilename={}\nsize=16M\nrw=read\nbs={bs}\ncache=warm\n",
                s(&data)
            ),
        )
        .unwrap();
        p
    };
    let (a, b) = (job("A", "512"), job("B", "1m"));
    let svg = d.path().join("ab.svg");
    let (out, err) = run_ok(with_db(&db).args([
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
    let row = |k: &str| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == k)
            .unwrap_or_else(|| panic!("no {k} row"))
            .clone()
    };
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
    let hist =
        String::from_utf8(succeed(with_db(&db).args(["history", "--format", "csv"]))).unwrap();
    let labels: Vec<&str> = hist
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap())
        .collect();
    assert_eq!(labels.len(), 10);
    assert!(
        labels.iter().rev().step_by(2).all(|l| *l == "ab:A"),
        "{labels:?}"
    );
    assert!(std::fs::read_to_string(&svg).unwrap().contains("% of A"));
    // The stored runs compare again by label, as a table.
    let (t, _) = run_ok(with_db(&db).args(["compare", "ab:A", "ab:B"]));
    let p50_line = t.lines().find(|l| l.starts_with("p50 (us)"));
    assert!(
        t.contains("MiB/s") && p50_line.is_some_and(|l| l.contains("B worse, significant")),
        "{t}"
    );
}

/// Two stored runs compared by id: a table with the % change.
#[test]
fn compare_two_stored_runs() {
    let d = scratch();
    let db = d.path().join("t.db");
    let f = d.path().join("f");
    for bs in ["4k", "16k"] {
        run_ok(with_db(&db).args([
            "run",
            "--name=t",
            &format!("--filename={}", s(&f)),
            "--size=2M",
            "--rw=read",
            &format!("--bs={bs}"),
        ]));
    }
    let (t, _) = run_ok(with_db(&db).args(["compare", "1", "2"]));
    let ops = t
        .lines()
        .find(|l| l.starts_with("ops"))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        ops.contains("512") && ops.contains("128") && ops.contains("-75.0%"),
        "{ops}"
    );
    assert!(t.contains("no test"), "one sample per side: {t}");
    let (md, _) = run_ok(with_db(&db).args(["compare", "1", "2", "--format", "markdown"]));
    assert!(md.contains("| metric |"), "{md}");
    let out = with_db(&db)
        .args(["compare", "1", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'nope'"));
}

#[test]
fn report_loads_in_headless_chromium() {
    skip_unless_installed!("chromium");
    let d = scratch();
    let db = d.path().join("r.db");
    let f = d.path().join("f");
    run_ok(with_db(&db).args([
        "run",
        "--name=rep",
        &format!("--filename={}", s(&f)),
        "--size=4M",
        "--rw=randread",
        "--bs=8k",
        "--prefetch=8",
        "--label",
        "cold",
    ]));
    run_ok(with_db(&db).args([
        "run",
        "--name=rep",
        &format!("--filename={}", s(&f)),
        "--size=4M",
        "--rw=randread",
        "--bs=8k",
        "--cache=warm",
        "--label",
        "warm",
    ]));
    let page = d.path().join("report.html");
    run_ok(with_db(&db).args(["report", "1", "warm", "-o", s(&page)]));
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing to fetch (the SVG namespace URI is a name, not a fetch).
    for fetch in ["src=\"http", "href=\"http", "<link", "url(http", "@import"] {
        assert!(!html.contains(fetch), "page would fetch: {fetch}");
    }
    // Refuses to overwrite.
    let out = with_db(&db)
        .args(["report", "1", "-o", s(&page)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let shot = d.path().join("report.png");
    let l = chromium(&page, &shot, (1200, 2400));
    assert!(l.console.is_empty(), "console messages: {:?}", l.console);
    assert!(l.dom.contains("data-ready=\"1\""), "the page's script ran");
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
    // Keep the screenshot where a person can look at it.
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    std::fs::copy(&shot, &keep).unwrap();
    eprintln!("screenshot: {}", keep.display());
}

/// The console check above can fail: a page with a script error is caught.
#[test]
fn chromium_check_catches_console_errors() {
    skip_unless_installed!("chromium");
    let d = scratch();
    let page = d.path().join("bad.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('boom'); nope();</script></body></html>",
    )
    .unwrap();
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
    let d = scratch();
    let db = d.path().join("p.db");
    let f = d.path().join("f");
    run_ok(with_db(&db).args([
        "run",
        "--name=pl",
        &format!("--filename={}", s(&f)),
        "--size=16M",
        "--rw=randread",
        "--bs=4k",
        "--runtime=600ms",
        "--time_based",
        "--log_avg_msec=100",
        "--prefetch=4",
    ]));
    for what in ["log2", "percentiles", "timeseries"] {
        let png = d.path().join(format!("{what}.png"));
        run_ok(with_db(&db).args(["plot", "1", "--what", what, "-o", s(&png)]));
        assert_eq!(png_size(&png), (900, 520));
        let svg = d.path().join(format!("{what}.svg"));
        run_ok(with_db(&db).args(["plot", "1", "--what", what, "-o", s(&svg)]));
        let body = std::fs::read_to_string(&svg).unwrap();
        assert!(body.starts_with("<svg"), "{what}");
        let want = match what {
            "log2" => ["operations", "fadvise"],
            "percentiles" => ["latency (us)", "percentile"],
            _ => ["IOPS", "time (s)"],
        };
        for w in want {
            assert!(body.contains(&format!(">\n{w}\n<")), "{what} lacks {w}");
        }
    }
    // A run shorter than one interval has no time series to draw.
    run_ok(with_db(&db).args([
        "run",
        "--name=short",
        &format!("--filename={}", s(&f)),
        "--size=16M",
        "--rw=randread",
        "--number_ios=10",
    ]));
    let out = with_db(&db)
        .args([
            "plot",
            "2",
            "--what",
            "timeseries",
            "-o",
            s(&d.path().join("t.png")),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fewer than two"));
}
