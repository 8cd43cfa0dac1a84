/*
 * jit.c: the public JIT API (tilec_jit.h): runtime instances, the compile
 * path shared by CUDA and HIP (key, cache lookup, compile, cache fill),
 * module accessors, and load/launch on top of cudadrv.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tilec_tile.h"
#include "tl.h"

enum { LANG_CUDA = 1, LANG_HIP = 2 };

struct tilec_jit {
	Cache *cache;
	int device, hip_timeout_ms;
	char *nvrtc_path, *libcuda_path, *hip_path;
	pthread_mutex_t mu;      /* the HIP probe */
	int hip_probed, hip_st;
	char *hip_err;
	HipInfo hip;
	TileMemo *memo;          /* tile source -> CUDA C (jit_tile.c) */
};

typedef struct Fn {
	char *name;
	void *fn;
	struct Fn *next;
} Fn;

struct tilec_module {
	tilec_jit *j;
	int lang, from;
	char *source, *arch;
	char key[65];
	Blobs b;
	pthread_mutex_t mu;      /* load and function lookup */
	Cuda *cu;
	void *ctx, *mod;
	Fn *fns;
	int tile;               /* 1: source is tilec's CUDA C (jit_tile.c) */
};

static const char *
envor(const char *v, const char *env)
{
	const char *e;

	if (v && *v)
		return v;
	e = getenv(env);
	return e && *e ? e : NULL;
}

tilec_status
tilec_jit_create(tilec_jit **out, const tilec_jit_options *opt, char **err)
{
	static const tilec_jit_options defaults;
	const char *dir = NULL, *home;
	char *homedir = NULL;
	tilec_jit *j;

	if (!out)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_create: out is NULL");
	*out = NULL;
	if (!opt)
		opt = &defaults;
	if (opt->device < 0 || opt->hip_timeout_ms < 0)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_create: negative device or timeout");
	if (!opt->no_disk_cache) {
		dir = envor(opt->cache_dir, "TILEC_CACHE_DIR");
		if (!dir && (home = getenv("HOME")) && *home) {
			size_t n = strlen(home) + 16;

			if (!(homedir = malloc(n)))
				return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
			snprintf(homedir, n, "%s/.cache/tilec", home);
			dir = homedir;
		}
	}
	j = calloc(1, sizeof *j);
	if (!j || !(j->cache = cache_new(dir)) || !(j->memo = memo_new())) {
		if (j)
			cache_free(j->cache);
		free(j);
		free(homedir);
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	}
	free(homedir);
	if (opt->mem_cache_bytes)
		cache_set_limit(j->cache, opt->mem_cache_bytes);
	j->device = opt->device;
	j->hip_timeout_ms = opt->hip_timeout_ms ? opt->hip_timeout_ms : 120000;
	j->nvrtc_path = rt_strdup(envor(opt->nvrtc_path, "TILEC_NVRTC_PATH"));
	j->libcuda_path = rt_strdup(envor(opt->libcuda_path, "TILEC_LIBCUDA_PATH"));
	j->hip_path = rt_strdup(envor(opt->hip_path, "TILEC_HIP_PATH"));
	pthread_mutex_init(&j->mu, NULL);
	*out = j;
	return TILEC_OK;
}

void
tilec_jit_destroy(tilec_jit *j)
{
	if (!j)
		return;
	cache_free(j->cache);
	memo_free(j->memo);
	free(j->nvrtc_path);
	free(j->libcuda_path);
	free(j->hip_path);
	free(j->hip_err);
	hip_info_free(&j->hip);
	pthread_mutex_destroy(&j->mu);
	free(j);
}

tilec_status
tilec_jit_stats_get(const tilec_jit *j, tilec_jit_stats *st)
{
	if (!j || !st)
		return TILEC_ERR_ARG;
	cache_stats(j->cache, st);
	st->tile_hits = memo_hits(j->memo);
	return TILEC_OK;
}

