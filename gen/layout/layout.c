/*
 * layout.c: the Layout type: construction with exact output shapes, forward
 * substitution, printing, exact decisions by enumeration (injectivity,
 * equality), the inverse (its derivation is in inverse.c), reshape, repeat,
 * expand.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

static int64_t enum_limit = (int64_t)1 << 22;

int64_t
layout_enum_limit(void)
{
	return enum_limit;
}

int
layout_set_enum_limit(int64_t n)
{
	if (n < 1)
		return -1;
	enum_limit = n;
	return 0;
}

/* ---- printing helpers -------------------------------------------------- */

void
layout_print_shape(Buf *b, const int64_t *s, int n)
{
	int k;

	buf_putc(b, '[');
	for (k = 0; k < n; k++)
		buf_printf(b, "%s%lld", k ? ", " : "", (long long)s[k]);
	buf_putc(b, ']');
}

static void
decompose(const int64_t *shape, int n, int64_t flat, int64_t *x)
{
	int k;

	for (k = n - 1; k >= 0; k--) {
		x[k] = flat % shape[k];
		flat /= shape[k];
	}
}

void
layout_print_point(Buf *b, const int64_t *shape, int n, int64_t flat)
{
	int64_t x[LAYOUT_MAXDIM + 1];

	decompose(shape, n, flat, x);
	layout_print_shape(b, x, n);
}

/* ---- enumeration ---------------------------------------------------------- */

static int
domsize(const int64_t *shape, int n, int64_t *total, Err *err)
{
	int k;

	*total = 1;
	for (k = 0; k < n; k++) {
		if (shape[k] < 1)
			return err_set(err, "extent %lld of dimension %d is not positive",
				       (long long)shape[k], k);
		if (ck_mul(*total, shape[k], total) || *total > enum_limit) {
			Buf b;

			buf_init(&b);
			layout_print_shape(&b, shape, n);
			err_set(err, "domain %s has more than %lld points (the enumeration limit, "
				"tilec --enum-limit=N)", buf_str(&b), (long long)enum_limit);
			buf_free(&b);
			return -1;
		}
	}
	return 0;
}

int
layout_enumerate(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne,
		 LayoutVisit fn, void *ctx, Err *err)
{
	int64_t total, f0, cnt[LAYOUT_MAXDIM + 1], inner[LAYOUT_MAXDIM + 1], left[LAYOUT_MAXDIM + 1];
	int64_t *coord[LAYOUT_MAXDIM + 1];
	const int64_t *vals[2 * LAYOUT_MAXDIM + 4];
	const int64_t *vars[IEXPR_NVARS] = {0};
	int64_t *mem;
	IProg *prog;
	int k, p, r = 0;

	if (n < 1 || n > LAYOUT_MAXDIM + 1 || ne < 0 || ne > 2 * LAYOUT_MAXDIM + 4 || !shape || !varid)
		return err_set(err, "enumeration: bad rank");
	if (domsize(shape, n, &total, err))
		return -1;
	if (!(prog = iprog_compile(es, ne, err)))
		return -1;
	mem = malloc((size_t)n * IPROG_BATCH * sizeof(int64_t));
	if (!mem) {
		iprog_free(prog);
		return err_set(err, "out of memory");
	}
	for (k = 0; k < n; k++) {
		coord[k] = mem + (size_t)k * IPROG_BATCH;
		if (varid[k] < 0 || varid[k] >= IEXPR_NVARS) {
			r = err_set(err, "enumeration: bad var id");
			goto out;
		}
		vars[varid[k]] = coord[k];
	}
	/* inner[k]: the points per step of dim k (the extents after it); cnt[k] its digit
	 * and left[k] the points before it steps, at the start of the batch */
	for (k = n - 1; k >= 0; k--) {
		inner[k] = k == n - 1 ? 1 : inner[k + 1] * shape[k + 1];
		cnt[k] = 0;
		left[k] = inner[k];
	}
	for (f0 = 0; f0 < total; f0 += IPROG_BATCH) {
		int np = total - f0 < IPROG_BATCH ? (int)(total - f0) : IPROG_BATCH;

		/* each dim's coordinates in runs of equal values (row-major order) */
		for (k = 0; k < n; k++) {
			int64_t *restrict x = coord[k], v = cnt[k], sk = shape[k], l = left[k];

			if (sk == 1) {
				for (p = 0; p < np; p++)
					x[p] = 0;
				continue;
			}
			if (inner[k] == 1) {
				for (p = 0; p < np; p++) {
					x[p] = v;
					if (++v == sk)
						v = 0;
				}
				cnt[k] = v;
				continue;
			}
			for (p = 0; p < np;) {
				int64_t run = l < np - p ? l : np - p, q;

				for (q = 0; q < run; q++)
					x[p + q] = v;
				p += (int)run;
				if ((l -= run) == 0) {
					l = inner[k];
					if (++v == sk)
						v = 0;
				}
			}
			cnt[k] = v;
			left[k] = l;
		}
		if (iprog_run(prog, vars, np, vals)) {
			r = err_set(err, "division by zero (or unbound variable) while evaluating the layout");
			goto out;
		}
		if ((r = fn(ctx, f0, np, (const int64_t *const *)coord, vals)))
			goto out;
	}
out:
	free(mem);
	iprog_free(prog);
	return r;
}

/* the domain of a layout: inputs, then _rep for fragments; outputs, then thread */
typedef struct {
	int64_t shape[LAYOUT_MAXDIM + 1];
	int varid[LAYOUT_MAXDIM + 1];
	int n;
	IExpr *es[LAYOUT_MAXDIM + 1];
	int64_t box[LAYOUT_MAXDIM + 1];
	int ne;
	int repdim;             /* the last dimension is _rep */
	const Layout *L;
} Dom;

