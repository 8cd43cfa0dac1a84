/*
 * dumplayout.c: dump_layout and assert_same_layout, the last layout pass.
 * A layout is first seen as a linear layout (linear.c); when every non-zero
 * bit stride is a distinct power of two it prints as a CuTe layout whose
 * modes are the geometric runs of each input dim (TLX DumpLayout.cpp), a
 * swizzled shared buffer as Swizzle<B,M,S> o shape:stride, else the linear
 * layout's text. Assertions compare final mappings, never spellings.
 */
#include <stdio.h>
#include <string.h>

#include "dumplayout.h"
#include "layout_cute.h"
#include "passes.h"

typedef struct Mode {
	int64_t size, stride;
} Mode;

/* the geometric runs of one input dim's bit strides; returns the count */
static int
collapse(const int64_t *sig, int n, Mode *m)
{
	int p, k = 0;

	for (p = 0; p < n; p++) {
		if (k && m[k - 1].stride * m[k - 1].size == sig[p]) {
			m[k - 1].size *= 2;
			continue;
		}
		m[k].size = 2;
		m[k].stride = sig[p];
		k++;
	}
	return k;
}

static void
group(Buf *b, const Mode *m, int n, int stride)
{
	int i;

	if (n == 0) {
		buf_printf(b, stride ? "_0" : "_1");
		return;
	}
	if (n > 1)
		buf_printf(b, "(");
	for (i = 0; i < n; i++)
		buf_printf(b, "%s_%lld", i ? "," : "", (long long)(stride ? m[i].stride : m[i].size));
	if (n > 1)
		buf_printf(b, ")");
}

int
dump_cute_strided(Buf *b, const LinLayout *L)
{
	int64_t R[LAYOUT_MAXDIM], sig[LIN_MAXIN][LIN_MAXBITS], seen = 0;
	Mode modes[LIN_MAXIN][LIN_MAXBITS], th[LIN_MAXIN * LIN_MAXBITS];
	int nm[LIN_MAXIN], k, p, d, nth = 0, reg;

	if (!b || !L || L->nout < 1 || L->nin < 1)
		return 0;
	R[L->nout - 1] = 1;
	for (d = L->nout - 2; d >= 0; d--)
		R[d] = R[d + 1] * L->out_size[d + 1];
	for (k = 0; k < L->nin; k++) {
		for (p = 0; p < L->nbits[k]; p++) {
			int64_t s = 0;

			for (d = 0; d < L->nout; d++)
				s += L->base[k][p * L->nout + d] * R[d];
			if (s && ((s & (s - 1)) || (seen & s)))
				return 0;
			seen |= s;
			sig[k][p] = s;
		}
		nm[k] = collapse(sig[k], L->nbits[k], modes[k]);
	}
	reg = !strcmp(L->in_name[0], "register");
	if (!reg) {
		for (k = 0; k < L->nin; k++)
			for (p = 0; p < nm[k]; p++)
				th[nth++] = modes[k][p];
		group(b, th, nth, 0);
		buf_printf(b, ":");
		group(b, th, nth, 1);
		return 1;
	}
	for (k = 1; k < L->nin; k++)
		for (p = 0; p < nm[k]; p++)
			th[nth++] = modes[k][p];
	buf_printf(b, "(");
	group(b, th, nth, 0);
	buf_printf(b, ",");
	group(b, modes[0], nm[0], 0);
	buf_printf(b, "):(");
	group(b, th, nth, 1);
	buf_printf(b, ",");
	group(b, modes[0], nm[0], 1);
	buf_printf(b, ")");
	return 1;
}

/* a CuTe tuple with static integers spelled _N; 0 if a leaf is a scaled basis */
static int
stup(Buf *b, const CuteTup *t)
{
	int i;

	if (t->n < 0) {
		if (t->x.nb)
			return 0;
		buf_printf(b, "_%lld", (long long)t->x.v);
		return 1;
	}
	buf_printf(b, "(");
	for (i = 0; i < t->n; i++) {
		if (i)
			buf_printf(b, ",");
		if (!stup(b, t->e[i]))
			return 0;
	}
	buf_printf(b, ")");
	return 1;
}

/* Swizzle<B,M,S> o shape:stride of a shared layout; 1 printed, 0 not a swizzle */
static int
swizzled(Arena *a, Buf *b, const Layout *L)
{
	CuteComposed c;
	Err e = {0};
	Buf t;
	int ok;

	if (layout_to_cute(a, L, LC_COMPOSED, &c, &e) != 1 || c.sw.b <= 0 || c.off)
		return 0;
	buf_init(&t);
	buf_printf(&t, "Swizzle<%d,%d,%d> o ", c.sw.b, c.sw.m, c.sw.s);
	ok = stup(&t, c.l.shape);
	buf_printf(&t, ":");
	ok = ok && stup(&t, c.l.stride);
	if (ok && !t.oom)
		buf_printf(b, "%s", buf_str(&t));
	buf_free(&t);
	return ok;
}

