/*
 * check_layout_cute.c: tilec Layouts and Fragments converted to CuTe form
 * (layout_cute.c over cute_conv.c), and the round trip: the CuTe layout
 * evaluated at every point equals the layout it came from.
 */
#include <string.h>

#include "cute.h"
#include "layout_cute.h"
#include "tests.h"

static const struct {
	int nin;
	int64_t shape[3];
	int nout;
	const char *fwd[3];
	LayoutCuteForm form;
	const char *want; /* NULL: not representable */
} lay_cases[] = {
	{2, {8, 16}, 1, {"_i * 16 + _j"}, LC_FLAT, "(_8,_16):(_16,_1)"},
	{2, {8, 16}, 1, {"_j * 8 + _i"}, LC_FLAT, "(_8,_16):(_1,_8)"},
	{1, {64}, 1, {"_i % 8 * 16 + _i // 8"}, LC_FLAT, "((_8,_8)):((_16,_1))"},
	/* two outputs serialize row-major: [_i // 8, _i % 8 * 4 + _j] over out shape [4, 32] */
	{2, {32, 4}, 2, {"_i // 8", "_i % 8 * 4 + _j"}, LC_FLAT, "(_32,_4):(_4,_1)"},
	{2, {8, 16}, 2, {"_j", "_i"}, LC_HIER, "(_8,_16):(_1@1,_1@0)"},
	{2, {8, 8}, 1, {"(_i ^ _j) + _i * 8"}, LC_FLAT, NULL},
	{2, {8, 64}, 1, {"_i * 64 + (_j // 8 ^ _i) * 8 + _j % 8"}, LC_COMPOSED,
	 "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"},
	{2, {8, 64}, 1, {"_i * 64 + _j"}, LC_COMPOSED, "Sw<0,0,0> o _0 o (_8,_64):(_64,_1)"},
};

