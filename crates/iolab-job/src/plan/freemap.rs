//! fio's random map (its `axmap`) for I/Os that cover several slots: one
//! bit a slot, and one bit a word of slots that is full, so the next free
//! slot after a taken one is found without walking every word.

/// The slots of one loop taken so far.
#[derive(Debug, Clone)]
pub(super) struct FreeMap {
    /// One bit a slot.
    bits: Vec<u64>,
    /// One bit a word of `bits` with every slot taken.
    full: Vec<u64>,
    /// Slots in all.
    len: u64,
}

impl FreeMap {
    /// A map of `len` free slots.
    pub fn new(len: u64) -> FreeMap {
        let words = len.div_ceil(64) as usize;
        FreeMap {
            bits: vec![0; words],
            full: vec![0; words.div_ceil(64)],
            len,
        }
    }

    /// Slots in all.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Every slot free again (a new loop).
    pub fn clear(&mut self) {
        self.bits.fill(0);
        self.full.fill(0);
    }

    /// fio's `axmap_next_free`: `slot` when free, else the first free slot
    /// after it, else the first from the start; `None` when all are taken.
    pub fn next_free(&self, slot: u64) -> Option<u64> {
        let slot = slot.min(self.len - 1);
        self.free_from(slot).or_else(|| self.free_from(0))
    }

    /// The first free slot at or after `slot`.
    fn free_from(&self, slot: u64) -> Option<u64> {
        let mut w = (slot / 64) as usize;
        // The first word: only the bits from `slot` on.
        let free = !self.bits[w] & (u64::MAX << (slot % 64));
        if free != 0 {
            return self.in_range(w, free);
        }
        w += 1;
        while w < self.bits.len() {
            // Skip 64 full words at a time where the summary says so.
            let (fw, fb) = (w / 64, w % 64);
            let open = !self.full[fw] & (u64::MAX << fb);
            if open == 0 {
                w = (fw + 1) * 64;
                continue;
            }
            w = fw * 64 + open.trailing_zeros() as usize;
            if w >= self.bits.len() {
                return None;
            }
            let free = !self.bits[w];
            if free != 0 {
                return self.in_range(w, free);
            }
            w += 1;
        }
        None
    }

    /// The slot of the lowest set bit of `free` in word `w`, if it exists.
    fn in_range(&self, w: usize, free: u64) -> Option<u64> {
        let s = w as u64 * 64 + free.trailing_zeros() as u64;
        (s < self.len).then_some(s)
    }

    /// fio's `axmap_set_nr`: takes up to `nr` slots from `first`, stopping
    /// at the first taken one; returns how many it took. Like fio's, a run
    /// goes on past the last slot to the end of its 64-slot word
    /// (`__axmap_set` computes the clamp to the map's end but does not pass
    /// it on), so an I/O that crosses a strided zone's end is cut only by
    /// the slots past it that an earlier I/O took; those slots are never
    /// drawn or found free.
    pub fn take_run(&mut self, first: u64, nr: u64) -> u64 {
        let end = self.bits.len() as u64 * 64;
        let mut n = 0;
        while n < nr && first + n < end {
            let s = first + n;
            let w = (s / 64) as usize;
            if self.bits[w] & (1 << (s % 64)) != 0 {
                break;
            }
            self.bits[w] |= 1 << (s % 64);
            if self.bits[w] == u64::MAX {
                self.full[w / 64] |= 1 << (w % 64);
            }
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_free_skips_taken_runs_and_wraps() {
        let mut m = FreeMap::new(10_000);
        assert_eq!(m.next_free(5), Some(5));
        assert_eq!(m.take_run(5, 3), 3);
        assert_eq!(m.next_free(5), Some(8));
        // A run stops at a taken slot.
        assert_eq!(m.take_run(3, 4), 2);
        // Many full words are skipped.
        assert_eq!(m.take_run(64, 9000), 9000);
        assert_eq!(m.next_free(100), Some(9064));
        // The run goes on to its word's end: slot 10,048.
        assert_eq!(m.take_run(9064, 10_000), 984);
        assert_eq!(m.next_free(9999), Some(0));
        assert_eq!(m.take_run(0, 3), 3);
        assert_eq!(m.take_run(8, 56), 56);
        assert_eq!(m.next_free(0), None);
        m.clear();
        assert_eq!(m.next_free(9999), Some(9999));
    }

    #[test]
    fn a_run_past_the_last_slot_takes_the_rest_of_its_word() {
        // A strided zone of 16 slots: a 16-slot I/O at slot 11 crosses the
        // zone's end and is not cut there (fio's axmap); a second one at
        // slot 14 is cut where the first one's tail begins.
        let mut m = FreeMap::new(16);
        assert_eq!(m.take_run(11, 16), 16);
        assert_eq!(m.next_free(11), Some(0));
        assert_eq!(m.take_run(9, 16), 2);
        // Past the word the map ends: 70 - 64 slots cannot be taken.
        let mut m = FreeMap::new(16);
        assert_eq!(m.take_run(60, 10), 4);
    }
}
