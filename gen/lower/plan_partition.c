/*
 * plan_partition.c: the pass plan-partitions. Every register tile gets the
 * Fragment it is spread over the threads with (the one inference chose, its
 * gemm's accumulator layout, or the default partition: runs of 8 elements
 * per thread where they divide, else 1) and the inverse of it, the
 * coordinates of each (slot, thread); every parallel nest the same for its
 * loop layout, plus which of its stores must go between barriers (a
 * replicated layout that reads the buffer it stores into).
 */
#include "lw.h"

/* the most entries (threads x slots) of a table of coordinates (docs/layouts.md) */
#define TAB_MAX 65536

typedef struct TabFill {
	int32_t *v;
	int64_t T, S, conflict;
} TabFill;

static int
tab_visit(void *ctx, int64_t first, int npts, const int64_t *const *coord, const int64_t *const *vals)
{
	TabFill *t = ctx;
	int p;

	(void)coord;
	for (p = 0; p < npts; p++) {
		int64_t th = vals[0][p], sl = vals[1][p], at = sl * t->T + th;

		if (th < 0 || th >= t->T || sl < 0 || sl >= t->S)
			return t->conflict = -1, 1;
		if (t->v[at] >= 0)
			return t->conflict = at, 1;
		t->v[at] = (int32_t)(first + p);
	}
	return 0;
}

/*
 * The table of F's coordinates, for a fragment whose inverse has no closed form (the [4]
 * result of reducing a [192, 4] tile: thread (_rep * 6 + _i // 2) % 128, whose replica is
 * recovered only through a multiplicative inverse) or that is padded and replicated. Every
 * (x..., rep) is enumerated, an exact inverse by construction: entry slot * threads + thread
 * holds the row-major index f * R + rep of the element it holds, or N * R where it holds
 * none (coordinate 0 = in_shape[0]: *pad = 1, the lowering guards those pairs). The
 * coordinates read the table at (_i * threads + _j) and take f's digits. One table per
 * distinct fragment of the kernel, declared by it (static const: read through the cache).
 * NULL with e->err when two elements share a (thread, slot) or the table passes TAB_MAX.
 */