/* the linear layout of a fragment or a shared layout */
static int
lin_of(Arena *a, const Layout *L, int warp_size, LinLayout *lin, Err *err)
{
	return L->is_frag ? lin_from_fragment(a, L, warp_size, lin, err) : lin_from_shared(a, L, lin, err);
}

int
dump_layout_text(Arena *a, Buf *b, const Layout *L, int warp_size, Err *err)
{
	LinLayout lin;
	Err why = {0};
	Buf t;
	int r;

	if (!a || !b || !L)
		return err_set(err, "dump_layout: null argument");
	r = lin_of(a, L, warp_size, &lin, &why);
	if (r < 0)
		return err_set(err, "%s", why.msg);
	buf_init(&t);
	if (r == 1 && dump_cute_strided(&t, &lin)) {
		buf_printf(b, "//   cute: %s\n", buf_str(&t));
	} else if (!L->is_frag && swizzled(a, &t, L)) {
		buf_printf(b, "//   cute: %s\n", buf_str(&t));
	} else if (r == 1) {
		buf_printf(b, "//   (not representable as a CuTe layout; linear layout follows)");
		lin_print(b, &lin);
		buf_printf(b, "\n");
	} else {
		buf_printf(b, "//   (not representable as a CuTe or a linear layout: %s)\n//   layout: ",
			   why.msg);
		layout_print(b, L);
		buf_printf(b, "\n");
	}
	buf_free(&t);
	return 0;
}

/* ---- the pass ------------------------------------------------------------- */

typedef struct Ctx {
	Arena *a;
	Diags *d;
	const IrKernel *k;
	int warp_size;
	Buf *out;
	int nfail;
} Ctx;

static void
typeline(Buf *b, const IrBuffer *B)
{
	int i;

	buf_printf(b, "//   type: %s %s %s[", memscope_name(B->scope), B->name, dtype_name(B->dtype));
	for (i = 0; i < B->ndim; i++) {
		if (B->dims[i].sym)
			buf_printf(b, "%s%s", i ? ", " : "", B->dims[i].sym->name);
		else
			buf_printf(b, "%s%lld", i ? ", " : "", (long long)B->dims[i].c);
	}
	buf_printf(b, "]");
	if (B->layout) {
		buf_printf(b, " ");
		layout_print(b, B->layout);
	}
	buf_printf(b, "\n");
}

static void
dumpone(Ctx *c, const IrStmt *s)
{
	const IrBuffer *B = &c->k->bufs[s->u.layout.buf];
	Err e = {0};

	buf_printf(c->out, "// tilec.dump_layout @ %s:%d:%d\n", s->loc.file ? s->loc.file : "<input>",
		   s->loc.line, s->loc.col);
	typeline(c->out, B);
	if (!B->layout) {
		buf_printf(c->out, "//   encoding: <none>\n");
		return;
	}
	if (dump_layout_text(c->a, c->out, B->layout, c->warp_size, &e))
		diag(c->d, s->loc, "dump_layout of '%s': %s", B->name, e.msg);
}

/* the expected side of assert_same_layout(x, L): a Layout or a linear layout */
static int
expected(Ctx *c, const IrBuffer *B, const LayoutLit *l, Layout **lay, LinLayout *lin, Err *err)
{
	int64_t shape[IR_MAXDIM], n = 1, i, *off;
	int k, r, eb = dtype_bytes(B->dtype);
	CuteObj *o;

	*lay = NULL;
	for (k = 0; k < B->ndim; k++) {
		if (B->dims[k].sym)
			return err_set(err, "'%s' has a symbolic shape", B->name);
		shape[k] = B->dims[k].c;
		n *= shape[k];
	}
	switch (l->kind) {
	case LAYOUT_CUTE:
		if (cute_parse(c->a, l->text, &o, err))
			return -1;
		if (o->k == CUTE_LAYOUT && B->scope == MEM_LOCAL)
			return lin_from_cute_tv(c->a, o->l, shape, B->ndim, c->warp_size, lin, err);
		if (o->k == CUTE_LAYOUT)
			return lin_from_cute_buffer(c->a, o->l, shape, B->ndim, lin, err);
		if (o->k == CUTE_COMPOSED && B->scope == MEM_SHARED) {
			int64_t co[IR_MAXDIM], colex, m;

			off = anewn(c->a, int64_t, (size_t)n);
			for (i = 0; i < n; i++) {
				m = i;
				for (k = B->ndim - 1; k >= 0; k--) {
					co[k] = m % shape[k];
					m /= shape[k];
				}
				colex = 0;
				for (k = B->ndim - 1; k >= 0; k--)
					colex = colex * shape[k] + co[k];
				if (cute_composed_eval(&o->c, colex, &off[i], err))
					return -1;
			}
			return lin_from_offsets(c->a, off, shape, B->ndim, lin, err);
		}
		return err_set(err, "the CuTe text is not a layout for a %s buffer",
			       memscope_name(B->scope));
	case LAYOUT_SWIZZLE:
		*lay = swizzle_layout(c->a, l->bytes == 32 ? SWZ_32B : l->bytes == 64 ? SWZ_64B : SWZ_128B,
				      shape, B->ndim, eb, err);
		break;
	case LAYOUT_PADDED:
		*lay = swizzle_padded(c->a, shape, B->ndim, eb, err);
		break;
	case LAYOUT_LINEAR:
		*lay = swizzle_linear(c->a, shape, B->ndim, err);
		break;
	case LAYOUT_MMA:
		return err_set(err, "an mma layout literal is not supported by assert_same_layout yet");
	}
	if (!*lay)
		return -1;
	r = lin_of(c->a, *lay, c->warp_size, lin, err);
	return r < 0 ? -1 : r;
}

