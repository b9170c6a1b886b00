//! fio's local-file engines that do more than one transfer per syscall, or
//! no transfer at all, against fio's engines of the same name: the calls
//! each makes (strace), the I/Os in flight, and the files they leave; and
//! every engine fio has is either iolab's or refused by name.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The iovec count of each `call(fd, [...], N) = ...` line of a trace.
fn iovec_counts(trace: &str, call: &str) -> Vec<u64> {
    trace
        .lines()
        .filter(|l| l.contains(&format!("{call}(")) && !l.contains("resumed"))
        .map(|l| {
            let (head, _) = l.rsplit_once(") =").expect("a finished call");
            head.rsplit(", ").next().unwrap().parse().unwrap()
        })
        .collect()
}

/// vsync merges what one commit holds when it is adjacent, as fio: a full
/// batch of 8 sequential reads is one readv of 8 iovecs; one I/O per commit
/// is one readv each; random reads stay apart.
#[test]
fn vsync_merges_adjacent_ios_as_fios() {
    skip_unless_installed!("strace");
    let (_dir, f) = scratch_file();
    lay_out(&f, "1M");
    for (rw, batch, calls, per_call) in [
        ("read", 8, 32, 8),
        ("read", 1, 256, 1),
        ("randread", 8, 256, 1),
    ] {
        let opts = format!(
            "--ioengine=vsync --iodepth=8 --iodepth_batch_submit={batch} --size=1M --bs=4k --rw={rw} --invalidate=0"
        );
        let args = job("v", &f, &opts);
        let ours = iovec_counts(&strace_run("readv", &args), "readv");
        let what = format!("{rw} batch {batch}");
        assert_eq!(ours.len(), calls, "{what}: {ours:?}");
        assert!(ours.iter().all(|&n| n == per_call), "{what}: {ours:?}");
        if rw == "read" && have("fio", "vsync_merges_adjacent_ios_as_fios (fio part)") {
            let theirs = iovec_counts(&strace_fio("readv", &args), "readv");
            assert_eq!(ours, theirs, "{what}: iolab's readv calls against fio's");
        }
    }
}

/// posixaio keeps up to `iodepth` I/Os in flight (fio's depth histogram:
/// 8 at once and never more at iodepth 8, in both; always 1 at iodepth 1),
/// and glibc's threads do the transfers: one pread64 per read, as under fio.
#[test]
fn posixaio_keeps_iodepth_in_flight() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    lay_out(&f, "4M");
    let opts = "--ioengine=posixaio --size=4M --bs=4k --rw=randread --invalidate=0";
    let levels = |v: &Value, keys: &[&str]| -> f64 {
        let l = &v["jobs"][0]["iodepth_level"];
        keys.iter().map(|k| l[*k].as_f64().unwrap()).sum()
    };
    let one = job("a", &f, &format!("{opts} --iodepth=1"));
    assert_eq!(levels(&run_json(&one), &["1"]), 100.0);
    let args = job("a", &f, &format!("{opts} --iodepth=8"));
    let (ours, theirs) = (run_json(&args), fio_json(&args));
    assert_eq!(ours["jobs"][0]["read"]["total_ios"], 1024);
    for v in [&ours, &theirs] {
        let l = &v["jobs"][0]["iodepth_level"];
        assert!(levels(v, &["8"]) > 0.0, "{l}");
        assert_eq!(levels(v, &["16", "32", ">=64"]), 0.0, "{l}");
    }
    if have("strace", "posixaio_keeps_iodepth_in_flight (strace part)") {
        // The job's reads only (not the loader's reads of libraries).
        let count = |t: String| {
            t.lines()
                .filter(|l| l.contains("pread64(") && l.contains(", 4096, "))
                .count()
        };
        let ours = count(strace_run("pread64", &args));
        assert_eq!(ours, 1024);
        assert_eq!(ours, count(strace_fio("pread64", &args)));
    }
}

/// Clones of a posixaio job each write their own file only: glibc's AIO
/// threads serve every clone, so the clones keep their descriptors in the
/// process's table (in tables of their own the threads would find another
/// clone's file under the same number).
#[test]
fn posixaio_clones_write_their_own_files() {
    let d = scratch();
    let opts = "--ioengine=posixaio --iodepth=8 --numjobs=4 --size=1M --bs=4k --rw=randwrite --zero_buffers=1";
    let paths: Vec<_> = (0..4).map(|c| d.path().join(format!("p.{c}.0"))).collect();
    for p in &paths {
        lay_out(p, "1M");
    }
    for round in 0..3 {
        let mut args = vec![
            "--name=p".to_string(),
            format!("--directory={}", s(d.path())),
        ];
        args.extend(opts.split(' ').map(String::from));
        let v = run_json(&args);
        for j in v["jobs"].as_array().unwrap() {
            assert_eq!(j["error"], 0, "{}", j["iolab"]["errors"]);
            assert_eq!(j["write"]["total_ios"], 256);
        }
        for p in &paths {
            let data = std::fs::read(p).unwrap();
            assert_eq!(data.len(), 1 << 20);
            assert!(
                data.iter().all(|&b| b == 0),
                "round {round}: {} not all written",
                p.display()
            );
        }
        // Random bytes again for the next round.
        for p in &paths {
            std::fs::remove_file(p).unwrap();
            lay_out(p, "1M");
        }
    }
}

/// (size, allocated 512-byte blocks) of `p`.
fn size_and_blocks(p: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).unwrap();
    (m.len(), m.blocks())
}

