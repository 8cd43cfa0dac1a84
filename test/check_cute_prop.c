/*
 * check_cute_prop.c: property tests of the CuTe algebra over thousands of
 * random layouts (fixed seeds): composition equals pointwise composition,
 * complements are disjoint and fill the cotarget, inverses invert, coalesce
 * and filter keep the function, divides and products keep their invariants.
 */
#include <stdlib.h>
#include <string.h>

#include "cute.h"
#include "tests.h"

/* ck_assert logs every call through a pipe: too slow inside loops */
#define REQUIRE(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)

typedef struct Rng {
	uint64_t s;
} Rng;

static int
rnd(Rng *r, int n)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return (int)((r->s >> 11) % (uint64_t)n);
}

/* group flat modes into a random hierarchy */
static CuteLayout
group(Arena *a, Rng *r, const int64_t *s, const int64_t *d, int n, int top)
{
	CuteLayout l;
	int i, k = 0, cnt = 0, starts[8], lens[8];

	if (n == 1 && (!top || rnd(r, 3))) {
		l.shape = cute_int(a, s[0]);
		l.stride = cute_int(a, d[0]);
		return l;
	}
	/* split into runs */
	while (k < n) {
		int len = 1 + (n - k > 1 && rnd(r, 3) == 0 ? rnd(r, n - k) : 0);

		starts[cnt] = k;
		lens[cnt++] = len;
		k += len;
	}
	l.shape = cute_tuple(a, cnt);
	l.stride = cute_tuple(a, cnt);
	for (i = 0; i < cnt; i++) {
		CuteLayout m = group(a, r, s + starts[i], d + starts[i], lens[i], 0);

		l.shape->e[i] = m.shape;
		l.stride->e[i] = m.stride;
	}
	return l;
}

/* any layout: extents 1..6, strides 0..24 */
static CuteLayout
gen_any(Arena *a, Rng *r, int maxmodes)
{
	int64_t s[8], d[8];
	int n = 1 + rnd(r, maxmodes), i;

	for (i = 0; i < n; i++) {
		s[i] = 1 + rnd(r, 6);
		d[i] = rnd(r, 4) == 0 ? 0 : 1 + rnd(r, 24);
	}
	return group(a, r, s, d, n, 1);
}

/* an injective layout with ordered, divisible strides (gaps allowed), modes shuffled */
static CuteLayout
gen_nice(Arena *a, Rng *r, int maxmodes, int gaps)
{
	int64_t s[8], d[8], cur = 1;
	int n = 1 + rnd(r, maxmodes), i;

	for (i = 0; i < n; i++) {
		s[i] = 2 + rnd(r, 4);
		cur *= gaps ? 1 + rnd(r, 3) : 1;
		d[i] = cur;
		cur *= s[i];
	}
	for (i = n - 1; i > 0; i--) {
		int j = rnd(r, i + 1);
		int64_t t = s[i];

		s[i] = s[j];
		s[j] = t;
		t = d[i];
		d[i] = d[j];
		d[j] = t;
	}
	return group(a, r, s, d, n, 1);
}

static int64_t
ev(CuteLayout l, int64_t i)
{
	Err err = {0};
	int64_t v = 0;

	REQUIRE(cute_eval(l, i, &v, &err) == 0, "eval: %s", err.msg);
	return v;
}

static int64_t
sz(CuteLayout l)
{
	Err err = {0};
	int64_t v = 0;

	REQUIRE(cute_size(l, &v, &err) == 0, "size: %s", err.msg);
	return v;
}

static int
cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return (a > b) - (a < b);
}

/* sorted image of l on [0,size) into v; returns size */
static int64_t
image(CuteLayout l, int64_t *v)
{
	int64_t n = sz(l), i;

	for (i = 0; i < n; i++)
		v[i] = ev(l, i);
	qsort(v, (size_t)n, sizeof *v, cmp64);
	return n;
}

enum { ITERS = 3000 };