static void
getdom(const Layout *L, Dom *D)
{
	int k;

	memset(D, 0, sizeof *D);
	D->L = L;
	for (k = 0; k < L->nin; k++) {
		D->shape[k] = L->in_shape[k];
		D->varid[k] = k;
	}
	D->n = L->nin;
	for (k = 0; k < L->nout; k++) {
		D->es[k] = L->fwd[k];
		D->box[k] = L->out_shape[k];
	}
	D->ne = L->nout;
	if (L->is_frag) {
		D->shape[D->n] = L->rep;
		D->varid[D->n++] = IEXPR_REP;
		D->es[D->ne] = L->thread;
		D->box[D->ne++] = L->nthreads;
		D->repdim = 1;
	}
}

/*
 * A fragment whose thread map is g(x) + K * _rep (g free of _rep) keeps its
 * replicas in separate thread blocks when 0 <= g < K: the replica is
 * thread // K. Then (x, rep) -> (slot, thread) is decided on the x domain
 * alone, which keeps broadcast fragments (FullyReplicated: thread = _rep)
 * cheap. repsplit recognises the form; the bound is checked by its users.
 */
static IExpr zero = {IX_CONST, 0, NULL, NULL, NULL, NULL};
static int ranges(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne,
		  int64_t *lo, int64_t *hi, Err *err);

static int
repterm(const IExpr *e, int64_t *K)
{
	if (e->k == IX_VAR && e->v == IEXPR_REP) {
		*K = 1;
		return 1;
	}
	if (e->k == IX_MUL && e->a->k == IX_VAR && e->a->v == IEXPR_REP && e->b->k == IX_CONST &&
	    e->b->v > 0) {
		*K = e->b->v;
		return 1;
	}
	return 0;
}

static int
repsplit(const Layout *L, IExpr **g, int64_t *K)
{
	IExpr *t = L->thread;

	if (!L->is_frag || L->rep < 2)
		return 0;
	if (repterm(t, K)) {
		*g = &zero;
		return 1;
	}
	if (t->k != IX_ADD)
		return 0;
	if (repterm(t->b, K) && !(iexpr_vars(t->a) & (1u << IEXPR_REP))) {
		*g = t->a;
		return 1;
	}
	if (repterm(t->a, K) && !(iexpr_vars(t->b) & (1u << IEXPR_REP))) {
		*g = t->b;
		return 1;
	}
	return 0;
}

/* shared inside the layout core (layout_int.h) */
int
layout_repsplit_(const Layout *L, IExpr **g, int64_t *K)
{
	return repsplit(L, g, K);
}

/* the x-only domain of a separable fragment: outputs slots..., g with box K;
 * 0, or -1 when g leaves [0, K) (or cannot be bounded) */
static int
xdom(const Layout *L, IExpr *g, int64_t K, Dom *D, Err *err)
{
	int64_t lo = 0, hi = 0;

	getdom(L, D);
	D->n--;
	D->repdim = 0;
	D->es[D->ne - 1] = g;
	D->box[D->ne - 1] = K;
	if (ranges(D->shape, D->varid, D->n, &g, 1, &lo, &hi, err))
		return -1;
	return lo >= 0 && hi < K ? 0 : -1;
}

static void
print_logical(Buf *b, const Dom *D, int64_t flat)
{
	int64_t x[LAYOUT_MAXDIM + 1];

	decompose(D->shape, D->n, flat, x);
	if (D->repdim) {
		layout_print_shape(b, x, D->n - 1);
		if (D->L->rep > 1)
			buf_printf(b, " (rep %lld)", (long long)x[D->n - 1]);
	} else {
		layout_print_shape(b, x, D->n);
	}
}

static void
print_physical(Buf *b, const Dom *D, const int64_t *y)
{
	if (D->L->is_frag) {
		buf_printf(b, "thread %lld, slot ", (long long)y[D->ne - 1]);
		layout_print_shape(b, y, D->ne - 1);
	} else {
		buf_puts(b, "physical ");
		layout_print_shape(b, y, D->ne);
	}
}

/* ---- construction ----------------------------------------------------------- */

typedef struct {
	int64_t lo[2 * LAYOUT_MAXDIM + 2], hi[2 * LAYOUT_MAXDIM + 2];
	int ne;
} MinMax;

static int
v_minmax(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	MinMax *m = ctx;
	int e, p;

	(void)first;
	(void)coord;
	for (e = 0; e < m->ne; e++)
		for (p = 0; p < np; p++) {
			if (vals[e][p] < m->lo[e])
				m->lo[e] = vals[e][p];
			if (vals[e][p] > m->hi[e])
				m->hi[e] = vals[e][p];
		}
	return 0;
}

/*
 * Is e's interval bound exact (no enumeration needed)? True when every variable
 * occurs at most once and every operation is monotone in each argument (+, -,
 * * and floor-division by constants, min, max), with % only of a variable plus
 * a constant (a contiguous range): then each end of the range is reached at a
 * corner of the box, the subtrees being independent.
 */
static int
exact_bounds(const IExpr *e, unsigned *seen)
{
	switch (e->k) {
	case IX_CONST:
		return 1;
	case IX_VAR:
		if (e->v < 0 || e->v >= 32 || (*seen & (1u << e->v)))
			return 0;
		*seen |= 1u << e->v;
		return 1;
	case IX_ADD: case IX_SUB: case IX_MIN: case IX_MAX:
		return exact_bounds(e->a, seen) && exact_bounds(e->b, seen);
	case IX_MUL:
		return (e->a->k == IX_CONST || e->b->k == IX_CONST) && exact_bounds(e->a, seen) &&
		       exact_bounds(e->b, seen);
	case IX_DIV:
		return e->b->k == IX_CONST && e->b->v > 0 && exact_bounds(e->a, seen);
	case IX_MOD:
		if (e->b->k != IX_CONST || e->b->v <= 0)
			return 0;
		if (e->a->k == IX_VAR)
			return exact_bounds(e->a, seen);
		return e->a->k == IX_ADD && ((e->a->a->k == IX_VAR && e->a->b->k == IX_CONST) ||
					      (e->a->b->k == IX_VAR && e->a->a->k == IX_CONST)) &&
		       exact_bounds(e->a, seen);
	default:
		return 0;
	}
}

