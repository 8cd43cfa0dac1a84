// proto_gemm.cu: a hand-written f16 GEMM in the shape tilec's CUDA emitter is meant to
// produce (multistage cp.async, swizzled shared memory, ldmatrix, mma.sync m16n8k16),
// timed against cuBLAS and a device-to-device copy in the same run. A design probe for
// the [cuda] and [jit] issues; built and run on the H200 by test/gpu/proto.sh.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include "../../templates/tilec_cuda.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

template <int BM, int BN, int BK, int WM, int WN, int STAGES>
struct Cfg {
	static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
	static constexpr int THREADS = WARPS_M * WARPS_N * 32;
	static constexpr int MI = WM / 16, NI = WN / 8;
	static constexpr int A_ELEMS = BM * BK, B_ELEMS = BK * BN;
	static constexpr int SMEM = STAGES * (A_ELEMS + B_ELEMS) * 2;
};

// A tile [BM][BK] (BK = 32: 4 chunks of 16 B per row): chunk ^= (row >> 1) & 3
// B tile [BK][BN]: chunk ^= k & 7
template <class C, int BM, int BN, int BK, int STAGES>
__global__ void __launch_bounds__(C::THREADS)
gemm_proto(const tl_half_t *__restrict__ A, const tl_half_t *__restrict__ B, tl_half_t *__restrict__ Cm,
	   int M, int N, int K)
{
	extern __shared__ __align__(1024) unsigned char smem[];
	tl_half_t *As = (tl_half_t *)smem;
	tl_half_t *Bs = As + STAGES * C::A_ELEMS;
	const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
	const int wm = warp % C::WARPS_M, wn = warp / C::WARPS_M;
	const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
	const int KT = K / BK;
	float acc[C::MI][C::NI][4];
#pragma unroll
	for (int i = 0; i < C::MI; i++)
#pragma unroll
		for (int j = 0; j < C::NI; j++)
#pragma unroll
			for (int r = 0; r < 4; r++)
				acc[i][j][r] = 0.f;

	auto load = [&](int stage, int kt) {
		const int k0 = kt * BK;
		tl_half_t *as = As + stage * C::A_ELEMS, *bs = Bs + stage * C::B_ELEMS;
#pragma unroll
		for (int i = 0; i < C::A_ELEMS / 8 / C::THREADS; i++) {
			int q = tid + i * C::THREADS, r = q / (BK / 8), cc = q % (BK / 8);
			tl_cp_async16(as + r * BK + ((cc ^ ((r >> 1) & 3)) * 8), A + (size_t)(m0 + r) * K + k0 + cc * 8);
		}
#pragma unroll
		for (int i = 0; i < C::B_ELEMS / 8 / C::THREADS; i++) {
			int q = tid + i * C::THREADS, k = q / (BN / 8), cc = q % (BN / 8);
			tl_cp_async16(bs + k * BN + ((cc ^ (k & 7)) * 8), B + (size_t)(k0 + k) * N + n0 + cc * 8);
		}
	};

#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < KT)
			load(s, s);
		tl_cp_async_commit();
	}
	for (int kt = 0; kt < KT; kt++) {
		tl_cp_async_wait<STAGES - 2>();
		__syncthreads();
		{
			int nk = kt + STAGES - 1;
			if (nk < KT)
				load(nk % STAGES, nk);
			tl_cp_async_commit();
		}
		const tl_half_t *as = As + (kt % STAGES) * C::A_ELEMS, *bs = Bs + (kt % STAGES) * C::B_ELEMS;
#pragma unroll
		for (int kk = 0; kk < BK; kk += 16) {
			tl_u32 af[C::MI][4], bf[C::NI][2];
#pragma unroll
			for (int mi = 0; mi < C::MI; mi++) {
				int r = wm * (BM / C::WARPS_M) + mi * 16 + lane % 16, c = kk + (lane / 16) * 8;
				tl_ldmatrix_x4(af[mi], as + r * BK + (((c / 8) ^ ((r >> 1) & 3)) * 8));
			}
#pragma unroll
			for (int nj = 0; nj < C::NI; nj += 2) {
				int k = kk + lane % 16, n = wn * (BN / C::WARPS_N) + nj * 8 + (lane / 16) * 8;
				tl_u32 t[4];
				tl_ldmatrix_x4_trans(t, bs + k * BN + (((n / 8) ^ (k & 7)) * 8));
				bf[nj][0] = t[0]; bf[nj][1] = t[1]; bf[nj + 1][0] = t[2]; bf[nj + 1][1] = t[3];
			}
#pragma unroll
			for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
				for (int ni = 0; ni < C::NI; ni++)
					tl_mma_f16_16816(acc[mi][ni], af[mi], bf[ni]);
		}
	}
	tl_cp_async_wait<0>();
	const int g = lane / 4, t = lane % 4;
