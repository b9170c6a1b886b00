//! What a clone's planner needs of the job's access options (fio's
//! `bssplit`, `blockalign`, `rw` suffixes, `percentage_random`,
//! `norandommap`, `random_distribution`, strided zones, `io_size`), settled
//! once per clone so the per-I/O path only reads them.

use crate::job::groups::access::{Distribution, Split, Zones};
use crate::job::{JobSpec, Pattern};

/// How random offsets are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum DistPlan {
    /// Uniform over the blocks.
    Uniform,
    /// fio's zipf, pareto or normal (see [`super::dist`]).
    Skewed(Distribution),
    /// fio's zoned (`abs` false: zone bounds in percent of the region) or
    /// zoned_abs (in bytes): per direction, for each draw 1..=100 the zone
    /// `(start, end)` it falls in; empty: uniform for that direction.
    Zoned {
        /// Bounds in bytes rather than percent.
        abs: bool,
        /// Per direction, 100 entries or none.
        index: [Vec<(u64, u64)>; 2],
    },
}

/// The access settings of one clone's plan.
#[derive(Debug, Clone)]
pub struct AccessPlan {
    /// Smallest and largest size of each direction (read, write).
    pub sizes: [(u64, u64); 2],
    /// fio's `bssplit` per direction (empty: sizes from the range).
    pub split: [Split; 2],
    /// Random offsets are multiples of this, per direction.
    pub align: [u64; 2],
    /// Sizes of a range need not be multiples of its smallest.
    pub unaligned: bool,
    /// `sizes` are for (sequential, random), not (read, write).
    pub bs_is_seq_rand: bool,
    /// Bytes added to each next sequential offset (`rw=read:4k`).
    pub seq_add: i64,
    /// A new random offset every this many I/Os (`rw=randread:8`).
    pub seq_nr: u64,
    /// Percent of a random job's I/Os that are random, per direction.
    pub perc_rand: [u32; 2],
    /// Each block at most once per loop (fio's random map).
    pub map: bool,
    /// How random offsets are drawn.
    pub dist: DistPlan,
    /// fio's strided zones.
    pub zones: Option<Zones>,
    /// Bytes of I/O in all (fio's `io_size` times `loops`).
    pub bytes_limit: Option<u64>,
    /// fio's `do_io` lets a pass of random writes without the map issue
    /// up to `io_size` bytes where that is more than `size` (backend.c:
    /// `total_bytes = max(size, io_size)` for `td_write && td_random &&
    /// norandommap`); 0 when that does not apply (not `time_based`).
    pub overwrite_pass: u64,
}

impl AccessPlan {
    /// Plain access: sizes `bs_min..=bs_max` in both directions, uniform
    /// random offsets, each block once per loop.
    pub fn plain(bs_min: u64, bs_max: u64) -> AccessPlan {
        AccessPlan {
            sizes: [(bs_min, bs_max); 2],
            split: Default::default(),
            align: [bs_min; 2],
            unaligned: false,
            bs_is_seq_rand: false,
            seq_add: 0,
            seq_nr: 1,
            perc_rand: [100; 2],
            map: true,
            dist: DistPlan::Uniform,
            zones: None,
            bytes_limit: None,
            overwrite_pass: 0,
        }
    }

    /// The settings of `job` (as fio's `fixup_options` settles them).
    pub fn of_job(job: &JobSpec) -> AccessPlan {
        let a = &job.access;
        let sizes = a.sizes;
        let random = job.pattern == Pattern::Random;
        // fio: blockalign only for random jobs, else the smallest size.
        let align = match a.blockalign {
            Some(ba) if random => ba,
            _ => [sizes[0].0, sizes[1].0],
        };
        let dist = match &a.distribution {
            Distribution::Random => DistPlan::Uniform,
            Distribution::Zoned(z) => DistPlan::Zoned {
                abs: false,
                index: [
                    zone_index(&z[0], |s| s as u64),
                    zone_index(&z[1], |s| s as u64),
                ],
            },
            Distribution::ZonedAbs(z) => DistPlan::Zoned {
                abs: true,
                index: [zone_index(&z[0], |s| s), zone_index(&z[1], |s| s)],
            },
            other => DistPlan::Skewed(other.clone()),
        };
        // fio turns the map off for any blockalign other than the smallest
        // size and for every non-uniform distribution; its lfsr generator
        // visits each block once without a map.
        let aligned = align == [sizes[0].0, sizes[1].0];
        let map = dist == DistPlan::Uniform
            && ((aligned && !a.norandommap) || a.random_generator == "lfsr");
        // fio's td->o.norandommap as the rest of fio reads it: set by the
        // option and by what turns the map off (init.c), not by lfsr.
        let norandommap = a.norandommap || !aligned || dist != DistPlan::Uniform;
        // fio sorts a split by share (a stable sort: ties keep their order).
        let mut split = a.bssplit.clone();
        for s in &mut split {
            s.sort_by_key(|&(_, perc)| perc);
        }
        AccessPlan {
            sizes,
            split,
            align,
            unaligned: a.bs_unaligned,
            bs_is_seq_rand: a.bs_is_seq_rand,
            seq_add: a.seq_add,
            seq_nr: a.seq_nr.max(1),
            perc_rand: a.percentage_random,
            map,
            dist,
            zones: a.zones,
            bytes_limit: (a.io_size > 0 && !job.time_based)
                .then(|| a.io_size.saturating_mul(job.loops)),
            overwrite_pass: if random && norandommap && job.writes() && !job.time_based {
                a.io_size
            } else {
                0
            },
        }
    }

