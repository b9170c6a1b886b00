//! The commands' side of `iolab disk`: check and prepare `up`, start the
//! daemon and wait until DIR is usable, and ask a running disk for its
//! status, new rules, a crash or `down` (cleaning up by hand when its
//! daemon is gone).

use super::control::{self, Answer, Request, Status};
use super::error::DiskError;
use super::layer::Spec;
use super::rules::parse_all;
use super::state::{self, State};
use crate::sys::stop::StopFlag;
use crate::sys::{loopdev, mount};
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long `down`, `set` and `crash` wait for the daemon.
const WAIT: Duration = Duration::from_secs(120);

/// Checks everything `up` needs before anything is made (root, devices,
/// tools, an empty DIR, rules), makes DIR when missing, and the disk's
/// private directory with the spec in it; returns that directory.
pub fn prepare(spec: &mut Spec) -> Result<PathBuf, DiskError> {
    let injector = super::layer::find(&spec.layer)?;
    super::rules::check_layer(&spec.layer, &parse_all(&spec.rules)?)?;
    if spec.backing.is_some() && spec.layer != "fs" {
        return Err(DiskError::Usage {
            what: "--backing".into(),
            expected: "--layer fs with it (the block layer serves an image, not a directory)"
                .into(),
        });
    }
    if !nix::unistd::geteuid().is_root() {
        return Err(DiskError::NotRoot);
    }
    injector.check(spec)?;
    // Where DIR is, resolved before anything is made: nesting and mount
    // points are refused first.
    let (resolved, missing) = resolve(&spec.dir)?;
    refuse_unsafe(&resolved)?;
    if missing.is_empty() {
        if !resolved.is_dir() {
            return Err(DiskError::Usage {
                what: resolved.display().to_string(),
                expected: "a directory to mount the disk at".into(),
            });
        }
    } else {
        // Made one by one, so that `down` knows which (and only those).
        for d in &missing {
            std::fs::create_dir(d)
                .map_err(|e| DiskError::io(format!("cannot make {}", d.display()), e))?;
        }
        spec.made_dir = true;
        spec.made_parents = missing[..missing.len() - 1].to_vec();
    }
    spec.dir = resolved;
    let run = state::run_dir(&spec.dir);
    if run.exists() {
        return Err(DiskError::AlreadyUp(spec.dir.clone()));
    }
    let empty = std::fs::read_dir(&spec.dir)
        .map_err(|e| DiskError::io(format!("cannot read {}", spec.dir.display()), e))?
        .next()
        .is_none();
    if !empty {
        return Err(DiskError::NotEmpty(spec.dir.clone()));
    }
    std::fs::create_dir_all(&run)
        .map_err(|e| DiskError::io(format!("cannot make {}", run.display()), e))?;
    state::save(
        &run,
        &State {
            spec: spec.clone(),
            ..State::default()
        },
    )?;
    Ok(run)
}

/// Starts `exe disk serve RUN` in its own process group and waits until
/// it says DIR is usable; on `stop` (Ctrl-C) it is told to stop and
/// removes what it made.
pub fn start(exe: &Path, run: &Path, stop: &StopFlag) -> Result<State, DiskError> {
    let log = std::fs::File::create(state::log(run))
        .map_err(|e| DiskError::io(format!("cannot make {}", state::log(run).display()), e))?;
    let mut child = Command::new(exe)
        .args(["disk", "serve"])
        .arg(run)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| DiskError::io(format!("cannot start {}", exe.display()), e))?;
    if let Some(mut st) = state::load(run) {
        st.pid = child.id();
        // Our own unreaped child: its PID is its own until we wait for it.
        st.start = crate::sys::pidfd::stat(st.pid).map_or(0, |s| s.start);
        state::save(run, &st)?;
    }
    let out = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines() {
            let _ = tx.send(line);
        }
    });
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            // A signal to `up` alone (timeout, systemd) also undoes it.
            Ok(Ok(line)) if line == READY && stop.is_set() => {
                let _ = control::ask(run, &Request::Down, WAIT);
                let _ = child.wait();
                return Err(DiskError::Interrupted {
                    signal: stop.signal().unwrap_or(libc::SIGINT),
                });
            }
            Ok(Ok(line)) if line == READY => break,
            Ok(Ok(line)) => {
                let _ = child.wait();
                let message = line.trim_start_matches(FAILED).to_string();
                if let Some(st) = state::load(run) {
                    abandon(run, &st.spec);
                }
                return Err(DiskError::Refused {
                    what: "iolab disk up".into(),
                    message,
                });
            }
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = child.wait();
                return Err(daemon_failed(run, "it stopped before the disk was up"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) if stop.is_set() => {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGTERM,
                );
                let _ = child.wait();
                return Err(DiskError::Interrupted {
                    signal: stop.signal().unwrap_or(libc::SIGINT),
                });
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    state::load(run).ok_or_else(|| daemon_failed(run, "no state file after start"))
}

