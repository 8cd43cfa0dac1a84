/*
 * check_reduce_plan.c: reduce_plan (gen/lower/reduce_plan.c). Each case plans a
 * reduce between two fragments, then simulates on the CPU what the emitted
 * code does (per-thread partials by the plan's slot map, xor shuffles over
 * the lane bits, shared memory over the warp bits) on random integers and
 * compares every holder's result with the reduction done directly; some
 * layouts must be refused with a reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "tests.h"

typedef struct {
	int nin;
	int64_t shape[3];
	const char *thread;
	int64_t rep;
	const char *fwd;
} FSpec;

enum { R_SUM, R_MAX, R_MIN };

static const struct {
	const char *name;
	FSpec src, dst;
	int dim, op;
	int64_t T;
	unsigned mask;     /* the combined bits the plan must find */
	const char *err;   /* a refusal: part of its message */
} cases[] = {
	/* softmax.tile: 4 columns per thread, every thread holds every row result */
	{"rows over all threads", {2, {8, 1024}, "_j // 4", 1, "_i * 4 + _j % 4"},
	 {1, {8}, "_rep", 256, "_i"}, 1, R_MAX, 256, 0xff, NULL},
	{"rows over all threads (sum)", {2, {8, 1024}, "_j // 4", 1, "_i * 4 + _j % 4"},
	 {1, {8}, "_rep", 256, "_i"}, 1, R_SUM, 256, 0xff, NULL},
	/* 8 threads per row: shuffles over lanes 1, 2, 4 only */
	{"row in 8 lanes", {2, {16, 64}, "_i * 8 + _j // 8", 1, "_j % 8"},
	 {1, {16}, "_i * 8 + _rep", 8, "0"}, 1, R_SUM, 128, 0x7, NULL},
	/* columns: lanes 8, 16 by shuffles, warps 32, 64 through shared memory */
	{"columns across warps", {2, {16, 64}, "_i * 8 + _j // 8", 1, "_j % 8"},
	 {1, {64}, "_rep * 8 + _i // 8", 16, "_i % 8"}, 0, R_MIN, 128, 0x78, NULL},
	{"columns, kept dim", {2, {16, 64}, "_i * 8 + _j // 8", 1, "_j % 8"},
	 {2, {1, 64}, "_rep * 8 + _j // 8", 16, "_j % 8"}, 0, R_SUM, 128, 0x78, NULL},
	/* a replicated source: the sum counts each element once */
	{"replicated source", {2, {32, 8}, "_i + _rep * 32", 2, "_j"},
	 {1, {32}, "_i + _rep * 32", 2, "0"}, 1, R_SUM, 64, 0x20, NULL},
	{"replicated source (max)", {2, {32, 8}, "_i + _rep * 32", 2, "_j"},
	 {1, {32}, "_i + _rep * 32", 2, "0"}, 1, R_MAX, 64, 0x20, NULL},
	/* within a thread only: nothing to combine */
	{"row in one thread", {2, {64, 16}, "_i", 1, "_j"},
	 {1, {64}, "_i", 1, "0"}, 1, R_SUM, 64, 0, NULL},
	/* a destination wider than needed (every thread), the source over half the rows per warp */
	{"wide destination", {2, {4, 256}, "_j // 4 % 32 + _i * 32", 1, "_j // 128 * 4 + _j % 4"},
	 {1, {4}, "_rep", 128, "_i"}, 1, R_SUM, 128, 0x7f, NULL},
	/* the mma.sync accumulator of a 128 x 128 tile over 2 x 2 warps (as inference lays it
	 * out for gemm.tile) and the row-max destination inference gives: quads, then N-warps */
	{"mma accumulator rows",
	 {2, {128, 128}, "_j // 64 * 64 + _i // 64 * 32 + _i % 8 * 4 + _j % 8 // 2", 1,
	  "_i // 16 % 4 * 32 + _j // 16 % 4 * 8 + _j % 16 // 8 * 4 + _i % 16 // 8 * 2 + _j % 2"},
	 {1, {128}, "_rep // 4 * 64 + _i // 64 * 32 + _i % 8 * 4 + _rep % 2 + _rep // 2 % 2 * 2", 8,
	  "_i // 8 % 8"}, 1, R_MAX, 128, 0x43, NULL},
	{"mma accumulator columns",
	 {2, {128, 128}, "_j // 64 * 64 + _i // 64 * 32 + _i % 8 * 4 + _j % 8 // 2", 1,
	  "_i // 16 % 4 * 32 + _j // 16 % 4 * 8 + _j % 16 // 8 * 4 + _i % 16 // 8 * 2 + _j % 2"},
	 {1, {128}, "_rep", 128, "_i"}, 0, R_SUM, 128, 0x7f, NULL},
	/* refusals */
	{"slot depends on thread", {2, {2, 32}, "_j", 1, "(_i + _j) % 2"},
	 {1, {2}, "_rep", 32, "_i"}, 1, R_SUM, 32, 0, "different destination slots"},
	{"result not held", {2, {16, 64}, "_i * 8 + _j // 8", 1, "_j % 8"},
	 {1, {16}, "_i * 8", 1, "0"}, 1, R_SUM, 128, 0, "must span all"},
	/* 3 threads: no xor pairs them all */
	{"holders not combinable", {2, {1, 3}, "_j", 1, "0"},
	 {1, {1}, "_rep", 3, "0"}, 1, R_SUM, 3, 0, "cannot combine"},
};

