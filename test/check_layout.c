/* check_layout.c: Layout: construction and printing, injectivity with
 * evidence, equality, closed-form inverses, reshape/repeat/expand, bad input,
 * and property tests over random layouts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "tests.h"

typedef struct {
	int nin;
	int64_t shape[4];
	int nout;
	const char *fwd[4];
} LSpec;

static Layout *
mk(Arena *A, const LSpec *s, Err *err)
{
	return layout_parse(A, s->shape, s->nin, s->fwd, s->nout, err);
}

/* construction: printed form (or error) */
static const struct {
	LSpec s;
	const char *want;
} new_cases[] = {
	{{2, {64, 64}, 3, {"_j // 64", "_i // 8", "_j % 8 + (_j // 8 % 8 ^ _i % 8) * 8 + _i % 8 * 64"}},
	 "Layout([64, 64] -> [1, 8, 512], transform: [_i, _j] -> [0, _i // 8, _j % 8 + (_j // 8 ^ _i % 8) * 8 + _i % 8 * 64])"},
	{{2, {8, 16}, 1, {"(_i) * 16 + (_j + 0)"}},
	 "Layout([8, 16] -> [128], transform: [_i, _j] -> [_i * 16 + _j])"},
	{{1, {10}, 2, {"_i % 3", "_i // 3"}},
	 "Layout([10] -> [3, 4], transform: [_i] -> [_i % 3, _i // 3])"},
	{{2, {4, 4}, 1, {"_i ^ _j"}}, "Layout([4, 4] -> [4], transform: [_i, _j] -> [_i ^ _j])"},
	{{2, {4, 4}, 1, {"_i - _j"}}, "error: output 0 takes the negative value -3"},
	{{2, {4, 4}, 1, {"_k"}}, "error: unknown placeholder _k"},
	{{2, {4, 0}, 1, {"_i"}}, "error: extent 0 of input 1 is not positive"},
	{{2, {4, 4}, 1, {"_i // (_j - _j)"}}, "error: division by zero"},
	{{2, {4, 4}, 1, {"_i +"}}, "error: expected an expression"},
	{{2, {4, 4}, 1, {"_rep"}}, "error: unknown placeholder _rep"},
};

START_TEST(new_table)
{
	Arena A;
	Err err = {0};
	Layout *L;
	const char *want = new_cases[_i].want;

	arena_init(&A);
	L = mk(&A, &new_cases[_i].s, &err);
	if (!strncmp(want, "error: ", 7)) {
		ck_assert_ptr_null(L);
		ck_assert_msg(strstr(err.msg, want + 7), "got: %s", err.msg);
	} else {
		ck_assert_msg(L != NULL, "%s", err.msg);
		ck_assert_str_eq(layout_str(&A, L), want);
	}
	arena_free(&A);
}
END_TEST

/* injectivity: "" means injective, else the evidence */
static const struct {
	LSpec s;
	const char *want;
} inj_cases[] = {
	{{2, {2, 16}, 1, {"_i * 8 + _j"}}, "logical [0, 8] and [1, 0] both map to physical [8]"},
	{{2, {2, 16}, 1, {"_i * 16 + _j"}}, ""},
	{{2, {8, 8}, 2, {"_i", "_j ^ _i"}}, ""},
	{{2, {8, 8}, 1, {"_j ^ _i"}}, "logical [0, 1] and [1, 0] both map to physical [1]"},
	{{2, {4, 4}, 2, {"_i // 2", "_j"}}, "logical [0, 0] and [1, 0] both map to physical [0, 0]"},
	{{2, {64, 64}, 3, {"_j // 64", "_i // 8", "_j % 8 + (_j // 8 % 8 ^ _i % 8) * 8 + _i % 8 * 64"}}, ""},
	{{1, {1000}, 1, {"_i * 7 % 1000"}}, ""},
	{{1, {1000}, 1, {"_i * 10 % 1000"}}, "logical [0] and [100] both map to physical [0]"},
	/* a box far larger than the domain (checked through a hash table, not a table of the
	 * box): the same first colliding pair */
	{{2, {4, 4}, 1, {"_i * 5000 + _j % 2"}}, "logical [0, 0] and [0, 2] both map to physical [0]"},
	{{2, {4, 4}, 1, {"(_i * 5000 + _j * 7) ^ (_i // 2)"}}, ""},
	{{2, {4, 4}, 1, {"_i * 5000 + (_j + 1) % 4 // 2 + 7"}}, "logical [0, 1] and [0, 2] both map to physical [8]"},
	/* past the enumeration limit: decided from the digits when mixed-radix, else refused */
	{{2, {4097, 1024}, 1, {"_i * 1024 + _j"}}, ""},
	{{2, {4097, 1024}, 1, {"_i * 1024 + (_j ^ _i % 2)"}}, "more than 4194304 points"},
};