/* does e reach both lo and hi (its interval bounds) at corners of the box?
 * Then those bounds are its exact range. At most 2^10 corners are tried. */
static int
corners_reach(const IExpr *e, const int64_t *shape, const int *varid, int n, int64_t lo, int64_t hi)
{
	int64_t vals[IEXPR_NVARS] = {0}, v;
	unsigned used = iexpr_vars(e), c;
	int k, m = 0, dims[LAYOUT_MAXDIM + 1], got_lo = 0, got_hi = 0;

	for (k = 0; k < n; k++)
		if (varid[k] >= 0 && varid[k] < IEXPR_NVARS && (used & (1u << varid[k])))
			dims[m++] = k;
	if (m > 10)
		return 0;
	for (c = 0; c < (1u << m); c++) {
		for (k = 0; k < m; k++)
			vals[varid[dims[k]]] = (c >> k) & 1 ? shape[dims[k]] - 1 : 0;
		if (iexpr_eval(e, vals, &v, NULL))
			return 0;
		got_lo |= v == lo;
		got_hi |= v == hi;
		if (got_lo && got_hi)
			return 1;
	}
	return 0;
}

/* exact [min, max] of each expression over a domain: by interval arithmetic
 * where that is exact (exact_bounds, or both bounds reached at corners of the
 * box: corners_reach), else by enumeration; past the limit,
 * the interval bounds (a bounding box) */
static int
ranges(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne, int64_t *lo,
       int64_t *hi, Err *err)
{
	MinMax m;
	int64_t total;
	int e, k;
	Err tmp = {0};

	/* mixed-radix outputs: exact from their digits, at any domain size */
	for (e = 0; e < ne && layout_aff_range_(shape, varid, n, es[e], &lo[e], &hi[e]); e++)
		;
	if (e == ne)
		return 0;
	if (domsize(shape, n, &total, &tmp)) {
		IDom d;

		memset(&d, 0, sizeof d);
		for (k = 0; k < n; k++)
			d.ext[varid[k]] = shape[k];
		for (e = 0; e < ne; e++)
			if (iexpr_bounds(es[e], &d, &lo[e], &hi[e]))
				return err_set(err, "%s, and output %d has no interval bound", tmp.msg, e);
		return 0;
	}
	{
		IDom d;
		unsigned seen;

		memset(&d, 0, sizeof d);
		for (k = 0; k < n; k++)
			d.ext[varid[k]] = shape[k];
		for (e = 0; e < ne; e++) {
			seen = 0;
			if (iexpr_bounds(es[e], &d, &lo[e], &hi[e]))
				break;
			if (!exact_bounds(es[e], &seen) && !corners_reach(es[e], shape, varid, n, lo[e], hi[e]))
				break;
		}
		if (e == ne)
			return 0;
	}
	m.ne = ne;
	for (e = 0; e < ne; e++) {
		m.lo[e] = INT64_MAX;
		m.hi[e] = INT64_MIN;
	}
	if (layout_enumerate(shape, varid, n, es, ne, v_minmax, &m, err))
		return -1;
	memcpy(lo, m.lo, (size_t)ne * sizeof *lo);
	memcpy(hi, m.hi, (size_t)ne * sizeof *hi);
	return 0;
}

static int
checkvars(IExpr *e, int nin, int allow_rep, const char *what, int idx, Err *err)
{
	unsigned used = iexpr_vars(e), bad;
	int v;

	bad = used & ~((1u << nin) - 1u);
	if (allow_rep)
		bad &= ~(1u << IEXPR_REP);
	if (!bad)
		return 0;
	for (v = 0; !(bad & (1u << v)); v++)
		;
	return err_set(err, "unknown placeholder %s in %s %d (the layout has %d input%s)",
		       iexpr_varname(v), what, idx, nin, nin == 1 ? "" : "s");
}

/* shared by layout_new and frag_new: validate, simplify, derive shapes */
static Layout *
build(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout, IExpr *thread,
      int64_t rep, int is_frag, Err *err)
{
	Layout *L;
	IDom d;
	Dom D;
	int64_t lo[LAYOUT_MAXDIM + 1], hi[LAYOUT_MAXDIM + 1];
	int k;

	if (!shape || nin < 1 || nin > LAYOUT_MAXDIM) {
		err_set(err, "layout input rank %d is not in [1, %d]", nin, LAYOUT_MAXDIM);
		return NULL;
	}
	if (nout < 0 || nout > LAYOUT_MAXDIM - is_frag || (nout && !fwd)) {
		err_set(err, "layout output rank %d is not in [1, %d]", nout, LAYOUT_MAXDIM - is_frag);
		return NULL;
	}
	if (is_frag && (!thread || rep < 1)) {
		err_set(err, thread ? "replication %lld is not positive" : "fragment without a thread map",
			(long long)rep);
		return NULL;
	}
	memset(&d, 0, sizeof d);
	for (k = 0; k < nin; k++) {
		if (shape[k] < 1) {
			err_set(err, "extent %lld of input %d is not positive", (long long)shape[k], k);
			return NULL;
		}
		d.ext[k] = shape[k];
	}
	d.ext[IEXPR_REP] = rep;
	if (!(L = anew(A, Layout)) || !(L->fwd = anewn(A, IExpr *, nout + 1))) {
		err_set(err, "out of memory");
		return NULL;
	}
	L->is_frag = is_frag;
	L->nin = nin;
	memcpy(L->in_shape, shape, (size_t)nin * sizeof *shape);
	L->nout = nout;
	for (k = 0; k < nout; k++) {
		if (!fwd[k]) {
			err_set(err, "output %d has no expression", k);
			return NULL;
		}
		if (checkvars(fwd[k], nin, 0, "output", k, err))
			return NULL;
		L->fwd[k] = iexpr_simplify(A, fwd[k], &d);
	}
	L->rep = is_frag ? rep : 1;
	if (is_frag) {
		if (checkvars(thread, nin, 1, "thread map", 0, err))
			return NULL;
		L->thread = iexpr_simplify(A, thread, &d);
		L->nthreads = 1;
	}
	if (!nout)
		return L;       /* frag_new fills in the implicit slots */
	getdom(L, &D);
	{
		IExpr *g;
		int64_t K, total = 1;

		for (k = 0; k < D.n; k++)
			if (ck_mul(total, D.shape[k], &total))
				total = INT64_MAX;
		if (total > enum_limit && repsplit(L, &g, &K)) {
			/* broadcast fragments: exact shapes from the x domain alone */
			D.n--;
			D.es[D.ne - 1] = g;
			if (ranges(D.shape, D.varid, D.n, D.es, D.ne, lo, hi, err))
				return NULL;
			if (ck_mul(K, rep - 1, &K) || ck_add(hi[D.ne - 1], K, &hi[D.ne - 1])) {
				err_set(err, "thread map overflows");
				return NULL;
			}
		} else if (ranges(D.shape, D.varid, D.n, D.es, D.ne, lo, hi, err)) {
			return NULL;
		}
	}
	for (k = 0; k < D.ne; k++) {
		if (lo[k] < 0) {
			if (is_frag && k == nout)
				err_set(err, "the thread map takes the negative value %lld", (long long)lo[k]);
			else
				err_set(err, "output %d takes the negative value %lld", k, (long long)lo[k]);
			return NULL;
		}
		if (hi[k] == INT64_MAX) {
			err_set(err, "output %d is unbounded", k);
			return NULL;
		}
		if (is_frag && k == nout)
			L->nthreads = hi[k] + 1;
		else
			L->out_shape[k] = hi[k] + 1;
	}
	return L;
}

