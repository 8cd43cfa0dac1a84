/*
 * cute_conv.c: converters from finite functions (tilec Layouts and Fragments,
 * given as callbacks) to CuTe layouts, by probe-then-prove: strides are probed
 * at one-hot points (each input dim is split into the mixed-radix sub-modes
 * the probes reveal), then equality is proved by enumerating the whole domain.
 */
#include <stdlib.h>
#include <string.h>

#include "cute.h"

enum { MAXIN = 16, MAXOUT = 16 };

int cute_reference_search;

typedef struct Fn {
	int nin, nout, nv;          /* nv: values per point (1 when serialized) */
	const int64_t *in_shape, *out_shape;
	CuteProbe f;
	void *ctx;
	int hier;
	CuteSwizzle sw;             /* b > 0: applied to the serialized value */
	/* table mode (cute_*_from_table): tab holds nout in-range outputs per row-major
	 * point and ser their row-major serialization (unswizzled; NULL when hier) */
	const int64_t *tab, *ser;
	/* symbolic mode (cute_convert_proved): prove decides the probed layout's equality,
	 * and convert returns 2 where the proof would need the whole domain */
	CuteProve prove;
	void *pctx;
	int64_t coord[MAXIN], out[MAXOUT];
	Err *err;
} Fn;

/* cute_swizzle_apply, inlined */
static inline int64_t
swz(CuteSwizzle sw, int64_t x)
{
	uint64_t ux = (uint64_t)x, sel = ux & ((((uint64_t)1 << sw.b) - 1) << (sw.m + (sw.s > 0 ? sw.s : 0)));

	return (int64_t)(ux ^ (sw.s >= 0 ? sel >> sw.s : sel << -sw.s));
}

/* the row-major index of F->coord */
static int64_t
flat(const Fn *F)
{
	int64_t f = 0;
	int k;

	for (k = 0; k < F->nin; k++)
		f = f * F->in_shape[k] + F->coord[k];
	return f;
}

/* the value at F->coord into val[nv]: 0 ok, 1 not representable, -1 error */
static int
value(Fn *F, int64_t *val)
{
	int k;
	int64_t acc = 0;

	if (F->tab) {   /* checked in range and serializable when the table was taken */
		int64_t f = flat(F);

		if (F->hier)
			memcpy(val, F->tab + f * F->nout, sizeof *val * (size_t)F->nout);
		else
			val[0] = F->sw.b > 0 ? swz(F->sw, F->ser[f]) : F->ser[f];
		return 0;
	}
	memset(F->out, 0, sizeof F->out);
	if (F->f(F->ctx, F->coord, F->out) != 0) {
		err_set(F->err, "not representable: the function fails at a point of its domain");
		return 1;
	}
	for (k = 0; k < F->nout; k++) {
		if (F->out[k] < 0 || F->out[k] >= F->out_shape[k]) {
			err_set(F->err, "not representable: output %d is %lld, outside [0,%lld)", k,
				(long long)F->out[k], (long long)F->out_shape[k]);
			return 1;
		}
	}
	if (F->hier) {
		memcpy(val, F->out, sizeof *val * (size_t)F->nout);
		return 0;
	}
	for (k = 0; k < F->nout; k++)
		if (ck_mul(acc, F->out_shape[k], &acc) < 0 || ck_add(acc, F->out[k], &acc) < 0)
			return err_set(F->err, "cute: integer overflow serializing outputs");
	if (F->sw.b > 0)
		acc = cute_swizzle_apply(F->sw, acc);
	val[0] = acc;
	return 0;
}

typedef CuteSubMode Sub;

/* the value at the one-hot point (dim k = j) */
static int
probe(Fn *F, int k, int64_t j, int64_t *val)
{
	int rc, l;

	if (F->tab && !F->hier) {
		/* the one-hot point's row-major index, read from the serialized table (F->coord
		 * is left as the other path leaves it: zero) */
		int64_t f = j;

		for (l = k + 1; l < F->nin; l++)
			f *= F->in_shape[l];
		for (l = 0; l < F->nin; l++)    /* no entry past nin is read */
			F->coord[l] = 0;
		val[0] = F->sw.b > 0 ? swz(F->sw, F->ser[f]) : F->ser[f];
		return 0;
	}
	memset(F->coord, 0, sizeof F->coord);
	F->coord[k] = j;
	rc = value(F, val);
	F->coord[k] = 0;
	return rc;
}

