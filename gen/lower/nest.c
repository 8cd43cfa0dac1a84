/*
 * nest.c: the iteration space of nest statements (see infer.h): what
 * inference, the cost model and the lowering agree a COPY, FILL or PARALLEL
 * loops over.
 */
#include "infer.h"

int
nest_region_dim(const Region *r, int k)
{
	int d, seen = 0;

	for (d = 0; d < r->ndim; d++)
		if (r->ext[d] != 1 && seen++ == k)
			return d;
	return -1;
}

static int
region_shape(const Region *r, int64_t *ext)
{
	int d, n = 0;

	for (d = 0; d < r->ndim; d++)
		if (r->ext[d] != 1)
			ext[n++] = r->ext[d];
	if (n == 0)
		ext[n++] = 1;
	return n;
}

int
nest_shape(const IrStmt *s, int64_t *ext)
{
	int k;

	switch (s->kind) {
	case S_PARALLEL:
		for (k = 0; k < s->u.par.n; k++)
			ext[k] = s->u.par.ext[k];
		return s->u.par.n;
	case S_COPY:
		return region_shape(&s->u.copy.dst, ext);
	case S_FILL:
		return region_shape(&s->u.fill.dst, ext);
	default:
		return 0;
	}
}
