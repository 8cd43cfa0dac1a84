/*
 * emit_cuda.c: CUDA C for a kernel whose layouts are known (lower.h). Local
 * buffers and parallel nests are partitioned per thread through the fragment
 * inverse (closed-form index expressions in slot and thread), copies between
 * registers and memory are vectorized up to 16 bytes where the fragment holds
 * contiguous aligned runs, global->shared copies use cp.async (16 bytes) and
 * a pipeline(n, stages = k) becomes a k-stage software pipeline; gemm is
 * ldmatrix + mma.sync over the gemm plan. Edges are guarded unless assume()
 * proves divisibility. Code includes "tilec_cuda.h".
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "layout_cute.h"
#include "lower.h"
#include "numeric.h"

typedef struct Em {
	Arena *a;
	const Target *t;
	const IrKernel *k;
	Buf *o;
	int ind;
	Err *err;
	SmemPlan sp;
	Layout **frag;       /* per buffer: the Fragment of a local buffer */
	IExpr ***coord;      /* per local buffer: coords (x..., rep) in slot (_i) and thread (_j) */
	int64_t *slots;      /* per local buffer: slots per thread */
	/* the pipeline being lowered: stage expression for shared buffers it fills */
	const char *stage;
	int in_pipe;
	int wg_inflight;     /* wgmma in a pipeline: 1 fenced by it, 2 also one group in flight */
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
	const char *parrep;  /* its replica index when the loop layout is replicated, else NULL */
	unsigned char *parsync; /* per buffer: replica 0's stores into it go between barriers */
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
} Em;

static void
line(Em *e, const char *fmt, ...) TL_PRINTF(2, 3);

static void
line(Em *e, const char *fmt, ...)
{
	va_list ap;
	int i;

	for (i = 0; i < e->ind; i++)
		buf_putc(e->o, '\t');
	va_start(ap, fmt);
	buf_vprintf(e->o, fmt, ap);
	va_end(ap);
	buf_putc(e->o, '\n');
}

static const char *
ctype(DType t)
{
	switch (t) {
	case DT_F16: return "tl_half_t";
	case DT_BF16: return "tl_bf16_t";
	case DT_F32: return "float";
	case DT_F64: return "double";
	case DT_I32: return "int";
	case DT_INT: return "long long";
	case DT_I8: return "signed char";
	case DT_U8: case DT_FP8E4M3: case DT_FP8E5M2: return "unsigned char";
	case DT_BOOL: return "bool";
	default: return "void";
	}
}

/* the arithmetic type a value of t computes in */
static DType
calctype(DType t)
{
	return t == DT_F16 || t == DT_BF16 || t == DT_FP8E4M3 || t == DT_FP8E5M2 ? DT_F32 : t;
}

/* ---- names: user names that would clash with generated ones get a '_' ----------- */

static const char *const reserved[] = {
	/* names the generated code declares (or spell them tl_...: check_emit_cuda's
	 * generated_names finds every identifier of the emitted code that is not a name of the
	 * kernel's IR and that cname() would keep) */
	"s", "g", "r", "q", "c", "it", "tid", "lane", "warp", "kk", "mi", "ni", "nj", "st", "wm",
	"wn", "wgm", "wgn", "main", "af", "bf", "t4", "da", "db",
	/* C, C++ and CUDA words, math functions the code calls */
	"auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete",
	"do", "double", "else", "enum", "explicit", "extern", "false", "float", "for", "friend", "goto",
	"if", "inline", "int", "long", "mutable", "namespace", "new", "operator", "private",
	"protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
	"switch", "template", "this", "throw", "true", "try", "typedef", "typename", "union",
	"unsigned", "using", "virtual", "void", "volatile", "while", "and", "or", "not", "xor", "asm",
	"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min", "max", "abs", "fabs",
	"fabsf", "fmax", "fmaxf", "fmin", "fminf", "expf", "exp2f", "logf", "log2f", "sqrtf", "rsqrtf",
	"tanhf", "sinf", "cosf", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos",
	"uint4", "uint2", "make_uint4", "make_uint2", "half", "INFINITY", "NAN",
};

/* 1 if the C name of user name n is n itself: not a reserved word, not c<digits>, not
 * starting with "tl" or "__" (the CUDA and HIP built-ins), not ending in '_' */
static int
cname_kept(const char *n)
{
	size_t i, l = strlen(n);

	if (l == 0 || n[l - 1] == '_' || !strncmp(n, "tl", 2) || !strncmp(n, "__", 2))
		return 0;
	if (n[0] == 'c' && l > 1 && strspn(n + 1, "0123456789") == l - 1)
		return 0;
	for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		if (!strcmp(n, reserved[i]))
			return 0;
	return 1;
}

/* the C name of a user name: the names cname_kept() refuses get a '_' appended
 * (injective: kept names never end in '_'); names the code derives from a C name X
 * end in '_' too (X_end_, X_n_, X_next_), so they are no user's */
static const char *
cname(Arena *a, const char *n)
{
	return cname_kept(n) ? n : arena_printf(a, "%s_", n);
}

static const char *
vname(Em *e, const IrVar *v)
{
	return cname(e->a, v->name);
}

/* ---- index expressions as C ------------------------------------------------ */

/*
 * Is C text s an atom (an identifier, a number, a call or index of one, a
 * cast of one, or wholly in one pair of parentheses)? Text substituted into
 * another expression is parenthesized unless it is, so that no composition
 * loses precedence (`bx * cdiv(N, 7)`, a region offset `o + r` times a stride).
 */
static int
atomic(const char *s)
{
	int depth = 0;
	const char *p;

	if (!*s)
		return 0;
	if (s[0] == '(') {
		/* one group when the first '(' closes at the last character */
		for (p = s; *p; p++) {
			depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
			if (depth == 0)
				break;
		}
		if (*p && !p[1])
			return 1;
		if (!strncmp(s, "(int)", 5) || !strncmp(s, "(long long)", 11))
			return atomic(s + (s[1] == 'i' ? 5 : 11));
	}
	depth = 0;
	for (p = s; *p; p++) {
		if (*p == '(' || *p == '[')
			depth++;
		else if (*p == ')' || *p == ']')
			depth--;
		else if (depth == 0 && !(isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
			return 0;
	}
	return 1;
}

static void
putatom(Buf *b, const char *s)
{
	if (atomic(s))
		buf_puts(b, s);
	else
		buf_printf(b, "(%s)", s);
}

/* fully parenthesized; names[id] is the C text of var id */
static void
ixc(Buf *b, const IExpr *x, const char *const *names)
{
	static const char *ops[] = {
		[IX_ADD] = "+", [IX_SUB] = "-", [IX_MUL] = "*", [IX_DIV] = "/", [IX_MOD] = "%",
		[IX_XOR] = "^", [IX_AND] = "&", [IX_OR] = "|", [IX_SHL] = "<<", [IX_SHR] = ">>",
		[IX_LT] = "<", [IX_LE] = "<=", [IX_EQ] = "==", [IX_NE] = "!=",
	};

	switch (x->k) {
	case IX_CONST: buf_printf(b, "%lld", (long long)x->v); return;
	case IX_VAR: putatom(b, names[x->v] ? names[x->v] : "0"); return;
	case IX_MIN: case IX_MAX:
		buf_puts(b, x->k == IX_MIN ? "min(" : "max(");
		ixc(b, x->a, names);
		buf_puts(b, ", ");
		ixc(b, x->b, names);
		buf_putc(b, ')');
		return;
	case IX_SELECT:
		buf_putc(b, '(');
		ixc(b, x->a, names);
		buf_puts(b, " ? ");
		ixc(b, x->b, names);
		buf_puts(b, " : ");
		ixc(b, x->c, names);
		buf_putc(b, ')');
		return;
	default:
		buf_putc(b, '(');
		ixc(b, x->a, names);
		buf_printf(b, " %s ", ops[x->k]);
		ixc(b, x->b, names);
		buf_putc(b, ')');
	}
}

static char *
ixstr(Em *e, const IExpr *x, const char *const *names)
{
	Buf b;
	char *s;

	buf_init(&b);
	ixc(&b, x, names);
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- IR expressions as C --------------------------------------------------- */

static void exprc(Em *e, Buf *b, const IrExpr *x);
static char *elemguard(Em *e, const IrBuffer *B, int n, IrExpr *const *idx);

/* ---- signs: integer expressions proven >= 0 or > 0 (C's / and % are then floor's) --- */

static int positive(const Em *e, const IrExpr *x);

static int
nonneg(const Em *e, const IrExpr *x)
{
	switch (x->kind) {
	case IE_INT: return x->u.i >= 0;
	case IE_BOOL: return 1;
	case IE_VAR:
		if (x->type == DT_U8 || x->type == DT_BOOL)
			return 1;
		switch (x->u.var->kind) {
		case VAR_SIZE: case VAR_BLOCK: return 1;
		case VAR_LOOP: case VAR_LET: return e->nnvar && e->nnvar[x->u.var->id];
		default: return 0;
		}
	case IE_LOAD: return x->type == DT_U8 || x->type == DT_BOOL;
	case IE_CAST:
		return x->u.cast.a->type == DT_BOOL || x->u.cast.a->type == DT_U8 ||
		       (!dtype_is_float(x->u.cast.a->type) && nonneg(e, x->u.cast.a));
	case IE_SELECT: return nonneg(e, x->u.sel.a) && nonneg(e, x->u.sel.b);
	case IE_UNARY: return 0;
	case IE_BINARY:
		if (dtype_is_float(x->type))
			return 0;
		switch (x->u.bin.op) {
		case BIN_ADD: case BIN_MUL: case BIN_BOR: case BIN_BXOR:
			return nonneg(e, x->u.bin.a) && nonneg(e, x->u.bin.b);
		case BIN_BAND: return nonneg(e, x->u.bin.a) || nonneg(e, x->u.bin.b);
		case BIN_SHR: case BIN_SHL: return nonneg(e, x->u.bin.a);
		case BIN_DIV: return nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b);
		case BIN_MOD: return positive(e, x->u.bin.b);
		case BIN_LT: case BIN_LE: case BIN_GT: case BIN_GE: case BIN_EQ: case BIN_NE:
		case BIN_LAND: case BIN_LOR:
			return 1; /* bools */
		default: return 0; /* BIN_SUB */
		}
	case IE_CALL:
		if (dtype_is_float(x->type))
			return 0;
		switch (x->u.call.fn) {
		case FN_ABS: return 1;
		case FN_MAX: return nonneg(e, x->u.call.args[0]) || nonneg(e, x->u.call.args[1]);
		case FN_MIN: return nonneg(e, x->u.call.args[0]) && nonneg(e, x->u.call.args[1]);
		case FN_CDIV: return nonneg(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);
		default: return 0;
		}
	default: return 0;
	}
}

static int
positive(const Em *e, const IrExpr *x)
{
	switch (x->kind) {
	case IE_INT: return x->u.i > 0;
	case IE_VAR: return x->u.var->kind == VAR_SIZE; /* a zero size divides by zero anyway */
	case IE_BINARY:
		switch (x->u.bin.op) {
		case BIN_ADD:
			return (positive(e, x->u.bin.a) && nonneg(e, x->u.bin.b)) ||
			       (nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b));
		case BIN_MUL: return positive(e, x->u.bin.a) && positive(e, x->u.bin.b);
		default: return 0;
		}
	case IE_CALL:
		if (x->u.call.fn == FN_MAX)
			return positive(e, x->u.call.args[0]) || positive(e, x->u.call.args[1]);
		if (x->u.call.fn == FN_MIN)
			return positive(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);
		return 0;
	default: return 0;
	}
}

/* clear nnvar[v] for a let assigned a value not proven >= 0; 1 if anything changed */
static int
signs_walk(Em *e, const IrStmt *s)
{
	int ch = 0;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_LET: case S_SET:
			if (e->nnvar[s->u.let.var->id] && !nonneg(e, s->u.let.value))
				e->nnvar[s->u.let.var->id] = 0, ch = 1;
			break;
		case S_FOR:
			if (e->nnvar[s->u.loop.var->id] && !nonneg(e, s->u.loop.lo))
				e->nnvar[s->u.loop.var->id] = 0, ch = 1;
			ch |= signs_walk(e, s->u.loop.body);
			break;
		case S_PIPELINE: ch |= signs_walk(e, s->u.pipe.body); break;
		case S_PARALLEL: ch |= signs_walk(e, s->u.par.body); break;
		case S_IF:
			ch |= signs_walk(e, s->u.cond.then);
			ch |= signs_walk(e, s->u.cond.els);
			break;
		default: break;
		}
	}
	return ch;
}

/* the ranges of loop variables: parallel ones [0, ext), serial ones [lo, lo + extent) */
static void
ranges(Em *e, const IrStmt *s)
{
	int64_t lo, n;
	int i;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_PARALLEL:
			for (i = 0; i < s->u.par.n; i++) {
				e->hasmax[s->u.par.vars[i]->id] = 1;
				e->vmax[s->u.par.vars[i]->id] = s->u.par.ext[i] - 1;
			}
			ranges(e, s->u.par.body);
			break;
		case S_FOR:
			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n) && n > 0 &&
			    !ck_add(lo, n - 1, &n))
				e->hasmax[s->u.loop.var->id] = 1, e->vmax[s->u.loop.var->id] = n;
			else if (ir_is_const(s->u.loop.lo, &lo) && lo == 0)
				e->vcount[s->u.loop.var->id] = s->u.loop.extent;
			ranges(e, s->u.loop.body);
			break;
		case S_PIPELINE:
			if (ir_is_const(s->u.pipe.extent, &n) && n > 0)
				e->hasmax[s->u.pipe.var->id] = 1, e->vmax[s->u.pipe.var->id] = n - 1;
			else
				e->vcount[s->u.pipe.var->id] = s->u.pipe.extent;
			ranges(e, s->u.pipe.body);
			break;
		case S_IF:
			ranges(e, s->u.cond.then);
			ranges(e, s->u.cond.els);
			break;
		default: break;
		}
	}
}

/* which loop and let variables are >= 0: parallel and pipeline variables are; a
 * serial loop's when its start is; a let's when every value it is given is (the
 * greatest fixed point: start from all, drop a variable given a value not proven) */
static void
signs(Em *e)
{
	int i;

	e->nnvar = anewn(e->a, unsigned char, e->k->nvar + 1);
	e->hasmax = anewn(e->a, unsigned char, e->k->nvar + 1);
	e->vmax = anewn(e->a, int64_t, e->k->nvar + 1);
	e->vcount = anewn(e->a, const IrExpr *, e->k->nvar + 1);
	for (i = 0; i < e->k->nvar; i++) {
		const IrVar *v = e->k->vars[i];

		e->nnvar[i] = v->kind == VAR_LOOP || v->kind == VAR_LET;
		if (v->kind == VAR_BLOCK) {
			int d = v->name[1] - 'x';

			if (d >= 0 && d < e->k->ngrid) {
				int64_t c;

				if (ir_is_const(e->k->grid[d], &c))
					e->hasmax[i] = 1, e->vmax[i] = c - 1;
				e->vcount[i] = e->k->grid[d];
			}
		}
	}
	ranges(e, e->k->body);
	while (signs_walk(e, e->k->body))
		;
}

static void
varc(Em *e, Buf *b, const IrVar *v)
{
	(void)e;
	if (v->kind == VAR_BLOCK) {
		buf_printf(b, "(int)blockIdx.%c", v->name[1]);
		return;
	}
	buf_puts(b, vname(e, v));
}

/* row-major offset of a global buffer access: idx[d] * stride(d) */
static void
goffset(Em *e, Buf *b, const IrBuffer *B, char *const *idx)
{
	int d, d2;

	(void)e;

	buf_putc(b, '(');
	for (d = 0; d < B->ndim; d++) {
		buf_printf(b, "%s(long long)(%s)", d ? " + " : "", idx[d]);
		for (d2 = d + 1; d2 < B->ndim; d2++) {
			if (B->dims[d2].sym)
				buf_printf(b, " * %s", vname(e, B->dims[d2].sym));
			else
				buf_printf(b, " * %lld", (long long)B->dims[d2].c);
		}
	}
	buf_putc(b, ')');
}

static char *exprstr(Em *e, const IrExpr *x);

/* the register slot of a local buffer at constant-in-thread coordinates */
static int
localslot(Em *e, int buf, char *const *idx, Buf *b)
{
	const Fragment *F = e->frag[buf];
	const char *names[IEXPR_NVARS] = {0};
	int d;

	if (!F)
		return err_set(e->err, "local buffer '%s' has no layout", e->k->bufs[buf].name);
	for (d = 0; d < F->nin; d++)
		names[d] = idx[d];
	ixc(b, F->fwd[0], names);
	return 0;
}

/* the element offset of a shared access (layout index over the buffer's dims) */
static int
smemoff(Em *e, int buf, char *const *idx, Buf *b)
{
	const SmemBuf *sb = smem_find(&e->sp, buf);
	const char *names[IEXPR_NVARS] = {0};
	IExpr *lin;
	int d, lead;

	if (!sb)
		return err_set(e->err, "shared buffer '%s' is not planned", e->k->bufs[buf].name);
	/* a layout of higher rank than the buffer (a 1-D buffer laid out as [1, n]) takes
	 * leading zero coordinates; of lower rank, it drops the buffer's leading (unit) dims */
	lead = sb->layout->nin - e->k->bufs[buf].ndim;
	for (d = 0; d < sb->layout->nin; d++)
		names[d] = d < lead ? "0" : idx[d - lead];
	if (!(lin = layout_linear_index(e->a, sb->layout)))
		return err_set(e->err, "shared buffer '%s': no linear index", e->k->bufs[buf].name);
	ixc(b, lin, names);
	return 0;
}

static const char *
bufptr(Em *e, int buf)
{
	const IrBuffer *B = &e->k->bufs[buf];

	if (B->scope == MEM_SHARED && e->in_pipe && e->stage && smem_find(&e->sp, buf) &&
	    smem_find(&e->sp, buf)->stages > 1)
		return arena_printf(e->a, "(%s + (%s) * %lld)", B->name, e->stage,
				    (long long)smem_find(&e->sp, buf)->stage_elems);
	return B->name;
}

static char *parslot(Em *e, const IrStmt *par, IExpr *const *pc, int buf, int n, IrExpr *const *idx);

static void
access(Em *e, Buf *b, int buf, int n, IrExpr *const *ix)
{
	const IrBuffer *B = &e->k->bufs[buf];
	char *idx[IR_MAXDIM];
	int d;

	for (d = 0; d < n && d < IR_MAXDIM; d++)
		idx[d] = exprstr(e, ix[d]);
	if (B->scope == MEM_LOCAL) {
		char *ps = e->par ? parslot(e, e->par, e->parpc, buf, n, ix) : NULL;

		buf_printf(b, "%s[", B->name);
		if (ps)
			buf_puts(b, ps);
		else
			localslot(e, buf, idx, b);
		buf_putc(b, ']');
	} else if (B->scope == MEM_SHARED) {
		buf_printf(b, "%s[", bufptr(e, buf));
		smemoff(e, buf, idx, b);
		buf_putc(b, ']');
	} else {
		buf_printf(b, "%s[", B->name);
		goffset(e, b, B, idx);
		buf_putc(b, ']');
	}
}

