/*
 * check_layout_cute.c: tilec Layouts and Fragments converted to CuTe form
 * (layout_cute.c over cute_conv.c), and the round trip: the CuTe layout
 * evaluated at every point equals the layout it came from.
 */
#include <string.h>

#include "layout_cute.h"
#include "tests.h"

static const struct {
	int nin;
	int64_t shape[3];
	int nout;
	const char *fwd[3];
	LayoutCuteForm form;
	const char *want; /* NULL: not representable */
} lay_cases[] = {
	{2, {8, 16}, 1, {"_i * 16 + _j"}, LC_FLAT, "(_8,_16):(_16,_1)"},
	{2, {8, 16}, 1, {"_j * 8 + _i"}, LC_FLAT, "(_8,_16):(_1,_8)"},
	{1, {64}, 1, {"_i % 8 * 16 + _i // 8"}, LC_FLAT, "((_8,_8)):((_16,_1))"},
	/* two outputs serialize row-major: [_i // 8, _i % 8 * 4 + _j] over out shape [4, 32] */
	{2, {32, 4}, 2, {"_i // 8", "_i % 8 * 4 + _j"}, LC_FLAT, "(_32,_4):(_4,_1)"},
	{2, {8, 16}, 2, {"_j", "_i"}, LC_HIER, "(_8,_16):(_1@1,_1@0)"},
	{2, {8, 8}, 1, {"(_i ^ _j) + _i * 8"}, LC_FLAT, NULL},
	{2, {8, 64}, 1, {"_i * 64 + (_j // 8 ^ _i) * 8 + _j % 8"}, LC_COMPOSED,
	 "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"},
	{2, {8, 64}, 1, {"_i * 64 + _j"}, LC_COMPOSED, "Sw<0,0,0> o _0 o (_8,_64):(_64,_1)"},
};

START_TEST(layout_cute_table)
{
	Arena a;
	Err e = {0};
	Layout *L;
	CuteComposed c;
	Buf b;
	int r;

	arena_init(&a);
	buf_init(&b);
	L = layout_parse(&a, lay_cases[_i].shape, lay_cases[_i].nin, lay_cases[_i].fwd,
			 lay_cases[_i].nout, &e);
	ck_assert_msg(L != NULL, "%s", e.msg);
	r = layout_to_cute(&a, L, lay_cases[_i].form, &c, &e);
	if (!lay_cases[_i].want) {
		ck_assert_msg(r == 0, "expected not representable, got %d (%s)", r, e.msg);
		ck_assert_str_ne(e.msg, "");
	} else {
		ck_assert_msg(r == 1, "conversion failed: %d %s", r, e.msg);
		if (lay_cases[_i].form == LC_COMPOSED)
			cute_print_composed(&b, &c);
		else
			cute_print_layout(&b, c.l);
		ck_assert_str_eq(buf_str(&b), lay_cases[_i].want);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* the mma.sync m16n8k16 accumulator: value(i, j, rep) = thread * 4 + slot */
START_TEST(frag_cute_mma_c)
{
	Arena a;
	Err e = {0};
	Fragment *F;
	CuteLayout l;
	Buf b;
	int64_t x[3], y[2], v;

	arena_init(&a);
	buf_init(&b);
	F = mma_sync_fragment(&a, MMA_C, 16, &e);
	ck_assert_msg(F != NULL, "%s", e.msg);
	ck_assert_int_eq(frag_to_cute(&a, F, &l, &e), 1);
	cute_print_layout(&b, l);
	ck_assert_str_eq(buf_str(&b), "((_8,_2),(_2,_4),_1):((_16,_2),(_1,_4),_0)");
	for (x[0] = 0; x[0] < 16; x[0]++)
		for (x[1] = 0; x[1] < 8; x[1]++) {
			x[2] = 0;
			ck_assert_int_eq(layout_eval(F, x, y, &e), 0);
			/* column-major: mode 0 (dim 0) fastest */
			ck_assert_int_eq(cute_eval(l, x[0] + 16 * x[1], &v, &e), 0);
			ck_assert_int_eq(v, y[1] * 4 + y[0]);
		}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

START_TEST(frag_cute_replicated)
{
	Arena a;
	Err e = {0};
	Fragment *F;
	CuteLayout l;
	Buf b;

	arena_init(&a);
	buf_init(&b);
	/* 64 elements over 128 threads, threads 64..127 duplicate 0..63 */
	F = frag_parse(&a, (int64_t[]){64}, 1, "_i + _rep * 64", 2, NULL, 0, &e);
	ck_assert_msg(F != NULL, "%s", e.msg);
	ck_assert_int_eq(frag_to_cute(&a, F, &l, &e), 1);
	cute_print_layout(&b, l);
	/* (coord, rep) -> thread * 1 + slot 0 */
	ck_assert_str_eq(buf_str(&b), "(_64,_2):(_1,_64)");
	/* a plain layout is refused by frag_to_cute and vice versa */
	ck_assert_int_eq(layout_to_cute(&a, F, LC_FLAT, &(CuteComposed){0}, &e), -1);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

Suite *
suite_layout_cute(void)
{
	Suite *s = suite_create("layout_cute");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, layout_cute_table, 0, countof(lay_cases));
	tcase_add_test(tc, frag_cute_mma_c);
	tcase_add_test(tc, frag_cute_replicated);
	suite_add_tcase(s, tc);
	return s;
}
