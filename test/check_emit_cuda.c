/*
 * check_emit_cuda.c: CUDA emission. Goldens test/golden/cuda/NAME.cu for every
 * sample (a sample the emitter cannot lower yet has its error message as the
 * golden); every emitted sample compiled with NVRTC (the runtime's dlopen of
 * libnvrtc, tilec_cuda.h given in memory) for sm_80, sm_90 and sm_90a, with
 * checks on the PTX: cp.async or 16-byte global accesses in the copies,
 * mma.sync in the gemms, no local-memory traffic; guards and assume().
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "lower.h"
#include "lw.h"
#include "sema.h"
#include "tests.h"
#include "tilec.h"
#include "tilec_run.h"
#include "tilec_jit.h"
#include "tileglue.h"

static glob_t samples;

/* compile src for arch through the whole pipeline (sema, layout inference,
 * passes, emission: what `tilec --dump=cuda` prints); the CUDA text, or
 * "error: msg\n" */
static char *
emit(const char *path, const char *src, size_t len, const char *arch, int *ok)
{
	char *cuda = NULL, *diag = NULL, *out;
	size_t n;

	*ok = rt_tile_to_cuda(src, len, NULL, path, arch, &cuda, &diag) == 0;
	if (*ok)
		return cuda;
	n = (diag ? strlen(diag) : 0) + 16;
	out = malloc(n);
	snprintf(out, n, "error: %s", diag ? diag : "out of memory\n");
	free(diag);
	return out;
}

static void
goldenpath(char *g, size_t n, const char *path, const char *suffix)
{
	const char *base = strrchr(path, '/') + 1;

	snprintf(g, n, "test/golden/cuda/%.*s%s.cu", (int)(strlen(base) - 5), base, suffix);
}

START_TEST(sample_golden)
{
	const char *path = samples.gl_pathv[_i];
	char golden[512], msg[600], *src, *out;
	size_t len;
	int ok;

	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	/* samples written for Hopper (NAME_sm90.tile) are emitted for sm_90a */
	out = emit(path, src, len, strstr(path, "_sm90") ? "sm_90a" : "sm_80", &ok);
	goldenpath(golden, sizeof golden, path, "");
	ck_assert_msg(test_golden(golden, out, msg, sizeof msg) == 0, "%s", msg);
	free(out);
	free(src);
}
END_TEST

/* the wgmma path: samples emitted for sm_90a against NAME.sm90a.cu */
static const char *const sm90a_goldens[] = {"gemm", "gemm_bf16", "flash_fwd"};

/* the epilogue through shared memory (stage-epilogues, gen/lower/plan_epilogue.c): which
 * copies are staged at sm_90a by default, which say why not, and that a staged kernel takes no
 * more shared memory than with --epilogue=direct (the tile sits on the stage bytes) */
#define EPI_HEAD \
	"const BM = 128, BN = 128, BK = 32;\n" \
	"kernel k(A: f16[M, K], B: f16[K, N], C: T[M, N]) grid(cdiv(N, BN), cdiv(M, BM)) threads(128) {\n" \
	"  shared As: f16[BM, BK]; shared Bs: f16[BK, BN]; local acc: f32[BM, BN];\n" \
	"  clear(acc);\n" \
	"  for ko in pipeline(cdiv(K, BK), stages = S) {\n" \
	"    copy(A[by * BM, ko * BK], As); copy(B[ko * BK, bx * BN], Bs); gemm(As, Bs, acc);\n" \
	"  }\n"
static const struct {
	const char *src, *T, *S, *why; /* why NULL: staged */
} epi_progs[] = {
	{EPI_HEAD "  copy(acc, C[by * BM, bx * BN]);\n}\n", "f16", "2", NULL},
	{EPI_HEAD "  copy(acc, C[by * BM, bx * BN]);\n}\n", "f32", "4", NULL},
	/* 64 KiB of f32 tile over 2 stages of 16 KiB */
	{EPI_HEAD "  copy(acc, C[by * BM, bx * BN]);\n}\n", "f32", "2",
	 "the staged tile takes more shared memory than the pipeline's stages"},
	{EPI_HEAD "  copy(acc, C[by * BM, bx * BN]);\n  copy(A[by * BM, 0], As);\n  copy(As, C[by * BM, 0]);\n}\n",
	 "f16", "2", "shared memory is used after the copy"},
	/* the sum of two tiles: o is not the accumulator's shape */
	{EPI_HEAD "  local o: f32[64, BN];\n  for i, j in parallel(64, BN) { o[i, j] = acc[i, j] + acc[i + 64, j]; }\n"
		  "  copy(o, C[by * 64, bx * BN]);\n}\n", "f32", "2", "the tile is not the shape of the pipeline's accumulator"},
	{EPI_HEAD "  copy(acc, C[by * BM, bx * BN], op = add);\n}\n", "f32", "4", ""},
};

static char *
epi_compile(int i, const char *arch, int mode, int dump)
{
	const char *defs[1];
	char d0[32];
	tilec_options co;
	tilec_result cr;
	char *out;

	snprintf(d0, sizeof d0, "S=%s", epi_progs[i].S);
	defs[0] = d0;
	tilec_options_init(&co);
	co.arch = arch;
	co.dump = dump;
	co.epilogue = mode;
	co.defines = defs;
	co.ndefines = 1;
	{
		/* the element type is text: substitute it */
		size_t n = strlen(epi_progs[i].src) + 16;
		char *src = malloc(n), *p;
		const char *q;

		for (p = src, q = epi_progs[i].src; *q; q++) {
			if (q[0] == 'T' && q[1] == '[') {
				p += sprintf(p, "%s", epi_progs[i].T);
				continue;
			}
			*p++ = *q;
		}
		*p = 0;
		tilec_compile(src, strlen(src), &co, &cr);
		free(src);
	}
	ck_assert_msg(cr.status == TILEC_OK, "epilogue program %d: %s", i, cr.diagnostics);
	out = strdup(cr.output);
	tilec_result_free(&cr);
	return out;
}

static long
smem_bytes(const char *code)
{
	const char *p = strstr(code, " threads, ");

	return p ? atol(p + strlen(" threads, ")) : -1;
}

START_TEST(epilogue_stage)
{
	char *code = epi_compile(_i, "sm_90a", TILEC_EPILOGUE_AUTO, TILEC_DUMP_CUDA);
	char *direct = epi_compile(_i, "sm_90a", TILEC_EPILOGUE_DIRECT, TILEC_DUMP_CUDA);
	char *lay = epi_compile(_i, "sm_90a", TILEC_EPILOGUE_AUTO, TILEC_DUMP_LAYOUTS);
	char *sm80 = epi_compile(_i, "sm_80", TILEC_EPILOGUE_AUTO, TILEC_DUMP_CUDA);
	const char *why = epi_progs[_i].why;
	char want[256];

	if (!why) {
		ck_assert_msg(strstr(code, "// epilogue: acc reaches C through shared memory acc_epi (128-byte swizzle") &&
			      strstr(code, "*(uint4 *)(&C[") && strstr(code, "^ (r % 8)) * 8))]"),
			      "program %d: not staged:\n%s", _i, code);
		ck_assert_msg(smem_bytes(code) > 0 && smem_bytes(code) == smem_bytes(direct),
			      "program %d: %ld bytes of shared memory staged, %ld direct", _i, smem_bytes(code),
			      smem_bytes(direct));
	} else {
		ck_assert_msg(!strstr(code, "_epi"), "program %d: staged:\n%s", _i, code);
		snprintf(want, sizeof want, " stored from the fragment, not through shared memory: %s", why);
		ck_assert_msg(!*why ? !strstr(code, "// epilogue: ") : strstr(code, want) != NULL,
			      "program %d: expected '%s':\n%s", _i, *why ? want : "no epilogue comment", code);
		if (!*why)
			ck_assert_str_eq(code, direct);
	}
	/* --epilogue=direct, sm_80's auto and the layout dump: the program as written */
	ck_assert_msg(!strstr(direct, "// epilogue: ") && !strstr(direct, "_epi"), "program %d: direct staged", _i);
	ck_assert_msg(!strstr(sm80, "_epi") && !strstr(sm80, "// epilogue: "), "program %d: staged at sm_80", _i);
	ck_assert_msg(!strstr(lay, "_epi"), "program %d: the layout dump shows the staged tile:\n%s", _i, lay);
	free(code);
	free(direct);
	free(lay);
	free(sm80);
}
END_TEST

/* plan-pipelines' gemm-softmax overlap (rotate_plan): which bodies are rotated, and the reason in
 * the pipeline's comment for those that are not (a program, a text replaced in it, a -D) */
static const struct {
	const char *path, *from, *to, *define, *want;
} rot_progs[] = {
	{"samples/flash_fwd.tile", NULL, NULL, NULL, NULL},
	{"test/cpu/rotate_chain.tile", NULL, NULL, NULL, NULL},
	{"samples/flash_fwd.tile", NULL, NULL, "STAGES=2", "its last gemm runs in order: 2 stages: the stage the last "
	 "gemm reads would be refilled while it is in flight"},
	{"test/cpu/flash_smem_p.tile", NULL, NULL, NULL, "its last gemm runs in order: the statement at 41:9 uses shared "
	 "memory ('p')"},
	{"test/cpu/rotate_chain.tile", "gemm(p, Vs, acc, policy = full_row);",
	 "gemm(p, Vs, acc, clear = true, policy = full_row);", NULL,
	 "its last gemm runs in order: the last gemm clears its accumulator"},
	{"test/cpu/rotate_chain.tile", "        for i, j in parallel(BM, BN) {",
	 "        for i, j in parallel(BM, 64) { acc[i, j] *= 0.5; }\n        for i, j in parallel(BM, BN) {", NULL,
	 "its last gemm runs in order: no statement between the gemms leaves the last gemm's accumulator (and its A "
	 "operand in registers) alone"},
	/* the only statement between the gemms writes the last gemm's A registers (PTX: not before
	 * the wait that retires it): nothing to overlap */
	{"test/cpu/rotate_chain.tile", "            s[i, j] = s[i, j] * 0.125;\n        }\n        for i, j in parallel(BM, BN) {\n"
	 "            p[i, j] = bf16(s[i, j]);", "            p[i, j] = bf16(s[i, j] * 0.125);", NULL,
	 "its last gemm runs in order: no statement between the gemms leaves the last gemm's accumulator (and its A "
	 "operand in registers) alone"},
	/* a let before the first gemm: not the form (no comment) */
	{"test/cpu/rotate_chain.tile", "        gemm(Qs, Ks,", "        let z = kb * 2;\n        gemm(Qs, Ks,", NULL, ""},
};

