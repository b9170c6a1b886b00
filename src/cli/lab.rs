//! `iolab lab`: the seeds' experiments, one command each.

use super::db;
use super::exec::stop_on_signals;
use iolab::lab::{self, Lab, LabCtx, Outcome};
use iolab::render::lab as render;
use iolab::{Error, job::units};
use std::path::{Path, PathBuf};

/// Options every lab takes.
#[derive(Debug, Clone, clap::Args)]
pub struct LabOpts {
    /// Small sizes and fewer steps: done in about a minute.
    #[arg(long)]
    pub quick: bool,
    /// Where the scratch directory goes (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Keep the scratch directory and its files afterwards.
    #[arg(long)]
    pub keep: bool,
    /// Main file size (4k, 256M, 1G), instead of the lab's own choice.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Operations per run, instead of the lab's own choice.
    #[arg(long, value_name = "N")]
    pub ops: Option<u64>,
    /// Where the plots (and the report of `lab all`) go
    /// (default: ./iolab-labs/DATE-TIME-LAB/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Do not store the runs.
    #[arg(long)]
    pub no_store: bool,
    /// Results database.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// `iolab lab ...`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  iolab lab list\n  iolab lab prefetch\n  iolab lab small-reads --quick\n  iolab lab all --quick --out lab-results"
)]
pub struct LabArgs {
    /// Which lab.
    #[command(subcommand)]
    pub which: Which,
}

/// The labs.
#[derive(Debug, clap::Subcommand)]
pub enum Which {
    /// Describe each lab in one line.
    List,
    /// Run every lab and write one HTML report.
    All(LabOpts),
    #[command(about = lab::prefetch::ABOUT, long_about = lab::prefetch::DETAILS)]
    /// seed 000.
    Prefetch(LabOpts),
    #[command(about = lab::cached_reads::ABOUT, long_about = lab::cached_reads::DETAILS)]
    /// seed 001.
    CachedReads(LabOpts),
    #[command(about = lab::small_reads::ABOUT, long_about = lab::small_reads::DETAILS)]
    /// seed 002.
    SmallReads(LabOpts),
    #[command(about = lab::metadata::ABOUT, long_about = lab::metadata::DETAILS)]
    /// seed 003.
    Metadata(LabOpts),
    #[command(about = lab::log_scan::ABOUT, long_about = lab::log_scan::DETAILS)]
    /// seed 004.
    LogScan(LabOpts),
}

/// Removes the scratch directory when dropped (unless kept).
struct Scratch {
    path: PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("iolab: kept {}", self.path.display());
        } else if let Err(e) = std::fs::remove_dir_all(&self.path) {
            eprintln!(
                "iolab: warning: could not remove {}: {e}",
                self.path.display()
            );
        }
    }
}

