/*
 * reduce_plan.c: how a reduce over register fragments is lowered, decided by
 * enumerating the source and destination fragments: the destination slot each
 * source slot feeds (the same in every thread), and the thread bits across
 * which partials combine: lane bits by warp shuffles (xor), warp bits through
 * shared memory. Every holder of a result ends with the whole reduction.
 */
#include <string.h>

#include "lower.h"

/* flat destination element (row-major over the destination shape) of source coordinates x */
static int64_t
proj(const Fragment *F, int dim, int keep, const int64_t *x)
{
	int64_t y = 0;
	int d;

	for (d = 0; d < F->nin; d++) {
		if (d == dim && !keep)
			continue;
		y = y * (d == dim ? 1 : F->in_shape[d]) + (d == dim ? 0 : x[d]);
	}
	return y;
}

/* coordinates (x..., rep) of a fragment in slot (var 0) and thread (var 1) */
static IExpr **
coords(Arena *a, const Fragment *F, int64_t *S, Err *err)
{
	Layout *inv;

	if (F->nout != 1) {
		err_set(err, "a fragment with %d slot dims is not lowered", F->nout);
		return NULL;
	}
	if (!(inv = layout_inverse(a, F, 0, err)))
		return NULL;
	*S = F->out_shape[0];
	return inv->fwd;
}

/* the destination table (ygt) from the compiled evaluator: (thread, slot) in that order */
typedef struct YgtCtx {
	const Fragment *G;
	int pad;
	int64_t *ygt;
} YgtCtx;

static int
ygt_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	YgtCtx *c = ctx;
	int64_t y;
	int p, d;

	(void)coord;
	for (p = 0; p < npts; p++) {
		for (y = 0, d = 0; d < c->G->nin; d++)
			y = y * c->G->in_shape[d] + vals[d][p];
		c->ygt[first + p] = c->pad && vals[0][p] >= c->G->in_shape[0] ? -1 : y;
	}
	return 0;
}

/* which destination slot source slot s of thread t feeds (x: its coordinates and replica) */
typedef struct FeedCtx {
	const Fragment *F;
	RedPlan *p;
	int dim, keep, once, pad, failed;
	const int64_t *ygt, *key;
	Err *err;
} FeedCtx;

static int
feed1(FeedCtx *c, int64_t s, int64_t t, const int64_t *x)
{
	const Fragment *F = c->F;
	RedPlan *p = c->p;
	int64_t y, g;

	if (c->once && x[F->nin] != 0)
		return 0; /* a replica: counted once, by replica 0 */
	if (c->pad && x[0] >= F->in_shape[0])
		return 0; /* a padded pair: no element (the lowering adds the identity) */
	y = proj(F, c->dim, c->keep, x);
	for (g = 0; g < p->SG && c->ygt[t * p->SG + g] != y; g++)
		;
	c->failed = 1;
	if (g == p->SG)
		return err_set(c->err, "thread %lld holds a source element but not its result",
			       (long long)t);
	if (c->key[y] != (t & ~(int64_t)p->mask))
		return err_set(c->err, "thread %lld's part cannot reach the holders of its result",
			       (long long)t);
	if (p->gs[s] >= 0 && p->gs[s] != g)
		return err_set(c->err, "source slot %lld feeds different destination slots in "
			       "different threads", (long long)s);
	c->failed = 0;
	p->gs[s] = (int)g;
	return 0;
}

static int
feed_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	FeedCtx *c = ctx;
	int64_t x[LAYOUT_MAXDIM + 1];
	int p, d;

	(void)first;
	for (p = 0; p < npts; p++) {
		for (d = 0; d <= c->F->nin; d++)
			x[d] = vals[d][p];
		if (feed1(c, coord[0][p], coord[1][p], x))
			return -1;
	}
	return 0;
}

int
reduce_plan(Arena *a, const Fragment *F, const Fragment *G, int dim, int once, int64_t T,
	    RedPlan *p, Err *err)
{
	return reduce_plan_at(a, F, NULL, 0, G, NULL, 0, dim, once, T, p, err);
}

