//! A lab's outcome as text for the terminal, and labs as one HTML page.

use crate::lab::Outcome;
use crate::render::report::esc;

/// The terminal view: heading, what was done, table, answer, histograms.
pub fn text(o: &Outcome) -> String {
    let mut s = format!("== {} ==\n", o.title);
    for l in &o.setup {
        s.push_str(&format!("  {l}\n"));
    }
    s.push('\n');
    s.push_str(&o.table.text());
    s.push('\n');
    s.push_str(&o.answer);
    s.push('\n');
    for t in &o.text {
        s.push('\n');
        s.push_str(t);
    }
    s
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h2{border-bottom:2px solid #1f77b4;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:90%}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:85%}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}.answer{font-size:110%;background:#eef6ee;padding:.6em;border-left:4px solid #2ca02c}";

const SCRIPT: &str = "document.addEventListener('DOMContentLoaded',function(){
var nav=document.getElementById('toc');var list=document.createElement('ul');
document.querySelectorAll('section.lab h2').forEach(function(h){
var li=document.createElement('li');var a=document.createElement('a');
a.href='#'+h.parentElement.id;a.textContent=h.textContent;li.appendChild(a);list.appendChild(li);});
nav.appendChild(list);document.body.setAttribute('data-ready','1');});";

/// One self-contained page with every lab's outcome and charts.
pub fn html(outcomes: &[Outcome], note: &str) -> Result<String, String> {
    let mut body = String::new();
    for o in outcomes {
        body.push_str(&format!(
            "<section class=\"lab\" id=\"lab-{}\"><h2>{}</h2>\n<ul>",
            o.lab,
            esc(&o.title)
        ));
        for l in &o.setup {
            body.push_str(&format!("<li>{}</li>", esc(l)));
        }
        body.push_str("</ul>\n<table><thead><tr>");
        for h in &o.table.headers {
            body.push_str(&format!("<th>{}</th>", esc(h)));
        }
        body.push_str("</tr></thead><tbody>");
        for r in &o.table.rows {
            body.push_str("<tr>");
            for c in r {
                body.push_str(&format!("<td>{}</td>", esc(c)));
            }
            body.push_str("</tr>");
        }
        body.push_str(&format!(
            "</tbody></table>\n<p class=\"answer\">{}</p>\n",
            esc(&o.answer)
        ));
        for (_, c) in &o.charts {
            body.push_str(&format!("<figure>{}</figure>\n", c.svg()?));
        }
        for t in &o.text {
            body.push_str(&format!("<pre>{}</pre>\n", esc(t)));
        }
        if !o.runs.is_empty() {
            let ids: Vec<String> = o.runs.iter().map(|i| i.to_string()).collect();
            body.push_str(&format!(
                "<p>Stored runs: {} (<code>iolab report {}</code> for each in full).</p>\n",
                ids.join(", "),
                ids.join(" ")
            ));
        }
        body.push_str("</section>\n");
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>iolab labs</title>\n<style>{STYLE}</style>\n<script>{SCRIPT}</script>\n</head><body>\n<h1>iolab labs</h1>\n<p>{}</p>\n<nav id=\"toc\"></nav>\n{body}</body></html>\n",
        esc(note)
    ))
}
