//! The shape every plug-in list shares (engines, counter sources, output
//! formats, labs; injectors and tracers later): one [`Entry`] per plug-in,
//! holding its name, the other names it is known by (fio's aliases), what it
//! needs, one line of help and the thing itself. Lookup, `iolab list` and
//! the "unknown X; iolab has: ..." message are written once, here.

/// One plug-in in a registry list.
#[derive(Debug)]
pub struct Entry<T: ?Sized + 'static> {
    /// The name users write (`io_uring`, `json+`, `prefetch`).
    pub name: &'static str,
    /// Other names for it (fio's: `aio` and `linuxaio` for `libaio`).
    pub aliases: &'static [&'static str],
    /// What it needs to work: kernel version, root, a package (empty: nothing).
    pub needs: &'static str,
    /// One line for `iolab list` and the help.
    pub help: &'static str,
    /// The plug-in itself (a constructor, or a shared instance).
    pub item: &'static T,
}

impl<T: ?Sized> Entry<T> {
    /// True when `name` is this entry's name or one of its aliases
    /// (ASCII case-insensitive, as fio compares option values).
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    }
}

/// An entry, written on one line in a registry list.
pub const fn entry<T: ?Sized>(
    name: &'static str,
    aliases: &'static [&'static str],
    needs: &'static str,
    help: &'static str,
    item: &'static T,
) -> Entry<T> {
    Entry {
        name,
        aliases,
        needs,
        help,
        item,
    }
}

/// The entry called `name` (or with `name` as an alias).
pub fn find<'a, T: ?Sized>(list: &'a [Entry<T>], name: &str) -> Option<&'a Entry<T>> {
    list.iter().find(|e| e.is(name))
}

/// The names of a list, in its order.
pub fn names<T: ?Sized>(list: &[Entry<T>]) -> Vec<&'static str> {
    list.iter().map(|e| e.name).collect()
}

/// `unknown ioengine 'x'; iolab has: psync, sync, ...`.
pub fn unknown<T: ?Sized>(kind: &str, name: &str, list: &[Entry<T>]) -> String {
    format!(
        "unknown {kind} '{name}'; iolab has: {}",
        names(list).join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    static LIST: &[Entry<str>] = &[
        Entry {
            name: "libaio",
            aliases: &["aio"],
            needs: "",
            help: "kernel AIO",
            item: "a",
        },
        Entry {
            name: "psync",
            aliases: &[],
            needs: "",
            help: "pread",
            item: "b",
        },
    ];

    #[test]
    fn lookup_by_name_and_alias() {
        assert_eq!(find(LIST, "AIO").map(|e| e.item), Some("a"));
        assert_eq!(find(LIST, "psync").map(|e| e.name), Some("psync"));
        assert!(find(LIST, "posixaio").is_none());
        assert_eq!(
            unknown("ioengine", "x", LIST),
            "unknown ioengine 'x'; iolab has: libaio, psync"
        );
    }
}
