/* check_iexpr.c: integer expressions: printing, simplification, parsing,
 * bounds, evaluation, compiled programs; property tests over random trees. */
#include <stdlib.h>
#include <string.h>

#include "iexpr.h"
#include "tests.h"

/* parse, simplify under dom [16, 32, 8] (_rep 4), print */
static const struct {
	const char *in, *out;
} simp_cases[] = {
	{"_i % 8 * 16 + _j // 8", "_i % 8 * 16 + _j // 8"},
	{"(_i % 8) * 16 + (_j // 8)", "_i % 8 * 16 + _j // 8"},
	{"2 + 3 * 4", "14"},
	{"_i + 0", "_i"},
	{"0 + _i * 1", "_i"},
	{"_i * 0 + _j", "_j"},
	{"_i % 1", "0"},
	{"_i // 1", "_i"},
	{"_i % 16", "_i"},
	{"_i // 16", "0"},
	{"_j // 2 % 16", "_j // 2"},
	{"_i % 16 % 8", "_i % 8"},
	{"_i // 2 // 4", "_i // 8"},
	{"_i * 4 // 2", "_i * 2"},
	{"_i * 2 // 8", "_i // 4"},
	{"(_i * 8 + _j) % 8", "_j % 8"},
	{"(_i * 8 + _j % 8) // 8", "_i"},
	{"(_i + 3) + 4", "_i + 7"},
	{"(_i + 3) - 3", "_i"},
	{"_i - _i", "0"},
	{"(_i - 2) + 1", "_i - 1"},
	{"3 * _i", "_i * 3"},
	{"_i * 2 * 4", "_i * 8"},
	{"_i ^ 0", "_i"},
	{"_i & 0", "0"},
	{"_i ^ _i", "0"},
	{"_j // 8 % 4 ^ _i % 8 // 2", "_j // 8 ^ _i % 8 // 2"},
	{"_j // 4 % 4 ^ _i", "_j // 4 % 4 ^ _i"},
	{"(_i ^ _j) * 8", "(_i ^ _j) * 8"},
	{"_i - (_j - _k)", "_i - _j + _k"},
	{"(_i - _j) - _k", "_i - _j - _k"},
	{"_i << 2 | 1", "_i << 2 | 1"},
	{"(_i | _j) & 3", "(_i | _j) & 3"},
	{"T.min(_i, 100)", "_i"},
	{"max(_i, 100)", "100"},
	{"T.max(_i, _j)", "T.max(_i, _j)"},
	{"select(_i < 8, _j, _k)", "T.Select(_i < 8, _j, _k)"},
	{"select(_i < 100, _j, _k)", "_j"},
	{"select(1, _j, _k)", "_j"},
	{"_rep * 32 + _i", "_rep * 32 + _i"},
	{"-_i * 3", "_i * -3"},
	{"(_i + _j) * (_k + 1)", "(_i + _j) * (_k + 1)"},
	{"7 // 2 - 7 % -2 + -7 // 2", "0"},
	{"1 << 3 >> 1", "4"},
};

static IDom
dom3(void)
{
	IDom d;

	memset(&d, 0, sizeof d);
	d.ext[0] = 16;
	d.ext[1] = 32;
	d.ext[2] = 8;
	d.ext[IEXPR_REP] = 4;
	return d;
}

START_TEST(simplify_print_table)
{
	Arena A;
	Err err = {0};
	IDom d = dom3();
	IExpr *e;

	arena_init(&A);
	e = iexpr_parse(&A, simp_cases[_i].in, 3, 1, &err);
	ck_assert_msg(e != NULL, "%s: %s", simp_cases[_i].in, err.msg);
	e = iexpr_simplify(&A, e, &d);
	ck_assert_str_eq(iexpr_str(&A, e), simp_cases[_i].out);
	arena_free(&A);
}
END_TEST

