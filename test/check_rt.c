/*
 * check_rt.c: the JIT runtime without a GPU: SHA-256 vectors, arch strings,
 * disk cache entries (round trip, corruption, truncation, permissions),
 * NVRTC compiles to cubin/PTX, memory and disk cache hits, a corrupted entry
 * rebuilt, 8 concurrent compiles, and clear errors when libraries are absent.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "tilec.h"
#include "tests.h"

/* ---- helpers ---------------------------------------------------------------- */

/*
 * Sanitizer build: GCC 12's LeakSanitizer misreads the dynamic TLS that NVRTC
 * sets up (a "DTLS" block at a bogus address) and its tracer then dies with
 * SIGSEGV at exit. Not tracking __tls_get_addr avoids that; leak checking of
 * everything else stays on. The environment (ASAN_OPTIONS) still overrides.
 */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "intercept_tls_get_addr=0";
}

static char tmpdir[64];

static const char *
mktmp(void)
{
	strcpy(tmpdir, "/tmp/tilec-rt-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	return tmpdir;
}

static void
rmtmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static tilec_jit *
newjit(const char *dir)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	o.no_disk_cache = dir == NULL;
	ck_assert_int_eq(tilec_jit_create(&j, &o, &err), TILEC_OK);
	ck_assert_ptr_null(err);
	return j;
}

static tilec_jit_stats
stats(tilec_jit *j)
{
	tilec_jit_stats st;

	ck_assert_int_eq(tilec_jit_stats_get(j, &st), TILEC_OK);
	return st;
}

/* the one file of the disk cache in dir (tests use one key at a time) */
static void
entry_file(const char *dir, const char *key, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s.tjc", dir, key);
}

static const char tiny_fmt[] =
	"extern \"C\" __global__ void tiny(float *x) { x[threadIdx.x] += %d.0f; }\n";

static char *
tiny_src(int k)
{
	char *s = malloc(sizeof tiny_fmt + 16);

	ck_assert_ptr_nonnull(s);
	snprintf(s, sizeof tiny_fmt + 16, tiny_fmt, k);
	return s;
}

/* ---- SHA-256 ------------------------------------------------------------------- */

