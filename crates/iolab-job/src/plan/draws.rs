//! The planner's random numbers: one xoshiro256++ stream from the seed, with
//! room to draw a batch ahead of use (to prefetch what those draws will
//! touch) without changing the sequence anyone sees.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Most numbers held ahead.
pub const AHEAD: usize = 64;

/// A seeded stream of `u64`s, some possibly drawn ahead.
#[derive(Debug, Clone)]
pub struct Draws {
    rng: Xoshiro256PlusPlus,
    ahead: [u64; AHEAD],
    head: usize,
    len: usize,
}

impl Draws {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Draws {
        Draws {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            ahead: [0; AHEAD],
            head: 0,
            len: 0,
        }
    }

    /// The next number: the oldest one drawn ahead, else a fresh one.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        if self.head < self.len {
            let r = self.ahead[self.head % AHEAD];
            self.head += 1;
            r
        } else {
            self.rng.next_u64()
        }
    }

    /// A draw in `0..n` by multiply-shift (Lemire), no division.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Draws ahead until `AHEAD` numbers wait; returns all that wait, in the
    /// order [`Self::next_u64`] will give them.
    pub fn fill_ahead(&mut self) -> &[u64] {
        self.ahead.copy_within(self.head..self.len, 0);
        self.len -= self.head;
        self.head = 0;
        for r in &mut self.ahead[self.len..] {
            *r = self.rng.next_u64();
        }
        self.len = AHEAD;
        &self.ahead
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawing_ahead_keeps_the_sequence() {
        let mut plain = Draws::new(7);
        let want: Vec<u64> = (0..300).map(|_| plain.next_u64()).collect();
        let mut d = Draws::new(7);
        let mut got = Vec::new();
        for step in [0usize, 5, 64, 1, 30, 100] {
            for _ in 0..step {
                got.push(d.next_u64());
            }
            let waiting = d.fill_ahead().to_vec();
            assert_eq!(waiting[..], want[got.len()..got.len() + AHEAD]);
        }
        while got.len() < 300 {
            got.push(d.next_u64());
        }
        assert_eq!(got, want);
    }
}
