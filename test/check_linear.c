/* check_linear.c: the linear-layout view: TLX's toString text for the
 * reference's assert-layout-invalid example, equality of structurally
 * different layouts with the same mapping, rejections (non-linear maps,
 * non-power-of-two shapes, holes), and lin_apply against the layout core. */
#include <stdio.h>
#include <string.h>

#include "linear.h"
#include "tests.h"

static const struct {
	int64_t n;
	const char *thread;
	int64_t rep;
	const char *slot;
	const char *want;
} texts[] = {
	{64, "_i + 64 * _rep", 2, NULL,
	 "\n - register is a size 1 dimension\n"
	 " - lane=1 -> (1)\n   lane=2 -> (2)\n   lane=4 -> (4)\n   lane=8 -> (8)\n   lane=16 -> (16)\n"
	 " - warp=1 -> (32)\n   warp=2 -> (0)\n"
	 " - block is a size 1 dimension\n"
	 "where out dims are: [dim0 (size 64)]"},
	{64, "_i // 2 + 32 * _rep", 4, "_i % 2",
	 "\n - register=1 -> (1)\n"
	 " - lane=1 -> (2)\n   lane=2 -> (4)\n   lane=4 -> (8)\n   lane=8 -> (16)\n   lane=16 -> (32)\n"
	 " - warp=1 -> (0)\n   warp=2 -> (0)\n"
	 " - block is a size 1 dimension\n"
	 "where out dims are: [dim0 (size 64)]"},
};

static Fragment *
mk(Arena *A, int64_t n, const char *thread, int64_t rep, const char *slot, Err *err)
{
	const char *fwd[1] = {slot};

	return frag_parse(A, &n, 1, thread, rep, fwd, slot ? 1 : 0, err);
}

