/*
 * lower_pipeline.c: pipeline(n, stages = k): a k-stage software pipeline of
 * cp.async groups (the loads of stage i + k - 1 issued while stage i is
 * computed, one wgmma group kept in flight on sm_90a), or a serial loop when
 * the loads cannot be issued ahead (said in a comment).
 */
#include "lw.h"

/* ---- pipelines ---------------------------------------------------------------------- */

static int
isload(const Em *e, const IrStmt *s)
{
	return s->kind == S_COPY && e->k->bufs[s->u.copy.src.buf].scope == MEM_GLOBAL &&
	       e->k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED;
}

/* the loads of a pipeline body, with the lets before them (pipe_hoistable) */
static int
loads(Em *e, Buf *chk, const IrStmt *body)
{
	const IrStmt *last = NULL, *b;

	for (b = body; b; b = b->next)
		if (isload(e, b))
			last = b;
	for (; body; body = body->next) {
		if (isload(e, body) && lw_tilecopy(e, chk, body) < 0)
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

/* does x read a variable of set v (per var id) or any buffer? */
static int
uses_vars(const IrExpr *x, const unsigned char *v)
{
	int i;

	if (!x)
		return 0;
	switch (x->kind) {
	case IE_VAR: return v[x->u.var->id];
	case IE_LOAD: return 1;
	case IE_UNARY: return uses_vars(x->u.un.a, v);
	case IE_BINARY: return uses_vars(x->u.bin.a, v) || uses_vars(x->u.bin.b, v);
	case IE_SELECT: return uses_vars(x->u.sel.c, v) || uses_vars(x->u.sel.a, v) || uses_vars(x->u.sel.b, v);
	case IE_CAST: return uses_vars(x->u.cast.a, v);
	case IE_CALL:
		for (i = 0; i < x->u.call.n; i++)
			if (uses_vars(x->u.call.args[i], v))
				return 1;
		return 0;
	default: return 0;
	}
}

/* mark the let variables a statement list assigns with S_SET */
static void
setvars(const IrStmt *s, unsigned char *v)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_SET: v[s->u.let.var->id] = 1; break;
		case S_FOR: setvars(s->u.loop.body, v); break;
		case S_PIPELINE: setvars(s->u.pipe.body, v); break;
		case S_PARALLEL: setvars(s->u.par.body, v); break;
		case S_IF: setvars(s->u.cond.then, v), setvars(s->u.cond.els, v); break;
		default: break;
		}
	}
}

/*
 * May the loads of pipeline st run ahead of the rest of its body (NULL), or
 * why not? The pipelined form issues the body's global -> shared copies of
 * iteration v + D before the rest of iteration v, so each load may depend only
 * on the pipeline variable, values fixed during the loop and lets before it
 * that do (those are issued with it); no statement of the body may touch a
 * loaded buffer before its load or write it at all; loads nested in an if or
 * a loop of the body do not run ahead.
 */
static const char *
pipe_hoistable(Em *e, const IrStmt *st)
{
	unsigned char *bad = anewn(e->a, unsigned char, e->k->nvar + 1);
	unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *loaded = anewn(e->a, unsigned char, e->k->nbuf + 1);
	const IrStmt *b;
	int d, i;

	setvars(st->u.pipe.body, bad);
	for (b = st->u.pipe.body; b; b = b->next) {
		if (isload(e, b)) {
			const Region *r = &b->u.copy.src, *w = &b->u.copy.dst;

			for (d = 0; d < r->ndim; d++)
				if (uses_vars(r->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			for (d = 0; d < w->ndim; d++)
				if (uses_vars(w->off[d], bad))
					return "a load's offset depends on a value computed in the loop body";
			if (rd[w->buf] || wr[w->buf] || loaded[w->buf])
				return "a loaded buffer is used before its load in the body";
			loaded[w->buf] = 1;
			continue;
		}
		if (b->kind == S_LET) {
			if (uses_vars(b->u.let.value, bad))
				bad[b->u.let.var->id] = 1;
		} else {
			unsigned char *w2 = anewn(e->a, unsigned char, e->k->nbuf + 1);
			unsigned char *r2 = anewn(e->a, unsigned char, e->k->nbuf + 1);

			lw_sh_stmts(e, b, r2, w2, 1);
			for (i = 0; i < e->k->nbuf; i++) {
				if (w2[i] && loaded[i])
					return "the body writes a loaded buffer";
				rd[i] |= r2[i], wr[i] |= w2[i];
			}
			/* a load inside a nested statement does not run ahead */
			{
				unsigned char *w3 = anewn(e->a, unsigned char, e->k->nbuf + 1);

				memset(r2, 0, (size_t)e->k->nbuf);
				lw_sh_stmts(e, b, r2, w3, 1);
				if (b->kind == S_IF || b->kind == S_FOR || b->kind == S_PIPELINE)
					for (i = 0; i < e->k->nbuf; i++)
						if (w3[i])
							return "a nested statement of the body writes shared memory";
			}
		}
	}
	/* a buffer loaded by the body must not be written by the rest of the body */
	return NULL;
}

/*
 * The body is loads plus gemms that all lower to wgmma (nothing else reads
 * the accumulators): 0 if not, else the mode of pipeline(): 2 (one
 * wgmma group in flight, loads S - 2 ahead) from 4 stages up, 1 (loads
 * S - 1 ahead, each gemm retires its group) below. Measured on the H200
 * (test/gpu/NOTES.md): with 3 stages, a group in flight at the price of one
 * stage of prefetch fell to 0.45x cuBLAS; with 4 stages it reached 0.79x
 * at 4096^3.
 */
static int
wgmma_body(Em *e, const IrStmt *st)
{
	const IrStmt *b;
	GemmPlan p;
	Err scratch = {0};
	int n = 0;

	if (st->u.pipe.stages < 2)
		return 0;
	for (b = st->u.pipe.body; b; b = b->next) {
		if (isload(e, b))
			continue;
		if (b->kind != S_GEMM || lw_plan_of(e, b, &p, &scratch) || p.instr != GEMM_WGMMA)
			return 0;
		n++;
	}
	if (!n)
		return 0;
	return st->u.pipe.stages >= 4 ? 2 : 1;
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
	int S = st->u.pipe.stages > 1 ? st->u.pipe.stages : 1, mode = wgmma_body(e, st);
	int D = mode == 2 ? S - 2 : S - 1, r = -1;
	const char *v = lw_vname(e, st->u.pipe.var);
	const IrStmt *b;
	const char *why = pipe_hoistable(e, st);

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
		if (!isload(e, b) && lw_stmt_synced(e, chk, b))
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
