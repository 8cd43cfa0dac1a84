/*
 * check_parse.c: the grammar and parse driver: source -> ast_dump text,
 * source -> first diagnostic, the lexical/syntax half of the error corpus
 * (test/err/lex_*.tile, syn_*.tile), the samples (with AST goldens), nesting
 * limits, huge inputs, speed, and random mutations of a valid program.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ast.h"
#include "tests.h"

/* parse src; the dump into *dump and all diagnostics ("L:C: error: msg\n",
 * file name removed) into *errs; returns the number of errors */
static int
parse(const char *src, size_t len, Buf *dump, Buf *errs, Node **out)
{
	Arena a;
	Diags d;
	Buf b;
	Node *n;
	const char *s;
	int nerr;

	arena_init(&a);
	diags_init(&d, &a);
	n = parse_program(&a, &d, src, len, "f");
	if (dump)
		ast_dump(dump, n);
	buf_init(&b);
	diag_format(&d, &b, src, len, 0);
	/* drop the "f:" of each line */
	for (s = buf_str(&b); *s; ) {
		const char *e = strchr(s, '\n');
		size_t l = e ? (size_t)(e - s) + 1 : strlen(s);

		if (!strncmp(s, "f:", 2))
			buf_putn(errs, s + 2, l - 2);
		else
			buf_putn(errs, s, l);
		s += l;
	}
	buf_free(&b);
	nerr = d.nerr;
	if (out)
		*out = n;
	if (nerr)
		ck_assert_ptr_null(n);
	arena_free(&a);
	return nerr;
}

