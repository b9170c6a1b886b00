//! `iolab run --flamegraph out.svg`: perf samples this process (all threads,
//! kernel and user stacks) while the jobs run; inferno folds `perf script`'s
//! output and renders the SVG.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Sampling frequency in Hz (odd, to avoid lock-step with timers).
pub const FREQ_HZ: u32 = 2999;

/// A running `perf record` of this process.
pub struct Profiler {
    child: Option<Child>,
    data: PathBuf,
    /// perf's control FIFO (`--control`: enable, disable) and its ack.
    control: Option<(File, File)>,
    _dir: tempfile::TempDir,
}

/// Finds `perf` on PATH.
pub fn find_perf() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("perf"))
        .find(|p| p.is_file())
}

/// A failure of perf itself.
fn perf_err(problem: impl Into<String>) -> Error {
    Error::tool("perf", problem)
}

fn perf_error(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let first: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect();
    let hint = if text.contains("perf_event_paranoid") || text.contains("Permission") {
        " (not permitted: run as root or lower /proc/sys/kernel/perf_event_paranoid)"
    } else {
        ""
    };
    format!("{}{hint}", first.join(" / "))
}

impl Profiler {
    /// Starts sampling this process; returns once perf is recording.
    pub fn start() -> Result<Profiler> {
        Self::attach(std::process::id())
    }

    /// Starts sampling process `pid` (its threads, and the children it
    /// starts from now on); returns once perf is recording.
    pub fn attach(pid: u32) -> Result<Profiler> {
        let perf = find_perf().ok_or_else(|| {
            perf_err("needs perf, which is not installed (Debian: apt-get install linux-perf)")
        })?;
        // A private directory with an unpredictable name (mode 0700).
        let dir = tempfile::Builder::new()
            .prefix("iolab-perf-")
            .tempdir()
            .map_err(|e| Error::io("cannot make a directory for perf's data", e))?;
        let data = dir.path().join("perf.data");
        let (ctl, ack) = (dir.path().join("ctl"), dir.path().join("ack"));
        for f in [&ctl, &ack] {
            crate::sys::fs::mkfifo(f)
                .map_err(|e| Error::io("cannot make perf's control FIFO", e))?;
        }
        let mut child = Command::new(perf)
            .args(["record", "-q", "-g", "-F", &FREQ_HZ.to_string(), "-p"])
            .arg(pid.to_string())
            .arg(format!(
                "--control=fifo:{},{}",
                ctl.display(),
                ack.display()
            ))
            .arg("-o")
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| perf_err(format!("cannot start perf: {e}")))?;
        // perf writes the file header once its events are open.
        let t0 = Instant::now();
        loop {
            if let Some(_status) = child.try_wait().map_err(|e| perf_err(e.to_string()))? {
                let out = child
                    .wait_with_output()
                    .map_err(|e| perf_err(e.to_string()))?;
                return Err(perf_err(format!(
                    "perf record failed: {}",
                    perf_error(&out.stderr)
                )));
            }
            if std::fs::metadata(&data).is_ok_and(|m| m.len() > 0) {
                std::thread::sleep(Duration::from_millis(50));
                break;
            }
            if t0.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                return Err(perf_err("perf record did not start within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Read and write ends both: opening never blocks, and a read of
        // the ack waits at most ACK_WAIT.
        let open = |p: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(p)
        };
        let control = open(&ctl).and_then(|c| Ok((c, open(&ack)?))).ok();
        Ok(Profiler {
            child: Some(child),
            data,
            control,
            _dir: dir,
        })
    }

    /// Stops sampling until [`Self::resume`] (work inside the timed part
    /// that is not the measurement: a `cache=warm` warm-up).
    pub fn pause(&mut self) {
        self.command("disable");
    }

    /// Samples again after [`Self::pause`].
    pub fn resume(&mut self) {
        self.command("enable");
    }

    /// Sends `what` to perf's control FIFO and waits for its ack.
    fn command(&mut self, what: &str) {
        const ACK_WAIT: Duration = Duration::from_secs(2);
        let Some((ctl, ack)) = &mut self.control else {
            return;
        };
        if ctl.write_all(format!("{what}\n").as_bytes()).is_err() {
            return;
        }
        let t0 = Instant::now();
        let mut buf = [0u8; 16];
        while t0.elapsed() < ACK_WAIT {
            match ack.read(&mut buf) {
                Ok(n) if n > 0 => return,
                _ => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Stops sampling and renders the flamegraph SVG to `out`; returns the
    /// number of distinct stacks drawn.
    pub fn finish(self, out: &Path, title: &str) -> Result<usize> {
        let script = self.script()?;
        let svg = render_svg(&script, title)?;
        let samples = svg.1;
        crate::sys::fs::write_atomic(out, &svg.0)?;
        Ok(samples)
    }

    /// Stops sampling; the samples folded (`stack;frames count` lines).
    pub fn finish_folded(self) -> Result<String> {
        fold(&self.script()?)
    }

    /// Stops perf and returns `perf script`'s output.
    fn script(mut self) -> Result<Vec<u8>> {
        let child = self.child.take().expect("perf runs until finish");
        // SAFETY: sending SIGINT to our own child process.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let rec = child
            .wait_with_output()
            .map_err(|e| perf_err(format!("perf record: {e}")))?;
        if !self.data.exists() {
            return Err(perf_err(format!(
                "perf record wrote no data: {}",
                perf_error(&rec.stderr)
            )));
        }
        let script = Command::new(find_perf().ok_or_else(|| perf_err("perf disappeared"))?)
            .arg("script")
            .arg("-i")
            .arg(&self.data)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| perf_err(format!("cannot run perf script: {e}")))?;
        if !script.status.success() {
            return Err(perf_err(format!(
                "perf script failed: {}",
                perf_error(&script.stderr)
            )));
        }
        Ok(script.stdout)
    }
}

impl Drop for Profiler {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Folds `perf script` output and draws it; returns the SVG and the number
/// of distinct stacks.
pub fn render_svg(perf_script: &[u8], title: &str) -> Result<(Vec<u8>, usize)> {
    render_folded(&fold(perf_script)?, title)
}

/// `perf script` output folded into `frame;frame;frame count` lines.
pub fn fold(perf_script: &[u8]) -> Result<String> {
    use inferno::collapse::Collapse;
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(perf_script, &mut folded)
        .map_err(|e| Error::tool("inferno", format!("cannot fold perf samples: {e}")))?;
    Ok(String::from_utf8_lossy(&folded).into_owned())
}

/// A differential flamegraph: the stacks of `after` drawn with their
/// change from `before` (red: more samples in `after`, blue: fewer),
/// `before` scaled to `after`'s total first; the SVG and the number of
/// distinct stacks.
pub fn render_diff(before: &str, after: &str, title: &str) -> Result<(Vec<u8>, usize)> {
    let mut diff = Vec::new();
    let opts = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    inferno::differential::from_readers(opts, before.as_bytes(), after.as_bytes(), &mut diff)
        .map_err(|e| Error::tool("inferno", format!("cannot difference the profiles: {e}")))?;
    render_folded(&String::from_utf8_lossy(&diff), title)
}

/// Draws folded stacks (or differential ones: two counts per line).
pub fn render_folded(text: &str, title: &str) -> Result<(Vec<u8>, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let weight: u64 = lines
        .iter()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    if weight == 0 {
        return Err(perf_err(
            "perf recorded no samples (was the run too short?)",
        ));
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().copied(), &mut svg)
        .map_err(|e| Error::tool("inferno", format!("cannot draw the flamegraph: {e}")))?;
    Ok((svg, lines.len()))
}
