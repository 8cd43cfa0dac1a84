/*
 * sema_layout.c: layout literals (cute("..."), swizzle(N), padded, linear,
 * mma_a/mma_b/mma_c(NAME, warps = n)) and the layout statements
 * (annotate_layout, require_layout, release_layout, dump_layout,
 * assert_same_layout, require_amd_wmma_layout). CuTe text is parsed by the
 * CuTe module (cute.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cute.h"
#include "sema.h"

/* ---- CuTe strings ------------------------------------------------------------ */

/*
 * A cute("...") literal is parsed by the CuTe module itself (cute.c), so the
 * language accepts exactly the spelling `tilec cute` prints and parses: a
 * layout shape:stride or a composed layout Sw<B,M,S> o [off o] shape:stride
 * (also TLX's Swizzle<B,M,S> o ...). *size receives the layout's size, or -1
 * when it does not fit in 64 bits.
 */
int
sema_check_cute(const char *s, size_t len, char *msg, size_t msgsz, int64_t *size)
{
	Arena a;
	Err e = {0};
	CuteObj *o;
	CuteLayout l;
	char *text;
	int64_t n;
	int r = -1;

	int depth = 0;
	size_t i;

	if (memchr(s, 0, len)) {
		snprintf(msg, msgsz, "NUL byte in the layout text");
		return -1;
	}
	/* say the plain thing first: the parser would name a later symptom */
	for (i = 0; i < len && depth >= 0; i++)
		depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
	if (depth != 0) {
		snprintf(msg, msgsz, "unbalanced parentheses");
		return -1;
	}
	arena_init(&a);
	text = arena_strndup(&a, s, len);
	if (!text) {
		snprintf(msg, msgsz, "out of memory");
		goto out;
	}
	if (cute_parse(&a, text, &o, &e) < 0) {
		snprintf(msg, msgsz, "%s", strncmp(e.msg, "cute: ", 6) ? e.msg : e.msg + 6);
		goto out;
	}
	if (o->k == CUTE_LAYOUT) {
		l = o->l;
	} else if (o->k == CUTE_COMPOSED) {
		l = o->c.l;
	} else {
		snprintf(msg, msgsz, "expected a layout shape:stride or Sw<B,M,S> o shape:stride");
		goto out;
	}
	if (cute_size(l, &n, &e) < 0)
		n = -1;
	if (size)
		*size = n;
	r = 0;
out:
	arena_free(&a);
	return r;
}

/* ---- layout literals ---------------------------------------------------------- */

static LayoutLit *
mmalit(Sema *S, const Node *n, LayoutLit *l)
{
	const Node *a = n->u.call.args;
	int m;

	l->kind = LAYOUT_MMA;
	l->operand = n->u.call.name[4];
	if (!a || a->kind != N_IDENT) {
		diag(S->d, n->loc, "%s: the first argument must name an MMA instruction (m16n8k16, "
		     "m16n8k8, m16n8k32, mfma16x16x16 or wmma16x16x16)",
		     n->u.call.name);
		return NULL;
	}
	for (m = 0; m < MMA_COUNT; m++)
		if (!strcmp(a->u.name, mma_name((MmaKind)m)))
			break;
	if (m == MMA_COUNT) {
		diag(S->d, a->loc, "%s: unknown MMA instruction '%s' (m16n8k16, m16n8k8, m16n8k32, "
		     "mfma16x16x16 or wmma16x16x16)",
		     n->u.call.name, a->u.name);
		return NULL;
	}
	l->mma = (MmaKind)m;
	l->opt = anewn(S->a, LayoutOpt, n->u.call.nargs);
	if (!l->opt)
		return NULL;
	for (a = a->next; a; a = a->next) {
		int64_t v;
		int i;

		if (a->kind != N_NAMED || strcmp(a->u.bind.name, "warps")) {
			diag(S->d, a->loc, "%s: unexpected argument; the only option is warps = N",
			     n->u.call.name);
			return NULL;
		}
		for (i = 0; i < l->nopt; i++)
			if (!strcmp(l->opt[i].name, a->u.bind.name)) {
				diag(S->d, a->loc, "%s: option '%s' given twice", n->u.call.name,
				     a->u.bind.name);
				return NULL;
			}
		if (sx_const_int(S, a->u.bind.value, "warps", &v))
			return NULL;
		if (v <= 0 || v > 32 || (v & (v - 1))) {
			diag(S->d, a->u.bind.value->loc,
			     "%s: warps must be a power of two from 1 to 32, got %lld", n->u.call.name,
			     (long long)v);
			return NULL;
		}
		l->opt[l->nopt].name = a->u.bind.name;
		l->opt[l->nopt++].value = v;
	}
	return l;
}