static const struct {
	const char *src, *dump;
} ok_cases[] = {
	{"", ""},
	{"// nothing\n/* at all */\n", ""},
	{"const A = 1;", "(const A 1)\n"},
	{"const A = 1, B = A * 2, C = -0x10;", "(const A 1)\n(const B (* A 2))\n(const C (neg 16))\n"},
	/* precedence, low to high */
	{"const x = a ? b : c ? d : e;", "(const x (?: a b (?: c d e)))\n"},
	{"const x = a || b && c | d ^ e & f;", "(const x (|| a (&& b (| c (^ d (& e f))))))\n"},
	{"const x = a == b < c << d + e * f;", "(const x (== a (< b (<< c (+ d (* e f))))))\n"},
	{"const x = a - b - c;", "(const x (- (- a b) c))\n"},
	{"const x = a / b % c * d;", "(const x (* (% (/ a b) c) d))\n"},
	{"const x = -a * !b + ~c;", "(const x (+ (* (neg a) (! b)) (~ c)))\n"},
	{"const x = (a + b) * c;", "(const x (* (+ a b) c))\n"},
	{"const x = a != b >= c > d <= e;", "(const x (!= a (<= (> (>= b c) d) e)))\n"},
	{"const x = a >> 1 << 2;", "(const x (<< (>> a 1) 2))\n"},
	{"const x = a ? b ? c : d : e;", "(const x (?: a (?: b c d) e))\n"},
	{"const x = 1.5 + .25e1 + 1e-3 + 2.0;", "(const x (+ (+ (+ 1.5 2.5) 0.001) 2.0))\n"},
	{"const x = true && false;", "(const x (&& true false))\n"},
	{"const L = cute(\"(_4,_8):(_8,_1)\");", "(const L (call cute \"(_4,_8):(_8,_1)\"))\n"},
	{"const x = f32(max(a, 0)) + select(c, a, b)[0];",
	 "(const x (+ (call f32 (call max a 0)) (index (call select c a b) 0)))\n"},
	/* kernels and params */
	{"kernel k(A: f16[M, 64], s: f32, n: i32) grid(1, 2, 3) threads(128) {}",
	 "(kernel k\n  (param A f16 [M 64])\n  (param s f32)\n  (param n i32)\n  (grid 1 2 3)\n"
	 "  (threads 128))\n"},
	/* strides(...) after a tensor type; 'strides' is not reserved */
	{"kernel k(A: f16[M, K] strides(lda, 1), B: f16[K, N] strides(1, K + 0)) grid(1) "
	 "threads(32) { let strides = 1; }",
	 "(kernel k\n  (param A f16 [M K] strides [lda 1])\n  (param B f16 [K N] strides [1 (+ K 0)])\n"
	 "  (grid 1)\n  (threads 32)\n  (let strides 1))\n"},
	{"kernel k() grid(cdiv(N, 4)) threads(32 * 4) { }",
	 "(kernel k\n  (grid (call cdiv N 4))\n  (threads (* 32 4)))\n"},
	{"func h(x: local f32[4, 4], s: shared f16[BM, BK], v: f32) { clear(x); }",
	 "(func h\n  (param x local f32 [4 4])\n  (param s shared f16 [BM BK])\n  (param v f32)\n"
	 "  (call clear x))\n"},
	{"func e() {}", "(func e)\n"},
	/* statements */
	{"func f() { shared S: f16[BM, BK]; local r: f32[4]; }",
	 "(func f\n  (shared S f16 [BM BK])\n  (local r f32 [4]))\n"},
	{"func f() { x = 1; x += 2; x -= 3; x *= 4; x /= 5; a[i, j] = a[j, i]; }",
	 "(func f\n  (= x 1)\n  (+= x 2)\n  (-= x 3)\n  (*= x 4)\n  (/= x 5)\n"
	 "  (= (index a i j) (index a j i)))\n"},
	{"func f() { let t = exp(x[i] - m); }", "(func f\n  (let t (call exp (- (index x i) m))))\n"},
	{"func f() { for i, j in parallel(BM, BN) { c[i, j] = 0; } }",
	 "(func f\n  (for (i j) (call parallel BM BN)\n    (= (index c i j) 0)))\n"},
	{"func f() { for k in range(0, n) {} for s in pipeline(n, stages = 3) { g(); } }",
	 "(func f\n  (for (k) (call range 0 n))\n  (for (s) (call pipeline n (= stages 3))\n"
	 "    (call g)))\n"},
	{"func f() { if (a) { x(); } }", "(func f\n  (if a\n    (then\n      (call x))))\n"},
	{"func f() { if (a) {} else { y(); } }",
	 "(func f\n  (if a\n    (then)\n    (else\n      (call y))))\n"},
	{"func f() { if (a) { x(); } else if (b) { y(); } else { z(); } }",
	 "(func f\n  (if a\n    (then\n      (call x))\n    (else\n      (if b\n        (then\n"
	 "          (call y))\n        (else\n          (call z))))))\n"},
	/* call arguments: named, slices, lists */
	{"func f() { copy(A[by * BM : by * BM + BM, 0:BK], As); }",
	 "(func f\n  (call copy (index A (: (* by BM) (+ (* by BM) BM)) (: 0 BK)) As))\n"},
	{"func f() { gemm(a, b, c, trans_a = false, trans_b = true, clear = x > 0); }",
	 "(func f\n  (call gemm a b c (= trans_a false) (= trans_b true) (= clear (> x 0))))\n"},
	{"func f() { reduce(s, d, op = max, dim = 1, clear = true); }",
	 "(func f\n  (call reduce s d (= op max) (= dim 1) (= clear true)))\n"},
	{"func f() { require_amd_wmma_layout(x, version = 3, warp_bases = [[0,2],[2,0]], "
	 "reg_bases = [], instr_shape = [16, 16, 128]); }",
	 "(func f\n  (call require_amd_wmma_layout x (= version 3) (= warp_bases [[0 2] [2 0]]) "
	 "(= reg_bases []) (= instr_shape [16 16 128])))\n"},
	{"func f() { annotate_layout(b, mma_c(m16n8k16, warps = 4)); f([1], 2); }",
	 "(func f\n  (call annotate_layout b (call mma_c m16n8k16 (= warps 4)))\n"
	 "  (call f [1] 2))\n"},
	{"func f() { x[c ? 1 : 2 : 3] = 0; }", "(func f\n  (= (index x (: (?: c 1 2) 3)) 0))\n"},
	{"func f() { assume(M % BM == 0); assume(K >= 32); }",
	 "(func f\n  (call assume (== (% M BM) 0))\n  (call assume (>= K 32)))\n"},
	{"const s = \"a\\\"b\\\\\\n\";", "(const s \"a\\\"b\\\\\\n\")\n"},
};

START_TEST(parse_ok)
{
	Buf dump, errs;
	int nerr;

	buf_init(&dump);
	buf_init(&errs);
	nerr = parse(ok_cases[_i].src, strlen(ok_cases[_i].src), &dump, &errs, NULL);
	ck_assert_msg(nerr == 0, "row %d: %s", _i, buf_str(&errs));
	ck_assert_msg(!strcmp(buf_str(&dump), ok_cases[_i].dump), "row %d:\n%s\nwant:\n%s", _i,
		      buf_str(&dump), ok_cases[_i].dump);
	buf_free(&dump);
	buf_free(&errs);
}
END_TEST

#define K0 "kernel k() grid(1) threads(1) "

