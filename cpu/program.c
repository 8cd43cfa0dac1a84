/*
 * program.c: a compiled tile program as an object (runtime/tilec_program.h):
 * the emitted code and layouts from tilec_compile, the IR of the front end for
 * the kernels' signatures, grids and assumes, and launches of the emitted code
 * on the CPU target (cpuexec.h) with the caller's buffers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "cpuexec.h"
#include "interp.h"
#include "ir.h"
#include "lower.h"
#include "numeric.h"
#include "tilec.h"
#include "tilec_program.h"

struct tilec_program {
	Arena arena;
	IrProgram *ir;
	char *src;
	char *code, *layouts;
	int target;
	const char *arch;
	int nkernel;
	IrKernel **kernels;
	const char **cnames;
	long long *smem;
	long long *threads;  /* per kernel: the launch contract's block (more than threads(...) when
			      * warp-specialized), -1 without a contract */
	CpuExe *exe;      /* per kernel, once built */
	int *built;       /* per kernel: 0 not yet, 1 built */
};

static tilec_status
seterr(char **err, tilec_status st, const char *fmt, ...)
{
	va_list ap;
	char *m;
	int n;

	if (!err)
		return st;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	m = malloc((size_t)n + 1);
	if (m) {
		va_start(ap, fmt);
		vsnprintf(m, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	*err = m;
	return st;
}

static char *
dupn(const char *s, size_t n)
{
	char *t = malloc(n + 1);

	if (t) {
		memcpy(t, s, n);
		t[n] = 0;
	}
	return t;
}

void
tilec_program_free(tilec_program *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < p->nkernel; i++)
		if (p->built && p->built[i])
			cpuexec_free(&p->exe[i]);
	free(p->kernels);
	free(p->cnames);
	free(p->smem);
	free(p->threads);
	free(p->exe);
	free(p->built);
	free(p->code);
	free(p->layouts);
	free(p->src);
	arena_free(&p->arena);
	free(p);
}

/* one tilec_compile with dump d; its output into *text, or the status (message in err) */
static tilec_status
compile_dump(const char *src, size_t len, const tilec_options *o, tilec_dump d, char **text, char **err)
{
	tilec_options co = *o;
	tilec_result r;
	tilec_status st;

	co.dump = d;
	st = tilec_compile(src, len, &co, &r);
	if (st != TILEC_OK) {
		if (err)
			*err = dupn(r.diagnostics, strlen(r.diagnostics));
		tilec_result_free(&r);
		return st;
	}
	*text = r.output;
	r.output = NULL;
	tilec_result_free(&r);
	return TILEC_OK;
}

tilec_status
tilec_program_compile(const char *src, size_t len, const tilec_options *opts, tilec_program **out,
		      char **err)
{
	tilec_options o;
	tilec_program *p;
	tilec_status st;
	Diags d;
	IrKernel *k;
	int i;

	if (!out)
		return seterr(err, TILEC_ERR_ARG, "tilec_program_compile: out is NULL");
	*out = NULL;
	if (!src && len)
		return seterr(err, TILEC_ERR_ARG, "tilec_program_compile: src is NULL");
	tilec_options_init(&o);
	if (opts)
		o = *opts;
	o.print_passes = 0;
	p = calloc(1, sizeof *p);
	if (!p)
		return seterr(err, TILEC_ERR_NOMEM, "out of memory");
	arena_init(&p->arena);
	p->src = dupn(src ? src : "", len);
	if (!p->src) {
		tilec_program_free(p);
		return seterr(err, TILEC_ERR_NOMEM, "out of memory");
	}
	st = compile_dump(p->src, len, &o, TILEC_DUMP_CUDA, &p->code, err);
	if (st == TILEC_OK)
		st = compile_dump(p->src, len, &o, TILEC_DUMP_LAYOUTS, &p->layouts, err);
	if (st != TILEC_OK) {
		tilec_program_free(p);
		return st;
	}
	/* the IR keeps pointers to the arch and the file name: copies that live with it */
	if (o.arch)
		o.arch = arena_strdup(&p->arena, o.arch);
	if (o.filename)
		o.filename = arena_strdup(&p->arena, o.filename);
	diags_init(&d, &p->arena);
	p->ir = compile_front(&p->arena, &d, p->src, len, &o);
	if (!p->ir) {
		/* tilec_compile accepted it, so this is not expected */
		tilec_program_free(p);
		return seterr(err, TILEC_ERR_COMPILE, "tilec_program_compile: the front end failed");
	}
	p->target = p->ir->target;
	p->arch = p->ir->arch;
	p->nkernel = p->ir->nkernel;
	for (i = 0, k = p->ir->kernels; k; k = k->next)
		i++;
	p->nkernel = i;
	p->kernels = calloc((size_t)i + 1, sizeof *p->kernels);
	p->cnames = calloc((size_t)i + 1, sizeof *p->cnames);
	p->smem = calloc((size_t)i + 1, sizeof *p->smem);
	p->threads = calloc((size_t)i + 1, sizeof *p->threads);
	p->exe = calloc((size_t)i + 1, sizeof *p->exe);
	p->built = calloc((size_t)i + 1, sizeof *p->built);
	if (!p->kernels || !p->cnames || !p->smem || !p->threads || !p->exe || !p->built) {
		tilec_program_free(p);
		return seterr(err, TILEC_ERR_NOMEM, "out of memory");
	}
	for (i = 0, k = p->ir->kernels; k; k = k->next, i++) {
		p->kernels[i] = k;
		p->cnames[i] = emit_cname(&p->arena, k->name);
		p->smem[i] = cpuexec_smem_of(p->code, k->name);
		p->threads[i] = cpuexec_threads_of(p->code, k->name);
	}
	*out = p;
	return TILEC_OK;
}

tilec_status
tilec_program_compile_file(const char *path, const tilec_options *opts, tilec_program **out, char **err)
{
	tilec_options o;
	FILE *f;
	char *s = NULL, *t;
	size_t n = 0, cap = 0, got;
	tilec_status st;

	if (out)
		*out = NULL;
	if (!path || !out)
		return seterr(err, TILEC_ERR_ARG, "tilec_program_compile_file: NULL argument");
	f = fopen(path, "rb");
	if (!f)
		return seterr(err, TILEC_ERR_IO, "tilec: error: cannot read %s: %s", path, strerror(errno));
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			t = realloc(s, cap);
			if (!t) {
				free(s);
				fclose(f);
				return seterr(err, TILEC_ERR_NOMEM, "out of memory");
			}
			s = t;
		}
		got = fread(s + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(s);
		fclose(f);
		return seterr(err, TILEC_ERR_IO, "tilec: error: cannot read %s", path);
	}
	fclose(f);
	tilec_options_init(&o);
	if (opts)
		o = *opts;
	if (!o.filename)
		o.filename = path;
	st = tilec_program_compile(s, n, &o, out, err);
	free(s);
	return st;
}

