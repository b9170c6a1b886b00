//! `iolab run`: fio's command line and job files, iolab's output. Its
//! command line is [`args`]; a run over many hosts or MPI ranks, [`hosts`].

use crate::cli::{Stderr, db, fio_flags, progress::Shown, write_out};
use iolab::error::RunError;
use iolab::profile::Profiler;
use iolab::render::{self, fio_iolog, fio_logs};
use iolab::runner::{self, Observer, Progress, RunOptions};
use iolab::{Error, Result, job};
use std::path::Path;
use std::time::Duration;

pub mod args;
pub mod hosts;

pub use args::{RunArgs, flag, own_flags, valued};

/// Runs `iolab run`.
pub fn execute(args: RunArgs, job_args: &[String]) -> Result<()> {
    let fio = &args.fio;
    crate::cli::suggest::own_flag_slip(job_args, &own_flags())?;
    if let Some(f) = job_args.iter().find(|a| *a == "-f" || a.starts_with("-f=")) {
        // Every other command takes its format as -f; run follows fio, whose -f is
        // --append-terse: the short form is refused rather than read either way.
        return Err(Error::usage(
            f.as_str(),
            "iolab run writes the format as --output-format=FORMAT, as fio does (fio's -f is --append-terse)",
        ));
    }
    if let Some(what) = &fio.cmdhelp {
        return write_out(&fio_flags::cmdhelp(what)?, None);
    }
    if let Some(what) = &fio.enghelp {
        return write_out(&fio_flags::enghelp(what)?, None);
    }
    if let Some(fz) = &fio.inflate_log {
        return write_out(&fio_flags::inflate_log(fz)?, None);
    }
    if fio.showcmd {
        let files = job::cmdline::parse(job_args)?.files;
        return write_out(&fio_flags::showcmd(&files, &fio.section)?, None);
    }
    let formats = fio_flags::formats(&args.output_format, fio)?;
    if args.explain && formats.iter().any(|f| *f != "normal") {
        return Err(Error::usage(
            "--explain",
            format!(
                "explains after the normal report only, not with --output-format={}: its \
                 output must stay one document; `iolab explain ID --json` gives the \
                 explanation as JSON",
                args.output_format
            ),
        ));
    }
    if fio_flags::debugs(fio, "parse") {
        // fio's debug log goes to stdout: `parse    PID text`.
        let pid = std::process::id();
        let lines: String = (job::parse_debug(job_args)?.iter())
            .map(|l| format!("parse    {pid:<5} {l}\n"))
            .collect();
        write_out(&lines, None)?;
    }
    let mut jobs = match job::jobs_from_args_in(job_args, args.max_jobs, &fio.section) {
        // fio parses global options alone without complaint.
        Err(e) if fio.parse_only && matches!(*e.problem, job::JobProblem::NoJob) => return Ok(()),
        jobs => jobs?,
    };
    if fio.readonly {
        runner::readonly::check(&jobs)?;
    }
    if let Some(dir) = &fio.aux_path {
        if !dir.is_dir() {
            return Err(Error::usage(
                "--aux-path",
                format!("{} is not a directory", dir.display()),
            ));
        }
        for j in &mut jobs {
            j.verify.aux_dir = Some(dir.clone());
        }
    }
    if fio.parse_only {
        return Ok(());
    }
    for (opt, out) in [
        ("--output", &args.output),
        ("--flamegraph", &args.flamegraph),
    ] {
        if let Some(out) = out {
            check_out_dir(opt, out)?;
        }
    }
    if args.stonewall_ranks && args.hosts.is_empty() && iolab::dist::mpi::launched().is_none() {
        return Err(Error::usage(
            "--stonewall-ranks",
            "stops ranks when the first is done: give --hosts, or start iolab with mpirun or srun",
        ));
    }
    if let Some(launcher) = iolab::dist::mpi::launched() {
        return hosts::under_mpi(&args, job_args, &formats, launcher);
    }
    let mut store = args.store.open()?;
    let stop = crate::cli::stop_on_signals()?;
    if !args.hosts.is_empty() {
        return hosts::execute(&args, job_args, &formats, store.as_mut(), &stop);
    }
    let opts = RunOptions {
        allow_overwrite: args.allow_overwrite,
        drop_caches: args.drop_caches,
    };
    let mut flame = Flame {
        profiler: None,
        wanted: args.flamegraph.is_some(),
    };
    let mut shown = Shown::new().lines_every(
        Duration::from_millis(fio.eta_newline.or(fio.eta_interval).unwrap_or(1000)),
        fio.eta_newline.is_some(),
    );
    let result = runner::run_with(jobs, &opts, &stop, &mut flame, &mut shown)?;
    // Without --verbose, diagnostics of a run that worked stay off stderr
    // (fio's test harness fails a run whose stderr is not empty): the
    // warnings are in the output itself. An interrupted run (exit 130)
    // still says where its partial results went.
    let loud = args.verbose || result.interrupted;
    let say = |what: &str| {
        if loud {
            Stderr.step(what);
        }
    };
    for w in &result.warnings {
        say(&format!("warning: {w}"));
    }
    let here = super::here_showing(&formats, || Ok(render::here::run_files(&result)))?;
    let text = formats
        .iter()
        .map(|f| render::run(&result, f, &here))
        .collect::<Result<String>>()?;
    write_out(&text, args.output.as_deref())?;
    let command = db::command_line();
    // A run that cannot be stored still shows its results and writes its
    // files; the failure is the command's error at the end (exit 1).
    let mut not_stored = None;
    let mut stored = None;
    if let Some(st) = &mut store {
        match st.insert_run(&result, &command, args.store.label(), None) {
            Ok(id) => {
                stored = Some(id);
                say(&format!("stored as run {id} in {}", st.path().display()))
            }
            Err(e) => not_stored = Some(e),
        }
    }
    if args.explain {
        let e = super::explain::of_result(&result, store.as_ref(), stored)?;
        let text = super::explain::text(&e);
        match &args.output {
            None => write_out(&text, None)?,
            Some(p) => append_log(p, |w| w.write_all(text.as_bytes()))?,
        }
    }
    if let (Some(p), Some(svg)) = (flame.profiler.take(), &args.flamegraph) {
        let n = p.finish(svg, &command)?;
        say(&format!(
            "flamegraph ({n} distinct stacks) written to {}",
            svg.display()
        ));
    }
    for log in fio_logs::logs(&result) {
        if log.append {
            append_log(&log.path, |w| log.write_to(w))?;
        } else {
            iolab::sys::fs::write_atomic_with(&log.path, |tmp| {
                let mut w = std::io::BufWriter::new(tmp.as_file());
                log.write_to(&mut w)?;
                std::io::Write::flush(&mut w)
            })?;
        }
        say(&format!("wrote {}", log.path.display()));
    }
    for log in fio_iolog::iolog_files(&result) {
        append_log(&log.path, |w| log.write_to(w))?;
        say(&format!("wrote {}", log.path.display()));
    }
    if args.fio.bandwidth_log {
        for (path, text) in fio_logs::aggregate_bw(&result) {
            iolab::sys::fs::write_atomic(&path, text.as_bytes())?;
            say(&format!("wrote {}", path.display()));
        }
    }
    if result.interrupted {
        eprintln!("iolab: the results above cover only the part that ran");
    }
    result.complete(&stop)?;
    not_stored.map_or(Ok(()), |e| Err(e.into()))
}

