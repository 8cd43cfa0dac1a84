/*
 * check_cpu_hip.c: the CPU run of emitted HIP C (templates/tilec_cpu_hip.h,
 * cpuexec_build_target, tilec run --target=hip; docs/cpu.md, docs/hip.md).
 *  - unit: the hand-written HIP kernels of test/cpu_hip_kernels.hip, built
 *    once with wavefronts of 64 lanes (gfx90a/gfx942) and once with 32
 *    (gfx1100), against the tables of test/cpu_hip_ref.h (written from the AMD
 *    documents independently of the emulation): ds_bpermute shuffles over the
 *    wave (partial waves too), MFMA 16x16x16 f16/bf16 (wave64) and WMMA
 *    16x16x16 f16/bf16 (gfx11 wave32) element by element, the conversions, the
 *    synchronous "cp.async" copies and LDS operand reads, and what the
 *    emulation reports; the same kernel file compiled by clang-19 for gfx942
 *    and gfx1100 against the real tilec_hip.h (when clang-19 is there);
 *  - programs: every sample but gemm_sm90 (192 KiB of shared memory: refused
 *    for HIP) and every test/cpu/ kernel through tilec_run for gfx90a, gfx942
 *    and gfx1100 at tiny, prime and ragged sizes (the sizes of
 *    check_cpu_diff.c), agreeing with the interpreter;
 *  - the check itself on hand-written wrong HIP C, and the options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpuexec.h"
#include "layout.h"
#include "lower.h"
#include "tests.h"
#include "tilec.h"
#include "tilec_run.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function" /* the conversions of cpu_exec_ref.h are used */
#include "cpu_exec_ref.h"
#pragma GCC diagnostic pop
#include "cpu_hip_ref.h"

#define countof(a) (sizeof(a) / sizeof((a)[0]))


static unsigned rng_state = 4242;

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

/* ---- the unit kernels: two builds (wave64, wave32), an unchecked fixture ------------------ */

static CpuExe unit[2]; /* [0]: gfx942 (wave64), [1]: gfx1100 (wave32) */
static int unit_built[2];
static char unit_error[2][4096];
static const char *const unit_arch[2] = {"gfx942", "gfx1100"};
static const int unit_wave[2] = {64, 32};

static void
unit_setup(void)
{
	char *src = test_readfile("test/cpu_hip_kernels.hip", NULL);

	for (int i = 0; i < 2; i++) {
		Err e = {0};
		Buf log;

		buf_init(&log);
		if (!src)
			snprintf(unit_error[i], sizeof unit_error[i], "cannot read test/cpu_hip_kernels.hip");
		else if (cpuexec_build_target(&unit[i], 1, unit_arch[i], src, NULL, NULL, NULL, 0, &log, &e))
			snprintf(unit_error[i], sizeof unit_error[i], "%s: %.1800s", e.msg, buf_str(&log));
		else
			unit_built[i] = 1;
		buf_free(&log);
	}
	free(src);
}

static void
unit_teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (unit_built[i])
			cpuexec_free(&unit[i]);
}

/* run the unit kernel of build u; 0, 1 with the emulation's message, -1 */
static int
run(int u, CpuArg *args, int n, unsigned grid, unsigned threads, size_t smem, char *msg, size_t msgsz)
{
	CpuLaunch l = {{grid, 1, 1}, {threads, 1, 1}, smem};
	Err e = {0};
	Buf log;
	int rc;

	ck_assert_msg(unit_built[u], "%s", unit_error[u]);
	buf_init(&log);
	rc = cpuexec_run(&unit[u], args, n, &l, 120, &log, &e);
	snprintf(msg, msgsz, "%s%s%.300s", e.msg, rc < 0 ? " | " : "", rc < 0 ? buf_str(&log) : "");
	buf_free(&log);
	return rc;
}

#define RUN_OK(u, args, n, grid, threads, smem)                                                            \
	do {                                                                                               \
		char m_[1024];                                                                             \
		int rc_ = run(u, args, n, grid, threads, smem, m_, sizeof m_);                            \
		ck_assert_msg(rc_ == 0, "%s: run failed (%d): %s", unit_arch[u], rc_, m_);                 \
	} while (0)

static void
run_fails(int u, CpuArg *args, int n, unsigned grid, unsigned threads, size_t smem, const char *want)
{
	char m[1024];
	int rc = run(u, args, n, grid, threads, smem, m, sizeof m);

	ck_assert_msg(rc == 1, "%s: expected a run-time error with \"%s\", got %d: %s", unit_arch[u], want, rc, m);
	ck_assert_msg(strstr(m, want), "%s: expected \"%s\" in: %s", unit_arch[u], want, m);
}

/* the value a lane of k_shfl holds, or 0 for "no lane" */
static unsigned
shfl_v(int wave_base, int src)
{
	return src < 0 ? 0u : (unsigned)(wave_base + src) * 1000u + 7u;
}

