/*
 * check_hip.c: hipRTC through the runtime, without an AMD GPU: MFMA kernels
 * compile for gfx90a/gfx908 (the .text holds the v_mfma encodings, and
 * llvm-objdump, where installed, disassembles them), the
 * cache serves repeats, gfx942/gfx1100 get a clear error, a compiler crash in
 * the child process leaves the test process alive, and missing libraries or
 * a hung child are reported.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lower.h"
#include "rt.h"
#include "tests.h"

static const char mfma_src[] =
	"typedef _Float16 half4_t __attribute__((ext_vector_type(4)));\n"
	"typedef float float4_t __attribute__((ext_vector_type(4)));\n"
	"extern \"C\" __global__ void __launch_bounds__(64)\n"
	"mfma_kernel(const half4_t *__restrict__ a, const uint4 *__restrict__ b,\n"
	"            float4_t *__restrict__ c) {\n"
	"  int t = threadIdx.x;\n"
	"  uint4 bv = b[blockIdx.x * 64 + t];\n"
	"  half4_t b0 = *reinterpret_cast<half4_t *>(&bv.x), b1 = *reinterpret_cast<half4_t *>(&bv.z);\n"
	"  float4_t acc = {0.f, 0.f, 0.f, 0.f};\n"
	"  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[t], b0, acc, 0, 0, 0);\n"
	"  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a[t], b1, acc, 0, 0, 0);\n"
	"  c[blockIdx.x * 64 + t] = acc;\n"
	"}\n";

static char tmpdir[64];

static void
mktmp(void)
{
	strcpy(tmpdir, "/tmp/tilec-hip-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
rmtmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

static tilec_jit *
newjit(const char *dir, const char *hip_path, int timeout_ms)
{
	tilec_jit_options o;
	tilec_jit *j = NULL;

	memset(&o, 0, sizeof o);
	o.cache_dir = dir;
	o.no_disk_cache = dir == NULL;
	o.hip_path = hip_path;
	o.hip_timeout_ms = timeout_ms;
	ck_assert_int_eq(tilec_jit_create(&j, &o, NULL), TILEC_OK);
	return j;
}

static int
contains(const unsigned char *p, size_t n, const char *s)
{
	size_t k = strlen(s), i;

	for (i = 0; i + k <= n; i++)
		if (!memcmp(p + i, s, k))
			return 1;
	return 0;
}

/* the .text section of an ELF64 little-endian code object; 0 if not found */
static int
elf_text(const unsigned char *b, size_t n, size_t *off, size_t *size)
{
	uint64_t shoff, stroff;
	unsigned shentsize, shnum, shstrndx, i;

#define U16(p) ((unsigned)(p)[0] | (unsigned)(p)[1] << 8)
#define U32(p) ((uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 | (uint32_t)(p)[2] << 16 | (uint32_t)(p)[3] << 24)
#define U64(p) ((uint64_t)U32(p) | (uint64_t)U32((p) + 4) << 32)
	if (n < 64 || memcmp(b, "\x7f" "ELF", 4) || b[4] != 2 || b[5] != 1)
		return 0;
	shoff = U64(b + 0x28);
	shentsize = U16(b + 0x3a);
	shnum = U16(b + 0x3c);
	shstrndx = U16(b + 0x3e);
	if (shentsize < 64 || shstrndx >= shnum || shoff > n || (uint64_t)shnum * shentsize > n - shoff)
		return 0;
	stroff = U64(b + shoff + (uint64_t)shstrndx * shentsize + 0x18);
	for (i = 0; i < shnum; i++) {
		const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
		uint64_t name = stroff + U32(sh), o = U64(sh + 0x18), sz = U64(sh + 0x20);

		if (name + 6 <= n && !memcmp(b + name, ".text", 6) && o <= n && sz <= n - o) {
			*off = (size_t)o;
			*size = (size_t)sz;
			return 1;
		}
	}
	return 0;
#undef U16
#undef U32
#undef U64
}

