//! The paths `iolab trace` gives files are the files' own, as `strace -f
//! -y` shows them, however the program named them: `openat` on a directory
//! descriptor, relative names after `chdir`, `..` through a directory fd,
//! `tar czf` (openat on directory fds) and `rsync -a` (chdir, forked sender
//! and receiver, temporary names) over a tree where many files share a
//! name. iolab used to join relative names to the working directory it
//! read from /proc later: tar's 21 `mod.rs` came out as one wrong path.
//! Needs root and BTF (eBPF), strace, tar and rsync; skipped otherwise.

mod common;

use common::trace::can;
use common::{s, scratch, succeed};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The program of the issue: `openat(d, "a.dat")` on a directory fd,
/// `open("b.sql")` after `chdir`, then `openat(d, "../real/c.txt")` after
/// `chdir("/")`; each file written once.
const DIRFD_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char p[4096];
    snprintf(p, sizeof p, "%s/data", argv[1]); mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/real", argv[1]); mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/data", argv[1]);
    int d = open(p, O_RDONLY | O_DIRECTORY);
    int a = openat(d, "a.dat", O_CREAT | O_WRONLY, 0644);
    if (write(a, "a", 1) != 1) return 1;
    close(a);
    snprintf(p, sizeof p, "%s/real", argv[1]);
    if (chdir(p)) return 1;
    int b = open("b.sql", O_CREAT | O_WRONLY, 0644);
    if (write(b, "b", 1) != 1) return 1;
    close(b);
    if (chdir("/")) return 1;
    int c = openat(d, "../real/c.txt", O_CREAT | O_WRONLY, 0644);
    if (write(c, "c", 1) != 1) return 1;
    close(c);
    return 0;
}
"#;

/// A tree under `dir/src`: 21 directories, each with a `mod.rs` and a
/// `lib.rs` of different sizes (some two levels down).
fn tree(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    for i in 0..21 {
        let d = match i % 3 {
            0 => src.join(format!("m{i}")),
            _ => src.join(format!("m{}", i - i % 3)).join(format!("n{i}")),
        };
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("mod.rs"), vec![b'a'; 100 + i * 37]).unwrap();
        std::fs::write(d.join("lib.rs"), vec![b'b'; 3000 + i * 11]).unwrap();
    }
    src
}

/// `name` with rsync's temporary suffix (`.mod.rs.Ab12Cd`) made `.mod.rs.*`.
fn untemp(p: &str) -> String {
    let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
    match name.strip_prefix('.').and_then(|n| n.rsplit_once('.')) {
        Some((base, tail))
            if tail.len() == 6 && tail.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            format!("{dir}/.{base}.*")
        }
        _ => p.to_string(),
    }
}

/// The file paths under `under` (not directories) of a path list.
fn files_under(paths: impl Iterator<Item = String>, under: &Path) -> BTreeSet<String> {
    let root = format!("{}/", s(under));
    paths
        .filter(|p| p.starts_with(&root) && !Path::new(p).is_dir())
        .map(|p| untemp(&p))
        .collect()
}

/// The paths strace -f -y shows for descriptors (`3</a/b>`) of `cmd`,
/// run in `cwd`.
fn strace_paths(cwd: &Path, cmd: &[&str], under: &Path) -> BTreeSet<String> {
    let log = cwd.join("strace.log");
    succeed(
        Command::new("strace")
            .current_dir(cwd)
            .args(["-f", "-qq", "-y", "-s", "0", "-o", s(&log)])
            .args(cmd),
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let mut out = Vec::new();
    for l in text.lines() {
        let mut rest = l;
        while let Some(i) = rest.find("</") {
            let tail = &rest[i + 1..];
            let end = tail.find('>').unwrap_or(tail.len());
            out.push(tail[..end].to_string());
            rest = &tail[end..];
        }
    }
    files_under(out.into_iter(), under)
}

/// The paths of the files `iolab trace` shows for `cmd`, run in `cwd`.
fn iolab_paths(cwd: &Path, cmd: &[&str], under: &Path) -> BTreeSet<String> {
    let out = succeed(
        common::bin()
            .current_dir(cwd)
            .args(["trace", "--no-store", "-f", "json", "--"])
            .args(cmd),
    );
    let v = common::parse_json(&out);
    let paths = v["files"].as_array().expect("files").iter();
    files_under(
        paths.map(|f| f["path"].as_str().unwrap().to_string()),
        under,
    )
}

fn have(tool: &str, test: &str) -> bool {
    common::have(tool, test)
}

#[test]
fn openat_on_a_directory_fd_and_after_chdir_names_the_real_files() {
    let test = "openat_on_a_directory_fd_and_after_chdir_names_the_real_files";
    if !can(test) || !have("cc", test) {
        return;
    }
    let d = scratch();
    let base = d.path().canonicalize().unwrap();
    let src = base.join("dirfd.c");
    let prog = base.join("dirfd");
    std::fs::write(&src, DIRFD_C).unwrap();
    succeed(Command::new("cc").args(["-O2", "-o", s(&prog), s(&src)]));
    let run = base.join("run");
    std::fs::create_dir(&run).unwrap();
    let got = iolab_paths(&base, &[s(&prog), s(&run)], &run);
    let want: BTreeSet<String> = ["data/a.dat", "real/b.sql", "real/c.txt"]
        .iter()
        .map(|f| s(&run.join(f)).to_string())
        .collect();
    assert_eq!(got, want);
    if have("strace", test) {
        std::fs::remove_dir_all(&run).unwrap();
        std::fs::create_dir(&run).unwrap();
        assert_eq!(strace_paths(&base, &[s(&prog), s(&run)], &run), want);
    }
}

#[test]
fn tar_of_a_tree_with_repeated_names_names_every_file_as_strace() {
    let test = "tar_of_a_tree_with_repeated_names_names_every_file_as_strace";
    if !can(test) || !have("strace", test) || !have("tar", test) {
        return;
    }
    let d = scratch();
    let base = d.path().canonicalize().unwrap();
    let src = tree(&base);
    let cmd = ["tar", "czf", "out.tgz", "src"];
    let got = iolab_paths(&base, &cmd, &src);
    let want = strace_paths(&base, &cmd, &src);
    assert_eq!(want.len(), 42, "strace: {want:?}");
    assert_eq!(got, want);
}

#[test]
fn rsync_of_a_tree_with_repeated_names_names_every_file_as_strace() {
    let test = "rsync_of_a_tree_with_repeated_names_names_every_file_as_strace";
    if !can(test) || !have("strace", test) || !have("rsync", test) {
        return;
    }
    let d = scratch();
    let base = d.path().canonicalize().unwrap();
    tree(&base);
    let cmd = ["rsync", "-a", "src/", "dst/"];
    let got = iolab_paths(&base, &cmd, &base);
    std::fs::remove_dir_all(base.join("dst")).unwrap();
    let want = strace_paths(&base, &cmd, &base);
    // Each source file read, each copy written under a temporary name.
    assert!(want.len() >= 84, "strace: {want:?}");
    assert_eq!(got, want);
}
