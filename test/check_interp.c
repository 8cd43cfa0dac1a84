/*
 * check_interp.c: the reference interpreter (cpu/interp.c) and the element
 * conversions (cpu/numeric.c). Conversions: every f16 and bf16 pattern
 * round-trips; f32 -> f16 against the compiler's _Float16 on every rounding
 * boundary and a sample of patterns, f64 -> f16 rounds once; bf16 against the
 * bit formula; both fp8 kinds against the OCP FP8 tables and a brute-force
 * nearest search. Programs: small tile kernels for every op with expected
 * outputs computed here (not with the interpreter's helpers), a conversion
 * matrix over all element types, every sample at ragged sizes, the flags,
 * and every error (races, assume, bounds, division by zero, undefined
 * conditions, the work limit).
 */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "interp.h"
#include "sema.h"
#include "tests.h"

#if defined(__FLT16_MAX__)
#define HAVE_F16 1
#endif

/* a check for hot loops: Check records every passing ck_assert, which costs a write */
#define EXPECT(c, ...) \
	do { \
		if (!(c)) \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* ---- independent references --------------------------------------------------------------- */

static uint32_t
f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* f16 bits -> value, from the IEEE definition */
static double
ref_f16(uint16_t h)
{
	int e = h >> 10 & 31, m = h & 1023;
	double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);

	return h & 0x8000 ? -v : v;
}

/* f32 -> bf16 bits: the usual integer formula (round to nearest even, NaN aside) */
static uint16_t
ref_bf16(float f)
{
	uint32_t u = f2u(f);

	return (uint16_t)((u + 0x7fff + (u >> 16 & 1)) >> 16);
}

/* fp8 bits -> value from the OCP FP8 definition */
static double
ref_fp8(int e5m2, unsigned b)
{
	int eb = e5m2 ? 5 : 4, mb = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
	int e = (int)(b >> mb & ((1u << eb) - 1)), m = (int)(b & ((1u << mb) - 1));
	double v;

	if (e5m2 && e == 31)
		v = m ? NAN : INFINITY;
	else if (!e5m2 && e == 15 && m == 7)
		v = NAN;
	else if (e == 0)
		v = m * pow(2, 1 - bias - mb);
	else
		v = (1 + m / pow(2, mb)) * pow(2, e - bias);
	return b & 0x80 ? -v : v;
}

/* the fp8 pattern nearest to v (ties to the even pattern), saturating */
static unsigned
ref_to_fp8(int e5m2, double v)
{
	static double tab[2][256];
	static int init;
	unsigned best = 0, b;
	double bd = INFINITY, mx = e5m2 ? 57344 : 448;

	if (!init) {
		for (b = 0; b < 512; b++)
			tab[b / 256][b % 256] = ref_fp8((int)(b / 256), b % 256);
		init = 1;
	}

	if (isnan(v))
		return 0x7f | (signbit(v) ? 0x80 : 0);
	if (v > mx)
		v = mx;
	if (v < -mx)
		v = -mx;
	for (b = 0; b < 256; b++) {
		double x = tab[e5m2][b], d;

		if (isnan(x) || isinf(x))
			continue;
		d = fabs(x - v);
		if (d < bd || (d == bd && !(b & 1))) {
			if (x == 0 && (b & 0x80) != (signbit(v) ? 0x80u : 0))
				continue; /* the zero of v's sign */
			bd = d;
			best = b;
		}
	}
	return best;
}

/* double -> bf16 value, rounded once: the nearest of the two bf16 neighbours */
static double
ref_round_bf16(double d)
{
	float f = (float)d;
	uint32_t u;
	double lo, hi;

	if (isnan(d) || isinf(d))
		return d;
	if (fabs(d) >= 0x1.ffp127)
		return d > 0 ? INFINITY : -INFINITY;
	/* truncate toward zero to bf16, then compare with the next one up */
	if (fabs((double)f) > fabs(d))
		f = nextafterf(f, 0);
	u = f2u(f) & 0xffff0000u;
	lo = u2f(u);
	hi = u2f(u + 0x10000);
	if (fabs(d - lo) < fabs(hi - d))
		return lo;
	if (fabs(d - lo) > fabs(hi - d))
		return hi;
	return (u >> 16 & 1) ? hi : lo;
}

/* ---- numeric ------------------------------------------------------------------------------ */

START_TEST(num_f16_all)
{
	unsigned h;

	for (h = 0; h < 65536; h++) {
		float f = num_f16_to_f32((uint16_t)h);
		double r = ref_f16((uint16_t)h);

		EXPECT(num_f32_to_f16(f) == h, "f16 %04x does not round-trip (%04x)", h, num_f32_to_f16(f));
		if (isnan(r)) {
			EXPECT(isnan(f), "isnan(f)");
		} else {
			EXPECT((double)f == r && !signbit(f) == !signbit(r), "f16 %04x -> %g, want %g", h, f, r);
		}
		/* a double cannot keep a signalling NaN: only NaN-ness through num_encode */
		EXPECT(isnan(f) ? (num_encode(DT_F16, f) & 0x7c00) == 0x7c00 && (num_encode(DT_F16, f) & 0x3ff)
				       : num_encode(DT_F16, f) == h, "num_encode f16 %04x", h);
		EXPECT(num_decode(DT_F16, h) == f || isnan(f), "num_decode(DT_F16, h) == f || isnan(f)");
#ifdef HAVE_F16
		if (!isnan(r)) {
			_Float16 x;
			uint16_t hh = (uint16_t)h;

			memcpy(&x, &hh, 2);
			EXPECT((float)x == f, "(float)x == f");
		}
#endif
	}
	ck_assert_int_eq(num_f32_to_f16(65504.0f), 0x7bff);
	ck_assert_int_eq(num_f32_to_f16(65519.99f), 0x7bff);
	ck_assert_int_eq(num_f32_to_f16(65520.0f), 0x7c00);   /* overflow to inf */
	ck_assert_int_eq(num_f32_to_f16(-1e30f), 0xfc00);
	ck_assert_int_eq(num_f32_to_f16(0x1p-25f), 0x0000);   /* a tie: to even (zero) */
	ck_assert_int_eq(num_f32_to_f16(0x1.000002p-25f), 0x0001);
	ck_assert_int_eq(num_f32_to_f16(-0.0f), 0x8000);
	ck_assert_int_eq(num_f32_to_f16(u2f(0x7f800001)) & 0x7c00, 0x7c00); /* NaN stays NaN */
	ck_assert_int_ne(num_f32_to_f16(u2f(0x7f800001)) & 0x3ff, 0);
}
END_TEST

START_TEST(num_f16_round)
{
	unsigned h;
	uint64_t u;

	/* every boundary: the midpoint of two neighbours and the floats around it */
	for (h = 0; h < 0x7c00; h++) {
		double lo = ref_f16((uint16_t)h), hi = h + 1 == 0x7c00 ? 65536.0 : ref_f16((uint16_t)(h + 1));
		float mid = (float)((lo + hi) / 2), below = nextafterf(mid, 0), above = nextafterf(mid, INFINITY);
		unsigned even = h & 1 ? h + 1 : h;

		EXPECT(num_f32_to_f16(mid) == even, "tie %g -> %04x", mid, num_f32_to_f16(mid));
		EXPECT(num_f32_to_f16(below) == h, "%a -> %04x want %04x", below, num_f32_to_f16(below), h);
		EXPECT(num_f32_to_f16(above) == h + 1, "%a -> %04x", above, num_f32_to_f16(above));
		ck_assert_int_eq(num_f32_to_f16(-below), 0x8000 | h);
	}
#ifdef HAVE_F16
	/* a sample of all f32 patterns against the compiler */
	for (u = 0; u < 0x100000000ull; u += 1021) {
		float f = u2f((uint32_t)u);
		_Float16 x = (_Float16)f;
		uint16_t want;

		if (isnan(f))
			continue;
		memcpy(&want, &x, 2);
		EXPECT(num_f32_to_f16(f) == want, "%a: %04x, _Float16 %04x", f, num_f32_to_f16(f), want);
	}
	/* doubles round once (never through f32) */
	for (u = 1; u < 2000000; u++) {
		uint64_t bits = u * 0x9e3779b97f4a7c15ull;
		double d;
		_Float16 x;
		uint16_t want, got;

		memcpy(&d, &bits, 8);
		if (isnan(d))
			continue;
		d = ldexp(frexp(d, &(int){0}), (int)(bits % 50) - 30);
		x = (_Float16)d;
		memcpy(&want, &x, 2);
		num_store(DT_F16, &got, d);
		EXPECT(got == want, "%a: %04x, _Float16 %04x", d, got, want);
	}
#else
	(void)u;
#endif
	{
		double d = 1 + 0x1p-11 + 0x1p-40; /* just above a tie; through f32 it would be the tie */
		uint16_t got;

		num_store(DT_F16, &got, d);
		ck_assert_int_eq(got, 0x3c01);
		ck_assert_int_eq(num_f32_to_f16((float)d), 0x3c00);
		EXPECT(num_round(DT_F16, d) == 1 + 0x1p-10, "num_round(DT_F16, d) == 1 + 0x1p-10");
	}
}
END_TEST

START_TEST(num_bf16)
{
	unsigned h;
	uint64_t u;

	for (h = 0; h < 65536; h++) {
		float f = num_bf16_to_f32((uint16_t)h);

		EXPECT(num_f32_to_bf16(f) == h, "bf16 %04x does not round-trip", h);
		EXPECT(f2u(f) == (uint32_t)h << 16, "f2u(f) == (uint32_t)h << 16");
	}
	for (u = 0; u < 0x100000000ull; u += 509) {
		float f = u2f((uint32_t)u);

		if (isnan(f))
			continue;
		EXPECT(num_f32_to_bf16(f) == ref_bf16(f), "%a: %04x want %04x", f, num_f32_to_bf16(f),
			      ref_bf16(f));
	}
	ck_assert_int_eq(num_f32_to_bf16(u2f(0x7f7fffff)), 0x7f80); /* overflow to inf */
	ck_assert_int_eq(num_f32_to_bf16(u2f(0x7f800001)) & 0x7f80, 0x7f80);
	ck_assert_int_ne(num_f32_to_bf16(u2f(0x7f800001)) & 0x7f, 0);
	/* doubles round once */
	for (u = 1; u < 200000; u++) {
		uint64_t bits = u * 0x9e3779b97f4a7c15ull;
		double d;
		uint16_t got;

		memcpy(&d, &bits, 8);
		if (isnan(d))
			continue;
		d = ldexp(frexp(d, &(int){0}), (int)(bits % 200) - 100);
		num_store(DT_BF16, &got, d);
		EXPECT(num_bf16_to_f32(got) == ref_round_bf16(d), "%a -> %04x", d, got);
	}
}
END_TEST

