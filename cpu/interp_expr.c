/*
 * interp_expr.c: values of the reference interpreter: conversions between
 * element types, the evaluation of IR expressions (docs/semantics.md, "What a
 * program computes") with their UNDEF / INEXACT flags, and element access
 * (global tensors in their storage format, shared and local buffers as
 * values; bounds, zero reads past the edge, race shadows).
 */
#include <math.h>
#include <string.h>

#include "interp_int.h"

static int
bits(DType t)
{
	return t == DT_I8 || t == DT_U8 ? 8 : t == DT_I32 ? 32 : 64;
}

Val
iexp_int(DType t, int64_t v, int ovf, unsigned fl)
{
	Val r;
	int64_t w;

	switch (t) {
	case DT_I8: w = (int8_t)(uint8_t)(uint64_t)v; break;
	case DT_U8: w = (uint8_t)(uint64_t)v; break;
	case DT_I32: w = (int32_t)(uint32_t)(uint64_t)v; break;
	case DT_BOOL: w = v != 0; break;
	default: w = v; break;
	}
	r.c.i = w;
	r.fl = fl | (ovf || w != v ? INTERP_UNDEF : 0);
	return r;
}

static Val
fval(double f, unsigned fl)
{
	Val r;

	r.c.f = f;
	r.fl = fl;
	return r;
}

/* an int64 to a narrow float type, rounded once: above 2^53 the bits below the
 * 53rd collapse into a sticky bit, which keeps the rounding to <= 24 bits exact */
static double
int_to_narrow(DType t, int64_t i)
{
	uint64_t m = i < 0 ? -(uint64_t)i : (uint64_t)i;
	int sh = 0;
	double d;

	if (m > (1ull << 53)) {
		sh = 64 - __builtin_clzll(m) - 53;
		m = (m >> sh) | ((m & ((1ull << sh) - 1)) != 0);
	}
	d = ldexp((double)m, sh);
	return num_round(t, i < 0 ? -d : d);
}

/* the flags of a value of flags fl rounded into type t: an inexact one keeps t's coarseness */
unsigned
iexp_via(DType t, unsigned fl)
{
	if (!(fl & INTERP_INEXACT))
		return fl;
	if (t == DT_F16)
		return fl | INTERP_VIA16;
	if (t == DT_BF16 || t == DT_FP8E4M3 || t == DT_FP8E5M2)
		return fl | INTERP_VIA8;
	return fl;
}

Val
iexp_conv(Val v, DType from, DType to)
{
	Val r;

	if (from == to && (to == DT_F32 || to == DT_F64 || !it_float(to)))
		return v; /* values of these types are always rounded to them */
	r.fl = v.fl & ~(unsigned)INTERP_PROD; /* a conversion rounds: nothing fuses across it */
	if (it_float(from)) {
		double f = v.c.f;

		if (to == DT_BOOL) {
			r.c.i = f != 0;
		} else if (it_int(to)) {
			double t = trunc(f);
			double lo = to == DT_I8 ? -128 : to == DT_U8 ? 0 : to == DT_I32 ? -2147483648.0
											: -0x1p63;
			double hi = to == DT_I8 ? 127 : to == DT_U8 ? 255 : to == DT_I32 ? 2147483647.0
										      : 0x1p63;

			/* NaN fails both; DT_INT: hi itself is out of range */
			if (!(t >= lo && (to == DT_INT ? t < hi : t <= hi))) {
				r.c.i = 0;
				r.fl |= INTERP_UNDEF;
			} else {
				r.c.i = (int64_t)t;
			}
		} else if (to == DT_F64) {
			r.c.f = f;
		} else if (to == DT_F32) {
			r.c.f = (float)f;
		} else {
			r.c.f = num_round(to, f);
			r.fl = iexp_via(to, r.fl);
		}
		return r;
	}
	/* from an integer or a bool */
	if (to == DT_BOOL) {
		r.c.i = v.c.i != 0;
	} else if (it_int(to)) {
		r = iexp_int(to, v.c.i, 0, v.fl);
		r.fl = v.fl; /* a conversion wraps: two's complement, modulo 2^bits */
	} else if (to == DT_F64) {
		r.c.f = (double)v.c.i;
	} else if (to == DT_F32) {
		r.c.f = (float)v.c.i;
	} else {
		r.c.f = int_to_narrow(to, v.c.i);
	}
	return r;
}

double
iexp_fmax(double a, double b, unsigned *fl)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	if (a == b && a == 0 && signbit(a) != signbit(b)) {
		*fl |= INTERP_INEXACT;
		return 0.0;
	}
	return a > b ? a : b;
}

