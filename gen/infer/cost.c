/*
 * cost.c: the two cost models that rank layout-inference attempts.
 * register-count: per-thread fragment slots only. io-aware: every copy
 * between a local fragment and global memory, and every parallel nest that
 * touches global memory, is charged max(bandwidth bytes, issue bytes),
 * derived on the CuTe algebra: fragment packing -> right_inverse ->
 * composition with the access's address layout; the vector width is read
 * off the coalesced slot and thread modes, segments are counted per warp and
 * step on the composed layout. Registers break ties. Statements the model
 * cannot measure are charged elements * repeat * segment bytes per access.
 */
#include <stdlib.h>
#include <string.h>

#include "cute.h"
#include "infer.h"
#include "layout_cute.h"

const char *
cost_model_name(CostModelKind m)
{
	return m == COST_REGISTER_COUNT ? "register-count" : "io-aware";
}

int
cost_model_lookup(const char *s, CostModelKind *m)
{
	if (!s || !m)
		return -1;
	if (strcmp(s, "io-aware") == 0)
		*m = COST_IO_AWARE;
	else if (strcmp(s, "register-count") == 0)
		*m = COST_REGISTER_COUNT;
	else
		return -1;
	return 0;
}

int
cost_better(const Cost *a, const Cost *b)
{
	if (!a || !b)
		return 0;
	if (a->mem != b->mem)
		return a->mem < b->mem;
	return a->regs < b->regs;
}

/* ---- registers ----------------------------------------------------------- */

static int
count_regs(const IrKernel *k, const LayoutMap *map, int64_t *regs, Err *err)
{
	int i, j;
	int64_t r = 0, n;

	for (i = 0; i < map->nbuf && i < k->nbuf; i++) {
		const Layout *L = map->buf[i];

		if (!L || !L->is_frag || k->bufs[i].scope != MEM_LOCAL)
			continue;
		n = 1;
		for (j = 0; j < L->nout; j++)
			if (ck_mul(n, L->out_shape[j], &n))
				return err_set(err, "cost: register count overflows");
		if (ck_add(r, n, &r))
			return err_set(err, "cost: register count overflows");
	}
	*regs = r;
	return 0;
}

/* ---- reading the IR -------------------------------------------------------- */

/* the serial trip count product around target; *nonconst set if one was not constant */
static int
find_repeat(const IrStmt *s, const IrStmt *target, int64_t rep, int64_t *out, int *nonconst)
{
	int64_t e, r;
	int nc;

	for (; s; s = s->next) {
		if (s == target) {
			*out = rep;
			return 1;
		}
		r = rep;
		nc = 0;
		switch (s->kind) {
		case S_FOR:
		case S_PIPELINE:
			if (ir_is_const(s->kind == S_FOR ? s->u.loop.extent : s->u.pipe.extent, &e) &&
			    e >= 0) {
				if (ck_mul(r, e, &r))
					r = INT64_MAX;
			} else {
				nc = 1;
			}
			if (find_repeat(s->kind == S_FOR ? s->u.loop.body : s->u.pipe.body, target, r,
					out, nonconst)) {
				*nonconst |= nc;
				return 1;
			}
			break;
		case S_IF:
			if (find_repeat(s->u.cond.then, target, rep, out, nonconst) ||
			    find_repeat(s->u.cond.els, target, rep, out, nonconst))
				return 1;
			break;
		case S_PARALLEL:
			if (find_repeat(s->u.par.body, target, rep, out, nonconst))
				return 1;
			break;
		default:
			break;
		}
	}
	return 0;
}

/* every statement's find_repeat answer in one walk: rep[id], nc[id] */
static void
fill_repeats(const IrStmt *s, int64_t rep, int nonconst, CostRepeats *t)
{
	int64_t e, r;
	int nc;

	for (; s; s = s->next) {
		if (s->id >= 0 && s->id < t->n) {
			t->rep[s->id] = rep;
			t->nc[s->id] = (char)nonconst;
		}
		switch (s->kind) {
		case S_FOR:
		case S_PIPELINE:
			r = rep;
			nc = nonconst;
			if (ir_is_const(s->kind == S_FOR ? s->u.loop.extent : s->u.pipe.extent, &e) &&
			    e >= 0) {
				if (ck_mul(r, e, &r))
					r = INT64_MAX;
			} else {
				nc = 1;
			}
			fill_repeats(s->kind == S_FOR ? s->u.loop.body : s->u.pipe.body, r, nc, t);
			break;
		case S_IF:
			fill_repeats(s->u.cond.then, rep, nonconst, t);
			fill_repeats(s->u.cond.els, rep, nonconst, t);
			break;
		case S_PARALLEL:
			fill_repeats(s->u.par.body, rep, nonconst, t);
			break;
		default:
			break;
		}
	}
}

