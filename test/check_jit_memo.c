/*
 * check_jit_memo.c: the jit's DSL -> CUDA memo (runtime/jit_tile.c). A tile
 * source compiled again reuses its CUDA C (tilec_jit_stats.tile_hits) and
 * gives the same module; other options, defines or architectures miss;
 * plugins, pass hooks and tile errors are never memoized; the oldest of more
 * than 64 entries goes first; the disk copy serves a new instance and a
 * corrupt one is regenerated. Most cases run with NVRTC absent (the memo is
 * filled before NVRTC runs), so they are quick.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tilec_tile.h"

/* memo_opts.c: tilec_options of a kind, without tilec.h here (its status names clash) */
enum { MO_DEFAULT, MO_BN32, MO_BN16, MO_REGCOUNT, MO_HOOK, MO_TMA, MO_NOTMA, MO_WS, MO_RASTER, MO_PERSIST };
struct tilec_options *memo_opts(int kind, int *hook_calls);

static tilec_jit *
newjit(int with_nvrtc)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;
	char *err = NULL;

	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	if (!with_nvrtc)
		o.nvrtc_path = "/nonexistent/libnvrtc.so";
	ck_assert_msg(tilec_jit_create(&j, &o, &err) == TILEC_OK, "%s", err ? err : "");
	return j;
}

static uint64_t
hits(tilec_jit *j)
{
	tilec_jit_stats st;

	ck_assert_int_eq(tilec_jit_stats_get(j, &st), TILEC_OK);
	return st.tile_hits;
}

static const char copy_src[] =
	"const BM = 128, BN = 64;\n"
	"kernel copy2d(A: f16[M, N], B: f16[M, N])\n"
	"    grid(cdiv(N, BN), cdiv(M, BM)) threads(128)\n"
	"{\n    shared s: f16[BM, BN];\n    copy(A[by * BM, bx * BN], s);\n"
	"    copy(s, B[by * BM, bx * BN]);\n}\n";

/* compile src; the status (NVRTC absent: TILEC_ERR_NOLIB after generation) */
static int
tile(tilec_jit *j, const char *src, const struct tilec_options *o, const char *arch,
     tilec_module **m)
{
	char *err = NULL;
	int rc;

	*m = NULL;
	rc = tilec_jit_compile_tile(j, src, strlen(src), o, arch, m, &err);
	free(err);
	return rc;
}

START_TEST(memo_hit_same_module)
{
	tilec_jit *j = newjit(1);
	tilec_module *a, *b;

	ck_assert_int_eq(tile(j, copy_src, NULL, "sm_80", &a), TILEC_OK);
	ck_assert_uint_eq(hits(j), 0);
	ck_assert_int_eq(tile(j, copy_src, NULL, "sm_80", &b), TILEC_OK);
	ck_assert_uint_eq(hits(j), 1);
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_MEM);
	ck_assert_str_eq(tilec_module_source(a), tilec_module_source(b));
	ck_assert_str_eq(tilec_module_key(a), tilec_module_key(b));
	ck_assert(tilec_module_from_tile(b));
	tilec_module_free(a);
	tilec_module_free(b);
	tilec_jit_destroy(j);
}
END_TEST

