//! `iolab disk` on each transport of its block layer: FUSE over io_uring
//! and read(2) on /dev/fuse. What the disk does (delays, errors, crash,
//! status, a clean teardown) is asserted on both; the rest of the suite
//! (tests/disk*.rs) runs on the default, io_uring when the kernel has it.
//! Needs root, /dev/fuse and loop devices (CI has them).

mod common;

use common::disk::{ENABLE_URING, TestDisk, can};
use common::*;

/// Every transport, with what `status` says of it.
const TRANSPORTS: [(&str, &str); 2] = [
    ("uring", "io_uring, 2 queues"),
    ("dev", "read(2) on /dev/fuse"),
];

/// The transport line of `status`'s text.
fn transport_line(d: &TestDisk) -> String {
    let text = d.disk("status", &[]);
    (text.lines())
        .find_map(|l| l.trim().strip_prefix("transport: "))
        .unwrap_or_else(|| panic!("no transport line in:\n{text}"))
        .to_string()
}

/// One test at a time: one turns FUSE over io_uring off for a while.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn uring_on() -> bool {
    std::fs::read_to_string(ENABLE_URING).is_ok_and(|v| v.trim() == "Y")
}

#[test]
fn each_transport_delays_fails_crashes_and_goes_down_clean() {
    if !can("each_transport_delays_fails_crashes_and_goes_down_clean") {
        return;
    }
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    for (transport, said) in TRANSPORTS {
        if transport == "uring" && !uring_on() {
            eprintln!("SKIP the io_uring transport: {ENABLE_URING} cannot be turned on here");
            continue;
        }
        let d = TestDisk::up(&[
            "--size",
            "64M",
            "--transport",
            transport,
            "--mount-options",
            "commit=300",
        ]);
        let line = transport_line(&d);
        let cpus = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap();
        let said = match cpus.trim() {
            "0-1" => said.to_string(),
            _ => said.split(',').next().unwrap().to_string(),
        };
        assert!(line.starts_with(&said), "{transport}: {line}");
        let parts = d.status()["state"]["parts"].to_string();
        assert!(parts.contains("transport"), "{parts}");
        let f = d.file("f");
        lay_out(&f, "8m");
        // A delay of 200 us, every read: injected in full and counted.
        d.disk("set", &["--delay", "read=200us"]);
        let before = d.status()["counters"].clone();
        let args = job(
            "r",
            &f,
            "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=200",
        );
        let r = d.run_json(&args)["jobs"][0]["read"].clone();
        let c = d.status()["counters"].clone();
        let ops = c["ops"][0].as_u64().unwrap() - before["ops"][0].as_u64().unwrap();
        let ns = c["delay_ns"][0].as_u64().unwrap() - before["delay_ns"][0].as_u64().unwrap();
        assert!(ops >= 200, "{transport}: {ops} reads counted");
        assert_eq!(ns, ops * 200_000, "{transport}: {ops} reads");
        assert!(
            r["lat_ns"]["min"].as_u64().unwrap() >= 200_000,
            "{transport}: {r}"
        );
        // The daemon says how close to their deadlines it answered (its
        // precision is bench/disk.py's to measure; a loaded machine is late).
        let p = d.status()["punctual"].clone();
        let held = p["held"].as_u64().unwrap();
        assert!(
            held >= ops && p["on_time"].as_u64().unwrap() <= held,
            "{transport}: {p}"
        );
        let text = d.disk("status", &[]);
        assert!(
            text.contains(&format!("delayed answers: {held}, ")),
            "{text}"
        );
        // Depth 32 overlaps them: 320 reads of 50 ms take 16 s one after
        // another, 0.5 s at depth 32; under 8 s proves the overlap.
        d.disk("set", &["--delay", "read=50ms"]);
        let args = job(
            "q",
            &f,
            "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=320 --ioengine=io_uring --iodepth=32",
        );
        let q = d.run_json(&args)["jobs"][0]["read"].clone();
        let ms = q["runtime"].as_u64().unwrap();
        assert!(
            ms < 8_000,
            "{transport}: 320 reads of 50 ms at depth 32 took {ms} ms"
        );
        // Every read fails: the error reaches the program.
        d.disk("set", &["--fail", "read=EIO@1"]);
        let (code, err) = run_err(&job(
            "e",
            &f,
            "--size=8m --rw=randread --bs=4k --direct=1 --number_ios=10",
        ));
        assert_eq!(code, 1, "{transport}: {err}");
        assert!(err.contains("Input/output error"), "{transport}: {err}");
        d.disk("set", &[]);
        // A crash keeps what was fsynced and drops what was not.
        let kept: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
        std::fs::write(d.file("kept"), &kept).unwrap();
        std::fs::File::open(d.file("kept"))
            .unwrap()
            .sync_all()
            .unwrap();
        std::fs::write(d.file("lost"), vec![7u8; 1 << 20]).unwrap();
        let said = d.disk("crash", &[]);
        assert!(said.contains("mounted again"), "{transport}: {said}");
        assert_eq!(std::fs::read(d.file("kept")).unwrap(), kept, "{transport}");
        assert!(
            !d.file("lost").exists(),
            "{transport}: an unsynced file survived"
        );
        // Still the same transport after the crash, and down leaves nothing.
        assert_eq!(transport_line(&d), line, "{transport}");
        d.down();
    }
}

