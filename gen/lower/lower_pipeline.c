/*
 * lower_pipeline.c: pipeline(n, stages = k): a k-stage software pipeline of
 * cp.async groups (the loads of stage i + k - 1 issued while stage i is
 * computed, one wgmma group kept in flight on sm_90a), or a serial loop when
 * the loads cannot be issued ahead (said in a comment).
 */
#include "lw.h"

/* ---- pipelines ---------------------------------------------------------------------- */

/* a load of a pipeline body issued (cp.async or TMA): 0, or -1 with e->err */
typedef int (*IssueFn)(Em *e, Buf *chk, const IrStmt *load, void *ctx);

/* the loads of a pipeline body, each by issue, with the lets before them (pipe_hoistable) */
static int
loads(Em *e, Buf *chk, const IrStmt *body, IssueFn issue, void *ctx)
{
	const IrStmt *last = NULL, *b;

	for (b = body; b; b = b->next)
		if (lw_isload(e, b))
			last = b;
	for (; body; body = body->next) {
		if (lw_isload(e, body) && issue(e, chk, body, ctx) < 0)
			return -1;
		if (body->kind == S_LET && body != last && last) {
			const IrStmt *t;

			for (t = body; t && t != last; t = t->next)
				;
			if (t)
				lw_stmt1(e, chk, body);
		}
		if (body == last)
			break;
	}
	return 0;
}

static int
cp_async_issue(Em *e, Buf *chk, const IrStmt *load, void *ctx)
{
	(void)ctx;
	return lw_tilecopy(e, chk, load);
}

/* tl_fence_operand on each register of accumulator buf (why: a comment, or NULL): pins them here;
 * after a wait_group their reads stay after it */
static void
fence_acc(Em *e, int buf, const char *why)
{
	lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)e->slots[buf]), e->slots[buf], 1, 0)
		->u.loop.nobrace = 1;
	lw_call(e, LC_FENCE, "tl_fence_operand", arena_printf(e->a, "%s[s]", e->k->bufs[buf].name), why);
	lw_pop(e);
}

/* every gemm's accumulators pinned before the loop (tl_fence_operand): ptxas would otherwise
 * serialise the wgmmas of a stage whose accumulators the zero-trip path defines (C7515) */
static void
pin_accumulators(Em *e, const IrStmt *st)
{
	const IrStmt *b;

	for (b = st->u.pipe.body; b; b = b->next)
		if (b->kind == S_GEMM)
			fence_acc(e, b->u.gemm.c.buf, "// accumulators defined here, once");
	for (int i = 0; i < e->npromo; i++) {
		int c = e->promo[i];

		lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)e->slots[c]), e->slots[c], 1, 0)
			->u.loop.nobrace = 1;
		lw_call(e, LC_FENCE, "tl_fence_operand", arena_printf(e->a, "%s_pa_[s]", e->k->bufs[c].name),
			"// the fp8 temporary too");
		lw_pop(e);
	}
}

/* fp8 wgmma gemms of fewer than LW_PROMO_KBLOCKS k-blocks in a pipeline that keeps a group in
 * flight: their accumulators' temporaries X_pa_ and counts X_pk_ (lower_mma.c), declared in
 * a block around the pipeline (a second pipeline into X declares its own). 1 if it opened
 * the block */
static int
promo_open(Em *e, const IrStmt *st)
{
	const IrStmt *b;
	int opened = 0, nk;

	e->npromo = 0;
	for (b = st->u.pipe.body; b; b = b->next) {
		int c;

		if (!(nk = lw_promo_kblocks(e, b)) || nk >= LW_PROMO_KBLOCKS || lw_promo_split(e, b))
			continue;
		c = b->u.gemm.c.buf;
		if (lw_promo_piped(e, c) || e->npromo == (int)(sizeof e->promo / sizeof e->promo[0]))
			continue;
		if (!opened)
			lw_open_block(e, "the pipeline's fp8 wgmma temporaries");
		opened = 1;
		e->promo[e->npromo++] = c;
		{
			const char *x = e->k->bufs[c].name;

			/* not cleared: a gemm's first wgmma while X_pk_ is 0 has scale-d 0 */
			lw_decl(e, 0, "float", arena_printf(e->a, "%s_pa_", x), e->slots[c], NULL,
				"// the fp8 wgmma accumulator, promoted into f32 every 4 k32 blocks");
			lw_decl(e, 0, "int", arena_printf(e->a, "%s_pk_", x), 0, "0",
				"// its k32 blocks not yet promoted (0: the next wgmma starts it over, scale-d 0)");
		}
	}
	return opened;
}

