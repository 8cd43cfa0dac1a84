/*
 * affine.c: symbolic decisions on mixed-radix ("affine") layouts, so that the
 * exact checks of the layout core enumerate only what this cannot decide.
 *
 * An expression is read, when it can be, as c + sum of coef * ((x // lf) % ext)
 * over digits of the domain's variables (+, -, * and // and % by constants, and
 * >>, << and & 2^k - 1, which are // 2^k, * 2^k and % 2^k on integers). The
 * digits of all expressions in question are cut at their common boundaries into
 * atomic digits; where those boundaries form a divisibility chain
 * 1 | b1 | b2 | ... per variable, the atomic digits are independent and their box
 * holds the domain (it is the domain unless a variable's extent is not a multiple
 * of its top boundary: "ragged"). Every expression is then a linear form in the
 * atomic digits, and
 *  - two forms with the same constant and coefficients agree on the box, so on the
 *    domain (equality, round trips);
 *  - a map whose outputs use disjoint atomic digits, each output super-increasing
 *    in them (|c_{k+1}| > sum_{j<=k} |c_j| (ext_j - 1)), is injective on the box;
 *  - a form's minimum and maximum over the box are the sums of its terms' ends,
 *    exact on the domain when no variable it uses is ragged.
 * Each function answers "proved" (1) or "not decided" (0), never "no": the
 * callers then enumerate as before, so decisions and messages do not change.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

enum { MAXT = 48, MAXD = 64 };

typedef struct {
	int var;
	int64_t lf, ext, coef;  /* coef * ((x // lf) % ext); lf * ext >= S[var]: x // lf */
} Term;

typedef struct {
	int n;
	int64_t c;
	Term t[MAXT];
} Aff;

enum { MAXX = 8, NV = IEXPR_NVARS + MAXX };

/* the domain: extent per var id (0: not in the domain). For exact ranges only
 * (xor set), a ^ b where a is a digit of 2^k values and 0 <= b < 2^k becomes a
 * pseudo-variable (id IEXPR_NVARS + p) of 2^k values standing for the digit a[p];
 * it is independent of the other terms when nothing else reads a's digits
 * (checked in layout_aff_range_), since a ^ b then runs over [0, 2^k) with a. */
typedef struct {
	int64_t S[NV];
	int xor, nx;
	Term xa[MAXX];
	/* per pseudo-variable: the gcd of the low factors of the digits of each variable
	 * that a and b read (0: none), for layout_aff_vecrun_ */
	int64_t xlf[MAXX][NV];
} ADom;

static int64_t
gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b, b = t;
	}
	return a;
}

static int
istop(const ADom *D, const Term *t)
{
	int64_t hi;

	return ck_mul(t->lf, t->ext, &hi) || hi >= D->S[t->var];
}

/* add coef * digit (var, lf, ext), normalized: top digits get ext = ceil(S / lf) */
static int
addterm(const ADom *D, Aff *a, int var, int64_t lf, int64_t ext, int64_t coef)
{
	int64_t S = D->S[var], hi;
	int k;

	if (coef == 0 || lf >= S || ext <= 1)
		return 0;
	if (ck_mul(lf, ext, &hi) || hi >= S)
		ext = (S + lf - 1) / lf;
	if (ext <= 1)
		return 0;
	for (k = 0; k < a->n; k++)
		if (a->t[k].var == var && a->t[k].lf == lf && a->t[k].ext == ext) {
			if (ck_add(a->t[k].coef, coef, &a->t[k].coef))
				return -1;
			if (a->t[k].coef == 0)
				a->t[k] = a->t[--a->n];
			return 0;
		}
	if (a->n == MAXT)
		return -1;
	a->t[a->n].var = var;
	a->t[a->n].lf = lf;
	a->t[a->n].ext = ext;
	a->t[a->n++].coef = coef;
	return 0;
}

/* a += k * b */
static int
addscaled(const ADom *D, Aff *a, const Aff *b, int64_t k)
{
	int64_t c;
	int i;

	if (ck_mul(b->c, k, &c) || ck_add(a->c, c, &a->c))
		return -1;
	for (i = 0; i < b->n; i++)
		if (ck_mul(b->t[i].coef, k, &c) ||
		    addterm(D, a, b->t[i].var, b->t[i].lf, b->t[i].ext, c))
			return -1;
	return 0;
}

