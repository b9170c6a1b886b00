//! How a trace starts and ends around a live process: attached with `-p`,
//! no call is timed before the trace began (the first events had t_ns 0)
//! and no call's exit is taken for another's (the first event was a fake
//! `pread64` with result 0: the exit of an unseen sleep); `--duration`
//! stops the command and everything under it, as Ctrl-C does, and says so
//! (it SIGKILLed the command alone, leaving its child running). Needs root
//! and BTF (eBPF) and python3.

mod common;

use common::trace::can;
use common::{have, parse_json, s, scratch, succeed};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn attached_every_call_is_real_and_timed_from_the_start() {
    let test = "attached_every_call_is_real_and_timed_from_the_start";
    if !can(test) || !have("python3", test) {
        return;
    }
    let d = scratch();
    let f = d.path().join("data");
    std::fs::write(&f, vec![1u8; 8192]).unwrap();
    // Back-to-back 4 KiB preads between short sleeps (untraced calls): an
    // exit of a sleep taken for a pread shows as a pread of 0 bytes.
    let script = format!(
        "import os, time\nfd = os.open('{}', os.O_RDONLY)\nprint('ready', flush=True)\n\
         while True:\n    os.pread(fd, 4096, 0)\n    time.sleep(0.0002)\n",
        s(&f)
    );
    let mut child = Command::new("python3")
        .args(["-c", &script])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    let trace = d.path().join("p.trace");
    let out = common::bin()
        .args([
            "trace",
            "--no-store",
            "--events",
            "--duration",
            "1s",
            "-o",
            s(&trace),
        ])
        .args(["-p", &child.id().to_string()])
        .output()
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut preads = 0;
    for l in text.lines() {
        let e = parse_json(l.as_bytes());
        if e.get(3).and_then(|c| c.as_str()) != Some("pread64") {
            continue;
        }
        preads += 1;
        assert!(
            e[0].as_u64().unwrap() > 0,
            "timed before the trace began: {l}"
        );
        assert_eq!(e[9], 4096, "not a real pread: {l}");
    }
    assert!(preads > 100, "{preads} preads in {text:.300}");
}

#[test]
fn duration_stops_the_command_and_its_children_and_says_so() {
    let test = "duration_stops_the_command_and_its_children_and_says_so";
    if !can(test) {
        return;
    }
    let d = scratch();
    let pidfile = d.path().join("child.pid");
    let script = format!("sleep 60 & echo $! > {}; sleep 60", s(&pidfile));
    let out = succeed(
        common::bin()
            .args(["trace", "--no-store", "--duration", "1s", "--"])
            .args(["sh", "-c", &script]),
    );
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.contains("--duration reached: iolab sent SIGINT"),
        "{out}"
    );
    let child: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Gone, or a zombie its new parent has yet to reap; never still asleep.
    let mut state = String::new();
    for _ in 0..50 {
        state = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
        if state.is_empty() || state.contains(") Z") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        state.is_empty() || state.contains(") Z"),
        "the child still runs: {state}"
    );
}
