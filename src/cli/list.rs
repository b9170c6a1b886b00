//! `iolab list`: what iolab has, from its registries: the engines, the
//! output formats, the labs, the counter sources and the disk layers, each with what it
//! needs and one line of help.

use iolab::Result;
use iolab::registry::Entry;
use iolab::render::table::Table;

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// I/O engines (`ioengine=`).
    Engines,
    /// Output formats (`--output-format`, `--format`).
    Formats,
    /// Labs (`iolab lab NAME`).
    Labs,
    /// What the kernel counts beside each run (`iolab.counters` in JSON).
    Counters,
    /// Layers of injected disks (`iolab disk up --layer NAME`).
    Injectors,
    /// Ways of recording a program (`iolab trace --tracer NAME`).
    Tracers,
}

/// Options of `iolab list`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  iolab list\n  iolab list engines\n  iolab list formats")]
pub struct ListArgs {
    /// Only this kind (default: all).
    #[arg(value_enum)]
    pub what: Option<What>,
}

/// The rows of a registry: name, aliases, needs, help.
fn rows<T: ?Sized>(list: &[Entry<T>]) -> Vec<Vec<String>> {
    list.iter()
        .map(|e| {
            vec![
                e.name.to_string(),
                e.aliases.join(", "),
                e.needs.to_string(),
                e.help.to_string(),
            ]
        })
        .collect()
}

/// One titled table.
fn section(title: &str, rows: Vec<Vec<String>>) -> String {
    let mut t = Table::new(["name", "aliases", "needs", "what it is"]);
    rows.into_iter().for_each(|r| t.push(r));
    format!("{title}\n\n{}", t.text())
}

/// Runs `iolab list`.
pub fn execute(a: ListArgs) -> Result<()> {
    let want = |w: What| a.what.is_none_or(|x| x == w);
    let mut out = Vec::new();
    if want(What::Engines) {
        out.push(section(
            "Engines (ioengine=NAME)",
            rows(iolab::engine::ENGINES),
        ));
    }
    if want(What::Formats) {
        out.push(section(
            "Output formats (--output-format=NAME)",
            rows(iolab::render::FORMATS),
        ));
    }
    if want(What::Labs) {
        out.push(section("Labs (iolab lab NAME)", rows(iolab::lab::LABS)));
    }
    if want(What::Counters) {
        let mut all = rows(iolab::counters::BUILT_IN);
        all.extend(rows(iolab::counters::COUNTERS));
        out.push(section("Counters (iolab.counters in JSON)", all));
    }
    if want(What::Injectors) {
        out.push(section(
            "Injectors (iolab disk up --layer NAME)",
            rows(iolab::disk::INJECTORS),
        ));
    }
    if want(What::Tracers) {
        out.push(section(
            "Tracers (iolab trace --tracer NAME)",
            rows(iolab::trace::TRACERS),
        ));
    }
    super::write_out(&out.join("\n"), None)
}
