/* check_swizzle.c: shared-memory swizzles: equivalence with CuTe
 * Swizzle<o,4,3> on byte offsets within a panel for 1/2/4/8-byte elements,
 * encodings and alignment, the choice ladder, detection and merging,
 * closed-form XOR inverses, bad input, and goldens of the printed forms. */
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "tests.h"

static const struct {
	int mode, eb;
	int64_t rows, cols;
} eqv_cases[] = {
	{1, 1, 16, 32},  {2, 1, 16, 64},  {3, 1, 32, 128}, {3, 1, 8, 256},
	{1, 2, 16, 16},  {2, 2, 32, 32},  {3, 2, 64, 64},  {3, 2, 16, 128},
	{1, 4, 8, 8},    {2, 4, 16, 16},  {3, 4, 32, 32},  {3, 4, 24, 64},
	{1, 8, 8, 4},    {2, 8, 16, 8},   {3, 8, 16, 16},  {1, 2, 4, 32},
};

/* independent model: the tile is cut into column panels W*16 bytes wide,
 * stored one after another; inside a panel the byte address u = row * W*16
 * + column byte is permuted by CuTe Swizzle<B,4,3>: u ^ ((u >> 7) & mask) << 4 */
START_TEST(cute_equivalence)
{
	Arena A;
	Err err = {0};
	int mode = eqv_cases[_i].mode, eb = eqv_cases[_i].eb;
	int64_t shape[2] = {eqv_cases[_i].rows, eqv_cases[_i].cols}, W = (int64_t)1 << mode;
	int64_t panel_elems = W * 16 / eb, i, j, x[2], y[3];
	Layout *L;

	arena_init(&A);
	L = swizzle_layout(&A, (SwizzleMode)mode, shape, 2, eb, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	ck_assert_int_eq(L->nout, 3);
	for (i = 0; i < shape[0]; i++)
		for (j = 0; j < shape[1]; j++) {
			int64_t u = i * W * 16 + (j % panel_elems) * eb, panel = j / panel_elems;
			int64_t want = panel * shape[0] * W * 16 + (u ^ (((u >> 7) & (W - 1)) << 4));
			int64_t lin;

			x[0] = i;
			x[1] = j;
			ck_assert_int_eq(layout_eval(L, x, y, &err), 0);
			lin = (y[0] * L->out_shape[1] + y[1]) * L->out_shape[2] + y[2];
			ck_assert_msg(lin * eb == want, "(%lld, %lld): layout byte %lld, CuTe %lld",
				      (long long)i, (long long)j, (long long)(lin * eb), (long long)want);
		}
	ck_assert_int_eq(layout_check_injective(L, &err), 0);
	ck_assert_msg(layout_inverse(&A, L, 1, &err) != NULL, "%s", err.msg);
	arena_free(&A);
}
END_TEST

START_TEST(encodings)
{
	static const struct {
		SwizzleMode m;
		const char *name;
		int64_t bytes, align;
		int wgmma, tc05;
	} t[] = {
		{SWZ_NONE, "none", 16, 128, 0, 8},
		{SWZ_32B, "32B", 32, 256, 3, 6},
		{SWZ_64B, "64B", 64, 512, 2, 4},
		{SWZ_128B, "128B", 128, 1024, 1, 2},
	};
	size_t k;

	for (k = 0; k < countof(t); k++) {
		ck_assert_str_eq(swizzle_name(t[k].m), t[k].name);
		ck_assert_int_eq(swizzle_bytes(t[k].m), t[k].bytes);
		ck_assert_int_eq(swizzle_alignment(t[k].m), t[k].align);
		ck_assert_int_eq(swizzle_wgmma_layout_type(t[k].m), t[k].wgmma);
		ck_assert_int_eq(swizzle_tcgen05_layout_type(t[k].m), t[k].tc05);
	}
}
END_TEST

static const struct {
	int64_t rows, cols;
	int eb, k_inner, pad;
	const char *want;       /* kind/mode or error text */
} choose_cases[] = {
	{64, 64, 2, 1, 1, "swizzle 128B"},
	{64, 32, 2, 1, 1, "swizzle 64B"},
	{64, 16, 2, 1, 1, "swizzle 32B"},
	{64, 8, 2, 1, 1, "padded"},
	{64, 128, 1, 1, 1, "swizzle 128B"},
	{64, 128, 1, 0, 1, "padded"},
	{32, 32, 4, 1, 1, "swizzle 128B"},
	{32, 32, 8, 1, 1, "f64 k-inner"},
	{32, 32, 8, 0, 1, "f64 k-outer"},
	{32, 8, 8, 1, 1, "padded"},
	{12, 64, 2, 1, 1, "padded"},
	{64, 64, 2, 1, 0, "swizzle 128B"},
	{12, 64, 2, 1, 0, "linear"},
	{64, 8, 2, 1, 0, "linear"},
	{64, 4, 2, 1, 0, "error: not a multiple of 8 elements"},
	{64, 32, 8, 1, 0, "swizzle 32B"},
	{64, 2, 8, 1, 0, "linear"},
	{64, 64, 3, 1, 1, "error: element size 3 bytes"},
};

START_TEST(choose_table)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {choose_cases[_i].rows, choose_cases[_i].cols};
	SmemLayout out;
	const char *want = choose_cases[_i].want;
	char got[64];
	int r;

	arena_init(&A);
	r = swizzle_choose(&A, shape, 2, choose_cases[_i].eb, choose_cases[_i].k_inner,
			   choose_cases[_i].pad, &out, &err);
	if (!strncmp(want, "error: ", 7)) {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(err.msg, want + 7), "got: %s", err.msg);
	} else {
		ck_assert_msg(r == 0, "%s", err.msg);
		ck_assert_ptr_nonnull(out.layout);
		switch (out.kind) {
		case SMEM_SWIZZLE: snprintf(got, sizeof got, "swizzle %s", swizzle_name(out.mode)); break;
		case SMEM_PADDED: snprintf(got, sizeof got, "padded"); break;
		case SMEM_LINEAR: snprintf(got, sizeof got, "linear"); break;
		case SMEM_F64_KINNER: snprintf(got, sizeof got, "f64 k-inner"); break;
		case SMEM_F64_KOUTER: snprintf(got, sizeof got, "f64 k-outer"); break;
		}
		ck_assert_str_eq(got, want);
		ck_assert_int_eq(layout_check_injective(out.layout, &err), 0);
	}
	arena_free(&A);
}
END_TEST

