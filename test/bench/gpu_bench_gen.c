/*
 * gpu_bench_gen.c: the tilec.h side of gpu_bench.c (tilec.h and tilec_jit.h
 * cannot meet in one file): tile source to CUDA C in process, timed over
 * several runs (the DSL -> CUDA figure of the JIT path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec.h"

char *bench_gen(const char *src, size_t len, const char *arch, int runs, double *median_ms,
                char *diag, size_t diagsz);
const char *bench_version(void);

const char *
bench_version(void)
{
	return tilec_version();
}

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* the CUDA C of src for arch (malloc'd), the median of runs compiles in *median_ms;
 * NULL with the diagnostics in diag on error */
char *
bench_gen(const char *src, size_t len, const char *arch, int runs, double *median_ms, char *diag,
          size_t diagsz)
{
	tilec_options o;
	tilec_result r;
	double t[64];
	char *out = NULL;
	int i;

	if (runs < 1)
		runs = 1;
	if (runs > 64)
		runs = 64;
	tilec_options_init(&o);
	o.arch = arch;
	o.dump = TILEC_DUMP_CUDA;
	for (i = 0; i < runs; i++) {
		double t0 = now_ms();

		tilec_compile(src, len, &o, &r);
		t[i] = now_ms() - t0;
		if (r.status != TILEC_OK) {
			snprintf(diag, diagsz, "%s", r.diagnostics);
			tilec_result_free(&r);
			free(out);
			return NULL;
		}
		if (!out)
			out = strdup(r.output);
		tilec_result_free(&r);
	}
	qsort(t, (size_t)runs, sizeof t[0], cmpd);
	*median_ms = t[runs / 2];
	return out;
}
