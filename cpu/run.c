/*
 * run.c: tilec_run (runtime/tilec_run.h), the differential check of a tile
 * program on the CPU: the reference interpreter (interp.c) against the
 * emitted CUDA C built for the CPU (cpuexec.c), on the same random inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cpuexec.h"
#include "interp.h"
#include "lower.h"
#include "tilec.h"
#include "tilec_jit.h"
#include "tilec_run.h"

enum { MAXSET = 64, MAXVAL = 64 };

typedef struct NameVal {
	char name[64];
	int is_float;
	long long i;
	double f;
} NameVal;

typedef struct SizeSet {
	int n;
	NameVal v[MAXVAL];
} SizeSet;

void
tilec_run_options_init(tilec_run_options *o)
{
	if (o) {
		memset(o, 0, sizeof *o);
		o->tma = 1;
		o->raster_group = -1;   /* auto, as tilec_options_init */
		o->epilogue = TILEC_EPILOGUE_AUTO;
	}
}

void
tilec_run_result_free(tilec_run_result *r)
{
	if (!r)
		return;
	free(r->report);
	free(r->diagnostics);
	r->report = r->diagnostics = NULL;
}

static char *
dupstr(const char *s)
{
	size_t n = strlen(s) + 1;
	char *t = malloc(n);

	if (t)
		memcpy(t, s, n);
	return t;
}

/* "M=1000,N=3;M=1" into sets; -1 with a message in e */
static int
parse_sizes(const char *s, SizeSet *sets, int *nsets, Err *e)
{
	const char *p = s;

	*nsets = 0;
	if (!s || !*s) {
		sets[0].n = 0;
		*nsets = 1;
		return 0;
	}
	while (*p) {
		SizeSet *S;
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char set[2048], *tok, *save = NULL;

		if (*nsets == MAXSET)
			return err_set(e, "--sizes: more than %d sets", MAXSET);
		if (len >= sizeof set)
			return err_set(e, "--sizes: a set is too long");
		memcpy(set, p, len);
		set[len] = 0;
		S = &sets[(*nsets)++];
		S->n = 0;
		for (tok = strtok_r(set, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '='), *endp;
			NameVal *v;
			size_t nl;

			while (*tok == ' ')
				tok++;
			if (!*tok)
				continue;
			if (!eq || eq == tok)
				return err_set(e, "--sizes: '%s' is not NAME=VALUE", tok);
			nl = (size_t)(eq - tok);
			if (nl >= sizeof v->name)
				return err_set(e, "--sizes: name '%.*s' is too long", (int)nl, tok);
			if (S->n == MAXVAL)
				return err_set(e, "--sizes: more than %d values in a set", MAXVAL);
			v = &S->v[S->n++];
			memcpy(v->name, tok, nl);
			v->name[nl] = 0;
			v->is_float = strpbrk(eq + 1, ".eE") && !strpbrk(eq + 1, "xX");
			if (v->is_float)
				v->f = strtod(eq + 1, &endp);
			else
				v->i = strtoll(eq + 1, &endp, 0);
			if (endp == eq + 1 || *endp)
				return err_set(e, "--sizes: '%s' is not a number", eq + 1);
		}
		p += len;
		if (*p == ';') {
			p++;
			if (!*p) { /* a trailing ';': an empty set (the defaults) last */
				if (*nsets == MAXSET)
					return err_set(e, "--sizes: more than %d sets", MAXSET);
				sets[(*nsets)++].n = 0;
			}
		}
	}
	return 0;
}

static const NameVal *
lookup(const SizeSet *S, const char *name)
{
	int i;

	for (i = 0; i < S->n; i++)
		if (!strcmp(S->v[i].name, name))
			return &S->v[i];
	return NULL;
}

/* ---- random data ----------------------------------------------------------------- */

static uint64_t
rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static uint64_t
hashstr(const char *s, uint64_t h)
{
	return tl_strhash(s, strlen(s), h);
}

/* uniform in [-1, 1) with 24 random bits */
static double
urand(uint64_t *s)
{
	return (double)(int64_t)(rnd(s) >> 40) / (double)(1 << 23) - 1.0;
}

static void
fill_random(DType t, void *data, int64_t n, uint64_t seed)
{
	int64_t i;
	int w = dtype_bytes(t);

	for (i = 0; i < n; i++) {
		unsigned char *p = (unsigned char *)data + i * w;
		double v;

		switch (t) {
		case DT_BOOL: v = (double)(rnd(&seed) >> 63); break;
		case DT_I8: v = (double)((int)(rnd(&seed) >> 59) - 16); break;
		case DT_U8: v = (double)(rnd(&seed) >> 59); break;
		case DT_I32: v = (double)((int)(rnd(&seed) >> 53) - 1024); break;
		case DT_INT: v = (double)((int)(rnd(&seed) >> 53) - 1024); break;
		default: v = urand(&seed); break;
		}
		num_store(t, p, v);
	}
}

/* ---- sizes that satisfy the assumes ---------------------------------------------- */

typedef struct Binding {
	const IrKernel *k;
	int64_t *sizes;     /* per k->sizes */
	double *scalars;    /* per param */
} Binding;

static int
bindvar(void *ctx, const IrVar *v, int64_t *out)
{
	const Binding *b = ctx;
	int i;

	for (i = 0; i < b->k->nsize; i++)
		if (b->k->sizes[i] == v) {
			*out = b->sizes[i];
			return 0;
		}
	for (i = 0; i < b->k->nparam; i++)
		if (!b->k->params[i].is_tensor && b->k->params[i].var == v) {
			*out = (int64_t)b->scalars[i];
			return 0;
		}
	return -1;
}