static const struct {
	const char *msg;
	int repeat;
	const char *hex;
} sha_cases[] = {
	{"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	{"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
	 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
	 "lmnopqrsmnopqrstnopqrstu", 1,
	 "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
	{"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
};

START_TEST(sha256_vectors)
{
	Sha256 s;
	unsigned char d[32];
	char hex[65];
	int i;

	sha256_init(&s);
	for (i = 0; i < sha_cases[_i].repeat; i++)
		sha256_update(&s, sha_cases[_i].msg, strlen(sha_cases[_i].msg));
	sha256_final(&s, d);
	sha256_hex(d, hex);
	ck_assert_str_eq(hex, sha_cases[_i].hex);
}
END_TEST

/* property: any split of the input into updates gives the one-shot digest */
START_TEST(sha256_splits)
{
	unsigned char data[1000], one[32], two[32];
	unsigned seed = 12345;
	int t, i;

	for (i = 0; i < (int)sizeof data; i++)
		data[i] = (unsigned char)(seed = seed * 1103515245 + 12345) >> 16;
	for (t = 0; t < 200; t++) {
		size_t n = (seed = seed * 1103515245 + 12345) >> 8 & 1023, off = 0;
		Sha256 s;

		if (n > sizeof data)
			n = sizeof data;
		sha256(data, n, one);
		sha256_init(&s);
		while (off < n) {
			size_t k = ((seed = seed * 1103515245 + 12345) >> 8) % 130;

			if (k > n - off)
				k = n - off;
			sha256_update(&s, data + off, k);
			off += k;
		}
		sha256_final(&s, two);
		ck_assert_mem_eq(one, two, 32);
	}
	/* length-prefixed fields separate ("ab","c") from ("a","bc") */
	{
		Sha256 a, b;

		sha256_init(&a), sha256_str(&a, "ab"), sha256_str(&a, "c"), sha256_final(&a, one);
		sha256_init(&b), sha256_str(&b, "a"), sha256_str(&b, "bc"), sha256_final(&b, two);
		ck_assert_int_ne(memcmp(one, two, 32), 0);
	}
}
END_TEST

/* ---- arch strings ------------------------------------------------------------------- */

static const struct {
	const char *s;
	int cuda, hip;
} arch_cases[] = {
	{"sm_80", 1, 0},      {"sm_90a", 1, 0},     {"sm_100f", 1, 0},   {"compute_90a", 1, 0},
	{"sm_120", 1, 0},     {"sm_8", 0, 0},       {"sm_9000", 0, 0},   {"sm_90b", 0, 0},
	{"sm_", 0, 0},        {"SM_80", 0, 0},      {"sm_80 ", 0, 0},    {"sm_08", 0, 0},
	{"gfx90a", 0, 1},     {"gfx942", 0, 1},     {"gfx1100", 0, 1},   {"gfx90a:xnack-", 0, 1},
	{"gfx90a:sramecc+:xnack-", 0, 1},           {"gfx", 0, 0},       {"gfx9", 0, 0},
	{"gfx90a:", 0, 0},    {"gfx90a:xnack", 0, 0},{"gfx12345", 0, 0}, {"gfx90g", 0, 0},
	{"gfx90a;rm", 0, 0},  {"", 0, 0},
	/* target-ID features: only sramecc and xnack, each once (others crash comgr) */
	{"gfx90a:bogus+", 0, 0}, {"gfx90a:xnack+:xnack-", 0, 0}, {"gfx90a:sramecc-", 0, 1},
	{"gfx90a:xnack+:sramecc+", 0, 1}, {"gfx90a:sramecc", 0, 0}, {"gfx90a:xnackx+", 0, 0},
	{"gfx90a:+", 0, 0},
};

START_TEST(arch_strings)
{
	ck_assert_int_eq(arch_cuda_valid(arch_cases[_i].s), arch_cases[_i].cuda);
	ck_assert_int_eq(arch_hip_valid(arch_cases[_i].s), arch_cases[_i].hip);
}
END_TEST

/* ---- disk entries ------------------------------------------------------------------------ */

/* what the disk tests ask for: sample_blobs' kind, for sm_80, from "test" */
static const DiskWant tw = {TILEC_BIN_CUBIN, "sm_80", "test"};

static void
sample_blobs(Blobs *b)
{
	memset(b, 0, sizeof *b);
	ck_assert_int_eq(blobs_set(b, BLOB_BIN, "\x7f" "ELF binary\0with nul", 20), 0);
	ck_assert_int_eq(blobs_set(b, BLOB_PTX, ".version 9.0", 12), 0);
	ck_assert_int_eq(blobs_set(b, BLOB_LOG, "", 0), 0);
	b->binkind = TILEC_BIN_CUBIN;
}

START_TEST(disk_roundtrip_and_modes)
{
	unsigned char key[32];
	char dir[128], path[256];
	struct stat stb;
	Blobs b, r;

	mktmp();
	snprintf(dir, sizeof dir, "%s/a/b", tmpdir);
	sha256("k", 1, key);
	sample_blobs(&b);
	ck_assert_int_eq(disk_read(dir, key, &tw, &r), 1); /* absent */
	ck_assert_int_eq(disk_write(dir, key, &tw, &b), 0);
	ck_assert_int_eq(stat(dir, &stb), 0);
	ck_assert_int_eq(stb.st_mode & 0777, 0700);
	snprintf(path, sizeof path, "%s/a", tmpdir);
	ck_assert_int_eq(stat(path, &stb), 0);
	ck_assert_int_eq(stb.st_mode & 0777, 0700);
	{
		char hex[65];

		sha256_hex(key, hex);
		entry_file(dir, hex, path, sizeof path);
	}
	ck_assert_int_eq(stat(path, &stb), 0);
	ck_assert_int_eq(stb.st_mode & 0777, 0600);
	ck_assert_int_eq(disk_read(dir, key, &tw, &r), 0);
	ck_assert_int_eq(r.binkind, TILEC_BIN_CUBIN);
	ck_assert_uint_eq(r.n[BLOB_BIN], 20);
	ck_assert_mem_eq(r.p[BLOB_BIN], b.p[BLOB_BIN], 20);
	ck_assert_str_eq((char *)r.p[BLOB_PTX], ".version 9.0");
	ck_assert_uint_eq(r.n[BLOB_LOG], 0);
	blobs_free(&r);
	/* a different key never reads this entry */
	{
		unsigned char k2[32];

		sha256("other", 5, k2);
		ck_assert_int_eq(disk_read(dir, k2, &tw, &r), 1);
	}
	/* no temporary files left behind */
	{
		char cmd[256];

		snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	blobs_free(&b);
	rmtmp();
}
END_TEST

/* flip one byte at each of these offsets (header fields and payload), or truncate */
static const long damage[] = {0, 9, 13, 20, 50, 60, 80, 104, 110, 123, -1, -20, -104};

START_TEST(disk_corruption_detected)
{
	unsigned char key[32];
	char hex[65], path[256];
	Blobs b, r;
	FILE *f;
	long off = damage[_i], size;

	mktmp();
	sha256("k", 1, key);
	sha256_hex(key, hex);
	sample_blobs(&b);
	ck_assert_int_eq(disk_write(tmpdir, key, &tw, &b), 0);
	entry_file(tmpdir, hex, path, sizeof path);
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	if (off >= 0) {
		int c;

		ck_assert_int_lt(off, size);
		fseek(f, off, SEEK_SET);
		c = fgetc(f);
		fseek(f, off, SEEK_SET);
		fputc(c ^ 0x5a, f);
		fclose(f);
	} else {
		fclose(f);
		ck_assert_int_eq(truncate(path, size + off), 0);
	}
	ck_assert_int_eq(disk_read(tmpdir, key, &tw, &r), 2);
	ck_assert_ptr_null(r.p[BLOB_BIN]);
	ck_assert_int_ne(access(path, F_OK), 0); /* removed */
	blobs_free(&b);
	rmtmp();
}
END_TEST


/* property: random damage (1-3 byte changes, or a truncation, or appended bytes) never reads back */
START_TEST(disk_random_damage)
{
	unsigned char key[32], *orig;
	char hex[65], path[256];
	unsigned seed = 777;
	size_t size;
	Blobs b, r;
	int t;

	mktmp();
	sha256("rand", 4, key);
	sha256_hex(key, hex);
	sample_blobs(&b);
	entry_file(tmpdir, hex, path, sizeof path);
	ck_assert_int_eq(disk_write(tmpdir, key, &tw, &b), 0);
	orig = (unsigned char *)test_readfile(path, &size);
	ck_assert_ptr_nonnull(orig);
	for (t = 0; t < 300; t++) {
		unsigned char *d = malloc(size + 8);
		size_t n = size;
		int k, kind = (int)((seed = seed * 1103515245 + 12345) >> 16) % 3;
		FILE *f;

		memcpy(d, orig, size);
		if (kind == 0) {
			int changes = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 3;

			for (k = 0; k < changes; k++) {
				size_t pos = ((seed = seed * 1103515245 + 12345) >> 8) % size;
				unsigned char x = (unsigned char)(1 + ((seed = seed * 1103515245 + 12345) >> 16) % 255);

				d[pos] ^= x;
			}
		} else if (kind == 1) {
			n = ((seed = seed * 1103515245 + 12345) >> 8) % size;
		} else {
			n = size + 1 + ((seed = seed * 1103515245 + 12345) >> 16) % 8;
			for (k = (int)size; k < (int)n; k++)
				d[k] = (unsigned char)k;
		}
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(d, 1, n, f), n);
		fclose(f);
		ck_assert_msg(disk_read(tmpdir, key, &tw, &r) == 2, "damage %d (kind %d) was accepted", t, kind);
		ck_assert_int_ne(access(path, F_OK), 0);
		free(d);
	}
	/* and the undamaged entry still reads */
	ck_assert_int_eq(disk_write(tmpdir, key, &tw, &b), 0);
	ck_assert_int_eq(disk_read(tmpdir, key, &tw, &r), 0);
	blobs_free(&r);
	blobs_free(&b);
	free(orig);
	rmtmp();
}
END_TEST

/* ---- NVRTC compiles --------------------------------------------------------------------- */

static const char mma_src[] =
	"extern \"C\" __global__ void __launch_bounds__(32)\n"
	"mma_kernel(const uint4 *__restrict__ A, float4 *__restrict__ C) {\n"
	"  uint4 a = A[threadIdx.x];\n"
	"  float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;\n"
	"  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \"\n"
	"    \"{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\\n\"\n"
	"    : \"+f\"(c0), \"+f\"(c1), \"+f\"(c2), \"+f\"(c3)\n"
	"    : \"r\"(a.x), \"r\"(a.y), \"r\"(a.z), \"r\"(a.w), \"r\"(a.x), \"r\"(a.y));\n"
	"  C[threadIdx.x] = make_float4(c0, c1, c2, c3);\n"
	"}\n";

static const struct {
	const char *arch;
	int binkind;
	const char *ptx[3];
} cuda_targets[] = {
	{"sm_80", TILEC_BIN_CUBIN, {".target sm_80", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ld.global.nc.v4.u32"}},
	{"sm_90a", TILEC_BIN_CUBIN, {".target sm_90a", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", ".entry mma_kernel"}},
	{"compute_90a", TILEC_BIN_PTX, {".target sm_90a", "mma.sync.aligned.m16n8k16", ".entry mma_kernel"}},
};

START_TEST(nvrtc_targets)
{
	tilec_jit *j = newjit(NULL);
	tilec_module *m = NULL;
	const char *opts[] = {"-default-device"};
	const unsigned char *bin;
	char *err = NULL;
	size_t n = 0;
	int i, maj, min;

	ck_assert_int_eq(tilec_nvrtc_version(j, &maj, &min, NULL), TILEC_OK);
	ck_assert_int_ge(maj, 12);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, mma_src, cuda_targets[_i].arch, opts, 1, &m, &err),
	                 TILEC_OK);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(tilec_module_ok(m), 1);
	ck_assert_int_eq(tilec_module_binary_kind(m), cuda_targets[_i].binkind);
	bin = tilec_module_binary(m, &n);
	ck_assert_uint_gt(n, 500);
	if (cuda_targets[_i].binkind == TILEC_BIN_CUBIN)
		ck_assert_mem_eq(bin, "\x7f" "ELF", 4);
	else
		ck_assert_int_eq(bin[n - 1], 0); /* PTX for the driver: NUL-terminated */
	for (i = 0; i < 3; i++)
		ck_assert_msg(strstr(tilec_module_ptx(m), cuda_targets[_i].ptx[i]), "PTX lacks %s",
		              cuda_targets[_i].ptx[i]);
	ck_assert_str_eq(tilec_module_source(m), mma_src);
	ck_assert_str_eq(tilec_module_arch(m), cuda_targets[_i].arch);
	ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_NONE);
	ck_assert_int_eq((int)strlen(tilec_module_key(m)), 64);
	tilec_module_free(m);
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(nvrtc_compile_error_keeps_log)
{
	static const char bad[] = "extern \"C\" __global__ void k(float *x) { x[0] = undeclared_y; }\n";
	tilec_jit *j = newjit(NULL);
	tilec_module *m = NULL;
	char *err = NULL;
	size_t n = 1;

	ck_assert_int_eq(tilec_jit_compile_cuda(j, bad, "sm_80", NULL, 0, &m, &err), TILEC_ERR_COMPILE);
	ck_assert_ptr_nonnull(err);
	ck_assert_msg(strstr(err, "NVRTC compilation for sm_80 failed") && strstr(err, "undeclared_y"),
	              "message: %s", err);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(tilec_module_ok(m), 0);
	ck_assert_ptr_null(tilec_module_binary(m, &n));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_nonnull(strstr(tilec_module_log(m), "identifier \"undeclared_y\" is undefined"));
	ck_assert_str_eq(tilec_module_source(m), bad);
	ck_assert_int_eq(tilec_module_load(m, NULL), TILEC_ERR_ARG);
	/* failures are not cached: a second try compiles again */
	tilec_module_free(m);
	free(err);
	err = NULL;
	ck_assert_int_eq(tilec_jit_compile_cuda(j, bad, "sm_80", NULL, 0, &m, NULL), TILEC_ERR_COMPILE);
	ck_assert_int_eq(stats(j).compiles, 2);
	ck_assert_int_eq(stats(j).mem_hits, 0);
	tilec_module_free(m);
	tilec_jit_destroy(j);
}
END_TEST


/* in-memory headers: found by #include, part of the key, checked */
START_TEST(nvrtc_headers)
{
	static const char src[] =
		"#include \"tl_helper.h\"\n"
		"extern \"C\" __global__ void hk(float *x) { x[threadIdx.x] = tl_scale(x[threadIdx.x]); }\n";
	tilec_header h3 = {"tl_helper.h", "__device__ inline float tl_scale(float v) { return v * 3.0f; }\n"};
	tilec_header h5 = {"tl_helper.h", "__device__ inline float tl_scale(float v) { return v * 5.0f; }\n"};
	tilec_header bad[2] = {{NULL, "x"}, {"a.h", NULL}};
	tilec_jit *j = newjit(NULL);
	tilec_module *a, *b, *c;
	char *err = NULL;

	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, &h3, 1, &a, &err), TILEC_OK);
	ck_assert_ptr_nonnull(strstr(tilec_module_ptx(a), "0f40400000")); /* 3.0f */
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, &h5, 1, &b, &err), TILEC_OK);
	ck_assert_ptr_nonnull(strstr(tilec_module_ptx(b), "0f40A00000")); /* 5.0f */
	ck_assert_str_ne(tilec_module_key(a), tilec_module_key(b));
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_NONE);
	tilec_module_free(b);
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, &h3, 1, &b, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_MEM);
	/* without the header: a compile error naming it */
	ck_assert_int_eq(tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &c, &err), TILEC_ERR_COMPILE);
	ck_assert_msg(strstr(tilec_module_log(c), "tl_helper.h"), "log: %s", tilec_module_log(c));
	free(err);
	tilec_module_free(c);
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, bad, 1, &c, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, bad + 1, 1, &c, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, NULL, 1, &c, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda_ex(j, src, "sm_80", NULL, 0, &h3, -1, &c, NULL), TILEC_ERR_ARG);
	tilec_module_free(a);
	tilec_module_free(b);
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(compile_from_file)
{
	tilec_jit *j = newjit(NULL);
	tilec_module *m = NULL;
	char path[128], *src = tiny_src(3), *err = NULL;
	FILE *f;

	mktmp();
	snprintf(path, sizeof path, "%s/k.cu", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(src, f);
	fclose(f);
	ck_assert_int_eq(tilec_jit_compile_cuda_file(j, path, "sm_80", NULL, 0, &m, &err), TILEC_OK);
	ck_assert_str_eq(tilec_module_source(m), src);
	ck_assert_ptr_nonnull(strstr(tilec_module_ptx(m), ".entry tiny"));
	tilec_module_free(m);
	ck_assert_int_eq(tilec_jit_compile_cuda_file(j, "/nonexistent/k.cu", "sm_80", NULL, 0, &m,
	                                             &err), TILEC_ERR_IO);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "cannot open /nonexistent/k.cu"));
	free(err);
	free(src);
	tilec_jit_destroy(j);
	rmtmp();
}
END_TEST

