/*
 * check_header.c: the launcher header (TILEC_DUMP_HEADER, `--header`). Every
 * sample's header compiles as C11 and C++17 against cuda.h with -Werror; its
 * launcher, linked against a recording fake cuLaunchKernel, passes the grid,
 * block, shared memory and arguments the IR gives; random grid and assume()
 * expressions evaluated by the header agree with ir_eval_int (fixed seed).
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ast.h"
#include "lower.h"
#include "sema.h"
#include "tests.h"
#include "tmap.h"
#include "tilec.h"

#define CUDA_INC "/usr/local/cuda/include"

static glob_t samples;
static char tmpdir[64];

static void
setup(void)
{
	ck_assert_int_eq(glob("samples/*.tile", 0, NULL, &samples), 0);
	snprintf(tmpdir, sizeof tmpdir, "/tmp/tilec_hdr_XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
teardown(void)
{
	char cmd[128];

	globfree(&samples);
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

static void
writefile(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* run a shell command; its output in *out (malloc'd) when out is set; the exit status */
static int
sh(const char *cmd, char **out)
{
	char full[4096];
	size_t n;
	int st;

	snprintf(full, sizeof full, "%s >%s/sh.out 2>&1", cmd, tmpdir);
	st = system(full);
	if (out) {
		snprintf(full, sizeof full, "%s/sh.out", tmpdir);
		*out = test_readfile(full, &n);
	}
	return st;
}

static void
needcuda(void)
{
	ck_assert_msg(access(CUDA_INC "/cuda.h", R_OK) == 0,
		      CUDA_INC "/cuda.h is missing: the launcher header tests need the CUDA toolkit");
}

/* build the C program prog (a driver of a launcher header in tmpdir, against the fake
 * driver) as tmpdir/name and run it: its exit status, its output in *out */
static int
driver(const char *name, const char *prog, char **out)
{
	char path[512], cmd[1024];

	snprintf(path, sizeof path, "%s/%s.c", tmpdir, name);
	writefile(path, prog);
	snprintf(cmd, sizeof cmd, "cd %s && cc -std=c11 -Wall -Wextra -Werror -I" CUDA_INC " -o %s %s.c && ./%s", tmpdir,
		 name, name, name);
	return sh(cmd, out);
}

/* tilec_compile src for arch with dump; output or NULL (diagnostics in *diag) */
static char *
compile(const char *src, size_t len, const char *arch, tilec_dump dump, char **diag)
{
	tilec_options o;
	tilec_result r;
	char *out = NULL;

	tilec_options_init(&o);
	o.arch = arch;
	o.dump = dump;
	tilec_compile(src, len, &o, &r);
	if (r.status == TILEC_OK)
		out = strdup(r.output);
	if (diag)
		*diag = strdup(r.diagnostics);
	tilec_result_free(&r);
	return out;
}

/* ---- the IR oracle ----------------------------------------------------------- */

typedef struct Env {
	const IrKernel *k;
	const long long *val; /* scalars (params order, non-tensors), then sizes */
} Env;

static int
envvar(void *ctx, const IrVar *v, int64_t *out)
{
	const Env *e = ctx;
	int i, n = 0;

	for (i = 0; i < e->k->nparam; i++) {
		if (e->k->params[i].is_tensor)
			continue;
		if (e->k->params[i].var == v) {
			*out = e->val[n];
			return dtype_is_float(v->type) ? -1 : 0;
		}
		n++;
	}
	for (i = 0; i < e->k->nsize; i++, n++)
		if (e->k->sizes[i] == v) {
			*out = e->val[n];
			return 0;
		}
	return -1;
}

