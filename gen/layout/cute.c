/*
 * cute.c: CuTe objects: IntTuple trees, layouts, swizzles and composed
 * layouts; their construction, evaluation, parsing and printing in the exact
 * C++ CuTe spelling (`((_2,_2),_8):((_1,_4),_2)`, `Sw<3,4,3> o _0 o L`).
 * The algebra is in cute_ops.c.
 */
#include <string.h>

#include "cute.h"

/* ---- construction --------------------------------------------------------- */

CuteTup *
cute_int(Arena *a, int64_t v)
{
	CuteTup *t = anew(a, CuteTup);

	if (!t)
		return NULL;
	t->n = -1;
	t->x.v = v;
	return t;
}

CuteTup *
cute_leaf(Arena *a, CuteInt x)
{
	CuteTup *t = anew(a, CuteTup);

	if (!t)
		return NULL;
	t->n = -1;
	t->x = x;
	if (x.v == 0)
		t->x.nb = 0;
	return t;
}

CuteTup *
cute_tuple(Arena *a, int n)
{
	CuteTup *t = anew(a, CuteTup);

	if (!t)
		return NULL;
	t->n = n;
	if (n > 0 && !(t->e = anewn(a, CuteTup *, n)))
		return NULL;
	return t;
}

CuteTup *
cute_tup_copy(Arena *a, const CuteTup *t)
{
	CuteTup *r;
	int i;

	if (!t)
		return NULL;
	if (t->n < 0)
		return cute_leaf(a, t->x);
	if (!(r = cute_tuple(a, t->n)))
		return NULL;
	for (i = 0; i < t->n; i++)
		if (!(r->e[i] = cute_tup_copy(a, t->e[i])))
			return NULL;
	return r;
}

static int
int_equal(CuteInt x, CuteInt y)
{
	return x.v == y.v && x.nb == y.nb && !memcmp(x.b, y.b, (size_t)x.nb);
}

int
cute_tup_equal(const CuteTup *a, const CuteTup *b)
{
	int i;

	if (!a || !b)
		return a == b;
	if (a->n != b->n)
		return 0;
	if (a->n < 0)
		return int_equal(a->x, b->x);
	for (i = 0; i < a->n; i++)
		if (!cute_tup_equal(a->e[i], b->e[i]))
			return 0;
	return 1;
}

int
cute_congruent(const CuteTup *a, const CuteTup *b)
{
	int i;

	if (!a || !b)
		return 0;
	if ((a->n < 0) != (b->n < 0))
		return 0;
	if (a->n < 0)
		return 1;
	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (!cute_congruent(a->e[i], b->e[i]))
			return 0;
	return 1;
}

int
cute_tup_size(const CuteTup *t, int64_t *out, Err *err)
{
	int64_t p = 1, q;
	int i;

	if (!t)
		return err_set(err, "cute: missing tuple");
	if (t->n < 0) {
		*out = t->x.v;
		return 0;
	}
	for (i = 0; i < t->n; i++) {
		if (cute_tup_size(t->e[i], &q, err) < 0)
			return -1;
		if (ck_mul(p, q, &p) < 0)
			return err_set(err, "cute: integer overflow in size");
	}
	*out = p;
	return 0;
}

int
cute_tup_rank(const CuteTup *t)
{
	return !t || t->n < 0 ? 1 : t->n;
}

int
cute_tup_depth(const CuteTup *t)
{
	int i, d = 0, x;

	if (!t || t->n < 0)
		return 0;
	for (i = 0; i < t->n; i++)
		if ((x = cute_tup_depth(t->e[i])) > d)
			d = x;
	return d + 1;
}

const CuteTup *
cute_tup_get(const CuteTup *t, int i)
{
	if (!t)
		return NULL;
	if (t->n < 0)
		return i == 0 ? t : NULL;
	return i >= 0 && i < t->n ? t->e[i] : NULL;
}

CuteLayout
cute_make(CuteTup *shape, CuteTup *stride)
{
	CuteLayout l = {shape, stride};

	return l;
}

CuteLayout
cute_join(Arena *a, int n, const CuteLayout *modes)
{
	CuteLayout l = {cute_tuple(a, n), cute_tuple(a, n)};
	int i;

	if (!l.shape || !l.stride)
		return (CuteLayout){NULL, NULL};
	for (i = 0; i < n; i++) {
		l.shape->e[i] = modes[i].shape;
		l.stride->e[i] = modes[i].stride;
	}
	return l;
}