/* ---- caches ------------------------------------------------------------------------------- */

static tilec_module *
compile_ok(tilec_jit *j, const char *src, const char *arch, const char *const *opts, int nopts)
{
	tilec_module *m = NULL;
	char *err = NULL;
	int r = tilec_jit_compile_cuda(j, src, arch, opts, nopts, &m, &err);

	ck_assert_msg(r == TILEC_OK, "compile: %s: %s", tilec_status_str(r), err ? err : "");
	return m;
}

START_TEST(cache_hits_and_misses)
{
	const char *o1[] = {"-default-device"}, *o2[] = {"--use_fast_math"};
	char *src = tiny_src(1), *src2 = tiny_src(2);
	tilec_module *a, *b, *c, *d, *e;
	tilec_jit *j, *j2;
	size_t na, nc;
	const void *pa, *pc;

	mktmp();
	j = newjit(tmpdir);
	ck_assert_str_eq(tilec_jit_cache_dir(j), tmpdir);
	a = compile_ok(j, src, "sm_80", o1, 1);
	ck_assert_int_eq(tilec_module_cache_source(a), TILEC_CACHE_NONE);
	b = compile_ok(j, src, "sm_80", o1, 1);
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_MEM);
	ck_assert_str_eq(tilec_module_key(a), tilec_module_key(b));
	ck_assert_int_eq(stats(j).compiles, 1);
	ck_assert_int_eq(stats(j).mem_hits, 1);
	ck_assert_int_eq(stats(j).disk_writes, 1);
	/* each of source, options and arch changes the key */
	d = compile_ok(j, src2, "sm_80", o1, 1);
	e = compile_ok(j, src, "sm_80", o2, 1);
	ck_assert_str_ne(tilec_module_key(d), tilec_module_key(a));
	ck_assert_str_ne(tilec_module_key(e), tilec_module_key(a));
	tilec_module_free(d);
	tilec_module_free(e);
	d = compile_ok(j, src, "sm_90a", o1, 1);
	ck_assert_str_ne(tilec_module_key(d), tilec_module_key(a));
	tilec_module_free(d);
	ck_assert_int_eq(stats(j).compiles, 4);
	/* a new instance (empty memory cache) reads the disk entry */
	j2 = newjit(tmpdir);
	c = compile_ok(j2, src, "sm_80", o1, 1);
	ck_assert_int_eq(tilec_module_cache_source(c), TILEC_CACHE_DISK);
	ck_assert_int_eq(stats(j2).compiles, 0);
	ck_assert_int_eq(stats(j2).disk_hits, 1);
	pa = tilec_module_binary(a, &na);
	pc = tilec_module_binary(c, &nc);
	ck_assert_uint_eq(na, nc);
	ck_assert_mem_eq(pa, pc, na);
	ck_assert_str_eq(tilec_module_ptx(a), tilec_module_ptx(c));
	ck_assert_str_eq(tilec_module_source(c), src);
	ck_assert_int_eq(tilec_module_binary_kind(c), TILEC_BIN_CUBIN);
	tilec_module_free(a);
	tilec_module_free(b);
	tilec_module_free(c);
	tilec_jit_destroy(j);
	tilec_jit_destroy(j2);
	free(src);
	free(src2);
	rmtmp();
}
END_TEST