/* interval of the terms with the given selection (all when sel < 0) plus c */
static int
tbounds(const Aff *a, int64_t c, const int *sel, int64_t *lo, int64_t *hi)
{
	int64_t v;
	int i;

	*lo = *hi = c;
	for (i = 0; i < a->n; i++) {
		if (sel && !sel[i])
			continue;
		if (ck_mul(a->t[i].coef, a->t[i].ext - 1, &v))
			return -1;
		if (ck_add(v < 0 ? *lo : *hi, v, v < 0 ? lo : hi))
			return -1;
	}
	return 0;
}

/* x // d (mod == 0) or x % d (mod == 1), d > 0 */
static int
divmod(const ADom *D, Aff *x, int64_t d, int mod)
{
	int sel[MAXT], i, li;
	int64_t q = floordiv64(x->c, d), r = floormod64(x->c, d), lo, hi;
	Aff out;

	for (i = 0; i < x->n; i++)
		sel[i] = x->t[i].coef % d != 0;
	memset(&out, 0, sizeof out);
	/* the high terms (multiples of d) pass through // d and vanish under % d */
	if (!mod) {
		out.c = q;
		for (i = 0; i < x->n; i++)
			if (!sel[i] && addterm(D, &out, x->t[i].var, x->t[i].lf, x->t[i].ext,
					       x->t[i].coef / d))
				return -1;
	}
	if (tbounds(x, r, sel, &lo, &hi))
		return -1;
	if (lo >= 0 && hi < d) {
		/* the low part stays inside [0, d): // d drops it, % d keeps it */
		if (mod) {
			out.c = r;
			for (i = 0; i < x->n; i++)
				if (sel[i] && addterm(D, &out, x->t[i].var, x->t[i].lf, x->t[i].ext,
						       x->t[i].coef))
					return -1;
		}
		*x = out;
		return 0;
	}
	/* one low term c * t with c | d over a rest q (the other low terms and r) in [0, c):
	 * (c * t + q) // d = t // m and (c * t + q) % d = c * (t % m) + q, m = d / c */
	for (li = -1, i = 0; i < x->n && li < 0; i++) {
		int keep;

		if (!sel[i] || x->t[i].coef <= 0 || d % x->t[i].coef)
			continue;
		sel[i] = 0;
		keep = !tbounds(x, r, sel, &lo, &hi) && lo >= 0 && hi < x->t[i].coef;
		sel[i] = 1;
		if (keep)
			li = i;
	}
	if (li >= 0) {
		const Term *t = &x->t[li];
		int64_t m = d / t->coef, lf;

		if (mod) {      /* the rest stays as it is */
			out.c = r;
			for (i = 0; i < x->n; i++)
				if (sel[i] && i != li && addterm(D, &out, x->t[i].var, x->t[i].lf,
								  x->t[i].ext, x->t[i].coef))
					return -1;
		}

		if (!istop(D, t) && t->ext % m)
			return -1;
		if (!mod) {
			if (ck_mul(t->lf, m, &lf) || addterm(D, &out, t->var, lf, t->ext / m +
							     (istop(D, t) && t->ext % m), 1))
				return -1;
		} else if (addterm(D, &out, t->var, t->lf, m, t->coef)) {
			return -1;
		}
		*x = out;
		return 0;
	}
	return -1;
}

static int
pow2(int64_t v)
{
	int k = 0;

	if (v <= 0 || (v & (v - 1)))
		return -1;
	while (((int64_t)1 << k) < v)
		k++;
	return k;
}

