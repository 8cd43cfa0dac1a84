/*
 * rt.h: interfaces between the files of the JIT runtime (the .c files of runtime/):
 * SHA-256 (hash.c), compiled blobs and the two-level cache (cache.c), the
 * dlopen'd compilers (nvrtc.c, hiprtc.c) and the driver (cudadrv.c).
 * Not installed; the public API is tilec_jit.h.
 */
#ifndef RT_H
#define RT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "tilec_jit.h"

#ifndef countof
#define countof(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- errors ---------------------------------------------------------------- */

/* store a malloc'd message in *err (if err) and return status */
int rt_err(char **err, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *rt_strdup(const char *s); /* NULL-safe */

/* ---- SHA-256 (hash.c) ------------------------------------------------------- */

typedef struct Sha256 {
	uint32_t h[8];
	uint64_t len;        /* bytes hashed so far */
	unsigned char blk[64];
	size_t fill;
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *p, size_t n);
void sha256_final(Sha256 *s, unsigned char out[32]);
void sha256(const void *p, size_t n, unsigned char out[32]);
void sha256_hex(const unsigned char d[32], char out[65]);
/* length-prefixed field: hashing ("ab","c") differs from ("a","bc") */
void sha256_field(Sha256 *s, const void *p, size_t n);
void sha256_str(Sha256 *s, const char *str); /* NULL hashes as a distinct marker */

/* ---- compiled blobs ----------------------------------------------------------- */

enum { BLOB_BIN, BLOB_PTX, BLOB_LOG, NBLOB };
/* binkind of a disk entry whose BLOB_BIN is the CUDA C of a tile source (jit_tile.c's memo;
 * its keys are hashed apart from the module keys) */
enum { RT_BIN_TILE_CUDA = 100 };

typedef struct Blobs {
	unsigned char *p[NBLOB]; /* malloc'd, each NUL-terminated (not counted in n) */
	size_t n[NBLOB];
	int binkind;             /* TILEC_BIN_* */
} Blobs;

void blobs_free(Blobs *b);
int blobs_copy(Blobs *dst, const Blobs *src);          /* 0 or -1 (no memory) */
int blobs_set(Blobs *b, int i, const void *p, size_t n); /* copies; 0 or -1 */

/* ---- cache (cache.c) --------------------------------------------------------- */

typedef struct Cache Cache;

/*
 * What a disk entry must hold to be used: its binary kind (TILEC_BIN_* or RT_BIN_TILE_CUDA),
 * the request's target (the arch) and the compiler that made it ("tilec 0.1.0 nvrtc 13.0").
 * Both strings are recorded in the entry; each is shorter than 64 bytes or the disk is skipped.
 */
typedef struct DiskWant {
	int kind;
	const char *target;
	const char *compiler;
} DiskWant;

enum { CACHE_MISS, CACHE_HIT_MEM, CACHE_HIT_DISK };

Cache *cache_new(const char *dir); /* dir NULL: memory only */
void cache_set_limit(Cache *c, size_t maxbytes); /* memory cache bytes; the oldest go first */
void cache_free(Cache *c);
const char *cache_dir(const Cache *c);
/*
 * Look key up. A hit copies the blobs into *out. A miss makes the caller the
 * owner of the key: it must call cache_put or cache_abandon; others asking
 * for the same key meanwhile wait for it.
 */
int cache_get(Cache *c, const unsigned char key[32], const DiskWant *want, Blobs *out);
void cache_put(Cache *c, const unsigned char key[32], const DiskWant *want, const Blobs *b);
void cache_abandon(Cache *c, const unsigned char key[32]);
void cache_stats(Cache *c, tilec_jit_stats *st);
void cache_count_compile(Cache *c);

/*
 * disk entries (cache.c): 0 ok, 1 absent (or the directory is not trusted), 2 refused (corrupt,
 * not a regular file, foreign owner, other kind/target/compiler: the file was removed).
 * The directory is trusted when it is owned by the effective user and not writable by group or
 * others, or when TILEC_CACHE_SHARED=1; entries must be owned by the effective user unless
 * TILEC_CACHE_SHARED=1.
 */
int disk_read(const char *dir, const unsigned char key[32], const DiskWant *want, Blobs *out);
int disk_write(const char *dir, const unsigned char key[32], const DiskWant *want, const Blobs *b);
int disk_dir_trusted(const char *dir); /* 1 or 0 */
/* for tests and the fuzzer: the header size, and an entry image given key's name and a
 * matching checksum (the rest of it as it is) */
size_t disk_header_size(void);
void disk_seal(unsigned char *entry, size_t n, const unsigned char key[32]);
int disk_mkdirs(const char *dir); /* mkdir -p, new directories 0700; 0 or -1 */

/* ---- NVRTC (nvrtc.c) ----------------------------------------------------------- */

typedef struct Nvrtc Nvrtc;

int nvrtc_open(const char *path, Nvrtc **out, char **err); /* path NULL: default search */
void nvrtc_version(const Nvrtc *nv, int *major, int *minor);
/* TILEC_OK (blobs filled), TILEC_ERR_COMPILE (log in blobs), or another error */
int nvrtc_compile(const Nvrtc *nv, const char *src, const char *arch, const char *const *opts,
                  int nopts, const tilec_header *hdrs, int nhdrs, Blobs *out, char **err);
int arch_cuda_valid(const char *arch);

/* ---- CUDA driver (cudadrv.c) --------------------------------------------------- */

typedef struct Cuda Cuda;

int cuda_open(const char *path, Cuda **out, char **err);
int cuda_ctx(Cuda *cu, int device, void **ctx, char **err);      /* primary context, made current */
int cuda_arch(Cuda *cu, int device, char *buf, size_t n, char **err);
int cuda_load(Cuda *cu, void *ctx, const Blobs *b, void **mod, char **err);
void cuda_unload(Cuda *cu, void *ctx, void *mod);
int cuda_function(Cuda *cu, void *ctx, void *mod, const char *name, void **fn, char **err);
/* a TMA tensor map to encode (tma_args.c): base, dims (dim[0] innermost), the row stride in
 * bytes, the box, element bytes, the swizzle in bytes (0: none) */
typedef struct TmaReq {
	void *base;
	int rank;                      /* 2 or 3 */
	unsigned long long dim[3], stride[2]; /* stride[1]: bytes between planes (rank 3) */
	unsigned box[3];
	int esize, swizzle;
} TmaReq;

/* the tensor maps kernel `name` of the CUDA C src takes after args[0..nargs) (its "tensor map"
 * lines), into out[0..max): their number (0: none), or -1 with err (a wrong argument count,
 * a map whose tensor or size is not among the arguments) */
int tma_args(const char *src, const char *name, const tilec_arg *args, int nargs, TmaReq *out, int max,
             char **err);

/* launch fn with args, then the nmaps tensor maps of maps (encoded here with
 * cuTensorMapEncodeTiled; one whose rows are not whole 16-byte chunks or whose tensor is empty
 * is passed zeroed: the kernel's element-by-element path does not read it) */
int cuda_launch(Cuda *cu, void *ctx, void *fn, const unsigned grid[3], const unsigned block[3],
                unsigned shmem, void *stream, const tilec_arg *args, int nargs, const TmaReq *maps, int nmaps,
                char **err);
int cuda_mem(Cuda *cu, void *ctx, int op, void *a, const void *b, size_t n, char **err);
/* 1 when kernel name's launch contract in src says persistent (jit_tile.c) */
int rt_persistent(const char *src, const char *name);
/* the launch grid of a persistent kernel (its contract says so) for its grid (X, Y, Z) of the
 * sizes: (min(X Y, SMs x blocks of `block` threads and shmem bytes per SM), 1, Z) */
int cuda_persistent_grid(Cuda *cu, void *ctx, void *fn, const unsigned block[3], unsigned shmem, unsigned grid[3],
                         char **err);
enum { MEM_ALLOC, MEM_FREE, MEM_HTOD, MEM_DTOH, MEM_SYNC };

/* ---- hipRTC (hiprtc.c) ----------------------------------------------------------- */

typedef struct HipInfo {
	int ok;                 /* the probe ran and libamdhip64 was found */
	int major, minor;       /* hiprtcVersion */
	char *isas;             /* space-separated processor names comgr knows */
	char *path;             /* libamdhip64 path asked for, or NULL */
	int sock, pid;          /* the server child and its request channel */
	int dead;               /* the server stopped answering: compile directly */
	pthread_mutex_t mu;     /* one request at a time on sock */
	int mu_init;
} HipInfo;

/* start the server child: version and ISA list, then it takes compile requests */
int hip_probe(const char *path, int timeout_ms, HipInfo *out, char **err);
void hip_info_free(HipInfo *h);
int arch_hip_valid(const char *arch);
int hip_arch_known(const HipInfo *h, const char *arch); /* processor part in the list */
/* through the server of h if it runs, else in a child forked for this compile (h may be NULL) */
int hip_compile(HipInfo *h, const char *path, int timeout_ms, const char *src, const char *arch,
                const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs,
                Blobs *out, char **err);
/* the name and source arrays NVRTC/hipRTC take; 0, or -1 without memory */
/* jit.c, for jit_tile.c */
int rt_module_failed(tilec_jit *j, const char *src, const char *arch, const char *log,
                     tilec_module **out, char **err);
void rt_module_set_tile(tilec_module *m);

int headers_split(const tilec_header *hdrs, int nhdrs, const char ***names, const char ***srcs);

/* ---- DSL -> CUDA memo (jit_tile.c): one per jit ------------------------------------ */

typedef struct TileMemo TileMemo;

TileMemo *memo_new(void);           /* NULL without memory */
void memo_free(TileMemo *m);        /* NULL is fine */
uint64_t memo_hits(TileMemo *m);
TileMemo *rt_jit_memo(tilec_jit *j); /* jit.c */

#endif
