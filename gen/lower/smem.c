/*
 * smem.c: shared-memory planning (lower.h): a layout and swizzle per shared
 * buffer (inferred, from the gemm plan, or chosen here), its pipeline stages,
 * base alignment, lifetimes over statement positions, and first-fit offsets
 * in one dynamic buffer so that buffers with disjoint lifetimes share bytes.
 */
#include <stdio.h>
#include <string.h>

#include "lower.h"

typedef struct Walk {
	const IrKernel *k;
	int pos;
	int *first, *last, *stages;
	const IrStmt **gemm;  /* a gemm reading the buffer */
	const LayoutLit **annot; /* annotate_layout(buf, ...) */
} Walk;

static void
touch(Walk *w, int buf)
{
	if (buf < 0 || buf >= w->k->nbuf)
		return;
	if (w->first[buf] < 0)
		w->first[buf] = w->pos;
	w->last[buf] = w->pos;
}

static void
touchexpr(Walk *w, const IrExpr *e)
{
	int i;

	if (!e)
		return;
	switch (e->kind) {
	case IE_LOAD:
		touch(w, e->u.load.buf);
		for (i = 0; i < e->u.load.n; i++)
			touchexpr(w, e->u.load.idx[i]);
		break;
	case IE_UNARY: touchexpr(w, e->u.un.a); break;
	case IE_BINARY: touchexpr(w, e->u.bin.a); touchexpr(w, e->u.bin.b); break;
	case IE_SELECT:
		touchexpr(w, e->u.sel.c);
		touchexpr(w, e->u.sel.a);
		touchexpr(w, e->u.sel.b);
		break;
	case IE_CAST: touchexpr(w, e->u.cast.a); break;
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			touchexpr(w, e->u.call.args[i]);
		break;
	default: break;
	}
}

static void walk(Walk *w, const IrStmt *s, int stages);

/* a loop body: every buffer touched inside lives for the whole loop */
static void
loop(Walk *w, const IrStmt *body, int stages)
{
	int start = w->pos, b;

	walk(w, body, stages);
	for (b = 0; b < w->k->nbuf; b++) {
		if (w->first[b] >= 0 && w->last[b] >= start) {
			if (w->first[b] > start)
				w->first[b] = start;
			w->last[b] = w->pos;
		}
	}
}

static void
walk(Walk *w, const IrStmt *s, int stages)
{
	int i;

	for (; s; s = s->next) {
		w->pos++;
		switch (s->kind) {
		case S_COPY:
			touch(w, s->u.copy.src.buf);
			touch(w, s->u.copy.dst.buf);
			if (stages > 1 && w->k->bufs[s->u.copy.dst.buf].scope == MEM_SHARED &&
			    w->stages[s->u.copy.dst.buf] < stages)
				w->stages[s->u.copy.dst.buf] = stages;
			break;
		case S_GEMM:
			touch(w, s->u.gemm.a.buf);
			touch(w, s->u.gemm.b.buf);
			touch(w, s->u.gemm.c.buf);
			if (!w->gemm[s->u.gemm.a.buf])
				w->gemm[s->u.gemm.a.buf] = s;
			if (!w->gemm[s->u.gemm.b.buf])
				w->gemm[s->u.gemm.b.buf] = s;
			break;
		case S_FILL:
			touch(w, s->u.fill.dst.buf);
			touchexpr(w, s->u.fill.value);
			break;
		case S_REDUCE:
			touch(w, s->u.reduce.src);
			touch(w, s->u.reduce.dst);
			break;
		case S_STORE:
			touch(w, s->u.store.buf);
			for (i = 0; i < s->u.store.n; i++)
				touchexpr(w, s->u.store.idx[i]);
			touchexpr(w, s->u.store.value);
			break;
		case S_LET: case S_SET:
			touchexpr(w, s->u.let.value);
			break;
		case S_PARALLEL:
			/* the body's statements run interleaved across threads: one position */
			loop(w, s->u.par.body, stages);
			break;
		case S_FOR:
			loop(w, s->u.loop.body, stages);
			break;
		case S_PIPELINE:
			loop(w, s->u.pipe.body, s->u.pipe.stages > 1 ? s->u.pipe.stages : 1);
			break;
		case S_ANNOTATE_LAYOUT:
			if (s->u.layout.buf >= 0 && s->u.layout.buf < w->k->nbuf && s->u.layout.lit)
				w->annot[s->u.layout.buf] = s->u.layout.lit;
			break;
		case S_IF:
			touchexpr(w, s->u.cond.cond);
			walk(w, s->u.cond.then, stages);
			walk(w, s->u.cond.els, stages);
			break;
		default:
			break;
		}
	}
}

