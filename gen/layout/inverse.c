/*
 * inverse.c: closed-form inverses of layouts. The inputs are cut into
 * mixed-radix digits; an inverse is recovered by mixed-radix reading of the
 * outputs or, for XOR layouts, over GF(2) from the output bits, and every
 * candidate is verified by a round trip over the whole domain.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

/* ---- digits: the mixed-radix pieces of the inputs --------------------------- */

typedef struct {
	int64_t p[64];
	int n;
} Pts;

typedef struct {
	int var;                /* var id */
	int64_t lf, ext;        /* value = (x // lf) % ext */
} Digit;

static void
addpt(Pts *P, int64_t v)
{
	if (v > 1 && P->n < 64)
		P->p[P->n++] = v;
}

static void
termsplit(const IExpr *t, int64_t c, Pts *pts)
{
	int64_t m;

	while (t->k == IX_MOD && t->b->k == IX_CONST)
		t = t->a;
	if (t->k == IX_VAR) {
		addpt(&pts[t->v], c);
	} else if (t->k == IX_MUL && t->a->k == IX_VAR && t->b->k == IX_CONST && t->b->v > 0 &&
		   c % t->b->v == 0) {
		addpt(&pts[t->a->v], c / t->b->v);
	} else if (t->k == IX_DIV && t->a->k == IX_VAR && t->b->k == IX_CONST && t->b->v > 0) {
		addpt(&pts[t->a->v], t->b->v);
		if (!ck_mul(t->b->v, c, &m))
			addpt(&pts[t->a->v], m);
	} else if (t->k == IX_ADD || t->k == IX_SUB || t->k == IX_XOR || t->k == IX_OR) {
		termsplit(t->a, c, pts);
		termsplit(t->b, c, pts);
	}
}

static void
walksplit(const IExpr *e, Pts *pts)
{
	if (!e || e->k == IX_CONST || e->k == IX_VAR)
		return;
	if ((e->k == IX_DIV || e->k == IX_MOD) && e->b->k == IX_CONST && e->b->v > 0)
		termsplit(e->a, e->b->v, pts);
	walksplit(e->a, pts);
	walksplit(e->b, pts);
	walksplit(e->c, pts);
}

static int
cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* digits of vars[0..nv) (extents ext), from the split points the expressions
 * use; power-of-two pieces are refined to single bits */
static int
digits(IExpr *const *es, int ne, const int *vars, const int64_t *ext, int nv, Digit *out, int max)
{
	Pts pts[IEXPR_NVARS];
	int v, e, i, n = 0;

	memset(pts, 0, sizeof pts);
	for (e = 0; e < ne; e++)
		walksplit(es[e], pts);
	for (v = 0; v < nv; v++) {
		Pts *P = &pts[vars[v]];
		int64_t last = 1, S = ext[v];

		qsort(P->p, (size_t)P->n, sizeof P->p[0], cmp64);
		for (i = 0; i <= P->n; i++) {
			int64_t p = i < P->n ? P->p[i] : S, pe, lf;

			if (p <= last || p > S || p % last || S % p)
				continue;
			pe = p / last;
			if (!(pe & (pe - 1))) {
				for (lf = last; lf < p; lf *= 2) {
					if (n == max)
						return -1;
					out[n].var = vars[v];
					out[n].lf = lf;
					out[n++].ext = 2;
				}
			} else {
				if (n == max)
					return -1;
				out[n].var = vars[v];
				out[n].lf = last;
				out[n++].ext = pe;
			}
			last = p;
		}
	}
	return n;
}

/* shared inside the layout core (layout_int.h) */
int
layout_digits_(IExpr *const *es, int ne, const int *vars, const int64_t *ext, int nv, int *dvar,
	       int64_t *dlf, int64_t *dext, int max)
{
	Digit d[128];
	int n = digits(es, ne, vars, ext, nv, d, max < 128 ? max : 128), k;

	for (k = 0; k < n; k++) {
		dvar[k] = d[k].var;
		dlf[k] = d[k].lf;
		dext[k] = d[k].ext;
	}
	return n;
}

/* ---- inverse ------------------------------------------------------------------ */