/* what the launcher must do: -1 refuse, 0 no launch, 1 launch with grid g */
static int
expect(const IrKernel *k, const long long *val, const char *cuda, long long g[3])
{
	Env e = {k, val};
	int64_t v;
	int i, ns = 0;
	char pat[96];

	for (i = 0; i < k->nparam; i++)
		ns += !k->params[i].is_tensor;
	for (i = 0; i < k->nsize; i++) {
		if (val[ns + i] < 0)
			return -1;
		/* a stride symbol that is no tensor's dim must be positive */
		if (val[ns + i] == 0) {
			int b, d, dim = 0, st = 0;

			for (b = 0; b < k->nbuf; b++)
				for (d = 0; d < k->bufs[b].ndim; d++) {
					dim |= k->bufs[b].dims[d].sym == k->sizes[i];
					st |= k->bufs[b].strides && k->bufs[b].strides[d].sym == k->sizes[i];
				}
			if (st && !dim)
				return -1;
		}
		snprintf(pat, sizeof pat, "\tif (%s %% ", k->sizes[i]->name);
		/* vector contracts of the CUDA C: "if (S % V != 0) __trap();" */
		for (const char *p = strstr(cuda, pat); p; p = strstr(p + 1, pat)) {
			long long d = atoll(p + strlen(pat));

			if (d > 0 && strstr(p, "__trap();") && val[ns + i] % d)
				return -1;
		}
	}
	for (i = 0; i < k->nassume; i++) {
		if (ir_eval_int(k->assumes[i], envvar, &e, &v))
			return -1;
		if (!v)
			return -1;
	}
	for (i = 0; i < 3; i++) {
		if (i >= k->ngrid) {
			g[i] = 1;
			continue;
		}
		if (ir_eval_int(k->grid[i], envvar, &e, &v))
			return -1;
		g[i] = v;
	}
	if (g[0] < 0 || g[0] > 2147483647LL || g[1] < 0 || g[1] > 65535 || g[2] < 0 || g[2] > 65535)
		return -1;
	return g[0] && g[1] && g[2] ? 1 : 0;
}

/* ---- a recording driver: the fake libcuda and a main that calls the launchers ---- */

static const char fake_cuda[] =
	"#include <stdio.h>\n#include <string.h>\n"
	"static unsigned rec_g[3], rec_b[3], rec_smem; static int rec_calls, rec_attr;\n"
	"static unsigned char rec_buf[32][8]; static size_t rec_sz[32]; static int rec_n, rec_term;\n"
	"CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,\n"
	"    unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s, void **args, void **extra)\n"
	"{\n\t(void)f; (void)s; (void)extra; rec_calls++;\n"
	"\trec_g[0] = gx; rec_g[1] = gy; rec_g[2] = gz; rec_b[0] = bx; rec_b[1] = by; rec_b[2] = bz;\n"
	"\trec_smem = smem; rec_term = args[rec_n] == 0;\n"
	"\tfor (int i = 0; i < rec_n; i++) memcpy(rec_buf[i], args[i], rec_sz[i]);\n"
	"\treturn CUDA_SUCCESS;\n}\n"
	"CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)\n"
	"{\n\t(void)f; if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) rec_attr = v;\n"
	"\treturn CUDA_SUCCESS;\n}\n"
	"/* a device of 5 SMs, one block per SM: a persistent kernel's grid */\n"
	"CUresult CUDAAPI cuCtxGetDevice(CUdevice *d) { *d = 0; return CUDA_SUCCESS; }\n"
	"CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)\n"
	"{\n\t(void)d; *v = a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 5 : 0;\n\treturn CUDA_SUCCESS;\n}\n"
	"CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int b, size_t s)\n"
	"{\n\t(void)f; (void)b; (void)s; *n = 1;\n\treturn CUDA_SUCCESS;\n}\n"
	"static int tm_calls, tm_print;\n"
	"CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType t, cuuint32_t rank, void *base,\n"
	"    const cuuint64_t *d, const cuuint64_t *st, const cuuint32_t *box, const cuuint32_t *es,\n"
	"    CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill f)\n"
	"{\n\tunsigned long long b = (unsigned long long)(size_t)base;\n\ttm_calls++;\n"
	"\tif (tm_print)\n"
	"\t{\n\t\tif (rank == 3)\n"
	"\t\t\tprintf(\"encode t%d r%u b%llu d%llu,%llu,%llu st%llu,%llu box%u,%u,%u es%u,%u,%u il%d sw%d f%d\\n\", (int)t,\n"
	"\t\t\t       rank, b, (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2],\n"
	"\t\t\t       (unsigned long long)st[0], (unsigned long long)st[1], box[0], box[1], box[2], es[0], es[1], es[2],\n"
	"\t\t\t       (int)il, (int)sw, (int)f);\n"
	"\t\telse\n"
	"\t\tprintf(\"encode t%d r%u b%llu d%llu,%llu st%llu box%u,%u es%u,%u il%d sw%d f%d\\n\", (int)t, rank, b,\n"
	"\t\t       (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)st[0], box[0], box[1], es[0],\n"
	"\t\t       es[1], (int)il, (int)sw, (int)f);\n\t}\n\t(void)l2;\n"
	"\tif (st[0] % 16 || b % 16)\n\t\treturn CUDA_ERROR_INVALID_VALUE;\n"
	"\tmemset(m, 0, sizeof *m);\n\tmemcpy(m, &tm_calls, sizeof tm_calls);\n\treturn CUDA_SUCCESS;\n}\n"
	"static void rec_reset(void) { rec_calls = rec_attr = rec_term = 0; rec_smem = 0;\n"
	"\tmemset(rec_g, 0, sizeof rec_g); memset(rec_b, 0, sizeof rec_b); }\n"
	"static void rec_print(int rc) { printf(\"%d %d %u %u %u %u %u %u %u %d\", rc, rec_calls,\n"
	"\trec_g[0], rec_g[1], rec_g[2], rec_b[0], rec_b[1], rec_b[2], rec_smem, rec_attr); }\n";