START_TEST(detect_and_merge)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {64, 64};
	Layout *s32, *s128, *lin, *m, *hand;
	SwizzleMode mode;
	/* TileLang's arithmetic xor4x4 form of the 64B swizzle for fp16 */
	const char *f[] = {"_j // 32", "_i // 8",
			   "_j % 8 + ((_j // 8 % 4 // 2 + _i % 8 // 2 // 2) % 2 * 2 + (_j // 8 % 2 + "
			   "_i % 8 // 2 % 2) % 2) * 8 + _i % 8 * 32"};

	arena_init(&A);
	s32 = swizzle_layout(&A, SWZ_32B, shape, 2, 2, &err);
	s128 = swizzle_layout(&A, SWZ_128B, shape, 2, 2, &err);
	lin = swizzle_linear(&A, shape, 2, &err);
	ck_assert_int_eq(swizzle_detect(s32, 2, &mode), 0);
	ck_assert_int_eq(mode, SWZ_32B);
	ck_assert_int_eq(swizzle_detect(s128, 2, &mode), 0);
	ck_assert_int_eq(mode, SWZ_128B);
	ck_assert_int_eq(swizzle_detect(lin, 2, &mode), 0);
	ck_assert_int_eq(mode, SWZ_NONE);
	ck_assert_int_eq(swizzle_detect(swizzle_padded(&A, shape, 2, 2, &err), 2, &mode), -1);
	/* detection compares mappings: the arithmetic xor form of a 64B swizzle is found */
	hand = layout_parse(&A, shape, 2, f, 3, &err);
	ck_assert_msg(hand != NULL, "%s", err.msg);
	ck_assert_int_eq(swizzle_detect(hand, 2, &mode), 0);
	ck_assert_int_eq(mode, SWZ_64B);
	/* the 128B layout of fp16 is a different map for fp32 elements */
	ck_assert_int_eq(swizzle_detect(s128, 4, &mode), -1);
	m = swizzle_merge(&A, s128, s32, 2, &err);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(layout_equal(m, s32, &err), 1);
	ck_assert_ptr_null(swizzle_merge(&A, s128, lin, 2, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "recognised swizzles"));
	arena_free(&A);
}
END_TEST

