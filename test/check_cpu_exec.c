/*
 * check_cpu_exec.c: templates/tilec_cpu.h, the CPU run of emitted CUDA C
 * (cpu/cpuexec.h).
 *  - unit: the hand-written kernels of test/cpu_exec_kernels.cu (one build for
 *    all, a dispatching trampoline) against the tables of test/cpu_exec_ref.h:
 *    shuffles, ldmatrix x4 / x4.trans, mma.sync m16n8k16 f16/bf16, the
 *    conversions, wgmma m64nNk16 under every swizzle mode and both B majors,
 *    the asynchrony of cp.async and wgmma, and what the emulation must report
 *    (barrier divergence, deadlocks, out-of-bounds tensors and shared memory,
 *    stack overflow, races on pending copies, a bad job file);
 *  - samples: copy, transpose, elementwise, convert, softmax, gemm, gemm_bf16
 *    (sm_80) and gemm, gemm_sm90, gemm_bf16 (sm_90a: wgmma) emitted by the library, built
 *    once each with cpuexec_entry's trampoline and run on ragged sizes against
 *    references computed here.
 * test/gpu/cpu_emul.sh runs the unit kernels on an H200 against the same tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ast.h"
#include "cpuexec.h"
#include "lower.h"
#include "sema.h"
#include "tests.h"
#include "tileglue.h"

#include "cpu_exec_ref.h"

/* ---- helpers -------------------------------------------------------------------------- */

static unsigned rng_state = 12345;

static unsigned
rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static CpuArg
tensor(const char *name, void *data, size_t bytes)
{
	CpuArg a = {name, CPUARG_PTR, data, bytes};

	return a;
}

static CpuArg
value(const char *name, int *v)
{
	CpuArg a = {name, CPUARG_VAL, v, sizeof *v};

	return a;
}

/* run x; 0 when it ran, 1 with the emulation's message in msg, -1 on other failures */
static int
run(const CpuExe *x, CpuArg *args, int n, unsigned grid, unsigned threads, size_t smem, char *msg, size_t msgsz)
{
	CpuLaunch l = {{grid, 1, 1}, {threads, 1, 1}, smem};
	Err e = {0};
	Buf log;
	int rc;

	buf_init(&log);
	rc = cpuexec_run(x, args, n, &l, 120, &log, &e);
	snprintf(msg, msgsz, "%s%s%.300s", e.msg, rc < 0 ? " | " : "", rc < 0 ? buf_str(&log) : "");
	buf_free(&log);
	return rc;
}

/* ---- the unit kernels: one build for the tcase (an unchecked fixture, in the parent) ---- */

static CpuExe unit;
static int unit_built;
static char unit_error[4096];

static void
unit_setup(void)
{
	char *src = test_readfile("test/cpu_exec_kernels.cu", NULL);
	Err e = {0};
	Buf log;

	buf_init(&log);
	if (!src)
		snprintf(unit_error, sizeof unit_error, "cannot read test/cpu_exec_kernels.cu");
	else if (cpuexec_build(&unit, src, NULL, NULL, NULL, 0, &log, &e))
		snprintf(unit_error, sizeof unit_error, "%s: %.1800s", e.msg, buf_str(&log));
	else
		unit_built = 1;
	buf_free(&log);
	free(src);
}

static void
unit_teardown(void)
{
	if (unit_built)
		cpuexec_free(&unit);
}

#define UNIT() ck_assert_msg(unit_built, "%s", unit_error)

/* run unit kernel sel; expect success */
#define RUN_OK(args, n, grid, threads, smem)                                                               \
	do {                                                                                               \
		char m_[1024];                                                                             \
		int rc_ = run(&unit, args, n, grid, threads, smem, m_, sizeof m_);                        \
		ck_assert_msg(rc_ == 0, "run failed (%d): %s", rc_, m_);                                   \
	} while (0)

/* run; expect the emulation to report an error containing want */
static void
run_fails(CpuArg *args, int n, unsigned grid, unsigned threads, size_t smem, const char *want)
{
	char m[1024];
	int rc = run(&unit, args, n, grid, threads, smem, m, sizeof m);

	ck_assert_msg(rc == 1, "expected a run-time error with \"%s\", got %d: %s", want, rc, m);
	ck_assert_msg(strstr(m, want), "expected \"%s\" in: %s", want, m);
}

START_TEST(shuffles)
{
	static unsigned out[64 * 16];
	static double outd[64];
	int sel = 0;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), tensor("outd", outd, sizeof outd)};

	UNIT();
	RUN_OK(a, 3, 1, 64, 0);
	for (int t = 0; t < 64; t++) {
		int l = t % 32, w = t - l;
		unsigned e[16];
#define V(lane) ((unsigned)(w + (lane)) * 1000u + 7u)
		e[0] = V(ref_shfl_xor(l, 1, 32));
		e[1] = V(ref_shfl_xor(l, 16, 32));
		e[2] = V(ref_shfl_xor(l, 5, 8));
		e[3] = V(ref_shfl_xor(l, 4, 4));
		e[4] = V(ref_shfl_idx(l, 3, 32));
		e[5] = V(ref_shfl_idx(l, l + 5, 32));
		e[6] = V(ref_shfl_idx(l, l ^ 1, 8));
		e[7] = V(ref_shfl_idx(l, 9, 8));
		e[8] = V(ref_shfl_up(l, 3, 32));
		e[9] = V(ref_shfl_up(l, 2, 8));
		e[10] = V(ref_shfl_down(l, 3, 32));
		e[11] = V(ref_shfl_down(l, 5, 16));
		e[12] = ref_fbits((float)V(ref_shfl_down(l, 1, 32)));
		e[13] = V(ref_shfl_idx(l, 31 - l, 32));
		e[14] = ref_fbits((float)(l / 8 * 8 * 8 + 28)); /* sum of the lanes of its 8-group */
		e[15] = ref_fbits(31.0f);
#undef V
		for (int i = 0; i < 16; i++)
			ck_assert_msg(out[t * 16 + i] == e[i], "thread %d result %d: %u, expected %u", t, i, out[t * 16 + i],
				      e[i]);
		ck_assert(outd[t] == (double)((w + ref_shfl_xor(l, 3, 32)) * 1000u + 7u) + 0.5);
	}
}
END_TEST

