/*
 * convert.c: layout conversions of local tiles (convert.h). Before inference
 * a local tile x is cut at each top-level release_layout(x) and at each
 * require_layout(x, ...) that has uses of x on both sides: later statements
 * use a new buffer (x_1, ...) and a conversion copy x -> x_1 joins them, so
 * inference gives each part its own layout. After inference the
 * convert-layouts pass lowers each conversion copy.
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"

/* ---- buffer references ------------------------------------------------------- */

static int
expr_refs(const IrExpr *e, int buf)
{
	int i;

	if (!e)
		return 0;
	switch (e->kind) {
	case IE_LOAD:
		if (e->u.load.buf == buf)
			return 1;
		for (i = 0; i < e->u.load.n; i++)
			if (expr_refs(e->u.load.idx[i], buf))
				return 1;
		return 0;
	case IE_UNARY: return expr_refs(e->u.un.a, buf);
	case IE_BINARY: return expr_refs(e->u.bin.a, buf) || expr_refs(e->u.bin.b, buf);
	case IE_SELECT:
		return expr_refs(e->u.sel.c, buf) || expr_refs(e->u.sel.a, buf) || expr_refs(e->u.sel.b, buf);
	case IE_CAST: return expr_refs(e->u.cast.a, buf);
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			if (expr_refs(e->u.call.args[i], buf))
				return 1;
		return 0;
	default:
		return 0;
	}
}

static int stmts_ref(const IrStmt *s, int buf);

static int
region_ref(const Region *r, int buf)
{
	int i;

	if (r->buf == buf)
		return 1;
	for (i = 0; i < r->ndim; i++)
		if (expr_refs(r->off[i], buf))
			return 1;
	return 0;
}

/* does s (a statement, not its successors) use buf other than in a layout statement? */
static int
stmt_ref(const IrStmt *s, int buf)
{
	int i;

	switch (s->kind) {
	case S_COPY: return region_ref(&s->u.copy.src, buf) || region_ref(&s->u.copy.dst, buf);
	case S_GEMM:
		return region_ref(&s->u.gemm.a, buf) || region_ref(&s->u.gemm.b, buf) ||
		       region_ref(&s->u.gemm.c, buf);
	case S_FILL: return region_ref(&s->u.fill.dst, buf) || expr_refs(s->u.fill.value, buf);
	case S_REDUCE: return s->u.reduce.src == buf || s->u.reduce.dst == buf;
	case S_PARALLEL: return stmts_ref(s->u.par.body, buf);
	case S_STORE:
		if (s->u.store.buf == buf || expr_refs(s->u.store.value, buf))
			return 1;
		for (i = 0; i < s->u.store.n; i++)
			if (expr_refs(s->u.store.idx[i], buf))
				return 1;
		return 0;
	case S_LET:
	case S_SET: return expr_refs(s->u.let.value, buf);
	case S_FOR:
		return expr_refs(s->u.loop.lo, buf) || expr_refs(s->u.loop.extent, buf) ||
		       stmts_ref(s->u.loop.body, buf);
	case S_PIPELINE: return expr_refs(s->u.pipe.extent, buf) || stmts_ref(s->u.pipe.body, buf);
	case S_IF:
		return expr_refs(s->u.cond.cond, buf) || stmts_ref(s->u.cond.then, buf) ||
		       stmts_ref(s->u.cond.els, buf);
	case S_ASSUME: return expr_refs(s->u.assume.cond, buf);
	default: return 0;
	}
}

static int
stmts_ref(const IrStmt *s, int buf)
{
	for (; s; s = s->next)
		if (stmt_ref(s, buf))
			return 1;
	return 0;
}

/* ---- renaming ------------------------------------------------------------------ */

static void
ren_expr_in_place(IrExpr *e, int from, int to)
{
	int i;

	if (!e)
		return;
	switch (e->kind) {
	case IE_LOAD:
		if (e->u.load.buf == from)
			e->u.load.buf = to;
		for (i = 0; i < e->u.load.n; i++)
			ren_expr_in_place(e->u.load.idx[i], from, to);
		break;
	case IE_UNARY: ren_expr_in_place(e->u.un.a, from, to); break;
	case IE_BINARY:
		ren_expr_in_place(e->u.bin.a, from, to);
		ren_expr_in_place(e->u.bin.b, from, to);
		break;
	case IE_SELECT:
		ren_expr_in_place(e->u.sel.c, from, to);
		ren_expr_in_place(e->u.sel.a, from, to);
		ren_expr_in_place(e->u.sel.b, from, to);
		break;
	case IE_CAST: ren_expr_in_place(e->u.cast.a, from, to); break;
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			ren_expr_in_place(e->u.call.args[i], from, to);
		break;
	default:
		break;
	}
}