int
reduce_plan_at(Arena *a, const Fragment *F, IExpr **cf, int padF, const Fragment *G, IExpr **cg,
	       int padG, int dim, int once, int64_t T, RedPlan *p, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0};
	int64_t vals[IEXPR_NVARS] = {0}, x[LAYOUT_MAXDIM + 1], y, g, t, s, r, b, NY;
	int64_t *key, *ygt, shape[2];
	static const int ids_ts[2] = {1, 0}, ids_st[2] = {0, 1};
	IDom dom = {{0}};
	int d, n, keep;
	YgtCtx yc;
	FeedCtx fc;

	if (!a || !F || !G || !p || !F->is_frag || !G->is_frag)
		return err_set(err, "reduce_plan: null argument or not a fragment");
	memset(p, 0, sizeof *p);
	if (dim < 0 || dim >= F->nin)
		return err_set(err, "dim %d is out of range for rank %d", dim, F->nin);
	keep = G->nin == F->nin;
	if (!keep && G->nin != F->nin - 1)
		return err_set(err, "the destination must have the source's rank with or without dim %d", dim);
	for (d = 0, n = 0; d < F->nin; d++) {
		if (d == dim && !keep)
			continue;
		if (G->in_shape[n++] != (d == dim ? 1 : F->in_shape[d]))
			return err_set(err, "the destination's shape is not the source's without dim %d", dim);
	}
	if (T < 1 || F->nthreads != T || G->nthreads != T)
		return err_set(err, "the source and the destination must span all %lld threads (they span "
			       "%lld and %lld)", (long long)T, (long long)F->nthreads, (long long)G->nthreads);
	if (cf)
		p->S = F->out_shape[0];
	else if (!(cf = coords(a, F, &p->S, err)))
		return -1;
	if (cg)
		p->SG = G->out_shape[0];
	else if (!(cg = coords(a, G, &p->SG, err)))
		return -1;
	p->T = T;
	NY = layout_size(G);
	if (T * p->SG > layout_enum_limit() || T * p->S > layout_enum_limit())
		return err_set(err, "the fragments are too large to plan");
	/* ygt[t * SG + g]: the flat destination element at slot g of thread t */
	ygt = anewn(a, int64_t, T * p->SG);
	shape[0] = T, shape[1] = p->SG;
	yc.G = G, yc.pad = padG, yc.ygt = ygt;
	if (lw_reference_walks || G->nin > LAYOUT_MAXDIM ||
	    layout_enumerate(shape, ids_ts, 2, cg, G->nin, ygt_visit, &yc, NULL))
		for (t = 0; t < T; t++)
			for (g = 0; g < p->SG; g++) {
				vals[0] = g, vals[1] = t, y = 0;
				for (d = 0; d < G->nin; d++) {
					if (iexpr_eval(cg[d], vals, &x[d], err))
						return -1;
					y = y * G->in_shape[d] + x[d];
				}
				/* a padded pair holds no element (-1) */
				ygt[t * p->SG + g] = padG && x[0] >= G->in_shape[0] ? -1 : y;
			}
	/* bit b combines when thread t ^ b holds the same element in every slot */
	for (b = 1; b < T && b <= 0x40000000; b <<= 1) {
		int ok = 1;

		for (t = 0; ok && t < T; t++)
			for (g = 0; ok && g < p->SG; g++)
				ok = (t ^ b) < T && ygt[t * p->SG + g] == ygt[(t ^ b) * p->SG + g];
		if (ok)
			p->mask |= (unsigned)b;
	}
	/* key[y]: the bits outside the mask, shared by every holder of y */
	key = anewn(a, int64_t, NY);
	for (y = 0; y < NY; y++)
		key[y] = -1;
	for (t = 0; t < T; t++)
		for (g = 0; g < p->SG; g++) {
			if ((y = ygt[t * p->SG + g]) < 0)
				continue;
			if (key[y] >= 0 && key[y] != (t & ~(int64_t)p->mask))
				return err_set(err, "the holders of one result (threads %lld and %lld) differ in "
					       "bits that shuffles and shared memory cannot combine",
					       (long long)key[y], (long long)t);
			key[y] = t & ~(int64_t)p->mask;
		}
	/* each source slot feeds one destination slot, in every thread, reachable by the combine */
	p->gs = anewn(a, int, p->S);
	for (s = 0; s < p->S; s++)
		p->gs[s] = -1;
	shape[0] = p->S, shape[1] = T;
	fc.F = F, fc.p = p, fc.dim = dim, fc.keep = keep, fc.once = once, fc.pad = padF;
	fc.ygt = ygt, fc.key = key, fc.err = err, fc.failed = 0;
	if (lw_reference_walks || F->nin > LAYOUT_MAXDIM ||
	    layout_enumerate(shape, ids_st, 2, cf, F->nin + 1, feed_visit, &fc, NULL)) {
		if (fc.failed)
			return -1;
		for (s = 0; s < p->S; s++)
			p->gs[s] = -1;
		for (s = 0; s < p->S; s++)
			for (t = 0; t < T; t++) {
				vals[0] = s, vals[1] = t;
				for (d = 0; d <= F->nin; d++)
					if (iexpr_eval(cf[d], vals, &x[d], err))
						return -1;
				if (feed1(&fc, s, t, x))
					return -1;
			}
	}
	/* the slot map in closed form: G's slot of the projected source coordinates */
	for (d = 0, n = 0; d < F->nin; d++) {
		if (d == dim && !keep)
			continue;
		sub[n++] = d == dim ? iexpr_const(a, 0) : cf[d];
	}
	dom.ext[0] = p->S, dom.ext[1] = T;
	p->gx = iexpr_subst(a, G->fwd[0], sub, &dom);
	if (p->gx && (iexpr_vars(p->gx) & ~1u))
		p->gx = NULL;
	for (s = 0; p->gx && s < p->S; s++) {
		vals[0] = s, vals[1] = 0;
		if (p->gs[s] >= 0 && (iexpr_eval(p->gx, vals, &r, NULL) || r != p->gs[s]))
			p->gx = NULL;
	}
	p->src = cf, p->dst = cg;
	return 0;
}
