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
	# --no-tma: samples.cu launches the kernels with <<<>>> and their own arguments only; the TMA
	# lowering (tensor maps made by the launchers) is checked and timed by tma_gemm.sh
	for s in gemm gemm_sm90 gemm_strided copy elementwise transpose softmax convert splitk_gemm; do
		${TILEC:-../../build/tilec} --arch=$ARCH --no-tma ../../samples/$s.tile -o "$D/$s.cu"
	done
	# FlashAttention at head dims 64 and 128, causal and not: one kernel each, renamed
	# flash_fwd_d<D>_c<CAUSAL> so that they live in one translation unit
	for d in 64 128; do for c in 0 1; do
		${TILEC:-../../build/tilec} --arch=$ARCH -D D=$d -D CAUSAL=$c ../../samples/flash_fwd.tile -o "$D/flash_tmp.cu"
		sed "s/\bflash_fwd\b/flash_fwd_d${d}_c${c}/g" "$D/flash_tmp.cu" > "$D/flash_fwd_d${d}_c${c}.cu"
		rm -f "$D/flash_tmp.cu"
	done; done
	{ echo '#include "tilec_cuda.h"'
	  for s in gemm gemm_sm90 gemm_strided copy elementwise transpose softmax convert splitk_gemm \
		flash_fwd_d64_c0 flash_fwd_d64_c1 flash_fwd_d128_c0 flash_fwd_d128_c1; do echo "#include \"$s.cu\""; done
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
