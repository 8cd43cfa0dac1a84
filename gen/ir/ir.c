/*
 * ir.c: tile IR constructors, small queries, and the stable text dump
 * (`tilec --dump=ir`): every kernel with its parameters, size symbols, grid,
 * threads and buffers, then the statement tree indented two spaces a level,
 * expressions in infix with the fewest parentheses that keep their meaning.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

static const struct {
	const char *name;
	int bytes;
} dtypes[] = {
#define X(e, s, b) {s, b},
	DTYPES(X)
#undef X
};

const char *
dtype_name(DType t)
{
	return (unsigned)t < DT_COUNT ? dtypes[t].name : "?";
}

int
dtype_bytes(DType t)
{
	return (unsigned)t < DT_COUNT ? dtypes[t].bytes : 0;
}

int
dtype_is_float(DType t)
{
	return t == DT_F16 || t == DT_BF16 || t == DT_F32 || t == DT_F64 || t == DT_FP8E4M3 ||
	       t == DT_FP8E5M2;
}

int
dtype_is_int(DType t)
{
	return t == DT_INT || t == DT_I8 || t == DT_U8 || t == DT_I32;
}

DType
dtype_lookup(const char *s, int n)
{
	int t;

	for (t = DT_BOOL; t < DT_COUNT; t++) {
		if (t == DT_INT)
			continue;
		if ((int)strlen(dtypes[t].name) == n && !memcmp(dtypes[t].name, s, (size_t)n))
			return (DType)t;
	}
	return DT_NONE;
}

const char *
memscope_name(MemScope s)
{
	switch (s) {
	case MEM_GLOBAL: return "global";
	case MEM_SHARED: return "shared";
	case MEM_LOCAL: return "local";
	}
	return "?";
}

static const struct {
	const char *name;
	int prec;
} binops[] = {
#define X(e, s, p) {s, p},
	IR_BINOPS(X)
#undef X
};

const char *
binop_name(BinOp op)
{
	return (unsigned)op < BIN_COUNT ? binops[op].name : "?";
}

static const struct {
	const char *name;
	int arity;
} mathfns[] = {
#define X(e, s, n) {s, n},
	IR_MATHFNS(X)
#undef X
};

const char *
mathfn_name(MathFn f)
{
	return (unsigned)f < FN_COUNT ? mathfns[f].name : "?";
}

int
mathfn_arity(MathFn f)
{
	return (unsigned)f < FN_COUNT ? mathfns[f].arity : 0;
}

int
mathfn_lookup(const char *s, int n)
{
	int f;

	for (f = 0; f < FN_COUNT; f++)
		if ((int)strlen(mathfns[f].name) == n && !memcmp(mathfns[f].name, s, (size_t)n))
			return f;
	return -1;
}

static const char *const mmanames[] = {
#define X(e, s) s,
	IR_MMAS(X)
#undef X
};

const char *
mma_name(MmaKind m)
{
	return (unsigned)m < MMA_COUNT ? mmanames[m] : "?";
}

const char *
reduceop_name(ReduceOp op)
{
	static const char *const n[] = {"sum", "max", "min", "absmax"};

	return (unsigned)op < countof(n) ? n[op] : "?";
}

const char *
atomicop_name(AtomicOp op)
{
	static const char *const n[] = {"none", "add", "max", "min"};

	return (unsigned)op < countof(n) ? n[op] : "?";
}

/* ---- constructors ----------------------------------------------------- */

static IrExpr *
mk(Arena *a, IrExprKind k, DType t, Loc loc)
{
	IrExpr *e = anew(a, IrExpr);

	if (e) {
		e->kind = k;
		e->type = t;
		e->loc = loc;
	}
	return e;
}

IrExpr *
ir_int(Arena *a, Loc loc, int64_t v)
{
	IrExpr *e = mk(a, IE_INT, DT_INT, loc);

	if (e)
		e->u.i = v;
	return e;
}

IrExpr *
ir_float(Arena *a, Loc loc, DType t, double v)
{
	IrExpr *e = mk(a, IE_FLOAT, t, loc);

	if (e)
		e->u.f = v;
	return e;
}

IrExpr *
ir_bool(Arena *a, Loc loc, int v)
{
	IrExpr *e = mk(a, IE_BOOL, DT_BOOL, loc);

	if (e)
		e->u.i = v != 0;
	return e;
}

IrExpr *
ir_var(Arena *a, Loc loc, IrVar *v)
{
	IrExpr *e = mk(a, IE_VAR, v ? v->type : DT_NONE, loc);

	if (e)
		e->u.var = v;
	return e;
}

IrExpr *
ir_unary(Arena *a, Loc loc, DType t, UnOp op, IrExpr *x)
{
	IrExpr *e = mk(a, IE_UNARY, t, loc);

	if (e) {
		e->u.un.op = op;
		e->u.un.a = x;
	}
	return e;
}

IrExpr *
ir_binary(Arena *a, Loc loc, DType t, BinOp op, IrExpr *x, IrExpr *y)
{
	IrExpr *e = mk(a, IE_BINARY, t, loc);

	if (e) {
		e->u.bin.op = op;
		e->u.bin.a = x;
		e->u.bin.b = y;
	}
	return e;
}

IrExpr *
ir_select(Arena *a, Loc loc, IrExpr *c, IrExpr *x, IrExpr *y)
{
	IrExpr *e = mk(a, IE_SELECT, x ? x->type : DT_NONE, loc);

	if (e) {
		e->u.sel.c = c;
		e->u.sel.a = x;
		e->u.sel.b = y;
	}
	return e;
}

IrExpr *
ir_cast(Arena *a, Loc loc, DType t, IrExpr *x)
{
	IrExpr *e = mk(a, IE_CAST, t, loc);

	if (e)
		e->u.cast.a = x;
	return e;
}

IrExpr *
ir_load(Arena *a, Loc loc, DType t, int buf, int n, IrExpr **idx)
{
	IrExpr *e = mk(a, IE_LOAD, t, loc);

	if (e) {
		e->u.load.buf = buf;
		e->u.load.n = n;
		e->u.load.idx = idx;
	}
	return e;
}

