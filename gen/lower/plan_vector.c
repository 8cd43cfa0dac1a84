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

static int
vec_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;
	CopyPlan *cp;

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
