/*
 * ir.h: the tile IR. Sema turns the checked AST into IrProgram: kernels with
 * parameters, size symbols, buffers (global / shared / local), and a tree of
 * tile statements (copy, gemm, fill, reduce, loops, layout ops) over typed,
 * constant-folded expressions. Layout inference, lowering and emission read
 * it. ir_dump prints a stable text form (`tilec --dump=ir`).
 */
#ifndef IR_H
#define IR_H

#include <stdint.h>

#include "tl.h"

/* ---- element types ---------------------------------------------------- */

#define DTYPES(X) \
	X(DT_NONE, "none", 0) \
	X(DT_BOOL, "bool", 1) \
	X(DT_INT, "int", 8) /* the index / size integer type (64-bit) */ \
	X(DT_I8, "i8", 1) \
	X(DT_U8, "u8", 1) \
	X(DT_I32, "i32", 4) \
	X(DT_F16, "f16", 2) \
	X(DT_BF16, "bf16", 2) \
	X(DT_F32, "f32", 4) \
	X(DT_F64, "f64", 8) \
	X(DT_FP8E4M3, "fp8_e4m3", 1) \
	X(DT_FP8E5M2, "fp8_e5m2", 1)

typedef enum {
#define X(e, s, b) e,
	DTYPES(X)
#undef X
	DT_COUNT
} DType;

const char *dtype_name(DType t);
int dtype_bytes(DType t);
int dtype_is_float(DType t);
int dtype_is_int(DType t); /* DT_INT, i8, u8, i32 */
/* the element type spelled s[0..n), or DT_NONE ("int" and "none" are not spellable) */
DType dtype_lookup(const char *s, int n);

typedef enum { MEM_GLOBAL, MEM_SHARED, MEM_LOCAL } MemScope;
const char *memscope_name(MemScope s);

/* ---- expressions ------------------------------------------------------ */

typedef enum {
	VAR_SIZE,    /* a size symbol (M, N, K): an integer kernel parameter */
	VAR_SCALAR,  /* a scalar kernel parameter */
	VAR_BLOCK,   /* bx, by, bz */
	VAR_LOOP,    /* a serial, pipelined or parallel loop variable */
	VAR_LET,     /* a let variable */
} VarKind;

typedef struct IrVar {
	VarKind kind;
	DType type;
	const char *name; /* unique within its kernel (inlined names get a suffix) */
	int id;           /* index into IrKernel.vars */
	Loc loc;
} IrVar;

#define IR_BINOPS(X) \
	X(BIN_ADD, "+", 9) X(BIN_SUB, "-", 9) X(BIN_MUL, "*", 10) X(BIN_DIV, "/", 10) \
	X(BIN_MOD, "%", 10) X(BIN_SHL, "<<", 8) X(BIN_SHR, ">>", 8) X(BIN_LT, "<", 7) \
	X(BIN_LE, "<=", 7) X(BIN_GT, ">", 7) X(BIN_GE, ">=", 7) X(BIN_EQ, "==", 6) \
	X(BIN_NE, "!=", 6) X(BIN_BAND, "&", 5) X(BIN_BXOR, "^", 4) X(BIN_BOR, "|", 3) \
	X(BIN_LAND, "&&", 2) X(BIN_LOR, "||", 1)

typedef enum {
#define X(e, s, p) e,
	IR_BINOPS(X)
#undef X
	BIN_COUNT
} BinOp;

typedef enum { UN_NEG, UN_NOT, UN_BNOT } UnOp;

/* math functions a kernel may call; cdiv of non-constants stays a call */
#define IR_MATHFNS(X) \
	X(FN_EXP, "exp", 1) X(FN_EXP2, "exp2", 1) X(FN_LOG, "log", 1) X(FN_LOG2, "log2", 1) \
	X(FN_SQRT, "sqrt", 1) X(FN_RSQRT, "rsqrt", 1) X(FN_ABS, "abs", 1) X(FN_TANH, "tanh", 1) \
	X(FN_SIN, "sin", 1) X(FN_COS, "cos", 1) X(FN_MAX, "max", 2) X(FN_MIN, "min", 2) \
	X(FN_CDIV, "cdiv", 2)

