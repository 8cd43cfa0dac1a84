/*
 * cpu_exec_ref.h: the expected results of the hardware primitives that
 * templates/tilec_cpu.h emulates, written from the PTX ISA and the CUDA
 * Programming Guide independently of the emulation (other directions, other
 * formulations). Shared by test/check_cpu_exec.c (against the CPU emulation)
 * and test/gpu/cpu_emul.cu (against an H200), so that both are held to the
 * same tables. Plain C (C11 and C++ both include it); every function static.
 */
#ifndef CPU_EXEC_REF_H
#define CPU_EXEC_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- conversions: RNE by arithmetic in double (not by bit manipulation) ---- */

static uint32_t
ref_fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
ref_bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* round |x| (finite, > 0) to p significant bits with exponents down to emin
 * (subnormal below), ties to even: returns the rounded value as a double */
static double
ref_round(double x, int p, int emin)
{
	int e;
	double scale, q;

	frexp(x, &e); /* x = m 2^e, m in [0.5, 1) */
	e -= 1;                             /* x = (2m) 2^e, 2m in [1, 2) */
	if (e < emin)
		e = emin;
	scale = ldexp(1.0, e - (p - 1));     /* the unit in the last place */
	q = x / scale;                       /* exact: a power-of-2 scaling */
	{
		double fl = floor(q), r = q - fl;

		if (r > 0.5 || (r == 0.5 && fmod(fl, 2.0) != 0.0))
			fl += 1.0;
		q = fl;
	}
	return q * scale;
}

/* f32 -> f16 bits, cvt.rn.f16.f32; NaN -> 0x7fff */
static uint16_t
ref_f2h(float f)
{
	uint16_t sign = (ref_fbits(f) >> 16) & 0x8000;
	double x = fabs((double)f), r;
	int e;

	if (f != f)
		return 0x7fff;
	if (x == 0)
		return sign;
	r = ref_round(x, 11, -14);
	if (r >= 65536.0)
		return sign | 0x7c00;
	if (r < ldexp(1.0, -14))                      /* subnormal: r = q 2^-24 */
		return sign | (uint16_t)(r / ldexp(1.0, -24));
	frexp(r, &e);
	e -= 1;
	return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(r / ldexp(1.0, e - 10) - 1024);
}

/* f16 bits -> f32 (exact); NaN -> 0x7fffffff */
static float
ref_h2f(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31)
		return m ? ref_bitsf(0x7fffffffu) : ((h & 0x8000) ? -INFINITY : INFINITY);
	v = e ? ldexp(1024.0 + m, e - 25) : ldexp((double)m, -24);
	return (float)((h & 0x8000) ? -v : v);
}

/* f32 -> bf16 bits, cvt.rn.bf16.f32; NaN -> 0x7fff */
static uint16_t
ref_f2bf(float f)
{
	uint16_t sign = (ref_fbits(f) >> 16) & 0x8000;
	double x = fabs((double)f), r;

	if (f != f)
		return 0x7fff;
	if (x == 0)
		return sign;
	r = ref_round(x, 8, -126);
	if (r >= ldexp(1.0, 128))
		return sign | 0x7f80;
	return sign | (uint16_t)(ref_fbits((float)r) >> 16); /* r has 8 significant bits: exact */
}

static float
ref_bf2f(uint16_t h)
{
	return ref_bitsf((uint32_t)h << 16);
}

/* ---- shuffles: the CUDA Programming Guide's description of each intrinsic ----
 * lane: the caller, w: width; returns the lane whose value the caller gets */
static int
ref_shfl_idx(int lane, int src, int w)
{
	return lane / w * w + (src % w + w) % w;       /* "srcLane modulo width", own segment */
}

static int
ref_shfl_up(int lane, int delta, int w)
{
	return lane % w >= delta ? lane - delta : lane; /* below the segment start: unchanged */
}

static int
ref_shfl_down(int lane, int delta, int w)
{
	return lane % w + delta < w ? lane + delta : lane;
}

static int
ref_shfl_xor(int lane, int mask, int w)
{
	int j = lane ^ mask;                            /* earlier segments may be read, */
	return j < (lane / w + 1) * w ? j : lane;       /* later ones give the own value */
}

/* ---- ldmatrix .m8n8.x4.b16: where element (row r, col c) of matrix m goes ----
 * (inverse direction of PTX Figure 104: a group of four lanes holds one row,
 * two consecutive columns per lane) */
