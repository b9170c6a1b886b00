//! What can be wrong with job input, and where it was written: a value that
//! does not read ([`ValueError`]), an option or job that does not make sense
//! ([`JobError`], with the job file and line or the command-line argument).

use std::fmt;
use std::path::PathBuf;

/// Where an option came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A job file and 1-based line number.
    File(PathBuf, usize),
    /// The command line (argument index, 1-based).
    CommandLine(usize),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(p, l) => write!(f, "{}:{}", p.display(), l),
            Origin::CommandLine(i) => write!(f, "command line argument {i}"),
        }
    }
}

/// Why a value (size, time, number, boolean, range) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Nothing was given.
    #[error("empty {0}")]
    Empty(&'static str),
    /// Not a number at all.
    #[error("'{0}' is not a number")]
    NotANumber(String),
    /// A number with a suffix where a plain number is wanted.
    #[error("'{0}' is not a plain number")]
    NotPlain(String),
    /// A size suffix fio does not have.
    #[error(
        "unknown size suffix '{0}' (expected k, m, g, t, p, optionally with b, or kib, mib, ...)"
    )]
    SizeSuffix(String),
    /// A time suffix fio does not have.
    #[error("unknown time suffix '{0}' (expected us, ms, s, m, h or d)")]
    TimeSuffix(String),
    /// Below zero.
    #[error("'{0}' is negative")]
    Negative(String),
    /// Above what the option can hold.
    #[error("'{0}' is too large")]
    TooLarge(String),
    /// Outside the option's range (or negative, or past 64 bits).
    #[error("'{text}' is out of range ({range})")]
    OutOfRange {
        /// The value as given.
        text: String,
        /// The values the option takes, as `docs/fio-compat.md` writes them.
        range: String,
    },
    /// Not 0/1, true/false, yes/no, on/off.
    #[error("'{0}' is not a boolean (expected 0 or 1, true or false, yes or no, on or off)")]
    NotBool(String),
    /// A control character (NUL, newline, escape, ...) in a name or path.
    #[error("{what} '{}' has a control character ({code}); names and paths may not", printable(.text))]
    ControlCharacter {
        /// `job name`, `file name`, ...
        what: &'static str,
        /// The text as given.
        text: String,
        /// The first control character, as `U+0000`.
        code: String,
    },
    /// An arithmetic expression that does not evaluate.
    #[error("expression '{expr}': {problem}")]
    Expr {
        /// The whole expression.
        expr: String,
        /// What is wrong in it.
        problem: ExprProblem,
    },
    /// `${` without its `}`.
    #[error("unterminated '${{' in '{0}'")]
    Unterminated(String),
    /// `${VAR}` of a variable that is not set.
    #[error("environment variable '{0}' is not set (used as ${{{0}}})")]
    UnsetVar(String),
    /// `bad size '12x': ...`: the kind of value and the text, around the cause.
    #[error("bad {what} '{text}': {source}")]
    Bad {
        /// `size`, `time`, `number`.
        what: &'static str,
        /// The text as given.
        text: String,
        /// Why.
        source: Box<ValueError>,
    },
}

/// What is wrong inside an arithmetic expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprProblem {
    /// Text left over after a complete expression.
    #[error("unexpected '{rest}' at position {pos}")]
    Unexpected {
        /// The text from there on.
        rest: String,
        /// 1-based position.
        pos: usize,
    },
    /// The result is infinite or not a number.
    #[error("no finite value")]
    NotFinite,
    /// `/` or `%` by zero.
    #[error("{0} by zero")]
    ByZero(&'static str),
    /// An opening parenthesis without its closing one.
    #[error("missing ')'")]
    MissingParen,
    /// `0x` followed by no hex digits.
    #[error("bad hex number '{0}'")]
    BadHex(String),
    /// Something other than a number where one must be.
    #[error("expected a number at '{0}'")]
    ExpectedNumber(String),
    /// The expression stops after an operator.
    #[error("ends too early")]
    EndsEarly,
    /// Parentheses, signs or `^` nested deeper than [`super::expr::MAX_NESTING`].
    #[error("nested more than {0} levels deep")]
    TooDeep(usize),
}

/// Bad job input: what is wrong, and where it was written.
#[derive(Debug, thiserror::Error)]
pub struct JobError {
    /// The job file and line, or the command-line argument.
    pub origin: Option<Origin>,
    /// The job it belongs to, when known.
    pub job: Option<String>,
    /// The option as written (lower-case, without `--`).
    pub option: Option<String>,
    /// What is wrong.
    pub problem: Box<JobProblem>,
}

