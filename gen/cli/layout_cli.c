/*
 * layout_cli.c: `tilec layout ...`, for people who work on layouts. `show`
 * prints a builtin layout (a shared-memory swizzle for a shape and element
 * type, an MMA operand or accumulator fragment for an instruction or a tile
 * and warp count) in the printed form, and with --table / --grid the full
 * map from each logical element to (thread, slot) or to its physical offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "layout.h"
#include "svg.h"

static const char usage[] =
	"usage: tilec layout show NAME [options]\n"
	"       tilec layout list\n"
	"       tilec layout bench [RUNS]   time the exact decisions on a 256x256 fragment\n"
	"names:\n"
	"  swizzle    --mode 32B|64B|128B|none --shape RxC --dtype T   XOR bank swizzle\n"
	"  padded     --shape RxC --dtype T                            padded rows\n"
	"  linear     --shape RxC                                      row-major\n"
	"  f64        --shape RxC [--k-outer]                          fp64 swizzles\n"
	"  smem       --shape RxC --dtype T [--k-outer] [--no-pad]     TileLang's GEMM operand choice\n"
	"  mma        --operand A|B|C --dtype T [--tile MxN --warps W [--policy P] | --warp-grid MxN]\n"
	"             mma.sync fragment (m16n8k16 f16/bf16, m16n8k8 tf32, m16n8k32 8-bit); with\n"
	"             --tile, the block-level fragment (A: MxK, B: KxN, C: MxN)\n"
	"  wgmma      --tile 64xN                                      Hopper wgmma accumulator\n"
	"  mfma       --operand A|B|C                                  CDNA v_mfma_f32_16x16x16_f16\n"
	"  wmma       --operand A|B|C                                  RDNA3 v_wmma_f32_16x16x16_f16\n"
	"options:\n"
	"  --table    every logical element -> (thread, slot) or physical coordinates and offset\n"
	"  --grid     a 2-D picture, one cell per element: T<thread>:<slot> or the offset\n"
	"  --inverse  also print the closed-form inverse\n"
	"  --svg FILE draw it: a fragment coloured by thread (T<thread>:<slot>), a shared\n"
	"             layout as its bank map (b<bank>, 32 banks of 4 bytes)\n"
	"types: f16 bf16 f32 tf32 f64 i8 u8 s8 e4m3 e5m2 fp8\n"
	"policies: square full-row full-col\n";

typedef struct {
	const char *name, *mode, *shape, *dtype, *operand, *tile, *policy, *grid_warps, *svg;
	int warps, table, grid, inverse, k_outer, no_pad;
} Opts;

static int
dtype_bits(const char *s)
{
	static const struct {
		const char *n;
		int bits;
	} t[] = {{"f16", 16}, {"bf16", 16}, {"f32", 32}, {"tf32", 32}, {"f64", 64}, {"i8", 8},
		 {"u8", 8},   {"s8", 8},    {"e4m3", 8}, {"e5m2", 8},   {"fp8", 8},  {"int8", 8}};
	size_t k;

	for (k = 0; s && k < countof(t); k++)
		if (!strcmp(s, t[k].n))
			return t[k].bits;
	return -1;
}

/* "64x64" or "2x64x64" */
static int
parse_shape(const char *s, int64_t *shape, int max)
{
	int n = 0;

	if (!s)
		return -1;
	while (*s) {
		char *end;
		long long v = strtoll(s, &end, 10);

		if (end == s || v < 1 || v > (1LL << 40) || n == max)
			return -1;
		shape[n++] = v;
		s = end;
		if ((*s == 'x' || *s == 'X' || *s == ',') && s[1])
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

static int
opname(const char *s, MmaOperand *op)
{
	if (!s || !s[0] || s[1]) /* "" has no s[1] (fuzz_layout: --operand '') */
		return -1;
	if (*s == 'A' || *s == 'a')
		*op = MMA_A;
	else if (*s == 'B' || *s == 'b')
		*op = MMA_B;
	else if (*s == 'C' || *s == 'c' || *s == 'D' || *s == 'd')
		*op = MMA_C;
	else
		return -1;
	return 0;
}

/* with a sink, b is written out and emptied as it fills: constant memory */
static void
drain(Buf *b, FILE *sink, size_t at)
{
	if (sink && b->len >= at) {
		fwrite(buf_str(b), 1, b->len, sink);
		buf_reset(b);
	}
}

static void
table(Buf *b, const Layout *L, FILE *sink)
{
	int64_t total = layout_size(L), f, x[LAYOUT_MAXDIM + 1], y[LAYOUT_MAXDIM + 1], r;
	int k;
	Err err = {0};

	if (L->is_frag)
		buf_puts(b, "# logical -> (thread, slot) for each replica\n");
	else
		buf_puts(b, "# logical -> physical (row-major offset)\n");
	for (f = 0; f < total; f++) {
		int64_t t = f;

		for (k = L->nin - 1; k >= 0; k--) {
			x[k] = t % L->in_shape[k];
			t /= L->in_shape[k];
		}
		layout_print_shape(b, x, L->nin);
		buf_puts(b, " ->");
		for (r = 0; r < L->rep; r++) {
			int64_t off = 0;

			x[L->nin] = r;
			if (layout_eval(L, x, y, &err)) {
				buf_printf(b, " error: %s", err.msg);
				break;
			}
			if (L->is_frag) {
				buf_printf(b, " (thread %lld, slot ", (long long)y[L->nout]);
				if (L->nout == 1)
					buf_printf(b, "%lld", (long long)y[0]);
				else
					layout_print_shape(b, y, L->nout);
				buf_putc(b, ')');
			} else {
				for (k = 0; k < L->nout; k++)
					off = off * L->out_shape[k] + y[k];
				buf_putc(b, ' ');
				layout_print_shape(b, y, L->nout);
				buf_printf(b, " (%lld)", (long long)off);
			}
		}
		buf_putc(b, '\n');
		drain(b, sink, 1 << 16);
	}
}

static void
grid(Buf *b, const Layout *L)
{
	int64_t i, j, x[3] = {0, 0, 0}, y[LAYOUT_MAXDIM + 1];
	Err err = {0};
	int k;

	if (L->nin != 2) {
		buf_puts(b, "# --grid needs a 2-D layout\n");
		return;
	}
	buf_printf(b, "# rows %s, columns %s; cells: %s\n", iexpr_varname(0), iexpr_varname(1),
		   L->is_frag ? "T<thread>:<slot> (replica 0)" : "row-major physical offset");
	buf_puts(b, "     ");
	for (j = 0; j < L->in_shape[1]; j++)
		buf_printf(b, " %8lld", (long long)j);
	buf_putc(b, '\n');
	for (i = 0; i < L->in_shape[0]; i++) {
		buf_printf(b, "%4lld:", (long long)i);
		for (j = 0; j < L->in_shape[1]; j++) {
			char cell[64];
			int64_t off = 0;

			x[0] = i;
			x[1] = j;
			if (layout_eval(L, x, y, &err)) {
				buf_puts(b, "        ?");
				continue;
			}
			for (k = 0; k < L->nout; k++)
				off = off * L->out_shape[k] + y[k];
			if (L->is_frag)
				snprintf(cell, sizeof cell, "T%lld:%lld", (long long)y[L->nout], (long long)off);
			else
				snprintf(cell, sizeof cell, "%lld", (long long)off);
			buf_printf(b, " %8s", cell);
		}
		buf_putc(b, '\n');
	}
}

static Layout *
build(Arena *A, const Opts *o, Buf *out, Err *err, int *usage_err)
{
	int64_t shape[LAYOUT_MAXDIM], tile[2];
	int n = 0, bits = -1;
	MmaOperand op = MMA_C;
	const char *nm = o->name;

	*usage_err = 1;
	if (o->shape && (n = parse_shape(o->shape, shape, LAYOUT_MAXDIM)) < 1)
		return err_set(err, "bad --shape '%s' (want e.g. 64x64)", o->shape), NULL;
	if (o->dtype && (bits = dtype_bits(o->dtype)) < 0)
		return err_set(err, "unknown --dtype '%s'", o->dtype), NULL;
	if (o->operand && opname(o->operand, &op))
		return err_set(err, "bad --operand '%s' (want A, B or C)", o->operand), NULL;
	if (!strcmp(nm, "swizzle") || !strcmp(nm, "padded") || !strcmp(nm, "linear") ||
	    !strcmp(nm, "f64") || !strcmp(nm, "smem")) {
		if (!o->shape)
			return err_set(err, "%s needs --shape", nm), NULL;
		if (strcmp(nm, "linear") && strcmp(nm, "f64") && !o->dtype)
			return err_set(err, "%s needs --dtype", nm), NULL;
		*usage_err = 0;
		if (!strcmp(nm, "linear"))
			return swizzle_linear(A, shape, n, err);
		if (!strcmp(nm, "f64"))
			return swizzle_f64(A, shape, n, !o->k_outer, err);
		if (!strcmp(nm, "padded"))
			return swizzle_padded(A, shape, n, bits / 8, err);
		if (!strcmp(nm, "smem")) {
			SmemLayout s;
			static const char *kinds[] = {"linear", "padded", "swizzle", "fp64 k-inner",
						      "fp64 k-outer"};

			if (swizzle_choose(A, shape, n, bits / 8, !o->k_outer, !o->no_pad, &s, err))
				return NULL;
			buf_printf(out, "# %s%s%s, base alignment %lld bytes\n", kinds[s.kind],
				   s.kind == SMEM_SWIZZLE ? " " : "",
				   s.kind == SMEM_SWIZZLE ? swizzle_name(s.mode) : "",
				   (long long)swizzle_alignment(s.mode));
			return s.layout;
		}
		{
			SwizzleMode m;

			if (!o->mode)
				return *usage_err = 1, err_set(err, "swizzle needs --mode"), NULL;
			if (!strcmp(o->mode, "none"))
				m = SWZ_NONE;
			else if (!strcmp(o->mode, "32B"))
				m = SWZ_32B;
			else if (!strcmp(o->mode, "64B"))
				m = SWZ_64B;
			else if (!strcmp(o->mode, "128B"))
				m = SWZ_128B;
			else
				return *usage_err = 1, err_set(err, "bad --mode '%s'", o->mode), NULL;
			buf_printf(out, "# %s swizzle, base alignment %lld bytes\n", swizzle_name(m),
				   (long long)swizzle_alignment(m));
			return swizzle_layout(A, m, shape, n, bits / 8, err);
		}
	}
	if (!strcmp(nm, "wgmma")) {
		if (!o->tile || parse_shape(o->tile, tile, 2) != 2 || tile[0] != 64)
			return err_set(err, "wgmma needs --tile 64xN"), NULL;
		*usage_err = 0;
		return wgmma_acc_fragment(A, tile[1], err);
	}
	if (!strcmp(nm, "mfma") || !strcmp(nm, "wmma")) {
		if (!o->operand)
			return err_set(err, "%s needs --operand", nm), NULL;
		*usage_err = 0;
		return nm[0] == 'm' ? mfma_fragment(A, op, err) : wmma_fragment(A, op, err);
	}
	if (!strcmp(nm, "mma")) {
		int mw, nw;

		if (!o->operand)
			return err_set(err, "mma needs --operand"), NULL;
		if (bits < 0)
			bits = 16;
		if (o->grid_warps && !o->tile)
			return err_set(err, "mma --warp-grid needs --tile"), NULL;
		if (!o->tile) {
			*usage_err = 0;
			return mma_sync_fragment(A, op, bits, err);
		}
		if (parse_shape(o->tile, tile, 2) != 2)
			return err_set(err, "bad --tile '%s' (want e.g. 128x128)", o->tile), NULL;
		if (o->grid_warps) {
			int64_t g[2];

			if (parse_shape(o->grid_warps, g, 2) != 2 || g[0] < 1 || g[1] < 1 ||
			    g[0] > 64 || g[1] > 64)
				return err_set(err, "bad --warp-grid '%s'", o->grid_warps), NULL;
			mw = (int)g[0];
			nw = (int)g[1];
		} else {
			WarpPolicy p = WARP_SQUARE;
			int64_t M = tile[0], N = tile[1];

			if (o->warps < 1)
				return err_set(err, "mma --tile needs --warps or --warp-grid"), NULL;
			if (o->policy && !strcmp(o->policy, "full-row"))
				p = WARP_FULL_ROW;
			else if (o->policy && !strcmp(o->policy, "full-col"))
				p = WARP_FULL_COL;
			else if (o->policy && strcmp(o->policy, "square"))
				return err_set(err, "bad --policy '%s'", o->policy), NULL;
			/* the partition is of the accumulator: A is MxK, B is KxN */
			if (op == MMA_A)
				N = 8 * o->warps;
			if (op == MMA_B)
				M = 16 * o->warps;
			*usage_err = 0;
			if (mma_warp_partition(M, N, o->warps, p, MMA_CUDA, &mw, &nw, err))
				return NULL;
		}
		*usage_err = 0;
		buf_printf(out, "# mma.sync %s, %d-bit inputs, %lldx%lld over %dx%d warps\n",
			   op == MMA_A ? "A" : op == MMA_B ? "B" : "C", bits, (long long)tile[0],
			   (long long)tile[1], mw, nw);
		return mma_block_fragment(A, op, tile[0], tile[1], bits, mw, nw, err);
	}
	return err_set(err, "unknown layout '%s' (tilec layout list)", nm), NULL;
}


/* ---- bench: every exact decision on a 256x256 fragment over 256 threads ---- */

/* CPU time of this thread: the machine may be shared, and wall time then
 * counts other processes' work too */
static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

enum { B_NEW, B_INJ, B_INV, B_EQ, B_CONT, B_CONT2, B_IMPL, B_COND, B_N };

/* the same sum with its terms in the opposite order: an equal map that is
 * not the same expression, so IsEqual has to enumerate */
static IExpr *
reversed(Arena *A, IExpr *e)
{
	if (e->k != IX_ADD)
		return e;
	return iexpr_add(A, e->b, reversed(A, e->a));
}

static int
bench(int iters, Buf *out, Buf *errout)
{
	static const char *names[B_N] = {
		"construct (exact OutputShape, ThreadExtent)", "DetectInjective",
		"Inverse (derive closed form + full round trip)", "IsEqual (terms reordered)",
		"Contains (vs its 2x replication: g + K * _rep)",
		"Contains (vs an equal map: (thread, slot) table)", "implicit slot map (complement)",
		"CondenseReplicateVar (R = 4, half used)"};
	double t[B_N][64], med[B_N], w0, wall;
	Arena A;
	Err err = {0};
	Fragment *F, *G, *R, *H;
	int64_t shape[2] = {256, 256};
	int k, i, fail = 0;

	if (iters < 1 || iters > 64)
		iters = 15;
	arena_init(&A);
	F = mma_block_fragment(&A, MMA_C, 256, 256, 16, 2, 4, &err);
	R = F ? frag_replicate(&A, F, 2, &err) : NULL;
	if (!F || !R) {
		buf_printf(errout, "bench: %s\n", err.msg);
		arena_free(&A);
		return 1;
	}
	w0 = wall_ms();
	for (i = 0; i < iters; i++) {
		Arena B;
		double t0;
		IExpr *sub[IEXPR_NVARS] = {0}, *thr;

		arena_init(&B);
		t0 = now_ms();
		G = frag_new(&B, F->in_shape, 2, reversed(&B, F->thread), 1, F->fwd, 1, &err);
		t[B_NEW][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= layout_check_injective(F, &err) != 0;
		t[B_INJ][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= layout_inverse(&B, F, 0, &err) == NULL;
		t[B_INV][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= layout_equal(F, G, &err) != 1;
		t[B_EQ][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= frag_contains(F, R, 1, &err) != 1;
		t[B_CONT][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= frag_contains(F, G, 1, &err) != 1;
		t[B_CONT2][i] = now_ms() - t0;
		t0 = now_ms();
		fail |= frag_new(&B, shape, 2, F->thread, 1, NULL, 0, &err) == NULL;
		t[B_IMPL][i] = now_ms() - t0;
		sub[IEXPR_REP] = iexpr_modc(&B, iexpr_var(&B, IEXPR_REP), 2);
		thr = iexpr_add(&B, F->thread, iexpr_mulc(&B, iexpr_subst(&B, iexpr_var(&B, IEXPR_REP), sub,
									      NULL), 256));
		H = frag_new(&B, shape, 2, thr, 4, F->fwd, 1, &err);
		t0 = now_ms();
		H = H ? frag_condense_rep(&B, H, &err) : NULL;
		t[B_COND][i] = now_ms() - t0;
		fail |= !H || H->rep != 2;
		arena_free(&B);
		if (fail)
			break;
	}
	if (fail) {
		buf_printf(errout, "bench: a decision failed: %s\n", err.msg);
		arena_free(&A);
		return 1;
	}
	wall = wall_ms() - w0;
	buf_puts(out, "layout core decisions on ");
	layout_print(out, F);
	buf_printf(out, "\n(%lld points, %lld threads; thread CPU time, median of %d runs, limit 5 ms)\n",
		   (long long)layout_size(F), (long long)F->nthreads, iters);
	for (k = 0; k < B_N; k++) {
		qsort(t[k], (size_t)iters, sizeof t[k][0], cmpd);
		med[k] = t[k][iters / 2];
		buf_printf(out, "  %-48s %7.3f ms  (max %.3f)%s\n", names[k], med[k], t[k][iters - 1],
			   med[k] < 5.0 ? "" : "  OVER 5 ms");
		fail |= med[k] >= 5.0;
	}
	buf_printf(out, "  wall time of all %d rounds: %.1f ms (%.2f ms per round of %d decisions)\n",
		   iters, wall, wall / iters, B_N);
	arena_free(&A);
	return fail;
}

/* --svg FILE: the picture of L (svg.c) */
static int
writesvg(const Opts *o, const Layout *L, Buf *errout)
{
	int bits = o->dtype ? dtype_bits(o->dtype) : 32, bad;
	Err err = {0};
	Buf b;

	buf_init(&b);
	if (svg_layout(&b, L, bits > 0 ? (bits + 7) / 8 : 4, &err)) {
		buf_printf(errout, "tilec layout: error: %s\n", err.msg);
		buf_free(&b);
		return -1;
	}
	bad = cli_write_file(o->svg, buf_str(&b), b.len) != 0;
	if (bad)
		buf_printf(errout, "tilec layout: error: cannot write %s: %s\n", o->svg,
		           strerror(errno));
	buf_free(&b);
	return bad ? -1 : 0;
}

int
layout_cli_run(int argc, char **argv, Buf *out, Buf *errout)
{
	return layout_cli_stream(argc, argv, out, errout, NULL);
}

int
layout_cli_stream(int argc, char **argv, Buf *out, Buf *errout, FILE *sink)
{
	Opts o;
	Arena A;
	Err err = {0};
	Layout *L;
	int k, usage_err;

	memset(&o, 0, sizeof o);
	/* -h / --help anywhere (tilec layout show --help, tilec layout list -h, ...) */
	for (k = 1; k < argc; k++)
		if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help")) {
			buf_puts(out, usage);
			return 0;
		}
	if (argc >= 2 && !strcmp(argv[1], "list")) {
		buf_puts(out, "swizzle padded linear f64 smem mma wgmma mfma wmma\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "bench"))
		return bench(argc >= 3 ? atoi(argv[2]) : 15, out, errout);
	if (argc < 3 || strcmp(argv[1], "show")) {
		buf_puts(errout, usage);
		return 2;
	}
	o.name = argv[2];
	for (k = 3; k < argc; k++) {
		const char *a = argv[k], **dst = NULL;

		if (!strcmp(a, "--table"))
			o.table = 1;
		else if (!strcmp(a, "--grid"))
			o.grid = 1;
		else if (!strcmp(a, "--inverse"))
			o.inverse = 1;
		else if (!strcmp(a, "--k-outer"))
			o.k_outer = 1;
		else if (!strcmp(a, "--no-pad"))
			o.no_pad = 1;
		else if (!strcmp(a, "--mode"))
			dst = &o.mode;
		else if (!strcmp(a, "--shape"))
			dst = &o.shape;
		else if (!strcmp(a, "--dtype"))
			dst = &o.dtype;
		else if (!strcmp(a, "--operand"))
			dst = &o.operand;
		else if (!strcmp(a, "--tile"))
			dst = &o.tile;
		else if (!strcmp(a, "--policy"))
			dst = &o.policy;
		else if (!strcmp(a, "--warp-grid"))
			dst = &o.grid_warps;
		else if (!strcmp(a, "--svg"))
			dst = &o.svg;
		else if (!strcmp(a, "--warps")) {
			char *end;

			if (k + 1 >= argc || (o.warps = (int)strtol(argv[k + 1], &end, 10)) < 1 || *end ||
			    o.warps > 1024) {
				buf_printf(errout, "tilec layout: --warps needs a count in [1, 1024]\n");
				return 2;
			}
			k++;
		} else {
			buf_printf(errout, "tilec layout: unknown option '%s'\n%s", a, usage);
			return 2;
		}
		if (dst) {
			if (k + 1 >= argc) {
				buf_printf(errout, "tilec layout: %s needs a value\n", a);
				return 2;
			}
			*dst = argv[++k];
		}
	}
	arena_init(&A);
	L = build(&A, &o, out, &err, &usage_err);
	if (!L) {
		buf_reset(out);
		buf_printf(errout, "tilec layout: error: %s\n", err.msg);
		arena_free(&A);
		return usage_err ? 2 : 1;
	}
	layout_print(out, L);
	buf_putc(out, '\n');
	if (o.inverse) {
		Layout *I = layout_inverse(&A, L, 1, &err);

		buf_puts(out, "inverse: ");
		if (I)
			layout_print(out, I);
		else
			buf_printf(out, "none: %s", err.msg);
		buf_putc(out, '\n');
	}
	if (o.grid)
		grid(out, L);
	if (o.table)
		table(out, L, sink);
	if (o.svg && writesvg(&o, L, errout)) {
		arena_free(&A);
		return 1;
	}
	arena_free(&A);
	return 0;
}

int
layout_main(int argc, char **argv)
{
	Buf out, err;
	int r;

	buf_init(&out);
	buf_init(&err);
	r = layout_cli_stream(argc, argv, &out, &err, stdout);
	fputs(buf_str(&out), stdout);
	fputs(buf_str(&err), stderr);
	buf_free(&out);
	buf_free(&err);
	return r;
}
