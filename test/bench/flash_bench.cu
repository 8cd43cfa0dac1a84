// flash_bench.cu: times the CUDA tilec emits for samples/flash_fwd.tile (P in registers),
// test/cpu/flash_smem_p.tile -D D=128 (P through shared memory: wgmma for both gemms on
// sm_90a) and the variants gpu.sh's FLASH_EXTRA adds, head dim 128, causal and not,
// [B*H, L, D] f16, at L = 4096 and 8192, B*H = 32, checks sampled rows of each against an
// fp64 CPU reference, and prints one FLASH line per case for
// test/bench/flash_torch.py, which times torch's scaled_dot_product_attention on the same
// shapes and prints the ratios. Built and run by test/bench/gpu.sh (section "flash").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "tilec_cuda.h"
// the variants' kernels <name>_d128_c0 and _c1, each with its --header launcher (driver API:
// the dynamic shared memory, the TMA tensor maps) and L_<kernel>(Q, K, V, O, BH, L) calling it
// (written by gpu.sh)
#include "flash_kernels.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

#define CKD(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "%s:%d: CUresult %d\n", __FILE__, __LINE__, (int)r_); exit(1); } } while (0)

typedef CUresult (*FlashKernel)(tl_half_t *, tl_half_t *, tl_half_t *, tl_half_t *, int, int);
static unsigned rng = 12345;
static float frand() { rng = rng * 1664525u + 1013904223u; return ((rng >> 8) / 16777216.0f) * 2.0f - 1.0f; }

/* a variant: its name, tilec flags, launchers [causal] */
struct Variant { const char *name, *flags; FlashKernel k[2]; };
static const Variant vars[] = {
#define FV(n, f) {#n, f, {L_##n##_d128_c0, L_##n##_d128_c1}},
#include "flash_variants.h"
#undef FV
};
enum { NV = sizeof vars / sizeof vars[0] };

int main()
{
	const int D = 128, BH = 32, Ls[2] = {4096, 8192};
	int fails = 0;

	CK(cudaFree(0)); // the runtime's primary context, current for the driver-API launchers
	for (int li = 0; li < 2; li++) {
		int L = Ls[li];
		size_t n = (size_t)BH * L * D;
		std::vector<__half> hQ(n), hK(n), hV(n), hO(n);
		for (size_t i = 0; i < n; i++) hQ[i] = __float2half(frand()), hK[i] = __float2half(frand()), hV[i] = __float2half(frand());
		tl_half_t *Q, *K, *V, *O;
		CK(cudaMalloc(&Q, n * 2)); CK(cudaMalloc(&K, n * 2)); CK(cudaMalloc(&V, n * 2)); CK(cudaMalloc(&O, n * 2));
		CK(cudaMemcpy(Q, hQ.data(), n * 2, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(K, hK.data(), n * 2, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(V, hV.data(), n * 2, cudaMemcpyHostToDevice));
		for (int vc = 0; vc < 2 * NV; vc++) {
			int v = vc / 2, c = vc % 2;
			const FlashKernel *kern = vars[v].k;
			CK(cudaMemset(O, 0xff, n * 2));
			CKD(kern[c](Q, K, V, O, BH, L));
			CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
			CK(cudaMemcpy(hO.data(), O, n * 2, cudaMemcpyDeviceToHost));
			/* 48 rows of the first and the last head against fp64 */
			double num = 0, den = 0; long bad = 0;
			std::vector<double> s(L);
			for (int h = 0; h < BH; h += BH - 1)
				for (int i = 0; i < L; i += L / 48 + 1) {
					int nk = c ? i + 1 : L;
					double m = -INFINITY, sum = 0;
					for (int j = 0; j < nk; j++) {
						double d = 0;
						for (int x = 0; x < D; x++)
							d += (double)__half2float(hQ[((size_t)h * L + i) * D + x]) * (double)__half2float(hK[((size_t)h * L + j) * D + x]);
						s[j] = d / sqrt((double)D), m = std::max(m, s[j]);
					}
					for (int j = 0; j < nk; j++) s[j] = exp(s[j] - m), sum += s[j];
					for (int x = 0; x < D; x++) {
						double ref = 0, got = __half2float(hO[((size_t)h * L + i) * D + x]);
						for (int j = 0; j < nk; j++) ref += s[j] * (double)__half2float(hV[((size_t)h * L + j) * D + x]);
						ref /= sum;
						bad += !std::isfinite(got);
						num += (got - ref) * (got - ref), den += ref * ref;
					}
				}
			double rel = sqrt(num / (den > 0 ? den : 1));
			cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
			std::vector<float> t;
			for (int it = 0; it < 25; it++) {
				float ms;
				CK(cudaEventRecord(e0)); CKD(kern[c](Q, K, V, O, BH, L)); CK(cudaEventRecord(e1));
				CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 5) t.push_back(ms);
			}
			std::sort(t.begin(), t.end());
			double ms = t[t.size() / 2], fl = 4.0 * BH * (double)L * L * D * (c ? 0.5 : 1.0);
			int ok = bad == 0 && rel < 1e-2;
			fails += !ok;
			printf("FLASH d=%d causal=%d bh=%d l=%d ms=%.4f tflops=%.1f relerr=%.2e %s kernel=%s\n", D, c, BH, L, ms,
			       fl / ms / 1e9, rel, ok ? "ok" : "FAIL", vars[v].name);
		}
		cudaFree(Q); cudaFree(K); cudaFree(V); cudaFree(O);
	}
	return fails != 0;
}