/* after the pipeline's final wait_group 0: what its temporaries hold, into the accumulators */
static void
promo_close(Em *e, int opened)
{
	int i;

	for (i = 0; i < e->npromo; i++) {
		lw_open_if(e, arena_printf(e->a, "%s_pk_ > 0", e->k->bufs[e->promo[i]].name), 0, 0);
		lw_promote(e, e->promo[i], 0, e->slots[e->promo[i]]);
		lw_pop(e);
	}
	e->npromo = 0;
	if (opened)
		lw_pop(e);
}

/* ---- TMA pipelines ---------------------------------------------------------------------- */

/* the tensor map of load t (tma_setup made one for it) */
static const char *
tma_map(Em *e, const TmaLoad *t)
{
	int i;

	for (i = 0; i < e->ntmap; i++)
		if (e->tmap[i].buf == t->buf && e->tmap[i].box0 == t->box0 && e->tmap[i].box1 == t->box1 &&
		    e->tmap[i].swizzle == t->swizzle)
			return e->tmap[i].name;
	return NULL;
}

typedef struct TmaIssue {
	const PipePlan *pp;
	const char *full;    /* the stage's full barrier */
} TmaIssue;

/* the boxes of one TMA load onto the stage's full barrier */
static int
tma_issue(Em *e, Buf *chk, const IrStmt *b, void *ctx)
{
	const TmaIssue *ti = ctx;
	const PipePlan *pp = ti->pp;
	const Region *sr = &b->u.copy.src;
	const TmaLoad *t = NULL;
	const SmemBuf *sb = smem_find(&e->sp, b->u.copy.dst.buf);
	const char *dst = e->k->bufs[b->u.copy.dst.buf].name, *map;
	int i, p;

	(void)chk;
	for (i = 0; i < pp->ntl; i++)
		if (pp->tl[i].load == b)
			t = &pp->tl[i];
	if (!t || !sb || !(map = tma_map(e, t)))
		return err_set(e->err, "internal: a TMA load without its plan");
	for (p = 0; p < t->panels; p++) {
		const int q = t->rank - 2; /* rank 3: the box is one plane, sr->off[0] */
		const char *c0 = lw_exprstr(e, sr->off[q + 1]), *c1 = lw_exprstr(e, sr->off[q]);

		if (p)
			c0 = arena_printf(e->a, "%s + %lld", c0, (long long)(p * t->box0));
		if (q)
			c1 = arena_printf(e->a, "%s, %s", c1, lw_exprstr(e, sr->off[0]));
		lw_call(e, LC_TMA, q ? "tl_tma_load_3d" : "tl_tma_load_2d",
			arena_printf(e->a, "%s + (%s) * %lld%s, &%s, %s, %s, %s", dst, e->stage, (long long)sb->stage_elems,
				     p ? arena_printf(e->a, " + %lld", (long long)(p * t->box0 * t->box1)) : "", map, c0, c1,
				     ti->full),
			p || t->panels == 1 ? NULL
			: arena_printf(e->a, "// %s: %d boxes of %lldx%lld", dst, t->panels, (long long)t->box1,
				       (long long)t->box0));
	}
	return 0;
}

/* thread 0's loads of the stage of iteration v (declared around it): expect the stage's
 * bytes on its full barrier, then every box; the lets issued with the loads before them */
static int
tma_loads(Em *e, Buf *chk, const IrStmt *st, const PipePlan *pp, const struct TmaPipe *tp)
{
	TmaIssue ti = {pp, arena_printf(e->a, "&%s[%s]", tp->full, e->stage)};

	lw_call(e, LC_MBAR, "tl_mbar_expect_tx", arena_printf(e->a, "%s, %lld", ti.full, (long long)pp->tx),
		"// the stage's bytes, then its loads");
	return loads(e, chk, st->u.pipe.body, tma_issue, &ti);
}

/*
 * pipeline(n, stages = S) with TMA: thread 0 initializes S full barriers (one arrival, the
 * stage's transaction bytes) and S empty barriers (one arrival per warp), then issues the
 * first S - 1 stages. Each iteration v waits for stage v % S to land (parity v / S % 2), runs
 * the gemms keeping their wgmma group in flight (wait_group 1), releases the stage of v - 1,
 * whose group that wait retired, with one arrival per warp on its empty barrier; then thread
 * 0 refills that stage for iteration v + S - 1 once every warp released it (parity
 * (v + S - 1) / S + 1 mod 2) and issues its loads.
 * No cp.async, no __syncthreads inside the loop; the async proxy writes what wgmma reads.
 *
 * Warp-specialized (e->ws, lower_kernel.c): the producer warpgroup (lw_ws_producer) meets the
 * barrier after the initialization and issues every stage, waiting for its release before a
 * refill; the kernel's threads only wait, compute and release.
 */
