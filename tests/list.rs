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
        ("Injectors", names(iolab::disk::INJECTORS)),
        ("Tracers", names(iolab::trace::TRACERS)),
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
    // clap wraps the text: compare with the lines joined.
    let unwrapped = run_help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        unwrapped.contains(&engines),
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

/// Every command takes every format of the registry: it shows its result
/// in it, or refuses it (exit 2, before doing the work) naming the
/// formats that have a form for that result.
#[test]
fn every_command_takes_every_format() {
    let (d, f) = scratch_file();
    let db = d.path().join("f.db");
    let job = format!("--name=j --filename={} --size=64k", s(&f));
    let job_args: Vec<&str> = job.split(' ').collect();
    succeed(with_db(&db).args(["run"]).args(&job_args));
    succeed(with_db(&db).args(["run"]).args(&job_args));
    let top = d.path().join("t");
    std::fs::create_dir(&top).unwrap();
    std::fs::write(top.join("a"), "x").unwrap();
    for e in iolab::render::FORMATS {
        let f = e.name;
        let out = |args: &[&str]| with_db(&db).args(args).output().unwrap();
        // A run shows in every format.
        let run = out(&[&["run", "--no-store", "--output-format", f][..], &job_args].concat());
        assert!(run.status.success(), "run -o {f}");
        assert!(!run.stdout.is_empty(), "run -o {f}");
        for (args, what) in [
            (
                vec!["tree", "walk", s(&top), "--no-store", "-o", f],
                "a tree result",
            ),
            (
                vec!["compare", "1", "2", "--no-store", "--format", f],
                "a comparison",
            ),
            (vec!["export", "1", "2", "--format", f], "several runs"),
            (vec!["show", "1", "--output-format", f], "a run result"),
        ] {
            let o = out(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            match o.status.code() {
                Some(0) => assert!(!o.stdout.is_empty(), "{args:?}"),
                Some(2) => {
                    assert!(
                        err.contains(&format!("has no form for {what}; it comes as normal, json")),
                        "{args:?}: {err}"
                    );
                    // Refused before the work: a tree walk leaves no run.
                    assert!(o.stdout.is_empty(), "{args:?}");
                }
                c => panic!("{args:?} exited {c:?}: {err}"),
            }
        }
    }
    // The forms each format has, as `iolab list formats` promises them.
    let walk =
        |f: &str| stdout_json(with_db(&db).args(["tree", "walk", s(&top), "--no-store", "-o", f]));
    let (plain, plus) = (walk("json"), walk("json+"));
    let readdir = |v: &serde_json::Value| v["phases"][0]["latency_ns"]["readdir"].clone();
    assert!(readdir(&plain).get("histogram").is_none(), "{plain}");
    assert!(readdir(&plus)["histogram"]["buckets"].is_array(), "{plus}");
    let csv =
        stdout_text(with_db(&db).args(["compare", "1", "2", "--no-store", "--format", "csv"]));
    assert!(csv.starts_with("metric,A: run 1"), "{csv}");
}

#[test]
fn unknown_lab_lists_the_labs() {
    let labs = names(iolab::lab::LABS).join(", ");
    fails_with(
        bin().args(["lab", "nosuchlab", "--quick"]),
        2,
        &format!("unknown lab 'nosuchlab'; iolab has: {labs}"),
    );
}
