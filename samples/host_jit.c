/*
 * host_jit.c: a host program that JIT-compiles samples/gemm.tile with
 * tilec_jit_compile_tile (tilec -> NVRTC -> driver), runs it on random f16
 * data at 512x384x256 and a ragged size, and checks C against a CPU fp64
 * reference. Prints "N passed, N failed". Exit 0 all passed, 1 a failure,
 * 77 no NVIDIA driver/GPU. Build: make host_jit; run: build/host_jit [gemm.tile].
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec_tile.h"

static uint16_t
f2h(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffff;
	if (exp <= 0)
		return (uint16_t)sign; /* tiny values flush to zero (inputs are in [-1, 1]) */
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	mant += 0x1000; /* round to nearest */
	if (mant & 0x800000) {
		mant = 0;
		if (++exp >= 31)
			return (uint16_t)(sign | 0x7c00);
	}
	return (uint16_t)(sign | (uint32_t)exp << 10 | mant >> 13);
}

static double
h2d(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	double v;

	if (exp == 0)
		v = ldexp(mant, -24);
	else if (exp == 31)
		v = mant ? NAN : INFINITY;
	else
		v = ldexp(mant + 1024, exp - 25);
	return (h & 0x8000) ? -v : v;
}

static unsigned long long rng = 0x2545f4914f6cdd1dULL;

static float
frand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

#define CK(call) do { if ((rc = (call)) != TILEC_OK) goto fail; } while (0)

/* one gemm of M x N x K; returns 1 if C matches the reference */
static int
run(tilec_jit *j, tilec_module *m, int M, int N, int K, unsigned threads, size_t smem)
{
	size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N, i;
	uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *c = malloc(nc * 2);
	void *da = NULL, *db = NULL, *dc = NULL;
	char *err = NULL;
	int rc, ok = 0, bad = 0, r, col, k;
	double worst = 0;

	if (!a || !b || !c)
		goto done;
	for (i = 0; i < na; i++)
		a[i] = f2h(frand());
	for (i = 0; i < nb; i++)
		b[i] = f2h(frand());
	memset(c, 0xff, nc * 2);
	CK(tilec_dev_alloc(j, &da, na * 2, &err));
	CK(tilec_dev_alloc(j, &db, nb * 2, &err));
	CK(tilec_dev_alloc(j, &dc, nc * 2, &err));
	CK(tilec_dev_upload(j, da, a, na * 2, &err));
	CK(tilec_dev_upload(j, db, b, nb * 2, &err));
	CK(tilec_dev_upload(j, dc, c, nc * 2, &err));
	{
		/* the launch contract: params in order, then sizes M, K, N (first appearance) */
		tilec_arg args[6];
		unsigned grid[3] = {(unsigned)(N + 127) / 128, (unsigned)(M + 127) / 128, 1};
		unsigned block[3] = {threads, 1, 1};

		args[0] = tilec_arg_ptr(da);
		args[1] = tilec_arg_ptr(db);
		args[2] = tilec_arg_ptr(dc);
		args[3] = tilec_arg_i32(M);
		args[4] = tilec_arg_i32(K);
		args[5] = tilec_arg_i32(N);
		CK(tilec_launch(m, "gemm", grid, block, (unsigned)smem, NULL, args, 6, &err));
	}
	CK(tilec_dev_sync(j, &err));
	CK(tilec_dev_download(j, c, dc, nc * 2, &err));
	for (r = 0; r < M; r++)
		for (col = 0; col < N; col++) {
			double ref = 0, got, e;

			for (k = 0; k < K; k++)
				ref += h2d(a[(size_t)r * K + k]) * h2d(b[(size_t)k * N + col]);
			got = h2d(c[(size_t)r * N + col]);
			e = fabs(got - ref) / (1.0 + fabs(ref));
			if (!(e <= 1e-2)) {
				if (bad++ < 5)
					fprintf(stderr, "  C[%d,%d] = %g, want %g\n", r, col, got, ref);
			}
			if (e > worst || e != e)
				worst = e;
		}
	ok = bad == 0;
	printf("%s gemm %dx%dx%d: max rel err %.3g, %d wrong\n", ok ? "PASS" : "FAIL", M, N, K,
	       worst, bad);
	goto done;
fail:
	printf("FAIL gemm %dx%dx%d: %s: %s\n", M, N, K, tilec_status_str(rc), err ? err : "");
done:
	if (da)
		tilec_dev_free(j, da, NULL);
	if (db)
		tilec_dev_free(j, db, NULL);
	if (dc)
		tilec_dev_free(j, dc, NULL);
	free(err);
	free(a);
	free(b);
	free(c);
	return ok;
}

int
main(int argc, char **argv)
{
	/* M ragged against the 128-row tile; the emitted kernel needs N and K to be
	 * multiples of its 8-element vectors (it traps otherwise: docs/cuda.md) */
	static const int sizes[][3] = {{512, 384, 256}, {200, 296, 136}};
	const char *path = argc > 1 ? argv[1] : "samples/gemm.tile";
	tilec_jit *j = NULL;
	tilec_module *m = NULL;
	char arch[32], *err = NULL;
	unsigned threads;
	size_t smem;
	int rc, i, pass = 0, fail = 0;

	if ((rc = tilec_jit_create(&j, NULL, &err)) != TILEC_OK) {
		fprintf(stderr, "host_jit: %s\n", err ? err : tilec_status_str(rc));
		return 1;
	}
	if ((rc = tilec_dev_arch(j, arch, sizeof arch, &err)) != TILEC_OK) {
		fprintf(stderr, "host_jit: no NVIDIA driver or GPU (%s: %s); nothing run\n",
			tilec_status_str(rc), err ? err : "");
		free(err);
		tilec_jit_destroy(j);
		return 77;
	}
	rc = tilec_jit_compile_tile_file(j, path, NULL, arch, &m, &err);
	if (rc != TILEC_OK) {
		fprintf(stderr, "host_jit: %s: %s\n%s\n", path, err ? err : tilec_status_str(rc),
			m ? tilec_module_log(m) : "");
		free(err);
		tilec_module_free(m);
		tilec_jit_destroy(j);
		return 1;
	}
	if (tilec_module_launch_info(m, "gemm", &threads, &smem) != TILEC_OK
	    || tilec_module_load(m, &err) != TILEC_OK) {
		fprintf(stderr, "host_jit: %s\n", err ? err : "no launch info for gemm");
		fail++;
	} else {
		printf("gemm for %s: %u threads, %zu bytes of dynamic shared memory\n", arch, threads, smem);
		for (i = 0; i < 2; i++) {
			if (run(j, m, sizes[i][0], sizes[i][1], sizes[i][2], threads, smem))
				pass++;
			else
				fail++;
		}
	}
	printf("%d passed, %d failed\n", pass, fail);
	free(err);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	return fail ? 1 : 0;
}
