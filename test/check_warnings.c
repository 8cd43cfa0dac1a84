/*
 * check_warnings.c: the CUDA C tilec emits compiles without warnings. Every
 * sample for sm_80 and sm_90a: nvcc's front end with every warning an error
 * (-Werror all-warnings: #177-D unused variables, #550-D set but never used,
 * ...), NVRTC (its log must hold no warning), and one full nvcc build of the
 * gemm with the host compiler's -Wall -Wextra -Werror. (HIP C: check_emit_hip
 * builds every sample with clang-19 -Wall -Wextra -Werror.) nvcc is
 * $TILEC_NVCC, else /usr/local/cuda/bin/nvcc (the CUDA 13 toolkit is a
 * dependency of the project).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#include "tilec.h"
#include "tilec_tile.h"

#include "tests.h"

static const struct {
	const char *sample, *arch;
} cases[] = {
	{"copy", "sm_80"}, {"elementwise", "sm_80"}, {"transpose", "sm_80"}, {"softmax", "sm_80"},
	{"convert", "sm_80"}, {"gemm", "sm_80"}, {"gemm_bf16", "sm_80"}, {"gemm_strided", "sm_80"},
	{"copy", "sm_90a"}, {"elementwise", "sm_90a"}, {"transpose", "sm_90a"}, {"softmax", "sm_90a"},
	{"convert", "sm_90a"}, {"gemm", "sm_90a"}, {"gemm_bf16", "sm_90a"}, {"gemm_sm90", "sm_90a"},
	{"gemm_strided", "sm_90a"}, {"flash_fwd", "sm_80"}, {"flash_fwd", "sm_90a"}, {"splitk_gemm", "sm_80"},
	{"splitk_gemm", "sm_90a"},
};

/* every sample is in cases (gemm_sm90 is for sm_90a alone: wgmma) */
START_TEST(every_sample)
{
	DIR *d = opendir("samples");
	struct dirent *de;
	size_t i, n = sizeof cases / sizeof cases[0];
	int seen = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		int found = 0;

		if (l < 6 || strcmp(de->d_name + l - 5, ".tile"))
			continue;
		for (i = 0; i < n; i++)
			found += strlen(cases[i].sample) == l - 5 && !strncmp(cases[i].sample, de->d_name, l - 5);
		ck_assert_msg(found, "samples/%s is not in check_warnings.c's cases", de->d_name);
		seen++;
	}
	closedir(d);
	ck_assert_int_ge(seen, 10);
}
END_TEST

static const char *
nvcc(void)
{
	const char *e = getenv("TILEC_NVCC");

	return e && *e ? e : "/usr/local/cuda/bin/nvcc";
}

/* emit sample for arch into dir/k.cu */
static void
emit(const char *sample, const char *arch, const char *dir)
{
	char path[600], *src;
	tilec_options o;
	tilec_result r;
	size_t len;
	FILE *f;

	snprintf(path, sizeof path, "samples/%s.tile", sample);
	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	tilec_options_init(&o);
	o.arch = arch;
	o.dump = TILEC_DUMP_CUDA;
	o.filename = path;
	ck_assert_msg(tilec_compile(src, len, &o, &r) == TILEC_OK, "%s", r.diagnostics);
	snprintf(path, sizeof path, "%s/k.cu", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(r.output, f);
	fclose(f);
	tilec_result_free(&r);
	free(src);
}

/* run cmd (its output into dir/log); the log on failure */
static void
run(const char *cmd, const char *dir, const char *what)
{
	char full[3000], path[600], *log;
	int rc;

	snprintf(full, sizeof full, "%s > '%s/log' 2>&1", cmd, dir);
	rc = system(full);
	snprintf(path, sizeof path, "%s/log", dir);
	log = test_readfile(path, NULL);
	ck_assert_msg(rc == 0 && log && !strstr(log, "warning"), "%s: exit %d:\n%.3000s", what, rc,
		      log ? log : "(no log)");
	free(log);
}

START_TEST(nvcc_front_end)
{
	char dir[] = "/tmp/tilec-warn-XXXXXX", cmd[2000], what[200];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(access(nvcc(), X_OK) == 0, "%s not found (the CUDA 13 toolkit; or set TILEC_NVCC)", nvcc());
	emit(cases[_i].sample, cases[_i].arch, dir);
	snprintf(cmd, sizeof cmd, "'%s' -std=c++17 -gencode arch=compute_%s,code=%s -Werror all-warnings -Itemplates -cuda "
		 "'%s/k.cu' -o '%s/k.ii'", nvcc(), cases[_i].arch + 3, cases[_i].arch, dir, dir);
	snprintf(what, sizeof what, "nvcc %s %s", cases[_i].sample, cases[_i].arch);
	run(cmd, dir, what);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(nvcc_host_compiler)
{
	char dir[] = "/tmp/tilec-warn-XXXXXX", cmd[2000];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(access(nvcc(), X_OK) == 0, "%s not found (the CUDA 13 toolkit; or set TILEC_NVCC)", nvcc());
	emit("gemm", "sm_90a", dir);
	snprintf(cmd, sizeof cmd,
		 "'%s' -std=c++17 -gencode arch=compute_90a,code=sm_90a -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror -Itemplates "
		 "-c '%s/k.cu' -o '%s/k.o'", nvcc(), dir, dir);
	run(cmd, dir, "nvcc -c gemm sm_90a");
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(nvrtc_log)
{
	tilec_jit_options jo;
	tilec_jit *j = NULL;
	tilec_module *m = NULL;
	char path[300], *err = NULL;
	const char *log;
	int st;

	memset(&jo, 0, sizeof jo);
	jo.no_disk_cache = 1;
	ck_assert_int_eq(tilec_jit_create(&j, &jo, &err), TILEC_OK);
	snprintf(path, sizeof path, "samples/%s.tile", cases[_i].sample);
	st = tilec_jit_compile_tile_file(j, path, NULL, cases[_i].arch, &m, &err);
	log = m ? tilec_module_log(m) : "";
	ck_assert_msg(st == TILEC_OK, "%s %s: %s %s\n%.3000s", cases[_i].sample, cases[_i].arch, tilec_status_str(st),
		      err ? err : "", log);
	ck_assert_msg(!strstr(log, "warning"), "%s %s: NVRTC:\n%.3000s", cases[_i].sample, cases[_i].arch, log);
	tilec_module_free(m);
	tilec_jit_destroy(j);
}
END_TEST

Suite *
suite_warnings(void)
{
	Suite *s = suite_create("warnings");
	TCase *tc = tcase_create("warnings");
	int n = (int)(sizeof cases / sizeof cases[0]);

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, nvcc_front_end, 0, n);
	tcase_add_test(tc, nvcc_host_compiler);
	tcase_add_test(tc, every_sample);
	tcase_add_loop_test(tc, nvrtc_log, 0, n);
	suite_add_tcase(s, tc);
	return s;
}
