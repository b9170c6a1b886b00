//! Colour for the terminal: ANSI escapes when asked for, plain text
//! otherwise. Whether to colour is the caller's decision (the CLI's
//! `--color` and `NO_COLOR`); this only paints.

/// Paints text, or leaves it as it is when colour is off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Paint {
    /// Colour is on.
    pub on: bool,
}

impl Paint {
    fn wrap(self, code: &str, s: &str) -> String {
        if self.on && !s.is_empty() {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    /// Bold (headings).
    pub fn bold(self, s: &str) -> String {
        self.wrap("1", s)
    }

    /// Yellow (a caution: a partial result).
    pub fn yellow(self, s: &str) -> String {
        self.wrap("33", s)
    }

    /// Red (worse).
    pub fn red(self, s: &str) -> String {
        self.wrap("31", s)
    }

    /// Green (better).
    pub fn green(self, s: &str) -> String {
        self.wrap("32", s)
    }

    /// Cyan (names the user chose: labels).
    pub fn cyan(self, s: &str) -> String {
        self.wrap("36", s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_on() {
        assert_eq!(Paint { on: false }.bold("x"), "x");
        assert_eq!(Paint { on: true }.bold("x"), "\x1b[1mx\x1b[0m");
        assert_eq!(Paint { on: true }.red(""), "");
    }
}
