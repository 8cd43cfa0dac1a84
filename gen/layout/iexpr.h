/*
 * iexpr.h: integer index expressions for the layout core. Trees over the
 * input placeholders _i, _j, ... (ids 0..15) and _rep (id 16), with floor
 * division/modulo, bitwise ops, min/max and select; a deterministic
 * simplifier, a TVMScript-style printer, a parser, interval bounds, and a
 * compiled flat program that evaluates an expression over many points fast.
 */
#ifndef IEXPR_H
#define IEXPR_H

#include "tl.h"

#define IEXPR_MAXIN 16          /* input placeholders _i .. _x */
#define IEXPR_REP 16            /* var id of _rep */
#define IEXPR_NVARS 17

typedef enum {
	IX_CONST, IX_VAR,
	IX_ADD, IX_SUB, IX_MUL, IX_DIV, IX_MOD,     /* DIV/MOD: floor semantics */
	IX_XOR, IX_AND, IX_OR, IX_SHL, IX_SHR,
	IX_MIN, IX_MAX,
	IX_LT, IX_LE, IX_EQ, IX_NE,                 /* 1 or 0 */
	IX_SELECT,                                  /* a ? b : c (a != 0) */
	IX_TAB                                      /* tab->v[a]: an entry of a constant table */
} IExprKind;

/* A constant table of integers, read by IX_TAB nodes: the lowering's exact inverse of a
 * layout that has no closed form (gen/lower/plan_partition.c). The emitted code declares
 * it by name; an index outside [0, n) is an error of evaluation. */
typedef struct ITab {
	const char *name;
	int64_t n;
	const int32_t *v;
	int64_t lo, hi;         /* the least and the largest entry */
} ITab;

typedef struct IExpr IExpr;
struct IExpr {
	IExprKind k;
	int64_t v;              /* IX_CONST: value; IX_VAR: var id */
	IExpr *a, *b, *c;       /* IX_TAB: a is the index, b and c are NULL */
	const ITab *tab;        /* IX_TAB only */
};

/* Builders fold constants and apply local identities (x+0, x*1, x%1, ...).
 * They never fail except on arena exhaustion (NULL). */
IExpr *iexpr_const(Arena *A, int64_t v);
IExpr *iexpr_var(Arena *A, int id);
IExpr *iexpr_bin(Arena *A, IExprKind k, IExpr *a, IExpr *b);
IExpr *iexpr_select(Arena *A, IExpr *cond, IExpr *t, IExpr *f);
/* tab->v[index] (folded when index is a constant inside the table) */
IExpr *iexpr_tab(Arena *A, const ITab *tab, IExpr *index);
#define iexpr_add(A, x, y) iexpr_bin(A, IX_ADD, x, y)
#define iexpr_sub(A, x, y) iexpr_bin(A, IX_SUB, x, y)
#define iexpr_mul(A, x, y) iexpr_bin(A, IX_MUL, x, y)
#define iexpr_div(A, x, y) iexpr_bin(A, IX_DIV, x, y)
#define iexpr_mod(A, x, y) iexpr_bin(A, IX_MOD, x, y)
IExpr *iexpr_addc(Arena *A, IExpr *x, int64_t c);
IExpr *iexpr_mulc(Arena *A, IExpr *x, int64_t c);
IExpr *iexpr_divc(Arena *A, IExpr *x, int64_t c);
IExpr *iexpr_modc(Arena *A, IExpr *x, int64_t c);

/* Variable extents for simplification and bounds: ext[id] > 0 means the var
 * ranges over [0, ext[id]); 0 means unknown. */
typedef struct IDom {
	int64_t ext[IEXPR_NVARS];
} IDom;

/* Simplify under a domain (dom may be NULL): rebuilds bottom-up with the
 * builders, then drops x % n and folds x // n to 0 where bounds allow. */
IExpr *iexpr_simplify(Arena *A, IExpr *e, const IDom *dom);
/* Replace var id by sub[id] where sub[id] != NULL, then simplify (dom may be NULL). */
IExpr *iexpr_subst(Arena *A, IExpr *e, IExpr *const sub[IEXPR_NVARS], const IDom *dom);

/* Interval bounds under dom: 0 and [*lo, *hi], or -1 if unbounded/unknown. */
int iexpr_bounds(const IExpr *e, const IDom *dom, int64_t *lo, int64_t *hi);
/* Evaluate at a point (vals indexed by var id): 0, or -1 with a message
 * (division by zero, a table index out of range). */
int iexpr_eval(const IExpr *e, const int64_t *vals, int64_t *out, Err *err);
/* Bit mask of var ids used. */
unsigned iexpr_vars(const IExpr *e);
int iexpr_same(const IExpr *a, const IExpr *b);   /* structural equality */
int iexpr_isconst(const IExpr *e, int64_t *v);

/* Printed form, TVMScript precedence: `_i % 8 * 16 + _j // 8`, bitwise ops as
 * Python operators, `T.min(a, b)`, `T.max(a, b)`, `T.Select(c, a, b)`, a table entry as
 * `name[index]` (not parsed back). */
void iexpr_print(Buf *b, const IExpr *e);
char *iexpr_str(Arena *A, const IExpr *e);
const char *iexpr_varname(int id);      /* "_i", ..., "_rep" */

/* Parse the printed form (also accepts min/max/select without `T.`).
 * Placeholders beyond nvars inputs, or _rep when !allow_rep, are errors. */
IExpr *iexpr_parse(Arena *A, const char *s, int nvars, int allow_rep, Err *err);

/* ---- compiled programs: batch evaluation over many points ------------- */

#define IPROG_BATCH 256

typedef struct IProg IProg;
/* Compile several expressions into one program (malloc'd; free with iprog_free). */
IProg *iprog_compile(IExpr *const *es, int n, Err *err);
void iprog_free(IProg *p);
/* Evaluate for npts <= IPROG_BATCH points: vars[id] points at npts values
 * (NULL for unused vars); out[k] is set to npts values of expression k, in
 * storage owned by the program (or an input array) and valid until the next
 * run. Returns 0, or -1 on division by zero. */
int iprog_run(IProg *p, const int64_t *const *vars, int npts, const int64_t **out);

#endif
