//! `iolab disk` as text: the line `up` prints, and `status`'s rules and
//! counters per disk.

use super::table::Table;
use crate::disk::client::Found;
use crate::disk::rules::{op_name, rules_line};
use crate::disk::state::State;
use crate::metrics::format::shell_path;
use crate::metrics::format::{bytes_iec, ns};

/// What a disk is made of, on one line.
/// The transport of the block layer's FUSE requests comes on a line of
/// its own ("transport: io_uring, 2 queues of 32").
pub fn made_of(st: &State) -> String {
    let parts: Vec<String> = (st.parts.iter())
        .filter(|(k, _)| k != "transport")
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let mut s = format!("{} layer: {}", st.spec.layer, parts.join(", "));
    if let Some((_, t)) = st.parts.iter().find(|(k, _)| k == "transport") {
        s.push_str(&format!("\n  transport: {t}"));
    }
    s
}

/// The lines `up` prints once DIR is usable.
pub fn up_text(st: &State) -> String {
    let dir = st.spec.dir.display();
    let q = shell_path(&st.spec.dir);
    format!(
        "iolab disk up at {dir}\n  {}\n  rules: {}\n  daemon pid {}; iolab disk status {q}, iolab disk down {q}\n",
        made_of(st),
        rules_line(&st.spec.rules),
        st.pid,
    )
}

/// `status` of each disk: what it is made of, its rules, its counters.
pub fn status_text(found: &[Found]) -> String {
    if found.is_empty() {
        return "no iolab disks (iolab disk up DIR makes one)\n".into();
    }
    let mut out = String::new();
    for f in found {
        match f {
            Found::Gone(st) => {
                let dir = st.spec.dir.display();
                let q = shell_path(&st.spec.dir);
                out.push_str(&format!(
                    "{dir}: its daemon (pid {}) is gone; iolab disk down {q} removes what is left\n  {}\n\n",
                    st.pid,
                    made_of(st)
                ));
            }
            Found::Unanswered { state: st, why } => {
                out.push_str(&format!(
                    "{}: its daemon (pid {}) runs but did not answer: {why}\n  {}\n\n",
                    st.spec.dir.display(),
                    st.pid,
                    made_of(st)
                ));
            }
            Found::Running(s) => {
                let st = &s.state;
                out.push_str(&format!(
                    "{}\n  {}\n  rules: {}\n  daemon pid {} since {}\n",
                    st.spec.dir.display(),
                    made_of(st),
                    rules_line(&st.spec.rules),
                    st.pid,
                    st.started
                ));
                if s.read_only {
                    out.push_str(&format!(
                        "  the file system is read-only now (it stopped after a write error): \
                         iolab disk crash {dir} mounts it again\n",
                        dir = shell_path(&st.spec.dir)
                    ));
                }
                if let Some(p) = s.punctual.as_ref().filter(|p| p.held > 0) {
                    out.push_str(&format!(
                        "  delayed answers: {}, {:.1}% within 2 us of their deadline (mean {} late, worst {})\n",
                        p.held,
                        100.0 * p.on_time as f64 / p.held as f64,
                        ns(p.mean_late_ns as f64),
                        ns(p.max_late_ns as f64),
                    ));
                }
                if let Some(f) = &s.failures {
                    out.push_str(&format!(
                        "  failed requests: {} answered EIO after the image handler panicked \
                         (an iolab bug; the first: {}); the daemon's log has the backtrace\n",
                        f.count,
                        f.first.as_deref().unwrap_or("?")
                    ));
                }
                if let Some(u) = s.unflushed {
                    out.push_str(&format!(
                        "  written, not yet flushed: {}\n",
                        bytes_iec(u as f64)
                    ));
                }
                let mut t = Table::new(["op", "count", "delay injected", "mean delay", "errors"]);
                let c = &s.counters;
                // The block layer sees no metadata operations.
                let kinds = if st.spec.layer == "block" { 3 } else { 4 };
                for i in 0..kinds {
                    let mean = c.delay_ns[i] as f64 / c.ops[i].max(1) as f64;
                    t.push(vec![
                        op_name(i).to_string(),
                        c.ops[i].to_string(),
                        ns(c.delay_ns[i] as f64),
                        ns(mean),
                        c.errors[i].to_string(),
                    ]);
                }
                out.push('\n');
                out.push_str(&t.text());
                out.push('\n');
            }
        }
    }
    out
}