/* fragments already packed and inverted: during one cost_score call, and across the calls
 * of one inference (kept with its CostRepeats, for the same arena), found by structure */
enum { NCACHE = 16 };
typedef struct FragCache {
	int n;
	Arena *a;
	struct { const Fragment *F; const char *why; CuteLayout Ri; } e[NCACHE];
} FragCache;

CostRepeats *
cost_repeats(Arena *a, const IrKernel *k, int nid)
{
	CostRepeats *t = anew(a, CostRepeats);

	t->n = nid;
	t->rep = anewn(a, int64_t, nid + 1);
	t->nc = anewn(a, char, nid + 1);
	if ((t->frag = anew(a, FragCache)))
		t->frag->a = a;
	fill_repeats(k->body, 1, 0, t);
	return t;
}

/* variable bindings of an evaluation: the nest's vars get coordinates, foreign vars 0 */
typedef struct Env {
	int nv;
	IrVar *const *vars;
	const int64_t *val;
} Env;

static int
env_var(void *ctx, const IrVar *v, int64_t *out)
{
	const Env *env = ctx;
	int i;

	for (i = 0; env && i < env->nv; i++)
		if (env->vars[i] == v) {
			*out = env->val[i];
			return 0;
		}
	if (v->kind == VAR_SIZE || v->kind == VAR_LET)
		return -1;
	*out = 0;
	return 0;
}

static int
ev(const IrExpr *e, const Env *env, int64_t *out)
{
	return ir_eval_int(e, env_var, (void *)env, out);
}

/* a size symbol's extent as the model assumes it: a large power of two, so rows are
 * segment-aligned and far apart (docs/cost.md) */
enum { SYM_EXTENT = 1 << 16 };

/* the element strides of a global buffer: a strided tensor's strides(...) (a stride symbol
 * taken as SYM_EXTENT), else the row-major ones; -1 when they overflow */
static int
buf_strides(const IrBuffer *b, int64_t *st, int *sym)
{
	int d;
	int64_t s = 1;

	if (b->strides) {
		for (d = 0; d < b->ndim; d++) {
			st[d] = b->strides[d].sym ? SYM_EXTENT : b->strides[d].c;
			*sym |= b->strides[d].sym != NULL;
		}
		return 0;
	}
	for (d = b->ndim - 1; d >= 0; d--) {
		st[d] = s;
		if (d > 0 && b->dims[d].sym)
			*sym = 1;
		if (d > 0 && ck_mul(s, b->dims[d].sym ? SYM_EXTENT : b->dims[d].c, &s))
			return -1;
	}
	return 0;
}

/* ---- accesses ------------------------------------------------------------------- */

/* one global access: address = off + sum_k coef[k] * x_k over the fragment's inputs */
typedef struct Access {
	int buf, store;
	int64_t off;
	int64_t coef[LAYOUT_MAXDIM];
} Access;

enum { MAXACC = 64 };

/* a and b are the same fragment (the same shapes and expressions) */
static int
frag_same(const Fragment *a, const Fragment *b)
{
	int k;

	if (a == b)
		return 1;
	if (a->is_frag != b->is_frag || a->nin != b->nin || a->nout != b->nout || a->rep != b->rep ||
	    a->nthreads != b->nthreads || a->has_range != b->has_range ||
	    (a->has_range && (a->range_min != b->range_min || a->range_ext != b->range_ext)))
		return 0;
	for (k = 0; k < a->nin; k++)
		if (a->in_shape[k] != b->in_shape[k])
			return 0;
	for (k = 0; k < a->nout; k++)
		if (a->out_shape[k] != b->out_shape[k] || !iexpr_same(a->fwd[k], b->fwd[k]))
			return 0;
	return !a->is_frag || iexpr_same(a->thread, b->thread);
}

typedef struct Stmt {
	Arena *a;
	FragCache *cache;
	const IrKernel *k;
	const IrStmt *s;
	const Fragment *F;
	int nacc;            /* measured accesses */
	int ntotal;          /* every global access (and unmodelled statement) */
	Access acc[MAXACC];
	int opaque;          /* an access exists but cannot be measured */
	const char *why;
	int global_only;
	int sym;             /* a stride involves a size symbol */
	int eb;              /* widest element bytes of the accesses */
} Stmt;

