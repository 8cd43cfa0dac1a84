/*
 * lower_pipeline.c: pipeline(n, stages = k): a k-stage software pipeline of
 * cp.async groups (the loads of stage i + k - 1 issued while stage i is
 * computed, one wgmma group kept in flight on sm_90a), or a serial loop when
 * the loads cannot be issued ahead (said in a comment).
 */
#include "lw.h"

/* ---- pipelines ---------------------------------------------------------------------- */

/* the loads of a pipeline body, with the lets before them (pipe_hoistable) */
static int
loads(Em *e, Buf *chk, const IrStmt *body)
{
	const IrStmt *last = NULL, *b;

	for (b = body; b; b = b->next)
		if (lw_isload(e, b))
			last = b;
	for (; body; body = body->next) {
		if (lw_isload(e, body) && lw_tilecopy(e, chk, body) < 0)
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
	int S, mode, D, r = -1;
	const char *v = lw_vname(e, st->u.pipe.var);
	const IrStmt *b;
	const char *why;

	/* the schedule of plan-pipelines (plan_pipeline.c) */
	if (!pp)
		return -1;
	S = pp->stages, mode = pp->wgmma, D = pp->ahead, why = pp->serial;

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
		for (b = st->u.pipe.body; b; b = b->next)
			if (b->kind == S_GEMM) {
				int c = b->u.gemm.c.buf;

				lw_open_for(e, "s", "0", arena_printf(e->a, "%lld", (long long)e->slots[c]), e->slots[c], 1,
					 0)->u.loop.nobrace = 1;
				lw_call(e, LC_FENCE, "tl_fence_operand", arena_printf(e->a, "%s[s]", e->k->bufs[c].name),
					"// accumulators defined here, once");
				lw_pop(e);
			}
	} else {
		lw_comment(e, "pipeline over %s: %d stage%s of cp.async", v, S, S > 1 ? "s" : "");
	}
	lw_decl(e, 1, "int", arena_printf(e->a, "%s_n_", v), 0, lw_exprstr(e, st->u.pipe.extent), NULL);
	if (S > 1) {
		/* the prologue: the first D stages' loads, one group each */
		lw_open_for(e, "st", "0", arena_printf(e->a, "%d", D), D, 1, 0);
		lw_open_if(e, arena_printf(e->a, "st < %s_n_", v), 0, 0);
		lw_decl(e, 1, "int", v, 0, "st", NULL);
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		lw_pop(e);
		lw_async_commit(e);
		lw_pop(e);
	}
	lw_open_for(e, v, "0", arena_printf(e->a, "%s_n_", v), -1, 0, 0);
	if (S > 1) {
		lw_async_wait(e, D - 1);
		if (mode)
			lw_call(e, LC_FENCE, "tl_fence_proxy_async", "", NULL);
		lw_barrier(e);
		lw_open_if(e, arena_printf(e->a, "%s + %d < %s_n_", v, D, v), 0, 0);
		lw_decl(e, 1, "int", arena_printf(e->a, "%s_next_", v), 0, arena_printf(e->a, "%s + %d", v, D), NULL);
		lw_open_block(e, NULL);
		lw_decl(e, 1, "int", v, 0, arena_printf(e->a, "%s_next_", v), NULL);
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		lw_pop(e);
		lw_pop(e);
		lw_async_commit(e);
	} else {
		/* a block, as above: the lets issued with the loads are declared again for the body */
		lw_open_block(e, NULL);
		if (loads(e, chk, st->u.pipe.body))
			goto out;
		lw_pop(e);
		lw_async_commit(e);
		lw_async_wait(e, 0);
		lw_barrier(e);
	}
	e->wg_inflight = mode;
	/* after the barrier at the top of the iteration nothing is pending; the loads just
	 * issued fill another stage than the one the body reads. The rest of the body is
	 * statements like any others: hazards between them get barriers */
	if (e->shrd)
		lw_sh_clear(e);
	for (b = st->u.pipe.body; b; b = b->next)
		if (!lw_isload(e, b) && lw_stmt_synced(e, chk, b))
			goto out;
	if (S == 1)
		lw_barrier(e);
	lw_pop(e);
	if (mode == 2)
		lw_call(e, LC_MMA_GROUP, "tl_wgmma_wait0", "", NULL);
	lw_async_wait(e, 0);
	lw_barrier(e);
	if (e->shrd)
		lw_sh_clear(e);
	r = 0;
out:
	e->in_pipe = 0;
	e->stage = NULL;
	e->wg_inflight = 0;
	return r;
}