static const struct {
	const char *src, *err;  /* the first diagnostic */
} err_cases[] = {
	{"kernel k(", "1:10: error: unexpected end of input, expected ')'"},
	{"kernel k(A: f16[M, K] stride(1, 1)) grid(1) threads(1) {}",
	 "1:23: error: unexpected identifier 'stride' after the type of parameter 'A', expected "
	 "strides(...), ',' or ')'"},
	{"kernel k(A: f16[M, K] strides()) grid(1) threads(1) {}",
	 "1:31: error: unexpected ')', expected expression"},
	{"kernel k(A: f16[M, K] strides(1, 1) strides(1, 1)) grid(1) threads(1) {}",
	 "1:37: error: unexpected identifier 'strides', expected ')'"},
	{"const A = 1", "1:12: error: unexpected end of input, expected ';' or ','"},
	{"const = 3;", "1:7: error: unexpected '=', expected identifier"},
	{"foo", "1:1: error: unexpected identifier 'foo', expected 'const', 'kernel' or 'func'"},
	{"const a = 1;;", "1:13: error: unexpected ';', expected 'const', 'kernel' or 'func'"},
	{K0 "{ x = 1 }", "1:39: error: unexpected '}', expected ';'"},
	{K0 "{ copy(a, b) ", "1:44: error: unexpected end of input, expected ';'"},
	{K0 "{ copy(a, b);", "1:44: error: unexpected end of input, expected '}'"},
	{K0 "{ x = ; }", "1:37: error: unexpected ';', expected expression"},
	{K0 "{ f(a,); }", "1:37: error: unexpected ')', expected expression"},
	{K0 "{ local x f32[4]; }", "1:41: error: unexpected identifier 'f32', expected ':'"},
	{K0 "{ local x: f32; }", "1:45: error: unexpected ';', expected '['"},
	{"kernel k(A: f16[M, K) grid(1) threads(1) {}",
	 "1:21: error: unexpected ')', expected ',' or ']'"},
	{K0 "{ for i in 4 {} }", "1:42: error: unexpected number '4', expected identifier"},
	{K0 "{ for i range(4) {} }",
	 "1:39: error: unexpected identifier 'range', expected ',' or 'in'"},
	{K0 "{ if a {} }", "1:36: error: unexpected identifier 'a', expected '('"},
	{K0 "{ let grid = 1; }", "1:37: error: unexpected 'grid', expected identifier"},
	{K0 "{ x = \"s\" \"t\"; }", "1:41: error: unexpected string, expected ';'"},
	{"const a = 1 abcdefghijklmnopqrstuvwxyz0123456789ABCD;",
	 "1:13: error: unexpected identifier 'abcdefghijklmnopqrstuvwxyz012345...', expected ';' or ','"},
	/* checks made by the parse helpers */
	{"kernel k() threads(1) grid(1) {}", "1:23: error: grid(...) must come before threads(...)"},
	{"kernel k() {}", "1:8: error: kernel 'k' has no grid(...) clause"},
	{"kernel k() grid(1) {}", "1:8: error: kernel 'k' has no threads(...) clause"},
	{"kernel k() grid(1,2,3,4) threads(1) {}", "1:12: error: grid(...) takes 1 to 3 extents, got 4"},
	{"kernel k() grid(1) threads(1, 2) {}", "1:20: error: threads(...) takes one value, got 2"},
	{"kernel k() grid(1) grid(2) threads(1) {}", "1:20: error: duplicate grid(...) clause"},
	{"func f() { (a + b) = 1; }",
	 "1:15: error: cannot assign to this expression; expected NAME or NAME[index, ...]"},
	{"func f() { f(x)[1] = 1; }",
	 "1:12: error: cannot assign to this expression; expected NAME or NAME[index, ...]"},
	{"func f() { x; }", "1:12: error: expression statement is not a call or an assignment"},
	{"func f() { x[1]; }", "1:12: error: expression statement is not a call or an assignment"},
	/* lexical errors stop the parse; all of them are reported */
	{"const x = 0x;", "1:11: error: invalid number '0x'"},
	{"const a = 1 $ 2;", "1:13: error: invalid character '$'"},
};

static void
firstline(const char *s, char *out, size_t n)
{
	size_t l = strcspn(s, "\n");

	if (l >= n)
		l = n - 1;
	memcpy(out, s, l);
	out[l] = 0;
}

START_TEST(parse_err)
{
	Buf errs;
	char first[256];
	int nerr;

	buf_init(&errs);
	nerr = parse(err_cases[_i].src, strlen(err_cases[_i].src), NULL, &errs, NULL);
	ck_assert_msg(nerr > 0, "row %d: no error", _i);
	firstline(buf_str(&errs), first, sizeof first);
	ck_assert_msg(!strcmp(first, err_cases[_i].err), "row %d: got '%s', want '%s'", _i, first,
		      err_cases[_i].err);
	buf_free(&errs);
}
END_TEST

