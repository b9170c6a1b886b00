//! The block layer (dm-delay's semantics): the image served by FUSE
//! ([`BlockFs`]), a loop device with direct I/O over it, ext4 or xfs on the
//! loop device, mounted at DIR. The page cache sits above the gate:
//! buffered re-reads are fast, O_DIRECT and cache misses pay the delay.

use super::injector::{Injector, Mounted, need_device};
use super::spec::Spec;
use crate::disk::block_fs::{BlockFs, IMAGE_NAME};
use crate::disk::error::DiskError;
use crate::disk::fuse;
use crate::disk::gate::Gate;
use crate::disk::image::Image;
use crate::disk::state;
use crate::sys::loopdev::{self, LoopDevice};
use crate::sys::mount;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// The block injector.
pub struct Block;

/// The file systems it makes, with their mkfs and its package.
const FILE_SYSTEMS: &[(&str, &str, &[&str], &str)] = &[
    // No lazy init: ext4lazyinit would write behind the experiment's back.
    (
        "ext4",
        "mkfs.ext4",
        &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
        "e2fsprogs",
    ),
    ("xfs", "mkfs.xfs", &["-q", "-f"], "xfsprogs"),
];

/// The largest `--read-ahead` taken, in KiB (1 GiB).
pub const MAX_READ_AHEAD_KB: u32 = 1 << 20;

/// How long an unmount waits for a busy file system before detaching it.
const BUSY_WAIT: Duration = Duration::from_secs(5);

fn mkfs_of(
    fs: &str,
) -> Result<
    &'static (
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
    ),
    DiskError,
> {
    FILE_SYSTEMS
        .iter()
        .find(|f| f.0 == fs)
        .ok_or_else(|| DiskError::Usage {
            what: format!("--fs {fs}"),
            expected: "ext4 or xfs".into(),
        })
}

/// The transport `--transport` names (`auto` when empty: state files
/// from before it).
fn transport_choice(name: &str) -> Result<fuse::TransportChoice, DiskError> {
    match name {
        "" | "auto" => Ok(fuse::TransportChoice::Auto),
        "uring" => Ok(fuse::TransportChoice::Uring),
        "dev" => Ok(fuse::TransportChoice::Device),
        other => Err(DiskError::Usage {
            what: format!("--transport {other}"),
            expected: "auto, uring or dev".into(),
        }),
    }
}

/// True when `tool` is on PATH.
fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

impl Injector for Block {
    fn check(&self, spec: &Spec) -> Result<(), DiskError> {
        need_device("/dev/fuse", "FUSE serves the disk image")?;
        need_device(
            loopdev::CONTROL,
            "a loop device puts the image under a file system",
        )?;
        transport_choice(&spec.transport)?;
        let (fs, tool, _, package) = mkfs_of(&spec.fs)?;
        let reuse = spec.image.as_ref().is_some_and(|i| i.exists());
        let least: u64 = if spec.fs == "xfs" {
            300 << 20
        } else {
            16 << 20
        };
        let size = |expected: String| DiskError::Usage {
            what: format!(
                "--size {}",
                crate::metrics::format::bytes_iec(spec.size as f64)
            ),
            expected,
        };
        if !reuse && spec.size < least {
            return Err(size(format!("at least {} MiB for {fs}", least >> 20)));
        }
        if let Some(kb) = spec.read_ahead_kb.filter(|kb| *kb > MAX_READ_AHEAD_KB) {
            return Err(DiskError::Usage {
                what: format!("--read-ahead {kb}"),
                expected: format!("KiB of readahead, at most {MAX_READ_AHEAD_KB} (1 GiB)"),
            });
        }
        let free = crate::sys::machine::meminfo("MemAvailable");
        if spec.image.is_none() && free > 0 {
            // The other in-memory disks may still fill what they have not
            // taken yet: their images count against what is available.
            let others = promised_to_other_disks(&spec.dir);
            let promised: u64 = others.iter().map(|(_, n)| n).sum();
            let left = free.saturating_sub(promised);
            if spec.size > left {
                let named: Vec<String> = (others.iter())
                    .map(|(d, n)| format!("{} {} MiB", d.display(), n >> 20))
                    .collect();
                let of = match named.is_empty() {
                    true => String::new(),
                    false => format!(
                        " ({} MiB available, of which iolab's in-memory disks may still take {} MiB: {})",
                        free >> 20,
                        promised >> 20,
                        named.join(", ")
                    ),
                };
                return Err(size(format!(
                    "an in-memory image no larger than the {} MiB of memory left{of}; --image FILE keeps it on disk",
                    left >> 20
                )));
            }
        }
        if !reuse && !on_path(tool) {
            return Err(DiskError::ToolMissing {
                tool: tool.to_string(),
                package,
                fs: fs.to_string(),
            });
        }
        Ok(())
    }

