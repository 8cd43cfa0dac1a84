/*
 * infer_rules.c: the op rules of layout inference. Parallel nests take the
 * loop layout from a fragment they write or read, or the planned partition
 * over threads and vector width; COPY and FILL are nests over their region;
 * gemm gives MMA fragments and operand swizzles; reduce the reducer layout
 * with replication; annotations pin layouts. Every containment and
 * injectivity question goes to the layout core's exact enumeration.
 */
#include <stdlib.h>
#include <string.h>

#include "dumplayout.h"
#include "gemm_plan.h"
#include "infer_int.h"
#include "layout_cute.h"

const char *
inf_stmt_name(const IrStmt *s)
{
	static const char *const names[] = {
#define X(e, n) n,
		IR_STMTS(X)
#undef X
	};

	return s && (unsigned)s->kind < countof(names) ? names[s->kind] : "?";
}

static const char *
lstr(Inf *in, const Layout *L)
{
	return L ? layout_str(in->a, L) : "(none)";
}

const char *
inf_conflict(Inf *in, int buf, const Layout *old, const IrStmt *olds, const Layout *L,
	     const IrStmt *s, const char *extra)
{
	return arena_printf(in->a,
		"conflicting layouts for '%s': %s at %d:%d wants %s, but %s at %d:%d wants %s%s%s",
		in->k->bufs[buf].name, olds ? inf_stmt_name(olds) : "?", olds ? olds->loc.line : 0,
		olds ? olds->loc.col : 0, lstr(in, old), inf_stmt_name(s), s->loc.line, s->loc.col,
		lstr(in, L), extra ? " (" : "", extra ? extra : "");
}

static const char *
fail(Inf *in, State *st, const char *fmt, const char *a1, const char *a2)
{
	st->why = arena_printf(in->a, fmt, a1, a2);
	return st->why;
}

static int
buf_shape(const IrBuffer *B, int64_t *shape)
{
	int d;

	for (d = 0; d < B->ndim; d++)
		shape[d] = B->dims[d].sym ? 0 : B->dims[d].c;
	return B->ndim;
}

static Fragment *
replicated(Inf *in, int buf, int64_t T)
{
	int64_t shape[IR_MAXDIM];
	int n = buf_shape(&in->k->bufs[buf], shape);
	Err e = {0};

	return frag_fully_replicated(in->a, shape, n, T, &e);
}

/* a replicated result that every thread holds whole: the canonical form */
static Fragment *
tidy(Inf *in, Fragment *F)
{
	Fragment *R;
	Err e = {0};

	if (!F || F->rep != F->nthreads)
		return F;
	R = frag_fully_replicated(in->a, F->in_shape, F->nin, F->nthreads, &e);
	return R && layout_equal(R, F, NULL) == 1 ? R : F;
}

/* ---- parallel nests ------------------------------------------------------ */

static int
elem_bytes_max(Inf *in, const Op *op)
{
	const IrStmt *s = op->s;
	int b = 1, x;

	if (s->kind == S_COPY) {
		b = dtype_bytes(in->k->bufs[s->u.copy.src.buf].dtype);
		x = dtype_bytes(in->k->bufs[s->u.copy.dst.buf].dtype);
		return x > b ? x : b;
	}
	if (s->kind == S_FILL)
		return dtype_bytes(in->k->bufs[s->u.fill.dst.buf].dtype);
	for (x = 0; x < op->nacc; x++)
		if (dtype_bytes(in->k->bufs[op->acc[x].buf].dtype) > b)
			b = dtype_bytes(in->k->bufs[op->acc[x].buf].dtype);
	return op->ebytes > b ? op->ebytes : b;
}

/* the planned partition over the nest's points in loop order ord (slowest first; NULL:
 * the program's), f row-major in that order: thread (f // V) % T, slot
 * (f // V // T) * V + f % V, V the element size's vector (at most vcap when vcap > 0) */
static Fragment *
plan_order(Inf *in, const Op *op, int touches_frag, const int *ord, int64_t vcap, Err *e)
{
	Arena *A = in->a;
	int64_t total = 1, T = in->T, V, bestV, bestpad = -1, pad;
	IExpr *f = iexpr_const(A, 0), *a, *th, *slot;
	Fragment *F;
	int k, v, ebytes = elem_bytes_max(in, op);

	for (k = 0; k < op->nloop; k++) {
		v = ord ? ord[k] : k;
		if (ck_mul(total, op->ext[v], &total) || total > ((int64_t)1 << 40)) {
			err_set(e, "the nest has more than 2^40 points");
			return NULL;
		}
		f = iexpr_add(A, iexpr_mulc(A, f, op->ext[v]), iexpr_var(A, v));
	}
	V = target_vector_elems(in->t, ebytes, !op->nacc && !op->has_shared);
	if (V < 1)
		V = 1;
	while (vcap > 0 && V > vcap)
		V /= 2;
	v = ord ? ord[op->nloop - 1] : op->nloop - 1;
	while (V > 1 && op->ext[v] % V)
		V /= 2;
	if (touches_frag) {
		while (V > 1 && total % (T * V))
			V /= 2;
	} else {
		/* fewest padded points, the wider V on ties */
		for (bestV = V; V >= 1; V /= 2) {
			pad = (total + T * V - 1) / (T * V) * T * V - total;
			if (bestpad < 0 || pad < bestpad)
				bestpad = pad, bestV = V;
		}
		V = bestV;
	}
	a = iexpr_divc(A, f, V);
	th = iexpr_modc(A, a, T);
	slot = iexpr_add(A, iexpr_mulc(A, iexpr_divc(A, a, T), V), iexpr_modc(A, f, V));
	F = frag_new(A, op->ext, op->nloop, th, 1, &slot, 1, e);
	if (F && touches_frag && F->nthreads < T && T % F->nthreads == 0)
		F = frag_replicate(A, F, T / F->nthreads, e);
	return F;
}

static Fragment *plan_cached(Inf *in, const Op *op, int touches_frag, Err *e);

/* the planned partition: f row-major, thread (f // V) % T, slot (f // V // T) * V + f % V */
Fragment *
inf_plan(Inf *in, const Op *op, int touches_frag, Err *e)
{
	return plan_order(in, op, touches_frag, NULL, 0, e);
}

/* The partitions the nest's global accesses suggest besides the plan (TileLang plans a
 * nest from its accesses' contiguity): for each access, threads run along the loop
 * variable its address is contiguous in (element stride 1), that variable last in the
 * point order, in runs of at most the element size's vector that keep every other stride
 * of the access a multiple of the run; an access contiguous in no variable suggests one
 * point per thread in the program's order. Each distinct from the plan and the others;
 * the cost model ranks them with every other root (infer.c). */
