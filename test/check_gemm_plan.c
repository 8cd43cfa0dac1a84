/*
 * check_gemm_plan.c: gemm_plan over a table of kernels and targets: the
 * instruction chosen (and why not wgmma), the warp partition, the shared
 * swizzles, the accumulator checked element by element against the PTX ISA
 * register tables (mma.sync C and wgmma D fragments), and the errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "gemm_plan.h"
#include "sema.h"
#include "tests.h"

/* parse and check src; the first gemm statement of the first kernel (searched in loop bodies) */
static const IrStmt *
findgemm(const IrStmt *s)
{
	const IrStmt *g;

	for (; s; s = s->next) {
		if (s->kind == S_GEMM)
			return s;
		if (s->kind == S_PIPELINE && (g = findgemm(s->u.pipe.body)))
			return g;
		if (s->kind == S_FOR && (g = findgemm(s->u.loop.body)))
			return g;
	}
	return NULL;
}

static IrProgram *
compile(Arena *a, const char *src)
{
	Diags d;
	Node *top;
	IrProgram *p;
	Buf b;

	diags_init(&d, a);
	top = parse_program(a, &d, src, strlen(src), "t.tile");
	p = d.nerr ? NULL : sema_program(a, &d, top, NULL, 0, "t.tile");
	if (d.nerr) {
		buf_init(&b);
		diag_format(&d, &b, src, strlen(src), 0);
		fprintf(stderr, "%s", buf_str(&b));
		buf_free(&b);
		return NULL;
	}
	return p;
}

#define GEMM_SRC(T, BM, BN, BK, THR, TB) \
	"kernel g(A: " T "[M, K], B: " T "[K, N], C: f32[M, N]) grid(1) threads(" THR ") {\n" \
	"  shared As: " T "[" BM ", " BK "];\n" \
	"  shared Bs: " T TB ";\n" \
	"  local acc: f32[" BM ", " BN "];\n" \
	"  clear(acc);\n" \
	"  for ko in pipeline(cdiv(K, " BK "), stages = 3) {\n" \
	"    copy(A[0, ko * " BK "], As);\n"

#define GEMM_NT(T, BM, BN, BK, THR) \
	GEMM_SRC(T, BM, BN, BK, THR, "[" BK ", " BN "]") \
	"    copy(B[ko * " BK ", 0], Bs);\n" \
	"    gemm(As, Bs, acc);\n  }\n  copy(acc, C[0, 0]);\n}\n"

static const struct {
	const char *src, *arch;
	GemmInstr instr;
	int m_warp, n_warp, inst_n, rep_m, rep_n;
	SwizzleMode swa, swb;
	int why; /* why_not_wgmma set */
} cases[] = {
	{GEMM_NT("f16", "128", "128", "32", "128"), "sm_80", GEMM_MMA_SYNC, 2, 2, 8, 4, 8, SWZ_64B,
	 SWZ_128B, 0},
	{GEMM_NT("f16", "128", "128", "32", "128"), "sm_90", GEMM_MMA_SYNC, 2, 2, 8, 4, 8, SWZ_64B,
	 SWZ_128B, 0},
	{GEMM_NT("f16", "128", "128", "32", "128"), "sm_90a", GEMM_WGMMA, 4, 1, 128, 2, 1, SWZ_64B,
	 SWZ_128B, 0},
	{GEMM_NT("bf16", "128", "256", "64", "256"), "sm_90a", GEMM_WGMMA, 8, 1, 256, 1, 1, SWZ_128B,
	 SWZ_128B, 0},
	{GEMM_NT("f16", "64", "512", "64", "256"), "sm_90a", GEMM_WGMMA, 4, 2, 256, 1, 1, SWZ_128B,
	 SWZ_128B, 0},
	{GEMM_NT("f16", "128", "128", "32", "64"), "sm_90a", GEMM_MMA_SYNC, 1, 2, 8, 8, 8, SWZ_64B,
	 SWZ_128B, 1},
	{GEMM_NT("f16", "32", "64", "32", "128"), "sm_90a", GEMM_MMA_SYNC, 2, 2, 8, 1, 4, SWZ_64B,
	 SWZ_128B, 1},
	{GEMM_NT("bf16", "64", "64", "16", "128"), "sm_80", GEMM_MMA_SYNC, 2, 2, 8, 2, 4, SWZ_32B,
	 SWZ_128B, 0},
	/* an N-major B of 32 columns gets the 64B swizzle, which the wgmma lowering cannot read
	 * (it needs 128B): mma.sync, with the reason (test/cpu/pipeline_hazard.tile was refused) */
	{GEMM_NT("f16", "128", "32", "16", "128"), "sm_90a", GEMM_MMA_SYNC, 2, 2, 8, 4, 2, SWZ_32B,
	 SWZ_64B, 1},
};

