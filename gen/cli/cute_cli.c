/*
 * cute_cli.c: `tilec cute OP ARG...` and `tilec cute --batch`: runs one
 * operation of the CuTe algebra on text arguments and prints the result in
 * C++ CuTe spelling. The batch mode reads `op<TAB>arg1[<TAB>arg2]` lines and
 * answers each with one line: the result or `ERROR: message`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cute.h"

/* a value as `13` or `(1,3)`: dynamic integers print without underscore */
static void
print_value(Buf *b, const CuteTup *t)
{
	int i;

	if (t->n < 0) {
		buf_printf(b, "%lld", (long long)t->x.v);
		return;
	}
	buf_putc(b, '(');
	for (i = 0; i < t->n; i++) {
		if (i)
			buf_putc(b, ',');
		print_value(b, t->e[i]);
	}
	buf_putc(b, ')');
}

static int
want_layout(const CuteObj *o, const char *op, Err *err)
{
	if (o->k != CUTE_LAYOUT)
		return err_set(err, "cute %s: argument 1 must be a layout shape:stride", op);
	return 0;
}

static int
want_int(const CuteObj *o, const char *what, int64_t *v, Err *err)
{
	if (o->k != CUTE_TUPLE || o->t->n >= 0 || o->t->x.nb)
		return err_set(err, "cute: %s must be an integer", what);
	*v = o->t->x.v;
	return 0;
}

/* arg2 of blocked/raked: a layout or an integer n (make_layout(n)) */
static int
want_layout2(Arena *a, const CuteObj *o, CuteLayout *l, Err *err)
{
	if (o->k == CUTE_LAYOUT) {
		*l = o->l;
		return 0;
	}
	if (o->k == CUTE_TUPLE)
		return cute_make_left(a, o->t, l, err);
	return err_set(err, "cute: argument 2 must be a layout or a shape");
}

static const struct {
	const char *name;
	CuteGroup g;
	int product;
} groups[] = {
	{"logical_divide", CUTE_LOGICAL, 0},  {"zipped_divide", CUTE_ZIPPED, 0},
	{"tiled_divide", CUTE_TILED, 0},      {"flat_divide", CUTE_FLAT, 0},
	{"logical_product", CUTE_LOGICAL, 1}, {"zipped_product", CUTE_ZIPPED, 1},
	{"tiled_product", CUTE_TILED, 1},     {"flat_product", CUTE_FLAT, 1},
};

static int
nargs_ok(const char *op, int nargs, int lo, int hi, Err *err)
{
	if (nargs < lo || nargs > hi)
		return err_set(err, "cute %s: expected %d%s argument%s, got %d", op, lo,
			       hi > lo ? " or 2" : "", hi > 1 ? "s" : "", nargs);
	return 0;
}

