/*
 * lower_kernel.c: the lowering of a kernel into the lowered IR (gen/lir/lir.h):
 * the kernel's entry (launch contract, parameters, shared-memory views, local
 * fragments), the statement walk, and the barriers between statements that
 * read and write shared memory (hazard tracking). lower_kernels() is the
 * lower-kernels pass; emit_cuda() lowers, verifies and prints in one call.
 * Local buffers and parallel nests are partitioned per thread through the
 * fragment inverse; edges are guarded unless assume() or the range prover
 * shows they cannot be crossed.
 */
#include "lw.h"

static int stmt1_lower(Em *e, Buf *chk, const IrStmt *s);
/* one statement; a failure takes its place in the source (the innermost statement that failed) */
int
lw_stmt1(Em *e, Buf *chk, const IrStmt *s)
{
	if (stmt1_lower(e, chk, s))
		return err_loc(e->err, s->loc);
	return 0;
}

static int
stmt1_lower(Em *e, Buf *chk, const IrStmt *s)
{
	if (lw_serial_check(e, s))
		return -1;
	if (s->note)
		lw_comment(e, "%s", s->note);
	{
		switch (s->kind) {
		case S_COPY:
			if (s->late_address && e->t->kind == TGT_HIP) {
				/* require_layout(..., late_address_compute = true): the thread's lane and
				 * warp are recomputed from threadIdx here, not kept from the kernel entry */
				int r;

				lw_open_block(e, "late_address_compute: lane and warp recomputed at this use");
				lw_add(e, L_COORDS)->u.wait.n = e->t->warp_size;
				r = lw_copy(e, chk, s);
				lw_pop(e);
				if (r)
					return -1;
				break;
			}
			if (lw_copy(e, chk, s))
				return -1;
			break;
		case S_GEMM:
			if (lw_gemm(e, s))
				return -1;
			break;
		case S_FILL:
			if (lw_fill(e, s))
				return -1;
			break;
		case S_PARALLEL:
			if (lw_parallel(e, chk, s))
				return -1;
			break;
		case S_STORE:
			if (lw_store(e, s))
				return -1;
			break;
		case S_LET:
			lw_decl(e, 0, lw_ctype(lw_calctype(s->u.let.var->type)), lw_vname(e, s->u.let.var), 0,
			     lw_exprstr(e, s->u.let.value), NULL);
			break;
		case S_SET:
			lw_assign(e, LM_LOCAL, -1, 0, lw_vname(e, s->u.let.var), lw_exprstr(e, s->u.let.value));
			break;
		case S_FOR: {
			/* the bound is evaluated once, before the first iteration */
			int64_t lo, n;
			const char *vn = lw_vname(e, s->u.loop.var);

			if (ir_is_const(s->u.loop.lo, &lo) && ir_is_const(s->u.loop.extent, &n))
				lw_open_for(e, vn, arena_printf(e->a, "%lld", (long long)lo),
					 arena_printf(e->a, "%lld", (long long)(lo + n)), n, 0, 0);
			else
				lw_open_for(e, vn, lw_exprstr(e, s->u.loop.lo),
					 arena_printf(e->a, "%s + %s", lw_exprstr(e, s->u.loop.lo), lw_exprstr(e, s->u.loop.extent)),
					 -1, 0, 1);
			if (lw_loopbody(e, chk, s->u.loop.body))
				return -1;
			lw_pop(e);
			break;
		}
		case S_PIPELINE:
			if (lw_pipeline(e, chk, s))
				return -1;
			break;
		case S_IF: {
			/* after the if: what either branch left pending */
			unsigned char *rd0 = NULL, *wr0 = NULL;
			int b;
			LNode *ifn;

			if (e->shrd && !e->par) {
				rd0 = anewn(e->a, unsigned char, e->k->nbuf + 1);
				wr0 = anewn(e->a, unsigned char, e->k->nbuf + 1);
				memcpy(rd0, e->shrd, (size_t)e->k->nbuf);
				memcpy(wr0, e->shwr, (size_t)e->k->nbuf);
			}
			/* an if inside a parallel nest is per point; outside, its condition reads what
			 * every thread sees alike (serial_check) */
			ifn = lw_open_if(e, lw_exprstr(e, s->u.cond.cond), 0, e->par != NULL);
			if (lw_stmts(e, chk, s->u.cond.then))
				return -1;
			if (s->u.cond.els) {
				unsigned char *rd1 = NULL, *wr1 = NULL;

				if (rd0) {
					rd1 = anewn(e->a, unsigned char, e->k->nbuf + 1);
					wr1 = anewn(e->a, unsigned char, e->k->nbuf + 1);
					memcpy(rd1, e->shrd, (size_t)e->k->nbuf);
					memcpy(wr1, e->shwr, (size_t)e->k->nbuf);
					memcpy(e->shrd, rd0, (size_t)e->k->nbuf);
					memcpy(e->shwr, wr0, (size_t)e->k->nbuf);
				}
				lw_open_else(e, ifn, NULL);
				if (lw_stmts(e, chk, s->u.cond.els))
					return -1;
				if (rd0)
					for (b = 0; b < e->k->nbuf; b++)
						e->shrd[b] |= rd1[b], e->shwr[b] |= wr1[b];
			} else if (rd0) {
				for (b = 0; b < e->k->nbuf; b++)
					e->shrd[b] |= rd0[b], e->shwr[b] |= wr0[b];
			}
			lw_pop(e);
			break;
		}
		case S_REDUCE:
			if (lw_reduce(e, s))
				return -1;
			break;
		case S_BARRIER:
			lw_barrier(e);
			break;
		default:
			break; /* assume and layout statements emit nothing */
		}
	}
	return 0;
}

