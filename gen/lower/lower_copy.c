/*
 * lower_copy.c: copies. Registers <-> memory through the fragment's slots
 * (vectorized up to 16 bytes where the fragment holds aligned runs, zeros
 * past the tensor's edge), global <-> shared cooperatively in 16-byte chunks
 * (cp.async with zero fill into shared memory), and register -> register
 * where every thread holds what it receives.
 */
#include "lw.h"

/* one element between local slot `slot` (C text) of buffer lbuf and memory region mr at the
 * coordinates cs, converted to the destination's type */
static void
regelem(Em *e, const Region *mr, int lbuf, char *const *cs, int nk, const char *slot, int to_local, AtomicOp op)
{
	const IrBuffer *L = &e->k->bufs[lbuf], *Mb = &e->k->bufs[mr->buf];
	char *mem = arena_printf(e->a, "*(%s)", lw_memaddr(e, mr, cs, nk));
	char *reg = arena_printf(e->a, "%s[%s]", L->name, slot);

	if (op != AT_NONE)
		lw_atomic_elem(e, op, Mb, mr->buf, lw_memaddr(e, mr, cs, nk), lw_conv(e, reg, L->dtype, Mb->dtype));
	else if (to_local)
		lw_assign(e, LM_LOCAL, lbuf, dtype_bytes(Mb->dtype), reg, lw_conv(e, mem, Mb->dtype, L->dtype));
	else
		lw_assign(e, lw_memof(Mb), mr->buf, dtype_bytes(Mb->dtype), mem, lw_conv(e, reg, L->dtype, Mb->dtype));
}

