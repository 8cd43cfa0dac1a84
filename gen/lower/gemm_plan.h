/*
 * gemm_plan.h: the one place that decides how a tile gemm runs (gemm_plan.c):
 * the MMA instruction, the warp partition, the accumulator and register
 * operand Fragments and the shared-memory layouts of the operands. Layout
 * inference (the gemm rule) and the CUDA lowering both ask it, so they agree.
 */
#ifndef GEMM_PLAN_H
#define GEMM_PLAN_H

#include "ir.h"
#include "layout.h"
#include "target.h"

typedef enum {
	GEMM_MMA_SYNC,  /* mma.sync.aligned.m16n8k{8,16,32} per warp (sm_80+) */
	GEMM_WGMMA,     /* wgmma.mma_async m64nNk16 per warpgroup (sm_90a), operands in smem */
	GEMM_MFMA,      /* v_mfma_f32_16x16x16 f16/bf16 per wave64 (CDNA: gfx90a, gfx942) */
	GEMM_WMMA,      /* v_wmma_f32_16x16x16 f16/bf16 per wave32 (RDNA3: gfx1100) */
} GemmInstr;

typedef struct GemmPlan {
	GemmInstr instr;
	int64_t M, N, K;         /* the gemm's extents (from the regions and trans flags) */
	int trans_a, trans_b;    /* A is stored [K, M]; B is stored [N, K] */
	int policy;              /* the gemm's warp policy (WarpPolicy: square, full_row, full_col) */
	DType ab_type, acc_type; /* operand and accumulator element types */
	int elem_bits;           /* bits of an operand element (16 for f16/bf16) */
	int inst_m, inst_n, inst_k; /* one instruction: 16x8x16 (mma.sync f16), 64xNx16 (wgmma),
	                             * 16x16x16 (mfma, wmma) */
	int warps;               /* threads / warp size */
	int m_warp, n_warp;      /* warp partition (mma_warp_partition), m_warp * n_warp == warps */
	/* wgmma only: warpgroups along M and N, and the per-warpgroup tile */
	int wg_m, wg_n;
	int64_t wg_rows, wg_cols;
	int rep_m, rep_n;        /* instructions per warp (mma.sync) or warpgroup (wgmma) along M, N */
	int ksteps;              /* K / inst_k */
	/* the accumulator C [M, N] over all threads (mma_block_fragment, or wgmma's
	 * accumulator tiled over warpgroups) */
	Fragment *acc;
	/* register fragments of A [M, K] and B [K, N] for mma.sync (logical
	 * orientation, before trans); NULL for wgmma, whose operands stay in smem */
	Fragment *frag_a, *frag_b;
	/* shared-memory layouts of A and B over their buffers' shapes, when the
	 * operand lives in shared memory (a_shared / b_shared); k_inner tells
	 * whether K is the contiguous dimension of the stored operand */
	int a_shared, b_shared;
	int a_reg; /* wgmma: A from registers (RS), in frag_a's layout */
	int a_k_inner, b_k_inner;
	SmemLayout smem_a, smem_b;
	const char *why_not_wgmma; /* sm_90a: why wgmma was not chosen (NULL when it was or n/a) */
} GemmPlan;

/*
 * Plan the S_GEMM statement `gemm` of kernel k for target t. wgmma on a target
 * whose preferred MMA is wgmma when M % 64 == 0, threads is a multiple of 128,
 * the operands are f16/bf16 in shared memory with a swizzled or linear layout
 * and the partition exists; otherwise mma.sync m16n8k16 (f16/bf16), m16n8k8
 * (tf32 = f32 operands) or m16n8k32 (8-bit). On HIP targets MFMA (wave64) or
 * WMMA (wave32) 16x16x16 for f16/bf16 operands, warps as the ROCm 16x16
 * partition, frag_a/frag_b replicated over the other warps (and, for WMMA, the
 * two half-waves). 0, or -1 with err set (shapes with no partition, f64
 * operands, ...). All memory from a.
 */
int gemm_plan(Arena *a, const Target *t, const IrKernel *k, const IrStmt *gemm, GemmPlan *out,
	      Err *err);
const char *gemm_instr_name(GemmInstr i);  /* "mma.sync", "wgmma", "mfma", "wmma" */
/* a multi-line description: instruction, partition, fragments, smem layouts (tests, --explain) */
void gemm_plan_dump(Buf *b, const GemmPlan *p);
/* Can the wgmma lowering read operands A and B in these shared layouts through its descriptors
 * (both swizzled, an M-major A (trans_a) in the 128-byte swizzle, an N-major B in the 128-byte
 * swizzle whose panels the warpgroup's N tile and instruction cover whole)? NULL, or why not
 * (from arena a). One rule for the plan, which falls back to mma.sync, and the lowering, which
 * refuses a shared layout planned otherwise. sa NULL: A from registers. */
const char *gemm_wgmma_smem_why(Arena *a, const SmemLayout *sa, const SmemLayout *sb, int trans_a,
				int trans_b, int64_t wg_cols, int inst_n);

#endif
