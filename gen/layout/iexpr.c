/*
 * iexpr.c: integer index expressions: builders with constant folding, a
 * bounds-aware simplifier, interval bounds, evaluation, printing in TVMScript
 * precedence, a parser for that printed form, and compiled flat programs that
 * evaluate expressions over batches of points (used by layout enumeration).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iexpr.h"

static const char *varnames[IEXPR_NVARS] = {
	"_i", "_j", "_k", "_l", "_m", "_n", "_o", "_p",
	"_q", "_r", "_s", "_t", "_u", "_v", "_w", "_x", "_rep",
};

const char *
iexpr_varname(int id)
{
	return id >= 0 && id < IEXPR_NVARS ? varnames[id] : "_?";
}

IExpr *
iexpr_const(Arena *A, int64_t v)
{
	IExpr *e = anew(A, IExpr);

	if (e) {
		e->k = IX_CONST;
		e->v = v;
	}
	return e;
}

IExpr *
iexpr_var(Arena *A, int id)
{
	IExpr *e = anew(A, IExpr);

	if (e) {
		e->k = IX_VAR;
		e->v = id;
	}
	return e;
}

static IExpr *
node(Arena *A, IExprKind k, IExpr *a, IExpr *b, IExpr *c)
{
	IExpr *e;

	if (!a || !b)
		return NULL;
	e = anew(A, IExpr);
	if (e) {
		e->k = k;
		e->a = a;
		e->b = b;
		e->c = c;
	}
	return e;
}

int
iexpr_isconst(const IExpr *e, int64_t *v)
{
	if (!e || e->k != IX_CONST)
		return 0;
	if (v)
		*v = e->v;
	return 1;
}

int
iexpr_same(const IExpr *a, const IExpr *b)
{
	if (a == b)
		return 1;
	if (!a || !b || a->k != b->k)
		return 0;
	if (a->k == IX_CONST || a->k == IX_VAR)
		return a->v == b->v;
	if (a->k == IX_TAB && a->tab != b->tab)
		return 0;
	return iexpr_same(a->a, b->a) && iexpr_same(a->b, b->b) && iexpr_same(a->c, b->c);
}

unsigned
iexpr_vars(const IExpr *e)
{
	if (!e || e->k == IX_CONST)
		return 0;
	if (e->k == IX_VAR)
		return 1u << e->v;
	return iexpr_vars(e->a) | iexpr_vars(e->b) | iexpr_vars(e->c);
}

/* ---- bounds ------------------------------------------------------------- */

static int
bitsof(int64_t v)
{
	int n = 0;

	while (v > 0) {
		n++;
		v >>= 1;
	}
	return n;
}

int
iexpr_bounds(const IExpr *e, const IDom *dom, int64_t *lo, int64_t *hi)
{
	int64_t al, ah, bl, bh, cl, ch, t;

	if (!e)
		return -1;
	switch (e->k) {
	case IX_CONST:
		*lo = *hi = e->v;
		return 0;
	case IX_VAR:
		if (!dom || e->v < 0 || e->v >= IEXPR_NVARS || dom->ext[e->v] <= 0)
			return -1;
		*lo = 0;
		*hi = dom->ext[e->v] - 1;
		return 0;
	case IX_TAB:
		*lo = e->tab->lo;
		*hi = e->tab->hi;
		return 0;
	default:
		break;
	}
	if (iexpr_bounds(e->a, dom, &al, &ah))
		return -1;
	if (e->k == IX_SELECT) {
		if (iexpr_bounds(e->b, dom, &bl, &bh) || iexpr_bounds(e->c, dom, &cl, &ch))
			return -1;
		if (al > 0 || ah < 0) {         /* condition always true */
			*lo = bl, *hi = bh;
			return 0;
		}
		if (al == 0 && ah == 0) {
			*lo = cl, *hi = ch;
			return 0;
		}
		*lo = bl < cl ? bl : cl;
		*hi = bh > ch ? bh : ch;
		return 0;
	}
	if (iexpr_bounds(e->b, dom, &bl, &bh))
		return -1;
	switch (e->k) {
	case IX_ADD:
		return ck_add(al, bl, lo) || ck_add(ah, bh, hi) ? -1 : 0;
	case IX_SUB:
		if (bl == INT64_MIN || bh == INT64_MIN)
			return -1;
		return ck_add(al, -bh, lo) || ck_add(ah, -bl, hi) ? -1 : 0;
	case IX_MUL:
		return ck_interval_mul(al, ah, bl, bh, lo, hi);
	case IX_DIV:
		if (bl > 0 || bh < 0) {
			int64_t q[4] = {floordiv64(al, bl), floordiv64(al, bh), floordiv64(ah, bl),
					floordiv64(ah, bh)};
			int i;

			*lo = *hi = q[0];
			for (i = 1; i < 4; i++) {
				if (q[i] < *lo)
					*lo = q[i];
				if (q[i] > *hi)
					*hi = q[i];
			}
			return 0;
		}
		return -1;
	case IX_MOD:
		if (bl == bh && bl > 0 && floordiv64(al, bl) == floordiv64(ah, bl)) {
			*lo = floormod64(al, bl);
			*hi = floormod64(ah, bl);
			return 0;
		}
		if (bl > 0) {
			*lo = 0;
			*hi = bh - 1;
			if (al >= 0 && ah < *hi)
				*hi = ah;
			return 0;
		}
		if (bh < 0) {
			*lo = bl + 1;
			*hi = 0;
			return 0;
		}
		return -1;
	case IX_XOR:
	case IX_OR:
		if (al < 0 || bl < 0)
			return -1;
		t = ah > bh ? ah : bh;
		*lo = e->k == IX_OR ? (al > bl ? al : bl) : 0;
		*hi = bitsof(t) >= 63 ? INT64_MAX : ((int64_t)1 << bitsof(t)) - 1;
		return 0;
	case IX_AND:
		if (al >= 0 && bl >= 0) {
			*lo = 0;
			*hi = ah < bh ? ah : bh;
			return 0;
		}
		if (al >= 0 || bl >= 0) {
			*lo = 0;
			*hi = al >= 0 ? ah : bh;
			return 0;
		}
		return -1;
	case IX_SHL:
		if (bl < 0 || bh > 62)
			return -1;
		return ck_interval_mul(al, ah, (int64_t)1 << bl, (int64_t)1 << bh, lo, hi);
	case IX_SHR:
		if (bl < 0 || bh > 62)
			return -1;
		*lo = al >= 0 ? al >> bh : al >> bl;
		*hi = ah >= 0 ? ah >> bl : ah >> bh;
		return 0;
	case IX_MIN:
		*lo = al < bl ? al : bl;
		*hi = ah < bh ? ah : bh;
		return 0;
	case IX_MAX:
		*lo = al > bl ? al : bl;
		*hi = ah > bh ? ah : bh;
		return 0;
	case IX_LT: case IX_LE: case IX_EQ: case IX_NE:
		*lo = 0;
		*hi = 1;
		if (e->k == IX_LT ? ah < bl : e->k == IX_LE ? ah <= bl : e->k == IX_NE ? ah < bl || bh < al
		    : al == ah && bl == bh && al == bl)
			*lo = 1;
		else if (e->k == IX_LT ? al >= bh : e->k == IX_LE ? al > bh : e->k == IX_EQ ? ah < bl || bh < al
			 : al == ah && bl == bh && al == bl)
			*hi = 0;
		return 0;
	default:
		return -1;
	}
}

