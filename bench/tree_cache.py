#!/usr/bin/env python3
"""Issue 5's side-by-side benchmarks, alternating, several rounds, medians.

  f  tree create of an fdtree shape (default D=10 L=3 F=100 S=4 KiB: 1,111
     directories, 111,100 files): iolab (1 thread) vs the C reference loop
     (bench/ref/treecreate.c, the same syscalls in the same order), and
     fdtree's own approach (a shell loop of mkdir and dd per file) on a
     tenth of the files, as a rate.
  g  `iolab cache status` of a 10 GiB file set (10 x 1 GiB, 2 GiB of it in
     the page cache) vs `vmtouch` on the same set; also both with -v (the
     per-page map, mincore on both sides).

Each tree round starts from `sync` with the previous tree removed, so the
tools meet the same file system state; the order alternates every round.

usage: bench/tree_cache.py [--rounds N] [--dir DIR] [--only f,g]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def fresh(path):
    if os.path.exists(path):
        shutil.rmtree(path)
    sh(["sync"])


def iolab_create(iolab, top, d, l, f, size):
    r = sh([iolab, "tree", "create", top, "-d", str(d), "-l", str(l), "-f", str(f),
            "-s", str(size), "--no-store", "-o", "json"])
    doc = json.loads(r.stdout)
    files = sum(p["files"] for p in doc["phases"])
    return sum(p["elapsed_ns"] for p in doc["phases"]) / 1e9, files


def c_create(ref, top, d, l, f, size):
    out = sh([ref, top, str(d), str(l), str(f), str(size), str(size)]).stdout.split()
    return float(out[0]), int(out[2])


SHELL = r'''
top=$1 d=$2 l=$3 f=$4 blocks=$5
mkdir "$top"
start=$(date +%s.%N)
level=("$top")
all=("$top")
for ((i = 0; i < l; i++)); do
  next=()
  for p in "${level[@]}"; do
    for ((k = 0; k < d; k++)); do mkdir "$p/d$k"; next+=("$p/d$k"); done
  done
  all+=("${next[@]}")
  level=("${next[@]}")
done
n=0
for p in "${all[@]}"; do
  for ((k = 0; k < f; k++)); do
    dd if=/dev/zero of="$p/f$k" bs=4096 count=$blocks status=none
    n=$((n + 1))
  done
done
end=$(date +%s.%N)
echo "$(echo "$end - $start" | bc) $n"
'''


def shell_create(top, d, l, f, size):
    out = sh(["bash", "-c", SHELL, "fdtree", top, str(d), str(l), str(f), str(max(1, size // 4096))])
    secs, n = out.stdout.split()
    return float(secs), int(n)


def timed(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--only", default="f,g")
    ap.add_argument("--shape", default="10,3,100,4096", help="D,L,F,SIZE")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    only = set(a.only.split(","))
    sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    iolab = os.path.join(ROOT, "target/release/iolab")
    ref = os.path.join(a.dir, "treecreate")
    sh(["gcc", "-O2", "-Wall", "-o", ref, os.path.join(ROOT, "bench/ref/treecreate.c")])

    if "f" in only:
        d, l, f, size = (int(x) for x in a.shape.split(","))
        top = os.path.join(a.dir, "tree")
        res = {"iolab": [], "c": [], "shell": []}
        files = None
        for r in range(a.rounds):
            order = [("iolab", iolab_create), ("c", None)] if r % 2 == 0 else [("c", None), ("iolab", iolab_create)]
            for name, _ in order:
                progress(f"[f] round {r + 1}/{a.rounds}: {name}")
                fresh(top)
                if name == "iolab":
                    secs, n = iolab_create(iolab, top, d, l, f, size)
                else:
                    secs, n = c_create(ref, top, d, l, f, size)
                files = n
                res[name].append(n / secs)
        # fdtree's approach: a process per file, so a tenth of the files.
        for r in range(min(a.rounds, 2)):
            progress(f"[f] shell round {r + 1}")
            fresh(top)
            secs, n = shell_create(top, d, l, max(1, f // 10), size)
            res["shell"].append(n / secs)
        fresh(top)
        i, c = statistics.median(res["iolab"]), statistics.median(res["c"])
        s = statistics.median(res["shell"])
        print()
        print(f"(f) tree create D={d} L={l} F={f} S={size}: {files:,} files, files/s, medians of {a.rounds}"
              " (shell: 1/10 of the files)")
        print()
        print("| iolab | C loop | shell mkdir+dd (fdtree) | iolab/C | iolab/shell |")
        print("|---:|---:|---:|---:|---:|")
        print(f"| {i:,.0f} | {c:,.0f} | {s:,.0f} | {i / c:.3f} | {i / s:.1f} |")
        print()
        pairs = [x / y for x, y in zip(res["iolab"], res["c"])]
        print(f"median of the per-round ratios iolab/C (each round ran both back to back): "
              f"{statistics.median(pairs):.3f}")
        print("rounds iolab:", ", ".join(f"{x:,.0f}" for x in res["iolab"]))
        print("rounds C:    ", ", ".join(f"{x:,.0f}" for x in res["c"]))

    if "g" in only:
        if not shutil.which("vmtouch"):
            print("(g) skipped: vmtouch is not installed")
            return
        cset = os.path.join(a.dir, "cacheset")
        os.makedirs(cset, exist_ok=True)
        for k in range(10):
            p = os.path.join(cset, f"f{k}")
            if not os.path.exists(p) or os.path.getsize(p) != 1 << 30:
                progress(f"[g] laying out {p}")
                sh(["fallocate", "-l", "1G", p])
        sh([iolab, "cache", "evict", cset])
        sh([iolab, "cache", "warm", os.path.join(cset, "f0"), os.path.join(cset, "f1")])
        res = {k: [] for k in ["iolab", "vmtouch", "iolab -v", "vmtouch -v"]}
        cmds = {
            "iolab": [iolab, "cache", "status", cset],
            "vmtouch": ["vmtouch", cset],
            "iolab -v": [iolab, "cache", "status", "-v", cset],
            "vmtouch -v": ["vmtouch", "-v", cset],
        }
        for r in range(a.rounds):
            progress(f"[g] round {r + 1}/{a.rounds}")
            keys = list(cmds) if r % 2 == 0 else list(reversed(cmds))
            for k in keys:
                res[k].append(timed(cmds[k]))
        m = {k: statistics.median(v) * 1000 for k, v in res.items()}
        print()
        print(f"(g) cache status of 10 x 1 GiB (2 GiB resident), wall ms, medians of {a.rounds}")
        print()
        print("| iolab | vmtouch | vmtouch/iolab | iolab -v | vmtouch -v | vmtouch -v / iolab -v |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(f"| {m['iolab']:.2f} | {m['vmtouch']:.2f} | {m['vmtouch'] / m['iolab']:.2f} | "
              f"{m['iolab -v']:.2f} | {m['vmtouch -v']:.2f} | {m['vmtouch -v'] / m['iolab -v']:.2f} |")


if __name__ == "__main__":
    main()
