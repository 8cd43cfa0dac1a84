// tilec_cpu_hip.h: the CPU stand-in for tilec_hip.h (cpu/cpuexec.h, target hip). The CPU build
// writes this file as tilec_hip.h beside tilec_cpu.h, so the HIP C that tilec emits compiles
// unchanged as C++17 (g++/clang++, -DTILEC_CPU=1 -DTL_CPU_WAVE=64 for gfx90a/gfx942, 32 for
// gfx1100) and runs with the meaning it has on the AMD GPU.
//
// Why a separate file that includes tilec_cpu.h (and not a macro branch inside it): the runtime
// (fibers, schedules, barriers, the warp collectives, guard pages, the job file, main) is the one
// of tilec_cpu.h, parameterized by TL_CPU_WAVE (lanes per wavefront); what differs is the device
// helper set, which has nothing in common with the PTX one but names (tl_cp_async16 is a plain
// copy here, an asynchronous one there; shuffles are ds_bpermute; MFMA/WMMA instead of
// ldmatrix/mma.sync/wgmma). tilec_cpu.h leaves its CUDA helpers out under TL_CPU_HIP, and this
// file adds the AMD ones, one helper for each of tilec_hip.h, with the same signatures, so a
// kernel that compiles here uses nothing tilec_hip.h does not have.
//
// Documents followed (cited at each helper):
//  [CDNA3] "AMD Instinct MI300 Instruction Set Architecture" (CDNA3 ISA): 7.1 "Matrix
//          fused-multiply-add (MFMA)" and the register layouts of V_MFMA_F32_16X16X16_F16 /
//          _BF16 as the AMD Matrix Instruction Calculator prints them (`matrix_calculator.py
//          -a cdna3 -i v_mfma_f32_16x16x16_f16 -d`, the same for CDNA2 V_MFMA_F32_16X16X16F16
//          and V_MFMA_F32_16X16X16BF16_1K); DS_BPERMUTE_B32 in the LDS instruction chapter
//          (12.x, "Data Share Operations").
//  [RDNA3] "RDNA3 Instruction Set Architecture": 7.9 "Wave Matrix Multiply Accumulate
//          (WMMA)", V_WMMA_F32_16X16X16_F16 / _BF16, wave32 register layouts as the
//          Matrix Instruction Calculator prints them (`-a rdna3 -i v_wmma_f32_16x16x16_f16
//          -w 32 -d`); DS_BPERMUTE_B32 (wave32: lane index modulo 32).
#pragma once
#ifndef TILEC_CPU_HIP_H
#define TILEC_CPU_HIP_H

#ifndef TL_CPU_WAVE
#error "the HIP CPU build sets TL_CPU_WAVE: 64 (gfx90a, gfx942) or 32 (gfx1100)"
#endif
#define TL_CPU_HIP 1
#include "tilec_cpu.h"

// ---- the language surface tilec_hip.h gives beyond tilec_cpu.h's --------------------------------
// (threadIdx, blockIdx, __syncthreads, __global__, __shared__, __launch_bounds__, __forceinline__,
// __align__, __restrict__, the bit casts and uint4/uint2 come from tilec_cpu.h)
#define __trap() tl_cpu_fail("__trap() (s_trap) executed")
// tilec_hip.h's integer min/max are functions of the usual arithmetic conversions, each
// operand evaluated once: tilec_cpu.h's (the emitted code calls them on integers only)
// tilec_hip.h (offline, without the device libraries) defines tanhf through expf; the same
// formula here, so the CPU run computes what that header does (expf is libm's)
#define tanhf(x) (1.0f - 2.0f / (expf(2.0f * (x)) + 1.0f))

