//! `iolab disk up|status|set|crash|down`: slow and faulty disks on demand.

use iolab::Result;
use iolab::disk::client::{self, Down};
use iolab::disk::{Spec, daemon, state};
use iolab::metrics::histogram::LatencyHistogram;
use iolab::render::disk::{status_text, up_text};
use iolab::render::json::pretty;
use iolab::runner::StopFlag;
use std::io::Write;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Rules (each flag may be given several times; OPS is read, write, flush, meta or
all, joined with +; WHERE is a byte range START-END or, on the file layer, a
path glob):
  --delay [OPS=]TIME[@WHERE]        1ms, 1ms~200us (uniform jitter),
                                    normal:1ms,200us, lognormal:1ms,500us,
                                    quantiles:50=1ms,99=8ms, hist:RUN (the
                                    latencies of stored run RUN)
  --fail  [OPS=]ERRNO@SHARE[@WHERE] EIO@0.01 fails 1% of the operations
  --fail  [OPS=]ERRNO@after=SIZE    ENOSPC@after=100MiB: every write past it
  --bw    [OPS=]RATE                100MiB: bytes a second (token bucket)
  --iops  [OPS=]N                   operations a second

The block layer (default) is dm-delay's: a FUSE daemon serves an image, a loop
device with direct I/O sits on it, ext4 (or --fs xfs) on that is mounted at
DIR. The page cache is above the delay: buffered re-reads are fast, O_DIRECT
and cache misses pay it. The kernel gives the loop device a readahead of its
own (128 or 2560 KiB on Linux 6.18), which sets how fast buffered scans go
under a delay: --read-ahead KB fixes it. Needs root, /dev/fuse and
/dev/loop-control.