/* the block's iteration count g (declared as v_g_ = tl_pit_ + v) of the persistent schedule,
 * and the wait for the release of g's stage by its previous use (g >= S) */
static void
persist_g(Em *e, const char *v, const struct TmaPipe *tp, int S, const char *who)
{
	const char *g = arena_printf(e->a, "%s_g_", v);

	lw_decl(e, 1, "long long", g, 0, arena_printf(e->a, "%s + %s", e->pbase, v),
		"// the block's iteration, over its tiles");
	if (who) {
		lw_open_if(e, arena_printf(e->a, "%s >= %d", g, S), 1, 1);
		lw_call(e, LC_MBAR, "tl_mbar_wait", arena_printf(e->a, "&%s[%s %% %d], (%s / %d + 1) %% 2", tp->empty, g, S, g, S),
			who);
		lw_pop(e);
	}
}

/*
 * The TMA pipeline of a persistent kernel (lower_kernel.c persist_head): its barriers were
 * initialized once before the tile loop, and iteration v of this tile is the block's
 * iteration g = tl_pit_ + v: stage g % S, parity g / S % 2. Every use of a stage is released:
 * the last one of the tile after its final wait_group 0, so the first S - 1 loads of the next
 * tile (or the producer's, during this tile's epilogue) wait for it; tl_pit_ += n after.
 */
/* the body's statements but its loads (issued by the schedule), after the iteration's wait:
 * nothing of the shared buffers is pending then; hazards between them get barriers */
static int
body_rest(Em *e, Buf *chk, const IrStmt *st, int tma)
{
	const IrStmt *b;

	if (e->shrd)
		lw_sh_clear(e);
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b))
			continue;
		if (lw_stmt_synced(e, chk, b))
			return -1;
		/* with TMA a let may serve only the loads, which thread 0 issues elsewhere */
		if (b->kind == S_LET && tma)
			lw_call(e, LC_OTHER, "(void)", lw_vname(e, b->u.let.var), NULL);
	}
	return 0;
}

/* the loads of iteration v + D (if any) into their stage, one cp.async group */
static int
next_loads(Em *e, Buf *chk, const IrStmt *st, const char *v, int D)
{
	lw_open_if(e, arena_printf(e->a, "%s + %d < %s_n_", v, D, v), 0, 0);
	lw_decl(e, 1, "int", arena_printf(e->a, "%s_next_", v), 0, arena_printf(e->a, "%s + %d", v, D), NULL);
	lw_open_block(e, NULL);
	lw_decl(e, 1, "int", v, 0, arena_printf(e->a, "%s_next_", v), NULL);
	if (loads(e, chk, st->u.pipe.body, cp_async_issue, NULL))
		return -1;
	lw_pop(e);
	lw_pop(e);
	lw_async_commit(e);
	return 0;
}

/* the last gemm of the rotated pipeline, issued only (rot_body), for iteration `prev` of v */
static int
rot_issue(Em *e, Buf *chk, const PipePlan *pp, const char *v, const char *prev)
{
	int r;

	lw_open_block(e, NULL);
	lw_decl(e, 1, "int", v, 0, prev, NULL);
	e->wg_inflight = 3;
	r = lw_stmt_synced(e, chk, pp->rot_g2);
	e->wg_inflight = 0;
	lw_pop(e);
	return r;
}

/*
 * The body of a rotated pipeline (plan_pipeline.c rotate_plan): the first gemm of iteration
 * v, then the last gemm of iteration v - 1 (an empty group in iteration 0), the loads of
 * iteration v + S - 2 (after the gemms: the tensor cores start first), wait_group 1 (the
 * first gemm's group retired, the last one's in flight), the statements that leave its
 * accumulator alone, wait_group 0, the rest. The last gemm of the last iteration follows the
 * loop (rot_tail).
 */
