/*
 * lw.h: what the lowering's files share (gen/lower/lw_*.c, lower_*.c): the
 * lowering state of one kernel (Em), the node builders and the expression
 * helpers. Internal to gen/lower; the interface is lower.h.
 */
#ifndef LW_H
#define LW_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "layout_cute.h"
#include "lir.h"
#include "lower.h"
#include "numeric.h"
#include "plan.h"

/* a parallel nest's ownership check that passed (lower_nest.c owned) */
typedef struct OwnMemo {
	const IrStmt *par;
	const Layout *LF;
	IExpr *const *pc;
	int64_t S, pad;
	int buf, is_store, n;
	int perm[IR_MAXDIM];
} OwnMemo;

struct Held;

typedef struct LSave {
	LList *cur;
	struct LSave *up;
} LSave;

typedef struct Em {
	Arena *a;
	const Target *t;
	const IrKernel *k;
	LKernel *lk;         /* the lowered kernel being built */
	LList *cur;          /* the list nodes go into */
	LSave *saved;        /* the enclosing lists */
	Err *err;
	SmemPlan sp;
	KernelPart *part;    /* the register tiles' partition (plan-partitions) */
	Layout **frag;       /* per buffer: the Fragment of a local buffer */
	IExpr ***coord;      /* per local buffer: coords (x..., rep) in slot (_i) and thread (_j) */
	int64_t *slots;      /* per local buffer: slots per thread */
	int *pad;            /* per local buffer: TilePlan.pad */
	/* the pipeline being lowered: stage expression for shared buffers it fills */
	const char *stage;
	int in_pipe;
	int wg_inflight;     /* wgmma in a pipeline: 1 fenced by it, 2 also one group in flight,
			      * 3 issued and committed only (the rotated pipeline waits for it) */
	/* a wgmma gemm lowered last left its group in flight (wait_group 1); 0 after one that
	 * ended with wait_group 0 (fp8 promotion): a TMA pipeline then releases the stage the
	 * iteration read at once, not one iteration later */
	int wg_open;
	/* a pipeline's iteration began with every shared write fenced into the async proxy
	 * before its barrier, and no statement since wrote shared memory: a wgmma needs no
	 * fence and barrier of its own (lw_stmt_synced clears it) */
	int pipe_fenced;
	/* fp8 wgmma promotion (lower_mma.c): the accumulators whose temporaries X_pa_ and
	 * k-block counts X_pk_ the pipeline being lowered declared (one group in flight) */
	int promo[8];
	int npromo;
	/* warp specialization (tilec_options.warp_specialize, lower_kernel.c ws_plan): the
	 * consumer threads (the kernel's) when the TMA pipeline gets a producer warpgroup, else 0;
	 * ws_done once the consumer side was lowered (the vector body) */
	int64_t ws;
	int ws_done;
	/* grouped block order (tilec_options.raster_group, lower_kernel.c): the rows of a group
	 * when bx, by are the remapped tl_bx, tl_by, else 0 */
	int raster;
	/* the persistent schedule (tilec_options.persistent, lower_kernel.c): 1 when each block
	 * loops over the tiles (bx, by are tl_bx, tl_by of the tile); pst: the TMA pipeline whose
	 * barriers are initialized once before the tile loop, its iterations before this tile
	 * counted in pbase (tl_pit_), else NULL */
	int persist;
	const IrStmt *pst;
	const char *pbase;
	/* gemm plans already made in this kernel (the body may be emitted twice) */
	int nplan;
	const IrStmt *plan_st[16];
	GemmPlan plan[16];
	int tmp;             /* counter for unique C names */
	/* rows-of-whole-vectors flags (veccond): the kernel body is emitted twice, with
	 * vector accesses when every flag holds and element by element otherwise */
	const char *flags[32];
	int nflags;
	int scalar;          /* emitting the element-by-element body */
	/* parallel nest being emitted: loop var -> C coordinate expression */
	const IrStmt *par;
	IExpr **parpc;       /* its coordinates in (slot, thread) */
	int64_t parS;        /* its slots per thread */
	int64_t parpad;      /* its points past this first extent are padding (NestPlan.pad), or 0 */
	const char *parrep;  /* its replica index when the loop layout is replicated, else NULL */
	unsigned char *parsync; /* per buffer: replica 0's stores into it go between barriers */
	const NestPlan *parvec; /* its vector stores (vec > 1): their values go to tl_v<k>[tl_r];
				 * its vector loads: read from tl_l<q>[tl_r] */
	const char **staged; /* per buffer: the shared array its reads at indices that are not the
	                      * nest's variables go to (lower_stage.c), "" for registers (a tile
	                      * every thread holds whole), NULL: none */
	unsigned char *stagedrw; /* per buffer: every access of it in the nest goes to staged[] (the
	                      * nest writes it), copied back after the nest */
	unsigned char *nnvar; /* per var id: loop and let variables proven >= 0 (signs()) */
	/* per var id (signs()): a constant largest value (hasmax), or the count X of a
	 * variable running over [0, X) (a block index over its grid extent, a pipeline or
	 * serial loop from 0) */
	unsigned char *hasmax;
	int64_t *vmax;
	const IrExpr **vcount;
	/* shared buffers some thread read / wrote since the last __syncthreads (hazards) */
	unsigned char *shrd, *shwr;
	int64_t static_smem; /* bytes of the static __shared__ arrays emitted (reduce scratch) */
	/* made once per lowering: per buffer, the holders of its elements (lw_heldtab); the
	 * ownership checks of the nests that passed */
	struct Held **heldc;
	OwnMemo *own;
	int nown, capown;
	/* TMA (lower_kernel.c's tma_setup): the pipelines that load with TMA, their mbarriers'
	 * names; the tensor maps (kernel parameters after the sizes) */
	struct TmaPipe { const IrStmt *st; const char *full, *empty; } *tpipe;
	int ntpipe;
	struct TmaMapE { int buf; int64_t box0, box1; int swizzle; const char *name; } *tmap;
	int ntmap;
	/* lw_fragcoords' inverses, by fragment (structurally equal fragments share one) */
	struct FcMemo *fcm;
	int nfcm, capfcm;
} Em;

