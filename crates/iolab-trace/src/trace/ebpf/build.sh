#!/bin/sh
# Rebuilds trace.bpf.o from trace.bpf.c (Debian: clang, libbpf-dev). The
# object is committed so that building iolab needs no clang; tests/trace.rs
# rebuilds it where clang exists and checks the committed one is current.
# -mcpu=v3: atomic fetch-and-add with its result (kernel 5.12+).
# Usage: build.sh [OUT]   (default: trace.bpf.o next to this script)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/trace.bpf.o}
cd "$here"
exec clang -O2 -g -target bpf -mcpu=v3 -D__TARGET_ARCH_x86 \
    -I/usr/include/$(uname -m)-linux-gnu \
    -fdebug-prefix-map="$here"=. -c trace.bpf.c -o "$out"
