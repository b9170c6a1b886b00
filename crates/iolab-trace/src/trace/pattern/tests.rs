use super::*;

/// An event of call `name` by `tid` on file 0.
pub(crate) fn ev(t_us: u64, tid: u32, name: &str, off: u64, n: i64) -> Event {
    Event {
        t_ns: t_us * 1000,
        pid: 1,
        tid,
        call: calls::by_name(name).unwrap().0,
        fd: 3,
        file: Some(0),
        offset: Some(off),
        len: n.max(0) as u64,
        flags: 0,
        result: n,
        lat_ns: 1000,
    }
}

fn trace(events: Vec<Event>) -> Trace {
    Trace {
        paths: vec!["/d/f".into()],
        events,
        ..Trace::default()
    }
}

#[test]
fn ranges_count_bytes_seen_before() {
    let mut r = Ranges::default();
    assert_eq!(r.insert(0, 10), 0);
    assert_eq!(r.insert(20, 30), 0);
    assert_eq!(r.insert(5, 25), 10);
    assert_eq!(r.0.len(), 1);
    assert_eq!(r.insert(0, 40), 30);
    assert_eq!(r.insert(40, 41), 0);
    assert_eq!(r.0, BTreeMap::from([(0, 41)]));
}

#[test]
fn sequential_random_repeats_and_think() {
    let t = trace(vec![
        ev(0, 7, "pread64", 0, 4096),      // first, at 0: sequential
        ev(10, 7, "pread64", 4096, 4096),  // continues: sequential
        ev(30, 7, "pread64", 65536, 8192), // random
        ev(40, 7, "pread64", 0, 4096),     // random, all re-read
        ev(50, 7, "pwrite64", 4096, 100),  // write: first at 4096: random
        ev(60, 7, "pread64", 8192, 0),     // EOF read: empty
        ev(70, 7, "pread64", 0, -5),       // error: left out
        ev(80, 8, "read", 73728, 4096),    // other thread, continues nothing
    ]);
    let p = by(&t, |e| e.file);
    let p = &p[&0];
    assert_eq!(p.read.ops, 6);
    assert_eq!(p.read.empty, 1);
    assert_eq!(p.read.bytes, 4096 * 4 + 8192);
    assert_eq!((p.read.sequential, p.read.random), (2, 3));
    assert_eq!(p.read.repeat_bytes, 4096);
    assert_eq!((p.write.ops, p.write.random), (1, 1));
    assert_eq!(p.write.blocks, BTreeMap::from([(512, 1)]));
    assert_eq!(p.read.blocks, BTreeMap::from([(4096, 4), (8192, 1)]));
    assert_eq!(p.extent, 73728 + 4096);
    assert_eq!(p.threads, vec![7, 8]);
    // Thread 7: gaps 9, 19, 9, 9, 9 us after 1 us calls; thread 8 has none.
    assert_eq!(p.read.think.count() + p.write.think.count(), 5);
    assert_eq!(
        p.read.think_ns + p.write.think_ns,
        (9 + 19 + 9 + 9 + 9) * 1000
    );
    assert!((p.read.random_share() - 0.6).abs() < 1e-9);
}

#[test]
fn positions_are_followed_where_the_trace_has_none() {
    let mut t = trace(vec![
        ev(0, 1, "openat", 0, 3),
        ev(1, 1, "read", 0, 100),
        ev(2, 1, "read", 0, 50),
        ev(3, 1, "pread64", 4096, 10), // the position stays
        ev(4, 1, "read", 0, 0),
        ev(5, 1, "lseek", 0, 8192),
        ev(6, 1, "write", 0, 10),
        ev(7, 1, "close", 0, 0),
        ev(8, 1, "read", 0, 10), // fd 3 closed: unknown
    ]);
    for e in &mut t.events {
        if e.name() != "pread64" {
            e.offset = None;
        }
    }
    let order: Vec<usize> = (0..t.events.len()).collect();
    let o = offsets(&t.events, &order);
    assert_eq!(
        o[1..],
        [
            Some(0),
            Some(100),
            Some(4096),
            Some(150),
            None,
            Some(8192),
            None,
            None
        ]
    );
}

#[test]
fn events_fed_as_they_stream_give_what_analyse_gives() {
    let mut t = trace(vec![
        ev(0, 1, "openat", 0, 3),
        ev(1, 1, "read", 0, 100),
        ev(5, 2, "pread64", 50, 100),
        ev(9, 1, "read", 100, 100),
    ]);
    let mut streamed = t.clone();
    analyse(&mut t);
    // Completion order: thread 2's call returned last.
    let mut a = Analyser::default();
    for i in [0, 1, 3, 2] {
        a.add_event(&streamed.events[i]);
    }
    a.fill(&mut streamed);
    assert_eq!(streamed.files, t.files);
    let p = t.files[0].pattern.as_ref().unwrap();
    assert_eq!(
        (p.read.sequential, p.read.random, p.read.repeat_bytes),
        (2, 1, 100)
    );
}

#[test]
fn analyse_fills_files_once_and_again_the_same() {
    let mut t = trace(vec![ev(0, 1, "pread64", 0, 512), ev(5, 1, "fsync", 0, 0)]);
    t.tally_events();
    analyse(&mut t);
    let once = t.clone();
    analyse(&mut t);
    assert_eq!(t, once);
    assert_eq!(t.files.len(), 1);
    let p = t.files[0].pattern.as_ref().unwrap();
    assert_eq!((p.read.ops, p.fsync), (1, 1));
    let mut empty = Trace::default();
    analyse(&mut empty);
    assert!(empty.files.is_empty());
}

#[test]
fn a_file_number_without_a_path_counts_as_no_file() {
    let mut e = ev(0, 1, "pread64", 0, 10);
    e.file = Some(7);
    let t = trace(vec![e.clone(), ev(1, 1, "pread64", 0, 10)]);
    let p = by(&t, |e| e.file);
    assert_eq!(p.keys().collect::<Vec<_>>(), [&0]);
    assert_eq!(p[&0].read.ops, 1);
    let logs = crate::trace::iolog::export(&t, None).unwrap();
    assert_eq!(logs[0].reads, 1);
    assert!(crate::trace::job::derive(&t, None).is_ok());
}
