// proto_tma.cu: a design probe for [hopper] (issue 15): samples/gemm_sm90.tile as tilec emits it
// today (cp.async into 128B-swizzled shared memory, wgmma, one group in flight) against the same
// kernel with its loads done by TMA (cp.async.bulk.tensor.2d into the same swizzled stages) and an
// mbarrier full/empty pipeline: thread 0 issues the loads (WS = 0, 256 threads), or a producer
// warpgroup does (WS = 1, 384 threads, setmaxnreg). Checked against an fp64 reference (ragged
// sizes too) and timed against cuBLAS in the same run. Built and run by test/gpu/proto_tma.sh.
// The helpers below are what tilec_cuda.h is to get; the kernel is the form the lowering is to emit.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include "tilec_cuda.h"
#include "emitted_sm90.cu" // build/tilec --arch=sm_90a samples/gemm_sm90.tile

// ---- TMA, mbarrier and warp-role helpers -------------------------------------------------
#include <cuda.h>
typedef struct __align__(64) { unsigned long long v[16]; } tl_tmap_t;

TL_DEVICE void tl_mbar_init(unsigned long long *bar, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(tl_smem_u32(bar)), "r"(count) : "memory");
}
TL_DEVICE void tl_fence_mbar_init(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
TL_DEVICE void tl_mbar_expect_tx(unsigned long long *bar, int bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(tl_smem_u32(bar)), "r"(bytes) : "memory");
}
TL_DEVICE void tl_mbar_arrive(unsigned long long *bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(tl_smem_u32(bar)) : "memory");
}
TL_DEVICE void tl_mbar_wait(unsigned long long *bar, int parity)
{
	unsigned done;
	do {
		asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done) : "r"(tl_smem_u32(bar)), "r"(parity) : "memory");
	} while (!done);
}
TL_DEVICE void tl_tma_load_2d(void *dst, const tl_tmap_t *map, int c0, int c1, unsigned long long *bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
		     ::"r"(tl_smem_u32(dst)), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(tl_smem_u32(bar)) : "memory");
}
TL_DEVICE void tl_tma_prefetch_map(const tl_tmap_t *map)
{
	asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)map) : "memory");
}
template <int R> TL_DEVICE void tl_setmaxnreg_inc(void) { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R> TL_DEVICE void tl_setmaxnreg_dec(void) { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }
TL_DEVICE void tl_bar_named(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }

// hand-written target form: gemm_sm90 with TMA loads, mbarrier full/empty pipeline, one producer warp(group)
template <int WS>
__global__ void __launch_bounds__(WS ? 384 : 256, 1)
gemm_tma(tl_half_t *__restrict__ A, tl_half_t *__restrict__ B, tl_half_t *__restrict__ C, int M, int K, int N,
	 const __grid_constant__ tl_tmap_t tl_tm_A, const __grid_constant__ tl_tmap_t tl_tm_B)
{
	extern __shared__ __align__(1024) unsigned char tl_smem[];
	const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
	(void)lane, (void)warp;
	tl_half_t *As = (tl_half_t *)(tl_smem + 0);
	tl_half_t *Bs = (tl_half_t *)(tl_smem + 65536);
	unsigned long long *tl_full = (unsigned long long *)(tl_smem + 196608);
	unsigned long long *tl_empty = tl_full + 4;
	float acc[128];
	const int ko_n_ = ((K + 64 - 1) / 64);
	if (tid == 0) {
		for (int s = 0; s < 4; s++) {
			tl_mbar_init(&tl_full[s], 1);
			tl_mbar_init(&tl_empty[s], 8);
		}
		tl_fence_mbar_init();
	}
	__syncthreads();
	if (WS && warp >= 8) {
		tl_setmaxnreg_dec<40>();
		if (tid == 256) {
			tl_tma_prefetch_map(&tl_tm_A);
			tl_tma_prefetch_map(&tl_tm_B);
			for (int ko = 0; ko < ko_n_; ko++) {
				const int s = ko % 4;
				if (ko >= 4)
					tl_mbar_wait(&tl_empty[s], (ko / 4 - 1) & 1);
				tl_mbar_expect_tx(&tl_full[s], 49152);
				tl_tma_load_2d(As + s * 8192, &tl_tm_A, ko * 64, (int)blockIdx.y * 128, &tl_full[s]);
				#pragma unroll
				for (int j = 0; j < 4; j++)
					tl_tma_load_2d(Bs + s * 16384 + j * 4096, &tl_tm_B, (int)blockIdx.x * 256 + j * 64, ko * 64, &tl_full[s]);
			}
		}
		return;
	}
	if (WS)
		tl_setmaxnreg_inc<232>();
	#pragma unroll
	for (int s = 0; s < 128; s++)
		acc[s] = 0.0f;
	#pragma unroll
	for (int s = 0; s < 128; s++)
		tl_fence_operand(acc[s]);
	if (!WS && tid == 0) {
		for (int ko = 0; ko < 3 && ko < ko_n_; ko++) {
			tl_mbar_expect_tx(&tl_full[ko], 49152);
			tl_tma_load_2d(As + ko * 8192, &tl_tm_A, ko * 64, (int)blockIdx.y * 128, &tl_full[ko]);
			for (int j = 0; j < 4; j++)
				tl_tma_load_2d(Bs + ko * 16384 + j * 4096, &tl_tm_B, (int)blockIdx.x * 256 + j * 64, ko * 64, &tl_full[ko]);
		}
	}
	for (int ko = 0; ko < ko_n_; ko++) {
		const int st = ko % 4;
		tl_mbar_wait(&tl_full[st], (ko / 4) & 1);
		{
			const int wgm = warp / 4 % 2, wgn = warp / 4 / 2;
			tl_wgmma_fence();
			#pragma unroll
			for (int kk = 0; kk < 64; kk += 16) {
				const tl_u64 da = tl_wgmma_desc(&(As + st * 8192)[((((wgm * 64 + 0) * 64) + (kk % 8)) + (((kk / 8) ^ ((wgm * 64 + 0) % 8)) * 8))], 16, 1024, 1);
				const tl_u64 db = tl_wgmma_desc(&(Bs + st * 16384)[((((((wgn * 256 + 0) / 64) * 4096) + (kk * 64)) + ((wgn * 256 + 0) % 8)) + (((((wgn * 256 + 0) / 8) % 8) ^ (kk % 8)) * 8))], 8192, 1024, 1);
				tl_wgmma_f16<256, 1>(&acc[0], da, db);
			}
			tl_wgmma_commit();
			tl_wgmma_wait1();
		}
		if (ko > 0 && lane == 0)
			tl_mbar_arrive(&tl_empty[(ko - 1) % 4]);
		if (!WS && tid == 0 && ko + 3 < ko_n_) {
			const int kn = ko + 3, s = kn % 4;
			if (kn >= 4)
				tl_mbar_wait(&tl_empty[s], (kn / 4 - 1) & 1);
			tl_mbar_expect_tx(&tl_full[s], 49152);
			tl_tma_load_2d(As + s * 8192, &tl_tm_A, kn * 64, (int)blockIdx.y * 128, &tl_full[s]);
			for (int j = 0; j < 4; j++)
				tl_tma_load_2d(Bs + s * 16384 + j * 4096, &tl_tm_B, (int)blockIdx.x * 256 + j * 64, kn * 64, &tl_full[s]);
		}
	}
	tl_wgmma_wait0();
	#pragma unroll
	for (int s = 0; s < 128; s += 2) {
		const int c0 = ((((tid / 4) % 8) + (((s / 2) % 2) * 8)) + ((tid / 32) * 16));
		const int c1 = (((s % 2) + ((tid % 4) * 2)) + ((s / 4) * 8));
		if ((((int)blockIdx.y * 128) + c0) < M && (((int)blockIdx.x * 256) + c1) < N) {
			*(tl_u32 *)(&C[((long long)(((int)blockIdx.y * 128) + c0) * N + (long long)(((int)blockIdx.x * 256) + c1))]) = ((tl_u32)tl_f2h(acc[s + 0]) | ((tl_u32)tl_f2h(acc[s + 1]) << 16));
		}
	}
}

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
static PFN_cuTensorMapEncodeTiled_v12000 enc;
static tl_tmap_t mkmap(void *base, int inner, int outer, int box_in, int box_out)
{
	tl_tmap_t m;
	cuuint64_t dims[2] = {(cuuint64_t)inner, (cuuint64_t)outer};
	cuuint64_t strides[1] = {(cuuint64_t)inner * 2};
	cuuint32_t box[2] = {(cuuint32_t)box_in, (cuuint32_t)box_out};
	cuuint32_t es[2] = {1, 1};
	CUresult r = enc((CUtensorMap *)&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims, strides, box, es,
			 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
			 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS) { fprintf(stderr, "encode %d\n", r); exit(1); }
	return m;
}
__global__ void fill(tl_half_t *p, size_t n, unsigned seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned x = (unsigned)i * 2654435761u + seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
		p[i] = tl_f2h(((x & 0xffff) / 32768.0f) - 1.0f);
	}
}
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main()
{
	cudaDriverEntryPointQueryResult q;
	CK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&enc, cudaEnableDefault, &q));
	cublasHandle_t h; cublasCreate(&h);
	CK(cudaFuncSetAttribute(gemm_sm90, cudaFuncAttributeMaxDynamicSharedMemorySize, 196608));
	CK(cudaFuncSetAttribute(gemm_tma<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, 196608 + 64));
	CK(cudaFuncSetAttribute(gemm_tma<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 196608 + 64));
	int sizes[][3] = {{1000, 1016, 1000}, {256, 512, 64}, {130, 264, 8}, {4096, 4096, 4096}, {8192, 8192, 8192}, {2048, 2048, 2048}};
	for (auto &sz : sizes) {
		int M = sz[0], N = sz[1], K = sz[2];
		size_t sA = (size_t)M * K, sB = (size_t)K * N, sC = (size_t)M * N;
		tl_half_t *A, *B, *C, *Cb;
		CK(cudaMalloc(&A, sA * 2)); CK(cudaMalloc(&B, sB * 2)); CK(cudaMalloc(&C, sC * 2)); CK(cudaMalloc(&Cb, sC * 2));
		fill<<<1024, 256>>>(A, sA, 17); fill<<<1024, 256>>>(B, sB, 91);
		tl_tmap_t mA = mkmap(A, K, M, 64, 128), mB = mkmap(B, N, K, 64, 64);
		dim3 grid((N + 255) / 256, (M + 127) / 128);
		float alpha = 1, beta = 0;
		auto cub = [&]() { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A, CUDA_R_16F, K, &beta, Cb, CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); };
		auto k0 = [&]() { gemm_sm90<<<grid, 256, 196608>>>(A, B, C, M, K, N); };
		auto k1 = [&]() { gemm_tma<0><<<grid, 256, 196608 + 64>>>(A, B, C, M, K, N, mA, mB); };
		auto k2 = [&]() { gemm_tma<1><<<grid, 384, 196608 + 64>>>(A, B, C, M, K, N, mA, mB); };
		std::vector<__half> hA(sA), hB(sB), hC(sC);
		CK(cudaMemcpy(hA.data(), A, sA * 2, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hB.data(), B, sB * 2, cudaMemcpyDeviceToHost));
		const char *names[3] = {"cpasync(current)", "tma", "tma+ws"};
		float ms[4];
		for (int v = 0; v < 4; v++) {
			auto run = [&]() { if (v == 0) k0(); else if (v == 1) k1(); else if (v == 2) k2(); else cub(); };
			if (v < 3) {
				CK(cudaMemset(C, 0xff, sC * 2));
				run(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
				CK(cudaMemcpy(hC.data(), C, sC * 2, cudaMemcpyDeviceToHost));
				double num = 0, den = 0; int bad = 0, n = 0;
				size_t stepi = M * (size_t)N > 2000000 ? 4099 : 1;
				for (size_t e = 0; e < sC; e += stepi, n++) {
					int i = e / N, j = e % N; double ref = 0;
					for (int k = 0; k < K; k++) ref += (double)__half2float(hA[(size_t)i * K + k]) * (double)__half2float(hB[(size_t)k * N + j]);
					double g = __half2float(hC[e]);
					if (!std::isfinite(g) || fabs(g - ref) > 0.02 + 0.01 * fabs(ref)) bad++;
					num += (g - ref) * (g - ref); den += ref * ref;
				}
				printf("%5dx%5dx%5d %-18s checked %d bad %d relerr %.2e\n", M, N, K, names[v], n, bad, sqrt(num / (den + 1e-30)));
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
			printf("%5dx%5dx%5d cublas %.1f TF | cpasync %.1f (%.3f) | tma %.1f (%.3f) | tma+ws %.1f (%.3f)\n", M, N, K, fl / ms[3] / 1e9,
			       fl / ms[0] / 1e9, ms[3] / ms[0], fl / ms[1] / 1e9, ms[3] / ms[1], fl / ms[2] / 1e9, ms[3] / ms[2]);
		}
		cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(Cb);
	}
	return 0;
}