START_TEST(prop_coalesce_filter)
{
	Rng r = {0x1234567ull};
	int it;
	int64_t *v1 = malloc(sizeof(int64_t) * 70000), *v2 = malloc(sizeof(int64_t) * 70000);

	for (it = 0; it < ITERS; it++) {
		Arena a;
		Err err = {0};
		CuteLayout l, c, f, cm;
		int64_t n, i, m1, m2;
		CuteTup *prof;

		arena_init(&a);
		l = gen_any(&a, &r, 6);
		n = sz(l);
		ck_assert_int_eq(cute_coalesce(&a, l, NULL, &c, &err), 0);
		ck_assert_int_eq(sz(c), n);
		ck_assert_int_le(cute_depth(c), 1);
		for (i = 0; i < n; i++)
			REQUIRE(ev(c, i) == ev(l, i), "coalesce %s -> %s at %lld", cute_str(&a, l),
				      cute_str(&a, c), (long long)i);
		/* by-mode: a profile of the top level */
		if (l.shape->n >= 0) {
			prof = cute_tuple(&a, rnd(&r, l.shape->n + 1));
			for (i = 0; i < prof->n; i++)
				prof->e[i] = cute_int(&a, 1);
			ck_assert_int_eq(cute_coalesce(&a, l, prof, &cm, &err), 0);
			ck_assert_int_eq(cute_rank(cm), cute_rank(l));
			for (i = 0; i < n; i++)
				REQUIRE(ev(cm, i) == ev(l, i), "by-mode coalesce");
		}
		/* filter keeps the image */
		ck_assert_int_eq(cute_filter(&a, l, NULL, &f, &err), 0);
		m1 = image(l, v1);
		m2 = image(f, v2);
		for (i = 1, n = 1; i < m1; i++)
			if (v1[i] != v1[n - 1])
				v1[n++] = v1[i];
		for (i = 1, m1 = 1; i < m2; i++)
			if (v2[i] != v2[m1 - 1])
				v2[m1++] = v2[i];
		ck_assert_int_eq(n, m1); /* the same image as a set */
		ck_assert_int_eq(memcmp(v1, v2, sizeof *v1 * (size_t)n), 0);
		/* print, parse: the same layout */
		{
			CuteLayout p;

			ck_assert_int_eq(cute_parse_layout(&a, cute_str(&a, l), &p, &err), 0);
			ck_assert(cute_tup_equal(p.shape, l.shape) && cute_tup_equal(p.stride, l.stride));
		}
		arena_free(&a);
	}
	free(v1);
	free(v2);
}
END_TEST

START_TEST(prop_composition)
{
	Rng r = {0xfeedbeefull};
	int it, ok = 0;

	for (it = 0; it < ITERS * 2; it++) {
		Arena a;
		Err err = {0};
		CuteLayout A, B, R;
		int64_t n, i;

		arena_init(&a);
		A = it % 2 ? gen_nice(&a, &r, 4, 1) : gen_any(&a, &r, 4);
		B = it % 3 ? gen_nice(&a, &r, 3, it % 5 == 0) : gen_any(&a, &r, 3);
		if (cute_compose(&a, A, B, &R, &err) == 0) {
			ok++;
			n = sz(B);
			ck_assert_int_eq(sz(R), n);
			if (B.shape->n >= 0)
				ck_assert_int_eq(cute_rank(R), cute_rank(B));
			for (i = 0; i < n; i++)
				REQUIRE(ev(R, i) == ev(A, ev(B, i)), "%s o %s = %s wrong at %lld",
					      cute_str(&a, A), cute_str(&a, B), cute_str(&a, R),
					      (long long)i);
		} else {
			ck_assert_msg(strstr(err.msg, "divisibility") || strstr(err.msg, "carry"), "%s",
				      err.msg);
		}
		arena_free(&a);
	}
	ck_assert_int_gt(ok, ITERS / 2);
}
END_TEST