START_TEST(ldmatrix)
{
	static unsigned short src[256];
	static unsigned out[128];
	int sel = 1, trans = _i;
	CpuArg a[] = {value("sel", &sel), tensor("src", src, sizeof src), tensor("out", out, sizeof out),
		      value("trans", &trans)};

	UNIT();
	for (int i = 0; i < 256; i++)
		src[i] = (unsigned short)(rnd() & 0xffff);
	RUN_OK(a, 4, 1, 32, 512);
	for (int m = 0; m < 4; m++)
		for (int r = 0; r < 8; r++)
			for (int c = 0; c < 8; c++) {
				int lane, reg, half, slot = ((m * 8 + r) * 5) % 32; /* the kernel's row addresses */
				unsigned short want = src[slot * 8 + c], got;

				ref_ldmatrix_dest(m, r, c, trans, &lane, &reg, &half);
				got = (unsigned short)(out[lane * 4 + reg] >> (16 * half));
				ck_assert_msg(got == want, "%s matrix %d (%d,%d): lane %d reg %d half %d holds 0x%04x, expected "
					      "0x%04x",
					      trans ? "trans" : "", m, r, c, lane, reg, half, got, want);
			}
}
END_TEST

START_TEST(mma)
{
	static unsigned ar[128], br[64];
	static float cr[128], dr[128];
	float A[16][16], B[16][8], C[16][8];
	int sel = 2, bf = _i;
	CpuArg a[] = {value("sel", &sel), tensor("a", ar, sizeof ar), tensor("b", br, sizeof br),
		      tensor("c", cr, sizeof cr), tensor("d", dr, sizeof dr), value("bf", &bf)};

	UNIT();
	memset(ar, 0, sizeof ar);
	memset(br, 0, sizeof br);
	/* distinct-ish small values: every product and sum exact in f32 */
	for (int r = 0; r < 16; r++)
		for (int k = 0; k < 16; k++) {
			int lane, reg, half;
			float v = (float)((int)(rnd() % 17) - 8) / 4;
			uint16_t h = bf ? ref_f2bf(v) : ref_f2h(v);

			A[r][k] = v;
			ref_mma_a_dest(r, k, &lane, &reg, &half);
			ar[lane * 4 + reg] |= (unsigned)h << (16 * half);
		}
	for (int k = 0; k < 16; k++)
		for (int n = 0; n < 8; n++) {
			int lane, reg, half;
			float v = (float)((int)(rnd() % 13) - 6) / 2;
			uint16_t h = bf ? ref_f2bf(v) : ref_f2h(v);

			B[k][n] = v;
			ref_mma_b_dest(k, n, &lane, &reg, &half);
			br[lane * 2 + reg] |= (unsigned)h << (16 * half);
		}
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			int lane, reg;

			C[r][n] = (float)((int)(rnd() % 101) - 50);
			ref_mma_c_dest(r, n, &lane, &reg);
			cr[lane * 4 + reg] = C[r][n];
		}
	RUN_OK(a, 6, 1, 32, 0);
	for (int r = 0; r < 16; r++)
		for (int n = 0; n < 8; n++) {
			int lane, reg;
			float want = C[r][n];

			for (int k = 0; k < 16; k++)
				want += A[r][k] * B[k][n];
			ref_mma_c_dest(r, n, &lane, &reg);
			ck_assert_msg(dr[lane * 4 + reg] == want, "%s D(%d,%d) = %g, expected %g", bf ? "bf16" : "f16", r, n,
				      dr[lane * 4 + reg], want);
		}
}
END_TEST

START_TEST(conversions)
{
	enum { N = 4096 };
	static float in[N];
	static unsigned short h[N], b[N];
	static unsigned p[N], q[N], hf[65536];
	static const uint32_t edge[] = {
		0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001,
		0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, 0xc77ff000, /* f16 overflow */
		0x38800000, 0x387fffff, 0x387fe000, 0x38000000, 0x33800000, 0x33000000, 0x33000001,
		0x32ffffff, 0x33c00000, 0x34200000, 0x3f801000, 0x3f803000, 0x3f801001, 0x3f800fff, /* ties */
		0x7f7fffff, 0x7f7f8000, 0x7f7f7fff, 0x00000001, 0x00008000, 0x0000c000, 0x00018000,
		0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0xbf808000, 0x007fffff, 0x00800000};
	int sel = 3, n = N;
	CpuArg a[] = {value("sel", &sel), tensor("in", in, sizeof in), value("n", &n), tensor("h", h, sizeof h),
		      tensor("b", b, sizeof b),   tensor("p", p, sizeof p),   tensor("q", q, sizeof q), tensor("hf", hf, sizeof hf)};

	UNIT();
	for (int i = 0; i < N; i++) {
		uint32_t u = i < (int)countof(edge) ? edge[i] : i % 3 ? (rnd() << 8 ^ rnd())
							: 0x33000000u + (rnd() % 0x15000000u); /* the f16 range */
		in[i] = ref_bitsf(u);
	}
	RUN_OK(a, 8, 2, 128, 0);
	for (int i = 0; i < N; i++) {
		ck_assert_msg(h[i] == ref_f2h(in[i]), "f2h(0x%08x) = 0x%04x, expected 0x%04x", ref_fbits(in[i]), h[i],
			      ref_f2h(in[i]));
		ck_assert_msg(b[i] == ref_f2bf(in[i]), "f2bf(0x%08x) = 0x%04x, expected 0x%04x", ref_fbits(in[i]), b[i],
			      ref_f2bf(in[i]));
		ck_assert(p[i] == ((unsigned)ref_f2h(in[i]) | (unsigned)ref_f2h(in[N - 1 - i]) << 16));
		ck_assert(q[i] == ((unsigned)ref_f2bf(in[i]) | (unsigned)ref_f2bf(in[N - 1 - i]) << 16));
	}
	for (int i = 0; i < 65536; i++)
		ck_assert_msg(hf[i] == ref_fbits(ref_h2f((uint16_t)i)), "h2f(0x%04x) = 0x%08x, expected 0x%08x", i, hf[i],
			      ref_fbits(ref_h2f((uint16_t)i)));
}
END_TEST

