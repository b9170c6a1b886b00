//! The samples of fio's log files and the two forms fio writes them in:
//! text lines (`time, value, ddir, bs[, offset], prio`, fio's
//! `flush_samples`) and, with `log_store_compressed`, fio's binary
//! `struct io_sample` records in zlib streams (`.log.fz`), which
//! [`inflate`] turns back into the text lines, as `fio --inflate-log`.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use std::io::{self, Write};

/// fio's flag in a sample's direction word: the sample holds an offset.
const OFFSET_BIT: u32 = 0x8000_0000;
/// fio's flag in a sample's direction word: log the priority as is.
const PRIO_BIT: u32 = 0x4000_0000;
/// Bytes of fio's `struct io_sample` (x86-64: time, value, ddir, prio,
/// padding, bs).
const SAMPLE: usize = 32;
/// Bytes of fio's `struct io_sample_offset` (the sample and an offset).
const SAMPLE_OFFSET: usize = 40;
/// fio's I/O priority class of realtime I/O (`IOPRIO_CLASS_RT`).
const CLASS_RT: u16 = 1;
/// Where the class sits in an I/O priority value (`IOPRIO_CLASS_SHIFT`).
const CLASS_SHIFT: u16 = 13;

/// One entry of a fio log (fio's `struct io_sample`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sample {
    /// Milliseconds since the job started.
    pub time_ms: u64,
    /// The value (KiB/s, IOPS or ns; a count for per-I/O IOPS logs).
    pub val: u64,
    /// fio's direction: 0 read, 1 write, 2 trim.
    pub ddir: u8,
    /// Block size (0 in averaged entries).
    pub bs: u64,
    /// Offset of the I/O (0 in averaged entries).
    pub offset: u64,
    /// I/O priority value (class << 13 | level).
    pub prio: u16,
}

/// The columns a log has: fio's `log_offset` and `log_prio`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Columns {
    /// An offset column after the block size.
    pub offset: bool,
    /// The priority as `0x%04x`, not 1 for realtime and 0 otherwise.
    pub prio: bool,
}

/// fio's I/O priority value of a (class, level).
pub fn prio_value(class: u32, level: u32) -> u16 {
    ((class << CLASS_SHIFT) | level) as u16
}

/// Writes one sample as fio's text line.
pub fn write_line(w: &mut dyn Write, s: &Sample, c: Columns) -> io::Result<()> {
    write!(w, "{}, {}, {}, {}, ", s.time_ms, s.val as i64, s.ddir, s.bs)?;
    if c.offset {
        write!(w, "{}, ", s.offset)?;
    }
    if c.prio {
        writeln!(w, "0x{:04x}", s.prio)
    } else {
        writeln!(w, "{}", u8::from(s.prio >> CLASS_SHIFT == CLASS_RT))
    }
}

/// Where samples go: text lines, or fio's compressed binary form.
pub enum SampleSink<'a> {
    /// Text lines.
    Text(&'a mut dyn Write, Columns),
    /// Binary samples, compressed in zlib streams of `chunk` bytes of
    /// samples each (one stream for all when 0).
    Compressed {
        /// Where the streams go.
        out: &'a mut dyn Write,
        /// The columns (flags in each sample).
        columns: Columns,
        /// Bytes of samples per stream.
        chunk: usize,
        /// Samples not compressed yet.
        pending: Vec<u8>,
    },
}

impl<'a> SampleSink<'a> {
    /// A sink for `out`: compressed when `store_compressed`.
    pub fn new(
        out: &'a mut dyn Write,
        columns: Columns,
        store_compressed: bool,
        chunk: u64,
    ) -> SampleSink<'a> {
        if store_compressed {
            SampleSink::Compressed {
                out,
                columns,
                chunk: usize::try_from(chunk).unwrap_or(usize::MAX),
                pending: Vec::new(),
            }
        } else {
            SampleSink::Text(out, columns)
        }
    }

    /// Adds one sample.
    pub fn push(&mut self, s: &Sample) -> io::Result<()> {
        match self {
            SampleSink::Text(w, c) => write_line(*w, s, *c),
            SampleSink::Compressed {
                out,
                columns,
                chunk,
                pending,
            } => {
                encode(s, *columns, pending);
                if *chunk > 0 && pending.len() >= *chunk {
                    deflate_to(*out, pending)?;
                    pending.clear();
                }
                Ok(())
            }
        }
    }

    /// Writes what is still held.
    pub fn finish(self) -> io::Result<()> {
        match self {
            SampleSink::Text(..) => Ok(()),
            SampleSink::Compressed { out, pending, .. } if !pending.is_empty() => {
                deflate_to(out, &pending)
            }
            SampleSink::Compressed { .. } => Ok(()),
        }
    }
}

/// Appends fio's binary record of `s`.
fn encode(s: &Sample, c: Columns, out: &mut Vec<u8>) {
    let mut ddir = u32::from(s.ddir);
    if c.offset {
        ddir |= OFFSET_BIT;
    }
    if c.prio {
        ddir |= PRIO_BIT;
    }
    out.extend_from_slice(&s.time_ms.to_le_bytes());
    out.extend_from_slice(&s.val.to_le_bytes());
    out.extend_from_slice(&ddir.to_le_bytes());
    out.extend_from_slice(&s.prio.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&s.bs.to_le_bytes());
    if c.offset {
        out.extend_from_slice(&s.offset.to_le_bytes());
    }
}

