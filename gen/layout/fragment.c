/*
 * fragment.c: Fragments (register layouts): the thread map over the inputs and
 * _rep, the implicit slot map (the complement of what the thread map uses),
 * thread ranges, Replicate / DeReplicate / CondenseReplicateVar, Repeat on
 * thread or slot, FullyReplicated, containment and the canonical packing.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"


#define MAXD 128

/* does any of the expressions change when one digit moves off zero (other
 * inputs 0)? */
static int
digit_used(IExpr *const *es, int ne, int var, int64_t lf, int64_t ext, int *used, Err *err)
{
	int64_t vals[IEXPR_NVARS] = {0}, t0, t;
	int64_t v;
	int e;

	*used = 0;
	for (e = 0; e < ne && !*used; e++) {
		vals[var] = 0;
		if (iexpr_eval(es[e], vals, &t0, err))
			return -1;
		for (v = 1; v < ext && !*used; v++) {
			vals[var] = lf * v;
			if (iexpr_eval(es[e], vals, &t, err))
				return -1;
			*used = t != t0;
		}
	}
	return 0;
}

IExpr *
layout_complement(Arena *A, const int64_t *shape, int nin, IExpr *const *es, int ne,
		  int64_t *extent, Err *err)
{
	int vars[LAYOUT_MAXDIM], dvar[MAXD], used[MAXD], nd, i, j, k, np = 0;
	int64_t dlf[MAXD], dext[MAXD], pext[MAXD], total = 1;
	IExpr *pval[MAXD], *slot;
	IDom d;

	if (!shape || nin < 1 || nin > LAYOUT_MAXDIM || ne < 0 || (ne && !es)) {
		err_set(err, "complement: bad arguments");
		return NULL;
	}
	memset(&d, 0, sizeof d);
	for (k = 0; k < nin; k++) {
		if (shape[k] < 1) {
			err_set(err, "complement: extent %lld is not positive", (long long)shape[k]);
			return NULL;
		}
		vars[k] = k;
		d.ext[k] = shape[k];
	}
	for (k = 0; k < ne; k++)
		if (!es[k]) {
			err_set(err, "complement: null expression");
			return NULL;
		}
	nd = layout_digits_(es, ne, vars, shape, nin, dvar, dlf, dext, MAXD);
	if (nd < 0) {
		err_set(err, "complement: too many digits");
		return NULL;
	}
	for (i = 0; i < nd; i++)
		if (digit_used(es, ne, dvar[i], dlf[i], dext[i], &used[i], err))
			return NULL;
	for (k = 0; k < nin; k++) {
		int first = np;

		for (i = 0; i < nd; i = j) {
			int64_t ext;

			j = i + 1;
			if (dvar[i] != k || used[i])
				continue;
			ext = dext[i];
			while (j < nd && dvar[j] == k && !used[j] && dlf[j] == dlf[i] * ext)
				ext *= dext[j++];
			pext[np] = ext;
			total *= ext;
			pval[np++] = iexpr_modc(A, iexpr_divc(A, iexpr_var(A, k), dlf[i]), ext);
		}
		/* high pieces first within a dimension */
		for (i = first, j = np - 1; i < j; i++, j--) {
			IExpr *t = pval[i];
			int64_t e = pext[i];

			pval[i] = pval[j], pval[j] = t;
			pext[i] = pext[j], pext[j] = e;
		}
	}
	slot = iexpr_const(A, 0);
	for (i = 0; i < np; i++)
		slot = iexpr_add(A, iexpr_mulc(A, slot, pext[i]), pval[i]);
	if (extent)
		*extent = total;
	return iexpr_simplify(A, slot, &d);
}

Fragment *
frag_new(Arena *A, const int64_t *shape, int nin, IExpr *thread, int64_t rep, IExpr *const *fwd,
	 int nout, Err *err)
{
	Fragment *F;
	IExpr *slot;

	if (nout)
		return layout_build_(A, shape, nin, fwd, nout, thread, rep, 1, err);
	if (!(F = layout_build_(A, shape, nin, NULL, 0, thread, rep, 1, err)))
		return NULL;
	if (!(slot = layout_complement(A, F->in_shape, F->nin, &F->thread, 1, NULL, err)))
		return NULL;
	return layout_build_(A, shape, nin, &slot, 1, F->thread, rep, 1, err);
}

