#!/usr/bin/env bash
# GPU check of the emitted samples. Here (no GPU needed): `test/gpu/samples.sh emit` writes
# the CUDA for each sample into test/gpu/out/ with build/tilec. On the GPU machine:
# `test/gpu/samples.sh run` builds samples.cu against those files with nvcc and runs it,
# then compute-sanitizer memcheck on a small run.
set -euo pipefail
cd "$(dirname "$0")"
ARCH=${ARCH:-sm_90a}
D=${OUTD:-out}   # where emit writes and run reads (OUTD=out90 ARCH=sm_90: the mma.sync emission)
case "${1:-run}" in
emit)
	rm -rf "$D" && mkdir -p "$D"
	for s in gemm gemm_sm90 copy elementwise transpose softmax convert splitk_gemm; do
		${TILEC:-../../build/tilec} --arch=$ARCH ../../samples/$s.tile -o "$D/$s.cu"
	done
	{ echo '#include "tilec_cuda.h"'
	  for s in gemm gemm_sm90 copy elementwise transpose softmax convert splitk_gemm; do echo "#include \"$s.cu\""; done
	  for f in "$D"/*.cu; do k=$(sed -n 's|^// kernel \([a-z0-9_]*\): .* \([0-9]*\) bytes of dynamic.*|\1 \2|p' $f | head -1)
	    set -- $k; echo "#define SMEM_$1 $2"; done; } > "$D/emitted.h"
	ls "$D" ;;
run)
	nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader || true
	nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$D" -I../../templates -o /tmp/samples samples.cu -lcublas
	/tmp/samples
	if command -v compute-sanitizer >/dev/null; then
		nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$D" -I../../templates -DMEMCHECK -o /tmp/samples_mc samples.cu -lcublas
		compute-sanitizer --tool memcheck --print-limit 5 /tmp/samples_mc 2>&1 | tail -5
	fi ;;
esac