    /// True when an I/O can cover more than one slot of a map over
    /// `bs_min`-byte slots (sizes that vary, or differ by direction).
    pub fn spans_slots(&self, bs_min: u64) -> bool {
        self.sizes
            .iter()
            .any(|&(lo, hi)| lo != bs_min || hi != bs_min)
    }

    /// True when every I/O of a random read job is a uniform draw over the
    /// region, its size uniform in `lo..=hi`: what the fast paths serve.
    pub fn uniform_reads(&self, lo: u64, hi: u64) -> bool {
        self.sizes[0] == (lo, hi)
            && self.split[0].is_empty()
            && !self.unaligned
            && self.align[0] == lo
            && self.seq_nr == 1
            && self.perc_rand[0] == 100
            && self.dist == DistPlan::Uniform
            && self.zones.is_none()
            && self.bytes_limit.is_none()
            && !self.bs_is_seq_rand
    }

    /// True when a random job's loop writes each block at most once: every
    /// write is a draw from the map. Sequential stretches (`rw=randwrite:8`,
    /// `percentage_random` below 100) are not marked in fio's map, so they
    /// may write a block a draw wrote, or the other way round; strided
    /// zones that wrap around a file's end draw a zone again with a new
    /// map (fio keeps one map over the zones' relative blocks).
    pub fn writes_once(&self) -> bool {
        self.map && self.seq_nr == 1 && self.perc_rand[1] == 100 && self.zones.is_none()
    }
}

/// fio's zone index of one direction: for each draw v in 1..=100, the
/// bounds of the zone whose access share covers it (in the unit of the
/// sizes: percent or bytes). Empty for no zones.
fn zone_index<T: Copy>(zones: &[(u32, T)], size: impl Fn(T) -> u64) -> Vec<(u64, u64)> {
    let mut index = Vec::with_capacity(100);
    let mut start = 0u64;
    for &(access, s) in zones {
        let end = start.saturating_add(size(s));
        for _ in 0..access {
            index.push((start, end));
        }
        start = end;
    }
    if let Some(&last) = index.last() {
        index.resize(100, last);
    }
    index
}

/// Where clone `clone`'s region starts in a file of `fsize` bytes (fio's
/// `get_start_offset`): `offset` (or `offset=N%` of the file) plus `clone`
/// times `offset_increment`; a share of the file is rounded up to the
/// smallest block, as fio.
pub fn region_start(job: &JobSpec, clone: u32, fsize: u64) -> u64 {
    let a = &job.access;
    let step = (clone as u64).saturating_mul(a.offset_increment);
    match a.offset_percent {
        Some(p) => {
            let raw = ((fsize as u128 * p as u128 / 100) as u64).saturating_add(step);
            let bs = job.bs_min.max(1);
            raw.div_ceil(bs).saturating_mul(bs)
        }
        None => job.offset.saturating_add(step),
    }
}

/// The length of a region starting at `start` in a file of `fsize` bytes:
/// `per_file` (`size` split over the files) or the rest of the file, and
/// with `size=N%` that share of the file, within it and a multiple of the
/// smallest block (fio).
pub fn region_len(job: &JobSpec, start: u64, fsize: u64, per_file: Option<u64>) -> u64 {
    let avail = fsize.saturating_sub(start);
    match job.access.size_percent {
        Some(p) if p < 100 => {
            let len = ((fsize as u128 * p as u128 / 100) as u64).min(avail);
            len - len % job.bs_min.max(1)
        }
        _ => per_file.map_or(avail, |pf| pf.min(avail)),
    }
}
