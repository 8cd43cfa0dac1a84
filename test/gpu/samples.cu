// samples.cu: runs the CUDA that tilec emitted for the samples on a GPU, on random data,
// against an fp64 CPU reference (every element at the small sizes, sampled at the large ones;
// ragged sizes whose rows are not whole vectors take the emitted scalar fallback),
// outputs poisoned first so an unwritten element fails; then times them against cuBLAS and a
// device-to-device copy in the same run. Built by test/gpu/samples.sh from the files tilec wrote.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "emitted.h" // the emitted kernels and their shared-memory sizes (SMEM_<kernel>)

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static int failures = 0, checks = 0;
static void verdict(const char *what, bool ok, const char *detail)
{
	checks++;
	if (!ok) failures++;
	printf("%-44s %s  %s\n", what, ok ? "ok  " : "FAIL", detail);
}

static unsigned rng_state = 12345;
static float frand() { rng_state = rng_state * 1664525u + 1013904223u; return ((rng_state >> 8) / 16777216.0f) * 2.0f - 1.0f; }
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

template <class T> static T *dalloc(size_t n) { T *p; CK(cudaMalloc(&p, n * sizeof(T))); return p; }
static std::vector<__half> rand_half(size_t n) { std::vector<__half> v(n); for (auto &x : v) x = __float2half(frand()); return v; }

// ---- gemm: C = A * B, f16 in, f32 accumulate, f16 out --------------------------------
template <class Elt>
static void check_gemm(const char *name, void (*kern)(tl_half_t *, tl_half_t *, tl_half_t *, int, int, int),
		       int smem, int M, int N, int K, int full, cublasHandle_t h, bool timeit, int threads = 128, int bn = 128)
{
	size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N;
	std::vector<Elt> hA(sa), hB(sb), hC(sc);
	for (auto &x : hA) x = Elt(frand());
	for (auto &x : hB) x = Elt(frand());
	tl_half_t *A = dalloc<tl_half_t>(sa), *B = dalloc<tl_half_t>(sb), *C = dalloc<tl_half_t>(sc);
	CK(cudaMemcpy(A, hA.data(), sa * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), sb * 2, cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, sc * 2)); // NaN poison
	if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	dim3 grid(cdiv(N, bn), cdiv(M, 128));
	kern<<<grid, threads, smem>>>(A, B, C, M, K, N);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hC.data(), C, sc * 2, cudaMemcpyDeviceToHost));
	double num = 0, den = 0; long bad = 0, n = 0;
	size_t step = full ? 1 : 9973;
	for (size_t e = 0; e < sc; e += step, n++) {
		size_t i = e / N, j = e % N;
		double ref = 0;
		for (int k = 0; k < K; k++) ref += (double)float(hA[i * K + k]) * (double)float(hB[(size_t)k * N + j]);
		double got = float(hC[e]);
		if (!std::isfinite(got)) bad++;
		num += (got - ref) * (got - ref); den += ref * ref;
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	char d[160], w[96];
	snprintf(d, sizeof d, "%ld elements checked (%s), rel err %.2e, unwritten/nonfinite %ld", n, full ? "all" : "sampled", rel, bad);
	snprintf(w, sizeof w, "%s %dx%dx%d", name, M, N, K);
	verdict(w, bad == 0 && rel < 1e-2, d);
	if (timeit) {
		const int SETS = 3;
		tl_half_t *As[SETS], *Bs[SETS];
		for (int s = 0; s < SETS; s++) { As[s] = dalloc<tl_half_t>(sa); Bs[s] = dalloc<tl_half_t>(sb);
			CK(cudaMemcpy(As[s], hA.data(), sa * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(Bs[s], hB.data(), sb * 2, cudaMemcpyHostToDevice)); }
		float alpha = 1, beta = 0;
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
		std::vector<float> tk, tb;
		for (int it = 0; it < 35; it++) {
			int s = it % SETS; float ms;
			CK(cudaEventRecord(e0)); kern<<<grid, threads, smem>>>(As[s], Bs[s], C, M, K, N); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 5) tk.push_back(ms);
			CK(cudaEventRecord(e0));
			cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, Bs[s], CUDA_R_16F, N, As[s], CUDA_R_16F, K, &beta, C, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
			CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 5) tb.push_back(ms);
		}
		double fl = 2.0 * M * N * K;
		printf("BENCH %-22s %5dx%5dx%5d  tilec %7.1f TFLOP/s  cuBLAS %7.1f TFLOP/s  ratio %.3f\n", name, M, N, K,
		       fl / median(tk) / 1e9, fl / median(tb) / 1e9, median(tb) / median(tk));
		for (int s = 0; s < SETS; s++) { cudaFree(As[s]); cudaFree(Bs[s]); }
	}
	cudaFree(A); cudaFree(B); cudaFree(C);
}