START_TEST(rotate_plan)
{
	size_t len;
	char *src = test_readfile(rot_progs[_i].path, &len), *text, *p;
	const char *defs[1] = {rot_progs[_i].define};
	tilec_options co;
	tilec_result cr;

	ck_assert_ptr_nonnull(src);
	if (rot_progs[_i].from) {
		ck_assert_msg((p = strstr(src, rot_progs[_i].from)) != NULL, "no '%s' in %s", rot_progs[_i].from,
			      rot_progs[_i].path);
		text = malloc(len + strlen(rot_progs[_i].to) + 1);
		sprintf(text, "%.*s%s%s", (int)(p - src), src, rot_progs[_i].to, p + strlen(rot_progs[_i].from));
	} else {
		text = strdup(src);
	}
	tilec_options_init(&co);
	co.arch = "sm_90a";
	co.dump = TILEC_DUMP_CUDA;
	co.defines = defs;
	co.ndefines = rot_progs[_i].define != NULL;
	co.tma = 0; /* the rotation is of cp.async pipelines (TMA loads K/V of flash_fwd) */
	tilec_compile(text, strlen(text), &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "rotate program %d: %s", _i, cr.diagnostics);
	if (!rot_progs[_i].want) {
		ck_assert_msg(strstr(cr.output, " runs one iteration late, overlapping the next iteration's statements") &&
			      strstr(cr.output, "_prev_ = ") && strstr(cr.output, "tl_wgmma_wait1();"),
			      "program %d: not rotated:\n%s", _i, cr.output);
		/* loads S - 2 ahead: one stage of the 3 is kept for the gemm in flight */
		ck_assert_msg(strstr(cr.output, "3 stages of cp.async, loads 1 ahead;") != NULL, "program %d: %s", _i,
			      cr.output);
	} else {
		ck_assert_msg(!strstr(cr.output, "_prev_ = "), "program %d: rotated:\n%s", _i, cr.output);
		ck_assert_msg(*rot_progs[_i].want ? strstr(cr.output, rot_progs[_i].want) != NULL
						  : !strstr(cr.output, "its last gemm runs in order"),
			      "program %d: expected '%s':\n%s", _i, rot_progs[_i].want, cr.output);
	}
	tilec_result_free(&cr);
	/* sm_80 (mma.sync) keeps the order: nothing rotated, no reason given */
	co.arch = "sm_80";
	tilec_compile(text, strlen(text), &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "rotate program %d at sm_80: %s", _i, cr.diagnostics);
	ck_assert_msg(!strstr(cr.output, "_prev_ = ") && !strstr(cr.output, "its last gemm runs in order"),
		      "program %d at sm_80:\n%s", _i, cr.output);
	tilec_result_free(&cr);
	free(text);
	free(src);
}
END_TEST

/* the layout inference gives a shared buffer nothing constrains: the widest swizzle for a 2-D
 * buffer a register tile is copied into (its fragment's rows on different banks), row-major
 * for the others and where annotate_layout says linear */
static const struct {
	const char *path, *from, *to, *buf, *want;
} shdef[] = {
	{"test/gpu/gemm_sm90_epilogue.tile", NULL, NULL, "Cs", "swizzle: 128B"},
	{"test/gpu/gemm_sm90_epilogue.tile", "copy(o, Cs);", "annotate_layout(Cs, linear); copy(o, Cs);", "Cs",
	 "(_128,_256):(_256,_1)  swizzle: none"},
	{"test/cpu/ws_epilogue.tile", NULL, NULL, "Cs", "swizzle: 128B"},
	/* written from global memory, read into registers: row-major */
	{"samples/transpose.tile", "annotate_layout(t, padded);", "", "t", "(_32,_32):(_32,_1)  swizzle: none"},
};

START_TEST(shared_default_layout)
{
	size_t len;
	char *src = test_readfile(shdef[_i].path, &len), *code, want[64];
	const char *p, *decl;
	tilec_options co;
	tilec_result cr;
	Buf b;

	ck_assert_ptr_nonnull(src);
	buf_init(&b);
	if (shdef[_i].from) {
		p = strstr(src, shdef[_i].from);
		ck_assert_ptr_nonnull(p);
		buf_putn(&b, src, (size_t)(p - src));
		buf_puts(&b, shdef[_i].to);
		buf_puts(&b, p + strlen(shdef[_i].from));
	} else {
		buf_puts(&b, src);
	}
	tilec_options_init(&co);
	co.arch = "sm_90a";
	co.dump = TILEC_DUMP_CUDA;
	tilec_compile(buf_str(&b), b.len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", shdef[_i].path, cr.diagnostics);
	code = cr.output;
	snprintf(want, sizeof want, " *%s = (", shdef[_i].buf);
	decl = strstr(code, want);
	ck_assert_msg(decl != NULL, "%s: no shared '%s'", shdef[_i].path, shdef[_i].buf);
	/* the layout comment is the line above the declaration */
	for (p = decl; p > code && p[-1] != '\n'; p--)
		;
	p -= 2;
	while (p > code && p[-1] != '\n')
		p--;
	ck_assert_msg(strncmp(p, "\t// layout: ", 12) == 0 && strstr(p, shdef[_i].want) && strstr(p, shdef[_i].want) < decl,
		      "%s: %s's layout is not '%s':\n%.300s", shdef[_i].path, shdef[_i].buf, shdef[_i].want, p);
	tilec_result_free(&cr);
	buf_free(&b);
	free(src);
}
END_TEST

/* fp8 wgmma at sm_90a accumulates into a temporary promoted into the f32 accumulator
 * (lower_mma.c): every e4m3/e5m2 wgmma writes an X_pa_ temporary, every promotion follows a
 * wait_group 0 (no group in flight writes what it reads), and the 16-bit and integer wgmmas
 * are not promoted */
static const struct {
	const char *path, *define;
	int promoted, min_promotions;
} promo_progs[] = {
	{"test/cpu/gemm_fp8.tile", NULL, 1, 5},
	{"test/cpu/gemm_fp8_promo.tile", NULL, 1, 8},
	{"test/cpu/gemm_fp8_promo.tile", "BK=256", 1, 8},
	/* 128 accumulator registers a thread: promoted one m64n128 instruction at a time */
	{"test/cpu/gemm_fp8_promo.tile", "BN=256", 1, 8},
	{"test/gpu/gemm_fp8_bench.tile", "BN=256", 1, 2},
	{"test/cpu/gemm_int8.tile", NULL, 0, 0},
	{"samples/gemm_sm90.tile", NULL, 0, 0},
};

/* the CUDA of the program at path for sm_90a, one -D define (or NULL), into cr */
static void
compile90(const char *path, const char *def, tilec_result *cr)
{
	tilec_options co;
	size_t len;
	char *src = test_readfile(path, &len);

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&co);
	co.arch = "sm_90a";
	co.dump = TILEC_DUMP_CUDA;
	co.defines = &def;
	co.ndefines = def != NULL;
	tilec_compile(src, len, &co, cr);
	ck_assert_msg(cr->status == TILEC_OK, "%s: %s", path, cr->diagnostics);
	free(src);
}

START_TEST(fp8_promotion)
{
	tilec_result cr;
	const char *p, *q;
	int nprom = 0, nwg = 0;

	compile90(promo_progs[_i].path, promo_progs[_i].define, &cr);
	for (p = cr.output; (p = strstr(p, "tl_wgmma_")); p++) {
		const char *call = p + strlen("tl_wgmma_");

		if (!strncmp(call, "rs_", 3))
			call += 3;
		if (strncmp(call, "e4m3<", 5) && strncmp(call, "e5m2<", 5))
			continue;
		nwg++;
		q = strchr(call, '(');
		ck_assert_msg(q && !strncmp(q, "(&acc_pa_[", 10), "%s: an fp8 wgmma not into the temporary: %.60s",
			      promo_progs[_i].path, p);
	}
	/* a temporary of at most LW_PROMO_TEMP (64) registers a thread: a larger accumulator is
	 * promoted one instruction at a time (128 + 128 registers spilled at 64 x 256) */
	for (p = cr.output; (p = strstr(p, "float acc_pa_[")); p++) {
		int regs = atoi(p + strlen("float acc_pa_["));

		ck_assert_msg(regs > 0 && regs <= 64, "%s (%s): a promotion temporary of %d registers",
			      promo_progs[_i].path, promo_progs[_i].define ? promo_progs[_i].define : "", regs);
	}
	for (p = cr.output; (p = strstr(p, "// promote: the fp8 wgmma temporary")); p++) {
		const char *w = NULL;

		nprom++;
		/* the last wgmma group instruction before the promotion */
		for (q = cr.output; (q = strstr(q, "tl_wgmma_")) && q < p; q++)
			w = q;
		ck_assert_msg(w && !strncmp(w, "tl_wgmma_wait0()", 16), "%s: a promotion after %.20s, not after wait_group 0",
			      promo_progs[_i].path, w ? w : "nothing");
	}
	if (promo_progs[_i].promoted) {
		ck_assert_msg(nwg > 0, "%s: no fp8 wgmma", promo_progs[_i].path);
		ck_assert_msg(nprom >= promo_progs[_i].min_promotions, "%s: %d promotions", promo_progs[_i].path, nprom);
		ck_assert_msg(strstr(cr.output, "acc[s] = acc[s] + acc_pa_[s];"), "%s: no f32 add", promo_progs[_i].path);
	} else {
		ck_assert_msg(nprom == 0 && !strstr(cr.output, "_pa_"), "%s: promoted", promo_progs[_i].path);
	}
	tilec_result_free(&cr);
}
END_TEST

/* a pipeline whose body has other statements than loads and gemms (FlashAttention): the top
 * of each iteration fences the stage into the async proxy before its barrier, and a wgmma
 * needs no fence and barrier of its own until a statement writes shared memory (P stored in
 * shared memory: fenced again). Counted in the loop over kb of the sm_90a code. FlashAttention as written loads K and V
 * with TMA (no statement writes shared memory): no fence and no barrier in the loop */
static const struct {
	const char *path, *define;
	int fences, barriers;
} pipe_fences[] = {
	{"samples/flash_fwd.tile", NULL, 0, 0},
	{"samples/flash_fwd.tile", "CAUSAL=1", 0, 0},
	{"test/cpu/flash_smem_p.tile", NULL, 2, 3},
};

