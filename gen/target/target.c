/*
 * target.c: the table of supported architectures (see target.h). Figures:
 * 16-byte vectors everywhere (no 256-bit global access is enabled yet),
 * 128-byte segments, 32 banks of 4 bytes; shared memory per block from the
 * CUDA and ROCm programming guides (227 KiB on sm_90, 163 KiB on sm_80,
 * 64 KiB LDS on CDNA/RDNA).
 */
#include <string.h>

#include "target.h"

static const Target targets[] = {
	/* kind, arch, sm, warp, vec, vecg, seg, banks, bankB, static, max, thr,
		 * cp.async, ldmatrix, stmatrix, tma, mma, fallback, atomics (add, max, min), 16-bit pairs,
	 * f32 vector atomics. Atomics: CUDA adds f32/i32 (atomicAdd), f16 (red.add.noftz.f16,
	 * sm_70+), bf16 (red.add.noftz.bf16 on sm_90, a CAS loop before), f16x2/bf16x2 pairs,
	 * float2/float4 atomicAdd into global memory on sm_90 (crt/sm_90_rt.h of CUDA 13); max/min
	 * i32 only (CUDA has no float atomic max/min). HIP: f32/i32 add, i32/f32 max/min
	 * (__hip_atomic_fetch_*), f16/bf16 and their pairs through a CAS loop on the 32-bit word;
	 * no vector atomics. */
	{TGT_CUDA, "sm_80", 80, 32, 128, 128, 128, 32, 4, 48 << 10, 163 << 10, 1024, 1, 1, 0, 0,
	 TMMA_MMA_SYNC, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_I32, TA_I32}, 1, 1},
	{TGT_CUDA, "sm_86", 86, 32, 128, 128, 128, 32, 4, 48 << 10, 99 << 10, 1024, 1, 1, 0, 0,
	 TMMA_MMA_SYNC, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_I32, TA_I32}, 1, 1},
	{TGT_CUDA, "sm_89", 89, 32, 128, 128, 128, 32, 4, 48 << 10, 99 << 10, 1024, 1, 1, 0, 0,
	 TMMA_MMA_SYNC, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_I32, TA_I32}, 1, 1},
	/* sm_90 without the 'a' features: no wgmma/TMA in the generated code */
	{TGT_CUDA, "sm_90", 90, 32, 128, 128, 128, 32, 4, 48 << 10, 227 << 10, 1024, 1, 1, 1, 0,
	 TMMA_MMA_SYNC, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_I32, TA_I32}, 1, 4},
	{TGT_CUDA, "sm_90a", 90, 32, 128, 128, 128, 32, 4, 48 << 10, 227 << 10, 1024, 1, 1, 1, 1,
	 TMMA_WGMMA, TMMA_MMA_SYNC,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_I32, TA_I32}, 1, 4},
	{TGT_HIP, "gfx90a", 0, 64, 128, 128, 128, 32, 4, 64 << 10, 64 << 10, 1024, 0, 0, 0, 0,
	 TMMA_MFMA, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_F32 | TA_I32, TA_F32 | TA_I32}, 1, 1},
	{TGT_HIP, "gfx942", 0, 64, 128, 128, 128, 32, 4, 64 << 10, 64 << 10, 1024, 0, 0, 0, 0,
	 TMMA_MFMA, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_F32 | TA_I32, TA_F32 | TA_I32}, 1, 1},
	{TGT_HIP, "gfx1100", 0, 32, 128, 128, 128, 32, 4, 64 << 10, 64 << 10, 1024, 0, 0, 0, 0,
	 TMMA_WMMA, TMMA_NONE,
	 {TA_F32 | TA_F16 | TA_BF16 | TA_I32, TA_F32 | TA_I32, TA_F32 | TA_I32}, 1, 1},
};

const Target *
target_lookup(TargetKind kind, const char *arch, Err *err)
{
	size_t i;

	if (!arch) {
		err_set(err, "no architecture given");
		return NULL;
	}
	for (i = 0; i < countof(targets); i++)
		if (targets[i].kind == kind && !strcmp(targets[i].arch, arch))
			return &targets[i];
	err_set(err, "unknown %s architecture '%s' (known: %s)", kind == TGT_CUDA ? "cuda" : "hip", arch,
		kind == TGT_CUDA ? "sm_80, sm_86, sm_89, sm_90, sm_90a" : "gfx90a, gfx942, gfx1100");
	return NULL;
}

const char *
target_default_arch(TargetKind kind)
{
	return kind == TGT_CUDA ? "sm_80" : "gfx942";
}

int
target_vector_elems(const Target *t, int elem_bytes, int global_only)
{
	int bits = global_only ? t->max_vector_bits_global : t->max_vector_bits;

	if (elem_bytes <= 0)
		return 1;
	return bits / 8 / elem_bytes > 0 ? bits / 8 / elem_bytes : 1;
}
