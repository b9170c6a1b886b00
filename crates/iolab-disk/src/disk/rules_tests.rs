use super::*;

fn rules(list: &[(&'static str, &str)]) -> Rules {
    let r = list.iter().map(|(f, t)| parse(f, t).unwrap()).collect();
    Rules::new(r, 1)
}

#[test]
fn parses_every_form() {
    let d = parse("delay", "1ms").unwrap();
    assert_eq!(
        (d.ops, d.scope, d.effect),
        ([true; 4], Scope::All, Effect::Delay(Dist::Fixed(1_000_000)))
    );
    let d = parse("delay", "read+flush=normal:1ms,200us@0-1MiB").unwrap();
    assert_eq!(d.ops, [true, false, true, false]);
    assert_eq!(d.scope, Scope::Bytes(0, 1 << 20));
    assert_eq!(
        d.effect,
        Effect::Delay(Dist::Normal {
            mean: 1_000_000,
            sd: 200_000
        })
    );
    let j = parse("delay", "meta=2ms~1ms@*.log").unwrap();
    assert!(matches!(j.scope, Scope::Path(_)));
    let f = parse("fail", "ENOSPC@after=100MiB").unwrap();
    assert_eq!(
        f.effect,
        Effect::Fail {
            errno: libc::ENOSPC,
            when: When::After(100 << 20)
        }
    );
    assert_eq!(
        parse("bw", "write=100MiB").unwrap().effect,
        Effect::Bandwidth(100 << 20)
    );
    assert_eq!(parse("iops", "500").unwrap().effect, Effect::Iops(500));
}

#[test]
fn bad_rules_say_what_was_expected() {
    for (flag, text, want) in [
        ("fail", "EWHAT@0.1", "errno name"),
        ("fail", "EIO", "EIO@0.01"),
        ("fail", "EIO@2", "between 0 and 1"),
        ("delay", "soon", "a time"),
        ("delay", "normal:1ms", "MEAN,SPREAD"),
        ("delay", "1ms@5M-1M", "empty byte range"),
        ("iops", "many", "operations a second"),
    ] {
        let e = parse(flag, text).unwrap_err();
        assert!(e.to_string().contains(want), "{flag} {text}: {e}");
        assert!(
            e.to_string().starts_with(&format!("--{flag} {text}:")),
            "{e}"
        );
    }
}

#[test]
fn delays_add_up_only_where_the_rule_applies() {
    let mut r = rules(&[("delay", "read=1ms@0-1MiB"), ("delay", "2ms")]);
    assert_eq!(
        r.decide(Op::Read, (4096, 4096), None, 0).delay_ns,
        3_000_000
    );
    assert_eq!(
        r.decide(Op::Read, (2 << 20, 4096), None, 0).delay_ns,
        2_000_000
    );
    assert_eq!(r.decide(Op::Write, (0, 4096), None, 0).delay_ns, 2_000_000);
    assert_eq!(r.counters.ops, [2, 1, 0, 0]);
    assert_eq!(r.counters.delay_ns[0], 5_000_000);
    let mut p = rules(&[("delay", "meta=1ms@*.log")]);
    assert_eq!(
        p.decide(Op::Meta, (0, 0), Some("a/b.log"), 0).delay_ns,
        1_000_000
    );
    assert_eq!(p.decide(Op::Meta, (0, 0), Some("a/b.dat"), 0).delay_ns, 0);
}

#[test]
fn a_share_of_operations_fails_and_is_counted() {
    let mut r = rules(&[("fail", "read=EIO@0.01")]);
    let failed = (0..100_000)
        .filter(|k| r.decide(Op::Read, (k * 4096, 4096), None, 0).errno == Some(libc::EIO))
        .count();
    assert!((900..1100).contains(&failed), "{failed} of 100000");
    assert_eq!(r.counters.errors[0], failed as u64);
    assert_eq!(r.decide(Op::Write, (0, 4096), None, 0).errno, None);
}

#[test]
fn enospc_after_n_bytes_fails_the_write_that_would_cross() {
    let mut r = rules(&[("fail", "ENOSPC@after=10k")]);
    let ok = |r: &mut Rules| r.decide(Op::Write, (0, 4096), None, 0).errno.is_none();
    assert!(ok(&mut r) && ok(&mut r));
    assert!(
        !ok(&mut r),
        "8 KiB written: a third 4 KiB write would pass 10 KiB"
    );
    assert!(!ok(&mut r), "and so would every later one");
    assert!(r.decide(Op::Read, (0, 4096), None, 0).errno.is_none());
}

#[test]
fn caps_pace_operations() {
    let mut r = rules(&[("iops", "read=1000")]);
    let waits: Vec<u64> = (0..3)
        .map(|_| r.decide(Op::Read, (0, 4096), None, 0).delay_ns)
        .collect();
    assert_eq!(waits, [1_000_000, 2_000_000, 3_000_000]);
}