static void
opaque(Stmt *st, const char *why)
{
	if (!st->opaque)
		st->why = why;
	st->opaque = 1;
}

/* COPY local <-> global: the address in the fragment's coordinates */
static void
copy_access(Stmt *st, const Region *g, const Region *l, int store, const Fragment *F,
	    int use_buf)
{
	const IrBuffer *gb = &st->k->bufs[g->buf];
	int64_t stride[IR_MAXDIM], idx, n;
	Access *ac;
	int d, kk, nest, ld;

	st->eb = dtype_bytes(gb->dtype);
	st->ntotal++;
	if (buf_strides(gb, stride, &st->sym))
		return opaque(st, "global strides overflow");
	ac = &st->acc[st->nacc++];
	memset(ac, 0, sizeof *ac);
	ac->buf = g->buf;
	ac->store = store;
	for (d = 0; d < g->ndim; d++) {
		if (ev(g->off[d], NULL, &idx) || ck_mul(idx, stride[d], &n) ||
		    ck_add(ac->off, n, &ac->off))
			return opaque(st, "global offset not evaluable");
	}
	nest = 0;
	for (d = 0; d < g->ndim; d++)
		nest += g->ext[d] != 1;
	for (kk = 0; kk < nest; kk++) {
		d = nest_region_dim(g, kk);
		ld = use_buf ? nest_region_dim(l, kk) : kk;
		if (ld < 0 || ld >= F->nin)
			return opaque(st, "copy regions do not match the layout");
		ac->coef[ld] = stride[d];
	}
}

/* the address probe of a parallel-nest access, relative to its value at 0 */
typedef struct Probe {
	const IrStmt *s;
	int n;
	IrExpr **idx;
	int64_t stride[IR_MAXDIM];
	int64_t base;
} Probe;

static int
probe_addr(void *ctx, const int64_t *coord, int64_t *out)
{
	const Probe *p = ctx;
	Env env = { p->s->u.par.n, p->s->u.par.vars, coord };
	int64_t a = 0, i, t;
	int d;

	for (d = 0; d < p->n; d++)
		if (ev(p->idx[d], &env, &i) || ck_mul(i, p->stride[d], &t) || ck_add(a, t, &a))
			return 1;
	*out = a - p->base;
	return 0;
}

/* a global load/store inside a parallel nest, recovered as a CuTe layout over the loop
 * coordinates; measurable when every loop mode coalesces to one stride (affine) */
static void
par_access(Stmt *st, int buf, int n, IrExpr **idx, int store)
{
	const IrBuffer *b = &st->k->bufs[buf];
	const IrStmt *s = st->s;
	Probe p;
	int64_t zero[IR_MAXDIM] = { 0 }, sh[IR_MAXDIM], hi = 0, c, v;
	CuteLayout L, m;
	Access *ac;
	Err e = { 0 };
	int d, nv = s->u.par.n;

	if (dtype_bytes(b->dtype) > st->eb)
		st->eb = dtype_bytes(b->dtype);
	st->ntotal++;
	if (st->nacc >= MAXACC)
		return opaque(st, "too many global accesses");
	if (nv > IR_MAXDIM || n > IR_MAXDIM)
		return opaque(st, "nest deeper than the IR allows");
	memset(&p, 0, sizeof p);
	p.s = s;
	p.n = n;
	p.idx = idx;
	if (buf_strides(b, p.stride, &st->sym))
		return opaque(st, "global strides overflow");
	if (probe_addr(&p, zero, &p.base))
		return opaque(st, "address not evaluable");
	/* an affine map with non-negative strides peaks at the far corner */
	for (d = 0; d < nv; d++) {
		int64_t one[IR_MAXDIM] = { 0 };

		sh[d] = s->u.par.ext[d];
		one[d] = sh[d] - 1;
		if (probe_addr(&p, one, &c))
			return opaque(st, "address not evaluable");
		if (c < 0)
			return opaque(st, "address decreases along a loop variable");
		if (ck_add(hi, c, &hi))
			return opaque(st, "address overflows");
	}
	hi++;
	if (cute_from_tile(st->a, nv, sh, 1, &hi, probe_addr, &p, &L, &e) != 1)
		return opaque(st, "address not affine in the loop variables");
	ac = &st->acc[st->nacc];
	memset(ac, 0, sizeof *ac);
	ac->buf = buf;
	ac->store = store;
	ac->off = p.base;
	for (d = 0; d < nv; d++) {
		if (sh[d] == 1)
			continue;
		m = cute_mode(L, d);
		if (cute_coalesce(st->a, m, NULL, &m, &e))
			return opaque(st, "address not affine in the loop variables");
		if (m.shape->n >= 0 && m.shape->n != 1)
			return opaque(st, "address not affine in the loop variables");
		v = m.stride->n < 0 ? m.stride->x.v : m.stride->e[0]->x.v;
		if ((m.stride->n < 0 ? m.stride->x.nb : m.stride->e[0]->x.nb) != 0)
			return opaque(st, "address not affine in the loop variables");
		ac->coef[d] = v;
	}
	st->nacc++;
}

