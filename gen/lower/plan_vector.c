/*
 * plan_vector.c: the pass plan-vectors. The vector width of every register
 * tile's slots (the widest run of consecutive, aligned elements of the last
 * dim that every thread holds in consecutive slots, up to the target's widest
 * access, 16 bytes; 1-byte elements in words of at least 4), of every
 * parallel nest's global stores and loads along a run of its points
 * (lw_plan_nestvec) and of every copy's accesses: a copy
 * between registers and memory moves the tile's runs when the memory side
 * walks its contiguous dim in them; a copy between global and shared memory
 * moves 16-byte chunks when the rows are whole chunks and both sides keep
 * them together (the shared layout's vector run, smem.c). A strided tensor
 * needs stride 1 in its last dim and the other strides multiples of the width
 * (constants narrow it here). What is proven only at run time (rows of whole
 * vectors, aligned offsets, stride symbols of whole vectors, a strided view's
 * aligned pointer) the lowering checks (lw_veccond), with an element-by-element
 * path beside the vector one.
 */
#include "lw.h"

/* the widest access of the target, in bytes: the one description of the hardware that the
 * cost model's vector widths read too (Target.max_vector_bits, target_vector_elems) */
static int
vecbytes(const Em *e)
{
	return e->t ? target_vector_elems(e->t, 1, 0) : 16;
}

/* the vector run of local buffer buf's slots for elements of eb bytes */
static int
fragrun(Em *e, int buf, int eb)
{
	int v = eb == 1 || eb == 2 || eb == 4
		? lw_fragvec(e->frag[buf], e->coord[buf], e->slots[buf], vecbytes(e) / eb) : 1;

	/* a padded tile's guard is per vector: a vector must not run past the last element */
	while (e->pad[buf] && v > 1 && e->frag[buf]->in_shape[e->frag[buf]->nin - 1] % v)
		v /= 2;
	return eb == 1 && v < 4 ? 1 : v;
}

int
lw_tilevec(Em *e, int buf)
{
	TilePlan *tp = &e->part->tiles[buf];

	if (!tp->vec)
		tp->vec = fragrun(e, buf, (int)dtype_bytes(e->k->bufs[buf].dtype));
	return tp->vec;
}

static CopyKind
copykind(const Em *e, const IrStmt *st)
{
	MemScope s = e->k->bufs[st->u.copy.src.buf].scope, d = e->k->bufs[st->u.copy.dst.buf].scope;

	return s == MEM_LOCAL && d == MEM_LOCAL ? CPK_LOCAL : d == MEM_LOCAL ? CPK_LOAD
	       : s == MEM_LOCAL ? CPK_STORE : CPK_TILE;
}

/* cp->kind and cp->v (and why v is not wider) of copy st */
int
lw_plan_vector(Em *e, const IrStmt *st, CopyPlan *cp)
{
	const Region *sr = &st->u.copy.src, *dr = &st->u.copy.dst;
	const IrBuffer *SB = &e->k->bufs[sr->buf], *DB = &e->k->bufs[dr->buf];
	int64_t ext[IR_MAXDIM];
	int nn = nest_shape(st, ext), eb, v;

	memset(cp, 0, sizeof *cp);
	cp->kind = copykind(e, st);
	cp->v = 1;
	switch (cp->kind) {
	case CPK_LOCAL:
		cp->why = "register moves";
		return 0;
	case CPK_LOAD:
	case CPK_STORE: {
		const Region *lr = cp->kind == CPK_LOAD ? dr : sr, *mr = cp->kind == CPK_LOAD ? sr : dr;
		const IrBuffer *L = &e->k->bufs[lr->buf];

		eb = (int)dtype_bytes(e->k->bufs[mr->buf].dtype);
		if ((v = fragrun(e, lr->buf, eb)) == 1) {
			cp->why = "the tile's slots hold no aligned runs of elements";
			return 0;
		}
		if (!lw_vecdim(e, mr, L->ndim - lw_countunit(L), v)) {
			cp->why = "the memory side does not hold the runs contiguously";
			return 0;
		}
		/* a strided tensor: narrower where a constant stride is not a multiple of v */
		v = lw_stridevec(e, &e->k->bufs[mr->buf], v, &cp->why);
		cp->v = eb == 1 && v < 4 ? 1 : v;
		return 0;
	}
	case CPK_TILE: {
		int64_t C = ext[nn - 1];

		eb = (int)dtype_bytes(SB->dtype);
		if (SB->dtype != DB->dtype) {
			cp->why = "the element types differ (converted element by element)";
			return 0;
		}
		if (!(eb == 1 || eb == 2 || eb == 4 || eb == 8) || C % (16 / eb)) {
			cp->why = "rows are not whole 16-byte chunks";
			return 0;
		}
		v = 16 / eb;
		if (!lw_vecdim(e, sr, nn, v) || !lw_vecdim(e, dr, nn, v)) {
			cp->why = "a side does not keep 16-byte chunks together";
			return 0;
		}
		/* a strided tensor: its strides must keep 16-byte chunks whole */
		if (lw_stridevec(e, SB, v, &cp->why) < v || lw_stridevec(e, DB, v, &cp->why) < v)
			return 0;
		cp->v = v;
		return 0;
	}
	}
	return 0;
}