START_TEST(pipeline_fences)
{
	tilec_result cr;
	const char *p, *end;
	int nf = 0, nb = 0;

	compile90(pipe_fences[_i].path, pipe_fences[_i].define, &cr);
	p = strstr(cr.output, "for (int kb = 0; kb < kb_n_; kb++) {");
	ck_assert_msg(p != NULL, "%s: no loop over kb", pipe_fences[_i].path);
	end = strstr(p, "\n\t}\n");
	ck_assert_ptr_nonnull(end);
	for (; (p = strstr(p, "tl_fence_proxy_async();")) && p < end; p++)
		nf++;
	for (p = strstr(cr.output, "for (int kb = 0;"); (p = strstr(p, "__syncthreads();")) && p < end; p++)
		nb++;
	ck_assert_msg(nf == pipe_fences[_i].fences && nb == pipe_fences[_i].barriers, "%s: %d fences, %d barriers",
		      pipe_fences[_i].path, nf, nb);
	tilec_result_free(&cr);
}
END_TEST

START_TEST(sm90a_golden)
{
	char path[256], golden[512], msg[600], *src, *out;
	size_t len;
	int ok;

	snprintf(path, sizeof path, "samples/%s.tile", sm90a_goldens[_i]);
	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	out = emit(path, src, len, "sm_90a", &ok);
	ck_assert_msg(ok, "%s: %s", path, out);
	ck_assert_msg(strstr(out, "tl_wgmma_") != NULL, "%s: no wgmma", path);
	goldenpath(golden, sizeof golden, path, ".sm90a");
	ck_assert_msg(test_golden(golden, out, msg, sizeof msg) == 0, "%s", msg);
	free(out);
	free(src);
}
END_TEST

/* PTX of a sample emitted for emit_arch, compiled for nvrtc_arch */
static int
nvrtc(tilec_jit *j, const char *cu, const char *arch, char **ptx)
{
	tilec_header h = {"tilec_cuda.h", tilec_template("tilec_cuda.h")};
	tilec_module *m = NULL;
	char *err = NULL;
	int rc;

	*ptx = NULL;
	rc = tilec_jit_compile_cuda_ex(j, cu, arch, NULL, 0, &h, 1, &m, &err);
	if (rc == TILEC_OK) {
		*ptx = strdup(tilec_module_ptx(m));
	} else {
		fprintf(stderr, "nvrtc %s: %s\n%s\n", arch, err ? err : "", m ? tilec_module_log(m) : "");
	}
	free(err);
	tilec_module_free(m);
	return rc;
}

static const struct {
	const char *sample, *emit_arch, *nvrtc_arch;
	const char *need[3];   /* PTX must contain each */
} compiles[] = {
	{"copy", "sm_80", "sm_80", {"cp.async.cg.shared.global", "st.global.v4", NULL}},
	{"copy", "sm_90", "sm_90a", {"cp.async.cg.shared.global", "st.global.v4", NULL}},
	{"elementwise", "sm_80", "sm_80", {"ld.global.v4|ld.global.nc.v4", "st.global.v4", NULL}},
	{"elementwise", "sm_90", "sm_90", {"ld.global.v4|ld.global.nc.v4", "st.global.v4", NULL}},
	{"gemm", "sm_80", "sm_80", {"mma.sync.aligned.m16n8k16", "ldmatrix.sync.aligned.m8n8.x4.trans", "cp.async"}},
	{"gemm", "sm_90", "sm_90", {"mma.sync.aligned.m16n8k16", "ldmatrix", "cp.async.wait_group 1"}},
	{"gemm", "sm_90", "sm_90a", {"mma.sync.aligned.m16n8k16", "ldmatrix", "cp.async.wait_group 1"}},
	{"gemm_bf16", "sm_80", "sm_80", {"mma.sync.aligned.m16n8k16.row.col.f32.bf16", "ldmatrix", "cp.async"}},
	{"gemm", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.commit_group",
				     "fence.proxy.async"}},
	{"gemm_bf16", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16", "wgmma.wait_group",
					  "cp.async"}},
	{"gemm_sm90", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", "wgmma.fence",
					  "wgmma.wait_group.sync.aligned 1"}},
	/* TMA loads onto mbarriers (the default on sm_90a), the maps as __grid_constant__ parameters */
	{"gemm_sm90", "sm_90a", "sm_90a", {"cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
					  "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.expect_tx"}},
	/* both gemms on wgmma: Q K^T from shared memory, P V with P from registers (wgmma RS) */
	{"flash_fwd", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
					  "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", "wgmma.fence"}},
	{"transpose", "sm_80", "sm_80", {"cp.async.cg.shared.global", "st.global.v4", NULL}},
	{"softmax", "sm_80", "sm_80", {"shfl.sync.bfly.b32", "bar.sync", "ld.global.v4|ld.global.nc.v4"}},
	{"softmax", "sm_90", "sm_90", {"shfl.sync.bfly.b32", "st.global.v4", "ex2.approx"}},
	/* the split-K tile store: f32 atomic adds, float2 ones on sm_90 */
	{"splitk_gemm", "sm_80", "sm_80", {"atom.global.add.f32|red.global.add.f32", "mma.sync.aligned.m16n8k16", NULL}},
	{"splitk_gemm", "sm_90", "sm_90", {"atom.global.add.v2.f32|red.global.add.v2.f32", "mma.sync.aligned.m16n8k16", NULL}},
	{"splitk_gemm", "sm_90a", "sm_90a", {"atom.global.add.v2.f32|red.global.add.v2.f32", "wgmma.mma_async", NULL}},
	/* the four operand orders (a path: a program of test/): ldmatrix.trans for a [K, M] A on
	 * sm_80; on sm_90a the immediates tnspA, tnspB of each (A [K, M]: tnspA = 1) */
	{"test/cpu/gemm_trans.tile", "sm_80", "sm_80", {"ldmatrix.sync.aligned.m8n8.x4.trans", "mma.sync.aligned.m16n8k16",
							 NULL}},
	{"test/cpu/gemm_trans.tile", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16",
							   "p, 1, 1, 1, 1;", "p, 1, 1, 1, 0;"}},
	/* 8-bit: mma.sync m16n8k32 (s8, u8; e4m3/e5m2 from sm_89), wgmma m64nNk32 for K-major operands */
	{"test/cpu/gemm_int8.tile", "sm_80", "sm_80", {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
							"mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32", "ldmatrix"}},
	{"test/cpu/gemm_int8.tile", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8",
							  "wgmma.mma_async.sync.aligned.m64n64k32.s32.u8.u8",
							  "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"}},
	{"test/cpu/gemm_fp8.tile", "sm_90", "sm_90", {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32",
						       "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", NULL}},
	/* an exact table of coordinates: a static const array of the kernel, read from global memory */
	{"test/cpu/exact_table.tile", "sm_80", "sm_80", {"tl_tab0[512] = {0, 0, 128, 0, 43, 0,", "ld.global.nc.u16|ld.global.u16",
							  NULL}},
	{"test/cpu/gemm_fp8.tile", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3",
							 "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2",
							 "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32"}},
	/* fp8 wgmma promoted into the f32 accumulator: both waits (one group in flight between
	 * promotions), the f32 adds */
	{"test/cpu/gemm_fp8_promo.tile", "sm_90a", "sm_90a", {"wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3",
							       "wgmma.wait_group.sync.aligned 1", "add.f32|add.rn.f32"}},
};

static tilec_jit *jit;

/* does text contain one of the '|'-separated alternatives? */
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

START_TEST(sample_nvrtc)
{
	char path[256], *src, *cu, *ptx;
	size_t len;
	int ok, i, rc;

	if (strchr(compiles[_i].sample, '/'))
		snprintf(path, sizeof path, "%s", compiles[_i].sample);
	else
		snprintf(path, sizeof path, "samples/%s.tile", compiles[_i].sample);
	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	cu = emit(path, src, len, compiles[_i].emit_arch, &ok);
	ck_assert_msg(ok, "%s: %s", path, cu);
	rc = nvrtc(jit, cu, compiles[_i].nvrtc_arch, &ptx);
	ck_assert_msg(rc == TILEC_OK, "%s for %s: %s", path, compiles[_i].nvrtc_arch, tilec_status_str(rc));
	for (i = 0; i < 3; i++)
		if (compiles[_i].need[i])
			ck_assert_msg(anyof(ptx, compiles[_i].need[i]), "%s (%s): no '%s' in the PTX", path,
				      compiles[_i].nvrtc_arch, compiles[_i].need[i]);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "%s (%s): local memory in the PTX",
		      path, compiles[_i].nvrtc_arch);
	free(ptx);
	free(cu);
	free(src);
}
END_TEST

/* warp-specialized (tilec_options.warp_specialize) kernels through NVRTC for sm_90a: the
 * producer's and the consumers' setmaxnreg and the consumers' named barrier in the PTX */
static const char *const ws_samples[] = {"samples/gemm_sm90.tile", "samples/gemm.tile", "test/cpu/tma_stages.tile"};

START_TEST(ws_nvrtc)
{
	tilec_options co;
	tilec_result cr;
	size_t len;
	char *src = test_readfile(ws_samples[_i], &len), *ptx;
	int rc;

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&co);
	co.arch = "sm_90a";
	co.warp_specialize = 1;
	co.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", ws_samples[_i], cr.diagnostics);
	ck_assert_msg(strstr(cr.output, "tl_setmaxnreg_dec<24>") && strstr(cr.output, "tl_bar_named(1, "),
		      "%s: not warp-specialized", ws_samples[_i]);
	rc = nvrtc(jit, cr.output, "sm_90a", &ptx);
	ck_assert_msg(rc == TILEC_OK, "%s: %s", ws_samples[_i], tilec_status_str(rc));
	ck_assert_msg(strstr(ptx, "setmaxnreg.dec.sync.aligned.u32 24") && strstr(ptx, "setmaxnreg.inc.sync.aligned.u32 240") &&
		      strstr(ptx, "bar.sync") && strstr(ptx, "cp.async.bulk.tensor.2d"),
		      "%s: the PTX lacks setmaxnreg, bar.sync or the TMA loads", ws_samples[_i]);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "%s: local memory in the PTX", ws_samples[_i]);
	free(ptx);
	tilec_result_free(&cr);
	free(src);
}
END_TEST

/* the persistent schedule (--persistent): NVRTC compiles the tile loop, the carried
 * stages and parities, the warp-specialized producer over every tile of the block */
static const struct {
	const char *file, *arch;
	int ws, G;
} persist_nv[] = {
	{"samples/gemm_sm90.tile", "sm_90a", 1, 0},
	{"samples/gemm_sm90.tile", "sm_90a", 1, 8},
	{"samples/gemm_sm90.tile", "sm_90a", 0, 0},
	{"samples/gemm.tile", "sm_90a", 1, 0},
	{"samples/gemm.tile", "sm_80", 0, 8},
};