/// falloc allocates instead of transferring, as fio's: reads of a sparse
/// file allocate every block and keep its size (fallocate KEEP_SIZE), writes
/// of a new file allocate and extend it (fallocate 0); the file ends with
/// fio's size and blocks. Its reads change the file's allocation, so a
/// file iolab did not lay out needs --allow-overwrite.
#[test]
fn falloc_allocates_as_fios() {
    skip_unless_installed!("fio");
    let d = scratch();
    let sparse = |name: &str| {
        let p = d.path().join(name);
        std::fs::File::create(&p).unwrap().set_len(1 << 20).unwrap();
        assert_eq!(size_and_blocks(&p), (1 << 20, 0));
        p
    };
    let read = "--ioengine=falloc --size=1M --bs=4k --rw=randread";
    let (ours, theirs) = (sparse("ours"), sparse("theirs"));
    let (code, err) = run_err(&job("r", &ours, read));
    assert_eq!(code, code::REFUSED, "{err}");
    assert!(err.contains("--allow-overwrite"), "{err}");
    let mut args = job("r", &ours, read);
    args.push("--allow-overwrite".into());
    let v = run_json(&args);
    let t = fio_json(&job("r", &theirs, read));
    assert_eq!(
        v["jobs"][0]["read"]["total_ios"],
        t["jobs"][0]["read"]["total_ios"]
    );
    assert_eq!(size_and_blocks(&ours), size_and_blocks(&theirs));
    // Every block allocated (and an extent block or so of ext4's).
    let (size, blocks) = size_and_blocks(&ours);
    assert!(
        size == 1 << 20 && (2048..2048 + 64).contains(&blocks),
        "{size} {blocks}"
    );
    assert!(std::fs::read(&ours).unwrap().iter().all(|&b| b == 0));

    let write = "--ioengine=falloc --size=1M --offset=1M --bs=64k --rw=write";
    let (ours, theirs) = (d.path().join("w_ours"), d.path().join("w_theirs"));
    run_json(&job("w", &ours, write));
    fio_json(&job("w", &theirs, write));
    assert_eq!(size_and_blocks(&ours), size_and_blocks(&theirs));
    if have("strace", "falloc_allocates_as_fios (strace part)") {
        let modes = |t: String| -> Vec<String> {
            t.lines()
                .filter(|l| l.contains("fallocate("))
                .map(|l| l.split(", ").nth(1).unwrap().to_string())
                .collect()
        };
        let mut args = job("r", &sparse("traced"), read);
        args.push("--allow-overwrite".into());
        let calls = modes(strace_run("fallocate", &args));
        assert_eq!(calls.len(), 256);
        assert!(
            calls.iter().all(|m| m == "FALLOC_FL_KEEP_SIZE"),
            "{calls:?}"
        );
    }
}

/// ftruncate sets the size to each write's offset, as fio's: the same
/// ftruncate calls in the same order (strace), the same final size.
#[test]
fn ftruncate_truncates_as_fios() {
    skip_unless_installed!("fio");
    let d = scratch();
    let write = "--ioengine=ftruncate --size=256k --bs=4k --rw=write";
    let (ours, theirs) = (d.path().join("ours"), d.path().join("theirs"));
    let v = run_json(&job("t", &ours, write));
    let t = fio_json(&job("t", &theirs, write));
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 64);
    assert_eq!(
        v["jobs"][0]["write"]["total_ios"],
        t["jobs"][0]["write"]["total_ios"]
    );
    assert_eq!(size_and_blocks(&ours), size_and_blocks(&theirs));
    assert_eq!(size_and_blocks(&ours).0, 256 * 1024 - 4096);
    if have("strace", "ftruncate_truncates_as_fios (strace part)") {
        let lengths = |t: String| -> Vec<String> {
            t.lines()
                .filter(|l| l.contains("ftruncate("))
                .map(|l| l.split(", ").nth(1).unwrap().to_string())
                .collect()
        };
        let ours = lengths(strace_run("ftruncate", &job("t", &ours, write)));
        let theirs = lengths(strace_fio("ftruncate", &job("t", &theirs, write)));
        assert_eq!(ours.len(), 64);
        assert_eq!(ours, theirs);
    }
}

/// Every engine the installed fio has is iolab's too, or refused by name
/// (never "unknown"); those iolab leaves to fio say why.
#[test]
fn every_fio_engine_is_iolabs_or_refused_by_name() {
    skip_unless_installed!("fio");
    let out = stdout_text(std::process::Command::new("fio").arg("--enghelp"));
    let names: Vec<&str> = out
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert!(names.len() > 20, "{out}");
    let f = scratch().path().join("never");
    for name in names {
        if iolab::engine::find(name).is_some() {
            continue;
        }
        let (code, err) = run_err(&job("x", &f, &format!("--size=1M --ioengine={name}")));
        assert_eq!(code, code::USAGE, "{name}: {err}");
        assert!(
            err.contains(&format!(
                "fio's ioengine '{name}' is not supported by iolab"
            )),
            "{name}: {err}"
        );
        assert!(!err.contains("unknown"), "{name}: {err}");
    }
    for (name, kind) in iolab::engine::FIO_ENGINES {
        assert!(iolab::engine::find(name).is_none(), "{name} is iolab's");
        let err = iolab::engine::registry::unknown(name);
        assert_eq!(err.contains(" yet;"), kind.why().is_empty(), "{err}");
        assert!(err.contains(kind.why()), "{err}");
    }
}
