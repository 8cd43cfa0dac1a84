/*
 * check_cache_trust.c: the disk cache trusts nothing it did not write for
 * this request. Hostile entries planted under a request's key (a FIFO, a
 * symlink, a truncated or flipped file, another key's entry, an entry of
 * another binary kind, arch or compiler version, one owned by another user)
 * and untrusted directories (group/other writable, foreign owner) are each
 * a miss: the module is compiled again, is correct, and the entry is
 * rewritten. Every compile runs under alarm() so a blocking open fails the
 * test instead of hanging it. An empty cache_dir / TILEC_CACHE_DIR means the
 * default directory. Needs NVRTC (no GPU).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "tests.h"
#include "tl.h"

static char tdir[40];

static void
mkt(void)
{
	strcpy(tdir, "/tmp/tilec-trust-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
}

static void
rmt(void)
{
	char cmd[160];

	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", tdir, tdir);
	ck_assert_int_eq(system(cmd), 0);
}

static tilec_jit *
jit_at(const char *dir)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	ck_assert_int_eq(tilec_jit_create(&j, &o, &err), TILEC_OK);
	ck_assert_ptr_null(err);
	return j;
}

static const char src1[] =
	"extern \"C\" __global__ void trust1(float *x) { x[threadIdx.x] += 1.5f; }\n";
static const char src2[] =
	"extern \"C\" __global__ void trust2(float *x) { x[threadIdx.x] *= 2.5f; }\n";

/* compile src for sm_80 in a fresh jit on dir, in bounded time; the module's cache source
 * and (if key) its key hex */
static int
compile_once(const char *dir, const char *src, char key[65])
{
	tilec_jit *j = jit_at(dir);
	tilec_module *m = NULL;
	char *err = NULL;
	size_t n = 0;
	int from;

	signal(SIGALRM, SIG_DFL); /* not Check's handler: it kills the whole process group */
	alarm(60); /* a blocking read of a planted FIFO kills the test here */
	ck_assert_int_eq(tilec_jit_compile_cuda(j, src, "sm_80", NULL, 0, &m, &err), TILEC_OK);
	alarm(0);
	ck_assert_ptr_null(err);
	ck_assert_int_eq(tilec_module_ok(m), 1);
	ck_assert_int_eq(tilec_module_binary_kind(m), TILEC_BIN_CUBIN);
	ck_assert_mem_eq(tilec_module_binary(m, &n), "\x7f" "ELF", 4);
	ck_assert_uint_gt(n, 200);
	ck_assert_ptr_nonnull(strstr(tilec_module_ptx(m), src == src1 ? "trust1" : "trust2"));
	ck_assert_ptr_nonnull(strstr(tilec_module_ptx(m), ".target sm_80"));
	if (key)
		strcpy(key, tilec_module_key(m));
	from = tilec_module_cache_source(m);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	return from;
}

static void
path_of(const char *dir, const char *key, char *buf, size_t n)
{
	snprintf(buf, n, "%s/%s.tjc", dir, key);
}

static void
hexkey(const char *hex, unsigned char key[32])
{
	int i;

	for (i = 0; i < 32; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		key[i] = (unsigned char)v;
	}
}

/* the compiler string the runtime records for an NVRTC compile */
static void
nvrtc_compiler(char *buf, size_t n)
{
	tilec_jit *j = jit_at(NULL);
	int maj, min;

	ck_assert_int_eq(tilec_nvrtc_version(j, &maj, &min, NULL), TILEC_OK);
	snprintf(buf, n, "tilec %s nvrtc %d.%d", TL_VERSION, maj, min);
	tilec_jit_destroy(j);
}

/* a self-consistent entry under key hex with this kind / target / compiler and a
 * payload that is not src1's cubin */
static void
plant(const char *dir, const char *hex, int kind, const char *target, const char *compiler)
{
	unsigned char key[32];
	DiskWant w = {kind, target, compiler};
	Blobs b;

	memset(&b, 0, sizeof b);
	ck_assert_int_eq(blobs_set(&b, BLOB_BIN, "\x7f" "ELF planted", 11), 0);
	ck_assert_int_eq(blobs_set(&b, BLOB_PTX, ".target planted", 15), 0);
	b.binkind = kind;
	hexkey(hex, key);
	ck_assert_int_eq(disk_write(dir, key, &w, &b), 0);
	blobs_free(&b);
}

enum {
	H_FIFO, H_SYMLINK, H_DIRECTORY, H_TRUNCATED, H_FLIPPED, H_SWAPPED, H_HSACO, H_MEMO, H_PTX,
	H_ARCH, H_VERSION, H_GARBAGE, H_EMPTY, NHOSTILE
};
static const char *const hostile_name[] = {
	"fifo", "symlink", "directory", "truncated", "flipped byte", "swapped key", "kind hsaco",
	"kind tile memo", "kind ptx", "arch sm_90a", "other compiler version", "garbage", "empty",
};

