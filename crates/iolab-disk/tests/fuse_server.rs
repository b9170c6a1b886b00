//! iolab's FUSE server (`disk::fuse`) over a 64 MiB image in memory, on
//! both transports: O_DIRECT writes and reads at several offsets and sizes,
//! fsync, punched holes, concurrent readers, a held-back answer, a loop
//! device with direct I/O on top, and a clean unmount. Needs root and
//! /dev/fuse (skips with a reason otherwise); the io_uring test turns the
//! fuse module's enable_uring on for its run and puts it back.

use iolab_disk::disk::fuse::{
    self, Answer, ImageHandler, Options, Server, Transport, TransportChoice,
};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

const SIZE: usize = 64 << 20;
const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";

/// One test at a time: they share enable_uring, loop devices, and the
/// count of server threads.
static SERIAL: Mutex<()> = Mutex::new(());

/// The image: bytes in memory, a delay for every answer, counters.
struct Mem {
    bytes: RwLock<Vec<u8>>,
    delay_ns: AtomicU64,
    fsyncs: AtomicU64,
}

impl Mem {
    fn new() -> Arc<Mem> {
        Arc::new(Mem {
            bytes: RwLock::new(vec![0; SIZE]),
            delay_ns: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
        })
    }

    fn answer(&self, result: Result<u32, i32>) -> Answer {
        Answer {
            delay_ns: self.delay_ns.load(Ordering::Relaxed),
            result,
        }
    }

    fn at(&self, offset: u64, len: usize) -> Vec<u8> {
        let b = self.bytes.read().unwrap();
        b[offset as usize..offset as usize + len].to_vec()
    }
}

impl ImageHandler for Mem {
    fn size(&self) -> u64 {
        SIZE as u64
    }
    fn open(&self) -> u64 {
        1
    }
    fn read(&self, _fh: u64, offset: u64, buf: &mut [u8]) -> Answer {
        let b = self.bytes.read().unwrap();
        let from = (offset as usize).min(SIZE);
        let n = buf.len().min(SIZE - from);
        buf[..n].copy_from_slice(&b[from..from + n]);
        self.answer(Ok(n as u32))
    }
    fn write(&self, _fh: u64, offset: u64, data: &[u8]) -> Answer {
        let from = offset as usize;
        if from + data.len() > SIZE {
            return self.answer(Err(libc::ENOSPC));
        }
        self.bytes.write().unwrap()[from..from + data.len()].copy_from_slice(data);
        self.answer(Ok(data.len() as u32))
    }
    fn fallocate(&self, _fh: u64, offset: u64, len: u64, mode: u32) -> Answer {
        let punch = (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) as u32;
        if mode & punch != 0 {
            let from = (offset as usize).min(SIZE);
            let to = (offset + len).min(SIZE as u64) as usize;
            self.bytes.write().unwrap()[from..to].fill(0);
        }
        self.answer(Ok(0))
    }
    fn fsync(&self, _fh: u64) -> Answer {
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        self.answer(Ok(0))
    }
}

/// Why this machine cannot run the tests, if it cannot.
fn cannot_run() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse".into());
    }
    None
}

/// Turns enable_uring on for its life; puts the old value back after.
struct UringOn {
    old: Option<String>,
}

impl UringOn {
    fn new() -> Result<UringOn, String> {
        let old = std::fs::read_to_string(ENABLE_URING)
            .map_err(|e| format!("cannot read {ENABLE_URING}: {e}"))?;
        let old = old.trim().to_string();
        if matches!(old.as_str(), "Y" | "1") {
            return Ok(UringOn { old: None });
        }
        std::fs::write(ENABLE_URING, "1")
            .map_err(|e| format!("cannot turn on {ENABLE_URING}: {e}"))?;
        Ok(UringOn { old: Some(old) })
    }
}

impl Drop for UringOn {
    fn drop(&mut self) {
        if let Some(old) = &self.old {
            let v = if old == "N" { "0" } else { "1" };
            let _ = std::fs::write(ENABLE_URING, v);
        }
    }
}

/// A loop device with direct I/O over a file, detached on drop.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Loop {
        let out = Command::new("losetup")
            .args(["--direct-io=on", "-f", "--show"])
            .arg(file)
            .output()
            .expect("losetup runs");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Loop(String::from_utf8(out.stdout).unwrap().trim().to_string())
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
        // The loop driver lets go of the file asynchronously.
        let name = self.0.trim_start_matches("/dev/");
        let backing = format!("/sys/block/{name}/loop/backing_file");
        let until = Instant::now() + Duration::from_secs(5);
        while Path::new(&backing).exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// `n` bytes at a 4 KiB boundary, for O_DIRECT.
struct Aligned(Vec<u8>, usize, usize);

impl Aligned {
    fn new(n: usize) -> Aligned {
        let v = vec![0u8; n + 4096];
        let off = v.as_ptr().align_offset(4096);
        Aligned(v, off, n)
    }
    fn get(&mut self) -> &mut [u8] {
        &mut self.0[self.1..self.1 + self.2]
    }
}