static int
vec_is(const int64_t *v, const int64_t *d, int64_t j, int nv)
{
	int c;
	int64_t x;

	for (c = 0; c < nv; c++)
		if (ck_mul(d[c], j, &x) < 0 || v[c] != x)
			return 0;
	return 1;
}

/* factor() in table mode (not hier): the one-hot probes of dim k read from ser at the
 * dim's row-major stride, the same probes in the same order */
static int
factor_ser(Fn *F, int k, Sub *sub, int *nsub)
{
	const int64_t n = F->in_shape[k], *ser = F->ser;
	const CuteSwizzle sw = F->sw;
	int64_t rs = 1, pos = 1, rem, run, m, v, x;
	int l;

	for (l = k + 1; l < F->nin; l++)
		rs *= F->in_shape[l];
	*nsub = 0;
	while (pos < n) {
		Sub *s = &sub[*nsub];
		int64_t d;

		d = sw.b > 0 ? swz(sw, ser[pos * rs]) : ser[pos * rs];
		s->d[0] = d;
		rem = n / pos;
		for (run = 2; run < rem; run++) {
			v = sw.b > 0 ? swz(sw, ser[run * pos * rs]) : ser[run * pos * rs];
			if (ck_mul(d, run, &x) < 0 || v != x)
				break;
		}
		for (m = run < rem ? run : rem; m > 1 && rem % m; m--)
			;
		if (m <= 1 || *nsub >= 62) {
			err_set(F->err, "not representable: input dim %d is not a mixed-radix "
				"strided map (at %lld)", k, (long long)pos);
			return 0;
		}
		s->s = m;
		(*nsub)++;
		pos *= m;
	}
	return 1;
}

/* split dim k into sub-modes: 1 ok, 0 not representable, -1 error */
static int
factor(Fn *F, int k, Sub *sub, int *nsub)
{
	int64_t n = F->in_shape[k], pos = 1, rem, run, m, v[MAXOUT];
	int rc;

	if (F->tab && !F->hier && !cute_reference_search)
		return factor_ser(F, k, sub, nsub);
	*nsub = 0;
	while (pos < n) {
		Sub *s = &sub[*nsub];

		if ((rc = probe(F, k, pos, s->d)) != 0)
			return rc < 0 ? -1 : 0;
		rem = n / pos;
		for (run = 2; run < rem; run++) {
			if ((rc = probe(F, k, run * pos, v)) != 0)
				return rc < 0 ? -1 : 0;
			if (!vec_is(v, s->d, run, F->nv))
				break;
		}
		for (m = run < rem ? run : rem; m > 1 && rem % m; m--)
			;
		if (m <= 1 || *nsub >= 62) {
			err_set(F->err, "not representable: input dim %d is not a mixed-radix "
				"strided map (at %lld)", k, (long long)pos);
			return 0;
		}
		s->s = m;
		(*nsub)++;
		pos *= m;
	}
	return 1;
}

static int
mkstride(Fn *F, const int64_t *d, CuteInt *x)
{
	int c, nz = -1;

	memset(x, 0, sizeof *x);
	if (!F->hier) {
		x->v = d[0];
		return 1;
	}
	for (c = 0; c < F->nv; c++) {
		if (d[c] == 0)
			continue;
		if (nz >= 0) {
			err_set(F->err, "not representable: a sub-mode moves outputs %d and %d at once",
				nz, c);
			return 0;
		}
		nz = c;
	}
	if (nz >= 0) {
		x->v = d[nz];
		x->nb = 1;
		x->b[0] = (uint8_t)nz;
	}
	return 1;
}

/* does the probed layout (the sum of each input's table at F->coord) give val at F->coord?
 * 1 yes, 0 no (err says what differs), -1 on overflow */
