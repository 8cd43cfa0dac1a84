/*
 * lower_stage.c: a register tile copied whole into a shared-memory array, for
 * the reads that need elements other threads hold: a parallel nest reading a
 * local tile at indices that are not its variables (x[3], x[i + 1]), and a
 * reduce whose source and destination layouts do not combine by shuffles
 * (rows spread over threads that a slot does not share). Each element is
 * written once (by the holder of replica 0; padded pairs hold nothing), in
 * row-major order, between two barriers.
 */
#include "lw.h"

/* the C text of the row-major flat index of coordinates cs over buffer buf's dims */
char *
lw_stage_index(Em *e, int buf, char *const *cs)
{
	const IrBuffer *B = &e->k->bufs[buf];
	Buf b;
	char *r;
	int d;

	/* Horner: ((c0 * d1 + c1) * d2 + c2) ... (rank 3 and up printed as c0 * d1 + c1 * d2 + c2
	 * before, which is not the flat index: elements of a staged rank-3 tile collided) */
	r = B->ndim ? arena_printf(e->a, "(%s)", cs[0]) : (char *)"0";
	for (d = 1; d < B->ndim; d++) {
		buf_init(&b);
		if (d == 1)
			buf_printf(&b, "%s * %lld + (%s)", r, (long long)B->dims[d].c, cs[d]);
		else
			buf_printf(&b, "(%s) * %lld + (%s)", r, (long long)B->dims[d].c, cs[d]);
		r = arena_strdup(e->a, buf_str(&b));
		buf_free(&b);
	}
	return r;
}

/* copy local buffer buf into a new static __shared__ array (its name returned; NULL with the
 * error): a barrier (earlier readers of the array, a loop around it, are done), each element
 * by its replica-0 holder, a barrier */
char *
lw_stage(Em *e, int buf, const char *why)
{
	const IrBuffer *B = &e->k->bufs[buf];
	const Fragment *F = e->frag[buf];
	int64_t NY = layout_size(F), bytes;
	char *name = arena_printf(e->a, "tl_stage%d", e->tmp++), *cs[LAYOUT_MAXDIM];
	int open, eb = (int)dtype_bytes(B->dtype);

	if (!F || F->nin != B->ndim || F->nin > LAYOUT_MAXDIM) {
		err_set(e->err, "local '%s': its layout does not match its shape", B->name);
		return NULL;
	}
	if (ck_mul(NY, eb, &bytes) || bytes > e->t->smem_max) {
		err_set(e->err, "local '%s' (%lld bytes) is read %s, which goes through shared memory, "
			"but it is larger than the %lld bytes of shared memory of %s", B->name,
			(long long)bytes, why, (long long)e->t->smem_max, e->t->arch);
		return NULL;
	}
	lw_barrier(e);
	lw_comment(e, "'%s' through shared memory: it is read %s", B->name, why);
	lw_decl(e, 0, arena_printf(e->a, "static __shared__ %s", lw_ctype(B->dtype)), name, NY, NULL, NULL);
	e->static_smem += bytes;
	open = lw_slots_open(e, buf, "s", lw_slotnames, 1, cs);
	lw_assign(e, LM_SHARED, -1, eb, arena_printf(e->a, "%s[%s]", name, lw_stage_index(e, buf, cs)),
		  arena_printf(e->a, "%s[s]", B->name));
	while (open--)
		lw_pop(e);
	lw_barrier(e);
	return name;
}

/*
 * Open the loop over the slots of local buffer buf (slot variable sv, names the index
 * expressions' variables: slot, thread) for the threads that hold it, declare its coordinates
 * c0, c1, ... (into cs) and guard the elements that are there: a padded layout's pairs past
 * dim 0 hold nothing (plan_partition.c), and with replica0 only replica 0 of a replicated one.
 * Returns how many levels to pop.
 */
int
lw_slots_open(Em *e, int buf, const char *sv, const char *const *names, int replica0, char **cs)
{
	const Fragment *F = e->frag[buf];
	IExpr **co = e->coord[buf];
	char *g = NULL;
	int d, open = 1;

	if (F->nthreads < e->k->threads) {
		lw_open_if(e, arena_printf(e->a, "tid < %lld", (long long)F->nthreads), 0, 1);
		open++;
	}
	lw_open_for(e, sv, "0", arena_printf(e->a, "%lld", (long long)e->slots[buf]), e->slots[buf], 1, 0);
	for (d = 0; d < F->nin; d++) {
		cs[d] = arena_printf(e->a, "c%d", d);
		lw_decl_ix(e, cs[d], co[d], names);
	}
	if (e->pad[buf])
		g = arena_printf(e->a, "c0 < %lld", (long long)F->in_shape[0]);
	if (replica0 && F->rep > 1)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "", lw_ixstr(e, co[F->nin], names));
	if (g) {
		lw_open_if(e, g, 0, 1);
		open++;
	}
	return open;
}