START_TEST(injective_table)
{
	Arena A;
	Err err = {0};
	Layout *L;
	int r;

	arena_init(&A);
	L = mk(&A, &inj_cases[_i].s, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	r = layout_check_injective(L, &err);
	if (!*inj_cases[_i].want)
		ck_assert_msg(r == 0, "%s", err.msg);
	else {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(err.msg, inj_cases[_i].want), "got: %s", err.msg);
	}
	arena_free(&A);
}
END_TEST

/* inverse: printed inverse (allow_padding), or error */
static const struct {
	LSpec s;
	int pad;
	const char *want;
} inv_cases[] = {
	{{2, {64, 64}, 1, {"_i * 64 + _j"}}, 0,
	 "Layout([4096] -> [64, 64], transform: [_i] -> [_i // 64, _i % 64])"},
	{{2, {64, 64}, 3, {"_j // 64", "_i // 8", "_j % 8 + (_j // 8 % 8 ^ _i % 8) * 8 + _i % 8 * 64"}}, 0,
	 "Layout([1, 8, 512] -> [64, 64], transform: [_i, _j, _k] -> [_k // 64 + _j * 8, _k % 8 + (_k // 8 % 8 ^ _k // 64) * 8])"},
	{{2, {64, 64}, 1, {"_i * 72 + _j"}}, 1,
	 "Layout([4600] -> [64, 72], transform: [_i] -> [_i // 72, _i % 72])"},
	{{2, {64, 64}, 1, {"_i * 72 + _j"}}, 0, "error: not onto the output shape: physical [64] is not reached"},
	{{2, {16, 8}, 2, {"_j", "_i"}}, 0, "Layout([8, 16] -> [16, 8], transform: [_i, _j] -> [_j, _i])"},
	{{1, {12}, 2, {"_i % 4", "_i // 4"}}, 0, "Layout([4, 3] -> [12], transform: [_i, _j] -> [_i + _j * 4])"},
	{{1, {12}, 2, {"_i % 3", "_i // 3"}}, 0, "Layout([3, 4] -> [12], transform: [_i, _j] -> [_i + _j * 3])"},
	{{1, {8}, 1, {"_i + 3"}}, 1, "Layout([11] -> [8], transform: [_i] -> [(_i - 3) % 8])"},
	{{2, {4, 8}, 1, {"_j * 4 + _i"}}, 0, "Layout([32] -> [4, 8], transform: [_i] -> [_i % 4, _i // 4])"},
	{{1, {8}, 1, {"(_i * 5) % 8"}}, 0,
	 "Layout([8] -> [8], transform: [_i] -> [_i % 4 + (_i % 2 ^ _i // 4) * 4])"},
	/* a permutation a * x mod E: x = y * a^-1 mod E (method C) */
	{{1, {7}, 1, {"(_i * 3) % 7"}}, 0, "Layout([7] -> [7], transform: [_i] -> [_i * 5 % 7])"},
	{{2, {8, 256}, 2, {"_i", "_j * 5 % 256"}}, 0,
	 "Layout([8, 256] -> [8, 256], transform: [_i, _j] -> [_i, _j * 205 % 256])"},
	{{2, {8, 7}, 1, {"_i * 7 + _j * 3 % 7"}}, 0, "error: no closed-form inverse"},
	{{1, {16}, 1, {"_i // 2"}}, 0, "error: logical [0] and [1] both map to physical [0]"},
	{{2, {8, 8}, 2, {"_i", "_j ^ _i"}}, 0,
	 "Layout([8, 8] -> [8, 8], transform: [_i, _j] -> [_i, _i ^ _j])"},
};

