/*
 * check_control.c: layout control (convert.c, the pins and preferences of
 * infer.c). Every .tile file of test/control/ against test/control/golden/
 * NAME.txt (--dump=layouts, --explain, the IR after convert-layouts and the
 * log; a hip_ prefix compiles for HIP); diagnostics; convert_kind on known
 * pairs; and a property test of frag_from_linear over random bit
 * assignments. check_convert_nvrtc.c compiles emitted conversions.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "dumplayout.h"
#include "infer_int.h"
#include "tests.h"
#include "tilec.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

static glob_t cases;

static tilec_status
run(const char *src, const char *file, tilec_dump dump, int hip, const char *after, tilec_result *r)
{
	tilec_options o;

	tilec_options_init(&o);
	o.filename = file;
	o.dump = dump;
	o.target = hip ? TILEC_TARGET_HIP : TILEC_TARGET_CUDA;
	o.print_after = after;
	return tilec_compile(src, strlen(src), &o, r);
}

/* ---- the golden harness ------------------------------------------------------------ */

START_TEST(golden_case)
{
	const char *path = cases.gl_pathv[_i];
	const char *base = strrchr(path, '/') + 1;
	int hip = !strncmp(base, "hip_", 4);
	char golden[512], msg[1024];
	tilec_result r;
	size_t len;
	char *src = test_readfile(path, &len);
	Buf b;

	ck_assert_ptr_nonnull(src);
	buf_init(&b);
	run(src, path, TILEC_DUMP_LAYOUTS, hip, NULL, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s: %s", path, r.diagnostics);
	buf_printf(&b, "== layouts\n%s", r.output);
	tilec_result_free(&r);
	run(src, path, TILEC_DUMP_EXPLAIN, hip, NULL, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s: %s", path, r.diagnostics);
	buf_printf(&b, "== explain\n%s", r.output);
	tilec_result_free(&r);
	run(src, path, TILEC_DUMP_NONE, hip, "convert-layouts", &r);
	ck_assert_msg(r.status == TILEC_OK, "%s: %s", path, r.diagnostics);
	buf_printf(&b, "== log\n%s== diagnostics\n%s", r.log, r.diagnostics);
	tilec_result_free(&r);
	snprintf(golden, sizeof golden, "test/control/golden/%.*s.txt", (int)(strlen(base) - 5), base);
	ck_assert_msg(test_golden(golden, buf_str(&b), msg, sizeof msg) == 0, "%s", msg);
	buf_free(&b);
	free(src);
}
END_TEST

START_TEST(golden_count)
{
	ck_assert_msg(cases.gl_pathc >= 10, "only %zu cases in test/control", cases.gl_pathc);
}
END_TEST

/* ---- diagnostics ------------------------------------------------------------------- */

#define HEAD "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n" \
	     "  local x: f32[64, 64];\n"

static const struct {
	const char *src;
	int hip;
	tilec_status st;
	const char *want;   /* in the diagnostics */
} diags[] = {
	/* two hard constraints: an error naming both statements */
	{HEAD "  require_layout(x, cute(\"(_128,_32):(_32,_1)\"));\n"
	      "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"));\n"
	      "  copy(A[0, 0], x);\n}\n", 0, TILEC_ERROR,
	 "require_layout at 3:3 wants Fragment"},
	{HEAD "  require_layout(x, cute(\"(_128,_32):(_32,_1)\"));\n"
	      "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"));\n"
	      "  copy(A[0, 0], x);\n}\n", 0, TILEC_ERROR,
	 "but require_layout at 4:3 wants"},
	/* a pin against the gemm accumulator's layout */
	{"kernel g(A: f16[64, 32], B: f16[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
	 "  shared As: f16[64, 32];\n  shared Bs: f16[32, 64];\n  local acc: f32[64, 64];\n"
	 "  require_layout(acc, cute(\"(_128,_32):(_32,_1)\"));\n"
	 "  copy(A[0, 0], As);\n  copy(B[0, 0], Bs);\n  gemm(As, Bs, acc, clear = true);\n"
	 "  copy(acc, C[0, 0]);\n}\n", 0, TILEC_ERROR, "require_layout at 5:3 wants"},
	/* a pinned shared layout against the gemm's operand swizzle */
	{"kernel g(A: f16[64, 32], B: f16[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
	 "  shared As: f16[64, 32];\n  shared Bs: f16[32, 64];\n  local acc: f32[64, 64];\n"
	 "  require_layout(As, padded);\n"
	 "  copy(A[0, 0], As);\n  copy(B[0, 0], Bs);\n  gemm(As, Bs, acc);\n"
	 "  copy(acc, C[0, 0]);\n}\n", 0, TILEC_ERROR, "but gemm at 8:3 wants"},
	/* pin = false never conflicts */
	{HEAD "  require_layout(x, cute(\"(_128,_32):(_32,_1)\"), pin = false);\n"
	      "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"), pin = false);\n"
	      "  copy(A[0, 0], x);\n  copy(x, B[0, 0]);\n}\n", 0, TILEC_OK, ""},
	/* a conversion inside a loop is refused */
	{HEAD "  copy(A[0, 0], x);\n  for i in range(2) {\n    release_layout(x);\n"
	      "    copy(x, B[0, 0]);\n  }\n}\n", 0, TILEC_ERROR,
	 "5:5: error: release_layout('x') inside a loop"},
	/* ... but a require inside a loop with no use before it is a plain pin */
	{HEAD "  for i in range(2) {\n    require_layout(x, cute(\"(_128,_32):(_1,_128)\"));\n"
	      "    copy(A[0, 0], x);\n    copy(x, B[0, 0]);\n  }\n}\n", 0, TILEC_OK, ""},
	/* late_address_compute: a note on CUDA, nothing on HIP */
	{HEAD "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"), late_address_compute = true);\n"
	      "  copy(A[0, 0], x);\n}\n", 0, TILEC_OK,
	 "3:3: note: late_address_compute has no effect on CUDA"},
	/* a CuTe TV layout that is not one element per (thread, value) */
	{HEAD "  require_layout(x, cute(\"(_128,_32):(_1,_64)\"));\n  copy(A[0, 0], x);\n}\n", 0,
	 TILEC_ERROR, "the required layout cannot be built"},
	/* mma literal with warps that do not match the kernel */
	{HEAD "  require_layout(x, mma_c(m16n8k16, warps = 8));\n  copy(A[0, 0], x);\n}\n", 0,
	 TILEC_ERROR, "mma_c(..., warps = 8) in kernel 'k' of 128 threads (4 warps of 32)"},
	{HEAD "  require_layout(x, mma_c(m16n8k16, warps = 4));\n  copy(A[0, 0], x);\n}\n", 0,
	 TILEC_OK, ""},
};