#pragma unroll
	for (int mi = 0; mi < C::MI; mi++)
#pragma unroll
		for (int ni = 0; ni < C::NI; ni++) {
			int r = m0 + wm * (BM / C::WARPS_M) + mi * 16 + g, c = n0 + wn * (BN / C::WARPS_N) + ni * 8 + 2 * t;
			*(tl_u32 *)(Cm + (size_t)r * N + c) = tl_pack_h2(acc[mi][ni][0], acc[mi][ni][1]);
			*(tl_u32 *)(Cm + (size_t)(r + 8) * N + c) = tl_pack_h2(acc[mi][ni][2], acc[mi][ni][3]);
		}
}

__global__ void fill_random(tl_half_t *p, size_t n, unsigned seed)
{
	size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
	for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned x = (unsigned)(i * 2654435761u) ^ seed;
		x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
		p[i] = tl_f2h(((x & 0xffff) / 32768.0f) - 1.0f);
	}
}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

template <class C, int BM, int BN, int BK, int ST>
static float run_proto(const char *name, int M, int N, int K, cublasHandle_t h, bool check)
{
	size_t szA = (size_t)M * K, szB = (size_t)K * N, szC = (size_t)M * N;
	const int SETS = 3;
	tl_half_t *A[SETS], *B[SETS], *Cp, *Cb;
	for (int s = 0; s < SETS; s++) {
		CK(cudaMalloc(&A[s], szA * 2)); CK(cudaMalloc(&B[s], szB * 2));
		fill_random<<<1024, 256>>>(A[s], szA, 17 + s); fill_random<<<1024, 256>>>(B[s], szB, 91 + s);
	}
	CK(cudaMalloc(&Cp, szC * 2)); CK(cudaMalloc(&Cb, szC * 2));
	CK(cudaMemset(Cp, 0xff, szC * 2));
	auto kern = gemm_proto<C, BM, BN, BK, ST>;
	CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
	dim3 grid(N / BN, M / BM);
	float alpha = 1, beta = 0;
	auto cub = [&](int s) {
		cublasStatus_t st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B[s], CUDA_R_16F, N,
						 A[s], CUDA_R_16F, K, &beta, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F,
						 CUBLAS_GEMM_DEFAULT);
		if (st != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "cublas %d\n", st); exit(1); }
	};
	kern<<<grid, C::THREADS, C::SMEM>>>(A[0], B[0], Cp, M, N, K);
	CK(cudaGetLastError());
	cub(0);
	CK(cudaDeviceSynchronize());
	if (check) {
		std::vector<__half> hA(szA), hB(szB), hp(szC), hb(szC);
		CK(cudaMemcpy(hA.data(), A[0], szA * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hB.data(), B[0], szB * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hp.data(), Cp, szC * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hb.data(), Cb, szC * 2, cudaMemcpyDeviceToHost));
		// fp64 reference on 4096 sampled elements (all rows/cols hit by stride)
		double num = 0, den = 0, numb = 0; int bad = 0;
		for (int s = 0; s < 4096; s++) {
			int i = (int)((s * 7919ull) % M), j = (int)((s * 104729ull + s / 7) % N);
			double ref = 0;
			for (int k = 0; k < K; k++)
				ref += (double)__half2float(hA[(size_t)i * K + k]) * (double)__half2float(hB[(size_t)k * N + j]);
			double got = __half2float(hp[(size_t)i * N + j]), gb = __half2float(hb[(size_t)i * N + j]);
			if (!std::isfinite(got)) bad++;
			num += (got - ref) * (got - ref); numb += (gb - ref) * (gb - ref); den += ref * ref;
		}
		printf("%s %dx%dx%d check: rel err proto %.2e cublas %.2e nonfinite %d\n", name, M, N, K,
		       sqrt(num / den), sqrt(numb / den), bad);
	}
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
	std::vector<float> tp, tb;
	for (int w = 0; w < 5; w++) { kern<<<grid, C::THREADS, C::SMEM>>>(A[w % SETS], B[w % SETS], Cp, M, N, K); cub(w % SETS); }
	for (int it = 0; it < 30; it++) {
		int s = it % SETS;
		float ms;
		CK(cudaEventRecord(e0));
		kern<<<grid, C::THREADS, C::SMEM>>>(A[s], B[s], Cp, M, N, K);
		CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); tp.push_back(ms);
		CK(cudaEventRecord(e0));
		cub(s);
		CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); tb.push_back(ms);
	}
	float mp = median(tp), mb = median(tb);
	double fl = 2.0 * M * N * K;
	printf("%-26s %5dx%5dx%5d  proto %8.1f TFLOP/s  cublas %8.1f TFLOP/s  ratio %.3f\n", name, M, N, K,
	       fl / mp / 1e9, fl / mb / 1e9, mb / mp);
	for (int s = 0; s < SETS; s++) { cudaFree(A[s]); cudaFree(B[s]); }
	cudaFree(Cp); cudaFree(Cb);
	return mb / mp;
}


