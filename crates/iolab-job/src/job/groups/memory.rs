//! Where a job's I/O buffers live: fio's `iomem` (`mem`) and `iomem_align`
//! (`mem_align`).
//!
//! The place of a buffer is part of what a job measures: the kernel copies
//! a buffered read into it, and on this machine a copy into a buffer that
//! starts 16 bytes past a page boundary (where glibc's malloc puts fio's
//! large buffers) takes 1.5 to 3 times as long as into any other place.
//! So iolab places them as fio does: one region per clone, `iodepth`
//! buffers of the largest block size end to end, at a page boundary plus
//! `iomem_align` with `direct=1` or a nonzero `iomem_align`, and otherwise
//! where the memory type puts them: a page boundary for `mmap` and `shm`,
//! and for fio's default `malloc` where fio's malloc puts them: 16 bytes
//! past a page from 456 KiB of buffers on, 0x620 bytes past one below.

use crate::job::error::JobProblem;
use crate::job::option_def::OptionGroup;
use crate::job::option_def::num as number;
use crate::job::option_def::{Kind, OptDef, Range, aliased};
use crate::job::spec::JobSpec;
use serde::{Deserialize, Serialize};

/// Memory the buffers come from (fio's `iomem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemType {
    /// fio's default, `malloc(3)`: iolab's buffers sit where fio's malloc
    /// puts them (`runner::iomem::malloc_offset`).
    #[default]
    Malloc,
    /// A private anonymous `mmap(2)`.
    Mmap,
    /// A shared anonymous `mmap(2)` (fio's `mmapshared`).
    MmapShared,
    /// System V shared memory (`shmget(2)`, `shmat(2)`).
    Shm,
}

/// The settings of this group in a job.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Memory {
    /// Where the buffers come from.
    pub mem: MemType,
    /// Bytes past a page boundary where the first buffer starts; `None`
    /// (fio's 0): where the memory's allocator puts it, unless `direct=1`.
    pub align: Option<u64>,
}

impl Memory {
    /// Bytes past a page boundary of the first buffer, when it is placed
    /// there (fio's `PTR_ALIGN(orig_buffer, page_mask) + mem_align`, done
    /// for `direct=1` or a nonzero `iomem_align`); `None`: where the memory
    /// type puts it.
    pub fn page_offset(&self, direct: bool) -> Option<u64> {
        match self.align {
            Some(a) => Some(a),
            None if direct => Some(0),
            None => None,
        }
    }
}

/// This group's rows of the option table.
pub const OPTIONS: &[OptDef] = &[
    aliased(
        "iomem",
        &["mem"],
        Kind::Str,
        "memory of the I/O buffers: malloc (default), mmap, mmapshared, shm",
    ),
    aliased(
        "iomem_align",
        &["mem_align"],
        Kind::Size(Range {
            min: 0,
            max: 1 << 30,
        }),
        "first buffer this many bytes past a page boundary (0: where malloc puts it)",
    ),
];

/// Applies one of [`OPTIONS`].
fn apply(job: &mut JobSpec, def: &OptDef, v: &str) -> Result<(), JobProblem> {
    let m = &mut job.memory;
    match def.name {
        "iomem" => m.mem = mem_type(v)?,
        "iomem_align" => {
            let a: u64 = number(def, v)?;
            m.align = (a > 0).then_some(a);
        }
        other => unreachable!("memory group and its table disagree on '{other}'"),
    }
    Ok(())
}

/// fio's `iomem` values; the huge-page and device ones are refused with
/// their reason.
fn mem_type(v: &str) -> Result<MemType, JobProblem> {
    // fio's `mmap:FILE` / `mmaphuge:FILE` back the buffers with a file.
    let (kind, file) = v.split_once(':').unwrap_or((v, ""));
    let refuse = |why: &str| {
        Err(JobProblem::Invalid(format!(
            "iomem={v} is not supported by iolab yet ({why}); iolab has malloc, mmap, \
             mmapshared and shm"
        )))
    };
    match kind.trim() {
        _ if !file.is_empty() => refuse("buffers backed by a file"),
        "malloc" => Ok(MemType::Malloc),
        "mmap" => Ok(MemType::Mmap),
        "mmapshared" => Ok(MemType::MmapShared),
        "shm" => Ok(MemType::Shm),
        "shmhuge" | "mmaphuge" => refuse("huge pages"),
        "cudamalloc" => refuse("GPU memory"),
        _ => Err(JobProblem::Invalid(format!(
            "iomem: '{v}' is not a memory type: iolab has malloc, mmap, mmapshared and \
             shm (fio's shmhuge, mmaphuge and cudamalloc are not supported yet)"
        ))),
    }
}

/// The group.
pub const GROUP: OptionGroup = OptionGroup {
    name: "Memory",
    options: OPTIONS,
    apply,
    validate: crate::job::option_def::no_rules,
};