START_TEST(persist_nvrtc)
{
	tilec_options co;
	tilec_result cr;
	size_t len;
	char *src = test_readfile(persist_nv[_i].file, &len), *ptx;
	int rc;

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&co);
	co.arch = persist_nv[_i].arch;
	co.warp_specialize = persist_nv[_i].ws;
	co.raster_group = persist_nv[_i].G;
	co.persistent = 1;
	co.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", persist_nv[_i].file, cr.diagnostics);
	ck_assert_msg(strstr(cr.output, ": persistent: launch grid") && strstr(cr.output, "tl_tile_ += gridDim.x") &&
		      (!persist_nv[_i].ws || (strstr(cr.output, "tl_setmaxnreg_dec<40>") &&
					      strstr(cr.output, "tl_pit_ = tl_pit_ + ko_n_;"))),
		      "%s: not persistent (or not warp-specialized)", persist_nv[_i].file);
	rc = nvrtc(jit, cr.output, persist_nv[_i].arch, &ptx);
	ck_assert_msg(rc == TILEC_OK, "%s: %s", persist_nv[_i].file, tilec_status_str(rc));
	ck_assert_msg(strcmp(persist_nv[_i].arch, "sm_90a") || strstr(ptx, "cp.async.bulk.tensor.2d"),
		      "%s: the PTX lacks the TMA loads", persist_nv[_i].file);
	ck_assert_msg(!persist_nv[_i].ws || (strstr(ptx, "setmaxnreg.dec.sync.aligned.u32 40") &&
					     strstr(ptx, "setmaxnreg.inc.sync.aligned.u32 232")),
		      "%s: the PTX lacks the persistent register split", persist_nv[_i].file);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "%s: local memory in the PTX",
		      persist_nv[_i].file);
	free(ptx);
	tilec_result_free(&cr);
	free(src);
}
END_TEST

#define FILLS \
	"kernel f(A: f32[M, N], B: f32[M, N]) grid(cdiv(M, 16)) threads(64) {\n  shared t: f32[16, 32];\n" \
	"  local x: f32[16, 32];\n  local y: f16[16, 32];\n  fill(t, 2.0);\n  fill(t[0:4, 8:16], 3.0);\n" \
	"  copy(t, x);\n  copy(x, y);\n  fill(y[2:4, 0:32], 1.0);\n  copy(y, B[bx * 16, 0]);\n}\n"

#define SREDUCE \
	"kernel srows(X: f32[M, 128], Y: f32[M], Z: f32[M]) grid(cdiv(M, 32)) threads(128) {\n" \
	"  shared x: f32[32, 128];\n  shared t: f32[32];\n  local s: f32[32];\n" \
	"  copy(X[bx * 32, 0], x);\n  reduce(x, s, op = sum, dim = 1);\n  reduce(x, t, op = max, dim = 1);\n" \
	"  copy(s, Y[bx * 32]);\n  copy(t, Z[bx * 32]);\n}\n"

/* guards: none when assume() proves divisibility, present otherwise */
static const struct {
	const char *src;
	const char *has, *hasnot;
} guards[] = {
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {\n"
	 "  shared s: f16[64, 64];\n  copy(A[by * 64, bx * 64], s);\n  copy(s, B[by * 64, bx * 64]);\n}\n",
	 "< M && ", NULL},
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {\n"
	 "  assume(M % 64 == 0);\n  assume(N % 128 == 0);\n"
	 "  shared s: f16[64, 64];\n  copy(A[by * 64, bx * 64], s);\n  copy(s, B[by * 64, bx * 64]);\n}\n",
	 "tl_cp_async16(", "< M"},
	/* a local f32 tile: 4-byte elements, 16-byte stores */
	{"kernel f(A: f32[M, N]) grid(1) threads(64) {\n  local x: f32[16, 32];\n"
	 "  fill(x, 1.5);\n  copy(x, A[0, 0]);\n}\n", "make_uint4(__float_as_uint(x[s + 0])", NULL},
	/* rows not proven whole vectors: a runtime choice between the vector path
	 * and a guarded scalar one, never a trap */
	{"kernel f(A: f32[M, N], B: f32[M, N]) grid(cdiv(M, 16)) threads(64) {\n  local x: f32[16, 32];\n"
	 "  copy(A[bx * 16, 0], x);\n  copy(x, B[bx * 16, 0]);\n}\n",
	 "const bool tl_rows4_N = N % 4 == 0;", "__trap"},
	{"kernel f(A: f32[M, N], B: f32[M, N]) grid(cdiv(M, 16)) threads(64) {\n  local x: f32[16, 32];\n"
	 "  copy(A[bx * 16, 0], x);\n  copy(x, B[bx * 16, 0]);\n}\n",
	 "} else { // rows that are not whole vectors: element by element\n\t\t#pragma unroll\n"
	 "\t\tfor (int s = 0; s < 8; s += 1) {", NULL},
	{"kernel f(A: f32[M, N], B: f32[M, N]) grid(cdiv(M, 16)) threads(64) {\n  assume(N % 32 == 0);\n"
	 "  local x: f32[16, 32];\n  copy(A[bx * 16, 0], x);\n  copy(x, B[bx * 16, 0]);\n}\n",
	 "const uint4 r = ", "tl_rows"},
	/* through shared memory: zeros where the source is out of range, as cp.async */
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {\n"
	 "  shared s: f16[64, 64];\n  copy(A[by * 64, bx * 64], s);\n  copy(s, B[by * 64, bx * 64]);\n}\n",
	 ") < N ? *(&A[", "__trap"},
	/* the element-by-element body copies through shared memory in a rolled loop */
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {\n"
	 "  shared s: f16[64, 64];\n  copy(A[by * 64, bx * 64], s);\n  copy(s, B[by * 64, bx * 64]);\n}\n",
	 "} else { // rows that are not whole vectors: element by element\n\t\t#pragma unroll 1\n"
	 "\t\tfor (int it = 0; it < 32; it++) {", NULL},
	/* an offset not a multiple of the vector: checked at run time too */
	{"kernel f(A: f32[M, N], B: f32[M, N]) grid(cdiv(M, 16)) threads(64) {\n  assume(N % 32 == 0);\n"
	 "  local x: f32[16, 32];\n  copy(A[bx * 16, bx + 1], x);\n  copy(x, B[bx * 16, 0]);\n}\n",
	 "if ((((int)blockIdx.x + 1)) % 4 == 0) {", NULL},
	/* a tile of chunks that do not divide among the threads: the extra ones are skipped,
	 * the out-of-range ones zero-filled (cp.async, and the scalar copy of a 30-wide tile) */
	{"kernel c(A: f16[M, N], B: f16[M, N]) grid(cdiv(N, 64), cdiv(M, 24)) threads(128) {\n"
	 "  assume(N % 64 == 0);\n  shared s: f16[24, 64];\n  copy(A[by * 24, bx * 64], s);\n"
	 "  copy(s, B[by * 24, bx * 64]);\n}\n", "if (q < 192)\n\t\t\ttl_cp_async16_zfill(", NULL},
	{"kernel c(A: f32[M, N], B: f32[M, N]) grid(cdiv(N, 30), cdiv(M, 16)) threads(64) {\n"
	 "  shared t: f32[16, 30];\n  copy(A[by * 16, bx * 30], t);\n  copy(t, B[by * 16, bx * 30]);\n}\n",
	 "if (q < 480)\n\t\t\t*(&t[((r * 30) + c)]) = (((int)blockIdx.y * 16) + r) < M && (((int)blockIdx.x * 30) + c) < N ? *(&A[", NULL},
	/* reduces over inferred layouts: column sums (a warp bit through shared memory only),
	 * absmax of f16 into f32 folding in the old value (lane bits only), the row max of an
	 * mma.sync accumulator (the 4 lanes of a quad, then the warps that split N) */
	{"kernel colsum(X: f32[M, 256], Y: f32[256]) grid(cdiv(M, 64)) threads(128) {\n"
	 "  local x: f32[64, 256];\n  local s: f32[256];\n  copy(X[bx * 64, 0], x);\n"
	 "  reduce(x, s, op = sum, dim = 0);\n  copy(s, Y[0]);\n}\n",
	 "shuffles xor 0x0, warps xor 0x2", "__shfl"},
	{"kernel rowabs(X: f16[M, 128], Y: f32[M]) grid(cdiv(M, 32)) threads(128) {\n"
	 "  local x: f16[32, 128];\n  local s: f32[32];\n  copy(X[bx * 32, 0], x);\n  fill(s, 1.0);\n"
	 "  reduce(x, s, op = absmax, dim = 1, clear = false);\n  copy(s, Y[bx * 32]);\n}\n",
	 "fabsf((float)(tl_h2f(x[s])))", "__shared__"},
	{"kernel rowabs(X: f16[M, 128], Y: f32[M]) grid(cdiv(M, 32)) threads(128) {\n"
	 "  local x: f16[32, 128];\n  local s: f32[32];\n  copy(X[bx * 32, 0], x);\n  fill(s, 1.0);\n"
	 "  reduce(x, s, op = absmax, dim = 1, clear = false);\n  copy(s, Y[bx * 32]);\n}\n",
	 "s_[g] = fmaxf(s_[g], tl_r0[g]);", NULL},
	{"kernel gemmmax(A: f16[M, K], B: f16[K, N], R: f32[M]) grid(cdiv(N, 128), cdiv(M, 128)) threads(128) {\n"
	 "  shared As: f16[128, 32];\n  shared Bs: f16[32, 128];\n  local acc: f32[128, 128];\n"
	 "  local mx: f32[128];\n  clear(acc);\n  for ko in range(cdiv(K, 32)) {\n"
	 "    copy(A[by * 128, ko * 32], As);\n    copy(B[ko * 32, bx * 128], Bs);\n    gemm(As, Bs, acc);\n  }\n"
	 "  reduce(acc, mx, op = max, dim = 1);\n  copy(mx, R[by * 128]);\n}\n",
	 "reduce max acc -> mx dim 1: 128 slots into 8, shuffles xor 0x3, warps xor 0x2", NULL},
	/* reduces from shared memory: into a local (every holder folds its slots) and into a
	 * shared 1-D buffer (one thread per element), whose [1, n] layout takes a leading 0 */
	{SREDUCE, "for (int tl_k = 0; tl_k < 128; tl_k++)\n\t\t\t\t\ttl_a = tl_a + x[((c0 * 128) + tl_k)];\n"
	 "\t\t\t\ts_[g] = tl_a;", NULL},
	{SREDUCE, "tl_a = fmaxf(tl_a, x[((c0 * 128) + tl_k)]);\n\t\t\t\t\tt[c0] = tl_a;", "t[0]"},
	/* fills of shared memory (whole and a part), a local -> local copy in
	 * registers (f32 -> f16), a fill of part of a local buffer */
	{FILLS, "// copy x -> y in registers\n\t\t#pragma unroll\n\t\tfor (int s = 0; s < 8; s++)\n\t\t\ty[s] = tl_f2h(x[s]);",
	 "not lowered"},
	{FILLS, "if (q < 32)\n\t\t\t\t*(&t[((c0 * 32) + (8 + c1))]) = 3.0f;\n\t\t}\n\t\t__syncthreads();", NULL},
	{FILLS, "if (((tid / 8) + ((s / 4) * 8)) >= 2 && ((tid / 8) + ((s / 4) * 8)) < 2 + 2)\n\t\t\t\ty[s] = ", NULL},
};