/* gfx908/gfx90a v_mfma_f32_16x16x16f16: VOP3P-MAI, first dword 0xD3CDxxxx */
static int
count_mfma(const unsigned char *b, size_t n)
{
	size_t off, size, i;
	int c = 0;

	if (!elf_text(b, n, &off, &size))
		return -1;
	for (i = 0; i + 4 <= size; i += 4)
		if (b[off + i + 3] == 0xD3 && b[off + i + 2] == 0xCD)
			c++;
	return c;
}

/* disassemble with the first llvm-objdump found: malloc'd text, or NULL if there is none */
static char *
disasm(const void *bin, size_t n, const char *mcpu)
{
	static const char *const tools[] = {"llvm-objdump-19", "llvm-objdump-15", "llvm-objdump-14",
	                                    "llvm-objdump"};
	char path[128], out[140], cmd[512];
	FILE *f;
	char *text;
	size_t i;

	snprintf(path, sizeof path, "%s/k.co", tmpdir);
	snprintf(out, sizeof out, "%s/k.s", tmpdir);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bin, 1, n, f), n);
	fclose(f);
	for (i = 0; i < countof(tools); i++) {
		snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tools[i]);
		if (system(cmd) == 0)
			break;
	}
	if (i == countof(tools))
		return NULL;
	snprintf(cmd, sizeof cmd, "%s -d --mcpu=%s %s > %s", tools[i], mcpu, path, out);
	ck_assert_int_eq(system(cmd), 0);
	text = test_readfile(out, NULL);
	ck_assert_ptr_nonnull(text);
	return text;
}

static const struct {
	const char *arch, *mcpu;
} mfma_targets[] = {
	{"gfx90a", "gfx90a"},
	{"gfx908", "gfx908"},
	{"gfx90a:sramecc+:xnack-", "gfx90a"},
};

START_TEST(hip_mfma_compiles)
{
	tilec_jit *j = newjit(NULL, NULL, 0);
	tilec_module *m = NULL;
	const char *opts[] = {"-O3"};
	const unsigned char *bin;
	char *err = NULL, *text;
	size_t n = 0;
	int r;

	mktmp();
	r = tilec_jit_compile_hip(j, mfma_src, mfma_targets[_i].arch, opts, 1, &m, &err);
	ck_assert_msg(r == TILEC_OK, "%s: %s", tilec_status_str(r), err ? err : "");
	ck_assert_int_eq(tilec_module_binary_kind(m), TILEC_BIN_HSACO);
	bin = tilec_module_binary(m, &n);
	ck_assert_uint_gt(n, 1000);
	ck_assert_mem_eq(bin, "\x7f" "ELF", 4);
	ck_assert_int_eq(contains(bin, n, "mfma_kernel"), 1);
	ck_assert_ptr_null(tilec_module_ptx(m));
	ck_assert_str_eq(tilec_module_source(m), mfma_src);
	/* two MFMAs in the source, two in the machine code */
	ck_assert_int_eq(count_mfma(bin, n), 2);
	text = disasm(bin, n, mfma_targets[_i].mcpu);
	if (text) { /* and, where llvm-objdump is installed, in its disassembly */
		ck_assert_msg(strstr(text, "v_mfma_f32_16x16x16"), "no v_mfma in:\n%.2000s", text);
		ck_assert_ptr_nonnull(strstr(text, "global_load_dwordx4"));
		free(text);
	}
	/* HIP modules are not loaded by the CUDA driver */
	ck_assert_int_eq(tilec_module_load(m, NULL), TILEC_ERR_ARG);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	rmtmp();
}
END_TEST