typedef enum {
#define X(e, s, n) e,
	IR_MATHFNS(X)
#undef X
	FN_COUNT
} MathFn;

const char *mathfn_name(MathFn f);
int mathfn_arity(MathFn f);
int mathfn_lookup(const char *s, int n); /* -1 if none */

typedef enum {
	IE_INT,    /* u.i (type DT_INT, or an integer element type after a cast fold) */
	IE_FLOAT,  /* u.f */
	IE_BOOL,   /* u.i is 0 or 1 */
	IE_VAR,
	IE_LOAD,   /* buf[idx...] */
	IE_UNARY,
	IE_BINARY,
	IE_SELECT, /* c ? a : b */
	IE_CAST,   /* type(a) */
	IE_CALL,   /* fn(args) */
} IrExprKind;

typedef struct IrExpr IrExpr;
struct IrExpr {
	IrExprKind kind;
	DType type;
	Loc loc;
	union {
		int64_t i;
		double f;
		IrVar *var;
		struct { int buf, n; IrExpr **idx; } load;
		struct { UnOp op; IrExpr *a; } un;
		struct { BinOp op; IrExpr *a, *b; } bin;
		struct { IrExpr *c, *a, *b; } sel;
		struct { IrExpr *a; } cast;
		struct { MathFn fn; int n; IrExpr **args; } call;
	} u;
};

/* ---- regions, layouts ---------------------------------------------- */

/* a rectangular part of a buffer: per dim an offset and a constant extent */
typedef struct Region {
	int buf;
	int ndim;
	IrExpr **off;
	int64_t *ext;
} Region;

typedef enum { LAYOUT_CUTE, LAYOUT_SWIZZLE, LAYOUT_PADDED, LAYOUT_LINEAR, LAYOUT_MMA } LayoutKind;

/* builtin MMA instruction shapes a layout literal may name */
#define IR_MMAS(X) \
	X(MMA_M16N8K16, "m16n8k16") X(MMA_M16N8K8, "m16n8k8") X(MMA_M16N8K32, "m16n8k32") \
	X(MMA_MFMA16X16X16, "mfma16x16x16") X(MMA_WMMA16X16X16, "wmma16x16x16")

typedef enum {
#define X(e, s) e,
	IR_MMAS(X)
#undef X
	MMA_COUNT
} MmaKind;

const char *mma_name(MmaKind m);

typedef struct LayoutOpt {
	const char *name;
	int64_t value;
} LayoutOpt;

typedef struct LayoutLit {
	LayoutKind kind;
	Loc loc;
	const char *text;  /* CUTE: the CuTe string, checked for structure */
	int64_t size;      /* CUTE: the product of its shape (the elements it maps) */
	int bytes;         /* SWIZZLE: 32, 64 or 128 */
	MmaKind mma;       /* MMA */
	char operand;      /* MMA: 'a', 'b' or 'c' */
	int nopt;          /* MMA: options such as warps = 4 */
	LayoutOpt *opt;
} LayoutLit;

/* a list of integer lists, e.g. warp_bases = [[0,2],[2,0]] */
typedef struct IntLists {
	int n;
	int *len;
	int64_t **v;
} IntLists;

/* ---- statements ----------------------------------------------------- */

#define IR_STMTS(X) \
	X(S_COPY, "copy") X(S_GEMM, "gemm") X(S_FILL, "fill") X(S_REDUCE, "reduce") \
	X(S_PARALLEL, "parallel") X(S_STORE, "store") X(S_LET, "let") X(S_SET, "set") X(S_FOR, "for") \
	X(S_PIPELINE, "pipeline") X(S_IF, "if") X(S_ASSUME, "assume") \
	X(S_ANNOTATE_LAYOUT, "annotate_layout") X(S_REQUIRE_LAYOUT, "require_layout") \
	X(S_RELEASE_LAYOUT, "release_layout") X(S_DUMP_LAYOUT, "dump_layout") \
	X(S_ASSERT_SAME_LAYOUT, "assert_same_layout") \
	X(S_REQUIRE_WMMA_LAYOUT, "require_amd_wmma_layout") X(S_BARRIER, "barrier")

