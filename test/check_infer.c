/*
 * check_infer.c: layout inference. The harness (every .tile file in test/layout/
 * under both cost models against test/layout/golden/NAME.MODEL.txt; record
 * with UPDATE_GOLDEN=1), the samples, table tests of the op rules and the
 * pathological cases, diagnostics, determinism, and a growth benchmark.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "ast.h"
#include "infer.h"
#include "sema.h"
#include "tests.h"
#include "tilec.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

static glob_t cases;
static const char *const models[] = {"io-aware", "register-count"};

static tilec_status
run(const char *src, size_t len, const char *file, tilec_cost_model m, tilec_dump dump,
    tilec_result *r)
{
	tilec_options o;

	tilec_options_init(&o);
	o.filename = file;
	o.dump = dump;
	o.cost_model = m;
	return tilec_compile(src, len, &o, r);
}

/* ---- the harness ------------------------------------------------------- */

START_TEST(harness_case)
{
	const char *path = cases.gl_pathv[_i / 2];
	const char *base = strrchr(path, '/') + 1;
	char golden[512], msg[1024];
	tilec_result r;
	size_t len;
	char *src = test_readfile(path, &len);

	ck_assert_ptr_nonnull(src);
	run(src, len, path, (tilec_cost_model)(_i % 2), TILEC_DUMP_LAYOUTS, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s (%s): %s", path, models[_i % 2], r.diagnostics);
	snprintf(golden, sizeof golden, "test/layout/golden/%.*s.%s.txt",
		 (int)(strlen(base) - 5), base, models[_i % 2]);
	ck_assert_msg(test_golden(golden, r.output, msg, sizeof msg) == 0, "%s", msg);
	tilec_result_free(&r);
	free(src);
}
END_TEST

START_TEST(harness_size)
{
	ck_assert_msg(cases.gl_pathc >= 10, "only %zu harness cases", cases.gl_pathc);
}
END_TEST

/* the symbolic scorer and the brute-force oracle agree on the inferred
 * layouts of every harness case, for every kernel's statements */
static int
members(IrStmt *s, IrStmt **out, int n)
{
	for (; s; s = s->next) {
		switch (s->kind) {
		case S_COPY: case S_FILL: case S_PARALLEL: case S_GEMM: case S_REDUCE:
			out[n++] = s;
			break;
		case S_FOR: n = members(s->u.loop.body, out, n); break;
		case S_PIPELINE: n = members(s->u.pipe.body, out, n); break;
		case S_IF:
			n = members(s->u.cond.then, out, n);
			n = members(s->u.cond.els, out, n);
			break;
		default: break;
		}
	}
	return n;
}

static void
fill_loops(IrStmt *s, LayoutMap *m)
{
	for (; s; s = s->next) {
		if (s->id > 0 && s->id < m->nstmt)
			m->loop[s->id] = s->loop_layout;
		if (s->kind == S_FOR)
			fill_loops(s->u.loop.body, m);
		else if (s->kind == S_PIPELINE)
			fill_loops(s->u.pipe.body, m);
		else if (s->kind == S_IF) {
			fill_loops(s->u.cond.then, m);
			fill_loops(s->u.cond.els, m);
		} else if (s->kind == S_PARALLEL)
			fill_loops(s->u.par.body, m);
	}
}

START_TEST(oracle_agrees)
{
	const char *path = cases.gl_pathv[_i / 2];
	CostModelKind model = _i % 2 ? COST_REGISTER_COUNT : COST_IO_AWARE;
	Arena a;
	Diags d;
	Err e = {0};
	Node *top;
	IrProgram *p;
	IrKernel *k;
	const Target *t;
	size_t len;
	char *src = test_readfile(path, &len);

	ck_assert_ptr_nonnull(src);
	arena_init(&a);
	diags_init(&d, &a);
	top = parse_program(&a, &d, src, len, path);
	p = top ? sema_program(&a, &d, top, NULL, 0, path) : NULL;
	ck_assert_msg(p && !d.nerr, "%s: front end failed", path);
	t = target_lookup(TGT_CUDA, "sm_80", &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(infer_program(&a, &d, p, t, model, NULL), 0);
	for (k = p->kernels; k; k = k->next) {
		IrStmt *ms[512];
		LayoutMap m;
		Cost c1, c2;
		int n = members(k->body, ms, 0), b;

		m.nbuf = k->nbuf;
		m.buf = anewn(&a, Layout *, k->nbuf + 1);
		for (b = 0; b < k->nbuf; b++)
			m.buf[b] = k->bufs[b].layout;
		m.nstmt = 4096;
		m.loop = anewn(&a, Layout *, m.nstmt);
		fill_loops(k->body, &m);
		ck_assert_msg(cost_score(&a, model, t, k, ms, n, &m, &c1, &e) == 0, "%s: %s", path, e.msg);
		ck_assert_msg(cost_oracle(&a, model, t, k, ms, n, &m, &c2, &e) == 0, "%s: %s", path, e.msg);
		ck_assert_msg(c1.mem == c2.mem && c1.regs == c2.regs,
			      "%s (%s): scorer mem %lld regs %lld, oracle mem %lld regs %lld", path,
			      cost_model_name(model), (long long)c1.mem, (long long)c1.regs,
			      (long long)c2.mem, (long long)c2.regs);
	}
	arena_free(&a);
	free(src);
}
END_TEST

/* every sample infers under both models, every local tile and nest gets a layout */
static const char *const samples[] = {
	"samples/copy.tile", "samples/elementwise.tile", "samples/gemm.tile",
	"samples/gemm_bf16.tile", "samples/softmax.tile", "samples/transpose.tile",
};

START_TEST(sample_infers)
{
	const char *path = samples[_i / 2];
	tilec_result r;
	size_t len;
	char *src = test_readfile(path, &len);

	ck_assert_ptr_nonnull(src);
	run(src, len, path, (tilec_cost_model)(_i % 2), TILEC_DUMP_LAYOUTS, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s: %s", path, r.diagnostics);
	ck_assert_ptr_null(strstr(r.output, "(none)"));
	tilec_result_free(&r);
	free(src);
}
END_TEST

/* ---- rules and pathological cases: substrings of the layout dump --------- */

static const struct {
	const char *name, *src;
	int model;           /* 0 io-aware, 1 register-count */
	const char *want;    /* must appear in the dump */
	const char *reject;  /* must not appear (NULL: no check) */
} rules[] = {
	{"plan_f16_vec8",
	 "kernel k(A: f16[64, 64], B: f16[64, 64]) grid(1) threads(128) {\n"
	 "  local t: f16[64, 64];\n  copy(A[0, 0], t);\n  copy(t, B[0, 0]);\n}\n", 0,
	 "forward_thread: (_i * 8 + _j // 8) % 128, forward_index: [(_i * 8 + _j // 8) // 128 * 8 + _j % 8]",
	 NULL},
	{"plan_f32_vec4",
	 "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n"
	 "  local t: f32[64, 64];\n  copy(A[0, 0], t);\n  copy(t, B[0, 0]);\n}\n", 0,
	 "forward_thread: (_i * 16 + _j // 4) % 128", NULL},
	{"plan_fp8_vec16",
	 "kernel k(A: fp8_e5m2[64, 128], B: fp8_e5m2[64, 128]) grid(1) threads(128) {\n"
	 "  local t: fp8_e5m2[64, 128];\n  copy(A[0, 0], t);\n  copy(t, B[0, 0]);\n}\n", 0,
	 "forward_thread: (_i * 8 + _j // 16) % 128", NULL},
	/* #2398: 229 over 128 threads gets uneven slots, not "no layout" */
	{"ragged_229",
	 "kernel k(A: f32[229], B: f32[229]) grid(1) threads(128) {\n"
	 "  local t: f32[229];\n  copy(A[0], t);\n  for i in parallel(229) { t[i] = t[i] + 1.0; }\n"
	 "  copy(t, B[0]);\n}\n", 0,
	 "Fragment([229] -> [2], replicate: 1, thread: 128, forward_thread: _i % 128", NULL},
	/* a fragment smaller than the block is replicated to fill it */
	{"small_replicated",
	 "kernel k(A: f32[32], B: f32[32]) grid(1) threads(128) {\n"
	 "  local t: f32[32];\n  copy(A[0], t);\n  for i in parallel(32) { t[i] = t[i] * 2.0; }\n"
	 "  copy(t, B[0]);\n}\n", 0, "replicate: 4, thread: 128", NULL},
	/* reduce: the result is replicated over the threads of a row */
	{"reduce_rows",
	 "kernel k(X: f32[16, 64], Y: f32[16]) grid(1) threads(128) {\n"
	 "  local x: f32[16, 64];\n  local m: f32[16];\n  copy(X[0, 0], x);\n"
	 "  reduce(x, m, op = sum, dim = 1);\n  copy(m, Y[0]);\n}\n", 0,
	 "local m: f32[16]\n    Fragment([16] -> [2], replicate: 16, thread: 128", NULL},
	/* #1729: io-aware spreads the big loop over all threads, register-count
	 * collapses it onto the tiny fragment's owners (replicated) */
	{"tiny_frag_io",
	 "kernel k(S: f32[2], O: f32[2, 2560]) grid(1) threads(256) {\n  local s: f32[2];\n"
	 "  copy(S[0], s);\n  for i, j in parallel(2, 2560) { O[i, j] = s[i] * 2.0; }\n}\n", 0,
	 "Fragment([2, 2560] -> [20], replicate: 1, thread: 256", NULL},
	{"tiny_frag_regs",
	 "kernel k(S: f32[2], O: f32[2, 2560]) grid(1) threads(256) {\n  local s: f32[2];\n"
	 "  copy(S[0], s);\n  for i, j in parallel(2, 2560) { O[i, j] = s[i] * 2.0; }\n}\n", 1,
	 "Fragment([2, 2560] -> [2560], replicate: 128", NULL},
	/* #2957: the smaller loop must not pin the tile: the full loop gives it */
	{"small_loop_no_pin",
	 "kernel k(A: f32[256], B: f32[256]) grid(1) threads(128) {\n  local x: f32[256];\n"
	 "  for i in parallel(64) { x[i] = 0.0; }\n  for i in parallel(256) { x[i] = A[i]; }\n"
	 "  copy(x, B[0]);\n}\n", 0, "local x: f32[256]\n    Fragment([256] -> [2]", NULL},
	/* #1719: reduce keeps the destination's existing (narrower) layout */
	{"reduce_no_widen",
	 "kernel k(X: f32[16, 512], M: f32[16], Y: f32[16]) grid(1) threads(128) {\n"
	 "  local x: f32[16, 512];\n  local m: f32[16];\n  for i in parallel(16) { m[i] = M[i]; }\n"
	 "  copy(X[0, 0], x);\n  reduce(x, m, op = max, dim = 1, clear = false);\n  copy(m, Y[0]);\n}\n",
	 1, "local m: f32[16]\n    Fragment([16] -> [1], replicate: 8, thread: 128, forward_thread: _i + _rep * 16",
	 NULL},
	/* gemm: accumulator from the plan, operands swizzled */
	{"gemm_acc",
	 "kernel k(A: f16[64, 32], B: f16[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
	 "  shared a: f16[64, 32];\n  shared b: f16[32, 64];\n  local c: f32[64, 64];\n"
	 "  clear(c);\n  copy(A[0, 0], a);\n  copy(B[0, 0], b);\n  gemm(a, b, c);\n"
	 "  copy(c, C[0, 0]);\n}\n", 0, "local c: f32[64, 64]\n    Fragment([64, 64] -> [32]",
	 "(none)"},
	/* TileLang's candidate rule: the nest reads a fully replicated tile (written by a serial
	 * loop); the replicated candidate contains the plan, so the plan is taken: 4 points per
	 * thread, not all 512 in every thread (both cost models) */
	{"candidate_gives_plan",
	 "kernel k(A: f32[512], B: f32[512]) grid(1) threads(128) {\n  local x: f32[512];\n"
	 "  for i in range(512) { x[i] = A[i] * 3.0; }\n  for i in parallel(512) { B[i] = x[i] * 2.0; }\n}\n", 0,
	 "parallel #3 at 4:3\n    Fragment([512] -> [4], replicate: 1, thread: 128", NULL},
	{"candidate_gives_plan_regs",
	 "kernel k(A: f32[512], B: f32[512]) grid(1) threads(128) {\n  local x: f32[512];\n"
	 "  for i in range(512) { x[i] = A[i] * 3.0; }\n  for i in parallel(512) { B[i] = x[i] * 2.0; }\n}\n", 1,
	 "parallel #3 at 4:3\n    Fragment([512] -> [4], replicate: 1, thread: 128", NULL},
	/* parallel(..., layout = cute(...)): the given loop layout, and the tile it writes gets it */
	{"given_loop_layout",
	 "kernel k(A: f32[32, 32], B: f32[32, 32]) grid(1) threads(128) {\n  local x: f32[32, 32];\n"
	 "  for i, j in parallel(32, 32, layout = cute(\"(_128,_8):(_1,_128)\")) { x[i, j] = A[i, j]; }\n"
	 "  copy(x, B[0, 0]);\n}\n", 0,
	 "local x: f32[32, 32]\n    Fragment([32, 32] -> [8], replicate: 1, thread: 128, forward_thread: _j + _i % 4 * 32, "
	 "forward_index: [_i // 4])", NULL},
	/* contiguity: the nest's accesses are contiguous in i, not in the last variable j: the
	 * partition with threads along i (4 per thread, coalesced) beats the plan (threads
	 * along j: every access 64 elements apart) under io-aware */
	{"contiguous_in_i",
	 "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n"
	 "  for i, j in parallel(64, 64) { B[j, i] = A[j, i] * 2.0; }\n}\n", 0,
	 "parallel #1 at 2:3\n    Fragment([64, 64] -> [32], replicate: 1, thread: 128, forward_thread: "
	 "(_j * 16 + _i // 4) % 128", NULL},
	/* the register tile is stored transposed: the store side's partition (threads along i)
	 * costs less than the load side's (test/layout/transposed_store.tile) */
	{"transposed_store_side",
	 "kernel k(A: f32[512, 512], B: f32[512, 512]) grid(8, 16) threads(128) {\n"
	 "  local r: f32[32, 64];\n  copy(A[by * 32, bx * 64], r);\n"
	 "  for i, j in parallel(32, 64) { B[bx * 64 + j, by * 32 + i] = r[i, j]; }\n}\n", 0,
	 "local r: f32[32, 64]\n    Fragment([32, 64] -> [16], replicate: 1, thread: 128, forward_thread: "
	 "(_j * 8 + _i // 4) % 128", NULL},
	/* a transpose through registers costs the same either way: the tie keeps the plan */
	{"transpose_tie_keeps_plan",
	 "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n"
	 "  local r: f32[64, 64];\n  copy(A[0, 0], r);\n"
	 "  for i, j in parallel(64, 64) { B[j, i] = r[i, j]; }\n}\n", 0,
	 "local r: f32[64, 64]\n    Fragment([64, 64] -> [32], replicate: 1, thread: 128, forward_thread: "
	 "(_i * 16 + _j // 4) % 128", NULL},
	/* register-count sees no difference: the plan stays */
	{"contiguous_in_i_regs",
	 "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n"
	 "  for i, j in parallel(64, 64) { B[j, i] = A[j, i] * 2.0; }\n}\n", 1,
	 "parallel #1 at 2:3\n    Fragment([64, 64] -> [32], replicate: 1, thread: 128, forward_thread: "
	 "(_i * 16 + _j // 4) % 128", NULL},
	/* a transposed read of a tile through the loop: the loop follows the written tile */
	{"transposed_read",
	 "kernel k(A: f32[32, 32], B: f32[32, 32]) grid(1) threads(128) {\n"
	 "  local a: f32[32, 32];\n  local b: f32[32, 32];\n  copy(A[0, 0], a);\n"
	 "  for i, j in parallel(32, 32) { b[i, j] = a[j, i]; }\n  copy(b, B[0, 0]);\n}\n", 0,
	 "local b: f32[32, 32]", "(none)"},
};

START_TEST(rule)
{
	tilec_result r;

	run(rules[_i].src, strlen(rules[_i].src), rules[_i].name, (tilec_cost_model)rules[_i].model,
	    TILEC_DUMP_LAYOUTS, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s: %s", rules[_i].name, r.diagnostics);
	ck_assert_msg(strstr(r.output, rules[_i].want) != NULL, "%s: wanted\n%s\nin\n%s",
		      rules[_i].name, rules[_i].want, r.output);
	if (rules[_i].reject)
		ck_assert_msg(strstr(r.output, rules[_i].reject) == NULL, "%s: unwanted %s in\n%s",
			      rules[_i].name, rules[_i].reject, r.output);
	tilec_result_free(&r);
}
END_TEST

/* ---- diagnostics --------------------------------------------------------- */

static const struct {
	const char *name, *src;
	const char *want[4];   /* substrings of the diagnostics */
} diags[] = {
	/* two gemm accumulators read transposed against each other in one nest */
	{"frag_conflict",
	 "kernel k(A: f16[64, 32], B: f16[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
	 "  shared a: f16[64, 32];\n  shared b: f16[32, 64];\n  local c: f32[64, 64];\n"
	 "  local d: f32[64, 64];\n  gemm(a, b, c);\n  gemm(a, b, d);\n"
	 "  for i, j in parallel(64, 64) { c[i, j] = d[j, i]; }\n  copy(c, C[0, 0]);\n}\n",
	 {"frag_conflict:8:3: error: layout inference:", "reads 'd'", "set by gemm at 7:3",
	  "Fragment([64, 64]"}},
	/* #2642: an annotated padded layout and the gemm's swizzle do not merge */
	{"smem_conflict",
	 "kernel k(A: f16[64, 32], B: f16[32, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
	 "  shared a: f16[64, 32];\n  shared b: f16[32, 64];\n  local c: f32[64, 64];\n"
	 "  annotate_layout(a, padded);\n  gemm(a, b, c);\n  copy(c, C[0, 0]);\n}\n",
	 {"conflicting layouts for 'a': annotate_layout at 5:3 wants Layout(", "but gemm at 6:3 wants",
	  NULL}},
	/* every root fails: the loop writes part of the tile only; each root's reason */
	{"every_root",
	 "kernel k(A: f32[256], B: f32[256]) grid(1) threads(128) {\n  local x: f32[256];\n"
	 "  for i in parallel(64) { x[i] = A[i]; }\n  for i in parallel(32) { x[i + 64] = A[i]; }\n}\n",
	 {"every_root:3:3: error: layout inference: no layout for the 2 statements",
	  "every_root:3:3: note: with this parallel as root:", "every_root:4:3: note: with this parallel as root:",
	  "covers only part of 'x'"}},
};

START_TEST(diagnostic)
{
	tilec_result r;
	int j;

	run(diags[_i].src, strlen(diags[_i].src), diags[_i].name, TILEC_COST_IO_AWARE,
	    TILEC_DUMP_LAYOUTS, &r);
	ck_assert_int_eq(r.status, TILEC_ERROR);
	ck_assert_ptr_null(strstr(r.diagnostics, "no layout found"));
	for (j = 0; j < 4 && diags[_i].want[j]; j++)
		ck_assert_msg(strstr(r.diagnostics, diags[_i].want[j]) != NULL, "%s: wanted\n%s\nin\n%s",
			      diags[_i].name, diags[_i].want[j], r.diagnostics);
	tilec_result_free(&r);
}
END_TEST

/* ---- --explain, determinism ------------------------------------------------ */

START_TEST(explain_costs)
{
	const char *src =
		"kernel k(S: f32[2], O: f32[2, 2560]) grid(1) threads(256) {\n  local s: f32[2];\n"
		"  copy(S[0], s);\n  for i, j in parallel(2, 2560) { O[i, j] = s[i] * 2.0; }\n}\n";
	tilec_result r;

	run(src, strlen(src), "x", TILEC_COST_IO_AWARE, TILEC_DUMP_EXPLAIN, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_ptr_nonnull(strstr(r.output, "root copy #1 at 3:3: mem "));
	ck_assert_ptr_nonnull(strstr(r.output, "root parallel #2 at 4:3: mem "));
	ck_assert_ptr_nonnull(strstr(r.output, "    parallel #2 at 4:3: mem "));
	ck_assert_ptr_nonnull(strstr(r.output, "chosen: root parallel #2 at 4:3"));
	ck_assert_ptr_null(strstr(r.output, "loop layout: "));
	tilec_result_free(&r);
	/* a loop layout the program gives is listed */
	src = "kernel k(A: f32[32, 32], B: f32[32, 32]) grid(1) threads(128) {\n  local x: f32[32, 32];\n"
	      "  for i, j in parallel(32, 32, layout = cute(\"(_128,_8):(_8,_1)\")) { x[i, j] = A[i, j]; }\n"
	      "  copy(x, B[0, 0]);\n}\n";
	run(src, strlen(src), "x", TILEC_COST_IO_AWARE, TILEC_DUMP_EXPLAIN, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_msg(strstr(r.output, "  parallel #1 at 3:3: loop layout given by the program\n"), "%s", r.output);
	tilec_result_free(&r);
	/* the candidate rule's choice is said next to the nest */
	src = "kernel k(A: f32[512], B: f32[512]) grid(1) threads(128) {\n  local x: f32[512];\n"
	 "  for i in range(512) { x[i] = A[i] * 3.0; }\n  for i in parallel(512) { B[i] = x[i] * 2.0; }\n}\n";
	run(src, strlen(src), "x", TILEC_COST_IO_AWARE, TILEC_DUMP_EXPLAIN, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_msg(strstr(r.output, "    parallel #3 at 4:3: mem 2048 (bw 2048, issue 2048, vec 4)\n"
				     "      loop layout: the planned partition: 'x' (128 replicas) holds every "
				     "point of it\n"), "%s", r.output);
	tilec_result_free(&r);
	/* the partition an access's contiguity suggests is a root of its own, and says why */
	src = "kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n"
	      "  for i, j in parallel(64, 64) { B[j, i] = A[j, i] * 2.0; }\n}\n";
	run(src, strlen(src), "x", TILEC_COST_IO_AWARE, TILEC_DUMP_EXPLAIN, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_msg(strstr(r.output, "  root parallel #1 at 2:3: mem 524288 regs 0\n"), "%s", r.output);
	ck_assert_msg(strstr(r.output, "  root parallel (threads along 'i': 'A' is contiguous in it) #1 at "
				     "2:3: mem 32768 regs 0\n"), "%s", r.output);
	ck_assert_msg(strstr(r.output, "      loop layout: parallel (threads along 'i': 'A' is contiguous "
				     "in it)\n"), "%s", r.output);
	ck_assert_msg(strstr(r.output, "  chosen: root parallel (threads along 'i'"), "%s", r.output);
	tilec_result_free(&r);
}
END_TEST

START_TEST(deterministic)
{
	size_t len;
	char *src = test_readfile("samples/softmax.tile", &len);
	tilec_result r1, r2;

	ck_assert_ptr_nonnull(src);
	run(src, len, "s", TILEC_COST_IO_AWARE, TILEC_DUMP_LAYOUTS, &r1);
	run(src, len, "s", TILEC_COST_IO_AWARE, TILEC_DUMP_LAYOUTS, &r2);
	ck_assert_int_eq(r1.status, TILEC_OK);
	ck_assert_str_eq(r1.output, r2.output);
	tilec_result_free(&r1);
	tilec_result_free(&r2);
	free(src);
}
END_TEST

/* ---- property: random element-wise programs always infer ------------------ */

static unsigned
rnd(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

START_TEST(random_programs)
{
	static const int64_t exts[] = {2, 3, 7, 16, 24, 40, 48, 96, 128, 192, 229};
	static const char *const types[] = {"f16", "f32", "bf16", "fp8_e4m3", "i8"};
	static const int threads[] = {32, 64, 128, 256};
	unsigned seed = 1234u + (unsigned)_i;
	char src[2048];
	tilec_result r;
	int iter;

	for (iter = 0; iter < 8; iter++) {
		int64_t m = exts[rnd(&seed) % countof(exts)], n = exts[rnd(&seed) % countof(exts)];
		const char *ta = types[rnd(&seed) % countof(types)], *tb = types[rnd(&seed) % countof(types)];
		int t = threads[rnd(&seed) % countof(threads)], red = (int)(rnd(&seed) % 2);

		snprintf(src, sizeof src,
			"kernel k(A: %s[%lld, %lld], B: %s[%lld, %lld], R: f32[%lld]) grid(1) threads(%d) {\n"
			"  local a: %s[%lld, %lld];\n  local b: %s[%lld, %lld];\n  local s: f32[%lld];\n"
			"  copy(A[0, 0], a);\n"
			"  for i, j in parallel(%lld, %lld) { b[i, j] = %s(a[i, j]); }\n"
			"  %s\n  copy(b, B[0, 0]);\n}\n",
			ta, (long long)m, (long long)n, tb, (long long)m, (long long)n, (long long)m, t,
			ta, (long long)m, (long long)n, tb, (long long)m, (long long)n, (long long)m,
			(long long)m, (long long)n, tb,
			red ? "reduce(b, s, op = sum, dim = 1);\n  copy(s, R[0]);" : "");
		run(src, strlen(src), "rand", (tilec_cost_model)(iter % 2), TILEC_DUMP_LAYOUTS, &r);
		ck_assert_msg(r.status == TILEC_OK, "seed %d iter %d:\n%s\n%s", _i, iter, src,
			      r.diagnostics);
		ck_assert_ptr_null(strstr(r.output, "(none)"));
		tilec_result_free(&r);
	}
}
END_TEST

/* ---- the command line: --dump=layouts, --explain, --cost-model ---------- */

static const struct {
	const char *args;
	int status;
	const char *want;   /* in the combined output */
} clis[] = {
	{"--dump=layouts test/layout/tiny_frag.tile", 0, "parallel #2 at 7:5\n    Fragment([2, 2560] -> [20]"},
	{"--dump=layouts --cost-model=register-count test/layout/tiny_frag.tile", 0,
	 "parallel #2 at 7:5\n    Fragment([2, 2560] -> [2560], replicate: 128"},
	{"--explain test/layout/tiny_frag.tile", 0, "chosen: root parallel #2 at 7:5"},
	{"--explain --cost-model=register-count test/layout/tiny_frag.tile", 0, "chosen: root copy #1 at 6:5"},
	{"--cost-model=fast test/layout/tiny_frag.tile", 2, "unknown cost model 'fast'"},
	{"--dump=nonsense test/layout/tiny_frag.tile", 2, "ast, ir, layouts or cuda"},
};

START_TEST(cli)
{
	const char *tilec = getenv("TILEC") ? getenv("TILEC") : "build/tilec";
	char cmd[1024], buf[4096];
	Buf out;
	FILE *f;
	size_t n;
	int st;

	snprintf(cmd, sizeof cmd, "%s %s 2>&1", tilec, clis[_i].args);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	buf_init(&out);
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		buf_putn(&out, buf, n);
	st = pclose(f);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == clis[_i].status, "%s: status %d\n%s", cmd,
		      st, buf_str(&out));
	ck_assert_msg(strstr(buf_str(&out), clis[_i].want) != NULL, "%s: wanted %s in\n%s", cmd,
		      clis[_i].want, buf_str(&out));
	buf_free(&out);
}
END_TEST

/* ---- speed: one component of n parallel statements chained through tiles ---- */

static char *
chain(int n)
{
	size_t cap = (size_t)n * 128 + 1024, off = 0;
	char *s = malloc(cap);
	int i;

	off += (size_t)snprintf(s + off, cap - off,
		"kernel k(A: f32[64, 64], B: f32[64, 64]) grid(1) threads(128) {\n");
	for (i = 0; i <= n / 8; i++)
		off += (size_t)snprintf(s + off, cap - off, "  local t%d: f32[64, 64];\n", i);
	off += (size_t)snprintf(s + off, cap - off, "  copy(A[0, 0], t0);\n");
	for (i = 1; i < n - 1; i++)
		off += (size_t)snprintf(s + off, cap - off,
			"  for i, j in parallel(64, 64) { t%d[i, j] = t%d[i, j] + 1.0; }\n",
			(i + 1) / 8, i / 8);
	off += (size_t)snprintf(s + off, cap - off, "  copy(t%d, B[0, 0]);\n}\n", (n - 1) / 8);
	return s;
}

START_TEST(speed_200)
{
	char *src = chain(200);
	tilec_result r;
	struct timespec a, b;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	run(src, strlen(src), "chain", TILEC_COST_IO_AWARE, TILEC_DUMP_NONE, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	/* the figure is measured in test/bench/infer.sh; this only catches blow-ups
	 * (the sanitizer build is several times slower) */
	ck_assert_msg(ms < 2000, "200 statements took %.0f ms", ms);
	tilec_result_free(&r);
	free(src);
}
END_TEST

Suite *
suite_infer(void)
{
	Suite *s = suite_create("infer");
	TCase *tc = tcase_create("infer");

	tcase_set_timeout(tc, 120);
	if (glob("test/layout/*.tile", 0, NULL, &cases) != 0)
		cases.gl_pathc = 0;
	tcase_add_test(tc, harness_size);
	if (cases.gl_pathc)
		tcase_add_loop_test(tc, harness_case, 0, (int)cases.gl_pathc * 2);
	if (cases.gl_pathc)
		tcase_add_loop_test(tc, oracle_agrees, 0, (int)cases.gl_pathc * 2);
	tcase_add_loop_test(tc, sample_infers, 0, (int)countof(samples) * 2);
	tcase_add_loop_test(tc, rule, 0, (int)countof(rules));
	tcase_add_loop_test(tc, diagnostic, 0, (int)countof(diags));
	tcase_add_test(tc, explain_costs);
	tcase_add_test(tc, deterministic);
	tcase_add_test(tc, speed_200);
	tcase_add_loop_test(tc, random_programs, 0, 6);
	tcase_add_loop_test(tc, cli, 0, (int)countof(clis));
	suite_add_tcase(s, tc);
	return s;
}
