/*
 * lower_reduce.c: reduce. Local -> local through the reduce plan
 * (lower/reduce_plan.c): per-thread partials, xor shuffles within a warp, an
 * exchange through shared memory across warps; a shared source element by
 * element.
 */
#include "lw.h"

/* ---- reduce: per-thread partials, warp shuffles, shared memory across warps -------- */

/* the identity of op in calculation type t (C text); NULL if t is not reducible */
const char *
lw_redident(ReduceOp op, DType t)
{
	int f = dtype_is_float(t);

	if (op == RED_SUM || op == RED_ABSMAX)
		return t == DT_F64 ? "0.0" : f ? "0.0f" : "0";
	if (t == DT_F32)
		return op == RED_MAX ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
	if (t == DT_F64)
		return op == RED_MAX ? "__longlong_as_double(0xfff0000000000000ULL)"
				     : "__longlong_as_double(0x7ff0000000000000ULL)";
	if (t == DT_I32)
		return op == RED_MAX ? "(-2147483647 - 1)" : "2147483647";
	if (t == DT_INT)
		return op == RED_MAX ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
	return NULL;
}

/*
 * The type a reduce of src elements into dst elements is calculated in (*ct), or -1 when it is
 * not lowered (no identity, an integer source into a float destination or the reverse).
 * Floats: f32 for f16/bf16/fp8/f32 operands, f64 when either is f64 (one rounding into an f32
 * destination, as the semantics' sum in double). Integers (i8, u8, i32): i32, i64 when either
 * is i64: sums wrap modulo 2^32, which is the exact sum wherever it fits the destination (the
 * semantics leave the rest undefined); max, min and absmax are exact.
 */
int
lw_redtype(ReduceOp op, DType src, DType dst, DType *ct)
{
	int fs = dtype_is_float(src), fd = dtype_is_float(dst);

	if (fs != fd || src == DT_BOOL || dst == DT_BOOL)
		return -1;
	if (fs)
		*ct = src == DT_F64 || dst == DT_F64 ? DT_F64 : DT_F32;
	else
		*ct = src == DT_INT || dst == DT_INT ? DT_INT : DT_I32;
	return lw_redident(op, *ct) ? 0 : -1;
}

/* op(a, b) of two partials in calculation type t */
static char *
redop(Em *e, ReduceOp op, DType t, const char *a, const char *b)
{
	const char *mx = t == DT_F32 ? "fmaxf" : t == DT_F64 ? "fmax" : "max";
	const char *mn = t == DT_F32 ? "fminf" : t == DT_F64 ? "fmin" : "min";

	if (op == RED_SUM)
		return arena_printf(e->a, "%s + %s", a, b);
	return arena_printf(e->a, "%s(%s, %s)", op == RED_MIN ? mn : mx, a, b);
}

/* the value one source element contributes (absmax: its magnitude) */
static char *
redval(Em *e, ReduceOp op, DType t, const char *v)
{
	if (op != RED_ABSMAX)
		return (char *)v;
	return arena_printf(e->a, "%s(%s)", t == DT_F32 ? "fabsf" : t == DT_F64 ? "fabs" : "abs", v);
}

/* reduce from shared memory: a local destination is folded slot by slot by every
 * thread that holds the slot's element; a shared one by one thread per element,
 * reading the source's row (dim) from shared memory. A local source (why: the reason
 * its reduce plan failed; NULL for a shared destination) is copied to shared memory
 * first (lower_stage.c) */
