/*
 * check_cpu_diff.c: the differential CPU check (docs/cpu.md) over every
 * sample and every complete kernel under test/ (test/cpu/, test/layout/,
 * test/control/): each runs through tilec_run at tiny, prime and ragged
 * sizes and must agree with the reference interpreter. A program tilec
 * refuses to lower (an error with its reason) is not run; the table below
 * lists each expected refusal with the reason's text, so a new refusal or
 * a vanished one fails too. The sanitizer build runs the test/cpu/ kernels
 * and the samples (the CPU executables are built without sanitizers either
 * way; the harness and the interpreter are what it checks).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "tilec_run.h"
#include "tl.h"
#include "tilec.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__SANITIZE_ADDRESS__)
#define SAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAN_BUILD 1
#endif
#endif

#define STRIDED_RT_SIZES "M=1,K=1;M=37,K=64,lda=72,ldc=136;M=37,K=64,lda=67,ldc=64;M=37,K=64,lda=64,ldc=69;" \
	"M=70,K=130,lda=136,ldc=200;M=33,K=100"
#define GEMM_STRIDED_SIZES "M=1,N=1,K=1;M=200,N=203,K=205;M=256,N=384,K=512,lda=520,ldb=392,ldc=392;" \
	"M=128,N=136,K=96,lda=104,ldb=144,ldc=137"
#define STRIDED_R3_SIZES "B=1,S=1;B=3,S=37;B=2,S=40,sb=2560,ss=64,cb=4096,cs=72;B=2,S=40,sb=2561,ss=64,cb=4096,cs=72"
#define STRIDED_NEST_SIZES "M=1;M=37;M=64,lda=64,ldb=64,ldd=64,ldE=128;M=40,ldb=68"
#define STRIDED_CM_SIZES "K=1,M=1;K=32,M=37;K=40,M=64,ldt=48,ldx=64"
#define STRIDED_HEAD_SIZES "S=1;S=37;S=37,sq=192,so=320,ldt=64;S=70,sq=64,so=64,ldt=72"

#define GEMM_ORDER_SIZES "*=1;*=37;M=200,N=203,K=205;M=192,N=136,K=72"
#define GEMM_8BIT_SIZES "*=1;*=37;M=200,N=203,K=205;M=192,N=144,K=96"

/* size sets every program runs at: tiny (all sizes 1), small primes, the ragged defaults */
static const char generic_sizes[] = "*=1;*=37;";

static const struct {
	const char *file;   /* a path, or a prefix of one */
	const char *sizes;  /* NULL: generic_sizes */
	const char *arch;   /* NULL: sm_80 */
	const char *defines;/* one -D, or NULL */
	const char *refused;/* NULL: must agree; else tilec refuses it with this text */
} special[] = {
	{"samples/gemm_sm90.tile", "M=1,N=1,K=1;M=200,N=203,K=205;M=256,N=384,K=512", "sm_90a", NULL, NULL},
	{"samples/gemm.tile", "M=1,N=1,K=1;M=200,N=203,K=205;M=256,N=384,K=512", NULL, NULL, NULL},
	{"samples/gemm_bf16.tile", "M=1,N=1,K=64;M=200,N=203,K=192", NULL, NULL, NULL},
	{"samples/softmax.tile", "M=1;M=37;M=1003", NULL, NULL, NULL},
	/* strided: element by element (lda = K + 3, ldb = N + 3 by default; an odd ldc) and in
	 * vectors (strides of whole vectors) */
	{"samples/gemm_strided.tile", GEMM_STRIDED_SIZES, NULL, NULL, NULL},
	/* the regression kernels at the sizes where their bug shows (test/cpu/regress.sh runs
	 * them against an older tilec's code: each differs at 704d333) */
	{"test/cpu/cdiv_operand.tile", "*=1;*=37;N=7000;", NULL, NULL, NULL},
	{"test/cpu/column_slice.tile", "*=1;N=300,G=16;N=37,G=8;", NULL, NULL, NULL},
	{"test/cpu/fp8_convert.tile", "*=1;N=512;", NULL, NULL, NULL},
	{"test/cpu/floor_div.tile", "*=1;N=256;", NULL, NULL, NULL},
	{"test/cpu/constants.tile", "*=1;N=256;", NULL, NULL, NULL},
	{"test/cpu/parallel_guard.tile", "*=1;M=128,N=128;M=37,N=200;", NULL, NULL, NULL},
	{"test/cpu/inexact_via_f16.tile", "*=1;M=167,N=149,K=347;", NULL, NULL, NULL},
	{"test/cpu/replicated_rmw.tile", "*=1;M=65,N=32,P=8;M=127,N=96,P=24;", NULL, NULL, NULL},
	/* tensors written by one statement and read by another thread in the next, or read
	 * ahead by a pipeline's loads (each kernel differs at db14544) */
	{"test/cpu/global_hazard.tile", "M=64;M=100;M=17", NULL, NULL, NULL},
	/* nests contiguous in a variable other than the last: the partition with threads along
	 * it (and test/layout/transposed_store.tile's store side) */
	{"test/cpu/nest_contiguity.tile", "*=64;*=211;*=1", NULL, NULL, NULL},
	{"test/cpu/copy_layout.tile", "M=64;M=37;M=1", NULL, NULL, NULL},
	/* stores from nests as vectors of a run of points (vector and element bodies) */
	{"test/cpu/nest_vector.tile", "M=64;M=37;M=1", NULL, NULL, NULL},
	{"test/cpu/nest_vector_strided.tile", "M=64;M=37,ldc=64,ldt=40;M=37,ldc=67,ldt=37;M=1", NULL, NULL, NULL},
	/* nest loads as vectors: rows of whole vectors (the vector body, runs past M and past a
	 * constant row read as zeros) and ragged rows (N = 37, 61: the element body) */
	{"test/cpu/nest_vload.tile", "M=64,N=128;M=37,N=61;M=64,N=37;M=37,N=256;*=1", NULL, NULL, NULL},
	{"test/cpu/nest_vload_strided.tile", "M=64,lda=64;M=37,lda=68;M=37,lda=67;M=1,lda=64", NULL, NULL, NULL},
	{"test/cpu/nest_vload_mixed.tile", "M=64;M=37;M=1", NULL, NULL, NULL},
	/* valid layouts that are not onto threads x slots, or have no closed-form inverse as a
	 * digit recovery: inverted through the flat index, padded pairs guarded (refused at
	 * db14544: "not onto the output shape", "no closed-form inverse") */
	{"test/layout/odd_extents.tile", NULL, NULL, NULL, NULL},
	{"test/layout/ragged.tile", NULL, NULL, NULL, NULL},
	{"test/layout/tiny_frag.tile", NULL, NULL, NULL, NULL},
	{"test/cpu/padded_tiles.tile", "*=1;*=300;*=5000", NULL, NULL, NULL},
	{"test/cpu/padded_reduce.tile", "N=421;N=600", NULL, NULL, NULL},
	/* padded tiles copied between registers; rows spread over threads that do not share a
	 * slot reduced through shared memory; locals read in a nest at indices that are not its
	 * variables, through shared memory (refused at 616dfcd: "which a copy between register
	 * tiles does not lower yet", "thread 1 holds a source element but not its result", "index
	 * 0 in the parallel nest is not one of the nest's variables") */
	{"test/cpu/padded_copy.tile", "*=1;*=37;*=700", NULL, NULL, NULL},
	{"test/cpu/padded_rows.tile", "*=1;*=37;*=5;*=421", NULL, NULL, NULL},
	{"test/cpu/nest_broadcast.tile", "*=1;*=37;*=500", NULL, NULL, NULL},
	{"test/cpu/nest_scatter.tile", "*=1;*=37;*=500", NULL, NULL, NULL},
	/* the examples: 514 elements over 128 threads, 1024 over 384, columns of 24 and 40
	 * broadcast over rows */
	{"test/cpu/padded_examples.tile", "*=1;*=37;*=1100", NULL, NULL, NULL},
	/* replicated layouts with no closed-form inverse: an exact table of coordinates */
	{"test/cpu/exact_table.tile", "*=192;*=37;*=100;*=1", NULL, NULL, NULL},
	{"test/cpu/rank3_copy.tile", "*=1;B=3,M=20,N=40;B=4,M=32,N=64", NULL, NULL, NULL},
	/* FlashAttention: P from registers as the A operand of mma.sync; ragged L masks keys */
	{"samples/flash_fwd.tile", "BH=1,L=1;BH=2,L=200;BH=1,L=256", NULL, NULL, NULL},
	{"test/cpu/flash_small.tile", "*=1;*=37;BH=3,L=300", NULL, NULL, NULL},
	{"test/cpu/flash_causal.tile", "*=1;*=37;BH=3,L=300", NULL, NULL, NULL},
	{"test/cpu/flash_bshd.tile", "*=1;*=37;B=2,H=3,L=300", NULL, NULL, NULL},
	{"test/cpu/flash_smem_p.tile", "*=1;*=37;BH=3,L=300", NULL, NULL, NULL},
	/* the four operand orders (trans_a, trans_b) at ragged sizes and at whole vectors (the
	 * element-by-element and the vector bodies) */
	{"test/cpu/gemm_trans.tile", GEMM_ORDER_SIZES, NULL, NULL, NULL},
	/* i8/u8 into i32 (exact: compared bit for bit) in the four orders: mma.sync m16n8k32 with
	 * ldmatrix or byte loads */
	{"test/cpu/gemm_int8.tile", GEMM_8BIT_SIZES, NULL, NULL, NULL},
	/* fp8: mma.sync m16n8k32 .e4m3/.e5m2 from sm_89 (sm_80 refuses it: check_passes, which
	 * test/gpu/run_all.py does not run at the device's arch) */
	{"test/cpu/gemm_fp8.tile", GEMM_8BIT_SIZES, "sm_90", NULL, NULL},
	/* fp8 wgmma promotion (sm_90a; the tma and promo rows run its other BK and stages) */
	{"test/cpu/gemm_fp8_promo.tile", "*=1;*=37;M=200,N=264,K=520;M=65,N=67,K=69", "sm_90a", NULL, NULL},
	/* a register A that is transposed: refused at the gemm */
	{"test/cpu/register_a_trans.tile", NULL, NULL, NULL, "trans_a with A in registers (give A as M x K)"},
	/* strided tensors: run-time strides of whole vectors (the vector body) and not (an odd
	 * lda or ldc: the element-by-element body; lda = K + 3 by default) */
	{"test/cpu/strided_runtime.tile", STRIDED_RT_SIZES, NULL, NULL, NULL},
	{"test/cpu/strided_colmajor.tile", STRIDED_CM_SIZES, NULL, NULL, NULL},
	{"test/cpu/strided_const.tile", "M=1;M=37;M=64", NULL, NULL, NULL},
	/* atomics: blocks (and points of a nest) updating one element; float sums compared within
	 * their tolerance (any order), integer ones bit for bit */
	{"samples/splitk_gemm.tile", "M=1,N=1,K=1;M=200,N=203,K=205;M=128,N=256,K=512", NULL, NULL, NULL},
	{"test/cpu/atomic_hist.tile", "*=1;*=37;N=1000;N=5000", NULL, NULL, NULL},
	{"test/cpu/atomic_tile.tile", "*=1;*=37;M=64,N=128;", NULL, NULL, NULL},
	/* f32 atomic max/min: HIP has them (check_cpu_hip), CUDA refuses them at the statement (the
	 * text names no arch: run_all.py runs the row at the device's) */
	{"test/cpu/atomic_fmax.tile", NULL, NULL, NULL,
	 "(CUDA has no floating-point atomic max/min; use i32 elements)"},
	{"test/cpu/strided_rank3.tile", STRIDED_R3_SIZES, NULL, NULL, NULL},
	{"test/cpu/strided_nest.tile", STRIDED_NEST_SIZES, NULL, NULL, NULL},
};