/*
 * The holders of every element of local buffer buf: for element flat, the threads of its
 * replicas (thr[flat * R + k], k < cnt[flat]), each with a mark (written by a nest). Its size
 * is the fragment's (thread, slot) pairs, not threads x elements.
 */
typedef struct Held {
	int64_t NY, R;
	int32_t *thr, *cnt;
	unsigned char *mark;
} Held;

LNode *lw_add(Em *e, LKind k);
void lw_pop(Em *e);
void lw_barrier(Em *e);
void lw_barrier_all(Em *e);
void lw_async_commit(Em *e);
void lw_async_wait(Em *e, int n);
LNode *lw_comment(Em *e, const char *fmt, ...) TL_PRINTF(2, 3);
LNode *lw_open_if(Em *e, const char *cond, int guard, int divergent);
void lw_open_else(Em *e, LNode *n, const char *text);
LNode *lw_open_for(Em *e, const char *var, const char *lo, const char *end, int64_t trip, int unroll, int hoist);
LNode *lw_open_block(Em *e, const char *text);
LNode *lw_decl(Em *e, int is_const, const char *type, const char *name, int64_t count, const char *init, const char *text);
LMem lw_memof(const IrBuffer *B);
void lw_decl_ix(Em *e, const char *name, const IExpr *x, const char *const *names);
void lw_decl2(Em *e, const char *a, const char *ia, const char *b, const char *ib);
LNode *lw_call(Em *e, LCall cat, const char *fn, const char *args, const char *text);
LNode *lw_assign(Em *e, LMem mem, int buf, int bytes, const char *lhs, const char *rhs);
const char *lw_ctype(DType t);
DType lw_calctype(DType t);
const char *lw_cname(Arena *a, const char *n);
const char *lw_vname(Em *e, const IrVar *v);
char *lw_ixstr(Em *e, const IExpr *x, const char *const *names);
void lw_signs(Em *e);
int lw_smemoff(Em *e, int buf, char *const *idx, Buf *b);
const char *lw_bufptr(Em *e, int buf);
void lw_access(Em *e, Buf *b, int buf, int n, IrExpr *const *ix);
char *lw_exprstr(Em *e, const IrExpr *x);
char *lw_guard(Em *e, const Region *r, int d, const char *cd, int64_t ext);
char *lw_elemguard(Em *e, const IrBuffer *B, int n, IrExpr *const *idx);
Fragment *lw_defaultfrag(Em *e, const int64_t *shape, int n);
IExpr **lw_fragcoords(Em *e, const Fragment *F, int64_t *S);
/* a and b are the same fragment (structurally) */
int lw_fragsame(const Fragment *a, const Fragment *b);
int lw_fragvec(const Fragment *F, IExpr *const *co, int64_t S, int maxv);
int lw_fragvec_ref(const Fragment *F, IExpr *const *co, int64_t S, int maxv);
int lw_fragrun(const Fragment *F, IExpr *const *co, int64_t S, int dim, int maxv);
int lw_fragrun_ref(const Fragment *F, IExpr *const *co, int64_t S, int dim, int maxv);
int lw_contig_access(const IrBuffer *B, int n, IrExpr *const *idx, const IrVar *v, int V);
int lw_plan_nestvec(Em *e, const IrStmt *st, NestPlan *np);
int lw_body_reads(const IrStmt *s, int buf);
int lw_parvload(const Em *e, const IrExpr *x);
extern const char *const lw_slotnames[IEXPR_NVARS];
const char *lw_vtype(int bytes);
void lw_packword(Buf *b, DType t, char *const *vals, int w);
char *lw_unpack(Em *e, DType t, const char *r, int words, int k);
char *lw_conv(Em *e, const char *v, DType from, DType to);
char *lw_valueto(Em *e, const IrExpr *x, DType to);
char *lw_memaddr(Em *e, const Region *r, char *const *cs, int nn);
char *lw_regguard(Em *e, const Region *r, char *const *cs, int nn, int vec);
extern char lw_scalar_only[];
char *lw_veccond(Em *e, Buf *chk, const Region *r, int v);
int lw_stridevec(const Em *e, const IrBuffer *B, int v, const char **why);
int lw_assumed_multiple(const IrKernel *k, const IrVar *sym, int64_t m);
int lw_vecdim(const Em *e, const Region *r, int nn, int v);
char **lw_lanecs(Em *e, char *const *cs, int nn);
int lw_countunit(const IrBuffer *B);
int lw_tilecopy(Em *e, Buf *chk, const IrStmt *st);
int lw_reduce(Em *e, const IrStmt *st);
int lw_wholeregion(const Em *e, const Region *r);
int lw_fill(Em *e, const IrStmt *st);
Held *lw_heldtab(Em *e, int buf);
int64_t lw_held_by(const Held *h, int64_t y, int64_t t);
char *lw_parslot(Em *e, const IrStmt *par, IExpr *const *pc, int buf, int n, IrExpr *const *idx);
int lw_parallel(Em *e, Buf *chk, const IrStmt *st);
int lw_store(Em *e, const IrStmt *st);
/* atomics (lower_atomic.c): the target check (-1 with the error at st), one element at
 * address addr, count consecutive elements (one vector of a copy) */