IrExpr *
ir_call(Arena *a, Loc loc, DType t, MathFn fn, int n, IrExpr **args)
{
	IrExpr *e = mk(a, IE_CALL, t, loc);

	if (e) {
		e->u.call.fn = fn;
		e->u.call.n = n;
		e->u.call.args = args;
	}
	return e;
}

IrExpr *
ir_expr_copy(Arena *a, const IrExpr *e)
{
	IrExpr *c, **v = NULL;
	int i, n = 0;

	if (!e)
		return NULL;
	c = anew(a, IrExpr);
	if (!c)
		return NULL;
	*c = *e;
	switch (e->kind) {
	case IE_LOAD:
		n = e->u.load.n;
		v = c->u.load.idx = anewn(a, IrExpr *, n > 0 ? n : 1);
		for (i = 0; v && i < n; i++)
			v[i] = ir_expr_copy(a, e->u.load.idx[i]);
		break;
	case IE_CALL:
		n = e->u.call.n;
		v = c->u.call.args = anewn(a, IrExpr *, n > 0 ? n : 1);
		for (i = 0; v && i < n; i++)
			v[i] = ir_expr_copy(a, e->u.call.args[i]);
		break;
	case IE_UNARY:
		c->u.un.a = ir_expr_copy(a, e->u.un.a);
		break;
	case IE_BINARY:
		c->u.bin.a = ir_expr_copy(a, e->u.bin.a);
		c->u.bin.b = ir_expr_copy(a, e->u.bin.b);
		break;
	case IE_SELECT:
		c->u.sel.c = ir_expr_copy(a, e->u.sel.c);
		c->u.sel.a = ir_expr_copy(a, e->u.sel.a);
		c->u.sel.b = ir_expr_copy(a, e->u.sel.b);
		break;
	case IE_CAST:
		c->u.cast.a = ir_expr_copy(a, e->u.cast.a);
		break;
	default:
		break;
	}
	return c;
}

IrStmt *
ir_stmt(Arena *a, IrStmtKind k, Loc loc)
{
	IrStmt *s = anew(a, IrStmt);

	if (s) {
		s->kind = k;
		s->loc = loc;
	}
	return s;
}

static uint64_t
strhash(const char *s)
{
	return tl_strhash(s, strlen(s), TL_HASH_BASIS);
}

/* the slot of name in k's name table (where it is, or where it goes) */
static struct IrName *
nameslot(const IrKernel *k, const char *name)
{
	size_t i, m = (size_t)k->capnames - 1;

	for (i = strhash(name) & m; k->names[i].s; i = (i + 1) & m)
		if (!strcmp(k->names[i].s, name))
			break;
	return &k->names[i];
}

static int
addname(Arena *a, IrKernel *k, const char *name)
{
	if (2 * (k->nnames + 1) > k->capnames) {
		int j, cap = k->capnames ? k->capnames * 2 : 64;
		struct IrName *old = k->names;
		int oldcap = k->capnames;

		k->names = anewn(a, struct IrName, cap);
		if (!k->names) {
			k->names = old;
			return -1;
		}
		k->capnames = cap;
		for (j = 0; j < oldcap; j++)
			if (old[j].s)
				*nameslot(k, old[j].s) = old[j];
	}
	nameslot(k, name)->s = name;
	k->nnames++;
	return 0;
}

static int
taken(const IrKernel *k, const char *name)
{
	return k->capnames && nameslot(k, name)->s;
}

/* name, or name_N with the first free N; recorded as taken */
static const char *
uniquename(Arena *a, IrKernel *k, const char *name)
{
	struct IrName *base;
	char *s;
	int i;

	if (!taken(k, name)) {
		s = arena_strdup(a, name);
	} else {
		base = nameslot(k, name);
		for (i = base->next > 0 ? base->next : 1;; i++) {
			s = arena_printf(a, "%s_%d", name, i);
			if (!s || !taken(k, s))
				break;
		}
		base->next = i + 1;
	}
	if (s && addname(a, k, s))
		return NULL;
	return s;
}

IrVar *
ir_kernel_var(Arena *a, IrKernel *k, VarKind kind, DType t, const char *name, Loc loc)
{
	IrVar *v;

	if (k->nvar == k->capvar) {
		int cap = k->capvar ? k->capvar * 2 : 16;
		IrVar **nv = arena_realloc(a, k->vars, sizeof *nv * (size_t)k->capvar,
					   sizeof *nv * (size_t)cap);

		if (!nv)
			return NULL;
		k->vars = nv;
		k->capvar = cap;
	}
	v = anew(a, IrVar);
	if (!v)
		return NULL;
	v->kind = kind;
	v->type = t;
	v->name = uniquename(a, k, name);
	v->id = k->nvar;
	v->loc = loc;
	if (!v->name)
		return NULL;
	k->vars[k->nvar++] = v;
	return v;
}

int
ir_kernel_buffer(Arena *a, IrKernel *k, const char *name, MemScope s, DType t, int ndim, IrDim *dims,
		 Loc loc)
{
	IrBuffer *b;

	if (k->nbuf == k->capbuf) {
		int cap = k->capbuf ? k->capbuf * 2 : 8;
		IrBuffer *nb = arena_realloc(a, k->bufs, sizeof *nb * (size_t)k->capbuf,
					     sizeof *nb * (size_t)cap);

		if (!nb)
			return -1;
		k->bufs = nb;
		k->capbuf = cap;
	}
	b = &k->bufs[k->nbuf];
	memset(b, 0, sizeof *b);
	b->name = uniquename(a, k, name);
	if (!b->name)
		return -1;
	b->scope = s;
	b->dtype = t;
	b->ndim = ndim;
	b->dims = dims;
	b->param = -1;
	b->loc = loc;
	return k->nbuf++;
}

Region
ir_region_whole(Arena *a, const IrKernel *k, int buf, Loc loc)
{
	const IrBuffer *B = &k->bufs[buf];
	Region r;
	int d;

	r.buf = buf;
	r.ndim = B->ndim;
	r.off = anewn(a, IrExpr *, B->ndim);
	r.ext = anewn(a, int64_t, B->ndim);
	for (d = 0; d < B->ndim; d++) {
		r.off[d] = ir_int(a, loc, 0);
		r.ext[d] = B->dims[d].c;
	}
	return r;
}

