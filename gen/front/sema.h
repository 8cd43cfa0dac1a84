/*
 * sema.h: semantic checks, AST -> tile IR. sema_program is the entry point;
 * the rest is shared by sema.c (declarations, statements, tile ops, helper
 * inlining), sema_expr.c (symbols, expressions, constant folding) and
 * sema_layout.c (layout literals and the layout statements).
 */
#ifndef SEMA_H
#define SEMA_H

#include "ast.h"
#include "ir.h"

/* a -D NAME=VALUE override: replaces the const NAME, or defines it */
typedef struct SemaDefine {
	const char *name;
	int is_float;
	int64_t i;
	double f;
} SemaDefine;

/*
 * Check the top-level list and build its IR. Every error of the pass is
 * reported in d; returns NULL if there was any (or on out-of-memory).
 * file names the input for errors without a line ("no kernel in input").
 */
IrProgram *sema_program(Arena *a, Diags *d, const Node *top, const SemaDefine *defs, int ndefs,
			 const char *file);

/*
 * Check the structure of a CuTe layout string: `shape:stride` with congruent
 * integer tuples, optionally composed with a swizzle `Sw<B,M,S> o [off o] L`.
 * Returns 0 with the product of the shape's entries in *size (if not NULL;
 * -1 when it passes 2^62), or -1 with a message.
 */
int sema_check_cute(const char *s, size_t len, char *msg, size_t msgsz, int64_t *size);

/* ---- internal: shared by the sema*.c files ----------------------------- */

typedef enum { SYM_CONST, SYM_FUNC, SYM_KERNEL, SYM_BUF, SYM_VAR, SYM_EXPR } SymKind;

typedef struct Sym Sym;
struct Sym {
	SymKind kind;
	SymKind declkind; /* the kind it was declared as (kind changes when poisoned) */
	const char *name;
	Loc loc;
	int level;       /* 0: global */
	Sym *shadow;     /* the symbol of the same name this one hides */
	Sym *nextinlevel;
	int state;       /* SYM_CONST: 0 not evaluated, 1 evaluating, 2 done; SYM_FUNC: inlined */
	int errs;        /* SYM_FUNC: inlining it reported errors */
	const Node *node;
	union {
		IrExpr *val;     /* CONST: its value; EXPR: the bound argument */
		int buf;         /* BUF */
		IrVar *var;      /* VAR */
	} u;
};

typedef struct Sema {
	Arena *a;
	Diags *d;
	/* name -> innermost Sym, open addressing; value NULL once popped */
	const char **keys;
	Sym **vals;
	int nkeys, capkeys;
	Sym **levels;       /* per scope level, the symbols declared there */
	int level, caplevels;
	int base;           /* lookups skip levels in [1, base): the caller of a helper */
	IrKernel *k;
	int in_par;         /* inside a parallel nest */
	int in_loop;        /* inside any loop */
	int in_grid;        /* checking grid(...): block indices are not defined yet */
	int depth;          /* block nesting, counting inlined helpers' blocks */
	int nsuggest;       /* suggestions made (bounded: each scans the symbol table) */
	const Node *inl[64];/* helpers being inlined, outermost first */
	int ninl;
	Loc inl_loc;        /* the outermost helper call being inlined */
	long ninlstmt;      /* statements inlining created in this kernel */
	int inl_over;       /* the limit SEMA_MAXINLINE was hit (reported once) */
	const SemaDefine *defs;
	int ndefs;
} Sema;

/* the statements helper inlining may create in one kernel (docs/language.md) */
#define SEMA_MAXINLINE 16384
/* tiles no target can hold, refused when declared: a shared buffer past the
 * largest shared memory (sm_90: 227 KB; the target's own limit is checked
 * later), a local tile whose elements spread over every thread still pass
 * the 512 KiB of local memory a CUDA thread may have (registers spill there) */
#define SEMA_MAX_SHARED 232448
/* constant region offsets into tensors of run-time size: within [-2^62, 2^62] */
#define SEMA_MAX_OFFSET ((int64_t)1 << 62)
#define SEMA_MAX_LOCAL_BYTES (512 * 1024)