int lw_atomic_check(Em *e, const IrStmt *st, AtomicOp op, DType t);
void lw_atomic_elem(Em *e, AtomicOp op, const IrBuffer *B, int buf, const char *addr, const char *val);
void lw_atomic_vec(Em *e, AtomicOp op, const IrBuffer *B, int buf, const char *addr, char *const *vals, int count);
int lw_plan_of(Em *e, const IrStmt *st, GemmPlan *p, Err *err);
int lw_gemm(Em *e, const IrStmt *st);
/* fp8 wgmma promotion (lower_mma.c): the k32 blocks after which the wgmma temporary is
 * added into the f32 accumulator; the k-blocks of gemm st if it is an fp8 wgmma, else 0;
 * X[off .. off + count) += X_pa_[0 .. count) */
#define LW_PROMO_KBLOCKS 4
/* the most registers a thread the promotion temporary of a whole accumulator takes; a
 * larger accumulator of several instructions is promoted one instruction at a time
 * (lw_promo_split: the temporary's registers, or 0) */
#define LW_PROMO_TEMP 64
int lw_promo_kblocks(Em *e, const IrStmt *st);
int lw_promo_split(Em *e, const IrStmt *st);
void lw_promote(Em *e, int cbuf, int64_t off, int64_t count);
int lw_promo_piped(const Em *e, int cbuf);
int lw_pipeline(Em *e, Buf *chk, const IrStmt *st);
int lw_ws_producer(Em *e, Buf *chk);
LNode *lw_persist_open(Em *e);
void lw_persist_tile(Em *e, const char *lin);
int lw_copy(Em *e, Buf *chk, const IrStmt *st);
int lw_serial_check(Em *e, const IrStmt *s);
int lw_stmt1(Em *e, Buf *chk, const IrStmt *s);
void lw_sh_stmts(const Em *e, const IrStmt *s, unsigned char *rd, unsigned char *wr, int one);
void lw_sh_clear(Em *e);
/* the lowering state of kernel k before any node is built (its buffers under their C names,
 * signs, shared-memory plan, partition): for lower-kernels and for the planning passes */
