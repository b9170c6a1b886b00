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

Agreement (tests/trace.rs asserts only that the traced median pread is at
most the loop's own and at least half of it): 2000 cached 256 KiB preads
with a WILLNEED 4 reads ahead under `iolab trace -f json`, each round; the
traced p50 against the loop's own p50 (clock_gettime around each call),
printed with its tolerance (within 10%), ok or OFF.

Needs root, a kernel with BTF, gcc, clang, libbpf-dev, bpftrace, strace
and a release build (cargo build --release).

usage: bench/trace.py [--rounds N] [--reads N] [--bs BYTES] [--iolab PATH]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def loop_ns(out):
    """The loop's own time and its median pread, from its `ios=...
    runtime_ns=... p50_ns=...` line."""
    line = next(l for l in out.splitlines() if "runtime_ns=" in l)
    fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    return int(fields["runtime_ns"]), int(fields["p50_ns"])


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
        p50s = {n: [] for n in names}
        subprocess.run(loop, check=True, capture_output=True)  # warm the cache
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                t = os.path.join(d, "t.trace")
                if os.path.exists(t):
                    os.remove(t)
                p = subprocess.run(tools[n](), check=True, capture_output=True, text=True)
                t, p50 = loop_ns(p.stdout)
                times[n].append(t)
                p50s[n].append(p50)
        base = statistics.median(times["bare"])
        bare, bpf = times["bare"], times["bpftrace hist"]

        def vs_bpftrace(n):
            """Per round, the time tool n added over the time bpftrace added
            (both against that round's bare loop): the median, paired so that
            the VM's drift between rounds cancels."""
            r = [(t - b) / (x - b) for t, b, x in zip(times[n], bare, bpf) if x > b]
            return statistics.median(r) if r else float("nan")

        # The median pread of each run (500,000 of them): what a call costs
        # at the median, which a stolen millisecond does not move.
        p50 = {n: statistics.median(p50s[n]) for n in names}
        bpf_p50 = p50["bpftrace hist"] - p50["bare"]
        print(f"{a.reads} cached preads of {a.bs} B, {a.rounds} rounds (medians over the rounds)")
        print("loop s: the loop's own time; +ns/call: the median pread's time over the bare "
              "loop's; /bpftrace: that over bpftrace's (call), and per round the loop time "
              "added over bpftrace's (loop)")
        print(f"{'tool':<22} {'loop s':>7} {'slowdown':>9} {'p50 ns':>7} {'+ns/call':>9} "
              f"{'/bpftrace call':>15} {'/bpftrace loop':>15}   rounds (s)")
        for n in names:
            m = statistics.median(times[n])
            rounds = " ".join(f"{t / 1e9:.3f}" for t in times[n])
            added = p50[n] - p50["bare"]
            call = f"{added / bpf_p50:.2f}" if bpf_p50 > 0 else "-"
            print(f"{n:<22} {m / 1e9:7.3f} {m / base - 1:+9.1%} {p50[n]:7.0f} {added:+9.0f} "
                  f"{call:>15} {vs_bpftrace(n):>15.2f}   {rounds}")
        # Agreement: the traced median pread against the loop's own.
        big = [ref, data, "16777216", "262144", "262144", "1", "2000", "4", "0"]
        off = []
        for r in range(a.rounds):
            out = os.path.join(d, "out")
            cmd = " ".join(big) + f" > {out}"
            p = subprocess.run([a.iolab, "trace", "--no-store", "-f", "json", "--", "sh", "-c",
                                cmd], check=True, capture_output=True, text=True)
            doc = json.loads(p.stdout)
            with open(out) as o:
                _, own = loop_ns(o.read())
            off.append((doc["calls"]["pread64"]["p50_ns"] - own) / own)
        got = statistics.median(off)
        ok = abs(got) <= 0.10
        print(f"\nAgreement: traced p50 of 2000 256 KiB preads against the loop's own: "
              f"{got:+.1%} (median of {a.rounds}; tolerance +-10%) {'ok' if ok else 'OFF'}")
        if not ok:
            raise SystemExit(1)

if __name__ == "__main__":
    main()
