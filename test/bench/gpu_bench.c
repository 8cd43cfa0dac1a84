/*
 * gpu_bench.c: the GPU benchmark of tilec (run by test/bench/gpu.sh on an NVIDIA GPU).
 * Each sample is JIT-compiled from its tile source through the runtime and launched
 * through the launcher header tilec wrote for it (tilec_launch_<kernel>); random
 * inputs, several input sets, CUDA events (warm-up, then the median of >= 20 runs),
 * results checked against cuBLAS (gemm) or exactly (copy, elementwise), and timed
 * against cublasGemmEx (f16 in, f32 compute) and a device-to-device cudaMemcpy in the
 * same run. Also the JIT path (DSL -> CUDA, NVRTC, cold JIT, disk and memory cache
 * hits) and Triton's cold compile (triton_cold.py). Prints a table, writes RESULTS.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "tilec_tile.h"

/* the launcher headers tilec wrote (gpu.sh: tilec --header) */
#include "copy.h"
#include "elementwise.h"
#include "gemm.h"
#include "gemm_sm90.h"

const char *tilec_template(const char *name); /* libtilec: the embedded tilec_cuda.h */
char *bench_gen(const char *src, size_t len, const char *arch, int runs, double *median_ms,
                char *diag, size_t diagsz); /* gpu_bench_gen.c */
const char *bench_version(void);

enum { SETS = 2, MAXRUNS = 200 };

static int runs = 30, warmup = 5, quick;
static int failures;
static FILE *md;      /* RESULTS.md */
static char arch[32]; /* the device's, e.g. sm_90a */

#define CK(x) ck_((x), #x, __LINE__)
static void
ck_(cudaError_t e, const char *what, int line)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "gpu_bench.c:%d: %s: %s\n", line, what, cudaGetErrorString(e));
		exit(1);
	}
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

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* both to stdout and RESULTS.md */
static void
out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (md) {
		va_start(ap, fmt);
		vfprintf(md, fmt, ap);
		va_end(ap);
	}
}

/* ---- f16 on the host ------------------------------------------------------------ */

static uint16_t
f2h(float f) /* round to nearest even, subnormals and overflow included */
{
	uint32_t u, sign, m;
	int e;

	memcpy(&u, &f, 4);
	sign = (u >> 16) & 0x8000u;
	e = (int)((u >> 23) & 0xff);
	m = u & 0x7fffffu;
	if (e == 255)
		return (uint16_t)(sign | 0x7c00u | (m ? 0x200u : 0));
	e = e - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		uint32_t full, shift, h, rest, half;

		if (e < -10)
			return (uint16_t)sign;
		full = m | 0x800000u;
		shift = (uint32_t)(14 - e);
		h = full >> shift;
		rest = full & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	{
		uint32_t h = sign | ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1fffu;

		if (rest > 0x1000u || (rest == 0x1000u && (h & 1)))
			h++; /* a carry into the exponent is right, up to infinity */
		return (uint16_t)h;
	}
}

static float
h2f(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu, u;
	float f;

	if (e == 0) {
		f = ldexpf((float)m, -24);
		return sign ? -f : f;
	}
	u = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e - 15 + 127) << 23) | (m << 13);
	memcpy(&f, &u, 4);
	return f;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;

static float
frand(void) /* [-1, 1) */
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (float)((rs >> 40) / 16777216.0 * 2 - 1);
}

