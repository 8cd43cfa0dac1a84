/*
 * gemm_plan.c: decide a tile gemm (see gemm_plan.h): wgmma m64nNk16 per
 * warpgroup where the target prefers it and the shapes allow, else mma.sync
 * per warp; on AMD targets MFMA 16x16x16 (wave64) or WMMA 16x16x16 (wave32)
 * per warp; the warp partition, the accumulator and operand fragments from
 * the layout core, and the operands' shared-memory swizzles.
 */
#include <stdio.h>
#include <string.h>

#include "gemm_plan.h"

const char *
gemm_instr_name(GemmInstr i)
{
	switch (i) {
	case GEMM_MMA_SYNC: return "mma.sync";
	case GEMM_WGMMA: return "wgmma";
	case GEMM_MFMA: return "mfma";
	case GEMM_WMMA: return "wmma";
	}
	return "?";
}

/* rows and columns of a 2-D gemm region (leading unit dims dropped by sema) */
static int
extents(const Region *r, int64_t rc[2], Err *err)
{
	if (r->ndim < 2 || !r->ext)
		return err_set(err, "gemm: operand region has rank %d, not 2", r->ndim);
	rc[0] = r->ext[r->ndim - 2];
	rc[1] = r->ext[r->ndim - 1];
	if (rc[0] < 1 || rc[1] < 1)
		return err_set(err, "gemm: operand region has an empty extent");
	return 0;
}

/* the buffer's constant shape; -1 for a symbolic dim */
static int
bufshape(const IrBuffer *b, int64_t *shape, Err *err)
{
	int i;

	if (b->ndim < 1 || b->ndim > LAYOUT_MAXDIM)
		return err_set(err, "gemm: buffer '%s' has rank %d", b->name, b->ndim);
	for (i = 0; i < b->ndim; i++) {
		if (b->dims[i].sym)
			return err_set(err, "gemm: buffer '%s' has a symbolic shape", b->name);
		shape[i] = b->dims[i].c;
	}
	return b->ndim;
}

/* the wgmma accumulator over [M, N]: wg_m x wg_n warpgroups (M-fastest, as
 * mma_block_fragment orders warps), each holding a wg_rows x wg_cols tile made
 * of rep_m x rep_n instructions m64n{inst_n}, registers instruction-major */
static Fragment *
wgmma_block_acc(Arena *a, const GemmPlan *p, Err *err)
{
	char thr[512], idx[512];
	int64_t shape[2] = {p->M, p->N};
	const char *slot = "_j %% %d // 8 * 4 + _i %% 16 // 8 * 2 + _j %% 2";
	char sl[128];
	const char *fwd[1];

	snprintf(thr, sizeof thr,
		 "_j // %lld * %lld + _i // %lld * 128 + _i %% 64 // 16 * 32 + _i %% 8 * 4 + _j %% 8 // 2",
		 (long long)p->wg_cols, 128LL * p->wg_m, (long long)p->wg_rows);
	snprintf(sl, sizeof sl, slot, p->inst_n);
	snprintf(idx, sizeof idx, "(_i %% %lld // 64 * %d + _j %% %lld // %d) * %d + %s",
		 (long long)p->wg_rows, p->rep_n, (long long)p->wg_cols, p->inst_n, p->inst_n / 2, sl);
	fwd[0] = idx;
	return frag_parse(a, shape, 2, thr, 1, fwd, 1, err);
}

/* the largest multiple of 8 that divides c and is at most max (256 or less); for s8/u8
 * (integer wgmma) one of the N that PTX has for them: 8, 16, 24 and the multiples of 16 from
 * 32 to 256 */
static int
wgmma_n_max(int64_t c, int integer, int max)
{
	int n;

	for (n = max; n >= 8; n -= 8)
		if (c % n == 0 && (!integer || n <= 24 || n % 16 == 0))
			return n;
	return 0;
}

