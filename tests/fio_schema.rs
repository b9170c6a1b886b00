//! iolab's JSON has fio's keys: compared with real fio's output of the same
//! command line.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn assert_superset(ours: &Value, fio: &Value, what: &str) {
    let missing: Vec<_> = keys(fio).difference(&keys(ours)).cloned().collect();
    assert!(
        missing.is_empty(),
        "{what}: keys fio has and iolab lacks: {missing:?}"
    );
}

#[test]
fn json_keys_match_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    let base = "--size=4M --rw=randread --bs=4k";
    compare_keys(&job("t", &f, base));
    compare_keys(&job(
        "t",
        &f,
        &format!("{base} --ioengine=io_uring --iodepth=8 --direct=1"),
    ));
}

/// Runs iolab and fio with `args` and checks that iolab's JSON has fio's keys.
fn compare_keys(args: &[String]) {
    let ours = run_json(args);
    let fio = fio_json(args);
    let (od, fd) = (&ours["disk_util"], &fio["disk_util"]);
    assert!(od.is_array(), "disk_util is a list");
    if let (Some(o), Some(f)) = (od.get(0), fd.get(0)) {
        assert_eq!(keys(o), keys(f), "disk_util entry");
        assert_eq!(o["name"], f["name"], "same disk");
    }
    assert!(ours["jobs"][0]["iolab"]["counters"]["process_io"].is_object());
    for k in ["fio version", "timestamp", "time", "jobs"] {
        assert!(ours.get(k).is_some(), "top-level {k}");
    }
    let (oj, fj) = (&ours["jobs"][0], &fio["jobs"][0]);
    assert_superset(oj, fj, "jobs[0]");
    for dir in ["read", "write"] {
        assert_superset(&oj[dir], &fj[dir], dir);
        for lat in ["clat_ns", "lat_ns", "slat_ns"] {
            let (mut o, mut fi) = (oj[dir][lat].clone(), fj[dir][lat].clone());
            // fio omits percentiles/bins when there were no I/Os.
            o.as_object_mut().unwrap().remove("percentile");
            fi.as_object_mut().unwrap().remove("percentile");
            assert_superset(&o, &fi, lat);
        }
    }
    assert_eq!(
        keys(&oj["read"]["clat_ns"]["percentile"]),
        keys(&fj["read"]["clat_ns"]["percentile"])
    );
    assert_eq!(oj["read"]["total_ios"], fj["read"]["total_ios"]);
    assert_eq!(oj["read"]["io_bytes"], fj["read"]["io_bytes"]);
    assert_eq!(keys(&oj["job options"]), keys(&fj["job options"]));
    assert_superset(&oj["sync"], &fj["sync"], "sync");
    for k in ["latency_ns", "latency_us", "latency_ms", "iodepth_level"] {
        assert_eq!(keys(&oj[k]), keys(&fj[k]), "{k}");
    }
    // Queue depth really reached: psync all at 1; iodepth=8 mostly at 4 or more
    // (iolab reaps every completion available at once, so refills start lower
    // than fio's one-at-a-time).
    let lvl = |k: &str| oj["iodepth_level"][k].as_f64().unwrap();
    if args.iter().any(|a| a == "--iodepth=8") {
        assert!(lvl("4") + lvl("8") > 50.0, "{}", oj["iodepth_level"]);
    } else {
        assert_eq!(lvl("1"), 100.0);
    }
    assert!(oj["iolab"].is_object());
}

#[test]
fn sizes_agree_with_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    // fio's kb_base=1024 quirk: KiB is 1000; whole blocks only.
    for (size, bs) in [
        ("4KiB", "1k"),
        ("4k", "1k"),
        ("1M", "4k"),
        ("3500000B", "4k"),
        ("1MiB", "1000"),
    ] {
        let args = job("t", &f, &format!("--size={size} --rw=read --bs={bs}"));
        let ours = run_json(&args);
        let fio = fio_json(&args);
        assert_eq!(
            ours["jobs"][0]["read"]["io_bytes"], fio["jobs"][0]["read"]["io_bytes"],
            "size={size} bs={bs}"
        );
        let _ = std::fs::remove_file(&f);
    }
}

/// fio's aliases name the same options: `readwrite` is `rw`, `fileoffset`
/// is `offset`, `blocksize` is `bs`, `timeout` is `runtime`. The same job
/// spelled with them does the same I/O and makes the same file under both.
#[test]
fn option_aliases_agree_with_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    let opts = "--readwrite=randwrite --fileoffset=64k --size=128k --blocksize=8k --timeout=30s";
    let args = job("t", &f, opts);
    let ours = run_json(&args);
    let ours_len = std::fs::metadata(&f).unwrap().len();
    std::fs::remove_file(&f).unwrap();
    let fio = fio_json(&args);
    let fio_len = std::fs::metadata(&f).unwrap().len();
    for key in ["total_ios", "io_bytes"] {
        assert_eq!(
            ours["jobs"][0]["write"][key], fio["jobs"][0]["write"][key],
            "{key}"
        );
    }
    assert_eq!(ours["jobs"][0]["write"]["total_ios"], 16);
    assert_eq!(ours_len, fio_len, "file size");
    assert_eq!(ours_len, 192 << 10);
}

