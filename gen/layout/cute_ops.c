/*
 * cute_ops.c: the CuTe layout algebra: coalesce, filter, composition,
 * complement, right/left inverse, the divides and products, with_shape and
 * restrict. Algorithms follow C++ CuTe (cute-algebra.md); where C++'s static
 * divisibility test is too weak, the real condition is checked and reported.
 */
#include <string.h>

#include "cute.h"

#define OOM(err) err_set(err, "cute: out of memory")

typedef struct Mode {
	int64_t s;
	CuteInt d;
} Mode;

static const CuteInt zero_int;

static int
nleaves(const CuteTup *t)
{
	int i, n = 0;

	if (t->n < 0)
		return 1;
	for (i = 0; i < t->n; i++)
		n += nleaves(t->e[i]);
	return n;
}

static void
fill(const CuteTup *s, const CuteTup *d, Mode *m, int *k)
{
	int i;

	if (s->n < 0) {
		m[*k].s = s->x.v;
		m[*k].d = d->x;
		(*k)++;
		return;
	}
	for (i = 0; i < s->n; i++)
		fill(s->e[i], d->e[i], m, k);
}

/* the flattened modes of a valid layout (one spare slot at the end) */
static int
flatten(Arena *a, CuteLayout l, Mode **out, int *n, Err *err)
{
	int k = 0;

	if (cute_valid(l, err) < 0)
		return -1;
	*n = nleaves(l.shape);
	if (!(*out = anewn(a, Mode, *n + 1)))
		return OOM(err);
	fill(l.shape, l.stride, *out, &k);
	return 0;
}

/* a flat layout from modes: none is _1:_0, one is a scalar layout */
static int
build(Arena *a, const Mode *m, int n, CuteLayout *out, Err *err)
{
	int i;

	if (n == 0) {
		out->shape = cute_int(a, 1);
		out->stride = cute_int(a, 0);
	} else if (n == 1) {
		out->shape = cute_int(a, m[0].s);
		out->stride = cute_leaf(a, m[0].d);
	} else {
		out->shape = cute_tuple(a, n);
		out->stride = cute_tuple(a, n);
		if (!out->shape || !out->stride)
			return OOM(err);
		for (i = 0; i < n; i++) {
			out->shape->e[i] = cute_int(a, m[i].s);
			out->stride->e[i] = cute_leaf(a, m[i].d);
			if (!out->shape->e[i] || !out->stride->e[i])
				return OOM(err);
		}
	}
	if (!out->shape || !out->stride)
		return OOM(err);
	return 0;
}

static int
same_basis(CuteInt x, CuteInt y)
{
	return x.nb == y.nb && !memcmp(x.b, y.b, (size_t)x.nb);
}

static int
scale(CuteInt x, int64_t k, CuteInt *r, Err *err)
{
	*r = x;
	if (ck_mul(x.v, k, &r->v) < 0)
		return err_set(err, "cute: integer overflow in a stride");
	if (r->v == 0)
		r->nb = 0;
	return 0;
}

/* coalesce flat modes in place; returns the new count */
static int
coalesce_modes(Mode *m, int n)
{
	int i, k = 0;
	int64_t p;

	for (i = 0; i < n; i++) {
		if (m[i].s == 1)
			continue;
		if (k > 0 && same_basis(m[k - 1].d, m[i].d) &&
		    ck_mul(m[k - 1].s, m[k - 1].d.v, &p) == 0 && p == m[i].d.v &&
		    ck_mul(m[k - 1].s, m[i].s, &p) == 0) {
			m[k - 1].s = p;
			continue;
		}
		m[k++] = m[i];
	}
	return k;
}

static int
coalesce_whole(Arena *a, CuteLayout l, CuteLayout *out, Err *err)
{
	Mode *m;
	int n;

	if (flatten(a, l, &m, &n, err) < 0)
		return -1;
	n = coalesce_modes(m, n);
	return build(a, m, n, out, err);
}