/* tl_warp_sum / tl_warp_max as the butterfly of ref_bpermute over a wave of `active` lanes */
static float
ref_butterfly(const float *vals, int lane, int width, int wave, int active, int is_max)
{
	float cur[64], nxt[64];

	for (int l = 0; l < active; l++)
		cur[l] = vals[l];
	for (int o = width / 2; o > 0; o /= 2) {
		for (int l = 0; l < active; l++) {
			int s = ref_bpermute((l ^ o) << 2, wave, active);
			float x = s < 0 ? 0.0f : cur[s];

			nxt[l] = is_max ? fmaxf(cur[l], x) : cur[l] + x;
		}
		memcpy(cur, nxt, sizeof cur);
	}
	return cur[lane];
}

/* ds_bpermute shuffles: 96 threads (wave64: a full and a half wavefront; wave32: three) */
START_TEST(shuffles)
{
	static unsigned out[96 * 8];
	static double outd[96];
	static long long outl[96];
	int u = _i, sel = 0, W = unit_wave[u];
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), tensor("outd", outd, sizeof outd),
		      tensor("outl", outl, sizeof outl), value("wave", &W)};

	RUN_OK(u, a, 5, 1, 96, 0);
	for (int t = 0; t < 96; t++) {
		int l = t % W, base = t - l, act = 96 - base < W ? 96 - base : W;
		unsigned e[8];
		float lanes[64], mx[64];

		for (int i = 0; i < act; i++) {
			lanes[i] = (float)i;
			mx[i] = (float)((i * 7) % W);
		}
		e[0] = (unsigned)l;
		e[1] = ref_fbits((float)shfl_v(base, ref_bpermute((l ^ 1) << 2, W, act)));
		e[2] = shfl_v(base, ref_bpermute((l ^ 5) << 2, W, act));
		e[3] = shfl_v(base, ref_bpermute((l ^ 16) << 2, W, act));
		e[4] = shfl_v(base, ref_bpermute((l ^ 32) << 2, W, act));
		e[5] = shfl_v(base, ref_bpermute((l ^ 63) << 2, W, act));
		e[6] = ref_fbits(ref_butterfly(lanes, l, 8, W, act, 0));
		e[7] = ref_fbits(ref_butterfly(mx, l, W, W, act, 1));
		for (int i = 0; i < 8; i++)
			ck_assert_msg(out[t * 8 + i] == e[i], "wave%d thread %d result %d: 0x%08x, expected 0x%08x", W, t, i,
				      out[t * 8 + i], e[i]);
		{
			int s = ref_bpermute((l ^ 3) << 2, W, act), s2 = ref_bpermute((l ^ 2) << 2, W, act);
			double wd = s < 0 ? 0.0 : (double)shfl_v(base, s) + 0.5;
			long long wl = s2 < 0 ? 0 : ((long long)shfl_v(base, s2) << 33 | 5);

			ck_assert_msg(outd[t] == wd, "wave%d thread %d: double %g, expected %g", W, t, outd[t], wd);
			ck_assert_msg(outl[t] == wl, "wave%d thread %d: long long %lld, expected %lld", W, t, outl[t], wl);
		}
	}
	/* the partial wave64: lanes 32-63 do not exist, xor 32 reads 0 */
	if (W == 64)
		ck_assert_uint_eq(out[70 * 8 + 4], 0);
	else /* wave32: lane ^ 32 is the lane itself (modulo 32) */
		ck_assert_uint_eq(out[70 * 8 + 4], 70u * 1000u + 7u);
}
END_TEST

/* a full-wave butterfly sum: every lane gets the sum of its wave (of its active lanes) */
START_TEST(wave_sum)
{
	static float out[160];
	int u = _i, sel = 1, W = unit_wave[u];
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), value("wave", &W)};

	RUN_OK(u, a, 3, 1, 160, 0);
	for (int t = 0; t < 160; t++) {
		int base = t - t % W, act = 160 - base < W ? 160 - base : W;
		float want = 0;

		for (int i = 0; i < act; i++)
			want += (float)(base + i + 1);
		ck_assert_msg(out[t] == want, "wave%d thread %d: %g, expected %g", W, t, out[t], want);
	}
}
END_TEST

/* MFMA 16x16x16 (wave64) and WMMA 16x16x16 (wave32) against the element tables; _i: build u = _i / 2,
 * bf16 = _i % 2. Small values: every product and sum exact in f32; then the once-rounded sum */
