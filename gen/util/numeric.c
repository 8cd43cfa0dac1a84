/*
 * numeric.c: element conversions (numeric.h) of the interpreter, the run harness and the emitter,
 * bit-exact. The narrow float formats (f16, bf16, fp8_e4m3, fp8_e5m2) are
 * rounded by one generic routine from a double (so f64 -> f16 rounds once,
 * never through f32): round to nearest even; f16 and bf16 overflow to +-inf,
 * fp8 saturates to the largest finite value (cvt.rn.satfinite); NaN stays
 * NaN. Decoding is exact.
 */
#include <math.h>
#include <string.h>

#include "numeric.h"

typedef struct Fmt {
	int ebits, mbits, bias;
	int sat;           /* overflow (and inf) saturates to the largest finite value */
	int ieee;          /* the top exponent holds inf and NaN (f16, bf16, e5m2) */
	double maxv;       /* largest finite value */
	unsigned maxbits;  /* its encoding (without sign) */
	unsigned nanbits;  /* the NaN produced from a NaN (without sign) */
} Fmt;

static const Fmt F16 = {5, 10, 15, 0, 1, 65504.0, 0x7bff, 0x7e00};
static const Fmt BF16 = {8, 7, 127, 0, 1, 0x1.fep127, 0x7f7f, 0x7fc0};
static const Fmt E4M3 = {4, 3, 7, 1, 0, 448.0, 0x7e, 0x7f};
static const Fmt E5M2 = {5, 2, 15, 1, 1, 57344.0, 0x7b, 0x7f};

static const Fmt *
fmt_of(DType t)
{
	switch (t) {
	case DT_F16: return &F16;
	case DT_BF16: return &BF16;
	case DT_FP8E4M3: return &E4M3;
	case DT_FP8E5M2: return &E5M2;
	default: return NULL;
	}
}

/* v rounded to nearest even in format F, encoded */
static unsigned
encode(const Fmt *F, double v)
{
	unsigned s = signbit(v) ? 1u << (F->ebits + F->mbits) : 0;
	unsigned inf = ((1u << F->ebits) - 1) << F->mbits;
	int emin = 1 - F->bias, ex, E;
	double a = fabs(v), q, n, r, d, one = ldexp(1.0, F->mbits);

	if (isnan(v))
		return s | F->nanbits;
	if (isinf(a))
		return s | (F->sat ? F->maxbits : inf);
	if (a == 0)
		return s;
	frexp(a, &ex);
	E = ex - 1; /* a in [2^E, 2^(E+1)) */
	if (E < emin)
		E = emin;
	q = ldexp(1.0, E - F->mbits); /* the spacing of the format at a */
	n = a / q;                    /* exact: a power-of-two scale */
	r = floor(n);
	d = n - r;
	if (d > 0.5 || (d == 0.5 && fmod(r, 2.0) != 0))
		r += 1;
	if (r * q > F->maxv)
		return s | (F->sat ? F->maxbits : inf);
	if (r >= 2 * one) { /* rounded up into the next binade */
		r /= 2;
		E++;
	}
	if (r < one) /* subnormal (E == emin) */
		return s | (unsigned)r;
	return s | (unsigned)(E + F->bias) << F->mbits | (unsigned)(r - one);
}

static double
decode(const Fmt *F, unsigned b)
{
	unsigned emask = (1u << F->ebits) - 1, mmask = (1u << F->mbits) - 1;
	unsigned e = b >> F->mbits & emask, m = b & mmask;
	int neg = b >> (F->ebits + F->mbits) & 1;
	double v;

	if (F->ieee && e == emask)
		v = m ? NAN : INFINITY;
	else if (!F->ieee && e == emask && m == mmask)
		v = NAN;
	else if (e == 0)
		v = ldexp((double)m, 1 - F->bias - F->mbits);
	else
		v = ldexp((double)(m | (mmask + 1)), (int)e - F->bias - F->mbits);
	return neg ? -v : v;
}

static uint32_t
fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof u);
	return u;
}

