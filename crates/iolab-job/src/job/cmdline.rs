//! fio's command-line form: `--key=value`, `--key value`, `--flag`; options
//! before the first `--name` are global defaults, each `--name` starts a job;
//! arguments that do not start with `--` are job files.

use super::error::{JobError, JobProblem};
use super::ini::{Entry, Origin, Section};
use super::options::{self, Kind};
use std::path::PathBuf;

/// The job part of a command line, split up.
#[derive(Debug, Default)]
pub struct CommandLine {
    /// Options before the first `--name`: defaults for every job.
    pub globals: Vec<Entry>,
    /// Jobs started by `--name`.
    pub jobs: Vec<Section>,
    /// Job files named on the command line.
    pub files: Vec<PathBuf>,
    /// Only the job sections (and `--name` jobs) of these names run, as
    /// fio's `--section`; `[global]` sections still apply. Empty: all.
    pub sections: Vec<String>,
}

impl CommandLine {
    /// True when the job section `name` is to run (fio's `skip_this_section`).
    pub fn runs_section(&self, name: &str) -> bool {
        self.sections.is_empty() || self.sections.iter().any(|s| s == name)
    }
}

/// Splits `args` (the arguments that are not iolab's own flags).
pub fn parse(args: &[String]) -> Result<CommandLine, JobError> {
    let mut cl = CommandLine::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let origin = Origin::CommandLine(i + 1);
        // fio parses with getopt_long_only: `-rw=randread` is `--rw=randread`.
        let single = arg.strip_prefix('-').filter(|o| {
            let k = key_of(o);
            !o.starts_with('-')
                && (options::lookup(&k)
                    .or_else(|| options::by_prefix(&k))
                    .is_some()
                    || options::is_fio_option(&k))
        });
        let Some(opt) = arg.strip_prefix("--").or(single) else {
            if arg.starts_with('-') && arg.len() > 1 {
                return Err(JobError::syntax(
                    Some(&origin),
                    format!(
                        "unknown flag '{arg}': job options are written --key=value (e.g. --rw=randread)"
                    ),
                ));
            }
            cl.files.push(PathBuf::from(arg));
            i += 1;
            continue;
        };
        let mut key = key_of(opt);
        let mut value = opt.split_once('=').map(|(_, v)| v.to_string());
        let def = match options::lookup(&key) {
            Some(d) => d,
            // getopt_long: an unambiguous prefix stands for the option.
            None => match options::by_prefix(&key) {
                Some(d) if !options::is_fio_option(&key) => {
                    key = d.name.to_string();
                    d
                }
                _ => return Err(JobError::at(&origin, &key, options::unknown(&key))),
            },
        };
        // A log prefix takes its value only with '=' (fio's optional
        // argument): `--write_bw_log job.fio` is a flag and a job file.
        if value.is_none() && !matches!(def.kind, Kind::Bool | Kind::StrOrFlag) {
            match args.get(i + 1) {
                Some(next) if !next.starts_with('-') => {
                    value = Some(next.clone());
                    i += 1;
                }
                _ => return Err(JobError::at(&origin, &key, JobProblem::NeedsValue)),
            }
        }
        let entry = Entry {
            key: key.clone(),
            value: value.clone(),
            origin: origin.clone(),
        };
        if def.name == "name" {
            cl.jobs.push(Section {
                name: value.unwrap_or_default(),
                entries: vec![entry],
                origin,
            });
        } else if let Some(job) = cl.jobs.last_mut() {
            job.entries.push(entry);
        } else {
            cl.globals.push(entry);
        }
        i += 1;
    }
    Ok(cl)
}

/// The option name of `key=value` or `key`, lower-cased as fio compares.
fn key_of(opt: &str) -> String {
    opt.split_once('=')
        .map_or(opt, |(k, _)| k)
        .to_ascii_lowercase()
}
