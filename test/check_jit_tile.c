/*
 * check_jit_tile.c: tile source -> JIT module (runtime/jit_tile.c). Every
 * sample that emits compiles through NVRTC to a cubin for sm_80 with its
 * launch contract readable; tile errors and bad arguments give a status and
 * a module whose log holds the diagnostics. No GPU is needed.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tilec_tile.h"

static tilec_jit *jit;

static void
setup(void)
{
	tilec_jit_options o;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	ck_assert_msg(tilec_jit_create(&jit, &o, &err) == TILEC_OK, "%s", err ? err : "");
}

static void
teardown(void)
{
	tilec_jit_destroy(jit);
	jit = NULL;
}

static const struct {
	const char *sample, *kernel, *arch;
	unsigned threads;
	size_t smem;
} samples[] = {
	{"copy", "copy2d", "sm_80", 128, 16384},
	{"elementwise", "elementwise", "sm_80", 128, 0},
	{"gemm", "gemm", "sm_80", 128, 49152},
	{"gemm", "gemm", "sm_90", 128, 49152},
	{"gemm_bf16", "gemm_bf16", "sm_80", 256, 65536},
	{"transpose", "transpose", "sm_80", 256, 4592},
};

START_TEST(sample_cubin)
{
	char path[256], *err = NULL;
	tilec_module *m = NULL;
	unsigned threads = 0;
	size_t smem = 1, binsz = 0;
	int rc;

	snprintf(path, sizeof path, "samples/%s.tile", samples[_i].sample);
	rc = tilec_jit_compile_tile_file(jit, path, NULL, samples[_i].arch, &m, &err);
	ck_assert_msg(rc == TILEC_OK, "%s: %s %s\n%s", path, tilec_status_str(rc), err ? err : "",
		      m ? tilec_module_log(m) : "");
	ck_assert(tilec_module_ok(m));
	ck_assert_int_eq(tilec_module_binary_kind(m), TILEC_BIN_CUBIN);
	ck_assert_ptr_nonnull(tilec_module_binary(m, &binsz));
	ck_assert_uint_gt(binsz, 0);
	ck_assert(tilec_module_from_tile(m));
	ck_assert_str_eq(tilec_module_arch(m), samples[_i].arch);
	ck_assert_msg(strstr(tilec_module_source(m), "#include \"tilec_cuda.h\"") != NULL, "not CUDA C");
	ck_assert_int_eq(tilec_module_launch_info(m, samples[_i].kernel, &threads, &smem), TILEC_OK);
	ck_assert_uint_eq(threads, samples[_i].threads);
	ck_assert_uint_eq(smem, samples[_i].smem);
	ck_assert_int_eq(tilec_module_launch_info(m, "nosuchkernel", &threads, &smem),
			 TILEC_ERR_NOTFOUND);
	tilec_module_free(m);
	free(err);
}
END_TEST

/* tile errors: status COMPILE, a module without binary, diagnostics in its log */
static const struct {
	const char *src, *filename, *diag;
} bad[] = {
	{"kernel k(A: f16[M]) grid(1) threads(32) { copy(B[0], A[0]); }\n", "bad.tile",
	 "bad.tile:1:"},
	{"kernel k(", NULL, "<input>:1:"},
	{"", NULL, "error"},
};

START_TEST(tile_error)
{
	tilec_module *m = NULL;
	char *err = NULL;
	int rc;

	if (bad[_i].filename) {
		FILE *f = fopen("build/check_jit_tile_bad.tile", "w");

		ck_assert_ptr_nonnull(f);
		fputs(bad[_i].src, f);
		fclose(f);
		rc = tilec_jit_compile_tile_file(jit, "build/check_jit_tile_bad.tile", NULL, "sm_80", &m,
						 &err);
		remove("build/check_jit_tile_bad.tile");
	} else {
		rc = tilec_jit_compile_tile(jit, bad[_i].src, strlen(bad[_i].src), NULL, "sm_80", &m, &err);
	}
	ck_assert_msg(rc == TILEC_ERR_COMPILE, "got %s", tilec_status_str(rc));
	ck_assert_ptr_nonnull(m);
	ck_assert(!tilec_module_ok(m));
	ck_assert(!tilec_module_from_tile(m));
	ck_assert_msg(strstr(tilec_module_log(m), bad[_i].filename ? "check_jit_tile_bad.tile:1:"
								  : bad[_i].diag) != NULL,
		      "log: %s", tilec_module_log(m));
	ck_assert_msg(strstr(tilec_module_log(m), "error") != NULL, "log: %s", tilec_module_log(m));
	ck_assert_str_eq(tilec_module_source(m), bad[_i].src);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "error") != NULL, "%s", err);
	ck_assert_int_eq(tilec_module_launch_info(m, "k", NULL, NULL), TILEC_ERR_NOTFOUND);
	tilec_module_free(m);
	free(err);
}
END_TEST

START_TEST(bad_args)
{
	tilec_module *m = (tilec_module *)&m;
	char *err = NULL;

	ck_assert_int_eq(tilec_jit_compile_tile(NULL, "x", 1, NULL, "sm_80", &m, &err), TILEC_ERR_ARG);
	ck_assert_ptr_null(m);
	free(err);
	err = NULL;
	ck_assert_int_eq(tilec_jit_compile_tile(jit, NULL, 0, NULL, "sm_80", &m, &err), TILEC_ERR_ARG);
	free(err);
	err = NULL;
	ck_assert_int_eq(tilec_jit_compile_tile(jit, "x", 1, NULL, "sm_80", NULL, &err), TILEC_ERR_ARG);
	free(err);
	err = NULL;
	ck_assert_int_eq(tilec_jit_compile_tile_file(jit, "no/such/file.tile", NULL, "sm_80", &m, &err),
			 TILEC_ERR_IO);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(err);
	free(err);
	ck_assert_int_eq(tilec_jit_compile_tile_file(jit, NULL, NULL, "sm_80", &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_module_launch_info(NULL, "k", NULL, NULL), TILEC_ERR_ARG);
}
END_TEST

Suite *
suite_jit_tile(void)
{
	Suite *s = suite_create("jit_tile");
	TCase *tc = tcase_create("jit_tile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, sample_cubin, 0, sizeof samples / sizeof samples[0]);
	tcase_add_loop_test(tc, tile_error, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(tc, bad_args);
	suite_add_tcase(s, tc);
	return s;
}
