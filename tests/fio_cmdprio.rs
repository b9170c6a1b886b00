//! fio's per-I/O priorities (`cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_bssplit`) under fio and iolab, seen under strace in
//! each iocb libaio submits: the same priority values, on about the same
//! share of the I/Os, on the same block sizes; other engines refuse them.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Runs `tool` (`fio` or iolab) with `args` under strace in `dir`; per
/// iocb submitted: (size, its `aio_reqprio` as strace prints it, or "").
fn iocbs(tool: &str, dir: &Path, args: &[&str]) -> Vec<(u64, String)> {
    let log = dir.join(format!("{tool}.strace"));
    let mut cmd = Command::new("strace");
    cmd.current_dir(dir)
        .args(["-f", "-qq", "-e", "trace=io_submit", "-o", s(&log)]);
    if tool == "fio" {
        cmd.arg("fio");
    } else {
        cmd.arg(assert_cmd::cargo::cargo_bin("iolab"))
            .args(["run", "--no-store"]);
    }
    succeed(cmd.args(args).arg(format!("--filename={tool}.dat")));
    let text = std::fs::read_to_string(&log).unwrap();
    text.split("{aio_data=")
        .skip(1)
        .map(|cb| {
            let field = |name: &str| {
                cb.split(&format!("{name}="))
                    .nth(1)
                    .map(|v| v.split([',', '}']).next().unwrap().to_string())
            };
            let size: u64 = field("aio_nbytes").unwrap().parse().unwrap();
            // Writes count apart (size + 1): the random map may cut a
            // drawn 1M write to a 64k free run, which cmdprio_bssplit of
            // the writes (1024k/0) leaves without a priority, as fio does.
            let write = field("aio_lio_opcode").is_some_and(|o| o.contains("PWRITE"));
            let size = size + u64::from(write);
            // IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 2): the comma splits it.
            let prio = cb
                .split("aio_reqprio=")
                .nth(1)
                .map_or(String::new(), |v| v.split(')').next().unwrap().to_string());
            (size, prio)
        })
        .collect()
}

/// Count of I/Os per (size, priority).
fn tally(v: &[(u64, String)]) -> BTreeMap<(u64, String), usize> {
    let mut m = BTreeMap::new();
    for k in v {
        *m.entry(k.clone()).or_insert(0) += 1;
    }
    m
}

/// `cmdprio_percentage=25` with class 3 level 2: about a quarter of the
/// reads carry IOPRIO_CLASS_IDLE level 2 under both tools, the rest none.
#[test]
fn cmdprio_percentage_sets_the_share_fio_sets() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let d = scratch();
    let args = [
        "--name=p",
        "--size=1m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=libaio",
        "--iodepth=4",
        "--direct=1",
        "--cmdprio_percentage=25",
        "--cmdprio_class=3",
        "--cmdprio=2",
    ];
    for tool in ["fio", "iolab"] {
        let t = tally(&iocbs(tool, d.path(), &args));
        let with = t.get(&(4096, "IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 2".into()));
        let without = t.get(&(4096, String::new()));
        assert_eq!(t.len(), 2, "{tool}: {t:?}");
        let with = *with.unwrap();
        assert_eq!(with + without.unwrap(), 256, "{tool}: {t:?}");
        assert!(
            (35..95).contains(&with),
            "{tool}: {with} of 256 with a priority"
        );
    }
}

/// `cmdprio_bssplit` with classes per entry: only the 64k reads carry a
/// priority, a quarter realtime level 1 and the rest idle level 2, under
/// both tools; the 1M reads and the writes none.
#[test]
fn cmdprio_bssplit_sets_fios_values_by_size() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let d = scratch();
    let args = [
        "--name=b",
        "--size=8m",
        "--rw=randrw",
        "--ioengine=libaio",
        "--iodepth=4",
        "--direct=1",
        "--rwmixread=90",
        "--bssplit=64k/90:1024k/10,1024k/100",
        "--cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0",
    ];
    let mut kinds = Vec::new();
    for tool in ["fio", "iolab"] {
        let t = tally(&iocbs(tool, d.path(), &args));
        for ((size, prio), n) in &t {
            if *size != 65536 {
                assert_eq!(prio, "", "{tool}: {n} I/Os of {size} with {prio}");
            }
        }
        let count = |p: &str| t.get(&(65536, p.to_string())).copied().unwrap_or(0);
        let (rt, idle) = (
            count("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_RT, 1"),
            count("IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 2"),
        );
        assert_eq!(count(""), 0, "{tool}: every 64k read has a priority");
        assert!(idle > rt && rt > 0, "{tool}: {rt} realtime, {idle} idle");
        kinds.push(
            t.keys()
                .map(|k| k.1.clone())
                .collect::<std::collections::BTreeSet<_>>(),
        );
    }
    assert_eq!(kinds[0], kinds[1], "the same priority values");
}