static int
rot_body(Em *e, Buf *chk, const IrStmt *st, const PipePlan *pp, const char *v)
{
	const IrStmt *b;
	int c2 = pp->rot_g2->u.gemm.c.buf, waited = 0;
	LNode *n;

	if (e->shrd)
		lw_sh_clear(e);
	for (b = st->u.pipe.body; b; b = b->next) {
		if (lw_isload(e, b) || b == pp->rot_g2)
			continue;
		if (b == pp->rot_r) {
			lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "",
				arena_printf(e->a, "// the previous iteration's gemm into %s retired", e->k->bufs[c2].name));
			fence_acc(e, c2, NULL);
			waited = 1;
		}
		if (b != pp->rot_g1) {
			if (lw_stmt_synced(e, chk, b))
				return -1;
			continue;
		}
		e->wg_inflight = 3;
		if (lw_stmt_synced(e, chk, b))
			return -1;
		e->wg_inflight = 0;
		lw_comment(e, "the gemm at line %d of the previous iteration, in flight over the statements up to line %d",
			   pp->rot_g2->loc.line, pp->rot_r ? pp->rot_r->loc.line : pp->rot_g2->loc.line);
		n = lw_open_if(e, arena_printf(e->a, "%s > 0", v), 0, 0);
		lw_decl(e, 1, "int", arena_printf(e->a, "%s_prev_", v), 0, arena_printf(e->a, "%s - 1", v), NULL);
		if (rot_issue(e, chk, pp, v, arena_printf(e->a, "%s_prev_", v)))
			return -1;
		lw_open_else(e, n, NULL);
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_commit", "", "// an empty group: the wait below retires the first gemm's");
		lw_pop(e);
		/* the next stage's loads once the tensor cores have both gemms (the stage they fill
		 * is neither's: S - 2 ahead) */
		if (next_loads(e, chk, st, v, pp->ahead))
			return -1;
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait1", "",
			arena_printf(e->a, "  // %s's group retired", e->k->bufs[b->u.gemm.c.buf].name));
		fence_acc(e, b->u.gemm.c.buf, NULL);
	}
	if (!waited) {
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", "// the stage it reads is refilled next iteration");
		fence_acc(e, c2, NULL);
	}
	e->wg_open = 0;
	return 0;
}

/* after the rotated loop: the last iteration's last gemm */
static int
rot_tail(Em *e, Buf *chk, const PipePlan *pp, const char *v)
{
	lw_open_if(e, arena_printf(e->a, "%s_n_ > 0", v), 0, 0);
	if (rot_issue(e, chk, pp, v, arena_printf(e->a, "%s_n_ - 1", v)))
		return -1;
	lw_pop(e);
	lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
	fence_acc(e, pp->rot_g2->u.gemm.c.buf, NULL);
	e->wg_open = 0;
	return 0;
}

/* each warp's arrival on the empty barrier of a TMA pipeline's stage, at the end of iteration
 * v (g: the stage counter, v itself or the block's iteration over its tiles). prev: a wgmma
 * group left in flight reads this stage until the next iteration's wait, so the previous
 * stage is the one released (none in the first iteration); else (every group retired, as
 * after an fp8 gemm's wait_group 0) this one */
static void
stage_release(Em *e, const struct TmaPipe *tp, const char *v, const char *g, int S, int prev)
{
	if (prev) {
		lw_open_if(e, arena_printf(e->a, "%s > 0 && lane == 0", v), 1, 1);
		lw_call(e, LC_MBAR, "tl_mbar_arrive", arena_printf(e->a, "&%s[(%s + %d) %% %d]", tp->empty, g, S - 1, S),
			"// this warp is done with the stage of the previous iteration");
	} else {
		lw_open_if(e, "lane == 0", 1, 1);
		lw_call(e, LC_MBAR, "tl_mbar_arrive", arena_printf(e->a, "&%s[%s %% %d]", tp->empty, g, S),
			"// this warp is done with this stage (its wgmmas retired)");
	}
	lw_pop(e);
}

/* does a gemm of the statements s (at any depth) read an operand from shared memory (st
 * non-NULL: a shared buffer that pipeline st does not load, i.e. one written before it)? */
static int
shared_gemm(const Em *e, const IrStmt *s, const IrStmt *st)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_GEMM:
			for (int i = 0; i < 2; i++) {
				int buf = i ? s->u.gemm.b.buf : s->u.gemm.a.buf;

				if (e->k->bufs[buf].scope == MEM_SHARED && !(st && lw_pipe_loads_into(e, st, buf)))
					return 1;
			}
			break;
		case S_FOR: if (shared_gemm(e, s->u.loop.body, st)) return 1; break;
		case S_IF:
			if (shared_gemm(e, s->u.cond.then, st) || shared_gemm(e, s->u.cond.els, st))
				return 1;
			break;
		default: break;
		}
	}
	return 0;
}

/* the pipeline's lowering state, back to none */
static void
pipe_done(Em *e)
{
	e->in_pipe = 0;
	e->stage = NULL;
	e->wg_inflight = 0;
	e->pipe_fenced = 0;
	e->npromo = 0;
}

