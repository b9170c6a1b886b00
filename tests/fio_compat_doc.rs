//! docs/fio-compat.md lists exactly the options iolab accepts, with the
//! range of each numeric one; docs/limits.md gives the value of each limit
//! on input as the code has it.

use iolab::job::options::{all, lookup};
use std::collections::BTreeSet;

#[test]
fn doc_table_matches_option_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio-compat.md"))
        .unwrap();
    let mut in_doc = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`');
        let aliases: BTreeSet<&str> = cells[2]
            .split(',')
            .map(|a| a.trim().trim_matches('`'))
            .filter(|a| !a.is_empty())
            .collect();
        let def = lookup(name)
            .unwrap_or_else(|| panic!("doc lists '{name}' but iolab does not accept it"));
        assert_eq!(def.name, name, "doc must use the canonical name");
        assert_eq!(
            aliases,
            def.aliases.iter().copied().collect(),
            "aliases of {name}"
        );
        assert_eq!(
            cells[3] == "iolab",
            def.iolab_only,
            "origin column of {name}"
        );
        assert_eq!(
            cells[4],
            def.kind.range_text().unwrap_or_default(),
            "range column of {name}"
        );
        in_doc.insert(name.to_string());
    }
    let in_code: BTreeSet<String> = all().map(|o| o.name.to_string()).collect();
    assert_eq!(
        in_doc, in_code,
        "docs/fio-compat.md and crates/iolab-job/src/job/options.rs differ"
    );
}

/// A value of docs/limits.md: `64`, `1,024`, `16 MiB`.
fn doc_number(cell: &str) -> u64 {
    let (n, unit) = cell.split_once(' ').unwrap_or((cell, ""));
    let n: u64 = n
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("'{cell}'"));
    match unit {
        "" => n,
        "MiB" => n << 20,
        _ => panic!("unit of '{cell}'"),
    }
}

#[test]
fn limits_doc_matches_the_code() {
    use iolab::{job, plan};
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/limits.md")).unwrap();
    let code = [
        ("job::expr::MAX_NESTING", job::expr::MAX_NESTING as u64),
        (
            "job::ini::MAX_INCLUDE_DEPTH",
            job::ini::MAX_INCLUDE_DEPTH as u64,
        ),
        ("job::ini::MAX_INCLUDES", job::ini::MAX_INCLUDES as u64),
        ("job::ini::MAX_JOB_TEXT", job::ini::MAX_JOB_TEXT),
        ("job::MAX_JOBS", u64::from(job::MAX_JOBS)),
        ("job::MAX_JOBS_LIMIT", u64::from(job::MAX_JOBS_LIMIT)),
        ("job::MAX_FILES", job::MAX_FILES as u64),
        (
            "job::groups::files::MAX_JOB_FILES",
            job::groups::files::MAX_JOB_FILES,
        ),
        ("plan::unit::TABLE_BUDGET", plan::unit::TABLE_BUDGET),
        ("plan::shuffle::TABLE_MAX", plan::shuffle::TABLE_MAX),
    ];
    let rows: Vec<Vec<&str>> = (doc.lines())
        .filter(|l| l.starts_with("| ") && l.ends_with("` |"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), code.len(), "one row per limit");
    for (name, value) in code {
        let row = (rows.iter())
            .find(|r| r[5] == format!("`{name}`"))
            .unwrap_or_else(|| panic!("docs/limits.md has no row for {name}"));
        assert_eq!(doc_number(row[2]), value, "docs/limits.md: {name}");
    }
}