fn pattern(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// Writes patterns at several offsets and sizes through `f` (the image or
/// a loop device on it) and reads them back, also checking the handler's
/// bytes.
fn round_trips(f: &File, mem: &Mem, seed: u64) {
    let sizes = [4 << 10, 8 << 10, 64 << 10, 128 << 10, 1 << 20];
    let offsets = [
        0u64,
        4 << 10,
        (1 << 20) + (12 << 10),
        (SIZE as u64) - (2 << 20),
    ];
    for (i, &size) in sizes.iter().enumerate() {
        for (j, &off) in offsets.iter().enumerate() {
            let data = pattern(seed + (i * 10 + j) as u64, size);
            let mut buf = Aligned::new(size);
            buf.get().copy_from_slice(&data);
            f.write_all_at(buf.get(), off).expect("O_DIRECT write");
            assert_eq!(mem.at(off, size), data, "image after write {size} at {off}");
            buf.get().fill(0);
            f.read_exact_at(buf.get(), off).expect("O_DIRECT read");
            assert!(buf.get() == &data[..], "read back {size} at {off}");
        }
    }
}

/// The threads of this process named like the server's.
fn server_threads() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("fuse-uring") || c.starts_with("fuse-dev"))
        .count()
}

fn mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let d = dir.to_str().unwrap();
    mounts.lines().any(|l| l.split(' ').nth(4) == Some(d))
}

fn mount(choice: TransportChoice, mem: &Arc<Mem>) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        transport: choice,
        ..Options::default()
    };
    let server = fuse::serve(dir.path(), mem.clone(), opts).expect("serve");
    (dir, server)
}

fn exercise(choice: TransportChoice) {
    let mem = Mem::new();
    let (dir, server) = mount(choice, &mem);
    let mount_point: PathBuf = server.dir().to_path_buf();
    println!(
        "transport: {} (wake-up {:?})",
        server.transport(),
        server.wake_cost()
    );
    match choice {
        TransportChoice::Uring => assert!(server.transport().is_uring()),
        _ => assert!(matches!(server.transport(), Transport::Device { .. })),
    }
    let path = server.path();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["disk.img"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE as u64);

    let f = open_direct(&path);
    round_trips(&f, &mem, 1);

    // fsync reaches the handler.
    let before = mem.fsyncs.load(Ordering::Relaxed);
    f.sync_all().unwrap();
    assert!(mem.fsyncs.load(Ordering::Relaxed) > before, "fsync");

    // A punched hole reads back as zeros.
    use nix::fcntl::{FallocateFlags, fallocate};
    let flags = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
    fallocate(&f, flags, 4096, 8192).expect("punch");
    let mut buf = Aligned::new(16 << 10);
    f.read_exact_at(buf.get(), 0).unwrap();
    assert!(buf.get()[4096..12288].iter().all(|b| *b == 0), "hole");
    assert!(
        buf.get()[12288..].iter().any(|b| *b != 0),
        "around the hole"
    );

    // Four readers at once.
    let expect = mem.at(0, 4 << 20);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (path, expect) = (&path, &expect);
            s.spawn(move || {
                let f = open_direct(path);
                let mut buf = Aligned::new(64 << 10);
                for k in 0..64u64 {
                    let off = ((t * 16 + k) % 64) * (64 << 10);
                    f.read_exact_at(buf.get(), off).unwrap();
                    let o = off as usize;
                    assert!(buf.get() == &expect[o..o + (64 << 10)], "reader {t}");
                }
            });
        }
    });

    // Every answer held back 200 us.
    mem.delay_ns.store(200_000, Ordering::Relaxed);
    let mut buf = Aligned::new(4096);
    for k in 0..20u64 {
        let t = Instant::now();
        f.read_exact_at(buf.get(), k * 4096).unwrap();
        let took = t.elapsed();
        assert!(took >= Duration::from_micros(200), "read {k} took {took:?}");
    }
    let t = Instant::now();
    f.write_all_at(buf.get(), 0).unwrap();
    assert!(t.elapsed() >= Duration::from_micros(200), "delayed write");
    mem.delay_ns.store(0, Ordering::Relaxed);
    drop(f);

    // A loop device with direct I/O on top.
    {
        let lo = Loop::attach(&path);
        let name = lo.0.trim_start_matches("/dev/");
        let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap();
        assert_eq!(dio.trim(), "1", "the loop device does direct I/O");
        let dev = open_direct(Path::new(&lo.0));
        round_trips(&dev, &mem, 100);
        dev.sync_all().unwrap();
    }

    server.unmount().expect("clean unmount");
    assert!(!mounted(&mount_point), "still mounted");
    assert_eq!(server_threads(), 0, "threads left");
}

#[test]
fn device_transport() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    exercise(TransportChoice::Device);
}

#[test]
fn uring_transport() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let _on = match UringOn::new() {
        Ok(on) => on,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    exercise(TransportChoice::Uring);
}

