//! `iolab trace import` of real strace output: programs whose calls are
//! known (dd, Python scripts, fio) traced by the real strace, the trace
//! files iolab writes read back line by line, and the counts, offsets,
//! sizes, advice and threads checked against what the programs did.

mod common;

use common::traced::*;
use common::*;
use std::path::Path;

/// `iolab trace import LOG --no-store`, which must succeed silently on
/// stderr; the trace file it wrote (LOG.trace).
fn import(log: &Path) -> TraceFile {
    let (_, err) = succeed_text(bin().args(["trace", "import", "--no-store"]).arg(log));
    assert_eq!(err, "");
    let mut t = log.as_os_str().to_owned();
    t.push(".trace");
    TraceFile::read(Path::new(&t))
}

/// Traces `python3 -c SCRIPT FILE` with strace and imports it.
fn traced_python(script: &str, dir: &Path, f: &Path) -> TraceFile {
    import(&strace(dir, FULL, &[python(), "-c", script, s(f)]))
}

#[test]
fn dd_reads_are_exact_in_count_size_and_offset() {
    skip_unless_installed!("strace");
    // With -f and its pid column, and without -f (no pid column) with -yy.
    for opts in [FULL, &["-ttt", "-T", "-yy"]] {
        let (dir, f) = data(64);
        let t = import(&strace(dir.path(), opts, &dd(&f, 9)));
        let reads = t.on("read", &f);
        let offsets: Vec<_> = reads.iter().map(|e| e.offset).collect();
        let want: Vec<_> = (0..9).map(|i| Some(i * 4096)).collect();
        assert_eq!(offsets, want, "{opts:?}");
        assert!(
            reads.iter().all(|e| e.len == 4096 && e.result == 4096),
            "{reads:?}"
        );
        assert_eq!(t.meta["command"][0], "dd");
        assert_eq!(t.meta["exit_status"], 0);
        assert_eq!(t.meta["source"], "strace");
    }
}

#[test]
fn python_preads_fadvise_and_a_failed_open_are_exact() {
    skip_unless_installed!("strace");
    let (dir, f) = data(128);
    let t = traced_python(PREADS, dir.path(), &f);
    let p: Vec<_> = (t.on("pread64", &f).iter())
        .map(|e| (e.offset, e.len, e.result))
        .collect();
    let want: Vec<_> = [0, 12288, 4096, 65536, 8192]
        .map(|o| (Some(o), 4096, 4096))
        .to_vec();
    assert_eq!(p, want);
    let adv: Vec<_> = (t.on("fadvise64", &f).iter())
        .map(|e| (e.offset, e.len, e.flags))
        .collect();
    let (will, dont) = (
        libc::POSIX_FADV_WILLNEED as u64,
        libc::POSIX_FADV_DONTNEED as u64,
    );
    let want = [
        (0, 8192, will),
        (32768, 8192, will),
        (16384, 8192, will),
        (0, 0, dont),
    ];
    assert_eq!(adv, want.map(|(o, l, a)| (Some(o), l, a)).to_vec());
    // The failed open: -ENOENT on the path asked for, counted as an error.
    let missing = f.with_file_name("f.missing");
    let o = t.on("openat", &missing);
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].result, -(libc::ENOENT as i64));
    let file = json_item(&t.end["files"], "path", s(&missing));
    assert_eq!(file["calls"]["openat"]["errors"], 1);
    assert!(t.end["calls"]["openat"]["errors"].as_u64().unwrap() >= 1);
}

