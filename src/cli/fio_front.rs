//! iolab started as fio: scripts that call `fio ARGS...` call iolab
//! unchanged. A link named `fio` to the binary, `iolab fio ARGS...`, and
//! `iolab --name=x ...` (a job option where a subcommand would stand) are
//! all read as `iolab run ARGS...`, which takes fio's command line.

use iolab::job::options;
use std::path::Path;

/// `argv` with `run` put where fio's command line begins, when iolab is
/// used as fio; unchanged otherwise.
pub fn as_run(argv: Vec<String>) -> Vec<String> {
    let named_fio = argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .is_some_and(|n| n == "fio");
    let mut out = argv;
    let as_fio = named_fio || out.get(1).is_some_and(|a| a == "fio");
    if as_fio && out.last().is_some_and(|a| a == "--version") {
        // fio's `--version`: iolab's own, which says what it is.
        return vec![out[0].clone(), "--version".into()];
    }
    if named_fio {
        out.insert(1, "run".into());
    } else if out.get(1).is_some_and(|a| a == "fio") {
        out[1] = "run".into();
    } else if out.get(1).is_some_and(|a| starts_a_job(a)) {
        out.insert(1, "run".into());
    }
    out
}

/// True for a fio job option (`--name=x`, `--rw=read`, a prefix of one):
/// no subcommand or iolab flag begins so.
fn starts_a_job(arg: &str) -> bool {
    let Some(opt) = arg.strip_prefix("--") else {
        return false;
    };
    let key = opt.split_once('=').map_or(opt, |(k, _)| k);
    options::lookup(key).is_some() || options::is_fio_option(key)
}
