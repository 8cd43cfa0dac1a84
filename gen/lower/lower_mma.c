/*
 * lower_mma.c: gemm. mma.sync m16n8k16 with ldmatrix operands (sm_80 and
 * later), wgmma m64nNk16 from shared-memory descriptors (sm_90a), MFMA and
 * WMMA 16x16x16 on AMD, each over the gemm plan (lower/gemm_plan.c).
 */
#include "lw.h"

static int gemm_amd(Em *e, const IrStmt *st, const GemmPlan *p);
/* ---- gemm on sm_90a: wgmma.mma_async m64nNk16 from shared-memory descriptors ---------- */

/* a descriptor for operand buf at element (r, c), whose row r % 8 == 0 starts a swizzle atom */
static int
wgdesc(Em *e, const char *name, int buf, const char *r, const char *c, int64_t lbo, int64_t sbo,
       int type)
{
	char *ix[2];
	Buf b;

	ix[0] = (char *)r, ix[1] = (char *)c;
	buf_init(&b);
	if (lw_smemoff(e, buf, ix, &b)) {
		buf_free(&b);
		return -1;
	}
	lw_decl(e, 1, "tl_u64", name, 0, arena_printf(e->a, "tl_wgmma_desc(&%s[%s], %lld, %lld, %d)", lw_bufptr(e, buf),
						  buf_str(&b), (long long)lbo, (long long)sbo, type), NULL);
	buf_free(&b);
	return 0;
}

/*
 * fp8 promotion (two-level accumulation). wgmma's e4m3/e5m2 path adds its products into the
 * accumulator with fewer bits than f32 (the H200 differed from the fp64 reference by up to
 * 4.9e-4 of max at K = 2048, test/gpu/NOTES.md), so an fp8 wgmma gemm accumulates into a
 * temporary fragment X_pa_ of the accumulator X's shape, and every LW_PROMO_KBLOCKS k32
 * blocks (128 of K, CUTLASS's interval without fast accumulation) the temporary, once its
 * wgmma group retired, is added into X in f32 registers. It is never cleared: the first
 * wgmma of an interval has scale-d 0 (D = A B), which saves a register move per slot and
 * interval (H100: 0.732 -> 0.774 of cuBLASLt at 8192^3 with the release below, test/gpu/
 * NOTES.md). Cost: a second accumulator fragment of registers (X's slots again: 64 floats a
 * thread for a 128x128 tile over one warpgroup) and a wait_group 0 at each promotion.
 *
 * Outside a pipeline that keeps a group in flight, and for a gemm of at least
 * LW_PROMO_KBLOCKS k-blocks, X_pa_ is the gemm's own: started over at its start, promoted
 * every LW_PROMO_KBLOCKS k-blocks and at its end (X holds A B after the gemm; the gemm ends
 * with no group in flight, so a pipeline releases its stage at once). In a pipeline with
 * one wgmma group in flight (lower_pipeline.c) a gemm of fewer k-blocks accumulates into
 * X_pa_ declared before the loop with its count X_pk_: the gemm keeps its group in flight
 * and promotes (wait_group 0 first) only when the next gemm would pass the interval, its
 * first wgmma after a promotion with scale-d 0 (X_pk_ > 0 is the scale-d); the pipeline
 * promotes the rest (if X_pk_ > 0) after its final wait_group 0. The pipeline body reads X only
 * in its gemms (plan_pipeline.c wgmma_body), so nothing sees X before that.
 */
int
lw_promo_kblocks(Em *e, const IrStmt *st)
{
	GemmPlan p;
	Err err = {0};

	if (st->kind != S_GEMM || lw_plan_of(e, st, &p, &err) || p.instr != GEMM_WGMMA ||
	    (p.ab_type != DT_FP8E4M3 && p.ab_type != DT_FP8E5M2) || p.inst_k <= 0)
		return 0;
	return (int)(p.K / p.inst_k);
}

/* the pipeline being lowered declared X_pa_ and X_pk_ for accumulator cbuf */
int
lw_promo_piped(const Em *e, int cbuf)
{
	int i;

	for (i = 0; i < e->npromo; i++)
		if (e->promo[i] == cbuf)
			return 1;
	return 0;
}

void
lw_promote(Em *e, int cbuf, int64_t off, int64_t count)
{
	const char *x = e->k->bufs[cbuf].name;
	LNode *fl = lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)count), count, 1, 0);

	fl->text = off || count < e->slots[cbuf]
			   ? arena_printf(e->a, "promote: the fp8 wgmma temporary added in f32 to %s[%lld .. %lld]", x,
					  (long long)off, (long long)(off + count - 1))
			   : "promote: the fp8 wgmma temporary added in f32";
	lw_assign(e, LM_LOCAL, cbuf, 0,
		  off ? arena_printf(e->a, "%s[%lld + s]", x, (long long)off) : arena_printf(e->a, "%s[s]", x),
		  off ? arena_printf(e->a, "%s[%lld + s] + %s_pa_[s]", x, (long long)off, x)
		      : arena_printf(e->a, "%s[s] + %s_pa_[s]", x, x));
	lw_pop(e);
}

/* an fp8 wgmma gemm whose accumulator has more than LW_PROMO_TEMP registers a thread over
 * more than one instruction (the gemm plan keeps fp8 instructions at n128 or less for
 * such tiles): its temporary is one instruction's registers, and the gemm runs instruction
 * by instruction, each promoted into its slice of the accumulator. The temporary's size in
 * registers, else 0 */
static int
promo_split(const GemmPlan *p, int64_t slots)
{
	return p->rep_m * p->rep_n > 1 && slots > LW_PROMO_TEMP ? p->inst_n / 2 : 0;
}

int
lw_promo_split(Em *e, const IrStmt *st)
{
	GemmPlan p;
	Err err = {0};

	if (!lw_promo_kblocks(e, st) || lw_plan_of(e, st, &p, &err))
		return 0;
	return promo_split(&p, e->slots[st->u.gemm.c.buf]);
}