const CopyPlan *
lw_copyplan(Em *e, const IrStmt *st)
{
	CopyPlan *cp;

	if (st->copy_plan && st->copy_plan->instr != CPI_NONE)
		return st->copy_plan;
	cp = anew(e->a, CopyPlan);
	if (st->copy_plan)
		*cp = *st->copy_plan;
	else if (lw_plan_vector(e, st, cp))
		return NULL;
	if (lw_plan_copy(e, st, cp))
		return NULL;
	return cp;
}

/* can x be evaluated at the run's first point outside the body (no let of the body: those
 * are declared per point; no load unless loads)? */
static int
hoistable(const IrExpr *x, int loads)
{
	int i;

	if (!x)
		return 1;
	switch (x->kind) {
	case IE_VAR: return x->u.var->kind != VAR_LET;
	case IE_LOAD:
		if (!loads)
			return 0;
		for (i = 0; i < x->u.load.n; i++)
			if (!hoistable(x->u.load.idx[i], loads))
				return 0;
		return 1;
	case IE_UNARY: return hoistable(x->u.un.a, loads);
	case IE_BINARY: return hoistable(x->u.bin.a, loads) && hoistable(x->u.bin.b, loads);
	case IE_SELECT:
		return hoistable(x->u.sel.c, loads) && hoistable(x->u.sel.a, loads) && hoistable(x->u.sel.b, loads);
	case IE_CAST: return hoistable(x->u.cast.a, loads);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (!hoistable(x->u.call.args[i], loads))
				return 0;
		return 1;
	default: return 1;
	}
}

/* the global loads of value x (not those inside an index: a gather's index load stays an
 * element load), appended to ls (counted in *n; ls NULL: counted only) */
static void
globloads(const Em *e, const IrExpr *x, const IrExpr **ls, int *n)
{
	int i;

	if (!x)
		return;
	switch (x->kind) {
	case IE_LOAD:
		if (e->k->bufs[x->u.load.buf].scope == MEM_GLOBAL) {
			if (ls)
				ls[*n] = x;
			++*n;
		}
		return;
	case IE_UNARY: globloads(e, x->u.un.a, ls, n); return;
	case IE_BINARY: globloads(e, x->u.bin.a, ls, n), globloads(e, x->u.bin.b, ls, n); return;
	case IE_SELECT:
		globloads(e, x->u.sel.c, ls, n), globloads(e, x->u.sel.a, ls, n), globloads(e, x->u.sel.b, ls, n);
		return;
	case IE_CAST: globloads(e, x->u.cast.a, ls, n); return;
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			globloads(e, x->u.call.args[i], ls, n);
		return;
	default: return;
	}
}

/* the global loads of a straight-line body (count in *n) */
static const IrExpr **
body_loads(Em *e, const IrStmt *body, int *n)
{
	const IrExpr **ls;
	const IrStmt *b;
	int pass, cnt = 0;

	for (ls = NULL, pass = 0; pass < 2; pass++) {
		for (cnt = 0, b = body; b; b = b->next)
			globloads(e, b->kind == S_STORE ? b->u.store.value : b->kind == S_LET || b->kind == S_SET
				  ? b->u.let.value : NULL, ls, &cnt);
		if (!pass)
			ls = anewn(e->a, const IrExpr *, cnt + 1);
	}
	*n = cnt;
	return ls;
}

