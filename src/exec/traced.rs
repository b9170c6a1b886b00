//! `iolab exec --trace`: the eBPF tracer of `iolab trace` attached to the
//! held command (histogram mode: per-call counts and log2 latency
//! histograms, near-zero cost), the command let go once it records; the
//! trace ends when the command does and is kept with its run.

use super::error::Result;
use crate::runner::StopFlag;
use crate::trace::model::Trace;
use crate::trace::{self, Mode, Request, Target, TraceError};
use std::time::Duration;

/// How long the tracer may take to attach.
const ATTACH: Duration = Duration::from_secs(20);

/// Refuses `--trace` where the eBPF tracer cannot work (the error names
/// what is missing: root, BTF, BPF).
pub fn check() -> Result<()> {
    Ok(trace::find("ebpf")?.check()?)
}

/// Runs `body` (which releases and waits for the held process `pid`)
/// once the tracer records `pid`; returns what `body` returned and the
/// trace (without events), or the tracer's error once it had attached
/// (the run itself stands). An error before it attached fails the run.
pub fn around<T>(
    pid: u32,
    body: impl FnOnce() -> Result<T>,
) -> Result<(T, std::result::Result<Trace, TraceError>)> {
    let tracer = trace::find("ebpf")?;
    let quit = StopFlag::new();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let recording = s.spawn(|| {
            let ready = move || {
                let _ = tx.send(());
            };
            tracer.record(&Request {
                target: Target::Pid(pid),
                mode: Mode::Histograms,
                duration: None,
                output: None,
                stop: &quit,
                stdout_to_stderr: false,
                attached: Some(&ready),
            })
        });
        if rx.recv_timeout(ATTACH).is_err() {
            quit.set();
            return Err(match recording.join() {
                Ok(Err(e)) => e.into(),
                _ => TraceError::Bpf {
                    what: "attach".into(),
                    problem: format!("the tracer did not attach within {} s", ATTACH.as_secs()),
                }
                .into(),
            });
        }
        let out = body();
        if out.is_err() {
            quit.set();
        }
        let t = match recording.join() {
            Ok(t) => t,
            Err(_) => Err(TraceError::Bpf {
                what: "record".into(),
                problem: "the tracer's thread panicked".into(),
            }),
        };
        Ok((out?, t))
    })
}