static const char *
tof32(DType t)
{
	return t == DT_F16 ? "tl_h2f" : t == DT_BF16 ? "tl_bf2f" : t == DT_FP8E4M3 ? "tl_e4m3_to_f32"
	       : t == DT_FP8E5M2 ? "tl_e5m2_to_f32" : "";
}

static const char *
fromf32(DType t)
{
	return t == DT_F16 ? "tl_f2h" : t == DT_BF16 ? "tl_f2bf" : t == DT_FP8E4M3 ? "tl_f32_to_e4m3"
	       : t == DT_FP8E5M2 ? "tl_f32_to_e5m2" : "";
}

static void
exprc(Em *e, Buf *b, const IrExpr *x)
{
	int i;

	switch (x->kind) {
	case IE_INT: buf_printf(b, "%lld", (long long)x->u.i); break;
	case IE_FLOAT:
	{
		char t[64];
		int f64 = x->type == DT_F64;
		double v = f64 ? x->u.f : num_round(x->type, x->u.f);

		/* the constant rounded to its type once (an f16 constant is an f16 value, computed
		 * in f32), printed with the digits that give that value back exactly */
		if (isinf(v))
			buf_printf(b, "%s__int_as_float(0x7f800000)", v < 0 ? "-" : "");
		else if (isnan(v))
			buf_puts(b, "__int_as_float(0x7fc00000)");
		else {
			snprintf(t, sizeof t, f64 ? "%.17g" : "%.9g", v);
			/* "%g" of an integral value prints no point: "0f" is not C */
			buf_printf(b, "%s%s%s", t, strpbrk(t, ".e") ? "" : ".0", f64 ? "" : "f");
		}
		break;
	}
	case IE_BOOL: buf_puts(b, x->u.i ? "true" : "false"); break;
	case IE_VAR: varc(e, b, x->u.var); break;
	case IE_LOAD: {
		/* a global element outside the tensor reads zero (docs/semantics.md) */
		char *g = elemguard(e, &e->k->bufs[x->u.load.buf], x->u.load.n, x->u.load.idx);

		if (g)
			buf_printf(b, "((%s) ? ", g);
		if (calctype(x->type) != x->type) {
			buf_printf(b, "%s(", tof32(x->type));
			access(e, b, x->u.load.buf, x->u.load.n, x->u.load.idx);
			buf_putc(b, ')');
		} else {
			access(e, b, x->u.load.buf, x->u.load.n, x->u.load.idx);
		}
		if (g)
			buf_printf(b, " : (%s)0)", ctype(calctype(x->type)));
		break;
	}
	case IE_UNARY:
		/* C computes ~ of an i8 or u8 in int: the result is wrapped back to the type */
		if (x->u.un.op == UN_BNOT && (x->type == DT_I8 || x->type == DT_U8)) {
			buf_printf(b, "((%s)(~", ctype(x->type));
			exprc(e, b, x->u.un.a);
			buf_puts(b, "))");
			break;
		}
		buf_puts(b, x->u.un.op == UN_NEG ? "(-" : x->u.un.op == UN_NOT ? "(!" : "(~");
		exprc(e, b, x->u.un.a);
		buf_putc(b, ')');
		break;
	case IE_BINARY:
		/* integer / and % are floor division and modulo: C's when a >= 0 and b > 0 */
		if ((x->u.bin.op == BIN_DIV || x->u.bin.op == BIN_MOD) && !dtype_is_float(x->type) &&
		    !(nonneg(e, x->u.bin.a) && positive(e, x->u.bin.b))) {
			buf_puts(b, x->u.bin.op == BIN_DIV ? "tl_floordiv(" : "tl_floormod(");
			exprc(e, b, x->u.bin.a);
			buf_puts(b, ", ");
			exprc(e, b, x->u.bin.b);
			buf_putc(b, ')');
			break;
		}
		buf_putc(b, '(');
		exprc(e, b, x->u.bin.a);
		buf_printf(b, " %s ", binop_name(x->u.bin.op));
		exprc(e, b, x->u.bin.b);
		buf_putc(b, ')');
		break;
	case IE_SELECT:
		buf_putc(b, '(');
		exprc(e, b, x->u.sel.c);
		buf_puts(b, " ? ");
		exprc(e, b, x->u.sel.a);
		buf_puts(b, " : ");
		exprc(e, b, x->u.sel.b);
		buf_putc(b, ')');
		break;
	case IE_CAST:
		/* f16/bf16 values compute in f32: a cast to them rounds through the type */
		if (calctype(x->type) != x->type) {
			buf_printf(b, "%s(%s(", tof32(x->type), fromf32(x->type));
			exprc(e, b, x->u.cast.a);
			buf_puts(b, "))");
		} else {
			buf_printf(b, "((%s)", ctype(calctype(x->type)));
			exprc(e, b, x->u.cast.a);
			buf_putc(b, ')');
		}
		break;
	case IE_CALL: {
		static const char *ff[FN_COUNT] = {
			[FN_EXP] = "expf", [FN_EXP2] = "exp2f", [FN_LOG] = "logf", [FN_LOG2] = "log2f",
			[FN_SQRT] = "sqrtf", [FN_RSQRT] = "rsqrtf", [FN_ABS] = "fabsf", [FN_TANH] = "tanhf",
			[FN_SIN] = "sinf", [FN_COS] = "cosf", [FN_MAX] = "fmaxf", [FN_MIN] = "fminf",
		};
		const char *fn;

		if (x->u.call.fn == FN_CDIV) {
			/* cdiv(a, b) = floor((a + b - 1) / b): C's / when a >= 0 and b > 0 */
			int c = nonneg(e, x->u.call.args[0]) && positive(e, x->u.call.args[1]);

			buf_puts(b, c ? "((" : "tl_floordiv(");
			exprc(e, b, x->u.call.args[0]);
			buf_puts(b, " + ");
			exprc(e, b, x->u.call.args[1]);
			buf_puts(b, c ? " - 1) / " : " - 1, ");
			exprc(e, b, x->u.call.args[1]);
			buf_putc(b, ')');
			break;
		}
		fn = ff[x->u.call.fn];
		if (!dtype_is_float(x->type))
			fn = x->u.call.fn == FN_MAX ? "max" : x->u.call.fn == FN_MIN ? "min"
			     : x->u.call.fn == FN_ABS ? "abs" : fn;
		else if (x->type == DT_F64)
			fn = mathfn_name(x->u.call.fn);
		buf_printf(b, "%s(", fn);
		for (i = 0; i < x->u.call.n; i++) {
			if (i)
				buf_puts(b, ", ");
			exprc(e, b, x->u.call.args[i]);
		}
		buf_putc(b, ')');
		break;
	}
	}
}

static char *
exprstr(Em *e, const IrExpr *x)
{
	Buf b;
	char *s;

	buf_init(&b);
	exprc(e, &b, x);
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* ---- guards from assume() ------------------------------------------------------ */

/* does some assume(S % c == 0) give S % m == 0? */
static int
divides(const Em *e, const IrVar *sym, int64_t m)
{
	int i;
	int64_t c;

	for (i = 0; i < e->k->nassume; i++) {
		const IrExpr *x = e->k->assumes[i], *l;

		if (x->kind != IE_BINARY || x->u.bin.op != BIN_EQ || !ir_is_const(x->u.bin.b, &c) || c)
			continue;
		l = x->u.bin.a;
		if (l->kind == IE_BINARY && l->u.bin.op == BIN_MOD && l->u.bin.a->kind == IE_VAR &&
		    l->u.bin.a->u.var == sym && ir_is_const(l->u.bin.b, &c) && c > 0 && c % m == 0)
			return 1;
	}
	return 0;
}

/* is offset expression x a multiple of m (a constant, or a product with such a constant)? */
static int
multiple(const IrExpr *x, int64_t m)
{
	int64_t c;

	if (ir_is_const(x, &c))
		return c % m == 0;
	if (x->kind == IE_BINARY && x->u.bin.op == BIN_MUL)
		return multiple(x->u.bin.a, m) || multiple(x->u.bin.b, m);
	if (x->kind == IE_BINARY && x->u.bin.op == BIN_ADD)
		return multiple(x->u.bin.a, m) && multiple(x->u.bin.b, m);
	return 0;
}

/* x as sum c[i] * v[i] + k over at most 8 variables; 0, or -1 when x is not linear so */
typedef struct Lin {
	int n;
	const IrVar *v[8];
	int64_t c[8], k;
} Lin;

static int
linear(const IrExpr *x, int64_t m, Lin *l)
{
	int64_t c, t;
	int i;

	switch (x->kind) {
	case IE_INT: return ck_mul(x->u.i, m, &t) || ck_add(l->k, t, &l->k) ? -1 : 0;
	case IE_VAR:
		if (dtype_is_float(x->type))
			return -1;
		for (i = 0; i < l->n; i++)
			if (l->v[i] == x->u.var)
				return ck_add(l->c[i], m, &l->c[i]);
		if (l->n == 8)
			return -1;
		l->v[l->n] = x->u.var, l->c[l->n++] = m;
		return 0;
	case IE_CAST:
		return dtype_is_float(x->type) || dtype_is_float(x->u.cast.a->type) || x->type == DT_BOOL ? -1
		       : linear(x->u.cast.a, m, l);
	case IE_UNARY: return x->u.un.op == UN_NEG && m != INT64_MIN ? linear(x->u.un.a, -m, l) : -1;
	case IE_BINARY:
		switch (x->u.bin.op) {
		case BIN_ADD: return linear(x->u.bin.a, m, l) || linear(x->u.bin.b, m, l) ? -1 : 0;
		case BIN_SUB:
			return m == INT64_MIN || linear(x->u.bin.a, m, l) || linear(x->u.bin.b, -m, l) ? -1 : 0;
		case BIN_MUL:
			if (ir_is_const(x->u.bin.a, &c))
				return ck_mul(m, c, &t) ? -1 : linear(x->u.bin.b, t, l);
			if (ir_is_const(x->u.bin.b, &c))
				return ck_mul(m, c, &t) ? -1 : linear(x->u.bin.a, t, l);
			return -1;
		default: return -1;
		}
	default: return -1;
	}
}

/*
 * Is x + span < dim for every value x's variables can take (0 <= span)? The
 * terms with a constant largest value are bounded by it; at most one variable
 * may run over [0, X) with X = cdiv(S, g) or S / g (S the dim's size symbol, and
 * an assume(S % g == 0)), with coefficient c <= g and the rest below g: then
 * x <= c (S/g - 1) + g - 1 < S.
 */
static int
below(const Em *e, const IrExpr *x, int64_t span, const IrDim *dim)
{
	Lin l = {0};
	int64_t rest, t, g = 0;
	const IrVar *open = NULL;
	int i, oc = 0;

	if (linear(x, 1, &l))
		return 0;
	rest = l.k;
	if (ck_add(rest, span, &rest))
		return 0;
	for (i = 0; i < l.n; i++) {
		const IrVar *v = l.v[i];

		if (l.c[i] == 0)
			continue;
		if (l.c[i] < 0) {
			/* at most 0 when v >= 0 */
			if (!(v->kind == VAR_SIZE || v->kind == VAR_BLOCK || e->nnvar[v->id]))
				return 0;
			continue;
		}
		if (e->hasmax[v->id]) {
			if (e->vmax[v->id] < 0 || ck_mul(l.c[i], e->vmax[v->id], &t) || ck_add(rest, t, &rest))
				return 0;
		} else if (!open && e->vcount[v->id]) {
			open = v, oc = i;
		} else {
			return 0;
		}
	}
	if (!dim->sym)
		return !open && rest < dim->c;
	if (!open)
		return 0;
	{
		const IrExpr *X = e->vcount[open->id];
		int64_t c;

		if (X->kind == IE_VAR && X->u.var == dim->sym)
			g = 1;
		else if (X->kind == IE_CALL && X->u.call.fn == FN_CDIV && X->u.call.args[0]->kind == IE_VAR &&
			 X->u.call.args[0]->u.var == dim->sym && ir_is_const(X->u.call.args[1], &c) && c > 0)
			g = c;
		else if (X->kind == IE_BINARY && X->u.bin.op == BIN_DIV && X->u.bin.a->kind == IE_VAR &&
			 X->u.bin.a->u.var == dim->sym && ir_is_const(X->u.bin.b, &c) && c > 0)
			g = c;
		else
			return 0;
	}
	return (g == 1 || divides(e, dim->sym, g)) && l.c[oc] <= g && rest < g;
}

/* the bound of a global dim as C text */
static const char *
dimtext(Em *e, const IrDim *dim)
{
	return dim->sym ? vname(e, dim->sym) : arena_printf(e->a, "%lld", (long long)dim->c);
}

/*
 * The guard of dim d of a global region access at C coordinate text cd (the
 * region's offset plus a coordinate in [0, ext)); NULL where 0 <= cd < dim is
 * proven for every value of the offset's variables (nonneg, below).
 */
static char *
guard(Em *e, const Region *r, int d, const char *cd, int64_t ext)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	int lo, hi;

	if (B->scope != MEM_GLOBAL)
		return NULL;
	lo = nonneg(e, r->off[d]);
	hi = below(e, r->off[d], ext - 1, &B->dims[d]);
	if (lo && hi)
		return NULL;
	if (hi)
		return arena_printf(e->a, "(%s) >= 0", cd);
	if (lo)
		return arena_printf(e->a, "(%s) < %s", cd, dimtext(e, &B->dims[d]));
	return arena_printf(e->a, "(%s) >= 0 && (%s) < %s", cd, cd, dimtext(e, &B->dims[d]));
}

/* the guard of an element access B[idx...] of a global buffer; NULL where proven */
static char *
elemguard(Em *e, const IrBuffer *B, int n, IrExpr *const *idx)
{
	Buf b;
	char *s;
	int d, any = 0;

	if (B->scope != MEM_GLOBAL)
		return NULL;
	buf_init(&b);
	for (d = 0; d < n && d < B->ndim; d++) {
		const char *x;

		if (nonneg(e, idx[d]) && below(e, idx[d], 0, &B->dims[d]))
			continue;
		x = exprstr(e, idx[d]);
		if (!nonneg(e, idx[d]))
			buf_printf(&b, "%s(%s) >= 0", any++ ? " && " : "", x);
		if (!below(e, idx[d], 0, &B->dims[d]))
			buf_printf(&b, "%s(%s) < %s", any++ ? " && " : "", x, dimtext(e, &B->dims[d]));
	}
	s = any ? arena_strdup(e->a, buf_str(&b)) : NULL;
	buf_free(&b);
	return s;
}

static char *
guards_and(Em *e, char *const *g, int n)
{
	Buf b;
	char *s;
	int i, any = 0;

	buf_init(&b);
	for (i = 0; i < n; i++) {
		if (!g[i])
			continue;
		buf_printf(&b, "%s%s", any ? " && " : "", g[i]);
		any = 1;
	}
	s = any ? arena_strdup(e->a, buf_str(&b)) : NULL;
	buf_free(&b);
	return s;
}

/* ---- fragments: per-thread partition through the inverse --------------------- */

/* the default partition of a shape over T threads: row-major elements in runs
 * of v per thread (v = 8 when the size allows, else 1) */
static Fragment *
defaultfrag(Em *e, const int64_t *shape, int n)
{
	char flat[256], thr[600], slot[600];
	const char *fwd[1];
	int64_t size = 1, T = e->k->threads, v = 8;
	int d;

	flat[0] = 0;
	for (d = 0; d < n; d++) {
		int64_t st = 1;
		int d2;

		for (d2 = d + 1; d2 < n; d2++)
			st *= shape[d2];
		size *= shape[d];
		snprintf(flat + strlen(flat), sizeof flat - strlen(flat), "%s%s * %lld", d ? " + " : "",
			 iexpr_varname(d), (long long)st);
	}
	if (size % (v * T))
		v = 1;
	if (size % (v * T)) {
		err_set(e->err, "no default partition of %lld elements over %lld threads", (long long)size,
			(long long)T);
		return NULL;
	}
	snprintf(thr, sizeof thr, "(%s) // %lld %% %lld", flat, (long long)v, (long long)T);
	snprintf(slot, sizeof slot, "(%s) // %lld * %lld + (%s) %% %lld", flat, (long long)(v * T),
		 (long long)v, flat, (long long)v);
	fwd[0] = slot;
	return frag_parse(e->a, shape, n, thr, 1, fwd, 1, e->err);
}

/* coordinates (x..., rep) of F in slot _i and thread _j; slots per thread in *S */
static IExpr **
fragcoords(Em *e, const Fragment *F, int64_t *S)
{
	Layout *inv;

	if (F->nout != 1) {
		err_set(e->err, "fragment with %d slot dims is not lowered", F->nout);
		return NULL;
	}
	if (!(inv = layout_inverse(e->a, F, 0, e->err)))
		return NULL;
	*S = F->out_shape[0];
	return inv->fwd;
}

/* fragvec's table: the coordinates co[d] of every (thread, slot), row-major */
typedef struct VecTab {
	int n;
	int64_t S;
	int64_t *c;   /* [thread][slot][d] */
} VecTab;

static int
vectab_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	VecTab *t = ctx;
	int p, d;

	(void)coord;
	for (p = 0; p < npts; p++)
		for (d = 0; d < t->n; d++)
			t->c[(first + p) * t->n + d] = vals[d][p];
	return 0;
}

/* the widest run v (power of two, dividing S, at most maxv) such that every
 * thread's slots s..s+v-1 (s % v == 0) are consecutive, aligned elements of the
 * last dim. The coordinates are tabulated once with the compiled evaluator. */
static int
fragvec(const Fragment *F, IExpr *const *co, int64_t S, int maxv)
{
	static const int ids[2] = {1, 0};   /* thread (_j) outer, slot (_i) inner */
	int64_t shape[2], t, s, total;
	VecTab tab;
	Err scratch = {0};
	int v, kk, d, n = F->nin;

	if (n < 1 || S < 1 || F->nthreads < 1 || ck_mul(S, F->nthreads, &total) || total > (1 << 22))
		return 1;
	shape[0] = F->nthreads, shape[1] = S;
	tab.n = n, tab.S = S;
	if (!(tab.c = malloc((size_t)total * (size_t)n * sizeof *tab.c)))
		return 1;
	if (layout_enumerate(shape, ids, 2, co, n, vectab_visit, &tab, &scratch)) {
		free(tab.c);
		return 1;
	}
	for (v = maxv; v > 1; v /= 2) {
		int ok = S % v == 0;

		for (t = 0; ok && t < F->nthreads; t++)
			for (s = 0; ok && s < S; s += v) {
				const int64_t *c0 = tab.c + (t * S + s) * n;

				if (c0[n - 1] % v)
					ok = 0;
				for (kk = 1; ok && kk < v; kk++)
					for (d = 0; ok && d < n; d++)
						if (c0[kk * n + d] != c0[d] + (d == n - 1 ? kk : 0))
							ok = 0;
			}
		if (ok)
			break;
	}
	free(tab.c);
	return v > 1 ? v : 1;
}

