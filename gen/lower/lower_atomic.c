/*
 * lower_atomic.c: atomics. atomic_add/max/min(T[...], v) and the stores of
 * copy(tile, T[...], op = add|max|min) become calls of the tl_atomic_* device
 * helpers (tilec_cuda.h, tilec_hip.h, the CPU headers); what the target has is
 * read off its description (target.c: Target.atomic_ops, atomic_pair16,
 * atomic_f32_vec) and the rest is refused at the statement. A vector of a
 * copy's consecutive elements is updated by the widest atomics the target has
 * (f32x4 / f32x2 into global memory on sm_90, 16-bit pairs), else one by one.
 */
#include "lw.h"

static unsigned
tabit(DType t)
{
	switch (t) {
	case DT_F32: return TA_F32;
	case DT_F16: return TA_F16;
	case DT_BF16: return TA_BF16;
	case DT_I32: return TA_I32;
	default: return 0;
	}
}

static const char *
tyname(DType t)
{
	return t == DT_F32 ? "f32" : t == DT_F16 ? "f16" : t == DT_BF16 ? "bf16" : "i32";
}

/* can target e->t update an element of type t with op? -1 with the error at st when not */
int
lw_atomic_check(Em *e, const IrStmt *st, AtomicOp op, DType t)
{
	const char *on = atomicop_name(op);

	if (op < AT_ADD || op > AT_MIN || !(e->t->atomic_ops[op - AT_ADD] & tabit(t))) {
		err_loc(e->err, st->loc);
		return err_set(e->err, "atomic %s of %s elements is not supported on %s %s%s", on,
			       dtype_name(t), e->t->kind == TGT_CUDA ? "cuda" : "hip", e->t->arch,
			       op != AT_ADD && e->t->kind == TGT_CUDA && t != DT_I32
				       ? " (CUDA has no floating-point atomic max/min; use i32 elements)"
				       : op != AT_ADD && t != DT_I32 && t != DT_F32
						 ? " (max/min of 16-bit floats has no atomic; use f32 or i32 elements)"
						 : "");
	}
	return 0;
}

/* an atomic (op) of the element at address addr (C text: a pointer) with value val (of the
 * element type, C text) */
static void
one(Em *e, AtomicOp op, const IrBuffer *B, int buf, const char *addr, const char *val)
{
	LNode *n = lw_assign(e, lw_memof(B), buf, dtype_bytes(B->dtype), addr, val);

	n->u.set.atomic = arena_printf(e->a, "tl_atomic_%s_%s", atomicop_name(op), tyname(B->dtype));
}

void
lw_atomic_elem(Em *e, AtomicOp op, const IrBuffer *B, int buf, const char *addr, const char *val)
{
	one(e, op, B, buf, addr, val);
}

/* count consecutive elements from addr (aligned to count elements: the copy's vector) with
 * vals[0..count) (element type) */
void
lw_atomic_vec(Em *e, AtomicOp op, const IrBuffer *B, int buf, const char *addr, char *const *vals, int count)
{
	int eb = dtype_bytes(B->dtype), k = 0, w;
	LNode *n;
	Buf b;

	buf_init(&b);
	while (k < count) {
		const char *at = k ? arena_printf(e->a, "(%s) + %d", addr, k) : addr;

		if (op == AT_ADD && B->dtype == DT_F32 && B->scope == MEM_GLOBAL &&
		    e->t->atomic_f32_vec >= 2 && count - k >= 2) {
			w = e->t->atomic_f32_vec >= 4 && count - k >= 4 ? 4 : 2;
			buf_reset(&b);
			for (int i = 0; i < w; i++)
				buf_printf(&b, "%s%s", i ? ", " : "", vals[k + i]);
			n = lw_assign(e, lw_memof(B), buf, w * eb, at, buf_str(&b));
			n->u.set.atomic = w == 4 ? "tl_atomic_add_f32x4" : "tl_atomic_add_f32x2";
			k += w;
		} else if (op == AT_ADD && eb == 2 && e->t->atomic_pair16 && count - k >= 2) {
			buf_reset(&b);
			lw_packword(&b, B->dtype, vals + k, 0);
			n = lw_assign(e, lw_memof(B), buf, 4, at, buf_str(&b));
			n->u.set.atomic = B->dtype == DT_F16 ? "tl_atomic_add_f16x2" : "tl_atomic_add_bf16x2";
			k += 2;
		} else {
			one(e, op, B, buf, at, vals[k]);
			k++;
		}
	}
	buf_free(&b);
}
