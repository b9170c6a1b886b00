//! Execs stored like runs (kind `exec`): the key figures of each
//! successful run are the repetitions, the whole result (every run, its
//! counters, the command, its directory and environment) is the stored
//! result.

use super::ExecResult;
use crate::store::{NewRun, Status, Store, StoreResult, StoredRun};
use crate::sys::environment::Environment;

/// The kind of a stored exec.
pub const KIND: &str = crate::store::kind::EXEC;

/// Stores `e`; returns the run id.
pub fn save(
    store: &mut Store,
    e: &ExecResult,
    command: &str,
    label: Option<&str>,
) -> StoreResult<i64> {
    let env = Environment::capture(&e.watched(), crate::disk::state::injected_at);
    let json = crate::store::encode(e, "exec result")?;
    let status = if e.interrupted {
        Status::Interrupted
    } else if e.ok_runs().next().is_none() {
        Status::Failed
    } else {
        Status::Complete
    };
    store.insert(&NewRun {
        kind: KIND,
        label,
        name: name(e),
        command: command.to_string(),
        env: &env,
        result_json: json,
        summary: &super::figures::summary(e),
        sweep: None,
        source_json: None,
        hosts: &[],
        status,
    })
}

/// `exec CMD ARGS` as `history` lists it (the whole command line, quoted
/// for the shell).
pub fn name(e: &ExecResult) -> String {
    format!("exec {}", e.command_line())
}

/// The exec of a stored run of kind [`KIND`].
pub fn load(run: &StoredRun) -> StoreResult<ExecResult> {
    let mut e: ExecResult = run.decode(KIND, "exec result")?;
    e.run = Some(run.id);
    Ok(e)
}