START_TEST(inverse_table)
{
	Arena A;
	Err err = {0};
	Layout *L, *I;
	const char *want = inv_cases[_i].want;

	arena_init(&A);
	L = mk(&A, &inv_cases[_i].s, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	I = layout_inverse(&A, L, inv_cases[_i].pad, &err);
	if (!strncmp(want, "error: ", 7)) {
		ck_assert_ptr_null(I);
		ck_assert_msg(strstr(err.msg, want + 7), "got: %s", err.msg);
	} else {
		ck_assert_msg(I != NULL, "%s", err.msg);
		ck_assert_str_eq(layout_str(&A, I), want);
	}
	arena_free(&A);
}
END_TEST

/* equality as mappings */
static const struct {
	LSpec a, b;
	int eq;
	const char *why;
} eq_cases[] = {
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, {2, {8, 8}, 1, {"_j + _i * 8"}}, 1, ""},
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, {2, {8, 8}, 1, {"_i * 8 + (_j ^ 1)"}}, 0,
	 "logical [0, 0] maps to physical [0] under the first layout and to physical [1] under the second"},
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, {2, {4, 16}, 1, {"_i * 16 + _j"}}, 0,
	 "input shapes differ: [8, 8] and [4, 16]"},
	{{2, {4, 4}, 1, {"(_i + _j) % 2 + (_i // 2 + _j // 2) % 2 * 2"}}, {2, {4, 4}, 1, {"_i ^ _j"}}, 1, ""},
	{{2, {4, 4}, 2, {"_i", "_j"}}, {2, {4, 4}, 1, {"_i * 4 + _j"}}, 0, "output ranks differ"},
};

START_TEST(equal_table)
{
	Arena A;
	Err err = {0};
	Layout *a, *b;
	int r;

	arena_init(&A);
	a = mk(&A, &eq_cases[_i].a, &err);
	b = mk(&A, &eq_cases[_i].b, &err);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	r = layout_equal(a, b, &err);
	ck_assert_int_eq(r, eq_cases[_i].eq);
	if (!r)
		ck_assert_msg(strstr(err.msg, eq_cases[_i].why), "got: %s", err.msg);
	arena_free(&A);
}
END_TEST

/* reshape: source, new shape, widths, printed result or error */
static const struct {
	LSpec s;
	int n;
	int64_t shape[3], num, den;
	const char *want;
} reshape_cases[] = {
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, 1, {64}, 16, 16,
	 "Layout([64] -> [64], transform: [_i] -> [_i])"},
	{{1, {64}, 1, {"_i % 8 * 8 + _i // 8"}}, 2, {8, 8}, 16, 16,
	 "Layout([8, 8] -> [64], transform: [_i, _j] -> [_j * 8 + _i])"},
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, 2, {8, 16}, 16, 8,
	 "Layout([8, 16] -> [128], transform: [_i, _j] -> [_i * 16 + _j])"},
	{{2, {8, 16}, 1, {"_i * 16 + _j"}}, 2, {8, 8}, 8, 16,
	 "Layout([8, 8] -> [64], transform: [_i, _j] -> [_i * 8 + _j])"},
	{{2, {8, 16}, 1, {"_j * 8 + _i"}}, 2, {8, 8}, 8, 16,
	 "error: interleaves storage below the new element width"},
	{{2, {8, 8}, 1, {"_i * 8 + _j"}}, 1, {60}, 16, 16, "error: do not fill"},
	{{2, {8, 6}, 1, {"_i * 6 + _j"}}, 1, {32}, 16, 24, "error: are not multiples"},
};

START_TEST(reshape_table)
{
	Arena A;
	Err err = {0};
	Layout *L, *R;
	const char *want = reshape_cases[_i].want;

	arena_init(&A);
	L = mk(&A, &reshape_cases[_i].s, &err);
	ck_assert_ptr_nonnull(L);
	R = layout_reshape(&A, L, reshape_cases[_i].shape, reshape_cases[_i].n, reshape_cases[_i].num,
			   reshape_cases[_i].den, &err);
	if (!strncmp(want, "error: ", 7)) {
		ck_assert_ptr_null(R);
		ck_assert_msg(strstr(err.msg, want + 7), "got: %s", err.msg);
	} else {
		ck_assert_msg(R != NULL, "%s", err.msg);
		ck_assert_str_eq(layout_str(&A, R), want);
	}
	arena_free(&A);
}
END_TEST

