/*
 * interp_batch.c: a parallel nest whose iterations cannot interact (no buffer
 * it stores through is accessed other than by one private index pattern, no
 * let variable of an outer scope is assigned; interp.c decides) runs a batch
 * of consecutive iterations at a time: each statement and each expression node
 * is evaluated for all the batch's active iterations ("lanes") before the
 * next, with the same per-value operations as the scalar evaluator
 * (interp_expr.c). Since the iterations are independent, the results are those
 * of the row-major order; only which error is reported first may differ when
 * a nest has several. Conditions (if, ?:, select, &&, ||) narrow the active
 * lanes, so an unchosen side is never evaluated.
 */
#include <string.h>

#include "interp_int.h"

enum { LANES = 256 };

typedef struct Lanes {
	Cell c[LANES];
	unsigned char fl[LANES];
} Lanes;

/* the element positions of the active lanes: lin[l], the index flags fl[l], out[l] set for
 * a lane outside a global tensor */
typedef struct Pos {
	int64_t lin[LANES];
	unsigned char fl[LANES], out[LANES];
} Pos;

/* a temporary: lane values, a list of active lanes, or positions */
typedef union Slot {
	Lanes l;
	uint16_t act[LANES];
	Pos p;
} Slot;

struct Bat {
	Lanes **vl;     /* per var: its lanes (the nest's vars, the body's lets), or NULL */
	Lanes **own;    /* per var: lanes allocated for it (kept between nests) */
	Slot **stack;
	int sp, cap;
	uint16_t iota[LANES];
};

static Slot *
push(Run *R)
{
	struct Bat *B = R->bat;

	if (B->sp == B->cap) {
		int cap = B->cap ? 2 * B->cap : 64;
		Slot **ns = arena_alloc(&R->a, sizeof *ns * (size_t)cap);

		if (!ns) {
			irun_fail(R, INTERP_NOMEM, R->k->loc, "out of memory");
			return NULL;
		}
		if (B->cap)
			memcpy(ns, B->stack, sizeof *ns * (size_t)B->cap);
		B->stack = ns;
		B->cap = cap;
	}
	if (!B->stack[B->sp] && !(B->stack[B->sp] = arena_alloc(&R->a, sizeof(Slot)))) {
		irun_fail(R, INTERP_NOMEM, R->k->loc, "out of memory");
		return NULL;
	}
	return B->stack[B->sp++];
}

static void
pop(Run *R, int n)
{
	R->bat->sp -= n;
}

static Val
lane(const Lanes *L, int l)
{
	Val v;

	v.c = L->c[l];
	v.fl = L->fl[l];
	return v;
}

static void
setlane(Lanes *L, int l, Val v)
{
	L->c[l] = v.c;
	L->fl[l] = (unsigned char)v.fl;
}

static int bev(Run *R, const IrExpr *x, const uint16_t *act, int na, Lanes *out);

/* the lanes of an index expression: a var's lanes, a scalar, or evaluated into tmp */
typedef struct Idx {
	const Lanes *L;
	Val c;
} Idx;

static int
bindex(Run *R, const IrExpr *x, const uint16_t *act, int na, Idx *ix, int *ntmp)
{
	if (x->kind == IE_VAR && R->bat->vl[x->u.var->id]) {
		ix->L = R->bat->vl[x->u.var->id];
		return 0;
	}
	ix->L = NULL;
	if (x->kind == IE_VAR) {
		ix->c = R->vars[x->u.var->id];
		return 0;
	}
	if (x->kind == IE_INT) {
		ix->c = iexp_const(x);
		return 0;
	}
	{
		Slot *t = push(R);

		if (!t)
			return -1;
		++*ntmp;
		ix->L = &t->l;
		return bev(R, x, act, na, &t->l);
	}
}

static int
badindex(Run *R, const IrExpr *x)
{
	Buf b;

	buf_init(&b);
	ir_dump_expr(&b, R->k, x);
	irun_fail(R, INTERP_ERROR, x->loc, "the index '%s' is undefined", buf_str(&b));
	buf_free(&b);
	return -1;
}