static int
tma_pipeline_persist(Em *e, Buf *chk, const IrStmt *st, const PipePlan *pp, const struct TmaPipe *tp)
{
	const char *v = lw_vname(e, st->u.pipe.var), *n = arena_printf(e->a, "%s_n_", v);
	const char *g = arena_printf(e->a, "%s_g_", v);
	int S = pp->stages, D = S - 1, ws = e->ws > 0;
	int r = -1, opened = 0, prev;

	e->in_pipe = 1;
	e->stage = arena_printf(e->a, "%s %% %d", g, S);
	if (ws)
		lw_comment(e, "pipeline over %s: %d stages of TMA loads (the producer warpgroup issues them), mbarriers "
			   "full and empty carried over the tiles, one wgmma group in flight", v, S);
	else
		lw_comment(e, "pipeline over %s: %d stages of TMA loads (thread 0 issues them), mbarriers full and empty "
			   "carried over the tiles, loads %d ahead, one wgmma group in flight", v, S, D);
	opened = promo_open(e, st);
	pin_accumulators(e, st);
	lw_decl(e, 1, "int", n, 0, lw_exprstr(e, st->u.pipe.extent), NULL);
	if (!ws) {
		/* the prologue: iterations 0 .. D - 1, each stage after its previous use's release */
		lw_open_if(e, "tid == 0", 0, 1);
		lw_open_for(e, "st", "0", arena_printf(e->a, "%d", D), D, 1, 0);
		lw_open_if(e, arena_printf(e->a, "st < %s", n), 0, 1);
		lw_decl(e, 1, "int", v, 0, "st", NULL);
		persist_g(e, v, tp, S, "// its previous use released by every warp");
		if (tma_loads(e, chk, st, pp, tp))
			goto out;
		lw_pop(e);
		lw_pop(e);
		lw_pop(e);
	}
	lw_open_for(e, v, "0", n, -1, 0, 0);
	persist_g(e, v, tp, S, NULL);
	lw_call(e, LC_MBAR, "tl_mbar_wait", arena_printf(e->a, "&%s[%s %% %d], %s / %d %% 2", tp->full, g, S, g, S),
		"// stage landed");
	e->wg_inflight = 2;
	e->wg_open = 0;
	if (body_rest(e, chk, st, 1))
		goto out;
	prev = e->wg_open;
	stage_release(e, tp, v, g, S, prev);
	if (!ws) {
		lw_open_if(e, arena_printf(e->a, "tid == 0 && %s + %d < %s", v, D, n), 0, 1);
		lw_decl(e, 1, "int", arena_printf(e->a, "%s_next_", v), 0, arena_printf(e->a, "%s + %d", v, D), NULL);
		lw_open_block(e, NULL);
		lw_decl(e, 1, "int", v, 0, arena_printf(e->a, "%s_next_", v), NULL);
		persist_g(e, v, tp, S, "// its previous use released by every warp");
		if (tma_loads(e, chk, st, pp, tp))
			goto out;
		lw_pop(e);
		lw_pop(e);
	}
	lw_pop(e);
	lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
	/* the tile's last stage, retired by that wait, released for the next tile's loads (in
	 * the fp8 temporaries' block, where n is declared); the loop released it already when
	 * its wgmmas ended with no group in flight */
	if (prev) {
		lw_open_if(e, arena_printf(e->a, "%s > 0 && lane == 0", n), 1, 1);
		lw_call(e, LC_MBAR, "tl_mbar_arrive", arena_printf(e->a, "&%s[(%s + %s - 1) %% %d]", tp->empty, e->pbase, n, S),
			"// this warp is done with the tile's last stage");
		lw_pop(e);
	}
	lw_assign(e, LM_LOCAL, -1, 0, e->pbase, arena_printf(e->a, "%s + %s", e->pbase, n));
	promo_close(e, opened);
	e->ws_done |= ws;
	lw_barrier(e);
	if (e->shrd)
		lw_sh_clear(e);
	r = 0;
out:
	pipe_done(e);
	return r;
}