/* a main that calls kernel k's launcher for each value set; prints the record and the
 * arguments as the kernel would read them */
static void
callk(Buf *b, const IrKernel *k, const long long *vals, int nsets, int nval, int nmap)
{
	int s, i, n;

	for (s = 0; s < nsets; s++) {
		const long long *v = vals + (size_t)s * nval;

		buf_puts(b, "\t{\n\t\tCUresult rc;\n\t\trec_reset();\n");
		for (i = 0; i < k->nparam; i++)
			buf_printf(b, "\t\trec_sz[%d] = %d;\n", i, k->params[i].is_tensor ? 8
				   : dtype_bytes(k->params[i].dtype));
		for (i = 0; i < k->nsize; i++)
			buf_printf(b, "\t\trec_sz[%d] = 4;\n", k->nparam + i);
		/* the TMA tensor maps after the sizes: recorded, not printed */
		for (i = 0; i < nmap; i++)
			buf_printf(b, "\t\trec_sz[%d] = 4;\n", k->nparam + k->nsize + i);
		buf_printf(b, "\t\trec_n = %d;\n", k->nparam + k->nsize + nmap);
		buf_printf(b, "\t\trc = tilec_launch_%s((CUfunction)&rec_calls, (CUstream)0", k->name);
		for (i = 0, n = 0; i < k->nparam; i++) {
			if (k->params[i].is_tensor)
				buf_printf(b, ", (CUdeviceptr)%dull", 4096 * (i + 1));
			else
				buf_printf(b, ", %lld", v[n++]);
		}
		for (i = 0; i < k->nsize; i++)
			buf_printf(b, ", %lld", v[n++]);
		buf_puts(b, ");\n\t\trec_print((int)rc);\n\t\tif (rc == CUDA_SUCCESS && rec_calls) {\n");
		for (i = 0; i < k->nparam; i++) {
			if (k->params[i].is_tensor)
				buf_printf(b, "\t\t\t{ CUdeviceptr x; memcpy(&x, rec_buf[%d], 8); printf(\" %%llu\", (unsigned long long)x); }\n", i);
			else if (k->params[i].dtype == DT_I32)
				buf_printf(b, "\t\t\t{ int x; memcpy(&x, rec_buf[%d], 4); printf(\" %%d\", x); }\n", i);
			else
				buf_printf(b, "\t\t\tprintf(\" x\");\n");
		}
		for (i = 0; i < k->nsize; i++)
			buf_printf(b, "\t\t\t{ int x; memcpy(&x, rec_buf[%d], 4); printf(\" %%d\", x); }\n", k->nparam + i);
		buf_puts(b, "\t\t\tprintf(\" %s\", rec_term ? \"\" : \"unterminated\");\n");
		buf_puts(b, "\t\t}\n\t\tprintf(\"\\n\");\n\t}\n");
	}
}

/* the line the recording driver must print for one call */
static void
expline(Buf *b, const IrKernel *k, const long long *v, const char *cuda)
{
	long long g[3], threads = 0, smem = 0;
	int r = expect(k, v, cuda, g), i, n = 0;
	char pat[128];
	const char *p;

	snprintf(pat, sizeof pat, "// kernel %s: ", k->name);
	p = strstr(cuda, pat);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p + strlen(pat), "%lld threads, %lld bytes", &threads, &smem), 2);
	if (r < 0) {
		buf_printf(b, "1 0 0 0 0 0 0 0 0 0\n");
		return;
	}
	if (r == 0) {
		buf_printf(b, "0 0 0 0 0 0 0 0 0 0\n");
		return;
	}
	buf_printf(b, "0 1 %lld %lld %lld %lld 1 1 %lld %lld", g[0], g[1], g[2], threads, smem,
		   smem > 49152 ? smem : 0);
	for (i = 0; i < k->nparam; i++) {
		if (k->params[i].is_tensor)
			buf_printf(b, " %d", 4096 * (i + 1));
		else if (k->params[i].dtype == DT_I32)
			buf_printf(b, " %lld", v[n++]);
		else {
			buf_puts(b, " x");
			n++;
		}
	}
	for (i = 0; i < k->nsize; i++)
		buf_printf(b, " %lld", v[n++]);
	buf_puts(b, " \n");
}

