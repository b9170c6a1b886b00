//! `iolab compare A B`: stored runs, labels, or jobs run now (interleaved
//! A B A B so drift hits both sides alike), compared figure by figure with
//! the spread of each side and Welch's t-test.

use super::{check_picture, db, progress::Shown};
use iolab::Result;
use iolab::analysis::compare::AbTest;
use iolab::analysis::compare::Comparison;
use iolab::render::chart::ImageFormat;
use iolab::render::{self, compare_plot};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
A and B are each: a run id (from `iolab history`), a label (all runs with it,
every repetition a sample), a fio job file, or a quoted set of fio options.
Job files and option sets are run now, --repeat times each, interleaved.

The verdict line says how many times faster B ran than A (hyperfine's ratio
of means, ± its propagated standard deviation) on one figure it names: the
run time when both sides did the same fixed work (and always for --exec),
else the bandwidth (IOPS without one); its words and p are that figure's row's.
A figure is tested (Welch's t-test) only with 3 or more samples a side that
vary: below 3 it is 'not tested', without spread its values are exact. It is
significant when p < 0.05 and it changed by 1% or more; only those and the
verdict's figure are shown unless --all.
A label whose runs are of different workloads (rw, bs, engine, iodepth,
numjobs, size, direct, cache, time_based) is refused unless --force.

With --exec, A and B are shell command lines run now (sh -c), interleaved A B
A B, --repeat times each, every run under the same --cache state of --files;
every figure is shown (time, CPU, bytes and calls, bytes from storage, cache
hits and misses, device reads) and each side is stored as one exec run.
--flamegraph FILE draws B against A (red: where B spent more).

Examples:
  iolab compare 12 15
  iolab compare --exec 'dd if=f of=/dev/null bs=4k' 'dd if=f of=/dev/null bs=1M' \\
                --repeat 5 --cache cold --files f --flamegraph dd.svg
  iolab compare before after -f markdown
  iolab compare --repeat 5 A.fio B.fio --plot ab.svg
  iolab compare --repeat 5 '--name=a --filename=/tmp/f --size=256M --rw=read --bs=4k' \\
                           '--name=b --filename=/tmp/f --size=256M --rw=read --bs=1m'";

/// Options of `iolab compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompareArgs {
    /// Side A (baseline).
    #[arg(value_name = "A", allow_hyphen_values = true)]
    pub a: String,
    /// Side B.
    #[arg(value_name = "B", allow_hyphen_values = true)]
    pub b: String,
    /// Runs of each job side, interleaved A B A B.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeat: u32,
    /// Output format (`iolab list formats`).
    #[arg(short = 'f', long = "output-format", alias = "format", default_value = "normal", value_parser = super::formats(), value_name = "FORMAT")]
    pub format: String,
    /// Paired bars of A and B per figure shown, with 95% confidence
    /// intervals (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Pool a label's runs even when they are of different workloads.
    #[arg(long)]
    pub force: bool,
    /// Show every figure, not only the headline and significant ones.
    #[arg(long)]
    pub all: bool,
    /// A and B are shell commands to run now (`iolab exec`'s runs).
    #[arg(long)]
    pub exec: bool,
    /// After the table, say which evidence changed most and accounts for
    /// the difference (`iolab explain A B`), each side's last run (normal
    /// output only).
    #[arg(long)]
    pub explain: bool,
    /// With --exec: the cache state, files, profile and disk of the runs.
    #[command(flatten)]
    pub how: super::exec::HowArgs,
    /// Where runs made now go; a --label L stores them as L:A and L:B.
    #[command(flatten)]
    pub store: db::StoreOpts,
}