int
inf_nest_variants(Inf *in, const Op *op, Fragment **out, const char **why, int max)
{
	NestStride acc[16];
	const Fragment *P;
	Fragment *F;
	Err e = { 0 };
	int ord[IR_MAXDIM], na, i, j, k, d, n = 0, c;
	int64_t vcap;

	if (op->s->kind != S_PARALLEL || op->s->u.par.layout || op->nloop < 1 ||
	    op->nloop > IR_MAXDIM || !(P = plan_cached(in, op, op->nacc > 0, &e)))
		return 0;
	na = cost_nest_strides(in->a, in->k, op->s, acc, (int)countof(acc));
	for (i = 0; i < na && n < max; i++) {
		for (k = op->nloop - 1; k >= 0; k--)
			if (acc[i].coef[k] == 1 && op->ext[k] > 1)
				break;
		if (k < 0) {
			vcap = 1;
			for (d = 0; d < op->nloop; d++)
				ord[d] = d;
		} else {
			for (c = 0, d = 0; d < op->nloop; d++)
				if (d != k)
					ord[c++] = d;
			ord[c] = k;
			vcap = 16;
			for (d = 0; d < op->nloop; d++)
				while (d != k && vcap > 1 && acc[i].coef[d] % vcap)
					vcap /= 2;
		}
		e.set = 0;
		F = plan_order(in, op, op->nacc > 0, ord, vcap, &e);
		if (!F || layout_equal(F, P, NULL) == 1)
			continue;
		for (j = 0; j < n && layout_equal(F, out[j], NULL) != 1; j++)
			;
		if (j < n)
			continue;
		out[n] = F;
		why[n] = k < 0 ? arena_printf(in->a, "one point per thread: '%s' is contiguous in no loop "
					      "variable", in->k->bufs[acc[i].buf].name)
			 : arena_printf(in->a, "threads along '%s': '%s' is contiguous in it",
					op->vars[k] ? op->vars[k]->name : "?", in->k->bufs[acc[i].buf].name);
		n++;
	}
	return n;
}

/* the plan, one object per distinct layout so that equal plans compare by pointer */
static Fragment *
plan_cached(Inf *in, const Op *op, int touches_frag, Err *e)
{
	Fragment *F;
	int i;

	if (!in->plan)
		in->plan = anewn(in->a, Fragment *, in->nop + 1);
	if (in->plan[op->idx])
		return in->plan[op->idx];
	F = inf_plan(in, op, touches_frag, e);
	if (!F)
		return NULL;
	for (i = 0; i < in->nplan; i++)
		if (layout_equal(in->plans[i], F, NULL) == 1) {
			F = in->plans[i];
			break;
		}
	if (i == in->nplan && in->nplan < (int)countof(in->plans))
		in->plans[in->nplan++] = F;
	in->plan[op->idx] = F;
	return F;
}

static int
is_identity(const Acc *ac, const Op *op, const Layout *F)
{
	int d;

	if (ac->n != op->nloop || F->nin != op->nloop)
		return 0;
	for (d = 0; d < ac->n; d++)
		if (ac->idx[d]->k != IX_VAR || ac->idx[d]->v != d || F->in_shape[d] != op->ext[d])
			return 0;
	return 1;
}

static IDom
loop_dom(const Op *op)
{
	IDom dom;
	int k;

	memset(&dom, 0, sizeof dom);
	for (k = 0; k < op->nloop; k++)
		dom.ext[k] = op->ext[k];
	return dom;
}

/* ComputeLoopLayoutFromBuffer: thread(v, rep) = F.thread(idx(v), rep), implicit slots */
static Fragment *
loop_from_buf(Inf *in, const Op *op, const Acc *ac, const Fragment *F, Err *e)
{
	IDom dom = loop_dom(op);
	IExpr *th;
	Fragment *L;
	int64_t lo, hi;
	int d;

	if (is_identity(ac, op, F))
		return (Fragment *)F;
	for (d = 0; d < ac->n; d++)
		if (iexpr_bounds(ac->idx[d], &dom, &lo, &hi) < 0 || lo < 0 || hi >= F->in_shape[d]) {
			err_set(e, "index %d of '%s' leaves its shape", d, in->k->bufs[ac->buf].name);
			return NULL;
		}
	th = frag_forward_thread(in->a, F, ac->idx, ac->n, NULL, e);
	if (!th)
		return NULL;
	L = frag_new(in->a, op->ext, op->nloop, th, F->rep, NULL, 0, e);
	if (L && layout_check_injective(L, e) < 0) {
		/* the complement of the thread map is no slot map when the nest covers part of the
		 * tile at an offset (a fill of acc[6 : 50, 2 : 32] of an MMA accumulator): the
		 * tile's own slots then number the points (not onto: the lowering guards the pairs
		 * the nest does not reach) */
		IExpr *sub[IEXPR_NVARS] = {0}, *sl[LAYOUT_MAXDIM];
		Err e2 = {0};
		int k;

		for (d = 0; d < ac->n; d++)
			sub[d] = ac->idx[d];
		for (k = 0; k < F->nout; k++)
			if (!(sl[k] = iexpr_subst(in->a, F->fwd[k], sub, NULL)))
				return NULL;
		L = frag_new(in->a, op->ext, op->nloop, th, F->rep, sl, F->nout, &e2);
		if (!L || layout_check_injective(L, &e2) < 0)
			return NULL;
	}
	return L;
}

/* F seen from the nest: thread F.thread(idx(v), rep), slots the loop coordinates
 * (kept injective so that containment is asked exactly of the thread maps) */
static Fragment *
view(Inf *in, const Op *op, const Acc *ac, const Fragment *F, Err *e)
{
	IExpr *th, *fwd[IR_MAXDIM];
	int k;

	th = frag_forward_thread(in->a, F, ac->idx, ac->n, NULL, e);
	if (!th)
		return NULL;
	for (k = 0; k < op->nloop; k++)
		fwd[k] = iexpr_var(in->a, k);
	return frag_new(in->a, op->ext, op->nloop, th, F->rep, fwd, op->nloop, e);
}

/* a gemm of kernel k whose A operand is a local tile and whose policy or the one of gemm g
 * (the setter of a conflicting layout) is not full_row */
typedef struct {
	const IrKernel *k;
	const IrStmt *g;
} RegAWalk;

static int
reg_a_mismatch(IrStmt *s, void *ctx)
{
	const RegAWalk *w = ctx;

	return s->kind == S_GEMM && w->k->bufs[s->u.gemm.a.buf].scope == MEM_LOCAL &&
	       (s->u.gemm.policy != WARP_FULL_ROW || w->g->u.gemm.policy != WARP_FULL_ROW);
}

/* what to change when a gemm's layout conflicts in a kernel that feeds a gemm from
 * registers (FlashAttention's P): both gemms all warps along M */
static const char *
reg_a_hint(Inf *in, const IrStmt *setter)
{
	RegAWalk w = {in->k, setter};

	if (!setter || setter->kind != S_GEMM || !ir_walk(in->k->body, reg_a_mismatch, &w))
		return "";
	return "; a gemm result that feeds a gemm's A operand in registers must be held by the "
	       "threads of its A fragment: give both gemms policy = full_row";
}

/* the loop layout must agree with a fragment it touches: read: loop within
 * the fragment's owners; write: exact ownership, both directions (#2957) */
static uint64_t lay_hash(const Layout *L);
static int lay_same(const Layout *a, const Layout *b);

/* frag_contains(a, b, 0, e), memoised in in->cont: the answer and what it wrote into an
 * error (replayed onto e as frag_contains would have written it) */
static int
contains_memo(Inf *in, const Fragment *a, const Fragment *b, Err *e)
{
	uint64_t h = lay_hash(a) * 31 + lay_hash(b) * 7;
	struct ContMemo *m = NULL;
	Err fresh = {0};
	int i, r;

	for (i = 0; i < in->ncont; i++)
		if (in->cont[i].h == h && lay_same(in->cont[i].a, a) && lay_same(in->cont[i].b, b)) {
			m = &in->cont[i];
			break;
		}
	if (m) {
		r = m->r;
		fresh = m->e;
	} else {
		r = frag_contains(a, b, 0, &fresh);
		if (in->ncont == in->capcont) {
			int cap = in->capcont ? 2 * in->capcont : 32;
			struct ContMemo *nm = arena_realloc(in->a, in->cont, sizeof *nm * (size_t)in->capcont,
							    sizeof *nm * (size_t)cap);

			if (nm)
				in->cont = nm, in->capcont = cap;
		}
		if (in->ncont < in->capcont) {
			m = &in->cont[in->ncont++];
			m->h = h, m->a = a, m->b = b, m->r = r, m->e = fresh;
		}
	}
	if (fresh.set) {
		memcpy(e->msg, fresh.msg, sizeof e->msg);
		e->set = 1;
		if (!e->loc.line && fresh.loc.line)
			e->loc = fresh.loc;
	}
	return r;
}

