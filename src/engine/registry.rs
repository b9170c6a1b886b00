//! Every engine iolab has, one line each: the variant of [`AnyEngine`], the
//! type, fio's name, fio's aliases, what it needs and one line of help.
//! Parsing `ioengine=`, the job checks, `iolab list engines` and the JSON
//! labels all read this list. A new engine is a new file in `engine/` and
//! one line below.

use super::{Driver, Engine, EngineConfig, EngineError};
use crate::registry::{self, Entry, entry};

/// Builds [`AnyEngine`] and [`ENGINES`] from one line per engine:
/// `Variant => Type, "name", [aliases], "needs", "help";`.
macro_rules! engines {
    ($($variant:ident => $ty:ty, $name:literal, [$($alias:literal),*], $needs:literal, $help:literal;)*) => {
        /// An engine of any kind, made before the threads start (moved into
        /// its thread once, so its size does not matter).
        #[allow(clippy::large_enum_variant)]
        pub enum AnyEngine {
            $(#[doc = $help] $variant($ty),)*
        }

        impl AnyEngine {
            /// Runs `d` with the engine inside (static dispatch).
            pub fn drive<D: Driver>(self, d: D) -> D::Output {
                match self {
                    $(AnyEngine::$variant(e) => d.drive(e),)*
                }
            }
        }

        $(impl Registered for $ty {
            const DEF: EngineDef = EngineDef {
                queued: <$ty as Engine>::QUEUED,
                options: <$ty as Engine>::OPTIONS,
                check: <$ty as Engine>::check,
                warnings: <$ty as Engine>::warnings,
                build: |c| Ok(AnyEngine::$variant(<$ty as Engine>::build(c)?)),
            };
        })*

        /// Every engine iolab has, in `iolab list engines` order.
        pub static ENGINES: &[Entry<EngineDef>] = &[
            $(entry($name, &[$($alias),*], $needs, $help, &<$ty as Registered>::DEF),)*
        ];
    };
}

// The list: one line per engine.
engines! {
    Psync => super::psync::PsyncEngine, "psync", [], "", "pread(2)/pwrite(2), one syscall per I/O";
    Sync => super::sync::SyncEngine, "sync", [], "", "lseek(2) then read(2)/write(2), two syscalls per I/O";
    IoUring => super::uring::UringEngine, "io_uring", [], "Linux 5.1+; sqthread_poll needs root before 5.11", "io_uring: iodepth I/Os in flight, batched submit and reap";
    Libaio => super::libaio::LibaioEngine, "libaio", ["aio", "linuxaio"], "direct=1 for real queue depth", "Linux kernel AIO (io_submit/io_getevents), iodepth I/Os in flight";
    Mmap => super::mmap::MmapEngine, "mmap", [], "", "copies from/to a shared mapping; the kernel reads on page faults";
    Null => super::null::NullEngine, "null", [], "", "no I/O at all: iolab's own cost per I/O";
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
    /// Makes one, for one clone.
    pub build: fn(&EngineConfig) -> Result<AnyEngine, EngineError>,
}

/// fio's engine names (fio 3.x `engines/`), to tell "fio has it, iolab does
/// not yet" from a typo.
pub const FIO_ONLY: &[&str] = &[
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
    if FIO_ONLY.contains(&name) {
        format!("fio's ioengine '{name}' is not supported by iolab yet; iolab has: {known}")
    } else {
        registry::unknown("ioengine", name, ENGINES)
    }
}

/// An engine type's registry definition (made by `engines!`).
trait Registered {
    const DEF: EngineDef;
}
