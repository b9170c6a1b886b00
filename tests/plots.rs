//! Pictures as a person reads them: latency on log axes with 1-2-5 ticks
//! (CCDF, log-count histogram, percentiles), titles, axis labels with
//! units and the host/date/version footnote; error bars on repeated sweep
//! points; the report's command line and environment, and its screenshot
//! in headless Chromium (decoded: right size, not blank).

mod common;
use common::svg::*;
use common::*;
use std::path::Path;

/// The host name as the kernel says it (what runs record).
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A short random-read run with prefetch (reads and fadvise latencies).
fn stored_run(db: &Path, file: &Path) {
    run_into(
        db,
        &job("pics", file, "--size=4M --rw=randread --bs=4k --prefetch=4"),
    );
}

/// The footnote line of an SVG: host, a date, and iolab's version.
fn assert_footnote(svg: &str, what: &str) {
    let host = hostname();
    let line = texts(svg)
        .into_iter()
        .map(|t| t.2)
        .find(|t| t.starts_with("host "))
        .unwrap_or_else(|| panic!("{what}: no footnote"));
    let want_end = format!(" · iolab {}", env!("CARGO_PKG_VERSION"));
    assert!(
        line.starts_with(&format!("host {host} · ")),
        "{what}: {line}"
    );
    assert!(line.ends_with(&want_end), "{what}: {line}");
    let date = &line[format!("host {host} · ").len()..line.len() - want_end.len()];
    let digits: String = date.chars().filter(char::is_ascii_digit).collect();
    assert!(
        date.starts_with("20") && date.contains('-') && digits.len() == 12,
        "{what}: date {date:?}"
    );
}

#[test]
fn latency_plots_have_log_ticks_titles_units_and_footnote() {
    let (d, f) = scratch_file();
    let db = d.path().join("p.db");
    stored_run(&db, &f);
    let plot = |what: &str| {
        let svg = d.path().join(format!("{what}.svg"));
        succeed_text(with_db(&db).args(["plot", "1", "--what", what, "-o", s(&svg)]));
        std::fs::read_to_string(&svg).unwrap()
    };

    let ccdf = plot("ccdf");
    assert!(has_text(&ccdf, "run 1 (pics): latency CCDF"), "title");
    assert!(has_text(&ccdf, "latency, log scale (ns/µs/ms)"));
    assert!(has_text(
        &ccdf,
        "fraction of I/Os slower than x (log scale)"
    ));
    // Fractions from 1 down past 1/1024 (1024 reads): 1-2-5 ticks.
    for t in [
        "1", "0.5", "0.2", "0.1", "0.05", "0.02", "0.01", "0.005", "0.002",
    ] {
        assert!(has_text(&ccdf, t), "CCDF y tick {t}");
    }
    // Latency ticks are times with units, on 1-2-5 or powers of ten only.
    let x_ticks: Vec<String> = texts(&ccdf)
        .into_iter()
        .map(|t| t.2)
        .filter(|t| t.ends_with("µs") || t.ends_with("ms") || t.ends_with("ns"))
        .collect();
    assert!(x_ticks.len() >= 3, "{x_ticks:?}");
    for t in &x_ticks {
        let lead = t
            .trim_end_matches(char::is_alphabetic)
            .trim_end_matches('µ');
        assert!(
            ["1", "2", "5", "10", "20", "50", "100", "200", "500"].contains(&lead),
            "{t}"
        );
    }
    assert!(x_ticks.contains(&"1µs".to_string()) || x_ticks.contains(&"10µs".to_string()));
    assert_footnote(&ccdf, "ccdf");

    let log2 = plot("log2");
    assert!(has_text(&log2, "run 1 (pics): latency, log2 buckets"));
    assert!(has_text(&log2, "operations (count, log scale)"));
    for t in ["1", "2", "5", "10", "20", "50", "100"] {
        assert!(has_text(&log2, t), "count tick {t}");
    }
    let bars = log2
        .split("<rect")
        .skip(1)
        .filter(|r| r.contains("fill=\"#1F77B4\"") || r.contains("fill=\"#FF7F0E\""))
        .count();
    assert!(bars >= 4, "bars drawn");
    assert_footnote(&log2, "log2");

    let p = plot("percentiles");
    assert!(has_text(&p, "percentile (%)"));
    assert!(has_text(&p, "latency, log scale (ns/µs/ms)"));
    assert_footnote(&p, "percentiles");
}

