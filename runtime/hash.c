/*
 * hash.c: SHA-256 (FIPS 180-4) for cache keys and entry checksums, plus the
 * small helpers the runtime files share (error strings, blobs). Written from
 * the standard; checked against its test vectors in test/check_rt.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void
sha256_init(Sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof iv);
	s->len = 0;
	s->fill = 0;
}

void
sha256_update(Sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->len += n;
	if (s->fill) {
		size_t k = 64 - s->fill < n ? 64 - s->fill : n;

		memcpy(s->blk + s->fill, p, k);
		s->fill += k, p += k, n -= k;
		if (s->fill < 64)
			return;
		block(s->h, s->blk);
		s->fill = 0;
	}
	for (; n >= 64; p += 64, n -= 64)
		block(s->h, p);
	if (n)
		memcpy(s->blk, p, n);
	s->fill = n;
}

void
sha256_final(Sha256 *s, unsigned char out[32])
{
	uint64_t bits = s->len * 8;
	unsigned char pad[72];
	size_t padn = (s->fill < 56 ? 56 : 120) - s->fill;
	int i;

	memset(pad, 0, sizeof pad);
	pad[0] = 0x80;
	for (i = 0; i < 8; i++)
		pad[padn + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, padn + 8);
	for (i = 0; i < 32; i++)
		out[i] = (unsigned char)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

void
sha256(const void *p, size_t n, unsigned char out[32])
{
	Sha256 s;

	sha256_init(&s);
	sha256_update(&s, p, n);
	sha256_final(&s, out);
}

void
sha256_hex(const unsigned char d[32], char out[65])
{
	static const char hx[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[64] = 0;
}

void
sha256_field(Sha256 *s, const void *p, size_t n)
{
	unsigned char len[8];
	int i;

	for (i = 0; i < 8; i++)
		len[i] = (unsigned char)((uint64_t)n >> (8 * i));
	sha256_update(s, len, 8);
	sha256_update(s, p, n);
}

void
sha256_str(Sha256 *s, const char *str)
{
	static const unsigned char nul[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (!str)
		sha256_update(s, nul, 8);
	else
		sha256_field(s, str, strlen(str));
}

/* ---- shared helpers ------------------------------------------------------------ */

int
rt_err(char **err, int status, const char *fmt, ...)
{
	va_list ap;
	char *m;
	int n;

	if (!err)
		return status;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	m = malloc((size_t)n + 1);
	if (m) {
		va_start(ap, fmt);
		vsnprintf(m, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	*err = m;
	return status;
}

char *
rt_strdup(const char *s)
{
	char *d;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}

void
blobs_free(Blobs *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < NBLOB; i++) {
		free(b->p[i]);
		b->p[i] = NULL;
		b->n[i] = 0;
	}
	b->binkind = TILEC_BIN_NONE;
}

int
blobs_set(Blobs *b, int i, const void *p, size_t n)
{
	unsigned char *q = malloc(n + 1);

	if (!q)
		return -1;
	if (n)
		memcpy(q, p, n);
	q[n] = 0;
	free(b->p[i]);
	b->p[i] = q;
	b->n[i] = n;
	return 0;
}

int
blobs_copy(Blobs *dst, const Blobs *src)
{
	int i;

	memset(dst, 0, sizeof *dst);
	for (i = 0; i < NBLOB; i++)
		if (src->p[i] && blobs_set(dst, i, src->p[i], src->n[i])) {
			blobs_free(dst);
			return -1;
		}
	dst->binkind = src->binkind;
	return 0;
}

int
headers_split(const tilec_header *hdrs, int nhdrs, const char ***names, const char ***srcs)
{
	int i;

	*names = *srcs = NULL;
	if (nhdrs <= 0)
		return 0;
	*names = calloc((size_t)nhdrs, sizeof **names);
	*srcs = calloc((size_t)nhdrs, sizeof **srcs);
	if (!*names || !*srcs) {
		free(*names);
		free(*srcs);
		*names = *srcs = NULL;
		return -1;
	}
	for (i = 0; i < nhdrs; i++) {
		(*names)[i] = hdrs[i].name;
		(*srcs)[i] = hdrs[i].source;
	}
	return 0;
}

const char *
tilec_status_str(int st)
{
	switch (st) {
	case TILEC_OK: return "TILEC_OK";
	case TILEC_ERR_ARG: return "TILEC_ERR_ARG";
	case TILEC_ERR_NOLIB: return "TILEC_ERR_NOLIB";
	case TILEC_ERR_COMPILE: return "TILEC_ERR_COMPILE";
	case TILEC_ERR_ARCH: return "TILEC_ERR_ARCH";
	case TILEC_ERR_DRIVER: return "TILEC_ERR_DRIVER";
	case TILEC_ERR_NOTFOUND: return "TILEC_ERR_NOTFOUND";
	case TILEC_ERR_NOMEM: return "TILEC_ERR_NOMEM";
	case TILEC_ERR_IO: return "TILEC_ERR_IO";
	case TILEC_ERR_CRASH: return "TILEC_ERR_CRASH";
	case TILEC_ERR_DIFFER: return "TILEC_ERR_DIFFER";
	case TILEC_ERR_RUN: return "TILEC_ERR_RUN";
	}
	return "TILEC_ERR_UNKNOWN";
}
