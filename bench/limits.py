#!/usr/bin/env python3
"""Issue 14's measured bounds: peak memory of long jobs, and the time from SIGINT
to exit in each phase, iolab beside fio where fio runs the same job.

Memory (peak RSS, ru_maxrss of the child):
  repeat=1000 of a small job (64 KiB, 4 KiB random reads), text and JSON output
  10,485,760 I/Os with write_lat_log (null engine), iolab and fio

SIGINT to exit (several rounds, median and max), a signal sent mid-phase:
  layout of one 8 GiB file, layout of 1000 files + clone start, a run,
  a lab, tree create; each phase's exit code (130) and worst stop against
  docs/SAFETY.md's second, ok or OFF (tests/defects_runs.rs asserts only a
  liveness bound of 15 s, which a loaded machine cannot reach); exit 1 when
  one is OFF.

usage: bench/limits.py [--rounds N] [--dir DIR]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def peak(cmd):
    """Runs cmd to its end; (exit code, peak RSS in MiB, seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_maxrss / 1024, time.monotonic() - t0


def sigint_after(cmd, after, marker=None):
    """Starts cmd, sends SIGINT `after` s later (or once stderr shows
    `marker`), returns (exit code, seconds from SIGINT to exit)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if marker:
        for line in p.stderr:
            if marker in line:
                break
    time.sleep(after)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.communicate()
    return p.returncode, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(ROOT, "bench/out"))
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    iolab = os.path.join(ROOT, "target/release/iolab")
    os.makedirs(a.dir, exist_ok=True)
    d = tempfile.mkdtemp(dir=a.dir)
    db = os.path.join(d, "db")
    try:
        print("peak memory")
        print(f"{'job':<44} {'tool':<6} {'exit':>4} {'peak MiB':>9} {'secs':>6}")
        small = ["--name=rep", f"--filename={d}/small", "--size=64k", "--rw=randread",
                 "--bs=4k", "--repeat=1000", "--cache=keep"]
        rows = [
            ("repeat=1000, text, stored", "iolab", [iolab, "run", *small, "--db", db]),
            ("repeat=1000, json, stored", "iolab",
             [iolab, "run", *small, "--db", db, "--output-format=json"]),
        ]
        lat = ["--name=lat", "--ioengine=null", "--size=1g", "--bs=4k", "--loops=40"]
        rows.append(("10,485,760 I/Os, write_lat_log", "iolab",
                     [iolab, "run", *lat, f"--filename={d}/f10", "--cache=keep", "--no-store",
                      f"--write_lat_log={d}/il"]))
        if shutil.which("fio"):
            rows.append(("10,485,760 I/Os, write_lat_log", "fio",
                         ["fio", *lat, f"--filename={d}/f10", f"--write_lat_log={d}/fl"]))
        for name, tool, cmd in rows:
            code, mib, secs = peak(cmd)
            print(f"{name:<44} {tool:<6} {code:>4} {mib:>9.1f} {secs:>6.2f}")
            for f in os.listdir(d):
                if f.startswith(("il_", "fl_")):
                    os.remove(os.path.join(d, f))

        print(f"\nSIGINT to exit, {a.rounds} rounds")
        many = os.path.join(d, "many")
        os.makedirs(many, exist_ok=True)
        phases = [
            ("layout of one 8 GiB file", [iolab, "run", "--name=l", f"--filename={d}/big",
                                          "--size=8g", "--no-store"], 0.3, None),
            ("layout of 1000 files, clone start", [iolab, "run", "--name=n",
                                                   f"--directory={many}", "--size=4k",
                                                   "--numjobs=1000", "--unlink=1",
                                                   "--no-store"], 0.7, None),
            ("run (time_based)", [iolab, "run", "--name=r", f"--filename={d}/r", "--size=16m",
                                  "--rw=randread", "--time_based", "--runtime=60s",
                                  "--unlink=1", "--no-store"], 1.0, None),
            ("lab prefetch, mid-run", [iolab, "lab", "prefetch", "--quick", "--size", "256M",
                                       "--ops", "30000", "--dir", d, "--out",
                                       os.path.join(d, "out"), "--no-store"], 0.0,
             "distance 0"),
            ("tree create", [iolab, "tree", "create", os.path.join(d, "tree"), "-d", "8",
                             "-l", "6", "-f", "4", "--db", db], 0.5, None),
        ]
        print(f"{'phase':<36} {'exit':>5} {'median ms':>10} {'max ms':>8}  (tolerance: exit 130, "
              "max under 1000 ms)")
        off = []
        for name, cmd, after, marker in phases:
            codes, took = set(), []
            for _ in range(a.rounds):
                code, secs = sigint_after(cmd, after, marker)
                codes.add(code)
                took.append(secs * 1000)
                shutil.rmtree(os.path.join(d, "tree"), ignore_errors=True)
            ok = codes == {130} and max(took) < 1000
            if not ok:
                off.append(name)
            print(f"{name:<36} {','.join(map(str, sorted(codes))):>5} "
                  f"{statistics.median(took):>10.1f} {max(took):>8.1f}  {'ok' if ok else 'OFF'}")
        if off:
            print(f"\n{len(off)} off: " + "; ".join(off))
            return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