static const struct {
	const char *in;
	int nvars, rep;
	const char *msg;
} bad_cases[] = {
	{"_k + 1", 2, 0, "unknown placeholder _k"},
	{"_rep", 2, 0, "unknown placeholder _rep"},
	{"_i / 2", 2, 0, "use // for floor division"},
	{"(_i + 1", 2, 0, "expected ')'"},
	{"_i +", 2, 0, "expected an expression"},
	{"foo(1)", 2, 0, "unknown name 'foo'"},
	{"_i _j", 2, 0, "unexpected text"},
	{"99999999999999999999", 1, 0, "too large"},
	{"", 1, 0, "expected an expression"},
	{"min(1)", 1, 0, "expected ','"},
};

START_TEST(parse_errors)
{
	Arena A;
	Err err = {0};

	arena_init(&A);
	ck_assert_ptr_null(iexpr_parse(&A, bad_cases[_i].in, bad_cases[_i].nvars, bad_cases[_i].rep, &err));
	ck_assert_msg(strstr(err.msg, bad_cases[_i].msg), "got: %s", err.msg);
	arena_free(&A);
}
END_TEST

static const struct {
	const char *in;
	int ok;
	int64_t lo, hi;
} bound_cases[] = {
	{"_i % 8 * 16 + _j // 8", 1, 0, 115},
	{"_j // 8 % 4 ^ _i % 8", 1, 0, 7},
	{"(_j // 8 ^ _i % 8) * 8 + _j % 8", 1, 0, 63},
	{"_i - _j", 1, -31, 15},
	{"_i & 3", 1, 0, 3},
	{"_i << 2", 1, 0, 60},
	{"_j >> 3", 1, 0, 3},
	{"T.Select(_i < 4, _j, 100)", 1, 0, 100},
	{"T.min(_i, _j + 20)", 1, 0, 15},
	{"_i // (_j - 3)", 0, 0, 0},
	{"_i % (_j + 1)", 1, 0, 15},
	{"_rep * 32 + _i", 1, 0, 111},
	{"(_i + 16) % 16", 1, 0, 15},
	{"_i < _j", 1, 0, 1},
};

START_TEST(bounds_table)
{
	Arena A;
	Err err = {0};
	IDom d = dom3();
	IExpr *e;
	int64_t lo = 0, hi = 0;
	int r;

	arena_init(&A);
	e = iexpr_parse(&A, bound_cases[_i].in, 3, 1, &err);
	ck_assert_ptr_nonnull(e);
	r = iexpr_bounds(e, &d, &lo, &hi);
	ck_assert_int_eq(r == 0, bound_cases[_i].ok);
	if (bound_cases[_i].ok) {
		ck_assert_int_eq(lo, bound_cases[_i].lo);
		ck_assert_int_eq(hi, bound_cases[_i].hi);
	}
	arena_free(&A);
}
END_TEST

START_TEST(eval_and_divzero)
{
	Arena A;
	Err err = {0};
	IExpr *e;
	int64_t vals[IEXPR_NVARS] = {5, 7, 0}, v;

	arena_init(&A);
	e = iexpr_parse(&A, "_i * 3 - _j // 2 + (-_j) % 4 + (_i ^ _j)", 3, 0, &err);
	ck_assert_int_eq(iexpr_eval(e, vals, &v, &err), 0);
	ck_assert_int_eq(v, 15 - 3 + 1 + 2);
	e = iexpr_parse(&A, "_i // _k", 3, 0, &err);
	ck_assert_int_eq(iexpr_eval(e, vals, &v, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "division by zero"));
	ck_assert_uint_eq(iexpr_vars(iexpr_parse(&A, "_i + _k * _rep", 3, 1, &err)),
			  1u | 4u | (1u << IEXPR_REP));
	arena_free(&A);
}
END_TEST