static int
range(Run *R, const BufRt *B, int d, int64_t x, Loc loc)
{
	return irun_fail(R, INTERP_ERROR, loc, "index %lld out of range for dimension %d of '%s' (size %lld)",
			 (long long)x, d, B->b->name, (long long)B->dim[d]);
}

/* the element positions of the active lanes into P: -1 after an error (an index undefined,
 * or outside a shared or local buffer) */
static int
bpos(Run *R, const BufRt *B, int n, IrExpr *const *idx, const Idx *ix, const uint16_t *act, int na, Loc loc,
     Pos *P)
{
	int64_t base = 0;
	unsigned cfl = 0;
	int d, i, glob = B->scope == MEM_GLOBAL, cout = 0;

	/* the constant indices first */
	for (d = 0; d < n; d++) {
		int64_t x;

		if (ix[d].L)
			continue;
		x = ix[d].c.c.i;
		if (ix[d].c.fl & INTERP_UNDEF)
			return badindex(R, idx[d]);
		cfl |= ix[d].c.fl;
		if ((uint64_t)x >= (uint64_t)B->dim[d]) {
			if (!glob)
				return range(R, B, d, x, loc);
			cout = 1;
			continue;
		}
		base += x * B->stride[d];
	}
	for (i = 0; i < na; i++) {
		P->lin[act[i]] = base;
		P->fl[act[i]] = (unsigned char)cfl;
		P->out[act[i]] = (unsigned char)cout;
	}
	for (d = 0; d < n; d++) {
		const Lanes *L = ix[d].L;
		int64_t st = B->stride[d], dim = B->dim[d];

		if (!L)
			continue;
		for (i = 0; i < na; i++) {
			int l = act[i];
			int64_t x = L->c[l].i;

			if (L->fl[l] & INTERP_UNDEF)
				return badindex(R, idx[d]);
			P->fl[l] |= L->fl[l];
			if ((uint64_t)x >= (uint64_t)dim) {
				if (!glob)
					return range(R, B, d, x, loc);
				P->out[l] = 1;
				continue;
			}
			P->lin[l] += x * st;
		}
	}
	return 0;
}

static int
bload(Run *R, const IrExpr *x, const uint16_t *act, int na, Lanes *out)
{
	BufRt *B = &R->bufs[x->u.load.buf];
	Idx ix[IR_MAXDIM];
	int d, i, ntmp = 0, r = 0;
	Slot *ps;
	Pos *P;

	for (d = 0; d < x->u.load.n && !r; d++)
		r = bindex(R, x->u.load.idx[d], act, na, &ix[d], &ntmp);
	if (!r && (ps = push(R)) != NULL) {
		ntmp++;
		P = &ps->p;
		r = bpos(R, B, x->u.load.n, x->u.load.idx, ix, act, na, x->loc, P);
	} else {
		r = -1;
	}
	if (r) {
		pop(R, ntmp);
		return -1;
	}
	if (B->scope != MEM_GLOBAL) {
		for (i = 0; i < na; i++) {
			int l = act[i];

			out->c[l] = B->v[P->lin[l]];
			out->fl[l] = B->fl[P->lin[l]] | P->fl[l];
		}
	} else {
		for (i = 0; i < na && !R->bad; i++) {
			int l = act[i];
			Val v;

			if (P->out[l]) {
				v = iexp_undef(x->type, 0);
				v.fl = 0;
			} else {
				v = iexp_elem(R, B, x->u.load.buf, P->lin[l], x->loc);
			}
			out->c[l] = v.c;
			out->fl[l] = (unsigned char)(v.fl | P->fl[l]);
		}
	}
	pop(R, ntmp);
	return R->bad ? -1 : 0;
}

