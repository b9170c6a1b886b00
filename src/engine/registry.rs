//! How the engine list of [`super`] becomes code: the `engines!` macro
//! turns one line per engine into its module, its variant of `AnyEngine`
//! and its entry in `ENGINES`; [`EngineDef`] is what an entry knows of its
//! engine; lookups and the unknown-engine message.

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
    /// Checks a job's settings.
    pub check: fn(&EngineConfig) -> Result<(), EngineError>,
    /// Settings that run but do not do what they suggest.
    pub warnings: fn(&EngineConfig) -> Vec<String>,
    /// What an I/O error usually means with this engine.
    pub hint: fn(&std::io::Error, &EngineConfig) -> Option<&'static str>,
    /// Makes one, for one clone.
    pub build: fn(&EngineConfig) -> Result<super::AnyEngine, EngineError>,
}

/// Every engine fio 3.x has (its `engines/`), to tell "fio has it, iolab
/// does not yet" from a typo; engines iolab has too are found first.
pub const FIO_ENGINES: &[&str] = &[
    "cpuio",
    "dev-dax",
    "dfs",
    "dircreate",
    "dirdelete",
    "dirstat",
    "e4defrag",
    "exec",
    "falloc",
    "filecreate",
    "filedelete",
    "filestat",
    "ftruncate",
    "gfapi",
    "gfapi_async",
    "http",
    "ime_aio",
    "ime_psync",
    "ime_psyncv",
    "io_uring_cmd",
    "libblkio",
    "libcufile",
    "libhdfs",
    "libhipfile",
    "libiscsi",
    "libpmem",
    "libzbc",
    "mtd",
    "nbd",
    "net",
    "netsplice",
    "nfs",
    "page_fault",
    "posixaio",
    "pvsync",
    "pvsync2",
    "rados",
    "rbd",
    "rdma",
    "sg",
    "solarisaio",
    "splice",
    "vsync",
    "windowsaio",
    "xnvme",
];

/// The engine called `name` (or one of its aliases).
pub fn find(name: &str) -> Option<&'static Entry<EngineDef>> {
    registry::find(ENGINES, name)
}

/// Why `name` is not an engine iolab has.
pub fn unknown(name: &str) -> String {
    let known = registry::names(ENGINES).join(", ");
    if FIO_ENGINES.contains(&name) {
        format!("fio's ioengine '{name}' is not supported by iolab yet; iolab has: {known}")
    } else {
        registry::unknown("ioengine", name, ENGINES)
    }
}

/// An engine type's registry definition (made by `engines!`).
pub(super) trait Registered {
    /// What the list knows of the engine.
    const DEF: EngineDef;
}

pub(super) use engines;