/* the layout of shared buffer b: inferred, the gemm's, or chosen here */
static int
choose(Arena *a, const Target *t, const IrKernel *k, int b, const IrStmt *g, const LayoutLit *an,
       SmemBuf *sb, Err *err)
{
	const IrBuffer *B = &k->bufs[b];
	int64_t shape[LAYOUT_MAXDIM];
	int i, eb = dtype_bytes(B->dtype);
	SmemLayout sl;
	GemmPlan gp;
	Err e2 = {0};

	if (B->ndim < 1 || B->ndim > LAYOUT_MAXDIM)
		return err_set(err, "shared buffer '%s' has rank %d", B->name, B->ndim);
	for (i = 0; i < B->ndim; i++) {
		if (B->dims[i].sym)
			return err_set(err, "shared buffer '%s' has a symbolic shape", B->name);
		shape[i] = B->dims[i].c;
	}
	if (B->layout) {
		sb->layout = B->layout;
		sb->source = "inferred";
		if (swizzle_detect(B->layout, eb, &sb->mode) == 0)
			sb->kind = sb->mode == SWZ_NONE ? SMEM_LINEAR : SMEM_SWIZZLE;
		else
			sb->kind = SMEM_PADDED, sb->mode = SWZ_NONE;
		return 0;
	}
	if (an && (an->kind == LAYOUT_SWIZZLE || an->kind == LAYOUT_PADDED || an->kind == LAYOUT_LINEAR)) {
		/* annotate_layout(buf, swizzle(n) | padded | linear) until inference sets the layout */
		memset(&sl, 0, sizeof sl);
		if (an->kind == LAYOUT_SWIZZLE) {
			sl.kind = SMEM_SWIZZLE;
			sl.mode = an->bytes == 128 ? SWZ_128B : an->bytes == 64 ? SWZ_64B : SWZ_32B;
			sl.layout = swizzle_layout(a, sl.mode, shape, B->ndim, eb, err);
		} else if (an->kind == LAYOUT_PADDED) {
			sl.kind = SMEM_PADDED;
			sl.layout = swizzle_padded(a, shape, B->ndim, eb, err);
		} else {
			sl.layout = swizzle_linear(a, shape, B->ndim, err);
		}
		if (!sl.layout)
			return -1;
		sb->source = "annotated";
	} else if (g && (g->gemm_plan ? (gp = *g->gemm_plan, 1) : gemm_plan(a, t, k, g, &gp, &e2) == 0) &&
	    ((g->u.gemm.a.buf == b && gp.a_shared) || (g->u.gemm.b.buf == b && gp.b_shared))) {
		sl = g->u.gemm.a.buf == b ? gp.smem_a : gp.smem_b;
		sb->source = "gemm";
	} else {
		if (swizzle_choose(a, shape, B->ndim, eb, 1, 0, &sl, &e2)) {
			memset(&sl, 0, sizeof sl);
			if (!(sl.layout = swizzle_linear(a, shape, B->ndim, err)))
				return -1;
		}
		sb->source = "default";
	}
	if (!sl.layout)
		return err_set(err, "shared buffer '%s': no layout", B->name);
	sb->layout = sl.layout;
	sb->kind = sl.kind;
	sb->mode = sl.mode;
	return 0;
}

/*
 * The vector run of a planned buffer (SmemBuf.run), decided exactly over its elements: v
 * holds when for every coordinate whose last index is a multiple of v, the v elements from
 * it are at v consecutive offsets starting at a multiple of v, and a stage is a multiple of
 * v elements. Built-in swizzles, padding and row-major keep 16 bytes; a user layout may
 * keep less (a Swizzle<2,1,5> keeps 2 elements).
 */
/* does run v fail at some element of the first rows (a cheap refutation), 0 also when
 * an evaluation fails */
