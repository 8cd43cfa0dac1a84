/* check_dumplayout.c: the dump_layout text (TLX DumpLayout spelling) for
 * fragments, shared buffers and CuTe strings: the reference examples T1-T4
 * exactly, the linear fallback, the non-linear fallback, CuTe round trips
 * and a property test over random bit permutations (fixed seed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dumplayout.h"
#include "tests.h"

static const struct {
	int frag;               /* 1 fragment, 0 shared layout */
	int rank;
	int64_t shape[2];
	const char *thread;     /* fragment */
	int64_t rep;
	const char *fwd;        /* slot (fragment; NULL: implicit) or offset (shared) */
	const char *want;
} cases[] = {
	/* T1: blocked 64 x f32 over 4 warps, threads 64..127 duplicate 0..63 */
	{1, 1, {64}, "_i + 64 * _rep", 2, NULL, "//   cute: ((_32,_2,_2),_1):((_1,_32,_0),_0)\n"},
	/* T2: a 64-element shared buffer */
	{0, 1, {64}, NULL, 1, "_i", "//   cute: _64:_1\n"},
	/* T3: swizzled_shared vec=2 perPhase=2 maxPhase=4 on 32 x 32 */
	{0, 2, {32, 32}, NULL, 1, "_i * 32 + (_j ^ (_i // 2 % 4 * 2))",
	 "//   cute: Swizzle<2,1,5> o (_32,_32):(_32,_1)\n"},
	/* T4: 128 x 128 over 8 warps */
	{1, 2, {128, 128}, "_i + 128 * (_j // 32 % 2)", 1, "_j % 32 + 32 * (_j // 64)",
	 "//   cute: ((_32,_4,_2),(_32,_2)):((_128,_4096,_32),(_1,_64))\n"},
	/* two registers per thread, 32 threads, 4 warps broadcast */
	{1, 1, {64}, "_i // 2 + 32 * _rep", 4, "_i % 2",
	 "//   cute: ((_32,_4),_2):((_2,_0),_1)\n"},
	/* column-major shared buffer: offset -> element */
	{0, 2, {4, 8}, NULL, 1, "_j * 4 + _i", "//   cute: (_4,_8):(_8,_1)\n"},
	/* linear but not strided: the linear layout follows */
	{1, 2, {2, 2}, "_i ^ _j", 1, "_i",
	 "//   (not representable as a CuTe layout; linear layout follows)\n"
	 " - register=1 -> (1, 1)\n"
	 " - lane=1 -> (0, 1)\n"
	 " - warp is a size 1 dimension\n"
	 " - block is a size 1 dimension\n"
	 "where out dims are: [dim0 (size 2), dim1 (size 2)]\n"},
	/* not a power of two: tilec's own form */
	{1, 1, {6}, "_i", 1, NULL,
	 "//   (not representable as a CuTe or a linear layout: 6 threads is not a power of "
	 "two)\n//   layout: Fragment([6] -> [1], replicate: 1, thread: 6, forward_thread: _i, "
	 "forward_index: [0])\n"},
};

static Layout *
build(Arena *A, int i, Err *err)
{
	const char *fwd[1] = {cases[i].fwd};

	if (cases[i].frag)
		return frag_parse(A, cases[i].shape, cases[i].rank, cases[i].thread, cases[i].rep, fwd,
				  cases[i].fwd ? 1 : 0, err);
	return layout_parse(A, cases[i].shape, cases[i].rank, fwd, 1, err);
}

