/*
 * plan_pipeline.c: the pass plan-pipelines, each pipeline's schedule. The
 * loads of pipeline(n, stages = S) (its global -> shared copies) run S - 1
 * iterations ahead of the rest of the body, in cp.async groups, when they may
 * (pipe_hoistable); a body of loads and gemms that all lower to wgmma keeps
 * one wgmma group in flight from 4 stages up and loads S - 2 ahead
 * (wgmma_body). Otherwise the pipeline is a serial loop, and the plan says
 * why.
 */
#include "lw.h"

/* a load of a pipeline body: a copy from global into shared memory */
int
lw_isload(const Em *e, const IrStmt *s)
{
	return s->kind == S_COPY && e->k->bufs[s->u.copy.src.buf].scope == MEM_GLOBAL &&
	       e->k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED;
}

/* is shared buffer buf a destination of the loads of pipeline st? */
int
lw_pipe_loads_into(const Em *e, const IrStmt *st, int buf)
{
	const IrStmt *s;

	for (s = st->u.pipe.body; s; s = s->next)
		if (lw_isload(e, s) && s->u.copy.dst.buf == buf)
			return 1;
	return 0;
}

/* does x read a variable of set v (per var id) or any buffer? */
static int
uses_vars(const IrExpr *x, const unsigned char *v)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_VAR: return v[x->u.var->id];
	case IE_LOAD: return 1;
	case IE_UNARY: return uses_vars(x->u.un.a, v);
	case IE_BINARY: return uses_vars(x->u.bin.a, v) || uses_vars(x->u.bin.b, v);
	case IE_SELECT: return uses_vars(x->u.sel.c, v) || uses_vars(x->u.sel.a, v) || uses_vars(x->u.sel.b, v);
	case IE_CAST: return uses_vars(x->u.cast.a, v);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (uses_vars(x->u.call.args[i], v))
				return 1;
		return 0;
	default: return 0;
	}
}

/* mark the let variables a statement list assigns with S_SET */
static void
setvars(const IrStmt *s, unsigned char *v)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_SET: v[s->u.let.var->id] = 1; break;
		case S_FOR: setvars(s->u.loop.body, v); break;
		case S_PIPELINE: setvars(s->u.pipe.body, v); break;
		case S_PARALLEL: setvars(s->u.par.body, v); break;
		case S_IF: setvars(s->u.cond.then, v), setvars(s->u.cond.els, v); break;
		default: break;
		}
	}
}

/*
 * May the loads of pipeline st run ahead of the rest of its body (NULL), or
 * why not? The pipelined form issues the body's global -> shared copies of
 * iteration v + D before the rest of iteration v, so each load may depend only
 * on the pipeline variable, values fixed during the loop and lets before it
 * that do (those are issued with it); no statement of the body may touch a
 * loaded buffer before its load or write it at all; loads nested in an if or
 * a loop of the body do not run ahead.
 */