START_TEST(guard_table)
{
	char *cu;
	int ok;

	cu = emit("t.tile", guards[_i].src, strlen(guards[_i].src), "sm_80", &ok);
	ck_assert_msg(ok, "%s", cu);
	if (jit) {
		char *ptx;

		ck_assert_int_eq(nvrtc(jit, cu, "sm_80", &ptx), TILEC_OK);
		ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "local memory:\n%s", cu);
		free(ptx);
	}
	if (guards[_i].has)
		ck_assert_msg(strstr(cu, guards[_i].has) != NULL, "no '%s' in\n%s", guards[_i].has, cu);
	if (guards[_i].hasnot)
		ck_assert_msg(strstr(cu, guards[_i].hasnot) == NULL, "'%s' in\n%s", guards[_i].hasnot, cu);
	free(cu);
}
END_TEST

/* the same kernels run on the CPU against the reference interpreter (docs/cpu.md) at tiny,
 * prime and ragged sizes: the texts above say what is emitted, this says it computes right.
 * Up to 61: some of these kernels write one output from every block (a race the interpreter
 * refuses), which one block in each dim avoids. */
START_TEST(guard_table_cpu)
{
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.sizes = "*=1;*=37;*=61";
	o.filename = "t.tile";
	o.timeout_s = 120;
	tilec_run(guards[_i].src, strlen(guards[_i].src), &o, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE, "status %d:\n%s%s\n%s", r.status, r.diagnostics, r.report,
		      guards[_i].src);
	tilec_run_result_free(&r);
}
END_TEST

/* layouts set as inference will set them (IrBuffer.layout, IrStmt.loop_layout) are
 * the ones emitted: a strided partition (thread = flat % 128) gives scalar accesses
 * that still stay in registers; a loop layout that disagrees with the buffers is an error */
START_TEST(inferred_layouts)
{
	static const char *const strided[] = {"(_i * 64 + _j) // 128"}, *const blocked[] = {"_j % 32"};
	int64_t shape[2] = {64, 64};
	Arena a;
	Diags d;
	Node *top;
	IrProgram *p;
	IrKernel *k;
	IrStmt *st;
	Fragment *F, *G;
	Buf b;
	Err e = {0};
	char *src, *ptx;
	size_t len;
	int i, rc;

	arena_init(&a);
	diags_init(&d, &a);
	src = test_readfile("samples/elementwise.tile", &len);
	ck_assert_ptr_nonnull(src);
	top = parse_program(&a, &d, src, len, "elementwise.tile");
	p = sema_program(&a, &d, top, NULL, 0, "elementwise.tile");
	ck_assert_ptr_nonnull(p);
	k = p->kernels;
	F = frag_parse(&a, shape, 2, "(_i * 64 + _j) % 128", 1, strided, 1, &e);
	G = frag_parse(&a, shape, 2, "_i * 2 + _j // 32", 1, blocked, 1, &e);
	ck_assert_msg(F && G, "%s", e.msg);
	for (i = 0; i < k->nbuf; i++)
		if (k->bufs[i].scope == MEM_LOCAL)
			k->bufs[i].layout = F;
	for (st = k->body; st && st->kind != S_PARALLEL; st = st->next)
		;
	ck_assert_ptr_nonnull(st);
	st->loop_layout = F;
	p->target = 0;
	p->arch = "sm_80";
	buf_init(&b);
	ck_assert_msg(emit_cuda(&a, p, &b, &e) == 0, "%s", e.msg);
	ck_assert_ptr_nonnull(strstr(buf_str(&b), "swizzle: none  vec: 1"));
	ck_assert_ptr_nonnull(strstr(buf_str(&b), "c_[s] = "));
	rc = nvrtc(jit, buf_str(&b), "sm_80", &ptx);
	ck_assert_int_eq(rc, TILEC_OK);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "local memory in the PTX");
	free(ptx);
	/* the nest runs on other threads than the ones holding a, b and c */
	st->loop_layout = G;
	buf_reset(&b);
	ck_assert_int_eq(emit_cuda(&a, p, &b, &e), -1);
	ck_assert_msg(strstr(e.msg, "layouts disagree") != NULL, "%s", e.msg);
	buf_free(&b);
	free(src);
	arena_free(&a);
}
END_TEST

/* local -> local copies with layouts set by hand: a permuted slot order stays in
 * registers, a thread map that differs is refused with the reason; a fill of a
 * global region (sema refuses it in source; the IR allows it) is guarded */
