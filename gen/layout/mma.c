/*
 * mma.c: MMA register layouts as Fragments: NVIDIA mma.sync m16n8k16 (f16,
 * bf16), m16n8k8 (tf32) and m16n8k32 (8-bit) operands and accumulators, the
 * block-level tiling over warps with TileLang's warp-partition policies, the
 * Hopper wgmma accumulator, AMD
 * CDNA MFMA 16x16x16 f16 (wave64) and RDNA3 WMMA 16x16x16 f16 (wave32).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"

static Fragment *
mkfrag(Arena *A, int64_t r, int64_t c, const char *thread, int64_t rep, const char *slot, Err *err)
{
	int64_t shape[2] = {r, c};

	return frag_parse(A, shape, 2, thread, rep, &slot, 1, err);
}

/* k extent of one mma.sync for an element width */
static int
kdim(int elem_bits, Err *err)
{
	switch (elem_bits) {
	case 8: return 32;
	case 16: return 16;
	case 32: return 8;
	default:
		return err_set(err, "mma.sync: element width %d bits is not 8, 16 or 32", elem_bits);
	}
}

/* per-warp lane and slot formulas, as text over a = row, b = col of the
 * instruction tile (A: m, k; B: k, n; C: m, n) */
static int
base(MmaOperand op, int bits, const char *a, const char *b, char *lane, char *slot, size_t sz,
     Err *err)
{
	if (op == MMA_C) {
		snprintf(lane, sz, "%s %% 8 * 4 + %s %% 8 // 2", a, b);
		snprintf(slot, sz, "%s // 8 * 2 + %s %% 2", a, b);
		return 0;
	}
	switch (bits) {
	case 16:
		if (op == MMA_A) {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 8 // 2", a, b);
			snprintf(slot, sz, "%s // 8 * 4 + %s // 8 * 2 + %s %% 2", b, a, b);
		} else {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 8 // 2", b, a);
			snprintf(slot, sz, "%s // 8 * 2 + %s %% 2", a, a);
		}
		return 0;
	case 32:
		if (op == MMA_A) {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 4", a, b);
			snprintf(slot, sz, "%s // 4 * 2 + %s // 8", b, a);
		} else {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 4", b, a);
			snprintf(slot, sz, "%s // 4", a);
		}
		return 0;
	case 8:
		if (op == MMA_A) {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 16 // 4", a, b);
			snprintf(slot, sz, "%s // 16 * 8 + %s // 8 * 4 + %s %% 4", b, a, b);
		} else {
			snprintf(lane, sz, "%s %% 8 * 4 + %s %% 16 // 4", b, a);
			snprintf(slot, sz, "%s // 16 * 4 + %s %% 4", a, a);
		}
		return 0;
	default:
		return err_set(err, "mma.sync: element width %d bits is not 8, 16 or 32", bits);
	}
}

Fragment *
mma_sync_fragment(Arena *A, MmaOperand op, int elem_bits, Err *err)
{
	char lane[256], slot[256];
	int k;

	if (op != MMA_A && op != MMA_B && op != MMA_C) {
		err_set(err, "mma.sync: unknown operand");
		return NULL;
	}
	if ((k = kdim(elem_bits, err)) < 0)
		return NULL;
	if (base(op, elem_bits, "_i", "_j", lane, slot, sizeof lane, err))
		return NULL;
	switch (op) {
	case MMA_A: return mkfrag(A, 16, k, lane, 1, slot, err);
	case MMA_B: return mkfrag(A, k, 8, lane, 1, slot, err);
	default: return mkfrag(A, 16, 8, lane, 1, slot, err);
	}
}

int
mma_warp_partition(int64_t M, int64_t N, int W, WarpPolicy p, MmaTarget t, int *m_warp, int *n_warp,
		   Err *err)
{
	int64_t kn = t == MMA_ROCM ? 16 : 8;
	int m, best = -1;
	double bestscore = 0;

	if (!m_warp || !n_warp || M < 1 || N < 1 || W < 1)
		return err_set(err, "warp partition: bad arguments");
	if (p != WARP_SQUARE && p != WARP_FULL_ROW && p != WARP_FULL_COL)
		return err_set(err, "warp partition: unknown policy %d", (int)p);
	if (t == MMA_ROCM && p != WARP_SQUARE) {
		/* ROCm: not exhaustive; all warps on one side unless the tile is too small */
		int64_t a = p == WARP_FULL_ROW ? M : N;

		m = W;
		if (a % (16 * (int64_t)W)) {
			if (a % 16 || W % (a / 16))
				return err_set(err, "no valid warp partition for %lldx%lld over %d warps",
					       (long long)M, (long long)N, W);
			m = (int)(a / 16);
		}
		*m_warp = p == WARP_FULL_ROW ? m : W / m;
		*n_warp = p == WARP_FULL_ROW ? W / m : m;
		return 0;
	}
	for (m = 1; m <= W; m++) {
		int n = W / m;
		double score;

		if (W % m || M % (16 * (int64_t)m) || N % (kn * n) || (t == MMA_WGMMA && m % 4))
			continue;
		if (p == WARP_FULL_ROW)
			score = -m;
		else if (p == WARP_FULL_COL)
			score = -n;
		else
			score = fabs(((double)M / (16.0 * m)) / ((double)N / ((double)kn * n)) -
				     (double)M / (double)N);
		if (best < 0 || score < bestscore) {
			best = m;
			bestscore = score;
		}
	}
	if (best < 0)
		return err_set(err, "no valid warp partition for %lldx%lld over %d warps%s", (long long)M,
			       (long long)N, W, t == MMA_WGMMA ? " (wgmma needs m_warp %% 4 == 0)" : "");
	*m_warp = best;
	*n_warp = W / best;
	return 0;
}

