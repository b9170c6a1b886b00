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

/// The longest text [`closest`] compares: a hostile name of a megabyte
/// costs no more than this (both measures take time in the product of the
/// lengths).
const CLOSEST_MAX: usize = 64;

/// True when `typed` is like `known` enough to be a slip for it: a
/// Jaro-Winkler similarity of at least 0.8, or one edit (Damerau-Levenshtein:
/// a letter added, dropped, changed or two swapped) in a name of three
/// letters or more. Anything looser suggests more silly names than helpful
/// ones (`json` for `job`, `iops` for `loops`).
pub fn similar(typed: &str, known: &str) -> bool {
    strsim::jaro_winkler(typed, known) >= 0.8
        || (known.chars().count() >= 3 && strsim::damerau_levenshtein(typed, known) <= 1)
}

/// The name of `names` most like `typed`, when one is [`similar`] enough
/// to suggest ("did you mean ...?"); only the first 64 characters of
/// `typed` count.
pub fn closest<'a>(typed: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed: String = typed.chars().take(CLOSEST_MAX).collect();
    names
        .into_iter()
        .filter(|n| similar(&typed, n))
        .map(|n| (strsim::jaro_winkler(&typed, n), n))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// `unknown ioengine 'x'; iolab has: psync, sync, ...`.
/// With a name [`similar`] to `name`, it ends "(did you mean 'y'?)".
pub fn unknown<T: ?Sized>(kind: &str, name: &str, list: &[Entry<T>]) -> String {
    let all = list
        .iter()
        .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()));
    let hint = closest(&name.to_ascii_lowercase(), all)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    format!(
        "unknown {kind} '{name}'; iolab has: {}{hint}",
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
        assert_eq!(
            unknown("ioengine", "pysnc", LIST),
            "unknown ioengine 'pysnc'; iolab has: libaio, psync (did you mean 'psync'?)"
        );
    }

    #[test]
    fn slips_are_suggested() {
        for (typed, want) in [
            ("lable", "label"),
            ("xob", "job"),
            ("sinse", "since"),
            ("histroy", "history"),
            ("outptu-format", "output-format"),
            ("blocksze", "blocksize"),
            ("runtme", "runtime"),
            ("jsn", "json"),
        ] {
            let names = [
                "label",
                "since",
                "history",
                "list",
                "output-format",
                "blocksize",
            ];
            let names = names.into_iter().chain(["runtime", "json", "job"]);
            assert_eq!(closest(typed, names), Some(want), "{typed}");
        }
    }

    #[test]
    fn names_unlike_what_was_typed_are_not_suggested() {
        // Each of these was once suggested (clap's Jaro > 0.7, or fio
        // options' Jaro-Winkler > 0.7), or would be by a looser rule.
        for (typed, names) in [
            ("json", &["job", "db"][..]),
            ("histroy", &["list"]),
            ("fmt", &["format", "limit"]),
            ("id", &["db"]),
            ("zzz", &["size", "sync"]),
            ("iops", &["ioengine", "iodepth", "loops"]),
            ("lbl", &["label"]),
        ] {
            assert_eq!(closest(typed, names.iter().copied()), None, "{typed}");
        }
    }
}