/* ---- evaluation ------------------------------------------------------- */

static int64_t
wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t
wsub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t
wmul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int64_t
shl(int64_t a, int64_t s)
{
	return s < 0 || s > 63 ? 0 : (int64_t)((uint64_t)a << s);
}

static int64_t
shr(int64_t a, int64_t s)
{
	if (s < 0)
		return 0;
	if (s > 63)
		return a < 0 ? -1 : 0;
	return a >> s;
}

/* apply a binary op to constants; -1 on division by zero */
static int
fold(IExprKind k, int64_t a, int64_t b, int64_t *r)
{
	switch (k) {
	case IX_ADD: *r = wadd(a, b); break;
	case IX_SUB: *r = wsub(a, b); break;
	case IX_MUL: *r = wmul(a, b); break;
	case IX_DIV:
		if (!b)
			return -1;
		*r = floordiv64(a, b);
		break;
	case IX_MOD:
		if (!b)
			return -1;
		*r = b == -1 ? 0 : floormod64(a, b);
		break;
	case IX_XOR: *r = a ^ b; break;
	case IX_AND: *r = a & b; break;
	case IX_OR: *r = a | b; break;
	case IX_SHL: *r = shl(a, b); break;
	case IX_SHR: *r = shr(a, b); break;
	case IX_MIN: *r = a < b ? a : b; break;
	case IX_MAX: *r = a > b ? a : b; break;
	case IX_LT: *r = a < b; break;
	case IX_LE: *r = a <= b; break;
	case IX_EQ: *r = a == b; break;
	case IX_NE: *r = a != b; break;
	default: return -1;
	}
	return 0;
}

/*
 * The tree walk behind iexpr_eval: leaves are read in place (no call), the common
 * operators are applied inline, SELECT and the right spine of a chain loop instead of
 * recursing. -1 on division by zero or a null node. Callers evaluate the same trees at
 * many points (the emitter's ownership tables), so this is kept tight.
 * -2 for a null node, -1 on division by zero, -3 for a table index out of range.
 */
static int
ev(const IExpr *e, const int64_t *vals, int64_t *out)
{
	int64_t a, b, q, r;

	for (;;) {
		if (!e)
			return -2;
		switch (e->k) {
		case IX_CONST:
			*out = e->v;
			return 0;
		case IX_VAR:
			*out = vals[e->v];
			return 0;
		case IX_SELECT:
			if ((r = ev(e->a, vals, &a)) != 0)
				return r;
			e = a ? e->b : e->c;
			continue;
		case IX_TAB:
			if ((r = ev(e->a, vals, &a)) != 0)
				return r;
			if (a < 0 || a >= e->tab->n)
				return -3;
			*out = e->tab->v[a];
			return 0;
		default:
			break;
		}
		if (!e->a || !e->b)
			return -2;
		if (e->a->k == IX_CONST)
			a = e->a->v;
		else if (e->a->k == IX_VAR)
			a = vals[e->a->v];
		else if ((r = ev(e->a, vals, &a)) != 0)
			return r;
		if (e->b->k == IX_CONST)
			b = e->b->v;
		else if (e->b->k == IX_VAR)
			b = vals[e->b->v];
		else if ((r = ev(e->b, vals, &b)) != 0)
			return r;
		switch (e->k) {
		case IX_ADD:
			*out = wadd(a, b);
			return 0;
		case IX_SUB:
			*out = wsub(a, b);
			return 0;
		case IX_MUL:
			*out = wmul(a, b);
			return 0;
		case IX_DIV:
			if (b > 0) {
				q = a / b;
				*out = q - (a % b < 0);
				return 0;
			}
			return fold(e->k, a, b, out);
		case IX_MOD:
			if (b > 0) {
				r = a % b;
				*out = r < 0 ? r + b : r;
				return 0;
			}
			return fold(e->k, a, b, out);
		default:
			return fold(e->k, a, b, out);
		}
	}
}

int
iexpr_eval(const IExpr *e, const int64_t *vals, int64_t *out, Err *err)
{
	int r = ev(e, vals, out);

	if (r == -2)
		return err_set(err, "null expression");
	if (r == -3)
		return err_set(err, "table index out of range in an index expression");
	if (r)
		return err_set(err, "division by zero in %s", "index expression");
	return 0;
}

/* ---- builders and simplifier --------------------------------------------- */

static IExpr *mk(Arena *A, IExprKind k, IExpr *a, IExpr *b, const IDom *dom);

