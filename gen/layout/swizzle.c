/*
 * swizzle.c: shared-memory layouts: the 32/64/128-byte XOR bank swizzles for
 * 1, 2, 4 and 8-byte elements (CuTe Swizzle<o,4,3> within a column panel),
 * the linear, padded and fp64 layouts, TileLang's choice ladder, the base
 * alignment and descriptor encodings of each mode, detection and merging.
 */
#include <string.h>

#include "layout.h"

const char *
swizzle_name(SwizzleMode m)
{
	static const char *names[] = {"none", "32B", "64B", "128B"};

	return m >= SWZ_NONE && m <= SWZ_128B ? names[m] : "?";
}

int64_t
swizzle_bytes(SwizzleMode m)
{
	return (int64_t)16 << m;
}

int64_t
swizzle_alignment(SwizzleMode m)
{
	return (int64_t)128 << m;
}

int
swizzle_wgmma_layout_type(SwizzleMode m)
{
	return m == SWZ_NONE ? 0 : 4 - (int)m;
}

int
swizzle_tcgen05_layout_type(SwizzleMode m)
{
	return 2 * (4 - (int)m);
}

/* the last two dims are [stride, continuous]; leading dims become Expand */
static int
split2(const int64_t *shape, int n, int64_t *stride, int64_t *cont, Err *err)
{
	int k;

	if (!shape || n < 1 || n > LAYOUT_MAXDIM - 2)
		return err_set(err, "shared layout: bad rank %d", n);
	for (k = 0; k < n; k++)
		if (shape[k] < 1)
			return err_set(err, "shared layout: extent %lld is not positive", (long long)shape[k]);
	*cont = shape[n - 1];
	*stride = n > 1 ? shape[n - 2] : 1;
	return 0;
}

static Layout *
finish(Arena *A, const int64_t *shape, int n, int64_t stride, int64_t cont, IExpr **fwd, int nout,
       Err *err)
{
	int64_t s2[2] = {stride, cont};
	Layout *L = layout_new(A, s2, 2, fwd, nout, err);

	if (!L || n <= 2)
		return L;
	return layout_expand(A, L, shape, n - 2, err);
}

Layout *
swizzle_layout(Arena *A, SwizzleMode m, const int64_t *shape, int n, int elem_bytes, Err *err)
{
	int64_t stride, cont, v, W;
	IExpr *i, *j, *s, *c, *csw, *fwd[3];

	if (split2(shape, n, &stride, &cont, err))
		return NULL;
	if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8) {
		err_set(err, "swizzle: element size %d bytes is not 1, 2, 4 or 8", elem_bytes);
		return NULL;
	}
	if (m == SWZ_NONE)
		return swizzle_linear(A, shape, n, err);
	if (m < SWZ_NONE || m > SWZ_128B) {
		err_set(err, "swizzle: unknown mode %d", (int)m);
		return NULL;
	}
	v = 16 / elem_bytes;
	W = (int64_t)1 << m;
	if (cont % (W * v)) {
		err_set(err, "%s swizzle needs the continuous extent (%lld) to be a multiple of %lld "
			"elements of %d bytes", swizzle_name(m), (long long)cont, (long long)(W * v),
			elem_bytes);
		return NULL;
	}
	if (stride % 8 && !(m == SWZ_32B && stride == 4)) {
		err_set(err, "%s swizzle needs the row count (%lld) to be a multiple of 8", swizzle_name(m),
			(long long)stride);
		return NULL;
	}
	i = iexpr_var(A, 0);
	j = iexpr_var(A, 1);
	s = iexpr_modc(A, i, 8);
	c = iexpr_modc(A, iexpr_divc(A, j, v), W);
	/* 32B: row bit 2, 64B: row bits 1..2, 128B: row bits 0..2 */
	csw = iexpr_bin(A, IX_XOR, c, iexpr_divc(A, s, 8 / W));
	fwd[0] = iexpr_divc(A, j, W * v);
	fwd[1] = iexpr_divc(A, i, 8);
	fwd[2] = iexpr_add(A, iexpr_modc(A, j, v),
			   iexpr_mulc(A, iexpr_add(A, csw, iexpr_mulc(A, s, W)), v));
	return finish(A, shape, n, stride, cont, fwd, 3, err);
}

Layout *
swizzle_linear(Arena *A, const int64_t *shape, int n, Err *err)
{
	int64_t stride, cont;
	IExpr *f;

	if (split2(shape, n, &stride, &cont, err))
		return NULL;
	f = iexpr_add(A, iexpr_mulc(A, iexpr_var(A, 0), cont), iexpr_var(A, 1));
	return finish(A, shape, n, stride, cont, &f, 1, err);
}

Layout *
swizzle_padded(Arena *A, const int64_t *shape, int n, int elem_bytes, Err *err)
{
	int64_t stride, cont, P;
	IExpr *f;

	if (split2(shape, n, &stride, &cont, err))
		return NULL;
	if (elem_bytes < 1 || elem_bytes > 16) {
		err_set(err, "padded: bad element size %d", elem_bytes);
		return NULL;
	}
	P = (elem_bytes * cont) % 32 == 0 && elem_bytes <= 16 ? cont + 16 / elem_bytes : cont;
	f = iexpr_add(A, iexpr_mulc(A, iexpr_var(A, 0), P), iexpr_var(A, 1));
	return finish(A, shape, n, stride, cont, &f, 1, err);
}