// ---- sm_90a: wgmma m64n256k16 from shared memory, 2 warpgroups, cp.async pipeline -----
#include "wgmma_m64n256.inc"

__device__ __forceinline__ unsigned long long wg_desc(const void *p, int lbo, int sbo)
{
	unsigned long long a = tl_smem_u32(p);
	return ((a & 0x3ffff) >> 4) | ((unsigned long long)(lbo >> 4) << 16) |
	       ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

// BM = 128 (2 warpgroups x 64 rows), BN = 256, BK = 64, STAGES stages, prefetch distance STAGES-2
// A stage: [128][64] f16, 128-byte rows, chunk ^= row % 8 (Sw<3,4,3> on bytes), K-major
// B stage: 4 panels [64 k][64 n], 128-byte rows along n, chunk ^= k % 8, MN-major (transposed)
template <int STAGES>
__global__ void __launch_bounds__(256)
gemm_wgmma(const tl_half_t *__restrict__ A, const tl_half_t *__restrict__ B, tl_half_t *__restrict__ Cm,
	   int M, int N, int K, int lbo, int sbo)
{
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *)(((size_t)smem_raw + 1023) & ~(size_t)1023);
	const int A_BYTES = 128 * 64 * 2, B_BYTES = 64 * 256 * 2, ST_BYTES = A_BYTES + B_BYTES;
	const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, warp = (tid % 128) / 32;
	const int m0 = blockIdx.y * 128, n0 = blockIdx.x * 256;
	const int KT = K / 64;
	float d[128];
#pragma unroll
	for (int i = 0; i < 128; i++)
		d[i] = 0.f;
	auto load = [&](int stage, int kt) {
		unsigned char *as = smem + stage * ST_BYTES, *bs = as + A_BYTES;
		const int k0 = kt * 64;
#pragma unroll
		for (int i = 0; i < 4; i++) {
			int q = tid + i * 256, r = q / 8, c = q % 8;
			tl_cp_async16(as + r * 128 + ((c ^ (r % 8)) * 16), A + (size_t)(m0 + r) * K + k0 + c * 8);
		}
#pragma unroll
		for (int i = 0; i < 8; i++) {
			int q = tid + i * 256, k = q / 32, cn = q % 32, p = cn / 8, c = cn % 8;
			tl_cp_async16(bs + p * 8192 + k * 128 + ((c ^ (k % 8)) * 16), B + (size_t)(k0 + k) * N + n0 + cn * 8);
		}
	};
#pragma unroll
	for (int s = 0; s < STAGES - 2; s++) {
		if (s < KT)
			load(s, s);
		tl_cp_async_commit();
	}
	for (int kt = 0; kt < KT; kt++) {
		tl_cp_async_wait<STAGES - 3>();
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
		__syncthreads();
		{
			int nk = kt + STAGES - 2;
			if (nk < KT)
				load(nk % STAGES, nk);
			tl_cp_async_commit();
		}
		unsigned char *as = smem + (kt % STAGES) * ST_BYTES, *bs = as + A_BYTES;
		asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
		for (int kk = 0; kk < 4; kk++) {
			unsigned long long da = wg_desc(as + wg * 64 * 128 + kk * 32, 16, 1024);
			unsigned long long db = wg_desc(bs + kk * 16 * 128, lbo, sbo);
			tl_wgmma_m64n256k16_f16<1>(d, da, db);
		}
		asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
		asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
	}
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
	tl_cp_async_wait<0>();
	const int g = lane / 4, t = lane % 4;
	const int row = m0 + wg * 64 + warp * 16 + g;
#pragma unroll
	for (int j = 0; j < 32; j++) {
		int col = n0 + j * 8 + 2 * t;
		*(tl_u32 *)(Cm + (size_t)row * N + col) = tl_pack_h2(d[4 * j], d[4 * j + 1]);
		*(tl_u32 *)(Cm + (size_t)(row + 8) * N + col) = tl_pack_h2(d[4 * j + 2], d[4 * j + 3]);
	}
}

