/*
 * plan_epilogue.c: the pass stage-epilogues (plan.h). A GEMM's result tile leaves the
 * registers in the accumulator's fragment: each thread holds pairs of neighbouring elements
 * of a row, so `copy(acc, C[...])` straight to global memory stores 4 (f16) or 8 (f32) bytes a
 * thread and instruction. Staged through shared memory, the same tile is written there in the
 * fragment's pairs and read back in 16-byte rows, so every global store is a 16-byte vector:
 *
 *     copy(acc, C[r, c])   ->   annotate_layout(acc_epi, swizzle(128));
 *                               copy(acc, acc_epi);      (the conversion to C's type here)
 *                               copy(acc_epi, C[r, c]);
 *
 * acc_epi is a new shared buffer of acc's shape and C's type. The rewrite is made before layout
 * inference, so everything after it (inference, the shared-memory plan, the barriers between
 * the copies, guards at ragged edges, vector widths) is what the same program written by hand
 * gets (test/gpu/gemm_sm90_epilogue.tile). It changes where the bytes go, never which values:
 * the two copies store exactly the elements the one copy stored.
 *
 * Where (IrKernel.epilogue: tilec_options.epilogue): a statement of the kernel's body (not
 * nested) `copy(L, G[...])` from the whole of a local tile L into global memory, no atomic op
 * and no loop layout of the program's, after a pipeline whose gemm accumulates a tile of L's
 * shape; and only where it costs no shared memory: no shared buffer is used from the copy on
 * (so the first-fit plan of smem.c puts acc_epi at offset 0, on bytes the pipeline no longer
 * needs), and acc_epi's bytes are at most the pipeline's staged buffers' (all live together
 * in the loop, so the kernel's total already holds them). Auto (-1) takes it on a target
 * with TMA (sm_90a) without --warp-specialize (a producer warpgroup is refused when its stage
 * bytes are shared: lower_kernel.c ws_shared_alias), where the H100 measured the gain
 * (test/gpu/NOTES.md); 1 takes it on any target; 0 never.
 *
 * The shared layout is the Hopper ladder's swizzle for the tile (swizzle_choose: 128 bytes
 * for rows of 64 f16): the fragment's eight rows of a warp then fall on eight different
 * 16-byte chunks, where a row-major tile of 512-byte rows puts them on the same banks.
 */
#include <string.h>

#include "lower.h"
#include "plan.h"

typedef struct Pipe {
	const IrStmt *s;
	int64_t bytes;      /* the shared buffers loaded in its body, all stages */
	int acc[8];         /* gemm accumulators in its body */
	int nacc;
} Pipe;

static int
whole_region(const IrKernel *k, const Region *r)
{
	const IrBuffer *B = &k->bufs[r->buf];
	int64_t v;
	int d;

	if (r->ndim != B->ndim)
		return 0;
	for (d = 0; d < r->ndim; d++)
		if (B->dims[d].sym || r->ext[d] != B->dims[d].c || !ir_is_const(r->off[d], &v) || v)
			return 0;
	return 1;
}

static int64_t
elems_of(const IrBuffer *B)
{
	int64_t n = 1;
	int d;

	for (d = 0; d < B->ndim; d++) {
		if (B->dims[d].sym || B->dims[d].c <= 0 || n > ((int64_t)1 << 40) / B->dims[d].c)
			return -1;
		n *= B->dims[d].c;
	}
	return n;
}

/* a pipeline's loads into shared memory and its gemms */
typedef struct PipeWalk {
	const IrKernel *k;
	Pipe *p;
	unsigned char *seen;
} PipeWalk;

