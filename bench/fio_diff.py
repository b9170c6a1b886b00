#!/usr/bin/env python3
"""Differential fuzzer: random fio command lines under fio and `iolab run`.

Draws random but valid fio command lines from a seeded RNG (one job each,
small: 64 KiB to 2 MiB, a case well under a second per tool, never
`time_based`, no rate options) over ioengine (psync, sync, pvsync2, libaio,
io_uring, mmap, posixaio; iodepth 1-16 for the queued ones; libaio and
io_uring sometimes with direct=1 and 4k-aligned sizes and offsets), rw with
its suffixes (`read:8k`, `randread:N`), rwmixread, bs / bs per direction /
bsrange / bssplit, size, offset, nrfiles, loops, number_ios, io_size,
verify (crc32c, md5, meta; do_verify, verify_backlog) on write jobs,
fsync / fdatasync, random_distribution, norandommap, percentage_random,
zonemode=strided, fallocate, overwrite, and always a randseed.

Each command line runs under `fio` and under `iolab run --no-store`, each in
a fresh temporary directory (so the files are new for both), with
`--output-format=json` and a 60 s timeout. Compared, summed over the jobs:

  * per direction (read, write, trim): total_ios and io_bytes;
  * syncs: `jobs[].sync.lat_ns.N` (fio 3.33's `sync.total_ios` is 0);
  * the files left in the directory (names and sizes);
  * the exit status and each job's `error` (a failed verify is 84, EILSEQ).

A random read/write mix (rw, readwrite, randrw with rwmixread strictly
between 0 and 100) splits the I/Os with each tool's own RNG: only the total
I/Os and bytes of reads and writes together are compared, and no sync count.
Some other figures depend on random draws that the tools make with different
generators (iolab's stream is its own, see docs/fio-compat.md, "Differences
from fio"); a difference that one of the rules in EXPLAINED accounts for is
counted as "differs-explained", not as a failure.

Each case is one of: same, differs, differs-explained, fio-fails-only,
fio-fails-explained (fio's own crash or hang, a rule of FIO_FAILURES),
iolab-fails-only, both-fail (a tool "fails" when it prints no JSON, times out
or dies of a signal). Progress goes to stderr; at the end a markdown table
goes to stdout: the count per class and the main kinds of differences
(grouped by the fields that differ or the error, then by the options present),
each with a minimal reproducing command line (options dropped one at a time
while the same difference remains; `--no-minimize` skips that). Exit status
1 if any case differs unexplained or fails under one tool only.

Not part of CI: like every script in bench/, it is run by hand.

usage: bench/fio_diff.py [--seed S] [--cases N] [--jobs J] [--keep-going]
                         [--only-diffs] [--out FILE.jsonl] [--max-time SEC]
                         [--iolab PATH] [--fio PATH] [--no-minimize]
       bench/fio_diff.py --cmd '--name=j --filename=f --size=1m --rw=randread'

  --seed S        seed of the case generator (default 1); case K of seed S is
                  always the same command line
  --cases N       number of cases (default 100)
  --jobs J        cases run in parallel (default 1)
  --keep-going    run every case (default: stop drawing new cases after the
                  first unexplained difference or one-sided failure)
  --only-diffs    report on stderr and in --out only the cases that are not
                  "same"
  --out FILE      a JSON line per case: command line, class, differences, and
                  both tools' exit status, stderr's first line and files
  --max-time SEC  stop drawing new cases after SEC seconds (the minimizing
                  at the end comes on top)
  --cmd ARGS      run one command line (fio's options, without the output
                  format) under both tools and print the comparison
"""
import argparse
import concurrent.futures
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 60
DIRS = ("read", "write", "trim")
ENGINES = ["psync", "sync", "pvsync2", "libaio", "io_uring", "mmap", "posixaio"]
QUEUED = {"libaio", "io_uring", "posixaio"}
RWS = ["read", "write", "randread", "randwrite", "rw", "randrw", "readwrite"]
K = 1024
M = 1024 * 1024