double
iexp_fmin(double a, double b, unsigned *fl)
{
	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	if (a == b && a == 0 && signbit(a) != signbit(b)) {
		*fl |= INTERP_INEXACT;
		return -0.0;
	}
	return a < b ? a : b;
}

/* ---- element access ---------------------------------------------------------------- */

Val
iexp_gload(const BufRt *B, int64_t lin)
{
	const unsigned char *p = B->data + lin * B->esz;
	Val r;

	r.fl = B->cell ? B->cell[lin] & INTERP_FLAGS : 0;
	switch (B->t) {
	case DT_BOOL: r.c.i = *p != 0; break;
	case DT_I8: r.c.i = *(const int8_t *)p; break;
	case DT_U8: r.c.i = *p; break;
	case DT_I32: {
		int32_t x;

		memcpy(&x, p, 4);
		r.c.i = x;
		break;
	}
	case DT_INT: memcpy(&r.c.i, p, 8); break;
	default: r.c.f = num_load(B->t, p); break;
	}
	return r;
}

void
iexp_gstore(Run *R, BufRt *B, int64_t lin, Val v)
{
	unsigned char *p = B->data + lin * B->esz;

	if (!B->cell) {
		B->cell = arena_alloc(&R->a, sizeof *B->cell * (size_t)B->n);
		if (!B->cell) {
			irun_fail(R, INTERP_NOMEM, B->b->loc, "out of memory");
			return;
		}
	}
	switch (B->t) {
	case DT_BOOL: *p = v.c.i != 0; break;
	case DT_I8: *(int8_t *)p = (int8_t)v.c.i; break;
	case DT_U8: *p = (uint8_t)v.c.i; break;
	case DT_I32: {
		int32_t x = (int32_t)v.c.i;

		memcpy(p, &x, 4);
		break;
	}
	case DT_INT: memcpy(p, &v.c.i, 8); break;
	default: num_store(B->t, p, v.c.f); break;
	}
	B->cell[lin] = (uint32_t)(R->blkid + 1) << 4 | (iexp_via(B->t, v.fl) & INTERP_FLAGS);
}

int
iexp_atomic(Run *R, BufRt *B, int64_t lin, Val v, AtomicOp op, Loc loc)
{
	Val old, r;

	if (B->scope == MEM_GLOBAL) {
		if (B->cell && irun_block_race(R, B, lin, loc))
			return -1;
		old = iexp_gload(B, lin);
	} else {
		old.c = B->v[lin];
		old.fl = B->fl[lin];
	}
	r.fl = old.fl | v.fl;
	if (it_float(B->t)) {
		double a = old.c.f, b = v.c.f;

		r.c.f = op == AT_ADD ? a + b : op == AT_MAX ? iexp_fmax(a, b, &r.fl) : iexp_fmin(a, b, &r.fl);
		/* float atomic adds are applied in some order: the sum's rounding depends on it */
		if (op == AT_ADD)
			r.fl |= INTERP_INEXACT;
		r = iexp_conv(r, DT_F64, B->t);
	} else {
		int64_t a = old.c.i, b = v.c.i;

		/* the hardware's integer atomic add wraps */
		r.c.i = op == AT_ADD ? (int64_t)(int32_t)(uint32_t)((uint64_t)a + (uint64_t)b)
			: op == AT_MAX ? (a > b ? a : b) : (a < b ? a : b);
	}
	if (B->scope == MEM_GLOBAL) {
		iexp_gstore(R, B, lin, r);
		if (R->bad)
			return -1;
		B->cell[lin] &= INTERP_FLAGS;
	} else {
		B->v[lin] = r.c;
		B->fl[lin] = (unsigned char)r.fl;
	}
	return 0;
}

int
iexp_index(Run *R, const IrExpr *x, int64_t *out, unsigned *fl, const char *what)
{
	Val v = iexp_eval(R, x);

	if (R->bad)
		return -1;
	if (v.fl & INTERP_UNDEF) {
		Buf b;

		buf_init(&b);
		ir_dump_expr(&b, R->k, x);
		irun_fail(R, INTERP_ERROR, x->loc, "%s '%s' is undefined", what, buf_str(&b));
		buf_free(&b);
		return -1;
	}
	*out = v.c.i;
	*fl |= v.fl;
	return 0;
}

/* the linear index of buf[idx...]: -1 after an error, 1 when a global element is
 * outside its tensor */
