//! fio's global command-line flags of `iolab run` (fio's `init.c`
//! `parse_cmd_line`): output formats as a comma list, terse versions, ETA
//! (`--eta` itself is a global flag of every command: [`super::Cli`]) and
//! status flags, `--section`, `--parse-only`, `--readonly`, `--debug`,
//! the help flags (`--showcmd`, `--cmdhelp`, `--enghelp`) and
//! `--inflate-log`, which print and run nothing.

use iolab::job::{self, ini, options};
use iolab::render::{self, terse};
use iolab::{Error, Result};
use std::fmt::Write;
use std::path::PathBuf;

/// fio's global flags that `iolab run` accepts.
#[derive(Debug, Default, clap::Args)]
pub struct FioFlags {
    /// fio's --minimal: the terse line only (as --output-format=terse).
    #[arg(long, overrides_with_all = ["output_format", "minimal"])]
    pub minimal: bool,
    /// Also print the terse line after the other formats (fio's --append-terse).
    #[arg(long)]
    pub append_terse: bool,
    /// Terse version: only 3 (fio's default) is written.
    #[arg(long, value_name = "3", value_parser = terse_version)]
    pub terse_version: Option<u32>,
    /// Progress as plain lines, one every TIME, also on a terminal (fio's
    /// ETA on a new line).
    #[arg(long, value_name = "TIME", value_parser = time_ms)]
    pub eta_newline: Option<u64>,
    /// Plain progress lines (--eta=always off a terminal) at most every
    /// TIME, at least 250ms (fio's ETA interval).
    #[arg(long, value_name = "TIME", value_parser = eta_interval)]
    pub eta_interval: Option<u64>,
    /// fio's full status every TIME (accepted; iolab prints the results once, at the end).
    #[arg(long, value_name = "TIME", value_parser = time_ms)]
    pub status_interval: Option<u64>,
    /// Write agg-read_bw.log, agg-write_bw.log and agg-trim_bw.log: the
    /// bandwidth of all jobs summed per interval (fio's --bandwidth-log).
    #[arg(long)]
    pub bandwidth_log: bool,
    /// Run only the job section NAME of the job files and command line
    /// ([global] sections still apply); repeatable.
    #[arg(long, value_name = "NAME", value_parser = section)]
    pub section: Vec<String>,
    /// Parse and check the jobs, run nothing (exit 0 when they are valid).
    #[arg(long)]
    pub parse_only: bool,
    /// Refuse every job that would write: writing directions, laying out or
    /// extending a file, unlink, fsync.
    #[arg(long)]
    pub readonly: bool,
    /// fio's debug categories (process,file,io,...): accepted; iolab logs nothing more.
    #[arg(long, value_name = "CATEGORIES", value_parser = debug)]
    pub debug: Option<String>,
    /// Print the job files as one command line (as fio) and run nothing.
    #[arg(long)]
    pub showcmd: bool,
    /// Help for job option OPTION (or every option: --cmdhelp, --cmdhelp=all).
    #[arg(long, value_name = "OPTION", num_args = 0..=1, require_equals = true,
          default_missing_value = "all")]
    pub cmdhelp: Option<String>,
    /// The engines, or ENGINE's options, or one option of it (--enghelp=ENGINE,OPTION).
    #[arg(long, value_name = "ENGINE[,OPTION]", num_args = 0..=1, require_equals = true,
          default_missing_value = "")]
    pub enghelp: Option<String>,
    /// Where verify state files (`verify_state_save`, `verify_state_load`)
    /// and `verify_dump` files go, instead of the working directory (fio's
    /// --aux-path).
    #[arg(long, value_name = "DIR")]
    pub aux_path: Option<PathBuf>,
    /// fio's smalloc pool in KiB: accepted, no effect (iolab has no such pool).
    #[arg(long, value_name = "KiB", value_parser = clap::value_parser!(u64).range(1..))]
    pub alloc_size: Option<u64>,
    /// Print a log stored compressed (`log_store_compressed`, a .log.fz
    /// file of fio or iolab) as text, and run nothing.
    #[arg(long, value_name = "FILE")]
    pub inflate_log: Option<PathBuf>,
}

/// fio's flags of `run` that take a value.
pub const VALUED: &[&str] = &[
    "--terse-version",
    "--eta-newline",
    "--eta-interval",
    "--status-interval",
    "--section",
    "--debug",
    "--cmdhelp",
    "--enghelp",
    "--alloc-size",
    "--inflate-log",
    "--aux-path",
];
/// fio's flags of `run` without a value (`--cmdhelp` and `--enghelp` take
/// theirs only with `=`).
pub const FLAGS: &[&str] = &[
    "--minimal",
    "--append-terse",
    "--parse-only",
    "--readonly",
    "--showcmd",
    "--cmdhelp",
    "--enghelp",
    "--bandwidth-log",
];

