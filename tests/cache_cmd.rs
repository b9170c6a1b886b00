//! `iolab cache status|warm|evict|lock` agree with vmtouch and util-linux
//! fincore on the same files.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// (resident, total) pages as vmtouch counts them.
fn vmtouch_pages(paths: &[&Path]) -> (u64, u64) {
    let out = Command::new("vmtouch")
        .args(paths.iter().map(|p| s(p)))
        .output()
        .expect("run vmtouch");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("Resident Pages:"))
        .unwrap_or_else(|| panic!("{text}"));
    let frac = line.split_whitespace().nth(2).unwrap();
    let (a, b) = frac.split_once('/').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

fn status(paths: &[&Path]) -> Value {
    let out = bin()
        .args(["cache", "status", "-o", "json"])
        .args(paths.iter().map(|p| s(p)))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn total(v: &Value) -> (u64, u64) {
    (
        v["total"]["resident"].as_u64().unwrap(),
        v["total"]["pages"].as_u64().unwrap(),
    )
}

/// A directory of files written and then evicted, so each test starts cold.
fn files(d: &Path) -> (PathBuf, Vec<PathBuf>) {
    let dir = d.join("set");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let mut v = Vec::new();
    for (name, mib) in [("a", 4usize), ("b", 1), ("sub/c", 2)] {
        let p = dir.join(name);
        std::fs::write(&p, vec![0x5a; mib << 20]).unwrap();
        v.push(p);
    }
    succeed(bin().args(["cache", "evict", s(&dir)]));
    (dir, v)
}

fn read_range(p: &Path, skip_4k: u64, count_4k: u64) {
    let st = Command::new("dd")
        .arg(format!("if={}", s(p)))
        .args([
            "of=/dev/null",
            "bs=4k",
            &format!("skip={skip_4k}"),
            &format!("count={count_4k}"),
        ])
        .output()
        .unwrap();
    assert!(st.status.success());
}

#[test]
fn status_agrees_with_vmtouch_and_fincore() {
    skip_unless_installed!("vmtouch");
    let d = scratch();
    let (dir, f) = files(d.path());
    assert_eq!(vmtouch_pages(&[&dir]).0, 0, "evicted");
    read_range(&f[0], 0, 300);
    read_range(&f[2], 100, 50);
    let v = status(&[&dir]);
    assert_eq!(total(&v), vmtouch_pages(&[&dir]));
    assert_eq!(v["total"]["files"], 3);
    assert_eq!(v["directories"], 2);
    for (i, p) in f.iter().enumerate() {
        let ours = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["path"] == s(p))
            .unwrap();
        assert_eq!(
            ours["resident"].as_u64().unwrap(),
            fincore_pages(p),
            "{}",
            p.display()
        );
        assert_eq!(
            ours["resident"].as_u64().unwrap(),
            vmtouch_pages(&[p]).0,
            "file {i}"
        );
    }
    // -v draws the map: the front of a (300 pages read, plus readahead)
    // resident, the tail not.
    let resident = fincore_pages(&f[0]);
    assert!((300..1024).contains(&resident), "{resident}");
    let out = String::from_utf8(succeed(bin().args(["cache", "status", "-v", s(&f[0])]))).unwrap();
    let map = out.lines().nth(1).unwrap();
    assert!(map.starts_with("[OOOOOOOOOOOOOOOOO"), "{map}");
    assert!(map.ends_with(&format!("    ] {resident}/1024")), "{map}");
}

#[test]
fn warm_and_evict_agree_with_vmtouch() {
    skip_unless_installed!("vmtouch");
    let d = scratch();
    let (dir, _) = files(d.path());
    let out = bin()
        .args(["cache", "warm", s(&dir), "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let w: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(w["bytes_read"], 7 << 20);
    assert_eq!(w["resident"], w["pages"]);
    let (res, all) = vmtouch_pages(&[&dir]);
    assert_eq!((res, all), (1792, 1792));
    let out = bin()
        .args(["cache", "evict", s(&dir), "-o", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["still_resident"], 0);
    assert_eq!(vmtouch_pages(&[&dir]).0, 0);
    assert_eq!(total(&status(&[&dir])), (0, 1792));
}

#[test]
fn lock_holds_pages_until_sigterm() {
    let d = scratch();
    let (dir, f) = files(d.path());
    let pid_file = d.path().join("lock.pid");
    succeed(bin().args([
        "cache",
        "lock",
        s(&f[1]),
        "--daemon",
        "--pid-file",
        s(&pid_file),
    ]));
    let t0 = Instant::now();
    let pid: i32 = loop {
        if let Ok(t) = std::fs::read_to_string(&pid_file)
            && let Ok(p) = t.trim().parse()
        {
            break p;
        }
        assert!(t0.elapsed() < Duration::from_secs(10), "no pid file");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Locked: VmLck covers the file and eviction cannot drop it.
    let vmlck = || -> u64 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        st.lines()
            .find_map(|l| l.strip_prefix("VmLck:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let t0 = Instant::now();
    while vmlck() < 1024 {
        assert!(t0.elapsed() < Duration::from_secs(10), "never locked");
        std::thread::sleep(Duration::from_millis(20));
    }
    succeed(bin().args(["cache", "evict", s(&f[1])]));
    assert_eq!(total(&status(&[&f[1]])), (256, 256), "locked pages stay");
    // SIGTERM releases and removes the pid file.
    // SAFETY: plain kill(2) of the daemon we started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let t0 = Instant::now();
    while pid_file.exists() || Path::new(&format!("/proc/{pid}")).exists() {
        assert!(t0.elapsed() < Duration::from_secs(10), "did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    succeed(bin().args(["cache", "evict", s(&f[1])]));
    assert_eq!(total(&status(&[&f[1]])).0, 0, "released");
    let _ = dir;
}

#[test]
fn missing_paths_are_named() {
    let out = bin()
        .args(["cache", "status", "/nonexistent/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x"));
}
