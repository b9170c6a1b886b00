//! The one HTML page shell every report uses: inline style, a few lines of
//! script that build the table of contents from the sections' headings,
//! nothing fetched. `iolab report` and `iolab lab all` fill it.

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{margin-bottom:.2em}h2{border-bottom:2px solid #1f77b4;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0;font-size:90%}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f0f4f8}td:first-child,th:first-child{text-align:left}pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:85%}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{color:#555;font-size:90%}
.label{background:#e8f0fe;border-radius:4px;padding:0 .4em;font-size:80%}.meta{color:#555}
.answer{font-size:110%;background:#eef6ee;padding:.6em;border-left:4px solid #2ca02c}
nav ul{columns:2}.env td{text-align:left}code{font-size:90%}";

/// Builds the table of contents from `section.KIND h2` once the page is loaded.
const SCRIPT: &str = "document.addEventListener('DOMContentLoaded',function(){
var nav=document.getElementById('toc');var list=document.createElement('ul');
document.querySelectorAll('section.KIND h2').forEach(function(h){
var li=document.createElement('li');var a=document.createElement('a');
a.href='#'+h.parentElement.id;a.textContent=h.textContent;li.appendChild(a);list.appendChild(li);});
nav.appendChild(list);document.body.setAttribute('data-ready','1');});";

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A whole page: `title` (also the heading), one line of `intro` (text,
/// escaped here), a table of contents of the `<section class="KIND">`
/// headings, and `body` (HTML).
pub fn page(title: &str, intro: &str, kind: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n<style>{STYLE}</style>\n<script>{script}</script>\n</head><body>\n<h1>{h}</h1>\n<p class=\"meta\">{i}</p>\n<nav id=\"toc\"></nav>\n{body}</body></html>\n",
        t = esc(title),
        h = esc(title.split(':').next().unwrap_or(title)),
        i = esc(intro),
        script = SCRIPT.replace("KIND", kind),
    )
}

/// A table of strings as HTML.
pub fn table(t: &super::table::Table) -> String {
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
