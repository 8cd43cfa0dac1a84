/*
 * wmma_bases.c: require_amd_wmma_layout (TLX's explicit WMMA pin). The layout
 * is the 16x16 WMMA instruction tile (register and lane bits as the hardware
 * holds the accumulator) times the user's register and warp bases given in
 * units of instruction tiles; it is checked against the tile's rank and shape
 * and turned into a Fragment by inverting the bit matrix over F2.
 */
#include <stdio.h>
#include <string.h>

#include "dumplayout.h"

enum { TILE = 16, MAXB = 40 };

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

/*
 * The accumulator tile of v_wmma_*_16x16x16 as (row, col) per register and
 * lane bit: v1 (RDNA3, wave32): 8 registers on every other row, lanes 0-15
 * on the columns, lane bit 4 on row 1; v2/v3: registers on rows 0-7 and
 * lane bit 4 on row 8. transposed swaps rows and columns.
 */
static void
tile_bases(int version, int transposed, int64_t reg[3][2], int64_t lane[5][2])
{
	int p, r = transposed ? 1 : 0, c = 1 - r;

	memset(reg, 0, sizeof(int64_t) * 6);
	memset(lane, 0, sizeof(int64_t) * 10);
	for (p = 0; p < 3; p++)
		reg[p][r] = version == 1 ? (int64_t)2 << p : (int64_t)1 << p;
	for (p = 0; p < 4; p++)
		lane[p][c] = (int64_t)1 << p;
	lane[4][r] = version == 1 ? 1 : 8;
}

/* the checks, then the bases of (register, lane, warp, block) into L */
static int
build(Arena *a, int version, int transposed, const IntLists *wb, const IntLists *rb,
      const int64_t *instr, int ninstr, const int64_t *shape, int rank, LinLayout *L, Err *err)
{
	int64_t treg[3][2], tlane[5][2];
	int i, d, p;

	if (!a || !wb || !rb || !shape || !L)
		return err_set(err, "require_amd_wmma_layout: null argument");
	if (version < 1 || version > 3)
		return err_set(err, "require_amd_wmma_layout: version must be 1, 2 or 3, got %d", version);
	if (rank != 2)
		return err_set(err, "require_amd_wmma_layout: the tile has rank %d; WMMA tiles have "
			       "rank 2", rank);
	if (instr && ninstr >= 2 && (instr[0] != TILE || instr[1] != TILE))
		return err_set(err, "require_amd_wmma_layout: instr_shape [%lld, %lld, ...] is not a "
			       "16 x 16 WMMA tile", (long long)instr[0], (long long)instr[1]);
	for (d = 0; d < rank; d++)
		if (shape[d] < TILE || lg2(shape[d]) < 0)
			return err_set(err, "require_amd_wmma_layout: dim %d of the tile is %lld, not a "
				       "power of two of at least 16", d, (long long)shape[d]);
	if (rb->n + 3 > MAXB || wb->n > MAXB)
		return err_set(err, "require_amd_wmma_layout: too many bases");
	for (i = 0; i < rb->n + wb->n; i++) {
		const IntLists *l = i < rb->n ? rb : wb;
		int j = i < rb->n ? i : i - rb->n;

		if (l->len[j] != rank)
			return err_set(err, "require_amd_wmma_layout: %s basis %d has %d entries, the "
				       "tile has rank %d", l == rb ? "reg_bases" : "warp_bases", j,
				       l->len[j], rank);
		for (d = 0; d < rank; d++)
			if (l->v[j][d] < 0 || l->v[j][d] >= shape[d] / TILE)
				return err_set(err, "require_amd_wmma_layout: %s basis %d entry %d "
					       "(%lld tiles) is outside the tile's %lld", l == rb ?
					       "reg_bases" : "warp_bases", j, d, (long long)l->v[j][d],
					       (long long)shape[d]);
	}
	tile_bases(version, transposed, treg, tlane);
	memset(L, 0, sizeof *L);
	L->nin = 4;
	L->in_name[0] = "register";
	L->in_name[1] = "lane";
	L->in_name[2] = "warp";
	L->in_name[3] = "block";
	L->nbits[0] = 3 + rb->n;
	L->nbits[1] = 5;
	L->nbits[2] = wb->n;
	L->nout = rank;
	for (d = 0; d < rank; d++)
		L->out_size[d] = shape[d];
	for (i = 0; i < 4; i++)
		L->base[i] = anewn(a, int64_t, (size_t)((L->nbits[i] ? L->nbits[i] : 1) * rank));
	for (p = 0; p < 3; p++)
		memcpy(&L->base[0][p * rank], treg[p], sizeof treg[p]);
	for (p = 0; p < rb->n; p++)
		for (d = 0; d < rank; d++)
			L->base[0][(3 + p) * rank + d] = rb->v[p][d] * TILE;
	for (p = 0; p < 5; p++)
		memcpy(&L->base[1][p * rank], tlane[p], sizeof tlane[p]);
	for (p = 0; p < wb->n; p++)
		for (d = 0; d < rank; d++)
			L->base[2][p * rank + d] = wb->v[p][d] * TILE;
	return 0;
}