static void par_expr(Stmt *st, const IrExpr *e);

static void
par_exprs(Stmt *st, int n, IrExpr **es)
{
	int i;

	for (i = 0; i < n; i++)
		par_expr(st, es[i]);
}

static void
par_expr(Stmt *st, const IrExpr *e)
{
	if (!e)
		return;
	switch (e->kind) {
	case IE_LOAD:
		par_exprs(st, e->u.load.n, e->u.load.idx);
		if (st->k->bufs[e->u.load.buf].scope != MEM_GLOBAL)
			st->global_only = 0;
		else
			par_access(st, e->u.load.buf, e->u.load.n, e->u.load.idx, 0);
		return;
	case IE_UNARY: par_expr(st, e->u.un.a); return;
	case IE_BINARY: par_expr(st, e->u.bin.a); par_expr(st, e->u.bin.b); return;
	case IE_SELECT:
		par_expr(st, e->u.sel.c);
		par_expr(st, e->u.sel.a);
		par_expr(st, e->u.sel.b);
		return;
	case IE_CAST: par_expr(st, e->u.cast.a); return;
	case IE_CALL: par_exprs(st, e->u.call.n, e->u.call.args); return;
	default: return;
	}
}

static void
par_body(Stmt *st, const IrStmt *b)
{
	for (; b; b = b->next) {
		switch (b->kind) {
		case S_STORE:
			par_exprs(st, b->u.store.n, b->u.store.idx);
			par_expr(st, b->u.store.value);
			if (st->k->bufs[b->u.store.buf].scope != MEM_GLOBAL)
				st->global_only = 0;
			else
				par_access(st, b->u.store.buf, b->u.store.n, b->u.store.idx, 1);
			break;
		case S_LET:
		case S_SET:
			par_expr(st, b->u.let.value);
			break;
		case S_IF:
			par_expr(st, b->u.cond.cond);
			par_body(st, b->u.cond.then);
			par_body(st, b->u.cond.els);
			break;
		case S_ASSUME:
			break;
		default:
			opaque(st, "statement kind not modelled inside a parallel nest");
			st->ntotal++;
			break;
		}
	}
}

/* ---- the symbolic measurement ---------------------------------------------------- */

/* the leaves of a (coalesced) mode, in order */
static int
leaves(const CuteTup *sh, const CuteTup *sd, int64_t *n, int64_t *d, int k, int max)
{
	int i;

	if (sh->n < 0) {
		if (k < max && sh->x.v != 1) {
			n[k] = sh->x.v;
			d[k++] = sd->x.v;
		}
		return k;
	}
	for (i = 0; i < sh->n; i++)
		k = leaves(sh->e[i], sd->e[i], n, d, k, max);
	return k;
}

/*
 * A CuTe layout's leaves in cute_eval's order, so that segments() evaluates it per cell
 * without cute_eval's validation and tree walk (the same value, or -1 where cute_eval
 * fails). Layouts past FLAT_MAX leaves keep cute_eval.
 */
enum { FLAT_MAX = 48 };

typedef struct Flat {
	CuteLayout l;
	int n, use, bad;        /* use: the leaves are read; bad: cute_valid refused l */
	int64_t s[FLAT_MAX], d[FLAT_MAX];
	unsigned char nb[FLAT_MAX];
} Flat;

