//! "Did you mean" for iolab's own command line. clap's suggestions are
//! turned off (Cargo.toml): they offer hidden old spellings and names
//! that share little with what was typed. Here a mistyped option,
//! subcommand or value gets a suggestion only when one of the names the
//! help shows is similar enough ([`iolab::registry::closest`]).

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Parses the command line as [`super::Cli`]; on an error, prints it with
/// a suggestion where one is close enough, and exits (2; 0 for `--help`).
pub fn parse(argv: &[String]) -> super::Cli {
    use clap::FromArgMatches;
    let mut root = super::Cli::command();
    root.build();
    let parsed = root
        .clone()
        .try_get_matches_from(argv)
        .and_then(|m| super::Cli::from_arg_matches(&m));
    match parsed {
        Ok(cli) => cli,
        Err(e) => with_suggestion(e, command_at(&root, argv)).exit(),
    }
}

/// The (sub)command `argv` reached: each argument naming a subcommand of
/// the one before goes one level down.
fn command_at<'a>(root: &'a clap::Command, argv: &[String]) -> &'a clap::Command {
    let mut cmd = root;
    for a in argv.iter().skip(1).take_while(|a| *a != "--") {
        if let Some(sub) = cmd.find_subcommand(a) {
            cmd = sub;
        }
    }
    cmd
}

/// The long options `cmd`'s help shows (global ones included), without
/// their dashes.
fn visible_longs(cmd: &clap::Command) -> Vec<&str> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| a.get_long())
        .collect()
}

/// `e` with a "tip: a similar ... exists" when something the user may have
/// meant is similar enough, and without the tip otherwise.
fn with_suggestion(e: clap::Error, cmd: &clap::Command) -> clap::Error {
    let typed = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    if let Some(misplaced) = before_its_subcommand(&e, cmd) {
        return misplaced;
    }
    let suggestion = match e.kind() {
        ErrorKind::UnknownArgument => typed(ContextKind::InvalidArg).and_then(|t| {
            // Compared without the dashes, which every name shares.
            let t = t.strip_prefix("--")?;
            let t = t.split_once('=').map_or(t, |(k, _)| k);
            let names = visible_longs(cmd);
            iolab::registry::closest(t, names).map(|n| {
                (
                    ContextKind::SuggestedArg,
                    ContextValue::String(format!("--{n}")),
                )
            })
        }),
        ErrorKind::InvalidSubcommand => typed(ContextKind::InvalidSubcommand).and_then(|t| {
            let names = cmd.get_subcommands().filter(|s| !s.is_hide_set());
            iolab::registry::closest(&t, names.map(clap::Command::get_name)).map(|n| {
                (
                    ContextKind::SuggestedSubcommand,
                    ContextValue::Strings(vec![n.to_string()]),
                )
            })
        }),
        ErrorKind::InvalidValue => match (
            typed(ContextKind::InvalidValue),
            e.get(ContextKind::ValidValue),
        ) {
            (Some(t), Some(ContextValue::Strings(valid))) => {
                iolab::registry::closest(&t, valid.iter().map(String::as_str)).map(|n| {
                    (
                        ContextKind::SuggestedValue,
                        ContextValue::String(n.to_string()),
                    )
                })
            }
            _ => None,
        },
        _ => None,
    };
    let Some((kind, value)) = suggestion else {
        return e;
    };
    let mut e = e;
    e.insert(kind, value);
    e
}

/// An option of subcommand `cmd` typed before it (`iolab --tracer strace
/// trace`): clap only says it is unknown; this says where it goes.
fn before_its_subcommand(e: &clap::Error, cmd: &clap::Command) -> Option<clap::Error> {
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(typed)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let name = typed.strip_prefix("--")?;
    let name = name.split_once('=').map_or(name, |(k, _)| k);
    visible_longs(cmd).contains(&name).then(|| {
        let sub = cmd.get_bin_name().unwrap_or(cmd.get_name());
        clap::Error::raw(
            ErrorKind::UnknownArgument,
            format!(
                "'--{name}' is an option of `{sub}`: put it after the subcommand ({sub} --{name} ...)\n"
            ),
        )
    })
}

/// Refuses a job argument of `run` or `sweep` that is no fio job option
/// but a slip for one of the command's own flags `own` (`--output-fromat`):
/// the job parser would only say "unknown option".
pub fn own_flag_slip(job_args: &[String], own: &[&str]) -> iolab::Result<()> {
    use iolab::job::options;
    for arg in job_args {
        let Some(key) = arg.strip_prefix("--") else {
            continue;
        };
        let key = key.split_once('=').map_or(key, |(k, _)| k);
        let fio_has = |k: &str| options::FIO_UNSUPPORTED.contains(&k.to_ascii_lowercase().as_str());
        if options::lookup(key).is_some() || options::closest(key).is_some() || fio_has(key) {
            continue;
        }
        let names = own.iter().filter_map(|f| f.strip_prefix("--"));
        if let Some(n) = iolab::registry::closest(key, names) {
            return Err(iolab::Error::usage(
                arg.as_str(),
                format!("unknown option (did you mean --{n}?)"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_command_reached_is_the_deepest_subcommand_named() {
        let mut root = super::super::Cli::command();
        root.build();
        let c = command_at(&root, &argv("iolab tree --db x create /t --dirs 2"));
        assert_eq!(c.get_name(), "create");
        assert_eq!(command_at(&root, &argv("iolab -- run")).get_name(), "iolab");
    }

    #[test]
    fn hidden_old_spellings_are_never_suggested() {
        let mut root = super::super::Cli::command();
        root.build();
        let longs = visible_longs(root.find_subcommand("history").unwrap());
        assert!(longs.contains(&"output-format"), "{longs:?}");
        assert!(!longs.contains(&"format"), "{longs:?}");
    }
}
