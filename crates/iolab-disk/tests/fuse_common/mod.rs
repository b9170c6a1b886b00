//! What the FUSE server's tests share (tests/fuse_server.rs,
//! tests/fuse_panic.rs): a 64 MiB image in memory, the skip reasons, the
//! enable_uring switch, loop devices, aligned buffers.
#![allow(dead_code)]

use iolab_disk::disk::fuse::{Answer, ImageHandler};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

pub const SIZE: usize = 64 << 20;
pub const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";

/// One test at a time: they share enable_uring, loop devices, and the
/// count of server threads.
pub static SERIAL: Mutex<()> = Mutex::new(());

/// The image: bytes in memory, a delay for every answer, counters.
pub struct Mem {
    pub bytes: RwLock<Vec<u8>>,
    pub delay_ns: AtomicU64,
    pub fsyncs: AtomicU64,
}

impl Mem {
    pub fn new() -> Arc<Mem> {
        Arc::new(Mem {
            bytes: RwLock::new(vec![0; SIZE]),
            delay_ns: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
        })
    }

    pub fn answer(&self, result: Result<u32, i32>) -> Answer {
        Answer {
            delay_ns: self.delay_ns.load(Ordering::Relaxed),
            result,
        }
    }

    pub fn at(&self, offset: u64, len: usize) -> Vec<u8> {
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
pub fn cannot_run() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("not root".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse".into());
    }
    None
}

/// Turns enable_uring on for its life; puts the old value back after.
pub struct UringOn {
    old: Option<String>,
}

impl UringOn {
    pub fn new() -> Result<UringOn, String> {
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
pub struct Loop(pub String);

impl Loop {
    pub fn attach(file: &Path) -> Loop {
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
pub struct Aligned(Vec<u8>, usize, usize);

impl Aligned {
    pub fn new(n: usize) -> Aligned {
        let v = vec![0u8; n + 4096];
        let off = v.as_ptr().align_offset(4096);
        Aligned(v, off, n)
    }
    pub fn get(&mut self) -> &mut [u8] {
        &mut self.0[self.1..self.1 + self.2]
    }
}

pub fn pattern(seed: u64, n: usize) -> Vec<u8> {
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

pub fn open_direct(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// The threads of this process named like the server's.
pub fn server_threads() -> usize {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    dir.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("fuse-uring") || c.starts_with("fuse-dev"))
        .count()
}

pub fn mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let d = dir.to_str().unwrap();
    mounts.lines().any(|l| l.split(' ').nth(4) == Some(d))
}

pub fn cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
    let s = s.trim();
    match s.split_once('-') {
        Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
        None => 1,
    }
}

/// Runs `test` on `choice` one test at a time ([`SERIAL`]), with the fuse
/// module's enable_uring on for io_uring; prints why and returns when this
/// machine cannot.
pub fn on_transport(choice: iolab_disk::disk::fuse::TransportChoice, test: impl FnOnce()) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let _on = match choice {
        iolab_disk::disk::fuse::TransportChoice::Uring => match UringOn::new() {
            Ok(on) => Some(on),
            Err(why) => {
                println!("skipped: {why}");
                return;
            }
        },
        _ => None,
    };
    test();
}