START_TEST(matrix)
{
	static unsigned short ar[32 * 16], br[32 * 16];
	static float cr[256], dr[256];
	float A[16][16], B[16][16], C[16][16];
	int u = _i / 2, bf = _i % 2, sel = 2, W = unit_wave[u];
	CpuArg a[] = {value("sel", &sel), tensor("a", ar, sizeof ar), tensor("b", br, sizeof br),
		      tensor("c", cr, sizeof cr), tensor("d", dr, sizeof dr), value("bf", &bf)};
	size_t na = W == 64 ? 64 * 4 : 32 * 16;

	for (int round = 0; round < 2; round++) {
		memset(ar, 0xff, sizeof ar);
		memset(br, 0xff, sizeof br);
		for (int i = 0; i < 16; i++)
			for (int k = 0; k < 16; k++) {
				/* round 1: C = 2^24 and products of 1: f32 accumulation in any order would
				 * lose them (2^24 + 1 rounds to 2^24); the sum in double rounded once keeps them */
				float va = round ? 1.0f : (float)((int)(rnd() % 17) - 8) / 4;
				float vb = round ? 1.0f : (float)((int)(rnd() % 13) - 6) / 2;
				uint16_t ha = bf ? ref_f2bf(va) : ref_f2h(va), hb = bf ? ref_f2bf(vb) : ref_f2h(vb);
				int l0, l1, el;

				A[i][k] = va;
				B[i][k] = vb; /* B[k = i][j = k] */
				if (W == 64) {
					ref_mfma_a(i, k, &l0, &el);
					ar[l0 * 4 + el] = ha;
					ref_mfma_b(i, k, &l0, &el);
					br[l0 * 4 + el] = hb;
				} else {
					ref_wmma_a(i, k, &l0, &l1, &el);
					ar[l0 * 16 + el] = ar[l1 * 16 + el] = ha;
					ref_wmma_b(i, k, &l0, &l1, &el);
					br[l0 * 16 + el] = br[l1 * 16 + el] = hb;
				}
			}
		for (size_t i = 0; i < na; i++)
			ck_assert_msg(ar[i] != 0xffff && br[i] != 0xffff, "operand slot %zu not covered by the table", i);
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 16; j++) {
				int l, r;

				C[i][j] = round ? 16777216.0f : (float)((int)(rnd() % 101) - 50);
				if (W == 64) {
					ref_mfma_d(i, j, &l, &r);
					cr[l * 4 + r] = C[i][j];
				} else {
					ref_wmma_d(i, j, &l, &r);
					cr[l * 8 + r] = C[i][j];
				}
			}
		RUN_OK(u, a, 6, 1, (unsigned)W, 0);
		for (int i = 0; i < 16; i++)
			for (int j = 0; j < 16; j++) {
				double want = C[i][j];
				int l, r;

				for (int k = 0; k < 16; k++)
					want += (double)A[i][k] * (double)B[k][j];
				if (W == 64)
					ref_mfma_d(i, j, &l, &r);
				else
					ref_wmma_d(i, j, &l, &r);
				ck_assert_msg(dr[l * (W == 64 ? 4 : 8) + r] == (float)want,
					      "%s %s D(%d,%d) = %.9g (lane %d reg %d), expected %.9g", W == 64 ? "mfma" : "wmma",
					      bf ? "bf16" : "f16", i, j, dr[l * (W == 64 ? 4 : 8) + r], l, r, (float)want);
			}
	}
}
END_TEST

START_TEST(conversions)
{
	enum { N = 4096 };
	static float in[N];
	static unsigned short h[N], b[N];
	static unsigned p[N], q[N], hf[65536], bff[65536];
	static const uint32_t edge[] = {
		0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x7fa57fa5,
		0x477fe000, 0x477fefff, 0x477ff000, 0x477ff001, 0x47800000, 0xc77ff000, 0x38800000, 0x387fffff,
		0x387fe000, 0x38000000, 0x33800000, 0x33000000, 0x33000001, 0x32ffffff, 0x33c00000, 0x34200000,
		0x3f801000, 0x3f803000, 0x3f801001, 0x3f800fff, 0x7f7fffff, 0x7f7f8000, 0x7f7f7fff, 0x00000001,
		0x00008000, 0x3f808000, 0x3f818000, 0x3f807fff, 0x3f808001, 0xbf808000, 0x007fffff, 0x00800000};
	int sel = 3, n = N;
	CpuArg a[] = {value("sel", &sel), tensor("in", in, sizeof in), value("n", &n), tensor("h", h, sizeof h),
		      tensor("b", b, sizeof b), tensor("p", p, sizeof p), tensor("q", q, sizeof q),
		      tensor("hf", hf, sizeof hf), tensor("bff", bff, sizeof bff)};

	for (int i = 0; i < N; i++) {
		uint32_t uu = i < (int)countof(edge) ? edge[i] : i % 3 ? (rnd() << 8 ^ rnd())
							 : 0x33000000u + (rnd() % 0x15000000u);
		in[i] = ref_bitsf(uu);
	}
	RUN_OK(_i, a, 9, 2, 128, 0);
	for (int i = 0; i < N; i++) {
		uint32_t x = ref_fbits(in[i]);
		/* NaN: a quiet NaN, the payload's top bits (V_CVT_F16_F32); bf16 tilec_hip.h's (u >> 16) | 0x40 */
		uint16_t wh = in[i] != in[i] ? (uint16_t)(((x >> 16) & 0x8000) | 0x7e00 | ((x >> 13) & 0x3ff)) : ref_f2h(in[i]);
		uint16_t wb = in[i] != in[i] ? (uint16_t)((x >> 16) | 0x40) : ref_f2bf(in[i]);
		int j = N - 1 - i;
		uint32_t xj = ref_fbits(in[j]);
		uint16_t whj = in[j] != in[j] ? (uint16_t)(((xj >> 16) & 0x8000) | 0x7e00 | ((xj >> 13) & 0x3ff)) : ref_f2h(in[j]);
		uint16_t wbj = in[j] != in[j] ? (uint16_t)((xj >> 16) | 0x40) : ref_f2bf(in[j]);

		ck_assert_msg(h[i] == wh, "f2h(0x%08x) = 0x%04x, expected 0x%04x", x, h[i], wh);
		ck_assert_msg(b[i] == wb, "f2bf(0x%08x) = 0x%04x, expected 0x%04x", x, b[i], wb);
		ck_assert(p[i] == ((unsigned)wh | (unsigned)whj << 16));
		ck_assert(q[i] == ((unsigned)wb | (unsigned)wbj << 16));
	}
	for (int i = 0; i < 65536; i++) {
		int nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
		uint32_t want = nan ? ((uint32_t)(i & 0x8000) << 16) | 0x7fc00000u | ((uint32_t)(i & 0x3ff) << 13)
				    : ref_fbits(ref_h2f((uint16_t)i));

		ck_assert_msg(hf[i] == want, "h2f(0x%04x) = 0x%08x, expected 0x%08x", i, hf[i], want);
		ck_assert_msg(bff[i] == ref_fbits(ref_bf2f((uint16_t)i)), "bf2f(0x%04x) = 0x%08x", i, bff[i]);
	}
}
END_TEST

