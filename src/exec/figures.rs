//! An exec's key figures, under the names runs use (so `history`,
//! `compare` and `export` read them like any run's): per successful run,
//! and their mean as the whole.

use super::{ExecResult, ExecRun};
use crate::metrics::figures::{Figures, Summary};

/// The key figures of one run.
pub fn of_run(r: &ExecRun) -> Figures {
    let mut f = Figures::new();
    let secs = r.wall_ns as f64 / 1e9;
    let (user, sys) = (
        r.rusage("user_us") as f64 / 1e6,
        r.rusage("sys_us") as f64 / 1e6,
    );
    let (rchar, wchar) = (r.io("rchar") as f64, r.io("wchar") as f64);
    let (syscr, syscw) = (r.io("syscr") as f64, r.io("syscw") as f64);
    let mut put = |k: &str, v: f64| {
        f.insert(k.to_string(), v);
    };
    put("time_s", secs);
    put("cpu_user_s", user);
    put("cpu_sys_s", sys);
    if !r.io.is_empty() {
        // What it read is its work (a scan, a copy's source): `bytes` and
        // MiB/s; what it wrote (often to /dev/null or a pipe) is apart.
        // `ops` are all its read and write calls. Calls per second are no
        // rate of work (a larger buffer makes fewer): no IOPS.
        put("bytes", rchar);
        put("ops", syscr + syscw);
        put("read_bytes", rchar);
        put("write_bytes", wchar);
        put("read_ios", syscr);
        put("write_ios", syscw);
        put("storage_read_bytes", r.io("read_bytes") as f64);
        put("storage_write_bytes", r.io("write_bytes") as f64);
        if secs > 0.0 {
            put("bw_mib_s", rchar / secs / 1048576.0);
            put("read_bw_bytes_per_s", rchar / secs);
            put("write_bw_bytes_per_s", wchar / secs);
        }
    }
    if secs > 0.0 {
        put("cpu_pct", 100.0 * (user + sys) / secs);
    }
    if !r.disks.is_empty() {
        put(
            "dev_reads",
            r.disks.iter().map(|d| d.read_ios).sum::<u64>() as f64,
        );
        put(
            "dev_writes",
            r.disks.iter().map(|d| d.write_ios).sum::<u64>() as f64,
        );
    }
    if let Some(c) = &r.cache {
        put("cache_hits", c.hits as f64);
        put("cache_misses", c.misses as f64);
    }
    f
}

/// The key figures: one sample per successful run (failed and
/// interrupted runs are left out), and their mean as the whole.
pub fn summary(e: &ExecResult) -> Summary {
    let reps: Vec<Figures> = e.ok_runs().map(of_run).collect();
    // Each figure's mean over the runs that have it.
    let mut sums: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for f in &reps {
        for (k, v) in f {
            let s = sums.entry(k.clone()).or_insert((0.0, 0.0));
            *s = (s.0 + v, s.1 + 1.0);
        }
    }
    let total = sums.into_iter().map(|(k, (sum, n))| (k, sum / n)).collect();
    Summary { total, reps }
}
