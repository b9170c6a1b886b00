//! Where the next I/O of one file goes: fio's sequential offsets (with the
//! holes and backward steps of `rw=read:N`), its random ones (the map, the
//! distributions, `blockalign`) and its strided zones, ported from fio's
//! io_u.c so the same job visits the same offsets.

use super::access::{AccessPlan, DistPlan};
use super::dist::Skew;
use super::draws::Draws;
use super::freemap::FreeMap;
use super::shuffle::{Order, below32};
use super::unit::Region;
use crate::job::groups::access::Zones;

/// Most slots a map of free runs ([`FreeMap`], 32 MiB) covers; a larger
/// region with sizes that vary is dealt in whole slots by the keyed order
/// (its I/Os may then overlap: docs/fio-compat.md, bsrange).
const FREEMAP_MAX: u64 = 1 << 28;

/// One file of a clone while its I/Os are planned.
#[derive(Debug, Clone)]
pub(super) struct FileState {
    /// The part of the file the clone works on.
    pub region: Region,
    /// Bytes to do in this loop.
    pub target: u64,
    /// Bytes done in this loop.
    pub done: u64,
    /// The random map (each block once per loop), when the job keeps one.
    pub order: Option<Order>,
    /// fio's `last_pos` per direction: the end of the last I/O (absolute).
    pub last: [u64; 2],
    /// Nothing left to do in this loop.
    pub finished: bool,
    /// State of a zipf, pareto or normal distribution.
    pub skew: Option<Skew>,
    /// Start of the current strided zone, from the region's start.
    pub zone: u64,
    /// The slots already covered this loop, when I/Os of the map can span
    /// several slots (sizes that vary): fio's axmap, in place of `order`.
    pub used: Option<FreeMap>,
}

impl FileState {
    /// A file over `region` doing `target` bytes a loop.
    pub fn new(region: Region, target: u64) -> FileState {
        FileState {
            region,
            target,
            done: 0,
            order: None,
            last: [region.start; 2],
            finished: target == 0,
            skew: None,
            zone: 0,
            used: None,
        }
    }

    /// Where offsets are counted from: the region's start, or the zone's.
    #[inline]
    pub fn base(&self) -> u64 {
        self.region.start + self.zone
    }

    /// Bytes random offsets spread over (fio's `last_block` size): the
    /// region, or a zone's range, whole even where the file ends before
    /// it (an offset past the end then ends the file's loop, as fio).
    #[inline]
    fn span(&self, zones: Option<Zones>) -> u64 {
        match zones {
            Some(z) => z.range,
            None => self.region.len,
        }
    }

    /// Starts a loop: positions back at the start, a new order (`key`;
    /// `tables`: see [`Order::new`]).
    pub fn restart(
        &mut self,
        a: &AccessPlan,
        bs_min: u64,
        (random, key, tables): (bool, u64, bool),
        rng: &mut Draws,
    ) {
        self.done = 0;
        self.zone = 0;
        self.last = [self.region.start; 2];
        self.finished = self.target == 0;
        if !random || self.finished {
            return;
        }
        if a.map {
            self.new_order(a, bs_min, key, tables);
        } else if let DistPlan::Skewed(d) = &a.dist
            && self.skew.is_none()
        {
            // fio: blocks of the smallest size of either direction.
            let unit = a.sizes[0].0.min(a.sizes[1].0);
            self.skew = Skew::new(d, self.span(a.zones).div_ceil(unit), rng);
        }
    }

    /// A fresh random order over the span's slots (reusing a table).
    pub fn new_order(&mut self, a: &AccessPlan, bs_min: u64, key: u64, tables: bool) {
        let slots = (self.span(a.zones) / bs_min).max(1);
        if a.spans_slots(bs_min) && slots <= FREEMAP_MAX {
            match &mut self.used {
                Some(u) if u.len() == slots => u.clear(),
                u => *u = Some(FreeMap::new(slots)),
            }
            return;
        }
        match &mut self.order {
            Some(o) if o.len() == slots => o.restart(key),
            _ => self.order = Some(Order::new(slots, key, tables)),
        }
    }

