//! fio's own example job files (fio's `examples/`, those for Linux
//! local-file engines), copied into tests/fio_examples/ with only paths,
//! sizes, file counts and times scaled down, each run under fio and under
//! `iolab run`. The table below records what iolab does with each today; a
//! change either way fails the test, so an example that starts running is
//! promoted here (a ratchet), and one that stops running is a regression.
//! docs/fio-compat.md lists the same statuses.

mod common;
#[path = "fio_compat/diff.rs"]
mod diff;

use diff::{Outcome, Tool};
use std::path::{Path, PathBuf};

/// What iolab does with an example.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Runs, and agrees with fio on everything compared.
    Runs,
    /// Runs, but differs from fio: a part of the first difference, and why
    /// (for docs/fio-compat.md).
    Differs(&'static str, &'static str),
    /// Refused (or failed): a part of iolab's first stderr line.
    Refused(&'static str),
}
use Status::*;

/// Every example copied into tests/fio_examples/, with iolab's status.
const EXAMPLES: &[(&str, Status)] = &[
    ("1mbs_clients", Runs),
    ("aio-read", Runs),
    ("backwards-read", Runs),
    ("basic-verify", Runs),
    ("butterfly", Runs),
    (
        "cmdprio-bssplit",
        Differs(
            "io_bytes in all: fio ",
            "the bytes done in all: with `bssplit` over `randrw` each tool draws the \
             sizes (64k or 1M) with its own random numbers, and a pass ends once its \
             bytes are issued, the last I/O whole, so the totals differ by less than \
             a largest block (1M) a pass",
        ),
    ),
    ("cmdprio-percentage", Runs),
    ("cpuio", Runs),
    ("dedupe-global", Runs),
    ("disk-zone-profile", Runs),
    ("exec", Runs),
    ("exitwhat", Runs),
    ("falloc", Runs),
    ("filecreate-ioengine", Runs),
    ("filedelete-ioengine", Runs),
    ("filestat-ioengine", Runs),
    ("fio-rand-RW", Runs),
    ("fio-rand-read", Runs),
    ("fio-rand-write", Runs),
    ("fio-seq-RW", Runs),
    ("fio-seq-read", Runs),
    ("fio-seq-write", Runs),
    ("flow", Runs),
    ("fsx", Runs),
    ("ftruncate", Runs),
    ("iometer-file-access-server", Runs),
    ("jesd219", Runs),
    ("latency-profile", Runs),
    ("null", Runs),
    ("rand-zones", Runs),
    ("ssd-steadystate", Runs),
    ("ssd-test", Runs),
    ("steadystate", Runs),
    ("surface-scan", Runs),
    ("tiobench-example", Runs),
    ("waitfor", Runs),
    ("zipf", Runs),
];

