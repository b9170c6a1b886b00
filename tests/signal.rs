//! Ctrl-C (SIGINT) mid-run: partial result printed, files cleaned, exit 130.

mod common;
use common::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn sigint_gives_partial_json_and_exit_130() {
    interrupt(&[]);
}

#[test]
fn sigint_drains_io_uring_and_gives_partial_json() {
    interrupt(&["--ioengine=io_uring", "--iodepth=16", "--direct=1"]);
}

fn interrupt(engine: &[&str]) {
    let (_dir, f) = scratch_file();
    let child = bin()
        .arg("run")
        .args(job(
            "long",
            &f,
            "--size=8M --rw=randread --time_based --runtime=60s --unlink=1 --output-format=json",
        ))
        .args(engine)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t0 = Instant::now();
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "stopped promptly");
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = parse_json(&out.stdout); // the partial result is valid JSON
    assert_eq!(v["iolab"]["interrupted"], true);
    let r = &v["jobs"][0]["read"];
    assert!(r["total_ios"].as_u64().unwrap() > 0);
    assert!(r["runtime"].as_u64().unwrap() < 10_000);
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    assert!(!f.exists(), "unlink=1 honoured on interrupt");
}