/* 1 when every index of access ac is a constant (x[3]: such reads make a tile fully
 * replicated where nothing else lays it out, LV_STRICT) */
static int
acc_const(const Acc *ac)
{
	int d;

	for (d = 0; d < ac->n; d++)
		if (ac->idx[d]->k != IX_CONST)
			return 0;
	return 1;
}

/* 1 when every index of access ac is a loop variable, each a different one */
static int
acc_at_vars(const Acc *ac)
{
	unsigned used = 0;
	int d;

	for (d = 0; d < ac->n; d++) {
		if (ac->idx[d]->k != IX_VAR || ac->idx[d]->v >= 32 || (used >> ac->idx[d]->v & 1))
			return 0;
		used |= 1u << ac->idx[d]->v;
	}
	return ac->n > 0;
}

static int
check_acc(Inf *in, State *st, const Op *op, const Acc *ac, const Fragment *L)
{
	const Fragment *F = st->map.buf[ac->buf];
	Fragment *Fc;
	Err e = {0};
	int r;

	if (!F || !ac->ok || (F == L && is_identity(ac, op, F)))
		return 0;
	if (!F->is_frag) {
		st->why = arena_printf(in->a, "'%s' has a non-fragment layout", in->k->bufs[ac->buf].name);
		return -1;
	}
	Fc = is_identity(ac, op, F) ? (Fragment *)F : view(in, op, ac, F, &e);
	if (!Fc)
		goto bad;
	r = contains_memo(in, L, Fc, &e);
	if (r == 1 && ac->write)
		r = contains_memo(in, Fc, L, &e);
	if (r == 1)
		return 0;
	/* a parallel nest reading a local tile at indices that are not its variables nor constants
	 * (x[i, 31 - j]) reads it from a copy in shared memory (lower_stage.c): no thread need
	 * hold what it reads there. A last resort (in->lenient): the copy costs a shared array
	 * and two barriers */
	if (in->lenient && r == 0 && !ac->write && op->s->kind == S_PARALLEL &&
	    in->k->bufs[ac->buf].scope == MEM_LOCAL && !acc_at_vars(ac) && !acc_const(ac))
		return 0;
bad:
	st->why = arena_printf(in->a,
		"%s at %d:%d %s '%s' through loop layout %s, but '%s' has %s (set by %s at %d:%d): %s%s",
		inf_stmt_name(op->s), op->s->loc.line, op->s->loc.col, ac->write ? "writes" : "reads",
		in->k->bufs[ac->buf].name, lstr(in, L), in->k->bufs[ac->buf].name, lstr(in, F),
		inf_stmt_name(st->setter[ac->buf]), st->setter[ac->buf] ? st->setter[ac->buf]->loc.line : 0,
		st->setter[ac->buf] ? st->setter[ac->buf]->loc.col : 0, e.msg, reg_a_hint(in, st->setter[ac->buf]));
	return -1;
}

/* CompleteBufferFragment: a tile's fragment from the loop layout. NULL with
 * e set when the loop does not determine it (it covers part of the tile). */
static Fragment *
complete(Inf *in, const Op *op, const Acc *ac, const Fragment *L, Err *e)
{
	Arena *A = in->a;
	const IrBuffer *B = &in->k->bufs[ac->buf];
	int64_t shape[IR_MAXDIM], E = 1, stride;
	IExpr *sub[IEXPR_NVARS], *th;
	int used[IR_MAXDIM], d, k, n = buf_shape(B, shape), proj = 1;
	Fragment *F;
	Layout *I, *inv;

	if (is_identity(ac, op, L) && n == op->nloop)
		return (Fragment *)L;
	memset(sub, 0, sizeof sub);
	for (k = 0; k < op->nloop; k++)
		used[k] = -1;
	for (d = 0; d < n && proj; d++) {
		const IExpr *x = ac->idx[d];
		if (x->k == IX_VAR && used[x->v] < 0 && op->ext[x->v] == shape[d])
			used[x->v] = d;
		else if (!(x->k == IX_CONST && shape[d] == 1))
			proj = 0;
	}
	if (proj) {
		IExpr *rep = iexpr_var(A, IEXPR_REP);
		for (k = 0; k < op->nloop; k++)
			if (used[k] < 0)
				E *= op->ext[k];
		stride = E;
		for (k = 0; k < op->nloop; k++) {
			if (used[k] >= 0) {
				sub[k] = iexpr_var(A, used[k]);
				continue;
			}
			stride /= op->ext[k];
			sub[k] = iexpr_modc(A, iexpr_divc(A, iexpr_modc(A, rep, E), stride), op->ext[k]);
		}
		sub[IEXPR_REP] = iexpr_divc(A, rep, E);
	} else {
		/* a bijective index map: invert it */
		I = layout_new(A, op->ext, op->nloop, ac->idx, ac->n, e);
		if (!I)
			return NULL;
		for (d = 0; d < n; d++)
			if (I->out_shape[d] != shape[d]) {
				err_set(e, "the loop covers only part of '%s'", B->name);
				return NULL;
			}
		inv = layout_inverse(A, I, 0, e);
		if (!inv) {
			err_set(e, "the loop's index map of '%s' is not a bijection", B->name);
			return NULL;
		}
		for (k = 0; k < op->nloop; k++)
			sub[k] = inv->fwd[k];
		sub[IEXPR_REP] = iexpr_var(A, IEXPR_REP);
	}
	th = iexpr_subst(A, L->thread, sub, NULL);
	if (!th)
		return NULL;
	F = frag_new(A, shape, n, th, E * L->rep, NULL, 0, e);
	if (F)
		F = frag_condense_rep(A, F, e);
	if (F && layout_check_injective(F, e) < 0)
		return NULL;
	return tidy(in, F);
}

/* the loop layout a nest's program gives (parallel(..., layout = cute("..."))) over its points */
static Fragment *
given_loop(Inf *in, const Op *op, Err *e)
{
	const LayoutLit *lit = ir_given_loop(op->s);
	CuteObj *o;
	LinLayout lin;
	int r;

	if (cute_parse(in->a, lit->text, &o, e))
		return NULL;
	if (o->k != CUTE_LAYOUT)
		return err_set(e, "a loop layout is a (thread, value) CuTe layout"), NULL;
	r = lin_from_cute_tv(in->a, o->l, op->ext, op->nloop, in->t->warp_size, &lin, e);
	if (r <= 0) {
		if (!e->set)
			err_set(e, "the CuTe layout is not linear over F2");
		return NULL;
	}
	return (Fragment *)frag_from_linear(in->a, &lin, in->t->warp_size, e);
}

/* why op's loop layout is L, for --explain */
static void
note_rule(Inf *in, const Op *op, const Layout *L, const char *text)
{
	if (!in->explain)
		return;
	if (!in->rule_loop) {
		in->rule_loop = anewn(in->a, const Layout *, in->nstmt + 1);
		in->rule_text = anewn(in->a, const char *, in->nstmt + 1);
	}
	in->rule_loop[op->s->id] = L;
	in->rule_text[op->s->id] = text;
}