/* e = base + c with a constant c (base NULL when e is a constant) */
static void
splitc(IExpr *e, IExpr **base, int64_t *c)
{
	if (e->k == IX_CONST) {
		*base = NULL;
		*c = e->v;
	} else if (e->k == IX_ADD && e->b->k == IX_CONST) {
		*base = e->a;
		*c = e->b->v;
	} else if (e->k == IX_SUB && e->b->k == IX_CONST && e->b->v != INT64_MIN) {
		*base = e->a;
		*c = -e->b->v;
	} else {
		*base = e;
		*c = 0;
	}
}

static IExpr *
addc(Arena *A, IExpr *x, int64_t c)
{
	if (!x)
		return NULL;
	if (c == 0)
		return x;
	if (c < 0 && c != INT64_MIN)
		return node(A, IX_SUB, x, iexpr_const(A, -c), NULL);
	return node(A, IX_ADD, x, iexpr_const(A, c), NULL);
}

/* is e a multiple of c (> 0) syntactically? */
static int
ismult(const IExpr *e, int64_t c)
{
	if (e->k == IX_CONST)
		return e->v % c == 0;
	if (e->k == IX_MUL && e->b->k == IX_CONST)
		return e->b->v % c == 0;
	if (e->k == IX_ADD || e->k == IX_SUB)
		return ismult(e->a, c) && ismult(e->b, c);
	return 0;
}

/* e / c for an expression with ismult(e, c) */
static IExpr *
divexact(Arena *A, IExpr *e, int64_t c, const IDom *dom)
{
	if (e->k == IX_CONST)
		return iexpr_const(A, e->v / c);
	if (e->k == IX_MUL)
		return mk(A, IX_MUL, e->a, iexpr_const(A, e->b->v / c), dom);
	return mk(A, e->k, divexact(A, e->a, c, dom), divexact(A, e->b, c, dom), dom);
}

static IExpr *
mkdivmod(Arena *A, IExprKind k, IExpr *a, int64_t c, const IDom *dom)
{
	int64_t lo, hi;
	IExpr *p, *q;

	if (c == 1 || c == -1)
		return k == IX_MOD ? iexpr_const(A, 0) : c == 1 ? a : mk(A, IX_MUL, a, iexpr_const(A, -1), dom);
	if (c > 0) {
		if (dom && !iexpr_bounds(a, dom, &lo, &hi) &&
		    floordiv64(lo, c) == floordiv64(hi, c)) {
			if (k == IX_DIV)
				return iexpr_const(A, floordiv64(lo, c));
			if (floordiv64(lo, c) == 0)
				return a;
		}
		if (ismult(a, c))
			return k == IX_MOD ? iexpr_const(A, 0) : divexact(A, a, c, dom);
		if (a->k == IX_DIV && k == IX_DIV && a->b->k == IX_CONST && a->b->v > 0) {
			int64_t m;

			if (!ck_mul(a->b->v, c, &m))
				return mk(A, IX_DIV, a->a, iexpr_const(A, m), dom);
		}
		if (a->k == IX_MOD && k == IX_MOD && a->b->k == IX_CONST && a->b->v > 0 &&
		    a->b->v % c == 0)
			return mk(A, IX_MOD, a->a, iexpr_const(A, c), dom);
		if (a->k == IX_MUL && k == IX_MOD && a->b->k == IX_CONST && a->b->v > 0 &&
		    c % a->b->v == 0)
			return mk(A, IX_MUL, mk(A, IX_MOD, a->a, iexpr_const(A, c / a->b->v), dom), a->b, dom);
		if (a->k == IX_MUL && k == IX_DIV && a->b->k == IX_CONST && a->b->v > 0 &&
		    c % a->b->v == 0)
			return mk(A, IX_DIV, a->a, iexpr_const(A, c / a->b->v), dom);
		if (a->k == IX_ADD || a->k == IX_SUB) {
			p = a->a;
			q = a->b;
			if (ismult(p, c) && a->k == IX_ADD) {
				if (k == IX_MOD)
					return mk(A, IX_MOD, q, iexpr_const(A, c), dom);
				return mk(A, IX_ADD, divexact(A, p, c, dom),
					  mk(A, IX_DIV, q, iexpr_const(A, c), dom), dom);
			}
			if (ismult(q, c)) {
				if (k == IX_MOD)
					return mk(A, IX_MOD, p, iexpr_const(A, c), dom);
				return mk(A, a->k, mk(A, IX_DIV, p, iexpr_const(A, c), dom),
					  divexact(A, q, c, dom), dom);
			}
		}
	}
	return node(A, k, a, iexpr_const(A, c), NULL);
}

/*
 * t = x // C * M (div: *d = 0, *c = C, *k = M), or (x // d) % c * k (mod), also spelt
 * x % (d * c) // d * k or, for d = 1, x % c * k
 */
static int
dmterm(const IExpr *t, int *isdiv, IExpr **x, int64_t *d, int64_t *c, int64_t *k)
{
	int64_t m = 1;

	if (t->k == IX_MUL && t->b->k == IX_CONST) {
		m = t->b->v;
		t = t->a;
	}
	if ((t->k != IX_DIV && t->k != IX_MOD) || t->b->k != IX_CONST || t->b->v <= 0)
		return 0;
	*k = m;
	if (t->k == IX_MOD) {
		*isdiv = 0, *c = t->b->v, *d = 1, *x = t->a;
		if (t->a->k == IX_DIV && t->a->b->k == IX_CONST && t->a->b->v > 0)
			*d = t->a->b->v, *x = t->a->a;
		return 1;
	}
	/* x % (d * c) // d */
	if (t->a->k == IX_MOD && t->a->b->k == IX_CONST && t->a->b->v > 0 && t->a->b->v % t->b->v == 0) {
		*isdiv = 0, *d = t->b->v, *c = t->a->b->v / t->b->v, *x = t->a->a;
		return 1;
	}
	*isdiv = 1, *x = t->a, *c = t->b->v, *d = 0;
	return 1;
}