/* the memory cache stays under its byte limit by dropping the oldest entries */
START_TEST(mem_cache_limit)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	tilec_module *m;
	char *a = tiny_src(61), *b = tiny_src(62);

	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	o.mem_cache_bytes = 1; /* room for the newest entry only */
	ck_assert_int_eq(tilec_jit_create(&j, &o, NULL), TILEC_OK);
	m = compile_ok(j, a, "sm_80", NULL, 0);
	tilec_module_free(m);
	m = compile_ok(j, b, "sm_80", NULL, 0); /* drops a */
	tilec_module_free(m);
	m = compile_ok(j, b, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_MEM);
	tilec_module_free(m);
	m = compile_ok(j, a, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_NONE);
	tilec_module_free(m);
	ck_assert_int_eq(stats(j).compiles, 3);
	ck_assert_int_eq(stats(j).mem_evictions, 2);
	tilec_jit_destroy(j);
	/* the default limit keeps both */
	j = newjit(NULL);
	tilec_module_free(compile_ok(j, a, "sm_80", NULL, 0));
	tilec_module_free(compile_ok(j, b, "sm_80", NULL, 0));
	m = compile_ok(j, a, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_MEM);
	ck_assert_int_eq(stats(j).mem_evictions, 0);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	free(a);
	free(b);
}
END_TEST