static uint16_t *
randhalf(size_t n)
{
	uint16_t *p = malloc(n * 2);
	size_t i;

	if (!p) {
		fprintf(stderr, "out of host memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++)
		p[i] = f2h(frand());
	return p;
}

static void *
dalloc(size_t bytes)
{
	void *p;

	CK(cudaMalloc(&p, bytes));
	return p;
}

/* ---- timing: back-to-back launches with an event between each ------------------- */

typedef int (*LaunchFn)(void *ctx, int set);

/* median ms of one call of fn over `runs` runs after `warmup`, rotating the input sets */
static double
timeit(LaunchFn fn, void *ctx)
{
	cudaEvent_t ev[MAXRUNS + 1];
	double t[MAXRUNS];
	float ms;
	int i;

	for (i = 0; i < warmup; i++)
		if (fn(ctx, i % SETS))
			return -1;
	for (i = 0; i <= runs; i++)
		CK(cudaEventCreate(&ev[i]));
	CK(cudaDeviceSynchronize());
	CK(cudaEventRecord(ev[0], 0));
	for (i = 0; i < runs; i++) {
		if (fn(ctx, i % SETS))
			return -1;
		CK(cudaEventRecord(ev[i + 1], 0));
	}
	CK(cudaEventSynchronize(ev[runs]));
	for (i = 0; i < runs; i++) {
		CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
		t[i] = ms;
	}
	for (i = 0; i <= runs; i++)
		CK(cudaEventDestroy(ev[i]));
	return median(t, runs);
}

/* ---- the JIT path ------------------------------------------------------------------ */

typedef struct Sample {
	const char *name, *file, *kernel;
	unsigned hthreads;   /* the header's TILEC_<K>_THREADS */
	size_t hsmem;        /* the header's TILEC_<K>_SMEM_BYTES */
	tilec_module *m;
	CUfunction fn;
	/* figures */
	double gen_ms, nvrtc_ms, cold_ms, disk_tile_ms, mem_tile_ms, disk_cuda_us, mem_cuda_us;
	int ok;
} Sample;

static Sample samples[] = {
	{.name = "gemm", .file = "samples/gemm.tile", .kernel = "gemm",
	 .hthreads = TILEC_GEMM_THREADS, .hsmem = TILEC_GEMM_SMEM_BYTES},
	{.name = "gemm_sm90", .file = "samples/gemm_sm90.tile", .kernel = "gemm_sm90",
	 .hthreads = TILEC_GEMM_SM90_THREADS, .hsmem = TILEC_GEMM_SM90_SMEM_BYTES},
	{.name = "copy", .file = "samples/copy.tile", .kernel = "copy2d",
	 .hthreads = TILEC_COPY2D_THREADS, .hsmem = TILEC_COPY2D_SMEM_BYTES},
	{.name = "elementwise", .file = "samples/elementwise.tile", .kernel = "elementwise",
	 .hthreads = TILEC_ELEMENTWISE_THREADS, .hsmem = TILEC_ELEMENTWISE_SMEM_BYTES},
};

static char *
readfile(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		fclose(f);
		return NULL;
	}
	fclose(f);
	s[n] = 0;
	*len = (size_t)n;
	return s;
}

static tilec_jit *
newjit(const char *dir, int nodisk)
{
	tilec_jit_options o;
	tilec_jit *j;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	o.no_disk_cache = nodisk;
	if (tilec_jit_create(&j, &o, &err)) {
		fprintf(stderr, "tilec_jit_create: %s\n", err);
		exit(1);
	}
	return j;
}

/* DSL -> CUDA, NVRTC, cold JIT, cache hits of one sample; loads the module into jit */
static void
jitpath(Sample *s, tilec_jit *jit, const char *cachedir)
{
	tilec_header h = {"tilec_cuda.h", tilec_template("tilec_cuda.h")};
	tilec_module *m = NULL;
	tilec_jit *j;
	char diag[2048], *err = NULL, *src, *cuda;
	double t[9];
	size_t len, smem = 0;
	unsigned threads = 0;
	int i, rc;

	src = readfile(s->file, &len);
	if (!src) {
		fprintf(stderr, "cannot read %s (run from the repository root)\n", s->file);
		exit(1);
	}
	cuda = bench_gen(src, len, arch, 21, &s->gen_ms, diag, sizeof diag);
	if (!cuda) {
		fprintf(stderr, "%s: tilec: %s\n", s->file, diag);
		exit(1);
	}
	/* NVRTC alone: a fresh memory-only instance per run (no cache can answer) */
	for (i = 0; i < 3; i++) {
		j = newjit(NULL, 1);
		double t0 = now_ms();
		rc = tilec_jit_compile_cuda_ex(j, cuda, arch, NULL, 0, &h, 1, &m, &err);
		t[i] = now_ms() - t0;
		if (rc) {
			fprintf(stderr, "%s: NVRTC: %s\n%s\n", s->name, err, m ? tilec_module_log(m) : "");
			exit(1);
		}
		tilec_module_free(m);
		tilec_jit_destroy(j);
	}
	s->nvrtc_ms = median(t, 3);
	/* cold JIT from tile source: generate + NVRTC + disk write into an empty directory */
	j = newjit(cachedir, 0);
	{
		double t0 = now_ms();
		rc = tilec_jit_compile_tile(j, src, len, NULL, arch, &m, &err);
		s->cold_ms = now_ms() - t0;
	}
	if (rc || tilec_module_cache_source(m) != TILEC_CACHE_NONE) {
		fprintf(stderr, "%s: cold JIT: %s (cache source %d)\n", s->name, rc ? err : "not cold",
			m ? tilec_module_cache_source(m) : -1);
		exit(1);
	}
	tilec_module_free(m);
	tilec_jit_destroy(j);
	/* disk hits: a new instance on the same directory each time; memory hits: one instance */
	for (i = 0; i < 9; i++) {
		j = newjit(cachedir, 0);
		double t0 = now_ms();
		rc = tilec_jit_compile_tile(j, src, len, NULL, arch, &m, &err);
		t[i] = now_ms() - t0;
		if (rc || tilec_module_cache_source(m) != TILEC_CACHE_DISK) {
			fprintf(stderr, "%s: expected a disk hit\n", s->name);
			exit(1);
		}
		tilec_module_free(m);
		tilec_jit_destroy(j);
	}
	s->disk_tile_ms = median(t, 9);
	for (i = 0; i < 9; i++) {
		j = newjit(cachedir, 0);
		double t0 = now_ms();
		rc = tilec_jit_compile_cuda_ex(j, cuda, arch, NULL, 0, &h, 1, &m, &err);
		t[i] = (now_ms() - t0) * 1e3;
		if (rc || tilec_module_cache_source(m) != TILEC_CACHE_DISK) {
			fprintf(stderr, "%s: expected a CUDA-level disk hit\n", s->name);
			exit(1);
		}
		tilec_module_free(m);
		tilec_jit_destroy(j);
	}
	s->disk_cuda_us = median(t, 9);
	/* memory hits on the long-lived instance: one compile first to fill it */
	if (tilec_jit_compile_tile(jit, src, len, NULL, arch, &m, &err)) {
		fprintf(stderr, "%s: %s\n", s->name, err);
		exit(1);
	}
	tilec_module_free(m);
	for (i = 0; i < 9; i++) {
		double t0 = now_ms();
		rc = tilec_jit_compile_tile(jit, src, len, NULL, arch, &m, &err);
		t[i] = now_ms() - t0;
		if (rc) {
			fprintf(stderr, "%s: %s\n", s->name, err);
			exit(1);
		}
		if (i < 8)
			tilec_module_free(m);
	}
	s->mem_tile_ms = median(t, 9);
	s->m = m; /* the last one (a memory hit) stays loaded */
	for (i = 0; i < 9; i++) {
		tilec_module *m2;
		double t0 = now_ms();
		rc = tilec_jit_compile_cuda_ex(jit, cuda, arch, NULL, 0, &h, 1, &m2, &err);
		t[i] = (now_ms() - t0) * 1e3;
		if (rc || tilec_module_cache_source(m2) != TILEC_CACHE_MEM) {
			fprintf(stderr, "%s: expected a memory hit\n", s->name);
			exit(1);
		}
		tilec_module_free(m2);
	}
	s->mem_cuda_us = median(t, 9);
	/* the header and the module agree on the launch contract */
	if (tilec_module_launch_info(s->m, s->kernel, &threads, &smem) || threads != s->hthreads ||
	    smem != s->hsmem) {
		fprintf(stderr, "%s: the module's launch contract (%u threads, %zu bytes) differs from "
			"the header's (%u, %zu): was the header made for %s?\n", s->name, threads, smem,
			s->hthreads, s->hsmem, arch);
		exit(1);
	}
	if (tilec_module_kernel(s->m, s->kernel, (void **)&s->fn, &err)) {
		fprintf(stderr, "%s: %s\n", s->name, err);
		exit(1);
	}
	free(cuda);
	free(src);
}

/* ---- gemm: tilec vs cublasGemmEx ------------------------------------------------ */

typedef struct Gemm {
	Sample *s;
	int M, N, K;
	uint16_t *A[SETS], *B[SETS], *C;
	cublasHandle_t h;
} Gemm;

static int
gemm_tilec(void *p, int set)
{
	Gemm *g = p;
	CUresult r;

	if (!strcmp(g->s->kernel, "gemm_sm90"))
		r = tilec_launch_gemm_sm90(g->s->fn, 0, (CUdeviceptr)g->A[set], (CUdeviceptr)g->B[set],
					   (CUdeviceptr)g->C, g->M, g->K, g->N);
	else
		r = tilec_launch_gemm(g->s->fn, 0, (CUdeviceptr)g->A[set], (CUdeviceptr)g->B[set],
				      (CUdeviceptr)g->C, g->M, g->K, g->N);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "tilec_launch_%s: CUresult %d\n", g->s->kernel, (int)r);
		return -1;
	}
	return 0;
}