static int64_t
opf(int op, int64_t a, int64_t b)
{
	return op == R_SUM ? a + b : op == R_MAX ? (a > b ? a : b) : (a < b ? a : b);
}

static int64_t
ident(int op)
{
	return op == R_SUM ? 0 : op == R_MAX ? INT64_MIN : INT64_MAX;
}

static Fragment *
mk(Arena *a, const FSpec *s, Err *e)
{
	const char *fwd[1] = {s->fwd};

	return frag_parse(a, s->shape, s->nin, s->thread, s->rep, fwd, 1, e);
}

START_TEST(plan_simulate)
{
	Arena a;
	Err e = {0};
	Fragment *F, *G;
	RedPlan p;
	int64_t *val, *part, *nxt, vals[IEXPR_NVARS] = {0}, x[LAYOUT_MAXDIM + 1], T, t, s, g, n, i, y;
	int64_t NX, NY, *want, b;
	int d, kb, rc, op = cases[_i].op, keep;
	unsigned seed = 12345u + (unsigned)_i;

	arena_init(&a);
	F = mk(&a, &cases[_i].src, &e);
	G = F ? mk(&a, &cases[_i].dst, &e) : NULL;
	ck_assert_msg(G != NULL, "%s: %s", cases[_i].name, e.msg);
	rc = reduce_plan(&a, F, G, cases[_i].dim, op == R_SUM, cases[_i].T, &p, &e);
	if (cases[_i].err || rc) {
		ck_assert_msg(rc == -1, "%s: planned, expected a refusal", cases[_i].name);
		ck_assert_msg(!cases[_i].err || strstr(e.msg, cases[_i].err), "%s: %s", cases[_i].name, e.msg);
		arena_free(&a);
		return;
	}
	ck_assert_msg(p.mask == cases[_i].mask, "%s: mask 0x%x, want 0x%x", cases[_i].name, p.mask,
		      cases[_i].mask);
	T = p.T;
	keep = G->nin == F->nin;
	NX = layout_size(F), NY = layout_size(G);
	val = calloc((size_t)NX, sizeof *val);
	want = calloc((size_t)NY, sizeof *want);
	part = calloc((size_t)(T * p.SG), sizeof *part);
	nxt = calloc((size_t)(T * p.SG), sizeof *nxt);
	for (i = 0; i < NX; i++) {
		seed = seed * 1103515245u + 12345u;
		val[i] = (int64_t)(seed >> 16 & 0xffff) - 32768;
	}
	/* the reduction done directly */
	for (y = 0; y < NY; y++)
		want[y] = ident(op);
	for (i = 0; i < NX; i++) {
		int64_t r = i, c[3], yy = 0;

		for (d = F->nin - 1; d >= 0; d--)
			c[d] = r % F->in_shape[d], r /= F->in_shape[d];
		for (d = 0; d < F->nin; d++)
			if (d != cases[_i].dim)
				yy = yy * F->in_shape[d] + c[d];
			else if (keep)
				yy = yy * 1;
		want[yy] = opf(op, want[yy], val[i]);
	}
	/* 1: per-thread partials through gs (replicas skipped for sum) */
	for (t = 0; t < T; t++) {
		for (g = 0; g < p.SG; g++)
			part[t * p.SG + g] = ident(op);
		for (s = 0; s < p.S; s++) {
			int64_t flat = 0;

			if (p.gs[s] < 0)
				continue;
			vals[0] = s, vals[1] = t;
			for (d = 0; d <= F->nin; d++)
				ck_assert_int_eq(iexpr_eval(p.src[d], vals, &x[d], NULL), 0);
			if (op == R_SUM && x[F->nin] != 0)
				continue;
			for (d = 0; d < F->nin; d++)
				flat = flat * F->in_shape[d] + x[d];
			if (p.gx) {
				ck_assert_int_eq(iexpr_eval(p.gx, vals, &n, NULL), 0);
				ck_assert_int_eq(n, p.gs[s]);
			}
			part[t * p.SG + p.gs[s]] = opf(op, part[t * p.SG + p.gs[s]], val[flat]);
		}
	}
	/* 2: xor shuffles over the lane bits */
	for (b = 1; b < 32 && b < T; b <<= 1) {
		if (!(p.mask & b))
			continue;
		for (t = 0; t < T; t++)
			for (g = 0; g < p.SG; g++)
				nxt[t * p.SG + g] = opf(op, part[t * p.SG + g], part[(t ^ b) * p.SG + g]);
		memcpy(part, nxt, (size_t)(T * p.SG) * sizeof *part);
	}
	/* 3: shared memory over the warp bits, read from the group's first lanes */
	for (kb = 0; kb < 5 && (p.mask >> kb & 1); kb++)
		;
	for (t = 0; t < T; t++)
		for (g = 0; g < p.SG; g++) {
			int64_t v = ident(op), m;

			if (!(p.mask & ~31u)) {
				nxt[t * p.SG + g] = part[t * p.SG + g];
				continue;
			}
			for (m = 0; m < T; m += 32)
				if ((m & ~(int64_t)p.mask) == 0)
					v = opf(op, v, part[((t ^ m) >> kb << kb) * p.SG + g]);
			nxt[t * p.SG + g] = v;
		}
	/* every holder has the whole reduction */
	for (t = 0; t < T; t++)
		for (g = 0; g < p.SG; g++) {
			int64_t flat = 0;

			vals[0] = g, vals[1] = t;
			for (d = 0; d < G->nin; d++) {
				ck_assert_int_eq(iexpr_eval(p.dst[d], vals, &x[d], NULL), 0);
				flat = flat * G->in_shape[d] + x[d];
			}
			ck_assert_msg(nxt[t * p.SG + g] == want[flat], "%s: thread %lld slot %lld: %lld, want %lld",
				      cases[_i].name, (long long)t, (long long)g, (long long)nxt[t * p.SG + g],
				      (long long)want[flat]);
		}
	free(val), free(want), free(part), free(nxt);
	arena_free(&a);
}
END_TEST

