/*
 * interp_int.h: private to the reference interpreter: the run state shared by
 * interp.c (setup, blocks, statements, parallel nests, race shadows),
 * interp_expr.c (values, conversions, expressions, element access) and
 * interp_ops.c (copy, fill, gemm, reduce).
 */
#ifndef INTERP_INT_H
#define INTERP_INT_H

#include "interp.h"

/* a value of a known type: integers and bools in i, floats in f (a value of
 * f16, bf16, fp8 or f32 type is a float value: they compute in f32) */
typedef union Cell {
	int64_t i;
	double f;
} Cell;

typedef struct Val {
	Cell c;
	unsigned fl; /* INTERP_UNDEF | INTERP_INEXACT | INTERP_VIA16 | INTERP_VIA8 */
} Val;

/* a buffer during the run */
typedef struct BufRt {
	const IrBuffer *b;
	MemScope scope;
	DType t;
	int ndim;
	int64_t dim[IR_MAXDIM], stride[IR_MAXDIM], n;
	/* shared and local: the values (rounded to t) and per-element flags */
	Cell *v;
	unsigned char *fl;
	/* global: the tensor, stored in its type's format; cell[i] holds the flags of
	 * element i (bits 0-1) and the linear id + 1 of the block that wrote it (bits
	 * 2-31, 0: not written in this run); NULL until the first write */
	unsigned char *data;
	int esz;
	uint32_t *cell;
	InterpTensor *tensor;
	/* accesses in the current parallel nest go through the nest shadow */
	int tracked;
	/* a strided tensor whose strides may map two coordinates to one element: its stores
	 * are always tracked (distinct indices do not mean distinct elements) */
	int overlap;
} BufRt;

/* the nest shadow of one element (slot: a buffer, or nbuf + a let variable) */
typedef struct Shadow {
	uint64_t epoch;   /* the nest execution it belongs to (0: empty) */
	int slot;
	int64_t idx;
	int64_t w;        /* the iteration that wrote it, or -1 */
	int64_t r1, r2;   /* two distinct iterations that read it (-1: none) */
} Shadow;

enum { BLOCK_MAX = (1 << 30) - 2 }; /* blocks a run may have (cell bits 2-31) */

typedef struct Run {
	const IrKernel *k;
	const InterpArgs *args;
	Err *e;
	Arena a;
	int bad;               /* the InterpStatus of a failure; 0 while it runs */
	BufRt *bufs;
	Val *vars;             /* by IrVar id */
	int64_t grid[3], blk[3], nblk, blkid;
	int64_t work, maxwork, stmts;
	/* the parallel nest being run (NULL: none) */
	const IrStmt *nest;
	uint64_t epoch;        /* nest executions so far: the current one's number */
	int64_t iter;          /* the current iteration, row-major */
	int anyvt;               /* some variable is tracked in the current nest */
	unsigned char *vtracked; /* per var: a let variable of an outer scope assigned in the nest */
	unsigned char *vwritten; /* per var: assigned in the current nest */
	unsigned char *stored;   /* per buffer: stored in the nest body (analysis) */
	unsigned char *pstate;   /* per buffer: 0 untouched, 1 one private pattern, 2 other */
	int64_t *pat;            /* per buffer, IR_MAXDIM entries: the pattern (a nest dim d as
	                          * -1 - d, or a constant index) */
	Shadow *sh;
	size_t shcap, shn;
	struct Bat *bat;         /* the batched nest executor's state (interp_batch.c) */
	/* scratch memory of gemm and reduce (grows) */
	void *scratch;
	size_t scratchcap;
} Run;

/* dtype_is_float / dtype_is_int, inline for the evaluator's hot paths */
static inline int
it_float(DType t)
{
	return (1u << t & (1u << DT_F16 | 1u << DT_BF16 | 1u << DT_F32 | 1u << DT_F64 | 1u << DT_FP8E4M3 |
			   1u << DT_FP8E5M2)) != 0;
}

static inline int
it_int(DType t)
{
	return (1u << t & (1u << DT_INT | 1u << DT_I8 | 1u << DT_U8 | 1u << DT_I32)) != 0;
}

