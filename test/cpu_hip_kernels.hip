// cpu_hip_kernels.hip: hand-written HIP kernels for the unit tests of templates/tilec_cpu_hip.h
// (test/check_cpu_hip.c builds this file for the CPU through cpuexec_build_target, once with
// wavefronts of 64 lanes and once with 32; the dispatching trampoline is at the end). The same
// text compiles unchanged with clang-19 for gfx942 and gfx1100 against the real tilec_hip.h
// (check_cpu_hip.c does that too), so it uses only what tilec_hip.h provides. The kernels move
// bits: inputs are placed into registers and LDS by the host, per the tables of cpu_hip_ref.h.
#include "tilec_hip.h"

#if defined(__gfx1100__) || (defined(TILEC_CPU) && TL_CPU_WAVE == 32)
#define K_WAVE32 1
#else
#define K_WAVE64 1
#endif

// ---- ds_bpermute: 96 threads (wave64: one full and one half wavefront; wave32: three) ---------
// o[8] words per thread, od one double, ol one long long
extern "C" __global__ void k_shfl(unsigned *out, double *outd, long long *outl, int wave)
{
	const int tid = threadIdx.x, lane = tl_lane_id();
	const unsigned v = tid * 1000u + 7u;
	unsigned *o = out + tid * 8;

	o[0] = (unsigned)lane;
	o[1] = __float_as_uint(tl_shfl_xor((float)v, 1));
	o[2] = (unsigned)tl_shfl_xor_t((int)v, 5);
	o[3] = (unsigned)__shfl_xor_sync(0xffffffff, (int)v, 16);
	o[4] = (unsigned)tl_shfl_xor_t((int)v, 32);
	o[5] = (unsigned)tl_shfl_xor_t((int)v, 63);
	o[6] = __float_as_uint(tl_warp_sum((float)lane, 8));
	o[7] = __float_as_uint(tl_warp_max((float)((lane * 7) % wave), wave));
	outd[tid] = __shfl_xor_sync(0xffffffff, (double)v + 0.5, 3);
	outl[tid] = tl_shfl_xor_t((long long)v << 33 | 5, 2);
}

// ---- a full-wave sum: the butterfly over the whole wavefront --------------------------------
extern "C" __global__ void k_wsum(float *out, int wave)
{
	const int tid = threadIdx.x;

	out[tid] = tl_warp_sum((float)(tid + 1), wave);
}

#ifdef K_WAVE64
// ---- MFMA 16x16x16: 64 threads; lane l's 4 A and 4 B halves and 4 accumulators by the host --------
extern "C" __global__ void k_mfma(const unsigned short *a, const unsigned short *b, const float *c, float *d, int bf)
{
	const int l = threadIdx.x;
	tl_u16x4 av, bv;
	float acc[4];

	for (int v = 0; v < 4; v++) {
		av[v] = a[l * 4 + v];
		bv[v] = b[l * 4 + v];
		acc[v] = c[l * 4 + v];
	}
	if (bf)
		tl_mfma_bf16_16x16x16(acc, av, bv);
	else
		tl_mfma_f16_16x16x16(acc, av, bv);
	for (int v = 0; v < 4; v++)
		d[l * 4 + v] = acc[v];
}
#endif

#ifdef K_WAVE32
// ---- WMMA 16x16x16 (gfx11): 32 threads; 16 A and 16 B halves and 8 accumulators per lane -------------
extern "C" __global__ void k_wmma(const unsigned short *a, const unsigned short *b, const float *c, float *d, int bf)
{
	const int l = threadIdx.x;
	tl_u16x16 av, bv;
	float acc[8];

	for (int v = 0; v < 16; v++) {
		av[v] = a[l * 16 + v];
		bv[v] = b[l * 16 + v];
	}
	for (int r = 0; r < 8; r++)
		acc[r] = c[l * 8 + r];
	if (bf)
		tl_wmma_bf16_16x16x16(acc, av, bv);
	else
		tl_wmma_f16_16x16x16(acc, av, bv);
	for (int r = 0; r < 8; r++)
		d[l * 8 + r] = acc[r];
}
#endif

// ---- conversions ---------------------------------------------------------------------------------
extern "C" __global__ void k_cvt(const float *in, int n, unsigned short *h, unsigned short *b, unsigned *p,
				 unsigned *q, unsigned *hf, unsigned *bff)
{
	const int tid = threadIdx.x + blockIdx.x * 128, nt = 256;

	for (int i = tid; i < n; i += nt) {
		h[i] = tl_f2h(in[i]);
		b[i] = tl_f2bf(in[i]);
		p[i] = tl_pack_h2(in[i], in[n - 1 - i]);
		q[i] = tl_pack_bf2(in[i], in[n - 1 - i]);
	}
	for (int i = tid; i < 65536; i += nt) {
		hf[i] = __float_as_uint(tl_h2f((tl_half_t)i));
		bff[i] = __float_as_uint(tl_bf2f((tl_bf16_t)i));
	}
}

