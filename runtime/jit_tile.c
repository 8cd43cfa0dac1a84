/*
 * jit_tile.c: tile source -> JIT module. tilec emits CUDA C (tile_glue.c),
 * NVRTC compiles it with the embedded tilec_cuda.h; a tile error becomes a
 * module without a binary whose log is the diagnostics. The launch contract
 * (threads, dynamic smem) is read back from the emitted kernel comments.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tilec_tile.h"
#include "tileglue.h"

static int
tilefile(tilec_jit *j, const char *src, size_t len, const char *path,
         const struct tilec_options *opt, const char *arch, tilec_module **out, char **err)
{
	char devarch[32], *cuda, *diag, *tsrc;
	tilec_header h;
	int rc;

	if (out)
		*out = NULL;
	if (!j || !src || !out)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_compile_tile: NULL argument");
	if (!arch) {
		rc = tilec_dev_arch(j, devarch, sizeof devarch, err);
		if (rc != TILEC_OK)
			return rc;
		arch = devarch;
	}
	rc = rt_tile_to_cuda(src, len, opt, path, arch, &cuda, &diag);
	if (rc < 0)
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	if (rc > 0) {
		/* the module keeps the tile source (NUL bytes end it there) */
		tsrc = malloc(len + 1);
		if (!tsrc) {
			free(diag);
			return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
		}
		memcpy(tsrc, src, len);
		tsrc[len] = 0;
		rc = rt_module_failed(j, tsrc, arch, diag, out, err);
		free(tsrc);
		if (rc == TILEC_OK) {
			/* first line of the diagnostics as the message */
			size_t n = strcspn(diag, "\n");
			rc = rt_err(err, TILEC_ERR_COMPILE, "tile source did not compile: %.*s",
			            (int)(n > 400 ? 400 : n), diag);
		}
		free(diag);
		return rc;
	}
	h.name = "tilec_cuda.h";
	h.source = rt_tile_header();
	if (!h.source) {
		free(cuda);
		return rt_err(err, TILEC_ERR_ARG, "tilec_cuda.h is not embedded in this build");
	}
	rc = tilec_jit_compile_cuda_ex(j, cuda, arch, NULL, 0, &h, 1, out, err);
	free(cuda);
	if (*out)
		rt_module_set_tile(*out);
	return rc;
}

int
tilec_jit_compile_tile(tilec_jit *j, const char *src, size_t len, const struct tilec_options *opt,
                       const char *arch, tilec_module **out, char **err)
{
	return tilefile(j, src, len, NULL, opt, arch, out, err);
}

int
tilec_jit_compile_tile_file(tilec_jit *j, const char *path, const struct tilec_options *opt,
                            const char *arch, tilec_module **out, char **err)
{
	FILE *f;
	char *s = NULL, *t;
	size_t n = 0, cap = 0, r;
	int rc;

	if (out)
		*out = NULL;
	if (!path)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_compile_tile_file: NULL path");
	if (!(f = fopen(path, "rb")))
		return rt_err(err, TILEC_ERR_IO, "%s: cannot open", path);
	for (;;) {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			if (!(t = realloc(s, cap))) {
				free(s);
				fclose(f);
				return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
			}
			s = t;
		}
		r = fread(s + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		free(s);
		fclose(f);
		return rt_err(err, TILEC_ERR_IO, "%s: read error", path);
	}
	fclose(f);
	rc = tilefile(j, s, n, path, opt, arch, out, err);
	free(s);
	return rc;
}

int
tilec_module_launch_info(const tilec_module *m, const char *name, unsigned *threads,
                         size_t *smem_bytes)
{
	static const char tag[] = "// kernel ";
	const char *p, *src;
	size_t nl;
	unsigned long t;
	unsigned long long b;
	int k;

	if (!m || !name || !*name)
		return TILEC_ERR_ARG;
	if (!tilec_module_from_tile(m))
		return TILEC_ERR_NOTFOUND;
	src = tilec_module_source(m);
	nl = strlen(name);
	for (p = strstr(src, tag); p; p = strstr(p + 1, tag)) {
		if (p != src && p[-1] != '\n')
			continue;
		p += sizeof tag - 1;
		if (strncmp(p, name, nl) != 0 || p[nl] != ':')
			continue;
		k = 0;
		if (sscanf(p + nl, ": %lu threads, %llu bytes of dynamic shared memory%n", &t, &b, &k) < 2
		    || k == 0)
			return TILEC_ERR_NOTFOUND;
		if (threads)
			*threads = (unsigned)t;
		if (smem_bytes)
			*smem_bytes = (size_t)b;
		return TILEC_OK;
	}
	return TILEC_ERR_NOTFOUND;
}