Fragment *
frag_parse(Arena *A, const int64_t *shape, int nin, const char *thread, int64_t rep,
	   const char *const *fwd, int nout, Err *err)
{
	IExpr *es[LAYOUT_MAXDIM], *t;
	int k;

	if (nout < 0 || nout >= LAYOUT_MAXDIM || (nout && !fwd)) {
		err_set(err, "fragment output rank %d is not in [0, %d)", nout, LAYOUT_MAXDIM);
		return NULL;
	}
	if (!(t = iexpr_parse(A, thread, nin, 1, err)))
		return NULL;
	for (k = 0; k < nout; k++)
		if (!(es[k] = iexpr_parse(A, fwd[k], nin, 0, err)))
			return NULL;
	return frag_new(A, shape, nin, t, rep, es, nout, err);
}

static int
isfrag(const Fragment *F, const char *what, Err *err)
{
	if (!F || !F->is_frag)
		return err_set(err, "%s: %s", what, F ? "not a fragment" : "null fragment");
	return 0;
}

IExpr *
frag_forward_thread(Arena *A, const Fragment *F, IExpr *const *vars, int n, IExpr *rep, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *t;
	int k;

	if (!F || !F->is_frag || (n && !vars) || n < F->nin) {
		err_set(err, "forward thread: needs a fragment and %d index expressions", F ? F->nin : 0);
		return NULL;
	}
	for (k = 0; k < F->nin; k++)
		if (!(sub[k] = vars[n - F->nin + k])) {
			err_set(err, "forward thread: null index expression");
			return NULL;
		}
	sub[IEXPR_REP] = rep;
	if (!(t = iexpr_subst(A, F->thread, sub, NULL)))
		err_set(err, "out of memory");
	return t;
}

Fragment *
frag_compose(Arena *A, const Fragment *F, const int64_t *shape, int n, IExpr *const *idx, Err *err)
{
	IExpr *fwd[LAYOUT_MAXDIM], *t;
	int k;

	if (!F || !F->is_frag || !idx) {
		err_set(err, "compose: needs a fragment and index expressions");
		return NULL;
	}
	if (layout_forward(A, F, idx, F->nin, fwd, err) != F->nout)
		return NULL;
	if (!(t = frag_forward_thread(A, F, idx, F->nin, NULL, err)))
		return NULL;
	for (k = 0; k < F->nin; k++)
		if (iexpr_vars(idx[k]) & ~(((1u << n) - 1u)))
			return err_set(err, "compose: index %d uses a placeholder beyond the %d loop "
				       "dimensions", k, n), NULL;
	return layout_build_(A, shape, n, fwd, F->nout, t, F->rep, 1, err);
}

Fragment *
frag_bind_range(Arena *A, const Fragment *F, int64_t min, int64_t ext, Err *err)
{
	Fragment *G;

	if (isfrag(F, "bind thread range", err))
		return NULL;
	if (min < 0 || ext < F->nthreads) {
		err_set(err, "thread range [%lld, +%lld) cannot hold %lld threads", (long long)min,
			(long long)ext, (long long)F->nthreads);
		return NULL;
	}
	if (!(G = anew(A, Fragment))) {
		err_set(err, "out of memory");
		return NULL;
	}
	*G = *F;
	G->has_range = 1;
	G->range_min = min;
	G->range_ext = ext;
	return G;
}

