//! `iolab cache` results as vmtouch shows them, or as JSON.

use super::json::pretty;
use crate::metrics::format::bytes_iec;
use crate::sys::pagecache::{Evicted, Residency, Survey, Warmed, map_line};
use serde_json::{Value, json};
use std::fmt::Write;

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn file_json(r: &Residency) -> Value {
    json!({
        "path": r.path, "size": r.size, "pages": r.state.pages, "resident": r.state.cached,
        "percent": pct(r.state.cached, r.state.pages), "dirty": r.state.dirty,
        "writeback": r.state.writeback, "evicted": r.state.evicted,
        "recently_evicted": r.state.recently_evicted,
    })
}

/// `cache status` as JSON; `page_size` is the machine's, in bytes.
pub fn status_json(s: &Survey, page_size: u64) -> Value {
    let (pages, cached) = (s.pages(), s.cached());
    json!({
        "files": s.files.iter().map(file_json).collect::<Vec<_>>(),
        "directories": s.dirs,
        "total": {"files": s.files.len(), "pages": pages, "resident": cached, "percent": pct(cached, pages),
                  "size": s.size(), "resident_bytes": cached * page_size},
        "source": s.source(), "elapsed_s": s.elapsed_s,
    })
}

/// `cache status` as vmtouch prints it; `verbose` adds each file's map;
/// `page_size` is the machine's, in bytes.
pub fn status_text(s: &Survey, verbose: bool, page_size: u64) -> String {
    let mut out = String::new();
    if verbose {
        for r in &s.files {
            let map = r.map.as_deref().unwrap_or(&[]);
            let _ = writeln!(
                out,
                "{}\n[{}] {}/{}",
                r.path.display(),
                map_line(map, 60),
                r.state.cached,
                r.state.pages
            );
        }
        out.push('\n');
    }
    let (pages, cached) = (s.pages(), s.cached());
    let _ = writeln!(out, "           Files: {}", s.files.len());
    let _ = writeln!(out, "     Directories: {}", s.dirs);
    let _ = writeln!(
        out,
        "  Resident Pages: {cached}/{pages}  {}/{}  {:.3}%",
        bytes_iec((cached * page_size) as f64),
        bytes_iec(s.size() as f64),
        pct(cached, pages)
    );
    let dirty: u64 = s.files.iter().filter_map(|r| r.state.dirty).sum();
    if dirty > 0 {
        let _ = writeln!(out, "     Dirty Pages: {dirty}");
    }
    let _ = writeln!(out, "         Elapsed: {:.4} seconds", s.elapsed_s);
    let _ = writeln!(out, "          Source: {}", s.source());
    out
}

/// `cache warm`, as JSON or one line.
pub fn warmed(w: &Warmed, json: bool) -> String {
    let a = &w.after;
    let (pages, cached, secs) = (a.pages(), a.cached(), w.elapsed_s.max(1e-9));
    if json {
        return pretty(&warmed_json(w));
    }
    format!(
        "warmed {} files ({} directories): read {} in {:.3} s ({}/s); resident {cached}/{pages} pages ({:.1}%)\n",
        a.files.len(),
        a.dirs,
        bytes_iec(w.bytes as f64),
        w.elapsed_s,
        bytes_iec(w.bytes as f64 / secs),
        pct(cached, pages)
    )
}

/// `cache warm` as a JSON object.
pub fn warmed_json(w: &Warmed) -> Value {
    let a = &w.after;
    let secs = w.elapsed_s.max(1e-9);
    json!({"files": a.files.len(), "directories": a.dirs, "bytes_read": w.bytes,
        "elapsed_s": w.elapsed_s, "mib_per_s": w.bytes as f64 / (1 << 20) as f64 / secs,
        "pages": a.pages(), "resident": a.cached()})
}

/// `cache evict`, as JSON or one line.
pub fn evicted(e: &Evicted, json: bool) -> String {
    let remaining: u64 = e.left.iter().map(|l| l.1).sum();
    if json {
        let left: Vec<Value> = e
            .left
            .iter()
            .map(|(p, c, d)| json!({"path": p, "resident": c, "dirty": d}))
            .collect();
        return pretty(
            &json!({"files": e.files, "directories": e.dirs, "pages": e.pages,
            "still_resident": remaining, "elapsed_s": e.elapsed_s, "not_evicted": left}),
        );
    }
    format!(
        "evicted {} files ({} directories, {} pages) in {:.4} s; still resident: {remaining} pages\n",
        e.files, e.dirs, e.pages, e.elapsed_s
    )
}

/// Why a file stayed cached, one line each (for warnings).
pub fn not_evicted(e: &Evicted) -> Vec<String> {
    e.left
        .iter()
        .map(|(p, c, d)| {
            let dirty = if *d > 0 { format!(", {d} dirty") } else { String::new() };
            format!(
                "{}: {c} pages still cached{dirty} (dirty pages stay until written back; mapped or locked pages stay)",
                p.display()
            )
        })
        .collect()
}