static IExpr **
tabcoords(Em *e, const Fragment *F, int64_t *S, int *pad)
{
	KernelPart *kp = e->part;
	int64_t N = layout_size(F), R = F->rep, T = F->nthreads, NS, shape[LAYOUT_MAXDIM + 1], st[LAYOUT_MAXDIM];
	int varid[LAYOUT_MAXDIM + 1], d, n = F->nin, t;
	const ITab *tab = NULL;
	IExpr **co, *at, *f;

	if (F->nout != 1 || !kp || ck_mul(T, F->out_shape[0], &NS) || ck_mul(N, R, &shape[0]) ||
	    shape[0] >= INT32_MAX)
		return NULL;
	if (NS > TAB_MAX)
		return err_set(e->err, "%s; its exact table of coordinates would have %lld entries (threads x slots), "
			       "more than the %d tilec builds: give the tile or loop a layout with a closed-form "
			       "inverse (require_layout, layout = ...) or a shape that is a multiple of the block's threads",
			       e->err->msg, (long long)NS, TAB_MAX), NULL;
	for (t = 0; t < kp->ntab && !tab; t++)
		if (lw_fragsame(kp->tabfrag[t], F))
			tab = kp->tabs[t];
	if (!tab) {
		Err scratch = {0};
		IExpr *es[2] = {F->thread, F->fwd[0]};
		TabFill fill = {NULL, T, F->out_shape[0], -2};
		ITab *nt = anew(e->a, ITab);
		int64_t i;

		for (d = 0; d < n; d++)
			shape[d] = F->in_shape[d], varid[d] = d;
		shape[n] = R, varid[n] = IEXPR_REP;
		if (!nt || !(fill.v = anewn(e->a, int32_t, NS)))
			return NULL;
		for (i = 0; i < NS; i++)
			fill.v[i] = -1;
		if (layout_enumerate(shape, varid, n + 1, es, 2, tab_visit, &fill, &scratch) != 0) {
			if (fill.conflict >= 0)
				err_set(e->err, "%s; and its layout is not one register per element: thread %lld slot %lld "
					"holds two of them", e->err->msg, (long long)(fill.conflict % T),
					(long long)(fill.conflict / T));
			else if (scratch.msg[0])
				err_set(e->err, "%s; its exact table: %s", e->err->msg, scratch.msg);
			return NULL;
		}
		nt->lo = INT64_MAX, nt->hi = INT64_MIN;
		for (i = 0; i < NS; i++) {
			if (fill.v[i] < 0)
				fill.v[i] = (int32_t)(N * R);
			nt->lo = fill.v[i] < nt->lo ? fill.v[i] : nt->lo;
			nt->hi = fill.v[i] > nt->hi ? fill.v[i] : nt->hi;
		}
		nt->n = NS, nt->v = fill.v;
		nt->name = arena_printf(e->a, "tl_tab%d", kp->ntab);
		if (kp->ntab == kp->captab) {
			int nc = 2 * kp->captab + 4;
			const ITab **nts = anewn(e->a, const ITab *, nc);
			const Layout **nfs = anewn(e->a, const Layout *, nc);

			if (!nts || !nfs)
				return NULL;
			if (kp->ntab)
				memcpy(nts, kp->tabs, sizeof *nts * (size_t)kp->ntab),
				memcpy(nfs, kp->tabfrag, sizeof *nfs * (size_t)kp->ntab);
			kp->tabs = nts, kp->tabfrag = nfs, kp->captab = nc;
		}
		kp->tabs[kp->ntab] = nt, kp->tabfrag[kp->ntab++] = F;
		tab = nt;
	}
	at = iexpr_add(e->a, iexpr_mulc(e->a, iexpr_var(e->a, 0), T), iexpr_var(e->a, 1));
	f = iexpr_divc(e->a, iexpr_tab(e->a, tab, at), R);
	co = anewn(e->a, IExpr *, n + 2);
	if (!co || !f)
		return NULL;
	for (d = n - 1; d >= 0; d--)
		st[d] = d == n - 1 ? 1 : st[d + 1] * F->in_shape[d + 1];
	for (d = 0; d < n; d++) {
		IExpr *x = iexpr_divc(e->a, f, st[d]);

		co[d] = d ? iexpr_modc(e->a, x, F->in_shape[d]) : x;
	}
	co[n] = iexpr_modc(e->a, iexpr_tab(e->a, tab, at), R);
	*S = F->out_shape[0];
	*pad = NS > N * R;
	return co;
}

/*
 * The coordinates of every (slot, thread) of fragment F (over slot var 0 and thread var 1:
 * x..., rep). When F's inverse has no closed form, or F does not reach every pair (a tile
 * of 229 elements over 128 threads x 2 slots), F is taken as a function H of the row-major
 * flat index f of its input, extended to f in [0, threads x slots): if that H is a bijection
 * onto the pairs (an exact check: layout_inverse verifies its round trip), its inverse gives
 * f, the coordinates are f's row-major digits, and the pairs holding an element are those
 * with f < size, that is coordinate 0 < in_shape[0] (*pad = 1: the lowering guards the
 * others). Only for unreplicated fragments with one slot dim. Closed forms only: NULL with
 * e->err otherwise (the callers then try widen and tabcoords).
 */