static int
bev(Run *R, const IrExpr *x, const uint16_t *act, int na, Lanes *out)
{
	Slot *t, *ls;
	int i, m, k;
	Val v;

	switch (x->kind) {
	case IE_INT:
	case IE_BOOL:
	case IE_FLOAT:
		v = iexp_const(x);
		for (i = 0; i < na; i++)
			setlane(out, act[i], v);
		return 0;
	case IE_VAR:
		if (R->bat->vl[x->u.var->id]) {
			const Lanes *L = R->bat->vl[x->u.var->id];

			for (i = 0; i < na; i++) {
				out->c[act[i]] = L->c[act[i]];
				out->fl[act[i]] = L->fl[act[i]];
			}
		} else {
			v = R->vars[x->u.var->id];
			for (i = 0; i < na; i++)
				setlane(out, act[i], v);
		}
		return 0;
	case IE_LOAD: return bload(R, x, act, na, out);
	case IE_UNARY:
		if (bev(R, x->u.un.a, act, na, out))
			return -1;
		for (i = 0; i < na; i++)
			setlane(out, act[i], iexp_unop(x, lane(out, act[i])));
		return 0;
	case IE_CAST:
		if (bev(R, x->u.cast.a, act, na, out))
			return -1;
		for (i = 0; i < na; i++)
			setlane(out, act[i], iexp_conv(lane(out, act[i]), x->u.cast.a->type, x->type));
		return 0;
	case IE_CALL:
		if (bev(R, x->u.call.args[0], act, na, out))
			return -1;
		if (x->u.call.n < 2) {
			for (i = 0; i < na; i++) {
				v = lane(out, act[i]);
				setlane(out, act[i], iexp_callop(R, x, v, v));
			}
			return R->bad ? -1 : 0;
		}
		if (!(t = push(R)) || bev(R, x->u.call.args[1], act, na, &t->l))
			return -1;
		for (i = 0; i < na; i++)
			setlane(out, act[i], iexp_callop(R, x, lane(out, act[i]), lane(&t->l, act[i])));
		pop(R, 1);
		return R->bad ? -1 : 0;
	case IE_BINARY:
		if (bev(R, x->u.bin.a, act, na, out))
			return -1;
		if (x->u.bin.op == BIN_LAND || x->u.bin.op == BIN_LOR) {
			int land = x->u.bin.op == BIN_LAND;

			if (!(ls = push(R)))
				return -1;
			for (i = m = 0; i < na; i++) {
				int l = act[i];

				if (out->fl[l] & INTERP_UNDEF)
					setlane(out, l, iexp_undef(DT_BOOL, out->fl[l]));
				else if (land ? out->c[l].i : !out->c[l].i)
					ls->act[m++] = (uint16_t)l; /* the right side decides */
			}
			if (m) {
				if (!(t = push(R)) || bev(R, x->u.bin.b, ls->act, m, &t->l))
					return -1;
				for (i = 0; i < m; i++) {
					int l = ls->act[i];

					out->c[l] = t->l.c[l];
					out->fl[l] |= t->l.fl[l];
				}
				pop(R, 1);
			}
			pop(R, 1);
			return 0;
		}
		if (!(t = push(R)) || bev(R, x->u.bin.b, act, na, &t->l))
			return -1;
		for (i = 0; i < na; i++)
			setlane(out, act[i], iexp_binop(R, x, lane(out, act[i]), lane(&t->l, act[i])));
		pop(R, 1);
		return R->bad ? -1 : 0;
	case IE_SELECT:
		if (!(t = push(R)) || bev(R, x->u.sel.c, act, na, &t->l) || !(ls = push(R)))
			return -1;
		/* true lanes from the front of ls, false lanes from the back */
		for (i = m = 0, k = LANES; i < na; i++) {
			int l = act[i];

			if (t->l.fl[l] & INTERP_UNDEF)
				setlane(out, l, iexp_undef(x->type, t->l.fl[l]));
			else if (t->l.c[l].i)
				ls->act[m++] = (uint16_t)l;
			else
				ls->act[--k] = (uint16_t)l;
		}
		/* the false lanes back in increasing order */
		for (i = k; i < k + (LANES - k) / 2; i++) {
			uint16_t s = ls->act[i];

			ls->act[i] = ls->act[LANES - 1 - (i - k)];
			ls->act[LANES - 1 - (i - k)] = s;
		}
		if ((m && bev(R, x->u.sel.a, ls->act, m, out)) ||
		    (k < LANES && bev(R, x->u.sel.b, ls->act + k, LANES - k, out)))
			return -1;
		pop(R, 2);
		return 0;
	}
	return 0;
}

