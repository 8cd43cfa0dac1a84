// gemm_bench.cu: the GEMM variants gemm_bench.sh emitted (variants.inc: name, operand type,
// B stored [N, K], tilec flags), launched through their driver-API launchers: checked against
// an fp64 reference (every element at ragged sizes, ~4000 sampled at the timed ones; the output
// poisoned before each check) and timed against cuBLAS / cuBLASLt in the same run: CUDA events,
// 5 warm-ups, the median of 20, two input sets used in turn. --quick: 4096^3 and the skinny shape;
// --ragged: the checks at the ragged sizes only (under compute-sanitizer).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { fprintf(stderr, "%s:%d: CUresult %d\n", __FILE__, __LINE__, (int)e_); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s:%d: cublas status %d\n", __FILE__, __LINE__, (int)e_); exit(1); } } while (0)

typedef CUresult (*LaunchFn)(CUdeviceptr, CUdeviceptr, CUdeviceptr, int, int, int);
#define V(n, dt, nt, flags) extern "C" CUresult L_##n(CUdeviceptr, CUdeviceptr, CUdeviceptr, int, int, int);
#include "variants.inc"
#undef V
struct Variant { const char *name; int dt, nt; const char *flags; LaunchFn fn; };
static Variant vars[] = {
#define V(n, dt, nt, flags) {#n, dt, nt, flags, L_##n},
#include "variants.inc"
#undef V
};
enum { NV = sizeof vars / sizeof vars[0] };
enum { NDT = 4 }; // f16, bf16, fp8 e4m3 (f16 out), int8 (i32 out)
static const char *dtname[NDT] = {"f16", "bf16", "fp8 e4m3", "int8"};
static const int esize[NDT] = {2, 2, 1, 1}, osize[NDT] = {2, 2, 2, 4};

// random values in [-1, 1) of the operand type (fp8: e4m3 of such values; int8: any byte)
__global__ void fill(void *p, size_t n, unsigned seed, int dt)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned x = (unsigned)i * 2654435761u + seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
		float v = ((x & 0xffff) / 32768.0f) - 1.0f;
		if (dt == 0) ((__half *)p)[i] = __float2half(v);
		else if (dt == 1) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
		else if (dt == 2) ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(v);
		else ((signed char *)p)[i] = (signed char)(x >> 3);
	}
}
static double in(const std::vector<unsigned char> &h, size_t i, int dt)
{
	if (dt == 0) { __half x; memcpy(&x, &h[2 * i], 2); return __half2float(x); }
	if (dt == 1) { __nv_bfloat16 x; memcpy(&x, &h[2 * i], 2); return __bfloat162float(x); }
	if (dt == 3) return (signed char)h[i];
	__nv_fp8_e4m3 x; memcpy(&x, &h[i], 1); return (float)x;
}
static double out(const std::vector<unsigned char> &h, size_t i, int dt)
{
	if (dt == 1) { __nv_bfloat16 x; memcpy(&x, &h[2 * i], 2); return __bfloat162float(x); }
	if (dt == 3) { int x; memcpy(&x, &h[4 * i], 4); return x; }
	__half x; memcpy(&x, &h[2 * i], 2); return __half2float(x); // f16 and fp8 (f16 out)
}
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static cublasHandle_t hb;
static cublasLtHandle_t hlt;
static void *ltws;
static const size_t LTWS = 64u << 20;

