//! Shared by the commands that use the results database: the `--db`,
//! `--label` and `--no-store` options, opening it, and reading run ids and
//! dates from the command line.

use chrono::{Local, NaiveDate, NaiveDateTime, TimeZone};
use iolab::store::{Store, Target};
use iolab::{Error, Result};
use std::path::{Path, PathBuf};

/// The results database to read.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArg {
    /// Results database (default: $IOLAB_DB, else ~/.local/share/iolab/iolab.db).
    #[arg(long, value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

impl DbArg {
    /// Opens it to store into (or delete from).
    pub fn open(&self) -> Result<Store> {
        open(self.db.as_deref())
    }

    /// Opens it only to read: nothing is created or written, and a
    /// read-only copy works.
    pub fn open_read_only(&self) -> Result<Store> {
        let path = Store::default_path(self.db.as_deref())?;
        Ok(Store::open_read_only(&path)?)
    }
}

/// Where results go, for the commands that store them.
#[derive(Debug, Clone, clap::Args)]
pub struct StoreOpts {
    /// Label stored with the results (for `history --label`, `compare LABEL`).
    #[arg(long, global = true)]
    pub label: Option<String>,
    /// Do not store the results.
    #[arg(long, global = true)]
    pub no_store: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: DbArg,
}

impl StoreOpts {
    /// The database to store into, or `None` with `--no-store`.
    pub fn open(&self) -> Result<Option<Store>> {
        open_unless(self.no_store, self.db.db.as_deref())
    }

    /// The label, if given.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

/// Where the runs of a command go: `store` (if any) with the label and the
/// command line as typed.
pub fn target<'a>(
    store: Option<&'a mut Store>,
    label: Option<&'a str>,
    command: &'a str,
) -> Option<Target<'a>> {
    store.map(|store| Target {
        store,
        label,
        command,
    })
}

/// The command line as typed, from the subcommand on, every iolab option
/// included (`--label`, `--db`...), each argument quoted for a POSIX shell
/// where it needs it, so the line can be pasted to run again.
pub fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).map(|a| shell_word(&a)).collect();
    format!("iolab {}", args.join(" "))
}

/// `a` as one shell word: as it is when it holds only safe characters,
/// otherwise in single quotes.
fn shell_word(a: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_=./,:@%+^".contains(c);
    if !a.is_empty() && a.chars().all(safe) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// Opens the database from `--db`, `$IOLAB_DB` or the default location
/// (whose directory is created; a named path's directory must exist).
pub fn open(db: Option<&Path>) -> Result<Store> {
    let named = db.is_some() || std::env::var_os("IOLAB_DB").is_some_and(|v| !v.is_empty());
    let path = Store::default_path(db)?;
    Ok(Store::open(&path, !named)?)
}

/// The database to store into, or `None` with `--no-store`.
pub fn open_unless(no_store: bool, db: Option<&Path>) -> Result<Option<Store>> {
    if no_store {
        return Ok(None);
    }
    open(db).map(Some)
}

/// Parses a run id argument.
pub fn parse_id(s: &str) -> Result<i64> {
    s.parse::<i64>().ok().filter(|v| *v > 0).ok_or_else(|| {
        Error::usage(
            format!("'{s}'"),
            "not a run id (a positive number from `iolab history`)",
        )
    })
}

/// `2026-11-22`, `2026-11-22 14:30[:00]` (local time), or an age: `90m`,
/// `2h`, `7d` ago. Returns unix seconds.
pub fn parse_when(opt: &str, s: &str) -> Result<i64> {
    let s = s.trim();
    if let Some((n, unit)) = s
        .find(|c: char| !c.is_ascii_digit())
        .filter(|&i| i > 0)
        .map(|i| s.split_at(i))
        && let Ok(n) = n.parse::<i64>()
    {
        let secs = match unit {
            "s" => 1,
            "m" | "min" => 60,
            "h" => 3600,
            "d" => 86400,
            "w" => 7 * 86400,
            _ => 0,
        };
        if secs > 0 {
            return Ok(Local::now().timestamp() - n * secs);
        }
    }
    let local = |dt: NaiveDateTime| {
        Local
            .from_local_datetime(&dt)
            .earliest()
            .map(|d| d.timestamp())
    };
    for f in [
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, f)
            && let Some(t) = local(dt)
        {
            return Ok(t);
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0).and_then(local)
    {
        return Ok(t);
    }
    Err(Error::usage(
        format!("{opt} '{s}'"),
        "expected a date (2026-11-22, '2026-11-22 14:30') or an age (90m, 2h, 7d)",
    ))
}

/// The trace `arg` names: a trace file, or the id of a stored trace whose
/// file is read (a stored trace keeps its figures; its events are in the
/// file it was written to).
pub fn trace_arg(arg: &Path, db: &DbArg) -> Result<iolab::trace::Trace> {
    let id = arg.to_str().and_then(|s| s.parse::<i64>().ok());
    let Some(id) = id.filter(|_| !arg.exists()) else {
        return Ok(iolab::trace::file::read(arg)?);
    };
    let store = db.open_read_only()?;
    let run = store.run(id)?;
    let stored = iolab::trace::store::load(&run)?;
    let Some(file) = stored.file else {
        return Err(iolab::Error::usage(
            format!("run {id}"),
            "this stored trace has figures only, no trace file of its events: \
             record it with `iolab trace --events -o FILE`",
        ));
    };
    iolab::trace::file::read(&file).map_err(|e| match e {
        iolab::trace::TraceError::Io { path, source }
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            iolab::Error::usage(
                format!("run {id}"),
                format!("its trace file {} is gone", path.display()),
            )
        }
        e => e.into(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn shell_words() {
        assert_eq!(super::shell_word("--size=4M"), "--size=4M");
        assert_eq!(super::shell_word("a b"), "'a b'");
        assert_eq!(super::shell_word("it's"), "'it'\\''s'");
        assert_eq!(super::shell_word("${threads}"), "'${threads}'");
        assert_eq!(super::shell_word(""), "''");
    }
}
