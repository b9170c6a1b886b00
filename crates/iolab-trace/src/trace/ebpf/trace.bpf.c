// SPDX-License-Identifier: GPL-2.0
// iolab trace: the BPF side. Rebuilt by build.sh into trace.bpf.o (committed,
// so building iolab needs no clang; tests/trace.rs checks it is current).
//
// Two programs on the BTF (raw) tracepoints sys_enter and sys_exit see every
// system call; the `calls` table (filled by user space from
// src/trace/calls.rs, indexed by syscall number) says which are traced and
// where their arguments are, and an untraced call returns after that one
// lookup. (The perf tracepoints sys_enter_* build a record per event: a
// cached 4 KiB pread traced through them cost 86% more, through these 59%.) Enter
// keeps the arguments per thread (inflight); exit adds the
// call to the per-call figures and latency/size histograms (arrays, log-linear
// slots as src/trace/hist.rs), to the per-file figures (keyed by device and
// inode, found from the fd through the task's file table), and in event mode
// sends the whole call through a ring buffer. Opens always send the path the
// kernel resolved for the new descriptor (file_path) so user space can name
// files. Processes forked by a traced one are traced too.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define NCALLS 51
#define SLOTS 976
#define LOG2 65
// An open's path: components of up to NAME_LEN bytes (with their NUL)
// written from offsets below PATH_HALF, so the buffer is PATH_HALF +
// NAME_LEN; at most PATH_DEPTH steps up the tree (mount crossings count).
#define PATH_HALF 2048
#define NAME_LEN 256
#define PATH_DEPTH 64

// Classes, as src/trace/calls.rs Class.
#define C_READ 0
#define C_WRITE 1
#define C_SYNC 2
#define C_OPEN 3
#define C_ADVICE 4
#define C_META 5
#define C_OTHER 6
#define C_URING 7
#define C_COPY 8

// The io_uring requests' entry in the call table (src/trace/calls.rs).
#define URING_REQ 41

// Only the fields iolab reads; CO-RE finds them in the running kernel.
struct super_block { __u32 s_dev; } __attribute__((preserve_access_index));
struct inode { unsigned long i_ino; struct super_block *i_sb; } __attribute__((preserve_access_index));
struct qstr { const unsigned char *name; } __attribute__((preserve_access_index));
struct dentry { struct dentry *d_parent; struct qstr d_name; } __attribute__((preserve_access_index));
struct vfsmount { struct dentry *mnt_root; } __attribute__((preserve_access_index));
struct mount { struct mount *mnt_parent; struct dentry *mnt_mountpoint; struct vfsmount mnt; } __attribute__((preserve_access_index));
struct path { struct vfsmount *mnt; struct dentry *dentry; } __attribute__((preserve_access_index));
struct file { struct inode *f_inode; long long f_pos; struct path f_path; } __attribute__((preserve_access_index));
struct fdtable { unsigned int max_fds; struct file **fd; } __attribute__((preserve_access_index));
struct files_struct { struct fdtable *fdt; } __attribute__((preserve_access_index));
struct upid { int nr; void *ns; } __attribute__((preserve_access_index));
struct pid { unsigned int level; struct upid numbers[1]; } __attribute__((preserve_access_index));
struct task_struct {
    int pid;
    int tgid;
    char comm[16];
    struct files_struct *files;
    struct pid *thread_pid;
} __attribute__((preserve_access_index));
struct io_cqe { int fd; } __attribute__((preserve_access_index));
struct io_kiocb { struct file *file; __u8 opcode; __u64 flags; struct io_cqe cqe; } __attribute__((preserve_access_index));
// A read or write request's own part of the io_kiocb (io_kiocb_to_cmd):
// its offset and length, set by the request's prep before submission.
struct kiocb { long long ki_pos; } __attribute__((preserve_access_index));
struct io_rw { struct kiocb kiocb; __u32 len; } __attribute__((preserve_access_index));

// The system call's registers (x86_64: arguments in di, si, dx, r10, r8, r9).
struct pt_regs { unsigned long di, si, dx, r10, r8, r9, orig_ax; } __attribute__((preserve_access_index));

// Set at load time by user space. Process ids are those of iolab's pid
// namespace (pidns_dev, pidns_ino: its /proc/self/ns/pid), which need not
// be the kernel's first one.
const volatile __u32 target_tgid = 0;
const volatile __u8 events_on = 0;
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

// Where a traced call's arguments are (index 0..5, or 255 for none).
struct callinfo { __u16 call; __u8 cls, fd, off, len, flags, path; };