/// fio's order of the formats of one run: terse, json (or json+), normal;
/// iolab's own formats after them, in the order given.
fn rank(name: &str) -> u8 {
    match name {
        "terse" => 0,
        "json" | "json+" => 1,
        "normal" => 2,
        _ => 3,
    }
}

/// The formats to print, in the order to print them: `list` is the value of
/// `--output-format` (a comma list as fio's), `--minimal` replaces it and
/// `--append-terse` adds the terse line. json and json+ together are one
/// json+ document, as fio.
pub fn formats(list: &str, flags: &FioFlags) -> Result<Vec<&'static str>> {
    let mut names: Vec<&'static str> = Vec::new();
    if flags.minimal {
        names.push("terse");
    } else {
        for f in list.split(',') {
            names.push(render::find(f.trim())?.name);
        }
    }
    if flags.append_terse {
        names.push("terse");
    }
    if names.contains(&"json+") {
        names.retain(|n| *n != "json");
    }
    let mut seen = Vec::new();
    names.retain(|n| {
        !seen.contains(n) && {
            seen.push(*n);
            true
        }
    });
    names.sort_by_key(|n| rank(n));
    Ok(names)
}

/// Checks one `--output-format` value: a comma list of known formats.
pub fn output_formats(v: &str) -> std::result::Result<String, String> {
    for f in v.split(',') {
        render::find(f.trim()).map_err(|e| e.to_string())?;
    }
    Ok(v.to_string())
}

fn terse_version(v: &str) -> std::result::Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(terse::VERSION) => Ok(terse::VERSION),
        Ok(2 | 4 | 5) => Err(format!(
            "fio's terse version {v} is not supported by iolab; it writes version {}",
            terse::VERSION
        )),
        _ => Err(format!(
            "'{v}' is not a terse version (fio has 2, 3, 4, 5; iolab writes {})",
            terse::VERSION
        )),
    }
}

/// A time as fio's global flags take it (bare numbers are seconds), in ms.
fn time_ms(v: &str) -> std::result::Result<u64, String> {
    let us = job::units::parse_time_us(v).map_err(|e| e.to_string())?;
    match us / 1000 {
        0 => Err(format!("'{v}' is too short (at least 1ms)")),
        ms => Ok(ms),
    }
}

/// fio's `DISK_UTIL_MSEC`: the shortest ETA interval.
const MIN_ETA_INTERVAL_MS: u64 = 250;

fn eta_interval(v: &str) -> std::result::Result<u64, String> {
    match time_ms(v)? {
        ms if ms < MIN_ETA_INTERVAL_MS => Err(format!(
            "'{v}' is too short (at least {MIN_ETA_INTERVAL_MS}ms, as fio)"
        )),
        ms => Ok(ms),
    }
}

fn section(v: &str) -> std::result::Result<String, String> {
    if v == "global" {
        return Err("[global] cannot be the only section run (as fio)".into());
    }
    Ok(v.to_string())
}

/// fio's debug categories (`fio --debug=help`).
const DEBUG: &[&str] = &[
    "process",
    "file",
    "io",
    "mem",
    "blktrace",
    "verify",
    "random",
    "parse",
    "diskutil",
    "job",
    "mutex",
    "profile",
    "time",
    "net",
    "rate",
    "compress",
    "steadystate",
    "helperthread",
    "zbd",
    "all",
];

/// True when `--debug` names `category` (or `all`).
pub fn debugs(fio: &FioFlags, category: &str) -> bool {
    fio.debug.as_deref().is_some_and(|d| {
        d.split(',')
            .map(|c| c.split_once(':').map_or(c, |(c, _)| c))
            .any(|c| c == category || c == "all")
    })
}

fn debug(v: &str) -> std::result::Result<String, String> {
    for c in v.split(',') {
        // fio's `io:JOBNAME` limits a category to one job.
        let c = c.split_once(':').map_or(c, |(c, _)| c);
        if !DEBUG.contains(&c) {
            return Err(format!(
                "unknown debug category '{c}'; fio has: {}",
                DEBUG.join(",")
            ));
        }
    }
    Ok(v.to_string())
}

