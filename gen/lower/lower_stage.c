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

	buf_init(&b);
	for (d = 0; d < B->ndim; d++) {
		if (d == 0)
			buf_printf(&b, "(%s)", cs[d]);
		else
			buf_printf(&b, " * %lld + (%s)", (long long)B->dims[d].c, cs[d]);
	}
	r = arena_strdup(e->a, B->ndim ? buf_str(&b) : "0");
	buf_free(&b);
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
	IExpr **co = e->coord[buf];
	int64_t NY = layout_size(F), S = e->slots[buf], bytes;
	char *name = arena_printf(e->a, "tl_stage%d", e->tmp++), *cs[LAYOUT_MAXDIM], *g = NULL;
	int d, eb = (int)dtype_bytes(B->dtype);

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
	if (F->nthreads < e->k->threads)
		lw_open_if(e, arena_printf(e->a, "tid < %lld", (long long)F->nthreads), 0, 1);
	lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)S), S, 1, 0);
	for (d = 0; d < F->nin; d++) {
		cs[d] = arena_printf(e->a, "c%d", d);
		lw_decl_ix(e, cs[d], co[d], lw_slotnames);
	}
	/* a padded layout: the pairs past dim 0 hold nothing (plan_partition.c) */
	if (e->pad[buf])
		g = arena_printf(e->a, "c0 < %lld", (long long)F->in_shape[0]);
	if (F->rep > 1)
		g = arena_printf(e->a, "%s%s(%s) == 0", g ? g : "", g ? " && " : "", lw_ixstr(e, co[F->nin], lw_slotnames));
	if (g)
		lw_open_if(e, g, 0, 1);
	lw_assign(e, LM_SHARED, -1, eb, arena_printf(e->a, "%s[%s]", name, lw_stage_index(e, buf, cs)),
		  arena_printf(e->a, "%s[s]", B->name));
	if (g)
		lw_pop(e);
	lw_pop(e);
	if (F->nthreads < e->k->threads)
		lw_pop(e);
	lw_barrier(e);
	return name;
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

/* the local tiles nest par reads at indices that are not its variables (want[b]), and a store
 * into each in the nest (store[b], or NULL); arrays of k->nbuf + 1 */
void
lw_nest_reads_off(const IrKernel *k, const IrStmt *par, unsigned char *want, const IrStmt **store)
{
	StageWalk w;

	w.k = k, w.par = par, w.want = want, w.store = store;
	stage_stmts(&w, par->u.par.body);
}

/* is local buffer b's layout F one that every thread holds whole (the nest reads it from
 * registers) */
int
lw_held_whole(const IrKernel *k, const Layout *F, int pad)
{
	return F && !pad && frag_is_fully_replicated(F) && F->rep >= k->threads;
}

/*
 * Before parallel nest par: every local tile it reads at an index that is not one of its
 * variables (x[3], x[k], x[i + 1]) is needed by threads that do not hold that element. A tile
 * every thread holds whole (fully replicated) is read from registers; any other is copied to
 * shared memory first and those reads come from there. Refused when the nest also writes the
 * tile (its iterations would read the copy, not what an iteration wrote before).
 */
int
lw_nest_stage(Em *e, const IrStmt *par)
{
	const IrKernel *k = e->k;
	unsigned char *want;
	const IrStmt **store;
	int b;

	if (!e->staged)
		e->staged = anewn(e->a, const char *, k->nbuf + 1);
	memset(e->staged, 0, sizeof *e->staged * (size_t)k->nbuf);
	want = anewn(e->a, unsigned char, k->nbuf + 1);
	store = anewn(e->a, const IrStmt *, k->nbuf + 1);
	lw_nest_reads_off(k, par, want, store);
	for (b = 0; b < k->nbuf; b++) {
		const Fragment *F = e->frag[b];
		char *name;

		if (!want[b] || !F)
			continue;
		if (store[b]) {
			err_loc(e->err, store[b]->loc);
			return err_set(e->err, "local '%s' is read at an index that is not one of the parallel "
				       "nest's variables and written in the same nest: the reads need a copy in "
				       "shared memory made before the nest, which would not see the nest's "
				       "writes; write it in a separate nest", k->bufs[b].name);
		}
		if (lw_held_whole(k, F, e->pad[b])) {
			e->staged[b] = "";
			continue;
		}
		if (!(name = lw_stage(e, b, "in a parallel nest at indices that are not its variables")))
			return -1;
		e->staged[b] = name;
	}
	return 0;
}
