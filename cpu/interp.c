/*
 * interp.c: the reference interpreter of the tile IR (interp.h). It checks the
 * arguments, evaluates the assumptions and the grid, allocates the buffers,
 * and runs the kernel body for every block in order (bz, by, bx; x fastest)
 * statement by statement. Parallel nests run their iterations in row-major
 * order; a shadow of the elements they touch (only where the nest could
 * race: a buffer it stores through other than one private index pattern, a
 * let variable of an outer scope it assigns) finds iterations that depend on
 * each other. A shadow per global element (the block that wrote it) finds
 * blocks that read or write what another block wrote. The semantics are in
 * docs/semantics.md, "What a program computes".
 */
#include <stdio.h>
#include <string.h>

#include "interp_int.h"

/* ---- failures, work, scratch ---------------------------------------------------------- */

int
irun_fail(Run *R, int st, Loc loc, const char *fmt, ...)
{
	char msg[sizeof R->e->msg];
	va_list ap;

	if (R->bad)
		return -1;
	R->bad = st;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (loc.line > 0)
		err_set(R->e, "%s:%d:%d: %s", loc.file ? loc.file : "<input>", loc.line, loc.col, msg);
	else
		err_set(R->e, "%s", msg);
	return -1;
}

int
irun_work(Run *R, Loc loc, int64_t n)
{
	if (__builtin_add_overflow(R->work, n, &R->work))
		R->work = INT64_MAX; /* past any limit (InterpStats.work says so) */
	if (R->work > R->maxwork)
		return irun_fail(R, INTERP_ERROR, loc,
				 "the run exceeds the interpreter's limit of %lld operations (block (%lld,%lld,%lld))",
				 (long long)R->maxwork, (long long)R->blk[0], (long long)R->blk[1],
				 (long long)R->blk[2]);
	return 0;
}

void *
irun_scratch(Run *R, size_t n)
{
	if (n > R->scratchcap) {
		size_t cap = n > 2 * R->scratchcap ? n : 2 * R->scratchcap;

		R->scratch = arena_alloc(&R->a, cap);
		if (!R->scratch) {
			R->scratchcap = 0;
			irun_fail(R, INTERP_NOMEM, R->k->loc, "out of memory");
			return NULL;
		}
		R->scratchcap = cap;
	}
	return R->scratch;
}

void
irun_elemtext(Run *R, Buf *b, const BufRt *B, int64_t lin)
{
	int d;

	int64_t co[IR_MAXDIM] = {0};
	int done[IR_MAXDIM] = {0}, i;

	(void)R;
	/* the coordinates: dims by decreasing stride (a strided tensor's dims need not be in
	 * stride order; for the views tilec run makes this inverts the addressing) */
	for (i = 0; i < B->ndim; i++) {
		int best = -1;

		for (d = 0; d < B->ndim; d++)
			if (!done[d] && (best < 0 || B->stride[d] > B->stride[best]))
				best = d;
		done[best] = 1;
		if (B->stride[best] > 0 && B->dim[best] > 0) {
			co[best] = lin / B->stride[best];
			if (co[best] >= B->dim[best])
				co[best] = B->dim[best] - 1;
			lin -= co[best] * B->stride[best];
		}
	}
	buf_printf(b, "%s[", B->b->name);
	for (d = 0; d < B->ndim; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)co[d]);
	buf_putc(b, ']');
}

static void
blocktext(Buf *b, const Run *R, int64_t id)
{
	int64_t gx = R->grid[0], gy = R->grid[1];

	buf_printf(b, "(%lld,%lld,%lld)", (long long)(id % gx), (long long)(id / gx % gy),
		   (long long)(id / gx / gy));
}

int
irun_block_race(Run *R, const BufRt *B, int64_t lin, Loc loc)
{
	uint32_t w = B->cell[lin] >> 4;
	Buf b;

	if (!w || (int64_t)w - 1 == R->blkid)
		return 0;
	buf_init(&b);
	buf_puts(&b, "data race between blocks ");
	blocktext(&b, R, (int64_t)w - 1);
	buf_puts(&b, " and ");
	blocktext(&b, R, R->blkid);
	buf_puts(&b, ": ");
	irun_elemtext(R, &b, B, lin);
	buf_puts(&b, " is written by the first and accessed by the second");
	irun_fail(R, INTERP_ERROR, loc, "%s", buf_str(&b));
	buf_free(&b);
	return -1;
}

