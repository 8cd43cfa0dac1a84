/*
 * infer_int.h: internals shared by the inference engine (infer.c), its op
 * rules (infer_rules.c) and its output (infer_dump.c): the collected ops
 * with their local-tile accesses, and the state of one attempt.
 */
#ifndef INFER_INT_H
#define INFER_INT_H

#include "infer.h"
#include "linear.h"

enum { LV_FREE = 0, LV_COMMON = 1, LV_STRICT = 2 };

/* one access of a local tile by an op; idx in the nest's loop vars _i.. */
typedef struct Acc {
	int buf, write, n;
	int ok;                 /* every index is an expression in the loop vars */
	IExpr *idx[IR_MAXDIM];
} Acc;

typedef struct Op {
	IrStmt *s;
	int idx;
	int nest;               /* PARALLEL, COPY, FILL: has a loop layout */
	int serial;             /* a statement outside parallel nests reading or writing local
	                         * elements: every thread runs it, so holds them all */
	int is_annot;
	int nloop;
	int64_t ext[IR_MAXDIM];
	IrVar *vars[IR_MAXDIM];
	int nacc, capacc;
	Acc *acc;               /* local tiles only (gemm/reduce: n == 0) */
	int has_global, has_shared, stores_mem;
	int ebytes;             /* widest element of any buffer it touches */
	/* is_annot == 3: a nest as root with this loop layout (inf_nest_variants) */
	Fragment *variant;
	const char *variant_why;
} Op;

typedef struct State {
	LayoutMap map;
	const IrStmt **setter;  /* per buffer: the statement that gave its layout */
	char *done, *queued;
	int *queue, qhead, qlen;
	int comp_only;          /* >= 0: enqueue only ops of this component */
	const char *why;        /* why the attempt failed */
	/* the journal: every buffer, loop and done entry written (kind in the low
	 * 2 bits), so that an attempt is undone, compared and kept in time linear
	 * in what it touched, not in the kernel's size; NULL: not kept */
	Arena *ja;
	int *jrn, njrn, capjrn;
} State;

enum { J_BUF = 0, J_LOOP = 1, J_DONE = 2 };
void inf_journal(State *st, int kind, int i);

static inline void
inf_done(State *st, int op)
{
	if (!st->done[op]) {
		st->done[op] = 1;
		inf_journal(st, J_DONE, op);
	}
}

static inline void
inf_loop(State *st, int id, Layout *L)
{
	st->map.loop[id] = L;
	inf_journal(st, J_LOOP, id);
}

typedef struct Inf {
	Arena *a;
	Diags *d;
	IrKernel *k;
	const Target *t;
	CostModelKind model;
	Buf *explain;
	int64_t T;              /* threads per block */
	int nop, capop;
	Op *ops;
	int nstmt;
	int *nuse, *capuse, **use;  /* per buffer: ops accessing it */
	int *comp, ncomp;
	Fragment **plan;        /* per op: its planned partition (cached) */
	Fragment *plans[64];    /* distinct plans, for sharing */
	int nplan;
	/* while a variant root is tried: the nest op that takes force_F (inf_nest_variants) */
	int force_op;
	Fragment *force_F;
	const char *force_why;
	/* the second pass over a component's roots, after every root failed: reduces into wider
	 * destinations and nests reading local tiles at affine indices are accepted (both are
	 * lowered through shared memory) */
	int lenient;
	/* per statement id: why a nest took the loop layout it did, when a rule chose
	 * (shown by --explain next to the statement while its loop has that layout) */
	const Layout **rule_loop;
	const char **rule_text;
	const IrStmt *where;    /* the statement whose rule failed */
	int nconv;
	IrStmt **conv;          /* conversion copies (convert.c): not ops, charged in free mode */
	int npref;
	int *pref;              /* ops of require_layout(..., pin = false): preferences */
	/* per component c: its ops, preferences (indices into pref) and conversions
	 * (indices into conv) at [cstart[c], cstart[c + 1]) of cop, cpref, cconv */
	CostRepeats *rep;       /* the cost model's trip counts, built at the first score */
	/* covers() answers by the fragments (compared as trees), dim and keep: the reducer's search asks
	 * the same questions again for every root of a component (infer_rules.c) */
	struct CovMemo {
		uint64_t h;
		const Fragment *F, *G;
		int dim, keep, r;
	} *cov;
	int ncov, capcov;
	/* the reducer search's answer (before tidy) by source fragment, buffers and dim: asked
	 * again for every root of a component (infer_rules.c reduce_step) */
	struct RedMemo {
		uint64_t h;
		const Fragment *F, *G;
		int sb, db, dim;
		Err e;
	} *red;
	int nred, capred;
	/* frag_contains(a, b, 0) by the fragments (compared as trees): the nests' access checks
	 * ask it again for every root and variant (infer_rules.c check_acc) */
	struct ContMemo {
		uint64_t h;
		const Fragment *a, *b;
		int r;
		Err e;
	} *cont;
	int ncont, capcont;
	int *cop, *copstart, *cpref, *cprefstart, *cconv, *cconvstart;
} Inf;

State *inf_state_new(Inf *in);
void inf_state_copy(Inf *in, State *dst, const State *src);
int inf_set_buf(Inf *in, State *st, int buf, Layout *L, const Op *op);

/* infer_rules.c */
Fragment *inf_plan(Inf *in, const Op *op, int touches_frag, Err *e);
int inf_nest_variants(Inf *in, const Op *op, Fragment **out, const char **why, int max);
int inf_step(Inf *in, State *st, Op *op, int level);
Layout *inf_lit_layout(Inf *in, const IrStmt *s, int *skip, Err *e);
const char *inf_conflict(Inf *in, int buf, const Layout *old, const IrStmt *olds, const Layout *L,
			 const IrStmt *s, const char *extra);
int inf_validate_state(Inf *in, State *st, const int *members, int n);
void inf_finish(Inf *in, State *st);
int inf_validate_kernel(Inf *in, State *st);
const char *inf_stmt_name(const IrStmt *s);

/* frag_linear.c: the Fragment of a (register, lane, warp[, block]) linear layout; NULL with err */
Fragment *frag_from_linear(Arena *a, const LinLayout *L, int warp_size, Err *err);

#endif