TileMemo *
rt_jit_memo(tilec_jit *j)
{
	return j ? j->memo : NULL;
}

const char *
tilec_jit_cache_dir(const tilec_jit *j)
{
	return j ? cache_dir(j->cache) : NULL;
}

tilec_status
tilec_nvrtc_version(tilec_jit *j, int *major, int *minor, char **err)
{
	Nvrtc *nv;
	int r;

	if (!j || !major || !minor)
		return rt_err(err, TILEC_ERR_ARG, "tilec_nvrtc_version: NULL argument");
	if ((r = nvrtc_open(j->nvrtc_path, &nv, err)))
		return r;
	nvrtc_version(nv, major, minor);
	return TILEC_OK;
}

/* ---- compile ------------------------------------------------------------------ */

static void
makekey(int lang, const char *ver, const char *src, const char *arch, const char *const *opts,
        int nopts, const tilec_header *hdrs, int nhdrs, unsigned char key[32])
{
	Sha256 s;
	int i;

	sha256_init(&s);
	sha256_str(&s, "tilec-jit-key-1");
	sha256_str(&s, lang == LANG_CUDA ? "cuda" : "hip");
	sha256_str(&s, TL_VERSION);
	sha256_str(&s, ver);
	sha256_str(&s, arch);
	sha256_str(&s, src);
	for (i = 0; i < nopts; i++)
		sha256_str(&s, opts[i]);
	sha256_str(&s, "headers");
	for (i = 0; i < nhdrs; i++) {
		sha256_str(&s, hdrs[i].name);
		sha256_str(&s, hdrs[i].source);
	}
	sha256_final(&s, key);
}

static int
newmod(tilec_jit *j, int lang, const char *src, const char *arch, const unsigned char key[32],
       Blobs *b, int from, tilec_module **out, char **err)
{
	tilec_module *m = calloc(1, sizeof *m);

	if (!m || !(m->source = rt_strdup(src)) || !(m->arch = rt_strdup(arch))) {
		if (m)
			free(m->source);
		free(m);
		blobs_free(b);
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	}
	m->j = j;
	m->lang = lang;
	m->from = from;
	m->b = *b;
	memset(b, 0, sizeof *b);
	sha256_hex(key, m->key);
	pthread_mutex_init(&m->mu, NULL);
	*out = m;
	return TILEC_OK;
}

static int
checkopts(const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs, char **err)
{
	int i;

	if (nopts < 0 || nopts > 1000 || (nopts && !opts))
		return rt_err(err, TILEC_ERR_ARG, "bad option list (%d options)", nopts);
	for (i = 0; i < nopts; i++)
		if (!opts[i])
			return rt_err(err, TILEC_ERR_ARG, "option %d is NULL", i);
	if (nhdrs < 0 || nhdrs > 1000 || (nhdrs && !hdrs))
		return rt_err(err, TILEC_ERR_ARG, "bad header list (%d headers)", nhdrs);
	for (i = 0; i < nhdrs; i++)
		if (!hdrs[i].name || !*hdrs[i].name || !hdrs[i].source)
			return rt_err(err, TILEC_ERR_ARG, "header %d has no name or no source", i);
	return TILEC_OK;
}

/* the HIP probe runs once per jit; its failure is remembered */
static int
hipinfo(tilec_jit *j, char **err)
{
	int st;

	pthread_mutex_lock(&j->mu);
	if (!j->hip_probed) {
		j->hip_st = hip_probe(j->hip_path, j->hip_timeout_ms, &j->hip, &j->hip_err);
		j->hip_probed = 1;
	}
	st = j->hip_st;
	pthread_mutex_unlock(&j->mu);
	if (st)
		return rt_err(err, st, "%s", j->hip_err ? j->hip_err : "hipRTC probe failed");
	return TILEC_OK;
}