typedef struct {
	int n, nout;
	IProg *inv;
	const int64_t *shape;
	Err *err;
} Rt;

static int
v_roundtrip(void *ctx, int64_t first, int np, const int64_t *const *coord,
	    const int64_t *const *vals)
{
	Rt *r = ctx;
	const int64_t *vars[IEXPR_NVARS] = {0}, *got[LAYOUT_MAXDIM];
	int k, p;

	for (k = 0; k < r->nout; k++)
		vars[k] = vals[k];
	if (iprog_run(r->inv, vars, np, got))
		return err_set(r->err, "inverse evaluation failed (division by zero)");
	for (k = 0; k < r->n; k++)
		for (p = 0; p < np; p++)
			if (got[k][p] != coord[k][p]) {
				Buf s;

				buf_init(&s);
				layout_print_point(&s, r->shape, r->n, first + p);
				err_set(r->err, "inverse round trip fails at logical %s", buf_str(&s));
				buf_free(&s);
				return -1;
			}
	return 0;
}

static int
roundtrip(const int64_t *shape, int n, IExpr *const *fwd, int nout, IExpr **inv, Err *err)
{
	Rt r;
	int varid[LAYOUT_MAXDIM], k, ret;
	IExpr *sub[IEXPR_NVARS] = {0};
	IDom dom;
	Arena t;

	for (k = 0; k < n; k++)
		varid[k] = k;
	/* inv(fwd(x)) == x proved on the mixed-radix forms, at any domain size */
	memset(&dom, 0, sizeof dom);
	for (k = 0; k < n; k++)
		dom.ext[k] = shape[k];
	for (k = 0; k < nout && k < IEXPR_NVARS; k++)
		sub[k] = fwd[k];
	arena_init(&t);
	for (k = 0; nout <= IEXPR_NVARS && k < n; k++) {
		IExpr *x = iexpr_var(&t, k), *y = iexpr_subst(&t, inv[k], sub, &dom);

		if (!x || !y || !layout_aff_equal_(shape, varid, n, y, x))
			break;
	}
	arena_free(&t);
	if (nout <= IEXPR_NVARS && k == n)
		return 0;
	memset(&r, 0, sizeof r);
	if (!(r.inv = iprog_compile(inv, n, err)))
		return -1;
	r.n = n;
	r.nout = nout;
	r.shape = shape;
	r.err = err;
	ret = layout_enumerate(shape, varid, n, fwd, nout, v_roundtrip, &r, err);
	iprog_free(r.inv);
	return ret ? -1 : 0;
}

static int
probe(IExpr *const *fwd, int nout, const Digit *d, int64_t v, int64_t *y, Err *err)
{
	int64_t vals[IEXPR_NVARS] = {0};
	int o;

	if (d)
		vals[d->var] = d->lf * v;
	for (o = 0; o < nout; o++)
		if (iexpr_eval(fwd[o], vals, &y[o], err))
			return -1;
	return 0;
}