static int
wgmma_n(int64_t c, int integer)
{
	return wgmma_n_max(c, integer, 256);
}

static int
is_fp8(DType t)
{
	return t == DT_FP8E4M3 || t == DT_FP8E5M2;
}

/* shared-memory layouts for the shared operands; wgmma needs no padding */
static int
smem_layouts(Arena *a, const IrKernel *k, const IrStmt *g, GemmPlan *p, int allow_pad, Err *err)
{
	const IrBuffer *ba = &k->bufs[g->u.gemm.a.buf], *bb = &k->bufs[g->u.gemm.b.buf];
	int64_t shape[LAYOUT_MAXDIM];
	int n;

	p->a_shared = ba->scope == MEM_SHARED;
	p->b_shared = bb->scope == MEM_SHARED;
	p->a_k_inner = !p->trans_a;
	p->b_k_inner = p->trans_b;
	memset(&p->smem_a, 0, sizeof p->smem_a);
	memset(&p->smem_b, 0, sizeof p->smem_b);
	if (p->a_shared) {
		if ((n = bufshape(ba, shape, err)) < 0 ||
		    swizzle_choose(a, shape, n, dtype_bytes(ba->dtype), p->a_k_inner, allow_pad, &p->smem_a,
				   err))
			return -1;
	}
	if (p->b_shared) {
		if ((n = bufshape(bb, shape, err)) < 0 ||
		    swizzle_choose(a, shape, n, dtype_bytes(bb->dtype), p->b_k_inner, allow_pad, &p->smem_b,
				   err))
			return -1;
	}
	return 0;
}

const char *
gemm_wgmma_smem_why(Arena *a, const SmemLayout *sa, const SmemLayout *sb, int trans_a, int trans_b,
		    int64_t wg_cols, int inst_n)
{
	int64_t pw;

	if ((sa && (sa->kind != SMEM_SWIZZLE || sa->mode == SWZ_NONE)) || sb->kind != SMEM_SWIZZLE ||
	    sb->mode == SWZ_NONE || (!trans_b && sb->mode != SWZ_128B) || (sa && trans_a && sa->mode != SWZ_128B))
		return arena_printf(a, "its shared operands take swizzles A %s, B %s (wgmma needs both "
				    "swizzled, an M-major A and an N-major B 128B: a row of 64 f16)",
				    !sa ? "(registers)" : swizzle_name(sa->kind == SMEM_SWIZZLE ? sa->mode : SWZ_NONE),
				    swizzle_name(sb->kind == SMEM_SWIZZLE ? sb->mode : SWZ_NONE));
	pw = swizzle_bytes(sb->mode) / 2;     /* panel width in elements */
	if (!trans_b && (wg_cols % pw || (inst_n % pw && inst_n > pw)))
		return arena_printf(a, "the warpgroup's N tile %lld (instructions of n%d) does not cover whole "
				    "%lld-column panels of B", (long long)wg_cols, inst_n, (long long)pw);
	return NULL;
}