static int
gemm_cublas(void *p, int set)
{
	Gemm *g = p;
	float alpha = 1, beta = 0;
	cublasStatus_t st;

	/* row-major C = A B is column-major C^T = B^T A^T */
	st = cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->N, g->M, g->K, &alpha, g->B[set],
			  CUDA_R_16F, g->N, g->A[set], CUDA_R_16F, g->K, &beta, g->C, CUDA_R_16F, g->N,
			  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
	if (st != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "cublasGemmEx: status %d\n", (int)st);
		return -1;
	}
	return 0;
}

static void
bench_gemm(Sample *s, cublasHandle_t h, int M, int N, int K)
{
	Gemm g = {.s = s, .M = M, .N = N, .K = K, .h = h};
	size_t sa = (size_t)M * K, sb = (size_t)K * N, sc = (size_t)M * N, i, nonfinite = 0;
	uint16_t *hc, *hr;
	double num = 0, den = 0, rel, tt, tb, fl = 2.0 * M * N * K;
	int set, ok;

	for (set = 0; set < SETS; set++) {
		uint16_t *ha = randhalf(sa), *hb = randhalf(sb);

		g.A[set] = dalloc(sa * 2);
		g.B[set] = dalloc(sb * 2);
		CK(cudaMemcpy(g.A[set], ha, sa * 2, cudaMemcpyHostToDevice));
		CK(cudaMemcpy(g.B[set], hb, sb * 2, cudaMemcpyHostToDevice));
		free(ha);
		free(hb);
	}
	g.C = dalloc(sc * 2);
	hc = malloc(sc * 2);
	hr = malloc(sc * 2);
	if (!hc || !hr) {
		fprintf(stderr, "out of host memory\n");
		exit(1);
	}
	/* check on the last set: tilec (output poisoned with NaN first) against cuBLAS */
	CK(cudaMemset(g.C, 0xff, sc * 2));
	ok = gemm_tilec(&g, SETS - 1) == 0;
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hc, g.C, sc * 2, cudaMemcpyDeviceToHost));
	ok &= gemm_cublas(&g, SETS - 1) == 0;
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hr, g.C, sc * 2, cudaMemcpyDeviceToHost));
	for (i = 0; i < sc; i++) {
		double x = h2f(hc[i]), y = h2f(hr[i]);

		if (!isfinite(x)) {
			nonfinite++;
			continue;
		}
		num += (x - y) * (x - y);
		den += y * y;
	}
	rel = sqrt(num / (den > 0 ? den : 1));
	ok &= nonfinite == 0 && rel < 1e-2;
	failures += !ok;
	tt = ok ? timeit(gemm_tilec, &g) : -1;
	tb = timeit(gemm_cublas, &g);
	{
		/* issue 15's targets: 1.0x cuBLAS from 4096^3, 0.9x at 2048^3; none for the skinny shape */
		double target = M >= 4096 && N >= 4096 ? 1.0 : M >= 2048 && N >= 2048 ? 0.9 : 0;
		char tg[16];

		snprintf(tg, sizeof tg, target ? ">= %.1f" : "-", target);
		out("| %s | %dx%dx%d | %.3f ms, %.1f TFLOP/s | cuBLAS %.3f ms, %.1f TFLOP/s | **%.3f** | "
		    "%s | %s | %s: rel. err. %.1e vs cuBLAS, %zu non-finite |\n",
		    s->name, M, N, K, tt, fl / tt / 1e9, tb, fl / tb / 1e9, tb / tt, tg,
		    !target ? "-" : tt > 0 && tb / tt >= target ? "met" : "**missed**", ok ? "ok" : "**FAIL**", rel,
		    nonfinite);
	}
	fflush(stdout);
	for (set = 0; set < SETS; set++) {
		cudaFree(g.A[set]);
		cudaFree(g.B[set]);
	}
	cudaFree(g.C);
	free(hc);
	free(hr);
}