static int
pipe_visit(IrStmt *s, void *ctx)
{
	PipeWalk *w = ctx;
	const IrKernel *k = w->k;

	if (s->kind == S_COPY && k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED &&
	    !w->seen[s->u.copy.dst.buf]) {
		const IrBuffer *B = &k->bufs[s->u.copy.dst.buf];
		int64_t n = elems_of(B);

		w->seen[s->u.copy.dst.buf] = 1;
		if (n > 0)
			w->p->bytes += n * dtype_bytes(B->dtype) *
				       (w->p->s->u.pipe.stages > 1 ? w->p->s->u.pipe.stages : 1);
	}
	if (s->kind == S_GEMM && w->p->nacc < 8)
		w->p->acc[w->p->nacc++] = s->u.gemm.c.buf;
	return 0;
}

/* a layout statement of a shared buffer (ir_stmt_bufs leaves them out: they move no data) */
static int
layout_visit(IrStmt *s, void *ctx)
{
	const IrKernel *k = ctx;
	int i, b[2] = {-1, -1};

	switch (s->kind) {
	case S_ANNOTATE_LAYOUT: case S_REQUIRE_LAYOUT: case S_RELEASE_LAYOUT: case S_DUMP_LAYOUT:
	case S_ASSERT_SAME_LAYOUT:
		b[0] = s->u.layout.buf, b[1] = s->u.layout.other;
		break;
	case S_REQUIRE_WMMA_LAYOUT: b[0] = s->u.wmma.buf; break;
	default: break;
	}
	for (i = 0; i < 2; i++)
		if (b[i] >= 0 && b[i] < k->nbuf && k->bufs[b[i]].scope == MEM_SHARED)
			return 1;
	return 0;
}

/* is a shared buffer used in statement list s (nested bodies too)? */
static int
uses_shared(Arena *a, const IrKernel *k, IrStmt *s)
{
	unsigned char *rd = anewn(a, unsigned char, k->nbuf + 1), *wr = anewn(a, unsigned char, k->nbuf + 1);
	int i;

	ir_stmt_bufs(k, s, 0, rd, wr);
	for (i = 0; i < k->nbuf; i++)
		if ((rd[i] || wr[i]) && k->bufs[i].scope == MEM_SHARED)
			return 1;
	return ir_walk(s, layout_visit, (void *)k);
}

/* the copy s (from the whole of local tile L into global memory, after pipeline p): staged,
 * or why not (NULL: staged) */