template <int ST>
static float run_wgmma(const char *name, int M, int N, int K, cublasHandle_t h, int lbo, int sbo, bool timeit)
{
	size_t szA = (size_t)M * K, szB = (size_t)K * N, szC = (size_t)M * N;
	const int SETS = 3;
	tl_half_t *A[SETS], *B[SETS], *Cp, *Cb;
	for (int s = 0; s < SETS; s++) {
		CK(cudaMalloc(&A[s], szA * 2)); CK(cudaMalloc(&B[s], szB * 2));
		fill_random<<<1024, 256>>>(A[s], szA, 17 + s); fill_random<<<1024, 256>>>(B[s], szB, 91 + s);
	}
	CK(cudaMalloc(&Cp, szC * 2)); CK(cudaMalloc(&Cb, szC * 2));
	CK(cudaMemset(Cp, 0xff, szC * 2));
	auto kern = gemm_wgmma<ST>;
	int smem = ST * (128 * 64 + 64 * 256) * 2 + 1024;
	CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
	dim3 grid(N / 256, M / 128);
	float alpha = 1, beta = 0;
	auto cub = [&](int s) {
		cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B[s], CUDA_R_16F, N, A[s], CUDA_R_16F, K,
			     &beta, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	};
	kern<<<grid, 256, smem>>>(A[0], B[0], Cp, M, N, K, lbo, sbo);
	CK(cudaGetLastError());
	cub(0);
	CK(cudaDeviceSynchronize());
	{
		std::vector<__half> hA(szA), hB(szB), hp(szC);
		CK(cudaMemcpy(hA.data(), A[0], szA * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hB.data(), B[0], szB * 2, cudaMemcpyDeviceToHost));
		CK(cudaMemcpy(hp.data(), Cp, szC * 2, cudaMemcpyDeviceToHost));
		double num = 0, den = 0;
		int bad = 0;
		for (int s = 0; s < 2048; s++) {
			int i = (int)((s * 7919ull) % M), j = (int)((s * 104729ull + s / 7) % N);
			double ref = 0;
			for (int k = 0; k < K; k++)
				ref += (double)__half2float(hA[(size_t)i * K + k]) * (double)__half2float(hB[(size_t)k * N + j]);
			double got = __half2float(hp[(size_t)i * N + j]);
			if (!std::isfinite(got)) bad++;
			num += (got - ref) * (got - ref); den += ref * ref;
		}
		printf("%s %dx%dx%d lbo %d sbo %d check: rel err %.2e nonfinite %d\n", name, M, N, K, lbo, sbo,
		       sqrt(num / den), bad);
	}
	float ratio = 0;
	if (timeit) {
		cudaEvent_t e0, e1;
		CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
		std::vector<float> tp, tb;
		for (int it = 0; it < 35; it++) {
			int s = it % SETS;
			float ms;
			CK(cudaEventRecord(e0));
			kern<<<grid, 256, smem>>>(A[s], B[s], Cp, M, N, K, lbo, sbo);
			CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
			if (it >= 5) tp.push_back(ms);
			CK(cudaEventRecord(e0));
			cub(s);
			CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
			if (it >= 5) tb.push_back(ms);
		}
		float mp = median(tp), mb = median(tb);
		double fl = 2.0 * M * N * K;
		ratio = mb / mp;
		printf("%-26s %5dx%5dx%5d  wgmma %8.1f TFLOP/s  cublas %8.1f TFLOP/s  ratio %.3f\n", name, M, N, K,
		       fl / mp / 1e9, fl / mb / 1e9, ratio);
	}
	for (int s = 0; s < SETS; s++) { cudaFree(A[s]); cudaFree(B[s]); }
	cudaFree(Cp); cudaFree(Cb);
	return ratio;
}

