#!/usr/bin/env python3
"""Many hosts (issue 19): what starting and gathering ranks costs.

Launch to barrier: the wall time from starting the command to the moment the
last of 16 local ranks started its timed part (every rank past the start
barrier), for `mpirun -n 16 iolab run` and for `iolab run --hosts` with 16
local workers (`--launcher 'env IOLAB_HOST={host}'`, as ssh would start
them, without the network), and the start skew between the ranks. Each rank
reads 64 blocks of its own 256 KiB file. Medians of several rounds,
interleaved.

Gather: `cargo bench --bench dist_merge`, rank 0's work for 1,000 ranks'
results (read back, merged, the merged histogram made), and their size on
the wire.

Needs a release build with MPI (cargo build --release --features mpi) and
mpirun; runs in a scratch directory it removes.

usage: bench/dist.py [--rounds N] [--ranks N] [--iolab PATH]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def once(cmd, env):
    t0 = time.time_ns()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    t1 = time.time_ns()
    doc = json.loads(out)
    starts = [h["start_unix_ns"] for h in doc["hosts"]]
    return (max(starts) - t0) / 1e6, doc["start_skew_ns"] / 1e6, (t1 - t0) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="iolab-bench-dist-")
    env = dict(os.environ, IOLAB_DB=os.path.join(d, "db.sqlite"))
    job = ["--name=r", f"--filename={d}/f", "--size=256k", "--rw=randread", "--bs=4k",
           "--number_ios=64", "--output-format=json"]
    ways = {
        f"mpirun -n {a.ranks}": ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n",
                                 str(a.ranks), a.iolab, "run", *job],
        f"--hosts ({a.ranks} local workers)": [
            a.iolab, "run", *job, "--hosts", ",".join(f"h{i}" for i in range(a.ranks)),
            "--launcher", "env IOLAB_HOST={host}"],
    }
    got = {k: [] for k in ways}
    try:
        for _ in range(a.rounds):
            for k, cmd in ways.items():
                got[k].append(once(cmd, env))
    finally:
        subprocess.run(["rm", "-rf", d])
    print(f"Launch to barrier, {a.ranks} ranks on this machine, medians of {a.rounds} rounds (ms)")
    print("| how | launch to last rank's start | start skew | whole command |")
    print("|---|---|---|---|")
    for k, v in got.items():
        m = [statistics.median(x[i] for x in v) for i in range(3)]
        print(f"| {k} | {m[0]:.0f} | {m[1]:.2f} | {m[2]:.0f} |")
    print()
    subprocess.run(["cargo", "bench", "--quiet", "--features", "mpi", "--bench", "dist_merge"],
                   cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
