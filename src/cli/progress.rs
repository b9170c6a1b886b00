//! Progress on stderr: the steps of long work (`iolab: sweep point 2/4:
//! ...`), and while jobs run a live line with the phase (layout, evict,
//! run, repetition k/n), IOPS, bandwidth, elapsed time and ETA. On a
//! terminal it is an indicatif bar redrawn in place; elsewhere nothing
//! unless `--eta=always` (fio's flag), which prints plain lines, at most
//! one a second. `--quiet` keeps steps and progress off stderr; warnings and
//! errors still show.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iolab::metrics::clock::now_ns;
use iolab::metrics::format::{bytes_iec, si};
use iolab::runner::progress::LIVE_NS;
use iolab::runner::{Live, Phase, Progress};
use iolab::tree::ops::ops_done;
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// When to show live progress (fio's `--eta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Eta {
    /// On a terminal (stderr) only.
    #[default]
    Auto,
    /// Also when stderr is not a terminal: plain lines, at most one a second.
    Always,
    /// Never.
    Never,
}

/// The global flags that say what goes on stderr.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ui {
    /// `--eta`.
    pub eta: Eta,
    /// `--quiet`.
    pub quiet: bool,
}

static UI: OnceLock<Ui> = OnceLock::new();

/// Keeps the global flags for the rest of the command (set once, by main).
pub fn init(ui: Ui) {
    let _ = UI.set(ui);
}

/// The global flags (the defaults before [`init`]).
pub fn ui() -> Ui {
    UI.get().copied().unwrap_or_default()
}

/// Most characters of a step in the bar's label.
const STEP_CHARS: usize = 32;

/// How live progress shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    /// A bar redrawn in place (stderr is a terminal).
    Bar,
    /// A plain line every so often.
    Lines,
    /// Not at all.
    Off,
}

/// Prints an `iolab: ...` line on stderr, above the bar if one shows.
fn line(bar: Option<&ProgressBar>, text: &str) {
    match bar {
        Some(b) => b.suspend(|| eprintln!("iolab: {text}")),
        None => eprintln!("iolab: {text}"),
    }
}

/// Steps, warnings and live progress on stderr, as the global flags say.
pub struct Shown {
    show: Show,
    quiet: bool,
    /// Plain lines at most this often.
    every: Duration,
    bar: Option<ProgressBar>,
    /// The step the runs belong to (`sweep point 2/4`).
    step: String,
    phase: Option<Phase>,
    prev: Option<Live>,
    /// What an I/O is called in the rate (`IOPS`; `ops/s` for trees).
    unit: &'static str,
    /// The run says how far it is: the bar shows it.
    known: bool,
    last_line: Option<Instant>,
}

impl Shown {
    /// As `--eta` and `--quiet` say, for stderr as it is.
    pub fn new() -> Shown {
        let ui = ui();
        let show = match ui.eta {
            _ if ui.quiet => Show::Off,
            Eta::Never => Show::Off,
            _ if std::io::stderr().is_terminal() => Show::Bar,
            Eta::Always => Show::Lines,
            Eta::Auto => Show::Off,
        };
        Shown {
            show,
            quiet: ui.quiet,
            every: Duration::from_secs(1),
            bar: None,
            step: String::new(),
            phase: None,
            prev: None,
            unit: "IOPS",
            known: false,
            last_line: None,
        }
    }

    /// Plain lines every `every` (fio's `--eta-interval`), or, for
    /// `newline` (fio's `--eta-newline`), plain lines even on a terminal.
    pub fn lines_every(mut self, every: Duration, newline: bool) -> Shown {
        self.every = every;
        if newline && self.show == Show::Bar {
            self.show = Show::Lines;
        }
        self
    }

    /// What the progress is about: the step, then the phase.
    fn label(&self) -> String {
        match (self.step.as_str(), self.phase) {
            (step, None) => step.to_string(),
            ("", Some(phase)) => phase.to_string(),
            (step, Some(phase)) => format!("{step} · {phase}"),
        }
    }

    /// Shows that the label changed.
    fn relabel(&mut self) {
        let show = self.show;
        match show {
            Show::Bar => self.show_bar(),
            Show::Lines if self.line_due() => eprintln!("iolab: {}", self.label()),
            Show::Lines | Show::Off => {}
        }
    }

    /// True when a plain line may be printed now (at most one every
    /// `every`, whether it names a phase or has figures); it then counts
    /// as printed.
    fn line_due(&mut self) -> bool {
        let due = self.last_line.is_none_or(|t| t.elapsed() >= self.every);
        if due {
            self.last_line = Some(Instant::now());
        }
        due
    }

