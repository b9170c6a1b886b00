//! Process and system counters: `/proc/self/io`, `getrusage(RUSAGE_SELF)`
//! and the I/O and reclaim lines of `/proc/vmstat`.

use std::collections::BTreeMap;

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
pub fn parse_pairs(text: &str) -> BTreeMap<String, u64> {
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

/// `/proc/self/io`: rchar, wchar, syscr, syscw, read_bytes, write_bytes,
/// cancelled_write_bytes (the whole process, all threads).
pub fn proc_self_io() -> std::io::Result<BTreeMap<String, u64>> {
    Ok(parse_pairs(&std::fs::read_to_string("/proc/self/io")?))
}

/// The [`VMSTAT_KEYS`] present in `/proc/vmstat`.
pub fn vmstat() -> std::io::Result<BTreeMap<String, u64>> {
    let all = parse_pairs(&std::fs::read_to_string("/proc/vmstat")?);
    Ok(all
        .into_iter()
        .filter(|(k, _)| VMSTAT_KEYS.contains(&k.as_str()))
        .collect())
}

/// `getrusage(RUSAGE_SELF)`: CPU µs, faults, context switches, blocks.
pub fn rusage_self() -> BTreeMap<String, u64> {
    crate::sys::rusage::process_counters()
}
