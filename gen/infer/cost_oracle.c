/*
 * cost_oracle.c: the brute-force scorer that checks cost.c. It shares no code
 * with cost.c: it walks every (coordinate, replica) point of the layout, fills
 * a thread x slot table, evaluates every access's address from the IR at
 * every point, tries vector widths by testing every cell, and counts the
 * segments every warp touches at every step. Same inputs, same numbers.
 * The one shared definition is "representable": frag_to_cute must succeed.
 */
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "layout_cute.h"

enum { OR_MAXACC = 64 };

typedef struct OAcc {
	int buf, store, nidx;
	IrExpr **idx;          /* parallel: index expressions */
	const Region *g, *l;   /* copy: global and local regions */
	int bufcoords;         /* copy: the layout is over the local buffer's dims */
} OAcc;

typedef struct OStmt {
	const IrKernel *k;
	const IrStmt *s;
	int n;
	OAcc acc[OR_MAXACC];
	int total, bad, global_only, eb;
	const char *why;
} OStmt;

static void
bad(OStmt *o, const char *why)
{
	if (!o->bad)
		o->why = why;
	o->bad = 1;
}

/* integer value of an index expression; nest vars bound, block/loop/scalar vars 0 */
typedef struct OBind {
	const OStmt *o;
	const int64_t *x;
} OBind;

static int
obind_var(void *ctx, const IrVar *v, int64_t *r)
{
	const OBind *b = ctx;
	const IrStmt *s = b->o->s;
	int i;

	if (s->kind == S_PARALLEL)
		for (i = 0; i < s->u.par.n; i++)
			if (s->u.par.vars[i] == v) {
				*r = b->x ? b->x[i] : 0;
				return 0;
			}
	*r = 0;
	return v->kind == VAR_SIZE || v->kind == VAR_LET ? -1 : 0;
}

static int
val(const OStmt *o, const IrExpr *e, const int64_t *x, int64_t *r)
{
	OBind b = {o, x};

	return ir_eval_int(e, obind_var, &b, r);
}

/* the extent assumed for a size symbol (docs/cost.md) */
#define OR_SYM ((int64_t)65536)

static int64_t
extent(const IrBuffer *b, int d)
{
	return b->dims[d].sym ? OR_SYM : b->dims[d].c;
}

/* flat row-major element address of buffer b at indices ix */
static int
flat(const IrBuffer *b, const int64_t *ix, int64_t *r)
{
	int64_t a = 0;
	int d;

	for (d = 0; d < b->ndim; d++) {
		if (d > 0 && ck_mul(a, extent(b, d), &a))
			return -1;
		if (ck_add(a, ix[d], &a))
			return -1;
	}
	*r = a;
	return 0;
}

/* address of access ac at nest point x (coordinates of the layout's inputs) */
static int
addr_at(const OStmt *o, const OAcc *ac, const Layout *F, const int64_t *x, int64_t *r)
{
	const IrBuffer *b = &o->k->bufs[ac->buf];
	int64_t ix[IR_MAXDIM];
	int d, kk, seen;

	if (ac->idx) {
		for (d = 0; d < ac->nidx; d++)
			if (val(o, ac->idx[d], x, &ix[d]))
				return -1;
		return flat(b, ix, r);
	}
	/* copy: loop coordinate kk walks the kk-th non-unit dim of both regions */
	for (d = 0; d < ac->g->ndim; d++)
		if (val(o, ac->g->off[d], NULL, &ix[d]))
			return -1;
	kk = 0;
	for (d = 0; d < ac->g->ndim; d++) {
		int ld = -1, e, s2 = 0;

		if (ac->g->ext[d] == 1)
			continue;
		if (ac->bufcoords) {
			for (e = 0, seen = 0; e < ac->l->ndim; e++)
				if (ac->l->ext[e] != 1 && seen++ == kk) {
					ld = e;
					break;
				}
		} else {
			ld = kk;
		}
		(void)s2;
		if (ld < 0 || ld >= F->nin)
			return -1;
		ix[d] += x[ld];
		kk++;
	}
	return flat(b, ix, r);
}

