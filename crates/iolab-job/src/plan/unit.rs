//! What the planner works with: the I/O it hands out ([`IoUnit`], the
//! engines' type), the part of a file a clone covers ([`Region`]) and what
//! it needs to know of the job ([`PlanParams`]).

use crate::job::{CachePolicy, JobSpec, Mix, Pattern};

/// One I/O to issue: what an engine is handed (defined with the engines).
pub use crate::engine::IoUnit;

/// Most files one job clone can work on (the job checks it).
pub use crate::job::MAX_FILES;

const _: () = assert!(std::mem::size_of::<Option<IoUnit>>() == 16);

/// The part of a file a clone works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
}

/// What the planner needs to know about a job.
#[derive(Debug, Clone)]
pub struct PlanParams {
    /// One region per file.
    pub regions: Vec<Region>,
    /// Sequential or random.
    pub pattern: Pattern,
    /// Directions.
    pub mix: Mix,
    /// Percentage of reads when mixed.
    pub rwmixread: u32,
    /// Smallest I/O.
    pub bs_min: u64,
    /// Largest I/O.
    pub bs_max: u64,
    /// Passes over the regions; `None` for endless (time_based).
    pub loops: Option<u64>,
    /// Stop after this many I/Os.
    pub number_ios: Option<u64>,
    /// Seed of every random choice.
    pub seed: u64,
    /// Random orders may use a table (fast, 4 bytes a slot; see
    /// [`super::shuffle`]); when false they are keyed permutations, O(1)
    /// memory.
    pub tables: bool,
    /// The access options: sizes per direction, alignment, distributions,
    /// zones, ... (see [`super::access`]).
    pub access: super::access::AccessPlan,
    /// Pause at the end of every pass over the regions (each loop, each
    /// `time_based` pass), so the runner can drop the files' cached pages
    /// before the next one, as fio does (see [`super::Planner::next_pass`]).
    pub pass_breaks: bool,
    /// A pass (fio's `do_io`) ends once it has issued the job's `size`
    /// bytes, besides where its files end. fio 3.33 counts those bytes only
    /// for queued I/Os: with a synchronous engine a pass ends where the
    /// files do (a random map runs out, a sequential offset passes the
    /// end) or at the bytes of all loops (`size`, else `io_size`, times
    /// `loops`), so holes that wrap (`rw=write:4k`) or random offsets
    /// without the map do every loop's bytes in the first pass.
    pub pass_bytes: bool,
    /// A write job with `verify_backlog` and `pass_bytes`: fio's `do_io`
    /// lets its pass issue `size` bytes more (backend.c: `total_bytes +=
    /// td->o.size`), counting the backlog's reads and the writes together,
    /// so over files that never end (wrapping zones, random offsets without
    /// the map) a pass writes more where rewritten blocks leave fewer reads.
    /// The runner reports those reads ([`super::Planner::count_extra_bytes`]).
    pub backlog_pass: bool,
    /// A write job's `fsync=N` (`fdatasync=N`), 0 for none: fio fetches
    /// each sync as an I/O, and it takes a file's turn (see
    /// [`super::Planner`]).
    pub sync_every: u64,
    /// fio's files start over after the loops for `io_size` (`keep_running`):
    /// its `clear_io_state` forgets the files done only when `time_based`,
    /// `loops` > 1 or `do_verify` (libfio.c `reset_io_counters`), so with
    /// `do_verify=0` and one loop the next pass finds every file done.
    /// False here still lets a pass that ended on its bytes (`pass_bytes`,
    /// not short of `size`) start over: fio's `do_io` stopped before its
    /// files were done (see [`super::Planner::another_pass`]).
    pub restarts: bool,
}

/// Most bytes of random-order tables the clones that run together may hold,
/// over all their jobs and files: one full table. A table is 4 bytes a slot
/// (up to 64 MiB a file), built whole as the planner starts: without a
/// budget, `bs=1` over 16 MiB with `numjobs=40` held 2.6 GB for ten I/Os, 20
/// such jobs 1.3 GB, and 4,096 clones or 1,000 file names would exhaust any
/// machine. Within it, planning builds at most 64 MiB (about 50 ms).
pub const TABLE_BUDGET: u64 = 64 << 20;

/// Whether random orders may use tables: those of `clones`, each a job and
/// the regions of one of its clones, all running together, fit
/// [`TABLE_BUDGET`]. Sequential jobs have none.
pub fn tables_fit<'a>(clones: impl IntoIterator<Item = (&'a JobSpec, &'a [Region])>) -> bool {
    let bytes = (clones.into_iter())
        .filter(|(job, _)| job.pattern == Pattern::Random)
        .flat_map(|(job, regions)| {
            (regions.iter()).map(|r| super::shuffle::table_bytes(r.len / job.bs_min.max(1)))
        })
        .fold(0u64, u64::saturating_add);
    bytes <= TABLE_BUDGET
}

impl PlanParams {
    /// The plan of clone `clone` of `job` over `regions` (one per file):
    /// what the runner hands each clone's planner. `tables`: see
    /// [`tables_fit`].
    pub fn of_clone(job: &JobSpec, regions: Vec<Region>, clone: u32, tables: bool) -> PlanParams {
        let access = super::access::AccessPlan::of_job(job);
        PlanParams {
            regions,
            pattern: job.pattern,
            mix: job.mix,
            rwmixread: job.rwmixread,
            bs_min: job.bs_min,
            bs_max: job.bs_max,
            // With io_size the passes go on after `loops` until its bytes
            // are done ([`super::Planner::another_pass`]).
            loops: (!job.time_based).then_some(job.loops),
            // fio counts number_ios over all loops: N per loop.
            number_ios: (job.number_ios).map(|n| {
                if job.time_based {
                    n
                } else {
                    n.saturating_mul(job.loops)
                }
            }),
            seed: clone_seed(job, clone),
            tables,
            access,
            // fio invalidates a file's cache each time it starts over on it
            // (`invalidate`, not with O_DIRECT): iolab's `cache=cold`; and
            // a write job that verifies reads back after each pass.
            pass_breaks: job.cache == CachePolicy::Cold && !job.direct
                || job.verify.on() && job.verify.do_verify && job.mix != crate::job::Mix::Read,
            pass_bytes: job.time_based || job.queued(),
            backlog_pass: (job.time_based || job.queued())
                && job.writes()
                && job.verify.on()
                && job.verify.backlog > 0,
            restarts: job.time_based || job.loops > 1 || job.verify.do_verify,
            sync_every: if job.writes() {
                job.fsync.max(job.files.fdatasync)
            } else {
                0
            },
        }
    }
}

/// Seed of clone `clone` of `job`: fixed by `randseed` unless `randrepeat=0`.
pub fn clone_seed(job: &JobSpec, clone: u32) -> u64 {
    let base = if job.randrepeat || job.access.allrandrepeat {
        job.randseed
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    };
    base ^ (clone as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}
