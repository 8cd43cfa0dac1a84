/*
 * jit_bench.c: timings of the JIT runtime (not a test): NVRTC compiles to
 * cubin, memory and disk cache hits, the hipRTC child process, and 8
 * compiles from 8 threads against the same 8 in one thread. Run by jit.sh.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tilec_jit.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return v[n / 2];
}

static const char tiny_fmt[] =
	"extern \"C\" __global__ void tiny(float *x) { x[threadIdx.x] += %d.0f; }\n";

static const char mma_fmt[] =
	"extern \"C\" __global__ void __launch_bounds__(32)\n"
	"mma_kernel(const uint4 *__restrict__ A, float4 *__restrict__ C) {\n"
	"  uint4 a = A[threadIdx.x];\n"
	"  float c0 = %d.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;\n"
	"  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \"\n"
	"    \"{%%0,%%1,%%2,%%3}, {%%4,%%5,%%6,%%7}, {%%8,%%9}, {%%0,%%1,%%2,%%3};\\n\"\n"
	"    : \"+f\"(c0), \"+f\"(c1), \"+f\"(c2), \"+f\"(c3)\n"
	"    : \"r\"(a.x), \"r\"(a.y), \"r\"(a.z), \"r\"(a.w), \"r\"(a.x), \"r\"(a.y));\n"
	"  C[threadIdx.x] = make_float4(c0, c1, c2, c3);\n"
	"}\n";

static const char mfma_fmt[] =
	"typedef _Float16 half4_t __attribute__((ext_vector_type(4)));\n"
	"typedef float float4_t __attribute__((ext_vector_type(4)));\n"
	"extern \"C\" __global__ void k(const half4_t *a, float4_t *c) {\n"
	"  float4_t acc = {%d.f, 0.f, 0.f, 0.f};\n"
	"  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[threadIdx.x], a[threadIdx.x + 64], acc, 0, 0, 0);\n"
	"  c[threadIdx.x] = acc;\n"
	"}\n";

static int seq;

static double
compile_ms(tilec_jit *j, const char *fmt, const char *arch, int hip)
{
	char src[2048];
	tilec_module *m = NULL;
	char *err = NULL;
	double t0, t1;
	int r;

	snprintf(src, sizeof src, fmt, ++seq);
	t0 = now();
	r = hip ? tilec_jit_compile_hip(j, src, arch, NULL, 0, &m, &err)
	        : tilec_jit_compile_cuda(j, src, arch, NULL, 0, &m, &err);
	t1 = now();
	if (r) {
		fprintf(stderr, "compile failed: %s\n", err);
		exit(1);
	}
	tilec_module_free(m);
	return (t1 - t0) * 1e3;
}

typedef struct {
	tilec_jit *j;
	int k;
} Arg;

static void *
worker(void *p)
{
	Arg *a = p;
	char src[256];
	tilec_module *m = NULL;

	snprintf(src, sizeof src, tiny_fmt, a->k);
	if (tilec_jit_compile_cuda(a->j, src, "sm_80", NULL, 0, &m, NULL))
		exit(1);
	tilec_module_free(m);
	return NULL;
}

int
main(void)
{
	tilec_jit_options o;
	tilec_jit *j;
	double v[64], t0;
	char dir[] = "/tmp/tilec-bench-XXXXXX", cmd[64], src[256];
	tilec_module *m;
	pthread_t th[8];
	Arg args[8];
	int i, n = 7;

	if (!mkdtemp(dir))
		return 1;
	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	tilec_jit_create(&j, &o, NULL);
	printf("first NVRTC compile in the process (dlopen + tiny, sm_80): %.1f ms\n",
	       compile_ms(j, tiny_fmt, "sm_80", 0));
	for (i = 0; i < n; i++)
		v[i] = compile_ms(j, tiny_fmt, "sm_80", 0);
	printf("NVRTC tiny kernel -> sm_80 cubin: median %.1f ms (%d runs)\n", median(v, n), n);
	for (i = 0; i < n; i++)
		v[i] = compile_ms(j, mma_fmt, "sm_90a", 0);
	printf("NVRTC mma.sync kernel -> sm_90a cubin: median %.1f ms\n", median(v, n));
	for (i = 0; i < n; i++)
		v[i] = compile_ms(j, mma_fmt, "compute_90a", 0);
	printf("NVRTC mma.sync kernel -> compute_90a PTX: median %.1f ms\n", median(v, n));

	/* memory hits */
	snprintf(src, sizeof src, tiny_fmt, 424242);
	tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &m, NULL);
	tilec_module_free(m);
	for (i = 0; i < 64; i++) {
		t0 = now();
		tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &m, NULL);
		v[i] = (now() - t0) * 1e6;
		tilec_module_free(m);
	}
	printf("memory cache hit: median %.1f us\n", median(v, 64));
	tilec_jit_destroy(j);

	/* disk hits: a fresh instance each time */
	o.no_disk_cache = 0;
	o.cache_dir = dir;
	tilec_jit_create(&j, &o, NULL);
	tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &m, NULL);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	for (i = 0; i < 32; i++) {
		tilec_jit_create(&j, &o, NULL);
		t0 = now();
		tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &m, NULL);
		v[i] = (now() - t0) * 1e6;
		if (tilec_module_cache_source(m) != TILEC_CACHE_DISK)
			return 1;
		tilec_module_free(m);
		tilec_jit_destroy(j);
	}
	printf("disk cache hit (key, read, checksum): median %.1f us\n", median(v, 32));

	/* 8 threads vs 1 */
	o.no_disk_cache = 1;
	tilec_jit_create(&j, &o, NULL);
	t0 = now();
	for (i = 0; i < 8; i++) {
		args[i] = (Arg){j, 1000 + i};
		worker(&args[i]);
	}
	printf("8 distinct tiny compiles, 1 thread: %.0f ms\n", (now() - t0) * 1e3);
	t0 = now();
	for (i = 0; i < 8; i++) {
		args[i] = (Arg){j, 2000 + i};
		pthread_create(&th[i], NULL, worker, &args[i]);
	}
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	printf("8 distinct tiny compiles, 8 threads: %.0f ms\n", (now() - t0) * 1e3);
	tilec_jit_destroy(j);

	/* hipRTC in a child process */
	tilec_jit_create(&j, &o, NULL);
	printf("first hipRTC compile (server start + compile, gfx90a MFMA): %.0f ms\n",
	       compile_ms(j, mfma_fmt, "gfx90a", 1));
	n = 5;
	for (i = 0; i < n; i++)
		v[i] = compile_ms(j, mfma_fmt, "gfx90a", 1);
	printf("hipRTC gfx90a MFMA kernel (server: fork + compile): median %.0f ms\n", median(v, n));
	t0 = now();
	if (tilec_jit_compile_hip(j, src, "gfx942", NULL, 0, &m, NULL) != TILEC_ERR_ARCH)
		return 1;
	printf("hipRTC gfx942 rejected (arch check): %.3f ms\n", (now() - t0) * 1e3);
	tilec_jit_destroy(j);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}