START_TEST(local_copy_layouts)
{
	static const char *const slot[] = {"_j % 8"}, *const rev[] = {"_j % 4 * 2 + _j % 8 // 4"};
	int64_t shape[2] = {16, 32};
	Arena a;
	Diags d;
	IrProgram *p;
	IrKernel *k;
	IrStmt *st;
	Fragment *F, *G, *H;
	Buf b;
	Err e = {0};
	char *ptx;
	int i, x = -1, y = -1, A = -1;

	arena_init(&a);
	diags_init(&d, &a);
	p = sema_program(&a, &d, parse_program(&a, &d, FILLS, strlen(FILLS), "f.tile"), NULL, 0, "f.tile");
	ck_assert_ptr_nonnull(p);
	k = p->kernels;
	for (i = 0; i < k->nbuf; i++) {
		if (!strcmp(k->bufs[i].name, "x"))
			x = i;
		if (!strcmp(k->bufs[i].name, "y"))
			y = i;
		if (!strcmp(k->bufs[i].name, "A"))
			A = i;
	}
	ck_assert(x >= 0 && y >= 0 && A >= 0);
	F = frag_parse(&a, shape, 2, "_i * 4 + _j // 8", 1, slot, 1, &e);
	G = frag_parse(&a, shape, 2, "_i * 4 + _j // 8", 1, rev, 1, &e);
	H = frag_parse(&a, shape, 2, "(_i * 4 + _j // 8 + 1) % 64", 1, slot, 1, &e);
	ck_assert_msg(F && G && H, "%s", e.msg);
	p->target = 0;
	p->arch = "sm_80";
	k->bufs[x].layout = F;
	k->bufs[y].layout = G;
	buf_init(&b);
	ck_assert_msg(emit_cuda(&a, p, &b, &e) == 0, "%s", e.msg);
	ck_assert_msg(strstr(buf_str(&b), "y[s] = tl_f2h(x[((") != NULL, "%s", buf_str(&b));
	ck_assert_int_eq(nvrtc(jit, buf_str(&b), "sm_80", &ptx), TILEC_OK);
	ck_assert_msg(!strstr(ptx, "ld.local") && !strstr(ptx, "st.local"), "local memory in the PTX");
	free(ptx);
	/* a destination whose elements other threads hold: through shared memory (lower_copy.c
	 * stagedcopy), each element written once and read back by its holders */
	k->bufs[y].layout = H;
	buf_reset(&b);
	ck_assert_msg(emit_cuda(&a, p, &b, &e) == 0, "%s", e.msg);
	ck_assert_msg(strstr(buf_str(&b), "static __shared__ tl_half_t tl_stage") != NULL ||
		      strstr(buf_str(&b), "static __shared__ float tl_stage") != NULL, "%s", buf_str(&b));
	ck_assert_msg(strstr(buf_str(&b), "reads it from tl_stage") != NULL, "%s", buf_str(&b));
	ck_assert_int_eq(nvrtc(jit, buf_str(&b), "sm_80", &ptx), TILEC_OK);
	free(ptx);
	/* the first fill, retargeted at the global A */
	k->bufs[y].layout = F;
	for (st = k->body; st && st->kind != S_FILL; st = st->next)
		;
	ck_assert_ptr_nonnull(st);
	st->u.fill.dst.buf = A;
	buf_reset(&b);
	ck_assert_msg(emit_cuda(&a, p, &b, &e) == 0, "%s", e.msg);
	ck_assert_msg(strstr(buf_str(&b), "// fill global A\n") != NULL, "%s", buf_str(&b));
	ck_assert_msg(strstr(buf_str(&b), "if ((c0) < M && (c1) < N)\n\t\t\t\t*(&A[") != NULL, "%s", buf_str(&b));
	ck_assert_int_eq(nvrtc(jit, buf_str(&b), "sm_80", &ptx), TILEC_OK);
	free(ptx);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* a store into a replicated local from a parallel nest must write every replica */
START_TEST(replicated_store)
{
	static const char *const src =
		"kernel f(A: f32[M, 64]) grid(1) threads(64) {\n  local m: f32[64];\n"
		"  for i in parallel(64) {\n    m[i] = 1.0;\n  }\n  copy(m, A[0, 0]);\n}\n";
	static const char *const id[] = {"_i"}, *const zero[] = {"0"};
	int64_t shape[1] = {64};
	Arena a;
	Diags d;
	IrProgram *p;
	IrKernel *k;
	IrStmt *st;
	Fragment *R, *One;
	Buf b;
	Err e = {0};

	arena_init(&a);
	diags_init(&d, &a);
	p = sema_program(&a, &d, parse_program(&a, &d, src, strlen(src), "r.tile"), NULL, 0, "r.tile");
	ck_assert_ptr_nonnull(p);
	k = p->kernels;
	R = frag_parse(&a, shape, 1, "_rep", 64, id, 1, &e);
	One = frag_parse(&a, shape, 1, "_i", 1, zero, 1, &e);
	ck_assert_msg(R && One, "%s", e.msg);
	p->target = 0;
	p->arch = "sm_80";
	k->bufs[k->nbuf - 1].layout = R;
	ck_assert_str_eq(k->bufs[k->nbuf - 1].name, "m");
	for (st = k->body; st && st->kind != S_PARALLEL; st = st->next)
		;
	ck_assert_ptr_nonnull(st);
	st->loop_layout = One;
	buf_init(&b);
	ck_assert_int_eq(emit_cuda(&a, p, &b, &e), -1);
	ck_assert_msg(strstr(e.msg, "cover every replica") != NULL, "%s", e.msg);
	st->loop_layout = R;
	buf_reset(&b);
	ck_assert_msg(emit_cuda(&a, p, &b, &e) == 0, "%s", e.msg);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* a reduce the emitter refuses, with the reason (an integer source into a float destination);
 * a local source into a shared destination, refused before, reads a copy in shared memory */
START_TEST(reduce_refused)
{
	static const char *const src =
		"kernel f(X: f32[M, 128], Y: f32[M]) grid(cdiv(M, 32)) threads(128) {\n"
		"  local x: f32[32, 128];\n  shared t: f32[32];\n  copy(X[bx * 32, 0], x);\n"
		"  reduce(x, t, op = sum, dim = 1);\n  copy(t, Y[bx * 32]);\n}\n";
	static const char *const mixed =
		"kernel f(X: i32[M, 128], Y: f32[M]) grid(cdiv(M, 32)) threads(128) {\n"
		"  local x: i32[32, 128];\n  local t: f32[32];\n  copy(X[bx * 32, 0], x);\n"
		"  reduce(x, t, op = sum, dim = 1);\n  copy(t, Y[bx * 32]);\n}\n";
	char *cu;
	int ok;

	cu = emit("t.tile", src, strlen(src), "sm_80", &ok);
	ck_assert_msg(ok && strstr(cu, "reduce sum x -> t dim 1 from shared memory") &&
		      strstr(cu, "'x' through shared memory: it is read by a reduce into shared 't'"), "%s", cu);
	free(cu);
	cu = emit("t.tile", mixed, strlen(mixed), "sm_80", &ok);
	ck_assert_msg(!ok && strstr(cu, "t.tile:5:3: error: kernel 'f': reduce: element types i32 -> f32 are not lowered"),
		      "%s", cu);
	free(cu);
}
END_TEST

/* strided tensors, CUDA and HIP: addresses through the strides, vector accesses where the
 * strides allow them (constants) or under run-time checks with a scalar body beside; a
 * provably dense strides(...) emits what the program without it emits */
static char *
emit_target(const char *src, int hip, tilec_status *st)
{
	tilec_options o;
	tilec_result r;
	char *out;

	tilec_options_init(&o);
	o.filename = "s.tile";
	o.target = hip ? TILEC_TARGET_HIP : TILEC_TARGET_CUDA;
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, strlen(src), &o, &r);
	*st = r.status;
	out = r.status == TILEC_OK ? r.output : r.diagnostics;
	if (r.status == TILEC_OK)
		r.output = NULL;
	else
		r.diagnostics = NULL;
	tilec_result_free(&r);
	return out;
}

#define STRIDED_BODY \
	" grid(cdiv(M, 16)) threads(64) {\n" \
	"  for i, j in parallel(16, 64) { B[bx * 16 + i, j] = A[bx * 16 + i, j] * 2.0; }\n}\n"

#define STRIDED_COPY(decl, extra) \
	"kernel k(" decl ") grid(cdiv(M, 16)) threads(64) {\n" extra \
	"  local x: f32[16, 64];\n  copy(A[bx * 16, 0], x);\n  copy(x, B[bx * 16, 0]);\n}\n"

START_TEST(strided_emit)
{
	/* run-time strides: the addresses use them; the vector body needs whole-vector strides and
	 * aligned view pointers, checked at entry, the scalar body otherwise */
	static const char *const rt[] = {
		"const bool tl_ld4_lda = lda % 4 == 0; /* strides of whole 4-vectors */",
		"const bool tl_al16_A = (unsigned long long)A % 16 == 0; /* 'A' aligned to 16 bytes */",
		"const bool tl_ld4_ldb = ldb % 4 == 0;",
		"const bool tl_al16_B = (unsigned long long)B % 16 == 0;",
		"if (tl_ld4_lda && tl_al16_A && tl_ld4_ldb && tl_al16_B) {",
		"} else { // rows, strides or a view's pointer not of whole vectors: element by element",
		"*(const uint4 *)(&A[((long long)(((int)blockIdx.x * 16) + c0) * lda + (long long)(c1))])",
		"x[s] = *(&A[((long long)(((int)blockIdx.x * 16) + c0) * lda + (long long)(c1))]);",
	};
	const char *run = STRIDED_COPY("A: f32[M, 64] strides(lda, 1), B: f32[M, 64] strides(ldb, 1)", "");
	/* an assume proves lda % 8 == 0: only the pointer and ldb are checked */
	const char *assumed = STRIDED_COPY("A: f32[M, 64] strides(lda, 1), B: f32[M, 64] strides(ldb, 1)",
					   "  assume(lda % 8 == 0);\n");
	/* constant strides: 66 allows pairs, not 4s; a last stride of 2 and a column-major view
	 * allow no vectors at all */
	const char *cst = STRIDED_COPY("A: f32[M, 64] strides(66, 1), B: f32[M, 64] strides(64, 2)", "");
	const char *col = STRIDED_COPY("A: f32[M, 64] strides(1, M), B: f32[M, 64]", "");
	const char *dense = "kernel k(B: f32[M, 64],\n         A: f32[M, 64])" STRIDED_BODY;
	const char *dense2 = "kernel k(B: f32[M, 64] strides(64, 1),\n         A: f32[M, 64])" STRIDED_BODY;
	tilec_status st;
	char *out, *want;
	int hip;
	size_t i;

	for (hip = 0; hip < 2; hip++) {
		out = emit_target(run, hip, &st);
		ck_assert_msg(st == TILEC_OK, "%s", out);
		for (i = 0; i < countof(rt); i++)
			ck_assert_msg(strstr(out, rt[i]), "no '%s' in\n%s", rt[i], out);
		free(out);
		out = emit_target(assumed, hip, &st);
		ck_assert_msg(st == TILEC_OK, "%s", out);
		ck_assert_msg(!strstr(out, "tl_ld4_lda") && strstr(out, "if (tl_al16_A && tl_ld4_ldb && tl_al16_B) {"),
			      "%s", out);
		free(out);
		out = emit_target(cst, hip, &st);
		ck_assert_msg(st == TILEC_OK, "%s", out);
		ck_assert_msg(strstr(out, "const bool tl_al8_A = (unsigned long long)A % 8 == 0;") &&
			      strstr(out, "*(const uint2 *)(&A[((long long)(((int)blockIdx.x * 16) + c0) * 66 + "
				     "(long long)(c1))])") &&
			      strstr(out, "B[((long long)(((int)blockIdx.x * 16) + c0) * 64 + (long long)(c1) * 2)]") &&
			      !strstr(out, "tl_al16_B") && !strstr(out, "uint4"), "%s", out);
		free(out);
		out = emit_target(col, hip, &st);
		ck_assert_msg(st == TILEC_OK, "%s", out);
		ck_assert_msg(strstr(out, "*(&A[((long long)(((int)blockIdx.x * 16) + c0) + (long long)(c1) * M)])") &&
			      !strstr(out, "tl_al16_A") && !strstr(out, "*(const uint4 *)(&A"), "%s", out);
		free(out);
		want = emit_target(dense, hip, &st);
		ck_assert_int_eq(st, TILEC_OK);
		out = emit_target(dense2, hip, &st);
		ck_assert_int_eq(st, TILEC_OK);
		ck_assert_str_eq(out, want);
		free(out);
		free(want);
	}
}
END_TEST

/* past 32 run-time flags the vector body checks no more: the next strided copy is element
 * by element in both bodies, never a vector access without its checks */
START_TEST(strided_flags_full)
{
	Buf src;
	tilec_status st;
	char *out, *p;
	int i, n = 0;

	buf_init(&src);
	buf_puts(&src, "kernel many(");
	for (i = 0; i < 17; i++)
		buf_printf(&src, "A%d: f32[M, 64] strides(l%d, 1), ", i, i);
	buf_puts(&src, "O: f32[M, 64]) grid(cdiv(M, 16)) threads(64) {\n  local x: f32[16, 64];\n");
	for (i = 0; i < 17; i++)
		buf_printf(&src, "  copy(A%d[bx * 16, 0], x);\n  copy(x, O[bx * 16, 0]);\n", i);
	buf_puts(&src, "}\n");
	out = emit_target(buf_str(&src), 0, &st);
	ck_assert_msg(st == TILEC_OK, "%s", out);
	for (p = strstr(out, "\tconst bool "); p; p = strstr(p + 1, "\tconst bool "))
		n++;
	ck_assert_int_eq(n, 32);
	ck_assert_msg(strstr(out, "tl_ld4_l15 && tl_al16_A15) {") && !strstr(out, "tl_ld4_l16") &&
		      !strstr(out, "(const uint4 *)(&A16[") &&
		      strstr(out, "x[s] = *(&A16[((long long)(((int)blockIdx.x * 16) + c0) * l16 + (long long)(c1))]);"),
		      "%s", out);
	free(out);
	buf_free(&src);
}
END_TEST

/* atomics: the widest atomics each arch has for a tile store (f16x2 pairs, float4 into global
 * memory on sm_90 only, scalars into shared memory), and the refusals with file:line:col */
static char *
emit_arch(const char *src, int hip, const char *arch, tilec_status *st)
{
	tilec_options o;
	tilec_result r;
	char *out;

	tilec_options_init(&o);
	o.filename = "s.tile";
	o.target = hip ? TILEC_TARGET_HIP : TILEC_TARGET_CUDA;
	o.arch = arch;
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, strlen(src), &o, &r);
	*st = r.status;
	out = r.status == TILEC_OK ? r.output : r.diagnostics;
	if (r.status == TILEC_OK)
		r.output = NULL;
	else
		r.diagnostics = NULL;
	tilec_result_free(&r);
	return out;
}

