//! What the `iolab exec` tests share: one test at a time, data files,
//! a quiet exec's JSON.

use super::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One test at a time: a warm run must see no device reads but its own.
static TURN: Mutex<()> = Mutex::new(());

pub fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file of `mib` MiB of pseudo-random bytes (not all zero: nothing
/// below can compress or skip it).
pub fn data(dir: &Path, name: &str, mib: usize) -> PathBuf {
    let p = dir.join(name);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let b: Vec<u8> = (0..mib << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&p, b).unwrap();
    p
}

/// `iolab -q exec -f json ARGS`, which must succeed with a clean stderr.
pub fn exec_json(db: Option<&Path>, args: &[&str]) -> Value {
    let mut c = match db {
        Some(db) => with_db(db),
        None => bin(),
    };
    c.args(["-q", "exec", "-f", "json"]);
    if db.is_none() {
        c.arg("--no-store");
    }
    c.args(args);
    let (out, err) = succeed_text(&mut c);
    assert_eq!(err, "", "stderr of a quiet exec");
    parse_json(out.as_bytes())
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Reads completed by the devices under the files during run `r`.
pub fn dev_reads(r: &Value) -> u64 {
    r["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| u(&d["read_ios"]))
        .sum()
}
