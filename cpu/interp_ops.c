/*
 * interp_ops.c: the tile operations of the reference interpreter: copy
 * (element-wise over the non-unit dims in row-major order; global elements
 * past the edge read as zero and are not written), fill, gemm (products and
 * sums in double, rounded once into C) and reduce (sum in double; max, min,
 * absmax exact). docs/semantics.md, "What a program computes".
 */
#include <math.h>
#include <string.h>

#include "interp_int.h"

/* a region with its offsets evaluated */
typedef struct Reg {
	BufRt *B;
	int ndim, nn;
	int64_t off[IR_MAXDIM];
	const int64_t *ext;
	int nd[IR_MAXDIM];   /* the non-unit dims, in order */
	int64_t n;           /* elements */
} Reg;

static int
region(Run *R, const Region *r, Loc loc, const char *op, Reg *g)
{
	BufRt *B = &R->bufs[r->buf];
	unsigned fl = 0;
	int d;

	g->B = B;
	g->ndim = r->ndim;
	g->ext = r->ext;
	g->nn = 0;
	g->n = 1;
	for (d = 0; d < r->ndim; d++) {
		if (iexp_index(R, r->off[d], &g->off[d], &fl, "the region offset"))
			return -1;
		if (g->off[d] < -((int64_t)1 << 62) || g->off[d] > (int64_t)1 << 62)
			return irun_fail(R, INTERP_ERROR, loc, "%s: region offset %lld of '%s' is out of range", op,
					 (long long)g->off[d], B->b->name);
		if (r->ext[d] != 1)
			g->nd[g->nn++] = d;
		g->n *= r->ext[d];
		if (B->scope != MEM_GLOBAL && (g->off[d] < 0 || g->off[d] > B->dim[d] - r->ext[d]))
			return irun_fail(R, INTERP_ERROR, loc,
					 "%s: region [%lld, %lld) of '%s' is out of range in dimension %d (size %lld)",
					 op, (long long)g->off[d], (long long)g->off[d] + (long long)r->ext[d], B->b->name,
					 d, (long long)B->dim[d]);
	}
	return 0;
}

/* write v (of type g->B->t) at co; dropped past the edge of a global tensor */
static int
wr(Run *R, const Reg *g, const int64_t *co, Val v, Loc loc)
{
	BufRt *B = g->B;
	int64_t lin = 0;
	int d;

	for (d = 0; d < B->ndim; d++) {
		if (co[d] < 0 || co[d] >= B->dim[d])
			return 0;
		lin += co[d] * B->stride[d];
	}
	if (B->scope == MEM_GLOBAL) {
		if (B->cell && irun_block_race(R, B, lin, loc))
			return -1;
		iexp_gstore(R, B, lin, v);
		return R->bad ? -1 : 0;
	}
	B->v[lin] = v.c;
	B->fl[lin] = (unsigned char)v.fl;
	return 0;
}

/* do two regions of one buffer overlap (and differ)? */
static int
overlap(const Reg *a, const Reg *b)
{
	int d, same = 1;

	if (a->B != b->B)
		return 0;
	for (d = 0; d < a->ndim; d++) {
		if (a->off[d] + a->ext[d] <= b->off[d] || b->off[d] + b->ext[d] <= a->off[d])
			return 0;
		same &= a->off[d] == b->off[d] && a->ext[d] == b->ext[d];
	}
	return !same;
}

/* the part of a row of region g (full coordinates co, the row along dim d, n long) that
 * lies in its buffer: [*lo, *hi), and the linear index of the row's start; an empty part
 * when another coordinate is outside (global tensors) */
static int64_t
rowpart(const Reg *g, const int64_t *co, int d, int64_t n, int64_t *lo, int64_t *hi)
{
	const BufRt *B = g->B;
	int64_t lin = 0;
	int e;

	*lo = 0;
	*hi = n;
	for (e = 0; e < B->ndim; e++) {
		if (e == d)
			continue;
		if (co[e] < 0 || co[e] >= B->dim[e]) {
			*hi = 0;
			return 0;
		}
		lin += co[e] * B->stride[e];
	}
	if (co[d] < 0)
		*lo = -co[d] < n ? -co[d] : n;
	if (B->dim[d] - co[d] < n)
		*hi = B->dim[d] - co[d] > *lo ? B->dim[d] - co[d] : *lo;
	return lin + co[d] * B->stride[d];
}

