/*
 * tma_args.c: the TMA tensor maps of a tilec kernel launched through tilec_launch. A kernel
 * emitted with TMA loads takes one tensor map per "// kernel K: tensor map" line of its CUDA C
 * (gen/target/cuda/tmap.h) after its other parameters; the caller passes the other
 * parameters only, and the runtime reads the maps' tensors and sizes from those arguments
 * (by the names in the kernel's signature) and encodes them (cudadrv.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tmap.h"

/* the parameter names of kernel `name`'s definition in src, in order: their number, or -1 */
static int
params(const char *src, const char *name, char (*out)[64], int max)
{
	size_t nl = strlen(name);
	const char *p, *q;
	int n = 0;

	for (p = strstr(src, name); p; p = strstr(p + 1, name))
		if ((p == src || p[-1] == '\n') && p[nl] == '(')
			break;
	if (!p)
		return -1;
	for (p += nl + 1; *p && *p != ')'; p = *q == ',' ? q + 1 : q) {
		const char *e;

		for (q = p; *q && *q != ',' && *q != ')'; q++)
			;
		for (e = q; e > p && isspace((unsigned char)e[-1]); e--)
			;
		const char *b = e;

		while (b > p && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
			b--;
		if (b == e || e - b >= 64 || n == max)
			return -1;
		memcpy(out[n], b, (size_t)(e - b));
		out[n++][e - b] = 0;
	}
	return *p == ')' ? n : -1;
}

/* the value of map dimension d: an integer, or the I32/I64 argument of that name */
static int
dimval(const char *d, char (*names)[64], int nnames, const tilec_arg *args, int nargs, unsigned long long *v)
{
	int i;

	if (isdigit((unsigned char)d[0])) {
		*v = strtoull(d, NULL, 10);
		return 0;
	}
	for (i = 0; i < nnames && i < nargs; i++)
		if (!strcmp(names[i], d)) {
			long long x = args[i].kind == TILEC_ARG_I32 ? args[i].v.i32 : args[i].kind == TILEC_ARG_I64 ? args[i].v.i64 : -1;

			if (args[i].kind != TILEC_ARG_I32 && args[i].kind != TILEC_ARG_I64)
				return -1;
			*v = x < 0 ? 0 : (unsigned long long)x;
			return 0;
		}
	return -1;
}

int
tma_args(const char *src, const char *name, const tilec_arg *args, int nargs, TmaReq *out, int max, char **err)
{
	TmapDesc m[16];
	char names[80][64];
	int nm, np, i, j;

	if (!src || (nm = tmap_parse(src, name, m, 16)) == 0)
		return 0;
	if (nm < 0 || nm > max)
		return rt_err(err, TILEC_ERR_ARG, "kernel %s: a malformed tensor-map line in its CUDA C", name), -1;
	if ((np = params(src, name, names, 80)) < 0)
		return rt_err(err, TILEC_ERR_ARG, "kernel %s: its signature is not in the CUDA C", name), -1;
	if (nargs != np - nm)
		return rt_err(err, TILEC_ERR_ARG, "kernel %s takes %d arguments (its %d TMA tensor maps are made by the "
			      "runtime), not %d", name, np - nm, nm, nargs), -1;
	for (i = 0; i < nm; i++) {
		TmaReq *r = &out[i];

		memset(r, 0, sizeof *r);
		for (j = 0; j < nargs && strcmp(names[j], m[i].tensor); j++)
			;
		if (j == nargs || args[j].kind != TILEC_ARG_PTR)
			return rt_err(err, TILEC_ERR_ARG, "kernel %s: tensor map %s: argument %s is not a pointer", name,
				      m[i].name, m[i].tensor), -1;
		r->base = args[j].v.ptr;
		if (dimval(m[i].dim[0], names, np, args, nargs, &r->dim[0]) ||
		    dimval(m[i].dim[1], names, np, args, nargs, &r->dim[1]) ||
		    (m[i].rank == 3 && dimval(m[i].dim[2], names, np, args, nargs, &r->dim[2])) ||
		    dimval(m[i].rows, names, np, args, nargs, &r->stride[0]))
			return rt_err(err, TILEC_ERR_ARG, "kernel %s: tensor map %s: a dimension is not an integer argument",
				      name, m[i].name), -1;
		r->rank = m[i].rank;
		r->stride[0] *= (unsigned long long)m[i].esize;
		r->stride[1] = r->stride[0] * r->dim[1]; /* dense: a plane is dim[1] rows */
		r->esize = m[i].esize;
		r->box[0] = (unsigned)m[i].box[0], r->box[1] = (unsigned)m[i].box[1], r->box[2] = (unsigned)m[i].box[2];
		r->swizzle = m[i].swizzle;
	}
	return nm;
}
