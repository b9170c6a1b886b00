//! The engine options that carry values rather than on/off: `e4defrag`'s
//! `donorname` and `inplace`, `exec`'s `program`, `arguments`, `grace_time`
//! and `std_redirect`, `cpuio`'s `cpuload`, `cpuchunks`, `cpumode` and
//! `exit_on_io_done` (fio's per-engine options of engines/e4defrag.c,
//! engines/exec.c and engines/cpu.c). A job whose engine does not take one
//! it sets is refused, as for the on/off engine options. What the engines
//! do with them is in `engine::e4defrag`, `engine::exec` and `engine::cpuio`.

use crate::engine::{CpuMode, CpuioOptions, E4defragOptions, ExecOptions};
use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::spec::JobSpec;
use crate::job::units::{parse_bool, plain_text};
use serde::{Deserialize, Serialize};

/// The settings of this group in a job.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineOpts {
    /// `donorname`, `inplace`.
    pub e4defrag: E4defragOptions,
    /// `program`, `arguments`, `grace_time`, `std_redirect`.
    pub exec: ExecOptions,
    /// `cpuload`, `cpuchunks`, `cpumode`, `exit_on_io_done`.
    pub cpuio: CpuioOptions,
    /// Those of them set while an `ioengine` that does not take them was
    /// in effect (fio's "Bad option").
    #[serde(skip)]
    pub misplaced: Vec<String>,
}

impl EngineOpts {
    /// The options of this group the job sets.
    fn given(&self) -> Vec<&'static str> {
        let (e, x, c) = (&self.e4defrag, &self.exec, &self.cpuio);
        [
            ("donorname", e.donorname.is_some()),
            ("inplace", e.inplace.is_some()),
            ("program", x.program.is_some()),
            ("arguments", x.arguments.is_some()),
            ("grace_time", x.grace_time.is_some()),
            ("std_redirect", x.std_redirect.is_some()),
            ("cpuload", c.cpuload.is_some()),
            ("cpuchunks", c.cpuchunks.is_some()),
            ("cpumode", c.cpumode.is_some()),
            ("exit_on_io_done", c.exit_on_io_done.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }
}

/// fio's `int` (`grace_time`: seconds, at least 0).
const INT: Range = Range {
    min: 0,
    max: i32::MAX as u64,
};

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "donorname",
        Kind::Str,
        "engine option (e4defrag): the donor file whose blocks are moved in, in `directory`",
    ),
    opt(
        "inplace",
        Kind::Int(Range { min: 0, max: 1 }),
        "engine option (e4defrag): 1: the donor's space is allocated and freed at each I/O; 0 (default): once, up to filesize",
    ),
    opt(
        "program",
        Kind::Str,
        "engine option (exec): the program run for the job's runtime",
    ),
    opt(
        "arguments",
        Kind::Str,
        "engine option (exec): its arguments, split at spaces; %r is the runtime in seconds, %n the job name",
    ),
    opt(
        "grace_time",
        Kind::Int(INT),
        "engine option (exec): seconds between SIGTERM and SIGKILL once the runtime has passed (default 1)",
    ),
    opt(
        "std_redirect",
        Kind::Bool,
        "engine option (exec): the program's stdout and stderr go to JOBNAME.stdout and JOBNAME.stderr (default 1)",
    ),
    opt(
        "cpuload",
        Kind::Int(UINT),
        "engine option (cpuio): percent of the time each clone burns CPU (required; above 100: 100)",
    ),
    opt(
        "cpuchunks",
        Kind::Int(UINT),
        "engine option (cpuio): microseconds each call burns (default 50000)",
    ),
    opt(
        "cpumode",
        Kind::Choice(&["noop", "qsort"]),
        "engine option (cpuio): noop (default) spins; qsort sorts 256 Ki numbers",
    ),
    opt(
        "exit_on_io_done",
        Kind::Bool,
        "engine option (cpuio): end when the jobs doing I/O have ended (default 0)",
    ),
];

