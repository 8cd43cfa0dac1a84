/*
 * plan_vector.c: the pass plan-vectors. The vector width of every register
 * tile's slots (the widest run of consecutive, aligned elements of the last
 * dim that every thread holds in consecutive slots, up to 16 bytes; 1-byte
 * elements in words of at least 4) and of every copy's accesses: a copy
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

/* the vector run of local buffer buf's slots for elements of eb bytes */
static int
fragrun(Em *e, int buf, int eb)
{
	int v = eb == 1 || eb == 2 || eb == 4 ? lw_fragvec(e->frag[buf], e->coord[buf], e->slots[buf], 16 / eb) : 1;

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

/*
 * The vector stores of parallel nest st: a global store whose last index walks one loop
 * variable with stride 1 from a multiple of the run (lw_contig_access), into a buffer the
 * body neither reads nor stores elsewhere, in a body of top-level stores and lets, when
 * the loop layout gives every thread runs of that variable in consecutive slots
 * (lw_fragrun) and the layout is neither padded nor replicated. The rows must be whole
 * vectors too: proven, or checked at run time by the lowering (lw_veccond).
 */
int
lw_plan_nestvec(Em *e, const IrStmt *st, NestPlan *np)
{
	const IrStmt *b, *c;
	IrVar *const *vars = st->u.par.vars;
	int n = st->u.par.n, k = -1, d, run = 1, maxv = 16, nv = 0, cnt, misaligned = 0;
	const IrStmt **cand;

	np->vec = 1, np->vdim = 0, np->vst = NULL, np->nvst = 0;
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
		if (B->scope != MEM_GLOBAL || !(eb == 1 || eb == 2 || eb == 4) || b->u.store.atomic ||
		    lw_body_reads(st->u.par.body, b->u.store.buf))
			continue;
		for (ok = 1, c = st->u.par.body; c; c = c->next)
			if (c != b && c->kind == S_STORE && c->u.store.buf == b->u.store.buf)
				ok = 0;
		if (!ok)
			continue;
		for (d = n - 1; d >= 0; d--)
			if ((k < 0 || d == k) && lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[d], 1))
				break;
		if (d < 0)
			continue;
		if (k < 0) {
			k = d;
			run = lw_fragrun(np->frag, np->coord, np->slots, k, 16);
		}
		/* a strided tensor: its memory must be contiguous along the index too (a last
		 * stride of 1, constant strides multiples of v: lw_stridevec) */
		for (v = run < 16 / eb ? run : 16 / eb; v > 1 && (v * eb < 4 ||
		     !lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[k], v) ||
		     lw_stridevec(e, B, v, NULL) < v); v /= 2)
			;
		if (v < 2) {
			misaligned |= run > 1 && !lw_contig_access(B, b->u.store.n, b->u.store.idx, vars[k], 2);
			continue;
		}
		if (v < maxv)
			maxv = v;
		cand[nv++] = b;
	}
	if (k < 0)
		return np->vwhy = "no global store walks a loop variable contiguously", 0;
	if (run < 2)
		return np->vwhy = arena_printf(e->a, "the loop layout holds no runs of '%s' in consecutive slots",
					       vars[k]->name), 0;
	if (!nv)
		return np->vwhy = misaligned ? "the stores' runs do not start at a multiple of the run"
				  : "no store moves at least 4 bytes per run", 0;
	/* one run for the nest, the narrowest store's: a store stays a vector at it when it
	 * still moves 4 bytes or more (aligned at a wider run, it is at a narrower one) */
	for (cnt = 0, d = 0; d < nv; d++)
		if ((int)dtype_bytes(e->k->bufs[cand[d]->u.store.buf].dtype) * maxv >= 4)
			cand[cnt++] = cand[d];
	nv = cnt;
	np->vec = maxv, np->vdim = k, np->vst = cand, np->nvst = nv, np->vwhy = NULL;
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