/* the extra runs: a sample for another arch or with a -D */
static const struct {
	const char *file, *arch, *sizes, *define;
} extra[] = {
	{"samples/gemm.tile", "sm_90a", "M=1,N=1,K=1;M=200,N=203,K=205;M=128,N=256,K=64", NULL},
	{"samples/gemm_bf16.tile", "sm_90a", "M=200,N=203,K=192;M=128,N=128,K=64", NULL},
	{"samples/copy.tile", "sm_90a", NULL, NULL},
	{"test/cpu/pipeline_let.tile", "sm_90a", NULL, NULL},
	{"test/cpu/replicated_rmw.tile", "sm_90a", "M=65,N=32,P=8;M=127,N=96,P=24", NULL},
	/* at sm_90a its gemm was planned for wgmma, whose lowering refused the 64B-swizzled B:
	 * the plan now falls back to mma.sync (found by test/gpu/run_all.py) */
	{"test/cpu/pipeline_hazard.tile", "sm_90a", NULL, NULL},
	{"test/cpu/global_hazard.tile", "sm_90a", "M=64;M=100", NULL},
	{"test/cpu/padded_tiles.tile", "sm_90a", "*=300", NULL},
	{"test/cpu/padded_reduce.tile", "sm_90a", "N=421", NULL},
	{"test/cpu/padded_copy.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/padded_rows.tile", "sm_90a", "*=37;*=421", NULL},
	{"test/cpu/nest_broadcast.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/nest_scatter.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/padded_examples.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/exact_table.tile", "sm_90a", "*=192;*=37", NULL},
	{"test/cpu/int_reduce.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/reduce_to_shared.tile", "sm_90a", "*=37", NULL},
	{"test/cpu/region_loop.tile", "sm_90a", "*=37;M=100,N=64,K=96", NULL},
	{"test/cpu/local_convert.tile", "sm_90a", "*=37;*=300;*=16", NULL},
	{"test/cpu/local_convert.tile", "sm_80", "*=1;*=256", NULL},
	{"test/cpu/single_point.tile", "sm_90a", "*=1;*=37", NULL},
	{"test/cpu/single_point.tile", "sm_80", "*=3", NULL},
	{"test/cpu/affine_read.tile", "sm_90a", "M=83,N=64,K=37;M=130,N=96,K=70", NULL},
	{"test/cpu/affine_read.tile", "sm_80", "M=15,N=32,K=19;M=64,N=32,K=64", NULL},
	{"test/cpu/reduce_wide.tile", "sm_90a", "*=37;*=100", NULL},
	{"test/cpu/reduce_wide.tile", "sm_80", "*=64", NULL},
	{"test/cpu/rank3_stage.tile", "sm_90a", "*=37;*=9", NULL},
	{"test/cpu/rank3_stage.tile", "sm_80", "*=64", NULL},
	{"test/cpu/rank3_copy.tile", "sm_90a", "B=3,M=20,N=40", NULL},
	{"test/cpu/nest_contiguity.tile", "sm_90a", "*=64;*=211", NULL},
	{"test/cpu/nest_vector.tile", "sm_90a", "M=64;M=37", NULL},
	{"test/cpu/nest_vector_strided.tile", "sm_90a", "M=64;M=37,ldc=64,ldt=40;M=37,ldc=67,ldt=37;M=1", NULL},
	{"test/cpu/nest_vload.tile", "sm_90a", "M=64,N=128;M=37,N=61;M=64,N=37;M=37,N=256;*=1", NULL},
	{"test/cpu/nest_vload_strided.tile", "sm_90a", "M=64,lda=64;M=37,lda=68;M=37,lda=67;M=1,lda=64", NULL},
	{"test/cpu/nest_vload_mixed.tile", "sm_90a", "M=64;M=37;M=1", NULL},
	{"test/cpu/generated_names.tile", "sm_90a", NULL, NULL},
	{"test/cpu/generated_names_decl.tile", "sm_90a", NULL, NULL},
	{"samples/gemm_strided.tile", "sm_90a", GEMM_STRIDED_SIZES, NULL},
	{"test/cpu/strided_runtime.tile", "sm_90a", STRIDED_RT_SIZES, NULL},
	{"test/cpu/strided_colmajor.tile", "sm_90a", STRIDED_CM_SIZES, NULL},
	{"test/cpu/strided_const.tile", "sm_90a", "M=37", NULL},
	{"test/cpu/strided_rank3.tile", "sm_90a", STRIDED_R3_SIZES, NULL},
	{"test/cpu/strided_nest.tile", "sm_90a", STRIDED_NEST_SIZES, NULL},
	/* one head of a [B, S, H, 64] tensor through strided views (test/strided/) */
	{"test/strided/head.tile", "sm_80", STRIDED_HEAD_SIZES, NULL},
	{"test/strided/head.tile", "sm_90a", STRIDED_HEAD_SIZES, NULL},
	/* sm_90: float2/float4 atomic adds of f32 tiles, native bf16 adds */
	{"samples/splitk_gemm.tile", "sm_90a", "M=1,N=1,K=1;M=200,N=203,K=205;M=128,N=256,K=64", NULL},
	{"test/cpu/atomic_nest.tile", "sm_90a", NULL, NULL},
	{"test/cpu/atomic_hist.tile", "sm_90a", "N=37;N=1000", NULL},
	{"test/cpu/atomic_tile.tile", "sm_90a", "*=1;*=37;M=64,N=128;", NULL},
	/* softmax at real widths (the reducer's and the holders' checks were elements x replicas
	 * or threads x elements: W = 4096 was "too large to check", W = 2048 took 3 s) */
	{"samples/softmax.tile", NULL, "M=1;M=19", "W=4096"},
	{"samples/softmax.tile", NULL, "M=9", "W=8192"},
	{"test/cpu/rmsnorm.tile", NULL, "M=1;M=9", "W=5120"},
	{"test/cpu/rmsnorm.tile", NULL, "M=5", "W=8192"},
	{"test/cpu/rmsnorm.tile", NULL, "M=5", "W=1536"},
	{"test/cpu/rmsnorm_warp.tile", NULL, "M=5", "W=1536"},
	{"test/cpu/rmsnorm_warp.tile", NULL, "M=1;M=9", "W=5120"},
	{"test/cpu/rmsnorm_warp.tile", NULL, "M=5", "W=8192"},
	/* the row max is a broadcast whose replicas are permuted (_rep * 5 % 256) */
	{"samples/softmax.tile", NULL, "M=1;M=37", "W=5120"},
	{"samples/softmax.tile", NULL, "M=5", "W=512"},
	/* FlashAttention: head dims 64 and 128, causal and not; sm_90a runs the first gemm on
	 * wgmma (its accumulator held as the mma.sync A fragment of the second) */
	{"samples/flash_fwd.tile", "sm_90a", "BH=2,L=200;BH=1,L=256", NULL},
	{"samples/flash_fwd.tile", NULL, "BH=2,L=200;BH=1,L=1", "CAUSAL=1"},
	{"samples/flash_fwd.tile", "sm_90a", "BH=2,L=200", "CAUSAL=1"},
	{"samples/flash_fwd.tile", NULL, "BH=2,L=200", "D=64"},
	{"samples/flash_fwd.tile", "sm_90a", "BH=1,L=130", "D=64"},
	{"test/cpu/flash_small.tile", "sm_90a", "BH=3,L=300", NULL},
	{"test/cpu/flash_causal.tile", "sm_90a", "*=37;BH=3,L=300", NULL},
	{"test/cpu/flash_bshd.tile", "sm_90a", "B=2,H=3,L=300", NULL},
	{"test/cpu/flash_bshd.tile", NULL, "B=1,H=2,L=200", "CAUSAL=1"},
	/* P through shared memory: both gemms on wgmma at sm_90a */
	{"test/cpu/flash_smem_p.tile", "sm_90a", "BH=3,L=300", NULL},
	{"test/cpu/flash_smem_p.tile", "sm_90a", "BH=2,L=200", "CAUSAL=1"},
	/* wgmma with A and B K- or M/N-major (tnspA, tnspB) */
	{"test/cpu/gemm_trans.tile", "sm_90a", GEMM_ORDER_SIZES, NULL},
	/* 8-bit: wgmma m64nNk32 for A [M, K] x B [N, K], mma.sync m16n8k32 for the other orders */
	{"test/cpu/gemm_int8.tile", "sm_90a", GEMM_8BIT_SIZES, NULL},
	{"test/cpu/gemm_fp8.tile", "sm_90a", GEMM_8BIT_SIZES, NULL},
};

static glob_t files;

static void
collect_files(void)
{
	static const char *const pats[] = {"test/cpu/*.tile", "samples/*.tile", "test/layout/*.tile",
					   "test/control/*.tile"};
	size_t i;
	int fl = 0;

	for (i = 0; i < countof(pats); i++) {
#ifdef SAN_BUILD
		if (i >= 2)
			break;
#endif
		glob(pats[i], fl, NULL, &files);
		fl = GLOB_APPEND;
	}
}

static void
run_one(const char *path, const char *arch, const char *sizes, const char *define, const char *refused)
{
	tilec_run_options o;
	tilec_run_result r;
	const char *defs[1];
	char *src;
	size_t len;

	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	tilec_run_options_init(&o);
	o.filename = path;
	o.arch = arch;
	o.sizes = sizes ? sizes : generic_sizes;
	o.seed = 1;
	o.timeout_s = 120;
	if (define) {
		defs[0] = define;
		o.defines = defs;
		o.ndefines = 1;
	}
	tilec_run(src, len, &o, &r);
	if (refused) {
		ck_assert_msg(r.status == TILEC_RUN_ERROR && strstr(r.diagnostics, refused),
			      "%s: expected a refusal with '%s', got status %d:\n%s%s", path, refused, r.status,
			      r.diagnostics, r.report);
	} else {
		ck_assert_msg(r.status == TILEC_RUN_AGREE, "%s (%s): status %d, %d of %d runs differ:\n%s%s", path,
			      arch ? arch : "sm_80", r.status, r.differ, r.runs, r.diagnostics, r.report);
		ck_assert_int_gt(r.runs, 0);
	}
	tilec_run_result_free(&r);
	free(src);
}