START_TEST(dump_text)
{
	Arena A;
	Err err = {0};
	Layout *L;
	Buf b;

	arena_init(&A);
	buf_init(&b);
	L = build(&A, _i, &err);
	ck_assert_msg(L != NULL, "case %d: %s", _i, err.msg);
	ck_assert_int_eq(dump_layout_text(&A, &b, L, 32, &err), 0);
	ck_assert_msg(!strcmp(buf_str(&b), cases[_i].want), "case %d:\n got: %s\nwant: %s", _i,
		      buf_str(&b), cases[_i].want);
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* a layout given in CuTe spelling dumps back as the same string */
static const struct {
	const char *cute;
	int rank;
	int64_t shape[2];
	int buffer;
} trips[] = {
	{"((_32,_4,_2),(_32,_2)):((_128,_4096,_32),(_1,_64))", 2, {128, 128}, 0},
	{"((_32,_2,_2),_1):((_1,_32,_0),_0)", 1, {64}, 0},
	{"((_4,_8),(_2,_2)):((_16,_1),(_8,_128))", 2, {16, 16}, 0},
	{"(_4,_32):(_32,_1)", 2, {8, 16}, 1},
	{"_64:_1", 1, {64}, 1},
};

START_TEST(cute_round_trip)
{
	Arena A;
	Err err = {0};
	CuteLayout l;
	LinLayout lin;
	Buf b;
	int r;

	arena_init(&A);
	buf_init(&b);
	ck_assert_int_eq(cute_parse_layout(&A, trips[_i].cute, &l, &err), 0);
	if (trips[_i].buffer)
		r = lin_from_cute_buffer(&A, l, trips[_i].shape, trips[_i].rank, &lin, &err);
	else
		r = lin_from_cute_tv(&A, l, trips[_i].shape, trips[_i].rank, 32, &lin, &err);
	ck_assert_msg(r == 1, "%s: %s", trips[_i].cute, err.msg);
	ck_assert_int_eq(dump_cute_strided(&b, &lin), 1);
	ck_assert_str_eq(buf_str(&b), trips[_i].cute);
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/*
 * Property: a fragment that sends the element index's bits to a random
 * permutation of (slot bits, thread bits) is linear and strided; the dump's
 * CuTe layout, evaluated at (thread, slot), gives back the element.
 */
START_TEST(random_permutations)
{
	Arena A;
	Err err = {0};
	unsigned seed = 12345u + (unsigned)_i * 7919u;
	int perm[12], nbits = 4 + _i % 7, nreg = _i % 3, k, j, t;
	int64_t shape[1], tv, s, x[2], y[2];
	char th[512], sl[512];
	const char *fwd[1] = {sl};
	Fragment *F;
	LinLayout lin;
	CuteLayout cl;
	Buf b;

	arena_init(&A);
	buf_init(&b);
	for (k = 0; k < nbits; k++)
		perm[k] = k;
	for (k = nbits - 1; k > 0; k--) {
		seed = seed * 1103515245u + 12345u;
		j = (int)((seed >> 16) % (unsigned)(k + 1));
		t = perm[k];
		perm[k] = perm[j];
		perm[j] = t;
	}
	shape[0] = (int64_t)1 << nbits;
	/* element bit perm[k] goes to slot bit k (k < nreg), else thread bit k - nreg */
	snprintf(sl, sizeof sl, "0");
	snprintf(th, sizeof th, "0");
	for (k = 0; k < nbits; k++) {
		char *dst = k < nreg ? sl : th;
		char tmp[600];
		int pos = k < nreg ? k : k - nreg;

		snprintf(tmp, sizeof tmp, "%s + _i // %lld %% 2 * %lld", dst, 1LL << perm[k], 1LL << pos);
		strcpy(dst, tmp);
	}
	F = frag_parse(&A, shape, 1, th, 1, fwd, 1, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(lin_from_fragment(&A, F, 4, &lin, &err), 1);
	ck_assert_int_eq(dump_cute_strided(&b, &lin), 1);
	ck_assert_int_eq(cute_parse_layout(&A, buf_str(&b), &cl, &err), 0);
	for (x[0] = 0; x[0] < shape[0]; x[0]++) {
		x[1] = 0;
		ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
		s = y[0];
		tv = y[1] + F->nthreads * s;
		ck_assert_int_eq(cute_eval(cl, tv, &tv, &err), 0);
		ck_assert_msg(tv == x[0], "%s: element %lld came back as %lld", buf_str(&b),
			      (long long)x[0], (long long)tv);
	}
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* require_amd_wmma_layout: bases in tile units, checked against rank and shape */
static int64_t b01[2] = {0, 1}, b10[2] = {1, 0}, b02[2] = {0, 2}, b20[2] = {2, 0}, b00[2] = {0, 0};
static int64_t b3[3] = {0, 1, 0}, b40[2] = {4, 0};
static int len2[4] = {2, 2, 2, 2}, len3[1] = {3};
static int64_t *reg_std[2] = {b01, b10}, *warp_std[2] = {b02, b20}, *warp_bc[2] = {b02, b00};
static int64_t *bad_rank[1] = {b3}, *outside[1] = {b40}, *overlap[2] = {b01, b01};

static const struct {
	int version, transposed;
	IntLists warp, reg;
	int64_t shape[2];
	const char *want;       /* the dump, or the error text */
	int ok;
} wmmas[] = {
	/* the reference's defaults: 4 warps, a 2 x 2 block of tiles per warp */
	{3, 1, {2, len2, warp_std}, {2, len2, reg_std}, {64, 64},
	 "//   cute: ((_16,_2,_2,_2),(_8,_2,_2)):((_64,_8,_32,_2048),(_1,_16,_1024))\n", 1},
	{2, 0, {0, NULL, NULL}, {0, NULL, NULL}, {16, 16},
	 "//   cute: ((_16,_2),_8):((_1,_128),_16)\n", 1},
	{1, 0, {0, NULL, NULL}, {0, NULL, NULL}, {16, 16}, "//   cute: (_32,_8):(_1,_32)\n", 1},
	/* a broadcast warp bit */
	{2, 0, {2, len2, warp_bc}, {0, NULL, NULL}, {16, 48}, "not a power of two", 0},
	{2, 0, {2, len2, warp_bc}, {0, NULL, NULL}, {16, 64}, "9 distinct register, lane and warp bits cover 512", 0},
	{2, 0, {2, len2, warp_bc}, {1, len2, reg_std}, {16, 64},
	 "//   cute: ((_16,_2,_2,_2),(_8,_2)):((_1,_512,_32,_0),(_64,_16))\n", 0},
	{3, 0, {0, NULL, NULL}, {1, len3, bad_rank}, {16, 16}, "has 3 entries, the tile has rank 2", 0},
	{3, 0, {0, NULL, NULL}, {1, len2, outside}, {32, 32}, "is outside the tile", 0},
	{3, 0, {0, NULL, NULL}, {2, len2, overlap}, {16, 64}, "two bases overlap", 0},
};

START_TEST(wmma_bases)
{
	Arena A;
	Err err = {0};
	int64_t instr[3] = {16, 16, 128};
	Fragment *F;
	LinLayout want, got;
	Buf b;

	arena_init(&A);
	buf_init(&b);
	F = wmma_bases_fragment(&A, wmmas[_i].version, wmmas[_i].transposed, &wmmas[_i].warp,
				&wmmas[_i].reg, instr, 3, wmmas[_i].shape, 2, &err);
	if (!F) {
		ck_assert_msg(strstr(err.msg, wmmas[_i].want) != NULL, "case %d: %s", _i, err.msg);
		goto out;
	}
	ck_assert_int_eq(wmma_bases_linear(&A, wmmas[_i].version, wmmas[_i].transposed,
					   &wmmas[_i].warp, &wmmas[_i].reg, instr, 3, wmmas[_i].shape,
					   2, &want, &err), 0);
	ck_assert_int_eq(lin_from_fragment(&A, F, 32, &got, &err), 1);
	ck_assert_msg(lin_equal(&want, &got), "case %d: the fragment differs from its bases", _i);
	ck_assert_int_eq(dump_layout_text(&A, &b, F, 32, &err), 0);
	ck_assert_msg(strstr(buf_str(&b), wmmas[_i].want) != NULL, "case %d: %s", _i, buf_str(&b));
out:
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* v1 with no extra bases is the RDNA3 WMMA accumulator of mma.c */
START_TEST(wmma_matches_mma)
{
	Arena A;
	Err err = {0};
	IntLists none = {0, NULL, NULL};
	int64_t shape[2] = {16, 16}, instr[3] = {16, 16, 16};
	Fragment *F, *G;

	arena_init(&A);
	F = wmma_bases_fragment(&A, 1, 0, &none, &none, instr, 3, shape, 2, &err);
	G = wmma_fragment(&A, MMA_C, &err);
	ck_assert_msg(F && G, "%s", err.msg);
	ck_assert_int_eq(layout_equal(F, G, &err), 1);
	instr[0] = 32;
	ck_assert_ptr_null(wmma_bases_fragment(&A, 1, 0, &none, &none, instr, 3, shape, 2, &err));
	ck_assert_ptr_null(wmma_bases_fragment(&A, 4, 0, &none, &none, NULL, 0, shape, 2, &err));
	ck_assert_ptr_null(wmma_bases_fragment(&A, 1, 0, &none, &none, NULL, 0, shape, 1, &err));
	ck_assert_ptr_null(wmma_bases_fragment(&A, 1, 0, NULL, &none, NULL, 0, shape, 2, &err));
	arena_free(&A);
}
END_TEST

Suite *
suite_dumplayout(void)
{
	Suite *s = suite_create("dumplayout");
	TCase *tc = tcase_create("dumplayout");

	tcase_add_loop_test(tc, dump_text, 0, (int)(sizeof cases / sizeof cases[0]));
	tcase_add_loop_test(tc, cute_round_trip, 0, (int)(sizeof trips / sizeof trips[0]));
	tcase_add_loop_test(tc, random_permutations, 0, 40);
	tcase_add_loop_test(tc, wmma_bases, 0, (int)(sizeof wmmas / sizeof wmmas[0]));
	tcase_add_test(tc, wmma_matches_mma);
	suite_add_tcase(s, tc);
	return s;
}