/// `dir` made absolute with its existing part resolved (symbolic links,
/// `..`), and the directories that do not exist yet, outermost first.
fn resolve(dir: &Path) -> Result<(PathBuf, Vec<PathBuf>), DiskError> {
    let abs = std::path::absolute(dir)
        .map_err(|e| DiskError::io(format!("cannot resolve {}", dir.display()), e))?;
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name().map(|n| n.to_os_string()));
        existing = existing.parent().unwrap_or(Path::new("/"));
    }
    let mut path = existing
        .canonicalize()
        .map_err(|e| DiskError::io(format!("cannot resolve {}", existing.display()), e))?;
    let mut missing = Vec::new();
    for name in rest.into_iter().rev().flatten() {
        path.push(name);
        missing.push(path.clone());
    }
    Ok((path, missing))
}

/// Refuses a DIR that is a mount point iolab did not make (`/`, `/proc`,
/// any mounted file system: mounting over it hides it), one inside
/// another iolab disk, or one that holds an iolab disk below it.
fn refuse_unsafe(dir: &Path) -> Result<(), DiskError> {
    let ours = state::all();
    let is_ours = |p: &Path| ours.iter().any(|(_, st)| st.spec.dir == p);
    if let Some((fstype, source)) = mount::mounted_at(dir)
        && !is_ours(dir)
    {
        return Err(DiskError::MountPoint {
            dir: dir.to_path_buf(),
            fstype,
            from: source,
        });
    }
    for (_, st) in &ours {
        let other = &st.spec.dir;
        if other != dir && (dir.starts_with(other) || other.starts_with(dir)) {
            return Err(DiskError::Nested {
                dir: dir.to_path_buf(),
                other: other.clone(),
                inside: dir.starts_with(other),
            });
        }
    }
    Ok(())
}

/// The line the daemon prints when DIR is usable.
pub const READY: &str = "ready";
/// What starts the line it prints when it could not make the disk.
pub const FAILED: &str = "failed: ";

/// The error of a daemon that did not come up (its own words, else the
/// first line of a panic in its log); removes what `prepare` made.
fn daemon_failed(run: &Path, message: &str) -> DiskError {
    let log = std::fs::read_to_string(state::log(run)).unwrap_or_default();
    let said = log
        .lines()
        .find(|l| l.contains("panicked") || l.contains("failed"))
        .map(|l| format!("{message}: {}", l.trim()))
        .unwrap_or_else(|| message.to_string());
    if let Some(st) = state::load(run) {
        abandon(run, &st.spec);
    }
    DiskError::Refused {
        what: "iolab disk up".into(),
        message: said,
    }
}

/// Removes what `prepare` made for a disk that did not come up: its
/// private directory, and DIR when `prepare` made it.
pub fn abandon(run: &Path, spec: &Spec) {
    let _ = std::fs::remove_dir_all(run);
    spec.remove_made_dirs();
}

/// The private directory of the disk at `dir`.
pub fn find(dir: &Path) -> Result<(PathBuf, State), DiskError> {
    let abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    state::all()
        .into_iter()
        .find(|(_, s)| s.spec.dir == abs)
        .ok_or_else(|| DiskError::NotFound(dir.to_path_buf()))
}

/// A disk as `status` finds it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "daemon", rename_all = "snake_case")]
pub enum Found {
    /// Serving.
    Running(Box<Status>),
    /// Its daemon is gone (killed): `down` cleans up.
    Gone(Box<State>),
    /// Its daemon runs but did not answer (a permission error is not
    /// death): why.
    Unanswered {
        /// The disk.
        state: Box<State>,
        /// What went wrong asking.
        why: String,
    },
}