static const char *const slotnames[IEXPR_NVARS] = {"s", "tid"};

/* ---- register <-> memory copies ------------------------------------------------- */

static const char *
vtype(int bytes)
{
	return bytes == 16 ? "uint4" : bytes == 8 ? "uint2" : bytes == 4 ? "tl_u32" : "unsigned short";
}

/* the 32-bit word w of a run of values vals (text) of type t (1, 2 or 4 bytes) */
static void
packword(Buf *b, DType t, char *const *vals, int w)
{
	if (dtype_bytes(t) == 1)
		buf_printf(b, "((tl_u32)(unsigned char)%s | ((tl_u32)(unsigned char)%s << 8) | "
			   "((tl_u32)(unsigned char)%s << 16) | ((tl_u32)(unsigned char)%s << 24))",
			   vals[4 * w], vals[4 * w + 1], vals[4 * w + 2], vals[4 * w + 3]);
	else if (dtype_bytes(t) == 2)
		buf_printf(b, "((tl_u32)%s | ((tl_u32)%s << 16))", vals[2 * w], vals[2 * w + 1]);
	else if (t == DT_F32)
		buf_printf(b, "__float_as_uint(%s)", vals[w]);
	else
		buf_printf(b, "(tl_u32)%s", vals[w]);
}

/* value text of element k of a vector register r of words */
static char *
unpack(Em *e, DType t, const char *r, int words, int k)
{
	static const char comp[] = "xyzw";
	const char *wd;

	wd = words == 1 ? r : arena_printf(e->a, "%s.%c", r, comp[k * dtype_bytes(t) / 4]);
	if (dtype_bytes(t) == 1)
		return arena_printf(e->a, "(%s)(unsigned char)(%s >> %d)", ctype(t), wd, k % 4 * 8);
	if (dtype_bytes(t) == 2)
		return arena_printf(e->a, "(%s)(%s >> %d)", ctype(t), wd, k % 2 * 16);
	if (t == DT_F32)
		return arena_printf(e->a, "__uint_as_float(%s)", wd);
	return arena_printf(e->a, "(%s)%s", ctype(t), wd);
}

/* convert value text v of type from to type to */
static char *
conv(Em *e, const char *v, DType from, DType to)
{
	if (from == to)
		return (char *)v;
	if (calctype(from) != from)
		v = arena_printf(e->a, "%s(%s)", tof32(from), v);
	if (calctype(to) != to && from == DT_F64) /* one rounding, not two */
		return arena_printf(e->a, "%s(tl_f64_to_f32_odd(%s))", fromf32(to), v);
	if (calctype(to) != to)
		return arena_printf(e->a, "%s(%s)", fromf32(to), v);
	return arena_printf(e->a, "(%s)(%s)", ctype(to), v);
}

/* the C text of dim d of a region access: offset + the loop coord that walks d */
static char *
coordtext(Em *e, const Region *r, int d, char *const *cs, int nn)
{
	char *o = exprstr(e, r->off[d]);
	int64_t c;
	int k;

	for (k = 0; k < nn; k++)
		if (nest_region_dim(r, k) == d)
			return ir_is_const(r->off[d], &c) && c == 0 ? cs[k]
			       : arena_printf(e->a, "%s + %s", o, cs[k]);
	return o;
}

/* the memory-side address text of a region at loop coords cs (one per nest dim) */
static char *
memaddr(Em *e, const Region *r, char *const *cs, int nn)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	char *idx[IR_MAXDIM];
	Buf b;
	char *s;
	int d;

	for (d = 0; d < r->ndim; d++)
		idx[d] = coordtext(e, r, d, cs, nn);
	buf_init(&b);
	if (B->scope == MEM_SHARED) {
		buf_printf(&b, "&%s[", bufptr(e, r->buf));
		smemoff(e, r->buf, idx, &b);
	} else {
		buf_printf(&b, "&%s[", B->name);
		goffset(e, &b, B, idx);
	}
	buf_putc(&b, ']');
	s = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return s;
}

/* guards of a region access at loop coords cs */
static char *
regguard(Em *e, const Region *r, char *const *cs, int nn, int vec)
{
	char *g[IR_MAXDIM];
	int d;

	for (d = 0; d < r->ndim; d++) {
		g[d] = guard(e, r, d, coordtext(e, r, d, cs, nn), r->ext[d]);
	}
	(void)vec;
	return guards_and(e, g, r->ndim);
}

/* veccond's answer: vector accesses are not possible here, copy element by element */
static char scalar_only[] = "scalar";

/*
 * A vector access of v elements on the last dim of a global region is aligned
 * when the row length is a multiple of v (an assume proves it, or a constant)
 * and so is the region's offset in that dim. When an assume does not prove the
 * row length, a flag `tl_rows<v>_<N> = N % v == 0` is computed at kernel entry
 * (in chk) and the kernel body is emitted twice (e->scalar): here the vector
 * body assumes the flag, the scalar body gets scalar_only. Returns NULL (the
 * vector path), scalar_only, or a runtime condition for an offset not proven a
 * multiple of v (the caller adds a guarded scalar path).
 */
static char *
veccond(Em *e, Buf *chk, const Region *r, int v)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	const IrVar *sym;
	int d = B->ndim - 1, i;
	char *c, decl[256];

	if (B->scope != MEM_GLOBAL || v <= 1)
		return NULL;
	if ((sym = B->dims[d].sym) && !divides(e, sym, v)) {
		if (e->scalar)
			return scalar_only;
		c = arena_printf(e->a, "tl_rows%d_%s", v, vname(e, sym));
		snprintf(decl, sizeof decl, "\tconst bool %s = %s %% %d == 0; /* rows of whole %d-vectors */\n",
			 c, vname(e, sym), v, v);
		if (!strstr(buf_str(chk), decl))
			buf_puts(chk, decl);
		for (i = 0; i < e->nflags && strcmp(e->flags[i], c); i++)
			;
		if (i == e->nflags && i < (int)(sizeof e->flags / sizeof e->flags[0]))
			e->flags[e->nflags++] = c;
	} else if (!sym && B->dims[d].c % v) {
		return scalar_only;
	}
	if (!multiple(r->off[d], v))
		return arena_printf(e->a, "(%s) %% %d == 0", exprstr(e, r->off[d]), v);
	return NULL;
}

/*
 * May region r be accessed in vectors of v elements along the copy's last nest
 * dim (of nn)? Only when that nest dim walks the buffer's last (contiguous)
 * dim, and, in shared memory, from an offset that is a multiple of v. (A column
 * of a matrix copied into a 1-D tile walks dim 0: element by element.)
 */
static int
vecdim(const Em *e, const Region *r, int nn, int v)
{
	const IrBuffer *B = &e->k->bufs[r->buf];

	if (v <= 1)
		return 1;
	if (nest_region_dim(r, nn - 1) != r->ndim - 1)
		return 0;
	if (B->scope != MEM_SHARED)
		return 1;
	/* the shared layout must keep v elements together (smem.c vector_run) */
	{
		const SmemBuf *sb = smem_find(&e->sp, r->buf);

		if (!sb || sb->run < v)
			return 0;
	}
	return multiple(r->off[r->ndim - 1], v);
}

/* loop coordinates cs with the last one advanced by the scalar lane tl_k */
static char **
lanecs(Em *e, char *const *cs, int nn)
{
	char **c2 = anewn(e->a, char *, nn + 1);
	int i;

	for (i = 0; i < nn; i++)
		c2[i] = cs[i];
	c2[nn - 1] = arena_printf(e->a, "(%s + tl_k)", cs[nn - 1]);
	return c2;
}

typedef struct Lower {
	Em *e;
	Buf *chk;
} Lower;

/* the unit dims of buffer B */
static int
countunit(const IrBuffer *B)
{
	int d, n = 0;

	for (d = 0; d < B->ndim; d++)
		n += B->dims[d].c == 1;
	return n;
}

/* copy between a local buffer (whole) and a memory region; to_local gives the direction */
static int
regcopy(Em *e, Buf *chk, const IrStmt *st, int to_local)
{
	const Region *lr = to_local ? &st->u.copy.dst : &st->u.copy.src;
	const Region *mr = to_local ? &st->u.copy.src : &st->u.copy.dst;
	const IrBuffer *L = &e->k->bufs[lr->buf], *Mb = &e->k->bufs[mr->buf];
	const Fragment *F = e->frag[lr->buf];
	IExpr **co = e->coord[lr->buf];
	int64_t S = e->slots[lr->buf];
	int d, k, nk, v, eb = dtype_bytes(Mb->dtype), nn = F->nin;
	char *cs[LAYOUT_MAXDIM], *g, *vals[16], *vc, **c2;
	Buf b;

	for (d = 0; d < lr->ndim; d++) {
		int64_t c;

		if (!ir_is_const(lr->off[d], &c) || c || lr->ext[d] != L->dims[d].c)
			return err_set(e->err, "copy: local '%s' must be copied whole", L->name);
	}
	/* 1-byte elements move in whole 32-bit words: at least 4 */
	v = eb == 1 || eb == 2 || eb == 4 ? fragvec(F, co, S, 16 / eb) : 1;
	if (eb == 1 && v < 4)
		v = 1;
	if (!vecdim(e, mr, L->ndim - countunit(L), v))
		v = 1;
	if ((vc = veccond(e, chk, mr, v)) == scalar_only)
		v = 1, vc = NULL;
	line(e, "#pragma unroll");
	line(e, "for (int s = 0; s < %lld; s += %d) {", (long long)S, v);
	e->ind++;
	buf_init(&b);
	for (d = 0; d < nn; d++) {
		cs[d] = arena_printf(e->a, "c%d", d);
		line(e, "const int c%d = %s;", d, ixstr(e, co[d], slotnames));
	}
	/* the nest's loop coordinates are the local buffer's non-unit dims */
	for (k = 0, d = 0; d < nn; d++)
		if (L->dims[d].c != 1)
			cs[k++] = cs[d];
	nk = k;
	g = regguard(e, mr, cs, nk, v);
	/* a fragment over fewer threads than the block's: the others hold nothing */
	if (F->nthreads < e->k->threads)
		g = arena_printf(e->a, "%s%stid < %lld", g ? g : "", g ? " && " : "", (long long)F->nthreads);
	if (!to_local && F->rep > 1)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "",
				 ixstr(e, co[nn], slotnames));
	if (g)
		line(e, "if (%s) {", g), e->ind++;
	if (vc)
		line(e, "if (%s) {", vc), e->ind++;
	if (v == 1) {
		if (to_local)
			line(e, "%s[s] = %s;", L->name,
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, mr, cs, nk)), Mb->dtype, L->dtype));
		else
			line(e, "*(%s) = %s;", memaddr(e, mr, cs, nk),
			     conv(e, arena_printf(e->a, "%s[s]", L->name), L->dtype, Mb->dtype));
	} else if (to_local) {
		int words = v * eb / 4;

		line(e, "const %s r = *(const %s *)(%s);", vtype(v * eb), vtype(v * eb), memaddr(e, mr, cs, nk));
		for (k = 0; k < v; k++)
			line(e, "%s[s + %d] = %s;", L->name, k,
			     conv(e, unpack(e, Mb->dtype, "r", words, k), Mb->dtype, L->dtype));
	} else {
		int words = v * eb / 4, w;

		for (k = 0; k < v; k++)
			vals[k] = conv(e, arena_printf(e->a, "%s[s + %d]", L->name, k), L->dtype, Mb->dtype);
		buf_reset(&b);
		if (words == 1) {
			packword(&b, Mb->dtype, vals, 0);
		} else {
			buf_printf(&b, "make_uint%d(", words);
			for (w = 0; w < words; w++) {
				if (w)
					buf_puts(&b, ", ");
				packword(&b, Mb->dtype, vals, w);
			}
			buf_putc(&b, ')');
		}
		line(e, "*(%s *)(%s) = %s;", vtype(v * eb), memaddr(e, mr, cs, nk), buf_str(&b));
	}
	if (vc) {
		/* rows not of whole vectors: element by element, each guarded */
		char *g2;

		e->ind--;
		line(e, "} else {");
		e->ind++;
		c2 = lanecs(e, cs, nk);
		g2 = regguard(e, mr, c2, nk, 1);
		line(e, "#pragma unroll");
		line(e, "for (int tl_k = 0; tl_k < %d; tl_k++)", v);
		e->ind++;
		if (g2)
			line(e, "if (%s)", g2), e->ind++;
		if (to_local)
			line(e, "%s[s + tl_k] = %s;", L->name,
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, mr, c2, nk)), Mb->dtype, L->dtype));
		else
			line(e, "*(%s) = %s;", memaddr(e, mr, c2, nk),
			     conv(e, arena_printf(e->a, "%s[s + tl_k]", L->name), L->dtype, Mb->dtype));
		if (g2 && to_local) {
			/* past the tensor's edge a copy reads zero (docs/semantics.md) */
			e->ind--;
			line(e, "else");
			line(e, "\t%s[s + tl_k] = (%s)0;", L->name, ctype(L->dtype));
			e->ind++;
		}
		e->ind -= g2 ? 2 : 1;
		e->ind--;
		line(e, "}");
	}
	if (g) {
		e->ind--;
		if (to_local) {
			/* past the tensor's edge a copy reads zero (docs/semantics.md) */
			line(e, "} else {");
			line(e, "\t#pragma unroll");
			line(e, "\tfor (int tl_k = 0; tl_k < %d; tl_k++)", v);
			line(e, "\t\t%s[s + tl_k] = (%s)0;", L->name, ctype(L->dtype));
		}
		line(e, "}");
	}
	e->ind--;
	line(e, "}");
	buf_free(&b);
	return 0;
}

/* cooperative copy between global and shared memory, 16-byte chunks where possible */
static int
tilecopy(Em *e, Buf *chk, const IrStmt *st)
{
	const Region *sr = &st->u.copy.src, *dr = &st->u.copy.dst;
	const IrBuffer *SB = &e->k->bufs[sr->buf], *DB = &e->k->bufs[dr->buf];
	int64_t ext[IR_MAXDIM], R, C, chunks, T = e->k->threads, iters;
	int nn = nest_shape(st, ext), v, eb = dtype_bytes(SB->dtype), async;
	char *cs[2], *gs, *gd, *g, *vc, **c2, *qg;

	if (nn > 2)
		return err_set(e->err, "copy of rank %d between memories is not lowered yet", nn);
	R = nn == 2 ? ext[0] : 1;
	C = ext[nn - 1];
	v = SB->dtype == DB->dtype && (eb == 1 || eb == 2 || eb == 4 || eb == 8) && C % (16 / eb) == 0 ? 16 / eb : 1;
	if (!vecdim(e, sr, nn, v) || !vecdim(e, dr, nn, v))
		v = 1;
	if ((vc = veccond(e, chk, SB->scope == MEM_GLOBAL ? sr : dr, v)) == scalar_only)
		v = 1, vc = NULL;
	/* HIP: tilec_hip.h's tl_cp_async16(_zfill) are synchronous 16-byte copies (zeros past the edge) */
	async = v > 1 && (e->t->has_cp_async || e->t->kind == TGT_HIP) && SB->scope == MEM_GLOBAL &&
		DB->scope == MEM_SHARED;
	chunks = R * C / v;
	iters = (chunks + T - 1) / T;
	/* element by element, a rolled loop: unrolled, the loads of the whole tile would be
	 * hoisted and held in registers */
	line(e, v == 1 && e->scalar ? "#pragma unroll 1" : "#pragma unroll");
	line(e, "for (int it = 0; it < %lld; it++) {", (long long)iters);
	e->ind++;
	line(e, "const int q = tid + it * %lld;", (long long)T);
	line(e, "const int r = q / %lld, c = q %% %lld * %d;", (long long)(C / v), (long long)(C / v), v);
	if (nn == 2)
		cs[0] = "r", cs[1] = "c";
	else
		cs[0] = "c";
	gs = regguard(e, sr, cs, nn, v);
	gd = regguard(e, dr, cs, nn, v);
	g = gs && gd ? arena_printf(e->a, "%s && %s", gs, gd) : gs ? gs : gd;
	qg = chunks % T ? arena_printf(e->a, "q < %lld", (long long)chunks) : NULL;
	if (vc)
		line(e, "if (%s) {", vc), e->ind++;
	if (async) {
		/* out-of-range chunks are zero-filled (src-size 0); chunks past the tile are skipped */
		if (qg)
			line(e, "if (%s)", qg), e->ind++;
		if (g)
			line(e, "tl_cp_async16_zfill(%s, %s, %s);", memaddr(e, dr, cs, nn), memaddr(e, sr, cs, nn), g);
		else
			line(e, "tl_cp_async16(%s, %s);", memaddr(e, dr, cs, nn), memaddr(e, sr, cs, nn));
		if (qg)
			e->ind--;
	} else if (SB->scope == MEM_GLOBAL && DB->scope == MEM_SHARED && gs && !gd) {
		/* zeros where the source is out of range, as cp.async's zero fill */
		if (qg)
			line(e, "if (%s)", qg), e->ind++;
		if (v > 1)
			line(e, "*(uint4 *)(%s) = %s ? *(const uint4 *)(%s) : make_uint4(0, 0, 0, 0);",
			     memaddr(e, dr, cs, nn), gs, memaddr(e, sr, cs, nn));
		else
			line(e, "*(%s) = %s ? %s : %s;", memaddr(e, dr, cs, nn), gs,
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, sr, cs, nn)), SB->dtype, DB->dtype),
			     conv(e, "0.0f", DT_F32, DB->dtype));
		if (qg)
			e->ind--;
		async = 0;
	} else {
		if (qg)
			g = arena_printf(e->a, "%s%s%s", qg, g ? " && " : "", g ? g : "");
		if (g)
			line(e, "if (%s)", g), e->ind++;
		if (v > 1)
			line(e, "*(uint4 *)(%s) = *(const uint4 *)(%s);", memaddr(e, dr, cs, nn),
			     memaddr(e, sr, cs, nn));
		else
			line(e, "*(%s) = %s;", memaddr(e, dr, cs, nn),
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, sr, cs, nn)), SB->dtype, DB->dtype));
		if (g)
			e->ind--;
		async = 0;
	}
	if (vc) {
		/* rows not of whole vectors: element by element; shared memory gets zeros
		 * where the global source is out of range, as cp.async's zero fill */
		e->ind--;
		line(e, "} else {");
		e->ind++;
		c2 = lanecs(e, cs, nn);
		gs = regguard(e, sr, c2, nn, 1);
		gd = regguard(e, dr, c2, nn, 1);
		line(e, "#pragma unroll");
		line(e, "for (int tl_k = 0; tl_k < %d; tl_k++) {", v);
		e->ind++;
		if (chunks % T)
			line(e, "if (q < %lld) {", (long long)chunks), e->ind++;
		if (DB->scope == MEM_SHARED && gs)
			line(e, "*(%s) = %s ? %s : %s;", memaddr(e, dr, c2, nn), gs,
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, sr, c2, nn)), SB->dtype, DB->dtype),
			     conv(e, "0.0f", DT_F32, DB->dtype));
		else {
			if (gd || gs)
				line(e, "if (%s)", gd && gs ? arena_printf(e->a, "%s && %s", gs, gd) : gd ? gd : gs),
				e->ind++;
			line(e, "*(%s) = %s;", memaddr(e, dr, c2, nn),
			     conv(e, arena_printf(e->a, "*(%s)", memaddr(e, sr, c2, nn)), SB->dtype, DB->dtype));
			if (gd || gs)
				e->ind--;
		}
		if (chunks % T)
			e->ind--, line(e, "}");
		e->ind--;
		line(e, "}");
		e->ind--;
		line(e, "}");
	}
	e->ind--;
	line(e, "}");
	return async;
}

