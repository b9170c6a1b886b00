//! The engine options of a job (fio's per-engine options such as
//! `fixedbufs` or `nowait`), declared once: the list at the bottom makes
//! the struct field, its name for parsing and its place in [`EngineFlags::all`].
//! Each engine says which of them it takes in [`super::Engine::OPTIONS`].

use serde::{Deserialize, Serialize};

/// Declares [`EngineFlags`] from `field, "doc";` lines.
macro_rules! engine_flags {
    ($($field:ident, $doc:literal;)*) => {
        /// The engine options of a job, by fio's names. Each engine lists
        /// the ones it takes in [`super::Engine::OPTIONS`]; the job is
        /// refused if it sets one its engine does not take.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct EngineFlags {
            $(
                #[doc = $doc]
                #[serde(default)]
                pub $field: bool,
            )*
        }

        impl EngineFlags {
            /// Every engine option's name, as fio spells it.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Every option with its value, by fio's name.
            pub fn all(&self) -> Vec<(&'static str, bool)> {
                vec![$((stringify!($field), self.$field)),*]
            }

            /// Sets the option `name`; false if it is not an engine option.
            pub fn set(&mut self, name: &str, on: bool) -> bool {
                match name {
                    $(stringify!($field) => self.$field = on,)*
                    _ => return false,
                }
                true
            }
        }
    };
}

// The list: a new engine option is one line here, one row in
// `job::options::CORE` (its help) and in docs/fio-compat.md.
engine_flags! {
    fixedbufs, "Register the I/O buffers with the kernel.";
    registerfiles, "Register the files with the kernel.";
    sqthread_poll, "A kernel thread polls the submission queue.";
    hipri, "Polled completions (RWF_HIPRI, IORING_SETUP_IOPOLL).";
    nowait, "Fail instead of blocking (RWF_NOWAIT).";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_set_and_all_agree() {
        for name in EngineFlags::NAMES {
            let mut f = EngineFlags::default();
            assert!(f.set(name, true));
            let on: Vec<_> = f.all().into_iter().filter(|(_, v)| *v).collect();
            assert_eq!(on, vec![(*name, true)]);
        }
        assert!(!EngineFlags::default().set("direct", true));
    }
}