/* parse and check src into an IR program in a */
static IrProgram *
frontend(Arena *a, const char *src, const char *path)
{
	Diags d;
	Node *top;
	IrProgram *p = NULL;

	diags_init(&d, a);
	top = parse_program(a, &d, src, strlen(src), path);
	if (!d.nerr)
		p = sema_program(a, &d, top, NULL, 0, path);
	if (!p || d.nerr) {
		Buf b;

		buf_init(&b);
		diag_format(&d, &b, src, strlen(src), 0);
		ck_abort_msg("%s does not compile:\n%s\n%.3000s", path, buf_str(&b), src);
	}
	return p;
}

/*
 * Build the header of src with a recording driver that calls every kernel with the value
 * sets vals[kernel][set][value]; compare its output with the IR oracle.
 */
static void
recorded(const char *src, const char *arch, long long *vals, int nsets, int nval, const char *what)
{
	Arena a;
	IrProgram *p;
	const IrKernel *k;
	Buf prog, want;
	char path[256], *hdr, *cuda, *diag, *got;
	int ki = 0;

	needcuda();
	arena_init(&a);
	p = frontend(&a, src, what);
	cuda = compile(src, strlen(src), arch, TILEC_DUMP_CUDA, &diag);
	ck_assert_msg(cuda != NULL, "%s: %s", what, diag);
	free(diag);
	hdr = compile(src, strlen(src), arch, TILEC_DUMP_HEADER, &diag);
	ck_assert_msg(hdr != NULL, "%s: header: %s", what, diag);
	free(diag);
	snprintf(path, sizeof path, "%s/k.h", tmpdir);
	writefile(path, hdr);
	buf_init(&prog);
	buf_init(&want);
	buf_printf(&prog, "#include \"k.h\"\n%s\nint main(void)\n{\n", fake_cuda);
	for (k = p->kernels; k; k = k->next, ki++) {
		TmapDesc maps[16];
		int nmap = tmap_parse(cuda, k->name, maps, 16);

		ck_assert_int_ge(nmap, 0);
		callk(&prog, k, vals + (size_t)ki * nsets * nval, nsets, nval, nmap);
		for (int s = 0; s < nsets; s++)
			expline(&want, k, vals + ((size_t)ki * nsets + s) * nval, cuda);
	}
	buf_puts(&prog, "\treturn 0;\n}\n");
	ck_assert_msg(driver("main", buf_str(&prog), &got) == 0, "%s: the recording driver failed:\n%.2000s", what, got);
	/* the printed argument list ends with " " (the terminator check) */
	if (strcmp(got, buf_str(&want))) {
		const char *g = got, *w = buf_str(&want);
		int line = 1;

		while (*g && *g == *w) {
			line += *g == '\n';
			g++, w++;
		}
		while (g > got && g[-1] != '\n')
			g--, w--;
		ck_abort_msg("%s: call %d differs (rc calls grid block smem attr args):\ngot:  %.200s\n"
			     "want: %.200s", what, line, g, w);
	}
	free(got);
	free(hdr);
	free(cuda);
	buf_free(&prog);
	buf_free(&want);
	arena_free(&a);
}

/* ---- every sample: C11 and C++17 with -Werror, the launcher's record ---------- */

static const char *const archs[] = {"sm_80", "sm_90a"};