def progress(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- generator

def fmt_size(n):
    if n % M == 0:
        return f"{n // M}m"
    if n % K == 0:
        return f"{n // K}k"
    return str(n)


def partition(rng, total, k):
    cuts = sorted(rng.sample(range(1, total), k - 1))
    return [b - a for a, b in zip([0] + cuts, cuts + [total])]


def draw_once(rng):
    """One command line as a list of (key, value) pairs (value None: a bare
    flag), and an estimate of its cost in seconds of I/O."""
    o = []
    engine = rng.choice(ENGINES)
    o.append(("ioengine", engine))
    if engine in QUEUED and rng.random() < 0.85:
        o.append(("iodepth", rng.randint(1, 16)))
    direct = engine in ("libaio", "io_uring") and rng.random() < 0.4
    if direct:
        o.append(("direct", 1))
    unit = 4096 if direct else rng.choice([512, 512, 1024, 4096])

    rw = rng.choice(RWS)
    is_rand = rw.startswith("rand")
    mix = rw in ("rw", "randrw", "readwrite")
    writes = rw in ("write", "randwrite") or mix
    suffix = ""
    if not is_rand and rng.random() < 0.15:
        suffix = ":" + rng.choice(["4k", "8k", "16k", "8k", "-4k", "-8k"])
    elif is_rand and rng.random() < 0.15:
        suffix = f":{rng.randint(1, 16)}"
    o.append(("rw", rw + suffix))
    if mix and rng.random() < 0.8:
        o.append(("rwmixread", rng.choice([0, 100, rng.randint(1, 99), rng.randint(1, 99)])))

    sizes = [s for s in (512, 1 * K, 2 * K, 4 * K, 8 * K, 16 * K, 32 * K, 64 * K) if s % unit == 0]
    mode = rng.choices(["bs", "bs2", "bsrange", "bssplit"], weights=[55, 10, 18, 17])[0]
    if mode == "bs":
        b = rng.choice(sizes)
        if not direct and rng.random() < 0.1:
            b = rng.choice([s for s in (1536, 3 * K, 6 * K, 12 * K) if s % unit == 0] or [b])
        o.append(("bs", fmt_size(b)))
        minbs = maxbs = b
    elif mode == "bs2":
        r, w = rng.choice(sizes), rng.choice(sizes)
        o.append(("bs", f"{fmt_size(r)},{fmt_size(w)}"))
        minbs, maxbs = min(r, w), max(r, w)
    elif mode == "bsrange":
        lo = rng.choice(sizes[:4])
        if not direct and rng.random() < 0.1:
            lo = rng.choice([s for s in (1536, 3 * K, 6 * K) if s % unit == 0] or [lo])
        hi = min(64 * K, lo * rng.choice([2, 4, 8, 16]))
        o.append(("bsrange", f"{fmt_size(lo)}-{fmt_size(hi)}"))
        minbs, maxbs = lo, hi
    else:
        k = rng.randint(2, 3)
        chosen = rng.sample(sizes, k)
        pcts = partition(rng, 100, k)
        parts = [f"{fmt_size(s)}/{p}" for s, p in zip(chosen, pcts)]
        if rng.random() < 0.15:
            parts[-1] = fmt_size(chosen[-1])
        o.append(("bssplit", ":".join(parts)))
        minbs, maxbs = min(chosen), max(chosen)

    r = rng.random()
    if r < 0.5:
        o.append(("filename", "f"))
        nfiles = 1
        if rng.random() < 0.1:
            o.append(("nrfiles", rng.randint(2, 4)))
    else:
        nfiles = rng.randint(1, 4)
        if nfiles > 1 or rng.random() < 0.5:
            o.append(("nrfiles", nfiles))

    raw = int(math.exp(rng.uniform(math.log(64 * K), math.log(2 * M))))
    if direct:
        q = 4 * K * nfiles
    else:
        q = rng.choice([512, unit * nfiles, maxbs * nfiles, maxbs * nfiles])
    size = max(q, raw // q * q, maxbs)
    o.append(("size", fmt_size(size)))

    if rng.random() < 0.25:
        off = rng.choice([unit, 4 * K, 8 * K, 64 * K, 100 * K, 1 * M])
        off = max(unit, off // unit * unit)
        o.append(("offset", fmt_size(off)))
    loops = 1
    if rng.random() < 0.35:
        loops = rng.randint(1, 3)
        o.append(("loops", loops))
    number_ios = None
    if rng.random() < 0.12:
        number_ios = rng.randint(1, 300)
        o.append(("number_ios", number_ios))
    io_size = None
    if rng.random() < 0.12:
        io_size = max(unit, int(size * rng.choice([0.25, 0.5, 1.5, 2, 3])) // unit * unit)
        o.append(("io_size", fmt_size(io_size)))

    verify = False
    if rw in ("write", "randwrite") and rng.random() < 0.35:
        verify = True
        o.append(("verify", rng.choice(["crc32c", "md5", "meta"])))
        do_verify = 1
        if rng.random() < 0.3:
            do_verify = rng.choice([0, 1])
            o.append(("do_verify", do_verify))
        if do_verify and rng.random() < 0.3:
            o.append(("verify_backlog", rng.randint(1, 64)))
    sync_every = None
    if writes and rng.random() < 0.25:
        sync_every = rng.randint(1, 64)
        o.append((rng.choice(["fsync", "fdatasync"]), sync_every))

    if is_rand:
        if rng.random() < 0.35:
            k = rng.randint(2, 4)
            zoned = "zoned:" + ":".join(
                f"{a}/{s}" for a, s in zip(partition(rng, 100, k), partition(rng, 100, k)))
            o.append(("random_distribution", rng.choice(
                ["random", "zipf:1.2", "pareto:0.5", "normal:10", "zipf:0.8:0.25",
                 "normal:5:0.5", zoned])))
        if rng.random() < 0.2:
            o.append(("norandommap", None))
        if rng.random() < 0.15:
            pr = str(rng.randint(0, 100))
            if rng.random() < 0.3:
                pr += f",{rng.randint(0, 100)}"
            o.append(("percentage_random", pr))

    if rng.random() < 0.12:
        region = size // nfiles
        zr = region // rng.choice([2, 4, 8]) // maxbs * maxbs
        if zr >= maxbs:
            zs = max(maxbs, zr // rng.choice([1, 2, 4]) // maxbs * maxbs)
            o.append(("zonemode", "strided"))
            o.append(("zonesize", fmt_size(zs)))
            if rng.random() < 0.8:
                o.append(("zonerange", fmt_size(zr)))
            if rng.random() < 0.2:
                o.append(("zoneskip", fmt_size(max(maxbs, zr // 2 // maxbs * maxbs))))

    if rng.random() < 0.3:
        o.append(("fallocate", rng.choice(["native", "posix", "keep", "truncate", "none", "0", "1"])))
    if rng.random() < 0.15:
        o.append(("overwrite", rng.choice([0, 1])))
    o.append(("randseed", rng.randint(0, 2 ** 31)))

    total = (io_size or size) * loops
    ios = total / minbs
    if number_ios:
        ios = min(ios, number_ios * loops)
    if verify:
        ios *= 2
    per_io = 60e-6 if direct else 8e-6
    if engine == "posixaio":
        per_io *= 3
    syncs = (ios / sync_every) if sync_every else 0
    return o, ios * per_io + syncs * 1.5e-3, ios


def draw_case(rng):
    for _ in range(200):
        opts, cost, ios = draw_once(rng)
        if cost <= 0.3 and ios <= 20000:
            return opts
    return opts


def to_args(opts):
    args = ["--name=j"]
    for k, v in opts:
        args.append(f"--{k}" if v is None else f"--{k}={v}")
    return args


def parse_args_line(args):
    """Command-line words back into (key, value) pairs (--name dropped)."""
    opts = []
    for a in args:
        a = a.lstrip("-")
        k, eq, v = a.partition("=")
        if k in ("name", "output-format"):
            continue
        opts.append((k, v if eq else None))
    return opts


def features(opts):
    """What a case is made of, for grouping: key=value for the categorical
    options, the key alone for the numeric ones."""
    out = set()
    for k, v in opts:
        if k == "randseed":
            continue
        if k == "rw":
            base, _, suf = v.partition(":")
            out.add(f"rw={base}")
            if suf:
                out.add("rw:-N" if suf.startswith("-") else "rw:N")
        elif k == "random_distribution":
            out.add(f"random_distribution={v.split(':')[0]}")
        elif k in ("ioengine", "verify", "fallocate", "overwrite", "direct", "zonemode", "do_verify"):
            out.add(f"{k}={v}")
        elif k == "rwmixread":
            out.add("rwmixread=" + (str(v) if str(v) in ("0", "100") else "mixed"))
        else:
            out.add(k)
    return out


# ---------------------------------------------------------------- running

def tagged_pids(tag):
    """Processes whose environment holds FIO_DIFF_TAG=tag: the tool started
    for one run and every process it forked (fio's job processes call
    setsid(), so they leave the process group, and outlive a killed parent)."""
    want = f"FIO_DIFF_TAG={tag}".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if want in f.read().split(b"\0"):
                    pids.append(int(name))
        except OSError:
            pass
    return pids


def kill_tagged(tag):
    for pid in tagged_pids(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def run_tool(argv, timeout=TIMEOUT):
    d = tempfile.mkdtemp(prefix="fio_diff.")
    tag = os.path.basename(d)
    env = dict(os.environ, FIO_DIFF_TAG=tag)
    t0 = time.monotonic()
    try:
        p = subprocess.Popen(argv, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        timed_out = False
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_tagged(tag)
            try:
                out, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # a pipe still held open
                kill_tagged(tag)
                p.kill()
                out, err = b"", b""
                p.wait()
        kill_tagged(tag)  # a forked process left behind by a tool that exited
        secs = time.monotonic() - t0
        files = {}
        for base, _, names in os.walk(d):
            for n in names:
                path = os.path.join(base, n)
                try:
                    files[os.path.relpath(path, d)] = os.lstat(path).st_size
                except OSError:
                    pass
    finally:
        shutil.rmtree(d, ignore_errors=True)
    out = out.decode(errors="replace")
    err = err.decode(errors="replace")
    doc = None
    i = out.find("{")
    if i >= 0:
        try:
            doc, _ = json.JSONDecoder().raw_decode(out[i:])
            if not isinstance(doc, dict) or "jobs" not in doc:
                doc = None
        except ValueError:
            doc = None
    err_lines = [line for line in err.splitlines() if line.strip()]
    out_lines = [line for line in out[:i if i >= 0 else len(out)].splitlines() if line.strip()]
    return {
        "rc": p.returncode,
        "timed_out": timed_out,
        "secs": round(secs, 3),
        "json": doc,
        "stderr1": (err_lines or out_lines or [""])[0][:300],
        "files": files,
        # fio's worker died of a signal though fio itself exited ("fio:
        # pid=N, got signal=11"): its figures stop wherever it died.
        "worker_signal": next((int(m) for m in re.findall(r"got signal=(\d+)", err + out)), 0),
    }


def figures(res, mixed):
    """The compared figures of one tool's result."""
    doc = res["json"]
    f = {"rc": res["rc"], "jobs": len(doc["jobs"]),
         "error": [j.get("error", 0) for j in doc["jobs"]],
         "files": dict(sorted(res["files"].items()))}
    for d in DIRS:
        f[f"{d}.total_ios"] = sum(j.get(d, {}).get("total_ios", 0) for j in doc["jobs"])
        f[f"{d}.io_bytes"] = sum(j.get(d, {}).get("io_bytes", 0) for j in doc["jobs"])
    f["sync.N"] = sum(j.get("sync", {}).get("lat_ns", {}).get("N", 0) for j in doc["jobs"])
    if mixed:
        f["rw.total_ios"] = f.pop("read.total_ios") + f.pop("write.total_ios")
        f["rw.io_bytes"] = f.pop("read.io_bytes") + f.pop("write.io_bytes")
        del f["sync.N"]
    return f


def is_mixed(opts):
    d = dict(opts)
    base = str(d.get("rw", "read")).split(":")[0]
    if base not in ("rw", "readwrite", "randrw"):
        return False
    mix = int(d.get("rwmixread", 50))
    return 0 < mix < 100


# ------------------------------------------------------- explained differences

def _opt(opts, key):
    """The option's value ("" for a bare flag), None when it is not given."""
    for k, v in opts:
        if k == key:
            return "" if v is None else v
    return None


def _variable_bs(opts):
    bs = _opt(opts, "bs")
    return (_opt(opts, "bsrange") is not None or _opt(opts, "bssplit") is not None
            or (bs is not None and "," in str(bs) and is_mixed(opts)))


def _random_repeats(opts):
    """Random offsets that may repeat a block (no random map, wrapping
    zones), or that leave the map for a sequential run: which blocks are
    hit is RNG-dependent."""
    rw = str(_opt(opts, "rw")).split(":")[0]
    if not rw.startswith("rand"):
        return False
    dist = _opt(opts, "random_distribution")
    return (_opt(opts, "norandommap") is not None or (dist is not None and dist != "random")
            or _opt(opts, "percentage_random") is not None or ":" in str(_opt(opts, "rw"))
            or _wrapping_zones(opts))


def _grows_as_written(opts):
    rw = str(_opt(opts, "rw")).split(":")[0]
    return (rw in ("write", "randwrite") and str(_opt(opts, "overwrite")) != "1"
            and str(_opt(opts, "fallocate")) in ("none", "0", "keep"))


def _random_write_short(opts, A, B):
    """Random writes into files that grow as written, where neither tool
    wrote any file's last block: the highest block written, so each file's
    size, is a draw of each tool's own RNG."""
    rw = str(_opt(opts, "rw")).split(":")[0]
    if rw != "randwrite" or not _grows_as_written(opts):
        return False
    if sorted(A["files"]) != sorted(B["files"]):
        return False
    nfiles = max(1, int(_opt(opts, "nrfiles") or 1))
    end = _size(_opt(opts, "offset") or 0) + _size(_opt(opts, "size")) // nfiles
    data = [k for k in A["files"] if not k.endswith("verify.state")]
    # io_size short of size: the job cannot write every block, so whether
    # the last block is among those written is a draw too.
    io_size = _size(_opt(opts, "io_size") or 0)
    short = 0 < io_size < _size(_opt(opts, "size"))
    # (A file neither tool wrote, or both ended alike, needs no draw.)
    return all(A["files"][k] == B["files"][k]
               or all(0 < F["files"][k] < end or (short and F["files"][k] == end) for F in (A, B))
               for k in data)


def _in_flight_stop(o, f, A, B):
    """fio's exceeds_number_ios (backend.c) counts the I/Os queued and in
    flight, syncs and verify reads among them: fio stops up to iodepth I/Os
    before iolab, never after. Reads only as the read-back of the writes."""
    if not (f.endswith("total_ios") or f.endswith("io_bytes")):
        return False
    if f.startswith("read.") and not (
            _opt(o, "verify") is not None
            and A[f] == A.get(f.replace("read.", "write."))
            and B[f] == B.get(f.replace("read.", "write."))):
        return False
    depth = int(_opt(o, "iodepth") or 1)
    unit = 1 if f.endswith("total_ios") else _bs_limits(o)
    # With a backlog, queued reads and writes both count, at every loop's
    # stop: fio itself gave 216 and 224 writes on one job (io_uring depth
    # 14, loops=2, verify_backlog=56), psync agrees exactly (198).
    return B[f] - depth * unit <= A[f] <= B[f] or (
        _opt(o, "verify_backlog") is not None
        and abs(A[f] - B[f]) <= 2 * depth * unit * _loops(o))


def _same_nonzero(A, B, field):
    return field in A and A[field] == B.get(field) and A[field] > 0


def _size(t):
    t = str(t).strip().lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    if t and t[-1] in mult:
        return int(t[:-1]) * mult[t[-1]]
    return int(t)


def _all_sizes(opts):
    """Every block size a job names (bsrange ends, bssplit sizes, bs)."""
    sizes = []
    for key in ("bsrange", "bssplit", "bs"):
        v = _opt(opts, key)
        if not v:
            continue
        for part in str(v).split(","):
            for entry in part.split(":"):
                sizes += [_size(x) for x in entry.split("/")[0].split("-") if x]
        break
    return sizes


def _bs_limits(opts):
    """The largest block size of a job's sizes (4k by default)."""
    sizes = _all_sizes(opts)
    return sizes and max(sizes) or 4096


def _loops(opts):
    return max(1, int(_opt(opts, "loops") or 1))


def _close_bytes(o, A, B, field):
    """Both nonzero and apart by less than a largest block a loop: fio (and
    iolab) issue the last I/O of a loop whole, its size drawn."""
    a, b = A.get(field, 0), B.get(field, 0)
    return a > 0 and b > 0 and abs(a - b) < _bs_limits(o) * _loops(o)


def _size_spread(opts):
    """The coefficient of variation (sd / mean) of a job's drawn sizes, the
    largest over its directions: fio's bssplit shares (entries without a
    share split what is left), a bsrange as uniform over its range."""
    worst = 0.0
    split = _opt(opts, "bssplit")
    if split:
        for part in str(split).split(","):
            entries = []
            for e in part.split(":"):
                bs, _, perc = e.partition("/")
                if bs:
                    entries.append((_size(bs), float(perc) if perc else None))
            if not entries:
                continue
            given = sum(p for _, p in entries if p is not None)
            free = [e for e in entries if e[1] is None]
            rest = max(0.0, 100.0 - given) / len(free) if free else 0.0
            w = [(bs, p if p is not None else rest) for bs, p in entries]
            total = sum(p for _, p in w) or 1.0
            mean = sum(bs * p for bs, p in w) / total
            var = sum(p * (bs - mean) ** 2 for bs, p in w) / total
            worst = max(worst, var ** 0.5 / mean)
        return worst
    spec = _opt(opts, "bsrange") or _opt(opts, "bs") or ""
    for part in str(spec).split(","):
        lo, _, hi = part.partition("-")
        if not lo:
            continue
        lo, hi = _size(lo), _size(hi or lo)
        worst = max(worst, (hi - lo) / (12 ** 0.5 * (lo + hi) / 2))
    if "," in str(spec):
        # Per-direction sizes in a mix: the two sizes drawn by the mix.
        a, b = (_size(x.split("-")[0]) for x in str(spec).split(",")[:2])
        worst = max(worst, abs(a - b) / (a + b))
    return worst


def _close_count(a, b, opts):
    """Counts of randomly sized I/Os of about the same bytes: within four
    standard deviations of the difference of two counts (a renewal count's
    sd is the sizes' coefficient of variation times its square root), plus
    the tails: where a file's room left is less than the largest size, both
    tools draw among the sizes that fit, up to largest / smallest small I/Os
    a file and loop more or fewer."""
    n = max(a, b)
    spread = 4 * 2 ** 0.5 * max(_size_spread(opts), 0.7) * n ** 0.5 + 2
    files = max(1, int(_opt(opts, "nrfiles") or 1))
    smallest = min(_all_sizes(opts) or [4096])
    tails = files * _loops(opts) * max(0, _bs_limits(opts) // max(1, smallest) - 1)
    return abs(a - b) <= spread + tails


def _limit(opts):
    """The most bytes a job may issue: io_size (else size) a loop, plus a
    largest block a loop (the last I/O whole)."""
    size = _size(_opt(opts, "io_size") or _opt(opts, "size") or 0)
    return (size + _bs_limits(opts)) * _loops(opts)


def _number_ios_or_end(o, f, A, B):
    """number_ios with drawn sizes over sequential files, or random ones with
    the map: each tool stops at number_ios or at the end of the files (every
    block drawn once), whichever its own draws reach first (a verify's reads
    are the writes read back)."""
    rw = str(_opt(o, "rw")).split(":")[0]
    # Random with the map covers each block once: its end is every block
    # that fits, short of each file's tail under the smallest size.
    mapped = rw in ("randread", "randwrite") and not _random_repeats(o)
    if not (_variable_bs(o) and _opt(o, "number_ios") is not None and _io_field(f)
            and f != "sync.N" and (rw in ("read", "write") or mapped)):
        return False
    d = "write" if rw.endswith("write") else "read"
    n = int(_opt(o, "number_ios")) * _loops(o)
    size = _size(_opt(o, "size") or 0)
    if mapped:
        nfiles = max(1, int(_opt(o, "nrfiles") or 1))
        size -= nfiles * ((size // nfiles) % min(_all_sizes(o)))
    size *= _loops(o)
    back = lambda T: d == "read" or T.get("read.total_ios", 0) in (0, T.get("write.total_ios"))
    # A verify backlog's reads count toward number_ios too: the writes and
    # reads together pass it by less than a batch.
    backlog = _size(_opt(o, "verify_backlog") or 0) if d == "write" else 0
    both = lambda T: T.get("write.total_ios", 0) + T.get("read.total_ios", 0)
    stop = lambda T: T.get(d + ".total_ios", 0) <= n and (
        T.get(d + ".total_ios") == n or size <= T.get(d + ".io_bytes", 0) <= _limit(o)
        or (backlog and n <= both(T) <= n + backlog))
    return all(stop(T) and back(T) for T in (A, B))


def _ends_at_random(opts):
    """Jobs whose end is a draw: a random job's sequential run (randX:N,
    percentage_random) that reaches the file's end with less than a block
    left, or a zipf/pareto/normal draw in the last, partial block: fio ends
    the file there."""
    rw = str(_opt(opts, "rw"))
    if not rw.startswith("rand"):
        # Holes (rw=read:8k) with drawn sizes or a drawn mix: whether a
        # pass lands in the last partial block (the end) or past it (a
        # wrap to the start) is a draw.
        # A mixed job's directions go through the file apart: it ends when
        # the drawn direction's next block does not fit, a draw too.
        return is_mixed(opts) or (":" in rw and _variable_bs(opts))
    dist = _opt(opts, "random_distribution")
    return (":" in rw or _opt(opts, "percentage_random") is not None
            or _mixed_one_never_fits(opts)
            or (dist is not None and dist.split(":")[0] in ("zipf", "pareto", "normal"))
            or _partial_last_zone(opts))


def _mixed_one_never_fits(opts):
    """A mix whose one direction's block is larger than each file's region:
    both tools end the job at the first I/O of that direction drawn, so the
    I/Os of the other before it are a draw of each tool's own RNG (randrw
    bs=64k,8k over two 53.5k regions: seeds 1-5 gave fio 3, 0, 3, 0, 0
    writes and iolab 0, 1, 1, 0, 2, neither tool a read)."""
    bs = str(_opt(opts, "bs") or "")
    if not is_mixed(opts) or "," not in bs or _opt(opts, "filesize") is not None:
        return False
    sizes = [_size(x) for x in bs.split(",")[:2] if x]
    region = _size(_opt(opts, "size") or 0) // max(1, int(_opt(opts, "nrfiles") or 1))
    return len(sizes) == 2 and min(sizes) <= region < max(sizes)


def _partial_last_zone(opts):
    """Strided zones whose last zone in a file is shorter than zonerange:
    fio draws a random offset over the whole range (its last_block), and
    one past the file's end ends the file's loop, so the I/Os done there
    are RNG-dependent (iolab does the same with its own draws)."""
    if _opt(opts, "zonemode") != "strided":
        return False
    zsize = _size(_opt(opts, "zonesize"))
    zrange = _size(_opt(opts, "zonerange") or zsize)
    stride = zrange + _size(_opt(opts, "zoneskip") or 0)
    nfiles = int(_opt(opts, "nrfiles") or 1)
    length = _size(_opt(opts, "size")) // nfiles
    if length <= 0 or stride <= 0:
        return False
    last = (length - 1) // stride * stride
    return length - last < zrange


def _holes_drawn_sizes(opts):
    """Sequential holes (rw=write:-4k) with drawn sizes: the next offset is
    the last I/O's end plus the hole, so where the I/Os go follows the draws."""
    rw = str(_opt(opts, "rw"))
    return not rw.startswith("rand") and ":" in rw and _variable_bs(opts)


def _zones_drawn_sizes(opts):
    """Sequential strided zones with drawn sizes: a zone ends once its bytes
    reach zonesize, so where each zone ends, and whether a file's last zone
    runs past its end (ending the file), follows the draws."""
    rw = str(_opt(opts, "rw"))
    return (not rw.startswith("rand") and _opt(opts, "zonemode") == "strided"
            and _variable_bs(opts))


def _partial_last_block(opts):
    """A file's region is no multiple of the largest size: a random draw of
    its last, partial block ends the file (both tools)."""
    per_file = _size(_opt(opts, "size") or 0) // max(1, int(_opt(opts, "nrfiles") or 1))
    return per_file % _bs_limits(opts) != 0


def _io_field(f):
    return f.endswith("total_ios") or f.endswith("io_bytes") or f == "sync.N"


def _per_dir_map(opts):
    """A random job with the map whose directions' smallest sizes differ
    (bs=4k,16k): fio marks its map in the direction's block units over a
    map of the smallest's and ends the job early."""
    rw = str(_opt(opts, "rw")).split(":")[0]
    bs = str(_opt(opts, "bs") or "")
    if not rw.startswith("rand") or "," not in bs or _opt(opts, "norandommap") is not None:
        return False
    dist = _opt(opts, "random_distribution")
    if dist not in (None, "random"):
        return False
    r, w = (_size(x) for x in bs.split(",")[:2])
    return r != w


def _fio_false_verify(o, f, A, B):
    """fio's verify failed (EILSEQ, exit 1) and stopped at that block, where
    iolab's passed: the fields that failure moves (its reads fewer)."""
    failed = A.get("rc") == 1 and B.get("rc") == 0 and 84 in (A.get("error") or []) \
        and not any(B.get("error") or [])
    # With verify_backlog the failure comes while writing: fio writes no more.
    backlog = _opt(o, "verify_backlog") is not None and f.startswith("write.")
    # Its log keeps every write, the rewritten ones twice: it may read back
    # more than iolab, which reads each block's newest write once, but never
    # more than it wrote.
    kept = f.startswith("read.") and A.get(f, 0) <= A.get(f.replace("read.", "write."), 0)
    moved = f in ("rc", "error") or kept or (
        (f.startswith("read.") or backlog) and A.get(f, 0) <= B.get(f, 0))
    return failed and moved and _opt(o, "verify") is not None


def _either_false_verify(o, f, A, B):
    """One tool's verify failed (EILSEQ) and the other's passed: the fields
    that failure moves (its reads fewer, or none of its files' state)."""
    def one(X, Y):
        return X.get("rc") == 1 and Y.get("rc") == 0 and 84 in (X.get("error") or []) \
            and not any(Y.get("error") or [])
    moved = f in ("rc", "error", "files") or f.startswith("read.")
    return (one(A, B) or one(B, A)) and moved and _opt(o, "verify") is not None


def _overlap_in_flight(o):
    """Writes that overlap the ones before them (rw=write:-N: holes going
    back, or random writes whose blocks repeat) with several in flight on a
    queued engine: which lands last is the device's order."""
    rw = str(_opt(o, "rw") or "")
    repeats = "write" in rw.split(":")[0] and _random_repeats(o)
    return (":-" in rw or repeats) and _opt(o, "ioengine") in ("io_uring", "libaio", "posixaio") \
        and int(_opt(o, "iodepth") or 1) > 1


def _sync_every(o):
    """A write job's fsync=N or fdatasync=N (the larger; 0 for none)."""
    return max(int(_opt(o, "fsync") or 0), int(_opt(o, "fdatasync") or 0))


def _seq_in_random(o):
    """Random writes with the map that also run sequentially (randX:N,
    percentage_random): a sequential stretch may write a block again.
    Or in strided zones that skip, hold less than the job writes or end
    short in a file: the zones wrap and write their blocks again (posixaio randwrite of 9 blocks
    in 5 zones: fio 'bad header numberio 8, wanted 3' at the 5 rewritten,
    exit 1 after reading back all 9; iolab reads back the 5, newest first)."""
    rw = str(_opt(o, "rw"))
    if rw.split(":")[0] not in ("randwrite", "randrw") or _opt(o, "norandommap") is not None:
        return False
    return ":" in rw or _opt(o, "percentage_random") is not None or _wrapping_zones(o)


def _wrapping_zones(o):
    """Strided zones that skip, hold less than the job writes or end short
    in a file: random draws wrap to the zones before and hit a block again
    (psync 1k blocks, zonesize=2k zonerange=4k over 36k: blocks 0, 7, 10,
    17, 24 and 35 written three times or more in one pass, by either tool)."""
    return _opt(o, "zonemode") == "strided" and (
        _opt(o, "zoneskip") not in (None, "0")
        or _size(_opt(o, "zonerange") or 0) > _size(_opt(o, "zonesize") or 0)
        # a file's last zone shorter than zonerange: draws past the end
        # wrap to the zones before (posixaio 6k blocks in 30k zones over
        # 65k files: fio 'bad header numberio 20, wanted 15')
        or _partial_last_zone(o))


# (name, why, predicate(opts, field, fio's figures, iolab's figures)); each
# rule needs the figures that do not depend on the RNG to agree
EXPLAINED = [
    ("variable-bs-counts",
     "bsrange/bssplit (and per-direction bs in a mix): each tool draws the sizes with "
     "its own RNG, so with the same bytes the I/O counts (and the syncs every N "
     "writes) differ (docs/fio-compat.md, Differences: 'I/O counts differ slightly')",
     lambda o, f, A, B: _variable_bs(o) and (
         (f.endswith("total_ios") and _close_count(A[f], B[f], o)
          and _close_bytes(o, A, B, f.replace("total_ios", "io_bytes")))
         or (f == "sync.N" and _close_bytes(o, A, B, "write.io_bytes")
             and abs(A[f] - B[f]) <= abs(A.get("write.total_ios", 0) - B.get("write.total_ios", 0)) + 1))),
    ("variable-bs-last-io",
     "bsrange/bssplit: a loop ends once its bytes are issued, the last I/O whole, "
     "so the bytes pass size by up to a drawn size (docs/fio-compat.md, bsrange)",
     lambda o, f, A, B: _variable_bs(o) and f.endswith("io_bytes")
     and _close_bytes(o, A, B, f)),
    ("per-direction-bs-map",
     "random I/O with the map and a different smallest size per direction: fio 3.33 "
     "ends the job once its map (indexed in the wrong unit) says the end is free; "
     "iolab covers the region, or ends on a draw of its last, partial block; with "
     "io_size past size fio's short passes are followed by more (keep_running), up to "
     "io_size times loops (bs=4k,8k randwrite over 1008k: fio 51 writes a pass; with "
     "loops=2 io_size=2016k fio 292 writes, iolab 2 passes of 126) (docs/fio-compat.md, bs)",
     lambda o, f, A, B: _per_dir_map(o) and (f.endswith("io_bytes") or f.endswith("total_ios")
                                           or f == "sync.N")
     and (A.get(f.replace("total_ios", "io_bytes"), 0) <= B.get(f.replace("total_ios", "io_bytes"), 0)
          or _partial_last_block(o) or _more_passes(o, f, A))),
    ("queued-sync-pileup",
     "fsync/fdatasync with io_uring or posixaio: fio queues its syncs and asks for "
     "another at every I/O until one completes (and again after any read or write "
     "completes while the writes issued are still at the point), so its count "
     "follows the device's timing; iolab syncs once a point (docs/fio-compat.md, fsync)",
     lambda o, f, A, B: f == "sync.N" and _opt(o, "ioengine") in ("io_uring", "posixaio")
     and (1 <= B[f] <= A[f] or A[f] == B[f] == 0)),
    ("queued-sync-pileup-verify",
     "fsync/fdatasync with io_uring or posixaio over several files, verified: each of "
     "fio's piled-up syncs (queued-sync-pileup) takes a file's turn (io_u.c get_io_u "
     "-> set_io_u_file), so where its writes land, and which blocks of wrapping "
     "zones are written twice and read back once, follows the device's timing "
     "(io_uring depth 4, 4 files in 20k/44k strided zones, fsync=48: fio read back "
     "320, 321 and 320 of 322 writes in three runs, with 24, 22 and 24 syncs; psync "
     "and iolab read back all 322)",
     lambda o, f, A, B: f.startswith("read.") and _opt(o, "ioengine") in ("io_uring", "posixaio")
     and _sync_every(o) > 0 and int(_opt(o, "nrfiles") or 1) > 1
     and _opt(o, "verify") not in (None, "0", "null")
     and A.get("sync.N", 0) > B.get("sync.N", 0)
     and _same_nonzero(A, B, f.replace("read.", "write."))
     and 0 < A[f] <= A[f.replace("read.", "write.")]
     and 0 < B[f] <= B[f.replace("read.", "write.")]),
    ("variable-bs-sync-threshold",
     "fsync/fdatasync=N with drawn sizes on io_uring/posixaio: each tool syncs once "
     "its own drawn writes reach N, and fio's piled-up syncs multiply its count "
     "(io_uring bsrange=8k-64k over 368k, loops=2, fdatasync=19: fio drew 23 writes "
     "and made 8 syncs, iolab drew 18 and made none)",
     lambda o, f, A, B: f == "sync.N" and _variable_bs(o)
     and _opt(o, "ioengine") in ("io_uring", "posixaio")
     and all((T[f] > 0) == (T.get("write.total_ios", 0) >= _sync_every(o)) for T in (A, B))),
    ("number_ios-in-flight",
     "number_ios on io_uring/posixaio with fsync/fdatasync or verify_backlog: fio's "
     "exceeds_number_ios counts the I/Os queued and in flight, its piled-up syncs and "
     "queued verify reads among them, so it stops up to iodepth I/Os early, by the "
     "device's timing (io_uring depth 15, number_ios=19, fsync=12: fio 12 or 19 "
     "writes in three runs; 19 every run without fsync; libaio depth 6, number_ios=200, "
     "verify_backlog=5: fio 100 writes in three runs, 105 on io_uring, as iolab on "
     "both); iolab counts what completed "
     "and reads a due backlog back at once (docs/fio-compat.md, number_ios)",
     lambda o, f, A, B: _opt(o, "ioengine") in ("io_uring", "posixaio", "libaio")
     and _opt(o, "number_ios") is not None
     and (_opt(o, "fsync") is not None or _opt(o, "fdatasync") is not None
          or _opt(o, "verify_backlog") is not None)
     and _in_flight_stop(o, f, A, B)),
    ("ends-at-random",
     "a random job that ends on a draw (a sequential run reaching the end of a file "
     "whose size is no multiple of the block, or a skewed draw in its last partial "
     "block: fio ends the file there; iolab takes the last whole block; or a random "
     "offset drawn over a strided zone's range that the file ends inside): the I/Os "
     "done before are RNG-dependent (docs/fio-compat.md, random_distribution, zonerange)",
     lambda o, f, A, B: _ends_at_random(o) and _io_field(f)
     and (not f.endswith("io_bytes") or (0 <= A[f] <= _limit(o) and 0 <= B[f] <= _limit(o)))),
    ("verify-state-entries",
     "verify_state_save with sizes that vary: the state file lists up to iodepth "
     "completed writes, so its size follows the (RNG-dependent) write count",
     lambda o, f, A, B: f == "files" and _variable_bs(o)
     and {k: v for k, v in A[f].items() if not k.endswith("verify.state")}
     == {k: v for k, v in B[f].items() if not k.endswith("verify.state")}),
    ("random-repeats-backlog-number_ios",
     "number_ios with a verify backlog and random offsets that repeat (norandommap): "
     "a rewritten block leaves the log (iolog.c log_io_piece: io_hist_len--), which "
     "moves the backlog's batches, and number_ios counts their reads, so the writes "
     "done before it is reached are a draw, by up to a batch (psync bs=1536 over "
     "348k, loops=3, number_ios=126, verify_backlog=17: fio wrote 199 with its fixed "
     "seed and 191-193 in three runs with randrepeat=0, iolab 191-194 over seeds); "
     "so writes and reads split number_ios x loops differently, both reaching it by "
     "less than a batch (mmap bssplit=4k/68:16k, zoned distribution, loops=3, "
     "number_ios=259, verify_backlog=12: fio 431 writes and 348 reads, iolab 453 and "
     "334, of 777)",
     lambda o, f, A, B: (f.startswith("write.") or f.startswith("read.")) and _random_repeats(o)
     and _opt(o, "number_ios") is not None and _opt(o, "verify_backlog") is not None
     and ((f.startswith("write.") and _same_nonzero(A, B, "read.total_ios")
           and abs(A["write.total_ios"] - B["write.total_ios"]) <= _size(_opt(o, "verify_backlog")))
          or _backlog_number_ios_reached(o, A, B))),
    ("queued-backlog-rewrites",
     "a verify backlog on a queued engine over blocks written again and again "
     "(holes that wrap; sequential writes in strided zones over several files: fio's zone_bytes is the "
     "job's, so files whose turn never finds it full stay in their first zone and "
     "rewrite its blocks; or zones that wrap): a rewritten block leaves the log unread "
     "(iolog.c log_io_piece), and whether a batch reads it first is timing (a batch "
     "waits while the log's lowest block is a write in flight and starts only after a "
     "write completed last). io_uring 4k over 4 files of 166k, zonesize=16k, "
     "verify_backlog=5, 166 writes of 23 blocks: at depth 1 and 2 both tools read "
     "back 166; at depth 4 fio 88-113 over runs, iolab 148-156; at depth 8 fio 52, "
     "iolab 57. Holes that wrap at the file's end the same: io_uring depth 7, "
     "write:16k bs=1k over 1454k, verify_backlog=16, 1454 writes of 86 blocks: fio "
     "read back 598-668 over runs (after the wrap the log's lowest block is the write "
     "just issued, so its batches wait and rewrites drop what they did not read), "
     "iolab and psync 1454",
     lambda o, f, A, B: f.startswith("read.") and _queued_backlog_rewrites(o)
     and _same_nonzero(A, B, "write.total_ios")
     and 0 < A[f] <= A[f.replace("read.", "write.")]
     and 0 < B[f] <= B[f.replace("read.", "write.")]),
    ("queued-backlog-overwrite-pass",
     "a queued engine's random writes without the map, with a verify backlog and "
     "io_size past size: fio's do_io pass ends once the writes reach io_size or once "
     "writes and backlog reads together reach io_size + size, whichever comes first. "
     "How many reads the backlog makes in the pass is timing: a batch waits while the "
     "log's lowest offset is a write in flight (verify.c get_next_verify), and the next "
     "batch starts only if the last completion was no read. So where the pass ends "
     "differs (libaio depth 13, 8k over 1140k, io_size=3420k, verify_backlog=34: fio "
     "wrote 418-428 and read 198-243 over runs, iolab wrote 366-428 and read 195-259 "
     "over seeds; iolab's synchronous read-backs finish ahead of the writes queued "
     "before them, so its batches chain more often)",
     lambda o, f, A, B: _queued_backlog_overwrite(o, f, A, B)),
    ("variable-bs-number_ios",
     "number_ios with drawn sizes: the same count of randomly sized I/Os",
     lambda o, f, A, B: _variable_bs(o) and _opt(o, "number_ios") is not None
     and f.endswith("io_bytes") and _same_nonzero(A, B, f.replace("io_bytes", "total_ios"))),
    ("number_ios-or-end",
     "number_ios with drawn sizes over sequential files: each tool stops at "
     "number_ios or at the files' end, whichever its own draws reach first "
     "(bssplit=8k/7:64k/31:4k/62 over 692k, number_ios=37: fio drew sizes that "
     "filled the file in 34, iolab drew 37 smaller; over 2,000 I/Os both average "
     "22.4-22.5 KiB an I/O); with a verify backlog its reads count too (psync "
     "bsrange=4k-16k over 2032k, loops=3, number_ios=209, verify_backlog=56: fio "
     "315-319 writes over seeds, iolab 315-321, each read back, so writes and reads "
     "pass 627 by less than a batch)",
     lambda o, f, A, B: _number_ios_or_end(o, f, A, B)),
    ("random-repeats-files",
     "random offsets with repetition (norandommap, a distribution, percentage_random, "
     "randX:N): the highest block written, so the size of a file that grows as written, "
     "is RNG-dependent",
     lambda o, f, A, B: f == "files" and _random_repeats(o) and _grows_as_written(o)
     and sorted(A[f]) == sorted(B[f])),
    ("random-write-short-files",
     "random writes that leave every file's last block unwritten in both tools "
     "(io_size, number_ios, zones), or with io_size short of size in either: the "
     "highest block written, so the size of a "
     "file that grows as written, is a draw of each tool's own RNG",
     lambda o, f, A, B: f == "files" and _random_write_short(o, A, B)),
    ("zone-end-files",
     "random writes in strided zones whose last zone in a file is shorter than "
     "zonerange, into files that grow as written: a draw past a file's end ends that "
     "file (io_u.c get_io_u marks it done), so whether and how far each file is "
     "written is a draw (fio 3.33 draws its offsets from a seed fixed under "
     "randrepeat=1, init.c td_fill_rand_seeds_internal, whatever randseed says: "
     "64k, 0, 64k for every seed over three 64k files; iolab's draws follow randseed: "
     "16k, 0, 32k or 64k, 64k, 64k)",
     lambda o, f, A, B: f == "files" and _partial_last_zone(o) and _grows_as_written(o)
     and sorted(A[f]) == sorted(B[f])
     and all(F[f][k] <= _size(_opt(o, "offset") or 0)
             + _size(_opt(o, "size")) // max(1, int(_opt(o, "nrfiles") or 1))
             for F in (A, B) for k in F[f] if not k.endswith("verify.state"))),
    ("holes-drawn-sizes-files",
     "holes (rw=write:-4k) with bsrange/bssplit: each offset follows the last drawn "
     "size, so the highest block written, the size of a file that grows as written, "
     "is RNG-dependent (docs/fio-compat.md, Differences)",
     lambda o, f, A, B: f == "files" and _holes_drawn_sizes(o) and _grows_as_written(o)
     and sorted(A[f]) == sorted(B[f])),
    ("zones-drawn-sizes",
     "sequential zonemode=strided with bsrange/bssplit: a zone moves on once its "
     "bytes reach zonesize, so the zones' ends, and where a file's last zone runs "
     "past its end, follow each tool's drawn sizes (docs/fio-compat.md, Differences)",
     lambda o, f, A, B: _zones_drawn_sizes(o) and (
         (_io_field(f) and (not f.endswith("io_bytes")
                            or (0 < A[f] <= _limit(o) and 0 < B[f] <= _limit(o))))
         or (f == "files" and sorted(A[f]) == sorted(B[f])))),
    ("random-repeats-verify",
     "verify with random offsets that repeat: a rewritten block is read back once, "
     "so the read-back is the distinct blocks written, RNG-dependent (with drawn "
     "sizes the writes' bytes differ too, by less than a largest block a loop)",
     lambda o, f, A, B: f.startswith("read.") and _random_repeats(o)
     and _opt(o, "verify") is not None
     and (_same_nonzero(A, B, "write.io_bytes")
          or (_variable_bs(o) and (_close_bytes(o, A, B, "write.io_bytes")
                                   or _same_nonzero(A, B, "write.total_ios"))))
     and 0 < A[f] <= A[f.replace("read.", "write.")]
     and 0 < B[f] <= B[f.replace("read.", "write.")]),
    ("fio-mmap-zones-misplaced",
     "mmap with zonemode=strided: fio 3.33's mmap engine writes some blocks at the "
     "wrong offset (fio's own psync verify_only of the file fails the same way, "
     "'bad header offset 147456, wanted 0'; a file psync wrote passes fio's mmap "
     "verify_only), so its verify fails where iolab's, which wrote them in place, "
     "passes; with offset= past a small file it also writes fewer blocks than fio's "
     "own psync on the same job, which writes iolab's count; a failure in the first "
     "loop's read-back ends fio's job before the next loop's writes and syncs "
     "(fsync=8, loops=2: fio 2 syncs, iolab 4) (docs/fio-compat.md, Differences)",
     lambda o, f, A, B: _opt(o, "ioengine") == "mmap" and _opt(o, "zonemode") == "strided"
     and (_fio_false_verify(o, f, A, B) or (
         (f.startswith("write.") or f == "sync.N") and A.get(f, 0) <= B.get(f, 0)
         and _fio_false_verify(o, "rc", A, B)))),
    ("fio-verify-overwritten",
     "random writes with the map and sequential stretches (randX:N, "
     "percentage_random) or wrapping strided zones that write a block twice: fio's "
     "log keeps the older write "
     "and its verify expects it ('bad header numberio 10, wanted 9'), although the "
     "newer one is on disk as it should be; iolab checks the newest write "
     "(docs/fio-compat.md, Differences)",
     lambda o, f, A, B: _seq_in_random(o) and _fio_false_verify(o, f, A, B)),
    ("overlapping-writes-in-flight",
     "writes that overlap the ones before them (rw=write:-4k) with several in "
     "flight on a queued engine: when an older write lands after a newer one it "
     "overwrites the newer block's header, so verify fails in either tool by the "
     "device's timing (fio 3.33 io_uring iodepth=3 direct, bs=32k write:-4k: 2 "
     "failures in 10 runs; iolab the same at fio's depth); and random writes whose "
     "blocks repeat (norandommap, a distribution): io_uring depth 8, bs=32k, zipf:1.2 "
     "over four 172k files, verify_backlog=24: iolab's verify failed once in the "
     "fuzz ('bad magic header' where two writes to the same 32k overlapped) and "
     "passed in three runs again; fio's HOWTO, serialize_overlap: such races 'can "
     "cause verification to fail erratically' (docs/fio-compat.md, Differences)",
     lambda o, f, A, B: _overlap_in_flight(o) and _either_false_verify(o, f, A, B)),
    ("queued-sync-loops",
     "fsync/fdatasync with libaio/io_uring over several passes (loops>1, or io_size "
     "past size): fio decides a sync from the completions it has reaped "
     "(last_was_sync is set and cleared in io_completed), which it reaps only when "
     "its queue is full, a libaio fsync finds I/Os queued (engines/libaio.c: "
     "FIO_Q_BUSY) or a pass drains, and each pass starts with last_was_sync "
     "cleared; so a sync due at a pass's end or start is made or not by where the "
     "reaps fell (libaio depth 8, 4 files of 40k, bs=32k, io_size=240k, "
     "fdatasync=2: fio 2 syncs in 6 of 6 runs, iolab 1) (docs/fio-compat.md, fsync)",
     lambda o, f, A, B: f == "sync.N" and _opt(o, "ioengine") in ("libaio", "io_uring")
     and _passes(o) > 1 and abs(A[f] - B[f]) <= _passes(o) - 1),
]


def _more_passes(o, f, A):
    """fio's bytes (of field f's direction) within io_size times loops, where
    io_size is past size: fio's keep_running starts a pass over again."""
    size, io_size = _size(_opt(o, "size") or 0), _size(_opt(o, "io_size") or 0)
    bytes_field = f.replace("total_ios", "io_bytes") if f != "sync.N" else "write.io_bytes"
    return io_size > size and A.get(bytes_field, 0) <= io_size * _loops(o)


def _backlog_number_ios_reached(o, A, B):
    """Both tools' writes and reads together reach number_ios x loops, and
    pass it by less than a backlog batch."""
    n = int(_opt(o, "number_ios")) * _loops(o)
    batch = _size(_opt(o, "verify_backlog"))
    both = lambda T: T.get("write.total_ios", 0) + T.get("read.total_ios", 0)
    return all(n <= both(T) <= n + batch for T in (A, B))


def _queued_backlog_rewrites(o):
    """Rule queued-backlog-rewrites: a write job with a verify backlog on a
    queued engine at depth 3 or more, whose strided zones make it write
    blocks again (several files share fio's zone_bytes, or zones wrap)."""
    full = str(_opt(o, "rw"))
    rw = full.split(":")[0]
    nfiles = int(_opt(o, "nrfiles") or 1)
    zones = _opt(o, "zonemode") == "strided" and (nfiles > 1 or _wrapping_zones(o))
    # Sequential holes (rw=write:16k) wrap at the file's end to its start.
    holes = ":" in full and not rw.startswith("rand")
    return (_opt(o, "ioengine") in QUEUED and int(_opt(o, "iodepth") or 1) >= 3
            and "write" in rw and _opt(o, "verify_backlog") is not None
            and (zones or holes))


def _queued_backlog_overwrite(o, f, A, B):
    """Rule queued-backlog-overwrite-pass: both tools' writes within
    io_size, and writes plus reads within the pass's io_size + size (plus a
    queue) and the read-back after it, with reads in both."""
    rw = str(_opt(o, "rw")).split(":")[0]
    if (_opt(o, "ioengine") not in QUEUED or rw != "randwrite"
            or _opt(o, "norandommap") is None or _opt(o, "verify_backlog") is None
            or str(_opt(o, "verify") or "none") == "none" or _opt(o, "number_ios") is not None
            or not (f.startswith("write.") or f.startswith("read."))):
        return False
    size, io_size = _size(_opt(o, "size") or 0), _size(_opt(o, "io_size") or 0)
    if not size or io_size <= size:
        return False
    bs, depth = min(_all_sizes(o) or [4096]), int(_opt(o, "iodepth") or 1)
    writes_most = -(-io_size * _loops(o) // bs)
    # The pass's budget, a queue, and the final read-back of the log
    # (at most one entry a block of the region).
    both_most = -(-(io_size + size) * _loops(o) // bs) + depth + -(-size * _loops(o) // bs)
    for X in (A, B):
        w, r = X.get("write.total_ios", 0), X.get("read.total_ios", 0)
        if not (0 < w <= writes_most and r > 0 and w + r <= both_most):
            return False
    return True


def _passes(o):
    """The passes a job makes: loops, times io_size over size when io_size
    is larger (fio's keep_running starts the files over for it)."""
    loops = int(_opt(o, "loops") or 1)
    size, io_size = _size(_opt(o, "size") or 0), _size(_opt(o, "io_size") or 0)
    return loops * (max(1, -(-io_size // size)) if size and io_size > size else 1)


def _few_blocks(o, most=4):
    """Each file's region holds at most `most` of the smallest blocks."""
    per_file = _size(_opt(o, "size") or 0) // max(1, int(_opt(o, "nrfiles") or 1))
    return 0 < per_file <= most * min(_all_sizes(o) or [4096])


# (name, why, predicate(opts, fio's result)): fio's own failures, where iolab
# runs the job; each seen with fio alone, outside the fuzzer
FIO_FAILURES = [
    ("fio-mmap-backlog-abort",
     "mmap with verify_backlog and zones or holes: fio 3.33 dies of signal 6 at its "
     "exit ('fio: file hash not empty on exit', then glibc's 'corrupted "
     "double-linked list'), or its worker of signal 11 (randwrite:10 bsrange=3k-6k "
     "norandommap in 264k zones: rc 0 with no JSON for the job)",
     lambda o, r: (r["rc"] == -6 or r.get("worker_signal") == 11) and _opt(o, "ioengine") == "mmap"
     and _opt(o, "verify_backlog") is not None
     and (_opt(o, "zonemode") == "strided" or ":" in str(_opt(o, "rw")))),
    ("fio-verify-overwritten-crash",
     "random writes that write a block twice (wrapping strided zones, sequential "
     "stretches): fio 3.33's verify fails on the older write its log keeps (see "
     "fio-verify-overwritten) and its worker then dies of signal 11 ('bad header "
     "numberio 20, wanted 15', 'fio: pid=N, got signal=11'; posixaio depth 9, 6k "
     "blocks in 30k zones over 65k files, 3 of 3 runs), before saving its verify state",
     lambda o, r: r.get("worker_signal") == 11 and _seq_in_random(o)
     and _opt(o, "verify") not in (None, "0", "null")),
    ("fio-skewed-few-blocks-hang",
     "random_distribution=normal/zipf/pareto over files of at most 4 blocks: fio "
     "3.33 never ends (pvsync2 randread bs=64k size=128k normal:10, with or without "
     "norandommap: still running after 60 s); iolab ends after size bytes",
     lambda o, r: r["timed_out"] and _few_blocks(o)
     and str(_opt(o, "random_distribution") or "").split(":")[0] in
     ("normal", "zipf", "pareto")),
]


def compare(opts, fio, iolab):
    """(class, differences, figures): each difference {field, fio, iolab,
    explained}; figures {fio, iolab} when both tools printed JSON."""
    fio_ok = (fio["json"] is not None and not fio["timed_out"] and fio["rc"] >= 0
              and not fio.get("worker_signal"))
    iol_ok = iolab["json"] is not None and not iolab["timed_out"] and iolab["rc"] >= 0
    if not fio_ok and not iol_ok:
        return "both-fail", [], None
    if not fio_ok:
        why = next((name for name, _, pred in FIO_FAILURES if _safe(pred, opts, fio)), None)
        if why and iol_ok:
            return "fio-fails-explained", [{"field": "fio", "fio": failure(fio),
                                            "iolab": "ran", "explained": why}], None
        return "fio-fails-only", [], None
    if not iol_ok:
        # fio runs no I/O and reports the job's error; iolab refuses the job.
        jobs = fio["json"]["jobs"]
        # (fio may print a JSON with no error and still exit 1: "blocksize
        # is larger than data set range".)
        fio_refused = (fio["rc"] != 0 or all(j.get("error", 0) != 0 for j in jobs)) and not any(
            j.get(d, {}).get("total_ios", 0) for j in jobs for d in DIRS)
        if fio_refused and iolab["rc"] == 2:
            return "both-fail", [], None
        return "iolab-fails-only", [], None
    mixed = is_mixed(opts)
    figs = {"fio": figures(fio, mixed), "iolab": figures(iolab, mixed)}
    cls, diffs = compare_figures(opts, figs)
    return cls, diffs, figs


def compare_figures(opts, figs):
    a, b = figs["fio"], figs["iolab"]
    diffs = []
    for field in a:
        if a[field] != b.get(field):
            why = next((name for name, _, pred in EXPLAINED
                        if _safe(pred, opts, field, a, b)), None)
            diffs.append({"field": field, "fio": a[field], "iolab": b.get(field),
                          "explained": why})
    _files_follow_writes(opts, diffs)
    if not diffs:
        return "same", []
    if all(d["explained"] for d in diffs):
        return "differs-explained", diffs
    return "differs", diffs


FILES_FOLLOW = ("files-follow-writes",
                "files that grow as written: their sizes follow the writes, whose "
                "difference is explained by another rule of this case (drawn sizes, a "
                "random end; the same bytes in sizes drawn, which the files take in "
                "turn; with several files each of fio's queued syncs takes a "
                "file's turn, io_u.c get_io_u -> set_io_u_file, so the syncs' count "
                "moves writes between files)")


def _files_follow_writes(opts, diffs):
    """A file size difference explained by the write or sync differences
    of the same case, when each of those is explained."""
    files = next((d for d in diffs if d["field"] == "files" and not d["explained"]), None)
    if files is None or not _grows_as_written(opts):
        return
    if sorted(files["fio"]) != sorted(files["iolab"] or {}):
        return
    writes = [d for d in diffs if d["field"].startswith("write.") or d["field"] == "sync.N"]
    if writes and all(d["explained"] for d in writes):
        files["explained"] = FILES_FOLLOW[0]
    # The same writes and bytes, sizes drawn: the files take them in turn,
    # so each file's share follows the draws (posixaio bsrange=512-2k over
    # 4 files, number_ios=76: 97,792 bytes under both, split 26624/24064/
    # 23552/23552 by fio and 24576/26112/27136/19968 by iolab).
    elif not writes and _variable_bs(opts) and \
            sum(files["fio"].values()) == sum((files["iolab"] or {}).values()):
        files["explained"] = FILES_FOLLOW[0]


def _safe(pred, *args):
    try:
        return bool(pred(*args))
    except (TypeError, ValueError, KeyError):
        return False


def norm_msg(msg):
    msg = re.sub(r"0x[0-9a-fA-F]+", "0xN", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg.strip()[:160]


def signature(cls, diffs, fio, iolab):
    """What makes two cases the same kind of difference."""
    if cls == "differs":
        by = {d["field"]: d for d in diffs}
        if "error" in by:
            return f"error: fio {by['error']['fio']}, iolab {by['error']['iolab']}"
        if "rc" in by:
            return f"exit status: fio {by['rc']['fio']}, iolab {by['rc']['iolab']}"
        return "fields: " + ", ".join(sorted(d["field"] for d in diffs if not d["explained"]))
    if cls == "iolab-fails-only":
        return "iolab: " + failure(iolab)
    if cls == "fio-fails-only":
        return "fio: " + failure(fio)
    if cls == "both-fail":
        return f"both: fio {failure(fio)}; iolab {failure(iolab)}"
    return cls


def failure(res):
    if res["timed_out"]:
        return "timed out"
    if res["rc"] < 0:
        return f"killed by signal {-res['rc']}"
    return norm_msg(res["stderr1"] or f"rc={res['rc']}")


class Runner:
    def __init__(self, fio, iolab, timeout=TIMEOUT):
        self.fio, self.iolab, self.timeout = fio, iolab, timeout

    def run(self, opts):
        args = to_args(opts) + ["--output-format=json"]
        fio = run_tool([self.fio] + args, self.timeout)
        iolab = run_tool([self.iolab, "run", "--no-store"] + args, self.timeout)
        cls, diffs, figs = compare(opts, fio, iolab)
        return {"args": to_args(opts), "class": cls, "diffs": diffs, "figures": figs,
                "signature": signature(cls, diffs, fio, iolab),
                "fio": {k: v for k, v in fio.items() if k != "json"},
                "iolab": {k: v for k, v in iolab.items() if k != "json"}}


UNEXPLAINED = ("differs", "fio-fails-only", "iolab-fails-only")


def minimize(runner, opts, sig, budget_s=60):
    """Drop options (and rw suffixes) one at a time while the case keeps the
    same signature; randseed stays. Returns (opts, record of the last run).
    A case runs well under a second: 10 s is a hang here."""
    runner = Runner(runner.fio, runner.iolab, timeout=10)
    t0 = time.monotonic()
    best = list(opts)
    best_rec = None
    changed = True
    while changed and time.monotonic() - t0 < budget_s:
        changed = False
        for i in range(len(best)):
            if i >= len(best):
                break
            k, v = best[i]
            if k == "randseed":
                continue
            tries = [best[:i] + best[i + 1:]]
            if k == "rw" and ":" in str(v):
                tries.insert(0, best[:i] + [(k, v.split(":")[0])] + best[i + 1:])
            for cand in tries:
                if time.monotonic() - t0 > budget_s:
                    break
                rec = runner.run(cand)
                if rec["signature"] == sig:
                    best, best_rec, changed = cand, rec, True
                    break
    if best_rec is None:
        best_rec = runner.run(best)
    return best, best_rec


def describe(rec):
    if rec["class"] in ("differs", "differs-explained"):
        parts = []
        for d in rec["diffs"]:
            if rec["class"] == "differs" and d["explained"]:
                continue
            a, b = d["fio"], d["iolab"]
            if d["field"] == "files":
                ka, kb = set(a), set(b)
                only_a = sorted(ka - kb)
                only_b = sorted(kb - ka)
                sz = [f"{n}: {a[n]} vs {b[n]}" for n in sorted(ka & kb) if a[n] != b[n]]
                txt = "; ".join(filter(None, [
                    "fio only " + ",".join(only_a) if only_a else "",
                    "iolab only " + ",".join(only_b) if only_b else "", ", ".join(sz)]))
                parts.append(f"files ({txt})")
            else:
                parts.append(f"{d['field']} {a} vs {b}")
        return "; ".join(parts)
    def fail(name):
        res = rec[name]
        if res["timed_out"]:
            return f"{name} timed out ({res['secs']:.0f} s)"
        return f"{name} rc={res['rc']}: {res['stderr1']}"
    if rec["class"] == "iolab-fails-only":
        return fail("iolab")
    if rec["class"] == "fio-fails-only":
        return fail("fio")
    if rec["class"] == "both-fail":
        return fail("fio") + "; " + fail("iolab")
    return ""


def cmdline(args):
    return " ".join(shlex.quote(a) for a in args)


def md(s):
    return str(s).replace("|", "\\|")


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--keep-going", action="store_true")
    ap.add_argument("--only-diffs", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--max-time", type=float)
    ap.add_argument("--iolab", default=os.path.join(ROOT, "target/release/iolab"))
    ap.add_argument("--fio", default="fio")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--kinds", type=int, default=20, help="kinds to minimize and show")
    ap.add_argument("--cmd", help="one command line to compare")
    ap.add_argument("--report", metavar="FILE.jsonl",
                    help="no new cases: the table (and minimizing) for the records of an --out file")
    opt = ap.parse_args()

    if not os.path.exists(opt.iolab):
        if opt.iolab != os.path.join(ROOT, "target/release/iolab"):
            sys.exit(f"no iolab at {opt.iolab}")
        progress("building target/release/iolab")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    opt.iolab = os.path.abspath(opt.iolab)  # the tools run in temporary directories
    runner = Runner(opt.fio, opt.iolab)

    if opt.cmd:
        opts = parse_args_line(shlex.split(opt.cmd))
        rec = runner.run(opts)
        print(json.dumps(rec, indent=1))
        return 1 if rec["class"] in UNEXPLAINED else 0

    t_start = time.monotonic()
    if opt.report:
        with open(opt.report) as f:
            records = [json.loads(line) for line in f if line.strip()]
        for r in records:  # classified as this version of the script does
            if r.get("figures"):
                r["class"], r["diffs"] = compare_figures(parse_args_line(r["args"]),
                                                         r["figures"])
            elif r["class"] == "fio-fails-only" and r["iolab"].get("rc") == 0:
                opts = parse_args_line(r["args"])
                why = next((name for name, _, pred in FIO_FAILURES
                            if _safe(pred, opts, r["fio"])), None)
                if why:
                    r["class"] = "fio-fails-explained"
                    r["diffs"] = [{"field": "fio", "fio": failure(r["fio"]),
                                   "iolab": "ran", "explained": why}]
            r["signature"] = signature(r["class"], r["diffs"], r["fio"], r["iolab"])
        return report(opt, runner, records, t_start)
    out = open(opt.out, "w") if opt.out else None
    records = []
    stop = False

    def one(i):
        rng = random.Random(f"{opt.seed}:{i}")
        opts = draw_case(rng)
        rec = runner.run(opts)
        rec["case"] = i
        rec["seed"] = opt.seed
        rec["features"] = sorted(features(opts))
        return rec

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opt.jobs)) as ex:
        pending = set()
        nxt = 0
        while pending or (nxt < opt.cases and not stop):
            while (not stop and nxt < opt.cases and len(pending) < max(1, opt.jobs)
                   and not (opt.max_time and time.monotonic() - t_start > opt.max_time)):
                pending.add(ex.submit(one, nxt))
                nxt += 1
            if not pending:
                break
            done, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                rec = fut.result()
                records.append(rec)
                if rec["class"] in UNEXPLAINED and not opt.keep_going:
                    stop = True
                if opt.only_diffs and rec["class"] == "same":
                    continue
                if out:
                    out.write(json.dumps(rec, sort_keys=True) + "\n")
                    out.flush()
                el = time.monotonic() - t_start
                line = f"[{len(records)}/{opt.cases} {el:.0f}s] case {rec['case']}: {rec['class']}"
                if rec["class"] != "same":
                    line += f" ({describe(rec)[:200]})"
                progress(line)
    if out:
        out.close()
    return report(opt, runner, records, t_start)


def report(opt, runner, records, t_start):
    records.sort(key=lambda r: r["case"])
    elapsed = time.monotonic() - t_start

    classes = ["same", "differs-explained", "fio-fails-explained", "differs", "fio-fails-only",
               "iolab-fails-only", "both-fail"]
    counts = {c: sum(1 for r in records if r["class"] == c) for c in classes}
    seeds = sorted({r.get("seed") for r in records}, key=str)
    print(f"## fio_diff: seed {', '.join(map(str, seeds))}, {len(records)} cases, "
          f"{elapsed:.0f} s\n")
    print("| class | cases |\n|---|---|")
    for c in classes:
        print(f"| {c} | {counts[c]} |")

    expl = {}
    for r in records:
        for d in r["diffs"]:
            if d["explained"]:
                expl[d["explained"]] = expl.get(d["explained"], 0) + 1
    if expl:
        print("\nExplained differences (fields), by rule:\n")
        print("| rule | fields | why |\n|---|---|---|")
        rules = [(n, d) for n, d, _ in EXPLAINED + FIO_FAILURES] + [FILES_FOLLOW]
        for name, doc in rules:
            if name in expl:
                print(f"| {name} | {expl[name]} | {md(doc)} |")

    # kinds: by signature, then by the options of a minimized representative
    groups = {}
    for r in records:
        if r["class"] in UNEXPLAINED or r["class"] == "both-fail":
            groups.setdefault((r["class"], r["signature"]), []).append(r)
    kinds = []
    for (cls, sig), rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        rep = min(rs, key=lambda r: (len(r["args"]), r["case"]))
        kinds.append({"class": cls, "signature": sig, "rep": rep, "cases": rs,
                      "covered": rs, "min": None,
                      "pending": not (opt.no_minimize or cls == "both-fail")})
    shown = []
    queue = list(kinds)
    while queue and len(shown) < opt.kinds:
        queue.sort(key=lambda k: -len(k["cases"]))  # the most cases first
        kind = queue.pop(0)
        if kind.get("pending"):
            rep = kind["rep"]
            opts = parse_args_line(rep["args"])
            progress(f"minimizing {kind['class']} [{kind['signature'][:80]}] case {rep['case']}")
            mopts, mrec = minimize(runner, opts, kind["signature"])
            if mrec["signature"] != kind["signature"]:
                mopts, mrec = opts, rep  # did not reproduce: keep the original
                kind["flaky"] = True
            kind["min"] = mrec
            need = features(mopts)
            covered = [r for r in kind["cases"] if need <= set(r["features"])] or [rep]
            rest = [r for r in kind["cases"] if r not in covered]
            kind["covered"] = covered
            kind["features"] = sorted(need)
            if rest and sum(1 for k in kinds if k["signature"] == kind["signature"]) < 5:
                nk = {"class": kind["class"], "signature": kind["signature"],
                      "rep": min(rest, key=lambda r: (len(r["args"]), r["case"])),
                      "cases": rest, "pending": True}
                kinds.append(nk)
                queue.append(nk)
        shown.append(kind)
    shown.sort(key=lambda k: -len(k["covered"] or []))

    if shown:
        print("\n### Kinds of differences\n")
        print("| # | class | what differs | cases | options present |\n|---|---|---|---|---|")
        for n, k in enumerate(shown, 1):
            feats = ", ".join(k.get("features") or sorted(
                set.intersection(*[set(r["features"]) for r in k["covered"]]))) or "-"
            print(f"| {n} | {k['class']} | {md(k['signature'])} | {len(k['covered'])} "
                  f"| {md(feats)} |")
        seen = {(r.get("seed"), r["case"])
                for k in shown for r in k["covered"]}
        left = [r for r in records if r["class"] in UNEXPLAINED + ("both-fail",)
                and (r.get("seed"), r["case"]) not in seen]
        if left:
            print(f"\n{len(left)} more cases differ or fail in kinds not shown "
                  f"(--kinds N shows more); see the --out records.")
        print("\nReproducing command lines (`fio ARGS --output-format=json` vs "
              "`iolab run --no-store ARGS --output-format=json`, each in an empty directory):\n")
        for n, k in enumerate(shown, 1):
            rec = k["min"] or k["rep"]
            flaky = " (did not reproduce when minimizing)" if k.get("flaky") else ""
            print(f"{n}. `{cmdline(rec['args'])}`{flaky}  \n   {md(describe(rec))}")
    bad = sum(counts[c] for c in UNEXPLAINED)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
