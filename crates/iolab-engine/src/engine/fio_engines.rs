//! fio's engines that iolab does not have, each with the reason, so that
//! `ioengine=rdma` is refused by name ("not supported by iolab: a network
//! engine") and not as a typo; a local-file engine iolab may still get says
//! "yet". The list is every engine name of fio's `engines/` (3.33 and later).

/// What kind of engine iolab leaves to fio, and so why it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A local engine iolab does not have yet.
    Later,
    /// I/O over a network protocol.
    Network,
    /// A distributed or cloud storage system's client library.
    Remote,
    /// A particular kind of device or its vendor library.
    Hardware,
    /// Another operating system's API.
    OtherOs,
}

impl Kind {
    /// Why iolab does not run such an engine.
    pub fn why(self) -> &'static str {
        match self {
            Kind::Later => "",
            Kind::Network => {
                "it is a network engine, and iolab measures local files and block devices"
            }
            Kind::Remote => {
                "it is a client of a distributed or cloud storage system, and iolab measures local files and block devices"
            }
            Kind::Hardware => {
                "it needs a particular device or vendor library, and iolab measures local files and block devices through the kernel's file interfaces"
            }
            Kind::OtherOs => "it is another operating system's interface",
        }
    }
}

/// Every engine fio has that iolab does not, with its kind.
pub const FIO_ENGINES: &[(&str, Kind)] = &[
    ("dev-dax", Kind::Hardware),
    ("dfs", Kind::Remote),
    ("dircreate", Kind::Later),
    ("dirdelete", Kind::Later),
    ("dirstat", Kind::Later),
    ("gfapi", Kind::Remote),
    ("gfapi_async", Kind::Remote),
    ("http", Kind::Remote),
    ("ime_aio", Kind::Remote),
    ("ime_psync", Kind::Remote),
    ("ime_psyncv", Kind::Remote),
    ("io_uring_cmd", Kind::Hardware),
    ("libblkio", Kind::Hardware),
    ("libcufile", Kind::Hardware),
    ("libhdfs", Kind::Remote),
    ("libhipfile", Kind::Hardware),
    ("libiscsi", Kind::Network),
    ("libpmem", Kind::Hardware),
    ("libzbc", Kind::Hardware),
    ("mtd", Kind::Hardware),
    ("nbd", Kind::Network),
    ("net", Kind::Network),
    ("netsplice", Kind::Network),
    ("nfs", Kind::Network),
    ("page_fault", Kind::Later),
    ("pmemblk", Kind::Hardware),
    ("rados", Kind::Remote),
    ("rbd", Kind::Remote),
    ("rdma", Kind::Network),
    ("sg", Kind::Hardware),
    ("solarisaio", Kind::OtherOs),
    ("splice", Kind::Later),
    ("windowsaio", Kind::OtherOs),
    ("xnvme", Kind::Hardware),
];

/// The kind of fio's engine `name`, if fio has such an engine and iolab does not.
pub fn kind(name: &str) -> Option<Kind> {
    FIO_ENGINES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, k)| *k)
}
