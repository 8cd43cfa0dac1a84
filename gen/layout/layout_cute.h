/*
 * layout_cute.h: converters from tilec Layouts/Fragments to CuTe layouts
 * (layout_cute.c). Each returns 1 with *res filled when the layout is
 * representable, 0 when it is not (the reason in err->msg), -1 on an error.
 */
#ifndef LAYOUT_CUTE_H
#define LAYOUT_CUTE_H

#include "cute.h"
#include "layout.h"

typedef enum {
	LC_FLAT,     /* LayoutFromTile: one flat output, outputs serialized row-major */
	LC_HIER,     /* per-output basis axes: strides `_v@k` */
	LC_COMPOSED, /* ComposedLayoutFromTile: swizzle recovery, Sw<B,M,S> o _0 o L */
} LayoutCuteForm;

/* a plain Layout; for LC_FLAT/LC_HIER res->sw is Sw<0,0,0> and only res->l matters */
int layout_to_cute(Arena *a, const Layout *L, LayoutCuteForm form, CuteComposed *res, Err *err);
/* a Fragment through the canonical packing: (coords..., rep) -> thread * slots + slot */
int frag_to_cute(Arena *a, const Fragment *F, CuteLayout *res, Err *err);

/*
 * The layout (coordinate -> offset) of a shared buffer of shape[n] from a CuTe literal, read
 * as dump_layout prints and assert_same_layout reads one: `shape:stride` maps an offset to the
 * element's row-major index (TLX), `Sw<B,M,S> o off o shape:stride` maps the element's
 * coordinate (column-major index) to its offset. The sizes must match, the strides be
 * non-negative integers, every element on its own offset. NULL with err otherwise.
 */
Layout *layout_from_cute_shared(Arena *a, const CuteObj *o, const int64_t *shape, int n, Err *err);

#endif
