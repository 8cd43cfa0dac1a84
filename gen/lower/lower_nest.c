/*
 * lower_nest.c: parallel nests and element stores. A nest runs over the slots
 * of its loop layout (the fragment inverse in closed form); locals are read
 * and written at the slots the thread owns; with a replicated layout replica
 * 0 alone stores to memory (between barriers when the nest also reads what it
 * stores); statements outside nests store from thread 0.
 */
#include "lw.h"

typedef struct SlotCtx {
	int64_t pad;
	int same;
} SlotCtx;

static int
slot_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	SlotCtx *c = ctx;
	int p;

	(void)first;
	for (p = 0; p < npts; p++) {
		if (c->pad && vals[1][p] >= c->pad)
			continue;   /* a padded point: guarded off */
		if (vals[0][p] != coord[1][p]) {
			c->same = 0;
			return 1;
		}
	}
	return 0;
}

/* is the slot expression s at every point of the nest that is not padded off? Proved from
 * the digits, else walked with the compiled evaluator, else (lw_reference_walks, or an
 * evaluation that fails) by iexpr_eval per point */
static int
slot_is_s(Em *e, IExpr *const *pc, IExpr *slot)
{
	static const int ids[2] = {1, 0};
	int64_t vals[IEXPR_NVARS] = {0}, v, shape[2];
	IExpr *es[2];
	SlotCtx c;
	int same = 1, r;

	shape[0] = e->k->threads, shape[1] = e->parS;
	if (!lw_reference_walks) {
		if (layout_aff_equal_(shape, ids, 2, slot, iexpr_var(e->a, 0)))
			return 1;
		es[0] = slot, es[1] = pc[0];
		c.pad = e->parpad, c.same = 1;
		r = layout_enumerate(shape, ids, 2, es, e->parpad ? 2 : 1, slot_visit, &c, NULL);
		if (r == 0 || (r == 1 && !c.same))
			return c.same;
	}
	for (vals[1] = 0; same && vals[1] < e->k->threads; vals[1]++)
		for (vals[0] = 0; same && vals[0] < e->parS; vals[0]++) {
			if (e->parpad && (iexpr_eval(pc[0], vals, &v, NULL) || v >= e->parpad))
				continue;   /* a padded point: guarded off */
			if (iexpr_eval(slot, vals, &v, NULL) || v != vals[0])
				same = 0;
		}
	return same;
}

/* the slot of local buffer buf at the nest's coordinates, as an expression in
 * (s, tid), checked to be owned by the thread; NULL if the indices are not plain loop vars */
char *
lw_parslot(Em *e, const IrStmt *par, IExpr *const *pc, int buf, int n, IrExpr *const *idx)
{
	const Fragment *F = e->frag[buf];
	IExpr *sub[IEXPR_NVARS] = {0}, *slot;
	IDom dom = {{0}};
	int d, i;

	if (!F || n != F->nin)
		return NULL;
	for (d = 0; d < n; d++) {
		if (idx[d]->kind != IE_VAR)
			return NULL;
		for (i = 0; i < par->u.par.n; i++)
			if (par->u.par.vars[i] == idx[d]->u.var)
				break;
		if (i == par->u.par.n)
			return NULL;
		sub[d] = pc[i];
	}
	dom.ext[0] = e->parS;
	dom.ext[1] = e->k->threads;
	if (!(slot = iexpr_subst(e->a, F->fwd[0], sub, &dom)))
		return NULL;
	/* the usual case: the buffer and the nest share the layout, the slot is s */
	if (slot_is_s(e, pc, slot))
		return "s";
	return lw_ixstr(e, slot, lw_slotnames);
}

/* check that the nest's thread for every (s, tid) owns the local element (some
 * replica of it: a table of the elements each thread holds, from the inverse).
 * The reference walk: iexpr_eval per point */
static int
owned_ref(Em *e, const Fragment *LF, IExpr *const *pc, int64_t S, int buf, int n, const int *perm,
	  Held *held, unsigned char *any, int is_store)
{
	const Fragment *F = e->frag[buf];
	int64_t vals[IEXPR_NVARS] = {0}, x, t, s, y, k;
	int d;

	for (t = 0; t < LF->nthreads; t++)
		for (s = 0; s < S; s++) {
			vals[0] = s, vals[1] = t, y = 0;
			if (e->parpad) {
				if (iexpr_eval(pc[0], vals, &x, e->err))
					return -1;
				if (x >= e->parpad)
					continue;   /* a padded point: guarded off */
			}
			for (d = 0; d < n; d++) {
				if (iexpr_eval(pc[perm[d]], vals, &x, e->err))
					return -1;
				y = y * F->in_shape[d] + x;
			}
			if (t >= F->nthreads || lw_held_by(held, y, t) < 0)
				return err_set(e->err, "local '%s': an element is used by thread %lld of the "
					       "parallel nest, which does not hold it (layouts disagree)",
					       e->k->bufs[buf].name, (long long)t);
			if (is_store) {
				for (k = 0; k < held->cnt[y]; k++)
					if (held->thr[y * held->R + k] == t)
						held->mark[y * held->R + k] = 1;
				any[y] = 1;
			}
		}
	return 0;
}

