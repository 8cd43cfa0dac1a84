/*
 * sema.c: semantic checks of a parsed program and its translation to tile IR:
 * global consts (with -D overrides), kernels (params, size symbols, grid,
 * threads), buffer declarations, statements, the tile ops (copy, gemm, fill,
 * clear, reduce, assume) with shape and scope checks, loops, and the inlining
 * of helper functions. Every error is reported; nothing stops at the first.
 */
#include <stdio.h>
#include <string.h>

#include "sema.h"

/* ---- arguments of builtin calls -------------------------------------------- */

typedef struct Param {
	const char *name;
	int required;
} Param;

/* match call args to ps[0..np) (positional, then by name); -1 after reporting */
static int
getargs(Sema *S, const Node *call, const Param *ps, int np, const Node **out)
{
	const char *fn = call->u.call.name;
	const Node *a;
	int i, pos = 0, bad = 0;

	for (i = 0; i < np; i++)
		out[i] = NULL;
	for (a = call->u.call.args; a; a = a->next) {
		if (a->kind != N_NAMED) {
			if (pos >= np) {
				diag(S->d, a->loc, "%s takes at most %d arguments", fn, np);
				return -1;
			}
			out[pos++] = a;
			continue;
		}
		for (i = 0; i < np; i++)
			if (!strcmp(ps[i].name, a->u.bind.name))
				break;
		if (i == np) {
			diag(S->d, a->loc, "%s: unknown argument '%s'", fn, a->u.bind.name);
			bad = 1;
		} else if (out[i]) {
			diag(S->d, a->loc, "%s: argument '%s' given twice", fn, a->u.bind.name);
			bad = 1;
		} else {
			out[i] = a->u.bind.value;
		}
	}
	for (i = 0; i < np; i++) {
		if (ps[i].required && !out[i]) {
			diag(S->d, call->loc, "%s: missing argument '%s'", fn, ps[i].name);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* a constant bool argument (default dflt when absent); -1 after reporting */
static int
boolarg(Sema *S, const char *fn, const char *name, const Node *n, int dflt)
{
	IrExpr *e;

	if (!n)
		return dflt;
	e = sx_expr(S, n);
	if (!e)
		return -1;
	if (e->kind != IE_BOOL) {
		diag(S->d, n->loc, "%s: %s must be true or false, got '%s'", fn, name, sx_text(S, e));
		return -1;
	}
	return (int)e->u.i;
}

/* the buffer a name refers to, or -1 after reporting */
static int
bufref(Sema *S, const char *fn, const Node *n)
{
	Sym *s;

	if (n->kind != N_IDENT) {
		diag(S->d, n->loc, "%s: expected a buffer name", fn);
		return -1;
	}
	s = sema_lookup(S, n->u.name);
	if (s && SYM_POISONED(s))
		return -1;
	if (!s) {
		diag(S->d, n->loc, "%s: unknown buffer '%s'", fn, n->u.name);
		return -1;
	}
	if (s->kind != SYM_BUF) {
		diag(S->d, n->loc, "%s: '%s' is not a buffer", fn, n->u.name);
		return -1;
	}
	return s->u.buf;
}

/* ---- shapes ------------------------------------------------------------ */

static const char *
shapetext(Sema *S, const int64_t *ext, int n)
{
	Buf b;
	const char *s;
	int i;

	buf_init(&b);
	buf_putc(&b, '[');
	for (i = 0; i < n; i++)
		buf_printf(&b, "%s%lld", i ? ", " : "", (long long)ext[i]);
	buf_putc(&b, ']');
	s = arena_strdup(S->a, buf_str(&b));
	buf_free(&b);
	return s ? s : "?";
}

static const char *
bufshape(Sema *S, const IrBuffer *b)
{
	Buf t;
	const char *s;
	int i;

	buf_init(&t);
	buf_printf(&t, "%s %s[", memscope_name(b->scope), dtype_name(b->dtype));
	for (i = 0; i < b->ndim; i++) {
		if (b->dims[i].sym)
			buf_printf(&t, "%s%s", i ? ", " : "", b->dims[i].sym->name);
		else
			buf_printf(&t, "%s%lld", i ? ", " : "", (long long)b->dims[i].c);
	}
	buf_putc(&t, ']');
	s = arena_strdup(S->a, buf_str(&t));
	buf_free(&t);
	return s ? s : "?";
}

/* ext without its unit dims, into out; returns the count */
static int
squeeze(const int64_t *ext, int n, int64_t *out)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (ext[i] != 1)
			out[m++] = ext[i];
	return m;
}

static int
sameshape(const int64_t *x, int nx, const int64_t *y, int ny)
{
	int64_t a[64], b[64];
	int na, nb;

	if (nx > 64 || ny > 64)
		return 0;
	na = squeeze(x, nx, a);
	nb = squeeze(y, ny, b);
	return na == nb && !memcmp(a, b, sizeof a[0] * (size_t)na);
}

/* ---- regions ----------------------------------------------------------- */

typedef struct RegArg {
	Region r;
	int known;    /* extents known (whole buffer or slices) */
	Loc loc;
} RegArg;

/* a region argument: a buffer name, buf[offsets] or buf[slices]; -1 after reporting */
static int
region(Sema *S, const char *fn, const char *role, const Node *n, RegArg *ra)
{
	const Node *ix;
	IrBuffer *b;
	Sym *s;
	int i, nslice = 0, bad = 0;
	const Node *base = n->kind == N_INDEX ? n->u.index.base : n;

	memset(ra, 0, sizeof *ra);
	ra->loc = n->loc;
	if (base->kind != N_IDENT || (n->kind != N_IDENT && n->kind != N_INDEX)) {
		diag(S->d, n->loc, "%s: %s must be a buffer or a buffer region", fn, role);
		return -1;
	}
	s = sema_lookup(S, base->u.name);
	if (s && SYM_POISONED(s))
		return -1;
	if (!s || s->kind != SYM_BUF) {
		if (!s)
			diag(S->d, base->loc, "%s: unknown buffer '%s'", fn, base->u.name);
		else
			diag(S->d, base->loc, "%s: %s '%s' is not a buffer", fn, role, base->u.name);
		return -1;
	}
	b = &S->k->bufs[s->u.buf];
	ra->r.buf = s->u.buf;
	ra->r.ndim = b->ndim;
	ra->r.off = anewn(S->a, IrExpr *, b->ndim);
	ra->r.ext = anewn(S->a, int64_t, b->ndim);
	if (!ra->r.off || !ra->r.ext)
		return -1;
	if (n->kind == N_IDENT) {
		for (i = 0; i < b->ndim; i++) {
			if (b->dims[i].sym) {
				diag(S->d, n->loc,
				     "%s: %s '%s' has the symbolic shape %s; give an offset %s[...] or slices",
				     fn, role, b->name, bufshape(S, b), b->name);
				return -1;
			}
			ra->r.off[i] = ir_int(S->a, n->loc, 0);
			ra->r.ext[i] = b->dims[i].c;
		}
		ra->known = 1;
		return 0;
	}
	if (n->u.index.nidx != b->ndim) {
		diag(S->d, n->loc, "%s: '%s' has %d dimension%s but the region gives %d", fn, b->name,
		     b->ndim, b->ndim == 1 ? "" : "s", n->u.index.nidx);
		return -1;
	}
	for (ix = n->u.index.idx; ix; ix = ix->next)
		nslice += ix->kind == N_SLICE;
	for (i = 0, ix = n->u.index.idx; ix && i < b->ndim; i++, ix = ix->next) {
		if (ix->kind == N_SLICE) {
			IrExpr *lo = ix->u.slice.lo ? sx_int(S, ix->u.slice.lo, "a slice bound")
						    : ir_int(S->a, ix->loc, 0);
			IrExpr *hi = NULL;
			int64_t d;

			if (ix->u.slice.hi)
				hi = sx_int(S, ix->u.slice.hi, "a slice bound");
			else if (!b->dims[i].sym)
				hi = ir_int(S->a, ix->loc, b->dims[i].c);
			else {
				diag(S->d, ix->loc, "%s: slice of '%s' needs an upper bound in dimension %d",
				     fn, b->name, i);
				bad = 1;
				continue;
			}
			if (!lo || !hi) {
				bad = 1;
				continue;
			}
			if (!sx_const_diff(hi, lo, &d)) {
				diag(S->d, ix->loc,
				     "%s: slice '%s : %s' of '%s' must have a constant length", fn,
				     sx_text(S, lo), sx_text(S, hi), b->name);
				bad = 1;
				continue;
			}
			if (d <= 0) {
				diag(S->d, ix->loc, "%s: slice of '%s' in dimension %d is empty (length %lld)",
				     fn, b->name, i, (long long)d);
				bad = 1;
				continue;
			}
			ra->r.off[i] = lo;
			ra->r.ext[i] = d;
		} else {
			ra->r.off[i] = sx_int(S, ix, "an offset");
			if (!ra->r.off[i])
				bad = 1;
			ra->r.ext[i] = nslice ? 1 : 0;
		}
	}
	ra->known = nslice > 0;
	return bad ? -1 : 0;
}

/* give t (a tile at an offset) the shape of o; -1 after reporting */
static int
infer_extents(Sema *S, const char *fn, RegArg *t, const RegArg *o)
{
	int64_t sq[64];
	int m, i, d = t->r.ndim;

	if (o->r.ndim > 64)
		return -1;
	m = squeeze(o->r.ext, o->r.ndim, sq);
	if (m > d) {
		diag(S->d, t->loc, "%s: a tile of shape %s does not fit in the %d dimension%s of '%s'",
		     fn, shapetext(S, o->r.ext, o->r.ndim), d, d == 1 ? "" : "s",
		     S->k->bufs[t->r.buf].name);
		return -1;
	}
	for (i = 0; i < d; i++)
		t->r.ext[i] = i < d - m ? 1 : sq[i - (d - m)];
	t->known = 1;
	return 0;
}

/* is the region inside its buffer (where that can be decided)? */
static int
inbounds(Sema *S, const char *fn, const RegArg *ra)
{
	const IrBuffer *b = &S->k->bufs[ra->r.buf];
	int i, bad = 0;
	int64_t off, end;

	for (i = 0; i < ra->r.ndim; i++) {
		if (b->dims[i].sym)
			continue;
		if (ra->r.ext[i] > b->dims[i].c) {
			diag(S->d, ra->loc, "%s: region of '%s' has extent %lld in dimension %d, larger than its size %lld",
			     fn, b->name, (long long)ra->r.ext[i], i, (long long)b->dims[i].c);
			bad = 1;
		} else if (ir_is_const(ra->r.off[i], &off) &&
			   (off < 0 || __builtin_add_overflow(off, ra->r.ext[i], &end) ||
			    end > b->dims[i].c)) {
			diag(S->d, ra->loc, "%s: region [%lld, %lld) of '%s' is out of bounds in dimension %d (size %lld)",
			     fn, (long long)off, (long long)(off + ra->r.ext[i]), b->name, i,
			     (long long)b->dims[i].c);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* ---- tile ops ------------------------------------------------------------- */

static IrStmt *
op_copy(Sema *S, const Node *c)
{
	static const Param ps[] = {{"src", 1}, {"dst", 1}};
	const Node *a[2];
	RegArg src, dst;
	IrBuffer *bs, *bd;
	IrStmt *s;

	if (getargs(S, c, ps, 2, a))
		return NULL;
	if (region(S, "copy", "source", a[0], &src) | region(S, "copy", "destination", a[1], &dst))
		return NULL;
	bs = &S->k->bufs[src.r.buf];
	bd = &S->k->bufs[dst.r.buf];
	if (bs->scope == MEM_GLOBAL && bd->scope == MEM_GLOBAL) {
		diag(S->d, c->loc,
		     "copy: both '%s' and '%s' are global; copy through a shared or local buffer",
		     bs->name, bd->name);
		return NULL;
	}
	if (!src.known && !dst.known) {
		diag(S->d, c->loc, "copy: cannot tell the tile shape; make '%s' or '%s' a whole buffer or use slices",
		     bs->name, bd->name);
		return NULL;
	}
	if (!src.known && infer_extents(S, "copy", &src, &dst))
		return NULL;
	if (!dst.known && infer_extents(S, "copy", &dst, &src))
		return NULL;
	if (!sameshape(src.r.ext, src.r.ndim, dst.r.ext, dst.r.ndim)) {
		diag(S->d, c->loc, "copy: source shape %s does not match destination shape %s",
		     shapetext(S, src.r.ext, src.r.ndim), shapetext(S, dst.r.ext, dst.r.ndim));
		return NULL;
	}
	if (inbounds(S, "copy", &src) | inbounds(S, "copy", &dst))
		return NULL;
	s = ir_stmt(S->a, S_COPY, c->loc);
	if (s) {
		s->u.copy.src = src.r;
		s->u.copy.dst = dst.r;
	}
	return s;
}

/* a gemm operand: known extents, 2-D after leading unit dims; rows/cols out */
static int
gemm_operand(Sema *S, const char *role, const Node *n, RegArg *ra, int64_t rc[2])
{
	const IrBuffer *b;
	int i;

	if (region(S, "gemm", role, n, ra))
		return -1;
	b = &S->k->bufs[ra->r.buf];
	if (!ra->known) {
		diag(S->d, n->loc, "gemm: operand %s '%s' needs a whole buffer or slices, not an offset",
		     role, b->name);
		return -1;
	}
	for (i = 0; i + 2 < ra->r.ndim; i++) {
		if (ra->r.ext[i] != 1)
			break;
	}
	if (ra->r.ndim < 2 || i + 2 != ra->r.ndim) {
		diag(S->d, n->loc, "gemm: operand %s '%s' must be 2-dimensional, its shape is %s", role,
		     b->name, shapetext(S, ra->r.ext, ra->r.ndim));
		return -1;
	}
	rc[0] = ra->r.ext[ra->r.ndim - 2];
	rc[1] = ra->r.ext[ra->r.ndim - 1];
	return inbounds(S, "gemm", ra);
}

static IrStmt *
op_gemm(Sema *S, const Node *c)
{
	static const Param ps[] = {{"A", 1}, {"B", 1}, {"C", 1},
				   {"trans_a", 0}, {"trans_b", 0}, {"clear", 0}};
	const Node *a[6];
	RegArg ra, rb, rcc;
	int64_t sa[2], sb[2], sc[2], m, n, ka, kb;
	int ta, tb, cl, bad = 0;
	const IrBuffer *A, *B, *C;
	IrStmt *s;

	if (getargs(S, c, ps, 6, a))
		return NULL;
	ta = boolarg(S, "gemm", "trans_a", a[3], 0);
	tb = boolarg(S, "gemm", "trans_b", a[4], 0);
	cl = boolarg(S, "gemm", "clear", a[5], 0);
	bad |= gemm_operand(S, "A", a[0], &ra, sa);
	bad |= gemm_operand(S, "B", a[1], &rb, sb);
	bad |= gemm_operand(S, "C", a[2], &rcc, sc);
	if (bad || ta < 0 || tb < 0 || cl < 0)
		return NULL;
	A = &S->k->bufs[ra.r.buf];
	B = &S->k->bufs[rb.r.buf];
	C = &S->k->bufs[rcc.r.buf];
	if (A->scope == MEM_GLOBAL) {
		diag(S->d, a[0]->loc, "gemm: operand A '%s' is global; copy it to a shared or local buffer first",
		     A->name);
		bad = 1;
	}
	if (B->scope == MEM_GLOBAL) {
		diag(S->d, a[1]->loc, "gemm: operand B '%s' is global; copy it to a shared or local buffer first",
		     B->name);
		bad = 1;
	}
	if (C->scope != MEM_LOCAL) {
		diag(S->d, a[2]->loc, "gemm: accumulator '%s' must be a local buffer, it is %s", C->name,
		     memscope_name(C->scope));
		bad = 1;
	}
	if (A->dtype != B->dtype) {
		diag(S->d, c->loc, "gemm: operands A '%s' and B '%s' have different element types %s and %s",
		     A->name, B->name, dtype_name(A->dtype), dtype_name(B->dtype));
		bad = 1;
	} else if (dtype_is_float(A->dtype) ? !dtype_is_float(C->dtype) || dtype_bytes(C->dtype) < 2
					    : C->dtype != DT_I32) {
		diag(S->d, a[2]->loc, "gemm: accumulator '%s' of type %s cannot accumulate %s products",
		     C->name, dtype_name(C->dtype), dtype_name(A->dtype));
		bad = 1;
	} else if (A->dtype == DT_BOOL) {
		diag(S->d, c->loc, "gemm: operands of type bool");
		bad = 1;
	}
	m = sa[ta ? 1 : 0];
	ka = sa[ta ? 0 : 1];
	kb = sb[tb ? 1 : 0];
	n = sb[tb ? 0 : 1];
	if (ka != kb) {
		diag(S->d, c->loc, "gemm: A '%s' is %s and B '%s' is %s: reduction dimensions %lld and %lld differ",
		     A->name, shapetext(S, sa, 2), B->name, shapetext(S, sb, 2), (long long)ka,
		     (long long)kb);
		bad = 1;
	} else if (sc[0] != m || sc[1] != n) {
		int64_t want[2] = {m, n};

		diag(S->d, a[2]->loc, "gemm: C '%s' has shape %s, expected %s from A and B", C->name,
		     shapetext(S, sc, 2), shapetext(S, want, 2));
		bad = 1;
	}
	if (bad)
		return NULL;
	s = ir_stmt(S->a, S_GEMM, c->loc);
	if (s) {
		s->u.gemm.a = ra.r;
		s->u.gemm.b = rb.r;
		s->u.gemm.c = rcc.r;
		s->u.gemm.trans_a = ta;
		s->u.gemm.trans_b = tb;
		s->u.gemm.clear = cl;
	}
	return s;
}

static IrStmt *
op_fill(Sema *S, const Node *c, int clear)
{
	static const Param ps[] = {{"dst", 1}, {"value", 1}};
	const char *fn = clear ? "clear" : "fill";
	const Node *a[2];
	const IrBuffer *b;
	RegArg r;
	IrExpr *v;
	IrStmt *s;

	if (getargs(S, c, ps, clear ? 1 : 2, a))
		return NULL;
	if (region(S, fn, "destination", a[0], &r))
		return NULL;
	b = &S->k->bufs[r.r.buf];
	if (!r.known) {
		diag(S->d, a[0]->loc, "%s: '%s' needs a whole buffer or slices, not an offset", fn,
		     b->name);
		return NULL;
	}
	if (b->scope == MEM_GLOBAL) {
		diag(S->d, a[0]->loc, "%s: '%s' is global; %s a shared or local buffer", fn, b->name,
		     fn);
		return NULL;
	}
	if (inbounds(S, fn, &r))
		return NULL;
	if (clear)
		v = b->dtype == DT_BOOL		 ? ir_bool(S->a, c->loc, 0)
		    : dtype_is_float(b->dtype) ? ir_float(S->a, c->loc, b->dtype, 0)
					       : sx_convert(S, ir_int(S->a, c->loc, 0), b->dtype,
							    c->loc, fn);
	else
		v = sx_convert(S, sx_expr(S, a[1]), b->dtype, a[1]->loc, "fill value");
	if (!v)
		return NULL;
	s = ir_stmt(S->a, S_FILL, c->loc);
	if (s) {
		s->u.fill.dst = r.r;
		s->u.fill.value = v;
	}
	return s;
}

static IrStmt *
op_reduce(Sema *S, const Node *c)
{
	static const Param ps[] = {{"src", 1}, {"dst", 1}, {"op", 0}, {"dim", 0}, {"clear", 0}};
	static const char *const ops[] = {"sum", "max", "min", "absmax"};
	const Node *a[5];
	int src, dst, op = RED_SUM, cl, i, j, bad = 0;
	int64_t dim = -1, want[64];
	const IrBuffer *bs, *bd;
	IrStmt *s;

	if (getargs(S, c, ps, 5, a))
		return NULL;
	src = bufref(S, "reduce", a[0]);
	dst = bufref(S, "reduce", a[1]);
	if (a[2]) {
		if (a[2]->kind != N_IDENT) {
			diag(S->d, a[2]->loc, "reduce: op must be one of sum, max, min, absmax");
			bad = 1;
		} else {
			for (op = 0; op < (int)countof(ops); op++)
				if (!strcmp(ops[op], a[2]->u.name))
					break;
			if (op == (int)countof(ops)) {
				diag(S->d, a[2]->loc,
				     "reduce: unknown op '%s' (sum, max, min or absmax)", a[2]->u.name);
				bad = 1;
			}
		}
	}
	if (a[3] && sx_const_int(S, a[3], "reduce: dim", &dim))
		bad = 1;
	cl = boolarg(S, "reduce", "clear", a[4], 1);
	if (src < 0 || dst < 0 || bad || cl < 0)
		return NULL;
	bs = &S->k->bufs[src];
	bd = &S->k->bufs[dst];
	if (bs->scope == MEM_GLOBAL || bd->scope == MEM_GLOBAL) {
		diag(S->d, c->loc, "reduce: '%s' is global; reduce shared or local buffers",
		     (bs->scope == MEM_GLOBAL ? bs : bd)->name);
		return NULL;
	}
	if (dim < -bs->ndim || dim >= bs->ndim) {
		diag(S->d, a[3] ? a[3]->loc : c->loc,
		     "reduce: dim %lld out of range for '%s' with %d dimension%s", (long long)dim,
		     bs->name, bs->ndim, bs->ndim == 1 ? "" : "s");
		return NULL;
	}
	if (dim < 0)
		dim += bs->ndim;
	for (i = j = 0; i < bs->ndim && j < 64; i++)
		if (i != dim)
			want[j++] = bs->dims[i].c;
	{
		int64_t got[64];

		for (i = 0; i < bd->ndim && i < 64; i++)
			got[i] = bd->dims[i].c;
		if (!sameshape(got, bd->ndim, want, j)) {
			int64_t full[64];

			for (i = 0; i < bs->ndim && i < 64; i++)
				full[i] = bs->dims[i].c;
			diag(S->d, c->loc,
			     "reduce: destination '%s' has shape %s, expected %s (source shape %s without dim %lld)",
			     bd->name, shapetext(S, got, bd->ndim), shapetext(S, want, j),
			     shapetext(S, full, bs->ndim), (long long)dim);
			return NULL;
		}
	}
	s = ir_stmt(S->a, S_REDUCE, c->loc);
	if (s) {
		s->u.reduce.src = src;
		s->u.reduce.dst = dst;
		s->u.reduce.op = (ReduceOp)op;
		s->u.reduce.dim = (int)dim;
		s->u.reduce.clear = cl;
	}
	return s;
}

static IrStmt *
op_assume(Sema *S, const Node *c)
{
	static const Param ps[] = {{"cond", 1}};
	const Node *a[1];
	IrExpr *e;
	IrStmt *s;

	if (getargs(S, c, ps, 1, a))
		return NULL;
	e = sx_bool(S, a[0], "assume");
	if (!e)
		return NULL;
	if (e->kind == IE_BOOL && !e->u.i) {
		diag(S->d, a[0]->loc, "assume: the condition is always false");
		return NULL;
	}
	s = ir_stmt(S->a, S_ASSUME, c->loc);
	if (s)
		s->u.assume.cond = e;
	if (S->k->nassume % 8 == 0) {
		IrExpr **na = arena_realloc(S->a, S->k->assumes, sizeof *na * (size_t)S->k->nassume,
					    sizeof *na * (size_t)(S->k->nassume + 8));

		if (!na)
			return s;
		S->k->assumes = na;
	}
	S->k->assumes[S->k->nassume++] = e;
	return s;
}

/* ---- statements -------------------------------------------------------------- */

typedef struct Tail {
	IrStmt **p;
} Tail;

static void stmts(Sema *S, const Node *list, Tail *t);

static void
append(Tail *t, IrStmt *s)
{
	if (!s)
		return;
	*t->p = s;
	while (s->next)
		s = s->next;
	t->p = &s->next;
}

static IrStmt *
block(Sema *S, const Node *list)
{
	IrStmt *head = NULL;
	Tail t = {&head};

	if (S->depth >= 512) {
		if (list)
			diag(S->d, list->loc, "statements nested too deeply (more than 512 levels, counting inlined helpers)");
		return NULL;
	}
	S->depth++;
	sema_push(S);
	stmts(S, list, &t);
	sema_pop(S);
	S->depth--;
	return head;
}

static void inline_call(Sema *S, const Node *c, Sym *fn, Tail *t);

static void
callstmt(Sema *S, const Node *c, Tail *t)
{
	const char *name = c->u.call.name;
	Sym *s = sema_lookup(S, name);
	IrStmt *st = NULL;
	int tileop = !strcmp(name, "copy") || !strcmp(name, "gemm") || !strcmp(name, "fill") ||
		     !strcmp(name, "clear") || !strcmp(name, "reduce") || sl_is_layout_stmt(name);

	if (s && s->kind == SYM_FUNC) {
		inline_call(S, c, s, t);
		return;
	}
	if (s && SYM_POISONED(s))
		return;
	if (s) {
		diag(S->d, c->loc, "'%s' is a %s, not a function", name,
		     s->kind == SYM_KERNEL ? "kernel" : s->kind == SYM_BUF ? "buffer" : "value");
		return;
	}
	if (tileop && S->in_par) {
		diag(S->d, c->loc, "%s inside a parallel loop; tile operations act on whole tiles", name);
		return;
	}
	if (!strcmp(name, "copy"))
		st = op_copy(S, c);
	else if (!strcmp(name, "gemm"))
		st = op_gemm(S, c);
	else if (!strcmp(name, "fill"))
		st = op_fill(S, c, 0);
	else if (!strcmp(name, "clear"))
		st = op_fill(S, c, 1);
	else if (!strcmp(name, "reduce"))
		st = op_reduce(S, c);
	else if (!strcmp(name, "assume"))
		st = op_assume(S, c);
	else if (sl_is_layout_stmt(name))
		sl_layout_stmt(S, c, &st);
	else if (sema_builtin_name(name))
		diag(S->d, c->loc, "'%s' cannot be used as a statement", name);
	else
		diag(S->d, c->loc, "unknown operation or helper '%s'", name);
	append(t, st);
}

static IrStmt *
bufdecl(Sema *S, const Node *n)
{
	const Node *d;
	IrDim *dims;
	DType t = dtype_lookup(n->u.decl.dtype, (int)strlen(n->u.decl.dtype));
	int i, bad = 0, id;
	int64_t total = 1, v;
	Sym *s;

	if (t == DT_NONE) {
		diag(S->d, n->u.decl.dtloc, "unknown element type '%s'", n->u.decl.dtype);
		bad = 1;
	}
	if (S->in_par) {
		diag(S->d, n->loc, "buffer '%s' declared inside a parallel loop", n->u.decl.name);
		bad = 1;
	}
	if (!n->u.decl.tensor || n->u.decl.ndim == 0) {
		diag(S->d, n->loc, "buffer '%s' needs a shape, e.g. %s[128, 32]", n->u.decl.name,
		     n->u.decl.dtype);
		bad = 1;
	}
	dims = anewn(S->a, IrDim, n->u.decl.ndim > 0 ? n->u.decl.ndim : 1);
	if (!dims)
		return NULL;
	for (i = 0, d = n->u.decl.dims; d && i < n->u.decl.ndim; i++, d = d->next) {
		IrExpr *e = sx_expr(S, d);

		if (!e) {
			bad = 1;
			continue;
		}
		if (e->kind != IE_INT) {
			diag(S->d, d->loc,
			     "shape of buffer '%s' must be constant: dimension %d is '%s'",
			     n->u.decl.name, i, sx_text(S, e));
			bad = 1;
			continue;
		}
		v = e->u.i;
		if (v <= 0) {
			diag(S->d, d->loc, "dimension %d of buffer '%s' must be positive, got %lld", i,
			     n->u.decl.name, (long long)v);
			bad = 1;
			continue;
		}
		if (__builtin_mul_overflow(total, v, &total) || total > ((int64_t)1 << 40)) {
			diag(S->d, d->loc, "buffer '%s' is too large", n->u.decl.name);
			bad = 1;
			total = 1;
		}
		dims[i].c = v;
	}
	s = sema_declare(S, SYM_BUF, n->u.decl.name, n->loc);
	if (!s)
		return NULL;
	if (bad) {
		s->kind = SYM_EXPR; /* poisoned */
		return NULL;
	}
	id = ir_kernel_buffer(S->a, S->k, n->u.decl.name,
			      n->u.decl.scope == SCOPE_SHARED ? MEM_SHARED : MEM_LOCAL, t,
			      n->u.decl.ndim, dims, n->loc);
	s->u.buf = id;
	if (id < 0)
		s->kind = SYM_EXPR; /* out of memory; keep the table consistent */
	return NULL;
}

static void
assign(Sema *S, const Node *n, Tail *t)
{
	const Node *lhs = n->u.assign.lhs;
	IrExpr *cur = NULL, *rhs;
	IrStmt *s;
	BinOp op;
	DType type;

	if (lhs->kind == N_IDENT) {
		Sym *sym = sema_lookup(S, lhs->u.name);

		if (!sym) {
			diag(S->d, lhs->loc, "unknown name '%s'", lhs->u.name);
			return;
		}
		if (SYM_POISONED(sym))
			return;
		if (sym->kind != SYM_VAR || sym->u.var->kind != VAR_LET) {
			diag(S->d, lhs->loc, "cannot assign to '%s'; only let variables and buffer elements can be assigned",
			     lhs->u.name);
			return;
		}
		type = sym->u.var->type;
		if (n->u.assign.op != OP_NONE)
			cur = ir_var(S->a, lhs->loc, sym->u.var);
		rhs = sx_expr(S, n->u.assign.rhs);
	} else {
		if (!S->in_loop) {
			diag(S->d, n->loc, "element assignment outside a loop; use a parallel or serial loop");
			return;
		}
		cur = sx_expr(S, lhs);
		rhs = sx_expr(S, n->u.assign.rhs);
		if (!cur)
			return;
		type = cur->type;
		if (n->u.assign.op == OP_NONE)
			cur = NULL;
	}
	if (!rhs)
		return;
	if (cur) {
		switch (n->u.assign.op) {
		case OP_ADD: op = BIN_ADD; break;
		case OP_SUB: op = BIN_SUB; break;
		case OP_MUL: op = BIN_MUL; break;
		case OP_DIV: op = BIN_DIV; break;
		default:
			diag(S->d, n->loc, "unknown assignment operator");
			return;
		}
		rhs = sx_binary(S, n->loc, op, cur, rhs);
	}
	rhs = sx_convert(S, rhs, type, n->u.assign.rhs->loc, "assignment");
	if (!rhs)
		return;
	if (lhs->kind == N_IDENT) {
		s = ir_stmt(S->a, S_SET, n->loc);
		if (!s)
			return;
		s->u.let.var = sema_lookup(S, lhs->u.name)->u.var;
		s->u.let.value = rhs;
	} else {
		IrExpr *ld = sx_expr(S, lhs);

		s = ir_stmt(S->a, S_STORE, n->loc);
		if (!s || !ld)
			return;
		s->u.store.buf = ld->u.load.buf;
		s->u.store.n = ld->u.load.n;
		s->u.store.idx = ld->u.load.idx;
		s->u.store.value = rhs;
	}
	append(t, s);
}

static void
let(Sema *S, const Node *n, Tail *t)
{
	IrExpr *v = sx_expr(S, n->u.bind.value);
	Sym *sym = sema_declare(S, SYM_VAR, n->u.bind.name, n->loc);
	IrStmt *s;

	if (!v || !sym) {
		if (sym) { /* keep the name known to avoid follow-on errors */
			sym->kind = SYM_EXPR;
			sym->u.val = NULL;
		}
		return;
	}
	sym->u.var = ir_kernel_var(S->a, S->k, VAR_LET, v->type, n->u.bind.name, n->loc);
	s = ir_stmt(S->a, S_LET, n->loc);
	if (!s || !sym->u.var)
		return;
	s->u.let.var = sym->u.var;
	s->u.let.value = v;
	append(t, s);
}

static IrVar *
loopvar(Sema *S, const Node *id)
{
	Sym *s = sema_declare(S, SYM_VAR, id->u.name, id->loc);

	if (!s)
		return NULL;
	s->u.var = ir_kernel_var(S->a, S->k, VAR_LOOP, DT_INT, id->u.name, id->loc);
	if (!s->u.var)
		s->kind = SYM_EXPR;
	return s->u.var;
}

static void
forloop(Sema *S, const Node *n, Tail *t)
{
	const Node *it = n->u.loop.iter, *a;
	const char *kind = it && it->kind == N_CALL ? it->u.call.name : "";
	IrStmt *s = NULL;
	int i, bad = 0;

	if (strcmp(kind, "range") && strcmp(kind, "pipeline") && strcmp(kind, "parallel")) {
		diag(S->d, it ? it->loc : n->loc,
		     "a for loop iterates over range(...), pipeline(...) or parallel(...)");
		return;
	}
	if (strcmp(kind, "parallel") && n->u.loop.nvars != 1) {
		diag(S->d, n->loc, "%s(...) takes one loop variable, got %d", kind, n->u.loop.nvars);
		return;
	}
	sema_push(S);
	if (!strcmp(kind, "range")) {
		IrExpr *lo, *hi;

		for (a = it->u.call.args; a; a = a->next)
			if (a->kind == N_NAMED) {
				diag(S->d, a->loc, "range: unknown argument '%s'", a->u.bind.name);
				bad = 1;
			}
		if (it->u.call.nargs < 1 || it->u.call.nargs > 2) {
			diag(S->d, it->loc, "range takes 1 or 2 arguments, got %d", it->u.call.nargs);
			bad = 1;
		}
		if (bad)
			goto out;
		lo = it->u.call.nargs == 2 ? sx_int(S, it->u.call.args, "a range bound")
					   : ir_int(S->a, it->loc, 0);
		hi = sx_int(S, it->u.call.nargs == 2 ? it->u.call.args->next : it->u.call.args,
			    "a range bound");
		if (!lo || !hi)
			goto out;
		s = ir_stmt(S->a, S_FOR, n->loc);
		if (!s)
			goto out;
		s->u.loop.lo = lo;
		s->u.loop.extent = sx_binary(S, it->loc, BIN_SUB, hi, lo);
		if (s->u.loop.extent && ir_is_const(s->u.loop.extent, NULL) &&
		    s->u.loop.extent->u.i < 0)
			s->u.loop.extent->u.i = 0;
		s->u.loop.var = loopvar(S, n->u.loop.vars);
		S->in_loop++;
		s->u.loop.body = block(S, n->u.loop.body);
		S->in_loop--;
		if (!s->u.loop.var || !s->u.loop.extent)
			s = NULL;
	} else if (!strcmp(kind, "pipeline")) {
		static const Param ps[] = {{"n", 1}, {"stages", 0}};
		const Node *args[2];
		IrExpr *ext;
		int64_t stages = 2;

		if (S->in_par) {
			diag(S->d, it->loc, "pipeline loop inside a parallel loop");
			goto out;
		}
		if (getargs(S, it, ps, 2, args))
			goto out;
		ext = sx_int(S, args[0], "pipeline extent");
		if (args[1] && !sx_const_int(S, args[1], "pipeline: stages", &stages) &&
		    (stages < 1 || stages > 16)) {
			diag(S->d, args[1]->loc, "pipeline: stages must be from 1 to 16, got %lld",
			     (long long)stages);
			goto out;
		}
		if (!ext)
			goto out;
		s = ir_stmt(S->a, S_PIPELINE, n->loc);
		if (!s)
			goto out;
		s->u.pipe.extent = ext;
		s->u.pipe.stages = (int)stages;
		s->u.pipe.var = loopvar(S, n->u.loop.vars);
		S->in_loop++;
		s->u.pipe.body = block(S, n->u.loop.body);
		S->in_loop--;
		if (!s->u.pipe.var)
			s = NULL;
	} else {
		int np = it->u.call.nargs;
		const Node *v;

		if (S->in_par) {
			diag(S->d, it->loc, "parallel loop nested inside a parallel loop; list all extents in one parallel(...)");
			goto out;
		}
		if (np != n->u.loop.nvars) {
			diag(S->d, it->loc, "parallel(...) has %d extent%s but the loop has %d variable%s",
			     np, np == 1 ? "" : "s", n->u.loop.nvars, n->u.loop.nvars == 1 ? "" : "s");
			goto out;
		}
		s = ir_stmt(S->a, S_PARALLEL, n->loc);
		if (!s)
			goto out;
		s->u.par.n = np;
		s->u.par.vars = anewn(S->a, IrVar *, np);
		s->u.par.ext = anewn(S->a, int64_t, np);
		if (!s->u.par.vars || !s->u.par.ext)
			goto out;
		for (i = 0, a = it->u.call.args; a; i++, a = a->next) {
			IrExpr *e;

			if (a->kind == N_NAMED) {
				diag(S->d, a->loc, "parallel: unknown argument '%s'", a->u.bind.name);
				bad = 1;
				continue;
			}
			e = sx_expr(S, a);
			if (!e) {
				bad = 1;
				continue;
			}
			if (e->kind != IE_INT || e->u.i <= 0) {
				diag(S->d, a->loc, "parallel extent must be a positive constant, got '%s'",
				     sx_text(S, e));
				bad = 1;
				continue;
			}
			s->u.par.ext[i] = e->u.i;
		}
		for (i = 0, v = n->u.loop.vars; v; i++, v = v->next)
			if (!(s->u.par.vars[i] = loopvar(S, v)))
				bad = 1;
		S->in_par++;
		S->in_loop++;
		s->u.par.body = block(S, n->u.loop.body);
		S->in_par--;
		S->in_loop--;
		if (bad)
			s = NULL;
	}
out:
	sema_pop(S);
	append(t, s);
}

static void
ifstmt(Sema *S, const Node *n, Tail *t)
{
	IrExpr *c = sx_bool(S, n->u.cond.cond, "if condition");
	IrStmt *then = block(S, n->u.cond.then), *els = block(S, n->u.cond.els), *s;

	if (!c)
		return;
	if (c->kind == IE_BOOL) { /* a constant condition keeps only its branch */
		sema_push(S);
		append(t, c->u.i ? then : els);
		sema_pop(S);
		return;
	}
	s = ir_stmt(S->a, S_IF, n->loc);
	if (!s)
		return;
	s->u.cond.cond = c;
	s->u.cond.then = then;
	s->u.cond.els = els;
	append(t, s);
}

static void
stmts(Sema *S, const Node *n, Tail *t)
{
	for (; n; n = n->next) {
		switch (n->kind) {
		case N_BUFFER:
			bufdecl(S, n);
			break;
		case N_CALL:
			callstmt(S, n, t);
			break;
		case N_ASSIGN:
			assign(S, n, t);
			break;
		case N_LET:
			let(S, n, t);
			break;
		case N_FOR:
			forloop(S, n, t);
			break;
		case N_IF:
			ifstmt(S, n, t);
			break;
		default:
			diag(S->d, n->loc, "expected a statement, found a %s", ast_kind_name(n->kind));
			break;
		}
	}
}

/* ---- helper inlining ----------------------------------------------------- */

/* bind the tensor parameter p to the caller's buffer `buf`; -1 after reporting */
static int
bindtensor(Sema *S, const Node *fn, const Node *p, int argi, const Node *arg, int buf)
{
	const IrBuffer *b = &S->k->bufs[buf];
	MemScope want = p->u.decl.scope == SCOPE_SHARED ? MEM_SHARED
			: p->u.decl.scope == SCOPE_LOCAL ? MEM_LOCAL
							 : MEM_GLOBAL;
	DType t = dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));
	const Node *d;
	int i, bad = 0;

	if (t != b->dtype || want != b->scope || p->u.decl.ndim != b->ndim) {
		Buf pb;

		buf_init(&pb);
		buf_printf(&pb, "%s %s[", memscope_name(want), p->u.decl.dtype);
		for (d = p->u.decl.dims; d; d = d->next) {
			if (d != p->u.decl.dims)
				buf_puts(&pb, ", ");
			if (d->kind == N_INT)
				buf_printf(&pb, "%lld", (long long)d->u.ival);
			else if (d->kind == N_IDENT)
				buf_puts(&pb, d->u.name);
			else
				buf_putc(&pb, '?');
		}
		buf_putc(&pb, ']');
		diag(S->d, arg->loc, "%s: argument %d '%s' is %s, parameter '%s' expects %s",
		     fn->u.fn.name, argi + 1, b->name, bufshape(S, b), p->u.decl.name, buf_str(&pb));
		buf_free(&pb);
		return -1;
	}
	for (i = 0, d = p->u.decl.dims; d; i++, d = d->next) {
		Sym *s = d->kind == N_IDENT ? sema_lookup(S, d->u.name) : NULL;
		int64_t v;

		if (d->kind == N_IDENT && (!s || s->level == S->level)) {
			/* a shape name: bound to the argument's extent */
			if (!s) {
				s = sema_declare(S, b->dims[i].sym ? SYM_VAR : SYM_CONST, d->u.name, d->loc);
				if (!s)
					return -1;
				if (b->dims[i].sym) {
					s->u.var = b->dims[i].sym;
				} else {
					s->state = 2;
					s->u.val = ir_int(S->a, d->loc, b->dims[i].c);
				}
				continue;
			}
			if (s->kind == SYM_VAR ? s->u.var == b->dims[i].sym
					       : s->kind == SYM_CONST && !b->dims[i].sym &&
							 s->u.val->u.i == b->dims[i].c)
				continue;
			bad = 1;
			break;
		}
		if (sx_const_int(S, d, "a parameter dimension", &v))
			return -1;
		if (b->dims[i].sym || v != b->dims[i].c) {
			bad = 1;
			break;
		}
	}
	if (bad) {
		diag(S->d, arg->loc, "%s: argument %d '%s' is %s, which does not match the shape of parameter '%s'",
		     fn->u.fn.name, argi + 1, b->name, bufshape(S, b), p->u.decl.name);
		return -1;
	}
	return 0;
}

static void
inline_call(Sema *S, const Node *c, Sym *fs, Tail *t)
{
	const Node *fn = fs->node, *p, *a;
	int i, n = c->u.call.nargs, base = S->base, bad = 0, level;
	int bufs[64];
	IrExpr *vals[64];
	Diag *snap = S->d->tail;
	int snaperr = S->d->nerr;

	for (i = 0; i < S->ninl; i++) {
		if (S->inl[i] == fn) {
			Buf b;
			int j;

			buf_init(&b);
			for (j = i; j < S->ninl; j++)
				buf_printf(&b, "%s -> ", S->inl[j]->u.fn.name);
			buf_puts(&b, fn->u.fn.name);
			diag(S->d, c->loc, "recursive call of helper '%s' (%s)", fn->u.fn.name,
			     buf_str(&b));
			buf_free(&b);
			return;
		}
	}
	if (S->ninl == (int)countof(S->inl)) {
		diag(S->d, c->loc, "helpers nested too deeply (more than %d)", (int)countof(S->inl));
		return;
	}
	if (n != fn->u.fn.nparams || n > 64) {
		diag(S->d, c->loc, "helper '%s' takes %d argument%s, got %d", fn->u.fn.name,
		     fn->u.fn.nparams, fn->u.fn.nparams == 1 ? "" : "s", n);
		return;
	}
	/* the arguments, in the caller's scope */
	for (i = 0, p = fn->u.fn.params, a = c->u.call.args; i < n; i++, p = p->next, a = a->next) {
		bufs[i] = -1;
		vals[i] = NULL;
		if (a->kind == N_NAMED) {
			diag(S->d, a->loc, "helper '%s' takes no named arguments ('%s')", fn->u.fn.name,
			     a->u.bind.name);
			bad = 1;
		} else if (p->u.decl.tensor) {
			Sym *s = a->kind == N_IDENT ? sema_lookup(S, a->u.name) : NULL;

			if (s && SYM_POISONED(s)) {
				bad = 1;
			} else if (!s || s->kind != SYM_BUF) {
				diag(S->d, a->loc, "%s: argument %d for tensor parameter '%s' must be a buffer name",
				     fn->u.fn.name, i + 1, p->u.decl.name);
				bad = 1;
			} else {
				bufs[i] = s->u.buf;
			}
		} else {
			DType ty = !strcmp(p->u.decl.dtype, "int")
					   ? DT_INT
					   : dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));

			vals[i] = ty == DT_NONE ? NULL
						: sx_convert(S, sx_expr(S, a), ty, a->loc, p->u.decl.name);
			if (!vals[i])
				bad = 1;
		}
	}
	if (bad)
		return;
	S->inl[S->ninl++] = fn;
	sema_push(S);
	level = S->level;
	S->base = level;
	for (i = 0, p = fn->u.fn.params, a = c->u.call.args; i < n; i++, p = p->next, a = a->next) {
		Sym *s;

		if (p->u.decl.tensor && bindtensor(S, fn, p, i, a, bufs[i])) {
			bad = 1;
			continue;
		}
		s = sema_declare(S, p->u.decl.tensor ? SYM_BUF : SYM_EXPR, p->u.decl.name, p->loc);
		if (!s) {
			bad = 1;
			continue;
		}
		if (p->u.decl.tensor)
			s->u.buf = bufs[i];
		else
			s->u.val = vals[i];
	}
	if (!bad)
		stmts(S, fn->u.fn.body, t);
	sema_pop(S);
	S->base = base;
	S->ninl--;
	/* a helper's own errors are reported at its first call only */
	if (S->d->nerr > snaperr) {
		if (fs->errs) {
			S->d->tail = snap;
			if (snap)
				snap->next = NULL;
			else
				S->d->head = NULL;
		}
		fs->errs = 1;
	}
}

/* ---- kernels ---------------------------------------------------------------- */

static IrVar *
sizesym(Sema *S, const Node *d)
{
	Sym *s = sema_lookup(S, d->u.name);
	IrKernel *k = S->k;

	if (s && s->kind == SYM_VAR && s->u.var->kind == VAR_SIZE)
		return s->u.var;
	if (s && s->level > 0) {
		diag(S->d, d->loc, "dimension '%s' must be a size name or a constant", d->u.name);
		return NULL;
	}
	s = sema_declare(S, SYM_VAR, d->u.name, d->loc);
	if (!s)
		return NULL;
	s->u.var = ir_kernel_var(S->a, k, VAR_SIZE, DT_INT, d->u.name, d->loc);
	if (!s->u.var) {
		s->kind = SYM_EXPR;
		return NULL;
	}
	if (k->nsize % 8 == 0) {
		IrVar **nv = arena_realloc(S->a, k->sizes, sizeof *nv * (size_t)k->nsize,
					   sizeof *nv * (size_t)(k->nsize + 8));

		if (!nv)
			return NULL;
		k->sizes = nv;
	}
	k->sizes[k->nsize++] = s->u.var;
	return s->u.var;
}

static void
kparam(Sema *S, const Node *p, IrParam *ip, int index)
{
	DType t = dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype));
	const Node *d;
	IrDim *dims;
	int i, bad = 0;
	Sym *s;

	ip->name = p->u.decl.name;
	ip->loc = p->loc;
	ip->buf = -1;
	ip->dtype = t;
	if (t == DT_NONE) {
		diag(S->d, p->u.decl.dtloc, "unknown element type '%s'", p->u.decl.dtype);
		bad = 1;
	}
	if (p->u.decl.scope != SCOPE_NONE) {
		diag(S->d, p->loc, "kernel parameter '%s' cannot have a scope; kernel tensors are global",
		     p->u.decl.name);
		bad = 1;
	}
	if (!p->u.decl.tensor) {
		s = sema_declare(S, SYM_VAR, p->u.decl.name, p->loc);
		if (!s)
			return;
		s->u.var = ip->var = ir_kernel_var(S->a, S->k, VAR_SCALAR, t, p->u.decl.name, p->loc);
		if (!s->u.var || bad)
			s->kind = SYM_EXPR, s->u.val = NULL;
		return;
	}
	ip->is_tensor = 1;
	dims = anewn(S->a, IrDim, p->u.decl.ndim > 0 ? p->u.decl.ndim : 1);
	if (!dims)
		return;
	for (i = 0, d = p->u.decl.dims; d; i++, d = d->next) {
		Sym *c = d->kind == N_IDENT ? sema_lookup(S, d->u.name) : NULL;

		if (d->kind == N_IDENT && (!c || c->kind != SYM_CONST)) {
			if (!(dims[i].sym = sizesym(S, d)))
				bad = 1;
			continue;
		}
		if (sx_const_int(S, d, "a tensor dimension", &dims[i].c)) {
			bad = 1;
		} else if (dims[i].c <= 0) {
			diag(S->d, d->loc, "dimension %d of '%s' must be positive, got %lld", i,
			     p->u.decl.name, (long long)dims[i].c);
			bad = 1;
		}
	}
	s = sema_declare(S, SYM_BUF, p->u.decl.name, p->loc);
	if (!s)
		return;
	ip->buf = bad ? -1
		      : ir_kernel_buffer(S->a, S->k, p->u.decl.name, MEM_GLOBAL, t, p->u.decl.ndim,
					 dims, p->loc);
	if (ip->buf < 0) {
		s->kind = SYM_EXPR;
		s->u.val = NULL;
		return;
	}
	S->k->bufs[ip->buf].param = index;
	s->u.buf = ip->buf;
}

