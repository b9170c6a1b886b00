//! How the engine list of [`super`] becomes code: the `engines!` macro
//! turns one line per engine into its module, its variant of `AnyEngine`
//! and its entry in `ENGINES`; [`EngineDef`] is what an entry knows of its
//! engine; lookups and the unknown-engine message.

use super::fio_engines::Kind;
use super::{ENGINES, EngineConfig, EngineError};
use crate::registry::{self, Entry};

/// Builds the engine modules, `AnyEngine` and `ENGINES` from one line per
/// engine: `Variant => module::Type, "name", [aliases], "needs", "help";`.
macro_rules! engines {
    ($($variant:ident => $module:ident :: $ty:ident, $name:literal, [$($alias:literal),*], $needs:literal, $help:literal;)*) => {
        $(mod $module;)*
        /// An engine of any kind, made before the threads start (moved into
        /// its thread once, so its size does not matter).
        #[allow(clippy::large_enum_variant)]
        pub enum AnyEngine {
            $(#[doc = $help] $variant($module::$ty),)*
        }

        impl AnyEngine {
            /// Runs `d` with the engine inside (static dispatch).
            pub fn drive<D: Driver>(self, d: D) -> D::Output {
                match self {
                    $(AnyEngine::$variant(e) => d.drive(e),)*
                }
            }
        }

        $(impl registry::Registered for $module::$ty {
            const DEF: registry::EngineDef = registry::EngineDef {
                queued: <$module::$ty as Engine>::QUEUED,
                options: <$module::$ty as Engine>::OPTIONS,
                moves_data: <$module::$ty as Engine>::MOVES_DATA,
                writes_on_read: <$module::$ty as Engine>::WRITES_ON_READ,
                shared_fds: <$module::$ty as Engine>::SHARED_FDS,
                diskless: <$module::$ty as Engine>::DISKLESS,
                check: <$module::$ty as Engine>::check,
                warnings: <$module::$ty as Engine>::warnings,
                hint: <$module::$ty as Engine>::hint,
                build: |c| Ok(AnyEngine::$variant(<$module::$ty as Engine>::build(c)?)),
            };
        })*

        /// Every engine iolab has, in `iolab list engines` order.
        pub static ENGINES: &[crate::registry::Entry<registry::EngineDef>] = &[
            $(crate::registry::entry($name, &[$($alias),*], $needs, $help,
                &<$module::$ty as registry::Registered>::DEF),)*
        ];
    };
}

/// What the registry knows of an engine without making one.
#[derive(Debug)]
pub struct EngineDef {
    /// I/Os stay in flight (`iodepth` matters).
    pub queued: bool,
    /// The engine options it takes.
    pub options: &'static [&'static str],
    /// Its I/Os move the buffer's bytes ([`super::Engine::MOVES_DATA`]).
    pub moves_data: bool,
    /// Its reads need a writable file ([`super::Engine::WRITES_ON_READ`]).
    pub writes_on_read: bool,
    /// Its clones keep the process's descriptor table ([`super::Engine::SHARED_FDS`]).
    pub shared_fds: bool,
    /// It lays out and opens no file before the run ([`super::Engine::DISKLESS`]).
    pub diskless: bool,
    /// Checks a job's settings.
    pub check: fn(&EngineConfig) -> Result<(), EngineError>,
    /// Settings that run but do not do what they suggest.
    pub warnings: fn(&EngineConfig) -> Vec<String>,
    /// What an I/O error usually means with this engine.
    pub hint: fn(&std::io::Error, &EngineConfig) -> Option<&'static str>,
    /// Makes one, for one clone.
    pub build: fn(&EngineConfig) -> Result<super::AnyEngine, EngineError>,
}

/// The engine called `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static Entry<EngineDef>> {
    registry::find(ENGINES, name)
}

/// Why `name` is not an engine iolab has.
pub fn unknown(name: &str) -> String {
    let known = registry::names(ENGINES).join(", ");
    match super::fio_engines::kind(name) {
        Some(Kind::Later) => {
            format!("fio's ioengine '{name}' is not supported by iolab yet; iolab has: {known}")
        }
        Some(kind) => format!(
            "fio's ioengine '{name}' is not supported by iolab: {}; iolab has: {known}",
            kind.why()
        ),
        None => registry::unknown("ioengine", name, ENGINES),
    }
}

/// An engine type's registry definition (made by `engines!`).
pub(super) trait Registered {
    /// What the list knows of the engine.
    const DEF: EngineDef;
}

pub(super) use engines;
