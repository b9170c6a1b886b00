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
medians and ratios, the paired ratio's 95% bootstrap interval):
  cold   random 8 KiB buffered reads of a 1 GiB file, cache evicted first,
         prefetch 0, 4, 20, 64 (fio has no prefetch: prefetch 0 only)
  uring  random 4 KiB O_DIRECT reads, io_uring, depth 1, 8, 32 (iolab vs fio;
         the C loop is a pread loop), on the disk and, as root, on a
         RAM-backed loop device where the tools' own time shows; and each
         tool's own time per read at depth 1
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
import contextlib
import json
import os
import random
import signal
import stat
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = ["taskset", "-c", "1"]


def sh(cmd, env=None):
    return subprocess.run(PIN + cmd, check=True, capture_output=True, text=True, env=env).stdout


def dev_reads(path):
    st = os.stat(path)
    d = st.st_rdev if stat.S_ISBLK(st.st_mode) else st.st_dev
    dev = f"/sys/dev/block/{os.major(d)}:{os.minor(d)}/stat"
    with open(dev) as f:
        return int(f.read().split()[0])


def counted(path, fn):
    """fn()'s IOPS (and whatever else it returns) and the device reads
    completed while it ran."""
    before = dev_reads(path)
    got = fn()
    iops, *rest = got if isinstance(got, tuple) else (got,)
    return (iops, dev_reads(path) - before, *rest)


def iolab(bin_, args, lat=False):
    """IOPS of the run's reads, with their mean latency (ns) if `lat`."""
    out = sh([bin_, "run", "--no-store", *args, "--output-format=json"])
    return reads_of(json.loads(out), lat)


def fio(args, lat=False):
    out = sh(["fio", *args, "--output-format=json"])
    return reads_of(json.loads(out[out.index("{"):]), lat)


def reads_of(doc, lat):
    """IOPS; with `lat` also the mean latency (ns) and the job's CPU time
    per read (us: its usr + sys share of the job's run time)."""
    j = doc["jobs"][0]
    r = j["read"]
    if not lat:
        return r["iops"]
    cpu_us = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] * 1000 / max(r["total_ios"], 1)
    return r["iops"], r["lat_ns"]["mean"], cpu_us


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