/* the first assume that does not hold (or cannot be evaluated), or -1 */
static int
failing_assume(const Binding *b)
{
	int i;
	int64_t v;

	for (i = 0; i < b->k->nassume; i++)
		if (ir_eval_int(b->k->assumes[i], bindvar, (void *)b, &v) || !v)
			return i;
	return -1;
}

/* does e mention size symbol s? */
static int
mentions(const IrExpr *e, const IrVar *s)
{
	int i;

	switch (e->kind) {
	case IE_VAR: return e->u.var == s;
	case IE_UNARY: return mentions(e->u.un.a, s);
	case IE_BINARY: return mentions(e->u.bin.a, s) || mentions(e->u.bin.b, s);
	case IE_SELECT: return mentions(e->u.sel.c, s) || mentions(e->u.sel.a, s) || mentions(e->u.sel.b, s);
	case IE_CAST: return mentions(e->u.cast.a, s);
	case IE_CALL:
		for (i = 0; i < e->u.call.n; i++)
			if (mentions(e->u.call.args[i], s))
				return 1;
		return 0;
	case IE_LOAD:
		for (i = 0; i < e->u.load.n; i++)
			if (mentions(e->u.load.idx[i], s))
				return 1;
		return 0;
	default: return 0;
	}
}

/*
 * Move the sizes not given by the user to the nearest values (from their
 * defaults) for which every assume holds: each failing assume moves one of
 * its free symbols outward from its default, +1, -1, +2, -2, ...
 */
static int
satisfy_assumes(Binding *b, const int *given, Err *e)
{
	int steps = 0, a, i;

	while ((a = failing_assume(b)) >= 0) {
		const IrExpr *c = b->k->assumes[a];
		int moved = 0;

		for (i = 0; i < b->k->nsize && !moved; i++) {
			int64_t d = b->sizes[i], r;

			if (given[i] || !mentions(c, b->k->sizes[i]))
				continue;
			for (r = 1; r <= 8192; r++) {
				int64_t cand[2] = {d + r, d - r};
				int j;

				for (j = 0; j < 2 && !moved; j++) {
					int64_t v;

					if (cand[j] < 1)
						continue;
					b->sizes[i] = cand[j];
					if (!ir_eval_int(c, bindvar, b, &v) && v)
						moved = 1;
				}
				if (moved)
					break;
			}
			if (!moved)
				b->sizes[i] = d;
		}
		if (!moved || ++steps > 64) {
			int free = 0;

			for (i = 0; i < b->k->nsize; i++)
				free |= !given[i] && mentions(c, b->k->sizes[i]);
			if (!free) {
				Buf t;

				buf_init(&t);
				for (i = 0; i < b->k->nsize; i++)
					if (mentions(c, b->k->sizes[i]))
						buf_printf(&t, "%s%s=%lld", t.len ? ", " : "", b->k->sizes[i]->name,
							   (long long)b->sizes[i]);
				err_set(e, "the assume at %s:%d:%d does not hold for %s", c->loc.file, c->loc.line,
					c->loc.col, t.len ? buf_str(&t) : "these values");
				buf_free(&t);
				return -1;
			}
			return err_set(e, "no sizes near the defaults satisfy the assume at %s:%d:%d; give them "
				       "with --sizes", c->loc.file, c->loc.line, c->loc.col);
		}
	}
	return 0;
}

/* ---- comparison ------------------------------------------------------------------ */

/* relative tolerance per element and normwise (of the tensor's largest |value|) */
static void
tolerance(DType t, double *rel, double *norm)
{
	switch (t) {
	case DT_F64: *rel = 1e-12, *norm = 1e-12; break;
	case DT_F32: *rel = 1e-5, *norm = 2e-5; break;
	case DT_F16: *rel = 2.0 / 1024, *norm = 2e-3; break;
	case DT_BF16: *rel = 2.0 / 128, *norm = 1.6e-2; break;
	case DT_FP8E4M3: *rel = 2.0 / 8, *norm = 0.125; break;
	case DT_FP8E5M2: *rel = 2.0 / 4, *norm = 0.25; break;
	default: *rel = 0, *norm = 0; break;
	}
}

static void
coords(Buf *b, const IrBuffer *B, const int64_t *dims, int64_t idx)
{
	int64_t c[IR_MAXDIM];
	int d;

	for (d = B->ndim - 1; d >= 0; d--) {
		c[d] = idx % dims[d];
		idx /= dims[d];
	}
	buf_putc(b, '[');
	for (d = 0; d < B->ndim; d++)
		buf_printf(b, "%s%lld", d ? ", " : "", (long long)c[d]);
	buf_putc(b, ']');
}

/*
 * Compare tensor B: ref (interpreter, with flags) against got (CPU run). 0
 * when they agree; appends a line to rep when they do not or when verbose.
 */
