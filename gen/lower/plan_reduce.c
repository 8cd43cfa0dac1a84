/*
 * plan_reduce.c: the pass plan-reduces. Each reduce between register tiles
 * gets its plan (reduce_plan.c): which destination slot every source slot
 * feeds, and which thread bits combine by warp shuffles and which through
 * shared memory. A reduce from or into shared memory is element by element
 * and needs no plan.
 */
#include "lw.h"

/* is reduce st one between register tiles of a type the lowering reduces (else it is lowered,
 * or refused, without a plan) */
static int
planned(const Em *e, const IrStmt *st)
{
	const IrBuffer *SB = &e->k->bufs[st->u.reduce.src], *DB = &e->k->bufs[st->u.reduce.dst];

	return SB->scope == MEM_LOCAL && DB->scope == MEM_LOCAL && lw_calctype(SB->dtype) == lw_calctype(DB->dtype) &&
	       lw_redident(st->u.reduce.op, lw_calctype(DB->dtype));
}

static RedPlan *
plan1(Em *e, const IrStmt *st)
{
	int sb = st->u.reduce.src, db = st->u.reduce.dst;
	RedPlan *p = anew(e->a, RedPlan);

	if (reduce_plan_at(e->a, e->frag[sb], e->coord[sb], e->pad[sb], e->frag[db], e->coord[db], e->pad[db],
			   st->u.reduce.dim, st->u.reduce.op == RED_SUM, e->k->threads, p, e->err)) {
		/* the layouts do not combine by shuffles (a row spread over threads that do not share
		 * a slot, a destination held by other threads, ...): through shared memory, where
		 * every holder of a result reads its row (lower_reduce.c) */
		memset(p, 0, sizeof *p);
		p->smem = arena_strdup(e->a, e->err->msg);
		err_clear(e->err);
	}
	return p;
}

const RedPlan *
lw_redplan(Em *e, const IrStmt *st)
{
	return st->red_plan ? st->red_plan : plan1(e, st);
}

static int
red_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;

	if (s->kind != S_REDUCE || !planned(e, s))
		return 0;
	if (!(s->red_plan = plan1(e, s)))
		return err_loc(e->err, s->loc);
	return 0;
}

int
plan_reduces(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	Em e;

	if (lw_setup(&e, a, t, k, err))
		return -1;
	return ir_walk(k->body, red_visit, &e);
}

static int
reduces_dump(IrStmt *s, void *ctx)
{
	const PlanDump *d = ctx;
	const RedPlan *p = s->red_plan;

	if (s->kind == S_REDUCE && p && p->smem)
		buf_printf(d->b, "//   reduce at %d:%d %s -> %s: through shared memory (%s)\n", s->loc.line,
			   s->loc.col, d->k->bufs[s->u.reduce.src].name, d->k->bufs[s->u.reduce.dst].name, p->smem);
	else if (s->kind == S_REDUCE && p)
		buf_printf(d->b, "//   reduce at %d:%d %s -> %s: %lld slots into %lld over %lld threads, "
			   "combining thread bits 0x%x\n", s->loc.line, s->loc.col,
			   d->k->bufs[s->u.reduce.src].name, d->k->bufs[s->u.reduce.dst].name, (long long)p->S,
			   (long long)p->SG, (long long)p->T, p->mask);
	return 0;
}

void
plan_reduces_dump(Buf *b, const IrKernel *k)
{
	PlanDump d = {b, k};

	buf_printf(b, "// reduces of %s\n", k->name);
	ir_walk(k->body, reduces_dump, &d);
}