typedef enum {
#define X(e, s) e,
	IR_STMTS(X)
#undef X
	S_COUNT
} IrStmtKind;

typedef enum { RED_SUM, RED_MAX, RED_MIN, RED_ABSMAX } ReduceOp;
const char *reduceop_name(ReduceOp op);

/* an atomic read-modify-write of a store or of a copy's stores: AT_NONE (a plain store),
 * atomic_add / atomic_max / atomic_min, copy(..., op = add|max|min) */
typedef enum { AT_NONE, AT_ADD, AT_MAX, AT_MIN } AtomicOp;
const char *atomicop_name(AtomicOp op); /* "add", "max", "min" ("none") */

typedef struct IrStmt IrStmt;
struct IrStmt {
	IrStmtKind kind;
	Loc loc;
	IrStmt *next; /* statements of a body are a list */
	int id;       /* numbered in source order by infer.c (0: not yet) */
	/* set by layout inference: the loop layout (a Fragment over the nest's
	 * iteration space) of a PARALLEL nest, and of the element loop of a COPY
	 * or FILL that runs as a parallel nest */
	struct Layout *loop_layout;
	/* set by the plan-gemms pass: the GEMM's plan (gen/lower/gemm_plan.h), which shared
	 * memory planning and the lowering use; NULL: they plan it themselves */
	struct GemmPlan *gemm_plan;
	/* set by the planning passes (gen/lower/plan.h): a parallel nest's partition
	 * (plan-partitions), a copy's widths and instruction (plan-vectors, plan-copies), a
	 * reduce's plan (plan-reduces), a pipeline's schedule (plan-pipelines); NULL: the
	 * lowering plans it itself */
	struct NestPlan *nest_plan;
	struct CopyPlan *copy_plan;
	struct RedPlan *red_plan;
	struct PipePlan *pipe_plan;
	/* S_COPY between two whole local tiles: a layout conversion inserted by
	 * layout control (convert.c) at a release_layout or a require_layout;
	 * the convert-layouts pass lowers it (in registers, or through a shared
	 * scratch buffer with S_BARRIER between the copies) */
	int convert;
	/* a copy of a conversion into a buffer with late_address (HIP): compute
	 * the lane/warp coordinates of its addresses at this statement */
	int late_address;
	/* a comment the lowering puts before the statement's code: a pass's decision about it and
	 * why (stage-epilogues), or NULL */
	const char *note;
	union {
		/* atomic: the destination's elements are combined with the source's (op = add|max|min,
		 * a local source into global or shared memory); layout: the copy's loop layout the
		 * program gives (copy(..., layout = cute("...")), a copy between a local tile and
		 * memory), or NULL */
		struct { Region src, dst; AtomicOp atomic; struct LayoutLit *layout; } copy;
		struct { Region a, b, c; int trans_a, trans_b, clear, policy; } gemm; /* policy: WarpPolicy */
		struct { Region dst; IrExpr *value; } fill;
		struct { int src, dst; ReduceOp op; int dim, clear; } reduce;
		/* layout: the loop layout the program gives (parallel(..., layout = cute("..."))),
		 * or NULL: inference chooses */
		struct { int n; IrVar **vars; int64_t *ext; IrStmt *body; struct LayoutLit *layout; } par;
		/* atomic: atomic_add/max/min(buf[idx], value) into global or shared memory */
		struct { int buf, n; IrExpr **idx; IrExpr *value; AtomicOp atomic; } store;
		struct { IrVar *var; IrExpr *value; } let; /* LET and SET (assign a let var) */
		/* FOR: var in [lo, lo + extent) */
		struct { IrVar *var; IrExpr *lo, *extent; IrStmt *body; } loop;
		struct { IrVar *var; IrExpr *extent; int stages; IrStmt *body; } pipe;
		struct { IrExpr *cond; IrStmt *then, *els; } cond;
		struct { IrExpr *cond; } assume;
		/* ANNOTATE / REQUIRE / RELEASE / DUMP / ASSERT_SAME (other >= 0: vs a buffer) */
		struct {
			int buf;
			LayoutLit *lit;  /* NULL for release/dump, or assert against a buffer */
			int other;       /* ASSERT_SAME_LAYOUT against a buffer; else -1 */
			int pin, late_address_compute;
		} layout;
		struct {
			int buf, version, transposed;
			IntLists warp_bases, reg_bases;
			int ninstr;
			int64_t instr_shape[3];
		} wmma;
	} u;
};

