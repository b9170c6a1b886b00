//! Where the I/O buffers live, under fio and iolab: the same job puts its
//! buffers at the same place relative to a page (seen with strace, in the
//! buffer address of each pread/pwrite), since the place changes what a
//! buffered job measures (docs/fio-compat.md, "Memory").

mod common;
use common::*;
use std::process::Command;

/// The distinct buffer addresses modulo 4096 of the preads and pwrites
/// `tool` makes for `args` on a fresh 1 MiB file, and how far apart the
/// buffers are (the smallest gap between two distinct addresses).
fn placement(tool: &str, args: &[&str]) -> (Vec<u64>, Option<u64>) {
    let d = scratch();
    let log = d.path().join("strace.log");
    let file = d.path().join("f");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let mut cmd = Command::new("strace");
    cmd.current_dir(d.path())
        .args(["-f", "-qq", "-e", "trace=pread64,pwrite64,io_submit"])
        .args(["-e", "raw=pread64,pwrite64", "-o"])
        .arg(&log);
    if tool == "fio" {
        cmd.arg("fio");
    } else {
        cmd.arg(env!("CARGO_BIN_EXE_iolab"))
            .args(["run", "--no-store", "--allow-overwrite"]);
    }
    cmd.arg("--name=m")
        .arg(format!("--filename={}", file.display()))
        .args(["--size=1m", "--output-format=json"])
        .args(args);
    succeed(&mut cmd);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut addrs: Vec<u64> = text
        .lines()
        .filter_map(|l| {
            let hex = |t: &str| -> Option<u64> {
                let h: String = t.chars().take_while(char::is_ascii_hexdigit).collect();
                u64::from_str_radix(&h, 16).ok()
            };
            if l.contains("io_submit(") {
                return hex(l.split("aio_buf=0x").nth(1)?);
            }
            // Raw arguments: `pread64(0x6, 0x7f..., 0x40000, 0)`; the
            // job's calls, not the loader's small reads of libraries.
            let call = l
                .split_once("pread64(")
                .or_else(|| l.split_once("pwrite64("))?;
            let args: Vec<&str> = call.1.split(", ").collect();
            let len = hex(args.get(2)?.strip_prefix("0x")?)?;
            (len >= 64 << 10).then(|| hex(args[1].strip_prefix("0x")?))?
        })
        .collect();
    addrs.sort_unstable();
    addrs.dedup();
    assert!(!addrs.is_empty(), "{tool} made no I/O calls:\n{text}");
    let gap = addrs.windows(2).map(|w| w[1] - w[0]).min();
    let mut offsets: Vec<u64> = addrs.iter().map(|a| a % 4096).collect();
    offsets.sort_unstable();
    offsets.dedup();
    (offsets, gap)
}

#[test]
fn buffers_sit_where_fio_puts_them() {
    skip_unless_installed!("fio");
    skip_unless_installed!("strace");
    let cases: &[&[&str]] = &[
        &["--rw=read", "--bs=256k", "--direct=1"],
        &["--rw=read", "--bs=256k", "--iomem_align=512"],
        &["--rw=read", "--bs=128k", "--mem_align=64", "--iomem=mmap"],
        &["--rw=read", "--bs=256k", "--iomem=mmap"],
        &["--rw=read", "--bs=256k", "--iomem=shm"],
        &["--rw=write", "--bs=256k", "--iomem=mmapshared"],
        // Several buffers end to end, a block apart.
        &[
            "--rw=randread",
            "--bs=64k",
            "--ioengine=libaio",
            "--iodepth=4",
            "--iomem_align=256",
        ],
    ];
    for args in cases {
        let fio = placement("fio", args);
        let iolab = placement("iolab", args);
        assert_eq!(
            iolab, fio,
            "buffer places for {args:?}: (offsets in a page, gap)"
        );
    }
    // Buffered with malloc'd memory, the case the placement is about: fio's
    // buffers are where glibc's malloc puts them, 16 bytes past a page for
    // a large block, elsewhere on the heap for a small one (its history
    // decides), never page-aligned; iolab's always 16 bytes past a page.
    for args in [
        &["--rw=read", "--bs=256k"][..],
        &["--rw=read", "--bs=64k", "--ioengine=libaio", "--iodepth=16"],
    ] {
        let (fio, _) = placement("fio", args);
        assert!(
            fio.iter().all(|o| o % 16 == 0 && o % 4096 != 0),
            "fio {args:?}: {fio:?}"
        );
        assert_eq!(placement("iolab", args).0, [16], "{args:?}");
    }
}

#[test]
fn unsupported_memory_is_refused_by_name() {
    for (v, want) in [
        ("mmaphuge", "huge pages"),
        ("mmap:/tmp/x", "backed by a file"),
        ("cudamalloc", "GPU memory"),
        ("nonsense", "is not a memory type"),
    ] {
        let out = iolab()
            .args(["run", "--no-store", "--parse-only", "--name=m", "--size=1m"])
            .arg(format!("--iomem={v}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "iomem={v}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "iomem={v}: {err}");
    }
}