/* e as an affine form over D: 0, or -1 when e is not of that shape */
static int
parse(ADom *D, const IExpr *e, Aff *out, int depth)
{
	Aff b;
	int64_t k;

	memset(out, 0, sizeof *out);
	if (!e || depth > 200)
		return -1;
	switch (e->k) {
	case IX_CONST:
		out->c = e->v;
		return 0;
	case IX_VAR:
		if (e->v < 0 || e->v >= IEXPR_NVARS || D->S[e->v] < 1)
			return -1;
		return addterm(D, out, (int)e->v, 1, D->S[e->v], 1);
	case IX_ADD:
	case IX_SUB:
		if (parse(D, e->a, out, depth + 1) || parse(D, e->b, &b, depth + 1))
			return -1;
		return addscaled(D, out, &b, e->k == IX_ADD ? 1 : -1);
	case IX_MUL:
		if (iexpr_isconst(e->b, &k)) {
			if (parse(D, e->a, &b, depth + 1))
				return -1;
		} else if (iexpr_isconst(e->a, &k)) {
			if (parse(D, e->b, &b, depth + 1))
				return -1;
		} else {
			return -1;
		}
		return addscaled(D, out, &b, k);
	case IX_SHL:
		if (!iexpr_isconst(e->b, &k) || k < 0 || k > 61 || parse(D, e->a, &b, depth + 1))
			return -1;
		return addscaled(D, out, &b, (int64_t)1 << k);
	case IX_XOR: {
		Aff x;
		int side;

		if (!D->xor || D->nx == MAXX || parse(D, e->a, &x, depth + 1) ||
		    parse(D, e->b, &b, depth + 1))
			return -1;
		for (side = 0; side < 2; side++) {
			const Aff *u = side ? &b : &x, *w = side ? &x : &b;
			const Term *t = &u->t[0];
			int64_t lo, hi, tlo = t->lf, thi, S = D->S[t->var];
			int i;

			if (u->n != 1 || u->c != 0 || t->coef != 1 || pow2(t->ext) < 0 || t->var >= IEXPR_NVARS ||
			    ck_mul(t->lf, t->ext, &thi) || S % thi)
				continue;
			if (tbounds(w, w->c, NULL, &lo, &hi) || lo < 0 || hi >= t->ext)
				continue;
			for (i = 0; i < w->n; i++)      /* b must not read a's digits */
				if (w->t[i].var == t->var && w->t[i].lf < thi &&
				    (istop(D, &w->t[i]) || w->t[i].lf * w->t[i].ext > tlo))
					break;
			if (i < w->n)
				continue;
			D->xa[D->nx] = *t;
			memset(D->xlf[D->nx], 0, sizeof D->xlf[D->nx]);
			D->xlf[D->nx][t->var] = t->lf;
			for (i = 0; i < w->n; i++)
				D->xlf[D->nx][w->t[i].var] = gcd64(D->xlf[D->nx][w->t[i].var], w->t[i].lf);
			D->S[IEXPR_NVARS + D->nx] = t->ext;
			return addterm(D, out, IEXPR_NVARS + D->nx++, 1, t->ext, 1);
		}
		return -1;
	}
	case IX_DIV:
	case IX_MOD:
	case IX_SHR:
	case IX_AND:
		if (!iexpr_isconst(e->b, &k) || parse(D, e->a, out, depth + 1))
			return -1;
		if (e->k == IX_SHR) {
			if (k < 0 || k > 61)
				return -1;
			return divmod(D, out, (int64_t)1 << k, 0);
		}
		if (e->k == IX_AND) {   /* x & (2^j - 1) == x % 2^j */
			if (k < 0 || k == INT64_MAX || pow2(k + 1) < 0)
				return -1;
			return divmod(D, out, k + 1, 1);
		}
		if (k <= 0)
			return -1;
		return divmod(D, out, k, e->k == IX_MOD);
	default:
		return -1;
	}
}

/* ---- atomic digits and linear forms -------------------------------------------------- */

