#!/usr/bin/env python3
"""iolab trace (issue 18): what tracing costs the traced program.

The bare C reference loop (bench/ref/randread.c) reads a cached file with
N preads (4 KiB by default, offsets with replacement), timing its own loop.
Each round runs it bare, under `iolab trace` (histograms), under
`iolab trace --events` (every call into a trace file), under bpftrace (a
pread64 latency histogram, the one-liner people write) and under
`strace -f -e trace=pread64` (written to /dev/null), and under the floor
(bench/ref/floor.bpf.c: the least a per-call timer on the syscall
tracepoints does, a timestamp at entry and a histogram slot at exit), in an
order that rotates each round. Slowdown = the loop's own time traced / bare - 1,
medians over the rounds; the bare loop's own time excludes tool start-up.

Needs root, a kernel with BTF, gcc, clang, libbpf-dev, bpftrace, strace
and a release build (cargo build --release).

usage: bench/trace.py [--rounds N] [--reads N] [--bs BYTES] [--iolab PATH]
"""

import argparse
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loop_ns(out):
    """The loop's own time, from its `ios=... runtime_ns=...` line."""
    line = next(l for l in out.splitlines() if "runtime_ns=" in l)
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return int(fields["runtime_ns"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reads", type=int, default=500_000)
    ap.add_argument("--bs", type=int, default=4096)
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        ref = os.path.join(d, "randread")
        subprocess.run(["gcc", "-O2", "-o", ref, os.path.join(ROOT, "bench/ref/randread.c")],
                       check=True)
        floor = os.path.join(d, "floor.bpf.o")
        subprocess.run(["clang", "-O2", "-g", "-target", "bpf",
                        f"-I/usr/include/{os.uname().machine}-linux-gnu",
                        "-c", os.path.join(ROOT, "bench/ref/floor.bpf.c"), "-o", floor],
                       check=True)
        load = os.path.join(d, "bpfload")
        subprocess.run(["gcc", "-O2", "-o", load, os.path.join(ROOT, "bench/ref/bpfload.c"),
                        "-lbpf"], check=True)
        data = os.path.join(d, "data")
        size = 64 << 20
        with open(data, "wb") as f:
            f.write(os.urandom(size))
        loop = [ref, data, str(size), str(a.bs), str(a.bs), "1", str(a.reads), "0", "0"]
        bt = ("tracepoint:syscalls:sys_enter_pread64 /pid == cpid/ { @s[tid] = nsecs; } "
              "tracepoint:syscalls:sys_exit_pread64 /@s[tid]/ "
              "{ @ns = hist(nsecs - @s[tid]); delete(@s[tid]); }")
        tools = {
            "bare": lambda: loop,
            "floor (bpf timer)": lambda: [load, floor] + loop,
            "iolab trace": lambda: [a.iolab, "trace", "--no-store", "--"] + loop,
            "iolab trace --events": lambda: [a.iolab, "trace", "--no-store", "--events", "-o",
                                             os.path.join(d, "t.trace"), "--"] + loop,
            "bpftrace hist": lambda: ["bpftrace", "-q", "-e", bt, "-c", " ".join(loop)],
            "strace": lambda: ["strace", "-f", "-qq", "-e", "trace=pread64", "-o", "/dev/null"]
                              + loop,
        }
        names = list(tools)
        times = {n: [] for n in names}
        subprocess.run(loop, check=True, capture_output=True)  # warm the cache
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                t = os.path.join(d, "t.trace")
                if os.path.exists(t):
                    os.remove(t)
                p = subprocess.run(tools[n](), check=True, capture_output=True, text=True)
                times[n].append(loop_ns(p.stdout))
        base = statistics.median(times["bare"])
        print(f"{a.reads} cached preads of {a.bs} B, {a.rounds} rounds (median of the loop's own time)")
        print(f"{'tool':<22} {'loop s':>8} {'per pread us':>13} {'slowdown':>9}   rounds (s)")
        for n in names:
            m = statistics.median(times[n])
            rounds = " ".join(f"{t / 1e9:.3f}" for t in times[n])
            print(f"{n:<22} {m / 1e9:8.3f} {m / a.reads / 1e3:13.2f} {m / base - 1:+9.1%}   {rounds}")


if __name__ == "__main__":
    main()
