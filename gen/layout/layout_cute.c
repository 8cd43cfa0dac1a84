/*
 * layout_cute.c: tilec Layouts and Fragments in CuTe form. The converters of
 * cute_conv.c work on any finite function (probe, then prove over the whole
 * domain); this file hands them a layout's evaluation. A fragment converts
 * through the canonical packing (coords..., rep) -> (thread, slot), so the
 * CuTe layout maps (coords..., rep) to thread * slots + slot.
 */
#include <stdlib.h>
#include <string.h>

#include "cute.h"
#include "layout_cute.h"
#include "layout_int.h"

/*
 * The converters probe every point of the domain, some more than once, so
 * the layout is tabulated first with the compiled evaluator (layout_enumerate)
 * and probed by lookup: point-by-point tree evaluation made the CuTe
 * comments of the emitted code cost most of the gemm sample's generation.
 * Domains past TAB_MAX points, or a failed tabulation, fall back to
 * layout_eval.
 */
enum { TAB_MAX = 1 << 20 };

typedef struct Tab {
	const Layout *L;
	int n;            /* input dims incl. _rep for a fragment */
	int64_t shape[LAYOUT_MAXDIM + 1];
	int nv;           /* values per point: outputs, then the thread of a fragment */
	int64_t *v;       /* [point][nv], NULL when not tabulated */
} Tab;

static int
tab_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	Tab *t = ctx;
	const int nv = t->nv;
	int64_t *restrict v = t->v + first * nv;
	int p, e;

	(void)coord;
	if (nv == 1) {
		memcpy(v, vals[0], (size_t)npts * sizeof *v);
		return 0;
	}
	for (e = 0; e < nv; e++) {
		const int64_t *restrict x = vals[e];

		for (p = 0; p < npts; p++)
			v[p * nv + e] = x[p];
	}
	return 0;
}

static void
tab_init(Tab *t, const Layout *L)
{
	IExpr *es[LAYOUT_MAXDIM + 2];
	int ids[LAYOUT_MAXDIM + 1], k;
	int64_t total = 1;
	Err scratch = {0};

	memset(t, 0, sizeof *t);
	t->L = L;
	for (k = 0; k < L->nin; k++) {
		t->shape[k] = L->in_shape[k];
		ids[k] = k;
	}
	t->n = L->nin;
	if (L->is_frag) {
		t->shape[t->n] = L->rep;
		ids[t->n++] = IEXPR_REP;
	}
	for (k = 0; k < L->nout; k++)
		es[k] = L->fwd[k];
	t->nv = L->nout;
	if (L->is_frag)
		es[t->nv++] = L->thread;
	if (t->n < 1 || t->nv < 1)
		return;
	for (k = 0; k < t->n; k++)
		if (t->shape[k] < 1 || ck_mul(total, t->shape[k], &total) || total > TAB_MAX)
			return;
	if (!(t->v = malloc((size_t)total * (size_t)t->nv * sizeof *t->v)))
		return;
	if (layout_enumerate(t->shape, ids, t->n, es, t->nv, tab_visit, t, &scratch)) {
		free(t->v);
		t->v = NULL;
	}
}

/*
 * A plain layout's outputs serialized row-major over out_shape, one value per point (the
 * converters read nothing else outside the hierarchical form): a quarter of the table's
 * memory for three outputs, and no second pass to serialize. NULL where an output leaves
 * out_shape, the serialization could overflow, the domain is past TAB_MAX or the
 * enumeration fails (then the full table decides, with its messages).
 */
typedef struct SerTab {
	const Layout *L;
	int64_t *ser;
} SerTab;

static int
ser_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	const SerTab *t = ctx;
	const int nout = t->L->nout;
	const int64_t *os = t->L->out_shape;
	int64_t *restrict s = t->ser + first;
	int p, k;

	(void)coord;
	if (nout == 1) {
		const int64_t *restrict x = vals[0];

		for (p = 0; p < npts; p++)
			if ((uint64_t)x[p] >= (uint64_t)os[0])
				return 1;
		memcpy(s, x, (size_t)npts * sizeof *s);
		return 0;
	}
	{
		uint64_t bad = 0;

		/* output by output over the batch (the range checks or'ed together) */
		for (p = 0; p < npts; p++)
			s[p] = 0;
		for (k = 0; k < nout; k++) {
			const int64_t *restrict x = vals[k], n = os[k];

			for (p = 0; p < npts; p++) {
				bad |= (uint64_t)x[p] >= (uint64_t)n;
				s[p] = s[p] * n + x[p];
			}
		}
		return bad != 0;
	}
}