/* try wgmma; 0 planned, 1 not applicable (p->why_not_wgmma says why), -1 error */
static int
plan_wgmma(Arena *a, const Target *t, const IrKernel *k, const IrStmt *g, GemmPlan *p, Err *err)
{
	Err e2 = {0};
	int b8 = p->ab_type == DT_I8 || p->ab_type == DT_U8 || is_fp8(p->ab_type), ik = b8 ? 32 : 16;
	int integer = p->ab_type == DT_I8 || p->ab_type == DT_U8;

	if (p->ab_type != DT_F16 && p->ab_type != DT_BF16 && !b8) {
		p->why_not_wgmma = "operands are not f16/bf16, i8/u8 or fp8";
		return 1;
	}
	if (b8 && p->acc_type != (integer ? DT_I32 : DT_F32)) {
		p->why_not_wgmma = integer ? "the accumulator of i8/u8 operands is not i32"
					   : "the accumulator of fp8 operands is not f32";
		return 1;
	}
	if (b8 && (p->trans_a || !p->trans_b)) {
		/* PTX: the transpose immediates exist for f16/bf16 only; 8-bit A and B are read
		 * K-major (A [M, K], B [N, K]) */
		p->why_not_wgmma = "8-bit operands are not both K-major (wgmma reads i8/u8/fp8 A as [M, K] and B "
				   "as [N, K] only: give A [M, K] and B [N, K] with trans_b = true; mma.sync reads "
				   "the others by byte loads)";
		return 1;
	}
	p->a_reg = k->bufs[g->u.gemm.a.buf].scope == MEM_LOCAL;
	if (!p->a_reg && k->bufs[g->u.gemm.a.buf].scope != MEM_SHARED) {
		p->why_not_wgmma = "operand A is neither in shared memory nor in registers";
		return 1;
	}
	if (p->a_reg && p->trans_a) {
		p->why_not_wgmma = "operand A is in registers and trans_a is asked for (wgmma with A "
				   "from registers reads A as M x K)";
		return 1;
	}
	if (k->bufs[g->u.gemm.b.buf].scope != MEM_SHARED) {
		p->why_not_wgmma = "operand B is not in shared memory";
		return 1;
	}
	if (p->policy == WARP_FULL_COL) {
		p->why_not_wgmma = "policy full_col is asked for (the wgmma partition puts warpgroups "
				   "along M)";
		return 1;
	}
	if (p->M % 64 || k->threads % 128 || p->K % ik) {
		p->why_not_wgmma = b8 ? "M is not a multiple of 64, threads of 128 or K of 32"
				      : "M is not a multiple of 64, threads of 128 or K of 16";
		return 1;
	}
	/*
	 * Warpgroups along M first: each then issues one m64nN instruction per
	 * k16 over the whole N (N <= 256), which reads the least shared memory
	 * per output (A and B are read once per instruction: m64n256 reads 20%
	 * less than two m64n128). Else the square partition.
	 */
	if (mma_warp_partition(p->M, p->N, p->warps, WARP_FULL_ROW, MMA_WGMMA, &p->m_warp, &p->n_warp,
			       &e2) ||
	    p->n_warp != 1 || p->N > 256 || (p->M / (p->m_warp / 4)) % 64 || !wgmma_n(p->N, integer)) {
		e2.set = 0;
		if (mma_warp_partition(p->M, p->N, p->warps, WARP_SQUARE, MMA_WGMMA, &p->m_warp,
				       &p->n_warp, &e2)) {
			p->why_not_wgmma = "no warpgroup partition";
			return 1;
		}
	}
	if (p->policy == WARP_FULL_ROW && (p->n_warp != 1 || p->M != 16LL * p->m_warp)) {
		/* full_row: each warp owns 16 whole rows as in mma.sync's full_row partition (the
		 * same threads hold the same elements, so a result can feed an mma.sync gemm of
		 * the same policy); a warpgroup tile of more than 64 rows gives a warp rows 64 apart */
		p->why_not_wgmma = "policy full_row is asked for and the warpgroups do not give each "
				   "warp 16 whole rows (M = 16 x warps)";
		return 1;
	}
	if (p->a_reg && (p->n_warp != 1 || p->M != 16LL * p->m_warp)) {
		/* wgmma RS: warp w of a warpgroup holds A rows 16 w .. 16 w + 15 of its m64 tile in
		 * the m16n8k16 A-fragment order, which is mma.sync's full_row A fragment when each
		 * warp owns 16 whole rows (one m64 tile per warpgroup) */
		p->why_not_wgmma = "operand A is in registers and the warpgroups do not give each warp "
				   "16 whole rows (M = 16 x warps)";
		return 1;
	}
	p->wg_m = p->m_warp / 4;
	p->wg_n = p->n_warp;
	p->wg_rows = p->M / p->wg_m;
	p->wg_cols = p->N / p->wg_n;
	/* fp8: a warpgroup tile of more than 64 accumulator registers a thread (64 x 256) in
	 * instructions of at most n128, so that the promotion temporary (lower_mma.c) can be one
	 * instruction's registers, promoted instruction by instruction: 64 x 256 takes 128 + 64
	 * registers instead of 128 + 128 (which spilled) */
	if (p->wg_rows % 64 ||
	    !(p->inst_n = wgmma_n_max(p->wg_cols, integer,
				      is_fp8(p->ab_type) && p->wg_rows * p->wg_cols / 128 > 64 ? 128 : 256))) {
		p->why_not_wgmma = "the warpgroup tile does not split into m64nN instructions";
		return 1;
	}
	if (smem_layouts(a, k, g, p, 0, &e2)) {
		p->why_not_wgmma = arena_printf(a, "no unpadded shared layout: %s", e2.msg);
		return 1;
	}
	/* what the wgmma lowering reads through descriptors (lower_mma.c): swizzled operands,
	 * an N-major B in the 128-byte swizzle, whose panels the N tile covers whole */
	if ((p->why_not_wgmma = gemm_wgmma_smem_why(a, p->a_reg ? NULL : &p->smem_a, &p->smem_b, p->trans_a,
						     p->trans_b, p->wg_cols, p->inst_n)))
		return 1;
	p->instr = GEMM_WGMMA;
	p->inst_m = 64;
	p->inst_k = ik;
	p->rep_m = (int)(p->wg_rows / 64);
	p->rep_n = (int)(p->wg_cols / p->inst_n);
	p->ksteps = (int)(p->K / ik);
	p->frag_a = p->frag_b = NULL;
	if (!(p->acc = wgmma_block_acc(a, p, err)))
		return -1;
	/* wgmma RS: A's registers in the order of mma.sync's full_row A fragment (k-step major,
	 * then a0..a7 of m16n8k16: PTX 9.7.15.5.1.1 "register fragment A" of m64nNk16; 8-bit:
	 * a0..a15 of m16n8k32, the register fragment A of m64nNk32) */
	if (p->a_reg && !(p->frag_a = mma_block_fragment(a, MMA_A, p->M, p->K, b8 ? 8 : 16, p->m_warp, 1, err)))
		return -1;
	(void)t;
	return 0;
}

