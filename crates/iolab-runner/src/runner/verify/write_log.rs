//! The writes a verifying clone has yet to read back, kept as fio keeps
//! its `io_hist`: in issue order when the random map guarantees no two
//! writes of a loop overlap, else sorted by file and offset with a write
//! replacing every earlier one it overlaps (iolog.c `log_io_piece`), so a
//! rewritten range is read back once, with its newest header. As fio, a
//! write is logged when issued and marked complete when done; reading back
//! stops at one still in flight (a newer write to the same range has then
//! already replaced the older entry, so a backlog check never reads a
//! block a write in flight is changing).

use crate::plan::IoUnit;
use std::collections::{BTreeMap, VecDeque};

/// A completed write, to be read back.
#[derive(Debug, Clone, Copy)]
pub(in crate::runner) struct Written {
    /// Where it went.
    pub io: IoUnit,
    /// Its header's `numberio`.
    pub numberio: u64,
    /// Issued, not yet complete.
    pub in_flight: bool,
}

/// The writes not yet read back.
pub(in crate::runner) enum WriteLog {
    /// Oldest first (random jobs with fio's map).
    InOrder(VecDeque<Written>),
    /// By (file, offset), without overlaps.
    Sorted(BTreeMap<(u16, u64), Written>),
}

impl WriteLog {
    /// An empty log; `in_order` when writes of a loop never overlap.
    pub fn new(in_order: bool) -> WriteLog {
        match in_order {
            true => WriteLog::InOrder(VecDeque::new()),
            false => WriteLog::Sorted(BTreeMap::new()),
        }
    }

    /// Logs a completed write (dropping the ones it overlaps when sorted).
    pub fn push(&mut self, w: Written) {
        match self {
            WriteLog::InOrder(q) => q.push_back(w),
            WriteLog::Sorted(t) => {
                let (file, start) = (w.io.file, w.io.offset);
                let end = start + w.io.len as u64;
                // Logged entries never overlap, so their ends grow with
                // their offsets: walk down from the new write's end.
                let gone: Vec<_> = (t.range((file, 0)..(file, end)).rev())
                    .take_while(|(_, o)| o.io.offset + o.io.len as u64 > start)
                    .map(|(k, _)| *k)
                    .collect();
                for k in gone {
                    t.remove(&k);
                }
                t.insert((file, start), w);
            }
        }
    }

    /// Marks the write `numberio` at `io` complete (if still logged).
    pub fn complete(&mut self, io: &IoUnit, numberio: u64) {
        let w = match self {
            WriteLog::InOrder(q) => q.iter_mut().rev().find(|w| w.numberio == numberio),
            WriteLog::Sorted(t) => t.get_mut(&(io.file, io.offset)),
        };
        if let Some(w) = w.filter(|w| w.numberio == numberio) {
            w.in_flight = false;
        }
    }

    /// The next write to read back: the oldest, or the lowest offset;
    /// `None` when it is still in flight (fio's `get_next_verify`).
    pub fn pop(&mut self) -> Option<Written> {
        match self {
            WriteLog::InOrder(q) => match q.front() {
                Some(w) if !w.in_flight => q.pop_front(),
                _ => None,
            },
            WriteLog::Sorted(t) => match t.first_key_value() {
                Some((_, w)) if !w.in_flight => t.pop_first().map(|(_, w)| w),
                _ => None,
            },
        }
    }

    /// The writes logged (fio's `io_hist_len`).
    pub fn len(&self) -> usize {
        match self {
            WriteLog::InOrder(q) => q.len(),
            WriteLog::Sorted(t) => t.len(),
        }
    }

    /// True when nothing waits to be read back.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every logged write (the runtime or a loaded state ended
    /// the checks).
    pub fn clear(&mut self) {
        match self {
            WriteLog::InOrder(q) => q.clear(),
            WriteLog::Sorted(t) => t.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(file: u16, offset: u64, len: u32, numberio: u64) -> Written {
        let io = IoUnit {
            offset,
            len,
            file,
            write: true,
            trim: false,
        };
        Written {
            io,
            numberio,
            in_flight: false,
        }
    }

    #[test]
    fn sorted_keeps_the_newest_of_overlapping_writes() {
        let mut log = WriteLog::new(false);
        // rw=write:-8k with bs=16k: each write overlaps the one before.
        log.push(w(0, 0, 16384, 0));
        log.push(w(0, 8192, 16384, 1));
        log.push(w(0, 16384, 16384, 2));
        log.push(w(1, 0, 4096, 3));
        log.push(w(0, 65536, 4096, 4));
        let got: Vec<_> = std::iter::from_fn(|| log.pop())
            .map(|w| (w.io.file, w.io.offset, w.numberio))
            .collect();
        assert_eq!(got, [(0, 16384, 2), (0, 65536, 4), (1, 0, 3)]);
    }

    #[test]
    fn reading_back_stops_at_a_write_in_flight() {
        for in_order in [true, false] {
            let mut log = WriteLog::new(in_order);
            log.push(w(0, 0, 4096, 0));
            log.push(Written {
                in_flight: true,
                ..w(0, 4096, 4096, 1)
            });
            log.push(w(0, 8192, 4096, 2));
            assert_eq!(log.pop().map(|w| w.numberio), Some(0));
            assert!(log.pop().is_none(), "in flight");
            log.complete(&w(0, 4096, 4096, 1).io, 1);
            let rest: Vec<_> = std::iter::from_fn(|| log.pop())
                .map(|w| w.numberio)
                .collect();
            assert_eq!(rest, [1, 2]);
        }
    }

    #[test]
    fn in_order_keeps_every_write_oldest_first() {
        let mut log = WriteLog::new(true);
        log.push(w(0, 8192, 4096, 0));
        log.push(w(0, 0, 4096, 1));
        log.push(w(0, 8192, 4096, 2));
        assert_eq!(log.len(), 3);
        let got: Vec<_> = std::iter::from_fn(|| log.pop())
            .map(|w| w.numberio)
            .collect();
        assert_eq!(got, [0, 1, 2]);
    }
}
