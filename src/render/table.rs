//! A table of strings shown as aligned text, Markdown or CSV: the one shape
//! `history`, `sweep`, `compare` and `export` print.

/// Rows under headings. Cells that look like numbers are right-aligned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column headings.
    pub headers: Vec<String>,
    /// Rows, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headings.
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        w
    }

    fn numeric_col(&self, i: usize) -> bool {
        self.rows.iter().any(|r| !r[i].is_empty())
            && self
                .rows
                .iter()
                .all(|r| r[i].is_empty() || looks_numeric(&r[i]))
    }

    /// Aligned text. Control characters in cells (a newline in a file
    /// name) are shown escaped (`\n`), so a row stays one line.
    pub fn text(&self) -> String {
        if self.has_control() {
            return self.escaped().text();
        }
        let w = self.widths();
        let num: Vec<bool> = (0..w.len()).map(|i| self.numeric_col(i)).collect();
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w[i] - c.chars().count();
                if num[i] {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    if i + 1 < cells.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        let rule: Vec<String> = w.iter().map(|n| "-".repeat(*n)).collect();
        out.push_str(&line(&rule));
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// Aligned text with its heading line painted bold (when `paint` is
    /// on): the terminal's form.
    pub fn text_painted(&self, paint: super::style::Paint) -> String {
        let text = self.text();
        match text.split_once('\n') {
            Some((head, rest)) => format!("{}\n{rest}", paint.bold(head)),
            None => text,
        }
    }

    /// True when a cell holds a control character.
    fn has_control(&self) -> bool {
        self.rows
            .iter()
            .flatten()
            .any(|c| c.chars().any(char::is_control))
    }

    /// The same table with control characters in cells escaped (`\n`).
    fn escaped(&self) -> Table {
        let esc = |c: &String| -> String {
            c.chars()
                .flat_map(|ch| {
                    let e: Vec<char> = if ch.is_control() {
                        ch.escape_debug().collect()
                    } else {
                        vec![ch]
                    };
                    e
                })
                .collect()
        };
        Table {
            headers: self.headers.clone(),
            rows: self
                .rows
                .iter()
                .map(|r| r.iter().map(esc).collect())
                .collect(),
        }
    }

    /// GitHub Markdown (cells escaped like [`Table::text`]).
    pub fn markdown(&self) -> String {
        if self.has_control() {
            return self.escaped().markdown();
        }
        let esc = |c: &str| c.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out.push('|');
        for i in 0..self.headers.len() {
            out.push_str(if self.numeric_col(i) {
                " ---: |"
            } else {
                " --- |"
            });
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }

    /// CSV (RFC 4180 quoting).
    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.headers).expect("write to memory");
        for r in &self.rows {
            w.write_record(r).expect("write to memory");
        }
        String::from_utf8(w.into_inner().expect("flush to memory")).expect("utf-8 cells")
    }

    /// JSON array of objects; numeric cells become numbers.
    pub fn json(&self) -> String {
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut o = serde_json::Map::new();
                for (h, c) in self.headers.iter().zip(r) {
                    let v = c
                        .parse::<f64>()
                        .ok()
                        .filter(|x| x.is_finite())
                        .and_then(serde_json::Number::from_f64)
                        .map_or_else(|| serde_json::Value::String(c.clone()), Into::into);
                    o.insert(h.clone(), v);
                }
                serde_json::Value::Object(o)
            })
            .collect();
        serde_json::to_string_pretty(&rows).expect("serialise") + "\n"
    }
}

fn looks_numeric(s: &str) -> bool {
    let t = s.trim_start_matches(['+', '-']).trim_end_matches('%');
    !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// A figure with as many decimals as its size needs: 123456, 12.3, 1.23, 0.0123.
pub fn fig(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".into()
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Table {
        let mut t = Table::new(["job", "IOPS"]);
        t.push(vec!["a,b".into(), "1200".into()]);
        t.push(vec!["c".into(), "7.5".into()]);
        t
    }

    #[test]
    fn text_aligns_numbers_right() {
        assert_eq!(t().text(), "job  IOPS\n---  ----\na,b  1200\nc     7.5\n");
    }

    #[test]
    fn markdown_and_csv() {
        assert_eq!(
            t().markdown(),
            "| job | IOPS |\n| --- | ---: |\n| a,b | 1200 |\n| c | 7.5 |\n"
        );
        assert_eq!(t().csv(), "job,IOPS\n\"a,b\",1200\nc,7.5\n");
        let j: serde_json::Value = serde_json::from_str(&t().json()).unwrap();
        assert_eq!(j[0]["IOPS"], 1200.0);
        assert_eq!(j[0]["job"], "a,b");
    }

    #[test]
    fn the_terminal_heading_is_bold_when_painted() {
        use crate::render::style::Paint;
        assert_eq!(t().text_painted(Paint { on: false }), t().text());
        let on = t().text_painted(Paint { on: true });
        assert!(on.starts_with("\x1b[1mjob  IOPS\x1b[0m\n---"), "{on:?}");
    }

    #[test]
    fn a_newline_in_a_cell_is_shown_escaped_and_the_row_stays_one_line() {
        let mut t = Table::new(["file", "ops"]);
        t.push(vec!["/d/a\nb \"q\"".into(), "3".into()]);
        assert_eq!(
            t.text(),
            "file         ops\n-----------  ---\n/d/a\\nb \"q\"    3\n"
        );
        assert_eq!(t.markdown().lines().count(), 3);
        assert!(
            t.csv().contains("\"/d/a\nb \"\"q\"\"\""),
            "CSV keeps the name as it is"
        );
    }

    #[test]
    fn figures() {
        assert_eq!(fig(123456.7), "123457");
        assert_eq!(fig(12.34), "12.3");
        assert_eq!(fig(1.234), "1.23");
        assert_eq!(fig(0.01234), "0.012");
    }
}
