/*
 * check_api.c: the public C API as one: every public header in one file (the
 * C++ side is test/api_cxx.cpp), the unified status codes, and the program
 * object of tilec_program.h: signatures, grids, assumes, and launches of the
 * emitted code on the CPU target with the caller's buffers.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilec.h"
#include "tilec_jit.h"
#include "tilec_plugin.h"
#include "tilec_program.h"
#include "tilec_run.h"
#include "tilec_status.h"
#include "tilec_tile.h"

#include "tests.h"

static const char scale_src[] =
	"kernel scale(X: f32[N], Y: f32[N], a: f32)\n"
	"    grid(cdiv(N, 64)) threads(64)\n"
	"{\n"
	"    assume(N % 4 == 0);\n"
	"    local x: f32[64];\n"
	"    copy(X[bx * 64], x);\n"
	"    for i in parallel(64) {\n"
	"        x[i] = x[i] * a + 1.0;\n"
	"    }\n"
	"    copy(x, Y[bx * 64]);\n"
	"}\n";

START_TEST(statuses_one_scheme)
{
	static const int all[] = {TILEC_OK, TILEC_ERR_ARG, TILEC_ERR_NOLIB, TILEC_ERR_COMPILE,
				  TILEC_ERR_ARCH, TILEC_ERR_DRIVER, TILEC_ERR_NOTFOUND, TILEC_ERR_NOMEM,
				  TILEC_ERR_IO, TILEC_ERR_CRASH, TILEC_ERR_DIFFER, TILEC_ERR_RUN};
	size_t i, j;

	ck_assert_int_eq(TILEC_OK, 0);
	for (i = 0; i < sizeof all / sizeof all[0]; i++) {
		const char *n = tilec_status_str(all[i]);

		ck_assert(i == 0 || all[i] < 0);
		ck_assert_msg(!strncmp(n, "TILEC_", 6) && strcmp(n, "TILEC_ERR_UNKNOWN"), "%d: %s", all[i], n);
		for (j = 0; j < i; j++)
			ck_assert_int_ne(all[i], all[j]);
	}
	ck_assert_str_eq(tilec_status_str(-99), "TILEC_ERR_UNKNOWN");
	/* the old names are the unified values */
	ck_assert_int_eq(TILEC_USAGE, TILEC_ERR_ARG);
	ck_assert_int_eq(TILEC_RUN_AGREE, TILEC_OK);
	ck_assert_int_eq(TILEC_RUN_DIFFER, TILEC_ERR_DIFFER);
}
END_TEST

/* one status type across compile, define check, run and plugin calls */
START_TEST(statuses_across_headers)
{
	tilec_options o;
	tilec_result r;
	tilec_run_options ro;
	tilec_run_result rr;
	char msg[200];

	tilec_options_init(&o);
	ck_assert_int_eq(tilec_compile("kernel", 6, &o, &r), TILEC_ERR_COMPILE);
	tilec_result_free(&r);
	o.arch = "sm_99";
	ck_assert_int_eq(tilec_compile(scale_src, strlen(scale_src), &o, &r), TILEC_ERR_ARG);
	tilec_result_free(&r);
	ck_assert_int_eq(tilec_define_check("BM=64", msg, sizeof msg), TILEC_OK);
	ck_assert_int_eq(tilec_define_check("64=BM", msg, sizeof msg), TILEC_ERR_ARG);
	tilec_run_options_init(&ro);
	ro.arch = "sm_99";
	ck_assert_int_eq(tilec_run(scale_src, strlen(scale_src), &ro, &rr), TILEC_ERR_ARG);
	tilec_run_result_free(&rr);
	ck_assert_int_eq(tilec_run(scale_src, strlen(scale_src), NULL, NULL), TILEC_ERR_ARG);
}
END_TEST

