/*
 * tileglue.h: private bridge between tilec.h (tile_glue.c) and the JIT
 * runtime (jit_tile.c); it includes neither, since their status enums clash.
 */
#ifndef TILEGLUE_H
#define TILEGLUE_H

#include <stddef.h>

struct tilec_options;

/* 0: *cuda is the CUDA C; 1: tile error, *diag the diagnostics; -1: out of memory */
int rt_tile_to_cuda(const char *src, size_t len, const struct tilec_options *opt,
                    const char *filename, const char *arch, char **cuda, char **diag);
const char *rt_tile_header(void); /* the embedded tilec_cuda.h */
int rt_tile_arch_valid(const char *arch);
/*
 * Everything tilec_compile reads from opt besides the source, as one string (the memo's
 * key): 0 and *str malloc'd; 1 when the compile must not be memoized (plugins, a pass
 * hook, IR printing); -1 without memory.
 */
int rt_tile_optstr(const struct tilec_options *opt, const char *filename, const char *arch,
                   char **str);

#endif