Fragment *
frag_replicate(Arena *A, const Fragment *F, int64_t n, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *t;
	int64_t R;

	if (isfrag(F, "replicate", err))
		return NULL;
	if (n < 1 || ck_mul(F->rep, n, &R)) {
		err_set(err, "replicate: bad factor %lld", (long long)n);
		return NULL;
	}
	sub[IEXPR_REP] = iexpr_modc(A, iexpr_var(A, IEXPR_REP), F->rep);
	t = iexpr_subst(A, F->thread, sub, NULL);
	t = iexpr_add(A, t, iexpr_mulc(A, iexpr_divc(A, iexpr_var(A, IEXPR_REP), F->rep), F->nthreads));
	return layout_known_(A, F->in_shape, F->nin, F->fwd, F->nout, F->out_shape, t, R,
			     F->nthreads * n, 1, err);
}

static int64_t
gcd(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

Fragment *
frag_dereplicate(Arena *A, const Fragment *F, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *t, *idx;
	Fragment *G;
	int64_t f;

	if (isfrag(F, "dereplicate", err))
		return NULL;
	if (F->nout != 1) {
		err_set(err, "dereplicate needs one slot dimension, not %d", F->nout);
		return NULL;
	}
	f = gcd(F->rep, F->out_shape[0]);
	if (f == 1)
		return (Fragment *)F;
	sub[IEXPR_REP] = iexpr_add(A, iexpr_mulc(A, iexpr_var(A, IEXPR_REP), f),
				   iexpr_modc(A, F->fwd[0], f));
	t = iexpr_subst(A, F->thread, sub, NULL);
	idx = iexpr_divc(A, F->fwd[0], f);
	if (!(G = layout_build_(A, F->in_shape, F->nin, &idx, 1, t, F->rep / f, 1, err)))
		return NULL;
	return frag_bind_range(A, G, 0, G->nthreads, err);
}

Fragment *
frag_condense_rep(Arena *A, const Fragment *F, Err *err)
{
	int var = IEXPR_REP, dvar[MAXD], used[MAXD], nd, i;
	int64_t dlf[MAXD], dext[MAXD], R = 1, q = 1;
	IExpr *sub[IEXPR_NVARS] = {0}, *old, *t;
	Fragment *G;

	if (isfrag(F, "condense replication", err))
		return NULL;
	if (F->rep == 1)
		return (Fragment *)F;
	nd = layout_digits_((IExpr *const *)&F->thread, 1, &var, &F->rep, 1, dvar, dlf, dext, MAXD);
	if (nd < 0) {
		err_set(err, "condense replication: too many digits");
		return NULL;
	}
	for (i = 0; i < nd; i++) {
		if (digit_used(&F->thread, 1, IEXPR_REP, dlf[i], dext[i], &used[i], err))
			return NULL;
		if (used[i])
			R *= dext[i];
	}
	if (R == F->rep)
		return (Fragment *)F;
	old = iexpr_const(A, 0);
	for (i = 0; i < nd; i++) {
		if (!used[i])
			continue;
		old = iexpr_add(A, old, iexpr_mulc(A, iexpr_modc(A, iexpr_divc(A, iexpr_var(A, var), q),
								 dext[i]), dlf[i]));
		q *= dext[i];
	}
	sub[IEXPR_REP] = old;
	t = iexpr_subst(A, F->thread, sub, NULL);
	/* same thread values and slots: the shapes do not change */
	if (!(G = layout_known_(A, F->in_shape, F->nin, F->fwd, F->nout, F->out_shape, t, R,
				F->nthreads, 1, err)))
		return NULL;
	if (F->has_range) {
		G->has_range = 1;
		G->range_min = F->range_min;
		G->range_ext = F->range_ext;
	}
	return G;
}

Fragment *
frag_repeat(Arena *A, const Fragment *F, const int64_t *r, int on_thread, int lower_dim_first,
	    Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *rix, *t, *fwd[LAYOUT_MAXDIM];
	int64_t shape[LAYOUT_MAXDIM], scale, oshape[LAYOUT_MAXDIM], nthreads, prod = 1;
	int k;

	if (isfrag(F, "repeat", err))
		return NULL;
	if (!r) {
		err_set(err, "repeat: null factors");
		return NULL;
	}
	if (!on_thread && F->nout != 1) {
		err_set(err, "repeat on slots needs one slot dimension, not %d", F->nout);
		return NULL;
	}
	rix = iexpr_const(A, 0);
	for (k = 0; k < F->nin; k++) {
		if (r[k] < 1 || ck_mul(F->in_shape[k], r[k], &shape[k])) {
			err_set(err, "repeat: bad factor %lld for dimension %d", (long long)r[k], k);
			return NULL;
		}
		sub[k] = iexpr_modc(A, iexpr_var(A, k), F->in_shape[k]);
	}
	for (k = 0; k < F->nin; k++) {
		int l;
		IExpr *b = iexpr_divc(A, iexpr_var(A, k), F->in_shape[k]);

		scale = 1;
		for (l = 0; l < F->nin; l++)
			if (lower_dim_first ? l > k : l < k)
				scale *= r[l];
		rix = iexpr_add(A, rix, iexpr_mulc(A, b, scale));
	}
	t = iexpr_subst(A, F->thread, sub, NULL);
	for (k = 0; k < F->nout; k++)
		fwd[k] = iexpr_subst(A, F->fwd[k], sub, NULL);
	memcpy(oshape, F->out_shape, sizeof oshape);
	nthreads = F->nthreads;
	for (k = 0; k < F->nin; k++)
		prod *= r[k];
	if (on_thread) {
		t = iexpr_add(A, t, iexpr_mulc(A, rix, F->nthreads));
		nthreads *= prod;
	} else {
		fwd[0] = iexpr_add(A, fwd[0], iexpr_mulc(A, rix, F->out_shape[0]));
		oshape[0] *= prod;
	}
	return layout_known_(A, shape, F->nin, fwd, F->nout, oshape, t, F->rep, nthreads, 1, err);
}

Fragment *
frag_fully_replicated(Arena *A, const int64_t *shape, int n, int64_t nthreads, Err *err)
{
	IExpr *flat;
	Fragment *F;
	int k;

	if (!shape || n < 1 || n > LAYOUT_MAXDIM || nthreads < 1) {
		err_set(err, "fully replicated: bad shape or thread count");
		return NULL;
	}
	flat = iexpr_var(A, 0);
	for (k = 1; k < n; k++)
		flat = iexpr_add(A, iexpr_mulc(A, flat, shape[k]), iexpr_var(A, k));
	F = layout_build_(A, shape, n, &flat, 1, iexpr_var(A, IEXPR_REP), nthreads, 1, err);
	return F ? frag_bind_range(A, F, 0, nthreads, err) : NULL;
}

int
frag_is_fully_replicated(const Fragment *F)
{
	return F && F->is_frag && F->thread->k == IX_VAR && F->thread->v == IEXPR_REP;
}

Layout *
frag_pack(Arena *A, const Fragment *F, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *fwd[LAYOUT_MAXDIM];
	int64_t shape[LAYOUT_MAXDIM], oshape[LAYOUT_MAXDIM];
	int k;

	if (isfrag(F, "pack", err))
		return NULL;
	if (F->nin + 1 > LAYOUT_MAXDIM || F->nout + 1 > LAYOUT_MAXDIM) {
		err_set(err, "pack: rank too large");
		return NULL;
	}
	memcpy(shape, F->in_shape, (size_t)F->nin * sizeof *shape);
	shape[F->nin] = F->rep;
	for (k = 0; k < F->nout; k++)
		fwd[k] = F->fwd[k];
	sub[IEXPR_REP] = iexpr_var(A, F->nin);
	fwd[F->nout] = iexpr_subst(A, F->thread, sub, NULL);
	memcpy(oshape, F->out_shape, (size_t)F->nout * sizeof *oshape);
	oshape[F->nout] = F->nthreads;
	return layout_known_(A, shape, F->nin + 1, fwd, F->nout + 1, oshape, NULL, 1, 1, 0, err);
}

/* ---- containment ----------------------------------------------------------- */

typedef struct {
	const Fragment *F;
	int32_t *tab;
	int64_t slots, rep;
	int nout, check;
	const Fragment *small;
	Err *err;
	int bad;
} Cont;

static int64_t
slotlin(const Fragment *F, const int64_t *const *vals, int base, int p)
{
	int64_t s = 0;
	int k;

	for (k = 0; k < F->nout; k++)
		s = s * F->out_shape[k] + vals[base + k][p];
	return s;
}

static int
v_fill(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Cont *c = ctx;
	int p;

	int64_t x = first / c->rep + 1, r = first % c->rep;

	(void)coord;
	for (p = 0; p < np; p++) {
		int64_t key = vals[c->nout][p] * c->slots + slotlin(c->F, vals, 0, p);

		if (c->tab[key] && c->tab[key] != x)
			return err_set(c->err, "containment: the second fragment is not injective");
		c->tab[key] = (int32_t)x;
		if (++r == c->rep) {
			r = 0;
			x++;
		}
	}
	return 0;
}

static int
v_check(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Cont *c = ctx;
	const Fragment *L = c->F, *S = c->small;
	int p, k;

	int64_t x = first / c->rep, r = first % c->rep - 1;

	(void)coord;
	for (p = 0; p < np; p++) {
		int64_t t = vals[0][p], key;
		int ok;
		Buf s;

		if (++r == c->rep) {
			r = 0;
			x++;
		}
		key = t * c->slots + slotlin(L, vals, 1, p);
		ok = t < L->nthreads && c->tab[key] == x + 1;
		for (k = 0; ok && c->check && k < L->nout; k++)
			ok = vals[1 + k][p] == vals[1 + L->nout + k][p];
		if (ok)
			continue;
		buf_init(&s);
		layout_print_point(&s, S->in_shape, S->nin, x);
		if (S->rep > 1)
			buf_printf(&s, " (rep %lld)", (long long)((first + p) % c->rep));
		if (t < L->nthreads && c->tab[key] == x + 1)
			err_set(c->err, "logical %s sits in different slots under the two layouts",
				buf_str(&s));
		else
			err_set(c->err, "thread %lld holds logical %s under the first layout but is not a "
				"holder under the second", (long long)t, buf_str(&s));
		buf_free(&s);
		c->bad = 1;
		return 1;
	}
	return 0;
}

/* large = g(x) + K * _rep: t holds x iff t - g(x) = K * r with 0 <= r < R */
typedef struct {
	const Fragment *S, *L;
	int64_t K, rep;
	int check, bad;
	Err *err;
} Sep;

static int
v_sep(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Sep *c = ctx;
	int p, k;

	(void)coord;
	for (p = 0; p < np; p++) {
		int64_t t = vals[0][p], d = t - vals[1][p], x = (first + p) / c->rep;
		int ok = d >= 0 && d % c->K == 0 && d / c->K < c->L->rep;
		Buf s;

		for (k = 0; ok && c->check && k < c->L->nout; k++)
			ok = vals[2 + k][p] == vals[2 + c->L->nout + k][p];
		if (ok)
			continue;
		buf_init(&s);
		layout_print_point(&s, c->S->in_shape, c->S->nin, x);
		if (c->S->rep > 1)
			buf_printf(&s, " (rep %lld)", (long long)((first + p) % c->rep));
		if (d >= 0 && d % c->K == 0 && d / c->K < c->L->rep)
			err_set(c->err, "logical %s sits in different slots under the two layouts",
				buf_str(&s));
		else
			err_set(c->err, "thread %lld holds logical %s under the first layout but is not a "
				"holder under the second", (long long)t, buf_str(&s));
		buf_free(&s);
		c->bad = 1;
		return 1;
	}
	return 0;
}

static int
contains_sep(const Fragment *small, const Fragment *large, IExpr *g, int64_t K, int check_index,
	     Err *why)
{
	Sep c;
	IExpr *es[2 * LAYOUT_MAXDIM + 2];
	int64_t shape[LAYOUT_MAXDIM + 1];
	int varid[LAYOUT_MAXDIM + 1], k, ne = 0, r;

	memset(&c, 0, sizeof c);
	c.S = small;
	c.L = large;
	c.K = K;
	c.rep = small->rep;
	c.check = check_index;
	c.err = why;
	es[ne++] = small->thread;
	es[ne++] = g;
	for (k = 0; check_index && k < large->nout; k++)
		es[ne++] = large->fwd[k];
	for (k = 0; check_index && k < small->nout; k++)
		es[ne++] = small->fwd[k];
	for (k = 0; k < small->nin; k++) {
		shape[k] = small->in_shape[k];
		varid[k] = k;
	}
	shape[small->nin] = small->rep;
	varid[small->nin] = IEXPR_REP;
	r = layout_enumerate(shape, varid, small->nin + 1, es, ne, v_sep, &c, why);
	if (r < 0)
		return -1;
	return !c.bad;
}

/*
 * A thread map of _rep alone (a broadcast whose replicas are permuted, e.g.
 * _rep * 5 % 256) gives every element to the same threads: the small fragment is
 * contained when those threads include all of [0, small->nthreads). 1 yes, 0 not
 * decided here (a walk over the replicas only, R points).
 */
static int
rep_only_covers(const Fragment *small, const Fragment *large)
{
	int64_t vals[IEXPR_NVARS] = {0}, t, n = 0;
	unsigned char *seen;
	int r = 0;

	if (iexpr_vars(large->thread) & ~(1u << IEXPR_REP) || small->nthreads > large->nthreads ||
	    large->nthreads > ((int64_t)1 << 24) || large->rep > layout_enum_limit() ||
	    !(seen = calloc((size_t)large->nthreads, 1)))
		return 0;
	for (vals[IEXPR_REP] = 0; vals[IEXPR_REP] < large->rep; vals[IEXPR_REP]++) {
		if (iexpr_eval(large->thread, vals, &t, NULL) || t < 0 || t >= large->nthreads)
			goto out;
		if (t < small->nthreads && !seen[t]) {
			seen[t] = 1;
			n++;
		}
	}
	r = n == small->nthreads;
out:
	free(seen);
	return r;
}

/*
 * Containment without slots when large's thread map ignores some inputs (a row's
 * result seen from a 2-D nest): the holders of x are marked per point of the inputs the
 * map reads (times R) instead of per (thread, slot) cell of the whole domain. Used only
 * to answer yes; it requires large's slots to be injective in x (proved from its digits)
 * and no two replicas of a point on one thread, so that the answer is the general walk's.
 * 1 contained, 0 not decided here.
 */
typedef struct Proj {
	const Fragment *S, *L;
	int nu, dims[LAYOUT_MAXDIM];
	int64_t T, rep;
	unsigned char *tab;
	int filling;
} Proj;

static int
v_proj(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Proj *c = ctx;
	int p, k;

	for (p = 0; p < np; p++) {
		int64_t t = vals[0][p], xp = 0, key;

		if (t < 0 || t >= c->T)
			return 1;
		if (c->filling) {       /* the domain is (used inputs..., rep), row-major */
			xp = (first + p) / c->rep;
		} else {
			for (k = 0; k < c->nu; k++)
				xp = xp * c->L->in_shape[c->dims[k]] + coord[c->dims[k]][p];
		}
		key = xp * c->T + t;
		if (c->filling) {
			if (c->tab[key])
				return 1;       /* two replicas of a point on one thread */
			c->tab[key] = 1;
		} else if (!c->tab[key]) {
			return 1;
		}
	}
	return 0;
}

static int
contains_proj(const Fragment *small, const Fragment *large)
{
	unsigned used = iexpr_vars(large->thread);
	int64_t shape[LAYOUT_MAXDIM + 1], P = 1, cells;
	int ids[LAYOUT_MAXDIM + 1], k, n = large->nin, r;
	Proj c;
	Err e = {0};

	memset(&c, 0, sizeof c);
	c.S = small;
	c.L = large;
	c.T = large->nthreads;
	c.rep = large->rep;
	for (k = 0; k < n; k++)
		if (used & (1u << k)) {
			c.dims[c.nu++] = k;
			if (ck_mul(P, large->in_shape[k], &P))
				return 0;
		}
	if (c.nu == n || large->nout < 1)
		return 0;
	for (k = 0; k < n; k++) {
		shape[k] = large->in_shape[k];
		ids[k] = k;
	}
	if (!layout_aff_injective_(shape, ids, n, large->fwd, large->nout))
		return 0;
	if (ck_mul(P, c.T, &cells) || cells > layout_enum_limit() || !(c.tab = calloc((size_t)cells, 1)))
		return 0;
	for (k = 0; k < c.nu; k++) {
		shape[k] = large->in_shape[c.dims[k]];
		ids[k] = c.dims[k];
	}
	shape[c.nu] = large->rep;
	ids[c.nu] = IEXPR_REP;
	c.filling = 1;
	r = layout_enumerate(shape, ids, c.nu + 1, &large->thread, 1, v_proj, &c, &e);
	if (!r) {
		for (k = 0; k < n; k++) {
			shape[k] = small->in_shape[k];
			ids[k] = k;
		}
		shape[n] = small->rep;
		ids[n] = IEXPR_REP;
		c.filling = 0;
		r = layout_enumerate(shape, ids, n + 1, &small->thread, 1, v_proj, &c, &e);
	}
	free(c.tab);
	return r == 0;
}

int
frag_contains(const Fragment *small, const Fragment *large, int check_index, Err *why)
{
	IExpr *g;
	int64_t K;
	Cont c;
	IExpr *es[2 * LAYOUT_MAXDIM + 2];
	int64_t shape[LAYOUT_MAXDIM + 1], cells;
	int varid[LAYOUT_MAXDIM + 1], k, ne = 0, r;

	if (isfrag(small, "contains", why) || isfrag(large, "contains", why))
		return -1;
	if (small->nin != large->nin ||
	    memcmp(small->in_shape, large->in_shape, (size_t)small->nin * sizeof(int64_t)))
		return err_set(why, "contains: the fragments have different input shapes");
	if (check_index && small->nout != large->nout)
		return err_set(why, "contains: different slot ranks");
	if (frag_is_fully_replicated(large) && !check_index && small->nthreads <= large->rep)
		return 1;
	if (!check_index && (r = rep_only_covers(small, large)) != 0)
		return r;
	if (!check_index && layout_aff_contains_(small, large))
		return 1;
	if (layout_repsplit_(large, &g, &K))
		return contains_sep(small, large, g, K, check_index, why);
	if (!check_index && contains_proj(small, large))
		return 1;
	memset(&c, 0, sizeof c);
	c.F = large;
	c.small = small;
	c.err = why;
	c.check = check_index;
	c.nout = large->nout;
	c.slots = 1;
	for (k = 0; k < large->nout; k++)
		c.slots *= large->out_shape[k];
	if (ck_mul(c.slots, large->nthreads, &cells) || cells > ((int64_t)1 << 26))
		return err_set(why, "contains: the second fragment has too many (thread, slot) cells");
	if (!(c.tab = calloc((size_t)cells, sizeof *c.tab)))
		return err_set(why, "out of memory");
	for (k = 0; k < large->nin; k++) {
		shape[k] = large->in_shape[k];
		varid[k] = k;
	}
	shape[large->nin] = large->rep;
	varid[large->nin] = IEXPR_REP;
	for (k = 0; k < large->nout; k++)
		es[ne++] = large->fwd[k];
	es[ne++] = large->thread;
	c.rep = large->rep;
	r = layout_enumerate(shape, varid, large->nin + 1, es, ne, v_fill, &c, why);
	if (!r) {
		ne = 0;
		es[ne++] = small->thread;
		for (k = 0; k < large->nout; k++)
			es[ne++] = large->fwd[k];
		for (k = 0; check_index && k < small->nout; k++)
			es[ne++] = small->fwd[k];
		shape[small->nin] = small->rep;
		c.rep = small->rep;
		r = layout_enumerate(shape, varid, small->nin + 1, es, ne, v_check, &c, why);
	}
	free(c.tab);
	if (r < 0)
		return -1;
	return !c.bad;
}