/* the serialization itself enumerated where every output is proved inside out_shape
 * (affine.c's exact ranges): one value per point, nothing to check */
static int
ser_copy(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	const SerTab *t = ctx;

	(void)coord;
	memcpy(t->ser + first, vals[0], (size_t)npts * sizeof *t->ser);
	return 0;
}

static int64_t *
ser_table(Arena *a, const Layout *L)
{
	IExpr *es[LAYOUT_MAXDIM], *ser;
	int ids[LAYOUT_MAXDIM], k, proved = 1;
	int64_t total = 1, cells = 1, lo, hi;
	Err scratch = {0};
	SerTab t = {L, NULL};

	if (L->is_frag || L->nin < 1 || L->nout < 1 || L->nout > LAYOUT_MAXDIM)
		return NULL;
	for (k = 0; k < L->nin; k++) {
		if (L->in_shape[k] < 1 || ck_mul(total, L->in_shape[k], &total) || total > TAB_MAX)
			return NULL;
		ids[k] = k;
	}
	for (k = 0; k < L->nout; k++) {
		if (L->out_shape[k] < 1 || ck_mul(cells, L->out_shape[k], &cells))
			return NULL;
		es[k] = L->fwd[k];
	}
	if (!(t.ser = malloc((size_t)total * sizeof *t.ser)))
		return NULL;
	for (k = 0; proved && k < L->nout; k++)
		proved = layout_aff_range_(L->in_shape, ids, L->nin, L->fwd[k], &lo, &hi) && lo >= 0 &&
			 hi < L->out_shape[k];
	for (ser = es[0], k = 1; proved && ser && k < L->nout; k++)
		ser = iexpr_add(a, iexpr_mulc(a, ser, L->out_shape[k]), es[k]);
	if (proved && ser) {
		if (!layout_enumerate(L->in_shape, ids, L->nin, &ser, 1, ser_copy, &t, &scratch))
			return t.ser;
		err_clear(&scratch);
	}
	if (layout_enumerate(L->in_shape, ids, L->nin, es, L->nout, ser_visit, &t, &scratch)) {
		free(t.ser);
		return NULL;
	}
	return t.ser;
}

/* x: the inputs (then _rep for a fragment); y: nv values. 0 ok, -1 outside or failed */
static int
tab_eval(const Tab *t, const int64_t *x, int64_t *y)
{
	int64_t f = 0;
	int k;

	if (!t->v)
		return layout_eval(t->L, x, y, NULL);
	for (k = 0; k < t->n; k++) {
		if (x[k] < 0 || x[k] >= t->shape[k])
			return -1;
		f = f * t->shape[k] + x[k];
	}
	memcpy(y, t->v + f * t->nv, (size_t)t->nv * sizeof *y);
	return 0;
}

static int
probe_layout(void *ctx, const int64_t *coord, int64_t *out)
{
	return tab_eval(ctx, coord, out) ? 1 : 0;
}

/*
 * The symbolic proof (cute_convert_proved): the probed layout written as digits
 * sum_k sum_i (x_k // P_ki % s_ki) * d_ki, compared with the layout's serialized
 * outputs (a fragment's: thread * slots + slot) by their mixed-radix forms
 * (affine.c), so that a converted layout is not walked point by point.
 */
typedef struct Sym {
	const Layout *L;
	int hier;
} Sym;