/// The kinds of bad job input.
#[derive(Debug, thiserror::Error)]
pub enum JobProblem {
    /// An option iolab does not know, with the message that suggests the
    /// closest one or says it is a fio option iolab does not support yet
    /// (`options::unknown_message`).
    #[error("unknown option")]
    UnknownOption(String),
    /// A non-flag option written without a value.
    #[error("needs a value")]
    NeedsValue,
    /// The value does not read.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// The value is not one of the option's words.
    #[error("'{value}' is not one of {}", .choices.join(", "))]
    NotOneOf {
        /// The value given.
        value: String,
        /// What it may be.
        choices: Vec<&'static str>,
    },
    /// A rule between options is broken (`bs` larger than `size`, ...).
    #[error("{0}")]
    Invalid(String),
    /// A job-file or command-line line that does not parse.
    #[error("{0}")]
    Syntax(String),
    /// A job file could not be read.
    #[error("cannot read job file {}: {source}", .path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// `include` of a file that is already being read.
    #[error("{}: include loop", .0.display())]
    IncludeLoop(std::path::PathBuf),
    /// `include`s nested deeper than [`super::ini::MAX_INCLUDE_DEPTH`].
    #[error("{}: includes nested more than {max} levels deep", .path.display())]
    IncludeTooDeep {
        /// The file that would be one level too deep.
        path: std::path::PathBuf,
        /// The limit.
        max: usize,
    },
    /// More `include`s in all than [`super::ini::MAX_INCLUDES`].
    #[error("{}: more than {max} includes in all", .path.display())]
    TooManyIncludes {
        /// The file that would be one include too many.
        path: std::path::PathBuf,
        /// The limit.
        max: usize,
    },
    /// A job file (with what it includes) larger than
    /// [`super::ini::MAX_JOB_TEXT`] bytes.
    #[error("{}: job files larger than {max} bytes in all (with their includes)", .path.display())]
    JobTextTooLarge {
        /// The file being read when the limit was passed.
        path: std::path::PathBuf,
        /// The limit.
        max: u64,
    },
    /// More clones in all than `--max-jobs` allows.
    #[error(
        "numjobs: {clones} clones in all is more than {max} (fio's limit is 4096 threads; iolab run --max-jobs N sets it, up to {})",
        super::range::MAX_JOBS_LIMIT
    )]
    TooManyClones {
        /// Clones of all jobs so far.
        clones: u64,
        /// The limit.
        max: u32,
    },
    /// An error inside an included file.
    #[error("{inner}\n  included from")]
    Included {
        /// The error in the included file.
        inner: Box<JobError>,
    },
    /// `iolab run --section=NAME` names a section that no job file (nor
    /// `--name`) has.
    #[error("--section={name}: no job section [{name}] in the jobs given; they have: {have}")]
    UnknownSection {
        /// The section asked for.
        name: String,
        /// The job sections there are, comma-separated.
        have: String,
    },
    /// Neither a job file nor `--name` was given.
    #[error(
        "no job given: pass a job file or start one with --name=NAME (e.g. iolab run --name=t --filename=F --size=64M --rw=randread)"
    )]
    NoJob,
}

/// Characters of a name or value a message repeats; a longer one is cut
/// there and its length given (a hostile megabyte is no clearer in full).
const SHOWN: usize = 100;

/// `text` with its control characters written as `\u{..}`, for messages;
/// at most [`SHOWN`] characters of it.
pub fn printable(text: &str) -> String {
    use fmt::Write;
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == SHOWN {
            let _ = write!(out, "... ({} bytes)", text.len());
            break;
        }
        if c.is_control() {
            let _ = write!(out, "{}", c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

impl JobError {
    /// An error at `origin` about `option`.
    pub fn at(origin: &Origin, option: &str, problem: impl Into<JobProblem>) -> JobError {
        JobError {
            origin: Some(origin.clone()),
            job: None,
            option: Some(option.to_string()),
            problem: Box::new(problem.into()),
        }
    }

    /// A broken rule of job `job`.
    pub fn invalid(job: &str, why: impl Into<String>) -> JobError {
        JobError {
            origin: None,
            job: Some(printable(job)),
            option: None,
            problem: Box::new(JobProblem::Invalid(why.into())),
        }
    }

    /// A problem with job `job` as a whole (a rule between its options).
    pub fn of_job(job: &str, problem: JobProblem) -> JobError {
        JobError {
            origin: None,
            job: Some(printable(job)),
            option: None,
            problem: Box::new(problem),
        }
    }

    /// A problem with no place attached.
    pub fn plain(problem: JobProblem) -> JobError {
        JobError {
            origin: None,
            job: None,
            option: None,
            problem: Box::new(problem),
        }
    }

    /// A line or file that does not parse, at `origin`.
    pub fn syntax(origin: Option<&Origin>, what: impl Into<String>) -> JobError {
        JobError {
            origin: origin.cloned(),
            job: None,
            option: None,
            problem: Box::new(JobProblem::Syntax(what.into())),
        }
    }
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let JobProblem::Included { inner } = &*self.problem {
            let at = self.origin.as_ref().map(|o| o.to_string());
            return write!(f, "{inner}\n  included from {}", at.unwrap_or_default());
        }
        match (&self.origin, &self.job) {
            (Some(o), _) => write!(f, "{o}: ")?,
            (None, Some(j)) => write!(f, "job '{j}': ")?,
            (None, None) => {}
        }
        let opt = &printable(self.option.as_deref().unwrap_or(""));
        let dashes = if matches!(self.origin, Some(Origin::CommandLine(_))) {
            "--"
        } else {
            ""
        };
        match &*self.problem {
            JobProblem::UnknownOption(message) => write!(f, "{message}"),
            JobProblem::NeedsValue => {
                write!(
                    f,
                    "option '{dashes}{opt}' needs a value ({dashes}{opt}=VALUE)"
                )
            }
            p @ (JobProblem::Value(_) | JobProblem::NotOneOf { .. }) if !opt.is_empty() => {
                write!(f, "option '{opt}': {p}")
            }
            p => write!(f, "{p}"),
        }
    }
}