static void oexpr(OStmt *o, const IrExpr *e);

static void
oaccess(OStmt *o, int buf, int n, IrExpr **idx, int store)
{
	const IrBuffer *b = &o->k->bufs[buf];
	OAcc *ac;

	if (b->scope != MEM_GLOBAL) {
		o->global_only = 0;
		return;
	}
	o->total++;
	if (dtype_bytes(b->dtype) > o->eb)
		o->eb = dtype_bytes(b->dtype);
	if (o->n >= OR_MAXACC)
		return bad(o, "too many accesses");
	ac = &o->acc[o->n++];
	memset(ac, 0, sizeof *ac);
	ac->buf = buf;
	ac->store = store;
	ac->nidx = n;
	ac->idx = idx;
}

static void
oexpr(OStmt *o, const IrExpr *e)
{
	int i;

	if (!e)
		return;
	if (e->kind == IE_LOAD) {
		for (i = 0; i < e->u.load.n; i++)
			oexpr(o, e->u.load.idx[i]);
		oaccess(o, e->u.load.buf, e->u.load.n, e->u.load.idx, 0);
	} else if (e->kind == IE_UNARY) {
		oexpr(o, e->u.un.a);
	} else if (e->kind == IE_BINARY) {
		oexpr(o, e->u.bin.a);
		oexpr(o, e->u.bin.b);
	} else if (e->kind == IE_SELECT) {
		oexpr(o, e->u.sel.c);
		oexpr(o, e->u.sel.a);
		oexpr(o, e->u.sel.b);
	} else if (e->kind == IE_CAST) {
		oexpr(o, e->u.cast.a);
	} else if (e->kind == IE_CALL) {
		for (i = 0; i < e->u.call.n; i++)
			oexpr(o, e->u.call.args[i]);
	}
}

static void
obody(OStmt *o, const IrStmt *b)
{
	int i;

	for (; b; b = b->next)
		if (b->kind == S_STORE) {
			for (i = 0; i < b->u.store.n; i++)
				oexpr(o, b->u.store.idx[i]);
			oexpr(o, b->u.store.value);
			oaccess(o, b->u.store.buf, b->u.store.n, b->u.store.idx, 1);
		} else if (b->kind == S_LET || b->kind == S_SET) {
			oexpr(o, b->u.let.value);
		} else if (b->kind == S_IF) {
			oexpr(o, b->u.cond.cond);
			obody(o, b->u.cond.then);
			obody(o, b->u.cond.els);
		} else if (b->kind != S_ASSUME) {
			o->total++;
			bad(o, "unmodelled statement in a parallel nest");
		}
}

/* product of constant serial trip counts around s; *odd if one was not constant */
static int
trips(const IrStmt *b, const IrStmt *s, int64_t acc, int64_t *r, int *odd)
{
	int64_t e;
	const IrStmt *inner;
	const IrExpr *x;

	for (; b; b = b->next) {
		if (b == s) {
			*r = acc;
			return 1;
		}
		inner = NULL;
		x = NULL;
		if (b->kind == S_FOR) {
			inner = b->u.loop.body;
			x = b->u.loop.extent;
		} else if (b->kind == S_PIPELINE) {
			inner = b->u.pipe.body;
			x = b->u.pipe.extent;
		} else if (b->kind == S_PARALLEL) {
			if (trips(b->u.par.body, s, acc, r, odd))
				return 1;
		} else if (b->kind == S_IF) {
			if (trips(b->u.cond.then, s, acc, r, odd) ||
			    trips(b->u.cond.els, s, acc, r, odd))
				return 1;
		}
		if (inner) {
			int64_t m = acc;
			int c = ir_is_const(x, &e) && e >= 0;

			if (c && ck_mul(m, e, &m))
				m = INT64_MAX;
			if (trips(inner, s, m, r, odd)) {
				if (!c)
					*odd = 1;
				return 1;
			}
		}
	}
	return 0;
}

/* ---- the enumeration -------------------------------------------------------------- */

typedef struct Grid {
	int64_t S, T, R, npts;
	int64_t *pt, *rep;   /* per cell: the point (row-major over the inputs) and replica */
	int64_t **addr;      /* per access, per point */
} Grid;