typedef struct OwnCtx {
	Em *e;
	const Fragment *F;
	Held *held;
	unsigned char *any;
	int buf, n, is_store, off;      /* off: vals[0] is the pad coordinate */
	int failed;
	int64_t last_t, last_y;         /* the last pair checked (-1: none) */
	int32_t *seen;                  /* [nseen]: the last thread + 1 that checked element y */
	int64_t nseen;
} OwnCtx;

static int
own_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	OwnCtx *c = ctx;
	Held *h = c->held;
	int64_t y, t, k;
	int p, d;

	(void)first;
	for (p = 0; p < npts; p++) {
		if (c->off && vals[0][p] >= c->e->parpad)
			continue;   /* a padded point: guarded off */
		t = coord[0][p];
		if (c->n == 1) {
			y = vals[c->off][p];
		} else {
			for (y = 0, d = 0; d < c->n; d++)
				y = y * c->F->in_shape[d] + vals[c->off + d][p];
		}
		/* a pair checked before (a row vector's slots of one row): checked, and marked.
		 * The threads are the outer dim, so seen[y] == t + 1 means this thread did y */
		if (t == c->last_t && y == c->last_y)
			continue;
		if (c->seen && y >= 0 && y < c->nseen && t >= 0 && t < INT32_MAX) {
			if (c->seen[y] == t + 1)
				continue;
			c->seen[y] = (int32_t)(t + 1);
		}
		c->last_t = t, c->last_y = y;
		if (t >= c->F->nthreads || (k = lw_held_by(h, y, t)) < 0) {
			c->failed = 1;
			return err_set(c->e->err, "local '%s': an element is used by thread %lld of the "
				       "parallel nest, which does not hold it (layouts disagree)",
				       c->e->k->bufs[c->buf].name, (long long)t);
		}
		if (c->is_store) {
			for (; k < y * h->R + h->cnt[y] && h->thr[k] == t; k++)
				h->mark[k] = 1;
			c->any[y] = 1;
		}
	}
	return 0;
}

/* the nest runs over the buffer's own (thread, slot) pairs: the same threads and slots, the
 * indices the nest's variables in order, each coordinate the buffer's (proved equal over
 * the pairs), and the same pairs padded off. Then each point is its element at the pair
 * that holds it, and a store writes every replica: owned() holds without a walk */
static int
same_points(Em *e, const Fragment *LF, IExpr *const *pc, int64_t S, int buf, int n, const int *perm)
{
	static const int ids[2] = {1, 0};
	const Fragment *F = e->frag[buf];
	IExpr **co = e->coord[buf];
	int64_t shape[2];
	int d;

	if (n != F->nin || LF->nthreads != F->nthreads || S != e->slots[buf] ||
	    (e->pad[buf] ? e->parpad != F->in_shape[0] : e->parpad != 0))
		return 0;
	shape[0] = F->nthreads, shape[1] = S;
	for (d = 0; d < n; d++)
		if (perm[d] != d ||
		    (pc[d] != co[d] && !iexpr_same(pc[d], co[d]) && !layout_aff_equal_(shape, ids, 2, pc[d], co[d])))
			return 0;
	return 1;
}

/* lw_heldtab(e, buf) cannot fail: within the enumeration limits, not padded, and the
 * coordinates (x..., rep) over (thread, slot) proved injective and inside the tile and
 * its replicas, so that every element has at most rep holders */
static int
held_sure(Em *e, int buf)
{
	static const int ids[2] = {1, 0};
	const Fragment *F = e->frag[buf];
	IExpr **co = e->coord[buf];
	int64_t NY = layout_size(F), pairs, x, shape[2], lo, hi;
	int d;

	if (e->pad[buf] || F->nin + 1 > 2 * LAYOUT_MAXDIM + 2 || ck_mul(NY, F->rep, &pairs) ||
	    pairs > layout_enum_limit() || ck_mul(F->nthreads, e->slots[buf], &x) || x > layout_enum_limit())
		return 0;
	shape[0] = F->nthreads, shape[1] = e->slots[buf];
	if (!layout_aff_injective_(shape, ids, 2, co, F->nin + 1))
		return 0;
	for (d = 0; d <= F->nin; d++)
		if (!layout_aff_range_(shape, ids, 2, co[d], &lo, &hi) || lo < 0 ||
		    hi >= (d < F->nin ? F->in_shape[d] : F->rep))
			return 0;
	return 1;
}

/* 0 when every index of the access is the nest variable of its position (perm identity) */
static int
indices_vars(Em *e, const IrStmt *par, int buf, int n, IrExpr *const *idx)
{
	int d;

	(void)e, (void)buf;
	if (n > par->u.par.n)
		return -1;
	for (d = 0; d < n; d++)
		if (idx[d]->kind != IE_VAR || par->u.par.vars[d] != idx[d]->u.var)
			return -1;
	return 0;
}

