#!/bin/sh
# jit.sh: JIT runtime timings (NVRTC, caches, threads, hipRTC child). Needs build/libtilec.a.
set -e
cc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Iruntime $(for d in gen/*/; do printf -- "-I%s " "${d%/}"; done) \
  -o build/jit_bench test/bench/jit_bench.c build/libtilec.a -ldl -lpthread -lm
echo "== JIT runtime ($(nproc) CPUs)"
build/jit_bench
