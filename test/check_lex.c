/*
 * check_lex.c: the re2c lexer: token kinds and values, locations, every
 * lexical error with its line and column, NUL bytes and binary input
 * (never reading past the end), and a random-bytes property test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "parser.h"
#include "tests.h"

/* all tokens of src as text: names for keywords/punctuation, values for literals;
 * the first diagnostic (or "") into *first */
static void
lexall(const char *src, size_t len, Buf *out, Buf *first, int *nerr)
{
	Arena a;
	Diags d;
	Lexer lx;
	Tok t;
	char *copy;
	int k, guard = 0;

	arena_init(&a);
	diags_init(&d, &a);
	copy = arena_alloc(&a, len + 1);
	memcpy(copy, src, len);
	lex_init(&lx, &a, &d, copy, len, "f");
	while ((k = lex_next(&lx, &t)) != 0 && guard++ < 100000) {
		const char *nm;

		if (out->len)
			buf_putc(out, ' ');
		switch (k) {
		case TK_ID:
			buf_printf(out, "%.*s", t.len, t.s);
			break;
		case TK_INT:
			buf_printf(out, "#%lld", (long long)t.ival);
			break;
		case TK_FLOAT:
			buf_printf(out, "#%g", t.fval);
			break;
		case TK_STRING:
			buf_printf(out, "\"%s\"/%zu", t.sval, t.slen);
			break;
		case TK_ERROR:
			buf_puts(out, "ERR");
			break;
		default:
			nm = lex_tokname(k);
			if (nm[0] == '\'')
				buf_printf(out, "%.*s", (int)strlen(nm) - 2, nm + 1);
			else
				buf_puts(out, nm);
			break;
		}
	}
	/* the end token sits at the end of the input */
	ck_assert_ptr_eq(lx.cur, lx.end);
	if (d.head)
		buf_printf(first, "%d:%d: %s", d.head->loc.line, d.head->loc.col, d.head->msg);
	*nerr = d.nerr;
	arena_free(&a);
}

static const struct {
	const char *src;
	const char *toks;
	const char *err;  /* first diagnostic, "" for none */
} lex_cases[] = {
	{"", "", ""},
	{"  \t\r\n // only a comment\n /* and\n another */ ", "", ""},
	{"kernel gemm(A: f16[M, K])", "kernel gemm ( A : f16 [ M , K ] )", ""},
	{"const func grid threads shared local for in if else let true false",
	 "const func grid threads shared local for in if else let true false", ""},
	{"index in_ inx _a a_1 F16 kernel2", "index in_ inx _a a_1 F16 kernel2", ""},
	{"0 7 42 0x10 0XfF 9223372036854775807", "#0 #7 #42 #16 #255 #9223372036854775807", ""},
	{"1.5 .5 1e-3 2E+2 3.25e1 0.0", "#1.5 #0.5 #0.001 #200 #32.5 #0", ""},
	{"0xE+1", "#14 + #1", ""},
	{"a-1e+2", "a - #100", ""},
	{"+ - * / % += -= *= /= = == != < <= > >= << >> && || & | ^ ! ~ ? :",
	 "+ - * / % += -= *= /= = == != < <= > >= << >> && || & | ^ ! ~ ? :", ""},
	{"( ) [ ] { } , ;", "( ) [ ] { } , ;", ""},
	{"a/**/b//c\nd", "a b d", ""},
	{"x/ *y", "x / * y", ""},
	{"\"((_32,_2),_1):((_1,_32),_0)\"", "\"((_32,_2),_1):((_1,_32),_0)\"/27", ""},
	{"\"a\\\"b\\\\c\\n\"", "\"a\"b\\c\n\"/6", ""},
	{"\"\"", "\"\"/0", ""},
	{"\xef\xbb\xbf" "const", "const", ""},
	{"\xef\xbb\xbf $", "ERR", "1:2: invalid character '$'"},
	{"a\xef\xbb\xbf", "a ERR", "1:2: invalid character '\\xef' (non-ASCII)"},
	/* errors */
	{"a $ b", "a ERR b", "1:3: invalid character '$'"},
	{"x\n  @", "x ERR", "2:3: invalid character '@'"},
	{"a\x01z", "a ERR z", "1:2: invalid character '\\x01'"},
	{"caf\xc3\xa9 = 1", "caf ERR = #1", "1:4: invalid character '\\xc3' (non-ASCII)"},
	{"12abc", "ERR", "1:1: invalid number '12abc'"},
	{"0x", "ERR", "1:1: invalid number '0x'"},
	{"0xfg", "ERR", "1:1: invalid number '0xfg'"},
	{"1e", "ERR", "1:1: invalid number '1e'"},
	{"1.2.3", "ERR", "1:1: invalid number '1.2.3'"},
	{"1.", "ERR", "1:1: invalid number '1.'"},
	{"1.5e3x ;", "ERR ;", "1:1: invalid number '1.5e3x'"},
	{"9223372036854775808", "ERR", "1:1: integer literal '9223372036854775808' does not fit in 64 bits"},
	{"0x8000000000000000", "ERR", "1:1: integer literal '0x8000000000000000' does not fit in 64 bits"},
	{"1e400", "ERR", "1:1: float literal '1e400' is out of range"},
	{"\"abc", "ERR", "1:1: unterminated string"},
	{"x = \"abc\ny", "x = ERR y", "1:5: unterminated string"},
	{"\"a\\qb\"", "ERR", "1:3: invalid escape '\\q' in string"},
	{"a /* open\n\n", "a ERR", "1:3: unterminated comment"},
	{"a . b", "a ERR b", "1:3: invalid character '.'"},
	{"#include", "ERR include", "1:1: invalid character '#'"},
};

