//! The `ebpf` tracer: tracepoints on each traced system call, aggregated
//! in the kernel ([`kernel`]); in event mode every call comes through a
//! ring buffer ([`records`]) into the trace file.

pub mod kernel;
pub mod records;

use super::error::{TraceError, TraceResult};
use super::file::TraceWriter;
use super::model::{Event, FileStats, Meta, Mode, Thread, Trace};
use super::sizes::{FileTally, SizeTally};
use super::{Request, Target, Tracer, pattern};
use crate::metrics::clock::now_ns;
use crate::sys::held::{Out, held};
use kernel::Kernel;
use records::Names;
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

/// How long a command stopped with the trace has after SIGINT before
/// SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// eBPF on the syscall tracepoints (root, BTF, tracefs).
#[derive(Debug)]
pub struct Ebpf;

impl Tracer for Ebpf {
    fn check(&self) -> TraceResult<()> {
        if !crate::sys::machine::is_root() {
            return Err(TraceError::Missing {
                what: "root",
                hint: "loading BPF programs needs root (CAP_BPF and CAP_PERFMON); run it with sudo, or use --tracer strace".into(),
            });
        }
        if !Path::new("/sys/kernel/btf/vmlinux").exists() {
            return Err(TraceError::Missing {
                what: "BTF",
                hint: "this kernel has no /sys/kernel/btf/vmlinux (build it with CONFIG_DEBUG_INFO_BTF=y), or use --tracer strace".into(),
            });
        }
        let events = Path::new(kernel::TRACEFS).join("events/syscalls");
        if !events.exists() {
            // tracefs is not mounted: mount it where aya looks for it.
            let _ = crate::sys::mount::mount(
                Path::new("tracefs"),
                Path::new(kernel::TRACEFS),
                "tracefs",
                "",
            );
        }
        if !events.exists() {
            return Err(TraceError::Missing {
                what: "the syscall tracepoints",
                hint: format!(
                    "{} is missing (mount -t tracefs tracefs {}; a kernel with CONFIG_FTRACE_SYSCALLS)",
                    events.display(),
                    kernel::TRACEFS
                ),
            });
        }
        if !bpf_syscall_works() {
            return Err(TraceError::Missing {
                what: "BPF",
                hint: "the bpf() system call is not available (a kernel with CONFIG_BPF_SYSCALL)"
                    .into(),
            });
        }
        Ok(())
    }

