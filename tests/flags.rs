//! One flag convention across subcommands (README, "Command reference"):
//! `-f/--output-format FORMAT` for formats, `-o/--output PATH` for output
//! files; the old spellings (`--format`, `-o FORMAT`, `--out`) still work
//! but are hidden. Suggestions only for options similar to what was typed;
//! `iolab completions` and `iolab man`.

mod common;
use common::*;
use std::path::Path;

/// A results database in `dir` holding two small runs (ids 1 and 2).
fn db_with_two_runs(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("results.db");
    let f = dir.join("f");
    for name in ["a", "b"] {
        succeed(
            with_db(&db)
                .arg("run")
                .args(job(name, &f, "--size=64k --rw=read")),
        );
    }
    db
}

/// `iolab ARGS --help`.
fn help(args: &[&str]) -> String {
    stdout_text(bin().args(args).arg("--help"))
}

/// Asserts the help shows every `new` spelling and none of the `old`.
fn shows_only_new(args: &[&str], new: &[&str], old: &[&str]) {
    let h = help(args);
    for n in new {
        assert!(h.contains(n), "{args:?} --help lacks {n}:\n{h}");
    }
    for o in old {
        assert!(!h.contains(o), "{args:?} --help shows the old {o}:\n{h}");
    }
}

/// The stdout of `iolab ARGS` against `db`, which must succeed.
fn out(db: &Path, args: &[&str]) -> String {
    String::from_utf8(succeed(with_db(db).args(args))).unwrap()
}

#[test]
fn history_show_and_export_take_the_format_as_f_and_their_old_spelling() {
    let d = scratch();
    let db = db_with_two_runs(d.path());
    for (cmd, old) in [
        (&["history"][..], Some("--format")),
        (&["show", "1"][..], None),
        (&["export", "1", "2"][..], Some("--format")),
    ] {
        let args = |flag: &'static str| [cmd, &[flag, "csv"]].concat();
        let new = out(&db, &args("-f"));
        assert!(
            new.lines().count() >= 2 && new.contains(','),
            "{cmd:?}: {new}"
        );
        assert_eq!(out(&db, &args("--output-format")), new, "{cmd:?}");
        if let Some(old) = old {
            assert_eq!(out(&db, &args(old)), new, "{cmd:?} {old}");
        }
        shows_only_new(cmd, &["-f, --output-format <FORMAT>"], &["--format"]);
    }
}

#[test]
fn export_writes_its_file_with_o_and_output() {
    let d = scratch();
    let db = db_with_two_runs(d.path());
    let (short, long) = (d.path().join("short.csv"), d.path().join("long.csv"));
    assert_eq!(out(&db, &["export", "1", "-f", "csv", "-o", s(&short)]), "");
    out(
        &db,
        &["export", "1", "--format", "csv", "--output", s(&long)],
    );
    let text = std::fs::read_to_string(&short).unwrap();
    assert!(text.lines().count() == 2, "{text}");
    assert_eq!(std::fs::read_to_string(&long).unwrap(), text);
    shows_only_new(&["export"], &["-o, --output <FILE>"], &[]);
}

#[test]
fn compare_takes_f_and_its_old_format() {
    let d = scratch();
    let db = db_with_two_runs(d.path());
    let new = out(&db, &["compare", "1", "2", "-f", "json"]);
    parse_json(new.as_bytes());
    assert_eq!(
        out(&db, &["compare", "1", "2", "--output-format", "json"]),
        new
    );
    assert_eq!(out(&db, &["compare", "1", "2", "--format", "json"]), new);
    shows_only_new(
        &["compare"],
        &["-f, --output-format <FORMAT>", "--plot <FILE>"],
        &["--format"],
    );
}

#[test]
fn sweep_takes_f_and_its_old_format() {
    let d = scratch();
    let f = d.path().join("f");
    for flag in ["-f", "--output-format", "--format"] {
        let mut args = vec!["sweep", "--no-store", "--vary", "bs=4k,8k", flag, "json"];
        let j = job("s", &f, "--size=64k --rw=read");
        args.extend(j.iter().map(String::as_str));
        // The default (normal) table is not JSON: parsing is the check.
        stdout_json(bin().args(&args));
    }
    shows_only_new(&["sweep"], &["-f, --output-format <FORMAT>"], &["--format"]);
}

