/*
 * layout.h: the layout core. A Layout maps logical coordinates (input shape)
 * to physical coordinates through one index expression per output; a Fragment
 * is a Layout of register slots plus a thread map over the inputs and _rep.
 * Shapes are constant, so injectivity, inverses, containment and equality are
 * decided exactly by enumerating the finite domain (see layout_enum_limit).
 * Semantics follow TileLang (reference/tilelang-internals.md sections 1-3).
 */
#ifndef LAYOUT_H
#define LAYOUT_H

#include "iexpr.h"

#define LAYOUT_MAXDIM 16

/*
 * One struct for both kinds (Fragment "is a" Layout). Every field is derived
 * or checked by the constructors; treat a Layout as immutable and build new
 * ones with the functions below. All memory comes from the caller's arena.
 */
typedef struct Layout {
	int is_frag;
	int nin;                                /* input rank d */
	int64_t in_shape[LAYOUT_MAXDIM];
	int nout;                               /* number of outputs m */
	IExpr **fwd;                            /* m expressions in _i.. */
	int64_t out_shape[LAYOUT_MAXDIM];       /* exact max over the domain + 1 */
	/* Fragment only */
	IExpr *thread;                          /* in _i.. and _rep */
	int64_t rep;                            /* R, extent of _rep (>= 1) */
	int64_t nthreads;                       /* ThreadExtent: exact max + 1 */
	int has_range;                          /* BindThreadRange was applied */
	int64_t range_min, range_ext;
} Layout;
typedef Layout Fragment;

/* Largest domain (points, including _rep) enumerated by any decision.
 * Default 1 << 22; set_limit rejects values < 1. Process-wide setting. */
int64_t layout_enum_limit(void);
int layout_set_enum_limit(int64_t n);

/* ---- Layout (layout.c) ----------------------------------------------------- */

/* Build from expressions in _i.. (vars < nin, no _rep). Simplifies each output
 * under the domain and computes OutputShape exactly (max over the domain + 1);
 * an output that takes a negative value is an error. */
Layout *layout_new(Arena *A, const int64_t *shape, int nin, IExpr *const *fwd, int nout, Err *err);
/* Same from the printed expression form, e.g. {"_i // 8", "_i % 8 * 64 + _j"}. */
Layout *layout_parse(Arena *A, const int64_t *shape, int nin, const char *const *fwd, int nout,
		     Err *err);

/* Forward(vars): substitute the last nin of vars[0..n) into the outputs;
 * leading extra entries pass through. Writes n - nin + nout expressions to
 * out (room for LAYOUT_MAXDIM * 2) and returns their count, or -1. */
int layout_forward(Arena *A, const Layout *L, IExpr *const *vars, int n, IExpr **out, Err *err);
/* evaluate at a point: x has nin coordinates (then rep for fragments);
 * y receives nout values (then the thread for fragments) */
int layout_eval(const Layout *L, const int64_t *x, int64_t *y, Err *err);
/* GetForwardVars: var ids; fragments with rep > 1 put _rep FIRST. */
int layout_forward_vars(const Layout *L, int *ids);
/* row-major linearisation of the outputs over OutputShape */
IExpr *layout_linear_index(Arena *A, const Layout *L);
int64_t layout_size(const Layout *L);        /* product of the input shape */

/* DetectInjective: 0 if (x[, rep]) -> (outputs[, thread]) is injective, else
 * -1 with the evidence in err ("logical [1, 0] and [0, 8] both map to physical
 * [0, 8]") or the reason the check could not run (domain past the limit). */
int layout_check_injective(const Layout *L, Err *err);
/* Equality as mappings: 1 equal, 0 different (why gets the evidence; layouts
 * with different input shapes are different), -1 on error. For fragments the
 * slot map, R, the thread map at every (x, rep) and bound ranges must agree. */
int layout_equal(const Layout *a, const Layout *b, Err *why);

/* Inverse: a closed-form layout over OutputShape back to the inputs, derived by
 * mixed-radix recovery or, for XOR layouts, GF(2) bit recovery, and verified by
 * a round trip over the whole domain. Requires injectivity; unless
 * allow_padding, also surjectivity onto OutputShape (TileLang's Bijective
 * level). Fragments invert their canonical packing (frag_pack). */
Layout *layout_inverse(Arena *A, const Layout *L, int allow_padding, Err *err);

