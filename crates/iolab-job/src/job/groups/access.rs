//! Where the I/Os go and how large they are, beyond the core `rw`, `bs`,
//! `size` and `offset`: fio's `rwmixwrite`, `io_size`, `offset_increment`,
//! `norandommap`, `allrandrepeat`, `random_generator`, `percentage_random`,
//! `bssplit`, `blockalign`, `bs_unaligned`, `bs_is_seq_rand`,
//! `random_distribution` and the strided zones (`zonemode`, `zonesize`,
//! `zonerange`, `zoneskip`). The value forms of the core options
//! (`rw=read:-8k`, `bs=4k,64k`, `size=50%`) land here too; the planner
//! (the `plan` module, above this one) gives them their meaning.

use crate::job::error::{JobProblem, ValueError};
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, opt};
use crate::job::range::ANY;
use crate::job::spec::JobSpec;
use crate::job::units::{parse_bool, parse_size};
use serde::{Deserialize, Serialize};

pub use super::access_values::{Distribution, Split, Zones};
use super::access_values::{distribution, per_direction, split};

/// Smallest and largest I/O size of one direction.
pub type Sizes = (u64, u64);

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Access {
    /// fio's `rw=read:N` (sequential): bytes added to each next offset
    /// (holes; negative: backwards).
    pub seq_add: i64,
    /// fio's `rw=randread:N`: a new random offset every N I/Os, sequential
    /// in between (1: every I/O random).
    pub seq_nr: u64,
    /// `bs`/`bsrange` given per direction (read, write): their sizes.
    pub bs_dir: Option<[Sizes; 2]>,
    /// `bs`'s third part (`bs=R,W,T`): the size of trims.
    #[serde(default)]
    pub trim_bs: Option<Sizes>,
    /// The sizes each direction uses, read and write, once every option is
    /// applied ([`finish`]): from `bssplit`, `bs_dir` or the core sizes.
    pub sizes: [Sizes; 2],
    /// `size=N%`: the region is this share of the file.
    pub size_percent: Option<u32>,
    /// `offset=N%`: the region starts at this share of the file.
    pub offset_percent: Option<u32>,
    /// fio's `io_size`: bytes of I/O per loop, over the region (0: `size`).
    pub io_size: u64,
    /// Clone N's region starts `N * offset_increment` after `offset`.
    pub offset_increment: u64,
    /// fio's `norandommap`: random offsets may repeat within a loop.
    pub norandommap: bool,
    /// fio's `allrandrepeat`: every random choice repeatable (iolab draws
    /// all of them from the one seeded stream, as `randrepeat`).
    pub allrandrepeat: bool,
    /// fio's `random_generator` as written (iolab's is xoshiro256++; `lfsr`
    /// also keeps each block once per loop without the map, as fio).
    pub random_generator: String,
    /// Percent of the I/Os of a random job that are random (read, write);
    /// the others continue sequentially.
    pub percentage_random: [u32; 2],
    /// fio's `bssplit` per direction (read, write); empty: none.
    pub bssplit: [Split; 2],
    /// fio's `blockalign` per direction: random offsets are multiples of it
    /// (`None`: of the direction's smallest size).
    pub blockalign: Option<[u64; 2]>,
    /// fio's `bs_unaligned`: sizes within a range need not be multiples of
    /// the smallest.
    pub bs_unaligned: bool,
    /// fio's `bs_is_seq_rand`: the two sizes of `bs=A,B` are for sequential
    /// and random I/Os, not reads and writes.
    pub bs_is_seq_rand: bool,
    /// fio's `random_distribution`.
    pub distribution: Distribution,
    /// `zonemode=strided` with its sizes.
    pub zones: Option<Zones>,
    /// `zonesize`, `zonerange`, `zoneskip` as given (used by `zonemode`).
    pub zone_values: [u64; 3],
    /// `zonemode` as given (`none` or `strided`; `None`: not given).
    pub zonemode: Option<String>,
}