START_TEST(diagnostic)
{
	tilec_result r;

	run(diags[_i].src, "d.tile", TILEC_DUMP_NONE, diags[_i].hip, NULL, &r);
	ck_assert_msg(r.status == diags[_i].st, "case %d: status %d\n%s", _i, r.status, r.diagnostics);
	ck_assert_msg(strstr(r.diagnostics, diags[_i].want) != NULL, "case %d: wanted '%s' in\n%s", _i,
		      diags[_i].want, r.diagnostics);
	if (!strstr(diags[_i].want, "late_address"))
		ck_assert_ptr_null(strstr(r.diagnostics, "late_address_compute has no effect"));
	tilec_result_free(&r);
}
END_TEST

START_TEST(hip_no_note)
{
	tilec_result r;

	run(HEAD "  copy(A[0, 0], x);\n"
	    "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"), late_address_compute = true);\n"
	    "  copy(x, B[0, 0]);\n}\n", "h.tile", TILEC_DUMP_NONE, 1, NULL, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_str_eq(r.diagnostics, "");
	ck_assert_ptr_nonnull(strstr(r.output, "local x_1: f32[64, 64] late_address"));
	ck_assert_ptr_nonnull(strstr(r.output, "-> x_1[0 +: 64, 0 +: 64] late_address"));
	tilec_result_free(&r);
	/* the HIP C recomputes lane and warp at the marked copies (the conversion's two) only */
	run(HEAD "  copy(A[0, 0], x);\n"
	    "  require_layout(x, cute(\"(_128,_32):(_1,_128)\"), late_address_compute = true);\n"
	    "  copy(x, B[0, 0]);\n}\n", "h.tile", TILEC_DUMP_CUDA, 1, NULL, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	{
		const char *p = r.output, *tag = "late_address_compute: lane and warp recomputed";
		int n = 0;

		while ((p = strstr(p, tag)))
			n++, p++;
		ck_assert_int_eq(n, 2);
		/* recomputed through an opaque asm, so that the compiler does not merge the two */
		ck_assert_ptr_nonnull(strstr(r.output, "const int tid = tl_opaque_int((int)threadIdx.x), lane = tid % 64"));
	}
	tilec_result_free(&r);
}
END_TEST