START_TEST(builders)
{
	Arena A;
	Err err = {0};
	LSpec s = {2, {8, 8}, 2, {"_i", "_j ^ _i"}};
	Layout *L, *R;
	int64_t lead[] = {3}, x[3] = {2, 5, 3}, y[3];
	IExpr *vars[3], *out[2 * LAYOUT_MAXDIM];
	int ids[LAYOUT_MAXDIM + 1], n;

	arena_init(&A);
	L = mk(&A, &s, &err);
	ck_assert_ptr_nonnull(L);
	R = layout_repeat(&A, L, 1, 4, &err);
	ck_assert_str_eq(layout_str(&A, R),
			 "Layout([8, 32] -> [4, 8, 8], transform: [_i, _j] -> [_j // 8, _i, _j % 8 ^ _i])");
	R = layout_expand(&A, L, lead, 1, &err);
	ck_assert_str_eq(layout_str(&A, R),
			 "Layout([3, 8, 8] -> [3, 8, 8], transform: [_i, _j, _k] -> [_i, _j, _k ^ _j])");
	ck_assert_int_eq(layout_eval(R, x, y, &err), 0);
	ck_assert_int_eq(y[0], 2);
	ck_assert_int_eq(y[1], 5);
	ck_assert_int_eq(y[2], 6);
	x[1] = 8;
	ck_assert_int_eq(layout_eval(R, x, y, &err), -1);
	ck_assert_str_eq(iexpr_str(&A, layout_linear_index(&A, L)), "_i * 8 + (_j ^ _i)");
	/* Forward with a leading pass-through index */
	vars[0] = iexpr_parse(&A, "_k", 3, 0, &err);
	vars[1] = iexpr_parse(&A, "_i + 1", 3, 0, &err);
	vars[2] = iexpr_parse(&A, "_j * 2", 3, 0, &err);
	n = layout_forward(&A, L, vars, 3, out, &err);
	ck_assert_int_eq(n, 3);
	ck_assert_str_eq(iexpr_str(&A, out[0]), "_k");
	ck_assert_str_eq(iexpr_str(&A, out[1]), "_i + 1");
	ck_assert_str_eq(iexpr_str(&A, out[2]), "_j * 2 ^ _i + 1");
	ck_assert_int_eq(layout_forward(&A, L, vars, 1, out, &err), -1);
	ck_assert_int_eq(layout_forward_vars(L, ids), 2);
	ck_assert_int_eq(ids[0], 0);
	ck_assert_int_eq(ids[1], 1);
	ck_assert_ptr_null(layout_repeat(&A, L, 2, 2, &err));
	ck_assert_ptr_null(layout_expand(&A, NULL, lead, 1, &err));
	ck_assert_int_eq(layout_check_injective(NULL, &err), -1);
	ck_assert_int_eq(layout_equal(L, NULL, &err), -1);
	ck_assert_ptr_null(layout_inverse(&A, NULL, 0, &err));
	arena_free(&A);
}
END_TEST

START_TEST(limit_is_configurable)
{
	Arena A;
	Err err = {0};
	LSpec s = {2, {64, 64}, 1, {"_i * 64 + _j"}};
	LSpec x = {2, {64, 64}, 1, {"_i * 64 + (_j ^ _i)"}};
	Layout *L;

	arena_init(&A);
	ck_assert_int_eq(layout_enum_limit(), 1 << 22);
	L = mk(&A, &s, &err);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(layout_set_enum_limit(1000), 0);
	/* a mixed-radix layout is decided from its digits, past the limit */
	ck_assert_int_eq(layout_check_injective(L, &err), 0);
	ck_assert_ptr_nonnull(layout_inverse(&A, L, 0, &err));
	/* one that is not is enumerated, and refused past the limit */
	L = mk(&A, &x, &err);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(layout_check_injective(L, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "domain [64, 64] has more than 1000 points"));
	ck_assert_ptr_null(layout_inverse(&A, L, 0, &err));
	/* construction past the limit: exact digit bounds, else interval bounds */
	L = mk(&A, &s, &err);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(L->out_shape[0], 4096);
	L = mk(&A, &x, &err);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(L->out_shape[0], 4096);
	ck_assert_int_eq(layout_set_enum_limit(0), -1);
	ck_assert_int_eq(layout_set_enum_limit(1 << 22), 0);
	arena_free(&A);
}
END_TEST

/* ---- properties over random layouts -------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* a random bijection: cut each input into digits, scatter the digits over
 * 1-3 outputs as mixed-radix numbers, optionally XOR a row digit into a
 * column digit of equal extent (a swizzle) */
