#!/usr/bin/env python3
"""Cold reads, iolab vs fio vs the bare C loop, without the two traps (issue 20).

Two things make such comparisons lie on a virtual machine:
  1. the host caches what it served: a fixed seed run again reads the same
     offsets and gets faster, so every run here draws a fresh seed (iolab's and
     fio's --randseed, the C loop's RANDREAD_SEED);
  2. "with replacement" vs "each block once" is not the same work: the C loop
     draws rnd() % blocks (about 7% of 20,000 reads of a 1 GiB file hit a block
     read before, from the page cache), so iolab and fio run with
     --norandommap beside it, and the device requests of every run are counted
     (the block layer's reads completed, /sys/dev/block/M:N/stat) so equal work
     is visible.

Rows (each tool in every round, the tools' order rotated from round to round,
medians and ratios):
  cold   random 8 KiB buffered reads of a 1 GiB file, cache evicted first,
         prefetch 0, 4, 20, 64 (fio has no prefetch: prefetch 0 only)
  uring  random 4 KiB O_DIRECT reads, io_uring, depth 1, 8, 32 (iolab vs fio;
         the C loop is a pread loop)
  small  seed 002's 50-300 B random reads over 3.5 MB, page-cached
  cached 4 KiB random reads of a page-cached 64 MiB file
  traps  the two traps shown: the C loop with one fixed seed run again and
         again (the host serves the repeated order from its cache) against a
         fresh seed each time; and the device reads of 20,000 reads with
         replacement against each block once

Needs a release build (cargo build --release), fio and gcc. Pins every tool to
one CPU (taskset) as bench/run.py does.

usage: bench/cold.py [--rounds N] [--dir DIR] [--ios N] [--only cold,uring,small,cached,traps]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = ["taskset", "-c", "1"]


def sh(cmd, env=None):
    return subprocess.run(PIN + cmd, check=True, capture_output=True, text=True, env=env).stdout


def dev_reads(path):
    st = os.stat(path)
    dev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/stat"
    with open(dev) as f:
        return int(f.read().split()[0])


def counted(path, fn):
    """fn()'s IOPS and the device reads completed while it ran."""
    before = dev_reads(path)
    iops = fn()
    return iops, dev_reads(path) - before


def iolab(bin_, args):
    out = sh([bin_, "run", "--no-store", *args, "--output-format=json"])
    return json.loads(out)["jobs"][0]["read"]["iops"]


def fio(args):
    out = sh(["fio", *args, "--output-format=json"])
    return json.loads(out[out.index("{"):])["jobs"][0]["read"]["iops"]


def cloop(ref, path, size, bmin, bmax, loops, n, prefetch, cold, seed, deal=0, buf_offset=0):
    env = dict(os.environ, RANDREAD_SEED=str(seed), RANDREAD_BUF_OFFSET=str(buf_offset))
    out = sh([ref, path, str(size), str(bmin), str(bmax), str(loops), str(n), str(prefetch), str(cold),
              str(deal)], env=env)
    return float(dict(kv.split("=") for kv in out.split())["iops"])


def in_turn(r, steps):
    """Runs `steps` (callables) starting at step r mod n: each tool goes
    first, second, ... in turn, so whatever favours an early or a late run
    of a round (a host's readahead, its CPU's clock) is shared out."""
    n = len(steps)
    for i in range(n):
        steps[(r + i) % n]()


