//! strace output in its other forms (`-tt`, `-t`, `-r`, no times, no
//! `-T`, `-k`, `-i`, `-ff`, stray lines) read as the `-ttt -T -y` form is.

use super::*;

fn parse_ok(text: &str) -> Trace {
    parse(text.as_bytes(), Path::new("t.strace"), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn times(t: &Trace) -> Vec<(String, u64, u64)> {
    (t.events.iter())
        .map(|e| (e.name().to_string(), e.t_ns, e.lat_ns))
        .collect()
}

#[test]
fn every_time_form_gives_the_same_times() {
    let ttt = parse_ok(concat!(
        "7 1700000000.100000 read(3</f>, \"a\", 1) = 1 <0.000010>\n",
        "7 1700000000.350000 fsync(3</f>) = 0 <0.002000>\n",
    ));
    let tt = parse_ok(concat!(
        "7 23:59:59.900000 read(3</f>, \"a\", 1) = 1 <0.000010>\n",
        "7 00:00:00.150000 fsync(3</f>) = 0 <0.002000>\n",
    ));
    let r = parse_ok(concat!(
        "7      0.000000 read(3</f>, \"a\", 1) = 1 <0.000010>\n",
        "7      0.250000 fsync(3</f>) = 0 <0.002000>\n",
    ));
    assert_eq!(times(&ttt), times(&tt));
    assert_eq!(times(&ttt), times(&r));
    assert_eq!(ttt.meta.duration_ns, 252_000_000);
    assert_eq!(r.meta.duration_ns, 252_000_000);
    assert!(ttt.meta.notes.is_empty(), "{:?}", ttt.meta.notes);
    assert_eq!(ttt.meta.started_unix, 1_700_000_000.1);
    for t in [&tt, &r] {
        assert_eq!(t.meta.started_unix, 0.0, "no date in the output");
        assert!(
            t.meta.notes.iter().any(|n| n.contains("no date")),
            "{:?}",
            t.meta.notes
        );
    }
}

#[test]
fn what_a_form_lacks_is_noted() {
    let t = parse_ok("read(3, \"a\", 1) = 1\nread(3, \"\", 1) = 0\n");
    assert_eq!(t.events.len(), 2);
    let notes = t.meta.notes.join("\n");
    assert!(notes.contains("no timestamps"), "{notes}");
    assert!(notes.contains("no -T"), "{notes}");
    assert!(notes.contains("no -y: 2 calls"), "{notes}");
    let t = parse_ok("12:00:01 fsync(3</f>) = 0 <0.000010>\n");
    assert!(
        t.meta
            .notes
            .iter()
            .any(|n| n.contains("-t gives whole seconds"))
    );
}

#[test]
fn stack_frames_and_instruction_pointers_are_passed_over() {
    let t = parse_ok(concat!(
        "9 [00007f0a1b2c3d4d] openat(AT_FDCWD</>, \"/f\", O_RDONLY) = 3</f> <0.000010>\n",
        "9 [00007f0a1b2c3d4e] read(3</f>, \"ab\", 2) = 2 <0.000010>\n",
        " > /usr/lib/x86_64-linux-gnu/libc.so.6(read+0x11) [0x10b1e1]\n",
        " > /usr/bin/app(main+0x2a) [0x1139]\n",
        "9 [  0] read(3</f>, \"\", 2) = 0 <0.000010>\n",
    ));
    assert_eq!(t.events.len(), 3);
    assert_eq!((t.events[1].offset, t.events[2].offset), (Some(0), Some(2)));
    assert!(t.meta.notes.iter().all(|n| !n.contains("skipped")));
}

#[test]
fn a_stray_line_is_skipped_and_counted() {
    let t = parse_ok(concat!(
        "1 1700000000.000000 fsync(3</f>) = 0 <0.000001>\n",
        "a line an editor added\n",
        "1 1700000000.000002 fsync(3</f>) = 0 <0.000001>\n",
    ));
    assert_eq!(t.events.len(), 2);
    let notes = t.meta.notes.join("\n");
    assert!(
        notes.contains("skipped 1 line that is not strace's"),
        "{notes}"
    );
    assert!(notes.contains("t.strace:2:"), "{notes}");
}

#[test]
fn ff_files_are_merged_in_time_order() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    write(
        "out.100",
        concat!(
            "12:00:00.000000 openat(AT_FDCWD</d>, \"f\", O_RDONLY) = 3</d/f> <0.000010>\n",
            "12:00:00.000100 clone(child_stack=NULL, flags=SIGCHLD) = 101 <0.000050>\n",
            "12:00:00.000300 read(3</d/f>, \"b\", 1) = 1 <0.000010>\n",
            "12:00:00.000400 +++ exited with 0 +++\n",
        ),
    );
    write(
        "out.101",
        concat!(
            "12:00:00.000200 read(3</d/f>, \"a\", 1) = 1 <0.000010>\n",
            "12:00:00.000250 +++ exited with 0 +++\n",
        ),
    );
    let t = read(&dir.path().join("out"), &Options::default()).unwrap();
    let reads: Vec<_> = (t.events.iter())
        .filter(|e| e.name() == "read")
        .map(|e| (e.pid, e.offset))
        .collect();
    // The child's read came first, and moved the shared file position.
    assert_eq!(reads, [(101, Some(0)), (100, Some(1))]);
    assert_eq!(t.meta.pid, 100);
    let one = dir.path().join("out.100");
    let err = read_files(&[one, dir.path().join("other")], &Options::default());
    assert!(matches!(err, Err(TraceError::Usage { .. })), "{err:?}");
}
