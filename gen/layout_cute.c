/*
 * layout_cute.c: tilec Layouts and Fragments in CuTe form. The converters of
 * cute_conv.c work on any finite function (probe, then prove over the whole
 * domain); this file hands them a layout's evaluation. A fragment converts
 * through the canonical packing (coords..., rep) -> (thread, slot), so the
 * CuTe layout maps (coords..., rep) to thread * slots + slot.
 */
#include "cute.h"
#include "layout.h"
#include "layout_cute.h"

static int
probe_layout(void *ctx, const int64_t *coord, int64_t *out)
{
	return layout_eval(ctx, coord, out, NULL) ? 1 : 0;
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
	if (!a || !res)
		return err_set(err, "cute conversion: null argument");
	if (check_plain(L, err))
		return -1;
	switch (form) {
	case LC_FLAT:
		res->sw.b = res->sw.m = res->sw.s = 0;
		res->off = 0;
		return cute_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape, probe_layout,
				      (void *)L, &res->l, err);
	case LC_HIER:
		res->sw.b = res->sw.m = res->sw.s = 0;
		res->off = 0;
		return cute_from_tile_hier(a, L->nin, L->in_shape, L->nout, L->out_shape,
					   probe_layout, (void *)L, &res->l, err);
	case LC_COMPOSED:
		return cute_composed_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape,
					       probe_layout, (void *)L, res, err);
	}
	return err_set(err, "cute conversion: unknown form %d", (int)form);
}

/* fragment callbacks: thread(x, rep) and the row-major serialized slot */
static int
frag_thread(void *ctx, const int64_t *coord, int64_t rep, int64_t *thread)
{
	const Fragment *F = ctx;
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1];
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = rep;
	if (layout_eval(F, x, y, NULL))
		return 1;
	*thread = y[F->nout];
	return 0;
}

static int
frag_slot(void *ctx, const int64_t *coord, int64_t *slot)
{
	const Fragment *F = ctx;
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], s = 0;
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = 0; /* the slot does not depend on _rep */
	if (layout_eval(F, x, y, NULL))
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
	int64_t nslot = 1;
	int k;

	if (!a || !F || !res)
		return err_set(err, "cute conversion: null argument");
	if (!F->is_frag)
		return err_set(err, "cute conversion: not a fragment");
	for (k = 0; k < F->nout; k++)
		if (ck_mul(nslot, F->out_shape[k], &nslot))
			return err_set(err, "cute conversion: slot count overflows");
	if (cute_pack_fragment(&p, F->nin, F->in_shape, F->rep, F->nthreads, nslot, frag_thread,
			       frag_slot, (void *)F, err))
		return -1;
	return cute_from_tile(a, F->nin + 1, p.in_shape, 2, p.out_shape, cute_packed_probe, &p, res,
			      err);
}