/* ---- barriers: every statement sees the shared memory the statements before it left ---- */

/* the shared buffers statement list s (with what it nests) reads and writes, and tensors: a
 * statement's global writes are seen by the block's other threads only after a barrier too */
void
lw_sh_stmts(const Em *e, const IrStmt *s, unsigned char *rd, unsigned char *wr, int one)
{
	unsigned char *r2 = anewn(e->a, unsigned char, e->k->nbuf + 1);
	unsigned char *w2 = anewn(e->a, unsigned char, e->k->nbuf + 1);
	int b;

	ir_stmt_bufs(e->k, s, one, r2, w2);
	for (b = 0; b < e->k->nbuf; b++)
		if (e->k->bufs[b].scope != MEM_LOCAL)
			rd[b] |= r2[b], wr[b] |= w2[b];
}

/* do shared buffers a and b share bytes (the same buffer, or overlapping lifetimes' bytes
 * the planner gave both)? */
static int
sh_alias(const Em *e, int a, int b)
{
	const SmemBuf *x, *y;

	if (a == b)
		return 1;
	if (!(x = smem_find(&e->sp, a)) || !(y = smem_find(&e->sp, b)))
		return 0;
	return x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;
}

/* is the last node emitted a barrier? */
static int
ends_with_barrier(const Em *e)
{
	const LNode *n = lir_last(e->cur);

	return n && n->kind == L_BARRIER;
}

void
lw_sh_clear(Em *e)
{
	memset(e->shrd, 0, (size_t)e->k->nbuf);
	memset(e->shwr, 0, (size_t)e->k->nbuf);
}

/*
 * Emit s after a __syncthreads when it writes a shared buffer some thread
 * read or wrote since the last barrier, or reads one written since (a
 * statement of the tile program runs for the whole block before the next).
 */
int
lw_stmt_synced(Em *e, Buf *chk, const IrStmt *s)
{
	unsigned char *rd, *wr;
	int b, need = 0;

	if (e->par || !e->shrd)
		return lw_stmt1(e, chk, s);
	rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	wr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	lw_sh_stmts(e, s, rd, wr, 1);
	/* a statement that writes shared memory (anywhere in it: a loop's later iterations
	 * come back to its start) ends what the pipeline's top fence covered */
	for (b = 0; b < e->k->nbuf && e->pipe_fenced; b++)
		if (wr[b] && e->k->bufs[b].scope == MEM_SHARED)
			e->pipe_fenced = 0;
	for (b = 0; b < e->k->nbuf && !need; b++) {
		int c;

		if (!rd[b] && !wr[b])
			continue;
		/* buffers the planner placed on overlapping bytes are one for hazards */
		for (c = 0; c < e->k->nbuf && !need; c++)
			if ((e->shrd[c] || e->shwr[c]) && sh_alias(e, b, c))
				need = (wr[b] && (e->shrd[c] || e->shwr[c])) || (rd[b] && e->shwr[c]);
	}
	if (need) {
		lw_barrier(e);
		lw_sh_clear(e);
	}
	if (lw_stmt1(e, chk, s))
		return -1;
	if (ends_with_barrier(e)) {
		lw_sh_clear(e);
	} else {
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
	}
	return 0;
}

int
lw_stmts(Em *e, Buf *chk, const IrStmt *s)
{
	for (; s; s = s->next)
		if (lw_stmt_synced(e, chk, s))
			return -1;
	return 0;
}

/* a loop body: what the body leaves pending reaches its start again */
int
lw_loopbody(Em *e, Buf *chk, const IrStmt *body)
{
	int b;

	if (e->shrd && !e->par) {
		unsigned char *rd = anewn(e->a, unsigned char, e->k->nbuf + 1);
		unsigned char *wr = anewn(e->a, unsigned char, e->k->nbuf + 1);

		lw_sh_stmts(e, body, rd, wr, 0);
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
		if (lw_stmts(e, chk, body))
			return -1;
		for (b = 0; b < e->k->nbuf; b++)
			e->shrd[b] |= rd[b], e->shwr[b] |= wr[b];
		return 0;
	}
	return lw_stmts(e, chk, body);
}

/* the table an index expression reads (IX_TAB), or NULL */
static const ITab *
readstab(const IExpr *x)
{
	const ITab *t;

	if (!x || x->k == IX_CONST || x->k == IX_VAR)
		return NULL;
	if (x->k == IX_TAB)
		return x->tab;
	return (t = readstab(x->a)) || (t = readstab(x->b)) ? t : readstab(x->c);
}

/* a tile's or shared buffer's layout comment; a fragment with no CuTe form is printed as
 * tilec prints fragments, with the table its coordinates come from (co: NULL for none) */
