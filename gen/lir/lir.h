/*
 * lir.h: the lowered kernel IR. What a kernel does per thread once every
 * layout decision is made: loops over slots with their trip counts, guards,
 * declarations, stores with their memory and vector width, barriers, async
 * copy groups, MMA instructions, shared buffers at byte offsets. The lowering
 * (gen/lower/lower_*.c) builds it, lir_verify checks it, and the printers of
 * gen/target/ (one C renderer, small CUDA and HIP parts) turn it into text
 * without deciding anything.
 *
 * Expressions are C expression text for now (slot coordinates are index
 * expressions). L_TEXT is one line of C as written (the lowering makes none;
 * a rewrite may). A node is printed at its depth in the tree.
 */
#ifndef TILEC_LIR_H
#define TILEC_LIR_H

#include "iexpr.h"
#include "tl.h"

typedef enum {
	L_TEXT,        /* text: one C statement or line, as written (not made by the lowering) */
	L_COMMENT,     /* text: "// text" */
	L_BLOCK,       /* { // text   body   } */
	L_FOR,         /* for (int var = lo; var < end; var++) body */
	L_IF,          /* if (cond) body [else els] */
	L_DECL,        /* [const] type name[count] [= init]; */
	L_ASSIGN,      /* lhs = rhs; a register, a slot of a local or a let variable */
	L_STORE,       /* lhs = rhs; into shared or global memory (or an atomic fn(lhs, rhs)) */
	L_BARRIER,     /* a barrier (kind) */
	L_CALL,        /* fn(args); a target operation: an MMA, ldmatrix, a fence (cat) */
	L_SMEM_VIEW,   /* a shared buffer: its element type at a byte offset of the dynamic memory */
	L_LOAD,        /* const vtype name = a vector of bytes from memory at addr */
	L_COORDS,      /* tid, lane and warp computed again from the hardware (u.wait.n: warp size) */
	L_ASYNC_COPY,  /* copy bytes from global src to shared dst asynchronously (zeros if !pred) */
	L_ASYNC_COMMIT,/* close the thread's group of async copies */
	L_ASYNC_WAIT,  /* wait until at most n groups are in flight */
	L_KINDS
} LKind;

/* LB_BLOCK: __syncthreads; LB_NAMED: bar.sync 1 of the first count threads (the consumers of a
 * warp-specialized kernel, whose producer warpgroup meets them only at the barrier after the
 * mbarriers' initialization: a block barrier with all set) */
typedef enum { LB_BLOCK, LB_NAMED } LBarrier;
typedef enum { LC_MMA, LC_LDMATRIX, LC_FENCE, LC_MMA_GROUP, LC_MBAR, LC_TMA, LC_OTHER, LC_KINDS } LCall;
typedef enum { LM_GLOBAL, LM_SHARED, LM_LOCAL } LMem;

typedef struct LNode LNode;
typedef struct LList {
	LNode *head, *tail;
} LList;

struct LNode {
	LKind kind;
	LNode *next;
	/* L_TEXT, L_COMMENT: the text; L_BLOCK, L_IF: a comment after the opening (L_IF:
	 * after "} else {"); L_DECL, L_ASSIGN, L_STORE: a comment after the statement */
	const char *text;
	LList body, els;    /* L_BLOCK, L_FOR, L_IF */
	union {
		struct {
			const char *var, *lo, *end;
			int64_t step;    /* var += step (var++ when 1 and not stepped) */
			int stepped;     /* written var += step even when 1 */
			int unroll;      /* #pragma unroll before it */
			int rolled;      /* #pragma unroll 1: kept a loop */
			int pragma_out;  /* the pragma one level out (under a loop without braces) */
			/* text: a comment after the loop's header */
			int nobrace;     /* one statement, no braces */
			int hoist;       /* end evaluated once into var_end_ */
			int64_t trip;    /* constant trip count, or -1 */
			const char *type;  /* var's C type (NULL: int) */
			const char *stepx; /* var += stepx, an expression (NULL: step) */
		} loop;
		struct {
			const char *cond;
			int guard;       /* one statement (and one in else), no braces */
			int divergent;   /* threads of a block may disagree on cond */
		} cond;
		struct {
			const char *type, *name, *init;
			const char *name2, *init2; /* a second declarator of the type, or NULL */
			/* an index expression as the initializer (instead of init): over the
			 * variables ixnames names (slot, thread, ...) */
			const IExpr *ix;
			const char *const *ixnames;
			int is_const;
			int64_t count;   /* array elements, 0 for a scalar */
		} decl;
		struct {
			const char *lhs, *rhs;
			LMem mem;
			int bytes;       /* bytes stored per thread by this statement (vector width) */
			int buf;         /* tile IR buffer id, -1 if none */
			/* L_STORE: an atomic update, fn(lhs, rhs): the device helper (tl_atomic_add_f32,
			 * ...), lhs the element's address, rhs the value (or values of a vector); NULL:
			 * a plain store */
			const char *atomic;
		} set;
		struct {
			LBarrier kind;
			int all;         /* LB_BLOCK that warp specialization keeps a block barrier */
			int64_t count;   /* LB_NAMED: the threads that arrive */
		} bar;
		struct {
			const char *fn, *args;
			LCall cat;
		} call;
		struct {
			const char *type, *name;   /* element C type, buffer name */
			int64_t offset, stage_elems;
			int stages, buf;
			const char *swizzle;       /* "none", "32B", "64B", "128B", "padded", ... */
		} view;
		struct {
			const char *vtype, *name, *addr;
			LMem mem;
			int bytes, buf;
		} load;
		struct {
			int n;
		} wait;
		struct {
			const char *dst, *src, *pred;  /* pred NULL: always in range */
			int bytes;
			int dbuf, sbuf;
		} acp;
	} u;
};