struct start {
    __u64 ts, off, len, flags, ino, path;
    __u32 dev, tgid, tid;
    __s32 fd;
    __u16 call;
    __u8 has_off, cls;
    __u8 active, pad[3];
    // The last inode this thread used and its device and number: a loop on
    // one descriptor finds them once.
    __u64 cinode, cino;
    __u32 cdev, nr;
    // The per-file slot this thread's last call counted in, and its key:
    // a loop on one file finds its slot without a hash lookup.
    __u64 fino;
    __u32 fdev, fslot;
    __u16 fcall, fpad[3];
};

struct cstat { __u64 count, errors, bytes, sum_ns, seq; };

struct fkey { __u64 ino; __u32 dev; __u16 call; __u16 pad; };

struct fstat {
    __u64 count, errors, bytes, sum_ns, seq, last_end;
    __u64 lat[LOG2];
    __u64 size[LOG2];
};

// One call sent to user space (kind 0), or an open with its path (kind 1).
struct event {
    __u64 ts, lat, off, len, flags, ino;
    __s64 ret;
    __u32 dev, tgid, tid;
    __s32 fd;
    __u16 call;
    __u8 kind, has_off;
    __u32 pad;
};

// How an open's path is written (open_event.how).
#define PATH_WRITTEN 0  // the argument as the program wrote it
#define PATH_FULL 1     // the file's names from leaf to root, each NUL-ended
#define PATH_PARTIAL 2  // the same, cut short (too deep or too long)

struct open_event {
    struct event e;
    __u16 path_len;
    __u8 how;
    __u8 pad[5];
    char path[PATH_HALF + NAME_LEN];
};

struct thread { __u32 tgid, ppid; char comm[16]; };

struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 512); __type(key, __u32); __type(value, struct callinfo); } calls SEC(".maps");
// The call a thread is in: task-local storage (no shared lock per call,
// unlike a hash map keyed by thread id).
struct { __uint(type, BPF_MAP_TYPE_TASK_STORAGE); __uint(map_flags, BPF_F_NO_PREALLOC); __type(key, int); __type(value, struct start); } inflight SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 65536); __type(key, __u64); __type(value, struct start); } uring SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 4096); __type(key, __u32); __type(value, __u32); } targets SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16384); __type(key, __u32); __type(value, struct thread); } threads SEC(".maps");
// Per call figures and histograms: per CPU, so a call adds to them with
// plain increments (no locked instruction); user space sums the CPUs.
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, NCALLS); __type(key, __u32); __type(value, struct cstat); } call_stats SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, NCALLS * SLOTS); __type(key, __u32); __type(value, __u64); } call_lat SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, NCALLS * SLOTS); __type(key, __u32); __type(value, __u64); } call_size SEC(".maps");
// Per file and call figures: a slot of file_stats per (device, inode,
// call), handed out in order (file_next) and found through file_slots;
// each thread remembers its last one (struct start).
#define FILES 4096
struct { __uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, FILES); __type(key, struct fkey); __type(value, __u32); } file_slots SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, FILES); __type(key, __u32); __type(value, struct fstat); } file_stats SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, __u32); } file_next SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_RINGBUF); __uint(max_entries, 16 << 20); } events SEC(".maps");
// Event mode: each CPU gathers CHUNK calls and sends them in one record
// (kind 2, its `len` the count), so a call costs a copy, not a ring
// buffer reservation (a lock) of its own. User space reads what is left
// here when the trace ends; an open flushes its CPU's chunk first, so the
// calls before it arrive before it. Entry 0 gathers system calls, entry 1
// io_uring completions (which may run while a system call's exit program
// is between its reads and writes of entry 0).
#define CHUNK 32
struct chunk { struct event head; struct event ev[CHUNK]; };
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 2); __type(key, __u32); __type(value, struct chunk); } staging SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 2); __type(key, __u32); __type(value, __u64); } lost SEC(".maps");

// floor(log2 v) for v > 0 (BPF has no count-leading-zeros instruction).
static __always_inline __u32 ilog2(__u64 v) {
    __u32 k = 0;
    if (v >> 32) { v >>= 32; k += 32; }
    if (v >> 16) { v >>= 16; k += 16; }
    if (v >> 8) { v >>= 8; k += 8; }
    if (v >> 4) { v >>= 4; k += 4; }
    if (v >> 2) { v >>= 2; k += 2; }
    if (v >> 1) k += 1;
    return k;
}