/* Reshape to a new input shape. num/den are the old/new element widths
 * (bits); num == den keeps the width. prod(S)*num must equal prod(shape)*den.
 * Widening must not interleave storage below the new width (checked). */
Layout *layout_reshape(Arena *A, const Layout *L, const int64_t *shape, int n, int64_t num,
		       int64_t den, Err *err);
/* Repeat(dim, f): input dim grows by f; a new leading output x_dim // S_dim. */
Layout *layout_repeat(Arena *A, const Layout *L, int dim, int64_t f, Err *err);
/* Expand(lead): prepend identity dimensions of the given extents. */
Layout *layout_expand(Arena *A, const Layout *L, const int64_t *lead, int nlead, Err *err);

/* Printed form: Layout([64, 64] -> [1, 8, 512], transform: [_i, _j] -> [...])
 * and Fragment([16, 16] -> [8], replicate: 1, thread: 32, forward_thread: ...,
 * forward_index: [...][, thread_range: I.Range(min, extent)]) */
void layout_print(Buf *b, const Layout *L);
char *layout_str(Arena *A, const Layout *L);
/* "[a, b, c]" */
void layout_print_shape(Buf *b, const int64_t *s, int n);

/* ---- Enumeration (layout.c), shared by the modules of the layout core ---- */

/* Visit the row-major domain `shape` (var ids varid[k] for dim k) in batches:
 * vals[e][p] is expression e at point first + p. Returns 0, the callback's
 * non-zero value, or -1 with err set (limit, division by zero). */
typedef int (*LayoutVisit)(void *ctx, int64_t first, int npts, const int64_t *const *coord,
			   int64_t *const *vals);
int layout_enumerate(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne,
		     LayoutVisit fn, void *ctx, Err *err);
/* "[1, 0]" for the flat row-major index of a point */
void layout_print_point(Buf *b, const int64_t *shape, int n, int64_t flat);

/* Closed-form inverse of an injective map from the domain `shape` (vars
 * 0..n-1) with outputs fwd (bounds oshape), verified by a round trip.
 * Returns n expressions in vars 0..nout-1, or NULL with err set. */
IExpr **layout_invert_exprs(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout,
			    const int64_t *oshape, Err *err);

/* ---- Fragment (fragment.c) ---------------------------------------------- */

/* thread in _i.. and _rep (R = rep >= 1). nout == 0 asks for the implicit slot
 * map: the complement of the input digits the thread map uses, row-major over
 * (dim 0 high..low, dim 1 high..low, ...). ThreadExtent is derived exactly. */
Fragment *frag_new(Arena *A, const int64_t *shape, int nin, IExpr *thread, int64_t rep,
		   IExpr *const *fwd, int nout, Err *err);
Fragment *frag_parse(Arena *A, const int64_t *shape, int nin, const char *thread, int64_t rep,
		     const char *const *fwd, int nout, Err *err);
Fragment *frag_bind_range(Arena *A, const Fragment *F, int64_t min, int64_t ext, Err *err);
/* thread' = thread[_rep % R] + ThreadExtent * (_rep // R), R' = R * n */
Fragment *frag_replicate(Arena *A, const Fragment *F, int64_t n, Err *err);
/* (m == 1) f = gcd(R, slots): trade replicas for distinct owners */
Fragment *frag_dereplicate(Arena *A, const Fragment *F, Err *err);
/* drop the parts of _rep the thread map does not use */
Fragment *frag_condense_rep(Arena *A, const Fragment *F, Err *err);
/* Repeat(r[0..nin), on thread or on slot (m == 1), lower_dim_first as TileLang) */
Fragment *frag_repeat(Arena *A, const Fragment *F, const int64_t *r, int on_thread,
		      int lower_dim_first, Err *err);
/* FullyReplicated(shape, T): thread = _rep, R = T, row-major slots, range [0, T) */
Fragment *frag_fully_replicated(Arena *A, const int64_t *shape, int n, int64_t nthreads, Err *err);
int frag_is_fully_replicated(const Fragment *F);
/* Contains(small, large): every (x, r_s) of small is held by its thread under
 * large (for some r_l); with check_index also equal slots. Same input shapes.
 * 1 yes, 0 no (why names the point), -1 error. */
int frag_contains(const Fragment *small, const Fragment *large, int check_index, Err *why);
/* Canonical packing (x..., rep) -> (slot..., thread); its inverse is the
 * fragment inverse (slot..., thread) -> (x..., rep). */
Layout *frag_pack(Arena *A, const Fragment *F, Err *err);

#endif
