/*
 * runner.c: the one test runner. It runs every suite listed in
 * suites.h (one per test/check_*.c) and turns the failure count into
 * the exit status. CK_RUN_SUITE=name runs one suite.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests.h"

static Suite *(*const suites[])(void) = {
#define SUITE(n) suite_##n,
#include "suites.h"
#undef SUITE
};

char *
test_readfile(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			char *t;

			cap = cap ? cap * 2 : 8192;
			t = realloc(s, cap + 1);
			if (!t) {
				free(s);
				fclose(f);
				return NULL;
			}
			s = t;
		}
		r = fread(s + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	s[n] = 0;
	if (len)
		*len = n;
	return s;
}

static int
writefile(const char *path, const char *s)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	fputs(s, f);
	return fclose(f);
}

int
test_golden(const char *golden, const char *got, char *msg, size_t msgsz)
{
	char *want;
	const char *base = strrchr(golden, '/');
	char out[512];

	if (getenv("UPDATE_GOLDEN") && *getenv("UPDATE_GOLDEN") == '1') {
		if (writefile(golden, got)) {
			snprintf(msg, msgsz, "cannot write %s", golden);
			return -1;
		}
		return 0;
	}
	want = test_readfile(golden, NULL);
	if (want && !strcmp(want, got)) {
		free(want);
		return 0;
	}
	mkdir("build", 0755);
	mkdir("build/golden", 0755);
	snprintf(out, sizeof out, "build/golden/%s", base ? base + 1 : golden);
	writefile(out, got);
	if (!want)
		snprintf(msg, msgsz, "missing golden %s (got written to %s; UPDATE_GOLDEN=1 records it)",
			 golden, out);
	else
		snprintf(msg, msgsz, "mismatch: diff -u %s %s", golden, out);
	free(want);
	return -1;
}

int
main(void)
{
	SRunner *sr = NULL;
	size_t i;
	int failed;

	/* the CPU execution builds emitted code with unused variables as errors (nvcc's #177) */
	setenv("TILEC_CPU_STRICT", "1", 0);
	for (i = 0; i < sizeof suites / sizeof suites[0]; i++) {
		if (!sr)
			sr = srunner_create(suites[i]());
		else
			srunner_add_suite(sr, suites[i]());
	}
	if (!sr)
		return 1;
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