START_TEST(num_fp8)
{
	int k;
	unsigned b;

	for (k = 0; k < 2; k++) {
		DType t = k ? DT_FP8E5M2 : DT_FP8E4M3;

		for (b = 0; b < 256; b++) {
			double r = ref_fp8(k, b);
			float f = num_fp8_to_f32(t, (uint8_t)b);

			if (isnan(r)) {
				EXPECT(isnan(f), "%s %02x", dtype_name(t), b);
				continue;
			}
			EXPECT((double)f == r && !signbit(f) == !signbit(r), "%s %02x -> %g, want %g",
				      dtype_name(t), b, f, r);
			if (!isinf(r))
				EXPECT(num_f32_to_fp8(t, f) == b, "%s %02x does not round-trip", dtype_name(t), b);
		}
		/* a sample of values against the brute-force nearest */
		for (b = 0; b < 400000; b++) {
			uint32_t u = b * 2654435761u;
			float f = u2f((u & 0x807fffffu) | (uint32_t)(110 + u % 40) << 23);

			EXPECT(num_f32_to_fp8(t, f) == ref_to_fp8(k, f), "%s: %a -> %02x, want %02x",
				      dtype_name(t), f, num_f32_to_fp8(t, f), ref_to_fp8(k, f));
		}
		/* midpoints between neighbours go to the even one */
		for (b = 0; b < 0x7e; b++) {
			double lo = ref_fp8(k, b), hi = ref_fp8(k, b + 1);

			if (isinf(hi) || isnan(hi))
				break;
			ck_assert_int_eq(num_f32_to_fp8(t, (float)((lo + hi) / 2)), b & 1 ? b + 1 : b);
		}
	}
	/* the OCP tables: e4m3 max 448, min normal 2^-6, min subnormal 2^-9, no inf */
	EXPECT(num_fp8_to_f32(DT_FP8E4M3, 0x7e) == 448, "num_fp8_to_f32(DT_FP8E4M3, 0x7e) == 448");
	EXPECT(num_fp8_to_f32(DT_FP8E4M3, 0x08) == 0x1p-6f, "num_fp8_to_f32(DT_FP8E4M3, 0x08) == 0x1p-6f");
	EXPECT(num_fp8_to_f32(DT_FP8E4M3, 0x01) == 0x1p-9f, "num_fp8_to_f32(DT_FP8E4M3, 0x01) == 0x1p-9f");
	EXPECT(isnan(num_fp8_to_f32(DT_FP8E4M3, 0x7f)) && isnan(num_fp8_to_f32(DT_FP8E4M3, 0xff)), "isnan(num_fp8_to_f32(DT_FP8E4M3, 0x7f)) && isnan(num_fp8_to_f32(DT_FP8E4M3, 0xff))");
	EXPECT(num_fp8_to_f32(DT_FP8E5M2, 0x7b) == 57344, "num_fp8_to_f32(DT_FP8E5M2, 0x7b) == 57344");
	EXPECT(num_fp8_to_f32(DT_FP8E5M2, 0x01) == 0x1p-16f, "num_fp8_to_f32(DT_FP8E5M2, 0x01) == 0x1p-16f");
	EXPECT(num_fp8_to_f32(DT_FP8E5M2, 0x04) == 0x1p-14f, "num_fp8_to_f32(DT_FP8E5M2, 0x04) == 0x1p-14f");
	EXPECT(isinf(num_fp8_to_f32(DT_FP8E5M2, 0x7c)), "isinf(num_fp8_to_f32(DT_FP8E5M2, 0x7c))");
	/* saturation (satfinite): overflow and inf to the largest finite value, NaN stays NaN */
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, 464), 0x7e);
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, 1e6f), 0x7e);
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, -INFINITY), 0xfe);
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, NAN) & 0x7f, 0x7f);
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E5M2, 61440), 0x7b);
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E5M2, INFINITY), 0x7b);
	EXPECT(isnan(num_fp8_to_f32(DT_FP8E5M2, num_f32_to_fp8(DT_FP8E5M2, NAN))), "isnan(num_fp8_to_f32(DT_FP8E5M2, num_f32_to_fp8(DT_FP8E5M2, NAN)))");
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, 0x1p-10f), 0x00); /* half the least subnormal: even */
	ck_assert_int_eq(num_f32_to_fp8(DT_FP8E4M3, 0x1.8p-9f), 0x02); /* 1.5 subnormals: even */
}
END_TEST

START_TEST(num_loadstore)
{
	static const DType ts[] = {DT_BOOL, DT_I8, DT_U8, DT_I32, DT_INT, DT_F16, DT_BF16, DT_F32, DT_F64,
				   DT_FP8E4M3, DT_FP8E5M2};
	static const double vs[] = {0, 1, -1, 2.5, 100, -3, 0.15625};
	unsigned char m[8];
	size_t i, j;

	for (i = 0; i < countof(ts); i++)
		for (j = 0; j < countof(vs); j++) {
			double v = vs[j], want = v;

			if (ts[i] == DT_BOOL)
				want = v != 0;
			else if (ts[i] == DT_U8 && v < 0)
				continue;
			else if (!dtype_is_float(ts[i]))
				want = trunc(v);
			else if ((ts[i] == DT_FP8E4M3 || ts[i] == DT_FP8E5M2) && v == 100)
				want = 96; /* 1.5625 * 64: a tie in e4m3 (to even), nearest in e5m2 */
			memset(m, 0xa5, sizeof m);
			num_store(ts[i], m, v);
			EXPECT(num_load(ts[i], m) == want, "%s %g -> %g", dtype_name(ts[i]), v,
				      num_load(ts[i], m));
			if (dtype_bytes(ts[i]) < 8)
				ck_assert_int_eq(m[dtype_bytes(ts[i])], 0xa5);
		}
	EXPECT(num_round(DT_F32, 0.1) == (double)0.1f, "num_round(DT_F32, 0.1) == (double)0.1f");
	EXPECT(num_round(DT_F64, 0.1) == 0.1, "num_round(DT_F64, 0.1) == 0.1");
	EXPECT(num_round(DT_FP8E4M3, 1000) == 448, "num_round(DT_FP8E4M3, 1000) == 448");
	EXPECT(num_round(DT_BF16, 1.0 + 0x1p-8) == 1.0, "num_round(DT_BF16, 1.0 + 0x1p-8) == 1.0");
}
END_TEST

/* ---- running tile programs ------------------------------------------------------------------ */

typedef struct T {
	Arena a;
	Diags d;
	IrProgram *p;
	IrKernel *k;
	int64_t sizes[16];
	double scal[32];
	InterpTensor ten[32];
	InterpArgs args;
	InterpStats st;
	Err e;
} T;

static void
t_compile_file(T *t, const char *src, const char *file)
{
	const Node *top;
	int i;

	memset(t, 0, sizeof *t);
	arena_init(&t->a);
	diags_init(&t->d, &t->a);
	top = parse_program(&t->a, &t->d, src, strlen(src), file);
	t->p = t->d.nerr ? NULL : sema_program(&t->a, &t->d, top, NULL, 0, file);
	if (!t->p) {
		Buf b;

		buf_init(&b);
		diag_format(&t->d, &b, src, strlen(src), 0);
		ck_abort_msg("front end: %s\n%s", buf_str(&b), src);
	}
	t->k = t->p->kernels;
	ck_assert_int_le(t->k->nparam, 32);
	for (i = 0; i < 16; i++)
		t->sizes[i] = -1;
}

static void
t_compile(T *t, const char *src)
{
	t_compile_file(t, src, "t.tile");
}

/* set a size or a scalar parameter by name */
static void
t_set(T *t, const char *name, double v)
{
	int i;

	for (i = 0; i < t->k->nsize; i++)
		if (!strcmp(t->k->sizes[i]->name, name)) {
			t->sizes[i] = (int64_t)v;
			return;
		}
	for (i = 0; i < t->k->nparam; i++)
		if (!strcmp(t->k->params[i].name, name) && !t->k->params[i].is_tensor) {
			t->scal[i] = v;
			return;
		}
	ck_abort_msg("no size or scalar '%s'", name);
}

static int64_t
t_dim(T *t, const IrDim *d)
{
	int i;

	if (!d->sym)
		return d->c;
	for (i = 0; i < t->k->nsize; i++)
		if (t->k->sizes[i] == d->sym)
			return t->sizes[i];
	return -1;
}

/* allocate every tensor (zeroed) for the sizes set */
static void
t_alloc(T *t)
{
	int i, d;

	for (i = 0; i < t->k->nparam; i++) {
		const IrParam *p = &t->k->params[i];
		const IrBuffer *b;
		int64_t n = 1;

		if (!p->is_tensor)
			continue;
		b = &t->k->bufs[p->buf];
		for (d = 0; d < b->ndim; d++)
			n *= t_dim(t, &b->dims[d]);
		if (b->strides && n > 0) /* the span of a strided view */
			for (n = 1, d = 0; d < b->ndim; d++)
				n += (t_dim(t, &b->dims[d]) - 1) * t_dim(t, &b->strides[d]);
		t->ten[i].n = n;
		if (n < 0)
			continue;
		t->ten[i].data = calloc((size_t)(n ? n : 1), (size_t)dtype_bytes(b->dtype));
		t->ten[i].flags = calloc((size_t)(n ? n : 1), 1);
	}
	t->args.sizes = t->sizes;
	t->args.tensors = t->ten;
	t->args.scalars = t->scal;
}

static int
t_param(T *t, const char *name)
{
	int i;

	for (i = 0; i < t->k->nparam; i++)
		if (!strcmp(t->k->params[i].name, name))
			return i;
	ck_abort_msg("no parameter '%s'", name);
	return -1;
}

static void *
t_data(T *t, const char *name)
{
	return t->ten[t_param(t, name)].data;
}

static unsigned char *
t_fl(T *t, const char *name)
{
	return t->ten[t_param(t, name)].flags;
}

static InterpStatus
t_run(T *t)
{
	return interp_kernel(t->k, &t->args, &t->st, &t->e);
}

/* run and expect success: once one iteration at a time, once with batched nests (the
 * default) from the same inputs; both must give the same elements, flags and counts */
static void
t_ok(T *t)
{
	void *in[32] = {0}, *out[32] = {0};
	unsigned char *ofl[32] = {0};
	size_t sz[32] = {0};
	InterpStatus st;
	InterpStats s1;
	int i;

	for (i = 0; i < t->k->nparam; i++) {
		if (!t->k->params[i].is_tensor || !t->ten[i].data)
			continue;
		sz[i] = (size_t)t->ten[i].n * (size_t)dtype_bytes(t->k->bufs[t->k->params[i].buf].dtype);
		in[i] = malloc(sz[i] + 1);
		memcpy(in[i], t->ten[i].data, sz[i]);
	}
	t->args.no_batch = 1;
	st = t_run(t);
	ck_assert_msg(st == INTERP_OK, "status %d (one iteration at a time): %s", st, t->e.msg);
	s1 = t->st;
	for (i = 0; i < t->k->nparam; i++) {
		if (!in[i])
			continue;
		out[i] = malloc(sz[i] + 1);
		ofl[i] = malloc((size_t)t->ten[i].n + 1);
		memcpy(out[i], t->ten[i].data, sz[i]);
		memcpy(ofl[i], t->ten[i].flags, (size_t)t->ten[i].n);
		memcpy(t->ten[i].data, in[i], sz[i]);
		memset(t->ten[i].flags, 0, (size_t)t->ten[i].n);
		free(in[i]);
	}
	t->args.no_batch = 0;
	st = t_run(t);
	ck_assert_msg(st == INTERP_OK, "status %d: %s", st, t->e.msg);
	ck_assert_int_eq(t->st.statements, s1.statements);
	ck_assert_int_eq(t->st.blocks, s1.blocks);
	for (i = 0; i < t->k->nparam; i++) {
		if (!out[i])
			continue;
		EXPECT(!memcmp(out[i], t->ten[i].data, sz[i]), "'%s' differs between the batched and the unbatched run",
		       t->k->params[i].name);
		EXPECT(!memcmp(ofl[i], t->ten[i].flags, (size_t)t->ten[i].n),
		       "the flags of '%s' differ between the batched and the unbatched run", t->k->params[i].name);
		free(out[i]);
		free(ofl[i]);
	}
}

static void
t_free(T *t)
{
	int i;

	for (i = 0; i < 32; i++) {
		free(t->ten[i].data);
		free(t->ten[i].flags);
	}
	arena_free(&t->a);
}

/* dyadic test values: (h % 9 - 4) / 4, exact in every float type; sums of their
 * products stay exact */
static double
dy(uint64_t i, int seed)
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull + (uint64_t)seed * 0xbf58476d1ce4e5b9ull;

	h ^= h >> 31;
	return (double)((int)(h % 9) - 4) / 4;
}

