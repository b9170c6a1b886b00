//! `--delay [OPS=]hist:RUN[@WHERE]`: delays drawn from the latencies a
//! stored run measured (a real device's, replayed on an injected disk).
//! The run's latency histogram becomes a `quantiles:` rule (min, 1%, 5%,
//! 10%..90%, 95%, 99%, 99.9%, max), which the daemon draws from.

use super::error::DiskError;
use crate::metrics::histogram::LatencyHistogram;

/// The percents a histogram is cut at.
const POINTS: [f64; 16] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.99,
];

/// `quantiles:0=MIN,1=...,100=MAX` of `h`, in microseconds.
pub fn quantiles_text(h: &LatencyHistogram) -> String {
    let us = |ns: u64| format!("{}us", ns.div_ceil(1000).max(1));
    let mut parts = vec![format!("0={}", us(h.min()))];
    parts.extend(
        POINTS
            .iter()
            .map(|p| format!("{p}={}", us(h.percentile(*p)))),
    );
    parts.push(format!("100={}", us(h.max())));
    format!("quantiles:{}", parts.join(","))
}

/// A stored run's latencies, read and write, by its id; `Err` says why
/// there is none (the store is a layer above: the caller asks it).
pub type RunLatencies<'a> = dyn Fn(i64) -> Result<[LatencyHistogram; 2], String> + 'a;

/// Replaces each `hist:RUN` of the delay rules in `rules` by the
/// quantiles of run RUN's latencies (`latencies`): reads, or writes for a
/// rule of writes only (`write=hist:12`).
pub fn resolve(rules: &mut [(String, String)], latencies: &RunLatencies) -> Result<(), DiskError> {
    for (flag, text) in rules.iter_mut().filter(|(f, _)| f == "delay") {
        let Some(at) = text.find("hist:") else {
            continue;
        };
        let rest = &text[at + 5..];
        let end = rest.find('@').unwrap_or(rest.len());
        let bad = |expected: String| DiskError::Usage {
            what: format!("--{flag} {text}"),
            expected,
        };
        let id: i64 = rest[..end]
            .parse()
            .map_err(|_| bad("hist:RUN with RUN a stored run's id (iolab history)".into()))?;
        let [read, write] = latencies(id).map_err(|e| bad(format!("a stored iolab run: {e}")))?;
        let writes = text[..at].trim_end_matches('=') == "write";
        let h = if writes { write } else { read };
        if h.count() == 0 {
            let dir = if writes { "write" } else { "read" };
            return Err(bad(format!(
                "a run with {dir} latencies (run {id} has none)"
            )));
        }
        *text = format!("{}{}{}", &text[..at], quantiles_text(&h), &rest[end..]);
    }
    Ok(())
}