static void
cutecomment(Em *e, const Layout *L, IExpr *const *co, const char *swz, int vec)
{
	Buf b;
	Err ce = {0};

	buf_init(&b);
	if (L->is_frag) {
		CuteLayout cl;
		const ITab *t = co ? readstab(co[0]) : NULL;

		if (frag_to_cute(e->a, L, &cl, &ce) == 1)
			cute_print_layout(&b, cl);
		else
			buf_printf(&b, "(no CuTe form) %s", layout_str(e->a, L));
		if (t)
			buf_printf(&b, "  coordinates: table %s", t->name);
	} else {
		CuteComposed cc;

		if (!strcmp(swz, "none") && layout_to_cute(e->a, L, LC_FLAT, &cc, &ce) == 1)
			cute_print_layout(&b, cc.l);
		else if (layout_to_cute(e->a, L, LC_COMPOSED, &cc, &ce) == 1)
			cute_print_composed(&b, &cc);
		else
			buf_puts(&b, "(no CuTe form)");
	}
	lw_comment(e, "layout: %s  swizzle: %s  vec: %d", buf_str(&b), swz, vec);
	buf_free(&b);
}

/* the statements of the kernel into the lowered body: once; or, when vector accesses
 * depend on rows-of-whole-vectors flags, as `if (flags) { vector body } else { scalar
 * body }` so that each body keeps its own registers (no scalar code in the vector loops) */
static int
bodies(Em *e, Buf *chk)
{
	LList vb = {0}, sb = {0}, *body = e->cur;
	int i, tmp = e->tmp, ret;

	e->nflags = 0;
	e->scalar = 0;
	e->shrd = anewn(e->a, unsigned char, e->k->nbuf + 1);
	e->shwr = anewn(e->a, unsigned char, e->k->nbuf + 1);
	e->cur = &vb;
	if ((ret = lw_stmts(e, chk, e->k->body)) == 0 && e->nflags > 0) {
		Buf c;
		LNode *n;

		int strided = 0;

		buf_init(&c);
		for (i = 0; i < e->nflags; i++) {
			buf_printf(&c, "%s%s", i ? " && " : "", e->flags[i]);
			strided |= !strncmp(e->flags[i], "tl_ld", 5) || !strncmp(e->flags[i], "tl_al", 5);
		}
		e->cur = body;
		/* the flags depend on sizes alone: every thread takes the same branch */
		n = lw_open_if(e, arena_strdup(e->a, buf_str(&c)), 0, 0);
		buf_free(&c);
		e->tmp = tmp;
		e->static_smem = 0; /* the first try is dropped, and its arrays with it */
		lw_sh_clear(e);
		if ((ret = lw_stmts(e, chk, e->k->body)) == 0) {
			e->scalar = 1;
			lw_open_else(e, n, strided ? "rows, strides or a view's pointer not of whole vectors: "
				     "element by element" : "rows that are not whole vectors: element by element");
			lw_sh_clear(e);
			ret = lw_stmts(e, chk, e->k->body);
			e->scalar = 0;
		}
		lw_pop(e);
		(void)sb;
	} else {
		LNode *x, *nx;

		for (x = vb.head; x; x = nx) {
			nx = x->next;
			lir_append(body, x);
		}
	}
	e->cur = body;
	return ret;
}

/* the lowering state of k (lw.h): a copy of k whose buffers carry their C names, the signs
 * of its variables, its shared-memory plan and the partition of its register tiles, each
 * the pass's (plan-shared-memory, plan-partitions) or made here */
int
lw_setup(Em *e, Arena *a, const Target *t, const IrKernel *k, Err *err)
{
	IrKernel *kc = anew(a, IrKernel);
	int b;

	memset(e, 0, sizeof *e);
	e->a = a, e->t = t, e->err = err;
	e->k = k;
	if (k->smem)
		e->sp = *k->smem;
	else if (smem_plan(a, t, k, &e->sp, err))
		return -1;
	*kc = *k;
	kc->bufs = anewn(a, IrBuffer, k->nbuf + 1);
	for (b = 0; b < k->nbuf; b++) {
		kc->bufs[b] = k->bufs[b];
		kc->bufs[b].name = lw_cname(a, k->bufs[b].name);
	}
	e->k = kc;
	lw_signs(e);
	if (k->part && k->part->nbuf == k->nbuf) {
		e->part = k->part;
	} else {
		e->part = anew(a, KernelPart);
		if (lw_part_tiles(e, e->part))
			return -1;
	}
	e->frag = anewn(a, Layout *, k->nbuf + 1);
	e->coord = anewn(a, IExpr **, k->nbuf + 1);
	e->slots = anewn(a, int64_t, k->nbuf + 1);
	e->pad = anewn(a, int, k->nbuf + 1);
	e->heldc = anewn(a, struct Held *, k->nbuf + 1);
	for (b = 0; b < k->nbuf; b++) {
		e->pad[b] = e->part->tiles[b].pad;
		e->frag[b] = (Layout *)e->part->tiles[b].frag;
		e->coord[b] = e->part->tiles[b].coord;
		e->slots[b] = e->part->tiles[b].slots;
	}
	return 0;
}

/* ---- TMA: the pipelines that load with it, their mbarriers, the tensor maps ---- */