/* do div term (x, C, M) and mod term (y, d, c, k) add up to x // d * k (C = d * c, M = c * k)? */
static int
dmpair(IExpr *x, int64_t C, int64_t M, IExpr *y, int64_t d, int64_t c, int64_t k)
{
	int64_t dc, ck;

	return !ck_mul(d, c, &dc) && !ck_mul(c, k, &ck) && C == dc && M == ck && iexpr_same(x, y);
}

/* x // (d*c) * (c*k) + (x // d) % c * k -> x // d * k, with the partner of b anywhere in the
 * ADD chain a (d = 1: x // c * c*k + x % c * k -> x * k) */
static IExpr *
mergedm(Arena *A, IExpr *a, IExpr *b, const IDom *dom, int *done)
{
	IExpr *xa, *xb, *t = a->k == IX_ADD ? a->b : a, *r, *x = NULL;
	int da, db;
	int64_t dda, ddb, ca, cb, ka, kb, d = 0, k = 0;

	if (!dmterm(b, &db, &xb, &ddb, &cb, &kb))
		return a;
	if (dmterm(t, &da, &xa, &dda, &ca, &ka) && da != db) {
		if (da && dmpair(xa, ca, ka, xb, ddb, cb, kb))
			x = xb, d = ddb, k = kb;
		else if (db && dmpair(xb, cb, kb, xa, dda, ca, ka))
			x = xa, d = dda, k = ka;
	}
	if (x) {
		*done = 1;
		r = mk(A, IX_MUL, d == 1 ? x : mk(A, IX_DIV, x, iexpr_const(A, d), dom), iexpr_const(A, k), dom);
		return a->k == IX_ADD ? mk(A, IX_ADD, a->a, r, dom) : r;
	}
	if (a->k == IX_ADD) {
		r = mergedm(A, a->a, b, dom, done);
		if (*done)
			return mk(A, IX_ADD, r, a->b, dom);
	}
	return a;
}

static IExpr *
mk(Arena *A, IExprKind k, IExpr *a, IExpr *b, const IDom *dom)
{
	int64_t ca, cb, r;
	IExpr *ba, *bb;
	int isa, isb;

	if (!a || !b)
		return NULL;
	isa = iexpr_isconst(a, &ca);
	isb = iexpr_isconst(b, &cb);
	if (isa && isb && !fold(k, ca, cb, &r))
		return iexpr_const(A, r);
	switch (k) {
	case IX_ADD:
	case IX_SUB:
		if (isb && cb == 0)
			return a;
		if (k == IX_ADD && isa && ca == 0)
			return b;
		if (k == IX_SUB && iexpr_same(a, b))
			return iexpr_const(A, 0);
		splitc(a, &ba, &ca);
		splitc(b, &bb, &cb);
		if (cb == INT64_MIN)
			break;
		if (k == IX_SUB)
			cb = -cb;
		if (!ba && !bb)
			break;
		if (ca || cb) {
			IExpr *x;

			if (!ba)
				x = k == IX_ADD ? bb : mk(A, IX_MUL, bb, iexpr_const(A, -1), dom);
			else if (!bb)
				x = ba;
			else
				x = mk(A, k, ba, bb, dom);
			return addc(A, x, wadd(ca, cb));
		}
		if (b->k == IX_ADD || b->k == IX_SUB)    /* a + (b + c) -> a + b + c */
			return mk(A, k == IX_ADD ? b->k : b->k == IX_ADD ? IX_SUB : IX_ADD,
				  mk(A, k, a, b->a, dom), b->b, dom);
		if (k == IX_ADD) {
			int done = 0;
			IExpr *r2 = mergedm(A, a, b, dom, &done);

			if (done)
				return r2;
		}
		break;
	case IX_MUL:
		if (isb && (a->k == IX_ADD || a->k == IX_SUB))
			return mk(A, a->k, mk(A, IX_MUL, a->a, b, dom), mk(A, IX_MUL, a->b, b, dom), dom);
		if (isa && !isb)
			return mk(A, IX_MUL, b, a, dom);
		if (isb && cb == 0)
			return b;
		if (isb && cb == 1)
			return a;
		if (isb && a->k == IX_MUL && a->b->k == IX_CONST && !ck_mul(a->b->v, cb, &r))
			return mk(A, IX_MUL, a->a, iexpr_const(A, r), dom);
		break;
	case IX_DIV:
	case IX_MOD:
		if (isa && ca == 0)
			return a;
		if (isb && cb != 0)
			return mkdivmod(A, k, a, cb, dom);
		break;
	case IX_XOR:
	case IX_OR:
		if (isa && ca == 0)
			return b;
		if (isb && cb == 0)
			return a;
		if (k == IX_XOR && iexpr_same(a, b))
			return iexpr_const(A, 0);
		break;
	case IX_AND:
		if ((isa && ca == 0) || (isb && cb == 0))
			return iexpr_const(A, 0);
		break;
	case IX_SHL:
	case IX_SHR:
		if (isb && cb == 0)
			return a;
		break;
	case IX_MIN:
	case IX_MAX:
		if (iexpr_same(a, b))
			return a;
		break;
	default:
		break;
	}
	return node(A, k, a, b, NULL);
}

IExpr *
iexpr_bin(Arena *A, IExprKind k, IExpr *a, IExpr *b)
{
	if (k < IX_ADD || k > IX_NE)
		return NULL;
	return mk(A, k, a, b, NULL);
}

IExpr *
iexpr_select(Arena *A, IExpr *cond, IExpr *t, IExpr *f)
{
	int64_t c;

	if (!cond || !t || !f)
		return NULL;
	if (iexpr_isconst(cond, &c))
		return c ? t : f;
	if (iexpr_same(t, f))
		return t;
	return node(A, IX_SELECT, cond, t, f);
}