/* every lexical error of a file is reported, not only the first */
START_TEST(parse_all_lex_errors)
{
	static const char src[] = "const a = 1 $ 2;\nconst b = 0x;\nconst c = \"x\n/* open";
	Buf errs;

	buf_init(&errs);
	ck_assert_int_eq(parse(src, sizeof src - 1, NULL, &errs, NULL), 4);
	ck_assert_str_eq(buf_str(&errs), "1:13: error: invalid character '$'\n"
					 "2:11: error: invalid number '0x'\n"
					 "3:11: error: unterminated string\n"
					 "4:1: error: unterminated comment\n");
	buf_free(&errs);
}
END_TEST

/* after a syntax error the parser resumes at the next ';' or block; it reports at most
 * AST_MAXSYNTAX syntax errors */
START_TEST(parse_recovery_cap)
{
	Buf src, errs;
	int i;

	buf_init(&src);
	buf_init(&errs);
	for (i = 0; i < 30; i++)
		buf_puts(&src, "const A = 1 +;\n");
	ck_assert_int_eq(parse(src.s, src.len, NULL, &errs, NULL), AST_MAXSYNTAX);
	ck_assert(strstr(errs.s, "20:14: error: unexpected ';', expected expression\n") != NULL);
	ck_assert(strstr(errs.s, "21:14:") == NULL);
	buf_reset(&src);
	buf_reset(&errs);
	/* errors in three kernels, each reported, and nothing after the last */
	buf_puts(&src, "kernel a() grid(1) threads(1) { for i in 3 { clear(x); } }\n"
		       "kernel b() grid(1) threads(1) { copy(x y); }\n"
		       "kernel c() grid(1) threads(1) { if (x) { } else x = 1; }\n");
	ck_assert_int_eq(parse(src.s, src.len, NULL, &errs, NULL), 3);
	ck_assert_str_eq(errs.s, "1:42: error: unexpected number '3', expected identifier\n"
				 "2:40: error: unexpected identifier 'y', expected ')'\n"
				 "3:49: error: unexpected identifier 'x', expected '{' or 'if'\n");
	buf_free(&src);
	buf_free(&errs);
}
END_TEST

/* ---- the error corpus: test/err/{lex,syn}_*.tile, full output vs .err ---------- */

START_TEST(parse_corpus)
{
	glob_t g;
	size_t i;
	Buf fails;
	int nfail = 0;

	memset(&g, 0, sizeof g);
	glob("test/err/lex_*.tile", 0, NULL, &g);
	glob("test/err/syn_*.tile", GLOB_APPEND, NULL, &g);
	ck_assert_int_ge(g.gl_pathc, 18);
	buf_init(&fails);
	for (i = 0; i < g.gl_pathc; i++) {
		const char *path = g.gl_pathv[i];
		char errpath[512], *src, *want;
		size_t len;
		Buf errs;

		snprintf(errpath, sizeof errpath, "%.*s.err", (int)strlen(path) - 5, path);
		src = test_readfile(path, &len);
		want = test_readfile(errpath, NULL);
		buf_init(&errs);
		if (!src || !want) {
			buf_printf(&fails, "%s: cannot read it or its .err\n", path);
			nfail++;
		} else if (parse(src, len, NULL, &errs, NULL) == 0 || strcmp(buf_str(&errs), want)) {
			buf_printf(&fails, "%s:\ngot:\n%swant:\n%s", path, buf_str(&errs), want);
			nfail++;
		}
		buf_free(&errs);
		free(src);
		free(want);
	}
	globfree(&g);
	ck_assert_msg(nfail == 0, "%d corpus files differ:\n%s", nfail, buf_str(&fails));
	buf_free(&fails);
}
END_TEST

/* an empty program (or only comments) is not an error for the parser: NULL, no
 * diagnostic; sema reports "no kernel in input" (test/err/empty.tile) */
