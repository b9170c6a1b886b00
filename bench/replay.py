#!/usr/bin/env python3
"""iolab replay (issue 18): does a replay at --speed max reproduce the program?

Each round traces iolab's own random-read job (psync, 4 KiB, 8 MiB file laid
out beforehand) with `iolab trace --events`, then replays the trace with
`iolab replay --speed max`, and sets side by side the pread64 calls of the
trace and of the replay: op counts (must be equal) and IOPS (calls over the
span from the first call's start to the last one's end), with their ratio.
Rounds interleave trace and replay; the last line holds the medians.

Needs root and a kernel with BTF (the ebpf tracer).

--program runs the traced job with another iolab binary (a release build while
trace and replay come from a debug one): a replay at max speed drops the
program's own CPU time between calls, so a debug build's slow loop makes the
replay look faster than the program.

usage: bench/replay.py [--rounds N] [--dir DIR] [--iolab PATH] [--program PATH] [--size SIZE]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--iolab", help="the iolab binary (default: a release build)")
    ap.add_argument("--program", help="the iolab whose job is traced (default: --iolab)")
    ap.add_argument("--size", default="8m")
    a = ap.parse_args()
    iolab = a.iolab
    if not iolab:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        iolab = os.path.join(ROOT, "target/release/iolab")
    os.makedirs(a.dir, exist_ok=True)
    d = tempfile.mkdtemp(dir=a.dir)
    data = os.path.join(d, "data")
    job = [a.program or iolab, "run", "--no-store", "--name=r", "--rw=randread", "--bs=4k",
           f"--size={a.size}", f"--filename={data}", "--ioengine=psync"]
    try:
        run(*job)  # lays the file out, outside the traces
        print(f"iolab's randread job ({a.size}, 4 KiB, psync), traced then replayed at "
              f"--speed max; pread64 only, {a.rounds} rounds")
        print(f"trace and replay: {iolab}; job: {job[0]}")
        print(f"{'round':>5} {'ops trace':>10} {'ops replay':>10} {'IOPS trace':>11} "
              f"{'IOPS replay':>12} {'replay/trace':>13}")
        rows = []
        for i in range(a.rounds):
            t = os.path.join(d, f"r{i}.trace")
            run(iolab, "trace", "--events", "--no-store", "-o", t, "--", *job)
            v = json.loads(run(iolab, "replay", t, "--speed", "max", "-f", "json"))
            p = v["calls"]["pread64"]
            o, r = p["original"], p["replayed"]
            ratio = r["iops"] / o["iops"] if o["iops"] else float("nan")
            rows.append((o["count"], r["count"], o["iops"], r["iops"], ratio))
            print(f"{i + 1:>5} {o['count']:>10} {r['count']:>10} {o['iops']:>11.0f} "
                  f"{r['iops']:>12.0f} {ratio:>13.3f}")
            os.remove(t)
        med = [statistics.median(c) for c in zip(*rows)]
        print(f"{'med':>5} {med[0]:>10.0f} {med[1]:>10.0f} {med[2]:>11.0f} {med[3]:>12.0f} "
              f"{med[4]:>13.3f}")
        exact = all(o == r for o, r, *_ in rows)
        print(f"op counts equal in every round: {'yes' if exact else 'NO'}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