/// fio's command line takes long options with one dash (getopt_long_only)
/// and reads a bare `Mi`/`Ki` as powers of 1024: the same line makes the
/// same file and does the same I/O under both.
#[test]
fn single_dash_options_and_bare_iec_suffixes_agree_with_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    let args: Vec<String> = [
        "-name=t".to_string(),
        format!("-filename={}", s(&f)),
        "-size=2Mi".into(),
        "-bs".into(),
        "64Ki".into(),
        "-rw=write".into(),
    ]
    .into();
    let ours = run_json(&args);
    let ours_len = std::fs::metadata(&f).unwrap().len();
    std::fs::remove_file(&f).unwrap();
    let fio = fio_json(&args);
    let fio_len = std::fs::metadata(&f).unwrap().len();
    assert_eq!(
        ours["jobs"][0]["write"]["total_ios"],
        fio["jobs"][0]["write"]["total_ios"]
    );
    assert_eq!(ours["jobs"][0]["write"]["total_ios"], 32);
    assert_eq!((ours_len, fio_len), (2 << 20, 2 << 20));
    let (code, err) = run_err(&["-nosuch=1".to_string()]);
    assert_eq!(code, code::USAGE);
    assert!(err.contains("unknown flag '-nosuch=1'"), "{err}");
}

/// fio's `stonewall`: a job with it starts once the jobs before it ended.
/// Two 0.6 s time_based jobs take 1.2 s or more under both tools (a lower
/// bound: load only adds), each job does its own I/O, and iolab sets the
/// second job's cache state as it starts (cold: the pages the first job
/// wrote are gone), as fio invalidates a file when its job opens it.
#[test]
fn stonewall_runs_jobs_one_after_the_other_as_fio() {
    skip_unless_installed!("fio");
    let (d, f) = scratch_file();
    let text = format!(
        "[global]\nfilename={}\nsize=1m\ntime_based\nruntime=600ms\n\
         [w]\nrw=write\n[r]\nstonewall\nrw=read\n",
        s(&f)
    );
    let jobfile = write_file(d.path(), "sw.fio", &text);
    let timed = |run: &dyn Fn() -> Value| {
        let t0 = std::time::Instant::now();
        let v = run();
        (v, t0.elapsed())
    };
    let (ours, ours_wall) = timed(&|| run_json(&[s(&jobfile)]));
    let (fio, fio_wall) = timed(&|| fio_json(&[s(&jobfile)]));
    for (v, wall, tool) in [(&ours, ours_wall, "iolab"), (&fio, fio_wall, "fio")] {
        assert!(
            wall.as_millis() >= 1200,
            "{tool}: {wall:?}, one job after the other"
        );
        assert!(
            v["jobs"][0]["write"]["total_ios"].as_u64().unwrap() > 0,
            "{tool}"
        );
        assert!(
            v["jobs"][1]["read"]["total_ios"].as_u64().unwrap() > 0,
            "{tool}"
        );
        assert_eq!(v["jobs"][1]["write"]["total_ios"], 0, "{tool}");
    }
    let r0 = &ours["jobs"][1]["iolab"]["repetitions"][0];
    assert_eq!(
        r0["cache_before"][0]["state"]["cached"], 0,
        "evicted as r starts"
    );
    // Without stonewall both run at once: the run's own count of clones
    // running says so (2 in some sample, against never more than 1 with
    // stonewall), where a wall-clock comparison of the two runs would
    // measure the machine's load as well. 2 s jobs: samples come twice a
    // second.
    let most_running = |text: &str| {
        let f = write_file(d.path(), "most.fio", &text.replace("600ms", "2s"));
        let jobs = iolab::job::jobs_from_args(&[s(&f).to_string()]).unwrap();
        let mut ticks = Ticks::default();
        let stop = iolab::runner::StopFlag::default();
        let opts = iolab::runner::RunOptions::default();
        let mut obs = iolab::runner::NoObserver;
        iolab::runner::run_with(jobs, &opts, &stop, &mut obs, &mut ticks).unwrap();
        assert!(!ticks.running.is_empty(), "no live sample in 2 s");
        ticks.running.into_iter().max().unwrap()
    };
    assert_eq!(most_running(&text), 1, "stonewall: one job at a time");
    assert_eq!(most_running(&text.replace("stonewall\n", "")), 2);
}

/// The clones running at each live sample of a run.
#[derive(Default)]
struct Ticks {
    running: Vec<usize>,
}

impl iolab::runner::Progress for Ticks {
    fn step(&mut self, _what: &str) {}
    fn live(&self) -> bool {
        true
    }
    fn tick(&mut self, live: &iolab::runner::Live) {
        self.running.push(live.running);
    }
}