static int
run_broken(const IExpr *lin, const int64_t *shape, int nd, int64_t v)
{
	int64_t vals[IEXPR_NVARS] = {0}, o, ot, x, t, last = shape[nd - 1];

	for (x = 0; x < last; x += v) {
		vals[nd - 1] = x;
		if (iexpr_eval(lin, vals, &o, NULL))
			return 0;
		if (o % v)
			return 1;
		for (t = 1; t < v; t++) {
			vals[nd - 1] = x + t;
			if (iexpr_eval(lin, vals, &ot, NULL))
				return 0;
			if (ot != o + t)
				return 1;
		}
	}
	return 0;
}

int smem_reference_walks;

static int
vector_run(Arena *a, const IrBuffer *B, SmemBuf *sb, Err *err)
{
	const Layout *L = sb->layout;
	int64_t vals[IEXPR_NVARS] = {0}, x[LAYOUT_MAXDIM], o0, o, v, t, last, rows = 1;
	int nd, d, ok;
	IExpr *lin;

	/* a layout without a linear index form gets no vector access; the layout's inputs are
	 * the buffer's dimensions, maybe after leading unit ones (a 1-D buffer as [1, n]) */
	sb->run = 1;
	nd = L->nin;
	if (nd < 1 || nd > LAYOUT_MAXDIM || L->in_shape[nd - 1] != B->dims[B->ndim - 1].c ||
	    !(lin = layout_linear_index(a, L)))
		return 0;
	last = L->in_shape[nd - 1];
	for (d = 0; d < nd - 1; d++)
		rows *= L->in_shape[d];
	for (v = 16 / dtype_bytes(B->dtype); v > 1; v /= 2) {
		if (last % v || sb->stage_elems % v)
			continue;
		if (!smem_reference_walks) {
			int ids[LAYOUT_MAXDIM];

			for (d = 0; d < nd; d++)
				ids[d] = d;
			/* proved from the digits of the linear index, or refuted by the first row */
			if (layout_aff_vecrun_(L->in_shape, ids, nd, &lin, 1, nd - 1, v, 0)) {
				sb->run = v;
				return 0;
			}
			if (run_broken(lin, L->in_shape, nd, v))
				continue;
		}
		ok = 1;
		for (o0 = 0; ok && o0 < rows * last; o0 += v) {
			int64_t r = o0;

			for (d = nd - 1; d >= 0; d--) {
				x[d] = r % L->in_shape[d];
				r /= L->in_shape[d];
			}
			for (d = 0; d < nd; d++)
				vals[d] = x[d];
			if (iexpr_eval(lin, vals, &o, err) < 0)
				return -1;
			if (o % v) {
				ok = 0;
				break;
			}
			for (t = 1; t < v; t++) {
				int64_t ot;

				vals[nd - 1] = x[nd - 1] + t;
				if (iexpr_eval(lin, vals, &ot, err) < 0)
					return -1;
				if (ot != o + t) {
					ok = 0;
					break;
				}
			}
		}
		if (ok) {
			sb->run = v;
			return 0;
		}
	}
	return 0;
}

static int
overlaps(const SmemBuf *x, const SmemBuf *y)
{
	int life = x->first <= y->last && y->first <= x->last;
	int addr = x->offset < y->offset + y->bytes && y->offset < x->offset + x->bytes;

	return life && addr;
}