static int
flat_walk(Flat *f, const CuteTup *sh, const CuteTup *sd)
{
	int i;

	if (sh->n >= 0) {
		for (i = 0; i < sh->n; i++)
			if (flat_walk(f, sh->e[i], sd->e[i]) < 0)
				return -1;
		return 0;
	}
	if (f->n == FLAT_MAX)
		return -1;
	f->s[f->n] = sh->x.v;
	f->d[f->n] = sd->x.v;
	f->nb[f->n++] = sd->x.nb != 0;
	return 0;
}

static Flat *
flat_new(Arena *a, CuteLayout l)
{
	Flat *f = anew(a, Flat);

	if (!f)
		return NULL;
	f->l = l;
	if (cute_valid(l, NULL) < 0)
		f->bad = 1;
	else
		f->use = flat_walk(f, l.shape, l.stride) == 0;
	return f;
}

static int
flat_eval(const Flat *f, int64_t i, int64_t *out)
{
	int64_t rem = i, c, t, v = 0;
	int k;

	if (f->bad || i < 0)
		return -1;
	if (!f->use)
		return cute_eval(f->l, i, out, NULL);
	for (k = 0; k < f->n; k++) {
		if (k == f->n - 1) {
			c = rem;
		} else {
			c = rem % f->s[k];
			rem /= f->s[k];
		}
		if (ck_mul(c, f->d[k], &t) < 0 || (f->nb[k] && t != 0) || ck_add(v, t, &v) < 0)
			return -1;
	}
	*out = v;
	return 0;
}

typedef struct Meas {
	CuteLayout Ri;         /* cell -> colex index of (coords..., rep) */
	int64_t S, T, R, npts; /* slots, threads, replicas, coordinate points */
	CuteLayout C[MAXACC];  /* cell -> address - off (A o Ri) */
	int hasC[MAXACC];
	CuteLayout A[MAXACC];
	Flat *fRi, *fC[MAXACC], *fA[MAXACC];   /* the same, flattened (measure) */
} Meas;

static int
cell_addr(const Meas *M, int i, int64_t cell, int64_t *out)
{
	int64_t idx;

	if (M->hasC[i])
		return flat_eval(M->fC[i], cell, out);
	if (flat_eval(M->fRi, cell, &idx))
		return -1;
	return flat_eval(M->fA[i], idx, out);
}

/* V fits access i: read off the slot and thread modes of C o (S,T):(1,S) */
static int
vec_fits(Arena *a, const Meas *M, int i, int64_t V)
{
	int64_t n[64], d[64], c0, c1, t, s, e;
	int ns, nt, j;
	CuteLayout st, cs, m0, m1;

	if (V == 1)
		return 1;
	if (M->hasC[i] && cute_parse_layout(a, "(1,1):(1,1)", &st, NULL) == 0) {
		st.shape->e[0]->x.v = M->S;
		st.shape->e[1]->x.v = M->T;
		st.stride->e[1]->x.v = M->S;
		if (cute_compose(a, M->C[i], st, &cs, NULL) == 0 &&
		    cute_coalesce(a, cute_mode(cs, 0), NULL, &m0, NULL) == 0 &&
		    cute_coalesce(a, cute_mode(cs, 1), NULL, &m1, NULL) == 0) {
			ns = leaves(m0.shape, m0.stride, n, d, 0, 32);
			nt = leaves(m1.shape, m1.stride, n, d, ns, 64);
			if (ns == 0 || d[0] != 1 || n[0] % V)
				return 0;
			for (j = 1; j < nt; j++)
				if (d[j] % V)
					return 0;
			return 1;
		}
	}
	/* no mode form (the composition's divisibility failed): the same test on values */
	if (cell_addr(M, i, 0, &c0))
		return 0;
	for (t = 0; t < M->T; t++)
		for (s = 0; s < M->S; s += V) {
			if (cell_addr(M, i, t * M->S + s, &c1) || floormod64(c1 - c0, V))
				return 0;
			for (e = 1; e < V; e++)
				if (cell_addr(M, i, t * M->S + s + e, &c0) || c0 != c1 + e)
					return 0;
			if (cell_addr(M, i, 0, &c0))
				return 0;
		}
	return 1;
}