    fn mount(
        &self,
        spec: &Spec,
        gate: Arc<Gate>,
        run: &Path,
    ) -> Result<Box<dyn Mounted>, DiskError> {
        let (image, fresh) = open_image(spec)?;
        let fuse_dir = run.join("fuse");
        std::fs::create_dir_all(&fuse_dir)
            .map_err(|e| DiskError::io(format!("cannot make {}", fuse_dir.display()), e))?;
        let handler = Arc::new(BlockFs {
            image: image.clone(),
            gate: gate.clone(),
        });
        let opts = fuse::Options {
            transport: transport_choice(&spec.transport)?,
            name: IMAGE_NAME.into(),
            ..fuse::Options::default()
        };
        let server = fuse::serve(&fuse_dir, handler, opts)?;
        let mut m = BlockMount {
            spec: spec.clone(),
            image,
            gate,
            server: Some(server),
            fuse_dir,
            lo: None,
        };
        match m.attach_and_mount(fresh) {
            Ok(()) => Ok(Box::new(m)),
            Err(e) => {
                let _ = Box::new(m).unmount();
                Err(e)
            }
        }
    }
}

/// The image: in memory, an existing `--image` file (reused as it is), or
/// a new one made sparse; true when it is new (needs mkfs).
fn open_image(spec: &Spec) -> Result<(Arc<Image>, bool), DiskError> {
    let Some(path) = &spec.image else {
        return Ok((Arc::new(Image::memory(spec.size)), true));
    };
    let fresh = !path.exists();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| DiskError::io(format!("cannot open image {}", path.display()), e))?;
    if fresh {
        file.set_len(spec.size)
            .map_err(|e| DiskError::io(format!("cannot size image {}", path.display()), e))?;
    }
    let image = Image::file(file)
        .map_err(|e| DiskError::io(format!("cannot read {}", path.display()), e))?;
    Ok((Arc::new(image), fresh))
}

/// A mounted block layer.
struct BlockMount {
    spec: Spec,
    image: Arc<Image>,
    gate: Arc<Gate>,
    /// The FUSE server of the image (None once unmounted).
    server: Option<fuse::Server>,
    fuse_dir: PathBuf,
    lo: Option<LoopDevice>,
}

impl BlockMount {
    /// Loop device over the image, mkfs when `fresh`, mount at DIR, then
    /// the loop device's readahead when one was asked for.
    fn attach_and_mount(&mut self, fresh: bool) -> Result<(), DiskError> {
        let img = self.fuse_dir.join(IMAGE_NAME);
        let lo = LoopDevice::attach(&img, true).map_err(|e| {
            DiskError::io(
                format!("cannot attach a loop device to {}", img.display()),
                e,
            )
        })?;
        let dev = lo.path();
        self.lo = Some(lo);
        if fresh {
            let (_, tool, args, _) = mkfs_of(&self.spec.fs)?;
            let out = Command::new(tool)
                .args(*args)
                .arg(&dev)
                .output()
                .map_err(|e| DiskError::io(format!("cannot run {tool}"), e))?;
            if !out.status.success() {
                return Err(DiskError::ToolFailed {
                    tool: format!("{tool} {}", dev.display()),
                    status: out.status.to_string(),
                    stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                });
            }
        }
        mount::mount(
            &dev,
            &self.spec.dir,
            &self.spec.fs,
            &self.spec.mount_options,
        )
        .map_err(|e| {
            DiskError::io(
                format!(
                    "cannot mount {} ({}) at {}",
                    dev.display(),
                    self.spec.fs,
                    self.spec.dir.display()
                ),
                e,
            )
        })?;
        // Set once mounted: mkfs and the mount set the device's limits
        // again, and with them its readahead.
        if let (Some(kb), Some(lo)) = (self.spec.read_ahead_kb, &self.lo) {
            lo.set_read_ahead_kb(kb).map_err(|e| {
                DiskError::io(
                    format!("cannot set the readahead of {} to {kb} KiB", dev.display()),
                    e,
                )
            })?;
        }
        Ok(())
    }