static const char *
pipe_hoistable(Em *e, const IrStmt *st)
{
	unsigned char *bad = anewn(e->a, unsigned char, e->k->nvar + 1);
	unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *loaded = anewn(e->a, unsigned char, e->k->nbuf + 1);
	const IrStmt *b;
	int d, i;

	setvars(st->u.pipe.body, bad);
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b)) {
			const Region *r = &b->u.copy.src, *w = &b->u.copy.dst;

			for (d = 0; d < r->ndim; d++)
				if (uses_vars(r->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			for (d = 0; d < w->ndim; d++)
				if (uses_vars(w->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			if (rd[w->buf] || wr[w->buf] || loaded[w->buf])
				return "a loaded buffer is used before its load in the body";
			loaded[w->buf] = 1;
			continue;
		}
		if (b->kind == S_LET) {
			if (uses_vars(b->u.let.value, bad))
				bad[b->u.let.var->id] = 1;
		} else {
			unsigned char *w2 = anewn(e->a, unsigned char, e->k->nbuf + 1);
			unsigned char *r2 = anewn(e->a, unsigned char, e->k->nbuf + 1);

			lw_sh_stmts(e, b, r2, w2, 1);
			for (i = 0; i < e->k->nbuf; i++) {
				if (w2[i] && loaded[i])
					return "the body writes a loaded buffer";
				rd[i] |= r2[i], wr[i] |= w2[i];
			}
			/* a load inside a nested statement does not run ahead */
			if (b->kind == S_IF || b->kind == S_FOR || b->kind == S_PIPELINE)
				for (i = 0; i < e->k->nbuf; i++)
					if (w2[i] && e->k->bufs[i].scope == MEM_SHARED)
						return "a nested statement of the body writes shared memory";
		}
	}
	/* a tensor the loads read ahead must not be written by the body (wr: what the other
	 * statements write, tensors included): the load of iteration v + D runs before
	 * iteration v's write (tensors of different parameters do not overlap,
	 * docs/semantics.md) */
	for (b = st->u.pipe.body; b; b = b->next)
		if (lw_isload(e, b) && wr[b->u.copy.src.buf])
			return arena_printf(e->a, "the body writes tensor '%s', which its loads read ahead",
					    e->k->bufs[b->u.copy.src.buf].name);
	return NULL;
}

/*
 * The body is loads plus gemms that all lower to wgmma (nothing else reads
 * the accumulators): 0 if not, else the mode of pipeline(): 2 (one
 * wgmma group in flight, loads S - 2 ahead) from 4 stages up, 1 (loads
 * S - 1 ahead, each gemm retires its group) below. Measured on the H200
 * (test/gpu/NOTES.md): with 3 stages, a group in flight at the price of one
 * stage of prefetch fell to 0.45x cuBLAS; with 4 stages it reached 0.79x
 * at 4096^3.
 */
static int
wgmma_body(Em *e, const IrStmt *st)
{
	const IrStmt *b;
	GemmPlan p;
	Err scratch = {0};
	int n = 0;

	if (st->u.pipe.stages < 2)
		return 0;
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b))
			continue;
		if (b->kind != S_GEMM || lw_plan_of(e, b, &p, &scratch) || p.instr != GEMM_WGMMA)
			return 0;
		n++;
	}
	if (!n)
		return 0;
	return st->u.pipe.stages >= 4 ? 2 : 1;
}

/* ---- TMA ----------------------------------------------------------------------------- */

typedef struct TmaCmp {
	int64_t bad;        /* the first point where the two placements differ, or -1 */
} TmaCmp;

static int
tma_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	TmaCmp *c = ctx;
	int p;

	(void)coord;
	for (p = 0; p < npts; p++)
		if (vals[0][p] != vals[1][p]) {
			c->bad = first + p;
			return 1;
		}
	return 0;
}

/*
 * Do TMA boxes put every element (r, c) of an [R, C] tile of eb-byte elements where the shared
 * layout L does (element offsets within a stage)? Boxes of w = span / eb columns side by side:
 * box p = c / w at p * R * span bytes, row r at r * span, then the box's swizzle on the byte
 * address (the stage base is a multiple of the swizzle's period, checked by the caller):
 * bits [4, 4 + s) ^= bits [7, 7 + s), s = 3, 2, 1 for 128, 64, 32B. Decided on every element.
 */
static int
tma_places(Em *e, const Layout *L, int64_t R, int64_t C, int eb, int64_t span, int s)
{
	Arena *a = e->a;
	IExpr *r = iexpr_var(a, 0), *c = iexpr_var(a, 1), *o, *es[2];
	int64_t shape[2] = {R, C}, w = span / eb;
	int ids[2] = {0, 1};
	TmaCmp cmp = {-1};
	Err scratch = {0};

	if (L->nin != 2 || layout_size(L) != R * C || !(es[0] = layout_linear_index(a, L)))
		return 0;
	o = iexpr_add(a, iexpr_add(a, iexpr_mulc(a, iexpr_divc(a, c, w), R * span), iexpr_mulc(a, r, span)),
		      iexpr_mulc(a, iexpr_modc(a, c, w), eb));
	if (s)
		o = iexpr_bin(a, IX_XOR, o, iexpr_mulc(a, iexpr_modc(a, iexpr_divc(a, o, 128), 1 << s), 16));
	es[1] = iexpr_divc(a, o, eb);
	if (layout_enumerate(shape, ids, 2, es, 2, tma_visit, &cmp, &scratch) < 0)
		return 0;
	return cmp.bad < 0;
}