// The log-linear slot of v (src/trace/hist.rs slot()).
static __always_inline __u32 slot(__u64 v) {
    if (v < 16) return v;
    __u32 k = ilog2(v);
    return (k - 3) * 16 + ((v >> (k - 4)) & 15);
}

// dtrace's log2 bucket of v: 0 for 0, else floor(log2 v) + 1.
static __always_inline __u32 log2b(__u64 v) {
    return v ? ilog2(v) + 1 : 0;
}

// io_uring's read and write opcodes (READV, WRITEV, READ_FIXED,
// WRITE_FIXED, READ, WRITE, READV_FIXED, WRITEV_FIXED): their bytes count
// as the call's, with their offset.
static __always_inline int is_rw(__u8 op) {
    return op == 1 || op == 2 || op == 4 || op == 5 || op == 22 || op == 23 || op == 60 || op == 61;
}

static __always_inline int traced(__u32 tgid) {
    return tgid == target_tgid || bpf_map_lookup_elem(&targets, &tgid);
}

// The current thread's (tgid << 32 | tid) in iolab's pid namespace (the
// kernel's own ids when iolab runs in the first namespace: pidns_ino 0).
static __always_inline __u64 ns_pid_tgid(void) {
    if (!pidns_ino) return bpf_get_current_pid_tgid();
    struct bpf_pidns_info ns = {};
    if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns))) return 0;
    return ((__u64)ns.tgid << 32) | ns.pid;
}

// The open file behind fd in the current task, or NULL.
static __always_inline struct file *fd_file(int fd) {
    // A BTF pointer: its fields are plain loads, not helper calls.
    struct task_struct *t = bpf_get_current_task_btf();
    struct fdtable *fdt = t->files->fdt;
    if (fd < 0 || (unsigned int)fd >= fdt->max_fds) return 0;
    struct file **arr = fdt->fd;
    struct file *f = 0;
    bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
    return f;
}

// Writes the path of open file f into o, leaf first (the kernel's d_path
// walk: up the dentries, across mounts to the mount point): the name the
// kernel resolved, whatever directory fd or working directory the program
// opened it from.
static __always_inline void file_path(struct file *f, struct open_event *o) {
    struct dentry *d = BPF_CORE_READ(f, f_path.dentry);
    struct vfsmount *vm = BPF_CORE_READ(f, f_path.mnt);
    struct mount *m = (struct mount *)((char *)vm - bpf_core_field_offset(struct mount, mnt));
    __u32 pos = 0;
    __u8 how = PATH_PARTIAL;
    for (int i = 0; i < PATH_DEPTH; i++) {
        struct dentry *root = BPF_CORE_READ(m, mnt.mnt_root);
        if (d == root) {
            struct mount *up = BPF_CORE_READ(m, mnt_parent);
            if (up == m) { how = PATH_FULL; break; }
            d = BPF_CORE_READ(m, mnt_mountpoint);
            m = up;
            continue;
        }
        struct dentry *parent = BPF_CORE_READ(d, d_parent);
        if (d == parent) { how = PATH_FULL; break; }
        if (pos >= PATH_HALF) break;
        const unsigned char *name = BPF_CORE_READ(d, d_name.name);
        long n = bpf_probe_read_kernel_str(o->path + (pos & (PATH_HALF - 1)), NAME_LEN, name);
        if (n <= 0) break;
        pos += n;
        d = parent;
    }
    o->path_len = pos;
    o->how = how;
}

static __always_inline void identify(struct file *f, struct start *s) {
    if (!f) return;
    struct inode *i = BPF_CORE_READ(f, f_inode);
    s->ino = BPF_CORE_READ(i, i_ino);
    s->dev = BPF_CORE_READ(i, i_sb, s_dev);
}

// Argument i (0..5) of the system call in regs.
static __always_inline __u64 arg(struct pt_regs *r, __u8 i) {
    switch (i) {
    case 0: return r->di;
    case 1: return r->si;
    case 2: return r->dx;
    case 3: return r->r10;
    case 4: return r->r8;
    default: return r->r9;
    }
}