/* e with loads of from renamed: a fresh copy when it changes (trees may be shared) */
static IrExpr *
ren_expr(Arena *a, IrExpr *e, int from, int to)
{
	IrExpr *c;

	if (!e || !expr_refs(e, from))
		return e;
	c = ir_expr_copy(a, e);
	ren_expr_in_place(c, from, to);
	return c;
}

static void ren_stmts(Arena *a, IrStmt *s, int from, int to);

static void
ren_region(Arena *a, Region *r, int from, int to)
{
	IrExpr **off;
	int i;

	if (r->buf == from)
		r->buf = to;
	for (i = 0; i < r->ndim; i++)
		if (expr_refs(r->off[i], from))
			break;
	if (i == r->ndim)
		return;
	off = anewn(a, IrExpr *, r->ndim);
	for (i = 0; i < r->ndim; i++)
		off[i] = ren_expr(a, r->off[i], from, to);
	r->off = off;
}

static void
ren_stmt(Arena *a, IrStmt *s, int from, int to)
{
	IrExpr **idx;
	int i;

	switch (s->kind) {
	case S_COPY:
		ren_region(a, &s->u.copy.src, from, to);
		ren_region(a, &s->u.copy.dst, from, to);
		break;
	case S_GEMM:
		ren_region(a, &s->u.gemm.a, from, to);
		ren_region(a, &s->u.gemm.b, from, to);
		ren_region(a, &s->u.gemm.c, from, to);
		break;
	case S_FILL:
		ren_region(a, &s->u.fill.dst, from, to);
		s->u.fill.value = ren_expr(a, s->u.fill.value, from, to);
		break;
	case S_REDUCE:
		if (s->u.reduce.src == from)
			s->u.reduce.src = to;
		if (s->u.reduce.dst == from)
			s->u.reduce.dst = to;
		break;
	case S_PARALLEL: ren_stmts(a, s->u.par.body, from, to); break;
	case S_STORE:
		if (s->u.store.buf == from)
			s->u.store.buf = to;
		s->u.store.value = ren_expr(a, s->u.store.value, from, to);
		idx = anewn(a, IrExpr *, s->u.store.n + 1);
		for (i = 0; i < s->u.store.n; i++)
			idx[i] = ren_expr(a, s->u.store.idx[i], from, to);
		s->u.store.idx = idx;
		break;
	case S_LET:
	case S_SET: s->u.let.value = ren_expr(a, s->u.let.value, from, to); break;
	case S_FOR:
		s->u.loop.lo = ren_expr(a, s->u.loop.lo, from, to);
		s->u.loop.extent = ren_expr(a, s->u.loop.extent, from, to);
		ren_stmts(a, s->u.loop.body, from, to);
		break;
	case S_PIPELINE:
		s->u.pipe.extent = ren_expr(a, s->u.pipe.extent, from, to);
		ren_stmts(a, s->u.pipe.body, from, to);
		break;
	case S_IF:
		s->u.cond.cond = ren_expr(a, s->u.cond.cond, from, to);
		ren_stmts(a, s->u.cond.then, from, to);
		ren_stmts(a, s->u.cond.els, from, to);
		break;
	case S_ASSUME: s->u.assume.cond = ren_expr(a, s->u.assume.cond, from, to); break;
	case S_ANNOTATE_LAYOUT:
	case S_REQUIRE_LAYOUT:
	case S_RELEASE_LAYOUT:
	case S_DUMP_LAYOUT:
	case S_ASSERT_SAME_LAYOUT:
		if (s->u.layout.buf == from)
			s->u.layout.buf = to;
		if (s->u.layout.other == from)
			s->u.layout.other = to;
		break;
	case S_REQUIRE_WMMA_LAYOUT:
		if (s->u.wmma.buf == from)
			s->u.wmma.buf = to;
		break;
	default:
		break;
	}
}