static int
compile(tilec_jit *j, int lang, const char *src, const char *arch, const char *const *opts,
        int nopts, const tilec_header *hdrs, int nhdrs, tilec_module **out, char **err)
{
	unsigned char key[32];
	char ver[32], devarch[32], comp[64];
	Nvrtc *nv = NULL;
	DiskWant want;
	Blobs b;
	int r, maj, min;

	if (out)
		*out = NULL;
	if (!j || !src || !out)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_compile: NULL jit, source or out");
	if ((r = checkopts(opts, nopts, hdrs, nhdrs, err)))
		return r;
	if (lang == LANG_CUDA) {
		if (!arch) {
			Cuda *cu;

			if ((r = cuda_open(j->libcuda_path, &cu, err)))
				return r;
			if ((r = cuda_arch(cu, j->device, devarch, sizeof devarch, err)))
				return r;
			arch = devarch;
		}
		if (!arch_cuda_valid(arch))
			return rt_err(err, TILEC_ERR_ARG,
			              "bad CUDA architecture '%s' (want sm_80, sm_90a, compute_90a, ...)",
			              arch);
		if ((r = nvrtc_open(j->nvrtc_path, &nv, err)))
			return r;
		nvrtc_version(nv, &maj, &min);
		snprintf(ver, sizeof ver, "nvrtc %d.%d", maj, min);
	} else {
		if (!arch || !arch_hip_valid(arch))
			return rt_err(err, TILEC_ERR_ARG,
			              "bad HIP architecture '%s' (want gfx90a, gfx942, gfx1100, "
			              "gfx90a:sramecc+:xnack-, ...)", arch ? arch : "(null)");
		if ((r = hipinfo(j, err)))
			return r;
		if (!hip_arch_known(&j->hip, arch))
			return rt_err(err, TILEC_ERR_ARCH,
			              "hipRTC %d.%d cannot compile for %s: its code object manager knows "
			              "only %s (compile it offline with clang-19 -x hip "
			              "--cuda-device-only -nogpulib instead)",
			              j->hip.major, j->hip.minor, arch, j->hip.isas);
		snprintf(ver, sizeof ver, "hiprtc %d.%d", j->hip.major, j->hip.minor);
	}
	makekey(lang, ver, src, arch, opts, nopts, hdrs, nhdrs, key);
	/* a disk entry must be of this kind, for this arch, from this compiler */
	snprintf(comp, sizeof comp, "tilec %s %s", TL_VERSION, ver);
	want.kind = lang == LANG_HIP ? TILEC_BIN_HSACO
	            : !strncmp(arch, "sm_", 3) ? TILEC_BIN_CUBIN : TILEC_BIN_PTX;
	want.target = arch;
	want.compiler = comp;
	r = cache_get(j->cache, key, &want, &b);
	if (r != CACHE_MISS)
		return newmod(j, lang, src, arch, key, &b,
		              r == CACHE_HIT_MEM ? TILEC_CACHE_MEM : TILEC_CACHE_DISK, out, err);
	if (lang == LANG_CUDA)
		r = nvrtc_compile(nv, src, arch, opts, nopts, hdrs, nhdrs, &b, err);
	else
		r = hip_compile(&j->hip, j->hip_path, j->hip_timeout_ms, src, arch, opts, nopts, hdrs,
		                nhdrs, &b, err);
	if (r == TILEC_OK || r == TILEC_ERR_COMPILE)
		cache_count_compile(j->cache);
	if (r == TILEC_OK)
		cache_put(j->cache, key, &want, &b);
	else
		cache_abandon(j->cache, key);
	if (r == TILEC_OK || r == TILEC_ERR_COMPILE) {
		int r2 = newmod(j, lang, src, arch, key, &b, TILEC_CACHE_NONE, out, NULL);

		if (r2 && r == TILEC_OK)
			return rt_err(err, r2, "out of memory");
		return r;
	}
	blobs_free(&b);
	return r;
}

tilec_status
tilec_jit_compile_cuda(tilec_jit *j, const char *src, const char *arch, const char *const *opts,
                       int nopts, tilec_module **out, char **err)
{
	return compile(j, LANG_CUDA, src, arch, opts, nopts, NULL, 0, out, err);
}