/* a layout literal; NULL after reporting */
static LayoutLit *
layoutlit(Sema *S, const Node *n)
{
	LayoutLit *l = anew(S->a, LayoutLit);
	char msg[200];

	if (!l)
		return NULL;
	l->loc = n->loc;
	if (n->kind == N_IDENT && !strcmp(n->u.name, "padded")) {
		l->kind = LAYOUT_PADDED;
		return l;
	}
	if (n->kind == N_IDENT && !strcmp(n->u.name, "linear")) {
		l->kind = LAYOUT_LINEAR;
		return l;
	}
	if (n->kind == N_CALL && !strcmp(n->u.call.name, "cute")) {
		const Node *a = n->u.call.args;

		if (n->u.call.nargs != 1 || a->kind != N_STR) {
			diag(S->d, n->loc, "cute(...) takes one string, e.g. "
			     "cute(\"(_8,_4):(_4,_1)\")");
			return NULL;
		}
		if (sema_check_cute(a->u.str.s, a->u.str.len, msg, sizeof msg, &l->size)) {
			diag(S->d, a->loc, "bad cute layout \"%.*s\": %s",
			     (int)(a->u.str.len > 80 ? 80 : a->u.str.len), a->u.str.s, msg);
			return NULL;
		}
		l->kind = LAYOUT_CUTE;
		l->text = a->u.str.s;
		return l;
	}
	if (n->kind == N_CALL && !strcmp(n->u.call.name, "swizzle")) {
		int64_t v;

		if (n->u.call.nargs != 1 || n->u.call.args->kind == N_NAMED) {
			diag(S->d, n->loc, "swizzle(...) takes one width in bytes: 32, 64 or 128");
			return NULL;
		}
		if (sx_const_int(S, n->u.call.args, "swizzle width", &v))
			return NULL;
		if (v != 32 && v != 64 && v != 128) {
			diag(S->d, n->u.call.args->loc,
			     "swizzle(%lld): the swizzle width must be 32, 64 or 128 bytes", (long long)v);
			return NULL;
		}
		l->kind = LAYOUT_SWIZZLE;
		l->bytes = (int)v;
		return l;
	}
	if (n->kind == N_CALL && (!strcmp(n->u.call.name, "mma_a") || !strcmp(n->u.call.name, "mma_b") ||
				  !strcmp(n->u.call.name, "mma_c")))
		return mmalit(S, n, l);
	diag(S->d, n->loc, "expected a layout: cute(\"...\"), swizzle(32|64|128), padded, linear, "
	     "or mma_a/mma_b/mma_c(...)");
	return NULL;
}

/* the product of the shape's leaves whose stride is not 0 (sizes of a checked literal fit) */
static int64_t
nonzero_size(const CuteTup *shape, const CuteTup *stride)
{
	int64_t n = 1;
	int i;

	if (shape->n < 0)
		return stride->x.v == 0 && stride->x.nb == 0 ? 1 : shape->x.v;
	for (i = 0; i < shape->n; i++)
		n *= nonzero_size(shape->e[i], stride->e[i]);
	return n;
}

/*
 * parallel(..., layout = cute("(threads, values)")): the loop layout the program gives
 * a nest of npts points. The (thread, value) form of a local tile's layout, over the
 * nest's points: its stride-0 modes replicate, its thread mode fits the kernel.
 */