typedef struct {
	int nd;
	int var[MAXD];
	int64_t lf[MAXD], ext[MAXD];
	int ragged[NV];                 /* S[var] is not a multiple of its top boundary */
} Atoms;

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* the common refinement of the digits of forms f[0..n) */
static int
atoms(const ADom *D, const Aff *f, int n, Atoms *A)
{
	int64_t b[2 * MAXT * 4 + 1];
	int v, i, k, nb;

	memset(A, 0, sizeof *A);
	for (v = 0; v < NV; v++) {
		nb = 0;
		b[nb++] = 1;
		for (i = 0; i < n; i++)
			for (k = 0; k < f[i].n; k++) {
				const Term *t = &f[i].t[k];

				if (t->var != v)
					continue;
				if (nb + 2 > (int)(sizeof b / sizeof b[0]))
					return -1;
				b[nb++] = t->lf;
				if (!istop(D, t))
					b[nb++] = t->lf * t->ext;
			}
		if (nb == 1)
			continue;
		qsort(b, (size_t)nb, sizeof b[0], cmp64);
		for (i = 0, k = 0; i < nb; i++)
			if (!k || b[i] != b[k - 1])
				b[k++] = b[i];
		nb = k;
		for (i = 0; i < nb; i++) {
			if (i + 1 < nb && b[i + 1] % b[i])
				return -1;      /* not a chain: the digits overlap */
			if (A->nd == MAXD)
				return -1;
			A->var[A->nd] = v;
			A->lf[A->nd] = b[i];
			A->ext[A->nd] = i + 1 < nb ? b[i + 1] / b[i] : (D->S[v] + b[i] - 1) / b[i];
			A->nd++;
		}
		A->ragged[v] = D->S[v] % b[nb - 1] != 0;
	}
	return 0;
}

/* f's coefficients over the atoms: row[d] */
static int
linear(const ADom *D, const Aff *f, const Atoms *A, int64_t *row)
{
	int k, d;

	memset(row, 0, sizeof *row * MAXD);
	for (k = 0; k < f->n; k++) {
		const Term *t = &f->t[k];
		int top = istop(D, t);
		int64_t hi = top ? INT64_MAX : t->lf * t->ext, c;

		for (d = 0; d < A->nd; d++) {
			if (A->var[d] != t->var || A->lf[d] < t->lf || A->lf[d] >= hi)
				continue;
			if (ck_mul(t->coef, A->lf[d] / t->lf, &c) || ck_add(row[d], c, &row[d]))
				return -1;
		}
	}
	return 0;
}

static void
mkdom(ADom *D, const int64_t *shape, const int *varid, int n)
{
	int k;

	memset(D, 0, sizeof *D);
	for (k = 0; k < n; k++)
		if (varid[k] >= 0 && varid[k] < IEXPR_NVARS)
			D->S[varid[k]] = shape[k];
}

/* ---- the decisions (layout_int.h) ---------------------------------------------------- */

int
layout_aff_injective_(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne)
{
	ADom D;
	Aff *f;
	Atoms A;
	int64_t (*row)[MAXD];
	int used[MAXD], e, d, ok = 0;

	if (ne < 1 || ne > 2 * LAYOUT_MAXDIM + 2)
		return 0;
	mkdom(&D, shape, varid, n);
	f = malloc(sizeof *f * (size_t)ne);
	row = malloc(sizeof *row * (size_t)ne);
	if (!f || !row)
		goto out;
	for (e = 0; e < ne; e++)
		if (parse(&D, es[e], &f[e], 0))
			goto out;
	if (atoms(&D, f, ne, &A))
		goto out;
	for (e = 0; e < ne; e++)
		if (linear(&D, &f[e], &A, row[e]))
			goto out;
	memset(used, 0, sizeof used);
	for (e = 0; e < ne; e++) {
		int ord[MAXD], m = 0, i, j;
		int64_t reach = 0, t;

		for (d = 0; d < A.nd; d++) {
			if (!row[e][d] || A.ext[d] < 2)
				continue;
			if (used[d] || row[e][d] == INT64_MIN)
				goto out;       /* a digit in two outputs: not decided here */
			used[d] = 1;
			ord[m++] = d;
		}
		for (i = 1; i < m; i++)         /* by |coefficient| */
			for (j = i; j > 0 && llabs(row[e][ord[j]]) < llabs(row[e][ord[j - 1]]); j--) {
				int s = ord[j];

				ord[j] = ord[j - 1];
				ord[j - 1] = s;
			}
		for (i = 0; i < m; i++) {
			int64_t c = llabs(row[e][ord[i]]);

			if (c <= reach)
				goto out;
			if (ck_mul(c, A.ext[ord[i]] - 1, &t) || ck_add(reach, t, &reach))
				goto out;
		}
	}
	for (d = 0; d < A.nd; d++)
		if (A.ext[d] > 1 && !used[d])
			goto out;       /* a digit no output reads: not injective (the caller finds why) */
	for (e = 0; e < IEXPR_NVARS; e++) {
		for (d = 0; d < A.nd && A.var[d] != e; d++)
			;
		if (D.S[e] > 1 && d == A.nd)
			goto out;       /* a variable no output reads */
	}
	ok = 1;
out:
	free(f);
	free(row);
	return ok;
}

