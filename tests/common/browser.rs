//! Headless Chromium for the tests that check a page or picture renders:
//! its console, its DOM, a screenshot kept where a person can look.

use super::{s, succeed};
use std::path::Path;

/// What headless Chromium saw of a page: its console lines and the DOM.
pub struct Loaded {
    /// Console messages (one line each).
    pub console: Vec<String>,
    /// The DOM after scripts ran.
    pub dom: String,
}

impl Loaded {
    /// Asserts the page logged nothing to the console and its script ran
    /// to the end (set `data-ready="1"`).
    pub fn assert_ran_cleanly(&self) {
        assert!(
            self.console.is_empty(),
            "console messages: {:?}",
            self.console
        );
        assert!(
            self.dom.contains("data-ready=\"1\""),
            "the page's script ran"
        );
    }
}

/// Loads `page` in headless Chromium: its console and DOM, and a `w`x`h`
/// screenshot written to `shot`.
pub fn chromium(page: &Path, shot: &Path, (w, h): (u32, u32)) -> Loaded {
    let url = format!("file://{}", s(page));
    let base = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let out = std::process::Command::new("chromium")
        .args(base)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    succeed(
        std::process::Command::new("chromium")
            .args(base)
            .arg("--hide-scrollbars")
            .arg(format!("--window-size={w},{h}"))
            .arg(format!("--screenshot={}", s(shot)))
            .arg(&url),
    );
    Loaded {
        console,
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

/// Copies the screenshot `shot` to `name` in the build's temporary
/// directory, where a person can look at it, and says where.
pub fn keep_screenshot(shot: &Path, name: &str) {
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::copy(shot, &keep).unwrap();
    eprintln!("screenshot: {}", keep.display());
}
