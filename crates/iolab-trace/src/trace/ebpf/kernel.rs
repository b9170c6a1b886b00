//! The BPF object loaded and attached (aya), and its maps read back into a
//! trace's figures. The object is `trace.bpf.o`, built from `trace.bpf.c`
//! by `build.sh` and committed.

use crate::trace::calls::{self, CALLS, URING_REQ};
use crate::trace::error::{TraceError, TraceResult};
use crate::trace::hist::{LogHist, SLOTS};
use crate::trace::model::{Stats, Thread};
use aya::maps::{Array, HashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::{BtfTracePoint, TracePoint};
use aya::{Btf, Ebpf, EbpfLoader};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The compiled BPF program (aligned for the ELF parser).
static OBJECT: &[u8] = aya::include_bytes_aligned!("trace.bpf.o");

/// Where the tracepoints are listed.
pub const TRACEFS: &str = "/sys/kernel/tracing";

/// Where a traced call's arguments are (`struct callinfo`): `call` is 1 +
/// its id (0: not traced), argument indexes 255 for none.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CallArgs {
    call: u16,
    cls: u8,
    fd: u8,
    off: u8,
    len: u8,
    flags: u8,
    path: u8,
}

impl CallArgs {
    fn of(id: u16, c: &calls::CallInfo) -> CallArgs {
        let at = |a: calls::Arg| a.unwrap_or(255);
        CallArgs {
            call: id + 1,
            cls: c.class as u8,
            fd: at(c.fd),
            off: at(c.offset),
            len: at(c.len),
            flags: at(c.flags),
            path: at(c.path),
        }
    }
}

/// The name of `call`'s syscall tracepoints (x86_64's `sendfile` is
/// `sys_enter_sendfile64`).
fn tracepoint(call: &str) -> &str {
    match call {
        "sendfile" => "sendfile64",
        c => c,
    }
}

/// Per call figures (`struct cstat`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CStat {
    count: u64,
    errors: u64,
    bytes: u64,
    sum_ns: u64,
    seq: u64,
}

impl CStat {
    /// Two CPUs' figures added.
    fn plus(self, o: &CStat) -> CStat {
        CStat {
            count: self.count + o.count,
            errors: self.errors + o.errors,
            bytes: self.bytes + o.bytes,
            sum_ns: self.sum_ns + o.sum_ns,
            seq: self.seq + o.seq,
        }
    }
}

/// Key of the per-file figures (`struct fkey`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FKey {
    /// Inode number.
    pub ino: u64,
    /// Device, the kernel's encoding (major << 20 | minor).
    pub dev: u32,
    /// Call id.
    pub call: u16,
    pad: u16,
}

const LOG2: usize = 65;

/// Per file and call figures (`struct fstat`).
#[repr(C)]
#[derive(Clone, Copy)]
struct FStat {
    count: u64,
    errors: u64,
    bytes: u64,
    sum_ns: u64,
    seq: u64,
    last_end: u64,
    lat: [u64; LOG2],
    size: [u64; LOG2],
}

/// A thread the fork tracepoint named (`struct thread`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct ThreadRec {
    tgid: u32,
    ppid: u32,
    comm: [u8; 16],
}

// SAFETY: plain-old-data with the C layout of trace.bpf.c's structs, every
// bit pattern valid (integers and byte arrays only).
unsafe impl aya::Pod for CallArgs {}
// SAFETY: as above.
unsafe impl aya::Pod for CStat {}
// SAFETY: as above.
unsafe impl aya::Pod for FKey {}
// SAFETY: as above.
unsafe impl aya::Pod for FStat {}
// SAFETY: as above.
unsafe impl aya::Pod for ThreadRec {}
// SAFETY: as above.
unsafe impl aya::Pod for Chunk {}

/// One CPU's calls gathered in event mode (`struct chunk`): a head whose
/// `len` is the count, then [`records::CHUNK`](super::records::CHUNK) events.
#[repr(C)]
#[derive(Clone, Copy)]
struct Chunk([u8; super::records::CHUNK_SIZE]);

