/*
 * infer.h: layout inference (infer.c) and its cost models (cost.c, with
 * the independent brute-force oracle in cost_oracle.c).
 *
 * Inference gives every local buffer a Fragment and every parallel nest
 * (PARALLEL statements, and the element nests of COPY and FILL) a loop
 * Fragment; shared buffers get their shared-memory layout. The results are
 * written into IrBuffer.layout and IrStmt.loop_layout (ir.h).
 *
 * Iteration space of a nest (nest_shape): PARALLEL: its vars' extents in
 * order. COPY: the destination region's extents with the unit extents
 * dropped (the source region's non-unit extents are the same list); FILL:
 * the destination's non-unit extents. If every extent is 1 the nest is one
 * loop of extent 1. Loop coordinate k of a COPY/FILL nest is the k-th
 * non-unit dim of each region.
 */
#ifndef INFER_H
#define INFER_H

#include "ir.h"
#include "layout.h"
#include "target.h"

/* ---- nests (nest.c) ---------------------------------------------------- */

/* the iteration space of a nest statement; returns its rank (<= IR_MAXDIM), 0 if s is not a nest */
int nest_shape(const IrStmt *s, int64_t *ext);
/* for COPY/FILL: the region dim that loop coordinate k walks (-1 if none) */
int nest_region_dim(const Region *r, int k);

/* ---- attempts and costs ------------------------------------------------- */

/* layouts of one inference attempt, indexed by buffer id and statement id */
typedef struct LayoutMap {
	int nbuf;
	Layout **buf;   /* Fragment (local) or shared layout; NULL: not assigned */
	int nstmt;
	Layout **loop;  /* loop Fragment of nest statements; NULL: not assigned */
} LayoutMap;

typedef enum { COST_IO_AWARE, COST_REGISTER_COUNT } CostModelKind;

/* one statement's share of an attempt's cost */
typedef struct StmtCost {
	const IrStmt *stmt;
	int64_t bw_bytes;     /* 128-byte segments touched * 128, per warp and step */
	int64_t issue_bytes;  /* vector issue slots * vector bytes */
	int64_t mem;          /* max(bw, issue), or the worst case when not measurable */
	int vec;              /* vector width in elements the model assumed (0: not measured) */
	const char *why;      /* vec == 0: why the worst case was charged; vec > 0: a caveat of
			       * the measurement (a non-constant trip count taken as 1) or NULL */
} StmtCost;

typedef struct Cost {
	int64_t mem;          /* io-aware: sum of StmtCost.mem; register-count: 0 */
	int64_t regs;         /* sum over every local buffer's fragment of its per-thread slots */
	int nstmt;
	StmtCost *stmts;      /* arena-allocated breakdown (io-aware) */
} Cost;

/* score an attempt: members are the statements of the component (source order) */
int cost_score(Arena *a, CostModelKind m, const Target *t, const IrKernel *k,
	       IrStmt *const *members, int nmembers, const LayoutMap *map, Cost *out, Err *err);
/* the serial trip-count product around every statement, by statement id
 * (< n), from one walk of the kernel: cost_score_rep looks it up instead of
 * searching the body per statement (which made scoring quadratic) */
typedef struct CostRepeats {
	int n;
	int64_t *rep;
	char *nc;    /* a trip count on the way was not constant */
	struct FragCache *frag;  /* fragments packed and inverted by earlier scores (cost.c) */
} CostRepeats;
CostRepeats *cost_repeats(Arena *a, const IrKernel *k, int nid);
int cost_score_rep(Arena *a, CostModelKind m, const Target *t, const IrKernel *k,
		   IrStmt *const *members, int nmembers, const LayoutMap *map, const CostRepeats *rt,
		   Cost *out, Err *err);
/* the same numbers by brute-force enumeration of every thread's every access */
int cost_oracle(Arena *a, CostModelKind m, const Target *t, const IrKernel *k,
		IrStmt *const *members, int nmembers, const LayoutMap *map, Cost *out, Err *err);
/* the global accesses of parallel nest s that the model measures, each as the element
 * strides of its address over the nest's loop variables (size symbols read as the model
 * reads them); at most max into out, the count returned (0 for anything but a nest) */
typedef struct NestStride {
	int buf, store;
	int64_t coef[IR_MAXDIM];
} NestStride;
int cost_nest_strides(Arena *a, const IrKernel *k, const IrStmt *s, NestStride *out, int max);
/* lexicographic (mem, regs): 1 if a is strictly better than b */
int cost_better(const Cost *a, const Cost *b);
const char *cost_model_name(CostModelKind m);   /* "io-aware", "register-count" */
int cost_model_lookup(const char *s, CostModelKind *m);  /* 0 ok, -1 unknown */

/* ---- inference (infer.c) ---------------------------------------------------- */

/*
 * Infer layouts for every kernel of the program. Errors go to d with the
 * file:line:col of the statements involved; explain (may be NULL) receives
 * every attempt's cost broken down by statement (`tilec --explain`).
 */
int infer_program(Arena *a, Diags *d, IrProgram *p, const Target *t, CostModelKind m, Buf *explain);
/* `tilec --dump=layouts`: every buffer's and nest's layout, printed form plus CuTe form */
void infer_dump(Buf *b, const IrProgram *p);

#endif