static int
probed_is(const Fn *F, int64_t *const *tab, const int64_t *val, Err *err)
{
	int64_t acc;
	int c, k;

	for (c = 0; c < F->nv; c++) {
		acc = 0;
		for (k = 0; k < F->nin; k++)
			if (ck_add(acc, tab[k][F->coord[k] * F->nv + c], &acc) < 0)
				return err_set(err, "cute: integer overflow in converter");
		if (acc != val[c]) {
			err_set(err, "not representable: the probed layout gives %lld where the function gives %lld",
				(long long)acc, (long long)val[c]);
			return 0;
		}
	}
	return 1;
}

/* F->coord to the next point in row-major order; 0 when it wrapped past the last */
static int
next_point(Fn *F)
{
	int k;

	for (k = F->nin - 1; k >= 0; k--) {
		if (++F->coord[k] < F->in_shape[k])
			return 1;
		F->coord[k] = 0;
	}
	return 0;
}

static int
convert(Arena *a, Fn *F, CuteLayout *res, Err *err)
{
	int k, i, c, rc, nsub[MAXIN];
	int64_t D = 1, n, v0[MAXOUT], val[MAXOUT];
	Sub *subs[MAXIN];
	int64_t *tab[MAXIN];
	CuteLayout *modes;

	F->err = err;
	if (F->nin < 1 || F->nin > MAXIN - 1 || F->nout < 1 || F->nout > MAXOUT - 1)
		return err_set(err, "cute: converter needs 1..%d inputs and outputs", MAXIN - 1);
	if (!F->in_shape || !F->out_shape || !F->f || !res)
		return err_set(err, "cute: converter: missing argument");
	for (k = 0; k < F->nin; k++)
		if (F->in_shape[k] <= 0 || ck_mul(D, F->in_shape[k], &D) < 0)
			return err_set(err, "cute: converter: bad input extents");
	for (k = 0; k < F->nout; k++)
		if (F->out_shape[k] <= 0)
			return err_set(err, "cute: converter: bad output extents");
	if (D > CUTE_MAXPROVE)
		return err_set(err, "cute: converter: domain of %lld points is past the proof limit %d",
			       (long long)D, CUTE_MAXPROVE);
	F->nv = F->hier ? F->nout : 1;
	memset(F->coord, 0, sizeof F->coord);
	if ((rc = value(F, v0)) != 0)
		return rc < 0 ? -1 : 0;
	for (c = 0; c < F->nv; c++)
		if (v0[c] != 0) {
			err_set(err, "not representable: the origin maps to %lld, not 0", (long long)v0[c]);
			return 0;
		}
	/* probe: sub-modes of every dim, and a table of each dim's values */
	if (!(modes = anewn(a, CuteLayout, F->nin)))
		return err_set(err, "cute: out of memory");
	for (k = 0; k < F->nin; k++) {
		CuteLayout *sm;
		Sub found[64];

		n = F->in_shape[k];
		/* factored on the stack, then kept at its size: the swizzle search converts
		 * dozens of candidates, and zeroing room for 64 sub-modes each cost more than
		 * the probes */
		if ((rc = factor(F, k, found, &nsub[k])) != 1)
			return rc;
		if (!(subs[k] = anewn(a, Sub, nsub[k] + 1)) || !(tab[k] = anewn(a, int64_t, n * F->nv)) ||
		    !(sm = anewn(a, CuteLayout, nsub[k] + 1)))
			return err_set(err, "cute: out of memory");
		memcpy(subs[k], found, sizeof *found * (size_t)nsub[k]);
		for (i = 0; i < nsub[k]; i++) {
			CuteInt x;

			if (!mkstride(F, subs[k][i].d, &x))
				return 0;
			sm[i].shape = cute_int(a, subs[k][i].s);
			sm[i].stride = cute_leaf(a, x);
		}
		if (nsub[k] == 0) {
			modes[k].shape = cute_int(a, 1);
			modes[k].stride = cute_int(a, 0);
		} else if (nsub[k] == 1) {
			modes[k] = sm[0];
		} else {
			modes[k] = cute_join(a, nsub[k], sm);
		}
		if (!modes[k].shape || !modes[k].stride)
			return err_set(err, "cute: out of memory");
		/* table: column-major over the sub-modes */
		for (i = 0; i < n; i++) {
			int64_t r = i, dig, t;
			int s;

			for (c = 0; c < F->nv; c++)
				tab[k][i * F->nv + c] = 0;
			for (s = 0; s < nsub[k]; s++) {
				dig = r % subs[k][s].s;
				r /= subs[k][s].s;
				for (c = 0; c < F->nv; c++) {
					if (ck_mul(dig, subs[k][s].d[c], &t) < 0 ||
					    ck_add(tab[k][i * F->nv + c], t, &tab[k][i * F->nv + c]) < 0)
						return err_set(err, "cute: integer overflow in converter");
				}
			}
		}
	}
	/* prove: every point of the domain */
	if (F->prove) {
		const CuteSubMode *sp[MAXIN];

		for (k = 0; k < F->nin; k++)
			sp[k] = subs[k];
		if (F->prove(F->pctx, F->sw, F->nin, nsub, sp, F->nv) != 1)
			return 2;
		goto proved;
	}
	memset(F->coord, 0, sizeof F->coord);
	if (F->tab && !F->hier && !cute_reference_search) {
		/* the walk below with running sums per dim, where no sum can overflow (each
		 * dim's largest |entry| added up fits): the first point that differs gets
		 * probed_is's message, so the result is the walk's */
		int64_t bound = 0, part[MAXIN + 1], f, m, vv;
		int fast = 1;

		for (k = 0; fast && k < F->nin; k++) {
			for (m = 0, i = 0; i < F->in_shape[k]; i++) {
				vv = tab[k][i];
				if (vv == INT64_MIN) {
					fast = 0;
					break;
				}
				if ((vv < 0 ? -vv : vv) > m)
					m = vv < 0 ? -vv : vv;
			}
			if (fast && ck_add(bound, m, &bound) < 0)
				fast = 0;
		}
		if (fast) {
			/* a run along the last dim at a time: its table added to the sum of the
			 * outer dims, against the (swizzled) serialized values */
			const int last = F->nin - 1;
			const int64_t nl = F->in_shape[last], *tl = tab[last];
			const uint64_t ymask = F->sw.b > 0 ? (((uint64_t)1 << F->sw.b) - 1)
							       << (F->sw.m + (F->sw.s > 0 ? F->sw.s : 0))
							 : 0;
			const int sh = F->sw.s;

			part[0] = 0;
			for (k = 0; k < last; k++)
				part[k + 1] = part[k] + tab[k][0];
			for (f = 0; f < D; f += nl) {
				const int64_t base = part[last], *sp = F->ser + f;

				for (m = 0; m < nl; m++) {
					uint64_t ux = (uint64_t)sp[m], sel = ux & ymask;

					vv = (int64_t)(ux ^ (sh >= 0 ? sel >> sh : sel << -sh));
					if (base + tl[m] != vv) {
						F->coord[last] = m;
						return probed_is(F, tab, &vv, err);
					}
				}
				/* the outer coordinates' row-major successor, and the sums from
				 * the dim that moved */
				for (k = last - 1; k >= 0; k--) {
					if (++F->coord[k] < F->in_shape[k])
						break;
					F->coord[k] = 0;
				}
				if (k < 0)
					k = 0;
				for (; k < last; k++)
					part[k + 1] = part[k] + tab[k][F->coord[k]];
			}
			goto proved;
		}
	}
	if (F->tab) {
		/* the same walk over memory: point f is the row-major successor of f - 1 */
		int64_t f;

		for (f = 0; f < D; f++) {
			for (c = 0; c < F->nv; c++)
				val[c] = F->hier ? F->tab[f * F->nout + c]
					 : F->sw.b > 0 ? cute_swizzle_apply(F->sw, F->ser[f]) : F->ser[f];
			if ((rc = probed_is(F, tab, val, err)) != 1)
				return rc;
			next_point(F);
		}
		goto proved;
	}
	do {
		if ((rc = value(F, val)) != 0)
			return rc < 0 ? -1 : 0;
		if ((rc = probed_is(F, tab, val, err)) != 1)
			return rc;
	} while (next_point(F));
proved:
	*res = cute_join(a, F->nin, modes);
	if (!res->shape)
		return err_set(err, "cute: out of memory");
	err_clear(err);
	return 1;
}