/* shared inside the layout core (layout_int.h) */
Layout *
layout_build_(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout, IExpr *thread,
	      int64_t rep, int is_frag, Err *err)
{
	return build(A, shape, nin, fwd, nout, thread, rep, is_frag, err);
}

/* shared inside the layout core (layout_int.h): build when the output shape
 * and thread extent are known exactly by construction (no enumeration) */
Layout *
layout_known_(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout,
	      const int64_t *out_shape, IExpr *thread, int64_t rep, int64_t nthreads, int is_frag,
	      Err *err)
{
	Layout *L = build(A, shape, nin, fwd, 0, thread, rep, is_frag, err);
	IDom d;
	int k;

	if (!L)
		return NULL;
	if (nout < 1 || nout > LAYOUT_MAXDIM - is_frag || !fwd) {
		err_set(err, "layout output rank %d is not in [1, %d]", nout, LAYOUT_MAXDIM - is_frag);
		return NULL;
	}
	memset(&d, 0, sizeof d);
	for (k = 0; k < nin; k++)
		d.ext[k] = shape[k];
	d.ext[IEXPR_REP] = rep;
	if (!(L->fwd = anewn(A, IExpr *, nout))) {
		err_set(err, "out of memory");
		return NULL;
	}
	for (k = 0; k < nout; k++) {
		if (!fwd[k] || checkvars(fwd[k], nin, 0, "output", k, err))
			return fwd[k] ? NULL : (err_set(err, "output %d has no expression", k), NULL);
		L->fwd[k] = iexpr_simplify(A, fwd[k], &d);
		L->out_shape[k] = out_shape[k];
	}
	L->nout = nout;
	if (is_frag)
		L->nthreads = nthreads;
	return L;
}

Layout *
layout_new(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout, Err *err)
{
	return build(A, shape, nin, fwd, nout, NULL, 1, 0, err);
}

Layout *
layout_parse(Arena *A, const int64_t *shape, int nin, const char *const *fwd, int nout, Err *err)
{
	IExpr *es[LAYOUT_MAXDIM];
	int k;

	if (nout < 1 || nout > LAYOUT_MAXDIM || !fwd) {
		err_set(err, "layout output rank %d is not in [1, %d]", nout, LAYOUT_MAXDIM);
		return NULL;
	}
	for (k = 0; k < nout; k++)
		if (!(es[k] = iexpr_parse(A, fwd[k], nin, 0, err)))
			return NULL;
	return layout_new(A, shape, nin, es, nout, err);
}

int64_t
layout_size(const Layout *L)
{
	int64_t n = 1;
	int k;

	for (k = 0; L && k < L->nin; k++)
		if (ck_mul(n, L->in_shape[k], &n))
			return -1;
	return n;
}

int
layout_forward(Arena *A, const Layout *L, IExpr *const *vars, int n, IExpr **out, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0};
	int k, lead;

	if (!L || (n && !vars) || !out)
		return err_set(err, "forward: null argument");
	if (n == 0) {
		for (k = 0; k < L->nout; k++)
			out[k] = L->fwd[k];
		return L->nout;
	}
	if (n < L->nin || n - L->nin + L->nout > 2 * LAYOUT_MAXDIM)
		return err_set(err, "forward: %d index expressions for a layout of rank %d", n, L->nin);
	lead = n - L->nin;
	for (k = 0; k < L->nin; k++)
		if (!(sub[k] = vars[lead + k]))
			return err_set(err, "forward: null index expression");
	for (k = 0; k < lead; k++)
		out[k] = vars[k];
	for (k = 0; k < L->nout; k++)
		if (!(out[lead + k] = iexpr_subst(A, L->fwd[k], sub, NULL)))
			return err_set(err, "out of memory");
	return lead + L->nout;
}