/// fio's examples not copied, and why (with EXAMPLES: all 107 of fio's).
const EXCLUDED: &[(&str, &str)] = &[
    (
        "atomic-verify",
        "needs a fio newer than 3.33 (verify_write_sequence) and RWF_ATOMIC hardware",
    ),
    (
        "cpp_null",
        "cpp_null is an engine built from fio's source tree, not in fio's packages",
    ),
    (
        "cross-stripe-verify",
        "written for a ~3.7 TB NVMe drive; on a scaled file its 30 jobs overlap and fio 3.33's own verify fails (bad header numberio)",
    ),
    ("dev-dax", "device DAX hardware"),
    ("dfs", "DAOS file system (network)"),
    (
        "dircreate-ioengine",
        "engine dircreate is newer than fio 3.33 (the fio CI installs)",
    ),
    (
        "dirdelete-ioengine",
        "engine dirdelete is newer than fio 3.33",
    ),
    ("dirstat-ioengine", "engine dirstat is newer than fio 3.33"),
    (
        "e4defrag",
        "EXT4_IOC_MOVE_EXT needs ext4, and its libaio jobs verify a file other jobs write (fio 3.33 fails them too): tests/fio_engines_ext.rs runs it on an ext4 loop device, whole and each e4defrag job alone",
    ),
    (
        "e4defrag2",
        "EXT4_IOC_MOVE_EXT needs ext4, and its libaio jobs verify a file other jobs write (fio 3.33 fails them too): tests/fio_engines_ext.rs runs it on an ext4 loop device, whole and each e4defrag job alone",
    ),
    (
        "enospc-pressure",
        "rw=randtrim on a regular file: fio 3.33 fails (BLKDISCARD, ENOTTY); needs a block device",
    ),
    (
        "example_latency_steadystate",
        "steadystate=lat is newer than fio 3.33",
    ),
    (
        "fixed-rate-submission",
        "io_submit_mode=offload: fio 3.33 hangs (job stuck, then a double free)",
    ),
    ("gfapi", "GlusterFS (network)"),
    ("gpudirect-rdmaio-client", "RDMA and GPU"),
    ("gpudirect-rdmaio-server", "RDMA and GPU"),
    ("http-s3", "HTTP object store (network)"),
    ("http-s3-crypto", "HTTP object store (network)"),
    ("http-s3-storage-class", "HTTP object store (network)"),
    ("http-swift", "HTTP object store (network)"),
    ("http-webdav", "HTTP object store (network)"),
    ("ime", "DDN IME (special hardware)"),
    ("libblkio-io_uring", "libblkio, not in fio's packages"),
    ("libblkio-virtio-blk-vfio-pci", "libblkio and a VFIO device"),
    ("libcufile-cufile", "GPU (CUDA cuFile)"),
    ("libcufile-posix", "GPU (CUDA cuFile)"),
    ("libhdfs", "HDFS (network)"),
    (
        "libhipfile-hipfile",
        "GPU (ROCm hipFile), newer than fio 3.33",
    ),
    (
        "libhipfile-posix",
        "GPU (ROCm hipFile), newer than fio 3.33",
    ),
    ("libiscsi", "iSCSI (network)"),
    ("libpmem", "persistent memory"),
    ("libzbc-rand-write", "zoned block device (libzbc)"),
    ("libzbc-seq-read", "zoned block device (libzbc)"),
    ("mtd", "MTD flash device"),
    ("nbd", "NBD (network)"),
    ("netio", "network engine"),
    ("netio_multicast", "network engine"),
    ("netio_vsock", "network engine"),
    ("netio_vsock_receiver", "network engine"),
    ("netio_vsock_sender", "network engine"),
    ("nfs", "NFS client engine (network)"),
    (
        "numa",
        "needs two NUMA nodes (numa_mem_policy=interleave:0-1)",
    ),
    ("page_fault", "engine page_fault is newer than fio 3.33"),
    (
        "poisson-rate-submission",
        "io_submit_mode=offload: fio 3.33 hangs (job stuck, then a double free)",
    ),
    ("rados", "Ceph RADOS (network)"),
    ("rbd", "Ceph RBD (network)"),
    ("rdmaio-client", "RDMA"),
    ("rdmaio-server", "RDMA"),
    (
        "sequence-distribution",
        "random_distribution=sequence is newer than fio 3.33",
    ),
    ("sg_verify", "SCSI generic device"),
    ("sg_verify-fail", "SCSI generic device"),
    ("sg_write_same_ndob", "SCSI generic device"),
    ("sprandom", "sprandom is newer than fio 3.33"),
    ("uring-cmd-bsg", "io_uring passthrough to a SCSI bsg device"),
    ("uring-cmd-fdp", "io_uring passthrough to an NVMe device"),
    ("uring-cmd-ng", "io_uring passthrough to an NVMe device"),
    ("uring-cmd-pi-ext", "io_uring passthrough to an NVMe device"),
    ("uring-cmd-pi-sb", "io_uring passthrough to an NVMe device"),
    (
        "uring-cmd-trim-multi-range",
        "io_uring passthrough to an NVMe device",
    ),
    (
        "uring-cmd-write-mode",
        "io_uring passthrough to an NVMe device",
    ),
    (
        "uring-cmd-zoned",
        "io_uring passthrough to a zoned NVMe device",
    ),
    (
        "uring-cmd-zoned-append",
        "io_uring passthrough to a zoned NVMe device",
    ),
    ("xnvme-compare", "xNVMe, not in fio's packages"),
    ("xnvme-fdp", "xNVMe, not in fio's packages"),
    ("xnvme-pi", "xNVMe, not in fio's packages"),
    ("xnvme-zoned", "xNVMe, not in fio's packages"),
    ("zbd-rand-write", "zoned block device"),
    ("zbd-rand-write-trim-gc", "zoned block device"),
    ("zbd-rand-write-zone-reset-gc", "zoned block device"),
    ("zbd-seq-read", "zoned block device"),
];

/// Examples that fill their file system (`fill_device=1`), with the size of
/// the tmpfs mounted for each tool's run of them (as root; skipped, saying
/// why, otherwise). The job file copied in takes one page of it in both.
const ON_TMPFS: &[(&str, &str)] = &[("surface-scan", "32m")];

