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


int
lw_plan_pipe(Em *e, const IrStmt *st, PipePlan *pp)
{
	memset(pp, 0, sizeof *pp);
	pp->stages = st->u.pipe.stages > 1 ? st->u.pipe.stages : 1;
	pp->wgmma = wgmma_body(e, st);
	pp->ahead = pp->wgmma == 2 ? pp->stages - 2 : pp->stages - 1;
	pp->serial = pipe_hoistable(e, st);
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
	else
		buf_printf(d->b, "//   pipeline at %d:%d: %d stage%s, loads %d ahead%s\n", s->loc.line, s->loc.col,
			   p->stages, p->stages == 1 ? "" : "s", p->ahead,
			   p->wgmma == 2 ? ", one wgmma group in flight"
			   : p->wgmma == 1 ? ", each wgmma group retired by its gemm" : "");
	return 0;
}

void
plan_pipelines_dump(Buf *b, const IrKernel *k)
{
	PlanDump d = {b, k};

	buf_printf(b, "// pipelines of %s\n", k->name);
	ir_walk(k->body, pipes_dump, &d);
}