/*
 * Table mode. The table is used directly (no call per point) when every output is
 * inside out_shape and the serialization cannot overflow; otherwise, or when the
 * arguments are bad, it is read through tab_probe, which gives the callback path's
 * results and messages.
 */
typedef struct TabFn {
	int nin, nout;
	const int64_t *in_shape, *vals;
} TabFn;

static int
tab_probe(void *ctx, const int64_t *coord, int64_t *out)
{
	const TabFn *t = ctx;
	int64_t f = 0;
	int k;

	for (k = 0; k < t->nin; k++)
		f = f * t->in_shape[k] + coord[k];
	memcpy(out, t->vals + f * t->nout, sizeof *out * (size_t)t->nout);
	return 0;
}

/* F->tab and, unless hier, F->ser (malloc'd, *ser to free) when the fast path applies */
static void
tab_prep(Fn *F, const int64_t *vals, int64_t **ser)
{
	int64_t D = 1, f, acc;
	int k;

	*ser = NULL;
	if (!vals || F->nin < 1 || F->nin > MAXIN - 1 || F->nout < 1 || F->nout > MAXOUT - 1 ||
	    !F->in_shape || !F->out_shape)
		return;
	for (k = 0; k < F->nin; k++)
		if (F->in_shape[k] <= 0 || ck_mul(D, F->in_shape[k], &D) < 0 || D > CUTE_MAXPROVE)
			return;
	for (k = 0; k < F->nout; k++)
		if (F->out_shape[k] <= 0)
			return;
	if (!F->hier && !(*ser = malloc(sizeof **ser * (size_t)D)))
		return;
	for (acc = 1, k = 0; k < F->nout; k++)
		if (ck_mul(acc, F->out_shape[k], &acc) < 0)
			break;
	if (k == F->nout) {
		/* the outputs' serialization cannot overflow: only the ranges are checked */
		const int64_t n0 = F->out_shape[0];

		if (F->nout == 1) {
			for (f = 0; f < D; f++) {
				if ((uint64_t)vals[f] >= (uint64_t)n0)
					goto bad;
				if (!F->hier)
					(*ser)[f] = vals[f];
			}
		} else {
			for (f = 0; f < D; f++) {
				const int64_t *o = vals + f * F->nout;

				for (acc = 0, k = 0; k < F->nout; k++) {
					if ((uint64_t)o[k] >= (uint64_t)F->out_shape[k])
						goto bad;
					acc = acc * F->out_shape[k] + o[k];
				}
				if (!F->hier)
					(*ser)[f] = acc;
			}
		}
		F->tab = vals;
		F->ser = *ser;
		return;
bad:
		free(*ser);
		*ser = NULL;
		return;
	}
	for (f = 0; f < D; f++) {
		const int64_t *o = vals + f * F->nout;

		for (acc = 0, k = 0; k < F->nout; k++) {
			if (o[k] < 0 || o[k] >= F->out_shape[k] ||
			    (!F->hier && (ck_mul(acc, F->out_shape[k], &acc) < 0 || ck_add(acc, o[k], &acc) < 0))) {
				free(*ser);
				*ser = NULL;
				return;
			}
		}
		if (!F->hier)
			(*ser)[f] = acc;
	}
	F->tab = vals;
	F->ser = *ser;
}

