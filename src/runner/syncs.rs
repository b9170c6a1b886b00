//! When fio issues an `fsync`/`fdatasync` of `fsync=N` (`fdatasync=N`):
//! before fetching the next I/O, whenever the writes issued so far are a
//! non-zero multiple of N and the last thing that completed was not a sync
//! (io_u.c `get_rw_ddir`, `should_fsync`). So a mix syncs again before each
//! read that follows until the next write, and a new loop (whose start
//! forgets the last sync, libfio.c `reset_io_counters`) syncs once more.

/// The sync state of one clone.
#[derive(Debug, Default)]
pub struct Syncs {
    /// fsync every this many writes (0: never).
    pub every: u64,
    /// Writes completed (fio's `io_issues[DDIR_WRITE]`).
    writes: u64,
    /// I/Os completed, for the loops' starts.
    done: u64,
    /// The file last written: the one a sync goes to.
    file: u16,
    /// The file whose sync is due before the next I/O.
    pub pending: Option<u16>,
    /// A second sync is due with it (a new loop starts).
    extra: bool,
}

impl Syncs {
    /// No syncs until `every` writes (0: never).
    pub fn new(every: u64) -> Syncs {
        Syncs {
            every,
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
        self.step(write, loop_start);
    }

    #[cold]
    fn step(&mut self, write: Option<u16>, loop_start: impl FnOnce(u64) -> bool) {
        self.done += 1;
        if let Some(f) = write {
            self.writes += 1;
            self.file = f;
        }
        let due = self.writes > 0 && self.writes.is_multiple_of(self.every);
        if due {
            self.pending = Some(self.file);
        }
        if loop_start(self.done) && due {
            self.extra = true;
        }
    }

    /// A new loop begins now (a pass that paused): a due sync is issued
    /// twice, as fio's loop start forgets the last one.
    pub fn new_loop(&mut self) {
        self.extra |= self.pending.is_some();
    }

    /// The due syncs, taken: the file and how many (1 or 2).
    pub fn take(&mut self) -> Option<(u16, u32)> {
        let f = self.pending.take()?;
        let n = 1 + u32::from(std::mem::take(&mut self.extra));
        Some((f, n))
    }
}
