//! What a job's write buffers hold (fio's buffer options), and random
//! bytes for them. Where the buffers live: [`super::iomem`].

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `buf` filled with pseudo-random bytes from `seed` (the same bytes for
/// the same seed; not fio's generator, whose bytes no check depends on).
pub fn random_fill(buf: &mut [u8], seed: u64) {
    Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(buf);
}

/// What a job's write buffers hold, as fio fills them (`buffer_pattern`,
/// `zero_buffers`, `refill_buffers`, `scramble_buffers`,
/// `buffer_compress_percentage`, `dedupe_percentage`).
#[derive(Debug, Clone)]
pub struct Contents {
    pattern: Option<Vec<u8>>,
    zero: bool,
    refill: bool,
    scramble: bool,
    compress: u32,
    chunk: usize,
    dedupe: u32,
    rng: Xoshiro256PlusPlus,
    last_unique: u64,
    /// Writes scrambled so far.
    writes: u64,
}

impl Contents {
    /// The contents of clone `seed`'s buffers for `job`.
    pub fn of_job(job: &crate::job::JobSpec, seed: u64) -> Contents {
        let b = &job.verify.buffers;
        let (mut zero, mut compress) = (b.zero, b.compress_percentage);
        if compress == 100 {
            (zero, compress) = (true, 0);
        }
        let reads = job.mix != crate::job::Mix::Write;
        // fio refills for compression and dedupe, and re-lays a pattern a
        // read may have overwritten.
        let refill = b.refill.unwrap_or(compress > 0)
            || b.dedupe_percentage > 0
            || (reads && (b.pattern.is_some() || zero));
        let compressing = b.compress_percentage > 0;
        Contents {
            pattern: b.pattern.as_ref().map(|p| p.bytes.clone()),
            zero,
            refill,
            // fio scrambles unless it refills, compresses or verifies, or
            // was asked for zeros or a pattern.
            scramble: b.scramble && !refill && !compressing && !job.verify.on() && !zero,
            compress,
            chunk: b.compress_chunk as usize,
            dedupe: b.dedupe_percentage,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5bd1_e995),
            last_unique: seed,
            writes: 0,
        }
    }

    /// True when every write changes its buffer (refill or scramble).
    pub fn per_write(&self) -> bool {
        self.refill || self.scramble
    }

    /// Fills `buf` as fio fills a buffer: the pattern, zeros, or random
    /// bytes (with `buffer_compress_percentage` zeros in each chunk).
    pub fn fill(&mut self, buf: &mut [u8]) {
        if let Some(p) = &self.pattern {
            super::verify::repeat_into(p, 0, buf);
            return;
        }
        if self.zero {
            buf.fill(0);
            return;
        }
        let seed = if self.dedupe > 0 && self.rng.next_u64() % 100 < u64::from(self.dedupe) {
            self.last_unique
        } else {
            self.last_unique = self.rng.next_u64();
            self.last_unique
        };
        let chunk = if self.compress > 0 && self.chunk > 0 {
            self.chunk.min(buf.len())
        } else {
            buf.len()
        };
        for (i, c) in buf.chunks_mut(chunk).enumerate() {
            let random = c.len() * (100 - self.compress as usize) / 100;
            random_fill(&mut c[..random], seed.wrapping_add(i as u64));
            c[random..].fill(0);
        }
    }

    /// Prepares the buffer of the write at `offset`: refilled, or
    /// scrambled as fio's `small_content_scramble` (in every 512 bytes the
    /// offset at one of 8 cache lines, and at the end of the first line
    /// where fio puts the time, the clone's write count: no clock read).
    #[inline]
    pub fn before_write(&mut self, buf: &mut [u8], offset: u64) {
        if self.refill {
            self.fill(buf);
            return;
        }
        self.writes += 1;
        let line = (((self.writes ^ offset) & 7) << 6) as usize;
        let mut boff = offset;
        for block in buf.chunks_exact_mut(512) {
            block[line..line + 8].copy_from_slice(&boff.to_le_bytes());
            block[48..56].copy_from_slice(&self.writes.to_le_bytes());
            boff += 512;
        }
    }
}