/* segments touched, summed over steps and warps, for access i with width V */
static int
segments(const Stmt *st, const Meas *M, const Target *t, int i, int64_t V, int64_t *out)
{
	const Access *ac = &st->acc[i];
	int ws = t->warp_size;
	int64_t cap = ws * (V * st->eb / t->segment_bytes + 2);
	int64_t *ids = malloc(sizeof *ids * (size_t)cap), q, w, lane, th, cell, addr, idx, lo, hi,
		total = 0, nid, j, sb = t->segment_bytes;

	if (!ids)
		return -1;
	for (q = 0; q < M->S / V; q++)
		for (w = 0; w * ws < M->T; w++) {
			nid = 0;
			for (lane = 0; lane < ws && (th = w * ws + lane) < M->T; lane++) {
				cell = th * M->S + q * V;
				if (ac->store && M->R > 1) {
					if (flat_eval(M->fRi, cell, &idx))
						goto fail;
					if (idx / M->npts != 0)
						continue;
				}
				if (cell_addr(M, i, cell, &addr))
					goto fail;
				if (ck_add(addr, ac->off, &addr) || ck_mul(addr, st->eb, &lo) ||
				    ck_add(addr, V, &hi) || ck_mul(hi, st->eb, &hi) || hi == INT64_MIN)
					goto fail;
				lo = floordiv64(lo, sb);
				hi = floordiv64(hi - 1, sb);
				for (; lo <= hi && nid < cap; lo++)
					ids[nid++] = lo;
			}
			/* a warp's segment ids arrive nearly sorted: insertion sort beats qsort */
			for (j = 1; j < nid; j++) {
				int64_t v = ids[j], h = j;

				for (; h > 0 && ids[h - 1] > v; h--)
					ids[h] = ids[h - 1];
				ids[h] = v;
			}
			for (j = 0; j < nid; j++)
				total += j == 0 || ids[j] != ids[j - 1];
		}
	free(ids);
	*out = total;
	return 0;
fail:
	free(ids);
	return -1;
}

/* the fragment's packing, its right inverse, and every access composed with it */
static void
measure(Stmt *st, const Target *t, int64_t repeat, StmtCost *sc, Err *err)
{
	const Fragment *F = st->F;
	Arena *a = st->a;
	Meas *M = anew(a, Meas);
	CuteLayout P;
	CuteTup *sh, *sd;
	int64_t size, rsize, V, vmax, bits, segs, v, issue = 0, bw = 0;
	int i, d, ok, global_only = st->global_only;
	Err e = { 0 };

	(void)err;
	if (!M)
		return opaque(st, "out of memory");
	if (F->nout != 1)
		return opaque(st, "fragment with more than one slot output");
	M->S = F->out_shape[0];
	M->T = F->nthreads;
	M->R = F->rep;
	M->npts = layout_size(F);
	for (i = 0; i < st->cache->n && !frag_same(st->cache->e[i].F, F); i++)
		;
	if (i < st->cache->n) {
		if (st->cache->e[i].why)
			return opaque(st, st->cache->e[i].why);
		M->Ri = st->cache->e[i].Ri;
	} else {
		const char *why = NULL;

		if (frag_to_cute(a, F, &P, &e) != 1)
			why = "fragment not representable as a CuTe layout";
		else if (cute_size(P, &size, &e) || cute_right_inverse(a, P, &M->Ri, &e) ||
			 cute_size(M->Ri, &rsize, &e) || rsize != size || size != M->S * M->T)
			why = "fragment packing is not a bijection onto thread x slot";
		if (st->cache->n < NCACHE) {
			st->cache->e[st->cache->n].F = F;
			st->cache->e[st->cache->n].why = why;
			st->cache->e[st->cache->n++].Ri = M->Ri;
		}
		if (why)
			return opaque(st, why);
	}
	for (i = 0; i < st->nacc; i++) {
		sh = cute_tuple(a, F->nin + 1);
		sd = cute_tuple(a, F->nin + 1);
		if (!sh || !sd)
			return opaque(st, "out of memory");
		for (d = 0; d <= F->nin; d++) {
			sh->e[d] = cute_int(a, d < F->nin ? F->in_shape[d] : F->rep);
			sd->e[d] = cute_int(a, d < F->nin ? st->acc[i].coef[d] : 0);
			if (!sh->e[d] || !sd->e[d])
				return opaque(st, "out of memory");
		}
		M->A[i] = cute_make(sh, sd);
		M->hasC[i] = cute_compose(a, M->A[i], M->Ri, &M->C[i], NULL) == 0;
		if (!(M->fA[i] = flat_new(a, M->A[i])) ||
		    (M->hasC[i] && !(M->fC[i] = flat_new(a, M->C[i]))))
			return opaque(st, "out of memory");
	}
	if (!(M->fRi = flat_new(a, M->Ri)))
		return opaque(st, "out of memory");
	bits = global_only ? t->max_vector_bits_global : t->max_vector_bits;
	if (st->eb < 1)
		st->eb = 1;
	vmax = bits / 8 / st->eb;
	if (vmax < 1)
		vmax = 1;
	for (V = 1; V * 2 <= vmax && V * 2 <= M->S; V *= 2)
		;
	for (; V > 1; V /= 2) {
		if (M->S % V)
			continue;
		for (ok = 1, i = 0; ok && i < st->nacc; i++)
			ok = vec_fits(a, M, i, V);
		if (ok)
			break;
	}
	for (i = 0; i < st->nacc; i++) {
		if (segments(st, M, t, i, V, &segs))
			return opaque(st, "address evaluation failed");
		if (ck_mul(segs, t->segment_bytes, &v) || ck_mul(v, repeat, &v) ||
		    ck_add(bw, v, &bw))
			return opaque(st, "cost overflows");
		if (ck_mul(M->S / V, repeat, &v) || ck_mul(v, M->T, &v) || ck_mul(v, bits / 8, &v) ||
		    ck_add(issue, v, &issue))
			return opaque(st, "cost overflows");
	}
	sc->bw_bytes = bw;
	sc->issue_bytes = issue;
	sc->mem = bw > issue ? bw : issue;
	sc->vec = (int)V;
}

