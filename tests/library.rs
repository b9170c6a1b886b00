//! The orchestration is library code: a sweep and an A/B comparison run,
//! stored and summarised through `iolab::analysis` alone, without the
//! command line (as a lab, a test or a remote worker calls them).

mod common;
use common::*;
use iolab::analysis::compare::{AbTest, Source};
use iolab::analysis::sweep::Sweep;
use iolab::runner::{Quiet, StopFlag};
use iolab::store::{Store, Target};

#[test]
fn sweep_and_compare_without_the_cli() {
    let (d, f) = scratch_file();
    let mut store = Store::open(&d.path().join("lib.db"), false).unwrap();
    let stop = StopFlag::new();
    let job_args = job("s", &f, "--size=1M --rw=randread --cache=keep");
    let vary = ["numjobs=1..2".to_string(), "bs=4k,8k".to_string()];
    let sweep = Sweep::new(&job_args, &vary, Some(2)).unwrap();
    assert_eq!(
        sweep.points.len(),
        4,
        "2 x 2 points, checked before running"
    );

    let mut steps: Vec<String> = Vec::new();
    let mut progress = |m: &str| steps.push(m.to_string());
    let target = Target {
        store: &mut store,
        label: Some("lib"),
        command: "library test",
    };
    let r = sweep.run(Some(target), &stop, &mut progress).unwrap();
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(r.done.len(), 4);
    assert_eq!(steps[0], "sweep point 1/4: bs=4k numjobs=1");
    for p in &r.done {
        let (jobs, bs): (f64, f64) = (
            p.point["numjobs"].parse().unwrap(),
            if p.point["bs"] == "4k" {
                4096.0
            } else {
                8192.0
            },
        );
        assert_eq!(p.summary.reps.len(), 2, "repeat 2: {:?}", p.point);
        // Each clone reads the 1 MiB region once per repetition.
        assert_eq!(
            p.summary.get("ops"),
            2.0 * jobs * (1 << 20) as f64 / bs,
            "{:?}",
            p.point
        );
        let run = store.run(p.run.expect("stored")).unwrap();
        assert_eq!(run.sweep_id, r.sweep_id);
        assert_eq!(run.point.as_ref(), Some(&p.point));
    }

    // A: the first point as stored; B: a job run now, twice.
    let a = r.done[0].run.unwrap().to_string();
    let b = job("b", &f, "--size=1M --rw=randread --bs=8k --cache=keep").join(" ");
    let test = AbTest::new(&a, &b, 2, Some(&store)).unwrap();
    assert_eq!(
        test.sides[0].1,
        Source::Stored(vec![r.done[0].run.unwrap()])
    );
    assert!(matches!(test.sides[1].1, Source::Jobs(_)));
    let target = Target {
        store: &mut store,
        label: Some("ab"),
        command: "library test",
    };
    let c = test.run(Some(target), &stop, &mut Quiet).unwrap();
    assert_eq!(c.stored_as.as_deref(), Some("ab"));
    assert_eq!((c.sides[0].samples.len(), c.sides[1].samples.len()), (2, 2));
    let ops = c.rows.iter().find(|row| row.metric == "ops").unwrap();
    assert_eq!((ops.a_mean, ops.b_mean), (256.0, 128.0));
    assert_eq!(ops.change_pct, Some(-50.0));
    assert_eq!(store.ids_with_label("ab:B").unwrap().len(), 2);

    // A stop asked before the work starts ends it with the interruption.
    stop.set();
    let sweep = Sweep::new(&job_args, &vary, None).unwrap();
    let r = sweep.run(None, &stop, &mut Quiet).unwrap();
    assert!(r.done.is_empty());
    assert!(r.failure.is_some_and(|e| e.is_interrupt()));
}