SEC("tp_btf/sys_enter")
int on_enter(__u64 *ctx) {
    __u32 nr = ctx[1];
    struct callinfo *ci = bpf_map_lookup_elem(&calls, &nr);
    if (!ci || !ci->call) return 0; // not traced (id 0 is stored as 1 + id)
    __u64 ns = ns_pid_tgid();
    __u32 tgid = ns >> 32;
    if (!tgid || !traced(tgid)) return 0;
    struct start *sp = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
                                            BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!sp) return 0;
    struct pt_regs *r = (struct pt_regs *)ctx[0];
    sp->tgid = tgid;
    sp->tid = (__u32)ns;
    sp->call = ci->call - 1;
    sp->nr = nr;
    __u8 cls = ci->cls;
    sp->cls = cls;
    sp->fd = -1;
    sp->has_off = 0;
    sp->off = sp->len = sp->flags = sp->path = sp->ino = 0;
    sp->dev = 0;
    if (ci->fd < 6) sp->fd = (int)arg(r, ci->fd);
    if (ci->off < 6) { sp->off = arg(r, ci->off); sp->has_off = 1; }
    if (ci->len < 6) sp->len = arg(r, ci->len);
    if (ci->flags < 6) sp->flags = arg(r, ci->flags);
    if (ci->path < 6) sp->path = arg(r, ci->path);
    // The descriptor names the file unless the call also takes a path
    // (openat, newfstatat: then it is the directory the path starts from).
    if (sp->fd >= 0 && ci->path >= 6) {
        struct file *f = fd_file(sp->fd);
        // Keyed by the inode, not the file: a closed file's memory is soon
        // another file's, an inode in use is not another inode.
        struct inode *i = f ? BPF_CORE_READ(f, f_inode) : 0;
        if (i && (__u64)i == sp->cinode) {
            sp->ino = sp->cino;
            sp->dev = sp->cdev;
        } else if (i) {
            sp->ino = BPF_CORE_READ(i, i_ino);
            sp->dev = BPF_CORE_READ(i, i_sb, s_dev);
            sp->cinode = (__u64)i;
            sp->cino = sp->ino;
            sp->cdev = sp->dev;
        }
        if (f && !sp->has_off && (cls == C_READ || cls == C_WRITE)) {
            sp->off = BPF_CORE_READ(f, f_pos);
            sp->has_off = 1;
        }
    }
    // Timed from here to the start of the exit program: what the tracer
    // itself does stays out of the call's latency as far as it can.
    sp->active = 1;
    sp->ts = bpf_ktime_get_ns();
    return 0;
}

static __always_inline void count_lost(__u32 which) {
    __u64 *n = bpf_map_lookup_elem(&lost, &which);
    if (n) __sync_fetch_and_add(n, 1);
}

static __always_inline void fill(struct event *e, struct start *s, __u64 lat, long ret, __u8 kind) {
    e->ts = s->ts; e->lat = lat; e->off = s->off; e->len = s->len; e->flags = s->flags;
    e->ino = s->ino; e->ret = ret; e->dev = s->dev; e->tgid = s->tgid; e->tid = s->tid; e->fd = s->fd;
    e->call = s->call; e->kind = kind; e->has_off = s->has_off; e->pad = 0;
}

// Sends a record without waking user space, which polls the ring every
// 10 ms (16 MiB hold over 200,000 events): a wake-up, or even asking how
// full the ring is, costs each event more than polling does.
static __always_inline void submit(void *rec) {
    bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
}

// The slot of file_stats for (device, inode, call), made on first use
// (FILES: none is left, the file goes uncounted per file).
static __always_inline __u32 file_slot(struct start *s) {
    struct fkey k = { .ino = s->ino, .dev = s->dev, .call = s->call };
    __u32 *found = bpf_map_lookup_elem(&file_slots, &k);
    if (found) return *found;
    __u32 z = 0;
    __u32 *next = bpf_map_lookup_elem(&file_next, &z);
    if (!next) return FILES;
    __u32 slot = __sync_fetch_and_add(next, 1);
    if (slot >= FILES) return FILES;
    // Another CPU may have made it meanwhile: then its slot counts (this
    // one stays unused and empty).
    if (bpf_map_update_elem(&file_slots, &k, &slot, BPF_NOEXIST)) {
        found = bpf_map_lookup_elem(&file_slots, &k);
        return found ? *found : FILES;
    }
    return slot;
}

// Sends this CPU's gathered calls as one record (the lost counted when the
// ring is full) and starts a new chunk.
static __always_inline void flush(struct chunk *c) {
    __u64 n = c->head.len;
    if (!n) return;
    c->head.kind = 2;
    if (bpf_ringbuf_output(&events, c, sizeof(*c), BPF_RB_NO_WAKEUP)) {
        __u64 *lost_n;
        __u32 which = 0;
        lost_n = bpf_map_lookup_elem(&lost, &which);
        if (lost_n) __sync_fetch_and_add(lost_n, n);
    }
    c->head.len = 0;
}

