#!/usr/bin/env python3
"""iolab vs fio vs a bare C loop, side by side, alternating, several rounds.

Workloads (issue 2):
  a  page-cached 4 KiB random psync reads, 1 thread
  b  seed 002's job: 50-300 B random reads over 3.5 MB, loops=100
  c  cold random 8 KiB reads on a >= 1 GiB file, prefetch 0 vs 20
     (iolab vs the C reference, which does what seed 000's random-read does)

Workloads (issue 3):
  d  io_uring O_DIRECT 4 KiB random reads on the real disk at iodepth 1, 8, 32,
     iolab vs fio with the identical command line
  e  the null engine (no I/O): iolab's own ceiling in ops/s, beside fio's

Workloads (issue 15):
  f  (a) with norandommap: offsets with repeats, the work the C loop "C" does

For (a) and (b) there are two C loops: "C" draws offsets rnd() % blocks with repeats
(seed 000's way; a re-read block is often still in the CPU caches) and "C no-rep"
(randread.c DEAL=1) deals each block once per loop, the workload fio and iolab run.

Prints medians and the ratios iolab/C, iolab/fio and the prefetch speedups.
Only ratios measured side by side mean anything on a shared machine.

With --baseline BIN, another iolab binary (an earlier build) runs in the same
alternating rounds of (a), (b) and (e): iolab/baseline, measured side by side, is
the before/after ratio of a change.

usage: bench/run.py [--rounds N] [--cold-rounds N] [--dir DIR] [--cold-size BYTES]
                    [--cold-ios N] [--uring-rounds N] [--uring-secs S] [--only a,b,c,d,e,f]
                    [--baseline BIN]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


PIN = []  # set in main(): taskset prefix so every tool runs on the same CPU


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def run_pinned(cmd):
    return sh(PIN + cmd)


def build(out):
    sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    ref = os.path.join(out, "randread")
    sh(["gcc", "-O2", "-Wall", "-o", ref, os.path.join(ROOT, "bench/ref/randread.c")])
    return os.path.join(ROOT, "target/release/iolab"), ref


def iolab_iops(iolab, args):
    r = run_pinned([iolab, "run", "--no-store", *args, "--output-format=json"])
    return json.loads(r.stdout)["jobs"][0]["read"]["iops"]


def fio_iops(args):
    r = run_pinned(["fio", *args, "--output-format=json"])
    return json.loads(r.stdout)["jobs"][0]["read"]["iops"]


def c_iops(ref, path, size, bmin, bmax, loops, nreads, prefetch, cold, deal=0):
    r = run_pinned([ref, path, str(size), str(bmin), str(bmax), str(loops), str(nreads), str(prefetch), str(cold),
                    str(deal)])
    fields = dict(kv.split("=") for kv in r.stdout.split())
    return float(fields["iops"])


def med(xs):
    return statistics.median(xs)


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cold-rounds", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--cold-size", type=int, default=1 << 30)
    ap.add_argument("--cold-ios", type=int, default=20000)
    ap.add_argument("--uring-rounds", type=int, default=3)
    ap.add_argument("--uring-secs", type=int, default=3)
    ap.add_argument("--only", default="a,b,c,d,e,f")
    ap.add_argument("--cpu", default="1", help="CPU to pin every tool to (taskset); 'none' to not pin")
    ap.add_argument("--baseline", help="an earlier iolab binary to run beside this one in (a), (b), (e)")
    a = ap.parse_args()
    global PIN
    if a.cpu != "none" and shutil.which("taskset"):
        PIN = ["taskset", "-c", a.cpu]
        progress(f"pinning every run to CPU {a.cpu}")
    os.makedirs(a.dir, exist_ok=True)
    iolab, ref = build(a.dir)
    have_fio = shutil.which("fio") is not None
    only = set(a.only.split(","))
    rows = []

    cached = [
        ("a", "4 KiB random reads, page-cached", os.path.join(a.dir, "a.dat"), 64 << 20, 4096, 4096, 16),
        ("b", "seed 002: 50-300 B random reads, 3.5 MB", os.path.join(a.dir, "b.dat"), 3500000, 50, 300, 100),
        # norandommap: offsets drawn with repeats, the C loop's own work (issue 15).
        ("f", "(a) with norandommap", os.path.join(a.dir, "a.dat"), 64 << 20, 4096, 4096, 16,
         ["--norandommap"]),
    ]
    for key, title, path, size, bmin, bmax, loops, *extra in cached:
        if key not in only:
            continue
        bs = f"--bs={bmin}" if bmin == bmax else f"--bsrange={bmin}-{bmax}"
        job = [f"--name={key}", f"--filename={path}", f"--size={size}", "--rw=randread", bs,
               f"--loops={loops}", "--ioengine=psync", "--invalidate=0"] + (extra[0] if extra else [])
        iolab_iops(iolab, job + ["--cache=warm"])  # lay out and warm
        res = {"iolab": [], "fio": [], "C": [], "Cdeal": [], "base": []}
        runs = {
            "iolab": lambda: iolab_iops(iolab, job),
            "base": lambda: iolab_iops(a.baseline, job),
            "fio": lambda: fio_iops(job),
            "C": lambda: c_iops(ref, path, size, bmin, bmax, loops, 0, 0, 0),
            # The same loop dealing each block once per loop, as fio and iolab do.
            "Cdeal": lambda: c_iops(ref, path, size, bmin, bmax, loops, 0, 0, 0, 1),
        }
        tools = [t for t in runs if (t != "fio" or have_fio) and (t != "base" or a.baseline)]
        for r in range(a.rounds):
            progress(f"[{key}] round {r + 1}/{a.rounds}")
            # The order rotates so no tool always runs right after another.
            for t in tools[r % len(tools):] + tools[:r % len(tools)]:
                res[t].append(runs[t]())
        rows.append((key, title, res))

    if rows:
        print()
        print(f"medians of {a.rounds} alternating rounds; each ratio is given as the ratio of the medians "
              "and (paired) the median of the per-round ratios")
        print("C: offsets rnd() % blocks, with repeats (seed 000's way); C no-rep: each block once per "
              "loop, as fio's random map and iolab deal them")
        print()
        print("| workload | iolab IOPS | fio IOPS | C IOPS | C no-rep IOPS | iolab/C | paired "
              "| iolab/C no-rep | paired | iolab/fio | paired |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key, title, res in rows:
        def ratio(other):
            if not res[other]:
                return float("nan"), float("nan")
            return (med(res["iolab"]) / med(res[other]),
                    med([x / y for x, y in zip(res["iolab"], res[other])]))
        i, c, cd = med(res["iolab"]), med(res["C"]), med(res["Cdeal"])
        f = med(res["fio"]) if res["fio"] else float("nan")
        (rc, pc), (rd, pd), (rf, pf) = ratio("C"), ratio("Cdeal"), ratio("fio")
        print(f"| ({key}) {title} | {i:,.0f} | {f:,.0f} | {c:,.0f} | {cd:,.0f} | {rc:.3f} | {pc:.3f} "
              f"| {rd:.3f} | {pd:.3f} | {rf:.3f} | {pf:.3f} |")
    if a.baseline and rows:
        print()
        print(f"this iolab against the baseline {a.baseline}, same rounds:")
        print()
        print("| workload | iolab IOPS | baseline IOPS | iolab/baseline | paired |")
        print("|---|---:|---:|---:|---:|")
        for key, title, res in rows:
            i, b = med(res["iolab"]), med(res["base"])
            pb = med([x / y for x, y in zip(res["iolab"], res["base"])])
            print(f"| ({key}) {title} | {i:,.0f} | {b:,.0f} | {i / b:.3f} | {pb:.3f} |")

    if "c" in only:
        path = os.path.join(a.dir, "c.dat")
        base = [f"--name=c", f"--filename={path}", f"--size={a.cold_size}", "--rw=randread", "--bs=8k",
                f"--number_ios={a.cold_ios}", "--ioengine=psync", "--cache=cold"]
        iolab_iops(iolab, base + ["--number_ios=1"])  # lay out
        res = {("iolab", 0): [], ("iolab", 20): [], ("C", 0): [], ("C", 20): []}
        for r in range(a.cold_rounds):
            progress(f"[c] round {r + 1}/{a.cold_rounds}")
            for pf in (0, 20):
                res[("iolab", pf)].append(iolab_iops(iolab, base + [f"--prefetch={pf}"]))
                res[("C", pf)].append(c_iops(ref, path, a.cold_size, 8192, 8192, 1, a.cold_ios, pf, 1))
        print()
        print(f"(c) cold random 8 KiB reads, {a.cold_size >> 20} MiB file, {a.cold_ios} reads, medians of {a.cold_rounds}")
        print()
        print("| tool | IOPS prefetch=0 | IOPS prefetch=20 | speedup |")
        print("|---|---:|---:|---:|")
        sp = {}
        for tool in ("iolab", "C"):
            p0, p20 = med(res[(tool, 0)]), med(res[(tool, 20)])
            sp[tool] = p20 / p0
            print(f"| {tool} | {p0:,.0f} | {p20:,.0f} | {sp[tool]:.2f}x |")
        per_round = [
            (i20 / i0) / (c20 / c0)
            for i0, i20, c0, c20 in zip(res[("iolab", 0)], res[("iolab", 20)], res[("C", 0)], res[("C", 20)])
        ]
        print()
        print(f"iolab speedup / C speedup = {sp['iolab'] / sp['C']:.3f} "
              f"(median of the per-round ratios: {med(per_round):.3f})")

    if "d" in only and have_fio:
        path = os.path.join(a.dir, "d.dat")
        iolab_iops(iolab, ["--name=l", f"--filename={path}", "--size=1G", "--number_ios=1"])  # lay out
        depths = (1, 8, 32)
        res = {(t, qd): [] for t in ("iolab", "fio") for qd in depths}
        for r in range(a.uring_rounds):
            for qd in depths:
                progress(f"[d] round {r + 1}/{a.uring_rounds} iodepth={qd}")
                job = ["--name=d", f"--filename={path}", "--size=1G", "--rw=randread", "--bs=4k",
                       "--ioengine=io_uring", f"--iodepth={qd}", "--direct=1",
                       f"--runtime={a.uring_secs}", "--time_based"]
                # The order alternates so neither tool always finds the disk
                # right after the other's burst.
                pair = [("iolab", lambda: iolab_iops(iolab, job)), ("fio", lambda: fio_iops(job))]
                for tool, run in pair if r % 2 == 0 else pair[::-1]:
                    res[(tool, qd)].append(run())
        print()
        print(f"(d) io_uring, O_DIRECT 4 KiB random reads, 1 GiB file on the disk, {a.uring_secs} s runs, medians of {a.uring_rounds} alternating rounds")
        print()
        print("| iodepth | iolab IOPS | fio IOPS | iolab/fio | paired |")
        print("|---:|---:|---:|---:|---:|")
        for qd in depths:
            i, f = med(res[("iolab", qd)]), med(res[("fio", qd)])
            pr = med([x / y for x, y in zip(res[("iolab", qd)], res[("fio", qd)])])
            print(f"| {qd} | {i:,.0f} | {f:,.0f} | {i / f:.3f} | {pr:.3f} |")

    if "e" in only:
        path = os.path.join(a.dir, "a.dat")
        job = ["--name=e", f"--filename={path}", "--size=64M", "--rw=randread", "--bs=4k",
               "--loops=64", "--ioengine=null", "--invalidate=0"]
        iolab_iops(iolab, ["--name=l", f"--filename={path}", "--size=64M", "--number_ios=1"])
        res = {"iolab": [], "fio": [], "base": []}
        for r in range(a.rounds):
            progress(f"[e] round {r + 1}/{a.rounds}")
            res["iolab"].append(iolab_iops(iolab, job))
            if have_fio:
                res["fio"].append(fio_iops(job))
            if a.baseline:
                res["base"].append(iolab_iops(a.baseline, job))
        i = med(res["iolab"])
        f = med(res["fio"]) if res["fio"] else float("nan")
        print()
        print(f"(e) ioengine=null (no I/O, every op timed): the tools' own ceiling, medians of {a.rounds}")
        print()
        print("| iolab ops/s | fio ops/s | iolab/fio |")
        print("|---:|---:|---:|")
        print(f"| {i:,.0f} | {f:,.0f} | {i / f:.3f} |")
        if a.baseline:
            b = med(res["base"])
            pb = med([x / y for x, y in zip(res["iolab"], res["base"])])
            print()
            print(f"against the baseline: {b:,.0f} ops/s, iolab/baseline {i / b:.3f} (paired {pb:.3f})")


if __name__ == "__main__":
    main()
