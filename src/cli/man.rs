//! `iolab man`: the manual page (roff, clap_mangen) of iolab and its
//! subcommands on stdout, or one page per subcommand in a directory.

use super::write_out;
use clap::CommandFactory;
use iolab::{Error, Result};
use std::path::{Path, PathBuf};

/// Options of `iolab man`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  iolab man | man -l -                  # read it now
  iolab man --dir ~/.local/share/man/man1   # iolab.1, iolab-run.1, iolab-tree-create.1, ...")]
pub struct ManArgs {
    /// Write one page per command and subcommand (iolab.1, iolab-run.1,
    /// ...) into DIR, made if absent, instead of one page on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `iolab man`.
pub fn execute(a: ManArgs) -> Result<()> {
    let mut root = super::Cli::command();
    root.build();
    match &a.dir {
        None => write_out(&page(&root)?, None),
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot make {}", dir.display()), e))?;
            write_pages(&root, dir)
        }
    }
}

/// The page of one (built) command, titled in capitals as man pages are.
fn page(cmd: &clap::Command) -> Result<String> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .render(&mut roff)
        .map_err(|e| Error::io(format!("cannot render the man page of {name}"), e))?;
    Ok(String::from_utf8_lossy(&roff).into_owned())
}

/// `cmd`'s page and those of its subcommands (not `help`), as NAME.1.
fn write_pages(cmd: &clap::Command, dir: &Path) -> Result<()> {
    for sub in cmd.get_subcommands() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            write_pages(sub, dir)?;
        }
    }
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    Ok(iolab::sys::fs::write_atomic(
        &dir.join(format!("{name}.1")),
        page(cmd)?.as_bytes(),
    )?)
}