/* the "cp.async" copies are synchronous; zero fill reads no source; the LDS operand reads */
START_TEST(copies)
{
	static unsigned g[512], out[32 * 16];
	int u = _i, sel = 4, mode = 0;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, sizeof g), tensor("out", out, sizeof out), value("mode", &mode)};

	for (int i = 0; i < 512; i++)
		g[i] = 0x10001u * (unsigned)i + 0x3000u;
	RUN_OK(u, a, 4, 1, 32, 2048);
	for (int t = 0; t < 32; t++) {
		const unsigned *o = out + t * 16;
		/* LDS words after the copies: [0, 128) = g[0, 128), [128, 256) = g or zeros, [256, 384) = 0 */
		unsigned lds[512];
		unsigned short hs[1024];

		for (int i = 0; i < 512; i++)
			lds[i] = i < 128 ? g[i] : i < 256 ? ((i - 128) / 4 % 2 == 0 ? g[i] : 0u) : i < 384 ? 0u : 0x7fa57fa5u;
		memcpy(hs, lds, sizeof hs);
		for (int i = 0; i < 4; i++) {
			ck_assert_msg(o[i] == g[4 * t + i], "thread %d: the copy before commit/wait: 0x%08x", t, o[i]);
			ck_assert_msg(o[4 + i] == (t % 2 == 0 ? g[128 + 4 * t + i] : 0u), "thread %d: zfill 0x%08x", t, o[4 + i]);
			ck_assert_msg(o[8 + i] == 0u, "thread %d: zfill pred false 0x%08x", t, o[8 + i]);
		}
		{
			const unsigned short *x = hs + ((t * 5) % 32) * 4, *ylo = hs + ((t * 3) % 16) * 8,
					     *yhi = hs + 256 + ((t * 7) % 16) * 8;

			ck_assert_uint_eq(o[12], (unsigned)x[0] | (unsigned)x[1] << 16);
			ck_assert_uint_eq(o[13], (unsigned)x[2] | (unsigned)x[3] << 16);
			ck_assert_uint_eq(o[14], (unsigned)ylo[t % 8] | (unsigned)yhi[(t + 3) % 8] << 16);
			ck_assert_uint_eq(o[15], (unsigned)yhi[7]);
		}
	}
}
END_TEST

START_TEST(copy_errors)
{
	static unsigned g[512], out[32 * 16];
	static const char *const want[] = {
		"tl_cp_async16: shared address", "tl_ld_u16x4: address",
		"out-of-bounds access to tensor 'g' at byte offset 2048 past its end (it has 2048 bytes)"};
	int u = _i / 3, sel = 4, mode = _i % 3 + 1;
	CpuArg a[] = {value("sel", &sel), tensor("g", g, sizeof g), tensor("out", out, sizeof out), value("mode", &mode)};

	run_fails(u, a, 4, 1, 32, 2048, want[_i % 3]);
}
END_TEST

/* what the emulation reports: _i = build * 4 + case */
START_TEST(errors)
{
	static unsigned out[128];
	int u = _i / 4, c = _i % 4, sel = 5, mode = c;
	CpuArg a[] = {value("sel", &sel), tensor("out", out, sizeof out), value("mode", &mode)};

	switch (c) {
	case 0: /* a matrix instruction in a partial wavefront */
		run_fails(u, a, 3, 1, (unsigned)unit_wave[u] / 2, 0,
			  u == 0 ? "v_mfma_f32_16x16x16f16 in warp 0, which has only 32 threads" : "v_wmma_f32_16x16x16_f16 in warp 0, which has only 16 threads");
		break;
	case 1: /* WMMA half-waves with different A */
		if (u == 1)
			run_fails(u, a, 3, 1, 32, 0, "lanes 4 and 20 hold different A elements (k 3: 0x3c00 and 0x3c01)");
		else
			RUN_OK(u, a, 3, 1, 64, 0);
		break;
	case 2: /* static and dynamic LDS over 64 KiB */
		run_fails(u, a, 3, 1, 64, 65536 - 512, "exceed the 65536 bytes of LDS of a workgroup");
		RUN_OK(u, a, 3, 1, 64, 65536 - 1024);
		break;
	default: /* a ds_bpermute that half the wave skips */
		run_fails(u, a, 3, 1, 64, 0, "wait at ds_bpermute_b32");
		break;
	}
}
END_TEST