static int
nest_step(Inf *in, State *st, Op *op, int level)
{
	Fragment *L = NULL, *F;
	const Acc *src = NULL, *rsrc = NULL;
	Err e = {0};
	int i, d, allconst, touches = op->nacc > 0, wsrc = 0, srcvars = 0;
	int64_t npts;

	if (st->map.loop[op->s->id]) {
		inf_done(st, op->idx);
		return 0;
	}
	/* the program gives the loop layout: every access must agree with it (a write from a
	 * thread that does not own the element is a conflict), tiles without a layout get it */
	if (ir_given_loop(op->s)) {
		if (!(L = given_loop(in, op, &e))) {
			st->why = arena_printf(in->a, "%s at %d:%d: its layout = cute(\"%s\") does not give a "
					       "loop layout over its points: %s", inf_stmt_name(op->s), op->s->loc.line,
					       op->s->loc.col, ir_given_loop(op->s)->text, e.msg);
			return -1;
		}
		goto chosen;
	}
	if (level == LV_STRICT) {
		/* fragments read at constant indices only: fully replicated */
		for (i = 0; i < op->nacc; i++) {
			const Acc *ac = &op->acc[i];
			for (allconst = ac->ok, d = 0; allconst && d < ac->n; d++)
				allconst = ac->idx[d]->k == IX_CONST;
			if (allconst && !st->map.buf[ac->buf] && in->nuse[ac->buf] == 1 && !ac->write)
				if (inf_set_buf(in, st, ac->buf, replicated(in, ac->buf, in->T), op) < 0)
					return -1;
		}
		return 0;
	}
	for (i = 0; i < op->nacc; i++) {
		const Acc *ac = &op->acc[i];
		const Fragment *G = st->map.buf[ac->buf];
		if (!ac->ok || !G)
			continue;
		/* constant indices pick elements of a tile, not a layout over the loop's points,
		 * unless the loop has one point (fill(t[0 : 1], ...)) or the tile one element: then
		 * the element's holders are the loop's */
		for (allconst = 1, d = 0; d < ac->n; d++)
			allconst &= ac->idx[d]->k == IX_CONST;
		for (npts = 1, d = 0; d < op->nloop; d++)
			npts *= op->ext[d];
		if (allconst && layout_size(G) > 1 && npts > 1)
			continue;
		if (ac->write)
			src = ac, wsrc = 1;
		else if (!rsrc)
			rsrc = ac;
		/* a read at the nest's own variables (x[i, j]) before one at other indices
		 * (x[i, 31 - j], which the lowering reads through shared memory) */
		if (!ac->write && !wsrc && G->rep == 1 && (!src || (!srcvars && acc_at_vars(ac))))
			src = ac, srcvars = acc_at_vars(ac);
	}
	if (src) {
		L = loop_from_buf(in, op, src, st->map.buf[src->buf], &e);
		if (!L) {
			fail(in, st, "no loop layout from '%s': %s", in->k->bufs[src->buf].name, e.msg);
			return -1;
		}
	} else if (level == LV_FREE) {
		if (rsrc) {
			L = loop_from_buf(in, op, rsrc, st->map.buf[rsrc->buf], &e);
			for (i = 0; L && i < op->nacc; i++)
				if (check_acc(in, st, op, &op->acc[i], L) < 0)
					L = NULL;
			st->why = NULL;
			/* TileLang's candidate rule: a replicated candidate that contains the planned
			 * partition gives the plan (a nest reading a fully replicated tile runs each
			 * point once, not in every replica) */
			if (L && L->rep > 1) {
				Fragment *P = plan_cached(in, op, touches, &e);

				for (i = 0; P && P->rep < L->rep && i < op->nacc; i++)
					if (check_acc(in, st, op, &op->acc[i], P) < 0)
						P = NULL;
				st->why = NULL;
				if (P && P->rep < L->rep) {
					note_rule(in, op, P, arena_printf(in->a, "the planned partition: '%s' (%lld "
									  "replicas) holds every point of it",
									  in->k->bufs[rsrc->buf].name,
									  (long long)L->rep));
					L = P;
				}
			}
		}
		if (!L && in->force_F && in->force_op == op->idx) {
			L = in->force_F;
			note_rule(in, op, L, in->force_why);
		}
		if (!L) {
			L = plan_cached(in, op, touches, &e);
			if (!L) {
				fail(in, st, "no partition for the nest: %s%s", e.msg, "");
				return -1;
			}
		}
	} else {
		return 0;
	}
chosen:
	for (i = 0; i < op->nacc; i++)
		if (check_acc(in, st, op, &op->acc[i], L) < 0)
			return -1;
	inf_loop(st, op->s->id, L);
	inf_done(st, op->idx);
	for (i = 0; i < op->nacc; i++) {
		const Acc *ac = &op->acc[i];
		if (st->map.buf[ac->buf])
			continue;
		F = ac->ok ? complete(in, op, ac, L, &e) : NULL;
		if (!F && ac->write && ac->ok) {
			st->why = arena_printf(in->a, "%s at %d:%d writes '%s' but its loop layout %s does "
					       "not determine the tile's layout: %s", inf_stmt_name(op->s),
					       op->s->loc.line, op->s->loc.col, in->k->bufs[ac->buf].name,
					       lstr(in, L), e.msg);
			return -1;
		}
		if (!F)
			F = replicated(in, ac->buf, L->nthreads);
		if (!F || inf_set_buf(in, st, ac->buf, F, op) < 0) {
			if (!st->why)
				fail(in, st, "no layout for '%s'%s", in->k->bufs[ac->buf].name, "");
			return -1;
		}
	}
	return 0;
}

/* ---- reduce -------------------------------------------------------------- */

/*
 * covers() directly: mark the holders of each reduced element in G (its elements x its
 * replicas), then look up every (element, replica) of F. The work is the two fragments'
 * sizes; the general containment below enumerates F's elements times G's replicas (a row
 * of 2048 reduced to one element had 2048 replicas: 33M points for softmax at W = 2048).
 * 1 or 0, or -1 when a table would pass the enumeration limit.
 */
static int
covers_points(const Fragment *F, const Fragment *G, int dim, int keep)
{
	int64_t vals[IEXPR_NVARS] = {0}, T, NG = layout_size(G), NF = layout_size(F), x, r, t, yf;
	int64_t lim = layout_enum_limit(), cells;
	unsigned char *h;
	int d, n, ok = 1;

	T = F->nthreads > G->nthreads ? F->nthreads : G->nthreads;
	if (ck_mul(NG, T, &cells) || cells > lim || NG > lim / G->rep || NF > lim / F->rep)
		return -1;
	if (!(h = calloc((size_t)cells, 1)))
		return -1;
	for (x = 0; x < NG; x++) {
		int64_t q = x;

		for (d = G->nin - 1; d >= 0; d--) {
			vals[d] = q % G->in_shape[d];
			q /= G->in_shape[d];
		}
		for (r = 0; r < G->rep; r++) {
			vals[IEXPR_REP] = r;
			if (iexpr_eval(G->thread, vals, &t, NULL) || t < 0 || t >= T) {
				free(h);
				return -1;
			}
			h[x * T + t] = 1;
		}
	}
	memset(vals, 0, sizeof vals);
	for (x = 0; x < NF && ok; x++) {
		int64_t q = x, c[IR_MAXDIM];

		for (d = F->nin - 1; d >= 0; d--) {
			c[d] = q % F->in_shape[d];
			q /= F->in_shape[d];
		}
		/* the reduced element of x: its coordinates without dim (or with dim := 0) */
		yf = 0;
		for (d = 0, n = 0; d < F->nin; d++) {
			if (d == dim && !keep)
				continue;
			yf = yf * G->in_shape[n] + (d == dim ? 0 : c[d]);
			n++;
		}
		for (d = 0; d < F->nin; d++)
			vals[d] = c[d];
		for (r = 0; r < F->rep && ok; r++) {
			vals[IEXPR_REP] = r;
			if (iexpr_eval(F->thread, vals, &t, NULL) || t < 0 || t >= T) {
				free(h);
				return -1;
			}
			ok = h[yf * T + t];
		}
	}
	free(h);
	return ok;
}