// Adds one finished call to the figures, and sends it in event mode.
// `cache` is the thread's storage (its last file slot), or NULL.
static __always_inline void account(struct start *s, long ret, __u64 now, struct start *cache) {
    __u64 lat = now - s->ts;
    __u32 call = s->call;
    if (call >= NCALLS) return;
    int moved = (s->cls == C_READ || s->cls == C_WRITE || s->cls == C_COPY || (s->call == URING_REQ && is_rw(s->flags))) && ret >= 0;
    int seq = 0;
    // Per-file figures in histogram mode only: with events, user space
    // makes them from the events (this costs each call six locked adds).
    if (s->ino && !events_on) {
        __u32 slot;
        if (cache && cache->fino == s->ino && cache->fdev == s->dev && cache->fcall == s->call) {
            slot = cache->fslot;
        } else {
            slot = file_slot(s);
            if (cache && slot < FILES) {
                cache->fino = s->ino;
                cache->fdev = s->dev;
                cache->fcall = s->call;
                cache->fslot = slot;
            }
        }
        struct fstat *fs = bpf_map_lookup_elem(&file_stats, &slot);
        if (fs) {
            __sync_fetch_and_add(&fs->count, 1);
            __sync_fetch_and_add(&fs->sum_ns, lat);
            __u32 b = log2b(lat);
            if (b < LOG2) __sync_fetch_and_add(&fs->lat[b], 1);
            if (ret < 0) {
                __sync_fetch_and_add(&fs->errors, 1);
            } else if (moved) {
                __sync_fetch_and_add(&fs->bytes, ret);
                b = log2b(ret);
                if (b < LOG2) __sync_fetch_and_add(&fs->size[b], 1);
                if (s->has_off) {
                    seq = fs->last_end == s->off && fs->count > 1;
                    if (seq) __sync_fetch_and_add(&fs->seq, 1);
                    fs->last_end = s->off + ret;
                }
            }
        }
    }
    // This CPU's own figures: plain increments.
    struct cstat *cs = bpf_map_lookup_elem(&call_stats, &call);
    if (cs) {
        cs->count += 1;
        cs->sum_ns += lat;
        if (ret < 0) cs->errors += 1;
        else if (moved) cs->bytes += ret;
        if (seq) cs->seq += 1;
    }
    __u32 i = call * SLOTS + slot(lat);
    __u64 *c = bpf_map_lookup_elem(&call_lat, &i);
    if (c) *c += 1;
    if (moved) {
        i = call * SLOTS + slot(ret);
        c = bpf_map_lookup_elem(&call_size, &i);
        if (c) *c += 1;
    }
    if (s->cls == C_OPEN && s->path && ret >= 0) {
        __u32 z = 0;
        struct chunk *c = events_on ? bpf_map_lookup_elem(&staging, &z) : 0;
        if (c) flush(c);
        struct open_event *o = bpf_ringbuf_reserve(&events, sizeof(*o), 0);
        if (!o) { count_lost(1); return; }
        // The file the new fd names, for the path's device and inode.
        struct file *f = fd_file(ret);
        identify(f, s);
        fill(&o->e, s, lat, ret, 1);
        o->path_len = 0;
        o->how = PATH_WRITTEN;
        if (f) file_path(f, o);
        if (!o->path_len && o->how != PATH_FULL) {
            long n = bpf_probe_read_user_str(o->path, PATH_HALF, (void *)s->path);
            o->path_len = n > 0 ? n : 0;
            o->how = PATH_WRITTEN;
        }
        submit(o);
        return;
    }
    if (events_on) {
        __u32 z = cache ? 0 : 1;
        struct chunk *c = bpf_map_lookup_elem(&staging, &z);
        if (!c) return;
        __u64 n = c->head.len;
        if (n >= CHUNK) { flush(c); n = 0; }
        fill(&c->ev[n & (CHUNK - 1)], s, lat, ret, 0);
        c->head.len = n + 1;
        if (n + 1 == CHUNK) flush(c);
    }
}

SEC("tp_btf/sys_exit")
int on_exit(__u64 *ctx) {
    __u64 now = bpf_ktime_get_ns();
    struct start *s = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
    if (!s || !s->active) return 0;
    s->active = 0;
    // Only the exit of the call entered: an enter seen while the programs
    // were attaching may have exited unseen (then this is another call).
    struct pt_regs *r = (struct pt_regs *)ctx[0];
    if (r->orig_ax != s->nr) return 0;
    account(s, (long)ctx[1], now, s);
    return 0;
}