static Layout *
randbij(Arena *A, Err *err)
{
	static const int64_t ext[] = {2, 3, 4, 5, 8};
	int nin = 1 + (int)(rnd() % 3), nout = 1 + (int)(rnd() % 3), k, nd = 0, i;
	int64_t shape[3], dl[12], de[12], wgt[3] = {1, 1, 1};
	int dv[12], perm[12];
	IExpr *dig[12], *fwd[3];

	for (k = 0; k < nin; k++) {
		int m = 1 + (int)(rnd() % 2), j;

		shape[k] = 1;
		for (j = 0; j < m; j++) {
			int64_t e = ext[rnd() % countof(ext)];

			dv[nd] = k;
			dl[nd] = shape[k];
			de[nd] = e;
			shape[k] *= e;
			nd++;
		}
	}
	for (i = 0; i < nd; i++) {
		dig[i] = iexpr_modc(A, iexpr_divc(A, iexpr_var(A, dv[i]), dl[i]), de[i]);
		perm[i] = i;
	}
	for (i = nd - 1; i > 0; i--) {
		int j = (int)(rnd() % (unsigned)(i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	/* optional swizzle: digit a ^= digit b for two digits of equal extent (XOR
	 * recovery needs power-of-two extents everywhere) */
	for (i = 0, k = 1; i < nd; i++)
		k &= !(de[i] & (de[i] - 1));
	if (k && rnd() % 2) {
		for (i = 0; i < nd; i++) {
			int j;

			for (j = 0; j < nd; j++)
				if (i != j && de[i] == de[j] && !(de[i] & (de[i] - 1)) && dv[i] != dv[j]) {
					dig[i] = iexpr_bin(A, IX_XOR, dig[i], dig[j]);
					j = nd;
					i = nd;
				}
		}
	}
	for (k = 0; k < nout; k++)
		fwd[k] = iexpr_const(A, 0);
	for (i = 0; i < nd; i++) {
		int d = perm[i], o = (int)(rnd() % (unsigned)nout);

		fwd[o] = iexpr_add(A, fwd[o], iexpr_mulc(A, dig[d], wgt[o]));
		wgt[o] *= de[d];
	}
	return layout_new(A, shape, nin, fwd, nout, err);
}

START_TEST(prop_inverse_roundtrip)
{
	Arena A;
	Err err = {0};
	int n, ok = 0;

	arena_init(&A);
	for (n = 0; n < 150; n++) {
		Layout *L = randbij(&A, &err), *I;
		int64_t total, f, x[LAYOUT_MAXDIM], y[LAYOUT_MAXDIM], z[LAYOUT_MAXDIM];
		int k;

		ck_assert_msg(L != NULL, "%s", err.msg);
		ck_assert_msg(layout_check_injective(L, &err) == 0, "%s: %s", layout_str(&A, L), err.msg);
		I = layout_inverse(&A, L, 1, &err);
		ck_assert_msg(I != NULL, "%s: %s", layout_str(&A, L), err.msg);
		ok++;
		/* independent check of inverse after forward on the whole domain */
		total = layout_size(L);
		for (f = 0; f < total; f++) {
			int64_t r = f;

			for (k = L->nin - 1; k >= 0; k--) {
				x[k] = r % L->in_shape[k];
				r /= L->in_shape[k];
			}
			ck_assert_int_eq(layout_eval(L, x, y, &err), 0);
			ck_assert_int_eq(layout_eval(I, y, z, &err), 0);
			for (k = 0; k < L->nin; k++)
				ck_assert_int_eq(z[k], x[k]);
		}
	}
	ck_assert_int_eq(ok, 150);
	arena_free(&A);
}
END_TEST

/* injectivity agrees with a naive pairwise check */
START_TEST(prop_injective_agrees)
{
	Arena A;
	Err err = {0};
	int n, yes = 0, no = 0;

	arena_init(&A);
	for (n = 0; n < 200; n++) {
		int64_t shape[2] = {1 + rnd() % 6, 1 + rnd() % 6}, ys[64][2], x[2];
		char buf[128];
		const char *fwd[2];
		char b2[64];
		Layout *L;
		int a, b, want = 1, total = (int)(shape[0] * shape[1]);

		snprintf(buf, sizeof buf, "(_i * %u + _j * %u) %% %u", rnd() % 7, rnd() % 7, 1 + rnd() % 30);
		snprintf(b2, sizeof b2, "_i %% %u ^ _j // %u", 1 + rnd() % 4, 1 + rnd() % 4);
		fwd[0] = buf;
		fwd[1] = b2;
		L = layout_parse(&A, shape, 2, fwd, 1 + (int)(rnd() % 2), &err);
		ck_assert_msg(L != NULL, "%s", err.msg);
		for (a = 0; a < total; a++) {
			x[0] = a / shape[1];
			x[1] = a % shape[1];
			ck_assert_int_eq(layout_eval(L, x, ys[a], &err), 0);
		}
		for (a = 0; a < total && want; a++)
			for (b = a + 1; b < total && want; b++)
				if (ys[a][0] == ys[b][0] && (L->nout == 1 || ys[a][1] == ys[b][1]))
					want = 0;
		ck_assert_int_eq(layout_check_injective(L, &err) == 0, want);
		if (want)
			yes++;
		else
			no++;
	}
	ck_assert_int_gt(yes, 10);
	ck_assert_int_gt(no, 10);
	arena_free(&A);
}
END_TEST

/* symbolic decisions (affine.c) agree with enumeration wherever they decide: random
 * sums of digits (x // a % b) * c, taken // d or % d, over small domains */
static IExpr *
rnd_digits(Arena *A, int nin, const int64_t *shape)
{
	static const int64_t cuts[] = {1, 2, 3, 4, 6, 8, 12, 16};
	IExpr *e = iexpr_const(A, (int64_t)(rnd() % 3));
	int k, n = 1 + (int)(rnd() % 3);

	for (k = 0; k < n; k++) {
		int v = (int)(rnd() % (unsigned)nin);
		IExpr *t = iexpr_var(A, v);
		int64_t a = cuts[rnd() % 8], b = cuts[rnd() % 8], c = (int64_t)(rnd() % 40) - 8;

		if (a < shape[v])
			t = iexpr_div(A, t, iexpr_const(A, a));
		if (rnd() % 2)
			t = iexpr_mod(A, t, iexpr_const(A, b));
		if (rnd() % 4 == 0) /* a swizzle-like XOR with a digit of the other variable */
			t = iexpr_bin(A, IX_XOR, t, iexpr_modc(A, iexpr_divc(A, iexpr_var(A, 1 - v),
									cuts[rnd() % 4]), cuts[rnd() % 8]));
		e = iexpr_add(A, e, iexpr_mulc(A, t, c));
	}
	if (rnd() % 3 == 0)
		e = iexpr_bin(A, rnd() % 2 ? IX_DIV : IX_MOD, e, iexpr_const(A, cuts[1 + rnd() % 7]));
	return e;
}

START_TEST(prop_symbolic_agrees)
{
	Arena A;
	int n, proved_inj = 0, proved_eq = 0, proved_rng = 0;

	arena_init(&A);
	for (n = 0; n < 3000; n++) {
		static const int64_t ext[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
		int64_t shape[2] = {ext[rnd() % 10], ext[rnd() % 10]}, lo, hi, tlo = INT64_MAX,
			thi = INT64_MIN, ys[1024][2], zs[1024], f, g, x[IEXPR_NVARS] = {0};
		int varid[2] = {0, 1}, nout = 1 + (int)(rnd() % 2), inj = 1, eq = 1;
		IExpr *es[2], *b;
		int total = (int)(shape[0] * shape[1]);

		es[0] = iexpr_simplify(&A, rnd_digits(&A, 2, shape), NULL);
		es[1] = iexpr_simplify(&A, rnd_digits(&A, 2, shape), NULL);
		b = rnd() % 4 ? iexpr_simplify(&A, rnd_digits(&A, 2, shape), NULL) : es[0];
		for (f = 0; f < total; f++) {
			int k;

			x[0] = f / shape[1];
			x[1] = f % shape[1];
			for (k = 0; k < nout; k++)
				ck_assert_int_eq(iexpr_eval(es[k], x, &ys[f][k], NULL), 0);
			ck_assert_int_eq(iexpr_eval(b, x, &zs[f], NULL), 0);
			eq &= zs[f] == ys[f][0];
			tlo = ys[f][0] < tlo ? ys[f][0] : tlo;
			thi = ys[f][0] > thi ? ys[f][0] : thi;
			for (g = 0; g < f && inj; g++)
				inj = !(ys[g][0] == ys[f][0] && (nout == 1 || ys[g][1] == ys[f][1]));
		}
		if (layout_aff_injective_(shape, varid, 2, es, nout)) {
			ck_assert_msg(inj, "proved injective but is not: %s, %s over [%lld, %lld]",
				      iexpr_str(&A, es[0]), iexpr_str(&A, es[1]), (long long)shape[0],
				      (long long)shape[1]);
			proved_inj++;
		}
		if (layout_aff_equal_(shape, varid, 2, es[0], b)) {
			ck_assert_msg(eq, "proved equal but differ: %s and %s", iexpr_str(&A, es[0]),
				      iexpr_str(&A, b));
			proved_eq++;
		}
		if (layout_aff_range_(shape, varid, 2, es[0], &lo, &hi)) {
			ck_assert_msg(lo == tlo && hi == thi, "%s: range [%lld, %lld], enumerated [%lld, %lld]",
				      iexpr_str(&A, es[0]), (long long)lo, (long long)hi, (long long)tlo,
				      (long long)thi);
			proved_rng++;
		}
	}
	/* the decisions must be taken often enough to matter */
	ck_assert_int_gt(proved_inj, 100);
	ck_assert_int_gt(proved_eq, 300);
	ck_assert_int_gt(proved_rng, 1000);
	arena_free(&A);
}
END_TEST

/* a 4096 x 4096 tile (16M points, past the enumeration limit) is checked from its
 * digits: injective, its inverse, equality, exact output shape */
START_TEST(big_tile_symbolic)
{
	Arena A;
	Err err = {0};
	int64_t shape[2] = {4096, 4096};
	const char *fwd[2] = {"_i // 16 * 256 + _j // 16", "_i % 16 * 16 + _j % 16"};
	const char *same[2] = {"(_i // 16 * 4096 + _j) // 16",
			       "_i % 16 * 16 + _j % 16"};
	Layout *L, *M, *I;

	arena_init(&A);
	L = layout_parse(&A, shape, 2, fwd, 2, &err);
	ck_assert_msg(L != NULL, "%s", err.msg);
	ck_assert_int_eq(L->out_shape[0], 65536);
	ck_assert_int_eq(L->out_shape[1], 256);
	ck_assert_int_eq(layout_check_injective(L, &err), 0);
	I = layout_inverse(&A, L, 0, &err);
	ck_assert_msg(I != NULL, "%s", err.msg);
	M = layout_parse(&A, shape, 2, same, 2, &err);
	ck_assert_msg(M != NULL, "%s", err.msg);
	ck_assert_int_eq(layout_equal(L, M, &err), 1);
	arena_free(&A);
}
END_TEST

/* reshape keeps the mapping: same flat index, same physical coordinates */
START_TEST(prop_reshape_keeps_mapping)
{
	Arena A;
	Err err = {0};
	int n;

	arena_init(&A);
	for (n = 0; n < 100; n++) {
		Layout *L = randbij(&A, &err), *R;
		int64_t total = layout_size(L), shape[2], f, x[3], y[3], z[3], r;
		int k;

		ck_assert_ptr_nonnull(L);
		shape[0] = total % 2 ? 1 : 2;
		shape[1] = total / shape[0];
		R = layout_reshape(&A, L, shape, 2, 16, 16, &err);
		ck_assert_msg(R != NULL, "%s", err.msg);
		ck_assert_int_eq(layout_equal(layout_reshape(&A, R, L->in_shape, L->nin, 16, 16, &err), L,
					      &err), 1);
		for (f = 0; f < total; f++) {
			r = f;
			for (k = L->nin - 1; k >= 0; k--) {
				x[k] = r % L->in_shape[k];
				r /= L->in_shape[k];
			}
			ck_assert_int_eq(layout_eval(L, x, y, &err), 0);
			x[0] = f / shape[1];
			x[1] = f % shape[1];
			ck_assert_int_eq(layout_eval(R, x, z, &err), 0);
			for (k = 0; k < L->nout; k++)
				ck_assert_int_eq(y[k], z[k]);
		}
	}
	arena_free(&A);
}
END_TEST


/*
 * layout_aff_vecrun_ against brute force: random mixed-radix outputs (with XORs), the
 * run output usually given the run variable's low digits x % v (so that many runs hold),
 * sometimes scaled or split so that they do not. A proved run must hold at every point.
 */
START_TEST(prop_vecrun_agrees)
{
	static const int64_t ext[] = {2, 4, 8, 16, 32, 64, 12, 24, 6};
	static const int64_t vs[] = {2, 4, 8, 16};
	Arena A;
	int n, proved = 0, held = 0;

	arena_init(&A);
	for (n = 0; n < 4000; n++) {
		int64_t shape[2] = {ext[rnd() % 9], ext[rnd() % 9]}, v = vs[rnd() % 4], x[IEXPR_NVARS] = {0};
		int64_t y0[2], y1[2], k;
		int varid[2] = {0, 1}, var = (int)(rnd() % 2), ne = 1 + (int)(rnd() % 2), out = (int)(rnd() % 2);
		int ok = 1, e;
		IExpr *es[2];

		if (out >= ne)
			out = 0;
		if (shape[var] % v)
			continue;
		for (e = 0; e < ne; e++)
			es[e] = rnd_digits(&A, 2, shape);
		if (rnd() % 4) {
			/* the run digits: x % v, or x % (v / 2) + x // (v / 2) % 2 * c, scaled by m */
			int64_t m = rnd() % 4 ? 1 : 2, c = rnd() % 3 ? v / 2 : v;
			IExpr *xv = iexpr_var(&A, var), *low;

			low = rnd() % 3 ? iexpr_modc(&A, xv, v)
					: iexpr_add(&A, iexpr_modc(&A, xv, v / 2),
						    iexpr_mulc(&A, iexpr_modc(&A, iexpr_divc(&A, xv, v / 2), 2), c));
			es[out] = iexpr_add(&A, iexpr_mulc(&A, low, m),
					    iexpr_mulc(&A, iexpr_divc(&A, es[out], 1), v * (int64_t)(1 + rnd() % 3)));
			if (ne == 2 && rnd() % 2)   /* the other output free of the run digits */
				es[1 - out] = iexpr_add(&A, iexpr_mulc(&A, iexpr_divc(&A, xv, v), 3),
							iexpr_var(&A, 1 - var));
		}
		for (e = 0; e < ne; e++)
			es[e] = iexpr_simplify(&A, es[e], NULL);
		for (x[0] = 0; ok && x[0] < shape[0]; x[0]++)
			for (x[1] = 0; ok && x[1] < shape[1]; x[1]++) {
				if (x[var] % v)
					continue;
				for (e = 0; e < ne; e++)
					ck_assert_int_eq(iexpr_eval(es[e], x, &y0[e], NULL), 0);
				ok = y0[out] % v == 0;
				for (k = 1; ok && k < v; k++) {
					x[var] += k;
					for (e = 0; e < ne; e++) {
						ck_assert_int_eq(iexpr_eval(es[e], x, &y1[e], NULL), 0);
						ok &= y1[e] == y0[e] + (e == out ? k : 0);
					}
					x[var] -= k;
				}
			}
		held += ok;
		if (layout_aff_vecrun_(shape, varid, 2, es, ne, var, v, out)) {
			ck_assert_msg(ok, "proved a run of %lld over var %d that does not hold: %s%s%s over [%lld, %lld]",
				      (long long)v, var, iexpr_str(&A, es[0]), ne > 1 ? ", " : "",
				      ne > 1 ? iexpr_str(&A, es[1]) : "", (long long)shape[0], (long long)shape[1]);
			proved++;
		}
	}
	/* the proofs are not vacuous: most runs that hold are proved */
	ck_assert_int_ge(proved, 300);
	ck_assert_int_ge(proved * 2, held);
	arena_free(&A);
}
END_TEST

Suite *
suite_layout(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, new_table, 0, countof(new_cases));
	tcase_add_loop_test(tc, injective_table, 0, countof(inj_cases));
	tcase_add_loop_test(tc, inverse_table, 0, countof(inv_cases));
	tcase_add_loop_test(tc, equal_table, 0, countof(eq_cases));
	tcase_add_loop_test(tc, reshape_table, 0, countof(reshape_cases));
	tcase_add_test(tc, builders);
	tcase_add_test(tc, limit_is_configurable);
	tcase_add_test(tc, prop_inverse_roundtrip);
	tcase_add_test(tc, prop_injective_agrees);
	tcase_add_test(tc, prop_symbolic_agrees);
	tcase_add_test(tc, prop_vecrun_agrees);
	tcase_add_test(tc, big_tile_symbolic);
	tcase_add_test(tc, prop_reshape_keeps_mapping);
	suite_add_tcase(s, tc);
	return s;
}
