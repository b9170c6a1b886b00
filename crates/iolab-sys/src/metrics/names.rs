//! The names figures have outside iolab: in `export`, `history --format
//! csv|json`, the database's views (`v_runs`) and `docs/schema.md`. One
//! scheme: `[direction_]quantity[_statistic][_unit]`, lower case, words
//! joined by `_`; the direction is `read`, `write` or `trim` (none: all
//! directions together); the unit is a suffix (`_ns`, `_s`, `_bytes`,
//! `_bytes_per_s`, `_pct`), and counts have none (`ios`, `iops`).
//!
//! The whole-run figures are read from the stored key figures
//! ([`super::figures::METRICS`], kept under their historical keys so
//! older databases read the same); the per-direction ones are stored under
//! their own names by `iolab::runner::RunResult::summary` (runs stored by
//! an iolab before them have none).

use super::figures::Figures;

/// The directions of the per-direction figures.
pub const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// A figure of one direction, stored as `DIRECTION_SUFFIX`.
#[derive(Debug, Clone, Copy)]
pub struct PerDirection {
    /// The name after `DIRECTION_`.
    pub suffix: &'static str,
    /// Always a whole number.
    pub integer: bool,
    /// What it is.
    pub meaning: &'static str,
}

/// The per-direction figures, in column order.
pub const PER_DIRECTION: &[PerDirection] = &[
    PerDirection {
        suffix: "ios",
        integer: true,
        meaning: "I/Os completed",
    },
    PerDirection {
        suffix: "bytes",
        integer: true,
        meaning: "bytes transferred",
    },
    PerDirection {
        suffix: "iops",
        integer: false,
        meaning: "I/Os per second of run time",
    },
    PerDirection {
        suffix: "bw_bytes_per_s",
        integer: false,
        meaning: "bytes per second of run time",
    },
    PerDirection {
        suffix: "clat_mean_ns",
        integer: false,
        meaning: "mean completion latency (total latency for synchronous engines), ns",
    },
    PerDirection {
        suffix: "clat_p50_ns",
        integer: true,
        meaning: "median completion latency, ns",
    },
    PerDirection {
        suffix: "clat_p99_ns",
        integer: true,
        meaning: "99th percentile of completion latency, ns",
    },
    PerDirection {
        suffix: "clat_p99_9_ns",
        integer: true,
        meaning: "99.9th percentile of completion latency, ns",
    },
    PerDirection {
        suffix: "clat_max_ns",
        integer: true,
        meaning: "largest completion latency, ns",
    },
];

/// A whole-run figure: its exported name and the stored key figure it
/// comes from.
#[derive(Debug, Clone, Copy)]
pub struct Total {
    /// Exported name.
    pub name: &'static str,
    /// Key in the stored [`Figures`].
    pub key: &'static str,
    /// The stored value times this is the exported one (1, 2^20 for MiB
    /// to bytes: both exact; 1000 for µs to ns, rounded back to the whole
    /// nanoseconds the figure was made of).
    pub scale: f64,
    /// Always a whole number.
    pub integer: bool,
    /// What it is.
    pub meaning: &'static str,
}

/// The whole-run figures, in column order.
pub const TOTALS: &[Total] = &[
    Total {
        name: "time_s",
        key: "time_s",
        scale: 1.0,
        integer: false,
        meaning: "run time, s (repetitions added up)",
    },
    Total {
        name: "ios",
        key: "ops",
        scale: 1.0,
        integer: true,
        meaning: "reads and writes completed (operations for a tree command)",
    },
    Total {
        name: "bytes",
        key: "bytes",
        scale: 1.0,
        integer: true,
        meaning: "bytes read, written and trimmed",
    },
    Total {
        name: "iops",
        key: "iops",
        scale: 1.0,
        integer: false,
        meaning: "`ios` per second of run time",
    },
    Total {
        name: "bw_bytes_per_s",
        key: "bw_mib_s",
        scale: 1_048_576.0,
        integer: false,
        meaning: "`bytes` per second of run time",
    },
    Total {
        name: "clat_p50_ns",
        key: "p50_us",
        scale: 1000.0,
        integer: true,
        meaning: "median completion latency of all directions, ns",
    },
    Total {
        name: "clat_p99_ns",
        key: "p99_us",
        scale: 1000.0,
        integer: true,
        meaning: "99th percentile of completion latency of all directions, ns",
    },
    Total {
        name: "cpu_pct",
        key: "cpu_pct",
        scale: 1.0,
        integer: false,
        meaning: "user + system CPU time of the workers, % of their run time",
    },
    Total {
        name: "disk_read_ios",
        key: "dev_reads",
        scale: 1.0,
        integer: true,
        meaning: "reads the disks under the files completed (diskstats)",
    },
    Total {
        name: "disk_write_ios",
        key: "dev_writes",
        scale: 1.0,
        integer: true,
        meaning: "writes the disks under the files completed (diskstats)",
    },
    Total {
        name: "inodes",
        key: "inodes",
        scale: 1.0,
        integer: true,
        meaning: "inodes of a tree command's tree",
    },
];