static int
tma_pipeline(Em *e, Buf *chk, const IrStmt *st, const PipePlan *pp, const struct TmaPipe *tp)
{
	const char *v = lw_vname(e, st->u.pipe.var), *n = arena_printf(e->a, "%s_n_", v);
	/* one wgmma group stays in flight at every stage count: the empty barriers, not a stage
	 * of prefetch, keep the refill off the stage the group reads */
	int S = pp->stages, D = S - 1, mode = pp->wgmma ? 2 : 0, warps = (int)(e->k->threads / e->t->warp_size);
	int ws = e->ws > 0;
	int r = -1, opened = 0, prev;

	if (e->pst == st && e->pbase)
		return tma_pipeline_persist(e, chk, st, pp, tp);
	e->in_pipe = 1;
	e->stage = arena_printf(e->a, "%s %% %d", v, S);
	if (ws)
		lw_comment(e, "pipeline over %s: %d stages of TMA loads (the producer warpgroup issues them), mbarriers "
			   "full and empty, one wgmma group in flight", v, S);
	else
		lw_comment(e, "pipeline over %s: %d stages of TMA loads (thread 0 issues them), mbarriers full and empty, "
			   "loads %d ahead%s", v, S, D,
			   mode == 2 ? ", one wgmma group in flight"
				     : ", each stage released by every warp at the end of its iteration (no barrier in the loop)");
	lw_open_if(e, "tid == 0", 0, 1);
	lw_open_for(e, "s", "0", arena_printf(e->a, "%d", S), S, 1, 0);
	lw_call(e, LC_MBAR, "tl_mbar_init", arena_printf(e->a, "&%s[s], 1", tp->full), NULL);
	lw_call(e, LC_MBAR, "tl_mbar_init", arena_printf(e->a, "&%s[s], %d", tp->empty, warps), NULL);
	lw_pop(e);
	lw_call(e, LC_MBAR, "tl_fence_mbar_init", "", NULL);
	lw_pop(e);
	/* shared memory written before the loop (a tile the gemms read, in the generic proxy)
	 * visible to wgmma (the async proxy) from here on: the loop has no fence of its own */
	if (shared_gemm(e, st->u.pipe.body, st))
		lw_call(e, LC_FENCE, "tl_fence_proxy_async", "", NULL);
	if (ws)
		lw_barrier_all(e); /* the producer warpgroup waits for the initialization here too */
	else
		lw_barrier(e);
	opened = promo_open(e, st);
	pin_accumulators(e, st);
	lw_decl(e, 1, "int", n, 0, lw_exprstr(e, st->u.pipe.extent), NULL);
	if (ws)
		goto loop;
	/* the prologue: stages 0 .. D - 1 */
	lw_open_if(e, "tid == 0", 0, 1);
	lw_open_for(e, "st", "0", arena_printf(e->a, "%d", D), D, 1, 0);
	lw_open_if(e, arena_printf(e->a, "st < %s", n), 0, 1);
	lw_decl(e, 1, "int", v, 0, "st", NULL);
	if (tma_loads(e, chk, st, pp, tp))
		goto out;
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
loop:
	lw_open_for(e, v, "0", n, -1, 0, 0);
	lw_call(e, LC_MBAR, "tl_mbar_wait",
		arena_printf(e->a, "&%s[%s], %s / %d %% 2", tp->full, e->stage, v, S), "// stage landed");
	e->wg_inflight = mode;
	e->wg_open = 0;
	/* mode 0: the body's statements write no shared memory (plan_pipeline.c general_body), so
	 * its gemms need no fence and barrier of their own */
	e->pipe_fenced = !mode;
	if (body_rest(e, chk, st, 1))
		goto out;
	e->pipe_fenced = 0;
	prev = mode == 2 && e->wg_open;
	if (!mode) /* every lane's reads of the stage before its warp's release */
		lw_call(e, LC_OTHER, "__syncwarp", "", NULL);
	stage_release(e, tp, v, v, S, prev);
	if (ws) {
		lw_pop(e);
		goto after;
	}
	lw_open_if(e, arena_printf(e->a, "tid == 0 && %s + %d < %s", v, D, n), 0, 1);
	lw_decl(e, 1, "int", arena_printf(e->a, "%s_next_", v), 0, arena_printf(e->a, "%s + %d", v, D), NULL);
	lw_open_if(e, arena_printf(e->a, "%s_next_ >= %d", v, S), 1, 1);
	lw_call(e, LC_MBAR, "tl_mbar_wait",
		arena_printf(e->a, "&%s[%s_next_ %% %d], (%s_next_ / %d + 1) %% 2", tp->empty, v, S, v, S),
		"// its previous use released by every warp");
	lw_pop(e);
	lw_open_block(e, NULL);
	lw_decl(e, 1, "int", v, 0, arena_printf(e->a, "%s_next_", v), NULL);
	if (tma_loads(e, chk, st, pp, tp))
		goto out;
	lw_pop(e);
	lw_pop(e);
	lw_pop(e);
after:
	if (mode == 2)
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
	promo_close(e, opened);
	e->ws_done |= ws;
	/* every phase was waited for: the barriers are free to be initialized again */
	lw_barrier(e);
	lw_open_if(e, "tid == 0", 0, 1);
	lw_open_for(e, "s", "0", arena_printf(e->a, "%d", S), S, 1, 0);
	lw_call(e, LC_MBAR, "tl_mbar_inval", arena_printf(e->a, "&%s[s]", tp->full), NULL);
	lw_call(e, LC_MBAR, "tl_mbar_inval", arena_printf(e->a, "&%s[s]", tp->empty), NULL);
	lw_pop(e);
	lw_pop(e);
	if (e->shrd)
		lw_sh_clear(e);
	r = 0;
out:
	pipe_done(e);
	return r;
}

