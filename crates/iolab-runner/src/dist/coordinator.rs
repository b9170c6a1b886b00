//! Starts `iolab worker` on every host through a launcher, and leads them:
//! version handshake, clock offsets, the job, one start barrier, results.

use super::DistError;
use super::merge::{self, DistRun, HostRun};
use super::protocol::{self, FromWorker, ToWorker, VERSION};
use crate::runner::{RunResult, StopFlag};
use std::io::BufReader;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How the workers are started.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The hosts, in rank order.
    pub hosts: Vec<String>,
    /// The launcher's words, `{host}` replaced by each host (`ssh {host}`);
    /// empty: the worker command runs here.
    pub launcher: Vec<String>,
    /// The worker's command (this executable and `worker` by default).
    pub worker: Vec<String>,
    /// How long a worker may take to say hello and to lay out its files.
    pub timeout: Duration,
    /// How long a running worker may go without a heartbeat (sent every
    /// second) before it counts as dead.
    pub silence: Duration,
    /// Stop every rank when the first one finishes (IOR's stonewalling).
    pub stonewall: bool,
}

/// What the coordinator heard from a worker.
enum Heard {
    /// A message.
    Said(FromWorker),
    /// A line that is not a message (the reader's complaint).
    Garbled(std::io::Error),
    /// Its stream ended.
    Closed,
    /// Nothing for longer than [`Launch::silence`] (no reader sends this:
    /// the coordinator concludes it).
    Silent,
}

/// What a worker (by rank) was heard to do.
type Event = (usize, Heard);

/// The workers of one run.
pub struct Coordinator {
    launch: Launch,
    children: Vec<Child>,
    stdins: Vec<Option<ChildStdin>>,
    events: Receiver<Event>,
    hosts: Vec<HostRun>,
}