/* the f16 bits of a value exact in f16 (found from the IEEE definition) */
static uint16_t
f16bits(double v)
{
	static uint16_t tab[9];
	static int init;
	int i;

	if (!init) {
		for (i = 0; i < 9; i++) {
			unsigned h;

			for (h = 0; h < 65536 && ref_f16((uint16_t)h) != (i - 4) / 4.0; h++)
				;
			tab[i] = (uint16_t)h;
		}
		init = 1;
	}
	for (i = 0; i < 9; i++)
		if ((i - 4) / 4.0 == v)
			return v == 0 && signbit(v) ? 0x8000 : tab[i];
	ck_abort_msg("f16bits(%g)", v);
	return 0;
}

/* the f16 bits of any value, rounded to nearest even (the compiler's _Float16 where there
 * is one, else a search) */
static uint16_t
f16of(double v)
{
#ifdef HAVE_F16
	_Float16 x = (_Float16)v;
	uint16_t h;

	memcpy(&h, &x, 2);
	return h;
#else
	/* the nearest finite pattern, ties to even; past 65520 infinity */
	unsigned h, best = 0;
	double bd = INFINITY, a = fabs(v);

	if (isnan(v))
		return 0x7e00;
	if (a >= 65520)
		return signbit(v) ? 0xfc00 : 0x7c00;
	for (h = 0; h < 0x7c00; h++) {
		double d = fabs(ref_f16((uint16_t)h) - a);

		if (d < bd || (d == bd && !(h & 1)))
			bd = d, best = h;
	}
	return (uint16_t)(best | (signbit(v) ? 0x8000 : 0));
#endif
}

/* ---- copies -------------------------------------------------------------------------------- */

static const char COPY2D[] =
	"const BM = 128, BN = 64;\n"
	"kernel copy2d(A: f16[M, N], B: f16[M, N])\n"
	"    grid(cdiv(N, BN), cdiv(M, BM)) threads(128)\n"
	"{\n"
	"    shared s: f16[BM, BN];\n"
	"    copy(A[by * BM, bx * BN], s);\n"
	"    copy(s, B[by * BM, bx * BN]);\n"
	"}\n";

START_TEST(copy_ragged)
{
	T t;
	uint16_t *A, *B;
	int64_t i, n = 130 * 70;

	t_compile(&t, COPY2D);
	t_set(&t, "M", 130);
	t_set(&t, "N", 70);
	t_alloc(&t);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	for (i = 0; i < n; i++) {
		A[i] = (uint16_t)(i * 2654435761u >> 7);
		if ((A[i] & 0x7c00) == 0x7c00)
			A[i] &= 0xbfff; /* no inf / NaN */
	}
	t_ok(&t);
	ck_assert_int_eq(t.st.blocks, 4);
	for (i = 0; i < n; i++) {
		EXPECT(B[i] == A[i], "B[%lld] = %04x, want %04x", (long long)i, B[i], A[i]);
		EXPECT(t_fl(&t, "B")[i] == 0, "flags of B[%lld]", (long long)i);
	}
	t_free(&t);
}
END_TEST

/* zeros past the edge (also at negative offsets) into local and shared memory; writes
 * past the edge are dropped */
START_TEST(copy_zero_fill)
{
	static const char src[] =
		"kernel zf(A: f32[M, N], B: f32[16, 16], C: f32[M, N]) grid(1) threads(32) {\n"
		"	local t: f32[16, 16];\n"
		"	shared s: f32[16, 16];\n"
		"	copy(A[0, 0], t);\n"
		"	copy(t, B);\n"
		"	copy(A[M - 20, N - 20], s);\n"
		"	copy(s, C[M - 20, N - 20]);\n"
		"}\n";
	T t;
	float *A, *B, *C;
	int i, j, M = 10, N = 12;

	t_compile(&t, src);
	t_set(&t, "M", M);
	t_set(&t, "N", N);
	t_alloc(&t);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	C = t_data(&t, "C");
	for (i = 0; i < M * N; i++) {
		A[i] = (float)(i + 1);
		C[i] = 7;
	}
	for (i = 0; i < 256; i++)
		B[i] = 99;
	t_ok(&t);
	for (i = 0; i < 16; i++)
		for (j = 0; j < 16; j++) {
			ck_assert(B[i * 16 + j] == (i < M && j < N ? A[i * N + j] : 0));
			ck_assert(!signbit(B[i * 16 + j]));
			ck_assert_int_eq(t_fl(&t, "B")[i * 16 + j], 0);
		}
	for (i = 0; i < M; i++)
		for (j = 0; j < N; j++) {
			ck_assert_msg(C[i * N + j] == (i < 6 && j < 8 ? A[i * N + j] : 7), "C[%d, %d] = %g", i, j,
				      C[i * N + j]);
			ck_assert_int_eq(t_fl(&t, "C")[i * N + j], 0);
		}
	t_free(&t);
}
END_TEST

START_TEST(fill_clear)
{
	static const char src[] =
		"kernel f(Y: f32[4, 8], Z: i32[4, 8]) grid(1) threads(32) {\n"
		"	shared s: f32[4, 8];\n"
		"	local z: i32[4, 8];\n"
		"	fill(s[1:3, 2:6], 2.5);\n"
		"	clear(z);\n"
		"	fill(z[0:4, 7:8], -3);\n"
		"	copy(s, Y);\n"
		"	copy(z, Z);\n"
		"}\n";
	T t;
	float *Y;
	int32_t *Z;
	int i, j;

	t_compile(&t, src);
	t_alloc(&t);
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	t_ok(&t);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 8; j++) {
			int in = i >= 1 && i < 3 && j >= 2 && j < 6;

			ck_assert_int_eq(t_fl(&t, "Y")[i * 8 + j], in ? 0 : INTERP_UNDEF);
			if (in)
				ck_assert(Y[i * 8 + j] == 2.5f);
			ck_assert_int_eq(Z[i * 8 + j], j == 7 ? -3 : 0);
			ck_assert_int_eq(t_fl(&t, "Z")[i * 8 + j], 0);
		}
	t_free(&t);
}
END_TEST

/* ---- gemm ---------------------------------------------------------------------------------- */

/* A M x K (K x M with trans_a), B K x N (N x K with trans_b), f16 in shared memory, f32
 * accumulator filled with 0.5 first; M, K, N ragged inside the 16 x 24 x 8 tile */
START_TEST(gemm_variants)
{
	static const char fmt[] =
		"kernel g(A: f16[%s], B: f16[%s], C: f32[M, N]) grid(1) threads(128) {\n"
		"	shared As: f16[%s];\n"
		"	shared Bs: f16[%s];\n"
		"	local acc: f32[16, 8];\n"
		"	fill(acc, 0.5);\n"
		"	copy(A[0, 0], As);\n"
		"	copy(B[0, 0], Bs);\n"
		"	gemm(As, Bs, acc, trans_a = %s, trans_b = %s, clear = %s);\n"
		"	copy(acc, C[0, 0]);\n"
		"}\n";
	int ta = _i & 1, tb = _i >> 1 & 1, cl = _i >> 2 & 1, M = 13, K = 21, N = 7, m, n, k;
	char src[1024];
	uint16_t *A, *B;
	float *C;
	T t;

	snprintf(src, sizeof src, fmt, ta ? "K, M" : "M, K", tb ? "N, K" : "K, N", ta ? "24, 16" : "16, 24",
		 tb ? "8, 24" : "24, 8", ta ? "true" : "false", tb ? "true" : "false", cl ? "true" : "false");
	t_compile(&t, src);
	t_set(&t, "M", M);
	t_set(&t, "K", K);
	t_set(&t, "N", N);
	t_alloc(&t);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	C = t_data(&t, "C");
	for (k = 0; k < M * K; k++)
		A[k] = f16bits(dy((uint64_t)k, 1));
	for (k = 0; k < K * N; k++)
		B[k] = f16bits(dy((uint64_t)k, 2));
	t_ok(&t);
	for (m = 0; m < M; m++)
		for (n = 0; n < N; n++) {
			double s = cl ? 0 : 0.5;

			for (k = 0; k < K; k++)
				s += ref_f16(A[ta ? k * M + m : m * K + k]) * ref_f16(B[tb ? n * K + k : k * N + n]);
			ck_assert_msg(C[m * N + n] == (float)s, "%d%d%d: C[%d, %d] = %g, want %g", ta, tb, cl, m, n,
				      C[m * N + n], s);
			ck_assert_int_eq(t_fl(&t, "C")[m * N + n], INTERP_INEXACT);
		}
	t_free(&t);
}
END_TEST

START_TEST(gemm_int)
{
	static const char src[] =
		"kernel g(A: i8[M, K], B: i8[K, N], C: i32[M, N]) grid(1) threads(128) {\n"
		"	local As: i8[8, 32];\n"
		"	local Bs: i8[32, 8];\n"
		"	local acc: i32[8, 8];\n"
		"	copy(A[0, 0], As);\n"
		"	copy(B[0, 0], Bs);\n"
		"	gemm(As, Bs, acc, clear = true);\n"
		"	copy(acc, C[0, 0]);\n"
		"}\n";
	static const char big[] =
		"kernel g(A: i32[2, 2], B: i32[2, 2], C: i32[2, 2]) grid(1) threads(32) {\n"
		"	local As: i32[2, 2];\n"
		"	local Bs: i32[2, 2];\n"
		"	local acc: i32[2, 2];\n"
		"	copy(A, As);\n"
		"	copy(B, Bs);\n"
		"	clear(acc);\n"
		"	gemm(As, Bs, acc);\n"
		"	copy(acc, C);\n"
		"}\n";
	int8_t *A, *B;
	int32_t *C, *A2, *B2;
	int m, n, k;
	T t;

	t_compile(&t, src);
	t_set(&t, "M", 8);
	t_set(&t, "K", 30);
	t_set(&t, "N", 8);
	t_alloc(&t);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	C = t_data(&t, "C");
	for (k = 0; k < 8 * 30; k++) {
		A[k] = (int8_t)(k * 37 + 11);
		B[k] = (int8_t)(k * 101 - 128);
	}
	t_ok(&t);
	for (m = 0; m < 8; m++)
		for (n = 0; n < 8; n++) {
			int32_t s = 0;

			for (k = 0; k < 30; k++)
				s += A[m * 30 + k] * B[k * 8 + n];
			ck_assert_int_eq(C[m * 8 + n], s);
			ck_assert_int_eq(t_fl(&t, "C")[m * 8 + n], 0);
		}
	t_free(&t);
	/* i32 overflow: undefined */
	t_compile(&t, big);
	t_alloc(&t);
	A2 = t_data(&t, "A");
	B2 = t_data(&t, "B");
	for (k = 0; k < 4; k++) {
		A2[k] = 1 << 30;
		B2[k] = 1;
	}
	t_ok(&t);
	C = t_data(&t, "C");
	ck_assert_int_eq(t_fl(&t, "C")[0], INTERP_UNDEF); /* 2^30 + 2^30 */
	ck_assert_int_eq(t_fl(&t, "C")[1], INTERP_UNDEF);
	t_free(&t);
}
END_TEST

/* ---- reduce -------------------------------------------------------------------------------- */