START_TEST(hip_cache)
{
	tilec_module *a, *b, *c;
	tilec_jit *j, *j2;
	tilec_jit_stats st;
	size_t na, nc;
	const void *pa, *pc;

	mktmp();
	j = newjit(tmpdir, NULL, 0);
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &a, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &b, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_module_cache_source(b), TILEC_CACHE_MEM);
	tilec_jit_stats_get(j, &st);
	ck_assert_int_eq(st.compiles, 1);
	j2 = newjit(tmpdir, NULL, 0);
	ck_assert_int_eq(tilec_jit_compile_hip(j2, mfma_src, "gfx90a", NULL, 0, &c, NULL), TILEC_OK);
	ck_assert_int_eq(tilec_module_cache_source(c), TILEC_CACHE_DISK);
	ck_assert_int_eq(tilec_module_binary_kind(c), TILEC_BIN_HSACO);
	pa = tilec_module_binary(a, &na);
	pc = tilec_module_binary(c, &nc);
	ck_assert_uint_eq(na, nc);
	ck_assert_mem_eq(pa, pc, na);
	tilec_module_free(a);
	tilec_module_free(b);
	tilec_module_free(c);
	tilec_jit_destroy(j);
	tilec_jit_destroy(j2);
	rmtmp();
}
END_TEST

static const char *const unknown_archs[] = {"gfx942", "gfx1100", "gfx940", "gfx1201",
                                            "gfx942:sramecc+:xnack-"};

START_TEST(hip_unknown_arch_clear_error)
{
	tilec_jit *j = newjit(NULL, NULL, 0);
	tilec_module *m = (tilec_module *)&m;
	tilec_jit_stats st;
	char *err = NULL;

	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, unknown_archs[_i], NULL, 0, &m, &err),
	                 TILEC_ERR_ARCH);
	ck_assert_ptr_null(m);
	ck_assert_msg(strstr(err, "cannot compile for") && strstr(err, unknown_archs[_i]) &&
	              strstr(err, "gfx90a") && strstr(err, "clang-19"), "message: %s", err);
	free(err);
	tilec_jit_stats_get(j, &st);
	ck_assert_int_eq(st.compiles, 0);
	tilec_jit_destroy(j);
}
END_TEST

/*
 * Past the arch check, hipRTC 5.2 crashes on gfx942: the crash stays in the
 * child and this process carries on (and can still compile).
 */
START_TEST(hip_crash_contained)
{
	Blobs b;
	char *err = NULL;
	tilec_jit *j;
	tilec_module *m = NULL;

	ck_assert_int_eq(hip_compile(NULL, NULL, 60000, mfma_src, "gfx942", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_ERR_CRASH);
	ck_assert_msg(strstr(err, "crashed in its child process"), "message: %s", err);
	ck_assert_ptr_null(b.p[BLOB_BIN]);
	free(err);
	j = newjit(NULL, NULL, 0);
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &m, NULL), TILEC_OK);
	tilec_module_free(m);
	tilec_jit_destroy(j);
}
END_TEST


/*
 * The server route: a crash (gfx942 past the arch check) or a compile past its
 * time limit is confined to that request; the server keeps serving; when the
 * server itself is gone, compiles fall back to a child of their own.
 */
