//! Process and system counter sources: `/proc/self/io`,
//! `getrusage(RUSAGE_SELF)` and the I/O and reclaim lines of `/proc/vmstat`.

use super::{Counter, Values};
use crate::metrics::format::bytes_iec;

/// `/proc/vmstat` counters worth seeing beside an I/O experiment.
pub const VMSTAT_KEYS: &[&str] = &[
    "pgpgin",
    "pgpgout",
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "workingset_refault_file",
    "workingset_activate_file",
    "workingset_restore_file",
    "pgactivate",
    "pgdeactivate",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_kswapd",
    "pgscan_direct",
    "nr_dirtied",
    "nr_written",
];

/// Parses `key value` or `key: value` lines.
pub fn parse_pairs(text: &str) -> Values {
    text.lines()
        .filter_map(|l| {
            let mut it = l
                .split(|c: char| c == ':' || c.is_whitespace())
                .filter(|s| !s.is_empty());
            let k = it.next()?;
            let v = it.next()?.parse().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

fn get(d: &Values, k: &str) -> u64 {
    d.get(k).copied().unwrap_or(0)
}

/// `/proc/self/io`: rchar, wchar, syscr, syscw, read_bytes, write_bytes,
/// cancelled_write_bytes (the whole process, all threads).
pub struct ProcessIo;

impl Counter for ProcessIo {
    fn label(&self) -> &'static str {
        "process I/O"
    }

    fn source(&self) -> &'static str {
        "/proc/self/io"
    }

    fn read(&self) -> Option<Values> {
        Some(parse_pairs(&std::fs::read_to_string("/proc/self/io").ok()?))
    }

    fn line(&self, d: &Values) -> Option<String> {
        let b = |k| bytes_iec(get(d, k) as f64);
        Some(format!(
            "logical read {} (rchar), physical read {} (read_bytes), logical write {}, physical write {}",
            b("rchar"),
            b("read_bytes"),
            b("wchar"),
            b("write_bytes")
        ))
    }
}

/// `getrusage(RUSAGE_SELF)`: CPU µs, faults, context switches, blocks.
pub struct Rusage;

impl Counter for Rusage {
    fn label(&self) -> &'static str {
        "rusage"
    }

    fn source(&self) -> &'static str {
        "getrusage(RUSAGE_SELF)"
    }

    fn read(&self) -> Option<Values> {
        Some(crate::sys::rusage::process_counters())
    }

    fn line(&self, _d: &Values) -> Option<String> {
        None
    }
}

/// The [`VMSTAT_KEYS`] present in `/proc/vmstat`.
pub struct Vmstat;

impl Counter for Vmstat {
    fn label(&self) -> &'static str {
        "vm"
    }

    fn source(&self) -> &'static str {
        "/proc/vmstat"
    }

    fn read(&self) -> Option<Values> {
        let all = parse_pairs(&std::fs::read_to_string("/proc/vmstat").ok()?);
        Some(
            all.into_iter()
                .filter(|(k, _)| VMSTAT_KEYS.contains(&k.as_str()))
                .collect(),
        )
    }

    fn line(&self, d: &Values) -> Option<String> {
        Some(format!(
            "pgpgin={} KiB, pgmajfault={}, workingset_refault_file={}, pgsteal={}",
            get(d, "pgpgin"),
            get(d, "pgmajfault"),
            get(d, "workingset_refault_file"),
            get(d, "pgsteal_kswapd") + get(d, "pgsteal_direct"),
        ))
    }
}