/* strides for make_layout: walk leaves in order (dir 1) or reverse (dir -1) */
static CuteTup *
prefix(Arena *a, const CuteTup *s, int64_t *p, int dir, int *bad)
{
	CuteTup *r;
	int i, k;

	if (s->n < 0) {
		r = cute_int(a, s->x.v == 1 ? 0 : *p);
		if (ck_mul(*p, s->x.v, p) < 0)
			*bad = 1;
		return r;
	}
	if (!(r = cute_tuple(a, s->n)))
		return NULL;
	for (k = 0; k < s->n; k++) {
		i = dir > 0 ? k : s->n - 1 - k;
		if (!(r->e[i] = prefix(a, s->e[i], p, dir, bad)))
			return NULL;
	}
	return r;
}

static int
check_shape(const CuteTup *s, Err *err)
{
	int i;

	if (!s)
		return err_set(err, "cute: missing shape");
	if (s->n < 0) {
		if (s->x.nb)
			return err_set(err, "cute: a shape cannot hold a basis element");
		if (s->x.v <= 0)
			return err_set(err, "cute: shape extent %lld is not positive",
				       (long long)s->x.v);
		return 0;
	}
	for (i = 0; i < s->n; i++)
		if (check_shape(s->e[i], err) < 0)
			return -1;
	return 0;
}

static int
make_dir(Arena *a, const CuteTup *shape, int dir, CuteLayout *out, Err *err)
{
	int64_t p = 1;
	int bad = 0;

	if (check_shape(shape, err) < 0)
		return -1;
	out->shape = cute_tup_copy(a, shape);
	out->stride = prefix(a, shape, &p, dir, &bad);
	if (!out->shape || !out->stride)
		return err_set(err, "cute: out of memory");
	if (bad)
		return err_set(err, "cute: integer overflow in make_layout");
	return 0;
}

int
cute_make_left(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err)
{
	return make_dir(a, shape, 1, out, err);
}

int
cute_make_right(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err)
{
	return make_dir(a, shape, -1, out, err);
}

static CuteTup *
ident(Arena *a, const CuteTup *s, CuteInt base, int lvl)
{
	CuteTup *r;
	int i;

	if (s->n < 0)
		return cute_leaf(a, base);
	if (lvl >= CUTE_MAXBASIS || !(r = cute_tuple(a, s->n)))
		return NULL;
	for (i = 0; i < s->n; i++) {
		CuteInt x = base;

		x.b[x.nb++] = (uint8_t)i;
		if (!(r->e[i] = ident(a, s->e[i], x, lvl + 1)))
			return NULL;
	}
	return r;
}

int
cute_make_identity(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err)
{
	CuteInt one = {1, 0, {0}};
	int i;

	if (check_shape(shape, err) < 0)
		return -1;
	if (shape->n < 0) {
		out->shape = cute_tup_copy(a, shape);
		out->stride = cute_int(a, 1);
		return 0;
	}
	for (i = 0; i < shape->n; i++)
		if (shape->e[i]->n >= 0)
			return err_set(err, "cute: identity layout of a nested shape is not supported");
	out->shape = cute_tup_copy(a, shape);
	out->stride = ident(a, shape, one, 0);
	if (!out->shape || !out->stride)
		return err_set(err, "cute: identity layout too deep");
	return 0;
}

/* ---- queries -------------------------------------------------------------- */

int
cute_valid(CuteLayout l, Err *err)
{
	if (!l.shape || !l.stride)
		return err_set(err, "cute: missing layout");
	if (!cute_congruent(l.shape, l.stride))
		return err_set(err, "cute: shape and stride are not congruent");
	return check_shape(l.shape, err);
}

int
cute_size(CuteLayout l, int64_t *out, Err *err)
{
	if (cute_valid(l, err) < 0)
		return -1;
	return cute_tup_size(l.shape, out, err);
}