static int
sym_prove(void *ctx, CuteSwizzle sw, int nin, const int *nsub, const CuteSubMode *const *subs,
	  int nv)
{
	const Sym *y = ctx;
	const Layout *L = y->L;
	int64_t shape[LAYOUT_MAXDIM + 1], P;
	int varid[LAYOUT_MAXDIM + 1], k, i, c, n = L->nin + (L->is_frag != 0), ok = 1;
	IExpr *pred, *fn, *x;
	Arena t;

	if (sw.b > 0 || nin != n || (y->hier && (L->is_frag || nv != L->nout)) || (!y->hier && nv != 1))
		return 0;
	for (k = 0; k < L->nin; k++) {
		shape[k] = L->in_shape[k];
		varid[k] = k;
	}
	if (L->is_frag) {
		shape[L->nin] = L->rep;
		varid[L->nin] = IEXPR_REP;
	}
	arena_init(&t);
	for (c = 0; c < nv && ok; c++) {
		pred = iexpr_const(&t, 0);
		for (k = 0; k < n; k++) {
			x = iexpr_var(&t, varid[k]);
			for (P = 1, i = 0; i < nsub[k]; i++) {
				pred = iexpr_add(&t, pred, iexpr_mulc(&t, iexpr_modc(&t, iexpr_divc(&t, x, P),
										 subs[k][i].s), subs[k][i].d[c]));
				if (ck_mul(P, subs[k][i].s, &P))
					ok = 0;
			}
		}
		if (y->hier) {
			fn = L->fwd[c];
		} else {
			fn = iexpr_const(&t, 0);
			for (k = 0; k < L->nout; k++)
				fn = iexpr_add(&t, iexpr_mulc(&t, fn, L->out_shape[k]), L->fwd[k]);
			if (L->is_frag) {
				int64_t nslot = 1;

				for (k = 0; k < L->nout; k++)
					if (ck_mul(nslot, L->out_shape[k], &nslot))
						ok = 0;
				fn = iexpr_add(&t, iexpr_mulc(&t, L->thread, nslot), fn);
			}
		}
		ok = ok && pred && fn && layout_aff_equal_(shape, varid, n, pred, fn);
	}
	arena_free(&t);
	return ok;
}

static int
check_plain(const Layout *L, Err *err)
{
	if (!L)
		return err_set(err, "cute conversion: null layout");
	if (L->is_frag)
		return err_set(err, "cute conversion: a fragment needs frag_to_cute (canonical packing)");
	return 0;
}

/* 1 if e has an xor (or is deeper than the walk goes) */
static int
has_xor(const IExpr *e, int depth)
{
	if (!e)
		return 0;
	if (e->k == IX_XOR || depth > 200)
		return 1;
	return has_xor(e->a, depth + 1) || has_xor(e->b, depth + 1) || has_xor(e->c, depth + 1);
}

int
layout_to_cute(Arena *a, const Layout *L, LayoutCuteForm form, CuteComposed *res, Err *err)
{
	Tab t;
	int r, k, sym = 1;

	if (!a || !res)
		return err_set(err, "cute conversion: null argument");
	if (check_plain(L, err))
		return -1;
	if (form != LC_FLAT && form != LC_HIER && form != LC_COMPOSED)
		return err_set(err, "cute conversion: unknown form %d", (int)form);
	/*
	 * The symbolic proof decides the swizzle-free candidate only (sym_prove refuses a
	 * swizzle: undecided, 2), and the table's walk decides that candidate exactly, so
	 * the symbolic attempt only saves the table. A swizzled buffer's xor makes the proof
	 * fail after the probes; its composed form goes to the table at once (the same result).
	 */
	for (k = 0; form == LC_COMPOSED && !cute_reference_search && k < L->nout; k++)
		if (has_xor(L->fwd[k], 0))
			sym = 0;
	if (sym) {
		Sym y = {L, form == LC_HIER};

		t.L = L;
		t.v = NULL;
		t.n = L->nin;
		t.nv = L->nout;
		r = cute_convert_proved(a, L->nin, L->in_shape, L->nout, L->out_shape, probe_layout, &t,
					sym_prove, &y, form == LC_FLAT ? 0 : form == LC_HIER ? 1 : 2, res, err);
		if (r != 2)
			return r;
	}
	if (form != LC_HIER && !cute_reference_search) {
		int64_t *ser = ser_table(a, L);

		if (ser) {
			res->sw.b = res->sw.m = res->sw.s = 0;
			res->off = 0;
			r = form == LC_COMPOSED
				    ? cute_composed_from_ser(a, L->nin, L->in_shape, L->nout, L->out_shape,
							     ser, res, err)
				    : cute_from_ser(a, L->nin, L->in_shape, L->nout, L->out_shape, ser,
						    &res->l, err);
			free(ser);
			if (r != 2)
				return r;
		}
	}
	tab_init(&t, L);
	if (t.v) {
		res->sw.b = res->sw.m = res->sw.s = 0;
		res->off = 0;
		r = form == LC_COMPOSED
			    ? cute_composed_from_table(a, L->nin, L->in_shape, L->nout, L->out_shape, t.v,
						       res, err)
			    : cute_from_table(a, L->nin, L->in_shape, L->nout, L->out_shape, t.v,
					      form == LC_HIER, &res->l, err);
	} else if (form == LC_COMPOSED) {
		r = cute_composed_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape, probe_layout,
					    &t, res, err);
	} else {
		res->sw.b = res->sw.m = res->sw.s = 0;
		res->off = 0;
		r = form == LC_FLAT ? cute_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape,
						     probe_layout, &t, &res->l, err)
				    : cute_from_tile_hier(a, L->nin, L->in_shape, L->nout, L->out_shape,
							  probe_layout, &t, &res->l, err);
	}
	free(t.v);
	return r;
}

