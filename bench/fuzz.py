#!/usr/bin/env python3
"""Issue 14's fuzz run: a million mutated job files and command lines through
iolab's parse, validate and plan, in-process (examples/fuzz.rs, the driver of
tests/fuzz_driver/), with 0 panics, 0 stack overflows and each input under
100 ms as the bar.

The inputs are split into chunks, each run by a child process of the example
(several at a time), each input on a thread with a 2 MiB stack. A stack
overflow or another fatal signal kills the child: the input it was on (from
its --progress file) is counted as an overflow or a crash, and the rest of
the chunk runs again in a new child. An input over 100 ms is timed a second
time by the driver and keeps the lesser time (a paused thread is not a slow
input); one still over is counted and fails the run.

Prints inputs, panics, overflows, crashes, inputs over 100 ms, the slowest
input (and how to show it), p50/p99 and the total time; exits 1 unless all of
panics, overflows, crashes and slow inputs are 0.

usage: bench/fuzz.py [--inputs N] [--seed S] [--jobs J] [--chunk C]
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT_US = 100_000


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


def build():
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "fuzz"],
                   cwd=ROOT, check=True)
    return os.path.join(ROOT, "target/release/examples/fuzz")


class Chunk:
    """Inputs start..end of the seed, run by one child process."""

    def __init__(self, exe, seed, start, end, scratch):
        self.start, self.end = start, end
        self.progress_file = os.path.join(scratch, f"progress-{start}")
        self.stderr = tempfile.TemporaryFile(dir=scratch)
        self.proc = subprocess.Popen(
            [exe, "--seed", str(seed), "--start", str(start), "--inputs", str(end - start),
             "--progress", self.progress_file],
            stdout=subprocess.PIPE, stderr=self.stderr, text=True)

    def finish(self):
        """The child's JSON line, or (input, what) for a fatal end."""
        out, _ = self.proc.communicate()
        if self.proc.returncode == 0:
            return json.loads(out.strip().splitlines()[-1])
        self.stderr.seek(0)
        err = self.stderr.read().decode(errors="replace")
        try:
            with open(self.progress_file) as f:
                at = int(f.read().strip())
        except (OSError, ValueError):
            at = self.start
        code = self.proc.returncode
        what = ("overflow" if "has overflowed its stack" in err
                else f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}")
        return (at, what, err.strip().splitlines()[-3:])


def quantile(hist, total, q):
    want = max(1, -(-int(total * q * 1_000_000) // 1_000_000))  # ceil(total * q)
    seen = 0
    for t in sorted(hist):
        seen += hist[t]
        if seen >= want:
            return t
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2),
                    help="children at once (default: half the CPUs)")
    ap.add_argument("--chunk", type=int, default=50_000, help="inputs per child")
    a = ap.parse_args()
    exe = build()
    t0 = time.monotonic()
    todo = [(s, min(s + a.chunk, a.inputs)) for s in range(0, a.inputs, a.chunk)]
    running = []
    hist, slowest, panic_examples, fatal = {}, [], [], []
    n = {"inputs": 0, "panics": 0, "refused": 0, "jobs_planned": 0, "retimed": 0}
    done_chunks = 0
    with tempfile.TemporaryDirectory(prefix="iolab-fuzz-") as scratch:
        while todo or running:
            while todo and len(running) < a.jobs:
                start, end = todo.pop(0)
                running.append(Chunk(exe, a.seed, start, end, scratch))
            c = running.pop(0)
            r = c.finish()
            if isinstance(r, tuple):
                at, what, tail = r
                fatal.append((at, what, tail))
                n["inputs"] += 1
                progress(f"input {at}: {what}; the rest of {c.start}..{c.end} runs again")
                todo[:0] = [(s, e) for s, e in [(c.start, at), (at + 1, c.end)] if s < e]
                continue
            for k in n:
                n[k] += r[k]
            for t, count in r["hist_us"]:
                hist[t] = hist.get(t, 0) + count
            slowest = sorted(slowest + [tuple(x) for x in r["slowest"]], key=lambda x: -x[1])[:10]
            panic_examples += r["panic_examples"][: 10 - len(panic_examples)]
            done_chunks += 1
            progress(f"inputs {c.start}..{c.end}: {r['panics']} panics, slowest "
                     f"{r['slowest'][0][1] / 1000:.1f} ms ({n['inputs']:,} of {a.inputs:,} done)")
    total = time.monotonic() - t0
    timed = sum(hist.values())
    over = sum(c for t, c in hist.items() if t > LIMIT_US)
    overflows = sum(1 for f in fatal if f[1] == "overflow")
    crashes = len(fatal) - overflows
    worst = slowest[0] if slowest else (0, 0)
    print(f"fuzz: seed {a.seed}, examples/fuzz in chunks of {a.chunk:,}, {a.jobs} at a time")
    print(f"inputs            {n['inputs']:,} ({n['refused']:,} refused with an error, "
          f"{n['inputs'] - n['refused'] - n['panics'] - len(fatal):,} accepted: "
          f"{n['jobs_planned']:,} jobs planned)")
    print(f"panics            {n['panics']}")
    print(f"stack overflows   {overflows} (2 MiB stack)")
    print(f"other crashes     {crashes}")
    print(f"over 100 ms       {over} ({n['retimed']} timed a second time)")
    print(f"slowest input     {worst[1] / 1000:.1f} ms (input {worst[0]}: "
          f"cargo run --release --example fuzz -- --seed {a.seed} --show {worst[0]})")
    print(f"p50 / p99 / p99.9 {quantile(hist, timed, 0.5) / 1000:.3f} / "
          f"{quantile(hist, timed, 0.99) / 1000:.3f} / {quantile(hist, timed, 0.999) / 1000:.3f} ms")
    print(f"total time        {total:.1f} s wall ({sum(t * c for t, c in hist.items()) / 1e6:.1f} s "
          f"in the inputs)")
    for i, msg in panic_examples:
        print(f"panic: input {i}: {msg}")
    for at, what, tail in fatal:
        print(f"{what}: input {at}: {' | '.join(tail)}")
    bad = n["panics"] + len(fatal) + over
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
