use super::*;
use crate::trace::pattern::advice;
use crate::trace::pattern::tests::ev;

/// Thread `tid`: 70 random 4k preads and 30 that continue the previous
/// one with 64k, 100 us apart, each taking 2 us.
fn mixed(tid: u32, t0: u64) -> Vec<crate::trace::Event> {
    let mut out = Vec::new();
    let mut end = 0;
    for i in 0..100u64 {
        let (off, n) = if i % 10 < 7 {
            ((i * 7919 % 997) * 4096 + 4096, 4096)
        } else {
            (end, 65536)
        };
        let mut e = ev(t0 + i * 100, tid, "pread64", off, n);
        e.lat_ns = 2000;
        out.push(e);
        end = off + n as u64;
    }
    out
}

fn trace(events: Vec<crate::trace::Event>) -> Trace {
    Trace {
        paths: vec!["/data/db:1".into()],
        events,
        ..Trace::default()
    }
}

fn get<'a>(s: &'a Section, key: &str) -> &'a str {
    s.get(key)
        .unwrap_or_else(|| panic!("no {key} in {:?}", s.lines))
}

#[test]
fn a_mix_of_random_4k_and_sequential_64k_reads() {
    let j = derive(&trace(mixed(5, 0)), None).unwrap();
    assert_eq!(j.sections.len(), 1);
    let s = &j.sections[0];
    assert_eq!(s.name, "t5");
    assert_eq!(get(s, "filename"), "/data/db\\:1");
    assert_eq!(get(s, "rw"), "randread");
    assert_eq!(get(s, "bssplit"), "4k/70:64k/30");
    assert_eq!(get(s, "number_ios"), "100");
    let pr: u64 = get(s, "percentage_random").parse().unwrap();
    assert!((68..=72).contains(&pr), "{pr}");
    // 98 us between calls taking 2 us: thinktime 98 (within the slot).
    let tt: u64 = get(s, "thinktime").parse().unwrap();
    assert!((95..=101).contains(&tt), "{tt}");
    assert_eq!(get(s, "fadvise_hint"), "0");
    let text = j.text();
    for l in text
        .lines()
        .filter(|l| l.contains('=') && !l.starts_with(';'))
    {
        let before = text.split(l).next().unwrap().lines().last().unwrap_or("");
        assert!(before.starts_with("; "), "{l} has no comment above it");
    }
    parses(&j, 1);
}

/// iolab's own parser takes `j`, as `n` jobs.
fn parses(j: &JobFile, n: usize) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("job.fio");
    std::fs::write(&p, j.text()).unwrap();
    let jobs = crate::job::jobs_from_args(&[p.display().to_string()])
        .unwrap_or_else(|e| panic!("{e}\n{}", j.text()));
    assert_eq!(jobs.len(), n);
}

#[test]
fn threads_alike_become_numjobs_and_writes_get_their_part() {
    let mut ev2 = mixed(1, 0);
    ev2.extend(mixed(2, 5));
    let mut w = ev(20_000, 3, "pwrite64", 0, 8192);
    w.lat_ns = 10;
    ev2.push(w);
    let mut fa = ev(0, 1, "fadvise64", 0, 0);
    fa.flags = advice::RANDOM;
    ev2.push(fa);
    let j = derive(&trace(ev2), None).unwrap();
    assert_eq!(j.sections.len(), 2, "{}", j.text());
    let s = &j.sections[0];
    assert_eq!(get(s, "numjobs"), "2");
    assert_eq!(s.tids, vec![1, 2]);
    assert_eq!(get(s, "fadvise_hint"), "random");
    let w = &j.sections[1];
    assert_eq!(get(w, "rw"), "write");
    assert_eq!(get(w, "bs"), ",8k");
    assert!(w.get("fsync").is_none(), "no fsync calls");
    parses(&j, 2);
}

#[test]
fn shares_add_up_to_100() {
    let c = BTreeMap::from([(512, 1), (4096, 1), (8192, 1)]);
    assert_eq!(shares(&c), vec![(512, 34), (4096, 33), (8192, 33)]);
    let c = BTreeMap::from([(512, 1000), (4096, 1)]);
    assert_eq!(shares(&c), vec![(512, 100)]);
    assert_eq!(size(65536), "64k");
    assert_eq!(size(1 << 21), "2m");
    assert_eq!(size(1536), "1536");
}

#[test]
fn bursts_give_a_rate_vector_calls_pvsync_o_direct_direct() {
    // 100 preadv of 4k in one thread: 1 us apart, but every tenth after a
    // 10 ms pause; the file opened with O_DIRECT.
    let mut open = ev(0, 1, "openat", 0, 3);
    open.flags = crate::trace::pattern::O_DIRECT;
    let mut evs = vec![open];
    let mut t = 10;
    for i in 0..100u64 {
        t += if i % 10 == 9 { 10_000 } else { 2 };
        let mut e = ev(t, 1, "preadv", i * 4096, 4096);
        e.lat_ns = 1000;
        evs.push(e);
    }
    let j = derive(&trace(evs), None).unwrap();
    let s = &j.sections[0];
    assert!(s.get("thinktime").is_none(), "{:?}", s.lines);
    // 100 calls over about 0.1 s: 1000 a second.
    let rate: u64 = get(s, "rate_iops").parse().unwrap();
    assert!((950..=1050).contains(&rate), "{rate}");
    assert_eq!(get(s, "rw"), "read");
    assert_eq!(get(s, "direct"), "1");
    assert_eq!(j.global[0].value.as_deref(), Some("pvsync"));
    parses(&j, 1);
}

#[test]
fn threads_with_a_near_mix_group_at_the_mean() {
    // Threads 1 and 2 read and write 4k at random blocks: 50 and 52 reads
    // of 100 calls; thread 3 only 20 reads.
    let mut evs = Vec::new();
    for (tid, reads) in [(1, 50), (2, 52), (3, 20)] {
        for i in 0..100u64 {
            let name = if i < reads { "pread64" } else { "pwrite64" };
            evs.push(ev(i * 10, tid, name, (i * 37 % 100) * 4096, 4096));
        }
    }
    let j = derive(&trace(evs), None).unwrap();
    assert_eq!(j.sections.len(), 2, "{}", j.text());
    let s = &j.sections[0];
    assert_eq!((get(s, "numjobs"), get(s, "rwmixread")), ("2", "51"));
    assert!(
        s.lines
            .iter()
            .any(|l| l.why.starts_with("the mean over the threads (50 52)"))
    );
    assert_eq!(get(&j.sections[1], "rwmixread"), "20");
    parses(&j, 2);
}