/* the unit kernels are HIP C for the real tilec_hip.h: clang-19 compiles them for gfx942 and gfx1100 */
START_TEST(clang_compiles)
{
	static const char *const archs[] = {"gfx942", "gfx1100"};
	char dir[] = "/tmp/tilec-hipk-XXXXXX", hdr[256], src[256], obj[256], cmd[1200];
	const char *h = tilec_template("tilec_hip.h");
	char *k = test_readfile("test/cpu_hip_kernels.hip", NULL);
	FILE *f;
	int rc;

	if (system("command -v clang-19 >/dev/null 2>&1") != 0) {
		free(k);
		return; /* make deps installs it; without it there is nothing to check */
	}
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(hdr, sizeof hdr, "%s/tilec_hip.h", dir);
	snprintf(src, sizeof src, "%s/k.hip", dir);
	snprintf(obj, sizeof obj, "%s/k.co", dir);
	ck_assert_ptr_nonnull(f = fopen(hdr, "w"));
	fputs(h, f);
	fclose(f);
	ck_assert_ptr_nonnull(f = fopen(src, "w"));
	fputs(k, f);
	fclose(f);
	free(k);
	snprintf(cmd, sizeof cmd,
		 "clang-19 -x hip --cuda-device-only -nogpuinc -nogpulib --no-gpu-bundle-output --offload-arch=%s -O1 "
		 "-I%s %s -o %s 2>&1",
		 archs[_i], dir, src, obj);
	rc = system(cmd);
	unlink(hdr);
	unlink(src);
	unlink(obj);
	rmdir(dir);
	ck_assert_msg(rc == 0, "%s: clang-19 failed on test/cpu_hip_kernels.hip (exit %d)", archs[_i], rc);
}
END_TEST

/* the cross-check: the tables of cpu_hip_ref.h (from the AMD documents) against the fragments
 * tilec's planner uses (gen/layout/mma.c mfma_fragment / wmma_fragment, which test/check_mma.c holds to
 * its own transcription of the ISA tables): the same lane and element for every matrix entry */
START_TEST(planner_tables)
{
	Arena A;
	Err err = {0};

	arena_init(&A);
	for (int op = MMA_A; op <= MMA_C; op++) {
		Fragment *F = mfma_fragment(&A, (MmaOperand)op, &err), *G = wmma_fragment(&A, (MmaOperand)op, &err);

		ck_assert_msg(F && G, "%s", err.msg);
		for (int r = 0; r < 16; r++)
			for (int c = 0; c < 16; c++) {
				int64_t x[3] = {r, c, 0}, y[2];
				int lane, el, l1;

				if (op == MMA_A)
					ref_mfma_a(r, c, &lane, &el);
				else if (op == MMA_B)
					ref_mfma_b(r, c, &lane, &el);
				else
					ref_mfma_d(r, c, &lane, &el);
				ck_assert_int_eq(layout_eval(F, x, y, &err), 0);
				ck_assert_msg(y[1] == lane && y[0] == el, "mfma op %d (%d,%d): planner lane %lld elem %lld, ISA %d %d",
					      op, r, c, (long long)y[1], (long long)y[0], lane, el);
				for (int rep = 0; rep < (op == MMA_C ? 1 : 2); rep++) {
					x[2] = rep;
					if (op == MMA_A)
						ref_wmma_a(r, c, &lane, &l1, &el);
					else if (op == MMA_B)
						ref_wmma_b(r, c, &lane, &l1, &el);
					else
						ref_wmma_d(r, c, &lane, &el);
					ck_assert_int_eq(layout_eval(G, x, y, &err), 0);
					ck_assert_msg(y[1] == (rep ? l1 : lane) && y[0] == el,
						      "wmma op %d (%d,%d) replica %d: planner lane %lld elem %lld, ISA %d %d", op, r,
						      c, rep, (long long)y[1], (long long)y[0], rep ? l1 : lane, el);
				}
			}
	}
	arena_free(&A);
}
END_TEST

/* ---- programs through tilec_run -------------------------------------------------------------- */

static const char *const archs[] = {"gfx90a", "gfx942", "gfx1100"};
static const char generic_sizes[] = "*=1;*=37;";

