#!/usr/bin/env python3
"""iolab calibrate and iolab explain: how long they take (issue 37's
budgets: calibrate under 30 s, explain of a stored run under 100 ms).

In a scratch database and directory (under --dir, default the current one):
  calibrate       `iolab calibrate --dir DIR` timed from the outside,
                  --cal-rounds times (its own "measured in" figure beside);
  explain         `iolab explain ID` of a stored run, --rounds times each
                  for three stored runs (a cached-read run, a cold O_DIRECT
                  run with 20,000 I/Os, a 4-job run), and `iolab explain A B`;
  version         `iolab --version`: iolab starting and doing nothing, the
                  part of explain's time that is the process itself.
Medians and maxima over the rounds; each command's wall time from
time.perf_counter() around subprocess.run(), output captured.

Needs a release build (cargo build --release).

usage: bench/explain.py [--rounds N] [--cal-rounds N] [--dir DIR] [--iolab PATH]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, env):
    """The command's wall time (s) from here, and its stdout."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench/explain.py: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return dt, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--cal-rounds", type=int, default=3)
    ap.add_argument("--dir", default=".")
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target", "release", "iolab"))
    a = ap.parse_args()
    if not os.access(a.iolab, os.X_OK):
        sys.exit(f"bench/explain.py: no iolab at {a.iolab}: cargo build --release")
    work = tempfile.mkdtemp(prefix="iolab-bench-explain-", dir=a.dir)
    try:
        env = dict(os.environ, IOLAB_DB=os.path.join(work, "bench.db"))
        data = os.path.join(work, "data.dat")
        iolab = a.iolab
        cal = []
        for _ in range(a.cal_rounds):
            dt, out = timed([iolab, "calibrate", "--dir", work], env)
            m = re.search(r"measured in ([0-9.]+) s", out)
            cal.append((dt, float(m.group(1)) if m else float("nan")))
        runs = {
            "cached 4 KiB reads": ["--name=cached", f"--filename={data}", "--size=64m",
                                   "--rw=randread", "--bs=4k", "--cache=warm",
                                   "--number_ios=200000"],
            "cold O_DIRECT, 20,000 I/Os": ["--name=cold", f"--filename={data}", "--size=64m",
                                           "--rw=randread", "--bs=4k", "--direct=1",
                                           "--number_ios=20000"],
            "4 jobs": ["--name=four", f"--filename={data}", "--size=64m", "--rw=randread",
                       "--bs=4k", "--cache=warm", "--numjobs=4", "--number_ios=50000"],
        }
        ids = {}
        for name, args in runs.items():
            timed([iolab, "run", *args], env)
            _, out = timed([iolab, "history", "-f", "json", "--limit", "1"], env)
            ids[name] = int(re.search(r'"id":\s*(\d+)', out).group(1))
        rows = []
        for name, rid in ids.items():
            t = [timed([iolab, "explain", str(rid)], env)[0] for _ in range(a.rounds)]
            rows.append((f"explain {rid} ({name})", t))
        a_id, b_id = ids["cold O_DIRECT, 20,000 I/Os"], ids["cached 4 KiB reads"]
        t = [timed([iolab, "explain", str(a_id), str(b_id)], env)[0] for _ in range(a.rounds)]
        rows.append((f"explain {a_id} {b_id} (a comparison)", t))
        t = [timed([iolab, "--version"], env)[0] for _ in range(a.rounds)]
        rows.append(("iolab --version (start only)", t))
        print(f"## bench/explain.py: {a.rounds} rounds, calibrate {a.cal_rounds} rounds\n")
        print("| command | median | max | budget |")
        print("|---|---:|---:|---|")
        outside = [c[0] for c in cal]
        inside = [c[1] for c in cal]
        print(f"| iolab calibrate (outside clock) | {statistics.median(outside):.2f} s | "
              f"{max(outside):.2f} s | under 30 s |")
        print(f"| iolab calibrate (its own 'measured in') | {statistics.median(inside):.2f} s | "
              f"{max(inside):.2f} s | |")
        for name, t in rows:
            budget = "" if name.startswith("iolab --version") else "under 100 ms"
            print(f"| {name} | {statistics.median(t) * 1e3:.1f} ms | {max(t) * 1e3:.1f} ms | {budget} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