/* copy between a local buffer (whole) and a memory region; to_local gives the direction */
static int
regcopy(Em *e, Buf *chk, const IrStmt *st, int to_local)
{
	const Region *lr = to_local ? &st->u.copy.dst : &st->u.copy.src;
	const Region *mr = to_local ? &st->u.copy.src : &st->u.copy.dst;
	const IrBuffer *L = &e->k->bufs[lr->buf], *Mb = &e->k->bufs[mr->buf];
	const Fragment *F = e->frag[lr->buf];
	IExpr **co = e->coord[lr->buf];
	int64_t S = e->slots[lr->buf];
	int d, k, nk, v, eb = dtype_bytes(Mb->dtype), nn = F->nin;
	char *cs[LAYOUT_MAXDIM], *g, *vals[16], *vc, **c2;
	int L_buf = lr->buf;
	LNode *gi = NULL, *vi = NULL;
	const CopyPlan *cp;
	AtomicOp op = to_local ? AT_NONE : st->u.copy.atomic;
	Buf b;

	for (d = 0; d < lr->ndim; d++) {
		int64_t c;

		if (!ir_is_const(lr->off[d], &c) || c || lr->ext[d] != L->dims[d].c)
			return err_set(e->err, "copy: local '%s' must be copied whole", L->name);
	}
	/* copy(..., op = add|max|min): each element an atomic update of the destination's */
	if (op != AT_NONE && lw_atomic_check(e, st, op, Mb->dtype))
		return -1;
	/* the width plan-vectors chose (plan_vector.c) */
	if (!(cp = lw_copyplan(e, st)))
		return -1;
	v = cp->v;
	if ((vc = lw_veccond(e, chk, mr, v)) == lw_scalar_only)
		v = 1, vc = NULL;
	{
		LNode *fl = lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), (S + v - 1) / v, 1, 0);

		fl->u.loop.step = v, fl->u.loop.stepped = 1;
	}
	buf_init(&b);
	for (d = 0; d < nn; d++) {
		cs[d] = arena_printf(e->a, "c%d", d);
		lw_decl_ix(e, cs[d], co[d], lw_slotnames);
	}
	/* the nest's loop coordinates are the local buffer's non-unit dims */
	for (k = 0, d = 0; d < nn; d++)
		if (L->dims[d].c != 1)
			cs[k++] = cs[d];
	nk = k;
	g = lw_regguard(e, mr, cs, nk, v);
	/* a padded layout: the pairs past dim 0 hold nothing (plan_partition.c) */
	if (e->pad[L_buf])
		g = arena_printf(e->a, "%s%sc0 < %lld", g ? g : "", g ? " && " : "", (long long)F->in_shape[0]);
	/* a fragment over fewer threads than the block's: the others hold nothing */
	if (F->nthreads < e->k->threads)
		g = arena_printf(e->a, "%s%stid < %lld", g ? g : "", g ? " && " : "", (long long)F->nthreads);
	if (!to_local && F->rep > 1)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "",
				 lw_ixstr(e, co[nn], lw_slotnames));
	if (g)
		gi = lw_open_if(e, g, 0, 1);
	if (vc)
		vi = lw_open_if(e, vc, 0, 1);
	if (v == 1) {
		regelem(e, mr, L_buf, cs, nk, "s", to_local, op);
	} else if (to_local) {
		int words = v * eb / 4;

		{
			LNode *n = lw_add(e, L_LOAD);

			n->u.load.vtype = lw_vtype(v * eb), n->u.load.name = "r";
			n->u.load.addr = lw_memaddr(e, mr, cs, nk), n->u.load.mem = lw_memof(Mb);
			n->u.load.bytes = v * eb, n->u.load.buf = mr->buf;
		}
		for (k = 0; k < v; k++)
			lw_assign(e, LM_LOCAL, L_buf, eb, arena_printf(e->a, "%s[s + %d]", L->name, k),
			       lw_conv(e, lw_unpack(e, Mb->dtype, "r", words, k), Mb->dtype, L->dtype));
	} else {
		int words = v * eb / 4, w;

		for (k = 0; k < v; k++)
			vals[k] = lw_conv(e, arena_printf(e->a, "%s[s + %d]", L->name, k), L->dtype, Mb->dtype);
		buf_reset(&b);
		if (op != AT_NONE) {
			/* the vector's elements by the widest atomics the target has */
			lw_atomic_vec(e, op, Mb, mr->buf, lw_memaddr(e, mr, cs, nk), vals, v);
		} else if (words == 1) {
			lw_packword(&b, Mb->dtype, vals, 0);
		} else {
			buf_printf(&b, "make_uint%d(", words);
			for (w = 0; w < words; w++) {
				if (w)
					buf_puts(&b, ", ");
				lw_packword(&b, Mb->dtype, vals, w);
			}
			buf_putc(&b, ')');
		}
		if (op == AT_NONE)
			lw_assign(e, lw_memof(Mb), mr->buf, v * (int)dtype_bytes(Mb->dtype),
			       arena_printf(e->a, "*(%s *)(%s)", lw_vtype(v * eb), lw_memaddr(e, mr, cs, nk)), buf_str(&b));
	}
	if (vc) {
		/* rows not of whole vectors: element by element, each guarded */
		char *g2;
		LNode *gi2 = NULL;

		lw_open_else(e, vi, NULL);
		c2 = lw_lanecs(e, cs, nk);
		g2 = lw_regguard(e, mr, c2, nk, 1);
		lw_open_for(e, "tl_k", "0", arena_printf(e->a, "%d", v), v, 1, 0)->u.loop.nobrace = 1;
		if (g2)
			gi2 = lw_open_if(e, g2, 1, 1);
		regelem(e, mr, L_buf, c2, nk, "s + tl_k", to_local, op);
		if (g2 && to_local) {
			/* past the tensor's edge a copy reads zero (docs/semantics.md) */
			lw_open_else(e, gi2, NULL);
			lw_assign(e, LM_LOCAL, L_buf, eb, arena_printf(e->a, "%s[s + tl_k]", L->name),
			       arena_printf(e->a, "(%s)0", lw_ctype(L->dtype)));
		}
		if (g2)
			lw_pop(e);
		lw_pop(e);
		lw_pop(e);
	}
	if (g) {
		if (to_local) {
			/* past the tensor's edge a copy reads zero (docs/semantics.md) */
			lw_open_else(e, gi, NULL);
			lw_open_for(e, "tl_k", "0", arena_printf(e->a, "%d", v), v, 1, 0)->u.loop.nobrace = 1;
			lw_assign(e, LM_LOCAL, L_buf, eb, arena_printf(e->a, "%s[s + tl_k]", L->name),
			       arena_printf(e->a, "(%s)0", lw_ctype(L->dtype)));
			lw_pop(e);
		}
		lw_pop(e);
	}
	lw_pop(e);
	buf_free(&b);
	return 0;
}