static int
compare(Buf *rep, const IrBuffer *B, const int64_t *dims, int64_t n, const void *ref,
	const unsigned char *flags, const void *got, int verbose, double normfloor)
{
	int w = dtype_bytes(B->dtype), isf = dtype_is_float(B->dtype);
	int64_t i, ndiff = 0, nundef = 0, ninexact = 0, first = -1, worst = -1;
	double rel, norm, maxref = 0, maxd = 0, maxok = 0;

	tolerance(B->dtype, &rel, &norm);
	/* the GPU's fp8 wgmma results (Run.fp8acc): their sums carry fewer bits than f32 */
	if (isf && norm < normfloor)
		norm = normfloor;
	if (isf)
		for (i = 0; i < n; i++)
			if (!(flags[i] & INTERP_UNDEF)) {
				double v = fabs(num_load(B->dtype, (const char *)ref + i * w));

				if (isfinite(v) && v > maxref)
					maxref = v;
			}
	for (i = 0; i < n; i++) {
		const char *r = (const char *)ref + i * w, *g = (const char *)got + i * w;
		int bad;

		if (flags[i] & INTERP_UNDEF) {
			nundef++;
			continue;
		}
		if (!memcmp(r, g, (size_t)w))
			continue;
		if (isf) {
			double a = num_load(B->dtype, r), c = num_load(B->dtype, g), d = fabs(a - c);

			if (isnan(a) && isnan(c))
				continue;
			if (flags[i] & INTERP_INEXACT) {
				double r2 = rel, n2 = norm, r3, n3;

				/* rounded into a coarser type on the way: that type's tolerance */
				if (flags[i] & INTERP_VIA8) {
					tolerance(DT_BF16, &r3, &n3);
					r2 = fmax(r2, r3), n2 = fmax(n2, n3);
				}
				if (flags[i] & INTERP_VIA16) {
					tolerance(DT_F16, &r3, &n3);
					r2 = fmax(r2, r3), n2 = fmax(n2, n3);
				}
				bad = !(d <= r2 * fabs(a) + n2 * maxref);
				if (!bad)       /* counted as within only when it is */
					ninexact++, maxok = d > maxok ? d : maxok;
			} else {
				bad = 1;
			}
			if (!isnan(d) && d > maxd && bad)
				maxd = d;
			if (isnan(d) && bad)
				maxd = INFINITY;
		} else {
			bad = 1;
		}
		if (bad) {
			if (first < 0)
				first = i;
			if (worst < 0 || !isf)
				worst = i;
			else {
				double dw = fabs(num_load(B->dtype, (const char *)ref + worst * w) -
						 num_load(B->dtype, (const char *)got + worst * w));
				double di = fabs(num_load(B->dtype, r) - num_load(B->dtype, g));

				if (di > dw || isnan(di))
					worst = i;
			}
			ndiff++;
		}
	}
	if (!ndiff && !verbose)
		return 0;
	buf_printf(rep, "  %s %s[", B->name, dtype_name(B->dtype));
	for (i = 0; i < B->ndim; i++)
		buf_printf(rep, "%s%lld", i ? ", " : "", (long long)dims[i]);
	buf_printf(rep, "]: %lld elements, %lld differ", (long long)n, (long long)ndiff);
	if (nundef)
		buf_printf(rep, ", %lld undefined (not compared)", (long long)nundef);
	if (ninexact)
		buf_printf(rep, ", %lld differ within the tolerance (largest |difference| %.3g, %.2g of the largest |value|)",
			   (long long)ninexact, maxok, maxref > 0 ? maxok / maxref : 0.0);
	if (ndiff) {
		int64_t at = isf ? worst : first;

		buf_puts(rep, "; first at ");
		coords(rep, B, dims, first);
		buf_printf(rep, ": %.9g (reference) vs %.9g (emitted)",
			   num_load(B->dtype, (const char *)ref + first * w),
			   num_load(B->dtype, (const char *)got + first * w));
		if (isf && at != first) {
			buf_puts(rep, "; largest at ");
			coords(rep, B, dims, at);
			buf_printf(rep, ": %.9g vs %.9g", num_load(B->dtype, (const char *)ref + at * w),
				   num_load(B->dtype, (const char *)got + at * w));
		}
		if (isf)
			buf_printf(rep, " (tolerance %.3g |ref| + %.3g x %.6g where inexact)", rel, norm, maxref);
	}
	buf_putc(rep, '\n');
	return ndiff ? 1 : 0;
}

/* ---- strided tensors ------------------------------------------------------------- */

/* the value of a dim or stride for these sizes (-1: a symbol not in the sizes) */
static int64_t
dimval(const IrKernel *k, const int64_t *sizes, const IrDim *d)
{
	int j;

	if (!d->sym)
		return d->c;
	for (j = 0; j < k->nsize; j++)
		if (k->sizes[j] == d->sym)
			return sizes[j];
	return -1;
}

static int
sizeindex(const IrKernel *k, const IrVar *v)
{
	int j;

	for (j = 0; j < k->nsize; j++)
		if (k->sizes[j] == v)
			return j;
	return -1;
}

/*
 * The stride symbols the user did not give (sizes that are no tensor's dim): a padded
 * view, just past the reach of the tensor's other dims plus 3 elements (for
 * strides(lda, 1) on [M, K]: lda = K + 3), dims from the last, at the first tensor that
 * uses the symbol.
 */
static void
pick_strides(const IrKernel *k, int64_t *sizes, const int *given)
{
	unsigned char fixed[64] = {0};
	int i, b, d, e, j;

	for (j = 0; j < k->nsize && j < 64; j++)
		fixed[j] = (unsigned char)given[j];
	for (b = 0; b < k->nbuf; b++)
		for (d = 0; d < k->bufs[b].ndim; d++)
			if ((j = k->bufs[b].dims[d].sym ? sizeindex(k, k->bufs[b].dims[d].sym) : -1) >= 0)
				fixed[j] = 1;
	for (i = 0; i < k->nparam; i++) {
		const IrBuffer *B = k->params[i].is_tensor ? &k->bufs[k->params[i].buf] : NULL;

		if (!B || !B->strides)
			continue;
		for (d = B->ndim - 1; d >= 0; d--) {
			int64_t reach = 1, t;

			if ((j = B->strides[d].sym ? sizeindex(k, B->strides[d].sym) : -1) < 0 || fixed[j])
				continue;
			for (e = 0; e < B->ndim; e++) {
				int64_t dv = dimval(k, sizes, &B->dims[e]);
				int js = B->strides[e].sym ? sizeindex(k, B->strides[e].sym) : -1;

				if (e == d || dv <= 1 || (B->strides[e].sym && (js < 0 || !fixed[js])))
					continue;
				if (ck_mul(dv - 1, dimval(k, sizes, &B->strides[e]), &t) || ck_add(reach, t, &reach))
					reach = INT32_MAX;
			}
			sizes[j] = reach < INT32_MAX - 3 ? reach + 3 : INT32_MAX;
			fixed[j] = 1;
		}
	}
}