static void
unflat(const Layout *F, int64_t p, int64_t *x)
{
	int d;

	for (d = F->nin - 1; d >= 0; d--) {
		x[d] = p % F->in_shape[d];
		p /= F->in_shape[d];
	}
}

static int
fill(Arena *a, OStmt *o, const Layout *F, Grid *G)
{
	int64_t p, r, x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], cell, ncell, base, c;
	int i, d;
	Err e = { 0 };

	G->S = F->out_shape[0];
	G->T = F->nthreads;
	G->R = F->rep;
	G->npts = layout_size(F);
	if (ck_mul(G->S, G->T, &ncell) || ck_mul(G->npts, G->R, &p) || p != ncell)
		return -1;
	G->pt = anewn(a, int64_t, ncell);
	G->rep = anewn(a, int64_t, ncell);
	if (!G->pt || !G->rep)
		return -1;
	for (cell = 0; cell < ncell; cell++)
		G->pt[cell] = -1;
	for (p = 0; p < G->npts; p++)
		for (r = 0; r < G->R; r++) {
			unflat(F, p, x);
			x[F->nin] = r;
			if (layout_eval(F, x, y, &e))
				return -1;
			cell = y[F->nout] * G->S + y[0];
			if (y[0] < 0 || y[0] >= G->S || y[F->nout] < 0 || y[F->nout] >= G->T ||
			    G->pt[cell] >= 0)
				return -1;
			G->pt[cell] = p;
			G->rep[cell] = r;
		}
	G->addr = anewn(a, int64_t *, o->n > 0 ? o->n : 1);
	if (!G->addr)
		return -1;
	for (i = 0; i < o->n; i++) {
		G->addr[i] = anewn(a, int64_t, G->npts);
		if (!G->addr[i])
			return -1;
		for (p = 0; p < G->npts; p++) {
			unflat(F, p, x);
			if (addr_at(o, &o->acc[i], F, x, &G->addr[i][p]))
				return -1;
		}
		if (!o->acc[i].idx)
			continue;
		/* parallel accesses must be affine with non-negative strides */
		base = G->addr[i][0];
		for (p = 0; p < G->npts; p++) {
			int64_t want = base, step = 1;

			unflat(F, p, x);
			for (d = F->nin - 1; d >= 0; d--) {
				c = F->in_shape[d] > 1 ? G->addr[i][step] - base : 0;
				if (c < 0)
					return -1;
				want += c * x[d];
				step *= F->in_shape[d];
			}
			if (want != G->addr[i][p])
				return -1;
		}
	}
	return 0;
}

static int
fits(const OStmt *o, const Grid *G, int64_t V)
{
	int64_t t, s, e, a0, c;
	int i;

	for (i = 0; i < o->n; i++) {
		a0 = G->addr[i][G->pt[0]];
		for (t = 0; t < G->T; t++)
			for (s = 0; s < G->S; s += V) {
				c = G->addr[i][G->pt[t * G->S + s]];
				if (floormod64(c - a0, V))
					return 0;
				for (e = 1; e < V; e++)
					if (G->addr[i][G->pt[t * G->S + s + e]] != c + e)
						return 0;
			}
	}
	return 1;
}

static int64_t
count_segs(const OStmt *o, const Grid *G, const Target *t, int i, int64_t V)
{
	int64_t q, w, lane, th, cell, a, lo, hi, n = 0, total = 0, j, seen[1024];
	int ws = t->warp_size, dup;

	for (q = 0; q * V < G->S; q++)
		for (w = 0; w * ws < G->T; w++) {
			n = 0;
			for (lane = 0; lane < ws; lane++) {
				th = w * ws + lane;
				if (th >= G->T)
					break;
				cell = th * G->S + q * V;
				if (o->acc[i].store && G->rep[cell] != 0)
					continue;
				a = G->addr[i][G->pt[cell]];
				lo = floordiv64(a * o->eb, t->segment_bytes);
				hi = floordiv64((a + V) * o->eb - 1, t->segment_bytes);
				for (; lo <= hi; lo++) {
					for (dup = 0, j = 0; j < n && !dup; j++)
						dup = seen[j] == lo;
					if (!dup && n < 1024)
						seen[n++] = lo;
				}
			}
			total += n;
		}
	return total;
}