int
ir_walk(IrStmt *s, IrVisit f, void *ctx)
{
	int r;

	for (; s; s = s->next) {
		if ((r = f(s, ctx)))
			return r;
		switch (s->kind) {
		case S_PARALLEL: r = ir_walk(s->u.par.body, f, ctx); break;
		case S_PIPELINE: r = ir_walk(s->u.pipe.body, f, ctx); break;
		case S_FOR: r = ir_walk(s->u.loop.body, f, ctx); break;
		case S_IF:
			if (!(r = ir_walk(s->u.cond.then, f, ctx)))
				r = ir_walk(s->u.cond.els, f, ctx);
			break;
		default: break;
		}
		if (r)
			return r;
	}
	return 0;
}

void
ir_expr_bufs(const IrExpr *x, unsigned char *rd)
{
	int i;

	if (!x)
		return;
	switch (x->kind) {
	case IE_LOAD:
		rd[x->u.load.buf] = 1;
		for (i = 0; i < x->u.load.n; i++)
			ir_expr_bufs(x->u.load.idx[i], rd);
		break;
	case IE_UNARY: ir_expr_bufs(x->u.un.a, rd); break;
	case IE_BINARY: ir_expr_bufs(x->u.bin.a, rd), ir_expr_bufs(x->u.bin.b, rd); break;
	case IE_SELECT: ir_expr_bufs(x->u.sel.c, rd), ir_expr_bufs(x->u.sel.a, rd), ir_expr_bufs(x->u.sel.b, rd); break;
	case IE_CAST: ir_expr_bufs(x->u.cast.a, rd); break;
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			ir_expr_bufs(x->u.call.args[i], rd);
		break;
	default: break;
	}
}

/* region r's buffer into m (and rd too when rw), its offsets read */
static void
region_bufs(const IrKernel *k, const Region *r, unsigned char *m, unsigned char *rd, int rw)
{
	int d;

	if (r->buf >= 0 && r->buf < k->nbuf) {
		m[r->buf] = 1;
		if (rw)
			rd[r->buf] = 1;
	}
	for (d = 0; d < r->ndim; d++)
		ir_expr_bufs(r->off[d], rd);
}

void
ir_stmt_bufs(const IrKernel *k, const IrStmt *s, int one, unsigned char *rd, unsigned char *wr)
{
	int i;

	for (; s; s = one ? NULL : s->next) {
		switch (s->kind) {
		case S_COPY:
			region_bufs(k, &s->u.copy.src, rd, rd, 0);
			region_bufs(k, &s->u.copy.dst, wr, rd, s->u.copy.atomic != AT_NONE);
			break;
		case S_GEMM:
			region_bufs(k, &s->u.gemm.a, rd, rd, 0), region_bufs(k, &s->u.gemm.b, rd, rd, 0);
			region_bufs(k, &s->u.gemm.c, wr, rd, !s->u.gemm.clear);
			break;
		case S_FILL: region_bufs(k, &s->u.fill.dst, wr, rd, 0), ir_expr_bufs(s->u.fill.value, rd); break;
		case S_REDUCE:
			rd[s->u.reduce.src] = 1, wr[s->u.reduce.dst] = 1;
			if (!s->u.reduce.clear)
				rd[s->u.reduce.dst] = 1;
			break;
		case S_PARALLEL: ir_stmt_bufs(k, s->u.par.body, 0, rd, wr); break;
		case S_STORE:
			wr[s->u.store.buf] = 1;
			if (s->u.store.atomic != AT_NONE)
				rd[s->u.store.buf] = 1;
			for (i = 0; i < s->u.store.n; i++)
				ir_expr_bufs(s->u.store.idx[i], rd);
			ir_expr_bufs(s->u.store.value, rd);
			break;
		case S_LET: case S_SET: ir_expr_bufs(s->u.let.value, rd); break;
		case S_FOR:
			ir_expr_bufs(s->u.loop.lo, rd), ir_expr_bufs(s->u.loop.extent, rd);
			ir_stmt_bufs(k, s->u.loop.body, 0, rd, wr);
			break;
		case S_PIPELINE: ir_expr_bufs(s->u.pipe.extent, rd), ir_stmt_bufs(k, s->u.pipe.body, 0, rd, wr); break;
		case S_IF:
			ir_expr_bufs(s->u.cond.cond, rd);
			ir_stmt_bufs(k, s->u.cond.then, 0, rd, wr);
			ir_stmt_bufs(k, s->u.cond.els, 0, rd, wr);
			break;
		case S_ASSUME: ir_expr_bufs(s->u.assume.cond, rd); break;
		default: break;
		}
	}
}

int
ir_strided_buffer(const IrKernel *k)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (k->bufs[i].strides)
			return i;
	return -1;
}

int
ir_is_const(const IrExpr *e, int64_t *v)
{
	if (!e || e->kind != IE_INT)
		return 0;
	if (v)
		*v = e->u.i;
	return 1;
}

int
ir_expr_equal(const IrExpr *x, const IrExpr *y)
{
	int i;

	if (x == y)
		return 1;
	if (!x || !y || x->kind != y->kind || x->type != y->type)
		return 0;
	switch (x->kind) {
	case IE_INT:
	case IE_BOOL:
		return x->u.i == y->u.i;
	case IE_FLOAT:
		return x->u.f == y->u.f;
	case IE_VAR:
		return x->u.var == y->u.var;
	case IE_LOAD:
		if (x->u.load.buf != y->u.load.buf || x->u.load.n != y->u.load.n)
			return 0;
		for (i = 0; i < x->u.load.n; i++)
			if (!ir_expr_equal(x->u.load.idx[i], y->u.load.idx[i]))
				return 0;
		return 1;
	case IE_UNARY:
		return x->u.un.op == y->u.un.op && ir_expr_equal(x->u.un.a, y->u.un.a);
	case IE_BINARY:
		return x->u.bin.op == y->u.bin.op && ir_expr_equal(x->u.bin.a, y->u.bin.a) &&
		       ir_expr_equal(x->u.bin.b, y->u.bin.b);
	case IE_SELECT:
		return ir_expr_equal(x->u.sel.c, y->u.sel.c) && ir_expr_equal(x->u.sel.a, y->u.sel.a) &&
		       ir_expr_equal(x->u.sel.b, y->u.sel.b);
	case IE_CAST:
		return ir_expr_equal(x->u.cast.a, y->u.cast.a);
	case IE_CALL:
		if (x->u.call.fn != y->u.call.fn || x->u.call.n != y->u.call.n)
			return 0;
		for (i = 0; i < x->u.call.n; i++)
			if (!ir_expr_equal(x->u.call.args[i], y->u.call.args[i]))
				return 0;
		return 1;
	}
	return 0;
}