/* the dims, strides, elements and storage span of tensor B; -1 when too large */
static int
viewshape(const IrKernel *k, const IrBuffer *B, const int64_t *sizes, int64_t *dims, int64_t *st,
	  int64_t *nview, int64_t *span)
{
	const int64_t lim = (int64_t)1 << 32;
	int64_t n = 1, sp = 0, t;
	int d;

	for (d = B->ndim - 1; d >= 0; d--) {
		dims[d] = dimval(k, sizes, &B->dims[d]);
		if (dims[d] < 0)
			return -1;
		st[d] = B->strides ? dimval(k, sizes, &B->strides[d]) : n;
		if (ck_mul(n, dims[d], &n) || n > lim)
			return -1;
	}
	for (d = 0; d < B->ndim && n > 0; d++) {
		if (st[d] <= 0)
			return -1;
		if (ck_mul(dims[d] - 1, st[d], &t) || ck_add(sp, t, &sp) || sp >= lim)
			return -1;
	}
	*nview = n;
	*span = n > 0 ? sp + 1 : 0;
	return 0;
}

/*
 * A strided tensor's comparison: its view's elements gathered in row-major order into
 * dref / dgot / dfl (nview each) and compared as a dense tensor; then every element of the
 * storage outside the view (the padding) must be as the run found it (the reference never
 * writes there). 0: agree.
 */
static int
compare_view(Buf *rep, const IrBuffer *B, const int64_t *dims, const int64_t *st, int64_t nview,
	     int64_t span, const void *ref, const unsigned char *flags, const void *got, int verbose,
	     double normfloor)
{
	int w = dtype_bytes(B->dtype), d, bad = 0;
	char *dref = malloc((size_t)(nview ? nview : 1) * (size_t)w);
	char *dgot = malloc((size_t)(nview ? nview : 1) * (size_t)w);
	unsigned char *dfl = malloc((size_t)(nview ? nview : 1));
	unsigned char *in = calloc((size_t)(span ? span : 1), 1);
	int64_t c[IR_MAXDIM] = {0}, v, off, npad = 0, first = -1;

	if (!dref || !dgot || !dfl || !in) {
		buf_printf(rep, "  %s: out of memory\n", B->name);
		bad = 1;
		goto out;
	}
	for (v = 0; v < nview; v++) {
		for (off = 0, d = 0; d < B->ndim; d++)
			off += c[d] * st[d];
		memcpy(dref + v * w, (const char *)ref + off * w, (size_t)w);
		memcpy(dgot + v * w, (const char *)got + off * w, (size_t)w);
		dfl[v] = flags[off];
		in[off] = 1;
		for (d = B->ndim - 1; d >= 0 && ++c[d] == dims[d]; d--)
			c[d] = 0;
	}
	bad = compare(rep, B, dims, nview, dref, dfl, dgot, verbose, normfloor);
	for (off = 0; off < span; off++)
		if (!in[off] && memcmp((const char *)ref + off * w, (const char *)got + off * w, (size_t)w)) {
			if (first < 0)
				first = off;
			npad++;
		}
	if (npad) {
		buf_printf(rep, "  %s: %lld element%s outside the view (strides(", B->name, (long long)npad,
			   npad == 1 ? "" : "s");
		for (d = 0; d < B->ndim; d++)
			buf_printf(rep, "%s%lld", d ? ", " : "", (long long)st[d]);
		buf_printf(rep, "), %lld storage elements) written by the emitted code; first at offset %lld\n",
			   (long long)span, (long long)first);
		bad = 1;
	}
out:
	free(dref);
	free(dgot);
	free(dfl);
	free(in);
	return bad;
}

/* ---- one kernel ------------------------------------------------------------------ */

typedef struct Run {
	const tilec_run_options *o;
	Buf *rep;
	int runs, differ, errors;
	/* the GPU run (options.device 1): the jit, the loaded module, the kernel's C name */
	tilec_jit *jit;
	tilec_module *mod;
	const char *kname;
	long long threads;   /* the block: the launch contract's threads */
	int fp8acc;          /* the GPU runs fp8 wgmmas (below) */
	int persistent;      /* the contract says persistent: the CPU launches TILEC_CPU_PERSISTENT_BLOCKS blocks */
} Run;

/* The H100/H200's fp8 wgmma adds products into its accumulators with fewer bits than f32 (about
 * 14 are reported for the H800; tilec promotes into f32 every 4 k32 blocks, docs/cuda.md): on
 * the GPU, results of a module with fp8 wgmmas differed from the exact-f32 reference by 2.5e-5
 * to 2.8e-5 of the largest |value| at K = 37 to 2048 in one run and by up to 1.03e-4 at K = 2048
 * in another (H100, 2026-12-07): the dropped bits add up over the promotion intervals, so the
 * error relative to the largest value grows about as sqrt(K) (about 2e-4 at K = 8192). Their
 * inexact elements get a normwise tolerance of 1e-3: a lowering bug (a k-block lost or added
 * twice, an element misplaced) moves an element by several percent of the largest |value| */
#define FP8_WGMMA_NORM 1e-3

/*
 * The emitted kernel on the GPU: each tensor copied to device memory, the launch, the
 * tensors copied back into args (as the CPU run leaves them). 0, or -1 with e.
 */