static int
plan_mma_sync(Arena *a, const Target *t, const IrKernel *k, const IrStmt *g, GemmPlan *p, Err *err)
{
	int bits;

	if (is_fp8(p->ab_type) && t->sm < 89)
		return err_set(err, "gemm: %s has no MMA for %s operands (mma.sync .e4m3/.e5m2 needs sm_89 or "
			       "later, wgmma sm_90a); convert them to f16 or bf16", t->arch, dtype_name(p->ab_type));
	switch (p->ab_type) {
	case DT_F16: case DT_BF16: bits = 16; break;
	case DT_F32: bits = 32; break;
	case DT_I8: case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: bits = 8; break;
	default:
		return err_set(err, "gemm: no mma.sync for %s operands", dtype_name(p->ab_type));
	}
	p->instr = GEMM_MMA_SYNC;
	p->elem_bits = bits;
	p->inst_m = 16;
	p->inst_n = 8;
	p->inst_k = bits == 16 ? 16 : bits == 32 ? 8 : 32;
	p->wg_m = p->wg_n = 0;
	p->wg_rows = p->wg_cols = 0;
	if (p->K % p->inst_k)
		return err_set(err, "gemm: K = %lld is not a multiple of the mma.sync k extent %d",
			       (long long)p->K, p->inst_k);
	if (mma_warp_partition(p->M, p->N, p->warps, (WarpPolicy)p->policy, MMA_CUDA, &p->m_warp,
			       &p->n_warp, err))
		return -1;
	p->rep_m = (int)(p->M / p->m_warp / 16);
	p->rep_n = (int)(p->N / p->n_warp / 8);
	p->ksteps = (int)(p->K / p->inst_k);
	if (!(p->acc = mma_block_fragment(a, MMA_C, p->M, p->N, bits, p->m_warp, p->n_warp, err)) ||
	    !(p->frag_a = mma_block_fragment(a, MMA_A, p->M, p->K, bits, p->m_warp, p->n_warp, err)) ||
	    !(p->frag_b = mma_block_fragment(a, MMA_B, p->K, p->N, bits, p->m_warp, p->n_warp, err)))
		return -1;
	return smem_layouts(a, k, g, p, 1, err);
}