static int
filter_whole(Arena *a, CuteLayout l, CuteLayout *out, Err *err)
{
	Mode *m;
	int n, i;

	if (flatten(a, l, &m, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (m[i].d.v == 0)
			m[i].s = 1;
	n = coalesce_modes(m, n);
	return build(a, m, n, out, err);
}

typedef int (*Whole)(Arena *, CuteLayout, CuteLayout *, Err *);

static int
by_mode(Arena *a, CuteLayout l, const CuteTup *prof, Whole f, CuteLayout *out, int lvl, Err *err)
{
	int i;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(err, "cute: profile nested too deeply");
	if (!prof || prof->n < 0)
		return f(a, l, out, err);
	if (prof->n > cute_rank(l))
		return err_set(err, "cute: profile rank %d exceeds layout rank %d", prof->n,
			       cute_rank(l));
	if (l.shape->n < 0)
		return prof->n == 0 ? (*out = l, 0) : by_mode(a, l, prof->e[0], f, out, lvl + 1, err);
	out->shape = cute_tuple(a, l.shape->n);
	out->stride = cute_tuple(a, l.shape->n);
	if (!out->shape || !out->stride)
		return OOM(err);
	for (i = 0; i < l.shape->n; i++) {
		CuteLayout r = cute_mode(l, i);

		if (i < prof->n && by_mode(a, cute_mode(l, i), prof->e[i], f, &r, lvl + 1, err) < 0)
			return -1;
		out->shape->e[i] = r.shape;
		out->stride->e[i] = r.stride;
	}
	return 0;
}

int
cute_coalesce(Arena *a, CuteLayout l, const CuteTup *profile, CuteLayout *out, Err *err)
{
	if (cute_valid(l, err) < 0)
		return -1;
	return by_mode(a, l, profile, coalesce_whole, out, 0, err);
}

int
cute_filter(Arena *a, CuteLayout l, const CuteTup *profile, CuteLayout *out, Err *err)
{
	if (cute_valid(l, err) < 0)
		return -1;
	return by_mode(a, l, profile, filter_whole, out, 0, err);
}

/* ---- composition ------------------------------------------------------------ */

static int64_t
ceildiv(int64_t a, int64_t b)
{
	return a / b + (a % b != 0);
}

/* A (already flat, coalesce_x'ed: n >= 1 modes) o s:d */
static int
compose_leaf(Arena *a, const Mode *A, int n, int64_t s, int64_t d, CuteLayout *out, Err *err)
{
	Mode *r;
	int k = 0, i;
	int64_t rs = s, rd = d, ad, nshape, nstride, m;

	if (d == 0) {
		Mode z = {s, zero_int};

		return build(a, &z, 1, out, err);
	}
	if (!(r = anewn(a, Mode, n + 1)))
		return OOM(err);
	for (i = 0; i < n - 1; i++) {
		int64_t si = A[i].s;

		if (rd == INT64_MIN)
			return err_set(err, "cute: integer overflow in composition");
		ad = rd < 0 ? -rd : rd;
		nshape = ceildiv(si, ad);
		nstride = ceildiv(ad, si) * (rd < 0 ? -1 : 1);
		if (rs > 1 && ad % si != 0 && si % ad != 0 && nshape < rs)
			return err_set(err, "cute: composition: stride divisibility condition violated "
				       "(stride %lld against extent %lld)", (long long)ad, (long long)si);
		if (nshape == 1 || rs == 1) {
			rd = nstride;
			continue;
		}
		m = nshape < rs ? nshape : rs;
		if (rs % m != 0)
			return err_set(err, "cute: composition: shape divisibility condition violated "
				       "(extent %lld against %lld)", (long long)rs, (long long)m);
		r[k].s = m;
		if (scale(A[i].d, rd, &r[k].d, err) < 0)
			return -1;
		k++;
		rs /= m;
		rd = nstride;
	}
	if (k == 0 || rs != 1) {
		r[k].s = rs;
		if (scale(A[n - 1].d, rd, &r[k].d, err) < 0)
			return -1;
		k++;
	}
	return build(a, r, k, out, err);
}

/* select A's sub-mode along a basis path */
static int
submode(CuteLayout A, const CuteInt *x, CuteLayout *out, Err *err)
{
	int i;

	for (i = 0; i < x->nb; i++) {
		if (x->b[i] >= cute_rank(A))
			return err_set(err, "cute: composition: basis E<%d> beyond rank %d of A",
				       x->b[i], cute_rank(A));
		A = cute_mode(A, x->b[i]);
	}
	*out = A;
	return 0;
}

static int
compose_rec(Arena *a, CuteLayout A, const Mode *Af, int nf, const CuteTup *s, const CuteTup *d,
	    CuteLayout *out, int lvl, Err *err)
{
	int i;

	if (lvl > CUTE_MAXDEPTH + 8)
		return err_set(err, "cute: layout nested too deeply");
	if (s->n >= 0) {
		out->shape = cute_tuple(a, s->n);
		out->stride = cute_tuple(a, s->n);
		if (!out->shape || !out->stride)
			return OOM(err);
		for (i = 0; i < s->n; i++) {
			CuteLayout r;

			if (compose_rec(a, A, Af, nf, s->e[i], d->e[i], &r, lvl + 1, err) < 0)
				return -1;
			out->shape->e[i] = r.shape;
			out->stride->e[i] = r.stride;
		}
		return 0;
	}
	if (d->x.nb) {
		CuteLayout sub, Bl = {cute_int(a, s->x.v), cute_int(a, d->x.v)};

		if (!Bl.shape || !Bl.stride)
			return OOM(err);
		if (submode(A, &d->x, &sub, err) < 0)
			return -1;
		return cute_compose(a, sub, Bl, out, err);
	}
	return compose_leaf(a, Af, nf, s->x.v, d->x.v, out, err);
}

/*
 * Composition distributes over B's modes only when A is additive on B's
 * image: A(sum c_k d_k) = sum A(c_k d_k). C++ does not check this. It holds
 * when, for every mode j of A but the last, the largest digits that B's
 * leaves can put there sum to less than A's extent (no carries). Else the
 * result is compared with A(B(i)) on the whole domain, up to CUTE_MAXPROVE.
 */
static int
no_carries(const Mode *A, int na, const Mode *b, int nb)
{
	int j, k;
	int64_t c, p = 1, x, dig, sum;

	for (k = 0; k < nb; k++)
		if (b[k].d.nb || b[k].d.v < 0 || b[k].s > (1 << 16))
			return 0;
	for (j = 0; j < na - 1; j++) {
		sum = 0;
		for (k = 0; k < nb; k++) {
			int64_t mx = 0;

			for (c = 1; c < b[k].s; c++) {
				if (ck_mul(c, b[k].d.v, &x) < 0)
					return 0;
				dig = x / p % A[j].s;
				if (dig > mx)
					mx = dig;
			}
			if (ck_add(sum, mx, &sum) < 0)
				return 0;
		}
		if (sum >= A[j].s)
			return 0;
		if (ck_mul(p, A[j].s, &p) < 0)
			return 1; /* higher digits of in-range values are all 0 */
	}
	return 1;
}

static int
verify(Arena *a, CuteLayout A, const Mode *Af, int nf, CuteLayout B, CuteLayout R, Err *err)
{
	Mode *b;
	int nb, k, basis = 0;
	int64_t n, i, x, y, z;

	if (flatten(a, B, &b, &nb, err) < 0)
		return -1;
	for (k = 0; k < nb; k++)
		basis |= b[k].d.nb != 0;
	if (nb == 1 || (!basis && no_carries(Af, nf, b, nb)))
		return 0;
	if (cute_tup_size(B.shape, &n, err) < 0)
		return -1;
	if (n > CUTE_MAXPROVE) {
		if (basis)
			return 0; /* distinct basis axes select distinct modes of A */
		return err_set(err, "cute: composition: cannot prove A o B correct: B's modes may "
			       "carry across A's modes and size %lld is past the proof limit %d",
			       (long long)n, CUTE_MAXPROVE);
	}
	for (i = 0; i < n; i++) {
		if (basis) {
			CuteTup *v1, *v2, *c;
			Arena t;
			int rc;

			/* values are trees: a scratch arena per point keeps memory flat */
			arena_init(&t);
			rc = cute_eval_tup(&t, B, i, &c, err) < 0 || cute_eval_tup(&t, R, i, &v1, err) < 0 ||
			     cute_eval_coord(&t, A, c, &v2, err) < 0 ? -1 : cute_tup_equal(v1, v2);
			arena_free(&t);
			if (rc < 0)
				return -1;
			if (!rc)
				goto bad;
			continue;
		}
		if (cute_eval(B, i, &x, err) < 0 || x < 0)
			return x < 0 ? err_set(err, "cute: composition: B maps %lld to a negative "
					       "index", (long long)i) : -1;
		if (cute_eval(A, x, &y, err) < 0 || cute_eval(R, i, &z, err) < 0)
			return -1;
		if (y != z)
			goto bad;
	}
	return 0;
bad:
	return err_set(err, "cute: composition: B's modes carry across A's modes, so A o B is not "
		       "a layout (first wrong at index %lld)", (long long)i);
}

int
cute_compose(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err)
{
	Mode *m;
	int n;
	CuteLayout R;

	if (cute_valid(A, err) < 0 || cute_valid(B, err) < 0)
		return -1;
	if (flatten(a, A, &m, &n, err) < 0)
		return -1;
	if (m[n - 1].s == 1)
		m[n - 1].s = 2; /* coalesce_x: keep the last stride for the extension */
	n = coalesce_modes(m, n);
	if (compose_rec(a, A, m, n, B.shape, B.stride, &R, 0, err) < 0)
		return -1;
	if (verify(a, A, m, n, B, R, err) < 0)
		return -1;
	*out = R;
	return 0;
}

/* an integer tiler n as a layout: make_layout(n) */
static int
int_layout(Arena *a, const CuteTup *t, CuteLayout *out, Err *err)
{
	if (t->x.nb || t->x.v <= 0)
		return err_set(err, "cute: tiler extent must be a positive integer");
	return cute_make_left(a, t, out, err);
}

/* element k of a tiler-like object (TILER or tuple of integers) */
static int
tiler_rank(const CuteObj *B)
{
	return B->k == CUTE_TILER ? B->n : B->t->n;
}

static const CuteObj *
tiler_get(Arena *a, const CuteObj *B, int k)
{
	CuteObj *o;

	if (B->k == CUTE_TILER)
		return B->e[k];
	if (!(o = anew(a, CuteObj)))
		return NULL;
	o->k = CUTE_TUPLE;
	o->t = B->t->e[k];
	return o;
}

static int
is_tiler(const CuteObj *B)
{
	return B->k == CUTE_TILER || (B->k == CUTE_TUPLE && B->t->n >= 0);
}

static int
compose_obj(Arena *a, CuteLayout A, const CuteObj *B, CuteLayout *out, int lvl, Err *err)
{
	int i, r;
	CuteLayout *modes, bl;

	if (!B)
		return err_set(err, "cute: missing tiler");
	if (lvl > CUTE_MAXDEPTH)
		return err_set(err, "cute: tiler nested too deeply");
	switch (B->k) {
	case CUTE_LAYOUT:
		return cute_compose(a, A, B->l, out, err);
	case CUTE_UNDER:
		*out = A;
		return 0;
	case CUTE_SWIZZLE:
	case CUTE_COMPOSED:
		return err_set(err, "cute: cannot compose a layout with a swizzle");
	case CUTE_TUPLE:
		if (B->t->n < 0) {
			if (int_layout(a, B->t, &bl, err) < 0)
				return -1;
			return cute_compose(a, A, bl, out, err);
		}
		break;
	case CUTE_TILER:
		break;
	}
	r = tiler_rank(B);
	if (r > cute_rank(A))
		return err_set(err, "cute: tiler rank %d exceeds layout rank %d", r, cute_rank(A));
	if (!(modes = anewn(a, CuteLayout, r + 1)))
		return OOM(err);
	for (i = 0; i < r; i++) {
		const CuteObj *bk = tiler_get(a, B, i);

		if (!bk)
			return OOM(err);
		if (compose_obj(a, cute_mode(A, i), bk, &modes[i], lvl + 1, err) < 0)
			return -1;
	}
	*out = cute_join(a, r, modes);
	return out->shape ? 0 : OOM(err);
}

int
cute_compose_obj(Arena *a, CuteLayout A, const CuteObj *B, CuteLayout *out, Err *err)
{
	if (cute_valid(A, err) < 0)
		return -1;
	return compose_obj(a, A, B, out, 0, err);
}

int
cute_compose_swizzle(CuteSwizzle sw, CuteLayout l, CuteComposed *out, int *is_layout, Err *err)
{
	if (cute_swizzle_check(sw, err) < 0 || cute_valid(l, err) < 0)
		return -1;
	out->sw = sw;
	out->off = 0;
	out->l = l;
	*is_layout = sw.b == 0;
	return 0;
}

/* ---- complement --------------------------------------------------------------- */

static int
leaves_of(const CuteTup *t, int64_t *v, int *k, int max)
{
	int i;

	if (t->n < 0) {
		if (*k >= max)
			return -1;
		v[(*k)++] = t->x.v;
		return 0;
	}
	for (i = 0; i < t->n; i++)
		if (leaves_of(t->e[i], v, k, max) < 0)
			return -1;
	return 0;
}

/* size(ceil_div(M, c)) with the left fold over M's leaves */
static int
ceil_fold(Arena *a, const CuteTup *M, int64_t c, int64_t *out, Err *err)
{
	int n = nleaves(M), k = 0, i;
	int64_t *v = anewn(a, int64_t, n), p = 1;

	if (!v)
		return OOM(err);
	leaves_of(M, v, &k, n);
	for (i = 0; i < n; i++) {
		if (v[i] <= 0 || M->x.nb)
			return err_set(err, "cute: cotarget extents must be positive integers");
		if (ck_mul(p, ceildiv(v[i], c), &p) < 0)
			return err_set(err, "cute: integer overflow in complement");
		c = ceildiv(c, v[i]);
	}
	*out = p;
	return 0;
}

int
cute_complement(Arena *a, CuteLayout A, const CuteTup *M, CuteLayout *out, Err *err)
{
	CuteLayout F;
	Mode *m, *r;
	int n, i, j, k = 0;
	int64_t cur = 1, rest = 1;

	if (filter_whole(a, A, &F, err) < 0 || flatten(a, F, &m, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (m[i].d.nb)
			return err_set(err, "cute: complement needs integer strides");
		if (m[i].d.v < 0)
			return err_set(err, "cute: complement needs non-negative strides");
	}
	if (!M) {
		int64_t cs;
		CuteTup *t;

		if (cute_cosize(F, &cs, err) < 0)
			return -1;
		if (!(t = cute_int(a, cs)))
			return OOM(err);
		M = t;
	}
	if (!(r = anewn(a, Mode, n + 2)))
		return OOM(err);
	if (n == 1 && m[0].s == 1)
		n = 0; /* F is _1:_0 */
	/* stable selection by stride */
	for (i = 0; i < n; i++) {
		int best = i;
		Mode t;

		for (j = i + 1; j < n; j++)
			if (m[j].d.v < m[best].d.v)
				best = j;
		t = m[best];
		memmove(&m[i + 1], &m[i], sizeof *m * (size_t)(best - i));
		m[i] = t;
		if (m[i].d.v / cur == 0)
			return err_set(err, "cute: non-injective layout detected in complement");
		r[k].s = m[i].d.v / cur;
		r[k].d = zero_int;
		r[k].d.v = cur;
		k++;
		if (ck_mul(m[i].d.v, m[i].s, &cur) < 0)
			return err_set(err, "cute: integer overflow in complement");
	}
	if (ceil_fold(a, M, cur, &rest, err) < 0)
		return -1;
	r[k].s = rest;
	r[k].d = zero_int;
	r[k].d.v = cur;
	k++;
	k = coalesce_modes(r, k);
	return build(a, r, k, out, err);
}

/* ---- inverses ------------------------------------------------------------------ */

/* coalesce, reject basis strides, and give column-major prefix products */
static int
coalesced(Arena *a, CuteLayout l, const char *op, Mode **m, int *n, int64_t **pre, Err *err)
{
	int i;
	int64_t p = 1;

	if (flatten(a, l, m, n, err) < 0)
		return -1;
	*n = coalesce_modes(*m, *n);
	if (!(*pre = anewn(a, int64_t, *n + 1)))
		return OOM(err);
	for (i = 0; i < *n; i++) {
		if ((*m)[i].d.nb)
			return err_set(err, "cute: %s needs integer strides", op);
		(*pre)[i] = p;
		if (ck_mul(p, (*m)[i].s, &p) < 0)
			return err_set(err, "cute: integer overflow in %s", op);
	}
	return 0;
}

/* indices of modes sorted by stride (stable) */
static int *
sorted(Arena *a, const Mode *m, int n)
{
	int *ix = anewn(a, int, n + 1), i, j;

	if (!ix)
		return NULL;
	for (i = 0; i < n; i++) {
		int t = i;

		for (j = i; j > 0 && m[ix[j - 1]].d.v > m[t].d.v; j--)
			ix[j] = ix[j - 1];
		ix[j] = t;
	}
	return ix;
}

int
cute_right_inverse(Arena *a, CuteLayout l, CuteLayout *out, Err *err)
{
	Mode *m, *r;
	int64_t *pre, cur = 1;
	int n, *ix, i, k = 0;

	if (coalesced(a, l, "right_inverse", &m, &n, &pre, err) < 0)
		return -1;
	if (!(ix = sorted(a, m, n)) || !(r = anewn(a, Mode, n + 1)))
		return OOM(err);
	for (i = 0; i < n; i++) {
		Mode *x = &m[ix[i]];

		if (x->d.v != cur)
			continue;
		r[k].s = x->s;
		r[k].d = zero_int;
		r[k].d.v = pre[ix[i]];
		k++;
		if (ck_mul(x->s, x->d.v, &cur) < 0)
			return err_set(err, "cute: integer overflow in right_inverse");
	}
	k = coalesce_modes(r, k);
	return build(a, r, k, out, err);
}

int
cute_left_inverse(Arena *a, CuteLayout l, CuteLayout *out, Err *err)
{
	Mode *m, *r;
	int64_t *pre, prev = 1;
	int n, *ix, i, k = 0, last = -1;

	if (coalesced(a, l, "left_inverse", &m, &n, &pre, err) < 0)
		return -1;
	if (!(ix = sorted(a, m, n)) || !(r = anewn(a, Mode, n + 2)))
		return OOM(err);
	for (i = 0; i < n; i++) {
		Mode *x = &m[ix[i]];

		if (x->d.v < 0)
			return err_set(err, "cute: left_inverse needs non-negative strides");
		if (x->d.v == 0)
			continue;
		if (x->d.v % prev != 0)
			return err_set(err, "cute: left inverse divisibility condition violated "
				       "(stride %lld after %lld)", (long long)x->d.v, (long long)prev);
		r[k].s = x->d.v / prev;
		r[k].d = zero_int;
		r[k].d.v = k == 0 ? 0 : pre[last];
		k++;
		prev = x->d.v;
		last = ix[i];
	}
	if (last >= 0) {
		r[k].s = m[last].s;
		r[k].d = zero_int;
		r[k].d.v = pre[last];
		k++;
	}
	k = coalesce_modes(r, k);
	return build(a, r, k, out, err);
}

/* ---- divides and products -------------------------------------------------------- */

typedef int (*Binop)(Arena *, CuteLayout, CuteLayout, CuteLayout *, Err *);

static int
divide1(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err)
{
	CuteLayout cA, pair[2];

	if (cute_coalesce(a, A, NULL, &cA, err) < 0)
		return -1;
	pair[0] = B;
	if (cute_complement(a, B, cA.shape, &pair[1], err) < 0)
		return -1;
	return cute_compose(a, A, cute_join(a, 2, pair), out, err);
}

static int
product1(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err)
{
	CuteLayout pair[2], c;
	int64_t sa, cb, m;
	CuteTup *M;

	if (cute_size(A, &sa, err) < 0 || cute_cosize(B, &cb, err) < 0)
		return -1;
	if (ck_mul(sa, cb, &m) < 0)
		return err_set(err, "cute: integer overflow in logical_product");
	if (!(M = cute_int(a, m)))
		return OOM(err);
	pair[0] = A;
	if (cute_complement(a, A, M, &c, err) < 0 || cute_compose(a, c, B, &pair[1], err) < 0)
		return -1;
	*out = cute_join(a, 2, pair);
	return out->shape ? 0 : OOM(err);
}

/* by-mode application; A's modes beyond the tiler are kept */
static int
apply(Arena *a, Binop f, CuteLayout A, const CuteObj *B, CuteLayout *out, int lvl, Err *err)
{
	CuteLayout bl, *modes;
	int i, r, ra;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(err, "cute: tiler nested too deeply");
	switch (B->k) {
	case CUTE_LAYOUT:
		return f(a, A, B->l, out, err);
	case CUTE_TUPLE:
		if (B->t->n < 0) {
			if (int_layout(a, B->t, &bl, err) < 0)
				return -1;
			return f(a, A, bl, out, err);
		}
		break;
	case CUTE_TILER:
		break;
	case CUTE_UNDER:
		*out = A; /* `_` keeps the mode */
		return 0;
	default:
		return err_set(err, "cute: tiler element must be a layout, an integer or a tuple");
	}
	r = tiler_rank(B);
	ra = cute_rank(A);
	if (r > ra)
		return err_set(err, "cute: tiler rank %d exceeds layout rank %d", r, ra);
	if (!(modes = anewn(a, CuteLayout, ra + 1)))
		return OOM(err);
	for (i = 0; i < ra; i++) {
		const CuteObj *bk;

		modes[i] = cute_mode(A, i);
		if (i >= r)
			continue;
		if (!(bk = tiler_get(a, B, i)))
			return OOM(err);
		if (apply(a, f, cute_mode(A, i), bk, &modes[i], lvl + 1, err) < 0)
			return -1;
	}
	*out = cute_join(a, ra, modes);
	return out->shape ? 0 : OOM(err);
}

/* zip2_by: ((T0,R0),(T1,R1),X...) -> ((T0,T1),(R0,R1,X...)) guided by the tiler */
static int
zip2(Arena *a, CuteLayout L, const CuteObj *B, CuteLayout *t, CuteLayout *r, int lvl, Err *err)
{
	CuteLayout *ts, *rs;
	int i, n, ra;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(err, "cute: tiler nested too deeply");
	if (!is_tiler(B)) {
		if (cute_rank(L) != 2 || L.shape->n < 0)
			return err_set(err, "cute: zip2_by needs a rank-2 mode");
		*t = cute_mode(L, 0);
		*r = cute_mode(L, 1);
		return 0;
	}
	n = tiler_rank(B);
	ra = cute_rank(L);
	if (L.shape->n < 0 || n > ra)
		return err_set(err, "cute: zip2_by: tiler does not match the layout");
	ts = anewn(a, CuteLayout, n + 1);
	rs = anewn(a, CuteLayout, ra + 1);
	if (!ts || !rs)
		return OOM(err);
	for (i = 0; i < ra; i++) {
		const CuteObj *bk;

		if (i >= n) {
			rs[i] = cute_mode(L, i);
			continue;
		}
		if (!(bk = tiler_get(a, B, i)))
			return OOM(err);
		if (zip2(a, cute_mode(L, i), bk, &ts[i], &rs[i], lvl + 1, err) < 0)
			return -1;
	}
	*t = cute_join(a, n, ts);
	*r = cute_join(a, ra, rs);
	return t->shape && r->shape ? 0 : OOM(err);
}

/* C++ slicing with rank(m) underscores: a rank >= 2 tuple mode is spliced, else kept */
static int
splice(const CuteLayout m, CuteLayout *dst, int k)
{
	int i;

	if (m.shape->n >= 2) {
		for (i = 0; i < m.shape->n; i++)
			dst[k++] = cute_mode(m, i);
		return k;
	}
	dst[k++] = m;
	return k;
}

static int
group(Arena *a, CuteGroup g, CuteLayout L, const CuteObj *B, CuteLayout *out, Err *err)
{
	CuteLayout t, r, *modes;
	int k = 0;

	if (g == CUTE_LOGICAL) {
		*out = L;
		return 0;
	}
	if (is_tiler(B)) {
		CuteLayout pair[2];

		if (zip2(a, L, B, &t, &r, 0, err) < 0)
			return -1;
		pair[0] = t;
		pair[1] = r;
		L = cute_join(a, 2, pair);
		if (!L.shape)
			return OOM(err);
	}
	if (g == CUTE_ZIPPED) {
		*out = L;
		return 0;
	}
	t = cute_mode(L, 0);
	r = cute_mode(L, 1);
	if (!(modes = anewn(a, CuteLayout, cute_rank(t) + cute_rank(r) + 1)))
		return OOM(err);
	if (g == CUTE_TILED)
		modes[k++] = t;
	else
		k = splice(t, modes, k);
	k = splice(r, modes, k);
	*out = cute_join(a, k, modes);
	return out->shape ? 0 : OOM(err);
}

static int
divprod(Arena *a, Binop f, CuteGroup g, CuteLayout A, const CuteObj *B, CuteLayout *out, Err *err)
{
	CuteLayout L;

	if (!B)
		return err_set(err, "cute: missing tiler");
	if (cute_valid(A, err) < 0 || apply(a, f, A, B, &L, 0, err) < 0)
		return -1;
	return group(a, g, L, B, out, err);
}

int
cute_divide(Arena *a, CuteGroup g, CuteLayout A, const CuteObj *B, CuteLayout *out, Err *err)
{
	return divprod(a, divide1, g, A, B, out, err);
}

int
cute_product(Arena *a, CuteGroup g, CuteLayout A, const CuteObj *B, CuteLayout *out, Err *err)
{
	return divprod(a, product1, g, A, B, out, err);
}

/* pad to rank r with _1:_0 modes */
static int
pad(Arena *a, CuteLayout l, int r, CuteLayout *out, Err *err)
{
	CuteLayout *m;
	int i, n = cute_rank(l);

	if (!(m = anewn(a, CuteLayout, r)))
		return OOM(err);
	for (i = 0; i < r; i++) {
		if (i < n) {
			m[i] = cute_mode(l, i);
		} else {
			m[i].shape = cute_int(a, 1);
			m[i].stride = cute_int(a, 0);
		}
	}
	*out = cute_join(a, r, m);
	return out->shape ? 0 : OOM(err);
}

static int
blockrake(Arena *a, CuteLayout A, CuteLayout B, int raked, CuteLayout *out, Err *err)
{
	CuteLayout pa = A, pb = B, P, *modes, pair[2];
	int ra, rb, r, i;

	if (cute_valid(A, err) < 0 || cute_valid(B, err) < 0)
		return -1;
	ra = cute_rank(A);
	rb = cute_rank(B);
	r = ra > rb ? ra : rb;
	if (r == 1 && (A.shape->n < 0) != (B.shape->n < 0))
		return err_set(err, "cute: blocked/raked product of a rank-1 tuple layout and a "
			       "scalar layout");
	if (r > 1 && (pad(a, A, r, &pa, err) < 0 || pad(a, B, r, &pb, err) < 0))
		return -1;
	if (product1(a, pa, pb, &P, err) < 0)
		return -1;
	if (!(modes = anewn(a, CuteLayout, r)))
		return OOM(err);
	for (i = 0; i < r; i++) {
		/* scalar inputs: zip takes each whole side as the one mode */
		pair[raked] = pa.shape->n < 0 ? cute_mode(P, 0) : cute_mode(cute_mode(P, 0), i);
		pair[!raked] = pb.shape->n < 0 ? cute_mode(P, 1) : cute_mode(cute_mode(P, 1), i);
		if (!pair[0].shape || !pair[1].shape)
			return err_set(err, "cute: blocked/raked product: mode mismatch");
		modes[i] = cute_join(a, 2, pair);
		if (!modes[i].shape)
			return OOM(err);
	}
	*out = cute_join(a, r, modes);
	return out->shape ? 0 : OOM(err);
}

int
cute_blocked_product(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err)
{
	return blockrake(a, A, B, 0, out, err);
}

int
cute_raked_product(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err)
{
	return blockrake(a, A, B, 1, out, err);
}

int
cute_with_shape(Arena *a, CuteLayout l, const CuteTup *shape, CuteLayout *out, Err *err)
{
	CuteLayout s;

	if (cute_make_left(a, shape, &s, err) < 0)
		return -1;
	return cute_compose(a, l, s, out, err);
}

int
cute_restrict(Arena *a, CuteLayout l, const CuteTup *idx, CuteLayout *out, Err *err)
{
	CuteLayout *m;
	int i, n;

	if (cute_valid(l, err) < 0)
		return -1;
	if (!idx)
		return err_set(err, "cute: restrict: missing mode list");
	if (idx->n < 0) {
		if (idx->x.nb || idx->x.v < 0 || idx->x.v >= cute_rank(l))
			return err_set(err, "cute: restrict: mode %lld out of rank %d",
				       (long long)idx->x.v, cute_rank(l));
		*out = cute_mode(l, (int)idx->x.v);
		return 0;
	}
	n = idx->n;
	if (!(m = anewn(a, CuteLayout, n + 1)))
		return OOM(err);
	for (i = 0; i < n; i++) {
		const CuteTup *e = idx->e[i];

		if (e->n >= 0 || e->x.nb || e->x.v < 0 || e->x.v >= cute_rank(l))
			return err_set(err, "cute: restrict: mode index out of rank %d", cute_rank(l));
		m[i] = cute_mode(l, (int)e->x.v);
	}
	*out = cute_join(a, n, m);
	return out->shape ? 0 : OOM(err);
}
