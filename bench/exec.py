#!/usr/bin/env python3
"""iolab exec: what running a command under iolab adds to its wall time.

Two commands, each run three ways in every round (the ways' order rotated
from round to round, medians over the rounds):
  bare        the command itself;
  exec -q     `iolab exec --no-store -q -- CMD` (the command's output
              discarded, no steps printed, its table still printed);
  exec json   `iolab exec --no-store -f json -- CMD`, from which iolab's own
              measure of the command (runs[0].wall_ns: exec to exit) is read;
and in the `true` rounds also `iolab --version`: iolab starting and doing
nothing, the share of the added time that is its own start.
Each is timed the same way from the outside: time.perf_counter() around
subprocess.run(), output captured. So the table shows both what iolab adds
around the program (its start, the held fork, counters, table, exit) and
whether its wall_ns of the program agrees with the outside clock (wall_ns
starts at the exec, so it leaves out the fork that the outside time holds).

The commands:
  true        nothing to do: the fixed cost (run --inner times a round);
  dd 4k       `dd if=FILE of=/dev/null bs=4k` over a page-cached file sized
              (measured at start) so that dd takes about --seconds; the file
              is read in first, and the bytes each json run read from
              storage (io.read_bytes) are shown to prove it stayed cached.

Needs a release build (cargo build --release) and GNU dd.

usage: bench/exec.py [--rounds N] [--inner N] [--seconds S] [--size MiB] [--dir DIR] [--iolab PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    """The whole command's wall time (s) from here, and its stdout."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"bench/exec.py: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return dt, p.stdout


def in_turn(r, steps):
    """Runs `steps` starting at step r mod n (as bench/cold.py does): each
    way goes first, second, ... in turn."""
    n = len(steps)
    for i in range(n):
        steps[(r + i) % n]()


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 4 << 30


def make_file(path, size):
    """`size` bytes of non-zero data, written in 1 MiB blocks and left cached."""
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(block)
    timed(["dd", f"if={path}", "of=/dev/null", "bs=1M"])  # read in (writing cached it; this makes sure)


def dd_size(d, seconds):
    """The file size (bytes, whole MiB) dd bs=4k reads from the cache in
    about `seconds`: the best of three reads of a 256 MiB file, scaled,
    capped at a quarter of the available memory."""
    probe = os.path.join(d, "probe.dat")
    make_file(probe, 256 << 20)
    best = min(timed(["dd", f"if={probe}", "of=/dev/null", "bs=4k"])[0] for _ in range(3))
    os.remove(probe)
    size = int((256 << 20) / best * seconds)
    return max(64 << 20, min(size, mem_available() // 4)) >> 20 << 20


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--inner", type=int, default=10, help="runs of `true` per way and round")
    ap.add_argument("--seconds", type=float, default=1.0, help="dd's target time")
    ap.add_argument("--size", type=int, help="dd's file in MiB (default: sized for --seconds)")
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    a = ap.parse_args()
    if not os.access(a.iolab, os.X_OK):
        sys.exit(f"bench/exec.py: no {a.iolab} (cargo build --release, or --iolab PATH)")
    os.makedirs(a.dir, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=a.dir, prefix="exec-") as d:
        size = (a.size << 20) if a.size else dd_size(d, a.seconds)
        data = os.path.join(d, "exec.dat")
        make_file(data, size)
        cmds = {
            "true": (["true"], a.inner),
            "dd 4k": (["dd", f"if={data}", "of=/dev/null", "bs=4k"], 1),
        }
        ways = ("bare", "exec -q", "exec json")
        # `true` rounds also start iolab doing nothing (`iolab --version`):
        # how much of what exec adds is iolab's own start (loader, libraries)
        ways_of = {"true": ways + ("iolab --version",), "dd 4k": ways}
        res = {c: {w: [] for w in ways_of[c] + ("wall_ns",)} for c in cmds}
        storage = {c: [] for c in cmds}  # io.read_bytes of each json run

        def step(c, w):
            cmd, _ = cmds[c]
            if w == "bare":
                res[c][w].append(timed(cmd)[0])
            elif w == "exec -q":
                res[c][w].append(timed([a.iolab, "exec", "--no-store", "-q", "--"] + cmd)[0])
            elif w == "iolab --version":
                res[c][w].append(timed([a.iolab, "--version"])[0])
            else:
                dt, out = timed([a.iolab, "exec", "--no-store", "-f", "json", "--"] + cmd)
                run = json.loads(out)["runs"][0]
                res[c][w].append(dt)
                res[c]["wall_ns"].append(run["wall_ns"] / 1e9)
                storage[c].append(run["io"].get("read_bytes", 0))

        for c in cmds:  # once each, unmeasured: binaries and libraries cached
            for w in ways_of[c]:
                step(c, w)
            for k in res[c]:
                res[c][k].clear()
            storage[c].clear()
        for r in range(a.rounds):
            print(f"round {r + 1}/{a.rounds}", file=sys.stderr, flush=True)
            for c, (_, inner) in cmds.items():
                for _ in range(inner):
                    in_turn(r, [lambda w=w: step(c, w) for w in ways_of[c]])

    ver = subprocess.run([a.iolab, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"{ver}, {os.uname().sysname} {os.uname().release}, {os.cpu_count()} CPUs; "
          f"medians of {a.rounds} interleaved rounds (`true`: {a.inner} runs of each way a round); "
          f"dd reads a page-cached {size >> 20} MiB file with 4 KiB reads.")
    print("Outside: time.perf_counter() around subprocess.run() of the whole command. "
          "wall_ns: iolab's own measure of the command (exec to exit), from the json run.\n")
    print("| command | bare (ms) | exec -q (ms) | exec -q / bare | added (ms) "
          "| exec json (ms) | added (ms) | iolab wall_ns (ms) | wall_ns / bare | wall_ns - bare (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in cmds:
        m = {k: statistics.median(v) * 1e3 for k, v in res[c].items()}
        b = m["bare"]

        def paired(k):
            """The median of the per-run differences from bare (the runs of
            one round side by side: they saw the same moment of the host)."""
            return statistics.median(x - y for x, y in zip(res[c][k], res[c]["bare"])) * 1e3

        print(f"| {c} | {b:.3f} | {m['exec -q']:.3f} | {m['exec -q'] / b:.3f} "
              f"| {m['exec -q'] - b:+.3f} ({paired('exec -q'):+.3f}) "
              f"| {m['exec json']:.3f} | {m['exec json'] - b:+.3f} ({paired('exec json'):+.3f}) "
              f"| {m['wall_ns']:.3f} | {m['wall_ns'] / b:.3f} "
              f"| {m['wall_ns'] - b:+.3f} ({paired('wall_ns'):+.3f}) |")
    print("\nadded, wall_ns - bare: difference of the medians (median of the paired differences)")
    st = statistics.median(res["true"]["iolab --version"]) * 1e3
    print(f"iolab's own start doing nothing (`iolab --version`, timed the same way): {st:.3f} ms "
          f"({st - statistics.median(res['true']['bare']) * 1e3:+.3f} ms over `true`)")
    print()
    for c in cmds:
        spread = {k: (min(v) * 1e3, max(v) * 1e3) for k, v in res[c].items()}
        print(f"{c}: min..max (ms) " + ", ".join(f"{k} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in spread.items())
              + f"; read from storage by the json runs: at most {max(storage[c])} B")


if __name__ == "__main__":
    main()