/*
 * covers_points with the thread maps evaluated in batches (layout_enumerate): the same
 * walk and answer; where a batch cannot be evaluated (a division by zero somewhere in
 * it) the point-by-point walk decides, so that the first failing point still wins.
 */
typedef struct Cov {
	const Fragment *F, *G;
	int dim, keep, ok;
	int64_t T;
	unsigned char *h;
} Cov;

static int
cov_mark(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Cov *c = ctx;
	int p;

	(void)coord;
	for (p = 0; p < np; p++) {
		int64_t t = vals[0][p];

		if (t < 0 || t >= c->T)
			return -2;
		c->h[(first + p) / c->G->rep * c->T + t] = 1;
	}
	return 0;
}

static int
cov_check(void *ctx, int64_t first, int np, const int64_t *const *coord, const int64_t *const *vals)
{
	Cov *c = ctx;
	const Fragment *F = c->F;
	int p, d, n;

	(void)first;
	for (p = 0; p < np; p++) {
		int64_t t = vals[0][p], yf = 0;

		if (t < 0 || t >= c->T)
			return -2;
		for (d = 0, n = 0; d < F->nin; d++) {
			if (d == c->dim && !c->keep)
				continue;
			yf = yf * c->G->in_shape[n] + (d == c->dim ? 0 : coord[d][p]);
			n++;
		}
		if (!c->h[yf * c->T + t]) {
			c->ok = 0;
			return 1;
		}
	}
	return 0;
}

static int
covers_direct(const Fragment *F, const Fragment *G, int dim, int keep)
{
	int64_t NG = layout_size(G), NF = layout_size(F), lim = layout_enum_limit(), cells;
	int64_t shape[IR_MAXDIM + 1];
	int ids[IR_MAXDIM + 1], d, r;
	Cov c;
	Err e = {0};

	memset(&c, 0, sizeof c);
	c.F = F, c.G = G, c.dim = dim, c.keep = keep, c.ok = 1;
	c.T = F->nthreads > G->nthreads ? F->nthreads : G->nthreads;
	if (ck_mul(NG, c.T, &cells) || cells > lim || NG > lim / G->rep || NF > lim / F->rep ||
	    G->nin > IR_MAXDIM || F->nin > IR_MAXDIM)
		return covers_points(F, G, dim, keep);
	if (!(c.h = calloc((size_t)cells, 1)))
		return -1;
	for (d = 0; d < G->nin; d++) {
		shape[d] = G->in_shape[d];
		ids[d] = d;
	}
	shape[G->nin] = G->rep;
	ids[G->nin] = IEXPR_REP;
	r = layout_enumerate(shape, ids, G->nin + 1, &G->thread, 1, cov_mark, &c, &e);
	if (!r) {
		for (d = 0; d < F->nin; d++) {
			shape[d] = F->in_shape[d];
			ids[d] = d;
		}
		shape[F->nin] = F->rep;
		ids[F->nin] = IEXPR_REP;
		r = layout_enumerate(shape, ids, F->nin + 1, &F->thread, 1, cov_check, &c, &e);
	}
	free(c.h);
	if (r != 0 && r != 1)
		return covers_points(F, G, dim, keep);
	return c.ok;
}

/* covers()'s memo: a structural hash of a fragment and the exact comparison behind it */
static uint64_t
ix_hash(const IExpr *e)
{
	uint64_t h;

	if (!e)
		return 7;
	h = (uint64_t)e->k * 1099511628211ULL;
	if (e->k == IX_CONST || e->k == IX_VAR)
		return (h ^ (uint64_t)e->v) * 1099511628211ULL;
	h = (h ^ ix_hash(e->a)) * 1099511628211ULL;
	h = (h ^ ix_hash(e->b)) * 1099511628211ULL;
	return (h ^ ix_hash(e->c)) * 1099511628211ULL;
}

static uint64_t
lay_hash(const Layout *L)
{
	uint64_t h = (uint64_t)L->nin * 131 + (uint64_t)L->nout * 7 + (uint64_t)L->rep * 13 +
		     (uint64_t)L->nthreads * 17 + (uint64_t)L->has_range;
	int k;

	for (k = 0; k < L->nin; k++)
		h = h * 1000003 + (uint64_t)L->in_shape[k];
	for (k = 0; k < L->nout; k++)
		h = h * 1000003 + ix_hash(L->fwd[k]) + (uint64_t)L->out_shape[k];
	if (L->is_frag)
		h = h * 1000003 + ix_hash(L->thread);
	return h;
}

static int
lay_same(const Layout *a, const Layout *b)
{
	int k;

	if (a == b)
		return 1;
	if (a->is_frag != b->is_frag || a->nin != b->nin || a->nout != b->nout || a->rep != b->rep ||
	    a->nthreads != b->nthreads || a->has_range != b->has_range ||
	    (a->has_range && (a->range_min != b->range_min || a->range_ext != b->range_ext)))
		return 0;
	for (k = 0; k < a->nin; k++)
		if (a->in_shape[k] != b->in_shape[k])
			return 0;
	for (k = 0; k < a->nout; k++)
		if (a->out_shape[k] != b->out_shape[k] || !iexpr_same(a->fwd[k], b->fwd[k]))
			return 0;
	return !a->is_frag || iexpr_same(a->thread, b->thread);
}

/* does G (over the reduced shape) hold every element of each row wherever F
 * (over the source) has a holder of that row? */
static int
covers(Inf *in, const Fragment *F, const Fragment *G, int dim, int keep)
{
	Arena *A = in->a;
	IExpr *idx[IR_MAXDIM], *th, *fwd[IR_MAXDIM];
	Fragment *V;
	Err e = {0};
	int d, n = 0;

	uint64_t h = lay_hash(F) * 31 + lay_hash(G) * 7 + (uint64_t)dim * 2 + (uint64_t)keep;
	int r, i;

	for (i = 0; i < in->ncov; i++)
		if (in->cov[i].h == h && in->cov[i].dim == dim && in->cov[i].keep == keep &&
		    lay_same(in->cov[i].F, F) && lay_same(in->cov[i].G, G))
			return in->cov[i].r;
	for (d = 0; d < F->nin; d++) {
		fwd[d] = iexpr_var(A, d);
		if (d == dim && !keep)
			continue;
		idx[n++] = d == dim ? iexpr_const(A, 0) : iexpr_var(A, d);
	}
	r = covers_direct(F, G, dim, keep);
	if (r < 0) {
		/* past covers_direct's tables: the general containment */
		th = frag_forward_thread(A, G, idx, n, NULL, &e);
		V = th ? frag_new(A, F->in_shape, F->nin, th, G->rep, fwd, F->nin, &e) : NULL;
		r = V && frag_contains(F, V, 0, &e) == 1;
	}
	if (in->ncov == in->capcov) {
		int cap = in->capcov ? 2 * in->capcov : 32;
		struct CovMemo *m = arena_realloc(A, in->cov, sizeof *m * (size_t)in->capcov,
						  sizeof *m * (size_t)cap);

		if (m) {
			in->cov = m;
			in->capcov = cap;
		}
	}
	if (in->ncov < in->capcov) {
		struct CovMemo *m = &in->cov[in->ncov++];

		m->h = h, m->F = F, m->G = G, m->dim = dim, m->keep = keep, m->r = r;
	}
	return r;
}