static int
gpu_run(Run *R, CpuArg *args, int na, const CpuLaunch *l, Err *e)
{
	void *dev[192] = {0};
	tilec_arg ga[64];
	char *msg = NULL;
	unsigned block[3];
	int i, r = -1;

	if (na > 64)
		return err_set(e, "%d kernel arguments: the GPU launch takes at most 64", na);
	for (i = 0; i < na; i++) {
		memset(&ga[i], 0, sizeof ga[i]);
		if (args[i].kind == CPUARG_PTR) {
			if (tilec_dev_alloc(R->jit, &dev[i], args[i].bytes ? args[i].bytes : 1, &msg) ||
			    (args[i].bytes && tilec_dev_upload(R->jit, dev[i], args[i].data, args[i].bytes, &msg)))
				goto out;
			ga[i] = tilec_arg_ptr(dev[i]);
		} else {
			/* the parameter's bytes, as the kernel reads them (the driver copies its size) */
			ga[i].kind = TILEC_ARG_I64;
			memcpy(&ga[i].v, args[i].data, args[i].bytes < 8 ? args[i].bytes : 8);
		}
	}
	for (i = 0; i < 3; i++)
		block[i] = l->block[i];
	if (tilec_launch(R->mod, R->kname, l->grid, block, (unsigned)l->smem, NULL, ga, na, &msg) ||
	    tilec_dev_sync(R->jit, &msg))
		goto out;
	for (i = 0; i < na; i++)
		if (args[i].kind == CPUARG_PTR && args[i].bytes &&
		    tilec_dev_download(R->jit, args[i].data, dev[i], args[i].bytes, &msg))
			goto out;
	r = 0;
out:
	if (r)
		err_set(e, "the GPU run: %s", msg ? msg : "failed");
	free(msg);
	for (i = 0; i < na; i++)
		if (dev[i]) {
			char *m2 = NULL;

			tilec_dev_free(R->jit, dev[i], &m2);
			free(m2);
		}
	return r;
}

static void
sizes_text(Buf *b, const IrKernel *k, const int64_t *sizes, const double *scalars)
{
	int i, n = 0;

	for (i = 0; i < k->nsize; i++)
		buf_printf(b, "%s%s=%lld", n++ ? "," : "", k->sizes[i]->name, (long long)sizes[i]);
	for (i = 0; i < k->nparam; i++)
		if (!k->params[i].is_tensor)
			buf_printf(b, "%s%s=%.9g", n++ ? "," : "", k->params[i].name, scalars[i]);
}

/* the sizes a set does not name, by tier: ragged values near 200, then near 40, then below 30
 * for a program whose work at the first passes the interpreter's limit (run_sets) */
static const int64_t defaults[][10] = {
	{211, 197, 223, 181, 227, 193, 229, 191, 233, 179},
	{37, 41, 31, 43, 29, 47, 23, 53, 19, 59},
	{7, 11, 5, 13, 3, 17, 19, 2, 23, 29},
};

/* run kernel k (its CPU build x) on one size set, the unnamed sizes from defaults[tier];
 * 1 when the interpreter stopped at its limit with defaults in use and a smaller tier is
 * left (nothing counted: the caller runs the set again), else 0 */
