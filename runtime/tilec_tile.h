/*
 * tilec_tile.h: tile source to a loaded-ready JIT module. tilec generates
 * CUDA C from the tile program, NVRTC compiles it (with the embedded
 * tilec_cuda.h) for the requested or the device's architecture. The module
 * keeps the diagnostics (tile errors or the NVRTC log) and the source.
 */
#ifndef TILEC_TILE_H
#define TILEC_TILE_H

#include "tilec_jit.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tilec_options; /* tilec.h; NULL gives the defaults */

/*
 * Compile tile source src[0..len) into *out. opt: tilec's options (target is
 * forced to cuda and dump to CUDA C; other fields are used as given; NULL:
 * defaults). arch: the NVRTC architecture ("sm_80", "sm_90a", ...) or NULL for
 * the device's; tilec generates code for opt->arch when set, else for arch
 * when tilec knows it, else for sm_80.
 * Returns TILEC_OK with *out a module; TILEC_ERR_COMPILE with *out a module
 * without a binary: a tile error (tilec_module_log gives the "file:line:col:
 * error: ..." diagnostics, tilec_module_source the tile source) or an NVRTC
 * error (the NVRTC log and the generated CUDA C); other errors: *out is NULL.
 */
tilec_status tilec_jit_compile_tile(tilec_jit *j, const char *src, size_t len,
                           const struct tilec_options *opt, const char *arch,
                           tilec_module **out, char **err);
/* the same, reading the tile source from path (also the diagnostics' file name
 * unless opt->filename is set) */
tilec_status tilec_jit_compile_tile_file(tilec_jit *j, const char *path,
                                const struct tilec_options *opt, const char *arch,
                                tilec_module **out, char **err);

/* 1 if the module's source is tilec's CUDA C (the tile compile succeeded) */
int tilec_module_from_tile(const tilec_module *m);

/*
 * The launch contract of kernel `name` from the generated CUDA C: threads per
 * block and dynamic shared memory bytes. TILEC_ERR_NOTFOUND if no such kernel.
 */
tilec_status tilec_module_launch_info(const tilec_module *m, const char *name, unsigned *threads,
                             size_t *smem_bytes);

#ifdef __cplusplus
}
#endif

#endif
