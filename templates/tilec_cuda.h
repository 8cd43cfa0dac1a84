// tilec_cuda.h: device helpers included by the CUDA C that tilec emits.
// Embedded in tilec as a string (tilec_template("tilec_cuda.h")) so NVRTC gets it in
// memory; plain nvcc can include the file itself. No other headers are needed.
#pragma once

typedef unsigned short tl_half_t;  // f16 bits
typedef unsigned short tl_bf16_t;  // bf16 bits
typedef unsigned int tl_u32;

#define TL_DEVICE static __device__ __forceinline__

// ---- shared-memory addresses and cp.async ------------------------------------------
TL_DEVICE tl_u32 tl_smem_u32(const void *p)
{
	return (tl_u32)__cvta_generic_to_shared(p);
}

// 16-byte global -> shared copy, bypassing L1
TL_DEVICE void tl_cp_async16(void *smem, const void *gmem)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(tl_smem_u32(smem)), "l"(gmem));
}

// predicated 16-byte copy: src_bytes = 0 fills the destination with zeros
TL_DEVICE void tl_cp_async16_zfill(void *smem, const void *gmem, bool pred)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tl_smem_u32(smem)),
		     "l"(gmem), "r"(pred ? 16 : 0));
}

TL_DEVICE void tl_cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> TL_DEVICE void tl_cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- ldmatrix ---------------------------------------------------------------------
TL_DEVICE void tl_ldmatrix_x4(tl_u32 *r, const void *smem)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(tl_smem_u32(smem)));
}

TL_DEVICE void tl_ldmatrix_x4_trans(tl_u32 *r, const void *smem)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(tl_smem_u32(smem)));
}