static void
ren_stmts(Arena *a, IrStmt *s, int from, int to)
{
	for (; s; s = s->next)
		ren_stmt(a, s, from, to);
}

/* ---- the split (before inference) ----------------------------------------------- */

static int
split_buf(const IrKernel *k, const IrStmt *s)
{
	int b;

	if (s->kind != S_RELEASE_LAYOUT && s->kind != S_REQUIRE_LAYOUT)
		return -1;
	b = s->u.layout.buf;
	return b >= 0 && b < k->nbuf && k->bufs[b].scope == MEM_LOCAL ? b : -1;
}

/* program order: is buf used strictly before / after statement `at` (pre-order walk)? */
typedef struct Order {
	const IrStmt *at;
	int buf, seen, before, after;
} Order;

static void
order_walk(Order *o, const IrStmt *s)
{
	for (; s; s = s->next) {
		if (s == o->at) {
			o->seen = 1;
			continue;
		}
		switch (s->kind) {
		case S_PARALLEL: order_walk(o, s->u.par.body); break;
		case S_FOR: order_walk(o, s->u.loop.body); break;
		case S_PIPELINE: order_walk(o, s->u.pipe.body); break;
		case S_IF:
			order_walk(o, s->u.cond.then);
			order_walk(o, s->u.cond.els);
			break;
		default:
			if (stmt_ref(s, o->buf)) {
				if (o->seen)
					o->after = 1;
				else
					o->before = 1;
			}
			break;
		}
	}
}

/* a release/require nested in a loop or if that would need a conversion: an error */
static void
check_nested(Diags *d, const IrKernel *k, const IrStmt *s, int depth)
{
	for (; s; s = s->next) {
		int b = split_buf(k, s);

		if (depth > 0 && b >= 0) {
			Order o = {s, b, 0, 0, 0};

			order_walk(&o, k->body);
			if (o.before && o.after)
				diag(d, s->loc, "%s('%s') inside a loop, if or parallel body with uses of "
				     "'%s' before and after it: a layout conversion is only inserted at the "
				     "top level of a kernel", s->kind == S_RELEASE_LAYOUT ? "release_layout"
				     : "require_layout", k->bufs[b].name, k->bufs[b].name);
		}
		switch (s->kind) {
		case S_PARALLEL: check_nested(d, k, s->u.par.body, depth + 1); break;
		case S_FOR: check_nested(d, k, s->u.loop.body, depth + 1); break;
		case S_PIPELINE: check_nested(d, k, s->u.pipe.body, depth + 1); break;
		case S_IF:
			check_nested(d, k, s->u.cond.then, depth + 1);
			check_nested(d, k, s->u.cond.els, depth + 1);
			break;
		default: break;
		}
	}
}

static int
split_kernel(Arena *a, Diags *d, IrKernel *k)
{
	IrStmt **pp, *s, *cv, *p;
	int b, nb, before, nsplit = 0, *root;

	check_nested(d, k, k->body, 0);
	if (d->nerr)
		return -1;
	for (s = k->body; s; s = s->next)
		nsplit += split_buf(k, s) >= 0;
	/* the buffer each part was cut from, for its name (x, x_1, x_2, ...) */
	root = anewn(a, int, k->nbuf + nsplit + 1);
	for (b = 0; b < k->nbuf; b++)
		root[b] = b;
	for (pp = &k->body; (s = *pp) != NULL; pp = &s->next) {
		int req = 0;

		if ((b = split_buf(k, s)) < 0)
			continue;
		before = 0;
		for (p = k->body; p != s; p = p->next) {
			if (!p->convert && stmt_ref(p, b))
				before = 1;
			if ((p->kind == S_REQUIRE_LAYOUT || p->kind == S_ANNOTATE_LAYOUT) &&
			    p->u.layout.buf == b)
				req = 1;
			if (p->kind == S_REQUIRE_WMMA_LAYOUT && p->u.wmma.buf == b)
				req = 1;
		}
		/* a release with nothing to release would be ignored: TLX requires an explicit
		 * source layout; here a use before it (a conversion point) is one too */
		if (s->kind == S_RELEASE_LAYOUT && !req && !before) {
			diag(d, s->loc, "release_layout(%s): there is no layout to release here: no "
			     "require_layout or annotate_layout of '%s' and no use of it before this "
			     "statement", k->bufs[b].name, k->bufs[b].name);
			return -1;
		}
		if (!before || !stmts_ref(s->next, b))
			continue;
		nb = ir_kernel_buffer(a, k, k->bufs[root[b]].name, MEM_LOCAL, k->bufs[b].dtype,
				      k->bufs[b].ndim, k->bufs[b].dims, s->loc);
		if (nb < 0)
			return -1;
		root[nb] = root[b];
		cv = ir_stmt(a, S_COPY, s->loc);
		cv->convert = 1;
		cv->u.copy.src = ir_region_whole(a, k, b, s->loc);
		cv->u.copy.dst = ir_region_whole(a, k, nb, s->loc);
		ren_stmts(a, s, b, nb);
		cv->next = s;
		*pp = cv;
		pp = &cv->next;
	}
	return 0;
}

