/*
 * linear.c: the linear-layout (F2 basis) view of fragments, shared buffers
 * and CuTe layouts. Every builder first tabulates the map from the packed
 * input index (input dims concatenated, the first one least significant) to
 * the row-major element index, then reads one basis per input bit and proves
 * that every entry is the XOR of the bases of its set bits.
 */
#include <stdio.h>
#include <string.h>

#include "linear.h"

static int
lg2(int64_t n)
{
	int k = 0;

	if (n < 1 || (n & (n - 1)))
		return -1;
	while ((int64_t)1 << k < n)
		k++;
	return k;
}

/* row-major flat index -> coordinates */
static void
unflat(int64_t f, const int64_t *shape, int rank, int64_t *c)
{
	int d;

	for (d = rank - 1; d >= 0; d--) {
		c[d] = f % shape[d];
		f /= shape[d];
	}
}

/*
 * tab has 2^(sum nbits) entries, each a row-major element index of shape or
 * -1 (no element). Returns 1 (linear), 0 (not, why in err), -1 (error).
 */
static int
from_bits(Arena *a, const int64_t *tab, int nin, const char *const *names, const int *nbits,
	  const int64_t *shape, int rank, LinLayout *out, Err *err)
{
	int64_t n, size = 1, i, *flatbase, *exp;
	int k, p, tot = 0, bit;

	if (rank < 1 || rank > LAYOUT_MAXDIM)
		return err_set(err, "linear layout: rank %d out of range", rank);
	for (k = 0; k < rank; k++) {
		if (lg2(shape[k]) < 0) {
			err_set(err, "dim %d of the tile has size %lld, not a power of two", k,
				(long long)shape[k]);
			return 0;
		}
		size *= shape[k];
	}
	for (k = 0; k < nin; k++)
		tot += nbits[k];
	if (tot > LIN_MAXBITS)
		return err_set(err, "linear layout: %d input bits is too many", tot);
	n = (int64_t)1 << tot;
	for (i = 0; i < n; i++) {
		if (tab[i] < 0 || tab[i] >= size) {
			err_set(err, "input %lld holds no element of the tile", (long long)i);
			return 0;
		}
	}
	if (tab[0] != 0) {
		err_set(err, "input 0 holds element %lld, not element 0", (long long)tab[0]);
		return 0;
	}
	flatbase = anewn(a, int64_t, tot + 1);
	exp = anewn(a, int64_t, n);
	for (p = 0; p < tot; p++)
		flatbase[p] = tab[(int64_t)1 << p];
	/* with power-of-two dims, XOR of coordinates is XOR of row-major indices */
	for (i = 1; i < n; i++) {
		for (bit = 0; !((i >> bit) & 1); bit++)
			;
		exp[i] = exp[i & (i - 1)] ^ flatbase[bit];
		if (exp[i] != tab[i]) {
			err_set(err, "input %lld holds element %lld, not the XOR of its bits' bases (%lld)",
				(long long)i, (long long)tab[i], (long long)exp[i]);
			return 0;
		}
	}
	memset(out, 0, sizeof *out);
	out->nin = nin;
	out->nout = rank;
	memcpy(out->out_size, shape, sizeof(int64_t) * (size_t)rank);
	bit = 0;
	for (k = 0; k < nin; k++) {
		out->in_name[k] = names[k];
		out->nbits[k] = nbits[k];
		out->base[k] = anewn(a, int64_t, (size_t)(nbits[k] ? nbits[k] : 1) * (size_t)rank);
		for (p = 0; p < nbits[k]; p++, bit++)
			unflat(flatbase[bit], shape, rank, out->base[k] + (size_t)p * (size_t)rank);
	}
	return 1;
}

static const char *const reg_names[] = {"register", "lane", "warp", "block"};
static const char *const buf_names[] = {"offset", "block"};

int
lin_from_table(Arena *a, const int64_t *tab, int64_t nthreads, int64_t nslots, int warp_size,
	       const int64_t *shape, int rank, LinLayout *out, Err *err)
{
	int nb[4], tb, lb;

	if (!a || !tab || !shape || !out)
		return err_set(err, "linear layout: null argument");
	if (lg2(warp_size) < 0)
		return err_set(err, "linear layout: warp size %d is not a power of two", warp_size);
	if ((tb = lg2(nthreads)) < 0) {
		err_set(err, "%lld threads is not a power of two", (long long)nthreads);
		return 0;
	}
	if ((nb[0] = lg2(nslots)) < 0) {
		err_set(err, "%lld registers per thread is not a power of two", (long long)nslots);
		return 0;
	}
	lb = lg2(warp_size);
	nb[1] = tb < lb ? tb : lb;
	nb[2] = tb - nb[1];
	nb[3] = 0;
	return from_bits(a, tab, 4, reg_names, nb, shape, rank, out, err);
}

