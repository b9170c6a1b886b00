#!/usr/bin/env python3
"""The labs' effects in time, which tests/lab.rs no longer asserts.

tests/lab.rs checks each lab's cause by what was counted (the stored runs'
reads from storage, their fadvise calls), whatever else runs on the machine;
how large the effect is in time is the machine's, and a loaded one shrinks or
hides it. Here the same labs (--quick, the tests' sizes, a release build) run
--rounds times and each effect is printed with its tolerance (the one the
tests held), ok or OFF:

  prefetch      lab prefetch --size 64M --ops 1500: the best distance's
                speed-up over distance 0 above 1.2x;
  cached-reads  lab cached-reads --size 64M: every later (page-cache) run
                faster than the first (cold) run;
  log-scan      lab log-scan --size 32M: with 1m buffers, the warm buffered
                pass faster than the cold one.

Each lab runs in a scratch directory with its own database. Exits 1 when one
is OFF in the median round.

usage: bench/labs.py [--rounds N] [--iolab PATH]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table(iolab, args):
    """The rows of the first table a lab prints (after its rule line)."""
    with tempfile.TemporaryDirectory(prefix="iolab-bench-labs-") as d:
        env = dict(os.environ, IOLAB_DB=os.path.join(d, "lab.db"))
        out = subprocess.run([iolab, "lab"] + args + ["--quick", "--out", os.path.join(d, "out")],
                             cwd=d, env=env, check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("--")) + 1
    rows = []
    for l in lines[start:]:
        if not l.strip():
            break
        rows.append(l.split())
    return rows


def num(cell):
    return float(cell.rstrip("x"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    a = ap.parse_args()
    speedup, later_over_first, warm_over_cold = [], [], []
    for r in range(a.rounds):
        rows = table(a.iolab, ["prefetch", "--size", "64M", "--ops", "1500"])
        speedup.append(max(num(row[2]) for row in rows))
        rows = table(a.iolab, ["cached-reads", "--size", "64M"])
        later_over_first.append(min(num(row[1]) for row in rows[1:]) / num(rows[0][1]))
        rows = table(a.iolab, ["log-scan", "--size", "32M"])
        big = next(row for row in rows if row[0] == "1m" and row[1] == "buffered")
        warm_over_cold.append(num(big[3]) / num(big[2]))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    off = []
    print(f"\nThe labs' effects, medians of {a.rounds} rounds")
    for what, got, lo in (
        ("prefetch: best speed-up over distance 0 (x)", statistics.median(speedup), 1.2),
        ("cached-reads: slowest later run / first run", statistics.median(later_over_first), 1.0),
        ("log-scan: 1m buffered, warm / cold", statistics.median(warm_over_cold), 1.0),
    ):
        ok = got > lo
        if not ok:
            off.append(what)
        print(f"  {what}: {got:.2f} (tolerance: above {lo:.2f}) {'ok' if ok else 'OFF'}")
    if off:
        print(f"\n{len(off)} off: " + "; ".join(off))
    sys.exit(1 if off else 0)


if __name__ == "__main__":
    main()