/* reducer layout: thread(y, rep) = src.thread(y with x_dim := rep % S, rep // S), R' = S R */
static int
reduce_step(Inf *in, State *st, Op *op, int level)
{
	Arena *A = in->a;
	const IrStmt *s = op->s;
	int sb = s->u.reduce.src, db = s->u.reduce.dst, dim = s->u.reduce.dim, d, keep;
	const Fragment *F = st->map.buf[sb];
	const IrBuffer *SB = &in->k->bufs[sb], *DB = &in->k->bufs[db];
	int64_t shape[IR_MAXDIM], S;
	IExpr *sub[IEXPR_NVARS], *rep, *th, *fwd[IR_MAXDIM];
	Fragment *G;
	Err e = {0};
	int64_t f;
	uint64_t h;
	int i;

	if (level == LV_STRICT)
		return 0;
	if (SB->scope != MEM_LOCAL || DB->scope != MEM_LOCAL) {
		if (level == LV_FREE) {
			inf_done(st, op->idx);
			if (DB->scope == MEM_LOCAL && !st->map.buf[db])
				return inf_set_buf(in, st, db, replicated(in, db, in->T), op);
		}
		return 0;
	}
	if (!F)
		return 0;
	if (dim < 0 || dim >= SB->ndim) {
		fail(in, st, "reduce dim out of range for '%s'%s", SB->name, "");
		return -1;
	}
	S = F->in_shape[dim];
	keep = DB->ndim == SB->ndim;
	buf_shape(DB, shape);
	G = NULL;
	h = lay_hash(F) * 31 + (uint64_t)sb * 1009 + (uint64_t)db * 17 + (uint64_t)dim;
	for (i = 0; i < in->nred; i++)
		if (in->red[i].h == h && in->red[i].sb == sb && in->red[i].db == db && in->red[i].dim == dim &&
		    lay_same(in->red[i].F, F)) {
			G = (Fragment *)in->red[i].G;
			e = in->red[i].e;
			goto searched;
		}
	/* the fewest replicas: sample the reduced coordinate every f elements (f | S,
	 * largest first) while the samples' holders are still all of the row's
	 * holders; implicit slots, else one slot per element */
	for (f = S; f >= 1 && !G; f--) {
		int explicit;
		if (S % f)
			continue;
		for (explicit = 0; explicit < 2 && !G; explicit++) {
			memset(sub, 0, sizeof sub);
			rep = iexpr_var(A, IEXPR_REP);
			for (d = 0; d < SB->ndim; d++) {
				if (d == dim)
					sub[d] = iexpr_mulc(A, iexpr_modc(A, rep, S / f), f);
				else
					sub[d] = iexpr_var(A, keep || d < dim ? d : d - 1);
			}
			sub[IEXPR_REP] = iexpr_divc(A, rep, S / f);
			th = iexpr_subst(A, F->thread, sub, NULL);
			/* one slot per element, numbered row-major (one slot dim: the lowering's form) */
			fwd[0] = iexpr_const(A, 0);
			for (d = 0; d < DB->ndim; d++)
				fwd[0] = iexpr_add(A, iexpr_mulc(A, fwd[0], shape[d]), iexpr_var(A, d));
			e.set = 0;
			G = th ? frag_new(A, shape, DB->ndim, th, S / f * F->rep, explicit ? fwd : NULL,
					  explicit ? 1 : 0, &e) : NULL;
			if (G)
				G = frag_condense_rep(A, G, &e);
			if (G && (layout_check_injective(G, &e) < 0 || !covers(in, F, G, dim, keep)))
				G = NULL;
		}
	}
	/* rows whose holders follow no sampling pattern (e.g. 229 wrapping over 128
	 * threads): every thread of the source holds every result */
	if (!G)
		G = frag_fully_replicated(A, shape, DB->ndim, F->nthreads, &e);
	if (in->nred == in->capred) {
		int cap = in->capred ? 2 * in->capred : 16;
		struct RedMemo *m = arena_realloc(A, in->red, sizeof *m * (size_t)in->capred,
						  sizeof *m * (size_t)cap);

		if (m)
			in->red = m, in->capred = cap;
	}
	if (in->nred < in->capred) {
		struct RedMemo *m = &in->red[in->nred++];

		m->h = h, m->F = F, m->G = G, m->sb = sb, m->db = db, m->dim = dim, m->e = e;
	}
searched:
	G = tidy(in, G);
	if (!G) {
		fail(in, st, "no reducer layout: %s%s", e.msg, "");
		return -1;
	}
	inf_done(st, op->idx);
	if (st->map.buf[db]) {
		/* keep the destination's layout; it must not be wider (#1719) for the shuffle
		 * reduce. A wider one (more holders of a result than the reducer layout: a row sum
		 * read by every thread in a serial loop) is lowered through shared memory
		 * (lower_reduce.c smemreduce: each holder folds its row from a copy of the source);
		 * a last resort (in->lenient), a shuffle reduce is cheaper */
		if (frag_contains(st->map.buf[db], G, 0, &e) == 1)
			return 0;
		if (in->lenient && st->map.buf[db]->is_frag && layout_size(st->map.buf[db]) == layout_size(G))
			return 0;
		st->why = inf_conflict(in, db, st->map.buf[db], st->setter[db], G, s,
				       "the reduce result is held by fewer threads than the destination's "
				       "layout needs; stage it through shared memory");
		return -1;
	}
	return inf_set_buf(in, st, db, G, op);
}

/* ---- gemm and layout statements ------------------------------------------- */

static int
mma_frag(Inf *in, MmaOperand opd, int64_t rows, int64_t cols, int64_t M, int64_t N, int elem_bits,
	 Fragment **out, Err *e)
{
	/* mma.sync layouts are of 32-lane warps whatever the target's wave (64 on gfx9) */
	int mw, nw, warps = (int)(in->T / 32);

	if (warps < 1)
		warps = 1;
	if (mma_warp_partition(M, N, warps, WARP_SQUARE, MMA_CUDA, &mw, &nw, e) < 0)
		return -1;
	*out = mma_block_fragment(in->a, opd, rows, cols, elem_bits, mw, nw, e);
	return *out ? 0 : -1;
}

static Layout *
smem_operand(Inf *in, int buf, int k_inner, Err *e)
{
	const IrBuffer *B = &in->k->bufs[buf];
	int64_t shape[IR_MAXDIM];
	SmemLayout sl;
	int n = buf_shape(B, shape);

	if (swizzle_choose(in->a, shape, n, dtype_bytes(B->dtype), k_inner, 1, &sl, e) < 0)
		return NULL;
	return sl.layout;
}

/* the gemm's fragments and operand swizzles from gemm_plan, which the lowering
 * also asks (mma.sync, wgmma, MFMA, WMMA); where it gives no plan on HIP, the
 * mma.sync block fragments */