static const int identity[IR_MAXDIM] = {0, 1, 2, 3, 4, 5, 6, 7};

static int
owned(Em *e, const IrStmt *par, const Fragment *LF, IExpr *const *pc, int64_t S, int buf,
      int n, IrExpr *const *idx, int is_store)
{
	static const int ids[2] = {1, 0};       /* thread (_j) outer, slot (_i) inner */
	const Fragment *F = e->frag[buf];
	int64_t y, k, NY = layout_size(F), shape[2];
	unsigned char *any = NULL;
	IExpr *es[IR_MAXDIM + 1];
	int perm[IR_MAXDIM], d, i, m;
	Held *held;
	OwnMemo *om;
	OwnCtx c;

	if (!(lw_reference_walks || e->heldc[buf] || !held_sure(e, buf)) && !indices_vars(e, par, buf, n, idx) &&
	    same_points(e, LF, pc, S, buf, n, identity)) {
		memcpy(perm, identity, sizeof perm);
		goto passed;
	}
	if (!(held = lw_heldtab(e, buf)))
		return -1;
	/* the check below walks the nest's coordinates: every index must be a nest variable */
	for (d = 0; d < n; d++) {
		for (i = 0; i < par->u.par.n; i++)
			if (idx[d]->kind == IE_VAR && par->u.par.vars[i] == idx[d]->u.var)
				break;
		if (i == par->u.par.n && is_store)
			return err_set(e->err, "local '%s': the parallel nest stores into it at index %d, which is not "
				       "one of the nest's variables, so the element may be held by another thread "
				       "(a store into another thread's registers is not lowered); store at the "
				       "nest's variables, or into a shared buffer", e->k->bufs[buf].name, d);
		if (i == par->u.par.n)
			return err_set(e->err, "local '%s': index %d in the parallel nest is not one of the nest's "
				       "variables (not lowered yet)", e->k->bufs[buf].name, d);
		perm[d] = i;
	}
	/* the same check passed before in this lowering (the body is lowered up to three times) */
	for (m = 0; m < e->nown && n <= IR_MAXDIM; m++) {
		om = &e->own[m];
		if (om->par == par && om->buf == buf && om->is_store == is_store && om->n == n &&
		    om->LF == LF && om->pc == pc && om->S == S && om->pad == e->parpad &&
		    !memcmp(om->perm, perm, sizeof perm[0] * (size_t)n))
			return 0;
	}
	if (!lw_reference_walks && same_points(e, LF, pc, S, buf, n, perm))
		goto passed;
	if (is_store)
		any = anewn(e->a, unsigned char, NY);
	c.e = e, c.F = F, c.held = held, c.any = any, c.buf = buf, c.n = n, c.is_store = is_store;
	c.off = e->parpad != 0, c.failed = 0, c.last_t = c.last_y = -1;
	c.nseen = NY <= 4096 ? NY : 0;
	c.seen = c.nseen ? anewn(e->a, int32_t, c.nseen) : NULL;
	if (c.off)
		es[0] = pc[0];
	for (d = 0; d < n && d < IR_MAXDIM; d++)
		es[c.off + d] = pc[perm[d]];
	shape[0] = LF->nthreads, shape[1] = S;
	if (lw_reference_walks || n > IR_MAXDIM || c.off + n < 1 ||
	    layout_enumerate(shape, ids, 2, es, c.off + n, own_visit, &c, NULL)) {
		if (c.failed)
			return -1;
		/* not compiled: the reference walk, from clear marks */
		if (is_store) {
			memset(held->mark, 0, (size_t)(held->NY * held->R));
			memset(any, 0, (size_t)NY);
		}
		if (owned_ref(e, LF, pc, S, buf, n, perm, held, any, is_store))
			return -1;
	}
	/* a store must reach every replica of what it writes */
	for (y = 0; is_store && y < NY; y++)
		for (k = 0; any[y] && k < held->cnt[y]; k++)
			if (!held->mark[y * held->R + k])
				return err_set(e->err, "local '%s': thread %lld holds a replica of an element the "
					       "parallel nest writes but does not write it there (the nest's "
					       "layout must cover every replica)", e->k->bufs[buf].name,
					       (long long)held->thr[y * held->R + k]);
passed:
	if (e->nown == e->capown) {
		OwnMemo *nw = anewn(e->a, OwnMemo, (size_t)(2 * e->capown + 8));

		if (!nw)
			return 0;
		if (e->nown)
			memcpy(nw, e->own, sizeof *nw * (size_t)e->nown);
		e->own = nw, e->capown = 2 * e->capown + 8;
	}
	om = &e->own[e->nown++];
	memset(om, 0, sizeof *om);
	om->par = par, om->buf = buf, om->is_store = is_store, om->n = n, om->LF = LF, om->pc = pc;
	om->S = S, om->pad = e->parpad;
	memcpy(om->perm, perm, sizeof perm[0] * (size_t)n);
	return 0;
}