// ---- gemm_strided: C = A * B on views of larger buffers (lda, ldb, ldc; a row and column
// offset into each), every element checked; the padding around the views must stay poisoned.
// off: the views' element offset (1: not 16-byte aligned, the element-by-element body)
static void check_gemm_strided(int M, int N, int K, int lda, int ldb, int ldc, int off, bool timeit)
{
	size_t sa = (size_t)(M + 2) * lda, sb = (size_t)(K + 2) * ldb, sc = (size_t)(M + 2) * ldc;
	std::vector<__half> hA(sa), hB(sb), hC(sc);
	for (auto &x : hA) x = __float2half(frand());
	for (auto &x : hB) x = __float2half(frand());
	tl_half_t *A = dalloc<tl_half_t>(sa), *B = dalloc<tl_half_t>(sb), *C = dalloc<tl_half_t>(sc);
	CK(cudaMemcpy(A, hA.data(), sa * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), sb * 2, cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, sc * 2)); // NaN poison, the padding's too
	// the views start at row 1, column off of each buffer
	size_t oa = (size_t)lda + off, ob = (size_t)ldb + off, oc = (size_t)ldc + off;
	if (SMEM_gemm_strided > 48 * 1024)
		CK(cudaFuncSetAttribute(gemm_strided, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_gemm_strided));
	dim3 grid(cdiv(N, 128), cdiv(M, 128));
	gemm_strided<<<grid, 128, SMEM_gemm_strided>>>(A + oa, B + ob, C + oc, M, K, lda, N, ldb, ldc);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hC.data(), C, sc * 2, cudaMemcpyDeviceToHost));
	double num = 0, den = 0; long bad = 0, pad = 0, checked = 0;
	// every element and the padding are looked at; the fp64 reference is computed for all of
	// them at small sizes and for a sample of about 4000 at large ones (the full reference of
	// a 4096^3 product is 7e10 multiply-adds on the host)
	size_t every = (double)M * N * K > 1e9 ? (size_t)M * N / 4000 + 1 : 1;
	for (size_t e = 0; e < sc; e++) {
		long r = (long)(e / ldc) - 1, c = (long)(e % ldc) - off;
		unsigned short bits; memcpy(&bits, &hC[e], 2);
		if (r < 0 || r >= M || c < 0 || c >= N) { pad += bits != 0xffff; continue; }
		if (!std::isfinite(float(hC[e]))) { bad++; continue; }
		if (((size_t)r * N + c) % every) continue;
		checked++;
		double ref = 0;
		for (int k = 0; k < K; k++)
			ref += (double)float(hA[oa + (size_t)r * lda + k]) * (double)float(hB[ob + (size_t)k * ldb + c]);
		double got = float(hC[e]);
		num += (got - ref) * (got - ref); den += ref * ref;
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	char d[200], w[96];
	snprintf(d, sizeof d, "%ld checked (%s), rel err %.2e, unwritten/nonfinite %ld, padding written %ld", checked,
		 every > 1 ? "sampled" : "all", rel, bad, pad);
	snprintf(w, sizeof w, "gemm_strided %dx%dx%d ld %d,%d,%d +%d", M, N, K, lda, ldb, ldc, off);
	verdict(w, bad == 0 && pad == 0 && rel < 1e-2, d);
	if (timeit) {
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
		std::vector<float> t;
		for (int it = 0; it < 25; it++) {
			float ms;
			CK(cudaEventRecord(e0));
			gemm_strided<<<grid, 128, SMEM_gemm_strided>>>(A + oa, B + ob, C + oc, M, K, lda, N, ldb, ldc);
			CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
			if (it >= 5) t.push_back(ms);
		}
		printf("BENCH %-22s %5dx%5dx%5d  tilec %7.1f TFLOP/s (ld %d,%d,%d +%d)\n", "gemm_strided", M, N, K,
		       2.0 * M * N * K / median(t) / 1e9, lda, ldb, ldc, off);
	}
	cudaFree(A); cudaFree(B); cudaFree(C);
}

