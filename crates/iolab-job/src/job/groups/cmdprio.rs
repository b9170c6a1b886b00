//! Per-I/O priorities of the libaio and io_uring engines: fio's
//! `cmdprio_percentage`, `cmdprio_class`, `cmdprio` and `cmdprio_bssplit`
//! (engine options in fio: other engines refuse them). Values are per
//! direction, `read,write` (one value: both). What the engines do with
//! them is in `engine::cmdprio`.

use crate::engine::cmdprio::{MAX_SPLIT, SplitPrio, ioprio};
use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::{Kind, OptDef, opt};
use crate::job::spec::JobSpec;
use crate::job::units::{parse_int, parse_size};

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "cmdprio_percentage",
        Kind::Str,
        "percent of the I/Os (read,write) sent with cmdprio_class/cmdprio (libaio, io_uring)",
    ),
    opt(
        "cmdprio_class",
        Kind::Str,
        "I/O priority class of those I/Os, 1-3 (read,write; default 1, realtime)",
    ),
    opt(
        "cmdprio",
        Kind::Str,
        "I/O priority level of those I/Os, 0-7 (read,write; default 0)",
    ),
    opt(
        "cmdprio_bssplit",
        Kind::Str,
        "per block size: bs/percent[/class/level]:... (read,write) of the I/Os with a priority",
    ),
];

/// The parts of a `read,write` value: one part is both directions.
fn per_direction(v: &str) -> [&str; 2] {
    let mut parts = v.split(',');
    let read = parts.next().unwrap_or("");
    [read, parts.next().unwrap_or(read)]
}

/// `read,write` integers within `lo..=hi`.
fn ints(name: &str, v: &str, (lo, hi): (u64, u64)) -> Result<[u32; 2], JobProblem> {
    let mut out = [0; 2];
    for (o, part) in out.iter_mut().zip(per_direction(v)) {
        let n = parse_int(part.trim())?;
        if !(lo..=hi).contains(&n) {
            return Err(JobProblem::Invalid(format!(
                "{name}={v}: {n} is not within {lo}-{hi}"
            )));
        }
        *o = n as u32;
    }
    Ok(out)
}

/// One direction of `cmdprio_bssplit`, as fio's `split_parse_prio_ddir`:
/// `bs/` , `bs/perc` or `bs/perc/class/level` (more fields are ignored,
/// as fio 3.33's sscanf does), zero shares dropped, sorted by size.
fn split(v: &str) -> Result<Vec<SplitPrio>, JobProblem> {
    let bad = |why: String| JobProblem::Invalid(format!("cmdprio_bssplit={v}: {why}"));
    let mut out = Vec::new();
    for entry in v.split(':').take_while(|e| !e.is_empty()) {
        let f: Vec<&str> = entry.split('/').collect();
        let bs = parse_size(f[0].trim())?;
        let num = |i: usize| -> Result<u32, JobProblem> {
            match f.get(i).map(|s| s.trim()).filter(|s| !s.is_empty()) {
                Some(s) => Ok(parse_int(s)?.min(u64::from(u32::MAX)) as u32),
                None => Ok(0),
            }
        };
        let perc = num(1)?.min(100);
        let prio = match f.len() {
            1 | 2 => None,
            3 => return Err(bad(format!("'{entry}': a class needs its level too"))),
            _ => Some(ioprio(num(2)?.min(3), num(3)?.min(7))),
        };
        if perc > 0 {
            out.push(SplitPrio { bs, perc, prio });
        }
    }
    out.sort_by_key(|e| e.bs);
    let mut total = std::collections::BTreeMap::new();
    for e in &out {
        *total.entry(e.bs).or_insert(0) += e.perc;
    }
    if let Some((bs, _)) = total.iter().find(|(_, t)| **t > 100) {
        return Err(bad(format!("the shares of bs {bs} exceed 100")));
    }
    if out.len() > MAX_SPLIT {
        return Err(bad(format!("more than {MAX_SPLIT} entries a direction")));
    }
    Ok(out)
}

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let c = &mut job.cmdprio;
    match def.name {
        "cmdprio_percentage" => c.percentage = ints(def.name, v, (0, 100))?,
        "cmdprio_class" => c.class = ints(def.name, v, (1, 3))?,
        "cmdprio" => c.level = ints(def.name, v, (0, 7))?,
        "cmdprio_bssplit" => {
            let parts = per_direction(v);
            for (d, part) in parts.iter().enumerate() {
                let entries = split(part)?;
                c.split[d] = [SplitPrio::default(); MAX_SPLIT];
                c.split[d][..entries.len()].copy_from_slice(&entries);
                c.split_len[d] = entries.len();
            }
        }
        other => unreachable!("cmdprio group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// The rules: fio's engines with per-I/O priorities only, and one mode.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let c = &job.cmdprio;
    if !c.used() {
        return Ok(());
    }
    let engine = crate::engine::find(&job.engine).map_or("", |e| e.name);
    if !matches!(engine, "libaio" | "io_uring") {
        return Err(JobProblem::Invalid(format!(
            "cmdprio_percentage and cmdprio_bssplit are options of ioengine=libaio and \
             io_uring (fio's engines with per-I/O priorities), not of ioengine={}",
            job.engine
        )));
    }
    if c.percentage != [0, 0] && c.split_len != [0, 0] {
        return Err(JobProblem::Invalid(
            "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio)".into(),
        ));
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Per-I/O priorities",
    options: OPTIONS,
    apply,
    validate,
};
