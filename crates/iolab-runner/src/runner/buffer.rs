//! What a job's write buffers hold (fio's buffer options), and the random
//! or repeated bytes that fill them. Where the buffers live: [`super::iomem`].

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// `buf` filled with pseudo-random bytes from `seed` (the same bytes for
/// the same seed; not fio's generator, whose bytes no check depends on).
pub fn random_fill(buf: &mut [u8], seed: u64) {
    Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(buf);
}

/// `out` filled with `pattern` repeated, starting at its byte `start`.
pub fn repeat_into(pattern: &[u8], start: usize, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = pattern[(start + i) % pattern.len()];
    }
}

/// Steps between the seeds of a sequence of buffers.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// fio's dedupe working set (`dedupe_mode=working_set`): `pages` buffers
/// a deduplicable write draws from; the job's unique buffers are the
/// sequence from `unique`.
#[derive(Debug, Clone)]
struct WorkingSet {
    pages: u64,
    /// Seed of the set's first buffer.
    set: u64,
    /// Seed of the job's first unique buffer.
    unique: u64,
    /// Unique buffers written.
    uniques: u64,
}

impl WorkingSet {
    /// The seed of the set's buffer `i`.
    fn page(&self, i: u64) -> u64 {
        self.set.wrapping_add(i.wrapping_mul(GOLDEN))
    }
}

/// A number from a job's name (FNV-1a), so jobs with the same seed still
/// write different bytes.
fn name_key(name: &str) -> u64 {
    (name.bytes()).fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// What a job's write buffers hold, as fio fills them (`buffer_pattern`,
/// `zero_buffers`, `refill_buffers`, `scramble_buffers`,
/// `buffer_compress_percentage`, `dedupe_percentage`, `dedupe_mode`).
/// The bytes are iolab's generator's, not fio's; what holds is what fio
/// promises: which writes repeat which buffers.
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
    /// `dedupe_mode=working_set`: see [`WorkingSet`].
    working_set: Option<WorkingSet>,
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
            // Each job its own bytes (fio seeds by thread number).
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5bd1_e995 ^ name_key(&job.name)),
            last_unique: seed,
            working_set: Self::working_set(job, seed),
            writes: 0,
        }
    }

    /// fio's dedupe working set: `dedupe_working_set_percentage` of the
    /// job's size in unique buffers of the smallest write (at least one).
    fn working_set(job: &crate::job::JobSpec, seed: u64) -> Option<WorkingSet> {
        let b = &job.verify.buffers;
        if b.dedupe_mode != crate::job::groups::verify::DedupeMode::WorkingSet {
            return None;
        }
        let size = job.size.unwrap_or(0);
        let pages = (size * u64::from(b.working_set_percentage) / 100 / job.bs_min.max(1)).max(1);
        let unique = seed ^ 0x7773_6574 ^ name_key(&job.name);
        // fio's set is the seeds of the job's first unique buffers; with
        // dedupe_global fio takes them from every such job in turn, iolab
        // one set of its own for all of them.
        let set = if b.dedupe_global {
            0x6465_6475_7065_7365
        } else {
            unique
        };
        Some(WorkingSet {
            pages,
            set,
            unique,
            uniques: 0,
        })
    }

    /// True when every write changes its buffer (refill or scramble).
    pub fn per_write(&self) -> bool {
        self.refill || self.scramble
    }

    /// Fills `buf` as fio fills a buffer: the pattern, zeros, or random
    /// bytes (with `buffer_compress_percentage` zeros in each chunk).
    pub fn fill(&mut self, buf: &mut [u8]) {
        if let Some(p) = &self.pattern {
            repeat_into(p, 0, buf);
            return;
        }
        if self.zero {
            buf.fill(0);
            return;
        }
        let dedupe = self.dedupe > 0 && self.rng.next_u64() % 100 < u64::from(self.dedupe);
        let seed = match &mut self.working_set {
            Some(w) if dedupe => w.page(self.rng.next_u64() % w.pages),
            Some(w) => {
                w.uniques += 1;
                w.unique.wrapping_add((w.uniques - 1).wrapping_mul(GOLDEN))
            }
            None if dedupe => self.last_unique,
            None => {
                self.last_unique = self.rng.next_u64();
                self.last_unique
            }
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
