// main.cu: runs the gemm that tilec generated at build time (gemm.cu, gemm.h) through both
// launchers of gemm.h: tilec_gemm (runtime API) and tilec_launch_gemm (driver API, with the
// CUfunction of the same kernel), and checks C = A * B against an fp64 CPU reference on every
// element. Sizes the kernel cannot take must be refused before any launch.
// Exit 0: all passed; 1: a failure; 77: no GPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include "gemm.h"

static int failures;

static unsigned short
f2h(float f) // round to nearest even; normal range only (the inputs are in [-1, 1])
{
	unsigned u;
	memcpy(&u, &f, 4);
	unsigned sign = (u >> 16) & 0x8000u;
	int e = (int)((u >> 23) & 0xff) - 127 + 15;
	unsigned m = u & 0x7fffffu;
	if (e <= 0)
		return (unsigned short)sign; // tiny values flush to zero
	unsigned h = sign | ((unsigned)e << 10) | (m >> 13), rest = m & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
		h++;
	return (unsigned short)h;
}

static float
h2f(unsigned short h)
{
	unsigned sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, u;
	if (e == 0) {
		float f = ldexpf((float)m, -24);
		return sign ? -f : f;
	}
	u = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e - 15 + 127) << 23) | (m << 13);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static unsigned rng = 7;
static float frand() { rng = rng * 1664525u + 1013904223u; return (rng >> 8) / 16777216.0f * 2 - 1; }

static void
run(int M, int N, int K, bool driver)
{
	std::vector<unsigned short> hA((size_t)M * K), hB((size_t)K * N), hC((size_t)M * N);
	for (auto &x : hA) x = f2h(frand());
	for (auto &x : hB) x = f2h(frand());
	tl_half_t *A, *B, *C;
	CK(cudaMalloc(&A, hA.size() * 2));
	CK(cudaMalloc(&B, hB.size() * 2));
	CK(cudaMalloc(&C, hC.size() * 2));
	CK(cudaMemcpy(A, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, hC.size() * 2)); // NaN: an unwritten element fails
	if (driver) {
		cudaFunction_t f;
		CK(cudaGetFuncBySymbol(&f, (const void *)gemm));
		CUresult r = tilec_launch_gemm((CUfunction)f, 0, (CUdeviceptr)A, (CUdeviceptr)B,
					       (CUdeviceptr)C, M, K, N);
		if (r != CUDA_SUCCESS) {
			printf("FAIL tilec_launch_gemm %dx%dx%d: CUresult %d\n", M, N, K, (int)r);
			failures++;
		}
	} else {
		CK(tilec_gemm(A, B, C, M, K, N, 0));
	}
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hC.data(), C, hC.size() * 2, cudaMemcpyDeviceToHost));
	double num = 0, den = 0;
	long bad = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double ref = 0;
			for (int k = 0; k < K; k++)
				ref += (double)h2f(hA[(size_t)i * K + k]) * h2f(hB[(size_t)k * N + j]);
			double got = h2f(hC[(size_t)i * N + j]);
			if (!std::isfinite(got))
				bad++;
			num += (got - ref) * (got - ref);
			den += ref * ref;
		}
	double rel = std::sqrt(num / (den > 0 ? den : 1));
	bool ok = bad == 0 && rel < 1e-2;
	printf("%s %s %dx%dx%d: rel err %.2e, %ld non-finite\n", ok ? "ok  " : "FAIL",
	       driver ? "tilec_launch_gemm" : "tilec_gemm       ", M, N, K, rel, bad);
	failures += !ok;
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
}

int
main()
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("no CUDA device\n");
		return 77;
	}
	run(512, 384, 256, false);
	run(200, 296, 136, false); // ragged M and N edges
	run(512, 384, 256, true);
	run(200, 296, 136, true);
	// N and K that are not multiples of 8 take the kernel's element-by-element body
	run(200, 203, 205, false);
	run(200, 203, 205, true);
	// sizes the kernel cannot take are refused before a launch; an empty grid launches nothing
	bool refused = tilec_gemm(nullptr, nullptr, nullptr, -1, 64, 64, 0) == cudaErrorInvalidValue &&
		       tilec_gemm(nullptr, nullptr, nullptr, 64, -8, 64, 0) == cudaErrorInvalidValue &&
		       tilec_gemm(nullptr, nullptr, nullptr, 0, 64, 64, 0) == cudaSuccess; // empty grid
	printf("%s bad sizes refused, empty grid a no-op\n", refused ? "ok  " : "FAIL");
	failures += !refused;
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
