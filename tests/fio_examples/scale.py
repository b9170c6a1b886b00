#!/usr/bin/env python3
# Makes the job files of tests/fio_examples/ from fio's examples/ (a fio git
# checkout at $FIO_REPO, default the mirror below): only paths, sizes, file
# counts and times scaled, each change listed in the copy's header. The
# examples left out, and why, are EXCLUDED in tests/fio_examples.rs.
import re, subprocess, sys, os
R = os.environ.get("FIO_REPO", "/work/.mirror/axboe+fio/repo")
COMMIT = subprocess.check_output(["git", "-C", R, "rev-parse", "--short=12", "HEAD"], text=True).strip()
OUT = os.path.dirname(os.path.abspath(__file__))
# name -> list of (exact old line, new line); a new line with old None is appended to the first section named
S = {
 "1mbs_clients": [("size=32m", "size=4k")] + [(f"startdelay={4*i}", f"startdelay={4*i}ms") for i in range(1, 32)] + [("directory=tmp", "directory=tmpdir")],
 "aio-read": [("size=512m", "size=1m"), ("directory=/data1", "directory=data1")],
 "backwards-read": [("size=128m", "size=1m")],
 "basic-verify": [("filename=/dev/XXX", "filename=basic-verify.dat\nsize=1m")],
 "butterfly": [("filename=/tmp/testfile", "filename=testfile\nsize=1m")],
 "cmdprio-bssplit": [("filename=/dev/sda", "filename=cmdprio.dat\nsize=4m")],
 "cmdprio-percentage": [("filename=/dev/sda", "filename=cmdprio.dat\nsize=1m")],
 "cpuio": [("runtime=15", "runtime=1")],
 "dedupe-global": [("size=100m", "size=1m")],
 "disk-zone-profile": [("filename=/dev/sdb", "filename=disk-zone.dat\nsize=4m"), ("zonesize=256m", "zonesize=256k"), ("zoneskip=2g", "zoneskip=2m")],
 "exitwhat": [("filename=/tmp/test", "filename=test"), ("filesize=1G", "filesize=1m"), ("thinktime=2000", "thinktime=200")] + [("rate=300,300,300", "rate=300k,300k,300k")],
 "exec": [("runtime=30", "runtime=1"), ("runtime=10", "runtime=1"), ("numjobs=12", "numjobs=2"), ("program=/usr/sbin/turbostat", "program=/bin/true")],
 "falloc": [("directory=/scratch", "directory=scratch"), ("size=100M", "size=1m"), ("filesize=100M", "filesize=1m"), ("runtime=10", "runtime=500ms")],
 "filecreate-ioengine": [("nrfiles=31250", "nrfiles=20")],
 "filedelete-ioengine": [("nrfiles=200", "nrfiles=20")],
 "filestat-ioengine": [("nrfiles=200", "nrfiles=20")],
 "fio-rand-RW": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "fio-rand-read": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "fio-rand-write": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "fio-seq-RW": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "fio-seq-read": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "fio-seq-write": [("size=10G", "size=1m"), ("runtime=900", "runtime=1")],
 "flow": [("size=100g", "size=1m"), ("filename=/tmp/testfile", "filename=testfile"), ("runtime=30", "runtime=1")],
 "fsx": [("loops=500000", "loops=500000\nruntime=1")],
 "ftruncate": [("directory=/scratch", "directory=scratch"), ("size=102404k ; 100Mb+4k", "size=1028k ; 1Mb+4k"), ("runtime=10s", "runtime=500ms")],
 "iometer-file-access-server": [("size=4g", "size=1m")],
 "jesd219": [("filename=/dev/nvme0n1", "filename=jesd219.dat\nsize=1m")],
 "latency-profile": [("filename=/dev/sda", "filename=latency-profile.dat\nsize=1m")],
 "null": [("size=100g", "size=16m")],
 "rand-zones": [("size=2g", "size=1m")],
 "surface-scan": [],
 "ssd-steadystate": [("filename=/dev/fioa", "filename=fioa.dat\nsize=1m")],
 "ssd-test": [("size=10g", "size=1m"), ("runtime=60", "runtime=1"), ("directory=/mount-point-of-ssd", "directory=mount-point-of-ssd")],
 "steadystate": [("size=128m", "size=1m"), ("runtime=5m", "runtime=1"), ("ss_dur=30s", "ss_dur=1s"), ("ss_ramp=10s", "ss_ramp=0"), ("ss_dur=10s", "ss_dur=1s"), ("ss_ramp=5s", "ss_ramp=0")],
 "tiobench-example": [("size=512m", "size=256k"), ("timeout=60", "timeout=1")],
 "waitfor": [("filename=/tmp/data", "filename=data"), ("filesize=128m", "filesize=1m"), ("runtime=10", "runtime=1")],
 "zipf": [("size=1280m", "size=16m")],
}
# Examples changed beyond scaling, and why (written into the copy's header).
CHANGED = {
 "exec": ["numjobs=12 is scaled to the 2 CPUs iolab's CI has; turbostat (not installed, and it",
          "needs root and MSRs) is /bin/true, which ignores its arguments and writes nothing:",
          "the exec jobs still start a program with fio's arguments and leave its empty output files"],
}
# What tests/fio_examples.rs compares where the default (jobs ios bytes files) cannot hold.
COMPARE = {
 "fsx": "jobs files (loops=500000: ends by runtime)",
 "exitwhat": "jobs files (fast jobs end when slow ones do)",
 "iometer-file-access-server": "jobs total files (bssplit and rwmixread: sizes and directions drawn at random)",
 "jesd219": "jobs total~262144 files (bssplit and rwmixread: sizes and directions drawn at random; randrepeat=0 and norandommap: each job's last I/O, up to 64k, goes past size)",
 "ftruncate": "jobs names (time_based: the file ends at the offset of the last random truncate)",
 "cmdprio-bssplit": "jobs total files (bssplit and randrw: sizes and directions drawn at random)",
}
# Examples run by tests/fio_engines_ext.rs instead (ext4 on a loop device; exec's
# sleep job): name -> substitutions, written to engines_ext/.
EXT = {
 "e4defrag": [("directory=/scratch", "directory=scratch"), ("filesize=100M", "filesize=1m"), ("size=100M", "size=1m"), ("runtime=30", "runtime=500ms")],
 "e4defrag2": [("directory=/scratch", "directory=scratch"), ("filesize=100M", "filesize=1m"), ("size=100M", "size=1m"), ("runtime=30", "runtime=500ms")],
 "exec": [("runtime=30", "runtime=1"), ("runtime=10", "runtime=1")],
}
for name, subs in list(S.items()) + [("engines_ext/" + n, s) for n, s in EXT.items()]:
    test = "tests/fio_engines_ext.rs" if name.startswith("engines_ext/") else "tests/fio_examples.rs"
    out, name = f"{OUT}/{name}.fio", name.removeprefix("engines_ext/")
    text = subprocess.check_output(["git", "-C", R, "show", f"HEAD:examples/{name}.fio"], text=True)
    lines = text.split("\n")
    done = []
    for old, new in subs:
        hits = [i for i, l in enumerate(lines) if l.rstrip() == old or l.split("#")[0].split("\t")[0].rstrip() == old]
        if not hits:
            sys.exit(f"{name}: no line '{old}'")
        for i in hits:
            lines[i] = lines[i].replace(old, new, 1)
        done.append(f"{old} -> {new.replace(chr(10), ' + ')}")
    header = [f"# fio's examples/{name}.fio (fio {COMMIT}), for iolab's tests ({test})."]
    if test.endswith("fio_examples.rs") and name in CHANGED:
        header.append("# Scaled down and changed (paths, times, job counts, a program; see why below):")
    else:
        header.append("# Scaled down (only paths, sizes, file counts and times; nothing else changed):")
    header += [f"#   {d}" for d in done] or ["#   nothing"]
    if test.endswith("fio_examples.rs"):
        header += [f"# Why: {l}" if i == 0 else f"#   {l}" for i, l in enumerate(CHANGED.get(name, []))]
    if name in COMPARE:
        header.append(f"# compare: {COMPARE[name]}")
    open(out, "w").write("\n".join(header) + "\n" + "\n".join(lines))
print(len(S) + len(EXT))