// ---- splitk_gemm: C += A * B over SPLITS = 4 K slices, f16 in, f32 out through atomic tile adds
// (C zeroed first, as the sample's comment says); an fp64 reference; timed against cuBLAS with f32
// output (the zeroing of C included in tilec's time)
static void check_splitk(int M, int N, int K, int full, cublasHandle_t h, bool timeit)
{
	size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N;
	std::vector<__half> hA = rand_half(sa), hB = rand_half(sb);
	std::vector<float> hC(sc);
	tl_half_t *A = dalloc<tl_half_t>(sa), *B = dalloc<tl_half_t>(sb);
	float *C = dalloc<float>(sc);
	CK(cudaMemcpy(A, hA.data(), sa * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(B, hB.data(), sb * 2, cudaMemcpyHostToDevice));
	dim3 grid(cdiv(N, 128), cdiv(M, 128), 4);
	if (SMEM_splitk_gemm > 48 * 1024)
		CK(cudaFuncSetAttribute(splitk_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_splitk_gemm));
	CK(cudaMemset(C, 0, sc * 4));
	splitk_gemm<<<grid, 128, SMEM_splitk_gemm>>>(A, B, C, M, K, N);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hC.data(), C, sc * 4, cudaMemcpyDeviceToHost));
	double num = 0, den = 0; long bad = 0, n = 0;
	size_t step = full ? 1 : 9973;
	for (size_t e = 0; e < sc; e += step, n++) {
		size_t i = e / N, j = e % N;
		double ref = 0;
		for (int k = 0; k < K; k++) ref += (double)__half2float(hA[i * K + k]) * (double)__half2float(hB[(size_t)k * N + j]);
		double got = hC[e];
		if (!std::isfinite(got)) bad++;
		num += (got - ref) * (got - ref); den += ref * ref;
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	char d[160], w[96];
	snprintf(d, sizeof d, "%ld elements checked (%s), rel err %.2e, nonfinite %ld", n, full ? "all" : "sampled", rel, bad);
	snprintf(w, sizeof w, "splitk_gemm %dx%dx%d", M, N, K);
	verdict(w, bad == 0 && rel < 1e-4, d);
	if (timeit) {
		float alpha = 1, beta = 0;
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
		std::vector<float> tk, tb;
		for (int it = 0; it < 35; it++) {
			float ms;
			CK(cudaEventRecord(e0)); CK(cudaMemsetAsync(C, 0, sc * 4));
			splitk_gemm<<<grid, 128, SMEM_splitk_gemm>>>(A, B, C, M, K, N); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 5) tk.push_back(ms);
			CK(cudaEventRecord(e0));
			cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A, CUDA_R_16F, K, &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
			CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 5) tb.push_back(ms);
		}
		double fl = 2.0 * M * N * K;
		printf("BENCH %-22s %5dx%5dx%5d  tilec %7.1f TFLOP/s  cuBLAS %7.1f TFLOP/s  ratio %.3f\n", "splitk_gemm", M, N, K,
		       fl / median(tk) / 1e9, fl / median(tb) / 1e9, median(tb) / median(tk));
	}
	cudaFree(A); cudaFree(B); cudaFree(C);
}

static float memcpy_gbps(size_t bytes)
{
	void *a = dalloc<char>(bytes), *b = dalloc<char>(bytes);
	CK(cudaMemset(a, 1, bytes));
	cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
	std::vector<float> t;
	for (int i = 0; i < 23; i++) { float ms; CK(cudaEventRecord(e0)); CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
		CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms); }
	cudaFree(a); cudaFree(b);
	return 2.0 * bytes / median(t) / 1e6;
}

