/*
 * plan.h: the decisions of the lowering, each made by a pass of its own and
 * kept on the tile IR (IrKernel.part, IrStmt.nest_plan / copy_plan /
 * red_plan / pipe_plan) for lower-kernels to turn into the lowered IR:
 *
 *   plan-partitions  plan_partition.c  every register tile and parallel nest over the
 *                                      threads: its Fragment, the (slot, thread) ->
 *                                      coordinate functions, slots per thread, and which
 *                                      stores of a replicated nest go between barriers
 *   plan-reduces     plan_reduce.c     each reduce's plan (reduce_plan.c)
 *   plan-vectors     plan_vector.c     vector widths: of every register tile's slots and
 *                                      of every copy's accesses and of every parallel
 *                                      nest's global stores and loads
 *   plan-copies      plan_copy.c       each copy's instruction (cp.async, 16-byte loads
 *                                      and stores, zero-filled, element by element)
 *   plan-pipelines   plan_pipeline.c   each pipeline's schedule: software-pipelined (how
 *                                      far ahead, wgmma groups in flight) or serial, why
 *
 * (plan-gemms, gemm_plan.c, and plan-shared-memory, smem.c, are the other
 * planning passes.) A plan the passes did not make (emit_cuda called alone,
 * a plugin that removed a pass) is made by the lowering when it needs it,
 * with the same functions, so the code is the same either way.
 */
#ifndef PLAN_H
#define PLAN_H

#include "ir.h"
#include "layout.h"

struct Em;

/* ---- plan-partitions -------------------------------------------------------------- */

typedef struct TilePlan {
	const Layout *frag;  /* the Fragment of a local buffer (NULL for other buffers) */
	IExpr **coord;       /* coordinates (x..., rep) over slot (var 0) and thread (var 1) */
	int64_t slots;       /* slots per thread */
	const char *source;  /* "inferred", "gemm" (a gemm's accumulator) or "default" */
	int vec;             /* plan-vectors: the slots' vector run (0: not planned) */
	int pad;             /* some pairs hold no element: those whose coordinate 0 is past
			      * in_shape[0] (a layout not onto its slots, padded) */
} TilePlan;

typedef struct KernelPart {
	int nbuf;
	TilePlan *tiles;     /* per buffer id */
	/* the exact tables of coordinates of the fragments with no closed-form inverse (tiles
	 * and nests), read by their coordinate expressions (IX_TAB) and declared by the kernel */
	const ITab **tabs;
	const Layout **tabfrag;  /* the fragment of each table */
	int ntab, captab;
} KernelPart;

typedef struct NestPlan {
	const Layout *frag;  /* the loop layout (inferred or the default partition) */
	IExpr **coord;       /* loop coordinates (vars..., rep) over slot and thread */
	int64_t slots;       /* points per thread */
	unsigned char *sync; /* per buffer: replica 0's stores go between barriers (replicated
			      * layouts that read the buffer they store into), or NULL */
	int pad;             /* as TilePlan.pad: points past the nest's first extent are skipped */
	/* plan-vectors: the global stores done vec points at a time along loop variable vdim
	 * (their values kept per point, stored as one vector after the run); 0: not planned,
	 * 1: every store element by element (vwhy says why) */
	int vec, vdim;
	const char *vwhy;
	const IrStmt **vst;
	int nvst;
	/* plan-vectors: the global loads read as vectors of vldw[q] points along vdim (vldw[q]
	 * divides vec: vec / vldw[q] accesses per run), each unpacked into the run's points;
	 * lwhy: why the body's other global loads are read element by element (NULL: none) */
	const IrExpr **vld;
	int *vldw;
	int nvld;
	const char *lwhy;
} NestPlan;

/* ---- plan-vectors and plan-copies -------------------------------------------------- */

typedef enum {
	CPK_LOCAL,           /* register tile -> register tile */
	CPK_LOAD,            /* memory -> register tile, through its slots */
	CPK_STORE,           /* register tile -> memory */
	CPK_TILE             /* between global and shared memory, cooperatively */
} CopyKind;