/* ---- parallel nests ------------------------------------------------------------------------ */

static void
itertext(Buf *b, const Run *R, int64_t it)
{
	const IrStmt *s = R->nest;
	int64_t c[IR_MAXDIM];
	int d;

	for (d = s->u.par.n - 1; d >= 0; d--) {
		c[d] = it % s->u.par.ext[d];
		it /= s->u.par.ext[d];
	}
	buf_putc(b, '(');
	for (d = 0; d < s->u.par.n; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)c[d]);
	buf_putc(b, ')');
}

static int
nestrace(Run *R, int slot, int64_t idx, int64_t other, int write_write, int other_writes, Loc loc)
{
	Buf b, el;

	(void)loc;
	buf_init(&b);
	buf_init(&el);
	if (slot < R->k->nbuf)
		irun_elemtext(R, &el, &R->bufs[slot], idx);
	else
		buf_printf(&el, "let variable '%s'", R->k->vars[slot - R->k->nbuf]->name);
	buf_puts(&b, "data race in parallel nest at ");
	buf_printf(&b, "%s:%d:%d: ", R->nest->loc.file ? R->nest->loc.file : "<input>", R->nest->loc.line,
		   R->nest->loc.col);
	if (write_write) {
		buf_puts(&b, "iterations ");
		itertext(&b, R, other);
		buf_puts(&b, " and ");
		itertext(&b, R, R->iter);
		buf_printf(&b, " both write %s", buf_str(&el));
	} else {
		buf_puts(&b, "iteration ");
		itertext(&b, R, other_writes ? other : R->iter);
		buf_printf(&b, " writes %s and iteration ", buf_str(&el));
		itertext(&b, R, other_writes ? R->iter : other);
		buf_puts(&b, " reads it");
	}
	irun_fail(R, INTERP_ERROR, (Loc){0}, "%s", buf_str(&b));
	buf_free(&b);
	buf_free(&el);
	return -1;
}

static uint64_t
shash(int slot, int64_t idx)
{
	uint64_t h = (uint64_t)idx * 0x9e3779b97f4a7c15ull ^ (uint64_t)slot * 0xc2b2ae3d27d4eb4full;

	return h ^ h >> 29;
}

/* the shadow of (slot, idx) in the current nest, created empty; NULL on OOM */
static Shadow *
shadow(Run *R, int slot, int64_t idx)
{
	size_t i, m;

	if (2 * (R->shn + 1) > R->shcap) {
		size_t cap = R->shcap ? 2 * R->shcap : 1024, j;
		Shadow *ns = arena_alloc(&R->a, sizeof *ns * cap), *o = R->sh;

		if (!ns)
			return NULL;
		for (j = 0; j < R->shcap; j++) {
			if (o[j].epoch != R->epoch)
				continue;
			for (i = shash(o[j].slot, o[j].idx) & (cap - 1); ns[i].epoch; i = (i + 1) & (cap - 1))
				;
			ns[i] = o[j];
		}
		R->sh = ns;
		R->shcap = cap;
	}
	m = R->shcap - 1;
	for (i = shash(slot, idx) & m; R->sh[i].epoch == R->epoch; i = (i + 1) & m)
		if (R->sh[i].slot == slot && R->sh[i].idx == idx)
			return &R->sh[i];
	R->sh[i].epoch = R->epoch;
	R->sh[i].slot = slot;
	R->sh[i].idx = idx;
	R->sh[i].w = R->sh[i].r1 = R->sh[i].r2 = -1;
	R->shn++;
	return &R->sh[i];
}

int
irun_nest_access(Run *R, int slot, int64_t idx, int write, Loc loc)
{
	Shadow *s = shadow(R, slot, idx);
	int64_t it = R->iter;

	if (!s)
		return irun_fail(R, INTERP_NOMEM, loc, "out of memory");
	if (s->w >= 0 && s->w != it)
		return nestrace(R, slot, idx, s->w, write, 1, loc);
	if (!write) {
		if (s->w == it || s->r1 == it || s->r2 == it)
			return 0;
		if (s->r1 < 0)
			s->r1 = it;
		else if (s->r2 < 0)
			s->r2 = it;
		return 0;
	}
	if (s->r1 >= 0 && s->r1 != it)
		return nestrace(R, slot, idx, s->r1, 0, 0, loc);
	if (s->r2 >= 0 && s->r2 != it)
		return nestrace(R, slot, idx, s->r2, 0, 0, loc);
	s->w = it;
	return 0;
}