static const char *
dimtext(Em *e, const IrDim *d)
{
	return d->sym ? lw_vname(e, d->sym) : arena_printf(e->a, "%lld", (long long)d->c);
}

static int
tma_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;
	const PipePlan *pp;
	struct TmaPipe *tp;
	int64_t off, bytes;
	int i, j;

	if (s->kind != S_PIPELINE)
		return 0;
	if (!(pp = lw_pipeplan(e, s)))
		return -1;
	if (!pp->tma)
		return 0;
	/* the full and empty barriers after the buffers: without room, cp.async as before */
	off = (e->sp.total + 7) / 8 * 8;
	bytes = 16 * (int64_t)pp->stages;
	if (off + bytes > e->t->smem_max)
		return 0;
	e->sp.total = off + bytes;
	e->sp.needs_optin = e->sp.total > e->t->smem_static_max;
	tp = &e->tpipe[e->ntpipe];
	tp->st = s;
	tp->full = arena_printf(e->a, "tl_full_%s%s", lw_vname(e, s->u.pipe.var),
				e->ntpipe ? arena_printf(e->a, "_%d", e->ntpipe) : "");
	tp->empty = arena_printf(e->a, "tl_empty_%s%s", lw_vname(e, s->u.pipe.var),
				 e->ntpipe ? arena_printf(e->a, "_%d", e->ntpipe) : "");
	e->ntpipe++;
	lw_comment(e, "mbarriers of the pipeline at line %d: %d full (TMA bytes landed), %d empty (stage released)",
		   s->loc.line, pp->stages, pp->stages);
	for (i = 0; i < 2; i++) {
		LNode *n = lw_add(e, L_SMEM_VIEW);

		n->u.view.type = "unsigned long long", n->u.view.name = i ? tp->empty : tp->full, n->u.view.buf = -1;
		n->u.view.offset = off + i * 8 * pp->stages, n->u.view.stages = 1;
		n->u.view.stage_elems = pp->stages, n->u.view.swizzle = "none";
	}
	for (i = 0; i < pp->ntl; i++) {
		const TmaLoad *t = &pp->tl[i];
		int same = 0;

		for (j = 0; j < e->ntmap; j++) {
			const struct TmaMapE *m = &e->tmap[j];

			if (m->buf == t->buf && m->box0 == t->box0 && m->box1 == t->box1 && m->swizzle == t->swizzle)
				break;
			same += m->buf == t->buf;
		}
		if (j < e->ntmap)
			continue;
		if (e->ntmap == 16)
			return err_set(e->err, "more than 16 TMA tensor maps");
		e->tmap[j].buf = t->buf, e->tmap[j].box0 = t->box0, e->tmap[j].box1 = t->box1;
		e->tmap[j].swizzle = t->swizzle;
		e->tmap[j].name = arena_printf(e->a, "tl_tm_%s%s", e->k->bufs[t->buf].name,
					       same ? arena_printf(e->a, "_%d", same) : "");
		e->ntmap++;
	}
	return 0;
}

/* the TMA pipelines of the kernel (their barriers' views into the body) and the map parameters */
static int
tma_setup(Em *e)
{
	LKernel *lk = e->lk;
	int i, np = lk->nparam;

	e->tpipe = anewn(e->a, struct TmaPipe, 64);
	e->tmap = anewn(e->a, struct TmaMapE, 16);
	if (!e->k->tma || !e->t->has_tma)
		return 0;
	if (ir_walk(e->k->body, tma_visit, e) < 0)
		return -1;
	if (!e->ntmap)
		return 0;
	lk->tmaps = anewn(e->a, LTmap, e->ntmap);
	lk->ntmap = e->ntmap;
	for (i = 0; i < e->ntmap; i++) {
		const IrBuffer *G = &e->k->bufs[e->tmap[i].buf];
		LTmap *m = &lk->tmaps[i];

		lk->params[np + i].type = "const __grid_constant__ tl_tmap_t";
		lk->params[np + i].name = e->tmap[i].name;
		lk->params[np + i].is_ptr = 0;
		m->name = e->tmap[i].name, m->tensor = G->name;
		m->esize = dtype_bytes(G->dtype);
		if (G->ndim == 3) /* a box of one plane */
			m->dim0 = dimtext(e, &G->dims[2]), m->dim1 = dimtext(e, &G->dims[1]), m->dim2 = dimtext(e, &G->dims[0]);
		else
			m->dim0 = dimtext(e, &G->dims[1]), m->dim1 = dimtext(e, &G->dims[0]);
		m->rows = m->dim0;
		m->box0 = e->tmap[i].box0, m->box1 = e->tmap[i].box1, m->swizzle = e->tmap[i].swizzle;
	}
	lk->nparam = np + e->ntmap;
	return 0;
}

/* ---- warp specialization (tilec_options.warp_specialize) ---- */

/* the producer warpgroup's registers, and the most a consumer thread takes (TileLang's GEMM:
 * 24 and 240); both multiples of 8 in [24, 256] (setmaxnreg) */
#define WS_PRODUCER_REGS 24
#define WS_CONSUMER_REGS 240
/* persistent (--persistent): the producer also walks the block's tiles (64-bit tile index,
 * the grouped order's divisions), so it keeps 40, CUTLASS's persistent kernels' split */