static int
smemreduce(Em *e, const IrStmt *st, const char *why)
{
	static const char *const gnames[IEXPR_NVARS] = {"g", "tid"};
	int sb = st->u.reduce.src, db = st->u.reduce.dst, dim = st->u.reduce.dim, d, dd, open;
	const IrBuffer *SB = &e->k->bufs[sb], *DB = &e->k->bufs[db];
	ReduceOp op = st->u.reduce.op;
	DType ct = DT_F32;
	int noty = lw_redtype(op, SB->dtype, DB->dtype, &ct);
	const char *ty = lw_ctype(ct), *ident = lw_redident(op, ct);
	int64_t S = SB->dims[dim].c, NY = 1, T = e->k->threads, div;
	int keep = DB->ndim == SB->ndim;
	char *idx[IR_MAXDIM], *dc[IR_MAXDIM], *v, *old, *res, *stg = NULL;
	Buf b;

	if (noty)
		return err_set(e->err, "reduce: element types %s -> %s are not lowered",
			       dtype_name(SB->dtype), dtype_name(DB->dtype));
	for (d = 0; d < DB->ndim; d++)
		NY *= DB->dims[d].c;
	/* a local source into a shared destination: one thread per result reads its row from a
	 * copy of the source in shared memory */
	if (why || SB->scope != MEM_SHARED) {
		if (!(stg = lw_stage(e, sb, why ? arena_printf(e->a, "by a reduce that shuffles cannot combine (%s)", why)
					   : arena_printf(e->a, "by a reduce into shared '%s'", DB->name))))
			return -1;
	} else {
		lw_barrier(e);
	}
	lw_open_block(e, arena_printf(e->a, "reduce %s %s -> %s dim %d from shared memory", reduceop_name(op),
				   SB->name, DB->name, dim));
	if (DB->scope == MEM_LOCAL) {
		/* the holders of the destination's elements (a fragment over fewer threads than the
		 * block's: the others hold nothing, and their coordinates would address shared
		 * memory past the source; a padded one's pairs past dim 0 hold nothing) */
		if (e->frag[db]->nin != DB->ndim)
			return err_set(e->err, "reduce %s -> %s: the layout of '%s' does not match its shape",
				       SB->name, DB->name, DB->name);
		open = lw_slots_open(e, db, "g", gnames, 0, dc);
	} else {
		lw_open_for(e, "it", "0", arena_printf(e->a, "%lld", (long long)((NY + T - 1) / T)), (NY + T - 1) / T, 0, 0);
		lw_decl(e, 1, "int", "q", 0, arena_printf(e->a, "tid + it * %lld", (long long)T), NULL);
		for (d = DB->ndim - 1, div = 1; d >= 0; div *= DB->dims[d].c, d--)
			lw_decl(e, 1, "int", arena_printf(e->a, "c%d", d), 0,
			     arena_printf(e->a, "q / %lld %% %lld", (long long)div, (long long)DB->dims[d].c), NULL);
		open = 1;
		if (NY % T) {
			lw_open_if(e, arena_printf(e->a, "q < %lld", (long long)NY), 0, 1);
			open++;
		}
		for (d = 0; d < DB->ndim; d++)
			dc[d] = arena_printf(e->a, "c%d", d);
	}
	for (d = 0, dd = 0; d < SB->ndim; d++) {
		if (d == dim) {
			idx[d] = (char *)"tl_k";
			dd += keep;
			continue;
		}
		idx[d] = dc[dd++];
	}
	buf_init(&b);
	if (stg) {
		buf_printf(&b, "%s[%s]", stg, lw_stage_index(e, sb, idx));
	} else {
		buf_printf(&b, "%s[", lw_bufptr(e, sb));
		lw_smemoff(e, sb, idx, &b);
		buf_putc(&b, ']');
	}
	v = redval(e, op, ct, lw_conv(e, buf_str(&b), SB->dtype, ct));
	lw_decl(e, 0, ty, "tl_a", 0, ident, NULL);
	lw_open_for(e, "tl_k", "0", arena_printf(e->a, "%lld", (long long)S), S, 0, 0)->u.loop.nobrace = 1;
	lw_assign(e, LM_LOCAL, -1, 0, "tl_a", redop(e, op, ct, "tl_a", v));
	lw_pop(e);
	buf_reset(&b);
	if (DB->scope == MEM_LOCAL) {
		buf_printf(&b, "%s[g]", DB->name);
	} else {
		buf_printf(&b, "%s[", lw_bufptr(e, db));
		lw_smemoff(e, db, dc, &b);
		buf_putc(&b, ']');
	}
	old = lw_conv(e, buf_str(&b), DB->dtype, ct);
	res = st->u.reduce.clear ? "tl_a" : redop(e, op, ct, old, "tl_a");
	lw_assign(e, lw_memof(DB), db, dtype_bytes(DB->dtype), buf_str(&b), lw_conv(e, res, ct, DB->dtype));
	buf_free(&b);
	while (open--)
		lw_pop(e);
	lw_pop(e);
	if (DB->scope == MEM_SHARED)
		lw_barrier(e);
	return 0;
}