// ---- the "cp.async" copies and the LDS operand reads: 32 threads, 2048 bytes of LDS ----------------
// mode 0: copies, zero fill, ld_u16x4 / ld_u16x16; 1: a misaligned LDS destination; 2: a
// misaligned tl_ld_u16x4; 3: a zfill copy past the end of g with pred true (faults)
extern "C" __global__ void k_copy(const unsigned *g, unsigned *out, int mode)
{
	extern __shared__ __align__(1024) unsigned char tl_smem[];
	unsigned *s = (unsigned *)tl_smem;
	const int t = threadIdx.x;
	unsigned *o = out + t * 16;

	if (mode == 1)
		tl_cp_async16(tl_smem + 8 + t * 16, g + t * 4);
	if (mode == 3)
		tl_cp_async16_zfill(s + t * 4, g + 512 + t * 4, true);
	tl_cp_async16(s + t * 4, g + t * 4);
	for (int i = 0; i < 4; i++) // synchronous: visible at once, before commit and wait
		o[i] = s[t * 4 + i];
	tl_cp_async16_zfill(s + 128 + t * 4, g + 128 + t * 4, t % 2 == 0);
	// pred false: the source (far past the end of g) is not read
	tl_cp_async16_zfill(s + 256 + t * 4, g + (1 << 22), false);
	tl_cp_async_commit();
	tl_cp_async_wait<0>();
	__syncthreads();
	for (int i = 0; i < 4; i++) {
		o[4 + i] = s[128 + t * 4 + i];
		o[8 + i] = s[256 + t * 4 + i];
	}
	{
		const tl_half_t *hs = (const tl_half_t *)tl_smem;
		tl_u16x4 x = tl_ld_u16x4(hs + ((t * 5) % 32) * 4 + (mode == 2 ? 1 : 0));
		tl_u16x16 y = tl_ld_u16x16(hs + ((t * 3) % 16) * 8, hs + 256 + ((t * 7) % 16) * 8);

		o[12] = (unsigned)x[0] | (unsigned)x[1] << 16;
		o[13] = (unsigned)x[2] | (unsigned)x[3] << 16;
		o[14] = (unsigned)y[t % 8] | (unsigned)y[8 + (t + 3) % 8] << 16;
		o[15] = (unsigned)y[15];
	}
}

// ---- what the emulation reports -------------------------------------------------------------------
// mode 0: a matrix instruction in a partial wavefront (launched with fewer threads than a wave);
// 1: WMMA half-waves that hold different A; 2: a static array that with the dynamic LDS exceeds
// 64 KiB; 3: a ds_bpermute that only half the wavefront executes (a deadlock at the barrier)
extern "C" __global__ void k_errors(unsigned *out, int mode)
{
	const int t = threadIdx.x;

	if (mode == 0 || mode == 1) {
#ifdef K_WAVE64
		tl_u16x4 a = {1, 2, 3, 4};
		float c[4] = {0, 0, 0, 0};

		tl_mfma_f16_16x16x16(c, a, a);
#else
		tl_u16x16 a;
		float c[8] = {0, 0, 0, 0, 0, 0, 0, 0};

		for (int v = 0; v < 16; v++)
			a[v] = (unsigned short)(0x3c00 + (mode == 1 && t == 20 && v == 3));
		tl_wmma_f16_16x16x16(c, a, a);
#endif
		out[t] = __float_as_uint(c[0]);
	} else if (mode == 2) {
		static __shared__ float buf[256];

		buf[t] = (float)t;
		__syncthreads();
		out[t] = __float_as_uint(buf[(t + 1) % 64]);
	} else if (mode == 3) {
		if (t % 2 == 0)
			out[t] = (unsigned)tl_shfl_xor_t((int)t, 1);
		__syncthreads();
	}
}

#ifdef TILEC_CPU
// ---- the trampoline: a[0] selects the kernel, a[1..] its arguments --------------------------
extern "C" void tl_cpu_entry(void **a)
{
	switch (*(int *)a[0]) {
	case 0: k_shfl((unsigned *)a[1], (double *)a[2], (long long *)a[3], *(int *)a[4]); break;
	case 1: k_wsum((float *)a[1], *(int *)a[2]); break;
#ifdef K_WAVE64
	case 2: k_mfma((const unsigned short *)a[1], (const unsigned short *)a[2], (const float *)a[3], (float *)a[4], *(int *)a[5]); break;
#else
	case 2: k_wmma((const unsigned short *)a[1], (const unsigned short *)a[2], (const float *)a[3], (float *)a[4], *(int *)a[5]); break;
#endif
	case 3:
		k_cvt((const float *)a[1], *(int *)a[2], (unsigned short *)a[3], (unsigned short *)a[4], (unsigned *)a[5],
		      (unsigned *)a[6], (unsigned *)a[7], (unsigned *)a[8]);
		break;
	case 4: k_copy((const unsigned *)a[1], (unsigned *)a[2], *(int *)a[3]); break;
	case 5: k_errors((unsigned *)a[1], *(int *)a[2]); break;
	default: break;
	}
}
#endif
