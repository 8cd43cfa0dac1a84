/* check_mma.c: MMA fragments checked element by element against the PTX ISA
 * fragment tables (mma.sync m16n8k16/k8/k32) and the AMD ISA register layouts
 * (CDNA MFMA 16x16x16 f16, RDNA3 WMMA 16x16x16 f16), the warp partition
 * policies, the block-level tiling, and goldens of the printed forms. The
 * formulas below are written from the ISA tables, not from gen/layout/mma.c. */
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "tests.h"

/* PTX ISA, "Matrix fragments for mma.m16n8k*": lane -> groupID = lane >> 2,
 * threadID_in_group = lane % 4; register r of the thread holds (row, col). */
static void
ptx_elem(MmaOperand op, int bits, int lane, int r, int64_t *row, int64_t *col)
{
	int g = lane >> 2, t = lane % 4;

	if (op == MMA_C) {              /* c0..c3: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1) */
		*row = g + 8 * (r >= 2);
		*col = 2 * t + (r & 1);
		return;
	}
	if (bits == 16) {
		if (op == MMA_A) {      /* a0,a1: (g, 2t+i); a2,a3: g+8; a4..a7: col + 8 */
			*row = g + 8 * ((r >> 1) & 1);
			*col = 2 * t + (r & 1) + 8 * (r >= 4);
		} else {                /* b0,b1: (k = 2t+i, n = g); b2,b3: k + 8 */
			*row = 2 * t + (r & 1) + 8 * (r >= 2);
			*col = g;
		}
	} else if (bits == 32) {
		if (op == MMA_A) {      /* a0: (g, t), a1: (g+8, t), a2: (g, t+4), a3: (g+8, t+4) */
			*row = g + 8 * (r & 1);
			*col = t + 4 * (r >= 2);
		} else {                /* b0: (k = t, n = g), b1: (k = t+4, n = g) */
			*row = t + 4 * r;
			*col = g;
		}
	} else {
		if (op == MMA_A) {      /* a0..a3: (g, 4t+i); a4..a7: g+8; a8..a15: col + 16 */
			*row = g + 8 * ((r >> 2) & 1);
			*col = 4 * t + (r & 3) + 16 * (r >= 8);
		} else {                /* b0..b3: (k = 4t+i, n = g); b4..b7: k + 16 */
			*row = 4 * t + (r & 3) + 16 * (r >= 4);
			*col = g;
		}
	}
}

static const struct {
	MmaOperand op;
	int bits, nregs;
	int64_t rows, cols;
} ptx_cases[] = {
	{MMA_A, 16, 8, 16, 16}, {MMA_B, 16, 4, 16, 8}, {MMA_C, 16, 4, 16, 8},
	{MMA_A, 32, 4, 16, 8},  {MMA_B, 32, 2, 8, 8},  {MMA_C, 32, 4, 16, 8},
	{MMA_A, 8, 16, 16, 32}, {MMA_B, 8, 8, 32, 8},  {MMA_C, 8, 4, 16, 8},
};

