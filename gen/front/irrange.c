/*
 * irrange.c: the integer ranges of a kernel's index arithmetic (issue 19).
 * Loop variables have known ranges (parallel and constant serial loops),
 * and so have the block indices of a constant grid;
 * every integer +, -, * and constant << over known ranges is checked:
 * a result past 64 bits is an error at the operator, and so is one past
 * 32 bits where the generated code computes it in C int (its operands are
 * loop variables and constants that fit in int, as the lowering prints them).
 */
#include <stdint.h>
#include <string.h>

#include "sema.h"

typedef struct {
	Diags *d;
	const IrKernel *k;
	int64_t *lo, *hi;
	char *known;
	int bad;
} Rng;

typedef struct {
	int known;   /* lo, hi hold the exact interval bounds */
	int w32;     /* computed in 32-bit C int by the generated code */
	int64_t lo, hi;
} Iv;

static int
fits32(int64_t lo, int64_t hi)
{
	return lo >= INT32_MIN && hi <= INT32_MAX;
}

static Iv expr(Rng *R, const IrExpr *e);

static Iv
unknown(void)
{
	Iv r = {0, 0, 0, 0};
	return r;
}

static Iv
binary(Rng *R, const IrExpr *e)
{
	Iv a = expr(R, e->u.bin.a), b = expr(R, e->u.bin.b), r = unknown();
	int ovf = 0;

	if (!dtype_is_int(e->type) || !a.known || !b.known)
		return r;
	switch (e->u.bin.op) {
	case BIN_ADD:
		ovf = ck_add(a.lo, b.lo, &r.lo) || ck_add(a.hi, b.hi, &r.hi);
		break;
	case BIN_SUB:
		ovf = __builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi);
		break;
	case BIN_MUL:
		ovf = ck_interval_mul(a.lo, a.hi, b.lo, b.hi, &r.lo, &r.hi);
		break;
	case BIN_SHL:
		if (b.lo != b.hi || b.lo < 0 || b.lo > 62)
			return r;
		ovf = ck_interval_mul(a.lo, a.hi, (int64_t)1 << b.lo, (int64_t)1 << b.lo, &r.lo, &r.hi);
		break;
	default:
		return r;
	}
	if (ovf) {
		diag(R->d, e->loc, "integer overflow: '%s' with operands in [%lld, %lld] and [%lld, %lld] "
		     "does not fit in 64 bits", binop_name(e->u.bin.op), (long long)a.lo, (long long)a.hi,
		     (long long)b.lo, (long long)b.hi);
		R->bad = 1;
		return r;
	}
	r.known = 1;
	r.w32 = a.w32 && b.w32;
	if (r.w32 && !fits32(r.lo, r.hi)) {
		diag(R->d, e->loc, "integer overflow: '%s' with operands in [%lld, %lld] and [%lld, %lld] "
		     "reaches [%lld, %lld], past the 32-bit int the generated code computes it in",
		     binop_name(e->u.bin.op), (long long)a.lo, (long long)a.hi, (long long)b.lo,
		     (long long)b.hi, (long long)r.lo, (long long)r.hi);
		R->bad = 1;
		r.known = 0;
	}
	return r;
}

static Iv
expr(Rng *R, const IrExpr *e)
{
	Iv r = unknown();
	int i;

	if (!e)
		return r;
	switch (e->kind) {
	case IE_INT:
		r.known = 1;
		r.lo = r.hi = e->u.i;
		r.w32 = fits32(e->u.i, e->u.i);
		return r;
	case IE_VAR:
		if (e->u.var->id >= 0 && e->u.var->id < R->k->nvar && R->known[e->u.var->id]) {
			r.known = 1;
			r.lo = R->lo[e->u.var->id];
			r.hi = R->hi[e->u.var->id];
			r.w32 = e->u.var->kind == VAR_LOOP || e->u.var->kind == VAR_BLOCK;
		}
		return r;
	case IE_BINARY:
		return binary(R, e);
	case IE_CAST:
		r = expr(R, e->u.cast.a);
		if (!dtype_is_int(e->type))
			return unknown();
		if (e->type == DT_INT)
			r.w32 = 0;
		return r;
	case IE_LOAD:
		for (i = 0; i < e->u.load.n; i++)
			expr(R, e->u.load.idx[i]);
		return r;
	case IE_UNARY:
		expr(R, e->u.un.a);
		return r;
	case IE_SELECT:
		expr(R, e->u.sel.c);
		expr(R, e->u.sel.a);
		expr(R, e->u.sel.b);
		return r;
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			expr(R, e->u.call.args[i]);
		return r;
	default:
		return r;
	}
}

