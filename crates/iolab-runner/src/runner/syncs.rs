//! When fio issues an `fsync`/`fdatasync` of `fsync=N` (`fdatasync=N`):
//! before fetching the next I/O, whenever the writes issued so far are a
//! non-zero multiple of N and the last thing that completed was not a sync
//! (io_u.c `get_rw_ddir`, `should_fsync`). So a mix syncs again before each
//! read that follows until the next write, and a new loop (whose start
//! forgets the last sync, libfio.c `reset_io_counters`) syncs once more
//! with a synchronous engine; a queued engine's loop stops before it
//! fetches the sync due at its end, so the next loop's start syncs once.
//!
//! fio counts a write when it queues it (ioengines.c `td_io_queue`), and any
//! read or write that completes clears `last_was_sync`. A synchronous engine
//! completes what it issues at once, so [`Syncs::after_io`] counts both at
//! the completion; a queued engine counts at the issue
//! ([`Syncs::issued`]) and re-arms at each completion
//! ([`Syncs::completed`]), so a sync point is not lost behind the writes
//! still in flight.

/// The sync state of one clone.
#[derive(Debug, Default)]
pub struct Syncs {
    /// fsync every this many writes (0: never).
    pub every: u64,
    /// Writes issued (fio's `io_issues[DDIR_WRITE]`; with a synchronous
    /// engine, the writes completed).
    writes: u64,
    /// I/Os issued, for the loops' starts.
    done: u64,
    /// The file last written: the one a sync goes to.
    file: u16,
    /// The file whose sync is due before the next I/O.
    pub pending: Option<u16>,
    /// A second sync is due with it (a new loop starts).
    extra: bool,
    /// fio's `last_was_sync`: a sync was issued and no read or write has
    /// completed since (queued engines; a synchronous one clears it at once).
    last_was_sync: bool,
    /// A queued engine: a loop that ends on a sync point syncs once.
    queued: bool,
}

impl Syncs {
    /// No syncs until `every` writes (0: never); `queued`: the engine
    /// keeps I/Os in flight.
    pub fn new(every: u64, queued: bool) -> Syncs {
        Syncs {
            every,
            queued,
            ..Syncs::default()
        }
    }

    /// After an I/O completed (`write`: a write to `file`); `loop_start`
    /// tells whether the next I/O begins a new loop, given the I/Os done.
    #[inline]
    pub fn after_io(&mut self, write: Option<u16>, loop_start: impl FnOnce(u64) -> bool) {
        if self.every == 0 {
            return;
        }
        self.last_was_sync = false;
        self.step(write, loop_start);
    }

    #[cold]
    fn step(&mut self, write: Option<u16>, loop_start: impl FnOnce(u64) -> bool) {
        self.done += 1;
        if let Some(f) = write {
            self.writes += 1;
            self.file = f;
        }
        let due = !self.last_was_sync && self.at_point();
        if due {
            self.pending = Some(self.file);
        }
        if loop_start(self.done) && due {
            self.extra = true;
        }
    }

    /// A queued engine issued an I/O (`write`: a write to `file`). A loop
    /// that ends on a sync point syncs once, not twice: fio's `do_io` stops
    /// once the loop's bytes are issued, before it fetches the sync due
    /// there, and the next loop's start (which forgets the last sync) asks
    /// for it once (posixaio, libaio and io_uring, `loops=3 fsync=2` over 7
    /// blocks: 10 syncs; psync, which syncs before it stops, 11).
    #[inline]
    pub fn issued(&mut self, write: Option<u16>) {
        if self.every == 0 {
            return;
        }
        self.step(write, |_| false);
    }

    /// A queued read or write completed: as it clears fio's
    /// `last_was_sync`, a sync is due again while the writes issued are a
    /// multiple of `every`.
    #[inline]
    pub fn completed(&mut self) {
        self.last_was_sync = false;
        if self.every != 0 && self.at_point() {
            self.pending = Some(self.file);
        }
    }

    /// The writes so far are a non-zero multiple of `every`.
    fn at_point(&self) -> bool {
        self.writes > 0 && self.writes.is_multiple_of(self.every)
    }

    /// A new loop begins now (a pass that paused; `short`: it issued less
    /// than the regions hold): a due sync is issued twice, as fio's loop
    /// start forgets the last one; once with a queued engine whose loop
    /// ended on its bytes, as it stopped before it fetched the sync (see
    /// [`Self::issued`]), twice when it ended on a fetch that found no I/O.
    pub fn new_loop(&mut self, short: bool) {
        self.last_was_sync = false;
        self.extra |= self.pending.is_some() && (!self.queued || short);
    }

    /// The due syncs, taken: the file and how many (1 or 2).
    pub fn take(&mut self) -> Option<(u16, u32)> {
        let f = self.pending.take()?;
        self.last_was_sync = true;
        let n = 1 + u32::from(std::mem::take(&mut self.extra));
        Some((f, n))
    }
}