def table(title, rows, tools):
    """Medians per tool, and each ratio two ways: of the medians, and the
    median of the per-round ratios (paired: both runs of a round saw the
    same moment of a noisy host)."""
    print(f"\n{title}\n")
    pairs = [(t, "C") for t in tools if t != "C" and "C" in tools]
    if "fio" in tools:
        pairs.append(("iolab", "fio"))
    head = " | ".join(f"{t} IOPS (dev reads)" for t in tools)
    print(f"| row | {head} | " + " | ".join(f"{a}/{b} (paired)" for a, b in pairs) + " |")
    print("|---" * (1 + len(tools) + len(pairs)) + "|")
    for name, res in rows:
        cells = []
        for t in tools:
            if not res.get(t):
                cells.append("-")
                continue
            m = statistics.median(x[0] for x in res[t])
            reads = statistics.median(x[1] for x in res[t])
            cells.append(f"{m:,.0f} ({reads:,.0f})")
        rat = []
        for a, b in pairs:
            if not res.get(a) or not res.get(b):
                rat.append("-")
                continue
            ma, mb = (statistics.median(x[0] for x in res[k]) for k in (a, b))
            paired = statistics.median(x[0] / y[0] for x, y in zip(res[a], res[b]))
            rat.append(f"{ma / mb:.3f} ({paired:.3f})")
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(rat) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--ios", type=int, default=20000)
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    ap.add_argument("--only", default="cold,uring,small,cached,traps")
    a = ap.parse_args()
    only = a.only.split(",")
    os.makedirs(a.dir, exist_ok=True)
    ref = os.path.join(a.dir, "randread")
    subprocess.run(["gcc", "-O2", "-Wall", "-o", ref, os.path.join(ROOT, "bench/ref/randread.c")], check=True)
    seed = lambda: random.randrange(1, 1 << 40)  # noqa: E731
    big = os.path.join(a.dir, "cold.dat")
    size = 1 << 30
    if "cold" in only or "uring" in only or "traps" in only:
        iolab(a.iolab, ["--name=l", f"--filename={big}", f"--size={size}", "--rw=read", "--number_ios=1"])
    print(f"medians of {a.rounds} interleaved rounds, a fresh seed per run; (dev reads): "
          "device read requests completed during the run")

    if "cold" in only:
        rows = []
        base = ["--name=c", f"--filename={big}", f"--size={size}", "--rw=randread", "--bs=8k",
                f"--number_ios={a.ios}", "--ioengine=psync", "--norandommap"]
        res = {pf: {"iolab": [], "fio": [], "C": []} for pf in (0, 4, 20, 64)}
        for r in range(a.rounds):
            print(f"[cold] round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
            for pf in (0, 4, 20, 64):
                steps = [
                    lambda: res[pf]["iolab"].append(counted(big, lambda: iolab(
                        a.iolab, base + ["--cache=cold", f"--prefetch={pf}", f"--randseed={seed()}"]))),
                    lambda: res[pf]["C"].append(counted(big, lambda: cloop(
                        ref, big, size, 8192, 8192, 1, a.ios, pf, 1, seed()))),
                ]
                if pf == 0:
                    steps.append(lambda: res[pf]["fio"].append(counted(big, lambda: fio(
                        base + ["--invalidate=1", f"--randseed={seed()}"]))))
                in_turn(r, steps)
        rows = [(f"prefetch {pf}", res[pf]) for pf in (0, 4, 20, 64)]
        table(f"Cold random 8 KiB reads of a 1 GiB file, {a.ios} reads, psync, norandommap (C: rnd() % blocks)",
              rows, ["iolab", "fio", "C"])
        sp = {t: statistics.median(x[0] for x in res[20][t]) / statistics.median(x[0] for x in res[0][t])
              for t in ("iolab", "C")}
        print(f"\nspeed-up at prefetch 20: iolab {sp['iolab']:.2f}x, C {sp['C']:.2f}x "
              f"(iolab / C {sp['iolab'] / sp['C']:.3f})")

    if "uring" in only:
        res = {d: {"iolab": [], "fio": []} for d in (1, 8, 32)}
        for r in range(a.rounds):
            print(f"[uring] round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
            for d in (1, 8, 32):
                args = ["--name=u", f"--filename={big}", f"--size={size}", "--rw=randread", "--bs=4k",
                        "--direct=1", "--ioengine=io_uring", f"--iodepth={d}", f"--number_ios={a.ios * 5}",
                        "--norandommap"]
                in_turn(r, [
                    lambda: res[d]["iolab"].append(counted(big, lambda: iolab(
                        a.iolab, args + [f"--randseed={seed()}"]))),
                    lambda: res[d]["fio"].append(counted(big, lambda: fio(args + [f"--randseed={seed()}"]))),
                ])
        table("io_uring O_DIRECT random 4 KiB reads of a 1 GiB file", [(f"depth {d}", res[d]) for d in (1, 8, 32)],
              ["iolab", "fio"])

    for key in ("small", "cached"):
        if key not in only:
            continue
        path = os.path.join(a.dir, f"{key}.dat")
        fsize, bmin, bmax, loops = (3_500_000, 50, 300, 100) if key == "small" else (64 << 20, 4096, 4096, 16)
        args = ["--name=s", f"--filename={path}", f"--size={fsize}", "--rw=randread",
                f"--bsrange={bmin}-{bmax}" if bmin != bmax else f"--bs={bmin}", f"--loops={loops}",
                "--ioengine=psync", "--invalidate=0", "--norandommap"]
        iolab(a.iolab, args + ["--loops=1"])
        # Where the buffer is changes the kernel's copy into it: iolab and
        # fio put it 0x620 bytes past a page (fio's malloc), the C loop at a
        # page. Same work is the same place: iolab page-aligned (iomem=mmap)
        # against the C loop, and the C loop at iolab's place against iolab.
        res = {"iolab": [], "fio": [], "C": []}
        same = {"iolab": [], "C": []}
        for r in range(a.rounds):
            print(f"[{key}] round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
            in_turn(r, [
                lambda: res["iolab"].append(counted(path, lambda: iolab(a.iolab, args + [f"--randseed={seed()}"]))),
                lambda: res["fio"].append(counted(path, lambda: fio(args + [f"--randseed={seed()}"]))),
                lambda: res["C"].append(counted(path, lambda: cloop(
                    ref, path, fsize, bmin, bmax, loops, 0, 0, 0, seed()))),
                lambda: same["iolab"].append(counted(path, lambda: iolab(
                    a.iolab, args + ["--iomem=mmap", f"--randseed={seed()}"]))),
                lambda: same["C"].append(counted(path, lambda: cloop(
                    ref, path, fsize, bmin, bmax, loops, 0, 0, 0, seed(), buf_offset=0x620))),
            ])
        title = ("seed 002: 50-300 B random reads over 3.5 MB, loops=100, page-cached" if key == "small"
                 else "4 KiB random reads of a page-cached 64 MiB file, loops=16")
        table(title + " (iolab and fio: buffer 0x620 past a page; C: at a page)", [(key, res)],
              ["iolab", "fio", "C"])
        table(title + ", each buffer at the same place: page-aligned, and 0x620 past a page",
              [(f"{key}, page-aligned", {"iolab": same["iolab"], "C": res["C"]}),
               (f"{key}, 0x620 past a page", {"iolab": res["iolab"], "C": same["C"]})],
              ["iolab", "C"])

    if "traps" in only:
        fixed = seed()
        same = [counted(big, lambda: cloop(ref, big, size, 8192, 8192, 1, a.ios, 0, 1, fixed))
                for _ in range(4)]
        fresh = [counted(big, lambda: cloop(ref, big, size, 8192, 8192, 1, a.ios, 0, 1, seed()))
                 for _ in range(4)]
        deal = [counted(big, lambda: cloop(ref, big, size, 8192, 8192, 1, a.ios, 0, 1, seed(), 1))
                for _ in range(2)]
        print(f"\nTraps: the C loop, cold random 8 KiB reads, {a.ios} reads, run after run\n")
        print("| runs | IOPS, run 1..n | device reads, run 1..n |")
        print("|---|---|---|")
        for name, v in (("one fixed seed, again and again", same), ("a fresh seed each run", fresh),
                        ("fresh seeds, each block once (DEAL=1)", deal)):
            print(f"| {name} | " + ", ".join(f"{x[0]:,.0f}" for x in v) + " | "
                  + ", ".join(f"{x[1]:,}" for x in v) + " |")


if __name__ == "__main__":
    main()