/* does expression y contain the node x? */
static int
holds(const IrExpr *y, const IrExpr *x)
{
	int i;

	if (!y)
		return 0;
	if (y == x)
		return 1;
	switch (y->kind) {
	case IE_LOAD:
		for (i = 0; i < y->u.load.n; i++)
			if (holds(y->u.load.idx[i], x))
				return 1;
		return 0;
	case IE_UNARY: return holds(y->u.un.a, x);
	case IE_BINARY: return holds(y->u.bin.a, x) || holds(y->u.bin.b, x);
	case IE_SELECT: return holds(y->u.sel.c, x) || holds(y->u.sel.a, x) || holds(y->u.sel.b, x);
	case IE_CAST: return holds(y->u.cast.a, x);
	case IE_CALL:
		for (i = 0; i < y->u.call.n; i++)
			if (holds(y->u.call.args[i], x))
				return 1;
		return 0;
	default: return 0;
	}
}

/*
 * Why load x of nest st's body cannot be read before the run for the stores into its tensor
 * (NULL: it can). The run's points are all loaded before any is computed. A store after the
 * load (in a later statement, or the load's own) is then still after it in its own point,
 * and another point's store is never of an element this point reads (that would be a data
 * race, which a nest may not have: docs/semantics.md); a store before the load may be of the
 * point's own element, which the load must see. Atomics are not read around.
 */
static const char *
stored_why(Em *e, const IrStmt *st, const IrExpr *x)
{
	const IrBuffer *B = &e->k->bufs[x->u.load.buf];
	const IrStmt *b;
	int seen = 0;

	for (b = st->u.par.body; b; b = b->next) {
		seen |= holds(b->kind == S_STORE ? b->u.store.value : b->kind == S_LET || b->kind == S_SET
			      ? b->u.let.value : NULL, x);
		if (b->kind != S_STORE || b->u.store.buf != x->u.load.buf)
			continue;
		if (b->u.store.atomic)
			return arena_printf(e->a, "'%s' is updated atomically in the nest", B->name);
		if (!seen)
			return arena_printf(e->a, "'%s' is stored in the nest before it is read", B->name);
	}
	return NULL;
}

/*
 * The points per access (at most cap) of global load x in runs along variable vars[k]: its
 * last index walks the variable with stride 1 from a multiple of the width
 * (lw_contig_access), its other indices stay put along the run, it moves 4 bytes or more,
 * the strides allow it (lw_stridevec), and the nest's stores into the tensor cannot be seen
 * by another point's read (stored_why). Its indices are evaluated at the run's first point
 * before the run: no let of the body, no load. 1 with *why when element by element.
 */
static int
loadvec(Em *e, const IrStmt *st, const IrExpr *x, int k, int cap, const char **why)
{
	const IrBuffer *B = &e->k->bufs[x->u.load.buf];
	IrExpr *const *idx = x->u.load.idx;
	int n = x->u.load.n, eb = (int)dtype_bytes(B->dtype), v, d;
	const IrVar *var = st->u.par.vars[k];

	if ((*why = stored_why(e, st, x)))
		return 1;
	if (B->dtype == DT_BOOL || !(eb == 1 || eb == 2 || eb == 4))
		return *why = arena_printf(e->a, "'%s' has %d-byte elements", B->name, eb), 1;
	for (d = 0; d < n; d++)
		if (!hoistable(idx[d], 0))
			return *why = arena_printf(e->a, "an index of '%s' reads a let or a load", B->name), 1;
	if (!lw_contig_access(B, n, idx, var, 1))
		return *why = arena_printf(e->a, "the last index of '%s' does not walk '%s' alone with "
					   "stride 1", B->name, var->name), 1;
	if (cap > vecbytes(e) / eb)
		cap = vecbytes(e) / eb;
	for (v = cap; v > 1 && (v * eb < 4 || !lw_contig_access(B, n, idx, var, v) ||
				lw_stridevec(e, B, v, NULL) < v); v /= 2)
		;
	if (v > 1 && v * eb >= 4)
		return v;
	if (cap * eb < 4)
		return *why = arena_printf(e->a, "a run of '%s' is under 4 bytes", B->name), 1;
	if (B->strides && lw_stridevec(e, B, cap, why) < cap && *why)
		return 1;
	return *why = arena_printf(e->a, "the runs of '%s' do not start at a multiple of %d", B->name,
				   4 / eb > 1 ? 4 / eb : 2), 1;
}