static int
gemm_wgmma(Em *e, const IrStmt *st, const GemmPlan *p)
{
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	const SmemBuf *sa = smem_find(&e->sp, st->u.gemm.a.buf), *sb = smem_find(&e->sp, st->u.gemm.b.buf);
	int64_t atom_a, atom_b, lbo_a, lbo_b, kk;
	int mi, ni, nreg = p->inst_n / 2, nk, piped, split, part;
	char rs[64], cs[64];
	const char *dacc;
	Buf b;

	int areg = p->a_reg && A->scope == MEM_LOCAL;
	int integer = p->ab_type == DT_I8 || p->ab_type == DT_U8;
	int fp8 = p->ab_type == DT_FP8E4M3 || p->ab_type == DT_FP8E5M2, b8 = integer || fp8;
	const char *ty;

	if (b8 ? p->elem_bits != 8 || p->inst_k != 32 || p->trans_a || !p->trans_b ||
		     p->acc_type != (integer ? DT_I32 : DT_F32)
	       : (p->trans_a && areg) || p->elem_bits != 16 || p->inst_k != 16 || p->acc_type != DT_F32)
		return err_set(e->err, "gemm: wgmma lowers only f16/bf16 A[M,K] or A[K,M] from shared memory, "
			       "A[M,K] from registers, x B[K,N] or B[N,K] from shared memory into an f32 accumulator, "
			       "and i8/u8 (into i32) or fp8 (into f32) A[M,K] (shared or local) x B[N,K] from shared memory");
	if ((!sa && !areg) || !sb || A->ndim != 2 || B->ndim != 2 || Cb->ndim != 2)
		return err_set(e->err, "gemm: wgmma reads 2-D operands: A from shared memory or registers, B "
			       "from shared memory");
	ty = p->ab_type == DT_BF16 ? "bf16" : p->ab_type == DT_I8 ? "s8" : p->ab_type == DT_U8 ? "u8"
	     : p->ab_type == DT_FP8E4M3 ? "e4m3" : p->ab_type == DT_FP8E5M2 ? "e5m2" : "f16";
	if (areg && (!p->frag_a || (e->frag[st->u.gemm.a.buf] != p->frag_a &&
				    layout_equal(e->frag[st->u.gemm.a.buf], p->frag_a, NULL) != 1)))
		return err_set(e->err, "gemm: operand A '%s' is in registers but not in the wgmma A-fragment "
			       "layout of the gemm plan", A->name);
	{
		/* the shared memory plan's layouts (an annotation may differ from the gemm plan's) */
		SmemLayout la = {sa ? sa->kind : SMEM_SWIZZLE, sa ? sa->mode : SWZ_NONE, NULL},
			   lb = {sb->kind, sb->mode, NULL};
		const char *why = gemm_wgmma_smem_why(e->a, areg ? NULL : &la, &lb, p->trans_a, p->trans_b,
						      p->wg_cols, p->inst_n);

		if (why)
			return err_set(e->err, "gemm: wgmma cannot read these operands: %s", why);
	}
	if (e->frag[st->u.gemm.c.buf] != p->acc && layout_equal(e->frag[st->u.gemm.c.buf], p->acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	atom_a = areg ? 0 : swizzle_alignment(sa->mode);   /* 8 rows of one swizzle panel, in bytes */
	atom_b = swizzle_alignment(sb->mode);
	lbo_b = p->trans_b ? 16 : p->K / 8 * atom_b;
	/* an M-major A (trans_a, stored [K, M]): 64-column panels of all the buffer's rows, as an
	 * N-major B */
	lbo_a = p->trans_a ? A->dims[0].c / 8 * atom_a : 16;
	if (areg)
		lw_comment(e, "gemm %s: wgmma m64n%dk%d, warpgroups %dx%d, %dx%d instructions per warpgroup, "
			   "A '%s' from registers", Cb->name, p->inst_n, p->inst_k, p->wg_m, p->wg_n, p->rep_m,
			   p->rep_n, A->name);
	else
		lw_comment(e, "gemm %s: wgmma m64n%dk%d, warpgroups %dx%d, %dx%d instructions per warpgroup",
			   Cb->name, p->inst_n, p->inst_k, p->wg_m, p->wg_n, p->rep_m, p->rep_n);
	lw_open_block(e, NULL);
	/* the warpgroup's coordinates in the block's wg_m x wg_n grid (an A from registers has no
	 * descriptor: no wgm) */
	if (areg)
		lw_decl(e, 1, "int", "wgn", 0, arena_printf(e->a, "warp / 4 / %d", p->wg_m), NULL);
	else
		lw_decl2(e, "wgm", arena_printf(e->a, "warp / 4 %% %d", p->wg_m), "wgn",
			 arena_printf(e->a, "warp / 4 / %d", p->wg_m));
	if (!e->wg_inflight && !e->pipe_fenced) {
		lw_call(e, LC_FENCE, "tl_fence_proxy_async", "", NULL);
		lw_barrier(e);
	}
	if (areg) {
		/* A's registers packed before the fence (PTX: a wgmma.fence between writing registers
		 * and a wgmma.mma_async that reads them); the A fragment's slots (mma_block_fragment,
		 * one m64 tile per warpgroup): k-step * 8 + a0..a7, two 16-bit elements a register */
		LNode *fl;

		lw_decl(e, 0, "tl_u32", arena_printf(e->a, "af[%d][4]", p->ksteps), 0, NULL, NULL);
		fl = lw_open_for(e, "s", "0", arena_printf(e->a, "%d", p->ksteps * 4), p->ksteps * 4, 1, 0);
		fl->u.loop.nobrace = 1;
		if (b8) /* 8-bit: k-step * 16 + a0..a15 of m16n8k32, four elements a register */
			lw_assign(e, LM_LOCAL, -1, 0, "af[s / 4][s % 4]",
				  arena_printf(e->a, "(tl_u32)(unsigned char)%s[4 * s] | (tl_u32)(unsigned char)%s[4 * s + 1] << 8 | "
					       "(tl_u32)(unsigned char)%s[4 * s + 2] << 16 | (tl_u32)(unsigned char)%s[4 * s + 3] << 24",
					       A->name, A->name, A->name, A->name));
		else
			lw_assign(e, LM_LOCAL, -1, 0, "af[s / 4][s % 4]",
				  arena_printf(e->a, "(tl_u32)%s[2 * s] | (tl_u32)%s[2 * s + 1] << 16", A->name, A->name));
		lw_pop(e);
	}
	/* fp8: the wgmma accumulates into a temporary, promoted into Cb (lw_promo_kblocks) */
	nk = fp8 ? (int)(p->K / p->inst_k) : 0;
	split = fp8 ? promo_split(p, e->slots[st->u.gemm.c.buf]) : 0;
	piped = fp8 && !split && e->wg_inflight == 2 && nk < LW_PROMO_KBLOCKS && lw_promo_piped(e, st->u.gemm.c.buf);
	dacc = fp8 ? arena_printf(e->a, "%s_pa_", Cb->name) : Cb->name;
	if (fp8 && !piped)
		lw_decl(e, 0, "float", dacc, split ? split : e->slots[st->u.gemm.c.buf], NULL,
			arena_printf(e->a, "// the fp8 wgmma accumulator%s, promoted into f32 every 4 k32 blocks (the first "
				     "wgmma of each interval has scale-d 0: no clearing)",
				     split ? " of one instruction" : ""));
	lw_call(e, LC_FENCE, "tl_wgmma_fence", "", NULL);
	buf_init(&b);
	/* split: instruction by instruction (part = its index), each over the whole K */
	for (part = 0; part < (split ? p->rep_m * p->rep_n : 1); part++) {
		if (part)
			lw_call(e, LC_FENCE, "tl_wgmma_fence", "", NULL);
		for (kk = 0; kk < p->K; kk += p->inst_k) {
			if (fp8 && !piped && kk && kk / p->inst_k % LW_PROMO_KBLOCKS == 0) {
				/* the interval's groups retire before their accumulators are read */
				lw_call(e, LC_MMA_GROUP, "tl_wgmma_commit", "", NULL);
				lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
				lw_promote(e, st->u.gemm.c.buf, (int64_t)part * split,
					   split ? split : e->slots[st->u.gemm.c.buf]);
				lw_call(e, LC_FENCE, "tl_wgmma_fence", "", NULL);
			}
			for (mi = 0; mi < p->rep_m; mi++)
				for (ni = 0; ni < p->rep_n; ni++) {
					if (split && mi * p->rep_n + ni != part)
						continue;
					lw_open_block(e, NULL);
					snprintf(rs, sizeof rs, "(wgm * %lld + %d)", (long long)p->wg_rows, mi * 64);
					snprintf(cs, sizeof cs, "%lld", (long long)kk);
					if (!areg && (p->trans_a ? wgdesc(e, "da", st->u.gemm.a.buf, cs, rs, lbo_a, atom_a,
									  swizzle_wgmma_layout_type(sa->mode))
								 : wgdesc(e, "da", st->u.gemm.a.buf, rs, cs, lbo_a, atom_a,
									  swizzle_wgmma_layout_type(sa->mode))))
						goto fail;
					snprintf(cs, sizeof cs, "(wgn * %lld + %d)", (long long)p->wg_cols, ni * p->inst_n);
					snprintf(rs, sizeof rs, "%lld", (long long)kk);
					if (p->trans_b ? wgdesc(e, "db", st->u.gemm.b.buf, cs, rs, 16, atom_b,
								swizzle_wgmma_layout_type(sb->mode))
						       : wgdesc(e, "db", st->u.gemm.b.buf, rs, cs, lbo_b, atom_b,
								swizzle_wgmma_layout_type(sb->mode)))
						goto fail;
					/* tilec_cuda.h: wgmma.mma_async m64nNk16 (m64nNk32 for 8-bit operands, both
					 * K-major: no transpose immediates) on this thread's N/2 accumulators */
					if (fp8) {
						/* scale-d: 0 on the interval's first k-block (the temporary starts
						 * over), for a piped gemm while the temporary holds no k-blocks */
						const char *sd = kk % (LW_PROMO_KBLOCKS * p->inst_k) ? "1"
								 : piped ? (kk ? "1" : arena_printf(e->a, "%s_pk_ > 0", Cb->name))
								 : "0";

						lw_call(e, LC_MMA, arena_printf(e->a, "tl_wgmma_%s%s<%d>", areg ? "rs_" : "", ty, p->inst_n),
							arena_printf(e->a, "&%s[%d], %s, db%s%s", dacc, split ? 0 : (mi * p->rep_n + ni) * nreg,
								     areg ? arena_printf(e->a, "af[%lld]", (long long)(kk / 32)) : "da",
								     strcmp(sd, "1") ? ", " : "", strcmp(sd, "1") ? sd : ""),
							arena_printf(e->a, "// m64n%dk32, %s%s", p->inst_n,
								     areg ? "B K-major" : "A and B K-major",
								     !strcmp(sd, "1") ? "" : !strcmp(sd, "0") ? ", scale-d 0: the temporary starts over"
								     : ", scale-d 0 while the temporary holds no k-blocks"));
					} else if (b8)
						lw_call(e, LC_MMA, arena_printf(e->a, "tl_wgmma_%s%s<%d>", areg ? "rs_" : "", ty, p->inst_n),
							arena_printf(e->a, "&%s[%d], %s, db", dacc, (mi * p->rep_n + ni) * nreg,
								     areg ? arena_printf(e->a, "af[%lld]", (long long)(kk / 32)) : "da"),
							arena_printf(e->a, "// m64n%dk32, %s", p->inst_n,
								     areg ? "B K-major" : "A and B K-major"));
					else
						lw_call(e, LC_MMA, arena_printf(e->a, "tl_wgmma_%s%s<%d, %d%s>", areg ? "rs_" : "",
									     ty, p->inst_n, p->trans_b ? 0 : 1,
									     p->trans_a ? ", 1" : ""),
							arena_printf(e->a, "&%s[%d], %s, db", Cb->name, (mi * p->rep_n + ni) * nreg,
								     areg ? arena_printf(e->a, "af[%lld]", (long long)(kk / 16)) : "da"),
							arena_printf(e->a, "// m64n%dk16, %sB %s-major", p->inst_n,
								     p->trans_a ? "A M-major, " : "", p->trans_b ? "K" : "N"));
					buf_reset(&b);
					lw_pop(e);
				}
		}
		if (split) {
			lw_call(e, LC_MMA_GROUP, "tl_wgmma_commit", "", NULL);
			lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
			lw_promote(e, st->u.gemm.c.buf, (int64_t)part * split, split);
		}
	}
	if (split) {
		e->wg_open = 0; /* every instruction's groups retired */
		goto done;
	}
	lw_call(e, LC_MMA_GROUP, "tl_wgmma_commit", "", NULL);
	if (piped) {
		/* the group stays in flight until the next gemm would pass the interval */
		const char *pk = arena_printf(e->a, "%s_pk_", Cb->name);

		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait1", "", "  // this group stays in flight; the pipeline waits for it");
		lw_assign(e, LM_LOCAL, -1, 0, pk, arena_printf(e->a, "%s + %d", pk, nk));
		lw_open_if(e, arena_printf(e->a, "%s + %d > %d", pk, nk, LW_PROMO_KBLOCKS), 0, 0);
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", arena_printf(e->a, "// %s's groups retired", dacc));
		lw_promote(e, st->u.gemm.c.buf, 0, e->slots[st->u.gemm.c.buf]);
		lw_assign(e, LM_LOCAL, -1, 0, pk, "0");
		lw_pop(e);
		e->wg_open = 1;
	} else if (fp8) {
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
		lw_promote(e, st->u.gemm.c.buf, 0, e->slots[st->u.gemm.c.buf]);
		e->wg_open = 0;
	} else if (e->wg_inflight == 2) {
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait1", "", "  // this group stays in flight; the pipeline waits for it");
		e->wg_open = 1;
	} else if (e->wg_inflight == 3) {
		e->wg_open = 1; /* issued only: the rotated pipeline waits for it (lower_pipeline.c) */
	} else {
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
		e->wg_open = 0;
	}
done:
	lw_pop(e);
	buf_free(&b);
	return 0;
fail:
	buf_free(&b);
	return -1;
}

/* the mma.sync helper of tilec_cuda.h for operands of type t */
static const char *
mma_sync_fn(DType t)
{
	switch (t) {
	case DT_BF16: return "tl_mma_bf16_16816";
	case DT_I8: return "tl_mma_s8_16832";
	case DT_U8: return "tl_mma_u8_16832";
	case DT_FP8E4M3: return "tl_mma_e4m3_16832";
	case DT_FP8E5M2: return "tl_mma_e5m2_16832";
	default: return "tl_mma_f16_16816";
	}
}

/* lhs = the four 8-bit elements (tl_gk + j, x), j = 0..3, of shared operand buf stored [K, X],
 * byte j in bits 8 j (the register of an m16n8k32 fragment) */
static int
bytepack(Em *e, int buf, const char *lhs, const char *x)
{
	static const char *const ks[4] = {"tl_gk", "(tl_gk + 1)", "(tl_gk + 2)", "(tl_gk + 3)"};
	char *ix[2];
	Buf b, r;
	int j;

	buf_init(&b);
	buf_init(&r);
	for (j = 0; j < 4; j++) {
		ix[0] = (char *)ks[j], ix[1] = (char *)x;
		buf_reset(&b);
		if (lw_smemoff(e, buf, ix, &b)) {
			buf_free(&b);
			buf_free(&r);
			return -1;
		}
		buf_printf(&r, "%s(tl_u32)(unsigned char)%s[%s]", j ? " | " : "", lw_bufptr(e, buf), buf_str(&b));
		if (j)
			buf_printf(&r, " << %d", 8 * j);
	}
	lw_assign(e, LM_LOCAL, -1, 0, lhs, buf_str(&r));
	buf_free(&b);
	buf_free(&r);
	return 0;
}

/* gemm_plan for st, memoised per kernel: planning builds and checks fragments */
int
lw_plan_of(Em *e, const IrStmt *st, GemmPlan *p, Err *err)
{
	int i;

	for (i = 0; i < e->nplan; i++)
		if (e->plan_st[i] == st) {
			*p = e->plan[i];
			return 0;
		}
	if (st->gemm_plan)
		*p = *st->gemm_plan;
	else if (gemm_plan(e->a, e->t, e->k, st, p, err))
		return -1;
	if (e->nplan < (int)(sizeof e->plan / sizeof e->plan[0])) {
		e->plan_st[e->nplan] = st;
		e->plan[e->nplan++] = *p;
	}
	return 0;
}

int
lw_gemm(Em *e, const IrStmt *st)
{
	GemmPlan p;
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	int64_t wm, wn;
	int mi, nj, ni, areg, b8, ascalar, bscalar, accok, fp8old, ik;
	char *ia[2], *ib[2];
	Buf b;

	if (lw_nopad(e, st->u.gemm.c.buf, "gemm") ||
	    (A->scope == MEM_LOCAL && lw_nopad(e, st->u.gemm.a.buf, "gemm")) ||
	    (B->scope == MEM_LOCAL && lw_nopad(e, st->u.gemm.b.buf, "gemm")))
		return -1;
	if (lw_plan_of(e, st, &p, e->err))
		return -1;
	if (st->u.gemm.clear) {
		/* clear = true: C = A * B, the accumulator zeroed first (an in-flight wgmma group
		 * still writes it: retire it before) */
		if (p.instr == GEMM_WGMMA && e->wg_inflight == 2)
			lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", arena_printf(e->a, "// clear = true: the group in flight writes %s", Cb->name));
		{
			int64_t S = e->slots[st->u.gemm.c.buf];
			LNode *fl = lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), S, 1, 0);

			fl->u.loop.nobrace = 1, fl->text = "clear = true";
			lw_assign(e, LM_LOCAL, st->u.gemm.c.buf, 0, arena_printf(e->a, "%s[s]", Cb->name), "0");
			lw_pop(e);
		}
		if (p.instr == GEMM_WGMMA && e->wg_inflight == 2 && lw_promo_piped(e, st->u.gemm.c.buf))
			/* the pipeline's fp8 temporary holds products from before the clear: dropped
			 * (the gemm's first wgmma starts it over) */
			lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s_pk_", Cb->name), "0")->text =
				"// clear = true: the fp8 temporary's products dropped too";
	}
	if (p.instr == GEMM_WGMMA)
		return gemm_wgmma(e, st, &p);
	if (p.instr == GEMM_MFMA || p.instr == GEMM_WMMA)
		return gemm_amd(e, st, &p);
	if (p.instr != GEMM_MMA_SYNC)
		return err_set(e->err, "gemm: %s emission is not implemented yet (use --arch=sm_90 or sm_80)",
			       gemm_instr_name(p.instr));
	/* A from registers: a local A in the plan's A-fragment layout (mma.sync's register order,
	 * so each 32-bit A register is two of its elements), not transposed; B from shared memory.
	 * 8-bit operands (m16n8k32): ldmatrix where the stored operand is K-contiguous (the b16
	 * matrices are the 8-bit fragments' bytes), else byte loads (ldmatrix.trans moves 16-bit
	 * elements: it cannot transpose bytes) */
	areg = A->scope == MEM_LOCAL && !p.trans_a;
	b8 = p.elem_bits == 8;
	ascalar = b8 && p.trans_a && p.a_shared;
	bscalar = b8 && !p.trans_b;
	accok = !b8 || p.ab_type == DT_FP8E4M3 || p.ab_type == DT_FP8E5M2 ? p.acc_type == DT_F32
									     : p.acc_type == DT_I32;
	fp8old = (p.ab_type == DT_FP8E4M3 || p.ab_type == DT_FP8E5M2) && e->t->sm < 89;
	if ((p.trans_a && !p.a_shared) || (p.elem_bits != 16 && !b8) || (!p.a_shared && !areg) ||
	    !p.b_shared || (p.rep_n % 2 && !bscalar) || A->ndim != 2 || B->ndim != 2 || Cb->ndim != 2 ||
	    !accok || fp8old) {
		/* say which of the conditions this gemm misses, so the user knows what to change */
		char why[512];
		size_t at = 0;
		const char *miss[10];
		int nm = 0, i;

		if (p.trans_a && !p.a_shared)
			miss[nm++] = "trans_a with A in registers (give A as M x K)";
		if (p.elem_bits != 16 && !b8)
			miss[nm++] = "operands that are not f16/bf16, i8/u8 or fp8 (tf32 from f32 operands is not "
				     "lowered)";
		if (!p.b_shared)
			miss[nm++] = "operand B in registers (stage it through shared memory)";
		if (p.rep_n % 2 && !bscalar)
			miss[nm++] = "an odd number of n8 tiles per warp (make N per warp a multiple of 16)";
		if (A->ndim != 2 || B->ndim != 2 || Cb->ndim != 2)
			miss[nm++] = "operands that are not 2-D";
		if (!accok)
			miss[nm++] = b8 && (p.ab_type == DT_I8 || p.ab_type == DT_U8) ? "an accumulator that is not i32"
										      : "an accumulator that is not f32";
		if (fp8old)
			miss[nm++] = "fp8 operands on a target before sm_89 (mma.sync .e4m3/.e5m2 needs sm_89)";
		why[0] = 0;
		for (i = 0; i < nm && at < sizeof why; i++) {
			int w = snprintf(why + at, sizeof why - at, "%s%s", i ? ", " : "", miss[i]);

			if (w > 0)
				at += (size_t)w;
		}
		return err_set(e->err, "gemm: not lowered yet for mma.sync: %s; lowered: f16/bf16 "
			       "A[M,K] or A[K,M] from shared memory or A[M,K] from registers, x B[K,N] or "
			       "B[N,K] from shared memory into an f32 accumulator; i8/u8 (into i32) and fp8 "
			       "(into f32, sm_89+) the same", why);
	}
	if (areg && e->frag[st->u.gemm.a.buf] != p.frag_a &&
	    layout_equal(e->frag[st->u.gemm.a.buf], p.frag_a, NULL) != 1)
		return err_set(e->err, "gemm: operand A '%s' is in registers but not in the mma.sync "
			       "A-fragment layout of the gemm plan", A->name);
	if (e->frag[st->u.gemm.c.buf] != p.acc && layout_equal(e->frag[st->u.gemm.c.buf], p.acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	/* ldmatrix reads rows of 16 bytes along the last dimension of each operand it reads */
	{
		const SmemBuf *sa = smem_find(&e->sp, st->u.gemm.a.buf), *sbb = smem_find(&e->sp, st->u.gemm.b.buf);
		int run = b8 ? 16 : 8;

		if (!areg && !ascalar && (!sa || sa->run < run))
			return err_set(e->err, "gemm: shared operand '%s' keeps only %lld consecutive elements "
				       "together in its layout; ldmatrix reads %d (16 bytes) along the last "
				       "dimension", A->name, (long long)(sa ? sa->run : 0), run);
		if (!bscalar && (!sbb || sbb->run < run))
			return err_set(e->err, "gemm: shared operand '%s' keeps only %lld consecutive elements "
				       "together in its layout; ldmatrix reads %d (16 bytes) along the last "
				       "dimension", B->name, (long long)(sbb ? sbb->run : 0), run);
	}
	ik = p.inst_k;
	wm = p.M / p.m_warp;
	wn = p.N / p.n_warp;
	buf_init(&b);
	if (areg)
		lw_comment(e, "gemm %s: mma.sync m16n8k%d, warps %dx%d, %dx%d tiles per warp, A '%s' from "
			   "registers%s", Cb->name, ik, p.m_warp, p.n_warp, p.rep_m, p.rep_n, A->name,
			   bscalar ? ", B by byte loads" : "");
	else
		lw_comment(e, "gemm %s: mma.sync m16n8k%d, warps %dx%d, %dx%d tiles per warp%s", Cb->name, ik,
			   p.m_warp, p.n_warp, p.rep_m, p.rep_n,
			   ascalar && bscalar ? ", A and B by byte loads" : ascalar ? ", A by byte loads"
			   : bscalar ? ", B by byte loads" : "");
	lw_open_block(e, NULL);
	if (areg) /* A's registers need no warp row */
		lw_decl(e, 1, "int", "wn", 0, arena_printf(e->a, "warp / %d", p.m_warp), NULL);
	else
		lw_decl2(e, "wm", arena_printf(e->a, "warp %% %d", p.m_warp), "wn", arena_printf(e->a, "warp / %d", p.m_warp));
	{
		LNode *kl = lw_open_for(e, "kk", "0", arena_printf(e->a, "%lld", (long long)p.K), (p.K + ik - 1) / ik, 1, 0);

		kl->u.loop.step = ik, kl->u.loop.stepped = 1;
	}
	lw_decl(e, 0, "tl_u32", arena_printf(e->a, "af[%d][4]", p.rep_m), 0, NULL, NULL)->u.decl.name2 =
		arena_printf(e->a, "bf[%d][2]", p.rep_n);
	lw_open_for(e, "mi", "0", arena_printf(e->a, "%d", p.rep_m), p.rep_m, 1, 0);
	if (areg && b8) {
		/* the 8-bit A fragment's slots (mma_block_fragment): (k-step * rep_m + mi) * 16 + the
		 * m16n8k32 register order a0..a15, four 8-bit elements per 32-bit register */
		int q;

		for (q = 0; q < 4; q++)
			lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "af[mi][%d]", q),
				  arena_printf(e->a, "(tl_u32)(unsigned char)%s[(kk / 32 * %d + mi) * 16 + %d] | "
					       "(tl_u32)(unsigned char)%s[(kk / 32 * %d + mi) * 16 + %d] << 8 | "
					       "(tl_u32)(unsigned char)%s[(kk / 32 * %d + mi) * 16 + %d] << 16 | "
					       "(tl_u32)(unsigned char)%s[(kk / 32 * %d + mi) * 16 + %d] << 24",
					       A->name, p.rep_m, 4 * q, A->name, p.rep_m, 4 * q + 1, A->name, p.rep_m,
					       4 * q + 2, A->name, p.rep_m, 4 * q + 3));
	} else if (areg) {
		/* the A fragment's slots (mma_block_fragment): (k-step * rep_m + mi) * 8 + the
		 * instruction's register order a0..a7, two 16-bit elements per 32-bit register */
		int q;

		for (q = 0; q < 4; q++)
			lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "af[mi][%d]", q),
				  arena_printf(e->a, "(tl_u32)%s[(kk / 16 * %d + mi) * 8 + %d] | "
					       "(tl_u32)%s[(kk / 16 * %d + mi) * 8 + %d] << 16", A->name,
					       p.rep_m, 2 * q, A->name, p.rep_m, 2 * q + 1));
	} else if (ascalar) {
		/* an 8-bit A stored [K, M]: register q holds A (g + 8 (q % 2), 4 t + 16 (q / 2) + j),
		 * byte j (g = lane / 4, t = lane % 4; PTX m16n8k32 A fragment) */
		lw_open_for(e, "tl_q", "0", "4", 4, 1, 0);
		lw_decl2(e, "tl_gm", arena_printf(e->a, "wm * %lld + mi * 16 + lane / 4 + tl_q %% 2 * 8", (long long)wm),
			 "tl_gk", "kk + lane % 4 * 4 + tl_q / 2 * 16");
		if (bytepack(e, st->u.gemm.a.buf, "af[mi][tl_q]", "tl_gm"))
			goto fail;
		lw_pop(e);
	} else {
		/* the four 8x8 matrices of the m16k16 A tile: (m 0-7, k 0-7), (m 8-15, k 0-7),
		 * (m 0-7, k 8-15), (m 8-15, k 8-15); lane i gives row i % 8 of matrix i / 8. A stored
		 * [M, K]: rows along M, read as they are; trans_a, stored [K, M]: rows along K, read
		 * transposed (.trans: lane t gets stored elements (2 (t % 4) + h, t / 4), which are
		 * A (t / 4, 2 (t % 4) + h), the m16n8k16 A register order). 8-bit: the same 16-byte
		 * rows hold k 0-15 and 16-31, the bytes of the m16n8k32 A registers */
		if (p.trans_a)
			lw_decl2(e, "r", "kk + lane / 16 * 8 + lane % 8", "c",
				 arena_printf(e->a, "wm * %lld + mi * 16 + lane / 8 %% 2 * 8", (long long)wm));
		else
			lw_decl2(e, "r", arena_printf(e->a, "wm * %lld + mi * 16 + lane %% 16", (long long)wm), "c",
				 b8 ? "kk + lane / 16 * 16" : "kk + lane / 16 * 8");
		ia[0] = "r", ia[1] = "c";
		buf_reset(&b);
		lw_smemoff(e, st->u.gemm.a.buf, ia, &b);
		lw_call(e, LC_LDMATRIX, p.trans_a ? "tl_ldmatrix_x4_trans" : "tl_ldmatrix_x4",
			arena_printf(e->a, "af[mi], &%s[%s]", lw_bufptr(e, st->u.gemm.a.buf), buf_str(&b)), NULL);
	}
	lw_pop(e);
	if (bscalar) {
		/* an 8-bit B stored [K, N]: register q of n8 tile ni holds B (4 t + 16 q + j, g), byte j
		 * (PTX m16n8k32 B fragment) */
		lw_open_for(e, "ni", "0", arena_printf(e->a, "%d", p.rep_n), p.rep_n, 1, 0);
		lw_open_for(e, "tl_q", "0", "2", 2, 1, 0);
		lw_decl2(e, "tl_gn", arena_printf(e->a, "wn * %lld + ni * 8 + lane / 4", (long long)wn), "tl_gk",
			 "kk + lane % 4 * 4 + tl_q * 16");
		if (bytepack(e, st->u.gemm.b.buf, "bf[ni][tl_q]", "tl_gn"))
			goto fail;
		lw_pop(e);
		lw_pop(e);
	} else {
		{
			LNode *nl = lw_open_for(e, "nj", "0", arena_printf(e->a, "%d", p.rep_n), (p.rep_n + 1) / 2, 1, 0);

			nl->u.loop.step = 2, nl->u.loop.stepped = 1;
		}
		if (p.trans_b) {
			/* B stored [N, K]: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15,
			 * k 8-15); 8-bit: k 0-15 and 16-31, the bytes of the m16n8k32 B registers */
			lw_decl2(e, "tl_gn", arena_printf(e->a, "wn * %lld + nj * 8 + lane / 16 * 8 + lane %% 8", (long long)wn), "tl_gk",
			      b8 ? "kk + lane / 8 % 2 * 16" : "kk + lane / 8 % 2 * 8");
			ib[0] = "tl_gn", ib[1] = "tl_gk";
		} else {
			lw_decl2(e, "tl_gk", "kk + lane % 16", "tl_gn", arena_printf(e->a, "wn * %lld + nj * 8 + lane / 16 * 8", (long long)wn));
			ib[0] = "tl_gk", ib[1] = "tl_gn";
		}
		lw_decl(e, 0, "tl_u32", "t4", 4, NULL, NULL);
		buf_reset(&b);
		lw_smemoff(e, st->u.gemm.b.buf, ib, &b);
		lw_call(e, LC_LDMATRIX, p.trans_b ? "tl_ldmatrix_x4" : "tl_ldmatrix_x4_trans",
		     arena_printf(e->a, "t4, &%s[%s]", lw_bufptr(e, st->u.gemm.b.buf), buf_str(&b)), NULL);
		lw_assign(e, LM_LOCAL, -1, 0, "bf[nj][0]", "t4[0]");
		lw_assign(e, LM_LOCAL, -1, 0, "bf[nj][1]", "t4[1]");
		lw_assign(e, LM_LOCAL, -1, 0, "bf[nj + 1][0]", "t4[2]");
		lw_assign(e, LM_LOCAL, -1, 0, "bf[nj + 1][1]", "t4[3]");
		lw_pop(e);
	}
	lw_open_for(e, "mi", "0", arena_printf(e->a, "%d", p.rep_m), p.rep_m, 1, 0)->u.loop.nobrace = 1;
	{
		LNode *nl = lw_open_for(e, "ni", "0", arena_printf(e->a, "%d", p.rep_n), p.rep_n, 1, 0);

		nl->u.loop.nobrace = 1, nl->u.loop.pragma_out = 1;
	}
	lw_call(e, LC_MMA, mma_sync_fn(p.ab_type),
	     arena_printf(e->a, "&%s[(mi * %d + ni) * 4], af[mi], bf[ni]", Cb->name, p.rep_n), NULL);
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
	(void)mi, (void)nj, (void)ni;
	buf_free(&b);
	return 0;
