//! `iolab report`: one self-contained HTML page (inline SVG, inline CSS and
//! a few lines of script, nothing fetched) with the command line, job,
//! environment, key figures and plots of stored runs, and when and where
//! the page was made (the caller reads the runs and says where and when:
//! [`Body::of`], [`html`]).

use super::Here;
use super::chart::{Chart, Footnote};
use super::html::{esc, page, table as html_table};
use super::run_charts::{self, footnote, latencies, whole};
use super::stored::{disk, summary_table};
use super::table::Table;
use crate::error::Result;
use crate::metrics::format::bytes_iec;
use crate::runner::RunResult;
use crate::store::{StoredRun, kind};
use crate::sys::environment::Environment;
use crate::tree::TreeResult;

fn figure(chart: &Chart, caption: &str, note: &Footnote) -> Result<String> {
    Ok(format!(
        "<figure>{}<figcaption>{}</figcaption></figure>\n",
        chart.svg(note)?,
        esc(caption)
    ))
}

/// A stored run's decoded result.
pub enum Body {
    /// `iolab run` or an imported fio result.
    Run(RunResult),
    /// `iolab tree`.
    Tree(TreeResult),
    /// `iolab trace`.
    Trace(Box<crate::trace::store::StoredTrace>),
    /// `iolab exec`.
    Exec(Box<crate::exec::ExecResult>),
}

impl Body {
    /// `run`'s result, decoded as its kind says.
    pub fn of(run: &StoredRun) -> Result<Body> {
        Ok(if run.kind == kind::TREE {
            Body::Tree(run.tree_result()?)
        } else if run.kind == kind::TRACE {
            Body::Trace(Box::new(crate::trace::store::load(run)?))
        } else if run.kind == kind::EXEC {
            Body::Exec(Box::new(crate::exec::store::load(run)?))
        } else {
            Body::Run(run.result()?)
        })
    }
}

fn run_section(run: &StoredRun, body: &Body, when: &str) -> Result<String> {
    let mut s = format!(
        "<section class=\"run\" id=\"run-{id}\"><h2>Run {id}: {name}{label}</h2>\n<p class=\"meta\">stored {when} by iolab {ver} &middot; {kind}</p>\n<h3>Command line</h3>\n<pre class=\"command\"><code>{cmd}</code></pre>\n",
        id = run.id,
        name = esc(&run.name),
        label = run
            .label
            .as_deref()
            .map(|l| format!(" <span class=\"label\">{}</span>", esc(l)))
            .unwrap_or_default(),
        when = esc(when),
        ver = esc(&run.iolab_version),
        kind = esc(&run.kind),
        cmd = esc(&run.command),
    );
    s.push_str("<h3>Key figures</h3>\n");
    s.push_str(&html_table(&summary_table(
        std::slice::from_ref(run),
        |_| when.to_string(),
    )));
    let note = footnote(run, |_| when.to_string());
    let env = env_table(&run.env, &run.iolab_version);
    let r = match body {
        Body::Run(r) => r,
        Body::Tree(t) => return Ok(s + &tree_section(run, t, &env, &note)?),
        Body::Trace(t) => {
            // The trace's own view: per call figures and log2 histograms,
            // per file access patterns.
            return Ok(s + &format!(
                "<h3>Environment</h3>\n{env}<h3>Calls and files</h3>\n<pre>{}</pre>\n</section>\n",
                esc(&crate::render::trace::text(t))
            ));
        }
        Body::Exec(e) => {
            // The runs as `iolab exec` shows them.
            return Ok(s + &format!(
                "<h3>Environment</h3>\n{env}<h3>Runs</h3>\n<pre>{}</pre>\n</section>\n",
                esc(&crate::render::exec::text(e))
            ));
        }
    };
    s.push_str(&run_body(r, &format!("run {}", run.id), &env, &note)?);
    s.push_str("</section>\n");
    Ok(s)
}

/// The `html` output format: a page for one run, straight from the data.
pub struct Html;