// ---- copy2d (and convert2d, a copy through a register-layout conversion): B = A --------
typedef void (*CopyKernel)(tl_half_t *, tl_half_t *, int, int);
static void check_copy(int M, int N, bool timeit, float copy_bw, const char *name = "copy2d",
		       CopyKernel kern = copy2d, int bm = 128, int smem = SMEM_copy2d)
{
	size_t n = (size_t)M * N;
	std::vector<__half> hA = rand_half(n), hB(n);
	tl_half_t *A = dalloc<tl_half_t>(n), *B = dalloc<tl_half_t>(n);
	CK(cudaMemcpy(A, hA.data(), n * 2, cudaMemcpyHostToDevice)); CK(cudaMemset(B, 0xff, n * 2));
	dim3 grid(cdiv(N, 64), cdiv(M, bm));
	if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	kern<<<grid, 128, smem>>>(A, B, M, N);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hB.data(), B, n * 2, cudaMemcpyDeviceToHost));
	long bad = 0;
	for (size_t i = 0; i < n; i++) bad += memcmp(&hA[i], &hB[i], 2) != 0;
	char w[64], d[96];
	snprintf(w, sizeof w, "%s %dx%d", name, M, N); snprintf(d, sizeof d, "%zu elements, %ld wrong", n, bad);
	verdict(w, bad == 0, d);
	if (timeit) {
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t;
		for (int i = 0; i < 23; i++) { float ms; CK(cudaEventRecord(e0)); kern<<<grid, 128, smem>>>(A, B, M, N); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms); }
		float bw = 2.0 * n * 2 / median(t) / 1e6;
		printf("BENCH %s %dx%d f16: %.0f GB/s = %.3f of cudaMemcpy D2D (%.0f GB/s)\n", name, M, N, bw, bw / copy_bw, copy_bw);
	}
	cudaFree(A); cudaFree(B);
}

// ---- elementwise: C = f16(max(f32(A) * alpha + f32(B), 0)) ---------------------------
static void check_elementwise(int M, int N, bool timeit, float copy_bw)
{
	size_t n = (size_t)M * N;
	std::vector<__half> hA = rand_half(n), hB = rand_half(n), hC(n);
	tl_half_t *A = dalloc<tl_half_t>(n), *B = dalloc<tl_half_t>(n), *C = dalloc<tl_half_t>(n);
	CK(cudaMemcpy(A, hA.data(), n * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(B, hB.data(), n * 2, cudaMemcpyHostToDevice));
	CK(cudaMemset(C, 0xff, n * 2));
	float alpha = 0.75f;
	dim3 grid(cdiv(N, 64), cdiv(M, 64));
	elementwise<<<grid, 128, SMEM_elementwise>>>(A, B, C, alpha, M, N);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hC.data(), C, n * 2, cudaMemcpyDeviceToHost));
	long bad = 0; double maxerr = 0;
	for (size_t i = 0; i < n; i++) {
		double ref = std::max((double)float(hA[i]) * alpha + (double)float(hB[i]), 0.0);
		double got = float(hC[i]);
		double err = fabs(got - ref);
		if (!std::isfinite(got) || err > 1e-3 + 1e-3 * fabs(ref)) bad++;
		maxerr = std::max(maxerr, err);
	}
	char w[64], d[128];
	snprintf(w, sizeof w, "elementwise %dx%d", M, N); snprintf(d, sizeof d, "%zu elements, %ld outside tolerance, max err %.2e", n, bad, maxerr);
	verdict(w, bad == 0, d);
	if (timeit) {
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t;
		for (int i = 0; i < 23; i++) { float ms; CK(cudaEventRecord(e0)); elementwise<<<grid, 128, SMEM_elementwise>>>(A, B, C, alpha, M, N); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms); }
		float bw = 3.0 * n * 2 / median(t) / 1e6;
		printf("BENCH elementwise %dx%d f16: %.0f GB/s = %.3f of cudaMemcpy D2D (%.0f GB/s)\n", M, N, bw, bw / copy_bw, copy_bw);
	}
	cudaFree(A); cudaFree(B); cudaFree(C);
}

