//! fio's per-I/O logs (`log_avg_msec=0`) with bounded memory: a clone's
//! entries gather in a fixed buffer that spills to an unnamed temporary
//! file next to the logs, and are read back one by one when the log files
//! are written. Memory does not grow with the number of I/Os.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// One I/O in fio's per-I/O logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoLogEntry {
    /// Completion time in ns since the clone started.
    pub t_ns: u64,
    /// Total latency.
    pub lat: u64,
    /// Completion latency.
    pub clat: u64,
    /// Submission latency.
    pub slat: u64,
    /// Byte offset in the file (fio's `log_offset` column).
    pub offset: u64,
    /// Bytes.
    pub len: u32,
    /// Direction, as fio numbers them: 0 read, 1 write, 2 trim.
    pub ddir: u8,
    /// Index of the file in the clone's file list.
    pub file: u16,
}

/// Bytes of one entry on disk.
const ENTRY: usize = 47;
/// Entries held in memory before they spill (about 300 KiB).
const BUFFERED: usize = 8192;

impl IoLogEntry {
    fn encode(&self, out: &mut Vec<u8>) {
        for v in [self.t_ns, self.lat, self.clat, self.slat, self.offset] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.len.to_le_bytes());
        out.push(self.ddir);
        out.extend_from_slice(&self.file.to_le_bytes());
    }

    fn decode(b: &[u8]) -> IoLogEntry {
        let u = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        IoLogEntry {
            t_ns: u(0),
            lat: u(1),
            clat: u(2),
            slat: u(3),
            offset: u(4),
            len: u32::from_le_bytes(b[40..44].try_into().expect("4 bytes")),
            ddir: b[44],
            file: u16::from_le_bytes([b[45], b[46]]),
        }
    }
}

/// A clone's per-I/O log while it runs.
#[derive(Debug)]
pub struct IoLogWriter {
    buf: Vec<IoLogEntry>,
    bytes: Vec<u8>,
    file: File,
    count: u64,
    failed: Option<io::Error>,
}

impl IoLogWriter {
    /// A log spilling into an unnamed temporary file in `dir`.
    pub fn new(dir: &Path) -> io::Result<IoLogWriter> {
        Ok(IoLogWriter {
            buf: Vec::with_capacity(BUFFERED),
            bytes: Vec::with_capacity(BUFFERED * ENTRY),
            file: tempfile::tempfile_in(dir)?,
            count: 0,
            failed: None,
        })
    }

    /// Adds one entry.
    #[inline]
    pub fn push(&mut self, e: IoLogEntry) {
        self.buf.push(e);
        if self.buf.len() == BUFFERED {
            self.spill();
        }
    }

    #[cold]
    fn spill(&mut self) {
        self.bytes.clear();
        for e in &self.buf {
            e.encode(&mut self.bytes);
        }
        if self.failed.is_none()
            && let Err(e) = self
                .file
                .write_all_at(&self.bytes, self.count * ENTRY as u64)
        {
            self.failed = Some(e);
        }
        self.count += self.buf.len() as u64;
        self.buf.clear();
    }

    /// Forgets every entry so far (fio logs nothing of `ramp_time`); the
    /// next ones overwrite them on disk.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.count = 0;
    }

    /// The finished log, or why it could not be kept.
    pub fn finish(mut self) -> io::Result<IoLog> {
        self.spill();
        match self.failed {
            Some(e) => Err(e),
            None => Ok(IoLog {
                file: Arc::new(self.file),
                count: self.count,
                shift_ns: 0,
            }),
        }
    }
}

/// A finished per-I/O log: its entries on disk, read back in order.
#[derive(Debug, Clone)]
pub struct IoLog {
    file: Arc<File>,
    count: u64,
    shift_ns: u64,
}

impl IoLog {
    /// Entries in the log.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// True when no I/O was logged.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The same log with its times moved `ns` later (a later repetition).
    pub fn shifted(&self, ns: u64) -> IoLog {
        IoLog {
            shift_ns: self.shift_ns + ns,
            ..self.clone()
        }
    }

    /// Calls `f` with every entry in order, reading a chunk at a time.
    pub fn for_each(&self, mut f: impl FnMut(&IoLogEntry) -> io::Result<()>) -> io::Result<()> {
        let mut chunk = vec![0u8; BUFFERED * ENTRY];
        let mut done = 0u64;
        while done < self.count {
            let n = ((self.count - done) as usize).min(BUFFERED);
            let bytes = &mut chunk[..n * ENTRY];
            self.file.read_exact_at(bytes, done * ENTRY as u64)?;
            for b in bytes.chunks_exact(ENTRY) {
                let mut e = IoLogEntry::decode(b);
                e.t_ns += self.shift_ns;
                f(&e)?;
            }
            done += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_and_reads_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = IoLogWriter::new(dir.path()).unwrap();
        let n = BUFFERED as u64 * 2 + 5;
        for i in 0..n {
            w.push(IoLogEntry {
                t_ns: i,
                lat: i * 3,
                clat: i * 2,
                slat: i,
                offset: i * 4096,
                len: 4096,
                ddir: (i % 2) as u8,
                file: (i % 3) as u16,
            });
        }
        let log = w.finish().unwrap().shifted(1000);
        assert_eq!(log.len(), n);
        let mut seen = 0;
        log.for_each(|e| {
            assert_eq!(e.t_ns, seen + 1000);
            assert_eq!((e.lat, e.ddir), (seen * 3, (seen % 2) as u8));
            assert_eq!(e.file, (seen % 3) as u16);
            assert_eq!(e.offset, seen * 4096);
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, n);
    }
}