/* ---- verification --------------------------------------------------------- */

typedef struct Vfy {
	const IrKernel *k;
	Err *e;
	int bad;
} Vfy;

static int
vfail(Vfy *v, Loc loc, const char *what)
{
	if (!v->bad)
		err_set(v->e, "kernel %s, line %d: %s", v->k->name ? v->k->name : "?", loc.line, what);
	v->bad = 1;
	return -1;
}

static int
vbuf(Vfy *v, Loc loc, int id)
{
	return id >= 0 && id < v->k->nbuf ? 0 : vfail(v, loc, "buffer id out of range");
}

static int
vvar(Vfy *v, Loc loc, const IrVar *var)
{
	if (!var || var->id < 0 || var->id >= v->k->nvar || v->k->vars[var->id] != var)
		return vfail(v, loc, "variable not registered in its kernel");
	return 0;
}

static int
vexpr(Vfy *v, const IrExpr *e, int depth)
{
	int i;

	if (!e)
		return vfail(v, (Loc){0}, "missing expression");
	if (depth > 10000)
		return vfail(v, e->loc, "expression too deep");
	if (e->type <= DT_NONE || e->type >= DT_COUNT)
		return vfail(v, e->loc, "expression without a type");
	switch (e->kind) {
	case IE_INT:
	case IE_FLOAT:
		return 0;
	case IE_BOOL:
		return e->type == DT_BOOL ? 0 : vfail(v, e->loc, "bool constant not of type bool");
	case IE_VAR:
		return vvar(v, e->loc, e->u.var);
	case IE_LOAD:
		if (vbuf(v, e->loc, e->u.load.buf))
			return -1;
		if (e->u.load.n != v->k->bufs[e->u.load.buf].ndim || !e->u.load.idx)
			return vfail(v, e->loc, "load rank differs from its buffer's");
		for (i = 0; i < e->u.load.n; i++)
			if (vexpr(v, e->u.load.idx[i], depth + 1))
				return -1;
		return 0;
	case IE_UNARY:
		return vexpr(v, e->u.un.a, depth + 1);
	case IE_BINARY:
		if ((unsigned)e->u.bin.op >= BIN_COUNT)
			return vfail(v, e->loc, "bad binary operator");
		return vexpr(v, e->u.bin.a, depth + 1) || vexpr(v, e->u.bin.b, depth + 1) ? -1 : 0;
	case IE_SELECT:
		return vexpr(v, e->u.sel.c, depth + 1) || vexpr(v, e->u.sel.a, depth + 1) ||
			       vexpr(v, e->u.sel.b, depth + 1)
			   ? -1
			   : 0;
	case IE_CAST:
		return vexpr(v, e->u.cast.a, depth + 1);
	case IE_CALL:
		if ((unsigned)e->u.call.fn >= FN_COUNT || e->u.call.n != mathfn_arity(e->u.call.fn))
			return vfail(v, e->loc, "bad call");
		for (i = 0; i < e->u.call.n; i++)
			if (vexpr(v, e->u.call.args[i], depth + 1))
				return -1;
		return 0;
	}
	return vfail(v, e->loc, "bad expression kind");
}

static int
vregion(Vfy *v, Loc loc, const Region *r)
{
	int i;

	if (vbuf(v, loc, r->buf))
		return -1;
	if (r->ndim != v->k->bufs[r->buf].ndim || !r->off || !r->ext)
		return vfail(v, loc, "region rank differs from its buffer's");
	for (i = 0; i < r->ndim; i++) {
		if (r->ext[i] <= 0)
			return vfail(v, loc, "region extent not positive");
		if (vexpr(v, r->off[i], 0))
			return -1;
	}
	return 0;
}

static int vstmts(Vfy *v, const IrStmt *s, int depth);

