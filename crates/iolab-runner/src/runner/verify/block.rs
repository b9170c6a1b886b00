//! fio's verified blocks, byte for byte as fio 3.33 lays them out, so a
//! file written by either tool checks under the other: every
//! `verify_interval` bytes of a written block start with fio's
//! `struct verify_header` (40 bytes, little-endian)
//!
//! ```text
//! 0  magic 0xacca   u16      16 offset     u64      32 thread    u16
//! 2  verify_type    u16      24 time_sec   u32      34 numberio  u16
//! 4  len            u32      28 time_nsec  u32      36 crc32c of bytes 0..36
//! 8  rand_seed      u64
//! ```
//!
//! then the checksum of the rest of the interval (fio's `vhdr_*`), then
//! the data: random bytes, or `verify_pattern`. `verify_offset` swaps the
//! header with the bytes that far in. A check reports what fio reports:
//! the file, the offset, what was expected and what was found.

use crate::job::JobSpec;
use crate::job::groups::pattern::FillPattern;
use crate::job::groups::verify::{HEADER_LEN, Method};
use crate::plan::IoUnit;
use crate::runner::buffer::{random_fill, repeat_into};
use serde::{Deserialize, Serialize};
use sha1::Digest;

/// fio's `FIO_HDR_MAGIC`.
pub const MAGIC: u16 = 0xacca;

/// What one header records besides the block's place.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stamp {
    /// Seed of the block's random data.
    pub seed: u64,
    /// Writes the clone issued before this one (fio's `numberio`).
    pub numberio: u64,
    /// fio's thread number (the clone, from 1).
    pub thread: u16,
    /// Time since the clone started.
    pub sec: u32,
    /// Its nanoseconds.
    pub nsec: u32,
}

/// A block that did not check: where, and what was expected and found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mismatch {
    /// The file.
    pub file: String,
    /// Offset of the bad interval (its header) in the file.
    pub offset: u64,
    /// Its length (`verify_interval`).
    pub length: u64,
    /// Offset of the block read.
    pub block_offset: u64,
    /// Length of the block read.
    pub block_length: u64,
    /// What failed: `header`, the checksum's name (`crc32c`), `pattern`.
    pub check: String,
    /// fio's words for it: `bad magic header`, `bad header offset`,
    /// `verify failed`.
    pub problem: String,
    /// What was expected (hex for checksums).
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl std::fmt::Display for Mismatch {
    /// As fio prints it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = format!(
            "at file {} offset {}, length {} (requested block: offset={}, length={})",
            self.file, self.offset, self.length, self.block_offset, self.block_length
        );
        match self.check.as_str() {
            "header" => write!(
                f,
                "verify: {} {}, wanted {} {at}",
                self.problem, self.found, self.expected
            ),
            "pattern" => write!(
                f,
                "pattern: verify failed {at}: got '{}', wanted '{}' ({})",
                self.found, self.expected, self.problem
            ),
            name => write!(
                f,
                "{name}: verify failed {at}\n       Expected CRC: {}\n       Received CRC: {}",
                self.expected, self.found
            ),
        }
    }
}

/// How a job's blocks are laid out and checked.
#[derive(Debug, Clone)]
pub struct Layout {
    method: Method,
    /// Bytes from one header to the next.
    interval: usize,
    /// `verify_offset`.
    swap: usize,
    pattern: Option<FillPattern>,
    /// Check `numberio` (fio: fixed block size, not `verify_only`).
    numberio: bool,
    /// `verify_fatal`: stop at the first bad interval of a block.
    fatal: bool,
}

impl Layout {
    /// The layout of `job`'s blocks, when it verifies.
    pub fn of_job(job: &JobSpec) -> Option<Layout> {
        let v = &job.verify;
        v.on().then(|| Layout {
            method: v.method,
            interval: v.interval.unwrap_or(job.bs_min).min(job.bs_min) as usize,
            swap: v.offset as usize,
            pattern: v.pattern.clone(),
            numberio: job.bs_min == job.bs_max && !v.only && job.writes(),
            fatal: v.fatal,
        })
    }

    fn header_size(&self) -> usize {
        self.method.header_size()
    }

    /// The length every header of a block of `len` bytes records: the
    /// interval, or the block when it is shorter (fio's `get_hdr_inc`),
    /// the block's short tail included.
    fn hdr_inc(&self, len: u32) -> usize {
        self.interval.min(len as usize)
    }

