//! Progress on stderr: the steps of long work (`iolab: sweep point 2/4:
//! ...`), and while jobs run a live line with the phase (layout, evict,
//! run, repetition k/n), IOPS, bandwidth, elapsed time and ETA. On a
//! terminal it is an indicatif bar redrawn in place; elsewhere nothing
//! unless `--eta=always` (fio's flag), which prints a plain line every
//! second. `--quiet` keeps steps and progress off stderr; warnings and
//! errors still show.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use iolab::metrics::clock::now_ns;
use iolab::metrics::format::{bytes_iec, si};
use iolab::runner::{Live, Phase, Progress};
use std::io::IsTerminal;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// When to show live progress (fio's `--eta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Eta {
    /// On a terminal (stderr) only.
    #[default]
    Auto,
    /// Also when stderr is not a terminal: a plain line a second.
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
        let phase = self.phase.map(|p| p.to_string()).unwrap_or_default();
        match self.step.as_str() {
            "" => phase,
            step => format!("{step} · {phase}"),
        }
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
            (self.phase, self.prev, self.last_line, self.known) = (None, None, None, false);
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
        match self.show {
            Show::Bar => self.show_bar(),
            Show::Lines => eprintln!("iolab: {}", self.label()),
            Show::Off => {}
        }
    }

    fn tick(&mut self, live: &Live) {
        let rates = self.prev.and_then(|p| live.rates_since(&p));
        self.prev = Some(*live);
        self.known |= live.done.is_some();
        let Some(rates) = rates else { return };
        match self.show {
            Show::Bar => {
                self.show_bar();
                if let Some(b) = &self.bar {
                    b.set_position(live.done.map_or(0, |d| (d * 1000.0) as u64));
                    b.set_message(figures(live, rates, false));
                }
            }
            Show::Lines => {
                if self.last_line.is_none_or(|t| t.elapsed() >= self.every) {
                    self.last_line = Some(Instant::now());
                    eprintln!("iolab: {}: {}", self.label(), figures(live, rates, true));
                }
            }
            Show::Off => {}
        }
    }
}

/// The live figures as shown in a line: `40%, 12.3k IOPS, 48.1MiB/s,
/// elapsed 00:00:02, ETA 00:00:03` (the part done and the ETA when known);
/// on a bar, which shows its own elapsed time, `40% 12.3k IOPS 48.1MiB/s
/// ETA 3s`, to fit 80 columns.
fn figures(live: &Live, (iops, bw): (f64, f64), line: bool) -> String {
    let mut parts = Vec::new();
    if let Some(d) = live.done {
        parts.push(format!("{:.0}%", d * 100.0));
    }
    parts.push(format!("{} IOPS", si(iops)));
    parts.push(format!("{}/s", bytes_iec(bw)));
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
        let live = Live {
            done: Some(0.4),
            eta_ns: Some(3_000_000_000),
            elapsed_ns: 2_000_000_000,
            ..Default::default()
        };
        let rates = (12_345.0, 48.0 * 1024.0 * 1024.0);
        assert_eq!(
            figures(&live, rates, true),
            "40%, 12.3k IOPS, 48.0MiB/s, elapsed 00:00:02, ETA 00:00:03"
        );
        assert_eq!(
            figures(&live, rates, false),
            "40% 12.3k IOPS 48.0MiB/s ETA 3s"
        );
        assert_eq!(short(125_400_000_000), "2m05s");
        assert_eq!(short(3_725_000_000_000), "1h02m");
        assert_eq!(hms(3_723_000_000_000), "01:02:03");
    }
}