START_TEST(atomic_emit)
{
	static const char tile[] =
		"kernel k(A: f32[64, 64], H: f16[64, 64], G: bf16[64, 64]) grid(4) threads(128) {\n"
		"  assume(1 == 1);\n  local t: f32[64, 64];\n  shared s: f32[64, 64];\n  fill(t, 1.0);\n"
		"  copy(t, A[0, 0], op = add);\n  copy(t, H[0, 0], op = add);\n  copy(t, G[0, 0], op = add);\n"
		"  copy(t, s, op = add);\n  copy(s, A[0, 0]);\n}\n";
	static const struct {
		const char *src, *arch;
		int hip;
		const char *has[3], *hasnot;
	} rows[] = {
		{tile, "sm_80", 0, {"tl_atomic_add_f16x2(", "tl_atomic_add_bf16x2(", "tl_atomic_add_f32(&"}, "tl_atomic_add_f32x"},
		{tile, "sm_90a", 0, {"tl_atomic_add_f32x4(&A[", "tl_atomic_add_f16x2(", "tl_atomic_add_f32(&s_["}, "tl_atomic_add_f32x4(&s_"},
		{tile, "gfx942", 1, {"tl_atomic_add_f16x2(", "tl_atomic_add_f32(&A[", NULL}, "tl_atomic_add_f32x"},
	};
	static const struct {
		const char *src, *arch;
		int hip;
		const char *msg;
	} refused[] = {
		{"kernel k(A: f32[64]) grid(1) threads(64) {\n  for i in parallel(64) {\n    atomic_max(A[i], 1.0);\n  }\n}\n",
		 "sm_90a", 0, "s.tile:3:5: error: kernel 'k': atomic max of f32 elements is not supported on cuda sm_90a "
		 "(CUDA has no floating-point atomic max/min; use i32 elements)"},
		{"kernel k(B: f16[64]) grid(1) threads(64) {\n  local t: f16[64];\n  fill(t, 1.0);\n  copy(t, B[0], op = min);\n}\n",
		 "gfx90a", 1, "s.tile:4:3: error: kernel 'k': atomic min of f16 elements is not supported on hip gfx90a "
		 "(max/min of 16-bit floats has no atomic; use f32 or i32 elements)"},
		{"kernel k(B: bf16[64]) grid(1) threads(64) {\n  for i in parallel(64) {\n    atomic_min(B[i], 1.0);\n  }\n}\n",
		 "sm_80", 0, "s.tile:3:5: error: kernel 'k': atomic min of bf16 elements is not supported on cuda sm_80"},
	};
	tilec_status st;
	char *out;
	size_t i, j;

	for (i = 0; i < countof(rows); i++) {
		out = emit_arch(rows[i].src, rows[i].hip, rows[i].arch, &st);
		ck_assert_msg(st == TILEC_OK, "%s: %s", rows[i].arch, out);
		for (j = 0; j < 3; j++)
			ck_assert_msg(!rows[i].has[j] || strstr(out, rows[i].has[j]), "%s: no %s in\n%s", rows[i].arch,
				      rows[i].has[j], out);
		ck_assert_msg(!strstr(out, rows[i].hasnot), "%s: %s in\n%s", rows[i].arch, rows[i].hasnot, out);
		free(out);
	}
	for (i = 0; i < countof(refused); i++) {
		out = emit_arch(refused[i].src, refused[i].hip, refused[i].arch, &st);
		ck_assert_int_eq(st, TILEC_ERR_COMPILE);
		ck_assert_msg(strstr(out, refused[i].msg) == out, "got %s", out);
		free(out);
	}
}
END_TEST

/* emission errors are messages, not crashes */
START_TEST(emit_errors)
{
	Arena a;
	Buf b;
	Err e = {0};
	IrProgram p;

	arena_init(&a);
	buf_init(&b);
	ck_assert_int_eq(emit_cuda(&a, NULL, &b, &e), -1);
	ck_assert_int_eq(emit_cuda(NULL, NULL, NULL, NULL), -1);
	memset(&p, 0, sizeof p);
	p.target = 7;
	ck_assert_int_eq(emit_cuda(&a, &p, &b, &e), -1);
	ck_assert_ptr_nonnull(strstr(e.msg, "unknown target"));
	p.target = 0;
	p.arch = "sm_99";
	ck_assert_int_eq(emit_cuda(&a, &p, &b, &e), -1);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* the static __shared__ scratch of a reduce across warps counts against the block's shared
 * memory: shared buffers of exactly the target's maximum plus a reduce are refused (they
 * could not launch: HIP fuzz-diff seed 30185 on gfx1100), one row less is emitted */
static const struct {
	tilec_target target;
	const char *arch;
	int rows; /* rows of 128 f32 that fill the target's shared memory */
} scratch_archs[] = {
	{TILEC_TARGET_CUDA, "sm_80", 326}, {TILEC_TARGET_CUDA, "sm_90a", 454}, {TILEC_TARGET_HIP, "gfx90a", 128},
	{TILEC_TARGET_HIP, "gfx942", 128}, {TILEC_TARGET_HIP, "gfx1100", 128},
};

START_TEST(reduce_scratch_smem)
{
	int d;

	for (d = 0; d < 2; d++) {
		char src[1024];
		tilec_options o;
		tilec_result r;
		tilec_status st;

		snprintf(src, sizeof src,
			 "kernel k(X: f32[M, 256], Y: f32[M], Z: f32[M, 128]) grid(cdiv(M, 128)) threads(256) {\n"
			 "  shared s: f32[%d, 128];\n  local x: f32[1, 256];\n  local m: f32[1];\n"
			 "  copy(X[bx, 0], x);\n  reduce(x, m, op = max, dim = 1);\n  copy(m, Y[bx]);\n"
			 "  copy(X[bx * 128, 0], s);\n  copy(s, Z[bx * 128, 0]);\n}\n",
			 scratch_archs[_i].rows - d);
		tilec_options_init(&o);
		o.target = scratch_archs[_i].target;
		o.arch = scratch_archs[_i].arch;
		o.dump = TILEC_DUMP_CUDA;
		st = tilec_compile(src, strlen(src), &o, &r);
		if (d == 0)
			ck_assert_msg(st != TILEC_OK && strstr(r.diagnostics, "of the reduces' scratch arrays"),
				      "%s: %s", scratch_archs[_i].arch, r.diagnostics);
		else
			ck_assert_msg(st == TILEC_OK && strstr(r.output, "static __shared__ float tl_red"), "%s: %s",
				      scratch_archs[_i].arch, r.diagnostics);
		tilec_result_free(&r);
	}
}
END_TEST

/* ---- generated names: no user name can meet a name the emitted code declares or uses ---- */

/* the identifiers of C text into set (a Buf of "\nname\n" entries), skipping comments,
 * strings, character constants, preprocessor lines, numbers and members after '.' or "->" */
static void
idents(const char *s, Buf *set, int c_text)
{
	const char *p = s;
	int bol = 1;

	while (*p) {
		if (bol && c_text) {
			const char *q = p + strspn(p, " \t");

			if (*q == '#') {
				p = q + strcspn(q, "\n");
				continue;
			}
		}
		bol = 0;
		if (*p == '\n') {
			bol = 1, p++;
		} else if (c_text && p[0] == '/' && p[1] == '/') {
			p += strcspn(p, "\n");
		} else if (c_text && p[0] == '/' && p[1] == '*') {
			const char *q = strstr(p + 2, "*/");

			p = q ? q + 2 : p + strlen(p);
		} else if (c_text && (*p == '"' || *p == '\'')) {
			char qc = *p++;

			while (*p && *p != qc && *p != '\n')
				p += p[0] == '\\' && p[1] ? 2 : 1;
			if (*p == qc)
				p++;
		} else if ((*p >= '0' && *p <= '9') || ((*p == '.' || (*p == '-' && p[1] == '>')) && c_text)) {
			const char *q = p + (*p == '-' ? 2 : 1);

			/* a number (digits, letters of suffixes and exponents, '.'), or the member
			 * after '.' / "->" */
			while (*q == ' ')
				q++;
			while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			       *q == '_' || *q == '.')
				q++;
			p = q;
		} else if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
			size_t n = 1;
			char key[160];

			while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') || p[n] == '_' ||
			       (p[n] >= '0' && p[n] <= '9'))
				n++;
			snprintf(key, sizeof key, "\n%.*s\n", (int)(n < 150 ? n : 150), p);
			if (!strstr(buf_str(set), key))
				buf_puts(set, key + 1), buf_putc(set, '\n');
			p += n;
		} else {
			p++;
		}
	}
}

static const struct {
	tilec_target target;
	const char *arch;
} name_archs[] = {
	{TILEC_TARGET_CUDA, "sm_80"}, {TILEC_TARGET_CUDA, "sm_90a"}, {TILEC_TARGET_HIP, "gfx90a"},
	{TILEC_TARGET_HIP, "gfx942"}, {TILEC_TARGET_HIP, "gfx1100"},
};

/*
 * Every identifier of the emitted code (CUDA and HIP, every arch) of every sample and test
 * kernel is a name of the program's IR (a buffer, variable, parameter or kernel: as the IR
 * dump before the emission prints them; such a name the emitter keeps is the user's) or one that
 * no user name can become (emit_cname changes every name that it could be): the generated
 * locals, C words, helpers and built-ins. A generated local that a user name can spell
 * shadows it (generated_names.tile: a pipeline variable k read the operands from the wrong
 * stage on sm_80). Run on the emitted code of the whole corpus, so a new generated name is
 * found as soon as a program emits it.
 */
START_TEST(generated_names)
{
	static const char *const pats[] = {"samples/*.tile", "test/cpu/*.tile", "test/layout/*.tile",
					   "test/control/*.tile"};
	Buf bad;
	size_t pi, fi, ai;
	int nemit = 0;
	Arena a;

	buf_init(&bad);
	arena_init(&a);
	for (pi = 0; pi < countof(pats); pi++) {
		glob_t g;

		if (glob(pats[pi], 0, NULL, &g) != 0)
			continue;
		for (fi = 0; fi < g.gl_pathc; fi++) {
			size_t len;
			char *src = test_readfile(g.gl_pathv[fi], &len);

			ck_assert_ptr_nonnull(src);
			for (ai = 0; ai < countof(name_archs); ai++) {
				tilec_options o;
				tilec_result r;
				Buf irn, cn;
				const char *p;

				tilec_options_init(&o);
				o.target = name_archs[ai].target;
				o.arch = name_archs[ai].arch;
				o.dump = TILEC_DUMP_CUDA;
				o.filename = g.gl_pathv[fi];
				/* the IR the emitter is given: after the last pass before it */
				o.print_after = "plan-shared-memory";
				if (tilec_compile(src, len, &o, &r) != TILEC_OK) {
					tilec_result_free(&r); /* refused or an error corpus file */
					continue;
				}
				nemit++;
				buf_init(&irn);
				buf_init(&cn);
				buf_putc(&irn, '\n');
				buf_putc(&cn, '\n');
				idents(r.log, &irn, 0);
				idents(r.output, &cn, 1);
				for (p = buf_str(&cn) + 1; *p; p += strcspn(p, "\n") + 1) {
					char key[170], name[160];

					snprintf(name, sizeof name, "%.*s", (int)strcspn(p, "\n"), p);
					snprintf(key, sizeof key, "\n%s\n", name);
					if (!strstr(buf_str(&irn), key) && !strcmp(emit_cname(&a, name), name) &&
					    bad.len < 1200)
						buf_printf(&bad, "  '%s' in %s (%s)\n", name, g.gl_pathv[fi],
							   name_archs[ai].arch);
				}
				buf_free(&irn);
				buf_free(&cn);
				tilec_result_free(&r);
			}
			free(src);
		}
		globfree(&g);
	}
	ck_assert_msg(nemit > 100, "only %d programs emitted", nemit);
	ck_assert_msg(bad.len == 0, "names of the emitted code that a user name can spell (add them to "
		      "reserved[] in gen/emit/emit_cuda.c):\n%s", buf_str(&bad));
	buf_free(&bad);
	arena_free(&a);
}
END_TEST