START_TEST(hip_server_survives)
{
	HipInfo h;
	Blobs b;
	char *err = NULL;
	int pid;

	ck_assert_int_eq(hip_probe(NULL, 60000, &h, &err), TILEC_OK);
	ck_assert_int_gt(h.pid, 0);
	ck_assert_int_eq(hip_compile(&h, NULL, 60000, mfma_src, "gfx942", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_ERR_CRASH);
	ck_assert_msg(strstr(err, "crashed in its child process (signal"), "message: %s", err);
	free(err);
	err = NULL;
	ck_assert_int_eq(hip_compile(&h, NULL, 60000, mfma_src, "gfx90a", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_OK);
	ck_assert_uint_gt(b.n[BLOB_BIN], 1000);
	blobs_free(&b);
	/* 5 ms is too short for any compile: the request's processes are killed */
	ck_assert_int_eq(hip_compile(&h, NULL, 5, mfma_src, "gfx90a", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_ERR_CRASH);
	ck_assert_msg(strstr(err, "did not finish within 5 ms"), "message: %s", err);
	free(err);
	err = NULL;
	ck_assert_int_eq(h.dead, 0);
	ck_assert_int_eq(hip_compile(&h, NULL, 60000, mfma_src, "gfx908", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_OK);
	blobs_free(&b);
	/* the server dies: the next compile notices and compiles directly */
	pid = h.pid;
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	usleep(100000);
	ck_assert_int_eq(hip_compile(&h, NULL, 60000, mfma_src, "gfx90a", NULL, 0, NULL, 0, &b, &err),
	                 TILEC_OK);
	ck_assert_int_eq(h.dead, 1);
	ck_assert_uint_gt(b.n[BLOB_BIN], 1000);
	blobs_free(&b);
	hip_info_free(&h);
}
END_TEST

START_TEST(hip_compile_error_keeps_log)
{
	tilec_jit *j = newjit(NULL, NULL, 0);
	tilec_module *m = NULL;
	char *err = NULL;

	/* gfx1030 has no MFMA */
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx1030", NULL, 0, &m, &err),
	                 TILEC_ERR_COMPILE);
	ck_assert_ptr_nonnull(strstr(err, "hipRTC compilation for gfx1030 failed"));
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(tilec_module_ok(m), 0);
	ck_assert_msg(strstr(tilec_module_log(m), "mai-insts"), "log: %s", tilec_module_log(m));
	ck_assert_str_eq(tilec_module_source(m), mfma_src);
	free(err);
	tilec_module_free(m);
	tilec_jit_destroy(j);
}
END_TEST

START_TEST(hip_missing_or_hung)
{
	tilec_jit *j = newjit(NULL, "/nonexistent/libamdhip64.so.5", 0);
	tilec_module *m = NULL;
	char *err = NULL;

	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &m, &err),
	                 TILEC_ERR_NOLIB);
	ck_assert_msg(strstr(err, "/nonexistent/libamdhip64.so.5 not found"), "message: %s", err);
	ck_assert_ptr_null(m);
	free(err);
	/* the failed probe is remembered and reported again */
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &m, &err),
	                 TILEC_ERR_NOLIB);
	free(err);
	tilec_jit_destroy(j);
	/* a child that does not answer in time is killed */
	j = newjit(NULL, NULL, 1);
	ck_assert_int_eq(tilec_jit_compile_hip(j, mfma_src, "gfx90a", NULL, 0, &m, &err),
	                 TILEC_ERR_CRASH);
	ck_assert_msg(strstr(err, "did not finish within 1 ms"), "message: %s", err);
	free(err);
	tilec_jit_destroy(j);
}
END_TEST


/* compiles from 4 threads at once: each forks its own child; identical ones share */
typedef struct {
	tilec_jit *j;
	pthread_barrier_t *bar;
	const char *src;
	int status;
	tilec_module *m;
} HipWorker;

static void *
hipworker(void *p)
{
	HipWorker *w = p;

	pthread_barrier_wait(w->bar);
	w->status = tilec_jit_compile_hip(w->j, w->src, "gfx90a", NULL, 0, &w->m, NULL);
	return NULL;
}

START_TEST(hip_threads)
{
	static const char other[] =
		"extern \"C\" __global__ void k2(float *x) { x[threadIdx.x] *= 2.0f; }\n";
	const char *srcs[4] = {mfma_src, mfma_src, other, mfma_src};
	tilec_jit *j = newjit(NULL, NULL, 0);
	pthread_barrier_t bar;
	pthread_t th[4];
	HipWorker w[4];
	tilec_jit_stats st;
	int i;

	pthread_barrier_init(&bar, NULL, 4);
	for (i = 0; i < 4; i++) {
		w[i] = (HipWorker){j, &bar, srcs[i], -100, NULL};
		ck_assert_int_eq(pthread_create(&th[i], NULL, hipworker, &w[i]), 0);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < 4; i++) {
		size_t n = 0;
		const unsigned char *b;

		ck_assert_int_eq(w[i].status, TILEC_OK);
		b = tilec_module_binary(w[i].m, &n);
		ck_assert_int_eq(contains(b, n, i == 2 ? "k2" : "mfma_kernel"), 1);
		ck_assert_int_eq(count_mfma(b, n), i == 2 ? 0 : 2);
	}
	tilec_jit_stats_get(j, &st);
	ck_assert_int_eq(st.compiles, 2);
	ck_assert_int_eq(st.mem_hits, 2);
	for (i = 0; i < 4; i++)
		tilec_module_free(w[i].m);
	tilec_jit_destroy(j);
}
END_TEST