/* PTX: mma.sync C/D fragment: c_r of lane l at (l/4 + 8*(r/2), 2*(l%4) + r%2) */
static void
check_mma_acc(const GemmPlan *p)
{
	int64_t x[3], y[3], i, j, wrt = p->M / p->m_warp, wct = p->N / p->n_warp;
	Err e = {0};

	for (i = 0; i < p->M; i++)
		for (j = 0; j < p->N; j++) {
			int64_t t, s, w, l, wm, wn, li, lj, r, tile;

			x[0] = i, x[1] = j, x[2] = 0;
			ck_assert_int_eq(layout_eval(p->acc, x, y, &e), 0);
			s = y[0], t = y[1];
			w = t / 32, l = t % 32;
			wm = w % p->m_warp, wn = w / p->m_warp;
			r = s % 4, tile = s / 4;
			ck_assert_int_lt(t, p->warps * 32);
			/* row, col inside the warp's block from the PTX table */
			li = l / 4 + 8 * (r / 2);
			lj = 2 * (l % 4) + r % 2;
			ck_assert_int_eq(i / wrt, wm);
			ck_assert_int_eq(j / wct, wn);
			ck_assert_int_eq((i % wrt) % 16, li);
			ck_assert_int_eq((j % wct) % 8, lj);
			(void)tile;
		}
}

/* PTX: wgmma D fragment: thread t of the warpgroup, warp w = t/32, lane l:
 * d_r at row 16w + l/4 + 8*((r/2)%2), col 8*(r/4) + 2*(l%4) + r%2 */
static void
check_wgmma_acc(const GemmPlan *p)
{
	int64_t x[3], y[3], i, j, per = p->inst_n / 2;
	Err e = {0};

	ck_assert_int_eq(p->acc->nthreads, p->warps * 32);
	for (i = 0; i < p->M; i++)
		for (j = 0; j < p->N; j++) {
			int64_t t, s, g, gm, gn, tt, w, l, ins, r, rm, rn, row, col;

			x[0] = i, x[1] = j, x[2] = 0;
			ck_assert_int_eq(layout_eval(p->acc, x, y, &e), 0);
			s = y[0], t = y[1];
			g = t / 128, tt = t % 128;
			gm = g % p->wg_m, gn = g / p->wg_m;
			w = tt / 32, l = tt % 32;
			ins = s / per, r = s % per;
			rm = ins / p->rep_n, rn = ins % p->rep_n;
			ck_assert_int_lt(rm, p->rep_m);
			row = gm * p->wg_rows + rm * 64 + 16 * w + l / 4 + 8 * ((r / 2) % 2);
			col = gn * p->wg_cols + rn * p->inst_n + 8 * (r / 4) + 2 * (l % 4) + r % 2;
			ck_assert_int_eq(row, i);
			ck_assert_int_eq(col, j);
		}
}

