/*
 * jit_tile.c: tile source -> JIT module. tilec emits CUDA C (tile_glue.c),
 * NVRTC compiles it with the embedded tilec_cuda.h; a tile error becomes a
 * module without a binary whose log is the diagnostics. The launch contract
 * (threads, dynamic smem) is read back from the emitted kernel comments.
 * A per-jit memo keeps the CUDA C of recent tile sources, so that a cache
 * hit does not run the generator again.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tl.h"
#include "tilec_tile.h"
#include "tileglue.h"

/* ---- the DSL -> CUDA memo: key = SHA-256 of the options string and the source ---- */

enum { MEMO_MAX = 64 }; /* entries; the oldest goes first */

typedef struct MemoEnt {
	unsigned char key[32];
	char *cuda;
	struct MemoEnt *next;
} MemoEnt;

struct TileMemo {
	pthread_mutex_t mu;
	MemoEnt *head; /* newest first */
	int n;
	uint64_t hits;
};

TileMemo *
memo_new(void)
{
	TileMemo *m = calloc(1, sizeof *m);

	if (m)
		pthread_mutex_init(&m->mu, NULL);
	return m;
}

void
memo_free(TileMemo *m)
{
	MemoEnt *e, *n;

	if (!m)
		return;
	for (e = m->head; e; e = n) {
		n = e->next;
		free(e->cuda);
		free(e);
	}
	pthread_mutex_destroy(&m->mu);
	free(m);
}

uint64_t
memo_hits(TileMemo *m)
{
	uint64_t h;

	if (!m)
		return 0;
	pthread_mutex_lock(&m->mu);
	h = m->hits;
	pthread_mutex_unlock(&m->mu);
	return h;
}

/* a copy of the memoized CUDA C of key, or NULL */
static char *
memo_get(TileMemo *m, const unsigned char key[32])
{
	MemoEnt *e;
	char *s = NULL;

	pthread_mutex_lock(&m->mu);
	for (e = m->head; e; e = e->next)
		if (!memcmp(e->key, key, 32)) {
			if ((s = rt_strdup(e->cuda)))
				m->hits++;
			break;
		}
	pthread_mutex_unlock(&m->mu);
	return s;
}

/* remember a copy of cuda under key (no memory: nothing is remembered) */
static void
memo_put(TileMemo *m, const unsigned char key[32], const char *cuda)
{
	MemoEnt *e, **pp;
	int n;

	pthread_mutex_lock(&m->mu);
	for (e = m->head; e; e = e->next)
		if (!memcmp(e->key, key, 32))
			break;
	if (!e && (e = calloc(1, sizeof *e)) && (e->cuda = rt_strdup(cuda))) {
		memcpy(e->key, key, 32);
		e->next = m->head;
		m->head = e;
		/* drop the oldest beyond MEMO_MAX */
		for (pp = &m->head, n = 0; *pp; n++) {
			if (n >= MEMO_MAX) {
				MemoEnt *old = *pp;

				*pp = old->next;
				free(old->cuda);
				free(old);
			} else {
				pp = &(*pp)->next;
			}
		}
	} else if (e && !e->cuda) {
		free(e);
	}
	pthread_mutex_unlock(&m->mu);
}

/* the CUDA C of key from the jit's disk cache (an entry of kind RT_BIN_TILE_CUDA), or NULL;
 * a corrupt entry is removed by disk_read and the source generated again */
static void
memo_want(DiskWant *w, const char *arch)
{
	w->kind = RT_BIN_TILE_CUDA;
	w->target = arch;
	w->compiler = "tilec " TL_VERSION " generator";
}

static char *
disk_memo_get(tilec_jit *j, TileMemo *m, const unsigned char key[32], const char *arch)
{
	const char *dir = tilec_jit_cache_dir(j);
	DiskWant w;
	Blobs b;
	char *s = NULL;

	memo_want(&w, arch);
	if (!dir || disk_read(dir, key, &w, &b))
		return NULL;
	if (b.binkind == RT_BIN_TILE_CUDA && b.n[BLOB_BIN] && !memchr(b.p[BLOB_BIN], 0, b.n[BLOB_BIN]))
		s = rt_strdup((const char *)b.p[BLOB_BIN]);
	blobs_free(&b);
	if (s) {
		pthread_mutex_lock(&m->mu);
		m->hits++;
		pthread_mutex_unlock(&m->mu);
	}
	return s;
}

/* write the CUDA C of key to the disk cache (failures only cost a later regeneration) */
static void
disk_memo_put(tilec_jit *j, const unsigned char key[32], const char *arch, const char *cuda)
{
	const char *dir = tilec_jit_cache_dir(j);
	DiskWant w;
	Blobs b;

	if (!dir)
		return;
	memo_want(&w, arch);
	memset(&b, 0, sizeof b);
	b.binkind = RT_BIN_TILE_CUDA;
	if (blobs_set(&b, BLOB_BIN, cuda, strlen(cuda)) == 0)
		(void)disk_write(dir, key, &w, &b);
	blobs_free(&b);
}

static int
tilefile(tilec_jit *j, const char *src, size_t len, const char *path,
         const struct tilec_options *opt, const char *arch, tilec_module **out, char **err)
{
	char devarch[32], *cuda, *diag, *tsrc, *ostr = NULL;
	unsigned char key[32];
	TileMemo *memo;
	tilec_header h;
	int rc, mrc, hit = 0;

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
	/* the memo first (memory, then disk); then the generator, whose output the memo keeps */
	cuda = diag = NULL;
	memo = rt_jit_memo(j);
	mrc = memo ? rt_tile_optstr(opt, path, arch, &ostr) : 1;
	if (mrc < 0)
		return rt_err(err, TILEC_ERR_NOMEM, "out of memory");
	if (mrc == 0) {
		Sha256 sh;

		sha256_init(&sh);
		sha256_str(&sh, "tilec-tile-memo-1");
		sha256_str(&sh, ostr);
		sha256_field(&sh, src, len);
		sha256_final(&sh, key);
		free(ostr);
		cuda = memo_get(memo, key);
		hit = cuda != NULL;
		if (!cuda)
			hit = (cuda = disk_memo_get(j, memo, key, arch)) != NULL;
	}
	rc = cuda ? 0 : rt_tile_to_cuda(src, len, opt, path, arch, &cuda, &diag);
	if (rc == 0 && mrc == 0)
		memo_put(memo, key, cuda);
	if (rc == 0 && mrc == 0 && !hit)
		disk_memo_put(j, key, arch, cuda);
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

tilec_status
tilec_jit_compile_tile(tilec_jit *j, const char *src, size_t len, const struct tilec_options *opt,
                       const char *arch, tilec_module **out, char **err)
{
	return tilefile(j, src, len, NULL, opt, arch, out, err);
}

tilec_status
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

/* 1 when kernel name's launch contract in src (the CUDA C tilec emitted) says persistent */
int
rt_persistent(const char *src, const char *name)
{
	static const char tag[] = "// kernel ";
	static const char pers[] = ": persistent: ";
	const char *p;
	size_t nl = strlen(name);

	for (p = strstr(src, tag); p; p = strstr(p + 1, tag))
		if ((p == src || p[-1] == '\n') && !strncmp(p + sizeof tag - 1, name, nl) &&
		    !strncmp(p + sizeof tag - 1 + nl, pers, sizeof pers - 1))
			return 1;
	return 0;
}

tilec_status
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
