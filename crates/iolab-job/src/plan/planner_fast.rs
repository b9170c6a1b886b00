//! The planner's fast paths: the common cases (one file, random reads)
//! without the general path's per-I/O decisions, making the same draws in
//! the same order, so the same sequence.

use super::{BATCH, Planner};
use crate::plan::draws::Draws;
use crate::plan::shuffle::{Order, below32};
use crate::plan::unit::IoUnit;

impl Planner {
    /// The common case (one file, random reads, a shuffle table, no I/O
    /// limit) without the general path's per-I/O decisions. It makes the
    /// same random draws in the same order as [`Self::generate`], so the
    /// sequence is identical; it stops at the end of a loop and leaves the
    /// rollover to the general path.
    pub(super) fn refill_one_random_read(&mut self) {
        let (lo, hi) = (self.p.bs_min, self.p.bs_max);
        let span = hi - lo + 1;
        let mask = if lo.is_power_of_two() {
            !(lo - 1)
        } else {
            u64::MAX
        };
        let f = &mut self.files[0];
        if f.finished {
            return;
        }
        let Some(Order::Table { slots, pos }) = f.order.as_mut() else {
            return;
        };
        let n = slots.len();
        let (start, rlen, target) = (f.region.start, f.region.len, f.target);
        // Locals, written back at the end, so the loop keeps them in registers.
        let table = slots.as_mut_slice();
        let mut p = *pos;
        let mut done = f.done;
        let mut finished = false;
        let mut len_out = self.batch_len;
        while len_out < BATCH {
            // Drawn before the end-of-slots check, as the general path does.
            let r = self.rng.next_u64();
            if p >= n {
                finished = true;
                break;
            }
            let want = if lo == hi {
                lo
            } else {
                (lo + below32(r as u32, span)) & mask
            };
            // Fisher-Yates step: slot p takes slot j's value and hands it out.
            let j = p + below32((r >> 32) as u32, (n - p) as u64) as usize;
            table.swap(p, j);
            let rel = table[p] as u64 * lo;
            p += 1;
            let len = want.min(rlen - rel).min(target - done);
            done += len;
            self.batch[len_out % BATCH] = IoUnit {
                file: 0,
                offset: start + rel,
                len: len as u32,
                write: false,
                trim: false,
            };
            len_out += 1;
            if done >= target {
                finished = true;
                break;
            }
        }
        *pos = p;
        f.finished = finished;
        self.issued += (len_out - self.batch_len) as u64;
        self.batch_len = len_out;
        self.bytes += done - f.done;
        f.done = done;
        if !finished {
            prefetch_next_swaps(table, p, &mut self.rng);
        }
    }

    /// Random reads of one size without the map (`norandommap`): a draw,
    /// a multiply, an I/O, as a bare `random() % blocks` loop. The same
    /// draws as [`Self::generate`], so the same sequence; it stops at the
    /// end of a loop and leaves the rollover to the general path.
    pub(super) fn refill_uniform_reads(&mut self) {
        let bs = self.p.bs_min;
        let f = &mut self.files[0];
        if f.finished {
            return;
        }
        let (start, blocks, target) = (f.region.start, f.region.len / bs, f.target);
        let mut done = f.done;
        let mut n = self.batch_len;
        let mut finished = false;
        while n < BATCH {
            let r = self.rng.next_u64();
            // The last I/O whole, past `size`, as fio's.
            let len = bs;
            self.batch[n % BATCH] = IoUnit {
                file: 0,
                offset: start + below32((r >> 32) as u32, blocks) * bs,
                len: len as u32,
                write: false,
                trim: false,
            };
            n += 1;
            done += len;
            if done >= target {
                finished = true;
                break;
            }
        }
        self.bytes += done - f.done;
        f.done = done;
        f.finished = finished;
        self.issued += (n - self.batch_len) as u64;
        self.batch_len = n;
    }
}

/// Asks the CPU to bring in the table entries the next batch will swap
/// with, so they arrive while this batch's I/Os run instead of stalling the
/// next refill on one cache miss per I/O (the kernel's copies between
/// refills evict a large table from the caches). The batch's random numbers
/// are drawn now and used then, so the sequence does not change.
#[inline]
fn prefetch_next_swaps(slots: &[u32], pos: usize, rng: &mut Draws) {
    let n = slots.len();
    for (p, &r) in (pos..n).zip(rng.fill_ahead()) {
        let j = p + below32((r >> 32) as u32, (n - p) as u64) as usize;
        prefetch(slots.as_ptr().wrapping_add(j));
    }
}

/// A hint to load the cache line of `p`; no effect on the program's meaning.
#[inline(always)]
fn prefetch(p: *const u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing into the program.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