    fn record(&self, req: &Request) -> TraceResult<Trace> {
        let (mut held, pid) = match &req.target {
            Target::Command(argv) => {
                let out = match req.stdout_to_stderr {
                    true => Out::Stderr,
                    false => Out::Inherit,
                };
                let h = held(argv, out, Out::Inherit).map_err(|source| TraceError::Spawn {
                    command: argv.first().cloned().unwrap_or_default(),
                    source,
                })?;
                let pid = h.pid;
                (Some(h), pid)
            }
            Target::Pid(p) => {
                if !Path::new(&format!("/proc/{p}")).exists() {
                    return Err(TraceError::Usage {
                        what: format!("-p {p}"),
                        problem: "no such process".into(),
                    });
                }
                (None, *p)
            }
        };
        // Events count from before the programs attach: none is earlier.
        let t0 = now_ns();
        let mut kernel = match Kernel::load(pid, req.mode == Mode::Events) {
            Ok(k) => k,
            Err(e) => {
                if let Some(h) = &mut held {
                    h.kill();
                }
                return Err(e);
            }
        };
        let mut names = Names::starting_in(match held {
            Some(_) => std::env::current_dir().unwrap_or_default(),
            None => std::fs::read_link(format!("/proc/{pid}/cwd")).unwrap_or_default(),
        });
        let mut threads = Vec::new();
        // The files it holds now: a held command's inherited ones (its
        // stdout redirected to a file), an attached process's open ones.
        names.scan(pid);
        if held.is_none() {
            threads = existing_threads(pid);
            for t in &threads {
                if t.pid != pid {
                    kernel.follow(t.pid)?;
                }
            }
        }
        let meta = Meta {
            source: "ebpf".into(),
            mode: req.mode,
            command: match &req.target {
                Target::Command(a) => a.clone(),
                Target::Pid(_) => Vec::new(),
            },
            pid,
            started_unix: chrono::Utc::now().timestamp_micros() as f64 / 1e6,
            kernel: read_trim("/proc/sys/kernel/osrelease"),
            host: read_trim("/proc/sys/kernel/hostname"),
            ..Meta::default()
        };
        let mut writer = req
            .output
            .map(|p| TraceWriter::create(p, &meta))
            .transpose()?;
        let mut ring = kernel.ring()?;
        let mut events: Vec<Event> = Vec::new();
        // The files' access patterns, from the events as they stream by.
        let mut patterns = pattern::Analyser::default();
        // Exact sizes, from the events (the kernel's are histogram slots).
        let mut sizes = SizeTally::default();
        // In event mode the per-file figures, from the events.
        let mut per_file = FileTally::default();
        let mut handle =
            |b: &[u8], names: &mut Names, w: &mut Option<TraceWriter>| -> TraceResult<()> {
                let Some(mut r) = records::parse(b) else {
                    return Ok(());
                };
                r.event.t_ns = r.ts.saturating_sub(t0);
                let open = r.path.is_some();
                if open {
                    names.learn_open(&r);
                }
                if req.mode != Mode::Events {
                    return Ok(());
                }
                let fd = if open {
                    r.event.result as i32
                } else {
                    r.event.fd
                };
                r.event.file = names.index(r.dev, r.ino, r.event.pid, fd);
                patterns.add_event(&r.event);
                sizes.add(&r.event);
                per_file.add(&r.event);
                match w {
                    Some(w) => {
                        w.paths(&names.paths)?;
                        w.event(&r.event)
                    }
                    None => {
                        events.push(r.event);
                        Ok(())
                    }
                }
            };
        if let Some(h) = &mut held {
            h.release();
        }
        if let Some(f) = req.attached {
            f();
        }
        // --duration counts from the command's release, not from t0 (taken
        // before the programs were loaded, which on a loaded machine can
        // take a good part of a second).
        let deadline = req.duration.map(|d| now_ns() + d.as_nanos() as u64);
        let mut exit_status = None;
        let mut flushed = now_ns();
        let mut batch = Batch::default();
        loop {
            wait_readable(ring.as_raw_fd(), Duration::from_millis(10));
            drain(&mut ring, &mut batch);
            for item in batch.items().flat_map(records::split) {
                handle(item, &mut names, &mut writer)?;
            }
            // Every second to disk: a trace killed (kill -9) keeps all but
            // its last second.
            if let Some(w) = &mut writer
                && now_ns() - flushed >= 1_000_000_000
            {
                w.flush()?;
                flushed = now_ns();
            }
            if req.stop.is_set() || deadline.is_some_and(|d| now_ns() >= d) {
                break;
            }
            match &mut held {
                Some(h) => {
                    if let Some(st) = h.try_wait() {
                        exit_status = Some(st);
                        break;
                    }
                }
                None if ended(pid) => break,
                None => {}
            }
        }
        let duration_ns = now_ns().saturating_sub(t0);
        let mut stopped = None;
        if let Some(h) = &mut held
            && exit_status.is_none()
        {
            // Ctrl-C or --duration: the command and its children stop with
            // the trace, as Ctrl-C stops them.
            let (st, n) = h.interrupt_tree(STOP_GRACE);
            exit_status = st;
            let why = match req.stop.is_set() {
                true => "interrupted",
                false => "--duration reached",
            };
            stopped = Some(format!(
                "{why}: iolab sent SIGINT to the command and the {} process(es) under it (SIGKILL to any still running after {} s)",
                n.saturating_sub(1),
                STOP_GRACE.as_secs()
            ));
        }
        drain(&mut ring, &mut batch);
        for item in batch.items().flat_map(records::split) {
            handle(item, &mut names, &mut writer)?;
        }
        // The calls each CPU gathered but did not send (event mode).
        if req.mode == Mode::Events {
            for mut chunk in kernel.staged()? {
                // A chunk, even one never sent (its kind is set as it is sent).
                chunk[records::KIND_AT] = records::KIND_CHUNK;
                for item in records::split(&chunk) {
                    handle(item, &mut names, &mut writer)?;
                }
            }
        }
        let (lost_events, lost_opens) = kernel.lost()?;
        // In event mode the kernel keeps no per-file figures.
        let files = if req.mode == Mode::Events {
            BTreeMap::new()
        } else {
            kernel.files()?
        };
        let threads = merge_threads(threads, kernel.threads()?, &events, pid, &meta.command);
        let mut t = Trace {
            meta: Meta {
                duration_ns,
                exit_status,
                stopped,
                notes: Vec::new(),
                ..meta
            },
            calls: kernel.calls()?,
            files: files
                .into_iter()
                .map(|((dev, ino), calls)| FileStats {
                    path: names.name(dev, ino),
                    calls,
                    pattern: None,
                })
                .collect(),
            threads,
            lost: lost_events + lost_opens,
            paths: names.paths,
            events,
        };
        if req.mode == Mode::Events {
            t.files = per_file.files(&t.paths);
            // The kernel counts sequential calls per file: in event mode here.
            for (name, st) in t.calls.iter_mut() {
                st.sequential = (t.files.iter())
                    .filter_map(|f| f.calls.get(name))
                    .map(|s| s.sequential)
                    .sum();
            }
            if t.lost > 0 {
                t.meta.notes.push(format!(
                    "{} events lost (the ring buffer was full): the per-file figures, made \
                     from the events, miss those calls; the per-call figures count them",
                    t.lost
                ));
            }
        }
        patterns.fill(&mut t);
        sizes.fill(&mut t);
        t.files.sort_by(|a, b| a.path.cmp(&b.path));
        if let Some(w) = writer {
            w.finish(&t)?;
        }
        Ok(t)
    }
}