const char *
tilec_program_code(const tilec_program *p)
{
	return p && p->code ? p->code : "";
}

const char *
tilec_program_layouts(const tilec_program *p)
{
	return p && p->layouts ? p->layouts : "";
}

const char *
tilec_program_target(const tilec_program *p)
{
	return p && p->target == TILEC_TARGET_HIP ? "hip" : "cuda";
}

const char *
tilec_program_arch(const tilec_program *p)
{
	return p && p->arch ? p->arch : "";
}

int
tilec_program_kernel_count(const tilec_program *p)
{
	return p ? p->nkernel : 0;
}

static const IrKernel *
kern(const tilec_program *p, int k)
{
	return p && k >= 0 && k < p->nkernel ? p->kernels[k] : NULL;
}

const char *
tilec_program_kernel_name(const tilec_program *p, int k)
{
	const IrKernel *K = kern(p, k);

	return K ? K->name : NULL;
}

const char *
tilec_program_kernel_cname(const tilec_program *p, int k)
{
	return kern(p, k) ? p->cnames[k] : NULL;
}

int
tilec_program_kernel_find(const tilec_program *p, const char *name)
{
	int i;

	for (i = 0; p && name && i < p->nkernel; i++)
		if (!strcmp(p->kernels[i]->name, name))
			return i;
	return -1;
}

tilec_status
tilec_program_kernel_launch(const tilec_program *p, int k, unsigned *threads, size_t *smem_bytes)
{
	const IrKernel *K = kern(p, k);

	if (!K)
		return TILEC_ERR_ARG;
	if (threads) /* the launch contract's block, as every launcher uses */
		*threads = p->threads[k] > 0 ? (unsigned)p->threads[k] : (unsigned)K->threads;
	if (smem_bytes)
		*smem_bytes = p->smem[k] > 0 ? (size_t)p->smem[k] : 0;
	return TILEC_OK;
}

int
tilec_program_param_count(const tilec_program *p, int k)
{
	const IrKernel *K = kern(p, k);

	return K ? K->nparam : -1;
}