    /// fio's `setup_strided_zone_mode`, before an I/O in direction `d`:
    /// the next zone once `size` bytes are done in the zone (`zone_bytes`,
    /// the job's: fio's `td->zone_bytes` counts the I/Os of all files, so
    /// with several the zone moves on in the file whose turn it is), the
    /// zone's start past its range (wrapping at the file's end), and a new
    /// map and positions each time the bytes pass a multiple of its range.
    /// True when the map must be made anew.
    pub fn enter_zone(&mut self, z: Zones, d: usize, zone_bytes: &mut u64) -> bool {
        if *zone_bytes >= z.size {
            *zone_bytes = 0;
            self.zone = self.zone.saturating_add(z.range).saturating_add(z.skip);
            if self.zone >= self.region.len {
                self.zone = 0;
            }
            self.last[d] = self.base();
        }
        if self.last[d] >= self.base().saturating_add(z.range) {
            self.last[d] = self.base();
        }
        if zone_bytes.is_multiple_of(z.range) {
            self.last = [self.base(); 2];
            return true;
        }
        false
    }

    /// fio's `get_next_seq_offset`: the next sequential offset of
    /// direction `d` from [`Self::base`], `add` bytes after the last I/O
    /// (`rw=read:N`; negative: backwards, wrapping at the ends as fio). The
    /// file's size is taken as the region's end; `None` past it (the
    /// file's loop is over).
    pub fn seq_offset(&mut self, d: usize, add: i64) -> Option<u64> {
        let base = self.base();
        let io_size = self.region.len;
        let end = self.region.start + io_size;
        if self.last[d] >= end {
            return None;
        }
        let top = if end > io_size { io_size } else { end };
        if self.last[d] == base && base != 0 && add < 0 {
            self.last[d] = top;
        }
        let mut pos = self.last[d].wrapping_sub(base);
        if pos != 0 && add != 0 {
            pos = pos.wrapping_add(add as u64);
            if pos >= end {
                pos = if add > 0 {
                    base
                } else {
                    top.wrapping_add(add as u64)
                };
            }
        }
        Some(pos)
    }

    /// fio's random offset of direction `d` from [`Self::base`]: a slot of
    /// the map, or a block drawn from the distribution, in units of the
    /// direction's `blockalign`. `None` when the map is used up.
    pub fn random_offset(
        &mut self,
        a: &AccessPlan,
        d: usize,
        bs_min: u64,
        r: u32,
        rng: &mut Draws,
    ) -> Option<u64> {
        let ba = a.align[d];
        if let Some(used) = &self.used {
            // fio's draw: a uniform slot, or the next free one after it.
            let n = used.len();
            let b = if n <= 1 << 32 {
                below32(r, n)
            } else {
                rng.below(n)
            };
            let at = used.next_free(b)? * bs_min;
            return Some(at - at % ba);
        }
        if let Some(order) = self.order.as_mut() {
            let at = order.next(r)? * bs_min;
            return Some(at - at % ba);
        }
        // fio's `last_block`: the blocks an I/O of the smallest size fits.
        let span = self.span(a.zones);
        let min = a.sizes[d].0;
        let lastb = if min > ba {
            span.saturating_sub(min - ba)
        } else {
            span
        } / ba;
        let b = match &a.dist {
            // The draw's high half where it spans the blocks: one draw per
            // I/O, as the fast path takes it.
            DistPlan::Uniform if lastb <= 1 << 32 => below32(r, lastb),
            DistPlan::Uniform => rng.below(lastb),
            DistPlan::Skewed(_) => self.skew.as_ref().map_or(0, |s| s.next(rng)),
            DistPlan::Zoned { abs, index } => match index[d].get(rng.below(100) as usize) {
                None => rng.below(lastb),
                Some(&(start, end)) if *abs => {
                    let (s, e) = ((start / ba).min(lastb), (end / ba).min(lastb));
                    s + rng.below(e - s)
                }
                Some(&(start, end)) => start * lastb / 100 + rng.below(lastb * (end - start) / 100),
            },
        };
        Some((b * ba).min(span.saturating_sub(min)))
    }

    /// fio's `mark_random_map`: marks the slots an I/O of `len` bytes at
    /// `rel` (from [`Self::base`]) covers, up to the first one already
    /// covered, and returns the length cut to them (an I/O never overlaps
    /// another of the loop). An I/O whose first slot is taken (an offset
    /// aligned below its slot) is left whole.
    pub fn mark_used(&mut self, rel: u64, len: u64, bs_min: u64) -> u64 {
        let Some(used) = self.used.as_mut() else {
            return len;
        };
        match used.take_run(rel / bs_min, len.div_ceil(bs_min)) {
            0 => len,
            n => len.min(n * bs_min),
        }
    }
}