static void
fn_init(Fn *F, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape, CuteProbe f,
	void *ctx, int hier)
{
	memset(F, 0, sizeof *F);
	F->nin = nin;
	F->in_shape = in_shape;
	F->nout = nout;
	F->out_shape = out_shape;
	F->f = f;
	F->ctx = ctx;
	F->hier = hier;
}

int
cute_from_tile(Arena *a, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape,
	       CuteProbe f, void *ctx, CuteLayout *res, Err *err)
{
	Fn F;

	fn_init(&F, nin, in_shape, nout, out_shape, f, ctx, 0);
	return convert(a, &F, res, err);
}

int
cute_from_tile_hier(Arena *a, int nin, const int64_t *in_shape, int nout,
		    const int64_t *out_shape, CuteProbe f, void *ctx, CuteLayout *res, Err *err)
{
	Fn F;

	fn_init(&F, nin, in_shape, nout, out_shape, f, ctx, 1);
	return convert(a, &F, res, err);
}

int
cute_from_table(Arena *a, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape,
		const int64_t *vals, int hier, CuteLayout *res, Err *err)
{
	TabFn t = {nin, nout, in_shape, vals};
	Fn F;
	int64_t *ser;
	int rc;

	if (!vals)
		return err_set(err, "cute: converter: missing argument");
	fn_init(&F, nin, in_shape, nout, out_shape, tab_probe, &t, hier != 0);
	tab_prep(&F, vals, &ser);
	rc = convert(a, &F, res, err);
	free(ser);
	return rc;
}