// ---- transpose: B[N, M] = A[M, N]^T, f32 --------------------------------------------
static void check_transpose(int M, int N)
{
	size_t n = (size_t)M * N;
	std::vector<float> hA(n), hB(n);
	for (auto &x : hA) x = frand();
	float *A = dalloc<float>(n), *B = dalloc<float>(n);
	CK(cudaMemcpy(A, hA.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(B, 0xff, n * 4));
	dim3 grid(cdiv(N, 32), cdiv(M, 32));
	transpose<<<grid, 256, SMEM_transpose>>>(A, B, M, N);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hB.data(), B, n * 4, cudaMemcpyDeviceToHost));
	long bad = 0;
	for (int i = 0; i < M; i++) for (int j = 0; j < N; j++) bad += hB[(size_t)j * M + i] != hA[(size_t)i * N + j];
	char w[64], d[96];
	snprintf(w, sizeof w, "transpose %dx%d", M, N); snprintf(d, sizeof d, "%zu elements, %ld wrong", n, bad);
	verdict(w, bad == 0, d);
	cudaFree(A); cudaFree(B);
}

// ---- softmax: Y[i, :] = softmax(X[i, :]) over rows of W = 1024, f32 (reduce max, sum) --
static void check_softmax(int M, bool timeit, float copy_bw)
{
	const int W = 1024;
	size_t n = (size_t)M * W;
	std::vector<float> hX(n), hY(n);
	for (auto &x : hX) x = frand() * 8.0f;
	float *X = dalloc<float>(n), *Y = dalloc<float>(n);
	CK(cudaMemcpy(X, hX.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(Y, 0xff, n * 4)); // NaN poison
	dim3 grid(cdiv(M, 8));
	softmax<<<grid, 256, SMEM_softmax>>>(X, Y, M);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hY.data(), Y, n * 4, cudaMemcpyDeviceToHost));
	long bad = 0; double maxerr = 0;
	for (int i = 0; i < M; i++) {
		const float *x = &hX[(size_t)i * W];
		double m = -INFINITY, sum = 0;
		for (int j = 0; j < W; j++) m = std::max(m, (double)x[j]);
		for (int j = 0; j < W; j++) sum += exp((double)x[j] - m);
		for (int j = 0; j < W; j++) {
			double ref = exp((double)x[j] - m) / sum, got = hY[(size_t)i * W + j];
			double err = fabs(got - ref);
			if (!std::isfinite(got) || err > 1e-7 + 1e-4 * ref) bad++;
			if (std::isfinite(got)) maxerr = std::max(maxerr, err / (ref > 1e-30 ? ref : 1e-30));
		}
	}
	char w[64], d[128];
	snprintf(w, sizeof w, "softmax %dx%d", M, W);
	snprintf(d, sizeof d, "%zu elements, %ld outside tolerance, max rel err %.2e", n, bad, maxerr);
	verdict(w, bad == 0, d);
	if (timeit) {
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t;
		for (int i = 0; i < 23; i++) { float ms; CK(cudaEventRecord(e0)); softmax<<<grid, 256, SMEM_softmax>>>(X, Y, M); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms); }
		float bw = 2.0 * n * 4 / median(t) / 1e6;
		printf("BENCH softmax %dx%d f32: %.0f GB/s = %.3f of cudaMemcpy D2D (%.0f GB/s)\n", M, W, bw, bw / copy_bw, copy_bw);
	}
	cudaFree(X); cudaFree(Y);
}