LayoutLit *
sl_loop_layout(Sema *S, const char *fn, const Node *n, int64_t npts)
{
	LayoutLit *l = layoutlit(S, n);
	CuteObj *o;
	Err e = {0};
	int64_t size, nt;

	if (!l)
		return NULL;
	if (l->kind != LAYOUT_CUTE) {
		diag(S->d, n->loc, "%s: a loop layout is cute(\"(threads, values)\") over the %s's "
		     "points", fn, !strcmp(fn, "parallel") ? "nest" : fn);
		return NULL;
	}
	if (cute_parse(S->a, l->text, &o, &e) || o->k != CUTE_LAYOUT) {
		diag(S->d, n->loc, "%s: a loop layout is a (thread, value) CuTe layout, not a swizzled one", fn);
		return NULL;
	}
	size = nonzero_size(o->l.shape, o->l.stride);
	if (l->size < 0 || size != npts) {
		diag(S->d, n->loc, "%s: the loop layout maps %lld points but the %s has %lld", fn,
		     (long long)size, !strcmp(fn, "parallel") ? "nest" : fn, (long long)npts);
		return NULL;
	}
	if (S->k && S->k->threads > 0 && cute_rank(o->l) >= 1 && cute_size(cute_mode(o->l, 0), &nt, &e) == 0 &&
	    nt > S->k->threads) {
		diag(S->d, n->loc, "%s: the loop layout's thread mode has %lld threads; kernel '%s' has "
		     "%lld (threads(...))", fn, (long long)nt, S->k->name, (long long)S->k->threads);
		return NULL;
	}
	return l;
}

/* does the layout fit the buffer's scope (and a CuTe layout its size)? */
static int
fits_scope(Sema *S, const LayoutLit *l, const IrBuffer *b)
{
	if (l->kind == LAYOUT_CUTE && b->scope != MEM_GLOBAL) {
		int64_t n = 1, size = l->size;
		int i;

		for (i = 0; i < b->ndim; i++)
			n *= b->dims[i].c; /* shapes are bounded by 2^40 */
		if (l->size < 0) {
			diag(S->d, l->loc, "cute layout: the product of its shape overflows 64 bits");
			return 0;
		}
		/* a (thread, value) layout's stride-0 modes replicate: they map no new element */
		if (b->scope == MEM_LOCAL) {
			CuteObj *o;
			Err e = {0};

			if (cute_parse(S->a, l->text, &o, &e) == 0 && o->k == CUTE_LAYOUT)
				size = nonzero_size(o->l.shape, o->l.stride);
		}
		if (size != n) {
			diag(S->d, l->loc, "cute layout maps %lld elements but '%s' has %lld", (long long)size,
			     b->name, (long long)n);
			return 0;
		}
	}
	if ((l->kind == LAYOUT_SWIZZLE || l->kind == LAYOUT_PADDED || l->kind == LAYOUT_LINEAR) &&
	    b->scope != MEM_SHARED) {
		diag(S->d, l->loc, "a %s layout needs a shared buffer; '%s' is %s (a local tile takes "
		     "cute(\"(threads, values)\"), mma_a/mma_b/mma_c(...) or require_amd_wmma_layout)",
		     l->kind == LAYOUT_SWIZZLE ? "swizzle" : l->kind == LAYOUT_PADDED ? "padded" : "linear",
		     b->name, memscope_name(b->scope));
		return 0;
	}
	/* a (thread, value) layout of more threads than the kernel has cannot be held */
	if (l->kind == LAYOUT_CUTE && b->scope == MEM_LOCAL && S->k && S->k->threads > 0) {
		CuteObj *o;
		Err e = {0};
		int64_t nt;

		if (cute_parse(S->a, l->text, &o, &e) == 0 && o->k == CUTE_LAYOUT &&
		    cute_rank(o->l) >= 1 && cute_size(cute_mode(o->l, 0), &nt, &e) == 0 &&
		    nt > S->k->threads) {
			diag(S->d, l->loc, "cute layout: its thread mode has %lld threads; kernel '%s' has "
			     "%lld (threads(...))", (long long)nt, S->k->name, (long long)S->k->threads);
			return 0;
		}
	}
	if (l->kind == LAYOUT_MMA && b->scope != MEM_LOCAL) {
		diag(S->d, l->loc, "an mma_%c layout needs a local buffer; '%s' is %s", l->operand,
		     b->name, memscope_name(b->scope));
		return 0;
	}
	if (l->kind == LAYOUT_MMA) {
		/* the instruction's m, n, k; the operand's tile is [m, k], [k, n] or [m, n] */
		static const int mnk[MMA_COUNT][3] = {
			{16, 8, 16}, {16, 8, 8}, {16, 8, 32}, {16, 16, 16}, {16, 16, 16},
		};
		const int *t = mnk[l->mma];
		int r = l->operand == 'b' ? t[2] : t[0], c = l->operand == 'a' ? t[2] : t[1];

		if (b->ndim != 2 || b->dims[0].c % r || b->dims[1].c % c) {
			diag(S->d, l->loc,
			     "mma_%c(%s) needs a 2-D buffer whose shape is a multiple of [%d, %d]; "
			     "'%s' is %s",
			     l->operand, mma_name(l->mma), r, c, b->name, so_bufshape(S, b));
			return 0;
		}
	}
	return 1;
}