IExpr **
lw_tilecoords(Em *e, const Fragment *F, int64_t *S, int *pad)
{
	IExpr **co, *sub[IEXPR_NVARS] = {0}, *th, *sl, **inv;
	int64_t N = layout_size(F), P, st[LAYOUT_MAXDIM], shape[1];
	Fragment *H;
	Layout *I;
	Err first, scratch = {0};
	int d, n = F->nin;

	*pad = 0;
	if ((co = lw_fragcoords(e, F, S)))
		return co;
	first = *e->err;
	if (F->rep != 1 || F->nout != 1 || n < 1 || ck_mul(F->nthreads, F->out_shape[0], &P) ||
	    P < N || P > layout_enum_limit())
		return NULL;
	for (d = n - 1; d >= 0; d--)
		st[d] = d == n - 1 ? 1 : st[d + 1] * F->in_shape[d + 1];
	for (d = 0; d < n; d++) {
		IExpr *x = iexpr_divc(e->a, iexpr_var(e->a, 0), st[d]);

		sub[d] = d ? iexpr_modc(e->a, x, F->in_shape[d]) : x;
	}
	shape[0] = P;
	{
		IDom dom = {{0}};

		dom.ext[0] = P;
		th = iexpr_subst(e->a, F->thread, sub, &dom);
		sl = iexpr_subst(e->a, F->fwd[0], sub, &dom);
	}
	if (!th || !sl || !(H = frag_new(e->a, shape, 1, th, 1, &sl, 1, &scratch)) ||
	    H->nthreads != F->nthreads || H->out_shape[0] != F->out_shape[0] ||
	    !(I = layout_inverse(e->a, H, 0, &scratch))) {
		*e->err = first;   /* the first method's reason */
		return NULL;
	}
	inv = I->fwd;   /* (slot, thread) -> (f, rep) */
	co = anewn(e->a, IExpr *, n + 2);
	for (d = 0; d < n; d++) {
		IExpr *x = iexpr_divc(e->a, inv[0], st[d]);

		co[d] = d ? iexpr_modc(e->a, x, F->in_shape[d]) : x;
	}
	co[n] = inv[1];
	*S = F->out_shape[0];
	*pad = P > N;
	err_clear(e->err);
	return co;
}

/* refuse what does not lower a padded tile yet (0 if buf is not padded) */
int
lw_nopad(Em *e, int buf, const char *what)
{
	const Fragment *F = e->frag[buf];

	if (buf < 0 || !e->pad[buf])
		return 0;
	return err_set(e->err, "local '%s': its layout leaves %lld of its %lld (thread, slot) pairs without an "
		       "element (a layout not onto its slots, padded), which %s does not lower yet; give the "
		       "tile a shape that is a multiple of the block's threads", e->k->bufs[buf].name,
		       (long long)(e->slots[buf] * F->nthreads - layout_size(F) * F->rep),
		       (long long)(e->slots[buf] * F->nthreads), what);
}

/*
 * A replicated layout that leaves (thread, slot) pairs without an element (the reducer
 * layout of a row max of a [16, 24] tile spread by its flat index: thread (_i * 24 + _rep) %
 * 128, 16 slots, 384 of 2048 pairs held) has no inverse lw_tilecoords finds. The tile is
 * held fully replicated over the same threads instead: every thread holds every element at
 * slot = its flat index, which contains the inferred layout (each holder still holds what
 * it held), so every read that was owned stays owned, a reduce into it combines across all
 * threads, and a copy out stores from replica 0. The slots per thread are the tile's
 * elements, no more than the inferred layout's when its slot is the element. Else (or when
 * the tile is larger than the inferred layout's slots) the first error stands.
 */
static int
widen(Em *e, TilePlan *tp)
{
	const Fragment *F = tp->frag;
	Fragment *W;
	int64_t N = layout_size(F), held, pairs, shape[LAYOUT_MAXDIM];
	Err first = *e->err, scratch = {0};
	int d;

	if (F->rep < 2 || F->nout != 1 || ck_mul(N, F->rep, &held) || ck_mul(F->nthreads, F->out_shape[0], &pairs) ||
	    held >= pairs || N > F->out_shape[0] || F->nin > LAYOUT_MAXDIM)
		return -1;
	for (d = 0; d < F->nin; d++)
		shape[d] = F->in_shape[d];
	if (!(W = frag_fully_replicated(e->a, shape, F->nin, F->nthreads, &scratch)) ||
	    !(tp->coord = lw_tilecoords(e, W, &tp->slots, &tp->pad)) || frag_contains(F, W, 0, &scratch) != 1) {
		*e->err = first;
		return -1;
	}
	err_clear(e->err);
	tp->frag = W;
	tp->source = arena_printf(e->a, "%s, held fully replicated: its layout (%lld replicas) reaches %lld of its "
				  "%lld (thread, slot) pairs", tp->source, (long long)F->rep, (long long)held,
				  (long long)pairs);
	return 0;
}

