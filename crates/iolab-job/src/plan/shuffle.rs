//! Random orders for one loop over a region's slots.
//!
//! Up to [`TABLE_MAX`] slots, a lazy Fisher-Yates shuffle over a `u32` table
//! (one random draw and one cache-friendly swap per I/O, like a bare
//! `random() % n` loop but without repeats). Larger regions use the keyed
//! [`Permutation`] in O(1) memory.

use super::permutation::Permutation;

/// Largest slot count served by the table (64 MiB of `u32`).
pub const TABLE_MAX: u64 = 1 << 24;

/// Bytes the table of an order over `n` slots takes (0 past [`TABLE_MAX`]:
/// a keyed permutation).
pub fn table_bytes(n: u64) -> u64 {
    if n <= TABLE_MAX { n.max(1) * 4 } else { 0 }
}

/// Maps a 32-bit random number into `0..n` (n ≤ 2^32) by multiply-shift.
#[inline(always)]
pub fn below32(r: u32, n: u64) -> u64 {
    (r as u64 * n) >> 32
}

/// The order of slots in one loop.
#[derive(Debug, Clone)]
pub enum Order {
    /// Lazy Fisher-Yates over a table.
    Table {
        /// Slots; `slots[..pos]` are the ones handed out.
        slots: Vec<u32>,
        /// Next position.
        pos: usize,
    },
    /// Keyed permutation.
    Keyed {
        /// The permutation.
        perm: Permutation,
        /// Next position.
        pos: u64,
    },
}

impl Order {
    /// A new order over `0..n` (n ≥ 1); `key` seeds the keyed variant,
    /// which is used when `table` is false or `n` is past [`TABLE_MAX`].
    pub fn new(n: u64, key: u64, table: bool) -> Order {
        if table && n <= TABLE_MAX {
            Order::Table {
                slots: (0..n as u32).collect(),
                pos: 0,
            }
        } else {
            Order::Keyed {
                perm: Permutation::new(n, key),
                pos: 0,
            }
        }
    }

    /// The number of slots it orders.
    pub fn len(&self) -> u64 {
        match self {
            Order::Table { slots, .. } => slots.len() as u64,
            Order::Keyed { perm, .. } => perm.len(),
        }
    }

    /// Never true: an order has a slot at least.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Starts a new loop (a fresh order).
    pub fn restart(&mut self, key: u64) {
        match self {
            // The table stays a permutation: continuing to shuffle it from
            // position 0 yields a new uniformly random order.
            Order::Table { pos, .. } => *pos = 0,
            Order::Keyed { perm, pos } => {
                *perm = Permutation::new(perm.len(), key);
                *pos = 0;
            }
        }
    }

    /// The next slot of this loop, or `None` when every slot was handed out;
    /// `r` is a fresh 32-bit random number.
    #[inline]
    pub fn next(&mut self, r: u32) -> Option<u64> {
        match self {
            Order::Table { slots, pos } => {
                let n = slots.len();
                if *pos >= n {
                    return None;
                }
                let j = *pos + below32(r, (n - *pos) as u64) as usize;
                slots.swap(*pos, j);
                let v = slots[*pos];
                *pos += 1;
                Some(v as u64)
            }
            Order::Keyed { perm, pos } => {
                if *pos >= perm.len() {
                    return None;
                }
                let v = perm.get(*pos);
                *pos += 1;
                Some(v)
            }
        }
    }
}
