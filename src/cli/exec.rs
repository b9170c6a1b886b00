//! `iolab exec [--cache cold|warm|keep] [--files PATH...] [--repeat N] --
//! CMD ARGS`: the user's program as the workload, timed and counted under
//! a set page-cache state, stored like a run.

use super::db::{self, StoreOpts};
use super::progress::Shown;
use iolab::exec::{self, ExecRequest, flame};
use iolab::job::CachePolicy;
use iolab::render;
use iolab::sys::held::Out;
use iolab::{Error, Result};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Before each run the named files (--files; directories: every file under them)
are put in the cache state asked (cold: evicted; warm: read in; keep: left as
they are) and their residency measured; the command runs and is timed from
exec to exit. After it: its CPU user/sys time and faults (wait4), the bytes
and calls it read and wrote (/proc/PID/io of it and every child it waited
for), the named files' cache again (hits: pages it read that were cached;
misses: pages that came in), and iostat's columns of the devices under the
files (or the working directory). Each invocation is stored as one run (kind
exec) with a repetition per successful run: `history`, `show`, `report` and
`compare` take it. A run that fails is shown and stored but left out of the
figures; iolab then exits with its status. With --quiet the command's output
is discarded too (and iolab prints no steps). Ctrl-C stops the command (SIGTERM,
then SIGKILL after 2 s) and keeps the runs so far.

Examples:
  iolab exec --cache cold --files big.log -- cat big.log
  iolab exec --cache cold --files logs/ --repeat 5 -- ./scan logs/
  iolab exec --repeat 3 --flamegraph scan.svg -- ./scan logs/
  iolab exec --trace -- ./scan logs/      # + per-call latency histograms
  iolab exec --disk /mnt/slow -- rsync -a /data/src/ dst/   # runs in /mnt/slow
  iolab compare --exec 'dd if=f of=/dev/null bs=4k' 'dd if=f of=/dev/null bs=1M' \\
                --repeat 5 --cache cold --files f";

/// `iolab exec ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ExecArgs {
    /// The command's cache options.
    #[command(flatten)]
    pub how: HowArgs,
    /// Runs to make.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,
    /// Output format: normal or json.
    #[arg(short = 'f', long, default_value = "normal",
          value_parser = super::exec_formats(), value_name = "FORMAT")]
    pub output_format: String,
    /// After the report, say why the command went as it did (`iolab
    /// explain`): its dominant limit with the figures (normal output only).
    #[arg(long)]
    pub explain: bool,
    /// Where the runs are stored.
    #[command(flatten)]
    pub store: StoreOpts,
    /// The command to run, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// What `exec` and `compare --exec` share: the cache state, the files,
/// where the output goes, the profile, the disk.
#[derive(Debug, Clone, clap::Args)]
pub struct HowArgs {
    /// Page-cache state of the --files before each run: cold, warm or keep.
    #[arg(long, default_value = "keep", value_parser = ["cold", "warm", "keep"], value_name = "STATE")]
    pub cache: String,
    /// Files or directories (recursively) whose cache is set and measured.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Profile the runs with perf into this SVG; with several runs also
    /// the first against the rest (FILE.first-vs-rest.svg); with
    /// compare --exec, B against A.
    #[arg(long, value_name = "FILE")]
    pub flamegraph: Option<PathBuf>,
    /// Trace each run's system calls (eBPF, as `iolab trace`): per-call
    /// counts and latency histograms kept with the run.
    #[arg(long)]
    pub trace: bool,
    /// Run the command in DIR, a mounted `iolab disk` (its files default to DIR).
    #[arg(long, value_name = "DIR")]
    pub disk: Option<PathBuf>,
}

