//! What can go wrong with many hosts (the `dist` module), each naming the
//! host; kept here with the run layer's error, which holds it.

/// An error of a run over several hosts.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// The command line asks for something that cannot be.
    #[error("{what}: {problem}")]
    Usage {
        /// The option or value.
        what: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The launcher could not start the worker.
    #[error("host {host}: cannot start `{command}`: {problem}")]
    Launch {
        /// The host.
        host: String,
        /// The command line that was started.
        command: String,
        /// Why it failed.
        problem: String,
    },
    /// The worker runs another version of iolab.
    #[error(
        "host {host} runs iolab {theirs}, this is iolab {ours}: install the same version on every host"
    )]
    Version {
        /// The host.
        host: String,
        /// The worker's version.
        theirs: String,
        /// The coordinator's version.
        ours: String,
    },
    /// The worker said something unexpected, or failed.
    #[error("host {host}: {problem}")]
    Worker {
        /// The host.
        host: String,
        /// What it said or did.
        problem: String,
    },
    /// The worker went away before it sent its results.
    #[error(
        "host {host} ended before sending its results ({problem}); the other hosts' results are kept, marked partial"
    )]
    Died {
        /// The host.
        host: String,
        /// How it ended.
        problem: String,
    },
}