/*
 * May a body that is not only loads and wgmma gemms load with TMA (NULL), or why not? Its
 * loads run ahead (pipe_hoistable), so the loop needs no barrier but the stages' own: the
 * full barrier replaces the cp.async wait and __syncthreads at the top of an iteration, the
 * stage's release at its end keeps the refill off it. That holds when nothing else in shared
 * memory changes from one iteration to the next: no statement of the body writes shared
 * memory (a tile written in iteration v could be overwritten by a fast warp's iteration v + 1
 * while a slow warp still reads it), and the kernel is neither persistent nor warp-specialized
 * (their TMA loops are lowered for loads and gemms only).
 */
static const char *
general_body(Em *e, const IrStmt *st)
{
	const IrStmt *b;
	unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	int i;

	if (e->k->persist)
		return "the body is not loads and wgmma gemms (a persistent kernel's TMA pipeline is lowered for those "
		       "only)";
	if (e->k->ws)
		return "the body is not loads and wgmma gemms (a warp-specialized TMA pipeline is lowered for those "
		       "only)";
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b))
			continue;
		memset(wr, 0, (size_t)e->k->nbuf);
		ir_stmt_bufs(e->k, b, 1, rd, wr);
		for (i = 0; i < e->k->nbuf; i++)
			if (wr[i] && e->k->bufs[i].scope == MEM_SHARED)
				return arena_printf(e->a, "the statement at %d:%d writes shared memory ('%s'): the loop keeps "
						    "its barrier", b->loc.line, b->loc.col, e->k->bufs[i].name);
	}
	return NULL;
}

/* the reason of a target without TMA: the plan dump does not repeat it */
static const char tma_none[] = "the target has no TMA";

