//! The bytes of a document to import, checked as they are read: the notes
//! fio may print before its JSON are skipped, and a document that is too
//! long, nested too deep or holds too long a string is stopped at the
//! byte where it went too far, before the parser keeps anything of it
//! (serde_json skips an ignored value with a stack of one byte per level,
//! and buffers each string it reads whole). The document is also kept as
//! it was read while it is short enough to store.

use super::{MAX_DEPTH, MAX_DOCUMENT, MAX_PREAMBLE, MAX_SOURCE, MAX_STRING};
use crate::metrics::format::bytes_iec;
use std::io::{self, Read};

/// What a [`Guard`] found while reading: where it is in the document, and
/// the document itself while it is short enough to keep.
pub(super) struct Scan {
    /// The first `{` was seen: bytes are passed on.
    started: bool,
    /// Bytes skipped before it.
    preamble: u64,
    /// Bytes passed on.
    passed: u64,
    depth: usize,
    in_string: bool,
    escaped: bool,
    string_len: usize,
    /// Where the string being read started.
    string_start: u64,
    /// The document as passed on, while it is at most [`MAX_SOURCE`].
    source: Option<Vec<u8>>,
    /// Why reading stopped, when a limit did it.
    exceeded: Option<String>,
}

/// A reader of a JSON document that enforces the import limits, noting
/// what it found in a [`Scan`] that outlives it.
pub(super) struct Guard<'a, R> {
    inner: R,
    scan: &'a mut Scan,
}

impl<'a, R: Read> Guard<'a, R> {
    /// Guards `inner`, noting in `scan`.
    pub(super) fn new(inner: R, scan: &'a mut Scan) -> Self {
        Guard { inner, scan }
    }
}

impl Scan {
    /// Nothing read yet.
    pub(super) fn new() -> Self {
        Scan {
            started: false,
            preamble: 0,
            passed: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            string_len: 0,
            string_start: 0,
            source: Some(Vec::new()),
            exceeded: None,
        }
    }

    /// Why reading stopped, when one of the limits stopped it.
    pub(super) fn exceeded(&self) -> Option<&str> {
        self.exceeded.as_deref()
    }

    /// True once the start of a JSON object was found.
    pub(super) fn started(&self) -> bool {
        self.started
    }

    /// Bytes of the document read (from its first `{`).
    pub(super) fn len(&self) -> u64 {
        self.passed
    }

    /// The document as it was read, when it was at most [`MAX_SOURCE`].
    pub(super) fn take_source(&mut self) -> Option<Vec<u8>> {
        self.source.take()
    }

    fn stop(&mut self, why: String) -> io::Error {
        self.exceeded = Some(why.clone());
        io::Error::new(io::ErrorKind::InvalidData, why)
    }

    /// Checks `bytes` (the next ones passed on) against the limits.
    fn check(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut i = 0;
        while i < bytes.len() {
            let at = self.passed + i as u64;
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    self.string_len += 1;
                    i += 1;
                    continue;
                }
                // Straight to the next quote or backslash.
                let rest = &bytes[i..];
                let run = rest
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\')
                    .unwrap_or(rest.len());
                self.string_len += run;
                i += run;
                if self.string_len > MAX_STRING {
                    return Err(self.stop(format!(
                        "a string longer than {} at byte {} of the document \
                         (iolab imports strings up to that)",
                        bytes_iec(MAX_STRING as f64),
                        self.string_start
                    )));
                }
                match bytes.get(i) {
                    Some(b'"') => self.in_string = false,
                    Some(_) => {
                        self.escaped = true;
                        self.string_len += 1;
                    }
                    None => {}
                }
                i += 1;
                continue;
            }
            match bytes[i] {
                b'"' => {
                    self.in_string = true;
                    self.string_len = 0;
                    self.string_start = at;
                }
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return Err(self.stop(format!(
                            "nested deeper than {MAX_DEPTH} levels at byte {at} of the document \
                             (a fio result nests 5)"
                        )));
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        self.passed += bytes.len() as u64;
        if self.passed > MAX_DOCUMENT {
            return Err(self.stop(format!(
                "longer than {} (iolab imports fio results up to that)",
                bytes_iec(MAX_DOCUMENT as f64)
            )));
        }
        if let Some(s) = &mut self.source {
            if s.len() + bytes.len() <= MAX_SOURCE {
                s.extend_from_slice(bytes);
            } else {
                self.source = None;
            }
        }
        Ok(())
    }
}

