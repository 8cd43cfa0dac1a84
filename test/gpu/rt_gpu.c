/*
 * rt_gpu.c: the JIT runtime on a real NVIDIA GPU (not part of `make test`,
 * which runs without one). Compiles for the device's arch, loads, launches
 * with every argument kind, uses >48 KiB of dynamic shared memory, loads PTX
 * through the driver, and times compiles, cache hits and launches.
 * Build: see test/gpu/run.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tilec_jit.h"

static const char src[] =
	"#include <cuda_fp16.h>\n"
	"extern \"C\" __global__ void axpy(const float *x, float *y, float a, int n, long long off,\n"
	"                                  __half h) {\n"
	"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"  if (i < n) y[i] = a * x[i] + y[i] + (float)(off >> 32) + (float)(off & 255) + __half2float(h);\n"
	"}\n"
	"extern \"C\" __global__ void bigsmem(float *out, int words) {\n"
	"  extern __shared__ float sm[];\n"
	"  for (int i = threadIdx.x; i < words; i += blockDim.x) sm[i] = (float)i;\n"
	"  __syncthreads();\n"
	"  float s = 0.f;\n"
	"  for (int i = threadIdx.x; i < words; i += blockDim.x) s += sm[words - 1 - i];\n"
	"  atomicAdd(out, s);\n"
	"}\n";

static int fails;

#define CHECK(c, ...) do { if (!(c)) { fails++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
run_axpy(tilec_jit *j, tilec_module *m, const char *label)
{
	enum { N = 1 << 20 };
	float *x = malloc(N * 4), *y = malloc(N * 4);
	void *dx = NULL, *dy = NULL;
	unsigned g[3] = {(N + 255) / 256, 1, 1}, b[3] = {256, 1, 1};
	tilec_arg args[6];
	char *err = NULL;
	int i, bad = 0, r;

	for (i = 0; i < N; i++)
		x[i] = (float)(i % 1000), y[i] = 1.0f;
	r = tilec_dev_alloc(j, &dx, N * 4, &err) || tilec_dev_alloc(j, &dy, N * 4, &err) ||
	    tilec_dev_upload(j, dx, x, N * 4, &err) || tilec_dev_upload(j, dy, y, N * 4, &err);
	CHECK(!r, "alloc/upload: %s", err);
	args[0] = tilec_arg_ptr(dx);
	args[1] = tilec_arg_ptr(dy);
	args[2] = tilec_arg_f32(2.0f);
	args[3] = tilec_arg_i32(N);
	args[4] = tilec_arg_i64((3LL << 32) | 7); /* +3 +7: both halves must arrive */
	args[5] = tilec_arg_f16(0x3c00); /* 1.0 */
	r = tilec_launch(m, "axpy", g, b, 0, NULL, args, 6, &err);
	CHECK(!r, "launch axpy (%s): %s", label, err);
	r = tilec_dev_sync(j, &err) || tilec_dev_download(j, y, dy, N * 4, &err);
	CHECK(!r, "sync/download: %s", err);
	for (i = 0; i < N; i++) {
		double want = 2.0 * (i % 1000) + 1.0 + 10.0 + 1.0;

		if (fabs(y[i] - want) > 1e-6 * want)
			bad++;
	}
	CHECK(bad == 0, "axpy (%s): %d wrong values (y[5]=%g)", label, bad, y[5]);
	printf("axpy via %s: %s\n", label, bad ? "wrong" : "ok");
	tilec_dev_free(j, dx, NULL);
	tilec_dev_free(j, dy, NULL);
	free(x);
	free(y);
	free(err);
	return bad;
}