// the library's C = A * B (row-major A [M, K], B [K, N] or [N, K]) into C (row-major)
static void ref_gemm(int dt, int nt, const void *A, const void *B, void *C, int M, int N, int K)
{
	float alpha = 1, beta = 0;
	if (dt < 2) {
		cudaDataType t = dt == 0 ? CUDA_R_16F : CUDA_R_16BF;
		// column-major: C^T [N, M] = op(B) [N, K] x A^T [K, M]
		CB(cublasGemmEx(hb, nt ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, t, nt ? K : N, A, t, K,
				&beta, C, t, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
		return;
	}
	if (dt == 3) {
		// int8, i32 out: the TN form the integer tensor-core kernels take (B stored [N, K])
		int ia = 1, ib = 0;
		CB(cublasGemmEx(hb, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &ia, B, CUDA_R_8I, K, A, CUDA_R_8I, K, &ib, C,
				CUDA_R_32I, N, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
		return;
	}
	// fp8: cuBLASLt wants A transposed and B not (TN): C^T [N, M] = B^T... with B stored [N, K]
	static cublasLtMatmulDesc_t op;
	static cublasLtMatrixLayout_t la, lb, lc;
	static cublasLtMatmulAlgo_t algo;
	static int m0, n0, k0;
	if (m0 != M || n0 != N || k0 != K) {
		if (op) { cublasLtMatmulDescDestroy(op); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc); }
		CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
		cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
		CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
		CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
		// "A" of cuBLASLt is our B ([N, K] row-major = K x N column-major, transposed: N x K)
		CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K));
		CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K));
		CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, N, M, N));
		cublasLtMatmulPreference_t pref;
		CB(cublasLtMatmulPreferenceCreate(&pref));
		CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &LTWS, sizeof LTWS));
		cublasLtMatmulHeuristicResult_t r; int got = 0;
		CB(cublasLtMatmulAlgoGetHeuristic(hlt, op, la, lb, lc, lc, pref, 1, &r, &got));
		if (!got) { fprintf(stderr, "cuBLASLt: no fp8 algorithm for %dx%dx%d\n", M, N, K); exit(1); }
		algo = r.algo;
		cublasLtMatmulPreferenceDestroy(pref);
		m0 = M, n0 = N, k0 = K;
	}
	CB(cublasLtMatmul(hlt, op, &alpha, B, la, A, lb, &beta, C, lc, C, lc, &algo, ltws, LTWS, 0));
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int ragged = argc > 1 && !strcmp(argv[1], "--ragged"); // the untimed sizes only
	CB(cublasCreate(&hb));
	CB(cublasLtCreate(&hlt));
	CK(cudaMalloc(&ltws, LTWS));
	int sizes[][3] = {{1000, 1016, 1000}, {200, 264, 136}, {130, 264, 8}, {1001, 1008, 1024}, {136, 8, 520},
			  {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {128, 8192, 8192}};
	const int nsz = sizeof sizes / sizeof sizes[0];
	int fails = 0;
	// results[v][size]: ratio to the library, 0 where not timed
	static double tf[NV][16], lib[NDT][16];
	for (int si = 0; si < nsz; si++) {
		int M = sizes[si][0], N = sizes[si][1], K = sizes[si][2];
		int timed = M >= 2048 || K >= 8192;
		if (quick && timed && !(M == 4096 || M == 128)) continue;
		if (ragged && timed) continue;
		for (int dt = 0; dt < NDT; dt++) {
			size_t sA = (size_t)M * K, sB = (size_t)K * N, sC = (size_t)M * N;
			unsigned char *A[2], *B[2], *C, *Cb;
			for (int s = 0; s < 2; s++) {
				CK(cudaMalloc(&A[s], sA * esize[dt])); CK(cudaMalloc(&B[s], sB * esize[dt]));
				fill<<<1024, 256>>>(A[s], sA, 17 + 100 * s, dt); fill<<<1024, 256>>>(B[s], sB, 91 + 100 * s, dt);
			}
			CK(cudaMalloc(&C, sC * osize[dt])); CK(cudaMalloc(&Cb, sC * osize[dt]));
			CK(cudaDeviceSynchronize());
			std::vector<unsigned char> hA(sA * esize[dt]), hB(sB * esize[dt]), hC(sC * osize[dt]);
			CK(cudaMemcpy(hA.data(), A[0], hA.size(), cudaMemcpyDeviceToHost));
			CK(cudaMemcpy(hB.data(), B[0], hB.size(), cudaMemcpyDeviceToHost));
			// fp8 and int8 run B [N, K] only (the libraries' layouts there); f16/bf16 B [K, N] unless a variant says
			for (int v = -1; v < NV; v++) {
				int nt = v < 0 ? (dt >= 2) : vars[v].nt;
				if (v >= 0 && vars[v].dt != dt) continue;
				auto run = [&](int s) {
					if (v < 0) ref_gemm(dt, nt, A[s], B[s], Cb, M, N, K);
					else CU(vars[v].fn((CUdeviceptr)A[s], (CUdeviceptr)B[s], (CUdeviceptr)C, M, K, N));
				};
				if (v < 0 && !timed) continue; // the library is the timing baseline only
				if (v >= 0) {
					CK(cudaMemset(C, 0xff, sC * osize[dt]));
					run(0); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
					CK(cudaMemcpy(hC.data(), C, hC.size(), cudaMemcpyDeviceToHost));
					double num = 0, den = 0; int bad = 0, n = 0;
					size_t stepi = sC > 2000000 ? 4099 : (double)sC * K > 3e8 ? 7 : 1; // 7, 4099: odd strides meet every column
					for (size_t e = 0; e < sC; e += stepi, n++) {
						size_t i = e / N, j = e % N; double ref = 0;
						for (int k = 0; k < K; k++)
							ref += in(hA, i * K + k, dt) * in(hB, nt ? j * K + k : (size_t)k * N + j, dt);
						double g = out(hC, e, dt);
						double tol = dt == 3 ? 0 : (dt == 1 ? 0.06 : 0.02) + (dt == 1 ? 0.01 : 0.005) * fabs(ref); // int8: exact
						if (!std::isfinite(g) || fabs(g - ref) > tol) bad++;
						num += (g - ref) * (g - ref); den += ref * ref;
					}
					fails += bad > 0;
					printf("%5dx%5dx%5d %-16s %-10s checked %8d bad %d rel. err. %.2e%s\n", M, N, K, vars[v].name,
					       dtname[dt], n, bad, sqrt(num / (den + 1e-30)), bad ? "  FAIL" : "");
				}
				if (timed) {
					std::vector<float> t; cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
					for (int w = 0; w < 5; w++) run(w & 1);
					CK(cudaDeviceSynchronize());
					for (int it = 0; it < 20; it++) {
						float x; cudaEventRecord(e0); run(it & 1); cudaEventRecord(e1); cudaEventSynchronize(e1);
						cudaEventElapsedTime(&x, e0, e1); t.push_back(x);
					}
					CK(cudaGetLastError());
					double ms = median(t), fl = 2.0 * M * N * K / ms / 1e9;
					if (v < 0) lib[dt][si] = fl; else tf[v][si] = fl;
					cudaEventDestroy(e0); cudaEventDestroy(e1);
				}
			}
			for (int s = 0; s < 2; s++) { cudaFree(A[s]); cudaFree(B[s]); }
			cudaFree(C); cudaFree(Cb);
		}
	}
	printf("\n| variant | type | tilec flags |");
	for (int si = 0; si < nsz; si++) if (lib[0][si] > 0) printf(" %dx%dx%d |", sizes[si][0], sizes[si][1], sizes[si][2]);
	printf("\n|---|---|---|");
	for (int si = 0; si < nsz; si++) if (lib[0][si] > 0) printf("---|");
	printf("\n");
	for (int dt = 0; dt < NDT; dt++) {
		printf("| %s | %s | |", dt == 2 ? "cuBLASLt" : "cuBLAS", dtname[dt]);
		for (int si = 0; si < nsz; si++) if (lib[0][si] > 0) printf(" %.1f TFLOP/s |", lib[dt][si]);
		printf("\n");
		for (int v = 0; v < NV; v++) {
			if (vars[v].dt != dt) continue;
			printf("| %s | %s | %s |", vars[v].name, dtname[dt], vars[v].flags[0] ? vars[v].flags : "(default)");
			for (int si = 0; si < nsz; si++)
				if (lib[0][si] > 0) printf(" %.1f (**%.3f**) |", tf[v][si], tf[v][si] / lib[dt][si]);
			printf("\n");
		}
	}
	printf("%s\n", fails ? "FAILED" : "all correct");
	return fails != 0;
}