/*
 * The AMD plans: one 16x16x16 instruction per step, wave64 MFMA (CDNA) or
 * wave32 WMMA (RDNA3). Warps tile [M, N] as mma_warp_partition's ROCm
 * 16x16 partition; warp (wm, wn) (wm fastest) holds rep_m x rep_n
 * instructions, registers instruction-major, each instruction's registers
 * in the hardware order of mfma_fragment / wmma_fragment (mma.c).
 */
static Fragment *
amd_block(Arena *a, const GemmPlan *p, MmaOperand op, Err *err)
{
	int64_t wrt = p->M / p->m_warp, wct = p->N / p->n_warp, W = p->instr == GEMM_MFMA ? 64 : 32;
	int64_t shape[2];
	char thr[512], idx[512];
	const char *fwd[1] = {idx};
	int64_t rep = 1;

	if (op == MMA_C) {
		shape[0] = p->M, shape[1] = p->N;
		/* MFMA: lane n + m / 4 * 16, register m % 4; WMMA: lane n + m % 2 * 16, register m / 2 */
		snprintf(thr, sizeof thr, "_j // %lld * %lld + _i // %lld * %lld + _j %% 16 + %s",
			 (long long)wct, (long long)(W * p->m_warp), (long long)wrt, (long long)W,
			 W == 64 ? "_i % 16 // 4 * 16" : "_i % 2 * 16");
		snprintf(idx, sizeof idx, "(_i %% %lld // 16 * %d + _j %% %lld // 16) * %d + %s",
			 (long long)wrt, p->rep_n, (long long)wct, W == 64 ? 4 : 8,
			 W == 64 ? "_i % 4" : "_i % 16 // 2");
	} else if (op == MMA_A) {
		/* A [M, K], replicated over the N-warps (and the two half-waves on WMMA);
		 * registers: k-step major, then the warp's M instructions */
		shape[0] = p->M, shape[1] = p->K;
		if (W == 64) {
			rep = p->n_warp;
			snprintf(thr, sizeof thr, "_i %% 16 + _j %% 16 // 4 * 16 + _i // %lld * 64 + _rep * %lld",
				 (long long)wrt, 64LL * p->m_warp);
			snprintf(idx, sizeof idx, "(_j // 16 * %d + _i %% %lld // 16) * 4 + _j %% 4", p->rep_m,
				 (long long)wrt);
		} else {
			rep = 2LL * p->n_warp;
			snprintf(thr, sizeof thr, "_i %% 16 + _rep %% 2 * 16 + _i // %lld * 32 + _rep // 2 * %lld",
				 (long long)wrt, 32LL * p->m_warp);
			snprintf(idx, sizeof idx, "(_j // 16 * %d + _i %% %lld // 16) * 16 + _j %% 16", p->rep_m,
				 (long long)wrt);
		}
	} else {
		/* B [K, N], replicated over the M-warps (and the half-waves on WMMA) */
		shape[0] = p->K, shape[1] = p->N;
		if (W == 64) {
			rep = p->m_warp;
			snprintf(thr, sizeof thr, "_j %% 16 + _i %% 16 // 4 * 16 + _rep * 64 + _j // %lld * %lld",
				 (long long)wct, 64LL * p->m_warp);
			snprintf(idx, sizeof idx, "(_i // 16 * %d + _j %% %lld // 16) * 4 + _i %% 4", p->rep_n,
				 (long long)wct);
		} else {
			rep = 2LL * p->m_warp;
			snprintf(thr, sizeof thr, "_j %% 16 + _rep %% 2 * 16 + _rep // 2 * 32 + _j // %lld * %lld",
				 (long long)wct, 32LL * p->m_warp);
			snprintf(idx, sizeof idx, "(_i // 16 * %d + _j %% %lld // 16) * 16 + _i %% 16", p->rep_n,
				 (long long)wct);
		}
	}
	return frag_parse(a, shape, 2, thr, rep, fwd, 1, err);
}

