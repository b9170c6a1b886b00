//! How figures are written in text (fio's style): SI and IEC units, and
//! times in local time. Shared by the exporters and the counter sources'
//! report lines.

/// `123456` → `123k`, like fio's IOPS figure.
pub fn si(v: f64) -> String {
    let (d, s) = if v >= 1e9 {
        (1e9, "G")
    } else if v >= 1e6 {
        (1e6, "M")
    } else if v >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = v / d;
    if s.is_empty() {
        format!("{x:.0}")
    } else if x >= 100.0 {
        format!("{x:.0}{s}")
    } else {
        format!("{x:.1}{s}")
    }
}

/// A duration in ns as people read it (`1.02 ms`, `350 us`, `12.0 s`).
pub fn ns(v: f64) -> String {
    match v {
        v if v >= 1e9 => format!("{:.2} s", v / 1e9),
        v if v >= 1e6 => format!("{:.2} ms", v / 1e6),
        v if v >= 1e3 => format!("{:.0} us", v / 1e3),
        v => format!("{v:.0} ns"),
    }
}

/// Bytes in binary units: `25.6MiB`.
pub fn bytes_iec(v: f64) -> String {
    scaled(v, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
}

/// Bytes in decimal units: `26.9MB`.
pub fn bytes_si(v: f64) -> String {
    scaled(v, 1000.0, &["B", "kB", "MB", "GB", "TB", "PB"])
}

fn scaled(v: f64, base: f64, units: &[&str]) -> String {
    let mut x = v;
    let mut i = 0;
    while x >= base && i < units.len() - 1 {
        x /= base;
        i += 1;
    }
    if i == 0 {
        format!("{x:.0}{}", units[i])
    } else {
        format!("{x:.1}{}", units[i])
    }
}

/// Unix seconds as local `YYYY-MM-DD HH:MM`.
pub fn local_time(unix: i64) -> String {
    use chrono::TimeZone;
    chrono::Local.timestamp_opt(unix, 0).single().map_or_else(
        || unix.to_string(),
        |d| d.format("%Y-%m-%d %H:%M").to_string(),
    )
}

/// `word` as one shell word, pasted into a shell it is `word` again: as
/// is when it holds only letters, digits and `_@%+=:,./-`; in single
/// quotes otherwise; as `$'...'` with escapes when it holds a control
/// character (a newline in a directory name stays on one line).
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    if !word.chars().any(char::is_control) {
        return format!("'{}'", word.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A path as one shell word (see [`shell_word`]).
pub fn shell_path(p: &std::path::Path) -> String {
    shell_word(&p.to_string_lossy())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_fio() {
        assert_eq!(si(198_000.0), "198k");
        assert_eq!(si(1_500.0), "1.5k");
        assert_eq!(bytes_iec(26_843_545.6), "25.6MiB");
        assert_eq!(bytes_si(26_900_000.0), "26.9MB");
    }

    #[test]
    fn shell_words_paste_back() {
        assert_eq!(shell_word("/mnt/slow"), "/mnt/slow");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("a\nb"), "$'a\\nb'");
        assert_eq!(shell_word(""), "''");
    }
}