int
convert_split(Arena *a, Diags *d, IrProgram *p)
{
	IrKernel *k;
	int rc = 0;

	if (!a || !d || !p)
		return -1;
	for (k = p->kernels; k; k = k->next)
		if (split_kernel(a, d, k) < 0)
			rc = -1;
	return rc;
}

/* ---- deciding how a conversion lowers ----------------------------------------- */

static int64_t
slotidx(const Layout *F, const int64_t *y)
{
	int64_t s = 0;
	int j;

	for (j = 0; j < F->nout; j++)
		s = s * F->out_shape[j] + y[j];
	return s;
}

int
convert_in_registers(const Layout *A, const Layout *B, Err *err)
{
	int64_t x[LAYOUT_MAXDIM + 1] = {0}, ya[LAYOUT_MAXDIM + 2], yb[LAYOUT_MAXDIM + 2];
	int64_t n = 1, na = 1, i, r, sa, sb, *perm;
	int d, ok = 1;

	if (!A || !B || !A->is_frag || !B->is_frag || A->nin != B->nin)
		return 0;
	if (A->rep != 1 || B->rep != 1 || A->nthreads != B->nthreads)
		return 0;
	for (d = 0; d < A->nin; d++) {
		if (A->in_shape[d] != B->in_shape[d])
			return 0;
		n *= A->in_shape[d];
	}
	for (d = 0; d < A->nout; d++)
		na *= A->out_shape[d];
	if (n > layout_enum_limit() || na > layout_enum_limit())
		return err_set(err, "conversion: the tile has more than %lld elements",
			       (long long)layout_enum_limit());
	perm = calloc((size_t)na, sizeof *perm);
	if (!perm)
		return err_set(err, "out of memory");
	for (i = 0; i < na; i++)
		perm[i] = -1;
	for (i = 0; i < n && ok; i++) {
		r = i;
		for (d = A->nin - 1; d >= 0; d--) {
			x[d] = r % A->in_shape[d];
			r /= A->in_shape[d];
		}
		x[A->nin] = 0;
		if (layout_eval(A, x, ya, err) || layout_eval(B, x, yb, err)) {
			free(perm);
			return -1;
		}
		if (ya[A->nout] != yb[B->nout]) {
			ok = 0;
			break;
		}
		sa = slotidx(A, ya);
		sb = slotidx(B, yb);
		if (perm[sa] < 0)
			perm[sa] = sb;
		else if (perm[sa] != sb)
			ok = 0;  /* threads permute their slots differently */
	}
	free(perm);
	return ok;
}

const char *
convert_kind(const Layout *A, const Layout *B, Err *err)
{
	int r;

	if (A && B && A->is_frag && B->is_frag) {
		r = layout_equal(A, B, err);
		if (r < 0)
			return NULL;
		if (r == 1)
			return "none";
	}
	r = convert_in_registers(A, B, err);
	if (r < 0)
		return NULL;
	return r ? "registers" : "shared";
}

/* ---- the convert-layouts pass ------------------------------------------------------ */

static IrStmt *
copy_stmt(Arena *a, const IrKernel *k, int src, int dst, Loc loc, int late)
{
	IrStmt *s = ir_stmt(a, S_COPY, loc);

	s->u.copy.src = ir_region_whole(a, k, src, loc);
	s->u.copy.dst = ir_region_whole(a, k, dst, loc);
	s->late_address = late;
	return s;
}