/* cp.async: deferred until the wait, zero fill without reading the source, groups */
START_TEST(cp_async)
{
	static unsigned g[512], out[32 * 16];
	int sel = 5, mode = 0;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, sizeof g), tensor("out", out, sizeof out), value("mode", &mode)};
	const unsigned poison = 0x7fa57fa5u;

	UNIT();
	for (int i = 0; i < 512; i++)
		g[i] = 0x1000u + (unsigned)i;
	RUN_OK(a, 4, 1, 32, 2048);
	for (int t = 0; t < 32; t++) {
		const unsigned *o = out + t * 16;

		for (int i = 0; i < 4; i++) {
			ck_assert_msg(o[i] == poison, "thread %d: before commit 0x%08x", t, o[i]);
			ck_assert_msg(o[4 + i] == poison, "thread %d: committed, not waited 0x%08x", t, o[4 + i]);
			ck_assert_msg(o[8 + i] == (t % 4 == 3 ? 0u : g[4 * t + i]), "thread %d: after the wait 0x%08x", t,
				      o[8 + i]);
		}
		ck_assert_msg(o[12] == g[128 + 4 * t], "group 1 after wait_group 1: 0x%08x", o[12]);
		ck_assert_msg(o[13] == poison, "group 2 after wait_group 1: 0x%08x", o[13]);
		ck_assert_msg(o[14] == g[256 + 4 * t], "group 2 after wait_group 0: 0x%08x", o[14]);
		ck_assert_msg(o[15] == poison, "an uncommitted copy after wait_group 0: 0x%08x", o[15]);
	}
}
END_TEST

START_TEST(cp_async_errors)
{
	static unsigned g[512], out[32 * 16];
	static const char *const want[] = {
		"the global source", "were written before the cp.async.wait_group", "not 16-byte aligned",
		"cp.async destination: address", "out-of-bounds access to tensor 'g' at byte offset 2048 past its end (it has 2048 bytes)"};
	int sel = 5, mode = _i + 1;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, sizeof g), tensor("out", out, sizeof out), value("mode", &mode)};

	UNIT();
	run_fails(a, 4, 1, 32, 2048, want[_i]);
}
END_TEST

/* mbarriers and TMA loads: boxes with zero fill past the tensor's edges, the swizzles, the
 * parity of phases, loads deferred until the wait */
static const struct {
	int W, H, stride, box0, box1, swz, c0, c1;
} tma_cases[] = {
	{200, 40, 400, 64, 16, 128, 150, 30},  /* 128B swizzle, past the right and bottom edges */
	{64, 64, 128, 64, 16, 128, 0, 8},      /* inside */
	{100, 20, 208, 32, 24, 64, 80, -4},    /* 64B swizzle, a negative row coordinate */
	{40, 9, 80, 16, 32, 32, -8, 0},        /* 32B swizzle, a negative column coordinate */
	{72, 50, 160, 24, 40, 0, 60, 20},      /* no swizzle, a box of 48-byte rows */
};

/* the byte of the tensor, or 0 outside it */
static unsigned char
tma_src(const unsigned short *g, int k, int x, int y, int b)
{
	if (x < 0 || y < 0 || x >= tma_cases[k].W || y >= tma_cases[k].H)
		return 0;
	return (unsigned char)(g[y * (tma_cases[k].stride / 2) + x] >> (8 * b));
}

START_TEST(tma_load)
{
	static unsigned short g[64 * 1024];
	static unsigned char out[4200];
	int sel = 11, mode = 0, W = tma_cases[_i].W, H = tma_cases[_i].H, st = tma_cases[_i].stride,
	    b0 = tma_cases[_i].box0, b1 = tma_cases[_i].box1, swz = tma_cases[_i].swz, c0 = tma_cases[_i].c0,
	    c1 = tma_cases[_i].c1;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, (size_t)st * H), value("W", &W), value("H", &H),
		      value("stride", &st), value("box0", &b0), value("box1", &b1), value("swz", &swz),
		      tensor("out", out, sizeof out), value("mode", &mode), value("c0", &c0), value("c1", &c1)};
	int row = b0 * 2;

	UNIT();
	for (int i = 0; i < 64 * 1024; i++)
		g[i] = (unsigned short)(0x1357u * (unsigned)i + 11u);
	memset(out, 0, sizeof out);
	RUN_OK(a, 12, 1, 128, 8192);
	for (int box = 0; box < 2; box++)
		for (int r = 0; r < b1; r++)
			for (int c = 0; c < b0; c++) {
				/* the 16-byte chunk of the 128-byte line, xor the line (swizzle span / 16 chunks) */
				int o = r * row + c * 2, line = o / 128, chunk = o % 128 / 16;
				int x = (box ? 0 : c0) + c, y = (box ? 0 : c1) + r;

				if (swz == 128)
					chunk ^= line % 8;
				else if (swz == 64)
					chunk ^= line % 4;
				else if (swz == 32)
					chunk ^= line % 2;
				o = line * 128 + chunk * 16 + o % 16;
				for (int b = 0; b < 2; b++)
					ck_assert_msg(out[2048 * box + o + b] == tma_src(g, _i, x, y, b),
						      "box %d (%d, %d) byte %d: 0x%02x, expected 0x%02x", box + 1, r, c, b,
						      out[2048 * box + o + b], tma_src(g, _i, x, y, b));
			}
	for (int i = 0; i < 16; i++)
		ck_assert_msg(out[4096 + i] == 0xa5 || out[4096 + i] == 0x7f, "box 1 before the wait: 0x%02x", out[4096 + i]);
	ck_assert_msg(out[4112] == 1, "barrier 1's phases");
}
END_TEST

