//! The normal (text) output laid out as fio's: the same job under fio and
//! iolab gives the same lines in the same order (the job line before the
//! run, each job's block, the run status groups, the disk stats), with the
//! figures in fio's formats; counts that must agree are compared as they
//! are. iolab's own figures follow each job's block, from its `iolab` line.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// A line with each number (and its unit: `19.2k`, `75.0MiB/s`, `853msec`)
/// turned into `#`, the latency unit into `(unit)` and spaces collapsed:
/// the line's shape.
fn shape(line: &str) -> String {
    let line = line
        .replace("(nsec)", "(unit)")
        .replace("(usec)", "(unit)")
        .replace("(msec)", "(unit)");
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || *c == '.')
            {
                chars.next();
            }
            for unit in ["KiB/s", "MiB/s", "GiB/s", "kB/s", "MB/s", "GB/s", "B/s"] {
                let rest: String = chars.clone().take(unit.len()).collect();
                if rest == unit {
                    chars.nth(unit.len() - 1);
                }
            }
            while chars.peek().is_some_and(|c| "KkMGTPEiBmsec".contains(*c)) {
                chars.next();
            }
            out.push('#');
        } else if c.is_whitespace() {
            // fio pads figures (`avg= 5.44`): a space after '=' is padding.
            if !out.ends_with(' ') && !out.ends_with('=') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

/// The output of `tool` for the job file `job` in `dir`, split into the
/// lines fio writes: the job lines, then each job's block (iolab's own
/// figures left out), the groups and the disks. Lines that depend on the
/// measured latencies (the distribution lines, percentile rows) are
/// turned into one joined row of percentile names.
fn fio_lines(tool: &str, dir: &Path, job: &str) -> Vec<String> {
    let out = if tool == "fio" {
        Command::new("fio").current_dir(dir).arg(job).output()
    } else {
        Command::new(env!("CARGO_BIN_EXE_iolab"))
            .current_dir(dir)
            .args(["run", "--no-store", "--allow-overwrite", job])
            .output()
    }
    .unwrap();
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = Vec::new();
    let mut percentiles = String::new();
    let mut skipping = false;
    for l in text.lines() {
        if l.starts_with("fio-") || l.starts_with("iolab-") || l.starts_with("Starting ") {
            continue;
        }
        if l.starts_with("  iolab        :") {
            skipping = true;
        }
        if skipping {
            skipping = !(l.starts_with("Run status group") || l.contains("(groupid="));
            if skipping {
                continue;
            }
        }
        if l.trim().is_empty() || l.starts_with("  lat (") {
            continue;
        }
        if let Some(row) = l.strip_prefix("     |") {
            for cell in row.split(',').filter(|c| c.contains("th=")) {
                percentiles.push_str(cell.split('=').next().unwrap().trim());
                percentiles.push(' ');
            }
            continue;
        }
        if !percentiles.is_empty() {
            lines.push(std::mem::take(&mut percentiles));
        }
        lines.push(l.to_string());
    }
    lines
}

#[test]
fn normal_output_is_laid_out_as_fios() {
    skip_unless_installed!("fio");
    let d = scratch();
    std::fs::write(d.path().join("data"), vec![1u8; 2 << 20]).unwrap();
    // (fio merges a job without group_reporting with the group_reporting
    // jobs after it in its group: each job here reports on its own terms.)
    let job = "[global]\nfilename=data\nsize=2m\nbs=4k\ninvalidate=0\n\n\
               [reads]\nrw=randread\ndescription=random reads\n\n\
               [mixed]\nrw=randrw\nbsrange=4k-16k\nfsync=8\nnumjobs=2\n\
               percentile_list=50:99.9\n";
    std::fs::write(d.path().join("t.fio"), job).unwrap();
    let fio = fio_lines("fio", d.path(), "t.fio");
    let iolab = fio_lines("iolab", d.path(), "t.fio");
    let shapes = |v: &[String]| v.iter().map(|l| shape(l)).collect::<Vec<_>>();
    assert_eq!(
        shapes(&iolab),
        shapes(&fio),
        "\nfio:\n{}\n\niolab:\n{}",
        fio.join("\n"),
        iolab.join("\n")
    );
    // Counts that do not depend on timing or on random draws agree as
    // written: the first job's (fixed-size blocks, each once).
    for key in ["issued rwts:", "Description"] {
        let first = |v: &[String]| v.iter().find(|l| l.contains(key)).cloned();
        assert_eq!(first(&iolab), first(&fio), "{key}");
    }
}

#[test]
fn shapes_ignore_figures_but_not_fields() {
    assert_eq!(
        shape("  read: IOPS=19.2k, BW=75.0MiB/s (78.7MB/s)(64.0MiB/853msec)"),
        shape("  read: IOPS=8071, BW=344MiB/s (361MB/s)(4096KiB/1msec)")
    );
    assert_eq!(
        shape("    clat (nsec): min=962, max=14955k, avg=50853.34, stdev=2.48"),
        "clat (unit): min=#, max=#, avg=#, stdev=#"
    );
    assert_ne!(shape("  read: IOPS=1"), shape("  write: IOPS=1"));
}

/// fio's `unified_rw_reporting`: `mixed` reports reads and writes summed as
/// one `mixed` direction (no read, write or sync objects in the JSON; the
/// issued reads count every I/O), `both` adds it after the others; the text
/// and terse outputs are laid out as fio's (iolab refused the option).
#[test]
fn unified_rw_reporting_is_laid_out_as_fios() {
    skip_unless_installed!("fio");
    let d = scratch();
    std::fs::write(d.path().join("data"), vec![1u8; 2 << 20]).unwrap();
    for mode in ["mixed", "both"] {
        // An absolute name: the JSON runs below start in the test's own
        // directory.
        let job = format!(
            "[u]\nfilename={}\nsize=2m\nbs=4k\ninvalidate=0\nrw=randrw\n\
             unified_rw_reporting={mode}\n",
            s(&d.path().join("data"))
        );
        std::fs::write(d.path().join("u.fio"), &job).unwrap();
        let fio = fio_lines("fio", d.path(), "u.fio");
        let iolab = fio_lines("iolab", d.path(), "u.fio");
        let shapes = |v: &[String]| v.iter().map(|l| shape(l)).collect::<Vec<_>>();
        assert_eq!(
            shapes(&iolab),
            shapes(&fio),
            "{mode}\nfio:\n{}\n\niolab:\n{}",
            fio.join("\n"),
            iolab.join("\n")
        );
        let f = d.path().join("u.fio");
        let fio = fio_json(&[s(&f)]);
        let iolab = run_json(&["--allow-overwrite", s(&f)]);
        let dirs = |j: &serde_json::Value| {
            let job = j["jobs"][0].as_object().unwrap();
            let keys = ["read", "write", "trim", "sync", "mixed"];
            (keys.iter())
                .filter(|k| job.contains_key(**k))
                .map(|k| format!("{k}={}", job[*k]["total_ios"]))
                .collect::<Vec<_>>()
        };
        let (a, b) = (dirs(&fio), dirs(&iolab));
        assert_eq!(a.len(), b.len(), "{mode}: fio {a:?}, iolab {b:?}");
        assert_eq!(a.last(), b.last(), "{mode}: fio {a:?}, iolab {b:?}");
        assert_eq!(b.last().unwrap(), "mixed=512", "{mode}: {b:?}");
    }
}