/// Engines without per-I/O priorities refuse the options, as fio's.
#[test]
fn other_engines_refuse_cmdprio() {
    let (_d, f) = scratch_file();
    let (code, err) = run_err(&job(
        "x",
        &f,
        "--size=64k --ioengine=psync --cmdprio_percentage=10",
    ));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("libaio and io_uring"), "{err}");
}

/// Per (class, level): (I/Os, bins' total).
type PerPrio = BTreeMap<(u64, u64), (u64, u64)>;

/// The `prios` list of fio's JSON of direction `dir`: per (class, level),
/// the I/Os and the bins' total; and the direction's own `key` figures.
fn prios(j: &serde_json::Value, dir: &str, key: &str) -> (PerPrio, u64) {
    let d = &j["jobs"][0][dir];
    let mut m = BTreeMap::new();
    for p in d["prios"]
        .as_array()
        .unwrap_or_else(|| panic!("no prios in {d}"))
    {
        let o = &p[key];
        let bins: u64 = o["bins"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        let id = (
            p["prioclass"].as_u64().unwrap(),
            p["prio"].as_u64().unwrap(),
        );
        m.insert(id, (o["N"].as_u64().unwrap(), bins));
    }
    (m, d[key]["N"].as_u64().unwrap())
}

/// fio's per-priority latencies (`prios` in json+): the same priorities
/// under both tools, each with its share of the I/Os and json+ bins that
/// add up to its count; `lat_ns` with `lat_percentiles`, else `clat_ns`.
#[test]
fn json_lists_latencies_per_priority_as_fio() {
    skip_unless_installed!("fio");
    let d = scratch();
    for (engine, key) in [("libaio", "clat_ns"), ("io_uring", "lat_ns")] {
        let mut args = vec![
            "--name=p".to_string(),
            "--size=1m".into(),
            "--bs=4k".into(),
            "--rw=randrw".into(),
            format!("--ioengine={engine}"),
            "--iodepth=4".into(),
            "--cmdprio_percentage=30".into(),
            "--cmdprio_class=3".into(),
            "--cmdprio=2".into(),
            "--output-format=json+".into(),
        ];
        if key == "lat_ns" {
            args.push("--lat_percentiles=1".into());
        }
        let mut got = Vec::new();
        for tool in ["fio", "iolab"] {
            let f = d.path().join(format!("{tool}.dat"));
            let mut cmd = match tool {
                "fio" => Command::new("fio"),
                _ => {
                    let mut c = Command::new(assert_cmd::cargo::cargo_bin("iolab"));
                    c.args(["run", "--no-store"]);
                    c
                }
            };
            let out = succeed(cmd.args(&args).arg(format!("--filename={}", s(&f))));
            let j: serde_json::Value = serde_json::from_slice(&out).unwrap();
            for dir in ["read", "write"] {
                let (m, total) = prios(&j, dir, key);
                assert_eq!(
                    m.values().map(|v| v.0).sum::<u64>(),
                    total,
                    "{tool} {engine} {dir}: {m:?}"
                );
                assert!(
                    m.values().all(|v| v.0 == v.1),
                    "{tool} {engine} {dir}: bins {m:?}"
                );
                let idle = m.get(&(3, 2)).map_or(0, |v| v.0);
                assert!(
                    total / 10 < idle && idle < total / 2,
                    "{tool} {engine} {dir}: {idle} of {total} idle"
                );
                got.push((dir, m.keys().copied().collect::<Vec<_>>()));
            }
        }
        assert_eq!(got[..2], got[2..], "{engine}: the same priorities");
    }
}