/* the C names of a chunk's coordinates in a copy of nn dims between memories: c; r, c; or
 * tl_row0, ..., c (the plan's guards and the lowering's declarations) */
void
lw_chunknames(Em *e, int nn, char **cs)
{
	int d;

	for (d = 0; d < nn - 1; d++)
		cs[d] = nn == 2 ? "r" : arena_printf(e->a, "tl_row%d", d);
	cs[nn - 1] = "c";
}

/* cooperative copy between global and shared memory, 16-byte chunks where possible */
int
lw_tilecopy(Em *e, Buf *chk, const IrStmt *st)
{
	const Region *sr = &st->u.copy.src, *dr = &st->u.copy.dst;
	const IrBuffer *SB = &e->k->bufs[sr->buf], *DB = &e->k->bufs[dr->buf];
	int64_t ext[IR_MAXDIM], R, C, chunks, T = e->k->threads, iters;
	int nn = nest_shape(st, ext), v, async;
	char *cs[IR_MAXDIM], *gs, *gd, *g, *vc, **c2, *qg;
	LNode *vi = NULL;
	const CopyPlan *cp;
	CopyInstr instr;
	int d;

	for (R = 1, d = 0; d < nn - 1; d++)
		R *= ext[d];
	C = ext[nn - 1];
	/* the width and instruction of plan-vectors and plan-copies (plan_vector.c, plan_copy.c);
	 * element by element where the rows are not whole vectors at run time */
	if (!(cp = lw_copyplan(e, st)))
		return -1;
	v = cp->v;
	if ((vc = lw_veccond(e, chk, SB->scope == MEM_GLOBAL ? sr : dr, v)) == lw_scalar_only)
		v = 1, vc = NULL;
	chunks = R * C / v;
	iters = (chunks + T - 1) / T;
	/* element by element, a rolled loop: unrolled, the loads of the whole tile would be
	 * hoisted and held in registers */
	{
		LNode *fl = lw_open_for(e, "it", "0", arena_printf(e->a, "%lld", (long long)iters), iters,
				     !(v == 1 && e->scalar), 0);

		fl->u.loop.rolled = v == 1 && e->scalar;
	}
	lw_decl(e, 1, "int", "q", 0, arena_printf(e->a, "tid + it * %lld", (long long)T), NULL);
	lw_chunknames(e, nn, cs);
	if (nn <= 2) {
		lw_decl2(e, "r", arena_printf(e->a, "q / %lld", (long long)(C / v)), "c",
			 arena_printf(e->a, "q %% %lld * %d", (long long)(C / v), v));
	} else {
		/* rank 3 and more: the chunk index q in row-major order over (r0, ..., c / v) */
		for (d = 0; d < nn - 1; d++) {
			int64_t inner = C / v;
			int k;

			for (k = d + 1; k < nn - 1; k++)
				inner *= ext[k];
			lw_decl(e, 1, "int", cs[d], 0, d ? arena_printf(e->a, "q / %lld %% %lld", (long long)inner,
								       (long long)ext[d])
							 : arena_printf(e->a, "q / %lld", (long long)inner), NULL);
		}
		lw_decl(e, 1, "int", "c", 0, arena_printf(e->a, "q %% %lld * %d", (long long)(C / v), v), NULL);
	}
	gs = lw_regguard(e, sr, cs, nn, v);
	gd = lw_regguard(e, dr, cs, nn, v);
	g = gs && gd ? arena_printf(e->a, "%s && %s", gs, gd) : gs ? gs : gd;
	qg = chunks % T ? arena_printf(e->a, "q < %lld", (long long)chunks) : NULL;
	/* the scalar body of rows that are not whole vectors: the scalar form of the instruction.
	 * HIP: tilec_hip.h's tl_cp_async16(_zfill) are synchronous 16-byte copies (zeros past the
	 * edge) */
	instr = v == cp->v ? cp->instr : lw_tile_instr(e, st, v, gs != NULL, gd != NULL);
	async = instr == CPI_CP_ASYNC;
	if (vc)
		vi = lw_open_if(e, vc, 0, 1);
	if (async) {
		/* out-of-range chunks are zero-filled (src-size 0); chunks past the tile are skipped */
		LNode *n;

		if (qg)
			lw_open_if(e, qg, 1, 1);
		n = lw_add(e, L_ASYNC_COPY);
		n->u.acp.dst = lw_memaddr(e, dr, cs, nn), n->u.acp.src = lw_memaddr(e, sr, cs, nn);
		n->u.acp.pred = g, n->u.acp.bytes = 16, n->u.acp.dbuf = dr->buf, n->u.acp.sbuf = sr->buf;
		if (qg)
			lw_pop(e);
	} else if (instr == CPI_VECTOR_ZFILL || instr == CPI_SCALAR_ZFILL) {
		/* zeros where the source is out of range, as cp.async's zero fill */
		if (qg)
			lw_open_if(e, qg, 1, 1);
		if (v > 1)
			lw_assign(e, LM_SHARED, dr->buf, 16, arena_printf(e->a, "*(uint4 *)(%s)", lw_memaddr(e, dr, cs, nn)),
			       arena_printf(e->a, "%s ? *(const uint4 *)(%s) : make_uint4(0, 0, 0, 0)", gs,
					    lw_memaddr(e, sr, cs, nn)));
		else
			lw_assign(e, LM_SHARED, dr->buf, dtype_bytes(DB->dtype),
			       arena_printf(e->a, "*(%s)", lw_memaddr(e, dr, cs, nn)),
			       arena_printf(e->a, "%s ? %s : %s", gs,
					    lw_conv(e, arena_printf(e->a, "*(%s)", lw_memaddr(e, sr, cs, nn)), SB->dtype, DB->dtype),
					    lw_conv(e, "0.0f", DT_F32, DB->dtype)));
		if (qg)
			lw_pop(e);
		async = 0;
	} else {
		if (qg)
			g = arena_printf(e->a, "%s%s%s", qg, g ? " && " : "", g ? g : "");
		if (g)
			lw_open_if(e, g, 1, 1);
		if (v > 1)
			lw_assign(e, lw_memof(DB), dr->buf, 16, arena_printf(e->a, "*(uint4 *)(%s)", lw_memaddr(e, dr, cs, nn)),
			       arena_printf(e->a, "*(const uint4 *)(%s)", lw_memaddr(e, sr, cs, nn)));
		else
			lw_assign(e, lw_memof(DB), dr->buf, dtype_bytes(DB->dtype), arena_printf(e->a, "*(%s)", lw_memaddr(e, dr, cs, nn)),
			       lw_conv(e, arena_printf(e->a, "*(%s)", lw_memaddr(e, sr, cs, nn)), SB->dtype, DB->dtype));
		if (g)
			lw_pop(e);
		async = 0;
	}
	if (vc) {
		/* rows not of whole vectors: element by element; shared memory gets zeros
		 * where the global source is out of range, as cp.async's zero fill */
		lw_open_else(e, vi, NULL);
		c2 = lw_lanecs(e, cs, nn);
		gs = lw_regguard(e, sr, c2, nn, 1);
		gd = lw_regguard(e, dr, c2, nn, 1);
		lw_open_for(e, "tl_k", "0", arena_printf(e->a, "%d", v), v, 1, 0);
		if (chunks % T)
			lw_open_if(e, arena_printf(e->a, "q < %lld", (long long)chunks), 0, 1);
		if (DB->scope == MEM_SHARED && gs)
			lw_assign(e, LM_SHARED, dr->buf, dtype_bytes(DB->dtype), arena_printf(e->a, "*(%s)", lw_memaddr(e, dr, c2, nn)),
			       arena_printf(e->a, "%s ? %s : %s", gs,
					    lw_conv(e, arena_printf(e->a, "*(%s)", lw_memaddr(e, sr, c2, nn)), SB->dtype, DB->dtype),
					    lw_conv(e, "0.0f", DT_F32, DB->dtype)));
		else {
			if (gd || gs)
				lw_open_if(e, gd && gs ? arena_printf(e->a, "%s && %s", gs, gd) : gd ? gd : gs, 1, 1);
			lw_assign(e, lw_memof(DB), dr->buf, dtype_bytes(DB->dtype), arena_printf(e->a, "*(%s)", lw_memaddr(e, dr, c2, nn)),
			       lw_conv(e, arena_printf(e->a, "*(%s)", lw_memaddr(e, sr, c2, nn)), SB->dtype, DB->dtype));
			if (gd || gs)
				lw_pop(e);
		}
		if (chunks % T)
			lw_pop(e);
		lw_pop(e);
		lw_pop(e);
	}
	lw_pop(e);
	return async;
}