/* dst[i...] = src[i...] over dst's fragment: a permutation of each thread's registers */
static IrStmt *
permute_stmt(Arena *a, IrKernel *k, int src, int dst, Loc loc)
{
	const IrBuffer *D = &k->bufs[dst];
	IrStmt *s = ir_stmt(a, S_PARALLEL, loc), *st;
	IrExpr **ia = anewn(a, IrExpr *, D->ndim), **ib = anewn(a, IrExpr *, D->ndim);
	int d, n = D->ndim;
	DType t = D->dtype;
	Layout *F = D->layout;

	s->u.par.n = n;
	s->u.par.vars = anewn(a, IrVar *, n);
	s->u.par.ext = anewn(a, int64_t, n);
	for (d = 0; d < n; d++) {
		s->u.par.vars[d] = ir_kernel_var(a, k, VAR_LOOP, DT_INT, "cv", loc);
		if (!s->u.par.vars[d])
			return NULL;
		s->u.par.ext[d] = k->bufs[dst].dims[d].c;
		ia[d] = ir_var(a, loc, s->u.par.vars[d]);
		ib[d] = ir_var(a, loc, s->u.par.vars[d]);
	}
	st = ir_stmt(a, S_STORE, loc);
	st->u.store.buf = dst;
	st->u.store.n = n;
	st->u.store.idx = ia;
	st->u.store.value = ir_load(a, loc, t, src, n, ib);
	s->u.par.body = st;
	s->loop_layout = F;
	return s;
}

static int
lower_kernel(PassCtx *c, IrKernel *k)
{
	IrStmt **pp, *s, *next, *c1, *b1, *c2, *b2;
	const char *how;
	Err e = {0};
	int src, dst, scr, late;

	/* late_address_compute: a flag on the buffer for the HIP emitter */
	for (s = k->body; s; s = s->next) {
		if (s->kind != S_REQUIRE_LAYOUT || !s->u.layout.late_address_compute)
			continue;
		if (c->prog->target == TILEC_TARGET_HIP)
			k->bufs[s->u.layout.buf].late_address = 1;
		else
			diag_note(c->d, s->loc, "late_address_compute has no effect on CUDA (it applies "
				  "to HIP targets)");
	}
	for (pp = &k->body; (s = *pp) != NULL;) {
		if (s->kind != S_COPY || !s->convert) {
			pp = &s->next;
			continue;
		}
		src = s->u.copy.src.buf;
		dst = s->u.copy.dst.buf;
		next = s->next;
		how = convert_kind(k->bufs[src].layout, k->bufs[dst].layout, &e);
		if (!how) {
			diag(c->d, s->loc, "layout conversion of '%s': %s", k->bufs[src].name, e.msg);
			return -1;
		}
		if (!strcmp(how, "none")) {
			/* equal layouts: later statements use the first buffer again */
			ren_stmts(c->a, next, dst, src);
			*pp = next;
			continue;
		}
		if (!strcmp(how, "registers")) {
			if (!(c1 = permute_stmt(c->a, k, src, dst, s->loc)))
				return -1;
			c1->next = next;
			*pp = c1;
			pp = &c1->next;
			continue;
		}
		scr = ir_kernel_buffer(c->a, k, arena_printf(c->a, "%s_cvt", k->bufs[src].name), MEM_SHARED,
				       k->bufs[src].dtype, k->bufs[src].ndim, k->bufs[src].dims, s->loc);
		if (scr < 0)
			return -1;
		late = k->bufs[dst].late_address;
		c1 = copy_stmt(c->a, k, src, scr, s->loc, late);
		b1 = ir_stmt(c->a, S_BARRIER, s->loc);
		c2 = copy_stmt(c->a, k, scr, dst, s->loc, late);
		b2 = ir_stmt(c->a, S_BARRIER, s->loc);
		c1->next = b1, b1->next = c2, c2->next = b2, b2->next = next;
		*pp = c1;
		pp = &b2->next;
	}
	return 0;
}

int
pass_convert_layouts(PassCtx *c)
{
	IrKernel *k;
	int rc = 0;

	for (k = c->prog->kernels; k; k = k->next)
		if (lower_kernel(c, k) < 0)
			rc = -1;
	return rc;
}
