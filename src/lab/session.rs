//! Running labs for a user: each lab gets a scratch directory (removed
//! afterwards unless kept), its charts are saved as SVG and PNG and its
//! files copied into the output directory, and several labs make one HTML
//! page. The CLI only shows what this returns.

use super::{Lab, LabCtx, Outcome};
use crate::error::{Error, Result};
use crate::registry::Entry;
use crate::render::Here;
use crate::render::chart::{Footnote, ImageFormat};
use crate::runner::{Progress, StopFlag};
use crate::store::Store;
use crate::sys::environment::Environment;
use crate::sys::fs::write_atomic;
use std::path::{Path, PathBuf};

/// What the user asked of every lab.
#[derive(Debug, Clone, Default)]
pub struct LabOptions {
    /// Small sizes and fewer steps.
    pub quick: bool,
    /// Where scratch directories go (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Keep the scratch directories.
    pub keep: bool,
    /// Main file size instead of the lab's own choice.
    pub size: Option<u64>,
    /// Operations per run instead of the lab's own choice.
    pub ops: Option<u64>,
    /// Where charts and the report go (default `./iolab-labs/DATE-TIME-NAME/`).
    pub out: Option<PathBuf>,
    /// Delays of injected slow disks (`--delay 1ms,10ms`, log-scan).
    pub delays: Vec<String>,
    /// Run the bare reference loop beside iolab's runs (prefetch).
    pub reference: bool,
}

/// One lab done: its outcome, and one line per file saved.
#[derive(Debug)]
pub struct Finished {
    /// What the lab found.
    pub outcome: Outcome,
    /// Where its charts, files and stored runs are, one line each.
    pub saved: Vec<String>,
}

/// Labs run one after the other into one output directory.
pub struct Session<'a> {
    opts: LabOptions,
    base: PathBuf,
    out: PathBuf,
    store: Option<&'a mut Store>,
    stop: &'a StopFlag,
}

impl<'a> Session<'a> {
    /// Checks the scratch location and makes the output directory (named
    /// after `name` unless `--out` is given).
    pub fn new(
        opts: LabOptions,
        name: &str,
        store: Option<&'a mut Store>,
        stop: &'a StopFlag,
    ) -> Result<Session<'a>> {
        let base = opts.dir.clone().unwrap_or_else(|| PathBuf::from("."));
        if !base.is_dir() {
            return Err(Error::usage(
                format!("--dir {}", base.display()),
                "not a directory",
            ));
        }
        let out = opts.out.clone().unwrap_or_else(|| {
            PathBuf::from("iolab-labs").join(format!(
                "{}-{name}",
                chrono::Local::now().format("%Y%m%d-%H%M%S")
            ))
        });
        std::fs::create_dir_all(&out)
            .map_err(|e| Error::io(format!("--out {}", out.display()), e))?;
        Ok(Session {
            opts,
            base,
            out,
            store,
            stop,
        })
    }

    /// The output directory.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// Runs one lab in a fresh scratch directory and saves what it made.
    pub fn run(&mut self, lab: &Entry<dyn Lab>, progress: &mut dyn Progress) -> Result<Finished> {
        let scratch = self
            .base
            .join(format!("iolab-scratch-{}-{}", lab.name, std::process::id()));
        std::fs::create_dir_all(&scratch)
            .map_err(|e| Error::io(format!("cannot create {}", scratch.display()), e))?;
        progress.step(&format!(
            "lab {}: scratch directory {}",
            lab.name,
            scratch.display()
        ));
        let ran = {
            let mut ctx = LabCtx {
                lab: lab.name,
                dir: scratch.clone(),
                quick: self.opts.quick,
                size: self.opts.size,
                ops: self.opts.ops,
                delays: &self.opts.delays,
                reference: self.opts.reference,
                stop: self.stop,
                store: self.store.as_deref_mut(),
                progress,
            };
            lab.item.run(&mut ctx)
        };
        // Saved before the scratch directory goes: files may live there.
        let finished = ran.and_then(|outcome| {
            let saved = save(&outcome, &self.out, &here(&[]).footnote())?;
            Ok(Finished { outcome, saved })
        });
        if self.opts.keep {
            progress.step(&format!("kept {}", scratch.display()));
        } else if let Err(e) = std::fs::remove_dir_all(&scratch) {
            progress.warning(&format!("could not remove {}: {e}", scratch.display()));
        }
        finished
    }

    /// Writes every outcome into one HTML page in the output directory.
    pub fn report(&self, outcomes: &[Outcome]) -> Result<PathBuf> {
        let scratch = std::fs::canonicalize(&self.base).unwrap_or_else(|_| self.base.clone());
        let here = here(&[scratch]);
        let made = here.footnote();
        let note = format!(
            "made {} on host {} by iolab {} ({}){}",
            made.date,
            made.host,
            made.version,
            here.env.kernel,
            if self.opts.quick {
                ", --quick sizes"
            } else {
                ""
            }
        );
        let env = crate::render::report::env_table(&here.env, env!("CARGO_PKG_VERSION"));
        let path = self.out.join("report.html");
        let page = super::page::html(outcomes, &note, &env, &made)?;
        write_atomic(&path, page.as_bytes())?;
        Ok(path)
    }
}

/// Where and when the labs run, for render: this machine (with the file
/// systems of `files`), now, times in local time.
fn here(files: &[PathBuf]) -> Here {
    Here::new(
        Environment::capture(files, crate::disk::state::injected_at),
        std::time::SystemTime::now(),
        crate::metrics::format::local_time,
    )
}

/// Writes the outcome's charts (SVG and PNG, footnoted with `note`) and
/// files into `out`; returns the lines telling where they are.
fn save(o: &Outcome, out: &Path, note: &Footnote) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for (stem, chart) in &o.charts {
        let svg = out.join(format!("{stem}.svg"));
        write_atomic(&svg, &chart.image(ImageFormat::Svg, note)?)?;
        let png = out.join(format!("{stem}.png"));
        write_atomic(&png, &chart.image(ImageFormat::Png, note)?)?;
        lines.push(format!("plot: {} (and .png)", svg.display()));
    }
    for (what, path) in &o.files {
        let dest = out.join(path.file_name().unwrap_or_default());
        std::fs::copy(path, &dest)
            .map_err(|e| Error::io(format!("cannot copy {}", path.display()), e))?;
        lines.push(format!("{what}: {}", dest.display()));
    }
    if !o.runs.is_empty() {
        let ids: Vec<String> = o.runs.iter().map(|i| i.to_string()).collect();
        lines.push(format!(
            "stored runs {} (label lab:{}): iolab report {} -o {}.html",
            id_ranges(&o.runs),
            o.lab,
            ids.join(" "),
            o.lab
        ));
    }
    Ok(lines)
}

/// Run ids as runs of consecutive ones: `5-10,15,17-20` (a lab repeating
/// its passes stores a hundred).
fn id_ranges(ids: &[i64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        out.push(match j > i {
            true => format!("{}-{}", ids[i], ids[j]),
            false => ids[i].to_string(),
        });
        i = j + 1;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn id_ranges_join_consecutive_ids() {
        assert_eq!(super::id_ranges(&[5, 6, 7, 9, 11, 12]), "5-7,9,11-12");
        assert_eq!(super::id_ranges(&[3]), "3");
        assert_eq!(super::id_ranges(&[]), "");
    }
}