/* ---- reduce: per-thread partials, warp shuffles, shared memory across warps -------- */

/* the identity of op in calculation type t (C text); NULL if t is not reducible */
static const char *
redident(ReduceOp op, DType t)
{
	int f = dtype_is_float(t);

	if (op == RED_SUM || op == RED_ABSMAX)
		return t == DT_F64 ? "0.0" : f ? "0.0f" : "0";
	if (t == DT_F32)
		return op == RED_MAX ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
	if (t == DT_F64)
		return op == RED_MAX ? "__longlong_as_double(0xfff0000000000000ULL)"
				     : "__longlong_as_double(0x7ff0000000000000ULL)";
	if (t == DT_I32)
		return op == RED_MAX ? "(-2147483647 - 1)" : "2147483647";
	if (t == DT_INT)
		return op == RED_MAX ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
	return NULL;
}

/* op(a, b) of two partials in calculation type t */
static char *
redop(Em *e, ReduceOp op, DType t, const char *a, const char *b)
{
	const char *mx = t == DT_F32 ? "fmaxf" : t == DT_F64 ? "fmax" : "max";
	const char *mn = t == DT_F32 ? "fminf" : t == DT_F64 ? "fmin" : "min";

	if (op == RED_SUM)
		return arena_printf(e->a, "%s + %s", a, b);
	return arena_printf(e->a, "%s(%s, %s)", op == RED_MIN ? mn : mx, a, b);
}

/* the value one source element contributes (absmax: its magnitude) */
static char *
redval(Em *e, ReduceOp op, DType t, const char *v)
{
	if (op != RED_ABSMAX)
		return (char *)v;
	return arena_printf(e->a, "%s(%s)", t == DT_F32 ? "fabsf" : t == DT_F64 ? "fabs" : "abs", v);
}

/* reduce from shared memory: a local destination is folded slot by slot by every
 * thread that holds the slot's element; a shared one by one thread per element,
 * reading the source's row (dim) from shared memory */
static int
smemreduce(Em *e, const IrStmt *st)
{
	static const char *const gnames[IEXPR_NVARS] = {"g", "tid"};
	int sb = st->u.reduce.src, db = st->u.reduce.dst, dim = st->u.reduce.dim, d, dd;
	const IrBuffer *SB = &e->k->bufs[sb], *DB = &e->k->bufs[db];
	ReduceOp op = st->u.reduce.op;
	DType ct = calctype(DB->dtype);
	const char *ty = ctype(ct), *ident = redident(op, ct);
	int64_t S = SB->dims[dim].c, NY = 1, T = e->k->threads, div;
	int keep = DB->ndim == SB->ndim;
	char *idx[IR_MAXDIM], *dc[IR_MAXDIM], *v, *old, *res;
	Buf b;

	if (SB->scope != MEM_SHARED)
		return err_set(e->err, "reduce %s -> %s: a local source needs a local destination (reduce "
			       "into a local buffer, then copy)", SB->name, DB->name);
	if (!ident || calctype(SB->dtype) != ct)
		return err_set(e->err, "reduce: element types %s -> %s are not lowered",
			       dtype_name(SB->dtype), dtype_name(DB->dtype));
	for (d = 0; d < DB->ndim; d++)
		NY *= DB->dims[d].c;
	line(e, "__syncthreads();");
	line(e, "{ // reduce %s %s -> %s dim %d from shared memory", reduceop_name(op), SB->name, DB->name,
	     dim);
	e->ind++;
	if (DB->scope == MEM_LOCAL) {
		/* a fragment over fewer threads than the block's: the others hold nothing, and their
		 * coordinates would address shared memory past the source */
		if (e->frag[db]->nthreads < T)
			line(e, "if (tid < %lld) {", (long long)e->frag[db]->nthreads), e->ind++;
		line(e, "#pragma unroll");
		line(e, "for (int g = 0; g < %lld; g++) {", (long long)e->slots[db]);
		e->ind++;
		for (d = 0; d < DB->ndim; d++)
			line(e, "const int c%d = %s;", d, ixstr(e, e->coord[db][d], gnames));
	} else {
		line(e, "for (int it = 0; it < %lld; it++) {", (long long)((NY + T - 1) / T));
		e->ind++;
		line(e, "const int q = tid + it * %lld;", (long long)T);
		for (d = DB->ndim - 1, div = 1; d >= 0; div *= DB->dims[d].c, d--)
			line(e, "const int c%d = q / %lld %% %lld;", d, (long long)div, (long long)DB->dims[d].c);
		if (NY % T)
			line(e, "if (q < %lld) {", (long long)NY), e->ind++;
	}
	for (d = 0; d < DB->ndim; d++)
		dc[d] = arena_printf(e->a, "c%d", d);
	for (d = 0, dd = 0; d < SB->ndim; d++) {
		if (d == dim) {
			idx[d] = (char *)"tl_k";
			dd += keep;
			continue;
		}
		idx[d] = dc[dd++];
	}
	buf_init(&b);
	buf_printf(&b, "%s[", bufptr(e, sb));
	smemoff(e, sb, idx, &b);
	buf_putc(&b, ']');
	v = redval(e, op, ct, conv(e, buf_str(&b), SB->dtype, ct));
	line(e, "%s tl_a = %s;", ty, ident);
	line(e, "for (int tl_k = 0; tl_k < %lld; tl_k++)", (long long)S);
	line(e, "\ttl_a = %s;", redop(e, op, ct, "tl_a", v));
	buf_reset(&b);
	if (DB->scope == MEM_LOCAL) {
		buf_printf(&b, "%s[g]", DB->name);
	} else {
		buf_printf(&b, "%s[", bufptr(e, db));
		smemoff(e, db, dc, &b);
		buf_putc(&b, ']');
	}
	old = conv(e, buf_str(&b), DB->dtype, ct);
	res = st->u.reduce.clear ? "tl_a" : redop(e, op, ct, old, "tl_a");
	line(e, "%s = %s;", buf_str(&b), conv(e, res, ct, DB->dtype));
	buf_free(&b);
	if (DB->scope == MEM_SHARED && NY % T)
		e->ind--, line(e, "}");
	e->ind--;
	line(e, "}");
	if (DB->scope == MEM_LOCAL && e->frag[db]->nthreads < T)
		e->ind--, line(e, "}");
	e->ind--;
	line(e, "}");
	if (DB->scope == MEM_SHARED)
		line(e, "__syncthreads();");
	return 0;
}

static int
reduce(Em *e, const IrStmt *st)
{
	const IrKernel *k = e->k;
	int sb = st->u.reduce.src, db = st->u.reduce.dst, id = e->tmp++, kb, nw = 0, i;
	const IrBuffer *SB = &k->bufs[sb], *DB = &k->bufs[db];
	ReduceOp op = st->u.reduce.op;
	DType ct = calctype(DB->dtype);
	const char *ty = ctype(ct), *ident = redident(op, ct);
	char r[32], red[32], *v, *rep = NULL;
	unsigned lanes, warps, full;
	RedPlan p;
	int64_t s, NC, m, wl[32];
	int W, lb;

	if (SB->scope != MEM_LOCAL || DB->scope != MEM_LOCAL)
		return smemreduce(e, st);
	if (!ident || calctype(SB->dtype) != ct)
		return err_set(e->err, "reduce: element types %s -> %s are not lowered",
			       dtype_name(SB->dtype), dtype_name(DB->dtype));
	if (reduce_plan(e->a, e->frag[sb], e->frag[db], st->u.reduce.dim, op == RED_SUM, k->threads, &p,
			e->err)) {
		char msg[sizeof e->err->msg];

		snprintf(msg, sizeof msg, "%s", e->err->msg);
		return err_set(e->err, "reduce %s -> %s: %s", SB->name, DB->name, msg);
	}
	/* lane bits below the target's warp size combine by shuffles, warp bits in smem */
	W = e->t->warp_size, lb = W == 64 ? 6 : 5;
	lanes = p.mask & (unsigned)(W - 1), warps = p.mask & ~(unsigned)(W - 1);
	full = p.T >= 32 ? 0xffffffffu : (unsigned)((1ull << p.T) - 1);
	snprintf(r, sizeof r, "tl_r%d", id);
	snprintf(red, sizeof red, "tl_red%d", id);
	line(e, "{ // reduce %s %s -> %s dim %d: %lld slots into %lld, shuffles xor 0x%x, warps xor 0x%x",
	     reduceop_name(op), SB->name, DB->name, st->u.reduce.dim, (long long)p.S, (long long)p.SG,
	     lanes, warps >> lb);
	e->ind++;
	line(e, "%s %s[%lld];", ty, r, (long long)p.SG);
	line(e, "#pragma unroll");
	line(e, "for (int g = 0; g < %lld; g++)", (long long)p.SG);
	line(e, "\t%s[g] = %s;", r, ident);
	if (op == RED_SUM && e->frag[sb]->rep > 1)
		rep = ixstr(e, e->coord[sb][e->frag[sb]->nin], slotnames);
	v = conv(e, arena_printf(e->a, "%s[s]", SB->name), SB->dtype, ct);
	v = redval(e, op, ct, rep ? arena_printf(e->a, "(%s == 0 ? %s : (%s)0)", rep, v, ty) : v);
	if (p.gx) {
		char *gx = ixstr(e, p.gx, slotnames), *ri = arena_printf(e->a, "%s[%s]", r, gx);

		line(e, "#pragma unroll");
		line(e, "for (int s = 0; s < %lld; s++)", (long long)p.S);
		line(e, "\t%s = %s;", ri, redop(e, op, ct, ri, v));
	} else {
		for (s = 0; s < p.S; s++) {
			char *ri, *vs;

			if (p.gs[s] < 0)
				continue;
			ri = arena_printf(e->a, "%s[%d]", r, p.gs[s]);
			vs = conv(e, arena_printf(e->a, "%s[%lld]", SB->name, (long long)s), SB->dtype, ct);
			if (rep)
				vs = arena_printf(e->a, "(%s == 0 ? %s : (%s)0)", ixstr(e,
						  iexpr_subst(e->a, e->coord[sb][e->frag[sb]->nin],
							      (IExpr *[IEXPR_NVARS]){iexpr_const(e->a, s)}, NULL),
						  slotnames), vs, ty);
			line(e, "%s = %s;", ri, redop(e, op, ct, ri, redval(e, op, ct, vs)));
		}
	}
	if (lanes) {
		line(e, "#pragma unroll");
		line(e, "for (int g = 0; g < %lld; g++) {", (long long)p.SG);
		for (m = 1; m < W; m <<= 1)
			if (lanes & m)
				line(e, "\t%s[g] = %s;", r, redop(e, op, ct, arena_printf(e->a, "%s[g]", r),
					arena_printf(e->a, "__shfl_xor_sync(0x%x, %s[g], %lld)", full, r,
						     (long long)m)));
		line(e, "}");
	}
	if (warps) {
		/* lanes 0..2^kb-1 hold the same partials: one slot of shared memory per group */
		for (kb = 0; kb < lb && (lanes >> kb & 1); kb++)
			;
		NC = ((p.T - 1) >> kb) + 1;
		for (m = 0; m < p.T; m += W)
			if ((m & ~(int64_t)warps) == 0)
				wl[nw++] = m;
		line(e, "static __shared__ %s %s[%lld];", ty, red, (long long)(p.SG * NC));
		e->static_smem += p.SG * NC * dtype_bytes(ct);
		if (kb)
			line(e, "if ((tid & %d) == 0) {", (1 << kb) - 1), e->ind++;
		line(e, "#pragma unroll");
		line(e, "for (int g = 0; g < %lld; g++)", (long long)p.SG);
		line(e, "\t%s[g * %lld + (tid >> %d)] = %s[g];", red, (long long)NC, kb, r);
		if (kb)
			e->ind--, line(e, "}");
		line(e, "__syncthreads();");
		line(e, "#pragma unroll");
		line(e, "for (int g = 0; g < %lld; g++) {", (long long)p.SG);
		line(e, "\t%s tl_v = %s[g * %lld + (tid >> %d)];", ty, red, (long long)NC, kb);
		for (i = 1; i < nw; i++)
			line(e, "\ttl_v = %s;", redop(e, op, ct, "tl_v",
						     arena_printf(e->a, "%s[g * %lld + ((tid ^ %lld) >> %d)]", red,
								  (long long)NC, (long long)wl[i], kb)));
		line(e, "\t%s[g] = tl_v;", r);
		line(e, "}");
		line(e, "__syncthreads();");
	}
	line(e, "#pragma unroll");
	line(e, "for (int g = 0; g < %lld; g++)", (long long)p.SG);
	if (st->u.reduce.clear)
		line(e, "\t%s[g] = %s;", DB->name, conv(e, arena_printf(e->a, "%s[g]", r), ct, DB->dtype));
	else
		line(e, "\t%s[g] = %s;", DB->name,
		     conv(e, redop(e, op, ct, conv(e, arena_printf(e->a, "%s[g]", DB->name), DB->dtype, ct),
				   arena_printf(e->a, "%s[g]", r)), ct, DB->dtype));
	e->ind--;
	line(e, "}");
	return 0;
}

/* ---- statements ----------------------------------------------------------------- */

static int stmts(Em *e, Buf *chk, const IrStmt *s);
static int stmt1(Em *e, Buf *chk, const IrStmt *s);
static int loopbody(Em *e, Buf *chk, const IrStmt *body);
static void sh_clear(Em *e);
static int stmt_synced(Em *e, Buf *chk, const IrStmt *s);
static void sh_stmts(const Em *e, const IrStmt *s, unsigned char *rd, unsigned char *wr, int one);

/* does region r cover its whole buffer? */
static int
wholeregion(const Em *e, const Region *r)
{
	const IrBuffer *B = &e->k->bufs[r->buf];
	int64_t c;
	int d;

	for (d = 0; d < r->ndim; d++)
		if (!ir_is_const(r->off[d], &c) || c || r->ext[d] != B->dims[d].c)
			return 0;
	return 1;
}

/* fill of shared or global memory: every thread takes elements tid, tid + T, ...
 * of the region (row-major over its non-unit extents), global ones guarded */
static int
memfill(Em *e, const IrStmt *st, const char *v)
{
	const Region *r = &st->u.fill.dst;
	const IrBuffer *B = &e->k->bufs[r->buf];
	int64_t ext[IR_MAXDIM], n = 1, T = e->k->threads, iters, div;
	int nn = nest_shape(st, ext), k;
	char *cs[IR_MAXDIM], *g;

	for (k = 0; k < nn; k++)
		n *= ext[k];
	iters = (n + T - 1) / T;
	line(e, "// fill %s %s", memscope_name(B->scope), B->name);
	if (iters <= 64)
		line(e, "#pragma unroll");
	line(e, "for (int it = 0; it < %lld; it++) {", (long long)iters);
	e->ind++;
	line(e, "const int q = tid + it * %lld;", (long long)T);
	for (k = nn - 1, div = 1; k >= 0; div *= ext[k], k--) {
		cs[k] = arena_printf(e->a, "c%d", k);
		line(e, "const int c%d = q / %lld %% %lld;", k, (long long)div, (long long)ext[k]);
	}
	g = regguard(e, r, cs, nn, 1);
	if (n % T)
		g = arena_printf(e->a, "q < %lld%s%s", (long long)n, g ? " && " : "", g ? g : "");
	if (g)
		line(e, "if (%s)", g), e->ind++;
	line(e, "*(%s) = %s;", memaddr(e, r, cs, nn), v);
	if (g)
		e->ind--;
	e->ind--;
	line(e, "}");
	if (B->scope == MEM_SHARED)
		line(e, "__syncthreads();");
	return 0;
}

static int
fill(Em *e, const IrStmt *st)
{
	const Region *r = &st->u.fill.dst;
	const IrBuffer *B = &e->k->bufs[r->buf];
	IExpr **co = e->coord[r->buf];
	char *v, *g = NULL;
	int d;

	v = conv(e, exprstr(e, st->u.fill.value), calctype(st->u.fill.value->type), B->dtype);
	if (B->scope != MEM_LOCAL)
		return memfill(e, st, v);
	if (wholeregion(e, r)) {
		line(e, "#pragma unroll");
		line(e, "for (int s = 0; s < %lld; s++)", (long long)e->slots[r->buf]);
		line(e, "\t%s[s] = %s;", B->name, v);
		return 0;
	}
	/* part of a local buffer: the slots whose coordinates lie in the region */
	line(e, "#pragma unroll");
	line(e, "for (int s = 0; s < %lld; s++) {", (long long)e->slots[r->buf]);
	e->ind++;
	for (d = 0; d < r->ndim; d++) {
		char *o = exprstr(e, r->off[d]), *c = ixstr(e, co[d], slotnames);

		if (r->ext[d] == B->dims[d].c)
			continue;
		g = arena_printf(e->a, "%s%s%s >= %s && %s < %s + %lld", g ? g : "", g ? " && " : "", c, o, c,
				 o, (long long)r->ext[d]);
	}
	line(e, "if (%s)", g);
	line(e, "\t%s[s] = %s;", B->name, v);
	e->ind--;
	line(e, "}");
	return 0;
}

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

