//! fio's help flags on `iolab run`: `--cmdhelp[=OPTION]` from iolab's
//! option table and `--enghelp[=ENGINE[,OPTION]]` from the engine registry,
//! in fio's layout; what iolab lacks is an error naming what there is.

mod common;
use common::*;

#[test]
fn cmdhelp_and_enghelp_come_from_the_tables() {
    let help = |flag: &str| stdout_text(bin().args(["run", flag]));
    let all = help("--cmdhelp");
    for o in iolab::job::options::all() {
        assert!(
            all.lines()
                .any(|l| l.starts_with(o.name) && l.contains(o.help)),
            "{}",
            o.name
        );
    }
    let bs = help("--cmdhelp=blocksize");
    assert!(bs.contains("                  bs: "), "{bs}");
    assert!(bs.contains("alias: blocksize"), "{bs}");
    assert!(bs.contains("range: 1-4294967295 bytes"), "{bs}");
    assert!(help("--cmdhelp=blocksiz").starts_with(" - showing closest match"));
    // One of fio's options iolab does not support yet, from its own list.
    let unsupported = format!("--cmdhelp={}", iolab::job::options::FIO_UNSUPPORTED[0]);
    let (code, err) = fail(bin().args(["run", &unsupported]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("not supported by iolab yet"), "{err}");

    let engines = help("--enghelp");
    for e in iolab::engine::ENGINES {
        assert!(engines.contains(&format!("\t{}\n", e.name)), "{engines}");
    }
    let uring = help("--enghelp=io_uring");
    let def = iolab::registry::find(iolab::engine::ENGINES, "io_uring").unwrap();
    for o in def.item.options {
        assert!(uring.lines().any(|l| l.starts_with(o)), "{o}: {uring}");
    }
    assert!(help("--enghelp=io_uring,hipri").contains("hipri: "));
    let (code, err) = fail(bin().args(["run", "--enghelp=nosuch"]));
    assert_eq!(code, code::USAGE);
    assert!(err.contains("unknown ioengine 'nosuch'"), "{err}");
    let (code, err) = fail(bin().args(["run", "--enghelp=psync,hipri"]));
    assert_eq!(code, code::USAGE);
    assert!(
        err.contains("ioengine psync has no option 'hipri'"),
        "{err}"
    );
}