START_TEST(to_string)
{
	Arena A;
	Err err = {0};
	Fragment *F;
	LinLayout L;
	Buf b;

	arena_init(&A);
	buf_init(&b);
	F = mk(&A, texts[_i].n, texts[_i].thread, texts[_i].rep, texts[_i].slot, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(lin_from_fragment(&A, F, 32, &L, &err), 1);
	lin_print(&b, &L);
	ck_assert_str_eq(buf_str(&b), texts[_i].want);
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* pairs of fragments: equal as linear layouts or not */
static const struct {
	int64_t n;
	const char *t1, *s1;
	int64_t r1;
	const char *t2, *s2;
	int64_t r2;
	int equal;
} pairs[] = {
	/* the same map spelled differently */
	{64, "_i + 64 * _rep", NULL, 2, "_i % 64 + _rep * 64", NULL, 2, 1},
	{64, "_i // 2", "_i % 2", 1, "(_i >> 1)", "_i & 1", 1, 1},
	/* register bits permuted */
	{64, "_i % 16", "_i // 16", 1, "_i % 16", "_i // 16 % 2 * 2 + _i // 32", 1, 0},
	/* spt 1 vs spt 2 (assert-layout-invalid) */
	{64, "_i + 64 * _rep", NULL, 2, "_i // 2 + 32 * _rep", "_i % 2", 4, 0},
	/* broadcast bit vs more threads holding distinct elements */
	{64, "_i % 32 + 32 * _rep", "_i // 32", 2, "_i", NULL, 1, 0},
};

START_TEST(equality)
{
	Arena A;
	Err err = {0};
	Fragment *F, *G;
	LinLayout a, b;

	arena_init(&A);
	F = mk(&A, pairs[_i].n, pairs[_i].t1, pairs[_i].r1, pairs[_i].s1, &err);
	G = mk(&A, pairs[_i].n, pairs[_i].t2, pairs[_i].r2, pairs[_i].s2, &err);
	ck_assert_msg(F && G, "%s", err.msg);
	ck_assert_int_eq(lin_from_fragment(&A, F, 32, &a, &err), 1);
	ck_assert_int_eq(lin_from_fragment(&A, G, 32, &b, &err), 1);
	ck_assert_int_eq(lin_equal(&a, &b), pairs[_i].equal);
	ck_assert_int_eq(lin_equal(&b, &a), pairs[_i].equal);
	ck_assert_int_eq(lin_equal(&a, &a), 1);
	arena_free(&A);
}
END_TEST

/* fragments that are not linear layouts, and why */
static const struct {
	int64_t n;
	const char *thread, *slot;
	int64_t rep;
	const char *why;
} rejects[] = {
	{48, "_i % 16", "_i // 16", 1, "registers per thread is not a power of two"},
	{32, "_i % 8", "(_i // 8 + _i % 8) % 4", 1, "not the XOR"},
	{16, "_i % 4", "3 - _i // 4", 1, "not element 0"},
	{24, "_i % 8", "_i // 8", 1, "not a power of two"},
};

START_TEST(rejections)
{
	Arena A;
	Err err = {0};
	Fragment *F;
	LinLayout L;

	arena_init(&A);
	F = mk(&A, rejects[_i].n, rejects[_i].thread, rejects[_i].rep, rejects[_i].slot, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(lin_from_fragment(&A, F, 32, &L, &err), 0);
	ck_assert_msg(strstr(err.msg, rejects[_i].why) != NULL, "%s", err.msg);
	arena_free(&A);
}
END_TEST

/* lin_apply on every (register, lane, warp) gives the element the fragment puts there */
START_TEST(apply_agrees)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {16, 16}, x[3], y[2], in[4] = {0}, co[2], slots;
	const char *fwd[1] = {"_i // 8 * 2 + _j % 2 + _j // 8 * 4"};
	Fragment *F;
	LinLayout L;

	arena_init(&A);
	F = frag_parse(&A, shape, 2, "_i % 8 * 4 + _j // 2 % 4", 1, fwd, 1, &err);
	ck_assert_msg(F != NULL, "%s", err.msg);
	ck_assert_int_eq(lin_from_fragment(&A, F, 8, &L, &err), 1);
	ck_assert_int_eq(L.nbits[0], 3);
	ck_assert_int_eq(L.nbits[1], 3);
	ck_assert_int_eq(L.nbits[2], 2);
	slots = F->out_shape[0];
	for (x[0] = 0; x[0] < 16; x[0]++)
		for (x[1] = 0; x[1] < 16; x[1]++) {
			x[2] = 0;
			ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
			in[0] = y[0];
			in[1] = y[1] % 8;
			in[2] = y[1] / 8;
			lin_apply(&L, in, co);
			ck_assert_int_eq(co[0], x[0]);
			ck_assert_int_eq(co[1], x[1]);
		}
	ck_assert_int_eq(slots, 8);
	arena_free(&A);
}
END_TEST

START_TEST(shared_and_nulls)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {8, 8}, off[64], i;
	const char *fwd[1] = {"_i * 8 + (_j ^ _i)"};
	Layout *S;
	LinLayout a, b;

	arena_init(&A);
	S = layout_parse(&A, shape, 2, fwd, 1, &err);
	ck_assert_msg(S != NULL, "%s", err.msg);
	ck_assert_int_eq(lin_from_shared(&A, S, &a, &err), 1);
	for (i = 0; i < 64; i++)
		off[i] = i / 8 * 8 + ((i % 8) ^ (i / 8));
	ck_assert_int_eq(lin_from_offsets(&A, off, shape, 2, &b, &err), 1);
	ck_assert_int_eq(lin_equal(&a, &b), 1);
	off[3] = off[4];
	ck_assert_int_eq(lin_from_offsets(&A, off, shape, 2, &b, &err), 0);
	ck_assert_int_eq(lin_from_shared(&A, NULL, &a, &err), -1);
	ck_assert_int_eq(lin_from_fragment(&A, S, 32, &a, &err), -1);
	ck_assert_int_eq(lin_from_table(&A, NULL, 1, 1, 32, shape, 2, &a, &err), -1);
	ck_assert_int_eq(lin_from_table(&A, off, 1, 1, 33, shape, 2, &a, &err), -1);
	ck_assert_int_eq(lin_equal(NULL, &a), 0);
	arena_free(&A);
}
END_TEST

Suite *
suite_linear(void)
{
	Suite *s = suite_create("linear");
	TCase *tc = tcase_create("linear");

	tcase_add_loop_test(tc, to_string, 0, (int)(sizeof texts / sizeof texts[0]));
	tcase_add_loop_test(tc, equality, 0, (int)(sizeof pairs / sizeof pairs[0]));
	tcase_add_loop_test(tc, rejections, 0, (int)(sizeof rejects / sizeof rejects[0]));
	tcase_add_test(tc, apply_agrees);
	tcase_add_test(tc, shared_and_nulls);
	suite_add_tcase(s, tc);
	return s;
}