/// Compresses `data` into one zlib stream (fio's `deflateInit` with the
/// default level) and writes it.
fn deflate_to(out: &mut dyn Write, data: &[u8]) -> io::Result<()> {
    let mut z = Compress::new(Compression::default(), true);
    let mut buf = Vec::with_capacity(data.len() / 2 + 64);
    loop {
        let done = z.total_in() as usize;
        buf.reserve(data.len().saturating_sub(done) / 2 + 4096);
        match z.compress_vec(&data[done..], &mut buf, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => break,
            Ok(_) => {}
            Err(e) => return Err(io::Error::other(e)),
        }
    }
    out.write_all(&buf)
}

/// fio's `--inflate-log`: the zlib streams of a `.log.fz` file, one after
/// the other, written to `out` as fio's text lines.
pub fn inflate(data: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let mut rest = data;
    let mut samples = Vec::new();
    while !rest.is_empty() {
        let mut z = Decompress::new(true);
        samples.clear();
        loop {
            samples.reserve(rest.len().max(4096) * 4);
            let used = z.total_in() as usize;
            let st = z
                .decompress_vec(&rest[used..], &mut samples, FlushDecompress::None)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            if st == Status::StreamEnd {
                break;
            }
            if z.total_in() as usize == rest.len() && samples.len() < samples.capacity() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the last zlib stream ends early",
                ));
            }
        }
        rest = &rest[z.total_in() as usize..];
        write_samples(&samples, out)?;
    }
    Ok(())
}

/// fio's `flush_samples`: binary records to text lines, their columns
/// from the first record's flags.
fn write_samples(b: &[u8], out: &mut dyn Write) -> io::Result<()> {
    if b.len() < SAMPLE {
        return Ok(());
    }
    let u64_at = |r: &[u8], i: usize| u64::from_le_bytes(r[i..i + 8].try_into().expect("8"));
    let flags = u32::from_le_bytes(b[16..20].try_into().expect("4"));
    let c = Columns {
        offset: flags & OFFSET_BIT != 0,
        prio: flags & PRIO_BIT != 0,
    };
    let size = if c.offset { SAMPLE_OFFSET } else { SAMPLE };
    for r in b.chunks_exact(size) {
        let ddir = u32::from_le_bytes(r[16..20].try_into().expect("4")) & !(OFFSET_BIT | PRIO_BIT);
        let s = Sample {
            time_ms: u64_at(r, 0),
            val: u64_at(r, 8),
            ddir: ddir as u8,
            prio: u16::from_le_bytes(r[20..22].try_into().expect("2")),
            bs: u64_at(r, 24),
            offset: if c.offset { u64_at(r, 32) } else { 0 },
        };
        write_line(out, &s, c)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(n: u64) -> Vec<Sample> {
        (0..n)
            .map(|i| Sample {
                time_ms: i,
                val: i * 7,
                ddir: (i % 3) as u8,
                bs: 4096,
                offset: i * 4096,
                prio: prio_value(2, 3),
            })
            .collect()
    }

    #[test]
    fn compressed_chunks_inflate_to_the_text_lines() {
        for (offset, prio) in [(false, false), (true, false), (true, true), (false, true)] {
            let c = Columns { offset, prio };
            let (mut text, mut fz) = (Vec::new(), Vec::new());
            let mut t = SampleSink::new(&mut text, c, false, 0);
            let mut z = SampleSink::new(&mut fz, c, true, 1024);
            for s in samples(1000) {
                t.push(&s).unwrap();
                z.push(&s).unwrap();
            }
            t.finish().unwrap();
            z.finish().unwrap();
            let mut back = Vec::new();
            inflate(&fz, &mut back).unwrap();
            assert_eq!(
                String::from_utf8(back).unwrap(),
                String::from_utf8(text).unwrap()
            );
        }
    }

    #[test]
    fn lines_have_fios_columns() {
        let s = Sample {
            time_ms: 5,
            val: 9,
            ddir: 1,
            bs: 512,
            offset: 1024,
            prio: prio_value(1, 0),
        };
        let line = |c| {
            let mut v = Vec::new();
            write_line(&mut v, &s, c).unwrap();
            String::from_utf8(v).unwrap()
        };
        let both = Columns {
            offset: true,
            prio: true,
        };
        assert_eq!(line(Columns::default()), "5, 9, 1, 512, 1\n");
        assert_eq!(line(both), "5, 9, 1, 512, 1024, 0x2000\n");
    }

    #[test]
    fn a_cut_stream_is_an_error() {
        let mut fz = Vec::new();
        let mut z = SampleSink::new(&mut fz, Columns::default(), true, 0);
        for s in samples(100) {
            z.push(&s).unwrap();
        }
        z.finish().unwrap();
        assert!(inflate(&fz[..fz.len() / 2], &mut Vec::new()).is_err());
    }
}