int
iexp_elemindex(Run *R, const BufRt *B, int n, IrExpr *const *idx, Loc loc, int64_t *lin, unsigned *fl)
{
	int64_t x, l = 0;
	int d, out = 0;

	for (d = 0; d < n; d++) {
		const IrExpr *ix = idx[d];

		if (ix->kind == IE_VAR && !(R->anyvt && R->vtracked[ix->u.var->id]) &&
		    !(R->vars[ix->u.var->id].fl & INTERP_UNDEF)) {
			x = R->vars[ix->u.var->id].c.i;
			*fl |= R->vars[ix->u.var->id].fl;
		} else if (ix->kind == IE_INT) {
			x = ix->u.i;
		} else if (iexp_index(R, ix, &x, fl, "the index")) {
			return -1;
		}
		if (x < 0 || x >= B->dim[d]) {
			if (B->scope != MEM_GLOBAL)
				return irun_fail(R, INTERP_ERROR, loc,
						 "index %lld out of range for dimension %d of '%s' (size %lld)",
						 (long long)x, d, B->b->name, (long long)B->dim[d]);
			out = 1;
			continue;
		}
		l += x * B->stride[d];
	}
	*lin = l;
	return out;
}

static Val
zero(DType t)
{
	Val r;

	r.fl = 0;
	if (it_float(t))
		r.c.f = 0;
	else
		r.c.i = 0;
	return r;
}

Val
iexp_elem(Run *R, BufRt *B, int buf, int64_t lin, Loc loc)
{
	Val r;

	if (R->nest && B->tracked && irun_nest_access(R, buf, lin, 0, loc))
		return zero(B->t);
	if (B->scope == MEM_GLOBAL) {
		if (B->cell && irun_block_race(R, B, lin, loc))
			return zero(B->t);
		return iexp_gload(B, lin);
	}
	r.c = B->v[lin];
	r.fl = B->fl[lin];
	return r;
}

static Val
load(Run *R, const IrExpr *x)
{
	BufRt *B = &R->bufs[x->u.load.buf];
	unsigned fl = 0;
	int64_t lin = 0;
	int o = iexp_elemindex(R, B, x->u.load.n, x->u.load.idx, x->loc, &lin, &fl);
	Val r;

	if (o < 0)
		return zero(x->type);
	if (o > 0) { /* past the edge of a global tensor: zero */
		r = zero(x->type);
		r.fl = fl;
		return r;
	}
	r = iexp_elem(R, B, x->u.load.buf, lin, x->loc);
	r.fl |= fl;
	return r;
}

/* ---- expressions ---------------------------------------------------------------------- */

Val
iexp_undef(DType t, unsigned fl)
{
	Val r = zero(t);

	r.fl = fl | INTERP_UNDEF;
	return r;
}

static Val
divzero(Run *R, const IrExpr *x, DType t, unsigned fl)
{
	Buf b;

	if (fl & INTERP_UNDEF) /* an undefined divisor: the quotient is undefined too */
		return iexp_undef(t, fl);
	buf_init(&b);
	ir_dump_expr(&b, R->k, x);
	irun_fail(R, INTERP_ERROR, x->loc, "division by zero: %s", buf_str(&b));
	buf_free(&b);
	return iexp_undef(t, fl);
}

static Val
intbin(Run *R, const IrExpr *x, BinOp op, DType t, int64_t a, int64_t b, unsigned fl)
{
	int64_t r = 0;
	int ovf = 0, w = bits(t);
	Val v;

	switch (op) {
	case BIN_ADD: ovf = __builtin_add_overflow(a, b, &r); break;
	case BIN_SUB: ovf = __builtin_sub_overflow(a, b, &r); break;
	case BIN_MUL: ovf = __builtin_mul_overflow(a, b, &r); break;
	case BIN_DIV:
	case BIN_MOD:
		if (b == 0)
			return divzero(R, x, t, fl);
		if (a == INT64_MIN && b == -1)
			ovf = op == BIN_DIV, r = op == BIN_DIV ? INT64_MIN : 0;
		else
			r = op == BIN_DIV ? floordiv64(a, b) : floormod64(a, b);
		break;
	case BIN_SHL: {
		__int128 p;

		if (b < 0 || b >= w)
			return iexp_undef(t, fl);
		p = (__int128)a * ((__int128)1 << b);
		ovf = p < INT64_MIN || p > INT64_MAX;
		r = (int64_t)(uint64_t)p;
		break;
	}
	case BIN_SHR:
		if (b < 0 || b >= w)
			return iexp_undef(t, fl);
		r = a >= 0 ? a >> b : ~(~a >> b);
		break;
	case BIN_BAND: r = a & b; break;
	case BIN_BOR: r = a | b; break;
	case BIN_BXOR: r = a ^ b; break;
	default: break;
	}
	v = iexp_int(t, r, ovf, fl);
	return v;
}

