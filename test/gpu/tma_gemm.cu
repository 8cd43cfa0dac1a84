// tma_gemm.cu: the cp.async and the TMA (--tma) lowerings of samples/gemm_sm90.tile and
// samples/gemm.tile for sm_90a, launched through tilec's driver-API launchers
// (tilec_launch_<kernel>, which build the TMA tensor maps), checked against fp64 at ragged
// sizes (every element, or ~4000 sampled at large sizes) and timed against cuBLAS (median of
// 20, same run). Built and run by tma_gemm.sh.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tilec_cuda.h"
#include "gemm_sm90_cpa.k.cu"
#include "gemm_sm90_tma.k.cu"
#include "gemm_cpa.k.cu"
#include "gemm_tma.k.cu"
#include "gemm_sm90_cpa.k.h"
#include "gemm_sm90_tma.k.h"
#include "gemm_cpa.k.h"
#include "gemm_tma.k.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { fprintf(stderr, "%s:%d: CUresult %d\n", __FILE__, __LINE__, (int)e_); exit(1); } } while (0)

__global__ void fill(tl_half_t *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned x = (unsigned)i * 2654435761u + seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
		p[i] = tl_f2h(((x & 0xffff) / 32768.0f) - 1.0f);
	}
}
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static CUfunction fn(const void *sym) { cudaFunction_t f; CK(cudaGetFuncBySymbol(&f, sym)); return (CUfunction)f; }

int main(int argc, char **argv)
{
	(void)argv;
	const int nsizes = argc > 1 ? 7 : 10; // any argument: the ragged sizes only (compute-sanitizer)
	cublasHandle_t h;
	cublasCreate(&h);
	CUfunction f[4] = {fn((const void *)gemm_sm90_cpa), fn((const void *)gemm_sm90_tma), fn((const void *)gemm_cpa),
			   fn((const void *)gemm_tma)};
	const char *names[4] = {"gemm_sm90 cp.async", "gemm_sm90 tma", "gemm cp.async", "gemm tma"};
	int sizes[][3] = {{1000, 1016, 1000}, {256, 512, 64}, {130, 264, 8}, {200, 264, 136}, {1001, 1003, 999},
			  {8, 16, 8}, {136, 8, 520}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}};
	int fails = 0;
	for (int si = 0; si < nsizes; si++) {
		int M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
		size_t sA = (size_t)M * K, sB = (size_t)K * N, sC = (size_t)M * N;
		tl_half_t *A, *B, *C, *Cb;
		CK(cudaMalloc(&A, sA * 2)); CK(cudaMalloc(&B, sB * 2)); CK(cudaMalloc(&C, sC * 2)); CK(cudaMalloc(&Cb, sC * 2));
		fill<<<1024, 256>>>(A, sA, 17); fill<<<1024, 256>>>(B, sB, 91);
		CK(cudaDeviceSynchronize());
		float alpha = 1, beta = 0;
		auto cub = [&]() { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A, CUDA_R_16F, K, &beta, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); };
		CUdeviceptr dA = (CUdeviceptr)A, dB = (CUdeviceptr)B, dC = (CUdeviceptr)C;
		auto launch = [&](int v) -> CUresult {
			switch (v) {
			case 0: return tilec_launch_gemm_sm90_cpa(f[0], 0, dA, dB, dC, M, K, N);
			case 1: return tilec_launch_gemm_sm90_tma(f[1], 0, dA, dB, dC, M, K, N);
			case 2: return tilec_launch_gemm_cpa(f[2], 0, dA, dB, dC, M, K, N);
			default: return tilec_launch_gemm_tma(f[3], 0, dA, dB, dC, M, K, N);
			}
		};
		std::vector<__half> hA(sA), hB(sB), hC(sC);
		CK(cudaMemcpy(hA.data(), A, sA * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hB.data(), B, sB * 2, cudaMemcpyDeviceToHost));
		float ms[5] = {0};
		for (int v = 0; v < 5; v++) {
			auto run = [&]() { if (v < 4) CU(launch(v)); else cub(); };
			if (v < 4) {
				CK(cudaMemset(C, 0xff, sC * 2));
				run(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
				CK(cudaMemcpy(hC.data(), C, sC * 2, cudaMemcpyDeviceToHost));
				double num = 0, den = 0; int bad = 0, n = 0;
				size_t stepi = sC > 2000000 ? 4099 : 1;
				for (size_t e = 0; e < sC; e += stepi, n++) {
					size_t i = e / N, j = e % N; double ref = 0;
					for (int k = 0; k < K; k++) ref += (double)__half2float(hA[i * K + k]) * (double)__half2float(hB[(size_t)k * N + j]);
					double g = __half2float(hC[e]);
					if (!std::isfinite(g) || fabs(g - ref) > 0.02 + 0.01 * fabs(ref)) bad++;
					num += (g - ref) * (g - ref); den += ref * ref;
				}
				fails += bad > 0;
				printf("%5dx%5dx%5d %-20s checked %8d bad %d rel. err. %.2e\n", M, N, K, names[v], n, bad, sqrt(num / (den + 1e-30)));
			}
			if (M >= 2048) {
				std::vector<float> t; cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
				for (int w = 0; w < 5; w++) run();
				for (int it = 0; it < 20; it++) { float x; cudaEventRecord(e0); run(); cudaEventRecord(e1); cudaEventSynchronize(e1); cudaEventElapsedTime(&x, e0, e1); t.push_back(x); }
				ms[v] = median(t);
			}
		}
		if (M >= 2048) {
			double fl = 2.0 * M * N * K;
			printf("%5dx%5dx%5d TFLOP/s (ratio to cuBLAS): cuBLAS %.1f", M, N, K, fl / ms[4] / 1e9);
			for (int v = 0; v < 4; v++)
				printf(" | %s %.1f (%.3f)", names[v], fl / ms[v] / 1e9, ms[4] / ms[v]);
			printf("\n");
		}
		cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(Cb);
	}
	printf("%s\n", fails ? "FAILED" : "all correct");
	return fails != 0;
}
