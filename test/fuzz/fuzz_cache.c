/*
 * fuzz_cache.c: libFuzzer entry for the runtime's disk cache reader
 * (disk_read). The first byte picks how the rest becomes the entry file of a
 * fixed key: bit 0 seals it (the key and the checksum made to match, so the
 * fuzzer gets past them to the kind, target, compiler and length checks),
 * bits 1-2 pick which request reads it (CUDA sm_80 cubin, compute_90a PTX,
 * HIP gfx90a, the tile memo). An accepted entry must be exactly what was
 * asked for; a crash, a sanitizer report or a hang is a bug.
 * With FUZZ_CACHE_SEEDS=DIR it first writes valid entries there as seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[64], path[160];
static unsigned char key[32];

static const DiskWant wants[4] = {
	{TILEC_BIN_CUBIN, "sm_80", "tilec 0.1.0 nvrtc 13.0"},
	{TILEC_BIN_PTX, "compute_90a", "tilec 0.1.0 nvrtc 13.0"},
	{TILEC_BIN_HSACO, "gfx90a", "tilec 0.1.0 hiprtc 5.2"},
	{RT_BIN_TILE_CUDA, "sm_90a", "tilec 0.1.0 generator"},
};

static void
cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("FUZZ_CACHE_SEEDS");
	char hex[65];
	int w;

	(void)argc, (void)argv;
	snprintf(dir, sizeof dir, "/tmp/tilec-fuzz-cache-%d", (int)getpid());
	mkdir(dir, 0700);
	sha256("fuzz", 4, key);
	sha256_hex(key, hex);
	snprintf(path, sizeof path, "%s/%s.tjc", dir, hex);
	for (w = 0; seeds && w < 4; w++) {
		Blobs b;
		char sp[512];
		unsigned char *img;
		size_t n;
		FILE *f;

		memset(&b, 0, sizeof b);
		blobs_set(&b, BLOB_BIN, "\x7f" "ELF payload", 11);
		blobs_set(&b, BLOB_PTX, w < 2 ? ".version 9.0\n.target sm_80\n" : "", w < 2 ? 27 : 0);
		blobs_set(&b, BLOB_LOG, "log", 3);
		b.binkind = wants[w].kind;
		if (disk_write(dir, key, &wants[w], &b) == 0 && (f = fopen(path, "rb"))) {
			fseek(f, 0, SEEK_END);
			n = (size_t)ftell(f);
			rewind(f);
			img = malloc(n + 1);
			if (img && fread(img + 1, 1, n, f) == n) {
				FILE *o;

				img[0] = (unsigned char)(1 | w << 1);
				snprintf(sp, sizeof sp, "%s/entry%d", seeds, w);
				if ((o = fopen(sp, "wb"))) {
					fwrite(img, 1, n + 1, o);
					fclose(o);
				}
			}
			free(img);
			fclose(f);
		}
		blobs_free(&b);
	}
	unlink(path);
	atexit(cleanup);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *img;
	const DiskWant *w;
	Blobs out;
	FILE *f;
	int r;

	if (!size || size > (1 << 16))
		return 0;
	w = &wants[(data[0] >> 1) & 3];
	img = malloc(size);
	if (!img)
		return 0;
	memcpy(img, data + 1, size - 1);
	if (data[0] & 1)
		disk_seal(img, size - 1, key);
	f = fopen(path, "wb");
	if (!f) {
		free(img);
		return 0;
	}
	fwrite(img, 1, size - 1, f);
	fclose(f);
	free(img);
	r = disk_read(dir, key, w, &out);
	if (r == 0 && (out.binkind != w->kind || !out.n[BLOB_BIN]))
		__builtin_trap(); /* accepted something that was not asked for */
	if (r != 0 && (out.p[BLOB_BIN] || out.p[BLOB_PTX] || out.p[BLOB_LOG]))
		__builtin_trap(); /* a refused entry leaves nothing behind */
	blobs_free(&out);
	unlink(path);
	return 0;
}
