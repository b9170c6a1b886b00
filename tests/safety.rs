//! Write safety: iolab never writes to data it did not lay out unless told.

mod common;
use common::*;
use std::fs;
use std::path::Path;

#[test]
fn refuses_to_overwrite_a_foreign_file_and_leaves_it_unchanged() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("precious.db");
    let content: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(&f, &content).unwrap();
    for rw in ["write", "randwrite", "rw", "randrw"] {
        run_fails(
            &job("w", &f, &format!("--size=512k --rw={rw}")),
            code::REFUSED,
            &["refusing to write", "--allow-overwrite"],
        );
    }
    // Read workloads may not extend it either.
    let (_, err) = run_err(&job("r", &f, "--size=2M --rw=read"));
    assert!(
        err.contains("does not extend files it did not lay out"),
        "{err}"
    );
    assert_eq!(fs::read(&f).unwrap(), content, "byte-for-byte unchanged");
    // Reading it is fine; without size= iolab uses the file's size.
    let v = run_json(&job("r", &f, "--rw=read --bs=1000"));
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 1_000_000);
    assert_eq!(fs::read(&f).unwrap(), content);
    // With the explicit flag the write goes ahead.
    run_text(&job("w", &f, "--size=512k --rw=write --allow-overwrite"));
    assert_ne!(fs::read(&f).unwrap(), content);
}

#[test]
fn files_iolab_laid_out_can_be_rewritten_and_unlinked() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("mine");
    run_json(&job("a", &f, "--size=1M --rw=write"));
    assert!(iolab::runner::layout::has_mark(&f));
    run_json(&job("b", &f, "--size=1M --rw=randwrite"));
    run_json(&job("c", &f, "--size=2M --rw=randread")); // extends its own file
    assert_eq!(fs::metadata(&f).unwrap().len(), 2 << 20);
    run_json(&job("d", &f, "--size=2M --rw=read --unlink=1"));
    assert!(!f.exists(), "unlink removed iolab's file");
    // unlink never removes a file iolab did not lay out.
    let g = d.path().join("foreign");
    fs::write(&g, vec![1u8; 8192]).unwrap();
    let v = run_json(&job("e", &g, "--rw=read --unlink=1"));
    assert!(g.exists());
    assert!(v["iolab"]["warnings"][0].as_str().unwrap().contains("kept"));
}

#[test]
fn refuses_to_write_a_block_device() {
    let d = tempfile::tempdir().unwrap();
    let img = d.path().join("disk.img");
    fs::write(&img, vec![0xabu8; 4 << 20]).unwrap();
    let out = std::process::Command::new("losetup")
        .args(["-f", "--show", s(&img)])
        .output();
    let dev = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            eprintln!(
                "SKIP refuses_to_write_a_block_device: losetup failed (needs root and loop devices): {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("SKIP refuses_to_write_a_block_device: losetup not available: {e}");
            return;
        }
    };
    let (code, err) = run_err(&job("w", Path::new(&dev), "--size=1M --rw=write"));
    // Reading the device is allowed, with its size from the kernel.
    let v = run_json(&job("r", Path::new(&dev), "--rw=read --bs=64k"));
    std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status()
        .unwrap();
    assert_eq!(code, 4, "refused as unsafe");
    assert!(err.contains("refusing to write to block device"), "{err}");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 4 << 20);
    assert!(
        fs::read(&img).unwrap().iter().all(|&b| b == 0xab),
        "device data unchanged"
    );
}

/// docs/SAFETY.md names the test behind each promise: every name it gives
/// (and every `prefix_*`) is a test function in tests/, and every
/// `defect_NN_` regression test is named there.
#[test]
fn safety_doc_names_real_tests() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/SAFETY.md")).unwrap();
    let mut sources = String::new();
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            sources.push_str(&std::fs::read_to_string(p).unwrap());
        }
    }
    let tests: Vec<&str> = sources
        .lines()
        .filter_map(|l| l.trim().strip_prefix("fn "))
        .filter_map(|l| l.split('(').next())
        .collect();
    let named: Vec<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '*')
        })
        .filter(|w| w.matches('_').count() >= 2 && !w.trim_end_matches('*').contains('*'))
        .collect();
    assert!(named.len() > 20, "the doc names its tests: {named:?}");
    for n in &named {
        let found = match n.strip_suffix('*') {
            Some(prefix) => tests.iter().any(|t| t.starts_with(prefix)),
            None => tests.contains(n),
        };
        assert!(
            found,
            "docs/SAFETY.md names `{n}`, which is not a test in tests/"
        );
    }
    for t in tests.iter().filter(|t| t.starts_with("defect_")) {
        let listed = named
            .iter()
            .any(|n| n == t || n.strip_suffix('*').is_some_and(|p| t.starts_with(p)));
        assert!(listed, "test {t} is not named in docs/SAFETY.md");
    }
}