    fn show_bar(&mut self) {
        let label = self.label();
        let known = self.known;
        let bar = self.bar.get_or_insert_with(|| {
            let b = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        let template = if known {
            "{spinner} {prefix} [{elapsed}] {bar:10} {wide_msg}"
        } else {
            "{spinner} {prefix} [{elapsed}] {wide_msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label);
    }
}

/// Runs `work` (a tree command, `label`) while a thread shows the
/// operations per second the tree's threads count
/// ([`iolab::tree::ops::ops_done`]) every [`LIVE_NS`], where [`Shown`]
/// would show a run's.
pub fn sampled<T: Send>(label: &str, work: impl FnOnce() -> T + Send) -> T {
    let mut shown = Shown::new();
    if !shown.live() {
        return work();
    }
    shown.step = label.to_string();
    shown.unit = "ops/s";
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        s.spawn(move || {
            let (base, start) = (ops_done(), now_ns());
            shown.prev = Some(Live {
                t_ns: start,
                ..Default::default()
            });
            shown.relabel();
            let every = Duration::from_nanos(LIVE_NS);
            while let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(every) {
                let now = now_ns();
                shown.tick(&Live {
                    ios: ops_done().saturating_sub(base),
                    t_ns: now,
                    elapsed_ns: now.saturating_sub(start),
                    running: 1,
                    ..Default::default()
                });
            }
            shown.phase(Phase::Done);
        });
        let out = work();
        drop(done_tx);
        out
    })
}

impl Default for Shown {
    fn default() -> Self {
        Shown::new()
    }
}

impl Progress for Shown {
    fn step(&mut self, what: &str) {
        // The step names the runs that follow: up to its last ':' (`sweep
        // point 2/4`, `prefetch: round 1/3, distance 16`), within a bar's room.
        let head = what.rsplit_once(':').map_or(what, |(h, _)| h);
        self.step = head.chars().take(STEP_CHARS).collect();
        if !self.quiet {
            line(self.bar.as_ref(), what);
        }
    }

    fn warning(&mut self, what: &str) {
        line(self.bar.as_ref(), &format!("warning: {what}"));
    }

    fn live(&self) -> bool {
        self.show != Show::Off
    }

    fn phase(&mut self, phase: Phase) {
        if phase == Phase::Done {
            if let Some(b) = self.bar.take() {
                b.finish_and_clear();
            }
            (self.phase, self.prev, self.known) = (None, None, false);
            return;
        }
        if matches!(phase, Phase::Run { .. }) && self.phase != Some(phase) {
            // A repetition starts: its counters start from nothing now.
            self.prev = Some(Live {
                t_ns: now_ns(),
                ..Default::default()
            });
        }
        self.phase = Some(phase);
        if let (Some(b), false) = (&self.bar, matches!(phase, Phase::Run { .. })) {
            // Between repetitions: no figures of the last one.
            b.set_message("");
        }
        self.relabel();
    }

    fn tick(&mut self, live: &Live) {
        let rates = self.prev.and_then(|p| live.rates_since(&p));
        self.prev = Some(*live);
        self.known |= live.done.is_some();
        let Some(rates) = rates else { return };
        let show = self.show;
        match show {
            Show::Bar => {
                self.show_bar();
                if let Some(b) = &self.bar {
                    b.set_position(live.done.map_or(0, |d| (d * 1000.0) as u64));
                    b.set_message(figures(live, rates, false, self.unit));
                }
            }
            Show::Lines if self.line_due() => {
                let text = figures(live, rates, true, self.unit);
                eprintln!("iolab: {}: {text}", self.label());
            }
            Show::Lines | Show::Off => {}
        }
    }
}

/// The live figures as shown in a line: `40%, 12.3k IOPS, 48.1MiB/s,
/// elapsed 00:00:02, ETA 00:00:03` (the part done and the ETA when known);
/// on a bar, which shows its own elapsed time, `40% 12.3k IOPS 48.1MiB/s
/// ETA 3s`, to fit 80 columns.
fn figures(live: &Live, (iops, bw): (f64, f64), line: bool, unit: &str) -> String {
    let mut parts = Vec::new();
    if let Some(d) = live.done {
        parts.push(format!("{:.0}%", d * 100.0));
    }
    parts.push(format!("{} {unit}", si(iops)));
    // Work that counts no bytes (metadata trees) shows no bandwidth.
    if live.bytes > 0 {
        parts.push(format!("{}/s", bytes_iec(bw)));
    }
    if line {
        parts.push(format!("elapsed {}", hms(live.elapsed_ns)));
    }
    if let Some(eta) = live.eta_ns {
        let eta = if line { hms(eta) } else { short(eta) };
        parts.push(format!("ETA {eta}"));
    }
    parts.join(if line { ", " } else { " " })
}

/// `ns` in few characters, to the nearest second: `3s`, `2m05s`, `1h02m`.
fn short(ns: u64) -> String {
    let s = ns.saturating_add(500_000_000) / 1_000_000_000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s / 60 % 60),
    }
}

/// `ns` as `HH:MM:SS`, to the nearest second.
fn hms(ns: u64) -> String {
    let s = ns.saturating_add(500_000_000) / 1_000_000_000;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_name_the_rate_and_the_time_left() {
        let mut live = Live {
            done: Some(0.4),
            eta_ns: Some(3_000_000_000),
            elapsed_ns: 2_000_000_000,
            ..Default::default()
        };
        let rates = (12_345.0, 48.0 * 1024.0 * 1024.0);
        // No bytes counted (a tree): no bandwidth.
        assert_eq!(
            figures(&live, rates, false, "ops/s"),
            "40% 12.3k ops/s ETA 3s"
        );
        live.bytes = 1;
        assert_eq!(
            figures(&live, rates, true, "IOPS"),
            "40%, 12.3k IOPS, 48.0MiB/s, elapsed 00:00:02, ETA 00:00:03"
        );
        assert_eq!(
            figures(&live, rates, false, "IOPS"),
            "40% 12.3k IOPS 48.0MiB/s ETA 3s"
        );
        assert_eq!(short(125_400_000_000), "2m05s");
        assert_eq!(short(3_725_000_000_000), "1h02m");
        assert_eq!(hms(3_723_000_000_000), "01:02:03");
    }
}