/* the partition of every local buffer of e->k into kp */
int
lw_part_tiles(Em *e, KernelPart *kp)
{
	const IrKernel *k = e->k;
	int b, i;

	kp->nbuf = k->nbuf;
	kp->tiles = anewn(e->a, TilePlan, k->nbuf + 1);
	for (b = 0; b < k->nbuf; b++) {
		const IrBuffer *B = &k->bufs[b];
		TilePlan *tp = &kp->tiles[b];
		const IrStmt *g;
		int64_t shape[LAYOUT_MAXDIM];

		if (B->scope != MEM_LOCAL)
			continue;
		if (B->layout) {
			if (!B->layout->is_frag)
				return err_loc(e->err, B->loc), err_set(e->err, "local '%s' has a layout that is not a Fragment", B->name);
			tp->frag = B->layout, tp->source = "inferred";
		} else if ((g = lw_accgemm(k->body, b))) {
			GemmPlan p;

			if (lw_plan_of(e, g, &p, e->err))
				return err_loc(e->err, B->loc);
			tp->frag = p.acc, tp->source = "gemm";
		} else {
			for (i = 0; i < B->ndim; i++)
				shape[i] = B->dims[i].c;
			if (!(tp->frag = lw_defaultfrag(e, shape, B->ndim)))
				return err_loc(e->err, B->loc);
			tp->source = "default";
		}
		if (tp->frag->nthreads > k->threads)
			return err_loc(e->err, B->loc), err_set(e->err, "local '%s': its layout needs %lld threads, the kernel has %lld",
				       B->name, (long long)tp->frag->nthreads, (long long)k->threads);
		/* closed forms first, then an exact table (the layout as inferred: a nest that
		 * writes the tile in it still covers every replica), then the tile held fully
		 * replicated (past the table's limits) */
		if (!(tp->coord = lw_tilecoords(e, tp->frag, &tp->slots, &tp->pad)) &&
		    !(tp->coord = tabcoords(e, tp->frag, &tp->slots, &tp->pad)) && widen(e, tp))
			return err_loc(e->err, B->loc);
	}
	return 0;
}

/* the partition of parallel nest st: its loop layout (or the default one) inverted, and the
 * stores of a replicated layout that need barriers */
int
lw_plan_nest(Em *e, const IrStmt *st, NestPlan *np)
{
	int64_t ext[IR_MAXDIM];
	int n = nest_shape(st, ext);

	memset(np, 0, sizeof *np);
	if (!(np->frag = st->loop_layout) && !(np->frag = lw_defaultfrag(e, ext, n)))
		return -1;
	if (!(np->coord = lw_tilecoords(e, np->frag, &np->slots, &np->pad)) &&
	    !(np->coord = tabcoords(e, np->frag, &np->slots, &np->pad)))
		return -1;
	if (np->frag->rep > 1) {
		np->sync = anewn(e->a, unsigned char, e->k->nbuf + 1);
		if (lw_plan_parsync(e, st, np->frag, np->slots, np->sync))
			return -1;
	}
	return 0;
}

const NestPlan *
lw_nest(Em *e, const IrStmt *st)
{
	NestPlan *np;

	if (st->nest_plan)
		return st->nest_plan;
	np = anew(e->a, NestPlan);
	return lw_plan_nest(e, st, np) ? NULL : np;
}

static int
nest_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;
	NestPlan *np;

	if (s->kind != S_PARALLEL)
		return 0;
	np = anew(e->a, NestPlan);
	if (lw_plan_nest(e, s, np))
		return err_loc(e->err, s->loc);
	s->nest_plan = np;
	return 0;
}

int
plan_partitions(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	Em e;

	k->part = NULL;
	if (lw_setup(&e, a, t, k, err))
		return -1;
	k->part = e.part;
	return ir_walk(k->body, nest_visit, &e);
}

/* ---- the dump ---------------------------------------------------------------------- */

static void
fragline(Buf *b, const Layout *F, int64_t slots)
{
	buf_printf(b, "%lld slots x %lld threads", (long long)slots, (long long)F->nthreads);
	if (F->rep > 1)
		buf_printf(b, " (%lld replicas)", (long long)F->rep);
}

/* "; loads of 'A', 'B' in runs of 4 along j" (several widths: "'A' in runs of 4, 'H' in runs
 * of 2 along j"), each tensor once per width */