START_TEST(program_signature)
{
	tilec_program *p;
	tilec_param_info pi;
	unsigned threads, grid[3];
	size_t smem;
	int64_t sizes[3];
	char *err = NULL;
	int i;

	ck_assert_int_eq(tilec_program_compile_file("samples/gemm.tile", NULL, &p, &err), TILEC_OK);
	ck_assert(strstr(tilec_program_code(p), "__global__") != NULL);
	ck_assert(strstr(tilec_program_layouts(p), "acc") != NULL);
	ck_assert_str_eq(tilec_program_target(p), "cuda");
	ck_assert_str_eq(tilec_program_arch(p), "sm_80");
	ck_assert_int_eq(tilec_program_kernel_count(p), 1);
	ck_assert_str_eq(tilec_program_kernel_name(p, 0), "gemm");
	ck_assert_ptr_null(tilec_program_kernel_name(p, 1));
	ck_assert_int_eq(tilec_program_kernel_find(p, "gemm"), 0);
	ck_assert_int_eq(tilec_program_kernel_find(p, "nope"), -1);
	ck_assert_int_eq(tilec_program_kernel_launch(p, 0, &threads, &smem), TILEC_OK);
	ck_assert_uint_eq(threads, 128);
	ck_assert_uint_gt(smem, 0);
	ck_assert_int_eq(tilec_program_param_count(p, 0), 3);
	ck_assert_int_eq(tilec_program_size_count(p, 0), 3);
	ck_assert_str_eq(tilec_program_size_name(p, 0, 0), "M");
	ck_assert_str_eq(tilec_program_size_name(p, 0, 1), "K");
	ck_assert_str_eq(tilec_program_size_name(p, 0, 2), "N");
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(tilec_program_param(p, 0, i, &pi), TILEC_OK);
		ck_assert_str_eq(pi.name, i == 0 ? "A" : i == 1 ? "B" : "C");
		ck_assert_str_eq(pi.dtype, "f16");
		ck_assert_int_eq(pi.elem_bytes, 2);
		ck_assert_int_eq(pi.is_tensor, 1);
		ck_assert_int_eq(pi.ndim, 2);
	}
	/* C: f16[M, N] */
	ck_assert_int_eq(pi.dim_size[0], 0);
	ck_assert_int_eq(pi.dim_size[1], 2);
	ck_assert_int_eq(tilec_program_param(p, 0, 3, &pi), TILEC_ERR_ARG);
	sizes[0] = 200, sizes[1] = 205, sizes[2] = 203;
	ck_assert_int_eq(tilec_program_grid(p, 0, sizes, NULL, grid, &err), TILEC_OK);
	ck_assert_uint_eq(grid[0], 2);
	ck_assert_uint_eq(grid[1], 2);
	ck_assert_uint_eq(grid[2], 1);
	sizes[0] = -1;
	ck_assert_int_eq(tilec_program_grid(p, 0, sizes, NULL, grid, &err), TILEC_ERR_ARG);
	ck_assert(strstr(err, "size M") != NULL);
	free(err);
	tilec_program_free(p);
}
END_TEST

START_TEST(program_errors)
{
	tilec_program *p = (tilec_program *)1;
	tilec_options o;
	char *err = NULL;

	ck_assert_int_eq(tilec_program_compile("kernel k(", 9, NULL, &p, &err), TILEC_ERR_COMPILE);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err, "<input>:1:") && strstr(err, "error:"), "%s", err);
	free(err);
	tilec_options_init(&o);
	o.arch = "sm_99";
	ck_assert_int_eq(tilec_program_compile(scale_src, strlen(scale_src), &o, &p, &err), TILEC_ERR_ARG);
	free(err);
	ck_assert_int_eq(tilec_program_compile_file("/nonexistent.tile", NULL, &p, &err), TILEC_ERR_IO);
	ck_assert(strstr(err, "/nonexistent.tile") != NULL);
	free(err);
	ck_assert_int_eq(tilec_program_compile(scale_src, 3, NULL, NULL, NULL), TILEC_ERR_ARG);
	tilec_program_free(NULL);
}
END_TEST