/// Runs `iolab compare`.
pub fn execute(a: CompareArgs) -> Result<()> {
    if a.explain && a.format != "normal" {
        return Err(iolab::Error::usage(
            "--explain",
            format!(
                "explains after the normal output only, not with --output-format={}: \
                 `iolab explain A B --json` gives it as JSON",
                a.format
            ),
        ));
    }
    if a.exec && a.explain {
        return Err(iolab::Error::usage(
            "--explain",
            "explains `iolab run` results: the runs of --exec have no per-I/O evidence yet",
        ));
    }
    if a.exec {
        return execute_exec(a);
    }
    let h = &a.how;
    if h.cache != "keep"
        || !h.files.is_empty()
        || h.flamegraph.is_some()
        || h.disk.is_some()
        || h.trace
    {
        return Err(iolab::Error::usage(
            "--cache, --files, --flamegraph, --trace, --disk",
            "are for commands run now: add --exec (iolab compare --exec 'CMD A' 'CMD B')",
        ));
    }
    if let Some(p) = &a.plot {
        check_picture("--plot", p)?;
    }
    // A format with no form for a comparison is refused before the runs.
    render::comparison(&Comparison::default(), &a.format)?;
    // The database is read for stored sides even with --no-store (then
    // only read: a read-only database will do).
    let opened = if a.store.no_store {
        a.store.db.open_read_only()
    } else {
        a.store.db.open()
    };
    let mut store = match opened {
        Ok(s) => Some(s),
        Err(e) if a.store.no_store => {
            eprintln!("iolab: note: {e}: only job sides can be compared");
            None
        }
        Err(e) => return Err(e),
    };
    let mut test = AbTest::new(&a.a, &a.b, a.repeat, store.as_ref())?;
    test.store_new = !a.store.no_store;
    test.force = a.force;
    test.all = a.all;
    let stop = super::stop_on_signals()?;
    let command = db::command_line();
    let target = db::target(store.as_mut(), a.store.label(), &command);
    let c = test.run(target, &stop, &mut Shown::new())?;
    if let Some(p) = &c.stored_as {
        eprintln!("iolab: runs stored with labels {p}:A and {p}:B");
    }
    super::write_out(&render::comparison(&c, &a.format)?, None)?;
    if let Some(p) = &a.plot {
        let picture = compare_plot::image(&c, ImageFormat::of(p)?, &super::here(&[]))?;
        iolab::sys::fs::write_atomic(p, &picture)?;
        eprintln!("iolab: plot written to {}", p.display());
    }
    if a.explain {
        let last = |i: usize| c.sides[i].runs.last().copied();
        match (&store, last(0), last(1)) {
            (Some(st), Some(x), Some(y)) => {
                let d = super::explain::diff(st, x, y)?;
                super::write_out(&format!("\n{}", super::explain::diff_text(&d)), None)?;
            }
            _ => eprintln!("iolab: note: --explain needs both sides stored (not with --no-store)"),
        }
    }
    c.not_stored.map_or(Ok(()), |e| Err(e.into()))
}

/// `iolab compare --exec 'CMD A' 'CMD B'`.
fn execute_exec(a: CompareArgs) -> Result<()> {
    if let Some(p) = &a.plot {
        check_picture("--plot", p)?;
    }
    render::comparison(&Comparison::default(), &a.format)?;
    let json = a.format != "normal";
    let base = a.how.request(vec![a.a.clone()], a.repeat, json)?;
    let mut store = a.store.open()?;
    let stop = super::stop_on_signals()?;
    let command = db::command_line();
    let target = db::target(store.as_mut(), a.store.label(), &command);
    let mut r = iolab::exec::ab::run(&a.a, &a.b, &base, target, &stop, &mut Shown::new())?;
    let quiet = super::progress::ui().quiet;
    if let Some(p) = r.comparison.stored_as.as_ref().filter(|_| !quiet) {
        eprintln!("iolab: runs stored with labels {p}:A and {p}:B");
    }
    super::write_out(&render::comparison(&r.comparison, &a.format)?, None)?;
    if let Some(p) = &a.plot {
        let picture = compare_plot::image(&r.comparison, ImageFormat::of(p)?, &super::here(&[]))?;
        iolab::sys::fs::write_atomic(p, &picture)?;
        eprintln!("iolab: plot written to {}", p.display());
    }
    if let Some(p) = &a.how.flamegraph {
        let [ra, rb] = &r.results;
        if ra.profiles.is_empty() || rb.profiles.is_empty() {
            eprintln!("iolab: note: no flamegraph: a side has no successful run");
        } else {
            let title = format!(
                "B against A (red: more samples in B): B = {}, A = {}",
                a.b, a.a
            );
            iolab::exec::flame::write_ab(&ra.profiles, &rb.profiles, p, &title)?;
            if !quiet {
                eprintln!("iolab: flamegraph (B against A) written to {}", p.display());
            }
        }
    }
    if let Some(e) = r.not_stored.take() {
        return Err(e.into());
    }
    if stop.signal().is_some() {
        return Err(iolab::Error::interrupted(&stop));
    }
    match r.results.iter().find_map(|e| e.failure()) {
        Some(f) => Err(f.into()),
        None => Ok(()),
    }
}
