//! The serving side of a disk: build the layer, then answer the control
//! socket until `down` or a signal, then remove everything. Runs in the
//! background process `up` starts, or in the foreground (`--foreground`).

use super::control::{self, Answer, Request, Status};
use super::error::DiskError;
use super::gate::Gate;
use super::layer::{Mounted, Spec};
use super::rules::{Rules, parse_all};
use super::state::{self, State};
use crate::sys::stop::StopFlag;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::Duration;

/// How often the loop looks at the stop flag (a client is answered at once).
const POLL: Duration = Duration::from_millis(50);

/// Builds the disk of `spec` with its private directory `run` (made and
/// empty), calls `ready` once DIR is usable (or with the error that
/// stopped it), serves until `down` or `stop`, and removes everything.
pub fn serve(
    spec: &Spec,
    run: &Path,
    stop: &StopFlag,
    ready: &mut dyn FnMut(Result<&State, &DiskError>),
) -> Result<(), DiskError> {
    // Held for the daemon's life: the request ends with the descriptor.
    let built = no_halt(spec).and_then(|qos| build(spec, run).map(|b| (qos, b)));
    let (_qos, (mut mounted, gate, listener, mut st)) = match built {
        Ok(b) => b,
        Err(e) => {
            ready(Err(&e));
            super::client::abandon(run, spec);
            return Err(e);
        }
    };
    ready(Ok(&st));
    let mut down_to: Option<UnixStream> = None;
    while !stop.is_set() {
        if !readable(&listener) {
            continue;
        }
        let Ok((client, _)) = listener.accept() else {
            continue;
        };
        let _ = client.set_nonblocking(false);
        let Ok(req) = control::read_request(&client) else {
            continue;
        };
        let answer = match req {
            Request::Status => status(&st, &gate, mounted.as_ref()),
            Request::Set { rules } => match parse_all(&rules) {
                Ok(r) => {
                    gate.replace(Rules::new(r, st.spec.seed));
                    st.spec.rules = rules;
                    let _ = state::save(run, &st);
                    status(&st, &gate, mounted.as_ref())
                }
                Err(e) => Answer::Failed {
                    message: e.to_string(),
                },
            },
            Request::Crash => match mounted.crash() {
                Ok(dropped) => {
                    st.parts = parts(&st.spec, mounted.as_ref());
                    let _ = state::save(run, &st);
                    Answer::Crashed { dropped }
                }
                Err(e) => Answer::Failed {
                    message: e.to_string(),
                },
            },
            Request::Down => {
                down_to = Some(client);
                break;
            }
        };
        let _ = control::write_answer(&client, &answer);
    }
    let r = mounted.unmount();
    let _ = std::fs::remove_dir_all(run);
    st.spec.remove_made_dirs();
    if let Some(c) = down_to {
        let a = match &r {
            Ok(lazy) => Answer::Down { lazy: *lazy },
            Err(e) => Answer::Failed {
                message: e.to_string(),
            },
        };
        let _ = control::write_answer(&c, &a);
    }
    r.map(drop)
}

/// Waits up to [`POLL`] for a client: true when one is waiting.
fn readable(listener: &UnixListener) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let mut fds = [PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
    let ms = PollTimeout::from(POLL.as_millis() as u16);
    poll(&mut fds, ms).is_ok_and(|n| n > 0)
}

type Built = (Box<dyn Mounted>, std::sync::Arc<Gate>, UnixListener, State);

/// What the disk is made of, for `status`: the layer's parts, and the
/// idle CPUs' setting with `--no-halt`.
fn parts(spec: &Spec, mounted: &dyn Mounted) -> Vec<(String, String)> {
    let mut p = mounted.parts();
    if spec.no_halt {
        p.push((
            "idle CPUs".into(),
            format!("polling ({CPU_LATENCY} held at 0 us while up)"),
        ));
    }
    p
}

/// The kernel's PM QoS request for CPU wake-up latency.
const CPU_LATENCY: &str = "/dev/cpu_dma_latency";

/// With `--no-halt`, a request that idle CPUs wake within 0 us (they poll
/// instead of halting), in force while the returned file is open.
fn no_halt(spec: &Spec) -> Result<Option<std::fs::File>, DiskError> {
    if !spec.no_halt {
        return Ok(None);
    }
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(CPU_LATENCY)
        .map_err(|e| DiskError::io(format!("--no-halt: cannot open {CPU_LATENCY}"), e))?;
    f.write_all(&0i32.to_ne_bytes())
        .map_err(|e| DiskError::io(format!("--no-halt: cannot write {CPU_LATENCY}"), e))?;
    Ok(Some(f))
}

fn build(spec: &Spec, run: &Path) -> Result<Built, DiskError> {
    let injector = super::layer::find(&spec.layer)?;
    let rules = parse_all(&spec.rules)?;
    injector.check(spec)?;
    let sock = state::socket(run);
    let listener = UnixListener::bind(&sock)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| DiskError::io(format!("cannot listen on {}", sock.display()), e))?;
    let gate = Gate::new(Rules::new(rules, spec.seed));
    let mounted = injector.mount(spec, gate.clone(), run)?;
    gate.arm(true);
    let st = State {
        spec: spec.clone(),
        pid: std::process::id(),
        start: crate::sys::pidfd::own_start(),
        started: chrono::Local::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        parts: parts(spec, mounted.as_ref()),
    };
    if let Err(e) = state::save(run, &st) {
        let _ = mounted.unmount();
        return Err(e);
    }
    Ok((mounted, gate, listener, st))
}

fn status(st: &State, gate: &Gate, mounted: &dyn Mounted) -> Answer {
    let (rules, counters) = gate.snapshot();
    Answer::Status(Box::new(Status {
        state: st.clone(),
        rules,
        counters,
        unflushed: mounted.unflushed(),
        read_only: crate::sys::mount::is_read_only(&st.spec.dir),
        punctual: mounted.punctual(),
        failures: mounted.failures().filter(|f| f.count > 0),
    }))
}