/* the emitted code on the CPU with the caller's buffers, then an assume that fails */
START_TEST(cpu_launch_scale)
{
	tilec_program *p;
	float x[100], y[100], a = 0.5f;
	void *args[3];
	int64_t n = 100;
	char *err = NULL;
	int i;

	ck_assert_int_eq(tilec_program_compile(scale_src, strlen(scale_src), NULL, &p, &err), TILEC_OK);
	for (i = 0; i < 100; i++) {
		x[i] = (float)i - 50;
		y[i] = -7;
	}
	args[0] = x, args[1] = y, args[2] = &a;
	ck_assert_msg(tilec_cpu_launch(p, 0, args, &n, NULL, 0, &err) == TILEC_OK, "%s", err);
	for (i = 0; i < 100; i++)
		ck_assert_float_eq(y[i], ((float)i - 50) * 0.5f + 1);
	/* a second launch reuses the build, with other sizes */
	n = 36;
	a = 2;
	for (i = 0; i < 100; i++)
		y[i] = -7;
	ck_assert_msg(tilec_cpu_launch(p, 0, args, &n, NULL, 0, &err) == TILEC_OK, "%s", err);
	for (i = 0; i < 100; i++)
		ck_assert_float_eq(y[i], i < 36 ? ((float)i - 50) * 2 + 1 : -7);
	n = 37;
	ck_assert_int_eq(tilec_cpu_launch(p, 0, args, &n, NULL, 0, &err), TILEC_ERR_ARG);
	ck_assert_msg(strstr(err, "assume at <input>:4:") != NULL, "%s", err);
	free(err);
	args[1] = NULL;
	ck_assert_int_eq(tilec_cpu_launch(p, 0, args, &n, NULL, 0, &err), TILEC_ERR_ARG);
	free(err);
	tilec_program_free(p);
}
END_TEST

/* tilec_cpu_launch of a persistent kernel (tilec_options.persistent): 3 blocks loop over the
 * 7 x 11 tiles, each tile counted once (with the grouped order too); the grid is still the
 * sizes' one */
START_TEST(cpu_launch_persistent)
{
	static const char src[] = "kernel visits(C: i32[Y, X], T: i32[Y, X]) grid(X, Y) threads(32)\n"
				  "{\n    for i in parallel(1) {\n        atomic_add(C[by, bx], 1);\n"
				  "        T[by, bx] = by * X + bx;\n    }\n}\n";
	tilec_program *p;
	tilec_options o;
	int32_t c[77], t[77];
	int64_t sizes[2];
	unsigned grid[3];
	void *args[2] = {c, t};
	char *err = NULL;
	int i, g;

	for (g = 0; g < 2; g++) {
		tilec_options_init(&o);
		o.persistent = 1;
		o.raster_group = g ? 3 : 0;
		ck_assert_int_eq(tilec_program_compile(src, strlen(src), &o, &p, &err), TILEC_OK);
		ck_assert(strstr(tilec_program_code(p), "// kernel visits: persistent: ") != NULL);
		ck_assert_int_eq(tilec_program_size_count(p, 0), 2);
		for (i = 0; i < 2; i++)
			sizes[i] = !strcmp(tilec_program_size_name(p, 0, i), "X") ? 7 : 11;
		ck_assert_int_eq(tilec_program_grid(p, 0, sizes, NULL, grid, &err), TILEC_OK);
		ck_assert(grid[0] == 7 && grid[1] == 11 && grid[2] == 1);
		for (i = 0; i < 77; i++)
			c[i] = 0, t[i] = -1;
		ck_assert_msg(tilec_cpu_launch(p, 0, args, sizes, NULL, 0, &err) == TILEC_OK, "%s", err);
		for (i = 0; i < 77; i++)
			ck_assert_msg(c[i] == 1 && t[i] == i, "G %d: tile %d counted %d times, holds %d", g, i, c[i], t[i]);
		tilec_program_free(p);
	}
}
END_TEST

static float
h2f(uint16_t h)
{
	unsigned s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
	float f = e ? ldexpf((float)(m | 1024), (int)e - 25) : ldexpf((float)m, -24);

	return s ? -f : f;
}

/* samples/gemm.tile on the CPU: integer-valued f16 inputs, so every sum is exact */
START_TEST(cpu_launch_gemm)
{
	enum { M = 70, K = 40, N = 130 };
	static uint16_t A[M * K], B[K * N], C[M * N];
	static const uint16_t small[] = {0xbc00, 0x0000, 0x3c00, 0x4000}; /* -1, 0, 1, 2 */
	tilec_program *p;
	void *args[3] = {A, B, C};
	int64_t sizes[3] = {M, K, N};
	char *err = NULL;
	int i, j, l;

	for (i = 0; i < M * K; i++)
		A[i] = small[(i * 7 + 3) % 4];
	for (i = 0; i < K * N; i++)
		B[i] = small[(i * 5 + 1) % 4];
	ck_assert_int_eq(tilec_program_compile_file("samples/gemm.tile", NULL, &p, &err), TILEC_OK);
	ck_assert_msg(tilec_cpu_launch(p, 0, args, sizes, NULL, 0, &err) == TILEC_OK, "%s", err);
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			float want = 0;

			for (l = 0; l < K; l++)
				want += h2f(A[i * K + l]) * h2f(B[l * N + j]);
			ck_assert_msg(h2f(C[i * N + j]) == want, "C[%d, %d] = %g, want %g", i, j,
				      (double)h2f(C[i * N + j]), (double)want);
		}
	tilec_program_free(p);
}
END_TEST