/* ---- statements ---------------------------------------------------------------- */

static const char *const layout_stmts[] = {
	"annotate_layout", "require_layout", "release_layout", "dump_layout", "assert_same_layout",
	"require_amd_wmma_layout",
};

int
sl_is_layout_stmt(const char *name)
{
	size_t i;

	for (i = 0; i < countof(layout_stmts); i++)
		if (!strcmp(layout_stmts[i], name))
			return 1;
	return 0;
}

/* named/positional args; same rules as the tile ops */
static int
args(Sema *S, const Node *c, const char *const *names, const int *req, int np, const Node **out)
{
	const Node *a;
	int i, pos = 0, bad = 0;

	for (i = 0; i < np; i++)
		out[i] = NULL;
	for (a = c->u.call.args; a; a = a->next) {
		if (a->kind != N_NAMED) {
			if (pos >= np) {
				diag(S->d, a->loc, "%s takes at most %d arguments", c->u.call.name, np);
				return -1;
			}
			out[pos++] = a;
			continue;
		}
		for (i = 0; i < np; i++)
			if (!strcmp(names[i], a->u.bind.name))
				break;
		if (i == np || out[i]) {
			diag(S->d, a->loc, "%s: %s argument '%s'", c->u.call.name,
			     i == np ? "unknown" : "repeated", a->u.bind.name);
			bad = 1;
		} else {
			out[i] = a->u.bind.value;
		}
	}
	for (i = 0; i < np; i++)
		if (req[i] && !out[i]) {
			diag(S->d, c->loc, "%s: missing argument '%s'", c->u.call.name, names[i]);
			bad = 1;
		}
	return bad ? -1 : 0;
}

/* a non-global buffer named by n; -1 after reporting */
static int
laybuf(Sema *S, const char *fn, const Node *n)
{
	Sym *s;

	if (n->kind != N_IDENT) {
		diag(S->d, n->loc, "%s: expected a buffer name", fn);
		return -1;
	}
	s = sema_lookup(S, n->u.name);
	if (s && SYM_POISONED(s))
		return -1;
	if (!s || s->kind != SYM_BUF) {
		diag(S->d, n->loc, s ? "%s: '%s' is not a buffer" : "%s: unknown buffer '%s'", fn,
		     n->u.name);
		return -1;
	}
	if (S->k->bufs[s->u.buf].scope == MEM_GLOBAL) {
		diag(S->d, n->loc, "%s: '%s' is global; layouts apply to shared and local buffers", fn,
		     n->u.name);
		return -1;
	}
	return s->u.buf;
}