static int
plan_amd(Arena *a, const Target *t, const IrKernel *k, const IrStmt *g, GemmPlan *p, Err *err)
{
	if (p->ab_type != DT_F16 && p->ab_type != DT_BF16)
		return err_set(err, "gemm: %s has no %s for %s operands (f16 and bf16 only)", t->arch,
			       t->mma == TMMA_MFMA ? "MFMA" : "WMMA", dtype_name(p->ab_type));
	p->instr = t->mma == TMMA_MFMA ? GEMM_MFMA : GEMM_WMMA;
	p->elem_bits = 16;
	p->inst_m = p->inst_n = p->inst_k = 16;
	p->wg_m = p->wg_n = 0;
	p->wg_rows = p->wg_cols = 0;
	if (p->K % 16)
		return err_set(err, "gemm: K = %lld is not a multiple of the %s k extent 16", (long long)p->K,
			       gemm_instr_name(p->instr));
	if (mma_warp_partition(p->M, p->N, p->warps, (WarpPolicy)p->policy, MMA_ROCM, &p->m_warp,
			       &p->n_warp, err))
		return -1;
	p->rep_m = (int)(p->M / p->m_warp / 16);
	p->rep_n = (int)(p->N / p->n_warp / 16);
	p->ksteps = (int)(p->K / 16);
	if (!(p->acc = amd_block(a, p, MMA_C, err)) || !(p->frag_a = amd_block(a, p, MMA_A, err)) ||
	    !(p->frag_b = amd_block(a, p, MMA_B, err)))
		return -1;
	return smem_layouts(a, k, g, p, 1, err);
}

int
gemm_plan(Arena *a, const Target *t, const IrKernel *k, const IrStmt *g, GemmPlan *out, Err *err)
{
	int64_t sa[2], sb[2], sc[2];
	const IrBuffer *ba, *bc;
	int r;

	if (!a || !t || !k || !g || !out)
		return err_set(err, "gemm_plan: null argument");
	memset(out, 0, sizeof *out);
	if (g->kind != S_GEMM)
		return err_set(err, "gemm_plan: statement is a %s, not a gemm", "non-gemm");
	if (g->u.gemm.a.buf < 0 || g->u.gemm.a.buf >= k->nbuf || g->u.gemm.b.buf < 0 ||
	    g->u.gemm.b.buf >= k->nbuf || g->u.gemm.c.buf < 0 || g->u.gemm.c.buf >= k->nbuf)
		return err_set(err, "gemm_plan: buffer id out of range");
	if (extents(&g->u.gemm.a, sa, err) || extents(&g->u.gemm.b, sb, err) ||
	    extents(&g->u.gemm.c, sc, err))
		return -1;
	out->trans_a = g->u.gemm.trans_a;
	out->trans_b = g->u.gemm.trans_b;
	out->policy = g->u.gemm.policy;
	out->M = sa[out->trans_a ? 1 : 0];
	out->K = sa[out->trans_a ? 0 : 1];
	out->N = sb[out->trans_b ? 0 : 1];
	if (sb[out->trans_b ? 1 : 0] != out->K || sc[0] != out->M || sc[1] != out->N)
		return err_set(err, "gemm_plan: operand shapes disagree");
	ba = &k->bufs[g->u.gemm.a.buf];
	bc = &k->bufs[g->u.gemm.c.buf];
	out->ab_type = ba->dtype;
	out->acc_type = bc->dtype;
	out->elem_bits = dtype_bytes(ba->dtype) * 8;
	if (k->threads < 1 || k->threads % t->warp_size)
		return err_set(err, "gemm_plan: %lld threads are not whole warps of %d",
			       (long long)k->threads, t->warp_size);
	out->warps = (int)(k->threads / t->warp_size);
	if (t->mma == TMMA_MFMA || t->mma == TMMA_WMMA)
		return plan_amd(a, t, k, g, out, err);
	if (t->mma == TMMA_WGMMA) {
		if ((r = plan_wgmma(a, t, k, g, out, err)) <= 0)
			return r;
		if (t->mma_fallback != TMMA_MMA_SYNC)
			return err_set(err, "gemm_plan: wgmma is not possible (%s) and %s has no fallback",
				       out->why_not_wgmma, t->arch);
	} else if (t->mma != TMMA_MMA_SYNC) {
		return err_set(err, "gemm_plan: %s has no mma.sync", t->arch);
	}
	return plan_mma_sync(a, t, k, g, out, err);
}