tilec_status
tilec_jit_compile_cuda_ex(tilec_jit *j, const char *src, const char *arch,
                          const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs,
                          tilec_module **out, char **err)
{
	return compile(j, LANG_CUDA, src, arch, opts, nopts, hdrs, nhdrs, out, err);
}

tilec_status
tilec_jit_compile_hip_ex(tilec_jit *j, const char *src, const char *arch,
                         const char *const *opts, int nopts, const tilec_header *hdrs, int nhdrs,
                         tilec_module **out, char **err)
{
	return compile(j, LANG_HIP, src, arch, opts, nopts, hdrs, nhdrs, out, err);
}

tilec_status
tilec_jit_compile_hip(tilec_jit *j, const char *src, const char *arch, const char *const *opts,
                      int nopts, tilec_module **out, char **err)
{
	return compile(j, LANG_HIP, src, arch, opts, nopts, NULL, 0, out, err);
}

tilec_status
tilec_jit_compile_cuda_file(tilec_jit *j, const char *path, const char *arch,
                            const char *const *opts, int nopts, tilec_module **out, char **err)
{
	FILE *f;
	char *s = NULL;
	size_t n = 0, cap = 0, k;
	int r;

	if (out)
		*out = NULL;
	if (!path)
		return rt_err(err, TILEC_ERR_ARG, "tilec_jit_compile_cuda_file: path is NULL");
	if (!(f = fopen(path, "rb")))
		return rt_err(err, TILEC_ERR_IO, "cannot open %s", path);
	do {
		if (cap - n < 4096) {
			char *t = realloc(s, cap = cap * 2 + 8192);

			if (!t) {
				free(s);
				fclose(f);
				return rt_err(err, TILEC_ERR_NOMEM, "out of memory reading %s", path);
			}
			s = t;
		}
		k = fread(s + n, 1, cap - n - 1, f);
		n += k;
	} while (k);
	r = ferror(f);
	fclose(f);
	if (r) {
		free(s);
		return rt_err(err, TILEC_ERR_IO, "error reading %s", path);
	}
	s[n] = 0;
	r = compile(j, LANG_CUDA, s, arch, opts, nopts, NULL, 0, out, err);
	free(s);
	return r;
}

/* ---- modules ------------------------------------------------------------------ */

void
tilec_module_free(tilec_module *m)
{
	Fn *f, *n;

	if (!m)
		return;
	if (m->mod)
		cuda_unload(m->cu, m->ctx, m->mod);
	for (f = m->fns; f; f = n) {
		n = f->next;
		free(f->name);
		free(f);
	}
	blobs_free(&m->b);
	free(m->source);
	free(m->arch);
	pthread_mutex_destroy(&m->mu);
	free(m);
}

/* a module without a binary holding src and log (a tile error) */
int
rt_module_failed(tilec_jit *j, const char *src, const char *arch, const char *log,
                 tilec_module **out, char **err)
{
	static const unsigned char zero[32];
	Blobs b;

	memset(&b, 0, sizeof b);
	if (blobs_set(&b, BLOB_LOG, log, strlen(log)) < 0)
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	return newmod(j, LANG_CUDA, src, arch ? arch : "", zero, &b, TILEC_CACHE_NONE, out, err);
}

void
rt_module_set_tile(tilec_module *m)
{
	if (m)
		m->tile = 1;
}

int
tilec_module_from_tile(const tilec_module *m)
{
	return m && m->tile;
}

int
tilec_module_ok(const tilec_module *m)
{
	return m && m->b.p[BLOB_BIN] && m->b.n[BLOB_BIN];
}

const char *
tilec_module_log(const tilec_module *m)
{
	return m && m->b.p[BLOB_LOG] ? (const char *)m->b.p[BLOB_LOG] : "";
}

