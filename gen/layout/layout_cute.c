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
#include "layout.h"
#include "layout_cute.h"

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
	int p, e;

	(void)coord;
	for (p = 0; p < npts; p++)
		for (e = 0; e < t->nv; e++)
			t->v[(first + p) * t->nv + e] = vals[e][p];
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

static int
check_plain(const Layout *L, Err *err)
{
	if (!L)
		return err_set(err, "cute conversion: null layout");
	if (L->is_frag)
		return err_set(err, "cute conversion: a fragment needs frag_to_cute (canonical packing)");
	return 0;
}

int
layout_to_cute(Arena *a, const Layout *L, LayoutCuteForm form, CuteComposed *res, Err *err)
{
	Tab t;
	int r;

	if (!a || !res)
		return err_set(err, "cute conversion: null argument");
	if (check_plain(L, err))
		return -1;
	if (form != LC_FLAT && form != LC_HIER && form != LC_COMPOSED)
		return err_set(err, "cute conversion: unknown form %d", (int)form);
	tab_init(&t, L);
	if (form == LC_COMPOSED) {
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
	tab_init(&t, F);
	if (cute_pack_fragment(&p, F->nin, F->in_shape, F->rep, F->nthreads, nslot, frag_thread,
			       frag_slot, &t, err))
		r = -1;
	else
		r = cute_from_tile(a, F->nin + 1, p.in_shape, 2, p.out_shape, cute_packed_probe, &p, res,
				   err);
	free(t.v);
	return r;
}