/* IX_TAB: a constant table read at an index expression (the lowering's exact inverses) */
START_TEST(table_entries)
{
	static const int32_t v[6] = {40, 7, -3, 12, 7, 0};
	const ITab t = {"tl_tab0", 6, v, -3, 40}, one = {"tl_tab1", 2, v + 1, 7, 7};
	Arena A;
	Err err = {0};
	IDom dom = {{0}};
	IExpr *ix, *e, *s, *x;
	IProg *p;
	int64_t vals[IEXPR_NVARS] = {0}, lo, hi, pts[6], w;
	const int64_t *vars[IEXPR_NVARS] = {0}, *out;
	Buf b;
	int k;

	arena_init(&A);
	dom.ext[0] = 3, dom.ext[1] = 2;
	ix = iexpr_add(&A, iexpr_mulc(&A, iexpr_var(&A, 0), 2), iexpr_var(&A, 1));
	e = iexpr_add(&A, iexpr_tab(&A, &t, ix), iexpr_const(&A, 1));
	/* evaluation, directly and compiled, at every point of the domain */
	for (k = 0; k < 6; k++) {
		vals[0] = k / 2, vals[1] = k % 2;
		ck_assert_int_eq(iexpr_eval(e, vals, &w, &err), 0);
		ck_assert_int_eq(w, v[k] + 1);
		pts[k] = k;
	}
	{
		int64_t i0[6], i1[6];

		for (k = 0; k < 6; k++)
			i0[k] = k / 2, i1[k] = k % 2;
		vars[0] = i0, vars[1] = i1;
		ck_assert_ptr_nonnull(p = iprog_compile(&e, 1, &err));
		ck_assert_int_eq(iprog_run(p, vars, 6, &out), 0);
		for (k = 0; k < 6; k++)
			ck_assert_int_eq(out[k], v[k] + 1);
		i0[5] = 3;   /* index 7: past the table */
		ck_assert_int_eq(iprog_run(p, vars, 6, &out), -1);
		iprog_free(p);
	}
	(void)pts;
	/* past the end: an error, not a read */
	vals[0] = 3, vals[1] = 0;
	ck_assert_int_eq(iexpr_eval(e, vals, &w, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "table index out of range"));
	/* bounds are the table's; a constant index folds; a table of one value is a constant */
	ck_assert_int_eq(iexpr_bounds(iexpr_tab(&A, &t, ix), &dom, &lo, &hi), 0);
	ck_assert_int_eq(lo, -3);
	ck_assert_int_eq(hi, 40);
	ck_assert(iexpr_isconst(iexpr_tab(&A, &t, iexpr_const(&A, 3)), &w) && w == 12);
	ck_assert(iexpr_isconst(iexpr_tab(&A, &one, ix), &w) && w == 7);
	/* substitution reaches the index; equality needs the same table */
	{
		IExpr *sub[IEXPR_NVARS] = {0};

		sub[1] = iexpr_const(&A, 1);
		s = iexpr_subst(&A, e, sub, &dom);
		vals[0] = 2, vals[1] = 0;
		ck_assert_int_eq(iexpr_eval(s, vals, &w, &err), 0);
		ck_assert_int_eq(w, v[5] + 1);
	}
	x = iexpr_tab(&A, &t, ix);
	ck_assert(iexpr_same(x, iexpr_tab(&A, &t, ix)));
	ck_assert(!iexpr_same(x, iexpr_tab(&A, &(ITab){"tl_tab2", 6, v, -3, 40}, ix)));
	ck_assert_uint_eq(iexpr_vars(e), 3u);
	buf_init(&b);
	iexpr_print(&b, e);
	ck_assert_str_eq(buf_str(&b), "tl_tab0[_i * 2 + _j] + 1");
	buf_free(&b);
	arena_free(&A);
}
END_TEST