fail:
	buf_free(&b);
	return -1;
}

/* ---- gemm on AMD: MFMA (wave64) or WMMA (wave32) 16x16x16 over the plan --------------- */

/* do runs of n elements along K of operand buf (K the last dim when xfirst, else the
 * first) stay contiguous and n-aligned in its LDS layout? then they load as one vector */
static int
kcontig(Em *e, int buf, int xfirst, int n)
{
	const SmemBuf *sb = smem_find(&e->sp, buf);
	const IrBuffer *B = &e->k->bufs[buf];
	int64_t vals[IEXPR_NVARS] = {0}, o0, o, x, k;
	int kd = xfirst ? 1 : 0, j;
	IExpr *lin;

	if (!sb || B->ndim != 2 || sb->layout->nin != 2 || !(lin = layout_linear_index(e->a, sb->layout)))
		return 0;
	if (B->dims[kd].c % n)
		return 0;
	{
		/* proved from the digits of the linear index (the K-runs of n are vector runs) */
		int64_t shape[2] = {B->dims[0].c, B->dims[1].c};
		static const int ids[2] = {0, 1};

		if (!lw_reference_walks && layout_aff_vecrun_(shape, ids, 2, &lin, 1, kd, n, 0))
			return 1;
	}
	for (x = 0; x < B->dims[1 - kd].c; x++)
		for (k = 0; k < B->dims[kd].c; k += n) {
			vals[1 - kd] = x, vals[kd] = k;
			if (iexpr_eval(lin, vals, &o0, NULL) || o0 % n)
				return 0;
			for (j = 1; j < n; j++) {
				vals[kd] = k + j;
				if (iexpr_eval(lin, vals, &o, NULL) || o != o0 + j)
					return 0;
			}
		}
	return 1;
}