START_TEST(plan_table)
{
	Arena a;
	IrProgram *prog;
	const IrStmt *g;
	const Target *t;
	GemmPlan p;
	Err e = {0};
	Buf b;

	arena_init(&a);
	prog = compile(&a, cases[_i].src);
	ck_assert_ptr_nonnull(prog);
	g = findgemm(prog->kernels[0].body);
	ck_assert_ptr_nonnull(g);
	t = target_lookup(TGT_CUDA, cases[_i].arch, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(gemm_plan(&a, t, &prog->kernels[0], g, &p, &e) == 0, "%s", e.msg);
	buf_init(&b);
	gemm_plan_dump(&b, &p);
	ck_assert_msg(p.instr == cases[_i].instr, "case %d: %s", _i, buf_str(&b));
	ck_assert_int_eq(p.m_warp, cases[_i].m_warp);
	ck_assert_int_eq(p.n_warp, cases[_i].n_warp);
	ck_assert_int_eq(p.inst_n, cases[_i].inst_n);
	ck_assert_int_eq(p.rep_m, cases[_i].rep_m);
	ck_assert_int_eq(p.rep_n, cases[_i].rep_n);
	ck_assert_int_eq(p.m_warp * p.n_warp, p.warps);
	ck_assert_int_eq(p.smem_a.mode, cases[_i].swa);
	ck_assert_int_eq(p.smem_b.mode, cases[_i].swb);
	ck_assert_int_eq(p.why_not_wgmma != NULL, cases[_i].why);
	ck_assert_int_eq(p.a_k_inner, 1);
	ck_assert_int_eq(p.b_k_inner, 0);
	ck_assert_int_eq(p.ksteps * p.inst_k, p.K);
	ck_assert_int_eq(p.acc->nthreads, p.warps * 32);
	ck_assert_int_eq(layout_check_injective(p.acc, &e), 0);
	if (p.instr == GEMM_WGMMA) {
		ck_assert_ptr_null(p.frag_a);
		check_wgmma_acc(&p);
	} else {
		ck_assert_ptr_nonnull(p.frag_a);
		ck_assert_ptr_nonnull(p.frag_b);
		check_mma_acc(&p);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* AMD plans: MFMA (wave64) on gfx90a/gfx942, WMMA (wave32) on gfx1100 */
static const struct {
	const char *src, *arch;
	GemmInstr instr;
	int m_warp, n_warp, rep_m, rep_n;
} amd_cases[] = {
	{GEMM_NT("f16", "128", "128", "32", "128"), "gfx90a", GEMM_MFMA, 2, 1, 4, 8},
	{GEMM_NT("bf16", "128", "128", "32", "256"), "gfx942", GEMM_MFMA, 2, 2, 4, 4},
	{GEMM_NT("f16", "64", "32", "16", "64"), "gfx942", GEMM_MFMA, 1, 1, 4, 2},
	{GEMM_NT("f16", "16", "16", "16", "64"), "gfx90a", GEMM_MFMA, 1, 1, 1, 1},
	{GEMM_NT("f16", "128", "128", "32", "128"), "gfx1100", GEMM_WMMA, 2, 2, 4, 4},
	{GEMM_NT("bf16", "64", "128", "32", "256"), "gfx1100", GEMM_WMMA, 4, 2, 1, 4},
	{GEMM_NT("f16", "16", "16", "16", "32"), "gfx1100", GEMM_WMMA, 1, 1, 1, 1},
};

/*
 * The AMD ISA tables, element by element (CDNA3 ISA "Matrix fused multiply
 * add" / RDNA3 ISA "WMMA" register layouts), for lane l and register element r:
 *   MFMA 16x16x16 f16/bf16: A[l%16][4(l/16)+r], B[4(l/16)+r][l%16], D[4(l/16)+r][l%16]
 *   WMMA 16x16x16 f16/bf16 w32: A[l%16][r] and B[r][l%16] on both half-waves,
 *   D (f32) [2r + l/16][l%16]
 * lifted to the block by the plan: warp w = (wm, wn) wm fastest, instruction
 * (mi, ni) of rep_m x rep_n, registers instruction-major (k-step major for A, B).
 */
static void
check_amd(const GemmPlan *p)
{
	int mfma = p->instr == GEMM_MFMA, W = mfma ? 64 : 32, nc = mfma ? 4 : 8, nv = mfma ? 4 : 16;
	int64_t x[3], y[3], i, j, rep, wrt = p->M / p->m_warp, wct = p->N / p->n_warp;
	Err e = {0};

	ck_assert_int_eq(p->acc->nthreads, p->warps * W);
	for (i = 0; i < p->M; i++)
		for (j = 0; j < p->N; j++) {
			int64_t s, t, w, l, r, ins;

			x[0] = i, x[1] = j, x[2] = 0;
			ck_assert_int_eq(layout_eval(p->acc, x, y, &e), 0);
			s = y[0], t = y[1], w = t / W, l = t % W, ins = s / nc, r = s % nc;
			ck_assert_int_lt(ins, p->rep_m * p->rep_n);
			ck_assert_int_eq(w % p->m_warp * wrt + ins / p->rep_n * 16 +
					 (mfma ? 4 * (l / 16) + r : 2 * r + l / 16), i);
			ck_assert_int_eq(w / p->m_warp * wct + ins % p->rep_n * 16 + l % 16, j);
		}
	/* A [M, K]: replicated over the N-warps (and the half-waves of WMMA) */
	for (i = 0; i < p->M; i++)
		for (j = 0; j < p->K; j++)
			for (rep = 0; rep < p->frag_a->rep; rep++) {
				int64_t s, t, w, l, ks, mi, v;

				x[0] = i, x[1] = j, x[2] = rep;
				ck_assert_int_eq(layout_eval(p->frag_a, x, y, &e), 0);
				s = y[0], t = y[1], w = t / W, l = t % W;
				ks = s / (nv * p->rep_m), mi = s / nv % p->rep_m, v = s % nv;
				ck_assert_int_eq(w % p->m_warp * wrt + mi * 16 + l % 16, i);
				ck_assert_int_eq(ks * 16 + (mfma ? 4 * (l / 16) + v : v), j);
				ck_assert_int_eq(w / p->m_warp, mfma ? rep : rep / 2);
				if (!mfma)
					ck_assert_int_eq(l / 16, rep % 2);
			}
	/* B [K, N]: replicated over the M-warps */
	for (i = 0; i < p->K; i++)
		for (j = 0; j < p->N; j++)
			for (rep = 0; rep < p->frag_b->rep; rep++) {
				int64_t s, t, w, l, ks, ni, v;

				x[0] = i, x[1] = j, x[2] = rep;
				ck_assert_int_eq(layout_eval(p->frag_b, x, y, &e), 0);
				s = y[0], t = y[1], w = t / W, l = t % W;
				ks = s / (nv * p->rep_n), ni = s / nv % p->rep_n, v = s % nv;
				ck_assert_int_eq(w / p->m_warp * wct + ni * 16 + l % 16, j);
				ck_assert_int_eq(ks * 16 + (mfma ? 4 * (l / 16) + v : v), i);
				ck_assert_int_eq(w % p->m_warp, mfma ? rep : rep / 2);
				if (!mfma)
					ck_assert_int_eq(l / 16, rep % 2);
			}
}

START_TEST(amd_plan)
{
	Arena a;
	IrProgram *prog;
	const Target *t;
	GemmPlan p;
	Err e = {0};
	Buf b;

	arena_init(&a);
	prog = compile(&a, amd_cases[_i].src);
	ck_assert_ptr_nonnull(prog);
	t = target_lookup(TGT_HIP, amd_cases[_i].arch, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(gemm_plan(&a, t, &prog->kernels[0], findgemm(prog->kernels[0].body), &p, &e) == 0,
		      "%s", e.msg);
	buf_init(&b);
	gemm_plan_dump(&b, &p);
	ck_assert_msg(p.instr == amd_cases[_i].instr, "case %d: %s", _i, buf_str(&b));
	ck_assert_int_eq(p.inst_m * p.inst_n * p.inst_k, 16 * 16 * 16);
	ck_assert_int_eq(p.m_warp, amd_cases[_i].m_warp);
	ck_assert_int_eq(p.n_warp, amd_cases[_i].n_warp);
	ck_assert_int_eq(p.rep_m, amd_cases[_i].rep_m);
	ck_assert_int_eq(p.rep_n, amd_cases[_i].rep_n);
	ck_assert_int_eq(p.ksteps * 16, p.K);
	ck_assert_int_eq(layout_check_injective(p.acc, &e), 0);
	ck_assert_int_eq(layout_check_injective(p.frag_a, &e), 0);
	ck_assert_int_eq(layout_check_injective(p.frag_b, &e), 0);
	ck_assert_int_eq(p.a_shared && p.b_shared, 1);
	check_amd(&p);
	/* one warp, one instruction: the block fragments are the layout core's */
	if (p.rep_m * p.rep_n * p.warps * p.ksteps == 1) {
		Fragment *(*one)(Arena *, MmaOperand, Err *) = p.instr == GEMM_MFMA ? mfma_fragment
											  : wmma_fragment;

		ck_assert_int_eq(layout_equal(p.acc, one(&a, MMA_C, &e), &e), 1);
		ck_assert_int_eq(layout_equal(p.frag_a, one(&a, MMA_A, &e), &e), 1);
		ck_assert_int_eq(layout_equal(p.frag_b, one(&a, MMA_B, &e), &e), 1);
	}
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* wgmma over one warpgroup and one instruction is exactly the layout core's accumulator */
START_TEST(wgmma_single)
{
	Arena a;
	IrProgram *prog;
	const Target *t;
	GemmPlan p;
	Err e = {0};
	Fragment *ref;

	arena_init(&a);
	prog = compile(&a, GEMM_NT("f16", "64", "128", "64", "128"));
	ck_assert_ptr_nonnull(prog);
	t = target_lookup(TGT_CUDA, "sm_90a", &e);
	ck_assert_int_eq(gemm_plan(&a, t, &prog->kernels[0], findgemm(prog->kernels[0].body), &p, &e), 0);
	ck_assert_int_eq(p.instr, GEMM_WGMMA);
	ref = wgmma_acc_fragment(&a, 128, &e);
	ck_assert_ptr_nonnull(ref);
	ck_assert_int_eq(layout_equal(p.acc, ref, &e), 1);
	ck_assert_int_eq(swizzle_alignment(p.smem_a.mode), 1024);
	arena_free(&a);
}
END_TEST

/* trans_b: B stored [N, K], K contiguous */
START_TEST(trans_b)
{
	Arena a;
	IrProgram *prog;
	const Target *t;
	GemmPlan p;
	Err e = {0};
	static const char src[] =
		GEMM_SRC("f16", "128", "128", "64", "128", "[128, 64]")
		"    copy(B[0, ko * 64], Bs);\n"
		"    gemm(As, Bs, acc, trans_b = true);\n  }\n  copy(acc, C[0, 0]);\n}\n";

	arena_init(&a);
	prog = compile(&a, src);
	ck_assert_ptr_nonnull(prog);
	t = target_lookup(TGT_CUDA, "sm_80", &e);
	ck_assert_msg(gemm_plan(&a, t, &prog->kernels[0], findgemm(prog->kernels[0].body), &p, &e) == 0,
		      "%s", e.msg);
	ck_assert_int_eq(p.trans_b, 1);
	ck_assert_int_eq(p.N, 128);
	ck_assert_int_eq(p.K, 64);
	ck_assert_int_eq(p.b_k_inner, 1);
	ck_assert_int_eq(p.smem_b.mode, SWZ_128B);
	arena_free(&a);
}
END_TEST

/* a gemm of type T into ACC with A [M, K] or [K, M] (ta), B [K, N] or [N, K] (tb), from shared memory */
static void
ordsrc(char *out, size_t n, const char *T, const char *acc, int ta, int tb, int bm, int bn, int bk, int thr)
{
	snprintf(out, n,
		 "kernel g(A: %s[%s], B: %s[%s], C: %s[M, N]) grid(1) threads(%d) {\n"
		 "  shared As: %s[%d, %d];\n  shared Bs: %s[%d, %d];\n  local acc: %s[%d, %d];\n"
		 "  clear(acc);\n  for ko in pipeline(cdiv(K, %d), stages = 2) {\n"
		 "    copy(A[%s], As);\n    copy(B[%s], Bs);\n"
		 "    gemm(As, Bs, acc, trans_a = %s, trans_b = %s);\n  }\n  copy(acc, C[0, 0]);\n}\n",
		 T, ta ? "K, M" : "M, K", T, tb ? "N, K" : "K, N", acc, thr, T, ta ? bk : bm, ta ? bm : bk, T,
		 tb ? bn : bk, tb ? bk : bn, acc, bm, bn, bk, ta ? "ko * 0, 0" : "0, ko * 0", tb ? "0, ko * 0" : "ko * 0, 0",
		 ta ? "true" : "false", tb ? "true" : "false");
}

/* operand orders and types: the instruction, its k extent, which operand dim is contiguous
 * in shared memory, the swizzles, why not wgmma (a text of it), or the plan's error */
static const struct {
	const char *T, *acc;
	int ta, tb, bm, bn, bk, thr;
	const char *arch;
	GemmInstr instr;
	int inst_n, inst_k;
	SwizzleMode swa, swb;
	const char *why, *err;
} orders[] = {
	/* f16: all four orders on wgmma; an M-major A takes the 128B swizzle (64 columns) */
	{"f16", "f32", 0, 0, 128, 128, 32, 128, "sm_90a", GEMM_WGMMA, 128, 16, SWZ_64B, SWZ_128B, NULL, NULL},
	{"f16", "f32", 1, 0, 128, 128, 32, 128, "sm_90a", GEMM_WGMMA, 128, 16, SWZ_128B, SWZ_128B, NULL, NULL},
	{"f16", "f32", 0, 1, 128, 128, 32, 128, "sm_90a", GEMM_WGMMA, 128, 16, SWZ_64B, SWZ_64B, NULL, NULL},
	{"bf16", "f32", 1, 1, 128, 128, 64, 128, "sm_90a", GEMM_WGMMA, 128, 16, SWZ_128B, SWZ_128B, NULL, NULL},
	/* an M-major A of 32 columns: 64B swizzle; mma.sync (M is not a multiple of 64) */
	{"f16", "f32", 1, 0, 32, 128, 32, 128, "sm_90a", GEMM_MMA_SYNC, 8, 16, SWZ_64B, SWZ_128B,
	 "M is not a multiple of 64", NULL},
	/* mma.sync: ldmatrix.trans reads a [K, M] A */
	{"f16", "f32", 1, 0, 128, 128, 32, 128, "sm_80", GEMM_MMA_SYNC, 8, 16, SWZ_128B, SWZ_128B, NULL, NULL},
	{"f16", "f32", 1, 1, 128, 128, 32, 128, "sm_80", GEMM_MMA_SYNC, 8, 16, SWZ_128B, SWZ_64B, NULL, NULL},
	/* 8-bit: wgmma m64nNk32 only with A [M, K] and B [N, K]; else mma.sync m16n8k32 (byte loads
	 * for the operand that is not K-contiguous, which gets a padded layout) */
	{"i8", "i32", 0, 1, 128, 128, 64, 128, "sm_90a", GEMM_WGMMA, 128, 32, SWZ_64B, SWZ_64B, NULL, NULL},
	{"u8", "i32", 0, 1, 64, 256, 128, 128, "sm_90a", GEMM_WGMMA, 256, 32, SWZ_128B, SWZ_128B, NULL, NULL},
	{"i8", "i32", 0, 0, 128, 128, 64, 128, "sm_90a", GEMM_MMA_SYNC, 8, 32, SWZ_64B, SWZ_NONE,
	 "8-bit operands are not both K-major", NULL},
	{"i8", "i32", 1, 1, 128, 128, 64, 128, "sm_90a", GEMM_MMA_SYNC, 8, 32, SWZ_NONE, SWZ_64B,
	 "8-bit operands are not both K-major", NULL},
	{"i8", "i32", 0, 1, 128, 128, 32, 128, "sm_80", GEMM_MMA_SYNC, 8, 32, SWZ_32B, SWZ_32B, NULL, NULL},
	/* integer wgmma has N = 8, 16, 24 and multiples of 16: a 40-wide tile takes n8; fp8 n40 */
	{"i8", "i32", 0, 1, 64, 40, 64, 128, "sm_90a", GEMM_WGMMA, 8, 32, SWZ_64B, SWZ_64B, NULL, NULL},
	{"fp8_e4m3", "f32", 0, 1, 64, 40, 64, 128, "sm_90a", GEMM_WGMMA, 40, 32, SWZ_64B, SWZ_64B, NULL, NULL},
	{"fp8_e5m2", "f32", 0, 1, 128, 128, 64, 128, "sm_90a", GEMM_WGMMA, 128, 32, SWZ_64B, SWZ_64B, NULL, NULL},
	{"fp8_e5m2", "f32", 1, 0, 128, 128, 64, 128, "sm_90", GEMM_MMA_SYNC, 8, 32, SWZ_NONE, SWZ_NONE, NULL, NULL},
	/* no fp8 MMA before sm_89 */
	{"fp8_e4m3", "f32", 0, 1, 128, 128, 64, 128, "sm_80", GEMM_MMA_SYNC, 0, 0, SWZ_NONE, SWZ_NONE, NULL,
	 "sm_80 has no MMA for fp8_e4m3 operands (mma.sync .e4m3/.e5m2 needs sm_89 or later"},
};

START_TEST(operand_orders)
{
	Arena a;
	IrProgram *prog;
	const Target *t;
	GemmPlan p;
	Err e = {0};
	char src[1024];
	Buf b;
	int r;

	ordsrc(src, sizeof src, orders[_i].T, orders[_i].acc, orders[_i].ta, orders[_i].tb, orders[_i].bm,
	       orders[_i].bn, orders[_i].bk, orders[_i].thr);
	arena_init(&a);
	prog = compile(&a, src);
	ck_assert_msg(prog != NULL, "%s", src);
	t = target_lookup(TGT_CUDA, orders[_i].arch, &e);
	ck_assert_ptr_nonnull(t);
	r = gemm_plan(&a, t, &prog->kernels[0], findgemm(prog->kernels[0].body), &p, &e);
	if (orders[_i].err) {
		ck_assert_int_eq(r, -1);
		ck_assert_msg(strstr(e.msg, orders[_i].err) != NULL, "case %d: got '%s'", _i, e.msg);
		arena_free(&a);
		return;
	}
	ck_assert_msg(r == 0, "case %d: %s", _i, e.msg);
	buf_init(&b);
	gemm_plan_dump(&b, &p);
	ck_assert_msg(p.instr == orders[_i].instr, "case %d: %s", _i, buf_str(&b));
	ck_assert_msg(p.inst_n == orders[_i].inst_n && p.inst_k == orders[_i].inst_k, "case %d: %s", _i, buf_str(&b));
	ck_assert_msg(p.smem_a.mode == orders[_i].swa && p.smem_b.mode == orders[_i].swb, "case %d: %s", _i,
		      buf_str(&b));
	ck_assert_int_eq(p.trans_a, orders[_i].ta);
	ck_assert_int_eq(p.trans_b, orders[_i].tb);
	ck_assert_int_eq(p.a_k_inner, !orders[_i].ta);
	ck_assert_int_eq(p.b_k_inner, orders[_i].tb);
	ck_assert_int_eq(p.ksteps * p.inst_k, p.K);
	if (orders[_i].why)
		ck_assert_msg(p.why_not_wgmma && strstr(p.why_not_wgmma, orders[_i].why), "case %d: %s", _i,
			      buf_str(&b));
	else
		ck_assert_msg(!p.why_not_wgmma, "case %d: %s", _i, buf_str(&b));
	if (p.instr == GEMM_WGMMA)
		check_wgmma_acc(&p);
	else
		check_mma_acc(&p);
	buf_free(&b);
	arena_free(&a);
}
END_TEST

/* an 8-bit A from registers: wgmma RS m64nNk32 on sm_90a (full_row, B [N, K]), whose register
 * fragment A is mma.sync's m16n8k32 A fragment of each warp's 16 rows (PTX: row 16 w + l / 4 +
 * 8 (q % 2), k 4 (l % 4) + j + 16 (q / 2) for byte j of register q, per k32 step); B [K, N] and
 * sm_80: mma.sync */
START_TEST(register_a_8bit)
{
	static const char *const srcs[2] = {
		"kernel g(A: i8[64, 64], B: i8[64, 64], C: i32[64, 64]) grid(1) threads(128) {\n"
		"  local a: i8[64, 64];\n  shared Bs: i8[64, 64];\n  local acc: i32[64, 64];\n"
		"  copy(A[0, 0], a);\n  copy(B[0, 0], Bs);\n  clear(acc);\n"
		"  gemm(a, Bs, acc, trans_b = true, policy = full_row);\n  copy(acc, C[0, 0]);\n}\n",
		"kernel g(A: fp8_e4m3[64, 64], B: fp8_e4m3[64, 64], C: f32[64, 64]) grid(1) threads(128) {\n"
		"  local a: fp8_e4m3[64, 64];\n  shared Bs: fp8_e4m3[64, 64];\n  local acc: f32[64, 64];\n"
		"  copy(A[0, 0], a);\n  copy(B[0, 0], Bs);\n  clear(acc);\n"
		"  gemm(a, Bs, acc, policy = full_row);\n  copy(acc, C[0, 0]);\n}\n"};
	Arena a;
	IrProgram *prog;
	GemmPlan p;
	Err e = {0};
	int64_t m, k, x[3], y[3];

	arena_init(&a);
	for (int i = 0; i < 2; i++) {
		const IrStmt *g;

		prog = compile(&a, srcs[i]);
		ck_assert_ptr_nonnull(prog);
		g = findgemm(prog->kernels[0].body);
		ck_assert_msg(gemm_plan(&a, target_lookup(TGT_CUDA, "sm_90a", &e), &prog->kernels[0], g, &p, &e) == 0,
			      "%s", e.msg);
		if (i) { /* B [K, N]: not both K-major */
			ck_assert_int_eq(p.instr, GEMM_MMA_SYNC);
			ck_assert_ptr_nonnull(strstr(p.why_not_wgmma, "not both K-major"));
			continue;
		}
		ck_assert_int_eq(p.instr, GEMM_WGMMA);
		ck_assert_int_eq(p.a_reg, 1);
		ck_assert_int_eq(p.inst_k, 32);
		ck_assert_int_eq(p.inst_n, 64);
		ck_assert_ptr_nonnull(p.frag_a);
		for (m = 0; m < 64; m++)
			for (k = 0; k < 64; k++) {
				int64_t t, q, j, l, w;

				x[0] = m, x[1] = k, x[2] = 0;
				ck_assert_int_eq(layout_eval(p.frag_a, x, y, &e), 0);
				t = y[1], w = t / 32, l = t % 32;
				q = y[0] % 16 / 4, j = y[0] % 4;
				ck_assert_int_eq(y[0] / 16, k / 32);
				ck_assert_int_eq(16 * w + l / 4 + 8 * (q % 2), m);
				ck_assert_int_eq(4 * (l % 4) + j + 16 * (q / 2), k % 32);
			}
		ck_assert_int_eq(gemm_plan(&a, target_lookup(TGT_CUDA, "sm_80", &e), &prog->kernels[0], g, &p, &e), 0);
		ck_assert_int_eq(p.instr, GEMM_MMA_SYNC);
		ck_assert_int_eq(p.inst_k, 32);
	}
	arena_free(&a);
}
END_TEST

static const struct {
	const char *src, *arch;
	int hip;
	const char *msg;
} errs[] = {
	{GEMM_NT("f32", "128", "128", "32", "128"), "gfx942", 1, "no MFMA for f32"},
	{GEMM_NT("f16", "128", "128", "24", "128"), "gfx90a", 1, "not a multiple of the mfma k extent 16"},
	{GEMM_NT("f16", "128", "128", "32", "384"), "gfx1100", 1, "no valid warp partition"},
	{GEMM_NT("f16", "128", "128", "32", "96"), "sm_80", 0, "no valid warp partition"},
	{GEMM_NT("f64", "64", "64", "16", "128"), "sm_80", 0, "no mma.sync for f64"},
};

START_TEST(plan_errors)
{
	Arena a;
	IrProgram *prog;
	const Target *t;
	GemmPlan p;
	Err e = {0};

	arena_init(&a);
	prog = compile(&a, errs[_i].src);
	ck_assert_ptr_nonnull(prog);
	t = target_lookup(errs[_i].hip ? TGT_HIP : TGT_CUDA, errs[_i].arch, &e);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(gemm_plan(&a, t, &prog->kernels[0], findgemm(prog->kernels[0].body), &p, &e), -1);
	ck_assert_msg(strstr(e.msg, errs[_i].msg) != NULL, "got '%s'", e.msg);
	/* null arguments */
	ck_assert_int_eq(gemm_plan(&a, t, &prog->kernels[0], NULL, &p, &e), -1);
	ck_assert_int_eq(gemm_plan(&a, t, NULL, NULL, NULL, NULL), -1);
	ck_assert_int_eq(gemm_plan(&a, t, &prog->kernels[0], prog->kernels[0].body, &p, &e), -1);
	arena_free(&a);
}
END_TEST

/*
 * FlashAttention's two gemms (test/cpu/flash_small.tile: S = Q K^T, then P V with P in
 * registers), policy = full_row: all warps along M in both; the first gemm's accumulator
 * and the second's A fragment put every element on the same thread, so P (computed
 * element-wise from S) needs no movement. sm_90a: the first gemm on wgmma (M = 16 x warps),
 * the second on wgmma with A from registers (wgmma RS).
 */
START_TEST(register_a_flash)
{
	static const char *const archs[] = {"sm_80", "sm_90a"};
	Arena a;
	IrProgram *prog;
	const IrStmt *g1, *g2, *s;
	GemmPlan p1, p2;
	Err e = {0};
	char *src = test_readfile("test/cpu/flash_small.tile", NULL);
	int64_t i, j, x[3], y1[3], y2[3];

	ck_assert_ptr_nonnull(src);
	arena_init(&a);
	prog = compile(&a, src);
	ck_assert_ptr_nonnull(prog);
	g1 = findgemm(prog->kernels[0].body);
	ck_assert_ptr_nonnull(g1);
	for (s = g1->next, g2 = NULL; s && !g2; s = s->next)
		g2 = s->kind == S_GEMM ? s : NULL;
	ck_assert_ptr_nonnull(g2);
	ck_assert_int_eq(g1->u.gemm.policy, WARP_FULL_ROW);
	ck_assert_int_eq(g2->u.gemm.policy, WARP_FULL_ROW);
	for (int k = 0; k < 2; k++) {
		const Target *t = target_lookup(TGT_CUDA, archs[k], &e);

		ck_assert_ptr_nonnull(t);
		ck_assert_msg(gemm_plan(&a, t, &prog->kernels[0], g1, &p1, &e) == 0, "%s", e.msg);
		ck_assert_msg(gemm_plan(&a, t, &prog->kernels[0], g2, &p2, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(p1.instr, k ? GEMM_WGMMA : GEMM_MMA_SYNC);
		ck_assert_int_eq(p2.instr, k ? GEMM_WGMMA : GEMM_MMA_SYNC);
		ck_assert_int_eq(p2.m_warp, 4);
		ck_assert_int_eq(p2.n_warp, 1);
		ck_assert_int_eq(p2.a_shared, 0);
		ck_assert_ptr_nonnull(p2.frag_a);
		if (k)
			ck_assert_int_eq(p2.a_reg, 1);
		ck_assert_int_eq(p2.frag_a->rep, 1);
		for (i = 0; i < 64; i++)
			for (j = 0; j < 32; j++) {
				x[0] = i, x[1] = j, x[2] = 0;
				ck_assert_int_eq(layout_eval(p1.acc, x, y1, &e), 0);
				ck_assert_int_eq(layout_eval(p2.frag_a, x, y2, &e), 0);
				ck_assert_int_eq(y1[1], y2[1]); /* the same thread */
			}
	}
	/* the square partition (2 x 2 for 64 x 32 over 4 warps) would replicate P over the
	 * N-warps: the policy is what makes the layouts meet */
	{
		IrStmt g = *g2;
		const Target *t = target_lookup(TGT_CUDA, "sm_80", &e);

		g.u.gemm.policy = WARP_SQUARE;
		ck_assert_int_eq(gemm_plan(&a, t, &prog->kernels[0], &g, &p2, &e), 0);
		ck_assert_int_gt(p2.n_warp, 1);
		ck_assert_int_eq(p2.frag_a->rep, p2.n_warp);
	}
	arena_free(&a);
	free(src);
}
END_TEST

Suite *
suite_gemm_plan(void)
{
	Suite *s = suite_create("gemm_plan");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, amd_plan, 0, (int)countof(amd_cases));
	tcase_add_loop_test(tc, plan_table, 0, countof(cases));
	tcase_add_test(tc, wgmma_single);
	tcase_add_test(tc, trans_b);
	tcase_add_loop_test(tc, operand_orders, 0, countof(orders));
	tcase_add_test(tc, register_a_8bit);
	tcase_add_test(tc, register_a_flash);
	tcase_add_loop_test(tc, plan_errors, 0, countof(errs));
	suite_add_tcase(s, tc);
	return s;
}
