//! A keyed pseudo-random permutation of `0..n` in O(1) memory: a bijection on
//! the enclosing power of two (odd multiply, add, xor-shift rounds) made into
//! a bijection on `0..n` by cycle walking. Used so a random workload touches
//! every block exactly once per loop, like fio's random map, without a bitmap.

/// A permutation of `0..n`, fixed by its keys.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [(u64, u64); 3],
}

impl Permutation {
    /// A permutation of `0..n` (n ≥ 1) chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n >= 1);
        let bits = 64 - (n - 1).leading_zeros().min(63);
        let bits = bits.max(1);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut s = seed;
        let mut next = || {
            // splitmix64 step: spreads the seed into independent keys.
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let keys = [
            (next() | 1, next()),
            (next() | 1, next()),
            (next() | 1, next()),
        ];
        Permutation {
            n,
            mask,
            shift: bits.div_ceil(2),
            keys,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Always false: a permutation has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    #[inline]
    fn round_trip(&self, mut x: u64) -> u64 {
        for &(m, a) in &self.keys {
            x = x.wrapping_mul(m).wrapping_add(a) & self.mask;
            x ^= x >> self.shift;
        }
        x
    }

    /// The element at position `i` (i < n).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut y = self.round_trip(i);
        while y >= self.n {
            y = self.round_trip(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_a_permutation() {
        for n in [1u64, 2, 3, 7, 8, 9, 1000, 4097] {
            for seed in [0u64, 1, 42] {
                let p = Permutation::new(n, seed);
                let mut seen = vec![false; n as usize];
                for i in 0..n {
                    let v = p.get(i) as usize;
                    assert!(!seen[v], "n={n} seed={seed} repeats {v}");
                    seen[v] = true;
                }
            }
        }
    }

    #[test]
    fn looks_shuffled() {
        let p = Permutation::new(10_000, 7);
        let fixed = (0..10_000).filter(|&i| p.get(i) == i).count();
        assert!(fixed < 50, "{fixed} fixed points");
        let ascending = (1..10_000).filter(|&i| p.get(i) > p.get(i - 1)).count();
        assert!((4000..6000).contains(&ascending), "{ascending} ascents");
    }
}