int
layout_eval(const Layout *L, const int64_t *x, int64_t *y, Err *err)
{
	int64_t vals[IEXPR_NVARS] = {0};
	int k;

	if (!L || !x || !y)
		return err_set(err, "eval: null argument");
	for (k = 0; k < L->nin; k++) {
		if (x[k] < 0 || x[k] >= L->in_shape[k])
			return err_set(err, "coordinate %lld of input %d is outside [0, %lld)",
				       (long long)x[k], k, (long long)L->in_shape[k]);
		vals[k] = x[k];
	}
	if (L->is_frag) {
		if (x[L->nin] < 0 || x[L->nin] >= L->rep)
			return err_set(err, "replica %lld is outside [0, %lld)", (long long)x[L->nin],
				       (long long)L->rep);
		vals[IEXPR_REP] = x[L->nin];
	}
	for (k = 0; k < L->nout; k++)
		if (iexpr_eval(L->fwd[k], vals, &y[k], err))
			return -1;
	if (L->is_frag && iexpr_eval(L->thread, vals, &y[L->nout], err))
		return -1;
	return 0;
}

int
layout_forward_vars(const Layout *L, int *ids)
{
	int k, n = 0;

	if (!L || !ids)
		return 0;
	if (L->is_frag && L->rep > 1)
		ids[n++] = IEXPR_REP;   /* TileLang prepends _rep (layout.cc:1103) */
	for (k = 0; k < L->nin; k++)
		ids[n++] = k;
	return n;
}

IExpr *
layout_linear_index(Arena *A, const Layout *L)
{
	IExpr *e;
	int k;

	if (!L)
		return NULL;
	e = L->fwd[0];
	for (k = 1; k < L->nout; k++)
		e = iexpr_add(A, iexpr_mulc(A, e, L->out_shape[k]), L->fwd[k]);
	return e;
}

void
layout_print(Buf *b, const Layout *L)
{
	int ids[LAYOUT_MAXDIM + 1], n, k;

	if (!L) {
		buf_puts(b, "<null layout>");
		return;
	}
	buf_puts(b, L->is_frag ? "Fragment(" : "Layout(");
	layout_print_shape(b, L->in_shape, L->nin);
	buf_puts(b, " -> ");
	layout_print_shape(b, L->out_shape, L->nout);
	if (L->is_frag) {
		buf_printf(b, ", replicate: %lld, thread: %lld, forward_thread: ", (long long)L->rep,
			   (long long)L->nthreads);
		iexpr_print(b, L->thread);
		buf_puts(b, ", forward_index: [");
	} else {
		buf_puts(b, ", transform: [");
		n = layout_forward_vars(L, ids);
		for (k = 0; k < n; k++)
			buf_printf(b, "%s%s", k ? ", " : "", iexpr_varname(ids[k]));
		buf_puts(b, "] -> [");
	}
	for (k = 0; k < L->nout; k++) {
		if (k)
			buf_puts(b, ", ");
		iexpr_print(b, L->fwd[k]);
	}
	buf_putc(b, ']');
	if (L->is_frag && L->has_range)
		buf_printf(b, ", thread_range: I.Range(%lld, %lld)", (long long)L->range_min,
			   (long long)L->range_ext);
	buf_putc(b, ')');
}

