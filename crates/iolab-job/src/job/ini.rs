//! fio's job-file format, parsed by hand: `[global]` and job sections (names
//! may repeat), `key=value`, bare flags, `;`/`#` comments (whole-line, or
//! inline after whitespace), `include FILE`, `${ENV}` and fio's `$pagesize`,
//! `$mb_memory`, `$ncpus`. Includes nest at most [`MAX_INCLUDE_DEPTH`]
//! levels, are at most [`MAX_INCLUDES`] in all and bring in at most
//! [`MAX_JOB_TEXT`] bytes in all.

pub use super::error::Origin;
use super::error::{JobError, JobProblem, ValueError};
use super::units::plain_text;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Deepest nesting of `include`s below the job file. fio has no limit of
/// its own (it fails once it runs out of open files); iolab reads each level
/// recursively, so a limit keeps a hostile chain from overflowing the stack.
pub const MAX_INCLUDE_DEPTH: usize = 16;

/// Most `include`s one job file may make in all, at every level. Each
/// costs an open and a read, and an empty file costs no bytes of
/// [`MAX_JOB_TEXT`]: without a count, three levels of 64 includes each read
/// an empty file 262,144 times (seconds), four levels for minutes.
pub const MAX_INCLUDES: usize = 1024;

/// Most bytes a job file may bring in with everything it includes (the
/// same file included many times counts each time).
pub const MAX_JOB_TEXT: u64 = 16 << 20;

/// One `key=value` or bare `key` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Option name as written (lower-cased).
    pub key: String,
    /// The value; `None` for a bare flag.
    pub value: Option<String>,
    /// Where it was written.
    pub origin: Origin,
}

/// A `[name]` section and its entries, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Section name (`global` for global sections).
    pub name: String,
    /// Options of the section.
    pub entries: Vec<Entry>,
    /// Where the section header is.
    pub origin: Origin,
}

/// Variables that take precedence over the environment in `${VAR}` (a
/// sweep's point).
pub type Vars = BTreeMap<String, String>;

/// Reads and parses a job file (following `include`s); `${VAR}` comes from
/// `vars`, else the environment.
pub fn parse_file(path: &Path, vars: &Vars) -> Result<Vec<Section>, JobError> {
    let mut r = Reader::new(vars);
    r.file(path)?;
    Ok(r.out)
}

/// Parses `text` as the job file `path` (which need not exist; its
/// `include`s are read relative to it).
pub fn parse_text(text: &str, path: &Path, vars: &Vars) -> Result<Vec<Section>, JobError> {
    let mut r = Reader::new(vars);
    r.read = text.len() as u64;
    if r.read > MAX_JOB_TEXT {
        return Err(too_large(path));
    }
    r.stack.push(canonical(path));
    r.lines(text, path)?;
    Ok(r.out)
}

/// A job file being read, with the files that include it.
struct Reader<'a> {
    vars: &'a Vars,
    out: Vec<Section>,
    /// The files being read, outermost first (canonical paths).
    stack: Vec<PathBuf>,
    /// Bytes read so far, includes too.
    read: u64,
    /// `include`s followed so far.
    includes: usize,
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn too_large(path: &Path) -> JobError {
    JobError::plain(JobProblem::JobTextTooLarge {
        path: path.to_path_buf(),
        max: MAX_JOB_TEXT,
    })
}

impl Reader<'_> {
    fn new(vars: &Vars) -> Reader<'_> {
        Reader {
            vars,
            out: Vec::new(),
            stack: Vec::new(),
            read: 0,
            includes: 0,
        }
    }

    /// Reads and parses the file `path`, one level below the stack.
    fn file(&mut self, path: &Path) -> Result<(), JobError> {
        let canon = canonical(path);
        if self.stack.contains(&canon) {
            return Err(JobError::plain(JobProblem::IncludeLoop(path.to_path_buf())));
        }
        if !self.stack.is_empty() {
            self.includes += 1;
            if self.includes > MAX_INCLUDES {
                return Err(JobError::plain(JobProblem::TooManyIncludes {
                    path: path.to_path_buf(),
                    max: MAX_INCLUDES,
                }));
            }
        }
        if self.stack.len() > MAX_INCLUDE_DEPTH {
            return Err(JobError::plain(JobProblem::IncludeTooDeep {
                path: path.to_path_buf(),
                max: MAX_INCLUDE_DEPTH,
            }));
        }
        let text = self.read_text(path)?;
        self.stack.push(canon);
        self.lines(&text, path)?;
        self.stack.pop();
        Ok(())
    }

    /// The text of `path`, within what is left of [`MAX_JOB_TEXT`].
    fn read_text(&mut self, path: &Path) -> Result<String, JobError> {
        let failed = |source| {
            JobError::plain(JobProblem::Read {
                path: path.to_path_buf(),
                source,
            })
        };
        let left = MAX_JOB_TEXT - self.read;
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(left + 1).read_to_end(&mut bytes))
            .map_err(failed)?;
        if bytes.len() as u64 > left {
            return Err(too_large(path));
        }
        self.read += bytes.len() as u64;
        String::from_utf8(bytes).map_err(|_| {
            failed(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ))
        })
    }

    /// Parses the lines of `text`, read from `path`.
    fn lines(&mut self, text: &str, path: &Path) -> Result<(), JobError> {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for (i, raw) in text.lines().enumerate() {
            let origin = Origin::File(path.to_path_buf(), i + 1);
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            let line = expand_vars(line, self.vars).map_err(|e| JobError {
                origin: Some(origin.clone()),
                job: None,
                option: None,
                problem: Box::new(e.into()),
            })?;
            let line = line.as_str();
            if let Some(rest) = line.strip_prefix('[') {
                let name = section_name(rest, line, &origin)?;
                self.out.push(Section {
                    name: name.to_string(),
                    entries: Vec::new(),
                    origin,
                });
                continue;
            }
            if let Some(inc) = line.strip_prefix("include ") {
                let inc = inc.trim();
                let p = if Path::new(inc).is_absolute() {
                    PathBuf::from(inc)
                } else {
                    dir.join(inc)
                };
                self.file(&p).map_err(|e| JobError {
                    origin: Some(origin.clone()),
                    job: None,
                    option: None,
                    problem: Box::new(JobProblem::Included { inner: Box::new(e) }),
                })?;
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
                None => (line, None),
            };
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(JobError::syntax(
                    Some(&origin),
                    format!(
                        "malformed line '{line}' (expected key=value, a bare flag or [section])"
                    ),
                ));
            }
            let Some(section) = self.out.last_mut() else {
                return Err(JobError::syntax(
                    Some(&origin),
                    format!("option '{key}' appears before any [section]"),
                ));
            };
            section.entries.push(Entry {
                key: key.to_ascii_lowercase(),
                value,
                origin,
            });
        }
        Ok(())
    }
}