static void
describe(Ctx *c, Loc loc, const char *side, const char *name, const Layout *L, int haslin,
	 const LinLayout *lin)
{
	Buf t;

	buf_init(&t);
	buf_printf(&t, "%s (%s): cute: ", side, name);
	if (!(haslin && dump_cute_strided(&t, lin)))
		buf_printf(&t, "(not representable)");
	if (haslin) {
		buf_printf(&t, "; linear:");
		lin_print(&t, lin);
	} else if (L) {
		buf_printf(&t, "; layout: ");
		layout_print(&t, L);
	}
	diag_note(c->d, loc, "%s", t.oom ? "out of memory" : buf_str(&t));
	buf_free(&t);
}

static int
anylayout(const IrKernel *k)
{
	int i;

	for (i = 0; i < k->nbuf; i++)
		if (k->bufs[i].layout)
			return 1;
	return 0;
}

static void
assertone(Ctx *c, const IrStmt *s)
{
	const IrBuffer *X = &c->k->bufs[s->u.layout.buf], *Y = NULL;
	Layout *ly = NULL;
	LinLayout lx, lyl;
	Err e = {0}, w = {0};
	int rx = 0, ry = 0, same;

	if (s->u.layout.other >= 0)
		Y = &c->k->bufs[s->u.layout.other];
	if (!X->layout || (Y && !Y->layout)) {
		const char *who = !X->layout ? X->name : Y->name;

		if (!anylayout(c->k)) {
			diag_warn(c->d, s->loc, "assert_same_layout: not checked: no layout pass assigned "
				  "layouts in this kernel");
			return;
		}
		diag(c->d, s->loc, "assert_same_layout: '%s' has no layout", who);
		c->nfail++;
		return;
	}
	if (Y) {
		ly = Y->layout;
		ry = lin_of(c->a, ly, c->warp_size, &lyl, &e);
	} else if (s->u.layout.lit) {
		ry = expected(c, X, s->u.layout.lit, &ly, &lyl, &e);
	} else {
		ry = err_set(&e, "nothing to compare with");
	}
	if (ry < 0) {
		diag(c->d, s->loc, "assert_same_layout: %s", e.msg);
		c->nfail++;
		return;
	}
	rx = lin_of(c->a, X->layout, c->warp_size, &lx, &w);
	if (rx < 0) {
		diag(c->d, s->loc, "assert_same_layout: %s", w.msg);
		c->nfail++;
		return;
	}
	if (rx == 1 && ry == 1)
		same = lin_equal(&lx, &lyl);
	else if (ly)
		same = layout_equal(X->layout, ly, &w) == 1;
	else
		same = 0;
	if (same)
		return;
	c->nfail++;
	diag(c->d, s->loc, "layout assertion failed: the layouts of '%s' and %s differ", X->name,
	     Y ? Y->name : "the expected layout");
	describe(c, s->loc, "lhs", X->name, X->layout, rx == 1, &lx);
	describe(c, s->loc, "rhs", Y ? Y->name : "expected", ly, ry == 1, &lyl);
}

static void
walk(Ctx *c, const IrStmt *s, int dumps)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_DUMP_LAYOUT:
			if (dumps)
				dumpone(c, s);
			break;
		case S_ASSERT_SAME_LAYOUT:
			if (!dumps)
				assertone(c, s);
			break;
		case S_PARALLEL: walk(c, s->u.par.body, dumps); break;
		case S_FOR: walk(c, s->u.loop.body, dumps); break;
		case S_PIPELINE: walk(c, s->u.pipe.body, dumps); break;
		case S_IF:
			walk(c, s->u.cond.then, dumps);
			walk(c, s->u.cond.els, dumps);
			break;
		default: break;
		}
	}
}

int
dump_layout_program(Arena *a, Diags *d, const IrProgram *p, int warp_size, Buf *out)
{
	Ctx c = {a, d, NULL, warp_size, out, 0};
	const IrKernel *k;

	if (!a || !d || !p || !out)
		return 0;
	/* assertions first, as TLX: a failure stops the dumps */
	for (k = p->kernels; k; k = k->next) {
		c.k = k;
		walk(&c, k->body, 0);
	}
	if (c.nfail)
		return c.nfail;
	for (k = p->kernels; k; k = k->next) {
		c.k = k;
		walk(&c, k->body, 1);
	}
	return 0;
}

int
pass_layout_diagnostics(PassCtx *c)
{
	Buf *dst = c->o->layout_dump_to_output ? c->out : c->log;

	return dump_layout_program(c->a, c->d, c->prog, c->warp_size, dst) || c->d->nerr ? -1 : 0;
}
