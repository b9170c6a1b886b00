//! The block layer's image as iolab's own FUSE server sees it
//! ([`super::fuse::ImageHandler`]): one file, `disk.img`, whose reads,
//! writes, fallocates and fsyncs pass the gate. The loop device above it
//! does direct I/O, so each block request arrives here as one read or
//! write (two above 1 MiB); the work is done at once, in the transport's
//! buffer, and the answer waits out the rule's delay in its queue.

use super::fuse::{Answer, ImageHandler};
use super::gate::Gate;
use super::image::{Image, Stale};
use super::rules::Op;
use std::sync::Arc;

/// The image's name in the FUSE mount.
pub const IMAGE_NAME: &str = "disk.img";

/// The image, served through the gate.
pub struct BlockFs {
    /// The bytes.
    pub image: Arc<Image>,
    /// The rules.
    pub gate: Arc<Gate>,
}

/// The answer to an operation the rules let through: `work`'s result,
/// EIO for an error of the image itself, after `delay_ns`.
fn answer(delay_ns: u64, work: std::io::Result<Result<u32, Stale>>) -> Answer {
    let result = match work {
        Ok(Ok(n)) => Ok(n),
        Ok(Err(Stale)) | Err(_) => Err(libc::EIO),
    };
    Answer { delay_ns, result }
}

impl BlockFs {
    /// The gate's decision on `op` over `bytes`; `work` runs only when no
    /// error rule fires (a failed write changes nothing).
    fn gated(
        &self,
        op: Op,
        bytes: (u64, u64),
        work: impl FnOnce() -> std::io::Result<Result<u32, Stale>>,
    ) -> Answer {
        let d = self.gate.decide(op, bytes, None);
        match d.errno {
            Some(e) => Answer::err(e).after(d.delay_ns),
            None => answer(d.delay_ns, work()),
        }
    }
}

impl ImageHandler for BlockFs {
    fn size(&self) -> u64 {
        self.image.len()
    }

    /// The handle remembers the crash epoch it was opened in.
    fn open(&self) -> u64 {
        self.image.epoch()
    }

    fn read(&self, _fh: u64, offset: u64, buf: &mut [u8]) -> Answer {
        self.gated(Op::Read, (offset, buf.len() as u64), || {
            self.image.read_at(offset, buf).map(|n| Ok(n as u32))
        })
    }

    fn write(&self, fh: u64, offset: u64, data: &[u8]) -> Answer {
        self.gated(Op::Write, (offset, data.len() as u64), || {
            self.image.write(offset, data, fh)
        })
    }

    /// The loop device's discards (`fstrim`, `rm` with `-o discard`, mkfs)
    /// arrive as punched holes: the blocks read back as zeros and their
    /// memory is freed. Allocation (mode 0) has nothing to do.
    fn fallocate(&self, fh: u64, offset: u64, len: u64, mode: u32) -> Answer {
        let mode = mode as i32;
        let zero = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE;
        if mode & !(zero | libc::FALLOC_FL_KEEP_SIZE) != 0 {
            return Answer::err(libc::EOPNOTSUPP);
        }
        if mode & zero == 0 {
            return Answer::ok(0);
        }
        answer(0, self.image.punch(offset, len, fh).map(|r| r.map(|()| 0)))
    }

    fn fsync(&self, fh: u64) -> Answer {
        self.gated(Op::Flush, (0, 0), || {
            // A handle from before a crash flushes nothing of the new epoch.
            if fh != self.image.epoch() {
                return Ok(Err(Stale));
            }
            self.image.flush().map(|()| Ok(0))
        })
    }
}
