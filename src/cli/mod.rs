//! The command line: clap definitions, one file per subcommand. The only
//! place that prints.

pub mod run;

use clap::{Parser, Subcommand};

/// iolab: a laboratory for I/O effects.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run fio-compatible jobs (job files and/or --name=... options), every op timed.
    Run(run::RunArgs),
}

/// Prints a one-line error and returns the exit code for bad input.
pub fn fail(msg: impl std::fmt::Display, code: i32) -> i32 {
    eprintln!("iolab: error: {msg}");
    code
}
