/*
 * tile_glue.c: the one runtime file that sees tilec.h (its status names
 * clash with tilec_jit.h's): runs tilec_compile to CUDA C for the JIT and
 * hands back the output or the diagnostics as malloc'd strings.
 */
#include <stddef.h>
#include <stdio.h>
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
	if (st == TILEC_ERR_NOMEM) {
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

/* append "tag=<length>:<bytes>;" so that no two option sets give the same string */
static int
field(char **s, size_t *n, const char *tag, const char *v)
{
	size_t vl = v ? strlen(v) : 0, need = *n + strlen(tag) + vl + 32;
	char *t = realloc(*s, need);

	if (!t)
		return -1;
	*s = t;
	*n += (size_t)snprintf(t + *n, need - *n, "%s=%s%zu:", tag, v ? "" : "null", vl);
	memcpy(t + *n, v ? v : "", vl);
	*n += vl;
	t[(*n)++] = ';';
	t[*n] = 0;
	return 0;
}

int
rt_tile_optstr(const struct tilec_options *opt, const char *filename, const char *arch,
               char **str)
{
	tilec_options o;
	char num[64];
	size_t n = 0;
	int i;

	*str = NULL;
	if (opt)
		o = *opt;
	else
		tilec_options_init(&o);
	if (o.nplugins || o.pass_hook || o.print_before || o.print_after || o.print_passes)
		return 1;
	if (o.ndefines < 0 || (o.ndefines && !o.defines))
		return 1; /* tilec_compile reports it */
	if (!o.filename)
		o.filename = filename;
	if (!o.arch)
		o.arch = arch && tilec_arch_valid(TILEC_TARGET_CUDA, arch) ? arch : "sm_80";
	/* every option that can change the code is in the key: a new field of tilec_options goes
	 * here (or into the refusals above) and then into the size below */
	_Static_assert((sizeof(tilec_options) == 128 && offsetof(tilec_options, epilogue) == 124) ||
			       sizeof(void *) != 8,
		       "tilec_options changed: key its new field in rt_tile_optstr");
	snprintf(num, sizeof num, "%d,%d,%d,%d,%d,%d,%d,%d", (int)o.cost_model, o.caret, o.ndefines, o.tma,
		 o.warp_specialize, o.raster_group, o.persistent, o.epilogue);
	if (field(str, &n, "version", tilec_version()) || field(str, &n, "arch", o.arch) ||
	    field(str, &n, "file", o.filename) || field(str, &n, "ints", num))
		goto oom;
	for (i = 0; i < o.ndefines; i++)
		if (field(str, &n, "D", o.defines[i]))
			goto oom;
	return 0;
oom:
	free(*str);
	*str = NULL;
	return -1;
}