START_TEST(hip_headers)
{
	static const char src[] =
		"#include \"tl_mfma.h\"\n"
		"extern \"C\" __global__ void hk(const half4_t *a, float4_t *c) {\n"
		"  c[threadIdx.x] = tl_mma(a[threadIdx.x], a[threadIdx.x + 64]);\n"
		"}\n";
	tilec_header h = {"tl_mfma.h",
		"typedef _Float16 half4_t __attribute__((ext_vector_type(4)));\n"
		"typedef float float4_t __attribute__((ext_vector_type(4)));\n"
		"__device__ inline float4_t tl_mma(half4_t a, half4_t b) {\n"
		"  float4_t z = {0.f, 0.f, 0.f, 0.f};\n"
		"  return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, z, 0, 0, 0);\n"
		"}\n"};
	tilec_jit *j = newjit(NULL, NULL, 0);
	tilec_module *m = NULL;
	char *err = NULL, *text;
	const void *bin;
	size_t n;
	int r;

	mktmp();
	r = tilec_jit_compile_hip_ex(j, src, "gfx90a", NULL, 0, &h, 1, &m, &err);
	ck_assert_msg(r == TILEC_OK, "%s: %s", tilec_status_str(r), err ? err : "");
	bin = tilec_module_binary(m, &n);
	ck_assert_int_eq(count_mfma(bin, n), 1);
	text = disasm(bin, n, "gfx90a");
	if (text) {
		ck_assert_ptr_nonnull(strstr(text, "v_mfma_f32_16x16x16"));
		free(text);
	}
	tilec_module_free(m);
	ck_assert_int_eq(tilec_jit_compile_hip(j, src, "gfx90a", NULL, 0, &m, &err), TILEC_ERR_COMPILE);
	ck_assert_msg(strstr(tilec_module_log(m), "tl_mfma.h"), "log: %s", tilec_module_log(m));
	free(err);
	tilec_module_free(m);
	tilec_jit_destroy(j);
	rmtmp();
}
END_TEST

/*
 * The emitted samples (test/golden/hip/NAME.gfx90a.hip, which check_emit_hip
 * keeps equal to what tilec emits) through hipRTC for gfx90a with tilec_hip.h
 * in memory: MFMA count, 16-byte global loads, no scratch in the disassembly.
 */
static const struct {
	const char *sample;
	int mfma;
} hip_samples[] = {
	/* gemm: the kernel body twice (vector and element-by-element, docs/cuda.md) */
	{"copy", 0}, {"elementwise", 0}, {"gemm", 128}, {"gemm_bf16", 64}, {"transpose", 0},
	{"softmax", 0}, {"convert", 0},
};