/// Runs example `name` under `tool`: in a fresh directory, or on a tmpfs
/// of its own for those of [`ON_TMPFS`] (`None` when it cannot be had).
fn run_example(tool: Tool, name: &str, job: &Path) -> Option<Outcome> {
    match ON_TMPFS.iter().find(|e| e.0 == name) {
        None => Some(diff::run(tool, job)),
        Some((_, size)) => {
            let fs = common::tmpfs::Tmpfs::mount(name, size)?;
            Some(diff::run_in(tool, job, fs.path()))
        }
    }
}

/// The number of job files in fio's examples/ (fio f5344384f7c7).
const FIO_EXAMPLES: usize = 107;

/// Worker threads running examples side by side.
const THREADS: usize = 4;

fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fio_examples")
}

/// iolab's status on one example, from both tools' runs.
fn status_of(name: &str, fio: &Outcome, iolab: &Outcome, text: &str) -> (Status, String) {
    assert!(
        fio.ok(),
        "fio itself fails {name}.fio ({}): fix the scaling or exclude it",
        fio.first_error()
    );
    if !iolab.ok() {
        return (Refused(""), iolab.first_error());
    }
    let diffs = diff::differences(fio, iolab, &diff::checks(text));
    if diffs.is_empty() {
        (Runs, String::new())
    } else {
        (Differs("", ""), diffs.join("; "))
    }
}

/// True when the measured status is the expected one.
fn matches(expected: Status, got: Status, detail: &str) -> bool {
    match (expected, got) {
        (Runs, Runs) => true,
        (Refused(want), Refused(_)) | (Differs(want, _), Differs(..)) => detail.contains(want),
        _ => false,
    }
}

#[test]
fn fio_examples_run_as_recorded() {
    skip_unless_installed!("fio");
    let results = diff::in_parallel(EXAMPLES, THREADS, |&(name, expected)| {
        let job = example_dir().join(format!("{name}.fio"));
        let text = std::fs::read_to_string(&job).unwrap();
        let (Some(fio), Some(iolab)) = (
            run_example(Tool::Fio, name, &job),
            run_example(Tool::Iolab, name, &job),
        ) else {
            return (name, expected, expected, "skipped".to_string());
        };
        let (got, detail) = status_of(name, &fio, &iolab, &text);
        (name, expected, got, detail)
    });
    let runs = results.iter().filter(|r| r.2 == Runs).count();
    println!("{runs} of {} fio examples run", results.len());
    let wrong: Vec<String> = results
        .iter()
        .filter(|(_, e, g, d)| !matches(*e, *g, d))
        .map(|(n, e, g, d)| format!("{n}: recorded {e:?}, now {g:?}: {d}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} examples changed status (promote a newly running one in EXAMPLES and \
         docs/fio-compat.md):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_fio_example_is_copied_or_excluded_once() {
    let mut copied: Vec<String> = std::fs::read_dir(example_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".fio").map(String::from))
        .collect();
    copied.sort();
    let mut listed: Vec<String> = EXAMPLES.iter().map(|e| e.0.to_string()).collect();
    listed.sort();
    assert_eq!(copied, listed, "tests/fio_examples/ and EXAMPLES");
    let mut all: Vec<&str> = EXAMPLES
        .iter()
        .map(|e| e.0)
        .chain(EXCLUDED.iter().map(|e| e.0))
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), FIO_EXAMPLES, "each of fio's examples once");
}

/// The list docs/fio-compat.md keeps under "fio's example job files".
fn doc_list() -> String {
    let mut lines: Vec<String> = EXAMPLES
        .iter()
        .map(|(n, st)| match st {
            Runs => format!("- `{n}.fio`: runs"),
            Differs(_, why) => format!("- `{n}.fio`: runs, differs from fio: {why}"),
            Refused(why) => format!("- `{n}.fio`: refused: {why}"),
        })
        .collect();
    lines.sort();
    let runs = EXAMPLES.iter().filter(|e| e.1 == Runs).count();
    lines.insert(0, format!("{runs} of {} run.\n", EXAMPLES.len()));
    let mut excluded: Vec<String> = EXCLUDED
        .iter()
        .map(|(n, why)| format!("- `{n}.fio`: excluded: {why}"))
        .collect();
    excluded.sort();
    lines.extend(excluded);
    lines.join("\n")
}

#[test]
fn doc_lists_the_examples_as_the_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/fio-compat.md"))
        .unwrap();
    let want = doc_list();
    assert!(
        doc.contains(&want),
        "docs/fio-compat.md, section \"fio's example job files\", should list:\n{want}"
    );
}