static const struct {
	const char *file, *sizes;
} special[] = {
	{"samples/gemm.tile", "M=1,N=1,K=1;M=200,N=203,K=205;M=256,N=384,K=512"},
	{"samples/gemm_bf16.tile", "M=1,N=1,K=64;M=200,N=203,K=192"},
	/* strided: element by element (odd lda, ldb; an odd ldc) and in vectors */
	{"samples/gemm_strided.tile", "M=200,N=203,K=205;M=128,N=136,K=96,lda=104,ldb=144,ldc=136;"
	 "M=128,N=136,K=96,lda=104,ldb=144,ldc=137"},
	{"samples/softmax.tile", "M=1;M=37;M=1003"},
	{"test/cpu/cdiv_operand.tile", "*=1;*=37;N=7000;"},
	{"test/cpu/column_slice.tile", "*=1;N=300,G=16;N=37,G=8;"},
	{"test/cpu/fp8_convert.tile", "*=1;N=512;"},
	{"test/cpu/floor_div.tile", "*=1;N=256;"},
	{"test/cpu/constants.tile", "*=1;N=256;"},
	{"test/cpu/parallel_guard.tile", "*=1;M=128,N=128;M=37,N=200;"},
	{"test/cpu/global_hazard.tile", "M=64;M=100"},
	{"test/cpu/padded_tiles.tile", "*=1;*=300"},
	{"test/cpu/padded_reduce.tile", "N=421"},
	{"test/cpu/padded_copy.tile", "*=1;*=37"},
	{"test/cpu/padded_rows.tile", "*=1;*=37;*=421"},
	{"test/cpu/nest_broadcast.tile", "*=1;*=37"},
	{"test/cpu/nest_scatter.tile", "*=1;*=37"},
	{"test/cpu/padded_examples.tile", "*=1;*=37"},
	{"test/cpu/exact_table.tile", "*=192;*=37"},
	{"test/cpu/rank3_copy.tile", "B=3,M=20,N=40"},
	/* strided tensors: strides of whole vectors (the vector body) and not (element by element) */
	{"test/cpu/strided_runtime.tile", "M=1,K=1;M=37,K=64,lda=72,ldc=136;M=37,K=64,lda=67,ldc=64;M=37,K=64,lda=64,ldc=69"},
	{"test/cpu/strided_colmajor.tile", "K=1,M=1;K=40,M=64,ldt=48,ldx=64"},
	{"test/cpu/strided_const.tile", "M=1;M=37"},
	{"test/cpu/strided_rank3.tile", "B=3,S=37;B=2,S=40,sb=2560,ss=64,cb=4096,cs=72"},
	{"test/cpu/strided_nest.tile", "M=37;M=40,ldb=68"},
	{"test/strided/head.tile", "S=37;S=37,sq=192,so=320,ldt=64"},
	{"test/cpu/nest_contiguity.tile", "*=64;*=211"},
	{"test/cpu/flash_smem_p.tile", "*=1;BH=3,L=300"},
	{"test/cpu/nest_vector.tile", "M=64;M=37"},
	{"test/cpu/nest_vector_strided.tile", "M=64;M=37,ldc=64,ldt=40;M=37,ldc=67,ldt=37;M=1"},
	{"test/cpu/nest_vload.tile", "M=64,N=128;M=37,N=61;M=64,N=37;M=37,N=256"},
	{"test/cpu/nest_vload_strided.tile", "M=64,lda=64;M=37,lda=68;M=37,lda=67"},
	{"test/cpu/nest_vload_mixed.tile", "M=64;M=37"},
	{"test/cpu/copy_layout.tile", "M=64;M=37"},
	{"samples/splitk_gemm.tile", "M=1,N=1,K=1;M=200,N=203,K=205"},
	{"test/cpu/atomic_hist.tile", "*=1;N=1000"},
	{"test/cpu/atomic_tile.tile", "*=1;*=37;M=64,N=128;"},
	{"test/cpu/atomic_fmax.tile", "*=1;*=37;M=100,N=200"},
};