/*
 * The vector loads of nest st along vars[*k] (chosen here when no store chose it: the
 * first load whose last index walks a variable, *run set), cap points per access at most.
 * Returns the widest width; np->vld, vldw, nvld, lwhy set.
 */
static int
plan_nestloads(Em *e, const IrStmt *st, NestPlan *np, int *k, int *run, int cap)
{
	IrVar *const *vars = st->u.par.vars;
	const IrExpr **ls;
	const char *why;
	int nl, i, d, w, best = 1;
	Buf b;

	ls = body_loads(e, st->u.par.body, &nl);
	np->vld = anewn(e->a, const IrExpr *, nl + 1);
	np->vldw = anewn(e->a, int, nl + 1);
	np->nvld = 0, np->lwhy = NULL;
	for (i = 0; *k < 0 && i < nl; i++)
		for (d = st->u.par.n - 1; *k < 0 && d >= 0; d--)
			if (lw_contig_access(&e->k->bufs[ls[i]->u.load.buf], ls[i]->u.load.n, ls[i]->u.load.idx,
					     vars[d], 1)) {
				*k = d;
				*run = lw_fragrun(np->frag, np->coord, np->slots, d, vecbytes(e));
			}
	buf_init(&b);
	for (i = 0; i < nl; i++) {
		why = NULL;
		if (*k < 0)
			why = "no load walks a loop variable contiguously";
		else if (*run < 2)
			why = arena_printf(e->a, "the loop layout holds no runs of '%s' in consecutive slots",
					   vars[*k]->name);
		w = why ? 1 : loadvec(e, st, ls[i], *k, cap < *run ? cap : *run, &why);
		if (w > 1) {
			np->vld[np->nvld] = ls[i], np->vldw[np->nvld++] = w;
			best = w > best ? w : best;
		} else if (why && !strstr(buf_str(&b), why)) {
			buf_printf(&b, "%s%s", b.len ? "; " : "", why);
		}
	}
	if (b.len)
		np->lwhy = arena_strdup(e->a, buf_str(&b));
	buf_free(&b);
	return best;
}

/*
 * The vector stores and loads of parallel nest st: a global store whose last index walks one
 * loop variable with stride 1 from a multiple of the run (lw_contig_access), into a buffer
 * the body neither reads nor stores elsewhere, in a body of top-level stores and lets, when
 * the loop layout gives every thread runs of that variable in consecutive slots
 * (lw_fragrun) and the layout is neither padded nor replicated. The rows must be whole
 * vectors too: proven, or checked at run time by the lowering (lw_veccond). The global loads
 * of the body along the same variable are read once per run (plan_nestloads), at the
 * stores' run or narrower (several accesses per run); with no vector store the widest load
 * sets the run.
 */
