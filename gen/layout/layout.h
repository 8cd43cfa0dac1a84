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
			   const int64_t *const *vals);
int layout_enumerate(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne,
		     LayoutVisit fn, void *ctx, Err *err);
/* 1 when the vector run v of es is proved from their mixed-radix digits (affine.c): at
 * every point whose var is a multiple of v, stepping var by k < v steps es[out] by k and
 * keeps the other outputs, and es[out] is a multiple of v there; 0: not decided (the
 * caller enumerates). The domain is shape[n] with var ids varid[k]; v divides var's extent. */
/* symbolic decisions on mixed-radix expressions over the domain shape[n] (var ids
 * varid[k]), affine.c: 1 proved, 0 not decided (enumerate). es[0..ne) injective: */
int layout_aff_injective_(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne);
/* the exact [lo, hi] of e over the domain */
int layout_aff_range_(const int64_t *shape, const int *varid, int n, const IExpr *e, int64_t *lo,
		      int64_t *hi);
/* 1 when a and b are proved equal over the domain from their mixed-radix digits
 * (affine.c), 0: not decided */
int layout_aff_equal_(const int64_t *shape, const int *varid, int n, const IExpr *a, const IExpr *b);
int layout_aff_vecrun_(const int64_t *shape, const int *varid, int n, IExpr *const *es, int ne, int var,
		       int64_t v, int out);
/* "[1, 0]" for the flat row-major index of a point */
void layout_print_point(Buf *b, const int64_t *shape, int n, int64_t flat);

/* Closed-form inverse of an injective map from the domain `shape` (vars
 * 0..n-1) with outputs fwd (bounds oshape), verified by a round trip.
 * Returns n expressions in vars 0..nout-1, or NULL with err set. */
IExpr **layout_invert_exprs(Arena *A, const int64_t *shape, int n, IExpr *const *fwd, int nout,
			    const int64_t *oshape, Err *err);

/* ---- Fragment (fragment.c) ---------------------------------------------- */

/* ForwardThread(vars, rep): the thread map with the last nin of vars[0..n)
 * substituted for the inputs and rep for _rep (rep NULL keeps _rep). */
IExpr *frag_forward_thread(Arena *A, const Fragment *F, IExpr *const *vars, int n, IExpr *rep,
			   Err *err);
/* F seen through an index map: the fragment over `shape` (n loop dims) with
 * thread(v, rep) = F.thread(idx(v), rep) and slot F.fwd(idx(v)); idx has
 * F->nin expressions in _i.. < n. Indices outside F's shape make the
 * construction fail or evaluate out of range; the caller keeps them inside. */
Fragment *frag_compose(Arena *A, const Fragment *F, const int64_t *shape, int n, IExpr *const *idx,
		       Err *err);
/* The complement of what expressions use: the mixed-radix number over the
 * input digits (x // a) % b that none of es depends on, row-major over
 * (dim 0 high..low, dim 1 high..low, ...); *extent gets its range. The implicit
 * slot map is the complement of the thread map. */
IExpr *layout_complement(Arena *A, const int64_t *shape, int nin, IExpr *const *es, int ne,
			 int64_t *extent, Err *err);
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

/* ---- Shared-memory swizzles (swizzle.c) ----------------------------------- */

/* ordinals equal CU_TENSOR_MAP_SWIZZLE_* */
typedef enum { SWZ_NONE = 0, SWZ_32B = 1, SWZ_64B = 2, SWZ_128B = 3 } SwizzleMode;

/* Kinds of shared-memory layout the chooser returns. */
typedef enum { SMEM_LINEAR, SMEM_PADDED, SMEM_SWIZZLE, SMEM_F64_KINNER, SMEM_F64_KOUTER } SmemKind;

typedef struct SmemLayout {
	SmemKind kind;
	SwizzleMode mode;       /* for SMEM_SWIZZLE */
	Layout *layout;
} SmemLayout;

const char *swizzle_name(SwizzleMode m);             /* "none", "32B", "64B", "128B" */
int64_t swizzle_bytes(SwizzleMode m);                /* 16 << o: chunk run width */
int64_t swizzle_alignment(SwizzleMode m);            /* 128 << o: smem base alignment */
int swizzle_wgmma_layout_type(SwizzleMode m);        /* o == 0 ? 0 : 4 - o */
int swizzle_tcgen05_layout_type(SwizzleMode m);      /* 2 * (4 - o) */
/* The XOR bank swizzle for a [stride, continuous] tile of elem_bytes (1, 2, 4
 * or 8) elements: outputs [tc, ts, index]; rank > 2 shapes get Expand(lead).
 * Equal within each column panel to CuTe Swizzle<o, 4, 3> on byte offsets. */