int
iop_copy(Run *R, const IrStmt *s)
{
	Reg src, dst;
	int64_t c[IR_MAXDIM] = {0}, cs[IR_MAXDIM], cd[IR_MAXDIM], row, nrow, L, j;
	int k, d, nn, ds, dd;
	BufRt *SB, *DB;
	DType st, dt;

	if (region(R, &s->u.copy.src, s->loc, "copy", &src) || region(R, &s->u.copy.dst, s->loc, "copy", &dst))
		return -1;
	if (src.nn != dst.nn || src.n != dst.n)
		return irun_fail(R, INTERP_ERROR, s->loc, "copy: the regions have different shapes");
	if (overlap(&src, &dst))
		return irun_fail(R, INTERP_ERROR, s->loc, "copy: the source and destination regions of '%s' overlap",
				 src.B->b->name);
	if (irun_work(R, s->loc, src.n))
		return -1;
	SB = src.B, DB = dst.B, st = SB->t, dt = DB->t;
	/* row by row along the last non-unit dim (all unit: one row of one element) */
	nn = src.nn;
	ds = nn ? src.nd[nn - 1] : src.ndim - 1;
	dd = nn ? dst.nd[nn - 1] : dst.ndim - 1;
	L = nn ? src.ext[ds] : 1;
	nrow = src.n / L;
	for (row = 0; row < nrow; row++) {
		int64_t sl, sh, dl, dh, sb, db, ss = SB->stride[ds], dstr = DB->stride[dd];

		for (d = 0; d < src.ndim; d++)
			cs[d] = src.off[d];
		for (d = 0; d < dst.ndim; d++)
			cd[d] = dst.off[d];
		for (k = 0; k + 1 < nn; k++) {
			cs[src.nd[k]] += c[k];
			cd[dst.nd[k]] += c[k];
		}
		sb = rowpart(&src, cs, ds, L, &sl, &sh);
		db = rowpart(&dst, cd, dd, L, &dl, &dh);
		for (j = dl; j < dh; j++) {
			Val v;

			if (j >= sl && j < sh) {
				int64_t l = sb + j * ss;

				if (SB->scope == MEM_GLOBAL) {
					if (SB->cell && irun_block_race(R, SB, l, s->loc))
						return -1;
					v = iexp_gload(SB, l);
				} else {
					v.c = SB->v[l];
					v.fl = SB->fl[l];
				}
				if (st != dt)
					v = iexp_conv(v, st, dt);
			} else { /* past the edge of a global tensor: zero */
				v.fl = 0;
				if (it_float(dt))
					v.c.f = 0;
				else
					v.c.i = 0;
			}
			if (s->u.copy.atomic) {
				/* op = add|max|min: an atomic update of each element (the edge's dropped) */
				if (iexp_atomic(R, DB, db + j * dstr, v, s->u.copy.atomic, s->loc))
					return -1;
			} else if (DB->scope == MEM_GLOBAL) {
				int64_t l = db + j * dstr;

				if (DB->cell && irun_block_race(R, DB, l, s->loc))
					return -1;
				iexp_gstore(R, DB, l, v);
				if (R->bad)
					return -1;
			} else {
				DB->v[db + j * dstr] = v.c;
				DB->fl[db + j * dstr] = (unsigned char)v.fl;
			}
		}
		for (k = nn - 2; k >= 0 && ++c[k] == src.ext[src.nd[k]]; k--)
			c[k] = 0;
	}
	return 0;
}

int
iop_fill(Run *R, const IrStmt *s)
{
	Reg g;
	int64_t c[IR_MAXDIM], i;
	int d;
	Val v = iexp_eval(R, s->u.fill.value);

	if (R->bad || region(R, &s->u.fill.dst, s->loc, "fill", &g) || irun_work(R, s->loc, g.n))
		return -1;
	v = iexp_conv(v, s->u.fill.value->type, g.B->t);
	for (d = 0; d < g.ndim; d++)
		c[d] = g.off[d];
	for (i = 0; i < g.n; i++) {
		if (wr(R, &g, c, v, s->loc))
			return -1;
		for (d = g.ndim - 1; d >= 0 && ++c[d] == g.off[d] + g.ext[d]; d--)
			c[d] = g.off[d];
	}
	return 0;
}