// ---- vectors ----------------------------------------------------------------------------------
// tilec_hip.h: clang ext_vector_type. The emitted code uses uint4/uint2 through .x .y .z .w and
// make_uint4/make_uint2 (tilec_cpu.h's structs, 16- and 8-byte aligned as the ext vectors are),
// and the operand vectors tl_u16x4 / tl_u16x16 by element subscript (v[i], read and written):
// GCC's vector_size types have that subscript and the same size and alignment.
typedef uint4 tl_u32x4;
typedef uint2 tl_u32x2;
static inline tl_u32x4 tl_make_u32x4(tl_u32 a, tl_u32 b, tl_u32 c, tl_u32 d) { return make_uint4(a, b, c, d); }
static inline tl_u32x2 tl_make_u32x2(tl_u32 a, tl_u32 b) { return make_uint2(a, b); }
typedef unsigned short tl_u16x4 __attribute__((vector_size(8)));
typedef unsigned short tl_u16x8 __attribute__((vector_size(16)));
typedef unsigned short tl_u16x16 __attribute__((vector_size(32)));
static inline tl_u32 tl_float_as_uint(float f) { return __float_as_uint(f); }
static inline float tl_uint_as_float(tl_u32 u) { return __uint_as_float(u); }

// ---- "cp.async": a synchronous 16-byte copy through registers (tilec_hip.h) ----------------------
// A global_load_dwordx4 and a ds_write_b128 (the 16-byte vector type: both addresses 16-byte
// aligned); commit and wait are no-ops, the emitted barriers order the copies. The destination
// must be LDS (the emitted code's plan); zfill with pred false writes zeros and does not read the
// source (tilec_hip.h: the load is under the condition).
static inline void tl_cpu_hip_copy16(void *smem, const void *gmem, bool pred, const char *what)
{
	tl_cpu_check_shared(smem, 16, 16, what);
	if (pred && (uintptr_t)gmem % 16)
		tl_cpu_fail("%s: global source %p is not 16-byte aligned", what, gmem);
	if (pred)
		memcpy(smem, gmem, 16);
	else
		memset(smem, 0, 16);
}
// late_address_compute's opaque read: the value itself (the CPU run has no registers to spare)
static inline int tl_opaque_int(int x) { return x; }
static inline void tl_cp_async16(void *smem, const void *gmem) { tl_cpu_hip_copy16(smem, gmem, true, "tl_cp_async16"); }
static inline void tl_cp_async16_zfill(void *smem, const void *gmem, bool pred)
{
	tl_cpu_hip_copy16(smem, gmem, pred, "tl_cp_async16_zfill");
}
static inline void tl_cp_async_commit() {}
template <int N> static inline void tl_cp_async_wait() {}