int
smem_plan(Arena *a, const Target *t, const IrKernel *k, SmemPlan *out, Err *err)
{
	Walk w;
	int b, i, j, n = 0;
	int64_t elems, total = 0, al;

	if (!a || !t || !k || !out)
		return err_set(err, "smem_plan: null argument");
	memset(out, 0, sizeof *out);
	memset(&w, 0, sizeof w);
	w.k = k;
	w.first = anewn(a, int, k->nbuf + 1);
	w.last = anewn(a, int, k->nbuf + 1);
	w.stages = anewn(a, int, k->nbuf + 1);
	w.gemm = anewn(a, const IrStmt *, k->nbuf + 1);
	w.annot = anewn(a, const LayoutLit *, k->nbuf + 1);
	if (!w.first || !w.last || !w.stages || !w.gemm || !w.annot)
		return err_set(err, "smem_plan: out of memory");
	for (b = 0; b < k->nbuf; b++)
		w.first[b] = w.last[b] = -1;
	walk(&w, k->body, 1);
	out->bufs = anewn(a, SmemBuf, k->nbuf + 1);
	if (!out->bufs)
		return err_set(err, "smem_plan: out of memory");
	out->align = 16;
	for (b = 0; b < k->nbuf; b++) {
		SmemBuf *sb = &out->bufs[n];

		if (k->bufs[b].scope != MEM_SHARED || w.first[b] < 0)
			continue;
		sb->buf = b;
		if (choose(a, t, k, b, w.gemm[b], w.annot[b], sb, err))
			return err_loc(err, k->bufs[b].loc);
		sb->stages = w.stages[b] > 1 ? w.stages[b] : 1;
		elems = 1;
		for (i = 0; i < sb->layout->nout; i++)
			if (ck_mul(elems, sb->layout->out_shape[i], &elems))
				return err_set(err, "shared buffer '%s' is too large", k->bufs[b].name),
				       err_loc(err, k->bufs[b].loc);
		sb->stage_elems = elems;
		if (vector_run(a, &k->bufs[b], sb, err))
			return err_loc(err, k->bufs[b].loc);
		if (ck_mul(elems, dtype_bytes(k->bufs[b].dtype), &sb->bytes) ||
		    ck_mul(sb->bytes, sb->stages, &sb->bytes))
			return err_set(err, "shared buffer '%s' is too large", k->bufs[b].name),
			       err_loc(err, k->bufs[b].loc);
		sb->align = sb->mode != SWZ_NONE ? swizzle_alignment(sb->mode) : 16;
		sb->first = w.first[b];
		sb->last = w.last[b];
		if (sb->align > out->align)
			out->align = sb->align;
		/* first fit: the lowest aligned offset clear of every live placed buffer */
		sb->offset = 0;
		for (;;) {
			int moved = 0;

			for (j = 0; j < n; j++) {
				if (overlaps(sb, &out->bufs[j])) {
					al = out->bufs[j].offset + out->bufs[j].bytes;
					sb->offset = (al + sb->align - 1) / sb->align * sb->align;
					moved = 1;
				}
			}
			if (!moved)
				break;
		}
		if (sb->offset + sb->bytes > total)
			total = sb->offset + sb->bytes;
		n++;
	}
	out->n = n;
	out->total = total;
	if (total > t->smem_max) {
		/* what takes the bytes, so the user sees what to shrink (tiles, stages) */
		char what[256];
		size_t at = 0;

		what[0] = 0;
		for (j = 0; j < n && at < sizeof what - 64; j++) {
			const SmemBuf *sj = &out->bufs[j];
			int w2;

			w2 = snprintf(what + at, sizeof what - at, "%s%s %lld", j ? ", " : "",
				      k->bufs[sj->buf].name, (long long)sj->bytes);
			if (w2 > 0)
				at += (size_t)w2;
			if (sj->stages > 1 && at < sizeof what - 32) {
				w2 = snprintf(what + at, sizeof what - at, " (%d stages)", sj->stages);
				if (w2 > 0)
					at += (size_t)w2;
			}
		}
		return err_set(err, "needs %lld bytes of shared memory (%s); %s allows %lld: use smaller "
			       "shared tiles or fewer pipeline stages", (long long)total, what, t->arch,
			       (long long)t->smem_max), err_loc(err, k->loc);
	}
	out->needs_optin = total > t->smem_static_max;
	return 0;
}

const SmemBuf *
smem_find(const SmemPlan *p, int buf)
{
	int i;

	for (i = 0; p && i < p->n; i++)
		if (p->bufs[i].buf == buf)
			return &p->bufs[i];
	return NULL;
}

void
smem_plan_dump(Buf *b, const IrKernel *k, const SmemPlan *p)
{
	int i;

	for (i = 0; i < p->n; i++) {
		const SmemBuf *s = &p->bufs[i];

		buf_printf(b, "%s: %s %s, %d stage%s, %lld bytes at %lld (align %lld), live [%d, %d]\n",
			   k->bufs[s->buf].name, s->source, swizzle_name(s->mode), s->stages,
			   s->stages == 1 ? "" : "s", (long long)s->bytes, (long long)s->offset,
			   (long long)s->align, s->first, s->last);
	}
	buf_printf(b, "total %lld bytes, align %lld%s\n", (long long)p->total, (long long)p->align,
		   p->needs_optin ? ", dynamic opt-in" : "");
}