static void
setup(void)
{
	tilec_jit_options o;
	char *err = NULL;

	if (glob("samples/*.tile", 0, NULL, &samples) != 0)
		samples.gl_pathc = 0;
	memset(&o, 0, sizeof o);
	o.no_disk_cache = 1;
	if (tilec_jit_create(&jit, &o, &err) != TILEC_OK)
		jit = NULL;
	free(err);
}


/*
 * The fast paths of the lowering and shared-memory planning (vector runs proved from
 * digits, holder tables, ownership checks and reduce plans by the compiled evaluator, their
 * memos, the swizzle search's quick rejections) against the reference walks they replace
 * (lw_reference_walks, smem_reference_walks, cute_reference_search: enumeration,
 * iexpr_eval per point, every candidate converted), on the whole corpus for CUDA and HIP: the
 * output and diagnostics must be byte-identical, refusals included.
 */
static char *
compile_with(const char *path, const char *src, size_t len, tilec_target tg, const char *arch, int ref)
{
	tilec_options o;
	tilec_result r;
	size_t n;
	char *out;

	tilec_options_init(&o);
	o.target = tg;
	o.arch = arch;
	o.dump = TILEC_DUMP_CUDA;
	o.filename = path;
	lw_reference_walks = smem_reference_walks = cute_reference_search = ref;
	tilec_compile(src, len, &o, &r);
	lw_reference_walks = smem_reference_walks = cute_reference_search = 0;
	n = strlen(r.output) + strlen(r.diagnostics) + 32;
	out = malloc(n);
	snprintf(out, n, "%d\n%s\n--\n%s", (int)r.status, r.output, r.diagnostics);
	tilec_result_free(&r);
	return out;
}

START_TEST(fast_paths_match_reference)
{
	static const char *const pats[] = {"samples/*.tile", "test/cpu/*.tile", "test/layout/*.tile",
					   "test/control/*.tile"};
	static const struct {
		tilec_target tg;
		const char *arch;
	} archs[] = {{TILEC_TARGET_CUDA, "sm_80"}, {TILEC_TARGET_CUDA, "sm_90a"}, {TILEC_TARGET_HIP, "gfx90a"}};
	size_t pi, fi, ai;
	int ncode = 0, nfile = 0;

	for (pi = 0; pi < countof(pats); pi++) {
		glob_t g;

		if (glob(pats[pi], 0, NULL, &g) != 0)
			continue;
		for (fi = 0; fi < g.gl_pathc; fi++) {
			size_t len;
			char *src = test_readfile(g.gl_pathv[fi], &len);

			ck_assert_ptr_nonnull(src);
			nfile++;
			for (ai = 0; ai < countof(archs); ai++) {
				char *fast = compile_with(g.gl_pathv[fi], src, len, archs[ai].tg, archs[ai].arch, 0);
				char *ref = compile_with(g.gl_pathv[fi], src, len, archs[ai].tg, archs[ai].arch, 1);

				ck_assert_msg(!strcmp(fast, ref), "%s (%s): the fast paths and the reference walks "
					      "differ", g.gl_pathv[fi], archs[ai].arch);
				ncode += fast[0] == '0';
				free(fast);
				free(ref);
			}
			free(src);
		}
		globfree(&g);
	}
	/* the corpus is there and most of it lowers */
	ck_assert_int_ge(nfile, 60);
	ck_assert_int_ge(ncode, 120);
}
END_TEST

/*
 * lw_fragvec and lw_fragrun (runs proved from the coordinates' digits, refuted by one
 * thread, else enumerated) against lw_fragvec_ref and lw_fragrun_ref (enumeration) on a
 * table of fragments: the MMA
 * operands and accumulators of every target, block fragments of several shapes and warp
 * counts, and thread maps written as expressions (mixed-radix, swizzled, replicated).
 */
START_TEST(fragvec_matches_reference)
{
	static const char *const threads[] = {
		"_j // 4 + _i * 8", "_j // 8 + _i % 4 * 16", "(_j // 2) % 32 + _i * 32",
		"_j % 4 + _i * 4", "(_j // 4) ^ (_i % 8)", "_i % 8 * 4 + (_j // 2) % 4",
		"_j // 16 + _i // 2 * 8", "(_i * 64 + _j) // 8 % 128", "((_j // 8) ^ (_i % 4)) + _i // 4 * 16",
		"_i + _j // 32 * 16", "_j % 2 + _i % 64 * 2", "(_j // 4 + _i * 16) % 64 + _rep * 64",
		"(_j % 8) + _i % 4 * 8", "_j // 2 % 8 + _i % 8 * 8 + _rep * 64",
	};
	static const int64_t shapes[][2] = {{16, 64}, {32, 32}, {64, 16}, {8, 128}, {128, 8}, {64, 64}};
	static const int vs[] = {16, 8, 4, 2};
	Arena a;
	Err err = {0};
	int nfr = 0, nwide = 0, i, j, k, op;

	arena_init(&a);
	/* expression thread maps over 2-D tiles */
	for (i = 0; i < (int)countof(threads); i++)
		for (j = 0; j < (int)countof(shapes); j++)
			for (k = 1; k <= 2; k++) {
				Fragment *F = frag_parse(&a, shapes[j], 2, threads[i], k, NULL, 0, &err);
				Layout *inv;
				int vi;

				if (!F || F->nout != 1 || !(inv = layout_inverse(&a, F, 0, &err)))
					continue;
				for (vi = 0; vi < (int)countof(vs); vi++) {
					int fast = lw_fragvec(F, inv->fwd, F->out_shape[0], vs[vi]);
					int ref = lw_fragvec_ref(F, inv->fwd, F->out_shape[0], vs[vi]);

					int dim;

					ck_assert_msg(fast == ref, "thread %s over [%lld, %lld] rep %d, max %d: %d vs %d",
						      threads[i], (long long)shapes[j][0], (long long)shapes[j][1], k,
						      vs[vi], fast, ref);
					nwide += ref > 1;
					for (dim = 0; dim < 2; dim++) {
						fast = lw_fragrun(F, inv->fwd, F->out_shape[0], dim, vs[vi]);
						ref = lw_fragrun_ref(F, inv->fwd, F->out_shape[0], dim, vs[vi]);
						ck_assert_msg(fast == ref, "thread %s over [%lld, %lld] rep %d, dim %d, "
							      "max %d: %d vs %d", threads[i], (long long)shapes[j][0],
							      (long long)shapes[j][1], k, dim, vs[vi], fast, ref);
						nwide += ref > 1;
					}
				}
				nfr++;
			}
	/* MMA fragments of the targets */
	for (op = 0; op < 3; op++) {
		static const int64_t blocks[][4] = {{16, 16, 1, 1}, {32, 32, 2, 2}, {64, 64, 2, 2}, {128, 128, 2, 2},
						    {64, 128, 1, 4}, {128, 64, 4, 1}, {64, 64, 4, 1}};
		Fragment *fs[16];
		int nf = 0, b;

		for (b = 0; b < (int)countof(blocks); b++) {
			Fragment *f = mma_block_fragment(&a, (MmaOperand)op, blocks[b][0], blocks[b][1],
							 op == 2 ? 32 : 16, (int)blocks[b][2],
							 (int)blocks[b][3], &err);

			if (f)
				fs[nf++] = f;
		}
		if ((fs[nf] = mma_sync_fragment(&a, (MmaOperand)op, 16, &err)))
			nf++;
		if ((fs[nf] = mfma_fragment(&a, (MmaOperand)op, &err)))
			nf++;
		if ((fs[nf] = wmma_fragment(&a, (MmaOperand)op, &err)))
			nf++;
		for (b = 0; b < nf; b++) {
			Layout *inv = fs[b]->nout == 1 ? layout_inverse(&a, fs[b], 0, &err) : NULL;
			int vi;

			if (!inv)
				continue;
			for (vi = 0; vi < (int)countof(vs); vi++) {
				int fast = lw_fragvec(fs[b], inv->fwd, fs[b]->out_shape[0], vs[vi]);
				int ref = lw_fragvec_ref(fs[b], inv->fwd, fs[b]->out_shape[0], vs[vi]);

				ck_assert_msg(fast == ref, "mma operand %d fragment %d, max %d: %d vs %d", op, b,
					      vs[vi], fast, ref);
				nwide += ref > 1;
			}
			nfr++;
		}
	}
	ck_assert_int_ge(nfr, 60);
	ck_assert_int_ge(nwide, 20);
	arena_free(&a);
}
END_TEST

Suite *
suite_emit_cuda(void)
{
	Suite *s = suite_create("emit_cuda");
	TCase *tc = tcase_create("core");

	setup();
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, sample_golden, 0, (int)samples.gl_pathc);
	tcase_add_loop_test(tc, sample_nvrtc, 0, countof(compiles));
	tcase_add_loop_test(tc, sm90a_golden, 0, countof(sm90a_goldens));
	tcase_add_loop_test(tc, fp8_promotion, 0, countof(promo_progs));
	tcase_add_loop_test(tc, pipeline_fences, 0, countof(pipe_fences));
	tcase_add_loop_test(tc, ws_nvrtc, 0, countof(ws_samples));
	tcase_add_loop_test(tc, persist_nvrtc, 0, countof(persist_nv));
	tcase_add_loop_test(tc, guard_table, 0, countof(guards));
	tcase_add_loop_test(tc, guard_table_cpu, 0, countof(guards));
	tcase_add_test(tc, inferred_layouts);
	tcase_add_test(tc, local_copy_layouts);
	tcase_add_test(tc, replicated_store);
	tcase_add_test(tc, reduce_refused);
	tcase_add_test(tc, emit_errors);
	tcase_add_test(tc, atomic_emit);
	tcase_add_test(tc, strided_emit);
	tcase_add_test(tc, strided_flags_full);
	tcase_add_test(tc, generated_names);
	tcase_add_loop_test(tc, reduce_scratch_smem, 0, countof(scratch_archs));
	tcase_add_test(tc, fast_paths_match_reference);
	tcase_add_loop_test(tc, epilogue_stage, 0, countof(epi_progs));
	tcase_add_loop_test(tc, rotate_plan, 0, countof(rot_progs));
	tcase_add_loop_test(tc, shared_default_layout, 0, countof(shdef));
	tcase_add_test(tc, fragvec_matches_reference);
	suite_add_tcase(s, tc);
	return s;
}