/* ---- convert_kind --------------------------------------------------------------------- */

static const struct {
	const char *ta, *sa;   /* thread and slot of A over [8, 16], 128 threads */
	const char *tb, *sb;
	const char *kind;
} kinds[] = {
	{"_i * 16 + _j", "0", "_i * 16 + _j", "0", "none"},
	{"_i * 2 + _j // 8", "_j % 8", "_i * 2 + _j // 8", "_j % 8", "none"},
	/* the same threads, slots reversed for every thread: registers */
	{"_i * 2 + _j // 8", "_j % 8", "_i * 2 + _j // 8", "7 - _j % 8", "registers"},
	/* the same threads, a slot permutation that depends on the thread: shared */
	{"_i * 2 + _j // 8", "_j % 8", "_i * 2 + _j // 8", "(_j + _i) % 8", "shared"},
	/* other threads: shared */
	{"_i * 2 + _j // 8", "_j % 8", "_i + _j // 8 * 8", "_j % 8", "shared"},
};

START_TEST(kind_table)
{
	int64_t shape[2] = {8, 16};
	const char *sa[1] = {kinds[_i].sa}, *sb[1] = {kinds[_i].sb};
	Arena a;
	Err e = {0};
	Layout *A, *B;
	const char *k;

	arena_init(&a);
	A = frag_parse(&a, shape, 2, kinds[_i].ta, 1, sa, 1, &e);
	B = frag_parse(&a, shape, 2, kinds[_i].tb, 1, sb, 1, &e);
	ck_assert_msg(A && B, "%s", e.msg);
	k = convert_kind(A, B, &e);
	ck_assert_msg(k && !strcmp(k, kinds[_i].kind), "case %d: %s (%s)", _i, k ? k : "NULL", e.msg);
	ck_assert_int_eq(convert_in_registers(A, A, &e), 1);
	arena_free(&a);
}
END_TEST

/* ---- frag_from_linear: random assignments of element bits to inputs ---------------------- */

