// SPDX-License-Identifier: GPL-2.0
// The floor of any tracer that times each call (bench/trace.py): the least
// a per-call latency histogram needs on the syscall tracepoints: the entry
// time kept per thread (task storage) and one histogram slot bumped at exit
// (per CPU, no locked instruction). Only pread64 (17 on x86_64), any
// process; nothing else recorded: no process filter, no file, no sizes.
// Built by bench/trace.py (clang -O2 -target bpf), loaded by bpfload.c.
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct start { __u64 ts; __u32 active, pad; };
struct { __uint(type, BPF_MAP_TYPE_TASK_STORAGE); __uint(map_flags, BPF_F_NO_PREALLOC); __type(key, int); __type(value, struct start); } inflight SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 1024); __type(key, __u32); __type(value, __u64); } hist SEC(".maps");

SEC("tp_btf/sys_enter")
int enter(__u64 *ctx) {
    if (ctx[1] != 17) return 0;
    struct start *s = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
                                           BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!s) return 0;
    s->active = 1;
    s->ts = bpf_ktime_get_ns();
    return 0;
}

SEC("tp_btf/sys_exit")
int leave(__u64 *ctx) {
    __u64 now = bpf_ktime_get_ns();
    struct start *s = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
    if (!s || !s->active) return 0;
    s->active = 0;
    __u32 k = (now - s->ts) >> 6;
    if (k > 1023) k = 1023;
    __u64 *c = bpf_map_lookup_elem(&hist, &k);
    if (c) *c += 1;
    return 0;
}

char LICENSE[] SEC("license") = "GPL";
