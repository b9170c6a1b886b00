//! Where a run ran: kernel, CPU, memory, and for each file its file system,
//! mount options and the disks under it with their model and I/O scheduler.
//! Stored with every run so two results can be told apart by more than a
//! label. Reading never fails: what cannot be read is left empty.

use super::blockdev::disks_behind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The machine and the storage of the run's files.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    /// Host name.
    pub hostname: String,
    /// `uname -srvm`.
    pub kernel: String,
    /// CPU model (`/proc/cpuinfo` "model name").
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: u32,
    /// `MemTotal` in bytes.
    pub memory_bytes: u64,
    /// One entry per distinct file.
    pub files: Vec<FileEnv>,
}

/// Storage behind one file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FileEnv {
    /// The file as named by the job.
    pub path: PathBuf,
    /// File system type (`ext4`, `xfs`, `zfs`, `tmpfs`...).
    pub fs_type: String,
    /// Mount point holding the file.
    pub mount_point: String,
    /// What is mounted there (`/dev/vda1`, a dataset, `tmpfs`).
    pub mount_source: String,
    /// Mount options and file-system options, as in `/proc/self/mountinfo`.
    pub mount_options: String,
    /// Disks under the file system.
    pub disks: Vec<DiskEnv>,
    /// The injected disk (`iolab disk`) the file is on: its layer and
    /// rules (`block layer, ext4: --delay 1ms`); empty elsewhere.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub injected: String,
}

/// One disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskEnv {
    /// Kernel name (`vda`, `nvme0n1`).
    pub name: String,
    /// Model from sysfs, or the driver when the device has none (virtio).
    pub model: String,
    /// Active I/O scheduler (`mq-deadline`, `none`...).
    pub scheduler: String,
    /// Rotational (spinning) disk.
    pub rotational: bool,
}

impl Environment {
    /// Reads the environment for the given files; `injected` names the
    /// injected disk mounted at a mount point ("" for none), a question for
    /// the layer that owns injected disks.
    pub fn capture(files: &[PathBuf], injected: impl Fn(&Path) -> String) -> Environment {
        let mut seen = Vec::new();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut out = Environment {
            hostname: read_trim("/proc/sys/kernel/hostname"),
            kernel: uname(),
            cpu_model: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            memory_bytes: super::machine::meminfo("MemTotal"),
            files: Vec::new(),
        };
        for f in files {
            if seen.contains(f) {
                continue;
            }
            seen.push(f.clone());
            out.files.push(file_env(f, &mounts, &injected));
        }
        out
    }
}

fn read_trim(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn uname() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.version),
        field(&u.machine)
    )
}

fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// The existing path closest to `p` (the file, else its nearest ancestor).
fn existing(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    abs.ancestors()
        .find_map(|a| a.canonicalize().ok())
        .unwrap_or(abs)
}

/// One line of mountinfo: (mount point, options, fs type, source, superoptions).
struct Mount<'a> {
    point: String,
    opts: &'a str,
    fs: &'a str,
    source: &'a str,
    super_opts: &'a str,
}

fn parse_mount(line: &str) -> Option<Mount<'_>> {
    let (pre, post) = line.split_once(" - ")?;
    let pre: Vec<&str> = pre.split(' ').collect();
    let post: Vec<&str> = post.split(' ').collect();
    Some(Mount {
        point: unescape(pre.get(4)?),
        opts: pre.get(5)?,
        fs: post.first()?,
        source: post.get(1)?,
        super_opts: post.get(2).copied().unwrap_or(""),
    })
}

/// mountinfo escapes space, tab, newline and backslash as octal.
/// Undoes `/proc/self/mountinfo`'s octal escapes (`\040` for a space).
pub(crate) fn unescape(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 4], 8)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn file_env(f: &Path, mountinfo: &str, injected: &dyn Fn(&Path) -> String) -> FileEnv {
    let real = existing(f);
    // The last matching mount in mountinfo order is the visible one.
    let mount = mountinfo
        .lines()
        .filter_map(parse_mount)
        .filter(|m| real.starts_with(&m.point))
        .fold(None::<Mount>, |best, m| match &best {
            Some(b) if b.point.len() > m.point.len() => best,
            _ => Some(m),
        });
    let mut env = FileEnv {
        path: f.to_path_buf(),
        ..FileEnv::default()
    };
    if let Some(m) = mount {
        env.fs_type = m.fs.to_string();
        env.mount_point = m.point.clone();
        env.injected = injected(Path::new(&m.point));
        env.mount_source = m.source.to_string();
        env.mount_options = if m.super_opts.is_empty() {
            m.opts.to_string()
        } else {
            format!("{} ({})", m.opts, m.super_opts)
        };
    }
    env.disks = disks_behind(&real)
        .into_iter()
        .map(|d| disk_env(&d.name))
        .collect();
    env
}

fn disk_env(name: &str) -> DiskEnv {
    let sys = Path::new("/sys/block").join(name);
    let mut model = read_trim(sys.join("device/model"));
    if model.is_empty() {
        model = std::fs::read_link(sys.join("device/driver"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
    }
    let sched = read_trim(sys.join("queue/scheduler"));
    let scheduler = match (sched.find('['), sched.find(']')) {
        (Some(a), Some(b)) if a < b => sched[a + 1..b].to_string(),
        _ => sched,
    };
    DiskEnv {
        name: name.to_string(),
        model,
        scheduler,
        rotational: read_trim(sys.join("queue/rotational")) == "1",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_line() {
        let l = "36 25 253:1 / /mnt/my\\040disk rw,noatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro";
        let m = parse_mount(l).unwrap();
        assert_eq!(m.point, "/mnt/my disk");
        assert_eq!(m.opts, "rw,noatime");
        assert_eq!(m.fs, "ext4");
        assert_eq!(m.source, "/dev/vda1");
        assert_eq!(m.super_opts, "rw,errors=remount-ro");
    }

    #[test]
    fn proc_is_procfs() {
        let e = Environment::capture(&[PathBuf::from("/proc/self/status")], |_| String::new());
        assert_eq!(e.files[0].fs_type, "proc");
        assert!(e.cpus >= 1);
        assert!(e.memory_bytes > 0);
        assert!(e.kernel.starts_with("Linux "));
    }
}