/* lw_heldtab's table by iexpr_eval per (thread, slot): the reference of the compiled walk */
static Held *
heldtab_ref(Em *e, int buf, Held *h)
{
	const Fragment *F = e->frag[buf];
	IExpr **co = e->coord[buf];
	int64_t vals[IEXPR_NVARS] = {0}, x, t, s, y, NY = h->NY, R = h->R;
	int d;

	for (t = 0; t < F->nthreads; t++)
		for (s = 0; s < e->slots[buf]; s++) {
			vals[0] = s, vals[1] = t, y = 0;
			for (d = 0; d < F->nin; d++) {
				if (iexpr_eval(co[d], vals, &x, e->err))
					return NULL;
				if (d == 0 && e->pad[buf] && x >= F->in_shape[0])
					break;   /* a padded pair: no element */
				y = y * F->in_shape[d] + x;
			}
			if (d < F->nin)
				continue;
			if (y < 0 || y >= NY || h->cnt[y] >= R) {
				err_set(e->err, "local '%s': element %lld has more holders than its %lld "
					"replicas", e->k->bufs[buf].name, (long long)y, (long long)R);
				return NULL;
			}
			h->thr[y * R + h->cnt[y]++] = (int32_t)t;
		}
	return h;
}

typedef struct HeldCtx {
	Em *e;
	int buf;
	Held *h;
	int failed;     /* the visitor set the error */
} HeldCtx;