static int
vstmt(Vfy *v, const IrStmt *s, int depth)
{
	int i;

	switch (s->kind) {
	case S_COPY:
		return vregion(v, s->loc, &s->u.copy.src) || vregion(v, s->loc, &s->u.copy.dst) ? -1 : 0;
	case S_GEMM:
		return vregion(v, s->loc, &s->u.gemm.a) || vregion(v, s->loc, &s->u.gemm.b) ||
			       vregion(v, s->loc, &s->u.gemm.c)
			   ? -1
			   : 0;
	case S_FILL:
		return vregion(v, s->loc, &s->u.fill.dst) || vexpr(v, s->u.fill.value, 0) ? -1 : 0;
	case S_REDUCE:
		return vbuf(v, s->loc, s->u.reduce.src) || vbuf(v, s->loc, s->u.reduce.dst) ? -1 : 0;
	case S_PARALLEL:
		if (s->u.par.n <= 0 || !s->u.par.vars || !s->u.par.ext)
			return vfail(v, s->loc, "parallel loop without variables");
		for (i = 0; i < s->u.par.n; i++)
			if (vvar(v, s->loc, s->u.par.vars[i]) ||
			    (s->u.par.ext[i] <= 0 && vfail(v, s->loc, "parallel extent not positive")))
				return -1;
		return vstmts(v, s->u.par.body, depth + 1);
	case S_STORE:
		if (vbuf(v, s->loc, s->u.store.buf))
			return -1;
		if (s->u.store.n != v->k->bufs[s->u.store.buf].ndim)
			return vfail(v, s->loc, "store rank differs from its buffer's");
		for (i = 0; i < s->u.store.n; i++)
			if (vexpr(v, s->u.store.idx[i], 0))
				return -1;
		return vexpr(v, s->u.store.value, 0);
	case S_LET:
	case S_SET:
		return vvar(v, s->loc, s->u.let.var) || vexpr(v, s->u.let.value, 0) ? -1 : 0;
	case S_FOR:
		if (vvar(v, s->loc, s->u.loop.var) || vexpr(v, s->u.loop.lo, 0) ||
		    vexpr(v, s->u.loop.extent, 0))
			return -1;
		return vstmts(v, s->u.loop.body, depth + 1);
	case S_PIPELINE:
		if (vvar(v, s->loc, s->u.pipe.var) || vexpr(v, s->u.pipe.extent, 0))
			return -1;
		if (s->u.pipe.stages < 1)
			return vfail(v, s->loc, "pipeline with no stage");
		return vstmts(v, s->u.pipe.body, depth + 1);
	case S_IF:
		if (vexpr(v, s->u.cond.cond, 0))
			return -1;
		if (s->u.cond.cond->type != DT_BOOL)
			return vfail(v, s->loc, "if condition not bool");
		return vstmts(v, s->u.cond.then, depth + 1) || vstmts(v, s->u.cond.els, depth + 1) ? -1
												   : 0;
	case S_ASSUME:
		return vexpr(v, s->u.assume.cond, 0);
	case S_ANNOTATE_LAYOUT:
	case S_REQUIRE_LAYOUT:
	case S_RELEASE_LAYOUT:
	case S_DUMP_LAYOUT:
	case S_ASSERT_SAME_LAYOUT:
		if (vbuf(v, s->loc, s->u.layout.buf))
			return -1;
		if ((s->kind == S_ANNOTATE_LAYOUT || s->kind == S_REQUIRE_LAYOUT) && !s->u.layout.lit)
			return vfail(v, s->loc, "layout statement without a layout");
		if (s->kind == S_ASSERT_SAME_LAYOUT && !s->u.layout.lit &&
		    vbuf(v, s->loc, s->u.layout.other))
			return -1;
		return 0;
	case S_REQUIRE_WMMA_LAYOUT:
		return vbuf(v, s->loc, s->u.wmma.buf);
	case S_BARRIER:
		return 0;
	default:
		return vfail(v, s->loc, "bad statement kind");
	}
}

static int
vstmts(Vfy *v, const IrStmt *s, int depth)
{
	if (depth > 10000)
		return vfail(v, s ? s->loc : (Loc){0}, "statements nested too deeply");
	for (; s; s = s->next)
		if (vstmt(v, s, depth))
			return -1;
	return 0;
}

int
ir_verify(const IrProgram *p, Err *e)
{
	const IrKernel *k;
	Vfy v;
	int i;

	if (!p)
		return err_set(e, "no program");
	for (k = p->kernels; k; k = k->next) {
		v.k = k;
		v.e = e;
		v.bad = 0;
		if (k->ngrid < 1 || k->ngrid > 3)
			return vfail(&v, k->loc, "grid needs 1 to 3 dimensions");
		if (k->threads <= 0)
			return vfail(&v, k->loc, "threads not positive");
		for (i = 0; i < k->ngrid; i++)
			if (vexpr(&v, k->grid[i], 0))
				return -1;
		for (i = 0; i < k->nparam; i++)
			if (k->params[i].is_tensor ? vbuf(&v, k->loc, k->params[i].buf)
						   : vvar(&v, k->loc, k->params[i].var))
				return -1;
		for (i = 0; i < k->nbuf; i++) {
			const IrBuffer *b = &k->bufs[i];
			int j;

			if (b->ndim <= 0 || !b->dims)
				return vfail(&v, b->loc, "buffer without a shape");
			for (j = 0; j < b->ndim; j++)
				if (b->dims[j].sym ? b->scope != MEM_GLOBAL || vvar(&v, b->loc, b->dims[j].sym)
						   : b->dims[j].c <= 0)
					return vfail(&v, b->loc, "bad buffer dimension");
			if (b->strides && (b->scope != MEM_GLOBAL || b->param < 0))
				return vfail(&v, b->loc, "strides on a buffer that is not a tensor parameter");
			for (j = 0; b->strides && j < b->ndim; j++)
				if (b->strides[j].sym ? vvar(&v, b->loc, b->strides[j].sym) ||
								b->strides[j].sym->kind != VAR_SIZE
						      : b->strides[j].c <= 0)
					return vfail(&v, b->loc, "bad buffer stride");
		}
		for (i = 0; i < k->nvar; i++)
			if (!k->vars[i] || k->vars[i]->id != i)
				return vfail(&v, k->loc, "variable table out of order");
		if (vstmts(&v, k->body, 0))
			return -1;
	}
	return 0;
}

/* ---- dump ------------------------------------------------------------- */

enum { PREC_SELECT = 0, PREC_UNARY = 11, PREC_POSTFIX = 12 };

/* the dump's hot paths avoid printf */
static void
putint(Buf *b, int64_t v)
{
	char tmp[24], *p = tmp + sizeof tmp;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	*--p = 0;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	buf_puts(b, p);
}

static void
putfloat(Buf *b, double f)
{
	char tmp[64];
	int p;

	if (isnan(f)) {
		buf_puts(b, "nan");
		return;
	}
	if (isinf(f)) {
		buf_puts(b, f < 0 ? "-inf" : "inf");
		return;
	}
	/* the shortest spelling that reads back as the same double */
	for (p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*g", p, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	buf_puts(b, tmp);
	if (!strpbrk(tmp, ".eEn"))
		buf_puts(b, ".0");
}

static const char *
bufname(const IrKernel *k, int id)
{
	return k && id >= 0 && id < k->nbuf ? k->bufs[id].name : "?";
}

static void dexpr(Buf *b, const IrKernel *k, const IrExpr *e, int prec);

static void
dlist(Buf *b, const IrKernel *k, IrExpr *const *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, ", ");
		dexpr(b, k, v[i], PREC_SELECT);
	}
}

