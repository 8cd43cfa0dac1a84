/*
 * check_err.c: the bad-input corpus. Every test/err/NAME.tile goes through
 * tilec_compile (with the -D defines of NAME.args, one per line, if present);
 * the status must be "error" and the diagnostics, with the file name taken
 * off each line, must equal NAME.err (UPDATE_GOLDEN=1 rewrites them).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tilec.h"
#include "tl.h"

static glob_t files;

/* the diagnostics with "path:" (and the space after a line-less one) removed */
static char *
strip(const char *diags, const char *path)
{
	size_t n = strlen(path);
	Buf b;
	const char *p = diags, *nl;

	buf_init(&b);
	while (*p) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		if (!strncmp(p, path, n) && p[n] == ':') {
			p += n + 1;
			if (*p == ' ')
				p++;
		}
		buf_putn(&b, p, (size_t)(nl - p));
		buf_putc(&b, '\n');
		p = *nl ? nl + 1 : nl;
	}
	return buf_take(&b);
}

/* the defines of NAME.args: a NULL-terminated array of lines */
static char **
readargs(const char *tile, int *n, char **text)
{
	char path[512];
	char **v, *s, *p;
	size_t len;

	*n = 0;
	snprintf(path, sizeof path, "%.*s.args", (int)(strlen(tile) - 5), tile);
	*text = s = test_readfile(path, &len);
	if (!s)
		return NULL;
	v = calloc(len + 2, sizeof *v);
	for (p = strtok(s, "\n"); p && v; p = strtok(NULL, "\n"))
		v[(*n)++] = p;
	return v;
}

START_TEST(corpus_file)
{
	const char *path = files.gl_pathv[_i];
	char golden[512], msg[600], *src, *got, *argtext = NULL, **defs;
	size_t len;
	int ndef;
	tilec_options o;
	tilec_result r;

	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	defs = readargs(path, &ndef, &argtext);
	tilec_options_init(&o);
	o.filename = path;
	o.defines = (const char *const *)defs;
	o.ndefines = ndef;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_ERR_COMPILE, "%s: status %s, want TILEC_ERR_COMPILE",
		      path, tilec_status_str(r.status));
	ck_assert_msg(r.nerrors >= 1, "%s: no error counted", path);
	ck_assert_msg(r.output && !*r.output, "%s: output on error", path);
	got = strip(r.diagnostics, path);
	snprintf(golden, sizeof golden, "%.*s.err", (int)(strlen(path) - 5), path);
	ck_assert_msg(test_golden(golden, got, msg, sizeof msg) == 0, "%s: %s\ngot:\n%s", path, msg,
		      got);
	free(got);
	tilec_result_free(&r);
	free(defs);
	free(argtext);
	free(src);
}
END_TEST

/* the corpus is as large as the brief asks, and every .err has its .tile */
START_TEST(corpus_size)
{
	glob_t errs;
	size_t i, nsem = 0;

	ck_assert_msg(files.gl_pathc >= 40, "only %zu corpus files", files.gl_pathc);
	for (i = 0; i < files.gl_pathc; i++)
		nsem += strstr(files.gl_pathv[i], "/sem_") != NULL;
	ck_assert_msg(nsem >= 25, "only %zu semantic corpus files", nsem);
	ck_assert_int_eq(glob("test/err/*.err", 0, NULL, &errs), 0);
	ck_assert_uint_eq(errs.gl_pathc, files.gl_pathc);
	globfree(&errs);
}
END_TEST

Suite *
suite_err(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("corpus");

	if (glob("test/err/*.tile", 0, NULL, &files) != 0)
		files.gl_pathc = 0;
	tcase_add_test(tc, corpus_size);
	if (files.gl_pathc)
		tcase_add_loop_test(tc, corpus_file, 0, (int)files.gl_pathc);
	suite_add_tcase(s, tc);
	return s;
}