/*
 * The producer warpgroup of a warp-specialized kernel (lower_kernel.c wraps it): it meets the
 * consumers' barrier after the mbarriers' initialization; then one thread issues every stage v
 * of the pipeline, first waiting (v >= S) until each consumer warp released the stage's
 * previous use (parity (v / S + 1) % 2), then expecting its bytes and issuing its boxes.
 */
int
lw_ws_producer(Em *e, Buf *chk)
{
	const struct TmaPipe *tp = &e->tpipe[0];
	const IrStmt *st = tp->st;
	const PipePlan *pp = lw_pipeplan(e, st);
	const char *v = lw_vname(e, st->u.pipe.var), *n = arena_printf(e->a, "%s_n_", v);
	int S, r;

	if (!pp)
		return -1;
	S = pp->stages;
	if (e->pst == st && e->pbase) {
		/* persistent: the barriers were initialized (and met) before the roles split; one
		 * thread issues every tile's stages, the next tile's while the consumers run the
		 * epilogue of this one */
		const char *g = arena_printf(e->a, "%s_g_", v);

		e->stage = arena_printf(e->a, "%s %% %d", g, S);
		lw_open_if(e, arena_printf(e->a, "tid == %lld", (long long)e->ws), 0, 1);
		lw_persist_open(e);
		lw_decl(e, 1, "int", n, 0, lw_exprstr(e, st->u.pipe.extent), NULL);
		lw_open_for(e, v, "0", n, -1, 0, 0);
		persist_g(e, v, tp, S, "// its previous use released by every consumer warp");
		r = tma_loads(e, chk, st, pp, tp);
		lw_pop(e);
		lw_assign(e, LM_LOCAL, -1, 0, e->pbase, arena_printf(e->a, "%s + %s", e->pbase, n));
		lw_pop(e);
		lw_pop(e);
		e->stage = NULL;
		return r;
	}
	e->stage = arena_printf(e->a, "%s %% %d", v, S);
	lw_barrier_all(e);
	lw_open_if(e, arena_printf(e->a, "tid == %lld", (long long)e->ws), 0, 1);
	lw_decl(e, 1, "int", n, 0, lw_exprstr(e, st->u.pipe.extent), NULL);
	lw_open_for(e, v, "0", n, -1, 0, 0);
	lw_open_if(e, arena_printf(e->a, "%s >= %d", v, S), 1, 1);
	lw_call(e, LC_MBAR, "tl_mbar_wait", arena_printf(e->a, "&%s[%s %% %d], (%s / %d + 1) %% 2", tp->empty, v, S, v, S),
		"// its previous use released by every consumer warp");
	lw_pop(e);
	r = tma_loads(e, chk, st, pp, tp);
	lw_pop(e);
	lw_pop(e);
	e->stage = NULL;
	return r;
}

/*
 * pipeline(n, stages = S): a prologue of D load stages, then per iteration
 * wait for the oldest, refill the stage D ahead, run the rest of the body.
 * D = S - 1, except when the body is loads plus wgmma gemms (wgmma_body):
 * then the writer fences its cp.async data into the async proxy before the
 * barrier at the top of the iteration, so the gemm needs no barrier of its
 * own. mode 1: D = S - 1 and each gemm waits for its wgmma group (the
 * refilled stage was read in iteration v - 1, retired before the barrier).
 * mode 2: D = S - 2 and one group stays in flight: the stage refilled in
 * iteration v was read by the group of v - 2, which every warp retired
 * (wait_group 1 at the end of v - 1, then the barrier).
 */
