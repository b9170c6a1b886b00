//! A small tmpfs mounted for one test run (`fill_device` fills it): only
//! as root; unmounted and its directory removed when dropped, even when
//! the test fails.

use std::path::Path;
use std::process::Command;

/// A tmpfs mounted on a fresh directory.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs of `size` (`mount -o size=`); `None`, with a SKIP line
    /// naming `test`, where it cannot be mounted.
    pub fn mount(test: &str, size: &str) -> Option<Tmpfs> {
        if !iolab::sys::machine::is_root() {
            println!(
                "SKIP {test}: fill_device needs a file system to fill: a tmpfs, mounted as root"
            );
            return None;
        }
        let dir = super::scratch();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            println!("SKIP {test}: mount -t tmpfs failed: {}", err.trim());
            return None;
        }
        Some(Tmpfs { dir })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}
