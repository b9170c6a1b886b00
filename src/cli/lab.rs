//! `iolab lab`: the seeds' experiments, one command each. The subcommands
//! come from the lab registry ([`iolab::lab::LABS`]): a new lab needs no
//! change here.

use super::{db, progress::Shown, write_out};
use clap::{ArgMatches, Args, FromArgMatches};
use iolab::lab::session::{LabOptions, Session};
use iolab::lab::{self, LABS};
use iolab::{Error, Result, job::units};
use std::path::PathBuf;

/// Options every lab takes.
#[derive(Debug, Clone, clap::Args)]
pub struct LabOpts {
    /// Small sizes and fewer steps: done in about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Where the scratch directory goes (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the scratch directory and its files afterwards.
    #[arg(long)]
    pub keep: bool,
    /// Main file size (4k, 256M, 1G), instead of the lab's own choice.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Operations per run, instead of the lab's own choice.
    #[arg(long, value_name = "N")]
    pub ops: Option<u64>,
    /// Where the plots (and the report of `lab all`) go
    /// (default: ./iolab-labs/DATE-TIME-LAB/).
    #[arg(short = 'o', long = "output", alias = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not store the runs.
    #[arg(long)]
    pub no_store: bool,
    /// log-scan: also on an injected slow disk (iolab disk, needs root),
    /// one per delay: `--delay 1ms,10ms`.
    #[arg(long, value_name = "TIMES", value_delimiter = ',')]
    pub delay: Vec<String>,
    /// prefetch: also run the bare loop the lab imitates (plain pread and
    /// fadvise calls over the same offsets, nothing recorded) in the same
    /// rounds, and set its speed-up beside iolab's.
    #[arg(long)]
    pub reference: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// `iolab lab ...`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab lab list\n  iolab lab prefetch\n  iolab lab small-reads --quick\n  iolab lab all --quick -o lab-results"
)]
pub struct LabArgs {
    /// Which lab.
    #[command(subcommand)]
    pub which: Which,
}

/// `list`, `all`, or one lab of the registry by name.
#[derive(Debug)]
pub enum Which {
    /// Describe each lab in one line.
    List,
    /// Run every lab and write one HTML report.
    All(LabOpts),
    /// One lab, by its registry name.
    One(String, LabOpts),
    /// A name the registry does not have (refused with the list of labs).
    Unknown(String),
}

impl clap::Subcommand for Which {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        // Unknown names reach `execute`, which refuses them with the
        // registry's message ("unknown lab 'x'; iolab has: ...").
        let cmd = cmd
            .allow_external_subcommands(true)
            .subcommand(clap::Command::new("list").about("Describe each lab in one line"))
            .subcommand(
                LabOpts::augment_args(clap::Command::new("all"))
                    .about("Run every lab and write one HTML report"),
            );
        LABS.iter().fold(cmd, |cmd, e| {
            cmd.subcommand(
                LabOpts::augment_args(clap::Command::new(e.name))
                    .aliases(e.aliases)
                    .about(e.help)
                    .long_about(e.item.details()),
            )
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        name == "list" || name == "all" || lab::find(name).is_ok()
    }
}

impl FromArgMatches for Which {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        match m.subcommand() {
            Some(("list", _)) => Ok(Which::List),
            Some(("all", sub)) => Ok(Which::All(LabOpts::from_arg_matches(sub)?)),
            Some((name, sub)) => match lab::find(name) {
                Ok(e) => Ok(Which::One(
                    e.name.to_string(),
                    LabOpts::from_arg_matches(sub)?,
                )),
                Err(_) => Ok(Which::Unknown(name.to_string())),
            },
            None => Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand)),
        }
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Runs `iolab lab`.
pub fn execute(a: LabArgs) -> Result<()> {
    let (labs, o, name) = match a.which {
        Which::List => {
            let mut text: String = LABS
                .iter()
                .map(|e| format!("{:<13} {}\n", e.name, e.help))
                .collect();
            text.push_str(
                "\n`iolab lab NAME --help` tells what a lab does; `iolab lab all --quick` runs them all.\n",
            );
            return write_out(&text, None);
        }
        Which::All(o) => (LABS.iter().collect(), o, "all".to_string()),
        Which::One(name, o) => (vec![lab::find(&name)?], o, name),
        Which::Unknown(name) => return lab::find(&name).map(drop),
    };
    let size = o
        .size
        .as_deref()
        .map(|s| {
            units::parse_size(s).map_err(|e| Error::usage(format!("--size '{s}'"), e.to_string()))
        })
        .transpose()?;
    for d in &o.delay {
        iolab::disk::rules::parse("delay", d).map_err(iolab::disk::DiskError::from)?;
    }
    if let [one] = labs.as_slice()
        && !o.delay.is_empty()
        && !one.item.takes_delays()
    {
        return Err(Error::usage(
            format!("--delay {}", o.delay.join(",")),
            format!("lab {} does not inject latency (log-scan does)", one.name),
        ));
    }
    if let [one] = labs.as_slice()
        && o.reference
        && !one.item.takes_reference()
    {
        return Err(Error::usage(
            "--reference",
            format!("lab {} has no reference loop (prefetch has)", one.name),
        ));
    }
    let mut store = db::open_unless(o.no_store, o.db.db.as_deref())?;
    let stop = super::stop_on_signals()?;
    let opts = LabOptions {
        quick: o.quick,
        dir: o.dir,
        keep: o.keep,
        size,
        ops: o.ops,
        out: o.out,
        delays: o.delay,
        reference: o.reference,
    };
    let mut session = Session::new(opts, &name, store.as_mut(), &stop)?;
    let mut outcomes = Vec::new();
    let mut shown = Shown::new();
    for entry in &labs {
        let done = session.run(entry, &mut shown)?;
        let mut text = format!("{}\n", iolab::lab::page::text(&done.outcome));
        for line in &done.saved {
            text.push_str(&format!("{line}\n"));
        }
        text.push('\n');
        write_out(&text, None)?;
        outcomes.push(done.outcome);
    }
    if labs.len() > 1 {
        let path = session.report(&outcomes)?;
        write_out(&format!("report of all labs: {}\n", path.display()), None)?;
    }
    Ok(())
}