/// The figures of `iolab exec` runs, exported after each direction's
/// (and so last in `v_runs`, whose migration 7 added them).
pub const EXEC_TOTALS: &[Total] = &[
    Total {
        name: "cpu_user_s",
        key: "cpu_user_s",
        scale: 1.0,
        integer: false,
        meaning: "user CPU time of the command and the children it waited for, s",
    },
    Total {
        name: "cpu_sys_s",
        key: "cpu_sys_s",
        scale: 1.0,
        integer: false,
        meaning: "system CPU time of the same, s",
    },
    Total {
        name: "storage_read_bytes",
        key: "storage_read_bytes",
        scale: 1.0,
        integer: true,
        meaning: "bytes the command read from storage (/proc/PID/io read_bytes)",
    },
    Total {
        name: "storage_write_bytes",
        key: "storage_write_bytes",
        scale: 1.0,
        integer: true,
        meaning: "bytes the command sent to storage (/proc/PID/io write_bytes)",
    },
    Total {
        name: "cache_hits",
        key: "cache_hits",
        scale: 1.0,
        integer: true,
        meaning: "pages of the named files the command read from the page cache",
    },
    Total {
        name: "cache_misses",
        key: "cache_misses",
        scale: 1.0,
        integer: true,
        meaning: "pages of the named files that came into the cache during the run",
    },
];

/// One exported figure column: its name, and its value in a run's stored
/// figures.
#[derive(Debug, Clone)]
pub struct FigureColumn {
    /// Exported name.
    pub name: String,
    /// Key in the stored [`Figures`].
    pub key: String,
    /// See [`Total::scale`].
    pub scale: f64,
    /// Always a whole number.
    pub integer: bool,
    /// What it is.
    pub meaning: &'static str,
}

/// A figure's value: a whole number or a real one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// Whole.
    Int(i64),
    /// Real (finite).
    Real(f64),
}

impl FigureColumn {
    /// The value in `f`, or `None` when it was not measured.
    pub fn value(&self, f: &Figures) -> Option<Number> {
        let v = f.get(&self.key)? * self.scale;
        if !v.is_finite() {
            None
        } else if self.integer {
            Some(Number::Int(v.round() as i64))
        } else {
            Some(Number::Real(v))
        }
    }
}

/// Every exported figure, in column order: the whole-run ones, then each
/// direction's.
pub fn figure_columns() -> Vec<FigureColumn> {
    let column = |t: &Total| FigureColumn {
        name: t.name.to_string(),
        key: t.key.to_string(),
        scale: t.scale,
        integer: t.integer,
        meaning: t.meaning,
    };
    let totals = TOTALS.iter().map(column);
    let dirs = DIRECTIONS.iter().flat_map(|d| {
        PER_DIRECTION.iter().map(move |p| FigureColumn {
            name: format!("{d}_{}", p.suffix),
            key: format!("{d}_{}", p.suffix),
            scale: 1.0,
            integer: p.integer,
            meaning: p.meaning,
        })
    });
    let exec = EXEC_TOTALS.iter().map(column);
    totals.chain(dirs).chain(exec).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_scheme() {
        let cols = figure_columns();
        assert_eq!(
            cols.len(),
            TOTALS.len() + 3 * PER_DIRECTION.len() + EXEC_TOTALS.len()
        );
        for c in &cols {
            assert!(
                c.name
                    .chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_'),
                "{}",
                c.name
            );
        }
        let mut names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), cols.len(), "unique");
    }

    #[test]
    fn scaled_values_are_exact() {
        let f = Figures::from([
            ("p99_us".to_string(), 123_457.0 / 1000.0),
            ("bw_mib_s".to_string(), 123_456_789.25 / 1_048_576.0),
        ]);
        let col = |n: &str| figure_columns().into_iter().find(|c| c.name == n).unwrap();
        assert_eq!(col("clat_p99_ns").value(&f), Some(Number::Int(123_457)));
        assert_eq!(
            col("bw_bytes_per_s").value(&f),
            Some(Number::Real(123_456_789.25))
        );
        assert_eq!(col("iops").value(&f), None);
    }
}