    /// Fills `buf[..io.len]` for the write `io`: data, then a header and
    /// checksum every interval.
    pub fn fill(&self, buf: &mut [u8], io: &IoUnit, s: Stamp) {
        let buf = &mut buf[..io.len as usize];
        match &self.pattern {
            Some(p) => repeat_into(&p.with_offset(io.offset), 0, buf),
            None => random_fill(buf, s.seed),
        }
        if self.method == Method::Pattern {
            return;
        }
        let hs = self.header_size();
        let len = self.hdr_inc(io.len);
        for (k, chunk) in buf.chunks_mut(self.interval).enumerate() {
            if chunk.len() < hs {
                // A tail shorter than a header (`bsrange` sizes that are no
                // multiple of the interval) carries none.
                continue;
            }
            let h = &mut chunk[..HEADER_LEN];
            h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
            h[2..4].copy_from_slice(&self.method.fio_type().to_le_bytes());
            h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
            h[8..16].copy_from_slice(&s.seed.to_le_bytes());
            let off = io.offset + (k * self.interval) as u64;
            h[16..24].copy_from_slice(&off.to_le_bytes());
            h[24..28].copy_from_slice(&s.sec.to_le_bytes());
            h[28..32].copy_from_slice(&s.nsec.to_le_bytes());
            h[32..34].copy_from_slice(&s.thread.to_le_bytes());
            h[34..36].copy_from_slice(&(s.numberio as u16).to_le_bytes());
            let crc = fio_crc32c(&h[..36]);
            h[36..40].copy_from_slice(&crc.to_le_bytes());
            let (head, data) = chunk.split_at_mut(hs);
            checksum(self.method, data, &mut head[HEADER_LEN..]);
            if self.swap > 0 {
                swap(chunk, self.swap, hs);
            }
        }
    }

