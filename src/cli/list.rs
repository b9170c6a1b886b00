//! `iolab list`: what iolab has, from its registries: the engines, the
//! output formats, the labs and the counter sources, each with what it
//! needs and one line of help.

use iolab::Result;
use iolab::registry::Entry;

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum What {
    /// I/O engines (`ioengine=`).
    Engines,
    /// Labs (`iolab lab NAME`).
    Labs,
}

/// Options of `iolab list`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  iolab list\n  iolab list engines")]
pub struct ListArgs {
    /// Only this kind (default: all).
    #[arg(value_enum)]
    pub what: Option<What>,
}

/// One table of a registry.
fn section<T: ?Sized>(title: &str, list: &[Entry<T>]) -> String {
    let mut t = iolab::render::table::Table::new(["name", "aliases", "needs", "what it is"]);
    for e in list {
        t.push(vec![
            e.name.to_string(),
            e.aliases.join(", "),
            e.needs.to_string(),
            e.help.to_string(),
        ]);
    }
    format!("{title}\n\n{}", t.text())
}

/// Runs `iolab list`.
pub fn execute(a: ListArgs) -> Result<()> {
    let want = |w: What| a.what.is_none_or(|x| x == w);
    let mut out = Vec::new();
    if want(What::Labs) {
        out.push(section("Labs (iolab lab NAME)", iolab::lab::LABS));
    }
    super::write_out(&(out.join("\n") + ""), None)
}