/* f16, bf16, fp8 and f32 values compute in f32 */
static inline int
it_f32(DType t)
{
	return (1u << t & (1u << DT_F16 | 1u << DT_BF16 | 1u << DT_F32 | 1u << DT_FP8E4M3 | 1u << DT_FP8E5M2)) != 0;
}

/* ---- interp.c ---- */
/* set the failure (status st, message at loc) unless one is set; returns -1 */
int irun_fail(Run *R, int st, Loc loc, const char *fmt, ...) TL_PRINTF(4, 5);
/* count n units of work; -1 (with the error) past the limit */
int irun_work(Run *R, Loc loc, int64_t n);
/* scratch memory of at least n bytes (not zeroed; valid until the next call); NULL after failing */
void *irun_scratch(Run *R, size_t n);
/* the text "name[i, j]" of element lin of a buffer */
void irun_elemtext(Run *R, Buf *b, const BufRt *B, int64_t lin);
/* an access to element idx of slot in the current nest; -1 on a race */
int irun_nest_access(Run *R, int slot, int64_t idx, int write, Loc loc);
/* a block's access to element lin of global B: -1 when another block wrote it */
int irun_block_race(Run *R, const BufRt *B, int64_t lin, Loc loc);

/* ---- interp_expr.c ---- */
Val iexp_eval(Run *R, const IrExpr *x);
/* convert v of type from to type to (a cast; from == to rounds to the type) */
Val iexp_conv(Val v, DType from, DType to);
/* the flags of a value rounded into type t (INTERP_VIA16 / INTERP_VIA8 when inexact) */
unsigned iexp_via(DType t, unsigned fl);
/* the element of a global tensor (flags from its cell) / store one (v of type B->t) */
Val iexp_gload(const BufRt *B, int64_t lin);
void iexp_gstore(Run *R, BufRt *B, int64_t lin, Val v);
/* an atomic update (op) of element lin (inside) of a global or shared B with v (of type
 * B->t): old op v rounded to the type; the element is left marked as written by no block,
 * so that the atomics of several blocks on one element are not a race; -1 after an error */
int iexp_atomic(Run *R, BufRt *B, int64_t lin, Val v, AtomicOp op, Loc loc);
/* an int64 value of integer type t: wrapped to t's width, UNDEF when it did not fit
 * or ovf is set */
Val iexp_int(DType t, int64_t v, int ovf, unsigned fl);
/* maxNum / minNum (NaN-ignoring, -0 < +0); *fl gets INEXACT for zeros of both signs */
double iexp_fmax(double a, double b, unsigned *fl);
double iexp_fmin(double a, double b, unsigned *fl);
/* an integer index value that must be defined; -1 (with the error) when undefined */
int iexp_index(Run *R, const IrExpr *x, int64_t *out, unsigned *fl, const char *what);

/* the linear index of element idx[0..n) of B: -1 after an error (an index undefined, or
 * outside a shared or local buffer), 1 when outside a global tensor */
int iexp_elemindex(Run *R, const BufRt *B, int n, IrExpr *const *idx, Loc loc, int64_t *lin, unsigned *fl);

/* element lin (inside) of buffer buf = B: nest shadow, block race, the value */
Val iexp_elem(Run *R, BufRt *B, int buf, int64_t lin, Loc loc);
/* one operation on operand values: x is a binary node (not && ||), a unary node, a call
 * (b unused for one argument), a constant */
Val iexp_binop(Run *R, const IrExpr *x, Val a, Val b);
Val iexp_unop(const IrExpr *x, Val a);
Val iexp_callop(Run *R, const IrExpr *x, Val a, Val b);
Val iexp_const(const IrExpr *x);
Val iexp_undef(DType t, unsigned fl);

/* ---- interp_batch.c ---- */
/* run nest s (total iterations; no buffer or variable tracked) a batch of iterations at a
 * time: 0, -1 after an error, 1 when its body cannot be batched (nothing was run) */
int ibat_nest(Run *R, const IrStmt *s, int64_t total);

/* ---- interp_ops.c ---- */
int iop_copy(Run *R, const IrStmt *s);
int iop_fill(Run *R, const IrStmt *s);
int iop_gemm(Run *R, const IrStmt *s);
int iop_reduce(Run *R, const IrStmt *s);

#endif