/* the private pattern of an access: every index is a nest variable or a constant, each
 * nest variable used once (so different iterations reach different elements); -1 if not */
static int
pattern(const IrStmt *nest, int n, IrExpr *const *idx, int64_t *p)
{
	unsigned used = 0;
	int d, i;

	for (d = 0; d < n; d++) {
		if (idx[d]->kind == IE_INT && idx[d]->u.i >= 0) {
			p[d] = idx[d]->u.i;
			continue;
		}
		if (idx[d]->kind != IE_VAR)
			return -1;
		for (i = 0; i < nest->u.par.n && nest->u.par.vars[i] != idx[d]->u.var; i++)
			;
		if (i == nest->u.par.n || used >> i & 1)
			return -1;
		used |= 1u << i;
		p[d] = -1 - i;
	}
	return used == (1u << nest->u.par.n) - 1 ? 0 : -1;
}

static void
access_seen(Run *R, int buf, int n, IrExpr *const *idx)
{
	int64_t p[IR_MAXDIM];

	if (R->pstate[buf] == 2)
		return;
	if (pattern(R->nest, n, idx, p)) {
		R->pstate[buf] = 2;
	} else if (R->pstate[buf] == 0) {
		R->pstate[buf] = 1;
		memcpy(R->pat + buf * IR_MAXDIM, p, sizeof *p * (size_t)n);
	} else if (memcmp(R->pat + buf * IR_MAXDIM, p, sizeof *p * (size_t)n)) {
		R->pstate[buf] = 2;
	}
}

static void
scan_expr(Run *R, const IrExpr *x)
{
	int i;

	if (!x)
		return;
	switch (x->kind) {
	case IE_LOAD:
		access_seen(R, x->u.load.buf, x->u.load.n, x->u.load.idx);
		for (i = 0; i < x->u.load.n; i++)
			scan_expr(R, x->u.load.idx[i]);
		break;
	case IE_UNARY: scan_expr(R, x->u.un.a); break;
	case IE_BINARY:
		scan_expr(R, x->u.bin.a);
		scan_expr(R, x->u.bin.b);
		break;
	case IE_SELECT:
		scan_expr(R, x->u.sel.c);
		scan_expr(R, x->u.sel.a);
		scan_expr(R, x->u.sel.b);
		break;
	case IE_CAST: scan_expr(R, x->u.cast.a); break;
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			scan_expr(R, x->u.call.args[i]);
		break;
	default: break;
	}
}

/* what the nest body touches: vwritten marks lets defined in the body (2) and
 * let variables assigned (1) */
static void
scan_body(Run *R, const IrStmt *s)
{
	int i;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_STORE:
			R->stored[s->u.store.buf] = 1;
			access_seen(R, s->u.store.buf, s->u.store.n, s->u.store.idx);
			for (i = 0; i < s->u.store.n; i++)
				scan_expr(R, s->u.store.idx[i]);
			scan_expr(R, s->u.store.value);
			break;
		case S_LET:
			R->vwritten[s->u.let.var->id] = 2;
			scan_expr(R, s->u.let.value);
			break;
		case S_SET:
			if (!R->vwritten[s->u.let.var->id])
				R->vwritten[s->u.let.var->id] = 1;
			scan_expr(R, s->u.let.value);
			break;
		case S_FOR:
			scan_expr(R, s->u.loop.lo);
			scan_expr(R, s->u.loop.extent);
			scan_body(R, s->u.loop.body);
			break;
		case S_IF:
			scan_expr(R, s->u.cond.cond);
			scan_body(R, s->u.cond.then);
			scan_body(R, s->u.cond.els);
			break;
		default: break; /* tile ops are not allowed in a nest (sema) */
		}
	}
}

static int exec_list(Run *R, const IrStmt *s);