/* the loop layout statement s's program gives (a parallel nest's or a copy's), or NULL */
static inline struct LayoutLit *
ir_given_loop(const IrStmt *s)
{
	return s->kind == S_PARALLEL ? s->u.par.layout : s->kind == S_COPY ? s->u.copy.layout : NULL;
}

/* ---- kernels -------------------------------------------------------- */

enum { IR_MAXDIM = 8 }; /* buffers have 1 to IR_MAXDIM dimensions */

/* a dimension of a buffer: a constant, or a size symbol (global tensors) */
typedef struct IrDim {
	int64_t c;
	IrVar *sym; /* non-NULL: the size symbol */
} IrDim;

typedef struct IrBuffer {
	const char *name; /* unique within the kernel */
	MemScope scope;
	DType dtype;
	int ndim;
	IrDim *dims;
	/* a global tensor's strides in elements, one per dim (a constant >= 1, or a
	 * size symbol: a stride symbol), element (i0, i1, ...) at i0*s0 + i1*s1 + ...;
	 * NULL: dense row-major (every buffer but a strides(...) parameter that is
	 * not provably dense) */
	IrDim *strides;
	int param;        /* index in params for a global tensor, else -1 */
	Loc loc;
	/* set by layout inference (infer.c): a Fragment for a local buffer, the
	 * shared-memory layout (swizzle) for a shared buffer, NULL for global */
	struct Layout *layout;
	/* require_layout(x, ..., late_address_compute = true) on a HIP target
	 * (convert.c): the emitter recomputes the lane and warp coordinates of
	 * this buffer's addresses at each use instead of hoisting them */
	int late_address;
} IrBuffer;

typedef struct IrParam {
	const char *name;
	int is_tensor;
	DType dtype;
	int buf;     /* tensor: buffer id */
	IrVar *var;  /* scalar: its variable */
	Loc loc;
} IrParam;

typedef struct IrKernel {
	const char *name;
	Loc loc;
	int nparam;
	IrParam *params;
	int nsize;
	IrVar **sizes;      /* size symbols, first-appearance order */
	int ngrid;
	IrExpr *grid[3];
	int64_t threads;
	int nbuf, capbuf;
	IrBuffer *bufs;
	int nvar, capvar;
	IrVar **vars;
	IrStmt *body;
	int nassume;
	IrExpr **assumes;   /* the conditions of every assume(...), in source order */
	struct SmemPlan *smem; /* the pass plan-shared-memory's plan (lower.h), or NULL */
	struct KernelPart *part; /* the pass plan-partitions' register tiles (plan.h), or NULL */
	int tma;                 /* tilec_options.tma: pipelines may load with TMA (sm_90a) */
	int ws;                  /* tilec_options.warp_specialize: a TMA pipeline's producer warpgroup */
	int raster;              /* tilec_options.raster_group: blocks in groups of this many rows */
	int persist;             /* tilec_options.persistent: blocks loop over the 2-D grid's tiles */
	int epilogue;            /* tilec_options.epilogue: -1 auto, 0 direct, 1 through shared memory */
	struct IrKernel *next;
	/* names of vars and buffers, for making new names unique (open addressing);
	 * next: the first suffix to try when the name is taken again */
	struct IrName { const char *s; int next; } *names;
	int nnames, capnames;
} IrKernel;

typedef struct IrProgram {
	IrKernel *kernels; /* source order */
	int nkernel;
	int target;        /* tilec_target of the compile options: 0 cuda, 1 hip */
	const char *arch;  /* sm_80, sm_90, sm_90a, gfx90a, gfx942, gfx1100 (defaults filled in) */
	int tma;           /* tilec_options.tma, copied to every kernel */
	int ws;            /* tilec_options.warp_specialize, copied to every kernel */
	int raster;        /* tilec_options.raster_group, copied to every kernel */
	int persist;       /* tilec_options.persistent, copied to every kernel */
	int epilogue;      /* tilec_options.epilogue, copied to every kernel */
} IrProgram;

