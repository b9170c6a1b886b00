//! docs/fio-compat.md lists exactly the options iolab accepts, with the
//! range of each numeric one.

use iolab::job::options::{OPTIONS, lookup};
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
    let in_code: BTreeSet<String> = OPTIONS.iter().map(|o| o.name.to_string()).collect();
    assert_eq!(
        in_doc, in_code,
        "docs/fio-compat.md and src/job/options.rs differ"
    );
}