static int
parallel(Run *R, const IrStmt *s)
{
	const IrKernel *k = R->k;
	int n = s->u.par.n, d, i, r = 0, id[IR_MAXDIM], tracked = 0;
	int64_t c[IR_MAXDIM], total = 1, it;

	if (n > IR_MAXDIM)
		return irun_fail(R, INTERP_UNSUPPORTED, s->loc, "parallel nest of more than %d dimensions",
				 IR_MAXDIM);
	for (d = 0; d < n; d++) {
		id[d] = s->u.par.vars[d]->id;
		c[d] = 0;
		if (__builtin_mul_overflow(total, s->u.par.ext[d], &total))
			return irun_fail(R, INTERP_ERROR, s->loc, "parallel nest too large");
	}
	/* which buffers and variables the iterations could share */
	R->nest = s;
	R->epoch++;
	R->shn = 0;
	memset(R->stored, 0, (size_t)k->nbuf);
	memset(R->pstate, 0, (size_t)k->nbuf);
	memset(R->vwritten, 0, (size_t)k->nvar);
	scan_body(R, s->u.par.body);
	for (i = 0; i < k->nbuf; i++) {
		R->bufs[i].tracked = R->stored[i] && (R->pstate[i] == 2 || R->bufs[i].overlap);
		tracked |= R->bufs[i].tracked;
	}
	R->anyvt = 0;
	for (i = 0; i < k->nvar; i++) {
		R->vtracked[i] = R->vwritten[i] == 1;
		R->anyvt |= R->vtracked[i];
		R->vwritten[i] = 0;
	}
	for (d = 0; d < n; d++) {
		R->vars[id[d]].c.i = 0;
		R->vars[id[d]].fl = 0;
	}
	if (!tracked && !R->anyvt && !R->args->no_batch && (r = ibat_nest(R, s, total)) != 1)
		goto done;
	r = 0;
	for (it = 0; it < total; it++) {
		R->iter = it;
		if (exec_list(R, s->u.par.body)) {
			r = -1;
			break;
		}
		for (d = n - 1; d >= 0 && ++c[d] == s->u.par.ext[d]; d--)
			c[d] = 0, R->vars[id[d]].c.i = 0;
		if (d >= 0)
			R->vars[id[d]].c.i = c[d];
	}
done:
	/* a let variable of an outer scope assigned in the nest: every GPU thread has
	 * its own copy, so after the nest its value is undefined */
	for (i = 0; i < k->nvar; i++) {
		if (R->vtracked[i] && R->vwritten[i])
			R->vars[i].fl |= INTERP_UNDEF;
		R->vtracked[i] = 0;
	}
	for (i = 0; i < k->nbuf; i++)
		R->bufs[i].tracked = 0;
	R->nest = NULL;
	R->anyvt = 0;
	return r;
}

/* ---- statements --------------------------------------------------------------------------- */

static int
cond_undef(Run *R, const IrExpr *c, const char *what)
{
	Buf b;

	buf_init(&b);
	ir_dump_expr(&b, R->k, c);
	irun_fail(R, INTERP_ERROR, c->loc, "the condition of %s is undefined: %s", what, buf_str(&b));
	buf_free(&b);
	return -1;
}

static int
store(Run *R, const IrStmt *s)
{
	BufRt *B = &R->bufs[s->u.store.buf];
	unsigned fl = 0;
	int64_t lin = 0;
	int out = iexp_elemindex(R, B, s->u.store.n, s->u.store.idx, s->loc, &lin, &fl);
	Val v;

	if (out < 0)
		return -1;
	v = iexp_eval(R, s->u.store.value);
	if (R->bad)
		return -1;
	if (out) /* past the edge of a global tensor: dropped */
		return 0;
	v = iexp_conv(v, s->u.store.value->type, B->t);
	v.fl |= fl;
	/* atomics are applied in some order: no nest shadow (points may update one element) */
	if (s->u.store.atomic)
		return iexp_atomic(R, B, lin, v, s->u.store.atomic, s->loc) ? -1 : (R->bad ? -1 : 0);
	if (R->nest && B->tracked && irun_nest_access(R, s->u.store.buf, lin, 1, s->loc))
		return -1;
	if (B->scope == MEM_GLOBAL) {
		if (B->cell && irun_block_race(R, B, lin, s->loc))
			return -1;
		iexp_gstore(R, B, lin, v);
	} else {
		B->v[lin] = v.c;
		B->fl[lin] = (unsigned char)v.fl;
	}
	return R->bad ? -1 : 0;
}