static int
ostmt(Arena *a, const Target *t, const IrKernel *k, const IrStmt *s, const LayoutMap *map,
      StmtCost *sc, Err *err)
{
	OStmt *o = anew(a, OStmt);
	const Layout *F = NULL, *loop;
	Grid G;
	CuteLayout P;
	int64_t repeat = 1, ext[IR_MAXDIM], el = 1, V, bits, vmax, bw = 0, is = 0, v;
	int i, d, n, odd = 0, sym = 0;
	Err e = { 0 };

	if (!o)
		return err_set(err, "cost oracle: out of memory");
	memset(sc, 0, sizeof *sc);
	sc->stmt = s;
	o->k = k;
	o->s = s;
	o->global_only = 1;
	loop = s->id >= 0 && s->id < map->nstmt ? map->loop[s->id] : NULL;
	if (s->kind == S_PARALLEL) {
		obody(o, s->u.par.body);
		F = loop;
		if (o->total && (!F || !F->is_frag || F->nin != s->u.par.n))
			bad(o, "no usable loop layout");
		for (d = 0; !o->bad && d < s->u.par.n; d++)
			if (F->in_shape[d] != s->u.par.ext[d])
				bad(o, "loop layout shape mismatch");
	} else if (s->kind == S_COPY) {
		const Region *src = &s->u.copy.src, *dst = &s->u.copy.dst, *g, *l;
		MemScope a1 = k->bufs[src->buf].scope, a2 = k->bufs[dst->buf].scope;
		const Layout *B;
		const IrBuffer *lb;
		int whole = 1;
		int64_t off;
		OAcc *ac = &o->acc[0];

		if (!((a1 == MEM_GLOBAL && a2 == MEM_LOCAL) || (a1 == MEM_LOCAL && a2 == MEM_GLOBAL)))
			return 0;
		o->global_only = 0;
		g = a1 == MEM_GLOBAL ? src : dst;
		l = a1 == MEM_GLOBAL ? dst : src;
		lb = &k->bufs[l->buf];
		o->total = 1;
		o->eb = dtype_bytes(k->bufs[g->buf].dtype);
		memset(ac, 0, sizeof *ac);
		ac->buf = g->buf;
		ac->store = a2 == MEM_GLOBAL;
		ac->g = g;
		ac->l = l;
		if (l->ndim != lb->ndim)
			whole = 0;
		for (d = 0; whole && d < l->ndim; d++)
			if (lb->dims[d].sym || lb->dims[d].c != l->ext[d] || !ir_is_const(l->off[d], &off) ||
			    off != 0)
				whole = 0;
		B = l->buf < map->nbuf ? map->buf[l->buf] : NULL;
		if (B && B->is_frag && whole && B->nin == lb->ndim) {
			F = B;
			ac->bufcoords = 1;
			n = lb->ndim;
			for (d = 0; d < n; d++)
				ext[d] = lb->dims[d].c;
		} else if (loop && loop->is_frag) {
			F = loop;
			n = nest_shape(s, ext);
		} else {
			n = 0;
			bad(o, "no layout");
		}
		o->n = 1;
		if (F && F->nin != n)
			bad(o, "layout shape mismatch");
		for (d = 0; !o->bad && d < n; d++)
			if (F->in_shape[d] != ext[d])
				bad(o, "layout shape mismatch");
	} else {
		return 0;
	}
	if (!o->total)
		return 0;
	trips(k->body, s, 1, &repeat, &odd);
	for (i = 0; !o->bad && i < o->n; i++) {
		const IrBuffer *gb = &k->bufs[o->acc[i].buf];

		for (v = 1, d = 1; d < gb->ndim; d++) {
			sym |= gb->dims[d].sym != NULL;
			if (ck_mul(v, extent(gb, d), &v))
				bad(o, "strides overflow");
		}
	}
	if (!o->bad && F->nout != 1)
		bad(o, "more than one slot output");
	if (!o->bad && frag_to_cute(a, F, &P, &e) != 1)
		bad(o, "not representable");
	if (!o->bad && o->eb < 1)
		o->eb = 1;
	if (!o->bad && fill(a, o, F, &G))
		bad(o, "not measurable by enumeration");
	if (o->bad) {
		n = nest_shape(s, ext);
		for (d = 0; d < n; d++)
			if (ck_mul(el, ext[d], &el))
				return err_set(err, "cost oracle: overflow");
		if (ck_mul(el, repeat, &v) || ck_mul(v, t->segment_bytes, &v) || ck_mul(v, o->total, &v))
			return err_set(err, "cost oracle: overflow");
		sc->bw_bytes = sc->issue_bytes = sc->mem = v;
		sc->why = o->why;
		return 0;
	}
	bits = o->global_only ? t->max_vector_bits_global : t->max_vector_bits;
	if (o->eb < 1)
		o->eb = 1;
	vmax = bits / 8 / o->eb > 0 ? bits / 8 / o->eb : 1;
	for (V = 1; V <= vmax && V <= G.S; V *= 2)
		;
	for (V /= 2; V > 1 && (G.S % V || !fits(o, &G, V)); V /= 2)
		;
	for (i = 0; i < o->n; i++) {
		v = count_segs(o, &G, t, i, V) * t->segment_bytes * repeat;
		bw += v;
		is += G.S / V * repeat * G.T * (bits / 8);
	}
	sc->bw_bytes = bw;
	sc->issue_bytes = is;
	sc->mem = bw > is ? bw : is;
	sc->vec = (int)V;
	if (odd)
		sc->why = "a non-constant enclosing trip count was taken as 1";
	else if (sym)
		sc->why = "size symbols in the strides were taken as 65536";
	return 0;
}