/// fio's `unsigned int` (`cpuload`, `cpuchunks`).
const UINT: Range = Range {
    min: 0,
    max: u32::MAX as u64,
};

/// True when the job's `ioengine` has been set (it may still change).
fn engine_given(job: &JobSpec) -> bool {
    job.options.iter().any(|(k, _)| k == "ioengine")
}

/// True when the job's engine takes option `name`.
fn takes(job: &JobSpec, name: &str) -> bool {
    job.engine_def().is_some_and(|d| d.options.contains(&name))
}

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    if engine_given(job) && !takes(job, def.name) {
        job.engine_opts.misplaced.push(def.name.to_string());
    }
    let o = &mut job.engine_opts;
    match def.name {
        "donorname" => {
            plain_text("donorname", v)?;
            o.e4defrag.donorname = Some(v.to_string());
        }
        "inplace" => o.e4defrag.inplace = Some(num::<u64>(def, v)? == 1),
        "program" => {
            plain_text("program", v)?;
            o.exec.program = Some(v.to_string());
        }
        "arguments" => {
            plain_text("arguments", v)?;
            o.exec.arguments = Some(v.to_string());
        }
        "grace_time" => o.exec.grace_time = Some(num(def, v)?),
        "std_redirect" => o.exec.std_redirect = Some(parse_bool(v)?),
        "cpuload" => o.cpuio.cpuload = Some(num(def, v)?),
        "cpuchunks" => o.cpuio.cpuchunks = Some(num(def, v)?),
        "cpumode" => {
            o.cpuio.cpumode = Some(match v.to_ascii_lowercase().as_str() {
                "qsort" => CpuMode::Qsort,
                _ => CpuMode::Noop,
            })
        }
        "exit_on_io_done" => o.cpuio.exit_on_io_done = Some(parse_bool(v)?),
        other => unreachable!("engine options group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// The rule: fio reads an engine's options only while that engine is the
/// job's `ioengine`, and a later `ioengine` drops them (examples/e4defrag2.fio
/// sets `donorname` in `[global]` after `ioengine=e4defrag`, and jobs of
/// `ioengine=libaio`). So an option the job's engine does not take is
/// refused when it was set under another engine, or no `ioengine` is set.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let o = &job.engine_opts;
    for name in o.given() {
        let misplaced = !engine_given(job) || o.misplaced.iter().any(|m| m == name);
        if misplaced && !takes(job, name) {
            let engines: Vec<&str> = (crate::engine::ENGINES.iter())
                .filter(|e| e.item.options.contains(&name))
                .map(|e| e.name)
                .collect();
            return Err(JobProblem::Invalid(format!(
                "option '{name}' applies to ioengine={} only (this job uses ioengine={})",
                engines.join(", "),
                job.engine
            )));
        }
    }
    Ok(())
}

/// What the job needs for `exec` and `cpuio` as fio runs them (fio's
/// `FIO_NOIO`: the job ends by its runtime, whatever its size, and needs no
/// size): a job of either with a runtime is time-based, and one without
/// `size` or `filesize` plans one block a pass. `cpuio` thinks after each
/// call as fio's engine sets it (`thinktime` from `cpuload` and
/// `cpuchunks`, one block, no spin). Called once every option is applied.
pub fn finish(job: &mut JobSpec) {
    let engine = crate::engine::find(&job.engine).map(|e| e.name);
    if engine == Some("cpuio") {
        let c = &job.engine_opts.cpuio;
        let p = &mut job.pacing;
        p.thinktime_us = c.think_us(c.chunk_us());
        p.thinktime_spin_us = 0;
        p.thinktime_blocks = 1;
        p.thinktime_issue = false;
        job.files.nrfiles = 1;
    } else if engine != Some("exec") {
        return;
    }
    job.time_based = job.runtime_us.is_some();
    if job.size.is_none() && job.files.filesize.is_none() {
        job.files.nrfiles = 1;
        job.size = Some(job.bs_max);
    }
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Engine options of e4defrag, exec and cpuio",
    options: OPTIONS,
    apply,
    validate,
};