// ---- conversions ----------------------------------------------------------------------------------
// tl_h2f: (float)_Float16, V_CVT_F32_F16: exact; a NaN stays a NaN, quieted, payload kept (IEEE
// 754 mode of compute kernels). tl_f2h: (_Float16)f, V_CVT_F16_F32: round to nearest even (the
// MODE register's default), f16 subnormals kept (their denormal mode is on by default), overflow
// to inf; a NaN gives a quiet NaN with the payload's top bits.
static inline float tl_h2f(tl_half_t h)
{
	if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
		return __uint_as_float(((tl_u32)(h & 0x8000) << 16) | 0x7fc00000u | ((tl_u32)(h & 0x3ff) << 13));
	return tl_cpu_h2f_tab[h];
}
static inline tl_half_t tl_f2h(float f)
{
	tl_u32 u = __float_as_uint(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (tl_half_t)(((u >> 16) & 0x8000) | 0x7e00 | ((u >> 13) & 0x3ff));
	return tl_cpu_f2h_num(f);
}
// bf16: tilec_hip.h's integer code (bit shifts, round to nearest even; NaN stays NaN)
static inline float tl_bf2f(tl_bf16_t h) { return __uint_as_float(((tl_u32)h) << 16); }
static inline tl_bf16_t tl_f2bf(float f)
{
	tl_u32 u = __float_as_uint(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (tl_bf16_t)((u >> 16) | 0x40);
	return (tl_bf16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}
static inline tl_u32 tl_pack_h2(float lo, float hi) { return (tl_u32)tl_f2h(lo) | (tl_u32)tl_f2h(hi) << 16; }
static inline tl_u32 tl_pack_bf2(float lo, float hi) { return (tl_u32)tl_f2bf(lo) | (tl_u32)tl_f2bf(hi) << 16; }

// ---- cross-lane: ds_bpermute over the wavefront -----------------------------------------------------
// tl_lane_id: mbcnt_hi(~0, mbcnt_lo(~0, 0)), the lane's index in its wavefront.
static inline int tl_lane_id() { return tl_cpu_cur->lane; }

// DS_BPERMUTE_B32 ([CDNA3], [RDNA3] LDS instructions, "backward permute"): lane t reads the data
// of lane (addr[t] / 4) modulo the wave size (the offset field is 0 here); a source lane that is
// not active (past the end of a partial last wavefront of the block) gives 0. A wave collective:
// every lane that exists executes it (the emitted code calls it outside divergent control).
static tl_u32 tl_cpu_bpermute(int addr, tl_u32 v)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];

	w->v[me->lane] = v;
	w->b[me->lane] = addr;
	tl_cpu_warp_collective(w, "ds_bpermute_b32", [w] {
		for (int t = 0; t < w->expected; t++) {
			int src = (int)(((unsigned)w->b[t] >> 2) % TL_CPU_WAVE);

			w->out[t] = src < w->expected ? w->v[src] : 0;
		}
	});
	return (tl_u32)w->out[me->lane];
}

static inline float tl_shfl_xor(float v, int o)
{
	return __uint_as_float(tl_cpu_bpermute((tl_lane_id() ^ o) << 2, __float_as_uint(v)));
}

// CUDA's __shfl_xor_sync for the reduce lowering, as tilec_hip.h: one ds_bpermute per 32-bit
// word (the same overload set: int, float, long long, double); the mask is ignored
static inline int tl_shfl_xor_t(int v, int o) { return (int)tl_cpu_bpermute((tl_lane_id() ^ o) << 2, (tl_u32)v); }
static inline float tl_shfl_xor_t(float v, int o) { return __int_as_float(tl_shfl_xor_t(__float_as_int(v), o)); }
static inline long long tl_shfl_xor_t(long long v, int o)
{
	tl_u64 u = (tl_u64)v;
	tl_u32 lo = (tl_u32)tl_shfl_xor_t((int)(tl_u32)u, o), hi = (tl_u32)tl_shfl_xor_t((int)(tl_u32)(u >> 32), o);

	return (long long)(((tl_u64)hi << 32) | lo);
}
static inline double tl_shfl_xor_t(double v, int o)
{
	return __longlong_as_double(tl_shfl_xor_t(__double_as_longlong(v), o));
}
#define __shfl_xor_sync(mask, v, o) tl_shfl_xor_t((v), (o))

static inline float tl_warp_sum(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v += tl_shfl_xor(v, o);
	return v;
}

static inline float tl_warp_max(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v = fmaxf(v, tl_shfl_xor(v, o));
	return v;
}

// ---- operand reads from LDS: ds_read_b64 / two ds_read_b128 -----------------------------------------
// the vector types' alignment (8 and 16 bytes) is required (clang emits the aligned instruction)
static inline tl_u16x4 tl_ld_u16x4(const tl_half_t *p)
{
	tl_u16x4 v;

	if ((uintptr_t)p % 8)
		tl_cpu_fail("tl_ld_u16x4: address %p is not 8-byte aligned", (const void *)p);
	memcpy(&v, p, 8);
	return v;
}

static inline tl_u16x16 tl_ld_u16x16(const tl_half_t *lo, const tl_half_t *hi)
{
	tl_u16x16 v;

	if ((uintptr_t)lo % 16 || (uintptr_t)hi % 16)
		tl_cpu_fail("tl_ld_u16x16: addresses %p, %p are not 16-byte aligned", (const void *)lo, (const void *)hi);
	memcpy(&v, lo, 16);
	memcpy((char *)&v + 16, hi, 16);
	return v;
}

// ---- matrix instructions ------------------------------------------------------------------------------
// D = A B + C for one 16x16x16 instruction of the wavefront, every lane's operands gathered by the
// collective's last lane. Each element's dot product is computed in double and rounded to f32
// once (the ISA leaves the accumulation order and intermediate rounding to the hardware; gemm
// checks use a tolerance, or integer inputs whose sums are exact), as the mma.sync emulation does.
template <int BF> static inline double tl_cpu_hip_in(unsigned short h)
{
	return BF ? (double)tl_bf2f(h) : (double)tl_cpu_h2f_tab[h];
}

__attribute__((optimize("O2"))) static void tl_cpu_mm16(double (*A)[16], double (*B)[16], double (*C)[16])
{
	for (int i = 0; i < 16; i++) {
		double c[16];

		for (int j = 0; j < 16; j++)
			c[j] = C[i][j];
#pragma GCC unroll 16
		for (int k = 0; k < 16; k++) {
			double a = A[i][k];

#pragma GCC unroll 16
			for (int j = 0; j < 16; j++)
				c[j] += a * B[k][j];
		}
		for (int j = 0; j < 16; j++)
			C[i][j] = c[j];
	}
}

#if TL_CPU_WAVE == 64
// V_MFMA_F32_16X16X16_F16 / V_MFMA_F32_16X16X16BF16_1K (CDNA2; CDNA3 V_MFMA_F32_16X16X16_BF16), wave64,
// [CDNA3] 7.1 and the Matrix Instruction Calculator's "register to matrix element mapping":
//   A (16x16, M x K): element v (0..3) of lane l is A[i = l % 16][k = 4 (l / 16) + v]
//                     (GPR v / 2, bits 16 (v % 2)); B (K x N): B[k = 4 (l / 16) + v][j = l % 16];
//   C, D (f32):       register v of lane l is D[i = 4 (l / 16) + v][j = l % 16].
// Written from the document, independently of gen/layout/mma.c's mfma_fragment.
template <int BF> __attribute__((optimize("O2"))) static void tl_cpu_mfma_compute(tl_cpu_warp *w)
{
	double A[16][16], B[16][16], C[16][16];

	for (int l = 0; l < 64; l++) {
		const tl_u16x4 a = *(const tl_u16x4 *)w->p[l], b = *(const tl_u16x4 *)w->r[l];
		const float *c = (const float *)w->q[l];

		for (int v = 0; v < 4; v++) {
			A[l % 16][4 * (l / 16) + v] = tl_cpu_hip_in<BF>(a[v]);
			B[4 * (l / 16) + v][l % 16] = tl_cpu_hip_in<BF>(b[v]);
			C[4 * (l / 16) + v][l % 16] = c[v];
		}
	}
	tl_cpu_mm16(A, B, C);
	for (int l = 0; l < 64; l++) {
		float *d = (float *)w->q[l];

		for (int v = 0; v < 4; v++)
			d[v] = (float)C[4 * (l / 16) + v][l % 16];
	}
}

static void tl_cpu_mfma(float *c, const tl_u16x4 *a, const tl_u16x4 *b, int bf)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];
	const char *name = bf ? "v_mfma_f32_16x16x16bf16_1k" : "v_mfma_f32_16x16x16f16";

	tl_cpu_full_warp(name);
	w->p[me->lane] = a;
	w->r[me->lane] = b;
	w->q[me->lane] = c;
	tl_cpu_warp_collective(w, name, [w, bf] { bf ? tl_cpu_mfma_compute<1>(w) : tl_cpu_mfma_compute<0>(w); });
}