START_TEST(tma_errors)
{
	static unsigned short g[64 * 64];
	static unsigned char out[4200];
	static const char *const want[] = {
		"no mbarrier at shared address 8 (mbarrier.init has not run on it in this block)",
		"deadlock: threads 0-127 wait at mbarrier wait",
		"the destination of a TMA load in flight, were written before the load completed",
		"the tensor map was not encoded",
		"more arrivals on the mbarrier at shared address 0 than its count (1)",
		"the mbarrier at shared address 0 was overwritten by a store",
		"tensor map: the box's inner dimension must not be wider than the swizzle span",
		"tensor map: the row stride must be a multiple of 16 bytes",
	};
	int sel = 11, mode = _i < 6 ? _i + 1 : 0, W = 64, H = 64, st = _i == 7 ? 136 : 128, b0 = _i == 6 ? 64 : 32,
	    b1 = 16, swz = _i == 6 ? 64 : 128, c0 = 0, c1 = 0;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, sizeof g), value("W", &W), value("H", &H),
		      value("stride", &st), value("box0", &b0), value("box1", &b1), value("swz", &swz),
		      tensor("out", out, sizeof out), value("mode", &mode), value("c0", &c0), value("c1", &c1)};

	UNIT();
	run_fails(a, 12, 1, 128, 8192, want[_i]);
}
END_TEST

START_TEST(divergence)
{
	static unsigned out[128];
	static const char *const want[] = {
		"barrier divergence: threads 0-63 wait at __syncthreads, 64-127 returned",
		"barrier divergence: threads 0-15 wait at __syncthreads, 16-31 wait at __shfl_xor_sync, 32-127 returned",
		"warp divergence in warp ",
		"member mask 0x0000ffff",
		"deadlock: threads 0-15,32-47,64-79,96-111 returned, 16-31,48-63,80-95,112-127 wait at __shfl_xor_sync",
		NULL,
		"deadlock: threads 0-30,32-62,64-94,96-126 wait at ldmatrix.x4, 31,63,95,127 returned",
	};
	int sel = 6, mode = _i;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), value("mode", &mode)};

	UNIT();
	if (want[_i]) {
		run_fails(a, 3, 1, 128, 4096, want[_i]);
		return;
	}
	RUN_OK(a, 3, 2, 128, 4096); /* the reduction, twice (the static array is poisoned in between) */
	for (int t = 0; t < 128; t++)
		ck_assert_uint_eq(out[t], 3u * 127u * 128u / 2u + 128u);
}
END_TEST

START_TEST(static_shared)
{
	static unsigned out[192];
	int sel = 7;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out)};

	UNIT();
	RUN_OK(a, 2, 1, 64, 0);
	for (int t = 0; t < 64; t++) {
		ck_assert_msg(out[t] == 0x7fa57fa5u, "static shared word %d before any write: 0x%08x", t, out[t]);
		ck_assert_uint_eq(out[64 + t], 3u * (unsigned)(63 - t));
		ck_assert_uint_eq(out[128 + t], out[128] + 4u * (unsigned)t);
	}
	ck_assert_uint_ge(out[128], 232448u); /* after the dynamic maximum */
}
END_TEST

/* tensors between guard pages, canaries in the slack, shared memory past the launch */
START_TEST(memory_errors)
{
	static float A[1024], out[4];
	static const struct {
		int mode, idx, bytes;
		size_t smem;
		const char *want;
	} c[] = {
		{0, 1024, 4000, 0, "out-of-bounds access to tensor 'A' at byte offset 4096 past its end (it has 4000 bytes)"},
		{1, 1000, 4000, 0, "write past the end of tensor 'A' (byte offset 4000; it has 4000 bytes)"},
		{0, -1, 4096, 0, "out-of-bounds access to tensor 'A' at byte offset -4, before its start (it has 4096 bytes)"},
		{1, -1, 3000, 0, "write before the start of tensor 'A' (byte offset -1; it has 3000 bytes)"},
		{3, 1000, 4096, 1000, "write past the end of dynamic shared memory (byte offset 1000; the launch has 1000 bytes)"},
		{2, 4096, 4096, 1000, "out-of-bounds access to shared memory at byte offset 4096 (the launch has 1000 bytes"},
		{0, 1 << 30, 4096, 0, "outside every tensor and shared memory"},
	};
	int sel = 8, mode = c[_i].mode, idx = c[_i].idx;
	CpuArg a[] = {value("sel", &sel), tensor("A", A, (size_t)c[_i].bytes), tensor("out", out, sizeof out),
		      value("mode", &mode), value("idx", &idx)};

	UNIT();
	run_fails(a, 5, 1, 32, c[_i].smem, c[_i].want);
}
END_TEST

START_TEST(stack_overflow)
{
	static int out[32];
	int sel = 9, n = 1000;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), value("n", &n)};

	UNIT();
	run_fails(a, 3, 1, 32, 0, "stack overflow in thread (");
	n = 20; /* 40 KB deep: fine */
	RUN_OK(a, 3, 1, 32, 0);
}
END_TEST