static void copy_bw()
{
	size_t n = (size_t)1 << 30;
	void *a, *b;
	CK(cudaMalloc(&a, n)); CK(cudaMalloc(&b, n));
	CK(cudaMemset(a, 1, n));
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
	std::vector<float> t;
	for (int i = 0; i < 13; i++) {
		float ms;
		CK(cudaEventRecord(e0)); CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice)); CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 3) t.push_back(ms);
	}
	printf("d2d copy 1 GiB: %.1f GB/s (read+write)\n", 2.0 * n / median(t) / 1e6);
	cudaFree(a); cudaFree(b);
}

int main()
{
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	printf("device %s, %d SMs\n", p.name, p.multiProcessorCount);
	cublasHandle_t h;
	cublasCreate(&h);
	copy_bw();
	typedef Cfg<128, 256, 32, 64, 64, 4> C1;
	typedef Cfg<128, 128, 32, 64, 64, 4> C2;
	typedef Cfg<128, 256, 32, 64, 64, 3> C3;
	run_proto<C2, 128, 128, 32, 4>("128x128x32 4w 4st", 4096, 4096, 4096, h, true);
	run_proto<C2, 128, 128, 32, 4>("128x128x32 4w 4st", 8192, 8192, 8192, h, false);
	// wgmma: find the descriptor offsets for the MN-major B operand, then time
	run_wgmma<4>("wgmma 128x256x64 4st", 1024, 1024, 1024, h, 8192, 1024, false);
	run_wgmma<4>("wgmma 128x256x64 4st", 1024, 1024, 1024, h, 1024, 8192, false);
	int lbo = getenv("LBO") ? atoi(getenv("LBO")) : 8192, sbo = getenv("SBO") ? atoi(getenv("SBO")) : 1024;
	run_wgmma<4>("wgmma 128x256x64 4st", 4096, 4096, 4096, h, lbo, sbo, true);
	run_wgmma<4>("wgmma 128x256x64 4st", 8192, 8192, 8192, h, lbo, sbo, true);
	run_wgmma<4>("wgmma 128x256x64 4st", 8192, 8192, 8192, h, sbo, lbo, true);
	return 0;
}
