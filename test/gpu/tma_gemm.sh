#!/usr/bin/env bash
# tma_gemm.sh: on the GPU machine, samples/gemm_sm90.tile and samples/gemm.tile as tilec emits
# them for sm_90a with cp.async (the default) and with --tma (TMA loads, mbarriers), launched
# through their --header launchers, checked against an fp64 reference at ragged sizes and timed
# against cuBLAS in the same run (tma_gemm.cu).
set -euo pipefail
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
W=${W:-/tmp/tma_gemm}
mkdir -p "$W"
for s in gemm_sm90 gemm; do
	for v in cpa tma; do
		f=--no-tma; [ $v = tma ] && f=--tma
		n=${s}_$v; N=$(echo "$n" | tr a-z A-Z); S=$(echo "$s" | tr a-z A-Z)
		$T --arch=sm_90a $f samples/$s.tile -o "$W/$n.cu" --header "$W/$n.h"
		sed -e "s/\b$s\b/$n/g" -e '/#include "tilec_cuda.h"/d' "$W/$n.cu" > "$W/$n.k.cu"
		sed -e "s/\b$s\b/$n/g" -e "s/_${s}_/_${n}_/g" -e "s/tilec_launch_${s}(/tilec_launch_${n}(/g" -e "s/TILEC_${S}_/TILEC_${N}_/g" -e "s/TILEC_GEN_${S}_H/TILEC_GEN_${N}_H/g" \
			-e '/#include "tilec_cuda.h"/d' -e '/^#ifdef __CUDACC__/,/^#endif \/\* __CUDACC__ \*\//d' "$W/$n.h" > "$W/$n.k.h"
	done
done
${NVCC:-nvcc} -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$W" -Itemplates -o "$W/tma_gemm" test/gpu/tma_gemm.cu -lcublas -lcuda
"$W/tma_gemm"
