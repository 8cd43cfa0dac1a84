#!/usr/bin/env bash
# Build and run the TMA design probe (proto_tma.cu) on the GPU machine: the CUDA of
# samples/gemm_sm90.tile from build/tilec, then the probe against it and cuBLAS.
set -euo pipefail
cd "$(dirname "$0")"
${TILEC:-../../build/tilec} --arch=sm_90a --dump=cuda ../../samples/gemm_sm90.tile | grep -v '^#include "tilec_cuda.h"' > /tmp/emitted_sm90.cu
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I/tmp -I../../templates -o /tmp/proto_tma proto_tma.cu -lcublas
/tmp/proto_tma
