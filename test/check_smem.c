/*
 * check_smem.c: shared-memory planning over a table of kernels: the layout
 * source and swizzle per buffer, pipeline stages, alignment, offsets with
 * reuse across disjoint lifetimes, totals and the >48 KB opt-in; the plan's
 * placement is checked for overlaps of live buffers by brute force.
 */
#include <stdio.h>
#include <string.h>

#include "ast.h"
#include "lower.h"
#include "sema.h"
#include "tests.h"

static IrProgram *
compile(Arena *a, const char *src)
{
	Diags d;
	Node *top;

	diags_init(&d, a);
	top = parse_program(a, &d, src, strlen(src), "t.tile");
	return d.nerr ? NULL : sema_program(a, &d, top, NULL, 0, "t.tile");
}

#define GEMM(BM, BN, BK, ST) \
	"kernel g(A: f16[M, K], B: f16[K, N], C: f32[M, N]) grid(1) threads(128) {\n" \
	"  shared As: f16[" BM ", " BK "];\n  shared Bs: f16[" BK ", " BN "];\n" \
	"  local acc: f32[" BM ", " BN "];\n  clear(acc);\n" \
	"  for ko in pipeline(cdiv(K, " BK "), stages = " ST ") {\n" \
	"    copy(A[0, ko * " BK "], As);\n    copy(B[ko * " BK ", 0], Bs);\n" \
	"    gemm(As, Bs, acc);\n  }\n  copy(acc, C[0, 0]);\n}\n"

static const struct {
	const char *src, *arch, *want;
} cases[] = {
	{GEMM("128", "128", "32", "3"), "sm_80",
	 "As: gemm 64B, 3 stages, 24576 bytes at 0 (align 512), live [2, 5]\n"
	 "Bs: gemm 128B, 3 stages, 24576 bytes at 24576 (align 1024), live [2, 5]\n"
	 "total 49152 bytes, align 1024\n"},
	{GEMM("128", "256", "64", "4"), "sm_90",
	 "As: gemm 128B, 4 stages, 65536 bytes at 0 (align 1024), live [2, 5]\n"
	 "Bs: gemm 128B, 4 stages, 131072 bytes at 65536 (align 1024), live [2, 5]\n"
	 "total 196608 bytes, align 1024, dynamic opt-in\n"},
	/* two staging buffers one after the other share their bytes */
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(1) threads(128) {\n"
	 "  shared s: f16[64, 64];\n  shared t: f32[32, 32];\n"
	 "  copy(A[0, 0], s);\n  copy(s, B[0, 0]);\n"
	 "  copy(A[0, 0], t);\n  copy(t, B[0, 0]);\n}\n", "sm_80",
	 "s: default 128B, 1 stage, 8192 bytes at 0 (align 1024), live [1, 2]\n"
	 "t: default 128B, 1 stage, 4096 bytes at 0 (align 1024), live [3, 4]\n"
	 "total 8192 bytes, align 1024\n"},
	/* overlapping lifetimes: t goes after s; a loop extends lifetimes */
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(1) threads(128) {\n"
	 "  shared s: f16[8, 24];\n  shared t: f16[8, 8];\n"
	 "  for i in range(4) {\n    copy(A[0, 0], s);\n    copy(A[0, 0], t);\n  }\n"
	 "  copy(t, B[0, 0]);\n}\n", "sm_80",
	 "s: default none, 1 stage, 384 bytes at 0 (align 16), live [1, 3]\n"
	 "t: default none, 1 stage, 128 bytes at 384 (align 16), live [1, 4]\n"
	 "total 512 bytes, align 16\n"},
	/* annotate_layout picks the layout until inference sets one */
	{"kernel c(A: f32[M, N], B: f32[M, N]) grid(1) threads(128) {\n"
	 "  shared s: f32[32, 32];\n  shared u: f16[16, 64];\n  annotate_layout(s, padded);\n"
	 "  annotate_layout(u, swizzle(64));\n  copy(A[0, 0], s);\n  copy(s, B[0, 0]);\n"
	 "  copy(A[0, 0], u);\n  copy(u, B[0, 0]);\n}\n", "sm_80",
	 "s: annotated none, 1 stage, 4592 bytes at 0 (align 16), live [3, 4]\n"
	 "u: annotated 64B, 1 stage, 2048 bytes at 0 (align 512), live [5, 6]\n"
	 "total 4592 bytes, align 512\n"},
};

START_TEST(plan_table)
{
	Arena a;
	IrProgram *p;
	const Target *t;
	SmemPlan sp;
	Err e = {0};
	Buf b;
	int i, j;

	arena_init(&a);
	p = compile(&a, cases[_i].src);
	ck_assert_ptr_nonnull(p);
	t = target_lookup(TGT_CUDA, cases[_i].arch, &e);
	ck_assert_msg(smem_plan(&a, t, &p->kernels[0], &sp, &e) == 0, "%s", e.msg);
	buf_init(&b);
	smem_plan_dump(&b, &p->kernels[0], &sp);
	ck_assert_str_eq(buf_str(&b), cases[_i].want);
	/* brute force: live buffers never share bytes; offsets aligned */
	for (i = 0; i < sp.n; i++) {
		ck_assert_int_eq(sp.bufs[i].offset % sp.bufs[i].align, 0);
		ck_assert_int_le(sp.bufs[i].offset + sp.bufs[i].bytes, sp.total);
		for (j = 0; j < i; j++) {
			const SmemBuf *x = &sp.bufs[i], *y = &sp.bufs[j];

			if (x->first <= y->last && y->first <= x->last)
				ck_assert(x->offset >= y->offset + y->bytes || y->offset >= x->offset + x->bytes);
		}
	}
	ck_assert_ptr_eq(smem_find(&sp, sp.bufs[0].buf), &sp.bufs[0]);
	ck_assert_ptr_null(smem_find(&sp, -1));
	buf_free(&b);
	arena_free(&a);
}
END_TEST

START_TEST(too_big)
{
	Arena a;
	IrProgram *p;
	const Target *t;
	SmemPlan sp;
	Err e = {0};

	arena_init(&a);
	p = compile(&a, GEMM("256", "256", "64", "4"));
	ck_assert_ptr_nonnull(p);
	t = target_lookup(TGT_CUDA, "sm_80", &e);
	ck_assert_int_eq(smem_plan(&a, t, &p->kernels[0], &sp, &e), -1);
	ck_assert_msg(strstr(e.msg, "needs 262144 bytes of shared memory (As 131072 (4 stages), Bs "
			     "131072 (4 stages)); sm_80 allows") != NULL, "%s", e.msg);
	ck_assert_int_eq(e.loc.line, p->kernels[0].loc.line);
	ck_assert_int_gt(e.loc.line, 0);
	ck_assert_int_eq(smem_plan(&a, t, NULL, &sp, &e), -1);
	arena_free(&a);
}
END_TEST

Suite *
suite_smem(void)
{
	Suite *s = suite_create("smem");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, plan_table, 0, countof(cases));
	tcase_add_test(tc, too_big);
	suite_add_tcase(s, tc);
	return s;
}