int
tilec_program_size_count(const tilec_program *p, int k)
{
	const IrKernel *K = kern(p, k);

	return K ? K->nsize : -1;
}

const char *
tilec_program_size_name(const tilec_program *p, int k, int i)
{
	const IrKernel *K = kern(p, k);

	return K && i >= 0 && i < K->nsize ? K->sizes[i]->name : NULL;
}

tilec_status
tilec_program_param(const tilec_program *p, int k, int i, tilec_param_info *out)
{
	const IrKernel *K = kern(p, k);
	const IrParam *P;
	int d, j;

	if (!K || i < 0 || i >= K->nparam || !out)
		return TILEC_ERR_ARG;
	memset(out, 0, sizeof *out);
	P = &K->params[i];
	out->name = P->name;
	out->is_tensor = P->is_tensor;
	out->dtype = dtype_name(P->is_tensor ? K->bufs[P->buf].dtype : P->dtype);
	out->elem_bytes = dtype_bytes(P->is_tensor ? K->bufs[P->buf].dtype : P->dtype);
	if (!P->is_tensor)
		return TILEC_OK;
	if (K->bufs[P->buf].ndim > TILEC_MAX_DIMS)
		return TILEC_ERR_ARG;
	out->ndim = K->bufs[P->buf].ndim;
	for (d = 0; d < out->ndim; d++) {
		const IrDim *D = &K->bufs[P->buf].dims[d];

		out->dim_size[d] = -1;
		out->dim_const[d] = D->c;
		for (j = 0; D->sym && j < K->nsize; j++)
			if (K->sizes[j] == D->sym)
				out->dim_size[d] = j;
	}
	if (!K->bufs[P->buf].strides)
		return TILEC_OK;
	out->strided = 1;
	for (d = 0; d < out->ndim; d++) {
		const IrDim *D = &K->bufs[P->buf].strides[d];

		out->stride_size[d] = -1;
		out->stride_const[d] = D->c;
		for (j = 0; D->sym && j < K->nsize; j++)
			if (K->sizes[j] == D->sym)
				out->stride_size[d] = j;
	}
	return TILEC_OK;
}

typedef struct Bind {
	const IrKernel *k;
	const int64_t *sizes;
	const double *scalars;
} Bind;

static int
bindvar(void *ctx, const IrVar *v, int64_t *out)
{
	const Bind *b = ctx;
	int i;

	for (i = 0; i < b->k->nsize; i++)
		if (b->k->sizes[i] == v) {
			*out = b->sizes[i];
			return 0;
		}
	for (i = 0; b->scalars && i < b->k->nparam; i++)
		if (!b->k->params[i].is_tensor && b->k->params[i].var == v) {
			*out = (int64_t)b->scalars[i];
			return 0;
		}
	return -1;
}

tilec_status
tilec_program_grid(const tilec_program *p, int k, const int64_t *sizes, const double *scalars,
		   unsigned grid[3], char **err)
{
	const IrKernel *K = kern(p, k);
	double zero[1] = {0};
	InterpArgs ia;
	int64_t g[3], v;
	Bind b;
	Err e = {0};
	int i, d;

	if (!K || !grid || (K->nsize && !sizes))
		return seterr(err, TILEC_ERR_ARG, "tilec_program_grid: bad arguments");
	for (i = 0; i < K->nsize; i++)
		if (sizes[i] < 0 || sizes[i] > INT32_MAX)
			return seterr(err, TILEC_ERR_ARG, "kernel %s: size %s = %lld is outside [0, 2^31)",
				      K->name, K->sizes[i]->name, (long long)sizes[i]);
	for (i = 0; i < K->nparam; i++)
		if (!K->params[i].is_tensor && !scalars)
			return seterr(err, TILEC_ERR_ARG, "kernel %s: no value for scalar %s", K->name,
				      K->params[i].name);
	b.k = K, b.sizes = sizes, b.scalars = scalars;
	for (i = 0; i < K->nassume; i++)
		if (ir_eval_int(K->assumes[i], bindvar, &b, &v) || !v)
			return seterr(err, TILEC_ERR_ARG, "kernel %s: the assume at %s:%d:%d does not hold for these sizes",
				      K->name, K->assumes[i]->loc.file ? K->assumes[i]->loc.file : "<input>",
				      K->assumes[i]->loc.line, K->assumes[i]->loc.col);
	memset(&ia, 0, sizeof ia);
	ia.sizes = sizes;
	ia.scalars = scalars ? scalars : zero;
	if (interp_grid(K, &ia, g, &e))
		return seterr(err, TILEC_ERR_ARG, "kernel %s: %s", K->name, e.msg);
	for (d = 0; d < 3; d++) {
		if (g[d] < 0 || g[d] > INT32_MAX)
			return seterr(err, TILEC_ERR_ARG, "kernel %s: grid dimension %d is %lld", K->name, d,
				      (long long)g[d]);
		grid[d] = (unsigned)g[d];
	}
	return TILEC_OK;
}