static Held *
heldtab(Em *e, int buf)
{
	const Fragment *F = e->frag[buf];
	IExpr **co = e->coord[buf];
	int64_t vals[IEXPR_NVARS] = {0}, x, t, s, y, NY = layout_size(F), R = F->rep, pairs;
	Held *h;
	int d;

	if (ck_mul(NY, R, &pairs) || pairs > layout_enum_limit() ||
	    ck_mul(F->nthreads, e->slots[buf], &x) || x > layout_enum_limit()) {
		err_set(e->err, "local '%s': %lld elements held %lld times (%lld threads x %lld slots) is "
			"past the %lld (thread, slot) pairs the lowering checks; use a smaller tile per "
			"block", e->k->bufs[buf].name, (long long)NY, (long long)R, (long long)F->nthreads,
			(long long)e->slots[buf], (long long)layout_enum_limit());
		return NULL;
	}
	h = anew(e->a, Held);
	h->NY = NY, h->R = R;
	h->thr = anewn(e->a, int32_t, (size_t)pairs);
	h->cnt = anewn(e->a, int32_t, (size_t)NY);
	h->mark = anewn(e->a, unsigned char, (size_t)pairs);
	for (t = 0; t < F->nthreads; t++)
		for (s = 0; s < e->slots[buf]; s++) {
			vals[0] = s, vals[1] = t, y = 0;
			for (d = 0; d < F->nin; d++) {
				if (iexpr_eval(co[d], vals, &x, e->err))
					return NULL;
				y = y * F->in_shape[d] + x;
			}
			if (y < 0 || y >= NY || h->cnt[y] >= R) {
				err_set(e->err, "local '%s': element %lld has more holders than its %lld "
					"replicas", e->k->bufs[buf].name, (long long)y, (long long)R);
				return NULL;
			}
			h->thr[y * R + h->cnt[y]++] = (int32_t)t;
		}
	return h;
}

/* the index of thread t among the holders of element y, or -1 */
static int64_t
held_by(const Held *h, int64_t y, int64_t t)
{
	int64_t k;

	for (k = 0; k < h->cnt[y]; k++)
		if (h->thr[y * h->R + k] == t)
			return y * h->R + k;
	return -1;
}

/* copy between local buffers of one shape, through registers: every thread must
 * hold each element it receives, at a slot that does not depend on the thread */
static int
localcopy(Em *e, const IrStmt *st)
{
	int sb = st->u.copy.src.buf, db = st->u.copy.dst.buf, d;
	const IrBuffer *SB = &e->k->bufs[sb], *DB = &e->k->bufs[db];
	const Fragment *FS = e->frag[sb], *FD = e->frag[db];
	IExpr **cd = e->coord[db], *sub[IEXPR_NVARS] = {0}, *slot;
	int64_t vals[IEXPR_NVARS] = {0}, x, t, g, y, SD = e->slots[db], r0, r;
	Held *held;
	IDom dom = {{0}};

	if (!wholeregion(e, &st->u.copy.src) || !wholeregion(e, &st->u.copy.dst) || SB->ndim != DB->ndim)
		return err_set(e->err, "copy %s -> %s: local buffers are copied whole, between equal shapes",
			       SB->name, DB->name);
	for (d = 0; d < SB->ndim; d++)
		if (SB->dims[d].c != DB->dims[d].c)
			return err_set(e->err, "copy %s -> %s: local buffers are copied whole, between equal "
				       "shapes", SB->name, DB->name);
	if (!(held = heldtab(e, sb)))
		return -1;
	for (d = 0; d < FS->nin; d++)
		sub[d] = cd[d];
	dom.ext[0] = SD, dom.ext[1] = e->k->threads;
	if (!(slot = iexpr_subst(e->a, FS->fwd[0], sub, &dom)))
		return err_set(e->err, "copy %s -> %s: out of memory", SB->name, DB->name);
	for (t = 0; t < FD->nthreads; t++)
		for (g = 0; g < SD; g++) {
			vals[0] = g, vals[1] = t, y = 0;
			for (d = 0; d < FD->nin; d++) {
				if (iexpr_eval(cd[d], vals, &x, e->err))
					return -1;
				y = y * FD->in_shape[d] + x;
			}
			if (t >= FS->nthreads || held_by(held, y, t) < 0)
				return err_set(e->err, "copy %s -> %s: thread %lld receives an element of '%s' "
					       "that it does not hold in '%s' (the layouts differ across threads: "
					       "convert through shared memory)", SB->name, DB->name,
					       (long long)t, DB->name, SB->name);
			vals[1] = 0;
			if (iexpr_eval(slot, vals, &r0, e->err))
				return -1;
			vals[1] = t;
			if (iexpr_eval(slot, vals, &r, e->err))
				return -1;
			if (r != r0)
				return err_set(e->err, "copy %s -> %s: the source slot of an element depends on "
					       "the thread (registers cannot be indexed by thread)", SB->name,
					       DB->name);
		}
	line(e, "// copy %s -> %s in registers", SB->name, DB->name);
	line(e, "#pragma unroll");
	line(e, "for (int s = 0; s < %lld; s++)", (long long)SD);
	line(e, "\t%s[s] = %s;", DB->name,
	     conv(e, arena_printf(e->a, "%s[%s]", SB->name, ixstr(e, slot, slotnames)), SB->dtype,
		  DB->dtype));
	return 0;
}

/* the slot of local buffer buf at the nest's coordinates, as an expression in
 * (s, tid), checked to be owned by the thread; NULL if the indices are not plain loop vars */
static char *
parslot(Em *e, const IrStmt *par, IExpr *const *pc, int buf, int n, IrExpr *const *idx)
{
	const Fragment *F = e->frag[buf];
	IExpr *sub[IEXPR_NVARS] = {0}, *slot;
	IDom dom = {{0}};
	int d, i;

	if (!F || n != F->nin)
		return NULL;
	for (d = 0; d < n; d++) {
		if (idx[d]->kind != IE_VAR)
			return NULL;
		for (i = 0; i < par->u.par.n; i++)
			if (par->u.par.vars[i] == idx[d]->u.var)
				break;
		if (i == par->u.par.n)
			return NULL;
		sub[d] = pc[i];
	}
	dom.ext[0] = e->parS;
	dom.ext[1] = e->k->threads;
	if (!(slot = iexpr_subst(e->a, F->fwd[0], sub, &dom)))
		return NULL;
	/* the usual case: the buffer and the nest share the layout, the slot is s */
	{
		int64_t vals[IEXPR_NVARS] = {0}, v;
		int same = 1;

		for (vals[1] = 0; same && vals[1] < e->k->threads; vals[1]++)
			for (vals[0] = 0; same && vals[0] < e->parS; vals[0]++)
				if (iexpr_eval(slot, vals, &v, NULL) || v != vals[0])
					same = 0;
		if (same)
			return "s";
	}
	return ixstr(e, slot, slotnames);
}

/* check that the nest's thread for every (s, tid) owns the local element (some
 * replica of it: a table of the elements each thread holds, from the inverse) */
static int
owned(Em *e, const IrStmt *par, const Fragment *LF, IExpr *const *pc, int64_t S, int buf,
      int n, IrExpr *const *idx, int store)
{
	const Fragment *F = e->frag[buf];
	int64_t vals[IEXPR_NVARS] = {0}, x, t, s, y, k, NY = layout_size(F);
	unsigned char *any = NULL;
	Held *held;
	int d, i;

	if (!(held = heldtab(e, buf)))
		return -1;
	/* the check below walks the nest's coordinates: every index must be a nest variable */
	for (d = 0; d < n; d++) {
		for (i = 0; i < par->u.par.n; i++)
			if (idx[d]->kind == IE_VAR && par->u.par.vars[i] == idx[d]->u.var)
				break;
		if (i == par->u.par.n)
			return err_set(e->err, "local '%s': index %d in the parallel nest is not one of the nest's "
				       "variables (not lowered yet)", e->k->bufs[buf].name, d);
	}
	if (store)
		any = anewn(e->a, unsigned char, NY);
	for (t = 0; t < LF->nthreads; t++)
		for (s = 0; s < S; s++) {
			vals[0] = s, vals[1] = t, y = 0;
			for (d = 0; d < n; d++) {
				for (i = 0; par->u.par.vars[i] != idx[d]->u.var; i++)
					;
				if (iexpr_eval(pc[i], vals, &x, e->err))
					return -1;
				y = y * F->in_shape[d] + x;
			}
			if (t >= F->nthreads || held_by(held, y, t) < 0)
				return err_set(e->err, "local '%s': an element is used by thread %lld of the "
					       "parallel nest, which does not hold it (layouts disagree)",
					       e->k->bufs[buf].name, (long long)t);
			if (store) {
				for (k = 0; k < held->cnt[y]; k++)
					if (held->thr[y * held->R + k] == t)
						held->mark[y * held->R + k] = 1;
				any[y] = 1;
			}
		}
	/* a store must reach every replica of what it writes */
	for (y = 0; store && y < NY; y++)
		for (k = 0; any[y] && k < held->cnt[y]; k++)
			if (!held->mark[y * held->R + k])
				return err_set(e->err, "local '%s': thread %lld holds a replica of an element the "
					       "parallel nest writes but does not write it there (the nest's "
					       "layout must cover every replica)", e->k->bufs[buf].name,
					       (long long)held->thr[y * held->R + k]);
	return 0;
}

/* rewrite local accesses of a parallel body through the nest coordinates */
typedef struct ParCtx {
	const IrStmt *par;
	const Fragment *LF;
	IExpr **pc;
	int64_t S;
} ParCtx;

static int
parexpr(Em *e, ParCtx *pcx, const IrExpr *x)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		if (e->k->bufs[x->u.load.buf].scope == MEM_LOCAL &&
		    owned(e, pcx->par, pcx->LF, pcx->pc, pcx->S, x->u.load.buf, x->u.load.n, x->u.load.idx, 0))
			return -1;
		return 0;
	case IE_UNARY: return parexpr(e, pcx, x->u.un.a);
	case IE_BINARY: return parexpr(e, pcx, x->u.bin.a) || parexpr(e, pcx, x->u.bin.b) ? -1 : 0;
	case IE_SELECT:
		return parexpr(e, pcx, x->u.sel.c) || parexpr(e, pcx, x->u.sel.a) ||
		       parexpr(e, pcx, x->u.sel.b) ? -1 : 0;
	case IE_CAST: return parexpr(e, pcx, x->u.cast.a);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (parexpr(e, pcx, x->u.call.args[i]))
				return -1;
		return 0;
	default: return 0;
	}
}

/* does expression x read buffer buf? */
static int
expr_reads(const IrExpr *x, int buf)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		if (x->u.load.buf == buf)
			return 1;
		for (i = 0; i < x->u.load.n; i++)
			if (expr_reads(x->u.load.idx[i], buf))
				return 1;
		return 0;
	case IE_UNARY: return expr_reads(x->u.un.a, buf);
	case IE_BINARY: return expr_reads(x->u.bin.a, buf) || expr_reads(x->u.bin.b, buf);
	case IE_SELECT:
		return expr_reads(x->u.sel.c, buf) || expr_reads(x->u.sel.a, buf) || expr_reads(x->u.sel.b, buf);
	case IE_CAST: return expr_reads(x->u.cast.a, buf);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (expr_reads(x->u.call.args[i], buf))
				return 1;
		return 0;
	default: return 0;
	}
}

/* does a parallel nest's body (with what it nests) read buffer buf? */
static int
body_reads(const IrStmt *s, int buf)
{
	int i;

	for (; s; s = s->next)
		switch (s->kind) {
		case S_STORE:
			if (expr_reads(s->u.store.value, buf))
				return 1;
			for (i = 0; i < s->u.store.n; i++)
				if (expr_reads(s->u.store.idx[i], buf))
					return 1;
			break;
		case S_LET: case S_SET:
			if (expr_reads(s->u.let.value, buf))
				return 1;
			break;
		case S_IF:
			if (expr_reads(s->u.cond.cond, buf) || body_reads(s->u.cond.then, buf) ||
			    body_reads(s->u.cond.els, buf))
				return 1;
			break;
		default: break;
		}
	return 0;
}

/* the first store into buf nested in an if of body s (NULL when every one is at its top level) */
static const IrStmt *
nested_store(const IrStmt *s, int buf, int depth)
{
	const IrStmt *r;

	for (; s; s = s->next) {
		if (s->kind == S_STORE && s->u.store.buf == buf && depth)
			return s;
		if (s->kind == S_IF && ((r = nested_store(s->u.cond.then, buf, depth + 1)) ||
					(r = nested_store(s->u.cond.els, buf, depth + 1))))
			return r;
	}
	return NULL;
}

static int
stores_into(const IrStmt *s, int buf)
{
	for (; s; s = s->next)
		if ((s->kind == S_STORE && s->u.store.buf == buf) ||
		    (s->kind == S_IF && (stores_into(s->u.cond.then, buf) || stores_into(s->u.cond.els, buf))))
			return 1;
	return 0;
}

/*
 * A replicated loop layout runs each point in several threads and replica 0 alone
 * stores shared and global elements. When the body also reads a buffer it stores
 * into, the other replicas' reads of the point's element must come before replica
 * 0's store and their reads after it must see the new value: each such store is
 * done between two barriers (iterations of a nest are independent, docs/semantics.md,
 * so one point's store only meets the replicas of that point). The barriers need
 * every thread of the block in the loop: the store must be at the top of the body
 * and the layout must span the block.
 */
static int
plan_parsync(Em *e, const IrStmt *st, const Fragment *LF, int64_t S, unsigned char *sync)
{
	int64_t ext[IR_MAXDIM], pts = 1, nrep;
	int b, n = nest_shape(st, ext), i;
	const IrStmt *bad;

	for (i = 0; i < n; i++)
		pts *= ext[i];
	nrep = pts > 0 ? LF->nthreads * S / pts : LF->rep;   /* threads per point */
	for (b = 0; b < e->k->nbuf; b++) {
		const IrBuffer *B = &e->k->bufs[b];

		if (B->scope == MEM_LOCAL || !stores_into(st->u.par.body, b) || !body_reads(st->u.par.body, b))
			continue;
		if ((bad = nested_store(st->u.par.body, b, 0))) {
			err_loc(e->err, bad->loc);
			return err_set(e->err, "a parallel nest whose loop layout is replicated (%lld threads run "
				       "each point) reads %s '%s' and stores into it inside an if: the store "
				       "needs barriers around it, which threads skipping the if would not "
				       "reach; write the store outside the if (with select(...))",
				       (long long)nrep, B->scope == MEM_SHARED ? "shared" : "tensor", B->name);
		}
		if (LF->nthreads < e->k->threads)
			return err_set(e->err, "a parallel nest whose loop layout is replicated (%lld threads run "
				       "each point) over %lld of the block's %d threads reads '%s' and stores "
				       "into it: the store needs barriers that the other threads would not reach",
				       (long long)nrep, (long long)LF->nthreads, (int)e->k->threads, B->name);
		sync[b] = 1;
	}
	return 0;
}

static int
parallel(Em *e, Buf *chk, const IrStmt *st)
{
	int64_t ext[IR_MAXDIM], S;
	int n = nest_shape(st, ext), i;
	const Fragment *LF = st->loop_layout;
	IExpr **pc;
	const IrStmt *b;
	ParCtx pcx;

	if (!LF && !(LF = defaultfrag(e, ext, n)))
		return -1;
	if (!(pc = fragcoords(e, LF, &S)))
		return -1;
	e->parsync = NULL;
	if (LF->rep > 1) {
		e->parsync = anewn(e->a, unsigned char, e->k->nbuf + 1);
		if (plan_parsync(e, st, LF, S, e->parsync))
			return -1;
	}
	pcx.par = st, pcx.LF = LF, pcx.pc = pc, pcx.S = S;
	for (b = st->u.par.body; b; b = b->next) {
		if ((b->kind == S_LET || b->kind == S_SET) && parexpr(e, &pcx, b->u.let.value))
			return -1;
		if (b->kind == S_STORE) {
			if (parexpr(e, &pcx, b->u.store.value))
				return -1;
			if (e->k->bufs[b->u.store.buf].scope == MEM_LOCAL &&
			    owned(e, st, LF, pc, S, b->u.store.buf, b->u.store.n, b->u.store.idx, 1))
				return -1;
		}
	}
	/* a loop layout over fewer threads than the block's: the others have no point */
	if (LF->nthreads < e->k->threads) {
		line(e, "if (tid < %lld) {", (long long)LF->nthreads);
		e->ind++;
	}
	line(e, "#pragma unroll");
	line(e, "for (int s = 0; s < %lld; s++) {", (long long)S);
	e->ind++;
	for (i = 0; i < n; i++)
		line(e, "const int %s = %s;", vname(e, st->u.par.vars[i]), ixstr(e, pc[i], slotnames));
	/* the body reads most points through the fragment's slot s, not through the
	 * coordinates: marked used, so that nvcc (#177-D) and clang -Wall stay quiet */
	if (n > 0) {
		Buf u;

		buf_init(&u);
		for (i = 0; i < n; i++)
			buf_printf(&u, "%s(void)%s", i ? ", " : "", vname(e, st->u.par.vars[i]));
		line(e, "%s;", buf_str(&u));
		buf_free(&u);
	}
	e->par = st, e->parpc = pc, e->parS = S;
	/* a replicated loop layout runs each point in LF->rep threads: only replica 0 writes
	 * shared or global memory (a read-modify-write by every replica would race) */
	e->parrep = LF->rep > 1 ? ixstr(e, pc[n], slotnames) : NULL;
	i = stmts(e, chk, st->u.par.body);
	e->par = NULL, e->parpc = NULL, e->parrep = NULL, e->parsync = NULL;
	if (i)
		return -1;
	e->ind--;
	line(e, "}");
	if (LF->nthreads < e->k->threads) {
		e->ind--;
		line(e, "}");
	}
	return 0;
}

static int
store(Em *e, const IrStmt *st)
{
	Buf b;
	const IrBuffer *B = &e->k->bufs[st->u.store.buf];

	char *g = elemguard(e, B, st->u.store.n, st->u.store.idx);

	if (e->par && e->parrep && B->scope != MEM_LOCAL)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "", e->parrep);
	/* a statement outside parallel nests runs once for the block: every thread computes it
	 * (locals are replicated), thread 0 alone writes shared or global memory, so that a
	 * read-modify-write is not done by every thread (the barrier before the next reader
	 * comes from the hazard tracking) */
	if (!e->par && B->scope != MEM_LOCAL)
		g = arena_printf(e->a, "%s%stid == 0", g ? g : "", g ? " && " : "");
	/* a global element outside the tensor is not written (docs/semantics.md) */
	buf_init(&b);
	access(e, &b, st->u.store.buf, st->u.store.n, st->u.store.idx);
	if (e->par && e->parrep && e->parsync && e->parsync[st->u.store.buf]) {
		/* the replicas read the point's old value before the store, and the new one after
		 * it (plan_parsync) */
		line(e, "{ // '%s' is read by every replica of this point: stored between barriers", B->name);
		e->ind++;
		line(e, "const %s tl_st = %s;", ctype(B->dtype),
		     conv(e, exprstr(e, st->u.store.value), calctype(st->u.store.value->type), B->dtype));
		line(e, "__syncthreads();");
		if (g)
			line(e, "if (%s)", g), e->ind++;
		line(e, "%s = tl_st;", buf_str(&b));
		if (g)
			e->ind--;
		line(e, "__syncthreads();");
		e->ind--;
		line(e, "}");
		buf_free(&b);
		return 0;
	}
	if (g)
		line(e, "if (%s)", g), e->ind++;
	line(e, "%s = %s;", buf_str(&b),
	     conv(e, exprstr(e, st->u.store.value), calctype(st->u.store.value->type), B->dtype));
	if (g)
		e->ind--;
	buf_free(&b);
	return 0;
}

