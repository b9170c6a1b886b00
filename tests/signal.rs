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
    let mut child = bin()
        .args(["--eta=always", "run"])
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
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    // Signalled once the run has done I/O (its first live line, a second
    // in), not after a guessed sleep that a loaded machine can outlast.
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
            let line = line.unwrap();
            if line.starts_with("iolab: run: ") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("a live line within 60 s");
    let t0 = Instant::now();
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    // A liveness bound, not a timing: the run stops in milliseconds, and
    // would go on for a minute.
    assert!(t0.elapsed() < Duration::from_secs(10), "stopped promptly");
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    assert_eq!(status.code(), Some(130), "{stderr}");
    let v = parse_json(&stdout); // the partial result is valid JSON
    assert_eq!(v["iolab"]["interrupted"], true);
    let r = &v["jobs"][0]["read"];
    assert!(r["total_ios"].as_u64().unwrap() > 0);
    assert!(r["runtime"].as_u64().unwrap() < 30_000);
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!f.exists(), "unlink=1 honoured on interrupt");
}