START_TEST(ptx_tables)
{
	Arena A;
	Err err = {0};
	Fragment *F;
	int lane, r;

	arena_init(&A);
	F = mma_sync_fragment(&A, ptx_cases[_i].op, ptx_cases[_i].bits, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(F->in_shape[0], ptx_cases[_i].rows);
	ck_assert_int_eq(F->in_shape[1], ptx_cases[_i].cols);
	ck_assert_int_eq(F->nthreads, 32);
	ck_assert_int_eq(F->out_shape[0], ptx_cases[_i].nregs);
	ck_assert_int_eq(32 * ptx_cases[_i].nregs, layout_size(F));
	for (lane = 0; lane < 32; lane++)
		for (r = 0; r < ptx_cases[_i].nregs; r++) {
			int64_t x[3] = {0, 0, 0}, y[2];

			ptx_elem(ptx_cases[_i].op, ptx_cases[_i].bits, lane, r, &x[0], &x[1]);
			ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
			ck_assert_msg(y[1] == lane && y[0] == r,
				      "element (%lld, %lld): fragment (lane %lld, reg %lld), PTX (lane %d, reg %d)",
				      (long long)x[0], (long long)x[1], (long long)y[1], (long long)y[0], lane, r);
		}
	ck_assert_msg(layout_inverse(&A, F, 0, &err) != NULL, "%s", err.msg);
	arena_free(&A);
}
END_TEST

/* AMD ISA register layouts; lane l, item v */
START_TEST(amd_tables)
{
	Arena A;
	Err err = {0};
	int op, l, v;

	arena_init(&A);
	for (op = MMA_A; op <= MMA_C; op++) {
		/* CDNA v_mfma_f32_16x16x16_f16: A[l%16][4(l/16)+v], B[4(l/16)+v][l%16],
		 * D[4(l/16)+v][l%16], v < 4 */
		Fragment *F = mfma_fragment(&A, (MmaOperand)op, &err);

		ck_assert_ptr_nonnull(F);
		ck_assert_int_eq(F->nthreads, 64);
		for (l = 0; l < 64; l++)
			for (v = 0; v < 4; v++) {
				int64_t x[3] = {0, 0, 0}, y[2];

				if (op == MMA_A) {
					x[0] = l % 16;
					x[1] = 4 * (l / 16) + v;
				} else {
					x[0] = 4 * (l / 16) + v;
					x[1] = l % 16;
				}
				ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
				ck_assert(y[1] == l && y[0] == v);
			}
		/* RDNA3 v_wmma_f32_16x16x16_f16 (wave32): A[l%16][v] and B[v][l%16] for
		 * v < 16 with lanes 16..31 repeating lanes 0..15; D[2v + l/16][l%16], v < 8 */
		F = wmma_fragment(&A, (MmaOperand)op, &err);
		ck_assert_ptr_nonnull(F);
		ck_assert_int_eq(F->nthreads, 32);
		for (l = 0; l < 32; l++)
			for (v = 0; v < (op == MMA_C ? 8 : 16); v++) {
				int64_t x[3] = {0, 0, 0}, y[2];

				if (op == MMA_A) {
					x[0] = l % 16;
					x[1] = v;
				} else if (op == MMA_B) {
					x[0] = v;
					x[1] = l % 16;
				} else {
					x[0] = 2 * v + l / 16;
					x[1] = l % 16;
				}
				if (op != MMA_C) {
					ck_assert_int_eq(F->rep, 2);
					x[2] = l / 16;  /* the replica held by this half-wave */
				}
				ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
				ck_assert(y[1] == l && y[0] == v);
			}
		ck_assert_int_eq(layout_check_injective(F, &err), 0);
	}
	arena_free(&A);
}
END_TEST

/* wgmma m64nNk16 accumulator, from CUTLASS's CLayout_64xN
 * ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) over (m + 64 n): thread
 * T = t0 + 4 t1 + 32 t2 and value V = v0 + 2 v1 + 4 v2 hold
 * m = t1 + 16 t2 + 8 v1, n = 2 t0 + v0 + 8 v2 */
START_TEST(wgmma_accumulator)
{
	static const int64_t Ns[] = {8, 64, 256};
	Arena A;
	Err err = {0};
	size_t k;

	arena_init(&A);
	for (k = 0; k < countof(Ns); k++) {
		Fragment *F = wgmma_acc_fragment(&A, Ns[k], &err);
		int64_t T, V;

		ck_assert_msg(F != NULL, "%s", err.msg);
		ck_assert_int_eq(F->nthreads, 128);
		ck_assert_int_eq(F->out_shape[0], Ns[k] / 2);
		for (T = 0; T < 128; T++)
			for (V = 0; V < Ns[k] / 2; V++) {
				int64_t off = 128 * (T % 4) + (T / 4 % 8) + 16 * (T / 32) + 64 * (V % 2) +
					      8 * (V / 2 % 2) + 512 * (V / 4);
				int64_t x[3] = {off % 64, off / 64, 0}, y[2];

				ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
				ck_assert(y[1] == T && y[0] == V);
			}
	}
	ck_assert_ptr_null(wgmma_acc_fragment(&A, 12, &err));
	arena_free(&A);
}
END_TEST

static const struct {
	int64_t M, N;
	int W;
	WarpPolicy p;
	MmaTarget t;
	int m, n;       /* 0, 0: error */
} part_cases[] = {
	{128, 128, 4, WARP_SQUARE, MMA_CUDA, 2, 2},
	{128, 128, 4, WARP_FULL_ROW, MMA_CUDA, 4, 1},
	{128, 128, 4, WARP_FULL_COL, MMA_CUDA, 1, 4},
	{64, 256, 8, WARP_SQUARE, MMA_CUDA, 2, 4},
	{16, 128, 4, WARP_SQUARE, MMA_CUDA, 1, 4},
	{32, 16, 4, WARP_FULL_COL, MMA_CUDA, 2, 2},
	{16, 8, 4, WARP_SQUARE, MMA_CUDA, 0, 0},
	{128, 128, 4, WARP_SQUARE, MMA_WGMMA, 4, 1},
	{128, 256, 8, WARP_SQUARE, MMA_WGMMA, 4, 2},
	{32, 128, 4, WARP_SQUARE, MMA_WGMMA, 0, 0},
	{128, 128, 4, WARP_SQUARE, MMA_ROCM, 2, 2},
	{128, 128, 4, WARP_FULL_ROW, MMA_ROCM, 4, 1},
	{32, 128, 4, WARP_FULL_ROW, MMA_ROCM, 2, 2},
	{128, 32, 4, WARP_FULL_COL, MMA_ROCM, 2, 2},
};

START_TEST(warp_partition)
{
	Err err = {0};
	int m = -1, n = -1, r;

	r = mma_warp_partition(part_cases[_i].M, part_cases[_i].N, part_cases[_i].W, part_cases[_i].p,
			       part_cases[_i].t, &m, &n, &err);
	if (!part_cases[_i].m) {
		ck_assert_int_eq(r, -1);
		ck_assert_ptr_nonnull(strstr(err.msg, "no valid warp partition"));
	} else {
		ck_assert_msg(r == 0, "%s", err.msg);
		ck_assert_int_eq(m, part_cases[_i].m);
		ck_assert_int_eq(n, part_cases[_i].n);
	}
}
END_TEST

/* block-level accumulator: samples from TileLang's make_mma_store_layout and a
 * full check that each warp owns a contiguous block laid out as PTX C */
START_TEST(block_accumulator)
{
	static const struct {
		int64_t i, j, t, s;
	} samples[] = {
		{0, 0, 0, 0}, {0, 1, 0, 1}, {0, 2, 1, 0}, {1, 0, 4, 0}, {8, 0, 0, 2},
		{0, 8, 0, 4}, {16, 0, 0, 32}, {64, 0, 32, 0}, {0, 64, 64, 0},
	};
	static const struct {
		int64_t M, N;
		int mw, nw;
	} tiles[] = {{128, 128, 2, 2}, {64, 64, 4, 1}, {32, 64, 1, 4}, {64, 32, 2, 2}, {256, 256, 2, 4}};
	Arena A;
	Err err = {0};
	Fragment *F;
	size_t k;

	arena_init(&A);
	F = mma_block_fragment(&A, MMA_C, 128, 128, 16, 2, 2, &err);
	ck_assert_ptr_nonnull(F);
	for (k = 0; k < countof(samples); k++) {
		int64_t x[3] = {samples[k].i, samples[k].j, 0}, y[2];

		ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
		ck_assert_int_eq(y[1], samples[k].t);
		ck_assert_int_eq(y[0], samples[k].s);
	}
	for (k = 0; k < countof(tiles); k++) {
		int64_t M = tiles[k].M, N = tiles[k].N, wrt = M / tiles[k].mw, wct = N / tiles[k].nw;
		int64_t micro = wct % 16 ? 8 : 16, i, j;

		F = mma_block_fragment(&A, MMA_C, M, N, 16, tiles[k].mw, tiles[k].nw, &err);
		ck_assert_msg(F != NULL, "%s", err.msg);
		ck_assert_int_eq(F->nthreads, 32 * tiles[k].mw * tiles[k].nw);
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				int64_t x[3] = {i, j, 0}, y[2], warp, lane, g, t, r;

				ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
				warp = y[1] / 32;
				lane = y[1] % 32;
				/* M-fastest warp numbering, contiguous blocks */
				ck_assert_int_eq(warp % tiles[k].mw, i / wrt);
				ck_assert_int_eq(warp / tiles[k].mw, j / wct);
				/* PTX C inside each 16x8 tile */
				g = i % 8;
				t = (j % 8) / 2;
				r = 2 * ((i % 16) / 8) + j % 2;
				ck_assert_int_eq(lane, 4 * g + t);
				ck_assert_int_eq(y[0] % 4, r);
				ck_assert_int_eq(y[0] / 4 % (micro / 8), (j % micro) / 8);
			}
		ck_assert_msg(layout_inverse(&A, F, 0, &err) != NULL, "%s", err.msg);
	}
	ck_assert_ptr_null(mma_block_fragment(&A, MMA_C, 100, 128, 16, 2, 2, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "does not split"));
	ck_assert_ptr_null(mma_sync_fragment(&A, MMA_A, 64, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "64 bits"));
	arena_free(&A);
}
END_TEST