static int
cbool(Sema *S, const char *fn, const char *name, const Node *n, int dflt)
{
	IrExpr *e;

	if (!n)
		return dflt;
	e = sx_expr(S, n);
	if (!e)
		return -1;
	if (e->kind != IE_BOOL) {
		diag(S->d, n->loc, "%s: %s must be true or false", fn, name);
		return -1;
	}
	return (int)e->u.i;
}

/* a list of constant non-negative integers; -1 after reporting */
static int
intlist(Sema *S, const char *fn, const char *name, const Node *n, int64_t **v, int *len)
{
	const Node *it;
	int i = 0;

	if (n->kind != N_LIST) {
		diag(S->d, n->loc, "%s: %s must be a list of integers, e.g. [0, 1]", fn, name);
		return -1;
	}
	*len = n->u.list.n;
	*v = anewn(S->a, int64_t, *len > 0 ? *len : 1);
	if (!*v)
		return -1;
	for (it = n->u.list.items; it; it = it->next, i++) {
		if (it->kind == N_LIST) {
			diag(S->d, it->loc, "%s: %s: expected an integer, found a list", fn, name);
			return -1;
		}
		if (sx_const_int(S, it, name, &(*v)[i]))
			return -1;
		if ((*v)[i] < 0) {
			diag(S->d, it->loc, "%s: %s entries must not be negative", fn, name);
			return -1;
		}
	}
	return 0;
}

static int
bases(Sema *S, const char *fn, const char *name, const Node *n, IntLists *out)
{
	const Node *it;
	int i = 0;

	if (n->kind != N_LIST) {
		diag(S->d, n->loc, "%s: %s must be a list of [row, col] pairs", fn, name);
		return -1;
	}
	out->n = n->u.list.n;
	out->len = anewn(S->a, int, out->n > 0 ? out->n : 1);
	out->v = anewn(S->a, int64_t *, out->n > 0 ? out->n : 1);
	if (!out->len || !out->v)
		return -1;
	for (it = n->u.list.items; it; it = it->next, i++) {
		if (intlist(S, fn, name, it, &out->v[i], &out->len[i]))
			return -1;
		if (out->len[i] != 2) {
			diag(S->d, it->loc, "%s: each of %s must be a [row, col] pair, got %d "
			     "entries", fn,
			     name, out->len[i]);
			return -1;
		}
	}
	return 0;
}

static int
wmma(Sema *S, const Node *c, IrStmt *s)
{
	static const char *const names[] = {"x", "version", "transposed", "warp_bases", "reg_bases",
					    "instr_shape"};
	static const int req[] = {1, 0, 0, 1, 1, 0};
	const char *fn = c->u.call.name;
	const Node *a[6];
	int64_t v = 3, *shape;
	int n, bad = 0;

	if (args(S, c, names, req, 6, a))
		return -1;
	s->u.wmma.buf = laybuf(S, fn, a[0]);
	if (s->u.wmma.buf >= 0 && S->k->bufs[s->u.wmma.buf].scope != MEM_LOCAL) {
		diag(S->d, a[0]->loc, "%s: '%s' must be a local buffer", fn, a[0]->u.name);
		bad = 1;
	}
	if (a[1] && !sx_const_int(S, a[1], "version", &v) && (v < 1 || v > 3)) {
		diag(S->d, a[1]->loc, "%s: version must be 1, 2 or 3, got %lld", fn, (long long)v);
		bad = 1;
	}
	s->u.wmma.version = (int)v;
	s->u.wmma.transposed = cbool(S, fn, "transposed", a[2], 0);
	bad |= bases(S, fn, "warp_bases", a[3], &s->u.wmma.warp_bases);
	bad |= bases(S, fn, "reg_bases", a[4], &s->u.wmma.reg_bases);
	s->u.wmma.ninstr = 3;
	s->u.wmma.instr_shape[0] = s->u.wmma.instr_shape[1] = s->u.wmma.instr_shape[2] = 16;
	if (a[5]) {
		if (intlist(S, fn, "instr_shape", a[5], &shape, &n)) {
			bad = 1;
		} else if (n != 3 || shape[0] <= 0 || shape[1] <= 0 || shape[2] <= 0) {
			diag(S->d, a[5]->loc, "%s: instr_shape must be three positive integers [m, "
			     "n, k]",
			     fn);
			bad = 1;
		} else {
			memcpy(s->u.wmma.instr_shape, shape, sizeof s->u.wmma.instr_shape);
		}
	}
	return bad || s->u.wmma.buf < 0 || s->u.wmma.transposed < 0 ? -1 : 0;
}