/// Auto says why it is not io_uring when the module has it off.
#[test]
fn auto_names_its_reason() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let on = std::fs::read_to_string(ENABLE_URING).unwrap_or_default();
    let mem = Mem::new();
    let (_dir, server) = mount(TransportChoice::Auto, &mem);
    println!("auto: {}", server.transport());
    if on.trim() == "N" {
        assert_eq!(
            server.transport().to_string(),
            format!(
                "read(2) on /dev/fuse, {} queue{}: enable_uring is off",
                cpus(),
                if cpus() == 1 { "" } else { "s" }
            )
        );
    }
    server.unmount().unwrap();
    assert_eq!(server_threads(), 0);
    // With the module's switch on, Auto takes io_uring.
    if let Ok(_on) = UringOn::new() {
        let (_dir, server) = mount(TransportChoice::Auto, &mem);
        println!("auto with enable_uring on: {}", server.transport());
        assert!(server.transport().is_uring());
        server.unmount().unwrap();
        assert_eq!(server_threads(), 0);
    }
}

fn cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    let s = s.trim();
    match s.split_once('-') {
        Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
        None => 1,
    }
}

/// The kernel side goes first (someone else unmounts), or the mount is
/// busy (a file open on it): the unmount still ends every thread.
#[test]
fn unmount_when_gone_or_busy() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let uring = UringOn::new().ok();
    let choices = match uring {
        Some(_) => vec![TransportChoice::Device, TransportChoice::Uring],
        None => vec![TransportChoice::Device],
    };
    for choice in choices {
        let mem = Mem::new();
        let (_dir, server) = mount(choice, &mem);
        nix::mount::umount2(server.dir(), nix::mount::MntFlags::empty()).unwrap();
        server.unmount().expect("unmount after an outside umount");
        assert_eq!(server_threads(), 0, "{choice:?}: threads left after gone");

        let (_dir, server) = mount(choice, &mem);
        let f = open_direct(&server.path());
        let mount_point = server.dir().to_path_buf();
        server.unmount().expect("unmount while busy");
        assert!(!mounted(&mount_point));
        assert_eq!(server_threads(), 0, "{choice:?}: threads left after busy");
        let mut buf = Aligned::new(4096);
        assert!(
            f.read_exact_at(buf.get(), 0).is_err(),
            "the connection ended"
        );
    }
}

/// Where [`Panicky`]'s reads panic.
const PANIC_AT: u64 = 8 << 20;

/// [`Mem`], but a read at [`PANIC_AT`] panics (a bug in a handler).
struct Panicky(Arc<Mem>);

impl ImageHandler for Panicky {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn open(&self) -> u64 {
        self.0.open()
    }
    fn read(&self, fh: u64, offset: u64, buf: &mut [u8]) -> Answer {
        assert_ne!(offset, PANIC_AT, "a handler's bug");
        self.0.read(fh, offset, buf)
    }
    fn write(&self, fh: u64, offset: u64, data: &[u8]) -> Answer {
        self.0.write(fh, offset, data)
    }
    fn fallocate(&self, fh: u64, offset: u64, len: u64, mode: u32) -> Answer {
        self.0.fallocate(fh, offset, len, mode)
    }
    fn fsync(&self, fh: u64) -> Answer {
        self.0.fsync(fh)
    }
}

/// Runs the calling thread on `cpu` only, where that CPU is online (else
/// anywhere).
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes a
    // bit inside it; sched_setaffinity reads it for the calling thread.
    let _ = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
}

/// A handler that panics fails its request with EIO; every queue goes on
/// serving, the server counts the failure, and it unmounts cleanly (a
/// panic used to end its service thread, and the mount hung).
fn survives_a_panic(choice: TransportChoice) {
    let mem = Mem::new();
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        transport: choice,
        ..Options::default()
    };
    let handler = Arc::new(Panicky(mem.clone()));
    let server = fuse::serve(dir.path(), handler, opts).expect("serve");
    let path = server.path();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // From every CPU, so each queue meets the bug and must go on.
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let readers: Vec<_> = (0..n)
        .map(|cpu| {
            let path = path.clone();
            std::thread::spawn(move || {
                pin_to(cpu);
                let f = open_direct(&path);
                let mut buf = Aligned::new(4096);
                let e = f.read_exact_at(buf.get(), PANIC_AT).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(libc::EIO), "read at the bug: {e}");
                for i in 0..64u64 {
                    f.read_exact_at(buf.get(), i * 4096)
                        .expect("a read after the bug");
                }
            })
        })
        .collect();
    let joined: Vec<_> = readers.into_iter().map(|r| r.join()).collect();
    std::panic::set_hook(hook);
    assert!(joined.iter().all(|r| r.is_ok()), "a reader failed");
    let failures = server.failures();
    assert_eq!(failures.count, n as u64, "{failures:?}");
    let first = failures.first.unwrap();
    assert!(first.contains("a handler's bug"), "{first}");
    server.unmount().expect("unmount after a panic");
    assert!(!mounted(dir.path()), "still mounted");
    assert_eq!(server_threads(), 0, "threads left");
}

#[test]
fn device_transport_survives_a_panic() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    survives_a_panic(TransportChoice::Device);
}

#[test]
fn uring_transport_survives_a_panic() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let _on = match UringOn::new() {
        Ok(on) => on,
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    survives_a_panic(TransportChoice::Uring);
}
