//! `iolab list` and the help come from the registries: every engine,
//! output format, lab and counter source is listed with what it needs.

mod common;
use common::*;
use iolab::registry::Entry;

fn names<T: ?Sized>(list: &[Entry<T>]) -> Vec<&'static str> {
    list.iter().map(|e| e.name).collect()
}

#[test]
fn list_shows_every_registry_entry() {
    let all = stdout_text(bin().arg("list"));
    let engines = stdout_text(bin().args(["list", "engines"]));
    let registries = [
        ("Engines", names(iolab::engine::ENGINES)),
        ("Output formats", names(iolab::render::FORMATS)),
        ("Labs", names(iolab::lab::LABS)),
        ("Counters", names(iolab::counters::COUNTERS)),
    ];
    for (title, list) in &registries {
        assert!(all.contains(title), "{title}");
        for name in list {
            let row = all
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name));
            assert!(row, "{title}: no row for {name}:\n{all}");
        }
    }
    assert!(
        engines.starts_with("Engines") && !engines.contains("Labs"),
        "{engines}"
    );
    // What an entry needs is shown beside it.
    assert!(
        table_row(&engines, "libaio").contains("aio, linuxaio"),
        "{engines}"
    );
    assert!(
        table_row(&engines, "pvsync2").contains("Linux 4.6+"),
        "{engines}"
    );
}

#[test]
fn help_and_lab_list_come_from_the_registries() {
    let run_help = stdout_text(bin().args(["run", "--help"]));
    for f in names(iolab::render::FORMATS) {
        assert!(run_help.contains(f), "run --help lacks format {f}");
    }
    let engines = names(iolab::engine::ENGINES).join(", ");
    assert!(
        run_help.contains(&engines),
        "run --help lists the engines: {run_help}"
    );
    let labs = stdout_text(bin().args(["lab", "list"]));
    for e in iolab::lab::LABS {
        assert!(table_row(&labs, e.name).contains(e.help), "{labs}");
        // clap wraps the text: compare word by word.
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let help = words(&stdout_text(bin().args(["lab", e.name, "--help"])));
        let details = words(e.item.details());
        assert!(help.contains(&details), "lab {} --help: {help}", e.name);
    }
}