/// The loaded program: links detach when it is dropped.
pub struct Kernel {
    bpf: Ebpf,
    /// Tracepoints this kernel does not have (their calls are not traced).
    pub missing: Vec<String>,
}

fn bpf_err(what: impl Into<String>) -> impl FnOnce(String) -> TraceError {
    let what = what.into();
    move |problem| TraceError::Bpf { what, problem }
}

fn has_event(category: &str, name: &str) -> bool {
    Path::new(TRACEFS)
        .join("events")
        .join(category)
        .join(name)
        .exists()
}

impl Kernel {
    /// Loads the program for process `target` (events through the ring
    /// buffer when `events`), and attaches it to every tracepoint.
    pub fn load(target: u32, events: bool) -> TraceResult<Kernel> {
        let on = u8::from(events);
        let ns = std::fs::metadata("/proc/self/ns/pid")
            .map_err(|e| bpf_err("find iolab's pid namespace")(e.to_string()))?;
        // The first pid namespace (PROC_PID_INIT_INO): the kernel's own
        // ids are iolab's, no translation needed (0, 0).
        let (ns_dev, ns_ino) = match ns.ino() {
            0xEFFF_FFFC => (0, 0),
            ino => (ns.dev(), ino),
        };
        let mut bpf = EbpfLoader::new()
            // inflight is task-local storage, which aya has no type for
            // (iolab never reads it).
            .allow_unsupported_maps()
            .set_global("target_tgid", &target, true)
            .set_global("events_on", &on, true)
            .set_global("pidns_dev", &ns_dev, true)
            .set_global("pidns_ino", &ns_ino, true)
            .load(OBJECT)
            .map_err(|e| bpf_err("load the program")(e.to_string()))?;
        let btf =
            Btf::from_sys_fs().map_err(|e| bpf_err("read the kernel's BTF")(e.to_string()))?;
        let fork: &mut BtfTracePoint = program(&mut bpf, "on_fork")?;
        fork.load("sched_process_fork", &btf)
            .map_err(|e| bpf_err("load on_fork")(e.to_string()))?;
        fork.attach()
            .map_err(|e| bpf_err("attach sched_process_fork")(e.to_string()))?;
        let exec: &mut BtfTracePoint = program(&mut bpf, "on_exec")?;
        exec.load("sched_process_exec", &btf)
            .map_err(|e| bpf_err("load on_exec")(e.to_string()))?;
        exec.attach()
            .map_err(|e| bpf_err("attach sched_process_exec")(e.to_string()))?;
        let mut missing = Vec::new();
        {
            let mut table: Array<&mut MapData, CallArgs> = map(&mut bpf, "calls")?;
            for (id, c) in CALLS
                .iter()
                .enumerate()
                .filter(|(_, c)| c.name != URING_REQ)
            {
                if !has_event("syscalls", &format!("sys_enter_{}", tracepoint(c.name))) {
                    missing.push(c.name.to_string());
                    continue;
                }
                table
                    .set(c.nr, CallArgs::of(id as u16, c), 0)
                    .map_err(|e| bpf_err("fill the call table")(e.to_string()))?;
            }
        }
        // The exit program first: every enter seen then has its exit seen.
        for (prog, tp) in [("on_exit", "sys_exit"), ("on_enter", "sys_enter")] {
            let p: &mut BtfTracePoint = program(&mut bpf, prog)?;
            p.load(tp, &btf)
                .map_err(|e| bpf_err(format!("load {prog}"))(verifier(e)))?;
            p.attach()
                .map_err(|e| bpf_err(format!("attach {tp}"))(e.to_string()))?;
        }
        if has_event("io_uring", "io_uring_submit_req")
            && has_event("io_uring", "io_uring_complete")
        {
            attach(&mut bpf, "uring_submit", "io_uring", "io_uring_submit_req")?;
            attach(&mut bpf, "uring_complete", "io_uring", "io_uring_complete")?;
        } else {
            missing.push(URING_REQ.to_string());
        }
        Ok(Kernel { bpf, missing })
    }

    /// Follows process `pid` too (its children are followed by the kernel).
    pub fn follow(&mut self, pid: u32) -> TraceResult<()> {
        let mut m: HashMap<&mut MapData, u32, u32> = map(&mut self.bpf, "targets")?;
        m.insert(pid, 1, 0)
            .map_err(|e| bpf_err("follow the process")(e.to_string()))
    }

