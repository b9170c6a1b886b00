//! Loop devices, by ioctl (the `loopdev` crates generate their bindings
//! with bindgen, which needs libclang to build): attach a file with direct
//! I/O and autoclear, set its readahead, find the loop devices backed by
//! files under a directory, detach one.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// `/dev/loop-control`.
pub const CONTROL: &str = "/dev/loop-control";
const LOOP_CTL_GET_FREE: libc::c_ulong = 0x4C82;
const LOOP_CONFIGURE: libc::c_ulong = 0x4C0A;
const LOOP_CLR_FD: libc::c_ulong = 0x4C01;
/// `BLKRASET` of `<linux/fs.h>`: the device's readahead, in 512-byte sectors.
const BLKRASET: libc::c_ulong = 0x1262;
const LO_FLAGS_AUTOCLEAR: u32 = 4;
const LO_FLAGS_DIRECT_IO: u32 = 16;

/// `struct loop_info64` of `<linux/loop.h>`.
#[repr(C)]
struct LoopInfo64 {
    device: u64,
    inode: u64,
    rdevice: u64,
    offset: u64,
    sizelimit: u64,
    number: u32,
    encrypt_type: u32,
    encrypt_key_size: u32,
    flags: u32,
    file_name: [u8; 64],
    crypt_name: [u8; 64],
    encrypt_key: [u8; 32],
    init: [u64; 2],
}

/// `struct loop_config` of `<linux/loop.h>`.
#[repr(C)]
struct LoopConfig {
    fd: u32,
    block_size: u32,
    info: LoopInfo64,
    reserved: [u64; 8],
}

/// An attached loop device, held open: with autoclear it detaches itself
/// once this and every mount of it are closed, even if iolab is killed.
#[derive(Debug)]
pub struct LoopDevice {
    dev: File,
    number: u32,
}

/// Runs an ioctl whose argument is an integer or nothing.
///
/// # Safety
/// `request` must be an ioctl of `fd`'s device that takes an integer (or
/// no) argument.
unsafe fn ioctl_int(fd: &File, request: libc::c_ulong, arg: libc::c_ulong) -> std::io::Result<i32> {
    // SAFETY: the caller vouches that `request` takes an integer argument.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), request, arg) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(r)
}

/// LOOP_CONFIGURE on `dev`.
fn configure(dev: &File, config: &LoopConfig) -> std::io::Result<()> {
    // SAFETY: LOOP_CONFIGURE reads one `struct loop_config`, which
    // `config` is (repr(C), the kernel's layout), alive for the call.
    let r = unsafe { libc::ioctl(dev.as_raw_fd(), LOOP_CONFIGURE, config as *const LoopConfig) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl LoopDevice {
    /// Attaches `backing` to a free loop device, with direct I/O when
    /// `direct_io` (the backing file opened O_DIRECT, as losetup does).
    pub fn attach(backing: &Path, direct_io: bool) -> std::io::Result<LoopDevice> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(if direct_io { libc::O_DIRECT } else { 0 })
            .open(backing)?;
        let control = OpenOptions::new().read(true).write(true).open(CONTROL)?;
        let mut last = None;
        // Another process may take the free device first: try again.
        for _ in 0..16 {
            // SAFETY: LOOP_CTL_GET_FREE takes no argument.
            let number = unsafe { ioctl_int(&control, LOOP_CTL_GET_FREE, 0)? } as u32;
            let dev = OpenOptions::new()
                .read(true)
                .write(true)
                .open(format!("/dev/loop{number}"))?;
            let mut info: LoopInfo64 = LoopInfo64 {
                device: 0,
                inode: 0,
                rdevice: 0,
                offset: 0,
                sizelimit: 0,
                number: 0,
                encrypt_type: 0,
                encrypt_key_size: 0,
                flags: LO_FLAGS_AUTOCLEAR,
                file_name: [0; 64],
                crypt_name: [0; 64],
                encrypt_key: [0; 32],
                init: [0; 2],
            };
            if direct_io {
                info.flags |= LO_FLAGS_DIRECT_IO;
            }
            let name = backing.as_os_str().as_encoded_bytes();
            let n = name.len().min(63);
            info.file_name[..n].copy_from_slice(&name[..n]);
            let config = LoopConfig {
                fd: file.as_raw_fd() as u32,
                block_size: 0,
                info,
                reserved: [0; 8],
            };
            match configure(&dev, &config) {
                Ok(()) => return Ok(LoopDevice { dev, number }),
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EBUSY)))
    }

    /// `/dev/loopN`.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(format!("/dev/loop{}", self.number))
    }

    /// N of `/dev/loopN`.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// True when the kernel does direct I/O to the backing file.
    pub fn direct_io(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/loop{}/loop/dio", self.number))
            .is_ok_and(|s| s.trim() == "1")
    }

    /// Sets its readahead to `kb` KiB (`read_ahead_kb` of its queue): how
    /// far ahead the page cache reads a file read sequentially.
    pub fn set_read_ahead_kb(&self, kb: u32) -> std::io::Result<()> {
        // SAFETY: BLKRASET takes an integer, the readahead in sectors.
        unsafe { ioctl_int(&self.dev, BLKRASET, libc::c_ulong::from(kb) * 2) }.map(drop)
    }

    /// Its readahead in KiB, as the kernel has it.
    pub fn read_ahead_kb(&self) -> Option<u32> {
        read_ahead_kb(self.number)
    }

    /// Closes it: with autoclear the kernel detaches it once its mounts
    /// are gone; waits up to `wait` for that.
    pub fn release(self, wait: std::time::Duration) -> bool {
        let n = self.number;
        drop(self.dev);
        let until = std::time::Instant::now() + wait;
        while backing_file(n).is_some() {
            if std::time::Instant::now() > until {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        true
    }
}

/// The file behind `/dev/loopN`, if it is attached.
pub fn backing_file(n: u32) -> Option<PathBuf> {
    let s = std::fs::read_to_string(format!("/sys/block/loop{n}/loop/backing_file")).ok()?;
    Some(PathBuf::from(s.trim_end_matches('\n')))
}

/// The readahead of `/dev/loopN` in KiB (`queue/read_ahead_kb`).
pub fn read_ahead_kb(n: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/sys/block/loop{n}/queue/read_ahead_kb"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The loop devices whose backing files lie under `dir`.
pub fn attached_under(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut found: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("loop")?.parse().ok())
        .filter(|n| backing_file(*n).is_some_and(|f| f.starts_with(dir)))
        .collect();
    found.sort();
    found
}

/// Detaches `/dev/loopN` (LOOP_CLR_FD): at once when nothing has it open,
/// else once the last user closes it.
pub fn detach(n: u32) -> std::io::Result<()> {
    let dev = OpenOptions::new()
        .read(true)
        .open(format!("/dev/loop{n}"))?;
    // SAFETY: LOOP_CLR_FD takes no argument.
    unsafe { ioctl_int(&dev, LOOP_CLR_FD, 0) }.map(|_| ())
}
