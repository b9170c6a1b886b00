//! `iolab cache status|warm|evict|lock` agree with vmtouch and util-linux
//! fincore on the same files.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// (resident, total) pages as vmtouch counts them.
fn vmtouch_pages(paths: &[&Path]) -> (u64, u64) {
    let out = succeed(Command::new("vmtouch").args(paths.iter().map(|p| s(p))));
    let text = String::from_utf8_lossy(&out);
    let line = text
        .lines()
        .find(|l| l.contains("Resident Pages:"))
        .unwrap_or_else(|| panic!("{text}"));
    let frac = line.split_whitespace().nth(2).unwrap();
    let (a, b) = frac.split_once('/').unwrap();
    (a.parse().unwrap(), b.parse().unwrap())
}

/// `iolab cache status -o json PATHS`, parsed.
fn status(paths: &[&Path]) -> Value {
    stdout_json(
        bin()
            .args(["cache", "status", "-o", "json"])
            .args(paths.iter().map(|p| s(p))),
    )
}

/// (resident, total) pages of a `cache status` result.
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

/// Reads `count_4k` 4 KiB blocks of `p` from block `skip_4k` on, with dd.
fn read_range(p: &Path, skip_4k: u64, count_4k: u64) {
    succeed(
        Command::new("dd")
            .arg(format!("if={}", s(p)))
            .args(["of=/dev/null", "bs=4k"])
            .arg(format!("skip={skip_4k}"))
            .arg(format!("count={count_4k}")),
    );
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
        let ours = json_item(&v["files"], "path", s(p));
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
    let out = stdout_text(bin().args(["cache", "status", "-v", s(&f[0])]));
    let map = out.lines().nth(1).unwrap();
    assert!(map.starts_with("[OOOOOOOOOOOOOOOOO"), "{map}");
    assert!(map.ends_with(&format!("    ] {resident}/1024")), "{map}");
}

#[test]
fn warm_and_evict_agree_with_vmtouch() {
    skip_unless_installed!("vmtouch");
    let d = scratch();
    let (dir, _) = files(d.path());
    let w = stdout_json(bin().args(["cache", "warm", s(&dir), "-o", "json"]));
    assert_eq!(w["bytes_read"], 7 << 20);
    assert_eq!(w["resident"], w["pages"]);
    let (res, all) = vmtouch_pages(&[&dir]);
    assert_eq!((res, all), (1792, 1792));
    let e = stdout_json(bin().args(["cache", "evict", s(&dir), "-o", "json"]));
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
    let ten_s = Duration::from_secs(10);
    let pid: i32 = wait_for(ten_s, "no pid file", || {
        std::fs::read_to_string(&pid_file).ok()?.trim().parse().ok()
    });
    // Locked: VmLck covers the file and eviction cannot drop it.
    let vmlck = || -> u64 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        st.lines()
            .find_map(|l| l.strip_prefix("VmLck:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    wait_until(ten_s, "never locked", || vmlck() >= 1024);
    succeed(bin().args(["cache", "evict", s(&f[1])]));
    assert_eq!(total(&status(&[&f[1]])), (256, 256), "locked pages stay");
    // SIGTERM releases and removes the pid file.
    // SAFETY: plain kill(2) of the daemon we started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_until(ten_s, "did not end", || {
        !pid_file.exists() && !Path::new(&format!("/proc/{pid}")).exists()
    });
    succeed(bin().args(["cache", "evict", s(&f[1])]));
    assert_eq!(total(&status(&[&f[1]])).0, 0, "released");
    let _ = dir;
}

#[test]
fn missing_paths_are_named() {
    fails_with(
        bin().args(["cache", "status", "/nonexistent/x"]),
        2,
        "/nonexistent/x",
    );
}

#[test]
fn warm_keeps_the_newest_files_resident_round_after_round() {
    let d = scratch();
    let logs = d.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let write = |name: &str, age_s: u64| {
        let p = logs.join(name);
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let t = std::time::SystemTime::now() - Duration::from_secs(age_s);
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(t).unwrap();
        p
    };
    let old = write("a.log", 300);
    let mid = write("b.log", 200);
    let new = write("c.log", 100);
    succeed(bin().args(["cache", "evict", s(&logs)]));
    // Round 1 warms the two newest; before round 2 a newer file appears
    // and takes the older one's place; a third round is not asked for.
    let child = bin()
        .args([
            "cache",
            "warm",
            s(&logs),
            "--newest",
            "2",
            "--interval",
            "1s",
        ])
        .args(["--rounds", "2", "-f", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The newer file appears once round 1 is over (its line is out), not
    // after a guessed 400 ms that a loaded machine's start can outlast;
    // round 2 comes a second later.
    let mut child = child;
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    let newest = write("d.log", 0);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    let rounds: Vec<Value> = (first.lines().chain(rest.lines()))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    let files = |r: &Value| -> Vec<String> {
        let v = r["files"].as_array().unwrap();
        v.iter().map(|f| f.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(files(&rounds[0]), [s(&new), s(&mid)]);
    assert_eq!(files(&rounds[1]), [s(&newest), s(&new)]);
    assert_eq!(rounds[1]["round"], 2);
    // What vmtouch sees: the old file was never read, the others were.
    assert_eq!(vmtouch_pages(&[&old]).0, 0);
    assert_eq!(vmtouch_pages(&[&mid, &new, &newest]), (48, 48));
}