/*
 * A necessary condition for F (with its swizzle) to be a strided layout:
 * the value at a point with two non-zero dims is the sum of the values with
 * one of them each, as modes of different dims add. Checked at a few points
 * per pair of dims, it rejects most wrong swizzle candidates with a dozen
 * probes instead of a conversion; it never rejects a candidate convert()
 * would accept, so the search finds the same swizzle. 1 maybe, 0 no.
 */
static int
additive(Fn *F)
{
	int k, l, i;
	int64_t v[3], a, b, sum;
	Err scratch = {0}, *keep = F->err;

	F->err = &scratch;
	for (k = 0; k < F->nin; k++)
		for (l = k + 1; l < F->nin; l++) {
			if (F->in_shape[k] < 2 || F->in_shape[l] < 2)
				continue;
			for (i = 0; i < 3; i++) {
				a = i == 0 ? 1 : i == 1 ? F->in_shape[k] - 1 : F->in_shape[k] / 2;
				b = i == 0 ? F->in_shape[l] - 1 : i == 1 ? 1 : F->in_shape[l] / 2;
				memset(F->coord, 0, sizeof F->coord);
				F->coord[k] = a;
				if (value(F, &v[0]))
					goto maybe;
				F->coord[k] = 0, F->coord[l] = b;
				if (value(F, &v[1]))
					goto maybe;
				F->coord[k] = a;
				if (value(F, &v[2]))
					goto maybe;
				if (ck_add(v[0], v[1], &sum) < 0 || sum != v[2]) {
					F->err = keep;
					return 0;
				}
			}
		}
maybe:
	memset(F->coord, 0, sizeof F->coord);
	F->err = keep;
	return 1;
}

/*
 * A cheaper rejection of a swizzle candidate in table mode, giving what convert() would:
 * 1 when convert() returns 0 (not representable), 0 when that is not shown (then convert()
 * decides). The same probes split each dim into sub-modes; where they fail, convert()
 * fails the same way. Then the probed layout is compared with the table at 64 points
 * spread over the domain (a pseudo-random sequence): one that differs is a point where
 * convert()'s walk over every point fails too, and no sum can overflow (bounded first),
 * so the walk cannot end in an error before it. The messages of rejected candidates are
 * never seen (the search sets its own or clears them).
 */
static int
quick_reject(Fn *F)
{
	int64_t ss[MAXIN][64], dd[MAXIN][64], D = 1, bound = 0, v0;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	int nsub[MAXIN], k, i, j, rc;
	Err scratch = {0}, *keep = F->err;
	Sub found[64];

	if (!F->tab || F->hier || F->prove || F->nin < 1 || F->nin > MAXIN - 1 || cute_reference_search)
		return 0;
	for (k = 0; k < F->nin; k++)
		D *= F->in_shape[k];    /* tab_prep bounded it by CUTE_MAXPROVE */
	if (D <= 64)
		return 0;
	F->err = &scratch;
	F->nv = 1;
	rc = 0;
	memset(F->coord, 0, sizeof F->coord);
	if (value(F, &v0) != 0)
		goto out;
	if (v0 != 0) {
		rc = 1;         /* convert(): the origin maps to v0, not 0 */
		goto out;
	}
	for (k = 0; k < F->nin; k++) {
		int r = factor(F, k, found, &nsub[k]);

		if (r != 1) {
			rc = r == 0;
			goto out;
		}
		for (i = 0; i < nsub[k]; i++) {
			int64_t t;

			ss[k][i] = found[i].s, dd[k][i] = found[i].d[0];
			if (ck_mul(found[i].s - 1, found[i].d[0] < 0 ? -found[i].d[0] : found[i].d[0], &t) < 0 ||
			    ck_add(bound, t, &bound) < 0 || found[i].d[0] == INT64_MIN)
				goto out;       /* a table or a sum might overflow: convert() decides */
		}
	}
	for (j = 0; j < 64; j++) {
		int64_t f, q, acc = 0, val;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		f = (int64_t)(x % (uint64_t)D);
		for (q = f, k = F->nin - 1; k >= 0; k--) {
			int64_t c = q % F->in_shape[k], r = c;

			q /= F->in_shape[k];
			for (i = 0; i < nsub[k]; i++) {
				acc += r % ss[k][i] * dd[k][i];
				r /= ss[k][i];
			}
		}
		val = F->sw.b > 0 ? cute_swizzle_apply(F->sw, F->ser[f]) : F->ser[f];
		if (acc != val) {
			rc = 1;
			goto out;
		}
	}
out:
	memset(F->coord, 0, sizeof F->coord);
	F->err = keep;
	return rc;
}