const char *
tilec_module_source(const tilec_module *m)
{
	return m ? m->source : NULL;
}

const char *
tilec_module_arch(const tilec_module *m)
{
	return m ? m->arch : NULL;
}

const void *
tilec_module_binary(const tilec_module *m, size_t *size)
{
	if (size)
		*size = tilec_module_ok(m) ? m->b.n[BLOB_BIN] : 0;
	return tilec_module_ok(m) ? m->b.p[BLOB_BIN] : NULL;
}

int
tilec_module_binary_kind(const tilec_module *m)
{
	return tilec_module_ok(m) ? m->b.binkind : TILEC_BIN_NONE;
}

const char *
tilec_module_ptx(const tilec_module *m)
{
	return m && m->b.p[BLOB_PTX] ? (const char *)m->b.p[BLOB_PTX] : NULL;
}

int
tilec_module_cache_source(const tilec_module *m)
{
	return m ? m->from : TILEC_CACHE_NONE;
}

const char *
tilec_module_key(const tilec_module *m)
{
	return m ? m->key : NULL;
}

/* ---- load and launch ---------------------------------------------------------------- */

static int
load_locked(tilec_module *m, char **err)
{
	int r;

	if (m->mod)
		return TILEC_OK;
	if ((r = cuda_open(m->j->libcuda_path, &m->cu, err)))
		return r;
	if ((r = cuda_ctx(m->cu, m->j->device, &m->ctx, err)))
		return r;
	return cuda_load(m->cu, m->ctx, &m->b, &m->mod, err);
}

tilec_status
tilec_module_load(tilec_module *m, char **err)
{
	int r;

	if (!m)
		return rt_err(err, TILEC_ERR_ARG, "tilec_module_load: module is NULL");
	if (m->lang != LANG_CUDA)
		return rt_err(err, TILEC_ERR_ARG, "tilec_module_load: only CUDA modules can be loaded");
	if (!tilec_module_ok(m))
		return rt_err(err, TILEC_ERR_ARG, "tilec_module_load: the module did not compile");
	pthread_mutex_lock(&m->mu);
	r = load_locked(m, err);
	pthread_mutex_unlock(&m->mu);
	return r;
}

tilec_status
tilec_module_kernel(tilec_module *m, const char *name, void **fn, char **err)
{
	Fn *f;
	int r = TILEC_OK;

	if (!m || !name || !fn)
		return rt_err(err, TILEC_ERR_ARG, "tilec_module_kernel: NULL module, name or out");
	*fn = NULL;
	if ((r = tilec_module_load(m, err)))
		return r;
	pthread_mutex_lock(&m->mu);
	for (f = m->fns; f; f = f->next)
		if (!strcmp(f->name, name))
			break;
	if (f) {
		*fn = f->fn;
	} else if (!(r = cuda_function(m->cu, m->ctx, m->mod, name, fn, err))) {
		f = calloc(1, sizeof *f);
		if (f && (f->name = rt_strdup(name))) {
			f->fn = *fn;
			f->next = m->fns;
			m->fns = f;
		} else {
			free(f);
		}
	}
	pthread_mutex_unlock(&m->mu);
	return r;
}

