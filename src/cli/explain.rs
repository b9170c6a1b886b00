//! `iolab explain` and `iolab calibrate`: why a stored run went as it did,
//! and this machine's ceilings that explanations hold runs against.

use super::{db, write_out};
use iolab::explain::diff::DiffExplanation;
use iolab::explain::{self, Explanation, calibrate, ceilings};
use iolab::runner::StopFlag;
use iolab::store::Store;
use iolab::sys::environment::Environment;
use iolab::{Error, Result};
use std::path::PathBuf;

/// Options of `iolab explain`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab explain 12             # the dominant limit of run 12, with its figures\n  iolab explain 12 --json      # the same as one JSON object\n  iolab explain 12 14          # why run 14 went faster or slower than run 12\n  iolab explain last           # the newest stored run\n  iolab calibrate --dir /mnt/nvme   # measure the ceilings explanations cite"
)]
pub struct ExplainArgs {
    /// A run id (or `last`: the newest stored run); with a second, why the
    /// second differs from the first.
    #[arg(value_name = "ID", num_args = 1..=2, required = true)]
    pub ids: Vec<String>,
    /// One JSON object on stdout instead of sentences.
    #[arg(long)]
    pub json: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab explain`.
pub fn execute(a: ExplainArgs) -> Result<()> {
    let store = a.db.open_read_only()?;
    let ids: Vec<i64> = (a.ids.iter())
        .map(|s| match s.as_str() {
            "last" => last(&store),
            s => db::parse_id(s),
        })
        .collect::<Result<_>>()?;
    match ids.as_slice() {
        [id] => {
            let e = explain::explain_stored(&store, *id)?;
            match a.json {
                true => write_out(&json(&e)?, None),
                false => write_out(&text(&e), None),
            }
        }
        [x, y] => {
            let d = diff(&store, *x, *y)?;
            match a.json {
                true => write_out(&json(&d)?, None),
                false => write_out(&diff_text(&d), None),
            }
        }
        _ => unreachable!("clap takes one or two ids"),
    }
}

/// The newest stored run that is no calibration.
fn last(store: &Store) -> Result<i64> {
    let runs = store.list(&iolab::store::Filter {
        limit: Some(8),
        ..Default::default()
    })?;
    (runs.iter())
        .find(|r| r.kind != ceilings::KIND)
        .map(|r| r.id)
        .ok_or_else(|| Error::usage("last", "no stored run to explain yet"))
}

/// The explanation of a run just made: of stored run `id` when it was
/// stored, else of the result itself, against the ceilings in `store`.
pub fn of_result(
    r: &iolab::runner::RunResult,
    store: Option<&Store>,
    id: Option<i64>,
) -> Result<Explanation> {
    if let (Some(st), Some(id)) = (store, id) {
        return explain::explain_stored(st, id);
    }
    let files: Vec<PathBuf> = r.files.iter().flatten().flatten().cloned().collect();
    let env = Environment::capture(&files, iolab::disk::state::injected_at);
    let found = match store {
        Some(st) => ceilings::find(st, &env)?,
        None => ceilings::Found::default(),
    };
    Ok(explain::explain(
        explain::evidence::Evidence::of_run(r, &env),
        found,
        None,
    ))
}

/// Why stored run `y` differs from stored run `x`.
pub fn diff(store: &Store, x: i64, y: i64) -> Result<DiffExplanation> {
    let a = explain::explain_stored(store, x)?;
    let b = explain::explain_stored(store, y)?;
    Ok(explain::diff::explain_diff(a, b))
}

/// An explanation as text: a heading, its sentences, the other findings.
pub fn text(e: &Explanation) -> String {
    let mut s = match e.run {
        Some(id) => format!("Why run {id} went as it did\n"),
        None => "Why the run went as it did\n".to_string(),
    };
    for line in e.sentences() {
        s.push_str(&format!("  {line}\n"));
    }
    s
}

/// A comparison's explanation as text.
pub fn diff_text(d: &DiffExplanation) -> String {
    let mut s = String::from("Why the runs differ\n");
    for line in d.sentences() {
        s.push_str(&format!("  {line}\n"));
    }
    s
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| Error::usage("explain --json", e.to_string()))
}

/// Options of `iolab calibrate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab calibrate                   # the device under the current directory\n  iolab calibrate --dir /mnt/nvme   # another device\n  iolab calibrate --json            # the ceilings as JSON on stdout\n\nMeasures (about 12 s, on a 256 MiB file it lays out in a directory of its own under DIR\nand removes): random 4 KiB O_DIRECT reads at depth 1 and 32, sequential 1 MiB O_DIRECT\nreads, cached 1 MiB reads (page-cache copy), one cached 4 KiB read through each engine\nand one I/O through the null engine. Stored with the machine's host, kernel, CPU and the\ndevice; `iolab explain` uses the newest that matches a run, and says why when none does."
)]
pub struct CalibrateArgs {
    /// A directory on the device to measure.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The ceilings as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Measure, print, store nothing.
    #[arg(long)]
    pub no_store: bool,
    /// Where the database is.
    #[command(flatten)]
    pub db: db::DbArg,
}