/// fio's `--showcmd`: each job file as one command line, `fio ` then its
/// sections' options (`--name=SECTION` before a job section's), as fio
/// prints them; only the sections of `--section` when given.
pub fn showcmd(files: &[PathBuf], sections: &[String]) -> Result<String> {
    let mut out = String::new();
    for f in files {
        out.push_str("fio ");
        for s in ini::parse_file(f, &ini::Vars::new())? {
            let global = s.name == "global";
            if !global && !sections.is_empty() && !sections.contains(&s.name) {
                continue;
            }
            if !global {
                let _ = write!(out, "--name={} ", s.name);
            }
            for e in &s.entries {
                match &e.value {
                    Some(v) => write!(out, "--{}={v} ", e.key),
                    None => write!(out, "--{} ", e.key),
                }
                .expect("writing to a String");
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// fio's `--cmdhelp`: every option with its help (`all`), or one option
/// in detail. An option iolab does not have shows the closest, as fio.
pub fn cmdhelp(name: &str) -> Result<String> {
    if name == "all" {
        let mut out = String::new();
        for o in options::all() {
            let _ = writeln!(out, "{:<28}: {}", o.name, o.help);
        }
        return Ok(out);
    }
    if let Some(o) = options::lookup(name) {
        return Ok(option_help(o));
    }
    if options::FIO_UNSUPPORTED.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(Error::usage(
            format!("--cmdhelp={name}"),
            options::unknown_message(name),
        ));
    }
    match options::closest(name).and_then(options::lookup) {
        Some(o) => Ok(format!(" - showing closest match\n{}", option_help(o))),
        None => Err(Error::usage(
            format!("--cmdhelp={name}"),
            options::unknown_message(name),
        )),
    }
}

/// One option as fio's `--cmdhelp=OPTION` shows it.
fn option_help(o: &options::OptDef) -> String {
    use options::Kind;
    let mut out = format!("{:>20}: {}\n", o.name, o.help);
    if !o.aliases.is_empty() {
        let _ = writeln!(out, "{:>20}: {}", "alias", o.aliases.join(","));
    }
    let kind = match o.kind {
        Kind::Str => "string".to_string(),
        Kind::StrOrFlag => "string, or empty as a flag".into(),
        Kind::Bool => "empty or boolean value ([0|1])".into(),
        Kind::Choice(c) => format!("one of: {}", c.join(", ")),
        Kind::Size(_) => "size in bytes (4k, 1M, (1g/3))".into(),
        Kind::SizeRange(_) => "size range MIN-MAX".into(),
        Kind::Int(_) => "integer value".into(),
        Kind::Time(_) => "time (10, 500ms, 2m)".into(),
    };
    let _ = writeln!(out, "{:>20}: {kind}", "type");
    if let Some(r) = o.kind.range_text() {
        let _ = writeln!(out, "{:>20}: {r}", "range");
    }
    if o.iolab_only {
        let _ = writeln!(out, "{:>20}: iolab's own (fio has no such option)", "note");
    }
    out
}

/// fio's `--enghelp`: the engines; `ENGINE`: its options; `ENGINE,OPTION`:
/// that option.
pub fn enghelp(what: &str) -> Result<String> {
    use iolab::engine::ENGINES;
    if what.is_empty() {
        let mut out = String::from("Available IO engines:\n");
        for e in ENGINES {
            let _ = writeln!(out, "\t{}", e.name);
        }
        return Ok(out);
    }
    let (name, opt) = what.split_once(',').unwrap_or((what, ""));
    let e = iolab::registry::find(ENGINES, name).ok_or_else(|| {
        Error::usage(
            format!("--enghelp={what}"),
            iolab::registry::unknown("ioengine", name, ENGINES),
        )
    })?;
    let takes = e.item.options;
    if opt.is_empty() {
        if takes.is_empty() {
            return Ok(format!("{}: {} (no engine options)\n", e.name, e.help));
        }
        let mut out = String::new();
        for o in takes.iter().filter_map(|n| options::lookup(n)) {
            let _ = writeln!(out, "{:<24}: {}", o.name, o.help);
        }
        return Ok(out);
    }
    match takes.iter().find(|n| n.eq_ignore_ascii_case(opt)) {
        Some(n) => cmdhelp(n),
        None => Err(Error::usage(
            format!("--enghelp={what}"),
            format!(
                "ioengine {} has no option '{opt}'; it has: {}",
                e.name,
                if takes.is_empty() {
                    "none".to_string()
                } else {
                    takes.join(", ")
                }
            ),
        )),
    }
}

/// fio's `--inflate-log=FILE`: the text lines of a compressed log.
pub fn inflate_log(file: &std::path::Path) -> Result<String> {
    let what = || format!("--inflate-log {}", file.display());
    let data = std::fs::read(file).map_err(|e| Error::io(what(), e))?;
    let mut text = Vec::new();
    render::fio_log_samples::inflate(&data, &mut text)
        .map_err(|e| Error::usage(what(), format!("not a compressed fio log: {e}")))?;
    String::from_utf8(text).map_err(|_| Error::usage(what(), "not a compressed fio log"))
}