/* what changes the generated code misses; what cannot be keyed is not memoized */
START_TEST(memo_keys)
{
	tilec_jit *j = newjit(0);
	tilec_module *m;
	struct tilec_options *bn32 = memo_opts(MO_BN32, NULL), *bn16 = memo_opts(MO_BN16, NULL);
	struct tilec_options *reg = memo_opts(MO_REGCOUNT, NULL), *hk;
	int called = 0;

	hk = memo_opts(MO_HOOK, &called);
	ck_assert(bn32 && bn16 && reg && hk);
	ck_assert_int_eq(tile(j, copy_src, NULL, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_int_eq(tile(j, copy_src, NULL, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_uint_eq(hits(j), 1);
	ck_assert_int_eq(tile(j, copy_src, NULL, "sm_90a", &m), TILEC_ERR_NOLIB); /* arch */
	ck_assert_uint_eq(hits(j), 1);
	ck_assert_int_eq(tile(j, copy_src, bn32, "sm_80", &m), TILEC_ERR_NOLIB); /* a define */
	ck_assert_uint_eq(hits(j), 1);
	ck_assert_int_eq(tile(j, copy_src, bn32, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_uint_eq(hits(j), 2);
	ck_assert_int_eq(tile(j, copy_src, bn16, "sm_80", &m), TILEC_ERR_NOLIB); /* its value */
	ck_assert_uint_eq(hits(j), 2);
	ck_assert_int_eq(tile(j, copy_src, reg, "sm_80", &m), TILEC_ERR_NOLIB); /* cost model */
	ck_assert_uint_eq(hits(j), 2);
	{ /* TMA on and off */
		struct tilec_options *t1 = memo_opts(MO_TMA, NULL), *t0 = memo_opts(MO_NOTMA, NULL);

		ck_assert(t1 && t0);
		ck_assert_int_eq(tile(j, copy_src, t1, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_int_eq(tile(j, copy_src, t0, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 3); /* one of them is the default's */
		free(t1);
		free(t0);
	}
	{ /* warp specialization: another key (the block grows) */
		struct tilec_options *w = memo_opts(MO_WS, NULL);

		ck_assert(w);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 3);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 4);
		free(w);
		/* the grouped block order: another key */
		w = memo_opts(MO_RASTER, NULL);
		ck_assert(w);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 4);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 5);
		free(w);
		/* the persistent schedule: another key */
		w = memo_opts(MO_PERSIST, NULL);
		ck_assert(w);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 5);
		ck_assert_int_eq(tile(j, copy_src, w, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 6);
		free(w);
	}
	/* a pass hook runs every time */
	ck_assert_int_eq(tile(j, copy_src, hk, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_int_eq(tile(j, copy_src, hk, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_int_eq(called, 2);
	ck_assert_uint_eq(hits(j), 6);
	free(bn32);
	free(bn16);
	free(reg);
	free(hk);
	/* the source, one byte changed */
	{
		char *s = strdup(copy_src);

		s[strlen(s) - 3] = ' ';
		ck_assert_int_eq(tile(j, s, NULL, "sm_80", &m), TILEC_ERR_NOLIB);
		ck_assert_uint_eq(hits(j), 6);
		free(s);
	}
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(memo_no_errors)
{
	tilec_jit *j = newjit(0);
	tilec_module *m;
	const char *bad = "kernel k(A: f32[M]) grid(M) threads(32) { copy(A[0], nosuch); }\n";

	ck_assert_int_eq(tile(j, bad, NULL, "sm_80", &m), TILEC_ERR_COMPILE);
	ck_assert_ptr_nonnull(strstr(tilec_module_log(m), "error:"));
	tilec_module_free(m);
	ck_assert_int_eq(tile(j, bad, NULL, "sm_80", &m), TILEC_ERR_COMPILE);
	ck_assert_ptr_nonnull(strstr(tilec_module_log(m), "error:"));
	tilec_module_free(m);
	ck_assert_uint_eq(hits(j), 0);
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(memo_evicts_oldest)
{
	enum { N = 65 };
	tilec_jit *j = newjit(0);
	tilec_module *m;
	char src[N][sizeof copy_src + 32];
	int i;

	for (i = 0; i < N; i++) {
		snprintf(src[i], sizeof src[i], "const X%d = 1;\n%s", i, copy_src);
		ck_assert_int_eq(tile(j, src[i], NULL, "sm_80", &m), TILEC_ERR_NOLIB);
	}
	ck_assert_uint_eq(hits(j), 0);
	ck_assert_int_eq(tile(j, src[N - 1], NULL, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_uint_eq(hits(j), 1);
	ck_assert_int_eq(tile(j, src[1], NULL, "sm_80", &m), TILEC_ERR_NOLIB);
	ck_assert_uint_eq(hits(j), 2);
	ck_assert_int_eq(tile(j, src[0], NULL, "sm_80", &m), TILEC_ERR_NOLIB); /* evicted */
	ck_assert_uint_eq(hits(j), 2);
	tilec_jit_destroy(j);
}
END_TEST

/* the memo on disk: a new instance on the same directory skips the generator; a corrupt
 * entry is regenerated and rewritten */
START_TEST(memo_disk)
{
	tilec_jit_options o;
	tilec_jit *j;
	tilec_module *m;
	char dir[] = "/tmp/tilec_memo_XXXXXX", cmd[160], *err = NULL;
	int round;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	o.nvrtc_path = "/nonexistent/libnvrtc.so"; /* only the memo's entry is written */
	for (round = 0; round < 4; round++) {
		ck_assert_int_eq(tilec_jit_create(&j, &o, &err), TILEC_OK);
		ck_assert_int_eq(tile(j, copy_src, NULL, "sm_80", &m), TILEC_ERR_NOLIB);
		/* round 0 generates; 1 reads the disk; 2 finds a flipped byte; 3 the rewrite */
		ck_assert_msg(hits(j) == (round == 1 || round == 3), "round %d: %llu hits", round,
			      (unsigned long long)hits(j));
		tilec_jit_destroy(j);
		if (round == 1) {
			snprintf(cmd, sizeof cmd, "ls %s/*.tjc | wc -l | grep -qx 1", dir);
			ck_assert_msg(system(cmd) == 0, "not one entry in %s", dir);
			snprintf(cmd, sizeof cmd, "for e in %s/*.tjc; do printf X | dd of=$e bs=1 "
				 "seek=200 conv=notrunc 2>/dev/null; done", dir);
			ck_assert_int_eq(system(cmd), 0);
		}
	}
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* 8 threads on one instance (and its disk directory): 4 on one source, 4 on others, twice
 * each; every thread gets the CUDA C that a lone compile of its source gives */
typedef struct Th {
	tilec_jit *j;
	const char *src;
	char *cuda[2];
	int rc[2];
} Th;

static void *
thmain(void *p)
{
	Th *t = p;
	int r;

	for (r = 0; r < 2; r++) {
		tilec_module *m = NULL;

		t->rc[r] = tilec_jit_compile_tile(t->j, t->src, strlen(t->src), NULL, "sm_80", &m, NULL);
		t->cuda[r] = m ? strdup(tilec_module_source(m)) : NULL;
		tilec_module_free(m);
	}
	return NULL;
}

START_TEST(memo_threads)
{
	enum { NT = 8 };
	tilec_jit_options o;
	tilec_jit *j, *lone;
	tilec_module *m;
	pthread_t th[NT];
	Th t[NT];
	char srcs[NT][sizeof copy_src + 16], dir[] = "/tmp/tilec_memo_XXXXXX", cmd[96], *err = NULL;
	tilec_jit_stats st;
	int i;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	ck_assert_int_eq(tilec_jit_create(&j, &o, &err), TILEC_OK);
	for (i = 0; i < NT; i++) {
		/* BN 64 for threads 0-3, then 8, 16, 32, 96: five different kernels */
		snprintf(srcs[i], sizeof srcs[i], "%s", copy_src);
		memcpy(strstr(srcs[i], "BN = 64"), i < 4 ? "BN = 64" : i == 4 ? "BN =  8" : i == 5 ?
		       "BN = 16" : i == 6 ? "BN = 32" : "BN = 96", 7);
		t[i].j = j;
		t[i].src = srcs[i];
		ck_assert_int_eq(pthread_create(&th[i], NULL, thmain, &t[i]), 0);
	}
	lone = newjit(1);
	for (i = 0; i < NT; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_int_eq(t[i].rc[0], TILEC_OK);
		ck_assert_int_eq(t[i].rc[1], TILEC_OK);
		ck_assert_int_eq(tile(lone, srcs[i], NULL, "sm_80", &m), TILEC_OK);
		ck_assert_str_eq(t[i].cuda[0], tilec_module_source(m));
		ck_assert_str_eq(t[i].cuda[1], tilec_module_source(m));
		tilec_module_free(m);
		free(t[i].cuda[0]);
		free(t[i].cuda[1]);
	}
	tilec_jit_destroy(lone);
	/* 5 distinct sources, 16 compiles: at least the 8 second rounds hit, at most 11 */
	ck_assert_int_eq(tilec_jit_stats_get(j, &st), TILEC_OK);
	ck_assert_msg(st.tile_hits >= 8 && st.tile_hits <= 11, "%llu hits",
		      (unsigned long long)st.tile_hits);
	ck_assert_uint_eq(st.compiles, 5);
	tilec_jit_destroy(j);
	/* the disk holds a memo entry and a module entry per source, no temporary file */
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 10", dir);
	ck_assert_msg(system(cmd) == 0, "not 10 entries in %s", dir);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *
suite_jit_memo(void)
{
	Suite *s = suite_create("jit_memo");
	TCase *t = tcase_create("memo");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, memo_hit_same_module);
	tcase_add_test(t, memo_keys);
	tcase_add_test(t, memo_no_errors);
	tcase_add_test(t, memo_evicts_oldest);
	tcase_add_test(t, memo_disk);
	tcase_add_test(t, memo_threads);
	suite_add_tcase(s, t);
	return s;
}
