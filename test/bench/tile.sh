#!/bin/sh
# tile.sh: the JIT path from tile source without a GPU (tile_bench.c): DSL -> CUDA, cold JIT,
# disk hit, memo hit per sample at sm_90a. Needs build/libtilec.a and NVRTC.
set -e
cc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Wall -Wextra -Iruntime \
  -o build/tile_bench test/bench/tile_bench.c test/bench/gpu_bench_gen.c build/libtilec.a \
  -ldl -lpthread -lm
echo "== JIT from tile source, sm_90a ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
build/tile_bench
