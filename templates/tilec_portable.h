// tilec_portable.h: device helpers in plain C++ that every target shares: the CUDA, HIP and
// CPU headers include it after defining TL_DEVICE, __float_as_uint and __uint_as_float. The
// embedded copies of those headers have it inlined (the Makefile), so NVRTC, hipRTC and the
// CPU build get one self-contained text; plain nvcc finds it next to tilec_cuda.h.
#pragma once

// ---- integer floor division and modulo (the tile language's / and % on integers) ----
TL_DEVICE long long tl_floordiv(long long a, long long b)
{
	long long q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TL_DEVICE long long tl_floormod(long long a, long long b)
{
	long long r = a % b;
	return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// ---- fp8 (OCP e4m3 "fn": bias 7, no inf, NaN 0x7f; e5m2: bias 15, inf 0x7c, NaN 0x7e) ------
// f32 -> fp8 rounds to nearest even and saturates to the largest finite value (448 =
// 0x7e, 57344 = 0x7b), as cvt.rn.satfinite does; NaN stays NaN. Integer code only, so
// that every target (sm_80 has no fp8 cvt) and the CPU build share it.
TL_DEVICE unsigned char tl_f32_to_fp8(float f, int mbits, int bias, unsigned maxbits, int maxcode, int nan)
{
	tl_u32 u = __float_as_uint(f), s = (u >> 24) & 0x80, r, rem, half;
	int e, shift;

	u &= 0x7fffffffu;
	if (u > 0x7f800000u)
		return (unsigned char)(s | nan);
	if (u >= maxbits)
		return (unsigned char)(s | maxcode);
	e = (int)(u >> 23) - 127;
	if (e < 1 - bias) { // an fp8 subnormal: the significand shifted to the quantum 2^(1-bias-mbits)
		tl_u32 sig = (u & 0x7fffffu) | (e > -127 ? 0x800000u : 0);
		shift = 23 + (1 - bias - mbits) - e;
		if (shift > 25)
			return (unsigned char)s;
		r = sig >> shift;
		rem = sig & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		r += rem > half || (rem == half && (r & 1));
		return (unsigned char)(s | r);
	}
	shift = 23 - mbits;
	r = u >> shift;
	rem = u & ((1u << shift) - 1);
	half = 1u << (shift - 1);
	r += rem > half || (rem == half && (r & 1));
	r -= (tl_u32)(127 - bias) << mbits;
	return (unsigned char)(s | (r > (tl_u32)maxcode ? (tl_u32)maxcode : r));
}

TL_DEVICE float tl_fp8_to_f32(unsigned char v, int mbits, int bias)
{
	tl_u32 s = (tl_u32)(v & 0x80) << 24, e = (v & 0x7f) >> mbits, m = v & ((1u << mbits) - 1);
	float a;

	if (e == 0) // subnormal: m * 2^(1 - bias - mbits), exact
		a = (float)m * __uint_as_float((tl_u32)(127 + 1 - bias - mbits) << 23);
	else
		a = __uint_as_float(((e - bias + 127) << 23) | (m << (23 - mbits)));
	return __uint_as_float(__float_as_uint(a) | s);
}

TL_DEVICE float tl_e4m3_to_f32(unsigned char v)
{
	return (v & 0x7f) == 0x7f ? __uint_as_float(0x7fc00000u) : tl_fp8_to_f32(v, 3, 7);
}

TL_DEVICE float tl_e5m2_to_f32(unsigned char v)
{
	if ((v & 0x7c) == 0x7c)
		return __uint_as_float((v & 3) ? 0x7fc00000u : ((tl_u32)(v & 0x80) << 24) | 0x7f800000u);
	return tl_fp8_to_f32(v, 2, 15);
}

TL_DEVICE unsigned char tl_f32_to_e4m3(float f)
{
	return tl_f32_to_fp8(f, 3, 7, 0x43e00000u /* 448 */, 0x7e, 0x7f);
}

TL_DEVICE unsigned char tl_f32_to_e5m2(float f)
{
	return tl_f32_to_fp8(f, 2, 15, 0x47600000u /* 57344 */, 0x7b, 0x7e);
}

// a double rounded to float "to odd" (truncated, the last bit set when inexact): the float ->
// f16 / bf16 / fp8 conversions after it then round as if from the double directly, once
// (float keeps at least 2 more bits than each of them)
TL_DEVICE float tl_f64_to_f32_odd(double d)
{
	float f = (float)d;
	tl_u32 u;

	if ((double)f == d || f != f)
		return f;
	u = __float_as_uint(f);
	if (f > 0.0f ? (double)f > d : (double)f < d)
		u -= 1; // the magnitude down: truncated toward zero
	return __uint_as_float(u | 1);
}