Fragment *
mma_block_fragment(Arena *A, MmaOperand op, int64_t rows, int64_t cols, int elem_bits, int m_warp,
		   int n_warp, Err *err)
{
	char lane[256], slot[256], thr[600], idx[600], a[64], b[64];
	int64_t wrt, wct, micro, wr, wc, L;
	int k;

	if (m_warp < 1 || n_warp < 1 || rows < 1 || cols < 1) {
		err_set(err, "mma block: bad arguments");
		return NULL;
	}
	if ((k = kdim(elem_bits, err)) < 0)
		return NULL;
	switch (op) {
	case MMA_C:
		if (rows % m_warp || cols % n_warp || (wrt = rows / m_warp) % 16 ||
		    (wct = cols / n_warp) % 8) {
			err_set(err, "accumulator %lldx%lld does not split into 16x8 tiles over %dx%d warps",
				(long long)rows, (long long)cols, m_warp, n_warp);
			return NULL;
		}
		micro = wct % 16 == 0 ? 16 : 8;
		wr = wrt / 16;
		wc = wct / micro;
		L = micro / 2;
		snprintf(a, sizeof a, "(_i %% 16)");
		snprintf(b, sizeof b, "(_j %% %lld)", (long long)micro);
		snprintf(lane, sizeof lane, "%s %% 8 * 4 + %s %% 8 // 2", a, b);
		snprintf(slot, sizeof slot, "%s // 8 * 4 + %s // 8 * 2 + %s %% 2", b, a, b);
		snprintf(thr, sizeof thr, "_j // %lld * %lld + _i // %lld * 32 + %s", (long long)wct,
			 32 * (long long)m_warp, (long long)wrt, lane);
		snprintf(idx, sizeof idx, "_i // 16 %% %lld * %lld + _j // %lld %% %lld * %lld + %s",
			 (long long)wr, (long long)(wc * L), (long long)micro, (long long)wc, (long long)L,
			 slot);
		return mkfrag(A, rows, cols, thr, 1, idx, err);
	case MMA_A:
		if (rows % m_warp || (wrt = rows / m_warp) % 16 || cols % k) {
			err_set(err, "operand A %lldx%lld does not split into 16x%d tiles over %d warps",
				(long long)rows, (long long)cols, k, m_warp);
			return NULL;
		}
		wr = wrt / 16;
		L = 16 * k / 32;
		snprintf(a, sizeof a, "(_i %% 16)");
		snprintf(b, sizeof b, "(_j %% %d)", k);
		if (base(MMA_A, elem_bits, a, b, lane, slot, sizeof lane, err))
			return NULL;
		snprintf(thr, sizeof thr, "%s + _i // %lld * 32 + _rep * %lld", lane, (long long)wrt,
			 32 * (long long)m_warp);
		snprintf(idx, sizeof idx, "%s + (_i %% %lld // 16 + _j // %d * %lld) * %lld", slot,
			 (long long)wrt, k, (long long)wr, (long long)L);
		return mkfrag(A, rows, cols, thr, n_warp, idx, err);
	case MMA_B:
		if (cols % n_warp || (wct = cols / n_warp) % 8 || rows % k) {
			err_set(err, "operand B %lldx%lld does not split into %dx8 tiles over %d warps",
				(long long)rows, (long long)cols, k, n_warp);
			return NULL;
		}
		wc = wct / 8;
		L = 8 * k / 32;
		snprintf(a, sizeof a, "(_i %% %d)", k);
		snprintf(b, sizeof b, "(_j %% 8)");
		if (base(MMA_B, elem_bits, a, b, lane, slot, sizeof lane, err))
			return NULL;
		snprintf(thr, sizeof thr, "%s + _rep * 32 + _j // %lld * %lld", lane, (long long)wct,
			 32 * (long long)m_warp);
		snprintf(idx, sizeof idx, "%s + (_j %% %lld // 8 + _i // %d * %lld) * %lld", slot,
			 (long long)wct, k, (long long)wc, (long long)L);
		return mkfrag(A, rows, cols, thr, m_warp, idx, err);
	default:
		err_set(err, "mma block: unknown operand");
		return NULL;
	}
}

Fragment *
wgmma_acc_fragment(Arena *A, int64_t N, Err *err)
{
	if (N < 8 || N > 256 || N % 8) {
		err_set(err, "wgmma: N = %lld is not a multiple of 8 in [8, 256]", (long long)N);
		return NULL;
	}
	return mkfrag(A, 64, N, "_i // 16 * 32 + _i % 8 * 4 + _j % 8 // 2", 1,
		      "_j // 8 * 4 + _i % 16 // 8 * 2 + _j % 2", err);
}

Fragment *
mfma_fragment(Arena *A, MmaOperand op, Err *err)
{
	switch (op) {
	case MMA_A: return mkfrag(A, 16, 16, "_i + _j // 4 * 16", 1, "_j % 4", err);
	case MMA_B: return mkfrag(A, 16, 16, "_j + _i // 4 * 16", 1, "_i % 4", err);
	case MMA_C: return mkfrag(A, 16, 16, "_j + _i // 4 * 16", 1, "_i % 4", err);
	default:
		err_set(err, "mfma: unknown operand");
		return NULL;
	}
}

Fragment *
wmma_fragment(Arena *A, MmaOperand op, Err *err)
{
	switch (op) {
	case MMA_A: return mkfrag(A, 16, 16, "_i + _rep * 16", 2, "_j", err);
	case MMA_B: return mkfrag(A, 16, 16, "_j + _rep * 16", 2, "_i", err);
	case MMA_C: return mkfrag(A, 16, 16, "_j + _i % 2 * 16", 1, "_i // 2", err);
	default:
		err_set(err, "wmma: unknown operand");
		return NULL;
	}
}
