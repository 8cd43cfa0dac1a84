/*
 * target.h: the one description of the hardware that every pass asks:
 * the cost model (vector width, warp size, segment bytes), the vectorizer,
 * the lowering (MMA kinds, async copies), shared-memory planning (banks,
 * limits) and both emitters. Nothing outside target.c names an architecture.
 */
#ifndef TARGET_H
#define TARGET_H

#include "tl.h"

typedef enum { TGT_CUDA, TGT_HIP } TargetKind;

typedef enum {
	TMMA_NONE,
	TMMA_MMA_SYNC,   /* mma.sync m16n8k16 (sm_80+) */
	TMMA_WGMMA,      /* wgmma.mma_async m64nNk16 (sm_90a) */
	TMMA_MFMA,       /* v_mfma_f32_16x16x16 (CDNA, wave64) */
	TMMA_WMMA,       /* v_wmma_f32_16x16x16 (RDNA3, wave32) */
} TargetMma;

typedef struct Target {
	TargetKind kind;
	const char *arch;          /* "sm_80", "sm_90a", "gfx90a", ... */
	int sm;                    /* CUDA compute capability * 10 (80, 90); 0 on HIP */
	int warp_size;             /* 32 or 64 */
	int max_vector_bits;       /* widest vector access, bits (128) */
	int max_vector_bits_global;/* widest for global-only loops (256 where supported) */
	int segment_bytes;         /* memory transaction granularity (128) */
	int smem_banks, bank_bytes;/* shared memory / LDS banks */
	int64_t smem_static_max;   /* bytes without the dynamic-smem opt-in (48 KiB on CUDA) */
	int64_t smem_max;          /* bytes per block with the opt-in */
	int max_threads;           /* per block */
	int has_cp_async, has_ldmatrix, has_stmatrix, has_tma;
	TargetMma mma;             /* the preferred MMA for f16/bf16 gemm */
	TargetMma mma_fallback;    /* used where mma's shape rules fail (e.g. wgmma -> mma.sync) */
	/* atomics (the tl_atomic_* helpers of tilec_cuda.h / tilec_hip.h): for add, max and min
	 * a mask of the element types (TA_*) the target updates atomically */
	unsigned atomic_ops[3];
	int atomic_pair16;         /* f16x2 / bf16x2 adds: two 16-bit elements in one 4-byte atomic */
	int atomic_f32_vec;        /* f32 adds into global memory: up to this many in one atomic (float4) */
} Target;

/* element types of Target.atomic_ops */
enum { TA_F32 = 1, TA_F16 = 2, TA_BF16 = 4, TA_I32 = 8 };

/* the description for target "cuda"|"hip" and arch; NULL with err on an unknown pair */
const Target *target_lookup(TargetKind kind, const char *arch, Err *err);
/* the arch used when none is given */
const char *target_default_arch(TargetKind kind);
/* largest vector width in elements for an access of elem_bytes (global_only: global-only loop) */
int target_vector_elems(const Target *t, int elem_bytes, int global_only);

#endif