/* 0: flip a payload byte, 1: truncate, 2: empty file, 3: garbage of the right size */
START_TEST(cache_corrupt_entry_rebuilt)
{
	char *src = tiny_src(7), path[256];
	tilec_module *a, *b, *c;
	tilec_jit *j;
	struct stat stb;
	size_t na, nb;
	const void *pa, *pb;
	FILE *f;

	mktmp();
	j = newjit(tmpdir);
	a = compile_ok(j, src, "sm_80", NULL, 0);
	tilec_jit_destroy(j);
	entry_file(tmpdir, tilec_module_key(a), path, sizeof path);
	ck_assert_int_eq(stat(path, &stb), 0);
	if (_i == 0) {
		f = fopen(path, "r+b");
		fseek(f, stb.st_size / 2, SEEK_SET);
		fputc(0xA5 ^ 0x7, f);
		fputc(0x11, f);
		fclose(f);
	} else if (_i == 1) {
		ck_assert_int_eq(truncate(path, stb.st_size - 100), 0);
	} else if (_i == 2) {
		ck_assert_int_eq(truncate(path, 0), 0);
	} else {
		long k;

		f = fopen(path, "wb");
		for (k = 0; k < stb.st_size; k++)
			fputc((int)(k * 7 & 255), f);
		fclose(f);
	}
	j = newjit(tmpdir);
	b = compile_ok(j, src, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_NONE);
	ck_assert_int_eq(stats(j).disk_corrupt, 1);
	ck_assert_int_eq(stats(j).compiles, 1);
	ck_assert_int_eq(stats(j).disk_writes, 1);
	pa = tilec_module_binary(a, &na);
	pb = tilec_module_binary(b, &nb);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(pa, pb, na);
	tilec_jit_destroy(j);
	/* the rebuilt entry is good again */
	j = newjit(tmpdir);
	c = compile_ok(j, src, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(c), TILEC_CACHE_DISK);
	ck_assert_int_eq(stat(path, &stb), 0);
	ck_assert_int_eq(stb.st_mode & 0777, 0600);
	tilec_module_free(a);
	tilec_module_free(b);
	tilec_module_free(c);
	tilec_jit_destroy(j);
	free(src);
	rmtmp();
}
END_TEST

/* ---- concurrency ----------------------------------------------------------------------------- */

enum { NTHREADS = 8, NSAME = 4 };

typedef struct {
	tilec_jit *j;
	pthread_barrier_t *bar;
	int id, status;
	tilec_module *m;
} Worker;

static void *
worker(void *arg)
{
	Worker *w = arg;
	char *src = tiny_src(w->id < NSAME ? 100 : w->id);

	pthread_barrier_wait(w->bar);
	w->status = tilec_jit_compile_cuda(w->j, src, "sm_80", NULL, 0, &w->m, NULL);
	free(src);
	return NULL;
}

START_TEST(concurrent_compiles)
{
	pthread_t th[NTHREADS];
	Worker w[NTHREADS];
	pthread_barrier_t bar;
	tilec_jit *j;
	tilec_jit_stats st;
	int i, fresh = 0;

	mktmp();
	j = newjit(tmpdir);
	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		w[i] = (Worker){j, &bar, i, -100, NULL};
		ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(w[i].status, TILEC_OK);
		ck_assert_int_eq(tilec_module_ok(w[i].m), 1);
		if (i < NSAME) {
			ck_assert_str_eq(tilec_module_key(w[i].m), tilec_module_key(w[0].m));
			fresh += tilec_module_cache_source(w[i].m) == TILEC_CACHE_NONE;
		} else {
			ck_assert_int_eq(tilec_module_cache_source(w[i].m), TILEC_CACHE_NONE);
		}
	}
	st = stats(j);
	ck_assert_int_eq(fresh, 1);                           /* one compiled ... */
	ck_assert_int_eq(st.mem_hits, NSAME - 1);             /* ... the others waited for it */
	ck_assert_int_eq(st.compiles, NTHREADS - NSAME + 1);
	ck_assert_int_eq(st.disk_writes, NTHREADS - NSAME + 1);
	for (i = 0; i < NTHREADS; i++)
		tilec_module_free(w[i].m);
	tilec_jit_destroy(j);
	rmtmp();
}
END_TEST


/* several instances (as several processes would) share one directory */
enum { NJIT = 4, PERJIT = 2 };

typedef struct {
	tilec_jit *j;
	pthread_barrier_t *bar;
	int status;
	tilec_module *m;
} Sharer;

static void *
sharer(void *arg)
{
	Sharer *w = arg;
	char *src = tiny_src(31337);

	pthread_barrier_wait(w->bar);
	w->status = tilec_jit_compile_cuda(w->j, src, "sm_80", NULL, 0, &w->m, NULL);
	free(src);
	return NULL;
}