static int
gemm_step(Inf *in, State *st, Op *op)
{
	const IrStmt *s = op->s;
	const Region *ra = &s->u.gemm.a, *rb = &s->u.gemm.b, *rc = &s->u.gemm.c;
	const IrBuffer *A = &in->k->bufs[ra->buf], *B = &in->k->bufs[rb->buf], *C = &in->k->bufs[rc->buf];
	GemmPlan gp;
	Layout *la = NULL, *lb = NULL, *lc = NULL;
	Err e = {0};

	inf_done(st, op->idx);
	if (gemm_plan(in->a, in->t, in->k, s, &gp, &e) == 0) {
		if (A->scope == MEM_LOCAL && (gp.instr == GEMM_MFMA || gp.instr == GEMM_WMMA)) {
			/* the MFMA/WMMA accumulator is column-major per lane, its A operand row-major:
			 * a result of one gemm would need a shuffle to feed the next, not done yet */
			fail(in, st, "gemm: operand A '%s' in registers is not lowered for %s yet (only "
			     "mma.sync reads A from registers); stage it through shared memory",
			     A->name, gp.instr == GEMM_MFMA ? "MFMA" : "WMMA");
			return -1;
		}
		lc = gp.acc;
		la = A->scope == MEM_LOCAL ? gp.frag_a : gp.a_shared ? gp.smem_a.layout : NULL;
		lb = B->scope == MEM_LOCAL ? gp.frag_b : gp.b_shared ? gp.smem_b.layout : NULL;
	} else if (in->t->kind == TGT_HIP && rc->ndim == 2 && ra->ndim == 2 && rb->ndim == 2) {
		int64_t M = rc->ext[0], N = rc->ext[1], K = s->u.gemm.trans_a ? ra->ext[0] : ra->ext[1];
		int bits = dtype_bytes(A->dtype) * 8;
		e.set = 0;
		if (mma_frag(in, MMA_C, M, N, M, N, bits, &lc, &e) < 0)
			goto bad;
		if (A->scope == MEM_LOCAL && mma_frag(in, MMA_A, M, K, M, N, bits, &la, &e) < 0)
			goto bad;
		if (B->scope == MEM_LOCAL && mma_frag(in, MMA_B, K, N, M, N, bits, &lb, &e) < 0)
			goto bad;
		if (A->scope == MEM_SHARED && !(la = smem_operand(in, ra->buf, !s->u.gemm.trans_a, &e)))
			goto bad;
		if (B->scope == MEM_SHARED && !(lb = smem_operand(in, rb->buf, s->u.gemm.trans_b, &e)))
			goto bad;
	} else {
		goto bad;
	}
	if (C->scope == MEM_LOCAL && (!lc || inf_set_buf(in, st, rc->buf, lc, op) < 0))
		goto bad;
	if (A->scope != MEM_GLOBAL && (!la || inf_set_buf(in, st, ra->buf, la, op) < 0))
		goto bad;
	if (B->scope != MEM_GLOBAL && (!lb || inf_set_buf(in, st, rb->buf, lb, op) < 0))
		goto bad;
	return 0;
bad:
	if (!st->why)
		fail(in, st, "gemm: %s%s", e.set ? e.msg : "the plan gives no layout for an operand", "");
	return -1;
}

/*
 * The layout an annotation statement asks for (require_layout, annotate_layout,
 * require_amd_wmma_layout) over its buffer's shape; NULL with *skip = 1 when the
 * literal does not apply to the buffer's scope, NULL with e set on errors.
 */
Layout *
inf_lit_layout(Inf *in, const IrStmt *s, int *skip, Err *e)
{
	const LayoutLit *lit;
	const IrBuffer *B;
	int64_t shape[IR_MAXDIM];
	Layout *L = NULL;
	CuteObj *o;
	LinLayout lin;
	int n, eb, r;

	*skip = 0;
	if (s->kind == S_REQUIRE_WMMA_LAYOUT) {
		B = &in->k->bufs[s->u.wmma.buf];
		n = buf_shape(B, shape);
		if (B->scope != MEM_LOCAL) {
			err_set(e, "require_amd_wmma_layout: '%s' is not a local tile", B->name);
			return NULL;
		}
		/* checked by wmma_bases.c; the Fragment from the generic inversion, whose
		 * index expressions merge runs of bits */
		if (wmma_bases_linear(in->a, s->u.wmma.version, s->u.wmma.transposed,
				      &s->u.wmma.warp_bases, &s->u.wmma.reg_bases, s->u.wmma.instr_shape,
				      s->u.wmma.ninstr, shape, n, &lin, e))
			return NULL;
		if (!wmma_bases_fragment(in->a, s->u.wmma.version, s->u.wmma.transposed,
					 &s->u.wmma.warp_bases, &s->u.wmma.reg_bases,
					 s->u.wmma.instr_shape, s->u.wmma.ninstr, shape, n, e))
			return NULL;
		return frag_from_linear(in->a, &lin, 32, e);
	}
	if (!(lit = s->u.layout.lit)) {
		*skip = 1;
		return NULL;
	}
	B = &in->k->bufs[s->u.layout.buf];
	n = buf_shape(B, shape);
	eb = dtype_bytes(B->dtype);
	switch (lit->kind) {
	case LAYOUT_SWIZZLE:
		L = swizzle_layout(in->a, lit->bytes == 32 ? SWZ_32B : lit->bytes == 64 ? SWZ_64B
				   : SWZ_128B, shape, n, eb, e);
		break;
	case LAYOUT_PADDED:
		L = swizzle_padded(in->a, shape, n, eb, e);
		break;
	case LAYOUT_LINEAR:
		L = swizzle_linear(in->a, shape, n, e);
		break;
	case LAYOUT_MMA:
		if (n != 2) {
			*skip = 1;
			return NULL;
		}
		/* the mma.sync shapes only: an MFMA or WMMA name must not get an mma.sync layout */
		if (lit->mma != MMA_M16N8K16 && lit->mma != MMA_M16N8K8 && lit->mma != MMA_M16N8K32) {
			err_set(e, "mma_%c(%s): only the mma.sync shapes (m16n8k16, m16n8k8, m16n8k32) give a "
				"layout yet; use require_amd_wmma_layout for an AMD register layout", lit->operand,
				mma_name(lit->mma));
			return NULL;
		}
		/* without warps = N the literal is a placeholder: the warps are the
		 * kernel's, known after inlining (a helper gets each caller's); an mma.sync warp
		 * is 32 lanes on every target */
		for (r = 0; r < lit->nopt; r++)
			if (!strcmp(lit->opt[r].name, "warps") && lit->opt[r].value * 32 != in->T) {
				err_set(e, "mma_%c(..., warps = %lld) in kernel '%s' of %lld threads (%lld "
					"warps of 32)", lit->operand, (long long)lit->opt[r].value, in->k->name,
					(long long)in->T, (long long)(in->T / 32));
				return NULL;
			}
		mma_frag(in, lit->operand == 'a' ? MMA_A : lit->operand == 'b' ? MMA_B : MMA_C, shape[0],
			 shape[1], lit->operand == 'b' ? 32 : shape[0], lit->operand == 'a' ? 32 : shape[1],
			 lit->operand == 'c' ? 16 : eb * 8, &L, e);
		break;
	case LAYOUT_CUTE:
		/* a (thread, value) layout pins a local tile; on a shared buffer the layout maps
		 * coordinates to offsets (swizzled when composed), honoured by the planner */
		if (cute_parse(in->a, lit->text, &o, e))
			return NULL;
		if (B->scope == MEM_SHARED) {
			L = layout_from_cute_shared(in->a, o, shape, n, e);
			break;
		}
		if (o->k != CUTE_LAYOUT) {
			err_set(e, "a local tile needs a (thread, value) CuTe layout, not a swizzled one");
			return NULL;
		}
		r = lin_from_cute_tv(in->a, o->l, shape, n, in->t->warp_size, &lin, e);
		if (r < 0)
			return NULL;
		if (r == 0) {
			/* e->msg says why; the caller prefixes the statement */
			if (!e->set)
				err_set(e, "the CuTe layout is not linear over F2");
			return NULL;
		}
		L = frag_from_linear(in->a, &lin, in->t->warp_size, e);
		break;
	}
	if (L && (B->scope == MEM_LOCAL) != (L->is_frag != 0)) {
		*skip = 1;
		return NULL;
	}
	return L;
}