/* TMA for the loads of pipeline st (NULL, with pp->tl filled), or why not */
static const char *
tma_plan(Em *e, const IrStmt *st, PipePlan *pp)
{
	const IrStmt *b;
	const char *why;
	int n = 0;

	if (!e->k->tma)
		return "TMA is off (--no-tma, tilec_options.tma = 0)";
	if (!e->t->has_tma || e->t->kind != TGT_CUDA)
		return tma_none;
	if (pp->serial)
		return "the loads do not run ahead";
	if (st->u.pipe.stages < 2)
		return "one stage";
	if (!pp->wgmma && (why = general_body(e, st)))
		return why;
	for (b = st->u.pipe.body; b; b = b->next)
		n += lw_isload(e, b);
	pp->tl = anewn(e->a, TmaLoad, n + 1);
	for (b = st->u.pipe.body; b; b = b->next) {
		const Region *sr = &b->u.copy.src, *dr = &b->u.copy.dst;
		const IrBuffer *G, *S;
		const SmemBuf *sb;
		const CopyPlan *cp;
		TmaLoad *t;
		int64_t R, C, span, period, w;
		int eb, s, q;

		if (!lw_isload(e, b))
			continue;
		G = &e->k->bufs[sr->buf], S = &e->k->bufs[dr->buf];
		if (G->strides)
			return arena_printf(e->a, "load of '%s': tensor '%s' has strides (TMA is lowered for dense tensors)",
					    S->name, G->name);
		if (S->ndim != 2 || (G->ndim != 2 && (G->ndim != 3 || sr->ext[0] != 1)))
			return arena_printf(e->a, "load of '%s': TMA is lowered for 2D tiles of 2D tensors and of one plane "
					    "of 3D tensors", S->name);
		q = G->ndim - 2;
		if (G->dtype != S->dtype)
			return arena_printf(e->a, "load of '%s': converts its elements", S->name);
		if (!lw_wholeregion(e, dr) || !(sb = smem_find(&e->sp, dr->buf)) || sb->stages != pp->stages)
			return arena_printf(e->a, "load of '%s': not a whole staged tile", S->name);
		eb = dtype_bytes(S->dtype);
		R = S->dims[0].c, C = S->dims[1].c;
		if (sr->ext[q] != R || sr->ext[q + 1] != C)
			return arena_printf(e->a, "load of '%s': the region is not the tile's shape", S->name);
		if (!(cp = lw_copyplan(e, b)) || cp->instr != CPI_CP_ASYNC || cp->v * eb != 16)
			return arena_printf(e->a, "load of '%s': not 16-byte cp.async chunks", S->name);
		s = sb->mode == SWZ_128B ? 3 : sb->mode == SWZ_64B ? 2 : sb->mode == SWZ_32B ? 1 : 0;
		if (sb->kind != SMEM_SWIZZLE && sb->kind != SMEM_LINEAR)
			return arena_printf(e->a, "load of '%s': its shared layout is %s", S->name,
					    sb->kind == SMEM_PADDED ? "padded" : "not a TMA swizzle");
		span = s ? swizzle_bytes(sb->mode) : C * eb;
		period = s ? swizzle_alignment(sb->mode) : 128;
		w = span / eb;
		if (C % w || R > 256 || w > 256 || span % 16 || (R * span) % 128 || sb->offset % period ||
		    (sb->stage_elems * eb) % period)
			return arena_printf(e->a, "load of '%s': a %lldx%lld tile does not split into TMA boxes",
					    S->name, (long long)R, (long long)C);
		if (!tma_places(e, sb->layout, R, C, eb, span, s))
			return arena_printf(e->a, "load of '%s': TMA boxes would not place it as its shared layout",
					    S->name);
		t = &pp->tl[pp->ntl++];
		t->load = b, t->buf = sr->buf, t->rank = G->ndim, t->box0 = w, t->box1 = R, t->panels = (int)(C / w);
		t->swizzle = s ? (int)span : 0;
		pp->tx += R * C * eb;
	}
	if (!pp->ntl || pp->tx >= (1 << 20))
		return "no loads, or a stage of 1 MiB or more";
	return NULL;
}

/* ---- the gemm-softmax overlap ------------------------------------------------------------ */

/* the reason of a body the overlap does not apply to: the plan dump does not print it */
static const char rot_na[] = "not a body of loads, a gemm, statements and a gemm";

/* is gemm b planned as an f16/bf16 wgmma? */
static int
rot_wgmma(Em *e, const IrStmt *b)
{
	GemmPlan p;
	Err scratch = {0};
	DType t = e->k->bufs[b->u.gemm.a.buf].dtype;

	return !lw_plan_of(e, b, &p, &scratch) && p.instr == GEMM_WGMMA && (t == DT_F16 || t == DT_BF16);
}

/*
 * May pipeline st overlap its last gemm with the next iteration's statements (NULL, with
 * pp->rot_* set), or why not? The body (its loads aside) is a gemm G1, statements X, R and a
 * gemm G2 that accumulates into C: FlashAttention's S = Q K^T, softmax, O *= alpha, O += P V.
 * The rotated iteration v runs G1(v), then G2(v - 1), waits for G1's group only (wait_group
 * 1), runs X(v) while G2(v - 1) is in flight, waits for it, runs R(v); G2 of the last
 * iteration follows the loop. It computes what the program says when:
 *  - G2 commutes with G1 (neither reads or writes what the other writes) and with X: X (the
 *    statements before the first that reads or writes C or writes G2's A operand in
 *    registers) does not read or write C; it reads G2's A only (PTX: a wgmma's A registers
 *    are not written before the wait_group that retires it; ptxas would wait for G2 at the
 *    first write, and nothing would overlap), and X touches no shared memory at all;
 *  - G2's operands do not depend on the iteration's values (whole buffers; a staged operand
 *    addresses the previous iteration's stage) and that stage is not refilled while G2 reads
 *    it: loads run S - 2 ahead, so S >= 3.
 */