int
lw_pipeline(Em *e, Buf *chk, const IrStmt *st)
{
	const PipePlan *pp = lw_pipeplan(e, st);
	int S, mode, D, r = -1, opened = 0, fence0 = 0;
	const char *v = lw_vname(e, st->u.pipe.var);
	const IrStmt *b;
	const char *why;

	/* the schedule of plan-pipelines (plan_pipeline.c) */
	if (!pp)
		return -1;
	S = pp->stages, mode = pp->wgmma, D = pp->ahead, why = pp->serial;
	/* TMA in the vector body (its rows are whole 16-byte chunks: the maps' strides) */
	if (pp->tma && !e->scalar) {
		int i, ok = 1;

		/* the loads' rows-of-whole-vectors flags guard the vector body, as for cp.async:
		 * under them every row is whole 16-byte chunks, so the maps' row strides are
		 * multiples of 16 bytes */
		for (b = st->u.pipe.body; b; b = b->next)
			if (lw_isload(e, b) && lw_veccond(e, chk, &b->u.copy.src, lw_copyplan(e, b)->v) == lw_scalar_only)
				ok = 0;
		for (i = 0; ok && i < e->ntpipe; i++)
			if (e->tpipe[i].st == st)
				return tma_pipeline(e, chk, st, pp, &e->tpipe[i]);
	}
	if (pp->tma)
		D = S - 1 - (mode == 2); /* the cp.async schedule of the plan without TMA */

	if (why) {
		/* not software-pipelined: a serial loop over the body, in order */
		const char *vn = lw_vname(e, st->u.pipe.var);

		lw_comment(e, "pipeline over %s: run as a serial loop (%s)", v, why);
		lw_open_for(e, vn, "0", lw_exprstr(e, st->u.pipe.extent), -1, 0, 1);
		if (lw_loopbody(e, chk, st->u.pipe.body))
			return -1;
		lw_pop(e);
		return 0;
	}
	e->in_pipe = 1;
	e->stage = arena_printf(e->a, "%s %% %d", v, S);
	if (mode) {
		lw_comment(e, "pipeline over %s: %d stages of cp.async, loads %d ahead%s", v, S, D,
			mode == 2 ? ", one wgmma group in flight" : "");
		if (mode == 2)
			opened = promo_open(e, st);
		pin_accumulators(e, st);
	} else if (pp->rot_g2) {
		lw_comment(e, "pipeline over %s: %d stages of cp.async, loads %d ahead; the gemm at line %d runs one "
			   "iteration late, overlapping the next iteration's statements", v, S, D, pp->rot_g2->loc.line);
		pin_accumulators(e, st);
	} else {
		lw_comment(e, "pipeline over %s: %d stage%s of cp.async%s%s", v, S, S > 1 ? "s" : "",
			   pp->rot_why ? "; its last gemm runs in order: " : "", pp->rot_why ? pp->rot_why : "");
	}
	lw_decl(e, 1, "int", arena_printf(e->a, "%s_n_", v), 0, lw_exprstr(e, st->u.pipe.extent), NULL);
	if (S > 1) {
		/* the prologue: the first D stages' loads, one group each */
		lw_open_for(e, "st", "0", arena_printf(e->a, "%d", D), D, 1, 0);
		lw_open_if(e, arena_printf(e->a, "st < %s_n_", v), 0, 0);
		lw_decl(e, 1, "int", v, 0, "st", NULL);
		if (loads(e, chk, st->u.pipe.body, cp_async_issue, NULL))
			goto out;
		lw_pop(e);
		lw_async_commit(e);
		lw_pop(e);
	}
	lw_open_for(e, v, "0", arena_printf(e->a, "%s_n_", v), -1, 0, 0);
	if (S > 1) {
		lw_async_wait(e, D - 1);
		/* a body of other statements too (mode 0) with a gemm that may be a wgmma from
		 * shared memory: the same fence, so that its gemms read the stage without a fence
		 * and barrier of their own until a statement writes shared memory (pipe_fenced) */
		if (mode || (fence0 = e->t->mma == TMMA_WGMMA && shared_gemm(e, st->u.pipe.body, NULL)))
			lw_call(e, LC_FENCE, "tl_fence_proxy_async", "", NULL);
		lw_barrier(e);
		/* rotated: rot_body issues them after the gemms */
		if (!pp->rot_g2 && next_loads(e, chk, st, v, D))
			goto out;
	} else {
		/* a block, as above: the lets issued with the loads are declared again for the body */
		lw_open_block(e, NULL);
		if (loads(e, chk, st->u.pipe.body, cp_async_issue, NULL))
			goto out;
		lw_pop(e);
		lw_async_commit(e);
		lw_async_wait(e, 0);
		lw_barrier(e);
	}
	e->wg_inflight = mode;
	e->pipe_fenced = fence0;
	/* after the barrier at the top of the iteration nothing is pending; the loads just
	 * issued fill another stage than the one the body reads. The rest of the body is
	 * statements like any others: hazards between them get barriers */
	if (pp->rot_g2 ? rot_body(e, chk, st, pp, v) : body_rest(e, chk, st, 0))
		goto out;
	e->pipe_fenced = 0;
	if (S == 1)
		lw_barrier(e);
	lw_pop(e);
	if (pp->rot_g2 && rot_tail(e, chk, pp, v))
		goto out;
	if (mode == 2)
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
	promo_close(e, opened);
	lw_async_wait(e, 0);
	lw_barrier(e);
	if (e->shrd)
		lw_sh_clear(e);
	r = 0;
out:
	pipe_done(e);
	return r;
}