static int
annot_step(Inf *in, State *st, Op *op)
{
	const IrStmt *s = op->s;
	Layout *L;
	Err e = {0};
	int skip, buf;

	inf_done(st, op->idx);
	/* pin = false is a preference, weighed in free mode (infer.c) */
	if (s->kind == S_REQUIRE_LAYOUT && !s->u.layout.pin)
		return 0;
	L = inf_lit_layout(in, s, &skip, &e);
	if (skip)
		return 0;
	if (!L) {
		fail(in, st, "the %s cannot be built: %s", s->kind == S_ANNOTATE_LAYOUT ?
		     "annotated layout" : "required layout", e.msg);
		return -1;
	}
	buf = s->kind == S_REQUIRE_WMMA_LAYOUT ? s->u.wmma.buf : s->u.layout.buf;
	return inf_set_buf(in, st, buf, L, op);
}

/* every thread runs a serial statement: the local buffers it touches are held whole
 * by every thread (as TileLang replicates a buffer accessed outside T.Parallel) */
static int
serial_step(Inf *in, State *st, Op *op)
{
	int i;

	for (i = 0; i < op->nacc; i++) {
		int b = op->acc[i].buf;
		const Fragment *G = st->map.buf[b];

		if (G && frag_is_fully_replicated(G) && G->rep >= in->T)
			continue;
		if (inf_set_buf(in, st, b, replicated(in, b, in->T), op) < 0)
			return -1;
	}
	inf_done(st, op->idx);
	return 0;
}

int
inf_step(Inf *in, State *st, Op *op, int level)
{
	if (st->done[op->idx])
		return 0;
	if (op->is_annot)
		return level == LV_STRICT ? annot_step(in, st, op) : 0;
	if (op->serial)
		return level == LV_STRICT ? serial_step(in, st, op) : 0;
	if (op->nest)
		return nest_step(in, st, op, level);
	if (op->s->kind == S_GEMM)
		return level == LV_STRICT ? gemm_step(in, st, op) : 0;
	if (op->s->kind == S_REDUCE)
		return reduce_step(in, st, op, level);
	inf_done(st, op->idx);
	return 0;
}

/* ---- completion and validation --------------------------------------------- */

int
inf_validate_state(Inf *in, State *st, const int *members, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		const Op *op = &in->ops[members[i]];
		if (op->nest && !st->map.loop[op->s->id]) {
			st->why = arena_printf(in->a, "%s at %d:%d got no loop layout", inf_stmt_name(op->s),
					       op->s->loc.line, op->s->loc.col);
			return -1;
		}
	}
	return 0;
}

/* shared buffers written by a copy from a register tile (an epilogue staged by hand) */
typedef struct FragDst {
	const IrKernel *k;
	unsigned char *dst;
} FragDst;

static int
frag_dst_visit(IrStmt *s, void *ctx)
{
	FragDst *f = ctx;

	if (s->kind == S_COPY && f->k->bufs[s->u.copy.src.buf].scope == MEM_LOCAL &&
	    f->k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED)
		f->dst[s->u.copy.dst.buf] = 1;
	return 0;
}

/*
 * The layout of a shared buffer no statement constrains: row-major, or, for a 2-D buffer that
 * a copy from a register tile writes, the Hopper ladder's swizzle for its shape (smem.c's
 * default for the buffers it plans alone): a fragment's thread writes pairs of a row, the
 * eight rows of a warp 8 rows apart, which row-major rows of 128 bytes or more put on the same
 * banks and the swizzle on eight different 16-byte chunks. Any layout is exact here (every
 * access goes through it); the choice is only the banks'.
 */
static Layout *
shared_default(Inf *in, const IrBuffer *B, const int64_t *shape, int n, int frag_written, Err *e)
{
	SmemLayout sl;
	Err e2 = {0};

	if (frag_written && n == 2 && !swizzle_choose(in->a, shape, n, dtype_bytes(B->dtype), 1, 0, &sl, &e2) &&
	    sl.kind == SMEM_SWIZZLE && sl.layout)
		return sl.layout;
	return swizzle_linear(in->a, shape, n, e);
}

void
inf_finish(Inf *in, State *st)
{
	int64_t shape[IR_MAXDIM];
	Err e = {0};
	int b, i, n;
	FragDst fd = {in->k, NULL};

	fd.dst = anewn(in->a, unsigned char, in->k->nbuf + 1);
	ir_walk(in->k->body, frag_dst_visit, &fd);
	for (b = 0; b < in->k->nbuf; b++) {
		IrBuffer *B = &in->k->bufs[b];
		if (!st->map.buf[b]) {
			n = buf_shape(B, shape);
			if (B->scope == MEM_LOCAL)
				st->map.buf[b] = replicated(in, b, in->T);
			else if (B->scope == MEM_SHARED)
				st->map.buf[b] = shared_default(in, B, shape, n, fd.dst[b], &e);
		}
		B->layout = B->scope == MEM_GLOBAL ? NULL : st->map.buf[b];
	}
	for (i = 0; i < in->nop; i++)
		if (in->ops[i].nest)
			in->ops[i].s->loop_layout = st->map.loop[in->ops[i].s->id];
}

int
inf_validate_kernel(Inf *in, State *st)
{
	Err e = {0};
	int b, i, d, rc = 0;

	(void)st;
	for (b = 0; b < in->k->nbuf; b++) {
		const IrBuffer *B = &in->k->bufs[b];
		const Layout *L = B->layout;
		if (B->scope != MEM_LOCAL)
			continue;
		if (!L || !L->is_frag || L->nin != B->ndim) {
			diag(in->d, B->loc, "layout inference: local tile '%s' has no fragment", B->name);
			rc = -1;
			continue;
		}
		for (d = 0; d < B->ndim; d++)
			if (L->in_shape[d] != B->dims[d].c) {
				diag(in->d, B->loc, "layout inference: the fragment of '%s' has the wrong "
				     "shape", B->name);
				rc = -1;
				break;
			}
	}
	for (i = 0; i < in->nop; i++) {
		const Op *op = &in->ops[i];
		const Layout *L = op->s->loop_layout;
		if (!op->nest)
			continue;
		if (!L || !L->is_frag || L->nin != op->nloop) {
			diag(in->d, op->s->loc, "layout inference: this %s has no loop layout",
			     inf_stmt_name(op->s));
			rc = -1;
			continue;
		}
		for (d = 0; d < op->nloop; d++)
			if (L->in_shape[d] != op->ext[d])
				break;
		if (d < op->nloop || layout_check_injective(L, &e) < 0) {
			diag(in->d, op->s->loc, "layout inference: the loop layout of this %s is not an "
			     "injective layout of its nest: %s", inf_stmt_name(op->s), e.msg);
			rc = -1;
		}
	}
	return rc;
}
