/*
 * cute.h: the CuTe layout algebra (CUTLASS CuTe semantics, C++ spelling).
 * Objects are small trees allocated from a caller's Arena; every operation
 * returns 0 on success and -1 with a message in *err on a broken precondition.
 * Nothing aborts. The Arena and result pointers must not be NULL; err may be
 * NULL, and NULL or malformed layouts given as arguments are reported as
 * errors. See docs/cute.md for the conventions and the command line.
 */
#ifndef CUTE_H
#define CUTE_H

#include "tl.h"

enum {
	CUTE_MAXDEPTH = 64,   /* nesting limit of parsed text */
	CUTE_MAXBASIS = 8,    /* longest ScaledBasis index path E<i,j,...> */
	CUTE_MAXPROVE = 1 << 22, /* domain size limit of the converters' proof */
};

/*
 * A leaf: an integer v, or a ScaledBasis stride v*E<b[0],...,b[nb-1]>
 * (nb > 0; printed `_v@b[nb-1]...@b[0]`). Shapes hold plain integers only.
 */
typedef struct CuteInt {
	int64_t v;
	int nb;
	uint8_t b[CUTE_MAXBASIS];
} CuteInt;

/* IntTuple: a leaf (n < 0) or a tuple of n elements (n >= 0; n == 1 is `(a)`). */
typedef struct CuteTup CuteTup;
struct CuteTup {
	int n;
	CuteInt x;
	CuteTup **e;
};

/* Layout shape:stride, congruent trees; coordinates are column-major. */
typedef struct CuteLayout {
	CuteTup *shape, *stride;
} CuteLayout;

/* Swizzle<B,M,S>: x ^ shift(x & Y, S); B,M >= 0, |S| >= B */
typedef struct CuteSwizzle {
	int b, m, s;
} CuteSwizzle;

/* ComposedLayout `Sw<B,M,S> o off o L`: evaluates sw(off + L(c)) */
typedef struct CuteComposed {
	CuteSwizzle sw;
	int64_t off;
	CuteLayout l;
} CuteComposed;

/* What parsed text denotes. A tiler is a tuple of layouts, integers, `_`, tilers. */
typedef enum {
	CUTE_TUPLE,    /* an IntTuple (t; a leaf or a tuple of integers) */
	CUTE_LAYOUT,   /* l */
	CUTE_TILER,    /* n elements e[] */
	CUTE_UNDER,    /* `_` inside a tiler */
	CUTE_SWIZZLE,  /* sw */
	CUTE_COMPOSED, /* c */
} CuteKind;

typedef struct CuteObj CuteObj;
struct CuteObj {
	CuteKind k;
	CuteTup *t;
	CuteLayout l;
	int n;
	CuteObj **e;
	CuteSwizzle sw;
	CuteComposed c;
};

/* ---- objects, parse, print (cute.c) -------------------------------------- */

CuteTup *cute_int(Arena *a, int64_t v);              /* a plain integer leaf */
CuteTup *cute_leaf(Arena *a, CuteInt x);
CuteTup *cute_tuple(Arena *a, int n);                /* n NULL elements to fill */
CuteTup *cute_tup_copy(Arena *a, const CuteTup *t);
int cute_tup_equal(const CuteTup *a, const CuteTup *b);
int cute_congruent(const CuteTup *a, const CuteTup *b);
int cute_tup_size(const CuteTup *t, int64_t *out, Err *err);  /* product of leaves */
int cute_tup_rank(const CuteTup *t);                 /* 1 for a leaf */
int cute_tup_depth(const CuteTup *t);                /* 0 for a leaf */
const CuteTup *cute_tup_get(const CuteTup *t, int i); /* mode i; a leaf's mode 0 is itself */

CuteLayout cute_make(CuteTup *shape, CuteTup *stride);
/* make_layout(shape) (LayoutLeft): prefix products, static extent-1 modes get _0 */
int cute_make_left(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err);
/* make_layout(shape, LayoutRight): prefix products from the right */
int cute_make_right(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err);
/* make_identity_layout(shape): strides _1@0, _1@1, ... */
int cute_make_identity(Arena *a, const CuteTup *shape, CuteLayout *out, Err *err);
/* join layouts as modes of one layout: (L0, L1, ...) */
CuteLayout cute_join(Arena *a, int n, const CuteLayout *modes);

int cute_valid(CuteLayout l, Err *err);             /* congruent, shapes > 0 */
int cute_size(CuteLayout l, int64_t *out, Err *err);
int cute_cosize(CuteLayout l, int64_t *out, Err *err);  /* integer strides only */
int cute_rank(CuteLayout l);
int cute_depth(CuteLayout l);
CuteLayout cute_mode(CuteLayout l, int i);           /* layout<i>; i < rank */