/* 1 when some index of an access in nest par is not one of its variables */
int
lw_stage_vars(const IrStmt *par, int n, IrExpr *const *idx)
{
	int d, i;

	for (d = 0; d < n; d++) {
		if (idx[d]->kind != IE_VAR)
			return 1;
		for (i = 0; i < par->u.par.n; i++)
			if (par->u.par.vars[i] == idx[d]->u.var)
				break;
		if (i == par->u.par.n)
			return 1;
	}
	return 0;
}

typedef struct StageWalk {
	const IrKernel *k;
	const IrStmt *par;
	unsigned char *want;     /* per buffer: read at indices not the nest's variables */
	const IrStmt **store;    /* per buffer: a store into it in the nest */
	unsigned char *scat;     /* per buffer: stored at indices not the nest's variables */
} StageWalk;

static void
stage_expr(StageWalk *w, const IrExpr *x)
{
	int i;

	if (!x)
		return;
	switch (x->kind) {
	case IE_LOAD:
		for (i = 0; i < x->u.load.n; i++)
			stage_expr(w, x->u.load.idx[i]);
		if (w->k->bufs[x->u.load.buf].scope == MEM_LOCAL &&
		    lw_stage_vars(w->par, x->u.load.n, x->u.load.idx))
			w->want[x->u.load.buf] = 1;
		return;
	case IE_UNARY: stage_expr(w, x->u.un.a); return;
	case IE_BINARY: stage_expr(w, x->u.bin.a), stage_expr(w, x->u.bin.b); return;
	case IE_SELECT: stage_expr(w, x->u.sel.c), stage_expr(w, x->u.sel.a), stage_expr(w, x->u.sel.b); return;
	case IE_CAST: stage_expr(w, x->u.cast.a); return;
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			stage_expr(w, x->u.call.args[i]);
		return;
	default: return;
	}
}

static void
stage_stmts(StageWalk *w, const IrStmt *s)
{
	int i;

	for (; s; s = s->next)
		switch (s->kind) {
		case S_STORE:
			for (i = 0; i < s->u.store.n; i++)
				stage_expr(w, s->u.store.idx[i]);
			stage_expr(w, s->u.store.value);
			if (!w->store[s->u.store.buf])
				w->store[s->u.store.buf] = s;
			if (w->k->bufs[s->u.store.buf].scope == MEM_LOCAL &&
			    lw_stage_vars(w->par, s->u.store.n, s->u.store.idx))
				w->scat[s->u.store.buf] = 1;
			break;
		case S_LET: case S_SET: stage_expr(w, s->u.let.value); break;
		case S_IF:
			stage_expr(w, s->u.cond.cond);
			stage_stmts(w, s->u.cond.then);
			stage_stmts(w, s->u.cond.els);
			break;
		case S_FOR:
			stage_expr(w, s->u.loop.lo);
			stage_expr(w, s->u.loop.extent);
			stage_stmts(w, s->u.loop.body);
			break;
		default: break;
		}
}

/* the local tiles nest par reads at indices that are not its variables (want[b]), a store into
 * each in the nest (store[b], or NULL), and those it stores into at such indices (scat[b]);
 * arrays of k->nbuf + 1. want[b] is 2 where the nest's accesses of b all go to shared memory
 * (it is written there and read or written at such indices) */
void
lw_nest_reads_off(const IrKernel *k, const IrStmt *par, unsigned char *want, const IrStmt **store,
		  unsigned char *scat)
{
	StageWalk w;
	int b;

	w.k = k, w.par = par, w.want = want, w.store = store, w.scat = scat;
	stage_stmts(&w, par->u.par.body);
	for (b = 0; b < k->nbuf; b++)
		if (store[b] && (want[b] || scat[b]))
			want[b] = 2;
}

/* is local buffer b's layout F one that every thread holds whole (the nest reads it from
 * registers) */
int
lw_held_whole(const IrKernel *k, const Layout *F, int pad)
{
	return F && !pad && frag_is_fully_replicated(F) && F->rep >= k->threads;
}