START_TEST(lex_table)
{
	Buf toks, first;
	int nerr;

	buf_init(&toks);
	buf_init(&first);
	lexall(lex_cases[_i].src, strlen(lex_cases[_i].src), &toks, &first, &nerr);
	ck_assert_msg(!strcmp(buf_str(&toks), lex_cases[_i].toks), "row %d: tokens '%s', want '%s'",
		      _i, buf_str(&toks), lex_cases[_i].toks);
	ck_assert_msg(!strcmp(buf_str(&first), lex_cases[_i].err), "row %d: error '%s', want '%s'",
		      _i, buf_str(&first), lex_cases[_i].err);
	ck_assert_int_eq(nerr > 0, lex_cases[_i].err[0] != 0);
	buf_free(&toks);
	buf_free(&first);
}
END_TEST

/* sources with NUL bytes inside: strlen cannot be used */
static const struct {
	const char *src;
	size_t len;
	const char *toks, *err;
	int nerr;
} nul_cases[] = {
	{"a\0b", 3, "a ERR b", "1:2: NUL byte in source", 1},
	{"\0", 1, "ERR", "1:1: NUL byte in source", 1},
	{"x\n  \0\0", 6, "x ERR ERR", "2:3: NUL byte in source", 2},
	{"a // c\0d\nb", 10, "a b", "1:7: NUL byte in source", 1},
	{"a /* \0 */ b", 11, "a b", "1:6: NUL byte in source", 1},
	{"\"ab\0c\"", 6, "ERR ERR c ERR", "1:1: unterminated string", 3},
};

START_TEST(lex_nul)
{
	Buf toks, first;
	int nerr;

	buf_init(&toks);
	buf_init(&first);
	lexall(nul_cases[_i].src, nul_cases[_i].len, &toks, &first, &nerr);
	ck_assert_str_eq(buf_str(&toks), nul_cases[_i].toks);
	ck_assert_str_eq(buf_str(&first), nul_cases[_i].err);
	ck_assert_int_eq(nerr, nul_cases[_i].nerr);
	buf_free(&toks);
	buf_free(&first);
}
END_TEST

/* line and column of each token, including after tabs, CRLF and comments */
START_TEST(lex_locations)
{
	static const char src[] = "const A\r\n\t= 1; /* x\ny */ kernel\n\n  k";
	static const int want[][2] = {{1, 1}, {1, 7}, {2, 2}, {2, 4}, {2, 5}, {3, 6}, {5, 3}, {5, 4}};
	Arena a;
	Diags d;
	Lexer lx;
	Tok t;
	size_t i;

	arena_init(&a);
	diags_init(&d, &a);
	lex_init(&lx, &a, &d, src, sizeof src - 1, "f");
	for (i = 0; i < countof(want); i++) {
		lex_next(&lx, &t);
		ck_assert_msg(t.loc.line == want[i][0] && t.loc.col == want[i][1],
			      "token %zu at %d:%d, want %d:%d", i, t.loc.line, t.loc.col, want[i][0],
			      want[i][1]);
		ck_assert_str_eq(t.loc.file, "f");
	}
	ck_assert_int_eq(t.kind, 0);
	ck_assert_int_eq(d.nerr, 0);
	arena_free(&a);
}
END_TEST

/* property: random bytes never crash, never read past the end (ASan checks the
 * exact-size heap copy), and every ERR token comes with at least one diagnostic */
START_TEST(lex_random_bytes)
{
	static const char alphabet[] = "ab01x.e+-*/\"\\\n /{}()[];:=_\x80\xff\0\t#$";
	unsigned seed = 12345;
	int iter;

	for (iter = 0; iter < 2000; iter++) {
		size_t n = (size_t)(iter % 64), i;
		char *s = malloc(n + 1);
		Arena a;
		Diags d;
		Lexer lx;
		Tok t;
		int k, errs = 0, guard = 0;

		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			s[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
		}
		s[n] = 0;
		arena_init(&a);
		diags_init(&d, &a);
		lex_init(&lx, &a, &d, s, n, "r");
		while ((k = lex_next(&lx, &t)) != 0) {
			ck_assert(t.s >= s && t.s + t.len <= s + n);
			ck_assert_int_gt(t.len, 0);
			errs += k == TK_ERROR;
			ck_assert_int_lt(guard++, 1000);
		}
		ck_assert(lx.cur == s + n);
		ck_assert_int_ge(d.nerr, errs);
		arena_free(&a);
		free(s);
	}
}
END_TEST

Suite *
suite_lex(void)
{
	Suite *s = suite_create("lex");
	TCase *tc = tcase_create("lex");

	tcase_add_loop_test(tc, lex_table, 0, countof(lex_cases));
	tcase_add_loop_test(tc, lex_nul, 0, countof(nul_cases));
	tcase_add_test(tc, lex_locations);
	tcase_add_test(tc, lex_random_bytes);
	suite_add_tcase(s, tc);
	return s;
}