START_TEST(reduce_ops)
{
	static const char fmt[] =
		"kernel r(X: f32[4, 8], Y: f32[4], Z: f32[8]) grid(1) threads(32) {\n"
		"	local x: f32[4, 8];\n"
		"	local y: f32[1, 4];\n"
		"	shared z: f32[8];\n"
		"	copy(X, x);\n"
		"	fill(y, 1.0);\n"
		"	fill(z, -1.0);\n"
		"	reduce(x, y, op = %s, dim = 1, clear = %s);\n"
		"	reduce(x, z, op = %s, dim = -2, clear = %s);\n"
		"	copy(y, Y);\n"
		"	copy(z, Z);\n"
		"}\n";
	static const char *const ops[] = {"sum", "max", "min", "absmax"};
	int op = _i / 2, cl = _i % 2, r, c;
	char src[1024];
	float *X, *Y, *Z;
	T t;

	snprintf(src, sizeof src, fmt, ops[op], cl ? "true" : "false", ops[op], cl ? "true" : "false");
	t_compile(&t, src);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	for (r = 0; r < 32; r++)
		X[r] = (float)(((r * 37) % 17 - 8) / 4.0);
	X[1 * 8 + 3] = NAN;
	t_ok(&t);
	for (r = 0; r < 4; r++) {
		double a = cl ? (op == 1 ? -INFINITY : op == 2 ? INFINITY : 0) : 1.0;
		int nan = 0;

		for (c = 0; c < 8; c++) {
			double x = X[r * 8 + c];

			if (isnan(x)) {
				nan = 1;
				continue;
			}
			a = op == 0 ? a + x : op == 1 ? fmax(a, x) : op == 2 ? fmin(a, x) : fmax(a, fabs(x));
		}
		if (op == 0 && nan)
			ck_assert(isnan(Y[r]));
		else
			ck_assert_msg(Y[r] == (float)a, "%s clear=%d: Y[%d] = %g, want %g", ops[op], cl, r, Y[r], a);
		ck_assert_int_eq(t_fl(&t, "Y")[r], op == 0 ? INTERP_INEXACT : 0);
	}
	for (c = 0; c < 8; c++) {
		double a = cl ? (op == 1 ? -INFINITY : op == 2 ? INFINITY : 0) : -1.0;
		int nan = 0;

		for (r = 0; r < 4; r++) {
			double x = X[r * 8 + c];

			if (isnan(x)) {
				nan = 1;
				continue;
			}
			a = op == 0 ? a + x : op == 1 ? fmax(a, x) : op == 2 ? fmin(a, x) : fmax(a, fabs(x));
		}
		if (op == 0 && nan)
			ck_assert(isnan(Z[c]));
		else
			ck_assert_msg(Z[c] == (float)a, "%s clear=%d: Z[%d] = %g, want %g", ops[op], cl, c, Z[c], a);
	}
	t_free(&t);
}
END_TEST

START_TEST(reduce_int)
{
	static const char src[] =
		"kernel r(X: i32[2, 3], Y: i32[2], Z: i8[3]) grid(1) threads(32) {\n"
		"	local x: i32[2, 3];\n"
		"	local y: i32[2];\n"
		"	local x8: i8[2, 3];\n"
		"	local z: i8[3];\n"
		"	copy(X, x);\n"
		"	copy(X, x8);\n"
		"	fill(y, 10);\n"
		"	reduce(x, y, op = sum, clear = false);\n"
		"	reduce(x8, z, op = absmax, dim = 0);\n"
		"	copy(y, Y);\n"
		"	copy(z, Z);\n"
		"}\n";
	int32_t *X, *Y;
	int8_t *Z;
	T t;

	t_compile(&t, src);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	X[0] = 5, X[1] = -7, X[2] = -128;
	X[3] = 2147483647, X[4] = 1, X[5] = 200;
	t_ok(&t);
	ck_assert_int_eq(Y[0], -120);
	ck_assert_int_eq(t_fl(&t, "Y")[0], 0);
	ck_assert_int_eq(t_fl(&t, "Y")[1], INTERP_UNDEF); /* 10 + 2^31 - 1 + 1 + 200 overflows i32 */
	ck_assert_int_eq(Z[0], 5);            /* i8(2147483647) wraps to -1: |-1| = 1 < 5 */
	ck_assert_int_eq(Z[1], 7);
	ck_assert_int_eq(t_fl(&t, "Z")[2], INTERP_UNDEF); /* |-128| does not fit in i8 */
	t_free(&t);
}
END_TEST

/* ---- parallel nests, expressions ------------------------------------------------------------ */

/* a float product feeding + or - may fuse into an FMA on a GPU (one rounding): the sum is
 * inexact; a conversion or global memory between them, or a product alone, is exact */
START_TEST(fma_rule)
{
	static const char src[] =
		"kernel f(X: f32[4], T: f32[4], Y: f32[24]) grid(1) threads(32) {\n"
		"	for i in parallel(4) {\n"
		"		T[i] = X[i] * 3.0;\n"
		"	}\n"
		"	for i in parallel(4) {\n"
		"		let p = X[i] * 2.0;\n"
		"		Y[i] = X[i] * 2.0 + 1.0;\n"
		"		Y[4 + i] = X[i] * 2.0;\n"
		"		Y[8 + i] = 1.0 - p;\n"
		"		Y[12 + i] = f32(f16(X[i] * 2.0)) + 1.0;\n"
		"		Y[16 + i] = T[i] + 1.0;\n"
		"		Y[20 + i] = -(X[i] * X[i]) + 0.25;\n"
		"	}\n"
		"}\n";
	static const int inexact[6] = {1, 0, 1, 0, 0, 1};
	T t;
	float *X;
	int i, g;

	t_compile(&t, src);
	t_alloc(&t);
	X = t_data(&t, "X");
	for (i = 0; i < 4; i++)
		X[i] = 0.1f * (float)(i + 1);
	t_ok(&t);
	for (g = 0; g < 6; g++)
		for (i = 0; i < 4; i++)
			ck_assert_msg(t_fl(&t, "Y")[g * 4 + i] == (inexact[g] ? INTERP_INEXACT : 0),
				      "Y[%d]: flags %d, want %s", g * 4 + i, t_fl(&t, "Y")[g * 4 + i],
				      inexact[g] ? "inexact" : "exact");
	t_free(&t);
}
END_TEST

START_TEST(nest_exprs)
{
	static const char src[] =
		"kernel n(X: f32[N], Y: f32[N], Z: i32[N]) grid(1) threads(32) {\n"
		"	local x: f32[16];\n"
		"	local y: f32[16];\n"
		"	local z: i32[16];\n"
		"	local z2: i32[16];\n"
		"	copy(X[0], x);\n"
		"	for i in parallel(16) {\n"
		"		let v = x[i] * 2.0;\n"
		"		let w = v > 3.0 ? v - 3.0 : select(v < -3.0, v + 3.0, 0.0);\n"
		"		if (i % 2 == 0) {\n"
		"			y[i] = w;\n"
		"		} else if (i % 3 == 0) {\n"
		"			y[i] = -w;\n"
		"		} else {\n"
		"			y[i] = w * 4.0;\n"
		"		}\n"
		"		w = w + 0.5;\n"
		"		z2[i] = (i > 5 && x[i] > 0.0 || i == 1 ? 1000 : 0) + i32(w);\n"
		"	}\n"
		"	for i in parallel(16) {\n"
		"		let s = 0;\n"
		"		for k in range(2, i) {\n"
		"			s = s + k;\n"
		"		}\n"
		"		z[i] = i32(s) + z2[i];\n"
		"	}\n"
		"	copy(y, Y[0]);\n"
		"	copy(z, Z[0]);\n"
		"}\n";
	T t;
	float *X, *Y;
	int32_t *Z;
	int i, k, N = 12;

	t_compile(&t, src);
	t_set(&t, "N", N);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	for (i = 0; i < N; i++)
		X[i] = (float)(i - 6) * 0.75f;
	t_ok(&t);
	for (i = 0; i < N; i++) {
		float v = X[i] * 2.0f, w = v > 3 ? v - 3 : v < -3 ? v + 3 : 0, y;
		int32_t s = 0;

		y = i % 2 == 0 ? w : i % 3 == 0 ? -w : w * 4;
		for (k = 2; k < i; k++)
			s += k;
		s += ((i > 5 && X[i] > 0) || i == 1 ? 1000 : 0) + (int32_t)(w + 0.5f);
		ck_assert_msg(Y[i] == y, "Y[%d] = %g, want %g", i, Y[i], y);
		ck_assert_int_eq(Z[i], s);
		/* w = X * 2 -+ 3 may fuse into an FMA: inexact, never undefined */
		ck_assert_int_eq(t_fl(&t, "Y")[i] & ~INTERP_INEXACT, 0);
		ck_assert_int_eq(t_fl(&t, "Z")[i] & ~INTERP_INEXACT, 0);
	}
	t_free(&t);
}
END_TEST

/* batches of iterations across rows of the nest, conditions narrowing them */
START_TEST(nest_batches)
{
	static const char src[] =
		"kernel b(Y: f32[3, 100], Z: i32[3, 100]) grid(1) threads(32) {\n"
		"	for i, j in parallel(3, 100) {\n"
		"		let u = i * 1000 + j;\n"
		"		Y[i, j] = f32(u) * 0.5;\n"
		"		if (j % 7 == 3 || i == 2 && j > 90) {\n"
		"			Z[i, j] = i32(u % 13 == 0 ? -u : u / 3);\n"
		"		} else {\n"
		"			Z[i, j] = i32(select(j < 50, u, 10 / (j - 49)));\n"
		"		}\n"
		"	}\n"
		"}\n";
	T t;
	float *Y;
	int32_t *Z;
	int i, j;

	t_compile(&t, src);
	t_alloc(&t);
	t_ok(&t);
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	for (i = 0; i < 3; i++)
		for (j = 0; j < 100; j++) {
			int u = i * 1000 + j;
			int z = j % 7 == 3 || (i == 2 && j > 90) ? (u % 13 == 0 ? -u : u / 3) : j < 50 ? u : 10 / (j - 49);

			ck_assert(Y[i * 100 + j] == (float)u * 0.5f);
			ck_assert_int_eq(Z[i * 100 + j], z);
		}
	t_free(&t);
}
END_TEST

/* nests that the shadow checks (irregular indices) but that do not race; constant
 * indices next to the nest variables */
START_TEST(nest_tracked)
{
	static const char src[] =
		"kernel k(Y: f32[8], Z: f32[2, 1, 4]) grid(1) threads(32) {\n"
		"	local x: f32[8];\n"
		"	local z: f32[2, 1, 4];\n"
		"	for i in parallel(4) {\n"
		"		if (i < 2) {\n"
		"			x[2 * i] = f32(i);\n"
		"			x[2 * i + 1] = f32(i) + 0.5;\n"
		"		} else {\n"
		"			x[8 - 2 * (i - 1)] = 10.0;\n"
		"			x[9 - 2 * (i - 1)] = x[9 - 2 * (i - 1) - 1] + 1.0;\n"
		"		}\n"
		"	}\n"
		"	for a, b in parallel(2, 4) {\n"
		"		z[a, 0, b] = f32(a * 4 + b);\n"
		"		z[a, 0, b] = z[a, 0, b] * 2.0;\n"
		"	}\n"
		"	copy(x, Y);\n"
		"	copy(z, Z);\n"
		"}\n";
	static const float want[8] = {0, 0.5f, 1, 1.5f, 10, 11, 10, 11};
	T t;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	t_ok(&t);
	for (i = 0; i < 8; i++) {
		ck_assert(((float *)t_data(&t, "Y"))[i] == want[i]);
		ck_assert(((float *)t_data(&t, "Z"))[i] == 2.0f * (float)i);
	}
	t_free(&t);
}
END_TEST

/* ---- strided tensors ---------------------------------------------------------------- */

/* one head of a [B, S, H, D] tensor read and written in place through strided views
 * (strides (H * D, 1)), S ragged: the copies stop at the view's shape, and no element
 * of the big tensors outside the two views is read into the result or written */