/* fragment callbacks: thread(x, rep) and the row-major serialized slot */
static int
frag_thread(void *ctx, const int64_t *coord, int64_t rep, int64_t *thread)
{
	const Tab *t = ctx;
	const Fragment *F = t->L;
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 2];
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = rep;
	if (tab_eval(t, x, y))
		return 1;
	*thread = y[F->nout];
	return 0;
}

static int
frag_slot(void *ctx, const int64_t *coord, int64_t *slot)
{
	const Tab *t = ctx;
	const Fragment *F = t->L;
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 2], s = 0;
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = 0; /* the slot does not depend on _rep */
	if (tab_eval(t, x, y))
		return 1;
	for (k = 0; k < F->nout; k++)
		s = s * F->out_shape[k] + y[k];
	*slot = s;
	return 0;
}

/* the packing (coords..., rep) -> (thread, slot) tabulated from t, converted by
 * cute_from_table; 2 when the table cannot be made (use the probes) */
static int
packed_table(Arena *a, const Tab *t, const CutePacked *p, CuteLayout *res, Err *err)
{
	const Fragment *F = t->L;
	int64_t total = 1, f, s, *v;
	int k, r;

	for (k = 0; k < t->n; k++)
		total *= t->shape[k];   /* tabulated: no overflow, at most TAB_MAX */
	if (!(v = malloc((size_t)total * 2 * sizeof *v)))
		return 2;
	for (f = 0; f < total; f++) {
		const int64_t *y = t->v + f * t->nv;

		for (s = 0, k = 0; k < F->nout; k++)
			s = s * F->out_shape[k] + y[k];
		v[2 * f] = y[F->nout];
		v[2 * f + 1] = s;
	}
	r = cute_from_table(a, F->nin + 1, p->in_shape, 2, p->out_shape, v, 0, res, err);
	free(v);
	return r;
}

int
frag_to_cute(Arena *a, const Fragment *F, CuteLayout *res, Err *err)
{
	CutePacked p;
	Tab t;
	int64_t nslot = 1;
	int k, r;

	if (!a || !F || !res)
		return err_set(err, "cute conversion: null argument");
	if (!F->is_frag)
		return err_set(err, "cute conversion: not a fragment");
	for (k = 0; k < F->nout; k++)
		if (ck_mul(nslot, F->out_shape[k], &nslot))
			return err_set(err, "cute conversion: slot count overflows");
	memset(&t, 0, sizeof t);
	t.L = F;
	t.n = F->nin + 1;
	t.nv = F->nout + 1;
	if (cute_pack_fragment(&p, F->nin, F->in_shape, F->rep, F->nthreads, nslot, frag_thread,
			       frag_slot, &t, err))
		return -1;
	{
		Sym y = {F, 0};
		CuteComposed c;

		r = cute_convert_proved(a, F->nin + 1, p.in_shape, 2, p.out_shape, cute_packed_probe, &p,
					sym_prove, &y, 0, &c, err);
		if (r != 2) {
			if (r == 1)
				*res = c.l;
			return r;
		}
	}
	tab_init(&t, F);
	if (!t.v || (r = packed_table(a, &t, &p, res, err)) == 2)
		r = cute_from_tile(a, F->nin + 1, p.in_shape, 2, p.out_shape, cute_packed_probe, &p, res,
				   err);
	free(t.v);
	return r;
}

/* ---- a shared buffer's layout from CuTe ------------------------------------------- */