START_TEST(plan_errors)
{
	Arena a;
	Err e = {0};
	RedPlan p;
	Fragment *F;
	FSpec s = {2, {8, 32}, "_j", 1, "_i"};

	arena_init(&a);
	ck_assert_int_eq(reduce_plan(NULL, NULL, NULL, 0, 0, 32, &p, &e), -1);
	F = mk(&a, &s, &e);
	ck_assert_ptr_nonnull(F);
	ck_assert_int_eq(reduce_plan(&a, F, F, 5, 0, 32, &p, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "out of range"));
	ck_assert_int_eq(reduce_plan(&a, F, F, 1, 0, 32, &p, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "shape"));
	arena_free(&a);
}
END_TEST


/* the compiled tabulation of the plan (destination table, feeds) against the reference
 * walk (lw_reference_walks: iexpr_eval per pair) on every case, refusals included */
START_TEST(plan_reference)
{
	Arena a;
	Err e0 = {0}, e1 = {0};
	Fragment *F, *G;
	RedPlan p0, p1;
	int rc0, rc1, op = cases[_i].op;
	int64_t s;

	arena_init(&a);
	F = mk(&a, &cases[_i].src, &e0);
	G = F ? mk(&a, &cases[_i].dst, &e0) : NULL;
	ck_assert_msg(G != NULL, "%s: %s", cases[_i].name, e0.msg);
	rc0 = reduce_plan(&a, F, G, cases[_i].dim, op == R_SUM, cases[_i].T, &p0, &e0);
	lw_reference_walks = 1;
	rc1 = reduce_plan(&a, F, G, cases[_i].dim, op == R_SUM, cases[_i].T, &p1, &e1);
	lw_reference_walks = 0;
	ck_assert_msg(rc0 == rc1, "%s: rc %d, reference %d", cases[_i].name, rc0, rc1);
	if (rc0) {
		ck_assert_str_eq(e0.msg, e1.msg);
	} else {
		ck_assert_int_eq(p0.mask, p1.mask);
		ck_assert_int_eq(p0.S, p1.S);
		ck_assert_int_eq(p0.SG, p1.SG);
		for (s = 0; s < p0.S; s++)
			ck_assert_int_eq(p0.gs[s], p1.gs[s]);
		ck_assert_int_eq(p0.gx != NULL, p1.gx != NULL);
		if (p0.gx)
			ck_assert_str_eq(iexpr_str(&a, p0.gx), iexpr_str(&a, p1.gx));
	}
	arena_free(&a);
}
END_TEST

Suite *
suite_reduce_plan(void)
{
	Suite *s = suite_create("reduce_plan");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, plan_simulate, 0, countof(cases));
	tcase_add_test(tc, plan_errors);
	tcase_add_loop_test(tc, plan_reference, 0, countof(cases));
	suite_add_tcase(s, tc);
	return s;
}