/* L(i) for integer strides; the last flattened mode takes the overflow */
int cute_eval(CuteLayout l, int64_t i, int64_t *out, Err *err);
/* L(i) as an IntTuple: an integer, or an ArithmeticTuple for ScaledBasis strides */
int cute_eval_tup(Arena *a, CuteLayout l, int64_t i, CuteTup **out, Err *err);
/* L(c) at a hierarchical coordinate (an integer at a tuple mode indexes that mode 1-D) */
int cute_eval_coord(Arena *a, CuteLayout l, const CuteTup *coord, CuteTup **out, Err *err);

int cute_swizzle_check(CuteSwizzle sw, Err *err);
int64_t cute_swizzle_apply(CuteSwizzle sw, int64_t x);   /* x >= 0, sw valid */
int cute_composed_eval(const CuteComposed *c, int64_t i, int64_t *out, Err *err);

/* Parse C++ CuTe spelling; also plain integers and `Swizzle<B,M,S> o shape:stride`. */
int cute_parse(Arena *a, const char *s, CuteObj **out, Err *err);
int cute_parse_layout(Arena *a, const char *s, CuteLayout *out, Err *err);
int cute_parse_tup(Arena *a, const char *s, CuteTup **out, Err *err);

void cute_print_int(Buf *b, CuteInt x);
void cute_print_tup(Buf *b, const CuteTup *t);
void cute_print_layout(Buf *b, CuteLayout l);
void cute_print_swizzle(Buf *b, CuteSwizzle sw);
void cute_print_composed(Buf *b, const CuteComposed *c);
void cute_print(Buf *b, const CuteObj *o);
/* the layout as a string in the arena (for tests and messages) */
char *cute_str(Arena *a, CuteLayout l);

/* ---- algebra (cute_ops.c) -------------------------------------------------- */

/* profile NULL: whole layout; else by mode (a leaf coalesces that mode whole) */
int cute_coalesce(Arena *a, CuteLayout l, const CuteTup *profile, CuteLayout *out, Err *err);
int cute_filter(Arena *a, CuteLayout l, const CuteTup *profile, CuteLayout *out, Err *err);
/* A o B; fails on the real divisibility conditions (stricter than C++'s static test) */
int cute_compose(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err);
/* A o tiler: a layout, an IntTuple or a CUTE_TILER (by mode; A's extra modes dropped) */
int cute_compose_obj(Arena *a, CuteLayout A, const CuteObj *B, CuteLayout *out, Err *err);
/* cotarget NULL: cosize(filter(A)); an integer or a shape tuple otherwise */
int cute_complement(Arena *a, CuteLayout A, const CuteTup *cotarget, CuteLayout *out,
		    Err *err);
/*
 * right_inverse is PARTIAL: it inverts the longest contiguous chain of strides
 * 1, s0, s0*s1, ... and silently drops stride-0 and non-contiguous modes.
 * L is a bijection onto [0,size(L)) iff size(right_inverse(L)) == size(L).
 */
int cute_right_inverse(Arena *a, CuteLayout l, CuteLayout *out, Err *err);
int cute_left_inverse(Arena *a, CuteLayout l, CuteLayout *out, Err *err);

typedef enum { CUTE_LOGICAL, CUTE_ZIPPED, CUTE_TILED, CUTE_FLAT } CuteGroup;
/* logical/zipped/tiled/flat divide; B a layout, an integer, an IntTuple or a tiler */
int cute_divide(Arena *a, CuteGroup g, CuteLayout A, const CuteObj *B, CuteLayout *out,
		Err *err);
int cute_product(Arena *a, CuteGroup g, CuteLayout A, const CuteObj *B, CuteLayout *out,
		 Err *err);
int cute_blocked_product(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err);
int cute_raked_product(Arena *a, CuteLayout A, CuteLayout B, CuteLayout *out, Err *err);
/* composition(L, make_layout(shape)) */
int cute_with_shape(Arena *a, CuteLayout l, const CuteTup *shape, CuteLayout *out, Err *err);
/* select the modes of l listed in idx (an integer or a tuple of mode indices) */
int cute_restrict(Arena *a, CuteLayout l, const CuteTup *idx, CuteLayout *out, Err *err);
/* composition(Swizzle, L): `sw o _0 o L`, or L itself when B == 0 (then *is_layout = 1) */
int cute_compose_swizzle(CuteSwizzle sw, CuteLayout l, CuteComposed *out, int *is_layout,
			 Err *err);

/* ---- converters from finite functions (cute_conv.c) --------------------- */

/*
 * A finite function to convert: coord has nin entries (logical coordinates,
 * row-major order like TileLang), out receives nout values. Returns 0, or
 * nonzero when the point cannot be evaluated (the conversion then fails
 * with "not representable").
 */
typedef int (*CuteProbe)(void *ctx, const int64_t *coord, int64_t *out);

/*
 * LayoutFromTile: the CuTe layout equal to the function. Its modes follow the
 * input dims (mode k is input dim k; inside CuTe mode 0 is fastest), and the
 * outputs are serialized row-major into one integer (o0*ext1*... + ...).
 * Returns 1 and *res when representable, 0 when not (reason in err->msg),
 * -1 on a real error (bad arguments, overflow, domain past CUTE_MAXPROVE).
 */