START_TEST(dims)
{
	static unsigned out[12 * 64 * 4], order[13];
	int sel = 10;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), tensor("order", order, sizeof order)};
	CpuLaunch l = {{3, 2, 2}, {8, 4, 2}, 0};
	Err e = {0};

	UNIT();
	memset(order, 0, sizeof order);
	ck_assert_msg(cpuexec_run(&unit, a, 3, &l, 60, NULL, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(order[0], 12);
	for (unsigned b = 0; b < 12; b++) {
		ck_assert_uint_eq(order[1 + b], b); /* z, y, x with x fastest */
		for (unsigned t = 0; t < 64; t++) {
			const unsigned *o = out + (b * 64 + t) * 4;

			ck_assert_uint_eq(o[0], (t % 8) | (t / 8 % 4) << 8 | (t / 32) << 16);
			ck_assert_uint_eq(o[1], (b % 3) | (b / 3 % 2) << 8 | (b / 6) << 16);
			ck_assert_uint_eq(o[2], 8u | 4u << 8 | 2u << 16 | 3u << 24);
			ck_assert_uint_eq(o[3], (t ^ 1) | 32u << 16);
		}
	}
}
END_TEST

START_TEST(bad_job)
{
	char job[700], outp[700], cmd[2200];
	FILE *f;
	int st;

	UNIT();
	snprintf(job, sizeof job, "%s/bad.bin", unit.dir);
	snprintf(outp, sizeof outp, "%s/bad.out", unit.dir);
	f = fopen(job, "wb");
	ck_assert_ptr_nonnull(f);
	fputs("TLCPUJ1", f);
	fputc(0, f);
	fputs("garbage", f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "'%s' '%s' '%s' 2>/dev/null", unit.exe, job, outp);
	st = system(cmd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	snprintf(cmd, sizeof cmd, "'%s' 2>/dev/null", unit.exe);
	st = system(cmd);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	unlink(job);
}
END_TEST

/* ---- wgmma: the shared-memory image placed by the canonical layouts of the reference ---- */

static unsigned short wg_img[65536 / 2];
static unsigned char wg_set[65536];

static void
wg_place(unsigned long start, int mn_major, int mode, int lbo, int sbo, int rows, int k0, int bf,
	 const float *vals, int ld, int imgbytes)
{
	for (int mn = 0; mn < rows; mn++)
		for (int k = 0; k < 16; k++) {
			unsigned long a = ref_canonical_addr(start, mn_major, mode, lbo, sbo, mn, k);
			float v = vals[(size_t)mn * ld + k0 + k];
			uint16_t h = bf ? ref_f2bf(v) : ref_f2h(v);

			ck_assert_msg(a % 2 == 0 && a + 2 <= (unsigned long)imgbytes, "address %lu outside the image", a);
			ck_assert_msg(!wg_set[a] || wg_img[a / 2] == h, "two elements at address %lu", a);
			wg_set[a] = 1;
			wg_img[a / 2] = h;
		}
}

START_TEST(wgmma)
{
	const RefWgCase *c = &ref_wg_cases[_i];
	static float A[64 * 64], B[256 * 64], cin[128 * 128], out[128 * 128];
	int kdim = 16 * c->nk, sel = 100 + c->kernel, nr = c->n / 2, imgbytes = c->imgbytes;
	int p[11] = {c->offa, c->lboa, c->sboa, c->modea, c->adva, c->offb, c->lbob, c->sbob, c->nk, c->advb, c->modeb};
	CpuArg a[] = {value("sel", &sel), tensor("img", wg_img, (size_t)imgbytes), value("imgbytes", &imgbytes),
		      tensor("cin", cin, sizeof(float) * 128 * (size_t)nr), tensor("out", out, sizeof(float) * 128 * (size_t)nr),
		      tensor("p", p, sizeof p)};

	UNIT();
	for (int i = 0; i < imgbytes / 2; i++)
		wg_img[i] = 0x7e00; /* NaN where no operand element is */
	memset(wg_set, 0, sizeof wg_set);
	for (int i = 0; i < 64 * kdim; i++)
		A[i] = (float)((int)(rnd() % 9) - 4);              /* A[m][k], row-major M x K */
	for (int i = 0; i < c->n * kdim; i++)
		B[i] = (float)((int)(rnd() % 7) - 3) / 2;          /* B[n][k] (B^T row-major) */
	for (int i = 0; i < 128 * nr; i++)
		cin[i] = (float)((int)(rnd() % 64) - 32);
	for (int kk = 0; kk < c->nk; kk++) {
		wg_place((unsigned long)(c->offa + kk * c->adva), 0, c->modea, c->lboa, c->sboa, 64, 16 * kk, c->bf, A, kdim,
			 imgbytes);
		wg_place((unsigned long)(c->offb + kk * c->advb), c->tb, c->modeb, c->lbob, c->sbob, c->n, 16 * kk, c->bf, B,
			 kdim, imgbytes);
	}
	RUN_OK(a, 6, 1, 128, 65536);
	for (int t = 0; t < 128; t++)
		for (int i = 0; i < nr; i++) {
			int row, col;
			float want;

			ref_wgmma_d_coord(t, i, &row, &col);
			want = cin[t * nr + i];
			for (int k = 0; k < kdim; k++)
				want += A[row * kdim + k] * B[col * kdim + k];
			ck_assert_msg(out[t * nr + i] == want, "%s: thread %d reg %d = D(%d,%d) = %g, expected %g", c->name, t, i,
				      row, col, out[t * nr + i], want);
		}
}
END_TEST

/* wgmma asynchrony (k_wgmma_async's modes) */
START_TEST(wgmma_async)
{
	static unsigned short img[4096];
	static float out[1024 + 512];
	static const char *const want[] = {
		"changed between the wgmma and the wgmma.wait_group", NULL, NULL, "before any wgmma.fence",
		"accumulator register 2 of thread 3", "thread 77 of the warpgroup has descriptors", NULL};
	int sel = 4, mode = _i;
	CpuArg a[] = {value("sel", &sel), tensor("img", img, sizeof img), tensor("out", out, sizeof out),
		      value("mode", &mode)};
	float A[64][16], B[8][16];

	UNIT();
	memset(img, 0, sizeof img);
	for (int m = 0; m < 64; m++)
		for (int k = 0; k < 16; k++) {
			A[m][k] = (float)((m + 3 * k) % 5 - 2);
			img[ref_canonical_addr(0, 0, 0, 128, 256, m, k) / 2] = ref_f2h(A[m][k]);
		}
	for (int n = 0; n < 8; n++)
		for (int k = 0; k < 16; k++) {
			B[n][k] = (float)((2 * n + k) % 3 - 1);
			img[ref_canonical_addr(4096, 0, 0, 128, 256, n, k) / 2] = ref_f2h(B[n][k]);
		}
	if (want[_i]) {
		run_fails(a, 4, 1, 128, 8192, want[_i]);
		return;
	}
	RUN_OK(a, 4, 1, 128, 8192);
	for (int t = 0; t < 128; t++)
		for (int i = 0; i < 4; i++) {
			int row, col;
			float d = 0;

			ref_wgmma_d_coord(t, i, &row, &col);
			for (int k = 0; k < 16; k++)
				d += A[row][k] * B[col][k];
			if (mode == 2) { /* wait_group 1: the first group done, the second in flight */
				ck_assert(out[t * 8 + i] == d);
				ck_assert(ref_fbits(out[t * 8 + 4 + i]) == 0x7fa57fa5u);
				ck_assert(out[1024 + t * 4 + i] == d);
			} else { /* 1: read before the wait; 6: not committed, so not waited for */
				ck_assert_msg(ref_fbits(out[t * 8 + i]) == 0x7fa57fa5u, "mode %d: 0x%08x", mode,
					      ref_fbits(out[t * 8 + i]));
				ck_assert(out[t * 8 + 4 + i] == d);
			}
		}
}
END_TEST

/* ---- samples: emitted through the library, trampoline from the IR ----------------------- */

typedef struct Sample {
	CpuExe x;
	IrKernel *k;
	Arena arena;
	unsigned threads;
	size_t smem;
	char err[4096];
} Sample;

static int
sample_build(Sample *s, const char *name, const char *arch)
{
	char path[256];
	char *src, *cuda = NULL, *diag = NULL;
	const char *kn, *hdr;
	size_t len;
	Diags d;
	Node *top;
	IrProgram *p;
	Buf entry, log;
	Err e = {0};
	int rc = -1;

	memset(s, 0, sizeof *s);
	snprintf(path, sizeof path, "samples/%s.tile", name);
	if (!(src = test_readfile(path, &len))) {
		snprintf(s->err, sizeof s->err, "cannot read %s", path);
		return -1;
	}
	if (rt_tile_to_cuda(src, len, NULL, path, arch, &cuda, &diag)) {
		snprintf(s->err, sizeof s->err, "%s does not emit for %s: %s", path, arch, diag ? diag : "?");
		goto out;
	}
	arena_init(&s->arena);
	diags_init(&d, &s->arena);
	top = parse_program(&s->arena, &d, src, len, path);
	p = top ? sema_program(&s->arena, &d, top, NULL, 0, path) : NULL;
	if (!p) {
		snprintf(s->err, sizeof s->err, "sema of %s failed", path);
		goto out;
	}
	s->k = p->kernels;
	kn = emit_cname(&s->arena, s->k->name);
	hdr = strstr(cuda, "// kernel ");
	if (!hdr || sscanf(strchr(hdr, ':') + 1, " %u threads, %zu bytes", &s->threads, &s->smem) != 2) {
		snprintf(s->err, sizeof s->err, "no kernel header comment in the CUDA of %s", path);
		goto out;
	}
	buf_init(&entry);
	buf_init(&log);
	ck_assert_int_eq(cpuexec_entry(&entry, s->k, kn, cuda), 0);
	rc = cpuexec_build(&s->x, cuda, buf_str(&entry), NULL, NULL, 0, &log, &e);
	if (rc)
		snprintf(s->err, sizeof s->err, "%s (%s): %s: %.1500s", path, arch, e.msg, buf_str(&log));
	buf_free(&entry);
	buf_free(&log);
out:
	free(src);
	free(cuda);
	free(diag);
	return rc;
}

static void
sample_free(Sample *s)
{
	cpuexec_free(&s->x);
	arena_free(&s->arena);
}

/* run with the tensors data[param] and the sizes by name (sizes: "M", 200, "N", 203, ...) */
static void
sample_run(Sample *s, void **data, const size_t *bytes, const float *scalars, unsigned gx, unsigned gy,
	   const char *const *names, const int *vals, int nvals)
{
	CpuArg args[16];
	int ints[16], n = 0;
	float fl[16];
	CpuLaunch l = {{gx, gy, 1}, {s->threads, 1, 1}, s->smem};
	Err e = {0};
	Buf log;
	int rc;

	for (int i = 0; i < s->k->nparam; i++) {
		const IrParam *P = &s->k->params[i];

		if (P->is_tensor)
			args[n] = tensor(P->name, data[i], bytes[i]);
		else {
			fl[n] = scalars[i]; /* f32 scalars only in these samples */
			args[n] = (CpuArg){P->name, CPUARG_VAL, &fl[n], sizeof(float)};
		}
		n++;
	}
	for (int i = 0; i < s->k->nsize; i++, n++) {
		int j;

		for (j = 0; j < nvals && strcmp(names[j], s->k->sizes[i]->name); j++)
			;
		ck_assert_msg(j < nvals, "no value for size %s", s->k->sizes[i]->name);
		ints[n] = vals[j];
		args[n] = value(s->k->sizes[i]->name, &ints[n]);
	}
	buf_init(&log);
	rc = cpuexec_run(&s->x, args, n, &l, 300, &log, &e);
	ck_assert_msg(rc == 0, "%s: run failed (%d): %s %.500s", s->k->name, rc, e.msg, buf_str(&log));
	buf_free(&log);
}

static uint16_t *
rand_f16(size_t n, int bf, int ints)
{
	uint16_t *p = malloc(n * 2);

	for (size_t i = 0; i < n; i++) {
		float v = ints ? (float)((int)(rnd() % 5) - 2) : (float)((int)(rnd() % 2001) - 1000) / 1000.0f;

		p[i] = bf ? ref_f2bf(v) : ref_f2h(v);
	}
	return p;
}

START_TEST(sample_copy_transpose)
{
	static const struct {
		const char *name, *arch;
		int transpose, esize, bm, bn;
	} c[] = {{"copy", "sm_80", 0, 2, 128, 64}, {"copy", "sm_90a", 0, 2, 128, 64},
		 {"convert", "sm_80", 0, 2, 64, 64}, {"transpose", "sm_80", 1, 4, 32, 32}};
	static const int sizes[][2] = {{200, 203}, {256, 384}, {1, 1}, {129, 8}, {64, 72}};
	Sample s;

	ck_assert_msg(sample_build(&s, c[_i].name, c[_i].arch) == 0, "%s", s.err);
	for (size_t z = 0; z < countof(sizes); z++) {
		int M = sizes[z][0], N = sizes[z][1], vals[] = {M, N};
		const char *names[] = {"M", "N"};
		size_t nb = (size_t)M * N * (size_t)c[_i].esize, bytes[2] = {nb, nb};
		unsigned char *A = malloc(nb), *B = malloc(nb);
		void *data[2] = {A, B};

		for (size_t i = 0; i < nb; i++)
			A[i] = (unsigned char)rnd(), B[i] = 0xee;
		sample_run(&s, data, bytes, NULL, (unsigned)(N + c[_i].bn - 1) / (unsigned)c[_i].bn,
			   (unsigned)(M + c[_i].bm - 1) / (unsigned)c[_i].bm, names, vals, 2);
		if (!c[_i].transpose)
			ck_assert_msg(!memcmp(A, B, nb), "%s %dx%d: not a copy", c[_i].name, M, N);
		else
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++)
					ck_assert_msg(((uint32_t *)B)[(size_t)j * M + i] == ((uint32_t *)A)[(size_t)i * N + j],
						      "transpose %dx%d: B[%d][%d]", M, N, j, i);
		free(A);
		free(B);
	}
	sample_free(&s);
}
END_TEST

START_TEST(sample_elementwise)
{
	static const int sizes[][2] = {{200, 203}, {128, 64}, {65, 130}};
	Sample s;

	ck_assert_msg(sample_build(&s, "elementwise", "sm_80") == 0, "%s", s.err);
	for (size_t z = 0; z < countof(sizes); z++) {
		int M = sizes[z][0], N = sizes[z][1], vals[] = {M, N};
		const char *names[] = {"M", "N"};
		size_t n = (size_t)M * N, bytes[4] = {2 * n, 2 * n, 2 * n, 0};
		uint16_t *A = rand_f16(n, 0, 0), *B = rand_f16(n, 0, 0), *C = calloc(n, 2);
		void *data[4] = {A, B, C, NULL};
		float sc[4] = {0, 0, 0, -1.75f};

		sample_run(&s, data, bytes, sc, (unsigned)(N + 63) / 64, (unsigned)(M + 63) / 64, names, vals, 2);
		for (size_t i = 0; i < n; i++) {
			float v = ref_h2f(A[i]) * sc[3];
			uint16_t want;

			v = v + ref_h2f(B[i]);
			want = ref_f2h(v > 0 ? v : 0.0f);
			ck_assert_msg(C[i] == want, "elementwise %dx%d element %zu: 0x%04x, expected 0x%04x", M, N, i, C[i], want);
		}
		free(A);
		free(B);
		free(C);
	}
	sample_free(&s);
}
END_TEST

START_TEST(sample_softmax)
{
	Sample s;
	int M = 21, vals[] = {21};
	const char *names[] = {"M"};
	size_t n = (size_t)M * 1024, bytes[2] = {4 * n, 4 * n};
	float *X = malloc(4 * n), *Y = calloc(n, 4);
	void *data[2] = {X, Y};

	ck_assert_msg(sample_build(&s, "softmax", "sm_80") == 0, "%s", s.err);
	for (size_t i = 0; i < n; i++)
		X[i] = (float)((int)(rnd() % 2001) - 1000) / 250.0f;
	sample_run(&s, data, bytes, NULL, (unsigned)(M + 7) / 8, 1, names, vals, 1);
	for (int r = 0; r < M; r++) {
		double m = -1e30, sum = 0;

		for (int j = 0; j < 1024; j++)
			m = fmax(m, X[r * 1024 + j]);
		for (int j = 0; j < 1024; j++)
			sum += exp(X[r * 1024 + j] - m);
		for (int j = 0; j < 1024; j++) {
			double want = exp(X[r * 1024 + j] - m) / sum;

			ck_assert_msg(fabs(Y[r * 1024 + j] - want) <= 1e-5 * want + 1e-9, "softmax row %d col %d: %g, expected %g",
				      r, j, Y[r * 1024 + j], want);
		}
	}
	free(X);
	free(Y);
	sample_free(&s);
}
END_TEST

/* gemm samples: C[M,N] = A[M,K] B (B [K,N], or [N,K] for gemm_bf16); f16 or f32 output */
START_TEST(sample_gemm)
{
	static const struct {
		const char *name, *arch;
		int bf, bt, f32out, bm, bn;
		int sizes[3][3]; /* M, N, K */
	} c[] = {
		{"gemm", "sm_80", 0, 0, 0, 128, 128, {{200, 203, 205}, {256, 384, 512}, {64, 8, 16}}},
		{"gemm", "sm_90a", 0, 0, 0, 128, 128, {{200, 203, 205}, {256, 384, 512}, {128, 128, 32}}},
		{"gemm_sm90", "sm_90a", 0, 0, 0, 128, 256, {{200, 203, 205}, {256, 384, 512}, {128, 256, 64}}},
		{"gemm_bf16", "sm_80", 1, 1, 1, 128, 128, {{200, 203, 128}, {256, 384, 512}, {128, 8, 64}}},
		{"gemm_bf16", "sm_90a", 1, 1, 1, 128, 128, {{200, 203, 128}, {256, 384, 512}, {128, 8, 64}}},
	};
	Sample s;

	ck_assert_msg(sample_build(&s, c[_i].name, c[_i].arch) == 0, "%s", s.err);
	/* the ragged size with integers also under the other schedules (they expose other races) */
	for (int z = 0; z < 5; z++)
		for (int ints = 1; ints >= (z < 3 ? 0 : 1); ints--) {
			int M = c[_i].sizes[z < 3 ? z : 0][0], N = c[_i].sizes[z < 3 ? z : 0][1],
			    K = c[_i].sizes[z < 3 ? z : 0][2], vals[] = {M, N, K};
			const char *names[] = {"M", "N", "K"};
			size_t osz = c[_i].f32out ? 4 : 2, bytes[3] = {(size_t)M * K * 2, (size_t)K * N * 2, (size_t)M * N * osz};
			uint16_t *A = rand_f16((size_t)M * K, c[_i].bf, ints), *B = rand_f16((size_t)K * N, c[_i].bf, ints);
			void *C = malloc(bytes[2]), *data[3] = {A, B, C};
			float *ref = malloc(sizeof(float) * (size_t)M * N), amax = 0;
			int bad = 0;

			memset(C, 0xee, bytes[2]);
			if (z >= 3)
				setenv("TILEC_CPU_SCHEDULE", z == 3 ? "reverse" : "fifo", 1);
			sample_run(&s, data, bytes, NULL, (unsigned)(N + c[_i].bn - 1) / (unsigned)c[_i].bn,
				   (unsigned)(M + c[_i].bm - 1) / (unsigned)c[_i].bm, names, vals, 3);
			unsetenv("TILEC_CPU_SCHEDULE");
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++) {
					float acc = 0;

					for (int k = 0; k < K; k++) {
						uint16_t a = A[(size_t)i * K + k], b = c[_i].bt ? B[(size_t)j * K + k] : B[(size_t)k * N + j];

						acc += c[_i].bf ? ref_bf2f(a) * ref_bf2f(b) : ref_h2f(a) * ref_h2f(b);
					}
					ref[(size_t)i * N + j] = acc;
					amax = fmaxf(amax, fabsf(acc));
				}
			for (size_t i = 0; i < (size_t)M * N; i++) {
				float got = c[_i].f32out ? ((float *)C)[i] : ref_h2f(((uint16_t *)C)[i]);
				float want = c[_i].f32out ? ref[i] : ref_h2f(ref_f2h(ref[i]));

				/* integer inputs: every sum exact, so bit-exact; else 1e-2 of the largest */
				if (ints ? got != want : !(fabsf(got - want) <= 1e-2f * amax)) {
					if (!bad)
						fprintf(stderr, "%s %s %dx%dx%d%s: C[%zu][%zu] = %g, expected %g\n", c[_i].name,
							c[_i].arch, M, N, K, ints ? " (integers)" : "", i / N, i % N, got, want);
					bad++;
				}
			}
			ck_assert_msg(!bad, "%s %s %dx%dx%d: %d elements wrong", c[_i].name, c[_i].arch, M, N, K, bad);
			free(A);
			free(B);
			free(C);
			free(ref);
		}
	sample_free(&s);
}
END_TEST