impl Coordinator {
    /// Starts a worker per host and checks each one's version.
    pub fn start(launch: Launch) -> Result<Coordinator, DistError> {
        if launch.hosts.is_empty() {
            return Err(DistError::Usage {
                what: "--hosts".into(),
                problem: "no host given".into(),
            });
        }
        let (tx, events) = channel();
        let mut c = Coordinator {
            children: Vec::new(),
            stdins: Vec::new(),
            events,
            hosts: Vec::new(),
            launch,
        };
        for (rank, host) in c.launch.hosts.clone().into_iter().enumerate() {
            let words: Vec<String> = (c.launch.launcher.iter())
                .map(|w| w.replace("{host}", &host))
                .chain(c.launch.worker.iter().cloned())
                .collect();
            let fail = |problem: String| DistError::Launch {
                host: host.clone(),
                command: words.join(" "),
                problem,
            };
            let mut child = Command::new(&words[0])
                .args(&words[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| fail(e.to_string()))?;
            let out = child.stdout.take().expect("piped stdout");
            c.stdins.push(child.stdin.take());
            c.children.push(child);
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut r = BufReader::new(out);
                loop {
                    let heard = match protocol::receive::<FromWorker>(&mut r) {
                        Ok(Some(m)) => Heard::Said(m),
                        Ok(None) => Heard::Closed,
                        Err(e) => Heard::Garbled(e),
                    };
                    let end = !matches!(heard, Heard::Said(_));
                    let _ = tx.send((rank, heard));
                    if end {
                        break;
                    }
                }
            });
            c.hosts.push(HostRun::new(rank as u32, &host));
        }
        for _ in 0..c.hosts.len() {
            let (rank, m) = c.next()?;
            match m {
                FromWorker::Hello { version, host, .. } if version == VERSION => {
                    c.hosts[rank].hostname = host;
                }
                FromWorker::Hello { version, .. } => {
                    return Err(DistError::Version {
                        host: c.hosts[rank].host.clone(),
                        theirs: version,
                        ours: VERSION.into(),
                    });
                }
                other => return Err(c.unexpected(rank, &other)),
            }
        }
        Ok(c)
    }

    /// The next message of any worker; a worker that ended is an error.
    fn next(&mut self) -> Result<(usize, FromWorker), DistError> {
        let (rank, m) = match self.events.recv_timeout(self.launch.timeout) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => {
                return Err(DistError::Worker {
                    host: "(every host)".into(),
                    problem: format!("no answer within {:?}", self.launch.timeout),
                });
            }
            Err(RecvTimeoutError::Disconnected) => unreachable!("a reader per worker"),
        };
        let host = self.hosts[rank].host.clone();
        match m {
            Heard::Said(FromWorker::Error { message }) => Err(DistError::Worker {
                host,
                problem: message,
            }),
            Heard::Said(m) => Ok((rank, m)),
            Heard::Garbled(e) => Err(DistError::Worker {
                host,
                problem: format!("not a message: {e}"),
            }),
            Heard::Closed | Heard::Silent => Err(DistError::Died {
                host,
                problem: self.exit_of(rank),
            }),
        }
    }

    fn exit_of(&mut self, rank: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.children[rank].try_wait() {
                return st.to_string();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "its output closed".into()
    }

    fn unexpected(&self, rank: usize, m: &FromWorker) -> DistError {
        let what = serde_json::to_string(m).unwrap_or_default();
        DistError::Worker {
            host: self.hosts[rank].host.clone(),
            problem: format!(
                "unexpected message {}",
                what.chars().take(120).collect::<String>()
            ),
        }
    }

    fn tell(&mut self, rank: usize, m: &ToWorker) -> Result<(), DistError> {
        let host = self.hosts[rank].host.clone();
        let Some(w) = self.stdins[rank].as_mut() else {
            return Ok(());
        };
        protocol::send(w, m).map_err(|e| DistError::Died {
            host,
            problem: format!("cannot write to it: {e}"),
        })
    }

    /// Estimates each worker's clock offset: the best of three pings.
    fn clocks(&mut self) -> Result<(), DistError> {
        for rank in 0..self.hosts.len() {
            let mut best = (u64::MAX, 0i64);
            for _ in 0..3 {
                let t0 = protocol::wall_ns();
                self.tell(rank, &ToWorker::Ping)?;
                let (r, m) = self.next()?;
                let t1 = protocol::wall_ns();
                match m {
                    FromWorker::Pong { t_ns } if r == rank => {
                        let rtt = t1 - t0;
                        if rtt < best.0 {
                            best = (rtt, t_ns as i64 - ((t0 + t1) / 2) as i64);
                        }
                    }
                    other => return Err(self.unexpected(r, &other)),
                }
            }
            self.hosts[rank].clock_offset_ns = best.1;
        }
        Ok(())
    }

    /// Runs the job (`iolab run`'s job arguments) on every host: all start
    /// at one barrier once each has laid out its files. A host that fails
    /// after the start ends the run with its error, and what the others
    /// measured is kept (the merged run is marked interrupted).
    pub fn run(
        mut self,
        args: &[String],
        stop: &StopFlag,
    ) -> Result<(DistRun, Option<DistError>), DistError> {
        self.clocks()?;
        let n = self.hosts.len();
        for rank in 0..n {
            let job = ToWorker::Job {
                rank: rank as u32,
                args: args.to_vec(),
            };
            self.tell(rank, &job)?;
        }
        for _ in 0..n {
            match self.next()? {
                (_, FromWorker::Ready) => {}
                (r, other) => return Err(self.unexpected(r, &other)),
            }
        }
        for rank in 0..n {
            self.tell(rank, &ToWorker::Start)?;
        }
        let mut runs: Vec<Option<RunResult>> = vec![None; n];
        let mut open = n;
        // A rank that sent its results (or failed) is done: the end of its
        // stream that follows is no news.
        let mut done = vec![false; n];
        let mut seen = vec![Instant::now(); n];
        let mut first_error = None;
        let mut stopped = false;
        while open > 0 {
            if stop.is_set() && !stopped {
                stopped = true;
                for rank in 0..n {
                    let _ = self.tell(rank, &ToWorker::Stop);
                }
            }
            let silent = (0..n).find(|&r| !done[r] && seen[r].elapsed() > self.launch.silence);
            let (rank, m) = match self.events.recv_timeout(Duration::from_millis(100)) {
                Ok(e) => e,
                // A worker that stopped answering counts as dead.
                Err(_) => match silent {
                    Some(r) => (r, Heard::Silent),
                    None => continue,
                },
            };
            if done[rank] {
                continue;
            }
            seen[rank] = Instant::now();
            match m {
                Heard::Said(FromWorker::Started { t_ns }) => {
                    let h = &mut self.hosts[rank];
                    h.started_ns = (t_ns as i64 - h.clock_offset_ns) as u64;
                }
                Heard::Said(FromWorker::Result { run, env }) => {
                    self.hosts[rank].finished(&run, env.map(|e| *e));
                    runs[rank] = Some(*run);
                    self.stdins[rank] = None;
                    done[rank] = true;
                    open -= 1;
                    if self.launch.stonewall && !stopped {
                        stopped = true;
                        for r in (0..n).filter(|&r| !done[r]) {
                            let _ = self.tell(r, &ToWorker::Finish);
                        }
                    }
                }
                Heard::Said(
                    FromWorker::Heartbeat
                    | FromWorker::Pong { .. }
                    | FromWorker::Ready
                    | FromWorker::Hello { .. },
                ) => {}
                end => {
                    let problem = match end {
                        Heard::Said(FromWorker::Error { message }) => message,
                        Heard::Silent => format!("no heartbeat for {:?}", self.launch.silence),
                        Heard::Garbled(e) => format!("not a message: {e}"),
                        Heard::Closed | Heard::Said(_) => self.exit_of(rank),
                    };
                    self.hosts[rank].failed = Some(problem.clone());
                    first_error.get_or_insert(DistError::Died {
                        host: self.hosts[rank].host.clone(),
                        problem,
                    });
                    self.stdins[rank] = None;
                    // A hung worker is ended here; a dead one is reaped.
                    let _ = self.children[rank].kill();
                    done[rank] = true;
                    open -= 1;
                    // The others stop early, and send what they have.
                    for r in 0..n {
                        let _ = self.tell(r, &ToWorker::Stop);
                    }
                }
            }
        }
        for c in &mut self.children {
            let _ = c.wait();
        }
        let names: Vec<String> = self.hosts.iter().map(|h| h.hostname.clone()).collect();
        let run = merge::merge(&runs, &names).ok_or_else(|| {
            first_error.take().unwrap_or(DistError::Worker {
                host: "(every host)".into(),
                problem: "no results".into(),
            })
        })?;
        let hosts = std::mem::take(&mut self.hosts);
        Ok((DistRun { run, hosts }, first_error))
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        self.stdins.clear();
        for c in &mut self.children {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}
