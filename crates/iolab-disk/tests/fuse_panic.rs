//! A bug in an image handler (a panic) fails only its request, with EIO,
//! on both transports: every queue goes on serving and the server unmounts.
//! Needs root and /dev/fuse (skips with a reason otherwise).

mod fuse_common;

use fuse_common::*;
use iolab_disk::disk::fuse::{self, Answer, ImageHandler, Options, TransportChoice};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Where [`Panicky`]'s reads panic.
const PANIC_AT: u64 = 8 << 20;

/// [`Mem`], but a read at [`PANIC_AT`] panics (a bug in a handler).
struct Panicky(Arc<Mem>);

impl ImageHandler for Panicky {
    fn size(&self) -> u64 {
        self.0.size()
    }
    fn open(&self) -> u64 {
        self.0.open()
    }
    fn read(&self, fh: u64, offset: u64, buf: &mut [u8]) -> Answer {
        assert_ne!(offset, PANIC_AT, "a handler's bug");
        self.0.read(fh, offset, buf)
    }
    fn write(&self, fh: u64, offset: u64, data: &[u8]) -> Answer {
        self.0.write(fh, offset, data)
    }
    fn fallocate(&self, fh: u64, offset: u64, len: u64, mode: u32) -> Answer {
        self.0.fallocate(fh, offset, len, mode)
    }
    fn fsync(&self, fh: u64) -> Answer {
        self.0.fsync(fh)
    }
}

/// Runs the calling thread on `cpu` only, where that CPU is online (else
/// anywhere).
fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET writes a
    // bit inside it; sched_setaffinity reads it for the calling thread.
    let _ = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set)
    };
}

/// A handler that panics fails its request with EIO; every queue goes on
/// serving, the server counts the failure, and it unmounts cleanly (a
/// panic used to end its service thread, and the mount hung).
fn survives_a_panic(choice: TransportChoice) {
    let mem = Mem::new();
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        transport: choice,
        ..Options::default()
    };
    let handler = Arc::new(Panicky(mem.clone()));
    let server = fuse::serve(dir.path(), handler, opts).expect("serve");
    let path = server.path();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    // From every CPU, so each queue meets the bug and must go on.
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    let readers: Vec<_> = (0..n)
        .map(|cpu| {
            let path = path.clone();
            std::thread::spawn(move || {
                pin_to(cpu);
                let f = open_direct(&path);
                let mut buf = Aligned::new(4096);
                let e = f.read_exact_at(buf.get(), PANIC_AT).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(libc::EIO), "read at the bug: {e}");
                for i in 0..64u64 {
                    f.read_exact_at(buf.get(), i * 4096)
                        .expect("a read after the bug");
                }
            })
        })
        .collect();
    let joined: Vec<_> = readers.into_iter().map(|r| r.join()).collect();
    std::panic::set_hook(hook);
    assert!(joined.iter().all(|r| r.is_ok()), "a reader failed");
    let failures = server.failures();
    assert_eq!(failures.count, n as u64, "{failures:?}");
    let first = failures.first.unwrap();
    assert!(first.contains("a handler's bug"), "{first}");
    server.unmount().expect("unmount after a panic");
    assert!(!mounted(dir.path()), "still mounted");
    assert_eq!(server_threads(), 0, "threads left");
}

#[test]
fn device_transport_survives_a_panic() {
    on_transport(TransportChoice::Device, || {
        survives_a_panic(TransportChoice::Device)
    });
}

#[test]
fn uring_transport_survives_a_panic() {
    on_transport(TransportChoice::Uring, || {
        survives_a_panic(TransportChoice::Uring)
    });
}