/// Runs `iolab calibrate`.
pub fn calibrate(a: CalibrateArgs) -> Result<()> {
    if !a.dir.is_dir() {
        return Err(Error::usage(
            format!("--dir {}", a.dir.display()),
            "is not a directory: calibrate measures the device a directory is on",
        ));
    }
    let dir = std::fs::canonicalize(&a.dir)
        .map_err(|e| Error::io(format!("--dir {}", a.dir.display()), e))?;
    let stop: StopFlag = super::stop_on_signals()?;
    let mut progress = super::progress::Shown::new();
    let measured = calibrate::measure(&dir, &stop, &mut progress);
    let (c, scratch) = measured?;
    let env = Environment::capture(
        &[scratch.join("calibrate.dat")],
        iolab::disk::state::injected_at,
    );
    calibrate::remove_scratch(&scratch);
    let id = match a.no_store {
        true => None,
        false => {
            let mut store = a.db.open()?;
            Some(ceilings::save(&mut store, &c, &env, &db::command_line())?)
        }
    };
    if a.json {
        return write_out(&json(&c)?, None);
    }
    write_out(&ceilings_text(&c, id), None)
}

fn ceilings_text(c: &ceilings::Ceilings, id: Option<i64>) -> String {
    use iolab::render::table::fig;
    let mib = |b: f64| fig(b / 1048576.0);
    let mut s = format!(
        "Ceilings of the device under {} ({} CPUs), measured in {:.1} s{}\n",
        c.dir.display(),
        c.cpus,
        c.took_s,
        id.map(|i| format!(", stored as run {i}"))
            .unwrap_or_default()
    );
    s.push_str(&format!(
        "  random 4 KiB O_DIRECT reads, depth 1:  {} IOPS, {} us each\n",
        fig(c.rand_iops_d1),
        fig(c.rand_lat_d1_us)
    ));
    s.push_str(&format!(
        "  random 4 KiB O_DIRECT reads, depth 32: {} IOPS\n",
        fig(c.rand_iops_d32)
    ));
    s.push_str(&format!(
        "  sequential 1 MiB O_DIRECT reads:       {} MiB/s\n",
        mib(c.seq_bw)
    ));
    s.push_str(&format!(
        "  page-cache copy (cached 1 MiB reads):  {} MiB/s\n",
        mib(c.copy_bw)
    ));
    for (engine, us) in &c.cached_read_us {
        s.push_str(&format!(
            "  one cached 4 KiB read, {engine:<9}     {} us\n",
            fig(*us)
        ));
    }
    s.push_str(&format!(
        "  one I/O through the null engine:       {} us\n",
        fig(c.null_us)
    ));
    s
}