static const struct {
	int mode, eb;
	int64_t rows, cols;
	const char *msg;
} bad_cases[] = {
	{3, 2, 64, 32, "128B swizzle needs the continuous extent (32) to be a multiple of 64"},
	{2, 4, 12, 64, "64B swizzle needs the row count (12) to be a multiple of 8"},
	{1, 2, 4, 32, NULL},
	{2, 2, 4, 32, "row count (4)"},
	{3, 5, 64, 64, "element size 5 bytes"},
	{7, 2, 64, 64, "unknown mode 7"},
	{3, 2, 0, 64, "not positive"},
};

START_TEST(bad_input)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {bad_cases[_i].rows, bad_cases[_i].cols};
	Layout *L;

	arena_init(&A);
	L = swizzle_layout(&A, (SwizzleMode)bad_cases[_i].mode, shape, 2, bad_cases[_i].eb, &err);
	if (!bad_cases[_i].msg) {
		ck_assert_msg(L != NULL, "%s", err.msg);
	} else {
		ck_assert_ptr_null(L);
		ck_assert_msg(strstr(err.msg, bad_cases[_i].msg), "got: %s", err.msg);
	}
	arena_free(&A);
}
END_TEST

/* goldens: printed forms of the builtin shared layouts and their inverses */
START_TEST(golden_printed)
{
	static const struct {
		int eb;
		int64_t rows, cols;
	} shapes[] = {{1, 32, 128}, {2, 64, 64}, {4, 32, 32}, {8, 16, 16}};
	Arena A;
	Err err = {0};
	Buf b;
	char msg[512];
	size_t k;
	int m;

	arena_init(&A);
	buf_init(&b);
	for (k = 0; k < countof(shapes); k++) {
		int64_t shape[2] = {shapes[k].rows, shapes[k].cols};

		for (m = SWZ_32B; m <= SWZ_128B; m++) {
			Layout *L = swizzle_layout(&A, (SwizzleMode)m, shape, 2, shapes[k].eb, &err);

			ck_assert_msg(L != NULL, "%s", err.msg);
			buf_printf(&b, "# %s swizzle, %lldx%lld, %d-byte elements (base alignment %lld B)\n",
				   swizzle_name((SwizzleMode)m), (long long)shape[0], (long long)shape[1],
				   shapes[k].eb, (long long)swizzle_alignment((SwizzleMode)m));
			layout_print(&b, L);
			buf_puts(&b, "\ninverse: ");
			layout_print(&b, layout_inverse(&A, L, 0, &err));
			buf_puts(&b, "\n");
		}
	}
	{
		int64_t shape[2] = {16, 16};

		buf_puts(&b, "# fp64 k-inner, 16x16\n");
		layout_print(&b, swizzle_f64(&A, shape, 2, 1, &err));
		buf_puts(&b, "\n# fp64 k-outer, 16x16\n");
		layout_print(&b, swizzle_f64(&A, shape, 2, 0, &err));
		buf_puts(&b, "\n# padded, 16x64 fp16\n");
		layout_print(&b, swizzle_padded(&A, shape, 2, 2, &err));
		buf_puts(&b, "\n");
	}
	ck_assert_msg(!test_golden("test/golden/layout/swizzle.txt", buf_str(&b), msg, sizeof msg), "%s",
		      msg);
	buf_free(&b);
	arena_free(&A);
}
END_TEST

Suite *
suite_swizzle(void)
{
	Suite *s = suite_create("swizzle");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, cute_equivalence, 0, countof(eqv_cases));
	tcase_add_test(tc, encodings);
	tcase_add_loop_test(tc, choose_table, 0, countof(choose_cases));
	tcase_add_test(tc, detect_and_merge);
	tcase_add_loop_test(tc, bad_input, 0, countof(bad_cases));
	tcase_add_test(tc, golden_printed);
	suite_add_tcase(s, tc);
	return s;
}