/* the CuTe layout l at the 1-D index x (its leaves column-major, as cute_eval does) */
static IExpr *
cute_at(Arena *a, const CuteTup *shape, const CuteTup *stride, IExpr *x, int64_t *prefix,
	IExpr *sum, Err *err)
{
	int i;

	if (shape->n < 0) {
		int64_t s = shape->x.v, d = stride->x.v;
		IExpr *t;

		if (stride->x.nb) {
			err_set(err, "a shared layout needs integer strides, not a basis stride");
			return NULL;
		}
		if (d < 0) {
			err_set(err, "a shared layout needs non-negative strides, got %lld", (long long)d);
			return NULL;
		}
		t = iexpr_mulc(a, iexpr_modc(a, iexpr_divc(a, x, *prefix), s), d);
		if (ck_mul(*prefix, s, prefix)) {
			err_set(err, "the CuTe layout's size overflows");
			return NULL;
		}
		return sum ? iexpr_add(a, sum, t) : t;
	}
	for (i = 0; i < shape->n; i++)
		if (!(sum = cute_at(a, shape->e[i], stride->e[i], x, prefix, sum, err)))
			return NULL;
	return sum ? sum : iexpr_const(a, 0);
}

Layout *
layout_from_cute_shared(Arena *a, const CuteObj *o, const int64_t *shape, int n, Err *err)
{
	int64_t size, elems = 1, prefix = 1;
	IExpr *x, *f, *outs[LAYOUT_MAXDIM];
	Layout *L;
	int d;

	if (!a || !o || !shape || n < 1 || n > LAYOUT_MAXDIM) {
		err_set(err, "layout_from_cute_shared: bad argument");
		return NULL;
	}
	if (o->k != CUTE_LAYOUT && o->k != CUTE_COMPOSED) {
		err_set(err, "expected a layout shape:stride or Sw<B,M,S> o shape:stride");
		return NULL;
	}
	for (d = 0; d < n; d++)
		if (ck_mul(elems, shape[d], &elems)) {
			err_set(err, "the buffer's size overflows");
			return NULL;
		}
	if (cute_size(o->k == CUTE_LAYOUT ? o->l : o->c.l, &size, err) < 0)
		return NULL;
	if (size != elems) {
		err_set(err, "the CuTe layout maps %lld elements, the buffer has %lld", (long long)size,
			(long long)elems);
		return NULL;
	}
	if (o->k == CUTE_COMPOSED) {
		/* Sw<B,M,S> o off o L maps the element's coordinate (column-major index, as CuTe
		 * takes it) to its offset, as dump_layout prints a swizzled buffer */
		CuteSwizzle sw = o->c.sw;

		if (cute_swizzle_check(sw, err) < 0)
			return NULL;
		x = iexpr_var(a, n - 1);
		for (d = n - 2; d >= 0; d--)
			x = iexpr_add(a, iexpr_mulc(a, x, shape[d]), iexpr_var(a, d));
		if (!(f = cute_at(a, o->c.l.shape, o->c.l.stride, x, &prefix, NULL, err)))
			return NULL;
		if (o->c.off)
			f = iexpr_addc(a, f, o->c.off);
		if (sw.b > 0) {
			/* x ^ shift(x & (2^B - 1) << (M + max(S, 0)), S) */
			int64_t ymask = (((int64_t)1 << sw.b) - 1) << (sw.m + (sw.s > 0 ? sw.s : 0));
			IExpr *sel = iexpr_bin(a, IX_AND, f, iexpr_const(a, ymask));

			sel = sw.s >= 0 ? iexpr_bin(a, IX_SHR, sel, iexpr_const(a, sw.s))
					: iexpr_bin(a, IX_SHL, sel, iexpr_const(a, -sw.s));
			f = iexpr_bin(a, IX_XOR, f, sel);
		}
		if (!(L = layout_new(a, shape, n, &f, 1, err)))
			return NULL;
	} else {
		/* shape:stride maps an offset to the element's row-major index (TLX's reading of a
		 * buffer layout, as assert_same_layout and dump_layout take it): its inverse */
		Layout *F;
		int64_t div = 1;

		x = iexpr_var(a, 0);
		if (!(f = cute_at(a, o->l.shape, o->l.stride, x, &prefix, NULL, err)))
			return NULL;
		for (d = n - 1; d >= 0; d--) {
			outs[d] = iexpr_modc(a, iexpr_divc(a, f, div), shape[d]);
			div *= shape[d];
		}
		if (!(F = layout_new(a, &size, 1, outs, n, err)))
			return NULL;
		if (layout_check_injective(F, err))
			return NULL;
		if (!(L = layout_inverse(a, F, 0, err)))
			return NULL;
	}
	if (layout_check_injective(L, err))
		return NULL;
	return L;
}