int
lw_reduce(Em *e, const IrStmt *st)
{
	const IrKernel *k = e->k;
	int sb = st->u.reduce.src, db = st->u.reduce.dst, id = e->tmp++, kb, nw = 0, i;
	const IrBuffer *SB = &k->bufs[sb], *DB = &k->bufs[db];
	ReduceOp op = st->u.reduce.op;
	DType ct = DT_F32;
	int noty = lw_redtype(op, SB->dtype, DB->dtype, &ct);
	const char *ty = lw_ctype(ct), *ident = lw_redident(op, ct);
	char r[32], red[32], *v, *rep = NULL;
	unsigned lanes, warps, full;
	RedPlan p;
	const RedPlan *pp;
	int64_t s, NC, m, wl[32];
	int W, lb;

	if (SB->scope != MEM_LOCAL || DB->scope != MEM_LOCAL)
		return smemreduce(e, st, NULL);
	if (noty)
		return err_set(e->err, "reduce: element types %s -> %s are not lowered",
			       dtype_name(SB->dtype), dtype_name(DB->dtype));
	/* the plan of plan-reduces (plan_reduce.c) */
	if (!(pp = lw_redplan(e, st)))
		return -1;
	if (pp->smem)
		return smemreduce(e, st, pp->smem);
	p = *pp;
	/* lane bits below the target's warp size combine by shuffles, warp bits in smem */
	W = e->t->warp_size, lb = W == 64 ? 6 : 5;
	lanes = p.mask & (unsigned)(W - 1), warps = p.mask & ~(unsigned)(W - 1);
	full = p.T >= 32 ? 0xffffffffu : (unsigned)((1ull << p.T) - 1);
	snprintf(r, sizeof r, "tl_r%d", id);
	snprintf(red, sizeof red, "tl_red%d", id);
	lw_open_block(e, arena_printf(e->a, "reduce %s %s -> %s dim %d: %lld slots into %lld, shuffles xor 0x%x, "
				   "warps xor 0x%x", reduceop_name(op), SB->name, DB->name, st->u.reduce.dim,
				   (long long)p.S, (long long)p.SG, lanes, warps >> lb));
	lw_decl(e, 0, ty, arena_strdup(e->a, r), p.SG, NULL, NULL);
	lw_open_for(e, "g", "0", arena_printf(e->a, "%lld", (long long)p.SG), p.SG, 1, 0)->u.loop.nobrace = 1;
	lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s[g]", r), ident);
	lw_pop(e);
	if (op == RED_SUM && e->frag[sb]->rep > 1)
		rep = lw_ixstr(e, e->coord[sb][e->frag[sb]->nin], lw_slotnames);
	v = lw_conv(e, arena_printf(e->a, "%s[s]", SB->name), SB->dtype, ct);
	v = redval(e, op, ct, rep ? arena_printf(e->a, "(%s == 0 ? %s : (%s)0)", rep, v, ty) : v);
	/* a padded source: its pairs past dim 0 add the identity (plan_partition.c) */
	if (e->pad[sb])
		v = arena_printf(e->a, "(%s < %lld ? %s : %s)", lw_ixstr(e, e->coord[sb][0], lw_slotnames),
				 (long long)e->frag[sb]->in_shape[0], v, ident);
	if (p.gx) {
		char *gx = lw_ixstr(e, p.gx, lw_slotnames), *ri = arena_printf(e->a, "%s[%s]", r, gx);

		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)p.S), p.S, 1, 0)->u.loop.nobrace = 1;
		lw_assign(e, LM_LOCAL, -1, 0, ri, redop(e, op, ct, ri, v));
		lw_pop(e);
	} else {
		for (s = 0; s < p.S; s++) {
			char *ri, *vs;

			if (p.gs[s] < 0)
				continue;
			ri = arena_printf(e->a, "%s[%d]", r, p.gs[s]);
			vs = lw_conv(e, arena_printf(e->a, "%s[%lld]", SB->name, (long long)s), SB->dtype, ct);
			if (rep)
				vs = arena_printf(e->a, "(%s == 0 ? %s : (%s)0)", lw_ixstr(e,
						  iexpr_subst(e->a, e->coord[sb][e->frag[sb]->nin],
							      (IExpr *[IEXPR_NVARS]){iexpr_const(e->a, s)}, NULL),
						  lw_slotnames), vs, ty);
			vs = redval(e, op, ct, vs);
			if (e->pad[sb])
				vs = arena_printf(e->a, "(%s < %lld ? %s : %s)", lw_ixstr(e,
						  iexpr_subst(e->a, e->coord[sb][0],
							      (IExpr *[IEXPR_NVARS]){iexpr_const(e->a, s)}, NULL),
						  lw_slotnames), (long long)e->frag[sb]->in_shape[0], vs, ident);
			lw_assign(e, LM_LOCAL, -1, 0, ri, redop(e, op, ct, ri, vs));
		}
	}
	if (lanes) {
		lw_open_for(e, "g", "0", arena_printf(e->a, "%lld", (long long)p.SG), p.SG, 1, 0);
		for (m = 1; m < W; m <<= 1)
			if (lanes & m)
				lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s[g]", r),
				       redop(e, op, ct, arena_printf(e->a, "%s[g]", r),
					     arena_printf(e->a, "__shfl_xor_sync(0x%x, %s[g], %lld)", full, r,
							  (long long)m)));
		lw_pop(e);
	}
	if (warps) {
		/* lanes 0..2^kb-1 hold the same partials: one slot of shared memory per group */
		for (kb = 0; kb < lb && (lanes >> kb & 1); kb++)
			;
		NC = ((p.T - 1) >> kb) + 1;
		for (m = 0; m < p.T; m += W)
			if ((m & ~(int64_t)warps) == 0)
				wl[nw++] = m;
		lw_decl(e, 0, arena_printf(e->a, "static __shared__ %s", ty), arena_strdup(e->a, red), p.SG * NC, NULL, NULL);
		e->static_smem += p.SG * NC * dtype_bytes(ct);
		if (kb)
			lw_open_if(e, arena_printf(e->a, "(tid & %d) == 0", (1 << kb) - 1), 0, 1);
		lw_open_for(e, "g", "0", arena_printf(e->a, "%lld", (long long)p.SG), p.SG, 1, 0)->u.loop.nobrace = 1;
		lw_assign(e, LM_SHARED, -1, dtype_bytes(ct), arena_printf(e->a, "%s[g * %lld + (tid >> %d)]", red,
									(long long)NC, kb), arena_printf(e->a, "%s[g]", r));
		lw_pop(e);
		if (kb)
			lw_pop(e);
		lw_barrier(e);
		lw_open_for(e, "g", "0", arena_printf(e->a, "%lld", (long long)p.SG), p.SG, 1, 0);
		lw_decl(e, 0, ty, "tl_v", 0, arena_printf(e->a, "%s[g * %lld + (tid >> %d)]", red, (long long)NC, kb), NULL);
		for (i = 1; i < nw; i++)
			lw_assign(e, LM_LOCAL, -1, 0, "tl_v", redop(e, op, ct, "tl_v",
								 arena_printf(e->a, "%s[g * %lld + ((tid ^ %lld) >> %d)]", red,
									      (long long)NC, (long long)wl[i], kb)));
		lw_assign(e, LM_LOCAL, -1, 0, arena_printf(e->a, "%s[g]", r), "tl_v");
		lw_pop(e);
		lw_barrier(e);
	}
	lw_open_for(e, "g", "0", arena_printf(e->a, "%lld", (long long)p.SG), p.SG, 1, 0)->u.loop.nobrace = 1;
	if (st->u.reduce.clear)
		lw_assign(e, LM_LOCAL, db, 0, arena_printf(e->a, "%s[g]", DB->name),
		       lw_conv(e, arena_printf(e->a, "%s[g]", r), ct, DB->dtype));
	else
		lw_assign(e, LM_LOCAL, db, 0, arena_printf(e->a, "%s[g]", DB->name),
		       lw_conv(e, redop(e, op, ct, lw_conv(e, arena_printf(e->a, "%s[g]", DB->name), DB->dtype, ct),
				     arena_printf(e->a, "%s[g]", r)), ct, DB->dtype));
	lw_pop(e);
	lw_pop(e);
	return 0;
}
