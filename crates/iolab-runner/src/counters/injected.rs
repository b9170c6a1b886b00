//! What the injected disks (`iolab disk`) did during a run: operations,
//! delay injected and errors per kind of operation, asked of each serving
//! disk's daemon. Summed over the disks up at the time (usually the one
//! the run is on; the environment names it with its rules).

use super::{Counter, Values};
use crate::disk::control::{Answer, Request, ask};
use crate::disk::rules::op_name;
use crate::disk::state;
use std::time::Duration;

/// The injected-disk counters.
pub struct Injected;

impl Counter for Injected {
    fn label(&self) -> &'static str {
        "injected disk"
    }

    fn source(&self) -> &'static str {
        "iolab disk daemons"
    }

    fn read(&self) -> Option<Values> {
        let disks = state::all();
        if disks.is_empty() {
            return None;
        }
        let mut v = Values::new();
        for (run, st) in disks {
            if !st.daemon_alive() {
                continue;
            }
            let Ok(Answer::Status(s)) = ask(&run, &Request::Status, Duration::from_secs(1)) else {
                continue;
            };
            for i in 0..4 {
                let c = &s.counters;
                for (what, n) in [
                    ("ops", c.ops[i]),
                    ("delay_ns", c.delay_ns[i]),
                    ("errors", c.errors[i]),
                ] {
                    *v.entry(format!("{}_{what}", op_name(i))).or_default() += n;
                }
            }
        }
        Some(v)
    }

    fn line(&self, d: &Values) -> Option<String> {
        let shown: Vec<String> = (0..4)
            .filter_map(|i| {
                let op = op_name(i);
                let ops = *d.get(&format!("{op}_ops"))?;
                (ops > 0).then(|| {
                    let delay = d.get(&format!("{op}_delay_ns")).copied().unwrap_or(0);
                    let errors = d.get(&format!("{op}_errors")).copied().unwrap_or(0);
                    format!(
                        "{op} {ops} ops, {} delay injected ({} each), {errors} errors",
                        crate::metrics::format::ns(delay as f64),
                        crate::metrics::format::ns(delay as f64 / ops as f64)
                    )
                })
            })
            .collect();
        (!shown.is_empty()).then(|| shown.join("; "))
    }
}