/* ---- gemm on sm_90a: wgmma.mma_async m64nNk16 from shared-memory descriptors ---------- */

/* a descriptor for operand buf at element (r, c), whose row r % 8 == 0 starts a swizzle atom */
static int
wgdesc(Em *e, const char *name, int buf, const char *r, const char *c, int64_t lbo, int64_t sbo,
       int type)
{
	char *ix[2];
	Buf b;

	ix[0] = (char *)r, ix[1] = (char *)c;
	buf_init(&b);
	if (smemoff(e, buf, ix, &b)) {
		buf_free(&b);
		return -1;
	}
	line(e, "const tl_u64 %s = tl_wgmma_desc(&%s[%s], %lld, %lld, %d);", name, bufptr(e, buf),
	     buf_str(&b), (long long)lbo, (long long)sbo, type);
	buf_free(&b);
	return 0;
}

static int
gemm_wgmma(Em *e, const IrStmt *st, const GemmPlan *p)
{
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	const SmemBuf *sa = smem_find(&e->sp, st->u.gemm.a.buf), *sb = smem_find(&e->sp, st->u.gemm.b.buf);
	int64_t atom_a, atom_b, lbo_b, pw_b, kk;
	int mi, ni, nreg = p->inst_n / 2;
	char rs[64], cs[64];
	Buf b;

	if (p->trans_a || p->elem_bits != 16 || !sa || !sb || A->ndim != 2 || B->ndim != 2 ||
	    Cb->ndim != 2 || p->acc_type != DT_F32)
		return err_set(e->err, "gemm: wgmma lowers only f16/bf16 A[M,K] x B[K,N] or B[N,K] from shared "
			       "memory into an f32 accumulator");
	if (sa->kind != SMEM_SWIZZLE || sb->kind != SMEM_SWIZZLE || sa->mode == SWZ_NONE ||
	    (!p->trans_b && sb->mode != SWZ_128B))
		return err_set(e->err, "gemm: wgmma needs swizzled shared operands (A %s, B %s; an N-major B "
			       "needs the 128B swizzle)", swizzle_name(sa->mode), swizzle_name(sb->mode));
	if (e->frag[st->u.gemm.c.buf] != p->acc && layout_equal(e->frag[st->u.gemm.c.buf], p->acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	atom_a = swizzle_alignment(sa->mode);   /* 8 rows of one swizzle panel, in bytes */
	atom_b = swizzle_alignment(sb->mode);
	pw_b = swizzle_bytes(sb->mode) / 2;     /* panel width in elements */
	lbo_b = p->trans_b ? 16 : p->K / 8 * atom_b;
	if (!p->trans_b && (p->wg_cols % pw_b || (p->inst_n % pw_b && p->inst_n > pw_b)))
		return err_set(e->err, "gemm: wgmma N tile %d does not cover whole %lld-column panels",
			       p->inst_n, (long long)pw_b);
	line(e, "// gemm %s: wgmma m64n%dk16, warpgroups %dx%d, %dx%d instructions per warpgroup", Cb->name,
	     p->inst_n, p->wg_m, p->wg_n, p->rep_m, p->rep_n);
	line(e, "{");
	e->ind++;
	line(e, "const int wgm = warp / 4 %% %d, wgn = warp / 4 / %d;", p->wg_m, p->wg_m);
	if (!e->wg_inflight) {
		line(e, "tl_fence_proxy_async();");
		line(e, "__syncthreads();");
	}
	line(e, "tl_wgmma_fence();");
	buf_init(&b);
	for (kk = 0; kk < p->K; kk += 16)
		for (mi = 0; mi < p->rep_m; mi++)
			for (ni = 0; ni < p->rep_n; ni++) {
				line(e, "{");
				e->ind++;
				snprintf(rs, sizeof rs, "(wgm * %lld + %d)", (long long)p->wg_rows, mi * 64);
				snprintf(cs, sizeof cs, "%lld", (long long)kk);
				if (wgdesc(e, "da", st->u.gemm.a.buf, rs, cs, 16, atom_a,
					   swizzle_wgmma_layout_type(sa->mode)))
					goto fail;
				snprintf(cs, sizeof cs, "(wgn * %lld + %d)", (long long)p->wg_cols, ni * p->inst_n);
				snprintf(rs, sizeof rs, "%lld", (long long)kk);
				if (p->trans_b ? wgdesc(e, "db", st->u.gemm.b.buf, cs, rs, 16, atom_b,
							swizzle_wgmma_layout_type(sb->mode))
					       : wgdesc(e, "db", st->u.gemm.b.buf, rs, cs, lbo_b, atom_b,
							swizzle_wgmma_layout_type(sb->mode)))
					goto fail;
				/* tilec_cuda.h: wgmma.mma_async m64nNk16 on this thread's N/2 accumulators */
				line(e, "tl_wgmma_%s<%d, %d>(&%s[%d], da, db); // m64n%dk16, B %s-major",
				     p->ab_type == DT_BF16 ? "bf16" : "f16", p->inst_n, p->trans_b ? 0 : 1, Cb->name,
				     (mi * p->rep_n + ni) * nreg, p->inst_n, p->trans_b ? "K" : "N");
				buf_reset(&b);
				e->ind--;
				line(e, "}");
			}
	line(e, "tl_wgmma_commit();");
	if (e->wg_inflight == 2)
		line(e, "tl_wgmma_wait1();   // this group stays in flight; the pipeline waits for it");
	else
		line(e, "tl_wgmma_wait0();");
	e->ind--;
	line(e, "}");
	buf_free(&b);
	return 0;
fail:
	buf_free(&b);
	return -1;
}

/* gemm_plan for st, memoised per kernel: planning builds and checks fragments */
static int
plan_of(Em *e, const IrStmt *st, GemmPlan *p, Err *err)
{
	int i;

	for (i = 0; i < e->nplan; i++)
		if (e->plan_st[i] == st) {
			*p = e->plan[i];
			return 0;
		}
	if (gemm_plan(e->a, e->t, e->k, st, p, err))
		return -1;
	if (e->nplan < (int)(sizeof e->plan / sizeof e->plan[0])) {
		e->plan_st[e->nplan] = st;
		e->plan[e->nplan++] = *p;
	}
	return 0;
}

/* ---- gemm: ldmatrix + mma.sync over the plan ---------------------------------- */

static int gemm_amd(Em *e, const IrStmt *st, const GemmPlan *p);

static int
gemm(Em *e, const IrStmt *st)
{
	GemmPlan p;
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	int64_t wm, wn;
	int mi, nj, ni;
	char *ia[2], *ib[2];
	Buf b;

	if (plan_of(e, st, &p, e->err))
		return -1;
	if (st->u.gemm.clear) {
		/* clear = true: C = A * B, the accumulator zeroed first (an in-flight wgmma group
		 * still writes it: retire it before) */
		if (p.instr == GEMM_WGMMA && e->wg_inflight == 2)
			line(e, "tl_wgmma_wait0(); // clear = true: the group in flight writes %s", Cb->name);
		line(e, "#pragma unroll");
		line(e, "for (int s = 0; s < %lld; s++) // clear = true", (long long)e->slots[st->u.gemm.c.buf]);
		line(e, "\t%s[s] = 0;", Cb->name);
	}
	if (p.instr == GEMM_WGMMA)
		return gemm_wgmma(e, st, &p);
	if (p.instr == GEMM_MFMA || p.instr == GEMM_WMMA)
		return gemm_amd(e, st, &p);
	if (p.instr != GEMM_MMA_SYNC)
		return err_set(e->err, "gemm: %s emission is not implemented yet (use --arch=sm_90 or sm_80)",
			       gemm_instr_name(p.instr));
	if (p.trans_a || p.elem_bits != 16 || !p.a_shared || !p.b_shared ||
	    p.rep_n % 2 || A->ndim != 2 || B->ndim != 2 || Cb->ndim != 2 || p.acc_type != DT_F32) {
		/* say which of the conditions this gemm misses, so the user knows what to change */
		char why[256];
		size_t at = 0;
		const char *miss[8];
		int nm = 0, i;

		if (p.trans_a)
			miss[nm++] = "trans_a (store A as M x K)";
		if (p.elem_bits != 16)
			miss[nm++] = "operands that are not f16/bf16";
		if (!p.a_shared || !p.b_shared)
			miss[nm++] = "an operand in registers (stage it through shared memory)";
		if (p.rep_n % 2)
			miss[nm++] = "an odd number of n8 tiles per warp (make N per warp a multiple of 16)";
		if (A->ndim != 2 || B->ndim != 2 || Cb->ndim != 2)
			miss[nm++] = "operands that are not 2-D";
		if (p.acc_type != DT_F32)
			miss[nm++] = "an accumulator that is not f32";
		why[0] = 0;
		for (i = 0; i < nm && at < sizeof why; i++) {
			int w = snprintf(why + at, sizeof why - at, "%s%s", i ? ", " : "", miss[i]);

			if (w > 0)
				at += (size_t)w;
		}
		return err_set(e->err, "gemm: not lowered yet for mma.sync: %s; lowered: f16/bf16 "
			       "A[M,K] x B[K,N] or B[N,K] from shared memory into an f32 accumulator", why);
	}
	if (e->frag[st->u.gemm.c.buf] != p.acc && layout_equal(e->frag[st->u.gemm.c.buf], p.acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	/* ldmatrix reads rows of 8 elements (16 bytes) along the last dimension of each operand */
	{
		const SmemBuf *sa = smem_find(&e->sp, st->u.gemm.a.buf), *sbb = smem_find(&e->sp, st->u.gemm.b.buf);

		if (!sa || !sbb || sa->run < 8 || sbb->run < 8)
			return err_set(e->err, "gemm: shared operand '%s' keeps only %lld consecutive elements "
				       "together in its layout; ldmatrix reads 8 (16 bytes) along the last "
				       "dimension", !sa || sa->run < 8 ? A->name : B->name,
				       (long long)(!sa || sa->run < 8 ? (sa ? sa->run : 0) : sbb->run));
	}
	wm = p.M / p.m_warp;
	wn = p.N / p.n_warp;
	buf_init(&b);
	line(e, "// gemm %s: mma.sync m16n8k16, warps %dx%d, %dx%d tiles per warp", Cb->name, p.m_warp,
	     p.n_warp, p.rep_m, p.rep_n);
	line(e, "{");
	e->ind++;
	line(e, "const int wm = warp %% %d, wn = warp / %d;", p.m_warp, p.m_warp);
	line(e, "#pragma unroll");
	line(e, "for (int kk = 0; kk < %lld; kk += 16) {", (long long)p.K);
	e->ind++;
	line(e, "tl_u32 af[%d][4], bf[%d][2];", p.rep_m, p.rep_n);
	line(e, "#pragma unroll");
	line(e, "for (int mi = 0; mi < %d; mi++) {", p.rep_m);
	e->ind++;
	line(e, "const int r = wm * %lld + mi * 16 + lane %% 16, c = kk + lane / 16 * 8;", (long long)wm);
	ia[0] = "r", ia[1] = "c";
	buf_reset(&b);
	smemoff(e, st->u.gemm.a.buf, ia, &b);
	line(e, "tl_ldmatrix_x4(af[mi], &%s[%s]);", bufptr(e, st->u.gemm.a.buf), buf_str(&b));
	e->ind--;
	line(e, "}");
	line(e, "#pragma unroll");
	line(e, "for (int nj = 0; nj < %d; nj += 2) {", p.rep_n);
	e->ind++;
	if (p.trans_b) {
		/* B stored [N, K]: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) */
		line(e, "const int tl_gn = wn * %lld + nj * 8 + lane / 16 * 8 + lane %% 8, "
		     "tl_gk = kk + lane / 8 %% 2 * 8;", (long long)wn);
		ib[0] = "tl_gn", ib[1] = "tl_gk";
	} else {
		line(e, "const int tl_gk = kk + lane %% 16, tl_gn = wn * %lld + nj * 8 + lane / 16 * 8;",
		     (long long)wn);
		ib[0] = "tl_gk", ib[1] = "tl_gn";
	}
	line(e, "tl_u32 t4[4];");
	buf_reset(&b);
	smemoff(e, st->u.gemm.b.buf, ib, &b);
	line(e, "%s(t4, &%s[%s]);", p.trans_b ? "tl_ldmatrix_x4" : "tl_ldmatrix_x4_trans",
	     bufptr(e, st->u.gemm.b.buf), buf_str(&b));
	line(e, "bf[nj][0] = t4[0];");
	line(e, "bf[nj][1] = t4[1];");
	line(e, "bf[nj + 1][0] = t4[2];");
	line(e, "bf[nj + 1][1] = t4[3];");
	e->ind--;
	line(e, "}");
	line(e, "#pragma unroll");
	line(e, "for (int mi = 0; mi < %d; mi++)", p.rep_m);
	line(e, "#pragma unroll");
	line(e, "\tfor (int ni = 0; ni < %d; ni++)", p.rep_n);
	line(e, "\t\t%s(&%s[(mi * %d + ni) * 4], af[mi], bf[ni]);",
	     p.ab_type == DT_BF16 ? "tl_mma_bf16_16816" : "tl_mma_f16_16816", Cb->name, p.rep_n);
	e->ind--;
	line(e, "}");
	e->ind--;
	line(e, "}");
	(void)mi, (void)nj, (void)ni;
	buf_free(&b);
	return 0;
}

/* ---- gemm on AMD: MFMA (wave64) or WMMA (wave32) 16x16x16 over the plan --------------- */

/* do runs of n elements along K of operand buf (K the last dim when xfirst, else the
 * first) stay contiguous and n-aligned in its LDS layout? then they load as one vector */
static int
kcontig(Em *e, int buf, int xfirst, int n)
{
	const SmemBuf *sb = smem_find(&e->sp, buf);
	const IrBuffer *B = &e->k->bufs[buf];
	int64_t vals[IEXPR_NVARS] = {0}, o0, o, x, k;
	int kd = xfirst ? 1 : 0, j;
	IExpr *lin;

	if (!sb || B->ndim != 2 || sb->layout->nin != 2 || !(lin = layout_linear_index(e->a, sb->layout)))
		return 0;
	if (B->dims[kd].c % n)
		return 0;
	for (x = 0; x < B->dims[1 - kd].c; x++)
		for (k = 0; k < B->dims[kd].c; k += n) {
			vals[1 - kd] = x, vals[kd] = k;
			if (iexpr_eval(lin, vals, &o0, NULL) || o0 % n)
				return 0;
			for (j = 1; j < n; j++) {
				vals[kd] = k + j;
				if (iexpr_eval(lin, vals, &o, NULL) || o != o0 + j)
					return 0;
			}
		}
	return 1;
}

/* one operand's registers for a k-step: lane row/col x = base + i * 16 + lane % 16,
 * k = kk + (MFMA) lane / 16 * 4 + v or (WMMA) v, read from LDS per the fragment:
 * one 8-byte (MFMA) or two 16-byte (WMMA) reads where the K-runs are contiguous,
 * else element by element; rep > 0: reg[i] for i < rep, else reg for the enclosing i
 * (x, k, i, v are tl_gx, tl_gk, tl_gi, tl_gv in the code: no user name spells them) */
static void
amdload(Em *e, const GemmPlan *p, int buf, int xfirst, const char *reg, int rep, int64_t wt,
	const char *w)
{
	int mfma = p->instr == GEMM_MFMA, nv = mfma ? 4 : 16, vec = kcontig(e, buf, xfirst, mfma ? 4 : 8);
	char *ix[2];
	Buf b, b2;

	if (rep) {
		line(e, "#pragma unroll");
		line(e, "for (int tl_gi = 0; tl_gi < %d; tl_gi++) {", rep);
		e->ind++;
	}
	if (!vec) {
		line(e, "#pragma unroll");
		line(e, "for (int tl_gv = 0; tl_gv < %d; tl_gv++) {", nv);
		e->ind++;
	} else {
		line(e, "{");
		e->ind++;
	}
	line(e, "const int tl_gx = %s * %lld + tl_gi * 16 + lane %% 16, tl_gk = kk + %s;", w, (long long)wt,
	     mfma ? (vec ? "lane / 16 % 4 * 4" : "lane / 16 % 4 * 4 + tl_gv") : vec ? "0" : "tl_gv");
	ix[0] = xfirst ? "tl_gx" : "tl_gk", ix[1] = xfirst ? "tl_gk" : "tl_gx";
	buf_init(&b);
	buf_init(&b2);
	smemoff(e, buf, ix, &b);
	if (!vec) {
		line(e, "%s%s[tl_gv] = %s[%s];", reg, rep ? "[tl_gi]" : "", bufptr(e, buf), buf_str(&b));
	} else if (mfma) {
		line(e, "%s%s = tl_ld_u16x4(&%s[%s]);", reg, rep ? "[tl_gi]" : "", bufptr(e, buf), buf_str(&b));
	} else {
		ix[xfirst ? 1 : 0] = "(tl_gk + 8)";
		smemoff(e, buf, ix, &b2);
		line(e, "%s%s = tl_ld_u16x16(&%s[%s], &%s[%s]);", reg, rep ? "[tl_gi]" : "", bufptr(e, buf),
		     buf_str(&b), bufptr(e, buf), buf_str(&b2));
	}
	buf_free(&b);
	buf_free(&b2);
	e->ind--;
	line(e, "}");
	if (rep) {
		e->ind--;
		line(e, "}");
	}
}

static int
gemm_amd(Em *e, const IrStmt *st, const GemmPlan *p)
{
	const IrBuffer *A = &e->k->bufs[st->u.gemm.a.buf], *B = &e->k->bufs[st->u.gemm.b.buf];
	const IrBuffer *Cb = &e->k->bufs[st->u.gemm.c.buf];
	int mfma = p->instr == GEMM_MFMA, nv = mfma ? 4 : 16, nc = mfma ? 4 : 8;
	const char *ty = p->ab_type == DT_BF16 ? "bf16" : "f16";

	if (p->elem_bits != 16 || !p->a_shared || !p->b_shared || A->ndim != 2 || B->ndim != 2 ||
	    Cb->ndim != 2 || p->acc_type != DT_F32)
		return err_set(e->err, "gemm: %s lowers only f16/bf16 operands from shared memory into an "
			       "f32 accumulator", gemm_instr_name(p->instr));
	if (e->frag[st->u.gemm.c.buf] != p->acc && layout_equal(e->frag[st->u.gemm.c.buf], p->acc, NULL) != 1)
		return err_set(e->err, "gemm: accumulator '%s' does not have the gemm plan's layout", Cb->name);
	line(e, "// gemm %s: %s 16x16x16 (wave%d), warps %dx%d, %dx%d tiles per warp", Cb->name,
	     gemm_instr_name(p->instr), mfma ? 64 : 32, p->m_warp, p->n_warp, p->rep_m, p->rep_n);
	line(e, "{");
	e->ind++;
	line(e, "const int wm = warp %% %d, wn = warp / %d;", p->m_warp, p->m_warp);
	/* WMMA operands take 8 registers per lane and instruction: unrolling the k-steps
	 * as well would keep two steps' operands and LDS addresses live and spill */
	line(e, "#pragma unroll%s", mfma ? "" : " 1");
	line(e, "for (int kk = 0; kk < %lld; kk += 16) {", (long long)p->K);
	e->ind++;
	/* operand registers: nv 16-bit patterns per lane and instruction, packed in a
	 * vector; B for the warp's whole N, A one M-instruction at a time */
	line(e, "tl_u16x%d bf[%d];", nv, p->rep_n);
	/* B [K, N] (trans_b: stored [N, K]); A [M, K] (trans_a: stored [K, M]) */
	amdload(e, p, st->u.gemm.b.buf, p->trans_b, "bf", p->rep_n, p->N / p->n_warp, "wn");
	line(e, "#pragma unroll");
	line(e, "for (int tl_gi = 0; tl_gi < %d; tl_gi++) {", p->rep_m);
	e->ind++;
	line(e, "tl_u16x%d af;", nv);
	amdload(e, p, st->u.gemm.a.buf, !p->trans_a, "af", 0, p->M / p->m_warp, "wm");
	line(e, "#pragma unroll");
	line(e, "for (int ni = 0; ni < %d; ni++)", p->rep_n);
	line(e, "\ttl_%s_%s_16x16x16(&%s[(tl_gi * %d + ni) * %d], af, bf[ni]);", mfma ? "mfma" : "wmma", ty,
	     Cb->name, p->rep_n, nc);
	e->ind--;
	line(e, "}");
	e->ind--;
	line(e, "}");
	e->ind--;
	line(e, "}");
	return 0;
}

/* ---- pipelines ---------------------------------------------------------------------- */

static int
isload(const Em *e, const IrStmt *s)
{
	return s->kind == S_COPY && e->k->bufs[s->u.copy.src.buf].scope == MEM_GLOBAL &&
	       e->k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED;
}

/* the loads of a pipeline body, with the lets before them (pipe_hoistable) */
static int
loads(Em *e, Buf *chk, const IrStmt *body)
{
	const IrStmt *last = NULL, *b;

	for (b = body; b; b = b->next)
		if (isload(e, b))
			last = b;
	for (; body; body = body->next) {
		if (isload(e, body) && tilecopy(e, chk, body) < 0)
			return -1;
		if (body->kind == S_LET && body != last && last) {
			const IrStmt *t;

			for (t = body; t && t != last; t = t->next)
				;
			if (t)
				stmt1(e, chk, body);
		}
		if (body == last)
			break;
	}
	return 0;
}

/* does x read a variable of set v (per var id) or any buffer? */
static int
uses_vars(const IrExpr *x, const unsigned char *v)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_VAR: return v[x->u.var->id];
	case IE_LOAD: return 1;
	case IE_UNARY: return uses_vars(x->u.un.a, v);
	case IE_BINARY: return uses_vars(x->u.bin.a, v) || uses_vars(x->u.bin.b, v);
	case IE_SELECT: return uses_vars(x->u.sel.c, v) || uses_vars(x->u.sel.a, v) || uses_vars(x->u.sel.b, v);
	case IE_CAST: return uses_vars(x->u.cast.a, v);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (uses_vars(x->u.call.args[i], v))
				return 1;
		return 0;
	default: return 0;
	}
}

/* mark the let variables a statement list assigns with S_SET */
static void
setvars(const IrStmt *s, unsigned char *v)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_SET: v[s->u.let.var->id] = 1; break;
		case S_FOR: setvars(s->u.loop.body, v); break;
		case S_PIPELINE: setvars(s->u.pipe.body, v); break;
		case S_PARALLEL: setvars(s->u.par.body, v); break;
		case S_IF: setvars(s->u.cond.then, v), setvars(s->u.cond.els, v); break;
		default: break;
		}
	}
}

