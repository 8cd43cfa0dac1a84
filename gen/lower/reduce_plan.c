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
	int64_t *key, *ygt;
	IDom dom = {{0}};
	int d, n, keep;

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
	for (s = 0; s < p->S; s++) {
		p->gs[s] = -1;
		for (t = 0; t < T; t++) {
			vals[0] = s, vals[1] = t;
			for (d = 0; d <= F->nin; d++)
				if (iexpr_eval(cf[d], vals, &x[d], err))
					return -1;
			if (once && x[F->nin] != 0)
				continue; /* a replica: counted once, by replica 0 */
			if (padF && x[0] >= F->in_shape[0])
				continue; /* a padded pair: no element (the lowering adds the identity) */
			y = proj(F, dim, keep, x);
			for (g = 0; g < p->SG && ygt[t * p->SG + g] != y; g++)
				;
			if (g == p->SG)
				return err_set(err, "thread %lld holds a source element but not its result",
					       (long long)t);
			if (key[y] != (t & ~(int64_t)p->mask))
				return err_set(err, "thread %lld's part cannot reach the holders of its result",
					       (long long)t);
			if (p->gs[s] >= 0 && p->gs[s] != g)
				return err_set(err, "source slot %lld feeds different destination slots in "
					       "different threads", (long long)s);
			p->gs[s] = (int)g;
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
