//! `iolab completions SHELL`: the shell's completion script on stdout
//! (clap_complete), for iolab's own subcommands and options. The fio job
//! options of `run` and `sweep` are not clap's, so they are not completed.

use super::write_out;
use clap::CommandFactory;
use iolab::Result;

/// Options of `iolab completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  source <(iolab completions bash)                    # this shell only
  iolab completions bash > ~/.local/share/bash-completion/completions/iolab
  iolab completions zsh > ~/.zfunc/_iolab             # with fpath+=(~/.zfunc)
  iolab completions fish > ~/.config/fish/completions/iolab.fish")]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Runs `iolab completions`.
pub fn execute(a: CompletionsArgs) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut super::Cli::command(), "iolab", &mut script);
    write_out(&String::from_utf8_lossy(&script), None)
}