/* ---- statements ------------------------------------------------------------------------- */

static int bexec(Run *R, const IrStmt *s, const uint16_t *act, int na);

static int
bstore(Run *R, const IrStmt *s, const uint16_t *act, int na)
{
	BufRt *B = &R->bufs[s->u.store.buf];
	DType vt = s->u.store.value->type;
	Idx ix[IR_MAXDIM];
	int d, i, ntmp = 0, r = 0;
	Slot *t, *ps;
	Pos *P;

	for (d = 0; d < s->u.store.n && !r; d++)
		r = bindex(R, s->u.store.idx[d], act, na, &ix[d], &ntmp);
	if (!r && (t = push(R)) != NULL && (ntmp++, (ps = push(R)) != NULL)) {
		ntmp++;
		P = &ps->p;
		r = bpos(R, B, s->u.store.n, s->u.store.idx, ix, act, na, s->loc, P) ||
		    bev(R, s->u.store.value, act, na, &t->l);
	} else {
		r = -1;
	}
	if (r) {
		pop(R, ntmp);
		return -1;
	}
	for (i = 0; i < na && !R->bad; i++) {
		int l = act[i];
		Val v;

		if (P->out[l]) /* past the edge of a global tensor: dropped */
			continue;
		v = iexp_conv(lane(&t->l, l), vt, B->t);
		v.fl |= P->fl[l];
		if (B->scope == MEM_GLOBAL) {
			if (!B->cell || !irun_block_race(R, B, P->lin[l], s->loc))
				iexp_gstore(R, B, P->lin[l], v);
		} else {
			B->v[P->lin[l]] = v.c;
			B->fl[P->lin[l]] = (unsigned char)v.fl;
		}
	}
	pop(R, ntmp);
	return R->bad ? -1 : 0;
}

static int
bif(Run *R, const IrStmt *s, const uint16_t *act, int na)
{
	Slot *t = push(R), *ls;
	int i, m, k, r;

	if (!t || bev(R, s->u.cond.cond, act, na, &t->l) || !(ls = push(R)))
		return -1;
	for (i = m = 0, k = LANES; i < na; i++) {
		int l = act[i];

		if (t->l.fl[l] & INTERP_UNDEF) {
			Buf b;

			buf_init(&b);
			ir_dump_expr(&b, R->k, s->u.cond.cond);
			irun_fail(R, INTERP_ERROR, s->u.cond.cond->loc, "the condition of 'if' is undefined: %s",
				  buf_str(&b));
			buf_free(&b);
			return -1;
		}
		if (t->l.c[l].i)
			ls->act[m++] = (uint16_t)l;
		else
			ls->act[--k] = (uint16_t)l;
	}
	for (i = k; i < k + (LANES - k) / 2; i++) {
		uint16_t x = ls->act[i];

		ls->act[i] = ls->act[LANES - 1 - (i - k)];
		ls->act[LANES - 1 - (i - k)] = x;
	}
	r = (m && bexec(R, s->u.cond.then, ls->act, m)) ||
	    (k < LANES && bexec(R, s->u.cond.els, ls->act + k, LANES - k));
	pop(R, 2);
	return r ? -1 : 0;
}

