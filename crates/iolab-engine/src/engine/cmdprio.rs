//! fio's per-I/O priorities of the libaio and io_uring engines
//! (engines/cmdprio.c): `cmdprio_percentage` of the I/Os of a direction get
//! the priority `cmdprio_class`/`cmdprio`, or with `cmdprio_bssplit` a share
//! of the I/Os of each block size gets its own. The engine asks [`Picker`]
//! for each I/O it queues and puts the value in the request (the iocb's
//! `aio_reqprio` with IOCB_FLAG_IOPRIO, the SQE's `ioprio`); the other I/Os
//! keep the thread's priority (`prio`, `prioclass`).

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Most `cmdprio_bssplit` entries per direction.
pub const MAX_SPLIT: usize = 16;

/// fio's `IOPRIO_CLASS_RT`, the class when none is given.
const CLASS_RT: u32 = 1;

/// The kernel's ioprio value of `class` and `level` (`ioprio_value`).
pub fn ioprio(class: u32, level: u32) -> u16 {
    ((class << 13) | level) as u16
}

/// One entry of `cmdprio_bssplit`: this share of the I/Os of size `bs`
/// gets `prio` (`None`: `cmdprio_class`/`cmdprio`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitPrio {
    /// Block size.
    pub bs: u64,
    /// Percent of the I/Os of that size.
    pub perc: u32,
    /// The ioprio value, when the entry names one.
    pub prio: Option<u16>,
}

/// A job's cmdprio options, per direction (read, write).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CmdprioSpec {
    /// `cmdprio_percentage`.
    pub percentage: [u32; 2],
    /// `cmdprio_class` (0: not given, realtime as fio).
    pub class: [u32; 2],
    /// `cmdprio`.
    pub level: [u32; 2],
    /// `cmdprio_bssplit`: the entries with a non-zero share, by block size.
    pub split: [[SplitPrio; MAX_SPLIT]; 2],
    /// Entries of `split` used, per direction.
    pub split_len: [usize; 2],
    /// Seed of the draws.
    pub seed: u64,
}

impl CmdprioSpec {
    /// True when some I/O may get a priority of its own.
    pub fn used(&self) -> bool {
        self.percentage != [0, 0] || self.split_len != [0, 0]
    }

    /// The priority of direction `d` when an entry names none.
    fn implicit(&self, d: usize) -> u16 {
        let class = if self.class[d] == 0 {
            CLASS_RT
        } else {
            self.class[d]
        };
        ioprio(class, self.level[d])
    }
}

/// Picks each I/O's priority, as fio's `fio_cmdprio_set_ioprio`.
#[derive(Debug, Clone)]
pub struct Picker {
    spec: CmdprioSpec,
    rng: Xoshiro256PlusPlus,
    /// The ioprio the last pick gave (0: the thread's own).
    pub last: u16,
}

impl Picker {
    /// The picker of a job's options; `None` when no I/O gets a priority.
    pub fn of(spec: &CmdprioSpec) -> Option<Picker> {
        spec.used().then(|| Picker {
            spec: *spec,
            rng: Xoshiro256PlusPlus::seed_from_u64(spec.seed ^ 0x0063_6d64_7072_696f),
            last: 0,
        })
    }

    /// The ioprio of an I/O of `len` bytes (a write when `write`), or
    /// `None` for the thread's own.
    pub fn pick(&mut self, write: bool, len: u32) -> Option<u16> {
        let p = self.draw(write, len);
        self.last = p.unwrap_or(0);
        p
    }

    fn draw(&mut self, write: bool, len: u32) -> Option<u16> {
        let (s, d) = (&self.spec, write as usize);
        let entries = &s.split[d][..s.split_len[d]];
        let by_size = s.split_len != [0, 0];
        let total = if by_size {
            (entries.iter().filter(|e| e.bs == u64::from(len)))
                .map(|e| e.perc)
                .sum()
        } else {
            s.percentage[d]
        };
        if total == 0 {
            return None;
        }
        let rand = (self.rng.next_u64() % 100) as u32;
        if rand >= total {
            return None;
        }
        if !by_size {
            return Some(s.implicit(d));
        }
        let mut upto = 0;
        for e in entries.iter().filter(|e| e.bs == u64::from(len)) {
            upto += e.perc;
            if rand < upto {
                return Some(e.prio.unwrap_or_else(|| s.implicit(d)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_as_asked() {
        let mut spec = CmdprioSpec {
            percentage: [20, 0],
            class: [3, 0],
            level: [2, 0],
            ..Default::default()
        };
        let mut p = Picker::of(&spec).unwrap();
        let got: Vec<_> = (0..10_000).map(|_| p.pick(false, 4096)).collect();
        let hits = got.iter().filter(|g| **g == Some(ioprio(3, 2))).count();
        assert!((1700..2300).contains(&hits), "{hits}");
        assert!(got.iter().all(|g| g.is_none() || *g == Some(ioprio(3, 2))));
        assert_eq!(p.pick(true, 4096), None);
        spec.percentage = [0, 0];
        spec.split[0][0] = SplitPrio {
            bs: 65536,
            perc: 25,
            prio: Some(ioprio(1, 1)),
        };
        spec.split[0][1] = SplitPrio {
            bs: 65536,
            perc: 75,
            prio: Some(ioprio(3, 2)),
        };
        spec.split_len = [2, 0];
        let mut p = Picker::of(&spec).unwrap();
        assert_eq!(p.pick(false, 4096), None);
        let hits = (0..10_000)
            .filter(|_| p.pick(false, 65536) == Some(ioprio(1, 1)))
            .count();
        assert!((2200..2800).contains(&hits), "{hits}");
    }
}