impl Default for Access {
    fn default() -> Access {
        Access {
            seq_add: 0,
            seq_nr: 1,
            bs_dir: None,
            trim_bs: None,
            sizes: [(4096, 4096); 2],
            size_percent: None,
            offset_percent: None,
            io_size: 0,
            offset_increment: 0,
            norandommap: false,
            allrandrepeat: false,
            random_generator: "tausworthe".into(),
            percentage_random: [100; 2],
            bssplit: Default::default(),
            blockalign: None,
            bs_unaligned: false,
            bs_is_seq_rand: false,
            distribution: Distribution::Random,
            zones: None,
            zone_values: [0; 3],
            zonemode: None,
        }
    }
}

impl Access {
    /// Sets the sizes given per direction by `bs=A,B` or `bsrange=A,B`
    /// (`None`: that direction keeps its sizes, at first `core`).
    pub fn set_sizes(&mut self, given: [Option<Sizes>; 2], core: Sizes) {
        let mut dirs = self.bs_dir.unwrap_or([core; 2]);
        for (d, s) in dirs.iter_mut().zip(given) {
            if let Some(s) = s {
                *d = s;
            }
        }
        self.bs_dir = Some(dirs);
    }
}

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    opt(
        "rwmixwrite",
        Kind::Int(Range { min: 0, max: 100 }),
        "percentage of writes in rw/randrw (100 - rwmixread; the last of the two wins)",
    ),
    OptDef {
        aliases: &["io_limit"],
        ..opt(
            "io_size",
            Kind::Size(ANY),
            "bytes of I/O per loop over the region, independent of size (0: size)",
        )
    },
    opt(
        "offset_increment",
        Kind::Size(ANY),
        "clone N's region starts N*offset_increment after offset (N%: of the file)",
    ),
    opt(
        "norandommap",
        Kind::Bool,
        "random offsets may repeat within a loop (no map of the blocks done)",
    ),
    opt(
        "allrandrepeat",
        Kind::Bool,
        "every random choice repeatable (iolab's one seeded stream, as randrepeat)",
    ),
    opt(
        "random_generator",
        Kind::Choice(&["tausworthe", "lfsr", "tausworthe64"]),
        "accepted: iolab draws with xoshiro256++; lfsr keeps each block once per loop",
    ),
    opt(
        "percentage_random",
        Kind::Str,
        "percent of a random job's I/Os that are random (read[,write]); the rest sequential",
    ),
    opt(
        "bssplit",
        Kind::Str,
        "sizes by share: 4k/10:64k/50:32k/40, per direction with ','",
    ),
    OptDef {
        aliases: &["ba"],
        ..opt(
            "blockalign",
            Kind::Str,
            "random offsets are multiples of this (read[,write]; default the smallest bs)",
        )
    },
    OptDef {
        aliases: &["blocksize_unaligned"],
        ..opt(
            "bs_unaligned",
            Kind::Bool,
            "sizes of a range need not be multiples of its smallest",
        )
    },
    opt(
        "bs_is_seq_rand",
        Kind::Bool,
        "bs=A,B: A for sequential, B for random I/Os (not reads, writes)",
    ),
    opt(
        "random_distribution",
        Kind::Str,
        "random, zipf:THETA, pareto:H, normal:DEV (each [:CENTER]), zoned:P/S%:..., zoned_abs:P/SIZE:...",
    ),
    opt(
        "zonemode",
        Kind::Choice(&["none", "strided", "zbd"]),
        "strided: zonesize bytes in each zonerange, then skip zoneskip (zbd refused)",
    ),
    opt(
        "zonesize",
        Kind::Size(ANY),
        "strided zones: bytes done in a zone before the next",
    ),
    opt(
        "zonerange",
        Kind::Size(ANY),
        "strided zones: size of a zone (default zonesize)",
    ),
    opt(
        "zoneskip",
        Kind::Size(ANY),
        "strided zones: bytes skipped after a zone",
    ),
];

/// Applies one of [`OPTIONS`]; a rule its value breaks is reported with the
/// option's name.
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    apply_value(job, def, v).map_err(|p| match p {
        JobProblem::Invalid(m) if !m.starts_with(def.name) => {
            JobProblem::Invalid(format!("{}: {m}", def.name))
        }
        p => p,
    })
}