#define WS_PERSIST_PRODUCER_REGS 40
#define WS_PERSIST_CONSUMER_REGS 232

/* the producer's TMA loads run ahead of the consumers' program order: from the kernel's entry
 * and, persistent, into the next tile's stages while the consumers still finish this tile (its
 * epilogue). A stage buffer of the pipeline st that shares bytes with another shared buffer
 * (the plan reuses bytes of buffers whose statements do not overlap: an epilogue through
 * shared memory after the loop) would be overwritten under the other's reads and writes:
 * why the kernel gets no producer warpgroup, or NULL */
static const char *
ws_shared_alias(Em *e, const IrStmt *st)
{
	int i, j;

	for (i = 0; i < e->sp.n; i++) {
		const SmemBuf *x = &e->sp.bufs[i];

		if (!lw_pipe_loads_into(e, st, x->buf))
			continue;
		for (j = 0; j < e->sp.n; j++) {
			const SmemBuf *y = &e->sp.bufs[j];

			if (!lw_pipe_loads_into(e, st, y->buf) && sh_alias(e, x->buf, y->buf))
				return arena_printf(e->a, "the pipeline's shared buffer '%s' shares bytes with '%s' (the "
						    "shared-memory plan reuses them), which the producer warpgroup's loads, "
						    "running ahead of the consumers, would overwrite",
						    e->k->bufs[x->buf].name, e->k->bufs[y->buf].name);
		}
	}
	return NULL;
}

/* why the kernel's TMA pipeline gets no producer warpgroup, or NULL (then e->ws is set). The
 * producer starts at the kernel's entry and runs one pipeline, so the pipeline is the
 * kernel's only TMA pipeline, a statement of the kernel's body (not in a loop or a branch)
 * with no let before it (its loads see only the kernel's parameters, block indices and the
 * body's own lets); the consumers are whole warpgroups */
static const char *
ws_plan(Em *e)
{
	const IrKernel *k = e->k;
	const IrStmt *s;
	const PipePlan *pp;
	const char *why;

	if (e->ntpipe > 1)
		return "more than one pipeline loads with TMA";
	for (s = k->body; s && s != e->tpipe[0].st; s = s->next)
		if (s->kind == S_LET)
			return "a let before the pipeline (the producer starts at the kernel's entry)";
	if (!s)
		return "the pipeline is inside a loop or a branch";
	if (!(pp = lw_pipeplan(e, s)) || pp->stages < 2)
		return "the pipeline has one stage";
	if ((why = ws_shared_alias(e, s)))
		return why;
	if (k->threads % 128)
		return "the threads are not whole warpgroups";
	if (k->threads + 128 > e->t->max_threads)
		return "the block would pass the target's threads";
	if ((65536 - 128 * WS_PRODUCER_REGS) / k->threads < WS_CONSUMER_REGS)
		return "the consumers' registers (setmaxnreg 240) would pass the register file";
	if (e->persist && (65536 - 128 * WS_PERSIST_PRODUCER_REGS) / k->threads < WS_PERSIST_CONSUMER_REGS)
		return "the consumers' registers (setmaxnreg 232, persistent) would pass the register file";
	e->ws = k->threads;
	return NULL;
}

/* the barriers of l that only the consumers meet: named barrier 1 of their threads */
static void
ws_barriers(LList *l, int64_t consumers)
{
	LNode *n;

	for (n = l->head; n; n = n->next) {
		if (n->kind == L_BARRIER && n->u.bar.kind == LB_BLOCK && !n->u.bar.all)
			n->u.bar.kind = LB_NAMED, n->u.bar.count = consumers;
		ws_barriers(&n->body, consumers);
		ws_barriers(&n->els, consumers);
	}
}

/* the body after mark: `if (tid >= T) { producer } else { the kernel's statements }`, the
 * block grown by the producer warpgroup (the launch contract says so) */
static int
ws_wrap(Em *e, Buf *chk, LNode *mark)
{
	LKernel *lk = e->lk;
	LList rest = {mark ? mark->next : lk->body.head, mark ? (mark->next ? lk->body.tail : NULL) : lk->body.tail};
	LNode *role, *x, *nx;
	Buf c;
	int i, r;

	if (mark)
		mark->next = NULL, lk->body.tail = mark;
	else
		lk->body.head = lk->body.tail = NULL;
	ws_barriers(&rest, e->ws);
	e->cur = &lk->body;
	/* every thread of a warpgroup takes the same branch (T is whole warpgroups) */
	role = lw_open_if(e, arena_printf(e->a, "tid >= %lld", (long long)e->ws), 0, 0);
	role->text = NULL;
	lw_comment(e, "the producer warpgroup: TMA loads only, its registers given to the consumers");
	lw_call(e, LC_OTHER, arena_printf(e->a, "tl_setmaxnreg_dec<%d>", e->persist ? WS_PERSIST_PRODUCER_REGS : WS_PRODUCER_REGS),
		"", NULL);
	buf_init(&c);
	for (i = 0; i < e->nflags; i++)
		buf_printf(&c, "%s%s", i ? " && " : "", e->flags[i]);
	if (e->nflags)
		lw_open_if(e, arena_strdup(e->a, buf_str(&c)), 0, 0);
	buf_free(&c);
	r = lw_ws_producer(e, chk);
	if (e->nflags)
		lw_pop(e);
	lw_open_else(e, role, "the consumers: the kernel's threads");
	lw_call(e, LC_OTHER, arena_printf(e->a, "tl_setmaxnreg_inc<%d>", e->persist ? WS_PERSIST_CONSUMER_REGS : WS_CONSUMER_REGS),
		"", NULL);
	for (x = rest.head; x; x = nx) {
		nx = x->next;
		lir_append(e->cur, x);
	}
	lw_pop(e);
	lk->threads = e->ws + 128;
	return r;
}

