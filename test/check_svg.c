/* check_svg.c: `tilec layout show ... --svg FILE`: the file is well-formed
 * XML (checked by a small tag-stack parser here), a fragment's cells carry
 * the right thread:slot labels, a swizzle's bank map the right banks, and
 * bad requests fail cleanly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "svg.h"
#include "tests.h"

/* 1 if s is well-formed: balanced tags, quoted attributes, no stray < or & */
static int
wellformed(const char *s, char *why, size_t whysz)
{
	char stack[64][32];
	int depth = 0, roots = 0;
	const char *p = s;

	if (!strncmp(p, "<?xml", 5)) {
		p = strstr(p, "?>");
		if (!p)
			return snprintf(why, whysz, "unterminated prolog"), 0;
		p += 2;
	}
	while (*p) {
		if (*p == '&') {
			if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) && strncmp(p, "&gt;", 4) &&
			    strncmp(p, "&quot;", 6))
				return snprintf(why, whysz, "bare & at %d", (int)(p - s)), 0;
			p++;
			continue;
		}
		if (*p != '<') {
			if (!depth && !(*p == '\n' || *p == ' '))
				return snprintf(why, whysz, "text outside the root at %d", (int)(p - s)), 0;
			p++;
			continue;
		}
		if (p[1] == '/') {
			size_t n = strcspn(p + 2, ">");

			if (!depth || n != strlen(stack[depth - 1]) || strncmp(p + 2, stack[depth - 1], n))
				return snprintf(why, whysz, "mismatched close at %d", (int)(p - s)), 0;
			depth--;
			p += 2 + n + 1;
			continue;
		}
		{
			const char *q = p + 1;
			size_t n = strcspn(q, " />\n");
			int selfclose = 0;

			if (!n || n >= 32 || depth >= 64)
				return snprintf(why, whysz, "bad tag at %d", (int)(p - s)), 0;
			memcpy(stack[depth], q, n);
			stack[depth][n] = 0;
			q += n;
			for (;;) {
				while (*q == ' ' || *q == '\n')
					q++;
				if (*q == '>')
					break;
				if (q[0] == '/' && q[1] == '>') {
					selfclose = 1;
					q++;
					break;
				}
				while (*q && *q != '=' && *q != '>' && *q != ' ')
					q++;
				if (*q != '=' || q[1] != '"')
					return snprintf(why, whysz, "unquoted attribute at %d", (int)(q - s)), 0;
				q = strchr(q + 2, '"');
				if (!q)
					return snprintf(why, whysz, "unterminated attribute"), 0;
				q++;
			}
			if (!depth)
				roots++;
			if (!selfclose)
				depth++;
			p = q + 1;
		}
	}
	if (depth || roots != 1)
		return snprintf(why, whysz, "depth %d, %d roots at the end", depth, roots), 0;
	return 1;
}

static const struct {
	const char *args[12];
	const char *labels[4];   /* "eR_C\">LABEL<" fragments that must appear */
} pics[] = {
	{{"layout", "show", "mma", "--operand", "C", "--dtype", "f16", NULL},
	 {"e0_0\" x=\"50\" y=\"63\" text-anchor=\"middle\">T0:0<", "e0_2\" x=\"138\" y=\"63\" "
	  "text-anchor=\"middle\">T1:0<", "text-anchor=\"middle\">T0:2</text>", ">T4:1<"}},
	{{"layout", "show", "swizzle", "--mode", "64B", "--shape", "8x32", "--dtype", "f16", NULL},
	 {"e0_0\" x=\"50\" y=\"63\" text-anchor=\"middle\">b0<", "<title>(2, 0): offset 72 bank 4",
	  "<title>(2, 8): offset 64 bank 0", "<title>(0, 8): offset 8 bank 4"}},
	{{"layout", "show", "wmma", "--operand", "A", NULL},
	 {"<title>(0, 0): T0 T16 slot 0", ">T0:0<", NULL, NULL}},
};

START_TEST(pictures)
{
	char path[64], why[128], *argv[16], *txt;
	Buf out, err;
	int argc = 0, k;

	snprintf(path, sizeof path, "build/check_svg_%d.svg", _i);
	remove(path);
	for (; pics[_i].args[argc]; argc++)
		argv[argc] = (char *)pics[_i].args[argc];
	argv[argc++] = "--svg";
	argv[argc++] = path;
	argv[argc] = NULL;
	buf_init(&out);
	buf_init(&err);
	ck_assert_msg(layout_cli_run(argc, argv, &out, &err) == 0, "%s", buf_str(&err));
	txt = test_readfile(path, NULL);
	ck_assert_ptr_nonnull(txt);
	ck_assert_msg(wellformed(txt, why, sizeof why), "%s: %s", path, why);
	for (k = 0; k < 4 && pics[_i].labels[k]; k++)
		ck_assert_msg(strstr(txt, pics[_i].labels[k]), "%s lacks '%s'", path,
			      pics[_i].labels[k]);
	free(txt);
	buf_free(&out);
	buf_free(&err);
}
END_TEST

START_TEST(errors)
{
	char *argv[] = {"layout", "show", "mma", "--operand", "C", "--dtype", "f16", "--svg",
			"build/no/such/dir/x.svg", NULL};
	char *argv2[] = {"layout", "show", "mma", "--operand", "C", "--svg", NULL};
	Arena A;
	Err e = {0};
	int64_t shape[3] = {4, 4, 4};
	const char *fwd[1] = {"_i * 16 + _j * 4 + _k"};
	Layout *L;
	Buf out, err;
	char why[128];

	buf_init(&out);
	buf_init(&err);
	ck_assert_int_eq(layout_cli_run(9, argv, &out, &err), 1);
	ck_assert_msg(strstr(buf_str(&err), "cannot write"), "%s", buf_str(&err));
	ck_assert_int_eq(layout_cli_run(6, argv2, &out, &err), 2);
	arena_init(&A);
	L = layout_parse(&A, shape, 3, fwd, 1, &e);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(svg_layout(&out, L, 4, &e), -1);
	ck_assert_msg(strstr(e.msg, "rank 3"), "%s", e.msg);
	ck_assert_int_eq(svg_layout(NULL, L, 4, &e), -1);
	ck_assert_int_eq(wellformed("<a><b></a></b>", why, sizeof why), 0);
	ck_assert_int_eq(wellformed("<a x=1/>", why, sizeof why), 0);
	ck_assert_int_eq(wellformed("<a/><b/>", why, sizeof why), 0);
	ck_assert_int_eq(wellformed("<a>&</a>", why, sizeof why), 0);
	arena_free(&A);
	buf_free(&out);
	buf_free(&err);
}
END_TEST

Suite *
suite_svg(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("svg");

	tcase_add_loop_test(tc, pictures, 0, (int)(sizeof pics / sizeof pics[0]));
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}