static void
ref_ldmatrix_dest(int m, int r, int c, int trans, int *lane, int *reg, int *half)
{
	if (!trans) {
		*lane = r * 4 + c / 2;
		*half = c % 2;
	} else { /* the fragment of the transposed matrix: element (r, c) is its (c, r) */
		*lane = c * 4 + r / 2;
		*half = r % 2;
	}
	*reg = m;
}

/* ---- mma.m16n8k16 fragments (PTX 9.7.14.5.8), element -> (lane, reg, half) ---- */
static void
ref_mma_a_dest(int row, int col, int *lane, int *reg, int *half)
{
	/* a0,a1: (g, 2t..2t+1)  a2,a3: (g+8, ..)  a4,a5: (g, 2t+8..)  a6,a7: (g+8, 2t+8..) */
	int i = (row >= 8 ? 2 : 0) + (col >= 8 ? 4 : 0) + col % 2;

	*lane = (row % 8) * 4 + (col % 8) / 2;
	*reg = i / 2;
	*half = i % 2;
}

static void
ref_mma_b_dest(int k, int n, int *lane, int *reg, int *half)
{
	/* b0,b1: k = 2t..2t+1, b2,b3: k = 2t+8..; n = g */
	int i = (k >= 8 ? 2 : 0) + k % 2;

	*lane = n * 4 + (k % 8) / 2;
	*reg = i / 2;
	*half = i % 2;
}

static void
ref_mma_c_dest(int row, int col, int *lane, int *reg)
{
	*lane = (row % 8) * 4 + col / 2;
	*reg = (row >= 8 ? 2 : 0) + col % 2;
}

/* ---- wgmma m64nNk16 f32 accumulator (PTX Figure 149): warp w of the warpgroup
 * covers rows 16w..16w+15, each n8 column block j = reg / 4 is laid out as the
 * C fragment of mma.m16n8 (reg % 4) ---- */
static void
ref_wgmma_d_coord(int thread, int reg, int *row, int *col)
{
	int l = thread % 32, r4 = reg % 4;

	*row = 16 * (thread / 32) + l / 4 + (r4 >= 2 ? 8 : 0);
	*col = 8 * (reg / 4) + 2 * (l % 4) + r4 % 2;
}

/* ---- wgmma shared-memory canonical layouts (PTX 9.7.15.5.1.2.1.3), evaluated as
 * CuTe layouts: a coordinate is split colexicographically over the modes'
 * sizes and the pieces weighted by the strides; strides in 16-bit elements. ---- */
typedef struct RefMode {
	long size, stride;
} RefMode;

static long
ref_layout_eval(const RefMode *modes, int n, long x)
{
	long off = 0;

	for (int i = 0; i < n; i++) {
		long c = i == n - 1 ? x : x % modes[i].size; /* the last mode takes the rest */

		off += c * modes[i].stride;
		x /= modes[i].size;
	}
	return off;
}

/* Swizzle<B, M, S> of CuTe on an offset: bits [M, M+B) ^= bits [M+S, M+S+B) */
static unsigned long
ref_swizzle(int B, int M, int S, unsigned long a)
{
	unsigned long yyy = ((1ul << B) - 1) << (M + S);

	return a ^ ((a & yyy) >> S);
}

/* the shared byte address of element (mn, k) of a 16-bit operand; mode: the
 * descriptor's swizzle field (0 none, 1 128B, 2 64B, 3 32B), lbo/sbo in bytes */