static void
dexpr(Buf *b, const IrKernel *k, const IrExpr *e, int prec)
{
	int p;

	if (!e) {
		buf_puts(b, "<null>");
		return;
	}
	switch (e->kind) {
	case IE_INT:
		if (e->u.i < 0 && prec > PREC_UNARY)
			buf_printf(b, "(%lld)", (long long)e->u.i);
		else
			putint(b, e->u.i);
		if (e->type != DT_INT)
			buf_printf(b, ":%s", dtype_name(e->type));
		break;
	case IE_FLOAT:
		if (e->u.f < 0 && prec > PREC_UNARY)
			buf_putc(b, '(');
		putfloat(b, e->u.f);
		if (e->u.f < 0 && prec > PREC_UNARY)
			buf_putc(b, ')');
		if (e->type != DT_F32)
			buf_printf(b, ":%s", dtype_name(e->type));
		break;
	case IE_BOOL:
		buf_puts(b, e->u.i ? "true" : "false");
		break;
	case IE_VAR:
		buf_puts(b, e->u.var ? e->u.var->name : "?");
		break;
	case IE_LOAD:
		buf_puts(b, bufname(k, e->u.load.buf));
		buf_putc(b, '[');
		dlist(b, k, e->u.load.idx, e->u.load.n);
		buf_putc(b, ']');
		break;
	case IE_UNARY:
		if (prec > PREC_UNARY)
			buf_putc(b, '(');
		buf_putc(b, "-!~"[e->u.un.op]);
		dexpr(b, k, e->u.un.a, PREC_UNARY);
		if (prec > PREC_UNARY)
			buf_putc(b, ')');
		break;
	case IE_BINARY:
		p = (unsigned)e->u.bin.op < BIN_COUNT ? binops[e->u.bin.op].prec : 1;
		if (p < prec)
			buf_putc(b, '(');
		dexpr(b, k, e->u.bin.a, p);
		buf_putc(b, ' ');
		buf_puts(b, binop_name(e->u.bin.op));
		buf_putc(b, ' ');
		dexpr(b, k, e->u.bin.b, p + 1);
		if (p < prec)
			buf_putc(b, ')');
		break;
	case IE_SELECT:
		if (prec > PREC_SELECT)
			buf_putc(b, '(');
		dexpr(b, k, e->u.sel.c, PREC_SELECT + 1);
		buf_puts(b, " ? ");
		dexpr(b, k, e->u.sel.a, PREC_SELECT + 1);
		buf_puts(b, " : ");
		dexpr(b, k, e->u.sel.b, PREC_SELECT);
		if (prec > PREC_SELECT)
			buf_putc(b, ')');
		break;
	case IE_CAST:
		buf_printf(b, "%s(", dtype_name(e->type));
		dexpr(b, k, e->u.cast.a, PREC_SELECT);
		buf_putc(b, ')');
		break;
	case IE_CALL:
		buf_printf(b, "%s(", mathfn_name(e->u.call.fn));
		dlist(b, k, e->u.call.args, e->u.call.n);
		buf_putc(b, ')');
		break;
	}
}

void
ir_dump_expr(Buf *b, const IrKernel *k, const IrExpr *e)
{
	dexpr(b, k, e, PREC_SELECT);
}

static void
dregion(Buf *b, const IrKernel *k, const Region *r)
{
	int i;

	buf_puts(b, bufname(k, r->buf));
	buf_putc(b, '[');
	for (i = 0; i < r->ndim; i++) {
		if (i)
			buf_puts(b, ", ");
		dexpr(b, k, r->off[i], PREC_SELECT + 1);
		buf_puts(b, " +: ");
		putint(b, r->ext[i]);
	}
	buf_putc(b, ']');
}

void
ir_dump_layout(Buf *b, const LayoutLit *l)
{
	int i;

	if (!l) {
		buf_puts(b, "<null>");
		return;
	}
	switch (l->kind) {
	case LAYOUT_CUTE:
		buf_printf(b, "cute(\"%s\")", l->text ? l->text : "");
		break;
	case LAYOUT_SWIZZLE:
		buf_printf(b, "swizzle(%d)", l->bytes);
		break;
	case LAYOUT_PADDED:
		buf_puts(b, "padded");
		break;
	case LAYOUT_LINEAR:
		buf_puts(b, "linear");
		break;
	case LAYOUT_MMA:
		buf_printf(b, "mma_%c(%s", l->operand, mma_name(l->mma));
		for (i = 0; i < l->nopt; i++)
			buf_printf(b, ", %s = %lld", l->opt[i].name, (long long)l->opt[i].value);
		buf_putc(b, ')');
		break;
	}
}

static void
dints(Buf *b, const int64_t *v, int n)
{
	int i;

	buf_putc(b, '[');
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
	buf_putc(b, ']');
}

static void
dintlists(Buf *b, const IntLists *l)
{
	int i;

	buf_putc(b, '[');
	for (i = 0; i < l->n; i++) {
		if (i)
			buf_puts(b, ", ");
		dints(b, l->v[i], l->len[i]);
	}
	buf_putc(b, ']');
}

static void
indent(Buf *b, int d)
{
	while (d-- > 0)
		buf_puts(b, "  ");
}

static void dstmts(Buf *b, const IrKernel *k, const IrStmt *s, int d);

static void
dblock(Buf *b, const IrKernel *k, const IrStmt *body, int d)
{
	buf_puts(b, " {\n");
	dstmts(b, k, body, d + 1);
	indent(b, d);
	buf_puts(b, "}\n");
}