/*
 * Before parallel nest par (loop layout LF): every local tile it reads at an index that is not
 * one of its variables (x[3], x[k], x[i + 1]) is needed by threads that do not hold that
 * element. A tile every thread holds whole (fully replicated) and that the nest does not write
 * is read from registers; any other is copied to shared memory first and those reads come from
 * there. A tile the nest writes and also reads or writes at such an index lives in shared
 * memory for the whole nest (every access of it goes there: an iteration reads what it wrote)
 * and is copied back into every holder's registers after it (lw_nest_unstage). That needs an
 * unreplicated loop layout: replicas of a point would each apply its read-modify-write.
 */
int
lw_nest_stage(Em *e, const IrStmt *par, const Fragment *LF)
{
	const IrKernel *k = e->k;
	unsigned char *want, *scat;
	const IrStmt **store;
	int b;

	if (!e->staged) {
		e->staged = anewn(e->a, const char *, k->nbuf + 1);
		e->stagedrw = anewn(e->a, unsigned char, k->nbuf + 1);
	}
	memset(e->staged, 0, sizeof *e->staged * (size_t)k->nbuf);
	memset(e->stagedrw, 0, (size_t)k->nbuf);
	want = anewn(e->a, unsigned char, k->nbuf + 1);
	scat = anewn(e->a, unsigned char, k->nbuf + 1);
	store = anewn(e->a, const IrStmt *, k->nbuf + 1);
	lw_nest_reads_off(k, par, want, store, scat);
	for (b = 0; b < k->nbuf; b++) {
		const Fragment *F = e->frag[b];
		char *name;

		if (!want[b] || !F)
			continue;
		if (want[b] == 2 && LF->rep > 1) {
			err_loc(e->err, store[b]->loc);
			return err_set(e->err, "local '%s' is written by the parallel nest and read or written at an "
				       "index that is not one of its variables, so it goes through shared memory "
				       "for the nest, but the nest's loop layout runs each point in %lld threads, "
				       "which would each apply the point's write; give the nest a loop layout without "
				       "replicas (parallel(..., layout = ...)) or write a shared buffer",
				       k->bufs[b].name, (long long)LF->rep);
		}
		if (want[b] == 1 && lw_held_whole(k, F, e->pad[b])) {
			e->staged[b] = "";
			continue;
		}
		if (!(name = lw_stage(e, b, want[b] == 2 ? "and written in a parallel nest at indices that are "
				      "not its variables" : "in a parallel nest at indices that are not its variables")))
			return -1;
		e->staged[b] = name;
		e->stagedrw[b] = want[b] == 2;
	}
	return 0;
}

/* after the nest: the tiles it wrote in shared memory copied back into every holder's
 * registers (a barrier first: the nest's writes are other threads'), the staging cleared */
void
lw_nest_unstage(Em *e)
{
	const IrKernel *k = e->k;
	int b, d, any = 0;

	for (b = 0; e->staged && b < k->nbuf; b++) {
		const Fragment *F = e->frag[b];
		char *cs[LAYOUT_MAXDIM];

		if (!e->stagedrw[b])
			continue;
		if (!any++)
			lw_barrier(e);
		lw_comment(e, "'%s' back from shared memory into its holders' registers", k->bufs[b].name);
		if (F->nthreads < k->threads)
			lw_open_if(e, arena_printf(e->a, "tid < %lld", (long long)F->nthreads), 0, 1);
		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)e->slots[b]), e->slots[b], 1, 0);
		for (d = 0; d < F->nin; d++) {
			cs[d] = arena_printf(e->a, "c%d", d);
			lw_decl_ix(e, cs[d], e->coord[b][d], lw_slotnames);
		}
		if (e->pad[b])
			lw_open_if(e, arena_printf(e->a, "c0 < %lld", (long long)F->in_shape[0]), 0, 1);
		lw_assign(e, LM_LOCAL, b, 0, arena_printf(e->a, "%s[s]", k->bufs[b].name),
			  arena_printf(e->a, "%s[%s]", e->staged[b], lw_stage_index(e, b, cs)));
		if (e->pad[b])
			lw_pop(e);
		lw_pop(e);
		if (F->nthreads < k->threads)
			lw_pop(e);
	}
	if (e->staged) {
		memset(e->staged, 0, sizeof *e->staged * (size_t)k->nbuf);
		memset(e->stagedrw, 0, (size_t)k->nbuf);
	}
}
