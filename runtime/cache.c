/*
 * cache.c: the two-level cache of compiled modules. In memory: a hash table
 * keyed by SHA-256, where a key being compiled is marked pending so that other
 * threads asking for it wait instead of compiling it again. On disk: one file
 * per key (header with magic, version, lengths and a SHA-256 checksum, then
 * the payload), written to a temporary file and renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

#define FIELD 64

#define MAGIC "TILECJIT"
#define FORMAT 2u
/* magic 8, format 4, binkind 4, key 32, lengths 3*8, checksum 32, target 64, compiler 64
 * (target and compiler NUL-padded strings) */
#define OFF_KEY 16
#define OFF_LEN 48
#define OFF_SUM 72
#define OFF_TARGET 104
#define OFF_COMPILER (OFF_TARGET + FIELD)
#define HDR (OFF_COMPILER + FIELD)
#define MAXENTRY (1u << 30)

enum { PENDING, READY };

typedef struct Entry {
	unsigned char key[32];
	int state;
	Blobs b;
	uint64_t seq;        /* when it became ready: the oldest goes first */
	struct Entry *next;
} Entry;

struct Cache {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	Entry *tab[256];
	char *dir;
	size_t bytes, maxbytes; /* blob bytes held by ready entries, and the limit */
	uint64_t seq;
	tilec_jit_stats st;
};

static size_t
blobsize(const Blobs *b)
{
	return b->n[BLOB_BIN] + b->n[BLOB_PTX] + b->n[BLOB_LOG];
}

/* drop the oldest ready entries (never keep) until the limit holds; mu held */
static void
trim(Cache *c, const Entry *keep)
{
	while (c->bytes > c->maxbytes) {
		Entry **pp, **old = NULL;
		int i;

		for (i = 0; i < 256; i++)
			for (pp = &c->tab[i]; *pp; pp = &(*pp)->next)
				if ((*pp)->state == READY && *pp != keep &&
				    (!old || (*pp)->seq < (*old)->seq))
					old = pp;
		if (!old)
			return;
		{
			Entry *e = *old;

			*old = e->next;
			c->bytes -= blobsize(&e->b);
			c->st.mem_evictions++;
			blobs_free(&e->b);
			free(e);
		}
	}
}

static void
ready(Cache *c, Entry *e)
{
	e->state = READY;
	e->seq = ++c->seq;
	c->bytes += blobsize(&e->b);
	trim(c, e);
}

void
cache_set_limit(Cache *c, size_t maxbytes)
{
	pthread_mutex_lock(&c->mu);
	c->maxbytes = maxbytes;
	trim(c, NULL);
	pthread_mutex_unlock(&c->mu);
}

Cache *
cache_new(const char *dir)
{
	Cache *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->maxbytes = (size_t)256 << 20;
	if (dir && !(c->dir = rt_strdup(dir))) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
}

void
cache_free(Cache *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; i < 256; i++) {
		Entry *e, *n;

		for (e = c->tab[i]; e; e = n) {
			n = e->next;
			blobs_free(&e->b);
			free(e);
		}
	}
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c->dir);
	free(c);
}

const char *
cache_dir(const Cache *c)
{
	return c->dir;
}

static Entry **
slot(Cache *c, const unsigned char key[32])
{
	Entry **pp;

	for (pp = &c->tab[key[0]]; *pp; pp = &(*pp)->next)
		if (!memcmp((*pp)->key, key, 32))
			break;
	return pp;
}

int
cache_get(Cache *c, const unsigned char key[32], const DiskWant *want, Blobs *out)
{
	Entry **pp, *e;
	int r;

	memset(out, 0, sizeof *out);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		pp = slot(c, key);
		e = *pp;
		if (!e)
			break;
		if (e->state == READY) {
			r = blobs_copy(out, &e->b) ? CACHE_MISS : CACHE_HIT_MEM;
			if (r == CACHE_HIT_MEM) {
				c->st.mem_hits++;
				pthread_mutex_unlock(&c->mu);
				return r;
			}
			/* no memory for a copy: compile; put/abandon leave a ready entry alone */
			pthread_mutex_unlock(&c->mu);
			return CACHE_MISS;
		}
		pthread_cond_wait(&c->cv, &c->mu);
	}
	e = calloc(1, sizeof *e);
	if (!e) {
		pthread_mutex_unlock(&c->mu);
		return CACHE_MISS;
	}
	memcpy(e->key, key, 32);
	e->state = PENDING;
	*pp = e;
	pthread_mutex_unlock(&c->mu);

	if (c->dir) {
		r = disk_read(c->dir, key, want, out);
		pthread_mutex_lock(&c->mu);
		if (r == 0 && !blobs_copy(&e->b, out)) {
			ready(c, e);
			c->st.disk_hits++;
			pthread_cond_broadcast(&c->cv);
			pthread_mutex_unlock(&c->mu);
			return CACHE_HIT_DISK;
		}
		if (r == 0)
			blobs_free(out);
		if (r == 2)
			c->st.disk_corrupt++;
		pthread_mutex_unlock(&c->mu);
	}
	return CACHE_MISS;
}