/// The job name of a section header `[NAME]` (`rest` is what follows `[`):
/// not empty, no brackets, no control characters.
fn section_name<'a>(rest: &'a str, line: &str, origin: &Origin) -> Result<&'a str, JobError> {
    let Some(name) = rest.strip_suffix(']') else {
        return Err(JobError::syntax(
            Some(origin),
            format!("malformed section header '{line}' (missing ']')"),
        ));
    };
    let name = name.trim();
    if name.is_empty() || name.contains(['[', ']']) {
        return Err(JobError::syntax(
            Some(origin),
            format!("malformed section header '{line}'"),
        ));
    }
    plain_text("job name", name).map_err(|e| JobError::syntax(Some(origin), e.to_string()))?;
    Ok(name)
}

/// Removes a `;` or `#` comment: the whole line when it starts with one,
/// otherwise from the first `;`/`#` that follows whitespace.
fn strip_comment(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return "";
    }
    let b = line.as_bytes();
    for i in 1..b.len() {
        if (b[i] == b';' || b[i] == b'#') && b[i - 1].is_ascii_whitespace() {
            return &line[..i];
        }
    }
    line
}

/// Expands `${VAR}` from a sweep point or the environment, and fio's
/// keywords `$pagesize`, `$mb_memory`, `$ncpus`. An unset variable is an
/// error naming it.
pub fn expand_vars(text: &str, vars: &Vars) -> Result<String, ValueError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(body) = after.strip_prefix('{') {
            let Some(end) = body.find('}') else {
                return Err(ValueError::Unterminated(text.to_string()));
            };
            let var = &body[..end];
            let val = (vars.get(var).cloned())
                .or_else(|| std::env::var(var).ok())
                .ok_or_else(|| ValueError::UnsetVar(var.to_string()))?;
            out.push_str(&val);
            rest = &body[end + 1..];
            continue;
        }
        let word_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let word = &after[..word_len];
        match keyword_value(word) {
            Some(v) => {
                out.push_str(&v.to_string());
                rest = &after[word_len..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of fio's keyword `word`, read from the machine once per
/// process: `$ncpus` reads the cgroup's files and `$mb_memory`
/// /proc/meminfo, 50 us each, and a job file may use them on every line.
fn keyword_value(word: &str) -> Option<u64> {
    use std::sync::OnceLock;
    static NCPUS: OnceLock<u64> = OnceLock::new();
    static MB_MEMORY: OnceLock<u64> = OnceLock::new();
    match word {
        "pagesize" => Some(crate::sys::machine::page_size()),
        "ncpus" => Some(
            *NCPUS
                .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()) as u64),
        ),
        "mb_memory" => Some(
            *MB_MEMORY.get_or_init(|| crate::sys::machine::meminfo("MemTotal") / (1024 * 1024)),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments() {
        assert_eq!(strip_comment("; x"), "");
        assert_eq!(strip_comment("  # x"), "");
        assert_eq!(strip_comment("bs=4k ; four k"), "bs=4k ");
        assert_eq!(strip_comment("bs=4k\t# four k"), "bs=4k\t");
        assert_eq!(strip_comment("filename=a#b"), "filename=a#b");
    }

    #[test]
    fn variables() {
        // SAFETY: tests in this module do not read this variable concurrently.
        unsafe { std::env::set_var("IOLAB_TEST_VAR", "77") };
        assert_eq!(
            expand_vars("size=${IOLAB_TEST_VAR}k", &Vars::new()).unwrap(),
            "size=77k"
        );
        assert!(
            expand_vars("${IOLAB_NOPE_NOT_SET}", &Vars::new())
                .unwrap_err()
                .to_string()
                .contains("IOLAB_NOPE_NOT_SET")
        );
        let ps = expand_vars("$pagesize", &Vars::new()).unwrap();
        assert_eq!(ps, "4096");
        assert!(
            expand_vars("$ncpus", &Vars::new())
                .unwrap()
                .parse::<u64>()
                .unwrap()
                >= 1
        );
        assert!(
            expand_vars("$mb_memory", &Vars::new())
                .unwrap()
                .parse::<u64>()
                .unwrap()
                > 0
        );
        assert_eq!(expand_vars("a$b", &Vars::new()).unwrap(), "a$b");
    }
}
