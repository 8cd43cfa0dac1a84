/*
 * plan_copy.c: the pass plan-copies, each copy's instruction. Registers
 * <-> memory: v-element loads and stores through the tile's slots, or
 * element by element. Global -> shared: cp.async 16-byte chunks with zero
 * fill where the target has it (HIP: tilec_hip.h's synchronous 16-byte
 * copies); without it, 16-byte loads that read zeros past the source's edge.
 * Other copies between memories: 16-byte loads and stores, or element by
 * element. The width is plan-vectors'; where it is only proven at run time,
 * the lowering's element-by-element path uses the scalar form of the same
 * instruction (copy_instr_scalar).
 */
#include "lw.h"

const char *
copy_instr_name(CopyInstr i)
{
	static const char *const names[] = {"not chosen yet", "registers", "element by element", "vector",
					    "vector, zero-filled", "element by element, zero-filled",
					    "cp.async"};

	return (unsigned)i < sizeof names / sizeof names[0] ? names[i] : "?";
}

/* the instruction of a copy between memories at width v; gs / gd: the source / destination
 * accesses need bounds guards */
CopyInstr
lw_tile_instr(const Em *e, const IrStmt *st, int v, int gs, int gd)
{
	const IrBuffer *SB = &e->k->bufs[st->u.copy.src.buf], *DB = &e->k->bufs[st->u.copy.dst.buf];
	int g2s = SB->scope == MEM_GLOBAL && DB->scope == MEM_SHARED;

	if (v > 1 && (e->t->has_cp_async || e->t->kind == TGT_HIP) && g2s)
		return CPI_CP_ASYNC;
	if (g2s && gs && !gd)
		return v > 1 ? CPI_VECTOR_ZFILL : CPI_SCALAR_ZFILL;
	return v > 1 ? CPI_VECTOR : CPI_SCALAR;
}

int
lw_plan_copy(Em *e, const IrStmt *st, CopyPlan *cp)
{
	const Region *sr = &st->u.copy.src, *dr = &st->u.copy.dst;
	int64_t ext[IR_MAXDIM];
	int nn = nest_shape(st, ext);

	switch (cp->kind) {
	case CPK_LOCAL:
		cp->instr = CPI_REGS;
		break;
	case CPK_LOAD:
	case CPK_STORE:
		cp->instr = cp->v > 1 ? CPI_VECTOR : CPI_SCALAR;
		break;
	case CPK_TILE: {
		char *cs[IR_MAXDIM];

		lw_chunknames(e, nn, cs);
		cp->instr = lw_tile_instr(e, st, cp->v, lw_regguard(e, sr, cs, nn, cp->v) != NULL,
					  lw_regguard(e, dr, cs, nn, cp->v) != NULL);
		break;
	}
	}
	return 0;
}

static int
copy_visit(IrStmt *s, void *ctx)
{
	Em *e = ctx;

	if (s->kind != S_COPY)
		return 0;
	if (!s->copy_plan) {
		CopyPlan *cp = anew(e->a, CopyPlan);

		if (lw_plan_vector(e, s, cp))
			return err_loc(e->err, s->loc);
		s->copy_plan = cp;
	}
	if (lw_plan_copy(e, s, s->copy_plan))
		return err_loc(e->err, s->loc);
	return 0;
}

int
plan_copies(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	Em e;

	if (lw_setup(&e, a, t, k, err))
		return -1;
	return ir_walk(k->body, copy_visit, &e);
}

/* ---- the dump ---------------------------------------------------------------------- */

static const char *const kindname[] = {"registers -> registers", "memory -> registers",
				       "registers -> memory", "between memories"};

static int
copies_dump(IrStmt *s, void *ctx)
{
	const PlanDump *d = ctx;
	const CopyPlan *cp = s->copy_plan;

	if (s->kind != S_COPY || !cp)
		return 0;
	buf_printf(d->b, "//   copy at %d:%d %s -> %s: %s, %d element%s per access, %s", s->loc.line, s->loc.col,
		   d->k->bufs[s->u.copy.src.buf].name, d->k->bufs[s->u.copy.dst.buf].name, kindname[cp->kind],
		   cp->v, cp->v == 1 ? "" : "s", copy_instr_name(cp->instr));
	if (cp->why)
		buf_printf(d->b, " (%s)", cp->why);
	/* a strided tensor's vectors depend on its stride symbols and pointer (lw_veccond) */
	if (cp->v > 1) {
		const IrBuffer *G = &d->k->bufs[s->u.copy.src.buf];
		int d0, any = 0;

		if (G->scope != MEM_GLOBAL)
			G = &d->k->bufs[s->u.copy.dst.buf];
		if (G->scope == MEM_GLOBAL && G->strides) {
			buf_puts(d->b, " (checked at kernel entry, else element by element:");
			for (d0 = 0; d0 < G->ndim - 1; d0++)
				if (G->strides[d0].sym && !lw_assumed_multiple(d->k, G->strides[d0].sym, cp->v))
					buf_printf(d->b, "%s %s %% %d == 0", any++ ? "," : "", G->strides[d0].sym->name, cp->v);
			buf_printf(d->b, "%s '%s' %d-byte aligned)", any ? "," : "", G->name,
				   cp->v * (int)dtype_bytes(G->dtype));
		}
	}
	buf_putc(d->b, '\n');
	return 0;
}

void
plan_copies_dump(Buf *b, const IrKernel *k)
{
	PlanDump d = {b, k};

	buf_printf(b, "// copies of %s\n", k->name);
	ir_walk(k->body, copies_dump, &d);
}