static int
run_set(Run *R, const IrKernel *k, const CpuExe *x, long long smem, const SizeSet *S, uint64_t seed,
	int tier)
{
	int64_t sizes[64], grid[3], dims[IR_MAXDIM], tst[128][IR_MAXDIM], nview[128];
	double scalars[128];
	int given[64];
	void *ref[128] = {0}, *got[128] = {0};
	unsigned char *flags[128] = {0};
	InterpTensor it[128];
	CpuArg args[320];              /* params, sizes, a skew per strided tensor */
	unsigned char vals[320][8];
	InterpArgs ia = {0};
	InterpStats is;
	CpuLaunch l;
	Binding b;
	Buf msg;
	Err e = {0};
	int i, d, na = 0, bad = 0, st, dflt = 0, retry = 0;

	buf_init(&msg);
	if (k->nsize > 64 || k->nparam > 128) {
		buf_printf(R->rep, "%s: too many parameters for tilec run\n", k->name);
		R->errors++;
		return 0;
	}
	for (i = 0; i < S->n; i++) {
		int found = !strcmp(S->v[i].name, "*"), j;

		for (j = 0; j < k->nsize; j++)
			found |= !strcmp(k->sizes[j]->name, S->v[i].name);
		for (j = 0; j < k->nparam; j++)
			found |= !k->params[j].is_tensor && !strcmp(k->params[j].name, S->v[i].name);
		if (!found) {
			buf_printf(R->rep, "%s: --sizes names '%s', which is not a size or scalar of the kernel\n",
				   k->name, S->v[i].name);
			R->errors++;
			return 0;
		}
	}
	for (i = 0; i < k->nsize; i++) {
		const NameVal *v = lookup(S, k->sizes[i]->name), *all = lookup(S, "*");

		given[i] = v != NULL;
		sizes[i] = v ? (v->is_float ? (int64_t)v->f : v->i)
			   : all ? (all->is_float ? (int64_t)all->f : all->i)
				 : defaults[tier][i % countof(defaults[0])];
		dflt |= !v && !all;
	}
	for (i = 0; i < k->nparam; i++) {
		const IrParam *P = &k->params[i];
		const NameVal *v = P->is_tensor ? NULL : lookup(S, P->name);
		uint64_t s = hashstr(P->name, seed ^ 0x9e3779b97f4a7c15ULL);

		scalars[i] = 0;
		if (P->is_tensor)
			continue;
		if (v)
			scalars[i] = v->is_float ? v->f : (double)v->i;
		else if (dtype_is_float(P->dtype))
			scalars[i] = 0.5 + (urand(&s) + 1) / 2; /* in [0.5, 1.5) */
		else if (P->dtype == DT_BOOL)
			scalars[i] = 1;
		else
			scalars[i] = 3;
		if (dtype_is_float(P->dtype)) {
			/* the value the kernel gets, in its type */
			unsigned char tmp[8];

			num_store(P->dtype, tmp, scalars[i]);
			scalars[i] = num_load(P->dtype, tmp);
		}
	}
	pick_strides(k, sizes, given);
	b.k = k, b.sizes = sizes, b.scalars = scalars;
	if (satisfy_assumes(&b, given, &e)) {
		buf_printf(R->rep, "%s: %s\n", k->name, e.msg);
		R->errors++;
		return 0;
	}
	buf_printf(R->rep, "%s [", k->name);
	sizes_text(R->rep, k, sizes, scalars);
	buf_printf(R->rep, "] seed %llu: ", (unsigned long long)seed);
	R->runs++;

	/* arguments */
	ia.sizes = sizes;
	ia.tensors = it;
	ia.scalars = scalars;
	memset(it, 0, sizeof it);
	for (i = 0; i < k->nparam; i++) {
		const IrParam *P = &k->params[i];
		const IrBuffer *B;
		int64_t n = 1;
		size_t bytes;

		if (!P->is_tensor) {
			memset(vals[na], 0, 8);
			num_store(P->dtype, vals[na], scalars[i]);
			args[na].name = P->name;
			args[na].kind = CPUARG_VAL;
			args[na].data = vals[na];
			args[na].bytes = (size_t)dtype_bytes(P->dtype);
			na++;
			continue;
		}
		B = &k->bufs[P->buf];
		if (viewshape(k, B, sizes, dims, tst[i], &nview[i], &n)) {
			buf_printf(R->rep, "error: tensor %s is too large for a CPU run%s\n", P->name,
				   B->strides ? " (or has a stride that is not positive)" : "");
			goto error;
		}
		bytes = (size_t)n * (size_t)dtype_bytes(B->dtype);
		ref[i] = malloc(bytes ? bytes : 1);
		got[i] = malloc(bytes ? bytes : 1);
		flags[i] = calloc((size_t)n + 1, 1);
		if (!ref[i] || !got[i] || !flags[i]) {
			buf_puts(R->rep, "error: out of memory\n");
			goto error;
		}
		fill_random(B->dtype, ref[i], n, hashstr(P->name, seed));
		memcpy(got[i], ref[i], bytes);
		it[i].data = ref[i];
		it[i].n = n;
		it[i].flags = flags[i];
		args[na].name = P->name;
		args[na].kind = CPUARG_PTR;
		args[na].data = got[i];
		args[na].bytes = bytes;
		na++;
	}
	for (i = 0; i < k->nsize; i++) {
		int32_t v = (int32_t)sizes[i];

		if (sizes[i] > INT32_MAX || sizes[i] < INT32_MIN) {
			buf_printf(R->rep, "error: size %s = %lld does not fit the kernel's int\n", k->sizes[i]->name,
				   (long long)sizes[i]);
			goto error;
		}
		memcpy(vals[na], &v, 4);
		args[na].name = k->sizes[i]->name;
		args[na].kind = CPUARG_VAL;
		args[na].data = vals[na];
		args[na].bytes = 4;
		na++;
	}
	/* strided views start at their storage's first byte (cpuexec_entry's skews) */
	for (i = 0; i < k->nparam; i++)
		if (k->params[i].is_tensor && k->bufs[k->params[i].buf].strides) {
			memset(vals[na], 0, 8);
			args[na].name = "(skew)";
			args[na].kind = CPUARG_VAL;
			args[na].data = vals[na];
			args[na].bytes = 4;
			na++;
		}
	if (interp_grid(k, &ia, grid, &e)) {
		buf_printf(R->rep, "error: %s\n", e.msg);
		goto error;
	}
	for (d = 0; d < 3; d++)
		if (grid[d] < 0 || grid[d] > 65535 * 16) {
			buf_printf(R->rep, "error: grid dimension %d is %lld, too many blocks for a CPU run\n", d,
				   (long long)grid[d]);
			goto error;
		}

	/* the reference */
	ia.max_work = R->o->max_work;
	st = interp_kernel(k, &ia, &is, &e);
	if (st != INTERP_OK && dflt && is.work > (R->o->max_work > 0 ? R->o->max_work : INTERP_MAX_WORK) &&
	    tier + 1 < (int)countof(defaults)) {
		buf_printf(R->rep, "not run: the default sizes take more work than the reference interpreter "
			   "does (%s); smaller defaults next\n", e.msg);
		R->runs--;
		retry = 1;
		goto done;
	}
	if (st != INTERP_OK) {
		buf_printf(R->rep, "error: the reference interpreter: %s\n", e.msg);
		goto error;
	}

	/* the emitted code */
	for (d = 0; d < 3; d++) {
		l.grid[d] = (unsigned)grid[d];
		l.block[d] = d ? 1 : (unsigned)R->threads;
	}
	/* a persistent kernel: a few blocks loop over the tiles (a GPU run: tilec_launch sizes it) */
	if (R->persistent && !R->jit)
		cpuexec_persistent_grid(l.grid, TILEC_CPU_PERSISTENT_BLOCKS);
	l.smem = (size_t)smem;
	/* an empty grid launches nothing, as the generated launchers do (CUDA_SUCCESS without
	 * a launch): the tensors keep their contents, which the reference must also leave */
	if (!grid[0] || !grid[1] || !grid[2])
		st = 0, buf_printf(R->rep, "(empty grid %lld x %lld x %lld, no launch) ", (long long)grid[0],
				   (long long)grid[1], (long long)grid[2]);
	else if (R->jit)
		st = gpu_run(R, args, na, &l, &e);
	else
		st = cpuexec_run(x, args, na, &l, R->o->timeout_s > 0 ? R->o->timeout_s : 300, &msg, &e);
	if (st) {
		buf_printf(R->rep, "DIFFER: the emitted code's %s run: %s\n", R->jit ? "GPU" : "CPU", e.msg);
		R->differ++;
		goto done;
	}
	{
		Buf lines;

		buf_init(&lines);
		for (i = 0; i < k->nparam; i++) {
			const IrBuffer *B;

			if (!k->params[i].is_tensor)
				continue;
			B = &k->bufs[k->params[i].buf];
			for (d = 0; d < B->ndim; d++)
				dims[d] = dimval(k, sizes, &B->dims[d]);
			if (B->strides)
				bad |= compare_view(&lines, B, dims, tst[i], nview[i], it[i].n, ref[i], flags[i], got[i],
						    R->o->verbose, R->fp8acc ? FP8_WGMMA_NORM : 0);
			else
				bad |= compare(&lines, B, dims, it[i].n, ref[i], flags[i], got[i], R->o->verbose,
					       R->fp8acc ? FP8_WGMMA_NORM : 0);
		}
		buf_puts(R->rep, bad ? "DIFFER\n" : "agree\n");
		buf_puts(R->rep, buf_str(&lines));
		buf_free(&lines);
		if (bad)
			R->differ++;
	}
	goto done;
error:
	R->errors++;
done:
	for (i = 0; i < k->nparam; i++) {
		free(ref[i]);
		free(got[i]);
		free(flags[i]);
	}
	buf_free(&msg);
	return retry;
}

