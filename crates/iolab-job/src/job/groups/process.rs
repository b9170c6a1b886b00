//! How a job's threads are scheduled and submit, and options without an
//! effect on the I/O: fio's `nice`, `prio`, `prioclass`, `cpus_allowed`,
//! `cpumask`, `cpus_allowed_policy`, `io_submit_mode`,
//! `continue_on_error`, and `threads` (an option of fio's tiobench
//! profile that its example job files set).

use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::spec::JobSpec;
use crate::sys::thread::{MAX_CPUS, Sched};
use serde::{Deserialize, Serialize};

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Process {
    /// Nice value of each clone's thread.
    pub nice: Option<i32>,
    /// I/O priority level 0-7 (fio's `prio`).
    pub prio: Option<u32>,
    /// I/O priority class 1-3 (fio's `prioclass`).
    pub prioclass: Option<u32>,
    /// CPUs the clones may run on (`cpus_allowed`, `cpumask`).
    pub cpus: Option<Vec<usize>>,
    /// `cpus_allowed_policy=split`: each clone gets one of `cpus` in turn.
    pub split_cpus: bool,
    /// fio's `continue_on_error`: the kinds of I/O whose non-fatal errors
    /// (EIO, EILSEQ, as fio's default `ignore_error`) are counted and
    /// passed over: [`CONTINUE_READ`] | [`CONTINUE_WRITE`] (0: none).
    pub continue_on: u8,
}

/// `continue_on_error` covers reads.
pub const CONTINUE_READ: u8 = 1;
/// `continue_on_error` covers writes (and trims).
pub const CONTINUE_WRITE: u8 = 2;

impl Process {
    /// The I/O priority (class, level) to set, if any: `prio` alone is in
    /// the best-effort class, `prioclass` alone at level 0, as fio.
    pub fn ioprio(&self) -> Option<(u32, u32)> {
        match (self.prioclass, self.prio) {
            (None, None) => None,
            (class, level) => Some((class.unwrap_or(2), level.unwrap_or(0))),
        }
    }

    /// What clone `clone`'s thread sets on itself.
    pub fn sched(&self, clone: u32) -> Sched {
        Sched {
            nice: self.nice,
            ioprio: self.ioprio(),
            cpus: self.cpus.as_ref().map(|cpus| {
                if self.split_cpus {
                    vec![cpus[clone as usize % cpus.len()]]
                } else {
                    cpus.clone()
                }
            }),
        }
    }
}

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "nice",
        Kind::Str,
        "nice value of each clone's thread, -20 to 19",
    ),
    opt(
        "prio",
        Kind::Int(Range { min: 0, max: 7 }),
        "I/O priority level of each clone's thread (ioprio_set)",
    ),
    opt(
        "prioclass",
        Kind::Int(Range { min: 1, max: 3 }),
        "I/O priority class: 1 realtime, 2 best effort, 3 idle",
    ),
    opt(
        "cpus_allowed",
        Kind::Str,
        "CPUs the clones may run on: a list like 0-3,6",
    ),
    opt(
        "cpumask",
        Kind::Str,
        "CPUs the clones may run on, as a bit mask (0x3: CPUs 0 and 1)",
    ),
    opt(
        "cpus_allowed_policy",
        Kind::Choice(&["shared", "split"]),
        "shared: every clone on all of the CPUs; split: one CPU each, in turn",
    ),
    opt(
        "io_submit_mode",
        Kind::Choice(&["inline", "offload"]),
        "accepted: iolab submits from the clone's own thread (fio's inline)",
    ),
    opt(
        "continue_on_error",
        Kind::Str,
        "none, read, write, io, all: count and pass over EIO/EILSEQ of those I/Os (verify refused)",
    ),
    opt(
        "threads",
        Kind::Str,
        "option of fio's tiobench profile: accepted without effect, as in fio",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let p = &mut job.process;
    match def.name {
        "nice" => match v.trim().parse::<i32>() {
            Ok(n) if (-20..=19).contains(&n) => p.nice = Some(n),
            _ => {
                return Err(JobProblem::Invalid(format!(
                    "nice: '{v}' is not a nice value (-20 to 19)"
                )));
            }
        },
        "prio" => p.prio = Some(number(def, v)?),
        "prioclass" => p.prioclass = Some(number(def, v)?),
        "cpus_allowed" => p.cpus = Some(cpu_list(v)?),
        "cpumask" => p.cpus = Some(cpu_mask(v)?),
        "cpus_allowed_policy" => p.split_cpus = v == "split",
        "continue_on_error" => {
            p.continue_on = match v.trim() {
                "none" | "0" | "false" => 0,
                "read" => CONTINUE_READ,
                "write" => CONTINUE_WRITE,
                "io" | "all" | "1" | "true" => CONTINUE_READ | CONTINUE_WRITE,
                other => {
                    return Err(JobProblem::Invalid(format!(
                        "continue_on_error={other}: expected none, read, write, io or all \
                         (verify is not supported by iolab yet)"
                    )));
                }
            }
        }
        "io_submit_mode" | "threads" => {}
        other => unreachable!("process group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// fio's CPU list: `0-3,6`.
fn cpu_list(v: &str) -> Result<Vec<usize>, JobProblem> {
    let bad = || {
        JobProblem::Invalid(format!(
            "cpus_allowed: '{v}' is not a CPU list (like 0-3,6; CPUs below {MAX_CPUS})"
        ))
    };
    let mut cpus = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= MAX_CPUS {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(bad());
    }
    on_this_machine("cpus_allowed", v, cpus)
}

/// `cpus` when this machine has each of them; else fio's refusal ("CPU 7
/// too large").
fn on_this_machine(what: &str, v: &str, cpus: Vec<usize>) -> Result<Vec<usize>, JobProblem> {
    // SAFETY: sysconf reads a value; no memory is passed.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as usize;
    match cpus.iter().find(|&&c| c >= n) {
        Some(c) => Err(JobProblem::Invalid(format!(
            "{what}={v}: CPU {c} is not on this machine (it has CPUs 0-{}), as fio refuses it",
            n - 1
        ))),
        None => Ok(cpus),
    }
}

/// fio's CPU mask: a number whose bit N allows CPU N.
fn cpu_mask(v: &str) -> Result<Vec<usize>, JobProblem> {
    let t = v.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    }
    .ok()
    .filter(|m| *m != 0)
    .ok_or_else(|| JobProblem::Invalid(format!("cpumask: '{v}' is not a CPU mask (like 0x3)")))?;
    on_this_machine(
        "cpumask",
        v,
        (0..64).filter(|b| mask >> b & 1 == 1).collect(),
    )
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Threads",
    options: OPTIONS,
    apply,
    validate: crate::job::option_def::no_rules,
};