/// Adds a log at the end of its file (fio's `per_job_logs=0`).
fn append_log(
    path: &std::path::Path,
    write_to: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    let fail = |e| Error::io(format!("cannot write {}", path.display()), e);
    let f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(fail)?;
    let mut w = std::io::BufWriter::new(f);
    write_to(&mut w)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(fail)
}

/// Profiles the timed part of the run when --flamegraph is given.
struct Flame {
    profiler: Option<Profiler>,
    wanted: bool,
}

impl Observer for Flame {
    fn timed_start(&mut self) -> std::result::Result<(), RunError> {
        if self.wanted {
            self.profiler = Some(Profiler::start().map_err(|e| match e {
                RunError::Tool { problem, .. } => RunError::tool("--flamegraph", problem),
                other => other,
            })?);
        }
        Ok(())
    }

    fn untimed_start(&mut self) {
        if let Some(p) = &mut self.profiler {
            p.pause();
        }
    }

    fn untimed_end(&mut self) {
        if let Some(p) = &mut self.profiler {
            p.resume();
        }
    }
}

/// The directory of an output file must exist.
fn check_out_dir(opt: &str, out: &Path) -> Result<()> {
    if out.is_dir() {
        return Err(Error::usage(
            format!("{opt} {}", out.display()),
            "is a directory; name a file",
        ));
    }
    iolab::sys::fs::replaceable(out)?;
    match out.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => Err(Error::usage(
            format!("{opt} {}", out.display()),
            format!("directory {} does not exist", dir.display()),
        )),
        _ => Ok(()),
    }
}