static int
held_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	HeldCtx *c = ctx;
	Em *e = c->e;
	const Fragment *F = e->frag[c->buf];
	Held *h = c->h;
	int64_t y, x, R = h->R;
	int p, d;

	(void)first;
	for (p = 0; p < npts; p++) {
		y = 0;
		for (d = 0; d < F->nin; d++) {
			x = vals[d][p];
			if (d == 0 && e->pad[c->buf] && x >= F->in_shape[0])
				break;   /* a padded pair: no element */
			y = y * F->in_shape[d] + x;
		}
		if (d < F->nin)
			continue;
		if (y < 0 || y >= h->NY || h->cnt[y] >= R) {
			c->failed = 1;
			return err_set(e->err, "local '%s': element %lld has more holders than its %lld "
				       "replicas", e->k->bufs[c->buf].name, (long long)y, (long long)R);
		}
		h->thr[y * R + h->cnt[y]++] = (int32_t)coord[0][p];
	}
	return 0;
}

/* the holders of every element of local buffer buf (Held), made once per lowering: the
 * (thread, slot) pairs walked in that order with the compiled evaluator, so each
 * element's holders are in increasing thread order */
Held *
lw_heldtab(Em *e, int buf)
{
	static const int ids[2] = {1, 0};       /* thread (_j) outer, slot (_i) inner */
	const Fragment *F = e->frag[buf];
	int64_t x, NY = layout_size(F), R = F->rep, pairs, shape[2];
	Held *h;
	HeldCtx c;

	if (e->heldc && e->heldc[buf]) {
		memset(e->heldc[buf]->mark, 0, (size_t)(e->heldc[buf]->NY * e->heldc[buf]->R));
		return e->heldc[buf];
	}
	if (ck_mul(NY, R, &pairs) || pairs > layout_enum_limit() ||
	    ck_mul(F->nthreads, e->slots[buf], &x) || x > layout_enum_limit()) {
		err_set(e->err, "local '%s': %lld elements held %lld times (%lld threads x %lld slots) is "
			"past the %lld (thread, slot) pairs the lowering checks; use a smaller tile per "
			"block", e->k->bufs[buf].name, (long long)NY, (long long)R, (long long)F->nthreads,
			(long long)e->slots[buf], (long long)layout_enum_limit());
		return NULL;
	}
	h = anew(e->a, Held);
	h->NY = NY, h->R = R;
	h->thr = anewn(e->a, int32_t, (size_t)pairs);
	h->cnt = anewn(e->a, int32_t, (size_t)NY);
	h->mark = anewn(e->a, unsigned char, (size_t)pairs);
	c.e = e, c.buf = buf, c.h = h, c.failed = 0;
	shape[0] = F->nthreads, shape[1] = e->slots[buf];
	if (lw_reference_walks || F->nin > LAYOUT_MAXDIM + 1 ||
	    layout_enumerate(shape, ids, 2, e->coord[buf], F->nin, held_visit, &c, NULL)) {
		if (c.failed)
			return NULL;
		/* not compiled (or not evaluable): the reference walk, from a clear table */
		memset(h->cnt, 0, (size_t)NY * sizeof *h->cnt);
		if (!heldtab_ref(e, buf, h))
			return NULL;
	}
	if (e->heldc)
		e->heldc[buf] = h;
	return h;
}