def ci(ratios, n=2000):
    """95% bootstrap interval of the median of the paired ratios: how far the
    median moves when these rounds are resampled (it says nothing of a host
    that drifts from day to day). A row whose interval holds 1.0 is a tie
    these rounds cannot split."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def table(title, rows, tools):
    """Medians per tool, and each ratio two ways: of the medians, and the
    median of the per-round ratios (paired: both runs of a round saw the
    same moment of a noisy host)."""
    print(f"\n{title}\n")
    pairs = [(t, "C") for t in tools if t != "C" and "C" in tools]
    if "fio" in tools:
        pairs.append(("iolab", "fio"))
    head = " | ".join(f"{t} IOPS (dev reads)" for t in tools)
    print(f"| row | {head} | " + " | ".join(f"{a}/{b} (paired, 95% CI)" for a, b in pairs) + " |")
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
            ratios = [x[0] / y[0] for x, y in zip(res[a], res[b])]
            lo, hi = ci(ratios)
            rat.append(f"{ma / mb:.3f} ({statistics.median(ratios):.3f}, {lo:.3f}-{hi:.3f})")
        print(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(rat) + " |")
    return pairs


@contextlib.contextmanager
def ram_disk(where, size):
    """A loop device over a file in a fresh tmpfs: a device that answers in
    microseconds, so what differs between two tools is their own time (its
    kernel worker kept on CPU 0, away from the tools). Yields None (and says
    why) when it cannot be made (needs root)."""
    mnt = tempfile.mkdtemp(prefix="ram-", dir=where)
    loop = None
    # The loop device's reads run in an unbound kernel worker: kept on CPU 0
    # while the tools run pinned to CPU 1, or it lands on theirs now and then.
    # (The disk rows, interleaved with these, run under the same mask.)
    wq = "/sys/devices/virtual/workqueue/cpumask"
    wq_was = None
    try:
        with open(wq) as f:
            was = f.read().strip()
        with open(wq, "w") as f:
            f.write("1")
        wq_was = was
    except OSError:
        pass
    try:
        try:
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size + (64 << 20)}", "tmpfs", mnt],
                           check=True, capture_output=True)
            back = os.path.join(mnt, "disk")
            subprocess.run(["dd", "if=/dev/zero", f"of={back}", "bs=1M", f"count={size >> 20}",
                            "status=none"], check=True)
            loop = subprocess.run(["losetup", "-f", "--show", back], check=True, capture_output=True,
                                  text=True).stdout.strip()
        except (subprocess.CalledProcessError, OSError) as e:
            err = getattr(e, "stderr", b"") or b""
            print(f"no RAM-backed loop device (needs root, tmpfs, losetup): {e} {err.decode().strip()}",
                  file=sys.stderr)
        # Outside the try: a failure of the runs themselves is not this.
        yield loop
    finally:
        if wq_was:
            with open(wq, "w") as f:
                f.write(wq_was)
        if loop:
            subprocess.run(["losetup", "-d", loop], check=False)
        # Lazily: a loop device just detached may hold the file a moment.
        subprocess.run(["umount", "-l", mnt], check=False, capture_output=True)
        try:
            os.rmdir(mnt)
        except OSError as e:
            print(f"left {mnt}: {e}", file=sys.stderr)


def uring(a, devices, seed):
    """io_uring O_DIRECT 4 KiB random reads at depth 1, 8, 32 on each device,
    iolab and fio in turn; and at depth 1 the gap between reads: 1/IOPS
    less the mean latency, from one read's completion to the next one's
    start as each tool stamps them (the part of its own time that falls
    outside the latency it reports)."""
    depths = (1, 8, 32)
    res = {(n, d): {"iolab": [], "fio": []} for n, _ in devices for d in depths}
    for r in range(a.rounds):
        print(f"[uring] round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for name, dev in devices:
            for d in depths:
                args = ["--name=u", f"--filename={dev}", f"--size={1 << 30}", "--rw=randread", "--bs=4k",
                        "--direct=1", "--ioengine=io_uring", f"--iodepth={d}",
                        f"--number_ios={a.ios * 5}", "--norandommap"]
                cell = res[(name, d)]
                in_turn(r, [
                    lambda: cell["iolab"].append(counted(dev, lambda: iolab(
                        a.iolab, args + [f"--randseed={seed()}"], lat=True))),
                    lambda: cell["fio"].append(counted(dev, lambda: fio(
                        args + [f"--randseed={seed()}"], lat=True))),
                ])
    for name, dev in devices:
        what = "a 1 GiB file" if name == "disk" else f"a RAM-backed loop device ({dev} over tmpfs)"
        table(f"io_uring O_DIRECT random 4 KiB reads of {what}",
              [(f"{name} depth {d}", res[(name, d)]) for d in depths], ["iolab", "fio"])
    print("\nEach tool's own cost (medians of the rounds): at depth 1 the gap between reads, from one read's"
          "\ncompletion to the next one's start as each tool stamps them (1/IOPS - mean latency, ns); at every"
          "\ndepth the job's CPU time per read (us, usr + sys as each tool reports it)\n")
    print("| device | gap d1 iolab | fio | " + " | ".join(f"CPU/read d{d} iolab | fio" for d in depths) + " |")
    print("|---" * (3 + 2 * len(depths)) + "|")
    for name, _ in devices:
        med = lambda d, t, f: statistics.median(f(x) for x in res[(name, d)][t])  # noqa: E731
        own = [med(1, t, lambda x: 1e9 / x[0] - x[2]) for t in ("iolab", "fio")]
        cpu = [f"{med(d, t, lambda x: x[3]):.2f}" for d in depths for t in ("iolab", "fio")]
        print(f"| {name} | {own[0]:,.0f} | {own[1]:,.0f} | " + " | ".join(cpu) + " |")


def main():
    # A SIGTERM or hang-up ends the run as Ctrl-C does, through the finally
    # blocks that put the RAM device and the workqueue mask back.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))
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
        devices = [("disk", big)]
        with ram_disk(a.dir, size) as ram:
            if ram:
                devices.append(("ram", ram))
            uring(a, devices, seed)

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
