/*
 * check_emit_hip.c: HIP emission (--target=hip). Every sample through
 * tilec_compile for gfx90a, gfx942 and gfx1100 against goldens
 * test/golden/hip/NAME.ARCH.hip (a sample that cannot be lowered has its
 * diagnostic as the golden; check_hip.c compiles the gfx90a goldens with hipRTC);
 * each emitted sample compiled offline with clang-19 for all three archs,
 * the code objects disassembled with llvm-objdump-19 and checked for
 * v_mfma / v_wmma, 16-byte global loads and no scratch; no input, option or
 * architecture crashes the compiler (random mutations, bad archs, CLI).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lower.h"
#include "tests.h"
#include "tilec.h"

static const char *const archs[] = {"gfx90a", "gfx942", "gfx1100"};
static glob_t samples;
static char tmpdir[64];

/* the HIP C of src for arch through the whole compiler; "error: ..." text if it fails */
static char *
emit_hip(const char *path, const char *src, size_t len, const char *arch, int *ok)
{
	tilec_options o;
	tilec_result r;
	char *out;

	tilec_options_init(&o);
	o.target = TILEC_TARGET_HIP;
	o.arch = arch;
	o.dump = TILEC_DUMP_CUDA;
	o.filename = path;
	*ok = tilec_compile(src, len, &o, &r) == TILEC_OK;
	if (*ok) {
		out = strdup(r.output);
	} else {
		out = strdup(r.diagnostics); /* "tilec: error: ..." */
	}
	tilec_result_free(&r);
	return out;
}

static void
samplename(char *b, size_t n, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	snprintf(b, n, "%.*s", (int)(strlen(base) - 5), base);
}

/* golden per sample and arch: 3 archs per sample, _i = sample * 3 + arch */
START_TEST(hip_golden)
{
	const char *path = samples.gl_pathv[_i / 3], *arch = archs[_i % 3];
	char name[128], golden[512], msg[600], *src, *out;
	size_t len;
	int ok;

	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	out = emit_hip(path, src, len, arch, &ok);
	samplename(name, sizeof name, path);
	snprintf(golden, sizeof golden, "test/golden/hip/%s.%s.hip", name, arch);
	ck_assert_msg(test_golden(golden, out, msg, sizeof msg) == 0, "%s", msg);
	if (ok) {
		ck_assert_ptr_nonnull(strstr(out, "#include \"tilec_hip.h\""));
		ck_assert_ptr_null(strstr(out, "ldmatrix"));
		ck_assert_ptr_null(strstr(out, "asm"));
	}
	free(out);
	free(src);
}
END_TEST

/* what the code object of a sample must hold: one of each '|'-list, per arch */
static const struct {
	const char *sample, *arch;
	int mma;            /* count of v_mfma/v_wmma instructions */
	const char *need;   /* a 16-byte global load or store ('|' alternatives) */
	const char *lds;    /* vector LDS reads of the K-contiguous gemm operands, or NULL */
} objects[] = {
	{"copy", "gfx90a", 0, "global_load_dwordx4", NULL},
	{"copy", "gfx942", 0, "global_load_dwordx4", NULL},
	{"copy", "gfx1100", 0, "global_load_b128", NULL},
	{"elementwise", "gfx90a", 0, "global_load_dwordx4", NULL},
	{"elementwise", "gfx942", 0, "global_load_dwordx4", NULL},
	{"elementwise", "gfx1100", 0, "global_load_b128", NULL},
	/* gemm has no assume on N and K: its body is emitted twice (vector and element by element) */
	{"gemm", "gfx90a", 128, "global_load_dwordx4", "ds_read_b64|ds_read2st64_b64|ds_read2_b64"},
	{"gemm", "gfx942", 128, "global_load_dwordx4", "ds_read_b64|ds_read2st64_b64|ds_read2_b64"},
	{"gemm", "gfx1100", 32, "global_load_b128", "ds_load_b128"}, /* k-steps stay a loop */
	{"gemm_bf16", "gfx90a", 64, "global_load_dwordx4", "ds_read_b64|ds_read2st64_b64|ds_read2_b64"},
	{"gemm_bf16", "gfx942", 64, "global_load_dwordx4", "ds_read_b64|ds_read2st64_b64|ds_read2_b64"},
	{"gemm_bf16", "gfx1100", 8, "global_load_b128", "ds_load_b128"},
	{"transpose", "gfx90a", 0, "global_load_dwordx4", NULL},
	{"transpose", "gfx942", 0, "global_load_dwordx4", NULL},
	{"transpose", "gfx1100", 0, "global_load_b128", NULL},
	{"softmax", "gfx90a", 0, "global_load_dwordx4", NULL},
	{"softmax", "gfx942", 0, "global_load_dwordx4", NULL},
	{"softmax", "gfx1100", 0, "global_load_b128", NULL},
	{"convert", "gfx90a", 0, "global_load_dwordx4|global_store_dwordx4", NULL},
	{"convert", "gfx1100", 0, "global_load_b128|global_store_b128", NULL},
	/* the split-K tile store: f32 atomic adds (native, or the compiler's CAS loop) */
	{"splitk_gemm", "gfx90a", 128, "global_atomic_add_f32|global_atomic_cmpswap", NULL},
	{"splitk_gemm", "gfx942", 128, "global_atomic_add_f32|global_atomic_cmpswap", NULL},
	{"splitk_gemm", "gfx1100", 32, "global_atomic_add_f32|global_atomic_cmpswap", NULL},
};