START_TEST(layout_cute_table)
{
	Arena a;
	Err e = {0};
	Layout *L;
	CuteComposed c;
	Buf b;
	int r;

	arena_init(&a);
	buf_init(&b);
	L = layout_parse(&a, lay_cases[_i].shape, lay_cases[_i].nin, lay_cases[_i].fwd,
			 lay_cases[_i].nout, &e);
	ck_assert_msg(L != NULL, "%s", e.msg);
	r = layout_to_cute(&a, L, lay_cases[_i].form, &c, &e);
	if (!lay_cases[_i].want) {
		ck_assert_msg(r == 0, "expected not representable, got %d (%s)", r, e.msg);
		ck_assert_str_ne(e.msg, "");
	} else {
		ck_assert_msg(r == 1, "conversion failed: %d %s", r, e.msg);
		if (lay_cases[_i].form == LC_COMPOSED)
			cute_print_composed(&b, &c);
		else
			cute_print_layout(&b, c.l);
		ck_assert_str_eq(buf_str(&b), lay_cases[_i].want);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* the mma.sync m16n8k16 accumulator: value(i, j, rep) = thread * 4 + slot */
START_TEST(frag_cute_mma_c)
{
	Arena a;
	Err e = {0};
	Fragment *F;
	CuteLayout l;
	Buf b;
	int64_t x[3], y[2], v;

	arena_init(&a);
	buf_init(&b);
	F = mma_sync_fragment(&a, MMA_C, 16, &e);
	ck_assert_msg(F != NULL, "%s", e.msg);
	ck_assert_int_eq(frag_to_cute(&a, F, &l, &e), 1);
	cute_print_layout(&b, l);
	ck_assert_str_eq(buf_str(&b), "((_8,_2),(_2,_4),_1):((_16,_2),(_1,_4),_0)");
	for (x[0] = 0; x[0] < 16; x[0]++)
		for (x[1] = 0; x[1] < 8; x[1]++) {
			x[2] = 0;
			ck_assert_int_eq(layout_eval(F, x, y, &e), 0);
			/* column-major: mode 0 (dim 0) fastest */
			ck_assert_int_eq(cute_eval(l, x[0] + 16 * x[1], &v, &e), 0);
			ck_assert_int_eq(v, y[1] * 4 + y[0]);
		}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

START_TEST(frag_cute_replicated)
{
	Arena a;
	Err e = {0};
	Fragment *F;
	CuteLayout l;
	Buf b;

	arena_init(&a);
	buf_init(&b);
	/* 64 elements over 128 threads, threads 64..127 duplicate 0..63 */
	F = frag_parse(&a, (int64_t[]){64}, 1, "_i + _rep * 64", 2, NULL, 0, &e);
	ck_assert_msg(F != NULL, "%s", e.msg);
	ck_assert_int_eq(frag_to_cute(&a, F, &l, &e), 1);
	cute_print_layout(&b, l);
	/* (coord, rep) -> thread * 1 + slot 0 */
	ck_assert_str_eq(buf_str(&b), "(_64,_2):(_1,_64)");
	/* a plain layout is refused by frag_to_cute and vice versa */
	ck_assert_int_eq(layout_to_cute(&a, F, LC_FLAT, &(CuteComposed){0}, &e), -1);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* the probe forms over layout_eval: what layout_to_cute / frag_to_cute gave before they
 * proved symbolically */
static int
ev_layout(void *ctx, const int64_t *coord, int64_t *out)
{
	return layout_eval(ctx, coord, out, NULL) ? 1 : 0;
}

static int
ev_thread(void *ctx, const int64_t *coord, int64_t rep, int64_t *thread)
{
	const Fragment *F = ctx;
	int64_t x[17], y[17];
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = rep;
	if (layout_eval(F, x, y, NULL))
		return 1;
	*thread = y[F->nout];
	return 0;
}

static int
ev_slot(void *ctx, const int64_t *coord, int64_t *slot)
{
	const Fragment *F = ctx;
	int64_t x[17], y[17], v = 0;
	int k;

	for (k = 0; k < F->nin; k++)
		x[k] = coord[k];
	x[F->nin] = 0;
	if (layout_eval(F, x, y, NULL))
		return 1;
	for (k = 0; k < F->nout; k++)
		v = v * F->out_shape[k] + y[k];
	*slot = v;
	return 0;
}

static void
same_as_probes(Arena *a, const Layout *L, LayoutCuteForm form)
{
	CuteComposed c1, c2;
	CuteLayout l1, l2;
	Err e1 = {0}, e2 = {0};
	Buf b1, b2;
	int r1, r2;

	buf_init(&b1);
	buf_init(&b2);
	if (L->is_frag) {
		CutePacked p;
		int64_t nslot = 1;
		int k;

		for (k = 0; k < L->nout; k++)
			nslot *= L->out_shape[k];
		r1 = frag_to_cute(a, L, &l1, &e1);
		ck_assert_int_eq(cute_pack_fragment(&p, L->nin, L->in_shape, L->rep, L->nthreads, nslot,
						    ev_thread, ev_slot, (void *)L, &e2), 0);
		r2 = cute_from_tile(a, L->nin + 1, p.in_shape, 2, p.out_shape, cute_packed_probe, &p, &l2,
				    &e2);
		if (r1 == 1 && r2 == 1) {
			cute_print_layout(&b1, l1);
			cute_print_layout(&b2, l2);
		}
	} else {
		r1 = layout_to_cute(a, L, form, &c1, &e1);
		if (form == LC_COMPOSED)
			r2 = cute_composed_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape, ev_layout,
						     (void *)L, &c2, &e2);
		else if (form == LC_HIER)
			r2 = cute_from_tile_hier(a, L->nin, L->in_shape, L->nout, L->out_shape, ev_layout,
						 (void *)L, &c2.l, &e2);
		else
			r2 = cute_from_tile(a, L->nin, L->in_shape, L->nout, L->out_shape, ev_layout,
					    (void *)L, &c2.l, &e2);
		if (r1 == 1 && r2 == 1) {
			if (form == LC_COMPOSED) {
				cute_print_composed(&b1, &c1);
				cute_print_composed(&b2, &c2);
			} else {
				cute_print_layout(&b1, c1.l);
				cute_print_layout(&b2, c2.l);
			}
		}
	}
	ck_assert_msg(r1 == r2, "%s: %d vs %d (%s / %s)", layout_str(a, L), r1, r2, e1.msg, e2.msg);
	if (r1 == 1)
		ck_assert_str_eq(buf_str(&b1), buf_str(&b2));
	else
		ck_assert_str_eq(e1.msg, e2.msg);
	buf_free(&b1);
	buf_free(&b2);
}

START_TEST(symbolic_same_as_probes)
{
	static const char *const fwd1[][3] = {
		{"_i * 16 + _j"}, {"_j * 8 + _i"}, {"_i % 4 * 32 + _i // 4 + _j * 2"},
		{"_i * 16 + _j // 2 + _j % 2 * 8"}, {"_i * 17 + _j"}, {"(_i * 16 + _j) * 3"},
		{"_i * 16 + (_j ^ _i % 16)"}, {"_j // 4 * 32 + _i * 4 + _j % 4"},
	};
	static const char *const threads[] = {"_j % 32", "_i * 4 + _j // 4", "_j // 2 % 32 + _rep * 32",
					      "_rep * 5 % 32", "_i % 2 * 16 + _j // 8"};
	static const char *const slots[] = {"_i * 4 + _j // 32", "_j % 4", "_i * 2 + _j % 2", "_i * 16 + _j // 8 * 0 + _j % 16",
					    "_i // 2 * 8 + _j % 8"};
	static const int64_t reps[] = {1, 1, 2, 32, 1};
	int64_t shape[2] = {8, 16};
	Arena a;
	Err e = {0};
	int i, f;

	arena_init(&a);
	for (i = 0; i < (int)countof(fwd1); i++) {
		const char *fw[1] = {fwd1[i][0]};
		Layout *L = layout_parse(&a, shape, 2, fw, 1, &e);

		ck_assert_msg(L != NULL, "%s", e.msg);
		for (f = 0; f < 3; f++)
			same_as_probes(&a, L, f == 0 ? LC_FLAT : f == 1 ? LC_HIER : LC_COMPOSED);
	}
	for (i = 0; i < (int)countof(lay_cases); i++) {
		Layout *L = layout_parse(&a, lay_cases[i].shape, lay_cases[i].nin, lay_cases[i].fwd,
					 lay_cases[i].nout, &e);

		ck_assert_msg(L != NULL, "%s", e.msg);
		same_as_probes(&a, L, lay_cases[i].form);
	}
	for (i = 0; i < (int)countof(threads); i++) {
		int64_t sh[2] = {8, i == 1 ? 16 : 64};
		const char *sl[1] = {slots[i]};
		Fragment *F = frag_parse(&a, sh, 2, threads[i], reps[i], sl, 1, &e);

		if (F)  /* a slot map that does not make it injective is refused: nothing to convert */
			same_as_probes(&a, F, LC_FLAT);
	}
	for (i = 0; i < 3; i++) {
		Fragment *F = mma_block_fragment(&a, i == 0 ? MMA_A : i == 1 ? MMA_B : MMA_C, 64, 64, 16, 2,
						 2, &e);

		ck_assert_msg(F != NULL, "%s", e.msg);
		same_as_probes(&a, F, LC_FLAT);
	}
	arena_free(&a);
}
END_TEST

/* cute_convert_proved's contract: the prover's word replaces the pass over the domain */
static int
f_bent(void *ctx, const int64_t *c, int64_t *out)
{
	(void)ctx;
	out[0] = c[0] == 7 ? 100 : c[0];
	return 0;
}

static int
p_yes(void *ctx, CuteSwizzle sw, int nin, const int *nsub, const CuteSubMode *const *subs, int nv)
{
	(void)ctx, (void)sw, (void)nin, (void)nsub, (void)subs, (void)nv;
	return 1;
}

static int
p_no(void *ctx, CuteSwizzle sw, int nin, const int *nsub, const CuteSubMode *const *subs, int nv)
{
	(void)ctx, (void)sw, (void)nin, (void)nsub, (void)subs, (void)nv;
	return 0;
}

START_TEST(convert_proved_contract)
{
	Arena a;
	Err e = {0};
	CuteComposed c;
	int64_t in[1] = {8}, out[1] = {128};
	Buf b;

	arena_init(&a);
	buf_init(&b);
	ck_assert_int_eq(cute_convert_proved(&a, 1, in, 1, out, f_bent, NULL, p_no, NULL, 0, &c, &e), 2);
	ck_assert_int_eq(cute_convert_proved(&a, 1, in, 1, out, f_bent, NULL, p_no, NULL, 2, &c, &e), 2);
	ck_assert_int_eq(cute_convert_proved(&a, 1, in, 1, out, f_bent, NULL, p_yes, NULL, 0, &c, &e), 1);
	cute_print_layout(&b, c.l);
	ck_assert_str_eq(buf_str(&b), "((_4,_2)):((_1,_4))");
	/* the probe form walks the domain and finds the bend */
	ck_assert_int_eq(cute_from_tile(&a, 1, in, 1, out, f_bent, NULL, &c.l, &e), 0);
	ck_assert_int_eq(cute_convert_proved(&a, 1, in, 1, out, f_bent, NULL, NULL, NULL, 0, &c, &e), -1);
	buf_free(&b);
	arena_free(&a);
}
END_TEST


/*
 * The swizzle search's quick rejection of candidates (cute_conv.c quick_reject) against
 * converting every candidate (cute_reference_search): the same composed form or the same
 * refusal for the built-in swizzles of every mode, element size and shape, the padded,
 * row-major and f64 layouts, and xor layouts written as expressions.
 */
START_TEST(swizzle_search_reference)
{
	static const SwizzleMode modes[] = {SWZ_NONE, SWZ_32B, SWZ_64B, SWZ_128B};
	static const int64_t shapes[][2] = {{8, 64}, {16, 64}, {32, 32}, {64, 64}, {128, 32}, {32, 128},
					    {64, 8}, {16, 256}, {8, 16}, {4, 512}};
	static const int ebs[] = {1, 2, 4, 8};
	static const char *const xors[] = {
		"_i * 64 + (_j // 8 ^ _i % 8) * 8 + _j % 8", "_i * 64 + (_j // 4 ^ _i % 16) * 4 + _j % 4",
		"_i * 64 + (_j // 8 ^ _i // 2 % 8) * 8 + _j % 8", "_i * 64 + (_j ^ _i % 64)",
		"_i * 64 + (_j // 16 ^ _i % 4) * 16 + _j % 16", "_j * 64 + (_i // 8 ^ _j % 8) * 8 + _i % 8",
		"_i * 64 + (_j // 8 ^ _i % 8) * 8 + (_j % 8 ^ _i // 8 % 8)", "(_i * 64 + _j) ^ (_i % 4)",
	};
	Arena a;
	Err e = {0};
	int nl = 0, ncomp = 0, nflatno = 0, mi, si, ei, xi;

	arena_init(&a);
	for (xi = -4; xi < (int)countof(xors); xi++)
		for (si = 0; si < (int)countof(shapes); si++)
			for (ei = 0; ei < (int)countof(ebs); ei++)
				for (mi = 0; mi < (int)countof(modes); mi++) {
					Layout *L;
					CuteComposed c0, c1;
					Err e0 = {0}, e1 = {0};
					Buf b0, b1;
					int r0, r1;

					if (xi >= 0 && (ei || mi))
						continue;
					if (xi >= 0) {
						const char *f[1] = {xors[xi]};
						int64_t sh[2] = {64, 64};

						(void)shapes;
						if (si)
							continue;
						L = layout_parse(&a, sh, 2, f, 1, &e);
					} else if (xi == -4) {
						L = swizzle_layout(&a, modes[mi], shapes[si], 2, ebs[ei], &e);
					} else if (mi) {
						continue;
					} else if (xi == -3) {
						L = swizzle_padded(&a, shapes[si], 2, ebs[ei], &e);
					} else if (xi == -2) {
						L = ei ? NULL : swizzle_linear(&a, shapes[si], 2, &e);
					} else {
						L = ei ? NULL : swizzle_f64(&a, shapes[si], 2, 1, &e);
					}
					if (!L)
						continue;
					nl++;
					r0 = layout_to_cute(&a, L, LC_COMPOSED, &c0, &e0);
					cute_reference_search = 1;
					r1 = layout_to_cute(&a, L, LC_COMPOSED, &c1, &e1);
					cute_reference_search = 0;
					ck_assert_msg(r0 == r1, "layout %d: rc %d, reference %d", nl, r0, r1);
					buf_init(&b0);
					buf_init(&b1);
					if (r0 == 1) {
						cute_print_composed(&b0, &c0);
						cute_print_composed(&b1, &c1);
						ncomp += c0.sw.b > 0;
					} else {
						buf_puts(&b0, e0.msg);
						buf_puts(&b1, e1.msg);
					}
					ck_assert_str_eq(buf_str(&b0), buf_str(&b1));
					buf_free(&b0);
					buf_free(&b1);
					/* the flat form: the proof walk's first differing point (run by
					 * run along the last dim) names the point the reference names */
					e0.msg[0] = e1.msg[0] = 0;
					r0 = layout_to_cute(&a, L, LC_FLAT, &c0, &e0);
					cute_reference_search = 1;
					r1 = layout_to_cute(&a, L, LC_FLAT, &c1, &e1);
					cute_reference_search = 0;
					ck_assert_msg(r0 == r1, "layout %d flat: rc %d, reference %d", nl, r0, r1);
					buf_init(&b0);
					buf_init(&b1);
					if (r0 == 1) {
						cute_print_layout(&b0, c0.l);
						cute_print_layout(&b1, c1.l);
					} else {
						buf_puts(&b0, e0.msg);
						buf_puts(&b1, e1.msg);
						nflatno += strstr(e0.msg, "probed layout gives") != NULL;
					}
					ck_assert_str_eq(buf_str(&b0), buf_str(&b1));
					buf_free(&b0);
					buf_free(&b1);
				}
	ck_assert_int_ge(nl, 150);
	ck_assert_int_ge(nflatno, 20);   /* refusals found by the walk, not by the probes */
	ck_assert_int_ge(ncomp, 60);     /* swizzles found, not only the plain layouts */
	arena_free(&a);
}
END_TEST

Suite *
suite_layout_cute(void)
{
	Suite *s = suite_create("layout_cute");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, layout_cute_table, 0, countof(lay_cases));
	tcase_add_test(tc, frag_cute_mma_c);
	tcase_add_test(tc, frag_cute_replicated);
	tcase_add_test(tc, symbolic_same_as_probes);
	tcase_add_test(tc, convert_proved_contract);
	tcase_add_test(tc, swizzle_search_reference);
	suite_add_tcase(s, tc);
	return s;
}