static uint32_t
rnd(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

START_TEST(linear_property)
{
	uint32_t seed = 12345u + (uint32_t)_i;
	int iter;

	for (iter = 0; iter < 40; iter++) {
		Arena a;
		Err e = {0};
		LinLayout L;
		Fragment *F;
		int lg[2], m, nreg, nlane, nwarp, bits[24], i, k, p, nb[3], nz;
		int64_t x[3], y[3], tab_elem, t, s, in[4];

		arena_init(&a);
		lg[0] = 1 + (int)(rnd(&seed) % 4);
		lg[1] = 1 + (int)(rnd(&seed) % 4);
		m = lg[0] + lg[1];
		nlane = 1 + (int)(rnd(&seed) % (m < 5 ? m : 5));
		nlane = nlane > m ? m : nlane;
		nwarp = (int)(rnd(&seed) % (m - nlane + 1));
		nreg = m - nlane - nwarp;
		nz = (int)(rnd(&seed) % 2);  /* one broadcast warp bit */
		for (i = 0; i < m; i++)
			bits[i] = i;
		for (i = m - 1; i > 0; i--) {
			k = (int)(rnd(&seed) % (uint32_t)(i + 1));
			p = bits[i], bits[i] = bits[k], bits[k] = p;
		}
		memset(&L, 0, sizeof L);
		L.nin = 4;
		L.in_name[0] = "register", L.in_name[1] = "lane", L.in_name[2] = "warp";
		L.in_name[3] = "block";
		L.nout = 2;
		L.out_size[0] = (int64_t)1 << lg[0];
		L.out_size[1] = (int64_t)1 << lg[1];
		nb[0] = nreg, nb[1] = nlane, nb[2] = nwarp + nz;
		for (k = 0, p = 0; k < 3; k++) {
			L.nbits[k] = nb[k];
			L.base[k] = anewn(&a, int64_t, 2 * (nb[k] + 1));
			for (i = 0; i < nb[k]; i++) {
				if (k == 2 && i == nwarp)
					continue;  /* the broadcast bit: a zero basis */
				/* element bit b: column bits first (row-major) */
				int b = bits[p++];

				if (b < lg[1])
					L.base[k][i * 2 + 1] = (int64_t)1 << b;
				else
					L.base[k][i * 2] = (int64_t)1 << (b - lg[1]);
			}
		}
		L.base[3] = anewn(&a, int64_t, 2);
		F = frag_from_linear(&a, &L, 32, &e);
		ck_assert_msg(F, "seed %d iter %d: %s", _i, iter, e.msg);
		ck_assert_int_eq(F->rep, (int64_t)1 << nz);
		/* every (register, lane, warp) input lands on an element the fragment
		 * gives to that thread and slot */
		for (in[0] = 0; in[0] < (1 << nreg); in[0]++)
			for (in[1] = 0; in[1] < (1 << nlane); in[1]++)
				for (in[2] = 0; in[2] < (1 << (nwarp + nz)); in[2]++) {
					int64_t co[2];

					in[3] = 0;
					lin_apply(&L, in, co);
					tab_elem = co[0] * L.out_size[1] + co[1];
					(void)tab_elem;
					t = in[1] + in[2] * 32;
					s = in[0];
					x[0] = co[0], x[1] = co[1];
					for (x[2] = 0; x[2] < F->rep; x[2]++) {
						ck_assert_int_eq(layout_eval(F, x, y, &e), 0);
						if (y[F->nout] == t)
							break;
					}
					ck_assert_msg(x[2] < F->rep, "seed %d iter %d: thread %lld does not "
						      "hold element (%lld, %lld)", _i, iter, (long long)t,
						      (long long)co[0], (long long)co[1]);
					ck_assert_int_eq(y[0], s);
				}
		arena_free(&a);
	}
}
END_TEST

/* frag_from_linear of the WMMA bases equals wmma_bases.c's own Fragment */
static const struct {
	int version, transposed;
	int64_t rows, cols;
	int nw, nr;
	int64_t wb[4][2], rb[4][2];
} wmmas[] = {
	{3, 0, 32, 32, 2, 0, {{0, 1}, {1, 0}}, {{0}}},
	{1, 1, 32, 32, 1, 1, {{0, 1}}, {{1, 0}}},
	{2, 0, 64, 32, 2, 2, {{1, 0}, {0, 0}}, {{2, 0}, {0, 1}}},
	{3, 1, 16, 64, 1, 1, {{0, 2}}, {{0, 1}}},
};

START_TEST(wmma_same)
{
	int64_t shape[2] = {wmmas[_i].rows, wmmas[_i].cols}, instr[3] = {16, 16, 16};
	int64_t *wv[4], *rv[4];
	int len2[4] = {2, 2, 2, 2}, k;
	IntLists wb = {wmmas[_i].nw, len2, wv}, rb = {wmmas[_i].nr, len2, rv};
	Arena a;
	Err e = {0};
	LinLayout lin;
	Fragment *F, *G;

	for (k = 0; k < 4; k++) {
		wv[k] = (int64_t *)wmmas[_i].wb[k];
		rv[k] = (int64_t *)wmmas[_i].rb[k];
	}
	arena_init(&a);
	F = wmma_bases_fragment(&a, wmmas[_i].version, wmmas[_i].transposed, &wb, &rb, instr, 3, shape,
				2, &e);
	ck_assert_msg(F, "case %d: %s", _i, e.msg);
	ck_assert_int_eq(wmma_bases_linear(&a, wmmas[_i].version, wmmas[_i].transposed, &wb, &rb, instr,
					   3, shape, 2, &lin, &e), 0);
	G = frag_from_linear(&a, &lin, 32, &e);
	ck_assert_msg(G, "case %d: %s", _i, e.msg);
	ck_assert_msg(layout_equal(F, G, &e) == 1, "case %d: %s", _i, e.msg);
	arena_free(&a);
}
END_TEST

static void
setup(void)
{
	if (glob("test/control/*.tile", 0, NULL, &cases) != 0)
		cases.gl_pathc = 0;
}

Suite *
suite_control(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("control");

	setup();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, golden_count);
	if (cases.gl_pathc)
		tcase_add_loop_test(tc, golden_case, 0, (int)cases.gl_pathc);
	tcase_add_loop_test(tc, diagnostic, 0, (int)countof(diags));
	tcase_add_test(tc, hip_no_note);
	tcase_add_loop_test(tc, kind_table, 0, (int)countof(kinds));
	tcase_add_loop_test(tc, linear_property, 0, 4);
	tcase_add_loop_test(tc, wmma_same, 0, (int)countof(wmmas));
	suite_add_tcase(s, tc);
	return s;
}
