/*
 * check_cute_conv.c: the probe-then-prove converters on hand-written
 * callbacks (row-major, transposed, mixed-radix, multi-output, hierarchical,
 * swizzled, fragments, non-representable, too large) and on random layouts.
 */
#include <stdlib.h>
#include <string.h>

#include "cute.h"
#include "tests.h"

#define REQUIRE(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)

static int
f_rowmajor(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] * 8 + c[1];
	return 0;
}

static int
f_row3(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] * 8 + c[1] * 8 + c[2];
	return 0;
}

static int
f_transposed(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[1] * 4 + c[0];
	return 0;
}

static int
f_mixed(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = (c[0] % 8) * 16 + c[0] / 8;
	return 0;
}

/* outputs (thread, slot) of a 16x8 tile: serialized thread*4 + slot */
static int
f_thread_slot(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] * 2 + c[1] / 4;
	out[1] = c[1] % 4;
	return 0;
}

static int
f_identity2(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0];
	out[1] = c[1];
	return 0;
}

static int
f_split(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] / 8;
	out[1] = c[0] % 8;
	return 0;
}

static int
f_both(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0];
	out[1] = c[0];
	return 0;
}

static int
f_swz(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = cute_swizzle_apply((CuteSwizzle){3, 3, 3}, c[0] * 64 + c[1]);
	return 0;
}

static int
f_square(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] * c[0];
	return 0;
}

static int
f_offset(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] + 1;
	return 0;
}

static int
f_fails(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0];
	return c[0] == 5;
}

static int
f_xor(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] ^ (c[0] >> 2); /* not a swizzle of a strided layout with |S| >= B */
	return 0;
}

typedef struct Case {
	const char *name;
	int kind; /* 0 flat, 1 hierarchical, 2 composed */
	int nin, nout;
	int64_t in[4], out[4];
	CuteProbe f;
	int want_rc;
	const char *want; /* the printed result, or a fragment of the reason */
} Case;

static const Case cases[] = {
	{"rowmajor", 0, 2, 1, {4, 8}, {32}, f_rowmajor, 1, "(_4,_8):(_8,_1)"},
	{"transposed", 0, 2, 1, {4, 8}, {32}, f_transposed, 1, "(_4,_8):(_1,_4)"},
	{"mixed radix", 0, 1, 1, {64}, {128}, f_mixed, 1, "((_8,_8)):((_16,_1))"},
	{"thread,slot", 0, 2, 2, {16, 8}, {32, 4}, f_thread_slot, 1, "(_16,_8):(_8,_1)"},
	{"extent 1", 0, 3, 1, {4, 1, 8}, {32}, f_row3, 1, "(_4,_1,_8):(_8,_0,_1)"},
	{"hier identity", 1, 2, 2, {4, 8}, {4, 8}, f_identity2, 1, "(_4,_8):(_1@0,_1@1)"},
	{"hier split", 1, 1, 2, {32}, {4, 8}, f_split, 1, "((_8,_4)):((_1@1,_1@0))"},
	{"hier both", 1, 1, 2, {4}, {4, 4}, f_both, 0, "moves outputs"},
	{"swizzled", 2, 2, 1, {8, 64}, {512}, f_swz, 1, "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"},
	{"composed plain", 2, 2, 1, {4, 8}, {32}, f_rowmajor, 1, "Sw<0,0,0> o _0 o (_4,_8):(_8,_1)"},
	{"square", 0, 1, 1, {8}, {64}, f_square, 0, "not representable"},
	{"offset", 0, 1, 1, {8}, {16}, f_offset, 0, "origin maps to 1"},
	{"fails", 0, 1, 1, {8}, {8}, f_fails, 0, "fails at a point"},
	{"range", 0, 2, 1, {4, 8}, {16}, f_rowmajor, 0, "outside [0,16)"},
	{"xor", 2, 1, 1, {64}, {64}, f_xor, 0, "no swizzle"},
	{"too large", 0, 2, 1, {1 << 12, 1 << 12}, {1 << 24}, f_rowmajor, -1, "proof limit"},
	{"bad extent", 0, 2, 1, {4, 0}, {32}, f_rowmajor, -1, "bad input extents"},
	{"no inputs", 0, 0, 1, {4}, {32}, f_rowmajor, -1, "inputs"},
};

/* a layout's value at a logical coordinate (mode k = input k) */
typedef struct LCtx {
	CuteLayout l;
	int nin;
} LCtx;