/* ---- random expressions ------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static int big_consts;

static IExpr *
randexpr(Arena *A, int depth)
{
	static const IExprKind ops[] = {IX_ADD, IX_SUB, IX_MUL, IX_DIV, IX_MOD, IX_XOR, IX_AND,
					IX_OR, IX_MIN, IX_MAX, IX_LT, IX_SHR};
	IExprKind k;
	IExpr *a, *b;

	if (depth == 0 || rnd() % 4 == 0) {
		if (rnd() % 3 == 0) {
			static const int64_t big[] = {INT64_MAX, INT64_MIN, INT64_MIN + 1, (int64_t)1 << 62,
						      -((int64_t)1 << 40)};

			if (big_consts && rnd() % 4 == 0)
				return iexpr_const(A, big[rnd() % countof(big)]);
			return iexpr_const(A, (int64_t)(rnd() % 17) - 4);
		}
		return iexpr_var(A, (int)(rnd() % 3));
	}
	k = ops[rnd() % countof(ops)];
	a = randexpr(A, depth - 1);
	if (k == IX_DIV || k == IX_MOD || k == IX_SHR)
		b = iexpr_const(A, (int64_t)(rnd() % 9) + 1);
	else
		b = randexpr(A, depth - 1);
	if (rnd() % 8 == 0)
		return iexpr_select(A, iexpr_bin(A, IX_LT, a, b), a, b);
	return iexpr_bin(A, k, a, b);
}

START_TEST(random_simplify_parse_prog)
{
	Arena A;
	Err err = {0};
	IDom d = dom3();
	int n, t;

	arena_init(&A);
	for (n = 0; n < 400; n++) {
		IExpr *e = randexpr(&A, 5), *s, *p;
		IExpr *es[3];
		IProg *prog;
		int64_t xs[3][IPROG_BATCH];
		const int64_t *vars[IEXPR_NVARS] = {xs[0], xs[1], xs[2]};
		const int64_t *o[3];
		int64_t lo, hi, bl = 0, bh = 0;
		int hasb;

		s = iexpr_simplify(&A, e, &d);
		p = iexpr_parse(&A, iexpr_str(&A, e), 3, 0, &err);
		ck_assert_msg(p != NULL, "%s: %s", iexpr_str(&A, e), err.msg);
		es[0] = e;
		es[1] = s;
		es[2] = p;
		prog = iprog_compile(es, 3, &err);
		ck_assert_ptr_nonnull(prog);
		for (t = 0; t < IPROG_BATCH; t++) {
			xs[0][t] = rnd() % 16;
			xs[1][t] = rnd() % 32;
			xs[2][t] = rnd() % 8;
		}
		ck_assert_int_eq(iprog_run(prog, vars, IPROG_BATCH, o), 0);
		hasb = iexpr_bounds(e, &d, &bl, &bh) == 0;
		for (t = 0; t < IPROG_BATCH; t++) {
			int64_t pt[IEXPR_NVARS] = {xs[0][t], xs[1][t], xs[2][t]}, v;

			ck_assert_int_eq(iexpr_eval(e, pt, &v, &err), 0);
			ck_assert_msg(o[0][t] == v && o[1][t] == v && o[2][t] == v,
				      "%s -> %s differ at (%lld,%lld,%lld)", iexpr_str(&A, e),
				      iexpr_str(&A, s), (long long)pt[0], (long long)pt[1], (long long)pt[2]);
			if (hasb)
				ck_assert_msg(v >= bl && v <= bh, "%s = %lld outside [%lld, %lld]",
					      iexpr_str(&A, e), (long long)v, (long long)bl, (long long)bh);
		}
		(void)lo;
		(void)hi;
		iprog_free(prog);
	}
	arena_free(&A);
}
END_TEST

/* arbitrary bytes never crash the parser; deep nesting is an error */
START_TEST(parse_garbage)
{
	static const char alphabet[] = "_ijkrep0123456789+-*/%^&|<>=!()T.minaxSelct, ";
	Arena A;
	Err err = {0};
	char s[64], *deep;
	int n, k;

	arena_init(&A);
	for (n = 0; n < 3000; n++) {
		int len = (int)(rnd() % 40);
		IExpr *e;

		for (k = 0; k < len; k++)
			s[k] = alphabet[rnd() % (sizeof alphabet - 1)];
		s[len] = 0;
		e = iexpr_parse(&A, s, 3, 1, &err);
		if (e)
			ck_assert_ptr_nonnull(iexpr_str(&A, e));
	}
	deep = malloc(100001);
	memset(deep, '(', 100000);
	deep[100000] = 0;
	ck_assert_ptr_null(iexpr_parse(&A, deep, 1, 0, &err));
	memset(deep, '(', 1000);
	deep[1000] = 0;
	ck_assert_ptr_null(iexpr_parse(&A, deep, 1, 0, &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "nested too deeply"));
	free(deep);
	arena_free(&A);
}
END_TEST