int
cost_oracle(Arena *a, CostModelKind m, const Target *t, const IrKernel *k, IrStmt *const *members,
	    int nmembers, const LayoutMap *map, Cost *out, Err *err)
{
	int i, j;
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], p, r, mx[LAYOUT_MAXDIM], slots;

	if (!a || !t || !k || !map || !out || nmembers < 0 || (nmembers && !members))
		return err_set(err, "cost oracle: null argument");
	if ((map->nbuf > 0 && !map->buf) || (map->nstmt > 0 && !map->loop))
		return err_set(err, "cost oracle: malformed layout map");
	if (t->warp_size <= 0 || t->warp_size > 1024 || t->segment_bytes <= 0 ||
	    t->max_vector_bits < 8)
		return err_set(err, "cost oracle: malformed target");
	memset(out, 0, sizeof *out);
	/* registers: the largest slot index each thread uses, found by visiting every point */
	for (i = 0; i < map->nbuf && i < k->nbuf; i++) {
		const Layout *F = map->buf[i];

		if (!F || !F->is_frag || k->bufs[i].scope != MEM_LOCAL)
			continue;
		for (j = 0; j < F->nout; j++)
			mx[j] = 0;
		for (p = 0; p < layout_size(F); p++)
			for (r = 0; r < F->rep; r++) {
				unflat(F, p, x);
				x[F->nin] = r;
				if (layout_eval(F, x, y, err))
					return -1;
				for (j = 0; j < F->nout; j++)
					if (y[j] + 1 > mx[j])
						mx[j] = y[j] + 1;
			}
		for (slots = 1, j = 0; j < F->nout; j++)
			slots *= mx[j];
		out->regs += slots;
	}
	if (m == COST_REGISTER_COUNT)
		return 0;
	out->stmts = anewn(a, StmtCost, nmembers > 0 ? nmembers : 1);
	if (!out->stmts)
		return err_set(err, "cost oracle: out of memory");
	out->nstmt = nmembers;
	for (i = 0; i < nmembers; i++) {
		if (!members[i])
			return err_set(err, "cost oracle: null member statement");
		if (ostmt(a, t, k, members[i], map, &out->stmts[i], err))
			return -1;
		out->mem += out->stmts[i].mem;
	}
	return 0;
}
