/*
 * tma_jit.c: samples/gemm_sm90.tile JIT-compiled from tile source (tilec_jit_compile_tile)
 * with and without tilec_options.tma, launched with tilec_launch and the same six arguments
 * (the runtime makes the TMA tensor maps from them); the two results must be bit-identical
 * (the loads differ, the math does not) and match an fp64 reference. Exit 77 without a GPU.
 *   cc -std=c11 -O2 -Iruntime test/gpu/tma_jit.c build/libtilec.a -ldl -lpthread -lm
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"
#include "tilec_jit.h"
#include "tilec_tile.h"

static uint16_t
f2h(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t s = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
	if (e < 103) return (uint16_t)s;
	if (e < 113) { m |= 0x800000; return (uint16_t)(s | (m >> (126 - e))); }
	return (uint16_t)(s | ((e - 112) << 10) | (m >> 13));
}

static double
h2d(uint16_t h)
{
	int e = (h >> 10) & 31, m = h & 1023;
	double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
	return h & 0x8000 ? -v : v;
}

int
main(void)
{
	static const int sizes[][3] = {{1000, 1016, 1000}, {200, 264, 136}, {1001, 1003, 999}, {2048, 2048, 2048}};
	tilec_jit *j = NULL;
	tilec_module *m[2] = {NULL, NULL};
	char arch[32], *err = NULL;
	unsigned threads[2];
	size_t smem[2];
	int rc, v, s, fails = 0;

	if (tilec_jit_create(&j, NULL, &err) || tilec_dev_arch(j, arch, sizeof arch, &err)) {
		fprintf(stderr, "tma_jit: no GPU: %s\n", err ? err : "");
		return 77;
	}
	for (v = 0; v < 2; v++) {
		tilec_options o;

		tilec_options_init(&o);
		o.tma = v;
		if ((rc = tilec_jit_compile_tile_file(j, "samples/gemm_sm90.tile", &o, arch, &m[v], &err)) ||
		    (rc = tilec_module_launch_info(m[v], "gemm_sm90", &threads[v], &smem[v])) ||
		    (rc = tilec_module_load(m[v], &err))) {
			fprintf(stderr, "tma_jit: %s: %s\n%s\n", tilec_status_str(rc), err ? err : "", m[v] ? tilec_module_log(m[v]) : "");
			return 1;
		}
		printf("gemm_sm90 %s for %s: %u threads, %zu bytes of shared memory, %s\n", v ? "--tma" : "cp.async", arch,
		       threads[v], smem[v], strstr(tilec_module_source(m[v]), "tl_tma_load_2d") ? "TMA loads" : "no TMA");
	}
	for (s = 0; s < 4; s++) {
		int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
		size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N, i, bad = 0, diff = 0;
		uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *c[2] = {malloc(nc * 2), malloc(nc * 2)};
		void *da, *db, *dc;
		unsigned long long r = 88172645463325252ull;

		for (i = 0; i < na + nb; i++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			*(i < na ? &a[i] : &b[i - na]) = f2h((float)((r >> 40) / 8388608.0 - 1.0));
		}
		tilec_dev_alloc(j, &da, na * 2, &err), tilec_dev_alloc(j, &db, nb * 2, &err), tilec_dev_alloc(j, &dc, nc * 2, &err);
		tilec_dev_upload(j, da, a, na * 2, &err), tilec_dev_upload(j, db, b, nb * 2, &err);
		for (v = 0; v < 2; v++) {
			tilec_arg args[6] = {tilec_arg_ptr(da), tilec_arg_ptr(db), tilec_arg_ptr(dc), tilec_arg_i32(M),
					     tilec_arg_i32(K), tilec_arg_i32(N)};
			unsigned grid[3] = {(unsigned)(N + 255) / 256, (unsigned)(M + 127) / 128, 1}, block[3] = {threads[v], 1, 1};

			memset(c[v], 0xff, nc * 2);
			tilec_dev_upload(j, dc, c[v], nc * 2, &err);
			if ((rc = tilec_launch(m[v], "gemm_sm90", grid, block, (unsigned)smem[v], NULL, args, 6, &err)) ||
			    (rc = tilec_dev_sync(j, &err)) || (rc = tilec_dev_download(j, c[v], dc, nc * 2, &err))) {
				fprintf(stderr, "tma_jit: %dx%dx%d: %s: %s\n", M, N, K, tilec_status_str(rc), err ? err : "");
				return 1;
			}
		}
		for (i = 0; i < nc; i++)
			diff += c[0][i] != c[1][i];
		for (i = 0; i < nc; i += nc > 2000000 ? 4099 : 1) {
			size_t row = i / N, col = i % N;
			double ref = 0, g = h2d(c[1][i]);
			int k;

			for (k = 0; k < K; k++)
				ref += h2d(a[row * K + k]) * h2d(b[(size_t)k * N + col]);
			bad += !(fabs(g - ref) <= 0.02 + 0.01 * fabs(ref));
		}
		printf("%5dx%5dx%5d: %zu of %zu elements differ between cp.async and --tma, %zu bad vs fp64\n", M, N, K, diff, nc, bad);
		fails += diff || bad;
		tilec_dev_free(j, da, NULL), tilec_dev_free(j, db, NULL), tilec_dev_free(j, dc, NULL);
		free(a), free(b), free(c[0]), free(c[1]);
	}
	printf("%s\n", fails ? "FAILED" : "all agree");
	tilec_module_free(m[0]), tilec_module_free(m[1]);
	tilec_jit_destroy(j);
	return fails != 0;
}