static void
dstmt(Buf *b, const IrKernel *k, const IrStmt *s, int d)
{
	int i;

	indent(b, d);
	switch (s->kind) {
	case S_COPY:
		buf_puts(b, "copy ");
		dregion(b, k, &s->u.copy.src);
		buf_puts(b, " -> ");
		dregion(b, k, &s->u.copy.dst);
		if (s->convert)
			buf_puts(b, " convert");
		if (s->late_address)
			buf_puts(b, " late_address");
		if (s->u.copy.atomic)
			buf_printf(b, " op=%s", atomicop_name(s->u.copy.atomic));
		if (s->u.copy.layout) {
			buf_puts(b, " layout=");
			ir_dump_layout(b, s->u.copy.layout);
		}
		buf_putc(b, '\n');
		break;
	case S_GEMM:
		buf_puts(b, "gemm ");
		dregion(b, k, &s->u.gemm.a);
		buf_puts(b, ", ");
		dregion(b, k, &s->u.gemm.b);
		buf_puts(b, " -> ");
		dregion(b, k, &s->u.gemm.c);
		buf_printf(b, " trans_a=%d trans_b=%d clear=%d%s\n", s->u.gemm.trans_a,
			   s->u.gemm.trans_b, s->u.gemm.clear,
			   s->u.gemm.policy == 1 ? " policy=full_row" : s->u.gemm.policy == 2 ? " policy=full_col" : "");
		break;
	case S_FILL:
		buf_puts(b, "fill ");
		dregion(b, k, &s->u.fill.dst);
		buf_puts(b, ", ");
		dexpr(b, k, s->u.fill.value, PREC_SELECT);
		buf_putc(b, '\n');
		break;
	case S_REDUCE:
		buf_printf(b, "reduce %s %s -> %s dim=%d clear=%d\n", reduceop_name(s->u.reduce.op),
			   bufname(k, s->u.reduce.src), bufname(k, s->u.reduce.dst), s->u.reduce.dim,
			   s->u.reduce.clear);
		break;
	case S_PARALLEL:
		buf_puts(b, "parallel ");
		for (i = 0; i < s->u.par.n; i++)
			buf_printf(b, "%s%s < %lld", i ? ", " : "", s->u.par.vars[i]->name,
				   (long long)s->u.par.ext[i]);
		if (s->u.par.layout) {
			buf_puts(b, " layout=");
			ir_dump_layout(b, s->u.par.layout);
		}
		dblock(b, k, s->u.par.body, d);
		break;
	case S_STORE:
		if (s->u.store.atomic)
			buf_printf(b, "atomic_%s(", atomicop_name(s->u.store.atomic));
		buf_puts(b, bufname(k, s->u.store.buf));
		buf_putc(b, '[');
		dlist(b, k, s->u.store.idx, s->u.store.n);
		buf_puts(b, s->u.store.atomic ? "], " : "] = ");
		dexpr(b, k, s->u.store.value, PREC_SELECT);
		buf_puts(b, s->u.store.atomic ? ")\n" : "\n");
		break;
	case S_LET:
		buf_printf(b, "let %s: %s = ", s->u.let.var->name, dtype_name(s->u.let.var->type));
		dexpr(b, k, s->u.let.value, PREC_SELECT);
		buf_putc(b, '\n');
		break;
	case S_SET:
		buf_printf(b, "%s = ", s->u.let.var->name);
		dexpr(b, k, s->u.let.value, PREC_SELECT);
		buf_putc(b, '\n');
		break;
	case S_FOR:
		buf_printf(b, "for %s from ", s->u.loop.var->name);
		dexpr(b, k, s->u.loop.lo, PREC_SELECT);
		buf_puts(b, " extent ");
		dexpr(b, k, s->u.loop.extent, PREC_SELECT);
		dblock(b, k, s->u.loop.body, d);
		break;
	case S_PIPELINE:
		buf_printf(b, "pipeline %s < ", s->u.pipe.var->name);
		dexpr(b, k, s->u.pipe.extent, PREC_SELECT);
		buf_printf(b, " stages=%d", s->u.pipe.stages);
		dblock(b, k, s->u.pipe.body, d);
		break;
	case S_IF:
		buf_puts(b, "if ");
		dexpr(b, k, s->u.cond.cond, PREC_SELECT);
		buf_puts(b, " {\n");
		dstmts(b, k, s->u.cond.then, d + 1);
		indent(b, d);
		if (s->u.cond.els) {
			buf_puts(b, "} else {\n");
			dstmts(b, k, s->u.cond.els, d + 1);
			indent(b, d);
		}
		buf_puts(b, "}\n");
		break;
	case S_ASSUME:
		buf_puts(b, "assume ");
		dexpr(b, k, s->u.assume.cond, PREC_SELECT);
		buf_putc(b, '\n');
		break;
	case S_ANNOTATE_LAYOUT:
	case S_REQUIRE_LAYOUT:
	case S_RELEASE_LAYOUT:
	case S_DUMP_LAYOUT:
	case S_ASSERT_SAME_LAYOUT:
		buf_printf(b, "%s %s", s->kind == S_ANNOTATE_LAYOUT   ? "annotate_layout"
				       : s->kind == S_REQUIRE_LAYOUT  ? "require_layout"
				       : s->kind == S_RELEASE_LAYOUT  ? "release_layout"
				       : s->kind == S_DUMP_LAYOUT     ? "dump_layout"
								      : "assert_same_layout",
			   bufname(k, s->u.layout.buf));
		if (s->u.layout.lit) {
			buf_puts(b, ", ");
			ir_dump_layout(b, s->u.layout.lit);
		} else if (s->u.layout.other >= 0) {
			buf_printf(b, ", %s", bufname(k, s->u.layout.other));
		}
		if (s->kind == S_REQUIRE_LAYOUT)
			buf_printf(b, " pin=%d late_address_compute=%d", s->u.layout.pin,
				   s->u.layout.late_address_compute);
		buf_putc(b, '\n');
		break;
	case S_REQUIRE_WMMA_LAYOUT:
		buf_printf(b, "require_amd_wmma_layout %s version=%d transposed=%d warp_bases=",
			   bufname(k, s->u.wmma.buf), s->u.wmma.version, s->u.wmma.transposed);
		dintlists(b, &s->u.wmma.warp_bases);
		buf_puts(b, " reg_bases=");
		dintlists(b, &s->u.wmma.reg_bases);
		buf_puts(b, " instr_shape=");
		dints(b, s->u.wmma.instr_shape, s->u.wmma.ninstr);
		buf_putc(b, '\n');
		break;
	case S_BARRIER:
		buf_puts(b, "barrier\n");
		break;
	default:
		buf_puts(b, "<bad statement>\n");
		break;
	}
}

static void
dstmts(Buf *b, const IrKernel *k, const IrStmt *s, int d)
{
	for (; s; s = s->next)
		dstmt(b, k, s, d);
}

