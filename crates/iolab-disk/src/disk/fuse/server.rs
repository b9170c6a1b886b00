//! Start and stop: mount, answer FUSE_INIT (choosing the transport), start
//! the queue threads; on the way out unmount, stop and join them.

use super::device::{self, DeviceQueue};
use super::error::FuseError;
use super::files::Files;
use super::mount::{self, Unmounted};
use super::pace::Tally;
use super::proto::{self, Wire, init};
use super::uring::{self, Report, UringQueue};
use super::{Failures, ImageHandler, Options, Punctuality, Transport, TransportChoice, sys};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the unmount waits for the queue threads before aborting the
/// connection.
const JOIN_WAIT: Duration = Duration::from_secs(5);

type Worker = JoinHandle<Result<(), FuseError>>;

/// A mounted, served image. Dropping it unmounts too (errors lost).
pub struct Server {
    dir: PathBuf,
    name: String,
    transport: Transport,
    wake: Duration,
    conn: Option<PathBuf>,
    stops: Vec<Arc<OwnedFd>>,
    threads: Vec<Worker>,
    session: Option<Arc<OwnedFd>>,
    tallies: Vec<Arc<Tally>>,
    files: Option<Arc<Files>>,
    mounted: bool,
}

/// Mounts `dir` (an existing empty directory) with the image of `handler`
/// in it as `opts.name`, and serves it until [`Server::unmount`]. Returns
/// once the mount answers.
pub fn serve(
    dir: &Path,
    handler: Arc<dyn ImageHandler>,
    opts: Options,
) -> Result<Server, FuseError> {
    let dir = dir
        .canonicalize()
        .map_err(|e| FuseError::io(format!("cannot resolve {}", dir.display()), e))?;
    let max_write = (opts.max_write.clamp(4096, 1 << 20) / 4096) * 4096;
    let session = Arc::new(mount::open_dev()?);
    mount::mount(&dir, &session, max_write)?;
    let mut server = Server {
        dir,
        name: opts.name.clone(),
        transport: Transport::Device {
            queues: 0,
            why: String::new(),
        },
        wake: Duration::ZERO,
        conn: None,
        stops: Vec::new(),
        threads: Vec::new(),
        session: Some(session.clone()),
        tallies: Vec::new(),
        files: None,
        mounted: true,
    };
    server.conn = mount::connection(&server.dir);
    let files = Arc::new(Files::new(handler, &opts.name));
    server.files = Some(files.clone());
    match start(&mut server, &session, files, &opts, max_write) {
        Ok(()) => Ok(server),
        Err(e) => {
            let _ = server.shutdown();
            Err(e)
        }
    }
}

/// FUSE_INIT as the kernel sent it.
struct Init {
    unique: u64,
    arg: proto::InitIn,
    offered: u64,
}

fn read_init(session: &OwnedFd, timeout: Duration) -> Result<Init, FuseError> {
    let [ready] = sys::wait_readable([session.as_fd()], Some(timeout))
        .map_err(|e| FuseError::io("ppoll /dev/fuse", e))?;
    if !ready {
        return Err(FuseError::Init(format!("none came within {timeout:?}")));
    }
    let mut buf = vec![0u8; proto::MIN_READ_BUFFER.max(64 << 10)];
    let n =
        nix::unistd::read(session, &mut buf).map_err(|e| FuseError::errno("read /dev/fuse", e))?;
    let h = proto::InHeader::read(&buf[..n])
        .ok_or_else(|| FuseError::Init(format!("a request of {n} bytes")))?;
    if h.opcode != proto::op::INIT {
        return Err(FuseError::Init(format!("opcode {} came first", h.opcode)));
    }
    let arg = proto::InitIn::read_prefix(&buf[size_of::<proto::InHeader>()..n]);
    if arg.major != proto::KERNEL_VERSION {
        return Err(FuseError::Init(format!(
            "protocol {}.{}",
            arg.major, arg.minor
        )));
    }
    let mut offered = arg.flags as u64;
    if offered & init::INIT_EXT != 0 {
        offered |= (arg.flags2 as u64) << 32;
    }
    Ok(Init {
        unique: h.unique,
        arg,
        offered,
    })
}

/// The answer to FUSE_INIT.
fn init_reply(init: &Init, opts: &Options, max_write: u32, uring: bool) -> proto::InitOut {
    let mut want = init::ASYNC_DIO
        | init::ASYNC_READ
        | init::BIG_WRITES
        | init::MAX_PAGES
        | init::PARALLEL_DIROPS;
    if uring {
        want |= init::OVER_IO_URING;
    }
    let mut flags = want & init.offered;
    if init.offered & init::INIT_EXT != 0 {
        flags |= init::INIT_EXT;
    }
    let bg = opts.max_background.max(1);
    proto::InitOut {
        major: proto::KERNEL_VERSION,
        minor: init.arg.minor.min(proto::KERNEL_MINOR),
        max_readahead: init.arg.max_readahead,
        flags: flags as u32,
        flags2: (flags >> 32) as u32,
        max_background: bg,
        congestion_threshold: (bg as u32 * 3 / 4).max(1) as u16,
        max_write,
        time_gran: 1,
        max_pages: (max_write / 4096) as u16,
        ..Default::default()
    }
}

