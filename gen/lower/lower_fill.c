/*
 * lower_fill.c: fill and clear: every slot of a local buffer (or the slots in
 * a region), or shared and global regions cooperatively.
 */
#include "lw.h"

/* does region r cover its whole buffer? */
int
lw_wholeregion(const Em *e, const Region *r)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	int64_t c;
	int d;

	for (d = 0; d < r->ndim; d++)
		if (!ir_is_const(r->off[d], &c) || c || r->ext[d] != B->dims[d].c)
			return 0;
	return 1;
}

/* fill of shared or global memory: every thread takes elements tid, tid + T, ...
 * of the region (row-major over its non-unit extents), global ones guarded */
static int
memfill(Em *e, const IrStmt *st, const char *v)
{
	const Region *r = &st->u.fill.dst;
	const IrBuffer *B = &e->k->bufs[r->buf];
	int64_t ext[IR_MAXDIM], n = 1, T = e->k->threads, iters, div;
	int nn = nest_shape(st, ext), k;
	char *cs[IR_MAXDIM], *g;

	for (k = 0; k < nn; k++)
		n *= ext[k];
	iters = (n + T - 1) / T;
	lw_comment(e, "fill %s %s", memscope_name(B->scope), B->name);
	lw_open_for(e, "it", "0", arena_printf(e->a, "%lld", (long long)iters), iters, iters <= 64, 0);
	lw_decl(e, 1, "int", "q", 0, arena_printf(e->a, "tid + it * %lld", (long long)T), NULL);
	for (k = nn - 1, div = 1; k >= 0; div *= ext[k], k--) {
		cs[k] = arena_printf(e->a, "c%d", k);
		lw_decl(e, 1, "int", cs[k], 0, arena_printf(e->a, "q / %lld %% %lld", (long long)div, (long long)ext[k]),
		     NULL);
	}
	g = lw_regguard(e, r, cs, nn, 1);
	if (n % T)
		g = arena_printf(e->a, "q < %lld%s%s", (long long)n, g ? " && " : "", g ? g : "");
	if (g)
		lw_open_if(e, g, 1, 1);
	lw_assign(e, lw_memof(B), r->buf, dtype_bytes(B->dtype), arena_printf(e->a, "*(%s)", lw_memaddr(e, r, cs, nn)), v);
	if (g)
		lw_pop(e);
	lw_pop(e);
	if (B->scope == MEM_SHARED)
		lw_barrier(e);
	return 0;
}

int
lw_fill(Em *e, const IrStmt *st)
{
	const Region *r = &st->u.fill.dst;
	const IrBuffer *B = &e->k->bufs[r->buf];
	IExpr **co = e->coord[r->buf];
	char *v, *g = NULL;
	int d;
	int64_t S = e->slots[r->buf];

	v = lw_valueto(e, st->u.fill.value, B->dtype);
	if (B->scope != MEM_LOCAL)
		return memfill(e, st, v);
	if (lw_wholeregion(e, r)) {
		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), S, 1, 0)->u.loop.nobrace = 1;
		lw_assign(e, LM_LOCAL, r->buf, dtype_bytes(B->dtype), arena_printf(e->a, "%s[s]", B->name), v);
		lw_pop(e);
		return 0;
	}
	/* part of a local buffer: the slots whose coordinates lie in the region */
	lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), S, 1, 0);
	for (d = 0; d < r->ndim; d++) {
		char *o = lw_exprstr(e, r->off[d]), *c = lw_ixstr(e, co[d], lw_slotnames);

		if (r->ext[d] == B->dims[d].c)
			continue;
		g = arena_printf(e->a, "%s%s%s >= %s && %s < %s + %lld", g ? g : "", g ? " && " : "", c, o, c,
				 o, (long long)r->ext[d]);
	}
	if (g)
		lw_open_if(e, g, 1, 1);
	lw_assign(e, LM_LOCAL, r->buf, dtype_bytes(B->dtype), arena_printf(e->a, "%s[s]", B->name), v);
	if (g)
		lw_pop(e);
	lw_pop(e);
	return 0;
}