int
layout_aff_equal_(const int64_t *shape, const int *varid, int n, const IExpr *a, const IExpr *b)
{
	ADom D;
	Aff f[2];
	Atoms A;
	int64_t ra[MAXD], rb[MAXD];
	int d;

	mkdom(&D, shape, varid, n);
	if (parse(&D, a, &f[0], 0) || parse(&D, b, &f[1], 0) || f[0].c != f[1].c)
		return 0;
	if (atoms(&D, f, 2, &A) || linear(&D, &f[0], &A, ra) || linear(&D, &f[1], &A, rb))
		return 0;
	for (d = 0; d < A.nd; d++)
		if (A.ext[d] > 1 && ra[d] != rb[d])
			return 0;
	return 1;
}

int
layout_aff_range_(const int64_t *shape, const int *varid, int n, const IExpr *e, int64_t *lo,
		  int64_t *hi)
{
	ADom D;
	Aff f;
	Atoms A;
	int64_t row[MAXD], v;
	int d;

	mkdom(&D, shape, varid, n);
	D.xor = 1;
	if (parse(&D, e, &f, 0) || atoms(&D, &f, 1, &A) || linear(&D, &f, &A, row))
		return 0;
	for (d = 0; d < D.nx; d++) {
		/* a pseudo-variable's digit is read by no term, nor by another pseudo-variable */
		const Term *a = &D.xa[d];
		int64_t ahi = a->lf * a->ext;
		int k;

		for (k = 0; k < f.n; k++)
			if (f.t[k].var == a->var && f.t[k].lf < ahi &&
			    (istop(&D, &f.t[k]) || f.t[k].lf * f.t[k].ext > a->lf))
				return 0;
		for (k = 0; k < d; k++)
			if (D.xa[k].var == a->var && D.xa[k].lf < ahi && D.xa[k].lf * D.xa[k].ext > a->lf)
				return 0;
	}
	*lo = *hi = f.c;
	for (d = 0; d < A.nd; d++) {
		if (!row[d] || A.ext[d] < 2)
			continue;
		/* a ragged variable's top digit reaches its ends only with the lower digits
		 * of the same variable at 0: exact when the form reads no other digit of it */
		if (A.ragged[A.var[d]] && (d + 1 == A.nd || A.var[d + 1] != A.var[d])) {
			int l;

			for (l = 0; l < d; l++)
				if (A.var[l] == A.var[d] && row[l] && A.ext[l] > 1)
					return 0;
		}
		if (ck_mul(row[d], A.ext[d] - 1, &v) || ck_add(v < 0 ? *lo : *hi, v, v < 0 ? lo : hi))
			return 0;
	}
	return 1;
}

/*
 * frag_contains without slots: large's thread map as g(x) + K * _rep (one full
 * digit of _rep, K > 0) holds x on threads g(x) + K r, r < R; small is contained when
 * h = small.thread - g lies in [0, K (R - 1)] and is a multiple of K everywhere
 * (every coefficient and the constant of its form are).
 */