static int
bexec(Run *R, const IrStmt *s, const uint16_t *act, int na)
{
	int i, id;
	Slot *t;

	for (; s; s = s->next) {
		if (irun_work(R, s->loc, na))
			return -1;
		R->stmts += na;
		switch (s->kind) {
		case S_LET:
			if (bev(R, s->u.let.value, act, na, R->bat->vl[s->u.let.var->id]))
				return -1;
			break;
		case S_SET:
			id = s->u.let.var->id;
			if (!(t = push(R)) || bev(R, s->u.let.value, act, na, &t->l))
				return -1;
			for (i = 0; i < na; i++) {
				R->bat->vl[id]->c[act[i]] = t->l.c[act[i]];
				R->bat->vl[id]->fl[act[i]] = t->l.fl[act[i]];
			}
			pop(R, 1);
			break;
		case S_STORE:
			if (bstore(R, s, act, na))
				return -1;
			break;
		case S_IF:
			if (bif(R, s, act, na))
				return -1;
			break;
		default:
			return irun_fail(R, INTERP_UNSUPPORTED, s->loc, "statement not batched");
		}
		if (R->bad)
			return -1;
	}
	return 0;
}

/* can the body run batched? only lets, assignments of its own lets, stores and ifs; its
 * lets get lanes (vl[id] set to a non-NULL marker in lets) */
static int
batchable(Run *R, const IrStmt *s, unsigned char *lets)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_LET: lets[s->u.let.var->id] = 1; break;
		case S_SET:
			if (!lets[s->u.let.var->id])
				return 0;
			break;
		case S_STORE:
			if (s->u.store.atomic)
				return 0;   /* atomics run point by point */
			break;
		case S_IF:
			if (!batchable(R, s->u.cond.then, lets) || !batchable(R, s->u.cond.els, lets))
				return 0;
			break;
		default: return 0;
		}
	}
	return 1;
}

static Lanes *
ownlanes(Run *R, int id)
{
	struct Bat *B = R->bat;

	if (!B->own[id] && !(B->own[id] = arena_alloc(&R->a, sizeof(Lanes))))
		irun_fail(R, INTERP_NOMEM, R->k->loc, "out of memory");
	return B->own[id];
}

int
ibat_nest(Run *R, const IrStmt *s, int64_t total)
{
	const IrKernel *k = R->k;
	int n = s->u.par.n, d, i, na, r = 0;
	int64_t c[IR_MAXDIM] = {0}, it;
	unsigned char *lets = R->vwritten; /* free during the nest (interp.c) */
	struct Bat *B = R->bat;
	Lanes *vlp[IR_MAXDIM];

	if (!B) {
		B = R->bat = arena_alloc(&R->a, sizeof *B);
		if (!B || !(B->vl = arena_alloc(&R->a, sizeof *B->vl * (size_t)(k->nvar + 1))) ||
		    !(B->own = arena_alloc(&R->a, sizeof *B->own * (size_t)(k->nvar + 1))))
			return irun_fail(R, INTERP_NOMEM, s->loc, "out of memory");
		for (i = 0; i < LANES; i++)
			B->iota[i] = (uint16_t)i;
	}
	memset(lets, 0, (size_t)k->nvar);
	if (!batchable(R, s->u.par.body, lets))
		return 1;
	for (i = 0; i < k->nvar; i++)
		if (lets[i] && !(B->vl[i] = ownlanes(R, i)))
			r = -1;
	for (d = 0; d < n && !r; d++)
		if (!(vlp[d] = B->vl[s->u.par.vars[d]->id] = ownlanes(R, s->u.par.vars[d]->id)))
			r = -1;
	for (it = 0; it < total && !r; it += na) {
		na = total - it < LANES ? (int)(total - it) : LANES;
		for (i = 0; i < na; i++) {
			for (d = 0; d < n; d++) {
				vlp[d]->c[i].i = c[d];
				vlp[d]->fl[i] = 0;
			}
			for (d = n - 1; d >= 0 && ++c[d] == s->u.par.ext[d]; d--)
				c[d] = 0;
		}
		R->iter = it;
		if (bexec(R, s->u.par.body, B->iota, na))
			r = -1;
	}
	for (i = 0; i < k->nvar; i++)
		B->vl[i] = NULL;
	memset(lets, 0, (size_t)k->nvar);
	B->sp = 0;
	return r;
}