    /// The ring buffer the events come through (taken once).
    pub fn ring(&mut self) -> TraceResult<RingBuf<MapData>> {
        let m = self
            .bpf
            .take_map("events")
            .ok_or_else(|| bpf_err("events")("no ring buffer in the object".into()))?;
        RingBuf::try_from(m).map_err(|e| bpf_err("events")(e.to_string()))
    }

    /// The calls each CPU gathered and has not sent yet (event mode), as
    /// records to parse (see [`super::records::split`]).
    pub fn staged(&self) -> TraceResult<Vec<Vec<u8>>> {
        let m: PerCpuArray<&MapData, Chunk> = map_ref(&self.bpf, "staging")?;
        let mut out = Vec::new();
        for key in 0..2u32 {
            let cpus = m
                .get(&key, 0)
                .map_err(|e| bpf_err("read the staged events")(e.to_string()))?;
            out.extend(cpus.iter().map(|c| c.0.to_vec()));
        }
        Ok(out)
    }

    /// Events lost: (calls, opens) the ring buffer had no room for.
    pub fn lost(&self) -> TraceResult<(u64, u64)> {
        let a: Array<&MapData, u64> = map_ref(&self.bpf, "lost")?;
        let get = |i| a.get(&i, 0).unwrap_or(0);
        Ok((get(0), get(1)))
    }

    /// The figures per call (kept per CPU in the kernel: summed here).
    pub fn calls(&self) -> TraceResult<BTreeMap<String, Stats>> {
        let stats: PerCpuArray<&MapData, CStat> = map_ref(&self.bpf, "call_stats")?;
        let lat: PerCpuArray<&MapData, u64> = map_ref(&self.bpf, "call_lat")?;
        let size: PerCpuArray<&MapData, u64> = map_ref(&self.bpf, "call_size")?;
        let mut out = BTreeMap::new();
        for (id, c) in CALLS.iter().enumerate() {
            let s = stats
                .get(&(id as u32), 0)
                .map(|cpus| cpus.iter().fold(CStat::default(), |a, b| a.plus(b)))
                .unwrap_or_default();
            if s.count == 0 {
                continue;
            }
            let hist = |a: &PerCpuArray<&MapData, u64>| {
                let mut h = LogHist::default();
                for slot in 0..SLOTS {
                    let n = a
                        .get(&((id * SLOTS + slot) as u32), 0)
                        .map(|cpus| cpus.iter().sum())
                        .unwrap_or(0);
                    h.add_slot(slot, n);
                }
                h
            };
            // (io_uring requests: the sizes of their reads and writes.)
            let moved = matches!(
                c.class,
                calls::Class::Read | calls::Class::Write | calls::Class::Copy
            ) || c.name == URING_REQ;
            out.insert(
                c.name.to_string(),
                Stats {
                    count: s.count,
                    errors: s.errors,
                    bytes: s.bytes,
                    sum_ns: s.sum_ns,
                    sequential: s.seq,
                    lat: hist(&lat),
                    sizes: if moved {
                        hist(&size)
                    } else {
                        LogHist::default()
                    },
                },
            );
        }
        Ok(out)
    }