/*
 * May the loads of pipeline st run ahead of the rest of its body (NULL), or
 * why not? The pipelined form issues the body's global -> shared copies of
 * iteration v + D before the rest of iteration v, so each load may depend only
 * on the pipeline variable, values fixed during the loop and lets before it
 * that do (those are issued with it); no statement of the body may touch a
 * loaded buffer before its load or write it at all; loads nested in an if or
 * a loop of the body do not run ahead.
 */
static const char *
pipe_hoistable(Em *e, const IrStmt *st)
{
	unsigned char *bad = anewn(e->a, unsigned char, e->k->nvar + 1);
	unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *loaded = anewn(e->a, unsigned char, e->k->nbuf + 1);
	const IrStmt *b;
	int d, i;

	setvars(st->u.pipe.body, bad);
	for (b = st->u.pipe.body; b; b = b->next) {
		if (isload(e, b)) {
			const Region *r = &b->u.copy.src, *w = &b->u.copy.dst;

			for (d = 0; d < r->ndim; d++)
				if (uses_vars(r->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			for (d = 0; d < w->ndim; d++)
				if (uses_vars(w->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			if (rd[w->buf] || wr[w->buf] || loaded[w->buf])
				return "a loaded buffer is used before its load in the body";
			loaded[w->buf] = 1;
			continue;
		}
		if (b->kind == S_LET) {
			if (uses_vars(b->u.let.value, bad))
				bad[b->u.let.var->id] = 1;
		} else {
			unsigned char *w2 = anewn(e->a, unsigned char, e->k->nbuf + 1);
			unsigned char *r2 = anewn(e->a, unsigned char, e->k->nbuf + 1);

			sh_stmts(e, b, r2, w2, 1);
			for (i = 0; i < e->k->nbuf; i++) {
				if (w2[i] && loaded[i])
					return "the body writes a loaded buffer";
				rd[i] |= r2[i], wr[i] |= w2[i];
			}
			/* a load inside a nested statement does not run ahead */
			{
				unsigned char *w3 = anewn(e->a, unsigned char, e->k->nbuf + 1);

				memset(r2, 0, (size_t)e->k->nbuf);
				sh_stmts(e, b, r2, w3, 1);
				if (b->kind == S_IF || b->kind == S_FOR || b->kind == S_PIPELINE)
					for (i = 0; i < e->k->nbuf; i++)
						if (w3[i])
							return "a nested statement of the body writes shared memory";
			}
		}
	}
	/* a buffer loaded by the body must not be written by the rest of the body */
	return NULL;
}

/*
 * The body is loads plus gemms that all lower to wgmma (nothing else reads
 * the accumulators): 0 if not, else the mode of pipeline(): 2 (one
 * wgmma group in flight, loads S - 2 ahead) from 4 stages up, 1 (loads
 * S - 1 ahead, each gemm retires its group) below. Measured on the H200
 * (test/gpu/NOTES.md): with 3 stages, a group in flight at the price of one
 * stage of prefetch fell to 0.45x cuBLAS; with 4 stages it reached 0.79x
 * at 4096^3.
 */
static int
wgmma_body(Em *e, const IrStmt *st)
{
	const IrStmt *b;
	GemmPlan p;
	Err scratch = {0};
	int n = 0;

	if (st->u.pipe.stages < 2)
		return 0;
	for (b = st->u.pipe.body; b; b = b->next) {
		if (isload(e, b))
			continue;
		if (b->kind != S_GEMM || plan_of(e, b, &p, &scratch) || p.instr != GEMM_WGMMA)
			return 0;
		n++;
	}
	if (!n)
		return 0;
	return st->u.pipe.stages >= 4 ? 2 : 1;
}

/*
 * pipeline(n, stages = S): a prologue of D load stages, then per iteration
 * wait for the oldest, refill the stage D ahead, run the rest of the body.
 * D = S - 1, except when the body is loads plus wgmma gemms (wgmma_body):
 * then the writer fences its cp.async data into the async proxy before the
 * barrier at the top of the iteration, so the gemm needs no barrier of its
 * own. mode 1: D = S - 1 and each gemm waits for its wgmma group (the
 * refilled stage was read in iteration v - 1, retired before the barrier).
 * mode 2: D = S - 2 and one group stays in flight: the stage refilled in
 * iteration v was read by the group of v - 2, which every warp retired
 * (wait_group 1 at the end of v - 1, then the barrier).
 */
static int
pipeline(Em *e, Buf *chk, const IrStmt *st)
{
	int S = st->u.pipe.stages > 1 ? st->u.pipe.stages : 1, mode = wgmma_body(e, st);
	int D = mode == 2 ? S - 2 : S - 1, r = -1;
	const char *v = vname(e, st->u.pipe.var);
	const IrStmt *b;
	const char *why = pipe_hoistable(e, st);

	if (why) {
		/* not software-pipelined: a serial loop over the body, in order */
		line(e, "// pipeline over %s: run as a serial loop (%s)", v, why);
		line(e, "for (int %s = 0, %s_end_ = %s; %s < %s_end_; %s++) {", vname(e, st->u.pipe.var),
		     vname(e, st->u.pipe.var), exprstr(e, st->u.pipe.extent), vname(e, st->u.pipe.var),
		     vname(e, st->u.pipe.var), vname(e, st->u.pipe.var));
		e->ind++;
		if (loopbody(e, chk, st->u.pipe.body))
			return -1;
		e->ind--;
		line(e, "}");
		return 0;
	}
	e->in_pipe = 1;
	e->stage = arena_printf(e->a, "%s %% %d", v, S);
	if (mode) {
		line(e, "// pipeline over %s: %d stages of cp.async, loads %d ahead%s", v, S, D,
		     mode == 2 ? ", one wgmma group in flight" : "");
		for (b = st->u.pipe.body; b; b = b->next)
			if (b->kind == S_GEMM) {
				int c = b->u.gemm.c.buf;

				line(e, "#pragma unroll");
				line(e, "for (int s = 0; s < %lld; s++)", (long long)e->slots[c]);
				line(e, "\ttl_fence_operand(%s[s]); // accumulators defined here, once",
				     e->k->bufs[c].name);
			}
	} else {
		line(e, "// pipeline over %s: %d stage%s of cp.async", v, S, S > 1 ? "s" : "");
	}
	line(e, "const int %s_n_ = %s;", v, exprstr(e, st->u.pipe.extent));
	if (S > 1) {
		line(e, "#pragma unroll");
		line(e, "for (int st = 0; st < %d; st++) {", D);
		e->ind++;
		line(e, "if (st < %s_n_) {", v);
		e->ind++;
		line(e, "const int %s = st;", v);
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		e->ind--;
		line(e, "}");
		line(e, "tl_cp_async_commit();");
		e->ind--;
		line(e, "}");
	}
	line(e, "for (int %s = 0; %s < %s_n_; %s++) {", v, v, v, v);
	e->ind++;
	if (S > 1) {
		line(e, "tl_cp_async_wait<%d>();", D - 1);
		if (mode)
			line(e, "tl_fence_proxy_async();");
		line(e, "__syncthreads();");
		line(e, "if (%s + %d < %s_n_) {", v, D, v);
		e->ind++;
		line(e, "const int %s_next_ = %s + %d;", v, v, D);
		line(e, "{");
		e->ind++;
		line(e, "const int %s = %s_next_;", v, v);
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		e->ind--;
		line(e, "}");
		e->ind--;
		line(e, "}");
		line(e, "tl_cp_async_commit();");
	} else {
		/* a block, as above: the lets issued with the loads are declared again for the body */
		line(e, "{");
		e->ind++;
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		e->ind--;
		line(e, "}");
		line(e, "tl_cp_async_commit();");
		line(e, "tl_cp_async_wait<0>();");
		line(e, "__syncthreads();");
	}
	e->wg_inflight = mode;
	/* after the barrier at the top of the iteration nothing is pending; the loads just
	 * issued fill another stage than the one the body reads. The rest of the body is
	 * statements like any others: hazards between them get barriers */
	if (e->shrd)
		sh_clear(e);
	for (b = st->u.pipe.body; b; b = b->next)
		if (!isload(e, b) && stmt_synced(e, chk, b))
			goto out;
	if (S == 1)
		line(e, "__syncthreads();");
	e->ind--;
	line(e, "}");
	if (mode == 2)
		line(e, "tl_wgmma_wait0();");
	line(e, "tl_cp_async_wait<0>();");
	line(e, "__syncthreads();");
	if (e->shrd)
		sh_clear(e);
	r = 0;
out:
	e->in_pipe = 0;
	e->stage = NULL;
	e->wg_inflight = 0;
	return r;
}

static int
copy(Em *e, Buf *chk, const IrStmt *st)
{
	MemScope s = e->k->bufs[st->u.copy.src.buf].scope, d = e->k->bufs[st->u.copy.dst.buf].scope;
	int r;

	if (s == MEM_LOCAL && d == MEM_LOCAL)
		return localcopy(e, st);
	if (d == MEM_LOCAL)
		return regcopy(e, chk, st, 1);
	if (s == MEM_LOCAL)
		return regcopy(e, chk, st, 0);
	if ((r = tilecopy(e, chk, st)) < 0)
		return -1;
	if (r) {
		line(e, "tl_cp_async_commit();");
		line(e, "tl_cp_async_wait<0>();");
	}
	if (d == MEM_SHARED || s == MEM_SHARED)
		line(e, "__syncthreads();");
	return 0;
}

/* a local buffer read in expression x outside a parallel nest that not every thread holds
 * whole (every thread runs the statement); -1 with the error */
static int
serial_reads(Em *e, const IrExpr *x, const IrStmt *s)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		for (i = 0; i < x->u.load.n; i++)
			if (serial_reads(e, x->u.load.idx[i], s))
				return -1;
		if (e->k->bufs[x->u.load.buf].scope == MEM_LOCAL && !e->par &&
		    !(frag_is_fully_replicated(e->frag[x->u.load.buf]) &&
		      e->frag[x->u.load.buf]->rep >= e->k->threads))
			return err_set(e->err, "%s:%d:%d: local '%s' is used outside parallel(), so every thread "
				       "must hold all of it, but its layout does not replicate it", s->loc.file,
				       s->loc.line, s->loc.col, e->k->bufs[x->u.load.buf].name);
		return 0;
	case IE_UNARY: return serial_reads(e, x->u.un.a, s);
	case IE_BINARY: return serial_reads(e, x->u.bin.a, s) || serial_reads(e, x->u.bin.b, s) ? -1 : 0;
	case IE_SELECT:
		return serial_reads(e, x->u.sel.c, s) || serial_reads(e, x->u.sel.a, s) ||
		       serial_reads(e, x->u.sel.b, s) ? -1 : 0;
	case IE_CAST: return serial_reads(e, x->u.cast.a, s);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (serial_reads(e, x->u.call.args[i], s))
				return -1;
		return 0;
	default: return 0;
	}
}

/* the local accesses of a statement every thread runs must be to buffers each holds whole */
static int
serial_check(Em *e, const IrStmt *s)
{
	int i;

	if (e->par)
		return 0;
	switch (s->kind) {
	case S_STORE:
		if (e->k->bufs[s->u.store.buf].scope == MEM_LOCAL &&
		    !(frag_is_fully_replicated(e->frag[s->u.store.buf]) &&
		      e->frag[s->u.store.buf]->rep >= e->k->threads))
			return err_set(e->err, "%s:%d:%d: local '%s' is written outside parallel(), so every "
				       "thread must hold all of it, but its layout does not replicate it",
				       s->loc.file, s->loc.line, s->loc.col, e->k->bufs[s->u.store.buf].name);
		for (i = 0; i < s->u.store.n; i++)
			if (serial_reads(e, s->u.store.idx[i], s))
				return -1;
		return serial_reads(e, s->u.store.value, s);
	case S_LET: case S_SET: return serial_reads(e, s->u.let.value, s);
	case S_IF: return serial_reads(e, s->u.cond.cond, s);
	case S_FOR: return serial_reads(e, s->u.loop.lo, s) || serial_reads(e, s->u.loop.extent, s) ? -1 : 0;
	case S_PIPELINE: return serial_reads(e, s->u.pipe.extent, s);
	default: return 0;
	}
}

static int stmt1_lower(Em *e, Buf *chk, const IrStmt *s);

/* one statement; a failure takes its place in the source (the innermost statement that failed) */
static int
stmt1(Em *e, Buf *chk, const IrStmt *s)
{
	if (stmt1_lower(e, chk, s))
		return err_loc(e->err, s->loc);
	return 0;
}

static int
stmt1_lower(Em *e, Buf *chk, const IrStmt *s)
{
	if (serial_check(e, s))
		return -1;
	{
		switch (s->kind) {
		case S_COPY:
			if (s->late_address && e->t->kind == TGT_HIP) {
				/* require_layout(..., late_address_compute = true): the thread's lane and
				 * warp are recomputed from threadIdx here, not kept from the kernel entry */
				int r;

				line(e, "{ // late_address_compute: lane and warp recomputed at this use");
				e->ind++;
				line(e, "const int tid = (int)threadIdx.x, lane = tid %% %d, warp = tid / %d;",
				     e->t->warp_size, e->t->warp_size);
				line(e, "(void)lane, (void)warp;");
				r = copy(e, chk, s);
				e->ind--;
				line(e, "}");
				if (r)
					return -1;
				break;
			}
			if (copy(e, chk, s))
				return -1;
			break;
		case S_GEMM:
			if (gemm(e, s))
				return -1;
			break;
		case S_FILL:
			if (fill(e, s))
				return -1;
			break;
		case S_PARALLEL:
			if (parallel(e, chk, s))
				return -1;
			break;
		case S_STORE:
			if (store(e, s))
				return -1;
			break;
		case S_LET:
			line(e, "%s %s = %s;", ctype(calctype(s->u.let.var->type)), vname(e, s->u.let.var),
			     exprstr(e, s->u.let.value));
			break;
		case S_SET:
			line(e, "%s = %s;", vname(e, s->u.let.var), exprstr(e, s->u.let.value));
			break;
		case S_FOR: {
			/* the bound is evaluated once, before the first iteration */
			int64_t lo, n;
			const char *vn = vname(e, s->u.loop.var);

			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n))
				line(e, "for (int %s = %lld; %s < %lld; %s++) {", vn, (long long)lo, vn,
				     (long long)(lo + n), vn);
			else
				line(e, "for (int %s = %s, %s_end_ = %s + %s; %s < %s_end_; %s++) {", vn,
				     exprstr(e, s->u.loop.lo), vn, exprstr(e, s->u.loop.lo),
				     exprstr(e, s->u.loop.extent), vn, vn, vn);
			e->ind++;
			if (loopbody(e, chk, s->u.loop.body))
				return -1;
			e->ind--;
			line(e, "}");
			break;
		}
		case S_PIPELINE:
			if (pipeline(e, chk, s))
				return -1;
			break;
		case S_IF: {
			/* after the if: what either branch left pending */
			unsigned char *rd0 = NULL, *wr0 = NULL;
			int b;

			if (e->shrd && !e->par) {
				rd0 = anewn(e->a, unsigned char, e->k->nbuf + 1);
				wr0 = anewn(e->a, unsigned char, e->k->nbuf + 1);
				memcpy(rd0, e->shrd, (size_t)e->k->nbuf);
				memcpy(wr0, e->shwr, (size_t)e->k->nbuf);
			}
			line(e, "if (%s) {", exprstr(e, s->u.cond.cond));
			e->ind++;
			if (stmts(e, chk, s->u.cond.then))
				return -1;
			e->ind--;
			if (s->u.cond.els) {
				unsigned char *rd1 = NULL, *wr1 = NULL;

				if (rd0) {
					rd1 = anewn(e->a, unsigned char, e->k->nbuf + 1);
					wr1 = anewn(e->a, unsigned char, e->k->nbuf + 1);
					memcpy(rd1, e->shrd, (size_t)e->k->nbuf);
					memcpy(wr1, e->shwr, (size_t)e->k->nbuf);
					memcpy(e->shrd, rd0, (size_t)e->k->nbuf);
					memcpy(e->shwr, wr0, (size_t)e->k->nbuf);
				}
				line(e, "} else {");
				e->ind++;
				if (stmts(e, chk, s->u.cond.els))
					return -1;
				e->ind--;
				if (rd0)
					for (b = 0; b < e->k->nbuf; b++)
						e->shrd[b] |= rd1[b], e->shwr[b] |= wr1[b];
			} else if (rd0) {
				for (b = 0; b < e->k->nbuf; b++)
					e->shrd[b] |= rd0[b], e->shwr[b] |= wr0[b];
			}
			line(e, "}");
			break;
		}
		case S_REDUCE:
			if (reduce(e, s))
				return -1;
			break;
		case S_BARRIER:
			line(e, "__syncthreads();");
			break;
		default:
			break; /* assume and layout statements emit nothing */
		}
	}
	return 0;
}

