#!/bin/sh
# gpu.sh: build and run the GPU benchmark (gpu_bench.c) on a machine with an NVIDIA GPU.
# Needs a fresh copy of the repository plus build/tilec and build/libtilec.a (make, or carried),
# nvcc's toolkit (cuda.h, cuBLAS, cudart) and the driver. Run from anywhere:
#   test/bench/gpu.sh [build|run|flash|gemm] [gpu_bench options: --quick --runs=N --no-triton]
# flash: the FlashAttention section alone (below); gemm: the GEMM variants section alone
# (test/gpu/gemm_bench.sh: f16, bf16, fp8 e4m3 against cuBLAS / cuBLASLt).
# build: tilec writes the launcher headers of the samples into build/bench/ and cc builds
# build/bench/gpu_bench (no GPU needed); run (default): build, then run it from the repository
# root; it writes test/bench/RESULTS.md (also copied to $OUT when that is set).
set -eu
cd "$(dirname "$0")/../.."
CUDA=${CUDA:-/usr/local/cuda}
ARCH=${ARCH:-sm_90a}
TILEC=${TILEC:-build/tilec}
B=build/bench
case "$TILEC" in /*) ;; *) TILEC="$PWD/$TILEC" ;; esac
mode=run
case "${1:-}" in
build|run|flash|gemm) mode=$1; shift ;;
esac
for f in "$TILEC" build/libtilec.a; do
	[ -e "$f" ] || { echo "gpu.sh: $f is missing (run make, or carry build/)" >&2; exit 1; }
done
mkdir -p "$B"
# the launcher headers, for the architecture the JIT compiles for on the device (sm_90a on H100/H200)
for s in gemm gemm_sm90 copy elementwise; do
	"$TILEC" --arch="$ARCH" "samples/$s.tile" -o "$B/$s.cu" --header "$B/$s.h"
done
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O2 -Wall -Wextra \
	-Iruntime -I"$B" -I"$CUDA/include" -o "$B/gpu_bench" \
	test/bench/gpu_bench.c test/bench/gpu_bench_gen.c build/libtilec.a \
	-L"$CUDA/lib64" -L"$CUDA/lib64/stubs" -Wl,-rpath,"$CUDA/lib64" \
	-lcublas -lcudart -lcuda -ldl -lpthread -lm
echo "built $B/gpu_bench"
[ "$mode" = build ] && exit 0
if ! { ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; } && ! command -v nvidia-smi >/dev/null; then
	echo "gpu.sh: no NVIDIA driver here (no libcuda.so.1, no nvidia-smi): built only" >&2
	exit 77
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem \
	--format=csv,noheader || true
rc=0
if [ "$mode" != flash ]; then
"$B/gpu_bench" "$@" || rc=$?
# the nvcc route (samples/buildtime: gemm.h's runtime- and driver-API launchers) and the
# JIT host sample, appended to RESULTS.md
if [ -f test/bench/RESULTS.md ]; then
	{
		echo; echo "## samples/buildtime (nvcc build of the generated gemm.cu + gemm.h), same session"
		echo; echo '```'
		if make -s -C samples/buildtime O="$PWD/build/buildtime" TILEC="$TILEC" ARCH="$ARCH" \
			CUDA="$CUDA" >build/buildtime.log 2>&1; then
			r=0; build/buildtime/buildtime 2>&1 || r=$?; echo "exit $r"
		else
			tail -20 build/buildtime.log; echo "build failed"
		fi
		echo '```'
		echo; echo "## samples/host_jit.c (JIT from tile source), same session"
		echo; echo '```'
		if ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iruntime -o build/host_jit \
			samples/host_jit.c build/libtilec.a -ldl -lpthread -lm >build/host_jit.log 2>&1; then
			r=0; build/host_jit 2>&1 || r=$?; echo "exit $r"
		else
			tail -20 build/host_jit.log; echo "build failed"
		fi
		echo '```'
	} | tee -a test/bench/RESULTS.md
fi
fi
# the GEMM variants (test/gpu/gemm_bench.sh): f16 and bf16 samples and fp8 e4m3 with the tilec
# options that matter (TMA default, --warp-specialize, --raster-group) against cuBLAS/cuBLASLt
if [ "$mode" = run ] || [ "$mode" = gemm ]; then
	rm -f "$B/gemm.failed"
	{
		echo; echo "## GEMM variants (test/gpu/gemm_bench.sh): TFLOP/s (ratio to cuBLAS / cuBLASLt), same session"
		echo; nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true; echo
		if TILEC="$TILEC" W="$B/gemm" test/gpu/gemm_bench.sh >"$B/gemm.txt" 2>&1; then
			grep -v '^v_' "$B/gemm.txt" | sed -n '/^| variant/,$p'
		else
			tail -30 "$B/gemm.txt"; echo "gemm_bench failed"; touch "$B/gemm.failed"
		fi
	} | tee -a test/bench/RESULTS.md
	[ -e "$B/gemm.failed" ] && rc=1
	rm -f "$B/gemm.failed"
	[ "$mode" = gemm ] && { [ -n "${OUT:-}" ] && cp test/bench/RESULTS.md "$B/gemm.txt" "$OUT/"; exit $rc; }
fi
# FlashAttention (samples/flash_fwd.tile: P in registers, as written and with -D BN=128;
# test/cpu/flash_smem_p.tile: P through shared memory; D = 128, causal and not, B*H = 32,
# L = 4096 and 8192)
# against torch's scaled_dot_product_attention (its fastest backend here) when torch imports:
# flash_bench times tilec and checks sampled rows against fp64, flash_torch.py prints the ratios.
# FLASH_EXTRA="name|tile|tilec flags[|tilec binary];...": more variants of the same interface
# (BM = 128, 256 threads), e.g. "fwd_bn128|samples/flash_fwd.tile|-D BN=128"
rm -f "$B/flash/failed"
{
	echo; echo "## FlashAttention forward: samples/flash_fwd.tile vs torch SDPA, same session"
	echo; echo '```'
	F=$B/flash
	mkdir -p "$F"
	: >"$F/flash_kernels.h"; : >"$F/flash_variants.h"
	fr=0
	vs="flash_fwd|samples/flash_fwd.tile|;flash_fwd_bn128|samples/flash_fwd.tile|-D BN=128"
	vs="$vs;flash_smem_p|test/cpu/flash_smem_p.tile|;${FLASH_EXTRA:-}"
	echo "$vs" | tr ';' '\n' | while IFS='|' read -r n src flags tc; do
		[ -n "$n" ] || continue
		k=$(sed -n 's/^kernel \([a-z0-9_]*\)(.*/\1/p' "$src" | head -1)
		K=$(echo "$k" | tr a-z A-Z)
		for c in 0 1; do
			kn=${n}_d128_c$c; KN=$(echo "$kn" | tr a-z A-Z)
			# shellcheck disable=SC2086
			"${tc:-$TILEC}" --arch="$ARCH" -D D=128 -D CAUSAL=$c $flags "$src" -o "$F/t.cu" --header "$F/t.h" ||
				{ touch "$F/failed"; continue; }
			# the kernel renamed, and its --header launcher (the TMA maps, the shared memory)
			sed -e "s/\b$k\b/$kn/g" -e '/#include "tilec_cuda.h"/d' "$F/t.cu" >"$F/$kn.cu"
			sed -e "s/\b$k\b/$kn/g" -e "s/_${k}_/_${kn}_/g" -e "s/tilec_launch_${k}(/tilec_launch_${kn}(/g" \
				-e "s/TILEC_${K}_/TILEC_${KN}_/g" -e "s/TILEC_GEN_${K}_H/TILEC_GEN_${KN}_H/g" \
				-e '/#include "tilec_cuda.h"/d' -e '/^#ifdef __CUDACC__/,/^#endif \/\* __CUDACC__ \*\//d' \
				"$F/t.h" >"$F/$kn.h"
			{
				echo "#include \"$kn.cu\""; echo "#include \"$kn.h\""
				echo "static CUresult L_$kn(tl_half_t *q, tl_half_t *k, tl_half_t *v, tl_half_t *o, int bh, int l)"
				echo "{ static CUfunction f; if (!f) { cudaFunction_t g; if (cudaGetFuncBySymbol(&g, (const void *)$kn) != cudaSuccess) return CUDA_ERROR_NOT_FOUND; f = (CUfunction)g; }"
				echo "  return tilec_launch_$kn(f, 0, (CUdeviceptr)q, (CUdeviceptr)k, (CUdeviceptr)v, (CUdeviceptr)o, bh, l); }"
			} >>"$F/flash_kernels.h"
		done
		echo "FV($n, \"$flags\")" >>"$F/flash_variants.h"
	done
	[ -e "$F/failed" ] && fr=1
	if [ $fr = 0 ] && "$CUDA/bin/nvcc" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$F" \
		-Itemplates -o "$F/flash_bench" test/bench/flash_bench.cu -lcuda >"$F/build.log" 2>&1; then
		r=0; "$F/flash_bench" >"$F/flash.txt" 2>&1 || r=$?
		cat "$F/flash.txt"; echo "flash_bench exit $r"
		[ $r = 0 ] || touch "$F/failed"
		python3 test/bench/flash_torch.py "$F/flash.txt" 2>&1 || echo "flash_torch.py failed"
	else
		tail -20 "$F/build.log"; echo "flash build failed"; touch "$F/failed"
	fi
	echo '```'
} | tee -a test/bench/RESULTS.md
[ -e "$B/flash/failed" ] && rc=1
if [ -n "${OUT:-}" ] && [ -f test/bench/RESULTS.md ]; then
	cp test/bench/RESULTS.md "$OUT/"
fi
exit $rc