static const char *
rotate_plan(Em *e, const IrStmt *st, PipePlan *pp)
{
	const IrStmt *b, *g1 = NULL, *g2 = NULL, *r = NULL;
	unsigned char *rd, *wr, *rd1, *wr1;
	int n = 0, i, nx = 0;

	if (e->t->mma != TMMA_WGMMA || pp->serial || pp->wgmma || pp->tma)
		return rot_na;
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b))
			continue;
		if (!n++)
			g1 = b;
		g2 = b;
	}
	if (n < 3 || g1->kind != S_GEMM || g2->kind != S_GEMM)
		return rot_na;
	if (!rot_wgmma(e, g1) || !rot_wgmma(e, g2))
		return "a gemm is not an f16/bf16 wgmma";
	if (g2->u.gemm.clear)
		return "the last gemm clears its accumulator";
	if (!lw_wholeregion(e, &g2->u.gemm.a) || !lw_wholeregion(e, &g2->u.gemm.b) || !lw_wholeregion(e, &g2->u.gemm.c))
		return "the last gemm's operands are not whole buffers";
	rd = anewn(e->a, unsigned char, e->k->nbuf + 1), wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	rd1 = anewn(e->a, unsigned char, e->k->nbuf + 1), wr1 = anewn(e->a, unsigned char, e->k->nbuf + 1);
	ir_stmt_bufs(e->k, g1, 1, rd1, wr1);
	ir_stmt_bufs(e->k, g2, 1, rd, wr);
	for (i = 0; i < e->k->nbuf; i++)
		if ((wr1[i] && (rd[i] || wr[i])) || (wr[i] && (rd1[i] || wr1[i])))
			return arena_printf(e->a, "the two gemms share '%s'", e->k->bufs[i].name);
	for (b = g1->next; b != g2; b = b->next) {
		memset(rd, 0, (size_t)e->k->nbuf), memset(wr, 0, (size_t)e->k->nbuf);
		ir_stmt_bufs(e->k, b, 1, rd, wr);
		for (i = 0; i < e->k->nbuf; i++)
			if ((rd[i] || wr[i]) && e->k->bufs[i].scope == MEM_SHARED)
				return arena_printf(e->a, "the statement at %d:%d uses shared memory ('%s')", b->loc.line,
						    b->loc.col, e->k->bufs[i].name);
		/* R starts at the first statement that touches G2's accumulator or writes its A
		 * operand in registers: PTX forbids writing a wgmma's A registers before the
		 * wait_group that retires it, and ptxas waits for G2 before such a write (SASS of
		 * flash_fwd: the wait_group 0 ahead of the softmax's exponentials) */
		if (!r && (rd[g2->u.gemm.c.buf] || wr[g2->u.gemm.c.buf] ||
			   (e->k->bufs[g2->u.gemm.a.buf].scope == MEM_LOCAL && wr[g2->u.gemm.a.buf])))
			r = b;
		if (!r)
			nx++;
	}
	if (!nx)
		return "no statement between the gemms leaves the last gemm's accumulator (and its A operand in registers) "
		       "alone";
	if (pp->stages < 3)
		return arena_printf(e->a, "%d stage%s: the stage the last gemm reads would be refilled while it is in "
				    "flight (stages = 3 overlaps it with the next iteration's statements)",
				    pp->stages, pp->stages == 1 ? "" : "s");
	pp->rot_g1 = g1, pp->rot_g2 = g2, pp->rot_r = r;
	return NULL;
}

