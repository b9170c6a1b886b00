//! `cpuio`: no I/O; each call burns CPU, as fio's engines/cpu.c. With
//! `cpumode=noop` (default) a call spins for `cpuchunks` microseconds
//! (default 50,000, fio's `usec_spin`); with `cpumode=qsort` it sorts
//! fio's 256 Ki 32-bit numbers four times (ascending, descending, by
//! byte, descending again), made once by fio's multiply-with-carry
//! generator. After each call the job thinks (sleeps) `cpuchunks ×
//! (100 − cpuload) / cpuload` microseconds, so the clone is busy about
//! `cpuload` percent of the time; in qsort mode the chunk is the time the
//! last sort took (fio adjusts its think time the same way). Each call
//! counts as one read of no bytes (fio's `FIO_NOIO`).

use super::{Engine, EngineConfig, EngineError, IoUnit, Queued};
use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// How a call burns CPU (fio's `cpumode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpuMode {
    /// Spins for `cpuchunks` microseconds.
    #[default]
    Noop,
    /// Sorts fio's 256 Ki numbers four times.
    Qsort,
}

/// The options of ioengine=cpuio (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuioOptions {
    /// fio's `cpuload`: percent of the time busy (required; above 100: 100).
    pub cpuload: Option<u32>,
    /// fio's `cpuchunks`: microseconds a call burns (default 50,000).
    pub cpuchunks: Option<u32>,
    /// fio's `cpumode`.
    pub cpumode: Option<CpuMode>,
    /// fio's `exit_on_io_done`: end when the jobs doing I/O have ended.
    pub exit_on_io_done: Option<bool>,
}

impl CpuioOptions {
    /// `cpuload`, capped at 100 as fio (0 when not given).
    pub fn load(&self) -> u64 {
        u64::from(self.cpuload.unwrap_or(0).min(100))
    }

    /// `cpuchunks` in microseconds (fio's default 50,000).
    pub fn chunk_us(&self) -> u64 {
        u64::from(self.cpuchunks.unwrap_or(50_000))
    }

    /// fio's think time after a call that burned `chunk_us`:
    /// `chunk × (100 − load) / load` microseconds (0 without a load).
    pub fn think_us(&self, chunk_us: u64) -> u64 {
        match self.load() {
            0 => 0,
            load => chunk_us * (100 - load) / load,
        }
    }
}

/// fio's `qsort_size`: the numbers sorted by a qsort call.
const QSORT_LEN: usize = 256 * 1024;

/// Burns CPU for each call.
#[derive(Debug)]
pub struct CpuioEngine {
    mode: CpuMode,
    opts: CpuioOptions,
    chunk_us: u64,
    /// The numbers qsort mode sorts (empty in noop mode).
    data: Vec<i32>,
    /// The think time fio would set after the last call.
    think_us: u64,
}

/// fio's `mwc32`: Marsaglia's multiply-with-carry generator.
fn mwc32(w: &mut u32, z: &mut u32) -> u32 {
    *z = 36969u32.wrapping_mul(*z & 65535).wrapping_add(*z >> 16);
    *w = 18000u32.wrapping_mul(*w & 65535).wrapping_add(*w >> 16);
    (*z << 16).wrapping_add(*w)
}

/// fio's qsort_init: the numbers, from its fixed seed.
fn qsort_data() -> Vec<i32> {
    let (mut w, mut z) = (521_288_629u32, 362_436_069u32);
    (0..QSORT_LEN)
        .map(|_| mwc32(&mut w, &mut z) as i32)
        .collect()
}

/// fio's do_qsort: ascending, descending, by signed byte, descending.
fn sort_four_ways(data: &mut [i32]) {
    data.sort_unstable();
    data.sort_unstable_by(|a, b| b.cmp(a));
    let mut bytes: Vec<i8> = data.iter().flat_map(|v| v.to_ne_bytes()).map(|b| b as i8).collect();
    bytes.sort_unstable();
    for (v, b) in data.iter_mut().zip(bytes.chunks_exact(4)) {
        *v = i32::from_ne_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8]);
    }
    data.sort_unstable_by(|a, b| b.cmp(a));
}

/// fio's `usec_spin`: busy until `us` microseconds have passed.
fn spin(us: u64) {
    let t0 = Instant::now();
    while (t0.elapsed().as_micros() as u64) < us {
        std::hint::spin_loop();
    }
}

impl Engine for CpuioEngine {
    const MOVES_DATA: bool = false;
    const DISKLESS: bool = true;
    const NO_IO: bool = true;
    const OPTIONS: &'static [&'static str] =
        &["cpuload", "cpuchunks", "cpumode", "exit_on_io_done"];

    fn check(cfg: &EngineConfig) -> Result<(), EngineError> {
        let a = &cfg.args;
        if a.cpuio.load() == 0 {
            return Err(EngineError::new(
                "cpuload",
                "cpu thread needs rate (cpuload=), as fio",
            ));
        }
        if a.cpuio.exit_on_io_done == Some(true) {
            return Err(EngineError::new(
                "exit_on_io_done",
                "not supported by iolab yet: a cpuio job runs to its runtime",
            ));
        }
        if a.runtime_us.is_none() {
            return Err(EngineError::new(
                "runtime",
                "ioengine=cpuio burns CPU for the job's runtime: give runtime= (fio burns until interrupted)",
            ));
        }
        Ok(())
    }

    fn build(cfg: &EngineConfig) -> Result<Self, EngineError> {
        Self::check(cfg)?;
        let opts = cfg.args.cpuio.clone();
        let mode = opts.cpumode.unwrap_or_default();
        let chunk_us = opts.chunk_us();
        Ok(CpuioEngine {
            mode,
            data: match mode {
                CpuMode::Noop => Vec::new(),
                CpuMode::Qsort => qsort_data(),
            },
            think_us: opts.think_us(chunk_us),
            chunk_us,
            opts,
        })
    }

    fn queue(
        &mut self,
        _tag: u32,
        _fd: RawFd,
        unit: IoUnit,
        _buf: &mut [u8],
    ) -> io::Result<Queued> {
        match self.mode {
            CpuMode::Noop => spin(self.chunk_us),
            CpuMode::Qsort => {
                let t0 = Instant::now();
                sort_four_ways(&mut self.data);
                self.chunk_us = t0.elapsed().as_micros() as u64;
                self.think_us = self.opts.think_us(self.chunk_us);
            }
        }
        Ok(Queued::Done(unit.len as usize))
    }

    fn think_us(&self) -> Option<u64> {
        Some(self.think_us)
    }
}