static IrKernel *
kernel(Sema *S, const Node *n)
{
	IrKernel *k = anew(S->a, IrKernel);
	const Node *p, *g;
	Tail t;
	int i, nerr = S->d->nerr;
	IrExpr *th;

	if (!k)
		return NULL;
	k->name = n->u.fn.name;
	k->loc = n->loc;
	S->k = k;
	sema_push(S);
	S->base = S->level;
	k->nparam = n->u.fn.nparams;
	k->params = anewn(S->a, IrParam, k->nparam > 0 ? k->nparam : 1);
	if (!k->params)
		return NULL;
	for (i = 0, p = n->u.fn.params; p && i < k->nparam; i++, p = p->next)
		kparam(S, p, &k->params[i], i);
	if (n->u.fn.ngrid == 0 || !n->u.fn.grid)
		diag(S->d, n->loc, "kernel '%s' has no grid(...) clause", k->name);
	S->in_grid = 1;
	for (g = n->u.fn.grid; g && k->ngrid < 3; g = g->next) {
		IrExpr *e = sx_int(S, g, "a grid dimension");

		if (e && e->kind == IE_INT && e->u.i <= 0) {
			diag(S->d, g->loc, "grid dimension %d must be positive, got %lld", k->ngrid,
			     (long long)e->u.i);
			e = NULL;
		}
		k->grid[k->ngrid++] = e ? e : ir_int(S->a, g->loc, 1);
	}
	S->in_grid = 0;
	for (i = 0; i < k->ngrid; i++)
		ir_kernel_var(S->a, k, VAR_BLOCK, DT_INT, i == 0 ? "bx" : i == 1 ? "by" : "bz", n->loc);
	if (!n->u.fn.threads) {
		diag(S->d, n->loc, "kernel '%s' has no threads(...) clause", k->name);
	} else if ((th = sx_expr(S, n->u.fn.threads)) != NULL) {
		if (th->kind != IE_INT || th->u.i <= 0)
			diag(S->d, n->u.fn.threads->loc, "threads must be a positive constant, got '%s'",
			     sx_text(S, th));
		else if (th->u.i > 1024)
			diag(S->d, n->u.fn.threads->loc,
			     "threads(%lld) exceeds the limit of 1024 threads per block",
			     (long long)th->u.i);
		else
			k->threads = th->u.i;
	}
	t.p = &k->body;
	stmts(S, n->u.fn.body, &t); /* params and body share a scope: no redefinition */
	sema_pop(S);
	S->base = 1;
	S->k = NULL;
	return S->d->nerr > nerr ? NULL : k;
}