typedef enum {
	CPI_NONE,            /* not chosen yet (plan-copies) */
	CPI_REGS,            /* register moves (CPK_LOCAL) */
	CPI_SCALAR,          /* one element per access */
	CPI_VECTOR,          /* v elements (up to 16 bytes) per load or store */
	CPI_VECTOR_ZFILL,    /* vector loads into shared memory, zeros past the source's edge */
	CPI_SCALAR_ZFILL,    /* element loads into shared memory, zeros past the edge */
	CPI_CP_ASYNC         /* cp.async 16-byte chunks with zero fill (HIP: synchronous) */
} CopyInstr;

typedef struct CopyPlan {
	CopyKind kind;
	int v;               /* plan-vectors: elements per access where every run-time
			      * condition holds (1: element by element) */
	const char *why;     /* plan-vectors: why v is not wider (NULL: the widest) */
	CopyInstr instr;     /* plan-copies */
	int64_t chunks, iters; /* CPK_TILE: accesses over the tile, and per thread */
} CopyPlan;

/* ---- plan-pipelines ------------------------------------------------------------------ */

/* one load of a TMA pipeline: panels boxes side by side along the tile's last dimension, each
 * box0 elements (the innermost) by box1 rows, box p at p * box0 * box1 elements of the stage */
typedef struct TmaLoad {
	const IrStmt *load;
	int buf;             /* the global tensor (rank 2, or rank 3 with a box of one plane) */
	int rank;
	int64_t box0, box1;
	int panels;
	int swizzle;         /* bytes: 0 (none), 32, 64, 128 */
} TmaLoad;

typedef struct PipePlan {
	const char *serial;  /* why the loads cannot run ahead: a serial loop (NULL: pipelined) */
	int stages;          /* shared-memory stages */
	int ahead;           /* stages loaded ahead (the prologue's loads) */
	int wgmma;           /* 0; 1: loads and wgmma gemms, each gemm retires its group;
			      * 2: one wgmma group in flight */
	/* TMA (sm_90a, tilec_options.tma): thread 0 loads each stage with cp.async.bulk.tensor onto
	 * an mbarrier (full) that the consumers wait on; each warp releases the stage on a second
	 * one (empty) that the loads of the stage's next use wait on. ntma loads, tx bytes per stage;
	 * tma_why: why not (NULL when tma). A body with statements other than loads and wgmma gemms
	 * (wgmma == 0) retires its gemms in the iteration and releases the stage at its end. */
	int tma;
	const char *tma_why;
	TmaLoad *tl;
	int ntl;
	int64_t tx;
	/* the gemm-softmax overlap (a wgmma target, a cp.async body of loads, a first gemm, other
	 * statements, a last gemm that accumulates): the last gemm (rot_g2) of iteration v is
	 * issued in iteration v + 1 right after the first (rot_g1) and stays in flight while the
	 * statements before rot_r run (those that do not touch its accumulator); rot_r and what
	 * follows run after it retired (NULL: none). Loads run S - 2 ahead (the stage rot_g2
	 * reads stays one iteration longer). Not rotated: rot_g2 NULL, rot_why the reason for a
	 * body of that form, else NULL */
	const IrStmt *rot_g1, *rot_g2, *rot_r;
	const char *rot_why;
} PipePlan;

/* the passes (the pass manager's entries; 0 or -1 with err set, located) */
int plan_partitions(Arena *a, const Target *t, IrKernel *k, Err *err);
int plan_reduces(Arena *a, const Target *t, IrKernel *k, Err *err);
int plan_vectors(Arena *a, const Target *t, IrKernel *k, Err *err);
int plan_copies(Arena *a, const Target *t, IrKernel *k, Err *err);
int plan_pipelines(Arena *a, const Target *t, IrKernel *k, Err *err);
/* stage-epilogues (plan_epilogue.c, before layout inference): `copy(acc, C[...])` after a
 * GEMM's pipeline through a swizzled shared tile on the stage bytes (IrKernel.epilogue) */
int plan_epilogues(Arena *a, const Target *t, IrKernel *k, Err *err);
/* readable dumps of the plans (--print-after=plan-X) */
void plan_partitions_dump(Buf *b, const IrKernel *k);
void plan_reduces_dump(Buf *b, const IrKernel *k);
void plan_copies_dump(Buf *b, const IrKernel *k);
void plan_pipelines_dump(Buf *b, const IrKernel *k);
const char *copy_instr_name(CopyInstr i);

#endif
