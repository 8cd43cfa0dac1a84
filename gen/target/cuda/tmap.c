/*
 * tmap.c: reading the tensor-map lines of the emitted CUDA C (tmap.h); the C renderer
 * (gen/target/c/render_c.c) writes them.
 */
#include <stdio.h>
#include <string.h>

#include "tmap.h"

int
tmap_parse(const char *code, const char *kernel, TmapDesc *out, int max)
{
	char tag[128], swz[8];
	const char *p;
	size_t tl;
	int n = 0, len;

	if (!code || !kernel || strlen(kernel) > 100)
		return -1;
	snprintf(tag, sizeof tag, "// kernel %s: tensor map ", kernel);
	tl = strlen(tag);
	for (p = strstr(code, tag); p; p = strstr(p + 1, tag)) {
		TmapDesc d;

		if (p != code && p[-1] != '\n')
			continue;
		memset(&d, 0, sizeof d);
		len = 0;
		d.rank = 2, d.box[2] = 1;
		if (sscanf(p + tl,
			   "%63[A-Za-z0-9_] of %63[A-Za-z0-9_]: %d-byte elements, dims (%63[A-Za-z0-9_], %63[A-Za-z0-9_]), "
			   "rows of %63[A-Za-z0-9_] elements, box (%lld, %lld), swizzle %7[a-z0-9B]%n",
			   d.name, d.tensor, &d.esize, d.dim[0], d.dim[1], d.rows, &d.box[0], &d.box[1], swz, &len) != 9 ||
		    !len) {
			memset(&d, 0, sizeof d);
			len = 0;
			d.rank = 3;
			if (sscanf(p + tl,
				   "%63[A-Za-z0-9_] of %63[A-Za-z0-9_]: %d-byte elements, dims (%63[A-Za-z0-9_], "
				   "%63[A-Za-z0-9_], %63[A-Za-z0-9_]), rows of %63[A-Za-z0-9_] elements, box (%lld, %lld, "
				   "%lld), swizzle %7[a-z0-9B]%n",
				   d.name, d.tensor, &d.esize, d.dim[0], d.dim[1], d.dim[2], d.rows, &d.box[0], &d.box[1],
				   &d.box[2], swz, &len) != 11 ||
			    !len)
				return -1;
		}
		if (p[tl + len] != '\n' && p[tl + len] != '\0')
			return -1;
		if (!strcmp(swz, "none"))
			d.swizzle = 0;
		else if (!strcmp(swz, "32B"))
			d.swizzle = 32;
		else if (!strcmp(swz, "64B"))
			d.swizzle = 64;
		else if (!strcmp(swz, "128B"))
			d.swizzle = 128;
		else
			return -1;
		if (d.esize < 1 || d.esize > 8 || d.box[0] < 1 || d.box[0] > 256 || d.box[1] < 1 || d.box[1] > 256 ||
		    d.box[2] < 1 || d.box[2] > 256)
			return -1;
		if (n == max)
			return -1;
		out[n++] = d;
	}
	return n;
}