START_TEST(strided_head)
{
	static const char src[] =
		"kernel head(Q: f32[S, 16] strides(sq, 1), O: f32[S, 16] strides(so, 1), s: f32)\n"
		"    grid(cdiv(S, 16)) threads(64)\n"
		"{\n"
		"    shared t: f32[16, 16];\n"
		"    local r: f32[16, 16];\n"
		"    copy(Q[bx * 16, 0], t);\n"
		"    copy(t, r);\n"
		"    for i, j in parallel(16, 16) { r[i, j] = r[i, j] * s + Q[bx * 16 + i, 15 - j]; }\n"
		"    copy(r, O[bx * 16, 0]);\n"
		"}\n";
	enum { NB = 2, S = 37, H = 3, D = 16, N = NB * S * H * D };
	float *qb = malloc(sizeof *qb * N), *ob = malloc(sizeof *ob * N);
	unsigned char *qf = calloc(N, 1), *of = calloc(N, 1);
	int64_t qoff = ((1 * S + 0) * H + 2) * D, ooff = ((0 * S + 0) * H + 1) * D;
	T t;
	int i, b, s, h, d, P = 0;

	ck_assert(qb && ob && qf && of);
	for (i = 0; i < N; i++) {
		qb[i] = (float)dy((uint64_t)i, 3);
		ob[i] = 99;
	}
	t_compile(&t, src);
	t_set(&t, "S", S);
	t_set(&t, "sq", H * D);
	t_set(&t, "so", H * D);
	t_set(&t, "s", 2);
	t.args.sizes = t.sizes;
	t.args.tensors = t.ten;
	t.args.scalars = t.scal;
	for (i = 0; i < t.k->nparam; i++)
		if (t.k->params[i].is_tensor)
			t.ten[i].n = (S - 1) * H * D + D;
	t.ten[t_param(&t, "Q")].data = qb + qoff;
	t.ten[t_param(&t, "Q")].flags = qf + qoff;
	t.ten[t_param(&t, "O")].data = ob + ooff;
	t.ten[t_param(&t, "O")].flags = of + ooff;
	t_ok(&t);
	ck_assert_int_eq(t.st.blocks, 3);
	for (b = 0; b < NB; b++)
		for (s = 0; s < S; s++)
			for (h = 0; h < H; h++)
				for (d = 0; d < D; d++) {
					int64_t at = ((b * S + s) * H + h) * D + d;

					if (b == 0 && h == 1) {
						float want = qb[qoff + s * H * D + d] * 2 + qb[qoff + s * H * D + 15 - d];

						EXPECT(ob[at] == want, "O[%d, %d] = %g, want %g", s, d, ob[at], want);
						P++;
					} else {
						EXPECT(ob[at] == 99, "O's tensor at (%d, %d, %d, %d) outside the view was "
						       "written: %g", b, s, h, d, ob[at]);
					}
					/* q * 2 + q may fuse into an FMA where it was written */
					EXPECT((of[at] & ~INTERP_INEXACT) == 0 &&
					       (of[at] != 0) == (b == 0 && h == 1), "flags at %lld", (long long)at);
					EXPECT(qf[at] == 0, "Q's flags at %lld", (long long)at);
				}
	ck_assert_int_eq(P, S * D);
	t.ten[t_param(&t, "Q")].data = t.ten[t_param(&t, "O")].data = NULL;
	t.ten[t_param(&t, "Q")].flags = t.ten[t_param(&t, "O")].flags = NULL;
	t_free(&t);
	free(qb);
	free(ob);
	free(qf);
	free(of);
}
END_TEST

/* a transposed view (strides (1, M): column-major) through copy and gemm, and an output
 * with a padded leading dim whose last stride is 2 written by a parallel nest */
START_TEST(strided_transposed)
{
	static const char src[] =
		"kernel tg(A: f32[M, 16] strides(1, M), B: f32[16, 16], C: f32[M, 16] strides(1, M),\n"
		"          E: f32[M, 16] strides(lde, 2))\n"
		"    grid(cdiv(M, 16)) threads(128)\n"
		"{\n"
		"    shared As: f32[16, 16];\n"
		"    shared Bs: f32[16, 16];\n"
		"    local acc: f32[16, 16];\n"
		"    clear(acc);\n"
		"    copy(A[bx * 16, 0], As);\n"
		"    copy(B, Bs);\n"
		"    gemm(As, Bs, acc);\n"
		"    copy(acc, C[bx * 16, 0]);\n"
		"    for i, j in parallel(16, 16) { E[bx * 16 + i, j] = A[bx * 16 + i, j] + 1.0; }\n"
		"}\n";
	enum { M = 20, LDE = 40 };
	T t;
	float *A, *B, *C, *E;
	int i, j, k;

	t_compile(&t, src);
	t_set(&t, "M", M);
	t_set(&t, "lde", LDE);
	t_alloc(&t);
	ck_assert_int_eq(t.ten[t_param(&t, "A")].n, 16 * M);
	ck_assert_int_eq(t.ten[t_param(&t, "E")].n, (M - 1) * LDE + 15 * 2 + 1);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	C = t_data(&t, "C");
	E = t_data(&t, "E");
	for (i = 0; i < 16 * M; i++)
		A[i] = (float)dy((uint64_t)i, 1);
	for (i = 0; i < 256; i++)
		B[i] = (float)dy((uint64_t)i, 2);
	for (i = 0; i < t.ten[t_param(&t, "E")].n; i++)
		E[i] = 99;
	t_ok(&t);
	for (i = 0; i < M; i++)
		for (j = 0; j < 16; j++) {
			double want = 0;

			for (k = 0; k < 16; k++)
				want += (double)A[i + k * M] * B[k * 16 + j];
			EXPECT(C[i + j * M] == (float)want, "C[%d, %d] = %g, want %g", i, j, C[i + j * M], want);
			EXPECT(E[i * LDE + j * 2] == A[i + j * M] + 1, "E[%d, %d] = %g", i, j, E[i * LDE + j * 2]);
		}
	for (i = 0; i < t.ten[t_param(&t, "E")].n; i++)
		if (i % LDE >= 32 || i % 2)
			EXPECT(E[i] == 99 && t_fl(&t, "E")[i] == 0, "E's padding at %d was written", i);
	t_free(&t);
}
END_TEST

/* a stride value that is not positive, a tensor that does not span its view, and views
 * whose strides overlap (stores through them are checked for races, also in batches) */
START_TEST(strided_errors)
{
	static const char src[] =
		"kernel ov(A: f32[4, 4] strides(sa, 1)) grid(1) threads(32) {\n"
		"    for i, j in parallel(4, 4) { A[i, j] = f32(i); }\n"
		"}\n";
	T t;
	InterpStatus st;
	int batch;

	t_compile(&t, src);
	t_set(&t, "sa", 0);
	t_alloc(&t);
	st = t_run(&t);
	ck_assert_int_eq(st, INTERP_ERROR);
	ck_assert_msg(strstr(t.e.msg, "t.tile:1:11: stride 0 of 'A' (sa) is 0; strides must be positive"), "%s",
		      t.e.msg);
	t_free(&t);

	t_compile(&t, src);
	t_set(&t, "sa", 5);
	t_alloc(&t);
	ck_assert_int_eq(t.ten[0].n, 19);
	t.ten[0].n = 16;
	st = t_run(&t);
	ck_assert_int_eq(st, INTERP_ERROR);
	ck_assert_msg(strstr(t.e.msg, "tensor 'A' has 16 elements, its shape and strides need 19"), "%s", t.e.msg);
	t.ten[0].n = 19;
	t_ok(&t);
	ck_assert(((float *)t_data(&t, "A"))[3 * 5 + 2] == 3);
	t_free(&t);

	for (batch = 0; batch < 2; batch++) {
		t_compile(&t, src);
		t_set(&t, "sa", 1);
		t_alloc(&t);
		t.args.no_batch = !batch;
		st = t_run(&t);
		ck_assert_int_eq(st, INTERP_ERROR);
		ck_assert_msg(strstr(t.e.msg, "race"), "%s", t.e.msg);
		t_free(&t);
	}
}
END_TEST


static int64_t
fdiv(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return q * b != a && (a < 0) != (b < 0) ? q - 1 : q;
}

/* atomics: points of a nest and blocks updating one element are no race (a plain store of
 * the same pattern is); adds, max/min, f16 and i32, a tile added by copy(..., op = add), a
 * top-level atomic once per block, float adds flagged inexact */
START_TEST(atomics)
{
	static const char src[] =
		"kernel a(H: i32[8], Mx: i32[2], F: f16[1], G: f32[1], T: i32[4, 8], C: i32[1]) grid(4) threads(32) {\n"
		"	shared s: f32[1];\n"
		"	local t: i32[4, 8];\n"
		"	for i in parallel(1) { s[i] = 0.0; }\n"
		"	for i in parallel(64) {\n"
		"		atomic_add(H[i % 8], 1);\n"
		"		atomic_max(Mx[0], i32(bx * 64 + i));\n"
		"		atomic_min(Mx[1], i32(bx * 64 + i));\n"
		"		atomic_add(F[0], 1.0);\n"
		"		atomic_add(s[0], 0.5);\n"
		"	}\n"
		"	for i in parallel(1) { atomic_add(G[i], s[i]); }\n"
		"	fill(t, 1);\n"
		"	copy(t, T[0, 0], op = add);\n"
		"	atomic_add(C[0], 1);\n"
		"}\n";
	static const char racy[] =
		"kernel r(H: i32[8]) grid(1) threads(32) {\n"
		"	for i in parallel(64) { H[i % 8] = H[i % 8] + 1; }\n"
		"}\n";
	T t;
	int32_t *H, *Mx, *Tt, *C;
	uint16_t *F;
	float *G;
	const unsigned char *gf;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	Mx = t_data(&t, "Mx");
	Mx[0] = -5, Mx[1] = 1000;
	t_ok(&t);
	H = t_data(&t, "H"), Mx = t_data(&t, "Mx"), F = t_data(&t, "F"), G = t_data(&t, "G");
	Tt = t_data(&t, "T"), C = t_data(&t, "C");
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(H[i], 32);
	ck_assert_int_eq(Mx[0], 255);
	ck_assert_int_eq(Mx[1], 0);
	ck_assert_int_eq(F[0], 0x5c00); /* 256.0 in f16 */
	ck_assert(G[0] == 128.0f);      /* 4 blocks x 64 x 0.5 */
	for (i = 0; i < 32; i++)
		ck_assert_int_eq(Tt[i], 4);
	ck_assert_int_eq(C[0], 4);
	gf = t_fl(&t, "G");
	ck_assert_msg(gf[0] & INTERP_INEXACT, "a float atomic add is order-dependent: inexact");
	ck_assert(!(t_fl(&t, "H")[0] & INTERP_INEXACT));
	t_free(&t);
	t_compile(&t, racy);
	t_alloc(&t);
	ck_assert_int_eq(t_run(&t), INTERP_ERROR);
	ck_assert_msg(strstr(t.e.msg, "data race in parallel nest") != NULL, "%s", t.e.msg);
	t_free(&t);
}
END_TEST

START_TEST(floor_divmod)
{
	static const char src[] =
		"kernel d(X: i32[8], Q: i32[8, 6]) grid(1) threads(32) {\n"
		"	local x: i32[8];\n"
		"	copy(X, x);\n"
		"	for i in parallel(8) {\n"
		"		let v = x[i];\n"
		"		Q[i, 0] = v / 3;\n"
		"		Q[i, 1] = v % 3;\n"
		"		Q[i, 2] = v / -3;\n"
		"		Q[i, 3] = v % -3;\n"
		"		Q[i, 4] = cdiv(v, 4);\n"
		"		Q[i, 5] = (v >> 1) + (v << 2) + i32(i - 4) / 2;\n"
		"	}\n"
		"}\n";
	static const int32_t xs[8] = {-7, -6, -1, 0, 1, 5, 7, -2147483647};
	T t;
	int32_t *X, *Q;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	X = t_data(&t, "X");
	Q = t_data(&t, "Q");
	memcpy(X, xs, sizeof xs);
	t_ok(&t);
	for (i = 0; i < 8; i++) {
		int64_t v = xs[i];

		ck_assert_int_eq(Q[i * 6 + 0], fdiv(v, 3));
		ck_assert_int_eq(Q[i * 6 + 1], v - 3 * fdiv(v, 3));
		ck_assert_int_eq(Q[i * 6 + 2], fdiv(v, -3));
		ck_assert_int_eq(Q[i * 6 + 3], v + 3 * fdiv(v, -3));
		ck_assert_int_eq(Q[i * 6 + 4], fdiv(v + 3, 4));
		if (i < 7) {
			ck_assert_int_eq(Q[i * 6 + 5], fdiv(v, 2) + v * 4 + fdiv(i - 4, 2));
			ck_assert_int_eq(t_fl(&t, "Q")[i * 6 + 5], 0);
		} else {
			ck_assert_int_eq(t_fl(&t, "Q")[i * 6 + 5], INTERP_UNDEF); /* v << 2 overflows i32 */
		}
		ck_assert_int_eq(t_fl(&t, "Q")[i * 6 + 0], 0);
	}
	t_free(&t);
}
END_TEST