impl super::Exporter for Html {
    /// The environment is `here`'s, with the run's files.
    fn run(&self, r: &RunResult, here: &Here) -> Result<String> {
        let names: Vec<&str> = r.jobs.iter().map(|j| j.name.as_str()).collect();
        let title = format!("iolab run: {}", names.join(", "));
        let env = env_table(&here.env, env!("CARGO_PKG_VERSION"));
        let when = (here.when)(r.started_unix as i64);
        let note = Footnote {
            date: when.clone(),
            ..here.footnote()
        };
        let body = format!(
            "<section class=\"run\" id=\"run\"><h2>{}</h2>\n<h3>Key figures</h3>\n{}{}</section>\n",
            esc(&names.join(", ")),
            html_table(&super::csv::jobs_table(r)),
            run_body(r, "this run", &env, &note)?
        );
        let intro = format!(
            "run started {when} on host {}, made by iolab {}",
            note.host,
            env!("CARGO_PKG_VERSION")
        );
        Ok(page(&title, &intro, "run", &body))
    }

    fn shows_files(&self) -> bool {
        true
    }

    fn table(&self, t: &Table) -> Option<String> {
        Some(page("iolab table", "", "table", &html_table(t)))
    }
}

/// A run's job options, environment (`env`, HTML), latency and
/// time-series plots (footnoted with `note`).
fn run_body(r: &RunResult, name: &str, env: &str, note: &Footnote) -> Result<String> {
    let mut s = String::from("<h3>Job</h3>\n");
    for j in &r.jobs {
        let mut t = Table::new(["option", "value"]);
        for (k, v) in &j.options {
            t.push(vec![k.clone(), v.clone()]);
        }
        s.push_str(&format!("<h4>{}</h4>\n{}", esc(&j.name), html_table(&t)));
    }
    s.push_str(&format!("<h3>Environment</h3>\n{env}"));
    let t = whole(r);
    if !latencies(&t).is_empty() {
        s.push_str("<h3>Latency</h3>\n<div class=\"plots\">");
        s.push_str(&figure(
            &run_charts::ccdf(&format!("{name}: latency CCDF"), &t),
            "Fraction of operations slower than each latency (both axes log: the tail shows).",
            note,
        )?);
        s.push_str(&figure(
            &run_charts::log2(&format!("{name}: latency, log2 buckets"), &t),
            "Operations per power-of-two latency bucket (dtrace's quantize), counts on a log axis.",
            note,
        )?);
        s.push_str(&figure(
            &run_charts::percentiles(&format!("{name}: latency percentiles"), &t),
            "Latency at fio's percentiles (log scale).",
            note,
        )?);
        s.push_str("</div>\n");
    }
    if let Some(chart) = run_charts::timeseries(&format!("{name}: IOPS over time"), &t) {
        s.push_str("<h3>Over time</h3>\n");
        s.push_str(&figure(
            &chart,
            "IOPS per interval (log_avg_msec, default 1 s).",
            note,
        )?);
    }
    Ok(s)
}

/// The tree part of a section: phases, environment (`env`, HTML),
/// per-phase latency.
fn tree_section(run: &StoredRun, t: &TreeResult, env: &str, note: &Footnote) -> Result<String> {
    let mut s = String::from("<h3>Phases</h3>\n");
    let head = crate::render::tree::text(t);
    s.push_str(&format!(
        "<p>{}</p>\n",
        esc(head.lines().next().unwrap_or(""))
    ));
    s.push_str(&html_table(&crate::render::tree::phases_table(t)));
    if let Some(st) = t.stopped() {
        s.push_str(&format!(
            "<p><b>stopped early:</b> {}</p>\n",
            esc(&st.to_string())
        ));
    }
    s.push_str(&format!("<h3>Environment</h3>\n{env}<h3>Latency</h3>\n"));
    for p in &t.phases {
        let hists: Vec<(&str, &crate::metrics::LatencyHistogram)> =
            p.ops.iter().map(|(k, h)| (k.as_str(), h)).collect();
        if hists.is_empty() {
            continue;
        }
        s.push_str(&figure(
            &crate::render::chart::log2_histogram(
                &format!("run {}: {}, log2 buckets", run.id, p.name),
                &hists,
            ),
            &format!(
                "{}: operations per power-of-two latency bucket, per operation type.",
                p.name
            ),
            note,
        )?);
    }
    s.push_str("</section>\n");
    Ok(s)
}

