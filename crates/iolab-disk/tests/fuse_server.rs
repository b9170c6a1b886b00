//! iolab's FUSE server (`disk::fuse`) over a 64 MiB image in memory, on
//! both transports: O_DIRECT writes and reads at several offsets and sizes,
//! fsync, punched holes, concurrent readers, a held-back answer, a loop
//! device with direct I/O on top, and a clean unmount. Needs root and
//! /dev/fuse (skips with a reason otherwise); the io_uring test turns the
//! fuse module's enable_uring on for its run and puts it back.

mod fuse_common;

use fuse_common::*;
use iolab_disk::disk::fuse::{self, Options, Server, Transport, TransportChoice};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Writes patterns at several offsets and sizes through `f` (the image or
/// a loop device on it) and reads them back, also checking the handler's
/// bytes.
fn round_trips(f: &File, mem: &Mem, seed: u64) {
    let sizes = [4 << 10, 8 << 10, 64 << 10, 128 << 10, 1 << 20];
    let offsets = [
        0u64,
        4 << 10,
        (1 << 20) + (12 << 10),
        (SIZE as u64) - (2 << 20),
    ];
    for (i, &size) in sizes.iter().enumerate() {
        for (j, &off) in offsets.iter().enumerate() {
            let data = pattern(seed + (i * 10 + j) as u64, size);
            let mut buf = Aligned::new(size);
            buf.get().copy_from_slice(&data);
            f.write_all_at(buf.get(), off).expect("O_DIRECT write");
            assert_eq!(mem.at(off, size), data, "image after write {size} at {off}");
            buf.get().fill(0);
            f.read_exact_at(buf.get(), off).expect("O_DIRECT read");
            assert!(buf.get() == &data[..], "read back {size} at {off}");
        }
    }
}

fn mount(choice: TransportChoice, mem: &Arc<Mem>) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        transport: choice,
        ..Options::default()
    };
    let server = fuse::serve(dir.path(), mem.clone(), opts).expect("serve");
    (dir, server)
}

fn exercise(choice: TransportChoice) {
    let mem = Mem::new();
    let (dir, server) = mount(choice, &mem);
    let mount_point: PathBuf = server.dir().to_path_buf();
    println!(
        "transport: {} (wake-up {:?})",
        server.transport(),
        server.wake_cost()
    );
    match choice {
        TransportChoice::Uring => assert!(server.transport().is_uring()),
        _ => assert!(matches!(server.transport(), Transport::Device { .. })),
    }
    let path = server.path();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["disk.img"]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), SIZE as u64);

    let f = open_direct(&path);
    round_trips(&f, &mem, 1);

    // fsync reaches the handler.
    let before = mem.fsyncs.load(Ordering::Relaxed);
    f.sync_all().unwrap();
    assert!(mem.fsyncs.load(Ordering::Relaxed) > before, "fsync");

    // A punched hole reads back as zeros.
    use nix::fcntl::{FallocateFlags, fallocate};
    let flags = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
    fallocate(&f, flags, 4096, 8192).expect("punch");
    let mut buf = Aligned::new(16 << 10);
    f.read_exact_at(buf.get(), 0).unwrap();
    assert!(buf.get()[4096..12288].iter().all(|b| *b == 0), "hole");
    assert!(
        buf.get()[12288..].iter().any(|b| *b != 0),
        "around the hole"
    );

    // Four readers at once.
    let expect = mem.at(0, 4 << 20);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (path, expect) = (&path, &expect);
            s.spawn(move || {
                let f = open_direct(path);
                let mut buf = Aligned::new(64 << 10);
                for k in 0..64u64 {
                    let off = ((t * 16 + k) % 64) * (64 << 10);
                    f.read_exact_at(buf.get(), off).unwrap();
                    let o = off as usize;
                    assert!(buf.get() == &expect[o..o + (64 << 10)], "reader {t}");
                }
            });
        }
    });

    // Every answer held back 200 us.
    mem.delay_ns.store(200_000, Ordering::Relaxed);
    let mut buf = Aligned::new(4096);
    for k in 0..20u64 {
        let t = Instant::now();
        f.read_exact_at(buf.get(), k * 4096).unwrap();
        let took = t.elapsed();
        assert!(took >= Duration::from_micros(200), "read {k} took {took:?}");
    }
    let t = Instant::now();
    f.write_all_at(buf.get(), 0).unwrap();
    assert!(t.elapsed() >= Duration::from_micros(200), "delayed write");
    mem.delay_ns.store(0, Ordering::Relaxed);
    drop(f);

    // A loop device with direct I/O on top.
    {
        let lo = Loop::attach(&path);
        let name = lo.0.trim_start_matches("/dev/");
        let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio")).unwrap();
        assert_eq!(dio.trim(), "1", "the loop device does direct I/O");
        let dev = open_direct(Path::new(&lo.0));
        round_trips(&dev, &mem, 100);
        dev.sync_all().unwrap();
    }

    server.unmount().expect("clean unmount");
    assert!(!mounted(&mount_point), "still mounted");
    assert_eq!(server_threads(), 0, "threads left");
}

#[test]
fn device_transport() {
    on_transport(TransportChoice::Device, || {
        exercise(TransportChoice::Device)
    });
}

#[test]
fn uring_transport() {
    on_transport(TransportChoice::Uring, || exercise(TransportChoice::Uring));
}

/// Auto says why it is not io_uring when the module has it off.
#[test]
fn auto_names_its_reason() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let on = std::fs::read_to_string(ENABLE_URING).unwrap_or_default();
    let mem = Mem::new();
    let (_dir, server) = mount(TransportChoice::Auto, &mem);
    println!("auto: {}", server.transport());
    if on.trim() == "N" {
        assert_eq!(
            server.transport().to_string(),
            format!(
                "read(2) on /dev/fuse, {} queue{}: enable_uring is off",
                cpus(),
                if cpus() == 1 { "" } else { "s" }
            )
        );
    }
    server.unmount().unwrap();
    assert_eq!(server_threads(), 0);
    // With the module's switch on, Auto takes io_uring.
    if let Ok(_on) = UringOn::new() {
        let (_dir, server) = mount(TransportChoice::Auto, &mem);
        println!("auto with enable_uring on: {}", server.transport());
        assert!(server.transport().is_uring());
        server.unmount().unwrap();
        assert_eq!(server_threads(), 0);
    }
}

/// The kernel side goes first (someone else unmounts), or the mount is
/// busy (a file open on it): the unmount still ends every thread.
#[test]
fn unmount_when_gone_or_busy() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cannot_run() {
        println!("skipped: {why}");
        return;
    }
    let uring = UringOn::new().ok();
    let choices = match uring {
        Some(_) => vec![TransportChoice::Device, TransportChoice::Uring],
        None => vec![TransportChoice::Device],
    };
    for choice in choices {
        let mem = Mem::new();
        let (_dir, server) = mount(choice, &mem);
        nix::mount::umount2(server.dir(), nix::mount::MntFlags::empty()).unwrap();
        server.unmount().expect("unmount after an outside umount");
        assert_eq!(server_threads(), 0, "{choice:?}: threads left after gone");

        let (_dir, server) = mount(choice, &mem);
        let f = open_direct(&server.path());
        let mount_point = server.dir().to_path_buf();
        server.unmount().expect("unmount while busy");
        assert!(!mounted(&mount_point));
        assert_eq!(server_threads(), 0, "{choice:?}: threads left after busy");
        let mut buf = Aligned::new(4096);
        assert!(
            f.read_exact_at(buf.get(), 0).is_err(),
            "the connection ended"
        );
    }
}
