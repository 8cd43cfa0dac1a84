/*
 * check_bounds.c: the compiler's resource bounds and checked arithmetic
 * (issue 19). Each program either compiles or gives an error at a located
 * line:col with the expected text; none may overflow (the SAN build runs
 * these under UBSan), hang or take long: every case is timed.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <check.h>

#include "tests.h"
#include "tilec.h"

#define NCASES ((int)(sizeof cases / sizeof cases[0]))

#define K1 "kernel k(A: f32[M, N], B: f32[M, N]) grid(1) threads(128) {\n"

typedef struct {
	const char *name;
	const char *src;
	const char *want;   /* NULL: compiles; else a substring of the first error */
	const char *where;  /* "t:line:col" of the first error */
} Case;

static const Case cases[] = {
	{"shift_63", "const X = 1 << 63;\n" K1 "shared s: f32[32, 32]; copy(A[0, X], s); copy(s, B[0, 0]);\n}",
	 "1 << 63 does not fit in 64 bits", "t:1:13"},
	{"shift_62_ok", "const X = -1 << 63;\n" K1 "for i in parallel(32) { A[0, i] = f32(X % 2); }\n}",
	 NULL, NULL},
	{"shift_count", "const X = 1 << 64;\n" K1 "for i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "shift count 64 out of range", "t:1:13"},
	{"mul_const", "const X = 0x7fffffffffffffff * 2;\n" K1 "for i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "does not fit in 64 bits", "t:1:30"},
	{"add_const", "const X = 0x7fffffffffffffff + 1;\n" K1 "for i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "does not fit in 64 bits", "t:1:30"},
	{"copy_col_max", K1 "shared s: f32[32, 32];\ncopy(A[0, 9223372036854775807], s);\ncopy(s, B[0, 0]);\n}",
	 "outside [-2^62, 2^62 - extent]", "t:3:6"},
	{"copy_col_neg", K1 "shared s: f32[32, 32];\ncopy(A[0, -9223372036854775807], s);\ncopy(s, B[0, 0]);\n}",
	 "outside [-2^62, 2^62 - extent]", "t:3:6"},
	{"copy_big_ok", K1 "shared s: f32[32, 32];\ncopy(A[0, 1099511627776], s);\ncopy(s, B[0, 0]);\n}",
	 NULL, NULL},
	{"par_33_max", K1 "for i, j in parallel(33, 0x7fffffffffffffff) {\nA[i, j] = 1.0;\n}\n}",
	 "layout inference", "t:2:1"},
	{"par_2_max", K1 "for i, j in parallel(2, 0x7fffffffffffffff) {\nA[i, j] = 1.0;\n}\n}",
	 "layout inference", "t:2:1"},
	/* 2e9 points: its loop layout is mixed-radix, so it is checked from its digits (no
	 * walk) and lowers to a loop of 15625000 slots per thread */
	{"par_2_1e9", K1 "for i, j in parallel(2, 1000000000) {\nA[i, j] = 1.0;\n}\n}", NULL, NULL},
	{"grid_x", "kernel k(A: f32[M, N]) grid(1099511627776) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "grid dimension 0 (x) is 1099511627776, past the hardware limit of 2147483647", "t:1:29"},
	{"grid_x_ok", "kernel k(A: f32[M, N]) grid(2147483647) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 NULL, NULL},
	{"grid_y", "kernel k(A: f32[M, N]) grid(1, 65536) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "grid dimension 1 (y) is 65536, past the hardware limit of 65535", "t:1:32"},
	{"grid_z", "kernel k(A: f32[M, N]) grid(1, 65535, 65536) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "grid dimension 2 (z) is 65536", "t:1:39"},
	{"grid_yz_ok", "kernel k(A: f32[M, N]) grid(1, 65535, 65535) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 NULL, NULL},
	{"threads", "kernel k(A: f32[M, N]) grid(1) threads(2048) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "exceeds the limit of 1024 threads per block", "t:1:40"},
	{"local_huge", K1 "local x: f32[8, 2147483647];\ncopy(A[0, 0], x);\ncopy(x, B[0, 0]);\n}",
	 "local 'x' needs at least 536870912 bytes per thread", "t:2:7"},
	{"shared_huge", K1 "shared x: f32[1024, 1024];\ncopy(A[0, 0], x);\ncopy(x, B[0, 0]);\n}",
	 "shared 'x' needs 4194304 bytes, more than any target's shared memory", "t:2:8"},
	/* softmax rows of 4096 and 8192 f32 over 256 threads compile (and in milliseconds: the
	 * 20 s bound of every case here) */
	/* serial loops count in C int: a constant range past 2^31 - 1 would overflow it */
	{"range_past_int", K1 "local x: f32[4];\nfor r in range(3000000000) {\nx[0] = 1.0;\n}\ncopy(x, B[0, 0]);\n}",
	 "the loop runs its variable from 0 to 3000000000, outside what the generated code's loop "
	 "variables (C int) hold", "t:3:1"},
	{"range_int_max_ok", K1 "local x: f32[4];\nfor r in range(2147483647) {\nx[0] = 1.0;\n}\ncopy(x, B[0, 0]);\n}",
	 NULL, NULL},
	{"range_neg_past_int", K1 "local x: f32[4];\nfor r in range(-3000000000, 5) {\nx[0] = 1.0;\n}\ncopy(x, B[0, 0]);\n}",
	 "from -3000000000 to 5", "t:3:1"},
	{"pipeline_past_int", K1 "shared s: f32[32];\nfor k in pipeline(4294967296) {\ncopy(A[0, 0], s);\n}\n}",
	 "pipeline(4294967296): the loop runs its variable past 2^31 - 1", "t:3:1"},
	{"softmax_w4096", "const BM = 8, W = 4096;\nkernel softmax(X: f32[M, W], Y: f32[M, W]) grid(cdiv(M, BM)) threads(256) {\n"
	 "local x: f32[BM, W];\nlocal m: f32[BM];\ncopy(X[bx * BM, 0], x);\nreduce(x, m, op = max, dim = 1);\n"
	 "for i, j in parallel(BM, W) { x[i, j] = exp(x[i, j] - m[i]); }\ncopy(x, Y[bx * BM, 0]);\n}", NULL, NULL},
	{"softmax_w8192", "const BM = 8, W = 8192;\nkernel softmax(X: f32[M, W], Y: f32[M, W]) grid(cdiv(M, BM)) threads(256) {\n"
	 "local x: f32[BM, W];\nlocal m: f32[BM];\ncopy(X[bx * BM, 0], x);\nreduce(x, m, op = max, dim = 1);\n"
	 "for i, j in parallel(BM, W) { x[i, j] = exp(x[i, j] - m[i]); }\ncopy(x, Y[bx * BM, 0]);\n}", NULL, NULL},
	{"softmax_w_max", "const BM = 8, W = 2147483647;\nkernel softmax(X: f32[M, W], Y: f32[M, W]) grid(cdiv(M, BM)) threads(256) {\n"
	 "local x: f32[BM, W];\ncopy(X[bx * BM, 0], x);\ncopy(x, Y[bx * BM, 0]);\n}",
	 "more than a thread's 524288 bytes", "t:3:7"},
	{"index_add_max", K1 "for i, j in parallel(4, 32) {\nA[i, j + 9223372036854775807] = 1.0;\n}\n}",
	 "'+' with operands in [0, 31] and [9223372036854775807, 9223372036854775807] does not fit in 64 bits",
	 "t:3:8"},
	{"index_mul_max", K1 "for i, j in parallel(4, 32) {\nA[i * 9223372036854775807, j] = 1.0;\n}\n}",
	 "does not fit in 64 bits", "t:3:5"},
	{"index_mul_int32", K1 "for i, j in parallel(4, 32) {\nA[i, j * 100000000] = 1.0;\n}\n}",
	 "reaches [0, 3100000000], past the 32-bit int", "t:3:8"},
	{"index_mul_int32_ok", K1 "for i, j in parallel(4, 32) {\nA[i, j * 10000000] = 1.0;\n}\n}", NULL, NULL},
	{"index_shl", K1 "for i, j in parallel(4, 32) {\nA[i, j << 62] = 1.0;\n}\n}", "'<<'", "t:3:8"},
	{"index_mod_inner", K1 "for i, j in parallel(4, 32) {\nA[i, (j + 9223372036854775807) % 7] = 1.0;\n}\n}",
	 "does not fit in 64 bits", "t:3:9"},
	{"for_range", K1 "for r in range(1000) {\nfor i in parallel(32) {\nA[0, r * 5000000 + i] = 1.0;\n}\n}\n}",
	 "past the 32-bit int", "t:4:8"},
	{"tensor_dim_max", "kernel k(A: f32[4, 0x7fffffffffffffff]) grid(1) threads(128) {\nfor i in parallel(32) { A[0, i] = 1.0; }\n}",
	 "the constant dimensions of 'A' multiply past 2^62 elements", "t:1:20"},
	{"wmma_base_max", "kernel k(A: f16[M, N]) grid(1) threads(32) {\nlocal x: f16[16, 16];\n"
	 "require_amd_wmma_layout(x, version = 3, transposed = true, warp_bases = [[0, 9223372036854775807]], "
	 "reg_bases = [], instr_shape = [16, 16, 128]);\ncopy(A[0, 0], x);\ncopy(x, A[0, 0]);\n}",
	 "warp_bases basis 0 entry 1 (9223372036854775807 tiles) is outside the tile's 16", "t:3:1"},
	{"tensor_1d_big", "kernel k(A: f32[4611686018427387904], B: f32[4611686018427387904]) grid(1) threads(128) {\n"
	 "shared s: f32[1024];\ncopy(A[4611686018427386880], s);\ncopy(s, B[0]);\n}", NULL, NULL},
	{"block_int32", "kernel k(A: f32[M, N]) grid(65536) threads(128) {\nfor i in parallel(128) { A[bx * 65536 + i, 0] = 1.0; }\n}",
	 "'*' with operands in [0, 65535] and [65536, 65536] reaches [0, 4294901760]", "t:2:31"},
	{"block_ok", "kernel k(A: f32[M, N]) grid(65536) threads(128) {\nfor i in parallel(128) { A[bx * 128 + i, 0] = 1.0; }\n}",
	 NULL, NULL},
	{"cost_offset_min", K1 "for i in parallel(32) { A[0, i - 9223372036854775807 - 1] = 1.0; }\n}", NULL, NULL},
	{"dim_overflow", K1 "shared x: f32[4294967296, 4294967296];\n}", "is too large", "t:2:"},
};

/* 31 helpers each calling the next twice: 2^30 statements, refused at the limit */
static char *
inline_chain(int depth)
{
	static char src[16384];
	int d, n = 0;

	n += snprintf(src + n, sizeof src - (size_t)n,
		      "func h%d(A: f32[M, N]) { for i in parallel(32) { A[0, i] = 1.0; } }\n", depth);
	for (d = depth - 1; d >= 0; d--)
		n += snprintf(src + n, sizeof src - (size_t)n, "func h%d(A: f32[M, N]) { h%d(A); h%d(A); }\n",
			      d, d + 1, d + 1);
	snprintf(src + n, sizeof src - (size_t)n, K1 "h0(A);\n}");
	return src;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
expect(const char *name, const char *src, const char *want, const char *where, double limit)
{
	tilec_options o;
	tilec_result r;
	double t0 = now(), dt;

	tilec_options_init(&o);
	o.filename = "t";
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, strlen(src), &o, &r);
	dt = now() - t0;
	if (!want) {
		ck_assert_msg(r.status == TILEC_OK, "%s: expected success, got:\n%s", name, r.diagnostics);
	} else {
		ck_assert_msg(r.status == TILEC_ERROR, "%s: expected an error '%s', got status %s", name,
			      want, tilec_status_name(r.status));
		ck_assert_msg(strstr(r.diagnostics, want) != NULL, "%s: expected '%s' in:\n%s", name, want,
			      r.diagnostics);
		ck_assert_msg(!strncmp(r.diagnostics, where, strlen(where)),
			      "%s: expected the first error at %s:\n%s", name, where, r.diagnostics);
	}
	ck_assert_msg(dt < limit, "%s: took %.2f s (limit %.0f s)", name, dt, limit);
	tilec_result_free(&r);
}

START_TEST(table)
{
	const Case *c = &cases[_i];

	expect(c->name, c->src, c->want, c->where, 20.0);
}
END_TEST

START_TEST(inline_limit)
{
	expect("inline_2^30", inline_chain(31), "helper inlining would create more than 16384 statements",
	       "t:34:1", 20.0);
	/* 2^12 nests (and 2^12 - 1 calls): under the limit, compiled */
	expect("inline_2^12", inline_chain(12), NULL, NULL, 60.0);
}
END_TEST

/* N independent copies: the cost is linear, so 4x the statements takes
 * well under 16x the time (the quadratic it was) */
static double
copies(int n)
{
	static char src[1 << 20];
	tilec_options o;
	tilec_result r;
	double t0;
	int i, k;

	k = snprintf(src, sizeof src, K1 "shared s: f32[32, 32];\n");
	for (i = 0; i < n; i++)
		k += snprintf(src + k, sizeof src - (size_t)k, "copy(A[0, %d], s);\n", i);
	snprintf(src + k, sizeof src - (size_t)k, "copy(s, B[0, 0]);\n}");
	tilec_options_init(&o);
	o.dump = TILEC_DUMP_CUDA;
	t0 = now();
	tilec_compile(src, strlen(src), &o, &r);
	t0 = now() - t0;
	ck_assert_msg(r.status == TILEC_OK, "%d copies: %s", n, r.diagnostics);
	tilec_result_free(&r);
	return t0;
}

START_TEST(linear_copies)
{
	double a = copies(500), b = copies(2000);

	ck_assert_msg(b < 8 * a + 0.05, "500 copies %.3f s, 2000 copies %.3f s: not linear", a, b);
}
END_TEST

Suite *
suite_bounds(void)
{
	Suite *s = suite_create("bounds");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, table, 0, NCASES);
	tcase_add_test(tc, inline_limit);
	tcase_add_test(tc, linear_copies);
	suite_add_tcase(s, tc);
	return s;
}
