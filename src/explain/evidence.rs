//! What a stored run says about itself, in the units the rules reason in:
//! I/Os and their latencies, the depth the queue reached (Little's law),
//! what the device did (requests, their size and wait), what the page
//! cache held, CPU time, the limits the job set (rate, think time, fsync)
//! and the injected disk's rules. Built from the stored result and
//! environment only, so a run is explained the same way any time later.

use crate::counters::CounterDelta;
use crate::metrics::LatencyHistogram;
use crate::runner::{RunResult, Totals};
use crate::sys::environment::Environment;
use serde::Serialize;

/// A latency mode: a cluster of the histogram.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mode {
    /// Share of the I/Os in it (0-1).
    pub share: f64,
    /// Its median, µs.
    pub center_us: f64,
}

/// A run's evidence (all jobs and clones together).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Evidence {
    /// The engine of the first job.
    pub engine: String,
    /// The first job bypasses the page cache (`direct`).
    pub direct: bool,
    /// Bytes per I/O, on average.
    pub io_size: f64,
    /// The `iodepth` asked for (1 for synchronous engines).
    pub iodepth: u32,
    /// Threads doing I/O (every job's `numjobs`).
    pub threads: u32,
    /// CPUs of the machine it ran on.
    pub cpus: u32,
    /// Reads and writes done.
    pub reads: u64,
    /// Writes done.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Wall time, s.
    pub runtime_s: f64,
    /// Reads and writes per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw: f64,
    /// Mean latency of an I/O, µs.
    pub lat_mean_us: f64,
    /// Median latency, µs.
    pub lat_p50_us: f64,
    /// 99th percentile, µs.
    pub lat_p99_us: f64,
    /// I/Os in flight on average (IOPS × mean latency: Little's law).
    pub depth_achieved: f64,
    /// The latency histogram's clusters, largest share first.
    pub modes: Vec<Mode>,
    /// Device reads completed (every disk under the files).
    pub dev_reads: u64,
    /// Bytes the devices read.
    pub dev_read_bytes: u64,
    /// Mean wait of a device read, µs.
    pub dev_read_wait_us: f64,
    /// Device writes completed.
    pub dev_writes: u64,
    /// Mean wait of a device write, µs.
    pub dev_write_wait_us: f64,
    /// Time the devices were busy (`io_ticks`; requests that overlap
    /// count once), s.
    pub dev_busy_s: f64,
    /// Share of the file pages cached when the run started (0-1).
    pub cached_before: Option<f64>,
    /// CPU time in user mode, s.
    pub cpu_user_s: f64,
    /// CPU time in the kernel, s.
    pub cpu_sys_s: f64,
    /// The I/O rate the job set (`rate_iops`, all threads), per second.
    pub rate_iops: Option<f64>,
    /// The bandwidth the job set (`rate`, all threads), bytes per second.
    pub rate_bw: Option<f64>,
    /// Think time per I/O the job set, µs.
    pub thinktime_us: Option<f64>,
    /// fsync/fdatasync calls.
    pub fsyncs: u64,
    /// Time in them, s.
    pub fsync_s: f64,
    /// fadvise calls (`prefetch`).
    pub advises: u64,
    /// Their median, µs.
    pub advise_p50_us: f64,
    /// Time in them, s.
    pub advise_s: f64,
    /// The injected disk's rules, as `disk status` shows them ("" if none).
    pub injected: String,
    /// The delay the injected disk added per operation it served, µs.
    pub injected_delay_us: Option<f64>,
    /// The disks under the files (`vda`, `loop3`).
    pub devices: Vec<String>,
    /// The run's errors.
    pub errors: Vec<String>,
}

impl Evidence {
    /// The evidence of an `iolab run` result that ran on `env`.
    pub fn of_run(r: &RunResult, env: &Environment) -> Evidence {
        Evidence::of_reps(r, env, 0..r.repetitions.len())
    }

    /// The evidence of repetitions `reps` of a run (`repeat`: the first
    /// pass against the others).
    pub fn of_reps(r: &RunResult, env: &Environment, reps: std::ops::Range<usize>) -> Evidence {
        let mut t = Totals::default();
        let mut counters = CounterDelta::default();
        for i in reps.clone() {
            t.add_sequential(&r.rep_totals(i));
            counters.add(&r.repetitions[i].counters);
        }
        let job = r.jobs.first();
        let mut e = Evidence {
            engine: job.map(|j| j.engine.clone()).unwrap_or_default(),
            direct: job.is_some_and(|j| j.direct),
            iodepth: job.map_or(1, |j| j.queue_depths().1),
            threads: r.jobs.iter().map(|j| j.numjobs.max(1)).sum(),
            cpus: env.cpus.max(1),
            errors: r.errors(),
            ..Evidence::default()
        };
        e.add_totals(&t);
        e.add_counters(&counters);
        e.add_env(env);
        e.add_cache(r, reps);
        // A rate counts in the directions the job does (fio's rate_iops=N
        // sets both).
        let jobs_rate = |pick: fn(&crate::job::JobSpec) -> [u64; 2]| {
            let sum: f64 = (r.jobs.iter())
                .map(|j| {
                    let [r, w] = pick(j);
                    let per = r * u64::from(j.reads()) + w * u64::from(j.writes());
                    per as f64 * f64::from(j.numjobs.max(1))
                })
                .sum();
            (sum > 0.0).then_some(sum)
        };
        e.rate_iops = jobs_rate(|j| j.pacing.rate_iops);
        e.rate_bw = jobs_rate(|j| j.pacing.rate);
        e.thinktime_us = job
            .filter(|j| j.pacing.thinktime_us > 0)
            .map(|j| j.pacing.thinktime_us as f64 / j.pacing.thinktime_blocks.max(1) as f64);
        e
    }