Layout *
swizzle_f64(Arena *A, const int64_t *shape, int n, int k_inner, Err *err)
{
	int64_t stride, cont;
	IExpr *i, *j, *c, *s, *cs, *fwd[3];

	if (split2(shape, n, &stride, &cont, err))
		return NULL;
	if (cont % 16 || stride % 4) {
		err_set(err, "fp64 layout needs continuous %% 16 == 0 and rows %% 4 == 0 (got %lld x %lld)",
			(long long)stride, (long long)cont);
		return NULL;
	}
	i = iexpr_var(A, 0);
	j = iexpr_var(A, 1);
	c = iexpr_modc(A, j, 16);
	s = iexpr_modc(A, i, 4);
	if (k_inner)
		cs = iexpr_add(A, iexpr_mulc(A, iexpr_divc(A, c, 4), 4),
			       iexpr_bin(A, IX_XOR, iexpr_modc(A, c, 4), s));
	else
		cs = iexpr_add(A, iexpr_modc(A, c, 4),
			       iexpr_mulc(A, iexpr_bin(A, IX_XOR, iexpr_divc(A, c, 4), s), 4));
	fwd[0] = iexpr_divc(A, j, 16);
	fwd[1] = iexpr_divc(A, i, 4);
	fwd[2] = iexpr_add(A, cs, iexpr_mulc(A, s, 16));
	return finish(A, shape, n, stride, cont, fwd, 3, err);
}

static int
setout(SmemLayout *out, SmemKind k, SwizzleMode m, Layout *L)
{
	out->kind = k;
	out->mode = m;
	out->layout = L;
	return L ? 0 : -1;
}

int
swizzle_choose(Arena *A, const int64_t *shape, int n, int elem_bytes, int k_inner, int allow_pad,
	       SmemLayout *out, Err *err)
{
	int64_t stride, cont, v;
	SwizzleMode m;

	if (!out)
		return err_set(err, "swizzle_choose: null result");
	memset(out, 0, sizeof *out);
	if (split2(shape, n, &stride, &cont, err))
		return -1;
	if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 && elem_bytes != 8)
		return err_set(err, "swizzle: element size %d bytes is not 1, 2, 4 or 8", elem_bytes);
	v = 16 / elem_bytes;
	if (allow_pad) {
		if (elem_bytes == 8) {
			if (cont % 16 == 0 && stride % 4 == 0)
				return setout(out, k_inner ? SMEM_F64_KINNER : SMEM_F64_KOUTER, SWZ_NONE,
					      swizzle_f64(A, shape, n, k_inner, err));
			return setout(out, SMEM_PADDED, SWZ_NONE, swizzle_padded(A, shape, n, 8, err));
		}
		if (!k_inner && elem_bytes == 1)
			return setout(out, SMEM_PADDED, SWZ_NONE, swizzle_padded(A, shape, n, 1, err));
		m = cont % (8 * v) == 0 ? SWZ_128B : cont % (4 * v) == 0 ? SWZ_64B
		    : cont % (2 * v) == 0 ? SWZ_32B : SWZ_NONE;
		/* TileLang's builders would ICHECK rows % 8; we fall back to padding */
		if (m == SWZ_NONE || stride % 8)
			return setout(out, SMEM_PADDED, SWZ_NONE, swizzle_padded(A, shape, n, elem_bytes, err));
		return setout(out, SMEM_SWIZZLE, m, swizzle_layout(A, m, shape, n, elem_bytes, err));
	}
	/* Hopper / tcgen05 ladder: swizzle only when rows % 8 == 0, else linear */
	m = SWZ_NONE;
	if (stride % 8 == 0) {
		if (elem_bytes == 8)
			m = cont % (2 * v) == 0 ? SWZ_32B : SWZ_NONE;
		else
			m = cont % (8 * v) == 0 ? SWZ_128B : cont % (4 * v) == 0 ? SWZ_64B
			    : cont % (2 * v) == 0 ? SWZ_32B : SWZ_NONE;
	}
	if (m != SWZ_NONE)
		return setout(out, SMEM_SWIZZLE, m, swizzle_layout(A, m, shape, n, elem_bytes, err));
	if (cont % v)
		return err_set(err, "no shared layout without padding: the continuous extent %lld is not a "
			       "multiple of %lld elements (16 bytes)", (long long)cont, (long long)v);
	return setout(out, SMEM_LINEAR, SWZ_NONE, swizzle_linear(A, shape, n, err));
}

int
swizzle_detect(const Layout *L, int elem_bytes, SwizzleMode *mode)
{
	Arena A;
	int m, r = -1;

	if (!L || L->is_frag || !mode)
		return -1;
	arena_init(&A);
	for (m = SWZ_32B; m <= SWZ_128B && r; m++) {
		Layout *S = swizzle_layout(&A, (SwizzleMode)m, L->in_shape, L->nin, elem_bytes, NULL);

		if (S && layout_equal(S, L, NULL) == 1) {
			*mode = (SwizzleMode)m;
			r = 0;
		}
	}
	if (r) {
		Layout *S = swizzle_linear(&A, L->in_shape, L->nin, NULL);

		if (S && layout_equal(S, L, NULL) == 1) {
			*mode = SWZ_NONE;
			r = 0;
		}
	}
	arena_free(&A);
	return r;
}

Layout *
swizzle_merge(Arena *A, const Layout *a, const Layout *b, int elem_bytes, Err *err)
{
	SwizzleMode ma, mb;

	if (swizzle_detect(a, elem_bytes, &ma) || swizzle_detect(b, elem_bytes, &mb) ||
	    ma == SWZ_NONE || mb == SWZ_NONE) {
		err_set(err, "cannot merge: both layouts must be recognised swizzles");
		return NULL;
	}
	if (a->nin != b->nin || memcmp(a->in_shape, b->in_shape, (size_t)a->nin * sizeof(int64_t))) {
		err_set(err, "cannot merge: different shapes");
		return NULL;
	}
	return swizzle_layout(A, ma < mb ? ma : mb, a->in_shape, a->nin, elem_bytes, err);
}