/* ---- copy / elementwise vs cudaMemcpy D2D ---------------------------------------- */

typedef struct Mem {
	Sample *s;
	int M, N;
	size_t bytes;         /* of one matrix */
	void *A[SETS], *B[SETS], *C;
	float alpha;
} Mem;

static int
copy_tilec(void *p, int set)
{
	Mem *m = p;

	return tilec_launch_copy2d(m->s->fn, 0, (CUdeviceptr)m->A[set], (CUdeviceptr)m->C, m->M, m->N)
	       != CUDA_SUCCESS;
}

static int
ew_tilec(void *p, int set)
{
	Mem *m = p;

	return tilec_launch_elementwise(m->s->fn, 0, (CUdeviceptr)m->A[set], (CUdeviceptr)m->B[set],
					(CUdeviceptr)m->C, m->alpha, m->M, m->N) != CUDA_SUCCESS;
}

static int
memcpy_d2d(void *p, int set)
{
	Mem *m = p;

	return cudaMemcpyAsync(m->C, m->A[set], m->bytes, cudaMemcpyDeviceToDevice, 0) != cudaSuccess;
}

static void
bench_mem(Sample *s, int M, int N, int ew)
{
	Mem m = {.s = s, .M = M, .N = N, .bytes = (size_t)M * N * 2, .alpha = 0.75f};
	size_t n = (size_t)M * N, i, wrong = 0, maxulp = 0;
	uint16_t *ha[SETS], *hb[SETS], *hc;
	double tt, tm, bwt, bwm;
	int set, ok;

	for (set = 0; set < SETS; set++) {
		ha[set] = randhalf(n);
		hb[set] = ew ? randhalf(n) : NULL; /* copy reads A only */
		m.A[set] = dalloc(m.bytes);
		CK(cudaMemcpy(m.A[set], ha[set], m.bytes, cudaMemcpyHostToDevice));
		if (ew) {
			m.B[set] = dalloc(m.bytes);
			CK(cudaMemcpy(m.B[set], hb[set], m.bytes, cudaMemcpyHostToDevice));
		}
	}
	m.C = dalloc(m.bytes);
	hc = malloc(m.bytes);
	if (!hc) {
		fprintf(stderr, "out of host memory\n");
		exit(1);
	}
	CK(cudaMemset(m.C, 0xff, m.bytes));
	ok = (ew ? ew_tilec : copy_tilec)(&m, SETS - 1) == 0;
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hc, m.C, m.bytes, cudaMemcpyDeviceToHost));
	for (i = 0; i < n; i++) {
		uint16_t want;

		if (!ew) {
			want = ha[SETS - 1][i];
		} else {
			float v = h2f(ha[SETS - 1][i]) * m.alpha + h2f(hb[SETS - 1][i]);

			want = f2h(v > 0 ? v : 0);
		}
		if (hc[i] != want && ((hc[i] | want) & 0x7fff)) { /* +0 and -0 are equal */
			/* the kernel may fuse the multiply-add: allow one ulp for elementwise */
			size_t d = (size_t)abs((int)hc[i] - (int)want);

			wrong++;
			maxulp = d > maxulp ? d : maxulp;
		}
	}
	ok &= ew ? maxulp <= 1 : wrong == 0;
	failures += !ok;
	tt = ok ? timeit(ew ? ew_tilec : copy_tilec, &m) : -1;
	tm = timeit(memcpy_d2d, &m);
	/* bytes moved: copy reads and writes one matrix, elementwise reads two and writes one */
	bwt = (ew ? 3.0 : 2.0) * m.bytes / tt / 1e6;
	bwm = 2.0 * m.bytes / tm / 1e6;
	out("| %s | %dx%d f16 | %.3f ms, %.0f GB/s | cudaMemcpy D2D %.3f ms, %.0f GB/s | **%.3f** | "
	    ">= 0.85 | %s | %s: %zu of %zu elements differ%s |\n",
	    s->name, M, N, tt, bwt, tm, bwm, bwt / bwm, tt > 0 && bwt / bwm >= 0.85 ? "met" :
	    "**missed**", ok ? "ok" : "**FAIL**", wrong, n, ew ? (maxulp ? " by 1 ulp" : ", exact")
	    : ", exact copy");
	fflush(stdout);
	for (set = 0; set < SETS; set++) {
		cudaFree(m.A[set]);
		cudaFree(m.B[set]);
		free(ha[set]);
		free(hb[set]);
	}
	cudaFree(m.C);
	free(hc);
}