IExpr *
iexpr_tab(Arena *A, const ITab *tab, IExpr *index)
{
	IExpr *e;
	int64_t c;

	if (!tab || !index)
		return NULL;
	if (iexpr_isconst(index, &c) && c >= 0 && c < tab->n)
		return iexpr_const(A, tab->v[c]);
	if (tab->lo == tab->hi)
		return iexpr_const(A, tab->lo);
	if ((e = anew(A, IExpr))) {
		e->k = IX_TAB;
		e->a = index;
		e->tab = tab;
	}
	return e;
}

IExpr *
iexpr_addc(Arena *A, IExpr *x, int64_t c)
{
	return mk(A, IX_ADD, x, iexpr_const(A, c), NULL);
}

IExpr *
iexpr_mulc(Arena *A, IExpr *x, int64_t c)
{
	return mk(A, IX_MUL, x, iexpr_const(A, c), NULL);
}

IExpr *
iexpr_divc(Arena *A, IExpr *x, int64_t c)
{
	return mk(A, IX_DIV, x, iexpr_const(A, c), NULL);
}

IExpr *
iexpr_modc(Arena *A, IExpr *x, int64_t c)
{
	return mk(A, IX_MOD, x, iexpr_const(A, c), NULL);
}

static IExpr *
simp1(Arena *A, IExpr *e, IExpr *const *sub, const IDom *dom)
{
	IExpr *a, *b, *c;
	int64_t lo, hi;

	if (!e)
		return NULL;
	switch (e->k) {
	case IX_CONST:
		return e;
	case IX_VAR:
		if (sub && e->v >= 0 && e->v < IEXPR_NVARS && sub[e->v])
			return sub[e->v];
		if (dom && e->v >= 0 && e->v < IEXPR_NVARS && dom->ext[e->v] == 1)
			return iexpr_const(A, 0);
		return e;
	case IX_SELECT:
		a = simp1(A, e->a, sub, dom);
		b = simp1(A, e->b, sub, dom);
		c = simp1(A, e->c, sub, dom);
		if (a && dom && !iexpr_bounds(a, dom, &lo, &hi) && (lo > 0 || hi < 0))
			return b;
		if (a && dom && !iexpr_bounds(a, dom, &lo, &hi) && lo == 0 && hi == 0)
			return c;
		return iexpr_select(A, a, b, c);
	case IX_TAB:
		return iexpr_tab(A, e->tab, simp1(A, e->a, sub, dom));
	default:
		a = simp1(A, e->a, sub, dom);
		b = simp1(A, e->b, sub, dom);
		if (a && b && dom && (e->k == IX_MIN || e->k == IX_MAX)) {
			int64_t al, ah, bl, bh;

			if (!iexpr_bounds(a, dom, &al, &ah) && !iexpr_bounds(b, dom, &bl, &bh)) {
				if (ah <= bl)
					return e->k == IX_MIN ? a : b;
				if (bh <= al)
					return e->k == IX_MIN ? b : a;
			}
		}
		return mk(A, e->k, a, b, dom);
	}
}

IExpr *
iexpr_subst(Arena *A, IExpr *e, IExpr *const sub[IEXPR_NVARS], const IDom *dom)
{
	IExpr *r = simp1(A, e, sub, dom);
	int i;

	/* rewriting can expose new folds; iterate to a fixed point (bounded) */
	for (i = 0; r && i < 4; i++) {
		IExpr *n = simp1(A, r, NULL, dom);

		if (!n || iexpr_same(n, r))
			break;
		r = n;
	}
	return r;
}

IExpr *
iexpr_simplify(Arena *A, IExpr *e, const IDom *dom)
{
	return iexpr_subst(A, e, NULL, dom);
}

/* ---- printing --------------------------------------------------------- */

static int
prec(const IExpr *e)
{
	switch (e->k) {
	case IX_CONST: return e->v < 0 ? 13 : 100;
	case IX_VAR: case IX_SELECT: case IX_MIN: case IX_MAX: case IX_TAB: return 100;
	case IX_MUL: case IX_DIV: case IX_MOD: return 12;
	case IX_ADD: case IX_SUB: return 11;
	case IX_SHL: case IX_SHR: return 10;
	case IX_AND: return 9;
	case IX_XOR: return 8;
	case IX_OR: return 7;
	default: return 6;
	}
}

static const char *
opname(IExprKind k)
{
	switch (k) {
	case IX_ADD: return "+";
	case IX_SUB: return "-";
	case IX_MUL: return "*";
	case IX_DIV: return "//";
	case IX_MOD: return "%";
	case IX_XOR: return "^";
	case IX_AND: return "&";
	case IX_OR: return "|";
	case IX_SHL: return "<<";
	case IX_SHR: return ">>";
	case IX_LT: return "<";
	case IX_LE: return "<=";
	case IX_EQ: return "==";
	case IX_NE: return "!=";
	default: return "?";
	}
}

static void
pr(Buf *b, const IExpr *e, int need)
{
	int p, paren;

	if (!e) {
		buf_puts(b, "<null>");
		return;
	}
	p = prec(e);
	paren = p < need;
	if (paren)
		buf_putc(b, '(');
	switch (e->k) {
	case IX_CONST:
		buf_printf(b, "%lld", (long long)e->v);
		break;
	case IX_VAR:
		buf_puts(b, iexpr_varname((int)e->v));
		break;
	case IX_SELECT:
		buf_puts(b, "T.Select(");
		pr(b, e->a, 0);
		buf_puts(b, ", ");
		pr(b, e->b, 0);
		buf_puts(b, ", ");
		pr(b, e->c, 0);
		buf_putc(b, ')');
		break;
	case IX_TAB:
		buf_printf(b, "%s[", e->tab->name);
		pr(b, e->a, 0);
		buf_putc(b, ']');
		break;
	case IX_MIN:
	case IX_MAX:
		buf_puts(b, e->k == IX_MIN ? "T.min(" : "T.max(");
		pr(b, e->a, 0);
		buf_puts(b, ", ");
		pr(b, e->b, 0);
		buf_putc(b, ')');
		break;
	default:
		/* left-associative; comparisons do not chain */
		pr(b, e->a, p == 6 ? 7 : p);
		buf_printf(b, " %s ", opname(e->k));
		pr(b, e->b, p + 1);
		break;
	}
	if (paren)
		buf_putc(b, ')');
}