/* ---- the program -------------------------------------------------------------- */

static void
checkfunc(Sema *S, const Node *n)
{
	const Node *p, *q;

	for (p = n->u.fn.params; p; p = p->next) {
		if (strcmp(p->u.decl.dtype, "int") &&
		    dtype_lookup(p->u.decl.dtype, (int)strlen(p->u.decl.dtype)) == DT_NONE)
			diag(S->d, p->u.decl.dtloc, "unknown element type '%s'", p->u.decl.dtype);
		else if (!strcmp(p->u.decl.dtype, "int") && p->u.decl.tensor)
			diag(S->d, p->u.decl.dtloc, "'int' is only for scalar helper parameters");
		if (sema_builtin_name(p->u.decl.name))
			diag(S->d, p->loc, "'%s' is a builtin name and cannot be redefined",
			     p->u.decl.name);
		for (q = n->u.fn.params; q != p; q = q->next)
			if (!strcmp(q->u.decl.name, p->u.decl.name)) {
				diag(S->d, p->loc, "redefinition of parameter '%s' of helper '%s'",
				     p->u.decl.name, n->u.fn.name);
				break;
			}
	}
}

IrProgram *
sema_program(Arena *a, Diags *d, const Node *top, const SemaDefine *defs, int ndefs,
	     const char *file)
{
	Sema S;
	IrProgram *prog = anew(a, IrProgram);
	IrKernel **tail;
	const Node *n;
	Sym *s;
	int i, j, nerr = d->nerr;
	Loc nowhere = {file ? file : "<input>", 0, 0};

	if (!prog)
		return NULL;
	memset(&S, 0, sizeof S);
	S.a = a;
	S.d = d;
	S.base = 1;
	S.defs = defs;
	S.ndefs = ndefs;
	sema_push(&S); /* level 0 storage */
	S.level = 0;
	for (n = top; n; n = n->next) {
		switch (n->kind) {
		case N_CONST:
			s = sema_declare(&S, SYM_CONST, n->u.bind.name, n->loc);
			if (!s)
				break;
			s->node = n;
			for (j = ndefs - 1; j >= 0; j--) {
				if (!strcmp(defs[j].name, n->u.bind.name)) {
					s->state = 2;
					s->u.val = defs[j].is_float ? ir_float(a, n->loc, DT_F32, defs[j].f)
								    : ir_int(a, n->loc, defs[j].i);
					break;
				}
			}
			break;
		case N_FUNC:
			s = sema_declare(&S, SYM_FUNC, n->u.fn.name, n->loc);
			if (s)
				s->node = n;
			checkfunc(&S, n);
			break;
		case N_KERNEL:
			/* kernels have a namespace of their own ("kernel NAME" cannot clash) */
			s = sema_declare(&S, SYM_KERNEL, arena_printf(a, "kernel %s", n->u.fn.name),
					 n->loc);
			if (s)
				s->node = n;
			break;
		default:
			diag(d, n->loc, "expected const, kernel or func at the top level");
			break;
		}
	}
	/* -D names the program does not define become consts */
	for (j = 0; j < ndefs; j++) {
		s = sema_lookup(&S, defs[j].name);
		if (s && s->kind == SYM_CONST && s->level == 0)
			continue;
		if (s) {
			diag(d, nowhere, "-D %s: '%s' is not a const of the program", defs[j].name,
			     defs[j].name);
			continue;
		}
		s = sema_declare(&S, SYM_CONST, defs[j].name, nowhere);
		if (!s)
			continue;
		s->state = 2;
		s->u.val = defs[j].is_float ? ir_float(a, nowhere, DT_F32, defs[j].f)
					    : ir_int(a, nowhere, defs[j].i);
	}
	/* every const is evaluated, used or not */
	for (n = top; n; n = n->next) {
		if (n->kind != N_CONST)
			continue;
		s = sema_lookup(&S, n->u.bind.name);
		if (s && s->node == n)
			sx_const_value(&S, s);
	}
	tail = &prog->kernels;
	for (n = top, i = 0; n; n = n->next) {
		IrKernel *k;

		if (n->kind != N_KERNEL)
			continue;
		i++;
		k = kernel(&S, n);
		if (k) {
			*tail = k;
			tail = &k->next;
			prog->nkernel++;
		}
	}
	if (i == 0)
		diag(d, nowhere, "no kernel in input");
	return d->nerr > nerr ? NULL : prog;
}
