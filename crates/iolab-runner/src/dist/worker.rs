//! `iolab worker`: runs the job a coordinator sends, on this host, with
//! this host's rank in its file names, and starts its timed part at the
//! coordinator's barrier.

use super::protocol::{self, FromWorker, ToWorker, VERSION};
use super::rank;
use crate::runner::{Observer, StopFlag};
use crate::{Error, Result};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often a running worker says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// Serves one coordinator on `input` and `output` until its job is done.
/// Errors of the job are sent to the coordinator (and returned); errors of
/// the stream itself are returned.
pub fn serve<R, W>(mut input: R, output: W, host: &str, stop: &StopFlag) -> Result<()>
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let out: Shared = Arc::new(Mutex::new(output));
    let say = |m: &FromWorker| tell(&out, m);
    say(&FromWorker::Hello {
        version: VERSION.into(),
        host: host.into(),
        pid: std::process::id(),
    })?;
    let (rank, args) = loop {
        match receive(&mut input)? {
            ToWorker::Ping => say(&FromWorker::Pong {
                t_ns: protocol::wall_ns(),
            })?,
            ToWorker::Job { rank, args } => break (rank, args),
            ToWorker::Start | ToWorker::Stop | ToWorker::Finish => return Ok(()),
        }
    };
    let ended = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicBool::new(false));
    let mut barrier = Barrier {
        input: Some(input),
        out: out.clone(),
        stop: stop.clone(),
        ended: ended.clone(),
        finished: finished.clone(),
    };
    let result = rank::run(&args, rank, stop, &mut barrier);
    ended.store(true, Ordering::Relaxed);
    match result {
        Ok(mut r) => {
            if finished.load(Ordering::Relaxed) {
                rank::stonewalled(&mut r.run);
            }
            say(&FromWorker::Result {
                run: Box::new(r.run),
                env: Some(Box::new(r.env)),
            })
        }
        Err(e) => {
            say(&FromWorker::Error {
                message: e.to_string(),
            })?;
            Err(e)
        }
    }
}

/// The worker's stdout, shared by the run and its heartbeat thread.
type Shared = Arc<Mutex<dyn Write + Send>>;

/// Sends one message to the coordinator.
fn tell(out: &Shared, m: &FromWorker) -> Result<()> {
    let mut w = out.lock().expect("worker output");
    protocol::send(&mut *w, m).map_err(|e| Error::io("worker: cannot write to the coordinator", e))
}

fn receive(input: &mut impl BufRead) -> Result<ToWorker> {
    protocol::receive(input)
        .map_err(|e| Error::io("worker: cannot read from the coordinator", e))?
        .ok_or_else(|| Error::usage("iolab worker", "the coordinator closed the stream"))
}

/// Holds the timed part until the coordinator says `start`, and keeps
/// listening for `stop` or `finish` afterwards.
struct Barrier<R> {
    input: Option<R>,
    out: Shared,
    stop: StopFlag,
    /// Set when the run is over: the heartbeats stop.
    ended: Arc<AtomicBool>,
    /// Set by `finish`: the stop is another rank's end, not an interruption.
    finished: Arc<AtomicBool>,
}

impl<R: BufRead + Send + 'static> Observer for Barrier<R> {
    fn timed_start(&mut self) -> Result<()> {
        let mut input = self.input.take().expect("one timed part");
        tell(&self.out, &FromWorker::Ready)?;
        match receive(&mut input)? {
            ToWorker::Start => {}
            other => {
                return Err(Error::usage(
                    "iolab worker",
                    format!("expected start at the barrier, got {other:?}"),
                ));
            }
        }
        let t_ns = protocol::wall_ns();
        tell(&self.out, &FromWorker::Started { t_ns })?;
        let (out, ended) = (self.out.clone(), self.ended.clone());
        std::thread::spawn(move || {
            while !ended.load(Ordering::Relaxed) {
                std::thread::sleep(HEARTBEAT);
                if ended.load(Ordering::Relaxed) || tell(&out, &FromWorker::Heartbeat).is_err() {
                    break;
                }
            }
        });
        // Afterwards: `stop`, `finish`, or the coordinator gone, stops the run.
        let (stop, finished) = (self.stop.clone(), self.finished.clone());
        std::thread::spawn(move || {
            if let Ok(Some(ToWorker::Finish)) = protocol::receive::<ToWorker>(&mut input) {
                finished.store(true, Ordering::Relaxed);
            }
            stop.set();
        });
        Ok(())
    }
}