static const char *const programs[] = {
	"samples/copy.tile",	      "samples/convert.tile",	       "samples/elementwise.tile",
	"samples/transpose.tile",     "samples/softmax.tile",	       "samples/gemm.tile",
	"samples/gemm_bf16.tile",     "samples/gemm_strided.tile",     "test/cpu/cdiv_operand.tile",
	"test/cpu/column_slice.tile",
	"test/cpu/constants.tile",    "test/cpu/floor_div.tile",       "test/cpu/fp8_convert.tile",
	"test/cpu/guard_grid.tile",   "test/cpu/parallel_guard.tile",  "test/cpu/pipeline_let.tile",
	"test/cpu/serial_local.tile", "test/cpu/war_loop.tile",	       "test/cpu/smem_reuse.tile",
	"test/cpu/strided_runtime.tile", "test/cpu/strided_colmajor.tile", "test/cpu/strided_const.tile",
	"test/cpu/strided_rank3.tile", "test/cpu/strided_nest.tile", "test/strided/head.tile",
	/* an mma.sync placeholder layout resolved under a wave of 64 (its warps are of 32) */
	"test/control/placeholder_mma.tile",
	"test/cpu/global_hazard.tile", "test/cpu/padded_tiles.tile", "test/cpu/padded_reduce.tile",
	"test/cpu/padded_copy.tile", "test/cpu/padded_rows.tile", "test/cpu/nest_broadcast.tile",
	"test/cpu/nest_scatter.tile",
	"test/cpu/padded_examples.tile",
	"test/cpu/rank3_copy.tile", "test/cpu/nest_contiguity.tile", "test/layout/transposed_store.tile",
	"test/cpu/exact_table.tile", "test/cpu/int_reduce.tile", "test/cpu/reduce_to_shared.tile",
	"test/cpu/region_loop.tile", "test/cpu/local_convert.tile", "test/cpu/single_point.tile",
	"test/cpu/affine_read.tile", "test/cpu/reduce_wide.tile",
	"test/cpu/rank3_stage.tile",
	/* FlashAttention with P through LDS (with P in registers it is refused: register_a_refused) */
	"test/cpu/flash_smem_p.tile", "test/cpu/exp2_log2_bf16.tile",
	"test/cpu/nest_vector.tile", "test/cpu/copy_layout.tile", "test/cpu/nest_vector_strided.tile",
	"test/cpu/nest_vload.tile", "test/cpu/nest_vload_strided.tile", "test/cpu/nest_vload_mixed.tile",
	/* atomics: f32/i32 atomics, f16/bf16 through the CAS loop, f32 max/min */
	"samples/splitk_gemm.tile",   "test/cpu/atomic_nest.tile",     "test/cpu/atomic_hist.tile",
	"test/cpu/atomic_tile.tile",   "test/cpu/atomic_fmax.tile",
};

static void
run_program(const char *path, const char *arch, const char *sizes)
{
	tilec_run_options o;
	tilec_run_result r;
	char *src;
	size_t len;

	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	tilec_run_options_init(&o);
	o.filename = path;
	o.target = TILEC_TARGET_HIP;
	o.arch = arch;
	o.sizes = sizes;
	o.seed = 1;
	o.timeout_s = 120;
	tilec_run(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_RUN_AGREE, "%s (%s): status %d, %d of %d runs differ:\n%s%s", path, arch,
		      r.status, r.differ, r.runs, r.diagnostics, r.report);
	ck_assert_int_gt(r.runs, 0);
	tilec_run_result_free(&r);
	free(src);
}

START_TEST(program)
{
	const char *path = programs[_i / 3], *sizes = generic_sizes;

	for (size_t i = 0; i < countof(special); i++)
		if (!strcmp(special[i].file, path))
			sizes = special[i].sizes;
	run_program(path, archs[_i % 3], sizes);
}
END_TEST

/* every sample but gemm_sm90 is in programs[] (a new sample must be added there) */
START_TEST(programs_complete)
{
	static const char *const samples[] = {"convert", "copy", "elementwise", "gemm", "gemm_bf16", "gemm_strided",
					      "softmax", "splitk_gemm", "transpose"};
	struct stat st;

	for (size_t i = 0; i < countof(samples); i++) {
		char p[128];
		int found = 0;

		snprintf(p, sizeof p, "samples/%s.tile", samples[i]);
		ck_assert_msg(stat(p, &st) == 0, "%s is gone", p);
		for (size_t j = 0; j < countof(programs); j++)
			found |= !strcmp(programs[j], p);
		ck_assert_msg(found, "%s is not run", p);
	}
	/* sizes for a program not in programs[] would be dead (three rows were, at f9bc9dd) */
	for (size_t i = 0; i < countof(special); i++) {
		int found = 0;

		for (size_t j = 0; j < countof(programs); j++)
			found |= !strcmp(programs[j], special[i].file);
		ck_assert_msg(found, "special sizes for %s, which programs[] does not run", special[i].file);
	}
}
END_TEST

/* a gemm whose A operand is in registers (the FlashAttention programs: P feeds P V) is
 * refused on every AMD arch with the reason, at the gemm (MFMA/WMMA read A from LDS only) */
static const char *const reg_a_programs[] = {"samples/flash_fwd.tile", "test/cpu/flash_small.tile",
					     "test/cpu/flash_causal.tile", "test/cpu/flash_bshd.tile"};

START_TEST(register_a_refused)
{
	const char *path = reg_a_programs[_i / 3], *arch = archs[_i % 3];
	tilec_run_options o;
	tilec_run_result r;
	char *src;
	size_t len;

	src = test_readfile(path, &len);
	ck_assert_msg(src != NULL, "cannot read %s", path);
	tilec_run_options_init(&o);
	o.filename = path;
	o.target = TILEC_TARGET_HIP;
	o.arch = arch;
	o.sizes = "*=64";
	o.timeout_s = 60;
	ck_assert_int_eq(tilec_run(src, len, &o, &r), TILEC_RUN_ERROR);
	ck_assert_msg(strstr(r.diagnostics, "error: layout inference: gemm: operand A 'p' in registers is "
					    "not lowered for ") != NULL &&
			      strstr(r.diagnostics, strcmp(arch, "gfx1100") ? "for MFMA yet" : "for WMMA yet"),
		      "%s (%s): %s", path, arch, r.diagnostics);
	tilec_run_result_free(&r);
	free(src);
}
END_TEST