START_TEST(parse_empty)
{
	static const char *srcs[] = {"", " \n\t\r\n", "// c\n", "/* c */", NULL};
	Arena a;
	Diags d;
	int i;

	arena_init(&a);
	diags_init(&d, &a);
	for (i = 0; i < 4; i++)
		ck_assert_ptr_null(parse_program(&a, &d, srcs[i], strlen(srcs[i]), "f"));
	ck_assert_ptr_null(parse_program(&a, &d, NULL, 0, NULL));
	ck_assert_int_eq(d.nerr, 0);
	ck_assert_ptr_null(parse_program(NULL, &d, "const a = 1;", 12, "f"));
	ck_assert_ptr_null(parse_program(&a, NULL, "const a = 1;", 12, "f"));
	ck_assert_ptr_null(parse_program(&a, &d, "x", (size_t)AST_MAXSOURCE + 1, "big"));
	ck_assert_int_eq(d.nerr, 1);
	ck_assert_str_eq(d.head->msg, "input too large (1073741825 bytes; the limit is 1073741824 bytes)");
	d.nerr = 0;
	/* the file name is copied */
	{
		char name[8] = "abc";
		Node *n = parse_program(&a, &d, "const q = 1;", 12, name);

		strcpy(name, "zzz");
		ck_assert_ptr_nonnull(n);
		ck_assert_str_eq(n->loc.file, "abc");
		ck_assert_int_eq(n->loc.line, 1);
		ck_assert_int_eq(n->loc.col, 7);
	}
	/* the source needs no terminating NUL: only len bytes are read */
	ck_assert_ptr_nonnull(parse_program(&a, &d, "const a = 1;XYZ", 12, "f"));
	ck_assert_int_eq(d.nerr, 0);
	arena_free(&a);
}
END_TEST

/* ---- samples: each parses; its dump matches test/golden/NAME.ast ------------- */

static glob_t samples;

START_TEST(parse_samples)
{
	size_t i;
	char golden[512], msg[512];

	glob("samples/*.tile", 0, NULL, &samples);
	ck_assert_int_ge(samples.gl_pathc, 5);
	for (i = 0; i < samples.gl_pathc; i++) {
		const char *p = samples.gl_pathv[i], *base = strrchr(p, '/') + 1;
		size_t len;
		char *src = test_readfile(p, &len);
		Buf dump, errs;

		ck_assert_ptr_nonnull(src);
		buf_init(&dump);
		buf_init(&errs);
		ck_assert_msg(parse(src, len, &dump, &errs, NULL) == 0, "%s: %s", p, buf_str(&errs));
		ck_assert_msg(dump.len > 0, "%s: empty", p);
		snprintf(golden, sizeof golden, "test/golden/%.*s.ast", (int)strlen(base) - 5, base);
		ck_assert_msg(test_golden(golden, buf_str(&dump), msg, sizeof msg) == 0, "%s", msg);
		buf_free(&dump);
		buf_free(&errs);
		free(src);
	}
	globfree(&samples);
}
END_TEST

/* ---- limits -------------------------------------------------------------------- */

static char *
repeat(const char *pre, const char *a, int n, const char *mid, const char *b, const char *post)
{
	size_t la = strlen(a), lb = strlen(b), len = strlen(pre) + la * (size_t)n + strlen(mid) +
					       lb * (size_t)n + strlen(post);
	char *s = malloc(len + 1), *q = s;
	int i;

	q += sprintf(q, "%s", pre);
	for (i = 0; i < n; i++, q += la)
		memcpy(q, a, la);
	q += sprintf(q, "%s", mid);
	for (i = 0; i < n; i++, q += lb)
		memcpy(q, b, lb);
	sprintf(q, "%s", post);
	return s;
}

#define DEEP "error: expression nested too deeply (more than 256 levels)"

static const struct {
	const char *pre, *a, *mid, *b, *post;
	int n;
	const char *err;  /* NULL: must parse */
} deep_cases[] = {
	{"const x = ", "(", "1", ")", ";", 10000, "1:267: " DEEP},
	{"const x = ", "(", "1", ")", ";", 256, NULL},
	{"const x = ", "f(", "1", ")", ";", 255, NULL},
	{"const x = ", "f(", "1", ")", ";", 256, "1:11: " DEEP},
	{"const x = f(", "[", "1", "]", ");", 300, "1:268: " DEEP},
	{"const x = ", "-", "1", "", ";", 100000, "1:8198: " DEEP},
	{"const x = ", "-", "1", "", ";", 255, NULL},
	{"const x = ", "-", "1", "", ";", 256, "1:11: " DEEP},
	{"const x = 1", "+1", "", "", ";", 255, NULL},
	{"const x = 1", "+1", "", "", ";", 300, "1:522: " DEEP},
	{"const x = ", "a?1:", "1", "", ";", 5000, "1:8198: " DEEP},
	{"func f() ", "{ if (a) ", "{}", "}", "", 255, NULL},
	{"func f() ", "{ if (a) ", "{}", "}", "", 10000, 
	 "1:2314: error: blocks nested too deeply (more than 256 levels)"},
	{"func f() { x = ", "(a + ", "b", ")", "; }", 255, NULL},
};