/* irrange.c: overflow of a kernel's integer arithmetic over its loop ranges */
int sema_check_ranges(Arena *a, Diags *d, const IrKernel *k);

Sym *sema_lookup(Sema *S, const char *name);
/* a name whose declaration failed: uses of it report nothing more */
#define SYM_POISONED(s) ((s)->kind == SYM_EXPR && !(s)->u.val)
Sym *sema_declare(Sema *S, SymKind kind, const char *name, Loc loc);
void sema_push(Sema *S);
void sema_pop(Sema *S);
int sema_builtin_name(const char *name); /* reserved: element types, ops, math, bx/by/bz */
/*
 * " (did you mean 'x'?)" for the visible name (of the kinds in the mask
 * 1 << SymKind, or among extra[0..nextra)) closest to name, or "".
 */
const char *sema_suggest(Sema *S, const char *name, unsigned kinds, const char *const *extra,
			 int nextra);
#define SUGGEST_VALUES ((1u << SYM_CONST) | (1u << SYM_VAR) | (1u << SYM_EXPR))
#define SUGGEST_BUFFERS (1u << SYM_BUF)
extern const char *const sema_op_names[];     /* copy, gemm, ..., the layout statements */
extern const int sema_nop_names;

IrExpr *sx_expr(Sema *S, const Node *n);
/* an expression converted to type t (implicit numeric conversion), or NULL */
IrExpr *sx_convert(Sema *S, IrExpr *e, DType t, Loc loc, const char *what);
/* an integer-typed expression; what names it in errors */
IrExpr *sx_int(Sema *S, const Node *n, const char *what);
/* a bool-typed expression */
IrExpr *sx_bool(Sema *S, const Node *n, const char *what);
/* an integer constant; 0, or -1 after reporting */
int sx_const_int(Sema *S, const Node *n, const char *what, int64_t *v);
/* the value of a global const (evaluated on first use), NULL after an error */
IrExpr *sx_const_value(Sema *S, Sym *s);
/* build and fold a binary integer expression (used to compute offsets) */
IrExpr *sx_binary(Sema *S, Loc loc, BinOp op, IrExpr *x, IrExpr *y);
/* is hi - lo a constant? (linear forms over the same atoms) */
int sx_const_diff(const IrExpr *hi, const IrExpr *lo, int64_t *v);
/*
 * Does e use only sizes, scalar parameters and constants (no buffer reads,
 * loop, let or block variables)? If not, the first offending part in *what.
 */
int sx_is_header_expr(const IrExpr *e, const char **what);
/* the expression as infix text (for messages) */
const char *sx_text(Sema *S, const IrExpr *e);

/* sema_ops.c: the tile operations; each returns its statement, or NULL after reporting */
typedef struct Param {
	const char *name;
	int required;
} Param;

/* match call args to ps[0..np) (positional, then by name); -1 after reporting */
int so_getargs(Sema *S, const Node *call, const Param *ps, int np, const Node **out);
/* a constant bool argument (dflt when absent); -1 after reporting */
int so_boolarg(Sema *S, const char *fn, const char *name, const Node *n, int dflt);
/* "shared f16[128, 32]" */
const char *so_bufshape(Sema *S, const IrBuffer *b);
IrStmt *so_copy(Sema *S, const Node *call);
IrStmt *so_gemm(Sema *S, const Node *call);
IrStmt *so_fill(Sema *S, const Node *call, int clear);
IrStmt *so_reduce(Sema *S, const Node *call);
IrStmt *so_assume(Sema *S, const Node *call);
IrStmt *so_atomic(Sema *S, const Node *call, AtomicOp op);

/* sema_layout.c: the layout statements; returns 0, -1 after reporting */
/* parallel(..., layout = ...): the loop layout literal over npts points; NULL after reporting */
LayoutLit *sl_loop_layout(Sema *S, const Node *n, int64_t npts);
int sl_layout_stmt(Sema *S, const Node *call, IrStmt **out);
int sl_is_layout_stmt(const char *name);

#endif