static void
region(Rng *R, const Region *g)
{
	int i;

	for (i = 0; g->off && i < g->ndim; i++)
		expr(R, g->off[i]);
}

static void
setvar(Rng *R, const IrVar *v, int64_t lo, int64_t hi)
{
	if (v && v->id >= 0 && v->id < R->k->nvar && lo <= hi) {
		R->known[v->id] = 1;
		R->lo[v->id] = lo;
		R->hi[v->id] = hi;
	}
}

static void
stmts(Rng *R, const IrStmt *s)
{
	int64_t lo, n, hi;
	int i;

	for (; s; s = s->next) {
		switch (s->kind) {
		case S_COPY:
			region(R, &s->u.copy.src);
			region(R, &s->u.copy.dst);
			break;
		case S_GEMM:
			region(R, &s->u.gemm.a);
			region(R, &s->u.gemm.b);
			region(R, &s->u.gemm.c);
			break;
		case S_FILL:
			region(R, &s->u.fill.dst);
			expr(R, s->u.fill.value);
			break;
		case S_PARALLEL:
			for (i = 0; i < s->u.par.n; i++)
				setvar(R, s->u.par.vars[i], 0, s->u.par.ext[i] - 1);
			stmts(R, s->u.par.body);
			break;
		case S_STORE:
			for (i = 0; i < s->u.store.n; i++)
				expr(R, s->u.store.idx[i]);
			expr(R, s->u.store.value);
			break;
		case S_LET:
		case S_SET:
			expr(R, s->u.let.value);
			break;
		case S_FOR:
			expr(R, s->u.loop.lo);
			expr(R, s->u.loop.extent);
			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n) && n > 0 &&
			    !ck_add(lo, n - 1, &hi))
				setvar(R, s->u.loop.var, lo, hi);
			/* the generated loop variable is a C int counting up to lo + n */
			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n) && n > 0 &&
			    (lo < INT32_MIN || ck_add(lo, n, &hi) || hi > INT32_MAX)) {
				diag(R->d, s->loc, "range(...): the loop runs its variable from %lld to %lld, "
				     "outside what the generated code's loop variables (C int) hold", (long long)lo,
				     (long long)(ck_add(lo, n, &hi) ? INT64_MAX : hi));
				R->bad = 1;
			}
			stmts(R, s->u.loop.body);
			break;
		case S_PIPELINE:
			expr(R, s->u.pipe.extent);
			if (ir_is_const(s->u.pipe.extent, &n) && n > 0)
				setvar(R, s->u.pipe.var, 0, n - 1);
			if (ir_is_const(s->u.pipe.extent, &n) && n > INT32_MAX) {
				diag(R->d, s->loc, "pipeline(%lld): the loop runs its variable past 2^31 - 1, "
				     "what the generated code's loop variables (C int) hold", (long long)n);
				R->bad = 1;
			}
			stmts(R, s->u.pipe.body);
			break;
		case S_IF:
			expr(R, s->u.cond.cond);
			stmts(R, s->u.cond.then);
			stmts(R, s->u.cond.els);
			break;
		case S_ASSUME:
			expr(R, s->u.assume.cond);
			break;
		default:
			break;
		}
	}
}

int
sema_check_ranges(Arena *a, Diags *d, const IrKernel *k)
{
	Rng R;
	int64_t n;
	int i;

	memset(&R, 0, sizeof R);
	R.d = d;
	R.k = k;
	R.lo = anewn(a, int64_t, k->nvar + 1);
	R.hi = anewn(a, int64_t, k->nvar + 1);
	R.known = anewn(a, char, k->nvar + 1);
	if (!R.lo || !R.hi || !R.known)
		return -1;
	/* bx, by, bz (emitted as (int)blockIdx.x ...) of a constant grid */
	for (i = 0; i < k->nvar; i++) {
		const IrVar *v = k->vars[i];
		int g;

		if (!v || v->kind != VAR_BLOCK || !v->name || v->name[0] != 'b')
			continue;
		g = v->name[1] - 'x';
		if (g >= 0 && g < k->ngrid && ir_is_const(k->grid[g], &n) && n > 0)
			setvar(&R, v, 0, n - 1);
	}
	stmts(&R, k->body);
	return R.bad ? -1 : 0;
}