int
main(void)
{
	const char *opts[] = {"-I/usr/local/cuda/include", "-I/usr/local/cuda/include/cccl",
	                      "--std=c++17"};
	tilec_jit_options o = {0};
	tilec_jit *j = NULL;
	tilec_module *m = NULL, *m2 = NULL, *p = NULL;
	char arch[32], dir[] = "/tmp/tilec-gpu-XXXXXX", *err = NULL;
	unsigned g[3] = {1, 1, 1}, b[3] = {256, 1, 1};
	tilec_arg args[2];
	tilec_jit_stats st;
	void *dout = NULL;
	float out = 0.f;
	double want;
	double t0, t1;
	int r, i, words = 64 * 1024 / 4 + 1024; /* 68 KiB */

	if (!mkdtemp(dir))
		return 2;
	o.cache_dir = dir;
	r = tilec_jit_create(&j, &o, &err);
	CHECK(!r, "create: %s", err);
	r = tilec_dev_arch(j, arch, sizeof arch, &err);
	CHECK(!r, "dev_arch: %s", err);
	printf("device arch: %s\n", r ? "?" : arch);

	t0 = now();
	r = tilec_jit_compile_cuda(j, src, NULL, opts, 3, &m, &err); /* the device's arch */
	t1 = now();
	CHECK(!r, "compile: %s\n%s", err, tilec_module_log(m));
	if (r) {
		rmdir(dir);
		return 1;
	}
	printf("compile (NVRTC, %s, cubin): %.1f ms\n", tilec_module_arch(m), (t1 - t0) * 1e3);
	t0 = now();
	r = tilec_module_load(m, &err);
	t1 = now();
	CHECK(!r, "load: %s", err);
	printf("first module load (incl. context): %.1f ms\n", (t1 - t0) * 1e3);
	run_axpy(j, m, "cubin");

	/* dynamic shared memory above 48 KiB */
	r = tilec_dev_alloc(j, &dout, 4, &err) || tilec_dev_upload(j, dout, &out, 4, &err);
	CHECK(!r, "alloc: %s", err);
	args[0] = tilec_arg_ptr(dout);
	args[1] = tilec_arg_i32(words);
	r = tilec_launch(m, "bigsmem", g, b, (unsigned)words * 4, NULL, args, 2, &err);
	CHECK(!r, "launch bigsmem: %s", err);
	r = tilec_dev_sync(j, &err) || tilec_dev_download(j, &out, dout, 4, &err);
	CHECK(!r, "sync: %s", err);
	want = (double)words * (words - 1) / 2; /* exact; the kernel sums in float */
	CHECK(fabs(out - want) <= 1e-4 * want, "bigsmem: got %g want %g", out, want);
	printf("dynamic shared memory %d bytes: %s (sum %.7g, exact %.7g)\n", words * 4,
	       fabs(out - want) <= 1e-4 * want ? "ok" : "wrong", out, want);
	tilec_dev_free(j, dout, NULL);

	/* lookup by name, and an in-memory header */
	{
		static const char hsrc[] =
			"#include \"tl_k.h\"\n"
			"extern \"C\" __global__ void setk(float *o) { o[threadIdx.x] = TL_K * threadIdx.x; }\n";
		tilec_header h = {"tl_k.h", "#define TL_K 7.0f\n"};
		tilec_module *hm = NULL;
		void *fn = NULL, *dh = NULL;
		float hv[32];
		unsigned g1[3] = {1, 1, 1}, b32[3] = {32, 1, 1};
		tilec_arg a1[1];

		r = tilec_jit_compile_cuda_ex(j, hsrc, arch, NULL, 0, &h, 1, &hm, &err);
		CHECK(!r, "compile with header: %s", err);
		r = tilec_module_kernel(hm, "setk", &fn, &err);
		CHECK(!r && fn, "kernel lookup: %s", err);
		r = tilec_dev_alloc(j, &dh, sizeof hv, &err);
		a1[0] = tilec_arg_ptr(dh);
		r = r || tilec_launch(hm, "setk", g1, b32, 0, NULL, a1, 1, &err) ||
		    tilec_dev_sync(j, &err) || tilec_dev_download(j, hv, dh, sizeof hv, &err);
		CHECK(!r, "setk: %s", err);
		for (i = 0; i < 32; i++)
			CHECK(hv[i] == 7.0f * i, "setk[%d] = %g", i, hv[i]);
		printf("in-memory header + kernel lookup: %s\n", hv[31] == 217.0f ? "ok" : "wrong");
		tilec_dev_free(j, dh, NULL);
		tilec_module_free(hm);
	}

	/* a missing kernel */
	r = tilec_launch(m, "nosuch", g, b, 0, NULL, args, 2, &err);
	CHECK(r == TILEC_ERR_NOTFOUND, "nosuch: %s", tilec_status_str(r));
	printf("missing kernel: %s (%s)\n", tilec_status_str(r), err);

	/* launch overhead */
	{
		enum { L = 2000 };
		void *dy = NULL;

		tilec_dev_alloc(j, &dy, 4 * 256, NULL);
		args[0] = tilec_arg_ptr(dy);
		args[1] = tilec_arg_i32(0);
		tilec_launch(m, "bigsmem", g, b, 0, NULL, args, 2, NULL);
		tilec_dev_sync(j, NULL);
		t0 = now();
		for (i = 0; i < L; i++)
			tilec_launch(m, "bigsmem", g, b, 0, NULL, args, 2, NULL);
		t1 = now();
		tilec_dev_sync(j, NULL);
		printf("tilec_launch: %.2f us per call (host side, %d launches)\n", (t1 - t0) * 1e6 / L, L);
		tilec_dev_free(j, dy, NULL);
	}

	/* PTX loaded through the driver's JIT */
	t0 = now();
	r = tilec_jit_compile_cuda(j, src, "compute_90a", opts, 3, &p, &err);
	t1 = now();
	CHECK(!r, "compile ptx: %s", err);
	printf("compile (NVRTC, compute_90a, PTX): %.1f ms\n", (t1 - t0) * 1e3);
	if (!r)
		run_axpy(j, p, "PTX");

	/* cache: memory hit, then disk hit in a new instance */
	t0 = now();
	r = tilec_jit_compile_cuda(j, src, NULL, opts, 3, &m2, &err);
	t1 = now();
	CHECK(!r && tilec_module_cache_source(m2) == TILEC_CACHE_MEM, "mem hit");
	printf("memory cache hit: %.3f ms\n", (t1 - t0) * 1e3);
	tilec_module_free(m2);
	{
		tilec_jit *j2 = NULL;

		tilec_jit_create(&j2, &o, NULL);
		t0 = now();
		r = tilec_jit_compile_cuda(j2, src, arch, opts, 3, &m2, &err);
		t1 = now();
		CHECK(!r && tilec_module_cache_source(m2) == TILEC_CACHE_DISK, "disk hit");
		printf("disk cache hit: %.3f ms\n", (t1 - t0) * 1e3);
		run_axpy(j2, m2, "disk-cached cubin");
		tilec_module_free(m2);
		tilec_jit_destroy(j2);
	}
	tilec_jit_stats_get(j, &st);
	printf("stats: compiles %llu, mem hits %llu, disk hits %llu, disk writes %llu\n",
	       (unsigned long long)st.compiles, (unsigned long long)st.mem_hits,
	       (unsigned long long)st.disk_hits, (unsigned long long)st.disk_writes);
	tilec_module_free(m);
	tilec_module_free(p);
	tilec_jit_destroy(j);
	free(err);
	{
		char cmd[64];

		snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
		if (system(cmd))
			fails++;
	}
	printf("%s (%d failures)\n", fails ? "FAILED" : "PASSED", fails);
	return fails ? 1 : 0;
}