static int
anyof(const char *text, const char *alts)
{
	char buf[256], *p, *save = NULL;

	snprintf(buf, sizeof buf, "%s", alts);
	for (p = strtok_r(buf, "|", &save); p; p = strtok_r(NULL, "|", &save))
		if (strstr(text, p))
			return 1;
	return 0;
}

static int
count(const char *text, const char *s)
{
	int n = 0;

	for (; (text = strstr(text, s)); text += strlen(s))
		n++;
	return n;
}

static void
writefile(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot write %s", path);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* llvm-objdump-19 of a code object file: malloc'd text */
static char *
disasm(const char *co, const char *arch)
{
	char cmd[600], out[300];
	char *text;

	snprintf(out, sizeof out, "%s.s", co);
	snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s '%s' > '%s' 2>&1", arch, co, out);
	ck_assert_msg(system(cmd) == 0, "%s failed (is llvm-19 installed? make deps)", cmd);
	text = test_readfile(out, NULL);
	ck_assert_ptr_nonnull(text);
	return text;
}

static void
check_object(const char *text, int i, const char *route)
{
	int nmma = count(text, objects[i].mma && !strcmp(objects[i].arch, "gfx1100") ? "v_wmma_f32_16x16x16"
										       : "v_mfma_f32_16x16x16");

	ck_assert_msg(nmma == objects[i].mma, "%s %s (%s): %d MMA instructions, wanted %d", objects[i].sample,
		      objects[i].arch, route, nmma, objects[i].mma);
	ck_assert_msg(anyof(text, objects[i].need), "%s %s (%s): no %s in\n%.3000s", objects[i].sample,
		      objects[i].arch, route, objects[i].need, text);
	ck_assert_msg(!objects[i].lds || anyof(text, objects[i].lds), "%s %s (%s): no %s", objects[i].sample,
		      objects[i].arch, route, objects[i].lds);
	/* no register spills to scratch */
	ck_assert_msg(!strstr(text, "scratch_store") && !strstr(text, "buffer_store_dword"),
		      "%s %s (%s): scratch stores", objects[i].sample, objects[i].arch, route);
}

static char *
emit_sample(int i)
{
	char path[256], *src, *hip;
	size_t len;
	int ok;

	snprintf(path, sizeof path, "samples/%s.tile", objects[i].sample);
	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	hip = emit_hip(path, src, len, objects[i].arch, &ok);
	ck_assert_msg(ok, "%s for %s: %s", path, objects[i].arch, hip);
	free(src);
	return hip;
}

static void
mktmp(void)
{
	strcpy(tmpdir, "/tmp/tilec-ehip-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
rmtmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

/* the offline route: clang-19 device-only, no ROCm headers or device libraries */
START_TEST(hip_clang19)
{
	char hipf[128], co[128], hdr[128], cmd[1024], *hip, *text, *log;
	const char *h = tilec_template("tilec_hip.h");

	ck_assert_ptr_nonnull(h);
	mktmp();
	hip = emit_sample(_i);
	snprintf(hdr, sizeof hdr, "%s/tilec_hip.h", tmpdir);
	snprintf(hipf, sizeof hipf, "%s/k.hip", tmpdir);
	snprintf(co, sizeof co, "%s/k.co", tmpdir);
	writefile(hdr, h, strlen(h));
	writefile(hipf, hip, strlen(hip));
	snprintf(cmd, sizeof cmd,
		 "clang-19 -x hip --cuda-device-only -nogpuinc -nogpulib --no-gpu-bundle-output "
		 "--offload-arch=%s -O3 -Wall -Wextra -Werror -Wno-unused-command-line-argument -o '%s' '%s' > '%s/log' 2>&1",
		 objects[_i].arch, co, hipf, tmpdir);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "%s/log", tmpdir);
		log = test_readfile(cmd, NULL);
		ck_abort_msg("clang-19 failed for %s %s:\n%.3000s", objects[_i].sample, objects[_i].arch,
			     log ? log : "(no log)");
	}
	text = disasm(co, objects[_i].arch);
	check_object(text, _i, "clang-19");
	free(text);
	free(hip);
	rmtmp();
}
END_TEST

/* options: every bad target/arch pair is a usage error with a message */
static const struct {
	int target;
	const char *arch;
	tilec_status st;
	const char *msg;
} optcases[] = {
	{TILEC_TARGET_HIP, "sm_80", TILEC_USAGE, "unknown hip arch 'sm_80'"},
	{TILEC_TARGET_HIP, "gfx908", TILEC_USAGE, "unknown hip arch"},
	{TILEC_TARGET_HIP, "", TILEC_USAGE, "unknown hip arch"},
	{TILEC_TARGET_HIP, "gfx90a:sramecc+", TILEC_USAGE, "unknown hip arch"},
	{TILEC_TARGET_CUDA, "gfx942", TILEC_USAGE, "unknown cuda arch"},
	{7, "gfx942", TILEC_USAGE, "unknown target 7"},
	{-1, NULL, TILEC_USAGE, "unknown target -1"},
	{TILEC_TARGET_HIP, NULL, TILEC_OK, NULL}, /* the default, gfx942 */
};

START_TEST(hip_options)
{
	tilec_options o;
	tilec_result r;
	char *src;
	size_t len;

	src = test_readfile("samples/gemm.tile", &len);
	ck_assert_ptr_nonnull(src);
	tilec_options_init(&o);
	o.target = (tilec_target)optcases[_i].target;
	o.arch = optcases[_i].arch;
	o.dump = TILEC_DUMP_CUDA;
	ck_assert_int_eq(tilec_compile(src, len, &o, &r), optcases[_i].st);
	if (optcases[_i].msg)
		ck_assert_msg(strstr(r.diagnostics, optcases[_i].msg), "got: %s", r.diagnostics);
	else
		ck_assert_ptr_nonnull(strstr(r.output, "for gfx942\n#include \"tilec_hip.h\""));
	tilec_result_free(&r);
	free(src);
}
END_TEST

/* emit_cuda's own argument checks for the hip route */
START_TEST(hip_emit_api)
{
	Arena a;
	Buf b;
	Err e = {0};
	IrProgram p;

	arena_init(&a);
	buf_init(&b);
	memset(&p, 0, sizeof p);
	p.target = 1;
	p.arch = "sm_80";
	ck_assert_int_eq(emit_cuda(&a, &p, &b, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "unknown hip architecture 'sm_80'"));
	p.arch = "gfx1100";
	ck_assert_int_eq(emit_cuda(&a, &p, &b, &e), 0); /* no kernels: the header only */
	ck_assert_ptr_nonnull(strstr(buf_str(&b), "tilec_hip.h"));
	p.target = 2;
	ck_assert_int_eq(emit_cuda(&a, &p, &b, &e), -1);
	ck_assert_int_eq(emit_cuda(&a, NULL, &b, &e), -1);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/*
 * Random mutations of every sample (fixed seed), emitted for each HIP arch:
 * every compile returns a status (the sanitizer build checks the memory).
 */
START_TEST(hip_mutations)
{
	static const char alphabet[] = "0123456789[](){},;:=+-*/%<> \nabcxyzMNK_";
	unsigned seed = 12345u + (unsigned)_i;
	char *src, *mut;
	size_t len, k;
	int it, flips;
	tilec_options o;
	tilec_result r;
	int ok = 0;

	src = test_readfile(samples.gl_pathv[_i], &len);
	ck_assert_ptr_nonnull(src);
	mut = malloc(len + 1);
	for (it = 0; it < 40; it++) {
		memcpy(mut, src, len + 1);
		for (flips = 1 + it % 4; flips > 0; flips--) {
			seed = seed * 1103515245u + 12345u;
			k = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			mut[k] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
		}
		tilec_options_init(&o);
		o.target = TILEC_TARGET_HIP;
		o.arch = archs[it % 3];
		o.dump = TILEC_DUMP_CUDA;
		{
			tilec_status st = tilec_compile(mut, len, &o, &r);

			ck_assert(st == TILEC_OK || st == TILEC_ERR_COMPILE || st == TILEC_ERR_ARG ||
				  st == TILEC_ERR_NOMEM);
		}
		ck_assert_ptr_nonnull(r.output);
		ck_assert_ptr_nonnull(r.diagnostics);
		ok += r.status == TILEC_OK;
		if (r.status != TILEC_OK)
			ck_assert_msg(r.diagnostics[0] != 0, "a failed compile without a message");
		tilec_result_free(&r);
	}
	(void)ok;
	free(mut);
	free(src);
}
END_TEST

/* the command line: --dump=hip, -o x.hip, bad archs are usage errors (exit 2) */
static const struct {
	const char *args;
	int rc;
	const char *out; /* in stdout+stderr */
} clis[] = {
	{"--dump=hip --arch=gfx90a samples/gemm.tile", 0, "__builtin_amdgcn|tl_mfma_f16_16x16x16"},
	{"--dump=hip --arch=gfx1100 samples/gemm_bf16.tile", 0, "tl_wmma_bf16_16x16x16"},
	{"--arch=gfx942 --dump=cuda samples/copy.tile", 0, "for gfx942"},
	{"--target=hip --dump=hip samples/copy.tile", 0, "for gfx942"},
	{"--dump=hip --target=cuda samples/copy.tile", 2, "for --target=hip only"},
	{"--dump=hip --arch=sm_80 samples/copy.tile", 2, "unknown hip arch 'sm_80'"},
	{"--target=hip --arch=gfx1201 samples/copy.tile", 2, "unknown hip arch 'gfx1201'"},
	{"--target=hip --arch= samples/copy.tile", 2, "unknown hip arch ''"},
	{"--dump=hip --arch=gfx90a samples/softmax.tile", 0, "shuffles xor 0x3f"},
	{"--dump=hip --arch=gfx1100 samples/softmax.tile", 0, "shuffles xor 0x1f"},
};

/*
 * No function-like macro of the device headers names a parameter twice in its expansion
 * (asm templates aside: their parameters are pieces of the instruction text), so none
 * evaluates an operand twice. tilec_hip.h's integer max(a, b) was a ?: macro: the reduce
 * lowering's max(r, __shfl_xor_sync(.., r, o)) ran the shuffle a second time in the lanes of
 * one branch only (test/cpu/int_reduce_shuffle.tile).
 */
START_TEST(macro_single_eval)
{
	static const char *const hdrs[] = {"tilec_hip.h", "tilec_cpu_hip.h", "tilec_cuda.h", "tilec_cpu.h",
					   "tilec_portable.h"};
	Buf bad;
	size_t h;
	int nmacros = 0;

	buf_init(&bad);
	for (h = 0; h < countof(hdrs); h++) {
		const char *t = tilec_template(hdrs[h]), *p;

		ck_assert_ptr_nonnull(t);
		for (p = t; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] != 0)) {
			const char *q = p + strspn(p, " \t"), *e;
			char name[64], params[8][32], body[4096];
			int np = 0, i;
			size_t bl = 0;

			if (*q != '#')
				continue;
			q++;
			q += strspn(q, " \t");
			if (strncmp(q, "define ", 7))
				continue;
			q += 7;
			e = q + strspn(q, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
			if (*e != '(' || e - q >= (ptrdiff_t)sizeof name)
				continue; /* an object-like macro */
			snprintf(name, sizeof name, "%.*s", (int)(e - q), q);
			q = e + 1;
			while (*q && *q != ')' && np < 8) {
				q += strspn(q, " \t,");
				e = q + strcspn(q, " \t,)");
				snprintf(params[np++], sizeof params[0], "%.*s", (int)(e - q), q);
				q = e + strspn(e, " \t");
				if (*q == ',')
					q++;
			}
			if (*q == ')')
				q++;
			/* the expansion, continuation lines joined, comments and strings dropped */
			while (*q && bl + 1 < sizeof body) {
				if (q[0] == '\\' && q[1] == '\n') {
					q += 2;
					continue;
				}
				if (*q == '\n' || (q[0] == '/' && q[1] == '/'))
					break;
				if (*q == '"') {
					for (q++; *q && *q != '"' && *q != '\n'; q += q[0] == '\\' && q[1] ? 2 : 1)
						;
					if (*q == '"')
						q++;
					body[bl++] = ' ';
					continue;
				}
				body[bl++] = *q++;
			}
			body[bl] = 0;
			nmacros++;
			if (!strncmp(body + strspn(body, " \t"), "asm", 3))
				continue;
			for (i = 0; i < np; i++) {
				const char *b = body;
				size_t n = strlen(params[i]);
				int uses = 0;

				if (!n)
					continue;
				for (; (b = strstr(b, params[i])); b += n) {
					int before = b > body && (b[-1] == '_' || b[-1] == '#' ||
								  (b[-1] >= '0' && b[-1] <= '9') ||
								  ((b[-1] | 32) >= 'a' && (b[-1] | 32) <= 'z'));
					int after = b[n] == '_' || (b[n] >= '0' && b[n] <= '9') ||
						    ((b[n] | 32) >= 'a' && (b[n] | 32) <= 'z');

					uses += !before && !after;
				}
				if (uses > 1)
					buf_printf(&bad, "  %s: %s(...) uses '%s' %d times: %.120s\n", hdrs[h], name,
						   params[i], uses, body);
			}
		}
	}
	ck_assert_msg(nmacros > 10, "only %d function-like macros found", nmacros);
	ck_assert_msg(bad.len == 0, "macros that evaluate an operand more than once (make them functions):\n%s",
		      buf_str(&bad));
	buf_free(&bad);
}
END_TEST

START_TEST(hip_cli)
{
	char cmd[512], outp[128], *text;
	int rc;

	mktmp();
	snprintf(outp, sizeof outp, "%s/out", tmpdir);
	snprintf(cmd, sizeof cmd, "build/tilec %s > '%s' 2>&1", clis[_i].args, outp);
	rc = system(cmd);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == clis[_i].rc, "%s: status %d", cmd, rc);
	text = test_readfile(outp, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(anyof(text, clis[_i].out), "%s: no '%s' in\n%.2000s", cmd, clis[_i].out, text);
	free(text);
	/* -o FILE.hip writes HIP C */
	if (_i == 0) {
		snprintf(cmd, sizeof cmd, "build/tilec --arch=gfx90a -o '%s/g.hip' samples/gemm.tile", tmpdir);
		ck_assert_int_eq(system(cmd), 0);
		snprintf(outp, sizeof outp, "%s/g.hip", tmpdir);
		text = test_readfile(outp, NULL);
		ck_assert_ptr_nonnull(text);
		ck_assert_ptr_nonnull(strstr(text, "#include \"tilec_hip.h\""));
		free(text);
	}
	rmtmp();
}
END_TEST

Suite *
suite_emit_hip(void)
{
	Suite *s = suite_create("emit_hip");
	TCase *tc = tcase_create("core");

	if (glob("samples/*.tile", 0, NULL, &samples) != 0)
		samples.gl_pathc = 0;
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, hip_golden, 0, (int)samples.gl_pathc * 3);
	tcase_add_loop_test(tc, hip_clang19, 0, (int)countof(objects));
	tcase_add_loop_test(tc, hip_options, 0, (int)countof(optcases));
	tcase_add_test(tc, hip_emit_api);
	tcase_add_loop_test(tc, hip_mutations, 0, (int)samples.gl_pathc);
	tcase_add_loop_test(tc, hip_cli, 0, (int)countof(clis));
	tcase_add_test(tc, macro_single_eval);
	suite_add_tcase(s, tc);
	return s;
}
