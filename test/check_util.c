/* check_util.c: arena, string buffer, error values, diagnostics, floor arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tl.h"

START_TEST(arena_zeroed_and_aligned)
{
	Arena a;
	int i;

	arena_init(&a);
	for (i = 1; i < 2000; i += 37) {
		unsigned char *p = arena_alloc(&a, (size_t)i);
		int k;

		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq((uintptr_t)p % 16, 0);
		for (k = 0; k < i; k++)
			ck_assert_int_eq(p[k], 0);
		memset(p, 0xab, (size_t)i);
	}
	/* a block larger than the chunk size */
	ck_assert_ptr_nonnull(arena_alloc(&a, 1 << 20));
	ck_assert_str_eq(arena_printf(&a, "%d-%s", 42, "x"), "42-x");
	ck_assert_str_eq(arena_strndup(&a, "hello", 3), "hel");
	arena_free(&a);
}
END_TEST

START_TEST(buf_grows)
{
	Buf b;
	int i;
	char *s;

	buf_init(&b);
	ck_assert_str_eq(buf_str(&b), "");
	for (i = 0; i < 1000; i++)
		buf_printf(&b, "%d,", i % 10);
	ck_assert_uint_eq(b.len, 2000);
	ck_assert_int_eq(b.s[1998], '9');
	s = buf_take(&b);
	ck_assert_int_eq(strlen(s), 2000);
	free(s);
	ck_assert_uint_eq(b.len, 0);
}
END_TEST

static const struct {
	int64_t a, b, q, r;
} floor_cases[] = {
	{7, 2, 3, 1},   {-7, 2, -4, 1},   {7, -2, -4, -1}, {-7, -2, 3, -1},
	{0, 5, 0, 0},   {-8, 4, -2, 0},   {5, 1, 5, 0},    {INT64_MIN, -1, INT64_MIN, 0},
};

START_TEST(floor_table)
{
	ck_assert_int_eq(floordiv64(floor_cases[_i].a, floor_cases[_i].b), floor_cases[_i].q);
	ck_assert_int_eq(floormod64(floor_cases[_i].a, floor_cases[_i].b), floor_cases[_i].r);
}
END_TEST

START_TEST(checked_arith)
{
	int64_t r;

	ck_assert_int_eq(ck_mul(INT64_MAX, 2, &r), -1);
	ck_assert_int_eq(ck_add(INT64_MAX, 1, &r), -1);
	ck_assert_int_eq(ck_mul(1 << 20, 1 << 20, &r), 0);
	ck_assert_int_eq(r, (int64_t)1 << 40);
}
END_TEST

START_TEST(diag_format_caret)
{
	Arena a;
	Diags d;
	Buf b;
	const char *src = "line one\n  bad token\n";

	arena_init(&a);
	diags_init(&d, &a);
	buf_init(&b);
	diag(&d, (Loc){"x.tile", 2, 3}, "unexpected '%s'", "bad");
	diag_warn(&d, (Loc){"x.tile", 1, 1}, "just a warning");
	ck_assert_int_eq(d.nerr, 1);
	ck_assert_int_eq(d.nwarn, 1);
	diag_format(&d, &b, src, strlen(src), 0);
	ck_assert_str_eq(buf_str(&b), "x.tile:2:3: error: unexpected 'bad'\n"
				      "x.tile:1:1: warning: just a warning\n");
	buf_reset(&b);
	diag_format(&d, &b, src, strlen(src), 1);
	ck_assert_ptr_nonnull(strstr(buf_str(&b), "   bad token\n   ^\n"));
	buf_free(&b);
	arena_free(&a);
}
END_TEST

START_TEST(err_value)
{
	Err e = {0};

	ck_assert_int_eq(err_set(&e, "bad %d", 3), -1);
	ck_assert_int_eq(e.set, 1);
	ck_assert_str_eq(e.msg, "bad 3");
	ck_assert_int_eq(err_set(NULL, "ignored"), -1);
	err_clear(&e);
	ck_assert_int_eq(e.set, 0);
}
END_TEST

/* buf_printf formats in one pass where the text fits and measures and redoes it where it
 * does not: pieces of every length from 0 to 300 appended across the capacity boundaries
 * give the same text as one snprintf of each piece */