fn out_dir(o: &LabOpts, name: &str) -> Result<PathBuf, String> {
    let dir = match &o.out {
        Some(d) => d.clone(),
        None => PathBuf::from("iolab-labs").join(format!(
            "{}-{name}",
            chrono::Local::now().format("%Y%m%d-%H%M%S")
        )),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    Ok(dir)
}

/// Runs `iolab lab`.
pub fn execute(a: LabArgs) -> i32 {
    let (labs, opts): (Vec<Box<dyn Lab>>, LabOpts) = match a.which {
        Which::List => {
            for l in lab::all() {
                println!("{:<13} {}", l.name(), l.about());
            }
            println!(
                "\n`iolab lab NAME --help` tells what a lab does; `iolab lab all --quick` runs them all."
            );
            return 0;
        }
        Which::All(o) => (lab::all(), o),
        Which::Prefetch(o) => (vec![Box::new(lab::prefetch::Prefetch)], o),
        Which::CachedReads(o) => (vec![Box::new(lab::cached_reads::CachedReads)], o),
        Which::SmallReads(o) => (vec![Box::new(lab::small_reads::SmallReads)], o),
        Which::Metadata(o) => (vec![Box::new(lab::metadata::Metadata)], o),
        Which::LogScan(o) => (vec![Box::new(lab::log_scan::LogScan)], o),
    };
    let all = labs.len() > 1;
    let size = match opts.size.as_deref().map(units::parse_size).transpose() {
        Ok(s) => s,
        Err(e) => return super::fail(format!("--size: {e}"), 2),
    };
    let base = opts.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !base.is_dir() {
        return super::fail(format!("--dir {}: not a directory", base.display()), 2);
    }
    let name = if all { "all" } else { labs[0].name() };
    let out = match out_dir(&opts, name) {
        Ok(d) => d,
        Err(e) => return super::fail(e, 2),
    };
    let mut store = match db::open_unless(opts.no_store, opts.db.as_deref()) {
        Ok(s) => s,
        Err(e) => return super::fail(e, 2),
    };
    let stop = match stop_on_signals() {
        Ok(s) => s,
        Err(e) => return super::fail(e, 1),
    };
    let mut outcomes = Vec::new();
    for l in &labs {
        let scratch = base.join(format!("iolab-scratch-{}-{}", l.name(), std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&scratch) {
            return super::fail(format!("cannot create {}: {e}", scratch.display()), 2);
        }
        let guard = Scratch {
            path: scratch.clone(),
            keep: opts.keep,
        };
        eprintln!(
            "iolab: lab {}: scratch directory {}",
            l.name(),
            scratch.display()
        );
        let mut progress = |m: &str| eprintln!("iolab: {m}");
        let mut ctx = LabCtx {
            dir: scratch,
            quick: opts.quick,
            size,
            ops: opts.ops,
            stop: &stop,
            store: store.as_mut(),
            progress: &mut progress,
        };
        let o = match l.run(&mut ctx) {
            Ok(o) => o,
            Err(Error::Interrupted) => {
                eprintln!("iolab: interrupted");
                return 130;
            }
            Err(e @ (Error::Input(_) | Error::Refused(_))) => {
                return super::fail(format!("lab {}: {e}", l.name()), 2);
            }
            Err(e) => return super::fail(format!("lab {}: {e}", l.name()), 1),
        };
        match save(&o, &out) {
            Ok(lines) => {
                print!("{}", render::text(&o));
                println!();
                for line in lines {
                    println!("{line}");
                }
                println!();
            }
            Err(e) => return super::fail(e, 1),
        }
        drop(guard);
        outcomes.push(o);
    }
    if all {
        let note = format!(
            "iolab {} on {}{}",
            env!("CARGO_PKG_VERSION"),
            iolab::sys::environment::Environment::capture(&[]).kernel,
            if opts.quick { ", --quick sizes" } else { "" }
        );
        let page = match render::html(&outcomes, &note) {
            Ok(p) => p,
            Err(e) => return super::fail(e, 1),
        };
        let path = out.join("report.html");
        if let Err(e) = super::write_out(&page, Some(&path)) {
            return super::fail(e, 1);
        }
        println!("report of all labs: {}", path.display());
    }
    0
}

/// Writes the outcome's charts (SVG and PNG) and files into `out`; returns
/// the lines telling where they are.
fn save(o: &Outcome, out: &Path) -> Result<Vec<String>, String> {
    let mut lines = Vec::new();
    for (stem, chart) in &o.charts {
        let svg = out.join(format!("{stem}.svg"));
        let png = out.join(format!("{stem}.png"));
        chart.save(&svg)?;
        chart.save(&png)?;
        lines.push(format!("plot: {} (and .png)", svg.display()));
    }
    for (what, path) in &o.files {
        let dest = out.join(path.file_name().unwrap_or_default());
        std::fs::copy(path, &dest).map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
        lines.push(format!("{what}: {}", dest.display()));
    }
    if !o.runs.is_empty() {
        let ids: Vec<String> = o.runs.iter().map(|i| i.to_string()).collect();
        lines.push(format!(
            "stored runs {} (label lab:{}): iolab report {} -o {}.html",
            ids.join(","),
            o.lab,
            ids.join(" "),
            o.lab
        ));
    }
    Ok(lines)
}