    /// The evidence of a metadata tree (`iolab tree`): its operations
    /// (stat, open, mkdir...) count as reads, their latencies as the I/Os'.
    pub fn of_tree(t: &crate::tree::TreeResult, env: &Environment) -> Evidence {
        let mut e = Evidence {
            engine: "tree".into(),
            iodepth: 1,
            threads: t.threads.max(1),
            cpus: env.cpus.max(1),
            ..Evidence::default()
        };
        let mut lat = LatencyHistogram::new();
        let mut counters = CounterDelta::default();
        for p in &t.phases {
            lat.merge(&p.all_ops());
            counters.add(&p.counters);
            e.runtime_s += p.elapsed_ns as f64 / 1e9;
            e.read_bytes += p.bytes;
            e.cpu_user_s += p.cpu.user_us as f64 / 1e6;
            e.cpu_sys_s += p.cpu.sys_us as f64 / 1e6;
        }
        e.reads = lat.count();
        e.add_rates();
        e.add_latency(&lat);
        e.add_counters(&counters);
        e.add_env(env);
        e
    }

    /// The evidence of an `iolab exec` (its successful runs together): its
    /// read and write calls (`/proc/PID/io`'s `syscr`, `syscw`) count as
    /// I/Os; it has no per-call latency unless traced.
    pub fn of_exec(x: &crate::exec::ExecResult, env: &Environment) -> Evidence {
        let mut e = Evidence {
            engine: "exec".into(),
            iodepth: 1,
            threads: 1,
            cpus: env.cpus.max(1),
            ..Evidence::default()
        };
        let mut counters = CounterDelta::default();
        let (mut pages, mut cached) = (0u64, 0u64);
        for r in x.ok_runs() {
            e.reads += r.io("syscr");
            e.writes += r.io("syscw");
            e.read_bytes += r.io("rchar");
            e.write_bytes += r.io("wchar");
            e.runtime_s += r.wall_ns as f64 / 1e9;
            e.cpu_user_s += r.rusage("user_us") as f64 / 1e6;
            e.cpu_sys_s += r.rusage("sys_us") as f64 / 1e6;
            counters.add(&CounterDelta {
                elapsed_ns: r.wall_ns,
                disks: r.disks.clone(),
                sources: Default::default(),
            });
            if let Some(c) = &r.cache {
                pages += c.pages;
                cached += c.before;
            }
        }
        e.add_rates();
        if pages > 0 {
            e.cached_before = Some(cached as f64 / pages as f64);
        }
        e.add_counters(&counters);
        e.add_env(env);
        e
    }

    fn add_totals(&mut self, t: &Totals) {
        self.reads = t.read.ios();
        self.writes = t.write.ios();
        self.read_bytes = t.read.bytes;
        self.write_bytes = t.write.bytes;
        self.runtime_s = t.runtime_ns as f64 / 1e9;
        self.add_rates();
        // Little's law over the total latency (queued to completed).
        let mut lat = t.read.lat.clone();
        lat.merge(&t.write.lat);
        self.add_latency(&lat);
        self.cpu_user_s = t.cpu.user_us as f64 / 1e6;
        self.cpu_sys_s = t.cpu.sys_us as f64 / 1e6;
        self.fsyncs = t.fsync.count();
        self.fsync_s = t.fsync.sum() as f64 / 1e9;
        self.advises = t.advise.count();
        if self.advises > 0 {
            self.advise_p50_us = t.advise.percentile(50.0) as f64 / 1e3;
            self.advise_s = t.advise.sum() as f64 / 1e9;
        }
    }

    /// IOPS, bandwidth and I/O size from the counts and the runtime.
    fn add_rates(&mut self) {
        let ops = (self.reads + self.writes) as f64;
        let bytes = (self.read_bytes + self.write_bytes) as f64;
        if self.runtime_s > 0.0 {
            self.iops = ops / self.runtime_s;
            self.bw = bytes / self.runtime_s;
        }
        if ops > 0.0 {
            self.io_size = bytes / ops;
        }
    }

    /// The latency figures, the depth achieved (Little's law) and the modes.
    fn add_latency(&mut self, lat: &LatencyHistogram) {
        if lat.count() > 0 {
            self.lat_mean_us = lat.mean() / 1e3;
            self.lat_p50_us = lat.percentile(50.0) as f64 / 1e3;
            self.lat_p99_us = lat.percentile(99.0) as f64 / 1e3;
            self.depth_achieved = self.iops * self.lat_mean_us / 1e6;
            self.modes = modes(lat);
        }
    }