START_TEST(sample_header_builds)
{
	const char *path = samples.gl_pathv[_i / 2], *arch = archs[_i % 2];
	char *src, *cuda, *hdr, *diag, *out, file[256], cmd[1024];
	size_t len;

	needcuda();
	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	cuda = compile(src, len, arch, TILEC_DUMP_CUDA, NULL);
	hdr = compile(src, len, arch, TILEC_DUMP_HEADER, &diag);
	/* a sample without CUDA C has no header either, with the same complaint */
	ck_assert_msg(!cuda == !hdr, "%s %s: CUDA %s but header %s: %s", path, arch, cuda ? "ok" : "fails",
		      hdr ? "ok" : "fails", diag);
	if (hdr) {
		ck_assert_ptr_nonnull(strstr(hdr, "cuLaunchKernel"));
		snprintf(file, sizeof file, "%s/s.h", tmpdir);
		writefile(file, hdr);
		snprintf(file, sizeof file, "%s/s.c", tmpdir);
		writefile(file, "#include \"s.h\"\n#include \"s.h\"\nint main(void) { return 0; }\n");
		snprintf(cmd, sizeof cmd, "cd %s && cc -std=c11 -Wall -Wextra -Werror -pedantic -I" CUDA_INC
			 " -c s.c -o s.o && c++ -std=c++17 -Wall -Wextra -Werror -x c++ -I" CUDA_INC
			 " -c s.c -o s2.o", tmpdir);
		ck_assert_msg(sh(cmd, &out) == 0, "%s %s: the header does not build:\n%.2000s", path,
			      arch, out);
		free(out);
	}
	free(diag);
	free(cuda);
	free(hdr);
	free(src);
}
END_TEST

/* each sample's launcher with sizes 1024 (every contract holds), 0, -1, 1000 and 1001 */
START_TEST(sample_launch_recorded)
{
	const char *path = samples.gl_pathv[_i];
	static const long long sizes[] = {1024, 0, -1, 1000, 1001, 4096};
	enum { NS = (int)countof(sizes) };
	Arena a;
	IrProgram *p;
	const IrKernel *k;
	long long *vals;
	char *src, *cuda;
	size_t len;
	int nk = 0, nv = 0, i, s, ki;

	src = test_readfile(path, &len);
	ck_assert_ptr_nonnull(src);
	cuda = compile(src, len, "sm_90a", TILEC_DUMP_CUDA, NULL);
	if (!cuda) { /* no CUDA C (yet) for this sample: sample_header_builds checks the header */
		free(src);
		return;
	}
	arena_init(&a);
	p = frontend(&a, src, path);
	for (k = p->kernels; k; k = k->next) {
		int n = k->nsize;

		for (i = 0; i < k->nparam; i++)
			n += !k->params[i].is_tensor;
		nv = n > nv ? n : nv;
		nk++;
	}
	vals = calloc((size_t)nk * NS * (nv ? nv : 1), sizeof *vals);
	ck_assert_ptr_nonnull(vals);
	for (k = p->kernels, ki = 0; k; k = k->next, ki++)
		for (s = 0; s < NS; s++)
			for (i = 0; i < nv; i++)
				vals[((size_t)ki * NS + s) * nv + i] = sizes[s];
	recorded(src, "sm_90a", vals, NS, nv, path);
	free(vals);
	free(cuda);
	free(src);
	arena_free(&a);
}
END_TEST

/* ---- random grid and assume expressions against ir_eval_int ------------------ */

static unsigned long long rs = 0x5eed1234abcdull;

static unsigned
rnd(unsigned n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (unsigned)(rs % n);
}

static void
rexpr(Buf *b, int depth)
{
	static const char *const ops[] = {"+", "-", "*", "/", "%", "<<", ">>"};
	static const char *const leaves[] = {"M", "N", "n"};
	unsigned c = depth <= 0 ? rnd(2) : rnd(9);

	switch (c) {
	case 0: buf_puts(b, leaves[rnd(3)]); return;
	case 1: buf_printf(b, "%d", (int)rnd(300) - 3); return;
	case 2: case 3: case 4:
		buf_putc(b, '(');
		rexpr(b, depth - 1);
		buf_printf(b, " %s ", ops[rnd(countof(ops))]);
		rexpr(b, depth - 1);
		buf_putc(b, ')');
		return;
	case 5: case 6:
		buf_printf(b, "%s(", rnd(3) == 0 ? "max" : rnd(2) ? "min" : "cdiv");
		rexpr(b, depth - 1);
		buf_puts(b, ", ");
		rexpr(b, depth - 1);
		buf_putc(b, ')');
		return;
	case 7:
		buf_puts(b, "(");
		rexpr(b, depth - 1);
		buf_puts(b, rnd(2) ? " < " : " == ");
		rexpr(b, depth - 1);
		buf_puts(b, " ? ");
		rexpr(b, depth - 1);
		buf_puts(b, " : ");
		rexpr(b, depth - 1);
		buf_puts(b, ")");
		return;
	default:
		buf_puts(b, "(-");
		rexpr(b, depth - 1);
		buf_putc(b, ')');
		return;
	}
}

