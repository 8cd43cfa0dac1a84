/*
 * tile_bench.c: the JIT path from tile source without a GPU (the arch is
 * given): DSL -> CUDA in process, a cold JIT into an empty cache directory,
 * a disk-cache hit from tile source (a new instance) and a memo hit (the
 * same instance), per sample, sm_90a. Run by tile.sh (make bench).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec_tile.h"

char *bench_gen(const char *src, size_t len, const char *arch, int runs, double *median_ms,
                char *diag, size_t diagsz); /* gpu_bench_gen.c */

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

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return v[n / 2];
}

static tilec_jit *
newjit(const char *dir)
{
	tilec_jit_options o;
	tilec_jit *j;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	if (tilec_jit_create(&j, &o, &err)) {
		fprintf(stderr, "tilec_jit_create: %s\n", err);
		exit(1);
	}
	return j;
}

/* compile path for arch; its cache source; exit on error */
static int
tile(tilec_jit *j, const char *path, const char *arch, double *ms)
{
	tilec_module *m = NULL;
	char *err = NULL;
	double t0 = now_ms();
	int rc = tilec_jit_compile_tile_file(j, path, NULL, arch, &m, &err), from;

	*ms = now_ms() - t0;
	if (rc) {
		fprintf(stderr, "%s: %s\n%s\n", path, err, m ? tilec_module_log(m) : "");
		exit(1);
	}
	from = tilec_module_cache_source(m);
	tilec_module_free(m);
	return from;
}

int
main(void)
{
	static const char *const samples[] = {"gemm", "gemm_sm90", "copy", "elementwise"};
	const char *arch = "sm_90a";
	char dir[] = "/tmp/tilec_tile_bench_XXXXXX", sub[64], path[128], diag[1024], cmd[96], *src;
	double gen, cold, d[9], m[9], w;
	tilec_jit *j, *mj;
	size_t i, len;
	int k;
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* NVRTC warm-up (dlopen) */
	snprintf(sub, sizeof sub, "%s/warm", dir);
	j = newjit(sub);
	tile(j, "samples/copy.tile", "sm_80", &w);
	tilec_jit_destroy(j);
	printf("%-12s %12s %10s %12s %12s\n", "sample", "DSL->CUDA", "cold JIT", "disk hit",
	       "memo hit");
	for (i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		snprintf(path, sizeof path, "samples/%s.tile", samples[i]);
		if (!(f = fopen(path, "rb"))) {
			fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
			return 1;
		}
		src = malloc(1 << 16);
		len = src ? fread(src, 1, (1 << 16) - 1, f) : 0;
		fclose(f);
		if (!src || !bench_gen(src, len, arch, 11, &gen, diag, sizeof diag)) {
			fprintf(stderr, "%s: %s\n", path, diag);
			return 1;
		}
		free(src);
		snprintf(sub, sizeof sub, "%s/%s", dir, samples[i]);
		j = newjit(sub);
		if (tile(j, path, arch, &cold) != TILEC_CACHE_NONE)
			return 1;
		tilec_jit_destroy(j);
		for (k = 0; k < 9; k++) {
			j = newjit(sub);
			if (tile(j, path, arch, &d[k]) != TILEC_CACHE_DISK)
				return 1;
			tilec_jit_destroy(j);
		}
		mj = newjit(sub);
		tile(mj, path, arch, &w);
		for (k = 0; k < 9; k++)
			if (tile(mj, path, arch, &m[k]) != TILEC_CACHE_MEM)
				return 1;
		tilec_jit_destroy(mj);
		printf("%-12s %9.3f ms %7.1f ms %9.3f ms %9.4f ms\n", samples[i], gen, cold,
		       median(d, 9), median(m, 9));
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) != 0;
}