static void
dumplayout(Buf *b, const char *name, const Layout *L)
{
	buf_printf(b, "%s: ", name);
	if (L)
		layout_print(b, L);
	else
		buf_puts(b, "none");
	buf_putc(b, '\n');
}

static const char *
smemkind(SmemKind k)
{
	switch (k) {
	case SMEM_LINEAR: return "linear";
	case SMEM_PADDED: return "padded";
	case SMEM_SWIZZLE: return "swizzle";
	case SMEM_F64_KINNER: return "f64-kinner";
	case SMEM_F64_KOUTER: return "f64-kouter";
	}
	return "?";
}

void
gemm_plan_dump(Buf *b, const GemmPlan *p)
{
	buf_printf(b, "gemm %lldx%lldx%lld %s*%s -> %s%s%s\n", (long long)p->M, (long long)p->N,
		   (long long)p->K, dtype_name(p->ab_type), dtype_name(p->ab_type),
		   dtype_name(p->acc_type), p->trans_a ? " trans_a" : "", p->trans_b ? " trans_b" : "");
	buf_printf(b, "instr: %s m%dn%dk%d, %d warps as %dx%d", gemm_instr_name(p->instr), p->inst_m,
		   p->inst_n, p->inst_k, p->warps, p->m_warp, p->n_warp);
	if (p->policy == WARP_FULL_ROW || p->policy == WARP_FULL_COL)
		buf_printf(b, " (policy %s)", p->policy == WARP_FULL_ROW ? "full_row" : "full_col");
	if (p->instr == GEMM_WGMMA)
		buf_printf(b, ", warpgroups %dx%d of %lldx%lld", p->wg_m, p->wg_n, (long long)p->wg_rows,
			   (long long)p->wg_cols);
	buf_printf(b, ", %dx%d instructions, %d k-steps\n", p->rep_m, p->rep_n, p->ksteps);
	if (p->why_not_wgmma)
		buf_printf(b, "not wgmma: %s\n", p->why_not_wgmma);
	dumplayout(b, "acc", p->acc);
	dumplayout(b, "frag_a", p->frag_a);
	dumplayout(b, "frag_b", p->frag_b);
	if (p->a_shared)
		buf_printf(b, "smem_a: %s %s (k_inner %d)\n", smemkind(p->smem_a.kind),
			   swizzle_name(p->smem_a.mode), p->a_k_inner);
	if (p->b_shared)
		buf_printf(b, "smem_b: %s %s (k_inner %d)\n", smemkind(p->smem_b.kind),
			   swizzle_name(p->smem_b.mode), p->b_k_inner);
}
