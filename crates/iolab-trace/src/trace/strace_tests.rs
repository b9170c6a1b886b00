//! The strace parser on small samples of real strace output.

use super::*;
use crate::trace::strace_syntax as syntax;

fn parse_ok(text: &str) -> Trace {
    parse(text.as_bytes(), Path::new("t.strace"), &Options::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> (usize, String) {
    match parse(text.as_bytes(), Path::new("t.strace"), &Options::default()) {
        Err(TraceError::Format { line, problem, .. }) => (line, problem),
        other => panic!("expected a format error, got {other:?}"),
    }
}

fn named<'a>(t: &'a Trace, name: &str) -> Vec<&'a Event> {
    t.events.iter().filter(|e| e.name() == name).collect()
}

#[test]
fn unfinished_and_resumed_calls_are_joined_per_thread() {
    let t = parse_ok(concat!(
        "100 1700000000.000000 execve(\"/bin/app\", [\"app\", \"x\"], 0x7ff /* 3 vars */) = 0 <0.000100>\n",
        "100 1700000000.001000 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, exit_signal=0} <unfinished ...>\n",
        "101 1700000000.001500 pread64(3</data/f>,  <unfinished ...>\n",
        "100 1700000000.002000 <... clone3 resumed> => {parent_tid=[101]}, 88) = 101 <0.001000>\n",
        "100 1700000000.002100 pread64(3</data/f>, \"x\"..., 4096, 8192) = 4096 <0.000020>\n",
        "101 1700000000.003000 <... pread64 resumed>\"\\0\\1\"..., 512, 4096) = 512 <0.001500>\n",
        "101 1700000000.004000 +++ exited with 0 +++\n",
        "100 1700000000.005000 +++ exited with 7 +++\n",
    ));
    let p = named(&t, "pread64");
    assert_eq!(p.len(), 2);
    // Sorted by entry time: thread 101's call began first.
    assert_eq!((p[0].tid, p[0].pid, p[0].t_ns), (101, 100, 1_500_000));
    assert_eq!((p[0].len, p[0].offset, p[0].result), (512, Some(4096), 512));
    assert_eq!(p[0].lat_ns, 1_500_000);
    assert_eq!(
        (p[1].tid, p[1].offset, p[1].lat_ns),
        (100, Some(8192), 20_000)
    );
    assert_eq!(t.path_of(p[0]), Some("/data/f"));
    assert_eq!(t.threads.len(), 2);
    assert!(t.threads.iter().all(|th| th.pid == 100 && th.comm == "app"));
    assert_eq!(t.meta.command, ["app", "x"]);
    assert_eq!((t.meta.pid, t.meta.exit_status), (100, Some(7)));
    assert_eq!(t.meta.duration_ns, 5_000_000);
    assert_eq!(t.calls["pread64"].bytes, 4608);
}

#[test]
fn escapes_in_strings_and_paths_are_undone() {
    let t = parse_ok(concat!(
        "1700000000.100000 openat(AT_FDCWD</tmp/d>, \"a<b>c\", O_WRONLY|O_CREAT|O_APPEND, 0666) = 3</tmp/d/a\\74b\\76c> <0.000010>\n",
        "1700000000.100100 write(3</tmp/d/a\\74b\\76c>, \"q), \\\"(\\n\\x41\\101\", 8) = 8 <0.000010>\n",
        "1700000000.100200 openat(AT_FDCWD</tmp/d>, \"sp ace\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000005>\n",
    ));
    assert_eq!(t.paths, ["/tmp/d/a<b>c", "/tmp/d/sp ace"]);
    let w = named(&t, "write")[0];
    assert_eq!((w.fd, w.len, w.result), (3, 8, 8));
    assert_eq!(t.path_of(w), Some("/tmp/d/a<b>c"));
    // O_APPEND: the position a write lands at is not known.
    assert_eq!(w.offset, None);
    let o = named(&t, "openat");
    let want = (libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND) as u64;
    assert_eq!(
        (o[0].flags, o[0].fd, o[0].result),
        (want, libc::AT_FDCWD, 3)
    );
    assert_eq!(o[1].result, -(libc::ENOENT as i64));
    assert_eq!(t.calls["openat"].errors, 1);
    assert_eq!(
        syntax::string("\"q), \\\"(\\n\\x41\\101\"").unwrap(),
        "q), \"(\nAA"
    );
}

