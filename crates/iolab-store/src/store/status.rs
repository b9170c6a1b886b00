//! How a stored run ended: the `status` column of `runs` (schema 4).

use serde::{Deserialize, Serialize};

/// How a stored run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It did all it was asked (also a tree stopped by `--time-limit`, and
    /// every import).
    #[default]
    Complete,
    /// Stopped by SIGINT or SIGTERM: its figures cover only the part that ran.
    Interrupted,
    /// Stopped by an I/O error (ENOSPC, EIO): its figures cover the part
    /// before the error, which its result names.
    Failed,
}

impl Status {
    /// The name stored in the database and shown by `history` and `show`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        }
    }

    /// The status named `s` in the database; `None` for a name iolab
    /// never stores.
    pub fn parse(s: &str) -> Option<Status> {
        [Status::Complete, Status::Interrupted, Status::Failed]
            .into_iter()
            .find(|st| st.as_str() == s)
    }

    /// `Interrupted` when `interrupted`, else `Complete`.
    pub fn interrupted_if(interrupted: bool) -> Status {
        if interrupted {
            Status::Interrupted
        } else {
            Status::Complete
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back() {
        for st in [Status::Complete, Status::Interrupted, Status::Failed] {
            assert_eq!(Status::parse(st.as_str()), Some(st));
            assert_eq!(
                serde_json::to_value(st).unwrap(),
                serde_json::json!(st.as_str())
            );
        }
        assert_eq!(Status::parse("done"), None);
    }
}