static int
f_layout(void *ctx, const int64_t *c, int64_t *out)
{
	LCtx *x = ctx;
	Arena a;
	Err err = {0};
	CuteTup *coord, *v;
	int k, rc = 1;

	arena_init(&a);
	coord = cute_tuple(&a, x->nin);
	for (k = 0; k < x->nin; k++)
		coord->e[k] = cute_int(&a, c[k]);
	if (cute_eval_coord(&a, x->l, coord, &v, &err) == 0 && v->n < 0) {
		out[0] = v->x.v;
		rc = 0;
	}
	arena_free(&a);
	return rc;
}

static void
check_equal(CuteProbe f, void *ctx, int nin, const int64_t *in, CuteLayout l, int64_t omul)
{
	Arena a;
	Err err = {0};
	int64_t c[16] = {0}, out[4], v;
	int k;

	arena_init(&a);
	for (;;) {
		CuteTup *coord = cute_tuple(&a, nin), *val;

		for (k = 0; k < nin; k++)
			coord->e[k] = cute_int(&a, c[k]);
		REQUIRE(f(ctx, c, out) == 0, "probe failed");
		REQUIRE(cute_eval_coord(&a, l, coord, &val, &err) == 0, "%s", err.msg);
		v = omul ? out[0] * omul + out[1] : out[0];
		REQUIRE(val->n < 0 && val->x.v == v, "converted layout differs");
		for (k = nin - 1; k >= 0; k--) {
			if (++c[k] < in[k])
				break;
			c[k] = 0;
		}
		if (k < 0)
			break;
	}
	arena_free(&a);
}

