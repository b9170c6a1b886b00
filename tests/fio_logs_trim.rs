//! fio's log file options (`log_offset`, `log_prio`, `per_job_logs`,
//! `log_store_compressed`, `--inflate-log`), the `null` engine's lack of
//! files, and trims (`rw=trim` and its kin, `falloc`'s punched holes,
//! `--readonly`), each against fio 3.33 on the same job.

mod common;
use common::*;
use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

/// Both tools, each in a fresh directory: (fio's dir and JSON, iolab's).
fn both(args: &[&str]) -> [(tempfile::TempDir, serde_json::Value); 2] {
    [true, false].map(|fio| {
        let d = scratch();
        let v = run_in(fio, d.path(), args);
        (d, v)
    })
}

/// The files left in `dir`.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// The columns of a log's lines after the time and the value (ddir, bs,
/// offset, prio): what is the same in any run of a sequential job.
fn columns(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(", ").skip(2).map(str::to_string).collect())
        .collect()
}

/// (I/Os, bytes) per direction of the first job.
fn per_direction(v: &serde_json::Value) -> Vec<(u64, u64)> {
    ["read", "write", "trim"]
        .iter()
        .map(|d| {
            let o = &v["jobs"][0][d];
            (
                o["total_ios"].as_u64().unwrap(),
                o["io_bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn log_lines_have_fios_offsets_and_priorities() {
    skip_unless_installed!("fio");
    for extra in [
        &["--log_offset=1"][..],
        &["--log_offset=0"],
        &["--log_offset=1", "--log_prio=1", "--prio=3"],
        &["--prioclass=1"],
        &["--log_prio=1", "--prioclass=1", "--prio=2"],
    ] {
        let mut args = vec![
            "--name=j",
            "--ioengine=null",
            "--size=256k",
            "--bs=16k",
            "--rw=write",
            "--write_lat_log=a",
            "--write_iops_log=a",
        ];
        args.extend_from_slice(extra);
        let [(fd, _), (id, _)] = both(&args);
        for log in ["a_lat.1.log", "a_clat.1.log", "a_iops.1.log"] {
            let read = |d: &Path| std::fs::read_to_string(d.join(log)).unwrap();
            let (f, i) = (read(fd.path()), read(id.path()));
            assert_eq!(columns(&i), columns(&f), "{log} with {extra:?}");
            assert_eq!(i.lines().count(), 16, "{log}");
        }
    }
}

#[test]
fn per_job_logs_names_and_thread_numbers_are_fios() {
    skip_unless_installed!("fio");
    let job = "[a]\nioengine=null\nsize=64k\nrw=read\nwrite_bw_log=x\nnumjobs=2\n\
               [b]\nioengine=null\nsize=64k\nrw=write\nwrite_bw_log=y\n\
               [c]\nioengine=null\nsize=64k\nrw=write\nwrite_bw_log=z\nper_job_logs=0\nnumjobs=2\n";
    let [(fd, _), (id, _)] = [true, false].map(|fio| {
        let d = scratch();
        let f = write_file(d.path(), "j.fio", job);
        let v = run_in(fio, d.path(), &[s(&f)]);
        (d, v)
    });
    assert_eq!(names(id.path()), names(fd.path()));
    assert!(
        names(id.path()).contains("y_bw.3.log"),
        "{:?}",
        names(id.path())
    );
    // per_job_logs=0: both clones appended to the one file.
    let lines = |d: &Path| {
        std::fs::read_to_string(d.join("z_bw.log"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(id.path()), lines(fd.path()));
    assert_eq!(lines(id.path()), 32);
}

#[test]
fn compressed_logs_inflate_the_same_under_both_tools() {
    skip_unless_installed!("fio");
    let args = [
        "--name=job",
        "--ioengine=null",
        "--filesize=4M",
        "--bs=4k",
        "--rw=write",
        "--write_bw_log=test",
        "--per_job_logs=0",
        "--log_offset=1",
        "--log_compression=10K",
        "--log_store_compressed=1",
    ];
    let [(fd, _), (id, _)] = both(&args);
    for (who, d) in [("fio", fd.path()), ("iolab", id.path())] {
        let fz = d.join("test_bw.log.fz");
        assert!(fz.exists(), "{who} wrote {:?}", names(d));
        let inflate = format!("--inflate-log={}", fz.display());
        let by_fio = stdout_text(Command::new("fio").arg(&inflate));
        let by_iolab = stdout_text(bin().args(["run", &inflate]));
        assert_eq!(by_iolab, by_fio, "{who}'s log");
        let offsets: Vec<u64> = (by_fio.lines())
            .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
            .collect();
        assert_eq!(offsets, (0..1024).map(|i| i * 4096).collect::<Vec<u64>>());
    }
    // Without log_store_compressed the text is written, as fio.
    let [(fd, _), (id, _)] = both(&args[..9]);
    assert_eq!(names(id.path()), names(fd.path()));
    assert!(names(id.path()).contains("test_bw.log"));
}

#[test]
fn inflating_what_is_not_a_compressed_log_is_refused() {
    let d = scratch();
    let f = write_file(d.path(), "x.log.fz", "0, 1, 0, 4096, 0\n");
    let inflate = format!("--inflate-log={}", f.display());
    fails_with(
        bin().args(["run", &inflate]),
        code::USAGE,
        "not a compressed fio log",
    );
}

#[test]
fn null_lays_out_no_file_and_runs_readonly() {
    skip_unless_installed!("fio");
    let args = ["--name=n", "--ioengine=null", "--size=1M", "--rw=randread"];
    let [(fd, f), (id, i)] = both(&args);
    assert!(names(fd.path()).is_empty() && names(id.path()).is_empty());
    assert_eq!(per_direction(&i), per_direction(&f));
    let d = scratch();
    let mut ro = vec!["--readonly"];
    ro.extend_from_slice(&args);
    run_in(false, d.path(), &ro);
    assert!(names(d.path()).is_empty());
    // Without a size there is nothing to go on.
    fails_with(
        bin()
            .current_dir(d.path())
            .args(["run", "--no-store", "--name=n", "--ioengine=null"]),
        code::USAGE,
        "uses no file: give size=",
    );
}

#[test]
fn trims_count_as_fios_per_direction() {
    skip_unless_installed!("fio");
    for (rw, bs) in [
        ("trim", "4k"),
        ("randtrim", "4k"),
        ("trimwrite", "4k"),
        ("randtrimwrite", "8k"),
        ("trim", "4k,8k,16k"),
    ] {
        let rw = format!("--rw={rw}");
        let bs = format!("--bs={bs}");
        let args = ["--name=t", "--ioengine=null", "--size=256k", &rw, &bs];
        let [(_, f), (_, i)] = both(&args);
        let (fio, iolab) = (per_direction(&f), per_direction(&i));
        assert_eq!(iolab, fio, "{rw} {bs}");
        assert!(iolab[2].0 > 0, "{rw}: no trims");
    }
}

#[test]
fn readonly_refuses_trims() {
    for rw in ["trim", "randtrim", "trimwrite"] {
        let rw = format!("--rw={rw}");
        fails_with(
            bin().args([
                "run",
                "--no-store",
                "--readonly",
                "--name=t",
                "--ioengine=null",
                "--size=1M",
                &rw,
            ]),
            code::REFUSED,
            "--readonly refuses every write",
        );
    }
}

/// Blocks allocated to `f` (512-byte units).
fn blocks(f: &Path) -> u64 {
    std::fs::metadata(f).unwrap().blocks()
}

#[test]
fn falloc_trims_punch_holes_as_fio() {
    skip_unless_installed!("fio");
    for fio in [true, false] {
        let d = scratch();
        let file = d.path().join("f");
        lay_out(&file, "1M");
        let full = blocks(&file);
        let v = run_in(
            fio,
            d.path(),
            &[
                "--name=p",
                "--filename=f",
                "--ioengine=falloc",
                "--size=1M",
                "--bs=64k",
                "--rw=randtrim",
            ],
        );
        assert_eq!(per_direction(&v)[2], (16, 1 << 20), "fio {fio}");
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 1 << 20);
        assert!(
            blocks(&file) < full / 4,
            "fio {fio}: {} of {full} blocks left",
            blocks(&file)
        );
    }
}

#[test]
fn psync_trims_fail_on_a_regular_file_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    let file = d.path().join("f");
    lay_out(&file, "64k");
    let args = ["--name=t", "--filename=f", "--size=64k", "--rw=trim"];
    let fio = Command::new("fio")
        .current_dir(d.path())
        .args(args)
        .output()
        .unwrap();
    let said = [fio.stdout, fio.stderr].concat();
    assert!(String::from_utf8_lossy(&said).contains("Inappropriate ioctl"));
    let (_, err) = fail(
        bin()
            .current_dir(d.path())
            .args(["run", "--no-store"])
            .args(args),
    );
    assert!(
        err.contains("trim at offset 0") && err.contains("Inappropriate ioctl"),
        "{err}"
    );
}

#[test]
fn trims_are_in_the_logs_as_fios() {
    skip_unless_installed!("fio");
    let args = [
        "--name=t",
        "--ioengine=null",
        "--size=64k",
        "--rw=trimwrite",
        "--write_iops_log=a",
        "--log_offset=1",
    ];
    let [(fd, _), (id, _)] = both(&args);
    let read = |d: &Path| std::fs::read_to_string(d.join("a_iops.1.log")).unwrap();
    let (f, i) = (read(fd.path()), read(id.path()));
    assert_eq!(columns(&i), columns(&f));
    assert_eq!(i.lines().filter(|l| l.contains(", 2, 4096, ")).count(), 16);
    // Averaged over intervals, trims have their own lines (ddir 2).
    let d = scratch();
    run_in(
        false,
        d.path(),
        &[
            "--name=t",
            "--ioengine=null",
            "--size=64k",
            "--rw=randtrim",
            "--write_bw_log=b",
            "--log_avg_msec=1",
            "--runtime=50ms",
            "--time_based",
        ],
    );
    let avg = std::fs::read_to_string(d.path().join("b_bw.1.log")).unwrap();
    assert!(avg.lines().count() > 0);
    assert!(
        avg.lines().all(|l| l.split(", ").nth(2) == Some("2")),
        "{avg}"
    );
}