/* the layout a member is measured under, and its global accesses */
static void
setup(Stmt *st, const LayoutMap *map)
{
	const IrStmt *s = st->s;
	const Layout *loop = s->id >= 0 && s->id < map->nstmt ? map->loop[s->id] : NULL;
	const Region *g, *l;
	const IrBuffer *lb;
	int64_t ext[IR_MAXDIM], o;
	int n, d, whole;

	st->global_only = 1;
	if (s->kind == S_PARALLEL) {
		par_body(st, s->u.par.body);
		st->F = loop;
		n = s->u.par.n;
		if (st->ntotal && !st->opaque && (!loop || !loop->is_frag))
			return opaque(st, "no loop layout");
	} else if (s->kind == S_COPY) {
		MemScope ss = st->k->bufs[s->u.copy.src.buf].scope;
		MemScope ds = st->k->bufs[s->u.copy.dst.buf].scope;

		if (!((ss == MEM_LOCAL && ds == MEM_GLOBAL) || (ss == MEM_GLOBAL && ds == MEM_LOCAL)))
			return;
		st->global_only = 0;
		g = ss == MEM_GLOBAL ? &s->u.copy.src : &s->u.copy.dst;
		l = ss == MEM_GLOBAL ? &s->u.copy.dst : &s->u.copy.src;
		lb = &st->k->bufs[l->buf];
		whole = l->ndim == lb->ndim;
		for (d = 0; whole && d < l->ndim; d++)
			whole = !lb->dims[d].sym && l->ext[d] == lb->dims[d].c &&
				ir_is_const(l->off[d], &o) && o == 0;
		st->F = l->buf < map->nbuf ? map->buf[l->buf] : NULL;
		if (st->F && st->F->is_frag && whole && st->F->nin == lb->ndim) {
			for (d = 0; d < lb->ndim; d++)
				ext[d] = lb->dims[d].c;
			n = lb->ndim;
			copy_access(st, g, l, ds == MEM_GLOBAL, st->F, 1);
		} else if (loop && loop->is_frag) {
			st->F = loop;
			n = nest_shape(s, ext);
			copy_access(st, g, l, ds == MEM_GLOBAL, st->F, 0);
		} else {
			st->ntotal = 1;
			st->F = NULL;
			return opaque(st, whole ? "no fragment for the local buffer" :
					   "partial-region copy without a loop layout");
		}
		if (st->opaque)
			return;
		for (d = 0; d < n; d++)
			if (st->F->nin != n || st->F->in_shape[d] != ext[d])
				return opaque(st, "layout shape does not match the copy");
		return;
	} else {
		return;
	}
	if (st->opaque || !st->ntotal)
		return;
	if (loop->nin != n)
		return opaque(st, "loop layout rank does not match the nest");
	for (d = 0; d < n; d++)
		if (loop->in_shape[d] != s->u.par.ext[d])
			return opaque(st, "loop layout shape does not match the nest");
}