/* rewrite local accesses of a parallel body through the nest coordinates */
typedef struct ParCtx {
	const IrStmt *par;
	const Fragment *LF;
	IExpr **pc;
	int64_t S;
} ParCtx;

static int
parexpr(Em *e, ParCtx *pcx, const IrExpr *x)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		if (e->staged && e->staged[x->u.load.buf] &&
		    (e->stagedrw[x->u.load.buf] || lw_stage_vars(pcx->par, x->u.load.n, x->u.load.idx)))
			return 0;   /* through shared memory, or a tile every thread holds whole */
		if (e->k->bufs[x->u.load.buf].scope == MEM_LOCAL &&
		    owned(e, pcx->par, pcx->LF, pcx->pc, pcx->S, x->u.load.buf, x->u.load.n, x->u.load.idx, 0))
			return -1;
		return 0;
	case IE_UNARY: return parexpr(e, pcx, x->u.un.a);
	case IE_BINARY: return parexpr(e, pcx, x->u.bin.a) || parexpr(e, pcx, x->u.bin.b) ? -1 : 0;
	case IE_SELECT:
		return parexpr(e, pcx, x->u.sel.c) || parexpr(e, pcx, x->u.sel.a) ||
		       parexpr(e, pcx, x->u.sel.b) ? -1 : 0;
	case IE_CAST: return parexpr(e, pcx, x->u.cast.a);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (parexpr(e, pcx, x->u.call.args[i]))
				return -1;
		return 0;
	default: return 0;
	}
}

/* does expression x read buffer buf? */
static int
expr_reads(const IrExpr *x, int buf)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		if (x->u.load.buf == buf)
			return 1;
		for (i = 0; i < x->u.load.n; i++)
			if (expr_reads(x->u.load.idx[i], buf))
				return 1;
		return 0;
	case IE_UNARY: return expr_reads(x->u.un.a, buf);
	case IE_BINARY: return expr_reads(x->u.bin.a, buf) || expr_reads(x->u.bin.b, buf);
	case IE_SELECT:
		return expr_reads(x->u.sel.c, buf) || expr_reads(x->u.sel.a, buf) || expr_reads(x->u.sel.b, buf);
	case IE_CAST: return expr_reads(x->u.cast.a, buf);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (expr_reads(x->u.call.args[i], buf))
				return 1;
		return 0;
	default: return 0;
	}
}

/* does a parallel nest's body (with what it nests) read buffer buf? */
int
lw_body_reads(const IrStmt *s, int buf)
{
	int i;

	for (; s; s = s->next)
		switch (s->kind) {
		case S_STORE:
			if (expr_reads(s->u.store.value, buf))
				return 1;
			for (i = 0; i < s->u.store.n; i++)
				if (expr_reads(s->u.store.idx[i], buf))
					return 1;
			break;
		case S_LET: case S_SET:
			if (expr_reads(s->u.let.value, buf))
				return 1;
			break;
		case S_IF:
			if (expr_reads(s->u.cond.cond, buf) || lw_body_reads(s->u.cond.then, buf) ||
			    lw_body_reads(s->u.cond.els, buf))
				return 1;
			break;
		default: break;
		}
	return 0;
}

/* the first store into buf nested in an if of body s (NULL when every one is at its top level) */
static const IrStmt *
nested_store(const IrStmt *s, int buf, int depth)
{
	const IrStmt *r;

	for (; s; s = s->next) {
		if (s->kind == S_STORE && s->u.store.buf == buf && depth)
			return s;
		if (s->kind == S_IF && ((r = nested_store(s->u.cond.then, buf, depth + 1)) ||
					(r = nested_store(s->u.cond.els, buf, depth + 1))))
			return r;
	}
	return NULL;
}

static int
stores_into(const IrStmt *s, int buf)
{
	for (; s; s = s->next)
		if ((s->kind == S_STORE && s->u.store.buf == buf) ||
		    (s->kind == S_IF && (stores_into(s->u.cond.then, buf) || stores_into(s->u.cond.els, buf))))
			return 1;
	return 0;
}

/*
 * A replicated loop layout runs each point in several threads and replica 0 alone
 * stores shared and global elements. When the body also reads a buffer it stores
 * into, the other replicas' reads of the point's element must come before replica
 * 0's store and their reads after it must see the new value: each such store is
 * done between two barriers (iterations of a nest are independent, docs/semantics.md,
 * so one point's store only meets the replicas of that point). The barriers need
 * every thread of the block in the loop: the store must be at the top of the body
 * and the layout must span the block.
 */