START_TEST(buf_printf_boundaries)
{
	static char want[200000];
	char piece[400];
	size_t at = 0;
	Buf b;
	int n, k;

	buf_init(&b);
	for (n = 0; n <= 300; n++) {
		for (k = 0; k < n; k++)
			piece[k] = (char)('a' + (n + k) % 26);
		piece[n] = 0;
		k = snprintf(want + at, sizeof want - at, "%d:%s|%.3f", n, piece, n / 7.0);
		ck_assert_int_gt(k, 0);
		at += (size_t)k;
		buf_printf(&b, "%d:%s|%.3f", n, piece, n / 7.0);
		ck_assert_uint_eq(b.len, at);
		ck_assert_int_lt((long)b.len, (long)b.cap);
	}
	ck_assert_str_eq(buf_str(&b), want);
	buf_reset(&b);
	buf_printf(&b, "%s", "");
	ck_assert_ptr_nonnull(b.s);
	ck_assert_str_eq(buf_str(&b), "");
	buf_free(&b);
}
END_TEST

/* tl_vsnprintf's own formatting (%s %c %% %d %i %u %x with l, ll, z) against vsnprintf, for
 * every capacity from 0 to past the text, and formats it hands to vsnprintf (widths,
 * flags, %g, %p, a null %s) */
static int
both(char *d1, char *d2, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n1, n2;

	va_start(ap, fmt);
	n1 = tl_vsnprintf(d1, cap, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	n2 = vsnprintf(d2, cap, fmt, ap);
	va_end(ap);
	ck_assert_int_eq(n1, n2);
	if (cap)
		ck_assert_str_eq(d1, d2);
	return n1;
}

/* tl_strhash is FNV-1a 64: the published vectors, a seed as the basis, bytes past n unread */
START_TEST(strhash_fnv1a)
{
	ck_assert_uint_eq(tl_strhash("", 0, TL_HASH_BASIS), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(tl_strhash("a", 1, TL_HASH_BASIS), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(tl_strhash("foobar", 6, TL_HASH_BASIS), 0x85944171f73967e8ULL);
	ck_assert_uint_eq(tl_strhash("foobarXYZ", 6, TL_HASH_BASIS), 0x85944171f73967e8ULL);
	ck_assert_uint_eq(tl_strhash("bar", 3, tl_strhash("foo", 3, TL_HASH_BASIS)), 0x85944171f73967e8ULL);
}
END_TEST

START_TEST(vsnprintf_same)
{
	char d1[200], d2[200];
	size_t cap;
	const char *nul = NULL;

	for (cap = 0; cap < 120; cap++) {
		memset(d1, 'x', sizeof d1);
		memset(d2, 'x', sizeof d2);
		both(d1, d2, cap, "a%sb%c%%%d|%i|%u|%x", "str", 'Q', -2147483647 - 1, 42, 4294967295u, 0xbeefu);
		both(d1, d2, cap, "%ld %lld %lu %llu %zu %lx %llx", -9223372036854775807L - 1,
		     (long long)9223372036854775807LL, 18446744073709551615UL, 0ULL, (size_t)12345,
		     0xfeedUL, 0x123456789abcdefULL);
		both(d1, d2, cap, "%d%d%s%s", 0, -7, "", "tail text");
		both(d1, d2, cap, "plain text, no conversions at all, longer than some caps");
		both(d1, d2, cap, "%5d|%-3s|%05lld|%.2f|%g|%+d|%#x|%zd|%hd|%*d", 3, "ab", 7LL, 1.5, 0.25,
		     4, 255u, (ptrdiff_t)-3, (short)9, 4, 5);
		both(d1, d2, cap, "%s%d", nul, 1);
		both(d1, d2, cap, "a%cb", 0);
		ck_assert_int_eq(d1[cap], 'x');   /* nothing written past cap */
	}
}
END_TEST

Suite *
suite_util(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, arena_zeroed_and_aligned);
	tcase_add_test(tc, buf_grows);
	tcase_add_test(tc, buf_printf_boundaries);
	tcase_add_test(tc, vsnprintf_same);
	tcase_add_test(tc, strhash_fnv1a);
	tcase_add_loop_test(tc, floor_table, 0, countof(floor_cases));
	tcase_add_test(tc, checked_arith);
	tcase_add_test(tc, diag_format_caret);
	tcase_add_test(tc, err_value);
	suite_add_tcase(s, tc);
	return s;
}