int
wmma_bases_linear(Arena *a, int version, int transposed, const IntLists *warp_bases,
		  const IntLists *reg_bases, const int64_t *instr_shape, int ninstr,
		  const int64_t *shape, int rank, LinLayout *out, Err *err)
{
	return build(a, version, transposed, warp_bases, reg_bases, instr_shape, ninstr, shape, rank,
		     out, err);
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

Fragment *
wmma_bases_fragment(Arena *a, int version, int transposed, const IntLists *warp_bases,
		    const IntLists *reg_bases, const int64_t *instr_shape, int ninstr,
		    const int64_t *shape, int rank, Err *err)
{
	LinLayout L;
	uint64_t col[MAXB + 8], inv[MAXB + 8], rowsel[MAXB + 8];
	int pos[MAXB + 8], kind[MAXB + 8], n = 0, m = 0, nz = 0, k, p, d, i, j, piv;
	int64_t R[2], rep = 1, size = 1;
	IExpr *thread, *slot, *bitx, *fwd[1];

	if (build(a, version, transposed, warp_bases, reg_bases, instr_shape, ninstr, shape, rank, &L,
		  err))
		return NULL;
	for (d = 0; d < rank; d++) {
		size *= shape[d];
		m += lg2(shape[d]);
	}
	R[1] = 1;
	R[0] = shape[1];
	/* columns: the non-zero input bits as row-major element-index bit masks */
	for (k = 0; k < 3; k++) {
		for (p = 0; p < L.nbits[k]; p++) {
			int64_t s = L.base[k][p * rank] * R[0] + L.base[k][p * rank + 1] * R[1];

			if (!s) {
				if (k == 0) {
					err_set(err, "require_amd_wmma_layout: reg_bases entry %d is zero",
						p - 3);
					return NULL;
				}
				nz++;
				continue;
			}
			kind[n] = k;
			pos[n] = k == 0 ? p : k == 1 ? p : 5 + p;
			col[n++] = (uint64_t)s;
		}
	}
	if (n != m) {
		err_set(err, "require_amd_wmma_layout: %d distinct register, lane and warp bits cover "
			"%lld elements; the tile has %lld", n, (long long)1 << n, (long long)size);
		return NULL;
	}
	/* invert the m x m matrix C whose columns are col[]: row operations on
	 * pairs (rowsel, inv) keep rowsel[i] = C inv[i] */
	for (i = 0; i < n; i++) {
		inv[i] = (uint64_t)1 << i;
		rowsel[i] = col[i];
	}
	for (j = 0; j < m; j++) {
		for (piv = j; piv < n && !((rowsel[piv] >> j) & 1); piv++)
			;
		if (piv == n) {
			err_set(err, "require_amd_wmma_layout: the bases do not cover element bit %d "
				"(two bases overlap)", j);
			return NULL;
		}
		if (piv != j) {
			uint64_t t = rowsel[piv];

			rowsel[piv] = rowsel[j];
			rowsel[j] = t;
			t = inv[piv];
			inv[piv] = inv[j];
			inv[j] = t;
		}
		for (i = 0; i < n; i++) {
			if (i != j && ((rowsel[i] >> j) & 1)) {
				rowsel[i] ^= rowsel[j];
				inv[i] ^= inv[j];
			}
		}
	}
	/* rowsel[j] = C inv[j] is now the unit vector of element bit j, so inv[j]
	 * is column j of C^-1: input bit i reads element bit j iff bit i of inv[j] */
	thread = iexpr_const(a, 0);
	slot = iexpr_const(a, 0);
	for (i = 0; i < n; i++) {
		bitx = NULL;
		for (j = 0; j < m; j++) {
			if ((inv[j] >> i) & 1) {
				IExpr *e = elbit(a, shape, rank, j);

				bitx = bitx ? iexpr_bin(a, IX_XOR, bitx, e) : e;
			}
		}
		if (!bitx)
			continue;
		if (kind[i] == 0)
			slot = iexpr_add(a, slot, iexpr_mulc(a, bitx, (int64_t)1 << pos[i]));
		else
			thread = iexpr_add(a, thread, iexpr_mulc(a, bitx, (int64_t)1 << pos[i]));
	}
	/* zero (broadcast) lane and warp bits take the replica index */
	j = 0;
	for (k = 1; k < 3; k++) {
		for (p = 0; p < L.nbits[k]; p++) {
			if (L.base[k][p * rank] || L.base[k][p * rank + 1])
				continue;
			thread = iexpr_add(a, thread,
					   iexpr_mulc(a, iexpr_modc(a, iexpr_divc(a, iexpr_var(a, IEXPR_REP),
										  (int64_t)1 << j), 2),
						      (int64_t)1 << (k == 1 ? p : 5 + p)));
			j++;
		}
	}
	rep = (int64_t)1 << nz;
	fwd[0] = slot;
	return frag_new(a, shape, rank, thread, rep, fwd, 1, err);
}
