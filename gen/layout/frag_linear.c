/*
 * frag_linear.c: a Fragment from a linear layout (register, lane, warp,
 * block bases), by inverting the bit matrix over F2: the non-zero register,
 * lane and warp bases must cover every bit of the row-major element index
 * once; zero lane and warp bases are broadcasts and become the replica
 * index. Used for require_layout(x, cute("...")) on local tiles.
 */
#include <string.h>

#include "infer_int.h"

enum { MAXB = 40 };

static int
lg2(int64_t n)
{
	int k = 0;

	if (n < 1 || (n & (n - 1)))
		return -1;
	while ((int64_t)1 << k < n)
		k++;
	return k;
}

/* bit e of the row-major element index as an expression: (x_d // 2^b) % 2 */
static IExpr *
elbit(Arena *a, const int64_t *shape, int rank, int e)
{
	int d, lb;

	for (d = rank - 1; d >= 0; d--) {
		lb = lg2(shape[d]);
		if (e < lb)
			return iexpr_modc(a, iexpr_divc(a, iexpr_var(a, d), (int64_t)1 << e), 2);
		e -= lb;
	}
	return iexpr_const(a, 0);
}

/* element bit e of the row-major index: dim *d, bit *b of it */
static void
bitdim(const int64_t *shape, int rank, int e, int *d, int *b)
{
	int k, lb;

	for (k = rank - 1; k >= 0; k--) {
		lb = lg2(shape[k]);
		if (e < lb) {
			*d = k;
			*b = e;
			return;
		}
		e -= lb;
	}
	*d = 0;
	*b = 0;
}

/* the row-major element index of basis p of input dim k */
static uint64_t
flat(const LinLayout *L, int k, int p)
{
	uint64_t s = 0;
	int d;

	for (d = 0; d < L->nout; d++)
		s = s * (uint64_t)L->out_size[d] + (uint64_t)L->base[k][p * L->nout + d];
	return s;
}

Fragment *
frag_from_linear(Arena *a, const LinLayout *L, int warp_size, Err *err)
{
	uint64_t col[MAXB], inv[MAXB], rowsel[MAXB], t;
	int kind[MAXB], pos[MAXB], single[MAXB], n = 0, m = 0, nz = 0, k, p, d, i, j, piv, lw;
	int cnt, run, lb;
	int64_t shape[LAYOUT_MAXDIM];
	IExpr *thread, *slot, *bitx;

	if (!a || !L) {
		err_set(err, "frag_from_linear: null argument");
		return NULL;
	}
	lw = lg2(warp_size);
	if (lw < 0 || L->nin < 3 || L->nout < 1 || L->nout > LAYOUT_MAXDIM) {
		err_set(err, "frag_from_linear: not a (register, lane, warp) layout");
		return NULL;
	}
	for (d = 0; d < L->nout; d++) {
		shape[d] = L->out_size[d];
		if (lg2(shape[d]) < 0) {
			err_set(err, "frag_from_linear: dim %d of the tile (%lld) is not a power of two", d,
				(long long)shape[d]);
			return NULL;
		}
		m += lg2(shape[d]);
	}
	if (L->nbits[1] > lw) {
		err_set(err, "frag_from_linear: %d lane bits for a warp of %d", L->nbits[1], warp_size);
		return NULL;
	}
	for (k = 3; k < L->nin; k++)
		if (L->nbits[k]) {
			err_set(err, "frag_from_linear: layouts over several blocks are not supported");
			return NULL;
		}
	for (k = 0; k < 3; k++)
		for (p = 0; p < L->nbits[k]; p++) {
			uint64_t s = flat(L, k, p);

			if (!s) {
				if (k == 0) {
					err_set(err, "register basis %d is zero (a register holding a copy)", p);
					return NULL;
				}
				nz++;
				continue;
			}
			if (n == MAXB) {
				err_set(err, "frag_from_linear: more than %d bases", MAXB);
				return NULL;
			}
			kind[n] = k;
			pos[n] = k == 2 ? lw + p : p;
			col[n++] = s;
		}
	if (n != m) {
		err_set(err, "%d distinct register, lane and warp bits cover %lld elements; the tile has "
			"%lld", n, (long long)1 << n, (long long)1 << m);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		inv[i] = (uint64_t)1 << i;
		rowsel[i] = col[i];
	}
	for (j = 0; j < m; j++) {
		for (piv = j; piv < n && !((rowsel[piv] >> j) & 1); piv++)
			;
		if (piv == n) {
			err_set(err, "the bases do not cover element bit %d (two bases overlap)", j);
			return NULL;
		}
		t = rowsel[piv], rowsel[piv] = rowsel[j], rowsel[j] = t;
		t = inv[piv], inv[piv] = inv[j], inv[j] = t;
		for (i = 0; i < n; i++)
			if (i != j && ((rowsel[i] >> j) & 1)) {
				rowsel[i] ^= rowsel[j];
				inv[i] ^= inv[j];
			}
	}
	/* inv[j] is column j of C^-1: input bit i reads element bit j iff bit i of
	 * inv[j]. Runs of input bits that read runs of one dim's bits become one
	 * term (x // 2^b % 2^len * 2^pos); the rest are XORs of single bits */
	thread = iexpr_const(a, 0);
	slot = iexpr_const(a, 0);
	for (i = 0; i < n; i++) {
		single[i] = -1;
		for (j = 0, cnt = 0; j < m; j++)
			if ((inv[j] >> i) & 1)
				single[i] = j, cnt++;
		if (cnt != 1)
			single[i] = -1;
	}
	for (i = 0; i < n; i += run) {
		run = 1;
		if (single[i] >= 0) {
			bitdim(shape, L->nout, single[i], &d, &lb);
			while (i + run < n && kind[i + run] == kind[i] && pos[i + run] == pos[i] + run &&
			       single[i + run] == single[i] + run && lb + run < lg2(shape[d]))
				run++;
			bitx = iexpr_divc(a, iexpr_var(a, d), (int64_t)1 << lb);
			if (lb + run < lg2(shape[d]))
				bitx = iexpr_modc(a, bitx, (int64_t)1 << run);
		} else {
			bitx = NULL;
			for (j = 0; j < m; j++)
				if ((inv[j] >> i) & 1) {
					IExpr *e = elbit(a, shape, L->nout, j);

					bitx = bitx ? iexpr_bin(a, IX_XOR, bitx, e) : e;
				}
			if (!bitx)
				continue;
		}
		if (kind[i] == 0)
			slot = iexpr_add(a, slot, iexpr_mulc(a, bitx, (int64_t)1 << pos[i]));
		else
			thread = iexpr_add(a, thread, iexpr_mulc(a, bitx, (int64_t)1 << pos[i]));
	}
	/* zero (broadcast) lane and warp bits take the replica index */
	j = 0;
	for (k = 1; k < 3; k++)
		for (p = 0; p < L->nbits[k]; p++) {
			if (flat(L, k, p))
				continue;
			thread = iexpr_add(a, thread,
					   iexpr_mulc(a, iexpr_modc(a, iexpr_divc(a, iexpr_var(a, IEXPR_REP),
										  (int64_t)1 << j), 2),
						      (int64_t)1 << (k == 1 ? p : lw + p)));
			j++;
		}
	return frag_new(a, shape, L->nout, thread, (int64_t)1 << nz, &slot, 1, err);
}