void
iexpr_print(Buf *b, const IExpr *e)
{
	pr(b, e, 0);
}

char *
iexpr_str(Arena *A, const IExpr *e)
{
	Buf b;
	char *s;

	buf_init(&b);
	iexpr_print(&b, e);
	s = arena_strdup(A, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- parser ----------------------------------------------------------- */

typedef struct {
	Arena *A;
	const char *s, *p;
	int nvars, allow_rep;
	Err *err;
	int failed, depth;
} Parser;

static IExpr *p_cmp(Parser *P);

static void
skipws(Parser *P)
{
	while (*P->p == ' ' || *P->p == '\t' || *P->p == '\n')
		P->p++;
}

static int
accept(Parser *P, const char *tok)
{
	size_t n;

	skipws(P);
	if (tok[0] && P->p[0] != tok[0])
		return 0;       /* most tries: the first character differs */
	n = strlen(tok);
	if (strncmp(P->p, tok, n))
		return 0;
	/* do not split "//" into "/", "<<" into "<", "<=" into "<" */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>') && (P->p[1] == tok[0] || P->p[1] == '='))
		return 0;
	P->p += n;
	return 1;
}

static IExpr *
perr(Parser *P, const char *msg)
{
	if (!P->failed)
		err_set(P->err, "%s at offset %d in \"%s\"", msg, (int)(P->p - P->s), P->s);
	P->failed = 1;
	return NULL;
}

static IExpr *
p_atom(Parser *P)
{
	IExpr *e, *a, *b, *c;
	char name[32];
	size_t n = 0;
	int i;

	skipws(P);
	if (P->failed)
		return NULL;
	if (++P->depth > 200)
		return perr(P, "expression nested too deeply");
	if (accept(P, "(")) {
		e = p_cmp(P);
		if (!accept(P, ")"))
			return perr(P, "expected ')'");
		P->depth--;
		return e;
	}
	if (accept(P, "-")) {
		e = p_atom(P);
		P->depth--;
		return e ? mk(P->A, IX_MUL, e, iexpr_const(P->A, -1), NULL) : NULL;
	}
	if (*P->p >= '0' && *P->p <= '9') {
		int64_t v = 0;

		while (*P->p >= '0' && *P->p <= '9') {
			if (ck_mul(v, 10, &v) || ck_add(v, *P->p - '0', &v))
				return perr(P, "integer constant too large");
			P->p++;
		}
		P->depth--;
		return iexpr_const(P->A, v);
	}
	while ((*P->p >= 'a' && *P->p <= 'z') || (*P->p >= 'A' && *P->p <= 'Z') || *P->p == '_' ||
	       *P->p == '.' || (n > 0 && *P->p >= '0' && *P->p <= '9')) {
		if (n + 1 >= sizeof name)
			return perr(P, "name too long");
		name[n++] = *P->p++;
	}
	name[n] = 0;
	if (!n)
		return perr(P, "expected an expression");
	for (i = 0; i < IEXPR_NVARS; i++) {
		if (strcmp(name, varnames[i]))
			continue;
		if (i == IEXPR_REP ? !P->allow_rep : i >= P->nvars) {
			P->p -= n;
			if (!P->failed)
				err_set(P->err, "unknown placeholder %s (layout has %d input%s%s)", name,
					P->nvars, P->nvars == 1 ? "" : "s",
					P->allow_rep ? " and _rep" : ", no _rep");
			P->failed = 1;
			return NULL;
		}
		P->depth--;
		return iexpr_var(P->A, i);
	}
	if (!strcmp(name, "T.min") || !strcmp(name, "min") || !strcmp(name, "T.max") ||
	    !strcmp(name, "max") || !strcmp(name, "T.Select") || !strcmp(name, "select")) {
		int sel = strchr(name, 'S') || strchr(name, 's');

		if (!accept(P, "("))
			return perr(P, "expected '('");
		a = p_cmp(P);
		if (!accept(P, ","))
			return perr(P, "expected ','");
		b = p_cmp(P);
		c = NULL;
		if (sel && !accept(P, ","))
			return perr(P, "expected ','");
		if (sel)
			c = p_cmp(P);
		if (!accept(P, ")"))
			return perr(P, "expected ')'");
		if (P->failed)
			return NULL;
		P->depth--;
		if (sel)
			return iexpr_select(P->A, a, b, c);
		return mk(P->A, strstr(name, "min") ? IX_MIN : IX_MAX, a, b, NULL);
	}
	P->p -= n;
	if (!P->failed)
		err_set(P->err, "unknown name '%s' at offset %d in \"%s\"", name, (int)(P->p - P->s), P->s);
	P->failed = 1;
	return NULL;
}

static IExpr *
p_term(Parser *P)
{
	IExpr *e = p_atom(P);

	for (;;) {
		IExprKind k;

		if (accept(P, "//"))
			k = IX_DIV;
		else if (accept(P, "/"))
			return perr(P, "use // for floor division");
		else if (accept(P, "*"))
			k = IX_MUL;
		else if (accept(P, "%"))
			k = IX_MOD;
		else
			return e;
		e = mk(P->A, k, e, p_atom(P), NULL);
	}
}

#define LEVEL(fn, sub, ...)                                                   \
	static IExpr *fn(Parser *P)                                           \
	{                                                                     \
		static const struct { const char *t; IExprKind k; } ops[] = {__VA_ARGS__}; \
		IExpr *e = sub(P);                                            \
		size_t i;                                                     \
	again:                                                                \
		for (i = 0; i < countof(ops); i++)                            \
			if (accept(P, ops[i].t)) {                            \
				e = mk(P->A, ops[i].k, e, sub(P), NULL);      \
				goto again;                                   \
			}                                                     \
		return e;                                                     \
	}
LEVEL(p_arith, p_term, {"+", IX_ADD}, {"-", IX_SUB})
LEVEL(p_shift, p_arith, {"<<", IX_SHL}, {">>", IX_SHR})
LEVEL(p_and, p_shift, {"&", IX_AND})
LEVEL(p_xor, p_and, {"^", IX_XOR})
LEVEL(p_or, p_xor, {"|", IX_OR})

static IExpr *
p_cmp(Parser *P)
{
	IExpr *e = p_or(P);

	if (accept(P, "<="))
		return mk(P->A, IX_LE, e, p_or(P), NULL);
	if (accept(P, ">="))
		return mk(P->A, IX_LE, p_or(P), e, NULL);
	if (accept(P, "=="))
		return mk(P->A, IX_EQ, e, p_or(P), NULL);
	if (accept(P, "!="))
		return mk(P->A, IX_NE, e, p_or(P), NULL);
	if (accept(P, "<"))
		return mk(P->A, IX_LT, e, p_or(P), NULL);
	if (accept(P, ">"))
		return mk(P->A, IX_LT, p_or(P), e, NULL);
	return e;
}

IExpr *
iexpr_parse(Arena *A, const char *s, int nvars, int allow_rep, Err *err)
{
	Parser P = {0};
	IExpr *e;

	if (!s) {
		err_set(err, "null expression text");
		return NULL;
	}
	if (strlen(s) > 65536) {    /* bounds the depth of every recursive walk */
		err_set(err, "expression text longer than 65536 characters");
		return NULL;
	}
	P.A = A;
	P.s = P.p = s;
	P.nvars = nvars;
	P.allow_rep = allow_rep;
	P.err = err;
	e = p_cmp(&P);
	skipws(&P);
	if (!P.failed && *P.p)
		perr(&P, "unexpected text");
	if (P.failed)
		return NULL;
	if (!e)
		err_set(err, "out of memory");
	return e;
}

/* ---- compiled programs ------------------------------------------------- */

/*
 * A program is a list of instructions over registers of IPROG_BATCH values,
 * one register per tree node. Var leaves alias the caller's input arrays and
 * outputs are handed back as pointers, so nothing is copied. Peepholes: an
 * immediate right operand, x // 2^a % 2^b as one bit-field extract, x * 2^k
 * as a shift. Full batches run with a constant trip count.
 */
enum { OP_CONST = 100, OP_VAR, OP_DIVP, OP_MODP, OP_FIELD, OP_SHLI };

typedef struct {
	int op;         /* IExprKind, or OP_* */
	int dst, a, b, c;
	int bimm;       /* b is the immediate */
	int64_t imm, imm2, imm3;
	const ITab *tab;        /* IX_TAB */
} Ins;

struct IProg {
	Ins *ins;
	int nins, cap, nreg, nout;
	int *outreg;
	int64_t *regs;
	const int64_t **R;      /* register -> storage (own, or an input array) */
};

static int
log2p(int64_t v)
{
	return v > 0 && !(v & (v - 1)) ? bitsof(v) - 1 : -1;
}

/* e as ((x >> a) & m) << sh over a base x, for chains of // 2^k, % 2^k and
 * * 2^k (exact for all int64 in two's complement); returns the chain length */
static int
field(const IExpr *e, const IExpr **x, int64_t *a, int64_t *m, int64_t *sh)
{
	int64_t v;
	int k, n;

	if ((e->k != IX_DIV && e->k != IX_MOD && e->k != IX_MUL) || !iexpr_isconst(e->b, &v) ||
	    (k = log2p(v)) < 0) {
		*x = e;
		*a = 0;
		*m = -1;
		*sh = 0;
		return 0;
	}
	n = field(e->a, x, a, m, sh);
	if (e->k == IX_MUL) {
		if (*sh + k > 62)
			return -1;
		*sh += k;
	} else if (e->k == IX_DIV) {
		if (*sh >= k) {
			*sh -= k;
		} else {
			*a += k - *sh;
			*m = *m >> (k - *sh);
			*sh = 0;
			if (*a > 62)
				return -1;
		}
	} else {
		*m = *sh >= k ? 0 : *m & ((((int64_t)1 << k) - 1) >> *sh);
	}
	return n < 0 ? -1 : n + 1;
}

static int
emit(IProg *p, const IExpr *e, int depth)
{
	Ins in = {0};
	int64_t v, fa, fm, fs;
	const IExpr *fx;
	int sh;

	if (!e || depth > 10000)
		return -1;
	if (e->k == IX_CONST) {
		in.op = OP_CONST;
		in.imm = e->v;
	} else if (e->k == IX_VAR) {
		in.op = OP_VAR;
		in.imm = e->v;
	} else if (e->k == IX_TAB) {
		in.op = IX_TAB;
		in.tab = e->tab;
		if ((in.a = emit(p, e->a, depth + 1)) < 0)
			return -1;
	} else if (field(e, &fx, &fa, &fm, &fs) >= 2) {
		in.op = OP_FIELD;
		in.bimm = 1;
		in.imm = fa;
		in.imm2 = fm;
		in.imm3 = fs;
		if ((in.a = emit(p, fx, depth + 1)) < 0)
			return -1;
	} else {
		in.op = e->k;
		if ((in.a = emit(p, e->a, depth + 1)) < 0)
			return -1;
		if (e->k != IX_SELECT && iexpr_isconst(e->b, &v) && e->k != IX_MIN && e->k != IX_MAX) {
			in.bimm = 1;
			in.imm = v;
			sh = log2p(v);
			if ((e->k == IX_DIV || e->k == IX_MOD) && sh >= 0) {
				in.op = e->k == IX_DIV ? OP_DIVP : OP_MODP;
				in.imm = e->k == IX_DIV ? sh : v - 1;
			} else if (e->k == IX_MUL && sh >= 0) {
				in.op = OP_SHLI;
				in.imm = sh;
			}
		} else if ((in.b = emit(p, e->b, depth + 1)) < 0) {
			return -1;
		}
		if (e->k == IX_SELECT && (in.c = emit(p, e->c, depth + 1)) < 0)
			return -1;
	}
	if (p->nins == p->cap) {
		int nc = p->cap ? 2 * p->cap : 32;
		Ins *n = realloc(p->ins, (size_t)nc * sizeof *n);

		if (!n)
			return -1;
		p->ins = n;
		p->cap = nc;
	}
	in.dst = p->nreg++;
	p->ins[p->nins++] = in;
	return in.dst;
}

IProg *
iprog_compile(IExpr *const *es, int n, Err *err)
{
	IProg *p = calloc(1, sizeof *p);
	int i;

	if (!p || n < 0 || (n && !es)) {
		free(p);
		err_set(err, "cannot compile expressions");
		return NULL;
	}
	p->nout = n;
	p->outreg = calloc((size_t)(n ? n : 1), sizeof(int));
	for (i = 0; p->outreg && i < n; i++)
		if ((p->outreg[i] = emit(p, es[i], 0)) < 0)
			break;
	if (!p->outreg || i < n) {
		iprog_free(p);
		err_set(err, "cannot compile expression (null, too deep or out of memory)");
		return NULL;
	}
	p->regs = malloc((size_t)(p->nreg ? p->nreg : 1) * IPROG_BATCH * sizeof(int64_t));
	p->R = calloc((size_t)(p->nreg ? p->nreg : 1), sizeof *p->R);
	if (!p->regs || !p->R) {
		iprog_free(p);
		err_set(err, "out of memory");
		return NULL;
	}
	for (i = 0; i < p->nreg; i++)
		p->R[i] = p->regs + (size_t)i * IPROG_BATCH;
	return p;
}

void
iprog_free(IProg *p)
{
	if (!p)
		return;
	free(p->ins);
	free(p->outreg);
	free(p->regs);
	free(p->R);
	free(p);
}

#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

INLINE int
run(IProg *p, const int64_t *const *vars, const int N)
{
	int i, k, bad = 0;

	for (i = 0; i < p->nins; i++) {
		const Ins *in = &p->ins[i];
		int64_t *restrict d = p->regs + (size_t)in->dst * IPROG_BATCH;
		const int64_t *restrict a = p->R[in->a];
		const int64_t *restrict b = p->R[in->b];
		const int64_t *restrict c = p->R[in->c];
		int64_t m = in->imm, m2 = in->imm2, m3 = in->imm3;

#define LOOP(expr) for (k = 0; k < N; k++) d[k] = (expr); break
		if (in->bimm) {
			switch (in->op) {
			case IX_ADD: LOOP(wadd(a[k], m));
			case IX_SUB: LOOP(wsub(a[k], m));
			case IX_MUL: LOOP(wmul(a[k], m));
			case OP_SHLI: LOOP((int64_t)((uint64_t)a[k] << m));
			case OP_DIVP: LOOP(a[k] >> m);
			case OP_MODP: LOOP(a[k] & m);
			case OP_FIELD: LOOP((int64_t)((uint64_t)((a[k] >> m) & m2) << m3));
			case IX_XOR: LOOP(a[k] ^ m);
			case IX_AND: LOOP(a[k] & m);
			case IX_OR: LOOP(a[k] | m);
			case IX_SHL: LOOP(shl(a[k], m));
			case IX_SHR: LOOP(shr(a[k], m));
			case IX_LT: LOOP(a[k] < m);
			case IX_LE: LOOP(a[k] <= m);
			case IX_EQ: LOOP(a[k] == m);
			case IX_NE: LOOP(a[k] != m);
			default:        /* DIV, MOD by a non-power-of-two constant */
				if (m == 0)
					return -1;
				if (in->op == IX_DIV)
					for (k = 0; k < N; k++)
						d[k] = floordiv64(a[k], m);
				else
					for (k = 0; k < N; k++)
						d[k] = m == -1 ? 0 : floormod64(a[k], m);
				break;
			}
			continue;
		}
		switch (in->op) {
		case OP_CONST: LOOP(m);
		case OP_VAR:
			if (!vars[m])
				return -1;
			p->R[in->dst] = vars[m];
			break;
		case IX_ADD: LOOP(wadd(a[k], b[k]));
		case IX_SUB: LOOP(wsub(a[k], b[k]));
		case IX_MUL: LOOP(wmul(a[k], b[k]));
		case IX_XOR: LOOP(a[k] ^ b[k]);
		case IX_AND: LOOP(a[k] & b[k]);
		case IX_OR: LOOP(a[k] | b[k]);
		case IX_MIN: LOOP(a[k] < b[k] ? a[k] : b[k]);
		case IX_MAX: LOOP(a[k] > b[k] ? a[k] : b[k]);
		case IX_SELECT: LOOP(a[k] ? b[k] : c[k]);
		case IX_TAB:
			for (k = 0; k < N; k++) {
				if (a[k] < 0 || a[k] >= in->tab->n)
					return -1;
				d[k] = in->tab->v[a[k]];
			}
			break;
		default:
			for (k = 0; k < N; k++)
				bad |= fold((IExprKind)in->op, a[k], b[k], &d[k]);
			if (bad)
				return -1;
			break;
		}
#undef LOOP
	}
	return 0;
}

int
iprog_run(IProg *p, const int64_t *const *vars, int npts, const int64_t **out)
{
	int i, r;

	if (!p || npts < 0 || npts > IPROG_BATCH)
		return -1;
	r = npts == IPROG_BATCH ? run(p, vars, IPROG_BATCH) : run(p, vars, npts);
	for (i = 0; !r && i < p->nout; i++)
		out[i] = p->R[p->outreg[i]];
	return r;
}