int
sl_layout_stmt(Sema *S, const Node *c, IrStmt **out)
{
	const char *fn = c->u.call.name;
	IrStmt *s;
	const Node *a[4];
	int bad = 0;

	*out = NULL;
	if (!strcmp(fn, "require_amd_wmma_layout")) {
		s = ir_stmt(S->a, S_REQUIRE_WMMA_LAYOUT, c->loc);
		if (!s || wmma(S, c, s))
			return -1;
		*out = s;
		return 0;
	}
	if (!strcmp(fn, "annotate_layout")) {
		static const char *const names[] = {"buf", "layout"};
		static const int req[] = {1, 1};

		if (args(S, c, names, req, 2, a))
			return -1;
		s = ir_stmt(S->a, S_ANNOTATE_LAYOUT, c->loc);
	} else if (!strcmp(fn, "require_layout")) {
		static const char *const names[] = {"x", "layout", "pin", "late_address_compute"};
		static const int req[] = {1, 1, 0, 0};

		if (args(S, c, names, req, 4, a))
			return -1;
		s = ir_stmt(S->a, S_REQUIRE_LAYOUT, c->loc);
	} else if (!strcmp(fn, "release_layout") || !strcmp(fn, "dump_layout")) {
		static const char *const names[] = {"x"};
		static const int req[] = {1};

		if (args(S, c, names, req, 1, a))
			return -1;
		s = ir_stmt(S->a, fn[0] == 'r' ? S_RELEASE_LAYOUT : S_DUMP_LAYOUT, c->loc);
	} else {
		static const char *const names[] = {"x", "y"};
		static const int req[] = {1, 1};

		if (args(S, c, names, req, 2, a))
			return -1;
		s = ir_stmt(S->a, S_ASSERT_SAME_LAYOUT, c->loc);
	}
	if (!s)
		return -1;
	s->u.layout.other = -1;
	s->u.layout.buf = laybuf(S, fn, a[0]);
	if (s->u.layout.buf < 0)
		bad = 1;
	if (s->kind == S_ANNOTATE_LAYOUT || s->kind == S_REQUIRE_LAYOUT) {
		s->u.layout.lit = layoutlit(S, a[1]);
		if (!s->u.layout.lit || (!bad && !fits_scope(S, s->u.layout.lit, &S->k->bufs[s->u.layout.buf])))
			bad = 1;
	}
	if (s->kind == S_REQUIRE_LAYOUT) {
		s->u.layout.pin = cbool(S, fn, "pin", a[2], 1);
		s->u.layout.late_address_compute = cbool(S, fn, "late_address_compute", a[3], 0);
		if (s->u.layout.pin < 0 || s->u.layout.late_address_compute < 0)
			bad = 1;
	}
	if (s->kind == S_ASSERT_SAME_LAYOUT) {
		Sym *o = a[1]->kind == N_IDENT ? sema_lookup(S, a[1]->u.name) : NULL;

		if (o && SYM_POISONED(o)) {
			bad = 1;
		} else if (o && o->kind == SYM_BUF) {
			s->u.layout.other = laybuf(S, fn, a[1]);
			if (s->u.layout.other < 0)
				bad = 1;
		} else {
			s->u.layout.lit = layoutlit(S, a[1]);
			if (!s->u.layout.lit ||
			    (!bad && !fits_scope(S, s->u.layout.lit, &S->k->bufs[s->u.layout.buf])))
				bad = 1;
		}
	}
	if (bad)
		return -1;
	*out = s;
	return 0;
}