static long long
rval(void)
{
	static const long long edge[] = {0, 1, 2, 7, 64, 65535, 65536, 2147483647, -1, -5};

	return rnd(5) == 0 ? edge[rnd(countof(edge))] : (long long)rnd(5000);
}

START_TEST(random_grids)
{
	enum { NK = 24, NS = 40, NV = 3 };
	Buf src;
	long long *vals = calloc((size_t)NK * NS * NV, sizeof *vals);
	int ki, s, d;

	ck_assert_ptr_nonnull(vals);
	buf_init(&src);
	for (ki = 0; ki < NK; ki++) {
		Buf kb;
		char *ok;
		int tries = 0;

		/* constant parts that sema folds to an error (a negative grid, a shift by 300)
		 * are drawn again */
		buf_init(&kb);
		do {
			buf_reset(&kb);
			buf_printf(&kb, "kernel k%d(A: f32[M, N], n: i32)\n    grid(", ki);
			for (d = 0; d < 1 + (int)rnd(3); d++) {
				if (d)
					buf_puts(&kb, ", ");
				rexpr(&kb, 3);
			}
			buf_puts(&kb, ") threads(32)\n{\n");
			if (rnd(2)) {
				buf_puts(&kb, "    assume(");
				rexpr(&kb, 2);
				buf_puts(&kb, rnd(2) ? " >= 0" : " != 1");
				buf_puts(&kb, ");\n");
			}
			buf_puts(&kb, "}\n");
			ok = compile(buf_str(&kb), kb.len, "sm_80", TILEC_DUMP_IR, NULL);
			free(ok);
		} while (!ok && ++tries < 50);
		ck_assert_msg(ok != NULL, "no valid random kernel in 50 tries");
		buf_puts(&src, buf_str(&kb));
		buf_free(&kb);
		for (s = 0; s < NS; s++)
			for (d = 0; d < NV; d++)
				vals[((size_t)ki * NS + s) * NV + d] = d == 0 && rnd(2) ? (long long)rnd(200) - 100
										      : rval();
	}
	recorded(buf_str(&src), "sm_80", vals, NS, NV, "random grids");
	buf_free(&src);
	free(vals);
}
END_TEST

/* names the header would define twice, and grids the host cannot evaluate */
static const struct {
	const char *src, *msg;
} bad[] = {
	{"kernel a(A: f32[M]) grid(M) threads(32) {}\nkernel launch_a(A: f32[M]) grid(M) threads(32) {}\n",
	 "both define 'tilec_launch_a'"},
	{"kernel g(A: f32[M]) grid(M) threads(32) {}\nkernel G(A: f32[M]) grid(M) threads(32) {}\n",
	 "both define 'TILEC_G_THREADS'"},
	{"kernel g(A: f32[M], x: f32) grid(i32(x)) threads(32) {}\n", "host"},
};

/* ---- TMA: the launcher builds the kernel's tensor maps (tilec --tma); _i = 1: warp-
 * specialized (--warp-specialize), the block of the launch contract (256 + a producer
 * warpgroup of 128), and nvcc builds the kernel (setmaxnreg, named barriers); _i = 2: also
 * persistent (--persistent): both launchers size the grid from the device's SMs ---- */