START_TEST(program)
{
	const char *path = files.gl_pathv[_i];
	size_t i;

	for (i = 0; i < countof(special); i++)
		if (!strcmp(special[i].file, path)) {
			run_one(path, special[i].arch, special[i].sizes, special[i].defines, special[i].refused);
			return;
		}
	run_one(path, NULL, NULL, NULL, NULL);
}
END_TEST

/* sizes left to the defaults that take more work than the interpreter does are run again at
 * smaller defaults (a gemm of 211 x 197 x 223, 128 x 128 tiles, against a limit of 5e6; samples/flash_fwd.tile
 * at BH = 211, L = 197 passes the default limit of 2e9), counted once */
START_TEST(default_tiers)
{
	tilec_run_options o;
	tilec_run_result r;
	size_t len;
	char *src = test_readfile("samples/gemm.tile", &len);

	ck_assert_ptr_nonnull(src);
	tilec_run_options_init(&o);
	o.filename = "samples/gemm.tile";
	o.max_work = 5000000;
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK && r.runs == 1 && r.differ == 0, "status %d, %d runs: %s%s", r.status,
		      r.runs, r.diagnostics, r.report);
	ck_assert_msg(strstr(r.report, "[M=211,K=197,N=223] seed 0: not run: the default sizes take more work"),
		      "%s", r.report);
	ck_assert_msg(strstr(r.report, "[M=37,K=41,N=31] seed 0: agree"), "%s", r.report);
	tilec_run_result_free(&r);
	/* named sizes are not changed: past the limit is an error */
	o.sizes = "M=211,K=197,N=223";
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status != TILEC_OK && strstr(r.report, "the interpreter's limit of 5000000"), "%s", r.report);
	tilec_run_result_free(&r);
	free(src);
}
END_TEST

/* ---- TMA (--tma, sm_90a): TMA loads onto mbarriers, checked against the interpreter at
 * sizes whose rows are whole 16-byte chunks (TMA, ragged against the tiles: zero fill past the
 * edges) and sizes whose rows are not (the element-by-element body) ---- */
#define PROMO_SIZES "M=1,N=16,K=16;M=200,N=264,K=528;M=65,N=67,K=69;M=136,N=8,K=1040"
#define TMA_SIZES "M=1,N=8,K=8;M=200,N=264,K=136;M=256,N=384,K=512;M=200,N=203,K=205;M=136,N=8,K=520"
static const struct {
	const char *file, *sizes, *define;
	int ws;   /* --warp-specialize: a producer warpgroup issues the loads */
} tma_rows[] = {
	{"samples/gemm_sm90.tile", TMA_SIZES, NULL, 0},
	{"samples/gemm.tile", TMA_SIZES, NULL, 0},
	{"samples/gemm_bf16.tile", "M=200,N=264,K=192;M=64,N=8,K=64", NULL, 0},
	{"samples/splitk_gemm.tile", "M=200,N=264,K=136", NULL, 0},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=64,N=64,K=512;M=130,N=72,K=1000", "STAGES=2", 0},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=130,N=72,K=1000", "STAGES=3", 0},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=130,N=72,K=1000", "STAGES=5", 0},
	/* a pipeline run twice in a block (its barriers invalidated and initialized again), a second one */
	{"test/cpu/tma_twice.tile", "M=200,N=264,K=136,KH=64;M=64,N=64,K=512,KH=256;M=65,N=67,K=69,KH=3;M=128,N=128,K=128,KH=0",
	 NULL, 0},
	/* fp8 wgmma promotion (lower_mma.c): the pipeline's temporary and count at 2 to 5 stages
	 * (BK = 64: promoted every other iteration), BK = 32 (every fourth), 96 (every one: 3 + 3
	 * k-blocks would pass 4) and 256 (twice inside the gemm) */
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "STAGES=2", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "STAGES=3", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "STAGES=4", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "STAGES=5", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "BK=32", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "BK=96", 0},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "BK=256", 0},
	/* BN = 256: 128 accumulator registers, promoted one m64n128 instruction at a time (not
	 * the pipeline's temporary: each gemm promotes its own) */
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "BN=256", 0},
	{"test/cpu/gemm_fp8.tile", "M=200,N=264,K=136;M=256,N=384,K=512;M=192,N=144,K=2048", NULL, 0},
	/* gemm_sm90 with its epilogue through shared memory (Cs in the stages' bytes), the 128x256
	 * fp8 tile (BN = 256: promoted one instruction at a time) */
	{"test/gpu/gemm_sm90_epilogue.tile", "M=200,N=264,K=136;M=256,N=512,K=128", NULL, 0},
	{"test/gpu/gemm_fp8_bench.tile", "M=200,N=264,K=136;M=256,N=512,K=256", "BN=256", 1},
	/* warp-specialized (--warp-specialize): the producer warpgroup, named barriers of the
	 * consumers, the block of the launch contract; 2 to 5 stages, ragged sizes, the element
	 * body (K = 205: the producer waits for nothing, the consumers run cp.async) */
	{"samples/gemm_sm90.tile", TMA_SIZES, NULL, 1},
	{"samples/gemm.tile", TMA_SIZES, NULL, 1},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=64,N=64,K=512;M=130,N=72,K=1000", "STAGES=2", 1},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=130,N=72,K=1000", "STAGES=3", 1},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=130,N=72,K=1000", "STAGES=4", 1},
	{"test/cpu/tma_stages.tile", TMA_SIZES ";M=130,N=72,K=1000", "STAGES=5", 1},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "STAGES=3", 1},
	{"test/cpu/gemm_fp8_promo.tile", PROMO_SIZES, "BN=256", 1},
};

/* the CUDA C of path for sm_90a with --tma, which must load with TMA */
static char *
tma_code(const char *path, const char *src, size_t len, const char *define, int ws)
{
	tilec_options co;
	tilec_result cr;
	char *code;

	tilec_options_init(&co);
	co.arch = "sm_90a";
	co.tma = 1;
	co.warp_specialize = ws;
	co.raster_group = 0;   /* the detects edit the code's launch-order indices */
	co.dump = TILEC_DUMP_CUDA;
	co.defines = &define;
	co.ndefines = define != NULL;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", path, cr.diagnostics);
	ck_assert_msg(strstr(cr.output, "tl_tma_load_2d") && strstr(cr.output, "tl_mbar_wait"),
		      "%s: no TMA loads with --tma", path);
	ck_assert_msg(!ws || strstr(cr.output, "tl_setmaxnreg_dec<24>"), "%s: not warp-specialized", path);
	code = strdup(cr.output);
	tilec_result_free(&cr);
	return code;
}

static tilec_status
tma_run(const char *path, const char *src, size_t len, const char *sizes, const char *define, const char *over,
	int ws, tilec_run_result *r)
{
	tilec_run_options o;

	tilec_run_options_init(&o);
	o.filename = path;
	o.arch = "sm_90a";
	o.tma = 1;
	o.warp_specialize = ws;
	o.raster_group = 0;   /* as tma_code: the code it overrides is in launch order */
	o.sizes = sizes;
	o.seed = 1;
	o.timeout_s = 120;
	o.defines = &define;
	o.ndefines = define != NULL;
	o.cuda_override = over;
	return tilec_run(src, len, &o, r);
}