    /// Unmounts DIR and lets the loop device go.
    /// Unmounts DIR and lets the loop device go; true when DIR was busy
    /// and detached lazily.
    fn unmount_dir(&mut self) -> Result<bool, DiskError> {
        let how = mount::unmount(&self.spec.dir, BUSY_WAIT)
            .map_err(|e| DiskError::io(format!("cannot unmount {}", self.spec.dir.display()), e))?;
        if let Some(lo) = self.lo.take() {
            let n = lo.number();
            if !lo.release(Duration::from_secs(2)) {
                // Still held (a lazy unmount): clear it once free.
                let _ = loopdev::detach(n);
            }
        }
        Ok(how == mount::Unmounted::Lazy)
    }
}

impl Mounted for BlockMount {
    fn parts(&self) -> Vec<(String, String)> {
        let mut p = vec![("fs".into(), self.spec.fs.clone())];
        if let Some(s) = &self.server {
            p.push(("transport".into(), s.transport().to_string()));
        }
        if let Some(lo) = &self.lo {
            let dio = if lo.direct_io() {
                "direct I/O"
            } else {
                "buffered"
            };
            let ra = lo
                .read_ahead_kb()
                .map_or_else(String::new, |kb| format!(", read_ahead_kb {kb}"));
            p.push((
                "loop".into(),
                format!("{} ({dio}{ra})", lo.path().display()),
            ));
        }
        let image = match &self.spec.image {
            Some(f) => f.display().to_string(),
            None => "in memory".into(),
        };
        p.push((
            "image".into(),
            format!("{image}, {} bytes", self.image.len()),
        ));
        p
    }

    fn unflushed(&self) -> Option<u64> {
        Some(self.image.unflushed())
    }

    fn punctual(&self) -> Option<crate::disk::control::Punctual> {
        let p = self.server.as_ref()?.punctuality();
        Some(crate::disk::control::Punctual {
            held: p.held,
            on_time: p.on_time,
            mean_late_ns: p.mean_late.as_nanos() as u64,
            max_late_ns: p.max_late.as_nanos() as u64,
        })
    }

    fn failures(&self) -> Option<crate::disk::fuse::Failures> {
        Some(self.server.as_ref()?.failures())
    }

    fn crash(&mut self) -> Result<u64, DiskError> {
        // Nothing more reaches the image from the old mount: its handles
        // are stale once the epoch moves, and the undo log is played back.
        let dropped = self
            .image
            .crash()
            .map_err(|e| DiskError::io("cannot restore the image", e))?;
        nix::mount::umount2(&self.spec.dir, nix::mount::MntFlags::MNT_DETACH).map_err(|e| {
            DiskError::io(
                format!("cannot unmount {}", self.spec.dir.display()),
                e.into(),
            )
        })?;
        if let Some(lo) = self.lo.take() {
            let n = lo.number();
            if !lo.release(Duration::from_secs(2)) {
                let _ = loopdev::detach(n);
            }
        }
        // Journal replay happens here, as after a real power loss.
        let armed = self.gate.armed();
        self.gate.arm(false);
        let r = self.attach_and_mount(false);
        self.gate.arm(armed);
        r.map(|()| dropped)
    }

    fn unmount(mut self: Box<Self>) -> Result<bool, DiskError> {
        // Unmounting writes back what is dirty: at full speed, not delayed.
        self.gate.arm(false);
        let r = self.unmount_dir();
        let served = self.server.take().map(|s| s.unmount());
        self.gate.close();
        let r = r?;
        served.transpose()?;
        Ok(r)
    }
}

/// The in-memory disks that run now (other than at `dir`), each with what
/// its image may still take: its size less what its daemon holds already.
fn promised_to_other_disks(dir: &Path) -> Vec<(PathBuf, u64)> {
    (state::all().into_iter())
        .filter(|(_, st)| st.spec.dir != dir && st.spec.layer == "block")
        .filter(|(_, st)| st.spec.image.is_none() && st.daemon_alive())
        .map(|(_, st)| {
            let held = resident_bytes(st.pid);
            (st.spec.dir, st.spec.size.saturating_sub(held))
        })
        .collect()
}

/// `VmRSS` of process `pid`, in bytes (0 when unreadable).
fn resident_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("VmRSS:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kb| kb * 1024)
}