START_TEST(shared_disk_dir)
{
	pthread_t th[NJIT * PERJIT];
	Sharer w[NJIT * PERJIT];
	tilec_jit *js[NJIT];
	pthread_barrier_t bar;
	char cmd[256];
	int i;

	mktmp();
	for (i = 0; i < NJIT; i++)
		js[i] = newjit(tmpdir);
	pthread_barrier_init(&bar, NULL, NJIT * PERJIT);
	for (i = 0; i < NJIT * PERJIT; i++) {
		w[i] = (Sharer){js[i % NJIT], &bar, -100, NULL};
		ck_assert_int_eq(pthread_create(&th[i], NULL, sharer, &w[i]), 0);
	}
	for (i = 0; i < NJIT * PERJIT; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < NJIT * PERJIT; i++) {
		ck_assert_int_eq(w[i].status, TILEC_OK);
		ck_assert_str_eq(tilec_module_key(w[i].m), tilec_module_key(w[0].m));
	}
	for (i = 0; i < NJIT * PERJIT; i++)
		tilec_module_free(w[i].m);
	for (i = 0; i < NJIT; i++) {
		ck_assert_int_eq(stats(js[i]).disk_errors, 0);
		ck_assert_int_eq(stats(js[i]).disk_corrupt, 0);
		tilec_jit_destroy(js[i]);
	}
	/* one entry, no temporary files, and it reads back */
	snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1 && ls '%s' | grep -q '\\.tjc$'",
	         tmpdir, tmpdir);
	ck_assert_int_eq(system(cmd), 0);
	js[0] = newjit(tmpdir);
	{
		char *src = tiny_src(31337);
		tilec_module *m = compile_ok(js[0], src, "sm_80", NULL, 0);

		ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_DISK);
		tilec_module_free(m);
		free(src);
	}
	tilec_jit_destroy(js[0]);
	rmtmp();
}
END_TEST

