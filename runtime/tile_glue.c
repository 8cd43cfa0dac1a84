/*
 * tile_glue.c: the one runtime file that sees tilec.h (its status names
 * clash with tilec_jit.h's): runs tilec_compile to CUDA C for the JIT and
 * hands back the output or the diagnostics as malloc'd strings.
 */
#include <stdlib.h>
#include <string.h>

#include "tilec.h"
#include "tileglue.h"

const char *tilec_template(const char *name);

static char *
dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	return p ? memcpy(p, s, n) : NULL;
}

int
rt_tile_to_cuda(const char *src, size_t len, const struct tilec_options *opt,
                const char *filename, const char *arch,
                char **cuda, char **diag)
{
	tilec_options o;
	tilec_result r;
	tilec_status st;

	*cuda = *diag = NULL;
	if (opt)
		o = *opt;
	else
		tilec_options_init(&o);
	if (!o.filename)
		o.filename = filename;
	o.target = TILEC_TARGET_CUDA;
	o.dump = TILEC_DUMP_CUDA;
	o.print_passes = 0;
	o.layout_dump_to_output = 0;
	if (!o.arch)
		o.arch = arch && tilec_arch_valid(TILEC_TARGET_CUDA, arch) ? arch : "sm_80";
	memset(&r, 0, sizeof r);
	st = tilec_compile(src, len, &o, &r);
	if (st == TILEC_NOMEM) {
		tilec_result_free(&r);
		return -1;
	}
	if (st == TILEC_OK) {
		*cuda = dup(r.output);
		tilec_result_free(&r);
		return *cuda ? 0 : -1;
	}
	*diag = dup(r.diagnostics && *r.diagnostics ? r.diagnostics
	                                                   : "tilec: the options were rejected\n");
	tilec_result_free(&r);
	return *diag ? 1 : -1;
}

const char *
rt_tile_header(void)
{
	return tilec_template("tilec_cuda.h");
}

int
rt_tile_arch_valid(const char *arch)
{
	return arch && tilec_arch_valid(TILEC_TARGET_CUDA, arch);
}