/* ---- gemm ------------------------------------------------------------------------------------ */

/* a 2-D operand: element (r, c) of the region's last two dims at base + r * rs + c * cs */
typedef struct Op2 {
	const BufRt *B;
	int64_t rows, cols, base, rs, cs;
} Op2;

static void
op2(const Reg *g, Op2 *o)
{
	int d, n = g->ndim;

	o->B = g->B;
	o->base = 0;
	for (d = 0; d < n; d++)
		o->base += g->off[d] * g->B->stride[d];
	o->rows = g->ext[n - 2];
	o->cols = g->ext[n - 1];
	o->rs = g->B->stride[n - 2];
	o->cs = g->B->stride[n - 1];
}

int
iop_gemm(Run *R, const IrStmt *s)
{
	Reg ga, gb, gc;
	Op2 A, B, C;
	int ta = s->u.gemm.trans_a, tb = s->u.gemm.trans_b, clear = s->u.gemm.clear, isf;
	int64_t M, N, K, m, n, kk, work;
	unsigned char *rowf, *colf;
	size_t need;

	if (region(R, &s->u.gemm.a, s->loc, "gemm", &ga) || region(R, &s->u.gemm.b, s->loc, "gemm", &gb) ||
	    region(R, &s->u.gemm.c, s->loc, "gemm", &gc))
		return -1;
	op2(&ga, &A);
	op2(&gb, &B);
	op2(&gc, &C);
	M = ta ? A.cols : A.rows;
	K = ta ? A.rows : A.cols;
	N = tb ? B.rows : B.cols;
	if ((tb ? B.cols : B.rows) != K || C.rows != M || C.cols != N)
		return irun_fail(R, INTERP_ERROR, s->loc, "gemm: the operand shapes do not match");
	if (__builtin_mul_overflow(M, N, &work) || __builtin_mul_overflow(work, K + 1, &work) ||
	    irun_work(R, s->loc, work))
		return irun_work(R, s->loc, INT64_MAX);
	isf = it_float(A.B->t);
	need = (size_t)(M * K + K * N) * 8 + (size_t)N * (isf ? 8 : 16) + (size_t)(M + N) + 16;
	{
		unsigned char *mem = irun_scratch(R, need);
		Cell *Ac, *Bc;
		Cell *Cv = C.B->v;
		unsigned char *Cf = C.B->fl;

		if (!mem)
			return -1;
		/* the accumulator row first (16-byte aligned), then the operands, then the flags */
		Ac = (Cell *)(void *)(mem + (size_t)N * (isf ? 8 : 16));
		Bc = Ac + M * K;
		rowf = (unsigned char *)(Bc + K * N);
		colf = rowf + M;
		memset(rowf, 0, (size_t)(M + N));
		/* the operands as M x K and K x N, with the flags each row of A and column of B carries */
		for (m = 0; m < M; m++)
			for (kk = 0; kk < K; kk++) {
				int64_t l = A.base + (ta ? kk * A.rs + m * A.cs : m * A.rs + kk * A.cs);

				Ac[m * K + kk] = A.B->v[l];
				rowf[m] |= A.B->fl[l];
			}
		for (kk = 0; kk < K; kk++)
			for (n = 0; n < N; n++) {
				int64_t l = B.base + (tb ? n * B.rs + kk * B.cs : kk * B.rs + n * B.cs);

				Bc[kk * N + n] = B.B->v[l];
				colf[n] |= B.B->fl[l];
			}
		if (isf) {
			double *acc = (double *)(void *)mem;

			for (m = 0; m < M; m++) {
				for (n = 0; n < N; n++)
					acc[n] = 0;
				for (kk = 0; kk < K; kk++) {
					double a = Ac[m * K + kk].f;
					const Cell *b = Bc + kk * N;

					for (n = 0; n < N; n++)
						acc[n] += a * b[n].f;
				}
				for (n = 0; n < N; n++) {
					int64_t l = C.base + m * C.rs + n * C.cs;
					double v = clear ? acc[n] : Cv[l].f + acc[n];

					Cv[l].f = num_round(C.B->t, v);
					Cf[l] = (unsigned char)(rowf[m] | colf[n] | (clear ? 0 : Cf[l]) | INTERP_INEXACT);
				}
			}
		} else {
			__int128 *acc = (__int128 *)(void *)mem;

			for (m = 0; m < M; m++) {
				for (n = 0; n < N; n++)
					acc[n] = 0;
				for (kk = 0; kk < K; kk++) {
					int64_t a = Ac[m * K + kk].i;
					const Cell *b = Bc + kk * N;

					for (n = 0; n < N; n++)
						acc[n] += (__int128)a * b[n].i;
				}
				for (n = 0; n < N; n++) {
					int64_t l = C.base + m * C.rs + n * C.cs;
					__int128 v = clear ? acc[n] : acc[n] + Cv[l].i;
					int big = v < INT64_MIN || v > INT64_MAX;
					Val r = iexp_int(C.B->t, big ? 0 : (int64_t)v, big,
							 rowf[m] | colf[n] | (clear ? 0 : Cf[l]));

					Cv[l] = r.c;
					Cf[l] = (unsigned char)r.fl;
				}
			}
		}
	}
	return 0;
}

