/*
 * sema_ops.c: the tile operations of sema: argument matching, regions (a
 * buffer, a tile at an offset, explicit slices) with shape inference from
 * the other side, bounds and scope checks, and copy, gemm, fill, clear,
 * reduce, assume.
 */
#include <stdio.h>
#include <string.h>

#include "sema.h"

/* ---- arguments of builtin calls -------------------------------------------- */

/* match call args to ps[0..np) (positional, then by name); -1 after reporting */
int
so_getargs(Sema *S, const Node *call, const Param *ps, int np, const Node **out)
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
int
so_boolarg(Sema *S, const char *fn, const char *name, const Node *n, int dflt)
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
		diag(S->d, n->loc, "%s: unknown buffer '%s'%s", fn, n->u.name,
		     sema_suggest(S, n->u.name, SUGGEST_BUFFERS, NULL, 0));
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

const char *
so_bufshape(Sema *S, const IrBuffer *b)
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
			diag(S->d, base->loc, "%s: unknown buffer '%s'%s", fn, base->u.name,
			     sema_suggest(S, base->u.name, SUGGEST_BUFFERS, NULL, 0));
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
				     "%s: %s '%s' has the symbolic shape %s; give an offset "
				     "%s[...] or slices",
				     fn, role, b->name, so_bufshape(S, b), b->name);
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
				diag(S->d, ix->loc, "%s: slice of '%s' needs an upper bound in "
				     "dimension %d",
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
				diag(S->d, ix->loc, "%s: slice of '%s' in dimension %d is empty "
				     "(length %lld)",
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
		diag(S->d, t->loc, "%s: a tile of shape %s does not fit in the %d dimension%s of "
		     "'%s'",
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
		if (b->dims[i].sym) {
			/* a size known at run time: the constant offset and extent must still
			 * leave the generated index arithmetic in range */
			if (ir_is_const(ra->r.off[i], &off) &&
			    (off < -SEMA_MAX_OFFSET || off > SEMA_MAX_OFFSET - ra->r.ext[i])) {
				diag(S->d, ra->loc, "%s: region offset %lld of '%s' in dimension %d is "
				     "outside [-2^62, 2^62 - extent]", fn, (long long)off, b->name, i);
				bad = 1;
			}
			continue;
		}
		if (ra->r.ext[i] > b->dims[i].c) {
			diag(S->d, ra->loc, "%s: region of '%s' has extent %lld in dimension %d, "
			     "larger than its size %lld",
			     fn, b->name, (long long)ra->r.ext[i], i, (long long)b->dims[i].c);
			bad = 1;
		} else if (ir_is_const(ra->r.off[i], &off) &&
			   (end = INT64_MAX, off < 0 || __builtin_add_overflow(off, ra->r.ext[i], &end) ||
			    end > b->dims[i].c)) {
			diag(S->d, ra->loc, "%s: region [%lld, %lld) of '%s' is out of bounds in "
			     "dimension %d (size %lld)",
			     fn, (long long)off, (long long)(end), b->name, i,
			     (long long)b->dims[i].c);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

/* ---- tile ops ------------------------------------------------------------- */

/* the element types an atomic can update (which op each target has: the lowering) */
static int
atomic_dtype(DType t)
{
	return t == DT_F32 || t == DT_F16 || t == DT_BF16 || t == DT_I32;
}

/* op = add|max|min of copy (or NULL: AT_NONE); -1 after reporting */
static int
atomic_oparg(Sema *S, const Node *n)
{
	static const char *const ops[] = {"add", "max", "min"};
	int i;

	if (!n)
		return AT_NONE;
	if (n->kind == N_IDENT)
		for (i = 0; i < (int)countof(ops); i++)
			if (!strcmp(ops[i], n->u.name))
				return AT_ADD + i;
	diag(S->d, n->loc, "copy: op must be add, max or min (an atomic store of the tile), got '%s'",
	     n->kind == N_IDENT ? n->u.name : "an expression");
	return -1;
}

IrStmt *
so_copy(Sema *S, const Node *c)
{
	static const Param ps[] = {{"src", 1}, {"dst", 1}, {"op", 0}};
	const Node *a[3];
	RegArg src, dst;
	IrBuffer *bs, *bd;
	IrStmt *s;
	const Node *p;
	int op, npos = 0;

	/* op is named only: copy(src, dst, op = add) */
	for (p = c->u.call.args; p; p = p->next)
		if (p->kind != N_NAMED && ++npos > 2) {
			diag(S->d, p->loc, "copy takes at most 2 arguments");
			return NULL;
		}
	if (so_getargs(S, c, ps, 3, a))
		return NULL;
	if ((op = atomic_oparg(S, a[2])) < 0)
		return NULL;
	if (region(S, "copy", "source", a[0], &src) | region(S, "copy", "destination", a[1], &dst))
		return NULL;
	bs = &S->k->bufs[src.r.buf];
	bd = &S->k->bufs[dst.r.buf];
	if (op != AT_NONE) {
		const char *on = atomicop_name((AtomicOp)op);

		if (bd->scope == MEM_LOCAL) {
			diag(S->d, a[1]->loc, "copy(..., op = %s): '%s' is a local (register) tile, private to "
			     "each thread; an atomic store goes to a global tensor or a shared buffer", on,
			     bd->name);
			return NULL;
		}
		if (bs->scope != MEM_LOCAL) {
			diag(S->d, a[0]->loc, "copy(..., op = %s): the source '%s' is %s; an atomic tile store "
			     "copies a local (register) tile (copy it into a local tile first)", on, bs->name,
			     bs->scope == MEM_GLOBAL ? "global" : "shared");
			return NULL;
		}
		if (!atomic_dtype(bd->dtype)) {
			diag(S->d, a[1]->loc, "copy(..., op = %s): '%s' is %s; atomics update f32, f16, bf16 or "
			     "i32 elements", on, bd->name, dtype_name(bd->dtype));
			return NULL;
		}
	}
	if (bs->scope == MEM_GLOBAL && bd->scope == MEM_GLOBAL) {
		diag(S->d, c->loc,
		     "copy: both '%s' and '%s' are global; copy through a shared or local buffer",
		     bs->name, bd->name);
		return NULL;
	}
	if (!src.known && !dst.known) {
		diag(S->d, c->loc, "copy: cannot tell the tile shape; make '%s' or '%s' a whole "
		     "buffer or use slices",
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
		s->u.copy.atomic = (AtomicOp)op;
	}
	return s;
}

/* atomic_add|max|min(T[i, ...], value): an element of a global tensor or a shared buffer */
IrStmt *
so_atomic(Sema *S, const Node *c, AtomicOp op)
{
	static const Param ps[] = {{"dst", 1}, {"value", 1}};
	const char *fn = c->u.call.name;
	const Node *a[2];
	IrExpr *ld, *v;
	const IrBuffer *B;
	IrStmt *s;

	if (so_getargs(S, c, ps, 2, a))
		return NULL;
	if (a[0]->kind != N_INDEX) {
		diag(S->d, a[0]->loc, "%s: the first argument must be an element NAME[index, ...] of a "
		     "global tensor or a shared buffer", fn);
		return NULL;
	}
	ld = sx_expr(S, a[0]);
	v = sx_expr(S, a[1]);
	if (!ld || !v)
		return NULL;
	if (ld->kind != IE_LOAD) {
		diag(S->d, a[0]->loc, "%s: the first argument must be an element NAME[index, ...] of a "
		     "global tensor or a shared buffer", fn);
		return NULL;
	}
	B = &S->k->bufs[ld->u.load.buf];
	if (B->scope == MEM_LOCAL) {
		diag(S->d, a[0]->loc, "%s on local '%s': a local (register) tile is private to each thread, "
		     "so an atomic on it means nothing; update it with %s[...] %s or use a shared buffer",
		     fn, B->name, B->name, op == AT_ADD ? "+= v" : op == AT_MAX ? "= max(..., v)" : "= min(..., v)");
		return NULL;
	}
	if (!atomic_dtype(B->dtype)) {
		diag(S->d, a[0]->loc, "%s: '%s' is %s; atomics update f32, f16, bf16 or i32 elements", fn,
		     B->name, dtype_name(B->dtype));
		return NULL;
	}
	if (!(v = sx_convert(S, v, B->dtype, a[1]->loc, fn)))
		return NULL;
	s = ir_stmt(S->a, S_STORE, c->loc);
	if (!s)
		return NULL;
	s->u.store.buf = ld->u.load.buf;
	s->u.store.n = ld->u.load.n;
	s->u.store.idx = ld->u.load.idx;
	s->u.store.value = v;
	s->u.store.atomic = op;
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
		diag(S->d, n->loc, "gemm: operand %s '%s' needs a whole buffer or slices, not an "
		     "offset",
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

IrStmt *
so_gemm(Sema *S, const Node *c)
{
	static const Param ps[] = {{"A", 1}, {"B", 1}, {"C", 1},
				   {"trans_a", 0}, {"trans_b", 0}, {"clear", 0}, {"policy", 0}};
	static const char *const pols[] = {"square", "full_row", "full_col"};
	const Node *a[7];
	RegArg ra, rb, rcc;
	int64_t sa[2], sb[2], sc[2], m, n, ka, kb;
	int ta, tb, cl, pol = 0, bad = 0;
	const IrBuffer *A, *B, *C;
	IrStmt *s;

	if (so_getargs(S, c, ps, 7, a))
		return NULL;
	if (a[6]) {
		/* the warp partition (TileLang's GemmWarpPolicy): square, or all warps along M / N */
		if (a[6]->kind == N_IDENT)
			for (pol = 0; pol < (int)countof(pols); pol++)
				if (!strcmp(pols[pol], a[6]->u.name))
					break;
		if (a[6]->kind != N_IDENT || pol == (int)countof(pols)) {
			diag(S->d, a[6]->loc, "gemm: policy must be square, full_row or full_col");
			bad = 1;
			pol = 0;
		}
	}
	ta = so_boolarg(S, "gemm", "trans_a", a[3], 0);
	tb = so_boolarg(S, "gemm", "trans_b", a[4], 0);
	cl = so_boolarg(S, "gemm", "clear", a[5], 0);
	bad |= gemm_operand(S, "A", a[0], &ra, sa);
	bad |= gemm_operand(S, "B", a[1], &rb, sb);
	bad |= gemm_operand(S, "C", a[2], &rcc, sc);
	if (bad || ta < 0 || tb < 0 || cl < 0)
		return NULL;
	A = &S->k->bufs[ra.r.buf];
	B = &S->k->bufs[rb.r.buf];
	C = &S->k->bufs[rcc.r.buf];
	if (rcc.r.buf == ra.r.buf || rcc.r.buf == rb.r.buf) {
		diag(S->d, a[2]->loc, "gemm: accumulator '%s' is also an operand", C->name);
		return NULL;
	}
	if (A->scope == MEM_GLOBAL) {
		diag(S->d, a[0]->loc, "gemm: operand A '%s' is global; copy it to a shared or "
		     "local buffer first",
		     A->name);
		bad = 1;
	}
	if (B->scope == MEM_GLOBAL) {
		diag(S->d, a[1]->loc, "gemm: operand B '%s' is global; copy it to a shared or "
		     "local buffer first",
		     B->name);
		bad = 1;
	}
	if (C->scope != MEM_LOCAL) {
		diag(S->d, a[2]->loc, "gemm: accumulator '%s' must be a local buffer, it is %s", C->name,
		     memscope_name(C->scope));
		bad = 1;
	}
	if (A->dtype != B->dtype) {
		diag(S->d, c->loc, "gemm: operands A '%s' and B '%s' have different element types "
		     "%s and %s",
		     A->name, B->name, dtype_name(A->dtype), dtype_name(B->dtype));
		bad = 1;
	} else if (dtype_is_float(A->dtype) ? !dtype_is_float(C->dtype) || dtype_bytes(C->dtype) < 2
					    : C->dtype != DT_I32) {
		diag(S->d, a[2]->loc, "gemm: accumulator '%s' of type %s cannot accumulate %s "
		     "products",
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
		diag(S->d, c->loc, "gemm: A '%s' is %s and B '%s' is %s: reduction dimensions %lld "
		     "and %lld differ",
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
		s->u.gemm.policy = pol;
	}
	return s;
}

IrStmt *
so_fill(Sema *S, const Node *c, int clear)
{
	static const Param ps[] = {{"dst", 1}, {"value", 1}};
	const char *fn = clear ? "clear" : "fill";
	const Node *a[2];
	const IrBuffer *b;
	RegArg r;
	IrExpr *v;
	IrStmt *s;

	if (so_getargs(S, c, ps, clear ? 1 : 2, a))
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

IrStmt *
so_reduce(Sema *S, const Node *c)
{
	static const Param ps[] = {{"src", 1}, {"dst", 1}, {"op", 0}, {"dim", 0}, {"clear", 0}};
	static const char *const ops[] = {"sum", "max", "min", "absmax"};
	const Node *a[5];
	int src, dst, op = RED_SUM, cl, i, j, bad = 0;
	int64_t dim = -1, want[64];
	const IrBuffer *bs, *bd;
	IrStmt *s;

	if (so_getargs(S, c, ps, 5, a))
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
	cl = so_boolarg(S, "reduce", "clear", a[4], 1);
	if (src < 0 || dst < 0 || bad || cl < 0)
		return NULL;
	bs = &S->k->bufs[src];
	bd = &S->k->bufs[dst];
	if (src == dst) {
		diag(S->d, a[1]->loc, "reduce: source and destination are the same buffer '%s'",
		     bs->name);
		return NULL;
	}
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
			     "reduce: destination '%s' has shape %s, expected %s (source shape %s "
			     "without dim %lld)",
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

IrStmt *
so_assume(Sema *S, const Node *c)
{
	static const Param ps[] = {{"cond", 1}};
	const Node *a[1];
	const char *what = "";
	IrExpr *e;
	IrStmt *s;

	if (so_getargs(S, c, ps, 1, a))
		return NULL;
	e = sx_bool(S, a[0], "assume");
	if (!e)
		return NULL;
	if (!sx_is_header_expr(e, &what)) {
		diag(S->d, a[0]->loc,
		     "assume: the condition may use only sizes, scalar parameters and constants, not %s",
		     what);
		return NULL;
	}
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