/* the index of thread t among the holders of element y (the first, holders are in
 * increasing thread order), or -1 */
int64_t
lw_held_by(const Held *h, int64_t y, int64_t t)
{
	const int32_t *thr;
	int64_t lo = 0, hi;

	if (y < 0 || y >= h->NY)
		return -1;
	thr = h->thr + y * h->R;
	hi = h->cnt[y];
	while (lo < hi) {
		int64_t m = lo + (hi - lo) / 2;

		if (thr[m] < t)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < h->cnt[y] && thr[lo] == t ? y * h->R + lo : -1;
}

/* copy between local buffers of one shape whose layouts differ across threads: the source
 * goes to a shared-memory array (lower_stage.c: each element once, between barriers) and every
 * holder of a destination element reads it there; padded pairs receive nothing */
static int
stagedcopy(Em *e, const IrStmt *st, const char *why)
{
	int sb = st->u.copy.src.buf, db = st->u.copy.dst.buf, open;
	const IrBuffer *SB = &e->k->bufs[sb], *DB = &e->k->bufs[db];
	const Fragment *FD = e->frag[db];
	char *name, *cs[LAYOUT_MAXDIM];

	if (FD->nin != DB->ndim || FD->nin > LAYOUT_MAXDIM)
		return err_set(e->err, "copy %s -> %s: the layout of '%s' does not match its shape", SB->name,
			       DB->name, DB->name);
	if (!(name = lw_stage(e, sb, arena_printf(e->a, "by a copy into '%s' (%s)", DB->name, why))))
		return -1;
	lw_comment(e, "copy %s -> %s: each holder of an element of '%s' reads it from %s", SB->name, DB->name,
		   DB->name, name);
	open = lw_slots_open(e, db, "s", lw_slotnames, 0, cs);
	lw_assign(e, LM_LOCAL, db, 0, arena_printf(e->a, "%s[s]", DB->name),
		  lw_conv(e, arena_printf(e->a, "%s[%s]", name, lw_stage_index(e, sb, cs)), SB->dtype, DB->dtype));
	while (open--)
		lw_pop(e);
	return 0;
}

/* copy between local buffers of one shape, through registers: every thread must
 * hold each element it receives, at a slot that does not depend on the thread */
static int
localcopy(Em *e, const IrStmt *st)
{
	int sb = st->u.copy.src.buf, db = st->u.copy.dst.buf, d;
	const IrBuffer *SB = &e->k->bufs[sb], *DB = &e->k->bufs[db];
	const Fragment *FS = e->frag[sb], *FD = e->frag[db];
	IExpr **cd = e->coord[db], *sub[IEXPR_NVARS] = {0}, *slot;
	int64_t vals[IEXPR_NVARS] = {0}, x, t, g, y, SD = e->slots[db], r0, r;
	Held *held;
	IDom dom = {{0}};

	if (!lw_wholeregion(e, &st->u.copy.src) || !lw_wholeregion(e, &st->u.copy.dst) || SB->ndim != DB->ndim)
		return err_set(e->err, "copy %s -> %s: local buffers are copied whole, between equal shapes",
			       SB->name, DB->name);
	for (d = 0; d < SB->ndim; d++)
		if (SB->dims[d].c != DB->dims[d].c)
			return err_set(e->err, "copy %s -> %s: local buffers are copied whole, between equal "
				       "shapes", SB->name, DB->name);
	if (!(held = lw_heldtab(e, sb)))
		return -1;
	for (d = 0; d < FS->nin; d++)
		sub[d] = cd[d];
	dom.ext[0] = SD, dom.ext[1] = e->k->threads;
	if (!(slot = iexpr_subst(e->a, FS->fwd[0], sub, &dom)))
		return err_set(e->err, "copy %s -> %s: out of memory", SB->name, DB->name);
	for (t = 0; t < FD->nthreads; t++)
		for (g = 0; g < SD; g++) {
			vals[0] = g, vals[1] = t, y = 0;
			for (d = 0; d < FD->nin; d++) {
				if (iexpr_eval(cd[d], vals, &x, e->err))
					return -1;
				if (d == 0 && e->pad[db] && x >= FD->in_shape[0])
					break;   /* a padded pair: receives nothing (guarded below) */
				y = y * FD->in_shape[d] + x;
			}
			if (d < FD->nin)
				continue;
			if (t >= FS->nthreads || lw_held_by(held, y, t) < 0)
				return stagedcopy(e, st, "the layouts differ across threads: a thread receives "
						  "elements it does not hold");
			vals[1] = 0;
			if (iexpr_eval(slot, vals, &r0, e->err))
				return -1;
			vals[1] = t;
			if (iexpr_eval(slot, vals, &r, e->err))
				return -1;
			if (r != r0)
				return stagedcopy(e, st, "the source slot of an element depends on the thread "
						  "(registers cannot be indexed by thread)");
		}
	lw_comment(e, "copy %s -> %s in registers", SB->name, DB->name);
	if (e->pad[db]) {
		/* a padded destination: its pairs past dim 0 receive nothing (plan_partition.c), and
		 * the source slot of their coordinates would be past the source's registers */
		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)SD), SD, 1, 0);
		lw_decl_ix(e, "c0", cd[0], lw_slotnames);
		lw_open_if(e, arena_printf(e->a, "c0 < %lld", (long long)FD->in_shape[0]), 0, 1);
	} else {
		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)SD), SD, 1, 0)->u.loop.nobrace = 1;
	}
	lw_assign(e, LM_LOCAL, db, 0, arena_printf(e->a, "%s[s]", DB->name),
	       lw_conv(e, arena_printf(e->a, "%s[%s]", SB->name, lw_ixstr(e, slot, lw_slotnames)), SB->dtype, DB->dtype));
	if (e->pad[db])
		lw_pop(e);
	lw_pop(e);
	return 0;
}

int
lw_copy(Em *e, Buf *chk, const IrStmt *st)
{
	MemScope s = e->k->bufs[st->u.copy.src.buf].scope, d = e->k->bufs[st->u.copy.dst.buf].scope;
	int r;

	if (s == MEM_LOCAL && d == MEM_LOCAL)
		return localcopy(e, st);
	if (d == MEM_LOCAL)
		return regcopy(e, chk, st, 1);
	if (s == MEM_LOCAL)
		return regcopy(e, chk, st, 0);
	if ((r = lw_tilecopy(e, chk, st)) < 0)
		return -1;
	if (r) {
		lw_async_commit(e);
		lw_async_wait(e, 0);
	}
	if (d == MEM_SHARED || s == MEM_SHARED)
		lw_barrier(e);
	return 0;
}