static int
cmp(BinOp op, int lt, int eq, int gt)
{
	switch (op) {
	case BIN_LT: return lt;
	case BIN_LE: return lt || eq;
	case BIN_GT: return gt;
	case BIN_GE: return gt || eq;
	case BIN_EQ: return eq;
	case BIN_NE: return !eq;
	default: return 0;
	}
}

Val
iexp_binop(Run *R, const IrExpr *x, Val a, Val b)
{
	BinOp op = x->u.bin.op;
	DType t = x->u.bin.a->type; /* sema converted both operands to one type */
	unsigned fl = a.fl | b.fl;
	Val r;

	/* a product feeding + or - may fuse into one rounding (nvcc's default --fmad=true):
	 * the sum is inexact; the product flag lasts until the value meets another op */
	if (it_float(t) && (op == BIN_ADD || op == BIN_SUB) && (fl & INTERP_PROD))
		fl |= INTERP_INEXACT;
	fl &= ~(unsigned)INTERP_PROD;
	if (it_float(t) && op == BIN_MUL)
		fl |= INTERP_PROD;
	r.fl = fl;
	if (op >= BIN_LT && op <= BIN_NE) {
		r.fl &= ~(unsigned)INTERP_PROD;
		if (it_float(t))
			r.c.i = cmp(op, a.c.f < b.c.f, a.c.f == b.c.f, a.c.f > b.c.f);
		else
			r.c.i = cmp(op, a.c.i < b.c.i, a.c.i == b.c.i, a.c.i > b.c.i);
		return r;
	}
	if (t == DT_BOOL) {
		r.c.i = op == BIN_BAND ? a.c.i & b.c.i : op == BIN_BOR ? a.c.i | b.c.i : a.c.i ^ b.c.i;
		return r;
	}
	if (it_f32(t)) {
		float fa = (float)a.c.f, fb = (float)b.c.f, v = 0;

		switch (op) {
		case BIN_ADD: v = fa + fb; break;
		case BIN_SUB: v = fa - fb; break;
		case BIN_MUL: v = fa * fb; break;
		case BIN_DIV: v = fa / fb; break;
		default: break;
		}
		r.c.f = v;
		return r;
	}
	if (t == DT_F64) {
		switch (op) {
		case BIN_ADD: r.c.f = a.c.f + b.c.f; break;
		case BIN_SUB: r.c.f = a.c.f - b.c.f; break;
		case BIN_MUL: r.c.f = a.c.f * b.c.f; break;
		case BIN_DIV: r.c.f = a.c.f / b.c.f; break;
		default: r.c.f = 0; break;
		}
		return r;
	}
	return intbin(R, x, op, x->type, a.c.i, b.c.i, fl);
}

static Val
binary(Run *R, const IrExpr *x)
{
	BinOp op = x->u.bin.op;
	Val a = iexp_eval(R, x->u.bin.a), b;

	if (op == BIN_LAND || op == BIN_LOR) {
		if (a.fl & INTERP_UNDEF)
			return iexp_undef(DT_BOOL, a.fl);
		if (op == BIN_LAND ? !a.c.i : a.c.i)
			return a;
		b = iexp_eval(R, x->u.bin.b);
		b.fl |= a.fl;
		return b;
	}
	b = iexp_eval(R, x->u.bin.b);
	return iexp_binop(R, x, a, b);
}

Val
iexp_unop(const IrExpr *x, Val a)
{
	DType t = x->type;

	switch (x->u.un.op) {
	case UN_NOT:
		a.c.i = !a.c.i;
		return a;
	case UN_BNOT: {
		unsigned fl = a.fl;

		a = iexp_int(t, ~a.c.i, 0, 0); /* ~x stays in range (u8: 255 - x) */
		a.fl = fl;
		return a;
	}
	case UN_NEG:
	default:
		if (it_f32(t))
			a.c.f = -(float)a.c.f;
		else if (t == DT_F64)
			a.c.f = -a.c.f;
		else
			a = iexp_int(t, a.c.i == INT64_MIN ? INT64_MIN : -a.c.i, a.c.i == INT64_MIN, a.fl);
		return a;
	}
}