/* block-level operands: every replica of A(m, k) sits on PTX's lane in the
 * warp row of m, over all N-warps; B likewise over the M-warps */
START_TEST(block_operands)
{
	static const int bitsv[] = {16, 32, 8};
	Arena A;
	Err err = {0};
	size_t b;

	arena_init(&A);
	for (b = 0; b < countof(bitsv); b++) {
		int bits = bitsv[b], kb = bits == 16 ? 16 : bits == 32 ? 8 : 32, mw = 2, nw = 2, nregs, lane, r;
		int64_t M = 64, N = 64, K = 2 * kb, wrt = M / mw, wct = N / nw, rr, i0, j0;
		Fragment *Fa = mma_block_fragment(&A, MMA_A, M, K, bits, mw, nw, &err);
		Fragment *Fb = mma_block_fragment(&A, MMA_B, K, N, bits, mw, nw, &err);

		ck_assert_msg(Fa && Fb, "%s", err.msg);
		ck_assert_int_eq(Fa->rep, nw);
		ck_assert_int_eq(Fb->rep, mw);
		ck_assert_int_eq(layout_check_injective(Fa, &err), 0);
		ck_assert_int_eq(layout_check_injective(Fb, &err), 0);
		ck_assert_msg(layout_inverse(&A, Fa, 0, &err) != NULL, "%s", err.msg);
		ck_assert_msg(layout_inverse(&A, Fb, 0, &err) != NULL, "%s", err.msg);
		/* A: tiles 16 x kb */
		nregs = 16 * kb / 32;
		for (i0 = 0; i0 < M; i0 += 16)
			for (j0 = 0; j0 < K; j0 += kb)
				for (lane = 0; lane < 32; lane++)
					for (r = 0; r < nregs; r++)
						for (rr = 0; rr < nw; rr++) {
							int64_t x[3], y[2];

							ptx_elem(MMA_A, bits, lane, r, &x[0], &x[1]);
							x[0] += i0;
							x[1] += j0;
							x[2] = rr;
							ck_assert_int_eq(layout_eval(Fa, x, y, &err), 0);
							ck_assert_int_eq(y[1], lane + 32 * (x[0] / wrt) + 32 * mw * rr);
							ck_assert_int_eq(y[0] % nregs, r);
						}
		/* B: tiles kb x 8 */
		nregs = 8 * kb / 32;
		for (i0 = 0; i0 < K; i0 += kb)
			for (j0 = 0; j0 < N; j0 += 8)
				for (lane = 0; lane < 32; lane++)
					for (r = 0; r < nregs; r++)
						for (rr = 0; rr < mw; rr++) {
							int64_t x[3], y[2];

							ptx_elem(MMA_B, bits, lane, r, &x[0], &x[1]);
							x[0] += i0;
							x[1] += j0;
							x[2] = rr;
							ck_assert_int_eq(layout_eval(Fb, x, y, &err), 0);
							ck_assert_int_eq(y[1], lane + 32 * rr + 32 * mw * (x[1] / wct));
							ck_assert_int_eq(y[0] % nregs, r);
						}
	}
	arena_free(&A);
}
END_TEST