/* test/strided/head.tile (CUDA and HIP) on every head of one [B, S, H, 64] buffer, in place: the views'
 * pointers offset into the buffer, the strides from the signature; the transposed T
 * (strides(1, ldt)) into a padded [S, ldt] buffer whose padding stays as it was */
START_TEST(cpu_launch_heads)
{
	enum { NB = 2, S = 37, H = 3, D = 64, LDT = 70 };
	static _Alignas(16) float Xb[NB * S * H * D + 1], Ob[NB * S * H * D + 1];
	static float T[S * LDT];
	tilec_program *p;
	tilec_param_info pi;
	float scale = 0.5f;
	void *args[4];
	int64_t sizes[4] = {S, H * D, H * D, LDT};
	char *err = NULL;
	int b, h, i, j, off;
	float *X, *O;
	tilec_options o;

	/* _i 0: CUDA C (sm_80), 1: HIP C (gfx90a) */
	tilec_options_init(&o);
	if (_i)
		o.target = TILEC_TARGET_HIP, o.arch = "gfx90a";
	ck_assert_int_eq(tilec_program_compile_file("test/strided/head.tile", &o, &p, &err), TILEC_OK);
	ck_assert_str_eq(tilec_program_target(p), _i ? "hip" : "cuda");
	ck_assert_int_eq(tilec_program_size_count(p, 0), 4);
	ck_assert_str_eq(tilec_program_size_name(p, 0, 1), "sq");
	ck_assert_int_eq(tilec_program_param(p, 0, 0, &pi), TILEC_OK);
	ck_assert_int_eq(pi.strided, 1);
	ck_assert_int_eq(pi.stride_size[0], 1);
	ck_assert_int_eq(pi.stride_size[1], -1);
	ck_assert_int_eq(pi.stride_const[1], 1);
	ck_assert_int_eq(tilec_program_param(p, 0, 2, &pi), TILEC_OK);
	ck_assert_int_eq(pi.stride_size[0], -1);
	ck_assert_int_eq(pi.stride_size[1], 3);
	/* off 1: the buffers start one element past 16-byte alignment, so the views' pointers
	 * fail the kernel's alignment check (the CPU run keeps their alignment): the
	 * element-by-element body */
	for (off = 0; off < 2; off++) {
		X = Xb + off, O = Ob + off;
		for (i = 0; i < NB * S * H * D; i++)
			X[i] = (float)(i % 97) - 40, O[i] = 0;
		for (b = 0; b < NB; b++)
			for (h = 0; h < H; h++) {
				for (i = 0; i < S * LDT; i++)
					T[i] = -1;
				args[0] = X + (b * S * H + h) * D, args[1] = O + (b * S * H + h) * D;
				args[2] = T, args[3] = &scale;
				ck_assert_msg(tilec_cpu_launch(p, 0, args, sizes, NULL, 0, &err) == TILEC_OK, "%s", err);
				for (i = 0; i < S; i++)
					for (j = 0; j < LDT; j++)
						ck_assert_float_eq(T[i * LDT + j], j < D ? X[((b * S + i) * H + h) * D + j] : -1);
			}
		for (i = 0; i < NB * S * H * D; i++)
			ck_assert_float_eq(O[i], X[i] * 0.5f);
	}
	/* a stride below 1 is refused */
	sizes[1] = 0;
	ck_assert_int_eq(tilec_cpu_launch(p, 0, args, sizes, NULL, 0, &err), TILEC_ERR_ARG);
	ck_assert_msg(strstr(err, "stride 0 of tensor Q is 0; strides must be positive") != NULL, "%s", err);
	free(err);
	tilec_program_free(p);
}
END_TEST

Suite *
suite_api(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, statuses_one_scheme);
	tcase_add_test(tc, statuses_across_headers);
	tcase_add_test(tc, program_signature);
	tcase_add_test(tc, program_errors);
	tcase_add_test(tc, cpu_launch_scale);
	tcase_add_test(tc, cpu_launch_persistent);
	tcase_add_test(tc, cpu_launch_gemm);
	tcase_add_loop_test(tc, cpu_launch_heads, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
