//! `iolab trace import` of strace output in every form strace writes it
//! (issue 34, point 7): the same Python program traced by the real strace
//! with `-ttt`, `-tt`, `-t`, `-r`, no timestamps, no `-T`, `-k`, `-i -n`
//! and `-ff`, each import checked against the `-f -ttt -T -y` one: the
//! same calls at the same offsets, the program's 0.3 s sleep where the
//! form has times, and a note for what the form lacks.

mod common;

use common::traced::*;
use common::*;
use std::path::Path;

/// Reads 3 × 4 KiB by position, sleeps 0.3 s, preads at 64 KiB, and
/// forks a child that preads 100 bytes at 8 KiB.
const SCRIPT: &str = "
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(3):
    os.read(fd, 4096)
time.sleep(0.3)
os.pread(fd, 4096, 65536)
pid = os.fork()
if pid == 0:
    os.pread(fd, 100, 8192)
    os._exit(0)
os.waitpid(pid, 0)
";

/// Traces SCRIPT with strace `opts` and imports the output (`-ff`'s by
/// its prefix): the trace file, and stdout.
fn traced(opts: &[&str]) -> (TraceFile, String) {
    let (dir, f) = data(128);
    let log = strace(dir.path(), opts, &[python(), "-c", SCRIPT, s(&f)]);
    let (out, err) = succeed_text(bin().args(["trace", "import", "--no-store"]).arg(&log));
    assert_eq!(err, "", "{opts:?}: nothing on stderr in the normal view");
    let mut t = log.as_os_str().to_owned();
    t.push(".trace");
    let mut tf = TraceFile::read(Path::new(&t));
    // Name the data file the same in every run.
    for e in &mut tf.events {
        if e.file.as_deref() == Some(s(&f)) {
            e.file = Some("DATA".into());
        }
    }
    (tf, out)
}

/// The calls on the data file: call, offset, length, result, and whether
/// the main process made it.
fn on_data(t: &TraceFile) -> Vec<(String, Option<u64>, u64, i64, bool)> {
    let main = t.meta["pid"].as_u64().unwrap();
    (t.events.iter())
        .filter(|e| e.file.as_deref() == Some("DATA") && e.name.contains("read"))
        .map(|e| (e.name.clone(), e.offset, e.len, e.result, e.pid == main))
        .collect()
}

/// Seconds between the last read and the pread after the sleep.
fn sleep_seen(t: &TraceFile) -> f64 {
    let at = |name: &str| {
        (t.events.iter())
            .filter(|e| e.file.as_deref() == Some("DATA") && e.name == name)
            .map(|e| e.t_ns)
            .collect::<Vec<_>>()
    };
    (at("pread64")[0] as f64 - *at("read").last().unwrap() as f64) / 1e9
}

fn notes(t: &TraceFile) -> String {
    (t.meta["notes"].as_array().into_iter().flatten())
        .map(|n| n.as_str().unwrap().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_strace_form_gives_the_same_calls_and_says_what_it_lacks() {
    skip_unless_installed!("strace");
    let (base, _) = traced(FULL);
    let want = on_data(&base);
    let r = |o, l, res, main| ("read".to_string(), Some(o), l, res, main);
    let p = |o, l, res, main| ("pread64".to_string(), Some(o), l, res, main);
    assert_eq!(
        want,
        [
            r(0, 4096, 4096, true),
            r(4096, 4096, 4096, true),
            r(8192, 4096, 4096, true),
            p(65536, 4096, 4096, true),
            p(8192, 100, 100, false),
        ]
    );
    assert!(notes(&base).is_empty(), "{}", notes(&base));
    assert!(sleep_seen(&base) >= 0.29);
    // (strace options, a note the import must carry, whether times hold)
    let forms: &[(&[&str], &str, bool)] = &[
        (&["-f", "-tt", "-T", "-y"], "-tt output has no date", true),
        (&["-f", "-t", "-T", "-y"], "-t gives whole seconds", false),
        (&["-f", "-r", "-T", "-y"], "-r output has no date", true),
        (&["-f", "-ttt", "-y"], "no -T", true),
        (&["-f", "-T", "-y"], "no timestamps", false),
        (&["-f", "-ttt", "-T", "-y", "-k"], "", true),
        (&["-f", "-ttt", "-T", "-y", "-i", "-n"], "", true),
        (&["-ff", "-tt", "-T", "-y"], "-tt output has no date", true),
        (&["-ttt", "-T", "-y"], "", true),
    ];
    for (opts, note, timed) in forms {
        let (t, out) = traced(opts);
        let got = on_data(&t);
        if opts.contains(&"-f") || opts.contains(&"-ff") {
            assert_eq!(got, want, "{opts:?}");
        } else {
            // Without -f the child is not traced.
            assert_eq!(got, want[..4], "{opts:?}");
        }
        let n = notes(&t);
        assert!(n.contains(note), "{opts:?}: {n}");
        if note.is_empty() {
            assert!(n.is_empty(), "{opts:?}: {n}");
        } else {
            assert!(out.contains(&format!("note: {note}")), "{opts:?}: {out}");
        }
        let gap = sleep_seen(&t);
        if *timed {
            assert!((0.29..5.0).contains(&gap), "{opts:?}: {gap} s");
            assert!(t.meta["duration_ns"].as_u64().unwrap() >= 290_000_000);
        } else if opts.contains(&"-t") {
            assert!(gap == 0.0 || gap == 1.0, "{opts:?}: whole seconds, {gap}");
        } else {
            assert_eq!(gap, 0.0, "{opts:?}");
        }
        let start = t.meta["started_unix"].as_f64().unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!((now - 60.0..now).contains(&start), "{opts:?}: {start}");
    }
}

#[test]
fn stray_lines_are_skipped_counted_and_said() {
    skip_unless_installed!("strace");
    let (dir, f) = data(16);
    let log = strace(dir.path(), FULL, &["cat", s(&f)]);
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "-- pasted from a chat --\n");
    std::fs::write(&log, text).unwrap();
    let (out, err) = succeed_text(
        bin()
            .args(["trace", "import", "--no-store", "-f", "json"])
            .arg(&log),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let n = v["meta"]["notes"][0].as_str().unwrap();
    let at = format!("{}:2:", s(&log));
    assert!(
        n.contains("skipped 1 line that is not strace's") && n.contains(&at),
        "{n}"
    );
    assert!(err.contains("warning: skipped 1 line"), "{err}");
    assert!(v["calls"]["read"]["count"].as_u64().unwrap() >= 1);
}