char *
layout_str(Arena *A, const Layout *L)
{
	Buf b;
	char *s;

	buf_init(&b);
	layout_print(&b, L);
	s = arena_strdup(A, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- injectivity ---------------------------------------------------------- */

typedef struct {
	const Dom *D;
	int64_t box;            /* product of D->box */
	int32_t *tab;           /* direct table: point + 1 per cell */
	int64_t *hkey, *hval;   /* hash table (when the box is large) */
	int64_t hmask;
	Err *err;
} Inj;

static int64_t
linkey(const Dom *D, const int64_t *const *vals, int p)
{
	int64_t key = 0;
	int e;

	for (e = 0; e < D->ne; e++)
		key = key * D->box[e] + vals[e][p];
	return key;
}

static int
collide(Inj *I, int64_t a, int64_t b, const int64_t *const *vals, int p)
{
	Buf s;
	int64_t y[LAYOUT_MAXDIM + 1];
	int e;

	for (e = 0; e < I->D->ne; e++)
		y[e] = vals[e][p];
	buf_init(&s);
	buf_puts(&s, "logical ");
	print_logical(&s, I->D, a);
	buf_puts(&s, " and ");
	print_logical(&s, I->D, b);
	buf_puts(&s, " both map to ");
	print_physical(&s, I->D, y);
	err_set(I->err, "%s", buf_str(&s));
	buf_free(&s);
	return -1;
}

static int
v_inj(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Inj *I = ctx;
	int p;

	(void)coord;
	for (p = 0; p < np; p++) {
		int64_t key = linkey(I->D, vals, p), h;

		if (I->tab) {
			if (I->tab[key])
				return collide(I, I->tab[key] - 1, first + p, vals, p);
			I->tab[key] = (int32_t)(first + p + 1);
			continue;
		}
		h = (int64_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> 20) & I->hmask;
		for (;;) {
			if (!I->hval[h]) {
				I->hkey[h] = key;
				I->hval[h] = first + p + 1;
				break;
			}
			if (I->hkey[h] == key)
				return collide(I, I->hval[h] - 1, first + p, vals, p);
			h = (h + 1) & I->hmask;
		}
	}
	return 0;
}

/* 0 injective (and onto the box when want_cover), -1 with evidence */
static int
inj_core(const Dom *D, int want_cover, Err *err)
{
	Inj I;
	int64_t total, c;
	int e, r;

	memset(&I, 0, sizeof I);
	I.D = D;
	I.err = err;
	if (!want_cover && layout_aff_injective_(D->shape, D->varid, D->n, D->es, D->ne))
		return 0;       /* proved from the digits, at any domain size */
	if (domsize(D->shape, D->n, &total, err))
		return -1;
	I.box = 1;
	for (e = 0; e < D->ne; e++)
		if (ck_mul(I.box, D->box[e], &I.box))
			return err_set(err, "physical space too large to check");
	if (want_cover && total == I.box &&
	    layout_aff_injective_(D->shape, D->varid, D->n, D->es, D->ne))
		return 0;       /* injective with as many points as cells: onto */
	/* a direct table where the box is small or not much larger than the domain (a cover
	 * check names the first cell not reached from it); a hash table otherwise: zeroing a
	 * box of cells for a few points cost more than the check (the same collisions are
	 * found either way, first point first) */
	if (I.box <= 4 * total || I.box <= 4096 || (want_cover && I.box <= (1 << 20))) {
		I.tab = calloc((size_t)I.box, sizeof *I.tab);
		if (!I.tab)
			return err_set(err, "out of memory");
	} else {
		int64_t sz = 1;

		while (sz < 2 * total)
			sz *= 2;
		I.hmask = sz - 1;
		I.hkey = malloc((size_t)sz * sizeof *I.hkey);
		I.hval = calloc((size_t)sz, sizeof *I.hval);
		if (!I.hkey || !I.hval) {
			free(I.hkey);
			free(I.hval);
			return err_set(err, "out of memory");
		}
	}
	r = layout_enumerate(D->shape, D->varid, D->n, D->es, D->ne, v_inj, &I, err);
	if (!r && want_cover && total < I.box) {
		int64_t y[LAYOUT_MAXDIM + 1], k = 0;
		Buf s;

		if (I.tab)
			while (I.tab[k])
				k++;
		for (e = D->ne - 1, c = k; e >= 0; e--) {
			y[e] = c % D->box[e];
			c /= D->box[e];
		}
		buf_init(&s);
		print_physical(&s, D, y);
		if (I.tab)
			err_set(err, "not onto the output shape: %s is not reached", buf_str(&s));
		else
			err_set(err, "not onto the output shape: %lld points reach %lld cells",
				(long long)total, (long long)I.box);
		buf_free(&s);
		r = -1;
	}
	free(I.tab);
	free(I.hkey);
	free(I.hval);
	return r ? -1 : 0;
}

int
layout_check_injective(const Layout *L, Err *err)
{
	Dom D;
	IExpr *g;
	int64_t K;

	if (!L)
		return err_set(err, "null layout");
	if (repsplit(L, &g, &K) && !xdom(L, g, K, &D, NULL))
		return inj_core(&D, 0, err);
	getdom(L, &D);
	return inj_core(&D, 0, err);
}

/* ---- equality ----------------------------------------------------------- */

typedef struct {
	const Dom *D;
	int na;
	Err *why;
} Eq;

static int
v_eq(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Eq *q = ctx;
	int p, e;

	(void)coord;
	for (p = 0; p < np; p++)
		for (e = 0; e < q->na; e++) {
			if (vals[e][p] != vals[q->na + e][p]) {
				Buf s;
				int64_t ya[LAYOUT_MAXDIM + 1], yb[LAYOUT_MAXDIM + 1];
				int f;

				for (f = 0; f < q->na; f++) {
					ya[f] = vals[f][p];
					yb[f] = vals[q->na + f][p];
				}
				buf_init(&s);
				buf_puts(&s, "logical ");
				print_logical(&s, q->D, first + p);
				buf_puts(&s, " maps to ");
				print_physical(&s, q->D, ya);
				buf_puts(&s, " under the first layout and to ");
				print_physical(&s, q->D, yb);
				buf_puts(&s, " under the second");
				err_set(q->why, "%s", buf_str(&s));
				buf_free(&s);
				return 1;
			}
		}
	return 0;
}

int
layout_equal(const Layout *a, const Layout *b, Err *why)
{
	Dom D, Db;
	Eq q;
	Buf s;
	int k, r;

	if (!a || !b)
		return err_set(why, "null layout");
	if (a->is_frag != b->is_frag) {
		err_set(why, "a %s is compared with a %s", a->is_frag ? "fragment" : "layout",
			b->is_frag ? "fragment" : "layout");
		return 0;
	}
	if (a->nin != b->nin || memcmp(a->in_shape, b->in_shape, (size_t)a->nin * sizeof(int64_t))) {
		buf_init(&s);
		buf_puts(&s, "input shapes differ: ");
		layout_print_shape(&s, a->in_shape, a->nin);
		buf_puts(&s, " and ");
		layout_print_shape(&s, b->in_shape, b->nin);
		err_set(why, "%s", buf_str(&s));
		buf_free(&s);
		return 0;
	}
	if (a->nout != b->nout) {
		err_set(why, "output ranks differ: %d and %d", a->nout, b->nout);
		return 0;
	}
	if (a->is_frag && a->rep != b->rep) {
		err_set(why, "replication differs: %lld and %lld", (long long)a->rep, (long long)b->rep);
		return 0;
	}
	if (a->is_frag && a->has_range && b->has_range &&
	    (a->range_min != b->range_min || a->range_ext != b->range_ext)) {
		err_set(why, "thread ranges differ: [%lld, %lld) and [%lld, %lld)",
			(long long)a->range_min, (long long)(a->range_min + a->range_ext),
			(long long)b->range_min, (long long)(b->range_min + b->range_ext));
		return 0;
	}
	for (k = 0; k < a->nout && iexpr_same(a->fwd[k], b->fwd[k]); k++)
		;
	if (k == a->nout && (!a->is_frag || iexpr_same(a->thread, b->thread)))
		return 1;       /* the same expressions (the simplifier is canonical enough) */
	getdom(a, &D);
	getdom(b, &Db);
	{
		IExpr *ga, *gb;
		int64_t Ka, Kb;

		/* g_a + K rep == g_b + K rep for every rep iff g_a == g_b */
		if (repsplit(a, &ga, &Ka) && repsplit(b, &gb, &Kb) && Ka == Kb) {
			D.n--;
			D.repdim = 0;
			Db.n--;
			D.es[D.ne - 1] = ga;
			Db.es[Db.ne - 1] = gb;
		}
	}
	for (k = 0; k < D.ne && layout_aff_equal_(D.shape, D.varid, D.n, D.es[k], Db.es[k]); k++)
		;
	if (k == D.ne)
		return 1;       /* the same mixed-radix forms, at any domain size */
	for (k = 0; k < Db.ne; k++)
		D.es[D.ne + k] = Db.es[k];
	q.D = &D;
	q.na = D.ne;
	q.why = why;
	r = layout_enumerate(D.shape, D.varid, D.n, D.es, 2 * D.ne, v_eq, &q, why);
	if (r < 0)
		return -1;
	return r == 0;
}

Layout *
layout_inverse(Arena *A, const Layout *L, int allow_padding, Err *err)
{
	Dom D;
	IExpr **inv;
	const Layout *P = L;
	int64_t total = 1, box = 1;
	int k;

	if (!L) {
		err_set(err, "null layout");
		return NULL;
	}
	getdom(L, &D);  /* a fragment's domain is its packing, with fragment wording */
	for (k = 0; k < D.n; k++)
		if (ck_mul(total, D.shape[k], &total))
			total = INT64_MAX;
	for (k = 0; k < D.ne; k++)
		if (ck_mul(box, D.box[k], &box))
			box = INT64_MAX;
	/* onto the box: only possible with as many points as cells */
	if (!allow_padding && total != box) {
		if (!inj_core(&D, 1, err))
			err_set(err, "not onto the output shape");
		return NULL;
	}
	{
		IExpr *g, **xinv, *sub[IEXPR_NVARS] = {0}, *outs[LAYOUT_MAXDIM + 1];
		int64_t K, xbox[LAYOUT_MAXDIM + 1], ishape[LAYOUT_MAXDIM + 1], oshape[LAYOUT_MAXDIM + 1];
		Dom X;

		if (repsplit(L, &g, &K) && !xdom(L, g, K, &X, NULL)) {
			/* x -> (slot, g) inverted on the x domain; rep = thread // K */
			int m = L->nout, d = L->nin;

			for (k = 0; k < X.ne; k++)
				xbox[k] = X.box[k];
			if (!(xinv = layout_invert_exprs(A, L->in_shape, d, X.es, X.ne, xbox, err))) {
				Err e2 = {0};

				if (inj_core(&X, 0, &e2))
					err_set(err, "%s", e2.msg);
				return NULL;
			}
			sub[m] = iexpr_modc(A, iexpr_var(A, m), K);
			for (k = 0; k < d; k++)
				outs[k] = iexpr_subst(A, xinv[k], sub, NULL);
			outs[d] = iexpr_divc(A, iexpr_var(A, m), K);
			memcpy(ishape, L->out_shape, (size_t)m * sizeof *ishape);
			ishape[m] = L->nthreads;
			memcpy(oshape, L->in_shape, (size_t)d * sizeof *oshape);
			oshape[d] = L->rep;
			if (!allow_padding)
				return layout_known_(A, ishape, m + 1, outs, d + 1, oshape, NULL, 1, 1, 0, err);
			return layout_new(A, ishape, m + 1, outs, d + 1, err);
		}
	}
	if (L->is_frag && !(P = frag_pack(A, L, err)))
		return NULL;
	/* a verified round trip proves injectivity; on failure, find the evidence */
	if (!(inv = layout_invert_exprs(A, P->in_shape, P->nin, P->fwd, P->nout, P->out_shape, err))) {
		Err e2 = {0};

		if (inj_core(&D, !allow_padding, &e2) && !strstr(e2.msg, "enumeration limit"))
			err_set(err, "%s", e2.msg);
		return NULL;
	}
	if (!allow_padding)     /* a bijection: the inverse covers the input shape exactly */
		return layout_known_(A, P->out_shape, P->nout, inv, P->nin, P->in_shape, NULL, 1, 1, 0,
				     err);
	return layout_new(A, P->out_shape, P->nout, inv, P->nin, err);
}

/* ---- reshape, repeat, expand ---------------------------------------------- */

typedef struct {
	int na;
	int64_t p;
	const int64_t *shape;
	int n;
	Err *err;
} Wide;

static int
v_wide(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Wide *w = ctx;
	int p, e;

	/* vals: base outputs (na), shifted outputs (na); the last of each is the
	 * one that narrows (for fragments the thread comes first in each group) */
	for (p = 0; p < np; p++) {
		for (e = 0; e < w->na; e++) {
			int64_t b = vals[e][p], s = vals[w->na + e][p];
			int ok = e == w->na - 1 ? s == floordiv64(b, w->p) * w->p + coord[w->n][p] : s == b;

			if (!ok) {
				Buf s2;

				buf_init(&s2);
				layout_print_point(&s2, w->shape, w->n, (first + p) / w->p);
				err_set(w->err,
					"reshape to a %lldx wider element interleaves storage below the new "
					"element width (at new logical %s, lane %lld)",
					(long long)w->p, buf_str(&s2), (long long)coord[w->n][p]);
				buf_free(&s2);
				return -1;
			}
		}
	}
	return 0;
}

static IExpr *
rowmajor(Arena *A, const int64_t *shape, int n, int firstvar)
{
	IExpr *e = iexpr_var(A, firstvar);
	int k;

	for (k = 1; k < n; k++)
		e = iexpr_add(A, iexpr_mulc(A, e, shape[k]), iexpr_var(A, firstvar + k));
	return e;
}

Layout *
layout_reshape(Arena *A, const Layout *L, const int64_t *shape, int n, int64_t num, int64_t den,
	       Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *flat, *old, *fwd[LAYOUT_MAXDIM], *thr = NULL;
	IDom d;
	int64_t oldn, newn, a, b, p = 1, stride = 1;
	int k, narrow = 0, wide = 0;

	if (!L || !shape || n < 1 || n > LAYOUT_MAXDIM || num < 1 || den < 1) {
		err_set(err, "reshape: bad arguments");
		return NULL;
	}
	oldn = layout_size(L);
	newn = 1;
	for (k = 0; k < n; k++)
		if (shape[k] < 1 || ck_mul(newn, shape[k], &newn)) {
			err_set(err, "reshape: bad extent %lld", (long long)shape[k]);
			return NULL;
		}
	if (ck_mul(oldn, num, &a) || ck_mul(newn, den, &b) || a != b) {
		err_set(err, "reshape: %lld elements of %lld bits do not fill %lld elements of %lld bits",
			(long long)oldn, (long long)num, (long long)newn, (long long)den);
		return NULL;
	}
	if (num != den) {
		if (num % den == 0)
			narrow = 1, p = num / den;
		else if (den % num == 0)
			wide = 1, p = den / num;
		else {
			err_set(err, "reshape: element widths %lld and %lld are not multiples", (long long)num,
				(long long)den);
			return NULL;
		}
	}
	memset(&d, 0, sizeof d);
	for (k = 0; k < n; k++)
		d.ext[k] = shape[k];
	flat = rowmajor(A, shape, n, 0);
	old = narrow ? iexpr_divc(A, flat, p) : wide ? iexpr_mulc(A, flat, p) : flat;
	for (k = L->nin - 1; k >= 0; k--) {
		sub[k] = iexpr_modc(A, iexpr_divc(A, old, stride), L->in_shape[k]);
		stride *= L->in_shape[k];
	}
	for (k = 0; k < L->nout; k++)
		fwd[k] = iexpr_subst(A, L->fwd[k], sub, &d);
	if (L->is_frag) {
		d.ext[IEXPR_REP] = L->rep;
		thr = iexpr_subst(A, L->thread, sub, &d);
	}
	if (narrow) {
		k = L->nout - 1;
		fwd[k] = iexpr_add(A, iexpr_mulc(A, fwd[k], p), iexpr_modc(A, flat, p));
	}
	if (wide) {
		/* check F(flat*p + lane) == (F_last(flat*p) // p)*p + lane, others equal */
		IExpr *es[2 * LAYOUT_MAXDIM + 2], *sub2[IEXPR_NVARS] = {0};
		int64_t dsh[LAYOUT_MAXDIM + 2];
		int varid[LAYOUT_MAXDIM + 2], ne = 0, base, lanev = n;
		Wide w;

		if ((L->is_frag && L->rep > 1) || n >= IEXPR_MAXIN) {
			err_set(err, "reshape: widening a replicated fragment or a rank-16 view is not supported");
			return NULL;
		}
		for (k = 0; k < n; k++) {
			dsh[k] = shape[k];
			varid[k] = k;
		}
		dsh[n] = p;
		varid[n] = lanev;
		if (L->is_frag)
			es[ne++] = thr;
		for (k = 0; k < L->nout; k++)
			es[ne++] = fwd[k];
		base = ne;
		stride = 1;
		old = iexpr_add(A, iexpr_mulc(A, flat, p), iexpr_var(A, lanev));
		for (k = L->nin - 1; k >= 0; k--) {
			sub2[k] = iexpr_modc(A, iexpr_divc(A, old, stride), L->in_shape[k]);
			stride *= L->in_shape[k];
		}
		if (L->is_frag)
			es[ne++] = iexpr_subst(A, L->thread, sub2, NULL);
		for (k = 0; k < L->nout; k++)
			es[ne++] = iexpr_subst(A, L->fwd[k], sub2, NULL);
		w.na = base;
		w.p = p;
		w.shape = shape;
		w.n = n;
		w.err = err;
		if (layout_enumerate(dsh, varid, n + 1, es, ne, v_wide, &w, err))
			return NULL;
		k = L->nout - 1;
		fwd[k] = iexpr_simplify(A, iexpr_divc(A, fwd[k], p), &d);
	}
	if (L->is_frag) {
		Layout *F = layout_build_(A, shape, n, fwd, L->nout, thr, L->rep, 1, err);

		if (F && L->has_range) {
			F->has_range = 1;
			F->range_min = L->range_min;
			F->range_ext = L->range_ext;
		}
		return F;
	}
	return layout_new(A, shape, n, fwd, L->nout, err);
}

Layout *
layout_repeat(Arena *A, const Layout *L, int dim, int64_t f, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *fwd[LAYOUT_MAXDIM];
	int64_t shape[LAYOUT_MAXDIM];
	int k;

	if (!L || L->is_frag || dim < 0 || dim >= L->nin || f < 1 || L->nout >= LAYOUT_MAXDIM) {
		err_set(err, "repeat: bad arguments (dimension %d, factor %lld)", dim, (long long)f);
		return NULL;
	}
	memcpy(shape, L->in_shape, sizeof shape);
	if (ck_mul(shape[dim], f, &shape[dim])) {
		err_set(err, "repeat: shape overflows");
		return NULL;
	}
	sub[dim] = iexpr_modc(A, iexpr_var(A, dim), L->in_shape[dim]);
	fwd[0] = iexpr_divc(A, iexpr_var(A, dim), L->in_shape[dim]);
	for (k = 0; k < L->nout; k++)
		fwd[k + 1] = iexpr_subst(A, L->fwd[k], sub, NULL);
	return layout_new(A, shape, L->nin, fwd, L->nout + 1, err);
}

Layout *
layout_expand(Arena *A, const Layout *L, const int64_t *lead, int nlead, Err *err)
{
	IExpr *sub[IEXPR_NVARS] = {0}, *fwd[LAYOUT_MAXDIM];
	int64_t shape[LAYOUT_MAXDIM];
	int k;

	if (!L || L->is_frag || nlead < 0 || (nlead && !lead) || L->nin + nlead > LAYOUT_MAXDIM ||
	    L->nout + nlead > LAYOUT_MAXDIM) {
		err_set(err, "expand: bad arguments");
		return NULL;
	}
	for (k = 0; k < nlead; k++) {
		shape[k] = lead[k];
		fwd[k] = iexpr_var(A, k);
	}
	for (k = 0; k < L->nin; k++) {
		shape[nlead + k] = L->in_shape[k];
		sub[k] = iexpr_var(A, nlead + k);
	}
	for (k = 0; k < L->nout; k++)
		fwd[nlead + k] = iexpr_subst(A, L->fwd[k], sub, NULL);
	return layout_new(A, shape, L->nin + nlead, fwd, L->nout + nlead, err);
}