/// The status of the disk at `dir`, or of every disk.
pub fn status(dir: Option<&Path>) -> Result<Vec<Found>, DiskError> {
    let disks = match dir {
        Some(d) => vec![find(d)?],
        None => state::all(),
    };
    Ok(disks
        .into_iter()
        .map(
            |(run, st)| match control::ask(&run, &Request::Status, Duration::from_secs(10)) {
                Ok(Answer::Status(s)) => Found::Running(s),
                Err(e) if st.daemon_alive() => Found::Unanswered {
                    state: Box::new(st),
                    why: e.to_string(),
                },
                Ok(other) if st.daemon_alive() => Found::Unanswered {
                    state: Box::new(st),
                    why: format!("it answered {other:?}"),
                },
                _ => Found::Gone(Box::new(st)),
            },
        )
        .collect())
}

/// Replaces the rules of the disk at `dir`.
pub fn set(dir: &Path, rules: Vec<(String, String)>) -> Result<Status, DiskError> {
    let parsed = parse_all(&rules)?;
    let (run, st) = find(dir)?;
    super::rules::check_layer(&st.spec.layer, &parsed)?;
    match control::ask(&run, &Request::Set { rules }, WAIT)? {
        Answer::Status(s) => Ok(*s),
        other => Err(unexpected(&run, "set", dir, other)),
    }
}

/// Power loss on the disk at `dir`; the bytes of unflushed writes dropped.
pub fn crash(dir: &Path) -> Result<u64, DiskError> {
    let (run, _) = find(dir)?;
    match control::ask(&run, &Request::Crash, WAIT)? {
        Answer::Crashed { dropped } => Ok(dropped),
        other => Err(unexpected(&run, "crash", dir, other)),
    }
}

fn unexpected(run: &Path, what: &str, dir: &Path, a: Answer) -> DiskError {
    match a {
        Answer::Failed { message } => DiskError::Refused {
            what: format!("iolab disk {what} {}", dir.display()),
            message,
        },
        other => DiskError::Daemon {
            message: format!("unexpected answer {other:?}"),
            log: state::log(run),
        },
    }
}

/// How `down` went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Down {
    /// The daemon unmounted and removed everything (`lazy`: DIR was busy
    /// and was detached lazily).
    ByDaemon {
        /// Detached lazily: its file system goes once the last file closes.
        lazy: bool,
    },
    /// The daemon was gone (or did not answer): iolab cleaned up itself.
    Cleaned,
}

/// Unmounts the disk at `dir` and removes everything it made.
pub fn down(dir: &Path) -> Result<Down, DiskError> {
    let (run, st) = find(dir)?;
    // The daemon named for sure (PID and start time): a process that took
    // a dead daemon's PID is never asked nor signalled.
    if let Some(daemon) = st.daemon() {
        match control::ask(&run, &Request::Down, WAIT) {
            Ok(Answer::Down { lazy }) => return Ok(Down::ByDaemon { lazy }),
            Ok(other) => return Err(unexpected(&run, "down", dir, other)),
            Err(_) => {
                crate::sys::pidfd::signal(&daemon, libc::SIGKILL);
                for _ in 0..50 {
                    if !crate::sys::pidfd::running(&daemon) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
    clean(&run, &st)?;
    Ok(Down::Cleaned)
}

/// Removes what a dead daemon left: DIR's mount, loop devices over files
/// in `run`, the FUSE mount in it, `run` itself, DIR when `up` made it.
pub fn clean(run: &Path, st: &State) -> Result<(), DiskError> {
    let umount = |p: &Path| {
        mount::unmount(p, Duration::from_secs(2))
            .map_err(|e| DiskError::io(format!("cannot unmount {}", p.display()), e))
    };
    umount(&st.spec.dir)?;
    for n in loopdev::attached_under(run) {
        let _ = loopdev::detach(n);
    }
    let fuse = run.join("fuse");
    umount(&fuse)?;
    // Autoclear loop devices go once their last user is gone.
    for _ in 0..50 {
        if loopdev::attached_under(run).is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_dir_all(run)
        .map_err(|e| DiskError::io(format!("cannot remove {}", run.display()), e))?;
    st.spec.remove_made_dirs();
    Ok(())
}
