// tilec_hip.h: device helpers included by the HIP C that tilec emits (--target=hip).
// The same helper names as tilec_cuda.h, so one lowering serves both: cp.async becomes a
// plain 16-byte copy through registers (commit and wait are no-ops; the emitted barriers
// order the copies), there is no ldmatrix (the gemm reads LDS per fragment), MFMA/WMMA
// through the clang builtins. Self-contained: under hipRTC (__HIPCC_RTC__) the runtime
// header gives the HIP names; offline (clang -x hip -nogpuinc -nogpulib) this file does.
#pragma once

#ifndef __HIPCC_RTC__
// ---- the HIP language names, for clang without the ROCm headers ---------------------
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define __forceinline__ inline __attribute__((always_inline))
struct tl_dim3 {
	unsigned x, y, z;
};
static __device__ __forceinline__ tl_dim3 tl_thread_idx()
{
	return {__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
		__builtin_amdgcn_workitem_id_z()};
}
static __device__ __forceinline__ tl_dim3 tl_block_idx()
{
	return {__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),
		__builtin_amdgcn_workgroup_id_z()};
}
#define threadIdx (tl_thread_idx())
#define blockIdx (tl_block_idx())
static __device__ __forceinline__ void __syncthreads()
{
	__builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
	__builtin_amdgcn_s_barrier();
	__builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
// math without the device libraries: the builtins the AMDGPU backend lowers itself
#define expf __builtin_expf
#define exp2f __builtin_exp2f
#define logf __builtin_logf
#define log2f __builtin_log2f
#define sqrtf __builtin_sqrtf
#define rsqrtf(x) __builtin_amdgcn_rsqf(x)
#define fabsf __builtin_fabsf
#define fmaxf __builtin_fmaxf
#define fminf __builtin_fminf
#define sinf __builtin_sinf
#define cosf __builtin_cosf
#define tanhf(x) (1.0f - 2.0f / (__builtin_expf(2.0f * (x)) + 1.0f))
#endif

#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
#define TL_DEVICE static __device__ __forceinline__

// x through an empty asm the compiler cannot see into: a value recomputed from it is not
// merged with an earlier one (late_address_compute: the lane and warp of an address are
// computed at the use, so their registers are not live from the kernel entry)
TL_DEVICE int tl_opaque_int(int x)
{
	__asm__ volatile("" : "+v"(x));
	return x;
}

typedef unsigned short tl_half_t;  // f16 bits
typedef unsigned short tl_bf16_t;  // bf16 bits
typedef unsigned int tl_u32;
typedef unsigned long long tl_u64;

// ---- vectors: 16- and 8-byte accesses (global_load_dwordx4, ds_read_b128) --------------
typedef unsigned tl_u32x4 __attribute__((ext_vector_type(4)));
typedef unsigned tl_u32x2 __attribute__((ext_vector_type(2)));
TL_DEVICE tl_u32x4 tl_make_u32x4(tl_u32 a, tl_u32 b, tl_u32 c, tl_u32 d)
{
	return (tl_u32x4){a, b, c, d};
}
TL_DEVICE tl_u32x2 tl_make_u32x2(tl_u32 a, tl_u32 b)
{
	return (tl_u32x2){a, b};
}
// the emitted code spells the CUDA names
#define uint4 tl_u32x4
#define uint2 tl_u32x2
#define make_uint4 tl_make_u32x4
#define make_uint2 tl_make_u32x2

TL_DEVICE tl_u32 tl_float_as_uint(float f)
{
	return __builtin_bit_cast(tl_u32, f);
}
TL_DEVICE float tl_uint_as_float(tl_u32 u)
{
	return __builtin_bit_cast(float, u);
}
#define __int_as_float(x) tl_uint_as_float((tl_u32)(x))
#define __longlong_as_double(x) __builtin_bit_cast(double, (unsigned long long)(x))
#define __float_as_uint tl_float_as_uint
#define __uint_as_float tl_uint_as_float
#define __trap() __builtin_trap()
// integer min/max (float code uses fminf/fmaxf): functions, as CUDA's, so each operand is
// evaluated once. The reduce lowering passes a shuffle as one: a macro ran it twice, the
// second time in the lanes of one branch of the ?: only (a ds_bpermute under a partial EXEC
// mask, from lanes that did not write)
template <class A, class B> TL_DEVICE auto tl_min(A a, B b) -> decltype(a + b)
{
	return a < b ? a : b;
}
template <class A, class B> TL_DEVICE auto tl_max(A a, B b) -> decltype(a + b)
{
	return a > b ? a : b;
}
#define min(a, b) tl_min((a), (b))
#define max(a, b) tl_max((a), (b))

#include "tilec_portable.h"

// ---- "cp.async": a 16-byte copy through registers --------------------------------------
TL_DEVICE void tl_cp_async16(void *smem, const void *gmem)
{
	*(tl_u32x4 *)smem = *(const tl_u32x4 *)gmem;
}

// predicated: zeros when pred is false (the global address is not read then)
TL_DEVICE void tl_cp_async16_zfill(void *smem, const void *gmem, bool pred)
{
	tl_u32x4 z = {0, 0, 0, 0};
	*(tl_u32x4 *)smem = pred ? *(const tl_u32x4 *)gmem : z;
}

TL_DEVICE void tl_cp_async_commit()
{
}

// the copies above complete in program order; the barrier that follows orders them
template <int N> TL_DEVICE void tl_cp_async_wait()
{
}

// ---- conversions --------------------------------------------------------------------
TL_DEVICE float tl_h2f(tl_half_t h)
{
	return (float)__builtin_bit_cast(_Float16, h);
}

TL_DEVICE tl_half_t tl_f2h(float f)
{
	return __builtin_bit_cast(tl_half_t, (_Float16)f);
}

TL_DEVICE float tl_bf2f(tl_bf16_t h)
{
	return __builtin_bit_cast(float, ((tl_u32)h) << 16);
}

// round to nearest even; NaN stays NaN
TL_DEVICE tl_bf16_t tl_f2bf(float f)
{
	tl_u32 u = __builtin_bit_cast(tl_u32, f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (tl_bf16_t)((u >> 16) | 0x40);
	return (tl_bf16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

TL_DEVICE tl_u32 tl_pack_h2(float lo, float hi)
{
	return (tl_u32)tl_f2h(lo) | (tl_u32)tl_f2h(hi) << 16;
}

TL_DEVICE tl_u32 tl_pack_bf2(float lo, float hi)
{
	return (tl_u32)tl_f2bf(lo) | (tl_u32)tl_f2bf(hi) << 16;
}

// ---- atomics: atomic_add/max/min and copy(..., op = add|max|min); no old value is returned.
// f32 and i32 add, i32 and f32 max/min: clang's __hip_atomic_fetch_* at agent scope (a
// native instruction where the arch has one, else the compiler's compare-and-swap loop);
// f16, bf16 and their pairs: a compare-and-swap loop on the 32-bit word that holds them.
#define TL_ATOMIC(op, p, v) __hip_atomic_fetch_##op((p), (v), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)
TL_DEVICE void tl_atomic_add_f32(float *p, float v)
{
	TL_ATOMIC(add, p, v);
}

TL_DEVICE void tl_atomic_add_i32(int *p, int v)
{
	TL_ATOMIC(add, p, v);
}

TL_DEVICE void tl_atomic_max_i32(int *p, int v)
{
	TL_ATOMIC(max, p, v);
}

TL_DEVICE void tl_atomic_min_i32(int *p, int v)
{
	TL_ATOMIC(min, p, v);
}

TL_DEVICE void tl_atomic_max_f32(float *p, float v)
{
	TL_ATOMIC(max, p, v);
}

TL_DEVICE void tl_atomic_min_f32(float *p, float v)
{
	TL_ATOMIC(min, p, v);
}

// the 32-bit word w updated by f (word -> word) until no other thread changed it between
template <class F> TL_DEVICE void tl_atomic_cas32(tl_u32 *w, F f)
{
	tl_u32 old = __hip_atomic_load(w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT), as;

	do {
		as = old;
	} while (!__hip_atomic_compare_exchange_strong(w, &old, f(as), __ATOMIC_RELAXED, __ATOMIC_RELAXED,
						       __HIP_MEMORY_SCOPE_AGENT));
	(void)as;
}

TL_DEVICE tl_u32 tl_hadd_bits(tl_u32 a, tl_u32 b)
{
	return tl_f2h(tl_h2f((tl_half_t)a) + tl_h2f((tl_half_t)b));
}

TL_DEVICE tl_u32 tl_bfadd_bits(tl_u32 a, tl_u32 b)
{
	return tl_f2bf(tl_bf2f((tl_bf16_t)a) + tl_bf2f((tl_bf16_t)b));
}

TL_DEVICE void tl_atomic_add_f16(tl_half_t *p, tl_half_t v)
{
	tl_u32 sh = (tl_u32)((unsigned long long)p & 2) * 8;

	tl_atomic_cas32((tl_u32 *)((unsigned long long)p & ~3ull), [=](tl_u32 w) {
		return (w & ~(0xffffu << sh)) | tl_hadd_bits(w >> sh, v) << sh;
	});
}

TL_DEVICE void tl_atomic_add_bf16(tl_bf16_t *p, tl_bf16_t v)
{
	tl_u32 sh = (tl_u32)((unsigned long long)p & 2) * 8;

	tl_atomic_cas32((tl_u32 *)((unsigned long long)p & ~3ull), [=](tl_u32 w) {
		return (w & ~(0xffffu << sh)) | tl_bfadd_bits(w >> sh, v) << sh;
	});
}

// p[0] += lo(v), p[1] += hi(v); p 4-byte aligned
TL_DEVICE void tl_atomic_add_f16x2(tl_half_t *p, tl_u32 v)
{
	tl_atomic_cas32((tl_u32 *)p, [=](tl_u32 w) {
		return tl_hadd_bits(w & 0xffffu, v & 0xffffu) | tl_hadd_bits(w >> 16, v >> 16) << 16;
	});
}

TL_DEVICE void tl_atomic_add_bf16x2(tl_bf16_t *p, tl_u32 v)
{
	tl_atomic_cas32((tl_u32 *)p, [=](tl_u32 w) {
		return tl_bfadd_bits(w & 0xffffu, v & 0xffffu) | tl_bfadd_bits(w >> 16, v >> 16) << 16;
	});
}

// ---- cross-lane: ds_bpermute (wave32 and wave64) --------------------------------------
TL_DEVICE int tl_lane_id()
{
	return (int)__builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

TL_DEVICE float tl_shfl_xor(float v, int o)
{
	int src = (tl_lane_id() ^ o) << 2;
	return __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute(src, __builtin_bit_cast(int, v)));
}

// CUDA's __shfl_xor_sync for the reduce lowering (float, int, double, long long): one
// ds_bpermute per 32-bit word; CUDA's mask has no meaning on a wavefront (all lanes take part)
TL_DEVICE int tl_shfl_xor_t(int v, int o)
{
	return __builtin_amdgcn_ds_bpermute((tl_lane_id() ^ o) << 2, v);
}
TL_DEVICE float tl_shfl_xor_t(float v, int o)
{
	return __builtin_bit_cast(float, tl_shfl_xor_t(__builtin_bit_cast(int, v), o));
}
TL_DEVICE long long tl_shfl_xor_t(long long v, int o)
{
	tl_u64 u = (tl_u64)v;
	tl_u32 lo = (tl_u32)tl_shfl_xor_t((int)(tl_u32)u, o), hi = (tl_u32)tl_shfl_xor_t((int)(tl_u32)(u >> 32), o);
	return (long long)(((tl_u64)hi << 32) | lo);
}
TL_DEVICE double tl_shfl_xor_t(double v, int o)
{
	return __builtin_bit_cast(double, tl_shfl_xor_t(__builtin_bit_cast(long long, v), o));
}
#define __shfl_xor_sync(mask, v, o) tl_shfl_xor_t((v), (o))

TL_DEVICE float tl_warp_sum(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v += tl_shfl_xor(v, o);
	return v;
}

TL_DEVICE float tl_warp_max(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v = __builtin_fmaxf(v, tl_shfl_xor(v, o));
	return v;
}

// ---- MFMA 16x16x16 (CDNA, wave64): a, b 4 elements per lane, c 4 floats per lane --------
// operands travel as 16-bit patterns (f16 or bf16 bits), packed two to a register
typedef unsigned short tl_u16x4 __attribute__((ext_vector_type(4)));
typedef unsigned short tl_u16x16 __attribute__((ext_vector_type(16)));
typedef unsigned short tl_u16x8 __attribute__((ext_vector_type(8)));

// K-contiguous operand runs from LDS: one ds_read_b64, or two ds_read_b128
TL_DEVICE tl_u16x4 tl_ld_u16x4(const tl_half_t *p)
{
	return *(const tl_u16x4 *)p;
}

TL_DEVICE tl_u16x16 tl_ld_u16x16(const tl_half_t *lo, const tl_half_t *hi)
{
	tl_u16x8 a = *(const tl_u16x8 *)lo, b = *(const tl_u16x8 *)hi;
	return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
typedef _Float16 tl_f16x4 __attribute__((ext_vector_type(4)));
typedef short tl_i16x4 __attribute__((ext_vector_type(4)));
typedef float tl_f32x4 __attribute__((ext_vector_type(4)));

#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || \
	defined(__gfx908__)
TL_DEVICE void tl_mfma_f16_16x16x16(float *c, tl_u16x4 a, tl_u16x4 b)
{
	tl_f32x4 cv = {c[0], c[1], c[2], c[3]};
	cv = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(tl_f16x4, a),
						   __builtin_bit_cast(tl_f16x4, b), cv, 0, 0, 0);
	for (int i = 0; i < 4; i++)
		c[i] = cv[i];
}

TL_DEVICE void tl_mfma_bf16_16x16x16(float *c, tl_u16x4 a, tl_u16x4 b)
{
	tl_f32x4 cv = {c[0], c[1], c[2], c[3]};
	cv = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(tl_i16x4, a),
						       __builtin_bit_cast(tl_i16x4, b), cv, 0, 0, 0);
	for (int i = 0; i < 4; i++)
		c[i] = cv[i];
}
#endif

// ---- WMMA 16x16x16 (RDNA3, wave32): a, b 16 elements per lane, c 8 floats per lane -------
typedef _Float16 tl_f16x16 __attribute__((ext_vector_type(16)));
typedef short tl_i16x16 __attribute__((ext_vector_type(16)));
typedef float tl_f32x8 __attribute__((ext_vector_type(8)));

#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
TL_DEVICE void tl_wmma_f16_16x16x16(float *c, tl_u16x16 a, tl_u16x16 b)
{
	tl_f32x8 cv;
	for (int i = 0; i < 8; i++)
		cv[i] = c[i];
	cv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(__builtin_bit_cast(tl_f16x16, a),
							__builtin_bit_cast(tl_f16x16, b), cv);
	for (int i = 0; i < 8; i++)
		c[i] = cv[i];
}

TL_DEVICE void tl_wmma_bf16_16x16x16(float *c, tl_u16x16 a, tl_u16x16 b)
{
	tl_f32x8 cv;
	for (int i = 0; i < 8; i++)
		cv[i] = c[i];
	cv = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(__builtin_bit_cast(tl_i16x16, a),
							 __builtin_bit_cast(tl_i16x16, b), cv);
	for (int i = 0; i < 8; i++)
		c[i] = cv[i];
}
#endif