START_TEST(hip_emitted_samples)
{
	tilec_header h = {"tilec_hip.h", tilec_template("tilec_hip.h")};
	tilec_jit *j = newjit(NULL, NULL, 0);
	tilec_module *m = NULL;
	char path[256], *src, *err = NULL, *text;
	const unsigned char *bin;
	size_t n = 0;
	int r;

	ck_assert_ptr_nonnull(h.source);
	mktmp();
	snprintf(path, sizeof path, "test/golden/hip/%s.gfx90a.hip", hip_samples[_i].sample);
	src = test_readfile(path, NULL);
	ck_assert_msg(src != NULL, "no %s", path);
	r = tilec_jit_compile_hip_ex(j, src, "gfx90a", NULL, 0, &h, 1, &m, &err);
	ck_assert_msg(r == TILEC_OK, "%s: %s: %s\n%.3000s", path, tilec_status_str(r), err ? err : "",
		      m ? tilec_module_log(m) : "");
	bin = tilec_module_binary(m, &n);
	ck_assert_uint_gt(n, 1000);
	/* the f16 encoding (0xD3CD) in the machine code; bf16_1k is another opcode */
	if (strcmp(hip_samples[_i].sample, "gemm_bf16"))
		ck_assert_int_eq(count_mfma(bin, n), hip_samples[_i].mfma);
	text = disasm(bin, n, "gfx90a");
	ck_assert_msg(text != NULL, "llvm-objdump-19 is missing (make deps installs llvm-19)");
	{
		const char *q = text;
		int c = 0;

		while ((q = strstr(q, "v_mfma_f32_16x16x16")))
			c++, q++;
		ck_assert_int_eq(c, hip_samples[_i].mfma);
	}
	if (hip_samples[_i].mfma && strcmp(hip_samples[_i].sample, "gemm_bf16"))
		ck_assert_ptr_nonnull(strstr(text, "v_mfma_f32_16x16x16f16"));
	else if (hip_samples[_i].mfma)
		ck_assert_ptr_nonnull(strstr(text, "v_mfma_f32_16x16x16bf16_1k"));
	ck_assert_msg(strstr(text, "global_load_dwordx4"), "%s: no global_load_dwordx4", path);
	ck_assert_msg(!strstr(text, "scratch_store") && !strstr(text, "buffer_store_dword"),
		      "%s: scratch stores", path);
	free(text);
	tilec_module_free(m);
	m = NULL;
	/* gfx942 and gfx1100: a clear error (the offline clang-19 route builds them) */
	ck_assert_int_eq(tilec_jit_compile_hip_ex(j, src, "gfx942", NULL, 0, &h, 1, &m, &err), TILEC_ERR_ARCH);
	ck_assert_ptr_nonnull(strstr(err, "clang-19"));
	free(err);
	ck_assert_int_eq(tilec_jit_compile_hip_ex(j, src, "gfx1100", NULL, 0, &h, 1, &m, &err), TILEC_ERR_ARCH);
	free(err);
	free(src);
	tilec_jit_destroy(j);
	rmtmp();
}
END_TEST

/* a target ID with a feature comgr does not know (it crashed hipRTC's child) is a bad argument */
static const char *const bad_target_ids[] = {
	"gfx90a:bogus+", "gfx90a:xnack+:xnack-", "gfx90a:sramecc", "gfx90a:+", "gfx90a:xnack+:",
};

START_TEST(hip_bad_target_id)
{
	tilec_jit *j = newjit(NULL, NULL, 60000);
	tilec_module *m = NULL;
	char *err = NULL;

	ck_assert_int_eq(tilec_jit_compile_hip(j, "__global__ void k() {}\n", bad_target_ids[_i],
	                                       NULL, 0, &m, &err), TILEC_ERR_ARG);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "bad HIP architecture"));
	free(err);
	tilec_jit_destroy(j);
}
END_TEST

Suite *
suite_hip(void)
{
	Suite *s = suite_create("hip");
	TCase *t = tcase_create("core");

	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, hip_mfma_compiles, 0, (int)countof(mfma_targets));
	tcase_add_test(t, hip_cache);
	tcase_add_loop_test(t, hip_unknown_arch_clear_error, 0, (int)countof(unknown_archs));
	tcase_add_test(t, hip_crash_contained);
	tcase_add_loop_test(t, hip_bad_target_id, 0, (int)countof(bad_target_ids));
	tcase_add_test(t, hip_server_survives);
	tcase_add_test(t, hip_compile_error_keeps_log);
	tcase_add_test(t, hip_missing_or_hung);
	tcase_add_test(t, hip_threads);
	tcase_add_test(t, hip_headers);
	tcase_add_loop_test(t, hip_emitted_samples, 0, (int)countof(hip_samples));
	suite_add_tcase(s, t);
	return s;
}