tilec_status
tilec_launch(tilec_module *m, const char *name, const unsigned grid[3], const unsigned block[3],
             unsigned shmem, void *stream, const tilec_arg *args, int nargs, char **err)
{
	void *fn = NULL;
	int r;

	if (!m || !name || !grid || !block)
		return rt_err(err, TILEC_ERR_ARG, "tilec_launch: NULL module, name, grid or block");
	if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
		return rt_err(err, TILEC_ERR_ARG, "tilec_launch: zero grid or block dimension");
	if (nargs < 0 || nargs > 64 || (nargs && !args))
		return rt_err(err, TILEC_ERR_ARG, "tilec_launch: bad argument list (%d)", nargs);
	TmaReq maps[16];
	int nmaps;

	if ((r = tilec_module_kernel(m, name, &fn, err)))
		return r;
	{
		/* a kernel tilec emitted runs on the block of its launch contract (a warp-specialized
		 * one has a producer warpgroup more than threads(...)): another block is refused */
		unsigned t;

		if (tilec_module_launch_info(m, name, &t, NULL) == TILEC_OK &&
		    (unsigned long long)block[0] * block[1] * block[2] != t)
			return rt_err(err, TILEC_ERR_ARG, "tilec_launch: kernel %s was emitted for blocks of %u threads "
				      "(its launch contract: tilec_module_launch_info); block is %u x %u x %u", name, t,
				      block[0], block[1], block[2]);
	}
	/* a kernel tilec emitted with TMA loads: its tensor maps from the other arguments */
	if ((nmaps = tma_args(m->source, name, args, nargs, maps, 16, err)) < 0)
		return TILEC_ERR_ARG;
	if (rt_persistent(m->source, name)) {
		/* a persistent kernel (its contract line, as the tensor maps' lines: from tilec's
		 * CUDA C however it was compiled): grid is the sizes' grid (X, Y, Z); the blocks
		 * that fit the device loop over its tiles */
		unsigned g[3] = {grid[0], grid[1], grid[2]};

		if ((r = cuda_persistent_grid(m->cu, m->ctx, fn, block, shmem, g, err)))
			return r;
		return cuda_launch(m->cu, m->ctx, fn, g, block, shmem, stream, args, nargs, maps, nmaps, err);
	}
	return cuda_launch(m->cu, m->ctx, fn, grid, block, shmem, stream, args, nargs, maps, nmaps, err);
}

static int
devop(tilec_jit *j, int op, void *a, const void *b, size_t n, char **err)
{
	Cuda *cu;
	void *ctx;
	int r;

	if (!j)
		return rt_err(err, TILEC_ERR_ARG, "NULL jit");
	if ((r = cuda_open(j->libcuda_path, &cu, err)) || (r = cuda_ctx(cu, j->device, &ctx, err)))
		return r;
	return cuda_mem(cu, ctx, op, a, b, n, err);
}

tilec_status
tilec_dev_alloc(tilec_jit *j, void **dptr, size_t bytes, char **err)
{
	if (!dptr || !bytes)
		return rt_err(err, TILEC_ERR_ARG, "tilec_dev_alloc: NULL pointer or zero size");
	return devop(j, MEM_ALLOC, dptr, NULL, bytes, err);
}

tilec_status
tilec_dev_free(tilec_jit *j, void *dptr, char **err)
{
	if (!dptr)
		return TILEC_OK;
	return devop(j, MEM_FREE, dptr, NULL, 0, err);
}

tilec_status
tilec_dev_upload(tilec_jit *j, void *dptr, const void *host, size_t bytes, char **err)
{
	if (!dptr || !host)
		return rt_err(err, TILEC_ERR_ARG, "tilec_dev_upload: NULL pointer");
	return devop(j, MEM_HTOD, dptr, host, bytes, err);
}

tilec_status
tilec_dev_download(tilec_jit *j, void *host, const void *dptr, size_t bytes, char **err)
{
	if (!dptr || !host)
		return rt_err(err, TILEC_ERR_ARG, "tilec_dev_download: NULL pointer");
	return devop(j, MEM_DTOH, host, dptr, bytes, err);
}

tilec_status
tilec_dev_sync(tilec_jit *j, char **err)
{
	return devop(j, MEM_SYNC, NULL, NULL, 0, err);
}

tilec_status
tilec_dev_arch(tilec_jit *j, char *buf, size_t bufsz, char **err)
{
	Cuda *cu;
	int r;

	if (!j || !buf || bufsz < 8)
		return rt_err(err, TILEC_ERR_ARG, "tilec_dev_arch: NULL argument or small buffer");
	if ((r = cuda_open(j->libcuda_path, &cu, err)))
		return r;
	return cuda_arch(cu, j->device, buf, bufsz, err);
}
