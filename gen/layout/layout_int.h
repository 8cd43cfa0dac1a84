/*
 * layout_int.h: helpers shared by the files of the layout core (layout.c,
 * fragment.c, inverse.c); not for other modules. Names end in '_'.
 */
#ifndef LAYOUT_INT_H
#define LAYOUT_INT_H

#include "layout.h"

/* validate, simplify and derive the exact shapes (by enumeration) */
Layout *layout_build_(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout,
		      IExpr *thread, int64_t rep, int is_frag, Err *err);
/* the same when the output shape and thread extent are known by construction */
Layout *layout_known_(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout,
		      const int64_t *out_shape, IExpr *thread, int64_t rep, int64_t nthreads, int is_frag,
		      Err *err);
/* the mixed-radix digits (x // lf) % ext of vars[0..nv) that expressions use */
int layout_digits_(IExpr *const *es, int ne, const int *vars, const int64_t *ext, int nv, int *dvar,
		   int64_t *dlf, int64_t *dext, int max);
/* thread = g(x) + K * _rep with g free of _rep (R > 1) */
int layout_repsplit_(const Layout *L, IExpr **g, int64_t *K);

/* symbolic decisions on mixed-radix expressions over the domain shape[n] (var ids
 * varid[k]), affine.c: 1 proved, 0 not decided (enumerate) */
/* frag_contains(small, large, 0) proved from the thread maps' forms */
int layout_aff_contains_(const Layout *small, const Layout *large);

#endif