    /// The figures per (device, inode) and call name.
    pub fn files(&self) -> TraceResult<BTreeMap<(u32, u64), BTreeMap<String, Stats>>> {
        let slots: HashMap<&MapData, FKey, u32> = map_ref(&self.bpf, "file_slots")?;
        let figures: Array<&MapData, FStat> = map_ref(&self.bpf, "file_stats")?;
        let mut out: BTreeMap<(u32, u64), BTreeMap<String, Stats>> = BTreeMap::new();
        for kv in slots.iter() {
            let (k, slot) = kv.map_err(|e| bpf_err("read file figures")(e.to_string()))?;
            let v = figures
                .get(&slot, 0)
                .map_err(|e| bpf_err("read file figures")(e.to_string()))?;
            let Some(c) = calls::by_id(k.call) else {
                continue;
            };
            // Bucket b holds [2^(b-1), 2^b). When every call fell in one
            // bucket they are counted at their exact mean (one size read
            // over and over: that size); else sizes at the bucket's lower
            // bound (they are mostly powers of two) and latencies at its
            // middle (1.5 x the lower bound).
            let log2 = |a: &[u64; LOG2], sum: u64, middle: bool| {
                let mut h = LogHist::default();
                let n: u64 = a.iter().sum();
                let one_bucket = a.iter().filter(|&&c| c > 0).count() == 1;
                for (b, &c) in a.iter().enumerate() {
                    let low = if b == 0 { 0 } else { 1u64 << (b - 1) };
                    let v = match (one_bucket, middle) {
                        (true, _) => sum / n.max(1),
                        (false, true) => low + low / 2,
                        (false, false) => low,
                    };
                    // Approximate: slots only, never taken as exact values.
                    h.add_slot(crate::trace::hist::slot(v), c);
                }
                h
            };
            let st = Stats {
                count: v.count,
                errors: v.errors,
                bytes: v.bytes,
                sum_ns: v.sum_ns,
                sequential: v.seq,
                lat: log2(&v.lat, v.sum_ns, true),
                sizes: log2(&v.size, v.bytes, false),
            };
            out.entry((k.dev, k.ino))
                .or_default()
                .entry(c.name.to_string())
                .or_default()
                .merge(&st);
        }
        Ok(out)
    }

    /// The threads the fork tracepoint saw.
    pub fn threads(&self) -> TraceResult<Vec<Thread>> {
        let m: HashMap<&MapData, u32, ThreadRec> = map_ref(&self.bpf, "threads")?;
        let mut out = Vec::new();
        for kv in m.iter() {
            let (tid, t) = kv.map_err(|e| bpf_err("read threads")(e.to_string()))?;
            let end = t.comm.iter().position(|&b| b == 0).unwrap_or(16);
            out.push(Thread {
                pid: t.tgid,
                tid,
                ppid: t.ppid,
                comm: String::from_utf8_lossy(&t.comm[..end]).into_owned(),
            });
        }
        Ok(out)
    }
}

fn program<'a, T>(bpf: &'a mut Ebpf, name: &str) -> TraceResult<&'a mut T>
where
    &'a mut T: TryFrom<&'a mut aya::programs::Program>,
{
    let p = bpf
        .program_mut(name)
        .ok_or_else(|| bpf_err(name)("not in the object".into()))?;
    p.try_into()
        .map_err(|_| bpf_err(name)("not the expected program type".into()))
}

fn attach(bpf: &mut Ebpf, prog: &str, category: &str, tp: &str) -> TraceResult<()> {
    let p: &mut TracePoint = program(bpf, prog)?;
    p.load()
        .map_err(|e| bpf_err(format!("load {prog}"))(verifier(e)))?;
    p.attach(category, tp)
        .map_err(|e| bpf_err(format!("attach {category}/{tp}"))(e.to_string()))?;
    Ok(())
}

/// A load error with the verifier's log, when there is one.
fn verifier(e: aya::programs::ProgramError) -> String {
    match e {
        aya::programs::ProgramError::LoadError {
            io_error,
            verifier_log,
        } => {
            format!("{io_error}\n{verifier_log}")
        }
        e => e.to_string(),
    }
}

fn map<'a, T>(bpf: &'a mut Ebpf, name: &str) -> TraceResult<T>
where
    T: TryFrom<&'a mut aya::maps::Map, Error = aya::maps::MapError>,
{
    let m = bpf
        .map_mut(name)
        .ok_or_else(|| bpf_err(name)("no such map in the object".into()))?;
    T::try_from(m).map_err(|e| bpf_err(name)(e.to_string()))
}

fn map_ref<'a, T>(bpf: &'a Ebpf, name: &str) -> TraceResult<T>
where
    T: TryFrom<&'a aya::maps::Map, Error = aya::maps::MapError>,
{
    let m = bpf
        .map(name)
        .ok_or_else(|| bpf_err(name)("no such map in the object".into()))?;
    T::try_from(m).map_err(|e| bpf_err(name)(e.to_string()))
}