/// Records copied out of the ring buffer, to be handled after: the ring's
/// consumer position is written once per record, and each write costs the
/// traced program's next reservation a cache miss (its CPU reads that
/// position), so the ring is emptied in one quick pass, not while each
/// record is decoded and written out.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Batch {
    /// The records copied, in order.
    fn items(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.bytes[a..b])
    }
}

/// Empties `ring` into `batch` (what it held before is dropped), up to 64
/// MiB at a time.
fn drain(ring: &mut aya::maps::RingBuf<aya::maps::MapData>, batch: &mut Batch) {
    batch.bytes.clear();
    batch.ends.clear();
    while batch.bytes.len() < 64 << 20 {
        let Some(item) = ring.next() else { break };
        batch.bytes.extend_from_slice(&item);
        batch.ends.push(batch.bytes.len());
    }
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// True when process `pid` is gone or a zombie (ended, not yet reaped).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(st) => st
            .rsplit_once(')')
            .is_some_and(|(_, rest)| matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))),
        Err(_) => true,
    }
}

/// The threads of `pid` and of its children now (for `-p`).
fn existing_threads(pid: u32) -> Vec<Thread> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(tid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
        out.push(Thread {
            pid,
            tid,
            ppid: 0,
            comm: comm.trim_end().to_string(),
        });
    }
    out
}

/// The threads: those there at the start, those forked during the trace,
/// the traced process itself, and any other thread events came from.
fn merge_threads(
    mut first: Vec<Thread>,
    forked: Vec<Thread>,
    events: &[Event],
    pid: u32,
    command: &[String],
) -> Vec<Thread> {
    // The kernel's record of a thread (named at fork, renamed at exec)
    // over what /proc said of it when the trace began.
    for f in forked {
        match first.iter_mut().find(|t| t.tid == f.tid) {
            Some(t) => {
                if !f.comm.is_empty() {
                    t.comm = f.comm;
                }
                if f.ppid != 0 {
                    t.ppid = f.ppid;
                }
            }
            None => first.push(f),
        }
    }
    let mut seen: std::collections::BTreeSet<u32> = first.iter().map(|t| t.tid).collect();
    if seen.insert(pid) {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .ok()
            .or_else(|| {
                let p = std::path::Path::new(command.first()?);
                Some(p.file_name()?.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        first.push(Thread {
            pid,
            tid: pid,
            ppid: 0,
            comm: comm.trim_end().to_string(),
        });
    }
    for e in events {
        if seen.insert(e.tid) {
            first.push(Thread {
                pid: e.pid,
                tid: e.tid,
                ..Thread::default()
            });
        }
    }
    first.sort_by_key(|t| (t.pid, t.tid));
    first
}

/// Waits until `fd` is readable or `timeout` passes.
fn wait_readable(fd: i32, timeout: Duration) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    poll_one(&mut p, timeout.as_millis() as i32);
}

/// `poll(2)` on one descriptor.
fn poll_one(p: &mut libc::pollfd, ms: i32) {
    // SAFETY: `p` is one valid pollfd for the duration of the call.
    unsafe {
        libc::poll(p, 1, ms);
    }
}

/// True when the kernel has the bpf() system call (an invalid command
/// then fails with EINVAL, not ENOSYS).
fn bpf_syscall_works() -> bool {
    // SAFETY: BPF_PROG_LOAD with a null attribute of size 0 only makes the
    // kernel check the command; nothing is read or written.
    let r = unsafe { libc::syscall(libc::SYS_bpf, -1i32, std::ptr::null::<u8>(), 0u32) };
    !(r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS))
}