/* ---- Triton's cold compile (triton_cold.py) --------------------------------------- */

static void
triton(const char *script)
{
	char cmd[1024], line[512];
	FILE *p;
	int any = 0;

	snprintf(cmd, sizeof cmd, "${PYTHON:-python3} %s 2>&1", script);
	p = popen(cmd, "r");
	if (!p) {
		out("| Triton | could not run %s | | |\n", script);
		return;
	}
	while (fgets(line, sizeof line, p)) {
		char what[64], note[256] = "";
		double ms;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "TRITON %63s %lf ms %255[^\n]", what, &ms, note) >= 2) {
			out("| Triton cold compile, %s | %.1f ms | < 300 ms (tilec's target) | %s |\n", what,
			    ms, note);
			any = 1;
		} else if (!strncmp(line, "TRITON unavailable", 18)) {
			out("| Triton | %s | | |\n", line + 7);
			any = 1;
		} else {
			printf("  triton_cold.py: %s\n", line);
		}
	}
	if (pclose(p) != 0 && !any)
		out("| Triton | triton_cold.py failed (see the log) | | |\n");
	else if (!any)
		out("| Triton | no figures from triton_cold.py | | |\n");
}

/* ---- main -------------------------------------------------------------------------- */

static void
usage(void)
{
	fputs("usage: gpu_bench [--quick] [--runs=N] [--results=FILE] [--triton=SCRIPT|--no-triton]\n"
	      "Run from the repository root (it reads samples/*.tile). --quick: small sizes only.\n",
	      stderr);
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *results = "test/bench/RESULTS.md", *tscript = "test/bench/triton_cold.py";
	char name[256], drv[64] = "?", cachedir[] = "/tmp/tilec_bench_XXXXXX", *err = NULL, cmd[128];
	struct cudaDeviceProp prop;
	cublasHandle_t h;
	tilec_jit *jit;
	int i, dv = 0, rv = 0, nmaj = 0, nmin = 0, cublasv = 0;
	time_t now = time(NULL);
	FILE *p;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strncmp(argv[i], "--runs=", 7))
			runs = atoi(argv[i] + 7);
		else if (!strncmp(argv[i], "--results=", 10))
			results = argv[i] + 10;
		else if (!strncmp(argv[i], "--triton=", 9))
			tscript = argv[i] + 9;
		else if (!strcmp(argv[i], "--no-triton"))
			tscript = NULL;
		else
			usage();
	}
	if (runs < 20 || runs > MAXRUNS) {
		fprintf(stderr, "gpu_bench: --runs must be 20 to %d\n", MAXRUNS);
		return 2;
	}
	if (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess) {
		fprintf(stderr, "gpu_bench: no CUDA device\n");
		return 77;
	}
	CK(cudaGetDeviceProperties(&prop, 0));
	cudaDriverGetVersion(&dv);
	cudaRuntimeGetVersion(&rv);
	if ((p = popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null", "r"))) {
		if (fgets(drv, sizeof drv, p))
			drv[strcspn(drv, "\n")] = 0;
		pclose(p);
	}
	if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
		fprintf(stderr, "gpu_bench: cublasCreate failed\n");
		return 1;
	}
	cublasGetVersion(h, &cublasv);
	if (!mkdtemp(cachedir)) {
		perror("mkdtemp");
		return 1;
	}
	jit = newjit(cachedir, 0);
	if (tilec_dev_arch(jit, arch, sizeof arch, &err) || tilec_nvrtc_version(jit, &nmaj, &nmin, &err)) {
		fprintf(stderr, "gpu_bench: %s\n", err);
		return 1;
	}
	snprintf(name, sizeof name, "%s", prop.name);
	md = fopen(results, "w");
	if (!md)
		fprintf(stderr, "gpu_bench: cannot write %s; the table goes to stdout only\n", results);
	{
		char date[64];

		strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
		out("# tilec GPU benchmark (test/bench/gpu_bench.c, written by test/bench/gpu.sh)\n\n");
		out("%s; %s (%d SMs, %s); driver %s (CUDA %d.%d); runtime %d.%d; cuBLAS %d; NVRTC %d.%d;"
		    " tilec %s.\n\n", date, name, prop.multiProcessorCount, arch, drv, dv / 1000,
		    dv % 1000 / 10, rv / 1000, rv % 1000 / 10, cublasv, nmaj, nmin, bench_version());
		out("All figures below are from this one run. Kernel times: CUDA events between "
		    "back-to-back launches, %d warm-up launches, median of %d, %d input sets "
		    "(random) used in turn.%s\n\n", warmup, runs, SETS,
		    quick ? " **--quick: small sizes, not the benchmark sizes.**" : "");
	}
	/* a warm-up NVRTC compile: the figures below exclude dlopen */
	{
		tilec_jit *j = newjit(NULL, 1);
		tilec_module *m = NULL;

		if (tilec_jit_compile_cuda(j, "extern \"C\" __global__ void w(int *x) { *x = 1; }", arch,
					   NULL, 0, &m, &err)) {
			fprintf(stderr, "gpu_bench: NVRTC: %s\n", err);
			return 1;
		}
		tilec_module_free(m);
		tilec_jit_destroy(j);
	}
	out("## JIT path (per sample, %s)\n\n", arch);
	out("| sample | DSL -> CUDA (ms, median of 21) | NVRTC (ms, median of 3) | cold JIT: generate + "
	    "NVRTC + disk write (ms) | disk-cache hit from tile source (ms) | memory-cache hit from "
	    "tile source (ms) | disk-cache hit of the CUDA C (us) | memory-cache hit of the CUDA C (us) |\n");
	out("|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < (int)(sizeof samples / sizeof samples[0]); i++) {
		Sample *s = &samples[i];
		char sub[sizeof cachedir + 32];

		snprintf(sub, sizeof sub, "%s/%s", cachedir, s->name);
		jitpath(s, jit, sub);
		out("| %s | %.3f | %.1f | %.1f | %.3f | %.3f | %.1f | %.1f |\n", s->name, s->gen_ms,
		    s->nvrtc_ms, s->cold_ms, s->disk_tile_ms, s->mem_tile_ms, s->disk_cuda_us,
		    s->mem_cuda_us);
		fflush(stdout);
	}
	out("\nTargets: DSL -> CUDA of the gemm sample < 2 ms: %s (%.3f ms); cold JIT < 300 ms: %s "
	    "(gemm %.1f ms); warm cache hit < 1 ms: from tile source %s (gemm memory %.3f ms, disk "
	    "%.3f ms), of the CUDA C %s (memory %.1f us, disk %.1f us).\n\n",
	    samples[0].gen_ms < 2 ? "met" : "**missed**", samples[0].gen_ms,
	    samples[0].cold_ms < 300 ? "met" : "**missed**", samples[0].cold_ms,
	    samples[0].mem_tile_ms < 1 && samples[0].disk_tile_ms < 1 ? "met" : "**missed**",
	    samples[0].mem_tile_ms, samples[0].disk_tile_ms,
	    samples[0].mem_cuda_us < 1000 && samples[0].disk_cuda_us < 1000 ? "met" : "**missed**",
	    samples[0].mem_cuda_us, samples[0].disk_cuda_us);
	if (tscript) {
		out("## Triton, same run\n\n| what | figure | target | note |\n|---|---|---|---|\n");
		triton(tscript);
		out("\n");
	}
	out("## Kernels (JIT-compiled from samples/*.tile, launched with the --header launchers)\n\n");
	out("| sample | size | tilec | reference | ratio | target | | check |\n|---|---|---|---|---|---|---|---|\n");
	if (quick) {
		bench_gemm(&samples[0], h, 1024, 1024, 1024);
		bench_gemm(&samples[1], h, 1024, 1024, 1024);
		bench_mem(&samples[2], 2048, 2048, 0);
		bench_mem(&samples[3], 2048, 2048, 1);
	} else {
		for (i = 0; i < 2; i++) { /* gemm, gemm_sm90 (TMA loads on sm_90a) */
			bench_gemm(&samples[i], h, 2048, 2048, 2048);
			bench_gemm(&samples[i], h, 4096, 4096, 4096);
			bench_gemm(&samples[i], h, 8192, 8192, 8192);
			bench_gemm(&samples[i], h, 128, 8192, 8192); /* skinny: M = 128 */
		}
		bench_mem(&samples[2], 16384, 16384, 0);
		bench_mem(&samples[3], 16384, 16384, 1);
	}
	out("\ncorrectness: %s\n", failures ? "**FAILURES** (see the check column)" : "every check passed");
	if (md)
		fclose(md);
	for (i = 0; i < (int)(sizeof samples / sizeof samples[0]); i++)
		tilec_module_free(samples[i].m);
	tilec_jit_destroy(jit);
	cublasDestroy(h);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cachedir);
	if (system(cmd) != 0)
		fprintf(stderr, "gpu_bench: cannot remove %s\n", cachedir);
	printf("wrote %s\n", md ? results : "(nothing)");
	return failures ? 1 : 0;
}
