//! `iolab calibrate`: this machine's ceilings, measured with iolab's own
//! runs on a file it lays out in a directory of its own under `--dir`
//! (removed after): the device's random-read latency and IOPS at depth 1
//! and 32 and its sequential bandwidth (O_DIRECT), the page cache's copy
//! bandwidth (cached 1 MiB reads), one cached 4 KiB read through each
//! engine and one I/O through the null engine. About 12 seconds.

use super::ceilings::Ceilings;
use crate::runner::{self, NoObserver, Progress, RunOptions, RunResult, StopFlag, Totals};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The file measured: large enough that random reads rarely repeat.
const FILE_SIZE: &str = "256m";

/// The engines whose cost per call is measured.
pub const ENGINES: &[&str] = &["psync", "pvsync2", "io_uring", "libaio", "mmap"];

/// Measures the ceilings of the device under `dir`; `stop` ends it early
/// (an error), `progress` hears each step. The scratch directory is
/// returned with them for the environment to be captured on it; the
/// caller removes it with [`remove_scratch`].
pub fn measure(
    dir: &Path,
    stop: &StopFlag,
    progress: &mut dyn Progress,
) -> crate::Result<(Ceilings, PathBuf)> {
    let start = Instant::now();
    let scratch = dir.join(format!(".iolab-calibrate-{}", std::process::id()));
    std::fs::create_dir(&scratch)
        .map_err(|e| crate::Error::io(format!("calibrate: making {}", scratch.display()), e))?;
    let file = scratch.join("calibrate.dat");
    let out = steps(&file, stop, progress).map(|mut c| {
        c.dir = dir.to_path_buf();
        c.took_s = start.elapsed().as_secs_f64();
        c
    });
    match out {
        Ok(c) => Ok((c, scratch)),
        Err(e) => {
            remove_scratch(&scratch);
            Err(e)
        }
    }
}

/// Removes the scratch directory [`measure`] made (only what it made).
pub fn remove_scratch(scratch: &Path) {
    let _ = std::fs::remove_file(scratch.join("calibrate.dat"));
    let _ = std::fs::remove_dir(scratch);
}

fn steps(file: &Path, stop: &StopFlag, progress: &mut dyn Progress) -> crate::Result<Ceilings> {
    let f = file.display().to_string();
    // One time-based job on the file: the totals of its one repetition.
    let mut step = |what: &str, name: &str, rest: &[&str]| -> crate::Result<Totals> {
        let mut args = vec![
            format!("--name={name}"),
            format!("--filename={f}"),
            format!("--size={FILE_SIZE}"),
            "--time_based".into(),
        ];
        args.extend(rest.iter().map(|s| s.to_string()));
        Ok(run(what, &args, stop, progress)?.rep_totals(0))
    };
    let direct = ["--direct=1", "--runtime=2"];
    let t = step(
        "random 4 KiB O_DIRECT reads at depth 1",
        "rand-d1",
        &[
            &["--rw=randread", "--bs=4k", "--ioengine=psync"][..],
            &direct,
        ]
        .concat(),
    )?;
    let (rand_iops_d1, rand_lat_d1_us) = (t.iops(&t.read), t.read.lat.mean() / 1e3);
    let t = step(
        "random 4 KiB O_DIRECT reads at depth 32",
        "rand-d32",
        &[
            &[
                "--rw=randread",
                "--bs=4k",
                "--ioengine=io_uring",
                "--iodepth=32",
            ][..],
            &direct,
        ]
        .concat(),
    )?;
    let rand_iops_d32 = t.iops(&t.read);
    let t = step(
        "sequential 1 MiB O_DIRECT reads at depth 8",
        "seq",
        &[
            &["--rw=read", "--bs=1m", "--ioengine=io_uring", "--iodepth=8"][..],
            &direct,
        ]
        .concat(),
    )?;
    let seq_bw = t.bw_bytes(&t.read);
    let t = step(
        "cached 1 MiB reads (page-cache copy)",
        "copy",
        &[
            "--rw=read",
            "--bs=1m",
            "--cache=warm",
            "--ioengine=psync",
            "--runtime=1",
        ],
    )?;
    let copy_bw = t.bw_bytes(&t.read);
    let mut cached_read_us = std::collections::BTreeMap::new();
    for engine in ENGINES {
        let e = format!("--ioengine={engine}");
        let t = step(
            &format!("cached 4 KiB reads through {engine}"),
            &format!("call-{engine}"),
            &[
                "--rw=randread",
                "--bs=4k",
                "--cache=warm",
                &e,
                "--runtime=500ms",
            ],
        )?;
        cached_read_us.insert(engine.to_string(), t.read.lat.mean() / 1e3);
    }
    let null = [
        "--name=null",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--bs=4k",
        "--time_based",
        "--runtime=500ms",
    ]
    .map(String::from);
    let t = run(
        "the null engine (iolab's own cost per I/O)",
        &null,
        stop,
        progress,
    )?
    .rep_totals(0);
    Ok(Ceilings {
        rand_lat_d1_us,
        rand_iops_d1,
        rand_iops_d32,
        seq_bw,
        copy_bw,
        cached_read_us,
        null_us: t.read.lat.mean() / 1e3,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        ..Ceilings::default()
    })
}

fn run(
    what: &str,
    args: &[String],
    stop: &StopFlag,
    progress: &mut dyn Progress,
) -> crate::Result<RunResult> {
    if stop.is_set() {
        return Err(crate::Error::interrupted(stop));
    }
    progress.step(&format!("calibrate: {what}"));
    let jobs = crate::job::jobs_from_args(args)?;
    let r = runner::run_with(
        jobs,
        &RunOptions::default(),
        stop,
        &mut NoObserver,
        progress,
    )?
    .complete(stop)?;
    Ok(r)
}