// ---- flash_fwd: O = softmax(Q K^T / sqrt(D)) V per head, [BH, L, D] f16, causal or not ----
typedef void (*FlashKernel)(tl_half_t *, tl_half_t *, tl_half_t *, tl_half_t *, int, int);
static void check_flash(const char *name, FlashKernel kern, int smem, int BH, int L, int D, int causal,
			int full, bool timeit)
{
	const int BM = 128, THREADS = 256; // samples/flash_fwd.tile
	size_t n = (size_t)BH * L * D;
	std::vector<__half> hQ = rand_half(n), hK = rand_half(n), hV = rand_half(n), hO(n);
	tl_half_t *Q = dalloc<tl_half_t>(n), *K = dalloc<tl_half_t>(n), *V = dalloc<tl_half_t>(n), *O = dalloc<tl_half_t>(n);
	CK(cudaMemcpy(Q, hQ.data(), n * 2, cudaMemcpyHostToDevice)); CK(cudaMemcpy(K, hK.data(), n * 2, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(V, hV.data(), n * 2, cudaMemcpyHostToDevice)); CK(cudaMemset(O, 0xff, n * 2)); // NaN poison
	if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	dim3 grid(cdiv(L, BM), BH);
	kern<<<grid, THREADS, smem>>>(Q, K, V, O, BH, L);
	CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hO.data(), O, n * 2, cudaMemcpyDeviceToHost));
	// fp64 reference: every row at the small sizes, 97 rows of each of 2 heads at the large ones
	double num = 0, den = 0; long bad = 0, rows = 0;
	std::vector<double> sc(L);
	for (int h = 0; h < BH; h++) {
		if (!full && h != 0 && h != BH - 1) continue;
		for (int i = 0; i < L; i += full ? 1 : std::max(1, L / 97)) {
			const __half *q = &hQ[((size_t)h * L + i) * D];
			int nk = causal ? i + 1 : L;
			double m = -INFINITY, sum = 0;
			for (int j = 0; j < nk; j++) {
				const __half *k = &hK[((size_t)h * L + j) * D];
				double d = 0;
				for (int c = 0; c < D; c++) d += (double)float(q[c]) * (double)float(k[c]);
				sc[j] = d / sqrt((double)D);
				m = std::max(m, sc[j]);
			}
			for (int j = 0; j < nk; j++) { sc[j] = exp(sc[j] - m); sum += sc[j]; }
			for (int c = 0; c < D; c++) {
				double ref = 0;
				for (int j = 0; j < nk; j++) ref += sc[j] * (double)float(hV[((size_t)h * L + j) * D + c]);
				ref /= sum;
				double got = float(hO[((size_t)h * L + i) * D + c]);
				if (!std::isfinite(got)) bad++;
				num += (got - ref) * (got - ref); den += ref * ref;
			}
			rows++;
		}
	}
	double rel = sqrt(num / (den > 0 ? den : 1));
	char w[96], d[160];
	snprintf(w, sizeof w, "%s BH=%d L=%d", name, BH, L);
	snprintf(d, sizeof d, "%ld rows checked (%s), rel err %.2e, unwritten/nonfinite %ld", rows, full ? "all" : "sampled", rel, bad);
	verdict(w, bad == 0 && rel < 1e-2, d);
	if (timeit) {
		cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); std::vector<float> t;
		for (int i = 0; i < 23; i++) { float ms; CK(cudaEventRecord(e0)); kern<<<grid, THREADS, smem>>>(Q, K, V, O, BH, L); CK(cudaEventRecord(e1));
			CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms); }
		double fl = 4.0 * BH * (double)L * L * D * (causal ? 0.5 : 1.0);
		printf("BENCH %s BH=%d L=%d D=%d causal=%d: %.3f ms, %.1f TFLOP/s\n", name, BH, L, D, causal, median(t),
		       fl / median(t) / 1e9);
	}
	cudaFree(Q); cudaFree(K); cudaFree(V); cudaFree(O);
}

int main()
{
	cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
	printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
	cublasHandle_t h; cublasCreate(&h);
	float bw = memcpy_gbps((size_t)1 << 28);
	printf("cudaMemcpy D2D 1 GiB: %.0f GB/s\n", bw);
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 256, 384, 512, 1, h, false);
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 1000, 1016, 1008, 0, h, false);
#ifndef MEMCHECK
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 4096, 4096, 4096, 0, h, true);
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 8192, 8192, 8192, 0, h, true);
#endif
	check_gemm<__half>("gemm_sm90", gemm_sm90, SMEM_gemm_sm90, 256, 512, 512, 1, h, false, 256, 256);
	check_gemm<__half>("gemm_sm90", gemm_sm90, SMEM_gemm_sm90, 1000, 1016, 1008, 0, h, false, 256, 256);