impl HowArgs {
    /// The request for `command` (`json`: its stdout goes to stderr).
    pub fn request(&self, command: Vec<String>, repeat: u32, json: bool) -> Result<ExecRequest> {
        if let Some(p) = &self.flamegraph {
            if p.extension().is_none_or(|e| e != "svg") {
                return Err(Error::usage(
                    format!("--flamegraph {}", p.display()),
                    "a flamegraph is an SVG: name it .svg",
                ));
            }
            super::check_picture("--flamegraph", p)?;
            let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
            if let Some(d) = parent.filter(|d| !d.is_dir()) {
                return Err(Error::usage(
                    format!("--flamegraph {}", p.display()),
                    format!("{} is no directory: make it first", d.display()),
                ));
            }
        }
        let mut files = self.files.clone();
        if let Some(d) = &self.disk {
            use iolab::disk::client::Found;
            match iolab::disk::client::status(Some(d)) {
                Ok(found) if found.iter().any(|f| matches!(f, Found::Running(_))) => {}
                Ok(found) if !found.is_empty() => {
                    return Err(Error::usage(
                        format!("--disk {}", d.display()),
                        "this iolab disk's daemon is gone: `iolab disk down DIR`, then up again",
                    ));
                }
                _ => {
                    return Err(Error::usage(
                        format!("--disk {}", d.display()),
                        "not a mounted iolab disk (make one with `iolab disk up DIR`)",
                    ));
                }
            }
            if files.is_empty() {
                files.push(d.clone());
            }
        }
        // iolab's --quiet also quiets the command (its output discarded).
        let quiet = super::progress::ui().quiet;
        Ok(ExecRequest {
            command,
            cache: match self.cache.as_str() {
                "cold" => CachePolicy::Cold,
                "warm" => CachePolicy::Warm,
                _ => CachePolicy::Keep,
            },
            files,
            repeat,
            stdout: match (quiet, json) {
                (true, _) => Out::Null,
                (false, true) => Out::Stderr,
                (false, false) => Out::Inherit,
            },
            stderr: if quiet { Out::Null } else { Out::Inherit },
            profile: self.flamegraph.is_some(),
            trace: self.trace,
            cwd: self.disk.clone(),
        })
    }
}

/// Runs `iolab exec`.
pub fn execute(a: ExecArgs) -> Result<()> {
    let json = a.output_format != "normal";
    if a.explain && json {
        return Err(iolab::Error::usage(
            "--explain",
            "explains after the normal output only: `iolab explain ID --json` gives it as JSON",
        ));
    }
    let req = a.how.request(a.command.clone(), a.repeat, json)?;
    req.check()?;
    let mut store = a.store.open()?;
    let stop = super::stop_on_signals()?;
    let mut e = exec::run(&req, &stop, &mut Shown::new())?;
    // The picture is drawn before the runs are stored, and its failure
    // reported after: the runs are kept either way.
    let mut picture_failed = None;
    if let Some(p) = &a.how.flamegraph {
        let title = format!("iolab exec: {}", e.command_line());
        match e.profiles.is_empty() {
            true => e.warnings.push("no flamegraph: no run was profiled".into()),
            false => match flame::write_runs(&e.profiles, p, &title) {
                Ok(w) => e.flamegraph = Some(w),
                Err(err) => picture_failed = Some(err),
            },
        }
    }
    let mut not_stored = None;
    if let Some(st) = &mut store {
        match exec::store::save(st, &e, &db::command_line(), a.store.label()) {
            Ok(id) => e.run = Some(id),
            Err(err) => not_stored = Some(err),
        }
    }
    let mut shown = render::exec(&e, &a.output_format)?;
    if req.stdout == Out::Inherit {
        // The command's output came first, perhaps without a last newline.
        shown.insert(0, '\n');
    }
    super::write_out(&shown, None)?;
    if a.explain {
        let env = iolab::sys::environment::Environment::capture(
            &e.watched(),
            iolab::disk::state::injected_at,
        );
        let found = match &store {
            Some(st) => iolab::explain::ceilings::find(st, &env)?,
            None => Default::default(),
        };
        let why = iolab::explain::explain(
            iolab::explain::evidence::Evidence::of_exec(&e, &env),
            found,
            e.run,
        );
        super::write_out(&super::explain::text(&why), None)?;
    }
    if let Some(err) = not_stored {
        return Err(err.into());
    }
    if let Some(err) = picture_failed {
        return Err(err.into());
    }
    if stop.signal().is_some() {
        return Err(iolab::Error::interrupted(&stop));
    }
    e.failure().map_or(Ok(()), |f| Err(f.into()))
}
