//! The engine options that carry values rather than on/off: `e4defrag`'s
//! `donorname` and `inplace`, `exec`'s `program`, `arguments`, `grace_time`
//! and `std_redirect` (fio's per-engine options of engines/e4defrag.c and
//! engines/exec.c). A job whose engine does not take one it sets is
//! refused, as for the on/off engine options. What the engines do with them
//! is in `engine::e4defrag` and `engine::exec`.

use super::OptionGroup;
use crate::engine::{E4defragOptions, ExecOptions};
use crate::job::apply::num;
use crate::job::error::JobProblem;
use crate::job::options::{Kind, OptDef, Range, opt};
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
    /// Those of them set while an `ioengine` that does not take them was
    /// in effect (fio's "Bad option").
    #[serde(skip)]
    pub misplaced: Vec<String>,
}

impl EngineOpts {
    /// The options of this group the job sets.
    fn given(&self) -> Vec<&'static str> {
        let (e, x) = (&self.e4defrag, &self.exec);
        [
            ("donorname", e.donorname.is_some()),
            ("inplace", e.inplace.is_some()),
            ("program", x.program.is_some()),
            ("arguments", x.arguments.is_some()),
            ("grace_time", x.grace_time.is_some()),
            ("std_redirect", x.std_redirect.is_some()),
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
];

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

/// What the job needs for `exec` as fio runs it (fio's `FIO_NOIO`: the job
/// ends by its runtime, whatever its size, and needs no size): a job of
/// ioengine=exec with a runtime is time-based, and one without `size` or
/// `filesize` plans one block a pass. Called once every option is applied.
pub fn finish(job: &mut JobSpec) {
    if crate::engine::find(&job.engine).map(|e| e.name) != Some("exec") {
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
    name: "Engine options of e4defrag and exec",
    options: OPTIONS,
    apply,
    validate,
};
