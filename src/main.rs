//! The `iolab` binary: parse the command line, call the library, render,
//! and turn the one error (if any) into the exit code.

mod cli;

fn main() {
    // Started as fio (a link named fio, `iolab fio ...`, `iolab --name=x`):
    // fio's command line is `iolab run`'s.
    let argv = cli::fio_front::as_run(std::env::args().collect());
    // `iolab run` and `iolab sweep` take fio's options, which clap does not
    // know: split them off before clap sees the command line.
    let (clap_argv, job_args) = cli::split_job_args(&argv);
    let parsed = cli::suggest::parse(&clap_argv);
    cli::progress::init(cli::progress::Ui {
        eta: parsed.eta,
        quiet: parsed.quiet,
    });
    cli::set_color(parsed.color);
    let json = parsed.command.wants_json();
    let code = match cli::dispatch(parsed.command, &job_args) {
        Ok(()) => iolab::error::code::OK,
        Err(e) => {
            cli::show_error(&e);
            if json {
                cli::show_error_json(&e, e.exit_code());
            }
            e.exit_code()
        }
    };
    std::process::exit(code);
}