/* ---- barriers: every statement sees the shared memory the statements before it left ---- */

static void
sh_expr(const Em *e, const IrExpr *x, unsigned char *rd)
{
	int i;

	if (!x)
		return;
	switch (x->kind) {
	case IE_LOAD:
		if (e->k->bufs[x->u.load.buf].scope == MEM_SHARED)
			rd[x->u.load.buf] = 1;
		for (i = 0; i < x->u.load.n; i++)
			sh_expr(e, x->u.load.idx[i], rd);
		break;
	case IE_UNARY: sh_expr(e, x->u.un.a, rd); break;
	case IE_BINARY: sh_expr(e, x->u.bin.a, rd), sh_expr(e, x->u.bin.b, rd); break;
	case IE_SELECT: sh_expr(e, x->u.sel.c, rd), sh_expr(e, x->u.sel.a, rd), sh_expr(e, x->u.sel.b, rd); break;
	case IE_CAST: sh_expr(e, x->u.cast.a, rd); break;
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			sh_expr(e, x->u.call.args[i], rd);
		break;
	default: break;
	}
}

static void
sh_mark(const Em *e, int buf, unsigned char *m)
{
	if (buf >= 0 && buf < e->k->nbuf && e->k->bufs[buf].scope == MEM_SHARED)
		m[buf] = 1;
}

static void
sh_region(const Em *e, const Region *r, unsigned char *m, unsigned char *rd)
{
	int d;

	sh_mark(e, r->buf, m);
	for (d = 0; d < r->ndim; d++)
		sh_expr(e, r->off[d], rd);
}

/* the shared buffers statement list s (with what it nests) reads and writes */
static void
sh_stmts(const Em *e, const IrStmt *s, unsigned char *rd, unsigned char *wr, int one)
{
	int i;

	for (; s; s = one ? NULL : s->next) {
		switch (s->kind) {
		case S_COPY: sh_region(e, &s->u.copy.src, rd, rd), sh_region(e, &s->u.copy.dst, wr, rd); break;
		case S_GEMM:
			sh_region(e, &s->u.gemm.a, rd, rd), sh_region(e, &s->u.gemm.b, rd, rd);
			sh_region(e, &s->u.gemm.c, wr, rd);
			break;
		case S_FILL: sh_region(e, &s->u.fill.dst, wr, rd), sh_expr(e, s->u.fill.value, rd); break;
		case S_REDUCE: sh_mark(e, s->u.reduce.src, rd), sh_mark(e, s->u.reduce.dst, wr); break;
		case S_PARALLEL: sh_stmts(e, s->u.par.body, rd, wr, 0); break;
		case S_STORE:
			sh_mark(e, s->u.store.buf, wr);
			for (i = 0; i < s->u.store.n; i++)
				sh_expr(e, s->u.store.idx[i], rd);
			sh_expr(e, s->u.store.value, rd);
			break;
		case S_LET: case S_SET: sh_expr(e, s->u.let.value, rd); break;
		case S_FOR:
			sh_expr(e, s->u.loop.lo, rd), sh_expr(e, s->u.loop.extent, rd);
			sh_stmts(e, s->u.loop.body, rd, wr, 0);
			break;
		case S_PIPELINE: sh_stmts(e, s->u.pipe.body, rd, wr, 0); break;
		case S_IF:
			sh_expr(e, s->u.cond.cond, rd);
			sh_stmts(e, s->u.cond.then, rd, wr, 0);
			sh_stmts(e, s->u.cond.els, rd, wr, 0);
			break;
		default: break;
		}
	}
}

/* do shared buffers a and b share bytes (the same buffer, or overlapping lifetimes' bytes
 * the planner gave both)? */
static int
sh_alias(const Em *e, int a, int b)
{
	const SmemBuf *x, *y;

	if (a == b)
		return 1;
	if (!(x = smem_find(&e->sp, a)) || !(y = smem_find(&e->sp, b)))
		return 0;
	return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

/* did the text emitted so far end with a barrier? */
static int
ends_with_barrier(const Em *e)
{
	static const char tail[] = "__syncthreads();\n";
	size_t n = sizeof tail - 1;

	return e->o->len >= n && !memcmp(e->o->s + e->o->len - n, tail, n);
}

static void
sh_clear(Em *e)
{
	memset(e->shrd, 0, (size_t)e->k->nbuf);
	memset(e->shwr, 0, (size_t)e->k->nbuf);
}

/*
 * Emit s after a __syncthreads when it writes a shared buffer some thread
 * read or wrote since the last barrier, or reads one written since (a
 * statement of the tile program runs for the whole block before the next).
 */
static int
stmt_synced(Em *e, Buf *chk, const IrStmt *s)
{
	unsigned char *rd, *wr;
	int b, need = 0;

	if (e->par || !e->shrd)
		return stmt1(e, chk, s);
	rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	sh_stmts(e, s, rd, wr, 1);
	for (b = 0; b < e->k->nbuf && !need; b++) {
		int c;

		if (!rd[b] && !wr[b])
			continue;
		/* buffers the planner placed on overlapping bytes are one for hazards */
		for (c = 0; c < e->k->nbuf && !need; c++)
			if ((e->shrd[c] || e->shwr[c]) && sh_alias(e, b, c))
				need = (wr[b] && (e->shrd[c] || e->shwr[c])) || (rd[b] && e->shwr[c]);
	}
	if (need) {
		line(e, "__syncthreads();");
		sh_clear(e);
	}
	if (stmt1(e, chk, s))
		return -1;
	if (ends_with_barrier(e)) {
		sh_clear(e);
	} else {
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
	}
	return 0;
}

static int
stmts(Em *e, Buf *chk, const IrStmt *s)
{
	for (; s; s = s->next)
		if (stmt_synced(e, chk, s))
			return -1;
	return 0;
}

/* a loop body: what the body leaves pending reaches its start again */
static int
loopbody(Em *e, Buf *chk, const IrStmt *body)
{
	int b;

	if (e->shrd && !e->par) {
		unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
		unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);

		sh_stmts(e, body, rd, wr, 0);
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
		if (stmts(e, chk, body))
			return -1;
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
		return 0;
	}
	return stmts(e, chk, body);
}

/* ---- kernels ------------------------------------------------------------------------ */

/* the first gemm whose accumulator is buffer buf */
static const IrStmt *
accgemm(const IrStmt *s, int buf)
{
	const IrStmt *g;

	for (; s; s = s->next) {
		if (s->kind == S_GEMM && s->u.gemm.c.buf == buf)
			return s;
		g = s->kind == S_PIPELINE ? accgemm(s->u.pipe.body, buf)
		    : s->kind == S_FOR ? accgemm(s->u.loop.body, buf)
		    : s->kind == S_IF ? accgemm(s->u.cond.then, buf) : NULL;
		if (g)
			return g;
	}
	return NULL;
}

static void
cutecomment(Em *e, const Layout *L, int frag, const char *swz, int vec)
{
	Buf b;
	Err ce = {0};

	buf_init(&b);
	if (frag) {
		CuteLayout cl;

		if (frag_to_cute(e->a, L, &cl, &ce) == 1)
			cute_print_layout(&b, cl);
		else
			buf_puts(&b, "(no CuTe form)");
	} else {
		CuteComposed cc;

		if (!strcmp(swz, "none") && layout_to_cute(e->a, L, LC_FLAT, &cc, &ce) == 1)
			cute_print_layout(&b, cc.l);
		else if (layout_to_cute(e->a, L, LC_COMPOSED, &cc, &ce) == 1)
			cute_print_composed(&b, &cc);
		else
			buf_puts(&b, "(no CuTe form)");
	}
	line(e, "// layout: %s  swizzle: %s  vec: %d", buf_str(&b), swz, vec);
	buf_free(&b);
}

/* the statements of the kernel into body: once; or, when vector accesses depend on
 * rows-of-whole-vectors flags, as `if (flags) { vector body } else { scalar body }`
 * so that each body keeps its own registers (no scalar code in the vector loops) */
static int
bodies(Em *e, Buf *chk, Buf *body)
{
	Buf vb, sb;
	int i, tmp = e->tmp, ret;

	e->nflags = 0;
	e->scalar = 0;
	e->shrd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	e->shwr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	buf_init(&vb);
	buf_init(&sb);
	e->o = &vb;
	if ((ret = stmts(e, chk, e->k->body)) == 0 && e->nflags > 0) {
		buf_reset(&vb);
		e->ind = 2;
		e->tmp = tmp;
		e->static_smem = 0; /* the first try is dropped, and its arrays with it */
		sh_clear(e);
		if ((ret = stmts(e, chk, e->k->body)) == 0) {
			e->scalar = 1;
			e->o = &sb;
			sh_clear(e);
			ret = stmts(e, chk, e->k->body);
			e->scalar = 0;
		}
		e->o = body;
		e->ind = 1;
		buf_puts(body, "\tif (");
		for (i = 0; i < e->nflags; i++)
			buf_printf(body, "%s%s", i ? " && " : "", e->flags[i]);
		buf_puts(body, ") {\n");
		buf_puts(body, buf_str(&vb));
		line(e, "} else { // rows that are not whole vectors: element by element");
		buf_puts(body, buf_str(&sb));
		line(e, "}");
	} else {
		buf_puts(body, buf_str(&vb));
	}
	e->o = body;
	buf_free(&vb);
	buf_free(&sb);
	return ret;
}

static int
kernel(Em *e)
{
	const IrKernel *k = e->k;
	Buf body, chk, *out = e->o;
	int i, b, ret;

	/* the plan of the pass plan-shared-memory, or one made here (emit_cuda called alone) */
	if (k->smem)
		e->sp = *k->smem;
	else if (smem_plan(e->a, e->t, k, &e->sp, e->err))
		return -1;
	{
		/* emit from a copy whose buffers carry their C names */
		IrKernel *kc = anew(e->a, IrKernel);

		*kc = *k;
		kc->bufs = anewn(e->a, IrBuffer, k->nbuf + 1);
		for (b = 0; b < k->nbuf; b++) {
			kc->bufs[b] = k->bufs[b];
			kc->bufs[b].name = cname(e->a, k->bufs[b].name);
		}
		e->k = k = kc;
	}
	signs(e);
	e->frag = anewn(e->a, Layout *, k->nbuf + 1);
	e->coord = anewn(e->a, IExpr **, k->nbuf + 1);
	e->slots = anewn(e->a, int64_t, k->nbuf + 1);
	for (b = 0; b < k->nbuf; b++) {
		const IrBuffer *B = &k->bufs[b];
		const IrStmt *g;
		int64_t shape[LAYOUT_MAXDIM];

		if (B->scope != MEM_LOCAL)
			continue;
		if (B->layout) {
			if (!B->layout->is_frag)
				return err_loc(e->err, B->loc), err_set(e->err, "local '%s' has a layout that is not a Fragment", B->name);
			e->frag[b] = B->layout;
		} else if ((g = accgemm(k->body, b))) {
			GemmPlan p;

			if (plan_of(e, g, &p, e->err))
				return err_loc(e->err, B->loc);
			e->frag[b] = p.acc;
		} else {
			for (i = 0; i < B->ndim; i++)
				shape[i] = B->dims[i].c;
			if (!(e->frag[b] = defaultfrag(e, shape, B->ndim)))
				return err_loc(e->err, B->loc);
		}
		if (e->frag[b]->nthreads > k->threads)
			return err_loc(e->err, B->loc), err_set(e->err, "local '%s': its layout needs %lld threads, the kernel has %lld",
				       B->name, (long long)e->frag[b]->nthreads, (long long)k->threads);
		if (!(e->coord[b] = fragcoords(e, e->frag[b], &e->slots[b])))
			return err_loc(e->err, B->loc);
	}

	/* header */
	buf_printf(out, "// kernel %s: %lld threads, %lld bytes of dynamic shared memory%s\n", k->name,
		   (long long)k->threads, (long long)e->sp.total,
		   e->sp.needs_optin ? " (set cudaFuncAttributeMaxDynamicSharedMemorySize)" : "");
	buf_printf(out, "extern \"C\" __global__ void __launch_bounds__(%lld)\n%s(", (long long)k->threads,
		   cname(e->a, k->name));
	for (i = 0; i < k->nparam; i++) {
		const IrParam *P = &k->params[i];

		if (P->is_tensor)
			buf_printf(out, "%s%s *__restrict__ %s", i ? ", " : "", ctype(P->dtype), cname(e->a, P->name));
		else
			buf_printf(out, "%s%s %s", i ? ", " : "", ctype(P->dtype), cname(e->a, P->name));
	}
	for (i = 0; i < k->nsize; i++)
		buf_printf(out, "%sint %s", i || k->nparam ? ", " : "", vname(e, k->sizes[i]));
	buf_puts(out, ")\n{\n");

	buf_init(&body);
	buf_init(&chk);
	e->o = &body;
	e->ind = 1;
	if (e->sp.n)
		line(e, "extern __shared__ __align__(%lld) unsigned char tl_smem[];", (long long)e->sp.align);
	line(e, "const int tid = threadIdx.x, lane = tid %% %d, warp = tid / %d;", e->t->warp_size,
	     e->t->warp_size);
	line(e, "(void)lane, (void)warp;");
	for (i = 0; i < e->sp.n; i++) {
		const SmemBuf *sb = &e->sp.bufs[i];
		const IrBuffer *B = &k->bufs[sb->buf];

		cutecomment(e, sb->layout, 0, swizzle_name(sb->mode), (int)sb->run);
		line(e, "%s *%s = (%s *)(tl_smem + %lld); // %d stage%s of %lld elements", ctype(B->dtype),
		     B->name, ctype(B->dtype), (long long)sb->offset, sb->stages, sb->stages > 1 ? "s" : "",
		     (long long)sb->stage_elems);
	}
	for (b = 0; b < k->nbuf; b++) {
		const IrBuffer *B = &k->bufs[b];
		int eb = dtype_bytes(B->dtype);

		if (B->scope != MEM_LOCAL)
			continue;
		{
			int vv = eb == 1 || eb == 2 || eb == 4 ?
				 fragvec(e->frag[b], e->coord[b], e->slots[b], 16 / eb) : 1;

			cutecomment(e, e->frag[b], 1, "none", eb == 1 && vv < 4 ? 1 : vv);
		}
		line(e, "%s %s[%lld];", ctype(B->dtype), B->name, (long long)e->slots[b]);
	}
	ret = bodies(e, &chk, &body);
	e->o = out;
	/* the block's shared memory is the plan's (checked by smem_plan) plus the static arrays of
	 * the reduces, which only the body knows: over the target's limit it cannot launch */
	if (ret == 0 && e->static_smem && e->sp.total + e->static_smem > e->t->smem_max)
		ret = err_set(e->err, "needs %lld bytes of shared memory (%lld of shared buffers, %lld of the "
			      "reduces' scratch arrays); %s allows %lld: use smaller shared tiles or fewer "
			      "pipeline stages", (long long)(e->sp.total + e->static_smem),
			      (long long)e->sp.total, (long long)e->static_smem, e->t->arch,
			      (long long)e->t->smem_max);
	if (ret == 0) {
		buf_puts(out, buf_str(&chk));
		buf_puts(out, buf_str(&body));
		buf_puts(out, "}\n");
	}
	buf_free(&body);
	buf_free(&chk);
	return ret;
}

int
emit_cuda(Arena *a, const IrProgram *p, Buf *out, Err *err)
{
	const Target *t;
	const IrKernel *k;
	TargetKind kind;
	Em e;
	Err local = {0};
	char msg[sizeof local.msg];

	if (!err)
		err = &local;
	if (!a || !p || !out)
		return err_set(err, "emit_cuda: null argument");
	/* the same lowering for both targets; the Target and tilec_hip.h give the HIP dialect */
	kind = p->target == 0 ? TGT_CUDA : TGT_HIP;
	if (p->target != 0 && p->target != 1)
		return err_set(err, "emit_cuda: unknown target %d", p->target);
	if (!(t = target_lookup(kind, p->arch ? p->arch : target_default_arch(kind), err)))
		return -1;
	buf_printf(out, "// generated by tilec %s for %s\n#include \"%s\"\n", TL_VERSION, t->arch,
		   kind == TGT_HIP ? "tilec_hip.h" : "tilec_cuda.h");
	for (k = p->kernels; k; k = k->next) {
		memset(&e, 0, sizeof e);
		e.a = a;
		e.t = t;
		e.k = k;
		e.o = out;
		e.err = err;
		buf_putc(out, '\n');
		if (kernel(&e)) {
			snprintf(msg, sizeof msg, "%s", err->msg);
			err_set(err, "kernel '%s': %s", k->name, msg);
			return err_loc(err, k->loc);
		}
	}
	return 0;
}

const char *
emit_ctype(DType t)
{
	return ctype(t);
}

const char *
emit_cname(Arena *a, const char *n)
{
	return cname(a, n);
}