void
cache_put(Cache *c, const unsigned char key[32], const DiskWant *want, const Blobs *b)
{
	Entry **pp, *e;
	int w = -1;

	if (c->dir)
		w = disk_write(c->dir, key, want, b);
	pthread_mutex_lock(&c->mu);
	if (c->dir) {
		if (w == 0)
			c->st.disk_writes++;
		else
			c->st.disk_errors++;
	}
	pp = slot(c, key);
	e = *pp;
	if (e && e->state == PENDING) {
		if (blobs_copy(&e->b, b)) {
			*pp = e->next;
			free(e);
		} else {
			ready(c, e);
		}
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void
cache_abandon(Cache *c, const unsigned char key[32])
{
	Entry **pp, *e;

	pthread_mutex_lock(&c->mu);
	pp = slot(c, key);
	e = *pp;
	if (e && e->state == PENDING) {
		*pp = e->next;
		blobs_free(&e->b);
		free(e);
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void
cache_stats(Cache *c, tilec_jit_stats *st)
{
	pthread_mutex_lock(&c->mu);
	*st = c->st;
	pthread_mutex_unlock(&c->mu);
}

void
cache_count_compile(Cache *c)
{
	pthread_mutex_lock(&c->mu);
	c->st.compiles++;
	pthread_mutex_unlock(&c->mu);
}

/* ---- disk entries ---------------------------------------------------------------- */

static void
put32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
put64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static char *
entry_path(const char *dir, const unsigned char key[32])
{
	char hex[65], *p;
	size_t n;

	sha256_hex(key, hex);
	n = strlen(dir) + 64 + 8;
	p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s.tjc", dir, hex);
	return p;
}

/* the header (with the checksum field zero) and the payload, hashed */
static void
checksum(const unsigned char *hdr, const Blobs *b, unsigned char out[32])
{
	Sha256 s;
	unsigned char h[HDR];
	int i;

	memcpy(h, hdr, HDR);
	memset(h + OFF_SUM, 0, 32);
	sha256_init(&s);
	sha256_update(&s, h, HDR);
	for (i = 0; i < NBLOB; i++)
		if (b->n[i])
			sha256_update(&s, b->p[i], b->n[i]);
	sha256_final(&s, out);
}

/* a NUL-padded string field of FIELD bytes equal to s */
static int
field_is(const unsigned char *f, const char *s)
{
	size_t n = strlen(s), i;

	if (n >= FIELD || memcmp(f, s, n))
		return 0;
	for (i = n; i < FIELD; i++)
		if (f[i])
			return 0;
	return 1;
}

static int
shared_ok(void)
{
	const char *e = getenv("TILEC_CACHE_SHARED");

	return e && !strcmp(e, "1");
}

int
disk_dir_trusted(const char *dir)
{
	struct stat stb;

	if (!dir || !*dir || stat(dir, &stb) || !S_ISDIR(stb.st_mode))
		return 0;
	if (shared_ok())
		return 1;
	return stb.st_uid == geteuid() && !(stb.st_mode & (S_IWGRP | S_IWOTH));
}

static int
want_ok(const DiskWant *w)
{
	return w && w->target && w->compiler && strlen(w->target) < FIELD &&
	       strlen(w->compiler) < FIELD;
}

int
disk_read(const char *dir, const unsigned char key[32], const DiskWant *want, Blobs *out)
{
	char *path;
	unsigned char hdr[HDR], sum[32], *data = NULL;
	struct stat stb;
	uint64_t n[NBLOB], total = 0;
	size_t got = 0;
	int fd, i, r = 2;

	memset(out, 0, sizeof *out);
	if (!want_ok(want) || !disk_dir_trusted(dir) || !(path = entry_path(dir, key)))
		return 1;
	/* never follow a link, never block on a FIFO or a device; a regular file only */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		/* a symlink planted under the key's name is refused (rename replaces it later) */
		r = errno == ELOOP ? 2 : 1;
		if (r == 2)
			unlink(path);
		free(path);
		return r;
	}
	if (fstat(fd, &stb) || !S_ISREG(stb.st_mode) || stb.st_size < HDR ||
	    stb.st_size > MAXENTRY || (stb.st_uid != geteuid() && !shared_ok()))
		goto done;
	data = malloc((size_t)stb.st_size);
	if (!data) {
		r = 1;
		goto done;
	}
	while (got < (size_t)stb.st_size) {
		ssize_t k = read(fd, data + got, (size_t)stb.st_size - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			goto done;
		got += (size_t)k;
	}
	memcpy(hdr, data, HDR);
	if (memcmp(hdr, MAGIC, 8) || get32(hdr + 8) != FORMAT || memcmp(hdr + OFF_KEY, key, 32))
		goto done;
	for (i = 0; i < NBLOB; i++) {
		n[i] = get64(hdr + OFF_LEN + 8 * i);
		if (n[i] > MAXENTRY)
			goto done;
		total += n[i];
	}
	if (total != (uint64_t)stb.st_size - HDR)
		goto done;
	total = HDR;
	for (i = 0; i < NBLOB; i++) {
		if (blobs_set(out, i, data + total, (size_t)n[i])) {
			r = 1;
			goto done;
		}
		total += n[i];
	}
	out->binkind = (int)get32(hdr + 12);
	checksum(hdr, out, sum);
	if (memcmp(sum, hdr + OFF_SUM, 32))
		goto done;
	/* self-consistent, but is it what was asked for? */
	if (out->binkind != want->kind || !field_is(hdr + OFF_TARGET, want->target) ||
	    !field_is(hdr + OFF_COMPILER, want->compiler) || !out->n[BLOB_BIN])
		goto done;
	r = 0;
done:
	close(fd);
	if (r) {
		blobs_free(out);
		if (r == 2)
			unlink(path);
	}
	free(data);
	free(path);
	return r;
}

size_t
disk_header_size(void)
{
	return HDR;
}

void
disk_seal(unsigned char *entry, size_t n, const unsigned char key[32])
{
	Sha256 s;
	unsigned char zero[32] = {0};

	if (n < HDR)
		return;
	memcpy(entry + OFF_KEY, key, 32);
	sha256_init(&s);
	sha256_update(&s, entry, OFF_SUM);
	sha256_update(&s, zero, 32);
	sha256_update(&s, entry + OFF_SUM + 32, n - OFF_SUM - 32);
	sha256_final(&s, entry + OFF_SUM);
}

static int
writeall(int fd, const void *p, size_t n)
{
	const unsigned char *q = p;

	while (n) {
		ssize_t k = write(fd, q, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		q += k, n -= (size_t)k;
	}
	return 0;
}

int
disk_mkdirs(const char *dir)
{
	char *p = rt_strdup(dir), *s;
	struct stat stb;
	int r = -1;

	if (!p || !*p)
		goto done;
	for (s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;

			*s = 0;
			if (mkdir(p, 0700) && errno != EEXIST)
				goto done;
			*s = c;
			if (!c)
				break;
		}
	}
	r = stat(dir, &stb) == 0 && S_ISDIR(stb.st_mode) ? 0 : -1;
done:
	free(p);
	return r;
}

int
disk_write(const char *dir, const unsigned char key[32], const DiskWant *want, const Blobs *b)
{
	char *path, *tmp;
	unsigned char hdr[HDR];
	size_t n;
	int fd, i, r = -1;

	if (!want_ok(want) || b->binkind != want->kind || disk_mkdirs(dir) || !disk_dir_trusted(dir))
		return -1;
	path = entry_path(dir, key);
	n = strlen(dir) + 32;
	tmp = malloc(n);
	if (!path || !tmp) {
		free(path);
		free(tmp);
		return -1;
	}
	snprintf(tmp, n, "%s/.tmp-XXXXXX", dir);
	fd = mkstemp(tmp); /* mode 0600, O_EXCL */
	if (fd < 0)
		goto out;
	memset(hdr, 0, sizeof hdr);
	memcpy(hdr, MAGIC, 8);
	put32(hdr + 8, FORMAT);
	put32(hdr + 12, (uint32_t)b->binkind);
	memcpy(hdr + OFF_KEY, key, 32);
	for (i = 0; i < NBLOB; i++)
		put64(hdr + OFF_LEN + 8 * i, b->n[i]);
	memcpy(hdr + OFF_TARGET, want->target, strlen(want->target));
	memcpy(hdr + OFF_COMPILER, want->compiler, strlen(want->compiler));
	checksum(hdr, b, hdr + OFF_SUM);
	r = fchmod(fd, 0600) || writeall(fd, hdr, HDR) ? -1 : 0;
	for (i = 0; i < NBLOB && !r; i++)
		if (b->n[i])
			r = writeall(fd, b->p[i], b->n[i]);
	/* on disk before it gets its name: a crash leaves the old entry or the new one */
	if (!r && fsync(fd))
		r = -1;
	if (close(fd))
		r = -1;
	if (!r && rename(tmp, path))
		r = -1;
	if (r)
		unlink(tmp);
out:
	free(tmp);
	free(path);
	return r;
}