static int
cosize_acc(const CuteTup *s, const CuteTup *d, int64_t *acc, Err *err)
{
	int64_t t, ad;
	int i;

	if (s->n < 0) {
		if (d->x.nb)
			return err_set(err, "cute: cosize needs integer strides");
		if (d->x.v == INT64_MIN)
			return err_set(err, "cute: integer overflow in cosize");
		ad = d->x.v < 0 ? -d->x.v : d->x.v;
		if (ck_mul(s->x.v - 1, ad, &t) < 0 || ck_add(*acc, t, acc) < 0)
			return err_set(err, "cute: integer overflow in cosize");
		return 0;
	}
	for (i = 0; i < s->n; i++)
		if (cosize_acc(s->e[i], d->e[i], acc, err) < 0)
			return -1;
	return 0;
}

int
cute_cosize(CuteLayout l, int64_t *out, Err *err)
{
	int64_t acc = 1;

	if (cute_valid(l, err) < 0 || cosize_acc(l.shape, l.stride, &acc, err) < 0)
		return -1;
	*out = acc;
	return 0;
}

int
cute_rank(CuteLayout l)
{
	return cute_tup_rank(l.shape);
}

int
cute_depth(CuteLayout l)
{
	return cute_tup_depth(l.shape);
}

CuteLayout
cute_mode(CuteLayout l, int i)
{
	CuteLayout r = {(CuteTup *)cute_tup_get(l.shape, i), (CuteTup *)cute_tup_get(l.stride, i)};

	return r;
}

/* ---- evaluation ------------------------------------------------------------ */

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

/* acc += x (an integer or a basis element) into an arithmetic tuple */
static int
atup_add(Arena *a, CuteTup **acc, CuteInt x, int lvl, Err *err)
{
	CuteTup *t = *acc;
	int i, idx;

	if (x.v == 0 && x.nb == 0)
		return 0; /* a zero basis term still shapes the tuple: (0,0), not 0 */
	if (lvl == x.nb) {
		if (!t) {
			*acc = cute_int(a, x.v);
			return *acc ? 0 : err_set(err, "cute: out of memory");
		}
		if (t->n >= 0)
			return err_set(err, "cute: adding an integer to a coordinate tuple");
		if (ck_add(t->x.v, x.v, &t->x.v) < 0)
			return err_set(err, "cute: integer overflow in evaluation");
		return 0;
	}
	idx = x.b[lvl];
	if (t && t->n < 0) {
		if (t->x.v != 0)
			return err_set(err, "cute: adding a basis element to an integer");
		t = NULL;
	}
	if (!t || t->n <= idx) {
		CuteTup *g = cute_tuple(a, idx + 1);

		if (!g)
			return err_set(err, "cute: out of memory");
		for (i = 0; i <= idx; i++)
			g->e[i] = t && i < t->n ? t->e[i] : cute_int(a, 0);
		t = g;
	}
	*acc = t;
	return atup_add(a, &t->e[idx], x, lvl + 1, err);
}

/* the walk of a flattened evaluation: rem is split mode by mode, the last takes the rest */
typedef struct Ev {
	Arena *a;
	CuteTup **acc;  /* NULL: integer result in ival */
	int64_t rem, ival;
	int k, n;
	Err *err;
} Ev;

static int
ev_walk(Ev *ev, const CuteTup *s, const CuteTup *d)
{
	int64_t c, t;
	int i;

	if (s->n >= 0) {
		for (i = 0; i < s->n; i++)
			if (ev_walk(ev, s->e[i], d->e[i]) < 0)
				return -1;
		return 0;
	}
	if (++ev->k == ev->n) {
		c = ev->rem;
	} else {
		c = ev->rem % s->x.v;
		ev->rem /= s->x.v;
	}
	if (ck_mul(c, d->x.v, &t) < 0)
		return err_set(ev->err, "cute: integer overflow in evaluation");
	if (ev->acc) {
		CuteInt x = d->x;

		x.v = t;
		return atup_add(ev->a, ev->acc, x, 0, ev->err);
	}
	if (d->x.nb && t != 0)
		return err_set(ev->err, "cute: layout has basis strides; its value is a tuple");
	if (ck_add(ev->ival, t, &ev->ival) < 0)
		return err_set(ev->err, "cute: integer overflow in evaluation");
	return 0;
}