/*
 * Swizzle recovery: a function f = sw o L is found by trying swizzles in
 * order of increasing B, then M, then S (S > 0), and converting sw o f,
 * since a swizzle is its own inverse. B = 0 (no swizzle) is tried first.
 */
static int
composed(Arena *a, const Fn *base, CuteComposed *res, Err *err)
{
	Fn F;
	int b, m, s, rc;
	CuteLayout l;
	Arena t;

	if (!res)
		return err_set(err, "cute: converter: missing argument");
	for (b = 0; b <= 5; b++) {
		for (m = 0; m <= (b ? 8 : 0); m++) {
			for (s = b ? b : 0; s <= (b ? 10 : 0); s++) {
				F = *base;
				F.sw.b = b;
				F.sw.m = m;
				F.sw.s = s;
				if (b > 0 && !additive(&F))
					continue;
				if (quick_reject(&F))
					continue;
				/* each candidate works in a scratch arena; the winner is copied out */
				arena_init(&t);
				rc = convert(&t, &F, &l, err);
				if (rc == 2) {  /* symbolic mode: undecided */
					arena_free(&t);
					return 2;
				}
				if (rc == 1) {
					res->sw = F.sw;
					res->off = 0;
					res->l.shape = cute_tup_copy(a, l.shape);
					res->l.stride = cute_tup_copy(a, l.stride);
					if (!res->l.shape || !res->l.stride)
						rc = err_set(err, "cute: out of memory");
				}
				arena_free(&t);
				if (rc != 0)
					return rc;
			}
		}
	}
	err_set(err, "not representable: no swizzle Sw<B,M,S> (B <= 5, M <= 8, S <= 10) over a "
		"strided layout matches");
	return 0;
}

int
cute_composed_from_tile(Arena *a, int nin, const int64_t *in_shape, int nout,
			const int64_t *out_shape, CuteProbe f, void *ctx, CuteComposed *res,
			Err *err)
{
	Fn F;

	fn_init(&F, nin, in_shape, nout, out_shape, f, ctx, 0);
	return composed(a, &F, res, err);
}

int
cute_convert_proved(Arena *a, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape,
		    CuteProbe f, void *ctx, CuteProve prove, void *pctx, int form, CuteComposed *res,
		    Err *err)
{
	Fn F;

	if (!prove || !res || form < 0 || form > 2)
		return err_set(err, "cute: converter: missing argument");
	fn_init(&F, nin, in_shape, nout, out_shape, f, ctx, form == 1);
	F.prove = prove;
	F.pctx = pctx;
	if (form == 2)
		return composed(a, &F, res, err);
	res->sw.b = res->sw.m = res->sw.s = 0;
	res->off = 0;
	return convert(a, &F, &res->l, err);
}