static void
loads_dump(const PlanDump *d, const IrStmt *s, const NestPlan *np)
{
	int i, j, w, n, groups = 0;

	buf_puts(d->b, "; loads of ");
	for (w = np->vec; w > 1; w /= 2) {
		for (n = 0, i = 0; i < np->nvld; i++) {
			int buf = np->vld[i]->u.load.buf;

			for (j = 0; j < i && !(np->vldw[j] == w && np->vld[j]->u.load.buf == buf); j++)
				;
			if (np->vldw[i] != w || j < i)
				continue;
			buf_printf(d->b, "%s'%s'", n++ || groups ? ", " : "", d->k->bufs[buf].name);
		}
		if (n)
			buf_printf(d->b, " in runs of %d", w), groups++;
	}
	buf_printf(d->b, " along %s", s->u.par.vars[np->vdim]->name);
}

static int
nest_dump(IrStmt *s, void *ctx)
{
	const PlanDump *d = ctx;
	const NestPlan *np = s->nest_plan;
	int i, any = 0;

	if (s->kind != S_PARALLEL || !np)
		return 0;
	buf_printf(d->b, "//   nest at %d:%d: %s, ", s->loc.line, s->loc.col,
		   s->loop_layout ? "its loop layout" : "the default partition");
	fragline(d->b, np->frag, np->slots);
	if (np->pad)
		buf_printf(d->b, ", %lld pairs padded", (long long)(np->slots * np->frag->nthreads -
								     layout_size(np->frag) * np->frag->rep));
	for (i = 0; np->sync && i < d->k->nbuf; i++)
		if (np->sync[i])
			buf_printf(d->b, "%s'%s'", any++ ? ", " : "; stored between barriers: ", d->k->bufs[i].name);
	/* locals read at indices that are not the nest's variables (lower_stage.c) */
	{
		unsigned char *want = calloc((size_t)d->k->nbuf + 1, 1), *scat = calloc((size_t)d->k->nbuf + 1, 1);
		const IrStmt **store = calloc((size_t)d->k->nbuf + 1, sizeof *store);

		if (want && store && scat) {
			lw_nest_reads_off(d->k, s, want, store, scat);
			for (i = 0, any = 0; i < d->k->nbuf; i++)
				if (want[i] && d->k->part && d->k->part->tiles[i].frag)
					buf_printf(d->b, "%s'%s' %s", any++ ? ", " : "; read at indices that are not its variables: ",
						   d->k->bufs[i].name, want[i] == 2 ? "in shared memory for the nest (it writes it)"
						   : lw_held_whole(d->k, d->k->part->tiles[i].frag, d->k->part->tiles[i].pad)
						   ? "from registers (every thread holds it whole)" : "through shared memory");
		}
		free(want);
		free(scat);
		free((void *)store);
	}
	/* plan-vectors */
	if (np->vec > 1 && np->nvst) {
		buf_printf(d->b, "; stores of ");
		for (i = 0; i < np->nvst; i++)
			buf_printf(d->b, "%s'%s'", i ? ", " : "", d->k->bufs[np->vst[i]->u.store.buf].name);
		buf_printf(d->b, " in runs of %d along %s", np->vec, s->u.par.vars[np->vdim]->name);
	} else if (np->vec && np->vwhy) {
		buf_printf(d->b, "; element stores: %s", np->vwhy);
	}
	if (np->vec > 1 && np->nvld)
		loads_dump(d, s, np);
	if (np->vec && np->lwhy)
		buf_printf(d->b, "; element loads: %s", np->lwhy);
	buf_putc(d->b, '\n');
	return 0;
}

void
plan_partitions_dump(Buf *b, const IrKernel *k)
{
	int i;

	buf_printf(b, "// partition of %s\n", k->name);
	for (i = 0; k->part && i < k->part->nbuf; i++) {
		const TilePlan *tp = &k->part->tiles[i];

		if (!tp->frag)
			continue;
		buf_printf(b, "//   local %s (%s): ", k->bufs[i].name, tp->source);
		fragline(b, tp->frag, tp->slots);
		if (tp->pad)
			buf_printf(b, ", %lld pairs padded", (long long)(tp->slots * tp->frag->nthreads -
									  layout_size(tp->frag) * tp->frag->rep));
		if (tp->vec)
			buf_printf(b, ", vector run %d", tp->vec);
		buf_putc(b, '\n');
	}
	{
		PlanDump d = {b, k};

		ir_walk(k->body, nest_dump, &d);
	}
}
