//! `/proc/diskstats` and iostat's extended columns computed from two reads.

use crate::sys::blockdev::Disk;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The counters of one line of `/proc/diskstats` (fields 4-14).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStat {
    /// Reads completed.
    pub reads: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Sectors (512 B) read.
    pub read_sectors: u64,
    /// ms spent reading.
    pub read_ticks: u64,
    /// Writes completed.
    pub writes: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// ms spent writing.
    pub write_ticks: u64,
    /// I/Os in progress.
    pub in_flight: u64,
    /// ms the device was busy.
    pub io_ticks: u64,
    /// Weighted ms (queue time × depth).
    pub time_in_queue: u64,
}

/// Parses the text of `/proc/diskstats`.
pub fn parse(text: &str) -> BTreeMap<String, DiskStat> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        m.insert(
            f[2].to_string(),
            DiskStat {
                reads: n(3),
                read_merges: n(4),
                read_sectors: n(5),
                read_ticks: n(6),
                writes: n(7),
                write_merges: n(8),
                write_sectors: n(9),
                write_ticks: n(10),
                in_flight: n(11),
                io_ticks: n(12),
                time_in_queue: n(13),
            },
        );
    }
    m
}

/// Reads `/proc/diskstats`.
pub fn read_all() -> std::io::Result<BTreeMap<String, DiskStat>> {
    Ok(parse(&std::fs::read_to_string("/proc/diskstats")?))
}

fn diskstats_source() -> &'static str {
    "/proc/diskstats"
}

/// One disk over an interval: the raw deltas and iostat's columns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DiskDelta {
    /// The disk.
    pub disk: Disk,
    /// Always "/proc/diskstats".
    #[serde(skip_deserializing, default = "diskstats_source")]
    pub source: &'static str,
    /// Interval length in ns.
    pub elapsed_ns: u64,
    /// Reads completed.
    pub read_ios: u64,
    /// Reads merged.
    pub read_merges: u64,
    /// Sectors read.
    pub read_sectors: u64,
    /// ms reading.
    pub read_ticks: u64,
    /// Writes completed.
    pub write_ios: u64,
    /// Writes merged.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// ms writing.
    pub write_ticks: u64,
    /// ms busy.
    pub io_ticks: u64,
    /// Weighted ms.
    pub in_queue: u64,
}

impl DiskDelta {
    /// `b - a` over `elapsed_ns`.
    pub fn new(disk: Disk, a: &DiskStat, b: &DiskStat, elapsed_ns: u64) -> DiskDelta {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        DiskDelta {
            disk,
            source: "/proc/diskstats",
            elapsed_ns,
            read_ios: d(a.reads, b.reads),
            read_merges: d(a.read_merges, b.read_merges),
            read_sectors: d(a.read_sectors, b.read_sectors),
            read_ticks: d(a.read_ticks, b.read_ticks),
            write_ios: d(a.writes, b.writes),
            write_merges: d(a.write_merges, b.write_merges),
            write_sectors: d(a.write_sectors, b.write_sectors),
            write_ticks: d(a.write_ticks, b.write_ticks),
            io_ticks: d(a.io_ticks, b.io_ticks),
            in_queue: d(a.time_in_queue, b.time_in_queue),
        }
    }

    /// Adds another interval of the same disk.
    pub fn add(&mut self, o: &DiskDelta) {
        self.read_ios += o.read_ios;
        self.read_merges += o.read_merges;
        self.read_sectors += o.read_sectors;
        self.read_ticks += o.read_ticks;
        self.write_ios += o.write_ios;
        self.write_merges += o.write_merges;
        self.write_sectors += o.write_sectors;
        self.write_ticks += o.write_ticks;
        self.io_ticks += o.io_ticks;
        self.in_queue += o.in_queue;
    }

    fn secs(&self) -> f64 {
        (self.elapsed_ns as f64 / 1e9).max(1e-9)
    }

    /// iostat -x columns, as iostat computes them (MB = MiB, kB = KiB).
    pub fn iostat(&self) -> BTreeMap<&'static str, f64> {
        let s = self.secs();
        let ms = s * 1000.0;
        let per = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        BTreeMap::from([
            ("r/s", self.read_ios as f64 / s),
            ("rMB/s", self.read_sectors as f64 / 2048.0 / s),
            ("rrqm/s", self.read_merges as f64 / s),
            ("r_await", per(self.read_ticks, self.read_ios)),
            ("rareq-sz", per(self.read_sectors, self.read_ios) / 2.0),
            ("w/s", self.write_ios as f64 / s),
            ("wMB/s", self.write_sectors as f64 / 2048.0 / s),
            ("wrqm/s", self.write_merges as f64 / s),
            ("w_await", per(self.write_ticks, self.write_ios)),
            ("wareq-sz", per(self.write_sectors, self.write_ios) / 2.0),
            ("aqu-sz", self.in_queue as f64 / ms),
            ("%util", (100.0 * self.io_ticks as f64 / ms).min(100.0)),
        ])
    }

    /// Columns in iostat's order.
    pub const IOSTAT_ORDER: [&'static str; 12] = [
        "r/s", "rMB/s", "rrqm/s", "r_await", "rareq-sz", "w/s", "wMB/s", "wrqm/s", "w_await",
        "wareq-sz", "aqu-sz", "%util",
    ];

    /// fio's `disk_util[]` entry.
    pub fn fio_disk_util(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.disk.name,
            "read_ios": self.read_ios,
            "write_ios": self.write_ios,
            "read_merges": self.read_merges,
            "write_merges": self.write_merges,
            "read_ticks": self.read_ticks,
            "write_ticks": self.write_ticks,
            "in_queue": self.in_queue,
            "util": self.iostat()["%util"],
        })
    }
}