/// A sweep repeated 3 times per point draws the mean with min-max error
/// bars; the same sweep run once draws none.
#[test]
fn repeated_sweep_points_have_error_bars() {
    let (d, f) = scratch_file();
    let sweep = |repeat: &str| {
        let svg = d.path().join(format!("r{repeat}.svg"));
        let mut args = vec![
            "sweep".to_string(),
            "--no-store".into(),
            "--vary".into(),
            "numjobs=1..2".into(),
            "--repeat".into(),
            repeat.into(),
            "--plot".into(),
            s(&svg).into(),
        ];
        args.extend(job("e", &f, "--size=1M --rw=randread --bs=4k --thread"));
        succeed_text(bin().args(&args));
        std::fs::read_to_string(&svg).unwrap()
    };
    let three = sweep("3");
    assert!(
        has_text(
            &three,
            "IOPS vs numjobs (mean of 3 repetitions, bars from min to max)"
        ),
        "title says what the bars are"
    );
    assert!(has_text(&three, "numjobs (jobs)") && has_text(&three, "IOPS (I/Os per second)"));
    assert_eq!(vertical_lines(&three, "#1F77B4"), 2, "one bar per point");
    assert_footnote(&three, "sweep");
    let one = sweep("1");
    assert!(has_text(&one, "IOPS vs numjobs"));
    assert_eq!(
        vertical_lines(&one, "#1F77B4"),
        0,
        "no bars without repetitions"
    );
}

/// The report names the command line and the environment of each run,
/// the date and host it was made on, and renders in Chromium as a page
/// with content (decoded screenshot: its size, many colours, ink).
#[test]
fn report_has_command_environment_and_renders_in_chromium() {
    let (d, f) = scratch_file();
    let db = d.path().join("r.db");
    let mut args = job("pics", &f, "--size=4M --rw=randread --bs=4k --prefetch=4");
    args.extend(["--label".into(), "first try".into()]);
    run_into(&db, &args);
    let page = d.path().join("report.html");
    succeed_text(with_db(&db).args(["report", "1", "-o", s(&page)]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h3>Command line</h3>"), "command heading");
    // The whole command line, iolab's own options and all, quoted as a
    // shell needs (the label holds a space).
    let cmd = html
        .split("<pre class=\"command\"><code>")
        .nth(1)
        .and_then(|c| c.split("</code>").next())
        .expect("command line shown");
    assert!(cmd.starts_with("iolab run "), "{cmd}");
    for part in ["--name=pics", "--prefetch=4", "--label 'first try'"] {
        assert!(cmd.contains(part), "{cmd} lacks {part}");
    }

    let host = hostname();
    assert!(
        html.contains(&format!("on host {host} by iolab")),
        "made where"
    );
    for row in [
        "kernel",
        "CPU",
        "memory",
        "iolab version",
        "file system",
        "mount options",
        "device",
    ] {
        assert!(
            html.contains(&format!("{row}</td>")),
            "environment row {row}"
        );
    }
    assert!(html.contains("latency CCDF"), "CCDF figure");

    skip_unless_installed!("chromium");
    let shot = d.path().join("report.png");
    let l = chromium(&page, &shot, (1000, 1800));
    l.assert_ran_cleanly();
    let (w, h, colours, ink) = png_pixels(&shot);
    assert_eq!((w, h), (1000, 1800));
    assert!(colours > 20, "{colours} colours: blank or flat page");
    let share = ink as f64 / (w * h) as f64;
    assert!(share > 0.02 && share < 0.8, "non-white share {share}");
    keep_screenshot(&shot, "plots-report-screenshot.png");
}

/// The screenshot check can fail: an empty page is caught as blank.
#[test]
fn blank_screenshot_is_caught() {
    skip_unless_installed!("chromium");
    let d = scratch();
    let page = write_file(d.path(), "blank.html", "<html><body></body></html>");
    let shot = d.path().join("blank.png");
    chromium(&page, &shot, (400, 300));
    let (w, h, colours, ink) = png_pixels(&shot);
    assert_eq!((w, h), (400, 300));
    assert!(colours <= 2 && ink == 0, "{colours} colours, {ink} ink");
}