/* every size set of the options on kernel k, each at smaller defaults while they are too large */
static void
run_sets(Run *R, const IrKernel *k, const CpuExe *x, long long smem, const SizeSet *sets, int nsets,
	 uint64_t seed)
{
	int si, tier;

	for (si = 0; si < nsets; si++)
		for (tier = 0; run_set(R, k, x, smem, &sets[si], seed, tier); tier++)
			;
}

tilec_status
tilec_run(const char *src, size_t len, const tilec_run_options *opts, tilec_run_result *res)
{
	SizeSet *sets = NULL;
	tilec_run_options o0;
	const tilec_run_options *o = opts;
	tilec_options co;
	tilec_result cr;
	Arena arena;
	Diags d;
	Buf rep, diags;
	IrProgram *prog;
	IrKernel *k;
	Err e = {0};
	Run R;
	int nsets = 0, found = 0;
	tilec_status st = TILEC_OK;
	tilec_jit *jit = NULL;
	tilec_module *mod = NULL;
	char devarch[32], *jmsg = NULL;

	if (!res)
		return TILEC_ERR_ARG;
	memset(res, 0, sizeof *res);
	if (!o) {
		tilec_run_options_init(&o0);
		o = &o0;
	}
	buf_init(&rep);
	buf_init(&diags);
	if (o->target != TILEC_TARGET_CUDA && o->target != TILEC_TARGET_HIP) {
		buf_printf(&diags, "tilec: error: tilec run: unknown target %d\n", o->target);
		st = TILEC_ERR_ARG;
		goto out;
	}
	if (o->arch && (strncmp(o->arch, o->target == TILEC_TARGET_HIP ? "gfx" : "sm_", 3) ||
			!tilec_arch_valid(o->target, o->arch))) {
		buf_printf(&diags, "tilec: error: tilec run: unknown %s arch '%s'%s\n",
			   o->target == TILEC_TARGET_HIP ? "hip" : "cuda", o->arch,
			   o->target != TILEC_TARGET_HIP && tilec_arch_valid(TILEC_TARGET_HIP, o->arch)
				   ? " (HIP: --target=hip)" : "");
		st = TILEC_ERR_ARG;
		goto out;
	}
	if (o->device != 0 && o->device != 1) {
		buf_printf(&diags, "tilec: error: tilec run: unknown device %d (0 the CPU, 1 the GPU)\n", o->device);
		st = TILEC_ERR_ARG;
		goto out;
	}
	if (o->device == 1 && o->target != TILEC_TARGET_CUDA) {
		buf_puts(&diags, "tilec: error: tilec run: the GPU run takes the cuda target (HIP C runs on the "
			 "CPU stand-in only)\n");
		st = TILEC_ERR_ARG;
		goto out;
	}
	/* the GPU run: the JIT runtime and, without --arch, the device's arch */
	if (o->device == 1) {
		if (tilec_jit_create(&jit, NULL, &jmsg) ||
		    (!o->arch && tilec_dev_arch(jit, devarch, sizeof devarch, &jmsg))) {
			buf_printf(&diags, "tilec: error: tilec run: no GPU to run on: %s\n", jmsg ? jmsg : "?");
			free(jmsg);
			st = TILEC_ERR_COMPILE;
			goto out;
		}
	}
	sets = malloc(sizeof *sets * MAXSET);
	if (!sets) {
		buf_puts(&diags, "tilec: error: out of memory\n");
		st = TILEC_ERR_COMPILE;
		goto out;
	}
	if (parse_sizes(o->sizes, sets, &nsets, &e)) {
		buf_printf(&diags, "tilec: error: %s\n", e.msg);
		st = TILEC_ERR_ARG;
		goto out;
	}

	/* the emitted CUDA C; without an arch, the first of the defaults that lowers the program
	 * (sm_80, else sm_90a: a kernel whose shared memory only an H100/H200 has), said in the
	 * report; when none does, the first one's errors */
	tilec_options_init(&co);
	co.target = o->target; /* TILEC_DUMP_CUDA below: HIP C for the hip target */
	co.defines = o->defines;
	co.ndefines = o->ndefines;
	co.filename = o->filename;
	co.dump = TILEC_DUMP_CUDA;
	co.tma = o->tma;
	co.warp_specialize = o->warp_specialize;
	co.raster_group = o->raster_group;
	co.persistent = o->persistent;
	co.epilogue = o->epilogue;
	{
		static const char *const cuda_defaults[] = {"sm_80", "sm_90a"};
		static const char *const hip_default[] = {"gfx942"};
		const char *gpu_arch[1] = {devarch};
		const char *const *archs = o->arch ? &o->arch : o->target == TILEC_TARGET_HIP ? hip_default
				: jit ? gpu_arch : cuda_defaults;
		size_t i, narch = o->arch || jit || o->target == TILEC_TARGET_HIP ? 1 : countof(cuda_defaults);
		char *first = NULL;

		/* with cuda_override tilec's own code is not run, so not emitted: a program it
		 * refuses to emit (a strided tensor, today) runs against the override */
		if (o->cuda_override) {
			memset(&cr, 0, sizeof cr);
			co.arch = archs[0];
			narch = 0;
		}
		for (i = 0; i < narch; i++) {
			co.arch = archs[i];
			if (tilec_compile(src, len, &co, &cr) == TILEC_OK)
				break;
			if (!first)
				first = dupstr(cr.diagnostics);
			tilec_result_free(&cr);
		}
		if (i == narch && !o->cuda_override) {
			buf_puts(&diags, first ? first : "tilec: error: out of memory\n");
			free(first);
			st = TILEC_ERR_COMPILE;
			goto out;
		}
		if (i > 0)
			buf_printf(&rep, "arch %s (no --arch given; %s refused the program: %.*s)\n", co.arch,
				   archs[0], (int)strcspn(first ? first : "", "\n"), first ? first : "");
		free(first);
	}

	/* the IR for the interpreter */
	arena_init(&arena);
	diags_init(&d, &arena);
	prog = compile_front(&arena, &d, src, len, &co);
	if (!prog) {
		diag_format(&d, &diags, src, len, 0);
		tilec_result_free(&cr);
		arena_free(&arena);
		st = TILEC_ERR_COMPILE;
		goto out;
	}
	memset(&R, 0, sizeof R);
	R.o = o;
	R.rep = &rep;
	if (jit) {
		const char *code = o->cuda_override ? o->cuda_override : cr.output;
		tilec_header h = {"tilec_cuda.h", tilec_template("tilec_cuda.h")};

		if (tilec_jit_compile_cuda_ex(jit, code, co.arch, NULL, 0, &h, 1, &mod, &jmsg) ||
		    tilec_module_load(mod, &jmsg)) {
			buf_printf(&rep, "error: the GPU build for %s: %s\n%.4000s", co.arch, jmsg ? jmsg : "?",
				   mod ? tilec_module_log(mod) : "");
			free(jmsg);
			jmsg = NULL;
			R.errors++;
			goto ran;
		}
		buf_printf(&rep, "on the GPU (%s)\n", co.arch);
		R.jit = jit, R.mod = mod;
		if (strstr(code, "tl_wgmma_e4m3") || strstr(code, "tl_wgmma_e5m2") || strstr(code, "tl_wgmma_rs_e4m3") ||
		    strstr(code, "tl_wgmma_rs_e5m2")) {
			R.fp8acc = 1;
			buf_printf(&rep, "fp8 wgmma: its sums carry fewer bits than f32, so inexact float results "
				   "are compared within %g of the largest |value|\n", FP8_WGMMA_NORM);
		}
	}
	for (k = prog->kernels; k; k = k->next) {
		CpuExe x;
		Buf entry, log;
		const char *kname;
		long long smem;

		if (o->kernel && strcmp(o->kernel, k->name))
			continue;
		found = 1;
		kname = emit_cname(&arena, k->name);
		smem = cpuexec_smem_of(o->cuda_override ? o->cuda_override : cr.output, k->name);
		R.threads = cpuexec_threads_of(o->cuda_override ? o->cuda_override : cr.output, k->name);
		R.persistent = cpuexec_persistent_of(o->cuda_override ? o->cuda_override : cr.output, k->name);
		if (smem < 0 || R.threads < 0) {
			buf_printf(&rep, "%s: error: no launch contract in the emitted code\n", k->name);
			R.errors++;
			continue;
		}
		if (jit) {
			R.kname = kname;
			run_sets(&R, k, NULL, smem, sets, nsets, o->seed);
			continue;
		}
		buf_init(&entry);
		buf_init(&log);
		if (cpuexec_entry(&entry, k, kname, o->cuda_override ? o->cuda_override : cr.output)) {
			buf_printf(&rep, "%s: error: a malformed tensor-map line in the emitted code\n", k->name);
			R.errors++;
			buf_free(&entry);
			buf_free(&log);
			continue;
		} else if (cpuexec_build_target(&x, o->target == TILEC_TARGET_HIP, co.arch,
					 o->cuda_override ? o->cuda_override : cr.output, buf_str(&entry), o->cxx,
					 o->tmpdir, o->keep, &log, &e)) {
			buf_printf(&rep, "%s: error: %s\n%.4000s", k->name, e.msg, buf_str(&log));
			R.errors++;
		} else {
			if (o->keep)
				buf_printf(&rep, "%s: built in %s\n", k->name, x.dir);
			run_sets(&R, k, &x, smem, sets, nsets, o->seed);
		}
		cpuexec_free(&x);
		buf_free(&entry);
		buf_free(&log);
	}
ran:
	if (!found && !R.errors) {
		buf_printf(&diags, "tilec: error: tilec run: no kernel '%s' in the program\n", o->kernel);
		st = TILEC_ERR_ARG;
	} else {
		st = R.differ ? TILEC_ERR_DIFFER : R.errors ? TILEC_ERR_COMPILE : TILEC_OK;
	}
	res->runs = R.runs;
	res->differ = R.differ;
	tilec_result_free(&cr);
	arena_free(&arena);
out:
	tilec_module_free(mod);
	tilec_jit_destroy(jit);
	free(sets);
	res->status = st;
	res->report = buf_take(&rep);
	res->diagnostics = buf_take(&diags);
	if (!res->report)
		res->report = dupstr("");
	if (!res->diagnostics)
		res->diagnostics = dupstr("");
	return st;
}