START_TEST(tma_launcher)
{
	tilec_options o;
	tilec_result r;
	char *src, path[256], cmd[1024], *got;
	size_t len;
	Buf prog;
	static const char *const wants[3] = {
		/* M=256, K=512, N=1024: both maps encoded, passed after the sizes */
		"encode t1 r2 b4096 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"encode t1 r2 b8192 d1024,512 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 4,2,1 256 196672 maps 1 2\n"
		/* K = 1001: A's rows are not whole 16-byte chunks: not encoded (the kernel's element path) */
		"encode t1 r2 b8192 d1024,1001 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 4,2,1 256 196672 maps 0 3\n"
		/* A at a base that is not 16-byte aligned with whole rows: the driver's error, no launch */
		"encode t1 r2 b4098 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"launch 1 0\n",
		/* warp-specialized: 384 threads */
		"encode t1 r2 b4096 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"encode t1 r2 b8192 d1024,512 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 4,2,1 384 196672 maps 1 2\n"
		"encode t1 r2 b8192 d1024,1001 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 4,2,1 384 196672 maps 0 3\n"
		"encode t1 r2 b4098 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"launch 1 0\n",
		/* warp-specialized and persistent (--persistent): 4 x 2 tiles on the fake device's
		 * 5 SMs of one block */
		"encode t1 r2 b4096 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"encode t1 r2 b8192 d1024,512 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 5,1,1 384 196672 maps 1 2\n"
		"encode t1 r2 b8192 d1024,1001 st2048 box64,64 es1,1 il0 sw3 f0\n"
		"launch 0 1 5,1,1 384 196672 maps 0 3\n"
		"encode t1 r2 b4098 d512,256 st1024 box64,128 es1,1 il0 sw3 f0\n"
		"launch 1 0\n"};
	const char *want = wants[_i];

	needcuda();
	src = test_readfile("samples/gemm_sm90.tile", &len);
	ck_assert_ptr_nonnull(src);
	tilec_options_init(&o);
	o.arch = "sm_90a";
	o.dump = TILEC_DUMP_HEADER;
	o.tma = 1;
	o.warp_specialize = _i > 0;
	o.persistent = _i == 2;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_ptr_nonnull(strstr(r.output, "cuTensorMapEncodeTiled"));
	ck_assert_ptr_nonnull(strstr(r.output, "cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\""));
	snprintf(path, sizeof path, "%s/t.h", tmpdir);
	writefile(path, r.output);
	tilec_result_free(&r);
	buf_init(&prog);
	buf_printf(&prog, "#include \"t.h\"\n%s\n", fake_cuda);
	buf_puts(&prog, "static void run(unsigned long long a, int M, int K, int N)\n{\n"
		 "\tint tm[2];\n\trec_reset();\n\trec_n = 8;\n"
		 "\tfor (int i = 0; i < 6; i++) rec_sz[i] = i < 3 ? 8 : 4;\n\trec_sz[6] = rec_sz[7] = 4;\n"
		 "\tCUresult rc = tilec_launch_gemm_sm90((CUfunction)&rec_calls, 0, a, 8192, 12288, M, K, N);\n"
		 "\tprintf(\"launch %d %d\", (int)rc, rec_calls);\n"
		 "\tif (rec_calls) {\n\t\tmemcpy(&tm[0], rec_buf[6], 4);\n\t\tmemcpy(&tm[1], rec_buf[7], 4);\n"
		 "\t\tprintf(\" %u,%u,%u %u %u maps %d %d\", rec_g[0], rec_g[1], rec_g[2], rec_b[0], rec_smem, tm[0], tm[1]);\n\t}\n"
		 "\tprintf(\"\\n\");\n}\n"
		 "int main(void)\n{\n\ttm_print = 1;\n\trun(4096, 256, 512, 1024);\n\trun(4096, 256, 1001, 1024);\n"
		 "\trun(4098, 256, 512, 1024);\n\t(void)rec_print;\n\treturn 0;\n}\n");
	ck_assert_msg(driver("tma", buf_str(&prog), &got) == 0, "the TMA launcher's driver failed:\n%.2000s", got);
	buf_free(&prog);
	ck_assert_msg(!strcmp(got, want), "the TMA launcher's calls:\n%s\nexpected:\n%s", got, want);
	free(got);
	/* nvcc: the runtime-API launcher (its maps through the driver entry point) with the kernel */
	o.dump = TILEC_DUMP_CUDA;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	ck_assert_msg(!_i || (strstr(r.output, _i == 2 ? "tl_setmaxnreg_dec<40>" : "tl_setmaxnreg_dec<24>") &&
			      strstr(r.output, "tl_bar_named(1, 256)")),
		      "not warp-specialized");
	snprintf(path, sizeof path, "%s/t.cu", tmpdir);
	writefile(path, r.output);
	tilec_result_free(&r);
	snprintf(path, sizeof path, "%s/rt.cu", tmpdir);
	writefile(path, "#include \"t.cu\"\n#include \"t.h\"\nint main(void) { return tilec_gemm_sm90(0, 0, 0, 8, 8, 8, 0); }\n");
	snprintf(cmd, sizeof cmd, "cd %s && " CUDA_INC "/../bin/nvcc -gencode arch=compute_90a,code=sm_90a -I%s/templates -c rt.cu "
		 "-o rt.o 2>&1", tmpdir, getcwd(path, sizeof path) ? path : ".");
	ck_assert_msg(sh(cmd, &got) == 0, "nvcc: the runtime-API TMA launcher does not build:\n%.2000s", got);
	free(got);
	free(src);
}
END_TEST