int
cute_composed_from_table(Arena *a, int nin, const int64_t *in_shape, int nout,
			 const int64_t *out_shape, const int64_t *vals, CuteComposed *res, Err *err)
{
	TabFn t = {nin, nout, in_shape, vals};
	Fn F;
	int64_t *ser;
	int rc;

	if (!vals)
		return err_set(err, "cute: converter: missing argument");
	fn_init(&F, nin, in_shape, nout, out_shape, tab_probe, &t, 0);
	tab_prep(&F, vals, &ser);
	rc = composed(a, &F, res, err);
	free(ser);
	return rc;
}

/* the outputs of a serialized table's point, for convert()'s callback (never called in
 * table mode, where value() reads ser) */
typedef struct SerFn {
	int nin, nout;
	const int64_t *in_shape, *out_shape, *ser;
} SerFn;

static int
ser_probe(void *ctx, const int64_t *coord, int64_t *out)
{
	const SerFn *t = ctx;
	int64_t f = 0, v;
	int k;

	for (k = 0; k < t->nin; k++)
		f = f * t->in_shape[k] + coord[k];
	for (v = t->ser[f], k = t->nout - 1; k >= 0; k--) {
		out[k] = v % t->out_shape[k];
		v /= t->out_shape[k];
	}
	return 0;
}

/* F in table mode over ser when tab_prep would have taken the table: 1, else 0 */
static int
ser_prep(Fn *F, const int64_t *ser)
{
	int64_t D = 1, acc = 1;
	int k;

	if (!ser || F->nin < 1 || F->nin > MAXIN - 1 || F->nout < 1 || F->nout > MAXOUT - 1 ||
	    !F->in_shape || !F->out_shape)
		return 0;
	for (k = 0; k < F->nin; k++)
		if (F->in_shape[k] <= 0 || ck_mul(D, F->in_shape[k], &D) < 0 || D > CUTE_MAXPROVE)
			return 0;
	for (k = 0; k < F->nout; k++)
		if (F->out_shape[k] <= 0 || ck_mul(acc, F->out_shape[k], &acc) < 0)
			return 0;
	F->tab = ser;   /* a flag here: not hier, value() reads ser */
	F->ser = ser;
	return 1;
}

int
cute_from_ser(Arena *a, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape,
	      const int64_t *ser, CuteLayout *res, Err *err)
{
	SerFn t = {nin, nout, in_shape, out_shape, ser};
	Fn F;

	fn_init(&F, nin, in_shape, nout, out_shape, ser_probe, &t, 0);
	if (!ser_prep(&F, ser))
		return 2;
	return convert(a, &F, res, err);
}

int
cute_composed_from_ser(Arena *a, int nin, const int64_t *in_shape, int nout,
		       const int64_t *out_shape, const int64_t *ser, CuteComposed *res, Err *err)
{
	SerFn t = {nin, nout, in_shape, out_shape, ser};
	Fn F;

	fn_init(&F, nin, in_shape, nout, out_shape, ser_probe, &t, 0);
	if (!ser_prep(&F, ser))
		return 2;
	return composed(a, &F, res, err);
}

int
cute_pack_fragment(CutePacked *p, int nin, const int64_t *in_shape, int64_t nrep, int64_t nthread,
		   int64_t nslot, CuteFragThread thread, CuteFragSlot slot, void *ctx, Err *err)
{
	int k;

	if (!p || !in_shape || !thread || !slot)
		return err_set(err, "cute: pack_fragment: missing argument");
	if (nin < 1 || nin > 14)
		return err_set(err, "cute: pack_fragment: 1..14 input dims");
	if (nrep < 1 || nthread < 1 || nslot < 1)
		return err_set(err, "cute: pack_fragment: extents must be positive");
	memset(p, 0, sizeof *p);
	p->thread = thread;
	p->slot = slot;
	p->ctx = ctx;
	p->nin = nin;
	for (k = 0; k < nin; k++)
		p->in_shape[k] = in_shape[k];
	p->in_shape[nin] = nrep;
	p->out_shape[0] = nthread;
	p->out_shape[1] = nslot;
	return 0;
}

int
cute_packed_probe(void *packed, const int64_t *coord, int64_t *out)
{
	CutePacked *p = packed;

	if (p->thread(p->ctx, coord, coord[p->nin], &out[0]) != 0)
		return 1;
	return p->slot(p->ctx, coord, &out[1]) != 0;
}