    fn add_counters(&mut self, c: &CounterDelta) {
        let (mut rticks, mut wticks) = (0u64, 0u64);
        for d in &c.disks {
            self.dev_reads += d.read_ios;
            self.dev_read_bytes += d.read_sectors * 512;
            self.dev_writes += d.write_ios;
            rticks += d.read_ticks;
            wticks += d.write_ticks;
            self.dev_busy_s += d.io_ticks as f64 / 1e3;
        }
        if self.dev_reads > 0 {
            self.dev_read_wait_us = rticks as f64 * 1e3 / self.dev_reads as f64;
        }
        if self.dev_writes > 0 {
            self.dev_write_wait_us = wticks as f64 * 1e3 / self.dev_writes as f64;
        }
        if let Some(v) = c.sources.get("injected") {
            let ops: u64 = (v.iter())
                .filter(|(k, _)| k.ends_with("_ops"))
                .map(|(_, n)| n)
                .sum();
            let ns: u64 = (v.iter())
                .filter(|(k, _)| k.ends_with("_delay_ns"))
                .map(|(_, n)| n)
                .sum();
            if ops > 0 && ns > 0 {
                self.injected_delay_us = Some(ns as f64 / ops as f64 / 1e3);
            }
        }
    }

    fn add_env(&mut self, env: &Environment) {
        for f in &env.files {
            for d in &f.disks {
                if !self.devices.contains(&d.name) {
                    self.devices.push(d.name.clone());
                }
            }
            if self.injected.is_empty() && !f.injected.is_empty() {
                self.injected = f.injected.clone();
            }
        }
    }

    fn add_cache(&mut self, r: &RunResult, reps: std::ops::Range<usize>) {
        let (mut pages, mut cached) = (0u64, 0u64);
        let before = r.repetitions[reps]
            .iter()
            .flat_map(|rep| rep.cache_before.iter().flatten());
        for f in before {
            if let Some(s) = &f.state {
                pages += s.pages;
                cached += s.cached;
            }
        }
        if pages > 0 {
            self.cached_before = Some(cached as f64 / pages as f64);
        }
    }

    /// Bytes the application read per byte the devices read (∞ when none).
    pub fn device_reads_per_read(&self) -> f64 {
        match self.reads {
            0 => 0.0,
            n => self.dev_reads as f64 / n as f64,
        }
    }

    /// True when the devices' reads during the run cannot be its own: it
    /// only read, buffered, files wholly cached as it started, so what the
    /// disk read was another process's (the disk's counters hold every
    /// process's requests).
    pub fn device_reads_foreign(&self) -> bool {
        !self.direct && self.writes == 0 && self.cached_before.is_some_and(|c| c >= 0.999)
    }

    /// Mean size of a device read, bytes.
    pub fn dev_read_size(&self) -> f64 {
        match self.dev_reads {
            0 => 0.0,
            n => self.dev_read_bytes as f64 / n as f64,
        }
    }

    /// CPU time used per second of wall time (CPUs kept busy).
    pub fn cpus_busy(&self) -> f64 {
        match self.runtime_s > 0.0 {
            true => (self.cpu_user_s + self.cpu_sys_s) / self.runtime_s,
            false => 0.0,
        }
    }

    /// Thread-seconds available: wall time × threads.
    pub fn thread_s(&self) -> f64 {
        self.runtime_s * f64::from(self.threads.max(1))
    }
}

/// The clusters of a histogram: runs of log2 buckets between empty or
/// low valleys (under 1% of the I/Os), each with its share and median;
/// clusters under 3% of the I/Os are dropped. Largest share first.
pub fn modes(h: &LatencyHistogram) -> Vec<Mode> {
    let total = h.count() as f64;
    if total == 0.0 {
        return Vec::new();
    }
    let buckets = h.log2_buckets();
    let mut out = Vec::new();
    let mut run: Vec<(u64, u64)> = Vec::new();
    let flush = |run: &mut Vec<(u64, u64)>, out: &mut Vec<Mode>| {
        let n: u64 = run.iter().map(|b| b.1).sum();
        if n as f64 >= 0.03 * total {
            let mut acc = 0;
            let mid = run
                .iter()
                .find(|b| {
                    acc += b.1;
                    acc * 2 >= n
                })
                .map_or(0, |b| b.0);
            // The bucket [2^k, 2^(k+1)): its middle.
            out.push(Mode {
                share: n as f64 / total,
                center_us: mid as f64 * 1.5 / 1e3,
            });
        }
        run.clear();
    };
    for b in buckets {
        if (b.1 as f64) < 0.01 * total {
            flush(&mut run, &mut out);
        } else {
            run.push(b);
        }
    }
    flush(&mut run, &mut out);
    out.sort_by(|a, b| b.share.total_cmp(&a.share));
    out
}