static int
setvar(Run *R, const IrStmt *s)
{
	int id = s->u.let.var->id;
	Val v = iexp_eval(R, s->u.let.value);

	if (R->bad)
		return -1;
	if (s->kind == S_SET && R->anyvt && R->vtracked[id]) {
		if (irun_nest_access(R, R->k->nbuf + id, 0, 1, s->loc))
			return -1;
		R->vwritten[id] = 1;
	}
	/* sema gives the value the variable's type; f16 values stay unrounded */
	if (s->u.let.value->type != s->u.let.var->type)
		v = iexp_conv(v, s->u.let.value->type, s->u.let.var->type);
	R->vars[id] = v;
	return 0;
}

static int
loop(Run *R, const IrStmt *s, const IrVar *var, const IrExpr *lo, const IrExpr *extent)
{
	Val l, n;
	int64_t i, last;

	if (lo) {
		l = iexp_eval(R, lo);
	} else {
		l.c.i = 0;
		l.fl = 0;
	}
	n = iexp_eval(R, extent);
	if (R->bad)
		return -1;
	if ((l.fl | n.fl) & INTERP_UNDEF)
		return irun_fail(R, INTERP_ERROR, s->loc, "the bounds of the loop over '%s' are undefined",
				 var->name);
	if (n.c.i > 0 && __builtin_add_overflow(l.c.i, n.c.i - 1, &last))
		return irun_fail(R, INTERP_ERROR, s->loc, "the loop over '%s' passes 2^63", var->name);
	for (i = 0; i < n.c.i; i++) {
		R->vars[var->id].c.i = l.c.i + i;
		R->vars[var->id].fl = (l.fl | n.fl) & INTERP_FLAGS & ~INTERP_UNDEF;
		if (exec_list(R, s->kind == S_FOR ? s->u.loop.body : s->u.pipe.body))
			return -1;
	}
	return 0;
}

static int
exec1(Run *R, const IrStmt *s)
{
	Val c;

	if (irun_work(R, s->loc, 1))
		return -1;
	R->stmts++;
	switch (s->kind) {
	case S_COPY: return iop_copy(R, s);
	case S_FILL: return iop_fill(R, s);
	case S_GEMM: return iop_gemm(R, s);
	case S_REDUCE: return iop_reduce(R, s);
	case S_PARALLEL:
		if (R->nest)
			return irun_fail(R, INTERP_UNSUPPORTED, s->loc, "parallel nest inside a parallel nest");
		return parallel(R, s);
	case S_STORE: return store(R, s);
	case S_LET:
	case S_SET: return setvar(R, s);
	case S_FOR: return loop(R, s, s->u.loop.var, s->u.loop.lo, s->u.loop.extent);
	case S_PIPELINE: return loop(R, s, s->u.pipe.var, NULL, s->u.pipe.extent);
	case S_IF:
		c = iexp_eval(R, s->u.cond.cond);
		if (R->bad)
			return -1;
		if (c.fl & INTERP_UNDEF)
			return cond_undef(R, s->u.cond.cond, "'if'");
		return exec_list(R, c.c.i ? s->u.cond.then : s->u.cond.els);
	case S_ASSUME: /* checked once, before the blocks */
	case S_ANNOTATE_LAYOUT:
	case S_REQUIRE_LAYOUT:
	case S_RELEASE_LAYOUT:
	case S_DUMP_LAYOUT:
	case S_ASSERT_SAME_LAYOUT:
	case S_REQUIRE_WMMA_LAYOUT:
	case S_BARRIER: return 0;
	default:
		return irun_fail(R, INTERP_UNSUPPORTED, s->loc, "statement kind %d is not interpreted",
				 (int)s->kind);
	}
}

static int
exec_list(Run *R, const IrStmt *s)
{
	for (; s; s = s->next)
		if (exec1(R, s) || R->bad)
			return -1;
	return 0;
}

/* ---- setup ---------------------------------------------------------------------------------- */