#[test]
fn run_writes_its_file_with_o_as_fio_and_refuses_f() {
    let d = scratch();
    let f = d.path().join("f");
    let j = job("r", &f, "--size=64k --rw=read");
    let (short, long) = (d.path().join("short.json"), d.path().join("long.json"));
    for (flag, file) in [("-o", &short), ("--output", &long)] {
        let (o, e) = succeed_text(
            bin()
                .args(["run", "--no-store", "--output-format=json", flag, s(file)])
                .args(&j),
        );
        assert_eq!((o.as_str(), e.as_str()), ("", ""), "{flag}");
        assert_eq!(
            parse_json(&std::fs::read(file).unwrap())["jobs"][0]["jobname"],
            "r"
        );
    }
    // fio's -f is --append-terse: run takes neither meaning.
    let err = fails_with(
        bin().args(["run", "--no-store", "-f", "json"]).args(&j),
        code::USAGE,
        "--output-format=FORMAT",
    );
    assert_one_line(&err, &["-f", "fio's -f is --append-terse"]);
    shows_only_new(
        &["run"],
        &[
            "--output-format <FORMAT[,FORMAT...]>",
            "-o, --output <FILE>",
        ],
        &["-f, "],
    );
}

#[test]
fn tree_takes_output_format_and_its_old_o_while_create_keeps_f_for_files() {
    let d = scratch();
    let t = d.path().join("t");
    // -f is fdtree's files per directory: 3 files in each of 1 + 2 dirs.
    let v = stdout_json(
        bin()
            .args(["tree", "create", s(&t), "-d", "2", "-l", "1", "-f", "3"])
            .args(["-s", "1k", "--no-store", "--output-format", "json"]),
    );
    assert_eq!(v["shape"]["files"], 3, "{v}");
    let files = std::fs::read_dir(&t)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_file());
    assert_eq!(files.count(), 3);
    for flag in ["--output-format", "-o"] {
        stdout_json(bin().args(["tree", "walk", s(&t), "--no-store", flag, "json"]));
    }
    shows_only_new(
        &["tree"],
        &["--output-format <FORMAT>"],
        &["-o, ", "-f, --output-format"],
    );
    shows_only_new(&["tree", "create"], &["-f, --files"], &["-o, "]);
}

#[test]
fn cache_takes_f_and_its_old_o() {
    let d = scratch();
    let f = write_file(d.path(), "c", "some bytes");
    for flag in ["-f", "--output-format", "-o"] {
        let v = stdout_json(bin().args(["cache", "status", s(&f), flag, "json"]));
        assert!(v.is_object(), "{flag}: {v}");
    }
    shows_only_new(&["cache"], &["-f, --output-format <FORMAT>"], &["-o, "]);
}

#[test]
fn lab_writes_its_plots_with_o_output_and_its_old_out() {
    let d = scratch();
    for flag in ["-o", "--output", "--out"] {
        let dir = d.path().join(flag.trim_start_matches('-'));
        let args = [
            "lab",
            "prefetch",
            "--quick",
            "--size",
            "1M",
            "--ops",
            "50",
            "--no-store",
        ];
        succeed(bin().args(args).args(["--dir", s(d.path()), flag, s(&dir)]));
        assert!(dir.join("prefetch-iops.svg").is_file(), "{flag}");
    }
    shows_only_new(&["lab", "prefetch"], &["-o, --output <DIR>"], &["--out "]);
}

#[test]
fn plot_and_report_write_their_file_with_o() {
    shows_only_new(&["plot"], &["-o, --output <FILE>"], &[]);
    shows_only_new(&["report"], &["-o, --output <FILE>"], &[]);
}

// Suggestions: only for what resembles what was typed, never a hidden spelling.

/// The stderr of `iolab ARGS`, which must fail with a usage error.
fn usage_error(args: &[&str]) -> String {
    let (code, err) = fail(bin().args(args));
    assert_eq!(code, code::USAGE, "{args:?}: {err}");
    err
}

#[test]
fn a_slip_in_an_option_subcommand_or_value_is_suggested() {
    for (args, tip) in [
        (
            &["history", "--sinse", "1d"][..],
            "a similar argument exists: '--since'",
        ),
        (
            &["history", "--lable", "x"],
            "a similar argument exists: '--label'",
        ),
        (
            &["history", "--outptu-format", "json"],
            "a similar argument exists: '--output-format'",
        ),
        (&["histroy"], "a similar subcommand exists: 'history'"),
        (&["history", "-f", "jsno"], "a similar value exists: 'json'"),
        (&["list", "formatz"], "a similar value exists: 'formats'"),
    ] {
        let err = usage_error(args);
        assert!(err.contains(tip), "{args:?}: {err}");
    }
    // fio's job options (iolab's own "did you mean") and registry names.
    let err = usage_error(&["run", "--no-store", "--name=a", "--blocksze=4k"]);
    assert!(err.contains("did you mean 'blocksize'"), "{err}");
    // A slip for run's or sweep's own flags, among fio's job options.
    let err = usage_error(&["run", "--no-store", "--output-fromat=json", "--name=a"]);
    assert_one_line(
        &err,
        &["--output-fromat=json", "did you mean --output-format?"],
    );
    let err = usage_error(&["run", "--no-store", "--parse-onyl", "--name=a"]);
    assert!(err.contains("did you mean --parse-only?"), "{err}");
    let err = usage_error(&["sweep", "--no-store", "--vary", "bs=4k", "--metrc", "iops"]);
    assert!(err.contains("did you mean --metric?"), "{err}");
    let err = usage_error(&["lab", "prefetc"]);
    assert!(err.contains("(did you mean 'prefetch'?)"), "{err}");
    // A subcommand's option typed before the subcommand says where it goes.
    let err = usage_error(&["--tracer", "strace", "trace", "--", "true"]);
    assert_one_line(
        &err,
        &["'--tracer' is an option of `iolab trace`: put it after the subcommand"],
    );
}