START_TEST(golden_printed)
{
	static const char *opn[] = {"A", "B", "C"};
	static const int bitsv[] = {16, 32, 8};
	Arena A;
	Err err = {0};
	Buf b;
	char msg[512];
	size_t k;
	int op;

	arena_init(&A);
	buf_init(&b);
	for (k = 0; k < countof(bitsv); k++)
		for (op = MMA_A; op <= MMA_C; op++) {
			buf_printf(&b, "# mma.sync %s, %d-bit inputs\n", opn[op], bitsv[k]);
			layout_print(&b, mma_sync_fragment(&A, (MmaOperand)op, bitsv[k], &err));
			buf_puts(&b, "\n");
		}
	buf_puts(&b, "# mma.sync block C 128x128, 2x2 warps\n");
	layout_print(&b, mma_block_fragment(&A, MMA_C, 128, 128, 16, 2, 2, &err));
	buf_puts(&b, "\n# mma.sync block A 128x32 f16, 2x2 warps\n");
	layout_print(&b, mma_block_fragment(&A, MMA_A, 128, 32, 16, 2, 2, &err));
	buf_puts(&b, "\n# mma.sync block B 32x128 f16, 2x2 warps\n");
	layout_print(&b, mma_block_fragment(&A, MMA_B, 32, 128, 16, 2, 2, &err));
	buf_puts(&b, "\n# inverse of the m16n8k16 accumulator: (slot, lane) -> (row, col, rep)\n");
	layout_print(&b, layout_inverse(&A, mma_sync_fragment(&A, MMA_C, 16, &err), 0, &err));
	for (op = MMA_A; op <= MMA_C; op++) {
		buf_printf(&b, "\n# mfma 16x16x16 f16 %s\n", opn[op]);
		layout_print(&b, mfma_fragment(&A, (MmaOperand)op, &err));
		buf_printf(&b, "\n# wmma 16x16x16 f16 %s\n", opn[op]);
		layout_print(&b, wmma_fragment(&A, (MmaOperand)op, &err));
	}
	buf_puts(&b, "\n");
	ck_assert_msg(!test_golden("test/golden/layout/mma.txt", buf_str(&b), msg, sizeof msg), "%s", msg);
	buf_free(&b);
	arena_free(&A);
}
END_TEST

Suite *
suite_mma(void)
{
	Suite *s = suite_create("mma");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, ptx_tables, 0, countof(ptx_cases));
	tcase_add_test(tc, amd_tables);
	tcase_add_test(tc, wgmma_accumulator);
	tcase_add_loop_test(tc, warp_partition, 0, countof(part_cases));
	tcase_add_test(tc, block_accumulator);
	tcase_add_test(tc, block_operands);
	tcase_add_test(tc, golden_printed);
	suite_add_tcase(s, tc);
	return s;
}