/* the values of the sizes and scalar parameters; -1 with an error */
static int
setparams(Run *R)
{
	const IrKernel *k = R->k;
	const InterpArgs *A = R->args;
	int i;

	for (i = 0; i < k->nsize; i++) {
		int64_t v = A->sizes ? A->sizes[i] : -1;

		if (v < 0)
			return irun_fail(R, INTERP_ERROR, k->loc, "size %s = %lld is negative%s", k->sizes[i]->name,
					 (long long)v, A->sizes ? "" : " (no sizes given)");
		R->vars[k->sizes[i]->id].c.i = v;
		R->vars[k->sizes[i]->id].fl = 0;
	}
	for (i = 0; i < k->nparam; i++) {
		const IrParam *p = &k->params[i];
		DType t = p->dtype;
		double v;
		Val x;

		if (p->is_tensor || !p->var)
			continue;
		if (!A->scalars)
			return irun_fail(R, INTERP_ERROR, p->loc, "no value for the scalar parameter '%s'", p->name);
		v = A->scalars[i];
		x.fl = 0;
		if (t == DT_BOOL) {
			x.c.i = v != 0;
		} else if (it_int(t)) {
			Val w;

			if (!(v > -0x1p63 && v < 0x1p63) || v != (double)(int64_t)v)
				return irun_fail(R, INTERP_ERROR, p->loc, "scalar %s = %g is not an integer", p->name, v);
			w = iexp_int(t, (int64_t)v, 0, 0);
			if (w.fl)
				return irun_fail(R, INTERP_ERROR, p->loc, "scalar %s = %g does not fit in %s", p->name,
						 v, dtype_name(t));
			x = w;
		} else {
			x.c.f = t == DT_F64 ? v : num_round(t, v);
		}
		R->vars[p->var->id] = x;
	}
	return 0;
}

static void
paramtext(Buf *b, const Run *R)
{
	const IrKernel *k = R->k;
	int i, n = 0;

	for (i = 0; i < k->nsize; i++)
		buf_printf(b, "%s%s=%lld", n++ ? ", " : "", k->sizes[i]->name,
			   (long long)R->vars[k->sizes[i]->id].c.i);
	for (i = 0; i < k->nparam; i++) {
		const IrParam *p = &k->params[i];
		Val v;

		if (p->is_tensor || !p->var)
			continue;
		v = R->vars[p->var->id];
		if (it_float(p->dtype))
			buf_printf(b, "%s%s=%.17g", n++ ? ", " : "", p->name, v.c.f);
		else
			buf_printf(b, "%s%s=%lld", n++ ? ", " : "", p->name, (long long)v.c.i);
	}
	if (!n)
		buf_puts(b, "these arguments");
}

static int
assumes(Run *R)
{
	const IrKernel *k = R->k;
	int i;

	for (i = 0; i < k->nassume; i++) {
		Val c = iexp_eval(R, k->assumes[i]);
		Buf b;

		if (R->bad)
			return -1;
		if (!(c.fl & INTERP_UNDEF) && c.c.i)
			continue;
		buf_init(&b);
		buf_puts(&b, "assume(");
		ir_dump_expr(&b, k, k->assumes[i]);
		buf_puts(&b, ") does not hold for ");
		paramtext(&b, R);
		irun_fail(R, INTERP_ERROR, k->assumes[i]->loc, "%s", buf_str(&b));
		buf_free(&b);
		return -1;
	}
	return 0;
}

static int
grid(Run *R)
{
	const IrKernel *k = R->k;
	int i;

	for (i = 0; i < 3; i++) {
		Val g;

		R->grid[i] = 1;
		if (i >= k->ngrid)
			continue;
		g = iexp_eval(R, k->grid[i]);
		if (R->bad)
			return -1;
		if (g.fl & INTERP_UNDEF)
			return irun_fail(R, INTERP_ERROR, k->grid[i]->loc,
					 "grid extent %d is undefined (integer overflow) for these arguments", i);
		R->grid[i] = g.c.i;
	}
	return 0;
}

/* a strided tensor's strides (B->dim set): B->stride, and in *n the elements its storage
 * spans (1 + the offset of its last element; 0 when a dim is 0) */