static int64_t
gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* method A: outputs are sums of digit terms (x // a) % b * w (plus a constant) */
static IExpr **
inv_radix(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout, const IDom *od,
	  Err *err)
{
	Digit d[128], g[128];
	int vars[LAYOUT_MAXDIM], src[128], nd, ng = 0, k, i, h, o;
	int64_t y0[LAYOUT_MAXDIM], w[LAYOUT_MAXDIM][128], y[LAYOUT_MAXDIM], mod[128];
	IExpr **inv;

	for (k = 0; k < n; k++)
		vars[k] = k;
	if ((nd = digits(fwd, nout, vars, shape, n, d, 128)) < 0)
		return err_set(err, "too many digits"), NULL;
	if (probe(fwd, nout, NULL, 0, y0, err))
		return NULL;
	for (i = 0; i < nd; i++) {
		int merge = ng > 0 && g[ng - 1].var == d[i].var && g[ng - 1].lf * g[ng - 1].ext == d[i].lf;

		if (probe(fwd, nout, &d[i], 1, y, err))
			return NULL;
		for (o = 0; o < nout && merge; o++)
			merge = y[o] - y0[o] == w[o][ng - 1] * g[ng - 1].ext;
		if (merge) {
			g[ng - 1].ext *= d[i].ext;
			continue;
		}
		g[ng] = d[i];
		for (o = 0; o < nout; o++)
			w[o][ng] = y[o] - y0[o];
		ng++;
	}
	for (i = 0; i < ng; i++) {
		src[i] = -1;
		for (o = 0; o < nout && src[i] < 0; o++) {
			int64_t wi = w[o][i], low = 0, t, m = 0;
			int ok = wi > 0;

			for (h = 0; ok && h < ng; h++) {
				if (h == i || !w[o][h])
					continue;
				if (w[o][h] < 0)
					ok = 0;
				else if (w[o][h] < wi)
					ok = !ck_mul(w[o][h], g[h].ext - 1, &t) && !ck_add(low, t, &low);
				else if (w[o][h] % wi)
					ok = 0;
				else
					m = gcd64(m, w[o][h] / wi);
			}
			if (ok && low < wi && (m == 0 || m >= g[i].ext)) {
				src[i] = o;
				mod[i] = m ? m : g[i].ext;
			}
		}
		if (src[i] < 0) {
			err_set(err, "no output recovers the digit %s // %lld %% %lld",
				iexpr_varname(g[i].var), (long long)g[i].lf, (long long)g[i].ext);
			return NULL;
		}
	}
	if (!(inv = anewn(A, IExpr *, n)))
		return err_set(err, "out of memory"), NULL;
	for (k = 0; k < n; k++)
		inv[k] = iexpr_const(A, 0);
	for (i = 0; i < ng; i++) {
		IExpr *z;

		o = src[i];
		z = iexpr_addc(A, iexpr_var(A, o), -y0[o]);
		z = iexpr_mulc(A, iexpr_modc(A, iexpr_divc(A, z, w[o][i]), mod[i]), g[i].lf);
		inv[g[i].var] = iexpr_add(A, inv[g[i].var], z);
	}
	for (k = 0; k < n; k++)
		inv[k] = iexpr_simplify(A, inv[k], od);
	if (roundtrip(shape, n, fwd, nout, inv, err))
		return NULL;
	return inv;
}

static int
nbits(int64_t v)
{
	int b = 0;

	while (((int64_t)1 << b) < v)
		b++;
	return b;
}

/* method A's recovery test for digit i from output o: 0 if (y_o - y0) // w % mod
 * recovers it (mod set), else -1 */
static int
recover(int64_t (*w)[128], const Digit *d, int nd, int o, int i, int64_t *mod)
{
	int64_t wi = w[o][i], low = 0, t, m = 0;
	int h;

	if (wi <= 0)
		return -1;
	for (h = 0; h < nd; h++) {
		if (h == i || !w[o][h])
			continue;
		if (w[o][h] < 0)
			return -1;
		if (w[o][h] < wi) {
			if (ck_mul(w[o][h], d[h].ext - 1, &t) || ck_add(low, t, &low))
				return -1;
		} else if (w[o][h] % wi) {
			return -1;
		} else {
			m = gcd64(m, w[o][h] / wi);
		}
	}
	if (low >= wi || (m && m < d[i].ext))
		return -1;
	*mod = m ? m : d[i].ext;
	return 0;
}

/* method B (swizzles): the bits of the inputs are recovered over GF(2) from the
 * bits of the outputs that hold only bits (XOR of input bits, no carries);
 * digits that are not powers of two must sit in a mixed-radix field */
static IExpr **
inv_gf2(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout, const int64_t *oshape,
	const IDom *od, Err *err)
{
	Digit d[128];
	uint64_t rows[64], comb[64], t;
	int vars[LAYOUT_MAXDIM], clean[LAYOUT_MAXDIM], col[128], piv[64], dcol[64];
	int rowo[64], rowq[64], nd, nb = 0, nr = 0, k, o, q, b, r, i, rank = 0;
	int64_t y0[LAYOUT_MAXDIM], y[LAYOUT_MAXDIM], w[LAYOUT_MAXDIM][128], mod = 1;
	IExpr **inv;

	for (k = 0; k < n; k++)
		vars[k] = k;
	if ((nd = digits(fwd, nout, vars, shape, n, d, 128)) < 0)
		return err_set(err, "too many digits"), NULL;
	if (probe(fwd, nout, NULL, 0, y0, err))
		return NULL;
	for (i = 0; i < nd; i++) {
		if (probe(fwd, nout, &d[i], 1, y, err))
			return NULL;
		for (o = 0; o < nout; o++)
			w[o][i] = y[o] - y0[o];
		col[i] = -1;
		if (d[i].ext == 2) {
			if (nb == 64)
				return err_set(err, "too many input bits"), NULL;
			dcol[nb] = i;
			col[i] = nb++;
		}
	}
	for (o = 0; o < nout; o++) {
		clean[o] = y0[o] == 0;
		for (i = 0; i < nd && clean[o]; i++)
			clean[o] = !w[o][i] || (d[i].ext == 2 && w[o][i] > 0);
		for (q = 0; clean[o] && q < nbits(oshape[o]); q++) {
			if (nr == 64)
				return err_set(err, "too many output bits"), NULL;
			rows[nr] = 0;
			for (b = 0; b < nb; b++)
				if ((w[o][dcol[b]] >> q) & 1)
					rows[nr] |= (uint64_t)1 << b;
			comb[nr] = (uint64_t)1 << nr;
			rowo[nr] = o;
			rowq[nr++] = q;
		}
	}
	for (b = 0; b < nb; b++) {
		for (r = rank; r < nr && !((rows[r] >> b) & 1); r++)
			;
		if (r == nr)
			return err_set(err, "input bit %s // %lld %% 2 is lost", iexpr_varname(d[dcol[b]].var),
				       (long long)d[dcol[b]].lf), NULL;
		t = rows[r], rows[r] = rows[rank], rows[rank] = t;
		t = comb[r], comb[r] = comb[rank], comb[rank] = t;
		for (r = 0; r < nr; r++)
			if (r != rank && ((rows[r] >> b) & 1)) {
				rows[r] ^= rows[rank];
				comb[r] ^= comb[rank];
			}
		piv[b] = rank++;
	}
	if (!(inv = anewn(A, IExpr *, n)))
		return err_set(err, "out of memory"), NULL;
	for (k = 0; k < n; k++)
		inv[k] = iexpr_const(A, 0);
	for (i = 0; i < nd;) {
		int e = i + 1, len;
		uint64_t c;
		IExpr *term = NULL;

		if (col[i] < 0) {       /* a digit that is not a power of two */
			for (o = 0; o < nout; o++)
				if (!recover(w, d, nd, o, i, &mod))
					break;
			if (o == nout)
				return err_set(err, "no output recovers the digit %s // %lld %% %lld",
					       iexpr_varname(d[i].var), (long long)d[i].lf,
					       (long long)d[i].ext), NULL;
			term = iexpr_addc(A, iexpr_var(A, o), -y0[o]);
			term = iexpr_modc(A, iexpr_divc(A, term, w[o][i]), mod);
			inv[d[i].var] = iexpr_add(A, inv[d[i].var], iexpr_mulc(A, term, d[i].lf));
			i++;
			continue;
		}
		c = comb[piv[col[i]]];
		/* grow the field while the next bit reads the next bit of the same sources */
		while (e < nd && col[e] >= 0 && d[e].var == d[i].var && d[e].lf == d[e - 1].lf * 2) {
			uint64_t ce = comb[piv[col[e]]], want = 0;
			int ok = 1;

			for (r = 0; r < nr && ok; r++)
				if ((c >> r) & 1) {
					int rr;

					for (rr = 0; rr < nr; rr++)
						if (rowo[rr] == rowo[r] && rowq[rr] == rowq[r] + (e - i))
							break;
					if (rr == nr)
						ok = 0;
					else
						want |= (uint64_t)1 << rr;
				}
			if (!ok || want != ce)
				break;
			e++;
		}
		len = e - i;
		for (r = 0; r < nr; r++)
			if ((c >> r) & 1) {
				IExpr *f = iexpr_modc(A, iexpr_divc(A, iexpr_var(A, rowo[r]),
								    (int64_t)1 << rowq[r]),
						      (int64_t)1 << len);

				term = term ? iexpr_bin(A, IX_XOR, term, f) : f;
			}
		term = iexpr_simplify(A, term, od);
		inv[d[i].var] = iexpr_add(A, inv[d[i].var], iexpr_mulc(A, term, d[i].lf));
		i = e;
	}
	for (k = 0; k < n; k++)
		inv[k] = iexpr_simplify(A, inv[k], od);
	if (roundtrip(shape, n, fwd, nout, inv, err))
		return NULL;
	return inv;
}

/* a^-1 mod m for gcd(a, m) == 1 (extended Euclid), else 0 */
static int64_t
modinv(int64_t a, int64_t m)
{
	int64_t t = 0, nt = 1, r = m, nr = floormod64(a, m), q, x;

	while (nr) {
		q = r / nr;
		x = t - q * nt, t = nt, nt = x;
		x = r - q * nr, r = nr, nr = x;
	}
	return r == 1 ? floormod64(t, m) : 0;
}

/*
 * method C (permuted replicas, e.g. a thread map _rep * 5 % 256): every input is read
 * alone by some output as (a x + b) mod E over its extent E, gcd(a, E) = 1, so
 * x = (y - b) a^-1 mod E. Each such output is checked at its E points.
 */
static IExpr **
inv_units(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout, const IDom *od,
	  Err *err)
{
	IExpr **inv;
	int v, o;

	if (!(inv = anewn(A, IExpr *, n)))
		return err_set(err, "out of memory"), NULL;
	for (v = 0; v < n; v++) {
		int64_t E = shape[v], vals[IEXPR_NVARS] = {0}, y0, y1, y, x, a, ai = 0;

		if (E == 1) {
			inv[v] = iexpr_const(A, 0);
			continue;
		}
		for (o = 0; o < nout; o++) {
			if (iexpr_vars(fwd[o]) != 1u << v || E > layout_enum_limit())
				continue;
			vals[v] = 0;
			if (iexpr_eval(fwd[o], vals, &y0, NULL))
				continue;
			vals[v] = 1;
			if (iexpr_eval(fwd[o], vals, &y1, NULL))
				continue;
			a = y1 - y0;
			if (!(ai = modinv(a, E)))
				continue;
			for (x = 2; x < E; x++) {
				vals[v] = x;
				if (iexpr_eval(fwd[o], vals, &y, NULL) ||
				    y != floormod64(floormod64(a, E) * x + y0, E))
					break;
			}
			if (x == E && y0 >= 0 && y0 < E)
				break;
			ai = 0;
		}
		if (o == nout)
			return err_set(err, "no output reads %s alone as a permutation of its %lld values",
				       iexpr_varname(v), (long long)E), NULL;
		inv[v] = iexpr_modc(A, iexpr_mulc(A, iexpr_addc(A, iexpr_var(A, o), -y0), ai), E);
		inv[v] = iexpr_simplify(A, inv[v], od);
	}
	if (roundtrip(shape, n, fwd, nout, inv, err))
		return NULL;
	return inv;
}

IExpr **
layout_invert_exprs(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout,
		    const int64_t *oshape, Err *err)
{
	IDom od;
	IExpr **inv;
	Err ea = {0}, eb = {0};
	int k;

	if (n < 1 || n > LAYOUT_MAXDIM || nout < 1 || nout > LAYOUT_MAXDIM) {
		err_set(err, "inverse: bad rank");
		return NULL;
	}
	memset(&od, 0, sizeof od);
	for (k = 0; k < nout; k++)
		od.ext[k] = oshape[k];
	if ((inv = inv_radix(A, shape, n, fwd, nout, &od, &ea)))
		return inv;
	if ((inv = inv_gf2(A, shape, n, fwd, nout, oshape, &od, &eb)))
		return inv;
	{
		Err ec = {0};

		if ((inv = inv_units(A, shape, n, fwd, nout, &od, &ec)))
			return inv;
	}
	err_set(err, "no closed-form inverse: mixed-radix recovery: %s; XOR recovery: %s", ea.msg,
		eb.msg);
	return NULL;
}