int
lw_plan_parsync(Em *e, const IrStmt *st, const Fragment *LF, int64_t S, unsigned char *sync)
{
	int64_t ext[IR_MAXDIM], pts = 1, nrep;
	int b, n = nest_shape(st, ext), i;
	const IrStmt *bad;

	for (i = 0; i < n; i++)
		pts *= ext[i];
	nrep = pts > 0 ? LF->nthreads * S / pts : LF->rep;   /* threads per point */
	for (b = 0; b < e->k->nbuf; b++) {
		const IrBuffer *B = &e->k->bufs[b];

		if (B->scope == MEM_LOCAL || !stores_into(st->u.par.body, b) || !lw_body_reads(st->u.par.body, b))
			continue;
		if ((bad = nested_store(st->u.par.body, b, 0))) {
			err_loc(e->err, bad->loc);
			return err_set(e->err, "a parallel nest whose loop layout is replicated (%lld threads run "
				       "each point) reads %s '%s' and stores into it inside an if: the store "
				       "needs barriers around it, which threads skipping the if would not "
				       "reach; write the store outside the if (with select(...))",
				       (long long)nrep, B->scope == MEM_SHARED ? "shared" : "tensor", B->name);
		}
		if (LF->nthreads < e->k->threads)
			return err_set(e->err, "a parallel nest whose loop layout is replicated (%lld threads run "
				       "each point) over %lld of the block's %d threads reads '%s' and stores "
				       "into it: the store needs barriers that the other threads would not reach",
				       (long long)nrep, (long long)LF->nthreads, (int)e->k->threads, B->name);
		sync[b] = 1;
	}
	return 0;
}

/* the coordinates of the nest's point at slot s (render_c leaves out those the body does not
 * read: most points are read through the fragment's slot s) */
static void
par_coords(Em *e, const IrStmt *st, IExpr **pc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		lw_decl_ix(e, lw_vname(e, st->u.par.vars[i]), pc[i], lw_slotnames);
}

/* the vector stores of a run (plan-vectors): the values of its vec points, kept in
 * tl_v<q>[tl_r], stored as one access at the run's first point */
static void
par_vstores(Em *e, const NestPlan *vp)
{
	int q, r, eb, words, w;
	char *vals[16], *g;
	Buf b, a;

	buf_init(&b);
	buf_init(&a);
	for (q = 0; q < vp->nvst; q++) {
		const IrStmt *st = vp->vst[q];
		const IrBuffer *B = &e->k->bufs[st->u.store.buf];

		eb = (int)dtype_bytes(B->dtype);
		words = vp->vec * eb / 4;
		for (r = 0; r < vp->vec; r++)
			vals[r] = arena_printf(e->a, "tl_v%d[%d]", q, r);
		buf_reset(&b);
		if (words == 1) {
			lw_packword(&b, B->dtype, vals, 0);
		} else {
			buf_printf(&b, "make_uint%d(", words);
			for (w = 0; w < words; w++) {
				if (w)
					buf_puts(&b, ", ");
				lw_packword(&b, B->dtype, vals, w);
			}
			buf_putc(&b, ')');
		}
		buf_reset(&a);
		lw_access(e, &a, st->u.store.buf, st->u.store.n, st->u.store.idx);
		/* the run starts at a multiple of vec in a row of whole vectors: its first point
		 * in range means every point is */
		g = lw_elemguard(e, B, st->u.store.n, st->u.store.idx);
		if (g)
			lw_open_if(e, g, 1, 1);
		lw_assign(e, LM_GLOBAL, st->u.store.buf, vp->vec * eb,
			  arena_printf(e->a, "*(%s *)(&%s)", lw_vtype(vp->vec * eb), buf_str(&a)), buf_str(&b));
		if (g)
			lw_pop(e);
	}
	buf_free(&a);
	buf_free(&b);
}

/*
 * The vector loads of a run (plan-vectors): load q's vec points read as vec / w accesses of
 * w elements at the run's points m * w and unpacked into tl_l<q>[] in point order, which the
 * body's load reads at its point tl_r. A run starts at a multiple of w in a row of whole
 * w-vectors (the plan, lw_veccond) and only the loop variable moves along it: its first
 * point in range means every point is, and out of range every point reads zero
 * (docs/semantics.md).
 */
