//! `iolab worker`: what `iolab run --hosts` starts on each host, through
//! its launcher. It speaks JSON lines on stdin and stdout (see
//! docs/distributed.md) and is not meant to be run by hand.

use iolab::Result;

const AFTER_HELP: &str = "\
Started by `iolab run JOB --hosts h1,h2 [--launcher 'ssh {host}']` on each host:
it answers the coordinator's messages on stdin with JSON lines on stdout
(hello with its version, its clock, ready at the barrier, its results).

Example (one local worker, by hand):
  printf '{\"msg\":\"ping\"}\\n' | iolab worker";

/// Options of `iolab worker`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct WorkerArgs {}

/// Runs `iolab worker` on this process's stdin and stdout.
pub fn execute(_: WorkerArgs) -> Result<()> {
    let stop = super::stop_on_signals()?;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let input = std::io::BufReader::new(std::io::stdin());
    Ok(iolab::dist::worker::serve(
        input,
        std::io::stdout(),
        &host,
        &stop,
    )?)
}