// io_uring requests (call 41): from submission to completion, keyed by the
// request; the submitter's process decides whether it is traced.
struct uring_submit { __u64 pad; void *ctx; void *req; __u64 user_data; __u8 opcode; };
struct uring_complete { __u64 pad; void *ctx; void *req; __u64 user_data; int res; };

SEC("tracepoint/io_uring/io_uring_submit_req")
int uring_submit(struct uring_submit *ctx) {
    __u64 ns = ns_pid_tgid();
    if (!(ns >> 32) || !traced(ns >> 32)) return 0;
    struct start s = {};
    s.tgid = ns >> 32;
    s.tid = (__u32)ns;
    s.ts = bpf_ktime_get_ns();
    s.call = URING_REQ;
    s.cls = C_URING;
    s.flags = ctx->opcode;
    struct io_kiocb *req = ctx->req;
    // The descriptor the request names (with IOSQE_FIXED_FILE, its index
    // among the registered files); the file itself is found at completion,
    // once the request is issued (io_assign_file).
    s.fd = BPF_CORE_READ(req, cqe.fd);
    if (is_rw(ctx->opcode)) {
        struct io_rw *rw = (struct io_rw *)req;
        long long pos = BPF_CORE_READ(rw, kiocb.ki_pos);
        s.len = BPF_CORE_READ(rw, len);
        // -1: at the file's position, known only once issued.
        if (pos >= 0) { s.off = pos; s.has_off = 1; }
    }
    identify(BPF_CORE_READ(req, file), &s);
    __u64 key = (__u64)ctx->req;
    bpf_map_update_elem(&uring, &key, &s, BPF_ANY);
    return 0;
}

SEC("tracepoint/io_uring/io_uring_complete")
int uring_complete(struct uring_complete *ctx) {
    __u64 now = bpf_ktime_get_ns();
    __u64 key = (__u64)ctx->req;
    struct start *s = bpf_map_lookup_elem(&uring, &key);
    if (!s) return 0;
    struct start copy = *s;
    bpf_map_delete_elem(&uring, &key);
    // (Not BPF_CORE_READ(ctx->req, ...): the tracepoint's own struct is
    // not the kernel's, and would be relocated too.)
    struct io_kiocb *req = ctx->req;
    if (!copy.ino) identify(BPF_CORE_READ(req, file), &copy);
    account(&copy, ctx->res, now, 0);
    return 0;
}

// Follows children: a process forked by a traced one is traced; every new
// thread is named (pid, parent, comm) for the trace's thread list.
SEC("tp_btf/sched_process_fork")
int on_fork(__u64 *ctx) {
    // The parent is the current task (ctx[0] is it too).
    struct task_struct *child = (struct task_struct *)ctx[1];
    __u32 ptgid = ns_pid_tgid() >> 32;
    if (!ptgid || !traced(ptgid)) return 0;
    // The child's id in iolab's namespace: its struct pid's number at the
    // namespace's level.
    struct pid *p = BPF_CORE_READ(child, thread_pid);
    unsigned int level = BPF_CORE_READ(p, level);
    struct upid up = {};
    bpf_probe_read_kernel(&up, sizeof(up), &p->numbers[level & 31]);
    __u32 cpid = up.nr;
    int thread = BPF_CORE_READ(child, tgid) != BPF_CORE_READ(child, pid);
    __u32 ctgid = thread ? ptgid : cpid;
    __u32 one = 1;
    if (!thread) bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY);
    struct thread t = { .tgid = ctgid, .ppid = ptgid };
    BPF_CORE_READ_STR_INTO(&t.comm, child, comm);
    bpf_map_update_elem(&threads, &cpid, &t, BPF_ANY);
    return 0;
}

// Renames a traced thread that calls execve: it is named by the program it
// became (the name it forked with, or none for the traced command itself,
// was the one before).
SEC("tp_btf/sched_process_exec")
int on_exec(__u64 *ctx) {
    __u64 ns = ns_pid_tgid();
    __u32 tgid = ns >> 32, tid = (__u32)ns;
    if (!tgid || !traced(tgid)) return 0;
    struct thread t = { .tgid = tgid };
    struct thread *had = bpf_map_lookup_elem(&threads, &tid);
    if (had) t.ppid = had->ppid;
    bpf_get_current_comm(&t.comm, sizeof(t.comm));
    bpf_map_update_elem(&threads, &tid, &t, BPF_ANY);
    return 0;
}

char LICENSE[] SEC("license") = "GPL";