int lw_setup(Em *e, Arena *a, const Target *t, const IrKernel *k, Err *err);
const IrStmt *lw_accgemm(const IrStmt *s, int buf);
/* the plans (plan.h): the statement's, or made now */
int lw_part_tiles(Em *e, KernelPart *kp);
IExpr **lw_tilecoords(Em *e, const Fragment *F, int64_t *S, int *pad);
int lw_nopad(Em *e, int buf, const char *what);
char *lw_stage(Em *e, int buf, const char *why);
int lw_slots_open(Em *e, int buf, const char *sv, const char *const *names, int replica0, char **cs);
char *lw_stage_index(Em *e, int buf, char *const *cs);
int lw_nest_stage(Em *e, const IrStmt *par, const Fragment *LF);
void lw_nest_unstage(Em *e);
int lw_stage_vars(const IrStmt *par, int n, IrExpr *const *idx);
void lw_nest_reads_off(const IrKernel *k, const IrStmt *par, unsigned char *want, const IrStmt **store,
		       unsigned char *scat);
int lw_held_whole(const IrKernel *k, const Layout *F, int pad);
int lw_plan_nest(Em *e, const IrStmt *st, NestPlan *np);
const NestPlan *lw_nest(Em *e, const IrStmt *st);
int lw_plan_parsync(Em *e, const IrStmt *st, const Fragment *LF, int64_t S, unsigned char *sync);
int lw_tilevec(Em *e, int buf);
int lw_plan_vector(Em *e, const IrStmt *st, CopyPlan *cp);
int lw_plan_copy(Em *e, const IrStmt *st, CopyPlan *cp);
const CopyPlan *lw_copyplan(Em *e, const IrStmt *st);
CopyInstr lw_tile_instr(const Em *e, const IrStmt *st, int v, int gs, int gd);
void lw_chunknames(Em *e, int nn, char **cs);
const RedPlan *lw_redplan(Em *e, const IrStmt *st);
const char *lw_redident(ReduceOp op, DType t);
int lw_redtype(ReduceOp op, DType src, DType dst, DType *ct);
int lw_plan_pipe(Em *e, const IrStmt *st, PipePlan *pp);
const PipePlan *lw_pipeplan(Em *e, const IrStmt *st);
int lw_isload(const Em *e, const IrStmt *s);
int lw_pipe_loads_into(const Em *e, const IrStmt *st, int buf);
/* what a plan dump's visitor (ir_walk) writes into */
typedef struct PlanDump {
	Buf *b;
	const IrKernel *k;
} PlanDump;
int lw_stmt_synced(Em *e, Buf *chk, const IrStmt *s);
int lw_stmts(Em *e, Buf *chk, const IrStmt *s);
int lw_loopbody(Em *e, Buf *chk, const IrStmt *body);

#endif