int cute_from_tile(Arena *a, int nin, const int64_t *in_shape, int nout,
		   const int64_t *out_shape, CuteProbe f, void *ctx, CuteLayout *res, Err *err);
/* the hierarchical form: output k becomes basis axis E<k> (strides `_v@k`) */
int cute_from_tile_hier(Arena *a, int nin, const int64_t *in_shape, int nout,
			const int64_t *out_shape, CuteProbe f, void *ctx, CuteLayout *res,
			Err *err);
/* ComposedLayoutFromTile: sw o _0 o L (swizzle recovered; B == 0 when none is needed) */
int cute_composed_from_tile(Arena *a, int nin, const int64_t *in_shape, int nout,
			    const int64_t *out_shape, CuteProbe f, void *ctx, CuteComposed *res,
			    Err *err);
/*
 * The same from a table of the function: vals[p * nout + k] is output k at the
 * row-major point p of in_shape (every point). The results and messages are those
 * of the probe forms; the proof is a pass over memory instead of a call per point.
 * hier selects cute_from_tile_hier's form.
 */
int cute_from_table(Arena *a, int nin, const int64_t *in_shape, int nout,
		    const int64_t *out_shape, const int64_t *vals, int hier, CuteLayout *res,
		    Err *err);
int cute_composed_from_table(Arena *a, int nin, const int64_t *in_shape, int nout,
			     const int64_t *out_shape, const int64_t *vals, CuteComposed *res,
			     Err *err);
/*
 * The same (not hier) from the serialized table alone: ser[p] is the row-major
 * serialization over out_shape of the outputs at point p, which the caller checked to be
 * inside out_shape. As cute_from_table / cute_composed_from_table with the table of those
 * outputs, or 2 (nothing done) where that table would not be taken as one (bad extents,
 * a domain past CUTE_MAXPROVE, a serialization that can overflow): then use those.
 */
int cute_from_ser(Arena *a, int nin, const int64_t *in_shape, int nout, const int64_t *out_shape,
		  const int64_t *ser, CuteLayout *res, Err *err);
int cute_composed_from_ser(Arena *a, int nin, const int64_t *in_shape, int nout,
			   const int64_t *out_shape, const int64_t *ser, CuteComposed *res, Err *err);

/*
 * Symbolic proof. After probing, a converter holds, per input dim k, nsub[k]
 * sub-modes (size s, stride d[c] for each of nv values: nv = nout in the
 * hierarchical form, else 1, the serialized value before the swizzle sw) from
 * the fastest; prove returns 1 when the function is shown equal to that layout
 * (composed with sw) on its whole domain, else 0. cute_convert_proved runs a
 * converter (form 0 flat, 1 hierarchical, 2 composed) with prove in place of
 * the pass over the domain: its result is the probe form's, or 2 when prove
 * did not decide (then convert by the probe or table forms).
 */
/* test switch: 1 makes the swizzle search convert every candidate (no quick rejection) */
extern int cute_reference_search;
typedef struct CuteSubMode {
	int64_t s;
	int64_t d[16];
} CuteSubMode;
typedef int (*CuteProve)(void *ctx, CuteSwizzle sw, int nin, const int *nsub,
			 const CuteSubMode *const *subs, int nv);
int cute_convert_proved(Arena *a, int nin, const int64_t *in_shape, int nout,
			const int64_t *out_shape, CuteProbe f, void *ctx, CuteProve prove, void *pctx,
			int form, CuteComposed *res, Err *err);

/*
 * A fragment as callbacks: thread(ctx, coord, rep) and slot(ctx, coord) for
 * logical coord (nin dims) and replica rep in [0, nrep). cute_pack_fragment
 * fills a CutePacked whose probe is the canonical packing
 * (coords..., rep) -> (thread, slot): nin+1 inputs, 2 outputs.
 */
typedef int (*CuteFragThread)(void *ctx, const int64_t *coord, int64_t rep, int64_t *thread);
typedef int (*CuteFragSlot)(void *ctx, const int64_t *coord, int64_t *slot);
typedef struct CutePacked {
	CuteFragThread thread;
	CuteFragSlot slot;
	void *ctx;
	int nin;
	int64_t in_shape[16];      /* nin dims then the rep extent */
	int64_t out_shape[2];      /* thread extent, slot extent */
} CutePacked;
int cute_pack_fragment(CutePacked *p, int nin, const int64_t *in_shape, int64_t nrep,
		       int64_t nthread, int64_t nslot, CuteFragThread thread, CuteFragSlot slot,
		       void *ctx, Err *err);
int cute_packed_probe(void *packed, const int64_t *coord, int64_t *out);

/* ---- command line (cute_cli.c) ------------------------------------------ */

/* run one named operation on text arguments; prints the result into out */
int cute_run_op(Arena *a, const char *op, int nargs, const char *const *args, Buf *out,
		Err *err);

#endif