#[test]
fn nothing_unlike_what_was_typed_is_suggested() {
    // Each of these was answered with a far-fetched name: --json with
    // --job, histroy with list too, iops with loops; --formt with the
    // hidden --format.
    for args in [
        &["history", "--json"][..],
        &["history", "--zzz"],
        &["history", "--formt", "csv"],
        &["export", "1", "--formt", "csv"],
    ] {
        let err = usage_error(args);
        assert!(!err.contains("similar"), "{args:?}: {err}");
    }
    let err = usage_error(&["histroy"]);
    assert!(!err.contains("'list'"), "{err}");
    let err = usage_error(&["run", "--no-store", "--zzz", "--name=a"]);
    assert!(!err.contains("did you mean"), "{err}");
    let err = usage_error(&["run", "--no-store", "--name=a", "--iops=3"]);
    assert!(
        err.contains("unknown option 'iops'") && !err.contains("did you mean"),
        "{err}"
    );
}

// Completions and the manual page.

#[test]
fn completions_for_bash_load_in_bash_and_zsh_fish_are_written() {
    let bash = stdout_text(bin().args(["completions", "bash"]));
    assert!(
        bash.contains("_iolab()") && bash.contains("history"),
        "{bash}"
    );
    // The README's way: source it in bash, then bash knows how to complete.
    let dir = Path::new(env!("CARGO_BIN_EXE_iolab")).parent().unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (o, _) = succeed_text(std::process::Command::new("bash").env("PATH", path).args([
        "-c",
        "source <(iolab completions bash) && complete -p iolab",
    ]));
    assert!(
        o.contains("-F _iolab") && o.trim_end().ends_with(" iolab"),
        "{o}"
    );
    let zsh = stdout_text(bin().args(["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef iolab"), "{zsh}");
    let fish = stdout_text(bin().args(["completions", "fish"]));
    assert!(
        fish.contains("complete -c iolab") && fish.contains("output-format"),
        "{fish}"
    );
    let err = usage_error(&["completions", "tcsh"]);
    assert!(err.contains("possible values: bash"), "{err}");
}

/// The subcommands `iolab --help` lists.
fn subcommands() -> Vec<String> {
    let h = help(&[]);
    let list = h
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap();
    let names: Vec<String> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .filter(|n| n != "help")
        .collect();
    assert!(
        names.len() >= 15 && names.contains(&"man".to_string()),
        "{names:?}"
    );
    names
}

#[test]
fn man_prints_one_page_naming_every_subcommand() {
    let page = stdout_text(bin().arg("man"));
    assert!(page.contains(".TH IOLAB 1"), "{}", &page[..200]);
    for sub in subcommands() {
        assert!(
            page.contains(&format!("iolab\\-{sub}(1)")),
            "man lacks {sub}"
        );
    }
    if have("man", "man_prints_one_page_naming_every_subcommand") {
        // The README's `iolab man | man -l -`.
        let mut man = std::process::Command::new("man")
            .env("MANWIDTH", "80")
            .args(["-l", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut man.stdin.take().unwrap(), page.as_bytes()).unwrap();
        let done = man.wait_with_output().unwrap();
        assert!(done.status.success(), "man -l -: {:?}", done.status);
        let text = String::from_utf8(done.stdout).unwrap();
        // Not on a terminal, man still overstrikes bold: "N\x08N".
        let mut plain = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match chars.peek() {
                Some('\x08') => drop(chars.next()),
                _ => plain.push(c),
            }
        }
        let text = plain;
        assert!(
            text.contains("IOLAB(1)") && text.contains("SUBCOMMANDS"),
            "{text}"
        );
    }
}

#[test]
fn man_dir_writes_a_page_per_subcommand() {
    let d = scratch();
    let dir = d.path().join("man").join("man1");
    let (o, e) = succeed_text(bin().args(["man", "--dir", s(&dir)]));
    assert_eq!((o.as_str(), e.as_str()), ("", ""));
    for sub in subcommands() {
        let page = std::fs::read_to_string(dir.join(format!("iolab-{sub}.1"))).unwrap();
        let title = format!(".TH IOLAB-{} 1", sub.to_uppercase());
        assert!(page.contains(&title), "{sub}: {}", &page[..200]);
    }
    let create = std::fs::read_to_string(dir.join("iolab-tree-create.1")).unwrap();
    assert!(create.contains("\\-\\-files"), "{create}");
    assert!(dir.join("iolab.1").is_file());
}