static int
eval_terms(CuteLayout l, int64_t i, Arena *a, CuteTup **acc, int64_t *ival, Err *err)
{
	Ev ev = {a, acc, i, 0, 0, 0, err};

	if (cute_valid(l, err) < 0)
		return -1;
	if (i < 0)
		return err_set(err, "cute: negative index %lld", (long long)i);
	ev.n = nleaves(l.shape);
	if (ev_walk(&ev, l.shape, l.stride) < 0)
		return -1;
	*ival = ev.ival;
	return 0;
}

int
cute_eval(CuteLayout l, int64_t i, int64_t *out, Err *err)
{
	return eval_terms(l, i, NULL, NULL, out, err);
}

int
cute_eval_tup(Arena *a, CuteLayout l, int64_t i, CuteTup **out, Err *err)
{
	int64_t dummy;

	*out = NULL;
	if (eval_terms(l, i, a, out, &dummy, err) < 0)
		return -1;
	if (!*out && !(*out = cute_int(a, 0)))
		return err_set(err, "cute: out of memory");
	return 0;
}

static int
eval_coord(Arena *a, CuteLayout l, const CuteTup *c, CuteTup **acc, int lvl, Err *err)
{
	int64_t dummy;
	int i;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(err, "cute: coordinate nested too deeply");
	if (c->n < 0) {
		if (c->x.nb)
			return err_set(err, "cute: a coordinate cannot hold a basis element");
		return eval_terms(l, c->x.v, a, acc, &dummy, err);
	}
	/* missing trailing coordinates are 0 (an ArithmeticTuple may be short) */
	if (l.shape->n < 0 || l.shape->n < c->n)
		return err_set(err, "cute: coordinate is not congruent with the shape");
	for (i = 0; i < c->n; i++)
		if (eval_coord(a, cute_mode(l, i), c->e[i], acc, lvl + 1, err) < 0)
			return -1;
	return 0;
}

int
cute_eval_coord(Arena *a, CuteLayout l, const CuteTup *coord, CuteTup **out, Err *err)
{
	*out = NULL;
	if (!coord)
		return err_set(err, "cute: missing coordinate");
	if (cute_valid(l, err) < 0 || eval_coord(a, l, coord, out, 0, err) < 0)
		return -1;
	if (!*out && !(*out = cute_int(a, 0)))
		return err_set(err, "cute: out of memory");
	return 0;
}

/* ---- swizzle ---------------------------------------------------------------- */

int
cute_swizzle_check(CuteSwizzle sw, Err *err)
{
	int as = sw.s < 0 ? -sw.s : sw.s;

	if (sw.b < 0 || sw.m < 0 || as < sw.b)
		return err_set(err, "cute: invalid swizzle Sw<%d,%d,%d> (need B >= 0, M >= 0, |S| >= B)",
			       sw.b, sw.m, sw.s);
	if (sw.b + sw.m + as > 62)
		return err_set(err, "cute: swizzle Sw<%d,%d,%d> too wide", sw.b, sw.m, sw.s);
	return 0;
}

int64_t
cute_swizzle_apply(CuteSwizzle sw, int64_t x)
{
	uint64_t mask = ((uint64_t)1 << sw.b) - 1;
	uint64_t ux = (uint64_t)x;
	uint64_t y = mask << (sw.m + (sw.s > 0 ? sw.s : 0));
	uint64_t sel = ux & y;

	sel = sw.s >= 0 ? sel >> sw.s : sel << -sw.s;
	return (int64_t)(ux ^ sel);
}