int
lin_from_fragment(Arena *a, const Fragment *F, int warp_size, LinLayout *out, Err *err)
{
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], npts, nslots = 1, i, *tab, slot, el;
	int k;

	if (!a || !F || !out)
		return err_set(err, "linear layout: null argument");
	if (!F->is_frag)
		return err_set(err, "linear layout: not a fragment");
	for (k = 0; k < F->nout; k++)
		nslots *= F->out_shape[k];
	npts = layout_size(F) * F->rep;
	if (npts > layout_enum_limit() || nslots * F->nthreads > layout_enum_limit())
		return err_set(err, "linear layout: the fragment's domain is past the enumeration limit");
	tab = anewn(a, int64_t, (size_t)(nslots * F->nthreads));
	for (i = 0; i < nslots * F->nthreads; i++)
		tab[i] = -1;
	for (i = 0; i < npts; i++) {
		int64_t r = i;

		x[F->nin] = r % F->rep;
		r /= F->rep;
		el = r;
		for (k = F->nin - 1; k >= 0; k--) {
			x[k] = r % F->in_shape[k];
			r /= F->in_shape[k];
		}
		if (layout_eval(F, x, y, err))
			return -1;
		slot = 0;
		for (k = 0; k < F->nout; k++)
			slot = slot * F->out_shape[k] + y[k];
		if (y[F->nout] < 0 || y[F->nout] >= F->nthreads || slot < 0 || slot >= nslots)
			return err_set(err, "linear layout: the fragment maps outside its extents");
		if (tab[y[F->nout] * nslots + slot] >= 0 && tab[y[F->nout] * nslots + slot] != el) {
			err_set(err, "thread %lld slot %lld holds two elements", (long long)y[F->nout],
				(long long)slot);
			return 0;
		}
		tab[y[F->nout] * nslots + slot] = el;
	}
	return lin_from_table(a, tab, F->nthreads, nslots, warp_size, F->in_shape, F->nin, out, err);
}

int
lin_from_shared(Arena *a, const Layout *L, LinLayout *out, Err *err)
{
	int64_t x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], n, size = 1, i, off, r, *tab;
	int k, nb[2];

	if (!a || !L || !out)
		return err_set(err, "linear layout: null argument");
	if (L->is_frag)
		return err_set(err, "linear layout: a fragment is not a shared layout");
	n = layout_size(L);
	for (k = 0; k < L->nout; k++)
		size *= L->out_shape[k];
	if (size != n) {
		err_set(err, "the layout spans %lld offsets for %lld elements", (long long)size,
			(long long)n);
		return 0;
	}
	if ((nb[0] = lg2(n)) < 0) {
		err_set(err, "%lld elements is not a power of two", (long long)n);
		return 0;
	}
	if (n > layout_enum_limit())
		return err_set(err, "linear layout: the domain is past the enumeration limit");
	nb[1] = 0;
	tab = anewn(a, int64_t, (size_t)n);
	for (i = 0; i < n; i++)
		tab[i] = -1;
	for (i = 0; i < n; i++) {
		r = i;
		for (k = L->nin - 1; k >= 0; k--) {
			x[k] = r % L->in_shape[k];
			r /= L->in_shape[k];
		}
		if (layout_eval(L, x, y, err))
			return -1;
		off = 0;
		for (k = 0; k < L->nout; k++)
			off = off * L->out_shape[k] + y[k];
		if (off < 0 || off >= n || tab[off] >= 0) {
			err_set(err, "offset %lld holds two elements", (long long)off);
			return 0;
		}
		tab[off] = i;
	}
	return from_bits(a, tab, 2, buf_names, nb, L->in_shape, L->nin, out, err);
}

int
lin_from_cute_tv(Arena *a, CuteLayout tv, const int64_t *shape, int rank, int warp_size,
		 LinLayout *out, Err *err)
{
	int64_t T, V, t, v, *tab;
	CuteLayout m;

	if (!a || !shape || !out || !tv.shape || !tv.stride)
		return err_set(err, "linear layout: null argument");
	if (cute_rank(tv) != 2)
		return err_set(err, "a thread-value layout has two modes (thread, value), not %d",
			       cute_rank(tv));
	m = cute_mode(tv, 0);
	if (cute_size(m, &T, err))
		return -1;
	m = cute_mode(tv, 1);
	if (cute_size(m, &V, err))
		return -1;
	if (T < 1 || V < 1 || T > layout_enum_limit() / V)
		return err_set(err, "linear layout: the layout is too large");
	tab = anewn(a, int64_t, (size_t)(T * V));
	for (t = 0; t < T; t++)
		for (v = 0; v < V; v++)
			if (cute_eval(tv, t + T * v, &tab[t * V + v], err))
				return -1;
	return lin_from_table(a, tab, T, V, warp_size, shape, rank, out, err);
}