/* f16 values compute in f32: rounded at stores and casts only */
START_TEST(f16_at_stores)
{
	static const char src[] =
		"kernel h(A: f16[4], B: f16[4], Y: f32[4, 4], Z: f16[4]) grid(1) threads(32) {\n"
		"	local a: f16[4];\n"
		"	local b: f16[4];\n"
		"	local z: f16[4];\n"
		"	copy(A, a);\n"
		"	copy(B, b);\n"
		"	for i in parallel(4) {\n"
		"		let s = a[i] + b[i];\n"
		"		Y[i, 0] = f32(s);\n"
		"		Y[i, 1] = f32(f16(f32(s)));\n"
		"		Y[i, 3] = f32(f16(s));\n"
		"		z[i] = s;\n"
		"		Y[i, 2] = f32(z[i]) + f32(a[i] * 0.1);\n"
		"	}\n"
		"	copy(z, Z);\n"
		"}\n";
	T t;
	uint16_t *A, *B, *Z;
	float *Y;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	Y = t_data(&t, "Y");
	Z = t_data(&t, "Z");
	for (i = 0; i < 4; i++) {
		A[i] = 0x3c00;                 /* 1.0 */
		B[i] = (uint16_t)(0x1000 + i); /* 2^-11 and above: 1 + b is not an f16 */
	}
	t_ok(&t);
	for (i = 0; i < 4; i++) {
		float s = 1.0f + (float)ref_f16(B[i]), r = (float)ref_f16(f16of(s));
		float c = (float)ref_f16(f16of(0.1)); /* the constant 0.1:f16 */

		ck_assert(s != r);
		ck_assert_msg(Y[i * 4] == s, "%g want %g", Y[i * 4], s);
		ck_assert(Y[i * 4 + 1] == r);
		ck_assert(Y[i * 4 + 3] == s); /* f16(x) of an f16 value is x itself (sema drops the cast) */
		ck_assert_int_eq(Z[i], f16of(s));
		ck_assert_msg(Y[i * 4 + 2] == r + 1.0f * c, "%a want %a", Y[i * 4 + 2], r + c);
	}
	t_free(&t);
}
END_TEST

START_TEST(loops_pipeline)
{
	static const char src[] =
		"kernel l(X: f32[M, 8], Y: f32[8]) grid(1) threads(32) {\n"
		"	local x: f32[4, 8];\n"
		"	local acc: f32[8];\n"
		"	clear(acc);\n"
		"	for ko in pipeline(cdiv(M, 4), stages = 3) {\n"
		"		copy(X[ko * 4, 0], x);\n"
		"		for r in range(4) {\n"
		"			for j in parallel(8) {\n"
		"				acc[j] = acc[j] + x[r, j] * f32(ko + 1);\n"
		"			}\n"
		"		}\n"
		"	}\n"
		"	for k in range(M, 2) {\n"
		"		clear(acc);\n"
		"	}\n"
		"	copy(acc, Y);\n"
		"}\n";
	T t;
	float *X, *Y;
	int i, j, M = 10;

	t_compile(&t, src);
	t_set(&t, "M", M);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	for (i = 0; i < M * 8; i++)
		X[i] = (float)dy((uint64_t)i, 3);
	t_ok(&t);
	for (j = 0; j < 8; j++) {
		float a = 0;

		for (i = 0; i < 12; i++)
			a = a + (i < M ? X[i * 8 + j] : 0) * (float)(i / 4 + 1);
		ck_assert_msg(Y[j] == a, "Y[%d] = %g, want %g", j, Y[j], a);
		/* a + x * c: a product into a sum, which may fuse */
		ck_assert_int_eq(t_fl(&t, "Y")[j], INTERP_INEXACT);
	}
	t_free(&t);
}
END_TEST

START_TEST(helper_inline)
{
	static const char src[] =
		"func scale_tile(x: local f32[BM, BN], s: f32)\n"
		"{\n"
		"	for i, j in parallel(BM, BN) {\n"
		"		x[i, j] *= s;\n"
		"	}\n"
		"}\n"
		"func add_one(x: local f32[BM, BN])\n"
		"{\n"
		"	scale_tile(x, 1.0);\n"
		"	for i, j in parallel(BM, BN) {\n"
		"		x[i, j] += 1.0;\n"
		"	}\n"
		"}\n"
		"kernel k(X: f32[4, 6], Y: f32[4, 6], alpha: f32) grid(1) threads(32) {\n"
		"	local t: f32[4, 6];\n"
		"	copy(X, t);\n"
		"	scale_tile(t, alpha * 2.0);\n"
		"	add_one(t);\n"
		"	copy(t, Y);\n"
		"}\n";
	T t;
	float *X, *Y;
	int i;

	t_compile(&t, src);
	t_set(&t, "alpha", 0.75);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	for (i = 0; i < 24; i++)
		X[i] = (float)i - 5.5f;
	t_ok(&t);
	for (i = 0; i < 24; i++)
		ck_assert(Y[i] == X[i] * 1.5f * 1.0f + 1.0f);
	t_free(&t);
}
END_TEST

/* ---- conversions between every pair of element types ------------------------------------------ */

static const DType alltypes[] = {DT_BOOL, DT_I8, DT_U8, DT_I32, DT_F16, DT_BF16, DT_F32, DT_F64,
				 DT_FP8E4M3, DT_FP8E5M2};

/* a source value: its bits, and its value decoded here */
typedef struct SrcVal {
	int isf;
	double f;
	int64_t i;
} SrcVal;

static SrcVal
ref_decode(DType t, const unsigned char *p)
{
	SrcVal v = {0, 0, 0};
	uint16_t h;
	float f;

	switch (t) {
	case DT_BOOL: v.i = *p != 0; break;
	case DT_I8: v.i = *(const int8_t *)p; break;
	case DT_U8: v.i = *p; break;
	case DT_I32: {
		int32_t x;

		memcpy(&x, p, 4);
		v.i = x;
		break;
	}
	case DT_F16: memcpy(&h, p, 2), v.isf = 1, v.f = ref_f16(h); break;
	case DT_BF16: memcpy(&h, p, 2), v.isf = 1, v.f = u2f((uint32_t)h << 16); break;
	case DT_F32: memcpy(&f, p, 4), v.isf = 1, v.f = f; break;
	case DT_F64: memcpy(&v.f, p, 8), v.isf = 1; break;
	case DT_FP8E4M3: v.isf = 1, v.f = ref_fp8(0, *p); break;
	case DT_FP8E5M2: v.isf = 1, v.f = ref_fp8(1, *p); break;
	default: break;
	}
	return v;
}

/* the source values of type t, written to p (16 of them) */
static void
srcvals(DType t, unsigned char *p)
{
	static const double fl[16] = {0, -0.0, 1.5, -2.75, 3.7, -3.7, 1e10, -1e10, 65520, 65519,
				      464, 300.5, -129.5, 255.9, NAN, INFINITY};
	static const int64_t in[16] = {0, 1, -1, 5, 127, -128, 255, 200, 65519, 65520, 70000, -70000,
				       2147483647, -2147483647 - 1, 16777217, 449};
	static const uint16_t h16[16] = {0x0000, 0x8000, 0x3c00, 0x3c01, 0xbc00, 0x7bff, 0x0001, 0x7c00,
					 0xfc00, 0x7e00, 0x5bf8, 0x4e00, 0xd3ff, 0x1000, 0x03ff, 0x57e0};
	static const uint16_t b16[16] = {0x0000, 0x8000, 0x3f80, 0x3f81, 0x7f7f, 0x0001, 0xff80, 0x7fc0,
					 0x4b80, 0x4f00, 0xc7ff, 0x4380, 0x4401, 0x3c00, 0xcf00, 0x477f};
	static const uint8_t e4[16] = {0x00, 0x01, 0x08, 0x7e, 0x7f, 0xfe, 0x38, 0x39,
				       0x80, 0x5d, 0x66, 0xc4, 0x70, 0x07, 0x4f, 0xb9};
	static const uint8_t e5[16] = {0x00, 0x01, 0x04, 0x3c, 0x7b, 0x7c, 0x7d, 0xfb,
				       0x80, 0x5b, 0xfc, 0x57, 0x62, 0x03, 0x47, 0xbe};
	int i;

	for (i = 0; i < 16; i++) {
		switch (t) {
		case DT_BOOL: p[i] = (unsigned char)(i % 3 == 1); break;
		case DT_I8: ((int8_t *)p)[i] = (int8_t)(in[i] & 0xff); break;
		case DT_U8: p[i] = (uint8_t)(in[i] & 0xff); break;
		case DT_I32: {
			int32_t x = (int32_t)in[i];

			memcpy(p + 4 * i, &x, 4);
			break;
		}
		case DT_F16: memcpy(p + 2 * i, &h16[i], 2); break;
		case DT_BF16: memcpy(p + 2 * i, &b16[i], 2); break;
		case DT_F32: {
			float f = (float)fl[i];

			memcpy(p + 4 * i, &f, 4);
			break;
		}
		case DT_F64: {
			double d = i == 9 ? 1 + 0x1p-11 + 0x1p-40 : i == 13 ? 0x1p63 : fl[i];

			memcpy(p + 8 * i, &d, 8);
			break;
		}
		case DT_FP8E4M3: p[i] = e4[i]; break;
		case DT_FP8E5M2: p[i] = e5[i]; break;
		default: break;
		}
	}
}

/* check an element of type to converted from v; 0 ok */
static void
check_conv(DType from, DType to, int i, SrcVal v, const unsigned char *p, unsigned fl)
{
	SrcVal got = ref_decode(to, p);
	const char *what = dtype_name(from), *tn = dtype_name(to);

	if (to == DT_BOOL) {
		ck_assert_msg(got.i == (v.isf ? v.f != 0 : v.i != 0), "%s %d -> bool", what, i);
		ck_assert_int_eq(fl, 0);
		return;
	}
	if (dtype_is_int(to)) {
		if (v.isf) {
			double t = trunc(v.f);
			double lo = to == DT_I8 ? -128 : to == DT_U8 ? 0 : -2147483648.0;
			double hi = to == DT_I8 ? 127 : to == DT_U8 ? 255 : 2147483647.0;

			if (!(t >= lo && t <= hi)) {
				ck_assert_msg(fl == INTERP_UNDEF, "%s %g -> %s: flags %u", what, v.f, tn, fl);
				return;
			}
			ck_assert_msg(got.i == (int64_t)t, "%s %g -> %s %lld", what, v.f, tn, (long long)got.i);
		} else {
			int64_t w = to == DT_I8 ? (int8_t)v.i : to == DT_U8 ? (uint8_t)v.i : (int32_t)v.i;

			ck_assert_msg(got.i == w, "%s %lld -> %s %lld", what, (long long)v.i, tn, (long long)got.i);
		}
		ck_assert_int_eq(fl, 0);
		return;
	}
	{
		double x = v.isf ? v.f : (double)v.i, want;

		switch (to) {
		case DT_F32: want = (float)x; break;
		case DT_F64: want = x; break;
		case DT_F16: want = isnan(x) ? x : ref_f16(f16of(x)); break;
		case DT_BF16: want = ref_round_bf16(x); break;
		case DT_FP8E4M3: want = ref_fp8(0, ref_to_fp8(0, x)); break;
		default: want = ref_fp8(1, ref_to_fp8(1, x)); break;
		}
		if (isnan(want))
			ck_assert_msg(isnan(got.f), "%s %g -> %s %g, want NaN", what, x, tn, got.f);
		else
			ck_assert_msg(got.f == want && !signbit(got.f) == !signbit(want), "%s %a (%d) -> %s %a, want %a",
				      what, x, i, tn, got.f, want);
		ck_assert_int_eq(fl, 0);
	}
}