#[test]
fn threads_are_told_from_child_processes() {
    skip_unless_installed!("strace");
    let (dir, f) = data(16);
    let t = traced_python(THREADS, dir.path(), &f);
    let main = t.meta["pid"].as_u64().unwrap();
    let p = t.on("pread64", &f);
    let in_threads: Vec<_> = p.iter().filter(|e| e.offset != Some(8192)).collect();
    assert_eq!(in_threads.len(), 8);
    let mut tids: Vec<u64> = in_threads.iter().map(|e| e.tid).collect();
    tids.sort();
    tids.dedup();
    assert_eq!(tids.len(), 2, "two threads: {tids:?}");
    assert!(in_threads.iter().all(|e| e.pid == main && e.tid != main));
    let child: Vec<_> = p.iter().filter(|e| e.offset == Some(8192)).collect();
    assert_eq!(child.len(), 1);
    assert!(child[0].pid != main && child[0].tid == child[0].pid);
    let th = t.end["threads"].as_array().unwrap();
    let of = |tid: u64| th.iter().find(|x| x["tid"] == tid).unwrap();
    assert_eq!(of(tids[0])["pid"], main);
    assert_eq!(of(child[0].tid)["ppid"], main);
}

#[test]
fn fio_random_reads_match_fios_own_count() {
    skip_unless_installed!("strace");
    skip_unless_installed!("fio");
    let (dir, f) = data(64);
    let job = format!(
        "--name=j --filename={} --rw=randread --bs=4k --size=64k",
        s(&f)
    );
    let fio: Vec<&str> = ["fio", "--ioengine=psync", "--output-format=json"]
        .into_iter()
        .chain(job.split(' '))
        .collect();
    let log = strace(dir.path(), FULL, &fio);
    let t = import(&log);
    let report = fio_json(&fio[1..]);
    let ios = report["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
    let reads = t.on("pread64", &f);
    assert_eq!(reads.len() as u64, ios);
    // fio's random map touches every block once.
    let mut offsets: Vec<u64> = reads.iter().map(|e| e.offset.unwrap()).collect();
    offsets.sort();
    assert_eq!(offsets, (0..16).map(|i| i * 4096).collect::<Vec<_>>());
    // fio ran the job in a child process, and told the kernel it reads at random.
    assert!(
        reads
            .iter()
            .all(|e| e.pid != t.meta["pid"].as_u64().unwrap())
    );
    let advice: Vec<u64> = t.on("fadvise64", &f).iter().map(|e| e.flags).collect();
    assert!(
        advice.contains(&(libc::POSIX_FADV_RANDOM as u64)),
        "{advice:?}"
    );
}

#[test]
fn what_is_not_strace_output_is_refused_with_its_line() {
    let dir = scratch();
    let notes = write_file(dir.path(), "notes.txt", "hello\nworld\n");
    let err = fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&notes),
        code::USAGE,
        &format!("{}:1:", s(&notes)),
    );
    assert_one_line(&err, &["expected strace output", "-ttt"]);
    assert!(!dir.path().join("notes.txt.trace").exists());
    let bad = write_file(
        dir.path(),
        "bad.strace",
        "1 1700000000.000001 fsync(3</f>) = 0 <0.000010>\n\n1 1700000000.000002 oops\n1 1700000000.000003 ugh\n",
    );
    let err = fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&bad),
        code::USAGE,
        &format!("{}:3:", s(&bad)),
    );
    assert_one_line(&err, &["expected a system call"]);
    let empty = write_file(dir.path(), "empty.strace", "");
    fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&empty),
        code::USAGE,
        &format!("{}:1: no strace output", s(&empty)),
    );
}

#[test]
fn a_trace_file_that_exists_is_never_overwritten() {
    let dir = scratch();
    let log = write_file(
        dir.path(),
        "a.strace",
        "1 1700000000.000001 fsync(3</f>) = 0 <0.000010>\n",
    );
    let kept = write_file(dir.path(), "a.strace.trace", "keep");
    fails_with(
        bin().args(["trace", "import", "--no-store"]).arg(&log),
        code::REFUSED,
        "never overwrites",
    );
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "keep");
    // -o elsewhere works, and the figures are the file's.
    let other = dir.path().join("b.trace");
    let v = stdout_json(
        bin()
            .args(["trace", "import", "--no-store", "-f", "json", "-o"])
            .arg(&other)
            .arg(&log),
    );
    assert_eq!(v["calls"]["fsync"]["count"], 1);
    assert_eq!(v["calls"]["fsync"]["sum_ns"], 10_000);
    assert_eq!(TraceFile::read(&other).events.len(), 1);
}