/* ---- the persistent schedule (tilec_options.persistent) ---- */

/* why the kernel keeps one block per tile, or NULL: the tile loop is exact for every 2-D
 * grid (the program reads only bx, by, bz, never the grid's size; each tile runs once, in
 * one block, so atomics see the same updates in another order, as between blocks) */
static const char *
persist_plan(Em *e)
{
	if (e->t->kind != TGT_CUDA)
		return "the HIP target (its launchers size no persistent grid)";
	if (e->k->ngrid < 2)
		return "a 1-D grid (the schedule loops over the tiles of a 2-D grid)";
	return NULL;
}

/* does every path through l end with a block barrier (the flags' if: both branches)? */
static int
ends_synced(const LList *l)
{
	const LNode *n = lir_last(l);

	if (!n)
		return 0;
	if (n->kind == L_BARRIER)
		return n->u.bar.kind == LB_BLOCK;
	return n->kind == L_IF && n->els.head && ends_synced(&n->body) && ends_synced(&n->els);
}

/* the tile's bx, by (tl_bx, tl_by) from its index lin in [0, X Y): row-major, or the grouped
 * order of --raster-group (the same map as the plain grid's, lin for by X + bx) */
void
lw_persist_tile(Em *e, const char *lin)
{
	int G = e->k->raster;

	if (G > 0) {
		lw_decl(e, 1, "long long", "tl_gsz_", 0, arena_printf(e->a, "%dLL * tl_tx_", G), NULL);
		lw_decl(e, 1, "int", "tl_fy_", 0, arena_printf(e->a, "(int)(%s / tl_gsz_) * %d", lin, G), NULL);
		lw_decl(e, 1, "int", "tl_gh_", 0, arena_printf(e->a, "tl_ty_ - tl_fy_ < %d ? tl_ty_ - tl_fy_ : %d", G, G), NULL);
		lw_decl(e, 1, "int", "tl_by", 0, arena_printf(e->a, "tl_fy_ + (int)(%s %% tl_gsz_ %% tl_gh_)", lin), NULL);
		lw_decl(e, 1, "int", "tl_bx", 0, arena_printf(e->a, "(int)(%s %% tl_gsz_ / tl_gh_)", lin), NULL);
	} else {
		lw_decl(e, 1, "int", "tl_by", 0, arena_printf(e->a, "(int)(%s / tl_tx_)", lin), NULL);
		lw_decl(e, 1, "int", "tl_bx", 0, arena_printf(e->a, "(int)(%s %% tl_tx_)", lin), NULL);
	}
}

/* for (long long tl_tile_ = blockIdx.x; tl_tile_ < tl_tiles_; tl_tile_ += gridDim.x) and the
 * tile's bx, by: open until lw_pop */
LNode *
lw_persist_open(Em *e)
{
	LNode *n = lw_open_for(e, "tl_tile_", "blockIdx.x", "tl_tiles_", -1, 0, 0);

	n->u.loop.type = "long long", n->u.loop.stepx = "gridDim.x";
	n->text = "this block's tiles";
	lw_persist_tile(e, "tl_tile_");
	return n;
}

/* before the tile loop: the grid's tiles X x Y from the sizes (gridDim no longer says them)
 * and, for the kernel's only TMA pipeline when it is a statement of the body, its barriers'
 * initialization and the count of its iterations before the tile (e->pst, e->pbase) */
static void
persist_head(Em *e)
{
	const IrKernel *k = e->k;
	const IrStmt *s;
	const PipePlan *pp;

	lw_comment(e, "persistent (--persistent): the launch has min(X * Y, SMs * blocks per SM) blocks in x, 1 in y; "
		   "each loops over the tiles blockIdx.x, blockIdx.x + gridDim.x, ... of the X x Y grid%s",
		   k->raster > 0 ? arena_printf(e->a, ", in groups of %d rows of tiles", k->raster) : "");
	lw_decl(e, 1, "int", "tl_tx_", 0, lw_exprstr(e, k->grid[0]), NULL);
	lw_decl(e, 1, "int", "tl_ty_", 0, lw_exprstr(e, k->grid[1]), NULL);
	lw_decl(e, 1, "long long", "tl_tiles_", 0, "tl_tx_ > 0 && tl_ty_ > 0 ? (long long)tl_tx_ * tl_ty_ : 0", NULL);
	if (e->ntpipe != 1)
		return;
	for (s = k->body; s && s != e->tpipe[0].st; s = s->next)
		;
	if (!s || !(pp = lw_pipeplan(e, s)))
		return;
	e->pst = s;
	e->pbase = "tl_pit_";
	lw_comment(e, "the TMA pipeline's barriers, once for every tile: its stages and parities carried over the tiles");
	lw_open_if(e, "tid == 0", 0, 1);
	lw_open_for(e, "s", "0", arena_printf(e->a, "%d", pp->stages), pp->stages, 1, 0);
	lw_call(e, LC_MBAR, "tl_mbar_init", arena_printf(e->a, "&%s[s], 1", e->tpipe[0].full), NULL);
	lw_call(e, LC_MBAR, "tl_mbar_init",
		arena_printf(e->a, "&%s[s], %d", e->tpipe[0].empty, (int)(k->threads / e->t->warp_size)), NULL);
	lw_pop(e);
	lw_call(e, LC_MBAR, "tl_fence_mbar_init", "", NULL);
	lw_pop(e);
	lw_barrier_all(e); /* a producer warpgroup meets it too */
	lw_decl(e, 0, "long long", e->pbase, 0, "0", "// the pipeline's iterations in this block's earlier tiles");
}