START_TEST(conversions)
{
	static const char copyfmt[] =
		"kernel c(X: %s[N], Y: %s[N]) grid(1) threads(32) {\n"
		"	local t: %s[16];\n"
		"	copy(X[0], t);\n"
		"	copy(t, Y[0]);\n"
		"}\n";
	static const char castfmt[] =
		"kernel c(X: %s[N], Y: %s[N]) grid(1) threads(32) {\n"
		"	for i in parallel(16) {\n"
		"		Y[i] = %s(X[i]);\n"
		"	}\n"
		"}\n";
	int n = (int)countof(alltypes);
	DType from = alltypes[_i / 2 % n], to = alltypes[_i / 2 / n];
	char src[512];
	unsigned char *X, *Y;
	int i, N = 15;
	T t;

	snprintf(src, sizeof src, _i % 2 ? castfmt : copyfmt, dtype_name(from), dtype_name(to), dtype_name(to));
	t_compile(&t, src);
	t_set(&t, "N", N);
	t_alloc(&t);
	X = t_data(&t, "X");
	Y = t_data(&t, "Y");
	{
		unsigned char all[16 * 8];

		srcvals(from, all);
		memcpy(X, all, (size_t)(N * dtype_bytes(from)));
	}
	t_ok(&t);
	for (i = 0; i < N; i++)
		check_conv(from, to, i, ref_decode(from, X + i * dtype_bytes(from)), Y + i * dtype_bytes(to),
			   t_fl(&t, "Y")[i]);
	t_free(&t);
}
END_TEST

/* integer and bool casts inside expressions, and int -> narrow floats rounding once */
START_TEST(casts_expr)
{
	static const char src[] =
		"kernel c(X: i32[8], A: f16[8], B: fp8_e4m3[8], C: i8[8], D: f32[8], E: bf16[8]) grid(1) threads(32) {\n"
		"	for i in parallel(8) {\n"
		"		let v = X[i];\n"
		"		let big = 1152921504606846976 + 4503599627370496 + i;\n"
		"		A[i] = f16(v * 1000);\n"
		"		B[i] = fp8_e4m3(v * 100);\n"
		"		C[i] = i8(v * 50);\n"
		"		D[i] = f32(v > 2) + f32(bool(v)) * 10.0 + f32(u8(v * 50) > 200) * 100.0;\n"
		"		E[i] = bf16(big);\n"
		"	}\n"
		"}\n";
	T t;
	int32_t *X;
	uint16_t *A, *E;
	uint8_t *B;
	int8_t *C;
	float *D;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	X = t_data(&t, "X");
	A = t_data(&t, "A");
	B = t_data(&t, "B");
	C = t_data(&t, "C");
	D = t_data(&t, "D");
	E = t_data(&t, "E");
	for (i = 0; i < 8; i++)
		X[i] = i - 2;
	t_ok(&t);
	for (i = 0; i < 8; i++) {
		int v = i - 2;

		ck_assert_int_eq(A[i], f16of((double)(v * 1000)));
		ck_assert_int_eq(B[i], ref_to_fp8(0, v * 100));
		ck_assert_int_eq(C[i], (int8_t)(v * 50)); /* integer conversions wrap */
		ck_assert(D[i] == (float)((v > 2) + 10 * (v != 0) + 100 * ((uint8_t)(v * 50) > 200)));
		/* 2^60 + 2^52 + i: a tie at i = 0 (to even), above it otherwise; rounding through a
		 * double would make every one a tie */
		ck_assert_msg(u2f((uint32_t)E[i] << 16) == (i == 0 ? 0x1p60f : 0x1p60f + 0x1p53f), "bf16 %d: %04x", i,
			      E[i]);
		ck_assert_int_eq(t_fl(&t, "A")[i], 0);
	}
	t_free(&t);
}
END_TEST

/* ---- flags ------------------------------------------------------------------------------------ */

START_TEST(flags)
{
	static const char src[] =
		"kernel u(X: f32[8], Y: f32[8, 6], Z: i32[8]) grid(1) threads(32) {\n"
		"	shared s: f32[8];\n"
		"	local x: f32[8];\n"
		"	copy(X, x);\n"
		"	let t = 1.0;\n"
		"	for i in parallel(1) {\n"
		"		t = 2.0;\n"
		"	}\n"
		"	for i in parallel(8) {\n"
		"		Y[i, 0] = s[i];\n"
		"		Y[i, 1] = exp(x[i]);\n"
		"		Y[i, 2] = x[i] > 0.0 ? 1.0 : exp(x[i]);\n"
		"		Y[i, 3] = max(x[i], -x[i]);\n"
		"		Y[i, 4] = t;\n"
		"		Y[i, 5] = f32(i32(x[i] * 1e10));\n"
		"		Z[i] = i32(x[i]) << 40;\n"
		"	}\n"
		"}\n";
	static const float xs[8] = {0, 1, -1, 2, -0.5f, 0.25f, 3, -3};
	T t;
	float *Y;
	unsigned char *fy, *fz;
	int i;

	t_compile(&t, src);
	t_alloc(&t);
	memcpy(t_data(&t, "X"), xs, sizeof xs);
	t_ok(&t);
	Y = t_data(&t, "Y");
	fy = t_fl(&t, "Y");
	fz = t_fl(&t, "Z");
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(fy[i * 6 + 0], INTERP_UNDEF);
		ck_assert_int_eq(fy[i * 6 + 1], INTERP_INEXACT);
		ck_assert(fabsf(Y[i * 6 + 1] - expf(xs[i])) <= 1e-6f * expf(xs[i]));
		ck_assert_int_eq(fy[i * 6 + 2], xs[i] > 0 ? 0 : INTERP_INEXACT);
		ck_assert_int_eq(fy[i * 6 + 3], xs[i] == 0 ? INTERP_INEXACT : 0);
		ck_assert(Y[i * 6 + 3] == fabsf(xs[i]) && !signbit(Y[i * 6 + 3]));
		ck_assert_int_eq(fy[i * 6 + 4], INTERP_UNDEF);
		ck_assert_int_eq(fy[i * 6 + 5], xs[i] == 0 ? 0 : INTERP_UNDEF);
		ck_assert_int_eq(fz[i], INTERP_UNDEF);
	}
	t_free(&t);
}
END_TEST