/* one operand's registers for a k-step: lane row/col x = base + i * 16 + lane % 16,
 * k = kk + (MFMA) lane / 16 * 4 + v or (WMMA) v, read from LDS per the fragment:
 * one 8-byte (MFMA) or two 16-byte (WMMA) reads where the K-runs are contiguous,
 * else element by element; rep > 0: reg[i] for i < rep, else reg for the enclosing i
 * (x, k, i, v are tl_gx, tl_gk, tl_gi, tl_gv in the code: no user name spells them) */
static void
amdload(Em *e, const GemmPlan *p, int buf, int xfirst, const char *reg, int rep, int64_t wt,
	const char *w)
{
	int mfma = p->instr == GEMM_MFMA, nv = mfma ? 4 : 16, vec = kcontig(e, buf, xfirst, mfma ? 4 : 8);
	char *ix[2];
	Buf b, b2;

	if (rep)
		lw_open_for(e, "tl_gi", "0", arena_printf(e->a, "%d", rep), rep, 1, 0);
	if (!vec)
		lw_open_for(e, "tl_gv", "0", arena_printf(e->a, "%d", nv), nv, 1, 0);
	else
		lw_open_block(e, NULL);
	lw_decl2(e, "tl_gx", arena_printf(e->a, "%s * %lld + tl_gi * 16 + lane %% 16", w, (long long)wt), "tl_gk",
	      arena_printf(e->a, "kk + %s", mfma ? (vec ? "lane / 16 % 4 * 4" : "lane / 16 % 4 * 4 + tl_gv") : vec ? "0" : "tl_gv"));
	ix[0] = xfirst ? "tl_gx" : "tl_gk", ix[1] = xfirst ? "tl_gk" : "tl_gx";
	buf_init(&b);
	buf_init(&b2);
	lw_smemoff(e, buf, ix, &b);
	if (!vec) {
		lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s%s[tl_gv]", reg, rep ? "[tl_gi]" : ""),
		       arena_printf(e->a, "%s[%s]", lw_bufptr(e, buf), buf_str(&b)));
	} else if (mfma) {
		lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s%s", reg, rep ? "[tl_gi]" : ""),
		       arena_printf(e->a, "tl_ld_u16x4(&%s[%s])", lw_bufptr(e, buf), buf_str(&b)));
	} else {
		ix[xfirst ? 1 : 0] = "(tl_gk + 8)";
		lw_smemoff(e, buf, ix, &b2);
		lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s%s", reg, rep ? "[tl_gi]" : ""),
		       arena_printf(e->a, "tl_ld_u16x16(&%s[%s], &%s[%s])", lw_bufptr(e, buf), buf_str(&b),
				    lw_bufptr(e, buf), buf_str(&b2)));
	}
	buf_free(&b);
	buf_free(&b2);
	lw_pop(e);
	if (rep)
		lw_pop(e);
}