Suite *
suite_cpu_exec(void)
{
	Suite *s = suite_create("cpu_exec");
	TCase *u = tcase_create("unit"), *sm = tcase_create("samples");

	tcase_add_unchecked_fixture(u, unit_setup, unit_teardown);
	tcase_set_timeout(u, 120);
	tcase_add_test(u, shuffles);
	tcase_add_loop_test(u, ldmatrix, 0, 2);
	tcase_add_loop_test(u, mma, 0, 2);
	tcase_add_test(u, conversions);
	tcase_add_test(u, cp_async);
	tcase_add_loop_test(u, cp_async_errors, 0, 5);
	tcase_add_loop_test(u, tma_load, 0, (int)countof(tma_cases));
	tcase_add_loop_test(u, tma_errors, 0, 8);
	tcase_add_loop_test(u, divergence, 0, 7);
	tcase_add_test(u, static_shared);
	tcase_add_loop_test(u, memory_errors, 0, 7);
	tcase_add_test(u, stack_overflow);
	tcase_add_test(u, dims);
	tcase_add_test(u, bad_job);
	tcase_add_loop_test(u, wgmma, 0, (int)countof(ref_wg_cases));
	tcase_add_loop_test(u, wgmma_async, 0, 7);
	suite_add_tcase(s, u);
	tcase_set_timeout(sm, 300);
	tcase_add_loop_test(sm, sample_copy_transpose, 0, 4);
	tcase_add_test(sm, sample_elementwise);
	tcase_add_test(sm, sample_softmax);
	tcase_add_loop_test(sm, sample_gemm, 0, 5);
	suite_add_tcase(s, sm);
	return s;
}
