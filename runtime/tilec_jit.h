/*
 * tilec_jit.h: the public JIT runtime of tilec. It compiles CUDA C (NVRTC) or
 * HIP C (hipRTC, in a child process) into a module, caches the result in
 * memory and on disk, loads CUDA modules with the driver and launches kernels
 * with typed arguments. libnvrtc, libcuda and libamdhip64 are loaded with
 * dlopen: without them every call returns a clear error, nothing crashes.
 */
#ifndef TILEC_JIT_H
#define TILEC_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "tilec_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every function that can fail returns a tilec_status (tilec_status.h):
 * TILEC_OK, or a negative TILEC_ERR_*. Functions that take `char **err`
 * store a malloc'd message there on failure (the caller frees it); err may be
 * NULL. On success *err is left unchanged.
 */

/* ---- a runtime instance -------------------------------------------------- */

typedef struct tilec_jit tilec_jit;       /* caches, options, statistics */
typedef struct tilec_module tilec_module; /* compiled code (+ loaded CUDA module) */

/*
 * Options; a zeroed struct (or NULL) gives the defaults. Paths override the
 * dlopen search (for tests and odd installs); the environment variables
 * TILEC_NVRTC_PATH, TILEC_LIBCUDA_PATH, TILEC_HIP_PATH and TILEC_CACHE_DIR
 * are used when the field is NULL.
 */
typedef struct tilec_jit_options {
	const char *cache_dir;   /* NULL: $TILEC_CACHE_DIR, else ~/.cache/tilec */
	int no_disk_cache;       /* 1: memory cache only */
	size_t mem_cache_bytes;  /* memory cache limit; 0: 256 MiB. Oldest entries go first */
	int device;              /* CUDA device ordinal for load/launch (default 0) */
	int hip_timeout_ms;      /* hipRTC child process limit; 0: 120000 */
	const char *nvrtc_path;  /* NULL: libnvrtc.so.13, libnvrtc.so, /usr/local/cuda/lib64/... */
	const char *libcuda_path;/* NULL: libcuda.so.1 */
	const char *hip_path;    /* NULL: libamdhip64.so.5, libamdhip64.so */
} tilec_jit_options;

/* cache statistics since tilec_jit_create */
typedef struct tilec_jit_stats {
	uint64_t compiles;     /* real compiler runs (cache misses that compiled) */
	uint64_t mem_hits;     /* served from the in-memory cache */
	uint64_t disk_hits;    /* served from the on-disk cache */
	uint64_t disk_writes;  /* entries written to disk */
	uint64_t disk_corrupt; /* disk entries rejected (truncated, bad checksum) and rebuilt */
	uint64_t disk_errors;  /* disk cache I/O failures (not fatal: the compile still succeeds) */
	uint64_t mem_evictions;/* entries dropped from memory to stay under mem_cache_bytes */
	uint64_t tile_hits;    /* tile compiles whose CUDA C came from the jit's DSL -> CUDA memo */
} tilec_jit_stats;

/* A new runtime instance in *out (opt NULL: the defaults). The libraries are
 * loaded on first use, so this fails only on bad options or memory. */
tilec_status tilec_jit_create(tilec_jit **out, const tilec_jit_options *opt, char **err);
void tilec_jit_destroy(tilec_jit *j); /* modules must be freed first; NULL is fine */
/* copy the cache statistics into *st */
tilec_status tilec_jit_stats_get(const tilec_jit *j, tilec_jit_stats *st);
/* the cache directory in use, or NULL when the disk cache is off */
const char *tilec_jit_cache_dir(const tilec_jit *j);

/* ---- compiling ------------------------------------------------------------ */