START_TEST(prop_complement)
{
	Rng r = {0x77777ull};
	int it;
	char *seen = malloc(1 << 20);

	for (it = 0; it < ITERS; it++) {
		Arena a;
		Err err = {0};
		CuteLayout A, R, AR, pair[2];
		CuteTup *M = NULL;
		int64_t cs, m, n, i, prev = -1;

		arena_init(&a);
		A = gen_nice(&a, &r, 4, 1);
		ck_assert_int_eq(cute_cosize(A, &cs, &err), 0);
		m = cs;
		if (rnd(&r, 2)) {
			m = cs + rnd(&r, 3 * (int)cs);
			M = cute_int(&a, m);
		}
		ck_assert_msg(cute_complement(&a, A, M, &R, &err) == 0, "%s", err.msg);
		/* ordered */
		for (i = 0; i < sz(R); i++) {
			REQUIRE(ev(R, i) > prev, "complement not ordered");
			prev = ev(R, i);
		}
		pair[0] = A;
		pair[1] = R;
		AR = cute_join(&a, 2, pair);
		n = sz(AR);
		ck_assert_int_ge(n, m);
		ck_assert_int_le(n, 1 << 20);
		memset(seen, 0, (size_t)n);
		/* (A,R) is a bijection onto [0,n): disjoint, and fills the cotarget */
		for (i = 0; i < n; i++) {
			int64_t v = ev(AR, i);

			REQUIRE(v >= 0 && v < n && !seen[v], "complement(%s, %lld) = %s overlaps",
				      cute_str(&a, A), (long long)m, cute_str(&a, R));
			seen[v] = 1;
		}
		arena_free(&a);
	}
	free(seen);
}
END_TEST

START_TEST(prop_inverses)
{
	Rng r = {0x31415ull};
	int it;

	for (it = 0; it < ITERS; it++) {
		Arena a;
		Err err = {0};
		CuteLayout A, R, L;
		int64_t i, n;

		arena_init(&a);
		A = it % 2 ? gen_nice(&a, &r, 4, 0) : gen_any(&a, &r, 4);
		ck_assert_int_eq(cute_right_inverse(&a, A, &R, &err), 0);
		for (i = 0; i < sz(R); i++)
			REQUIRE(ev(A, ev(R, i)) == i, "right_inverse(%s) = %s", cute_str(&a, A),
				      cute_str(&a, R));
		/* a bijection onto [0,n) inverts whole */
		if (it % 2)
			ck_assert_int_eq(sz(R), sz(A));
		/* left inverse of an injective layout with gaps */
		A = gen_nice(&a, &r, 4, 1);
		n = sz(A);
		ck_assert_msg(cute_left_inverse(&a, A, &L, &err) == 0, "%s", err.msg);
		for (i = 0; i < n; i++)
			REQUIRE(ev(L, ev(A, i)) == i, "left_inverse(%s) = %s", cute_str(&a, A),
				      cute_str(&a, L));
		arena_free(&a);
	}
}
END_TEST

START_TEST(prop_divide_product)
{
	Rng r = {0x2718ull};
	int it, ok = 0;
	char *seen = malloc(1 << 20);

	for (it = 0; it < ITERS; it++) {
		Arena a;
		Err err = {0};
		CuteLayout A, B, D, Z, C, P, BP;
		CuteObj tb = {0};
		int64_t i, n;

		arena_init(&a);
		A = gen_nice(&a, &r, 3, 0);
		B = gen_nice(&a, &r, 2, it % 3 == 0);
		tb.k = CUTE_LAYOUT;
		tb.l = B;
		if (cute_divide(&a, CUTE_LOGICAL, A, &tb, &D, &err) == 0) {
			ok++;
			ck_assert_int_eq(cute_divide(&a, CUTE_ZIPPED, A, &tb, &Z, &err), 0);
			ck_assert_int_eq(cute_compose(&a, A, B, &C, &err), 0);
			ck_assert_str_eq(cute_str(&a, cute_mode(Z, 0)), cute_str(&a, C));
			ck_assert_int_ge(sz(D), sz(A));
			/* a divide that stays inside A's domain is injective, like A */
			n = sz(D);
			if (n == sz(A) && n <= (1 << 20)) {
				int64_t cs;

				ck_assert_int_eq(cute_cosize(D, &cs, &err), 0);
				if (cs <= (1 << 20)) {
					memset(seen, 0, (size_t)cs);
					for (i = 0; i < n; i++) {
						REQUIRE(!seen[ev(D, i)], "%s / %s = %s", cute_str(&a, A),
							      cute_str(&a, B), cute_str(&a, D));
						seen[ev(D, i)] = 1;
					}
				}
			}
		}
		/* logical_product of injective layouts is injective, of size |A||B| */
		A = gen_nice(&a, &r, 3, 1);
		B = gen_nice(&a, &r, 2, 1);
		tb.l = B;
		if (cute_product(&a, CUTE_LOGICAL, A, &tb, &P, &err) == 0) {
			int64_t cs;

			n = sz(P);
			ck_assert_int_eq(n, sz(A) * sz(B));
			ck_assert_int_eq(cute_cosize(P, &cs, &err), 0);
			if (cs <= (1 << 20)) {
				memset(seen, 0, (size_t)cs);
				for (i = 0; i < n; i++) {
					REQUIRE(!seen[ev(P, i)], "%s x %s = %s", cute_str(&a, A),
						      cute_str(&a, B), cute_str(&a, P));
					seen[ev(P, i)] = 1;
				}
			}
			/* blocked and raked products hold the same image */
			if (cute_blocked_product(&a, A, B, &BP, &err) == 0) {
				ck_assert_msg(sz(BP) == n, "blocked %s x %s = %s", cute_str(&a, A),
					      cute_str(&a, B), cute_str(&a, BP));
				if (cs <= (1 << 20)) {
					for (i = 0; i < n; i++)
						REQUIRE(seen[ev(BP, i)], "blocked image");
				}
			}
		}
		arena_free(&a);
	}
	ck_assert_int_gt(ok, ITERS / 4);
	free(seen);
}
END_TEST