static void
par_vloads(Em *e, const IrStmt *st, IExpr **pc, int n, const NestPlan *vp)
{
	int q, m, r, eb, w, words;
	LNode *gi, *ld;
	char *g;
	Buf a;

	buf_init(&a);
	for (q = 0; q < vp->nvld; q++) {
		const IrExpr *x = vp->vld[q];
		const IrBuffer *B = &e->k->bufs[x->u.load.buf];

		eb = (int)dtype_bytes(B->dtype), w = vp->vldw[q], words = w * eb / 4;
		lw_decl(e, 0, lw_ctype(B->dtype), arena_printf(e->a, "tl_l%d", q), vp->vec, NULL, NULL);
		for (m = 0; m < vp->vec / w; m++) {
			lw_open_block(e, arena_printf(e->a, "'%s' at the run's points %d..%d: one %d-byte load", B->name,
						      m * w, m * w + w - 1, w * eb));
			lw_decl(e, 1, "int", "s", 0, m ? arena_printf(e->a, "tl_g + %d", m * w) : "tl_g", NULL);
			par_coords(e, st, pc, n);
			g = lw_elemguard(e, B, x->u.load.n, x->u.load.idx);
			gi = g ? lw_open_if(e, g, 0, 1) : NULL;
			buf_reset(&a);
			lw_access(e, &a, x->u.load.buf, x->u.load.n, x->u.load.idx);
			ld = lw_add(e, L_LOAD);
			ld->u.load.vtype = lw_vtype(w * eb), ld->u.load.name = "tl_w";
			ld->u.load.addr = arena_printf(e->a, "&%s", buf_str(&a)), ld->u.load.mem = lw_memof(B);
			ld->u.load.bytes = w * eb, ld->u.load.buf = x->u.load.buf;
			for (r = 0; r < w; r++)
				lw_assign(e, LM_LOCAL, -1, eb, arena_printf(e->a, "tl_l%d[%d]", q, m * w + r),
					  lw_unpack(e, B->dtype, "tl_w", words, r));
			if (gi) {
				lw_open_else(e, gi, NULL);
				for (r = 0; r < w; r++)
					lw_assign(e, LM_LOCAL, -1, eb, arena_printf(e->a, "tl_l%d[%d]", q, m * w + r),
						  arena_printf(e->a, "(%s)0", lw_ctype(B->dtype)));
				lw_pop(e);
			}
			lw_pop(e);
		}
	}
	buf_free(&a);
}

/* the vector load of the nest being lowered that x is (its q), or -1 */
int
lw_parvload(const Em *e, const IrExpr *x)
{
	int q;

	for (q = 0; e->par && e->parvec && q < e->parvec->nvld; q++)
		if (e->parvec->vld[q] == x)
			return q;
	return -1;
}

/* the vector stores and loads of np that this body can do: rows of whole vectors proven, or
 * assumed by the vector body of a kernel emitted twice (lw_veccond); NULL when none */
static const NestPlan *
par_vplan(Em *e, Buf *chk, const IrStmt *st, const NestPlan *np)
{
	NestPlan *vp;
	int q;

	if (np->vec < 2)
		return NULL;
	vp = anew(e->a, NestPlan);
	*vp = *np;
	vp->vst = anewn(e->a, const IrStmt *, np->nvst + 1);
	vp->vld = anewn(e->a, const IrExpr *, np->nvld + 1);
	vp->vldw = anewn(e->a, int, np->nvld + 1);
	vp->nvst = vp->nvld = 0;
	for (q = 0; q < np->nvst; q++) {
		const IrStmt *s = np->vst[q];
		IrExpr *off[IR_MAXDIM];
		int64_t ext[IR_MAXDIM];
		Region r;
		int d;

		for (d = 0; d < s->u.store.n; d++)
			off[d] = ir_int(e->a, st->loc, 0), ext[d] = 1;
		r.buf = s->u.store.buf, r.ndim = s->u.store.n, r.off = off, r.ext = ext;
		if (lw_veccond(e, chk, &r, np->vec) == NULL)
			vp->vst[vp->nvst++] = s;
	}
	for (q = 0; q < np->nvld; q++) {
		const IrExpr *x = np->vld[q];
		IrExpr *off[IR_MAXDIM];
		int64_t ext[IR_MAXDIM];
		Region r;
		int d;

		for (d = 0; d < x->u.load.n; d++)
			off[d] = ir_int(e->a, st->loc, 0), ext[d] = 1;
		r.buf = x->u.load.buf, r.ndim = x->u.load.n, r.off = off, r.ext = ext;
		if (lw_veccond(e, chk, &r, np->vldw[q]) == NULL)
			vp->vld[vp->nvld] = x, vp->vldw[vp->nvld++] = np->vldw[q];
	}
	return vp->nvst || vp->nvld ? vp : NULL;
}