int
lw_plan_pipe(Em *e, const IrStmt *st, PipePlan *pp)
{
	memset(pp, 0, sizeof *pp);
	pp->stages = st->u.pipe.stages > 1 ? st->u.pipe.stages : 1;
	pp->wgmma = wgmma_body(e, st);
	pp->ahead = pp->wgmma == 2 ? pp->stages - 2 : pp->stages - 1;
	pp->serial = pipe_hoistable(e, st);
	if (!(pp->tma_why = tma_plan(e, st, pp))) {
		/* with TMA one wgmma group is in flight at every stage count, loads S - 1 ahead
		 * (lower_pipeline.c's tma_pipeline); the element-by-element body keeps the
		 * cp.async schedule of pp->wgmma */
		pp->tma = 1;
		pp->ahead = pp->stages - 1;
	} else {
		pp->ntl = 0, pp->tx = 0;
	}
	pp->rot_why = rotate_plan(e, st, pp);
	if (pp->rot_why == rot_na)
		pp->rot_why = NULL;
	if (pp->rot_g2)
		pp->ahead = pp->stages - 2;
	return 0;
}

const PipePlan *
lw_pipeplan(Em *e, const IrStmt *st)
{
	PipePlan *pp;

	if (st->pipe_plan)
		return st->pipe_plan;
	pp = anew(e->a, PipePlan);
	return lw_plan_pipe(e, st, pp) ? NULL : pp;
}

static int
pipe_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;
	PipePlan *pp;

	if (s->kind != S_PIPELINE)
		return 0;
	pp = anew(e->a, PipePlan);
	if (lw_plan_pipe(e, s, pp))
		return err_loc(e->err, s->loc);
	s->pipe_plan = pp;
	return 0;
}

int
plan_pipelines(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	Em e;

	if (lw_setup(&e, a, t, k, err))
		return -1;
	return ir_walk(k->body, pipe_visit, &e);
}

static int
pipes_dump(IrStmt *s, void *ctx)
{
	const PlanDump *d = ctx;
	const PipePlan *p = s->pipe_plan;

	if (s->kind != S_PIPELINE || !p)
		return 0;
	if (p->serial)
		buf_printf(d->b, "//   pipeline at %d:%d: a serial loop (%s)\n", s->loc.line, s->loc.col, p->serial);
	else if (p->tma)
		buf_printf(d->b, "//   pipeline at %d:%d: %d stage%s of TMA loads (mbarriers full and empty), loads %d "
			   "ahead, %s\n", s->loc.line, s->loc.col, p->stages, p->stages == 1 ? "" : "s", p->ahead,
			   p->wgmma ? "one wgmma group in flight"
				    : "each stage released at the end of its iteration, no barrier in the loop");
	else if (p->rot_g2) {
		buf_printf(d->b, "//   pipeline at %d:%d: %d stages, loads %d ahead, the gemm at %d:%d issued one iteration "
			   "late, in flight over the statements from %d:%d", s->loc.line, s->loc.col, p->stages,
			   p->ahead, p->rot_g2->loc.line, p->rot_g2->loc.col, p->rot_g1->next->loc.line,
			   p->rot_g1->next->loc.col);
		if (p->rot_r)
			buf_printf(d->b, " to before %d:%d", p->rot_r->loc.line, p->rot_r->loc.col);
		if (p->tma_why != tma_none)
			buf_printf(d->b, " (cp.async: %s)", p->tma_why);
		buf_printf(d->b, "\n");
		return 0;
	} else
		buf_printf(d->b, "//   pipeline at %d:%d: %d stage%s, loads %d ahead%s%s%s%s\n", s->loc.line, s->loc.col,
			   p->stages, p->stages == 1 ? "" : "s", p->ahead,
			   p->wgmma == 2 ? ", one wgmma group in flight"
			   : p->wgmma == 1 ? ", each wgmma group retired by its gemm" : "",
			   p->tma_why == tma_none ? "" : " (cp.async: ", p->tma_why == tma_none ? "" : p->tma_why,
			   p->tma_why == tma_none ? "" : ")");
	if (p->rot_why)
		buf_printf(d->b, "//     its last gemm does not overlap the next iteration: %s\n", p->rot_why);
	return 0;
}

void
plan_pipelines_dump(Buf *b, const IrKernel *k)
{
	PlanDump d = {b, k};

	buf_printf(b, "// pipelines of %s\n", k->name);
	ir_walk(k->body, pipes_dump, &d);
}