static int
stridedview(Run *R, const IrBuffer *b, BufRt *B, int64_t *n)
{
	int64_t span = 0, t;
	int d, empty = 0;

	for (d = 0; d < b->ndim; d++) {
		const IrDim *s = &b->strides[d];

		B->stride[d] = s->sym ? R->vars[s->sym->id].c.i : s->c;
		if (B->stride[d] <= 0)
			return irun_fail(R, INTERP_ERROR, b->loc, "stride %d of '%s' (%s) is %lld; strides must be positive",
					 d, b->name, s->sym ? s->sym->name : "a constant", (long long)B->stride[d]);
		empty |= B->dim[d] == 0;
		if (B->dim[d] > 0 && (__builtin_mul_overflow(B->dim[d] - 1, B->stride[d], &t) ||
				      __builtin_add_overflow(span, t, &span) || span == INT64_MAX))
			return irun_fail(R, INTERP_ERROR, b->loc, "'%s' spans more than 2^63 elements", b->name);
	}
	*n = empty ? 0 : span + 1;
	/* distinct coordinates give distinct elements when, dims by increasing stride, each
	 * stride passes the offset the smaller ones reach; else the view may overlap */
	{
		int done[IR_MAXDIM] = {0}, i;
		int64_t reach = 0;

		for (i = 0; i < b->ndim; i++) {
			int best = -1;

			for (d = 0; d < b->ndim; d++)
				if (!done[d] && B->dim[d] > 1 && (best < 0 || B->stride[d] < B->stride[best]))
					best = d;
			if (best < 0)
				break;
			done[best] = 1;
			if (B->stride[best] <= reach)
				B->overlap = 1;
			reach += (B->dim[best] - 1) * B->stride[best]; /* <= span: no overflow */
		}
	}
	return 0;
}

static int
setbuffers(Run *R)
{
	const IrKernel *k = R->k;
	int i, d;

	for (i = 0; i < k->nbuf; i++) {
		const IrBuffer *b = &k->bufs[i];
		BufRt *B = &R->bufs[i];
		int64_t n = 1;

		B->b = b;
		B->scope = b->scope;
		B->t = b->dtype;
		B->ndim = b->ndim;
		for (d = 0; d < b->ndim; d++)
			B->dim[d] = b->dims[d].sym ? R->vars[b->dims[d].sym->id].c.i : b->dims[d].c;
		for (d = b->ndim - 1; d >= 0; d--) {
			B->stride[d] = n;
			if (__builtin_mul_overflow(n, B->dim[d], &n))
				return irun_fail(R, INTERP_ERROR, b->loc, "'%s' has more than 2^63 elements", b->name);
		}
		if (b->strides && stridedview(R, b, B, &n))
			return -1;
		B->n = n;
		if (b->scope == MEM_GLOBAL) {
			InterpTensor *t;

			if (b->param < 0 || !R->args->tensors)
				return irun_fail(R, INTERP_ERROR, b->loc, "no tensor for '%s'", b->name);
			t = &R->args->tensors[b->param];
			if (t->n != n)
				return irun_fail(R, INTERP_ERROR, b->loc, "tensor '%s' has %lld elements, its %s %lld",
						 b->name, (long long)t->n, b->strides ? "shape and strides need" : "shape needs",
						 (long long)n);
			if (n > 0 && !t->data)
				return irun_fail(R, INTERP_ERROR, b->loc, "tensor '%s' has no data", b->name);
			B->tensor = t;
			B->data = t->data;
			B->esz = dtype_bytes(b->dtype);
		} else {
			if (n > (int64_t)1 << 31)
				return irun_fail(R, INTERP_ERROR, b->loc, "%s buffer '%s' has more than 2^31 elements",
						 memscope_name(b->scope), b->name);
			B->v = arena_alloc(&R->a, sizeof *B->v * (size_t)n);
			B->fl = arena_alloc(&R->a, (size_t)n);
			if (!B->v || !B->fl)
				return irun_fail(R, INTERP_NOMEM, b->loc, "out of memory for '%s'", b->name);
		}
	}
	return 0;
}

