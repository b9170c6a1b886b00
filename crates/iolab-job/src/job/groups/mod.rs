//! Option groups: job options that belong together (verification, pacing,
//! file sets, ...) each live in one file of this folder, which holds their
//! rows of the option table, the settings they give a job (a field of
//! [`JobSpec`](super::spec::JobSpec)), how a value is applied and the rules between them.
//!
//! To add a group: a new file here with a `pub const GROUP: OptionGroup`,
//! `pub mod NAME;` and one line in [`GROUPS`], a field in
//! [`JobSpec`](super::spec::JobSpec) for its settings, and its rows in
//! `docs/fio-compat.md`. Lookup, `--help` texts, the docs test and
//! `tests/job.rs` (every row applies) read [`GROUPS`].

pub mod access;
pub(crate) mod access_values;
pub mod cmdprio;
pub mod engine_opts;
pub mod files;
pub mod lifecycle;
pub mod logs;
pub mod memory;
pub mod pacing;
pub mod pattern;
pub mod process;
pub mod report;
pub mod verify;
pub mod verify_method;

use super::option_def::{OptDef, OptionGroup};

/// Every option group, in the order of `docs/fio-compat.md`.
pub const GROUPS: &[OptionGroup] = &[
    files::GROUP,
    report::GROUP,
    process::GROUP,
    verify::GROUP,
    access::GROUP,
    memory::GROUP,
    lifecycle::GROUP,
    logs::GROUP,
    cmdprio::GROUP,
    engine_opts::GROUP,
    pacing::GROUP,
];

/// The group an option belongs to (`None` for the core options).
pub fn owner(def: &OptDef) -> Option<&'static OptionGroup> {
    GROUPS
        .iter()
        .find(|g| g.options.iter().any(|o| o.name == def.name))
}