START_TEST(conv_table)
{
	const Case *t = &cases[_i];
	Arena a;
	Err err = {0};
	CuteLayout l;
	CuteComposed c;
	Buf b;
	int rc;

	arena_init(&a);
	buf_init(&b);
	if (t->kind == 0)
		rc = cute_from_tile(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &l, &err);
	else if (t->kind == 1)
		rc = cute_from_tile_hier(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &l, &err);
	else
		rc = cute_composed_from_tile(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &c, &err);
	ck_assert_msg(rc == t->want_rc, "%s: rc %d (%s)", t->name, rc, err.msg);
	if (rc == 1) {
		if (t->kind == 2)
			cute_print_composed(&b, &c);
		else
			cute_print_layout(&b, l);
		ck_assert_str_eq(buf_str(&b), t->want);
		if (t->kind == 0 && t->nout == 1)
			check_equal(t->f, NULL, t->nin, t->in, l, 0);
	} else {
		ck_assert_msg(strstr(err.msg, t->want), "%s: '%s' lacks '%s'", t->name, err.msg,
			      t->want);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* the table forms give the probe forms' results and messages: every case whose
 * function can be tabulated (small domain, defined everywhere) */
START_TEST(conv_from_table)
{
	const Case *t = &cases[_i];
	Arena a;
	Err e1 = {0}, e2 = {0};
	CuteLayout l1, l2;
	CuteComposed c1, c2;
	Buf b1, b2;
	int64_t total = 1, f, r, c[16] = {0}, *vals;
	int k, rc1, rc2, ok = t->nin >= 1;

	for (k = 0; k < t->nin && ok; k++)
		ok = t->in[k] > 0 && (total *= t->in[k]) <= (1 << 16);
	vals = ok ? calloc((size_t)(total * t->nout), sizeof *vals) : NULL;
	for (f = 0; ok && f < total; f++) {
		for (r = f, k = t->nin - 1; k >= 0; k--) {
			c[k] = r % t->in[k];
			r /= t->in[k];
		}
		ok = vals && t->f(NULL, c, vals + f * t->nout) == 0;
	}
	if (!ok) {      /* "fails", "too large", "bad extent", "no inputs": no table */
		ck_assert_msg(_i >= 12, "%s: could not be tabulated", t->name);
		free(vals);
		return;
	}
	arena_init(&a);
	buf_init(&b1);
	buf_init(&b2);
	if (t->kind == 2) {
		rc1 = cute_composed_from_tile(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &c1, &e1);
		rc2 = cute_composed_from_table(&a, t->nin, t->in, t->nout, t->out, vals, &c2, &e2);
		if (rc1 == 1 && rc2 == 1) {
			cute_print_composed(&b1, &c1);
			cute_print_composed(&b2, &c2);
		}
	} else {
		rc1 = t->kind ? cute_from_tile_hier(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &l1, &e1)
			      : cute_from_tile(&a, t->nin, t->in, t->nout, t->out, t->f, NULL, &l1, &e1);
		rc2 = cute_from_table(&a, t->nin, t->in, t->nout, t->out, vals, t->kind, &l2, &e2);
		if (rc1 == 1 && rc2 == 1) {
			cute_print_layout(&b1, l1);
			cute_print_layout(&b2, l2);
		}
	}
	ck_assert_msg(rc1 == rc2, "%s: probe rc %d, table rc %d", t->name, rc1, rc2);
	if (rc1 == 1)
		ck_assert_str_eq(buf_str(&b1), buf_str(&b2));
	else
		ck_assert_str_eq(e1.msg, e2.msg);
	buf_free(&b1);
	buf_free(&b2);
	arena_free(&a);
	free(vals);
}
END_TEST

/* a fragment of 8 logical points replicated twice over 8 threads, 2 slots each */
static int
fr_thread(void *ctx, const int64_t *c, int64_t rep, int64_t *thread)
{
	(void)ctx;
	*thread = c[0] % 4 + 4 * rep;
	return 0;
}

static int
fr_slot(void *ctx, const int64_t *c, int64_t *slot)
{
	(void)ctx;
	*slot = c[0] / 4;
	return 0;
}

START_TEST(conv_fragment)
{
	Arena a;
	Err err = {0};
	CutePacked p;
	CuteLayout l, r;
	int64_t in[1] = {8};

	arena_init(&a);
	ck_assert_int_eq(cute_pack_fragment(&p, 1, in, 2, 8, 2, fr_thread, fr_slot, NULL, &err), 0);
	ck_assert_int_eq(cute_from_tile(&a, 2, p.in_shape, 2, p.out_shape, cute_packed_probe, &p, &l,
					&err), 1);
	/* (coord, rep) -> thread*2 + slot = 2*(i%4) + i/4 + 8*rep */
	ck_assert_str_eq(cute_str(&a, l), "((_4,_2),_2):((_2,_1),_8)");
	/* the io-aware chain: right_inverse says it is a bijection onto [0,16) */
	ck_assert_int_eq(cute_right_inverse(&a, l, &r, &err), 0);
	ck_assert_str_eq(cute_str(&a, r), "(_2,_4,_2):(_4,_1,_8)");
	ck_assert_int_eq(cute_pack_fragment(&p, 0, in, 2, 8, 2, fr_thread, fr_slot, NULL, &err), -1);
	ck_assert_int_eq(cute_pack_fragment(NULL, 1, in, 2, 8, 2, fr_thread, fr_slot, NULL, &err), -1);
	arena_free(&a);
}
END_TEST

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

/* random layouts of 1..3 input modes, each of 1..2 sub-modes, convert back equal */
START_TEST(conv_random)
{
	Rng r = {0x5eedull};
	int it, k, j;

	for (it = 0; it < 400; it++) {
		Arena a;
		Err err = {0};
		LCtx x;
		CuteLayout out;
		int64_t in[4], cs;

		arena_init(&a);
		x.nin = 1 + rnd(&r, 3);
		x.l.shape = cute_tuple(&a, x.nin);
		x.l.stride = cute_tuple(&a, x.nin);
		for (k = 0; k < x.nin; k++) {
			int ns = 1 + rnd(&r, 2);
			CuteTup *s = ns > 1 ? cute_tuple(&a, ns) : NULL, *d = ns > 1 ? cute_tuple(&a, ns) : NULL;

			in[k] = 1;
			for (j = 0; j < ns; j++) {
				int64_t e = 1 + rnd(&r, 5), st = rnd(&r, 4) ? rnd(&r, 40) : 0;

				in[k] *= e;
				if (ns == 1) {
					s = cute_int(&a, e);
					d = cute_int(&a, st);
				} else {
					s->e[j] = cute_int(&a, e);
					d->e[j] = cute_int(&a, st);
				}
			}
			x.l.shape->e[k] = s;
			x.l.stride->e[k] = d;
		}
		ck_assert_int_eq(cute_cosize(x.l, &cs, &err), 0);
		k = cute_from_tile(&a, x.nin, in, 1, &cs, f_layout, &x, &out, &err);
		REQUIRE(k == 1, "%s: %s", cute_str(&a, x.l), err.msg);
		check_equal(f_layout, &x, x.nin, in, out, 0);
		arena_free(&a);
	}
}
END_TEST

Suite *
suite_cute_conv(void)
{
	Suite *s = suite_create("cute_conv");
	TCase *tc = tcase_create("converters");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, conv_table, 0, countof(cases));
	tcase_add_loop_test(tc, conv_from_table, 0, countof(cases));
	tcase_add_test(tc, conv_fragment);
	tcase_add_test(tc, conv_random);
	suite_add_tcase(s, tc);
	return s;
}
