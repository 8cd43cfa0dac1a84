#!/bin/sh
# run.sh: build and run the runtime's GPU check (needs an NVIDIA driver and CUDA 13).
set -e
mkdir -p build/gpu
cc -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -g -Wall -Wextra -Iruntime $(for d in gen/*/; do printf -- "-I%s " "${d%/}"; done) \
  -o build/gpu/rt_gpu runtime/*.c test/gpu/rt_gpu.c -ldl -lpthread -lm
exec build/gpu/rt_gpu
