//! The `iolab` binary: parse the command line, call the library, render, exit.

mod cli;

use clap::Parser;
use cli::{Cli, Command};

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    // `iolab run` and `iolab sweep` take fio's options, which clap does not
    // know: split them off before clap sees the command line.
    let (clap_argv, job_args) = match argv.iter().position(|a| a == "run" || a == "sweep") {
        Some(i) if argv[1..i].iter().all(|a| a.starts_with('-')) => {
            let (valued, flags) = if argv[i] == "run" {
                (cli::run::OWN_VALUED, cli::run::OWN_FLAGS)
            } else {
                (cli::sweep::OWN_VALUED, cli::sweep::OWN_FLAGS)
            };
            let (own, job) = cli::run::split_args(&argv[i + 1..], valued, flags);
            let mut v = argv[..=i].to_vec();
            v.extend(own);
            (v, job)
        }
        _ => (argv.clone(), Vec::new()),
    };
    let cli = Cli::parse_from(clap_argv);
    let code = match cli.command {
        Command::Run(args) => cli::run::execute(args, &job_args),
        Command::Lab(a) => cli::lab::execute(a),
        Command::Sweep(a) => cli::sweep::execute(a, &job_args),
        Command::Compare(a) => cli::compare::execute(a),
        Command::Tree(a) => cli::tree::execute(a),
        Command::Cache(a) => cli::cache::execute(a),
        Command::History(a) => cli::history::history(a),
        Command::Show(a) => cli::show::show(a),
        Command::Export(a) => cli::show::export(a),
        Command::Import(a) => cli::import::import(a),
        Command::Plot(a) => cli::plot::execute(a),
        Command::Report(a) => cli::report::execute(a),
        Command::Rm(a) => cli::history::rm(a),
    };
    std::process::exit(code);
}