/* every hostile entry: a miss, a correct module, the entry rewritten (the next jit hits it) */
START_TEST(hostile_entry_is_a_miss)
{
	char key[65], key2[65], path[256], other[256], comp[96];
	int h = _i;
	struct stat stb;

	mkt();
	nvrtc_compiler(comp, sizeof comp);
	ck_assert_int_eq(compile_once(tdir, src1, key), TILEC_CACHE_NONE);
	ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_DISK); /* the honest entry */
	path_of(tdir, key, path, sizeof path);
	switch (h) {
	case H_FIFO:
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(mkfifo(path, 0600), 0);
		break;
	case H_SYMLINK: /* to a good copy elsewhere: links are never followed */
		snprintf(other, sizeof other, "%s/elsewhere", tdir);
		ck_assert_int_eq(rename(path, other), 0);
		ck_assert_int_eq(symlink(other, path), 0);
		break;
	case H_DIRECTORY:
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(mkdir(path, 0700), 0);
		break;
	case H_TRUNCATED:
		ck_assert_int_eq(stat(path, &stb), 0);
		ck_assert_int_eq(truncate(path, stb.st_size - 7), 0);
		break;
	case H_FLIPPED: {
		int fd = open(path, O_RDWR);
		unsigned char c;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(fstat(fd, &stb), 0);
		ck_assert_int_eq(pread(fd, &c, 1, stb.st_size / 2), 1);
		c ^= 0x10;
		ck_assert_int_eq(pwrite(fd, &c, 1, stb.st_size / 2), 1);
		close(fd);
		break;
	}
	case H_SWAPPED: /* src2's (valid) entry renamed to src1's key */
		ck_assert_int_eq(compile_once(tdir, src2, key2), TILEC_CACHE_NONE);
		path_of(tdir, key2, other, sizeof other);
		ck_assert_int_eq(rename(other, path), 0);
		break;
	case H_HSACO:
		plant(tdir, key, TILEC_BIN_HSACO, "sm_80", comp);
		break;
	case H_MEMO:
		plant(tdir, key, RT_BIN_TILE_CUDA, "sm_80", comp);
		break;
	case H_PTX:
		plant(tdir, key, TILEC_BIN_PTX, "sm_80", comp);
		break;
	case H_ARCH:
		plant(tdir, key, TILEC_BIN_CUBIN, "sm_90a", comp);
		break;
	case H_VERSION:
		plant(tdir, key, TILEC_BIN_CUBIN, "sm_80", "tilec 0.0.1 nvrtc 12.4");
		break;
	case H_GARBAGE: {
		FILE *f = fopen(path, "wb");
		int i;

		ck_assert_ptr_nonnull(f);
		for (i = 0; i < 5000; i++)
			fputc((i * 7919) & 0xff, f);
		fclose(f);
		break;
	}
	case H_EMPTY:
		ck_assert_int_eq(truncate(path, 0), 0);
		break;
	}
	ck_assert_msg(compile_once(tdir, src1, NULL) == TILEC_CACHE_NONE,
	              "hostile entry '%s' was loaded", hostile_name[h]);
	/* the entry was replaced by an honest one (a directory in the way cannot be) */
	if (h != H_DIRECTORY) {
		ck_assert_int_eq(lstat(path, &stb), 0);
		ck_assert(S_ISREG(stb.st_mode));
		ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_DISK);
	} else {
		ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_NONE);
	}
	rmt();
}
END_TEST

/* an entry owned by another user is never loaded (needs root to chown) */
START_TEST(foreign_owner_entry)
{
	char key[65], path[256];

	ck_assert_msg(geteuid() == 0, "this test is registered for root only");
	mkt();
	ck_assert_int_eq(compile_once(tdir, src1, key), TILEC_CACHE_NONE);
	path_of(tdir, key, path, sizeof path);
	ck_assert_int_eq(chown(path, 65534, 65534), 0);
	ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_NONE);
	ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_DISK); /* rewritten, ours */
	/* a cache directory owned by someone else is not used at all */
	ck_assert_int_eq(chown(tdir, 65534, 65534), 0);
	ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_NONE);
	/* unless the user opts in to a shared cache */
	ck_assert_int_eq(setenv("TILEC_CACHE_SHARED", "1", 1), 0);
	ck_assert_int_eq(compile_once(tdir, src1, NULL), TILEC_CACHE_DISK);
	unsetenv("TILEC_CACHE_SHARED");
	rmt();
}
END_TEST

/* a directory writable by group or others: entries there are neither read nor written */
static const unsigned dir_modes[] = {0770, 0707, 01777, 0720};

