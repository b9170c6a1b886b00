//! A lab's outcome as text for the terminal, and labs as one HTML page
//! (in the shell of [`crate::render::html`]).

use super::Outcome;
use crate::render::chart::Footnote;
use crate::render::html::{esc, page, table};

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

/// One self-contained page with every lab's outcome and charts (footnoted
/// with `foot`), and the environment (`env`, HTML) they ran in.
pub fn html(outcomes: &[Outcome], note: &str, env: &str, foot: &Footnote) -> crate::Result<String> {
    let mut body = format!(
        "<section class=\"lab\" id=\"environment\"><h2>Environment</h2>\n{env}</section>\n"
    );
    for o in outcomes {
        body.push_str(&format!(
            "<section class=\"lab\" id=\"lab-{}\"><h2>{}</h2>\n<ul>",
            o.lab,
            esc(&o.title)
        ));
        for l in &o.setup {
            body.push_str(&format!("<li>{}</li>", esc(l)));
        }
        body.push_str("</ul>\n");
        body.push_str(&table(&o.table));
        body.push_str(&format!("<p class=\"answer\">{}</p>\n", esc(&o.answer)));
        for (_, c) in &o.charts {
            body.push_str(&format!("<figure>{}</figure>\n", c.svg(foot)?));
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
    Ok(page("iolab labs", note, "lab", &body))
}