static void
ddims(Buf *b, const IrBuffer *buf)
{
	int i;

	buf_printf(b, "%s[", dtype_name(buf->dtype));
	for (i = 0; i < buf->ndim; i++) {
		if (i)
			buf_puts(b, ", ");
		if (buf->dims[i].sym)
			buf_puts(b, buf->dims[i].sym->name);
		else
			buf_printf(b, "%lld", (long long)buf->dims[i].c);
	}
	buf_putc(b, ']');
	if (buf->strides) {
		buf_puts(b, " strides(");
		for (i = 0; i < buf->ndim; i++) {
			if (i)
				buf_puts(b, ", ");
			if (buf->strides[i].sym)
				buf_puts(b, buf->strides[i].sym->name);
			else
				buf_printf(b, "%lld", (long long)buf->strides[i].c);
		}
		buf_putc(b, ')');
	}
}

void
ir_dump_kernel(Buf *b, const IrKernel *k)
{
	int i;

	buf_printf(b, "kernel %s\n", k->name);
	for (i = 0; i < k->nparam; i++) {
		const IrParam *p = &k->params[i];

		buf_printf(b, "  param %s: ", p->name);
		if (p->is_tensor && p->buf >= 0 && p->buf < k->nbuf)
			ddims(b, &k->bufs[p->buf]);
		else
			buf_puts(b, dtype_name(p->dtype));
		buf_putc(b, '\n');
	}
	if (k->nsize) {
		buf_puts(b, "  sizes ");
		for (i = 0; i < k->nsize; i++)
			buf_printf(b, "%s%s", i ? ", " : "", k->sizes[i]->name);
		buf_putc(b, '\n');
	}
	buf_puts(b, "  grid ");
	dlist(b, k, k->grid, k->ngrid);
	buf_printf(b, "\n  threads %lld\n", (long long)k->threads);
	for (i = 0; i < k->nbuf; i++) {
		const IrBuffer *buf = &k->bufs[i];

		if (buf->scope == MEM_GLOBAL)
			continue;
		buf_printf(b, "  %s %s: ", memscope_name(buf->scope), buf->name);
		ddims(b, buf);
		if (buf->late_address)
			buf_puts(b, " late_address");
		buf_putc(b, '\n');
	}
	for (i = 0; i < k->nassume; i++) {
		buf_puts(b, "  assume ");
		dexpr(b, k, k->assumes[i], PREC_SELECT);
		buf_putc(b, '\n');
	}
	buf_puts(b, "  body\n");
	dstmts(b, k, k->body, 2);
}

void
ir_dump(Buf *b, const IrProgram *p)
{
	const IrKernel *k;

	for (k = p ? p->kernels : NULL; k; k = k->next) {
		ir_dump_kernel(b, k);
		if (k->next)
			buf_putc(b, '\n');
	}
}

/*
 * The integer value of an index expression at a point: var binds each
 * variable (0 bound, -1 not evaluable). Floor division and modulo; -1 on
 * overflow, division by zero or a non-integer node.
 */
int
ir_eval_int(const IrExpr *e, IrVarValue var, void *ctx, int64_t *out)
{
	int64_t a, b, c;

	switch (e->kind) {
	case IE_INT:
	case IE_BOOL:
		*out = e->u.i;
		return 0;
	case IE_VAR:
		return var(ctx, e->u.var, out);
	case IE_CAST:
		if (!dtype_is_int(e->type) && e->type != DT_BOOL)
			return -1;
		return ir_eval_int(e->u.cast.a, var, ctx, out);
	case IE_UNARY:
		if (ir_eval_int(e->u.un.a, var, ctx, &a))
			return -1;
		if (e->u.un.op == UN_NEG) {
			if (a == INT64_MIN)
				return -1;
			*out = -a;
		} else {
			*out = e->u.un.op == UN_NOT ? !a : ~a;
		}
		return 0;
	case IE_SELECT:
		if (ir_eval_int(e->u.sel.c, var, ctx, &c))
			return -1;
		return ir_eval_int(c ? e->u.sel.a : e->u.sel.b, var, ctx, out);
	case IE_CALL:
		if (e->u.call.n != 2 || ir_eval_int(e->u.call.args[0], var, ctx, &a) ||
		    ir_eval_int(e->u.call.args[1], var, ctx, &b))
			return -1;
		switch (e->u.call.fn) {
		case FN_MAX: *out = a > b ? a : b; return 0;
		case FN_MIN: *out = a < b ? a : b; return 0;
		case FN_CDIV:
			if (b == 0 || ck_add(a, b - 1, &c))
				return -1;
			*out = floordiv64(c, b);
			return 0;
		default: return -1;
		}
	case IE_BINARY:
		if (ir_eval_int(e->u.bin.a, var, ctx, &a) || ir_eval_int(e->u.bin.b, var, ctx, &b))
			return -1;
		switch (e->u.bin.op) {
		case BIN_ADD: return ck_add(a, b, out) ? -1 : 0;
		case BIN_SUB: return b == INT64_MIN || ck_add(a, -b, out) ? -1 : 0;
		case BIN_MUL: return ck_mul(a, b, out) ? -1 : 0;
		case BIN_DIV:
		case BIN_MOD:
			if (b == 0 || (a == INT64_MIN && b == -1))
				return -1;
			*out = e->u.bin.op == BIN_DIV ? floordiv64(a, b) : floormod64(a, b);
			return 0;
		case BIN_SHL:
			if (b < 0 || b > 62 || a < 0 || a > (INT64_MAX >> b))
				return -1;
			*out = a << b;
			return 0;
		case BIN_SHR:
			if (b < 0 || b > 63)
				return -1;
			*out = a >> b;
			return 0;
		case BIN_LT: *out = a < b; return 0;
		case BIN_LE: *out = a <= b; return 0;
		case BIN_GT: *out = a > b; return 0;
		case BIN_GE: *out = a >= b; return 0;
		case BIN_EQ: *out = a == b; return 0;
		case BIN_NE: *out = a != b; return 0;
		case BIN_BAND: *out = a & b; return 0;
		case BIN_BXOR: *out = a ^ b; return 0;
		case BIN_BOR: *out = a | b; return 0;
		case BIN_LAND: *out = a && b; return 0;
		case BIN_LOR: *out = a || b; return 0;
		default: return -1;
		}
	default:
		return -1;
	}
}