START_TEST(untrusted_directory)
{
	char key[65], path[256], dir[128];
	tilec_jit *j;
	tilec_jit_stats st;
	tilec_module *m = NULL;

	mkt();
	snprintf(dir, sizeof dir, "%s/c", tdir);
	ck_assert_int_eq(compile_once(dir, src1, key), TILEC_CACHE_NONE);
	ck_assert_int_eq(compile_once(dir, src1, NULL), TILEC_CACHE_DISK);
	ck_assert_int_eq(chmod(dir, dir_modes[_i]), 0);
	/* the honest entry is there, but nobody can tell who put it there */
	ck_assert_int_eq(compile_once(dir, src1, NULL), TILEC_CACHE_NONE);
	/* nothing is written into it: src2 leaves no entry */
	j = jit_at(dir);
	ck_assert_int_eq(tilec_jit_compile_cuda(j, src2, "sm_80", NULL, 0, &m, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_jit_stats_get(j, &st), TILEC_OK);
	ck_assert_int_eq(st.disk_writes, 0);
	ck_assert_int_eq(st.disk_errors, 1);
	path_of(dir, tilec_module_key(m), path, sizeof path);
	ck_assert_int_ne(access(path, F_OK), 0);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	/* TILEC_CACHE_SHARED=1 is the opt-in */
	ck_assert_int_eq(setenv("TILEC_CACHE_SHARED", "1", 1), 0);
	ck_assert_int_eq(compile_once(dir, src1, NULL), TILEC_CACHE_DISK);
	unsetenv("TILEC_CACHE_SHARED");
	/* back to 0700: used again */
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(compile_once(dir, src1, NULL), TILEC_CACHE_DISK);
	rmt();
}
END_TEST

/* an empty directory name (option or environment) is the default ~/.cache/tilec, never "/" */
START_TEST(empty_dir_is_default)
{
	char want[128];
	tilec_jit *j;
	struct stat stb;
	char key[65], path[256];

	mkt();
	ck_assert_int_eq(setenv("HOME", tdir, 1), 0);
	snprintf(want, sizeof want, "%s/.cache/tilec", tdir);
	ck_assert_int_eq(setenv("TILEC_CACHE_DIR", "", 1), 0);
	j = jit_at(NULL);
	ck_assert_str_eq(tilec_jit_cache_dir(j), want);
	tilec_jit_destroy(j);
	unsetenv("TILEC_CACHE_DIR");
	j = jit_at("");
	ck_assert_str_eq(tilec_jit_cache_dir(j), want);
	tilec_jit_destroy(j);
	ck_assert_int_eq(compile_once("", src1, key), TILEC_CACHE_NONE);
	path_of(want, key, path, sizeof path);
	ck_assert_int_eq(stat(path, &stb), 0);
	ck_assert_int_eq(stat(want, &stb), 0);
	ck_assert_int_eq(stb.st_mode & 0777, 0700);
	snprintf(path, sizeof path, "/%s.tjc", key);
	ck_assert_int_ne(access(path, F_OK), 0);
	rmt();
}
END_TEST

/* disk_read itself: each mismatch of the request is refused (2) and the file removed */
START_TEST(disk_want_mismatch)
{
	static const DiskWant good = {TILEC_BIN_CUBIN, "sm_80", "c1"};
	static const DiskWant bad[] = {
		{TILEC_BIN_HSACO, "sm_80", "c1"}, {RT_BIN_TILE_CUDA, "sm_80", "c1"},
		{TILEC_BIN_CUBIN, "sm_80a", "c1"}, {TILEC_BIN_CUBIN, "sm_8", "c1"},
		{TILEC_BIN_CUBIN, "sm_80", "c2"}, {TILEC_BIN_CUBIN, "sm_80", "c"},
		{TILEC_BIN_CUBIN, "sm_80", "c1 "},
	};
	unsigned char key[32];
	Blobs b, r;
	size_t i;

	mkt();
	sha256("want", 4, key);
	memset(&b, 0, sizeof b);
	ck_assert_int_eq(blobs_set(&b, BLOB_BIN, "bin", 3), 0);
	b.binkind = TILEC_BIN_CUBIN;
	for (i = 0; i < countof(bad); i++) {
		ck_assert_int_eq(disk_write(tdir, key, &good, &b), 0);
		ck_assert_msg(disk_read(tdir, key, &bad[i], &r) == 2, "want %zu accepted", i);
		ck_assert_int_eq(disk_read(tdir, key, &good, &r), 1); /* removed */
	}
	ck_assert_int_eq(disk_write(tdir, key, &good, &b), 0);
	ck_assert_int_eq(disk_read(tdir, key, &good, &r), 0);
	blobs_free(&r);
	/* a kind that does not match the blobs, or an overlong target, is not written */
	ck_assert_int_eq(disk_write(tdir, key, &bad[0], &b), -1);
	{
		char longt[80];
		DiskWant w = good;

		memset(longt, 'x', sizeof longt - 1);
		longt[sizeof longt - 1] = 0;
		w.target = longt;
		ck_assert_int_eq(disk_write(tdir, key, &w, &b), -1);
		ck_assert_int_eq(disk_read(tdir, key, &w, &r), 1);
	}
	blobs_free(&b);
	rmt();
}
END_TEST

Suite *
suite_cache_trust(void)
{
	Suite *s = suite_create("cache_trust");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, hostile_entry_is_a_miss, 0, NHOSTILE);
	if (geteuid() == 0) /* chown needs root */
		tcase_add_test(t, foreign_owner_entry);
	tcase_add_loop_test(t, untrusted_directory, 0, (int)countof(dir_modes));
	tcase_add_test(t, empty_dir_is_default);
	tcase_add_test(t, disk_want_mismatch);
	suite_add_tcase(s, t);
	return s;
}