int
lw_parallel(Em *e, Buf *chk, const IrStmt *st)
{
	int64_t ext[IR_MAXDIM], S;
	int n = nest_shape(st, ext), i, q;
	const NestPlan *np = lw_nest(e, st), *vp;
	const Fragment *LF;
	IExpr **pc;
	const IrStmt *b;
	ParCtx pcx;

	if (!np)
		return -1;
	if (!np->vec) {
		/* plan-vectors did not run: the same plan now */
		NestPlan *p2 = anew(e->a, NestPlan);

		*p2 = *np;
		if (lw_plan_nestvec(e, st, p2))
			return -1;
		np = p2;
	}
	LF = np->frag, pc = np->coord, S = np->slots;
	/* local tiles read at indices that are not the nest's variables (lower_stage.c) */
	if (lw_nest_stage(e, st, LF))
		return -1;
	e->parsync = np->sync;
	e->parpad = np->pad ? ext[0] : 0;
	pcx.par = st, pcx.LF = LF, pcx.pc = pc, pcx.S = S;
	for (b = st->u.par.body; b; b = b->next) {
		if ((b->kind == S_LET || b->kind == S_SET) && parexpr(e, &pcx, b->u.let.value))
			return -1;
		if (b->kind == S_STORE) {
			if (parexpr(e, &pcx, b->u.store.value))
				return -1;
			if (e->k->bufs[b->u.store.buf].scope == MEM_LOCAL && !e->stagedrw[b->u.store.buf] &&
			    owned(e, st, LF, pc, S, b->u.store.buf, b->u.store.n, b->u.store.idx, 1))
				return -1;
		}
	}
	vp = par_vplan(e, chk, st, np);
	/* a loop layout over fewer threads than the block's: the others have no point */
	if (LF->nthreads < e->k->threads)
		lw_open_if(e, arena_printf(e->a, "tid < %lld", (long long)LF->nthreads), 0, 1);
	if (vp) {
		/* runs of vec points along one variable: each point's values kept, the vector
		 * stores done once per run */
		LNode *fl = lw_open_for(e, "tl_g", "0", arena_printf(e->a, "%lld", (long long)S), S / vp->vec, 1, 0);

		fl->u.loop.step = vp->vec, fl->u.loop.stepped = 1;
		for (q = 0; q < vp->nvst; q++)
			lw_decl(e, 0, lw_ctype(e->k->bufs[vp->vst[q]->u.store.buf].dtype),
				arena_printf(e->a, "tl_v%d", q), vp->vec, NULL, NULL);
		par_vloads(e, st, pc, n, vp);
		lw_open_for(e, "tl_r", "0", arena_printf(e->a, "%d", vp->vec), vp->vec, 1, 0);
		lw_decl(e, 1, "int", "s", 0, "tl_g + tl_r", NULL);
	} else {
		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), S, 1, 0);
	}
	par_coords(e, st, pc, n);
	/* a padded loop layout: the points past the first extent do not exist (plan_partition.c) */
	if (np->pad)
		lw_open_if(e, arena_printf(e->a, "%s < %lld", lw_vname(e, st->u.par.vars[0]), (long long)ext[0]), 0, 1);
	e->par = st, e->parpc = pc, e->parS = S, e->parvec = vp;
	/* a replicated loop layout runs each point in LF->rep threads: only replica 0 writes
	 * shared or global memory (a read-modify-write by every replica would race) */
	e->parrep = LF->rep > 1 ? lw_ixstr(e, pc[n], lw_slotnames) : NULL;
	i = lw_stmts(e, chk, st->u.par.body);
	e->parvec = NULL;
	if (!i && vp && vp->nvst) {
		lw_pop(e);
		lw_open_block(e, arena_printf(e->a, "the run's %d points of '%s' stored as vectors", vp->vec,
					      lw_vname(e, st->u.par.vars[vp->vdim])));
		lw_decl(e, 1, "int", "s", 0, "tl_g", NULL);
		par_coords(e, st, pc, n);
		par_vstores(e, vp);
	}
	e->par = NULL, e->parpc = NULL, e->parrep = NULL, e->parsync = NULL, e->parpad = 0;
	if (i) {
		memset(e->staged, 0, sizeof *e->staged * (size_t)e->k->nbuf);
		return -1;
	}
	if (np->pad)
		lw_pop(e);
	lw_pop(e);
	if (vp)
		lw_pop(e);
	if (LF->nthreads < e->k->threads)
		lw_pop(e);
	/* the tiles the nest wrote in shared memory back into registers (lower_stage.c) */
	lw_nest_unstage(e);
	return 0;
}