START_TEST(parse_deep)
{
	char *s = repeat(deep_cases[_i].pre, deep_cases[_i].a, deep_cases[_i].n, deep_cases[_i].mid,
			 deep_cases[_i].b, deep_cases[_i].post);
	Buf errs;
	char first[256];
	int nerr;

	buf_init(&errs);
	nerr = parse(s, strlen(s), NULL, &errs, NULL);
	firstline(buf_str(&errs), first, sizeof first);
	if (deep_cases[_i].err)
		ck_assert_msg(!strcmp(first, deep_cases[_i].err), "row %d: '%s'", _i, first);
	else
		ck_assert_msg(nerr == 0, "row %d: %s", _i, first);
	buf_free(&errs);
	free(s);
}
END_TEST

static char *
writeread(const char *path, const char *s, size_t n, size_t *len)
{
	FILE *f;

	mkdir("build", 0755);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(s, 1, n, f), n);
	fclose(f);
	return test_readfile(path, len);
}

/* a 1 MB line: one valid const list, a 1 MB identifier, 1 MB of garbage */
START_TEST(parse_long_line)
{
	size_t cap = (1 << 20) + 64, n = 0, len;
	char *s = malloc(cap), *src;
	Node *top;
	Buf errs;
	int i;

	n += (size_t)sprintf(s, "const a0 = 0");
	for (i = 1; n < (1 << 20); i++)
		n += (size_t)sprintf(s + n, ", a%d = %d", i, i);
	s[n++] = ';';
	src = writeread("build/long_line.tile", s, n, &len);
	buf_init(&errs);
	ck_assert_int_eq(parse(src, len, NULL, &errs, &top), 0);
	free(src);

	memset(s, 'z', 1 << 20);
	memcpy(s, "const ", 6);
	memcpy(s + (1 << 20), " = 1;", 5);
	ck_assert_int_eq(parse(s, (1 << 20) + 5, NULL, &errs, NULL), 0);

	for (i = 0; i < (1 << 20); i++)
		s[i] = (char)(0x80 | (i * 7 % 128));
	s[1000] = '$';
	buf_reset(&errs);
	ck_assert_int_eq(parse(s, 1 << 20, NULL, &errs, NULL), 3);
	ck_assert_str_eq(buf_str(&errs), "1:1: error: invalid character '\\x80' (non-ASCII)\n"
					 "1:1001: error: invalid character '$'\n"
					 "1:1002: error: invalid character '\\xdf' (non-ASCII)\n");
	for (i = 0; i < (1 << 20); i++)
		s[i] = (char)(i % 3 ? '@' : 0);
	buf_reset(&errs);
	ck_assert_int_eq(parse(s, 1 << 20, NULL, &errs, NULL), 1 << 20);
	buf_free(&errs);
	free(s);
}
END_TEST