static int
start(Run *R, const IrKernel *k, const InterpArgs *args, Err *e)
{
	memset(R, 0, sizeof *R);
	R->k = k;
	R->args = args;
	R->e = e;
	arena_init(&R->a);
	R->maxwork = args->max_work > 0 ? args->max_work : INTERP_MAX_WORK;
	R->vars = arena_alloc(&R->a, sizeof *R->vars * (size_t)(k->nvar + 1));
	R->bufs = arena_alloc(&R->a, sizeof *R->bufs * (size_t)(k->nbuf + 1));
	R->vtracked = arena_alloc(&R->a, (size_t)k->nvar + 1);
	R->vwritten = arena_alloc(&R->a, (size_t)k->nvar + 1);
	R->stored = arena_alloc(&R->a, (size_t)k->nbuf + 1);
	R->pstate = arena_alloc(&R->a, (size_t)k->nbuf + 1);
	R->pat = arena_alloc(&R->a, sizeof *R->pat * (size_t)(k->nbuf + 1) * IR_MAXDIM);
	if (!R->vars || !R->bufs || !R->vtracked || !R->vwritten || !R->stored || !R->pstate || !R->pat)
		return irun_fail(R, INTERP_NOMEM, k->loc, "out of memory");
	return setparams(R);
}

int
interp_grid(const IrKernel *k, const InterpArgs *args, int64_t g[3], Err *e)
{
	Run R;
	int r;

	err_clear(e);
	r = start(&R, k, args, e) || grid(&R) ? -1 : 0;
	if (!r)
		memcpy(g, R.grid, sizeof R.grid);
	arena_free(&R.a);
	return r;
}

InterpStatus
interp_kernel(const IrKernel *k, const InterpArgs *args, InterpStats *stats, Err *e)
{
	Run R;
	int64_t bz, by, bx, i;
	int b;

	err_clear(e);
	if (stats)
		memset(stats, 0, sizeof *stats);
	if (start(&R, k, args, e) || assumes(&R) || grid(&R) || setbuffers(&R))
		goto out;
	R.nblk = 0;
	if (R.grid[0] > 0 && R.grid[1] > 0 && R.grid[2] > 0) {
		if (__builtin_mul_overflow(R.grid[0], R.grid[1], &R.nblk) ||
		    __builtin_mul_overflow(R.nblk, R.grid[2], &R.nblk) || R.nblk > BLOCK_MAX) {
			irun_fail(&R, INTERP_ERROR, k->loc,
				  "the grid (%lld, %lld, %lld) has more blocks than the interpreter runs (%d)",
				  (long long)R.grid[0], (long long)R.grid[1], (long long)R.grid[2], BLOCK_MAX);
			goto out;
		}
	}
	for (bz = 0; R.nblk && bz < R.grid[2]; bz++)
		for (by = 0; by < R.grid[1]; by++)
			for (bx = 0; bx < R.grid[0]; bx++) {
				R.blk[0] = bx, R.blk[1] = by, R.blk[2] = bz;
				R.blkid = (bz * R.grid[1] + by) * R.grid[0] + bx;
				for (i = 0; i < k->nvar; i++) {
					const IrVar *v = k->vars[i];

					if (v->kind == VAR_BLOCK && v->name[0] == 'b' && v->name[1] >= 'x' &&
					    v->name[1] <= 'z') {
						R.vars[v->id].c.i = R.blk[v->name[1] - 'x'];
						R.vars[v->id].fl = 0;
					}
				}
				/* shared and local memory start undefined in every block */
				for (b = 0; b < k->nbuf; b++)
					if (R.bufs[b].scope != MEM_GLOBAL)
						memset(R.bufs[b].fl, INTERP_UNDEF, (size_t)R.bufs[b].n);
				if (irun_work(&R, k->loc, 1) || exec_list(&R, k->body))
					goto out;
				if (stats)
					stats->blocks++;
			}
	/* the flags of the global elements */
	for (b = 0; b < k->nbuf; b++) {
		BufRt *B = &R.bufs[b];

		if (B->scope != MEM_GLOBAL || !B->tensor->flags)
			continue;
		for (i = 0; i < B->n; i++)
			B->tensor->flags[i] = B->cell ? (unsigned char)(B->cell[i] & INTERP_FLAGS) : 0;
	}
out:
	if (stats)
		stats->statements = R.stmts, stats->work = R.work;
	arena_free(&R.a);
	return R.bad ? (InterpStatus)R.bad : INTERP_OK;
}