fn apply_value(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let a = &mut job.access;
    match def.name {
        "rwmixwrite" => job.rwmixread = 100 - number::<u32>(def, v)?,
        "io_size" => a.io_size = number(def, v)?,
        "offset_increment" => a.offset_increment = number(def, v)?,
        "norandommap" => a.norandommap = parse_bool(v)?,
        "allrandrepeat" => a.allrandrepeat = parse_bool(v)?,
        "random_generator" => a.random_generator = v.to_string(),
        "percentage_random" => {
            let p = per_direction(def.name, v, |t| {
                Kind::Int(Range { min: 0, max: 100 })
                    .number(t)
                    .map(|n| n as u32)
            })?;
            a.percentage_random = [p[0].unwrap_or(100), p[1].or(p[0]).unwrap_or(100)];
        }
        "bssplit" => a.bssplit = split(v)?,
        "blockalign" => {
            let p = per_direction(def.name, v, |t| match parse_size(t)? {
                0 => Err(ValueError::OutOfRange {
                    text: t.to_string(),
                    range: "1-2^64-1 bytes".into(),
                }),
                n => Ok(n),
            })?;
            a.blockalign = p[0].map(|r| [r, p[1].unwrap_or(r)]);
        }
        "bs_unaligned" => a.bs_unaligned = parse_bool(v)?,
        "bs_is_seq_rand" => a.bs_is_seq_rand = parse_bool(v)?,
        "random_distribution" => a.distribution = distribution(v)?,
        "zonemode" => {
            if v == "zbd" {
                return Err(JobProblem::Invalid(
                    "zonemode=zbd is not supported by iolab: it needs a zoned block device \
                     and its zone management (write pointers, resets); zonemode=strided is"
                        .into(),
                ));
            }
            a.zonemode = Some(v.to_string());
        }
        "zonesize" => a.zone_values[0] = number(def, v)?,
        "zonerange" => a.zone_values[1] = number(def, v)?,
        "zoneskip" => a.zone_values[2] = number(def, v)?,
        other => unreachable!("access group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// Settles what depends on several options, once all are applied (fio's
/// `fixup_options`): the sizes of each direction and the core `bs_min`,
/// `bs_max` as the smallest and largest of them; the strided zones.
pub fn finish(job: &mut JobSpec) {
    let core = (job.bs_min, job.bs_max);
    let trims = job.trims();
    let a = &mut job.access;
    for d in 0..2 {
        let s = &a.bssplit[d];
        a.sizes[d] = if s.is_empty() {
            a.bs_dir.map_or(core, |b| b[d])
        } else {
            let lo = s.iter().map(|p| p.0).min().unwrap_or(core.0);
            (lo, s.iter().map(|p| p.0).max().unwrap_or(core.1))
        };
    }
    // A trimming job plans its trims in the sizes of `bs`'s trim part
    // (trimwrite writes what it trimmed), as fio.
    if let Some(t) = a.trim_bs.filter(|_| trims) {
        a.sizes = [t; 2];
    }
    job.bs_min = a.sizes[0].0.min(a.sizes[1].0);
    job.bs_max = a.sizes[0].1.max(a.sizes[1].1);
    let [size, range, skip] = a.zone_values;
    a.zones = (a.zonemode.as_deref() == Some("strided")).then_some(Zones {
        size,
        range: if range == 0 { size } else { range },
        skip,
    });
}

/// The rules between this group's options.
fn validate(job: &JobSpec) -> Result<(), JobProblem> {
    let a = &job.access;
    let bad = |why: String| Err(JobProblem::Invalid(why));
    if a.zones.is_none() && a.zone_values[0] > 0 {
        return bad(
            "zonesize needs zonemode=strided (fio: zonemode=none and zonesize are not compatible)"
                .into(),
        );
    }
    if let Some(z) = a.zones {
        if z.size == 0 {
            return bad("zonemode=strided needs zonesize (bytes done in each zone)".into());
        }
        if z.range < job.bs_max {
            return bad(format!(
                "zonerange ({}) is smaller than the largest block ({})",
                z.range, job.bs_max
            ));
        }
    }
    if job.direct
        && let Some(ba) = a.blockalign
        && ba.iter().any(|b| !b.is_multiple_of(512))
    {
        return bad(format!(
            "direct=1 needs blockalign in multiples of 512 bytes (blockalign {},{})",
            ba[0], ba[1]
        ));
    }
    Ok(())
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Access patterns",
    options: OPTIONS,
    apply,
    validate,
};