typedef struct LParam {
	const char *type, *name;
	int is_ptr;          /* a tensor: type *__restrict__ name */
} LParam;

/* a TMA tensor map parameter (printed as a "// kernel K: tensor map" line the launchers read):
 * over tensor parameter `tensor` of esize-byte elements, dims (dim0 innermost, dim1) and rows
 * of `rows` elements (size names or integers), boxes of (box0, box1), the swizzle in bytes */
typedef struct LTmap {
	const char *name, *tensor, *dim0, *dim1, *rows;
	const char *dim2;    /* rank 3 (a box of one plane): the outermost dimension; NULL: rank 2 */
	int esize, swizzle;
	int64_t box0, box1;
} LTmap;

typedef struct LKernel LKernel;
struct LKernel {
	LKernel *next;
	const char *name;    /* in the program */
	const char *cname;   /* in the code (a C keyword gets a _) */
	int64_t threads;
	int64_t smem_bytes;  /* dynamic shared memory */
	int persistent;      /* blocks loop over the 2-D grid's tiles (the contract says so) */
	int64_t smem_align;
	int smem_optin;      /* needs cudaFuncAttributeMaxDynamicSharedMemorySize */
	LParam *params;
	int nparam;
	LTmap *tmaps;        /* the last ntmap parameters are these tensor maps */
	int ntmap;
	int warp_size;
	int has_smem;        /* declares the dynamic shared memory (smem_align) */
	/* constant tables the index expressions read (IX_TAB): the exact inverses of layouts
	 * with no closed form, declared static const at the top of the body */
	const ITab *const *tabs;
	int ntab;
	LList checks;        /* declarations before the body (vector-row flags) */
	LList body;          /* shared buffer views, locals, statements */
};

typedef struct LProgram {
	int target;          /* 0 CUDA, 1 HIP */
	const char *arch;
	const char *version; /* of tilec, for the first line */
	LKernel *kernels;
} LProgram;

/* ---- building (lir.c) ---- */
LNode *lir_node(Arena *a, LKind k);
void lir_append(LList *l, LNode *n);
/* the last node of l, or NULL */
LNode *lir_last(const LList *l);

/* ---- checking (verify.c) ----
 * The invariants: a barrier is not under a divergent if; an unrolled loop has a
 * constant trip count; vector stores move 1, 2, 4, 8 or 16 bytes; nodes have the
 * fields their kind needs. 0, or -1 with err naming the kernel and the node. */
int lir_verify(const LProgram *p, Err *err);

/* ---- dumping (dump.c): the --dump=lowered text ---- */
void lir_dump(Buf *b, const LProgram *p);

/* ---- printing (gen/target/c/render_c.c, gen/target/cuda, gen/target/hip) ---- */
typedef struct LDialect {
	const char *name;           /* "cuda", "hip" */
	const char *include;        /* the support header the code includes */
	const char *kernel_decl;    /* before the launch bounds: extern "C" __global__ void */
	const char *barrier;        /* the block barrier statement */
	const char *commit, *wait;  /* async copy group statements (wait: printf with %d) */
	const char *acopy16, *acopy16_zfill; /* 16-byte async copy (dst, src[, pred]) */
	const char *late_tid;       /* the thread index read again at L_COORDS, opaque to the
				     * compiler so that it is not merged with the kernel entry's */
} LDialect;

extern const LDialect lir_cuda, lir_hip;
/* the C of program p in dialect d into out */
void lir_render_c(Buf *out, const LProgram *p, const LDialect *d);
/* an index expression in C, fully parenthesized; names[id] is the C text of variable id */
void lir_c_index(Buf *b, const IExpr *x, const char *const *names);
/* a declaration node's C, without the ';' (ixmark before an index initializer) */
void lir_c_decl(Buf *b, const LNode *n, const char *ixmark);
/* the dialect of p's target */
const LDialect *lir_dialect(const LProgram *p);

#endif