int
layout_aff_contains_(const Layout *small, const Layout *large)
{
	ADom Dl, Ds;
	Aff fl, h, g;
	Atoms A;
	int64_t row[MAXD], K = 0, lo, hi, v, top;
	int64_t shape[LAYOUT_MAXDIM + 1];
	int varid[LAYOUT_MAXDIM + 1], k, d, n = small->nin;

	if (!small->is_frag || !large->is_frag || small->nin != large->nin || large->rep < 2)
		return 0;
	for (k = 0; k < n; k++) {
		shape[k] = small->in_shape[k];
		varid[k] = k;
	}
	varid[n] = IEXPR_REP;
	shape[n] = large->rep;
	mkdom(&Dl, shape, varid, n + 1);
	shape[n] = small->rep;
	mkdom(&Ds, shape, varid, n + 1);
	if (parse(&Dl, large->thread, &fl, 0) || parse(&Ds, small->thread, &h, 0))
		return 0;
	memset(&g, 0, sizeof g);
	g.c = fl.c;
	for (k = 0; k < fl.n; k++) {
		const Term *t = &fl.t[k];

		if (t->var != IEXPR_REP) {
			if (addterm(&Ds, &g, t->var, t->lf, t->ext, t->coef))
				return 0;
		} else if (K || t->lf != 1 || !istop(&Dl, t) || t->coef <= 0) {
			return 0;
		} else {
			K = t->coef;
		}
	}
	if (!K || addscaled(&Ds, &h, &g, -1) || h.c % K)
		return 0;
	if (atoms(&Ds, &h, 1, &A) || linear(&Ds, &h, &A, row))
		return 0;
	lo = hi = h.c;
	for (d = 0; d < A.nd; d++) {
		if (!row[d] || A.ext[d] < 2)
			continue;
		if (row[d] % K || ck_mul(row[d], A.ext[d] - 1, &v) ||
		    ck_add(v < 0 ? lo : hi, v, v < 0 ? &lo : &hi))
			return 0;
	}
	return !ck_mul(K, large->rep - 1, &top) && lo >= 0 && hi <= top;
}

/*
 * The vector run v of es over the domain: at every point whose variable var is a
 * multiple of v, and for k < v, the point with var + k gives es[out] + k and the same
 * other outputs, and es[out] is a multiple of v there. Proved when every output is a
 * linear form in atomic digits cut at the boundary v of var: the digits of var below v
 * (the low ones) appear in es[out] alone, each with its own place value (so together
 * as var % v), and every other term of es[out] and its constant are multiples of v;
 * an a ^ b (a pseudo-variable) must not read the low digits. Domain points with var a
 * multiple of v and var + k < S[var] share the high digits (v | S[var]).
 */
int
layout_aff_vecrun_(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne, int var,
		   int64_t v, int out)
{
	ADom D;
	Aff *f = NULL;
	Atoms A;
	int64_t row[MAXD];
	int clean[MAXX], e, d, p, u, ok = 0;

	if (ne < 1 || ne > 2 * LAYOUT_MAXDIM + 2 || out < 0 || out >= ne || var < 0 || var >= IEXPR_NVARS ||
	    v < 2)
		return 0;
	mkdom(&D, shape, varid, n);
	D.xor = 1;
	if (D.S[var] < 1 || D.S[var] % v)
		return 0;
	if (!(f = malloc(sizeof *f * (size_t)(ne + 1))))
		return 0;
	for (e = 0; e < ne; e++)
		if (parse(&D, es[e], &f[e], 0))
			goto out;
	/* var's digits from 1 and the boundary v among the atoms (a form x + x // v), so that the
	 * low atoms are all of var % v even where no output reads them */
	memset(&f[ne], 0, sizeof f[ne]);
	if (addterm(&D, &f[ne], var, 1, D.S[var], 1) ||
	    (v < D.S[var] && addterm(&D, &f[ne], var, v, D.S[var] / v, 1)))
		goto out;
	if (atoms(&D, f, ne + 1, &A))
		goto out;
	for (p = 0; p < D.nx; p++) {
		clean[p] = 1;
		for (u = 0; u < NV; u++) {
			if (!D.xlf[p][u])
				continue;
			if ((u == var && D.xlf[p][u] % v) || (u >= IEXPR_NVARS && !clean[u - IEXPR_NVARS]))
				clean[p] = 0;
		}
	}
	for (e = 0; e < ne; e++) {
		if (linear(&D, &f[e], &A, row))
			goto out;
		if (e == out && f[e].c % v)
			goto out;
		for (d = 0; d < A.nd; d++) {
			int low = A.var[d] == var && A.lf[d] < v;

			if (A.ext[d] < 2)
				continue;
			if (low && A.lf[d] * A.ext[d] > v)
				goto out;       /* not cut at v (cannot happen: v is a boundary) */
			if (e == out && low) {
				if (row[d] != A.lf[d])
					goto out;
				continue;
			}
			if (!row[d])
				continue;
			if (A.var[d] >= IEXPR_NVARS && !clean[A.var[d] - IEXPR_NVARS])
				goto out;
			if (low || (e == out && row[d] % v))
				goto out;
		}
	}
	ok = 1;
out:
	free(f);
	return ok;
}