static float
bitsf(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* ---- f16 / bf16 / fp8 <-> f32 ----------------------------------------------------- */

uint16_t
num_f32_to_f16(float f)
{
	uint32_t u = fbits(f);

	if (isnan(f)) { /* keep the sign and the top of the payload, never an inf */
		uint16_t m = (uint16_t)(u >> 13 & 0x3ff);

		return (uint16_t)(u >> 16 & 0x8000) | 0x7c00 | (m ? m : 0x200);
	}
	return (uint16_t)encode(&F16, f);
}

float
num_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000) << 16, e = h >> 10 & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)
		return bitsf(s | 0x7f800000 | m << 13);
	if (e == 0) {
		float v = (float)m * 0x1p-24f; /* exact */

		return s ? -v : v;
	}
	return bitsf(s | (e + 112) << 23 | m << 13);
}

uint16_t
num_f32_to_bf16(float f)
{
	uint32_t u = fbits(f);

	if (isnan(f)) {
		uint16_t h = (uint16_t)(u >> 16);

		return (h & 0x7f) ? h : h | 0x40;
	}
	return (uint16_t)encode(&BF16, f);
}

float
num_bf16_to_f32(uint16_t h)
{
	return bitsf((uint32_t)h << 16);
}

uint8_t
num_f32_to_fp8(DType t, float f)
{
	return (uint8_t)encode(t == DT_FP8E5M2 ? &E5M2 : &E4M3, f);
}

float
num_fp8_to_f32(DType t, uint8_t v)
{
	return (float)decode(t == DT_FP8E5M2 ? &E5M2 : &E4M3, v);
}

/* ---- loads and stores -------------------------------------------------------------- */

double
num_load(DType t, const void *p)
{
	switch (t) {
	case DT_BOOL: return *(const uint8_t *)p != 0;
	case DT_I8: return *(const int8_t *)p;
	case DT_U8: return *(const uint8_t *)p;
	case DT_I32: return *(const int32_t *)p;
	case DT_INT: return (double)*(const int64_t *)p;
	case DT_F16: {
		uint16_t h;

		memcpy(&h, p, 2);
		return num_f16_to_f32(h);
	}
	case DT_BF16: {
		uint16_t h;

		memcpy(&h, p, 2);
		return num_bf16_to_f32(h);
	}
	case DT_F32: {
		float f;

		memcpy(&f, p, 4);
		return f;
	}
	case DT_F64: {
		double d;

		memcpy(&d, p, 8);
		return d;
	}
	case DT_FP8E4M3:
	case DT_FP8E5M2: return num_fp8_to_f32(t, *(const uint8_t *)p);
	default: return 0;
	}
}

uint32_t
num_encode(DType t, double v)
{
	const Fmt *F = fmt_of(t);

	if (!F)
		return 0;
	if (isnan(v) && t == DT_F16)
		return num_f32_to_f16((float)v);
	if (isnan(v) && t == DT_BF16)
		return num_f32_to_bf16((float)v);
	return encode(F, v);
}

double
num_decode(DType t, uint32_t bits)
{
	if (t == DT_F16)
		return num_f16_to_f32((uint16_t)bits);
	if (t == DT_BF16)
		return num_bf16_to_f32((uint16_t)bits);
	return fmt_of(t) ? decode(fmt_of(t), bits) : 0;
}

double
num_round(DType t, double v)
{
	switch (t) {
	case DT_F32: return (float)v;
	case DT_F16:
	case DT_BF16:
	case DT_FP8E4M3:
	case DT_FP8E5M2: return num_decode(t, num_encode(t, v));
	default: return v;
	}
}

void
num_store(DType t, void *p, double v)
{
	switch (t) {
	case DT_BOOL: *(uint8_t *)p = v != 0; break;
	case DT_I8: *(int8_t *)p = (int8_t)v; break;
	case DT_U8: *(uint8_t *)p = (uint8_t)v; break;
	case DT_I32: *(int32_t *)p = (int32_t)v; break;
	case DT_INT: *(int64_t *)p = (int64_t)v; break;
	case DT_F16:
	case DT_BF16: {
		uint16_t h = (uint16_t)num_encode(t, v);

		memcpy(p, &h, 2);
		break;
	}
	case DT_F32: {
		float f = (float)v;

		memcpy(p, &f, 4);
		break;
	}
	case DT_F64: memcpy(p, &v, 8); break;
	case DT_FP8E4M3:
	case DT_FP8E5M2: *(uint8_t *)p = (uint8_t)num_encode(t, v); break;
	default: break;
	}
}
