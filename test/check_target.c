/* check_target.c: the target table answers what the passes ask. */
#include <string.h>
#include "target.h"
#include "tests.h"

static const struct {
	TargetKind kind;
	const char *arch;
	int warp, mma, f16vec, f32vec;
} tcases[] = {
	{TGT_CUDA, "sm_80", 32, TMMA_MMA_SYNC, 8, 4},
	{TGT_CUDA, "sm_90a", 32, TMMA_WGMMA, 8, 4},
	{TGT_HIP, "gfx90a", 64, TMMA_MFMA, 8, 4},
	{TGT_HIP, "gfx942", 64, TMMA_MFMA, 8, 4},
	{TGT_HIP, "gfx1100", 32, TMMA_WMMA, 8, 4},
};

START_TEST(target_table)
{
	Err e = {0};
	const Target *t = target_lookup(tcases[_i].kind, tcases[_i].arch, &e);

	ck_assert_msg(t != NULL, "%s", e.msg);
	ck_assert_int_eq(t->warp_size, tcases[_i].warp);
	ck_assert_int_eq(t->mma, tcases[_i].mma);
	ck_assert_int_eq(target_vector_elems(t, 2, 0), tcases[_i].f16vec);
	ck_assert_int_eq(target_vector_elems(t, 4, 0), tcases[_i].f32vec);
	ck_assert_int_eq(target_vector_elems(t, 1, 0), 16);
	ck_assert_int_eq(t->segment_bytes, 128);
}
END_TEST

START_TEST(target_unknown)
{
	Err e = {0};

	ck_assert_ptr_null(target_lookup(TGT_CUDA, "sm_70", &e));
	ck_assert_ptr_nonnull(strstr(e.msg, "unknown cuda architecture 'sm_70'"));
	ck_assert_ptr_null(target_lookup(TGT_HIP, "sm_80", &e));
	ck_assert_ptr_null(target_lookup(TGT_CUDA, NULL, &e));
	ck_assert_str_eq(target_default_arch(TGT_HIP), "gfx942");
}
END_TEST

Suite *
suite_target(void)
{
	Suite *s = suite_create("target");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, target_table, 0, countof(tcases));
	tcase_add_test(tc, target_unknown);
	suite_add_tcase(s, tc);
	return s;
}