START_TEST(tma)
{
	size_t len;
	char *src = test_readfile(tma_rows[_i].file, &len), *code;
	tilec_run_result r;

	ck_assert_ptr_nonnull(src);
	code = tma_code(tma_rows[_i].file, src, len, tma_rows[_i].define, tma_rows[_i].ws);
	tma_run(tma_rows[_i].file, src, len, tma_rows[_i].sizes, tma_rows[_i].define, NULL, tma_rows[_i].ws, &r);
	ck_assert_msg(r.status == TILEC_OK && r.runs > 0, "%s (%s): status %d, %d of %d runs differ:\n%s%s",
		      tma_rows[_i].file, tma_rows[_i].define ? tma_rows[_i].define : "", r.status, r.differ, r.runs,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

/* the CPU run finds a TMA pipeline that is wrong in one way: the emitted code of
 * samples/gemm_sm90.tile with one statement changed */
/* code with every occurrence of `from` (which must occur) replaced by `to`: the wrong variants
 * of the *_detects tests (malloc'd) */
static char *
mutate(const char *code, const char *from, const char *to)
{
	size_t n = strlen(from);
	const char *bad, *p;
	char *out;
	Buf b;

	ck_assert_msg(strstr(code, from) != NULL, "no '%s' in the code", from);
	buf_init(&b);
	for (bad = code; (p = strstr(bad, from)); bad = p + n) {
		buf_putn(&b, bad, (size_t)(p - bad));
		buf_puts(&b, to);
	}
	buf_puts(&b, bad);
	out = strdup(buf_str(&b));
	buf_free(&b);
	return out;
}

static const struct {
	const char *from, *to, *want;
	int ws;   /* of the warp-specialized code */
} tma_wrong[] = {
	/* a box one panel off */
	{"((int)blockIdx.x * 256) + 64, (ko * 64)", "((int)blockIdx.x * 256) + 128, (ko * 64)", "DIFFER", 0},
	/* the consumers do not wait for the stage to land */
	{"tl_mbar_wait(&tl_full_ko[ko % 4], ko / 4 % 2);", ";", "mbarrier", 0},
	/* a warp releases the stage its wgmma group still reads */
	{"tl_mbar_arrive(&tl_empty_ko[(ko + 3) % 4])", "tl_mbar_arrive(&tl_empty_ko[(ko + 0) % 4])", "deadlock", 0},
	/* too few bytes expected: the phase completes before the last box lands */
	{"tl_mbar_expect_tx(&tl_full_ko[ko % 4], 49152)", "tl_mbar_expect_tx(&tl_full_ko[ko % 4], 40960)", "DIFFER", 0},
	/* warp-specialized: the producer does not wait for a stage's release before its refill */
	{"tl_mbar_wait(&tl_empty_ko[ko % 4], (ko / 4 + 1) % 2);", ";", "mbarrier", 1},
	/* the producer refills a stage one use early (parity of the phase before) */
	{"tl_mbar_wait(&tl_empty_ko[ko % 4], (ko / 4 + 1) % 2);", "tl_mbar_wait(&tl_empty_ko[ko % 4], (ko / 4) % 2);",
	 "mbarrier", 1},
	/* the consumers' barriers as block barriers: the producer warpgroup returned */
	{"tl_bar_named(1, 256);", "__syncthreads();", "barrier divergence", 1},
	/* one warp too many in the producer branch: setmaxnreg by part of a warpgroup */
	{"if (tid >= 256) {", "if (tid >= 224) {", "warpgroup divergence", 1},
	/* setmaxnreg by one warp of the producer warpgroup only */
	{"tl_setmaxnreg_dec<24>();", "if (tid >= 288) tl_setmaxnreg_dec<24>();", "setmaxnreg.dec", 1},
	/* the producer misses the barrier after the mbarriers' initialization */
	{"\t\t\t__syncthreads();\n\t\t\tif (tid == 256) {", "\t\t\tif (tid == 256) {", "barrier divergence", 1},
};

START_TEST(tma_detects)
{
	const char *path = "samples/gemm_sm90.tile";
	size_t len;
	char *src = test_readfile(path, &len), *code, *bad;
	tilec_run_result r;

	ck_assert_ptr_nonnull(src);
	code = tma_code(path, src, len, NULL, tma_wrong[_i].ws);
	bad = mutate(code, tma_wrong[_i].from, tma_wrong[_i].to);
	tma_run(path, src, len, "M=256,N=512,K=512", NULL, bad, tma_wrong[_i].ws, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER && strstr(r.report, tma_wrong[_i].want),
		      "a wrong TMA pipeline (%s -> %s): status %d, expected '%s':\n%s%s", tma_wrong[_i].from,
		      tma_wrong[_i].to, r.status, tma_wrong[_i].want, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(bad);
	free(code);
	free(src);
}
END_TEST

/* the CPU run finds an fp8 promotion that is wrong in one way: the emitted code of
 * test/cpu/gemm_fp8_promo.tile with one statement changed, at BK = 64 (the pipeline's
 * temporary, promoted every other iteration) and BK = 256 (the gemm's own temporary, promoted
 * inside the gemm). The temporary is never cleared: a wgmma with scale-d 0 starts it over, and
 * the CPU build fills registers not yet written with a pattern (-ftrivial-auto-var-init), so
 * a wrong scale-d is found every time */
static const struct {
	const char *define, *from, *to, *want;
} promo_wrong[] = {
	/* the first wgmma after a promotion accumulates onto the promoted products */
	{NULL, "db, acc_pk_ > 0);", "db);", "DIFFER"},
	/* the temporary added twice */
	{NULL, "acc[s] = acc[s] + acc_pa_[s];", "acc[s] = acc[s] + acc_pa_[s] + acc_pa_[s];", "DIFFER"},
	/* read before its group retired */
	{NULL, "tl_wgmma_wait0(); // acc_pa_'s groups retired", ";", "DIFFER"},
	/* the rest never promoted after the pipeline */
	{NULL, "if (acc_pk_ > 0) {", "if (0) {", "DIFFER"},
	/* clear = true keeps the temporary's earlier products */
	{NULL, "acc_pk_ = 0; // clear = true", "; // clear = true", "DIFFER"},
	/* the gemm's own temporary: its first wgmma reads the registers' old contents */
	{"BK=256", "db, 0); // m64n64k32, A and B K-major, scale-d 0", "db); //", "DIFFER"},
	/* the promotion inside the gemm skipped (the interval's products dropped) */
	{"BK=256", "acc[s] = acc[s] + acc_pa_[s];", ";", "DIFFER"},
	/* one instruction at a time: the second instruction's temporary promoted into the first's slice */
	{"BN=256", "acc[64 + s] = acc[64 + s] + acc_pa_[s];", "acc[s] = acc[s] + acc_pa_[s];", "DIFFER"},
	/* one instruction at a time: each instruction's first wgmma adds onto the temporary's
	 * old contents (for the second, the first's products) */
	{"BN=256", "db, 0); // m64n128k32, A and B K-major, scale-d 0", "db); //", "DIFFER"},
};

START_TEST(promo_detects)
{
	const char *path = "test/cpu/gemm_fp8_promo.tile";
	size_t len;
	char *src = test_readfile(path, &len), *code, *bad;
	tilec_run_result r;

	ck_assert_ptr_nonnull(src);
	code = tma_code(path, src, len, promo_wrong[_i].define, 0);
	bad = mutate(code, promo_wrong[_i].from, promo_wrong[_i].to);
	/* N = 256: BN = 256's second instruction covers columns inside the tensor */
	tma_run(path, src, len, "M=128,N=256,K=512", promo_wrong[_i].define, bad, 0, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER && strstr(r.report, promo_wrong[_i].want),
		      "a wrong fp8 promotion (%s -> %s): status %d, expected '%s':\n%s%s", promo_wrong[_i].from,
		      promo_wrong[_i].to, r.status, promo_wrong[_i].want, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(bad);
	free(code);
	free(src);
}
END_TEST

/* ---- grouped block order (--raster-group=G, lower_kernel.c): each block's tile is a
 * bijection of the grid, ragged grids included (raster_grid.tile counts every block in its
 * tile), and programs agree with it ---- */
static const struct {
	const char *file, *arch, *sizes;
	int G, ws;
} raster_rows[] = {
	{"test/cpu/raster_grid.tile", NULL, "X=7,Y=11;X=1,Y=9;X=13,Y=1;X=5,Y=2;X=37,Y=37;X=64,Y=24", 1, 0},
	{"test/cpu/raster_grid.tile", NULL, "X=7,Y=11;X=1,Y=9;X=13,Y=1;X=5,Y=2;X=37,Y=37;X=64,Y=24", 3, 0},
	{"test/cpu/raster_grid.tile", NULL, "X=7,Y=11;X=1,Y=9;X=13,Y=1;X=5,Y=2;X=37,Y=37;X=64,Y=24", 8, 0},
	{"test/cpu/raster_grid.tile", "gfx90a", "X=7,Y=11;X=5,Y=2", 3, 0},
	{"samples/gemm.tile", NULL, "M=1000,N=264,K=64;M=200,N=1000,K=40;M=1,N=1,K=1", 3, 0},
	{"samples/gemm_sm90.tile", "sm_90a", "M=700,N=600,K=128;M=129,N=1030,K=64", 2, 1},
	{"samples/flash_fwd.tile", NULL, "BH=3,L=200", 2, 0},
	{"samples/splitk_gemm.tile", NULL, "M=200,N=264,K=136", 2, 0},
};

START_TEST(raster)
{
	tilec_run_options o;
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(raster_rows[_i].file, &len);

	ck_assert_ptr_nonnull(src);
	tilec_run_options_init(&o);
	o.filename = raster_rows[_i].file;
	o.arch = raster_rows[_i].arch;
	if (o.arch && !strncmp(o.arch, "gfx", 3))
		o.target = TILEC_TARGET_HIP;
	o.sizes = raster_rows[_i].sizes;
	o.raster_group = raster_rows[_i].G;
	o.warp_specialize = raster_rows[_i].ws;
	o.seed = 1;
	o.timeout_s = 120;
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs > 0, "%s (G = %d): status %d, %d of %d runs differ:\n%s%s",
		      raster_rows[_i].file, raster_rows[_i].G, r.status, r.differ, r.runs, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(src);
}
END_TEST

/* a wrong grouped order is found: raster_grid.tile's code at G = 3, X = 7, Y = 11 (a last
 * group of 2 rows) with one declaration changed */
static const struct {
	const char *from, *to;
} raster_wrong[] = {
	/* the last group taken as a whole one */
	{"(int)gridDim.y - tl_fy_ < 3 ? (int)gridDim.y - tl_fy_ : 3;", "3;"},
	/* row and column swapped inside a group */
	{"tl_fy_ + (int)(tl_lin_ % tl_gsz_ % tl_gh_)", "tl_fy_ + (int)(tl_lin_ % tl_gsz_ / tl_gh_)"},
	/* groups one row apart */
	{"(int)(tl_lin_ / tl_gsz_) * 3", "(int)(tl_lin_ / tl_gsz_)"},
};

START_TEST(raster_detects)
{
	const char *path = "test/cpu/raster_grid.tile";
	tilec_options co;
	tilec_result cr;
	tilec_run_options o;
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(path, &len), *p;
	Buf b;

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&co);
	co.raster_group = 3;
	co.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s", cr.diagnostics);
	ck_assert_msg((p = strstr(cr.output, raster_wrong[_i].from)) != NULL, "no '%s' in the code", raster_wrong[_i].from);
	buf_init(&b);
	buf_putn(&b, cr.output, (size_t)(p - cr.output));
	buf_puts(&b, raster_wrong[_i].to);
	buf_puts(&b, p + strlen(raster_wrong[_i].from));
	tilec_run_options_init(&o);
	o.filename = path;
	o.sizes = "X=7,Y=11";
	o.raster_group = 3;
	o.seed = 1;
	o.timeout_s = 60;
	o.cuda_override = buf_str(&b);
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER, "a wrong grouped order (%s -> %s): status %d:\n%s%s",
		      raster_wrong[_i].from, raster_wrong[_i].to, r.status, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	tilec_result_free(&cr);
	buf_free(&b);
	free(src);
}
END_TEST

/* ---- the persistent schedule (--persistent, lower_kernel.c persist_*): the CPU run launches
 * TILEC_CPU_PERSISTENT_BLOCKS (3) blocks, each looping over the tiles; tile counts that are not
 * multiples of 3 (a block with one tile fewer) and fewer than 3 (a block without a tile), a TMA
 * pipeline's stages and parities carried over tiles of 1 to 16 iterations (K), warp-specialized
 * (the producer loading the next tile), the grouped order, a 3-D grid, the cp.async pipeline ---- */
/* TMA (rows of whole 16-byte chunks): 10 tiles of 4 iterations (the last partial), 10 of 1, 18
 * of 5, 2 tiles, 1; the element body (N or K not a multiple of 8): 10 tiles, 1 */
#define PERSIST_SIZES "M=640,N=264,K=200;M=129,N=1032,K=64;M=700,N=600,K=320;M=256,N=256,K=320;M=1,N=8,K=8;" \
	"M=640,N=300,K=200;M=200,N=203,K=205"
static const struct {
	const char *file, *arch, *sizes, *define;
	int ws, G;
} persist_rows[] = {
	{"samples/gemm_sm90.tile", "sm_90a", PERSIST_SIZES, NULL, 0, 0},
	{"samples/gemm_sm90.tile", "sm_90a", PERSIST_SIZES, NULL, 1, 0},
	{"samples/gemm_sm90.tile", "sm_90a", "M=640,N=264,K=200;M=700,N=1032,K=64;M=640,N=300,K=200", NULL, 1, 2},
	{"samples/gemm_sm90.tile", "sm_90a", "M=640,N=264,K=200;M=129,N=1032,K=64", NULL, 0, 3},
	{"samples/gemm.tile", "sm_90a", "M=900,N=200,K=72;M=200,N=1000,K=40;M=1,N=1,K=1", NULL, 0, 0},
	{"samples/gemm.tile", "sm_90a", "M=900,N=200,K=72;M=200,N=1000,K=40", NULL, 1, 3},
	{"samples/gemm.tile", "sm_80", "M=900,N=200,K=72;M=200,N=1000,K=40;M=1,N=1,K=1", NULL, 0, 0},
	{"samples/gemm.tile", "sm_80", "M=900,N=200,K=72;M=200,N=1000,K=40", NULL, 0, 2},
	{"test/cpu/tma_stages.tile", "sm_90a", "M=200,N=264,K=136;M=130,N=72,K=1000;M=64,N=64,K=512", "STAGES=2", 0, 0},
	{"test/cpu/tma_stages.tile", "sm_90a", "M=200,N=264,K=136;M=130,N=72,K=1000;M=64,N=64,K=512", "STAGES=3", 1, 0},
	{"test/cpu/tma_stages.tile", "sm_90a", "M=200,N=264,K=136;M=130,N=72,K=1000", "STAGES=5", 1, 0},
	{"test/cpu/tma_stages.tile", "sm_90a", "M=200,N=264,K=136;M=130,N=72,K=1000", "STAGES=5", 0, 2},
	/* two TMA pipelines in a block: their barriers initialized in every tile, not carried */
	{"test/cpu/tma_twice.tile", "sm_90a", "M=200,N=264,K=136,KH=64;M=65,N=67,K=69,KH=3", NULL, 0, 0},
	{"test/cpu/gemm_fp8_promo.tile", "sm_90a", "M=200,N=264,K=528;M=65,N=67,K=69", NULL, 1, 0},
	{"test/cpu/raster_grid.tile", "sm_90a", "X=7,Y=11;X=1,Y=2;X=13,Y=1;X=5,Y=2;X=37,Y=37", NULL, 0, 0},
	{"test/cpu/raster_grid.tile", "sm_80", "X=7,Y=11;X=1,Y=2;X=13,Y=1;X=5,Y=2;X=37,Y=37", NULL, 0, 3},
	{"test/cpu/raster_grid.tile", "sm_80", "X=7,Y=11;X=64,Y=24", NULL, 0, 8},
	{"samples/splitk_gemm.tile", "sm_90a", "M=200,N=264,K=136;M=520,N=130,K=64", NULL, 0, 0},
	{"samples/splitk_gemm.tile", "sm_80", "M=200,N=264,K=136", NULL, 0, 2},
	/* the tile's end barrier: the next tile's shared writes after this tile's reads */
	{"samples/transpose.tile", "sm_90a", "M=200,N=300;M=33,N=65;M=32,N=32", NULL, 0, 0},
	{"samples/flash_fwd.tile", "sm_80", "BH=3,L=200;BH=2,L=64", NULL, 0, 0},
	{"test/cpu/nest_broadcast.tile", "sm_80", NULL, NULL, 0, 0},
};

static char *
persist_code(int i, const char *src, size_t len)
{
	tilec_options co;
	tilec_result cr;
	char *code;

	tilec_options_init(&co);
	co.filename = persist_rows[i].file;
	co.arch = persist_rows[i].arch;
	co.warp_specialize = persist_rows[i].ws;
	co.raster_group = persist_rows[i].G;
	co.persistent = 1;
	co.dump = TILEC_DUMP_CUDA;
	co.defines = &persist_rows[i].define;
	co.ndefines = persist_rows[i].define != NULL;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", persist_rows[i].file, cr.diagnostics);
	code = strdup(cr.output);
	tilec_result_free(&cr);
	return code;
}

static void
persist_run(int i, const char *src, size_t len, const char *sizes, const char *over, tilec_run_result *r)
{
	tilec_run_options o;

	tilec_run_options_init(&o);
	o.filename = persist_rows[i].file;
	o.arch = persist_rows[i].arch;
	o.sizes = sizes ? sizes : persist_rows[i].sizes; /* NULL: the program's defaults */
	o.warp_specialize = persist_rows[i].ws;
	o.raster_group = persist_rows[i].G;
	o.persistent = 1;
	o.defines = &persist_rows[i].define;
	o.ndefines = persist_rows[i].define != NULL;
	o.cuda_override = over;
	o.seed = 1;
	o.timeout_s = 120;
	tilec_run(src, len, &o, r);
}

START_TEST(persist)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(persist_rows[_i].file, &len), *code;

	ck_assert_ptr_nonnull(src);
	code = persist_code(_i, src, len);
	ck_assert_msg(strstr(code, "// kernel ") && strstr(code, ": persistent: launch grid (min(X * Y, SMs * blocks per SM), 1, Z)") &&
		      strstr(code, "tl_tile_ += gridDim.x"), "%s: not persistent", persist_rows[_i].file);
	ck_assert_msg(!persist_rows[_i].ws || strstr(code, "tl_setmaxnreg_dec<40>"), "%s: not warp-specialized",
		      persist_rows[_i].file);
	persist_run(_i, src, len, NULL, NULL, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs > 0, "%s (%s, ws %d, G %d): status %d, %d of %d runs differ:\n%s%s",
		      persist_rows[_i].file, persist_rows[_i].arch, persist_rows[_i].ws, persist_rows[_i].G, r.status, r.differ,
		      r.runs, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

/* a pipeline whose stage bytes the shared-memory plan gives to another shared buffer gets no
 * producer warpgroup (lower_kernel.c ws_shared_alias): an epilogue buffer after the loop
 * (test/cpu/ws_epilogue.tile: the producer's loads, running ahead into the next tile's stages,
 * overwrote Cs: 2 of 3 runs differed with --persistent before) and one used only before it
 * (test/cpu/ws_prelude.tile: loads from the kernel's entry under Xs); the runs agree */
static const struct {
	const char *file, *other;
	int persistent;
} ws_alias_rows[] = {
	{"test/cpu/ws_epilogue.tile", "Cs", 0},
	{"test/cpu/ws_epilogue.tile", "Cs", 1},
	{"test/cpu/ws_prelude.tile", "Xs", 0},
};

START_TEST(ws_alias)
{
	const char *path = ws_alias_rows[_i].file;
	size_t len;
	char *src = test_readfile(path, &len);
	tilec_options co;
	tilec_result cr;
	tilec_run_options o;
	tilec_run_result r;
	char want[160];

	ck_assert_ptr_nonnull(src);
	tilec_options_init(&co);
	co.filename = path;
	co.arch = "sm_90a";
	co.warp_specialize = 1;
	co.persistent = ws_alias_rows[_i].persistent;
	co.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", path, cr.diagnostics);
	snprintf(want, sizeof want, "// not warp-specialized: the pipeline's shared buffer 'As' shares bytes with '%s'",
		 ws_alias_rows[_i].other);
	ck_assert_msg(strstr(cr.output, want) && !strstr(cr.output, "tl_setmaxnreg"),
		      "%s: warp-specialized over an aliased stage:\n%s", path, cr.output);
	tilec_result_free(&cr);
	tilec_run_options_init(&o);
	o.filename = path;
	o.arch = "sm_90a";
	o.sizes = "M=200,N=264,K=136;M=640,N=264,K=64;M=129,N=520,K=200";
	o.warp_specialize = 1;
	o.persistent = ws_alias_rows[_i].persistent;
	o.seed = 1;
	o.timeout_s = 120;
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs == 3, "%s (persistent %d): status %d, %d of %d runs differ:\n%s%s",
		      path, ws_alias_rows[_i].persistent, r.status, r.differ, r.runs, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(src);
}
END_TEST

/* a wrong persistent schedule is found: the emitted code of a persist_rows row with one
 * statement changed, run at sizes of several tiles a block (PW: gemm_sm90's TMA body, 10
 * tiles of 2 iterations on 3 blocks, so that stages and parities straddle the tiles) */
#define PW "M=640,N=264,K=128"
static const struct {
	int row;
	const char *sizes, *from, *to, *want;
} persist_wrong[] = {
	/* the consumers' parity not carried over the tiles */
	{0, PW, "tl_mbar_wait(&tl_full_ko[ko_g_ % 4], ko_g_ / 4 % 2);", "tl_mbar_wait(&tl_full_ko[ko_g_ % 4], ko / 4 % 2);",
	 "DIFFER"},
	{1, PW, "tl_mbar_wait(&tl_full_ko[ko_g_ % 4], ko_g_ / 4 % 2);", "tl_mbar_wait(&tl_full_ko[ko_g_ % 4], ko / 4 % 2);",
	 "DIFFER"},
	/* the stage not carried: every tile starts at stage 0 (and parity 0) */
	{0, PW, "const long long ko_g_ = tl_pit_ + ko;", "const long long ko_g_ = ko;", "DIFFER"},
	/* warp-specialized: the producer's count not carried (its waits for the releases) */
	{1, PW, "\t\t\t\t\ttl_pit_ = tl_pit_ + ko_n_;\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t} else {",
	 "\t\t\t\t}\n\t\t\t}\n\t\t}\n\t} else {", "DIFFER"},
	/* the tile's last stage never released (the next refill of its stage waits forever) */
	{0, PW, "tl_mbar_arrive(&tl_empty_ko[(tl_pit_ + ko_n_ - 1) % 4]);", ";", "DIFFER"},
	{1, PW, "tl_mbar_arrive(&tl_empty_ko[(tl_pit_ + ko_n_ - 1) % 4]);", ";", "DIFFER"},
	/* a refill one use early (the parity of the phase before) */
	{0, PW, "tl_mbar_wait(&tl_empty_ko[ko_g_ % 4], (ko_g_ / 4 + 1) % 2);",
	 "tl_mbar_wait(&tl_empty_ko[ko_g_ % 4], (ko_g_ / 4) % 2);", "DIFFER"},
	{1, PW, "tl_mbar_wait(&tl_empty_ko[ko_g_ % 4], (ko_g_ / 4 + 1) % 2);",
	 "tl_mbar_wait(&tl_empty_ko[ko_g_ % 4], (ko_g_ / 4) % 2);", "DIFFER"},
	/* no barrier at the end of the tile: the next tile's shared writes race this one's reads */
	{19, "M=200,N=300", "__syncthreads(); // the tile's end: its shared data read before the next tile's writes", ";",
	 "DIFFER"},
	/* a tile taken twice, another never (the loop's step) */
	{14, "X=7,Y=11", "tl_tile_ += gridDim.x", "tl_tile_ += 1", "DIFFER"},
	/* the tile's row and column from the wrong count */
	{14, "X=7,Y=11", "(int)(tl_tile_ / tl_tx_)", "(int)(tl_tile_ / tl_ty_)", "DIFFER"},
	/* the grouped order's last group taken whole */
	{15, "X=7,Y=11", "tl_ty_ - tl_fy_ < 3 ? tl_ty_ - tl_fy_ : 3;", "3;", "DIFFER"},
};

START_TEST(persist_detects)
{
	int row = persist_wrong[_i].row;
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(persist_rows[row].file, &len), *code, *bad;

	ck_assert_ptr_nonnull(src);
	code = persist_code(row, src, len);
	bad = mutate(code, persist_wrong[_i].from, persist_wrong[_i].to);
	persist_run(row, src, len, persist_wrong[_i].sizes, bad, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER && strstr(r.report, persist_wrong[_i].want),
		      "a wrong persistent schedule (%s -> %s): status %d, expected '%s':\n%s%s", persist_wrong[_i].from,
		      persist_wrong[_i].to, r.status, persist_wrong[_i].want, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(bad);
	free(code);
	free(src);
}
END_TEST

/* ---- the epilogue through shared memory (stage-epilogues, gen/lower/plan_epilogue.c): a
 * result tile written to a swizzled shared tile on the pipeline's stage bytes and stored in
 * 16-byte rows. Auto on sm_90a, forced (shared) elsewhere and with --warp-specialize (whose
 * producer warpgroup is then refused: ws_shared_alias); ragged M and N, N not a multiple of 8
 * (the element body), K of one block; the runs agree, and `direct` is the fragment's stores */
#define EPI_SIZES "M=200,N=264,K=136;M=129,N=520,K=64;M=130,N=203,K=72;M=1,N=8,K=8"
static const struct {
	const char *file, *arch, *sizes;
	int hip, mode, ws, persistent, staged;
} epi_rows[] = {
	{"samples/gemm_sm90.tile", "sm_90a", EPI_SIZES, 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"samples/gemm_sm90.tile", "sm_90a", EPI_SIZES, 0, TILEC_EPILOGUE_AUTO, 0, 1, 1},
	{"samples/gemm_sm90.tile", "sm_90a", "M=200,N=264,K=136", 0, TILEC_EPILOGUE_DIRECT, 0, 0, 0},
	/* auto leaves a warp-specialized kernel alone; forced, its producer is refused */
	{"samples/gemm_sm90.tile", "sm_90a", "M=200,N=264,K=136", 0, TILEC_EPILOGUE_AUTO, 1, 0, 0},
	{"samples/gemm_sm90.tile", "sm_90a", "M=200,N=264,K=136;M=640,N=264,K=64", 0, TILEC_EPILOGUE_SHARED, 1, 1, 1},
	{"samples/gemm_bf16.tile", "sm_90a", "M=200,N=264,K=128;M=129,N=520,K=64;M=130,N=203,K=192;M=1,N=8,K=64", 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"samples/gemm.tile", "sm_90a", EPI_SIZES, 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"samples/gemm.tile", "sm_80", EPI_SIZES, 0, TILEC_EPILOGUE_AUTO, 0, 0, 0},
	{"samples/gemm.tile", "sm_80", EPI_SIZES, 0, TILEC_EPILOGUE_SHARED, 0, 0, 1},
	{"samples/gemm.tile", "gfx90a", "M=200,N=264,K=136;M=130,N=203,K=72", 1, TILEC_EPILOGUE_SHARED, 0, 0, 1},
	{"samples/gemm_strided.tile", "sm_90a", NULL, 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"samples/flash_fwd.tile", "sm_90a", "BH=3,L=200;BH=2,L=64", 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"test/cpu/gemm_fp8_promo.tile", "sm_90a", "M=200,N=264,K=528;M=65,N=67,K=69", 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"test/cpu/gemm_int8.tile", "sm_90a", NULL, 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
	{"test/gpu/gemm_fp8_bench.tile", "sm_90a", "M=200,N=264,K=256;M=130,N=136,K=128", 0, TILEC_EPILOGUE_AUTO, 0, 0, 1},
};

/* the options of a row of the tables below (epilogue, rotate, tma_body): what diff_code
 * compiles and diff_run runs */
typedef struct DiffOpt {
	const char *file, *arch, *define;
	int hip, notma, ws, persistent, epilogue;
} DiffOpt;

/* the emitted code of o's program (with the log of print_after's dump into *log, if asked) */
static char *
diff_code(DiffOpt o, const char *src, size_t len, const char *print_after, char **log)
{
	tilec_options co;
	tilec_result cr;
	const char *defs[1] = {o.define};
	char *code;

	tilec_options_init(&co);
	co.filename = o.file;
	co.target = o.hip ? TILEC_TARGET_HIP : TILEC_TARGET_CUDA;
	co.arch = o.arch;
	co.defines = defs;
	co.ndefines = o.define != NULL;
	co.tma = !o.notma;
	co.warp_specialize = o.ws;
	co.persistent = o.persistent;
	co.epilogue = o.epilogue;
	co.print_after = print_after;
	co.dump = TILEC_DUMP_CUDA; /* the code of either target */
	tilec_compile(src, len, &co, &cr);
	ck_assert_msg(cr.status == TILEC_OK, "%s: %s", o.file, cr.diagnostics);
	code = strdup(cr.output);
	if (log)
		*log = strdup(cr.log);
	tilec_result_free(&cr);
	return code;
}

/* the CPU run of o's program at sizes, with the code over instead of the emitted one if given */
static void
diff_run(DiffOpt o, const char *src, size_t len, const char *sizes, const char *over, tilec_run_result *r)
{
	tilec_run_options ro;
	const char *defs[1] = {o.define};

	tilec_run_options_init(&ro);
	ro.filename = o.file;
	ro.target = o.hip ? TILEC_TARGET_HIP : TILEC_TARGET_CUDA;
	ro.arch = o.arch;
	ro.sizes = sizes;
	ro.defines = defs;
	ro.ndefines = o.define != NULL;
	ro.tma = !o.notma;
	ro.warp_specialize = o.ws;
	ro.persistent = o.persistent;
	ro.epilogue = o.epilogue;
	ro.cuda_override = over;
	ro.seed = 1;
	ro.timeout_s = 120;
	tilec_run(src, len, &ro, r);
}

static DiffOpt
epi_opt(int i)
{
	return (DiffOpt){epi_rows[i].file, epi_rows[i].arch, NULL, epi_rows[i].hip, 0, epi_rows[i].ws,
			 epi_rows[i].persistent, epi_rows[i].mode};
}



START_TEST(epilogue)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(epi_rows[_i].file, &len), *code;
	int staged;

	ck_assert_ptr_nonnull(src);
	code = diff_code(epi_opt(_i), src, len, NULL, NULL);
	staged = strstr(code, "// epilogue: ") && strstr(code, " through shared memory ") &&
		 strstr(code, "_epi = (");
	ck_assert_msg(staged == epi_rows[_i].staged, "%s (%s, mode %d, ws %d): staged %d, expected %d", epi_rows[_i].file,
		      epi_rows[_i].arch, epi_rows[_i].mode, epi_rows[_i].ws, staged, epi_rows[_i].staged);
	/* forced under --warp-specialize: the stage bytes are shared, so no producer warpgroup */
	ck_assert_msg(!(epi_rows[_i].ws && staged) || (strstr(code, "// not warp-specialized: ") &&
						       !strstr(code, "tl_setmaxnreg")),
		      "%s: warp-specialized over the staged epilogue", epi_rows[_i].file);
	ck_assert_msg(!epi_rows[_i].ws || staged || strstr(code, "tl_setmaxnreg"), "%s: not warp-specialized",
		      epi_rows[_i].file);
	diff_run(epi_opt(_i), src, len, epi_rows[_i].sizes, NULL, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs > 0, "%s (%s, mode %d, ws %d, persistent %d): status %d, %d of %d runs differ:\n%s%s",
		      epi_rows[_i].file, epi_rows[_i].arch, epi_rows[_i].mode, epi_rows[_i].ws, epi_rows[_i].persistent,
		      r.status, r.differ, r.runs, r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

/* a wrong staged epilogue is found (row 0's code, one statement changed): the barrier between
 * the fragment's writes and the row reads dropped, the read side without the swizzle. (The
 * barrier after the pipeline is not a mutation here: in gemm_sm90 a warpgroup's rows of
 * acc_epi fall on its own rows of As's stages, so dropping it changes no value; the hazard
 * analysis of lower_kernel.c puts it for the aliased bytes anyway.) */
static const struct {
	const char *sizes, *from, *to;
} epi_wrong[] = {
	{"M=200,N=264,K=136", "__syncthreads();\n\t\t#pragma unroll\n\t\tfor (int it = 0; it < 16; it++) {",
	 "\n\t\t#pragma unroll\n\t\tfor (int it = 0; it < 16; it++) {"},
	{"M=200,N=264,K=136", "*(const uint4 *)(&acc_epi[(((((c / 64) * 8192) + (r * 64)) + (c % 8)) + ((((c / 8) % 8) ^ (r % 8)) * 8))])",
	 "*(const uint4 *)(&acc_epi[(((((c / 64) * 8192) + (r * 64)) + (c % 8)) + ((((c / 8) % 8)) * 8))])"},
};

START_TEST(epilogue_detects)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(epi_rows[0].file, &len), *code, *bad;

	ck_assert_ptr_nonnull(src);
	code = diff_code(epi_opt(0), src, len, NULL, NULL);
	bad = mutate(code, epi_wrong[_i].from, epi_wrong[_i].to);
	diff_run(epi_opt(0), src, len, epi_wrong[_i].sizes, bad, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER && strstr(r.report, "DIFFER"),
		      "a wrong epilogue (%s -> %s): status %d:\n%s%s", epi_wrong[_i].from, epi_wrong[_i].to, r.status,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(bad);
	free(code);
	free(src);
}
END_TEST

/* the rotated pipeline (plan_pipeline.c rotate_plan): the last gemm of iteration kb issued in
 * kb + 1 after the first, in flight over the statements that leave its accumulator alone (a
 * cp.async pipeline: these rows are compiled without TMA, which loads the K/V blocks of a
 * 3-D tensor otherwise). Each row: the program, its -D, the sizes (several key blocks,
 * ragged, one block), whether the code is rotated */
static const struct {
	const char *file, *define, *sizes;
	int rotated;
} rot_rows[] = {
	{"samples/flash_fwd.tile", NULL, "BH=3,L=300;BH=2,L=64;BH=1,L=1", 1},
	{"samples/flash_fwd.tile", "CAUSAL=1", "BH=2,L=300;BH=1,L=130", 1},
	{"samples/flash_fwd.tile", "D=64", "BH=2,L=200;BH=1,L=257", 1},
	{"samples/flash_fwd.tile", "BN=128", "BH=2,L=300;BH=1,L=129", 1},
	{"samples/flash_fwd.tile", "STAGES=4", "BH=2,L=400", 1},
	{"samples/flash_fwd.tile", "STAGES=2", "BH=2,L=200", 0},
	{"test/cpu/rotate_chain.tile", NULL, "BH=2,L=300,W=64;BH=1,L=200,W=67;BH=1,L=64,W=72;BH=1,L=1,W=70", 1},
	/* 128 threads, D = 32: mma.sync gemms at sm_90a too, in order */
	{"test/cpu/flash_causal.tile", "STAGES=3", "BH=2,L=300;BH=1,L=1", 0},
	{"test/cpu/flash_bshd.tile", "STAGES=3", "B=2,L=200,H=3", 1},
	{"test/cpu/flash_smem_p.tile", NULL, "BH=2,L=200", 0},
};

/* compiled without TMA: the rotation is of cp.async pipelines */
static DiffOpt
rot_opt(int i)
{
	return (DiffOpt){rot_rows[i].file, "sm_90a", rot_rows[i].define, 0, 1, 0, 0, TILEC_EPILOGUE_AUTO};
}



START_TEST(rotate)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(rot_rows[_i].file, &len), *code;
	int rotated;

	ck_assert_ptr_nonnull(src);
	code = diff_code(rot_opt(_i), src, len, NULL, NULL);
	rotated = strstr(code, " runs one iteration late, overlapping the next iteration's statements") &&
		  strstr(code, "_prev_ = ") && strstr(code, "tl_wgmma_wait1();");
	ck_assert_msg(rotated == rot_rows[_i].rotated, "%s -D %s: rotated %d, expected %d", rot_rows[_i].file,
		      rot_rows[_i].define ? rot_rows[_i].define : "-", rotated, rot_rows[_i].rotated);
	diff_run(rot_opt(_i), src, len, rot_rows[_i].sizes, NULL, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs > 0, "%s -D %s: status %d, %d of %d runs differ:\n%s%s",
		      rot_rows[_i].file, rot_rows[_i].define ? rot_rows[_i].define : "-", r.status, r.differ, r.runs,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

/* a wrong rotation is found (row 0's code, one text changed everywhere): the accumulator read
 * before the wait that retires the last gemm, the scores read before theirs, no empty group in
 * iteration 0 (wait_group 1 leaves the scores' group in flight), the last gemm on the stage of
 * the current iteration instead of the previous one, the last iteration's gemm after the loop
 * dropped, loads S - 1 ahead (the stage the last gemm reads refilled while it is in flight) */
static const struct {
	const char *from[4], *to[4];
} rot_wrong[] = {
	{{"tl_wgmma_wait0(); // the previous iteration's gemm into acc retired"}, {"// (no wait)"}},
	{{"tl_wgmma_wait1();   // s_'s group retired"}, {"// (no wait)"}},
	{{"tl_wgmma_commit(); // an empty group"}, {"// (no group)"}},
	{{"const int kb = kb_prev_;"}, {"const int kb = kb_prev_ + 1;"}},
	{{"if (kb_n_ > 0) {"}, {"if (kb_n_ < 0) {"}},
	{{"for (int st = 0; st < 1; st++) {", "if (kb + 1 < kb_n_) {", "const int kb_next_ = kb + 1;",
	  "tl_cp_async_wait<0>();\n\t\ttl_fence_proxy_async();"},
	 {"for (int st = 0; st < 2; st++) {", "if (kb + 2 < kb_n_) {", "const int kb_next_ = kb + 2;",
	  "tl_cp_async_wait<1>();\n\t\ttl_fence_proxy_async();"}},
};

START_TEST(rotate_detects)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(rot_rows[0].file, &len), *code, *bad;
	int k;

	ck_assert_ptr_nonnull(src);
	code = diff_code(rot_opt(0), src, len, NULL, NULL);
	for (k = 0; k < 4 && rot_wrong[_i].from[k]; k++) {
		bad = mutate(code, rot_wrong[_i].from[k], rot_wrong[_i].to[k]);
		free(code);
		code = bad;
	}
	diff_run(rot_opt(0), src, len, "BH=2,L=300", code, &r);
	ck_assert_msg(r.status == TILEC_ERR_DIFFER && strstr(r.report, "DIFFER"),
		      "a wrong rotation (%s -> %s): status %d:\n%s%s", rot_wrong[_i].from[0], rot_wrong[_i].to[0], r.status,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

/* TMA for a pipeline body that is not only loads and wgmma gemms (plan_pipeline.c
 * general_body; FlashAttention's K/V blocks are boxes of one plane of [BH, L, D]): thread 0
 * loads each stage onto its full barrier, every warp releases the stage at the end of its
 * iteration, and the loop has no __syncthreads. Each row: the program, its -D, tilec flags
 * (persistent, warp-specialized), the sizes, whether the body loads with TMA (else the reason
 * in the plan dump) */
static const struct {
	const char *file, *define, *sizes;
	int persist, ws;
	const char *why; /* NULL: TMA, no barrier in the loop */
} tb_rows[] = {
	{"samples/flash_fwd.tile", NULL, "BH=3,L=300;BH=2,L=64;BH=1,L=1", 0, 0, NULL},
	{"samples/flash_fwd.tile", "CAUSAL=1", "BH=2,L=300;BH=1,L=130", 0, 0, NULL},
	{"samples/flash_fwd.tile", "D=64", "BH=2,L=200;BH=1,L=257", 0, 0, NULL},
	{"samples/flash_fwd.tile", "BN=128", "BH=2,L=300;BH=1,L=129", 0, 0, NULL},
	{"samples/flash_fwd.tile", "STAGES=2", "BH=2,L=200;BH=1,L=65", 0, 0, NULL},
	{"samples/flash_fwd.tile", "STAGES=4", "BH=2,L=400", 0, 0, NULL},
	/* rows of W elements: W not a multiple of 8 takes the element-by-element loads */
	{"test/cpu/rotate_chain.tile", NULL, "BH=2,L=300,W=64;BH=1,L=200,W=67;BH=1,L=1,W=70", 0, 0, NULL},
	/* 128 threads, mma.sync gemms reading the TMA stages with ldmatrix */
	{"test/cpu/flash_causal.tile", "STAGES=3", "BH=2,L=300;BH=1,L=1", 0, 0, NULL},
	{"test/cpu/flash_bshd.tile", "STAGES=3", "B=2,L=200,H=3", 0, 0, "TMA is lowered for 2D tiles of 2D tensors and of one plane of 3D tensors"},
	{"test/cpu/flash_smem_p.tile", NULL, "BH=2,L=200", 0, 0, "writes shared memory ('p'): the loop keeps its barrier"},
	{"samples/flash_fwd.tile", NULL, "BH=2,L=300", 1, 0, "a persistent kernel's TMA pipeline is lowered for those only"},
	{"samples/flash_fwd.tile", NULL, "BH=2,L=300", 0, 1, "a warp-specialized TMA pipeline is lowered for those only"},
};

static DiffOpt
tb_opt(int i)
{
	return (DiffOpt){tb_rows[i].file, "sm_90a", tb_rows[i].define, 0, 0, tb_rows[i].ws, tb_rows[i].persist,
			 TILEC_EPILOGUE_AUTO};
}



/* the text of the first loop over kb (to its closing brace, at the loop's indentation) */
static char *
tb_loop(const char *code)
{
	const char *a = strstr(code, "for (int kb = 0; kb < kb_n_; kb++) {"), *l = a, *b;
	char close[40] = "\n";

	ck_assert_msg(a != NULL, "no loop over kb:\n%.3000s", code);
	while (l > code && l[-1] == '\t')
		l--;
	ck_assert(a - l < 30);
	memcpy(close + 1, l, (size_t)(a - l));
	strcpy(close + 1 + (a - l), "}\n");
	b = strstr(a, close);
	ck_assert_msg(b != NULL, "no end of the loop over kb:\n%.3000s", a);
	return strndup(a, (size_t)(b - a));
}

START_TEST(tma_body)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(tb_rows[_i].file, &len), *code, *plan = NULL;

	ck_assert_ptr_nonnull(src);
	code = diff_code(tb_opt(_i), src, len, "plan-pipelines", &plan);
	if (tb_rows[_i].why) {
		ck_assert_msg(!strstr(code, "released by every warp at the end of its iteration"), "%s: TMA body", tb_rows[_i].file);
		ck_assert_msg(strstr(plan, tb_rows[_i].why), "%s: no '%s' in the plan:\n%.3000s", tb_rows[_i].file,
			      tb_rows[_i].why, strstr(plan, "// pipelines of") ? strstr(plan, "// pipelines of") : plan);
	} else {
		char *loop = tb_loop(code);

		ck_assert_msg(strstr(code, "released by every warp at the end of its iteration (no barrier in the loop)") &&
				      strstr(loop, "tl_tma_load_") && strstr(loop, "__syncwarp();") &&
				      !strstr(loop, "__syncthreads") && !strstr(loop, "tl_cp_async"),
			      "%s -D %s: not a TMA loop without barriers:\n%.3000s", tb_rows[_i].file,
			      tb_rows[_i].define ? tb_rows[_i].define : "-", loop);
		free(loop);
	}
	diff_run(tb_opt(_i), src, len, tb_rows[_i].sizes, NULL, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE && r.runs > 0, "%s -D %s: status %d, %d of %d runs differ:\n%.2000s%.2000s",
		      tb_rows[_i].file, tb_rows[_i].define ? tb_rows[_i].define : "-", r.status, r.differ, r.runs,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(plan);
	free(code);
	free(src);
}
END_TEST

/* a wrong TMA body is found (row 0's code, one text changed everywhere): thread 0 refills a
 * stage without waiting for its release, the full barrier waited on with the wrong parity
 * (the stage read before it landed), no warp releasing its stage (thread 0 waits forever) */
static const struct {
	const char *from[2], *to[2];
} tb_wrong[] = {
	{{"tl_mbar_wait(&tl_empty_kb[kb_next_ % 3], (kb_next_ / 3 + 1) % 2);"}, {"/* no wait */"}},
	{{"tl_mbar_wait(&tl_full_kb[kb % 3], kb / 3 % 2);"}, {"tl_mbar_wait(&tl_full_kb[kb % 3], (kb / 3 + 1) % 2);"}},
	{{"\t\t__syncwarp();\n\t\tif (lane == 0)\n\t\t\ttl_mbar_arrive(&tl_empty_kb[kb % 3]);"},
	 {"\t\t__syncwarp();\n\t\tif (lane == 0)\n\t\t\t(void)0;"}},
};

START_TEST(tma_body_detects)
{
	tilec_run_result r;
	size_t len;
	char *src = test_readfile(tb_rows[0].file, &len), *code, *bad;
	int k;

	ck_assert_ptr_nonnull(src);
	code = diff_code(tb_opt(0), src, len, NULL, NULL);
	for (k = 0; k < 2 && tb_wrong[_i].from[k]; k++) {
		bad = mutate(code, tb_wrong[_i].from[k], tb_wrong[_i].to[k]);
		free(code);
		code = bad;
	}
	diff_run(tb_opt(0), src, len, "BH=2,L=600", code, &r);
	ck_assert_msg(r.status != TILEC_RUN_AGREE && (strstr(r.report, "DIFFER") || strstr(r.diagnostics, "error")),
		      "a wrong TMA body (%s -> %s): status %d:\n%.2000s%.2000s", tb_wrong[_i].from[0], tb_wrong[_i].to[0], r.status,
		      r.diagnostics, r.report);
	tilec_run_result_free(&r);
	free(code);
	free(src);
}
END_TEST

START_TEST(extra_arch)
{
	run_one(extra[_i].file, extra[_i].arch, extra[_i].sizes, extra[_i].define, NULL);
}
END_TEST

/* the check itself: wrong code is reported, not passed. The emitted code is replaced by
 * hand-written CUDA C (cuda_override) that is wrong in one way each. */
#define SCALE_SRC \
	"kernel k(A: f32[N], B: f32[N]) grid(cdiv(N, 128)) threads(128) {\n" \
	"  for i in parallel(128) { B[bx * 128 + i] = A[bx * 128 + i] * 2.0; }\n}\n"
#define SCALE_HEAD \
	"#include \"tilec_cuda.h\"\n// kernel k: 128 threads, 0 bytes of dynamic shared memory\n" \
	"extern \"C\" __global__ void k(float *A, float *B, int N)\n{\n\tconst int i = blockIdx.x * 128 + threadIdx.x;\n"

static const struct {
	const char *cuda, *expect;   /* the wrong kernel, a text of the report */
} wrong[] = {
	/* right: agrees (the control) */
	{SCALE_HEAD "\tif (i < N) B[i] = A[i] * 2.0f;\n}\n", NULL},
	/* a wrong value in the last element */
	{SCALE_HEAD "\tif (i < N) B[i] = i == N - 1 ? 0.0f : A[i] * 2.0f;\n}\n", "1 differ; first at [299]"},
	/* 1 ulp off: exact elements are compared bit for bit */
	{SCALE_HEAD "\tif (i < N) B[i] = nextafterf(A[i] * 2.0f, 10.0f);\n}\n", "300 differ"},
	/* no guard: a write past the end of B */
	{SCALE_HEAD "\tB[i] = A[i] * 2.0f;\n}\n", "tensor 'A'"},
	/* writes an input */
	{SCALE_HEAD "\tif (i < N) { B[i] = A[i] * 2.0f; A[i] = 0.0f; }\n}\n", "A f32[300]"},
	/* a barrier that half the threads skip */
	{SCALE_HEAD "\tif (threadIdx.x < 64) __syncthreads();\n\tif (i < N) B[i] = A[i] * 2.0f;\n}\n", "barrier"},
};

START_TEST(detects)
{
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.sizes = "N=300";
	o.cuda_override = wrong[_i].cuda;
	o.timeout_s = 60;
	tilec_run(SCALE_SRC, strlen(SCALE_SRC), &o, &r);
	if (!wrong[_i].expect) {
		ck_assert_msg(r.status == TILEC_RUN_AGREE, "%s%s", r.diagnostics, r.report);
	} else {
		ck_assert_msg(r.status == TILEC_RUN_DIFFER, "status %d:\n%s%s", r.status, r.diagnostics, r.report);
		ck_assert_msg(strstr(r.report, wrong[_i].expect) != NULL, "no '%s' in\n%s", wrong[_i].expect,
			      r.report);
	}
	tilec_run_result_free(&r);
}
END_TEST

START_TEST(usage)
{
	static const char src[] = "kernel k(A: f32[N]) grid(1) threads(32) { for i in parallel(32) { A[i] = 1.0; } }\n";
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.sizes = "N=";
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_USAGE);
	ck_assert_ptr_nonnull(strstr(r.diagnostics, "not a number"));
	tilec_run_result_free(&r);
	o.sizes = "Q=3";
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_ERROR);
	ck_assert_ptr_nonnull(strstr(r.report, "not a size or scalar"));
	tilec_run_result_free(&r);
	o.sizes = NULL;
	o.arch = "gfx90a";
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_USAGE);
	tilec_run_result_free(&r);
	o.arch = NULL;
	o.kernel = "nope";
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_USAGE);
	tilec_run_result_free(&r);
	ck_assert_int_eq(tilec_run("kernel", 6, NULL, &r), TILEC_RUN_ERROR);
	ck_assert_ptr_nonnull(strstr(r.diagnostics, "error"));
	tilec_run_result_free(&r);
	ck_assert_int_eq(tilec_run(src, strlen(src), NULL, NULL), TILEC_RUN_USAGE);
}
END_TEST

/* strided tensors (the emitted code is checked with the test/cpu/strided_*.tile rows
 * above): against hand-written CUDA C (cuda_override) tilec run allocates padded views (stride symbols not given: the reach of the other dims + 3),
 * passes the strides as sizes, compares the views and checks that the padding is left
 * alone */
#define STRIDED_SRC \
	"kernel k(A: f32[M, 64] strides(lda, 1), B: f32[M, 64] strides(ldb, 1),\n" \
	"         C: f32[64, M] strides(1, ldc)) grid(cdiv(M, 16)) threads(64) {\n" \
	"  for i, j in parallel(16, 64) { B[bx * 16 + i, j] = A[bx * 16 + i, j] * 2.0;\n" \
	"    C[j, bx * 16 + i] = A[bx * 16 + i, j]; }\n}\n"
#define STRIDED_HEAD \
	"#include \"tilec_cuda.h\"\n// kernel k: 64 threads, 0 bytes of dynamic shared memory\n" \
	"extern \"C\" __global__ void k(float *A, float *B, float *C, int M, int lda, int ldb, int ldc)\n{\n" \
	"\tfor (int e = threadIdx.x; e < 16 * 64; e += 64) {\n" \
	"\t\tint i = blockIdx.x * 16 + e / 64, j = e % 64;\n\t\tif (i >= M) continue;\n"

static const struct {
	const char *cuda, *sizes, *expect; /* expect: a text of the report (status: agree iff NULL) */
} strided[] = {
	/* right, with the default strides: lda = ldb = 64 + 3, ldc = 64 + 3 */
	{STRIDED_HEAD "\t\tB[i * ldb + j] = A[i * lda + j] * 2.0f;\n\t\tC[j + i * ldc] = A[i * lda + j];\n\t}\n}\n",
	 "M=40", NULL},
	{STRIDED_HEAD "\t\tB[i * ldb + j] = A[i * lda + j] * 2.0f;\n\t\tC[j + i * ldc] = A[i * lda + j];\n\t}\n}\n",
	 "M=40,lda=100,ldc=64", NULL},
	/* as if dense: reads the wrong elements */
	{STRIDED_HEAD "\t\tB[i * ldb + j] = A[i * 64 + j] * 2.0f;\n\t\tC[j + i * ldc] = A[i * lda + j];\n\t}\n}\n",
	 "M=40", "B f32[40, 64]: 2560 elements, 2496 differ"},
	/* a store into the padding of B */
	{STRIDED_HEAD "\t\tB[i * ldb + j + (i == 3 && j == 63)] = A[i * lda + j] * 2.0f;\n"
	 "\t\tC[j + i * ldc] = A[i * lda + j];\n\t}\n}\n",
	 "M=40", "B: 1 element outside the view (strides(67, 1), 2677 storage elements) written by the emitted "
	 "code; first at offset 265"},
	/* the transposed view written row-major */
	{STRIDED_HEAD "\t\tB[i * ldb + j] = A[i * lda + j] * 2.0f;\n\t\tC[j * ldc + i] = A[i * lda + j];\n\t}\n}\n",
	 "M=40,ldc=64", "out-of-bounds access to tensor 'C'"},
};

START_TEST(strided_views)
{
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.sizes = strided[_i].sizes;
	o.cuda_override = strided[_i].cuda;
	o.timeout_s = 60;
	tilec_run(STRIDED_SRC, strlen(STRIDED_SRC), &o, &r);
	if (!strided[_i].expect) {
		ck_assert_msg(r.status == TILEC_RUN_AGREE, "%s%s", r.diagnostics, r.report);
		ck_assert_msg(strstr(r.report, _i ? "k [M=40,lda=100,ldb=67,ldc=64]" : "k [M=40,lda=67,ldb=67,ldc=67]"),
			      "%s", r.report);
	} else {
		ck_assert_msg(r.status == TILEC_RUN_DIFFER, "status %d:\n%s%s", r.status, r.diagnostics, r.report);
		ck_assert_msg(strstr(r.report, strided[_i].expect) != NULL, "no '%s' in\n%s", strided[_i].expect,
			      r.report);
	}
	tilec_run_result_free(&r);
}
END_TEST

Suite *
suite_cpu_diff(void)
{
	Suite *s = suite_create("cpu_diff");
	TCase *tc = tcase_create("core");

	collect_files();
	tcase_set_timeout(tc, 1800);
	tcase_add_loop_test(tc, program, 0, (int)files.gl_pathc);
#ifndef SAN_BUILD
	tcase_add_loop_test(tc, extra_arch, 0, countof(extra));
#else
	(void)extra_arch; /* the extra runs are the normal build's (their time under ASan) */
#endif
	tcase_add_test(tc, default_tiers);
	tcase_add_loop_test(tc, tma, 0, countof(tma_rows));
	tcase_add_loop_test(tc, tma_detects, 0, countof(tma_wrong));
	tcase_add_loop_test(tc, promo_detects, 0, countof(promo_wrong));
	tcase_add_loop_test(tc, ws_alias, 0, countof(ws_alias_rows));
	tcase_add_loop_test(tc, raster, 0, countof(raster_rows));
	tcase_add_loop_test(tc, raster_detects, 0, countof(raster_wrong));
	tcase_add_loop_test(tc, persist, 0, countof(persist_rows));
	tcase_add_loop_test(tc, persist_detects, 0, countof(persist_wrong));
	tcase_add_loop_test(tc, epilogue, 0, countof(epi_rows));
	tcase_add_loop_test(tc, epilogue_detects, 0, countof(epi_wrong));
	tcase_add_loop_test(tc, rotate, 0, countof(rot_rows));
	tcase_add_loop_test(tc, rotate_detects, 0, countof(rot_wrong));
	tcase_add_loop_test(tc, tma_body, 0, countof(tb_rows));
	tcase_add_loop_test(tc, tma_body_detects, 0, countof(tb_wrong));
	tcase_add_loop_test(tc, detects, 0, countof(wrong));
	tcase_add_loop_test(tc, strided_views, 0, countof(strided));
	tcase_add_test(tc, usage);
	suite_add_tcase(s, tc);
	return s;
}