/* rank 3: flash_fwd's K and V maps (boxes of one plane of [BH, L, D]) through the driver
 * launcher: dims (D, L, BH), strides (row, plane) in bytes, box (64, 64, 1) */
START_TEST(tma_launcher_3d)
{
	tilec_options o;
	tilec_result r;
	size_t len;
	char *src, *got = NULL, path[512];
	Buf prog;

	needcuda();
	src = test_readfile("samples/flash_fwd.tile", &len);
	ck_assert_ptr_nonnull(src);
	tilec_options_init(&o);
	o.arch = "sm_90a";
	o.dump = TILEC_DUMP_HEADER;
	tilec_compile(src, len, &o, &r);
	ck_assert_msg(r.status == TILEC_OK, "%s", r.diagnostics);
	snprintf(path, sizeof path, "%s/t3.h", tmpdir);
	writefile(path, r.output);
	tilec_result_free(&r);
	buf_init(&prog);
	buf_printf(&prog, "#include \"t3.h\"\n%s\n", fake_cuda);
	buf_puts(&prog, "int main(void)\n{\n\ttm_print = 1;\n\trec_reset();\n\trec_n = 8;\n"
		 "\tfor (int i = 0; i < 8; i++) rec_sz[i] = i < 4 ? 8 : 4;\n"
		 "\tCUresult rc = tilec_launch_flash_fwd((CUfunction)&rec_calls, 0, 4096, 8192, 12288, 16384, 3, 1000);\n"
		 "\tprintf(\"launch %d %d %u,%u %u\\n\", (int)rc, rec_calls, rec_g[0], rec_g[1], rec_b[0]);\n"
		 "\t(void)rec_print;\n\treturn 0;\n}\n");
	ck_assert_msg(driver("tma3", buf_str(&prog), &got) == 0, "the rank-3 TMA launcher's driver failed:\n%.2000s", got);
	buf_free(&prog);
	ck_assert_msg(!strcmp(got, "encode t1 r3 b8192 d128,1000,3 st256,256000 box64,64,1 es1,1,1 il0 sw3 f0\n"
				   "encode t1 r3 b12288 d128,1000,3 st256,256000 box64,64,1 es1,1,1 il0 sw3 f0\n"
				   "launch 0 1 8,3 256\n"),
		      "the rank-3 TMA launcher's calls:\n%s", got);
	free(got);
	free(src);
}
END_TEST

START_TEST(header_errors)
{
	char *diag, *hdr;

	hdr = compile(bad[_i].src, strlen(bad[_i].src), "sm_80", TILEC_DUMP_HEADER, &diag);
	ck_assert_msg(hdr == NULL, "compiled: %s", bad[_i].src);
	ck_assert_msg(strstr(diag, bad[_i].msg) != NULL, "'%s' not in %s", bad[_i].msg, diag);
	free(diag);
}
END_TEST

/* the hip target has no launcher header */
START_TEST(header_hip_refused)
{
	tilec_options o;
	tilec_result r;
	const char *src = "kernel g(A: f32[M]) grid(M) threads(32) {}\n";

	tilec_options_init(&o);
	o.target = TILEC_TARGET_HIP;
	o.dump = TILEC_DUMP_HEADER;
	ck_assert_int_ne(tilec_compile(src, strlen(src), &o, &r), TILEC_OK);
	ck_assert_ptr_nonnull(strstr(r.diagnostics, "cuda target only"));
	tilec_result_free(&r);
}
END_TEST

Suite *
suite_header(void)
{
	Suite *s = suite_create("header");
	TCase *t = tcase_create("header");
	glob_t g;
	int n;

	/* the table sizes: the samples present now */
	n = glob("samples/*.tile", 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
	globfree(&g);
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, sample_header_builds, 0, 2 * n);
	tcase_add_loop_test(t, sample_launch_recorded, 0, n);
	tcase_add_test(t, random_grids);
	tcase_add_loop_test(t, header_errors, 0, (int)countof(bad));
	tcase_add_test(t, header_hip_refused);
	tcase_add_test(t, tma_launcher_3d);
	tcase_add_loop_test(t, tma_launcher, 0, 3);
	suite_add_tcase(s, t);
	return s;
}