/* extreme constants: simplify, bounds, print/parse and programs stay defined
 * (UBSan checks the arithmetic) and agree with evaluation */
START_TEST(random_extreme_constants)
{
	Arena A;
	Err err = {0};
	IDom d = dom3();
	int n, t;

	arena_init(&A);
	big_consts = 1;
	for (n = 0; n < 400; n++) {
		IExpr *e = randexpr(&A, 4), *s, *es[2];
		IProg *prog;
		int64_t xs[3][IPROG_BATCH], lo, hi;
		const int64_t *vars[IEXPR_NVARS] = {xs[0], xs[1], xs[2]}, *o[2];

		s = iexpr_simplify(&A, e, &d);
		(void)iexpr_bounds(e, &d, &lo, &hi);
		(void)iexpr_parse(&A, iexpr_str(&A, e), 3, 0, &err);
		es[0] = e;
		es[1] = s;
		prog = iprog_compile(es, 2, &err);
		ck_assert_ptr_nonnull(prog);
		for (t = 0; t < IPROG_BATCH; t++) {
			xs[0][t] = rnd() % 16;
			xs[1][t] = rnd() % 32;
			xs[2][t] = rnd() % 8;
		}
		if (iprog_run(prog, vars, IPROG_BATCH, o) == 0)
			for (t = 0; t < IPROG_BATCH; t++) {
				int64_t pt[IEXPR_NVARS] = {xs[0][t], xs[1][t], xs[2][t]}, v;

				if (iexpr_eval(e, pt, &v, &err) == 0)
					ck_assert_msg(o[0][t] == v, "%s", iexpr_str(&A, e));
			}
		iprog_free(prog);
	}
	big_consts = 0;
	arena_free(&A);
}
END_TEST

START_TEST(printing_is_stable)
{
	Arena A;
	Err err = {0};
	const char *s = "(_i // 2 ^ _j % 8) * 8 + _j % 8 + (_i % 2 << 6) - T.min(_i, _j) * -2";
	IExpr *e;
	char *p1, *p2;

	arena_init(&A);
	e = iexpr_parse(&A, s, 2, 0, &err);
	ck_assert_ptr_nonnull(e);
	p1 = iexpr_str(&A, e);
	p2 = iexpr_str(&A, iexpr_parse(&A, p1, 2, 0, &err));
	ck_assert_str_eq(p1, p2);
	ck_assert_str_eq(p1, s);
	arena_free(&A);
}
END_TEST

Suite *
suite_iexpr(void)
{
	Suite *s = suite_create("iexpr");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, simplify_print_table, 0, countof(simp_cases));
	tcase_add_loop_test(tc, parse_errors, 0, countof(bad_cases));
	tcase_add_loop_test(tc, bounds_table, 0, countof(bound_cases));
	tcase_add_test(tc, eval_and_divzero);
	tcase_add_test(tc, table_entries);
	tcase_add_test(tc, random_simplify_parse_prog);
	tcase_add_test(tc, printing_is_stable);
	tcase_add_test(tc, parse_garbage);
	tcase_add_test(tc, random_extreme_constants);
	suite_add_tcase(s, tc);
	return s;
}