#[test]
fn output_without_pid_column_is_one_thread() {
    let t = parse_ok(concat!(
        "1700000000.000000 openat(AT_FDCWD, \"/f\", O_RDONLY|O_CLOEXEC|O_DIRECT) = 3 <0.000010>\n",
        "1700000000.000100 read(3, \"\"..., 4096) = 4096 <0.000010>\n",
        "1700000000.000200 read(3, \"\"..., 4096) = 100 <0.000010>\n",
        "1700000000.000300 lseek(3, 0, SEEK_SET) = 0 <0.000001>\n",
        "1700000000.000400 read(3, \"\"..., 4096) = 4096 <0.000010>\n",
        "1700000000.000500 fadvise64(3, 0, 8192, POSIX_FADV_WILLNEED) = 0 <0.000003>\n",
        "1700000000.000600 madvise(0x7f0000000000, 8192, MADV_DONTNEED) = 0 <0.000003>\n",
        "1700000000.000700 mmap(NULL, 8192, PROT_READ, MAP_SHARED, 3, 4096) = 0x7f1234560000 <0.000003>\n",
        "1700000000.000800 close(3) = 0 <0.000002>\n",
        "1700000000.000900 +++ exited with 0 +++\n",
    ));
    assert_eq!(t.threads.len(), 1);
    let o = named(&t, "openat")[0];
    let want = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECT) as u64;
    assert_eq!(o.flags, want);
    // Without -y the fd table names the file.
    let reads: Vec<_> = named(&t, "read").iter().map(|e| e.offset).collect();
    assert_eq!(reads, [Some(0), Some(4096), Some(0)]);
    assert!(named(&t, "read").iter().all(|e| t.path_of(e) == Some("/f")));
    let f = named(&t, "fadvise64")[0];
    assert_eq!(
        (f.flags, f.offset, f.len),
        (libc::POSIX_FADV_WILLNEED as u64, Some(0), 8192)
    );
    let m = named(&t, "madvise")[0];
    assert_eq!(
        (m.flags, m.len, m.file),
        (libc::MADV_DONTNEED as u64, 8192, None)
    );
    let mm = named(&t, "mmap")[0];
    assert_eq!(
        (mm.result, mm.offset, mm.flags),
        (0x7f1234560000, Some(4096), libc::MAP_SHARED as u64)
    );
    assert_eq!(t.path_of(mm), Some("/f"));
    assert_eq!(t.meta.exit_status, Some(0));
}

#[test]
fn pid_prefix_of_strace_to_stderr_names_the_first_process() {
    let t = parse_ok(concat!(
        "1700000000.000000 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 51 <0.000100>\n",
        "[pid    51] 1700000000.000100 openat(AT_FDCWD</>, \"f\", O_RDONLY) = 3</f> <0.000010>\n",
        "[pid    50] 1700000000.000200 wait4(-1,  <unfinished ...>\n",
        "[pid    51] 1700000000.000300 read(3</f>, \"\", 10) = 0 <0.000010>\n",
        "[pid    51] 1700000000.000400 +++ exited with 0 +++\n",
        "1700000000.000500 <... wait4 resumed>NULL, 0, NULL) = 51 <0.000300>\n",
    ));
    let mut th: Vec<(u32, u32, u32)> = t.threads.iter().map(|t| (t.pid, t.tid, t.ppid)).collect();
    th.sort();
    assert_eq!(th, [(50, 50, 0), (51, 51, 50)]);
    let r = named(&t, "read")[0];
    assert_eq!((r.pid, r.tid, r.offset), (51, 51, Some(0)));
    assert_eq!(t.meta.pid, 50);
}

