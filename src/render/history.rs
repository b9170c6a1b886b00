//! `iolab history`'s table for the terminal: one line per run with what
//! it was (rw, bs, engine, depth) and its key figures, laid out by
//! comfy-table to fit a width (100 columns unless the terminal says
//! otherwise); long labels and job names wrap inside their cells.

use super::records::{Cell, Records};
use super::style::Paint;
use super::table::fig;
use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Width};
use comfy_table::{ContentLineStyle, LineStyle, TableStyle};

/// A heading line of dashes under the header, no other rules; columns
/// apart by one space plus their padding.
const STYLE: TableStyle = TableStyle::new()
    .header_lines(ContentLineStyle::none().junction(' '))
    .content_lines(ContentLineStyle::none().junction(' '))
    .header_separator(LineStyle::none().fill('-').junction(' '));

/// The columns shown: heading, record column, right-aligned.
const SHOWN: &[(&str, &str, bool)] = &[
    ("id", "id", true),
    ("when", "created_unix", false),
    ("label", "label", false),
    ("job", "job", false),
    ("rw", "rw", false),
    ("bs", "bs_bytes", true),
    ("engine", "engine", false),
    ("depth", "iodepth", true),
    ("IOPS", "iops", true),
    ("MiB/s", "bw_bytes_per_s", true),
    ("p99 us", "clat_p99_ns", true),
    ("status", "status", false),
];

/// A block size the short way fio writes it: 4k, 1m, 512.
pub fn short_size(b: i64) -> String {
    for (unit, n) in [("g", 1i64 << 30), ("m", 1 << 20), ("k", 1 << 10)] {
        if b >= n && b % n == 0 {
            return format!("{}{unit}", b / n);
        }
    }
    b.to_string()
}

/// A cell as the table shows it.
fn shown(column: &str, c: &Cell, when: &dyn Fn(i64) -> String) -> String {
    match (column, c) {
        (_, Cell::Null) => String::new(),
        ("created_unix", Cell::Int(t)) => when(*t),
        ("bs_bytes", Cell::Int(b)) => short_size(*b),
        ("bs_bytes", Cell::Text(t)) => t
            .split(',')
            .map(|one| {
                one.split('-')
                    .map(|b| b.parse().map_or(b.to_string(), short_size))
                    .collect::<Vec<_>>()
                    .join("-")
            })
            .collect::<Vec<_>>()
            .join(","),
        ("bw_bytes_per_s", Cell::Real(x)) => fig(x / 1_048_576.0),
        ("clat_p99_ns", Cell::Int(ns)) => fig(*ns as f64 / 1000.0),
        (_, Cell::Real(x)) => fig(*x),
        (_, c) => c.csv(),
    }
}

/// The table of `r` within `width` columns; `when` writes a time.
pub fn table(r: &Records, when: &dyn Fn(i64) -> String, width: u16, paint: Paint) -> String {
    let at = |name: &str| r.columns.iter().position(|c| c == name);
    let mut t = comfy_table::Table::new();
    t.load_style(STYLE)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(SHOWN.iter().map(|(h, _, _)| paint.bold(h)));
    for row in &r.rows {
        t.add_row(SHOWN.iter().map(|(_, col, _)| {
            let text = at(col).map_or(String::new(), |i| shown(col, &row[i], when));
            match *col {
                "status" if text == "interrupted" => paint.yellow(&text),
                "label" => paint.cyan(&text),
                _ => text,
            }
        }));
    }
    for (i, (_, col, right)) in SHOWN.iter().enumerate() {
        let c = t.column_mut(i).expect("a column per heading");
        c.set_padding((0, 0));
        c.set_constraint(if matches!(*col, "label" | "job") {
            ColumnConstraint::LowerBoundary(Width::Fixed(8))
        } else {
            ColumnConstraint::ContentWidth
        });
        if *right {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out: String = t.lines().map(|l| l.trim_end().to_string() + "\n").collect();
    if r.rows.is_empty() {
        out.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_the_short_way() {
        assert_eq!(short_size(4096), "4k");
        assert_eq!(short_size(1 << 20), "1m");
        assert_eq!(short_size(3 << 30), "3g");
        assert_eq!(short_size(512), "512");
        assert_eq!(short_size(6144), "6k");
        assert_eq!(short_size(1000), "1000");
    }
}