Layout *swizzle_layout(Arena *A, SwizzleMode m, const int64_t *shape, int n, int elem_bytes,
		       Err *err);
Layout *swizzle_linear(Arena *A, const int64_t *shape, int n, Err *err);   /* row-major */
/* index = i * P + j, P = cont + 16 / elem_bytes when elem_bytes * cont % 32 == 0 */
Layout *swizzle_padded(Arena *A, const int64_t *shape, int n, int elem_bytes, Err *err);
/* fp64 layouts: Kinner = CuTe Swizzle<2,0,4>, Kouter = Swizzle<2,2,2> */
Layout *swizzle_f64(Arena *A, const int64_t *shape, int n, int k_inner, Err *err);
/* TileLang's choice for a GEMM operand (MakeGemmABLayout when allow_pad, else
 * the Hopper ladder MakeGemmABLayoutHopper). */
int swizzle_choose(Arena *A, const int64_t *shape, int n, int elem_bytes, int k_inner,
		   int allow_pad, SmemLayout *out, Err *err);
/* Detection is semantic (compared as mappings): 0 and *m set (SWZ_NONE for the
 * linear layout), or -1 when L is none of them. */
int swizzle_detect(const Layout *L, int elem_bytes, SwizzleMode *m);
/* Merge two recognised swizzles: the smaller granularity; -1 otherwise. */
Layout *swizzle_merge(Arena *A, const Layout *a, const Layout *b, int elem_bytes, Err *err);

/* ---- MMA fragments (mma.c) ------------------------------------------------- */

typedef enum { MMA_A, MMA_B, MMA_C } MmaOperand;
typedef enum { WARP_SQUARE = 0, WARP_FULL_ROW = 1, WARP_FULL_COL = 2 } WarpPolicy;
typedef enum { MMA_CUDA, MMA_WGMMA, MMA_ROCM } MmaTarget;

/*
 * mma.sync per-warp fragments (32 lanes), logical coordinates as in the PTX
 * ISA: A is [16, K] (row m, col k), B is [K, 8] (row k, col n), C is [16, 8].
 * elem_bits 16 (f16/bf16: m16n8k16), 32 (tf32: m16n8k8), 8 (s8/u8/e4m3/e5m2:
 * m16n8k32). C is the f32/s32 accumulator.
 */
Fragment *mma_sync_fragment(Arena *A, MmaOperand op, int elem_bits, Err *err);
/* warp partition of an M x N tile over num_warps (TileLang ComputeDefaultWarpPartition,
 * the WGMMA variant, or the ROCm 16x16 one) */
int mma_warp_partition(int64_t M, int64_t N, int num_warps, WarpPolicy p, MmaTarget t, int *m_warp,
		       int *n_warp, Err *err);
/* Block-level mma.sync fragments over 32 * m_warp * n_warp threads:
 * C [M, N] (each warp a contiguous block, registers row-major over 16 x micro
 * tiles, TileLang make_mma_store_layout); A [M, K] replicated over the
 * N-warps; B [K, N] replicated over the M-warps. */
Fragment *mma_block_fragment(Arena *A, MmaOperand op, int64_t rows, int64_t cols, int elem_bits,
			     int m_warp, int n_warp, Err *err);
/* Hopper wgmma.mma_async m64nNk* accumulator D over a warpgroup (128
 * threads), [64, N] with N a multiple of 8 up to 256: warp w holds rows
 * 16w..16w+15, laid out as the mma.sync accumulator repeated along N. */
Fragment *wgmma_acc_fragment(Arena *A, int64_t N, Err *err);
/* AMD CDNA MFMA v_mfma_f32_16x16x16_f16 (wave64), hardware layout: A [16, 16]
 * (m, k), B [16, 16] (k, n), C [16, 16] (m, n). */
Fragment *mfma_fragment(Arena *A, MmaOperand op, Err *err);
/* AMD RDNA3 WMMA v_wmma_f32_16x16x16_f16 (wave32): A and B are replicated
 * over the two half-waves (R = 2); C is the f32 accumulator. */
Fragment *wmma_fragment(Arena *A, MmaOperand op, Err *err);

#endif