int
cute_composed_eval(const CuteComposed *c, int64_t i, int64_t *out, Err *err)
{
	int64_t v;

	if (cute_swizzle_check(c->sw, err) < 0 || cute_eval(c->l, i, &v, err) < 0)
		return -1;
	if (ck_add(v, c->off, &v) < 0)
		return err_set(err, "cute: integer overflow in evaluation");
	if (v < 0)
		return err_set(err, "cute: swizzle of a negative offset %lld", (long long)v);
	*out = cute_swizzle_apply(c->sw, v);
	return 0;
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct P {
	Arena *a;
	const char *s, *p;
	Err *err;
} P;

static void
ws(P *p)
{
	while (*p->p == ' ' || *p->p == '\t' || *p->p == '\n' || *p->p == '\r')
		p->p++;
}

static int
perr(P *p, const char *what)
{
	if (!*p->p)
		return err_set(p->err, "cute: parse error at end of input: expected %s", what);
	return err_set(p->err, "cute: parse error at column %d: expected %s near '%.12s'",
		       (int)(p->p - p->s) + 1, what, p->p);
}

static int
isdig(int c)
{
	return c >= '0' && c <= '9';
}

/* an integer: `_N`, `N`, `_-N`, `-N`; under set when a bare `_` */
static int
pint(P *p, int64_t *v, int *under)
{
	int neg = 0, us = 0;
	int64_t x = 0;

	ws(p);
	*under = 0;
	if (*p->p == '_') {
		us = 1;
		p->p++;
	}
	if (*p->p == '-') {
		neg = 1;
		p->p++;
	}
	if (!isdig(*p->p)) {
		if (us && !neg) {
			*under = 1;
			return 0;
		}
		return perr(p, "an integer");
	}
	while (isdig(*p->p)) {
		if (ck_mul(x, 10, &x) < 0 || ck_add(x, *p->p - '0', &x) < 0)
			return err_set(p->err, "cute: integer overflow in literal at column %d",
				       (int)(p->p - p->s) + 1);
		p->p++;
	}
	*v = neg ? -x : x;
	return 0;
}

/* a leaf of a stride: integer with optional @i@j basis suffix */
static int
pleaf(P *p, CuteInt *x, int *under)
{
	int64_t v, k;
	int u, n = 0, i;
	uint8_t tmp[CUTE_MAXBASIS];

	memset(x, 0, sizeof *x);
	if (pint(p, &v, under) < 0)
		return -1;
	if (*under)
		return 0;
	x->v = v;
	while (ws(p), *p->p == '@') {
		p->p++;
		if (pint(p, &k, &u) < 0)
			return -1;
		if (u || k < 0 || k > 255)
			return perr(p, "a basis index 0..255 after '@'");
		if (n >= CUTE_MAXBASIS)
			return err_set(p->err, "cute: basis path longer than %d", CUTE_MAXBASIS);
		tmp[n++] = (uint8_t)k;
	}
	x->nb = n;
	for (i = 0; i < n; i++)
		x->b[i] = tmp[n - 1 - i];
	if (x->v == 0)
		x->nb = 0;
	return 0;
}

/* a generic term: a CuteObj of kind TUPLE, LAYOUT, TILER or UNDER */
static int pterm(P *p, CuteObj **out, int lvl);

static CuteObj *
obj(P *p, CuteKind k)
{
	CuteObj *o = anew(p->a, CuteObj);

	if (o)
		o->k = k;
	return o;
}

/* a stride tree congruent with shape */
static int
pstride(P *p, const CuteTup *shape, CuteTup **out, int lvl)
{
	int i, u;
	CuteInt x;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(p->err, "cute: nesting deeper than %d", CUTE_MAXDEPTH);
	ws(p);
	if (shape->n < 0) {
		if (*p->p == '(')
			return perr(p, "a stride leaf congruent with the shape");
		if (pleaf(p, &x, &u) < 0)
			return -1;
		if (u)
			return perr(p, "an integer stride");
		if (!(*out = cute_leaf(p->a, x)))
			return err_set(p->err, "cute: out of memory");
		return 0;
	}
	if (*p->p != '(')
		return perr(p, "'(' (stride congruent with the shape)");
	p->p++;
	if (!(*out = cute_tuple(p->a, shape->n)))
		return err_set(p->err, "cute: out of memory");
	for (i = 0; i < shape->n; i++) {
		if (i > 0) {
			ws(p);
			if (*p->p != ',')
				return perr(p, "',' (stride congruent with the shape)");
			p->p++;
		}
		if (pstride(p, shape->e[i], &(*out)->e[i], lvl + 1) < 0)
			return -1;
	}
	ws(p);
	if (*p->p != ')')
		return perr(p, "')' (stride congruent with the shape)");
	p->p++;
	return 0;
}

static int
pterm(P *p, CuteObj **out, int lvl)
{
	CuteObj *o;
	int u, n = 0, cap = 0, i, anylayout = 0;
	CuteObj **el = NULL;
	CuteInt x;

	if (lvl > CUTE_MAXDEPTH)
		return err_set(p->err, "cute: nesting deeper than %d", CUTE_MAXDEPTH);
	ws(p);
	if (*p->p == '(') {
		p->p++;
		ws(p);
		if (*p->p == ')')
			return perr(p, "a tuple element");
		for (;;) {
			CuteObj *e;

			if (pterm(p, &e, lvl + 1) < 0)
				return -1;
			if (n == cap) {
				int nc = cap ? cap * 2 : 4;

				el = arena_realloc(p->a, el, sizeof *el * (size_t)cap, sizeof *el * (size_t)nc);
				if (!el)
					return err_set(p->err, "cute: out of memory");
				cap = nc;
			}
			el[n++] = e;
			ws(p);
			if (*p->p == ',') {
				p->p++;
				continue;
			}
			if (*p->p == ')') {
				p->p++;
				break;
			}
			return perr(p, "',' or ')'");
		}
		for (i = 0; i < n; i++)
			if (el[i]->k != CUTE_TUPLE)
				anylayout = 1;
		if (anylayout) {
			if (!(o = obj(p, CUTE_TILER)))
				return err_set(p->err, "cute: out of memory");
			o->n = n;
			o->e = el;
		} else {
			if (!(o = obj(p, CUTE_TUPLE)) || !(o->t = cute_tuple(p->a, n)))
				return err_set(p->err, "cute: out of memory");
			for (i = 0; i < n; i++)
				o->t->e[i] = el[i]->t;
		}
	} else {
		if (pleaf(p, &x, &u) < 0)
			return -1;
		if (u) {
			if (!(o = obj(p, CUTE_UNDER)))
				return err_set(p->err, "cute: out of memory");
			*out = o;
			return 0;
		}
		if (!(o = obj(p, CUTE_TUPLE)) || !(o->t = cute_leaf(p->a, x)))
			return err_set(p->err, "cute: out of memory");
	}
	ws(p);
	if (*p->p == ':') {
		const char *at = p->p;

		if (o->k != CUTE_TUPLE) {
			p->p = at;
			return perr(p, "a shape of integers before ':'");
		}
		if (check_shape(o->t, p->err) < 0)
			return -1;
		p->p++;
		o->k = CUTE_LAYOUT;
		o->l.shape = o->t;
		o->t = NULL;
		if (pstride(p, o->l.shape, &o->l.stride, lvl) < 0)
			return -1;
	} else if (o->k == CUTE_TUPLE && cute_tup_depth(o->t) == 0 && o->t->x.nb) {
		return perr(p, "':' (a basis element is a stride)");
	}
	*out = o;
	return 0;
}

static int
pword(P *p, const char *w)
{
	size_t n = strlen(w);

	ws(p);
	if (strncmp(p->p, w, n))
		return 0;
	p->p += n;
	return 1;
}

static int
pswizzle(P *p, CuteSwizzle *sw)
{
	int64_t v[3];
	int i, u;

	for (i = 0; i < 3; i++) {
		if (i && !pword(p, ","))
			return perr(p, "',' in the swizzle");
		if (pint(p, &v[i], &u) < 0)
			return -1;
		if (u || v[i] < -64 || v[i] > 64)
			return perr(p, "a small swizzle parameter");
	}
	if (!pword(p, ">"))
		return perr(p, "'>'");
	sw->b = (int)v[0];
	sw->m = (int)v[1];
	sw->s = (int)v[2];
	return cute_swizzle_check(*sw, p->err);
}

/* `o` separator: the letter o as its own token */
static int
psep(P *p)
{
	ws(p);
	if (p->p[0] == 'o' && (p->p[1] == ' ' || p->p[1] == '(' || p->p[1] == '_' ||
			       p->p[1] == '-' || isdig(p->p[1]))) {
		p->p++;
		return 1;
	}
	return 0;
}

int
cute_parse(Arena *a, const char *s, CuteObj **out, Err *err)
{
	P p = {a, s, s, err};
	CuteObj *o, *t;

	if (!s)
		return err_set(err, "cute: missing text");
	if (!out)
		return err_set(err, "cute: missing result");
	if (pword(&p, "Sw<") || pword(&p, "Swizzle<")) {
		if (!(o = obj(&p, CUTE_SWIZZLE)))
			return err_set(err, "cute: out of memory");
		if (pswizzle(&p, &o->sw) < 0)
			return -1;
		if (psep(&p)) {
			o->k = CUTE_COMPOSED;
			o->c.sw = o->sw;
			if (pterm(&p, &t, 0) < 0)
				return -1;
			if (psep(&p)) {
				if (t->k != CUTE_TUPLE || t->t->n >= 0 || t->t->x.nb)
					return err_set(err, "cute: composed layout offset must be an integer");
				o->c.off = t->t->x.v;
				if (pterm(&p, &t, 0) < 0)
					return -1;
			}
			if (t->k != CUTE_LAYOUT)
				return err_set(err, "cute: composed layout needs a layout after the swizzle");
			o->c.l = t->l;
		}
	} else if (pterm(&p, &o, 0) < 0) {
		return -1;
	}
	ws(&p);
	if (*p.p)
		return perr(&p, "end of input");
	if (o->k == CUTE_UNDER)
		return err_set(err, "cute: '_' is only allowed inside a tiler");
	*out = o;
	return 0;
}

int
cute_parse_layout(Arena *a, const char *s, CuteLayout *out, Err *err)
{
	CuteObj *o;

	if (cute_parse(a, s, &o, err) < 0)
		return -1;
	if (o->k != CUTE_LAYOUT)
		return err_set(err, "cute: expected a layout shape:stride, got '%.40s'", s);
	*out = o->l;
	return 0;
}

int
cute_parse_tup(Arena *a, const char *s, CuteTup **out, Err *err)
{
	CuteObj *o;

	if (cute_parse(a, s, &o, err) < 0)
		return -1;
	if (o->k != CUTE_TUPLE)
		return err_set(err, "cute: expected an integer tuple, got '%.40s'", s);
	*out = o->t;
	return 0;
}

/* ---- printing --------------------------------------------------------------- */

void
cute_print_int(Buf *b, CuteInt x)
{
	int i;

	buf_printf(b, "_%lld", (long long)x.v);
	for (i = x.nb - 1; i >= 0; i--)
		buf_printf(b, "@%d", x.b[i]);
}

void
cute_print_tup(Buf *b, const CuteTup *t)
{
	int i;

	if (!t) {
		buf_puts(b, "?");
		return;
	}
	if (t->n < 0) {
		cute_print_int(b, t->x);
		return;
	}
	buf_putc(b, '(');
	for (i = 0; i < t->n; i++) {
		if (i)
			buf_putc(b, ',');
		cute_print_tup(b, t->e[i]);
	}
	buf_putc(b, ')');
}

void
cute_print_layout(Buf *b, CuteLayout l)
{
	cute_print_tup(b, l.shape);
	buf_putc(b, ':');
	cute_print_tup(b, l.stride);
}

void
cute_print_swizzle(Buf *b, CuteSwizzle sw)
{
	buf_printf(b, "Sw<%d,%d,%d>", sw.b, sw.m, sw.s);
}

void
cute_print_composed(Buf *b, const CuteComposed *c)
{
	cute_print_swizzle(b, c->sw);
	buf_printf(b, " o _%lld o ", (long long)c->off);
	cute_print_layout(b, c->l);
}

void
cute_print(Buf *b, const CuteObj *o)
{
	int i;

	if (!o) {
		buf_puts(b, "?");
		return;
	}
	switch (o->k) {
	case CUTE_TUPLE:
		cute_print_tup(b, o->t);
		break;
	case CUTE_LAYOUT:
		cute_print_layout(b, o->l);
		break;
	case CUTE_TILER:
		buf_putc(b, '(');
		for (i = 0; i < o->n; i++) {
			if (i)
				buf_putc(b, ',');
			cute_print(b, o->e[i]);
		}
		buf_putc(b, ')');
		break;
	case CUTE_UNDER:
		buf_putc(b, '_');
		break;
	case CUTE_SWIZZLE:
		cute_print_swizzle(b, o->sw);
		break;
	case CUTE_COMPOSED:
		cute_print_composed(b, &o->c);
		break;
	}
}

char *
cute_str(Arena *a, CuteLayout l)
{
	Buf b;
	char *s;

	buf_init(&b);
	cute_print_layout(&b, l);
	s = arena_strdup(a, buf_str(&b));
	buf_free(&b);
	return s;
}