The file layer (--layer fs --backing DIR2) serves the existing directory DIR2
at DIR through FUSE: every operation (stat, open, read, write, fsync, mkdir,
rename, unlink, ...) passes the rules, with globs matched against paths
relative to DIR2 (*.log, logs/*). For metadata experiments: attributes are
not cached, so each stat reaches the rules; file data is cached only while a
file is open (O_DIRECT: not at all). No crash (that is the block layer's).
Needs root and /dev/fuse.

Examples:
  iolab disk up /mnt/slow --size 1G --delay 1ms
  iolab disk set /mnt/slow --delay read=10ms --fail read=EIO@0.01
  iolab disk status /mnt/slow
  iolab disk crash /mnt/slow       # drop every write not yet fsynced, remount
  iolab disk down /mnt/slow
  iolab disk up /mnt/meta --layer fs --backing /srv/data --delay meta=2ms
  iolab disk set /mnt/meta --fail read=EIO@1@*.log";

/// `iolab disk ...`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct DiskArgs {
    /// What to do.
    #[command(subcommand)]
    pub cmd: DiskCmd,
}

/// The rules, as flags (shared by `up` and `set`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RuleArgs {
    /// Delay: [OPS=]TIME[@WHERE] (1ms, read=normal:1ms,200us).
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub delay: Vec<String>,
    /// Errors: [OPS=]ERRNO@SHARE or ERRNO@after=SIZE (EIO@0.01).
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub fail: Vec<String>,
    /// Bandwidth cap: [OPS=]BYTES a second (100MiB).
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub bw: Vec<String>,
    /// IOPS cap: [OPS=]N a second.
    #[arg(long, value_name = "RULE", allow_hyphen_values = true)]
    pub iops: Vec<String>,
    /// Results database `hist:RUN` reads (default: $IOLAB_DB, else
    /// ~/.local/share/iolab/iolab.db).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl RuleArgs {
    /// The rules as (flag, value) pairs, in flag order; `hist:RUN` read
    /// from the results database.
    pub fn pairs(&self) -> Result<Vec<(String, String)>> {
        let mut out = Vec::new();
        for (flag, list) in [
            ("delay", &self.delay),
            ("fail", &self.fail),
            ("bw", &self.bw),
            ("iops", &self.iops),
        ] {
            out.extend(list.iter().map(|t| (flag.to_string(), t.clone())));
        }
        if self.delay.iter().any(|d| d.contains("hist:")) {
            let store = super::db::DbArg {
                db: self.db.clone(),
            }
            .open_read_only()?;
            let latencies = |id: i64| {
                let run = store
                    .run(id)
                    .and_then(|r| r.result())
                    .map_err(|e| e.to_string())?;
                let mut h = [LatencyHistogram::new(), LatencyHistogram::new()];
                for e in run.entries() {
                    h[0].merge(&e.total.read.lat);
                    h[1].merge(&e.total.write.lat);
                }
                Ok(h)
            };
            iolab::disk::hist::resolve(&mut out, &latencies)?;
        }
        Ok(out)
    }
}

/// Disk commands.
#[derive(Debug, clap::Subcommand)]
pub enum DiskCmd {
    /// Build a slow disk and mount a file system on it at DIR.
    Up {
        /// Where to mount it (made if missing; must be empty).
        dir: PathBuf,
        /// Size of the image (1024-based: 1G, 512MiB).
        #[arg(long, default_value = "1G")]
        size: String,
        /// The layer: block (a file system on a slow device) or fs (a
        /// pass-through over --backing).
        #[arg(long, default_value = "block")]
        layer: String,
        /// File system made on the block layer: ext4 or xfs.
        #[arg(long = "fs", default_value = "ext4")]
        fs: String,
        /// Keep the image in FILE (made if missing, reused if present)
        /// instead of memory.
        #[arg(long, value_name = "FILE")]
        image: Option<PathBuf>,
        /// The directory the file layer serves at DIR (--layer fs); path
        /// globs of the rules match paths relative to it.
        #[arg(long, value_name = "DIR2")]
        backing: Option<PathBuf>,
        /// Mount options of the file system (commit=60).
        #[arg(long, value_name = "OPTS", default_value = "")]
        mount_options: String,
        /// Readahead of the block layer's loop device in KiB (default:
        /// the kernel's, 128 or 2560 on Linux 6.18; most disks have 128):
        /// how far ahead buffered sequential reads fetch, which sets how
        /// many requests wait out the delay at once.
        #[arg(long, value_name = "KB")]
        read_ahead: Option<u32>,
        /// How the block layer's daemon takes FUSE requests: auto
        /// (io_uring when /sys/module/fuse/parameters/enable_uring is on,
        /// else read(2) on /dev/fuse), uring (or fail), or dev.
        #[arg(long, default_value = "auto", value_parser = ["auto", "uring", "dev"])]
        transport: String,
        /// Keep idle CPUs polling while the disk is up (holds
        /// /dev/cpu_dma_latency at 0; the machine's setting comes back at
        /// `down`): a halted virtual CPU can take 50 us or more to wake,
        /// which would lengthen microsecond delays.
        #[arg(long)]
        no_halt: bool,
        /// Seed of the random draws (delays, error shares).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Serve in this process until Ctrl-C, instead of in the background.
        #[arg(long)]
        foreground: bool,
        #[command(flatten)]
        rules: RuleArgs,
    },
    /// Rules and counters of the disk at DIR, or of every disk.
    Status {
        /// The disk's directory (default: all).
        dir: Option<PathBuf>,
        /// Output: normal or json.
        #[arg(short = 'f', long = "output-format", default_value = "normal", value_parser = ["normal", "json"])]
        format: String,
    },
    /// Replace the rules of the disk at DIR (no rules: full speed).
    Set {
        /// The disk's directory.
        dir: PathBuf,
        #[command(flatten)]
        rules: RuleArgs,
    },
    /// Power loss: drop every write not yet made durable by fsync, remount.
    Crash {
        /// The disk's directory.
        dir: PathBuf,
    },
    /// Unmount the disk at DIR and remove everything it made.
    Down {
        /// The disk's directory.
        dir: PathBuf,
    },
    /// The daemon behind `up` (started by it).
    #[command(hide = true)]
    Serve {
        /// The disk's private directory.
        run: PathBuf,
    },
}

/// Runs `iolab disk ...`.
pub fn execute(a: DiskArgs) -> Result<()> {
    match a.cmd {
        DiskCmd::Up {
            dir,
            size,
            layer,
            fs,
            image,
            backing,
            mount_options,
            read_ahead,
            transport,
            no_halt,
            seed,
            foreground,
            rules,
        } => {
            let size = iolab::disk::rules::parse_size(&size).map_err(|e| {
                iolab::Error::usage(
                    format!("--size {size}"),
                    format!("a size (1G, 512MiB): {e}"),
                )
            })?;
            let mut spec = Spec {
                dir: std::path::absolute(&dir).unwrap_or(dir),
                layer,
                size,
                fs,
                image: image.map(|i| std::path::absolute(&i).unwrap_or(i)),
                backing: backing.map(|b| std::path::absolute(&b).unwrap_or(b)),
                read_ahead_kb: read_ahead,
                transport,
                no_halt,
                mount_options,
                rules: rules.pairs()?,
                seed,
                made_dir: false,
                made_parents: Vec::new(),
            };
            // Caught from the start: a signal at any moment of `up` undoes it.
            let stop =
                StopFlag::on_signals().map_err(|e| iolab::Error::io("cannot catch signals", e))?;
            let run = client::prepare(&mut spec)?;
            if foreground {
                let mut ready = |r: std::result::Result<&state::State, &iolab::disk::DiskError>| {
                    if let Ok(st) = r {
                        let _ = super::write_out(
                            &format!("{}  serving until Ctrl-C\n", up_text(st)),
                            None,
                        );
                    }
                };
                daemon::serve(&spec, &run, &stop, &mut ready)?;
                let dir = spec.dir.display();
                return match stop.signal() {
                    Some(_) => {
                        super::write_out(&format!("{dir} removed\n"), None)?;
                        Err(iolab::Error::interrupted(&stop))
                    }
                    None => super::write_out(&format!("{dir} removed\n"), None),
                };
            }
            let exe = std::env::current_exe()
                .map_err(|e| iolab::Error::io("cannot find iolab's own path", e))?;
            let st = client::start(&exe, &run, &stop)?;
            super::write_out(&up_text(&st), None)
        }
        DiskCmd::Status { dir, format } => {
            let found = client::status(dir.as_deref())?;
            match format.as_str() {
                "json" => super::write_out(
                    &format!("{}\n", pretty(&serde_json::json!({ "disks": found }))),
                    None,
                ),
                _ => super::write_out(&status_text(&found), None),
            }
        }
        DiskCmd::Set { dir, rules } => {
            let s = client::set(&dir, rules.pairs()?)?;
            let found = [client::Found::Running(Box::new(s))];
            super::write_out(&status_text(&found), None)
        }
        DiskCmd::Crash { dir } => {
            let dropped = client::crash(&dir)?;
            super::write_out(
                &format!(
                    "power lost at {}: {dropped} bytes written to the device but not flushed were dropped \
                     (and whatever was still only in the page cache); mounted again\n",
                    dir.display()
                ),
                None,
            )
        }
        DiskCmd::Down { dir } => {
            let how = client::down(&dir)?;
            let note = match how {
                Down::ByDaemon { lazy: false } => "",
                Down::ByDaemon { lazy: true } => {
                    " (it was busy for 5 s, a file still open under it, so it was detached lazily: \
                     its file system and loop device go once the last file closes)"
                }
                Down::Cleaned => " (its daemon was gone: cleaned up by hand)",
            };
            super::write_out(&format!("{} removed{note}\n", dir.display()), None)
        }
        DiskCmd::Serve { run } => serve(run),
    }
}

/// The background daemon: serve the disk of `run`'s state, telling `up`
/// on stdout once DIR is usable.
fn serve(run: PathBuf) -> Result<()> {
    let st = state::load(&run).ok_or_else(|| {
        iolab::Error::usage(
            run.display().to_string(),
            "no state.json: iolab disk serve is started by iolab disk up",
        )
    })?;
    let stop = StopFlag::on_signals().map_err(|e| iolab::Error::io("cannot catch signals", e))?;
    // The terminal `up` ran in may close: the disk stays.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGHUP, std::sync::Arc::default());
    let mut ready = |r: std::result::Result<&state::State, &iolab::disk::DiskError>| {
        let line = match r {
            Ok(_) => client::READY.to_string(),
            // One line: `up` reads the first.
            Err(e) => format!("{}{}", client::FAILED, e.to_string().replace('\n', "; ")),
        };
        let mut so = std::io::stdout().lock();
        let _ = writeln!(so, "{line}");
        let _ = so.flush();
    };
    daemon::serve(&st.spec, &run, &stop, &mut ready).map_err(Into::into)
}