static int
score_stmt(Arena *a, const Target *t, const IrKernel *k, const IrStmt *s, const LayoutMap *map,
	   FragCache *cache, const CostRepeats *rt, StmtCost *sc, Err *err)
{
	Stmt *st = anew(a, Stmt);
	int64_t ext[IR_MAXDIM], elems = 1, repeat = 1, v;
	int n, i, nonconst = 0;

	if (!st)
		return err_set(err, "cost: out of memory");
	memset(sc, 0, sizeof *sc);
	sc->stmt = s;
	st->a = a;
	st->cache = cache;
	st->k = k;
	st->s = s;
	setup(st, map);
	if (!st->ntotal)
		return 0;
	if (rt && s->id >= 0 && s->id < rt->n) {
		repeat = rt->rep[s->id];
		nonconst = rt->nc[s->id];
	} else {
		find_repeat(k->body, s, 1, &repeat, &nonconst);
	}
	if (!st->opaque)
		measure(st, t, repeat, sc, err);
	if (st->opaque) {
		n = nest_shape(s, ext);
		for (i = 0; i < n; i++)
			if (ck_mul(elems, ext[i], &elems))
				return err_set(err, "cost: element count overflows");
		if (ck_mul(elems, repeat, &v) || ck_mul(v, t->segment_bytes, &v) ||
		    ck_mul(v, st->ntotal, &v))
			return err_set(err, "cost: worst case overflows");
		sc->bw_bytes = sc->issue_bytes = sc->mem = v;
		sc->vec = 0;
		sc->why = st->why;
	} else if (nonconst) {
		sc->why = "a non-constant enclosing trip count was taken as 1";
	} else if (st->sym) {
		sc->why = "size symbols in the strides were taken as 65536";
	}
	return 0;
}

int
cost_score(Arena *a, CostModelKind m, const Target *t, const IrKernel *k, IrStmt *const *members,
	   int nmembers, const LayoutMap *map, Cost *out, Err *err)
{
	return cost_score_rep(a, m, t, k, members, nmembers, map, NULL, out, err);
}

int
cost_nest_strides(Arena *a, const IrKernel *k, const IrStmt *s, NestStride *out, int max)
{
	Stmt *st;
	int i, d, n = 0;

	if (!a || !k || !s || s->kind != S_PARALLEL || s->u.par.n > IR_MAXDIM)
		return 0;
	if (!(st = anew(a, Stmt)))
		return 0;
	st->a = a;
	st->k = k;
	st->s = s;
	st->global_only = 1;
	par_body(st, s->u.par.body);
	for (i = 0; i < st->nacc && n < max; i++, n++) {
		out[n].buf = st->acc[i].buf;
		out[n].store = st->acc[i].store;
		for (d = 0; d < IR_MAXDIM; d++)
			out[n].coef[d] = d < s->u.par.n ? st->acc[i].coef[d] : 0;
	}
	return n;
}

int
cost_score_rep(Arena *a, CostModelKind m, const Target *t, const IrKernel *k,
	       IrStmt *const *members, int nmembers, const LayoutMap *map, const CostRepeats *rt,
	       Cost *out, Err *err)
{
	FragCache *cache;
	int i;

	if (!a || !t || !k || !map || !out || (nmembers > 0 && !members) || nmembers < 0)
		return err_set(err, "cost: null argument");
	if ((map->nbuf > 0 && !map->buf) || (map->nstmt > 0 && !map->loop))
		return err_set(err, "cost: malformed layout map");
	if (t->warp_size <= 0 || t->segment_bytes <= 0 || t->max_vector_bits < 8)
		return err_set(err, "cost: malformed target");
	memset(out, 0, sizeof *out);
	if (count_regs(k, map, &out->regs, err))
		return -1;
	if (m == COST_REGISTER_COUNT)
		return 0;
	out->stmts = anewn(a, StmtCost, nmembers > 0 ? nmembers : 1);
	cache = rt && rt->frag && rt->frag->a == a ? rt->frag : anew(a, FragCache);
	if (!out->stmts || !cache)
		return err_set(err, "cost: out of memory");
	out->nstmt = nmembers;
	for (i = 0; i < nmembers; i++) {
		if (!members[i])
			return err_set(err, "cost: null member statement");
		if (score_stmt(a, t, k, members[i], map, cache, rt, &out->stmts[i], err))
			return -1;
		if (ck_add(out->mem, out->stmts[i].mem, &out->mem))
			return err_set(err, "cost: total overflows");
	}
	return 0;
}