/// The payload the kernel puts in an io_uring entry at most (dev_uring.c
/// `fuse_uring_create`: FUSE_MIN_READ_BUFFER, max_write, max_pages pages).
fn payload_size(reply: &proto::InitOut) -> usize {
    let pages = match reply.flags as u64 & init::MAX_PAGES {
        0 => 32,
        _ => reply.max_pages.max(1) as usize,
    };
    proto::MIN_READ_BUFFER
        .max(reply.max_write as usize)
        .max(pages * 4096)
}

/// Threads of io_uring queues being started.
struct Rings {
    threads: Vec<Worker>,
    go: Vec<mpsc::Sender<bool>>,
    reports: mpsc::Receiver<Report>,
    stop: Arc<OwnedFd>,
    tallies: Vec<Arc<Tally>>,
}

impl Rings {
    /// Tells every thread to go (true) or quit; waits for the registration
    /// when going: Err(why) if a queue failed.
    fn go(&mut self, on: bool) -> Result<(), String> {
        for g in self.go.drain(..) {
            let _ = g.send(on);
        }
        if !on {
            return Ok(());
        }
        let mut failed = None;
        for _ in 0..self.threads.len() {
            match self.reports.recv() {
                Ok(Report::Registered(_, Ok(()))) => {}
                Ok(Report::Registered(q, Err(e))) => failed = Some(format!("queue {q}: {e}")),
                Ok(Report::Built(..)) => {}
                Err(_) => failed = Some("a queue thread ended".into()),
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Stops the threads and waits for them.
    fn quit(mut self) {
        let _ = self.go(false);
        sys::signal(self.stop.as_fd());
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Builds one ring per possible CPU; Ok with the slowest wake-up measured,
/// or Err(why not) with every thread gone.
fn build_rings(
    session: &Arc<OwnedFd>,
    files: &Arc<Files>,
    opts: &Options,
    payload: usize,
) -> Result<(Rings, Duration), String> {
    let stop = Arc::new(sys::eventfd().map_err(|e| format!("eventfd: {e}"))?);
    let (tx, reports) = mpsc::channel();
    let mut rings = Rings {
        threads: Vec::new(),
        go: Vec::new(),
        reports,
        stop: stop.clone(),
        tallies: Vec::new(),
    };
    for qid in 0..sys::possible_cpus() {
        let (go_tx, go_rx) = mpsc::channel();
        let cfg = UringQueue {
            qid,
            session: session.clone(),
            stop: stop.clone(),
            files: files.clone(),
            depth: opts.ring_depth.max(1),
            payload,
            pin: opts.pin,
            idle_spin: opts.idle_spin,
            tally: Arc::default(),
        };
        rings.tallies.push(cfg.tally.clone());
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("fuse-uring-{qid}"))
            .spawn(move || uring::run(cfg, tx, go_rx));
        match spawned {
            Ok(t) => {
                rings.threads.push(t);
                rings.go.push(go_tx);
            }
            Err(e) => {
                rings.quit();
                return Err(format!("cannot start a queue thread: {e}"));
            }
        }
    }
    // Only the threads hold senders now: a thread that dies unannounced
    // ends the wait below instead of hanging it.
    drop(tx);
    let mut wake = Duration::ZERO;
    let mut failed = None;
    for _ in 0..rings.threads.len() {
        match rings.reports.recv() {
            Ok(Report::Built(_, Ok(w))) => wake = wake.max(w),
            Ok(Report::Built(q, Err(e))) => failed = Some(format!("queue {q}: {e}")),
            Ok(Report::Registered(..)) => {}
            Err(_) => failed = Some("a queue thread ended".into()),
        }
    }
    match failed {
        None => Ok((rings, wake)),
        Some(why) => {
            rings.quit();
            Err(why)
        }
    }
}

fn start(
    server: &mut Server,
    session: &Arc<OwnedFd>,
    files: Arc<Files>,
    opts: &Options,
    max_write: u32,
) -> Result<(), FuseError> {
    let init = read_init(session, opts.init_timeout)?;
    // io_uring, or why not.
    let mut uring = match opts.transport {
        TransportChoice::Device => Err("--transport dev".to_string()),
        _ => mount::uring_enabled().and_then(|()| match init.offered & init::OVER_IO_URING {
            0 => Err("the kernel did not offer FUSE_OVER_IO_URING".into()),
            _ => Ok(()),
        }),
    };
    let mut reply = init_reply(&init, opts, max_write, uring.is_ok());
    let mut rings = None;
    if uring.is_ok() {
        match build_rings(session, &files, opts, payload_size(&reply)) {
            Ok((r, wake)) => {
                rings = Some(r);
                server.wake = wake;
            }
            Err(why) => {
                uring = Err(why);
                reply = init_reply(&init, opts, max_write, false);
            }
        }
    }
    if let (TransportChoice::Uring, Err(why)) = (opts.transport, &uring) {
        return Err(FuseError::UringUnavailable(why.clone()));
    }
    let mut answer = vec![0u8; size_of::<proto::OutHeader>() + size_of::<proto::InitOut>()];
    let len = device::header(&mut answer, init.unique, 0, size_of::<proto::InitOut>());
    reply.write_to(&mut answer[size_of::<proto::OutHeader>()..]);
    if let Err(e) = nix::unistd::write(&**session, &answer[..len]) {
        if let Some(r) = rings {
            r.quit();
        }
        return Err(FuseError::errno("answering FUSE_INIT", e));
    }
    // The kernel has the answer (so is initialized): register the entries.
    if let Some(mut r) = rings {
        match r.go(true) {
            Ok(()) => {
                server.stops.push(r.stop.clone());
                server.threads.append(&mut r.threads);
                server.tallies.append(&mut r.tallies);
                server.transport = Transport::Uring {
                    queues: server.threads.len(),
                    depth: opts.ring_depth.max(1),
                };
            }
            Err(why) => {
                // A refused REGISTER turned io_uring off for the
                // connection: requests come through /dev/fuse.
                r.quit();
                if opts.transport == TransportChoice::Uring {
                    return Err(FuseError::UringUnavailable(why));
                }
                uring = Err(format!("the kernel refused the ring ({why})"));
            }
        }
    }
    let count = match &uring {
        Ok(()) => 1,
        Err(_) if opts.queues > 0 => opts.queues,
        Err(_) => sys::possible_cpus(),
    };
    spawn_device(server, session, &files, opts, max_write, count)?;
    if let Err(why) = uring {
        server.transport = Transport::Device { queues: count, why };
    }
    Ok(())
}

/// Starts `count` /dev/fuse threads (the transport, or with io_uring the
/// one for forgets and interrupts).
fn spawn_device(
    server: &mut Server,
    session: &Arc<OwnedFd>,
    files: &Arc<Files>,
    opts: &Options,
    max_write: u32,
    count: usize,
) -> Result<(), FuseError> {
    let stop = Arc::new(sys::eventfd().map_err(|e| FuseError::io("eventfd", e))?);
    server.stops.push(stop.clone());
    let first = server.threads.len();
    let mut wakes = Vec::new();
    for i in 0..count {
        let fd = sys::clone_dev(session.as_fd())
            .map_err(|e| FuseError::io("cannot clone /dev/fuse", e))?;
        let (wake_tx, wake_rx) = mpsc::channel();
        let q = DeviceQueue {
            qid: first + i,
            fd,
            stop: stop.clone(),
            files: files.clone(),
            max_write,
            idle_spin: opts.idle_spin,
            wake: wake_tx,
            tally: Arc::default(),
        };
        server.tallies.push(q.tally.clone());
        let t = std::thread::Builder::new()
            .name(format!("fuse-dev-{i}"))
            .spawn(move || q.run())
            .map_err(|e| FuseError::io("cannot start a queue thread", e))?;
        server.threads.push(t);
        wakes.push(wake_rx);
    }
    // Each thread measures its wake-up first; the slowest is reported.
    for w in wakes {
        if let Ok(d) = w.recv() {
            server.wake = server.wake.max(d);
        }
    }
    Ok(())
}

impl Server {
    /// The transport running, e.g. "io_uring, 2 queues of 32".
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The mount point.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The served image's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// The slowest queue's measured wake-up cost: answers due sooner than
    /// this are spun for.
    pub fn wake_cost(&self) -> Duration {
        self.wake
    }

    /// How punctual the held answers were so far.
    pub fn punctuality(&self) -> Punctuality {
        let mut p = Punctuality::default();
        for t in &self.tallies {
            t.add_to(&mut p);
        }
        p
    }

    /// The requests whose handler panicked (answered EIO) so far.
    pub fn failures(&self) -> Failures {
        self.files
            .as_ref()
            .map(|f| f.failures())
            .unwrap_or_default()
    }

    /// Unmounts and joins every thread. A busy mount (a loop device still
    /// on the image) is detached lazily and its connection aborted, so
    /// what still uses it fails with ENOTCONN instead of hanging.
    pub fn unmount(mut self) -> Result<(), FuseError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), FuseError> {
        if !self.mounted {
            return Ok(());
        }
        self.mounted = false;
        let unmounted = mount::unmount(&self.dir);
        if let (Ok(Unmounted::Detached), Some(c)) = (&unmounted, &self.conn) {
            let _ = mount::abort(c);
        }
        for s in &self.stops {
            sys::signal(s.as_fd());
        }
        let until = Instant::now() + JOIN_WAIT;
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        if self.threads.iter().any(|t| !t.is_finished())
            && let Some(c) = &self.conn
        {
            let _ = mount::abort(c);
        }
        let mut first = None;
        for t in self.threads.drain(..) {
            let r = t.join().unwrap_or_else(|_| {
                Err(FuseError::Queue {
                    queue: usize::MAX,
                    what: "panicked".into(),
                })
            });
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        }
        // The last /dev/fuse descriptor closed ends the connection if
        // nothing else did.
        self.session = None;
        unmounted?;
        first.map_or(Ok(()), Err)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