#[test]
fn uring_asked_for_while_the_kernel_has_it_off_is_refused_with_why() {
    if !can("uring_asked_for_while_the_kernel_has_it_off_is_refused_with_why") {
        return;
    }
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    // The switch is the machine's: put it back whatever happens.
    struct Restore(String);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::fs::write(ENABLE_URING, if self.0 == "Y" { "1" } else { "0" });
        }
    }
    let Ok(old) = std::fs::read_to_string(ENABLE_URING) else {
        eprintln!("SKIP: no {ENABLE_URING} (a kernel without FUSE over io_uring)");
        return;
    };
    let _restore = Restore(old.trim().to_string());
    std::fs::write(ENABLE_URING, "0").unwrap();
    let d = TestDisk::new();
    let out = d
        .cmd()
        .args([
            "disk",
            "up",
            s(&d.dir),
            "--size",
            "64M",
            "--transport",
            "uring",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("enable_uring"), "{err}");
    common::disk::assert_clean(&d.dir, &d.run);
    drop(d);
    // auto falls back to /dev/fuse and says why.
    let d = TestDisk::up(&["--size", "64M"]);
    let line = transport_line(&d);
    assert!(
        line.starts_with("read(2) on /dev/fuse") && line.contains("enable_uring is off"),
        "{line}"
    );
    d.down();
}

/// The kernel's current CPU wake-up latency target in us (PM QoS).
fn cpu_latency_us() -> i32 {
    use std::io::Read;
    let mut b = [0u8; 4];
    let mut f = std::fs::File::open("/dev/cpu_dma_latency").expect("open /dev/cpu_dma_latency");
    f.read_exact(&mut b).expect("read /dev/cpu_dma_latency");
    i32::from_ne_bytes(b)
}

#[test]
fn no_halt_holds_idle_cpus_polling_while_up_and_gives_it_back() {
    if !can("no_halt_holds_idle_cpus_polling_while_up_and_gives_it_back") {
        return;
    }
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    let before = cpu_latency_us();
    if before == 0 {
        eprintln!("note: another process holds /dev/cpu_dma_latency at 0 already");
    }
    let d = TestDisk::up(&["--size", "64M", "--no-halt"]);
    assert_eq!(cpu_latency_us(), 0, "while up with --no-halt");
    let text = d.disk("status", &[]);
    assert!(text.contains("idle CPUs polling"), "{text}");
    let parts = d.status()["state"]["parts"].to_string();
    assert!(parts.contains("cpu_dma_latency"), "{parts}");
    // A crash remounts; the setting stays, and status still says so.
    d.disk("crash", &[]);
    assert_eq!(cpu_latency_us(), 0, "after a crash");
    assert!(d.disk("status", &[]).contains("idle CPUs polling"));
    d.down();
    assert_eq!(cpu_latency_us(), before, "after down");
    // Without the flag the machine's setting is left alone.
    let d = TestDisk::up(&["--size", "64M"]);
    assert_eq!(cpu_latency_us(), before, "up without --no-halt");
    assert!(!d.disk("status", &[]).contains("idle CPUs"));
    d.down();
}