static int
gemm_amd(Em *e, const IrStmt *st, const GemmPlan *p)
{
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	int mfma = p->instr == GEMM_MFMA, nv = mfma ? 4 : 16, nc = mfma ? 4 : 8;
	const char *ty = p->ab_type == DT_BF16 ? "bf16" : "f16";

	if (p->elem_bits != 16 || !p->a_shared || !p->b_shared || A->ndim != 2 || B->ndim != 2 ||
	    Cb->ndim != 2 || p->acc_type != DT_F32)
		return err_set(e->err, "gemm: %s lowers only f16/bf16 operands from shared memory into an "
			       "f32 accumulator", gemm_instr_name(p->instr));
	if (e->frag[st->u.gemm.c.buf] != p->acc && layout_equal(e->frag[st->u.gemm.c.buf], p->acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	lw_comment(e, "gemm %s: %s 16x16x16 (wave%d), warps %dx%d, %dx%d tiles per warp", Cb->name,
		gemm_instr_name(p->instr), mfma ? 64 : 32, p->m_warp, p->n_warp, p->rep_m, p->rep_n);
	lw_open_block(e, NULL);
	lw_decl2(e, "wm", arena_printf(e->a, "warp %% %d", p->m_warp), "wn", arena_printf(e->a, "warp / %d", p->m_warp));
	/* WMMA operands take 8 registers per lane and instruction: unrolling the k-steps
	 * as well would keep two steps' operands and LDS addresses live and spill */
	{
		LNode *kl = lw_open_for(e, "kk", "0", arena_printf(e->a, "%lld", (long long)p->K), (p->K + 15) / 16,
				     mfma, 0);

		kl->u.loop.rolled = !mfma, kl->u.loop.step = 16, kl->u.loop.stepped = 1;
	}
	/* operand registers: nv 16-bit patterns per lane and instruction, packed in a
	 * vector; B for the warp's whole N, A one M-instruction at a time */
	lw_decl(e, 0, arena_printf(e->a, "tl_u16x%d", nv), "bf", p->rep_n, NULL, NULL);
	/* B [K, N] (trans_b: stored [N, K]); A [M, K] (trans_a: stored [K, M]) */
	amdload(e, p, st->u.gemm.b.buf, p->trans_b, "bf", p->rep_n, p->N / p->n_warp, "wn");
	lw_open_for(e, "tl_gi", "0", arena_printf(e->a, "%d", p->rep_m), p->rep_m, 1, 0);
	lw_decl(e, 0, arena_printf(e->a, "tl_u16x%d", nv), "af", 0, NULL, NULL);
	amdload(e, p, st->u.gemm.a.buf, !p->trans_a, "af", 0, p->M / p->m_warp, "wm");
	lw_open_for(e, "ni", "0", arena_printf(e->a, "%d", p->rep_n), p->rep_n, 1, 0)->u.loop.nobrace = 1;
	lw_call(e, LC_MMA, arena_printf(e->a, "tl_%s_%s_16x16x16", mfma ? "mfma" : "wmma", ty),
	     arena_printf(e->a, "&%s[(tl_gi * %d + ni) * %d], af, bf[ni]", Cb->name, p->rep_n, nc), NULL);
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
	return 0;
}

/* ---- kernels ------------------------------------------------------------------------ */

/* the first gemm whose accumulator is buffer buf */
const IrStmt *
lw_accgemm(const IrStmt *s, int buf)
{
	const IrStmt *g;

	for (; s; s = s->next) {
		if (s->kind == S_GEMM && s->u.gemm.c.buf == buf)
			return s;
		g = s->kind == S_PIPELINE ? lw_accgemm(s->u.pipe.body, buf)
		    : s->kind == S_FOR ? lw_accgemm(s->u.loop.body, buf)
		    : s->kind == S_IF ? lw_accgemm(s->u.cond.then, buf) : NULL;
		if (g)
			return g;
	}
	return NULL;
}