#ifndef MEMCHECK
	check_gemm<__half>("gemm_sm90", gemm_sm90, SMEM_gemm_sm90, 4096, 4096, 4096, 0, h, true, 256, 256);
	check_gemm<__half>("gemm_sm90", gemm_sm90, SMEM_gemm_sm90, 8192, 8192, 8192, 0, h, true, 256, 256);
#endif
	// strided views: vectors (leading dimensions of whole 8-element vectors, aligned views),
	// element by element (an odd ldb; views one element off alignment)
	check_gemm_strided(256, 384, 512, 520, 392, 392, 0, false);
	check_gemm_strided(200, 203, 205, 216, 219, 211, 0, false);
	check_gemm_strided(256, 384, 512, 520, 393, 392, 0, false);
	check_gemm_strided(256, 384, 512, 520, 392, 392, 1, false);
#ifndef MEMCHECK
	check_gemm_strided(4096, 4096, 4096, 4160, 4160, 4160, 0, true);
	check_gemm_strided(4096, 4096, 4096, 4160, 4160, 4160, 1, true);
#endif
	check_copy(1000, 1000, false, bw);
	check_elementwise(1000, 1000, false, bw);
	check_transpose(1000, 700);
	// ragged rows (N, K, M not multiples of the 8- or 4-element vectors): the scalar fallback
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 200, 203, 205, 1, h, false);
	check_gemm<__half>("gemm", gemm, SMEM_gemm, 1000, 1003, 1001, 0, h, false);
	check_gemm<__half>("gemm_sm90", gemm_sm90, SMEM_gemm_sm90, 200, 203, 205, 1, h, false, 256, 256);
	check_copy(999, 1001, false, bw);
	check_copy(1000, 1000, false, bw, "convert2d", convert2d, 64, SMEM_convert2d);
	check_copy(999, 1001, false, bw, "convert2d", convert2d, 64, SMEM_convert2d);
	check_elementwise(999, 1003, false, bw);
	check_transpose(1001, 703);
	check_softmax(8, false, bw);
	check_softmax(1000, false, bw);
	check_softmax(1003, false, bw);
	check_splitk(256, 384, 512, 1, h, false);
	check_splitk(200, 203, 205, 1, h, false);   // ragged: the scalar fallback, edge guards
	check_splitk(1000, 1016, 4104, 0, h, false);
	// FlashAttention: ragged L (keys masked, rows guarded), one block, and whole blocks
	for (int c = 0; c < 2; c++) {
		FlashKernel k64 = c ? flash_fwd_d64_c1 : flash_fwd_d64_c0, k128 = c ? flash_fwd_d128_c1 : flash_fwd_d128_c0;
		int s64 = c ? SMEM_flash_fwd_d64_c1 : SMEM_flash_fwd_d64_c0, s128 = c ? SMEM_flash_fwd_d128_c1 : SMEM_flash_fwd_d128_c0;
		const char *n64 = c ? "flash_fwd D=64 causal" : "flash_fwd D=64", *n128 = c ? "flash_fwd D=128 causal" : "flash_fwd D=128";
		check_flash(n64, k64, s64, 3, 200, 64, c, 1, false);
		check_flash(n64, k64, s64, 2, 1, 64, c, 1, false);
		check_flash(n128, k128, s128, 3, 200, 128, c, 1, false);
		check_flash(n128, k128, s128, 2, 1000, 128, c, 1, false);
#ifndef MEMCHECK
		check_flash(n64, k64, s64, 32, 4096, 64, c, 0, true);
		check_flash(n128, k128, s128, 32, 4096, 128, c, 0, true);
		check_flash(n128, k128, s128, 32, 8192, 128, c, 0, true);
#endif
	}
#ifndef MEMCHECK
	check_copy(16384, 16384, true, bw);
	check_copy(16384, 16384, true, bw, "convert2d", convert2d, 64, SMEM_convert2d);
	check_elementwise(16384, 16384, true, bw);
	check_transpose(4096, 4096);
	check_softmax(65536, true, bw);
	check_splitk(1024, 1024, 16384, 0, h, true); // few output tiles, long K: what split-K is for
#endif
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}