#[test]
fn dup_and_fork_share_positions_and_yy_notes_name_files() {
    let t = parse_ok(concat!(
        "7 1700000000.000000 openat(AT_FDCWD</w>, \"d\", O_RDONLY) = 3</w/d> <0.000010>\n",
        "7 1700000000.000001 dup2(3</w/d>, 0</dev/pts/0<char 136:0>>) = 0</w/d> <0.000010>\n",
        "7 1700000000.000002 read(0</w/d>, \"\"..., 4096) = 4096 <0.000010>\n",
        "7 1700000000.000003 fork() = 8 <0.000010>\n",
        "8 1700000000.000004 read(0</w/d>, \"\"..., 4096) = 4096 <0.000010>\n",
        "7 1700000000.000005 write(1</dev/null<char 1:3>>, \"x\", 1) = 1 <0.000010>\n",
        "7 1700000000.000006 write(4<TCP:[127.0.0.1:5->127.0.0.1:6]>, \"x\", 1) = 1 <0.000010>\n",
        "7 1700000000.000007 read(5<pipe:[1234]>, \"x\", 1) = 1 <0.000010>\n",
        "7 1700000000.000008 read(3</w/d (deleted)>, \"x\", 1) = 1 <0.000010>\n",
    ));
    let r = named(&t, "read");
    assert_eq!(
        (r[0].offset, r[1].offset, r[1].pid),
        (Some(0), Some(4096), 8)
    );
    let w = named(&t, "write");
    assert_eq!(t.path_of(w[0]), Some("/dev/null"));
    assert_eq!((w[1].file, r[2].file, w[1].offset), (None, None, None));
    // fd 3 is the description fd 0 was dup'ed from, which both reads
    // (the parent's and the child's) moved on.
    assert_eq!((t.path_of(r[3]), r[3].offset), (Some("/w/d"), Some(8192)));
}

#[test]
fn calls_that_never_returned_are_left_out() {
    let t = parse_ok(concat!(
        "1 1700000000.000000 read(0</in>,  <unfinished ...>\n",
        "1 1700000000.000001 <... read resumed> <unfinished ...>) = ?\n",
        "1 1700000000.000002 read(0</in>, \"\", 1) = ? ERESTARTSYS (To be restarted if SA_RESTART is set) <0.1>\n",
        "1 1700000000.000003 --- SIGINT {si_signo=SIGINT, si_code=SI_KERNEL} ---\n",
        "2 1700000000.000004 <... pread64 resumed>\"\", 1, 0) = 1 <0.000010>\n",
        "1 1700000000.000005 fsync(3</f>) = 0 <0.002000>\n",
        "1 1700000000.000006 clock_nanosleep(CLOCK_REALTIME, 0, {tv_sec=3, tv_nsec=0},  <detached ...>\n",
        "1 1700000000.000007 +++ killed by SIGKILL +++\n",
        "strace: Process 1 detached\n",
    ));
    assert_eq!(t.events.len(), 1);
    assert_eq!(
        (t.events[0].name(), t.events[0].lat_ns),
        ("fsync", 2_000_000)
    );
    assert_eq!(t.meta.exit_status, None);
}

#[test]
fn what_is_not_strace_output_is_refused_at_its_line() {
    let (line, problem) = parse_err("hello world\n");
    assert_eq!(line, 1);
    assert!(problem.contains("expected strace output"), "{problem}");
    let (line, problem) = parse_err("");
    assert_eq!(line, 1);
    assert!(problem.contains("no strace output"), "{problem}");
    // Mostly not strace's: refused at the first bad line.
    let (line, problem) = parse_err(concat!(
        "1 1700000000.000000 fsync(3) = 0 <0.000001>\n",
        "\n",
        "1 1700000000.000001 this is not a call\n",
        "1 1700000000.000002 nor this\n",
    ));
    assert_eq!(line, 3);
    assert!(problem.contains("expected a system call"), "{problem}");
    let (_, problem) = parse_err("% time     seconds  usecs/call     calls    errors syscall\n");
    assert!(problem.contains("strace -c"), "{problem}");
}