int
lw_plan_nestvec(Em *e, const IrStmt *st, NestPlan *np)
{
	const IrStmt *b, *c;
	IrVar *const *vars = st->u.par.vars;
	int n = st->u.par.n, k = -1, d, run = 1, maxv = 16, nv = 0, cnt, misaligned = 0, lv;
	const char *swhy = NULL, *why = NULL, *rwhy = NULL, *lwhy = NULL;
	const IrStmt **cand;

	np->vec = 1, np->vdim = 0, np->vst = NULL, np->nvst = 0;
	np->vld = NULL, np->vldw = NULL, np->nvld = 0, np->lwhy = NULL;
	if (np->pad)
		return np->vwhy = "the loop layout is padded", 0;
	if (np->frag->rep > 1)
		return np->vwhy = "the loop layout is replicated", 0;
	for (b = st->u.par.body, cnt = 0; b; b = b->next, cnt++)
		if (b->kind != S_STORE && b->kind != S_LET && b->kind != S_SET && b->kind != S_ASSUME)
			return np->vwhy = "the body is not straight-line stores and lets", 0;
	cand = anewn(e->a, const IrStmt *, cnt + 1);
	for (b = st->u.par.body; b; b = b->next) {
		const IrBuffer *B;
		int eb, ok, v;

		if (b->kind != S_STORE)
			continue;
		B = &e->k->bufs[b->u.store.buf];
		eb = (int)dtype_bytes(B->dtype);
		/* an atomic is one read-modify-write per point (lower_atomic.c), never a vector store */
		if (B->scope != MEM_GLOBAL || !(eb == 1 || eb == 2 || eb == 4) || b->u.store.atomic)
			continue;
		if (lw_body_reads(st->u.par.body, b->u.store.buf)) {
			rwhy = rwhy ? rwhy : arena_printf(e->a, "the nest reads '%s', which it stores", B->name);
			continue;
		}
		for (ok = 1, c = st->u.par.body; c; c = c->next)
			if (c != b && c->kind == S_STORE && c->u.store.buf == b->u.store.buf)
				ok = 0;
		/* the run is stored after its points, where the body's lets are not declared */
		for (d = 0; ok && d < b->u.store.n; d++)
			if (!hoistable(b->u.store.idx[d], 1)) {
				ok = 0;
				lwhy = lwhy ? lwhy : arena_printf(e->a, "an index of '%s' reads a let of the body", B->name);
			}
		if (!ok)
			continue;
		for (d = n - 1; d >= 0; d--)
			if ((k < 0 || d == k) && lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[d], 1))
				break;
		if (d < 0)
			continue;
		if (k < 0) {
			k = d;
			run = lw_fragrun(np->frag, np->coord, np->slots, k, vecbytes(e));
		}
		/* a strided tensor: its memory must be contiguous along the index too (a last
		 * stride of 1, constant strides multiples of v: lw_stridevec) */
		for (v = run < vecbytes(e) / eb ? run : vecbytes(e) / eb; v > 1 && (v * eb < 4 ||
		     !lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[k], v) ||
		     lw_stridevec(e, B, v, NULL) < v); v /= 2)
			;
		/* a strided tensor: the last stride 1 and the others multiples of v */
		if (v > 1 && B->strides)
			v = lw_stridevec(e, B, v, &swhy);
		if (v > 1 && v * eb < 4)
			v = 1;
		if (v < 2) {
			misaligned |= run > 1 && !lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[k], 2);
			continue;
		}
		if (v < maxv)
			maxv = v;
		cand[nv++] = b;
	}
	if (k < 0)
		why = rwhy ? rwhy : lwhy ? lwhy : "no global store walks a loop variable contiguously";
	else if (run < 2)
		why = arena_printf(e->a, "the loop layout holds no runs of '%s' in consecutive slots", vars[k]->name);
	else if (!nv && swhy)
		why = swhy;
	else if (!nv)
		why = misaligned ? "the stores' runs do not start at a multiple of the run"
		      : "no store moves at least 4 bytes per run";
	/* one run for the nest, the narrowest store's: a store stays a vector at it when it
	 * still moves 4 bytes or more (aligned at a wider run, it is at a narrower one) */
	for (cnt = 0, d = 0; d < nv; d++)
		if ((int)dtype_bytes(e->k->bufs[cand[d]->u.store.buf].dtype) * maxv >= 4)
			cand[cnt++] = cand[d];
	nv = cnt;
	lv = plan_nestloads(e, st, np, &k, &run, nv ? maxv : vecbytes(e));
	if (!nv && lv < 2)
		return np->vwhy = why, 0;
	np->vec = nv ? maxv : lv, np->vdim = k, np->vst = cand, np->nvst = nv, np->vwhy = nv ? NULL : why;
	return 0;
}

static int
vec_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;
	CopyPlan *cp;

	if (s->kind == S_PARALLEL && s->nest_plan)
		return lw_plan_nestvec(e, s, (NestPlan *)s->nest_plan);
	if (s->kind != S_COPY)
		return 0;
	cp = anew(e->a, CopyPlan);
	if (lw_plan_vector(e, s, cp))
		return err_loc(e->err, s->loc);
	s->copy_plan = cp;
	return 0;
}

int
plan_vectors(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	Em e;
	int b;

	if (lw_setup(&e, a, t, k, err))
		return -1;
	for (b = 0; b < k->nbuf; b++)
		if (e.frag[b])
			lw_tilevec(&e, b);
	return ir_walk(k->body, vec_visit, &e);
}