// c[0..4): this lane's accumulators; a, b: its 4 halves of A and B (f16 or bf16 bits)
static inline void tl_mfma_f16_16x16x16(float *c, tl_u16x4 a, tl_u16x4 b) { tl_cpu_mfma(c, &a, &b, 0); }
static inline void tl_mfma_bf16_16x16x16(float *c, tl_u16x4 a, tl_u16x4 b) { tl_cpu_mfma(c, &a, &b, 1); }
#endif

#if TL_CPU_WAVE == 32
// V_WMMA_F32_16X16X16_F16 / _BF16 (RDNA3, wave32), [RDNA3] 7.9 and the Matrix Instruction
// Calculator's wave32 mappings:
//   A (M x K): element k (0..15, GPR k / 2, bits 16 (k % 2)) of lanes i and i + 16 is A[i][k];
//   B (K x N): element k of lanes j and j + 16 is B[k][j];
//   C, D (f32, 8 registers): register r of lane l is D[i = 2 r + l / 16][j = l % 16].
// A and B are held twice, by both half-waves; the emulation reads lanes 0-15 and reports lanes
// 16-31 that hold something else (the documents give no meaning to such a program).
// Written from the document, independently of gen/layout/mma.c's wmma_fragment.
template <int BF> __attribute__((optimize("O2"))) static void tl_cpu_wmma_compute(tl_cpu_warp *w, const char *name)
{
	double A[16][16], B[16][16], C[16][16];

	for (int l = 0; l < 16; l++) {
		const tl_u16x16 a = *(const tl_u16x16 *)w->p[l], b = *(const tl_u16x16 *)w->r[l];
		const tl_u16x16 a2 = *(const tl_u16x16 *)w->p[l + 16], b2 = *(const tl_u16x16 *)w->r[l + 16];

		for (int k = 0; k < 16; k++) {
			if (a[k] != a2[k] || b[k] != b2[k])
				tl_cpu_fail("%s: lanes %d and %d hold different %s elements (k %d: 0x%04x and 0x%04x); RDNA3 "
					    "ISA 7.9: both half-waves hold the same A and B (a wrong operand fragment, or LDS "
					    "written by another wave while this one read its operands: a missing barrier)",
					    name, l, l + 16, a[k] != a2[k] ? "A" : "B", k, a[k] != a2[k] ? a[k] : b[k],
					    a[k] != a2[k] ? a2[k] : b2[k]);
			A[l][k] = tl_cpu_hip_in<BF>(a[k]);
			B[k][l] = tl_cpu_hip_in<BF>(b[k]);
		}
	}
	for (int l = 0; l < 32; l++) {
		const float *c = (const float *)w->q[l];

		for (int r = 0; r < 8; r++)
			C[2 * r + l / 16][l % 16] = c[r];
	}
	tl_cpu_mm16(A, B, C);
	for (int l = 0; l < 32; l++) {
		float *d = (float *)w->q[l];

		for (int r = 0; r < 8; r++)
			d[r] = (float)C[2 * r + l / 16][l % 16];
	}
}

static void tl_cpu_wmma(float *c, const tl_u16x16 *a, const tl_u16x16 *b, int bf)
{
	tl_cpu_fiber *me = tl_cpu_cur;
	tl_cpu_warp *w = &tl_cpu_warps[me->warp];
	const char *name = bf ? "v_wmma_f32_16x16x16_bf16" : "v_wmma_f32_16x16x16_f16";

	tl_cpu_full_warp(name);
	w->p[me->lane] = a;
	w->r[me->lane] = b;
	w->q[me->lane] = c;
	tl_cpu_warp_collective(w, name,
			       [w, bf, name] { bf ? tl_cpu_wmma_compute<1>(w, name) : tl_cpu_wmma_compute<0>(w, name); });
}

// c[0..8): this lane's accumulators; a, b: its 16 halves of A and B (f16 or bf16 bits)
static inline void tl_wmma_f16_16x16x16(float *c, tl_u16x16 a, tl_u16x16 b) { tl_cpu_wmma(c, &a, &b, 0); }
static inline void tl_wmma_bf16_16x16x16(float *c, tl_u16x16 a, tl_u16x16 b) { tl_cpu_wmma(c, &a, &b, 1); }
#endif

#endif // TILEC_CPU_HIP_H