#[test]
fn syntax_reads_numbers_results_and_latency() {
    assert_eq!(syntax::number("0x10"), Some(16));
    assert_eq!(syntax::number("0644"), Some(0o644));
    assert_eq!(syntax::number("-100"), Some(-100));
    assert_eq!(
        syntax::flags("O_RDONLY|O_CLOEXEC|0x40"),
        (libc::O_CLOEXEC | 0x40) as u64
    );
    let c = syntax::call("fcntl(3</f>, F_GETFL) = 0x8002 (flags O_RDWR|O_LARGEFILE) <0.000002>")
        .unwrap();
    assert_eq!(
        (c.value, c.errno, c.lat_ns),
        (Some(0x8002), None, Some(2000))
    );
    let c = syntax::call("openat(AT_FDCWD</t (x)>, \"f(\", O_RDONLY) = 4</t (x)/f(> <0.000002>")
        .unwrap();
    assert_eq!((c.args.len(), c.note), (3, Some("/t (x)/f(")));
    let c = syntax::call("exit_group(0)                     = ?").unwrap();
    assert_eq!((c.value, c.lat_ns), (None, None));
    let c = syntax::call("getpid() = 5").unwrap();
    assert!(c.args.is_empty());
    assert_eq!(syntax::unescape(b"a\\\\b\\tc\\0"), b"a\\b\tc\0");
}

#[test]
fn execve_from_a_thread_resumes_in_the_leader() {
    let t = parse_ok(concat!(
        "10 1700000000.000000 execve(\"/usr/bin/python3\", [\"/usr/local/very/long/path/to/pyth\"..., \"x.py\"], 0x1 /* 3 vars */) = 0 <0.000100>\n",
        "10 1700000000.000100 clone3({flags=CLONE_VM|CLONE_THREAD, exit_signal=0}, 88) = 11 <0.000010>\n",
        "10 1700000000.000200 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>\n",
        "11 1700000000.000300 execve(\"/bin/true\", [\"true\"], 0x2 /* 3 vars */ <unfinished ...>\n",
        "10 1700000000.000400 +++ superseded by execve in pid 11 +++\n",
        "10 1700000000.000500 <... execve resumed>) = 0 <0.000200>\n",
        "10 1700000000.000600 fsync(1</dev/null>) = 0 <0.000010>\n",
    ));
    assert_eq!(
        t.meta.command,
        ["/usr/local/very/long/path/to/pyth...", "x.py"]
    );
    let main = &t.threads[0];
    assert_eq!((main.tid, main.comm.as_str()), (10, "true"));
    assert_eq!(named(&t, "fsync")[0].pid, 10);
}

#[test]
fn strace_to_stderr_with_its_messages_inside_lines() {
    // The clone is cut by strace's own message; the first process shows
    // as [pid 50] first when it resumes a call.
    let t = parse_ok(concat!(
        "1700000000.000000 clone(child_stack=NULL, flags=SIGCHLDstrace: Process 51 attached\n",
        ", child_tidptr=0x1) = 51 <0.000100>\n",
        "[pid    51] 1700000000.000100 fsync(3</f>) = 0 <0.000010>\n",
        "1700000000.000200 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>\n",
        "[pid    52] 1700000000.000300 fsync(3</f>) = 0 <0.000010>\n",
        "strace: Process 52 attached\n",
        "[pid    50] 1700000000.000400 <... clone resumed>, child_tidptr=0x1) = 52 <0.000200>\n",
        "[pid    50] 1700000000.000500 fsync(3</f>) = 0 <0.000010>\n",
    ));
    let fsyncs: Vec<(u32, u32)> = named(&t, "fsync").iter().map(|e| (e.pid, e.tid)).collect();
    assert_eq!(fsyncs, [(51, 51), (52, 52), (50, 50)]);
    let mut th: Vec<(u32, u32)> = t.threads.iter().map(|t| (t.tid, t.ppid)).collect();
    th.sort();
    assert_eq!(th, [(50, 0), (51, 50), (52, 50)]);
}