/* after the tile loop: every wait of the pipeline's barriers passed (the last tile's closing
 * barrier; the producer's waits precede loads the consumers waited for) */
static void
persist_tail(Em *e)
{
	const PipePlan *pp;

	if (!e->pst || !(pp = lw_pipeplan(e, e->pst)))
		return;
	lw_open_if(e, "tid == 0", 0, 1);
	lw_open_for(e, "s", "0", arena_printf(e->a, "%d", pp->stages), pp->stages, 1, 0);
	lw_call(e, LC_MBAR, "tl_mbar_inval", arena_printf(e->a, "&%s[s]", e->tpipe[0].full), NULL);
	lw_call(e, LC_MBAR, "tl_mbar_inval", arena_printf(e->a, "&%s[s]", e->tpipe[0].empty), NULL);
	lw_pop(e);
	lw_pop(e);
}

static int
kernel(Em *e)
{
	const IrKernel *k = e->k;
	LKernel *lk = e->lk;
	Buf chk;
	int i, b, ret;

	/* the kernel's entry: its launch contract and parameters */
	lk->name = k->name;
	lk->cname = lw_cname(e->a, k->name);
	lk->threads = k->threads;
	lk->smem_bytes = e->sp.total;
	lk->smem_optin = e->sp.needs_optin;
	lk->smem_align = e->sp.align;
	lk->has_smem = e->sp.n > 0;
	lk->warp_size = e->t->warp_size;
	lk->nparam = k->nparam + k->nsize;
	lk->params = anewn(e->a, LParam, lk->nparam + 17); /* room for the tensor maps */
	for (i = 0; i < k->nparam; i++) {
		const IrParam *P = &k->params[i];

		lk->params[i].type = lw_ctype(P->dtype);
		lk->params[i].name = lw_cname(e->a, P->name);
		lk->params[i].is_ptr = P->is_tensor;
	}
	for (i = 0; i < k->nsize; i++) {
		lk->params[k->nparam + i].type = "int";
		lk->params[k->nparam + i].name = lw_vname(e, k->sizes[i]);
	}

	buf_init(&chk);
	e->cur = &lk->body;
	if (k->persist) {
		const char *why = persist_plan(e);

		if (why)
			lw_comment(e, "not persistent: %s", why);
		e->persist = !why;
	}
	if (k->raster > 0 && k->ngrid >= 2 && !e->persist) {
		/* grouped block order: launch index lin = by * X + bx runs through groups of G rows
		 * of tiles (the last one gh = min(Y - first row, G) rows), column by column inside a
		 * group: tile (fy + r % gh, r / gh) for r = lin % (G X). A bijection of the grid: r <
		 * gh X in every group, ragged grids included. 64-bit products (G X may pass 2^31) */
		int G = k->raster;

		e->raster = G;
		lw_comment(e, "grouped block order (raster group %d; --raster-group=0: launch order): groups of %d rows of tiles, column by column "
			   "inside a group (the last group of a ragged grid has the rows left)", G, G);
		lw_decl(e, 1, "long long", "tl_lin_", 0, "(long long)blockIdx.y * gridDim.x + blockIdx.x", NULL);
		lw_decl(e, 1, "long long", "tl_gsz_", 0, arena_printf(e->a, "%dLL * gridDim.x", G), NULL);
		lw_decl(e, 1, "int", "tl_fy_", 0, arena_printf(e->a, "(int)(tl_lin_ / tl_gsz_) * %d", G), NULL);
		lw_decl(e, 1, "int", "tl_gh_", 0, arena_printf(e->a, "(int)gridDim.y - tl_fy_ < %d ? (int)gridDim.y - tl_fy_ : %d", G, G),
			NULL);
		lw_decl(e, 1, "int", "tl_by", 0, "tl_fy_ + (int)(tl_lin_ % tl_gsz_ % tl_gh_)", NULL);
		lw_decl(e, 1, "int", "tl_bx", 0, "(int)(tl_lin_ % tl_gsz_ / tl_gh_)", NULL);
	}
	/* TMA barriers grow the dynamic shared memory: before the contract is read */
	if (tma_setup(e)) {
		buf_free(&chk);
		return -1;
	}
	lk->smem_bytes = e->sp.total;
	lk->smem_optin = e->sp.needs_optin;
	for (i = 0; i < e->sp.n; i++) {
		const SmemBuf *sb = &e->sp.bufs[i];
		const IrBuffer *B = &k->bufs[sb->buf];

		cutecomment(e, sb->layout, NULL, swizzle_name(sb->mode), (int)sb->run);
		{
			LNode *n = lw_add(e, L_SMEM_VIEW);

			n->u.view.type = lw_ctype(B->dtype), n->u.view.name = B->name, n->u.view.buf = sb->buf;
			n->u.view.offset = sb->offset, n->u.view.stages = sb->stages;
			n->u.view.stage_elems = sb->stage_elems, n->u.view.swizzle = swizzle_name(sb->mode);
		}
	}
	for (b = 0; b < k->nbuf; b++) {
		const IrBuffer *B = &k->bufs[b];
		if (B->scope != MEM_LOCAL)
			continue;
		cutecomment(e, e->frag[b], e->coord[b], "none", lw_tilevec(e, b));
		lw_decl(e, 0, lw_ctype(B->dtype), B->name, e->slots[b], NULL, NULL);
	}
	{
		LNode *mark = lk->body.tail;
		/* said only of a kernel with a TMA pipeline (the others have nothing to specialize) */
		const char *why = e->k->ws && e->t->has_tma && e->k->tma && e->ntpipe ? ws_plan(e) : NULL;

		if (why)
			lw_comment(e, "not warp-specialized: %s", why);
		if (e->persist) {
			persist_head(e);
			mark = lk->body.tail;
			lw_persist_open(e);
			ret = bodies(e, &chk);
			/* the tile's shared data read by every thread before the next tile's writes,
			 * unless the tile ends with a barrier */
			if (!ends_synced(e->cur)) {
				lw_barrier(e);
				lir_last(e->cur)->text = "the tile's end: its shared data read before the next tile's writes";
			}
			lw_pop(e);
			persist_tail(e);
			lk->persistent = 1;
		} else {
			ret = bodies(e, &chk);
		}
		if (ret == 0 && e->ws_done)
			ret = ws_wrap(e, &chk, why ? lk->body.tail : mark);
		else
			e->ws = 0;
	}
	buf_free(&chk);
	lk->tabs = e->part->tabs, lk->ntab = e->part->ntab;
	/* the block's shared memory is the plan's (checked by smem_plan) plus the static arrays of
	 * the reduces, which only the body knows: over the target's limit it cannot launch */
	if (ret == 0 && e->static_smem && e->sp.total + e->static_smem > e->t->smem_max)
		ret = err_set(e->err, "needs %lld bytes of shared memory (%lld of shared buffers, %lld of the "
			      "reduces' scratch arrays); %s allows %lld: use smaller shared tiles or fewer "
			      "pipeline stages", (long long)(e->sp.total + e->static_smem),
			      (long long)e->sp.total, (long long)e->static_smem, e->t->arch,
			      (long long)e->t->smem_max);
	return ret;
}