static const char *
stage(Arena *a, IrKernel *k, IrStmt *s, const Pipe *p, IrStmt **head, Err *err)
{
	const IrBuffer *L = &k->bufs[s->u.copy.src.buf], *G = &k->bufs[s->u.copy.dst.buf];
	const IrBuffer *acc = NULL;
	int64_t shape[IR_MAXDIM], n;
	int i, d, eb = dtype_bytes(G->dtype), b;
	SmemLayout sl;
	LayoutLit *lit;
	IrDim *dims;
	IrStmt *an, *c1;
	Err e2 = {0};

	*head = NULL;
	for (i = 0; i < p->nacc && !acc; i++) {
		const IrBuffer *A = &k->bufs[p->acc[i]];

		if (A->ndim != L->ndim)
			continue;
		for (d = 0; d < L->ndim && A->dims[d].c == L->dims[d].c && !A->dims[d].sym; d++)
			;
		if (d == L->ndim)
			acc = A;
	}
	if (!acc)
		return "the tile is not the shape of the pipeline's accumulator";
	if (L->ndim != 2 || (n = elems_of(L)) <= 0)
		return "the tile is not a 2-D tile of constant shape";
	if (eb != 1 && eb != 2 && eb != 4)
		return "the destination's elements are not 1, 2 or 4 bytes";
	if (n * eb > p->bytes)
		return "the staged tile takes more shared memory than the pipeline's stages";
	if (uses_shared(a, k, s->next))
		return "shared memory is used after the copy";
	for (d = 0; d < 2; d++)
		shape[d] = L->dims[d].c;
	if (swizzle_choose(a, shape, 2, eb, 1, 1, &sl, &e2))
		return "no shared layout for the tile";
	if (sl.kind != SMEM_SWIZZLE && sl.kind != SMEM_PADDED)
		return "no swizzled or padded shared layout for the tile";
	if (sl.kind == SMEM_PADDED) {
		/* padding adds bytes: the pipeline's must still hold them */
		int64_t pe = 1;

		for (d = 0; d < sl.layout->nout; d++)
			pe *= sl.layout->out_shape[d];
		if (pe * eb > p->bytes)
			return "the padded tile takes more shared memory than the pipeline's stages";
	}
	dims = anewn(a, IrDim, 2);
	for (d = 0; d < 2; d++)
		dims[d].c = shape[d], dims[d].sym = NULL;
	b = ir_kernel_buffer(a, k, arena_printf(a, "%s_epi", L->name), MEM_SHARED, G->dtype, 2, dims,
			     s->loc);
	if (b < 0) {
		err_set(err, "stage-epilogues: out of memory");
		return NULL;
	}
	/* k->bufs may have moved */
	L = &k->bufs[s->u.copy.src.buf];
	G = &k->bufs[s->u.copy.dst.buf];
	lit = anew(a, LayoutLit);
	lit->kind = sl.kind == SMEM_SWIZZLE ? LAYOUT_SWIZZLE : LAYOUT_PADDED;
	lit->loc = s->loc;
	lit->bytes = sl.mode == SWZ_128B ? 128 : sl.mode == SWZ_64B ? 64 : 32;
	an = ir_stmt(a, S_ANNOTATE_LAYOUT, s->loc);
	an->u.layout.buf = b;
	an->u.layout.lit = lit;
	an->u.layout.other = -1;
	c1 = ir_stmt(a, S_COPY, s->loc);
	c1->u.copy.src = s->u.copy.src;
	c1->u.copy.dst = ir_region_whole(a, k, b, s->loc);
	c1->note = arena_printf(a, "epilogue: %s reaches %s through shared memory %s (%s, on the "
				"pipeline's stage bytes) in 16-byte rows (--epilogue=direct: from the "
				"fragment)", L->name, G->name, k->bufs[b].name,
				sl.kind == SMEM_SWIZZLE ? arena_printf(a, "%d-byte swizzle", lit->bytes)
							: "padded rows");
	/* s becomes the second copy, from acc_epi; the annotation and the first copy go before it */
	s->u.copy.src = ir_region_whole(a, k, b, s->loc);
	an->next = c1;
	c1->next = s;
	*head = an;
	return NULL;
}

/* every qualifying copy of the kernel's body staged; a copy that qualifies but for one
 * condition says which in a comment */
int
plan_epilogues(Arena *a, const Target *t, IrKernel *k, Err *err)
{
	IrStmt **link, *s, *head;
	Pipe p;
	int have = 0, mode = k->epilogue;
	const char *why;

	if (mode < 0)
		mode = t->has_tma && !k->ws;
	if (!mode)
		return 0;
	memset(&p, 0, sizeof p);
	for (link = &k->body; (s = *link); link = &s->next) {
		if (s->kind == S_PIPELINE) {
			PipeWalk w;

			memset(&p, 0, sizeof p);
			p.s = s;
			w.k = k, w.p = &p, w.seen = anewn(a, unsigned char, k->nbuf + 1);
			ir_walk(s->u.pipe.body, pipe_visit, &w);
			have = p.nacc > 0 && p.bytes > 0;
		} else if (have && s->kind == S_COPY && s->u.copy.atomic == AT_NONE && !s->u.copy.layout &&
			   k->bufs[s->u.copy.src.buf].scope == MEM_LOCAL &&
			   k->bufs[s->u.copy.dst.buf].scope == MEM_GLOBAL && whole_region(k, &s->u.copy.src)) {
			why = stage(a, k, s, &p, &head, err);
			if (why)
				s->note = arena_printf(a, "epilogue: %s stored from the fragment, not through "
						       "shared memory: %s", k->bufs[s->u.copy.src.buf].name, why);
			else if (!head)
				return -1;
			else
				*link = head;
		}
	}
	return 0;
}