static unsigned long
ref_canonical_addr(unsigned long start, int mn_major, int mode, long lbo, long sbo, int mn, int k)
{
	const long T = 8; /* 128 bits of 16-bit elements */
	long L = lbo / 2, S = sbo / 2, c = mode == 1 ? 8 : mode == 2 ? 4 : mode == 3 ? 2 : 1;
	int B = mode == 1 ? 3 : mode == 2 ? 2 : mode == 3 ? 1 : 0;
	RefMode mnm[3], km[2];
	int nmn, nk;

	if (mn_major) {
		if (mode == 0) { /* ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) */
			mnm[0] = (RefMode){T, 1};
			mnm[1] = (RefMode){1, T};
			mnm[2] = (RefMode){1 << 20, S};
			km[0] = (RefMode){8, T};
			km[1] = (RefMode){1 << 20, L};
		} else { /* ((T,c,m),(8,k)):((1,T,LBO),(cT,SBO)) */
			mnm[0] = (RefMode){T, 1};
			mnm[1] = (RefMode){c, T};
			mnm[2] = (RefMode){1 << 20, L};
			km[0] = (RefMode){8, c * T};
			km[1] = (RefMode){1 << 20, S};
		}
		nmn = 3;
		nk = 2;
	} else {
		if (mode == 0) { /* ((8,m),(T,2k)):((1T,SBO),(1,LBO)) */
			mnm[0] = (RefMode){8, T};
			mnm[1] = (RefMode){1 << 20, S};
			km[0] = (RefMode){T, 1};
			km[1] = (RefMode){1 << 20, L};
		} else { /* ((8,m),(T,2k)):((cT,SBO),(1,T)) */
			mnm[0] = (RefMode){8, c * T};
			mnm[1] = (RefMode){1 << 20, S};
			km[0] = (RefMode){T, 1};
			km[1] = (RefMode){1 << 20, T};
		}
		nmn = 2;
		nk = 2;
	}
	return ref_swizzle(B, 4, 3,
			   start + 2 * (unsigned long)(ref_layout_eval(mnm, nmn, mn) + ref_layout_eval(km, nk, k)));
}

typedef struct RefWgCase {
	const char *name;
	int kernel, n, tb, bf, nk, imgbytes;
	int offa, lboa, sboa, modea, adva;
	int offb, lbob, sbob, modeb, advb;
} RefWgCase;

/* ---- the wgmma cases of test/cpu_exec_kernels.cu: the kernels of its table:'s table: 0 n64/t1, 1 n256/t1, 2 n32/t1, 3 n8/t1,
 * 4 n64/t0, 5 n128/t0, 6 n256/t0, 7 n64/t1 bf16, 8 n96/t0 bf16 (t1: B N-major) */
static const RefWgCase ref_wg_cases[] = {
	{"m64n64k16 x4, A K-major 128B, B N-major 128B", 0, 64, 1, 0, 4, 16384, 0, 16, 1024, 1, 32, 8192, 8192, 1024, 1, 2048},
	{"m64n256k16 x4, 128B (the gemm_sm90 layout)", 1, 256, 1, 0, 4, 40960, 0, 16, 1024, 1, 32, 8192, 8192, 1024, 1, 2048},
	{"m64n64k16 x2, 64B swizzles", 0, 64, 1, 0, 2, 8192, 0, 16, 512, 2, 32, 4096, 2048, 512, 2, 1024},
	{"m64n32k16 x2, 32B swizzles", 2, 32, 1, 0, 2, 6144, 0, 16, 256, 3, 2048, 4096, 1024, 256, 3, 512},
	{"m64n64k16 x2, no swizzle (core matrices)", 0, 64, 1, 0, 2, 8192, 0, 128, 256, 0, 2048, 4096, 1024, 128, 0, 2048},
	{"m64n64k16 x4, B K-major 128B", 4, 64, 0, 0, 4, 16384, 0, 16, 1024, 1, 32, 8192, 16, 1024, 1, 32},
	{"m64n128k16 x2, A and B K-major 64B", 5, 128, 0, 0, 2, 12288, 0, 16, 512, 2, 32, 4096, 16, 512, 2, 32},
	{"m64n256k16, A and B K-major 32B", 6, 256, 0, 0, 1, 10240, 0, 16, 256, 3, 0, 2048, 16, 256, 3, 0},
	{"m64n8k16 x4, B N-major 128B, N below the swizzle width", 3, 8, 1, 0, 4, 16384, 0, 16, 1024, 1, 32, 8192, 0, 1024, 1, 2048},
	{"m64n64k16 x4 bf16, 128B", 7, 64, 1, 1, 4, 16384, 0, 16, 1024, 1, 32, 8192, 8192, 1024, 1, 2048},
	{"m64n96k16 x2 bf16, B K-major, no swizzle", 8, 96, 0, 1, 2, 10240, 0, 128, 256, 0, 2048, 4096, 128, 256, 0, 3072},
	{"m64n64k16, A 128B with SBO 2048, B N-major 64B at 17408", 0, 64, 1, 0, 1, 20480, 0, 16, 2048, 1, 0, 17408, 2048, 512, 2, 0},
};

#endif
