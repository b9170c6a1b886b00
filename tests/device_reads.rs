//! Reads iolab issued with O_DIRECT vs reads the device completed
//! (/proc/diskstats). Alone in its test binary: diskstats counts the whole
//! device, so no other test may do I/O meanwhile (cargo runs test binaries
//! one after another).

mod common;
use common::*;

#[test]
fn direct_reads_match_the_device() {
    let (d, f) = scratch_file();
    for engine in ["psync", "io_uring"] {
        // The device is shared (the suite loads its next test binaries from
        // it): other reads only ever add, so one of three tries is clean.
        let measure = || {
            run_json(&job(
                "d",
                &f,
                &format!(
                    "--size=32M --rw=randread --bs=4k --direct=1 --ioengine={engine} --iodepth=8"
                ),
            ))
        };
        let clean = |v: &serde_json::Value| {
            let io = &counters(v)["disks"][0]["iostat"];
            io["rareq-sz"]
                .as_f64()
                .is_some_and(|r| (r - 4.0).abs() < 0.5)
        };
        let mut v = measure();
        for _ in 0..2 {
            if clean(&v) {
                break;
            }
            v = measure();
        }
        let disks = counters(&v)["disks"].as_array().unwrap();
        if disks.is_empty() {
            eprintln!(
                "SKIP direct_reads_match_the_device: {} is on no block device (tmpfs?)",
                d.path().display()
            );
            return;
        }
        let issued = v["jobs"][0]["read"]["total_ios"].as_u64().unwrap();
        let device: u64 = disks.iter().map(|x| x["read_ios"].as_u64().unwrap()).sum();
        let sectors: u64 = disks
            .iter()
            .map(|x| x["read_sectors"].as_u64().unwrap())
            .sum();
        eprintln!(
            "{engine}: iolab issued {issued} reads; /proc/diskstats completed {device} reads ({} KiB)",
            sectors / 2
        );
        assert_eq!(issued, 8192);
        let diff = (device as f64 - issued as f64).abs() / issued as f64;
        assert!(diff <= 0.05, "{engine}: device {device} vs issued {issued}");
        // The same figures as iostat columns and as fio's disk_util entry.
        let io = &disks[0]["iostat"];
        for k in [
            "r/s", "rMB/s", "rrqm/s", "r_await", "rareq-sz", "w/s", "wMB/s", "w_await", "wareq-sz",
            "aqu-sz", "%util",
        ] {
            assert!(io[k].is_number(), "iostat column {k}");
        }
        assert!(
            (io["rareq-sz"].as_f64().unwrap() - 4.0).abs() < 0.5,
            "4 KiB requests: {io}"
        );
        let du = &v["disk_util"][0];
        assert_eq!(du["name"], disks[0]["disk"]["name"]);
        for k in [
            "read_ios",
            "write_ios",
            "read_merges",
            "write_merges",
            "read_ticks",
            "write_ticks",
            "in_queue",
            "util",
        ] {
            assert!(du[k].is_number(), "disk_util.{k}");
        }
        assert_eq!(du["read_ios"].as_u64().unwrap(), device);
    }
}