/* ---- reduce ------------------------------------------------------------------------------- */

int
iop_reduce(Run *R, const IrStmt *s)
{
	BufRt *S = &R->bufs[s->u.reduce.src], *D = &R->bufs[s->u.reduce.dst];
	ReduceOp op = s->u.reduce.op;
	int dim = s->u.reduce.dim, clear = s->u.reduce.clear;
	int fdom = it_float(S->t) || it_float(D->t), sf = it_float(S->t);
	int df = it_float(D->t);
	int64_t Rn = S->dim[dim], inner = S->stride[dim], no, o, r;

	no = S->n / Rn;
	if (D->n != no)
		return irun_fail(R, INTERP_ERROR, s->loc, "reduce: '%s' does not have the shape of the result",
				 D->b->name);
	if (irun_work(R, s->loc, S->n))
		return -1;
	for (o = 0; o < no; o++) {
		int64_t base = o / inner * Rn * inner + o % inner;
		unsigned fl = clear ? 0 : D->fl[o];
		Val res;

		if (fdom) {
			double acc, x;

			if (!clear)
				acc = df ? D->v[o].f : (double)D->v[o].i;
			else
				acc = op == RED_MAX ? -INFINITY : op == RED_MIN ? INFINITY : 0.0;
			for (r = 0; r < Rn; r++) {
				int64_t l = base + r * inner;

				x = sf ? S->v[l].f : (double)S->v[l].i;
				fl |= S->fl[l];
				switch (op) {
				case RED_SUM: acc += x; break;
				case RED_MAX: acc = iexp_fmax(acc, x, &fl); break;
				case RED_MIN: acc = iexp_fmin(acc, x, &fl); break;
				case RED_ABSMAX: acc = iexp_fmax(acc, fabs(x), &fl); break;
				}
			}
			if (op == RED_SUM)
				fl |= INTERP_INEXACT;
			res.c.f = acc;
			res.fl = fl;
			res = iexp_conv(res, DT_F64, D->t);
		} else {
			__int128 acc;
			int ovf = 0;

			if (!clear)
				acc = D->v[o].i;
			else
				acc = op == RED_MAX ? INT64_MIN : op == RED_MIN ? INT64_MAX : 0;
			for (r = 0; r < Rn; r++) {
				int64_t l = base + r * inner, x = S->v[l].i;

				fl |= S->fl[l];
				switch (op) {
				case RED_SUM: acc += x; break;
				case RED_MAX: acc = x > acc ? x : acc; break;
				case RED_MIN: acc = x < acc ? x : acc; break;
				case RED_ABSMAX:
					if (x == INT64_MIN)
						ovf = 1;
					acc = (x < 0 ? -(__int128)x : x) > acc ? (x < 0 ? -(__int128)x : x) : acc;
					break;
				}
			}
			if (acc < INT64_MIN || acc > INT64_MAX)
				ovf = 1, acc = 0;
			res = iexp_int(D->t, (int64_t)acc, ovf, fl);
		}
		D->v[o] = res.c;
		D->fl[o] = (unsigned char)res.fl;
	}
	return 0;
}
