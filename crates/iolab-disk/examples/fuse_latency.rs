//! How close iolab's FUSE server answers to its deadlines, seen from a
//! block device: serves a 64 MiB image in memory whose every answer waits
//! DELAY, puts a loop device with direct I/O on it, and runs fio's 4 KiB
//! random O_DIRECT reads at DEPTH for a few seconds.
//!
//! ```text
//! fuse_latency TRANSPORT DELAY_US DEPTH [SECONDS] [IDLE_SPIN_US]
//!   TRANSPORT: uring | device | auto | reference (a loop device over a
//!   tmpfs file, no FUSE)
//! ```
//! Prints fio's median completion latency and median total latency (us),
//! and the IOPS. Needs root and
//! fio. With `uring` it turns the fuse module's enable_uring on for its run
//! and back off after.

use iolab_disk::disk::fuse::{self, Answer, ImageHandler, Options, TransportChoice};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, RwLock};
use std::time::Duration;

const SIZE: usize = 64 << 20;
const ENABLE_URING: &str = "/sys/module/fuse/parameters/enable_uring";

struct Mem {
    bytes: RwLock<Vec<u8>>,
    delay_ns: u64,
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
        Answer::ok(n as u32).after(self.delay_ns)
    }
    fn write(&self, _fh: u64, offset: u64, data: &[u8]) -> Answer {
        let from = offset as usize;
        match from + data.len() <= SIZE {
            true => {
                self.bytes.write().unwrap()[from..from + data.len()].copy_from_slice(data);
                Answer::ok(data.len() as u32).after(self.delay_ns)
            }
            false => Answer::err(libc::ENOSPC),
        }
    }
    fn fallocate(&self, _fh: u64, _off: u64, _len: u64, _mode: u32) -> Answer {
        Answer::ok(0)
    }
    fn fsync(&self, _fh: u64) -> Answer {
        Answer::ok(0).after(self.delay_ns)
    }
}

fn losetup(file: &Path) -> Result<String, String> {
    let out = Command::new("losetup")
        .args(["--direct-io=on", "-f", "--show"])
        .arg(file)
        .output()
        .map_err(|e| format!("losetup: {e}"))?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        false => Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr))),
    }
}

fn detach(dev: &str) {
    let _ = Command::new("losetup").args(["-d", dev]).status();
    let backing = format!(
        "/sys/block/{}/loop/backing_file",
        dev.trim_start_matches("/dev/")
    );
    for _ in 0..500 {
        if !Path::new(&backing).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// fio's median completion latency (submission to completion: with
/// io_uring a request can finish inside the submitting call, so this can
/// be near 0), its median total latency (us), and the IOPS.
fn fio(dev: &str, depth: u32, seconds: u32) -> Result<(f64, f64, f64), String> {
    let out = Command::new("fio")
        .args([
            "--name=x",
            &format!("--filename={dev}"),
            "--rw=randread",
            "--bs=4k",
            "--direct=1",
            "--ioengine=io_uring",
            &format!("--iodepth={depth}"),
            &format!("--runtime={seconds}"),
            "--time_based",
            "--output-format=json",
            "--lat_percentiles=1",
            "--clat_percentiles=1",
        ])
        .output()
        .map_err(|e| format!("fio: {e}"))?;
    if !out.status.success() {
        return Err(format!("fio: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text.find('{').ok_or("fio printed no JSON")?;
    let v: serde_json::Value =
        serde_json::from_str(&text[start..]).map_err(|e| format!("fio JSON: {e}"))?;
    let read = &v["jobs"][0]["read"];
    let median = |what: &str| {
        read[what]["percentile"]["50.000000"]
            .as_f64()
            .ok_or(format!("no median {what} in fio's JSON"))
    };
    let iops = read["iops"].as_f64().unwrap_or(0.0);
    Ok((
        median("clat_ns")? / 1000.0,
        median("lat_ns")? / 1000.0,
        iops,
    ))
}

fn run(args: &[String]) -> Result<(), String> {
    let usage = "fuse_latency uring|device|auto|reference DELAY_US DEPTH [SECONDS] [IDLE_SPIN_US]";
    let [kind, delay, depth, rest @ ..] = args else {
        return Err(usage.into());
    };
    let delay_us: u64 = delay.parse().map_err(|_| usage)?;
    let depth: u32 = depth.parse().map_err(|_| usage)?;
    let seconds: u32 = rest
        .first()
        .map_or(Ok(5), |s| s.parse())
        .map_err(|_| usage)?;
    let idle_us: u64 = rest
        .get(1)
        .map_or(Ok(0), |s| s.parse())
        .map_err(|_| usage)?;
    if kind == "reference" {
        let file = Path::new("/dev/shm/iolab-fuse-latency-ref");
        std::fs::write(file, vec![0u8; SIZE]).map_err(|e| format!("{}: {e}", file.display()))?;
        let dev = losetup(file);
        let result = dev
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|d| fio(d, depth, seconds));
        if let Ok(d) = &dev {
            detach(d);
        }
        let _ = std::fs::remove_file(file);
        let (clat, lat, iops) = result?;
        println!(
            "reference (loop over tmpfs) depth {depth}: median clat {clat:.1} us, median lat {lat:.1} us, {iops:.0} IOPS"
        );
        return Ok(());
    }
    let transport = match kind.as_str() {
        "uring" => TransportChoice::Uring,
        "device" => TransportChoice::Device,
        "auto" => TransportChoice::Auto,
        _ => return Err(usage.into()),
    };
    let old = std::fs::read_to_string(ENABLE_URING).unwrap_or_default();
    let turned_on = transport == TransportChoice::Uring && old.trim() == "N";
    if turned_on {
        std::fs::write(ENABLE_URING, "1").map_err(|e| format!("{ENABLE_URING}: {e}"))?;
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let handler = Arc::new(Mem {
        bytes: RwLock::new(vec![0; SIZE]),
        delay_ns: delay_us * 1000,
    });
    let opts = Options {
        transport,
        idle_spin: Duration::from_micros(idle_us),
        ..Options::default()
    };
    let result = fuse::serve(dir.path(), handler, opts)
        .map_err(|e| e.to_string())
        .and_then(|server| {
            let what = format!("{} (wake-up {:?})", server.transport(), server.wake_cost());
            let dev = losetup(&server.path());
            let r = dev
                .as_ref()
                .map_err(Clone::clone)
                .and_then(|d| fio(d, depth, seconds));
            if let Ok(d) = &dev {
                detach(d);
            }
            let p = server.punctuality();
            let what = format!(
                "{what}, held {} answers, {:.1}% within 2 us, mean {:.1} us late, worst {:.1} us",
                p.held,
                100.0 * p.on_time as f64 / p.held.max(1) as f64,
                p.mean_late.as_secs_f64() * 1e6,
                p.max_late.as_secs_f64() * 1e6
            );
            server.unmount().map_err(|e| e.to_string())?;
            r.map(|r| (what, r))
        });
    if turned_on {
        let _ = std::fs::write(ENABLE_URING, "0");
    }
    let (what, (clat, lat, iops)) = result?;
    println!(
        "{what}: delay {delay_us} us, depth {depth}, idle spin {idle_us} us: median clat {clat:.1} us, median lat {lat:.1} us, {iops:.0} IOPS"
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run(&args) {
        eprintln!("fuse_latency: {e}");
        std::process::exit(1);
    }
}
