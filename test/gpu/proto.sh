#!/usr/bin/env bash
# Build and run the GEMM design probe on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
python3 gen_wgmma.py /tmp/wgmma_m64n256.inc && cp /tmp/wgmma_m64n256.inc .
nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -o /tmp/proto proto_gemm.cu -lcublas
/tmp/proto