/*
 * Compile CUDA C with NVRTC. arch: "sm_80", "sm_90a", ... (a cubin, plus its
 * PTX), "compute_90a" (PTX only), or NULL for the architecture of the loaded
 * device (needs libcuda). extra_opts are passed to NVRTC after
 * --gpu-architecture. Safe to call from many threads at once; identical
 * requests share one compile.
 * On TILEC_OK *out is a module. On TILEC_ERR_COMPILE *out is also set: a
 * module without a binary whose log and source explain the error (free it).
 * On any other error *out is NULL.
 */
tilec_status tilec_jit_compile_cuda(tilec_jit *j, const char *cuda_src, const char *arch,
                           const char *const *extra_opts, int nopts,
                           tilec_module **out, char **err);
/*
 * In-memory headers: the source can #include "name" and gets `source`
 * (NVRTC and hipRTC take headers this way; no files are written). Names and
 * contents are part of the cache key.
 */
typedef struct tilec_header {
	const char *name;   /* as written in #include "..." */
	const char *source;
} tilec_header;

tilec_status tilec_jit_compile_cuda_ex(tilec_jit *j, const char *cuda_src, const char *arch,
                              const char *const *extra_opts, int nopts,
                              const tilec_header *headers, int nheaders,
                              tilec_module **out, char **err);

/* the same, reading the source from a file */
tilec_status tilec_jit_compile_cuda_file(tilec_jit *j, const char *path, const char *arch,
                                const char *const *extra_opts, int nopts,
                                tilec_module **out, char **err);

/*
 * Compile HIP C with hipRTC in a child process (a crash of the compiler
 * cannot take the caller down). arch: "gfx90a", "gfx908", a target ID such as
 * "gfx90a:sramecc+:xnack-". Architectures the local hipRTC does not know
 * (gfx942 and gfx1100 with ROCm 5.2) give TILEC_ERR_ARCH without compiling.
 * *out as for tilec_jit_compile_cuda.
 */
tilec_status tilec_jit_compile_hip(tilec_jit *j, const char *hip_src, const char *arch,
                          const char *const *extra_opts, int nopts,
                          tilec_module **out, char **err);
tilec_status tilec_jit_compile_hip_ex(tilec_jit *j, const char *hip_src, const char *arch,
                             const char *const *extra_opts, int nopts,
                             const tilec_header *headers, int nheaders,
                             tilec_module **out, char **err);

/* ---- modules ----------------------------------------------------------------- */

enum { TILEC_CACHE_NONE = 0, TILEC_CACHE_MEM = 1, TILEC_CACHE_DISK = 2 };
enum { TILEC_BIN_NONE = 0, TILEC_BIN_CUBIN = 1, TILEC_BIN_PTX = 2, TILEC_BIN_HSACO = 3 };

void tilec_module_free(tilec_module *m);          /* unloads it too; NULL is fine */
int tilec_module_ok(const tilec_module *m);       /* 1 if it holds a binary */
const char *tilec_module_log(const tilec_module *m);    /* compiler log ("" if none) */
const char *tilec_module_source(const tilec_module *m); /* the source compiled */
const char *tilec_module_arch(const tilec_module *m);   /* the architecture compiled for */
/* the binary to load: cubin (sm_*), PTX (compute_*) or AMD code object */
const void *tilec_module_binary(const tilec_module *m, size_t *size);
int tilec_module_binary_kind(const tilec_module *m);    /* TILEC_BIN_* */
const char *tilec_module_ptx(const tilec_module *m);    /* CUDA PTX text, or NULL */
int tilec_module_cache_source(const tilec_module *m);   /* TILEC_CACHE_*: where it came from */
/* the 64 hex digits of the cache key */
const char *tilec_module_key(const tilec_module *m);

/* ---- CUDA driver: load and launch ------------------------------------------ */

/*
 * Load a CUDA module into the primary context of the jit's device. Needs
 * libcuda.so.1; without it: TILEC_ERR_NOLIB, "libcuda.so.1 not found (no
 * NVIDIA driver)". Loading twice is a no-op. HIP modules give TILEC_ERR_ARG.
 */
tilec_status tilec_module_load(tilec_module *m, char **err);

