#!/usr/bin/env bash
# GPU check of the CPU emulation's tables: builds test/gpu/cpu_emul.cu (the unit kernels of
# test/cpu_exec_kernels.cu with the real templates/tilec_cuda.h) and runs it on an sm_90a GPU.
# `test/gpu/cpu_emul.sh build` here (nvcc, no GPU needed) writes build/cpu_emul_gpu;
# `test/gpu/cpu_emul.sh run` there runs it (building first when it is missing).
# test/gpu/cpu_emul.out is the output of a run on an H200 (2026-12-01, driver 580.159.04, nvcc
# 13.0 on the device) of these sources (comments stripped, the CPU-only part of
# cpu_exec_kernels.cu left out, this branch's tl_wgmma_f16/bf16 helpers of tilec_cuda.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/cpu_emul_gpu
case "${1:-run}" in
build)
	mkdir -p build
	${NVCC:-nvcc} -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Itemplates -o $bin test/gpu/cpu_emul.cu ;;
run)
	[ -x $bin ] || "$0" build
	nvidia-smi --query-gpu=name --format=csv,noheader || true
	$bin ;;
esac