// ---- mma.sync m16n8k16, f32 accumulate --------------------------------------------
TL_DEVICE void tl_mma_f16_16816(float *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

TL_DEVICE void tl_mma_bf16_16816(float *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- mma.sync m16n8k32, 8-bit operands: s8/u8 into s32, e4m3/e5m2 (sm_89+) into f32 -------
// a[0..3], b[0..1]: four 8-bit elements per register (the PTX m16n8k32 fragments: the bytes of
// the m16n8k16 ones), c: the accumulators (as m16n8k16). Integer sums wrap (no .satfinite).
TL_DEVICE void tl_mma_s8_16832(int *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

TL_DEVICE void tl_mma_u8_16832(int *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

TL_DEVICE void tl_mma_e4m3_16832(float *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

TL_DEVICE void tl_mma_e5m2_16832(float *c, const tl_u32 *a, const tl_u32 *b)
{
	asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- conversions ------------------------------------------------------------------
TL_DEVICE float tl_h2f(tl_half_t h)
{
	float f;
	asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
	return f;
}

TL_DEVICE tl_half_t tl_f2h(float f)
{
	tl_half_t h;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}

TL_DEVICE float tl_bf2f(tl_bf16_t h)
{
	return __uint_as_float(((tl_u32)h) << 16);
}

TL_DEVICE tl_bf16_t tl_f2bf(float f)
{
	tl_bf16_t h;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
	return h;
}

// two floats -> packed f16x2 (lo in the low half)
TL_DEVICE tl_u32 tl_pack_h2(float lo, float hi)
{
	tl_u32 r;
	asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}

TL_DEVICE tl_u32 tl_pack_bf2(float lo, float hi)
{
	tl_u32 r;
	asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
	return r;
}

#include "tilec_portable.h"

// ---- atomics: atomic_add/max/min and copy(..., op = add|max|min); no old value is returned.
// f32/i32: atomicAdd/Max/Min; f16 (sm_70+) and f16x2 (sm_60+): red.add.noftz; bf16 and
// bf16x2: red.add.noftz on sm_90, a compare-and-swap loop on the 32-bit word before it (as
// cuda_bf16.hpp does); float2/float4 adds (global memory, sm_90): atomicAdd(float4 *), four
// scalar adds before sm_90. CUDA has no float atomic max/min: the lowering refuses them.
TL_DEVICE void tl_atomic_add_f32(float *p, float v)
{
	atomicAdd(p, v);
}

TL_DEVICE void tl_atomic_add_i32(int *p, int v)
{
	atomicAdd(p, v);
}

TL_DEVICE void tl_atomic_max_i32(int *p, int v)
{
	atomicMax(p, v);
}

TL_DEVICE void tl_atomic_min_i32(int *p, int v)
{
	atomicMin(p, v);
}

TL_DEVICE void tl_atomic_add_f16(tl_half_t *p, tl_half_t v)
{
	asm volatile("red.add.noftz.f16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
}

// p[0] += lo(v), p[1] += hi(v); p 4-byte aligned
TL_DEVICE void tl_atomic_add_f16x2(tl_half_t *p, tl_u32 v)
{
	asm volatile("red.add.noftz.f16x2 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

#if __CUDA_ARCH__ < 900
// bf16 (a, b) -> the bf16 of a + b, through f32
TL_DEVICE tl_bf16_t tl_bf16_add(tl_bf16_t a, tl_bf16_t b)
{
	return tl_f2bf(tl_bf2f(a) + tl_bf2f(b));
}
#endif

TL_DEVICE void tl_atomic_add_bf16(tl_bf16_t *p, tl_bf16_t v)
{
#if __CUDA_ARCH__ >= 900
	asm volatile("red.add.noftz.bf16 [%0], %1;" ::"l"(p), "h"(v) : "memory");
#else
	// the 32-bit word that holds the element, the element's half of it
	tl_u32 *w = (tl_u32 *)((unsigned long long)p & ~3ull);
	tl_u32 sh = (tl_u32)((unsigned long long)p & 2) * 8, old = *w, as;

	do {
		as = old;
		tl_u32 sum = tl_bf16_add((tl_bf16_t)(as >> sh), v);
		old = atomicCAS(w, as, (as & ~(0xffffu << sh)) | (sum << sh));
	} while (old != as);
#endif
}

// p[0] += lo(v), p[1] += hi(v); p 4-byte aligned
TL_DEVICE void tl_atomic_add_bf16x2(tl_bf16_t *p, tl_u32 v)
{
#if __CUDA_ARCH__ >= 900
	asm volatile("red.add.noftz.bf16x2 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
	tl_u32 *w = (tl_u32 *)p, old = *w, as;

	do {
		as = old;
		tl_u32 lo = tl_bf16_add((tl_bf16_t)as, (tl_bf16_t)v);
		tl_u32 hi = tl_bf16_add((tl_bf16_t)(as >> 16), (tl_bf16_t)(v >> 16));
		old = atomicCAS(w, as, lo | hi << 16);
	} while (old != as);
#endif
}

// p[0..2) += (a, b), p 8-byte aligned, in global memory
TL_DEVICE void tl_atomic_add_f32x2(float *p, float a, float b)
{
#if __CUDA_ARCH__ >= 900
	atomicAdd((float2 *)p, make_float2(a, b));
#else
	atomicAdd(p, a);
	atomicAdd(p + 1, b);
#endif
}

// p[0..4) += (a, b, c, d), p 16-byte aligned, in global memory
TL_DEVICE void tl_atomic_add_f32x4(float *p, float a, float b, float c, float d)
{
#if __CUDA_ARCH__ >= 900
	atomicAdd((float4 *)p, make_float4(a, b, c, d));
#else
	atomicAdd(p, a);
	atomicAdd(p + 1, b);
	atomicAdd(p + 2, c);
	atomicAdd(p + 3, d);
#endif
}

// ---- warp reductions --------------------------------------------------------------
TL_DEVICE float tl_warp_sum(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

TL_DEVICE float tl_warp_max(float v, int width)
{
	for (int o = width / 2; o > 0; o /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// ---- warp specialization (kernels emitted for sm_90a with --warp-specialize) ------------------
// setmaxnreg.{dec,inc}.sync.aligned.u32 N (PTX 9.7.19.6): every thread of the warpgroup executes
// it; N a multiple of 8 in [24, 256]. The producer warpgroup gives registers up, the consumers
// take them.
template <int N> TL_DEVICE void tl_setmaxnreg_dec(void)
{
	static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> TL_DEVICE void tl_setmaxnreg_inc(void)
{
	static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
// bar.sync id, n: named barrier id of the first n threads (the consumers; whole warps)
TL_DEVICE void tl_bar_named(int id, int n)
{
	asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

// ---- sm_90 mbarriers and TMA (cp.async.bulk.tensor; used by kernels emitted for sm_90a) ----
// A tensor map (CUtensorMap: 128 bytes, 64-byte aligned) made on the host by
// cuTensorMapEncodeTiled and passed as a __grid_constant__ kernel parameter.
typedef struct __align__(64) { unsigned long long v[16]; } tl_tmap_t;

// mbarrier.init (PTX 9.7.13.15.9): count arrivals complete a phase
TL_DEVICE void tl_mbar_init(unsigned long long *bar, int count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(tl_smem_u32(bar)), "r"(count) : "memory");
}
// makes the initialized barriers visible to the async proxy (TMA) and the other threads
TL_DEVICE void tl_fence_mbar_init(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// one arrival that also expects bytes of transactions (the TMA loads of this phase)
TL_DEVICE void tl_mbar_expect_tx(unsigned long long *bar, int bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(tl_smem_u32(bar)), "r"(bytes)
		     : "memory");
}
// the barrier's memory may be initialized again (or used for anything else)
TL_DEVICE void tl_mbar_inval(unsigned long long *bar)
{
	asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(tl_smem_u32(bar)) : "memory");
}
TL_DEVICE void tl_mbar_arrive(unsigned long long *bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(tl_smem_u32(bar)) : "memory");
}
// waits until the phase of the given parity has completed
TL_DEVICE void tl_mbar_wait(unsigned long long *bar, int parity)
{
	unsigned done;

	do {
		asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(tl_smem_u32(bar)), "r"(parity)
			     : "memory");
	} while (!done);
}
// the box of map at coordinates (c0 innermost, c1) into shared memory at dst; its bytes complete
// transactions on bar; elements outside the tensor are zeros
TL_DEVICE void tl_tma_load_2d(void *dst, const tl_tmap_t *map, int c0, int c1, unsigned long long *bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
		     "[%4];\n" ::"r"(tl_smem_u32(dst)),
		     "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(tl_smem_u32(bar))
		     : "memory");
}
// the same for a rank-3 map: (c0 innermost, c1, c2)
TL_DEVICE void tl_tma_load_3d(void *dst, const tl_tmap_t *map, int c0, int c1, int c2, unsigned long long *bar)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
		     "%4}], [%5];\n" ::"r"(tl_smem_u32(dst)),
		     "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(c2), "r"(tl_smem_u32(bar))
		     : "memory");
}
TL_DEVICE void tl_tma_prefetch_map(const tl_tmap_t *map)
{
	asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)map) : "memory");
}

// ---- sm_90a wgmma (used only by kernels emitted for sm_90a) ----------------------------
typedef unsigned long long tl_u64;

// shared-memory matrix descriptor: start address, leading and stride byte offsets, layout
// type (1 = 128B, 2 = 64B, 3 = 32B swizzle) in bits 62-63
TL_DEVICE tl_u64 tl_wgmma_desc(const void *p, int lbo, int sbo, int type)
{
	tl_u64 a = tl_smem_u32(p);
	return ((a & 0x3ffff) >> 4) | ((tl_u64)((lbo >> 4) & 0x3fff) << 16) |
	       ((tl_u64)((sbo >> 4) & 0x3fff) << 32) | ((tl_u64)type << 62);
}

// cp.async writes (generic proxy) made visible to wgmma (async proxy); before a barrier
TL_DEVICE void tl_fence_proxy_async(void)
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

TL_DEVICE void tl_wgmma_fence(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

TL_DEVICE void tl_wgmma_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

TL_DEVICE void tl_wgmma_wait0(void)
{
	asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

// pins an accumulator register at this point: keeps the compiler from splitting its
// definitions across paths inside a wgmma pipeline stage (ptxas would serialise: C7515)
TL_DEVICE void tl_fence_operand(float &r)
{
	asm volatile("" : "+f"(r)::"memory");
}

// at most one wgmma group still pending (the k-loop keeps the newest in flight)
TL_DEVICE void tl_wgmma_wait1(void)
{
	asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
}
// ---- sm_90a wgmma m64nNk16 (N = 8, 16, ..., 256) -------------------------------------------
// d[0 .. N/2): this thread's f32 accumulators (the PTX register order); da, db: shared-memory
// descriptors of A (TA = 0: K-major, TA = 1: stored M-major, tnspA) and B (TB = 1: B stored
// N-major, TB = 0: K-major); d += A * B.
// The operand lists are built from 4-register pieces: TL_WR<m> / TL_WO<m> hold the first 4m.
#define TL_WR_0 "%0,%1,%2,%3"
#define TL_WR_1 "%4,%5,%6,%7"
#define TL_WR_2 "%8,%9,%10,%11"
#define TL_WR_3 "%12,%13,%14,%15"
#define TL_WR_4 "%16,%17,%18,%19"
#define TL_WR_5 "%20,%21,%22,%23"
#define TL_WR_6 "%24,%25,%26,%27"
#define TL_WR_7 "%28,%29,%30,%31"
#define TL_WR_8 "%32,%33,%34,%35"
#define TL_WR_9 "%36,%37,%38,%39"
#define TL_WR_10 "%40,%41,%42,%43"
#define TL_WR_11 "%44,%45,%46,%47"
#define TL_WR_12 "%48,%49,%50,%51"
#define TL_WR_13 "%52,%53,%54,%55"
#define TL_WR_14 "%56,%57,%58,%59"
#define TL_WR_15 "%60,%61,%62,%63"
#define TL_WR_16 "%64,%65,%66,%67"
#define TL_WR_17 "%68,%69,%70,%71"
#define TL_WR_18 "%72,%73,%74,%75"
#define TL_WR_19 "%76,%77,%78,%79"
#define TL_WR_20 "%80,%81,%82,%83"
#define TL_WR_21 "%84,%85,%86,%87"
#define TL_WR_22 "%88,%89,%90,%91"
#define TL_WR_23 "%92,%93,%94,%95"
#define TL_WR_24 "%96,%97,%98,%99"
#define TL_WR_25 "%100,%101,%102,%103"
#define TL_WR_26 "%104,%105,%106,%107"
#define TL_WR_27 "%108,%109,%110,%111"
#define TL_WR_28 "%112,%113,%114,%115"
#define TL_WR_29 "%116,%117,%118,%119"
#define TL_WR_30 "%120,%121,%122,%123"
#define TL_WR_31 "%124,%125,%126,%127"
#define TL_WO_0 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define TL_WO_1 "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define TL_WO_2 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11])
#define TL_WO_3 "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define TL_WO_4 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
#define TL_WO_5 "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define TL_WO_6 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
#define TL_WO_7 "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define TL_WO_8 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
#define TL_WO_9 "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define TL_WO_10 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
#define TL_WO_11 "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define TL_WO_12 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51])
#define TL_WO_13 "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define TL_WO_14 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59])
#define TL_WO_15 "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define TL_WO_16 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67])
#define TL_WO_17 "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define TL_WO_18 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])
#define TL_WO_19 "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define TL_WO_20 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83])
#define TL_WO_21 "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define TL_WO_22 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91])
#define TL_WO_23 "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define TL_WO_24 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99])
#define TL_WO_25 "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define TL_WO_26 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107])
#define TL_WO_27 "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define TL_WO_28 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115])
#define TL_WO_29 "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define TL_WO_30 "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123])
#define TL_WO_31 "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define TL_WR1 TL_WR_0
#define TL_WO1 TL_WO_0
#define TL_WR2 TL_WR1 "," TL_WR_1
#define TL_WO2 TL_WO1, TL_WO_1
#define TL_WR3 TL_WR2 "," TL_WR_2
#define TL_WO3 TL_WO2, TL_WO_2
#define TL_WR4 TL_WR3 "," TL_WR_3
#define TL_WO4 TL_WO3, TL_WO_3
#define TL_WR5 TL_WR4 "," TL_WR_4
#define TL_WO5 TL_WO4, TL_WO_4
#define TL_WR6 TL_WR5 "," TL_WR_5
#define TL_WO6 TL_WO5, TL_WO_5
#define TL_WR7 TL_WR6 "," TL_WR_6
#define TL_WO7 TL_WO6, TL_WO_6
#define TL_WR8 TL_WR7 "," TL_WR_7
#define TL_WO8 TL_WO7, TL_WO_7
#define TL_WR9 TL_WR8 "," TL_WR_8
#define TL_WO9 TL_WO8, TL_WO_8
#define TL_WR10 TL_WR9 "," TL_WR_9
#define TL_WO10 TL_WO9, TL_WO_9
#define TL_WR11 TL_WR10 "," TL_WR_10
#define TL_WO11 TL_WO10, TL_WO_10
#define TL_WR12 TL_WR11 "," TL_WR_11
#define TL_WO12 TL_WO11, TL_WO_11
#define TL_WR13 TL_WR12 "," TL_WR_12
#define TL_WO13 TL_WO12, TL_WO_12
#define TL_WR14 TL_WR13 "," TL_WR_13
#define TL_WO14 TL_WO13, TL_WO_13
#define TL_WR15 TL_WR14 "," TL_WR_14
#define TL_WO15 TL_WO14, TL_WO_14
#define TL_WR16 TL_WR15 "," TL_WR_15
#define TL_WO16 TL_WO15, TL_WO_15
#define TL_WR17 TL_WR16 "," TL_WR_16
#define TL_WO17 TL_WO16, TL_WO_16
#define TL_WR18 TL_WR17 "," TL_WR_17
#define TL_WO18 TL_WO17, TL_WO_17
#define TL_WR19 TL_WR18 "," TL_WR_18
#define TL_WO19 TL_WO18, TL_WO_18
#define TL_WR20 TL_WR19 "," TL_WR_19
#define TL_WO20 TL_WO19, TL_WO_19
#define TL_WR21 TL_WR20 "," TL_WR_20
#define TL_WO21 TL_WO20, TL_WO_20
#define TL_WR22 TL_WR21 "," TL_WR_21
#define TL_WO22 TL_WO21, TL_WO_21
#define TL_WR23 TL_WR22 "," TL_WR_22
#define TL_WO23 TL_WO22, TL_WO_22
#define TL_WR24 TL_WR23 "," TL_WR_23
#define TL_WO24 TL_WO23, TL_WO_23
#define TL_WR25 TL_WR24 "," TL_WR_24
#define TL_WO25 TL_WO24, TL_WO_24
#define TL_WR26 TL_WR25 "," TL_WR_25
#define TL_WO26 TL_WO25, TL_WO_25
#define TL_WR27 TL_WR26 "," TL_WR_26
#define TL_WO27 TL_WO26, TL_WO_26
#define TL_WR28 TL_WR27 "," TL_WR_27
#define TL_WO28 TL_WO27, TL_WO_27
#define TL_WR29 TL_WR28 "," TL_WR_28
#define TL_WO29 TL_WO28, TL_WO_28
#define TL_WR30 TL_WR29 "," TL_WR_29
#define TL_WO30 TL_WO29, TL_WO_29
#define TL_WR31 TL_WR30 "," TL_WR_30
#define TL_WO31 TL_WO30, TL_WO_30
#define TL_WR32 TL_WR31 "," TL_WR_31
#define TL_WO32 TL_WO31, TL_WO_31
#define TL_WGMMA_ASM(N, M, T, IA, IB, IP, IT, ITA)                                              \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p, 1, 1, " ITA ", " IT ";\n}\n"                                                    \
		     : TL_WO##M                                                                          \
		     : "l"(da), "l"(db), "r"(1), "n"(TB), "n"(TA))
// the if-constexpr chain over N, for the element type T (a string) defined around it
#define TL_WGMMA_BODY \
	if constexpr (N == 8) TL_WGMMA_ASM(8, 1, T, "%4", "%5", "%6", "%7", "%8"); \
	else if constexpr (N == 16) TL_WGMMA_ASM(16, 2, T, "%8", "%9", "%10", "%11", "%12"); \
	else if constexpr (N == 24) TL_WGMMA_ASM(24, 3, T, "%12", "%13", "%14", "%15", "%16"); \
	else if constexpr (N == 32) TL_WGMMA_ASM(32, 4, T, "%16", "%17", "%18", "%19", "%20"); \
	else if constexpr (N == 40) TL_WGMMA_ASM(40, 5, T, "%20", "%21", "%22", "%23", "%24"); \
	else if constexpr (N == 48) TL_WGMMA_ASM(48, 6, T, "%24", "%25", "%26", "%27", "%28"); \
	else if constexpr (N == 56) TL_WGMMA_ASM(56, 7, T, "%28", "%29", "%30", "%31", "%32"); \
	else if constexpr (N == 64) TL_WGMMA_ASM(64, 8, T, "%32", "%33", "%34", "%35", "%36"); \
	else if constexpr (N == 72) TL_WGMMA_ASM(72, 9, T, "%36", "%37", "%38", "%39", "%40"); \
	else if constexpr (N == 80) TL_WGMMA_ASM(80, 10, T, "%40", "%41", "%42", "%43", "%44"); \
	else if constexpr (N == 88) TL_WGMMA_ASM(88, 11, T, "%44", "%45", "%46", "%47", "%48"); \
	else if constexpr (N == 96) TL_WGMMA_ASM(96, 12, T, "%48", "%49", "%50", "%51", "%52"); \
	else if constexpr (N == 104) TL_WGMMA_ASM(104, 13, T, "%52", "%53", "%54", "%55", "%56"); \
	else if constexpr (N == 112) TL_WGMMA_ASM(112, 14, T, "%56", "%57", "%58", "%59", "%60"); \
	else if constexpr (N == 120) TL_WGMMA_ASM(120, 15, T, "%60", "%61", "%62", "%63", "%64"); \
	else if constexpr (N == 128) TL_WGMMA_ASM(128, 16, T, "%64", "%65", "%66", "%67", "%68"); \
	else if constexpr (N == 136) TL_WGMMA_ASM(136, 17, T, "%68", "%69", "%70", "%71", "%72"); \
	else if constexpr (N == 144) TL_WGMMA_ASM(144, 18, T, "%72", "%73", "%74", "%75", "%76"); \
	else if constexpr (N == 152) TL_WGMMA_ASM(152, 19, T, "%76", "%77", "%78", "%79", "%80"); \
	else if constexpr (N == 160) TL_WGMMA_ASM(160, 20, T, "%80", "%81", "%82", "%83", "%84"); \
	else if constexpr (N == 168) TL_WGMMA_ASM(168, 21, T, "%84", "%85", "%86", "%87", "%88"); \
	else if constexpr (N == 176) TL_WGMMA_ASM(176, 22, T, "%88", "%89", "%90", "%91", "%92"); \
	else if constexpr (N == 184) TL_WGMMA_ASM(184, 23, T, "%92", "%93", "%94", "%95", "%96"); \
	else if constexpr (N == 192) TL_WGMMA_ASM(192, 24, T, "%96", "%97", "%98", "%99", "%100"); \
	else if constexpr (N == 200) TL_WGMMA_ASM(200, 25, T, "%100", "%101", "%102", "%103", "%104"); \
	else if constexpr (N == 208) TL_WGMMA_ASM(208, 26, T, "%104", "%105", "%106", "%107", "%108"); \
	else if constexpr (N == 216) TL_WGMMA_ASM(216, 27, T, "%108", "%109", "%110", "%111", "%112"); \
	else if constexpr (N == 224) TL_WGMMA_ASM(224, 28, T, "%112", "%113", "%114", "%115", "%116"); \
	else if constexpr (N == 232) TL_WGMMA_ASM(232, 29, T, "%116", "%117", "%118", "%119", "%120"); \
	else if constexpr (N == 240) TL_WGMMA_ASM(240, 30, T, "%120", "%121", "%122", "%123", "%124"); \
	else if constexpr (N == 248) TL_WGMMA_ASM(248, 31, T, "%124", "%125", "%126", "%127", "%128"); \
	else if constexpr (N == 256) TL_WGMMA_ASM(256, 32, T, "%128", "%129", "%130", "%131", "%132"); \
	else static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");

template <int N, int TB, int TA = 0> TL_DEVICE void tl_wgmma_f16(float *d, tl_u64 da, tl_u64 db)
{
#define T "f16"
	TL_WGMMA_BODY;
#undef T
}

template <int N, int TB, int TA = 0> TL_DEVICE void tl_wgmma_bf16(float *d, tl_u64 da, tl_u64 db)
{
#define T "bf16"
	TL_WGMMA_BODY;
#undef T
}

// wgmma RS: A from registers (a[0..3]: this thread's A fragment of the m64 tile, warp w of the
// warpgroup holding rows 16 w .. 16 w + 15 in the m16n8k16 A order, two elements per register)
#define TL_WGMMA_RS_ASM(N, M, T, IA, IB, IP, IT)                                                \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p, 1, 1, " IT ";\n}\n"                                                           \
		     : TL_WO##M                                                                          \
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1), "n"(TB))
#define TL_WGMMA_RS_BODY \
	if constexpr (N == 8) TL_WGMMA_RS_ASM(8, 1, T, "{%4,%5,%6,%7}", "%8", "%9", "%10"); \
	else if constexpr (N == 16) TL_WGMMA_RS_ASM(16, 2, T, "{%8,%9,%10,%11}", "%12", "%13", "%14"); \
	else if constexpr (N == 24) TL_WGMMA_RS_ASM(24, 3, T, "{%12,%13,%14,%15}", "%16", "%17", "%18"); \
	else if constexpr (N == 32) TL_WGMMA_RS_ASM(32, 4, T, "{%16,%17,%18,%19}", "%20", "%21", "%22"); \
	else if constexpr (N == 40) TL_WGMMA_RS_ASM(40, 5, T, "{%20,%21,%22,%23}", "%24", "%25", "%26"); \
	else if constexpr (N == 48) TL_WGMMA_RS_ASM(48, 6, T, "{%24,%25,%26,%27}", "%28", "%29", "%30"); \
	else if constexpr (N == 56) TL_WGMMA_RS_ASM(56, 7, T, "{%28,%29,%30,%31}", "%32", "%33", "%34"); \
	else if constexpr (N == 64) TL_WGMMA_RS_ASM(64, 8, T, "{%32,%33,%34,%35}", "%36", "%37", "%38"); \
	else if constexpr (N == 72) TL_WGMMA_RS_ASM(72, 9, T, "{%36,%37,%38,%39}", "%40", "%41", "%42"); \
	else if constexpr (N == 80) TL_WGMMA_RS_ASM(80, 10, T, "{%40,%41,%42,%43}", "%44", "%45", "%46"); \
	else if constexpr (N == 88) TL_WGMMA_RS_ASM(88, 11, T, "{%44,%45,%46,%47}", "%48", "%49", "%50"); \
	else if constexpr (N == 96) TL_WGMMA_RS_ASM(96, 12, T, "{%48,%49,%50,%51}", "%52", "%53", "%54"); \
	else if constexpr (N == 104) TL_WGMMA_RS_ASM(104, 13, T, "{%52,%53,%54,%55}", "%56", "%57", "%58"); \
	else if constexpr (N == 112) TL_WGMMA_RS_ASM(112, 14, T, "{%56,%57,%58,%59}", "%60", "%61", "%62"); \
	else if constexpr (N == 120) TL_WGMMA_RS_ASM(120, 15, T, "{%60,%61,%62,%63}", "%64", "%65", "%66"); \
	else if constexpr (N == 128) TL_WGMMA_RS_ASM(128, 16, T, "{%64,%65,%66,%67}", "%68", "%69", "%70"); \
	else if constexpr (N == 136) TL_WGMMA_RS_ASM(136, 17, T, "{%68,%69,%70,%71}", "%72", "%73", "%74"); \
	else if constexpr (N == 144) TL_WGMMA_RS_ASM(144, 18, T, "{%72,%73,%74,%75}", "%76", "%77", "%78"); \
	else if constexpr (N == 152) TL_WGMMA_RS_ASM(152, 19, T, "{%76,%77,%78,%79}", "%80", "%81", "%82"); \
	else if constexpr (N == 160) TL_WGMMA_RS_ASM(160, 20, T, "{%80,%81,%82,%83}", "%84", "%85", "%86"); \
	else if constexpr (N == 168) TL_WGMMA_RS_ASM(168, 21, T, "{%84,%85,%86,%87}", "%88", "%89", "%90"); \
	else if constexpr (N == 176) TL_WGMMA_RS_ASM(176, 22, T, "{%88,%89,%90,%91}", "%92", "%93", "%94"); \
	else if constexpr (N == 184) TL_WGMMA_RS_ASM(184, 23, T, "{%92,%93,%94,%95}", "%96", "%97", "%98"); \
	else if constexpr (N == 192) TL_WGMMA_RS_ASM(192, 24, T, "{%96,%97,%98,%99}", "%100", "%101", "%102"); \
	else if constexpr (N == 200) TL_WGMMA_RS_ASM(200, 25, T, "{%100,%101,%102,%103}", "%104", "%105", "%106"); \
	else if constexpr (N == 208) TL_WGMMA_RS_ASM(208, 26, T, "{%104,%105,%106,%107}", "%108", "%109", "%110"); \
	else if constexpr (N == 216) TL_WGMMA_RS_ASM(216, 27, T, "{%108,%109,%110,%111}", "%112", "%113", "%114"); \
	else if constexpr (N == 224) TL_WGMMA_RS_ASM(224, 28, T, "{%112,%113,%114,%115}", "%116", "%117", "%118"); \
	else if constexpr (N == 232) TL_WGMMA_RS_ASM(232, 29, T, "{%116,%117,%118,%119}", "%120", "%121", "%122"); \
	else if constexpr (N == 240) TL_WGMMA_RS_ASM(240, 30, T, "{%120,%121,%122,%123}", "%124", "%125", "%126"); \
	else if constexpr (N == 248) TL_WGMMA_RS_ASM(248, 31, T, "{%124,%125,%126,%127}", "%128", "%129", "%130"); \
	else if constexpr (N == 256) TL_WGMMA_RS_ASM(256, 32, T, "{%128,%129,%130,%131}", "%132", "%133", "%134"); \
	else static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNk16: N is 8, 16, ..., 256");

template <int N, int TB> TL_DEVICE void tl_wgmma_rs_f16(float *d, const tl_u32 *a, tl_u64 db)
{
#define T "f16"
	TL_WGMMA_RS_BODY;
#undef T
}

template <int N, int TB> TL_DEVICE void tl_wgmma_rs_bf16(float *d, const tl_u32 *a, tl_u64 db)
{
#define T "bf16"
	TL_WGMMA_RS_BODY;
#undef T
}

// ---- sm_90a wgmma m64nNk32, 8-bit operands from shared memory, both K-major -----------------
// s8/u8 into s32 accumulators (N = 8, 16, 24, 32, 48, ..., 256: multiples of 16 from 32), e4m3/
// e5m2 into f32 (N = 8, 16, ..., 256). No transpose immediates: PTX has tnspA/tnspB for f16/bf16
// only, so A is [M, K] and B [N, K] in shared memory. d: this thread's N/2 accumulators.
// pins an s32 accumulator register (as tl_fence_operand(float &) above)
TL_DEVICE void tl_fence_operand(int &r)
{
	asm volatile("" : "+r"(r)::"memory");
}
#define TL_WOI_0 "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
#define TL_WOI_1 "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])
#define TL_WOI_2 "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11])
#define TL_WOI_3 "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
#define TL_WOI_4 "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19])
#define TL_WOI_5 "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23])
#define TL_WOI_6 "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27])
#define TL_WOI_7 "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
#define TL_WOI_8 "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35])
#define TL_WOI_9 "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39])
#define TL_WOI_10 "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43])
#define TL_WOI_11 "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47])
#define TL_WOI_12 "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51])
#define TL_WOI_13 "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55])
#define TL_WOI_14 "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59])
#define TL_WOI_15 "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
#define TL_WOI_16 "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67])
#define TL_WOI_17 "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71])
#define TL_WOI_18 "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75])
#define TL_WOI_19 "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79])
#define TL_WOI_20 "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83])
#define TL_WOI_21 "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87])
#define TL_WOI_22 "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91])
#define TL_WOI_23 "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95])
#define TL_WOI_24 "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99])
#define TL_WOI_25 "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103])
#define TL_WOI_26 "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107])
#define TL_WOI_27 "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111])
#define TL_WOI_28 "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115])
#define TL_WOI_29 "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119])
#define TL_WOI_30 "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123])
#define TL_WOI_31 "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
#define TL_WOI1 TL_WOI_0
#define TL_WOI2 TL_WOI1, TL_WOI_1
#define TL_WOI3 TL_WOI2, TL_WOI_2
#define TL_WOI4 TL_WOI3, TL_WOI_3
#define TL_WOI5 TL_WOI4, TL_WOI_4
#define TL_WOI6 TL_WOI5, TL_WOI_5
#define TL_WOI7 TL_WOI6, TL_WOI_6
#define TL_WOI8 TL_WOI7, TL_WOI_7
#define TL_WOI9 TL_WOI8, TL_WOI_8
#define TL_WOI10 TL_WOI9, TL_WOI_9
#define TL_WOI11 TL_WOI10, TL_WOI_10
#define TL_WOI12 TL_WOI11, TL_WOI_11
#define TL_WOI13 TL_WOI12, TL_WOI_12
#define TL_WOI14 TL_WOI13, TL_WOI_13
#define TL_WOI15 TL_WOI14, TL_WOI_14
#define TL_WOI16 TL_WOI15, TL_WOI_15
#define TL_WOI17 TL_WOI16, TL_WOI_16
#define TL_WOI18 TL_WOI17, TL_WOI_17
#define TL_WOI19 TL_WOI18, TL_WOI_18
#define TL_WOI20 TL_WOI19, TL_WOI_19
#define TL_WOI21 TL_WOI20, TL_WOI_20
#define TL_WOI22 TL_WOI21, TL_WOI_21
#define TL_WOI23 TL_WOI22, TL_WOI_22
#define TL_WOI24 TL_WOI23, TL_WOI_23
#define TL_WOI25 TL_WOI24, TL_WOI_24
#define TL_WOI26 TL_WOI25, TL_WOI_25
#define TL_WOI27 TL_WOI26, TL_WOI_26
#define TL_WOI28 TL_WOI27, TL_WOI_27
#define TL_WOI29 TL_WOI28, TL_WOI_28
#define TL_WOI30 TL_WOI29, TL_WOI_29
#define TL_WOI31 TL_WOI30, TL_WOI_30
#define TL_WOI32 TL_WOI31, TL_WOI_31
#define TL_WGMMA_I8_ASM(N, M, T, IA, IB, IP)                                                  \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p;\n}\n"                                                                          \
		     : TL_WOI##M                                                                         \
		     : "l"(da), "l"(db), "r"(1))
#define TL_WGMMA_F8_ASM(N, M, T, IA, IB, IP)                                                  \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p, 1, 1;\n}\n"                                                                    \
		     : TL_WO##M                                                                          \
		     : "l"(da), "l"(db), "r"(sd))
#define TL_WGMMA_I8_BODY \
	if constexpr (N == 8) TL_WGMMA_I8_ASM(8, 1, T, "%4", "%5", "%6"); \
	else if constexpr (N == 16) TL_WGMMA_I8_ASM(16, 2, T, "%8", "%9", "%10"); \
	else if constexpr (N == 24) TL_WGMMA_I8_ASM(24, 3, T, "%12", "%13", "%14"); \
	else if constexpr (N == 32) TL_WGMMA_I8_ASM(32, 4, T, "%16", "%17", "%18"); \
	else if constexpr (N == 48) TL_WGMMA_I8_ASM(48, 6, T, "%24", "%25", "%26"); \
	else if constexpr (N == 64) TL_WGMMA_I8_ASM(64, 8, T, "%32", "%33", "%34"); \
	else if constexpr (N == 80) TL_WGMMA_I8_ASM(80, 10, T, "%40", "%41", "%42"); \
	else if constexpr (N == 96) TL_WGMMA_I8_ASM(96, 12, T, "%48", "%49", "%50"); \
	else if constexpr (N == 112) TL_WGMMA_I8_ASM(112, 14, T, "%56", "%57", "%58"); \
	else if constexpr (N == 128) TL_WGMMA_I8_ASM(128, 16, T, "%64", "%65", "%66"); \
	else if constexpr (N == 144) TL_WGMMA_I8_ASM(144, 18, T, "%72", "%73", "%74"); \
	else if constexpr (N == 160) TL_WGMMA_I8_ASM(160, 20, T, "%80", "%81", "%82"); \
	else if constexpr (N == 176) TL_WGMMA_I8_ASM(176, 22, T, "%88", "%89", "%90"); \
	else if constexpr (N == 192) TL_WGMMA_I8_ASM(192, 24, T, "%96", "%97", "%98"); \
	else if constexpr (N == 208) TL_WGMMA_I8_ASM(208, 26, T, "%104", "%105", "%106"); \
	else if constexpr (N == 224) TL_WGMMA_I8_ASM(224, 28, T, "%112", "%113", "%114"); \
	else if constexpr (N == 240) TL_WGMMA_I8_ASM(240, 30, T, "%120", "%121", "%122"); \
	else if constexpr (N == 256) TL_WGMMA_I8_ASM(256, 32, T, "%128", "%129", "%130"); \
	else static_assert(N < 0, "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
#define TL_WGMMA_F8_BODY \
	if constexpr (N == 8) TL_WGMMA_F8_ASM(8, 1, T, "%4", "%5", "%6"); \
	else if constexpr (N == 16) TL_WGMMA_F8_ASM(16, 2, T, "%8", "%9", "%10"); \
	else if constexpr (N == 24) TL_WGMMA_F8_ASM(24, 3, T, "%12", "%13", "%14"); \
	else if constexpr (N == 32) TL_WGMMA_F8_ASM(32, 4, T, "%16", "%17", "%18"); \
	else if constexpr (N == 40) TL_WGMMA_F8_ASM(40, 5, T, "%20", "%21", "%22"); \
	else if constexpr (N == 48) TL_WGMMA_F8_ASM(48, 6, T, "%24", "%25", "%26"); \
	else if constexpr (N == 56) TL_WGMMA_F8_ASM(56, 7, T, "%28", "%29", "%30"); \
	else if constexpr (N == 64) TL_WGMMA_F8_ASM(64, 8, T, "%32", "%33", "%34"); \
	else if constexpr (N == 72) TL_WGMMA_F8_ASM(72, 9, T, "%36", "%37", "%38"); \
	else if constexpr (N == 80) TL_WGMMA_F8_ASM(80, 10, T, "%40", "%41", "%42"); \
	else if constexpr (N == 88) TL_WGMMA_F8_ASM(88, 11, T, "%44", "%45", "%46"); \
	else if constexpr (N == 96) TL_WGMMA_F8_ASM(96, 12, T, "%48", "%49", "%50"); \
	else if constexpr (N == 104) TL_WGMMA_F8_ASM(104, 13, T, "%52", "%53", "%54"); \
	else if constexpr (N == 112) TL_WGMMA_F8_ASM(112, 14, T, "%56", "%57", "%58"); \
	else if constexpr (N == 120) TL_WGMMA_F8_ASM(120, 15, T, "%60", "%61", "%62"); \
	else if constexpr (N == 128) TL_WGMMA_F8_ASM(128, 16, T, "%64", "%65", "%66"); \
	else if constexpr (N == 136) TL_WGMMA_F8_ASM(136, 17, T, "%68", "%69", "%70"); \
	else if constexpr (N == 144) TL_WGMMA_F8_ASM(144, 18, T, "%72", "%73", "%74"); \
	else if constexpr (N == 152) TL_WGMMA_F8_ASM(152, 19, T, "%76", "%77", "%78"); \
	else if constexpr (N == 160) TL_WGMMA_F8_ASM(160, 20, T, "%80", "%81", "%82"); \
	else if constexpr (N == 168) TL_WGMMA_F8_ASM(168, 21, T, "%84", "%85", "%86"); \
	else if constexpr (N == 176) TL_WGMMA_F8_ASM(176, 22, T, "%88", "%89", "%90"); \
	else if constexpr (N == 184) TL_WGMMA_F8_ASM(184, 23, T, "%92", "%93", "%94"); \
	else if constexpr (N == 192) TL_WGMMA_F8_ASM(192, 24, T, "%96", "%97", "%98"); \
	else if constexpr (N == 200) TL_WGMMA_F8_ASM(200, 25, T, "%100", "%101", "%102"); \
	else if constexpr (N == 208) TL_WGMMA_F8_ASM(208, 26, T, "%104", "%105", "%106"); \
	else if constexpr (N == 216) TL_WGMMA_F8_ASM(216, 27, T, "%108", "%109", "%110"); \
	else if constexpr (N == 224) TL_WGMMA_F8_ASM(224, 28, T, "%112", "%113", "%114"); \
	else if constexpr (N == 232) TL_WGMMA_F8_ASM(232, 29, T, "%116", "%117", "%118"); \
	else if constexpr (N == 240) TL_WGMMA_F8_ASM(240, 30, T, "%120", "%121", "%122"); \
	else if constexpr (N == 248) TL_WGMMA_F8_ASM(248, 31, T, "%124", "%125", "%126"); \
	else if constexpr (N == 256) TL_WGMMA_F8_ASM(256, 32, T, "%128", "%129", "%130"); \
	else static_assert(N < 0, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");

template <int N> TL_DEVICE void tl_wgmma_s8(int *d, tl_u64 da, tl_u64 db)
{
#define T "s8"
	TL_WGMMA_I8_BODY;
#undef T
}

template <int N> TL_DEVICE void tl_wgmma_u8(int *d, tl_u64 da, tl_u64 db)
{
#define T "u8"
	TL_WGMMA_I8_BODY;
#undef T
}

// fp8 e4m3/e5m2 into f32: d = A B + d, or d = A B when sd is 0 (scale-d: the accumulators are
// not read, so a promotion temporary starts over without being cleared)
template <int N> TL_DEVICE void tl_wgmma_e4m3(float *d, tl_u64 da, tl_u64 db, int sd = 1)
{
#define T "e4m3"
	TL_WGMMA_F8_BODY;
#undef T
}

template <int N> TL_DEVICE void tl_wgmma_e5m2(float *d, tl_u64 da, tl_u64 db, int sd = 1)
{
#define T "e5m2"
	TL_WGMMA_F8_BODY;
#undef T
}

// wgmma RS with 8-bit A from registers (a[0..3]: this thread's A fragment of the m64 tile, warp
// w of the warpgroup holding rows 16 w .. 16 w + 15 in the m16n8k32 A order, four elements per
// register), B [N, K] from shared memory (K-major)
#define TL_WGMMA_RS_I8_ASM(N, M, T, IA, IB, IP)                                               \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p;\n}\n"                                                                          \
		     : TL_WOI##M                                                                         \
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1))
#define TL_WGMMA_RS_F8_ASM(N, M, T, IA, IB, IP)                                               \
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " IP ", 0;\n"                                 \
		     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." T "." T " {" TL_WR##M "}, " IA ", " IB \
		     ", p, 1, 1;\n}\n"                                                                    \
		     : TL_WO##M                                                                          \
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(sd))
#define TL_WGMMA_RS_I8_BODY \
	if constexpr (N == 8) TL_WGMMA_RS_I8_ASM(8, 1, T, "{%4,%5,%6,%7}", "%8", "%9"); \
	else if constexpr (N == 16) TL_WGMMA_RS_I8_ASM(16, 2, T, "{%8,%9,%10,%11}", "%12", "%13"); \
	else if constexpr (N == 24) TL_WGMMA_RS_I8_ASM(24, 3, T, "{%12,%13,%14,%15}", "%16", "%17"); \
	else if constexpr (N == 32) TL_WGMMA_RS_I8_ASM(32, 4, T, "{%16,%17,%18,%19}", "%20", "%21"); \
	else if constexpr (N == 48) TL_WGMMA_RS_I8_ASM(48, 6, T, "{%24,%25,%26,%27}", "%28", "%29"); \
	else if constexpr (N == 64) TL_WGMMA_RS_I8_ASM(64, 8, T, "{%32,%33,%34,%35}", "%36", "%37"); \
	else if constexpr (N == 80) TL_WGMMA_RS_I8_ASM(80, 10, T, "{%40,%41,%42,%43}", "%44", "%45"); \
	else if constexpr (N == 96) TL_WGMMA_RS_I8_ASM(96, 12, T, "{%48,%49,%50,%51}", "%52", "%53"); \
	else if constexpr (N == 112) TL_WGMMA_RS_I8_ASM(112, 14, T, "{%56,%57,%58,%59}", "%60", "%61"); \
	else if constexpr (N == 128) TL_WGMMA_RS_I8_ASM(128, 16, T, "{%64,%65,%66,%67}", "%68", "%69"); \
	else if constexpr (N == 144) TL_WGMMA_RS_I8_ASM(144, 18, T, "{%72,%73,%74,%75}", "%76", "%77"); \
	else if constexpr (N == 160) TL_WGMMA_RS_I8_ASM(160, 20, T, "{%80,%81,%82,%83}", "%84", "%85"); \
	else if constexpr (N == 176) TL_WGMMA_RS_I8_ASM(176, 22, T, "{%88,%89,%90,%91}", "%92", "%93"); \
	else if constexpr (N == 192) TL_WGMMA_RS_I8_ASM(192, 24, T, "{%96,%97,%98,%99}", "%100", "%101"); \
	else if constexpr (N == 208) TL_WGMMA_RS_I8_ASM(208, 26, T, "{%104,%105,%106,%107}", "%108", "%109"); \
	else if constexpr (N == 224) TL_WGMMA_RS_I8_ASM(224, 28, T, "{%112,%113,%114,%115}", "%116", "%117"); \
	else if constexpr (N == 240) TL_WGMMA_RS_I8_ASM(240, 30, T, "{%120,%121,%122,%123}", "%124", "%125"); \
	else if constexpr (N == 256) TL_WGMMA_RS_I8_ASM(256, 32, T, "{%128,%129,%130,%131}", "%132", "%133"); \
	else static_assert(N < 0, "wgmma m64nNk32 s8/u8: N is 8, 16, 24, or a multiple of 16 from 32 to 256");
#define TL_WGMMA_RS_F8_BODY \
	if constexpr (N == 8) TL_WGMMA_RS_F8_ASM(8, 1, T, "{%4,%5,%6,%7}", "%8", "%9"); \
	else if constexpr (N == 16) TL_WGMMA_RS_F8_ASM(16, 2, T, "{%8,%9,%10,%11}", "%12", "%13"); \
	else if constexpr (N == 24) TL_WGMMA_RS_F8_ASM(24, 3, T, "{%12,%13,%14,%15}", "%16", "%17"); \
	else if constexpr (N == 32) TL_WGMMA_RS_F8_ASM(32, 4, T, "{%16,%17,%18,%19}", "%20", "%21"); \
	else if constexpr (N == 40) TL_WGMMA_RS_F8_ASM(40, 5, T, "{%20,%21,%22,%23}", "%24", "%25"); \
	else if constexpr (N == 48) TL_WGMMA_RS_F8_ASM(48, 6, T, "{%24,%25,%26,%27}", "%28", "%29"); \
	else if constexpr (N == 56) TL_WGMMA_RS_F8_ASM(56, 7, T, "{%28,%29,%30,%31}", "%32", "%33"); \
	else if constexpr (N == 64) TL_WGMMA_RS_F8_ASM(64, 8, T, "{%32,%33,%34,%35}", "%36", "%37"); \
	else if constexpr (N == 72) TL_WGMMA_RS_F8_ASM(72, 9, T, "{%36,%37,%38,%39}", "%40", "%41"); \
	else if constexpr (N == 80) TL_WGMMA_RS_F8_ASM(80, 10, T, "{%40,%41,%42,%43}", "%44", "%45"); \
	else if constexpr (N == 88) TL_WGMMA_RS_F8_ASM(88, 11, T, "{%44,%45,%46,%47}", "%48", "%49"); \
	else if constexpr (N == 96) TL_WGMMA_RS_F8_ASM(96, 12, T, "{%48,%49,%50,%51}", "%52", "%53"); \
	else if constexpr (N == 104) TL_WGMMA_RS_F8_ASM(104, 13, T, "{%52,%53,%54,%55}", "%56", "%57"); \
	else if constexpr (N == 112) TL_WGMMA_RS_F8_ASM(112, 14, T, "{%56,%57,%58,%59}", "%60", "%61"); \
	else if constexpr (N == 120) TL_WGMMA_RS_F8_ASM(120, 15, T, "{%60,%61,%62,%63}", "%64", "%65"); \
	else if constexpr (N == 128) TL_WGMMA_RS_F8_ASM(128, 16, T, "{%64,%65,%66,%67}", "%68", "%69"); \
	else if constexpr (N == 136) TL_WGMMA_RS_F8_ASM(136, 17, T, "{%68,%69,%70,%71}", "%72", "%73"); \
	else if constexpr (N == 144) TL_WGMMA_RS_F8_ASM(144, 18, T, "{%72,%73,%74,%75}", "%76", "%77"); \
	else if constexpr (N == 152) TL_WGMMA_RS_F8_ASM(152, 19, T, "{%76,%77,%78,%79}", "%80", "%81"); \
	else if constexpr (N == 160) TL_WGMMA_RS_F8_ASM(160, 20, T, "{%80,%81,%82,%83}", "%84", "%85"); \
	else if constexpr (N == 168) TL_WGMMA_RS_F8_ASM(168, 21, T, "{%84,%85,%86,%87}", "%88", "%89"); \
	else if constexpr (N == 176) TL_WGMMA_RS_F8_ASM(176, 22, T, "{%88,%89,%90,%91}", "%92", "%93"); \
	else if constexpr (N == 184) TL_WGMMA_RS_F8_ASM(184, 23, T, "{%92,%93,%94,%95}", "%96", "%97"); \
	else if constexpr (N == 192) TL_WGMMA_RS_F8_ASM(192, 24, T, "{%96,%97,%98,%99}", "%100", "%101"); \
	else if constexpr (N == 200) TL_WGMMA_RS_F8_ASM(200, 25, T, "{%100,%101,%102,%103}", "%104", "%105"); \
	else if constexpr (N == 208) TL_WGMMA_RS_F8_ASM(208, 26, T, "{%104,%105,%106,%107}", "%108", "%109"); \
	else if constexpr (N == 216) TL_WGMMA_RS_F8_ASM(216, 27, T, "{%108,%109,%110,%111}", "%112", "%113"); \
	else if constexpr (N == 224) TL_WGMMA_RS_F8_ASM(224, 28, T, "{%112,%113,%114,%115}", "%116", "%117"); \
	else if constexpr (N == 232) TL_WGMMA_RS_F8_ASM(232, 29, T, "{%116,%117,%118,%119}", "%120", "%121"); \
	else if constexpr (N == 240) TL_WGMMA_RS_F8_ASM(240, 30, T, "{%120,%121,%122,%123}", "%124", "%125"); \
	else if constexpr (N == 248) TL_WGMMA_RS_F8_ASM(248, 31, T, "{%124,%125,%126,%127}", "%128", "%129"); \
	else if constexpr (N == 256) TL_WGMMA_RS_F8_ASM(256, 32, T, "{%128,%129,%130,%131}", "%132", "%133"); \
	else static_assert(N < 0, "wgmma m64nNk32 e4m3/e5m2: N is 8, 16, ..., 256");

template <int N> TL_DEVICE void tl_wgmma_rs_s8(int *d, const tl_u32 *a, tl_u64 db)
{
#define T "s8"
	TL_WGMMA_RS_I8_BODY;
#undef T
}

template <int N> TL_DEVICE void tl_wgmma_rs_u8(int *d, const tl_u32 *a, tl_u64 db)
{
#define T "u8"
	TL_WGMMA_RS_I8_BODY;
#undef T
}

template <int N> TL_DEVICE void tl_wgmma_rs_e4m3(float *d, const tl_u32 *a, tl_u64 db, int sd = 1)
{
#define T "e4m3"
	TL_WGMMA_RS_F8_BODY;
#undef T
}

template <int N> TL_DEVICE void tl_wgmma_rs_e5m2(float *d, const tl_u32 *a, tl_u64 db, int sd = 1)
{
#define T "e5m2"
	TL_WGMMA_RS_F8_BODY;
#undef T
}