Val
iexp_callop(Run *R, const IrExpr *x, Val a, Val b)
{
	MathFn fn = x->u.call.fn;
	DType t = x->type;
	Val r;
	int f32 = it_f32(t);

	if (fn == FN_MAX || fn == FN_MIN || fn == FN_CDIV) {
		r.fl = a.fl | b.fl;
		if (fn == FN_CDIV) {
			int64_t s;
			int ovf;

			if (b.c.i == 0)
				return divzero(R, x, t, r.fl);
			ovf = __builtin_sub_overflow(b.c.i, 1, &s) || __builtin_add_overflow(a.c.i, s, &s) ||
			      (s == INT64_MIN && b.c.i == -1);
			return iexp_int(t, ovf ? 0 : floordiv64(s, b.c.i), ovf, r.fl);
		}
		if (!it_float(t))
			r.c.i = (fn == FN_MAX) == (a.c.i > b.c.i) ? a.c.i : b.c.i;
		else
			r.c.f = fn == FN_MAX ? iexp_fmax(a.c.f, b.c.f, &r.fl) : iexp_fmin(a.c.f, b.c.f, &r.fl);
		return r;
	}
	if (fn == FN_ABS) {
		if (it_float(t))
			return fval(fabs(a.c.f), a.fl);
		return iexp_int(t, a.c.i == INT64_MIN ? INT64_MIN : a.c.i < 0 ? -a.c.i : a.c.i,
				a.c.i == INT64_MIN, a.fl);
	}
	r.fl = a.fl | INTERP_INEXACT;
	if (f32) {
		float v = (float)a.c.f, y;

		switch (fn) {
		case FN_EXP: y = expf(v); break;
		case FN_EXP2: y = exp2f(v); break;
		case FN_LOG: y = logf(v); break;
		case FN_LOG2: y = log2f(v); break;
		case FN_SQRT: y = sqrtf(v); break;
		case FN_RSQRT: y = 1.0f / sqrtf(v); break;
		case FN_TANH: y = tanhf(v); break;
		case FN_SIN: y = sinf(v); break;
		case FN_COS: y = cosf(v); break;
		default: y = v; break;
		}
		r.c.f = y;
	} else {
		double v = a.c.f;

		switch (fn) {
		case FN_EXP: r.c.f = exp(v); break;
		case FN_EXP2: r.c.f = exp2(v); break;
		case FN_LOG: r.c.f = log(v); break;
		case FN_LOG2: r.c.f = log2(v); break;
		case FN_SQRT: r.c.f = sqrt(v); break;
		case FN_RSQRT: r.c.f = 1.0 / sqrt(v); break;
		case FN_TANH: r.c.f = tanh(v); break;
		case FN_SIN: r.c.f = sin(v); break;
		case FN_COS: r.c.f = cos(v); break;
		default: r.c.f = v; break;
		}
	}
	return r;
}

static Val
call(Run *R, const IrExpr *x)
{
	Val a = iexp_eval(R, x->u.call.args[0]), b;

	if (x->u.call.n > 1)
		b = iexp_eval(R, x->u.call.args[1]);
	else
		b = a;
	return iexp_callop(R, x, a, b);
}

Val
iexp_const(const IrExpr *x)
{
	Val r;

	r.fl = 0;
	if (x->kind == IE_FLOAT) /* a constant is its value rounded to its type */
		r.c.f = x->type == DT_F64 ? x->u.f : num_round(x->type, x->u.f);
	else
		r.c.i = x->u.i;
	return r;
}

static Val
var(Run *R, const IrExpr *x)
{
	int id = x->u.var->id;

	if (R->anyvt && R->vtracked[id] && irun_nest_access(R, R->k->nbuf + id, 0, 0, x->loc))
		return zero(x->type);
	return R->vars[id];
}

Val
iexp_eval(Run *R, const IrExpr *x)
{
	Val r;

	switch (x->kind) {
	case IE_INT:
	case IE_BOOL:
		r.c.i = x->u.i;
		r.fl = 0;
		return r;
	case IE_FLOAT: return iexp_const(x);
	case IE_VAR: return var(R, x);
	case IE_LOAD: return load(R, x);
	case IE_UNARY: return iexp_unop(x, iexp_eval(R, x->u.un.a));
	case IE_BINARY: return binary(R, x);
	case IE_SELECT:
		r = iexp_eval(R, x->u.sel.c);
		if (r.fl & INTERP_UNDEF)
			return iexp_undef(x->type, r.fl);
		return iexp_eval(R, r.c.i ? x->u.sel.a : x->u.sel.b);
	case IE_CAST:
		return iexp_conv(iexp_eval(R, x->u.cast.a), x->u.cast.a->type, x->type);
	case IE_CALL: return call(R, x);
	}
	return zero(x->type);
}