/* every operation on random layouts with huge extents and strides: an error
 * value or a result, never a crash or undefined behaviour (run under UBSan) */
START_TEST(prop_no_crash)
{
	static const char *ops[] = {"size", "cosize", "coalesce", "filter", "composition",
				    "complement", "right_inverse", "left_inverse", "logical_divide",
				    "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
				    "zipped_product", "tiled_product", "flat_product",
				    "blocked_product", "raked_product", "eval", "with_shape"};
	static const int64_t big[] = {1, 2, 3, 7, 64, 1 << 20, (int64_t)1 << 31, (int64_t)1 << 40,
				      INT64_MAX / 3, INT64_MAX, -1, -((int64_t)1 << 40), 0};
	Rng r = {0xdeadull};
	int it, fails = 0;

	for (it = 0; it < ITERS; it++) {
		Arena a;
		Err err = {0};
		Buf out;
		const char *args[2];
		CuteLayout x, y;
		int k, which;

		arena_init(&a);
		buf_init(&out);
		x = gen_any(&a, &r, 4);
		y = gen_any(&a, &r, 3);
		/* blow up one leaf of each */
		for (k = 0; k < 2; k++) {
			CuteTup *s = k ? y.shape : x.shape, *d = k ? y.stride : x.stride;

			while (s->n >= 0) {
				which = rnd(&r, s->n);
				s = s->e[which];
				d = d->e[which];
			}
			if (rnd(&r, 2))
				s->x.v = big[rnd(&r, 9)];
			else
				d->x.v = big[rnd(&r, (int)countof(big))];
		}
		args[0] = cute_str(&a, x);
		args[1] = rnd(&r, 3) ? cute_str(&a, y) : (rnd(&r, 2) ? "(_2,_2)" : "9223372036854775807");
		err_clear(&err);
		k = cute_run_op(&a, ops[rnd(&r, (int)countof(ops))], 1 + rnd(&r, 2), args, &out, &err);
		REQUIRE(k == 0 || (k == -1 && err.set && err.msg[0]), "no message");
		fails += k < 0;
		buf_free(&out);
		arena_free(&a);
	}
	ck_assert_int_gt(fails, 0);
}
END_TEST

Suite *
suite_cute_prop(void)
{
	Suite *s = suite_create("cute_prop");
	TCase *tc = tcase_create("properties");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, prop_coalesce_filter);
	tcase_add_test(tc, prop_composition);
	tcase_add_test(tc, prop_complement);
	tcase_add_test(tc, prop_inverses);
	tcase_add_test(tc, prop_divide_product);
	tcase_add_test(tc, prop_no_crash);
	suite_add_tcase(s, tc);
	return s;
}