/* a cache directory that cannot be made is not fatal: compiles work, errors are counted */
START_TEST(unwritable_cache_dir)
{
	char dir[128], path[160];
	tilec_jit *j;
	tilec_module *m;
	char *src = tiny_src(9);
	FILE *f;

	mktmp();
	snprintf(path, sizeof path, "%s/file", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(dir, sizeof dir, "%s/file/sub", tmpdir); /* under a regular file */
	j = newjit(dir);
	m = compile_ok(j, src, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_ok(m), 1);
	ck_assert_int_eq(stats(j).disk_errors, 1);
	ck_assert_int_eq(stats(j).disk_writes, 0);
	tilec_module_free(m);
	m = compile_ok(j, src, "sm_80", NULL, 0);
	ck_assert_int_eq(tilec_module_cache_source(m), TILEC_CACHE_MEM);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	free(src);
	rmtmp();
}
END_TEST

/* ---- bad arguments and missing libraries --------------------------------------------------------- */

START_TEST(bad_arguments)
{
	tilec_jit *j = newjit(NULL);
	tilec_module *m = (tilec_module *)&m;
	const char *nullopt[] = {NULL};
	unsigned g[3] = {1, 1, 1}, z[3] = {1, 0, 1};
	char *err = NULL;
	void *p;

	ck_assert_int_eq(tilec_jit_create(NULL, NULL, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(NULL, "x", "sm_80", NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_ptr_null(m);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, NULL, "sm_80", NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_80", NULL, 0, NULL, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_80", NULL, 2, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_80", nullopt, 1, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_80", nullopt, -1, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_7x", NULL, 0, &m, &err), TILEC_ERR_ARG);
	ck_assert_ptr_nonnull(strstr(err, "bad CUDA architecture 'sm_7x'"));
	free(err);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "gfx90a", NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_hip(j, "x", "sm_80", NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_hip(j, "x", NULL, NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_compile_cuda_file(j, NULL, "sm_80", NULL, 0, &m, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_module_load(NULL, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_launch(NULL, "k", g, g, 0, NULL, NULL, 0, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_module_kernel(NULL, "k", &p, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_dev_alloc(j, NULL, 4, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_dev_alloc(j, &p, 0, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_dev_upload(j, NULL, "x", 1, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_dev_download(j, NULL, NULL, 1, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_dev_arch(NULL, NULL, 0, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_jit_stats_get(NULL, NULL), TILEC_ERR_ARG);
	ck_assert_int_eq(tilec_nvrtc_version(j, NULL, NULL, NULL), TILEC_ERR_ARG);
	/* accessors accept NULL */
	ck_assert_int_eq(tilec_module_ok(NULL), 0);
	ck_assert_str_eq(tilec_module_log(NULL), "");
	ck_assert_ptr_null(tilec_module_source(NULL));
	ck_assert_ptr_null(tilec_module_binary(NULL, NULL));
	ck_assert_ptr_null(tilec_module_ptx(NULL));
	ck_assert_ptr_null(tilec_jit_cache_dir(NULL));
	ck_assert_str_eq(tilec_status_str(TILEC_ERR_CRASH), "TILEC_ERR_CRASH");
	ck_assert_str_eq(tilec_status_str(42), "TILEC_ERR_UNKNOWN");
	tilec_module_free(NULL);
	tilec_jit_destroy(NULL);
	/* launch checks come before the driver */
	{
		char *src = tiny_src(1);

		m = compile_ok(j, src, "sm_80", NULL, 0);
		ck_assert_int_eq(tilec_launch(m, "tiny", z, g, 0, NULL, NULL, 0, NULL), TILEC_ERR_ARG);
		ck_assert_int_eq(tilec_launch(m, "tiny", g, g, 0, NULL, NULL, 1, NULL), TILEC_ERR_ARG);
		ck_assert_int_eq(tilec_launch(m, NULL, g, g, 0, NULL, NULL, 0, NULL), TILEC_ERR_ARG);
		tilec_module_free(m);
		free(src);
	}
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(nvrtc_missing)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	tilec_module *m = NULL;
	char *err = NULL;
	int maj, min;

	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	o.nvrtc_path = "/nonexistent/libnvrtc.so.13";
	ck_assert_int_eq(tilec_jit_create(&j, &o, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, "x", "sm_80", NULL, 0, &m, &err), TILEC_ERR_NOLIB);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err, "NVRTC not found") && strstr(err, "/nonexistent/libnvrtc.so.13"),
	              "message: %s", err);
	free(err);
	ck_assert_int_eq(tilec_nvrtc_version(j, &maj, &min, NULL), TILEC_ERR_NOLIB);
	tilec_jit_destroy(j);
	/* the environment variable does the same */
	setenv("TILEC_NVRTC_PATH", "/nonexistent/libnvrtc-env.so", 1);
	ck_assert_int_eq(tilec_jit_create(&j, NULL, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_nvrtc_version(j, &maj, &min, &err), TILEC_ERR_NOLIB);
	ck_assert_ptr_nonnull(strstr(err, "libnvrtc-env.so"));
	free(err);
	unsetenv("TILEC_NVRTC_PATH");
	tilec_jit_destroy(j);
}
END_TEST

/*
 * 0: an explicit path that does not exist. 1: the default libcuda.so.1: on a
 * machine without a driver (CI) the same clear error; with a driver the
 * module loads and the kernel is found instead.
 */
START_TEST(libcuda_absent)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	tilec_module *m = NULL;
	unsigned g[3] = {1, 1, 1};
	tilec_arg args[1];
	char *err = NULL, *src = tiny_src(5), arch[16];
	const char *want = _i == 0 ? "/nonexistent/libcuda.so.1 not found (no NVIDIA driver)"
	                           : "libcuda.so.1 not found (no NVIDIA driver)";
	void *h = NULL, *p = NULL, *fn = NULL;

	if (_i == 1)
		h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	o.libcuda_path = _i == 0 ? "/nonexistent/libcuda.so.1" : NULL;
	ck_assert_int_eq(tilec_jit_create(&j, &o, NULL), TILEC_OK);
	m = compile_ok(j, src, "sm_80", NULL, 0);
	if (h) {
		/* a driver is installed: the same calls work */
		ck_assert_int_eq(tilec_dev_arch(j, arch, sizeof arch, &err), TILEC_OK);
		tilec_module_free(m);
		m = compile_ok(j, src, arch, NULL, 0);
		ck_assert_int_eq(tilec_module_load(m, &err), TILEC_OK);
		ck_assert_int_eq(tilec_module_kernel(m, "tiny", &fn, &err), TILEC_OK);
		ck_assert_ptr_nonnull(fn);
		ck_assert_int_eq(tilec_module_kernel(m, "nosuch", &fn, NULL), TILEC_ERR_NOTFOUND);
		tilec_module_free(m);
		tilec_jit_destroy(j);
		free(src);
		dlclose(h);
		return;
	}
	ck_assert_int_eq(tilec_module_load(m, &err), TILEC_ERR_NOLIB);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "message: %s", err);
	free(err);
	args[0] = tilec_arg_ptr(NULL);
	ck_assert_int_eq(tilec_launch(m, "tiny", g, g, 0, NULL, args, 1, &err), TILEC_ERR_NOLIB);
	ck_assert_ptr_nonnull(strstr(err, "not found (no NVIDIA driver)"));
	free(err);
	ck_assert_int_eq(tilec_module_kernel(m, "tiny", &fn, NULL), TILEC_ERR_NOLIB);
	ck_assert_int_eq(tilec_dev_alloc(j, &p, 16, NULL), TILEC_ERR_NOLIB);
	ck_assert_int_eq(tilec_dev_sync(j, NULL), TILEC_ERR_NOLIB);
	ck_assert_int_eq(tilec_dev_arch(j, arch, sizeof arch, NULL), TILEC_ERR_NOLIB);
	tilec_module_free(m);
	/* arch NULL means "the device's": no driver, no compile */
	ck_assert_int_eq(tilec_jit_compile_cuda(j, src, NULL, NULL, 0, &m, &err), TILEC_ERR_NOLIB);
	ck_assert_ptr_null(m);
	free(err);
	free(src);
	tilec_jit_destroy(j);
}
END_TEST

/* the public header and the argument builders compile as C against cuda.h */
START_TEST(header_with_cuda_h)
{
	static const char prog[] =
		"#include <cuda.h>\n"
		"#include \"tilec_jit.h\"\n"
		"int f(CUdeviceptr d, CUstream s, tilec_module *m);\n"
		"int f(CUdeviceptr d, CUstream s, tilec_module *m) {\n"
		"  unsigned g[3] = {1, 1, 1};\n"
		"  tilec_arg a[5] = {tilec_arg_ptr((void *)(uintptr_t)d), tilec_arg_i32(1),\n"
		"    tilec_arg_i64(2), tilec_arg_f32(3.f), tilec_arg_f16(0x3c00)};\n"
		"  return tilec_launch(m, \"k\", g, g, 0, (void *)s, a, 5, NULL);\n"
		"}\n";
	char path[128], cmd[512];
	FILE *f;

	mktmp();
	snprintf(path, sizeof path, "%s/h.c", tmpdir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(prog, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -fsyntax-only "
	         "-I/usr/local/cuda/include -Iruntime %s", path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(sizeof(tilec_arg), 16);
	rmtmp();
}
END_TEST

/* ---- TMA: the tensor maps tilec_launch makes from a kernel's other arguments ---- */
START_TEST(tma_launch_args)
{
	tilec_options o;
	tilec_result r;
	size_t len;
	char *src = test_readfile("samples/gemm_sm90.tile", &len), *err = NULL;
	tilec_arg a[6];
	TmaReq q[16];
	int n;

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&o);
	o.arch = "sm_90a";
	o.tma = 1;
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	a[0] = tilec_arg_ptr((void *)(uintptr_t)0x10000);
	a[1] = tilec_arg_ptr((void *)(uintptr_t)0x20000);
	a[2] = tilec_arg_ptr((void *)(uintptr_t)0x30000);
	a[3] = tilec_arg_i32(1000), a[4] = tilec_arg_i32(520), a[5] = tilec_arg_i32(264); /* M, K, N */
	n = tma_args(r.output, "gemm_sm90", a, 6, q, 16, &err);
	ck_assert_msg(n == 2, "%d maps: %s", n, err ? err : "");
	/* A[M, K]: dims (K, M), rows of K elements, boxes of 64 x 128 rows; B[K, N]: 64 x 64 */
	ck_assert(q[0].base == (void *)(uintptr_t)0x10000 && q[0].rank == 2 && q[0].dim[0] == 520 && q[0].dim[1] == 1000 &&
		  q[0].stride[0] == 1040 && q[0].box[0] == 64 && q[0].box[1] == 128 && q[0].box[2] == 1 && q[0].esize == 2 &&
		  q[0].swizzle == 128);
	ck_assert(q[1].base == (void *)(uintptr_t)0x20000 && q[1].rank == 2 && q[1].dim[0] == 264 && q[1].dim[1] == 520 &&
		  q[1].stride[0] == 528 && q[1].box[0] == 64 && q[1].box[1] == 64 && q[1].swizzle == 128);
	/* the caller passes the maps too: refused with the count */
	ck_assert_int_eq(tma_args(r.output, "gemm_sm90", a, 5, q, 16, &err), -1);
	ck_assert_msg(err && strstr(err, "takes 6 arguments (its 2 TMA tensor maps are made by the runtime), not 5"), "%s", err);
	free(err), err = NULL;
	/* a size where the tensor must be */
	a[0] = tilec_arg_i32(7);
	ck_assert_int_eq(tma_args(r.output, "gemm_sm90", a, 6, q, 16, &err), -1);
	ck_assert_msg(err && strstr(err, "argument A is not a pointer"), "%s", err);
	free(err), err = NULL;
	/* a kernel without maps, and the same program without --tma: none */
	ck_assert_int_eq(tma_args(r.output, "other", a, 6, q, 16, &err), 0);
	tilec_result_free(&r);
	o.tma = 0;
	tilec_compile(src, len, &o, &r);
	ck_assert_int_eq(tma_args(r.output, "gemm_sm90", a, 6, q, 16, &err), 0);
	tilec_result_free(&r);
	free(src);
}
END_TEST

/* rank 3: FlashAttention's K and V blocks are boxes of one plane of [BH, L, D] */
START_TEST(tma_launch_args_3d)
{
	tilec_options o;
	tilec_result r;
	size_t len;
	char *src = test_readfile("samples/flash_fwd.tile", &len), *err = NULL;
	tilec_arg a[6];
	TmaReq q[16];
	int n, i;

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&o);
	o.arch = "sm_90a";
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_ptr_nonnull(strstr(r.output, "tensor map tl_tm_K of K: 2-byte elements, dims (128, L, BH), rows of 128 "
					       "elements, box (64, 64, 1), swizzle 128B\n"));
	for (i = 0; i < 4; i++)
		a[i] = tilec_arg_ptr((void *)(uintptr_t)(0x10000 * (i + 1)));
	a[4] = tilec_arg_i32(6), a[5] = tilec_arg_i32(1000); /* BH, L */
	n = tma_args(r.output, "flash_fwd", a, 6, q, 16, &err);
	ck_assert_msg(n == 2, "%d maps: %s", n, err ? err : "");
	for (i = 0; i < 2; i++)
		ck_assert(q[i].base == (void *)(uintptr_t)(0x10000 * (i + 2)) && q[i].rank == 3 && q[i].dim[0] == 128 &&
			  q[i].dim[1] == 1000 && q[i].dim[2] == 6 && q[i].stride[0] == 256 && q[i].stride[1] == 256000 &&
			  q[i].box[0] == 64 && q[i].box[1] == 64 && q[i].box[2] == 1 && q[i].esize == 2 && q[i].swizzle == 128);
	tilec_result_free(&r);
	free(src);
}
END_TEST

Suite *
suite_rt(void)
{
	Suite *s = suite_create("rt");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, sha256_vectors, 0, (int)countof(sha_cases));
	tcase_add_test(t, sha256_splits);
	tcase_add_test(t, tma_launch_args);
	tcase_add_test(t, tma_launch_args_3d);
	tcase_add_loop_test(t, arch_strings, 0, (int)countof(arch_cases));
	tcase_add_test(t, disk_roundtrip_and_modes);
	tcase_add_loop_test(t, disk_corruption_detected, 0, (int)countof(damage));
	tcase_add_test(t, disk_random_damage);
	tcase_add_loop_test(t, nvrtc_targets, 0, (int)countof(cuda_targets));
	tcase_add_test(t, nvrtc_compile_error_keeps_log);
	tcase_add_test(t, nvrtc_headers);
	tcase_add_test(t, compile_from_file);
	tcase_add_test(t, cache_hits_and_misses);
	tcase_add_test(t, mem_cache_limit);
	tcase_add_loop_test(t, cache_corrupt_entry_rebuilt, 0, 4);
	tcase_add_test(t, concurrent_compiles);
	tcase_add_test(t, shared_disk_dir);
	tcase_add_test(t, unwritable_cache_dir);
	tcase_add_test(t, bad_arguments);
	tcase_add_test(t, nvrtc_missing);
	tcase_add_loop_test(t, libcuda_absent, 0, 2);
	tcase_add_test(t, header_with_cuda_h);
	suite_add_tcase(s, t);
	return s;
}