impl<R: Read> Read for Guard<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.scan.read_from(&mut self.inner, buf)
    }
}

impl Scan {
    /// Reads from `inner` into `buf` what the parser may see of it.
    fn read_from(&mut self, inner: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(why) = &self.exceeded {
            return Err(io::Error::new(io::ErrorKind::InvalidData, why.clone()));
        }
        loop {
            let n = inner.read(buf)?;
            if n == 0 || self.started {
                self.check(&buf[..n])?;
                return Ok(n);
            }
            // fio's notes before the document: skip to the first '{'.
            match buf[..n].iter().position(|&b| b == b'{') {
                Some(start) => {
                    self.started = true;
                    self.preamble += start as u64;
                    buf.copy_within(start..n, 0);
                    self.check(&buf[..n - start])?;
                    return Ok(n - start);
                }
                None => {
                    self.preamble += n as u64;
                    if self.preamble > MAX_PREAMBLE {
                        return Err(self.stop(format!(
                            "no JSON document in its first {}",
                            bytes_iec(MAX_PREAMBLE as f64)
                        )));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything a guard over `text` passes on (read 7 bytes at a time),
    /// or the reason it stopped; and what it noted.
    fn drain(text: &[u8]) -> (Result<Vec<u8>, String>, Scan) {
        let mut scan = Scan::new();
        let mut g = Guard::new(text, &mut scan);
        let mut out = Vec::new();
        let mut buf = [0u8; 7];
        let got = loop {
            match g.read(&mut buf) {
                Ok(0) => break Ok(out),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => break Err(e.to_string()),
            }
        };
        (got, scan)
    }

    #[test]
    fn notes_before_the_document_are_skipped() {
        let (got, mut scan) = drain(b"fio: note: something\n{\"jobs\": []}\n");
        assert_eq!(got.unwrap(), b"{\"jobs\": []}\n");
        assert!(scan.started());
        assert_eq!(scan.take_source().unwrap(), b"{\"jobs\": []}\n");
    }

    #[test]
    fn brackets_and_quotes_inside_strings_do_not_count() {
        let deep = "[{".repeat(MAX_DEPTH);
        let text = format!("{{\"a\": \"{deep}\\\"\\\\{deep}\", \"b\": [[1]]}}");
        let (got, scan) = drain(text.as_bytes());
        assert_eq!(got.unwrap(), text.as_bytes());
        assert_eq!(scan.depth, 0);
        assert!(!scan.in_string);
    }

    #[test]
    fn limits_stop_reading() {
        let deep = format!("{{{}", "[".repeat(MAX_DEPTH));
        let err = drain(deep.as_bytes()).0.unwrap_err();
        let want = format!("deeper than {MAX_DEPTH} levels at byte {MAX_DEPTH}");
        assert!(err.contains(&want), "{err}");

        // Escapes count, and a string may end exactly at the limit.
        let fits = format!("{{\"{}\": 1}}", "\\\"".repeat(MAX_STRING / 2));
        assert!(drain(fits.as_bytes()).0.is_ok());
        let long = format!("{{\"a\": 1, \"{}\"}}", "x".repeat(MAX_STRING + 1));
        let (got, scan) = drain(long.as_bytes());
        let err = got.unwrap_err();
        assert!(
            err.contains("a string longer than 1.0MiB at byte 9"),
            "{err}"
        );
        assert_eq!(scan.exceeded(), Some(err.as_str()));

        let notes = vec![b'x'; MAX_PREAMBLE as usize + 1];
        let err = drain(&notes).0.unwrap_err();
        assert!(err.contains("no JSON document"), "{err}");
    }

    #[test]
    fn a_long_document_is_read_but_not_kept() {
        let text = format!("{{\"a\": [{}1]}}", "1,".repeat(MAX_SOURCE / 2));
        let (got, mut scan) = drain(text.as_bytes());
        assert_eq!(got.unwrap().len(), text.len());
        assert_eq!(scan.len(), text.len() as u64);
        assert!(scan.take_source().is_none(), "too long to keep");
    }
}