START_TEST(no_blocks)
{
	T t;

	t_compile(&t, COPY2D);
	t_set(&t, "M", 0);
	t_set(&t, "N", 70);
	t_alloc(&t);
	t_ok(&t);
	ck_assert_int_eq(t.st.blocks, 0);
	{
		int64_t g[3];

		ck_assert_int_eq(interp_grid(t.k, &t.args, g, &t.e), 0);
		ck_assert(g[0] == 2 && g[1] == 0 && g[2] == 1);
	}
	t_free(&t);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------------ */

#define K1 "kernel k(Y: f32[4]) grid(1) threads(32) {\n\tlocal x: f32[4];\n"
#define KEND "\tcopy(x, Y);\n}\n"

static const struct {
	const char *src, *args, *msg;
	int64_t maxwork;
} errs[] = {
	{K1 "\tfor i, j in parallel(4, 4) {\n\t\tx[i] = f32(j);\n\t}\n" KEND, "",
	 "data race in parallel nest at t.tile:3:2: iterations (0, 0) and (0, 1) both write x[0]", 0},
	{K1 "\tfill(x, 1.0);\n\tfor i in parallel(4) {\n\t\tx[i] = x[(i + 1) % 4] + 1.0;\n\t}\n" KEND, "",
	 "data race in parallel nest at t.tile:4:2: iteration (1) writes x[1] and iteration (0) reads it", 0},
	{K1 "\tclear(x);\n\tlet t = 0.0;\n\tfor i in parallel(4) {\n\t\tt = t + x[i];\n\t}\n" KEND, "",
	 "data race in parallel nest at t.tile:5:2: iteration (0) writes let variable 't' and iteration (1) reads it",
	 0},
	{"kernel k(Y: f32[4]) grid(1) threads(32) {\n\tfor i, j in parallel(4, 2) {\n\t\tY[i] = f32(j);\n\t}\n}\n",
	 "", "iterations (0, 0) and (0, 1) both write Y[0]", 0},
	{"kernel k(X: f32[64], Y: f32[8]) grid(2) threads(32) {\n\tlocal t: f32[8];\n"
	 "\tcopy(X[bx * 8], t);\n\tcopy(t, Y[0]);\n}\n",
	 "", "t.tile:4:2: data race between blocks (0,0,0) and (1,0,0): Y[0] is written by the first", 0},
	{"kernel k(X: f32[16]) grid(2) threads(32) {\n\tlocal t: f32[8];\n"
	 "\tcopy(X[8 - bx * 8], t);\n\tcopy(t, X[bx * 8]);\n}\n",
	 "", "t.tile:3:2: data race between blocks (0,0,0) and (1,0,0): X[0]", 0},
	{"kernel k(X: f32[2, 16]) grid(2, 2) threads(32) {\n\tlocal t: f32[4];\n"
	 "\tcopy(X[by, bx * 4], t);\n\tcopy(t, X[1 - by, bx * 4]);\n}\n",
	 "", "data race between blocks (0,0,0) and (0,1,0): X[1, 0]", 0},
	{"kernel k(A: f32[M, K]) grid(1) threads(32) {\n\tassume(K % 64 == 0);\n}\n", "M=4 K=100",
	 "assume(K % 64 == 0) does not hold for M=4, K=100", 0},
	{"kernel k(A: f32[M], s: f32) grid(1) threads(32) {\n\tassume(s > 1.0 && M > 2);\n}\n", "M=4 s=0.5",
	 "assume(s > 1.0 && M > 2) does not hold for M=4, s=0.5", 0},
	{K1 "\tfor i in parallel(4) {\n\t\tx[i + 1] = 1.0;\n\t}\n" KEND, "",
	 "t.tile:4:3: index 4 out of range for dimension 0 of 'x' (size 4)", 0},
	{K1 "\tfor i in parallel(4) {\n\t\tx[i] = x[3 - 2 * i];\n\t}\n" KEND, "",
	 "index -1 out of range for dimension 0 of 'x' (size 4)", 0},
	{K1 "\tlocal z: i32[4];\n\tfor i in parallel(4) {\n\t\tz[i] = i32(10 / (i - 2));\n\t}\n" KEND, "",
	 "division by zero: 10 / (i - 2)", 0},
	{K1 "\tlocal z: i32[4];\n\tfor i in parallel(4) {\n\t\tz[i] = i32(i % (i - 1));\n\t}\n" KEND, "",
	 "division by zero: i % (i - 1)", 0},
	{K1 "\tshared s: f32[4];\n\tfor i in parallel(4) {\n\t\tif (s[i] > 0.0) {\n\t\t\tx[i] = 1.0;\n\t\t}\n\t}\n" KEND,
	 "", "the condition of 'if' is undefined: s[i] > 0.0", 0},
	{K1 "\tfor k in range(100000) {\n\t\tfill(x, 1.0);\n\t}\n" KEND, "",
	 "exceeds the interpreter's limit of 1000 operations", 1000},
	{"kernel k(X: f32[12]) grid(3) threads(32) {\n\tshared s: f32[8];\n"
	 "\tcopy(X[bx * 4 : bx * 4 + 4], s[bx * 4 : bx * 4 + 4]);\n}\n",
	 "", "copy: region [8, 12) of 's' is out of range in dimension 0 (size 8)", 0},
	{K1 "\tshared s: i32[4];\n\tfor i in parallel(4) {\n\t\tx[s[i]] = 1.0;\n\t}\n" KEND, "",
	 "the index 's[i]' is undefined", 0},
	{K1 "\tshared s: i32[4];\n\tfor k in range(s[0]) {\n\t\tfill(x, 1.0);\n\t}\n" KEND, "",
	 "the bounds of the loop over 'k' are undefined", 0},
	{"kernel k(A: f32[M]) grid(1) threads(32) {\n}\n", "M=-1", "size M = -1 is negative", 0},
	{"kernel k(A: f32[4], n: i32) grid(n) threads(32) {\n}\n", "n=1.5", "scalar n = 1.5 is not an integer", 0},
	{"kernel k(A: f32[M], n: i32) grid(cdiv(M, n)) threads(32) {\n}\n", "M=4 n=0", "division by zero: cdiv(M, int(n))",
	 0},
	{K1 "\tlocal y: f32[8];\n\tclear(y);\n\tcopy(y[0:4], y[2:6]);\n" KEND, "",
	 "copy: the source and destination regions of 'y' overlap", 0},
};

START_TEST(errors)
{
	T t;
	char args[128], *tok, *save = NULL;
	InterpStatus st;

	t_compile(&t, errs[_i].src);
	snprintf(args, sizeof args, "%s", errs[_i].args);
	for (tok = strtok_r(args, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		ck_assert_ptr_nonnull(eq);
		*eq = 0;
		t_set(&t, tok, strtod(eq + 1, NULL));
	}
	t_alloc(&t);
	t.args.max_work = errs[_i].maxwork;
	st = t_run(&t);
	ck_assert_msg(st == INTERP_ERROR, "%d: status %d (%s)", _i, st, t.e.msg);
	ck_assert_msg(strstr(t.e.msg, errs[_i].msg) != NULL, "%d: got '%s', want '%s'", _i, t.e.msg, errs[_i].msg);
	/* one iteration at a time: the same error */
	{
		char msg[sizeof t.e.msg];

		snprintf(msg, sizeof msg, "%s", t.e.msg);
		t.args.no_batch = 1;
		ck_assert_int_eq(t_run(&t), INTERP_ERROR);
		ck_assert_str_eq(t.e.msg, msg);
	}
	t_free(&t);
}
END_TEST

/* ---- the samples at ragged sizes ------------------------------------------------------------ */

static glob_t samples;

static void
filldy(T *t, int p, int seed)
{
	const IrBuffer *b = &t->k->bufs[t->k->params[p].buf];
	int64_t i, n = t->ten[p].n;

	for (i = 0; i < n; i++) {
		double v = dy((uint64_t)i, seed);

		switch (b->dtype) {
		case DT_F16: ((uint16_t *)t->ten[p].data)[i] = f16bits(v); break;
		case DT_BF16: ((uint16_t *)t->ten[p].data)[i] = (uint16_t)(f2u((float)v) >> 16); break;
		case DT_F32: ((float *)t->ten[p].data)[i] = (float)v; break;
		default: ck_abort_msg("filldy %s", dtype_name(b->dtype));
		}
	}
}

static double
getv(T *t, const char *name, int64_t i)
{
	int p = t_param(t, name);
	DType ty = t->k->bufs[t->k->params[p].buf].dtype;
	const void *d = t->ten[p].data;

	switch (ty) {
	case DT_F16: return ref_f16(((const uint16_t *)d)[i]);
	case DT_BF16: return u2f((uint32_t)((const uint16_t *)d)[i] << 16);
	case DT_F32: return ((const float *)d)[i];
	default: ck_abort_msg("getv"); return 0;
	}
}

START_TEST(sample)
{
	const char *path = samples.gl_pathv[_i];
	char *src = test_readfile(path, NULL);
	const char *name;
	int64_t M = 37, N = 70, K = 50, i, j, k;
	T t;
	int p, seed = 1;

	ck_assert_ptr_nonnull(src);
	t_compile_file(&t, src, path);
	name = t.k->name;
	if (!strcmp(name, "gemm_bf16"))
		K = 128; /* assume(K % BK == 0) */
	/* gemm_strided's leading dimensions: padded, odd */
	for (p = 0; p < t.k->nsize; p++)
		t.sizes[p] = !strcmp(t.k->sizes[p]->name, "M") ? M : !strcmp(t.k->sizes[p]->name, "N") ? N
			     : !strcmp(t.k->sizes[p]->name, "lda") ? K + 3 : !strcmp(t.k->sizes[p]->name, "ldb") ? N + 5
			     : !strcmp(t.k->sizes[p]->name, "ldc") ? N + 1 : K;
	for (p = 0; p < t.k->nparam; p++)
		if (!t.k->params[p].is_tensor)
			t.scal[p] = 0.75;
	t_alloc(&t);
	for (p = 0; p < t.k->nparam; p++)
		if (t.k->params[p].is_tensor)
			filldy(&t, p, seed++);
	t_ok(&t);
	if (!strcmp(name, "copy2d") || !strcmp(name, "convert2d")) {
		ck_assert(!memcmp(t_data(&t, "A"), t_data(&t, "B"), (size_t)(M * N * 2)));
		for (i = 0; i < M * N; i++)
			ck_assert_int_eq(t_fl(&t, "B")[i], 0);
	} else if (!strcmp(name, "elementwise")) {
		for (i = 0; i < M * N; i++) {
			float v = (float)getv(&t, "A", i) * 0.75f + (float)getv(&t, "B", i);

			ck_assert_int_eq(((uint16_t *)t_data(&t, "C"))[i], f16of(fmaxf(v, 0.0f)));
			/* A * alpha + B may fuse into an FMA on a GPU: inexact, rounded into f16 */
			ck_assert_int_eq(t_fl(&t, "C")[i], INTERP_INEXACT | INTERP_VIA16);
		}
	} else if (!strncmp(name, "gemm", 4)) {
		int bt = !strcmp(name, "gemm_bf16"), st = !strcmp(name, "gemm_strided");
		int64_t lda = st ? K + 3 : K, ldb = st ? N + 5 : N, ldc = st ? N + 1 : N;

		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				double s = 0;

				for (k = 0; k < K; k++)
					s += getv(&t, "A", i * lda + k) * getv(&t, "B", bt ? j * K + k : k * ldb + j);
				ck_assert_msg(getv(&t, "C", i * ldc + j) == (bt ? (double)(float)s : ref_f16(f16of(s))),
					      "%s: C[%lld, %lld] = %g, want %g", name, (long long)i, (long long)j,
					      getv(&t, "C", i * ldc + j), s);
				/* an f16 C was rounded into f16: its uncertainty is f16's */
				ck_assert_int_eq(t_fl(&t, "C")[i * ldc + j], bt ? INTERP_INEXACT : INTERP_INEXACT | INTERP_VIA16);
			}
	} else if (!strcmp(name, "softmax")) {
		int64_t W = 1024;

		for (i = 0; i < M; i++) {
			double mx = -INFINITY, s = 0;

			for (j = 0; j < W; j++)
				mx = fmax(mx, getv(&t, "X", i * W + j));
			for (j = 0; j < W; j++)
				s += exp(getv(&t, "X", i * W + j) - mx);
			for (j = 0; j < W; j++) {
				double want = exp(getv(&t, "X", i * W + j) - mx) / s;

				EXPECT(fabs(getv(&t, "Y", i * W + j) - want) <= 1e-5 * want, "Y[%lld, %lld]", (long long)i,
				       (long long)j);
				EXPECT(t_fl(&t, "Y")[i * W + j] == INTERP_INEXACT, "flags of Y[%lld, %lld]", (long long)i,
				       (long long)j);
			}
		}
	} else if (!strcmp(name, "transpose")) {
		for (i = 0; i < M; i++)
			for (j = 0; j < N; j++) {
				ck_assert(getv(&t, "B", j * M + i) == getv(&t, "A", i * N + j));
				ck_assert_int_eq(t_fl(&t, "B")[j * M + i], 0);
			}
	}
	t_free(&t);
	free(src);
}
END_TEST

/* ---- speed: a gemm of 256 x 250 x 300 and a softmax of 4096 rows stay well under a second ---- */

START_TEST(speed)
{
	char *src = test_readfile("samples/gemm.tile", NULL);
	T t;
	int p;

	ck_assert_ptr_nonnull(src);
	t_compile(&t, src);
	for (p = 0; p < t.k->nsize; p++)
		t.sizes[p] = 250 + 25 * p;
	t_alloc(&t);
	for (p = 0; p < t.k->nparam; p++)
		filldy(&t, p, p + 1);
	t_ok(&t);
	ck_assert_int_gt(t.st.statements, 0);
	t_free(&t);
	free(src);
	src = test_readfile("samples/softmax.tile", NULL);
	t_compile(&t, src);
	t_set(&t, "M", 4096);
	t_alloc(&t);
	filldy(&t, 0, 1);
	t_ok(&t);
	t_free(&t);
	free(src);
}
END_TEST

Suite *
suite_interp(void)
{
	Suite *s = suite_create("interp");
	TCase *tn = tcase_create("numeric");
	TCase *tp = tcase_create("programs");
	TCase *te = tcase_create("errors");

	tcase_set_timeout(tn, 120);
	tcase_set_timeout(tp, 120);
	tcase_add_test(tn, num_f16_all);
	tcase_add_test(tn, num_f16_round);
	tcase_add_test(tn, num_bf16);
	tcase_add_test(tn, num_fp8);
	tcase_add_test(tn, num_loadstore);
	tcase_add_test(tp, copy_ragged);
	tcase_add_test(tp, copy_zero_fill);
	tcase_add_test(tp, fill_clear);
	tcase_add_loop_test(tp, gemm_variants, 0, 8);
	tcase_add_test(tp, gemm_int);
	tcase_add_loop_test(tp, reduce_ops, 0, 8);
	tcase_add_test(tp, reduce_int);
	tcase_add_test(tp, nest_exprs);
	tcase_add_test(tp, fma_rule);
	tcase_add_test(tp, nest_batches);
	tcase_add_test(tp, nest_tracked);
	tcase_add_test(tp, atomics);
	tcase_add_test(tp, strided_head);
	tcase_add_test(tp, strided_transposed);
	tcase_add_test(tp, strided_errors);
	tcase_add_test(tp, floor_divmod);
	tcase_add_test(tp, f16_at_stores);
	tcase_add_test(tp, loops_pipeline);
	tcase_add_test(tp, helper_inline);
	tcase_add_loop_test(tp, conversions, 0, (int)(2 * countof(alltypes) * countof(alltypes)));
	tcase_add_test(tp, casts_expr);
	tcase_add_test(tp, flags);
	tcase_add_test(tp, no_blocks);
	if (glob("samples/*.tile", 0, NULL, &samples) != 0)
		samples.gl_pathc = 0;
	if (samples.gl_pathc)
		tcase_add_loop_test(tp, sample, 0, (int)samples.gl_pathc);
	tcase_add_test(tp, speed);
	tcase_add_loop_test(te, errors, 0, (int)countof(errs));
	suite_add_tcase(s, tn);
	suite_add_tcase(s, tp);
	suite_add_tcase(s, te);
	return s;
}