/* the lowered IR of every kernel of p into *out (p->arch picks the target) */
int
lower_kernels(Arena *a, const IrProgram *p, LProgram **out, Err *err)
{
	const Target *t;
	const IrKernel *k;
	TargetKind kind;
	LProgram *lp;
	LKernel **tail;
	Em e;
	Err local = {0};
	char msg[sizeof local.msg];

	if (!err)
		err = &local;
	if (!a || !p || !out)
		return err_set(err, "lower_kernels: null argument");
	/* the same lowering for both targets; the dialect and tilec_hip.h give HIP's spellings */
	kind = p->target == 0 ? TGT_CUDA : TGT_HIP;
	if (p->target != 0 && p->target != 1)
		return err_set(err, "lower_kernels: unknown target %d", p->target);
	if (!(t = target_lookup(kind, p->arch ? p->arch : target_default_arch(kind), err)))
		return -1;
	lp = anew(a, LProgram);
	lp->target = p->target;
	lp->arch = t->arch;
	lp->version = TL_VERSION;
	tail = &lp->kernels;
	for (k = p->kernels; k; k = k->next) {
		if (lw_setup(&e, a, t, k, err) == 0)
			e.lk = anew(a, LKernel);
		if (!e.lk || kernel(&e)) {
			snprintf(msg, sizeof msg, "%s", err->msg);
			err_set(err, "kernel '%s': %s", k->name, msg);
			return err_loc(err, k->loc);
		}
		*tail = e.lk;
		tail = &e.lk->next;
	}
	*out = lp;
	return 0;
}

int
emit_cuda(Arena *a, const IrProgram *p, Buf *out, Err *err)
{
	LProgram *lp;

	if (!out)
		return err_set(err, "emit_cuda: null argument");
	if (lower_kernels(a, p, &lp, err) || lir_verify(lp, err))
		return -1;
	lir_render_c(out, lp, lir_dialect(lp));
	return 0;
}

const char *
emit_ctype(DType t)
{
	return lw_ctype(t);
}

const char *
emit_cname(Arena *a, const char *n)
{
	return lw_cname(a, n);
}
