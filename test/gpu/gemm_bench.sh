#!/usr/bin/env bash
# gemm_bench.sh: on the GPU machine, tilec's GEMMs as it emits them for sm_90a, each variant a
# tile program and tilec flags: samples/gemm_sm90.tile and samples/gemm.tile in f16 (the default
# TMA pipeline, --warp-specialize, --raster-group), the same programs with bf16 for f16,
# test/gpu/gemm_fp8_bench.tile (e4m3), test/gpu/gemm_int8_bench.tile (int8, i32 out), and the
# persistent schedule (--persistent) of each type, gemm_sm90 with its epilogue through shared
# memory (test/gpu/gemm_sm90_epilogue.tile) and fp8 at 128x256 (-D BN=256); the variants
# NAME_d are NAME with --epilogue=direct (the result stored from the fragment: the default
# epilogue on sm_90a goes through shared memory, gen/lower/plan_epilogue.c); sm90_f16_epl is
# sm90_f16_ep with its Cs row-major (annotate_layout(Cs, linear)) instead of swizzled. Each is launched through its --header
# driver-API launcher, checked against an fp64 reference at ragged sizes (every element) and
# sampled at the timed sizes, and timed against cuBLAS (cublasGemmEx: f16/bf16 with f32
# compute, int8 with i32 compute) or cuBLASLt (fp8 e4m3, f32 compute, f16 out) in the same run
# (gemm_bench.cu). Needs build/tilec (make, or carried) and nvcc.
#   test/gpu/gemm_bench.sh [--quick|--ragged]    (W=dir for the build, default /tmp/gemm_bench;
#   ONLY="sm90_f16 fp8_ws": those variants only)
# --ragged: the checks at the small ragged sizes only (for compute-sanitizer: the binary is
# $W/gemm_bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
T=${TILEC:-build/tilec}
W=${W:-/tmp/gemm_bench}
NVCC=${NVCC:-nvcc}
rm -rf "$W"; mkdir -p "$W"
# name | tile source (after sed) | tilec flags | dtype (0 f16, 1 bf16, 2 e4m3) | B is [N, K]
variants="
sm90_f16_r0|samples/gemm_sm90.tile|s/x/x/|--raster-group=0|0|0
sm90_f16|samples/gemm_sm90.tile|s/x/x/||0|0
sm90_f16_d|samples/gemm_sm90.tile|s/x/x/|--epilogue=direct|0|0
sm90_f16_ws|samples/gemm_sm90.tile|s/x/x/|--warp-specialize|0|0
gemm_f16_r0|samples/gemm.tile|s/x/x/|--raster-group=0|0|0
gemm_f16|samples/gemm.tile|s/x/x/||0|0
gemm_f16_d|samples/gemm.tile|s/x/x/|--epilogue=direct|0|0
sm90_bf16_r0|samples/gemm_sm90.tile|s/f16/bf16/g|--raster-group=0|1|0
sm90_bf16|samples/gemm_sm90.tile|s/f16/bf16/g||1|0
sm90_bf16_d|samples/gemm_sm90.tile|s/f16/bf16/g|--epilogue=direct|1|0
sm90_bf16_ws|samples/gemm_sm90.tile|s/f16/bf16/g|--warp-specialize|1|0
gemm_bf16|samples/gemm.tile|s/f16/bf16/g||1|0
fp8|test/gpu/gemm_fp8_bench.tile|s/x/x/||2|1
fp8_d|test/gpu/gemm_fp8_bench.tile|s/x/x/|--epilogue=direct|2|1
fp8_256|test/gpu/gemm_fp8_bench.tile|s/x/x/|-D BN=256|2|1
fp8_256_d|test/gpu/gemm_fp8_bench.tile|s/x/x/|-D BN=256 --epilogue=direct|2|1
fp8_ws_256_s|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize --epilogue=shared -D BN=256|2|1
fp8_ws_r0|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize --raster-group=0|2|1
fp8_ws|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize|2|1
sm90_f16_p|samples/gemm_sm90.tile|s/x/x/|--persistent|0|0
sm90_f16_p_d|samples/gemm_sm90.tile|s/x/x/|--persistent --epilogue=direct|0|0
sm90_f16_wsp|samples/gemm_sm90.tile|s/x/x/|--warp-specialize --persistent|0|0
sm90_bf16_wsp|samples/gemm_sm90.tile|s/f16/bf16/g|--warp-specialize --persistent|1|0
fp8_wsp|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize --persistent|2|1
sm90_f16_ep|test/gpu/gemm_sm90_epilogue.tile|s/x/x/||0|0
sm90_f16_epl|test/gpu/gemm_sm90_epilogue.tile|s/copy(o, Cs);/annotate_layout(Cs, linear); copy(o, Cs);/||0|0
sm90_f16_ep_p|test/gpu/gemm_sm90_epilogue.tile|s/x/x/|--persistent|0|0
fp8_ws_256|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize -D BN=256|2|1
fp8_wsp_256|test/gpu/gemm_fp8_bench.tile|s/x/x/|--warp-specialize --persistent -D BN=256|2|1
i8|test/gpu/gemm_int8_bench.tile|s/x/x/||3|1
i8_d|test/gpu/gemm_int8_bench.tile|s/x/x/|--epilogue=direct|3|1
i8_ws|test/gpu/gemm_int8_bench.tile|s/x/x/|--warp-specialize|3|1
i8_wsp|test/gpu/gemm_int8_bench.tile|s/x/x/|--warp-specialize --persistent|3|1
"
: >"$W/variants.inc"
echo "$variants" | while IFS='|' read -r n src sedx flags dt nt; do
	[ -n "$n" ] || continue
	# ONLY="a b": just those variants
	if [ -n "${ONLY:-}" ]; then case " $ONLY " in *" $n "*) ;; *) continue ;; esac; fi
	k=$(sed -n 's/^kernel \([a-z0-9_]*\)(.*/\1/p' "$src" | head -1)
	K=$(echo "$k" | tr a-z A-Z); N=$(echo "$n" | tr a-z A-Z)
	sed "$sedx" "$src" >"$W/$n.tile"
	# shellcheck disable=SC2086
	"$T" --arch=sm_90a $flags "$W/$n.tile" -o "$W/$n.cu" --header "$W/$n.h" 2>"$W/$n.err" || { cat "$W/$n.err"; exit 1; }
	sed -e "s/\b$k\b/k_$n/g" -e '/#include "tilec_cuda.h"/d' "$W/$n.cu" >"$W/$n.k.cu"
	sed -e "s/\b$k\b/k_$n/g" -e "s/_${k}_/_k_${n}_/g" -e "s/tilec_launch_${k}(/tilec_launch_k_${n}(/g" \
		-e "s/TILEC_${K}_/TILEC_K_${N}_/g" -e "s/TILEC_GEN_${K}_H/TILEC_GEN_K_${N}_H/g" \
		-e '/#include "tilec_cuda.h"/d' -e '/^#ifdef __CUDACC__/,/^#endif \/\* __CUDACC__ \*\//d' "$W/$n.h" >"$W/$n.k.h"
	{
		echo '#include <cuda.h>'; echo '#include <cuda_runtime.h>'; echo '#include "tilec_cuda.h"'
		echo "#include \"$n.k.cu\""; echo "#include \"$n.k.h\""
		echo "extern \"C\" CUresult L_$n(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int M, int K, int N)"
		echo "{ static CUfunction f; if (!f) { cudaFunction_t g; if (cudaGetFuncBySymbol(&g, (const void *)k_$n) != cudaSuccess) return CUDA_ERROR_NOT_FOUND; f = (CUfunction)g; }"
		echo "  return tilec_launch_k_$n(f, 0, a, b, c, M, K, N); }"
	} >"$W/v_$n.cu"
	echo "V($n, $dt, $nt, \"$flags\")" >>"$W/variants.inc"
done
objs=""
for f in "$W"/v_*.cu; do
	o=${f%.cu}.o; objs="$objs $o"
	"$NVCC" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$W" -Itemplates -Xptxas -v -c -o "$o" "$f" \
		>"$o.log" 2>&1 &
done
wait
for f in "$W"/v_*.o.log; do grep -q 'error' "$f" && { cat "$f"; exit 1; }; grep -h 'Used\|spill' "$f" | sed "s|^|$(basename "$f" .o.log): |" || true; done
"$NVCC" -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I"$W" -Itemplates -o "$W/gemm_bench" \
	test/gpu/gemm_bench.cu $objs -lcublas -lcublasLt -lcuda
"$W/gemm_bench" "$@"