int
lin_from_cute_buffer(Arena *a, CuteLayout l, const int64_t *shape, int rank, LinLayout *out,
		     Err *err)
{
	int64_t n, i, *tab;
	int nb[2];

	if (!a || !shape || !out || !l.shape || !l.stride)
		return err_set(err, "linear layout: null argument");
	if (cute_size(l, &n, err))
		return -1;
	if ((nb[0] = lg2(n)) < 0) {
		err_set(err, "%lld offsets is not a power of two", (long long)n);
		return 0;
	}
	if (n > layout_enum_limit())
		return err_set(err, "linear layout: the layout is too large");
	nb[1] = 0;
	tab = anewn(a, int64_t, (size_t)n);
	for (i = 0; i < n; i++)
		if (cute_eval(l, i, &tab[i], err))
			return -1;
	return from_bits(a, tab, 2, buf_names, nb, shape, rank, out, err);
}

void
lin_apply(const LinLayout *L, const int64_t *in, int64_t *coord)
{
	int k, p, d;

	for (d = 0; d < L->nout; d++)
		coord[d] = 0;
	for (k = 0; k < L->nin; k++)
		for (p = 0; p < L->nbits[k]; p++)
			if ((in[k] >> p) & 1)
				for (d = 0; d < L->nout; d++)
					coord[d] ^= L->base[k][p * L->nout + d];
}

int
lin_equal(const LinLayout *a, const LinLayout *b)
{
	int k;

	if (!a || !b || a->nin != b->nin || a->nout != b->nout)
		return 0;
	if (memcmp(a->out_size, b->out_size, sizeof(int64_t) * (size_t)a->nout))
		return 0;
	for (k = 0; k < a->nin; k++) {
		if (strcmp(a->in_name[k], b->in_name[k]) || a->nbits[k] != b->nbits[k])
			return 0;
		if (a->nbits[k] && memcmp(a->base[k], b->base[k],
					  sizeof(int64_t) * (size_t)(a->nbits[k] * a->nout)))
			return 0;
	}
	return 1;
}

void
lin_print(Buf *b, const LinLayout *L)
{
	int k, p, d;

	buf_printf(b, "\n");
	for (k = 0; k < L->nin; k++) {
		if (!L->nbits[k]) {
			buf_printf(b, " - %s is a size 1 dimension\n", L->in_name[k]);
			continue;
		}
		for (p = 0; p < L->nbits[k]; p++) {
			buf_printf(b, "%s%s=%lld -> (", p ? "   " : " - ", L->in_name[k],
				   (long long)1 << p);
			for (d = 0; d < L->nout; d++)
				buf_printf(b, "%s%lld", d ? ", " : "",
					   (long long)L->base[k][p * L->nout + d]);
			buf_printf(b, ")\n");
		}
	}
	buf_printf(b, "where out dims are: [");
	for (d = 0; d < L->nout; d++)
		buf_printf(b, "%sdim%d (size %lld)", d ? ", " : "", d, (long long)L->out_size[d]);
	buf_printf(b, "]");
}

int
lin_from_offsets(Arena *a, const int64_t *off_of_elem, const int64_t *shape, int rank,
		 LinLayout *out, Err *err)
{
	int64_t n = 1, i, *tab;
	int k, nb[2];

	if (!a || !off_of_elem || !shape || !out)
		return err_set(err, "linear layout: null argument");
	if (rank < 1 || rank > LAYOUT_MAXDIM)
		return err_set(err, "linear layout: rank %d out of range", rank);
	for (k = 0; k < rank; k++) {
		if (shape[k] < 1 || n > layout_enum_limit() / shape[k])
			return err_set(err, "linear layout: bad or too large shape");
		n *= shape[k];
	}
	if ((nb[0] = lg2(n)) < 0) {
		err_set(err, "%lld elements is not a power of two", (long long)n);
		return 0;
	}
	nb[1] = 0;
	tab = anewn(a, int64_t, (size_t)n);
	for (i = 0; i < n; i++)
		tab[i] = -1;
	for (i = 0; i < n; i++) {
		if (off_of_elem[i] < 0 || off_of_elem[i] >= n || tab[off_of_elem[i]] >= 0) {
			err_set(err, "offset %lld holds two elements or is out of range",
				(long long)off_of_elem[i]);
			return 0;
		}
		tab[off_of_elem[i]] = i;
	}
	return from_bits(a, tab, 2, buf_names, nb, shape, rank, out, err);
}
