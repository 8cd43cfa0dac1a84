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