int
cute_run_op(Arena *a, const char *op, int nargs, const char *const *args, Buf *out, Err *err)
{
	CuteObj *x = NULL, *y = NULL;
	CuteLayout r, l2;
	int64_t v = 0, i64 = 0;
	size_t g;
	int isl;

	if (!op || nargs < 1 || nargs > 2 || !args)
		return err_set(err, "cute: expected an operation and one or two arguments");
	if (cute_parse(a, args[0], &x, err) < 0)
		return -1;
	if (nargs > 1 && cute_parse(a, args[1], &y, err) < 0)
		return -1;

	if (!strcmp(op, "size") || !strcmp(op, "rank") || !strcmp(op, "depth") ||
	    !strcmp(op, "cosize")) {
		const CuteTup *t;

		if (nargs_ok(op, nargs, 1, 1, err) < 0)
			return -1;
		if (x->k == CUTE_COMPOSED) {
			x->l = x->c.l;
			x->k = CUTE_LAYOUT;
		}
		if (x->k != CUTE_LAYOUT && (x->k != CUTE_TUPLE || !strcmp(op, "cosize")))
			return err_set(err, "cute %s: argument must be a layout", op);
		if (x->k == CUTE_LAYOUT && cute_valid(x->l, err) < 0)
			return -1;
		t = x->k == CUTE_LAYOUT ? x->l.shape : x->t;
		if (!strcmp(op, "size")) {
			if (cute_tup_size(t, &v, err) < 0)
				return -1;
		} else if (!strcmp(op, "cosize")) {
			if (cute_cosize(x->l, &v, err) < 0)
				return -1;
		} else {
			v = op[0] == 'r' ? cute_tup_rank(t) : cute_tup_depth(t);
		}
		buf_printf(out, "_%lld", (long long)v);
		return 0;
	}
	if (!strcmp(op, "coalesce") || !strcmp(op, "filter")) {
		if (nargs_ok(op, nargs, 1, 2, err) < 0 || want_layout(x, op, err) < 0)
			return -1;
		if (y && y->k != CUTE_TUPLE)
			return err_set(err, "cute %s: the profile must be an integer tuple", op);
		if ((op[0] == 'c' ? cute_coalesce : cute_filter)(a, x->l, y ? y->t : NULL, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "composition")) {
		if (nargs_ok(op, nargs, 2, 2, err) < 0)
			return -1;
		if (x->k == CUTE_SWIZZLE) {
			CuteComposed c;

			if (y->k != CUTE_LAYOUT)
				return err_set(err, "cute composition: a swizzle composes with a layout");
			if (cute_compose_swizzle(x->sw, y->l, &c, &isl, err) < 0)
				return -1;
			if (isl)
				cute_print_layout(out, c.l);
			else
				cute_print_composed(out, &c);
			return 0;
		}
		if (x->k == CUTE_COMPOSED) {
			CuteComposed c = x->c;

			if (cute_compose_obj(a, x->c.l, y, &c.l, err) < 0)
				return -1;
			cute_print_composed(out, &c);
			return 0;
		}
		if (want_layout(x, op, err) < 0 || cute_compose_obj(a, x->l, y, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "complement")) {
		if (nargs_ok(op, nargs, 1, 2, err) < 0 || want_layout(x, op, err) < 0)
			return -1;
		if (y && y->k != CUTE_TUPLE)
			return err_set(err, "cute complement: the cotarget must be an integer or a shape");
		if (cute_complement(a, x->l, y ? y->t : NULL, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "right_inverse") || !strcmp(op, "left_inverse")) {
		if (nargs_ok(op, nargs, 1, 1, err) < 0 || want_layout(x, op, err) < 0)
			return -1;
		if ((op[0] == 'r' ? cute_right_inverse : cute_left_inverse)(a, x->l, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	for (g = 0; g < countof(groups); g++) {
		if (strcmp(op, groups[g].name))
			continue;
		if (nargs_ok(op, nargs, 2, 2, err) < 0 || want_layout(x, op, err) < 0)
			return -1;
		if ((groups[g].product ? cute_product : cute_divide)(a, groups[g].g, x->l, y, &r,
								   err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "blocked_product") || !strcmp(op, "raked_product")) {
		if (nargs_ok(op, nargs, 2, 2, err) < 0 || want_layout(x, op, err) < 0 ||
		    want_layout2(a, y, &l2, err) < 0)
			return -1;
		if ((op[0] == 'b' ? cute_blocked_product : cute_raked_product)(a, x->l, l2, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "with_shape") || !strcmp(op, "restrict")) {
		if (nargs_ok(op, nargs, 2, 2, err) < 0 || want_layout(x, op, err) < 0)
			return -1;
		if (y->k != CUTE_TUPLE)
			return err_set(err, "cute %s: argument 2 must be an integer tuple", op);
		if ((op[0] == 'w' ? cute_with_shape : cute_restrict)(a, x->l, y->t, &r, err) < 0)
			return -1;
		cute_print_layout(out, r);
		return 0;
	}
	if (!strcmp(op, "eval")) {
		CuteTup *val;

		if (nargs_ok(op, nargs, 2, 2, err) < 0)
			return -1;
		if (x->k == CUTE_COMPOSED) {
			if (want_int(y, "eval index", &i64, err) < 0 ||
			    cute_composed_eval(&x->c, i64, &v, err) < 0)
				return -1;
			buf_printf(out, "%lld", (long long)v);
			return 0;
		}
		if (want_layout(x, op, err) < 0)
			return -1;
		if (y->k != CUTE_TUPLE)
			return err_set(err, "cute eval: argument 2 must be an index or a coordinate");
		if (cute_eval_coord(a, x->l, y->t, &val, err) < 0)
			return -1;
		print_value(out, val);
		return 0;
	}
	if (!strcmp(op, "swizzle")) {
		if (nargs_ok(op, nargs, 2, 2, err) < 0)
			return -1;
		if (x->k != CUTE_SWIZZLE)
			return err_set(err, "cute swizzle: argument 1 must be Sw<B,M,S>");
		if (want_int(y, "swizzle offset", &i64, err) < 0)
			return -1;
		if (i64 < 0)
			return err_set(err, "cute swizzle: negative offset");
		buf_printf(out, "%lld", (long long)cute_swizzle_apply(x->sw, i64));
		return 0;
	}
	return err_set(err, "cute: unknown operation '%.40s'", op);
}

static void
usage(FILE *f)
{
	fputs("usage: tilec cute OP ARG [ARG2]     run one CuTe algebra operation\n"
	      "       tilec cute --batch           read op<TAB>arg1[<TAB>arg2] lines from stdin\n"
	      "OP: size cosize rank depth coalesce filter composition complement right_inverse\n"
	      "    left_inverse logical_divide zipped_divide tiled_divide flat_divide\n"
	      "    logical_product zipped_product tiled_product flat_product blocked_product\n"
	      "    raked_product with_shape restrict eval swizzle (see docs/cute.md)\n",
	      f);
}

enum { BATCH_LINE_MAX = 1 << 20 };

/* a line of at most BATCH_LINE_MAX + 1 bytes (getline would grow without bound on a file
 * without newlines); its length, -1 at the end, -2 out of memory */
static ssize_t
readline_bounded(char **line, size_t *cap, FILE *f)
{
	size_t n = 0;
	int c = 0;

	for (;;) {
		if (n + 2 > *cap) {
			size_t nc = *cap ? *cap * 2 : 256;
			char *t = realloc(*line, nc);

			if (!t)
				return -2;
			*line = t, *cap = nc;
		}
		c = getc(f);
		if (c == EOF)
			break;
		(*line)[n++] = (char)c;
		if (c == '\n' || n > BATCH_LINE_MAX)
			break;
	}
	(*line)[n] = 0;
	return n || c != EOF ? (ssize_t)n : -1;
}

static int
batch(void)
{
	Arena a;
	Buf out, res;
	Err err;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	long lineno = 0;
	int rc = 0;

	arena_init(&a);
	buf_init(&out);
	buf_init(&res);
	while ((n = readline_bounded(&line, &cap, stdin)) >= 0 && !ferror(stdout)) {
		const char *args[2];
		char *tab, *op = line;
		int nargs = 0;

		lineno++;
		if (n > BATCH_LINE_MAX) {
			fprintf(stderr, "tilec cute: error: <stdin>:%ld: line longer than %d bytes\n",
			        lineno, BATCH_LINE_MAX);
			rc = 1;
			break;
		}
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		err_clear(&err);
		buf_reset(&res);
		if ((tab = strchr(op, '\t'))) {
			*tab = 0;
			args[nargs++] = tab + 1;
			if ((tab = strchr(args[0], '\t'))) {
				*tab = 0;
				args[nargs++] = tab + 1;
				if (strchr(args[1], '\t'))
					nargs = 3;
			}
		}
		if (nargs == 0 || nargs > 2)
			err_set(&err, "cute: expected op<TAB>arg1[<TAB>arg2]");
		else
			cute_run_op(&a, op, nargs, args, &res, &err);
		if (err.set)
			buf_printf(&out, "ERROR: %s\n", err.msg);
		else
			buf_printf(&out, "%s\n", buf_str(&res));
		if (out.len > (1 << 16)) {
			fwrite(out.s, 1, out.len, stdout);
			buf_reset(&out);
		}
		if (a.used > (4 << 20))
			arena_free(&a);
	}
	fwrite(buf_str(&out), 1, out.len, stdout);
	if (n == -2) {
		fputs("tilec cute: error: out of memory\n", stderr);
		rc = 1;
	}
	free(line);
	buf_free(&out);
	buf_free(&res);
	arena_free(&a);
	return fflush(stdout) ? 1 : rc;
}

int
cute_main(int argc, char **argv)
{
	Arena a;
	Buf out;
	Err err = {0};
	int rc, k;

	/* -h / --help anywhere: tilec cute --help, tilec cute composition --help, ... */
	for (k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
			usage(stdout);
			return 0;
		}
	if (argc == 2 && !strcmp(argv[1], "--batch"))
		return batch();
	if (argc < 3 || argc > 4) {
		usage(stderr);
		return 2;
	}
	arena_init(&a);
	buf_init(&out);
	rc = cute_run_op(&a, argv[1], argc - 2, (const char *const *)argv + 2, &out, &err);
	if (rc < 0)
		fprintf(stderr, "tilec: %s\n", err.msg);
	else
		printf("%s\n", buf_str(&out));
	buf_free(&out);
	arena_free(&a);
	return rc < 0 ? 1 : 0;
}