/// The whole page for `runs` (each with its decoded result), made `here`.
pub fn html(runs: &[(StoredRun, Body)], here: &Here) -> Result<String> {
    let when = here.when;
    let mut body = String::new();
    let made = here.footnote();
    if runs.len() > 1 {
        let stored: Vec<StoredRun> = runs.iter().map(|(s, _)| s.clone()).collect();
        body.push_str("<section id=\"overview\"><h2>Overview</h2>\n");
        body.push_str(&html_table(&summary_table(&stored, when)));
        // IOPS, or the run time when no run has IOPS (execs, trees).
        let (key, what, unit) = match stored.iter().any(|r| r.summary.get("iops") > 0.0) {
            true => ("iops", "IOPS", "IOPS (I/Os per second)"),
            false => ("time_s", "run time", "run time (s)"),
        };
        let chart = Chart::Bars {
            title: format!("{what} per run"),
            x_label: "run".into(),
            y_label: unit.into(),
            categories: stored
                .iter()
                .map(|r| format!("{} {}", r.id, r.label.clone().unwrap_or_default()))
                .collect(),
            series: vec![(
                what.into(),
                stored.iter().map(|r| r.summary.get(key)).collect(),
                None,
            )],
        };
        body.push_str(&figure(&chart, &format!("{what} of each run."), &made)?);
        body.push_str("</section>\n");
    }
    for (s, r) in runs {
        body.push_str(&run_section(s, r, &when(s.created_unix))?);
    }
    let ids: Vec<String> = runs.iter().map(|(s, _)| s.id.to_string()).collect();
    let ids = ids.join(", ");
    Ok(page(
        &format!("iolab report: runs {ids}"),
        &format!(
            "runs {ids} · report made {} on host {} by iolab {}",
            made.date, made.host, made.version
        ),
        "run",
        &body,
    ))
}

/// Where a run ran, as an HTML table: host, kernel, CPU, memory, iolab
/// version, and per file its file system, mount options and device.
pub fn env_table(e: &Environment, version: &str) -> String {
    let mut t = Table::new(["what", "value"]);
    let mut row = |k: &str, v: String| t.push(vec![k.to_string(), v]);
    let or = |v: &str, none: &str| {
        if v.is_empty() {
            none.to_string()
        } else {
            v.to_string()
        }
    };
    row("host", or(&e.hostname, "unknown"));
    row("kernel", or(&e.kernel, "not recorded"));
    row(
        "CPU",
        format!("{} × {}", e.cpus, or(&e.cpu_model, "model unknown")),
    );
    row(
        "memory",
        if e.memory_bytes == 0 {
            "not recorded".into()
        } else {
            bytes_iec(e.memory_bytes as f64)
        },
    );
    row("iolab version", version.to_string());
    for f in &e.files {
        let p = f.path.display();
        row(
            &format!("{p}: file system"),
            format!("{} on {}", f.fs_type, f.mount_point),
        );
        row(&format!("{p}: mount options"), f.mount_options.clone());
        let disks: Vec<String> = f.disks.iter().map(disk).collect();
        let device = if disks.is_empty() {
            f.mount_source.clone()
        } else {
            format!("{}: {}", f.mount_source, disks.join(", "))
        };
        row(&format!("{p}: device"), device);
        if !f.injected.is_empty() {
            row(&format!("{p}: injected disk"), f.injected.clone());
        }
    }
    format!("<div class=\"env\">{}</div>", html_table(&t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::here::tests::{here, run, stored};

    /// A stored run's body is its result, decoded as its kind says.
    #[test]
    fn body_is_decoded_as_its_kind() {
        let r = run();
        let body = Body::of(&stored(kind::RUN, &r)).unwrap();
        assert!(matches!(body, Body::Run(d) if d.files == r.files));
        assert!(Body::of(&stored(kind::TREE, &r)).is_err(), "not a tree");
    }

    /// The page says when and where it was made: `here`.
    #[test]
    fn page_is_made_here() {
        let page = html(&[], &here()).unwrap();
        assert!(
            page.contains("report made t=90 on host h1 by iolab"),
            "{page}"
        );
    }
}