/*
 * Look kernel `name` up in a module (loading it first if needed) and return
 * its CUfunction, for callers that launch with the driver API themselves.
 * TILEC_ERR_NOTFOUND if the module has no such kernel.
 */
tilec_status tilec_module_kernel(tilec_module *m, const char *name, void **cufunction, char **err);

/* a kernel argument: build them with the helpers below */
enum { TILEC_ARG_PTR = 1, TILEC_ARG_I32, TILEC_ARG_I64, TILEC_ARG_F32, TILEC_ARG_F16 };
typedef struct tilec_arg {
	int kind; /* TILEC_ARG_* */
	union {
		void *ptr;     /* device pointer (CUdeviceptr) */
		int32_t i32;
		int64_t i64;
		float f32;
		uint16_t f16;  /* IEEE half bits */
		uint64_t raw;
	} v;
} tilec_arg;

static inline tilec_arg
tilec_arg_ptr(void *p)
{
	tilec_arg a;

	a.kind = TILEC_ARG_PTR;
	a.v.raw = 0;
	a.v.ptr = p;
	return a;
}

static inline tilec_arg
tilec_arg_i32(int32_t x)
{
	tilec_arg a;

	a.kind = TILEC_ARG_I32;
	a.v.raw = 0;
	a.v.i32 = x;
	return a;
}

static inline tilec_arg
tilec_arg_i64(int64_t x)
{
	tilec_arg a;

	a.kind = TILEC_ARG_I64;
	a.v.raw = 0;
	a.v.i64 = x;
	return a;
}

static inline tilec_arg
tilec_arg_f32(float x)
{
	tilec_arg a;

	a.kind = TILEC_ARG_F32;
	a.v.raw = 0;
	a.v.f32 = x;
	return a;
}

static inline tilec_arg
tilec_arg_f16(uint16_t bits)
{
	tilec_arg a;

	a.kind = TILEC_ARG_F16;
	a.v.raw = 0;
	a.v.f16 = bits;
	return a;
}

/*
 * Launch kernel `name` (extern "C" name) of a loaded module on `stream` (a
 * CUstream, NULL for the default stream). shmem bytes of dynamic shared
 * memory; above 48 KiB the kernel's limit is raised first. At most 64 args.
 * A persistent kernel of a tile module (tilec_options.persistent; its launch contract
 * says so) takes grid as the grid of its sizes (X, Y, Z) and is launched with
 * (min(X Y, SMs x the blocks that fit an SM), 1, Z) blocks.
 */
tilec_status tilec_launch(tilec_module *m, const char *name, const unsigned grid[3],
                 const unsigned block[3], unsigned shmem, void *stream,
                 const tilec_arg *args, int nargs, char **err);

/* small device-memory helpers for host programs and GPU tests (need libcuda):
 * cuMemAlloc / cuMemFree / cuMemcpyHtoD / cuMemcpyDtoH / cuCtxSynchronize in the
 * primary context of the jit's device */
tilec_status tilec_dev_alloc(tilec_jit *j, void **dptr, size_t bytes, char **err);
tilec_status tilec_dev_free(tilec_jit *j, void *dptr, char **err);
tilec_status tilec_dev_upload(tilec_jit *j, void *dptr, const void *host, size_t bytes, char **err);
tilec_status tilec_dev_download(tilec_jit *j, void *host, const void *dptr, size_t bytes, char **err);
tilec_status tilec_dev_sync(tilec_jit *j, char **err);
/* "sm_90a" for the jit's device (sm_9x gets the "a" suffix); needs libcuda */
tilec_status tilec_dev_arch(tilec_jit *j, char *buf, size_t bufsz, char **err);

/* versions of the libraries found ("13.0"); TILEC_ERR_NOLIB if absent */
tilec_status tilec_nvrtc_version(tilec_jit *j, int *major, int *minor, char **err);

#ifdef __cplusplus
}
#endif
#endif
