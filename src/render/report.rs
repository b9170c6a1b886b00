//! `iolab report`: one self-contained HTML page (inline SVG, inline CSS and
//! a few lines of script, nothing fetched) with the job, environment, key
//! figures and plots of stored runs.

use crate::render::chart::Chart;
use crate::render::run_charts::{self, latencies, whole};
use crate::render::stored::{environment, summary_table};
use crate::render::table::Table;
use crate::runner::RunResult;
use crate::store::StoredRun;
use crate::tree::TreeResult;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn html_table(t: &Table) -> String {
    let mut s = String::from("<table><thead><tr>");
    for h in &t.headers {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        s.push_str("<tr>");
        for c in r {
            s.push_str(&format!("<td>{}</td>", esc(c)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>\n");
    s
}

fn figure(chart: &Chart, caption: &str) -> Result<String, String> {
    Ok(format!(
        "<figure>{}<figcaption>{}</figcaption></figure>\n",
        chart.svg()?,
        esc(caption)
    ))
}

/// A stored run's decoded result.
pub enum Body {
    /// `iolab run` or an imported fio result.
    Run(RunResult),
    /// `iolab tree`.
    Tree(TreeResult),
}

fn run_section(run: &StoredRun, body: &Body, when: &str) -> Result<String, String> {
    let mut s = format!(
        "<section class=\"run\" id=\"run-{id}\"><h2>Run {id}: {name}{label}</h2>\n<p class=\"meta\">stored {when} by iolab {ver} &middot; {kind} &middot; <code>{cmd}</code></p>\n",
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
    let r = match body {
        Body::Run(r) => r,
        Body::Tree(t) => return Ok(s + &tree_section(run, t)?),
    };
    s.push_str("<h3>Job</h3>\n");
    for j in &r.jobs {
        let mut t = Table::new(["option", "value"]);
        for (k, v) in &j.options {
            t.push(vec![k.clone(), v.clone()]);
        }
        s.push_str(&format!("<h4>{}</h4>\n{}", esc(&j.name), html_table(&t)));
    }
    s.push_str(&format!(
        "<h3>Environment</h3>\n<pre>{}</pre>\n",
        esc(&environment(&run.env))
    ));
    let t = whole(r);
    if !latencies(&t).is_empty() {
        s.push_str("<h3>Latency</h3>\n<div class=\"plots\">");
        s.push_str(&figure(
            &run_charts::log2(&format!("run {}: latency, log2 buckets", run.id), &t),
            "Operations per power-of-two latency bucket (dtrace's quantize).",
        )?);
        s.push_str(&figure(
            &run_charts::percentiles(&format!("run {}: latency percentiles", run.id), &t),
            "Latency at fio's percentiles (log scale).",
        )?);
        s.push_str("</div>\n");
    }
    if let Some(chart) = run_charts::timeseries(&format!("run {}: IOPS over time", run.id), &t) {
        s.push_str("<h3>Over time</h3>\n");
        s.push_str(&figure(
            &chart,
            "IOPS per interval (log_avg_msec, default 1 s).",
        )?);
    }
    s.push_str("</section>\n");
    Ok(s)
}

/// The tree part of a section: phases, environment, per-phase latency.
fn tree_section(run: &StoredRun, t: &TreeResult) -> Result<String, String> {
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
    s.push_str(&format!(
        "<h3>Environment</h3>\n<pre>{}</pre>\n<h3>Latency</h3>\n",
        esc(&environment(&run.env))
    ));
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
        )?);
    }
    s.push_str("</section>\n");
    Ok(s)
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #1f77b4;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:90%}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow-x:auto}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{color:#555;font-size:90%}
.label{background:#e8f0fe;border-radius:4px;padding:0 .4em;font-size:80%}.meta{color:#555}
nav ul{columns:2}code{font-size:90%}";

/// Builds the report/TOC in the page: lists the runs at the top.
const SCRIPT: &str = "document.addEventListener('DOMContentLoaded',function(){
var nav=document.getElementById('toc');var list=document.createElement('ul');
document.querySelectorAll('section.run h2').forEach(function(h){
var li=document.createElement('li');var a=document.createElement('a');
a.href='#'+h.parentElement.id;a.textContent=h.textContent;li.appendChild(a);list.appendChild(li);});
nav.appendChild(list);document.body.setAttribute('data-ready','1');});";

/// The whole page for `runs` (each with its decoded result).
pub fn html(runs: &[(StoredRun, Body)], when: impl Fn(i64) -> String) -> Result<String, String> {
    let mut body = String::new();
    if runs.len() > 1 {
        let stored: Vec<StoredRun> = runs.iter().map(|(s, _)| s.clone()).collect();
        body.push_str("<section id=\"overview\"><h2>Overview</h2>\n");
        body.push_str(&html_table(&summary_table(&stored, &when)));
        let chart = Chart::Bars {
            title: "IOPS per run".into(),
            x_label: "run".into(),
            y_label: "IOPS".into(),
            categories: stored
                .iter()
                .map(|r| format!("{} {}", r.id, r.label.clone().unwrap_or_default()))
                .collect(),
            series: vec![(
                "IOPS".into(),
                stored.iter().map(|r| r.summary.get("iops")).collect(),
                None,
            )],
        };
        body.push_str(&figure(&chart, "IOPS of each run.")?);
        body.push_str("</section>\n");
    }
    for (s, r) in runs {
        body.push_str(&run_section(s, r, &when(s.created_unix))?);
    }
    let ids: Vec<String> = runs.iter().map(|(s, _)| s.id.to_string()).collect();
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>iolab report: runs {ids}</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head><body>\n<h1>iolab report</h1>\n<p class=\"meta\">runs {ids}, made by iolab {ver}</p>\n<nav id=\"toc\"></nav>\n{body}</body></html>\n",
        ids = esc(&ids.join(", ")),
        ver = env!("CARGO_PKG_VERSION"),
    ))
}