/// fio's `description` is carried, not parsed: `desc` and `job options`
/// in the JSON hold it under both tools (and `desc` is absent without it).
#[test]
fn description_is_desc_in_the_json_as_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    let args = job("t", &f, "--size=64k --description=cold:scan,x=1");
    let ours = run_json(&args);
    let fio = fio_json(&args);
    for key in ["desc", "job options"] {
        assert_eq!(ours["jobs"][0][key]["description"].is_null(), key == "desc");
    }
    assert_eq!(ours["jobs"][0]["desc"], fio["jobs"][0]["desc"]);
    assert_eq!(ours["jobs"][0]["desc"], "cold:scan,x=1");
    assert_eq!(
        ours["jobs"][0]["job options"]["description"],
        fio["jobs"][0]["job options"]["description"]
    );
    let plain = run_json(&job("t", &f, "--size=64k"));
    assert!(plain["jobs"][0].get("desc").is_none());
}

/// fio's depth figures, which iolab reported as constants before: where
/// fio's distribution is certain (one-at-a-time engines, full batches) the
/// two match exactly. With one-I/O submits both submit one I/O per call;
/// their reaps differ for real and the figures show it: iolab refills every
/// free slot before it reaps (so most reaps return 5-8 completions at
/// iodepth 8), fio reaps after each submit (mostly 1-4).
#[test]
fn depth_figures_match_fio() {
    skip_unless_installed!("fio");
    let (_dir, f) = scratch_file();
    lay_out(&f, "4M");
    let base = "--size=4M --rw=randread --bs=4k --invalidate=0";
    let exact = [
        format!("{base} --ioengine=psync"),
        format!("{base} --ioengine=psync --iodepth=4"),
        format!(
            "{base} --ioengine=io_uring --iodepth=8 --direct=1 --iodepth_batch_submit=8 --iodepth_batch_complete_min=8"
        ),
    ];
    for opts in &exact {
        let args = job("d", &f, opts);
        let (ours, fio) = (run_json(&args), fio_json(&args));
        let (o, t) = (&ours["jobs"][0], &fio["jobs"][0]);
        for k in ["iodepth_submit", "iodepth_complete", "latency_depth"] {
            assert_eq!(o[k], t[k], "{opts}: {k}");
        }
    }
    let args = job(
        "d",
        &f,
        &format!("{base} --ioengine=io_uring --iodepth=8 --direct=1"),
    );
    let (ours, fio) = (run_json(&args), fio_json(&args));
    let (o, t) = (&ours["jobs"][0], &fio["jobs"][0]);
    assert_eq!(
        o["iodepth_submit"], t["iodepth_submit"],
        "one I/O per submit"
    );
    assert_eq!(o["latency_depth"], 8);
    // Reaping at least 4 of 8 in flight: every reap returns 4 to 8
    // completions, in fio's "4" and "8" buckets, for both tools.
    let args = job(
        "d",
        &f,
        &format!(
            "{base} --ioengine=io_uring --iodepth=8 --direct=1 --iodepth_batch_complete_min=4"
        ),
    );
    for (who, v) in [("iolab", run_json(&args)), ("fio", fio_json(&args))] {
        let c = &v["jobs"][0]["iodepth_complete"];
        let four_to_eight = c["4"].as_f64().unwrap() + c["8"].as_f64().unwrap();
        assert!((four_to_eight - 100.0).abs() < 1e-6, "{who}: {c}");
    }
}

/// fio's `plat_val_to_idx` then `plat_idx_to_val`, written from fio's
/// stat.c independently of iolab's: a json+ bin value is a fixed point.
fn on_fio_grid(v: u64) -> bool {
    let msb = 63 - v.max(1).leading_zeros();
    let idx = if msb <= 6 {
        v
    } else {
        let eb = msb - 6;
        (u64::from(eb + 1) << 6) + ((v >> eb) & 63)
    };
    let back = if idx < 128 {
        idx
    } else {
        let eb = (idx >> 6) - 1;
        (1u64 << (eb + 6)) + (((idx % 64) as f64 + 0.5) * (1u64 << eb) as f64) as u64
    };
    back == v
}

/// json+ bins are on fio's latency grid in both tools (fio's json+ tools,
/// like fio_jsonplus_clat2csv, read them as bin values), and hold every I/O.
#[test]
fn json_plus_bins_are_on_fios_grid() {
    skip_unless_installed!("fio");
    let (_d, f) = scratch_file();
    let args = job("g", &f, "--size=1M --rw=randread --bs=4k");
    let fio = {
        let out = succeed(
            std::process::Command::new("fio")
                .args(&args)
                .arg("--output-format=json+"),
        );
        let start = out.iter().position(|&b| b == b'{').unwrap_or(0);
        parse_json(&out[start..])
    };
    let ours = stdout_json(
        bin()
            .args(["run", "--no-store"])
            .args(&args)
            .arg("--output-format=json+"),
    );
    for (tool, v) in [("fio", &fio), ("iolab", &ours)] {
        let bins = v["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
        let n: u64 = bins.values().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(n, 256, "{tool}");
        for k in bins.keys() {
            assert!(
                on_fio_grid(k.parse().unwrap()),
                "{tool}: bin {k} is not on fio's grid"
            );
        }
    }
}