/* a 10,000-line program: parsed, counted, and timed (printed; bound is loose for ASan) */
START_TEST(parse_speed)
{
	Buf src, errs;
	Node *top, *k;
	struct timespec t0, t1;
	double ms;
	int i;

	buf_init(&src);
	buf_init(&errs);
	buf_puts(&src, "const BM = 64, BN = 64;\n"
		       "kernel big(A: f32[M, N], B: f32[M, N]) grid(1) threads(128) {\n"
		       "  local t: f32[BM, BN];\n");
	for (i = 0; i < 9996; i++) {
		static const char *const lines[] = {
			"  copy(A[bx * BM, by * BN + %d], t);\n",
			"  for i, j in parallel(BM, BN) { t[i, j] = max(t[i, j] * 2.0, 0.0) + %d; }\n",
			"  if (bx %% 2 == 0 && by > %d) { fill(t, -1.5e-3); } else { clear(t); }\n",
			"  copy(t, B[bx * BM : bx * BM + BM, by * BN : by * BN + BN]); // %d\n",
		};

		buf_printf(&src, lines[i % 4], i);
	}
	buf_puts(&src, "}\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(parse(src.s, src.len, NULL, &errs, &top), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	fprintf(stderr, "parse: 10,000 lines (%zu bytes) in %.2f ms\n", src.len, ms);
	ck_assert_double_lt(ms, 1000.0);
	(void)k;
	buf_free(&src);
	buf_free(&errs);
}
END_TEST

/* property: random edits of a valid program never crash; a NULL result always comes
 * with an error (the edits never empty the file), a tree never does */
START_TEST(parse_mutations)
{
	size_t len, i;
	char *base = test_readfile("samples/gemm.tile", &len);
	unsigned seed = 4242;
	static const char bytes[] = "(){}[],;:=+-*/.x1\"\0\n#";
	int iter;

	ck_assert_ptr_nonnull(base);
	for (iter = 0; iter < 1500; iter++) {
		char *s = malloc(len + 8);
		size_t n = len;
		int edits = 1 + iter % 4, e;
		Buf errs;
		Node *top;
		int nerr;

		memcpy(s, base, len);
		for (e = 0; e < edits; e++) {
			size_t at;

			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % n;
			seed = seed * 1103515245u + 12345u;
			switch ((seed >> 16) % 3) {
			case 0: memmove(s + at, s + at + 1, n - at - 1); n--; break;
			case 1: memmove(s + at + 1, s + at, n - at); n++;
				s[at] = bytes[(seed >> 4) % (sizeof bytes - 1)]; break;
			case 2: s[at] = bytes[(seed >> 4) % (sizeof bytes - 1)]; break;
			}
		}
		buf_init(&errs);
		nerr = parse(s, n, NULL, &errs, &top);
		ck_assert((top == NULL) == (nerr > 0));
		for (i = 0; i < errs.len; i++)
			ck_assert_int_ne(errs.s[i], 0);
		buf_free(&errs);
		free(s);
	}
	free(base);
}
END_TEST

/* ast_dump_expr on hand-built nodes: escapes, NULL, unknown kinds; names and counts */
START_TEST(parse_dump_misc)
{
	Arena a;
	Buf b;
	Node *n, *k;
	Tok t = {0};

	arena_init(&a);
	buf_init(&b);
	t.sval = "a\tb\x01\"\\";
	t.slen = 6;
	n = ast_str(&a, t);
	ast_dump_expr(&b, n);
	ck_assert_str_eq(buf_str(&b), "\"a\\tb\\x01\\\"\\\\\"");
	buf_reset(&b);
	ast_dump_expr(&b, NULL);
	n = ast_new(&a, N_NKINDS, (Loc){0});
	buf_putc(&b, ' ');
	ast_dump_expr(&b, n);
	{
		char want[32];

		snprintf(want, sizeof want, "<null> (?%d)", (int)N_NKINDS);
		ck_assert_str_eq(buf_str(&b), want);
	}
	ast_dump(NULL, n);
	ast_dump_expr(NULL, n);
	/* a statement given to ast_dump_expr is dumped as a statement, alone */
	k = ast_new(&a, N_LET, (Loc){0});
	k->u.bind.name = "t";
	k->u.bind.value = ast_new(&a, N_BOOL, (Loc){0});
	k->next = k->u.bind.value;
	buf_reset(&b);
	ast_dump_expr(&b, k);
	ck_assert_str_eq(buf_str(&b), "(let t false)");
	ck_assert_int_eq(ast_count(k), 2);
	ck_assert_int_eq(ast_count(NULL), 0);
	ck_assert_str_eq(ast_kind_name(N_FOR), "for");
	ck_assert_str_eq(ast_kind_name(N_NKINDS), "?");
	ck_assert_str_eq(ast_op_name(OP_SHL), "<<");
	ck_assert_str_eq(ast_op_name(OP_NOPS), "?");
	/* floats print in their shortest exact form, always with '.' or an exponent */
	{
		static const double v[] = {3.0, 0.1, 1e-7, 1e20, 2.5, 123456789.125};
		static const char *want = "3.0 0.1 1e-07 1e+20 2.5 123456789.125 ";
		size_t i;

		buf_reset(&b);
		for (i = 0; i < countof(v); i++) {
			n = ast_new(&a, N_FLOAT, (Loc){0});
			n->u.fval = v[i];
			ast_dump_expr(&b, n);
			buf_putc(&b, ' ');
		}
		ck_assert_str_eq(buf_str(&b), want);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* ---- property: random expression trees printed with minimal parentheses ----- */

static unsigned
rnd(unsigned *seed, unsigned n)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) % n;
}

static const struct {
	const char *tok;
	int prec;
} binops[] = {
	{"||", 2}, {"&&", 3}, {"|", 4}, {"^", 5}, {"&", 6}, {"==", 7}, {"!=", 7}, {"<", 8},
	{"<=", 8}, {">", 8}, {">=", 8}, {"<<", 9}, {">>", 9}, {"+", 10}, {"-", 10}, {"*", 11},
	{"/", 11}, {"%", 11},
};

/* append one operand, parenthesized when its precedence is below need */
static void
operand(Buf *src, const Buf *s, int prec, int need)
{
	if (prec < need)
		buf_printf(src, "(%s)", buf_str(s));
	else
		buf_puts(src, buf_str(s));
}

/* a random expression: its source with minimal parentheses into src, the dump the
 * parser must give into dump; returns its precedence (13: primary/postfix) */
static int
genexpr(Buf *src, Buf *dump, int depth, unsigned *seed)
{
	Buf s1, d1, s2, d2, s3, d3;
	int k = depth <= 0 ? (int)rnd(seed, 3) : (int)rnd(seed, 8), p1, p2, p3, i;

	buf_init(&s1), buf_init(&d1), buf_init(&s2), buf_init(&d2), buf_init(&s3), buf_init(&d3);
	switch (k) {
	case 0:
		i = (int)rnd(seed, 1000);
		buf_printf(src, "%d", i);
		buf_printf(dump, "%d", i);
		k = 13;
		break;
	case 1:
	case 2:
		i = 'a' + (int)rnd(seed, 5);
		buf_printf(src, "%c", i);
		buf_printf(dump, "%c", i);
		k = 13;
		break;
	case 3: /* unary */
		p1 = genexpr(&s1, &d1, depth - 1, seed);
		i = (int)rnd(seed, 3);
		buf_puts(src, i == 0 ? "- " : i == 1 ? "!" : "~");
		operand(src, &s1, p1, 12);
		buf_printf(dump, "(%s %s)", i == 0 ? "neg" : i == 1 ? "!" : "~", buf_str(&d1));
		k = 12;
		break;
	case 4: /* conditional: the condition binds tighter than ?:, the rest may not */
		p1 = genexpr(&s1, &d1, depth - 1, seed);
		genexpr(&s2, &d2, depth - 1, seed);
		p3 = genexpr(&s3, &d3, depth - 1, seed);
		operand(src, &s1, p1, 2);
		buf_printf(src, " ? %s : ", buf_str(&s2));
		operand(src, &s3, p3, 1);
		buf_printf(dump, "(?: %s %s %s)", buf_str(&d1), buf_str(&d2), buf_str(&d3));
		k = 1;
		break;
	case 5: /* call or index: operands need no parentheses */
		genexpr(&s1, &d1, depth - 1, seed);
		genexpr(&s2, &d2, depth - 1, seed);
		if (rnd(seed, 2)) {
			buf_printf(src, "f(%s, %s)", buf_str(&s1), buf_str(&s2));
			buf_printf(dump, "(call f %s %s)", buf_str(&d1), buf_str(&d2));
		} else {
			buf_printf(src, "x[%s, %s]", buf_str(&s1), buf_str(&s2));
			buf_printf(dump, "(index x %s %s)", buf_str(&d1), buf_str(&d2));
		}
		k = 13;
		break;
	default: /* binary, left-associative */
		i = (int)rnd(seed, countof(binops));
		p1 = genexpr(&s1, &d1, depth - 1, seed);
		p2 = genexpr(&s2, &d2, depth - 1, seed);
		operand(src, &s1, p1, binops[i].prec);
		buf_printf(src, " %s ", binops[i].tok);
		operand(src, &s2, p2, binops[i].prec + 1);
		buf_printf(dump, "(%s %s %s)", binops[i].tok, buf_str(&d1), buf_str(&d2));
		k = binops[i].prec;
		break;
	}
	buf_free(&s1), buf_free(&d1), buf_free(&s2), buf_free(&d2), buf_free(&s3), buf_free(&d3);
	return k;
}

START_TEST(parse_random_exprs)
{
	unsigned seed = 777;
	int iter;

	for (iter = 0; iter < 3000; iter++) {
		Buf src, want, dump, errs;

		buf_init(&src), buf_init(&want), buf_init(&dump), buf_init(&errs);
		buf_puts(&src, "const v = ");
		buf_puts(&want, "(const v ");
		genexpr(&src, &want, 1 + iter % 6, &seed);
		buf_puts(&src, ";");
		buf_puts(&want, ")\n");
		ck_assert_msg(parse(src.s, src.len, &dump, &errs, NULL) == 0, "%s: %s", src.s,
			      buf_str(&errs));
		ck_assert_msg(!strcmp(buf_str(&dump), want.s), "source: %s\ngot:  %swant: %s", src.s,
			      buf_str(&dump), want.s);
		buf_free(&src), buf_free(&want), buf_free(&dump), buf_free(&errs);
	}
}
END_TEST

Suite *
suite_parse(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, parse_ok, 0, countof(ok_cases));
	tcase_add_loop_test(tc, parse_err, 0, countof(err_cases));
	tcase_add_test(tc, parse_all_lex_errors);
	tcase_add_test(tc, parse_corpus);
	tcase_add_test(tc, parse_recovery_cap);
	tcase_add_test(tc, parse_empty);
	tcase_add_test(tc, parse_samples);
	tcase_add_loop_test(tc, parse_deep, 0, countof(deep_cases));
	tcase_add_test(tc, parse_long_line);
	tcase_add_test(tc, parse_speed);
	tcase_add_test(tc, parse_mutations);
	tcase_add_test(tc, parse_random_exprs);
	tcase_add_test(tc, parse_dump_misc);
	suite_add_tcase(s, tc);
	return s;
}
