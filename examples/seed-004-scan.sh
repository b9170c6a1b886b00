#!/usr/bin/env bash
# Seed 004 with a real scanner under `iolab exec`: how the read buffer size
# changes the time of a sequential scan of several log files, cold and warm.
#
# The seed scanned ZooKeeper's transaction logs (5 x 250 MiB + 100 MiB) with
# BufferedInputStream and with a 1 MiB DirectInputStream buffer: about 10 s
# cold, about 1 s warm. Here the scanner is `dd bs=BUF` over each log file
# in turn (one `sh -c`), run by `iolab exec` three times with the logs evicted
# from the page cache before each run (--cache cold), then three times with
# them read in first (--cache warm), for buffers of 4 KiB, 64 KiB and 1 MiB.
# Every invocation is stored as one run labelled scan-<buf>-<cold|warm>
# (`iolab history --label scan-4k-cold`, `iolab compare scan-4k-cold
# scan-1m-cold`); iolab's own table of each (time, CPU, bytes read, cache
# hits and misses, iostat) is printed as it goes, and at the end the seed's
# table, buffer size x cold/warm, time and MiB/s, is made from
# `iolab history -f csv` of the six runs.
#
# usage: examples/seed-004-scan.sh [DB]
#   DB            results database (default: $IOLAB_DB, else iolab's own)
# environment:
#   IOLAB         the iolab binary (default: iolab on $PATH)
#   SCAN_MIB      total size of the logs in MiB (default 64), in SCAN_FILES files
#   SCAN_FILES    number of log files (default 4)
#   SCAN_REPEAT   runs per buffer size and cache state (default 3)
#   SCAN_DIR      where the scratch directory is made (default: .; the page
#                 cache must be evictable there: not tmpfs)
#
# A quick run against a scratch database (a few seconds):
#   SCAN_MIB=4 IOLAB=target/release/iolab examples/seed-004-scan.sh /tmp/seed004.db
set -euo pipefail

IOLAB=${IOLAB:-iolab}
DB=${1:-${IOLAB_DB:-}}
MIB=${SCAN_MIB:-64}
NFILES=${SCAN_FILES:-4}
REPEAT=${SCAN_REPEAT:-3}
BUFS=(4K 64K 1M)

# --db only when one was given: iolab's default database otherwise.
db=()
if [[ -n $DB ]]; then
    db=(--db "$DB")
fi

# The scratch directory, removed however the script ends.
work=$(mktemp -d "${SCAN_DIR:-.}/iolab-scratch-seed004.XXXXXX")
trap 'rm -rf "$work"' EXIT
work=$(cd "$work" && pwd)   # absolute: the stored command line names it
logs=$work/logs
mkdir "$logs"

# The logs: NFILES files of text lines, MIB MiB in all (at least one page
# each), written and flushed to the disk (a dirty page cannot be evicted,
# and --cache cold would leave it cached).
per=$(( (MIB << 20) / NFILES ))
(( per >= 4096 )) || { echo "seed-004-scan: SCAN_MIB=$MIB is too small for $NFILES files" >&2; exit 2; }
line='2022-02-24T17:47:03,993 [myid:1] - INFO  [SyncThread:0:FileTxnLog@218] - Creating new log file: log.100000001'
for i in $(seq 1 "$NFILES"); do
    f=$(printf '%s/log.%08x' "$logs" "$i")
    head -c "$per" < <(yes "$line") > "$f"
done
sync "$logs"/log.*
echo "logs: $NFILES files, $(( per * NFILES >> 20 )) MiB in $logs"

# The scanner: every log file front to back with reads of $2 bytes. dd is
# the stand-in for the seed's FileTxnIterator: one read(2) per buffer.
scan='for f in "$1"/log.*; do dd if="$f" of=/dev/null bs="$2" status=none; done'

# Buffer size x cache state, each one iolab exec of REPEAT runs, stored
# under its label. -q: no step lines, the scanner's own output discarded.
for bs in "${BUFS[@]}"; do
    for cache in cold warm; do
        label=scan-${bs,,}-$cache
        echo
        echo "== $label"
        "$IOLAB" -q exec "${db[@]}" --label "$label" --cache "$cache" --files "$logs" \
            --repeat "$REPEAT" -- sh -c "$scan" scan "$logs" "$bs"
    done
done

# The seed's table from the database: the newest run of each label. Its
# time_s is the mean of the runs, read_bytes the bytes one run read (rchar:
# the logs, and a few KiB of sh and dd starting). Columns are looked up by
# name, counting from the end of the row after `job` (a job is the command
# line and may hold a comma).
{
    first=1
    for bs in "${BUFS[@]}"; do
        for cache in cold warm; do
            "$IOLAB" history "${db[@]}" --label "scan-${bs,,}-$cache" --limit 1 -f csv |
                if (( first )); then cat; else tail -n +2; fi
            first=0
        done
    done
} | awk -F, -v reps="$REPEAT" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; n = NF; next }
    function f(name) { return $(NF - (n - col[name])) }
    {
        split($col["label"], l, "-")          # scan, 4k, cold
        t[l[2], l[3]] = f("time_s"); b[l[2], l[3]] = f("read_bytes")
        d[l[2], l[3]] = f("disk_read_ios"); id[l[2], l[3]] = $col["id"]
        if (!(l[2] in seen)) { seen[l[2]] = 1; order[++nb] = l[2] }
    }
    END {
        printf "\nseed 004: sequential scan of the logs, dd per file, mean of %d runs each\n\n", reps
        printf "| buffer | cold time (ms) | cold MiB/s | cold dev reads | warm time (ms) | warm MiB/s | cold / warm | runs |\n"
        printf "|---|---:|---:|---:|---:|---:|---:|---|\n"
        for (k = 1; k <= nb; k++) {
            s = order[k]
            printf "| %s | %.1f | %.0f | %d | %.1f | %.0f | %.1fx | %s, %s |\n", s,
                t[s, "cold"] * 1e3, b[s, "cold"] / t[s, "cold"] / 1048576, d[s, "cold"],
                t[s, "warm"] * 1e3, b[s, "warm"] / t[s, "warm"] / 1048576,
                t[s, "cold"] / t[s, "warm"], id[s, "cold"], id[s, "warm"]
        }
    }'