/* ---- the check itself: hand-written HIP C, wrong in one way each -------------------------------- */
#define SCALE_SRC \
	"kernel k(A: f32[N], B: f32[N]) grid(cdiv(N, 128)) threads(128) {\n" \
	"  for i in parallel(128) { B[bx * 128 + i] = A[bx * 128 + i] * 2.0; }\n}\n"
#define SCALE_HEAD \
	"#include \"tilec_hip.h\"\n// kernel k: 128 threads, 0 bytes of dynamic shared memory\n" \
	"extern \"C\" __global__ void k(float *A, float *B, int N)\n{\n\tconst int i = blockIdx.x * 128 + threadIdx.x;\n"

static const struct {
	const char *hip, *expect;
} wrong[] = {
	{SCALE_HEAD "\tif (i < N) B[i] = A[i] * 2.0f;\n}\n", NULL},
	/* a value from the neighbouring lane (wave64: lane ^ 32 of the wave) */
	{SCALE_HEAD "\tfloat v = tl_shfl_xor(A[i < N ? i : 0] * 2.0f, 32);\n\tif (i < N) B[i] = v;\n}\n", "differ"},
	/* no guard */
	{SCALE_HEAD "\tB[i] = A[i] * 2.0f;\n}\n", "tensor 'A'"},
};

START_TEST(detects)
{
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.target = TILEC_TARGET_HIP;
	o.arch = "gfx90a";
	o.sizes = "N=300";
	o.cuda_override = wrong[_i].hip;
	o.timeout_s = 60;
	tilec_run(SCALE_SRC, strlen(SCALE_SRC), &o, &r);
	if (!wrong[_i].expect) {
		ck_assert_msg(r.status == TILEC_RUN_AGREE, "%s%s", r.diagnostics, r.report);
	} else {
		ck_assert_msg(r.status == TILEC_RUN_DIFFER, "status %d:\n%s%s", r.status, r.diagnostics, r.report);
		ck_assert_msg(strstr(r.report, wrong[_i].expect) != NULL, "no '%s' in\n%s", wrong[_i].expect, r.report);
	}
	tilec_run_result_free(&r);
}
END_TEST

START_TEST(usage)
{
	static const char src[] = "kernel k(A: f32[N]) grid(1) threads(64) { for i in parallel(64) { A[i] = 1.0; } }\n";
	static const char *const bad_arch[] = {"sm_80", "gfx1030", "gfx90"};
	tilec_run_options o;
	tilec_run_result r;

	tilec_run_options_init(&o);
	o.target = TILEC_TARGET_HIP;
	for (size_t i = 0; i < countof(bad_arch); i++) {
		o.arch = bad_arch[i];
		ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_USAGE);
		ck_assert_ptr_nonnull(strstr(r.diagnostics, "unknown hip arch"));
		tilec_run_result_free(&r);
	}
	o.arch = NULL; /* the default: gfx942 */
	o.sizes = "N=64";
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_AGREE);
	tilec_run_result_free(&r);
	o.target = 7;
	ck_assert_int_eq(tilec_run(src, strlen(src), &o, &r), TILEC_RUN_USAGE);
	tilec_run_result_free(&r);
	/* gemm_sm90 needs more LDS than AMD has: tilec refuses it for hip */
	{
		char *s = test_readfile("samples/gemm_sm90.tile", NULL);
		size_t n;

		ck_assert_ptr_nonnull(s);
		n = strlen(s);
		o.target = TILEC_TARGET_HIP;
		o.arch = "gfx942";
		ck_assert_int_eq(tilec_run(s, n, &o, &r), TILEC_RUN_ERROR);
		ck_assert_ptr_nonnull(strstr(r.diagnostics, "error"));
		tilec_run_result_free(&r);
		free(s);
	}
}
END_TEST

Suite *
suite_cpu_hip(void)
{
	Suite *s = suite_create("cpu_hip");
	TCase *u = tcase_create("unit"), *p = tcase_create("programs");

	tcase_add_unchecked_fixture(u, unit_setup, unit_teardown);
	tcase_set_timeout(u, 300);
	tcase_add_loop_test(u, shuffles, 0, 2);
	tcase_add_loop_test(u, wave_sum, 0, 2);
	tcase_add_loop_test(u, matrix, 0, 4);
	tcase_add_loop_test(u, conversions, 0, 2);
	tcase_add_loop_test(u, copies, 0, 2);
	tcase_add_loop_test(u, copy_errors, 0, 6);
	tcase_add_loop_test(u, errors, 0, 8);
	tcase_add_loop_test(u, clang_compiles, 0, 2);
	tcase_add_test(u, planner_tables);
	suite_add_tcase(s, u);
	tcase_set_timeout(p, 600);
	tcase_add_loop_test(p, program, 0, (int)(countof(programs) * 3));
	tcase_add_test(p, programs_complete);
	tcase_add_loop_test(p, register_a_refused, 0, (int)(countof(reg_a_programs) * 3));
	tcase_add_loop_test(p, detects, 0, countof(wrong));
	tcase_add_test(p, usage);
	suite_add_tcase(s, p);
	return s;
}