    /// Checks the block `io` read into `buf` (the header swapped back in
    /// place); `numberio`: the write's, when known.
    pub fn check(
        &self,
        file: &str,
        buf: &mut [u8],
        io: &IoUnit,
        numberio: Option<u64>,
    ) -> Result<(), Box<Mismatch>> {
        let buf = &mut buf[..io.len as usize];
        let mut first = Ok(());
        let hs = self.header_size();
        let want_len = self.hdr_inc(io.len);
        for (k, chunk) in buf.chunks_mut(self.interval).enumerate() {
            if chunk.len() < hs && self.method != Method::Pattern {
                continue;
            }
            let at = io.offset + (k * self.interval) as u64;
            let fail = |check: &str, problem: &str, expected: String, found: String| {
                Box::new(Mismatch {
                    file: file.to_string(),
                    offset: at,
                    length: chunk_len(self.interval, io.len, k),
                    block_offset: io.offset,
                    block_length: io.len as u64,
                    check: check.to_string(),
                    problem: problem.to_string(),
                    expected,
                    found,
                })
            };
            let place = (io.offset, k * self.interval);
            let r = self.check_interval(chunk, (place, want_len), numberio, fail);
            if let Err(e) = r {
                // fio: a bad header ends the block; a bad sum too with
                // verify_fatal.
                if e.check == "header" || self.fatal {
                    return Err(e);
                }
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Checks one interval: `place` is the block's offset in the file and
    /// the interval's in the block.
    fn check_interval(
        &self,
        chunk: &mut [u8],
        (place, want_len): ((u64, usize), usize),
        numberio: Option<u64>,
        fail: impl Fn(&str, &str, String, String) -> Box<Mismatch>,
    ) -> Result<(), Box<Mismatch>> {
        let hs = self.header_size();
        let at = place.0 + place.1 as u64;
        if self.method == Method::Pattern {
            return self.check_pattern(chunk, 0, place, &fail);
        }
        if self.swap > 0 {
            swap(chunk, self.swap, hs);
        }
        let h = &chunk[..HEADER_LEN];
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let hex = |v: u64| format!("{v:x}");
        if u16_at(0) != MAGIC {
            return Err(fail(
                "header",
                "bad magic header",
                hex(MAGIC.into()),
                hex(u16_at(0).into()),
            ));
        }
        if u32_at(4) as usize != want_len {
            let (want, got) = (want_len.to_string(), u32_at(4).to_string());
            return Err(fail("header", "bad header length", want, got));
        }
        if u64_at(16) != at {
            let (want, got) = (at.to_string(), u64_at(16).to_string());
            return Err(fail("header", "bad header offset", want, got));
        }
        if let Some(n) = numberio.filter(|_| self.numberio)
            && u16_at(34) != n as u16
        {
            let (want, got) = ((n as u16).to_string(), u16_at(34).to_string());
            return Err(fail("header", "bad header numberio", want, got));
        }
        let crc = fio_crc32c(&h[..36]);
        if crc != u32_at(36) {
            return Err(fail(
                "header",
                "bad header crc",
                hex(crc.into()),
                hex(u32_at(36).into()),
            ));
        }
        if self.method == Method::Meta {
            return match &self.pattern {
                Some(_) => self.check_pattern(chunk, hs, place, &fail),
                None => Ok(()),
            };
        }
        let (head, data) = chunk.split_at(hs);
        let mut sum = vec![0u8; hs - HEADER_LEN];
        checksum(self.method, data, &mut sum);
        if sum[..] != head[HEADER_LEN..] {
            let name = self.method.name();
            return Err(fail(
                name,
                "verify failed",
                hexs(&head[HEADER_LEN..]),
                hexs(&sum),
            ));
        }
        Ok(())
    }

    /// Checks that `chunk[from..]` holds the pattern as [`Self::fill`]
    /// laid it over the block (`place`: the block's offset in the file,
    /// the interval's in the block), as fio's `verify_io_u_pattern`.
    fn check_pattern(
        &self,
        chunk: &[u8],
        from: usize,
        place: (u64, usize),
        fail: &impl Fn(&str, &str, String, String) -> Box<Mismatch>,
    ) -> Result<(), Box<Mismatch>> {
        let Some(p) = &self.pattern else {
            return Ok(());
        };
        let bytes = p.with_offset(place.0);
        let mut want = vec![0u8; chunk.len() - from];
        repeat_into(&bytes, (place.1 + from) % bytes.len(), &mut want);
        match chunk[from..].iter().zip(&want).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => Err(fail(
                "pattern",
                &format!("bad pattern block offset {}", from + i),
                format!("{:02x}", want[i]),
                format!("{:02x}", chunk[from + i]),
            )),
        }
    }
}

fn chunk_len(interval: usize, len: u32, k: usize) -> u64 {
    (interval as u64).min(len as u64 - (k * interval) as u64)
}

/// fio's `memswp`: the header and the bytes `at` further swap places.
fn swap(chunk: &mut [u8], at: usize, len: usize) {
    let (a, b) = chunk.split_at_mut(at);
    a[..len].swap_with_slice(&mut b[..len]);
}

fn hexs(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// fio's `fio_crc32c`: CRC-32C without the final inversion.
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio's CRC-32: polynomial 0x04C11DB7, MSB first, no init or final xor.
const FIO_CRC32: crc::Algorithm<u32> = crc::Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0x89a1_897f,
    residue: 0,
};

/// The checksum of `data` as fio stores it, into `out` (its `vhdr_*`).
fn checksum(method: Method, data: &[u8], out: &mut [u8]) {
    match method {
        Method::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        Method::Crc64 => {
            let c = crc::Crc::<u64>::new(&crc::CRC_64_REDIS).checksum(data);
            out.copy_from_slice(&c.to_le_bytes());
        }
        Method::Crc32 => {
            let c = crc::Crc::<u32>::new(&FIO_CRC32).checksum(data);
            out.copy_from_slice(&c.to_le_bytes());
        }
        Method::Crc32c | Method::Crc32cIntel => {
            out.copy_from_slice(&fio_crc32c(data).to_le_bytes())
        }
        Method::Crc16 => {
            let c = crc::Crc::<u16>::new(&crc::CRC_16_ARC).checksum(data);
            out.copy_from_slice(&c.to_le_bytes());
        }
        Method::Crc7 => out[0] = crc::Crc::<u8>::new(&crc::CRC_7_MMC).checksum(data),
        Method::Xxhash => out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes()),
        Method::Sha1 => {
            // fio keeps SHA-1's five words in host (little-endian) order.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        Method::Sha256 => fio_sha256(data, out),
        Method::Sha512 => fio_sha512(data, out),
        Method::None | Method::Meta | Method::Pattern | Method::Null => {}
    }
}

/// fio 3.33's `fill_sha256`: SHA-256 rounds over the data padded with its
/// bit length in host (little-endian) order; fio stores its 64-byte work
/// buffer, the last block, with the low byte of each state word in front.
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    const IV: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut state = IV;
    let full = data.len() / 64 * 64;
    let blocks: Vec<[u8; 64]> = (data[..full].chunks(64))
        .map(|c| c.try_into().expect("64 bytes"))
        .collect();
    sha2::block_api::compress256(&mut state, &blocks);
    let rest = &data[full..];
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let end = if rest.len() < 56 { 64 } else { 128 };
    tail[end - 8..end].copy_from_slice(&((data.len() as u64) << 3).to_le_bytes());
    let last: Vec<[u8; 64]> = (tail[..end].chunks(64))
        .map(|c| c.try_into().expect("64 bytes"))
        .collect();
    sha2::block_api::compress256(&mut state, &last);
    out.copy_from_slice(&tail[end - 64..end]);
    for (o, s) in out.iter_mut().zip(state) {
        *o = s as u8;
    }
}

/// fio 3.33's `fill_sha512`: fio never finishes the hash and stores its
/// 128-byte input buffer, which holds the data's last `len % 128` bytes
/// over its first 128 (the data is at least 128 bytes: see validation).
fn fio_sha512(data: &[u8], out: &mut [u8]) {
    let r = data.len() % 128;
    out.copy_from_slice(&data[..128]);
    out[..r].copy_from_slice(&data[data.len() - r..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_crc32_check_value() {
        let c = crc::Crc::<u32>::new(&FIO_CRC32).checksum(b"123456789");
        assert_eq!(c, FIO_CRC32.check);
    }
}