/* ---- constructors (all memory from the arena) -------------------------- */

IrExpr *ir_int(Arena *a, Loc loc, int64_t v);
IrExpr *ir_float(Arena *a, Loc loc, DType t, double v);
IrExpr *ir_bool(Arena *a, Loc loc, int v);
IrExpr *ir_var(Arena *a, Loc loc, IrVar *v);
IrExpr *ir_unary(Arena *a, Loc loc, DType t, UnOp op, IrExpr *x);
IrExpr *ir_binary(Arena *a, Loc loc, DType t, BinOp op, IrExpr *x, IrExpr *y);
IrExpr *ir_select(Arena *a, Loc loc, IrExpr *c, IrExpr *x, IrExpr *y);
IrExpr *ir_cast(Arena *a, Loc loc, DType t, IrExpr *x);
IrExpr *ir_load(Arena *a, Loc loc, DType t, int buf, int n, IrExpr **idx);
IrExpr *ir_call(Arena *a, Loc loc, DType t, MathFn fn, int n, IrExpr **args);
IrStmt *ir_stmt(Arena *a, IrStmtKind k, Loc loc);
/* a deep copy of an expression tree (vars are shared, not copied); NULL on OOM */
IrExpr *ir_expr_copy(Arena *a, const IrExpr *e);

/* a new variable in k with a name unique in k (name, name_1, name_2, ...); NULL on OOM */
IrVar *ir_kernel_var(Arena *a, IrKernel *k, VarKind kind, DType t, const char *name, Loc loc);
/* a new buffer in k (name made unique likewise); returns its id, -1 on OOM */
int ir_kernel_buffer(Arena *a, IrKernel *k, const char *name, MemScope s, DType t, int ndim,
		     IrDim *dims, Loc loc);

/* the region of the whole of buffer buf (offsets 0, its constant dims as extents) */
Region ir_region_whole(Arena *a, const IrKernel *k, int buf, Loc loc);

/* ---- queries ------------------------------------------------------- */

/* does kernel k have a tensor with strides(...) that are not the dense ones? the first
 * such buffer's id, or -1 */
int ir_strided_buffer(const IrKernel *k);
/* f on every statement of list s and of the bodies under it (parallel, pipeline, for, if:
 * then, else), each before its bodies, in source order; the first non-zero return of f
 * stops the walk and is returned */
typedef int (*IrVisit)(IrStmt *s, void *ctx);
int ir_walk(IrStmt *s, IrVisit f, void *ctx);

/* the buffers (of any scope) statement s reads and writes: rd[b], wr[b] set to 1 (arrays of
 * k->nbuf), with what s nests; the next statements too unless one. Index and extent
 * expressions are reads; a gemm's accumulator, a reduce's destination without clear and an
 * atomic copy's or store's destination are read and written */
void ir_expr_bufs(const IrExpr *x, unsigned char *rd);
void ir_stmt_bufs(const IrKernel *k, const IrStmt *s, int one, unsigned char *rd, unsigned char *wr);
int ir_is_const(const IrExpr *e, int64_t *v); /* an integer constant? */
int ir_expr_equal(const IrExpr *x, const IrExpr *y); /* structurally equal? */
const char *binop_name(BinOp op);

/*
 * Check the IR's invariants (ids in range, region and index ranks, positive
 * extents, typed expressions, vars registered in their kernel, a well-formed
 * header). Passes that rewrite the IR call it after themselves. 0, or -1 with
 * a message naming the kernel and the statement.
 */
int ir_verify(const IrProgram *p, Err *e);

/* ---- dump ------------------------------------------------------------- */

void ir_dump_expr(Buf *b, const IrKernel *k, const IrExpr *e);
void ir_dump_layout(Buf *b, const LayoutLit *l);
void ir_dump_kernel(Buf *b, const IrKernel *k);
void ir_dump(Buf *b, const IrProgram *p);

/* integer evaluation of index expressions (ir.c) */
typedef int (*IrVarValue)(void *ctx, const IrVar *v, int64_t *out);
int ir_eval_int(const IrExpr *e, IrVarValue var, void *ctx, int64_t *out);

#endif