int
lw_store(Em *e, const IrStmt *st)
{
	Buf b;
	const IrBuffer *B = &e->k->bufs[st->u.store.buf];

	char *g = lw_elemguard(e, B, st->u.store.n, st->u.store.idx);

	if (e->par && e->parrep && B->scope != MEM_LOCAL)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "", e->parrep);
	/* a statement outside parallel nests runs once for the block: every thread computes it
	 * (locals are replicated), thread 0 alone writes shared or global memory, so that a
	 * read-modify-write is not done by every thread (the barrier before the next reader
	 * comes from the hazard tracking) */
	if (!e->par && B->scope != MEM_LOCAL)
		g = arena_printf(e->a, "%s%stid == 0", g ? g : "", g ? " && " : "");
	/* a vector store of a run (plan-vectors): the point's value is kept for it */
	if (e->par && e->parvec) {
		int q;

		for (q = 0; q < e->parvec->nvst; q++)
			if (e->parvec->vst[q] == st) {
				lw_assign(e, LM_LOCAL, -1, dtype_bytes(B->dtype), arena_printf(e->a, "tl_v%d[tl_r]", q),
					  lw_valueto(e, st->u.store.value, B->dtype));
				return 0;
			}
	}
	/* a global element outside the tensor is not written (docs/semantics.md) */
	buf_init(&b);
	lw_access(e, &b, st->u.store.buf, st->u.store.n, st->u.store.idx);
	if (st->u.store.atomic) {
		/* atomic_add/max/min: once per point (replica 0) or once per block (thread 0) */
		if (lw_atomic_check(e, st, st->u.store.atomic, B->dtype)) {
			buf_free(&b);
			return -1;
		}
		if (g)
			lw_open_if(e, g, 1, 1);
		lw_atomic_elem(e, st->u.store.atomic, B, st->u.store.buf, arena_printf(e->a, "&%s", buf_str(&b)),
			       lw_valueto(e, st->u.store.value, B->dtype));
		if (g)
			lw_pop(e);
		buf_free(&b);
		return 0;
	}
	if (e->par && e->parrep && e->parsync && e->parsync[st->u.store.buf]) {
		/* the replicas read the point's old value before the store, and the new one after
		 * it (plan_parsync) */
		lw_open_block(e, arena_printf(e->a, "'%s' is read by every replica of this point: stored between barriers",
					   B->name));
		lw_decl(e, 1, lw_ctype(B->dtype), "tl_st", 0,
		     lw_valueto(e, st->u.store.value, B->dtype), NULL);
		lw_barrier(e);
		if (g)
			lw_open_if(e, g, 1, 1);
		lw_assign(e, lw_memof(B), st->u.store.buf, dtype_bytes(B->dtype), buf_str(&b), "tl_st");
		if (g)
			lw_pop(e);
		lw_barrier(e);
		lw_pop(e);
		buf_free(&b);
		return 0;
	}
	/* a store from a parallel nest or by thread 0 depends on the thread; a guard of a
	 * statement every thread runs alike (a local's elements) does not */
	if (g)
		lw_open_if(e, g, 1, e->par || B->scope != MEM_LOCAL);
	if (e->par && e->staged && e->stagedrw[st->u.store.buf])
		/* a tile the nest writes in shared memory (lower_stage.c) */
		lw_assign(e, LM_SHARED, -1, dtype_bytes(B->dtype), buf_str(&b),
			  lw_valueto(e, st->u.store.value, B->dtype));
	else
		lw_assign(e, lw_memof(B), st->u.store.buf, dtype_bytes(B->dtype), buf_str(&b),
		       lw_valueto(e, st->u.store.value, B->dtype));
	if (g)
		lw_pop(e);
	buf_free(&b);
	return 0;
}

/* a local buffer read in expression x outside a parallel nest that not every thread holds
 * whole (every thread runs the statement); -1 with the error */
static int
serial_reads(Em *e, const IrExpr *x, const IrStmt *s)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_LOAD:
		for (i = 0; i < x->u.load.n; i++)
			if (serial_reads(e, x->u.load.idx[i], s))
				return -1;
		if (e->k->bufs[x->u.load.buf].scope == MEM_LOCAL && !e->par &&
		    !(frag_is_fully_replicated(e->frag[x->u.load.buf]) &&
		      e->frag[x->u.load.buf]->rep >= e->k->threads))
			return err_set(e->err, "%s:%d:%d: local '%s' is used outside parallel(), so every thread "
				       "must hold all of it, but its layout does not replicate it", s->loc.file,
				       s->loc.line, s->loc.col, e->k->bufs[x->u.load.buf].name);
		return 0;
	case IE_UNARY: return serial_reads(e, x->u.un.a, s);
	case IE_BINARY: return serial_reads(e, x->u.bin.a, s) || serial_reads(e, x->u.bin.b, s) ? -1 : 0;
	case IE_SELECT:
		return serial_reads(e, x->u.sel.c, s) || serial_reads(e, x->u.sel.a, s) ||
		       serial_reads(e, x->u.sel.b, s) ? -1 : 0;
	case IE_CAST: return serial_reads(e, x->u.cast.a, s);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (serial_reads(e, x->u.call.args[i], s))
				return -1;
		return 0;
	default: return 0;
	}
}

/* the local accesses of a statement every thread runs must be to buffers each holds whole */
int
lw_serial_check(Em *e, const IrStmt *s)
{
	int i;

	if (e->par)
		return 0;
	switch (s->kind) {
	case S_STORE:
		if (e->k->bufs[s->u.store.buf].scope == MEM_LOCAL &&
		    !(frag_is_fully_replicated(e->frag[s->u.store.buf]) &&
		      e->frag[s->u.store.buf]->rep >= e->k->threads))
			return err_set(e->err, "%s:%d:%d: local '%s' is written outside parallel(), so every "
				       "thread must hold all of it, but its layout does not replicate it",
				       s->loc.file, s->loc.line, s->loc.col, e->k->bufs[s->u.store.buf].name);
		for (i = 0; i < s->u.store.n; i++)
			if (serial_reads(e, s->u.store.idx[i], s))
				return -1;
		return serial_reads(e, s->u.store.value, s);
	case S_LET: case S_SET: return serial_reads(e, s->u.let.value, s);
	case S_IF: return serial_reads(e, s->u.cond.cond, s);
	case S_FOR: return serial_reads(e, s->u.loop.lo, s) || serial_reads(e, s->u.loop.extent, s) ? -1 : 0;
	case S_PIPELINE: return serial_reads(e, s->u.pipe.extent, s);
	default: return 0;
	}
}
