//! What the `iolab trace` tests share: whether this machine can trace with
//! eBPF (root, BTF, the syscall tracepoints), the C reference loop built
//! once, and a trace recorded as JSON.

use super::{bin, parse_json, s};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// True when the ebpf tracer can run here; otherwise prints why the test
/// is skipped (`test`) and returns false.
pub fn can(test: &str) -> bool {
    let why = if !iolab::sys::machine::is_root() {
        "not root"
    } else if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        "no BTF (/sys/kernel/btf/vmlinux)"
    } else {
        return true;
    };
    eprintln!("skipping {test}: {why}");
    false
}

/// bench/ref/randread.c built once into the test's temporary directory
/// (`None` without a C compiler).
pub fn randread() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trace-randread");
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/ref/randread.c");
            let ok = std::process::Command::new("cc")
                .args(["-O2", "-o", s(&out), s(&src)])
                .status()
                .is_ok_and(|st| st.success());
            ok.then_some(out)
        })
        .clone()
}

/// `iolab trace --no-store -f json EXTRA -- CMD`, which must succeed.
pub fn record(extra: &[&str], cmd: &[&str]) -> Value {
    let o = bin()
        .args(["trace", "--no-store", "-f", "json"])
        .args(extra)
        .arg("--")
        .args(cmd)
        .output()
        .expect("iolab runs");
    assert!(
        o.status.success(),
        "iolab trace {extra:?} -- {cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    parse_json(&o.stdout)
}

/// The counts per call on the file `path` in trace JSON `v`.
pub fn file_calls<'a>(v: &'a Value, path: &Path) -> &'a Value {
    let files = v["files"].as_array().expect("files");
    let f = files
        .iter()
        .find(|f| f["path"] == s(path))
        .unwrap_or_else(|| panic!("{} not among the files: {v}", path.display()));
    &f["calls"]
}

/// The count of `call` in a trace's per call or per file figures.
pub fn count(calls: &Value, call: &str) -> u64 {
    calls[call]["count"].as_u64().unwrap_or(0)
}