tilec_status
tilec_cpu_launch(tilec_program *p, int k, void *const *args, const int64_t *sizes, const char *cxx,
		 int timeout_s, char **err)
{
	const IrKernel *K = kern(p, k);
	CpuArg *ca = NULL;
	double *scalars = NULL;
	int32_t *ivals = NULL, *skews = NULL;
	unsigned char **tmp = NULL;   /* per strided tensor: its skewed copy */
	size_t *vbytes = NULL;
	CpuLaunch l;
	unsigned grid[3];
	Buf log;
	Err e = {0};
	tilec_status st;
	int i, d, na = 0, r;

	if (!K || (K->nparam && !args) || (K->nsize && !sizes))
		return seterr(err, TILEC_ERR_ARG, "tilec_cpu_launch: bad arguments");
	if (p->smem[k] < 0 || p->threads[k] < 0)
		return seterr(err, TILEC_ERR_ARG, "kernel %s: no launch contract in the emitted code", K->name);
	ca = calloc((size_t)(2 * K->nparam + K->nsize) + 1, sizeof *ca);
	scalars = calloc((size_t)K->nparam + 1, sizeof *scalars);
	ivals = calloc((size_t)K->nsize + 1, sizeof *ivals);
	skews = calloc((size_t)K->nparam + 1, sizeof *skews);
	tmp = calloc((size_t)K->nparam + 1, sizeof *tmp);
	vbytes = calloc((size_t)K->nparam + 1, sizeof *vbytes);
	buf_init(&log);
	if (!ca || !scalars || !ivals || !skews || !tmp || !vbytes) {
		st = seterr(err, TILEC_ERR_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < K->nparam; i++) {
		const IrParam *P = &K->params[i];

		if (!args[i]) {
			st = seterr(err, TILEC_ERR_ARG, "kernel %s: argument %s is NULL", K->name, P->name);
			goto out;
		}
		if (!P->is_tensor)
			scalars[i] = num_load(P->dtype, args[i]);
	}
	st = tilec_program_grid(p, k, sizes, scalars, grid, err);
	if (st != TILEC_OK)
		goto out;
	for (i = 0; i < K->nparam; i++) {
		const IrParam *P = &K->params[i];
		const IrBuffer *B;
		int64_t n = 1;

		ca[na].name = P->name;
		ca[na].data = args[i];
		if (!P->is_tensor) {
			ca[na].kind = CPUARG_VAL;
			ca[na].bytes = (size_t)dtype_bytes(P->dtype);
			na++;
			continue;
		}
		B = &K->bufs[P->buf];
		for (d = 0; d < B->ndim; d++) {
			int64_t v = B->dims[d].c;
			int j;

			for (j = 0; B->dims[d].sym && j < K->nsize; j++)
				if (B->dims[d].sym == K->sizes[j])
					v = sizes[j];
			if (v < 0 || ck_mul(n, v, &n) || n > ((int64_t)1 << 34)) {
				st = seterr(err, TILEC_ERR_ARG, "kernel %s: tensor %s is too large for a CPU run",
					    K->name, P->name);
				goto out;
			}
		}
		if (B->strides && n > 0) {
			/* a strided view spans 1 + sum (dim_d - 1) * stride_d elements from its pointer */
			int64_t span = 1, t;

			for (d = 0; d < B->ndim; d++) {
				int64_t v = B->dims[d].c, sv = B->strides[d].c;
				int j;

				for (j = 0; j < K->nsize; j++) {
					if (B->dims[d].sym == K->sizes[j])
						v = sizes[j];
					if (B->strides[d].sym == K->sizes[j])
						sv = sizes[j];
				}
				if (sv < 1 || sv > INT32_MAX) {
					st = seterr(err, TILEC_ERR_ARG, "kernel %s: stride %d of tensor %s is %lld; "
						    "strides must be positive (and fit an int)", K->name, d, P->name,
						    (long long)sv);
					goto out;
				}
				if (ck_mul(v - 1, sv, &t) || ck_add(span, t, &span) || span > ((int64_t)1 << 34)) {
					st = seterr(err, TILEC_ERR_ARG, "kernel %s: tensor %s is too large for a "
						    "CPU run", K->name, P->name);
					goto out;
				}
			}
			n = span;
		}
		ca[na].kind = CPUARG_PTR;
		ca[na].bytes = (size_t)n * (size_t)dtype_bytes(B->dtype);
		if (B->strides) {
			/* the view's pointer keeps its alignment (mod 256) in the run's storage, so the
			 * kernel's checks of it (docs/cuda.md, "Strided tensors") see the caller's */
			size_t sk = (size_t)((uintptr_t)args[i] % 256);

			vbytes[i] = ca[na].bytes;
			if (!(tmp[i] = calloc(sk + vbytes[i] + 1, 1))) {
				st = seterr(err, TILEC_ERR_NOMEM, "out of memory");
				goto out;
			}
			memset(tmp[i], 0xa5, sk); /* checked after the run: nothing writes there */
			if (vbytes[i])
				memcpy(tmp[i] + sk, args[i], vbytes[i]);
			skews[i] = (int32_t)sk;
			ca[na].data = tmp[i];
			ca[na].bytes = sk + vbytes[i];
		}
		na++;
	}
	for (i = 0; i < K->nsize; i++) {
		if (sizes[i] > INT32_MAX || sizes[i] < INT32_MIN) {
			st = seterr(err, TILEC_ERR_ARG, "kernel %s: size %s = %lld does not fit the kernel's int",
				    K->name, K->sizes[i]->name, (long long)sizes[i]);
			goto out;
		}
		ivals[i] = (int32_t)sizes[i];
		ca[na].name = K->sizes[i]->name;
		ca[na].kind = CPUARG_VAL;
		ca[na].data = &ivals[i];
		ca[na].bytes = 4;
		na++;
	}
	for (i = 0; i < K->nparam; i++)
		if (tmp[i]) {
			ca[na].name = "(skew)";
			ca[na].kind = CPUARG_VAL;
			ca[na].data = &skews[i];
			ca[na].bytes = 4;
			na++;
		}
	if (!p->built[k]) {
		Buf entry;

		buf_init(&entry);
		if (cpuexec_entry(&entry, K, p->cnames[k], p->code)) {
			buf_free(&entry);
			st = seterr(err, TILEC_ERR_COMPILE, "kernel %s: a malformed tensor-map line in the code", K->name);
			goto out;
		}
		r = cpuexec_build_target(&p->exe[k], p->target == TILEC_TARGET_HIP, p->arch, p->code,
					 buf_str(&entry), cxx, NULL, 0, &log, &e);
		buf_free(&entry);
		if (r) {
			st = seterr(err, TILEC_ERR_COMPILE, "kernel %s: the CPU build failed: %s\n%.4000s", K->name,
				    e.msg, buf_str(&log));
			cpuexec_free(&p->exe[k]);
			goto out;
		}
		p->built[k] = 1;
	}
	for (d = 0; d < 3; d++) {
		l.grid[d] = grid[d];
		l.block[d] = d ? 1 : (unsigned)p->threads[k];
	}
	/* a persistent kernel (its contract says so): a few blocks loop over the tiles */
	if (cpuexec_persistent_of(p->code, K->name))
		cpuexec_persistent_grid(l.grid, TILEC_CPU_PERSISTENT_BLOCKS);
	l.smem = (size_t)p->smem[k];
	buf_reset(&log);
	r = cpuexec_run(&p->exe[k], ca, na, &l, timeout_s > 0 ? timeout_s : 300, &log, &e);
	if (r)
		st = seterr(err, r > 0 ? TILEC_ERR_RUN : TILEC_ERR_CRASH, "kernel %s: %s", K->name, e.msg);
	else
		st = TILEC_OK;
	for (i = 0; st == TILEC_OK && i < K->nparam; i++) {
		int32_t j;

		if (!tmp[i])
			continue;
		for (j = 0; j < skews[i] && tmp[i][j] == 0xa5; j++)
			;
		if (j < skews[i])
			st = seterr(err, TILEC_ERR_RUN, "kernel %s: tensor %s: the emitted code wrote before the "
				    "view's first element", K->name, K->params[i].name);
		if (vbytes[i])
			memcpy(args[i], tmp[i] + skews[i], vbytes[i]);
	}
out:
	for (i = 0; tmp && i < K->nparam; i++)
		free(tmp[i]);
	free(tmp);
	free(skews);
	free(vbytes);
	free(ca);
	free(scalars);
	free(ivals);
	buf_free(&log);
	return st;
}
